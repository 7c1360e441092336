//! Arrays (`integer[]`, `text[]`, ...) and the two catalog vector types (`int2vector`,
//! `oidvector`): PostgreSQL 15's `array_in` / `array_out` / `array_recv` / `array_send` and
//! `int2vectorin` / `oidvectorin`, the storage form, and PostgreSQL's array ordering.
//!
//! An array has 0 to 6 dimensions, each with a length and a lower bound (1 unless written
//! `[2:3]={...}`), and its elements in row-major order, any of which may be NULL. An array
//! with no elements has no dimensions (`{}`), as PostgreSQL normalizes it. The vector types
//! are one-dimensional arrays of smallint / oid with lower bound 0, written as the elements
//! separated by spaces (`1 2`); their subscripts start at 0.
//!
//! Storage form (what `SqlType::input_text` appends and `Value::decode` reads):
//!
//! ```text
//! u8 ndim | ndim × (i32 length, i32 lower bound) | per element: i32 size (-1: NULL), then the
//! element's own storage form (little-endian throughout)
//! ```
//!
//! The element type is not stored: the column's type says it.
//!
//! Invariants:
//! 1. `items.len()` is the product of the dimension lengths; an array with no elements has
//!    no dimensions; there are at most [`MAXDIM`] dimensions and every upper bound
//!    (`lower + length - 1`) fits an `i32`.
//! 2. Every non-NULL element is a value of the element type, conformed to the element
//!    type's modifier (`varchar(3)[]` holds no element longer than 3 characters).
//! 3. A vector value has exactly one dimension with lower bound 0 and no NULL element.

use super::{SqlType, TypeId, Value};
use crate::error::{sqlstate, PgError, Result};
use std::cmp::Ordering;

/// PostgreSQL's MAXDIM: the most dimensions an array may have.
pub const MAXDIM: usize = 6;

/// The element types heapstore has arrays of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ArrayElem {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    Varchar,
    Bpchar,
    Bytea,
    Date,
    Timestamp,
    Timestamptz,
    Oid,
    Name,
    Char,
    Regtype,
    Uuid,
    Jsonb,
    Interval,
    Time,
    TimeTz,
}

/// (element, its array type's OID, the array type's `typname`).
const ARRAYS: &[(ArrayElem, TypeId, u32, &str)] = &[
    (ArrayElem::Bool, TypeId::Bool, 1000, "_bool"),
    (ArrayElem::Int2, TypeId::Int2, 1005, "_int2"),
    (ArrayElem::Int4, TypeId::Int4, 1007, "_int4"),
    (ArrayElem::Int8, TypeId::Int8, 1016, "_int8"),
    (ArrayElem::Float4, TypeId::Float4, 1021, "_float4"),
    (ArrayElem::Float8, TypeId::Float8, 1022, "_float8"),
    (ArrayElem::Numeric, TypeId::Numeric, 1231, "_numeric"),
    (ArrayElem::Text, TypeId::Text, 1009, "_text"),
    (ArrayElem::Varchar, TypeId::Varchar, 1015, "_varchar"),
    (ArrayElem::Bpchar, TypeId::Bpchar, 1014, "_bpchar"),
    (ArrayElem::Bytea, TypeId::Bytea, 1001, "_bytea"),
    (ArrayElem::Date, TypeId::Date, 1182, "_date"),
    (ArrayElem::Timestamp, TypeId::Timestamp, 1115, "_timestamp"),
    (ArrayElem::Timestamptz, TypeId::Timestamptz, 1185, "_timestamptz"),
    (ArrayElem::Oid, TypeId::Oid, 1028, "_oid"),
    (ArrayElem::Name, TypeId::Name, 1003, "_name"),
    (ArrayElem::Char, TypeId::Char, 1002, "_char"),
    (ArrayElem::Regtype, TypeId::Regtype, 2211, "_regtype"),
    (ArrayElem::Uuid, TypeId::Uuid, 2951, "_uuid"),
    (ArrayElem::Jsonb, TypeId::Jsonb, 3807, "_jsonb"),
    (ArrayElem::Interval, TypeId::Interval, 1187, "_interval"),
    (ArrayElem::Time, TypeId::Time, 1183, "_time"),
    (ArrayElem::TimeTz, TypeId::TimeTz, 1270, "_timetz"),
];

impl ArrayElem {
    fn entry(self) -> &'static (ArrayElem, TypeId, u32, &'static str) {
        ARRAYS.iter().find(|e| e.0 == self).expect("every element kind is listed")
    }

    /// The element's type.
    pub fn id(self) -> TypeId {
        self.entry().1
    }

    /// The array type's OID (`pg_type.typarray` of the element).
    pub fn array_oid(self) -> u32 {
        self.entry().2
    }

    /// The array type's `typname` (`_int4`).
    pub fn typname(self) -> &'static str {
        self.entry().3
    }

    /// The element kind of type `id`, if heapstore has arrays of it.
    pub fn of(id: TypeId) -> Option<ArrayElem> {
        ARRAYS.iter().find(|e| e.1 == id).map(|e| e.0)
    }

    /// The element kind whose array type has OID `oid`.
    pub fn by_array_oid(oid: u32) -> Option<ArrayElem> {
        ARRAYS.iter().find(|e| e.2 == oid).map(|e| e.0)
    }

    /// Every element kind, in `pg_type` order.
    pub fn all() -> impl Iterator<Item = ArrayElem> {
        ARRAYS.iter().map(|e| e.0)
    }
}

/// One dimension of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim {
    pub len: i32,
    pub lower: i32,
}

/// An array value (invariants 1–3 in the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The array's own type: `TypeId::Array(..)`, `Int2Vector` or `OidVector`, with the
    /// element's modifier.
    pub ty: SqlType,
    pub dims: Vec<Dim>,
    pub items: Vec<Value>,
}

impl Array {
    /// An array of `ty` with no elements.
    pub fn empty(ty: SqlType) -> Array {
        if ty.is_vector() {
            return Array { ty, dims: vec![Dim { len: 0, lower: 0 }], items: Vec::new() };
        }
        Array { ty, dims: Vec::new(), items: Vec::new() }
    }

    /// A one-dimensional array of `items` (lower bound 1; 0 for the vector types).
    pub fn from_items(ty: SqlType, items: Vec<Value>) -> Array {
        if items.is_empty() {
            return Array::empty(ty);
        }
        let lower = if ty.is_vector() { 0 } else { 1 };
        Array { ty, dims: vec![Dim { len: items.len() as i32, lower }], items }
    }

    /// The element type.
    pub fn elem(&self) -> SqlType {
        self.ty.elem().expect("an array's type has an element type")
    }

    pub fn ndim(&self) -> usize {
        self.dims.len()
    }

    /// Checks invariant 1 for dimensions built from outside input.
    pub fn check_dims(dims: &[Dim]) -> Result<usize> {
        if dims.len() > MAXDIM {
            return Err(too_many_dims(dims.len()));
        }
        let mut n: i64 = 1;
        for d in dims {
            if d.len < 0 {
                return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "array size exceeds the maximum allowed (134217727)"));
            }
            n = n.saturating_mul(i64::from(d.len));
            if n > MAX_ITEMS {
                return Err(PgError::new(
                    sqlstate::PROGRAM_LIMIT_EXCEEDED,
                    format!("array size exceeds the maximum allowed ({MAX_ITEMS})"),
                ));
            }
            if i64::from(d.lower) + i64::from(d.len) - 1 > i64::from(i32::MAX) {
                return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "array upper bound is too large"));
            }
        }
        Ok(if dims.is_empty() { 0 } else { n as usize })
    }

    /// Appends the storage form (module doc).
    pub fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(self.dims.len() <= MAXDIM);
        debug_assert_eq!(
            self.items.len(),
            self.dims.iter().map(|d| d.len.max(0) as usize).product::<usize>() * usize::from(!self.dims.is_empty())
        );
        out.push(self.dims.len() as u8);
        for d in &self.dims {
            out.extend_from_slice(&d.len.to_le_bytes());
            out.extend_from_slice(&d.lower.to_le_bytes());
        }
        for v in &self.items {
            if matches!(v, Value::Null) {
                out.extend_from_slice(&(-1i32).to_le_bytes());
                continue;
            }
            let at = out.len();
            out.extend_from_slice(&[0; 4]);
            v.encode(out);
            let n = (out.len() - at - 4) as i32;
            out[at..at + 4].copy_from_slice(&n.to_le_bytes());
        }
    }

    /// Reads the storage form written by [`Array::encode`] for a value of type `ty`.
    /// Stored arrays are written by this module; a malformed one (a caller bug or a
    /// corrupt page that passed its checksum) reads as the elements that can be read.
    pub fn decode(ty: &SqlType, stored: &[u8]) -> Array {
        let elem = ty.elem().expect("an array type");
        let mut p = 0usize;
        let mut take = |n: usize| -> Option<&[u8]> {
            let s = stored.get(p..p + n)?;
            p += n;
            Some(s)
        };
        let i32_at = |b: &[u8]| i32::from_le_bytes(b.try_into().unwrap_or([0; 4]));
        let ndim = take(1).map_or(0, |b| b[0] as usize).min(MAXDIM);
        let mut dims = Vec::with_capacity(ndim);
        for _ in 0..ndim {
            let (Some(len), Some(lower)) = (take(4).map(i32_at), take(4).map(i32_at)) else { break };
            dims.push(Dim { len, lower });
        }
        let n = if dims.is_empty() { 0 } else { dims.iter().map(|d| d.len.max(0) as usize).product() };
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            let Some(size) = take(4).map(i32_at) else { break };
            if size < 0 {
                items.push(Value::Null);
                continue;
            }
            let Some(b) = take(size as usize) else { break };
            items.push(Value::decode(&elem, b));
        }
        debug_assert_eq!(items.len(), n, "a stored array is cut short");
        items.resize(n, Value::Null);
        Array { ty: *ty, dims, items }
    }

    /// PostgreSQL's text output (`array_out`, or the vectors' space-separated form).
    pub fn write_text(&self, out: &mut Vec<u8>) {
        let elem = self.elem();
        if self.ty.is_vector() {
            for (i, v) in self.items.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                if let Some(t) = v.to_text(&elem) {
                    out.extend_from_slice(t.as_bytes());
                }
            }
            return;
        }
        if self.items.is_empty() {
            out.extend_from_slice(b"{}");
            return;
        }
        if self.dims.iter().any(|d| d.lower != 1) {
            for d in &self.dims {
                out.extend_from_slice(format!("[{}:{}]", d.lower, d.lower + d.len - 1).as_bytes());
            }
            out.push(b'=');
        }
        let ndim = self.dims.len();
        let mut indx = vec![0i32; ndim];
        let mut k = 0usize;
        let mut j = 0usize;
        out.push(b'{');
        loop {
            for _ in j..ndim - 1 {
                out.push(b'{');
            }
            write_element(&self.items[k], &elem, out);
            k += 1;
            let mut i = ndim;
            let mut done = true;
            while i > 0 {
                i -= 1;
                indx[i] += 1;
                if indx[i] < self.dims[i].len {
                    out.push(b',');
                    done = false;
                    break;
                }
                indx[i] = 0;
                out.push(b'}');
            }
            if done {
                break;
            }
            j = i;
        }
    }

    /// PostgreSQL's binary output (`array_send`).
    pub fn send(&self, out: &mut Vec<u8>) {
        let elem = self.elem();
        out.extend_from_slice(&(self.dims.len() as i32).to_be_bytes());
        let has_null = self.items.iter().any(|v| matches!(v, Value::Null));
        out.extend_from_slice(&i32::from(has_null).to_be_bytes());
        out.extend_from_slice(&elem.pg_oid().to_be_bytes());
        for d in &self.dims {
            out.extend_from_slice(&d.len.to_be_bytes());
            out.extend_from_slice(&d.lower.to_be_bytes());
        }
        let mut stored = Vec::new();
        for v in &self.items {
            if matches!(v, Value::Null) {
                out.extend_from_slice(&(-1i32).to_be_bytes());
                continue;
            }
            stored.clear();
            v.encode(&mut stored);
            let at = out.len();
            out.extend_from_slice(&[0; 4]);
            elem.send_binary(&stored, out);
            let n = (out.len() - at - 4) as i32;
            out[at..at + 4].copy_from_slice(&n.to_be_bytes());
        }
    }
}

/// The most elements one array may hold (PostgreSQL's MaxArraySize).
const MAX_ITEMS: i64 = 134_217_727;

fn too_many_dims(n: usize) -> PgError {
    PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("number of array dimensions ({n}) exceeds the maximum allowed ({MAXDIM})"))
}

fn malformed(s: &str, detail: Option<&str>) -> PgError {
    let e = PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("malformed array literal: \"{s}\""));
    match detail {
        Some(d) => e.with_detail(d),
        None => e,
    }
}

fn is_space(b: u8) -> bool {
    super::util::is_space(b)
}

/// One element in `array_out`'s form: quoted when empty, equal to NULL in any case, or
/// holding a quote, backslash, brace, comma or white space.
fn write_element(v: &Value, elem: &SqlType, out: &mut Vec<u8>) {
    let Some(t) = v.to_text(elem) else {
        out.extend_from_slice(b"NULL");
        return;
    };
    let b = t.as_bytes();
    let quote =
        b.is_empty() || t.eq_ignore_ascii_case("NULL") || b.iter().any(|&c| matches!(c, b'"' | b'\\' | b'{' | b'}' | b',') || is_space(c));
    if !quote {
        out.extend_from_slice(b);
        return;
    }
    out.push(b'"');
    for &c in b {
        if c == b'"' || c == b'\\' {
            out.push(b'\\');
        }
        out.push(c);
    }
    out.push(b'"');
}

/// Parses PostgreSQL's text form of an array of type `ty` (`array_in`; `int2vectorin` /
/// `oidvectorin` for the vectors).
pub fn parse_text(ty: &SqlType, s: &str) -> Result<Array> {
    let elem = ty.elem().expect("an array type");
    if ty.is_vector() {
        let items = parse_vector(s, ty.id == TypeId::Int2Vector)?;
        return Ok(Array { ty: *ty, dims: vec![Dim { len: items.len() as i32, lower: 0 }], items });
    }
    let bytes = s.as_bytes();
    let mut p = 0usize;
    let mut dims: Vec<Dim> = Vec::new();
    // Explicit dimensions: `[m:n]` or `[n]` items, white space allowed between them.
    loop {
        while p < bytes.len() && is_space(bytes[p]) {
            p += 1;
        }
        if p >= bytes.len() || bytes[p] != b'[' {
            break;
        }
        p += 1;
        if dims.len() >= MAXDIM {
            return Err(too_many_dims(dims.len() + 1));
        }
        let number = |p: &mut usize| -> Option<i32> {
            let start = *p;
            while *p < bytes.len() && (bytes[*p].is_ascii_digit() || bytes[*p] == b'-' || bytes[*p] == b'+') {
                *p += 1;
            }
            (*p > start).then(|| atoi(&s[start..*p]))
        };
        let Some(first) = number(&mut p) else {
            return Err(malformed(s, Some("\"[\" must introduce explicitly-specified array dimensions.")));
        };
        let (lower, upper) = if bytes.get(p) == Some(&b':') {
            p += 1;
            let Some(ub) = number(&mut p) else {
                return Err(malformed(s, Some("Missing array dimension value.")));
            };
            (first, ub)
        } else {
            (1, first)
        };
        if bytes.get(p) != Some(&b']') {
            return Err(malformed(s, Some("Missing \"]\" after array dimensions.")));
        }
        p += 1;
        if upper < lower {
            return Err(PgError::new("2202E", "upper bound cannot be less than lower bound"));
        }
        dims.push(Dim { len: (i64::from(upper) - i64::from(lower) + 1) as i32, lower });
    }
    let explicit = !dims.is_empty();
    if explicit {
        if !s[p..].starts_with('=') {
            return Err(malformed(s, Some("Missing \"=\" after array dimensions.")));
        }
        p += 1;
        while p < bytes.len() && is_space(bytes[p]) {
            p += 1;
        }
        if bytes.get(p) != Some(&b'{') {
            return Err(malformed(s, Some("Array contents must start with \"{\".")));
        }
    } else if bytes.get(p) != Some(&b'{') {
        return Err(malformed(s, Some("Array value must start with \"{\" or dimension information.")));
    }
    let body = &s[p..];
    let counted = count_dims(body)?;
    if explicit {
        if counted.len() != dims.len() || counted.iter().zip(&dims).any(|(&n, d)| n != d.len) {
            return Err(malformed(s, Some("Specified array dimensions do not match array contents.")));
        }
    } else {
        dims = counted.iter().map(|&len| Dim { len, lower: 1 }).collect();
    }
    let n = Array::check_dims(&dims)?;
    if n == 0 {
        return Ok(Array::empty(*ty));
    }
    let mut items = Vec::with_capacity(n);
    read_items(body, s, &elem, &mut items)?;
    if items.len() != n {
        return Err(malformed(s, None));
    }
    Ok(Array { ty: *ty, dims, items })
}

/// `int2vectorin` / `oidvectorin`: numbers separated by white space (int2vector: a number
/// must end at a space or the end). Errors quote the input from the failing number on, as
/// PostgreSQL's do.
fn parse_vector(s: &str, int2: bool) -> Result<Vec<Value>> {
    let b = s.as_bytes();
    let mut items = Vec::new();
    let mut p = 0usize;
    loop {
        while p < b.len() && is_space(b[p]) {
            p += 1;
        }
        if p >= b.len() {
            return Ok(items);
        }
        let rest = &s[p..];
        let tname = if int2 { "smallint" } else { "oid" };
        let mut q = p;
        if q < b.len() && (b[q] == b'-' || b[q] == b'+') {
            q += 1;
        }
        let digits = q;
        while q < b.len() && b[q].is_ascii_digit() {
            q += 1;
        }
        if q == digits {
            return Err(super::util::invalid_syntax(tname, rest));
        }
        let tok = &s[p..q];
        if int2 {
            let v = tok
                .parse::<i64>()
                .ok()
                .and_then(|v| i16::try_from(v).ok())
                .ok_or_else(|| super::util::int_out_of_range("smallint", rest))?;
            if q < b.len() && b[q] != b' ' {
                return Err(super::util::invalid_syntax("smallint", rest));
            }
            items.push(Value::Int2(v));
        } else {
            // strtoul: a minus sign negates in unsigned arithmetic; the value must fit an oid
            // or be a negative int4 (which wraps, as PostgreSQL's oidin allows).
            let neg = tok.starts_with('-');
            let mag = tok[digits - p..].parse::<u64>().map_err(|_| super::util::int_out_of_range("oid", rest))?;
            let v = if neg { mag.wrapping_neg() } else { mag };
            let o = if v <= u64::from(u32::MAX) || (neg && mag <= 1 << 31) {
                v as u32
            } else {
                return Err(super::util::int_out_of_range("oid", rest));
            };
            items.push(Value::Oid(o));
        }
        p = q;
    }
}

/// C's `atoi` of an optional sign and digits (the explicit dimensions): wraps like the
/// C library does on overflow rather than failing.
fn atoi(s: &str) -> i32 {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.wrapping_mul(10).wrapping_add(i64::from(b - b'0'));
    }
    (if neg { v.wrapping_neg() } else { v }) as i32
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    NoLevel,
    LevelStarted,
    ElemStarted,
    QuotedElemStarted,
    QuotedElemCompleted,
    ElemDelimited,
    LevelCompleted,
    LevelDelimited,
}

/// `ArrayCount`: checks the brace structure of `s` (which starts with `{`) and returns the
/// length of each dimension (none for `{}`).
fn count_dims(s: &str) -> Result<Vec<i32>> {
    use State::*;
    let b = s.as_bytes();
    let err = |d: &str| malformed(s, Some(d));
    let mut nest = 0usize;
    let mut ndim = 1usize;
    let mut temp = [0i32; MAXDIM];
    let mut nelems = [1i32; MAXDIM];
    let mut nelems_last = [0i32; MAXDIM];
    let mut in_quotes = false;
    let mut empty = true;
    let mut state = NoLevel;
    let mut i = 0usize;
    let mut end = false;
    while !end {
        let mut item_done = false;
        while !item_done {
            if matches!(state, ElemStarted | QuotedElemStarted) {
                empty = false;
            }
            let Some(&c) = b.get(i) else {
                return Err(err("Unexpected end of input."));
            };
            match c {
                b'\\' => {
                    if !matches!(state, LevelStarted | ElemStarted | QuotedElemStarted | ElemDelimited) {
                        return Err(err("Unexpected \"\\\" character."));
                    }
                    if state != QuotedElemStarted {
                        state = ElemStarted;
                    }
                    if i + 1 < b.len() {
                        i += 1;
                    } else {
                        return Err(err("Unexpected end of input."));
                    }
                }
                b'"' => {
                    if !matches!(state, LevelStarted | QuotedElemStarted | ElemDelimited) {
                        return Err(err("Unexpected array element."));
                    }
                    in_quotes = !in_quotes;
                    state = if in_quotes { QuotedElemStarted } else { QuotedElemCompleted };
                }
                b'{' if !in_quotes => {
                    if !matches!(state, NoLevel | LevelStarted | LevelDelimited) {
                        return Err(err("Unexpected \"{\" character."));
                    }
                    state = LevelStarted;
                    if nest >= MAXDIM {
                        return Err(too_many_dims(nest + 1));
                    }
                    temp[nest] = 0;
                    nest += 1;
                    ndim = ndim.max(nest);
                }
                b'}' if !in_quotes => {
                    if !(matches!(state, ElemStarted | QuotedElemCompleted | LevelCompleted) || (nest == 1 && state == LevelStarted)) {
                        return Err(err("Unexpected \"}\" character."));
                    }
                    state = LevelCompleted;
                    if nest == 0 {
                        return Err(err("Unmatched \"}\" character."));
                    }
                    nest -= 1;
                    if nelems_last[nest] != 0 && nelems[nest] != nelems_last[nest] {
                        return Err(err("Multidimensional arrays must have sub-arrays with matching dimensions."));
                    }
                    nelems_last[nest] = nelems[nest];
                    nelems[nest] = 1;
                    if nest == 0 {
                        end = true;
                        item_done = true;
                    } else {
                        temp[nest - 1] += 1;
                    }
                }
                b',' if !in_quotes => {
                    if !matches!(state, ElemStarted | QuotedElemCompleted | LevelCompleted) {
                        return Err(err("Unexpected \",\" character."));
                    }
                    state = if state == LevelCompleted { LevelDelimited } else { ElemDelimited };
                    item_done = true;
                    nelems[nest - 1] += 1;
                }
                c if !in_quotes && !is_space(c) => {
                    if !matches!(state, LevelStarted | ElemStarted | ElemDelimited) {
                        return Err(err("Unexpected array element."));
                    }
                    state = ElemStarted;
                }
                _ => {}
            }
            if !item_done {
                i += 1;
            }
        }
        temp[ndim - 1] += 1;
        i += 1;
    }
    if b[i.min(b.len())..].iter().any(|&c| !is_space(c)) {
        return Err(err("Junk after closing right brace."));
    }
    if empty {
        return Ok(Vec::new());
    }
    Ok(temp[..ndim].to_vec())
}

/// `ReadArrayStr`: the elements of a body whose structure `count_dims` checked, de-quoted
/// and read with the element type's input function (an unquoted `NULL` is NULL).
fn read_items(body: &str, whole: &str, elem: &SqlType, out: &mut Vec<Value>) -> Result<()> {
    let b = body.as_bytes();
    let mut i = 0usize;
    let mut nest = 0usize;
    let mut in_quotes = false;
    let mut item: Vec<u8> = Vec::new();
    loop {
        // One item (or the end of a level).
        item.clear();
        let mut leading = true;
        let mut quoted = false;
        let mut significant = 0usize;
        let mut has_item = false;
        let mut done = false;
        while !done {
            let Some(&c) = b.get(i) else {
                return Err(malformed(whole, None));
            };
            match c {
                b'\\' => {
                    i += 1;
                    let Some(&e) = b.get(i) else {
                        return Err(malformed(whole, None));
                    };
                    item.push(e);
                    i += 1;
                    leading = false;
                    significant = item.len();
                    quoted = true;
                    has_item = true;
                }
                b'"' => {
                    in_quotes = !in_quotes;
                    if in_quotes {
                        leading = false;
                    } else {
                        significant = item.len();
                    }
                    quoted = true;
                    has_item = true;
                    i += 1;
                }
                b'{' if !in_quotes => {
                    nest += 1;
                    i += 1;
                }
                b'}' if !in_quotes => {
                    if nest == 0 {
                        return Err(malformed(whole, None));
                    }
                    nest -= 1;
                    i += 1;
                    if nest == 0 {
                        if has_item || !item.is_empty() || quoted {
                            push_item(&item[..significant.min(item.len())], quoted, elem, out)?;
                        }
                        return Ok(());
                    }
                    if has_item || !item.is_empty() {
                        push_item(&item[..significant.min(item.len())], quoted, elem, out)?;
                        item.clear();
                        leading = true;
                        quoted = false;
                        significant = 0;
                        has_item = false;
                    }
                }
                b',' if !in_quotes => {
                    i += 1;
                    done = true;
                }
                c if !in_quotes && is_space(c) => {
                    if !leading {
                        item.push(c);
                    }
                    i += 1;
                }
                c => {
                    item.push(c);
                    i += 1;
                    if !in_quotes {
                        leading = false;
                        significant = item.len();
                    }
                    has_item = true;
                }
            }
        }
        if has_item || !item.is_empty() || quoted {
            push_item(&item[..significant.min(item.len())], quoted, elem, out)?;
        }
    }
}

fn push_item(raw: &[u8], quoted: bool, elem: &SqlType, out: &mut Vec<Value>) -> Result<()> {
    let text =
        std::str::from_utf8(raw).map_err(|_| super::text::verify_utf8(raw).err().unwrap_or_else(|| PgError::internal("invalid UTF-8")))?;
    if !quoted && text.eq_ignore_ascii_case("NULL") {
        out.push(Value::Null);
        return Ok(());
    }
    out.push(parse_elem(elem, text)?);
    Ok(())
}

/// Reads one element's text with the element type's input function.
fn parse_elem(elem: &SqlType, text: &str) -> Result<Value> {
    let mut out = Vec::with_capacity(16);
    elem.input_text(text, &mut out)?;
    Ok(Value::decode(elem, &out))
}

fn rd_i32(wire: &[u8], p: &mut usize) -> Result<i32> {
    let b = wire.get(*p..*p + 4).ok_or_else(super::util::insufficient_data)?;
    *p += 4;
    Ok(i32::from_be_bytes(b.try_into().expect("four bytes")))
}

/// Reads PostgreSQL's binary form (`array_recv`) into an array of `ty`. An element type
/// other than `ty`'s is accepted when its values convert to `ty`'s without loss of meaning
/// (varchar or name elements for text, smallint elements for integer): drivers send the
/// element type of the array they were given, and PostgreSQL would cast such a parameter.
pub fn recv(ty: &SqlType, wire: &[u8]) -> Result<Array> {
    let elem = ty.elem().expect("an array type");
    let mut p = 0usize;
    let ndim = rd_i32(wire, &mut p)?;
    if ndim < 0 {
        return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("invalid number of dimensions: {ndim}")));
    }
    if ndim as usize > MAXDIM {
        return Err(too_many_dims(ndim as usize));
    }
    let flags = rd_i32(wire, &mut p)?;
    if flags != 0 && flags != 1 {
        return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "invalid array flags"));
    }
    let elem_oid = rd_i32(wire, &mut p)? as u32;
    let given = if elem_oid == elem.pg_oid() {
        elem
    } else {
        match super::BUILTIN.iter().map(|&id| SqlType::new(id)).find(|t| t.pg_oid() == elem_oid) {
            Some(t) if compatible_elem(t.id, elem.id) => t,
            _ => {
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "binary data has array element type {elem_oid} ({}) instead of expected {} ({})",
                        oid_name(elem_oid),
                        elem.pg_oid(),
                        elem.name()
                    ),
                ))
            }
        }
    };
    let mut dims = Vec::with_capacity(ndim as usize);
    for _ in 0..ndim {
        let len = rd_i32(wire, &mut p)?;
        let lower = rd_i32(wire, &mut p)?;
        dims.push(Dim { len, lower });
    }
    let n = Array::check_dims(&dims)?;
    let mut items = Vec::with_capacity(n);
    let mut stored = Vec::new();
    for _ in 0..n {
        let size = rd_i32(wire, &mut p)?;
        if size == -1 {
            items.push(Value::Null);
            continue;
        }
        if size < 0 {
            return Err(super::util::insufficient_data());
        }
        let b = wire.get(p..p + size as usize).ok_or_else(super::util::insufficient_data)?;
        p += size as usize;
        stored.clear();
        given.recv_binary(b, &mut stored)?;
        let v = Value::decode(&given, &stored);
        items.push(if given == elem { v } else { convert_elem(v, &elem)? });
    }
    if p != wire.len() {
        return Err(super::util::incorrect_binary_format());
    }
    if n == 0 {
        return Ok(Array::empty(*ty));
    }
    if ty.is_vector() && (dims.len() != 1 || dims[0].lower != 0 || items.iter().any(|v| matches!(v, Value::Null))) {
        return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("invalid {} data", ty.input_name())));
    }
    Ok(Array { ty: *ty, dims, items })
}

fn oid_name(oid: u32) -> String {
    let mut out = Vec::new();
    super::regtype_out(oid, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Element types whose binary values convert to the expected element type.
fn compatible_elem(given: TypeId, want: TypeId) -> bool {
    let text = |t: TypeId| matches!(t, TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name);
    let int = |t: TypeId| matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Int8);
    (text(given) && text(want)) || (int(given) && int(want)) || (int(given) && want == TypeId::Oid)
}

/// A received element of a compatible type, as the expected element type (its input
/// function applied to the text, so modifiers and ranges are checked).
fn convert_elem(v: Value, elem: &SqlType) -> Result<Value> {
    let Some(t) = v.to_text(&v.natural_type().unwrap_or(*elem)) else { return Ok(Value::Null) };
    parse_elem(elem, &t)
}

/// PostgreSQL's array ordering (`btarraycmp`): elements in order, a NULL element after every
/// non-NULL one and equal to another NULL; then the number of elements, the number of
/// dimensions, the dimension lengths and the lower bounds.
pub fn compare(a: &Array, b: &Array, elem_cmp: &mut dyn FnMut(&Value, &Value) -> Result<Ordering>) -> Result<Ordering> {
    for (x, y) in a.items.iter().zip(&b.items) {
        let o = match (matches!(x, Value::Null), matches!(y, Value::Null)) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => elem_cmp(x, y)?,
        };
        if o != Ordering::Equal {
            return Ok(o);
        }
    }
    Ok(a.items
        .len()
        .cmp(&b.items.len())
        .then(a.dims.len().cmp(&b.dims.len()))
        .then_with(|| a.dims.iter().map(|d| d.len).cmp(b.dims.iter().map(|d| d.len)))
        .then_with(|| a.dims.iter().map(|d| d.lower).cmp(b.dims.iter().map(|d| d.lower))))
}

//! `jsonb`: JSON as a value. Input is `json`'s parser with strings de-escaped (surrogate
//! pairs joined; `\u0000` refused with 22P05, as PostgreSQL's jsonb cannot hold it) and
//! numbers read as `numeric`. Objects keep one value per key (the last one written) with
//! their keys in jsonb's order: shorter keys first, then bytewise. Output is PostgreSQL's
//! `JsonbToCString`: `{"a": 1, "b": [1, 2]}`, numbers as numeric prints them (`1e2` is `100`,
//! `1.50` stays `1.50`). The binary form is a version byte (1) and the text.
//!
//! Storage: the canonical text output. Two stored values are equal jsonb values exactly
//! when their parses are equal under [`compare`] (numbers compare as numeric, so `1.0` equals
//! `1` though they print differently); [`sort_key`] writes B-tree keys that order (and are equal) exactly as they do.
//!
//! Semantics follow PostgreSQL 15's `jsonb_util.c` / `jsonfuncs.c`:
//! 1. Ordering ([`compare`]): Object > Array > Boolean > Number > String > Null; arrays by
//!    element count, then element by element; objects by pair count, then key, value, key,
//!    ... in stored order; a top-level scalar is a one-element "raw scalar" array that sorts
//!    below a real array of one element (so `'1'` < `'[0]'` but `'1'` > `'[]'`).
//! 2. Containment ([`contains`], `@>`): an object contains an object whose every key it has
//!    with a contained value (scalars equal); an array contains an array each of whose
//!    elements equals one of its scalars or is contained in one of its containers; a
//!    top-level array contains a top-level scalar it has as an element.
//! 3. Nesting deeper than [`MAX_DEPTH`] is refused (0A000) rather than risking the stack.

use super::json::{self, Scalar, Sink};
use super::Numeric;
use crate::error::{sqlstate, PgError, Result};
use std::cmp::Ordering;

/// The deepest nesting heapstore builds (PostgreSQL's limit is its stack depth).
pub const MAX_DEPTH: usize = 1000;

/// A parsed jsonb value. Invariant: an `Object`'s keys are unique and in [`key_order`].
#[derive(Clone, Debug, PartialEq)]
pub enum Jsonb {
    Null,
    Bool(bool),
    Number(Numeric),
    String(String),
    Array(Vec<Jsonb>),
    Object(Vec<(String, Jsonb)>),
}

/// jsonb's key order: length first, then bytes (`lengthCompareJsonbString`).
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

fn too_deep() -> PgError {
    PgError::feature(format!("jsonb nesting deeper than {MAX_DEPTH} levels is not supported by heapstore"))
}

enum Frame {
    Array(Vec<Jsonb>),
    Object(Vec<(String, Jsonb)>, String),
}

struct Builder<'a> {
    s: &'a str,
    stack: Vec<Frame>,
    root: Option<Jsonb>,
}

impl Builder<'_> {
    fn push(&mut self, v: Jsonb) {
        match self.stack.last_mut() {
            None => self.root = Some(v),
            Some(Frame::Array(items)) => items.push(v),
            Some(Frame::Object(pairs, key)) => pairs.push((std::mem::take(key), v)),
        }
    }
}

impl Sink for Builder<'_> {
    fn begin(&mut self, object: bool, _: usize) -> Result<()> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(too_deep());
        }
        self.stack.push(if object { Frame::Object(Vec::new(), String::new()) } else { Frame::Array(Vec::new()) });
        Ok(())
    }

    fn end(&mut self, _: usize) -> Result<()> {
        let v = match self.stack.pop() {
            Some(Frame::Array(items)) => Jsonb::Array(items),
            Some(Frame::Object(pairs, _)) => Jsonb::Object(normalize(pairs)),
            None => return Ok(()),
        };
        self.push(v);
        Ok(())
    }

    fn key(&mut self, key: String) -> Result<()> {
        if let Some(Frame::Object(_, k)) = self.stack.last_mut() {
            *k = key;
        }
        Ok(())
    }

    fn scalar(&mut self, kind: Scalar, span: (usize, usize), strval: String) -> Result<()> {
        let v = match kind {
            Scalar::String => Jsonb::String(strval),
            Scalar::Number => Jsonb::Number(Numeric::parse(&self.s[span.0..span.1])?),
            Scalar::True => Jsonb::Bool(true),
            Scalar::False => Jsonb::Bool(false),
            Scalar::Null => Jsonb::Null,
        };
        self.push(v);
        Ok(())
    }
}

/// Sorts pairs into key order, keeping the last value of a repeated key.
pub fn normalize(mut pairs: Vec<(String, Jsonb)>) -> Vec<(String, Jsonb)> {
    // A stable sort keeps equal keys in input order; keep the last of each run.
    pairs.sort_by(|a, b| key_order(&a.0, &b.0));
    let mut out: Vec<(String, Jsonb)> = Vec::with_capacity(pairs.len());
    for p in pairs {
        match out.last_mut() {
            Some(last) if last.0 == p.0 => *last = p,
            _ => out.push(p),
        }
    }
    out
}

/// PostgreSQL's `jsonb_in`.
pub fn parse(s: &str) -> Result<Jsonb> {
    let mut b = Builder { s, stack: Vec::new(), root: None };
    json::walk(s, true, &mut b)?;
    Ok(b.root.unwrap_or(Jsonb::Null))
}

/// Parses stored (canonical) text; stored values were checked on the way in.
pub fn parse_stored(s: &str) -> Jsonb {
    parse(s).unwrap_or(Jsonb::Null)
}

impl Jsonb {
    /// PostgreSQL's text output.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    pub fn write(&self, out: &mut String) {
        match self {
            Jsonb::Null => out.push_str("null"),
            Jsonb::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Jsonb::Number(n) => out.push_str(&n.to_text()),
            Jsonb::String(s) => json::quote(s, out),
            Jsonb::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Jsonb::Object(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    json::quote(k, out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// `jsonb_typeof`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    pub fn is_scalar(&self) -> bool {
        !matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// The rank of a value's type in jsonb's ordering.
    fn rank(&self) -> u8 {
        match self {
            Jsonb::Null => 0,
            Jsonb::String(_) => 1,
            Jsonb::Number(_) => 2,
            Jsonb::Bool(_) => 3,
            Jsonb::Array(_) => 4,
            Jsonb::Object(_) => 5,
        }
    }

    /// An object's value for `key`.
    pub fn field(&self, key: &str) -> Option<&Jsonb> {
        match self {
            Jsonb::Object(pairs) => pairs.binary_search_by(|(k, _)| key_order(k, key)).ok().map(|i| &pairs[i].1),
            _ => None,
        }
    }

    /// `->` with an integer: an array's element (negative counts from the end). A top-level
    /// scalar is a one-element array here, as in PostgreSQL.
    pub fn element(&self, i: i64, top: bool) -> Option<&Jsonb> {
        let one;
        let items: &[Jsonb] = match self {
            Jsonb::Array(items) => items,
            s if top && s.is_scalar() => {
                one = std::slice::from_ref(s);
                one
            }
            _ => return None,
        };
        let n = items.len() as i64;
        let i = if i < 0 { i + n } else { i };
        if i < 0 || i >= n {
            return None;
        }
        items.get(i as usize)
    }

    /// `#>`: follows a path of keys and array indexes (text read as PostgreSQL's strtol: leading
    /// white space, a sign, digits). A NULL step or a missing one gives `None`; an empty path
    /// is the value itself.
    pub fn path(&self, steps: &[Option<String>]) -> Option<&Jsonb> {
        let mut cur = self;
        for step in steps {
            let step = step.as_deref()?;
            cur = match cur {
                Jsonb::Object(_) => cur.field(step)?,
                Jsonb::Array(_) => cur.element(path_index(step)?, false)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// `->>` / `#>>`: a string's contents, other values' text, NULL for JSON null.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Jsonb::Null => None,
            Jsonb::String(s) => Some(s.clone()),
            other => Some(other.to_text()),
        }
    }

    /// `?`: a top-level key, or a string element of a top-level array (or the scalar itself).
    pub fn exists(&self, key: &str) -> bool {
        match self {
            Jsonb::Object(_) => self.field(key).is_some(),
            Jsonb::Array(items) => items.iter().any(|v| matches!(v, Jsonb::String(s) if s == key)),
            Jsonb::String(s) => s == key,
            _ => false,
        }
    }

    /// `jsonb_strip_nulls`: object fields whose value is null removed, at every level.
    pub fn strip_nulls(&self) -> Jsonb {
        match self {
            Jsonb::Array(items) => Jsonb::Array(items.iter().map(Jsonb::strip_nulls).collect()),
            Jsonb::Object(pairs) => {
                Jsonb::Object(pairs.iter().filter(|(_, v)| *v != Jsonb::Null).map(|(k, v)| (k.clone(), v.strip_nulls())).collect())
            }
            other => other.clone(),
        }
    }

    /// `jsonb_pretty`: PostgreSQL's indented form (four spaces a level; a container after a
    /// key opens on the key's line; an empty container still breaks its line).
    pub fn pretty(&self) -> String {
        fn nl(out: &mut String, level: usize) {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', level * 4));
        }
        fn container(v: &Jsonb, out: &mut String, level: usize, indent_before: bool) {
            if indent_before {
                nl(out, level);
            }
            match v {
                Jsonb::Array(items) => {
                    out.push('[');
                    for (i, e) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        if e.is_scalar() {
                            nl(out, level + 1);
                            e.write(out);
                        } else {
                            container(e, out, level + 1, true);
                        }
                    }
                    nl(out, level);
                    out.push(']');
                }
                Jsonb::Object(pairs) => {
                    out.push('{');
                    for (i, (k, e)) in pairs.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        nl(out, level + 1);
                        json::quote(k, out);
                        out.push_str(": ");
                        if e.is_scalar() {
                            e.write(out);
                        } else {
                            container(e, out, level + 1, false);
                        }
                    }
                    nl(out, level);
                    out.push('}');
                }
                scalar => scalar.write(out),
            }
        }
        let mut out = String::new();
        container(self, &mut out, 0, false);
        out
    }

    /// The nesting depth (a scalar is 0).
    pub fn depth(&self) -> usize {
        match self {
            Jsonb::Array(items) => 1 + items.iter().map(Jsonb::depth).max().unwrap_or(0),
            Jsonb::Object(pairs) => 1 + pairs.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 0,
        }
    }
}

/// A path step as an array index: C's strtol over the whole text (leading white space and a
/// sign allowed), within int's range.
pub fn path_index(s: &str) -> Option<i64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\u{b}', '\u{c}']);
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<i32>().ok().map(i64::from)
}

fn scalar_cmp(a: &Jsonb, b: &Jsonb) -> Ordering {
    match (a, b) {
        (Jsonb::String(x), Jsonb::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Jsonb::Number(x), Jsonb::Number(y)) => x.cmp(y),
        (Jsonb::Bool(x), Jsonb::Bool(y)) => x.cmp(y),
        _ => a.rank().cmp(&b.rank()),
    }
}

fn nested_cmp(a: &Jsonb, b: &Jsonb) -> Ordering {
    match (a, b) {
        (Jsonb::Array(x), Jsonb::Array(y)) => x
            .len()
            .cmp(&y.len())
            .then_with(|| x.iter().zip(y).map(|(p, q)| nested_cmp(p, q)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)),
        (Jsonb::Object(x), Jsonb::Object(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|((ka, va), (kb, vb))| ka.as_bytes().cmp(kb.as_bytes()).then_with(|| nested_cmp(va, vb)))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        _ => scalar_cmp(a, b),
    }
}

/// jsonb's btree ordering of two top-level values (see the module doc).
pub fn compare(a: &Jsonb, b: &Jsonb) -> Ordering {
    // A top-level scalar against a top-level array: the raw-scalar flag decides (scalar
    // first), then the element counts override it, as compareJsonbContainers does.
    let raw_vs_array = |n: usize| if n == 1 { Ordering::Less } else { 1.cmp(&n) };
    match (a, b) {
        (s, Jsonb::Array(y)) if s.is_scalar() => raw_vs_array(y.len()),
        (Jsonb::Array(x), s) if s.is_scalar() => raw_vs_array(x.len()).reverse(),
        _ => nested_cmp(a, b),
    }
}

/// Appends a B-tree key for a top-level value: keys compare bytewise as [`compare`] orders
/// the values (so equal keys are equal values; grouping and hashing use it too). Each part
/// is self-delimiting: a type rank byte; arrays their count (big-endian) and, at the top
/// level only, a byte that puts a raw scalar (0) before a real array (1) of the same count;
/// objects their count, then key, value, ...; strings escaped (0 as 0 0xFF) and ended by
/// 0 0; numbers numeric's sort key.
pub fn sort_key(v: &Jsonb, out: &mut Vec<u8>) {
    fn count(out: &mut Vec<u8>, n: usize) {
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
    match v {
        Jsonb::Array(items) => {
            out.push(4);
            count(out, items.len());
            out.push(1);
            items.iter().for_each(|i| nested_key(i, out));
        }
        Jsonb::Object(_) => nested_key(v, out),
        scalar => {
            out.push(4);
            count(out, 1);
            out.push(0);
            nested_key(scalar, out);
        }
    }
}

fn nested_key(v: &Jsonb, out: &mut Vec<u8>) {
    fn string(out: &mut Vec<u8>, s: &str) {
        for &b in s.as_bytes() {
            out.push(b);
            if b == 0 {
                out.push(0xFF);
            }
        }
        out.extend_from_slice(&[0, 0]);
    }
    out.push(v.rank());
    match v {
        Jsonb::Null => {}
        Jsonb::Bool(b) => out.push(u8::from(*b)),
        Jsonb::Number(n) => {
            let mut stored = Vec::new();
            n.encode_stored(&mut stored);
            Numeric::sort_key(&stored, out);
        }
        Jsonb::String(s) => string(out, s),
        Jsonb::Array(items) => {
            out.extend_from_slice(&(items.len() as u32).to_be_bytes());
            items.iter().for_each(|i| nested_key(i, out));
        }
        Jsonb::Object(pairs) => {
            out.extend_from_slice(&(pairs.len() as u32).to_be_bytes());
            for (k, v) in pairs {
                string(out, k);
                nested_key(v, out);
            }
        }
    }
}

/// `a @> b` for top-level values (see the module doc).
pub fn contains(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Array(x), s) if s.is_scalar() => array_contains(x, std::slice::from_ref(s)),
        (s, Jsonb::Array(_)) if s.is_scalar() => false,
        (x, y) if x.is_scalar() && y.is_scalar() => x.rank() == y.rank() && scalar_cmp(x, y).is_eq(),
        _ => deep_contains(a, b),
    }
}

fn deep_contains(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            x.len() >= y.len()
                && y.iter().all(|(k, vb)| match a.field(k) {
                    None => false,
                    Some(va) if va.rank() != vb.rank() => false,
                    Some(va) if va.is_scalar() => scalar_cmp(va, vb).is_eq(),
                    Some(va) => deep_contains(va, vb),
                })
        }
        (Jsonb::Array(x), Jsonb::Array(y)) => array_contains(x, y),
        _ => false,
    }
}

fn array_contains(x: &[Jsonb], y: &[Jsonb]) -> bool {
    y.iter().all(|e| {
        if e.is_scalar() {
            x.iter().any(|v| v.is_scalar() && v.rank() == e.rank() && scalar_cmp(v, e).is_eq())
        } else {
            x.iter().any(|v| !v.is_scalar() && deep_contains(v, e))
        }
    })
}

/// `a || b`: objects merge (the right side's value wins); otherwise both sides as arrays
/// (a scalar or an object being one element) concatenated.
pub fn concat(a: Jsonb, b: Jsonb) -> Jsonb {
    match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            let mut pairs = x;
            pairs.extend(y);
            Jsonb::Object(normalize(pairs))
        }
        (a, b) => {
            let items = |v: Jsonb| match v {
                Jsonb::Array(items) => items,
                other => vec![other],
            };
            let mut out = items(a);
            out.extend(items(b));
            Jsonb::Array(out)
        }
    }
}

fn cannot_delete(what: &str) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, what.to_string())
}

/// `a - 'key'`: the key removed from an object, or string elements equal to it from an array.
pub fn delete_key(a: Jsonb, key: &str) -> Result<Jsonb> {
    match a {
        Jsonb::Object(pairs) => Ok(Jsonb::Object(pairs.into_iter().filter(|(k, _)| k != key).collect())),
        Jsonb::Array(items) => Ok(Jsonb::Array(items.into_iter().filter(|v| !matches!(v, Jsonb::String(s) if s == key)).collect())),
        _ => Err(cannot_delete("cannot delete from scalar")),
    }
}

/// `a - n`: an array's element removed (negative counts from the end; out of range: unchanged).
pub fn delete_index(a: Jsonb, i: i64) -> Result<Jsonb> {
    match a {
        Jsonb::Array(mut items) => {
            let n = items.len() as i64;
            let i = if i < 0 { i + n } else { i };
            if (0..n).contains(&i) {
                items.remove(i as usize);
            }
            Ok(Jsonb::Array(items))
        }
        Jsonb::Object(_) => Err(cannot_delete("cannot delete from object using integer index")),
        _ => Err(cannot_delete("cannot delete from scalar")),
    }
}

/// The error of casting a jsonb value of the wrong kind to a SQL type.
pub fn cannot_cast(v: &Jsonb, to: &str) -> PgError {
    let kind = match v {
        Jsonb::Null => "null",
        Jsonb::Bool(_) => "boolean",
        Jsonb::Number(_) => "numeric",
        Jsonb::String(_) => "string",
        Jsonb::Array(_) => "array",
        Jsonb::Object(_) => "object",
    };
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("cannot cast jsonb {kind} to type {to}"))
}

/// `jsonb_send`'s version byte, which `jsonb_recv` requires.
pub const BINARY_VERSION: u8 = 1;

/// `jsonb_recv`: the version byte, then the text.
pub fn recv(wire: &[u8]) -> Result<Jsonb> {
    match wire.split_first() {
        Some((&BINARY_VERSION, text)) => {
            let s = std::str::from_utf8(text).map_err(|_| super::util::incorrect_binary_format())?;
            parse(s)
        }
        Some((&v, _)) => Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("unsupported jsonb version number {v}"))),
        None => Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "insufficient data left in message")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Jsonb {
        parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn canonical_output() {
        let cases = [
            (
                r#"{"b":1, "a":[1.50, 1e2, -0, 2E-3, "x\u00e9/\n"], "aa":null, "b":2}"#,
                r#"{"a": [1.50, 100, 0, 0.002, "xé/\n"], "b": 2, "aa": null}"#,
            ),
            (r#""\ud83d\ude00""#, "\"😀\""),
            (r#""\/""#, r#""/""#),
            (r#""\u001f""#, r#""\u001f""#),
            (r#"{"a" : 1 , "b":[ ] }"#, r#"{"a": 1, "b": []}"#),
            ("[]", "[]"),
            ("{}", "{}"),
        ];
        for (input, out) in cases {
            assert_eq!(j(input).to_text(), out, "{input}");
        }
    }

    #[test]
    fn ordering_and_containment_follow_postgresql() {
        use Ordering::*;
        // Each result checked against PostgreSQL 15.
        for (a, b, o) in [
            ("[]", "1", Less),
            ("{}", "[]", Greater),
            ("[1,2]", "[3]", Greater),
            (r#"{"aa":1}"#, r#"{"b":1}"#, Less),
            ("1.0", "1", Equal),
            ("null", "\"\"", Less),
            ("true", "1", Greater),
            ("1", "[1]", Less),
        ] {
            assert_eq!(compare(&j(a), &j(b)), o, "{a} vs {b}");
        }
        for (a, b, r) in [
            ("[1,2]", "1", true),
            ("1", "[1]", false),
            (r#"{"a":1}"#, "[]", false),
            ("[[1,2]]", "[[1]]", true),
            ("[1,[2]]", "[2]", false),
            (r#"{"a":{"b":1,"c":2}}"#, r#"{"a":{"b":1}}"#, true),
            ("[1,2,3]", "[1,2]", true),
            ("[1.0]", "[1]", true),
        ] {
            assert_eq!(contains(&j(a), &j(b)), r, "{a} @> {b}");
        }
        let key = |s: &str| {
            let mut k = Vec::new();
            sort_key(&j(s), &mut k);
            k
        };
        assert_eq!(key("[1.0, {\"a\": 2.50}]"), key("[1, {\"a\": 2.5}]"));
        assert_ne!(key("[1]"), key("1"));
        // Keys order as compare does, over every pair of a varied set.
        let vals = [
            "null",
            "true",
            "false",
            "0",
            "-1.5",
            "1.0",
            "1",
            "\"\"",
            "\"a\"",
            "\"a\\u0001\"",
            "\"b\"",
            "[]",
            "[0]",
            "[1, 2]",
            "[[1]]",
            "[\"a\", {}]",
            "{}",
            "{\"a\": 1}",
            "{\"b\": 0}",
            "{\"aa\": 1}",
            "{\"a\": [1]}",
            "{\"a\": 1, \"b\": 2}",
            "[null]",
            "[true]",
        ];
        for a in vals {
            for b in vals {
                assert_eq!(key(a).cmp(&key(b)), compare(&j(a), &j(b)), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn string_errors_match_postgresql() {
        // (input, SQLSTATE, DETAIL, CONTEXT) as PostgreSQL 15 gives them.
        for (input, code, detail, context) in [
            (r#""\udc00""#, "22P02", "Unicode low surrogate must follow a high surrogate.", r#"JSON data, line 1: "\udc00..."#),
            (
                r#""\ud83d\ud83d""#,
                "22P02",
                "Unicode high surrogate must not follow a high surrogate.",
                r#"JSON data, line 1: "\ud83d\ud83d..."#,
            ),
            (r#""\ud83dx""#, "22P02", "Unicode low surrogate must follow a high surrogate.", r#"JSON data, line 1: "\ud83dx..."#),
            (r#""\ud83d\n""#, "22P02", "Unicode low surrogate must follow a high surrogate.", r#"JSON data, line 1: "\ud83d\n..."#),
            (r#"["\ud83d" x]"#, "22P02", "Unicode low surrogate must follow a high surrogate.", r#"JSON data, line 1: ["\ud83d"..."#),
            (r#"[1 "\u0000"]"#, "22P05", "\\u0000 cannot be converted to text.", r#"JSON data, line 1: [1 "\u0000..."#),
            (r#""\ud83d""#, "22P02", "Unicode low surrogate must follow a high surrogate.", r#"JSON data, line 1: "\ud83d""#),
        ] {
            let e = parse(input).unwrap_err();
            assert_eq!(
                (e.code, e.detail.clone().unwrap_or_default(), e.context.clone().map(|c| c.to_string()).unwrap_or_default()),
                (code, detail.to_string(), context.to_string()),
                "{input}"
            );
        }
        assert_eq!(parse("[1e1000000 x]").unwrap_err().detail.as_deref(), Some("Token \"x\" is invalid."));
        assert_eq!(parse("1e1000000").unwrap_err().message, "value overflows numeric format");
        assert_eq!(parse(&"[".repeat(MAX_DEPTH + 1)).unwrap_err().code, "0A000");
    }
}

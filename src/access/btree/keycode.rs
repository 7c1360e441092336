//! Order-preserving key encoding: a row's index columns become one byte string whose `memcmp`
//! order is the SQL order of the values (ASC NULLS LAST, or each column's own order: see
//! [`encode_key_opts`]), so the tree never needs to know the column types.
//!
//! Each column is a tag byte followed by the value:
//!
//! | column | bytes after the tag ([`TAG_VALUE`]) |
//! |---|---|
//! | boolean | `0` or `1` |
//! | smallint, integer, bigint, date, timestamp | big-endian with the sign bit flipped (date and timestamp are `i32`/`i64`; their -infinity/infinity are `MIN`/`MAX`, so they sort first/last) |
//! | real, double precision | the IEEE bits, sign bit flipped for positives and all bits inverted for negatives; `-0` is written as `+0` (they are equal, as in PostgreSQL) and every NaN as all ones, after `+infinity` (PostgreSQL sorts NaN above all other values and treats NaNs as equal) |
//! | numeric | [`Numeric::sort_key`](crate::types::Numeric::sort_key): a class byte (-infinity, negative, zero, positive, infinity, NaN), then for non-zero values the base-10000 weight and digits, terminated, inverted for negatives; equal values of different display scales (`1.0`, `1.00`) get the same key |
//! | text, varchar, char, bytea | the bytes with each `0x00` written `0x00 0xFF`, then the terminator `0x00 0x00`, so a value sorts before its extensions; char(n) drops its trailing blanks first (bpchar compares without them) |
//! | arrays, int2vector, oidvector | each element as a tagged column value (NULL elements last), `0x00`, then the number of dimensions, their lengths and lower bounds (PostgreSQL's array order) |
//!
//! A NULL is the tag [`TAG_NULL`] alone; it is greater than [`TAG_VALUE`], so NULLs sort after
//! every value (PostgreSQL's default `ASC NULLS LAST`).
//!
//! A column the index keeps in another order ([`encode_key_opts`], PostgreSQL's `indoption`
//! bits): DESC writes the value's bytes complemented (every encoding is self-delimiting, so
//! complemented encodings compare in the reverse order), and NULLS FIRST writes a NULL as
//! [`TAG_NULL_FIRST`], below [`TAG_VALUE`]. Tags stay at most [`TAG_NULL`] in every order.
//!
//! Text is compared byte by byte: this is the **C collation** order (PostgreSQL's `COLLATE
//! "C"`), not a linguistic one. Every encoding is self-delimiting, so a multi-column key never
//! is a proper prefix of another key with the same column types, and the key of `(a, b)` orders
//! by `a` first, then `b`.

use crate::types::{SqlType, TypeId, Value};

/// Tag byte before a non-NULL column value.
pub const TAG_VALUE: u8 = 0x01;
/// Tag byte of a NULL column (sorts after [`TAG_VALUE`]: NULLS LAST).
pub const TAG_NULL: u8 = 0x02;
/// Tag byte of a NULL in a NULLS FIRST column (sorts before [`TAG_VALUE`]).
pub const TAG_NULL_FIRST: u8 = 0x00;
/// `indoption` bits (as `catalog::INDOPTION_*`).
const OPT_DESC: u8 = 1;
const OPT_NULLS_FIRST: u8 = 2;

/// Appends the key of one row to `out`: for each index column its type and its value in
/// heapstore's storage form (as `tuple::deform` gives it, a varlena's payload without its
/// header; `None` for NULL). Returns true if any column is NULL (unique indexes do not check
/// such keys: NULLs are distinct, as in PostgreSQL).
///
/// ```
/// use heapstore::access::btree::keycode::encode_key;
/// use heapstore::types::{SqlType, TypeId};
/// let int4 = SqlType::new(TypeId::Int4);
/// let (mut a, mut b) = (Vec::new(), Vec::new());
/// encode_key(&mut a, &[(int4, Some(&(-5i32).to_le_bytes()[..]))]);
/// encode_key(&mut b, &[(int4, Some(&3i32.to_le_bytes()[..]))]);
/// assert!(a < b);
/// ```
pub fn encode_key(out: &mut Vec<u8>, values: &[(SqlType, Option<&[u8]>)]) -> bool {
    encode_key_opts(out, values, &[])
}

/// [`encode_key`] with each column's order: `options[i]` holds column i's `indoption` bits
/// (DESC = 1, NULLS FIRST = 2; a missing entry is 0, ASC NULLS LAST).
pub fn encode_key_opts(out: &mut Vec<u8>, values: &[(SqlType, Option<&[u8]>)], options: &[u8]) -> bool {
    let mut any_null = false;
    for (i, (ty, v)) in values.iter().enumerate() {
        let opt = options.get(i).copied().unwrap_or(0);
        match v {
            None => {
                out.push(if opt & OPT_NULLS_FIRST != 0 { TAG_NULL_FIRST } else { TAG_NULL });
                any_null = true;
            }
            Some(v) => {
                out.push(TAG_VALUE);
                let start = out.len();
                encode_stored(out, ty, v);
                if opt & OPT_DESC != 0 {
                    out[start..].iter_mut().for_each(|b| *b = !*b);
                }
            }
        }
    }
    any_null
}

/// As [`encode_key`], from typed values (`Value::Null` is NULL). Convenient for tests and for
/// search keys built from SQL literals.
pub fn encode_values(out: &mut Vec<u8>, values: &[(SqlType, &Value)]) -> bool {
    let mut stored = Vec::with_capacity(16);
    let mut any_null = false;
    for (ty, v) in values {
        if let Value::Null = v {
            out.push(TAG_NULL);
            any_null = true;
        } else {
            stored.clear();
            v.encode(&mut stored);
            out.push(TAG_VALUE);
            encode_stored(out, ty, &stored);
        }
    }
    any_null
}

/// The exclusive upper bound of the keys that start with `prefix`, the encoded leading columns
/// of a multi-column index: scan `Included(prefix)..Excluded(prefix_end(prefix))` to find
/// `WHERE a = 5` on an index on `(a, b)`. (Every column starts with a tag byte below `0xFF`.)
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(prefix.len() + 1);
    v.extend_from_slice(prefix);
    v.push(0xFF);
    v
}

/// Appends one non-NULL value (without tag).
fn encode_stored(out: &mut Vec<u8>, ty: &SqlType, v: &[u8]) {
    match ty.id {
        TypeId::Bool => out.push(u8::from(v.first().is_some_and(|&b| b != 0))),
        TypeId::Int2 => out.extend_from_slice(&((i16::from_le_bytes(fixed(v)) as u16) ^ 0x8000).to_be_bytes()),
        TypeId::Int4 | TypeId::Date => out.extend_from_slice(&((i32::from_le_bytes(fixed(v)) as u32) ^ 0x8000_0000).to_be_bytes()),
        TypeId::Oid | TypeId::Regtype | TypeId::Regnamespace | TypeId::Regclass => {
            out.extend_from_slice(&u32::from_le_bytes(fixed(v)).to_be_bytes())
        }
        TypeId::Int8 | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Time => {
            out.extend_from_slice(&((i64::from_le_bytes(fixed(v)) as u64) ^ (1 << 63)).to_be_bytes())
        }
        // timetz_cmp: the instant (time plus zone), then the zone; one-to-one, so equal keys
        // are equal values.
        TypeId::TimeTz => {
            let (instant, zone) = crate::types::TimeTz::decode(v).order_key();
            out.extend_from_slice(&((instant as u64) ^ (1 << 63)).to_be_bytes());
            out.extend_from_slice(&((zone as u32) ^ 0x8000_0000).to_be_bytes());
        }
        TypeId::Float4 => out.extend_from_slice(&float4_bits(f32::from_bits(u32::from_le_bytes(fixed(v)))).to_be_bytes()),
        TypeId::Float8 => out.extend_from_slice(&float8_bits(f64::from_bits(u64::from_le_bytes(fixed(v)))).to_be_bytes()),
        TypeId::Numeric => crate::types::Numeric::sort_key(v, out),
        // uuid_cmp is memcmp: the bytes are their own key (fixed width, no escaping needed).
        TypeId::Uuid => out.extend_from_slice(v),
        // jsonb_cmp: the stored canonical text parsed, then jsonb's own order.
        TypeId::Jsonb => crate::types::jsonb::sort_key(&crate::types::jsonb::parse_stored(&String::from_utf8_lossy(v)), out),
        // interval_cmp: by the 128-bit span (30-day months), so equal spans are equal keys.
        TypeId::Interval => out.extend_from_slice(&((crate::types::Interval::decode(v).span() as u128) ^ (1 << 127)).to_be_bytes()),
        TypeId::Bpchar => {
            let n = v.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
            escape_bytes(out, &v[..n]);
        }
        // json has no B-tree operator class (CREATE INDEX refuses it); bytewise all the same.
        TypeId::Text
        | TypeId::Varchar
        | TypeId::Bytea
        | TypeId::Name
        | TypeId::Char
        | TypeId::PgNodeTree
        | TypeId::NullArray
        | TypeId::Void
        | TypeId::Json => escape_bytes(out, v),
        TypeId::Array(_) | TypeId::Int2Vector | TypeId::OidVector => encode_array(out, ty, v),
        // Records are never stored in tables, so never index keys; field by field all the same.
        TypeId::Record(_) => {
            let r = crate::types::Record::decode(ty, v);
            let mut stored = Vec::new();
            let kinds = match ty.id {
                TypeId::Record(k) => k.fields(),
                _ => std::borrow::Cow::Owned(Vec::new()),
            };
            for (f, (_, fty)) in r.fields.iter().zip(kinds.iter()) {
                if matches!(f, Value::Null) {
                    out.push(TAG_NULL);
                    continue;
                }
                out.push(TAG_VALUE);
                stored.clear();
                f.encode(&mut stored);
                encode_stored(out, fty, &stored);
            }
        }
    }
}

/// An array in PostgreSQL's array order (`btarraycmp`): each element as [`TAG_VALUE`] and its
/// key or [`TAG_NULL`] (NULL elements sort after values), then `0x00` (an array whose
/// elements are a prefix of another's sorts first), then the number of dimensions, their
/// lengths and their lower bounds.
fn encode_array(out: &mut Vec<u8>, ty: &SqlType, v: &[u8]) {
    let a = crate::types::Array::decode(ty, v);
    let elem = a.elem();
    let mut stored = Vec::new();
    for item in &a.items {
        if matches!(item, Value::Null) {
            out.push(TAG_NULL);
            continue;
        }
        out.push(TAG_VALUE);
        stored.clear();
        item.encode(&mut stored);
        encode_stored(out, &elem, &stored);
    }
    out.push(0x00);
    out.push(a.dims.len() as u8);
    for d in &a.dims {
        out.extend_from_slice(&((d.len as u32) ^ 0x8000_0000).to_be_bytes());
    }
    for d in &a.dims {
        out.extend_from_slice(&((d.lower as u32) ^ 0x8000_0000).to_be_bytes());
    }
}

fn fixed<const N: usize>(v: &[u8]) -> [u8; N] {
    assert!(v.len() >= N, "stored value of {} bytes for a {N}-byte type", v.len());
    v[..N].try_into().expect("length checked")
}

fn float4_bits(x: f32) -> u32 {
    if x.is_nan() {
        return u32::MAX;
    }
    let x = if x == 0.0 { 0.0f32 } else { x };
    let b = x.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b ^ 0x8000_0000
    }
}

fn float8_bits(x: f64) -> u64 {
    if x.is_nan() {
        return u64::MAX;
    }
    let x = if x == 0.0 { 0.0f64 } else { x };
    let b = x.to_bits();
    if b & (1 << 63) != 0 {
        !b
    } else {
        b ^ (1 << 63)
    }
}

fn escape_bytes(out: &mut Vec<u8>, v: &[u8]) {
    out.reserve(v.len() + 2);
    let mut rest = v;
    while let Some(p) = memchr::memchr(0, rest) {
        out.extend_from_slice(&rest[..p]);
        out.extend_from_slice(&[0x00, 0xFF]);
        rest = &rest[p + 1..];
    }
    out.extend_from_slice(rest);
    out.extend_from_slice(&[0x00, 0x00]);
}

/// Whether a column of type `ty` can be read back from its key exactly ([`decode_key`]): the
/// encoding is one-to-one for these types. Not for floats (`-0` and NaN payloads fold),
/// numeric (display scale folds), char(n) (trailing blanks drop), intervals, jsonb, arrays.
pub fn returnable(ty: &SqlType) -> bool {
    matches!(
        ty.id,
        TypeId::Bool
            | TypeId::Int2
            | TypeId::Int4
            | TypeId::Int8
            | TypeId::Date
            | TypeId::Timestamp
            | TypeId::Timestamptz
            | TypeId::Time
            | TypeId::TimeTz
            | TypeId::Oid
            | TypeId::Regtype
            | TypeId::Regnamespace
            | TypeId::Regclass
            | TypeId::Uuid
            | TypeId::Text
            | TypeId::Varchar
            | TypeId::Bytea
            | TypeId::Name
            | TypeId::Char
    )
}

/// Reads a key of columns `types` (each [`returnable`]) back into their stored forms (`None`
/// for NULL), as [`encode_key_opts`] was given them with `options`. None if the key does not
/// parse.
pub fn decode_key(mut key: &[u8], types: &[SqlType], options: &[u8], out: &mut Vec<Option<Vec<u8>>>) -> Option<()> {
    out.clear();
    let mut inverted = Vec::new();
    for (i, ty) in types.iter().enumerate() {
        let opt = options.get(i).copied().unwrap_or(0);
        let (&tag, rest) = key.split_first()?;
        key = rest;
        if tag == if opt & OPT_NULLS_FIRST != 0 { TAG_NULL_FIRST } else { TAG_NULL } {
            out.push(None);
            continue;
        }
        if tag != TAG_VALUE {
            return None;
        }
        if opt & OPT_DESC != 0 {
            // The value's bytes complemented: read it from a complemented copy of the rest,
            // then skip as many bytes here.
            inverted.clear();
            inverted.extend(key.iter().map(|b| !b));
            let mut k: &[u8] = &inverted;
            let mut one = Vec::with_capacity(1);
            decode_value(&mut k, ty, &mut one)?;
            key = &key[inverted.len() - k.len()..];
            out.extend(one);
            continue;
        }
        decode_value(&mut key, ty, out)?;
    }
    key.is_empty().then_some(())
}

/// Reads one non-NULL value of type `ty` (its tag already read) from the front of `key`.
fn decode_value(at: &mut &[u8], ty: &SqlType, out: &mut Vec<Option<Vec<u8>>>) -> Option<()> {
    let mut key: &[u8] = at;
    {
        let take = |key: &mut &[u8], n: usize| -> Option<Vec<u8>> {
            let (v, rest) = (key.get(..n)?, key.get(n..)?);
            *key = rest;
            Some(v.to_vec())
        };
        let v = match ty.id {
            TypeId::Bool => take(&mut key, 1)?,
            TypeId::Int2 => (u16::from_be_bytes(take(&mut key, 2)?.try_into().ok()?) ^ 0x8000).to_le_bytes().to_vec(),
            TypeId::Int4 | TypeId::Date => (u32::from_be_bytes(take(&mut key, 4)?.try_into().ok()?) ^ 0x8000_0000).to_le_bytes().to_vec(),
            TypeId::Oid | TypeId::Regtype | TypeId::Regnamespace | TypeId::Regclass => {
                u32::from_be_bytes(take(&mut key, 4)?.try_into().ok()?).to_le_bytes().to_vec()
            }
            TypeId::Int8 | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Time => {
                (u64::from_be_bytes(take(&mut key, 8)?.try_into().ok()?) ^ (1 << 63)).to_le_bytes().to_vec()
            }
            TypeId::TimeTz => {
                let instant = (u64::from_be_bytes(take(&mut key, 8)?.try_into().ok()?) ^ (1 << 63)) as i64;
                let zone = (u32::from_be_bytes(take(&mut key, 4)?.try_into().ok()?) ^ 0x8000_0000) as i32;
                let mut v = Vec::with_capacity(crate::types::time::TIMETZ_LEN);
                crate::types::TimeTz { time: instant.checked_sub(i64::from(zone) * 1_000_000)?, zone }.encode(&mut v);
                v
            }
            TypeId::Uuid => take(&mut key, 16)?,
            TypeId::Text | TypeId::Varchar | TypeId::Bytea | TypeId::Name | TypeId::Char => {
                let mut v = Vec::new();
                loop {
                    let p = memchr::memchr(0, key)?;
                    v.extend_from_slice(&key[..p]);
                    match key.get(p + 1)? {
                        0x00 => {
                            key = &key[p + 2..];
                            break;
                        }
                        0xFF => {
                            v.push(0);
                            key = &key[p + 2..];
                        }
                        _ => return None,
                    }
                }
                v
            }
            _ => return None,
        };
        out.push(Some(v));
    }
    *at = key;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returnable_keys_decode_to_what_was_encoded() {
        let t = |id| SqlType::new(id);
        let types = [t(TypeId::Int4), t(TypeId::Text), t(TypeId::Int8), t(TypeId::Bool), t(TypeId::Int2), t(TypeId::Bytea)];
        let rows: Vec<Vec<Option<Vec<u8>>>> = vec![
            vec![
                Some((-5i32).to_le_bytes().to_vec()),
                Some(b"a\0b\0".to_vec()),
                Some(i64::MIN.to_le_bytes().to_vec()),
                Some(vec![1]),
                Some(7i16.to_le_bytes().to_vec()),
                Some(vec![0, 0xFF, 0]),
            ],
            vec![None, Some(Vec::new()), None, Some(vec![0]), Some(i16::MIN.to_le_bytes().to_vec()), None],
        ];
        // Every order: ASC / DESC, NULLS LAST / FIRST, mixed across the columns.
        for options in [vec![], vec![1, 3, 2, 1, 0, 3], vec![3; 6], vec![1; 6]] {
            for row in &rows {
                let pairs: Vec<(SqlType, Option<&[u8]>)> = types.iter().zip(row).map(|(ty, v)| (*ty, v.as_deref())).collect();
                let mut key = Vec::new();
                encode_key_opts(&mut key, &pairs, &options);
                let mut back = Vec::new();
                decode_key(&key, &types, &options, &mut back).expect("decodes");
                assert_eq!(&back, row, "{options:?}");
                assert!(decode_key(&key[..key.len() - 1], &types, &options, &mut back).is_none(), "a truncated key does not parse");
            }
        }
        assert!(!returnable(&t(TypeId::Float8)) && !returnable(&t(TypeId::Numeric)) && !returnable(&t(TypeId::Bpchar)));
    }
    /// DESC reverses the order of the values; NULLS FIRST puts NULL before them; a
    /// multi-column key orders column by column in each column's order.
    #[test]
    fn column_orders() {
        let int4 = SqlType::new(TypeId::Int4);
        let text = SqlType::new(TypeId::Text);
        let k = |vals: &[(SqlType, Option<Vec<u8>>)], opts: &[u8]| {
            let pairs: Vec<(SqlType, Option<&[u8]>)> = vals.iter().map(|(t, v)| (*t, v.as_deref())).collect();
            let mut out = Vec::new();
            encode_key_opts(&mut out, &pairs, opts);
            out
        };
        let i = |n: i32| Some(n.to_le_bytes().to_vec());
        let s = |x: &str| Some(x.as_bytes().to_vec());
        // -5 (0), 7 (1) and NULL (2) in key order under each option.
        for (opt, expect) in [(0u8, [0, 1, 2]), (1, [1, 0, 2]), (2, [2, 0, 1]), (3, [2, 1, 0])] {
            let mut keys: Vec<(Vec<u8>, usize)> =
                [i(-5), i(7), None].into_iter().enumerate().map(|(n, v)| (k(&[(int4, v)], &[opt]), n)).collect();
            keys.sort();
            let order: Vec<usize> = keys.iter().map(|(_, n)| *n).collect();
            assert_eq!(order, expect, "option {opt}");
        }
        // Text DESC: a value before its extensions ascending, after them descending.
        assert!(k(&[(text, s("ab"))], &[1]) > k(&[(text, s("abc"))], &[1]));
        assert!(k(&[(text, s("b"))], &[1]) < k(&[(text, s("a"))], &[1]));
        // (a ASC, b DESC): a first, then b reversed; keys stay self-delimiting.
        let ab = |a: &str, b: i32| k(&[(text, s(a)), (int4, i(b))], &[0, 1]);
        assert!(ab("a", 9) < ab("a", 1) && ab("a", 1) < ab("ab", 9) && ab("ab", 9) < ab("b", 100));
    }

    use crate::types::Numeric;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn key(ty: TypeId, v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_values(&mut out, &[(SqlType::new(ty), v)]);
        out
    }

    /// PostgreSQL's float comparison: NaN greatest and equal to itself, -0 = 0.
    fn pg_cmp_f64(a: f64, b: f64) -> Ordering {
        match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => a.partial_cmp(&b).expect("no NaN"),
        }
    }

    fn opt_cmp<T>(a: &Option<T>, b: &Option<T>, f: impl Fn(&T, &T) -> Ordering) -> Ordering {
        match (a, b) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater, // NULLS LAST
            (Some(_), None) => Ordering::Less,
            (Some(x), Some(y)) => f(x, y),
        }
    }

    fn any_f64() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            Just(-f64::NAN),
            Just(f64::MIN_POSITIVE),
            (-1000i32..1000).prop_map(|i| i as f64 / 8.0),
        ]
    }

    /// Numeric literals: specials, zeros of several scales, and decimals sharing prefixes.
    fn any_numeric() -> impl Strategy<Value = String> {
        prop_oneof![
            prop_oneof![Just("NaN"), Just("Infinity"), Just("-Infinity"), Just("0"), Just("0.000"), Just("1"), Just("1.00"), Just("-1")]
                .prop_map(str::to_string),
            "-?[0-9]{1,12}(\\.[0-9]{0,12})?",
            "-?1(0000){0,3}(\\.0{0,6}[15])?",
            (any::<i64>(), 0u32..30).prop_map(|(m, e)| format!("{m}e-{e}")),
        ]
    }

    proptest! {
        #[test]
        fn integer_order(a in any::<i64>(), b in any::<i64>(), c in any::<i32>(), d in any::<i32>(), e in any::<i16>(), f in any::<i16>()) {
            prop_assert_eq!(key(TypeId::Int8, &Value::Int8(a)).cmp(&key(TypeId::Int8, &Value::Int8(b))), a.cmp(&b));
            prop_assert_eq!(key(TypeId::Int4, &Value::Int4(c)).cmp(&key(TypeId::Int4, &Value::Int4(d))), c.cmp(&d));
            prop_assert_eq!(key(TypeId::Int2, &Value::Int2(e)).cmp(&key(TypeId::Int2, &Value::Int2(f))), e.cmp(&f));
            prop_assert_eq!(key(TypeId::Date, &Value::Date(c)).cmp(&key(TypeId::Date, &Value::Date(d))), c.cmp(&d));
            prop_assert_eq!(key(TypeId::Timestamp, &Value::Timestamp(a)).cmp(&key(TypeId::Timestamp, &Value::Timestamp(b))), a.cmp(&b));
        }

        #[test]
        fn float_order(a in any_f64(), b in any_f64()) {
            prop_assert_eq!(key(TypeId::Float8, &Value::Float8(a)).cmp(&key(TypeId::Float8, &Value::Float8(b))), pg_cmp_f64(a, b));
            let (x, y) = (a as f32, b as f32);
            prop_assert_eq!(key(TypeId::Float4, &Value::Float4(x)).cmp(&key(TypeId::Float4, &Value::Float4(y))), pg_cmp_f64(x as f64, y as f64));
        }

        #[test]
        fn bytes_order(a in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8), any::<u8>()], 0..12),
                       b in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8), any::<u8>()], 0..12)) {
            prop_assert_eq!(key(TypeId::Bytea, &Value::Bytea(a.clone())).cmp(&key(TypeId::Bytea, &Value::Bytea(b.clone()))), a.cmp(&b));
        }

        #[test]
        fn numeric_order(a in any_numeric(), b in any_numeric(), c in any::<i32>(), d in any::<i32>()) {
            let (x, y) = (Numeric::parse(&a).unwrap(), Numeric::parse(&b).unwrap());
            let ty = TypeId::Numeric;
            prop_assert_eq!(key(ty, &Value::Numeric(x.clone())).cmp(&key(ty, &Value::Numeric(y.clone()))), x.cmp(&y));
            // Self-delimiting: a second column decides between equal numerics only.
            let two = |n: &Numeric, i: i32| {
                let mut out = Vec::new();
                encode_values(&mut out, &[(SqlType::new(ty), &Value::Numeric(n.clone())), (SqlType::new(TypeId::Int4), &Value::Int4(i))]);
                out
            };
            prop_assert_eq!(two(&x, c).cmp(&two(&y, d)), x.cmp(&y).then(c.cmp(&d)));
        }

        #[test]
        fn multi_column_order(a in proptest::option::of(any::<i32>()), s in proptest::option::of("[a-c]{0,4}"),
                              b in proptest::option::of(any::<i32>()), t in proptest::option::of("[a-c]{0,4}")) {
            let int4 = SqlType::new(TypeId::Int4);
            let text = SqlType::new(TypeId::Text);
            let val = |i: &Option<i32>| i.map_or(Value::Null, Value::Int4);
            let sval = |s: &Option<String>| s.clone().map_or(Value::Null, Value::Text);
            let (va, vs, vb, vt) = (val(&a), sval(&s), val(&b), sval(&t));
            let (mut k1, mut k2) = (Vec::new(), Vec::new());
            let n1 = encode_values(&mut k1, &[(int4, &va), (text, &vs)]);
            let n2 = encode_values(&mut k2, &[(int4, &vb), (text, &vt)]);
            prop_assert_eq!(n1, a.is_none() || s.is_none());
            prop_assert_eq!(n2, b.is_none() || t.is_none());
            let want = opt_cmp(&a, &b, |x, y| x.cmp(y)).then_with(|| opt_cmp(&s, &t, |x, y| x.cmp(y)));
            prop_assert_eq!(k1.cmp(&k2), want);
        }
    }

    #[test]
    fn special_values() {
        let f = |x: f64| key(TypeId::Float8, &Value::Float8(x));
        assert_eq!(f(0.0), f(-0.0));
        assert_eq!(f(f64::NAN), f(-f64::NAN));
        assert!(f(f64::INFINITY) < f(f64::NAN));
        assert!(f(f64::NEG_INFINITY) < f(-1e300));
        let t = |s: &str| key(TypeId::Text, &Value::Text(s.into()));
        assert!(t("") < t("a") && t("a") < t("ab") && t("ab") < t("b"));
        // char(n): trailing blanks do not count.
        let c = |s: &str| key(TypeId::Bpchar, &Value::Text(s.into()));
        assert_eq!(c("ab  "), c("ab"));
        assert!(c("a\t") > c("a  "));
        // NULL after everything.
        let null = key(TypeId::Int4, &Value::Null);
        assert!(key(TypeId::Int4, &Value::Int4(i32::MAX)) < null);
        let mut stored = Vec::new();
        assert!(encode_key(&mut stored, &[(SqlType::new(TypeId::Int4), None)]));
        assert_eq!(stored, null);
        // Leading-column prefix bounds.
        let int4 = SqlType::new(TypeId::Int4);
        let text = SqlType::new(TypeId::Text);
        let row = |a: i32, s: Option<&str>| {
            let mut k = Vec::new();
            let sv = s.map_or(Value::Null, |s| Value::Text(s.into()));
            encode_values(&mut k, &[(int4, &Value::Int4(a)), (text, &sv)]);
            k
        };
        let mut p5 = Vec::new();
        encode_values(&mut p5, &[(int4, &Value::Int4(5))]);
        let end = prefix_end(&p5);
        for k in [row(5, Some("")), row(5, Some("\u{10FFFF}")), row(5, None)] {
            assert!(k >= p5 && k < end);
        }
        assert!(row(6, Some("")) > end && row(4, None) < p5);
        // Stored form in, same as typed values.
        let mut k = Vec::new();
        assert!(!encode_key(&mut k, &[(SqlType::new(TypeId::Int8), Some(&7i64.to_le_bytes()))]));
        assert_eq!(k, key(TypeId::Int8, &Value::Int8(7)));
    }
}

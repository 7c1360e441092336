//! Type names (as [`QueryResult`](crate::session::QueryResult) carries them) to PostgreSQL OIDs,
//! and the binary formats of results and parameters through the types' send/recv functions
//! (the ones COPY BINARY uses).

use crate::error::{sqlstate, PgError, Result};
use crate::types::{SqlType, TypeId};

/// `text`: what a parameter is described as when the client gave no type (it is substituted as
/// an untyped literal, so it takes the type its context needs).
pub const TEXT_OID: u32 = 25;

/// Splits `character varying(16)` / `timestamp(3) without time zone` into the name without
/// the modifier and the modifier's numbers.
fn split_typmod(name: &str) -> (String, Vec<i64>) {
    match (name.find('('), name.find(')')) {
        (Some(a), Some(b)) if b > a => {
            let args = name[a + 1..b].split(',').filter_map(|x| x.trim().parse().ok()).collect();
            (format!("{}{}", &name[..a], &name[b + 1..]).trim().to_string(), args)
        }
        _ => (name.to_string(), vec![]),
    }
}

/// A result column's type, if heapstore stores it.
pub fn sql_type(name: &str) -> Option<SqlType> {
    let (base, args) = split_typmod(name);
    SqlType::from_name(&base, &args).ok()
}

/// The OID for a type name (`unknown`, 705, for names PostgreSQL would not know).
pub fn type_oid(name: &str) -> u32 {
    if let Some(t) = sql_type(name) {
        return t.pg_oid();
    }
    match split_typmod(name).0.as_str() {
        "numeric" => 1700,
        "oid" => 26,
        "name" => 19,
        "\"char\"" | "char" => 18,
        "regclass" => 2205,
        "regtype" => 2206,
        "void" => 2278,
        n if n.ends_with("[]") || n == "anyarray" => crate::types::NULL_ARRAYS.iter().find(|(_, name)| *name == n).map_or(705, |(o, _)| *o),
        _ => 705,
    }
}

/// The type modifier PostgreSQL reports in RowDescription: -1 without one; `varchar(n)` and
/// `char(n)` n + 4 (VARHDRSZ); `timestamp(p)` p; `numeric(p, s)` ((p << 16) | (s & 0x7ff)) + 4.
pub fn type_modifier(name: &str) -> i32 {
    let (base, args) = split_typmod(name);
    // An array's modifier is its element's.
    let base = base.strip_suffix("[]").map_or(base.clone(), str::to_string);
    match (base.as_str(), args.as_slice()) {
        ("character varying" | "varchar" | "character" | "char" | "bpchar", [n]) => *n as i32 + 4,
        (
            "timestamp without time zone"
            | "timestamp"
            | "timestamp with time zone"
            | "timestamptz"
            | "time without time zone"
            | "time"
            | "time with time zone"
            | "timetz",
            [p],
        ) => *p as i32,
        ("numeric" | "decimal", [p]) => ((*p as i32) << 16) + 4,
        ("numeric" | "decimal", [p, sc]) => (((*p as i32) << 16) | (*sc as i32 & 0x7ff)) + 4,
        _ => -1,
    }
}

/// The storage size PostgreSQL reports in RowDescription (-1 for variable length).
pub fn type_len(name: &str) -> i16 {
    // void stores nothing but reports pg_type's typlen, 4.
    if name == "void" {
        return 4;
    }
    match sql_type(name).and_then(|t| t.fixed_len()) {
        Some(n) => n as i16,
        None => match type_oid(name) {
            26 => 4,
            19 => 64,
            18 => 1,
            _ => -1,
        },
    }
}

fn type_for_oid(oid: u32) -> Option<SqlType> {
    use TypeId::*;
    [
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
        Int2Vector,
        OidVector,
        Json,
        Jsonb,
        Uuid,
        Interval,
        Time,
        TimeTz,
    ]
    .into_iter()
    .map(SqlType::new)
    .find(|t| t.pg_oid() == oid)
    .or_else(|| crate::types::ArrayElem::by_array_oid(oid).map(|e| SqlType::new(Array(e))))
}

/// A result value in binary format: parse the text with the type's input function, then its
/// send function.
pub fn binary_value(type_name: &str, text: &str, out: &mut Vec<u8>) -> Result<()> {
    // Types heapstore does not store but answers with (catalog and function results): name,
    // "char" and unknown send their text bytes, oid its number.
    match type_oid(type_name) {
        19 | 18 | 705 => {
            out.extend_from_slice(text.as_bytes());
            return Ok(());
        }
        26 => {
            let v: u32 = text.parse().map_err(|_| {
                PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type oid: \"{text}\""))
            })?;
            out.extend_from_slice(&v.to_be_bytes());
            return Ok(());
        }
        _ => {}
    }
    let ty = sql_type(type_name).ok_or_else(|| PgError::feature(format!("binary output is not supported for type {type_name}")))?;
    let mut stored = Vec::new();
    ty.input_text(text, &mut stored)?;
    ty.send_binary(&stored, out);
    Ok(())
}

/// A binary parameter of type `oid` as text: its recv function, then its output function.
pub fn param_from_binary(oid: u32, wire: &[u8]) -> Result<String> {
    let ty = type_for_oid(oid).ok_or_else(|| {
        PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("binary format is not supported for parameters of type {oid}"))
            .with_hint("Send the parameter in text format, or give its type in Parse.")
    })?;
    let mut stored = Vec::new();
    ty.recv_binary(wire, &mut stored)?;
    let mut text = Vec::new();
    ty.output_text(&stored, &mut text);
    String::from_utf8(text).map_err(|_| PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oids_and_binary_round_trip() {
        assert_eq!(type_oid("integer"), 23);
        assert_eq!(type_oid("character varying(16)"), 1043);
        assert_eq!(type_oid("timestamp(3) without time zone"), 1114);
        assert_eq!(type_oid("bigint"), 20);
        assert_eq!(type_oid("numeric"), 1700);
        assert_eq!(type_len("integer"), 4);
        assert_eq!(type_modifier("character varying(16)"), 20);
        assert_eq!(type_modifier("character(3)"), 7);
        assert_eq!(type_modifier("timestamp(3) without time zone"), 3);
        assert_eq!(type_modifier("integer"), -1);
        assert_eq!(type_len("text"), -1);
        let mut b = Vec::new();
        binary_value("integer", "-5", &mut b).unwrap();
        assert_eq!(b, (-5i32).to_be_bytes());
        assert_eq!(param_from_binary(23, &b).unwrap(), "-5");
        assert_eq!(param_from_binary(25, b"h\xc3\xa9").unwrap(), "hé");
        assert!(param_from_binary(1700, &b).is_err());
        b.clear();
        binary_value("name", "alice", &mut b).unwrap();
        assert_eq!(b, b"alice");
        b.clear();
        binary_value("oid", "16384", &mut b).unwrap();
        assert_eq!(b, 16384u32.to_be_bytes());
        let num = |t: &str| {
            let mut b = Vec::new();
            binary_value("numeric", t, &mut b).unwrap();
            b.chunks(2).map(|c| i16::from_be_bytes([c[0], c[1]])).collect::<Vec<i16>>()
        };
        // As PostgreSQL's numeric_send: [ndigits, weight, sign, dscale, digits...].
        assert_eq!(num("1.5"), [2, 0, 0, 1, 1, 5000]);
        assert_eq!(num("-12345.678"), [3, 1, 0x4000, 3, 1, 2345, 6780]);
        assert_eq!(num("0.0001"), [1, -1, 0, 4, 1]);
        assert_eq!(num("10000"), [1, 1, 0, 0, 1]);
        assert_eq!(num("0.00"), [0, 0, 0, 2]);
        assert_eq!(num("1e5"), [1, 1, 0, 0, 10]);
        assert_eq!(num("NaN"), [0, 0, 0xC000u16 as i16, 0]);
        assert!(binary_value("numeric", "1e", &mut Vec::new()).is_err());
        let mut wire = Vec::new();
        binary_value("numeric", "-12.50", &mut wire).unwrap();
        assert_eq!(param_from_binary(1700, &wire).unwrap(), "-12.50");
        assert!(param_from_binary(23, &[1, 2]).is_err());
    }
}

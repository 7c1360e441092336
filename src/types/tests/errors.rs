//! Every error this module raises, with PostgreSQL's exact message and SQLSTATE.

use super::input_error;
use crate::types::{SqlType, TypeId};

fn t(id: TypeId) -> SqlType {
    SqlType::new(id)
}

fn check(ty: SqlType, input: &str, code: &str, message: &str) {
    assert_eq!(input_error(ty, input), (static_code(code), message.to_string()), "{input:?}");
}

/// SQLSTATEs are `&'static str`; compare by value.
fn static_code(code: &str) -> &'static str {
    ["22P02", "22003", "22001", "22023", "22007", "22008", "22009", "22021", "22P03", "08P01"]
        .into_iter()
        .find(|c| *c == code)
        .unwrap_or("?????")
}

#[test]
fn boolean() {
    check(t(TypeId::Bool), "maybe", "22P02", "invalid input syntax for type boolean: \"maybe\"");
    check(t(TypeId::Bool), "o", "22P02", "invalid input syntax for type boolean: \"o\"");
    check(t(TypeId::Bool), " ", "22P02", "invalid input syntax for type boolean: \" \"");
}

#[test]
fn integers() {
    for (id, name, big) in
        [(TypeId::Int2, "smallint", "40000"), (TypeId::Int4, "integer", "2147483648"), (TypeId::Int8, "bigint", "9223372036854775808")]
    {
        check(t(id), "abc", "22P02", &format!("invalid input syntax for type {name}: \"abc\""));
        check(t(id), "", "22P02", &format!("invalid input syntax for type {name}: \"\""));
        check(t(id), "1.5", "22P02", &format!("invalid input syntax for type {name}: \"1.5\""));
        check(t(id), big, "22003", &format!("value \"{big}\" is out of range for type {name}"));
    }
}

#[test]
fn floats() {
    let f8 = t(TypeId::Float8);
    let f4 = t(TypeId::Float4);
    check(f8, "1e400", "22003", "\"1e400\" is out of range for type double precision");
    check(f8, " -1e-400 ", "22003", "\"-1e-400\" is out of range for type double precision");
    check(f8, "x", "22P02", "invalid input syntax for type double precision: \"x\"");
    check(f8, "1.5e", "22P02", "invalid input syntax for type double precision: \"1.5e\"");
    check(f4, "1e39", "22003", "\"1e39\" is out of range for type real");
    check(f4, " 1e-50", "22003", "\" 1e-50\" is out of range for type real");
    check(f4, "", "22P02", "invalid input syntax for type real: \"\"");
}

#[test]
fn character_lengths() {
    let vc = SqlType::with_typmod(TypeId::Varchar, 16);
    check(vc, "xxxxxxxxxxxxxxxxx", "22001", "value too long for type character varying(16)");
    let ch = SqlType::with_typmod(TypeId::Bpchar, 12);
    check(ch, "xxxxxxxxxxxxx", "22001", "value too long for type character(12)");
    check(t(TypeId::Text), "a\0b", "22021", "invalid byte sequence for encoding \"UTF8\": 0x00");
}

#[test]
fn bytea() {
    let b = t(TypeId::Bytea);
    check(b, "\\xZZ", "22023", "invalid hexadecimal digit: \"Z\"");
    check(b, "\\x0a0", "22023", "invalid hexadecimal data: odd number of digits");
    check(b, "a\\b", "22P02", "invalid input syntax for type bytea");
}

#[test]
fn dates() {
    let d = t(TypeId::Date);
    check(d, "2024-02-30", "22008", "date/time field value out of range: \"2024-02-30\"");
    check(d, "x", "22007", "invalid input syntax for type date: \"x\"");
    check(d, "12:00", "22007", "invalid input syntax for type date: \"12:00\"");
    check(d, "5874898-01-01", "22008", "date out of range: \"5874898-01-01\"");
    check(d, "4714-11-23 BC", "22008", "date out of range: \"4714-11-23 BC\"");
    let mut stored = Vec::new();
    let e = d.input_text("13/13/2000", &mut stored).unwrap_err();
    assert_eq!(e.hint.as_deref(), Some("Perhaps you need a different \"datestyle\" setting."));
}

#[test]
fn timestamps() {
    let ts = t(TypeId::Timestamp);
    check(ts, "x", "22007", "invalid input syntax for type timestamp: \"x\"");
    check(ts, "2000-01-01 25:00", "22008", "date/time field value out of range: \"2000-01-01 25:00\"");
    check(ts, "294277-01-01", "22008", "timestamp out of range: \"294277-01-01\"");
    check(ts, "2000-01-01 12:00+99", "22009", "time zone displacement out of range: \"2000-01-01 12:00+99\"");
    check(ts, "2000-01-01 foo/bar", "22023", "time zone \"foo/bar\" not recognized");
}

#[test]
fn binary_receive() {
    let recv = |ty: SqlType, wire: &[u8]| {
        let mut out = Vec::new();
        let e = ty.recv_binary(wire, &mut out).unwrap_err();
        (e.code, e.message.clone())
    };
    let s = |m: &str| m.to_string();
    assert_eq!(recv(t(TypeId::Text), b"ab\xff"), ("22021", s("invalid byte sequence for encoding \"UTF8\": 0xff")));
    assert_eq!(recv(t(TypeId::Int4), &[0, 1]), ("08P01", s("insufficient data left in message")));
    assert_eq!(recv(t(TypeId::Int4), &[0; 5]), ("22P03", s("incorrect binary data format")));
    assert_eq!(recv(t(TypeId::Bool), &[]), ("08P01", s("no data left in message")));
    assert_eq!(recv(t(TypeId::Date), &0x7fda_970du32.to_be_bytes()), ("22008", s("date out of range")));
    let too_late = 9_223_371_331_200_000_000i64.to_be_bytes();
    assert_eq!(recv(t(TypeId::Timestamp), &too_late), ("22008", s("timestamp out of range")));
    let vc = SqlType::with_typmod(TypeId::Varchar, 2);
    assert_eq!(recv(vc, b"abc"), ("22001", s("value too long for type character varying(2)")));
}

//! Edge values of every type through text and binary I/O and [`Value`].

use super::{output, roundtrip_text};
use crate::types::{SqlType, TypeId, Value};

fn t(id: TypeId) -> SqlType {
    SqlType::new(id)
}

#[test]
fn text_edges_roundtrip() {
    let cases: &[(TypeId, &str, &str)] = &[
        (TypeId::Bool, " TRUE ", "t"),
        (TypeId::Bool, "of", "f"),
        (TypeId::Int2, "-32768", "-32768"),
        (TypeId::Int4, " +2147483647 ", "2147483647"),
        (TypeId::Int8, "-9223372036854775808", "-9223372036854775808"),
        (TypeId::Int8, "9223372036854775807", "9223372036854775807"),
        (TypeId::Float8, "-0", "-0"),
        (TypeId::Float8, "NaN", "NaN"),
        (TypeId::Float8, "-inf", "-Infinity"),
        (TypeId::Float8, "1e-300", "1e-300"),
        (TypeId::Float8, "1.5e300", "1.5e+300"),
        (TypeId::Float8, "4.9e-324", "5e-324"),
        (TypeId::Float8, "0x1p-2", "0.25"),
        (TypeId::Float4, "-0", "-0"),
        (TypeId::Float4, "1234567", "1.234567e+06"),
        (TypeId::Float4, "3.4028235e38", "3.4028235e+38"),
        (TypeId::Bytea, "\\x00FF5c", "\\x00ff5c"),
        (TypeId::Bytea, "a\\\\b\\000", "\\x615c6200"),
        (TypeId::Date, "4713-01-01 BC", "4713-01-01 BC"),
        (TypeId::Date, "4714-11-24 BC", "4714-11-24 BC"),
        (TypeId::Date, "5874897-12-31", "5874897-12-31"),
        (TypeId::Date, "0001-01-01", "0001-01-01"),
        (TypeId::Date, "-infinity", "-infinity"),
        (TypeId::Date, "epoch", "1970-01-01"),
        (TypeId::Date, "20240229", "2024-02-29"),
        (TypeId::Timestamp, "294276-12-31 23:59:59.999999", "294276-12-31 23:59:59.999999"),
        (TypeId::Timestamp, "4714-11-24 00:00:00 BC", "4714-11-24 00:00:00 BC"),
        (TypeId::Timestamp, "0044-03-15 12:00 BC", "0044-03-15 12:00:00 BC"),
        (TypeId::Timestamp, "1999-12-31 23:59:59.9999999", "2000-01-01 00:00:00"),
        (TypeId::Timestamp, "infinity", "infinity"),
        (TypeId::Timestamp, "Jan 2 2000 4:05:06.5 PM", "2000-01-02 16:05:06.5"),
    ];
    for &(id, input, expected) in cases {
        assert_eq!(roundtrip_text(t(id), input), expected, "{id:?} {input:?}");
    }
}

#[test]
fn stored_forms() {
    let stored = |ty: SqlType, s: &str| {
        let mut out = vec![0xAA];
        ty.input_text(s, &mut out).unwrap_or_else(|e| panic!("{e}"));
        out
    };
    // Appends, never clears.
    assert_eq!(stored(t(TypeId::Bool), "t"), [0xAA, 1]);
    assert_eq!(stored(t(TypeId::Int4), "-2"), [0xAA, 0xFE, 0xFF, 0xFF, 0xFF]);
    assert_eq!(stored(t(TypeId::Date), "2000-01-02")[1..], 1i32.to_le_bytes());
    assert_eq!(stored(t(TypeId::Date), "infinity")[1..], i32::MAX.to_le_bytes());
    assert_eq!(stored(t(TypeId::Timestamp), "-infinity")[1..], i64::MIN.to_le_bytes());
    assert_eq!(stored(t(TypeId::Timestamp), "2000-01-01 00:00:01")[1..], 1_000_000i64.to_le_bytes());
    assert_eq!(stored(t(TypeId::Float8), "-0")[1..], (-0.0f64).to_bits().to_le_bytes());
    assert_eq!(stored(SqlType::with_typmod(TypeId::Bpchar, 4), "日")[1..], "日   ".as_bytes()[..]);
    assert_eq!(stored(SqlType::with_typmod(TypeId::Varchar, 2), "ab  ")[1..], b"ab"[..]);
}

#[test]
fn binary_forms() {
    let send = |ty: SqlType, s: &str| {
        let mut stored = Vec::new();
        ty.input_text(s, &mut stored).unwrap_or_else(|e| panic!("{e}"));
        let mut wire = Vec::new();
        ty.send_binary(&stored, &mut wire);
        wire
    };
    assert_eq!(send(t(TypeId::Int2), "-2"), [0xFF, 0xFE]);
    assert_eq!(send(t(TypeId::Int8), "1"), [0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(send(t(TypeId::Float4), "1"), [0x3F, 0x80, 0, 0]);
    assert_eq!(send(t(TypeId::Float8), "NaN"), [0x7F, 0xF8, 0, 0, 0, 0, 0, 0]);
    assert_eq!(send(t(TypeId::Date), "1999-12-31"), [0xFF, 0xFF, 0xFF, 0xFF]);
    assert_eq!(send(t(TypeId::Timestamp), "2000-01-01 00:00:00.000001"), [0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(send(SqlType::with_typmod(TypeId::Bpchar, 3), "a"), b"a  ");
    let mut stored = Vec::new();
    t(TypeId::Bool).recv_binary(&[7], &mut stored).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stored, [1]);
    let ch = SqlType::with_typmod(TypeId::Bpchar, 3);
    let mut stored = Vec::new();
    ch.recv_binary(b"ab", &mut stored).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output(ch, &stored), "ab ");
}

#[test]
fn values() {
    let cases = [
        (t(TypeId::Bool), Value::Bool(true), "t"),
        (t(TypeId::Int2), Value::Int2(i16::MIN), "-32768"),
        (t(TypeId::Int4), Value::Int4(7), "7"),
        (t(TypeId::Int8), Value::Int8(i64::MIN), "-9223372036854775808"),
        (t(TypeId::Float4), Value::Float4(0.1), "0.1"),
        (t(TypeId::Float8), Value::Float8(-0.0), "-0"),
        (t(TypeId::Text), Value::Text("héllo".into()), "héllo"),
        (t(TypeId::Bytea), Value::Bytea(vec![0, 255]), "\\x00ff"),
        (t(TypeId::Date), Value::Date(-2_451_545), "4714-11-24 BC"),
        (t(TypeId::Timestamp), Value::Timestamp(i64::MAX), "infinity"),
    ];
    for (ty, v, text) in cases {
        assert_eq!(v.to_text(&ty).as_deref(), Some(text), "{v:?}");
        let mut stored = Vec::new();
        v.encode(&mut stored);
        assert_eq!(Value::decode(&ty, &stored), v);
        let mut parsed = Vec::new();
        ty.input_text(text, &mut parsed).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Value::decode(&ty, &parsed), v, "{text}");
    }
    assert_eq!(Value::Null.to_text(&t(TypeId::Int4)), None);
    let nan = Value::decode(&t(TypeId::Float8), &f64::NAN.to_bits().to_le_bytes());
    assert!(matches!(nan, Value::Float8(f) if f.is_nan()));
}

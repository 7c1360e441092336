//! `numeric` against PostgreSQL 15.18: the oracle file `pg15_numeric_cases.tsv` (about
//! 11,000 operations with PostgreSQL's results), hand-picked cases with the values
//! PostgreSQL printed, the binary form, and properties against `i128` arithmetic.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use proptest::prelude::*;

use super::{fixture, output, unhex};
use crate::error::PgError;
use crate::types::{Numeric, SqlType, TypeId, Value};

fn n(s: &str) -> Numeric {
    Numeric::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn text(r: Result<Numeric, PgError>) -> String {
    match r {
        Ok(v) => v.to_text(),
        Err(e) => format!("ERR {} {}", e.code, e.message),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

fn send(v: &Numeric) -> String {
    let mut out = Vec::new();
    v.send(&mut out);
    hex(&out)
}

fn err_line(e: PgError) -> String {
    format!("ERR\t{}\t{}\t{}", e.code, e.message, e.detail.clone().unwrap_or_default())
}

/// Evaluates one oracle line the way `try_num` did in PostgreSQL.
fn eval(op: &str, a: &str, b: &str) -> String {
    let ok = |s: String| format!("OK\t{s}");
    let res = || -> Result<String, PgError> {
        match op {
            "in" => {
                let input = String::from_utf8(unhex(a)).unwrap_or_else(|e| panic!("{e}"));
                let args: Vec<i64> =
                    b.trim_matches(|c| c == '(' || c == ')').split(',').filter(|x| !x.is_empty()).map(|x| x.parse().unwrap()).collect();
                let ty = SqlType::from_name("numeric", &args)?;
                let mut stored = Vec::new();
                ty.input_text(&input, &mut stored)?;
                let mut wire = Vec::new();
                ty.send_binary(&stored, &mut wire);
                return Ok(format!("{}\t{}", output(ty, &stored), hex(&wire)));
            }
            "fromf8" => return Ok(Numeric::from_f64(super::super::float::parse_float8(a)?)?.to_text()),
            "fromf4" => return Ok(Numeric::from_f32(super::super::float::parse_float4(a)?)?.to_text()),
            _ => {}
        }
        let x = Numeric::parse(a)?;
        let y = || Numeric::parse(b);
        let int = || b.parse::<i32>().unwrap_or_else(|e| panic!("{b}: {e}"));
        let v = match op {
            "add" => x.add(&y()?)?,
            "sub" => x.sub(&y()?)?,
            "mul" => x.mul(&y()?)?,
            "div" => x.div(&y()?)?,
            "mod" => x.rem(&y()?)?,
            "div_trunc" => x.div_trunc(&y()?)?,
            "pow" => x.power(&y()?)?,
            "round" => x.round(int())?,
            "trunc" => x.trunc(int())?,
            "floor" => x.floor()?,
            "ceil" => x.ceil()?,
            "abs" => x.abs(),
            "neg" => x.neg(),
            "sign" => x.sign(),
            "sqrt" => x.sqrt()?,
            "ln" => x.ln()?,
            "exp" => x.exp()?,
            "int2" => return Ok(x.to_i16()?.to_string()),
            "int4" => return Ok(x.to_i32()?.to_string()),
            "int8" => return Ok(x.to_i64()?.to_string()),
            "float8" => return Ok(Value::Float8(x.to_f64()?).to_text(&SqlType::new(TypeId::Float8)).unwrap_or_default()),
            "cmp" => return Ok((x.cmp(&y()?) as i8).to_string()),
            _ => panic!("unknown op {op}"),
        };
        Ok(v.to_text())
    };
    match res() {
        Ok(s) => ok(s),
        Err(e) => err_line(e),
    }
}

#[test]
fn matches_postgres_15_oracle() {
    let data = String::from_utf8(fixture("pg15_numeric_cases.tsv")).unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut count = 0;
    for line in data.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.splitn(4, '\t').collect();
        let (op, a, b, expected) = (cols[0], cols[1], cols[2], cols[3]);
        let got = eval(op, a, b);
        if got != expected {
            failures.push(format!("{op} {a:?} {b:?}\n  expected {expected}\n  got      {got}"));
        }
        count += 1;
    }
    assert!(count > 10_000, "only {count} cases");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
}

#[test]
fn arithmetic_scales_as_postgres() {
    // (expression, PostgreSQL 15's output)
    let cases: &[(&str, Result<Numeric, PgError>, &str)] = &[
        ("1/3", n("1").div(&n("3")), "0.33333333333333333333"),
        ("10/4", n("10").div(&n("4")), "2.5000000000000000"),
        ("1.0/3", n("1.0").div(&n("3")), "0.33333333333333333333"),
        ("2/3.000", n("2").div(&n("3.000")), "0.66666666666666666667"),
        ("1/0.0003", n("1").div(&n("0.0003")), "3333.3333333333333333"),
        ("123456789/0.001", n("123456789").div(&n("0.001")), "123456789000.00000000"),
        ("1/7e20", n("1").div(&n("7e20")), "0.0000000000000000000014285714285714285714"),
        ("-7/2", n("-7").div(&n("2")), "-3.5000000000000000"),
        ("0.00/3", n("0.00").div(&n("3")), "0.00000000000000000000"),
        ("1/0", n("1").div(&n("0")), "ERR 22012 division by zero"),
        ("inf/0", Numeric::infinity().div(&n("0")), "ERR 22012 division by zero"),
        ("5/inf", n("5").div(&Numeric::infinity()), "0"),
        ("avg(1,2)", Numeric::avg(&n("3"), 2), "1.5000000000000000"),
        ("avg(1.5,2.25)", Numeric::avg(&n("3.75"), 2), "1.8750000000000000"),
        ("avg(1,2,4)", Numeric::avg(&n("7"), 3), "2.3333333333333333"),
        ("7 % 3", n("7").rem(&n("3")), "1"),
        ("-7 % 3", n("-7").rem(&n("3")), "-1"),
        ("7 % -3", n("7").rem(&n("-3")), "1"),
        ("7.5 % 2", n("7.5").rem(&n("2")), "1.5"),
        ("7 % 0.25", n("7").rem(&n("0.25")), "0.00"),
        ("1.23456 % 0.1", n("1.23456").rem(&n("0.1")), "0.03456"),
        ("-4 % 2", n("-4").rem(&n("2")), "0"),
        ("inf % 2", Numeric::infinity().rem(&n("2")), "NaN"),
        ("5 % 0", n("5").rem(&n("0")), "ERR 22012 division by zero"),
        ("1.5 * 2.25", n("1.5").mul(&n("2.25")), "3.375"),
        ("-3 * 0.000", n("-3").mul(&n("0.000")), "0.000"),
        ("inf * 0", Numeric::infinity().mul(&n("0")), "NaN"),
        ("1.10 + 2.2", n("1.10").add(&n("2.2")), "3.30"),
        ("1.10 - 1.1", n("1.10").sub(&n("1.1")), "0.00"),
        ("inf - inf", Numeric::infinity().sub(&Numeric::infinity()), "NaN"),
        ("5 - inf", n("5").sub(&Numeric::infinity()), "-Infinity"),
        ("round(2.5)", n("2.5").round(0), "3"),
        ("round(-2.5)", n("-2.5").round(0), "-3"),
        ("round(1.235, 2)", n("1.235").round(2), "1.24"),
        ("round(1250, -2)", n("1250").round(-2), "1300"),
        ("round(-1250, -2)", n("-1250").round(-2), "-1300"),
        ("round(9999.5)", n("9999.5").round(0), "10000"),
        ("round(1.5, 5)", n("1.5").round(5), "1.50000"),
        ("trunc(-2.59, 1)", n("-2.59").trunc(1), "-2.5"),
        ("trunc(1299, -2)", n("1299").trunc(-2), "1200"),
        ("floor(-2.5)", n("-2.5").floor(), "-3"),
        ("ceil(-0.5)", n("-0.5").ceil(), "0"),
        ("ceil(2.01)", n("2.01").ceil(), "3"),
        ("sqrt(2)", n("2").sqrt(), "1.414213562373095"),
        ("sqrt(0.5)", n("0.5").sqrt(), "0.70710678118654752"),
        ("sqrt(1e100)", n("1e100").sqrt(), "100000000000000000000000000000000000000000000000000"),
        ("sqrt(-1)", n("-1").sqrt(), "ERR 2201F cannot take square root of a negative number"),
        ("2 ^ 10", n("2").power(&n("10")), "1024.0000000000000000"),
        ("1.5 ^ 17", n("1.5").power(&n("17")), "985.2612533569335938"),
        ("1.000001 ^ 1000000", n("1.000001").power(&n("1000000")), "2.7182804693193769"),
        ("(-1.1) ^ -3", n("-1.1").power(&n("-3")), "-0.7513148009015778"),
        ("2 ^ 0.5", n("2").power(&n("0.5")), "1.4142135623730950"),
        ("0 ^ -1", n("0").power(&n("-1")), "ERR 2201F zero raised to a negative power is undefined"),
        ("(-2) ^ 0.5", n("-2").power(&n("0.5")), "ERR 2201F a negative number raised to a non-integer power yields a complex result"),
        ("10 ^ 200000", n("10").power(&n("200000")), "ERR 22003 value overflows numeric format"),
        ("NaN ^ 0", Numeric::nan().power(&n("0")), "1"),
        ("exp(1)", n("1").exp(), "2.7182818284590452"),
        ("ln(2)", n("2").ln(), "0.6931471805599453"),
        ("exp(-10.25)", n("-10.25").exp(), "0.00003535750085040998"),
    ];
    for (what, got, want) in cases {
        assert_eq!(text(got.clone()), *want, "{what}");
    }
}

#[test]
fn text_round_trips_keep_the_scale() {
    for (input, out) in [
        ("1.50", "1.50"),
        (" -0.00 ", "0.00"),
        ("+.5", "0.5"),
        ("5.", "5"),
        ("000123.4500", "123.4500"),
        ("1.5e-3", "0.0015"),
        ("1.50e3", "1500"),
        ("1e 5", "100000"),
        ("-INFINITY ", "-Infinity"),
        ("inf", "Infinity"),
        ("nan", "NaN"),
        ("0.0001", "0.0001"),
        ("99999999.99999999", "99999999.99999999"),
    ] {
        let v = n(input);
        assert_eq!(v.to_text(), out, "{input:?}");
        assert_eq!(v.to_string(), out);
        assert_eq!(n(out).to_text(), out, "{out:?} round trip");
    }
    for bad in ["", " ", ".", "-", "1e", "1..2", "1.2.3", "- 1", "infinityx", "1e5.5", "0x10", "1_000"] {
        let e = Numeric::parse(bad).unwrap_err();
        assert_eq!((e.code, e.message.clone()), ("22P02", format!("invalid input syntax for type numeric: \"{bad}\"")));
    }
    for big in ["1e1073741823", "1e131072", "1e-16384", "0e-99999"] {
        assert_eq!(Numeric::parse(big).unwrap_err().message, "value overflows numeric format", "{big}");
    }
    assert_eq!(n("1e131071").to_text().len(), 131_072);
    assert_eq!(n("9.9999e131071").to_text().len(), 131_072);
}

#[test]
fn conversions() {
    assert_eq!(Numeric::from_i64(i64::MIN).to_text(), "-9223372036854775808");
    assert_eq!(Numeric::from_i64(10000).to_text(), "10000");
    assert_eq!(Numeric::from_i64(0), n("0.000"));
    assert_eq!(n("2.5").to_i32().ok(), Some(3));
    assert_eq!(n("-2.5").to_i64().ok(), Some(-3));
    assert_eq!(n("-9223372036854775808.4").to_i64().ok(), Some(i64::MIN));
    assert_eq!(n("32767.5").to_i16().unwrap_err().message, "smallint out of range");
    assert_eq!(n("2147483647.5").to_i32().unwrap_err().message, "integer out of range");
    assert_eq!(n("9223372036854775807.5").to_i64().unwrap_err().message, "bigint out of range");
    let e = Numeric::nan().to_i32().unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("0A000", "cannot convert NaN to integer"));
    assert_eq!(Numeric::neg_infinity().to_i16().unwrap_err().message, "cannot convert infinity to smallint");
    assert_eq!(Numeric::from_f64(0.1).unwrap().to_text(), "0.1");
    assert_eq!(Numeric::from_f64(1e20).unwrap().to_text(), "100000000000000000000");
    assert_eq!(Numeric::from_f64(1.5e-5).unwrap().to_text(), "0.000015");
    assert_eq!(Numeric::from_f64(123456789012345678.0).unwrap().to_text(), "123456789012346000");
    assert_eq!(Numeric::from_f64(1000000000000005.0).unwrap().to_text(), "1000000000000000");
    assert_eq!(Numeric::from_f64(-0.0).unwrap().to_text(), "0");
    assert!(Numeric::from_f64(f64::NAN).unwrap().is_nan());
    assert_eq!(Numeric::from_f64(f64::NEG_INFINITY).unwrap(), Numeric::neg_infinity());
    assert_eq!(n("1.5").to_f64().ok(), Some(1.5));
    assert_eq!(n("1e400").to_f64().unwrap_err().code, "22003");
    assert_eq!(Numeric::infinity().to_f64().ok(), Some(f64::INFINITY));
}

#[test]
fn typmod_and_names() {
    let ty = |args: &[i64]| SqlType::from_name("numeric", args);
    let t52 = ty(&[5, 2]).unwrap();
    assert_eq!((t52.id, t52.typmod, t52.name()), (TypeId::Numeric, (5 << 16 | 2) + 4, "numeric(5,2)".to_string()));
    assert_eq!(ty(&[10]).unwrap().name(), "numeric(10,0)");
    assert_eq!(ty(&[]).unwrap().name(), "numeric");
    assert_eq!(SqlType::from_name("DECIMAL", &[3, -2]).unwrap().name(), "numeric(3,-2)");
    assert_eq!((t52.pg_oid(), t52.fixed_len(), t52.input_name()), (1700, None, "numeric"));
    let err = |args: &[i64]| ty(args).map(|_| ()).unwrap_err().message.clone();
    assert_eq!(err(&[0]), "NUMERIC precision 0 must be between 1 and 1000");
    assert_eq!(err(&[1001, 0]), "NUMERIC precision 1001 must be between 1 and 1000");
    assert_eq!(err(&[5, 1001]), "NUMERIC scale 1001 must be between -1000 and 1000");
    assert_eq!(err(&[5, -1001]), "NUMERIC scale -1001 must be between -1000 and 1000");
    assert_eq!(err(&[1, 2, 3]), "invalid NUMERIC type modifier");

    let apply = |v: &str, p: i64, s: i64| -> Result<String, PgError> {
        let t = ty(&[p, s])?;
        Ok(n(v).apply_typmod(t.typmod)?.to_text())
    };
    assert_eq!(apply("12.345", 5, 2).unwrap(), "12.35");
    assert_eq!(apply("0.001", 3, 5).unwrap(), "0.00100");
    assert_eq!(apply("12345", 3, -2).unwrap(), "12300");
    assert_eq!(apply("NaN", 3, 1).unwrap(), "NaN");
    let detail = |v: &str, p, s| {
        let e = apply(v, p, s).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), ("22003", "numeric field overflow"));
        e.detail.clone().unwrap_or_default()
    };
    assert_eq!(detail("99.995", 4, 2), "A field with precision 4, scale 2 must round to an absolute value less than 10^2.");
    assert_eq!(detail("5", 2, 3), "A field with precision 2, scale 3 must round to an absolute value less than 10^-1.");
    assert_eq!(detail("1", 1, 1), "A field with precision 1, scale 1 must round to an absolute value less than 1.");
    assert_eq!(detail("123456", 3, -2), "A field with precision 3, scale -2 must round to an absolute value less than 10^5.");
    assert_eq!(detail("Infinity", 5, 2), "A field with precision 5, scale 2 cannot hold an infinite value.");
}

#[test]
fn binary_matches_numeric_send() {
    // select numeric_send('...') in PostgreSQL 15.
    for (v, wire) in [
        ("1.50", "000200000000000200011388"),
        ("0", "0000000000000000"),
        ("0.000", "0000000000000003"),
        ("-12345.678", "0003000140000003000109291a7c"),
        ("NaN", "00000000c0000000"),
        ("Infinity", "00000000d0000020"),
        ("-Infinity", "00000000f0000020"),
        ("100000000", "00010002000000000001"),
        ("0.00010", "0001ffff000000050001"),
    ] {
        assert_eq!(send(&n(v)), wire, "{v}");
        assert_eq!(Numeric::recv(&unhex(wire)).unwrap().to_text(), n(v).to_text(), "{v}");
    }
}

#[test]
fn recv_validates_as_postgres() {
    // Wire values loaded with COPY ... FROM (FORMAT binary) into PostgreSQL 15.
    fn wire(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = Vec::new();
        for x in [ndigits, weight as u16, sign, dscale].iter().chain(digits) {
            b.extend_from_slice(&x.to_be_bytes());
        }
        b
    }
    let err = |w: &[u8]| {
        let e = Numeric::recv(w).unwrap_err();
        (e.code, e.message.clone())
    };
    let s = |m: &str| m.to_string();
    assert_eq!(err(&wire(1, 0, 0x1234, 0, &[1])), ("22P03", s("invalid sign in external \"numeric\" value")));
    assert_eq!(err(&wire(1, 0, 0, 0x4000, &[1])), ("22P03", s("invalid scale in external \"numeric\" value")));
    assert_eq!(err(&wire(2, 0, 0, 4, &[1, 10000])), ("22P03", s("invalid digit in external \"numeric\" value")));
    assert_eq!(err(&wire(1, 0, 0, 0, &[0x8000])), ("22P03", s("invalid digit in external \"numeric\" value")));
    assert_eq!(err(&wire(2, 0, 0, 0, &[1])), ("08P01", s("insufficient data left in message")));
    assert_eq!(err(&[0, 0, 0, 0]), ("08P01", s("insufficient data left in message")));
    let mut trailing = wire(1, 0, 0, 0, &[1]);
    trailing.push(0);
    assert_eq!(err(&trailing), ("22P03", s("incorrect binary data format")));
    let ok = |w: &[u8]| {
        let v = Numeric::recv(w).unwrap();
        (v.to_text(), send(&v))
    };
    // Digits hidden by dscale are truncated; the stored form is normalized.
    assert_eq!(ok(&wire(2, 0, 0, 0, &[1, 5000])), (s("1"), s("00010000000000000001")));
    assert_eq!(ok(&wire(3, 0, 0x4000, 5, &[12, 3456, 7890])), (s("-12.34567"), s("0003000040000005000c0d801b58")));
    assert_eq!(ok(&wire(1, 7, 0xC000, 3, &[5])), (s("NaN"), s("00000000c0000000")));
    assert_eq!(ok(&wire(0, 0, 0xD000, 0, &[])), (s("Infinity"), s("00000000d0000020")));
    assert_eq!(ok(&wire(0, 5, 0x4000, 2, &[])), (s("0.00"), s("0000000000000002")));
    assert_eq!(ok(&wire(3, 1, 0, 0, &[0, 1, 0])), (s("1"), s("00010000000000000001")));
    assert_eq!(ok(&wire(1, -1, 0x4000, 2, &[5])), (s("0.00"), s("0000000000000002")));
    assert_eq!(send(&Numeric::recv(&wire(1, 32767, 0, 0, &[1])).unwrap()), "00017fff000000000001");
    assert_eq!(send(&Numeric::recv(&wire(2, -32768, 0, 16383, &[0, 1])).unwrap()), "0000000000003fff");
    // Through the type, with its modifier.
    let t31 = SqlType::from_name("numeric", &[3, 1]).unwrap();
    let mut stored = Vec::new();
    t31.recv_binary(&wire(3, 0, 0x4000, 5, &[12, 3456, 7890]), &mut stored).unwrap();
    assert_eq!(output(t31, &stored), "-12.3");
    let e = t31.recv_binary(&wire(2, 0, 0, 2, &[123, 4500]), &mut Vec::new()).unwrap_err();
    assert_eq!(e.message, "numeric field overflow");
}

fn hash_of(v: &Numeric) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

#[test]
fn order_equality_and_hash() {
    let sorted =
        ["-Infinity", "-1e20", "-1.5", "-1", "-0.0001", "0", "1e-20", "0.5", "1", "1.0001", "9999", "10000", "1e100", "Infinity", "NaN"];
    for (i, a) in sorted.iter().enumerate() {
        for (j, b) in sorted.iter().enumerate() {
            assert_eq!(n(a).cmp(&n(b)), i.cmp(&j), "{a} vs {b}");
        }
    }
    for (a, b) in [("1.0", "1.00"), ("0", "-0.000"), ("NaN", "nan"), ("100", "1e2"), ("-2.50", "-2.5")] {
        assert_eq!(n(a), n(b));
        assert_eq!(hash_of(&n(a)), hash_of(&n(b)), "{a} {b}");
    }
    assert_ne!(n("1"), n("1.0001"));
    // Storage round trip keeps the scale; the sort key ignores it.
    for v in sorted.iter().chain(&["1.500", "-0.00", "123456789.123456789"]) {
        let x = n(v);
        let mut stored = Vec::new();
        x.encode_stored(&mut stored);
        assert_eq!(Numeric::decode_stored(&stored).to_text(), x.to_text());
        assert_eq!(Value::decode(&SqlType::new(TypeId::Numeric), &stored), Value::Numeric(x.clone()));
    }
    let key = |v: &str| {
        let (mut stored, mut k) = (Vec::new(), Vec::new());
        n(v).encode_stored(&mut stored);
        Numeric::sort_key(&stored, &mut k);
        k
    };
    for w in sorted.windows(2) {
        assert!(key(w[0]) < key(w[1]), "{} < {}", w[0], w[1]);
    }
    assert_eq!(key("1.5"), key("1.50000"));
    assert!(key("-1.5") > key("-1.55") && key("1.5") < key("1.55"));
    let ty = SqlType::new(TypeId::Numeric);
    assert_eq!(Value::Numeric(n("1.50")).to_text(&ty).as_deref(), Some("1.50"));
    assert_eq!(Value::Numeric(n("1")).natural_type(), Some(ty));
}

/// A decimal `m × 10^-s` as text, and as a numeric.
fn decimal(m: i128, s: u32) -> String {
    let digits = m.unsigned_abs().to_string();
    let sign = if m < 0 { "-" } else { "" };
    if s == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = s as usize + 1);
    let (int, frac) = padded.split_at(padded.len() - s as usize);
    format!("{sign}{int}.{frac}")
}

proptest! {
    #[test]
    fn integer_arithmetic_matches_i128(a in any::<i64>(), b in any::<i64>()) {
        let (x, y) = (Numeric::from_i64(a), Numeric::from_i64(b));
        let (a, b) = (i128::from(a), i128::from(b));
        prop_assert_eq!(x.add(&y).unwrap().to_text(), (a + b).to_string());
        prop_assert_eq!(x.sub(&y).unwrap().to_text(), (a - b).to_string());
        prop_assert_eq!(x.mul(&y).unwrap().to_text(), (a * b).to_string());
        if b != 0 {
            prop_assert_eq!(x.rem(&y).unwrap().to_text(), (a % b).to_string());
            prop_assert_eq!(x.div_trunc(&y).unwrap().to_text(), (a / b).to_string());
        }
        prop_assert_eq!(x.cmp(&y), a.cmp(&b));
        prop_assert_eq!(n(&x.to_text()), x);
    }

    #[test]
    fn scaled_decimals_match_i128(a in -(1i128 << 60)..(1i128 << 60), sa in 0u32..12, b in -(1i128 << 60)..(1i128 << 60), sb in 0u32..12) {
        let (x, y) = (n(&decimal(a, sa)), n(&decimal(b, sb)));
        // Align to the larger scale for add/sub; the product has scale sa + sb.
        let s = sa.max(sb);
        let (ax, by) = (a * 10i128.pow(s - sa), b * 10i128.pow(s - sb));
        prop_assert_eq!(x.add(&y).unwrap().to_text(), decimal(ax + by, s));
        prop_assert_eq!(x.sub(&y).unwrap().to_text(), decimal(ax - by, s));
        prop_assert_eq!(x.mul(&y).unwrap().to_text(), decimal(a * b, sa + sb));
        if b != 0 {
            prop_assert_eq!(x.rem(&y).unwrap().to_text(), decimal(ax % by, s));
        }
        prop_assert_eq!(x.cmp(&y), ax.cmp(&by));
        prop_assert_eq!(x == y, hash_of(&x) == hash_of(&y) && ax == by);
        // The exact quotient, rounded half away from zero at the chosen scale, times the
        // divisor is within half a unit of the dividend.
        if b != 0 {
            let q = x.div(&y).unwrap();
            let back = q.mul(&y).unwrap().sub(&x).unwrap().abs();
            let half_unit = n(&format!("0.5e-{}", q.dscale())).mul(&y.abs()).unwrap();
            prop_assert!(back <= half_unit, "{} / {} = {}", x, y, q);
        }
        let mut wire = Vec::new();
        x.send(&mut wire);
        prop_assert_eq!(Numeric::recv(&wire).unwrap().to_text(), x.to_text());
    }

    #[test]
    fn rounding_matches_i128(a in -(1i128 << 70)..(1i128 << 70), s in 0u32..15, to in -5i32..15) {
        let x = n(&decimal(a, s));
        let r = x.round(to).unwrap();
        let t = x.trunc(to).unwrap();
        // Reference: scale a (with scale s) to `to` places, half away from zero.
        let shift = s as i32 - to;
        let (rounded, truncated) = if shift <= 0 {
            (a, a)
        } else {
            let p = 10i128.pow(shift as u32);
            let q = a / p;
            let rem = (a % p).abs();
            let rq = if rem * 2 >= p { q + a.signum() } else { q };
            (rq * p, q * p)
        };
        let out_scale = to.max(0) as u32;
        let scale_back = |v: i128| if shift <= 0 { v * 10i128.pow((-shift) as u32) } else if to < 0 { v / 10i128.pow(s) } else { v / 10i128.pow(shift as u32) };
        prop_assert_eq!(r.to_text(), decimal(scale_back(rounded), out_scale));
        prop_assert_eq!(t.to_text(), decimal(scale_back(truncated), out_scale));
    }
}

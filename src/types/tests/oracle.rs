//! Replays `pg15_input_cases.tsv`: about 6,000 text inputs (valid and invalid, many of
//! them fuzzed) with the output, binary send form or error that PostgreSQL 15.18 gave.

use super::{fixture, output, unhex};
use crate::types::SqlType;

/// A stored value's binary send form, hex-encoded as the fixtures hold it.
fn send_hex(ty: SqlType, stored: &[u8]) -> String {
    let mut wire = Vec::new();
    ty.send_binary(stored, &mut wire);
    wire.iter().map(|b| format!("{b:02x}")).collect()
}

/// `varchar(16)` -> `SqlType`.
fn parse_type(spec: &str) -> SqlType {
    let (name, args) = match spec.split_once('(') {
        Some((name, rest)) => {
            let n: i64 = rest.trim_end_matches(')').parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
            (name, vec![n])
        }
        None => (spec, vec![]),
    };
    SqlType::from_name(name, &args).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn text(hex: &str) -> String {
    String::from_utf8(unhex(hex)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn matches_postgres_15() {
    let data = fixture("pg15_input_cases.tsv");
    let data = String::from_utf8(data).unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut count = 0;
    for line in data.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let ty = parse_type(cols[0]);
        let input = text(cols[1]);
        let mut stored = Vec::new();
        let got = match ty.input_text(&input, &mut stored) {
            Ok(()) => format!("OK {} {}", output(ty, &stored), send_hex(ty, &stored)),
            Err(e) => format!("ERR {} {} {}", e.code, e.message, e.hint.clone().unwrap_or_default()),
        };
        let expected = match cols[2] {
            "OK" => format!("OK {} {}", text(cols[3]), cols[4]),
            _ => format!("ERR {} {} {}", cols[3], text(cols[4]), text(cols[5])),
        };
        if got != expected {
            failures.push(format!("{} {input:?}\n  expected {expected}\n  got      {got}", cols[0]));
        }
        count += 1;
    }
    assert!(count > 5000, "only {count} cases");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
}

/// Replays `pg15_jsonb_cases.tsv`: about 200 jsonb text inputs (hand-written, random and
/// mutated) with the canonical output and `jsonb_send` form, or the error with its DETAIL and
/// CONTEXT, that PostgreSQL 15.18 gave.
#[test]
fn jsonb_matches_postgres_15() {
    let data = fixture("pg15_jsonb_cases.tsv");
    let data = String::from_utf8(data).unwrap_or_else(|e| panic!("{e}"));
    let ty = SqlType::new(crate::types::TypeId::Jsonb);
    let mut failures = Vec::new();
    let mut count = 0;
    for line in data.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let input = text(cols[0]);
        let mut stored = Vec::new();
        let got = match ty.input_text(&input, &mut stored) {
            Ok(()) => {
                // The binary form reads back to the same value.
                let mut wire = Vec::new();
                ty.send_binary(&stored, &mut wire);
                let mut again = Vec::new();
                ty.recv_binary(&wire, &mut again).unwrap_or_else(|e| panic!("{input:?}: recv: {e}"));
                assert_eq!(again, stored, "{input:?}: recv of send");
                format!("OK {} {}", output(ty, &stored), send_hex(ty, &stored))
            }
            Err(e) => format!(
                "ERR {} {} | {} | {}",
                e.code,
                e.message,
                e.detail.clone().unwrap_or_default(),
                e.context.clone().map(|c| c.to_string()).unwrap_or_default()
            ),
        };
        let expected = match cols[1] {
            "OK" => format!("OK {} {}", text(cols[2]), cols[3]),
            _ => format!("ERR {} {} | {} | {}", cols[2], text(cols[3]), text(cols[4]), text(cols[5])),
        };
        if got != expected {
            failures.push(format!("{input:?}\n  expected {expected}\n  got      {got}"));
        }
        count += 1;
    }
    assert!(count >= 200, "only {count} cases");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
}

/// `int4[]`, `varchar(3)[]`, `"char"[]`, `int2vector` -> `SqlType`.
fn parse_array_type(spec: &str) -> SqlType {
    let elem = |spec: &str| match spec.split_once('(') {
        Some((name, rest)) => {
            let args: Vec<i64> =
                rest.trim_end_matches(')').split(',').map(|a| a.parse().unwrap_or_else(|e| panic!("{spec}: {e}"))).collect();
            SqlType::from_name(name, &args).unwrap_or_else(|e| panic!("{spec}: {e}"))
        }
        None => SqlType::from_name(spec, &[]).unwrap_or_else(|e| panic!("{spec}: {e}")),
    };
    match spec.strip_suffix("[]") {
        Some(e) => elem(e).array_of().unwrap_or_else(|| panic!("no array type for {spec}")),
        None => elem(spec),
    }
}

/// Replays `pg15_array_cases.tsv`: about 1,400 array and vector text inputs with the output,
/// `array_send` form or error (with its DETAIL) that PostgreSQL 15.18 gave.
#[test]
fn arrays_match_postgres_15() {
    let data = fixture("pg15_array_cases.tsv");
    let data = String::from_utf8(data).unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut count = 0;
    for line in data.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let ty = parse_array_type(cols[0]);
        let input = text(cols[1]);
        let mut stored = Vec::new();
        let got = match ty.input_text(&input, &mut stored) {
            Ok(()) => {
                let mut wire = Vec::new();
                ty.send_binary(&stored, &mut wire);
                // The binary form reads back to the same value.
                let mut again = Vec::new();
                if let Err(e) = ty.recv_binary(&wire, &mut again) {
                    failures.push(format!("{} {input:?}: recv of its own send failed: {e}", cols[0]));
                } else if again != stored {
                    failures.push(format!("{} {input:?}: recv of its own send differs", cols[0]));
                }
                let hex: String = wire.iter().map(|b| format!("{b:02x}")).collect();
                format!("OK {} {hex}", output(ty, &stored))
            }
            Err(e) => format!("ERR {} {} {}", e.code, e.message, e.detail.clone().unwrap_or_default()),
        };
        let expected = match cols[2] {
            "OK" => format!("OK {} {}", text(cols[3]), cols[4]),
            _ => format!("ERR {} {} {}", cols[3], text(cols[4]), text(cols[5])),
        };
        if got != expected {
            failures.push(format!("{} {input:?}\n  expected {expected}\n  got      {got}", cols[0]));
        }
        count += 1;
    }
    assert!(count > 1000, "only {count} cases");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures[..failures.len().min(30)].join("\n"));
}

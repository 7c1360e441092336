//! Tests of the types module against data written by PostgreSQL 15.18.
//!
//! Fixtures live in `tests/fixtures/` (or `tests/fixtures/postgres/`) of the crate:
//! `types.text` and `types.bin` (copied from `shared/fixtures/postgres`), and
//! `pg15_input_cases.tsv`, inputs evaluated by a real PostgreSQL 15 server (see
//! `pg15_input_cases.sql`).

mod edges;
mod errors;
mod fixtures;
mod floats;
mod names;
mod numeric;
mod oracle;

use super::{SqlType, TypeId};

/// Reads a fixture file from the crate's `tests/fixtures` directory, or from
/// `tests/fixtures/postgres` where heapstore keeps the files PostgreSQL wrote.
fn fixture(name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let candidates = [dir.join(name), dir.join("postgres").join(name)];
    candidates.iter().find_map(|p| std::fs::read(p).ok()).unwrap_or_else(|| panic!("fixture {name} not found in {}", dir.display()))
}

/// The columns of the `types` fixture table (see `types.sql`).
fn fixture_columns() -> [SqlType; 12] {
    [
        SqlType::new(TypeId::Int4),
        SqlType::new(TypeId::Bool),
        SqlType::new(TypeId::Int2),
        SqlType::new(TypeId::Int8),
        SqlType::new(TypeId::Float4),
        SqlType::new(TypeId::Float8),
        SqlType::new(TypeId::Text),
        SqlType::with_typmod(TypeId::Varchar, 16),
        SqlType::with_typmod(TypeId::Bpchar, 12),
        SqlType::new(TypeId::Bytea),
        SqlType::new(TypeId::Date),
        SqlType::new(TypeId::Timestamp),
    ]
}

/// Text input then text output.
fn roundtrip_text(ty: SqlType, s: &str) -> String {
    let mut stored = Vec::new();
    ty.input_text(s, &mut stored).unwrap_or_else(|e| panic!("{} input {s:?}: {e}", ty.name()));
    output(ty, &stored)
}

fn output(ty: SqlType, stored: &[u8]) -> String {
    let mut out = Vec::new();
    ty.output_text(stored, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| panic!("output is not UTF-8: {e}"))
}

/// Text input that must fail; returns (SQLSTATE, message).
fn input_error(ty: SqlType, s: &str) -> (&'static str, String) {
    let mut stored = Vec::new();
    match ty.input_text(s, &mut stored) {
        Ok(()) => panic!("{} input {s:?} unexpectedly gave {:?}", ty.name(), output(ty, &stored)),
        Err(e) => (e.code, e.message.clone()),
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or_else(|e| panic!("{s}: {e}"))).collect()
}

//! The statements the torture runs: SQL text and COPY input in text, csv and binary, good and
//! bad, from the seeded generator.

use super::model::Row;
use crate::rng::Rng;

/// A COPY input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Binary,
}

impl Format {
    pub fn pick(rng: &mut Rng) -> Format {
        match rng.below(3) {
            0 => Format::Text,
            1 => Format::Csv,
            _ => Format::Binary,
        }
    }
}

/// `COPY table FROM STDIN` in `format`, with `WITH (PARALLEL n)` if `parallel` says so.
pub fn copy_sql(table: &str, format: Format, parallel: Option<u64>) -> String {
    let mut opts: Vec<String> = Vec::new();
    match format {
        Format::Text => {}
        Format::Csv => opts.push("FORMAT csv".into()),
        Format::Binary => opts.push("FORMAT binary".into()),
    }
    if let Some(n) = parallel {
        opts.push(format!("PARALLEL {n}"));
    }
    match opts.is_empty() {
        true => format!("COPY {table} FROM STDIN"),
        false => format!("COPY {table} FROM STDIN WITH ({})", opts.join(", ")),
    }
}

/// A row value: mostly short text, sometimes long enough to be stored out of line (TOAST).
pub fn random_row(rng: &mut Rng) -> Row {
    let len = match rng.below(100) {
        0..=1 => 2500 + rng.below(6000) as usize,
        2..=9 => 200 + rng.below(1300) as usize,
        _ => rng.below(80) as usize,
    };
    let mut pad = String::with_capacity(len);
    for _ in 0..len {
        pad.push(char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[rng.below(36) as usize]));
    }
    Row { v: rng.below(1_000_000) as i64 - 500_000, pad }
}

/// COPY input for `rows` (id, v, pad). With `bad_at`, that row is malformed so that the COPY
/// fails there (and must leave nothing behind).
pub fn copy_input(format: Format, rows: &[(i64, Row)], bad_at: Option<usize>) -> Vec<u8> {
    let mut out = Vec::new();
    match format {
        Format::Text | Format::Csv => {
            for (i, (id, r)) in rows.iter().enumerate() {
                let v = if bad_at == Some(i) { "not-a-number".to_string() } else { r.v.to_string() };
                // In csv an unquoted empty field is NULL: the text is quoted.
                let line = if format == Format::Text { format!("{id}\t{v}\t{}\n", r.pad) } else { format!("{id},{v},\"{}\"\n", r.pad) };
                out.extend_from_slice(line.as_bytes());
            }
        }
        Format::Binary => {
            out.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
            out.extend_from_slice(&0u32.to_be_bytes());
            out.extend_from_slice(&0u32.to_be_bytes());
            for (i, (id, r)) in rows.iter().enumerate() {
                out.extend_from_slice(&3i16.to_be_bytes());
                out.extend_from_slice(&8i32.to_be_bytes());
                out.extend_from_slice(&id.to_be_bytes());
                if bad_at == Some(i) {
                    // A bigint field of the wrong length.
                    out.extend_from_slice(&3i32.to_be_bytes());
                    out.extend_from_slice(&[1, 2, 3]);
                } else {
                    out.extend_from_slice(&8i32.to_be_bytes());
                    out.extend_from_slice(&r.v.to_be_bytes());
                }
                out.extend_from_slice(&(r.pad.len() as i32).to_be_bytes());
                out.extend_from_slice(r.pad.as_bytes());
            }
            out.extend_from_slice(&(-1i16).to_be_bytes());
        }
    }
    out
}

/// `CREATE TABLE` for a torture table.
pub fn create_table(name: &str, pk: bool) -> String {
    if pk {
        format!("CREATE TABLE {name} (id bigint PRIMARY KEY, v bigint, pad text)")
    } else {
        format!("CREATE TABLE {name} (id bigint NOT NULL, v bigint, pad text)")
    }
}

pub fn insert(table: &str, id: i64, r: &Row) -> String {
    format!("INSERT INTO {table} VALUES ({id}, {}, '{}')", r.v, r.pad)
}

pub fn update(table: &str, id: i64, r: &Row) -> String {
    format!("UPDATE {table} SET v = {}, pad = '{}' WHERE id = {id}", r.v, r.pad)
}

pub fn delete(table: &str, id: i64) -> String {
    format!("DELETE FROM {table} WHERE id = {id}")
}

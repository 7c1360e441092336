//! Shared helpers for the integration tests.
#![allow(dead_code)]

use heapstore::sql::CopyIo;
use heapstore::{Database, Session};
use std::path::{Path, PathBuf};

pub const TYPES_COLUMNS: &str = include_str!("../fixtures/postgres/types.columns");

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres").join(name)
}

/// A fresh data directory inside a temp dir (kept alive by the returned guard).
pub fn new_db(settings: &[&str]) -> (tempfile::TempDir, PathBuf, Database) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("data");
    Database::init(&dir, &[]).unwrap();
    let set: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
    let db = Database::open(&dir, &set).unwrap();
    (t, dir, db)
}

pub fn copy_in(s: &mut Session, sql: &str, data: &[u8]) -> heapstore::Result<Vec<heapstore::QueryResult>> {
    let mut r: &[u8] = data;
    s.execute_with_io(sql, &mut CopyIo { stdin: Some(&mut r), stdout: None, rows: None })
}

pub fn copy_out(s: &mut Session, sql: &str) -> Vec<u8> {
    let mut out = Vec::new();
    s.execute_with_io(sql, &mut CopyIo { stdin: None, stdout: Some(&mut out), rows: None }).unwrap();
    out
}

pub fn count(s: &mut Session, table: &str) -> u64 {
    let r = s.execute(&format!("SELECT count(*) FROM {table}")).unwrap();
    r[0].rows[0][0].as_deref().unwrap().parse().unwrap()
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_heapstore")
}

/// The rows of the last result of `sql`, each as its columns joined by `|` (NULL for NULL).
pub fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.last()
        .unwrap()
        .rows
        .iter()
        .map(|r| r.iter().map(|v| v.clone().unwrap_or_else(|| "NULL".into())).collect::<Vec<_>>().join("|"))
        .collect()
}

/// The command tag of the last result of `sql`, which must succeed.
pub fn ok(s: &mut Session, sql: &str) -> String {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).last().unwrap().tag.clone()
}

/// The error of `sql`, which must fail.
pub fn err(s: &mut Session, sql: &str) -> heapstore::PgError {
    match s.execute(sql) {
        Ok(_) => panic!("{sql}: succeeded"),
        Err(e) => e,
    }
}

/// `sql::index::check_table`: each index of `table` agrees with its heap; the rows the
/// snapshot sees.
pub fn check(s: &mut Session, table: &str) -> u64 {
    heapstore::sql::index::check_table(s, table).unwrap().unwrap_or_else(|e| panic!("{e}"))
}

/// `EXPLAIN (COSTS OFF) sql`, its lines joined.
pub fn plan(s: &mut Session, sql: &str) -> String {
    rows(s, &format!("EXPLAIN (COSTS OFF) {sql}")).join("\n")
}

//! Temporary files for sorts, hash aggregates and hash joins that outgrow `work_mem`.
//!
//! Files live in the data directory's `pgsql_tmp/` and go through the storage layer's file
//! seam (`storage::vfs`), like every other file of the engine: the simulated disk sees them,
//! and `temp_file_limit` (PostgreSQL's name and meaning: kB of temporary file space per
//! session, -1 unlimited) is enforced as they grow. They are never synced: their contents do
//! not outlive the statement, and `Database::open` removes any left by a crash.
//!
//! Rows are written as a length-prefixed sequence of tagged values (`encode_row`); a row
//! read back is the row written.
//!
//! Invariants:
//! 1. A temporary file is removed when its handle drops (statement end, error, or panic).
//! 2. The bytes a session holds in temporary files never exceed `temp_file_limit`; the write
//!    that would exceed it fails with 53400 and writes nothing.

use crate::error::{PgError, Result};
use crate::storage::vfs::{OpenMode, Vfs, VfsFile};
use crate::types::Value;
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The directory of temporary files inside the data directory.
pub const TMP_DIR: &str = "pgsql_tmp";

static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

/// Where a statement's temporary files go and how much they may hold.
pub struct TempSpace {
    pub vfs: Arc<dyn Vfs>,
    pub dir: PathBuf,
    /// `temp_file_limit` in bytes (None: unlimited).
    pub limit: Option<u64>,
    /// Bytes held in this statement's temporary files now.
    pub used: Cell<u64>,
    /// Most bytes ever written to temporary files by this statement (EXPLAIN's Disk).
    pub written: Cell<u64>,
}

impl TempSpace {
    pub fn new(vfs: Arc<dyn Vfs>, data_dir: &std::path::Path, limit_kb: i64) -> TempSpace {
        TempSpace {
            vfs,
            dir: data_dir.join(TMP_DIR),
            limit: (limit_kb >= 0).then(|| limit_kb as u64 * 1024),
            used: Cell::new(0),
            written: Cell::new(0),
        }
    }

    /// A new empty temporary file.
    pub fn create(&self) -> Result<TempFile<'_>> {
        self.vfs.create_dir_all(&self.dir).map_err(|e| PgError::io("create temporary file directory", &self.dir, e))?;
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("hstmp{}.{n}", std::process::id()));
        let file = self.vfs.open(&path, OpenMode::CREATE_NEW).map_err(|e| PgError::io("create temporary file", &path, e))?;
        Ok(TempFile { space: self, file, path, len: 0, buf: Vec::with_capacity(BUF) })
    }
}

const BUF: usize = 64 << 10;

/// A temporary file being written, then read back in order.
pub struct TempFile<'a> {
    space: &'a TempSpace,
    file: Arc<dyn VfsFile>,
    path: PathBuf,
    len: u64,
    buf: Vec<u8>,
}

impl TempFile<'_> {
    /// Appends one row.
    pub fn write_row(&mut self, row: &[Value]) -> Result<()> {
        encode_row(row, &mut self.buf);
        if self.buf.len() >= BUF {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let n = self.buf.len() as u64;
        let used = self.space.used.get() + n;
        if let Some(limit) = self.space.limit {
            if used > limit {
                return Err(PgError::new("53400", format!("temporary file size exceeds temp_file_limit ({}kB)", limit / 1024)));
            }
        }
        self.file.write_all_at(&[&self.buf], self.len).map_err(|e| PgError::io("write temporary file", &self.path, e))?;
        self.len += n;
        self.space.used.set(used);
        self.space.written.set(self.space.written.get() + n);
        self.buf.clear();
        Ok(())
    }

    /// Finishes writing; the rows can now be read back in the order written.
    pub fn reader(mut self) -> Result<TempReader<Self>> {
        self.flush()?;
        Ok(TempReader { f: self, pos: 0, buf: Vec::new(), at: 0 })
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len + self.buf.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        let _ = self.space.vfs.remove_file(&self.path);
        self.space.used.set(self.space.used.get().saturating_sub(self.len));
    }
}

/// Reads a finished temporary file's rows in order.
pub struct TempReader<F> {
    f: F,
    pos: u64,
    buf: Vec<u8>,
    at: usize,
}

impl TempReader<TempFile<'_>> {
    /// The next row, or None at the end.
    pub fn next_row(&mut self) -> Result<Option<Vec<Value>>> {
        if self.at + 4 > self.buf.len() && !self.fill(4)? {
            return Ok(None);
        }
        let n = u32::from_le_bytes(self.buf[self.at..self.at + 4].try_into().expect("4 bytes")) as usize;
        if self.at + 4 + n > self.buf.len() && !self.fill(4 + n)? {
            return Err(PgError::internal("temporary file ends inside a row"));
        }
        let row = decode_row(&self.buf[self.at + 4..self.at + 4 + n])?;
        self.at += 4 + n;
        Ok(Some(row))
    }

    /// Makes at least `need` bytes available from `at`; false at a clean end of file.
    fn fill(&mut self, need: usize) -> Result<bool> {
        self.buf.drain(..self.at);
        self.at = 0;
        while self.buf.len() < need {
            let left = self.f.len - self.pos;
            if left == 0 {
                return Ok(false);
            }
            let take = left.min(BUF.max(need) as u64) as usize;
            let old = self.buf.len();
            self.buf.resize(old + take, 0);
            self.f.file.read_exact_at(&mut self.buf[old..], self.pos).map_err(|e| PgError::io("read temporary file", &self.f.path, e))?;
            self.pos += take as u64;
        }
        Ok(true)
    }
}

/// Appends `row` as: u32 length, then each value as a tag byte and its payload.
pub fn encode_row(row: &[Value], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    for v in row {
        encode_value(v, out);
    }
    let n = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&n.to_le_bytes());
}

/// Appends one value: a tag byte and its payload.
fn encode_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        // A row kind by its registry number (temporary files live in this process only),
        // then its fields.
        Value::Record(r) if matches!(r.ty.id, crate::types::TypeId::Record(k) if k.registered_id().is_some()) => {
            let crate::types::TypeId::Record(k) = r.ty.id else { unreachable!("a record") };
            out.push(15);
            out.extend_from_slice(&k.registered_id().unwrap_or(0).to_le_bytes());
            out.extend_from_slice(&(r.fields.len() as u32).to_le_bytes());
            for f in &r.fields {
                encode_value(f, out);
            }
        }
        Value::Null => out.push(0),
        Value::Bool(b) => out.extend_from_slice(&[1, u8::from(*b)]),
        Value::Int2(x) => {
            out.push(2);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::Int4(x) => {
            out.push(3);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::Int8(x) => {
            out.push(4);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::Float4(x) => {
            out.push(5);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        Value::Float8(x) => {
            out.push(6);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        Value::Text(s) => {
            out.push(7);
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Value::Bytea(b) => {
            out.push(8);
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
        Value::Date(d) => {
            out.push(9);
            out.extend_from_slice(&d.to_le_bytes());
        }
        Value::Timestamp(t) => {
            out.push(10);
            out.extend_from_slice(&t.to_le_bytes());
        }
        Value::Uuid(u) => {
            out.push(12);
            out.extend_from_slice(u);
        }
        Value::Interval(i) => {
            out.push(13);
            i.encode(out);
        }
        Value::Jsonb(j) => {
            out.push(14);
            out.extend_from_slice(&(j.len() as u32).to_le_bytes());
            out.extend_from_slice(j.as_bytes());
        }
        #[allow(unreachable_patterns)]
        other => {
            // Types with a storage form: their type and stored bytes.
            let ty = crate::sql::expr::value_type(other).expect("not NULL");
            let mut stored = Vec::new();
            other.encode(&mut stored);
            out.push(11);
            let tyb = serde_json::to_vec(&ty).expect("a type serializes");
            out.extend_from_slice(&(tyb.len() as u32).to_le_bytes());
            out.extend_from_slice(&tyb);
            out.extend_from_slice(&(stored.len() as u32).to_le_bytes());
            out.extend_from_slice(&stored);
        }
    }
}

fn corrupt() -> PgError {
    PgError::internal("corrupt row in a temporary file")
}

fn take<'b>(b: &mut &'b [u8], n: usize) -> Result<&'b [u8]> {
    if b.len() < n {
        return Err(corrupt());
    }
    let (x, rest) = b.split_at(n);
    *b = rest;
    Ok(x)
}

fn arr<const N: usize>(b: &mut &[u8]) -> Result<[u8; N]> {
    Ok(take(b, N)?.try_into().expect("N bytes"))
}

/// Reads a row written by [`encode_row`] (without its length prefix).
pub fn decode_row(mut b: &[u8]) -> Result<Vec<Value>> {
    let mut row = Vec::new();
    while !b.is_empty() {
        row.push(decode_value(&mut b)?);
    }
    Ok(row)
}

/// Reads one value written by [`encode_value`].
fn decode_value(b: &mut &[u8]) -> Result<Value> {
    let tag = take(b, 1)?[0];
    Ok(match tag {
        15 => {
            let id = u32::from_le_bytes(arr(b)?);
            let kind = crate::types::RecordKind::by_registered_id(id).ok_or_else(corrupt)?;
            let n = u32::from_le_bytes(arr(b)?) as usize;
            let mut fields = Vec::with_capacity(n.min(crate::types::record::MAX_FIELDS));
            for _ in 0..n {
                fields.push(decode_value(b)?);
            }
            let ty = crate::types::SqlType::new(crate::types::TypeId::Record(kind));
            Value::Record(Box::new(crate::types::Record { ty, fields }))
        }
        0 => Value::Null,
        1 => Value::Bool(take(b, 1)?[0] != 0),
        2 => Value::Int2(i16::from_le_bytes(arr(b)?)),
        3 => Value::Int4(i32::from_le_bytes(arr(b)?)),
        4 => Value::Int8(i64::from_le_bytes(arr(b)?)),
        5 => Value::Float4(f32::from_bits(u32::from_le_bytes(arr(b)?))),
        6 => Value::Float8(f64::from_bits(u64::from_le_bytes(arr(b)?))),
        7 => {
            let n = u32::from_le_bytes(arr(b)?) as usize;
            Value::Text(String::from_utf8(take(b, n)?.to_vec()).map_err(|_| corrupt())?)
        }
        8 => {
            let n = u32::from_le_bytes(arr(b)?) as usize;
            Value::Bytea(take(b, n)?.to_vec())
        }
        9 => Value::Date(i32::from_le_bytes(arr(b)?)),
        10 => Value::Timestamp(i64::from_le_bytes(arr(b)?)),
        11 => {
            let n = u32::from_le_bytes(arr(b)?) as usize;
            let ty: crate::types::SqlType = serde_json::from_slice(take(b, n)?).map_err(|_| corrupt())?;
            let n = u32::from_le_bytes(arr(b)?) as usize;
            Value::decode(&ty, take(b, n)?)
        }
        12 => Value::Uuid(arr(b)?),
        13 => Value::Interval(crate::types::Interval::decode(take(b, crate::types::interval::INTERVAL_LEN)?)),
        14 => {
            let n = u32::from_le_bytes(arr(b)?) as usize;
            Value::Jsonb(String::from_utf8(take(b, n)?.to_vec()).map_err(|_| corrupt())?)
        }
        _ => return Err(corrupt()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let space = TempSpace::new(crate::storage::vfs::real(), dir.path(), -1);
        let rows = vec![
            vec![Value::Null, Value::Bool(true), Value::Int2(-2), Value::Int4(7), Value::Int8(i64::MIN)],
            vec![Value::Float4(-0.0), Value::Float8(f64::NAN), Value::Text("héllo".into()), Value::Bytea(vec![0, 255])],
            vec![Value::Date(-5), Value::Timestamp(123_456_789), Value::Text(String::new())],
            vec![
                Value::Uuid([7; 16]),
                Value::Jsonb("{\"a\": [1, 2.0]}".into()),
                Value::Null,
                Value::Interval(crate::types::Interval { months: -1, days: 2, micros: 3 }),
            ],
        ];
        let mut f = space.create().unwrap();
        for _ in 0..5000 {
            for r in &rows {
                f.write_row(r).unwrap();
            }
        }
        let mut r = f.reader().unwrap();
        for _ in 0..5000 {
            for want in &rows {
                let got = r.next_row().unwrap().unwrap();
                assert_eq!(format!("{got:?}"), format!("{want:?}"));
            }
        }
        assert!(r.next_row().unwrap().is_none());
        drop(r);
        assert_eq!(space.used.get(), 0, "files are removed and their space returned");
        assert!(space.vfs.read_dir(&space.dir).unwrap().is_empty());
    }

    #[test]
    fn temp_file_limit_is_enforced() {
        let dir = tempfile::tempdir().unwrap();
        let space = TempSpace::new(crate::storage::vfs::real(), dir.path(), 64);
        let mut f = space.create().unwrap();
        let row = vec![Value::Text("x".repeat(1000))];
        let e = (0..1000).try_for_each(|_| f.write_row(&row)).unwrap_err();
        assert_eq!(e.code, "53400");
        assert!(space.used.get() <= 64 * 1024);
    }
}

/// The rows a suspended portal has yet to send (the extended protocol's Execute with a row
/// limit), as PostgreSQL's tuplestore holds them: in memory up to `work_mem`, then appended
/// to a temporary file (counted against `temp_file_limit`), and read back in the order
/// pushed. All rows are pushed before the first is taken.
pub struct HeldRows {
    mem: std::collections::VecDeque<Vec<Option<String>>>,
    mem_bytes: usize,
    max_mem: usize,
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    limit: Option<u64>,
    file: Option<HeldFile>,
    len: u64,
}

struct HeldFile {
    file: Arc<dyn VfsFile>,
    path: PathBuf,
    /// Bytes in the file (written) and not yet written (`buf`).
    written: u64,
    buf: Vec<u8>,
    /// Where reading has got to.
    pos: u64,
    rbuf: Vec<u8>,
    at: usize,
}

impl HeldRows {
    pub fn new(vfs: Arc<dyn Vfs>, data_dir: &std::path::Path, work_mem: usize, temp_file_limit_kb: i64) -> HeldRows {
        HeldRows {
            mem: Default::default(),
            mem_bytes: 0,
            max_mem: work_mem,
            vfs,
            dir: data_dir.join(TMP_DIR),
            limit: (temp_file_limit_kb >= 0).then(|| temp_file_limit_kb as u64 * 1024),
            file: None,
            len: 0,
        }
    }

    /// How many rows are held.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Holds one more row (after every row held so far).
    pub fn push(&mut self, row: &[Option<String>]) -> Result<()> {
        self.len += 1;
        let size: usize = row.iter().map(|v| v.as_ref().map_or(8, |s| s.len() + 32)).sum::<usize>() + 32;
        if self.file.is_none() && self.mem_bytes + size <= self.max_mem {
            self.mem_bytes += size;
            self.mem.push_back(row.to_vec());
            return Ok(());
        }
        if self.file.is_none() {
            self.vfs.create_dir_all(&self.dir).map_err(|e| PgError::io("create temporary file directory", &self.dir, e))?;
            let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
            let path = self.dir.join(format!("hstmp{}.{n}", std::process::id()));
            let file = self.vfs.open(&path, OpenMode::CREATE_NEW).map_err(|e| PgError::io("create temporary file", &path, e))?;
            self.file = Some(HeldFile { file, path, written: 0, buf: Vec::with_capacity(BUF), pos: 0, rbuf: Vec::new(), at: 0 });
        }
        let f = self.file.as_mut().expect("made above");
        let vals: Vec<Value> = row.iter().map(|v| v.as_ref().map_or(Value::Null, |s| Value::Text(s.clone()))).collect();
        encode_row(&vals, &mut f.buf);
        if f.buf.len() >= BUF {
            Self::flush(f, self.limit)?;
        }
        Ok(())
    }

    fn flush(f: &mut HeldFile, limit: Option<u64>) -> Result<()> {
        if f.buf.is_empty() {
            return Ok(());
        }
        let n = f.buf.len() as u64;
        if limit.is_some_and(|l| f.written + n > l) {
            return Err(PgError::new("53400", format!("temporary file size exceeds temp_file_limit ({}kB)", limit.unwrap_or(0) / 1024)));
        }
        f.file.write_all_at(&[&f.buf], f.written).map_err(|e| PgError::io("write temporary file", &f.path, e))?;
        f.written += n;
        f.buf.clear();
        Ok(())
    }

    /// Writes what is buffered for the temporary file, so that its size is checked against
    /// `temp_file_limit` now (a cursor's DECLARE), not at a later push or read.
    pub fn flush_file(&mut self) -> Result<()> {
        match self.file.as_mut() {
            Some(f) => Self::flush(f, self.limit),
            None => Ok(()),
        }
    }

    /// The next held row, in the order pushed.
    pub fn pop(&mut self) -> Result<Option<Vec<Option<String>>>> {
        if let Some(r) = self.mem.pop_front() {
            self.len -= 1;
            return Ok(Some(r));
        }
        let Some(f) = self.file.as_mut() else { return Ok(None) };
        Self::flush(f, self.limit)?;
        let fill = |f: &mut HeldFile, need: usize| -> Result<bool> {
            f.rbuf.drain(..f.at);
            f.at = 0;
            while f.rbuf.len() < need {
                let left = f.written - f.pos;
                if left == 0 {
                    return Ok(false);
                }
                let take = left.min(BUF.max(need) as u64) as usize;
                let old = f.rbuf.len();
                f.rbuf.resize(old + take, 0);
                f.file.read_exact_at(&mut f.rbuf[old..], f.pos).map_err(|e| PgError::io("read temporary file", &f.path, e))?;
                f.pos += take as u64;
            }
            Ok(true)
        };
        if f.at + 4 > f.rbuf.len() && !fill(f, 4)? {
            return Ok(None);
        }
        let n = u32::from_le_bytes(f.rbuf[f.at..f.at + 4].try_into().expect("4 bytes")) as usize;
        if f.at + 4 + n > f.rbuf.len() && !fill(f, 4 + n)? {
            return Err(PgError::internal("temporary file ends inside a row"));
        }
        let row = decode_row(&f.rbuf[f.at + 4..f.at + 4 + n])?;
        f.at += 4 + n;
        self.len -= 1;
        Ok(Some(
            row.into_iter()
                .map(|v| match v {
                    Value::Text(s) => Some(s),
                    _ => None,
                })
                .collect(),
        ))
    }
}

impl Drop for HeldRows {
    fn drop(&mut self) {
        if let Some(f) = &self.file {
            let _ = self.vfs.remove_file(&f.path);
        }
    }
}

#[cfg(test)]
mod held_tests {
    use super::*;

    #[test]
    fn held_rows_come_back_in_order_across_memory_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = HeldRows::new(crate::storage::vfs::real(), dir.path(), 4096, -1);
        for i in 0..10_000 {
            h.push(&[Some(format!("row {i}")), None]).unwrap();
        }
        assert_eq!(h.len(), 10_000);
        assert!(h.file.is_some(), "past work_mem the rows go to a file");
        for i in 0..10_000 {
            assert_eq!(h.pop().unwrap(), Some(vec![Some(format!("row {i}")), None]));
        }
        assert_eq!(h.pop().unwrap(), None);
        assert!(h.is_empty());
        let path = h.file.as_ref().unwrap().path.clone();
        drop(h);
        assert!(!path.exists(), "the file goes with the rows");
    }

    #[test]
    fn held_rows_respect_temp_file_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = HeldRows::new(crate::storage::vfs::real(), dir.path(), 1024, 1);
        let r = (0..10_000).try_for_each(|i| h.push(&[Some(format!("row {i} {}", "x".repeat(50)))]));
        assert_eq!(r.unwrap_err().code, "53400");
    }
}

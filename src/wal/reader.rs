//! Reading WAL back, in order, across segment files, and finding where valid WAL ends.
//!
//! The reader stops (returns `None`) at the first position where
//!
//! - the segment file is missing or shorter than the record (it runs past the written data),
//! - the length is implausible (below the smallest record, above [`MAX_RECORD_LEN`]; zeros from
//!   preallocation read as length 0),
//! - the lsn field is not the position it was read at (old contents of a recycled segment, or a
//!   record boundary that moved), or
//! - the CRC does not match (a torn write, garbage).
//!
//! That position is the end of valid WAL ([`WalReader::end_lsn`]): recovery replays up to it and
//! the engine opens the WAL there ([`super::Wal::open`]). [`WalReader::end_reason`] says why it
//! stopped, in PostgreSQL's words, for the log line. A record that passes the CRC but is
//! malformed inside is not an end but corruption (an error, XX001): the CRC says we wrote it.

use crate::storage::vfs::{OpenMode, Vfs, VfsFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{sqlstate, PgError, Result};

use super::record::{self, align_len, record_crc, DecodedRecord, HEADER_LEN, MAX_RECORD_LEN, MIN_RECORD_LEN, RECORD_ALIGN};
use super::segment::{segment_name, WAL_DIR};
use super::{lsn_str, Lsn};

/// Bytes read from a segment file at a time.
const READ_CHUNK: usize = 1 << 20;

/// Reads records in order from a position. Not shared: one per recovery.
pub struct WalReader {
    wal_dir: PathBuf,
    seg_size: u64,
    /// Position of the next record.
    pos: Lsn,
    /// The open segment: number, file, length.
    seg: Option<(u64, Arc<dyn VfsFile>, u64)>,
    vfs: Arc<dyn Vfs>,
    /// A window of WAL positions `chunk_start .. chunk_start + chunk.len()` read from a file.
    chunk: Vec<u8>,
    chunk_start: Lsn,
    /// The current record.
    rec: Vec<u8>,
    /// Why reading stopped, once it has.
    end: Option<String>,
}

impl WalReader {
    /// A reader of `dir/pg_wal` (`dir` is the data directory, as in [`super::WalSettings`])
    /// that starts at `start`, which must be a record boundary.
    pub fn new(dir: impl AsRef<Path>, segment_size: u64, start: Lsn) -> Result<WalReader> {
        Self::with_vfs(crate::storage::vfs::real(), dir, segment_size, start)
    }

    /// As [`WalReader::new`], on the file system `vfs`.
    pub fn with_vfs(vfs: Arc<dyn Vfs>, dir: impl AsRef<Path>, segment_size: u64, start: Lsn) -> Result<WalReader> {
        if !segment_size.is_power_of_two() || start % RECORD_ALIGN != 0 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("invalid WAL reader start {} or segment size {segment_size}", lsn_str(start)),
            ));
        }
        Ok(WalReader {
            wal_dir: dir.as_ref().join(WAL_DIR),
            seg_size: segment_size,
            pos: start,
            seg: None,
            vfs,
            chunk: Vec::with_capacity(READ_CHUNK),
            chunk_start: 0,
            rec: Vec::new(),
            end: None,
        })
    }

    /// The position of the next record; once `next` returned `None`, the end of valid WAL.
    pub fn end_lsn(&self) -> Lsn {
        self.pos
    }

    /// Why reading stopped (None while it has not).
    pub fn end_reason(&self) -> Option<&str> {
        self.end.as_deref()
    }

    /// The next record: its position and its bytes (`total_len` of them, CRC checked).
    /// `Ok(None)` at the end of valid WAL; errors are I/O errors other than a missing or short
    /// file, and records that pass the CRC but are malformed.
    // Not `Iterator::next`: the record borrows the reader's buffer (a lending iterator).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<(Lsn, &[u8])>> {
        match self.advance()? {
            Some(lsn) => Ok(Some((lsn, &self.rec))),
            None => Ok(None),
        }
    }

    /// Like [`WalReader::next`], decoded (without checking the CRC twice).
    pub fn next_record(&mut self) -> Result<Option<DecodedRecord<'_>>> {
        match self.advance()? {
            Some(_) => Ok(Some(record::parse(&self.rec)?)),
            None => Ok(None),
        }
    }

    fn stop(&mut self, why: String) -> Result<Option<Lsn>> {
        self.end = Some(why);
        Ok(None)
    }

    fn advance(&mut self) -> Result<Option<Lsn>> {
        if self.end.is_some() {
            return Ok(None);
        }
        let pos = self.pos;
        let at = lsn_str(pos);
        self.rec.clear();
        if !self.read(pos, HEADER_LEN)? {
            return self.stop(format!("no record at {at}: end of written WAL"));
        }
        let (len, lsn) = record::header_len_and_lsn(&self.rec);
        if !(MIN_RECORD_LEN..=MAX_RECORD_LEN).contains(&len) {
            return self.stop(format!("invalid record length at {at}: expected at least {MIN_RECORD_LEN}, got {len}"));
        }
        if lsn != pos {
            return self.stop(format!("record at {at} has lsn field {}: not a record of this position", lsn_str(lsn)));
        }
        if !self.read(pos + HEADER_LEN as u64, len - HEADER_LEN)? {
            return self.stop(format!("record at {at} of {len} bytes runs past the end of written WAL"));
        }
        let stored = u32::from_le_bytes(self.rec[4..8].try_into().expect("4 bytes"));
        if stored != record_crc(&self.rec) {
            return self.stop(format!("incorrect checksum in record at {at}"));
        }
        // Passed the CRC, so we wrote it: a structural error is corruption, not the end.
        record::parse(&self.rec).map_err(|e| e.with_context(format!("WAL record at {at}")))?;
        self.pos = pos + align_len(len as u64);
        Ok(Some(pos))
    }

    /// Appends WAL bytes `pos .. pos + n` to `self.rec`; false if they are not all there.
    fn read(&mut self, mut pos: Lsn, mut n: usize) -> Result<bool> {
        while n > 0 {
            let chunk_end = self.chunk_start + self.chunk.len() as u64;
            if pos >= self.chunk_start && pos < chunk_end {
                let off = (pos - self.chunk_start) as usize;
                let take = n.min(self.chunk.len() - off);
                self.rec.extend_from_slice(&self.chunk[off..off + take]);
                pos += take as u64;
                n -= take;
                continue;
            }
            if !self.load_chunk(pos)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Reads up to READ_CHUNK bytes of WAL from `pos` (within its segment) into the window.
    fn load_chunk(&mut self, pos: Lsn) -> Result<bool> {
        let segno = pos / self.seg_size;
        if self.seg.as_ref().is_none_or(|(n, _, _)| *n != segno) {
            self.seg = None;
            let name = segment_name(segno, self.seg_size);
            let rel_path = Path::new(WAL_DIR).join(&name);
            let file = match self.vfs.open(&self.wal_dir.join(&name), OpenMode::READ) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
                Err(e) => return Err(PgError::io("open", &rel_path, e)),
            };
            let len = file.len().map_err(|e| PgError::io("stat", &rel_path, e))?.min(self.seg_size);
            self.seg = Some((segno, file, len));
        }
        let (_, file, len) = self.seg.as_ref().expect("just opened");
        let off = pos % self.seg_size;
        if off >= *len {
            return Ok(false);
        }
        let n = ((*len - off) as usize).min(READ_CHUNK);
        self.chunk.resize(n, 0);
        let mut got = 0;
        while got < n {
            match file.readv_at(&mut [&mut self.chunk[got..]], off + got as u64) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(PgError::io("read", &Path::new(WAL_DIR).join(segment_name(segno, self.seg_size)), e)),
            }
        }
        self.chunk.truncate(got);
        self.chunk_start = pos;
        Ok(got > 0)
    }
}

//! The refillable input buffer under [`CopyReader`](super::CopyReader), with PostgreSQL's
//! chunked encoding verification for text and CSV (`CopyConvertBuf`).
//!
//! Invariants: `start <= verified <= end <= buf.len()`; `buf[start..end]` holds the bytes
//! read but not consumed; `buf[start..verified]` is valid UTF-8 without NUL bytes and ends
//! on a character boundary. The buffer starts at 64 kB and only grows to hold the longest
//! line or tuple seen (never past PostgreSQL's 1 GB `MaxAllocSize`).

use std::io::{self, Read};

use super::invalid_encoding;
use crate::error::{sqlstate, PgError, Result};

/// Initial size of the read buffer (PostgreSQL's RAW_BUF_SIZE).
const INPUT_BUF_SIZE: usize = 64 * 1024;

/// PostgreSQL's `MaxAllocSize`: no line, tuple or field may reach it.
pub(super) const MAX_ALLOC_SIZE: usize = 0x3fff_ffff;

/// Longest possible UTF-8 character; a failed check looks this far ahead.
const MAX_CHAR_LEN: usize = 4;

pub(super) struct Input<R> {
    src: R,
    buf: Vec<u8>,
    start: usize,
    verified: usize,
    end: usize,
    eof: bool,
    /// The bytes at `verified` are not valid UTF-8 (or are a NUL).
    bad: bool,
}

impl<R: Read> Input<R> {
    pub(super) fn new(src: R) -> Self {
        Input { src, buf: vec![0; INPUT_BUF_SIZE], start: 0, verified: 0, end: 0, eof: false, bad: false }
    }

    /// All unconsumed bytes (binary format).
    #[inline]
    pub(super) fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// The unconsumed bytes known to be valid UTF-8 (text and CSV formats).
    #[inline]
    pub(super) fn verified(&self) -> &[u8] {
        &self.buf[self.start..self.verified]
    }

    /// Drops `n` bytes from the front.
    #[inline]
    pub(super) fn consume(&mut self, n: usize) {
        debug_assert!(self.start + n <= self.end);
        self.start += n;
        // Binary input is never verified; keep `start <= verified` all the same.
        self.verified = self.verified.max(self.start);
        if self.start == self.end {
            self.start = 0;
            self.verified = 0;
            self.end = 0;
        }
    }

    /// Makes at least `n` unconsumed bytes available (binary format); false if the data
    /// ends first.
    pub(super) fn need(&mut self, n: usize) -> Result<bool> {
        while self.end - self.start < n {
            if !self.fill(n)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Extends the verified bytes (text and CSV formats). Ok(false) at a clean end of
    /// data; the encoding error once the scan reaches an invalid or truncated character.
    pub(super) fn more_verified(&mut self) -> Result<bool> {
        // Counted from `start`: filling may move the bytes to the front of the buffer.
        let before = self.verified - self.start;
        while self.verified - self.start == before {
            if self.bad {
                return Err(self.encoding_error());
            }
            let loaded = self.fill(self.end - self.start + 1)?;
            self.verify();
            if !loaded && self.verified - self.start == before && !self.bad {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Verifies the newly read bytes; sets `bad` at an invalid sequence, or at an
    /// incomplete one when no more data is coming.
    fn verify(&mut self) {
        let chunk = &self.buf[self.verified..self.end];
        let (valid, error) = match crate::types::text::check_utf8(chunk) {
            Ok(()) => (chunk.len(), false),
            Err(e) => (e.valid_up_to(), e.error_len().is_some() || self.eof),
        };
        if let Some(nul) = memchr::memchr(0, &chunk[..valid]) {
            self.verified += nul;
            self.bad = true;
        } else {
            self.verified += valid;
            self.bad = error;
        }
    }

    /// PostgreSQL's report_invalid_encoding for the character at `verified`, printing up
    /// to its length in bytes of what follows.
    fn encoding_error(&mut self) -> PgError {
        while self.end - self.verified < MAX_CHAR_LEN && matches!(self.fill(0), Ok(true)) {}
        invalid_encoding(&self.buf[self.verified..self.end])
    }

    /// Reads more data, first moving the unconsumed bytes to the front and growing the
    /// buffer if it is full or smaller than `want`. False at end of data.
    fn fill(&mut self, want: usize) -> Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.make_room(want)?;
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(read_error(&e)),
            }
        }
    }

    fn make_room(&mut self, want: usize) -> Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.verified -= self.start;
            self.end -= self.start;
            self.start = 0;
        }
        if self.end < self.buf.len() && want <= self.buf.len() {
            return Ok(());
        }
        if self.end >= MAX_ALLOC_SIZE {
            return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "out of memory")
                .with_detail(format!("Cannot enlarge string buffer containing {} bytes by {} more bytes.", self.end, INPUT_BUF_SIZE)));
        }
        let grown = (self.buf.len() * 2).max(want).min(MAX_ALLOC_SIZE + INPUT_BUF_SIZE);
        self.buf.resize(grown, 0);
        Ok(())
    }
}

fn read_error(e: &io::Error) -> PgError {
    PgError::new(sqlstate::IO_ERROR, format!("could not read from COPY file: {e}"))
}

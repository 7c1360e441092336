//! PostgreSQL's COPY data formats — text, CSV and binary — read and written byte for byte
//! as PostgreSQL 15 does (`copyfromparse.c`, `copyto.c`, `ProcessCopyOptions`).
//!
//! This module owns the *shape* of COPY data only: options, lines, fields, quoting and
//! escaping, the binary framing, the end-of-data marker, the encoding check, and the
//! error messages and CONTEXT lines that go with them. It knows nothing about types: the
//! reader hands out fields (text as `&str`, binary as `&[u8]`) and the writer takes the
//! bytes a type's output or send function produced.
//!
//! Invariants:
//! 1. Text and CSV input is verified as UTF-8 without NUL bytes before it is parsed, in
//!    chunks as PostgreSQL does, so an encoding error names the line where the parser
//!    reached the bad bytes; every `Field::Text` is valid UTF-8.
//! 2. Memory stays bounded: the reader keeps one read buffer (64 kB, grown only to the
//!    longest line or tuple) and per-row buffers that are reused, so a row costs no
//!    allocation once the buffers have grown; the writer keeps one 64 kB output buffer.
//! 3. Errors are [`PgError`]s with PostgreSQL's SQLSTATE, message and CONTEXT
//!    (`COPY rel, line N[: "line"]`, `COPY rel, line N, column c: "value"`); a reader
//!    that returned an error returns no more rows.
//! 4. Writing rows read from PostgreSQL's output gives back the same bytes.

mod binary;
mod csv;
pub mod exec;
mod input;
mod line;
mod options;
mod parallel;
mod reader;
mod text;
mod writer;

#[cfg(test)]
mod tests;

pub use options::{CopyFormat, CopyOptions, ForceOptions};
pub use reader::{CopyReader, ResumePoint, RowRef};
pub use writer::CopyWriter;

use crate::error::{sqlstate, PgError};

/// One non-NULL field of a row read from COPY data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field<'a> {
    /// Text or CSV: the de-escaped value, valid UTF-8.
    Text(&'a str),
    /// Binary: the field's bytes as the type's send function wrote them.
    Bytes(&'a [u8]),
}

impl<'a> Field<'a> {
    /// The field's bytes, whatever the format.
    pub fn as_bytes(&self) -> &'a [u8] {
        match *self {
            Field::Text(s) => s.as_bytes(),
            Field::Bytes(b) => b,
        }
    }

    /// The text of a text or CSV field; None for binary.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Field::Text(s) => Some(s),
            Field::Bytes(_) => None,
        }
    }
}

/// PostgreSQL's MAX_COPY_DATA_DISPLAY: longer data is cut in CONTEXT lines.
const MAX_COPY_DATA_DISPLAY: usize = 100;

/// PostgreSQL's `limit_printout_length`: at most 100 bytes, cut at a character boundary,
/// then "...".
pub(crate) fn limit_printout_length(s: &str) -> String {
    if s.len() <= MAX_COPY_DATA_DISPLAY {
        return s.to_string();
    }
    let mut cut = MAX_COPY_DATA_DISPLAY;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &s[..cut])
}

/// PostgreSQL's `report_invalid_encoding` for UTF8: `bytes` starts at the invalid
/// character; as many bytes as its lead byte announces are printed (at most what is there).
pub(crate) fn invalid_encoding(bytes: &[u8]) -> PgError {
    let announced = match bytes.first() {
        Some(b) if b & 0xe0 == 0xc0 => 2,
        Some(b) if b & 0xf0 == 0xe0 => 3,
        Some(b) if b & 0xf8 == 0xf0 => 4,
        _ => 1,
    };
    let shown: Vec<String> = bytes.iter().take(announced).map(|b| format!("0x{b:02x}")).collect();
    PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")))
}

/// Checks de-escaped bytes as `pg_verifymbstr` does: UTF-8 without NUL bytes.
pub(crate) fn verify_utf8(bytes: &[u8]) -> Result<&str, PgError> {
    if let Ok(s) = simdutf8::basic::from_utf8(bytes) {
        if memchr::memchr(0, bytes).is_none() {
            return Ok(s);
        }
    }
    let (valid, text) = match std::str::from_utf8(bytes) {
        Ok(s) => (bytes.len(), Some(s)),
        Err(e) => (e.valid_up_to(), None),
    };
    let bad = memchr::memchr(0, &bytes[..valid]).unwrap_or(valid);
    match text {
        Some(s) if bad == bytes.len() => Ok(s),
        _ => Err(invalid_encoding(&bytes[bad..])),
    }
}

//! The binary format on input: PostgreSQL's `ReceiveCopyBinaryHeader`, and the binary
//! branch of `NextCopyFrom` with `CopyReadBinaryAttribute`.
//!
//! Layout: the 11-byte signature, an int32 flags word, an int32 header-extension length
//! and that many bytes; then per tuple an int16 field count (-1 ends the data) and per
//! field an int32 length (-1 is NULL) and the bytes. All integers are big-endian. A tuple
//! stays in the input buffer while it is borrowed; fields are not copied.

use std::io::Read;

use super::input::MAX_ALLOC_SIZE;
use super::reader::{bad_format, CopyReader, Phase, Span};
use crate::error::{sqlstate, PgError, Result};

/// `PGCOPY\n\377\r\n\0`.
pub(super) const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// Flags bit 16: the file has OIDs (no longer supported by PostgreSQL).
const FLAG_OIDS: i32 = 1 << 16;

impl<R: Read> CopyReader<R> {
    /// The next tuple; false at the end of data.
    pub(super) fn advance_binary(&mut self) -> Result<bool> {
        if self.phase == Phase::Start {
            self.read_binary_header()?;
            self.phase = Phase::Rows;
        }
        self.lineno += 1;
        self.spans.clear();
        // End of input where a tuple would start (even mid-count) ends the data.
        let Some(count) = self.read_i16(0)? else {
            return Ok(false);
        };
        if count == -1 {
            self.input.consume(2);
            return self.after_trailer().map(|()| false);
        }
        let ncols = self.meta.columns.len();
        if usize::try_from(count) != Ok(ncols) {
            let msg = format!("row field count is {count}, expected {ncols}");
            return Err(bad_format(msg).with_context(self.reading_context()));
        }
        let mut off = 2;
        for col in 0..ncols {
            off = self.read_field(off, col)?;
        }
        self.pending = off;
        Ok(true)
    }

    fn read_binary_header(&mut self) -> Result<()> {
        let whole = self.input.need(SIGNATURE.len())?;
        if !whole || self.input.data()[..SIGNATURE.len()] != SIGNATURE[..] {
            return Err(bad_format("COPY file signature not recognized"));
        }
        self.input.consume(SIGNATURE.len());
        let flags = self.take_i32()?.ok_or_else(|| bad_format("invalid COPY file header (missing flags)"))?;
        if flags & FLAG_OIDS != 0 {
            return Err(bad_format("invalid COPY file header (WITH OIDS)"));
        }
        if (flags & !FLAG_OIDS) >> 16 != 0 {
            return Err(bad_format("unrecognized critical flags in COPY file header"));
        }
        match self.take_i32()?.map(usize::try_from) {
            Some(Ok(len)) => self.skip_extension(len),
            _ => Err(bad_format("invalid COPY file header (missing length)")),
        }
    }

    fn skip_extension(&mut self, mut len: usize) -> Result<()> {
        while len > 0 {
            if !self.input.need(1)? {
                return Err(bad_format("invalid COPY file header (wrong length)"));
            }
            let n = len.min(self.input.data().len());
            self.input.consume(n);
            len -= n;
        }
        Ok(())
    }

    /// After the -1 trailer nothing may follow.
    fn after_trailer(&mut self) -> Result<()> {
        if self.input.need(1)? {
            let err = bad_format("received copy data after EOF marker");
            return Err(err.with_context(self.reading_context()));
        }
        Ok(())
    }

    /// Reads field `col` at offset `off` of the tuple; returns the offset after it.
    fn read_field(&mut self, off: usize, col: usize) -> Result<usize> {
        let Some(len) = self.read_i32(off)? else {
            return Err(self.field_error(col, unexpected_eof()));
        };
        let off = off + 4;
        if len == -1 {
            self.spans.push(Span::Null);
            return Ok(off);
        }
        let Ok(len) = usize::try_from(len) else {
            return Err(self.field_error(col, bad_format("invalid field size")));
        };
        if len >= MAX_ALLOC_SIZE {
            return Err(self.field_error(col, too_large(len)));
        }
        if !self.input.need(off + len)? {
            return Err(self.field_error(col, unexpected_eof()));
        }
        self.spans.push(Span::Raw(off, off + len));
        Ok(off + len)
    }

    fn field_error(&self, col: usize, err: PgError) -> PgError {
        err.with_context(self.row().column_context(col))
    }

    fn read_i16(&mut self, off: usize) -> Result<Option<i16>> {
        if !self.input.need(off + 2)? {
            return Ok(None);
        }
        let b = &self.input.data()[off..off + 2];
        Ok(Some(i16::from_be_bytes([b[0], b[1]])))
    }

    fn read_i32(&mut self, off: usize) -> Result<Option<i32>> {
        if !self.input.need(off + 4)? {
            return Ok(None);
        }
        let b = &self.input.data()[off..off + 4];
        Ok(Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]])))
    }

    /// Reads and consumes a header int32.
    fn take_i32(&mut self) -> Result<Option<i32>> {
        let value = self.read_i32(0)?;
        if value.is_some() {
            self.input.consume(4);
        }
        Ok(value)
    }
}

fn unexpected_eof() -> PgError {
    bad_format("unexpected EOF in COPY data")
}

/// What PostgreSQL's `enlargeStringInfo` says for a field of 1 GB or more.
fn too_large(len: usize) -> PgError {
    PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "out of memory")
        .with_detail(format!("Cannot enlarge string buffer containing 0 bytes by {len} more bytes."))
}

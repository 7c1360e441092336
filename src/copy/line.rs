//! What the text and CSV line readers share, from PostgreSQL's `CopyReadLine` and
//! `CopyReadLineText`: looking ahead in the verified input, line endings (the style is
//! fixed by the first line), the `\.` end-of-data marker, and moving a finished line into
//! `CopyReader::line`.
//!
//! Positions are offsets from the first unconsumed input byte; the scanners only look at
//! verified bytes, so an encoding error is raised where PostgreSQL raises it: when the
//! scan reaches the bad bytes, with the current line number.

use std::io::Read;

use super::reader::{bad_format, CopyReader, Eol};
use super::CopyFormat;
use crate::error::{PgError, Result};

impl<R: Read> CopyReader<R> {
    /// Makes more verified input available; false at the end of data.
    pub(super) fn more(&mut self) -> Result<bool> {
        match self.input.more_verified() {
            Ok(more) => Ok(more),
            Err(e) => Err(e.with_context(self.reading_context())),
        }
    }

    /// The verified byte at `pos`, loading input as needed; None at the end of data.
    pub(super) fn peek(&mut self, pos: usize) -> Result<Option<u8>> {
        while self.input.verified().len() <= pos {
            if !self.more()? {
                return Ok(None);
            }
        }
        Ok(Some(self.input.verified()[pos]))
    }

    /// The line is the first `len` input bytes; `consume` bytes (with the line ending or
    /// end marker) are used up.
    pub(super) fn take_line(&mut self, len: usize, consume: usize) -> Result<()> {
        let verified = self.input.verified();
        if len < verified.len() && !verified[len].is_ascii() {
            return Err(PgError::internal("COPY line does not end on a character boundary"));
        }
        let bytes = &verified[..len];
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: the input buffer's `verified()` bytes are valid UTF-8 (its invariant: they
        // passed the encoding check when read, and start on a character boundary), and a cut
        // at the end or just before an ASCII byte (checked above) is a character boundary, so
        // the prefix is valid UTF-8 too. Checking it a second time cost 3% of a text COPY.
        let text = unsafe { std::str::from_utf8_unchecked(bytes) };
        if !self.keep_lines {
            self.line.clear();
        }
        self.line_from = self.line.len();
        self.line.push_str(text);
        self.line_to = self.line.len();
        self.input.consume(consume);
        Ok(())
    }

    /// A line feed outside quotes at `p` ends the line. Returns false (not end of data).
    pub(super) fn newline_at(&mut self, p: usize) -> Result<bool> {
        if matches!(self.eol, Eol::Cr | Eol::CrNl) {
            return Err(self.eol_error(false));
        }
        self.eol = Eol::Nl;
        self.take_line(p, p + 1)?;
        Ok(false)
    }

    /// A carriage return outside quotes at `p` ends the line, alone or as `\r\n`.
    pub(super) fn carriage_return_at(&mut self, p: usize) -> Result<bool> {
        match self.eol {
            Eol::Nl => return Err(self.eol_error(true)),
            Eol::Cr => {}
            Eol::Unknown | Eol::CrNl => {
                if self.peek(p + 1)? == Some(b'\n') {
                    self.eol = Eol::CrNl;
                    self.take_line(p, p + 2)?;
                    return Ok(false);
                }
                if self.eol == Eol::CrNl {
                    return Err(self.eol_error(true));
                }
                self.eol = Eol::Cr;
            }
        }
        self.take_line(p, p + 1)?;
        Ok(false)
    }

    fn eol_error(&self, carriage_return: bool) -> PgError {
        let csv = self.opts.format == CopyFormat::Csv;
        let (message, hint) = match (carriage_return, csv) {
            (true, false) => ("literal carriage return found in data", "Use \"\\r\" to represent carriage return."),
            (true, true) => ("unquoted carriage return found in data", "Use quoted CSV field to represent carriage return."),
            (false, false) => ("literal newline found in data", "Use \"\\n\" to represent newline."),
            (false, true) => ("unquoted newline found in data", "Use quoted CSV field to represent newline."),
        };
        bad_format(message).with_hint(hint).with_context(self.reading_context())
    }

    /// `\.` at `p`, checked against the line-ending style. True: it ends the data (the
    /// line is what came before it on the same line). False (CSV only): it is data.
    pub(super) fn end_marker_at(&mut self, p: usize) -> Result<bool> {
        let mut q = p + 2;
        if self.eol == Eol::CrNl {
            // `\.` must be followed by `\r\n` here.
            let c = self.peek(q)?.unwrap_or(0);
            if c != b'\r' {
                let message = if c == b'\n' { MARKER_STYLE } else { MARKER_CORRUPT };
                return self.not_a_marker(message);
            }
            q += 1;
        }
        let c = self.peek(q)?.unwrap_or(0);
        if c != b'\r' && c != b'\n' {
            return self.not_a_marker(MARKER_CORRUPT);
        }
        let expected = match self.eol {
            Eol::Unknown => c,
            Eol::Nl | Eol::CrNl => b'\n',
            Eol::Cr => b'\r',
        };
        if c != expected {
            return Err(self.marker_error(MARKER_STYLE));
        }
        self.take_line(p, q + 1)?;
        Ok(true)
    }

    /// In CSV, `\.` not followed by the right line ending is data; in text, an error.
    fn not_a_marker(&self, message: &str) -> Result<bool> {
        match self.opts.format {
            CopyFormat::Csv => Ok(false),
            _ => Err(self.marker_error(message)),
        }
    }

    fn marker_error(&self, message: &str) -> PgError {
        bad_format(message).with_context(self.reading_context())
    }
}

const MARKER_CORRUPT: &str = "end-of-copy marker corrupt";
const MARKER_STYLE: &str = "end-of-copy marker does not match previous newline style";

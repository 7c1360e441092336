//! [`CopyWriter`]: COPY TO output, byte for byte as PostgreSQL 15's `copyto.c` writes it
//! (`CopyAttributeOutText`, `CopyAttributeOutCSV`, the binary header and trailer).
//!
//! Invariants: output goes through one reusable buffer, handed to the destination when
//! it passes 64 kB and at `finish`; rows end with `\n`; a row of N fields has N-1
//! delimiters; NULL is the null string, unquoted and unescaped.

use std::io::{self, Write};

use memchr::memchr2;

use super::binary::SIGNATURE;
use super::{CopyFormat, CopyOptions};

/// Output is handed to the destination in pieces of about this size.
const FLUSH_AT: usize = 64 * 1024;

/// Writes rows in COPY's text, CSV or binary format.
pub struct CopyWriter<W: Write> {
    dst: W,
    opts: CopyOptions,
    out: Vec<u8>,
    begun: bool,
    /// Each row (with the binary header before the first, and the header line and the binary
    /// trailer each alone) goes to the destination in one `write_all`, as PostgreSQL sends one
    /// CopyData message per row.
    framed: bool,
    /// Text: bytes that get a backslash. CSV: bytes that force quoting.
    special: [bool; 256],
}

impl<W: Write> CopyWriter<W> {
    pub fn new(dst: W, opts: CopyOptions) -> Self {
        let special = special_bytes(&opts);
        CopyWriter { dst, opts, out: Vec::with_capacity(FLUSH_AT + FLUSH_AT / 4), begun: false, framed: false, special }
    }

    /// Writes row by row (see the `framed` field).
    pub fn framed(mut self) -> Self {
        self.framed = true;
        self
    }

    /// Binary: the signature, flags and header extension. Text/CSV: the header line of
    /// column names if `opts.header`, quoted or escaped like values.
    pub fn begin(&mut self, columns: &[String]) -> io::Result<()> {
        self.begun = true;
        match self.opts.format {
            CopyFormat::Binary => {
                self.out.extend_from_slice(SIGNATURE);
                self.out.extend_from_slice(&0i32.to_be_bytes());
                self.out.extend_from_slice(&0i32.to_be_bytes());
                if self.framed {
                    // The header travels with the first row (or the trailer), as PostgreSQL's.
                    return Ok(());
                }
            }
            _ if self.opts.header => {
                let names: Vec<Option<&[u8]>> = columns.iter().map(|c| Some(c.as_bytes())).collect();
                self.put_text_like_row(&names, true);
            }
            _ => {}
        }
        self.flush_if_full()
    }

    /// One row. Text/CSV: each field is the type's text output (UTF-8); binary: the
    /// type's send output. None is NULL.
    pub fn write_row(&mut self, fields: &[Option<&[u8]>]) -> io::Result<()> {
        if self.opts.format == CopyFormat::Binary {
            self.begin_binary()?;
            self.put_binary_row(fields)?;
        } else {
            self.put_text_like_row(fields, false);
        }
        self.flush_if_full()
    }

    /// Binary: the -1 trailer (and the header if `begin` was never called). Writes out
    /// what is buffered, flushes, and returns the destination.
    pub fn finish(mut self) -> io::Result<W> {
        if self.opts.format == CopyFormat::Binary {
            self.begin_binary()?;
            self.out.extend_from_slice(&(-1i16).to_be_bytes());
        }
        if !self.out.is_empty() {
            self.dst.write_all(&self.out)?;
        }
        self.dst.flush()?;
        Ok(self.dst)
    }

    fn begin_binary(&mut self) -> io::Result<()> {
        if self.begun {
            return Ok(());
        }
        self.begin(&[])
    }

    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.out.len() >= FLUSH_AT || (self.framed && !self.out.is_empty()) {
            self.dst.write_all(&self.out)?;
            self.out.clear();
        }
        Ok(())
    }

    /// `header`: the header line (FORCE_QUOTE does not apply to it).
    fn put_text_like_row(&mut self, fields: &[Option<&[u8]>], header: bool) {
        // PostgreSQL quotes a lone `\.` only when the row has a single column.
        let single = fields.len() == 1;
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                self.out.push(self.opts.delimiter);
            }
            match field {
                None => self.out.extend_from_slice(self.opts.null.as_bytes()),
                Some(v) if self.opts.format == CopyFormat::Csv => {
                    let force = !header && self.opts.force_quote.get(i).copied().unwrap_or(false);
                    self.put_csv(v, single, force)
                }
                Some(v) => self.put_text(v),
            }
        }
        self.out.push(b'\n');
    }

    /// PostgreSQL's CopyAttributeOutText.
    fn put_text(&mut self, v: &[u8]) {
        let mut start = 0;
        let mut i = 0;
        while let Some(k) = v[i..].iter().position(|&b| self.special[usize::from(b)]) {
            let p = i + k;
            self.out.extend_from_slice(&v[start..p]);
            self.out.push(b'\\');
            match text_escape_letter(v[p]) {
                // Control characters with a C-like escape: the letter replaces them.
                Some(letter) => {
                    self.out.push(letter);
                    start = p + 1;
                }
                // Backslash or delimiter: written after its backslash.
                None => start = p,
            }
            i = p + 1;
        }
        self.out.extend_from_slice(&v[start..]);
    }

    /// PostgreSQL's CopyAttributeOutCSV; `force`: the column is FORCE_QUOTE.
    fn put_csv(&mut self, v: &[u8], single: bool, force: bool) {
        let quote = self.opts.quote;
        let use_quote =
            force || v == self.opts.null.as_bytes() || (single && v == b"\\.") || v.iter().any(|&b| self.special[usize::from(b)]);
        if !use_quote {
            self.out.extend_from_slice(v);
            return;
        }
        let escape = self.opts.escape;
        self.out.push(quote);
        let mut start = 0;
        while let Some(k) = memchr2(quote, escape, &v[start..]) {
            let p = start + k;
            self.out.extend_from_slice(&v[start..p]);
            self.out.push(escape);
            self.out.push(v[p]);
            start = p + 1;
        }
        self.out.extend_from_slice(&v[start..]);
        self.out.push(quote);
    }

    fn put_binary_row(&mut self, fields: &[Option<&[u8]>]) -> io::Result<()> {
        let count = i16::try_from(fields.len()).map_err(|_| too_big("fields in a row"))?;
        self.out.extend_from_slice(&count.to_be_bytes());
        for field in fields {
            match field {
                None => self.out.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    let len = i32::try_from(v.len()).map_err(|_| too_big("bytes in a field"))?;
                    self.out.extend_from_slice(&len.to_be_bytes());
                    self.out.extend_from_slice(v);
                }
            }
        }
        Ok(())
    }
}

/// The escape letter of the control characters CopyAttributeOutText spells out.
fn text_escape_letter(b: u8) -> Option<u8> {
    match b {
        0x08 => Some(b'b'),
        0x0c => Some(b'f'),
        b'\n' => Some(b'n'),
        b'\r' => Some(b'r'),
        b'\t' => Some(b't'),
        0x0b => Some(b'v'),
        _ => None,
    }
}

fn special_bytes(opts: &CopyOptions) -> [bool; 256] {
    let mut special = [false; 256];
    let bytes: &[u8] = match opts.format {
        CopyFormat::Csv => &[opts.delimiter, opts.quote, b'\n', b'\r'],
        _ => &[0x08, 0x0c, b'\n', b'\r', b'\t', 0x0b, b'\\', opts.delimiter],
    };
    for &b in bytes {
        special[usize::from(b)] = true;
    }
    special
}

fn too_big(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("too many {what} for COPY BINARY"))
}

//! [`CopyReader`]: rows out of COPY data, as PostgreSQL's `NextCopyFrom` reads them, and
//! [`RowRef`], the borrowed view of one row.
//!
//! The per-format parsing lives in `text.rs`, `csv.rs` (with the line reader they share in
//! `line.rs`) and `binary.rs`; this file holds the state they share, the row-shape checks
//! and the CONTEXT lines of PostgreSQL's `CopyFromErrorCallback`.
//!
//! Invariants: `spans` describe the fields of the last row returned; a `Span::Line`
//! indexes `line`, a `Span::Attr` indexes `attr`, and a `Span::Raw` indexes the input
//! buffer from its first unconsumed byte, where the binary tuple stays until the next
//! call (`pending` bytes long).

use std::io::Read;

use super::input::Input;
use super::{limit_printout_length, CopyFormat, CopyOptions, Field};
use crate::error::{sqlstate, PgError, Result};

/// Streams rows out of COPY data in any of the three formats.
///
/// ```ignore
/// let mut rdr = CopyReader::new(file, opts, "types", &columns);
/// while let Some(row) = rdr.next_row()? {
///     for (col, field) in row.iter().enumerate() { /* field: Option<Field> */ }
/// }
/// ```
pub struct CopyReader<R: Read> {
    pub(super) input: Input<R>,
    pub(super) opts: CopyOptions,
    pub(super) meta: Meta,
    /// PostgreSQL's `cur_lineno`: physical line (text, CSV) or tuple number (binary).
    pub(super) lineno: u64,
    pub(super) phase: Phase,
    /// Line-ending style, fixed by the first line as in PostgreSQL.
    pub(super) eol: Eol,
    /// Text/CSV: the current line without its line ending is `line[line_from..line_to]`
    /// (all of it, except while lines are read into or parsed out of a chunk).
    pub(super) line: String,
    pub(super) line_from: usize,
    pub(super) line_to: usize,
    /// Lines read are appended to `line` instead of replacing it ([`Self::next_lines_into`]).
    pub(super) keep_lines: bool,
    /// Text/CSV: de-escaped field values that could not borrow `line`.
    pub(super) attr: String,
    /// Text: one field's de-escaped bytes before they are checked as UTF-8.
    pub(super) scratch: Vec<u8>,
    pub(super) spans: Vec<Span>,
    /// Binary: bytes of the last tuple, consumed at the next call.
    pub(super) pending: usize,
}

/// What CONTEXT lines need besides the row.
pub(super) struct Meta {
    pub(super) relation: String,
    pub(super) columns: Vec<String>,
    pub(super) binary: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Nothing read yet: a header line or the binary file header comes first.
    Start,
    Rows,
    /// End of data reached, or an error returned.
    Done,
}

/// Where a record starts in COPY data: see [`CopyReader::resume_point`].
#[derive(Clone, Copy, Debug)]
pub struct ResumePoint {
    lineno: u64,
    eol: Eol,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Eol {
    Unknown,
    Nl,
    Cr,
    CrNl,
}

/// Where one field's value lies; see the module invariants.
#[derive(Clone, Copy, Debug)]
pub(super) enum Span {
    Null,
    Line(usize, usize),
    Attr(usize, usize),
    Raw(usize, usize),
}

impl<R: Read> CopyReader<R> {
    /// `relation` and `columns` (the columns COPY fills, in order) name the row's shape
    /// and appear in CONTEXT lines.
    pub fn new(src: R, opts: CopyOptions, relation: &str, columns: &[String]) -> Self {
        let binary = opts.format == CopyFormat::Binary;
        CopyReader {
            input: Input::new(src),
            opts,
            meta: Meta { relation: relation.to_string(), columns: columns.to_vec(), binary },
            lineno: 0,
            phase: Phase::Start,
            eol: Eol::Unknown,
            line: String::new(),
            line_from: 0,
            line_to: 0,
            keep_lines: false,
            attr: String::new(),
            scratch: Vec::new(),
            spans: Vec::with_capacity(columns.len()),
            pending: 0,
        }
    }

    /// The next row, or None at the end of data (end of input, the `\.` marker in text
    /// or CSV, the -1 trailer in binary). The row has exactly one field per column.
    pub fn next_row(&mut self) -> Result<Option<RowRef<'_>>> {
        self.next(false)
    }

    /// Like [`next_row`](Self::next_row), but a text or CSV row with fewer fields than
    /// columns is returned rather than failing. PostgreSQL converts the fields that are
    /// there before it reports the first missing one; a caller that wants that order
    /// converts them, then raises [`RowRef::missing_data_error`].
    pub fn next_row_partial(&mut self) -> Result<Option<RowRef<'_>>> {
        self.next(true)
    }

    /// 1-based line number of the last row (binary: its tuple number).
    pub fn line_no(&self) -> u64 {
        self.lineno
    }

    /// Where the next record starts, for a reader that goes on from there
    /// ([`CopyReader::resuming`]): the line count so far and the line-ending style.
    pub fn resume_point(&self) -> ResumePoint {
        ResumePoint { lineno: self.lineno, eol: self.eol }
    }

    /// A reader of records cut out of a longer input by [`next_tuple_into`](Self::next_tuple_into),
    /// starting at `at`: no header or file header is expected, line numbers go on from
    /// `at`'s, and the line-ending style is the one already fixed. It reads those records
    /// exactly as a reader of the whole input would have (same rows, same errors, same
    /// CONTEXT lines).
    pub fn resuming(src: R, opts: CopyOptions, relation: &str, columns: &[String], at: ResumePoint) -> Self {
        let mut r = CopyReader::new(src, opts, relation, columns);
        r.phase = Phase::Rows;
        r.lineno = at.lineno;
        r.eol = at.eol;
        r
    }

    /// Text and CSV: reads lines and appends them to `out` (without their line endings,
    /// without splitting them into fields) until `budget` bytes of [`RowRef::size`] are read
    /// or the data ends; for each line, pushes its end in `out` and its line number (after
    /// any line breaks inside CSV quotes) to `lines`. Returns the bytes read and whether the
    /// data ended. Errors are the ones reading a line raises (encoding, line endings, end
    /// marker); `out` and `lines` then hold the lines before it. Those about fields are left
    /// to [`parse_line_at`](Self::parse_line_at).
    pub fn next_lines_into(&mut self, out: &mut String, lines: &mut Vec<(usize, u64)>, budget: usize) -> Result<(usize, bool)> {
        debug_assert!(self.opts.format != CopyFormat::Binary);
        // The lines go straight into `out`, which stands in for `line` meanwhile.
        std::mem::swap(&mut self.line, out);
        self.keep_lines = true;
        let mut read = || -> Result<(usize, bool)> {
            let mut taken = 0;
            while taken < budget {
                if !self.advance_line()? {
                    return Ok((taken, true));
                }
                lines.push((self.line_to, self.lineno));
                taken += self.line_to - self.line_from + 1;
            }
            Ok((taken, false))
        };
        let r = read();
        self.keep_lines = false;
        std::mem::swap(&mut self.line, out);
        (self.line_from, self.line_to) = (0, 0);
        self.line.clear();
        if r.is_err() {
            self.phase = Phase::Done;
        }
        r
    }

    /// The next binary tuple, appended with its framing to `out`; returns its size, or None at
    /// the end of data. Errors are those of the framing (field count, lengths, trailer);
    /// a [`resuming`](Self::resuming) reader over the bytes reads the fields.
    pub fn next_tuple_into(&mut self, out: &mut Vec<u8>) -> Result<Option<usize>> {
        debug_assert!(self.opts.format == CopyFormat::Binary);
        self.input.consume(std::mem::take(&mut self.pending));
        if self.phase == Phase::Done {
            return Ok(None);
        }
        match self.advance_binary() {
            Ok(true) => {
                out.extend_from_slice(&self.input.data()[..self.pending]);
                Ok(Some(self.pending))
            }
            Ok(false) => {
                self.phase = Phase::Done;
                Ok(None)
            }
            Err(e) => {
                self.phase = Phase::Done;
                Err(e)
            }
        }
    }

    /// advance_text_like without the field split: true when a line was read.
    fn advance_line(&mut self) -> Result<bool> {
        if self.phase == Phase::Done {
            return Ok(false);
        }
        let before = self.line.len();
        if self.phase == Phase::Start {
            self.phase = Phase::Rows;
            if self.opts.header {
                self.lineno += 1;
                let ended = self.read_line()?;
                self.line.truncate(before);
                if ended {
                    self.phase = Phase::Done;
                    return Ok(false);
                }
            }
        }
        self.lineno += 1;
        if self.read_line()? {
            self.phase = Phase::Done;
            if self.line_to == self.line_from {
                self.line.truncate(before);
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Parses the lines [`next_lines_into`](Self::next_lines_into) read into `text`: `f`
    /// runs with them in place, to call [`parse_line_at`](Self::parse_line_at).
    pub fn with_lines<T>(&mut self, text: &mut String, f: impl FnOnce(&mut Self) -> T) -> T {
        std::mem::swap(&mut self.line, text);
        let r = f(self);
        std::mem::swap(&mut self.line, text);
        (self.line_from, self.line_to) = (0, 0);
        r
    }

    /// Inside [`with_lines`](Self::with_lines): the row of the line `text[from..to]`, read
    /// with line number `lineno`, split into fields and checked as
    /// [`next_row`](Self::next_row) does, with the same errors and CONTEXT lines.
    pub fn parse_line_at(&mut self, from: usize, to: usize, lineno: u64) -> Result<RowRef<'_>> {
        assert!(from <= to && to <= self.line.len() && self.line.is_char_boundary(from) && self.line.is_char_boundary(to));
        (self.line_from, self.line_to) = (from, to);
        self.lineno = lineno;
        self.split_fields()?;
        self.check_field_count(false)?;
        Ok(self.row())
    }

    /// CONTEXT for an error in column `col` (0-based) of the last row returned, e.g.
    /// `COPY types, line 3, column flag: "maybe"`.
    pub fn column_context(&self, col: usize) -> String {
        self.row().column_context(col)
    }

    /// CONTEXT for an error about the last row as a whole (a constraint violation, say):
    /// `COPY types, line 3: "<line>"` (binary: `COPY types, line 3`).
    pub fn line_context(&self) -> String {
        self.row().line_context()
    }

    fn next(&mut self, allow_missing: bool) -> Result<Option<RowRef<'_>>> {
        match self.advance(allow_missing) {
            Ok(true) => Ok(Some(self.row())),
            Ok(false) => Ok(None),
            Err(e) => {
                self.phase = Phase::Done;
                Err(e)
            }
        }
    }

    fn advance(&mut self, allow_missing: bool) -> Result<bool> {
        self.input.consume(std::mem::take(&mut self.pending));
        if self.phase == Phase::Done {
            return Ok(false);
        }
        let got = match self.opts.format {
            CopyFormat::Binary => self.advance_binary()?,
            CopyFormat::Text | CopyFormat::Csv => self.advance_text_like(allow_missing)?,
        };
        if !got {
            self.phase = Phase::Done;
        }
        Ok(got)
    }

    /// PostgreSQL's NextCopyFromRawFields plus the field-count checks of NextCopyFrom.
    fn advance_text_like(&mut self, allow_missing: bool) -> Result<bool> {
        if self.phase == Phase::Start {
            self.phase = Phase::Rows;
            if self.opts.header {
                self.lineno += 1;
                if self.read_line()? {
                    return Ok(false);
                }
            }
        }
        self.lineno += 1;
        if self.read_line()? {
            // EOF or `\.` after some data: that data is the last row.
            self.phase = Phase::Done;
            if self.line_to == self.line_from {
                return Ok(false);
            }
        }
        self.split_fields()?;
        self.check_field_count(allow_missing)?;
        Ok(true)
    }

    /// Reads the next line into `self.line`; true when the data ended with it.
    fn read_line(&mut self) -> Result<bool> {
        match self.opts.format {
            CopyFormat::Csv => self.read_csv_line(),
            _ => self.read_text_line(),
        }
    }

    fn split_fields(&mut self) -> Result<()> {
        self.spans.clear();
        self.attr.clear();
        if self.meta.columns.is_empty() {
            // PostgreSQL's special case for zero-column tables: the line must be empty.
            if self.line_from == self.line_to {
                return Ok(());
            }
            return Err(self.row_error(extra_data()));
        }
        match self.opts.format {
            CopyFormat::Csv => self.split_csv(),
            _ => self.split_text(),
        }
    }

    fn check_field_count(&self, allow_missing: bool) -> Result<()> {
        let ncols = self.meta.columns.len();
        if ncols > 0 && self.spans.len() > ncols {
            return Err(self.row_error(extra_data()));
        }
        match self.row().missing_data_error() {
            Some(e) if !allow_missing => Err(e),
            _ => Ok(()),
        }
    }

    pub(super) fn row(&self) -> RowRef<'_> {
        let size = if self.meta.binary { self.pending } else { self.line_to - self.line_from + 1 };
        RowRef {
            meta: &self.meta,
            lineno: self.lineno,
            line: &self.line[self.line_from..self.line_to],
            attr: &self.attr,
            raw: self.input.data(),
            spans: &self.spans,
            size,
        }
    }

    /// `err` about the line just read, with the line in CONTEXT.
    pub(super) fn row_error(&self, err: PgError) -> PgError {
        err.with_context(self.row().line_context())
    }

    /// CONTEXT while a line is being read (PostgreSQL's `line_buf_valid` is false).
    pub(super) fn reading_context(&self) -> String {
        format!("COPY {}, line {}", self.meta.relation, self.lineno)
    }
}

/// One row of COPY data, borrowed from its [`CopyReader`] until the next call.
#[derive(Clone, Copy)]
pub struct RowRef<'a> {
    meta: &'a Meta,
    lineno: u64,
    line: &'a str,
    attr: &'a str,
    raw: &'a [u8],
    spans: &'a [Span],
    size: usize,
}

impl<'a> RowRef<'a> {
    /// Number of fields (the number of columns, unless from `next_row_partial`).
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Field `i`; None is SQL NULL. Panics if `i >= len()`, as slice indexing does.
    pub fn field(&self, i: usize) -> Option<Field<'a>> {
        match self.spans[i] {
            Span::Null => None,
            Span::Line(a, b) => Some(Field::Text(&self.line[a..b])),
            Span::Attr(a, b) => Some(Field::Text(&self.attr[a..b])),
            Span::Raw(a, b) => Some(Field::Bytes(&self.raw[a..b])),
        }
    }

    /// The fields in column order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<Field<'a>>> + 'a {
        let row = *self;
        (0..row.len()).map(move |i| row.field(i))
    }

    /// 1-based line number (binary: tuple number).
    pub fn line_no(&self) -> u64 {
        self.lineno
    }

    /// How much input the row took: a text or CSV line's length plus one for its ending, a
    /// binary tuple's bytes. COPY cuts its input into chunks by this measure (the same cuts
    /// whether it loads serially or in parallel).
    pub fn size(&self) -> usize {
        self.size
    }

    /// See [`CopyReader::column_context`].
    pub fn column_context(&self, col: usize) -> String {
        let (rel, n) = (&self.meta.relation, self.lineno);
        let Some(name) = self.meta.columns.get(col) else {
            return self.line_context();
        };
        if self.meta.binary {
            return format!("COPY {rel}, line {n}, column {name}");
        }
        if col >= self.spans.len() {
            return self.line_context();
        }
        match self.field(col) {
            Some(f) => {
                let value = f.as_str().unwrap_or_default();
                let shown = limit_printout_length(value);
                format!("COPY {rel}, line {n}, column {name}: \"{shown}\"")
            }
            None => format!("COPY {rel}, line {n}, column {name}: null input"),
        }
    }

    /// See [`CopyReader::line_context`].
    pub fn line_context(&self) -> String {
        let (rel, n) = (&self.meta.relation, self.lineno);
        if self.meta.binary {
            return format!("COPY {rel}, line {n}");
        }
        let shown = limit_printout_length(self.line);
        format!("COPY {rel}, line {n}: \"{shown}\"")
    }

    /// `missing data for column "c"` (with the line in CONTEXT) if the row is short.
    pub fn missing_data_error(&self) -> Option<PgError> {
        let name = self.meta.columns.get(self.len())?;
        Some(bad_format(format!("missing data for column \"{name}\"")).with_context(self.line_context()))
    }
}

/// An error with SQLSTATE 22P04 (bad_copy_file_format).
pub(super) fn bad_format(message: impl Into<String>) -> PgError {
    PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, message)
}

fn extra_data() -> PgError {
    bad_format("extra data after last expected column")
}

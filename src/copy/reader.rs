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
    /// Text/CSV: the current line without its line ending.
    pub(super) line: String,
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
            if self.line.is_empty() {
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
            if self.line.is_empty() {
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
        RowRef { meta: &self.meta, lineno: self.lineno, line: &self.line, attr: &self.attr, raw: self.input.data(), spans: &self.spans }
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

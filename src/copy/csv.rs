//! The CSV format on input: PostgreSQL's `CopyReadLineText` (CSV mode) and
//! `CopyReadAttributesCSV`.
//!
//! A line ends at a line ending outside quotes, so a record may span physical lines;
//! the line number counts those inside quotes as PostgreSQL does. Within a field, quoted
//! parts are taken literally except that the escape character (the quote by default)
//! escapes a following quote or escape. An unquoted field equal to the null string is
//! NULL, unless its column is FORCE_NOT_NULL (then it is that string); a quoted one equal to
//! it is NULL only if its column is FORCE_NULL. A field that is one contiguous run of the line borrows it; others are assembled
//! in `attr` from runs of the (already verified) line, so they stay valid UTF-8.

use std::io::Read;

use memchr::{memchr, memchr2, memchr3};

use super::reader::{bad_format, CopyReader, Eol, Span};
use crate::error::Result;

impl<R: Read> CopyReader<R> {
    /// Reads the next CSV record into `self.line`; true when the data ended.
    pub(super) fn read_csv_line(&mut self) -> Result<bool> {
        // `\.` is the end marker only alone on a line in CSV (a data value otherwise).
        if self.peek(0)? == Some(b'\\') && self.peek(1)? == Some(b'.') && self.end_marker_at(0)? {
            return Ok(true);
        }
        let mut scan = CsvScan::new(self.opts.quote, self.opts.escape);
        let mut i = 0;
        loop {
            let count_char = if self.eol == Eol::Nl { b'\n' } else { b'\r' };
            let data = self.input.verified();
            let Some(k) = scan.find(&data[i..], count_char) else {
                scan.skipped(i < data.len());
                i = data.len();
                if !self.more()? {
                    self.take_line(i, i)?;
                    return Ok(true);
                }
                continue;
            };
            scan.skipped(k > 0);
            let p = i + k;
            let c = data[p];
            if c == b'\\' || c == b'\r' {
                // PostgreSQL loads the next character first (an encoding error there
                // is reported before this one is counted).
                self.peek(p + 1)?;
            }
            if scan.step(c, count_char) {
                self.lineno += 1;
            }
            if !scan.in_quote && c == b'\r' {
                return self.carriage_return_at(p);
            }
            if !scan.in_quote && c == b'\n' {
                return self.newline_at(p);
            }
            i = p + 1;
        }
    }

    /// Splits the current line into fields (`self.spans`).
    pub(super) fn split_csv(&mut self) -> Result<()> {
        let chars = CsvChars { delim: self.opts.delimiter, quote: self.opts.quote, escape: self.opts.escape };
        let null = self.opts.null.as_bytes();
        let line = &self.line[self.line_from..self.line_to];
        let forced = !self.opts.force_not_null.is_empty() || !self.opts.force_null.is_empty();
        let mut start = 0;
        loop {
            let field = match parse_field(line, start, chars, &mut self.attr) {
                Ok(field) => field,
                Err(e) => return Err(self.row_error(e)),
            };
            let unquoted_null = !field.saw_quote && &line.as_bytes()[start..field.end] == null;
            let span = if !forced {
                if unquoted_null {
                    Span::Null
                } else {
                    field.span
                }
            } else {
                // PostgreSQL's NextCopyFrom: FORCE_NOT_NULL first, else FORCE_NULL.
                let m = self.spans.len();
                let flag = |f: &[bool]| f.get(m).copied().unwrap_or(false);
                if unquoted_null {
                    if flag(&self.opts.force_not_null) {
                        field.span
                    } else {
                        Span::Null
                    }
                } else if flag(&self.opts.force_null) && span_bytes(line, &self.attr, field.span) == null {
                    Span::Null
                } else {
                    field.span
                }
            };
            self.spans.push(span);
            match field.next {
                Some(next) => start = next,
                None => return Ok(()),
            }
        }
    }
}

/// The value a CSV field's span stands for.
fn span_bytes<'a>(line: &'a str, attr: &'a str, span: Span) -> &'a [u8] {
    match span {
        Span::Line(a, b) => &line.as_bytes()[a..b],
        Span::Attr(a, b) => &attr.as_bytes()[a..b],
        Span::Null | Span::Raw(..) => &[],
    }
}

/// Quote state of the CSV line reader, byte for byte as PostgreSQL keeps it.
struct CsvScan {
    quote: u8,
    /// None when the escape is the quote: then quotes simply toggle.
    escape: Option<u8>,
    in_quote: bool,
    last_was_esc: bool,
}

impl CsvScan {
    fn new(quote: u8, escape: u8) -> Self {
        let escape = (escape != quote).then_some(escape);
        CsvScan { quote, escape, in_quote: false, last_was_esc: false }
    }

    /// The next byte that can change the state or end the line.
    fn find(&self, hay: &[u8], count_char: u8) -> Option<usize> {
        match (self.in_quote, self.escape) {
            (false, _) => memchr3(b'\n', b'\r', self.quote, hay),
            (true, Some(e)) => memchr3(self.quote, e, count_char, hay),
            (true, None) => memchr2(self.quote, count_char, hay),
        }
    }

    /// Bytes that are not the escape were passed over.
    fn skipped(&mut self, any: bool) {
        if any {
            self.last_was_esc = false;
        }
    }

    /// Applies byte `c`; true if it is a line ending inside quotes (counted as a line).
    fn step(&mut self, c: u8, count_char: u8) -> bool {
        let is_escape = Some(c) == self.escape;
        if self.in_quote && is_escape {
            self.last_was_esc = !self.last_was_esc;
        }
        if c == self.quote && !self.last_was_esc {
            self.in_quote = !self.in_quote;
        }
        if !is_escape {
            self.last_was_esc = false;
        }
        self.in_quote && c == count_char
    }
}

#[derive(Clone, Copy)]
struct CsvChars {
    delim: u8,
    quote: u8,
    escape: u8,
}

struct CsvField {
    span: Span,
    /// End of the raw field (where the delimiter or line end is).
    end: usize,
    next: Option<usize>,
    saw_quote: bool,
}

/// Parses the field starting at `start`.
fn parse_field(line: &str, start: usize, ch: CsvChars, attr: &mut String) -> Result<CsvField> {
    let b = line.as_bytes();
    let mut value = Value::default();
    let (mut pos, mut run) = (start, start);
    let mut saw_quote = false;
    loop {
        // Outside quotes: up to a delimiter, the line end, or an opening quote.
        let Some(k) = memchr2(ch.delim, ch.quote, &b[pos..]) else {
            value.push(line, run, b.len(), attr);
            return Ok(value.field(start, b.len(), None, saw_quote, attr));
        };
        let q = pos + k;
        value.push(line, run, q, attr);
        if b[q] == ch.delim {
            return Ok(value.field(start, q, Some(q + 1), saw_quote, attr));
        }
        saw_quote = true;
        (pos, run) = in_quotes(line, q + 1, ch, &mut value, attr)?;
    }
}

/// Parses a quoted part starting at `pos` (after the opening quote); returns the
/// position after the closing quote, twice (scan position and start of the next run).
fn in_quotes(line: &str, mut pos: usize, ch: CsvChars, value: &mut Value, attr: &mut String) -> Result<(usize, usize)> {
    let b = line.as_bytes();
    let mut run = pos;
    loop {
        let found = if ch.escape == ch.quote { memchr(ch.quote, &b[pos..]) } else { memchr2(ch.escape, ch.quote, &b[pos..]) };
        let Some(k) = found else {
            return Err(bad_format("unterminated CSV quoted field"));
        };
        let q = pos + k;
        let next = b.get(q + 1).copied();
        if b[q] == ch.escape && (next == Some(ch.escape) || next == Some(ch.quote)) {
            // The escaped character starts the next run.
            value.push(line, run, q, attr);
            run = q + 1;
            pos = q + 2;
        } else if b[q] == ch.quote {
            value.push(line, run, q, attr);
            return Ok((q + 1, q + 1));
        } else {
            pos = q + 1;
        }
    }
}

/// A field value assembled from runs of the line: one run is borrowed, more are copied.
#[derive(Default)]
struct Value {
    single: Option<(usize, usize)>,
    copied_from: Option<usize>,
}

impl Value {
    fn push(&mut self, line: &str, a: usize, b: usize, attr: &mut String) {
        if a == b {
            return;
        }
        if self.copied_from.is_none() {
            let Some((x, y)) = self.single else {
                self.single = Some((a, b));
                return;
            };
            self.copied_from = Some(attr.len());
            attr.push_str(&line[x..y]);
        }
        attr.push_str(&line[a..b]);
    }

    fn field(self, start: usize, end: usize, next: Option<usize>, saw_quote: bool, attr: &str) -> CsvField {
        let span = match (self.copied_from, self.single) {
            (Some(from), _) => Span::Attr(from, attr.len()),
            (None, Some((a, b))) => Span::Line(a, b),
            (None, None) => Span::Line(start, start),
        };
        CsvField { span, end, next, saw_quote }
    }
}

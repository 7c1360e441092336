//! The text format on input: PostgreSQL's `CopyReadLineText` (text mode) and
//! `CopyReadAttributesText`.
//!
//! A line ends at an unescaped `\n`, `\r` or `\r\n` (one style per input). Fields are split
//! at the delimiter; a field whose raw text equals the null string is NULL; otherwise
//! backslash escapes are undone (`\b \f \n \r \t \v`, `\ooo` octal, `\xhh` hex, anything
//! else stands for itself). A field without a backslash borrows the line; de-escaped
//! fields go to `attr` and are checked as UTF-8 (escapes can make any byte).

use std::io::Read;

use memchr::{memchr, memchr2_iter, memchr3};

use super::reader::{CopyReader, Span};
use super::verify_utf8;
use crate::error::Result;

impl<R: Read> CopyReader<R> {
    /// Reads the next text-format line into `self.line`; true when the data ended (end of
    /// input, or `\.`).
    pub(super) fn read_text_line(&mut self) -> Result<bool> {
        let mut i = 0;
        loop {
            let data = self.input.verified();
            let Some(k) = memchr3(b'\n', b'\r', b'\\', &data[i..]) else {
                i = data.len();
                if !self.more()? {
                    self.take_line(i, i)?;
                    return Ok(true);
                }
                continue;
            };
            let p = i + k;
            match data[p] {
                b'\n' => return self.newline_at(p),
                b'\r' => return self.carriage_return_at(p),
                _ => match self.peek(p + 1)? {
                    // A backslash just before the end of data is a data character.
                    None => {
                        self.take_line(p + 1, p + 1)?;
                        return Ok(true);
                    }
                    Some(b'.') => return self.end_marker_at(p),
                    // Whatever follows a backslash is data, even a line ending.
                    Some(_) => i = p + 2,
                },
            }
        }
    }

    /// Splits the current line into fields (`self.spans`).
    pub(super) fn split_text(&mut self) -> Result<()> {
        let fields = TextFields {
            line: &self.line.as_bytes()[self.line_from..self.line_to],
            null: self.opts.null.as_bytes(),
            spans: &mut self.spans,
            attr: &mut self.attr,
            scratch: &mut self.scratch,
        };
        let result = fields.split(self.opts.delimiter);
        result.map_err(|e| self.row_error(e))
    }
}

/// A line being split into fields, and where they go.
struct TextFields<'a> {
    line: &'a [u8],
    null: &'a [u8],
    spans: &'a mut Vec<Span>,
    attr: &'a mut String,
    scratch: &'a mut Vec<u8>,
}

impl TextFields<'_> {
    /// Splits at each delimiter not escaped by a backslash, in one pass over the line.
    fn split(mut self, delim: u8) -> Result<()> {
        let line = self.line;
        let (mut start, mut escaped) = (0, false);
        // A backslash escapes the byte after it: matches before `skip_to` are data.
        let mut skip_to = 0;
        for q in memchr2_iter(delim, b'\\', line) {
            if q < skip_to {
                continue;
            }
            if line[q] == b'\\' {
                (escaped, skip_to) = (true, q + 2);
                continue;
            }
            self.push(start, q, escaped)?;
            (start, escaped) = (q + 1, false);
        }
        // A lone backslash ending the line is not part of the raw field.
        let end = line.len() - usize::from(skip_to > line.len());
        self.push(start, end, escaped)
    }

    /// Adds the field whose raw text is `line[start..end]`.
    fn push(&mut self, start: usize, end: usize, escaped: bool) -> Result<()> {
        let raw = &self.line[start..end];
        let span = if raw == self.null {
            Span::Null
        } else if !escaped {
            Span::Line(start, end)
        } else {
            de_escape(raw, self.scratch);
            let text = verify_utf8(self.scratch)?;
            let from = self.attr.len();
            self.attr.push_str(text);
            Span::Attr(from, self.attr.len())
        };
        self.spans.push(span);
        Ok(())
    }
}

/// Undoes backslash escapes in `raw` into `out`, as `CopyReadAttributesText` does.
fn de_escape(raw: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while let Some(k) = memchr(b'\\', &raw[i..]) {
        out.extend_from_slice(&raw[i..i + k]);
        i += k + 1;
        let Some(&c) = raw.get(i) else { return };
        i += 1;
        let byte = match c {
            b'0'..=b'7' => octal_escape(raw, &mut i, c),
            b'x' => hex_escape(raw, &mut i).unwrap_or(b'x'),
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            other => other,
        };
        out.push(byte);
    }
    out.extend_from_slice(&raw[i..]);
}

/// `\o`, `\oo` or `\ooo`; `first` is the digit after the backslash, `i` indexes the next.
fn octal_escape(raw: &[u8], i: &mut usize, first: u8) -> u8 {
    let mut value = u32::from(first - b'0');
    for _ in 0..2 {
        match raw.get(*i) {
            Some(&d @ b'0'..=b'7') => {
                value = (value << 3) + u32::from(d - b'0');
                *i += 1;
            }
            _ => break,
        }
    }
    // As PostgreSQL's `val & 0377`: `\777` is 0xff.
    (value & 0xff) as u8
}

/// `\xh` or `\xhh`; None (the `x` stands for itself) if no hex digit follows.
fn hex_escape(raw: &[u8], i: &mut usize) -> Option<u8> {
    let first = hex_value(*raw.get(*i)?)?;
    *i += 1;
    let Some(second) = raw.get(*i).and_then(|&d| hex_value(d)) else {
        return Some(first);
    };
    *i += 1;
    Some((first << 4) | second)
}

fn hex_value(d: u8) -> Option<u8> {
    char::from(d).to_digit(16).map(|v| v as u8)
}

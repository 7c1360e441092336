//! `ParseDateTime`: splits a date/time string into typed, lower-cased fields, exactly as
//! PostgreSQL 15 does (including its work-buffer and 25-field limits), without heap
//! allocation.

use super::dt_fields::{DtErr, DtResult};
use super::dt_tokens::keyword;
use super::util::is_space;

/// `MAXDATEFIELDS`.
pub(super) const MAX_FIELDS: usize = 25;
/// Work buffer of `date_in` (`MAXDATELEN + 1`).
pub(crate) const DATE_WORKBUF: usize = 129;
/// Work buffer of `timestamp_in` (`MAXDATELEN + MAXDATEFIELDS`).
pub(crate) const TIMESTAMP_WORKBUF: usize = 153;
/// Work buffer of `interval_in` (256).
pub(crate) const INTERVAL_WORKBUF: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Number,
    String,
    Date,
    Time,
    Tz,
    Special,
}

/// The lower-cased fields of the input, stored like PostgreSQL's `workbuf`.
pub(super) struct Fields {
    buf: [u8; INTERVAL_WORKBUF + 8],
    limit: usize,
    len: usize,
    spans: [(u16, u16, Kind); MAX_FIELDS],
    pub(super) count: usize,
}

impl Fields {
    pub(super) fn text(&self, i: usize) -> &[u8] {
        let (a, b, _) = self.spans[i];
        &self.buf[usize::from(a)..usize::from(b)]
    }

    pub(super) fn kind(&self, i: usize) -> Kind {
        self.spans[i].2
    }

    /// `APPEND_CHAR`: fails when the work buffer is full.
    fn push(&mut self, c: u8) -> DtResult<()> {
        if self.len + 1 >= self.limit {
            return Err(DtErr::BadFormat);
        }
        self.buf[self.len] = c;
        self.len += 1;
        Ok(())
    }

    /// Appends `s[*cp]` (lower-cased) while `pred` holds.
    fn push_while(&mut self, s: &[u8], cp: &mut usize, pred: impl Fn(u8) -> bool) -> DtResult<()> {
        while let Some(&c) = s.get(*cp).filter(|&&c| pred(c)) {
            self.push(c.to_ascii_lowercase())?;
            *cp += 1;
        }
        Ok(())
    }

    pub(super) fn parse(s: &[u8], buflen: usize) -> DtResult<Fields> {
        let mut f = Fields {
            buf: [0; INTERVAL_WORKBUF + 8],
            limit: buflen.min(INTERVAL_WORKBUF),
            len: 0,
            spans: [(0, 0, Kind::Number); MAX_FIELDS],
            count: 0,
        };
        let mut cp = 0;
        while let Some(&c) = s.get(cp) {
            if is_space(c) {
                cp += 1;
                continue;
            }
            if f.count >= MAX_FIELDS {
                return Err(DtErr::BadFormat);
            }
            let starts_field = c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-');
            if !starts_field && is_punct(c) {
                // Other punctuation only delimits fields.
                cp += 1;
                continue;
            }
            let start = f.len;
            let kind = f.field(s, &mut cp)?;
            // The field text is NUL-terminated in PostgreSQL's buffer: one more byte used.
            f.spans[f.count] = (start as u16, f.len as u16, kind);
            f.count += 1;
            f.len += 1;
        }
        Ok(f)
    }

    /// One field starting at `s[*cp]`, which is not whitespace.
    fn field(&mut self, s: &[u8], cp: &mut usize) -> DtResult<Kind> {
        let c = s[*cp];
        if c.is_ascii_digit() {
            self.digit_field(s, cp)
        } else if c == b'.' {
            self.push(c)?;
            *cp += 1;
            self.push_while(s, cp, |c| c.is_ascii_digit())?;
            Ok(Kind::Number)
        } else if c.is_ascii_alphabetic() {
            self.alpha_field(s, cp)
        } else if c == b'+' || c == b'-' {
            self.signed_field(s, cp)
        } else {
            Err(DtErr::BadFormat)
        }
    }

    /// Digits, then a time (`:`), a date (`-`, `/`, `.` delimited) or a plain number.
    fn digit_field(&mut self, s: &[u8], cp: &mut usize) -> DtResult<Kind> {
        self.push_while(s, cp, |c| c.is_ascii_digit())?;
        let next = s.get(*cp).copied().unwrap_or(0);
        if next == b':' {
            self.push(next)?;
            *cp += 1;
            self.push_while(s, cp, |c| c.is_ascii_digit() || c == b':' || c == b'.')?;
            return Ok(Kind::Time);
        }
        if !matches!(next, b'-' | b'/' | b'.') {
            return Ok(Kind::Number);
        }
        let delim = next;
        self.push(delim)?;
        *cp += 1;
        if !s.get(*cp).is_some_and(u8::is_ascii_digit) {
            // Embedded text month, e.g. 2000-jan-01.
            self.push_while(s, cp, |c| c.is_ascii_alphanumeric() || c == delim)?;
            return Ok(Kind::Date);
        }
        self.push_while(s, cp, |c| c.is_ascii_digit())?;
        if s.get(*cp) == Some(&delim) {
            self.push(delim)?;
            *cp += 1;
            self.push_while(s, cp, |c| c.is_ascii_digit() || c == delim)?;
            return Ok(Kind::Date);
        }
        Ok(if delim == b'.' { Kind::Number } else { Kind::Date })
    }

    /// Words; a word glued to punctuation or digits may be a date or a zone name.
    fn alpha_field(&mut self, s: &[u8], cp: &mut usize) -> DtResult<Kind> {
        let start = self.len;
        self.push_while(s, cp, |c| c.is_ascii_alphabetic())?;
        let next = s.get(*cp).copied().unwrap_or(0);
        let is_date = match next {
            b'-' | b'/' | b'.' => true,
            b'+' | b'0'..=b'9' => keyword(&self.buf[start..self.len]).is_none(),
            _ => false,
        };
        if !is_date {
            return Ok(Kind::String);
        }
        self.push(next.to_ascii_lowercase())?;
        *cp += 1;
        self.push_while(s, cp, |c| matches!(c, b'+' | b'-' | b'/' | b'_' | b'.' | b':') || c.is_ascii_alphanumeric())?;
        Ok(Kind::Date)
    }

    /// `+`/`-` then a numeric zone (`-08:00`) or a special word (`-infinity`).
    fn signed_field(&mut self, s: &[u8], cp: &mut usize) -> DtResult<Kind> {
        self.push(s[*cp])?;
        *cp += 1;
        while s.get(*cp).is_some_and(|&c| is_space(c)) {
            *cp += 1;
        }
        match s.get(*cp) {
            Some(c) if c.is_ascii_digit() => {
                self.push(*c)?;
                *cp += 1;
                self.push_while(s, cp, |c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b'-'))?;
                Ok(Kind::Tz)
            }
            Some(c) if c.is_ascii_alphabetic() => {
                self.push_while(s, cp, |c| c.is_ascii_alphabetic())?;
                Ok(Kind::Special)
            }
            _ => Err(DtErr::BadFormat),
        }
    }
}

/// C `ispunct` in the C locale.
fn is_punct(c: u8) -> bool {
    c.is_ascii_punctuation()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(String, Kind)> {
        let f = Fields::parse(s.as_bytes(), TIMESTAMP_WORKBUF).unwrap_or_else(|e| panic!("{e:?}"));
        (0..f.count).map(|i| (String::from_utf8_lossy(f.text(i)).into_owned(), f.kind(i))).collect()
    }

    #[test]
    fn splits_fields() {
        use Kind::*;
        let k = kinds("2001-02-03T04:05:06.5-08 BC");
        let expect = [("2001-02-03", Date), ("t", String), ("04:05:06.5", Time), ("-08", Tz), ("bc", String)];
        let got: Vec<(&str, Kind)> = k.iter().map(|(s, k)| (s.as_str(), *k)).collect();
        assert_eq!(got, expect);
        let k = kinds("20011225T040506.789-07");
        assert_eq!(k[2], ("040506.789".to_string(), Number));
        let k = kinds("-infinity");
        assert_eq!(k[0], ("-infinity".to_string(), Special));
    }

    #[test]
    fn buffer_and_field_limits() {
        let long = "1".repeat(200);
        assert!(Fields::parse(long.as_bytes(), TIMESTAMP_WORKBUF).is_err());
        let ok = "1".repeat(150);
        assert!(Fields::parse(ok.as_bytes(), TIMESTAMP_WORKBUF).is_ok());
        assert!(Fields::parse(ok.as_bytes(), DATE_WORKBUF).is_err());
        let many = "1 ".repeat(26);
        assert!(Fields::parse(many.as_bytes(), TIMESTAMP_WORKBUF).is_err());
    }
}

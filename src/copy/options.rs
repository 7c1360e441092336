//! COPY's option list turned into [`CopyOptions`], validated in the order and with the
//! messages of PostgreSQL 15's `ProcessCopyOptions` (src/backend/commands/copy.c).
//!
//! Invariants of a `CopyOptions` returned by [`CopyOptions::from_pairs`]:
//! - `delimiter`, `quote` and `escape` are single ASCII bytes; the delimiter is never `\r`
//!   or `\n`, and in text format never a backslash, a period, a lower-case letter or a digit;
//! - in CSV format the delimiter differs from the quote, and the null string contains
//!   neither the delimiter nor the quote; in text format it does not contain the delimiter;
//! - the null string contains no `\r` or `\n`;
//! - FORCE_QUOTE is given only for CSV COPY TO, FORCE_NOT_NULL and FORCE_NULL only for CSV
//!   COPY FROM; their per-column flags are empty or as long as the COPY's column list
//!   (`copy::exec` resolves the names).

use crate::error::{sqlstate, PgError, Result};

/// The three COPY data formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFormat {
    Text,
    Csv,
    Binary,
}

/// The options that shape COPY data, with PostgreSQL's defaults filled in.
#[derive(Clone, Debug)]
pub struct CopyOptions {
    pub format: CopyFormat,
    /// Field separator: tab for text, comma for CSV (unused in binary).
    pub delimiter: u8,
    /// The string that stands for SQL NULL: `\N` for text, empty for CSV.
    pub null: String,
    /// Text/CSV: a header line is skipped on input and written on output.
    pub header: bool,
    /// CSV quote character (default `"`); unused otherwise.
    pub quote: u8,
    /// CSV escape character (defaults to the quote); unused otherwise.
    pub escape: u8,
    /// `FREEZE`: allowed only into a table created or truncated in the same transaction
    /// (`copy::exec` checks). heapstore then writes the rows as any COPY does, with the loading
    /// transaction's xid: they become visible at its commit (PostgreSQL's frozen rows are also
    /// visible to older snapshots after a TRUNCATE, which the documentation calls a violation
    /// of MVCC; heapstore keeps MVCC).
    pub freeze: bool,
    /// CSV COPY TO, `FORCE_QUOTE`: for each column of the COPY, whether its non-NULL values
    /// are always quoted (empty: none is).
    pub force_quote: Vec<bool>,
    /// CSV COPY FROM, `FORCE_NOT_NULL`: for each column of the COPY, whether an unquoted
    /// null string is that string rather than NULL (empty: none).
    pub force_not_null: Vec<bool>,
    /// CSV COPY FROM, `FORCE_NULL`: for each column of the COPY, whether a quoted value equal
    /// to the null string is NULL too (empty: none).
    pub force_null: Vec<bool>,
}

/// FORCE_QUOTE / FORCE_NOT_NULL / FORCE_NULL as written: column names, `*` for FORCE_QUOTE.
#[derive(Clone, Debug, Default)]
pub struct ForceOptions {
    /// `Some(None)`: `FORCE_QUOTE *`.
    pub quote: Option<Option<Vec<String>>>,
    pub not_null: Option<Vec<String>>,
    pub null: Option<Vec<String>>,
}

impl ForceOptions {
    /// Records one FORCE option (`cols` None: `*`), refusing a repeated one.
    pub fn set(&mut self, name: &str, cols: Option<Vec<String>>) -> Result<()> {
        let star =
            || PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("argument to option \"{name}\" must be a list of column names"));
        match name {
            "force_quote" => {
                check_unset(self.quote.is_some())?;
                self.quote = Some(cols);
            }
            "force_not_null" => {
                check_unset(self.not_null.is_some())?;
                self.not_null = Some(cols.ok_or_else(star)?);
            }
            _ => {
                check_unset(self.null.is_some())?;
                self.null = Some(cols.ok_or_else(star)?);
            }
        }
        Ok(())
    }

    /// The per-column flags for a COPY whose columns are `names` (in COPY order): each name
    /// must be a column of the relation (`exists`) and one the COPY reads or writes.
    pub fn resolve(&self, opts: &mut CopyOptions, names: &[String], exists: impl Fn(&str) -> Result<()>) -> Result<()> {
        let flags = |list: &[String], what: &str| -> Result<Vec<bool>> {
            let mut f = vec![false; names.len()];
            for n in list {
                exists(n)?;
                let Some(i) = names.iter().position(|c| c == n) else {
                    return Err(PgError::new("42P10", format!("{what} column \"{n}\" not referenced by COPY")));
                };
                f[i] = true;
            }
            Ok(f)
        };
        match &self.quote {
            Some(None) => opts.force_quote = vec![true; names.len()],
            Some(Some(list)) => opts.force_quote = flags(list, "FORCE_QUOTE")?,
            None => {}
        }
        if let Some(list) = &self.not_null {
            opts.force_not_null = flags(list, "FORCE_NOT_NULL")?;
        }
        if let Some(list) = &self.null {
            opts.force_null = flags(list, "FORCE_NULL")?;
        }
        Ok(())
    }
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions::for_format(CopyFormat::Text)
    }
}

impl CopyOptions {
    /// PostgreSQL's defaults for `format`.
    pub fn for_format(format: CopyFormat) -> CopyOptions {
        let csv = format == CopyFormat::Csv;
        CopyOptions {
            format,
            delimiter: if csv { b',' } else { b'\t' },
            null: if csv { String::new() } else { "\\N".to_string() },
            header: false,
            quote: b'"',
            escape: b'"',
            freeze: false,
            force_quote: Vec::new(),
            force_not_null: Vec::new(),
            force_null: Vec::new(),
        }
    }

    /// Builds options from COPY's option list as the SQL parser hands it over: option
    /// names lowercased, values as written (`None` when the option had no argument).
    ///
    /// Supported: `format`, `delimiter`, `null`, `header`, `quote`, `escape`, `freeze`,
    /// `encoding` (only UTF8). `header match` is rejected with 0A000; `force_quote`,
    /// `force_not_null` and `force_null` take column lists ([`CopyOptions::with_forces`]).
    pub fn from_pairs(pairs: &[(String, Option<String>)]) -> Result<CopyOptions> {
        CopyOptions::with_forces(pairs, &ForceOptions::default(), true)
    }

    /// As [`CopyOptions::from_pairs`], with the FORCE options and the direction (`from`:
    /// COPY FROM) they are checked against; their columns are resolved later
    /// ([`ForceOptions::resolve`]).
    pub fn with_forces(pairs: &[(String, Option<String>)], forces: &ForceOptions, from: bool) -> Result<CopyOptions> {
        let mut raw = RawOptions::default();
        for (name, value) in pairs {
            raw.set(name, value.as_deref().map(c_string))?;
        }
        raw.finish(forces, from)
    }
}

/// The options as given, before defaults and cross-checks (PostgreSQL's `opts_out` while
/// the option loop runs).
#[derive(Default)]
struct RawOptions {
    format: Option<CopyFormat>,
    freeze: Option<bool>,
    delimiter: Option<String>,
    null: Option<String>,
    header: Option<bool>,
    quote: Option<String>,
    escape: Option<String>,
    encoding: bool,
}

impl RawOptions {
    fn set(&mut self, name: &str, value: Option<&str>) -> Result<()> {
        match name {
            "format" => {
                let fmt = def_string(name, value)?;
                check_unset(self.format.is_some())?;
                self.format = Some(parse_format(fmt)?);
            }
            "freeze" => {
                check_unset(self.freeze.is_some())?;
                let freeze = def_boolean(name, value)?;
                self.freeze = Some(freeze);
            }
            "delimiter" => set_string(&mut self.delimiter, name, value)?,
            "null" => set_string(&mut self.null, name, value)?,
            "quote" => set_string(&mut self.quote, name, value)?,
            "escape" => set_string(&mut self.escape, name, value)?,
            "header" => {
                check_unset(self.header.is_some())?;
                self.header = Some(def_header(name, value)?);
            }
            "encoding" => {
                check_unset(self.encoding)?;
                self.encoding = true;
                check_encoding(def_string(name, value)?)?;
            }
            // A plain value where a column list belongs.
            "force_quote" | "force_not_null" | "force_null" => {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("argument to option \"{name}\" must be a list of column names"),
                ));
            }
            _ => return Err(PgError::syntax(format!("option \"{name}\" not recognized"))),
        }
        Ok(())
    }

    /// Defaults and the cross-option checks, in PostgreSQL's order.
    fn finish(self, forces: &ForceOptions, from: bool) -> Result<CopyOptions> {
        let format = self.format.unwrap_or(CopyFormat::Text);
        let (csv, binary) = (format == CopyFormat::Csv, format == CopyFormat::Binary);
        if binary && self.delimiter.is_some() {
            return Err(PgError::syntax("cannot specify DELIMITER in BINARY mode"));
        }
        if binary && self.null.is_some() {
            return Err(PgError::syntax("cannot specify NULL in BINARY mode"));
        }
        let defaults = CopyOptions::for_format(format);
        let delim = self.delimiter.unwrap_or_else(|| char_string(defaults.delimiter));
        let null = self.null.unwrap_or(defaults.null);
        check_delimiter(&delim, &null, csv)?;
        if binary && self.header == Some(true) {
            return Err(PgError::feature("cannot specify HEADER in BINARY mode"));
        }
        let delimiter = delim.as_bytes()[0];
        let (quote, escape) = check_quote_escape(csv, delimiter, self.quote, self.escape)?;
        check_forces(forces, csv, from)?;
        if null.as_bytes().contains(&delimiter) {
            return Err(PgError::feature("COPY delimiter must not appear in the NULL specification"));
        }
        if csv && null.as_bytes().contains(&quote) {
            return Err(PgError::feature("CSV quote character must not appear in the NULL specification"));
        }
        Ok(CopyOptions {
            format,
            delimiter,
            null,
            header: self.header.unwrap_or(false),
            quote,
            escape,
            freeze: self.freeze.unwrap_or(false),
            force_quote: Vec::new(),
            force_not_null: Vec::new(),
            force_null: Vec::new(),
        })
    }
}

/// PostgreSQL's checks of the FORCE options against the format and the direction.
fn check_forces(f: &ForceOptions, csv: bool, from: bool) -> Result<()> {
    for (given, what, needs_from) in
        [(f.quote.is_some(), "force quote", false), (f.not_null.is_some(), "force not null", true), (f.null.is_some(), "force null", true)]
    {
        if !given {
            continue;
        }
        if !csv {
            return Err(PgError::feature(format!("COPY {what} available only in CSV mode")));
        }
        if needs_from != from {
            let using = if needs_from { "COPY FROM" } else { "COPY TO" };
            return Err(PgError::feature(format!("COPY {what} only available using {using}")));
        }
    }
    Ok(())
}

fn check_delimiter(delim: &str, null: &str, csv: bool) -> Result<()> {
    if delim.len() != 1 {
        return Err(PgError::feature("COPY delimiter must be a single one-byte character"));
    }
    if delim.contains(['\r', '\n']) {
        return Err(invalid("COPY delimiter cannot be newline or carriage return"));
    }
    if null.contains(['\r', '\n']) {
        return Err(invalid("COPY null representation cannot use newline or carriage return"));
    }
    if !csv && "\\.abcdefghijklmnopqrstuvwxyz0123456789".contains(delim) {
        return Err(invalid(format!("COPY delimiter cannot be \"{delim}\"")));
    }
    Ok(())
}

/// The quote and escape checks; returns the bytes to use (defaults for text/binary).
fn check_quote_escape(csv: bool, delimiter: u8, quote: Option<String>, escape: Option<String>) -> Result<(u8, u8)> {
    if !csv && quote.is_some() {
        return Err(PgError::feature("COPY quote available only in CSV mode"));
    }
    let quote = quote.unwrap_or_else(|| "\"".to_string());
    if quote.len() != 1 {
        return Err(PgError::feature("COPY quote must be a single one-byte character"));
    }
    if csv && delimiter == quote.as_bytes()[0] {
        return Err(invalid("COPY delimiter and quote must be different"));
    }
    if !csv && escape.is_some() {
        return Err(PgError::feature("COPY escape available only in CSV mode"));
    }
    let escape = escape.unwrap_or_else(|| quote.clone());
    if escape.len() != 1 {
        return Err(PgError::feature("COPY escape must be a single one-byte character"));
    }
    Ok((quote.as_bytes()[0], escape.as_bytes()[0]))
}

fn parse_format(fmt: &str) -> Result<CopyFormat> {
    match fmt {
        "text" => Ok(CopyFormat::Text),
        "csv" => Ok(CopyFormat::Csv),
        "binary" => Ok(CopyFormat::Binary),
        _ => Err(invalid(format!("COPY format \"{fmt}\" not recognized"))),
    }
}

fn set_string(slot: &mut Option<String>, name: &str, value: Option<&str>) -> Result<()> {
    check_unset(slot.is_some())?;
    *slot = Some(def_string(name, value)?.to_string());
    Ok(())
}

/// PostgreSQL's `errorConflictingDefElem` for an option given twice.
fn check_unset(already_set: bool) -> Result<()> {
    if already_set {
        Err(conflicting())
    } else {
        Ok(())
    }
}

/// PostgreSQL's `defGetString`: the option needs an argument.
fn def_string<'a>(name: &str, value: Option<&'a str>) -> Result<&'a str> {
    value.ok_or_else(|| PgError::syntax(format!("{name} requires a parameter")))
}

/// PostgreSQL's `defGetBoolean`: no argument means true.
fn def_boolean(name: &str, value: Option<&str>) -> Result<bool> {
    match value.map(parse_bool) {
        None => Ok(true),
        Some(Some(b)) => Ok(b),
        Some(None) => Err(PgError::syntax(format!("{name} requires a Boolean value"))),
    }
}

/// PostgreSQL's `defGetCopyHeaderChoice`; `match` is recognised but not supported.
fn def_header(name: &str, value: Option<&str>) -> Result<bool> {
    let Some(v) = value else { return Ok(true) };
    if let Some(b) = parse_bool(v) {
        return Ok(b);
    }
    if v.eq_ignore_ascii_case("match") {
        return Err(PgError::feature("COPY HEADER MATCH is not supported"));
    }
    Err(PgError::syntax(format!("{name} requires a Boolean value or \"match\"")))
}

fn parse_bool(v: &str) -> Option<bool> {
    const TRUE: [&str; 3] = ["true", "on", "1"];
    const FALSE: [&str; 3] = ["false", "off", "0"];
    if TRUE.iter().any(|t| v.eq_ignore_ascii_case(t)) {
        Some(true)
    } else if FALSE.iter().any(|f| v.eq_ignore_ascii_case(f)) {
        Some(false)
    } else {
        None
    }
}

/// Encoding names PostgreSQL knows (`pg_encname_tbl`), lower-cased with everything but
/// letters and digits removed, as `pg_char_to_encoding` compares them.
#[rustfmt::skip]
const KNOWN_ENCODINGS: &[&str] = &[
    "abc", "alt", "big5", "euccn", "eucjis2004", "eucjp", "euckr", "euctw", "gb18030", "gbk",
    "iso88591", "iso885910", "iso885913", "iso885914", "iso885915", "iso885916", "iso88595",
    "iso88596", "iso88597", "iso88598", "iso88599", "johab", "koi8", "koi8r", "koi8u", "latin1",
    "latin10", "latin2", "latin3", "latin4", "latin5", "latin6", "latin7", "latin8", "latin9",
    "mskanji", "muleinternal", "shiftjis", "shiftjis2004", "sjis", "sqlascii", "tcvn",
    "tcvn5712", "uhc", "unicode", "utf8", "vscii", "win", "win1250", "win1251", "win1252",
    "win1253", "win1254", "win1255", "win1256", "win1257", "win1258", "win866", "win874",
    "win932", "win936", "win949", "win950", "windows1250", "windows1251", "windows1252",
    "windows1253", "windows1254", "windows1255", "windows1256", "windows1257", "windows1258",
    "windows866", "windows874", "windows932", "windows936", "windows949", "windows950",
];

/// Only UTF8 data is supported; other known encodings are 0A000, unknown names 22023.
fn check_encoding(name: &str) -> Result<()> {
    let clean: String = name.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect();
    if clean == "utf8" || clean == "unicode" {
        Ok(())
    } else if KNOWN_ENCODINGS.contains(&clean.as_str()) {
        Err(PgError::feature(format!("COPY ENCODING \"{name}\" is not supported"))
            .with_hint("heapstore reads and writes COPY data in UTF8 only."))
    } else {
        Err(invalid("argument to option \"encoding\" must be a valid encoding name"))
    }
}

fn conflicting() -> PgError {
    PgError::syntax("conflicting or redundant options")
}

fn invalid(message: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, message)
}

fn char_string(b: u8) -> String {
    char::from(b).to_string()
}

/// Option values are C strings in PostgreSQL: anything from a NUL on is not seen.
fn c_string(s: &str) -> &str {
    s.split('\0').next().unwrap_or("")
}

//! Errors in PostgreSQL's shape: a SQLSTATE, a primary message, and optional DETAIL, HINT
//! and CONTEXT lines.
//!
//! Every fallible engine entry point returns [`Result<T>`]. The `Display` form is what psql
//! prints:
//!
//! ```text
//! ERROR:  invalid input syntax for type boolean: "maybe"
//! CONTEXT:  COPY types, line 3, column flag: "maybe"
//! ```
//!
//! Invariants:
//! 1. `code` is always a five-character SQLSTATE from PostgreSQL's errcodes.txt for the same
//!    condition, so that the wire protocol (a later issue) can pass it through unchanged.
//! 2. The message names what is wrong and the offending value; where the error arises at a
//!    place (a COPY line, a relation block), CONTEXT names the place.

use std::fmt;

/// SQLSTATE codes used by heapstore, named as in PostgreSQL's errcodes.txt.
pub mod sqlstate {
    pub const SUCCESSFUL_COMPLETION: &str = "00000";
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
    pub const STRING_DATA_RIGHT_TRUNCATION: &str = "22001";
    pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
    pub const DIVISION_BY_ZERO: &str = "22012";
    pub const INVALID_ARGUMENT_FOR_LOG: &str = "2201E";
    pub const INVALID_ARGUMENT_FOR_POWER_FUNCTION: &str = "2201F";
    pub const INVALID_DATETIME_FORMAT: &str = "22007";
    pub const DATETIME_FIELD_OVERFLOW: &str = "22008";
    pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
    pub const INVALID_BINARY_REPRESENTATION: &str = "22P03";
    pub const BAD_COPY_FILE_FORMAT: &str = "22P04";
    pub const UNTRANSLATABLE_CHARACTER: &str = "22P05";
    pub const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";
    pub const DATA_EXCEPTION: &str = "22000";
    pub const NOT_NULL_VIOLATION: &str = "23502";
    pub const INVALID_TRANSACTION_STATE: &str = "25000";
    pub const DEADLOCK_DETECTED: &str = "40P01";
    pub const PROTOCOL_VIOLATION: &str = "08P01";
    pub const INVALID_TIME_ZONE_DISPLACEMENT_VALUE: &str = "22009";
    pub const ACTIVE_SQL_TRANSACTION: &str = "25001";
    pub const READ_ONLY_SQL_TRANSACTION: &str = "25006";
    pub const CHECK_VIOLATION: &str = "23514";
    pub const SERIALIZATION_FAILURE: &str = "40001";
    pub const NO_ACTIVE_SQL_TRANSACTION: &str = "25P01";
    pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
    pub const INVALID_SAVEPOINT_SPECIFICATION: &str = "3B001";
    pub const SYNTAX_ERROR: &str = "42601";
    pub const UNDEFINED_TABLE: &str = "42P01";
    pub const UNDEFINED_COLUMN: &str = "42703";
    pub const UNDEFINED_OBJECT: &str = "42704";
    pub const DUPLICATE_TABLE: &str = "42P07";
    pub const DUPLICATE_COLUMN: &str = "42701";
    pub const INVALID_TABLE_DEFINITION: &str = "42P16";
    pub const DATATYPE_MISMATCH: &str = "42804";
    pub const CONNECTION_FAILURE: &str = "08006";
    pub const INSUFFICIENT_PRIVILEGE: &str = "42501";
    pub const INVALID_AUTHORIZATION_SPECIFICATION: &str = "28000";
    pub const INVALID_PASSWORD: &str = "28P01";
    pub const TOO_MANY_CONNECTIONS: &str = "53300";
    pub const QUERY_CANCELED: &str = "57014";
    pub const ADMIN_SHUTDOWN: &str = "57P01";
    pub const INVALID_SQL_STATEMENT_NAME: &str = "26000";
    pub const INVALID_CURSOR_NAME: &str = "34000";
    pub const DUPLICATE_PSTATEMENT: &str = "42P05";
    pub const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
    pub const INSUFFICIENT_RESOURCES: &str = "53000";
    pub const DISK_FULL: &str = "53100";
    pub const OUT_OF_MEMORY: &str = "53200";
    pub const CONFIGURATION_LIMIT_EXCEEDED: &str = "53400";
    pub const OBJECT_IN_USE: &str = "55006";
    pub const LOCK_NOT_AVAILABLE: &str = "55P03";
    pub const CANT_CHANGE_RUNTIME_PARAM: &str = "55P02";
    pub const IO_ERROR: &str = "58030";
    pub const UNDEFINED_FILE: &str = "58P01";
    pub const DATA_CORRUPTED: &str = "XX001";
    pub const INDEX_CORRUPTED: &str = "XX002";
    pub const INTERNAL_ERROR: &str = "XX000";
    pub const UNDEFINED_PARAMETER: &str = "42704";
    /// `there is no parameter $N` (PostgreSQL's undefined_parameter).
    pub const UNDEFINED_PARAMETER_NUMBER: &str = "42P02";
}

/// An error in PostgreSQL's ERROR / DETAIL / HINT / CONTEXT shape: its fields
/// ([`ErrorData`]) behind one pointer, so that a `Result<T>` is as small as `T` and its
/// carrier on the hot paths (every evaluated expression returns one) stays in registers.
/// The fields read and write through it as its own (`e.code`, `e.detail = ...`).
#[derive(Clone, PartialEq, Eq)]
pub struct PgError(Box<ErrorData>);

impl std::ops::Deref for PgError {
    type Target = ErrorData;
    #[inline]
    fn deref(&self) -> &ErrorData {
        &self.0
    }
}

impl std::ops::DerefMut for PgError {
    #[inline]
    fn deref_mut(&mut self) -> &mut ErrorData {
        &mut self.0
    }
}

impl fmt::Debug for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<ErrorData> for PgError {
    fn from(d: ErrorData) -> PgError {
        PgError(Box::new(d))
    }
}

impl PgError {
    /// The error's fields, owned.
    pub fn into_data(self) -> ErrorData {
        *self.0
    }
}

/// The fields of a [`PgError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorData {
    /// Five-character SQLSTATE, e.g. `"22P02"`.
    pub code: &'static str,
    /// The primary message, without the `ERROR:` prefix.
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// Where it happened, e.g. `COPY types, line 3, column flag: "maybe"` (a boxed str: the
    /// error stays within 128 bytes).
    pub context: Option<Box<str>>,
    /// Severity PANIC: the error struck inside a critical section (memory and disk may
    /// disagree), so the database stopped and must be reopened, which runs crash recovery.
    /// Whether the statement's effects survive is unknown to the caller, as after a crash.
    pub panic: bool,
    /// Where in the statement's text the error is (ErrorResponse's `P`: a 1-based character
    /// position; 0 for none), for syntax errors and unknown columns and relations. Read it
    /// with [`PgError::char_position`] (a line and column may be pending: [`PgError::at`]).
    pub position: u32,
    /// PostgreSQL's error fields naming the objects the error is about (boxed: most errors
    /// have none, and the error stays small).
    pub objects: Option<Box<ErrorObjects>>,
}

/// PostgreSQL's error fields schema (`s`), table (`t`), column (`c`) and constraint (`n`);
/// drivers expose them (psycopg's `diag.constraint_name`, node-postgres' `constraint`, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorObjects {
    pub schema: Option<String>,
    pub table: Option<String>,
    pub column: Option<String>,
    pub constraint: Option<String>,
}

pub type Result<T, E = PgError> = std::result::Result<T, E>;

/// [`PgError::position`]'s mark for a line and column not yet turned into a position.
const POSITION_PENDING: u32 = 1 << 31;
/// With [`POSITION_PENDING`]: the position is the first character at or after the line and
/// column past blanks, `)` and `::type` casts ([`PgError::at_next`]).
const POSITION_NEXT: u32 = 1 << 30;
/// Lines a pending position can name (14 bits).
const PENDING_LINES: u64 = 1 << 14;

/// How many characters of `s` come before the operator that follows an operand's end: blanks,
/// closing parentheses, and `::type` casts (a type name of one or more words, `"quoted"` or
/// dotted, stopping before a keyword operator such as NOT IN or LIKE; then a parenthesized
/// modifier and `[]`s).
fn skip_to_operator(s: &[char]) -> usize {
    const KEYWORDS: &[&str] = &["not", "in", "like", "ilike", "similar", "between", "is", "and", "or", "collate", "at", "overlaps"];
    let word_end = |mut i: usize| {
        if s.get(i) == Some(&'"') {
            i += 1;
            while i < s.len() && s[i] != '"' {
                i += 1;
            }
            return (i + 1).min(s.len());
        }
        while i < s.len() && (s[i].is_alphanumeric() || matches!(s[i], '_' | '.')) {
            i += 1;
        }
        i
    };
    let mut i = 0;
    loop {
        while i < s.len() && (s[i].is_whitespace() || s[i] == ')') {
            i += 1;
        }
        if !(i + 1 < s.len() && s[i] == ':' && s[i + 1] == ':') {
            return i;
        }
        i += 2;
        while i < s.len() && s[i].is_whitespace() {
            i += 1;
        }
        // The type's words (`double precision`, `timestamp with time zone`).
        loop {
            let end = word_end(i);
            if end == i {
                break;
            }
            i = end;
            let mut k = i;
            while k < s.len() && s[k].is_whitespace() {
                k += 1;
            }
            let next: String = s[k..word_end(k)].iter().collect::<String>().to_ascii_lowercase();
            if k == i || next.is_empty() || KEYWORDS.contains(&next.as_str()) {
                break;
            }
            i = k;
        }
        if i < s.len() && s[i] == '(' {
            while i < s.len() && s[i] != ')' {
                i += 1;
            }
            i += 1;
        }
        while i + 1 < s.len() && s[i] == '[' && s[i + 1] == ']' {
            i += 2;
        }
    }
}

impl PgError {
    /// Names the table the error is about, and its schema: `public`, or none for a session's
    /// temporary table (whose schema, `pg_temp_N`, only its session knows).
    pub fn with_table(mut self, table: &crate::catalog::Table) -> Self {
        let o = self.objects.get_or_insert_with(Default::default);
        o.schema = (!table.is_temp()).then(|| "public".into());
        o.table = Some(table.name.clone());
        self
    }

    /// Names the column the error is about.
    pub fn with_column(mut self, column: &str) -> Self {
        self.objects.get_or_insert_with(Default::default).column = Some(column.to_string());
        self
    }

    /// Names the constraint the error is about.
    pub fn with_constraint(mut self, constraint: &str) -> Self {
        self.objects.get_or_insert_with(Default::default).constraint = Some(constraint.to_string());
        self
    }

    /// Marks where in the statement's text the error is, as the parser's line and column
    /// (1-based); [`PgError::resolve_position`] turns it into the character position once
    /// the text is at hand. An error that has a position keeps it.
    pub fn at(mut self, loc: sqlparser::tokenizer::Location) -> Self {
        if self.position == 0 && (1..PENDING_LINES).contains(&loc.line) && (1..65_536).contains(&loc.column) {
            self.position = POSITION_PENDING | ((loc.line as u32) << 16) | loc.column as u32;
        }
        self
    }

    /// As [`PgError::at`], at the first character from `loc` on past blanks, `)` and
    /// `::type` casts: an operator's position from the end of its left operand (whose span
    /// leaves out a closing parenthesis and a cast's type).
    pub fn at_next(mut self, loc: sqlparser::tokenizer::Location) -> Self {
        if self.position == 0 {
            self = self.at(loc);
            if self.position & POSITION_PENDING != 0 {
                self.position |= POSITION_NEXT;
            }
        }
        self
    }

    /// Turns a line and column marked by [`PgError::at`] into the 1-based character position
    /// in `text` (None: the text the location refers to is not at hand, so no position).
    pub fn resolve_position(&mut self, text: Option<&str>) {
        if self.position & POSITION_PENDING == 0 {
            return;
        }
        let next = self.position & POSITION_NEXT != 0;
        let bits = self.position & !(POSITION_PENDING | POSITION_NEXT);
        let (line, col) = ((bits >> 16) as usize, (bits & 0xffff) as usize);
        self.position = text
            .and_then(|t| {
                let lines: Vec<&str> = t.split_inclusive('\n').collect();
                let l = lines.get(line - 1)?;
                let p = (col <= l.chars().count() + 1).then(|| lines[..line - 1].iter().map(|x| x.chars().count()).sum::<usize>() + col)?;
                if !next {
                    return Some(p);
                }
                let rest: Vec<char> = t.chars().skip(p - 1).collect();
                let skipped = skip_to_operator(&rest);
                (skipped < rest.len()).then_some(p + skipped)
            })
            .map_or(0, |p| p as u32);
    }

    /// The 1-based character position of the error in its statement's text, if known.
    pub fn char_position(&self) -> Option<u32> {
        (self.position > 0 && self.position & POSITION_PENDING == 0).then_some(self.position)
    }

    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        PgError(Box::new(ErrorData {
            code,
            message: message.into(),
            detail: None,
            hint: None,
            context: None,
            panic: false,
            position: 0,
            objects: None,
        }))
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Sets CONTEXT unless one is already set: the innermost place wins, as in PostgreSQL's
    /// error context stack where the first callback prints the most specific place.
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        if self.context.is_none() {
            self.context = Some(context.into().into_boxed_str());
        }
        self
    }

    /// Adds an outer CONTEXT line after any the error already has (PostgreSQL stacks them
    /// innermost first: `JSON data, line 1: {a...` then `COPY t, line 2, column j: "{a}"`).
    pub fn add_context(mut self, outer: impl Into<String>) -> Self {
        let outer = outer.into();
        self.context = Some(match self.context.take() {
            Some(inner) => format!("{inner}\n{outer}").into_boxed_str(),
            None => outer.into_boxed_str(),
        });
        self
    }

    /// An I/O error on a named file, with the operation that failed.
    pub fn io(op: &str, path: &std::path::Path, err: std::io::Error) -> Self {
        let code = match err.raw_os_error() {
            Some(libc::ENOSPC) => sqlstate::DISK_FULL,
            Some(libc::ENOENT) => sqlstate::UNDEFINED_FILE,
            _ => sqlstate::IO_ERROR,
        };
        PgError::new(code, format!("could not {op} file \"{}\": {err}", path.display()))
    }

    /// This error, raised to PANIC (see [`PgError::panic`]).
    pub fn into_panic(mut self) -> Self {
        self.panic = true;
        self
    }

    pub fn internal(message: impl Into<String>) -> Self {
        PgError::new(sqlstate::INTERNAL_ERROR, message)
    }

    pub fn syntax(message: impl Into<String>) -> Self {
        PgError::new(sqlstate::SYNTAX_ERROR, message)
    }

    pub fn feature(message: impl Into<String>) -> Self {
        PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, message)
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:  {}", if self.panic { "PANIC" } else { "ERROR" }, self.message)?;
        if let Some(d) = &self.detail {
            write!(f, "\nDETAIL:  {d}")?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\nHINT:  {h}")?;
        }
        if let Some(c) = &self.context {
            write!(f, "\nCONTEXT:  {c}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PgError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_has_postgres_shape() {
        let e = PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "bad")
            .with_detail("d")
            .with_context("COPY t, line 1")
            .with_context("outer");
        assert_eq!(e.to_string(), "ERROR:  bad\nDETAIL:  d\nCONTEXT:  COPY t, line 1");
    }
}

//! SQL cursors' FETCH and MOVE: their directions as PostgreSQL's grammar reads them
//! (`fetch_args`), and what each does on a forward-only cursor.
//!
//! heapstore's cursors are NO SCROLL: their rows are read once, in order. A direction that
//! needs a row already passed (PRIOR, BACKWARD, LAST, a negative count, ABSOLUTE at or before
//! the position, a count of 0 or RELATIVE 0 between the first and the last row) fails with
//! PostgreSQL's 55000 for a NO SCROLL cursor; every other direction gives PostgreSQL's
//! answer, row counts in the command tag included.
//!
//! Invariants:
//! 1. A cursor's position is the number of rows read from it so far (returned or skipped);
//!    `at_end` is set once a read asked for more rows than were left, and stays set.
//! 2. [`plan`] decides from the position alone, before any row is read: a refused direction
//!    moves nothing.

use crate::error::{sqlstate, PgError, Result};

/// Where a FETCH or MOVE goes (PostgreSQL's `FetchDirection` with its count: a negative count
/// turns FORWARD into BACKWARD and back, PRIOR is BACKWARD 1, FIRST and LAST are ABSOLUTE 1
/// and -1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// NEXT, FORWARD, a count, FORWARD count, ALL and FORWARD ALL (`ALL`).
    Forward(u64),
    /// PRIOR, BACKWARD [count | ALL].
    Backward(u64),
    Absolute(i64),
    Relative(i64),
}

/// FETCH ALL's count.
pub(crate) const ALL: u64 = u64::MAX;

/// A cursor's place in its rows (invariant 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Position {
    pub read: u64,
    pub at_end: bool,
}

/// What one FETCH or MOVE does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Read `skip` rows, then `take` more (returned by FETCH, counted by MOVE). `lands`:
    /// ABSOLUTE / RELATIVE, for which MOVE reports whether it landed on a row (1 or 0).
    Read { skip: u64, take: u64, lands: bool },
    /// Read nothing; MOVE reports this count.
    Stay(u64),
}

pub(crate) fn forward_only() -> PgError {
    PgError::new("55000", "cursor can only scan forward").with_hint("Declare it with SCROLL option to enable backward scan.")
}

/// What `dir` does at `pos` for a FETCH or a MOVE (`is_move`), as PostgreSQL's
/// DoPortalRunFetch does on a NO SCROLL cursor (invariant 2), or 55000 where that would go
/// back: re-reading the current row, rewinding once a row was read or the end was reached.
pub(crate) fn plan(dir: Direction, pos: Position, is_move: bool) -> Result<Step> {
    let on_row = pos.read > 0 && !pos.at_end;
    let at_start = pos.read == 0 && !pos.at_end;
    let read = |skip: u64, take: u64, lands: bool| Ok(Step::Read { skip, take, lands });
    match dir {
        // A count of 0 re-reads the current row: MOVE only says whether there is one.
        Direction::Forward(0) | Direction::Relative(0) if is_move => Ok(Step::Stay(u64::from(on_row))),
        Direction::Backward(0) if is_move => Ok(Step::Stay(u64::from(on_row))),
        Direction::Forward(0) | Direction::Relative(0) if !on_row => read(0, 0, false),
        Direction::Forward(0) | Direction::Relative(0) | Direction::Backward(0) => Err(forward_only()),
        Direction::Forward(n) => read(0, n, false),
        // MOVE BACKWARD ALL rewinds, which costs nothing before the first row.
        Direction::Backward(ALL) if is_move && at_start => Ok(Step::Stay(0)),
        Direction::Backward(_) => Err(forward_only()),
        Direction::Relative(n) if n > 0 => read(n as u64 - 1, 1, true),
        Direction::Relative(_) => Err(forward_only()),
        Direction::Absolute(0) if at_start => read(0, 0, true),
        Direction::Absolute(n) if n > 0 => {
            let n = n as u64;
            if n - 1 <= pos.read / 2 {
                // PostgreSQL rewinds and reads forward: only before anything was read.
                if at_start {
                    read(n - 1, 1, true)
                } else {
                    Err(forward_only())
                }
            } else {
                let here = pos.read + u64::from(pos.at_end);
                if n <= here {
                    Err(forward_only())
                } else {
                    read(n - here - 1, 1, true)
                }
            }
        }
        Direction::Absolute(_) => Err(forward_only()),
    }
}

/// PostgreSQL's reserved keywords, and those that may name only types and functions: never a
/// cursor's name unquoted.
#[rustfmt::skip]
const RESERVED: &[&str] = &[
    "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both", "case", "cast", "check", "collate", "column",
    "constraint", "create", "current_catalog", "current_date", "current_role", "current_time", "current_timestamp", "current_user",
    "default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "false", "fetch", "for", "foreign", "from", "grant",
    "group", "having", "in", "initially", "intersect", "into", "lateral", "leading", "limit", "localtime", "localtimestamp", "not",
    "null", "offset", "on", "only", "or", "order", "placing", "primary", "references", "returning", "select", "session_user", "some",
    "symmetric", "table", "then", "to", "trailing", "true", "union", "unique", "user", "using", "variadic", "when", "where", "window",
    "with",
    // Type and function name keywords: not a ColId either.
    "authorization", "binary", "collation", "concurrently", "cross", "current_schema", "freeze", "full", "ilike", "inner", "is",
    "isnull", "join", "left", "like", "natural", "notnull", "outer", "overlaps", "right", "similar", "tablesample", "verbose",
];

/// A FETCH's or MOVE's text: its direction and the cursor's name (folded as an identifier).
pub(crate) fn parse(sql: &str) -> Result<(Direction, String)> {
    let words = tokens(sql)?;
    let syntax = |w: Option<&Word>| match w {
        Some(w) => PgError::syntax(format!("syntax error at or near \"{}\"", w.text)),
        None => PgError::syntax("syntax error at end of input"),
    };
    // The keyword itself, then the arguments.
    if !words.first().is_some_and(|w| w.quoted.is_none() && matches!(w.lower.as_str(), "fetch" | "move")) {
        return Err(syntax(words.first()));
    }
    let args = &words[1..];
    let Some((name, mut dir)) = args.split_last() else { return Err(syntax(None)) };
    let identifier = name.quoted.is_some()
        || (name.text.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && name.text.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            && !RESERVED.contains(&name.lower.as_str()));
    if !identifier {
        // A keyword or a count where the name should be: the name is missing.
        let missing = RESERVED.contains(&name.lower.as_str()) || name.text.bytes().all(|b| b.is_ascii_digit());
        return Err(if missing { syntax(None) } else { syntax(Some(name)) });
    }
    if let Some((last, before)) = dir.split_last() {
        if last.quoted.is_none() && matches!(last.lower.as_str(), "from" | "in") {
            dir = before;
        }
    }
    // A count is PostgreSQL's integer constant (32 bits), with an optional sign.
    let count = |w: &Word| -> Result<i64> {
        let (negative, digits) = match w.text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, w.text.strip_prefix('+').unwrap_or(&w.text)),
        };
        match (&w.quoted, digits.parse::<i32>()) {
            (None, Ok(n)) if digits.bytes().all(|b| b.is_ascii_digit()) => Ok(if negative { -i64::from(n) } else { i64::from(n) }),
            _ => Err(syntax(Some(w))),
        }
    };
    fn kw(w: &Word) -> &str {
        if w.quoted.is_none() {
            w.lower.as_str()
        } else {
            ""
        }
    }
    let signed = |n: i64, forward: bool| match (n >= 0) == forward {
        true => Direction::Forward(n.unsigned_abs()),
        false => Direction::Backward(n.unsigned_abs()),
    };
    let d = match dir {
        [] => Direction::Forward(1),
        [a] => match kw(a) {
            "next" | "forward" => Direction::Forward(1),
            "prior" | "backward" => Direction::Backward(1),
            "first" => Direction::Absolute(1),
            "last" => Direction::Absolute(-1),
            "all" => Direction::Forward(ALL),
            _ => signed(count(a)?, true),
        },
        [a, b] => match (kw(a), kw(b)) {
            ("forward", "all") => Direction::Forward(ALL),
            ("backward", "all") => Direction::Backward(ALL),
            ("forward", _) => signed(count(b)?, true),
            ("backward", _) => signed(count(b)?, false),
            ("absolute", _) => Direction::Absolute(count(b)?),
            ("relative", _) => Direction::Relative(count(b)?),
            _ => return Err(syntax(Some(b))),
        },
        [_, _, c, ..] => return Err(syntax(Some(c))),
    };
    Ok((d, name.folded()))
}

/// One word of a FETCH / MOVE: a keyword, a number or a name.
struct Word {
    text: String,
    lower: String,
    /// A double-quoted name's text (quotes removed, `""` read as `"`).
    quoted: Option<String>,
}

impl Word {
    fn folded(&self) -> String {
        self.quoted.clone().unwrap_or_else(|| self.lower.clone())
    }
}

/// Splits the statement into words: whitespace separates them, a double-quoted name is one,
/// a sign before a number joins it; a trailing `;` ends the statement.
fn tokens(sql: &str) -> Result<Vec<Word>> {
    let body = sql;
    let mut out: Vec<Word> = Vec::new();
    let mut chars = body.char_indices().peekable();
    let mut sign: Option<char> = None;
    let mut ended = false;
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        // Comments: `-- ...` to the end of the line, `/* ... */` (nested).
        if body[i..].starts_with("--") {
            while chars.peek().is_some_and(|&(_, ch)| ch != '\n') {
                chars.next();
            }
            continue;
        }
        if body[i..].starts_with("/*") {
            let mut depth = 0usize;
            while let Some((j, _)) = chars.next() {
                if body[j..].starts_with("/*") {
                    depth += 1;
                    chars.next();
                } else if body[j..].starts_with("*/") {
                    depth -= 1;
                    chars.next();
                    if depth == 0 {
                        break;
                    }
                }
            }
            if depth > 0 {
                return Err(PgError::syntax("unterminated /* comment at or near \"/*\""));
            }
            continue;
        }
        if c == ';' {
            // The statement ends; only space and comments may follow.
            chars.next();
            ended = true;
            continue;
        }
        if ended {
            return Err(PgError::syntax(format!("syntax error at or near \"{}\"", body[i..].split_whitespace().next().unwrap_or(""))));
        }
        if c == '"' {
            chars.next();
            let mut name = String::new();
            loop {
                match chars.next() {
                    Some((_, '"')) if chars.peek().is_some_and(|&(_, n)| n == '"') => {
                        chars.next();
                        name.push('"');
                    }
                    Some((_, '"')) => break,
                    Some((_, ch)) => name.push(ch),
                    None => return Err(PgError::syntax(format!("unterminated quoted identifier at or near \"{}\"", &body[i..]))),
                }
            }
            if name.is_empty() {
                return Err(PgError::syntax("zero-length delimited identifier at or near \"\"\"\""));
            }
            out.push(Word { text: format!("\"{name}\""), lower: String::new(), quoted: Some(name) });
            continue;
        }
        // A word (letters, digits, `_`, `$`, `.`) or any other single character, as
        // PostgreSQL's lexer splits `fetch-2` into `fetch`, `-`, `2`.
        let start = i;
        let mut end = body.len();
        let word_char = |ch: char| ch.is_alphanumeric() || matches!(ch, '_' | '$' | '.');
        if word_char(c) {
            while let Some(&(j, ch)) = chars.peek() {
                if !word_char(ch) {
                    end = j;
                    break;
                }
                chars.next();
            }
        } else {
            chars.next();
            end = chars.peek().map_or(body.len(), |&(j, _)| j);
        }
        let text = &body[start..end];
        if (text == "-" || text == "+") && sign.is_none() {
            sign = text.chars().next();
            continue;
        }
        let text = match sign.take() {
            Some(s) => format!("{s}{text}"),
            None => text.to_string(),
        };
        out.push(Word { lower: text.to_ascii_lowercase(), text, quoted: None });
    }
    if let Some(s) = sign {
        return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("syntax error at or near \"{s}\"")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> (Direction, String) {
        parse(s).unwrap()
    }

    #[test]
    fn directions_read_as_postgres_reads_them() {
        use Direction::*;
        assert_eq!(p("FETCH c"), (Forward(1), "c".into()));
        assert_eq!(p("fetch from C;"), (Forward(1), "c".into()));
        assert_eq!(p("FETCH 2 c"), (Forward(2), "c".into()));
        assert_eq!(p("FETCH +2 IN c"), (Forward(2), "c".into()));
        assert_eq!(p("FETCH - 1 FROM c"), (Backward(1), "c".into()));
        assert_eq!(p("FETCH FORWARD 3 FROM \"Named 1\""), (Forward(3), "Named 1".into()));
        assert_eq!(p("FETCH FORWARD ALL c"), (Forward(ALL), "c".into()));
        assert_eq!(p("FETCH ALL FROM c"), (Forward(ALL), "c".into()));
        assert_eq!(p("FETCH BACKWARD -2 c"), (Forward(2), "c".into()));
        assert_eq!(p("FETCH FORWARD -2 c"), (Backward(2), "c".into()));
        assert_eq!(p("MOVE BACKWARD ALL c"), (Backward(ALL), "c".into()));
        assert_eq!(p("FETCH PRIOR c"), (Backward(1), "c".into()));
        assert_eq!(p("FETCH FIRST c"), (Absolute(1), "c".into()));
        assert_eq!(p("FETCH LAST c"), (Absolute(-1), "c".into()));
        assert_eq!(p("MOVE ABSOLUTE -1 c"), (Absolute(-1), "c".into()));
        assert_eq!(p("MOVE RELATIVE 0 c"), (Relative(0), "c".into()));
        assert_eq!(p("FETCH \"a\"\"b\""), (Forward(1), "a\"b".into()));
        assert_eq!(p("/* x */ FETCH /* y /* nested */ */ 2 c -- z"), (Forward(2), "c".into()));
        assert_eq!(p("FETCH 2 c; -- done"), (Forward(2), "c".into()));
        // A cursor may be called by an unreserved keyword, never by a reserved one.
        assert_eq!(p("FETCH next"), (Forward(1), "next".into()));
        assert_eq!(parse("FETCH ALL").unwrap_err().message, "syntax error at end of input");
        assert_eq!(parse("FETCH").unwrap_err().message, "syntax error at end of input");
        assert_eq!(parse("FETCH FROM").unwrap_err().message, "syntax error at end of input");
        assert_eq!(parse("FETCH 1").unwrap_err().message, "syntax error at end of input");
        assert_eq!(parse("FETCH 'c'").unwrap_err().code, "42601");
        assert_eq!(parse("FETCH 1.5 c").unwrap_err().message, "syntax error at or near \"1.5\"");
        assert_eq!(parse("FETCH 3000000000 c").unwrap_err().message, "syntax error at or near \"3000000000\"");
        assert_eq!(parse("FETCH ABSOLUTE c").unwrap_err().code, "42601");
        assert_eq!(parse("FETCH FORWARD 2 3 c").unwrap_err().message, "syntax error at or near \"3\"");
        assert_eq!(parse("FETCH c; FETCH d").unwrap_err().code, "42601");
        // Operators split words as PostgreSQL's lexer splits them.
        assert_eq!(p("fetch-2 c"), (Backward(2), "c".into()));
        assert_eq!(p("move+1 c"), (Forward(1), "c".into()));
        assert_eq!(parse("fetch/1 c").unwrap_err().code, "42601");
        assert_eq!(parse("fetch-all c").unwrap_err().code, "42601");
        assert_eq!(parse("fetchx c").unwrap_err().code, "42601");
        assert_eq!(parse("FETCH -2147483648 c").unwrap_err().code, "42601");
        assert_eq!(p("FETCH -2147483647 c"), (Backward(2147483647), "c".into()));
        assert_eq!(parse("FETCH left").unwrap_err().message, "syntax error at end of input");
    }

    #[test]
    fn forward_only_positions_match_postgres() {
        use Direction::*;
        let start = Position::default();
        let mid = Position { read: 2, at_end: false };
        let end = Position { read: 10, at_end: true };
        let empty_end = Position { read: 0, at_end: true };
        let r = |skip, take, lands| Step::Read { skip, take, lands };
        let fetch = |d, p| plan(d, p, false);
        let mv = |d, p| plan(d, p, true);
        assert_eq!(fetch(Forward(0), start).unwrap(), r(0, 0, false));
        assert_eq!(fetch(Forward(0), end).unwrap(), r(0, 0, false));
        assert_eq!(fetch(Forward(0), mid).unwrap_err().code, "55000");
        assert_eq!(fetch(Relative(0), mid).unwrap_err().code, "55000");
        assert_eq!(fetch(Backward(0), start).unwrap_err().code, "55000");
        assert_eq!(mv(Forward(0), mid).unwrap(), Step::Stay(1));
        assert_eq!(mv(Backward(0), start).unwrap(), Step::Stay(0));
        assert_eq!(mv(Backward(ALL), start).unwrap(), Step::Stay(0));
        assert_eq!(mv(Backward(ALL), mid).unwrap_err().code, "55000");
        assert_eq!(fetch(Backward(ALL), start).unwrap_err().code, "55000");
        assert_eq!(fetch(Absolute(1), start).unwrap(), r(0, 1, true));
        assert_eq!(fetch(Absolute(1), mid).unwrap_err().code, "55000");
        assert_eq!(fetch(Absolute(1), empty_end).unwrap_err().code, "55000");
        assert_eq!(fetch(Absolute(5), mid).unwrap(), r(2, 1, true));
        assert_eq!(fetch(Absolute(2), mid).unwrap_err().code, "55000");
        assert_eq!(fetch(Absolute(0), start).unwrap(), r(0, 0, true));
        assert_eq!(mv(Absolute(0), empty_end).unwrap_err().code, "55000");
        assert_eq!(fetch(Absolute(-1), start).unwrap_err().code, "55000");
        assert_eq!(fetch(Absolute(20), start).unwrap(), r(19, 1, true));
        assert_eq!(fetch(Absolute(11), end).unwrap_err().code, "55000");
        assert_eq!(fetch(Absolute(12), end).unwrap(), r(0, 1, true));
        assert_eq!(fetch(Relative(3), mid).unwrap(), r(2, 1, true));
        assert_eq!(fetch(Backward(1), start).unwrap_err().code, "55000");
    }
}

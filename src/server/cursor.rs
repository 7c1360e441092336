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

/// Where a FETCH or MOVE goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// NEXT, FORWARD, a count, FORWARD count, ALL, FORWARD ALL (`u64::MAX`).
    Forward(u64),
    /// PRIOR, BACKWARD [count | ALL], a negative count, LAST: rows already passed.
    Backward,
    /// ABSOLUTE n (FIRST is ABSOLUTE 1).
    Absolute(i64),
    /// RELATIVE n.
    Relative(i64),
}

/// A cursor's place in its rows (invariant 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Position {
    pub read: u64,
    pub at_end: bool,
}

/// What one FETCH or MOVE reads: rows skipped, then rows returned (or moved over).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub skip: u64,
    pub take: u64,
    /// ABSOLUTE / RELATIVE: MOVE reports whether it landed on a row (1 or 0), not a count.
    pub lands: bool,
}

pub(crate) fn forward_only() -> PgError {
    PgError::new("55000", "cursor can only scan forward").with_hint("Declare it with SCROLL option to enable backward scan.")
}

/// What `dir` reads at `pos` (invariant 2), or 55000 where it would go back.
pub(crate) fn plan(dir: Direction, pos: Position) -> Result<Step> {
    // Re-reading the current row: there is none before the first or after the last.
    let current = || if pos.read == 0 || pos.at_end { Ok(Step { skip: 0, take: 0, lands: false }) } else { Err(forward_only()) };
    match dir {
        Direction::Forward(0) | Direction::Relative(0) => current(),
        Direction::Forward(n) => Ok(Step { skip: 0, take: n, lands: false }),
        Direction::Backward => Err(forward_only()),
        Direction::Relative(n) if n > 0 => Ok(Step { skip: n as u64 - 1, take: 1, lands: true }),
        Direction::Relative(_) => Err(forward_only()),
        Direction::Absolute(0) if pos.read == 0 => Ok(Step { skip: 0, take: 0, lands: true }),
        Direction::Absolute(n) if n > 0 && n as u64 > pos.read && !pos.at_end => {
            Ok(Step { skip: n as u64 - pos.read - 1, take: 1, lands: true })
        }
        Direction::Absolute(n) if n > 0 && pos.at_end => Ok(Step { skip: 0, take: 0, lands: true }),
        Direction::Absolute(_) => Err(forward_only()),
    }
}

/// A FETCH's or MOVE's text: its direction and the cursor's name (folded as an identifier).
pub(crate) fn parse(sql: &str) -> Result<(Direction, String)> {
    let words = tokens(sql)?;
    let syntax = |w: Option<&Word>| match w {
        Some(w) => PgError::syntax(format!("syntax error at or near \"{}\"", w.text)),
        None => PgError::syntax("syntax error at end of input"),
    };
    // The keyword itself, then the arguments.
    let args = &words[1..];
    let Some((name, mut dir)) = args.split_last() else { return Err(syntax(None)) };
    if name.quoted.is_none() && matches!(name.lower.as_str(), "from" | "in") {
        return Err(syntax(None));
    }
    if let Some((last, before)) = dir.split_last() {
        if last.quoted.is_none() && matches!(last.lower.as_str(), "from" | "in") {
            dir = before;
        }
    }
    let count = |w: &Word| -> Result<i64> {
        match (&w.quoted, w.text.parse::<i64>()) {
            (None, Ok(n)) => Ok(n),
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
    let d = match dir {
        [] => Direction::Forward(1),
        [a] => match kw(a) {
            "next" | "forward" => Direction::Forward(1),
            "prior" | "backward" | "last" => Direction::Backward,
            "first" => Direction::Absolute(1),
            "all" => Direction::Forward(u64::MAX),
            _ => match count(a)? {
                n if n >= 0 => Direction::Forward(n as u64),
                _ => Direction::Backward,
            },
        },
        [a, b] => match (kw(a), kw(b)) {
            ("forward", "all") => Direction::Forward(u64::MAX),
            ("backward", "all") => Direction::Backward,
            ("forward", _) => match count(b)? {
                n if n >= 0 => Direction::Forward(n as u64),
                _ => Direction::Backward,
            },
            ("backward", _) => match count(b)? {
                n if n < 0 => Direction::Forward(n.unsigned_abs()),
                _ => Direction::Backward,
            },
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
    let body = sql.trim().trim_end_matches(';').trim_end();
    let mut out: Vec<Word> = Vec::new();
    let mut chars = body.char_indices().peekable();
    let mut sign: Option<char> = None;
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
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
        let start = i;
        let mut end = body.len();
        while let Some(&(j, ch)) = chars.peek() {
            if ch.is_whitespace() || ch == '"' {
                end = j;
                break;
            }
            chars.next();
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
        if text.contains(';') {
            return Err(PgError::syntax(format!("syntax error at or near \"{text}\"")));
        }
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
        assert_eq!(p("FETCH - 1 FROM c"), (Backward, "c".into()));
        assert_eq!(p("FETCH FORWARD 3 FROM \"Named 1\""), (Forward(3), "Named 1".into()));
        assert_eq!(p("FETCH FORWARD ALL c"), (Forward(u64::MAX), "c".into()));
        assert_eq!(p("FETCH ALL FROM c"), (Forward(u64::MAX), "c".into()));
        assert_eq!(p("FETCH BACKWARD -2 c"), (Forward(2), "c".into()));
        assert_eq!(p("FETCH PRIOR c"), (Backward, "c".into()));
        assert_eq!(p("FETCH FIRST c"), (Absolute(1), "c".into()));
        assert_eq!(p("MOVE ABSOLUTE -1 c"), (Absolute(-1), "c".into()));
        assert_eq!(p("MOVE RELATIVE 0 c"), (Relative(0), "c".into()));
        assert_eq!(p("FETCH \"a\"\"b\""), (Forward(1), "a\"b".into()));
        // A cursor may be called by an unreserved keyword.
        assert_eq!(p("FETCH next"), (Forward(1), "next".into()));
        assert_eq!(parse("FETCH").unwrap_err().message, "syntax error at end of input");
        assert_eq!(parse("FETCH FROM").unwrap_err().message, "syntax error at end of input");
        assert_eq!(parse("FETCH 1.5 c").unwrap_err().message, "syntax error at or near \"1.5\"");
        assert_eq!(parse("FETCH ABSOLUTE c").unwrap_err().code, "42601");
        assert_eq!(parse("FETCH FORWARD 2 3 c").unwrap_err().message, "syntax error at or near \"3\"");
    }

    #[test]
    fn forward_only_positions_match_postgres() {
        use Direction::*;
        let start = Position::default();
        let mid = Position { read: 2, at_end: false };
        let end = Position { read: 10, at_end: true };
        let ok = |skip, take, lands| Step { skip, take, lands };
        assert_eq!(plan(Forward(0), start).unwrap(), ok(0, 0, false));
        assert_eq!(plan(Forward(0), end).unwrap(), ok(0, 0, false));
        assert_eq!(plan(Forward(0), mid).unwrap_err().code, "55000");
        assert_eq!(plan(Relative(0), mid).unwrap_err().code, "55000");
        assert_eq!(plan(Absolute(1), start).unwrap(), ok(0, 1, true));
        assert_eq!(plan(Absolute(1), mid).unwrap_err().code, "55000");
        assert_eq!(plan(Absolute(5), mid).unwrap(), ok(2, 1, true));
        assert_eq!(plan(Absolute(2), mid).unwrap_err().code, "55000");
        assert_eq!(plan(Absolute(0), start).unwrap(), ok(0, 0, true));
        assert_eq!(plan(Absolute(-1), start).unwrap_err().code, "55000");
        assert_eq!(plan(Absolute(20), end).unwrap(), ok(0, 0, true));
        assert_eq!(plan(Relative(3), mid).unwrap(), ok(2, 1, true));
        assert_eq!(plan(Backward, start).unwrap_err().code, "55000");
    }
}

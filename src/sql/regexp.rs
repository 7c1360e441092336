//! PostgreSQL's regular expression functions: `regexp_replace`, `regexp_like`,
//! `regexp_count`, `regexp_match`, `regexp_split_to_array`, `regexp_split_to_table` and
//! `substring(string FROM pattern)`.
//!
//! Patterns are translated as for `~` ([`super::expr::regex_match`]'s rules: what both
//! PostgreSQL's ARE engine and the `regex` crate read the same way, anything else refused
//! with 0A000). Where a match *is* matters here, not only whether there is one, and the two
//! engines choose matches differently: the `regex` crate takes, at the leftmost position
//! where a match starts, the match its alternatives and quantifiers reach first
//! (leftmost-first); PostgreSQL takes the longest there when the pattern is greedy, and the
//! whole pattern is greedy when no quantifier in it is non-greedy. So a match is found in two
//! steps: the leftmost start (the same for both rules), then the longest match anchored
//! there, from a lazy DFA that reports every match state (`MatchKind::All`). A pattern whose
//! quantifiers are all non-greedy (and which has no alternation) is non-greedy as a whole and
//! takes the shortest match there instead (the same DFA's earliest match state). A pattern
//! mixing greedy and non-greedy quantifiers, or one with alternation, is refused (0A000):
//! PostgreSQL's rule for it (the first quantified atom's preference) is not built.
//!
//! Parenthesized subexpressions' matches (`\1` in a replacement, `regexp_match`'s elements,
//! `substring`'s first group) are computed for patterns without alternation and without a
//! quantified group: within the match's known extent, the `regex` crate's greedy
//! backtracking gives each quantified piece, left to right, the longest text that still lets
//! the rest match, which is how PostgreSQL dissects a greedy concatenation. With alternation
//! the two differ (the `regex` crate prefers the first alternative, PostgreSQL the longer),
//! and so they do in a repeated group (which iteration a group reports, when one can match
//! empty text), so those calls are refused (0A000). Flags: `g` (where
//! PostgreSQL takes it), `i` (ASCII case folding, as PostgreSQL under the C collation; text
//! with other characters is refused), `c`; PostgreSQL's other flags are refused with 0A000,
//! unknown ones are 22023.
//!
//! Iteration follows PostgreSQL's: the next search starts at the previous match's end, one
//! character later after an empty match; the split functions skip empty matches at the
//! start or end of the string or right after the previous match.
//!
//! Compiled patterns are kept per thread (the last [`CACHE_SIZE`]), as PostgreSQL keeps its
//! last 32.

use crate::error::{sqlstate, PgError, Result};
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Anchored, Input, MatchKind};
use std::sync::{Arc, Mutex};

/// How many compiled patterns a thread keeps.
const CACHE_SIZE: usize = 32;

/// A compiled pattern: where matches start, and how far each reaches.
pub struct PgRegex {
    /// Leftmost-first: finds where the leftmost match starts.
    first: regex::Regex,
    /// Every match state: run anchored at a start, its last match is the longest.
    longest: DFA,
    cache: Mutex<Cache>,
    /// Capturing groups (PostgreSQL's parenthesized subexpressions).
    groups: usize,
    /// The pattern anchored at both ends, for the groups' matches within a match's extent
    /// (None: the pattern has alternation or a quantified group, whose groups are not
    /// computed).
    exact: Option<regex::Regex>,
    /// Compiled with ASCII case folding.
    ci: bool,
    /// The pattern is non-greedy (all its quantifiers are): the shortest match is taken.
    shortest: bool,
}

/// The flags of a call: case folding and `g`.
#[derive(Clone, Copy, Default)]
pub struct Flags {
    pub ci: bool,
    pub global: bool,
}

/// Reads a flags argument. `func` names the function for the `g` error (None: `g` allowed).
pub fn flags(s: &str, func: Option<&str>) -> Result<Flags> {
    let mut f = Flags::default();
    for c in s.chars() {
        match c {
            'g' => match func {
                None => f.global = true,
                Some(name) => {
                    let e = PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("{name}() does not support the \"global\" option"));
                    return Err(if name == "regexp_match" { e.with_hint("Use the regexp_matches function instead.") } else { e });
                }
            },
            'i' => f.ci = true,
            'c' => f.ci = false,
            'b' | 'e' | 'm' | 'n' | 'p' | 'q' | 's' | 't' | 'w' | 'x' => {
                return Err(PgError::feature(format!("regular expression option \"{c}\" is not supported by heapstore")))
            }
            other => {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid regular expression option: \"{other}\"")))
            }
        }
    }
    Ok(f)
}

/// The compiled form of `pattern` (from this thread's cache when it was used lately).
pub fn compiled(pattern: &str, ci: bool) -> Result<Arc<PgRegex>> {
    thread_local! {
        static CACHE: std::cell::RefCell<Vec<(String, bool, Arc<PgRegex>)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(i) = c.iter().position(|(p, k, _)| p == pattern && *k == ci) {
            let e = c.remove(i);
            let re = e.2.clone();
            c.push(e);
            return Ok(re);
        }
        let re = Arc::new(compile(pattern, ci)?);
        if c.len() == CACHE_SIZE {
            c.remove(0);
        }
        c.push((pattern.to_string(), ci, re.clone()));
        Ok(re)
    })
}

fn compile(pattern: &str, ci: bool) -> Result<PgRegex> {
    let (translated, shape) = super::expr::translate_regex_lazy(pattern, ci)?;
    // Every quantifier non-greedy (and no alternation, which is greedy): the whole pattern
    // is non-greedy and takes the shortest match. Mixed ones are refused.
    let shortest = shape.lazy;
    if shape.lazy && (shape.greedy || shape.alternation) {
        return Err(PgError::feature(format!(
            "regular expression \"{pattern}\": non-greedy quantifiers beside greedy ones or alternation are not supported by heapstore where the match's extent matters"
        )));
    }
    let unsupported =
        |e: &dyn std::fmt::Display| PgError::feature(format!("regular expression \"{pattern}\" is not supported by heapstore: {e}"));
    let first = regex::Regex::new(&translated).map_err(|e| unsupported(&e))?;
    let longest = DFA::builder().configure(DFA::config().match_kind(MatchKind::All)).build(&translated).map_err(|e| unsupported(&e))?;
    let cache = Mutex::new(longest.create_cache());
    let groups = first.captures_len() - 1;
    let exact = match (groups, shape.alternation || shape.quantified_group || shortest) {
        (0, _) | (_, true) => None,
        _ => Some(regex::Regex::new(&format!("^(?:{translated})$")).map_err(|e| unsupported(&e))?),
    };
    Ok(PgRegex { groups, exact, first, longest, cache, ci, shortest })
}

impl PgRegex {
    /// Refuses text that a case-insensitive pattern would fold differently from PostgreSQL.
    fn check_text(&self, hay: &str) -> Result<()> {
        if self.ci && !hay.is_ascii() {
            return Err(PgError::feature("a case-insensitive regular expression match of non-ASCII text is not supported by heapstore"));
        }
        Ok(())
    }

    /// Whether `hay` has a match.
    pub fn is_match(&self, hay: &str) -> Result<bool> {
        self.check_text(hay)?;
        Ok(self.first.is_match(hay))
    }

    /// PostgreSQL's match at or after byte `from`: its start and end.
    fn find_at(&self, hay: &str, from: usize) -> Result<Option<(usize, usize)>> {
        let Some(m) = self.first.find_at(hay, from) else { return Ok(None) };
        let input = Input::new(hay).range(m.start()..).anchored(Anchored::Yes).earliest(self.shortest);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let end = self
            .longest
            .try_search_fwd(&mut cache, &input)
            .map_err(|e| PgError::feature(format!("regular expression search gave up: {e}")))?
            .map(|h| h.offset())
            .ok_or_else(|| PgError::internal("the longest-match search found no match where the first one did"))?;
        if self.shortest {
            debug_assert!(end <= m.end(), "the shortest match ends at or before the first one");
            return Ok(Some((m.start(), end.min(m.end()))));
        }
        debug_assert!(end >= m.end(), "the longest match ends at or after the first one");
        Ok(Some((m.start(), end.max(m.end()))))
    }

    /// The matches PostgreSQL's iteration finds from byte `from` (all of them, or the first),
    /// skipping degenerate ones for the split functions.
    pub fn matches(&self, hay: &str, from: usize, global: bool, ignore_degenerate: bool) -> Result<Vec<(usize, usize)>> {
        self.check_text(hay)?;
        let mut out = Vec::new();
        let (mut search, mut prev_end) = (from, 0);
        while let Some((s, e)) = self.find_at(hay, search)? {
            if !ignore_degenerate || (s < hay.len() && e > prev_end) {
                out.push((s, e));
            }
            prev_end = e;
            if !global {
                break;
            }
            search = e;
            if s == e {
                // One character on.
                match hay[e..].chars().next() {
                    Some(c) => search += c.len_utf8(),
                    None => break,
                }
            }
        }
        Ok(out)
    }

    /// The groups' matches (byte ranges in `hay`) of the match `s..e`: None for a group that
    /// took no part. 0A000 for a pattern with alternation (module doc).
    pub fn groups(&self, hay: &str, s: usize, e: usize, what: &str) -> Result<Vec<Option<(usize, usize)>>> {
        if self.groups == 0 {
            return Ok(Vec::new());
        }
        let Some(exact) = &self.exact else {
            return Err(PgError::feature(format!(
                "{what} of a pattern with parenthesized subexpressions and alternation (|), a quantified group or non-greedy quantifiers is not supported by heapstore"
            )));
        };
        let caps = exact.captures(&hay[s..e]).ok_or_else(|| PgError::internal("a match's groups were not found within its extent"))?;
        Ok((1..=self.groups).map(|g| caps.get(g).map(|m| (s + m.start(), s + m.end()))).collect())
    }

    /// `regexp_replace`: each match (the first, or all with `g`) replaced by `repl`, in which
    /// `\&` is the match, `\\` a backslash and `\1`..`\9` a subexpression's match (empty
    /// for one that took no part or does not exist, as in PostgreSQL); any other backslash
    /// is kept as it is.
    pub fn replace(&self, hay: &str, repl: &str, global: bool) -> Result<String> {
        // Escapes read in pairs (`\\1` is a backslash, then 1).
        let mut group_ref = false;
        let mut bytes = repl.bytes();
        while let Some(b) = bytes.next() {
            if b == b'\\' {
                group_ref |= bytes.next().is_some_and(|n| (b'1'..=b'9').contains(&n));
            }
        }
        let matches = self.matches(hay, 0, global, false)?;
        let mut out = String::with_capacity(hay.len());
        let mut pos = 0;
        for (s, e) in matches {
            out.push_str(&hay[pos..s]);
            let groups =
                if group_ref { self.groups(hay, s, e, "a subexpression reference (\\1 to \\9) in regexp_replace")? } else { Vec::new() };
            let mut chars = repl.chars();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match chars.clone().next() {
                    Some('&') => {
                        chars.next();
                        out.push_str(&hay[s..e]);
                    }
                    Some('\\') => {
                        chars.next();
                        out.push('\\');
                    }
                    Some(d @ '1'..='9') => {
                        chars.next();
                        if let Some(Some((a, b))) = groups.get(d as usize - '1' as usize) {
                            out.push_str(&hay[*a..*b]);
                        }
                    }
                    _ => out.push('\\'),
                }
            }
            pos = e;
        }
        out.push_str(&hay[pos..]);
        Ok(out)
    }

    /// The pieces between the matches (`regexp_split_to_array` / `_to_table`).
    pub fn split<'h>(&self, hay: &'h str) -> Result<Vec<&'h str>> {
        let mut out = Vec::new();
        let mut pos = 0;
        for (s, e) in self.matches(hay, 0, true, true)? {
            out.push(&hay[pos..s]);
            pos = e;
        }
        out.push(&hay[pos..]);
        Ok(out)
    }

    /// The first match: its extent and its groups' (`regexp_match`, `substring`).
    pub fn first_match(&self, hay: &str, what: &str) -> Result<Option<Match>> {
        match self.matches(hay, 0, false, false)?.first() {
            Some(&(s, e)) => Ok(Some(Match { whole: (s, e), groups: self.groups(hay, s, e, what)? })),
            None => Ok(None),
        }
    }
}

/// A match and its groups' matches (byte ranges).
pub struct Match {
    pub whole: (usize, usize),
    pub groups: Vec<Option<(usize, usize)>>,
}

impl Match {
    /// `regexp_match`'s array elements: the groups' texts (NULL for one that took no part),
    /// or the whole match for a pattern without groups.
    pub fn elements(&self, hay: &str) -> Vec<crate::types::Value> {
        use crate::types::Value;
        if self.groups.is_empty() {
            return vec![Value::Text(hay[self.whole.0..self.whole.1].to_string())];
        }
        self.groups.iter().map(|g| g.map_or(Value::Null, |(a, b)| Value::Text(hay[a..b].to_string()))).collect()
    }

    /// `substring(string FROM pattern)`: the first group's text (NULL when it took no part),
    /// or the whole match.
    pub fn substring(&self, hay: &str) -> Option<String> {
        match self.groups.first() {
            None => Some(hay[self.whole.0..self.whole.1].to_string()),
            Some(g) => g.map(|(a, b)| hay[a..b].to_string()),
        }
    }
}

/// The byte offset of 1-based character position `start` (`regexp_count`'s), or None past
/// the end.
pub fn char_start(hay: &str, start: i32) -> Result<Option<usize>> {
    if start <= 0 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"start\": {start}")));
    }
    let skip = (start - 1) as usize;
    Ok(if skip == 0 { Some(0) } else { hay.char_indices().map(|(i, _)| i).chain(std::iter::once(hay.len())).nth(skip) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(p: &str, hay: &str) -> Vec<(usize, usize)> {
        compile(p, false).unwrap().matches(hay, 0, true, false).unwrap()
    }

    #[test]
    fn matches_are_leftmost_then_longest() {
        // leftmost-first would take "a".
        assert_eq!(ext("a|ab", "ab"), vec![(0, 2)]);
        assert_eq!(ext("(ab)?(abcd)?", "abcd"), vec![(0, 4), (4, 4)]);
        assert_eq!(ext("x*", "axxb"), vec![(0, 0), (1, 3), (3, 3), (4, 4)]);
        assert_eq!(ext("<.+?>", "<b>x</b>"), vec![(0, 3), (4, 8)]);
        assert!(compile("a+?b*", false).is_err());
        assert!(compile("a+?|b", false).is_err());
    }

    #[test]
    fn splitting_skips_degenerate_matches() {
        let re = compile("x*", false).unwrap();
        assert_eq!(re.split("axxb").unwrap(), vec!["a", "b"]);
        let re = compile("", false).unwrap();
        assert_eq!(re.split("abc").unwrap(), vec!["a", "b", "c"]);
    }

    #[test]
    fn replacement_escapes() {
        let re = compile("b+", false).unwrap();
        assert_eq!(re.replace("abbc", "[\\&|\\\\|\\1|\\x]", false).unwrap(), "a[bb|\\||\\x]c");
        assert_eq!(re.replace("abcb", "-", true).unwrap(), "a-c-");
        assert_eq!(compile("(b)([c-d]*)", false).unwrap().replace("abcbd", "<\\2\\1\\3>", true).unwrap(), "a<cb><db>");
        assert!(compile("(b|bc)", false).unwrap().replace("abc", "\\1", false).is_err());
    }
}

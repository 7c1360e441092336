//! `LOCK [ TABLE ] [ ONLY ] name [ * ] [, ...] [ IN lockmode MODE ] [ NOWAIT ]`: PostgreSQL's
//! explicit table lock, held until the transaction ends.
//!
//! sqlparser has no LOCK statement, so the text is read here, token by token. The rules are
//! PostgreSQL's:
//! - only inside a transaction block (a Query of several statements is one): 25P01 otherwise;
//! - the default mode is ACCESS EXCLUSIVE; the eight modes are the lock manager's;
//! - any mode in a read-only transaction too;
//! - NOWAIT fails with 55P03 ("could not obtain lock on relation") instead of waiting;
//! - the relations are locked in the order named; a missing one is 42P01, a sequence 42809.
//!
//! A view is locked, then every relation its query reads, recursively through the views it
//! reads, in the same mode, as PostgreSQL (11 and later) does. `ONLY` and `*` change nothing:
//! heapstore has no inheritance.

use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use crate::sql::dialect::Pg;

/// A parsed LOCK statement.
#[derive(Debug, PartialEq)]
pub struct LockStatement {
    pub tables: Vec<String>,
    pub mode: LockMode,
    pub nowait: bool,
}

/// The words of `sql` if it is one LOCK statement (its first word is LOCK); None otherwise.
fn lock_words(sql: &str) -> Option<Vec<Token>> {
    let toks = Tokenizer::new(&Pg, sql).tokenize().ok()?;
    let mut words: Vec<Token> = toks.into_iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    while matches!(words.last(), Some(Token::SemiColon)) {
        words.pop();
    }
    match words.first() {
        Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("lock") => Some(words),
        _ => None,
    }
}

/// Whether `sql` is a LOCK statement (the server runs it as a piece of its own).
pub fn is_lock(sql: &str) -> bool {
    lock_words(sql).is_some()
}

fn keyword(t: Option<&Token>, k: &str) -> bool {
    matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k))
}

fn syntax_at(t: Option<&Token>) -> PgError {
    match t {
        Some(t) => PgError::syntax(format!("syntax error at or near \"{t}\"")),
        None => PgError::syntax("syntax error at end of input"),
    }
}

/// Parses `sql` if it is a LOCK statement: None if it is not one, a syntax error (42601) if
/// it is one PostgreSQL would not accept.
pub fn parse(sql: &str) -> Option<Result<LockStatement>> {
    let words = lock_words(sql)?;
    Some(parse_words(&words))
}

fn parse_words(words: &[Token]) -> Result<LockStatement> {
    let mut i = 1;
    if keyword(words.get(i), "table") {
        i += 1;
    }
    let mut tables = Vec::new();
    loop {
        // PostgreSQL's relation_expr: `name`, `name *`, `ONLY name`, `ONLY (name)`.
        let only = keyword(words.get(i), "only");
        if only {
            i += 1;
        }
        let paren = only && matches!(words.get(i), Some(Token::LParen));
        if paren {
            i += 1;
        }
        // name, or schema.name (the schema is public or pg_catalog: the lookup decides).
        let mut name = match words.get(i) {
            Some(Token::Word(w)) if w.quote_style.is_some() => w.value.clone(),
            Some(Token::Word(w)) if !["in", "nowait"].iter().any(|k| w.value.eq_ignore_ascii_case(k)) => w.value.to_ascii_lowercase(),
            t => return Err(syntax_at(t)),
        };
        i += 1;
        if matches!(words.get(i), Some(Token::Period)) {
            name = match words.get(i + 1) {
                Some(Token::Word(w)) if w.quote_style.is_some() => w.value.clone(),
                Some(Token::Word(w)) => w.value.to_ascii_lowercase(),
                t => return Err(syntax_at(t)),
            };
            i += 2;
        }
        if paren {
            if !matches!(words.get(i), Some(Token::RParen)) {
                return Err(syntax_at(words.get(i)));
            }
            i += 1;
        }
        if !only && matches!(words.get(i), Some(Token::Mul)) {
            i += 1;
        }
        tables.push(name);
        if matches!(words.get(i), Some(Token::Comma)) {
            i += 1;
            continue;
        }
        break;
    }
    let mut mode = LockMode::AccessExclusive;
    if keyword(words.get(i), "in") {
        i += 1;
        // PostgreSQL's lock_type, word by word, so that a syntax error names the first word
        // that does not fit, as its parser does.
        let at = |i: usize, k: &str| keyword(words.get(i), k);
        mode = if at(i, "access") && at(i + 1, "share") {
            i += 2;
            LockMode::AccessShare
        } else if at(i, "access") && at(i + 1, "exclusive") {
            i += 2;
            LockMode::AccessExclusive
        } else if at(i, "row") && at(i + 1, "share") {
            i += 2;
            LockMode::RowShare
        } else if at(i, "row") && at(i + 1, "exclusive") {
            i += 2;
            LockMode::RowExclusive
        } else if at(i, "share") && at(i + 1, "update") {
            if !at(i + 2, "exclusive") {
                return Err(syntax_at(words.get(i + 2)));
            }
            i += 3;
            LockMode::ShareUpdateExclusive
        } else if at(i, "share") && at(i + 1, "row") {
            if !at(i + 2, "exclusive") {
                return Err(syntax_at(words.get(i + 2)));
            }
            i += 3;
            LockMode::ShareRowExclusive
        } else if at(i, "share") {
            i += 1;
            LockMode::Share
        } else if at(i, "exclusive") {
            i += 1;
            LockMode::Exclusive
        } else if at(i, "access") || at(i, "row") {
            return Err(syntax_at(words.get(i + 1)));
        } else {
            return Err(syntax_at(words.get(i)));
        };
        if !at(i, "mode") {
            return Err(syntax_at(words.get(i)));
        }
        i += 1;
    }
    let nowait = keyword(words.get(i), "nowait");
    if nowait {
        i += 1;
    }
    if i != words.len() {
        return Err(syntax_at(words.get(i)));
    }
    Ok(LockStatement { tables, mode, nowait })
}

/// Runs a LOCK statement. `in_block`: the statement is inside a transaction block, or is one
/// piece of a Query of several statements (PostgreSQL's implicit block).
pub fn run(s: &mut Session, stmt: LockStatement, in_block: bool) -> Result<QueryResult> {
    if s.txn.as_ref().is_some_and(|t| t.failed) {
        return Err(PgError::new(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        ));
    }
    if !in_block {
        return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, "LOCK TABLE can only be used in transaction blocks"));
    }
    // Any mode, in a read-only transaction too (PostgreSQL refuses the strong ones only on a
    // standby).
    s.begin_implicit();
    for name in &stmt.tables {
        let t = s.table_any(name)?;
        if matches!(t.kind, crate::catalog::RelKind::View(_)) {
            lock_view(s, &t, &stmt, &mut Vec::new())?;
            continue;
        }
        if !t.is_table() {
            return Err(PgError::new("42809", format!("cannot lock relation \"{name}\""))
                .with_detail(format!("This operation is not supported for {}s.", t.kind_name())));
        }
        lock_one(s, &t, &stmt)?;
    }
    Ok(QueryResult::tagged("LOCK TABLE"))
}

fn lock_one(s: &mut Session, t: &crate::catalog::Table, stmt: &LockStatement) -> Result<()> {
    if stmt.nowait {
        if !s.try_lock_table(t, stmt.mode) {
            return Err(PgError::new(sqlstate::LOCK_NOT_AVAILABLE, format!("could not obtain lock on relation \"{}\"", t.name)));
        }
        Ok(())
    } else {
        s.lock_table(t, stmt.mode)
    }
}

/// Locks view `v`, then the relations its query reads (`ViewDef::deps`), recursing into the
/// views among them (`seen`: the views locked so far, against a cycle).
fn lock_view(s: &mut Session, v: &crate::catalog::Table, stmt: &LockStatement, seen: &mut Vec<u32>) -> Result<()> {
    if seen.contains(&v.oid) {
        return Ok(());
    }
    seen.push(v.oid);
    lock_one(s, v, stmt)?;
    // The definition as of now: a CREATE OR REPLACE VIEW that committed while the lock was
    // waited for may read other relations.
    let all = s.visible_tables();
    let Some(now) = all.iter().find(|t| t.oid == v.oid) else {
        return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" was dropped while LOCK waited for it", v.name)));
    };
    let crate::catalog::RelKind::View(def) = &now.kind else { return Ok(()) };
    for dep in &def.deps {
        let Some(t) = all.iter().find(|t| t.oid == *dep) else { continue };
        match &t.kind {
            crate::catalog::RelKind::View(_) => lock_view(s, t, stmt, seen)?,
            // PostgreSQL's recursion locks tables and views only.
            _ if t.is_table() => lock_one(s, t, stmt)?,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(sql: &str) -> Result<LockStatement> {
        parse(sql).expect("a LOCK statement")
    }

    #[test]
    fn parses_postgres_forms() {
        assert!(parse("SELECT 1").is_none());
        assert!(!is_lock("locked"));
        let l = p("LOCK t").unwrap();
        assert_eq!((l.tables, l.mode, l.nowait), (vec!["t".to_string()], LockMode::AccessExclusive, false));
        let l = p("lock table only public.T1, \"Mixed\" * in share row exclusive mode nowait;").unwrap();
        assert_eq!((l.tables, l.mode, l.nowait), (vec!["t1".to_string(), "Mixed".to_string()], LockMode::ShareRowExclusive, true));
        assert_eq!(p("LOCK TABLE t IN ACCESS SHARE MODE").unwrap().mode, LockMode::AccessShare);
        assert_eq!(p("LOCK t IN SHARE UPDATE EXCLUSIVE MODE").unwrap().mode, LockMode::ShareUpdateExclusive);
        assert_eq!(p("LOCK a, ONLY (b)").unwrap().tables, vec!["a".to_string(), "b".to_string()]);
        for bad in
            ["LOCK", "LOCK TABLE", "LOCK t IN SHARE", "LOCK t IN FOO MODE", "LOCK t NOWAIT x", "LOCK t,", "LOCK ONLY t *", "LOCK ONLY (t"]
        {
            assert_eq!(p(bad).unwrap_err().code, sqlstate::SYNTAX_ERROR, "{bad}");
        }
    }
}

//! The statement front end: parse with `sqlparser` (PostgreSQL dialect), then run each
//! statement against the session.
//!
//! Statements: CREATE [UNLOGGED] TABLE (with NOT NULL; AS query), DROP TABLE [IF EXISTS],
//! TRUNCATE, COPY ... FROM 'file' | STDIN, COPY ... TO 'file' | STDOUT (text, csv, binary),
//! queries (planned by `query`, run by `crate::exec`), INSERT ... VALUES | query, UPDATE ...
//! SET ... [WHERE ...], DELETE FROM t [WHERE ...] (`dml`), CREATE [UNIQUE] INDEX, DROP INDEX,
//! PRIMARY KEY / UNIQUE (`index`), VACUUM [t] (`vacuum`), BEGIN / START TRANSACTION with
//! isolation level and access mode, SET TRANSACTION, SET SESSION CHARACTERISTICS, COMMIT,
//! ROLLBACK, SET / SHOW of the transaction characteristics. Every statement passes the
//! structural gate (`check`) first: a clause the runner does not implement is refused (0A000),
//! never dropped.
//!
//! Transactions follow PostgreSQL's simple-query rules: the statements of one `execute` call
//! outside BEGIN ... COMMIT run in one implicit transaction, committed at the end or rolled
//! back at the first error (later statements are not run). Inside a block an error makes the
//! block fail, and every statement but COMMIT / ROLLBACK is refused until it ends.
//!
//! Invariants:
//! 1. Statements touch storage only through the access methods (`access::heap`, `copy`) and
//!    the heavyweight lock manager (PostgreSQL's lock for each statement, held to transaction end).
//! 2. Every error carries a SQLSTATE that PostgreSQL uses for the same condition.
//! 3. A statement that writes is checked against the transaction's access mode before it runs
//!    (`write_command`, 25006 in a READ ONLY transaction).

pub mod advisory;
pub mod array;
mod check;
mod comment;
pub mod cost;
pub(crate) mod datefmt;
pub(crate) mod ddl;
pub(crate) mod dialect;
pub mod dml;
mod explain;
pub mod expr;
pub(crate) mod fk;
pub mod func;
pub mod index;
pub mod jsonfn;
pub mod lock;
pub(crate) mod numfmt;
pub mod pg_catalog;
pub mod query;
pub(crate) mod regexp;
pub mod sequence;
pub mod srf;
pub mod statistics;
pub(crate) mod strformat;
pub mod vacuum;
pub mod view;

pub(crate) use ddl::table_name as ddl_table_name;

use crate::error::{sqlstate, PgError, Result};
use crate::session::{IsolationLevel, QueryResult, Session};
use crate::sql::dialect::Pg;
use sqlparser::ast::{Expr, Statement, Value};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

pub use crate::session::{CopyIo, RowSink};

/// Runs every statement in `sql`.
pub fn execute(s: &mut Session, sql: &str, io: &mut CopyIo<'_>) -> Result<Vec<QueryResult>> {
    run_text(s, sql, io, true)
}

/// Runs every statement in `sql` as part of a longer unit (the server's simple Query whose
/// pieces run separately): outside a block the implicit transaction stays open for
/// [`end_implicit`]; an error rolls it back as [`execute`] does.
pub fn execute_held(s: &mut Session, sql: &str, io: &mut CopyIo<'_>) -> Result<Vec<QueryResult>> {
    run_text(s, sql, io, false)
}

/// As [`execute`] (`commit`) or [`execute_held`], but an error comes with the results of
/// the statements that ran before it: a simple Query's client gets their rows and
/// CommandCompletes, then the error, as from PostgreSQL (their effects are rolled back, or
/// the block has failed, all the same).
pub fn execute_partial(s: &mut Session, sql: &str, io: &mut CopyIo<'_>, commit: bool) -> (Vec<QueryResult>, Result<()>) {
    let mut done = Vec::new();
    let r = run_text_into(s, sql, io, commit, &mut done);
    (done, r)
}

/// The statements of `sql` as texts, split at top-level semicolons (quotes, comments and
/// dollar quoting respected by the tokenizer); empty pieces dropped.
pub fn split_statements(sql: &str) -> Result<Vec<String>> {
    let dialect = Pg;
    let guarded = guard_question(sql);
    let sql = guarded.as_deref().unwrap_or(sql);
    // Not unescaped: each token's text is written back as it was (an unescaped E'a\\tb' or
    // 'it''s' would come back as another string, or none).
    let toks = Tokenizer::new(&dialect, sql).with_unescape(false).tokenize().map_err(|e| PgError::syntax(format!("syntax error: {e}")))?;
    let mut out = Vec::new();
    let mut cur = String::new();
    for t in toks {
        if matches!(t, Token::SemiColon) {
            if !cur.trim().is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.clear();
        } else {
            match &t {
                // The tokenizer decodes these whatever it is told: written back as standard
                // strings with the same value.
                Token::EscapedStringLiteral(v) | Token::UnicodeStringLiteral(v) => {
                    cur.push('\'');
                    cur.push_str(&v.replace('\'', "''"));
                    cur.push('\'');
                }
                _ => cur.push_str(&t.to_string()),
            }
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// Whether `sql` is the one statement `RESET name` (not `RESET ALL`), which [`execute`] runs
/// alone.
pub fn is_reset(sql: &str) -> bool {
    reset_statement(sql).is_some()
}

/// `SET name TO DEFAULT` for `sql` that is the one statement `RESET name` (not `RESET ALL`).
fn reset_statement(sql: &str) -> Option<String> {
    let toks = Tokenizer::new(&Pg, sql).tokenize().ok()?;
    let mut words = toks.iter().filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon));
    match (words.next(), words.next(), words.next()) {
        (Some(Token::Word(r)), Some(Token::Word(name)), None)
            if r.quote_style.is_none() && r.value.eq_ignore_ascii_case("reset") && !name.value.eq_ignore_ascii_case("all") =>
        {
            Some(format!("SET {name} TO DEFAULT"))
        }
        _ => None,
    }
}

/// Whether `sql` is the one statement `CHECKPOINT` (sqlparser has no such statement).
pub fn is_checkpoint(sql: &str) -> bool {
    let Ok(toks) = Tokenizer::new(&Pg, sql).tokenize() else { return false };
    let mut words = toks.iter().filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon));
    matches!((words.next(), words.next()), (Some(Token::Word(w)), None) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("checkpoint"))
}

/// CHECKPOINT: an immediate checkpoint (PostgreSQL's `CHECKPOINT` command), also inside a
/// transaction block as there (not a failed one: 25P02). The caller checked the role's
/// privilege.
pub fn checkpoint(s: &Session) -> Result<QueryResult> {
    if s.txn.as_ref().is_some_and(|t| t.failed) {
        return Err(PgError::new(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        ));
    }
    s.shared.checkpoint(crate::checkpoint::CheckpointKind::Requested)?;
    Ok(tag("CHECKPOINT"))
}

fn run_text(s: &mut Session, sql: &str, io: &mut CopyIo<'_>, commit: bool) -> Result<Vec<QueryResult>> {
    let mut done = Vec::new();
    run_text_into(s, sql, io, commit, &mut done).map(|()| done)
}

/// Runs the statements of `sql`, pushing each one's result to `done` as it completes; on an
/// error `done` holds those before it.
fn run_text_into(s: &mut Session, sql: &str, io: &mut CopyIo<'_>, commit: bool, done: &mut Vec<QueryResult>) -> Result<()> {
    s.check_not_stopped()?;
    if is_checkpoint(sql) {
        done.push(checkpoint(s)?);
        return Ok(());
    }
    // LOCK (sqlparser has none). `commit` false: a piece of a Query of several statements,
    // which is a transaction block for it.
    if let Some(stmt) = lock::parse(sql) {
        let in_block = s.in_transaction_block() || !commit;
        let r = stmt.and_then(|stmt| lock::run(s, stmt, in_block));
        done.push(end_statement(s, r, commit)?);
        return Ok(());
    }
    // `RESET name` is PostgreSQL's other spelling of `SET name TO DEFAULT` (sqlparser has no
    // RESET); a session's settings have no other value to return to.
    if let Some(set) = reset_statement(sql) {
        let mut r = run_text(s, &set, io, commit)?;
        if let Some(first) = r.first_mut() {
            first.tag = "RESET".into();
        }
        done.extend(r);
        return Ok(());
    }
    let parsed = strip_unlogged(sql).and_then(|(mut text, unlogged)| {
        // sqlparser wants `COPY ... FROM STDIN` terminated by ';' (it then looks for inline
        // data).
        if !text.trim_end().ends_with(';') {
            text.push(';');
        }
        parse(&text, sql).map(|stmts| (text, unlogged, stmts))
    });
    // A text that does not parse is an error as any other: it fails the block (PostgreSQL
    // aborts the transaction at a syntax error too).
    let (text, unlogged, stmts) = match parsed {
        Ok(p) => p,
        Err(e) => {
            if s.in_transaction_block() {
                s.mark_failed();
            } else {
                s.rollback();
            }
            return Err(e);
        }
    };
    if stmts.len() != 1 {
        // Results of several statements are sent in order after each other: not streamed.
        io.rows = None;
    }
    let mut seen = Seen::default();
    for (i, stmt) in stmts.into_iter().enumerate() {
        // `statement_timeout` applies to each statement of the text separately.
        if i > 0 {
            crate::interrupt::restart_statement_timer();
        }
        let extra = unlogged.for_statement(&stmt, &mut seen);
        match check::statement(&stmt).and_then(|()| run_one(s, stmt, extra, io)) {
            Ok(r) => done.push(r),
            Err(mut e) => {
                e.resolve_position(same_layout(&text, sql).then_some(sql));
                if s.in_transaction_block() {
                    s.mark_failed();
                } else {
                    s.rollback();
                }
                return Err(e);
            }
        }
    }
    if commit && !s.in_transaction_block() {
        if let Err(e) = s.commit() {
            // PostgreSQL commits before the last statement's CommandComplete: a failed commit
            // sends the error instead.
            done.pop();
            return Err(e);
        }
    }
    Ok(())
}

/// A statement parsed once and run many times with parameters `$1`, `$2`, ... (the library's
/// and the extended query protocol's prepared statement).
#[derive(Clone, Debug)]
pub struct Prepared {
    pub(crate) stmt: Option<Statement>,
    pub(crate) extra: Extra,
    /// The highest parameter number the statement uses.
    pub nparams: usize,
    /// The statement's text.
    pub sql: String,
    /// The plan of a query, made at its first run and reused while the definitions of the
    /// tables it reads are the same ones (see [`dml::cached_select`]).
    pub(crate) plan: std::sync::Arc<std::sync::Mutex<Option<std::sync::Arc<dml::CachedQuery>>>>,
    /// Whether the parsed text kept every character of `sql` where it was, so that the
    /// parser's locations are positions in `sql` (errors' `P`).
    pub(crate) positions: bool,
}

impl Prepared {
    /// True for an empty statement (PostgreSQL answers it with EmptyQueryResponse).
    pub fn is_empty(&self) -> bool {
        self.stmt.is_none()
    }

    /// Drops the cached plan (`DISCARD PLANS`); the next run plans again.
    pub fn forget_plan(&self) {
        *self.plan.lock().expect("poisoned") = None;
    }

    /// Whether running it returns rows.
    pub fn returns_rows(&self) -> bool {
        match &self.stmt {
            Some(Statement::Query(q)) => !has_select_into(q),
            Some(Statement::Explain { .. } | Statement::ShowVariable { .. }) => true,
            // Row statements with RETURNING (Describe must announce their columns).
            Some(Statement::Insert(i)) => i.returning.is_some(),
            Some(Statement::Update { returning, .. }) => returning.is_some(),
            Some(Statement::Delete(d)) => d.returning.is_some(),
            _ => false,
        }
    }
}

/// The SQL type name of a parameter type OID a client declared, for the types whose values
/// differ from an untyped literal's (numbers, Booleans, dates and times, uuid, interval,
/// json, bytea). Text types, `unknown` and types heapstore does not have give None: such a
/// parameter stays untyped and takes the type its context needs, as before.
fn declared_param_type(oid: u32) -> Option<&'static str> {
    Some(match oid {
        16 => "boolean",
        17 => "bytea",
        20 => "bigint",
        21 => "smallint",
        23 => "integer",
        26 => "oid",
        114 => "json",
        700 => "real",
        701 => "double precision",
        1082 => "date",
        1083 => "time",
        1266 => "timetz",
        1114 => "timestamp",
        1184 => "timestamptz",
        1186 => "interval",
        1700 => "numeric",
        2950 => "uuid",
        3802 => "jsonb",
        _ => return None,
    })
}

/// Types the parameters a client declared at Parse (`oids[n - 1]` for `$n`; 0 for none):
/// each `$n` of such a type becomes a parameter of that type, as in PostgreSQL, where
/// `round($1)` with `$1` declared numeric is `round(numeric)` (3 for 2.5) and `$1 / 2` with
/// `$1` numeric is numeric division. The statement marks it as `SAFE_CAST($n AS type)`,
/// which PostgreSQL's grammar cannot write: the binder reads that as a parameter of the
/// type, and names a result column after what is inside (`?column?`), not after the type.
pub fn declare_param_types(p: &mut Prepared, oids: &[u32]) {
    let names: Vec<Option<&str>> = oids.iter().map(|&o| declared_param_type(o)).collect();
    if names.iter().all(Option::is_none) {
        return;
    }
    let Some(stmt) = p.stmt.as_mut() else { return };
    let _ = sqlparser::ast::visit_expressions_mut(stmt, |e| {
        let n = match e {
            Expr::Value(v) => match &v.value {
                Value::Placeholder(ph) => ph.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()).filter(|&n| n >= 1),
                _ => None,
            },
            _ => None,
        };
        let ty = n.and_then(|n| names.get(n - 1).copied().flatten());
        if let Some(data_type) = ty.and_then(|t| Parser::new(&Pg).try_with_sql(t).and_then(|mut p| p.parse_data_type()).ok()) {
            let inner = e.clone();
            *e = Expr::Cast { kind: sqlparser::ast::CastKind::SafeCast, expr: Box::new(inner), data_type, format: None };
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
}

/// Parses one statement with parameter placeholders `$n`. More than one statement is refused,
/// as PostgreSQL refuses it in a prepared statement.
pub fn prepare(sql: &str) -> Result<Prepared> {
    let (mut text, unlogged) = strip_unlogged(sql)?;
    if !text.trim_end().ends_with(';') {
        text.push(';');
    }
    let mut stmts = parse(&text, sql)?;
    if stmts.len() > 1 {
        return Err(PgError::syntax("cannot insert multiple commands into a prepared statement"));
    }
    let stmt = stmts.pop();
    if let Some(st) = &stmt {
        check::statement(st)?;
    }
    let mut nparams = 0usize;
    if let Some(st) = &stmt {
        let _ = sqlparser::ast::visit_expressions(st, |e| {
            if let Expr::Value(v) = e {
                if let Value::Placeholder(p) = &v.value {
                    if let Some(n) = p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
                        nparams = nparams.max(n);
                    }
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    let extra = stmt.as_ref().map(|st| unlogged.for_statement(st, &mut Seen::default())).unwrap_or_default();
    let positions = same_layout(&text, sql);
    Ok(Prepared { stmt, extra, nparams, sql: sql.to_string(), plan: Default::default(), positions })
}

/// Runs a prepared statement with `params` (text form; None = NULL), as one statement of the
/// simple query protocol: in its own implicit transaction unless a block is open. A parameter
/// is substituted as an untyped literal, so it takes the type its context asks for.
pub fn execute_prepared(s: &mut Session, p: &Prepared, params: &[Option<String>], io: &mut CopyIo<'_>) -> Result<QueryResult> {
    run_prepared(s, p, params, io, true)
}

/// Runs a prepared statement as one Execute of PostgreSQL's extended protocol: outside a
/// block, the statements up to the next Sync share one implicit transaction, which
/// [`end_implicit`] commits at the Sync, so a batch or pipeline is all-or-nothing. An error
/// rolls that transaction back (the protocol then skips to the Sync).
pub fn execute_prepared_until_sync(s: &mut Session, p: &Prepared, params: &[Option<String>], io: &mut CopyIo<'_>) -> Result<QueryResult> {
    run_prepared(s, p, params, io, false)
}

/// The text form of a constant (a literal, `-n`, NULL, or a cast of one), as SQL-level
/// `EXECUTE name (args)` passes its arguments; None for NULL. Other expressions are refused.
pub fn constant_text(e: &Expr) -> Result<Option<String>> {
    Ok(match e {
        Expr::Value(v) => match &v.value {
            Value::Null => None,
            Value::Number(n, _) => Some(n.clone()),
            Value::SingleQuotedString(t) | Value::EscapedStringLiteral(t) => Some(t.clone()),
            Value::Boolean(b) => Some(b.to_string()),
            other => return Err(PgError::feature(format!("EXECUTE argument not supported: {other}"))),
        },
        Expr::UnaryOp { op: sqlparser::ast::UnaryOperator::Minus, expr } => constant_text(expr)?.map(|t| format!("-{t}")),
        Expr::Nested(inner) => constant_text(inner)?,
        other => return Err(PgError::feature(format!("EXECUTE argument not supported: {other} (only constants)"))),
    })
}

/// The text of SQL `EXECUTE`'s argument `e` for parameter `$n` declared of type `declared`
/// (the OID given at PREPARE; 0 for none). As PostgreSQL converts the argument to the
/// parameter's type with an assignment cast: `EXECUTE p(1.5)` of an integer parameter is 2,
/// a Boolean for an integer is 42804. A quoted constant is read by the type's input, as an
/// untyped literal is.
pub fn execute_argument(e: &Expr, n: usize, declared: u32) -> Result<Option<String>> {
    let to = declared_param_type(declared)
        .and_then(|name| Parser::new(&Pg).try_with_sql(name).and_then(|mut p| p.parse_data_type()).ok())
        .and_then(|dt| ddl::sql_type(&dt).ok());
    let Some(to) = to else { return constant_text(e) };
    let b = expr::bind(e, &query::no_table())?;
    if matches!(b, expr::Scalar::Unknown(_)) {
        return constant_text(e);
    }
    let v = b.eval(&[], &[])?;
    let Some(from) = expr::value_type(&v) else { return Ok(None) };
    if !dml::assignable(&from, &to) {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!("parameter ${n} of type {} cannot be coerced to the expected type {}", from.name(), to.name()),
        )
        .with_hint("You will need to rewrite or cast the expression."));
    }
    let v = expr::cast_value(v, &to)?;
    Ok(v.to_text(&to))
}

/// Commits the implicit transaction the statements since the last Sync ran in, if one is open
/// (a block opened by BEGIN stays open).
pub fn end_implicit(s: &mut Session) -> Result<()> {
    if s.txn.is_some() && !s.in_transaction_block() {
        s.commit()?;
    }
    Ok(())
}

/// Whether the front end's rewrite `text` of `sql` kept every character where it was (it
/// blanks words out, and may append a `;`).
fn same_layout(text: &str, sql: &str) -> bool {
    let (t, u) = (text.chars().count(), sql.chars().count());
    t == u || t == u + 1
}

fn run_prepared(s: &mut Session, p: &Prepared, params: &[Option<String>], io: &mut CopyIo<'_>, commit: bool) -> Result<QueryResult> {
    run_prepared_inner(s, p, params, io, commit).map_err(|mut e| {
        e.resolve_position(p.positions.then_some(p.sql.as_str()));
        e
    })
}

fn run_prepared_inner(s: &mut Session, p: &Prepared, params: &[Option<String>], io: &mut CopyIo<'_>, commit: bool) -> Result<QueryResult> {
    s.check_not_stopped()?;
    if params.len() < p.nparams {
        return Err(PgError::new(
            sqlstate::PROTOCOL_VIOLATION,
            format!("bind message supplies {} parameters, but prepared statement requires {}", params.len(), p.nparams),
        ));
    }
    let Some(stmt) = &p.stmt else { return Ok(QueryResult::default()) };
    if let Some(r) = dml::cached_select(s, p, params, io.rows.as_deref_mut()) {
        return end_statement(s, r, commit);
    }
    let mut stmt = stmt.clone();
    if p.nparams > 0 {
        let mut bad = None;
        let _ = sqlparser::ast::visit_expressions_mut(&mut stmt, |e| {
            // A declared parameter type (`declare_param_types`) becomes a plain cast of the
            // value: statements that keep text (a DEFAULT, a CHECK, a view) keep SQL that
            // PostgreSQL reads.
            if let Expr::Cast { kind: kind @ sqlparser::ast::CastKind::SafeCast, .. } = e {
                *kind = sqlparser::ast::CastKind::DoubleColon;
            }
            if let Expr::Value(v) = e {
                if let Value::Placeholder(ph) = &v.value {
                    match ph.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()).filter(|&n| n >= 1 && n <= params.len()) {
                        Some(n) => {
                            v.value = match &params[n - 1] {
                                Some(t) => Value::SingleQuotedString(t.clone()),
                                None => Value::Null,
                            }
                        }
                        None => bad = Some(ph.clone()),
                    }
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        if let Some(ph) = bad {
            return Err(PgError::new(sqlstate::UNDEFINED_PARAMETER_NUMBER, format!("there is no parameter {ph}")));
        }
    }
    let r = run_one(s, stmt, p.extra, io);
    end_statement(s, r, commit)
}

/// Receives a query's rows as values, with the result's columns (names and types).
pub(crate) type ValueSink<'a> = dyn FnMut(&[(String, crate::types::SqlType)], &[crate::types::Value]) -> Result<()> + 'a;

/// Runs a prepared statement with `params` (text form) as [`execute_prepared`] does, handing
/// each result row of a query to `f` with the result's columns as it is produced (the typed
/// API, `crate::api`); a statement that is not a query runs as usual and gives no rows.
/// Returns the number of rows.
pub(crate) fn run_query_values(s: &mut Session, p: &Prepared, params: &[Option<String>], f: &mut ValueSink<'_>) -> Result<u64> {
    let Some(Statement::Query(q)) = &p.stmt else {
        execute_prepared(s, p, params, &mut CopyIo::default())?;
        return Ok(0);
    };
    s.check_not_stopped()?;
    if params.len() < p.nparams {
        return Err(PgError::new(
            sqlstate::PROTOCOL_VIOLATION,
            format!("{} parameters given, but the statement has {}", params.len(), p.nparams),
        ));
    }
    if s.txn.as_ref().is_some_and(|t| t.failed) {
        return Err(PgError::new(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        ));
    }
    s.begin_implicit();
    s.c_collate.set(false);
    let mut run = |s: &mut Session| -> Result<u64> {
        let now = s.txn.as_ref().map(|t| t.start_us);
        let b = query::Planner::new(s, now).query(q, &[])?;
        crate::exec::lock_tables(s, &b.node)?;
        let snap = s.snapshot();
        let cols: Vec<(String, crate::types::SqlType)> = b.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
        let ex = crate::exec::Exec::new(s, snap, params);
        let mut n = 0u64;
        ex.run(&b.node, &[], &mut |r| {
            n += 1;
            f(&cols, r)?;
            Ok(crate::access::heap::Flow::Continue)
        })?;
        Ok(n)
    };
    let r = run(s);
    if r.is_ok() {
        s.command_done();
    }
    match end_statement(s, r.map(|n| QueryResult { tag: n.to_string(), ..Default::default() }), true) {
        Ok(q) => Ok(q.tag.parse().unwrap_or(0)),
        Err(e) => Err(e),
    }
}

/// The types of a prepared statement's parameters, inferred from their use as PostgreSQL's
/// Parse does: the target column of an INSERT value or UPDATE assignment, the other side of a
/// comparison, an explicit cast, `LIMIT` (bigint). None where nothing fixes one (PostgreSQL
/// then resolves it as text). Fails as running the statement would (an unknown table, ...).
pub fn param_types(s: &Session, p: &Prepared) -> Result<Vec<Option<crate::types::SqlType>>> {
    let mut out = vec![None; p.nparams];
    match &p.stmt {
        Some(Statement::Query(q)) => query::param_types(s, q, &mut out)?,
        Some(st) => dml::param_types(s, st, &mut out)?,
        None => {}
    }
    out.truncate(p.nparams.max(out.iter().rposition(|t| t.is_some()).map_or(0, |i| i + 1)));
    Ok(out)
}

/// Ends a statement run on its own: outside a block its implicit transaction commits if
/// `commit` (or rolls back on error); inside one, an error fails the block.
fn end_statement(s: &mut Session, r: Result<QueryResult>, commit: bool) -> Result<QueryResult> {
    match r {
        Ok(r) => {
            if commit && !s.in_transaction_block() {
                s.commit()?;
            }
            Ok(r)
        }
        Err(e) => {
            if s.in_transaction_block() {
                s.mark_failed();
            } else {
                s.rollback();
            }
            Err(e)
        }
    }
}

/// The tables a query reads (a cursor over it keeps DDL off them: 55006), planned but not run.
pub fn query_tables(s: &Session, q: &sqlparser::ast::Query) -> Vec<u32> {
    let now = s.txn.as_ref().map(|t| t.start_us);
    let Ok(b) = query::Planner::new(s, now).query(q, &[]) else { return Vec::new() };
    let mut tables = Vec::new();
    b.node.tables(&mut tables);
    let mut oids: Vec<u32> = tables.iter().map(|t| t.oid).collect();
    oids.sort_unstable();
    oids.dedup();
    oids
}

/// How many columns a query gives (COPY (query) TO announces it), planned but not run.
pub fn query_width(s: &Session, q: &sqlparser::ast::Query) -> Option<usize> {
    let now = s.txn.as_ref().map(|t| t.start_us);
    query::Planner::new(s, now).query(q, &[]).ok().map(|b| b.columns.len())
}

/// The result columns of a prepared statement that returns rows, without running it (the
/// extended protocol's Describe): the query is bound, not run.
pub fn describe(s: &mut Session, p: &Prepared) -> Result<QueryResult> {
    describe_inner(s, p).map_err(|mut e| {
        e.resolve_position(p.positions.then_some(p.sql.as_str()));
        e
    })
}

fn describe_inner(s: &mut Session, p: &Prepared) -> Result<QueryResult> {
    match &p.stmt {
        // SELECT ... INTO t: CREATE TABLE AS, which returns no rows.
        Some(Statement::Query(q)) if has_select_into(q) => Ok(QueryResult::default()),
        Some(Statement::Query(q)) => {
            // The plan Execute will run (cached in the statement), so Describe plans at most
            // once.
            let plan = dml::cached_plan(s, p, q)?;
            let b = &plan.bound;
            Ok(QueryResult {
                columns: b.columns.iter().map(|c| (c.name.clone(), c.ty.name())).collect(),
                column_sources: b.columns.iter().map(|c| c.source).collect(),
                returns_rows: true,
                ..Default::default()
            })
        }
        Some(Statement::Explain { .. }) => {
            Ok(QueryResult { columns: vec![("QUERY PLAN".into(), "text".into())], returns_rows: true, ..Default::default() })
        }
        // INSERT / UPDATE / DELETE ... RETURNING: the RETURNING list's columns.
        Some(st @ (Statement::Insert(_) | Statement::Update { .. } | Statement::Delete(_))) => {
            // The table, the alias RETURNING knows it by, and the FROM / USING items.
            type Target<'a> = (String, Option<String>, Option<&'a [sqlparser::ast::TableWithJoins]>, &'a [sqlparser::ast::SelectItem]);
            let (table, alias, from, items): Target<'_> = match st {
                Statement::Insert(sqlparser::ast::Insert {
                    table: sqlparser::ast::TableObject::TableName(n),
                    table_alias,
                    returning: Some(r),
                    ..
                }) => (crate::catalog::relation_key(n)?, table_alias.as_ref().map(crate::catalog::fold_ident), None, r),
                Statement::Update { table, from, returning: Some(r), .. } => {
                    let (name, alias) = dml::target_table(table)?;
                    (name, alias, dml::update_from(from.as_ref())?, r)
                }
                Statement::Delete(sqlparser::ast::Delete {
                    from: sqlparser::ast::FromTable::WithFromKeyword(v) | sqlparser::ast::FromTable::WithoutKeyword(v),
                    using,
                    returning: Some(r),
                    ..
                }) => match v.as_slice() {
                    [t] => {
                        let (name, alias) = dml::target_table(t)?;
                        (name, alias, using.as_deref(), r)
                    }
                    _ => return Ok(QueryResult::default()),
                },
                _ => return Ok(QueryResult::default()),
            };
            let t = s.table(&table)?;
            let (scope, _) = dml::bind_rows(s, &t, alias.as_deref(), from, None, None)?;
            let (columns, column_sources) = dml::Returning::bind_in(s, &scope, items)?.describe();
            Ok(QueryResult { columns, column_sources, returns_rows: true, ..Default::default() })
        }
        // SHOW answers one text column named after the setting (`transaction isolation level`
        // is `transaction_isolation`).
        Some(Statement::ShowVariable { variable }) => {
            let name = variable.iter().map(|i| i.value.to_ascii_lowercase()).collect::<Vec<_>>().join(" ");
            let name = if name == "transaction isolation level" { "transaction_isolation".to_string() } else { name };
            Ok(QueryResult { columns: vec![(name, "text".into())], returns_rows: true, ..Default::default() })
        }
        _ => Ok(QueryResult::default()),
    }
}

/// An identifier as PostgreSQL names it: folded to lower case unless quoted.
fn ident_name(i: &sqlparser::ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    }
}

/// `SAVEPOINT`, `RELEASE [SAVEPOINT]` and `ROLLBACK TO [SAVEPOINT]` (session invariant 9), with
/// PostgreSQL's errors: 25P01 outside a transaction block, 25P02 for all but ROLLBACK TO in a
/// failed one, 3B001 for a name no open savepoint has.
fn savepoint_command(s: &mut Session, stmt: &Statement, name: &str) -> Result<QueryResult> {
    let (what, tag_word) = match stmt {
        Statement::Savepoint { .. } => ("SAVEPOINT", "SAVEPOINT"),
        Statement::ReleaseSavepoint { .. } => ("RELEASE SAVEPOINT", "RELEASE"),
        _ => ("ROLLBACK TO SAVEPOINT", "ROLLBACK"),
    };
    if !s.in_transaction_block() {
        return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, format!("{what} can only be used in transaction blocks")));
    }
    let failed = s.txn.as_ref().is_some_and(|t| t.failed);
    match stmt {
        Statement::Savepoint { .. } | Statement::ReleaseSavepoint { .. } if failed => Err(PgError::new(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        )),
        Statement::Savepoint { .. } => s.savepoint(name).map(|()| tag(tag_word)),
        Statement::ReleaseSavepoint { .. } => s.release_savepoint(name).map(|()| tag(tag_word)),
        _ => s.rollback_to_savepoint(name).map(|()| tag(tag_word)),
    }
}

fn run_one(s: &mut Session, stmt: Statement, extra: Extra, io: &mut CopyIo<'_>) -> Result<QueryResult> {
    match &stmt {
        Statement::StartTransaction { modes, begin, .. } => {
            let (isolation, read_only) = transaction_modes(modes)?;
            let mut r = tag(if *begin { "BEGIN" } else { "START TRANSACTION" });
            if let Some(w) = s.begin_explicit() {
                r.notices.push(w);
            }
            s.set_transaction_modes(isolation, read_only)?;
            return Ok(r);
        }
        Statement::Commit { chain, end: _, modifier: None } => {
            let failed = s.txn.as_ref().is_some_and(|t| t.failed);
            let mut r = tag(if failed { "ROLLBACK" } else { "COMMIT" });
            if !s.in_transaction_block() {
                if *chain {
                    return Err(PgError::new(
                        sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                        "COMMIT AND CHAIN can only be used in transaction blocks",
                    ));
                }
                r.notices.push("WARNING:  there is no transaction in progress".into());
            }
            let chars = s.transaction_characteristics();
            s.commit()?;
            if *chain {
                chain_transaction(s, chars)?;
            }
            return Ok(r);
        }
        Statement::Rollback { chain, savepoint: None } => {
            let mut r = tag("ROLLBACK");
            if !s.in_transaction_block() {
                if *chain {
                    return Err(PgError::new(
                        sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                        "ROLLBACK AND CHAIN can only be used in transaction blocks",
                    ));
                }
                r.notices.push("WARNING:  there is no transaction in progress".into());
            }
            let chars = s.transaction_characteristics();
            s.rollback();
            if *chain {
                chain_transaction(s, chars)?;
            }
            return Ok(r);
        }
        Statement::Commit { modifier: Some(_), .. } => return Err(PgError::feature("this COMMIT form is not supported by heapstore")),
        Statement::Rollback { chain: true, savepoint: Some(_) } => {
            return Err(PgError::syntax("ROLLBACK AND CHAIN cannot name a savepoint"));
        }
        Statement::Savepoint { name }
        | Statement::ReleaseSavepoint { name }
        | Statement::Rollback { chain: false, savepoint: Some(name) } => {
            return savepoint_command(s, &stmt, &ident_name(name));
        }
        _ => {}
    }
    if s.txn.as_ref().is_some_and(|t| t.failed) {
        return Err(PgError::new(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        ));
    }
    s.begin_implicit();
    s.c_collate.set(false);
    if let Some(r) = transaction_setting(s, &stmt)? {
        return Ok(r);
    }
    // `SELECT ... INTO [TEMP | UNLOGGED] [TABLE] t ...` is CREATE TABLE t AS SELECT ..., as
    // PostgreSQL runs it.
    let (stmt, extra) = match stmt {
        Statement::Query(mut q) => match take_select_into(&mut q) {
            Some(into) => {
                s.check_writable("SELECT INTO")?;
                let ct = sqlparser::ast::helpers::stmt_create_table::CreateTableBuilder::new(into.name)
                    .temporary(into.temporary)
                    .query(Some(q))
                    .build();
                (ct, Extra { unlogged: into.unlogged, ..extra })
            }
            None => (Statement::Query(q), extra),
        },
        other => (other, extra),
    };
    if let Some(c) = write_command(&stmt) {
        s.check_writable_unless_temp(c, writes_only_temp(s, &stmt))?;
    }
    s.txn().ran_statement = true;
    let r = match stmt {
        Statement::CreateTable(ct) => ddl::create_table(s, ct, extra.unlogged),
        Statement::Drop { object_type: sqlparser::ast::ObjectType::Index, if_exists, names, .. } => {
            index::drop_indexes(s, if_exists, names)
        }
        Statement::Drop { object_type, if_exists, names, cascade, .. } => ddl::drop_tables(s, object_type, if_exists, names, cascade),
        Statement::CreateIndex(ci) => index::create_index(s, ci),
        Statement::Comment { object_type, object_name, comment, if_exists } => {
            comment::comment_on(s, object_type, &object_name, comment, if_exists)
        }
        Statement::CreateSequence { temporary, if_not_exists, name, data_type, sequence_options, owned_by } => {
            sequence::create_sequence(s, temporary, if_not_exists, &name, data_type.as_ref(), &sequence_options, owned_by.as_ref())
        }
        Statement::CreateView {
            or_alter: false,
            or_replace,
            materialized,
            secure: false,
            name,
            name_before_not_exists: _,
            columns,
            query,
            options,
            cluster_by,
            comment: None,
            with_no_schema_binding: false,
            if_not_exists: false,
            temporary,
            to: None,
            params: None,
        } => {
            if materialized {
                return Err(PgError::feature("materialized views are not supported by heapstore"));
            }
            if temporary {
                return Err(PgError::feature("temporary views are not supported by heapstore"));
            }
            if !cluster_by.is_empty() || !matches!(options, sqlparser::ast::CreateTableOptions::None) {
                return Err(PgError::feature("CREATE VIEW options are not supported by heapstore"));
            }
            view::create_view(s, or_replace, &name, &columns, &query)
        }
        Statement::Truncate { table_names, .. } => ddl::truncate(s, table_names),
        Statement::Copy { source: sqlparser::ast::CopySource::Query(_), .. } if extra.copy_parallel.is_some() => {
            Err(PgError::feature("COPY PARALLEL cannot be used with COPY TO"))
        }
        Statement::Copy { source: sqlparser::ast::CopySource::Query(q), to: true, target, options, legacy_options, .. } => {
            query::copy_query_to(s, &q, target, &options, &legacy_options, extra.copy_force_quote_all, io)
        }
        Statement::Copy { source, to, target, options, legacy_options, .. } => {
            let stmt = crate::copy::exec::CopyStatement {
                source,
                to,
                target,
                options,
                legacy: legacy_options,
                parallel: extra.copy_parallel,
                force_quote_all: extra.copy_force_quote_all,
            };
            crate::copy::exec::run_copy(s, stmt, io)
        }
        Statement::Query(q) => query::run_query_to(s, &q, &[], io.rows.as_deref_mut()),
        Statement::Insert(ins) => dml::insert(s, ins, &[]),
        Statement::Update { table, assignments, from, selection, returning, or: None, limit: None } => {
            dml::update(s, &table, &assignments, dml::update_from(from.as_ref())?, selection.as_ref(), returning.as_deref(), &[])
        }
        Statement::Delete(d) => dml::delete(s, d, &[]),
        Statement::Vacuum(v) => vacuum::run(s, v, extra.vacuum_verbose, extra.vacuum_analyze),
        Statement::Analyze { table_name, columns, partitions, cache_metadata: false, noscan: false, compute_statistics: false, .. } => {
            let all = table_name.0.len() == 1 && table_name.0[0].as_ident().is_some_and(|i| i.value == "*" && i.quote_style == Some('"'));
            // The other tables of `ANALYZE a, b (x)` (see `analyze_statements`), each in turn.
            let mut more: Vec<(sqlparser::ast::ObjectName, Vec<sqlparser::ast::Ident>)> = Vec::new();
            for e in partitions.iter().flatten() {
                more.push(match e {
                    Expr::Identifier(i) => (sqlparser::ast::ObjectName::from(vec![i.clone()]), Vec::new()),
                    Expr::CompoundIdentifier(parts) => (sqlparser::ast::ObjectName::from(parts.clone()), Vec::new()),
                    Expr::Function(f) => {
                        let sqlparser::ast::FunctionArguments::List(l) = &f.args else {
                            return Err(PgError::syntax("syntax error in ANALYZE"));
                        };
                        let cols = l
                            .args
                            .iter()
                            .map(|a| match a {
                                sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(Expr::Identifier(i))) => {
                                    Ok(i.clone())
                                }
                                _ => Err(PgError::syntax("syntax error in ANALYZE")),
                            })
                            .collect::<Result<Vec<_>>>()?;
                        (f.name.clone(), cols)
                    }
                    _ => return Err(PgError::syntax("syntax error in ANALYZE")),
                });
            }
            // Every table is found before any is analyzed, as in PostgreSQL.
            for (name, _) in &more {
                s.table_any(&crate::catalog::relation_key(name)?)?;
            }
            let mut r = vacuum::analyze(s, (!all).then_some(&table_name), &columns, extra.analyze_verbose)?;
            for (name, cols) in &more {
                let next = vacuum::analyze(s, Some(name), cols, extra.analyze_verbose)?;
                r.notices.extend(next.notices);
            }
            Ok(r)
        }
        Statement::AlterTable { name, if_exists, only: _, operations, location: None, on_cluster: None, iceberg: false, .. } => {
            ddl::alter_table(s, &name, if_exists, &operations)
        }
        st @ Statement::Explain { .. } => explain::explain(s, st),
        Statement::Discard { object_type: sqlparser::ast::DiscardObject::TEMP } => {
            s.discard_temp()?;
            Ok(tag("DISCARD TEMP"))
        }
        Statement::Discard { object_type: sqlparser::ast::DiscardObject::SEQUENCES } => {
            s.forget_sequence_values();
            Ok(tag("DISCARD SEQUENCES"))
        }
        Statement::Deallocate { .. } | Statement::Discard { .. } => {
            Err(PgError::feature("DEALLOCATE and DISCARD are run by heapstore's server, sent alone in a query or prepared statement"))
        }
        other => Err(PgError::feature(format!("statement not supported: {}", first_words(&other.to_string())))),
    }?;
    s.command_done();
    Ok(r)
}

/// `COMMIT AND CHAIN` / `ROLLBACK AND CHAIN`: a new block at once, with the ended one's
/// isolation level and access mode.
fn chain_transaction(s: &mut Session, chars: crate::session::TxnCharacteristics) -> Result<()> {
    s.begin_explicit();
    s.set_transaction_modes(Some(chars.isolation), Some(chars.read_only))
}

/// Takes the INTO clause of a query's first SELECT (`SELECT ... INTO t`), if it has one; an
/// INTO anywhere else stays and is refused when the query is planned, as PostgreSQL does.
/// Whether a query's first SELECT has an INTO clause ([`take_select_into`]).
pub(crate) fn has_select_into(q: &sqlparser::ast::Query) -> bool {
    let mut body = &*q.body;
    loop {
        match body {
            sqlparser::ast::SetExpr::Select(sel) => return sel.into.is_some(),
            sqlparser::ast::SetExpr::SetOperation { left, .. } => body = left,
            _ => return false,
        }
    }
}

fn take_select_into(q: &mut sqlparser::ast::Query) -> Option<sqlparser::ast::SelectInto> {
    let mut body = &mut *q.body;
    loop {
        match body {
            sqlparser::ast::SetExpr::Select(sel) => return sel.into.take(),
            sqlparser::ast::SetExpr::SetOperation { left, .. } => body = left,
            _ => return None,
        }
    }
}

/// The command a statement that writes is refused as in a READ ONLY transaction (25006,
/// `cannot execute INSERT in a read-only transaction`); None for statements that do not
/// write (VACUUM is allowed, as in PostgreSQL: it changes no row anyone can see).
pub(crate) fn write_command(st: &Statement) -> Option<&'static str> {
    use sqlparser::ast::ObjectType;
    Some(match st {
        Statement::Insert(_) => "INSERT",
        Statement::Update { .. } => "UPDATE",
        Statement::Delete(_) => "DELETE",
        Statement::Copy { to: false, .. } => "COPY FROM",
        Statement::CreateTable(_) => "CREATE TABLE",
        Statement::CreateIndex(_) => "CREATE INDEX",
        Statement::Comment { .. } => "COMMENT",
        Statement::Drop { object_type: ObjectType::Index, .. } => "DROP INDEX",
        Statement::Drop { object_type: ObjectType::Sequence, .. } => "DROP SEQUENCE",
        Statement::Drop { object_type: ObjectType::View, .. } => "DROP VIEW",
        Statement::Drop { .. } => "DROP TABLE",
        Statement::CreateSequence { .. } => "CREATE SEQUENCE",
        Statement::CreateView { .. } => "CREATE VIEW",
        Statement::Truncate { .. } => "TRUNCATE TABLE",
        Statement::AlterTable { .. } => "ALTER TABLE",
        Statement::Explain { analyze: true, statement, .. } => return write_command(statement),
        _ => return None,
    })
}

/// Whether `st` writes a temporary table and nothing else (INSERT, UPDATE, DELETE or COPY FROM
/// into one), which PostgreSQL allows in a READ ONLY transaction (its executor checks only
/// the relations written that are not temporary). Nothing else is written on the way: a
/// temporary table's foreign keys lead only to temporary tables, a data-modifying WITH and a
/// locking clause are refused on their own, and `nextval` checks for itself.
pub(crate) fn writes_only_temp(s: &Session, st: &Statement) -> bool {
    use sqlparser::ast::{CopySource, FromTable, TableObject};
    let key = match st {
        Statement::Insert(i) => match &i.table {
            TableObject::TableName(n) => crate::catalog::relation_key(n).ok(),
            _ => None,
        },
        Statement::Update { table, .. } => dml::target_table(table).ok().map(|(n, _)| n),
        Statement::Delete(d) => match &d.from {
            FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => match v.as_slice() {
                [t] => dml::target_table(t).ok().map(|(n, _)| n),
                _ => None,
            },
        },
        Statement::Copy { source: CopySource::Table { table_name, .. }, to: false, .. } => crate::catalog::relation_key(table_name).ok(),
        _ => None,
    };
    key.and_then(|k| s.table(&k).ok()).is_some_and(|t| t.persistence == crate::catalog::Persistence::Temporary)
}

/// The isolation level and access mode of `BEGIN` / `SET TRANSACTION` modes (None: not given).
fn transaction_modes(modes: &[sqlparser::ast::TransactionMode]) -> Result<(Option<IsolationLevel>, Option<bool>)> {
    use sqlparser::ast::{TransactionAccessMode, TransactionIsolationLevel as L, TransactionMode};
    let (mut iso, mut ro) = (None, None);
    for m in modes {
        match m {
            TransactionMode::IsolationLevel(l) => {
                let level = match l {
                    L::ReadUncommitted => IsolationLevel::ReadUncommitted,
                    L::ReadCommitted => IsolationLevel::ReadCommitted,
                    L::RepeatableRead => IsolationLevel::RepeatableRead,
                    L::Serializable => IsolationLevel::Serializable,
                    L::Snapshot => return Err(PgError::syntax("syntax error at or near \"SNAPSHOT\"")),
                };
                iso = Some(level.check_supported()?);
            }
            TransactionMode::AccessMode(TransactionAccessMode::ReadOnly) => ro = Some(true),
            TransactionMode::AccessMode(TransactionAccessMode::ReadWrite) => ro = Some(false),
        }
    }
    Ok((iso, ro))
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn parse_on_off(name: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" | "t" | "y" => Ok(true),
        "off" | "false" | "no" | "0" | "f" | "n" => Ok(false),
        _ => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("parameter \"{name}\" requires a Boolean value"))),
    }
}

/// `SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED | IMMEDIATE }` (`exec::fk` invariant
/// 3): sets when the named deferrable foreign keys (all, with ALL) are checked for the rest of
/// the transaction; IMMEDIATE runs their checks queued so far now. Outside a transaction
/// block it warns, and lasts as long as the implicit transaction it runs in (the statements of
/// one query string, as PostgreSQL's implicit block).
fn set_constraints(s: &mut Session, deferred: bool, names: &[String]) -> Result<QueryResult> {
    let mut r = tag("SET CONSTRAINTS");
    if !s.in_transaction_block() {
        r.notices.push("WARNING:  SET CONSTRAINTS can only be used in transaction blocks".into());
    }
    s.begin_implicit();
    if names.len() == 1 && names[0] == dialect::ALL_CONSTRAINTS {
        let t = s.txn();
        t.constraint_modes = (Some(deferred), Vec::new());
        if !deferred {
            crate::exec::fk::run_deferred(s, None)?;
        }
        return Ok(r);
    }
    let tables = s.visible_tables();
    let mut oids = Vec::new();
    for n in names {
        let fks: Vec<&crate::catalog::ForeignKey> = tables.iter().flat_map(|t| t.foreign_keys.iter()).filter(|f| f.name == *n).collect();
        let other = tables.iter().any(|t| t.checks.iter().any(|c| c.name == *n) || t.indexes.iter().any(|i| i.constraint && i.name == *n));
        if fks.is_empty() && !other {
            return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("constraint \"{n}\" does not exist")));
        }
        if other || fks.iter().any(|f| !f.deferrable) {
            return Err(PgError::new("55000", format!("constraint \"{n}\" is not deferrable")));
        }
        oids.extend(fks.iter().map(|f| f.oid));
    }
    let t = s.txn();
    t.constraint_modes.1.extend(oids.iter().map(|&o| (o, deferred)));
    if !deferred {
        crate::exec::fk::run_deferred(s, Some(&oids))?;
    }
    Ok(r)
}

/// `SET TRANSACTION ...`, `SET SESSION CHARACTERISTICS AS TRANSACTION ...`, `SHOW` and `SET` of
/// `transaction_isolation`, `transaction_read_only` and their `default_` settings. None for
/// any other statement.
fn transaction_setting(s: &mut Session, st: &Statement) -> Result<Option<QueryResult>> {
    use sqlparser::ast::Set;
    let show = |name: &str, v: &str| QueryResult {
        tag: "SHOW".into(),
        columns: vec![(name.to_string(), "text".into())],
        rows: vec![vec![Some(v.to_string())]],
        returns_rows: true,
        ..Default::default()
    };
    match st {
        Statement::Set(Set::SingleAssignment { scope: None, hivevar: false, variable, values })
            if variable.0.len() == 1 && variable.0[0].as_ident().is_some_and(|i| i.value == dialect::SET_CONSTRAINTS_MARKER) =>
        {
            let text = |e: &Expr| match e {
                Expr::Value(v) => match &v.value {
                    Value::SingleQuotedString(t) => Some(t.clone()),
                    _ => None,
                },
                _ => None,
            };
            let vals: Vec<String> = values.iter().filter_map(text).collect();
            let (mode, names) = vals.split_first().ok_or_else(|| PgError::internal("SET CONSTRAINTS without its mode"))?;
            Ok(Some(set_constraints(s, mode == "deferred", names)?))
        }
        Statement::Set(Set::SetTransaction { modes, snapshot, session }) => {
            if snapshot.is_some() {
                return Err(PgError::feature("SET TRANSACTION SNAPSHOT is not supported by heapstore"));
            }
            let (iso, ro) = transaction_modes(modes)?;
            let mut r = tag("SET");
            if *session {
                let mut d = s.transaction_defaults();
                d.isolation = iso.unwrap_or(d.isolation);
                d.read_only = ro.unwrap_or(d.read_only);
                s.set_transaction_defaults(d)?;
                s.end_setting(Some("session characteristics"), false);
            } else if s.in_transaction_block() {
                s.set_transaction_modes(iso, ro)?;
            } else {
                r.notices.push("WARNING:  SET TRANSACTION can only be used in transaction blocks".into());
            }
            Ok(Some(r))
        }
        Statement::ShowVariable { variable } => {
            let name = variable.iter().map(|i| i.value.to_ascii_lowercase()).collect::<Vec<_>>().join(" ");
            let cur = s.transaction_characteristics();
            let def = s.transaction_defaults();
            Ok(Some(match name.as_str() {
                "transaction isolation level" => show("transaction_isolation", cur.isolation.name()),
                "transaction_isolation" => show("transaction_isolation", cur.isolation.name()),
                "default_transaction_isolation" => show("default_transaction_isolation", def.isolation.name()),
                "transaction_read_only" => show("transaction_read_only", on_off(cur.read_only)),
                "default_transaction_read_only" => show("default_transaction_read_only", on_off(def.read_only)),
                "work_mem" => show("work_mem", &memory_text(s.work_mem_bytes() / 1024)),
                "timezone" | "time zone" => show("TimeZone", &s.time_zone_setting()),
                n if cost::PLANNER_SETTINGS.contains(&n) => {
                    let v = s.client_setting(n).map(str::to_string).unwrap_or_else(|| s.shared.settings.get(n).unwrap_or("").to_string());
                    show(n, &v)
                }
                "temp_file_limit" => {
                    let kb = s.temp_file_limit_kb();
                    show("temp_file_limit", &if kb < 0 { "-1".to_string() } else { memory_text(kb as u64) })
                }
                _ => return Ok(None),
            }))
        }
        Statement::Set(Set::SingleAssignment { scope, hivevar: false, variable, values })
            if values.len() == 1 && matches!(variable.to_string().to_ascii_lowercase().as_str(), "work_mem" | "temp_file_limit") =>
        {
            let local = scope.as_ref().is_some_and(|sc| matches!(sc, sqlparser::ast::ContextModifier::Local));
            if !s.begin_setting(local) {
                return Ok(Some(set_local_outside_block()));
            }
            let v = match &values[0] {
                Expr::Value(v) => match &v.value {
                    Value::SingleQuotedString(t) => t.clone(),
                    Value::Number(n, _) => n.clone(),
                    other => other.to_string(),
                },
                Expr::UnaryOp { op: sqlparser::ast::UnaryOperator::Minus, expr } => format!("-{expr}"),
                Expr::Identifier(i) => i.value.clone(),
                other => other.to_string(),
            };
            let name = variable.to_string().to_ascii_lowercase();
            set_session_setting(s, &name, &v)?;
            s.end_setting(Some(&name), local);
            Ok(Some(tag("SET")))
        }
        // The library's session sets its time zone here (a server's sessions SET it as a
        // session parameter).
        Statement::Set(Set::SetTimeZone { local, value }) => set_time_zone(s, *local, value, true),
        Statement::Set(Set::SingleAssignment { scope, hivevar: false, variable, values })
            if values.len() == 1 && variable.to_string().eq_ignore_ascii_case("timezone") =>
        {
            let local = scope.as_ref().is_some_and(|sc| matches!(sc, sqlparser::ast::ContextModifier::Local));
            set_time_zone(s, local, &values[0], false)
        }
        Statement::Set(Set::SingleAssignment { scope, hivevar: false, variable, values })
            if values.len() == 1 && cost::PLANNER_SETTINGS.contains(&variable.to_string().to_ascii_lowercase().as_str()) =>
        {
            // The planner's settings (a server's sessions SET them as session parameters;
            // this is the library's session).
            let local = scope.as_ref().is_some_and(|sc| matches!(sc, sqlparser::ast::ContextModifier::Local));
            if !s.begin_setting(local) {
                return Ok(Some(set_local_outside_block()));
            }
            let name = variable.to_string().to_ascii_lowercase();
            let v = set_value_text(&values[0]);
            let v = if v.eq_ignore_ascii_case("default") {
                s.shared.settings.get(&name).unwrap_or("").to_string()
            } else {
                cost::check_setting(&name, &v)?
            };
            let mut all = s.client_settings();
            match all.iter_mut().find(|(n, _)| *n == name) {
                Some(e) => e.1 = v,
                None => all.push((name.clone(), v)),
            }
            s.set_client_settings(all);
            s.end_setting(Some(&name), local);
            Ok(Some(tag("SET")))
        }
        Statement::Set(Set::SingleAssignment { scope, hivevar: false, variable, values }) if values.len() == 1 => {
            let name = variable.to_string().to_ascii_lowercase();
            if !matches!(
                name.as_str(),
                "transaction_isolation" | "default_transaction_isolation" | "transaction_read_only" | "default_transaction_read_only"
            ) {
                return Ok(None);
            }
            // SET LOCAL of a transaction's own characteristic is SET: it ends with the
            // transaction either way.
            let local =
                scope.as_ref().is_some_and(|sc| matches!(sc, sqlparser::ast::ContextModifier::Local)) && name.starts_with("default_");
            if !s.begin_setting(local) {
                return Ok(Some(set_local_outside_block()));
            }
            // DEFAULT (and RESET): a default_* characteristic goes back to PostgreSQL's default
            // (heapstore has no server setting for them), a transaction's own to the session's
            // default.
            let is_default =
                matches!(&values[0], Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"));
            let v = if is_default {
                let d = if name.starts_with("default_") { crate::session::TxnCharacteristics::default() } else { s.transaction_defaults() };
                if name.ends_with("isolation") {
                    d.isolation.name().to_string()
                } else {
                    (if d.read_only { "on" } else { "off" }).to_string()
                }
            } else {
                set_value_text(&values[0])
            };
            let level = || {
                IsolationLevel::parse(&v).ok_or_else(|| {
                    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"{name}\": \"{v}\""))
                        .with_hint("Available values: serializable, repeatable read, read committed, read uncommitted.")
                })
            };
            let mut d = s.transaction_defaults();
            match name.as_str() {
                "default_transaction_isolation" => {
                    d.isolation = level()?;
                    s.set_transaction_defaults(d)?;
                }
                "default_transaction_read_only" => {
                    d.read_only = parse_on_off(&name, &v)?;
                    s.set_transaction_defaults(d)?;
                }
                "transaction_isolation" => {
                    let l = level()?;
                    s.set_transaction_modes(Some(l), None)?;
                }
                _ => {
                    let ro = parse_on_off(&name, &v)?;
                    s.set_transaction_modes(None, Some(ro))?;
                }
            }
            s.end_setting(Some(&name), local);
            Ok(Some(tag("SET")))
        }
        _ => Ok(None),
    }
}

/// A SET value as text: a string's contents, a boolean as on / off, a number or word as
/// written.
fn set_value_text(e: &Expr) -> String {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(t) => t.clone(),
            Value::Boolean(b) => on_off(*b).to_string(),
            Value::Number(n, _) => n.clone(),
            other => other.to_string(),
        },
        Expr::Identifier(i) => i.value.clone(),
        other => other.to_string(),
    }
}

/// `SET [LOCAL] TIME ZONE x` (`time_zone_syntax`, where LOCAL and DEFAULT reset it and an
/// interval is an offset east of UTC) and `SET timezone = x` in the library's session.
fn set_time_zone(s: &mut Session, local: bool, value: &Expr, time_zone_syntax: bool) -> Result<Option<QueryResult>> {
    let text = set_value_text(value);
    let reset = matches!(value, Expr::Identifier(i) if i.quote_style.is_none()
        && (i.value.eq_ignore_ascii_case("default") || time_zone_syntax && i.value.eq_ignore_ascii_case("local")));
    let shown = if reset {
        s.shared().settings.time_zone()
    } else if let Expr::Interval(iv) = value {
        if iv.leading_field.is_some()
            && !(matches!(iv.leading_field, Some(sqlparser::ast::DateTimeField::Hour))
                && matches!(iv.last_field, Some(sqlparser::ast::DateTimeField::Minute)))
        {
            return Err(PgError::feature("SET TIME ZONE INTERVAL takes only HOUR TO MINUTE as its qualifier"));
        }
        match crate::types::tz::Zone::interval(&crate::types::interval::parse(&set_value_text(&iv.value))?)? {
            crate::types::tz::Zone::Fixed(east) => crate::types::tz::fixed_name(east),
            _ => return Err(PgError::internal("an interval time zone that is not an offset")),
        }
    } else {
        crate::types::tz::setting(&text)?.0
    };
    if !s.begin_setting(local) {
        return Ok(Some(set_local_outside_block()));
    }
    let mut all = s.client_settings();
    match all.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case("TimeZone")) {
        Some(e) => e.1 = shown,
        None => all.push(("TimeZone".to_string(), shown)),
    }
    s.set_client_settings(all);
    s.end_setting(Some("timezone"), local);
    Ok(Some(tag("SET")))
}

/// What SET LOCAL outside a transaction block answers: PostgreSQL's warning, nothing changed.
fn set_local_outside_block() -> QueryResult {
    let mut r = tag("SET");
    r.notices.push("WARNING:  SET LOCAL can only be used in transaction blocks".into());
    r
}

/// `SET work_mem` / `SET temp_file_limit` (a value of `default` resets to the server's).
pub(crate) fn set_session_setting(s: &mut Session, name: &str, v: &str) -> Result<()> {
    let bad = || PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"{name}\": \"{v}\""));
    let reset = v.eq_ignore_ascii_case("default");
    match name {
        "work_mem" => {
            s.work_mem_kb = if reset {
                None
            } else {
                let kb = crate::config::parse_memory(v, 1024).ok_or_else(bad)? / 1024;
                if !(64..=2_147_483_647).contains(&kb) {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("{kb} kB is outside the valid range for parameter \"work_mem\" (64 kB .. 2147483647 kB)"),
                    ));
                }
                Some(kb)
            }
        }
        _ => {
            s.temp_file_limit_kb = if reset {
                None
            } else {
                let kb: i64 = match v.trim().parse::<i64>() {
                    Ok(n) => n,
                    Err(_) => (crate::config::parse_memory(v, 1024).ok_or_else(bad)? / 1024) as i64,
                };
                if kb < -1 {
                    return Err(bad());
                }
                Some(kb)
            }
        }
    }
    Ok(())
}

fn first_words(s: &str) -> String {
    s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

/// A kB amount as PostgreSQL shows memory settings: the largest unit that divides it.
pub(crate) fn memory_text(kb: u64) -> String {
    if kb > 0 && kb % (1024 * 1024) == 0 {
        format!("{}GB", kb / (1024 * 1024))
    } else if kb > 0 && kb % 1024 == 0 {
        format!("{}MB", kb / 1024)
    } else {
        format!("{kb}kB")
    }
}

pub(crate) fn tag(t: &str) -> QueryResult {
    QueryResult::tagged(t)
}

/// Parses `sql` (the user's text `original` after the front end's rewrites, perhaps with a
/// `;` appended). A syntax error says PostgreSQL's `syntax error at or near "x"` (or `at end
/// of input`) with its position in `original`, when the rewrites kept every character where
/// it was (they blank words out, keeping the length).
/// The statements of a rewritten token stream. sqlparser's SHOW takes every word up to the end
/// of the text, the statements after it included (`SHOW work_mem; SELECT 1` would be one
/// statement showing "work_mem select"): a text with a SHOW before its last statement is
/// parsed one statement at a time.
fn parse_tokens(tokens: Vec<sqlparser::tokenizer::TokenWithSpan>) -> std::result::Result<Vec<Statement>, sqlparser::parser::ParserError> {
    let parser = |t: Vec<sqlparser::tokenizer::TokenWithSpan>| {
        Parser::new(&Pg).with_recursion_limit(dialect::RECURSION_LIMIT).with_tokens_with_locations(t).parse_statements()
    };
    let starts = dialect::statement_starts(&tokens);
    let is_show = |i: usize| matches!(&tokens[i].token, Token::Word(w) if w.keyword == sqlparser::keywords::Keyword::SHOW);
    if !starts.iter().rev().skip(1).any(|&i| is_show(i)) {
        return parser(tokens);
    }
    let mut out = Vec::new();
    let ends = starts.iter().skip(1).copied().chain(std::iter::once(tokens.len()));
    for (from, to) in starts.iter().copied().zip(ends) {
        out.extend(parser(tokens[from..to].to_vec())?);
    }
    Ok(out)
}

fn parse(sql: &str, original: &str) -> Result<Vec<Statement>> {
    refuse_uescape(sql)?;
    let tokens = Tokenizer::new(&Pg, sql).with_unescape(true).tokenize_with_location();
    let parsed = match tokens {
        Ok(mut tokens) => {
            dialect::check_nesting(&tokens)?;
            dialect::rewrite_string_constants(&mut tokens);
            dialect::rewrite_locking_clauses(&mut tokens);
            dialect::rewrite_set_constraints(&mut tokens);
            dialect::rewrite_comment_on(&mut tokens);
            dialect::rewrite_on_conflict_target(&mut tokens);
            dialect::rewrite_constraint_include(&mut tokens);
            parse_tokens(tokens)
        }
        Err(e) => Err(e.into()),
    };
    if let Ok(stmts) = parsed {
        return stmts.into_iter().map(dml::inline_with).collect();
    }
    parsed.map_err(|e| {
        if e == sqlparser::parser::ParserError::RecursionLimitExceeded {
            // The parser's own nesting limit: PostgreSQL's answer to a statement nested past
            // what it can take.
            return PgError::new("54001", "stack depth limit exceeded")
                .with_detail("The statement nests parentheses, subqueries or function calls too deeply.");
        }
        let msg = e.to_string();
        let msg = msg.trim_start_matches("sql parser error: ");
        let user_chars = original.chars().count();
        let text_chars = sql.chars().count();
        // "... at Line: 1, Column: 8": the character position in the text.
        let position = msg.rfind(" at Line: ").and_then(|i| {
            let (l, c) = msg[i + 10..].split_once(", Column: ")?;
            let (line, col): (usize, usize) = (l.trim().parse().ok()?, c.trim().parse().ok()?);
            let before: usize = sql.split_inclusive('\n').take(line - 1).map(|x| x.chars().count()).sum();
            Some(before + col)
        });
        let position = position.filter(|_| text_chars == user_chars || text_chars == user_chars + 1);
        let at_end = position.is_some_and(|p| p > user_chars);
        // The DETAIL keeps what the parser expected (the position is in the error itself).
        let expected = msg.split(", found: ").next().unwrap_or(msg).to_string();
        let mut err = if let Some(i) = msg.find("found: ") {
            let rest = &msg[i + 7..];
            let tok = rest.split(" at Line:").next().unwrap_or(rest);
            if tok == "EOF" || at_end {
                PgError::syntax("syntax error at end of input").with_detail(expected)
            } else {
                PgError::syntax(format!("syntax error at or near \"{tok}\"")).with_detail(expected)
            }
        } else {
            PgError::syntax(format!("syntax error: {msg}"))
        };
        err.position = match position {
            Some(p) if p > user_chars => user_chars as u32 + 1,
            Some(p) => p as u32,
            None => 0,
        };
        err
    })
}

/// sqlparser's tokenizer drops the character after a bare `?` (the jsonb key-exists
/// operator) unless it is `|`, `&`, `-` or `#`: `j ?'a'` loses the quote, `j ?$1` the dollar,
/// `j ?k` the identifier's first letter. A space put after each such `?` outside literals,
/// quoted identifiers and comments is what it drops instead. None when nothing changes.
pub(crate) fn guard_question(sql: &str) -> Option<String> {
    if !sql.contains('?') {
        return None;
    }
    let chars: Vec<char> = sql.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(sql.len() + 8);
    let mut changed = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i > 0 { Some(chars[i - 1]) } else { None };
        let start = i;
        match c {
            '\'' => {
                // E'...' strings take backslash escapes.
                let escapes = prev.is_some_and(|p| p == 'e' || p == 'E') && (i < 2 || !ident(chars[i - 2]));
                i += 1;
                while i < chars.len() {
                    match chars[i] {
                        '\\' if escapes => i += 2,
                        '\'' if chars.get(i + 1) == Some(&'\'') => i += 2,
                        '\'' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            '"' => {
                i += 1;
                while i < chars.len() {
                    if chars[i] == '"' {
                        if chars.get(i + 1) == Some(&'"') {
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    i += 1;
                }
            }
            '-' if chars.get(i + 1) == Some(&'-') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            '$' if !prev.is_some_and(ident) && !chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) => {
                // $tag$ ... $tag$ (the tag an identifier, perhaps empty).
                let mut j = i + 1;
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                if chars.get(j) == Some(&'$') {
                    let tag: Vec<char> = chars[i..=j].to_vec();
                    i = j + 1;
                    while i < chars.len() && !chars[i..].starts_with(&tag) {
                        i += 1;
                    }
                    i = (i + tag.len()).min(chars.len());
                } else {
                    i += 1;
                }
            }
            '?' => {
                i += 1;
                out.push('?');
                if chars.get(i).is_some_and(|n| !n.is_whitespace() && !matches!(n, '|' | '&' | '-' | '#')) {
                    out.push(' ');
                    changed = true;
                }
                continue;
            }
            _ => i += 1,
        }
        // An escape at the very end of an unterminated E'' string steps past the end.
        i = i.min(chars.len());
        out.extend(&chars[start..i]);
    }
    changed.then_some(out)
}

/// `U&'...' UESCAPE 'c'` is refused with 0A000: the tokenizer decodes a `U&` string with the
/// backslash escape only, and would read UESCAPE as an alias.
fn refuse_uescape(sql: &str) -> Result<()> {
    use sqlparser::tokenizer::Token;
    if !sql.contains("&'") {
        return Ok(());
    }
    let Ok(toks) = Tokenizer::new(&Pg, sql).tokenize() else { return Ok(()) };
    let mut after_unicode = false;
    for tok in toks {
        match tok {
            Token::Whitespace(_) => continue,
            Token::UnicodeStringLiteral(_) => after_unicode = true,
            Token::Word(w) if after_unicode && w.quote_style.is_none() && w.value.eq_ignore_ascii_case("uescape") => {
                return Err(PgError::feature("UESCAPE is not supported by heapstore; write the escapes with a backslash"));
            }
            _ => after_unicode = false,
        }
    }
    Ok(())
}

/// Tokens of a text heapstore made or stored itself, with no locations: an error binding what
/// they parse into never carries a position into the user's statement (`PgError::at`).
pub(crate) fn tokens_without_locations(sql: &str) -> Result<Vec<sqlparser::tokenizer::TokenWithSpan>> {
    let toks = Tokenizer::new(&Pg, sql).tokenize_with_location().map_err(|e| PgError::syntax(format!("syntax error: {e}")))?;
    Ok(toks
        .into_iter()
        .map(|t| sqlparser::tokenizer::TokenWithSpan { token: t.token, span: sqlparser::tokenizer::Span::empty() })
        .collect())
}

/// The statements of a text heapstore made or stored itself (a view's query, a foreign key's
/// probe or action), parsed without locations ([`tokens_without_locations`]).
pub(crate) fn internal_statements(sql: &str) -> Result<Vec<Statement>> {
    let (mut text, _) = strip_unlogged(sql)?;
    if !text.trim_end().ends_with(';') {
        text.push(';');
    }
    let mut tokens = tokens_without_locations(&text)?;
    dialect::check_nesting(&tokens)?;
    dialect::rewrite_locking_clauses(&mut tokens);
    Parser::new(&Pg)
        .with_recursion_limit(dialect::RECURSION_LIMIT)
        .with_tokens_with_locations(tokens)
        .parse_statements()
        .map_err(|e| PgError::internal(format!("heapstore's own statement does not parse: {e}: {sql}")))
}

/// The statements of `sql` as `execute` parses them (for callers that inspect them first).
pub(crate) fn statements(sql: &str) -> Result<Vec<Statement>> {
    let (mut text, _) = strip_unlogged(sql)?;
    if !text.trim_end().ends_with(';') {
        text.push(';');
    }
    parse(&text, sql)
}

/// sqlparser reads a COPY option's Boolean only as TRUE / FALSE; PostgreSQL also takes `on`,
/// `off`, `yes`, `no`, `1`, `0` and their quoted forms (`WITH (FREEZE ON)`, as pgbench sends).
/// Rewrites those after FREEZE and HEADER to TRUE / FALSE; None when nothing changes.
/// PostgreSQL's `ANALYZE [VERBOSE] [table [(column, ...)]]`, rewritten into the form
/// sqlparser reads (Hive's `ANALYZE TABLE t [FOR COLUMNS a, b]`); a bare ANALYZE names the
/// table `"*"`, which [`Extra::analyze_all`] marks. VERBOSE is kept for [`strip_unlogged`].
/// Several tables (`ANALYZE a, b (x)`): the first is the statement's table, the others ride
/// in Hive's PARTITION list as `b(x)` (a call naming the table, its columns the arguments) or
/// `b`, which no user text can reach (a PARTITION written by hand is a syntax error here).
fn analyze_statements(sql: &str) -> Result<Option<String>> {
    let t = sql.trim_start();
    let starts = |w: &str| t.get(..w.len()).is_some_and(|x| x.eq_ignore_ascii_case(w));
    if !starts("analyze") && !starts("analyse") && !sql.as_bytes().windows(5).any(|w| w.eq_ignore_ascii_case(b"analy")) {
        return Ok(None);
    }
    let dialect = Pg;
    let Ok(toks) = Tokenizer::new(&dialect, sql).tokenize_with_location() else { return Ok(None) };
    // Byte offsets of each line's start, to turn token locations into byte ranges.
    let line_starts: Vec<usize> = std::iter::once(0).chain(sql.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let offset = |loc: &sqlparser::tokenizer::Location| -> usize {
        let ls = line_starts.get(loc.line as usize - 1).copied().unwrap_or(sql.len());
        sql[ls..].char_indices().nth(loc.column as usize - 1).map_or(sql.len(), |(b, _)| ls + b)
    };
    let word = |t: &Token| match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    // An identifier as SQL text again (a quoted one with its quotes doubled).
    let ident = |t: &Token| match t {
        Token::Word(w) if w.quote_style == Some('"') => Some(format!("\"{}\"", w.value.replace('"', "\"\""))),
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.clone()),
        _ => None,
    };
    let syntax = |t: Option<&Token>| match t {
        Some(t) => PgError::syntax(format!("syntax error at or near \"{t}\"")),
        None => PgError::syntax("syntax error at end of input"),
    };
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut at_start = true;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i].token;
        if at_start && matches!(word(t).as_deref(), Some("ANALYZE" | "ANALYSE")) {
            let mut end = i + 1;
            while end < toks.len() && toks[end].token != Token::SemiColon {
                end += 1;
            }
            let sig_t: Vec<&sqlparser::tokenizer::TokenWithSpan> =
                toks[i + 1..end].iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
            let sig: Vec<&Token> = sig_t.iter().map(|t| &t.token).collect();
            // A syntax error at significant token `k` (past the last: the `;` or the end).
            let err_at = |k: usize| -> PgError {
                match sig_t.get(k).copied().or(toks.get(end)) {
                    Some(t) => syntax(Some(&t.token)).at(t.span.start),
                    None => syntax(None),
                }
            };
            let mut k = 0;
            let mut head = String::from("ANALYZE");
            if sig.first().and_then(|t| word(t)).as_deref() == Some("VERBOSE") {
                head.push_str(" VERBOSE");
                k = 1;
            }
            if k == 0 && sig.first().is_some_and(|t| matches!(t, Token::LParen)) {
                // ANALYZE (option [value], ...): VERBOSE [boolean] is heapstore's VERBOSE.
                k = 1;
                let mut verbose;
                loop {
                    let opt = sig.get(k).and_then(|t| word(t)).ok_or_else(|| err_at(k))?;
                    k += 1;
                    let value = match sig.get(k) {
                        Some(Token::Comma | Token::RParen) => None,
                        Some(t @ (Token::Word(_) | Token::Number(..) | Token::SingleQuotedString(_))) => {
                            k += 1;
                            // A number stays a number: only 0 and 1 are Booleans then.
                            Some(match t {
                                Token::Word(w) => w.value.to_ascii_lowercase(),
                                Token::Number(n, _) => format!("#{n}"),
                                Token::SingleQuotedString(s) => s.to_ascii_lowercase(),
                                _ => unreachable!("matched above"),
                            })
                        }
                        _ => return Err(err_at(k)),
                    };
                    match opt.as_str() {
                        "VERBOSE" => {
                            verbose = match value.as_deref() {
                                // PostgreSQL's defGetBoolean.
                                None | Some("true" | "on" | "#1") => true,
                                Some("false" | "off" | "#0") => false,
                                Some(_) => return Err(PgError::new(sqlstate::SYNTAX_ERROR, "verbose requires a Boolean value")),
                            };
                        }
                        "SKIP_LOCKED" | "BUFFER_USAGE_LIMIT" => {
                            return Err(PgError::feature(format!(
                                "ANALYZE option {} is not supported by heapstore",
                                opt.to_ascii_lowercase()
                            )))
                        }
                        _ => {
                            return Err(PgError::new(
                                sqlstate::SYNTAX_ERROR,
                                format!("unrecognized ANALYZE option \"{}\"", opt.to_ascii_lowercase()),
                            ))
                        }
                    }
                    match sig.get(k) {
                        Some(Token::Comma) => k += 1,
                        Some(Token::RParen) => {
                            k += 1;
                            break;
                        }
                        _ => return Err(err_at(k)),
                    }
                }
                if verbose {
                    head.push_str(" VERBOSE");
                }
            }
            // [schema.]table [(column, ...)], separated by commas.
            // (name, columns) as written, and as quoted identifiers (unquoted ones folded).
            let mut tables: Vec<(String, Vec<String>)> = Vec::new();
            let mut quoted: Vec<(String, Vec<String>)> = Vec::new();
            let quote = |t: &Token| match t {
                Token::Word(w) if w.quote_style.is_none() => Some(format!("\"{}\"", w.value.to_ascii_lowercase())),
                other => ident(other),
            };
            loop {
                let mut name = String::new();
                let mut qname = String::new();
                if let Some(first) = sig.get(k).and_then(|t| ident(t)) {
                    name.push_str(&first);
                    qname.push_str(&quote(sig[k]).unwrap_or_default());
                    k += 1;
                    while sig.get(k).is_some_and(|t| matches!(t, Token::Period)) {
                        let part = sig.get(k + 1).and_then(|t| ident(t)).ok_or_else(|| err_at(k + 1))?;
                        name.push('.');
                        name.push_str(&part);
                        qname.push('.');
                        qname.push_str(&quote(sig[k + 1]).unwrap_or_default());
                        k += 2;
                    }
                }
                if name.is_empty() && !tables.is_empty() {
                    return Err(err_at(k));
                }
                let (mut cols, mut qcols) = (Vec::new(), Vec::new());
                if !name.is_empty() && sig.get(k).is_some_and(|t| matches!(t, Token::LParen)) {
                    k += 1;
                    loop {
                        cols.push(sig.get(k).and_then(|t| ident(t)).ok_or_else(|| err_at(k))?);
                        qcols.push(quote(sig[k]).unwrap_or_default());
                        k += 1;
                        match sig.get(k) {
                            Some(Token::Comma) => k += 1,
                            Some(Token::RParen) => {
                                k += 1;
                                break;
                            }
                            _ => return Err(err_at(k)),
                        }
                    }
                }
                let named = !name.is_empty();
                tables.push((name, cols));
                quoted.push((qname, qcols));
                match sig.get(k) {
                    None => break,
                    Some(Token::Comma) if named => k += 1,
                    _ => return Err(err_at(k)),
                }
            }
            let (name, cols) = &tables[0];
            let mut text = format!("{head} TABLE {}", if name.is_empty() { "\"*\"" } else { name });
            if !cols.is_empty() {
                text.push_str(" FOR COLUMNS ");
                text.push_str(&cols.join(", "));
            }
            if tables.len() > 1 {
                // Quoted, so that the PARTITION list, read as expressions, never takes a name for
                // a keyword (`floor(x)`, a column `interval`).
                let more: Vec<String> =
                    quoted[1..].iter().map(|(n, c)| if c.is_empty() { n.clone() } else { format!("{n}({})", c.join(", ")) }).collect();
                text.push_str(&format!(" PARTITION ({})", more.join(", ")));
            }
            let from = offset(&toks[i].span.start);
            let to = if end < toks.len() { offset(&toks[end].span.start) } else { sql.len() };
            edits.push((from, to, text));
            i = end;
            continue;
        }
        if !matches!(t, Token::Whitespace(_)) {
            at_start = *t == Token::SemiColon;
        }
        i += 1;
    }
    if edits.is_empty() {
        return Ok(None);
    }
    // Only the ANALYZE statements are rewritten; the rest of the text stays byte for byte.
    let mut out = sql.to_string();
    for (from, to, text) in edits.into_iter().rev() {
        out.replace_range(from..to, &text);
    }
    Ok(Some(out))
}

/// PostgreSQL's `ABORT [WORK | TRANSACTION] [AND [NO] CHAIN]` is ROLLBACK, which sqlparser
/// reads; a statement starting with the word ABORT is rewritten so (None when none does).
fn abort_as_rollback(sql: &str) -> Option<String> {
    if !sql.to_ascii_uppercase().contains("ABORT") {
        return None;
    }
    let dialect = Pg;
    let toks = Tokenizer::new(&dialect, sql).tokenize().ok()?;
    let mut out = String::with_capacity(sql.len() + 3);
    let (mut changed, mut at_start) = (false, true);
    for t in &toks {
        match t {
            Token::Word(w) if at_start && w.quote_style.is_none() && w.value.eq_ignore_ascii_case("abort") => {
                changed = true;
                out.push_str("ROLLBACK");
            }
            _ => out.push_str(&t.to_string()),
        }
        if !matches!(t, Token::Whitespace(_)) {
            at_start = matches!(t, Token::SemiColon);
        }
    }
    changed.then_some(out)
}

fn copy_booleans(sql: &str) -> Option<String> {
    if !sql.trim_start().get(..4).is_some_and(|w| w.eq_ignore_ascii_case("copy")) {
        return None;
    }
    let dialect = Pg;
    let toks = Tokenizer::new(&dialect, sql).tokenize().ok()?;
    let mut out = String::with_capacity(sql.len());
    let mut changed = false;
    let mut after_option = false;
    for t in &toks {
        let replaced = if after_option {
            let v = match t {
                Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
                Token::Number(n, _) => Some(n.clone()),
                Token::SingleQuotedString(s) => Some(s.to_ascii_lowercase()),
                _ => None,
            };
            match v.as_deref() {
                Some("on" | "yes" | "1" | "true" | "t" | "y") => Some("TRUE"),
                Some("off" | "no" | "0" | "false" | "f" | "n") => Some("FALSE"),
                _ => None,
            }
        } else {
            None
        };
        if !matches!(t, Token::Whitespace(_)) {
            after_option = matches!(t, Token::Word(w) if w.quote_style.is_none()
                && (w.value.eq_ignore_ascii_case("freeze") || w.value.eq_ignore_ascii_case("header")));
        }
        match replaced {
            Some(r) => {
                changed = true;
                out.push_str(r);
            }
            None => out.push_str(&t.to_string()),
        }
    }
    changed.then_some(out)
}

/// Words sqlparser does not know, blanked out of the text and remembered per statement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Extra {
    /// `CREATE UNLOGGED TABLE`.
    pub unlogged: bool,
    /// `VACUUM [VERBOSE] [ANALYZE] ...` (sqlparser reads VACUUM in Redshift's grammar).
    pub vacuum_verbose: bool,
    pub vacuum_analyze: bool,
    /// `COPY ... WITH (PARALLEL n)`: the option list sqlparser does not know, taken out.
    pub copy_parallel: Option<u32>,
    /// `COPY ... WITH (FORCE_QUOTE *)` / `CSV FORCE QUOTE *`: taken out likewise.
    pub copy_force_quote_all: bool,
    /// `ANALYZE VERBOSE`.
    pub analyze_verbose: bool,
}

/// How many statements of each kind [`TextFlags`] has handed out so far.
#[derive(Default)]
struct Seen {
    creates: usize,
    vacuums: usize,
    copies: usize,
    analyzes: usize,
}

/// The words of [`Extra`], blanked out: for each `CREATE [UNLOGGED] TABLE` in order, whether
/// UNLOGGED was there; for each `VACUUM` in order, its VERBOSE and ANALYZE.
struct TextFlags {
    creates: Vec<Extra>,
    vacuums: Vec<Extra>,
    copies: Vec<Extra>,
    analyzes: Vec<Extra>,
}

impl TextFlags {
    /// The flags of the statements of a text, in order (`n`-th CREATE TABLE / VACUUM).
    fn for_statement(&self, st: &Statement, seen: &mut Seen) -> Extra {
        let (list, seen) = match st {
            Statement::CreateTable(_) => (&self.creates, &mut seen.creates),
            Statement::Vacuum(_) => (&self.vacuums, &mut seen.vacuums),
            Statement::Copy { .. } => (&self.copies, &mut seen.copies),
            Statement::Analyze { .. } => (&self.analyzes, &mut seen.analyzes),
            _ => return Extra::default(),
        };
        *seen += 1;
        list.get(*seen - 1).copied().unwrap_or_default()
    }
}

/// Most workers `COPY ... WITH (PARALLEL n)` may ask for.
const MAX_COPY_PARALLEL: u32 = 1024;

/// The `PARALLEL n` and `FORCE_QUOTE *` options of the COPY statement whose first word is
/// `words[at]`, blanked out of the text with their comma (and the whole `WITH ( )` when one
/// was the only option), as sqlparser does not read them; also the legacy `CSV FORCE QUOTE *`.
/// Only the option list after FROM / TO is searched (a column named `parallel` in the column
/// list is a column). Returns (PARALLEL's n, whether FORCE_QUOTE * was given).
fn copy_text_options(
    toks: &[sqlparser::tokenizer::TokenWithSpan],
    words: &[(usize, String, sqlparser::tokenizer::Location)],
    at: usize,
    blank: &mut Vec<(sqlparser::tokenizer::Location, usize)>,
) -> Result<(Option<u32>, bool)> {
    let text = |k: usize| toks[words[k].0].token.to_string();
    let is = |k: usize, t: &Token| words.get(k).is_some_and(|w| &toks[w.0].token == t);
    // The words of an option of the parenthesized list, `words[k..k + 2]`, and its comma (or
    // the whole `[WITH] ( )` when it is the only option).
    let list_item = |k: usize| {
        let mut gone = vec![k, k + 1];
        if is(k + 2, &Token::Comma) {
            gone.push(k + 2);
        } else if is(k - 1, &Token::Comma) {
            gone.push(k - 1);
        } else {
            gone.push(k - 1);
            if is(k + 2, &Token::RParen) {
                gone.push(k + 2);
            }
            if k >= 2 && words[k - 2].1 == "WITH" {
                gone.push(k - 2);
            }
        }
        gone
    };
    let (mut depth, mut past_source, mut found, mut quote_all) = (0i32, false, None, false);
    let mut k = at + 1;
    while k < words.len() && !is(k, &Token::SemiColon) {
        match &toks[words[k].0].token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && matches!(words[k].1.as_str(), "FROM" | "TO") => past_source = true,
            _ if depth == 1
                && past_source
                && words[k].1 == "FORCE_QUOTE"
                && is(k + 1, &Token::Mul)
                && (is(k - 1, &Token::LParen) || is(k - 1, &Token::Comma)) =>
            {
                if quote_all {
                    return Err(PgError::syntax("conflicting or redundant options"));
                }
                quote_all = true;
                for g in list_item(k) {
                    blank.push((words[g].2, text(g).chars().count()));
                }
                k += 2;
                continue;
            }
            // PostgreSQL reads any argument and then wants a column list (`*` only for
            // FORCE_QUOTE, taken above); sqlparser would call it a syntax error.
            _ if depth == 1
                && past_source
                && matches!(words[k].1.as_str(), "FORCE_QUOTE" | "FORCE_NOT_NULL" | "FORCE_NULL")
                && (is(k - 1, &Token::LParen) || is(k - 1, &Token::Comma))
                && !is(k + 1, &Token::LParen)
                && !is(k + 1, &Token::Comma)
                && !is(k + 1, &Token::RParen) =>
            {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("argument to option \"{}\" must be a list of column names", words[k].1.to_ascii_lowercase()),
                ));
            }
            _ if depth == 0
                && past_source
                && words[k].1 == "FORCE"
                && words.get(k + 1).is_some_and(|w| w.1 == "QUOTE")
                && is(k + 2, &Token::Mul) =>
            {
                if quote_all {
                    return Err(PgError::syntax("conflicting or redundant options"));
                }
                quote_all = true;
                for (g, w) in words.iter().enumerate().skip(k).take(3) {
                    blank.push((w.2, text(g).chars().count()));
                }
                k += 3;
                continue;
            }
            _ if depth == 1 && past_source && words[k].1 == "PARALLEL" && (is(k - 1, &Token::LParen) || is(k - 1, &Token::Comma)) => {
                if found.is_some() {
                    return Err(PgError::syntax("conflicting or redundant options"));
                }
                let value = match words.get(k + 1).map(|w| &toks[w.0].token) {
                    Some(Token::Number(n, _)) => Some(n.clone()),
                    Some(Token::SingleQuotedString(v)) => Some(v.clone()),
                    _ => None,
                };
                let Some(value) = value else {
                    return Err(PgError::syntax("parallel requires an integer value"));
                };
                let n: i64 = value.trim().parse().map_err(|_| PgError::syntax("parallel requires an integer value"))?;
                if !(1..=MAX_COPY_PARALLEL as i64).contains(&n) {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("value {n} out of bounds for option \"parallel\""),
                    )
                    .with_detail(format!("Valid values are between \"1\" and \"{MAX_COPY_PARALLEL}\".")));
                }
                found = Some(n as u32);
                for g in list_item(k) {
                    blank.push((words[g].2, text(g).chars().count()));
                }
                k += 2;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    Ok((found, quote_all))
}

/// PostgreSQL takes `CREATE SEQUENCE`'s options in any order (pg_dump writes `START WITH 1
/// INCREMENT BY 1 ...`); sqlparser only in one (INCREMENT, MINVALUE, MAXVALUE, START, CACHE,
/// CYCLE, OWNED BY). Rewrites each CREATE SEQUENCE's options into that order (each option's
/// tokens kept whole, so a repeated option is still seen, and refused, by the runner); None
/// when nothing changes.
fn sequence_option_order(sql: &str) -> Option<String> {
    if !sql.to_ascii_uppercase().contains("SEQUENCE") {
        return None;
    }
    let dialect = Pg;
    let toks = Tokenizer::new(&dialect, sql).tokenize().ok()?;
    let kw = |t: &Token| match t {
        Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
        _ => String::new(),
    };
    let sig: Vec<usize> = (0..toks.len()).filter(|&i| !matches!(toks[i], Token::Whitespace(_))).collect();
    let mut out: Vec<String> = Vec::new();
    let mut changed = false;
    let mut pos = 0; // next token of `toks` not yet copied
    let mut k = 0;
    while k < sig.len() {
        let at = |j: usize| sig.get(j).map(|&i| kw(&toks[i])).unwrap_or_default();
        let starts = (k == 0 || matches!(toks[sig[k - 1]], Token::SemiColon)) && at(k) == "CREATE";
        let mut j = k + 1;
        if starts && matches!(at(j).as_str(), "TEMP" | "TEMPORARY") {
            j += 1;
        }
        if !(starts && at(j) == "SEQUENCE") {
            k += 1;
            continue;
        }
        j += 1;
        if at(j) == "IF" && at(j + 1) == "NOT" && at(j + 2) == "EXISTS" {
            j += 3;
        }
        // The name (possibly qualified), then AS type.
        j += 1;
        while sig.get(j).is_some_and(|&i| matches!(toks[i], Token::Period)) {
            j += 2;
        }
        if at(j) == "AS" {
            j += 2;
        }
        // Option groups up to the end of the statement.
        let order = |w: &str, next: &str| -> Option<usize> {
            Some(match (w, next) {
                ("INCREMENT", _) => 0,
                ("MINVALUE", _) | ("NO", "MINVALUE") => 1,
                ("MAXVALUE", _) | ("NO", "MAXVALUE") => 2,
                ("START", _) => 3,
                ("CACHE", _) => 4,
                ("CYCLE", _) | ("NO", "CYCLE") => 5,
                ("OWNED", _) => 6,
                _ => return None,
            })
        };
        let end = (j..sig.len()).find(|&x| matches!(toks[sig[x]], Token::SemiColon)).unwrap_or(sig.len());
        let mut groups: Vec<(usize, usize, usize)> = Vec::new(); // (rank, first sig, last sig exclusive)
        let mut x = j;
        let mut ok = true;
        while x < end {
            let Some(rank) = order(&at(x), &at(x + 1)) else {
                ok = false;
                break;
            };
            let mut y = x + 1;
            if at(x) == "NO" {
                y += 1;
            }
            while y < end && order(&at(y), &at(y + 1)).is_none() {
                y += 1;
            }
            groups.push((rank, x, y));
            x = y;
        }
        if ok && groups.windows(2).any(|g| g[0].0 > g[1].0) && j < sig.len() {
            let mut sorted = groups.clone();
            sorted.sort_by_key(|g| g.0);
            let first = sig[j];
            out.extend(toks[pos..first].iter().map(|t| t.to_string()));
            for (_, a, b) in sorted {
                out.push(" ".into());
                out.extend(toks[sig[a]..sig[b - 1] + 1].iter().map(|t| t.to_string()));
            }
            pos = if end < sig.len() { sig[end] } else { toks.len() };
            changed = true;
        }
        k = end.max(k + 1);
    }
    if !changed {
        return None;
    }
    out.extend(toks[pos..].iter().map(|t| t.to_string()));
    Some(out.concat())
}

/// sqlparser does not know `CREATE UNLOGGED TABLE`, nor PostgreSQL's `VACUUM VERBOSE ANALYZE t`:
/// blank those words out and remember them (see [`TextFlags`]).
fn strip_unlogged(sql: &str) -> Result<(String, TextFlags)> {
    let guarded = guard_question(sql);
    let sql = guarded.as_deref().unwrap_or(sql);
    let analyzes = analyze_statements(sql).map_err(|mut e| {
        // Positions in the text as written (unless `guard_question` inserted blanks).
        e.resolve_position(guarded.is_none().then_some(sql));
        e
    })?;
    let sql = analyzes.as_deref().unwrap_or(sql);
    let normalized = copy_booleans(sql);
    let sql = normalized.as_deref().unwrap_or(sql);
    let reordered = sequence_option_order(sql);
    let sql = reordered.as_deref().unwrap_or(sql);
    let aborted = abort_as_rollback(sql);
    let sql = aborted.as_deref().unwrap_or(sql);
    let dialect = Pg;
    let toks = Tokenizer::new(&dialect, sql).tokenize_with_location().map_err(|e| PgError::syntax(format!("syntax error: {e}")))?;
    let words: Vec<(usize, String, sqlparser::tokenizer::Location)> = toks
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => Some((i, w.value.to_ascii_uppercase(), t.span.start)),
            Token::Whitespace(_) => None,
            _ => Some((i, String::new(), t.span.start)),
        })
        .collect();
    let mut flags = TextFlags { creates: Vec::new(), vacuums: Vec::new(), copies: Vec::new(), analyzes: Vec::new() };
    let mut blank: Vec<(sqlparser::tokenizer::Location, usize)> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let next = |k: usize| words.get(i + k).map(|x| x.1.as_str()).unwrap_or("");
        if w.1 == "CREATE" && next(1) == "TABLE" {
            flags.creates.push(Extra::default());
        } else if w.1 == "CREATE" && next(1) == "UNLOGGED" && next(2) == "TABLE" {
            flags.creates.push(Extra { unlogged: true, ..Default::default() });
            blank.push((words[i + 1].2, "UNLOGGED".len()));
        } else if w.1 == "VACUUM" && (i == 0 || matches!(toks[words[i - 1].0].token, Token::SemiColon)) {
            let mut e = Extra::default();
            let mut k = 1;
            loop {
                match next(k) {
                    "VERBOSE" if !e.vacuum_verbose => e.vacuum_verbose = true,
                    "ANALYZE" | "ANALYSE" if !e.vacuum_analyze => e.vacuum_analyze = true,
                    _ => break,
                }
                blank.push((words[i + k].2, words[i + k].1.len()));
                k += 1;
            }
            flags.vacuums.push(e);
        } else if w.1 == "ANALYZE" && (i == 0 || matches!(toks[words[i - 1].0].token, Token::SemiColon)) {
            let verbose = next(1) == "VERBOSE";
            if verbose {
                blank.push((words[i + 1].2, "VERBOSE".len()));
            }
            flags.analyzes.push(Extra { analyze_verbose: verbose, ..Default::default() });
        } else if w.1 == "COPY" && (i == 0 || matches!(toks[words[i - 1].0].token, Token::SemiColon)) {
            let (parallel, quote_all) = copy_text_options(&toks, &words, i, &mut blank)?;
            flags.copies.push(Extra { copy_parallel: parallel, copy_force_quote_all: quote_all, ..Default::default() });
        }
    }
    if blank.is_empty() {
        return Ok((sql.to_string(), flags));
    }
    let mut out = String::with_capacity(sql.len());
    for (lineno, line) in sql.split_inclusive('\n').enumerate() {
        let mut l = line.to_string();
        for (loc, len) in blank.iter().filter(|(l, _)| l.line as usize == lineno + 1) {
            let start: usize = line.char_indices().nth(loc.column as usize - 1).map(|(b, _)| b).unwrap_or(0);
            l.replace_range(start..start + len, &" ".repeat(*len));
        }
        out.push_str(&l);
    }
    Ok((out, flags))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_bare_question_mark_keeps_the_character_after_it() {
        use super::guard_question as g;
        assert_eq!(g("select j ?'a'").as_deref(), Some("select j ? 'a'"));
        assert_eq!(g("select j?$1, j ?k").as_deref(), Some("select j? $1, j ? k"));
        // Already followed by a space, or an operator of its own: unchanged.
        assert_eq!(g("select j ? 'a', j ?| array['a'], j ?& b, j ?- c, j ?# d"), None);
        // Inside literals, quoted identifiers, comments and dollar quotes: unchanged.
        assert_eq!(g("select '?x', E'\\'?x', \"a?b\", $$?x$$, $t$?y$t$ -- ?z\n/* ?w /* ?v */ ?u */"), None);
        assert_eq!(g("select 'it''s' ?'k'").as_deref(), Some("select 'it''s' ? 'k'"));
        assert_eq!(g("select a$b ?c").as_deref(), Some("select a$b ? c"));
        // Unterminated literals and comments end the text without a panic.
        for t in ["select ?x, E'abc\\", "select ?x, 'abc", "select ?x /* a", "select ?x, $q$ a", "select ?x, \"a"] {
            assert!(g(t).is_some_and(|o| o.starts_with("select ? x")), "{t}");
        }
        // The statements it makes parse as PostgreSQL reads them.
        let st = super::statements("select '{\"a\":1}'::jsonb ?'a', $1::jsonb ?$2").unwrap();
        let Statement::Query(q) = &st[0] else { panic!("a query") };
        assert_eq!(q.to_string(), "SELECT '{\"a\":1}'::JSONB ? 'a', $1::JSONB ? $2");
    }

    use super::*;

    #[test]
    fn unlogged_is_recognized() {
        let (t, f) = strip_unlogged("create unlogged table a (x int); CREATE TABLE b (y int);\nCREATE\n UNLOGGED TABLE c (z int)").unwrap();
        assert_eq!(f.creates.iter().map(|e| e.unlogged).collect::<Vec<_>>(), vec![true, false, true]);
        let (t2, f2) = strip_unlogged("VACUUM ANALYZE t; vacuum verbose analyze u; VACUUM").unwrap();
        assert_eq!(parse(&t2, &t2).unwrap().len(), 3);
        let v: Vec<(bool, bool)> = f2.vacuums.iter().map(|e| (e.vacuum_verbose, e.vacuum_analyze)).collect();
        assert_eq!(v, vec![(false, true), (true, true), (false, false)]);
        assert!(!t.to_lowercase().contains("unlogged"));
        assert_eq!(parse(&t, &t).unwrap().len(), 3);
    }

    #[test]
    fn sequence_options_are_put_in_sqlparsers_order() {
        let t = sequence_option_order("CREATE SEQUENCE s START WITH 5 INCREMENT BY -1 NO MINVALUE MAXVALUE 9; select 'sequence'").unwrap();
        assert_eq!(parse(&t, &t).unwrap().len(), 2, "{t}");
        assert!(t.find("INCREMENT").unwrap() < t.find("START").unwrap(), "{t}");
        assert!(sequence_option_order("CREATE SEQUENCE s INCREMENT 2 START 3").is_none());
    }

    #[test]
    fn syntax_errors_name_the_token() {
        let e = parse("SELEC 1", "SELEC 1").unwrap_err();
        assert_eq!(e.code, sqlstate::SYNTAX_ERROR);
        assert!(e.message.contains("SELEC"), "{}", e.message);
    }
}

//! Statements the server answers itself, before the engine's statement front end sees them:
//! `SET` / `RESET` / `SHOW` (session parameters and heapstore's settings), `SELECT version()`
//! and a few other zero-table functions clients ask for. Catalog queries (psql's `\d`, the
//! drivers' metadata calls) are not answered here: they run in the executor against the
//! generated `pg_catalog` relations (`sql::pg_catalog`).
//!
//! Invariants:
//! 1. A statement is answered here only if it is recognized completely; anything else goes to
//!    `crate::sql` unchanged (so the engine's errors stay the errors clients see).
//! 2. Session parameters (client-side formatting: `application_name`, `DateStyle`, ...) are
//!    per connection; heapstore's engine settings are per server and can be shown, not set
//!    (55P02 `parameter "x" cannot be changed now`), as PostgreSQL answers for its
//!    postmaster-level settings.
//! 3. SET, RESET and `set_config` are transactional (`session` invariant 10): before a change
//!    the session is told (`Session::begin_setting`), after it the new values are handed to
//!    the session (`set_client_settings`, `end_setting`), so an abort, ROLLBACK TO SAVEPOINT
//!    or the end of a SET LOCAL can put them back. A probe (`SessionParams::probe`: Parse and
//!    Describe asking whether a statement is answered here) changes nothing in the session.
//! 4. In a failed transaction block every statement answered here is refused with 25P02.

use crate::error::{sqlstate, PgError, Result};
use crate::session::{QueryResult, Session};
use crate::sql::dialect::Pg;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::collections::BTreeMap;

/// What `server_version` reports: psql and pgbench parse it for feature checks.
pub use crate::SERVER_VERSION;

/// `SELECT version()`.
pub fn version_string() -> String {
    crate::server_version_string()
}

/// Per-connection parameters: name (lower case) → (display name, value, settable).
#[derive(Clone)]
pub struct SessionParams {
    values: BTreeMap<String, (&'static str, String, bool)>,
    defaults: BTreeMap<String, String>,
    /// The database name the client connected to (`current_database()`).
    pub database: String,
    /// A copy used to ask [`local`] whether it answers a statement (Parse, Describe): it
    /// changes nothing in the session.
    pub probe: bool,
}

/// The parameters reported in ParameterStatus at startup (PostgreSQL's GUC_REPORT set).
pub const REPORTED: &[&str] = &[
    "application_name",
    "client_encoding",
    "DateStyle",
    "integer_datetimes",
    "IntervalStyle",
    "is_superuser",
    "server_encoding",
    "server_version",
    "session_authorization",
    "standard_conforming_strings",
    "TimeZone",
];

impl SessionParams {
    pub fn new(user: &str, superuser: bool, application_name: &str) -> SessionParams {
        let defs: [(&'static str, String, bool); 15] = [
            ("application_name", application_name.to_string(), true),
            ("client_encoding", "UTF8".into(), true),
            ("DateStyle", "ISO, MDY".into(), true),
            ("integer_datetimes", "on".into(), false),
            ("IntervalStyle", "postgres".into(), true),
            ("is_superuser", if superuser { "on" } else { "off" }.into(), false),
            ("server_encoding", "UTF8".into(), false),
            ("server_version", SERVER_VERSION.into(), false),
            ("server_version_num", "150000".into(), false),
            ("session_authorization", user.to_string(), false),
            ("standard_conforming_strings", "on".into(), false),
            ("TimeZone", "UTC".into(), true),
            ("extra_float_digits", "1".into(), true),
            ("search_path", "\"$user\", public".into(), true),
            ("statement_timeout", "0".into(), true),
        ];
        let values: BTreeMap<_, _> = defs.into_iter().map(|(n, v, s)| (n.to_ascii_lowercase(), (n, v, s))).collect();
        let defaults = values.iter().map(|(k, v)| (k.clone(), v.1.clone())).collect();
        SessionParams { values, defaults, database: String::new(), probe: false }
    }

    /// The server's `TimeZone` (`heapstore.conf` or `--set`) as what a session starts in and
    /// RESET returns to, before the startup packet's parameters apply.
    pub fn use_server_time_zone(&mut self, engine: &crate::config::Settings) {
        let zone = engine.time_zone();
        if let Some(e) = self.values.get_mut("timezone") {
            e.1 = zone.clone();
        }
        self.defaults.insert("timezone".to_string(), zone);
    }

    /// The planner's settings (`enable_*`, the cost constants), settable per session, starting
    /// from the server's values.
    pub fn add_planner_settings(&mut self, engine: &crate::config::Settings) {
        for &name in crate::sql::cost::PLANNER_SETTINGS {
            let v = engine.get(name).unwrap_or("").to_string();
            self.defaults.insert(name.to_string(), v.clone());
            self.values.insert(name.to_string(), (name, v, true));
        }
    }

    /// Every parameter with its display name and value (for `pg_settings`).
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.values.values().map(|(n, v, _)| (n.to_string(), v.clone())).collect()
    }

    /// A parameter's value, by any capitalization.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(&name.to_ascii_lowercase()).map(|v| v.1.as_str())
    }

    /// The current values become what RESET returns to (after the startup packet's
    /// parameters applied, as PostgreSQL's session defaults).
    pub fn keep_as_defaults(&mut self) {
        self.defaults = self.values.iter().map(|(k, v)| (k.clone(), v.1.clone())).collect();
    }

    /// Installs values an abort or commit put back in the session (`Session`'s invariant
    /// 10). Returns the reported parameters whose value changed, to send in ParameterStatus.
    pub fn restore(&mut self, pairs: &[(String, String)]) -> Vec<(String, String)> {
        let mut changed = Vec::new();
        for (name, value) in pairs {
            if let Some(e) = self.values.get_mut(&name.to_ascii_lowercase()) {
                if e.1 != *value {
                    e.1 = value.clone();
                    if REPORTED.contains(&e.0) {
                        changed.push((e.0.to_string(), value.clone()));
                    }
                }
            }
        }
        changed
    }

    /// Every parameter back to its value at connection start (`RESET ALL`, `DISCARD ALL`).
    pub fn reset_all(&mut self) {
        for (k, v) in &self.defaults {
            if let Some(e) = self.values.get_mut(k) {
                e.1 = v.clone();
            }
        }
    }

    /// Sets a session parameter, checking what heapstore can honour. Returns the display name
    /// if the parameter is one reported to the client (a ParameterStatus follows).
    pub fn set(&mut self, name: &str, value: &str, engine: &crate::config::Settings) -> Result<Option<&'static str>> {
        let key = name.to_ascii_lowercase();
        let Some((display, _, settable)) = self.values.get(&key).map(|v| (v.0, v.1.clone(), v.2)) else {
            engine.get(name)?; // unknown: 42704 unrecognized configuration parameter
            return Err(cant_change(name));
        };
        if !settable {
            return Err(cant_change(name));
        }
        let value = match key.as_str() {
            "client_encoding" => {
                let v = value.to_ascii_uppercase().replace(['-', '_'], "");
                if v != "UTF8" && v != "UNICODE" {
                    return Err(PgError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("conversion between {value} and UTF8 is not supported"),
                    ));
                }
                "UTF8".to_string()
            }
            "datestyle" => {
                if !value.to_ascii_uppercase().contains("ISO") {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"DateStyle\": \"{value}\""),
                    )
                    .with_detail("heapstore writes dates in ISO format only."));
                }
                "ISO, MDY".to_string()
            }
            // Intervals are written in the postgres style only: another style is refused, never
            // accepted and ignored.
            "intervalstyle" => match value.to_ascii_lowercase().as_str() {
                "postgres" => "postgres".to_string(),
                "postgres_verbose" | "sql_standard" | "iso_8601" => {
                    return Err(PgError::feature(format!("IntervalStyle {value} is not supported by heapstore (only postgres)")))
                }
                _ => {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"IntervalStyle\": \"{value}\""),
                    )
                    .with_hint("Available values: postgres, postgres_verbose, sql_standard, iso_8601."))
                }
            },
            k if crate::sql::cost::PLANNER_SETTINGS.contains(&k) => crate::sql::cost::check_setting(k, value)?,
            "extra_float_digits" => match crate::config::parse_int_setting(value, &[]) {
                // Any value above 0 prints floats in their shortest exact form, as here; 0 and
                // below round them to fewer digits, which output does not do.
                Ok(n) if (1..=3).contains(&n) => n.to_string(),
                Ok(n) if (-15..=0).contains(&n) => {
                    return Err(PgError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!(
                        "extra_float_digits = {n} is not supported: float output is always the shortest exact form (any value from 1 to 3)"
                    ),
                    ))
                }
                Ok(n) => {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("{n} is outside the valid range for parameter \"extra_float_digits\" (-15 .. 3)"),
                    ))
                }
                Err(hint) => {
                    let e = PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"extra_float_digits\": \"{value}\""),
                    );
                    return Err(match hint {
                        Some(h) => e.with_hint(h),
                        None => e,
                    });
                }
            },
            "statement_timeout" => time_setting("statement_timeout", value)?,
            "timezone" => crate::types::tz::setting(value)?.0,
            _ => value.to_string(),
        };
        let reported = REPORTED.contains(&display);
        self.values.insert(key, (display, value, true));
        Ok(reported.then_some(display))
    }

    fn reset(&mut self, name: &str, engine: &crate::config::Settings) -> Result<Option<&'static str>> {
        let key = name.to_ascii_lowercase();
        let d = self.defaults.get(&key).cloned();
        match d {
            Some(v) => self.set(name, &v, engine),
            None => {
                engine.get(name)?;
                Err(cant_change(name))
            }
        }
    }
}

/// A time setting in milliseconds (`statement_timeout`): PostgreSQL's units (a bare number is
/// ms), 0 .. 2147483647 ms, shown in the largest unit that holds it exactly, as `SHOW` prints
/// it ("5s", "1min", "1500ms").
fn time_setting(name: &str, value: &str) -> Result<String> {
    let ms = crate::config::parse_int_setting(value, crate::config::MS_UNITS).map_err(|hint| {
        let e = PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"{name}\": \"{value}\""));
        match hint {
            Some(h) => e.with_hint(h),
            None => e,
        }
    })?;
    if ms < 0 {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("{ms} ms is outside the valid range for parameter \"{name}\" (0 .. 2147483647)"),
        ));
    }
    if ms == 0 {
        return Ok("0".into());
    }
    let (n, unit) = [(86_400_000, "d"), (3_600_000, "h"), (60_000, "min"), (1_000, "s"), (1, "ms")]
        .into_iter()
        .find(|(u, _)| ms % u == 0)
        .expect("1 ms divides every value");
    Ok(format!("{}{unit}", ms / n))
}

fn cant_change(name: &str) -> PgError {
    PgError::new(sqlstate::CANT_CHANGE_RUNTIME_PARAM, format!("parameter \"{name}\" cannot be changed now"))
}

/// What a local statement did, beyond its result.
pub struct LocalOutcome {
    pub result: QueryResult,
    /// Parameters whose new value must be reported (ParameterStatus).
    pub report: Vec<(String, String)>,
}

/// The tokens of one statement, without whitespace and its ending semicolons; None for text
/// that does not tokenize or holds more than one statement (each is answered on its own).
fn words(sql: &str) -> Option<Vec<Token>> {
    let mut toks = Tokenizer::new(&Pg, sql).tokenize_with_location().ok()?;
    // String constants as the engine's parser reads them (dollar quoting, continuation).
    crate::sql::dialect::rewrite_string_constants(&mut toks);
    let toks: Vec<Token> = toks.into_iter().map(|t| t.token).filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    let end = toks.iter().rposition(|t| !matches!(t, Token::SemiColon)).map_or(0, |p| p + 1);
    if toks[..end].iter().any(|t| matches!(t, Token::SemiColon)) {
        return None;
    }
    Some(toks[..end].to_vec())
}

fn word(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        Token::Word(w) => Some(w.value.clone()),
        _ => None,
    }
}

fn value_text(t: &Token) -> Option<String> {
    match t {
        Token::SingleQuotedString(s) => Some(s.clone()),
        Token::Number(n, _) => Some(n.clone()),
        Token::Word(w) => Some(w.value.clone()),
        _ => None,
    }
}

fn one_row(col: &str, ty: &str, tag: &str, v: Option<String>) -> QueryResult {
    QueryResult { tag: tag.into(), columns: vec![(col.into(), ty.into())], rows: vec![vec![v]], returns_rows: true, ..Default::default() }
}

/// Whether SET and SHOW of `name` go to the engine ([`TRANSACTION_SETTINGS`]).
pub fn engine_setting(name: &str) -> bool {
    TRANSACTION_SETTINGS.contains(&name.to_ascii_lowercase().as_str())
}

/// Transaction characteristics: SET and SHOW of these go to the engine, which keeps them per
/// session and transaction.
const TRANSACTION_SETTINGS: &[&str] = &[
    "transaction_isolation",
    "default_transaction_isolation",
    "transaction_read_only",
    "default_transaction_read_only",
    "work_mem",
    "temp_file_limit",
];

/// Answers `sql` if it is a statement this module handles (invariant 1). In a failed
/// transaction block every one is refused (25P02), as PostgreSQL refuses all but ROLLBACK.
pub fn local(params: &mut SessionParams, s: &mut Session, user: &str, pid: i32, sql: &str) -> Option<Result<LocalOutcome>> {
    if s.txn.as_ref().is_some_and(|t| t.failed) {
        let mut scratch = params.clone();
        scratch.probe = true;
        return answer(&mut scratch, s, user, pid, sql).map(|_| {
            Err(PgError::new(
                sqlstate::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ))
        });
    }
    answer(params, s, user, pid, sql)
}

fn answer(params: &mut SessionParams, s: &mut Session, user: &str, pid: i32, sql: &str) -> Option<Result<LocalOutcome>> {
    let toks = words(sql)?;
    let first = toks.first().and_then(word)?;
    if matches!(first.as_str(), "set" | "show" | "reset")
        && toks.iter().take(3).filter_map(word).any(|w| TRANSACTION_SETTINGS.contains(&w.as_str()))
    {
        return None;
    }
    let engine = s.shared().settings.clone();
    let plain = |r: QueryResult| Some(Ok(LocalOutcome { result: r, report: vec![] }));
    match first.as_str() {
        // RESET ALL: every session parameter back to its connection-start value, and the
        // engine's session settings (transaction characteristics, work_mem, ...) to default.
        "reset" if toks.len() == 2 && word(&toks[1]).as_deref() == Some("all") => {
            if !params.probe {
                if let Err(e) = s.reset_session_settings() {
                    return Some(Err(e));
                }
            }
            params.reset_all();
            if !params.probe {
                s.set_client_settings(params.pairs());
                s.end_setting(None, false);
            }
            let report = REPORTED.iter().map(|n| (n.to_string(), params.get(n).unwrap_or("").to_string())).collect();
            Some(Ok(LocalOutcome { result: crate::sql::tag("RESET"), report }))
        }
        // heapstore has no LISTEN (it is refused), so nothing is ever listened to: UNLISTEN
        // has nothing to stop.
        "unlisten" if toks.len() == 2 => plain(crate::sql::tag("UNLISTEN")),
        "show" if toks.len() == 2 => {
            let name = word(&toks[1])?;
            if name == "all" {
                let mut rows: Vec<Vec<Option<String>>> =
                    params.values.values().map(|(n, v, _)| vec![Some(n.to_string()), Some(v.clone()), None]).collect();
                // The server's settings a session keeps its own value of are listed once, as the
                // session's.
                rows.extend(
                    engine
                        .all()
                        .into_iter()
                        .filter(|(n, _, _)| !params.values.contains_key(&n.to_ascii_lowercase()))
                        .map(|(n, v, d)| vec![Some(n.to_string()), Some(v), Some(d.to_string())]),
                );
                let n = rows.len();
                return plain(QueryResult {
                    tag: format!("SHOW {n}"),
                    columns: vec![("name".into(), "text".into()), ("setting".into(), "text".into()), ("description".into(), "text".into())],
                    rows,
                    returns_rows: true,
                    ..Default::default()
                });
            }
            let v = match params.get(&name) {
                Some(v) => Ok(v.to_string()),
                None => engine.get(&name).map(str::to_string),
            };
            // The column is named as the parameter is spelled (`TimeZone`, `DateStyle`).
            let column = params.values.get(&name.to_ascii_lowercase()).map_or(name.as_str(), |v| v.0);
            Some(v.map(|v| LocalOutcome { result: one_row(column, "text", "SHOW", Some(v)), report: vec![] }))
        }
        "set" | "reset" => {
            let mut i = 1;
            let local = first == "set" && toks.get(1).and_then(word).as_deref() == Some("local");
            if local || first == "set" && toks.get(1).and_then(word).is_some_and(|w| w == "session") {
                i = 2;
            }
            let name = word(toks.get(i)?)?;
            // SET TIME ZONE x
            let time_zone_syntax = name == "time" && toks.get(i + 1).and_then(word).as_deref() == Some("zone");
            let (name, rest) = if time_zone_syntax { ("timezone".to_string(), &toks[i + 2..]) } else { (name, &toks[i + 1..]) };
            // Only a statement this module answers gets this far: now it may change things.
            if first == "reset" && !rest.is_empty() {
                return None;
            }
            if first == "set"
                && !matches!(rest.first(), Some(Token::Eq))
                && rest.first().and_then(word).as_deref() != Some("to")
                && name != "timezone"
            {
                return None;
            }
            if !params.probe && !s.begin_setting(local) {
                let mut r = crate::sql::tag("SET");
                r.notices.push("WARNING:  SET LOCAL can only be used in transaction blocks".into());
                return Some(Ok(LocalOutcome { result: r, report: vec![] }));
            }
            let r = if first == "reset" {
                params.reset(&name, &engine)
            } else {
                let rest = match rest.first() {
                    Some(Token::Eq) => &rest[1..],
                    Some(t) if word(t).as_deref() == Some("to") => &rest[1..],
                    _ if name == "timezone" => rest,
                    _ => return None,
                };
                // Values, a signed number (`SET x = -1`) being one.
                let mut vals = Vec::new();
                let mut it = rest.iter().filter(|t| !matches!(t, Token::Comma)).peekable();
                while let Some(t) = it.next() {
                    match (t, it.peek()) {
                        (Token::Minus | Token::Plus, Some(Token::Number(n, _))) => {
                            vals.push(if matches!(t, Token::Minus) { format!("-{n}") } else { n.clone() });
                            it.next();
                        }
                        _ => vals.push(value_text(t)?),
                    }
                }
                if vals.is_empty() {
                    return None;
                }
                // SET TIME ZONE LOCAL is SET TIME ZONE DEFAULT; SET TIME ZONE INTERVAL '-08:00'
                // [HOUR TO MINUTE] is a fixed offset east of UTC.
                let interval_zone = name == "timezone" && vals.len() >= 2 && vals[0].eq_ignore_ascii_case("interval");
                if vals.len() == 1 && (vals[0].eq_ignore_ascii_case("default") || time_zone_syntax && vals[0].eq_ignore_ascii_case("local"))
                {
                    params.reset(&name, &engine)
                } else if interval_zone {
                    let qualifier: Vec<String> = vals[2..].iter().map(|v| v.to_ascii_lowercase()).collect();
                    if !(qualifier.is_empty() || qualifier == ["hour", "to", "minute"]) {
                        return Some(Err(PgError::feature("SET TIME ZONE INTERVAL takes only HOUR TO MINUTE as its qualifier")));
                    }
                    match crate::types::interval::parse(&vals[1]).and_then(|iv| crate::types::tz::Zone::interval(&iv)) {
                        Ok(crate::types::tz::Zone::Fixed(east)) => params.set(&name, &crate::types::tz::fixed_name(east), &engine),
                        Ok(_) => return None,
                        Err(e) => return Some(Err(e)),
                    }
                } else {
                    params.set(&name, &vals.join(", "), &engine)
                }
            };
            if !params.probe && r.is_ok() {
                s.set_client_settings(params.pairs());
                s.end_setting(Some(&name), local);
            }
            let tag = if first == "set" { "SET" } else { "RESET" };
            Some(r.map(|rep| LocalOutcome {
                result: crate::sql::tag(tag),
                report: rep.map(|d| vec![(d.to_string(), params.get(d).unwrap_or("").to_string())]).unwrap_or_default(),
            }))
        }
        "select" => {
            // Catalog queries run in the engine against the generated pg_catalog relations.
            if sql.to_ascii_lowercase().contains("from pg_catalog.pg_") {
                return None;
            }
            // SELECT f() with no FROM: version(), current_user, current_setting('x'), ...
            if toks.len() < 2 {
                return None;
            }
            let body: Vec<&Token> = toks[1..].iter().collect();
            let name_of = |i: usize| body.get(i).and_then(|t| word(t));
            let (fname, args_at) = match (name_of(0).as_deref(), body.get(1)) {
                (Some("pg_catalog"), Some(Token::Period)) => (name_of(2)?, 3),
                (Some(n), _) => (n.to_string(), 1),
                _ => return None,
            };
            let call_args: Option<Vec<String>> = match (body.get(args_at), body.last()) {
                (Some(Token::LParen), Some(Token::RParen)) => {
                    let inner = &body[args_at + 1..body.len() - 1];
                    inner.iter().filter(|t| !matches!(t, Token::Comma)).map(|t| value_text(t)).collect()
                }
                (None, _) => None,
                _ => return None,
            };
            let bare = call_args.is_none();
            if !bare && body.len() != args_at + 2 + call_args.as_ref().map_or(0, |a| (a.len() * 2).saturating_sub(1)) {
                return None;
            }
            let args = call_args.unwrap_or_default();
            match (fname.as_str(), bare, args.len()) {
                ("version", false, 0) => plain(one_row("version", "text", "SELECT 1", Some(version_string()))),
                ("current_user" | "session_user" | "user", true, 0) => plain(one_row(&fname, "name", "SELECT 1", Some(user.to_string()))),
                ("current_database", false, 0) => plain(one_row("current_database", "name", "SELECT 1", Some(params.database.clone()))),
                ("current_schema", _, 0) => plain(one_row("current_schema", "name", "SELECT 1", Some("public".into()))),
                ("pg_backend_pid", false, 0) => plain(one_row("pg_backend_pid", "integer", "SELECT 1", Some(pid.to_string()))),
                ("set_config", false, 3) => {
                    // set_config(name, value, is_local): SET, or SET LOCAL. Outside a
                    // transaction block a local value would last only this statement: the
                    // value is checked and returned, nothing changes (PostgreSQL warns not).
                    let is_local = match args[2].to_ascii_lowercase().as_str() {
                        "false" | "f" | "off" | "0" | "no" => false,
                        "true" | "t" | "on" | "1" | "yes" => true,
                        _ => return None,
                    };
                    if TRANSACTION_SETTINGS.contains(&args[0].to_ascii_lowercase().as_str()) {
                        return Some(Err(PgError::feature(format!("set_config of {} is not supported by heapstore: use SET", args[0]))));
                    }
                    if params.probe || is_local && !s.in_transaction_block() {
                        let mut scratch = params.clone();
                        let r = scratch.set(&args[0], &args[1], &engine);
                        return Some(r.map(|_| LocalOutcome {
                            result: one_row("set_config", "text", "SELECT 1", scratch.get(&args[0]).map(str::to_string)),
                            report: vec![],
                        }));
                    }
                    s.begin_setting(is_local);
                    let r = params.set(&args[0], &args[1], &engine);
                    if r.is_ok() {
                        s.set_client_settings(params.pairs());
                        s.end_setting(Some(&args[0]), is_local);
                    }
                    Some(r.map(|rep| LocalOutcome {
                        result: one_row("set_config", "text", "SELECT 1", params.get(&args[0]).map(str::to_string)),
                        report: rep.map(|d| vec![(d.to_string(), params.get(d).unwrap_or("").to_string())]).unwrap_or_default(),
                    }))
                }
                ("current_setting", false, 1) => {
                    let v = match params.get(&args[0]) {
                        Some(v) => Ok(v.to_string()),
                        None => engine.get(&args[0]).map(str::to_string),
                    };
                    Some(v.map(|v| LocalOutcome { result: one_row("current_setting", "text", "SELECT 1", Some(v)), report: vec![] }))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: &mut SessionParams, s: &mut Session, sql: &str) -> Option<Result<LocalOutcome>> {
        local(p, s, "alice", 7, sql)
    }

    #[test]
    fn set_show_and_functions() {
        let dir = tempfile::tempdir().unwrap();
        crate::Database::init(&dir.path().join("d"), &[]).unwrap();
        let db = crate::Database::open(&dir.path().join("d"), &[]).unwrap();
        let mut s = db.session();
        let mut p = SessionParams::new("alice", false, "");
        let show = |p: &mut SessionParams, s: &mut Session, sql: &str| run(p, s, sql).unwrap().unwrap().result.rows[0][0].clone().unwrap();
        assert_eq!(show(&mut p, &mut s, "SHOW DateStyle"), "ISO, MDY");
        assert_eq!(show(&mut p, &mut s, "show shared_buffers;"), "128MB");
        // SET LOCAL outside a transaction block: PostgreSQL's warning, nothing changed.
        let o = run(&mut p, &mut s, "SET LOCAL application_name = 'z'").unwrap().unwrap();
        assert_eq!(o.result.notices, vec!["WARNING:  SET LOCAL can only be used in transaction blocks".to_string()]);
        assert_eq!(show(&mut p, &mut s, "SHOW application_name"), "");
        assert_eq!(show(&mut p, &mut s, "SELECT set_config('application_name', 'cfg', false)"), "cfg");
        assert_eq!(show(&mut p, &mut s, "SHOW application_name"), "cfg");
        assert_eq!(show(&mut p, &mut s, "SELECT set_config('application_name', 'z', true)"), "z");
        assert_eq!(show(&mut p, &mut s, "SHOW application_name"), "cfg");
        let o = run(&mut p, &mut s, "SET application_name TO 'x y'").unwrap().unwrap();
        assert_eq!(o.result.tag, "SET");
        assert_eq!(o.report, vec![("application_name".to_string(), "x y".to_string())]);
        // Values at or below 0 would round float output, which it does not do: refused.
        for (v, code) in [("0", "0A000"), ("-15", "0A000"), ("-16", "22023"), ("4", "22023"), ("'1 x'", "22023")] {
            let e = run(&mut p, &mut s, &format!("SET extra_float_digits = {v}")).unwrap().err().unwrap();
            assert_eq!(e.code, code, "{v}");
        }
        run(&mut p, &mut s, "SET extra_float_digits = '2.6'").unwrap().unwrap();
        assert_eq!(show(&mut p, &mut s, "SHOW extra_float_digits"), "3");
        run(&mut p, &mut s, "set session extra_float_digits = 3").unwrap().unwrap();
        assert_eq!(show(&mut p, &mut s, "SHOW extra_float_digits"), "3");
        run(&mut p, &mut s, "SET TIME ZONE 'UTC'").unwrap().unwrap();
        run(&mut p, &mut s, "RESET application_name").unwrap().unwrap();
        assert_eq!(p.get("application_name"), Some(""));
        let code = |r: Option<Result<LocalOutcome>>| r.unwrap().err().unwrap().code;
        assert_eq!(code(run(&mut p, &mut s, "SET nosuch = 1")), sqlstate::UNDEFINED_OBJECT);
        assert_eq!(code(run(&mut p, &mut s, "SHOW nosuch")), sqlstate::UNDEFINED_OBJECT);
        assert_eq!(code(run(&mut p, &mut s, "SET fsync = off")), sqlstate::CANT_CHANGE_RUNTIME_PARAM);
        assert_eq!(code(run(&mut p, &mut s, "SET server_version = '9'")), sqlstate::CANT_CHANGE_RUNTIME_PARAM);
        assert_eq!(code(run(&mut p, &mut s, "SET client_encoding = 'LATIN1'")), sqlstate::FEATURE_NOT_SUPPORTED);
        assert!(show(&mut p, &mut s, "SELECT version()").starts_with("PostgreSQL 15.0 (heapstore"));
        assert_eq!(show(&mut p, &mut s, "SELECT pg_catalog.version();").len(), version_string().len());
        assert_eq!(show(&mut p, &mut s, "SELECT current_user"), "alice");
        assert_eq!(show(&mut p, &mut s, "select current_setting('port')"), "5433");
        assert_eq!(show(&mut p, &mut s, "SELECT pg_backend_pid()"), "7");
        // Not ours: left to the engine.
        assert!(run(&mut p, &mut s, "SELECT 1").is_none());
        assert!(run(&mut p, &mut s, "SELECT version() FROM t").is_none());
        assert!(run(&mut p, &mut s, "SET x = (1)").is_none());
        assert!(run(&mut p, &mut s, "COPY t FROM STDIN").is_none());
        drop(s);
        db.close().unwrap();
    }

    /// SET is undone by ROLLBACK and ROLLBACK TO SAVEPOINT; SET LOCAL ends with the
    /// transaction; what an end put back reaches the server's parameters and is reported.
    #[test]
    fn settings_are_transactional() {
        let dir = tempfile::tempdir().unwrap();
        crate::Database::init(&dir.path().join("d"), &[]).unwrap();
        let db = crate::Database::open(&dir.path().join("d"), &[]).unwrap();
        let mut s = db.session();
        let mut p = SessionParams::new("alice", false, "");
        let set = |p: &mut SessionParams, s: &mut Session, sql: &str| {
            run(p, s, sql).unwrap().unwrap();
        };
        // What the server does before ReadyForQuery.
        let end = |p: &mut SessionParams, s: &mut Session, sql: &str| {
            s.execute(sql).unwrap();
            s.take_restored_client_settings().map(|pairs| p.restore(&pairs)).unwrap_or_default()
        };
        let app = |v: &str| vec![("application_name".to_string(), v.to_string())];
        set(&mut p, &mut s, "SET application_name = 'before'");

        s.execute("BEGIN").unwrap();
        set(&mut p, &mut s, "SET application_name = 'inside'");
        assert_eq!(p.get("application_name"), Some("inside"));
        assert_eq!(end(&mut p, &mut s, "ROLLBACK"), app("before"));
        assert_eq!(p.get("application_name"), Some("before"));

        // A failed block: as PostgreSQL's, the error aborts the transaction, so the SET is
        // undone there (and reported before the next ReadyForQuery); a SET in it is refused,
        // and the ROLLBACK that ends it has nothing left to put back.
        s.execute("BEGIN").unwrap();
        set(&mut p, &mut s, "SET application_name = 'doomed'");
        assert!(s.execute("SELECT 1/0").is_err());
        s.mark_failed();
        let restored = s.take_restored_client_settings().map(|pairs| p.restore(&pairs)).unwrap_or_default();
        assert_eq!(restored, app("before"));
        let refused = run(&mut p, &mut s, "SET application_name = 'late'").unwrap().err().unwrap();
        assert_eq!(refused.code, sqlstate::IN_FAILED_SQL_TRANSACTION);
        assert_eq!(p.get("application_name"), Some("before"));
        assert_eq!(end(&mut p, &mut s, "ROLLBACK"), vec![]);

        // SET LOCAL lasts to commit; a SET after it is what commit keeps.
        s.execute("BEGIN").unwrap();
        set(&mut p, &mut s, "SET LOCAL application_name = 'local'");
        assert_eq!(p.get("application_name"), Some("local"));
        assert_eq!(end(&mut p, &mut s, "COMMIT"), app("before"));
        s.execute("BEGIN").unwrap();
        set(&mut p, &mut s, "SET application_name = 'kept'");
        set(&mut p, &mut s, "SET LOCAL application_name = 'for now'");
        assert_eq!(end(&mut p, &mut s, "COMMIT"), app("kept"));
        s.execute("BEGIN").unwrap();
        set(&mut p, &mut s, "SET LOCAL application_name = 'for now'");
        set(&mut p, &mut s, "SET application_name = 'session'");
        assert_eq!(end(&mut p, &mut s, "COMMIT"), vec![]);
        assert_eq!(p.get("application_name"), Some("session"));
        s.execute("BEGIN").unwrap();
        set(&mut p, &mut s, "SELECT set_config('application_name', 'cfg local', true)");
        assert_eq!(end(&mut p, &mut s, "COMMIT"), app("session"));

        // Savepoints: ROLLBACK TO puts back what was set when the savepoint was.
        s.execute("BEGIN").unwrap();
        set(&mut p, &mut s, "SET application_name = 's1'");
        s.execute("SAVEPOINT a").unwrap();
        set(&mut p, &mut s, "SET application_name = 's2'");
        set(&mut p, &mut s, "SET extra_float_digits = 2");
        assert_eq!(end(&mut p, &mut s, "ROLLBACK TO SAVEPOINT a"), app("s1"));
        assert_eq!(p.get("extra_float_digits"), Some("1"));
        s.execute("RELEASE SAVEPOINT a").unwrap();
        assert_eq!(end(&mut p, &mut s, "COMMIT"), vec![]);
        assert_eq!(p.get("application_name"), Some("s1"));

        // The engine's settings, the same way.
        let show = |s: &mut Session, sql: &str| s.execute(sql).unwrap().pop().unwrap().rows[0][0].clone().unwrap();
        s.execute("BEGIN").unwrap();
        s.execute("SET work_mem = '1MB'").unwrap();
        s.execute("SET default_transaction_read_only = on").unwrap();
        assert_eq!(show(&mut s, "SHOW work_mem"), "1MB");
        s.execute("ROLLBACK").unwrap();
        assert_eq!(show(&mut s, "SHOW work_mem"), "4MB");
        assert_eq!(show(&mut s, "SHOW default_transaction_read_only"), "off");
        s.execute("BEGIN").unwrap();
        s.execute("SET LOCAL work_mem = '2MB'").unwrap();
        s.execute("SET temp_file_limit = '1GB'").unwrap();
        assert_eq!(show(&mut s, "SHOW work_mem"), "2MB");
        s.execute("COMMIT").unwrap();
        assert_eq!(show(&mut s, "SHOW work_mem"), "4MB");
        assert_eq!(show(&mut s, "SHOW temp_file_limit"), "1GB");
        let warned = s.execute("SET LOCAL work_mem = '8MB'").unwrap().pop().unwrap();
        assert_eq!(warned.notices, vec!["WARNING:  SET LOCAL can only be used in transaction blocks".to_string()]);
        assert_eq!(show(&mut s, "SHOW work_mem"), "4MB");
        drop(s);
        db.close().unwrap();
    }
}

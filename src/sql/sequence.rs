//! Sequences at the SQL level: `CREATE SEQUENCE`, the sequences `serial` and identity columns
//! own, and `nextval` / `currval` / `setval` / `lastval` (the page and its WAL are
//! `access::sequence`).
//!
//! Invariants:
//! 1. A sequence's value functions run while holding `Shared::ddl_lock` and only on a
//!    sequence the session still sees: a DROP commits (and deletes the file and its buffers)
//!    under the same lock, so no change is made to the page of a dropped sequence.
//! 2. The end LSN of every record a value function wrote is kept in the session
//!    (`Session::seq_flush`) and flushed at commit, even by a transaction without an xid, so a
//!    value a committed transaction was given is never handed out again after a crash.
//! 3. `currval` / `lastval` are the session's own: the last value `nextval` gave this session
//!    (or `setval` set), whatever other sessions did since.

use crate::access::sequence::{Exhausted, Limits, SeqRel};
use crate::catalog::{fold_ident, RelKind, SequenceDef, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::session::{QueryResult, Session};
use crate::types::{SqlType, TypeId, Value};
use sqlparser::ast::{Expr, SequenceOptions};
use std::sync::Arc;

/// The sequence functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeqFunc {
    Nextval,
    Currval,
    Setval,
    Lastval,
}

impl SeqFunc {
    pub fn named(name: &str) -> Option<SeqFunc> {
        Some(match name {
            "nextval" => SeqFunc::Nextval,
            "currval" => SeqFunc::Currval,
            "setval" => SeqFunc::Setval,
            "lastval" => SeqFunc::Lastval,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SeqFunc::Nextval => "nextval",
            SeqFunc::Currval => "currval",
            SeqFunc::Setval => "setval",
            SeqFunc::Lastval => "lastval",
        }
    }
}

fn type_range(ty: TypeId) -> (i64, i64) {
    match ty {
        TypeId::Int2 => (i16::MIN as i64, i16::MAX as i64),
        TypeId::Int4 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

fn bad(msg: String) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

/// The integer of a sequence option (`INCREMENT BY -2`, `START 10`).
fn option_int(e: &Expr, what: &str) -> Result<i64> {
    let txt = e.to_string().replace(' ', "");
    txt.parse::<i64>().map_err(|_| PgError::syntax(format!("{what} must be an integer, not \"{e}\"")))
}

/// A sequence's parameters from its options, checked as PostgreSQL's `init_params`.
pub(crate) fn sequence_def(ty: SqlType, options: &[SequenceOptions], owned_by: Option<(u32, String)>) -> Result<SequenceDef> {
    if !matches!(ty.id, TypeId::Int2 | TypeId::Int4 | TypeId::Int8) {
        return Err(bad("sequence type must be smallint, integer, or bigint".into()));
    }
    let (mut increment, mut min, mut max, mut start, mut cache, mut cycle) = (None, None, None, None, None, None);
    let twice = || PgError::syntax("conflicting or redundant options");
    for o in options {
        match o {
            SequenceOptions::IncrementBy(e, _) if increment.is_none() => increment = Some(option_int(e, "INCREMENT")?),
            SequenceOptions::MinValue(e) if min.is_none() => min = Some(e.as_ref().map(|e| option_int(e, "MINVALUE")).transpose()?),
            SequenceOptions::MaxValue(e) if max.is_none() => max = Some(e.as_ref().map(|e| option_int(e, "MAXVALUE")).transpose()?),
            SequenceOptions::StartWith(e, _) if start.is_none() => start = Some(option_int(e, "START")?),
            SequenceOptions::Cache(e) if cache.is_none() => cache = Some(option_int(e, "CACHE")?),
            SequenceOptions::Cycle(no) if cycle.is_none() => cycle = Some(!*no),
            _ => return Err(twice()),
        }
    }
    let increment = increment.unwrap_or(1);
    if increment == 0 {
        return Err(bad("INCREMENT must not be zero".into()));
    }
    let (tmin, tmax) = type_range(ty.id);
    let tyname = ty.name();
    let max = max.flatten().unwrap_or(if increment > 0 { tmax } else { -1 });
    let min = min.flatten().unwrap_or(if increment > 0 { 1 } else { tmin });
    if max < tmin || max > tmax {
        return Err(bad(format!("MAXVALUE ({max}) is out of range for sequence data type {tyname}")));
    }
    if min < tmin || min > tmax {
        return Err(bad(format!("MINVALUE ({min}) is out of range for sequence data type {tyname}")));
    }
    if min >= max {
        return Err(bad(format!("MINVALUE ({min}) must be less than MAXVALUE ({max})")));
    }
    let start = start.unwrap_or(if increment > 0 { min } else { max });
    if start < min {
        return Err(bad(format!("START value ({start}) cannot be less than MINVALUE ({min})")));
    }
    if start > max {
        return Err(bad(format!("START value ({start}) cannot be greater than MAXVALUE ({max})")));
    }
    let cache = cache.unwrap_or(1);
    if cache <= 0 {
        return Err(bad(format!("CACHE ({cache}) must be greater than zero")));
    }
    if cache > 1 {
        return Err(PgError::feature("sequences with CACHE greater than 1 are not supported by heapstore"));
    }
    Ok(SequenceDef { ty, start, increment, min, max, cache, cycle: cycle.unwrap_or(false), owned_by })
}

/// Creates sequence `name` in the current transaction (files, first page, catalog entry).
/// A temporary sequence (`temp`) is not WAL-logged (`Session`'s invariant 11).
pub(crate) fn make_sequence(s: &mut Session, name: &str, def: SequenceDef, temp: bool) -> Result<Arc<Table>> {
    let key = format!("{}{name}", if temp { "\0pg_temp\0" } else { "\0public\0" });
    if s.lookup_table(&key).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
    }
    super::ddl::check_temp_name(s, name, temp)?;
    s.xid();
    let relfile = s.create_files()?;
    let shared = s.shared.clone();
    let wal = (!temp).then_some(&*shared.wal);
    let seq = SeqRel { pool: &shared.pool, pins: &s.pins, rel: relfile, wal, full_page_writes: true };
    let end = seq.init(def.start)?;
    s.note_seq_lsn(end);
    let int8 = SqlType::new(TypeId::Int8);
    let t = Arc::new(Table {
        oid: shared.catalog.new_oid(),
        name: name.to_string(),
        columns: vec![
            crate::catalog::Column::new("last_value".into(), int8, true),
            crate::catalog::Column::new("log_cnt".into(), int8, true),
            crate::catalog::Column::new("is_called".into(), SqlType::new(TypeId::Bool), true),
        ],
        relfile,
        toast_relfile: None,
        persistence: if temp { crate::catalog::Persistence::Temporary } else { crate::catalog::Persistence::Permanent },
        indexes: Vec::new(),
        kind: RelKind::Sequence(def),
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        comment: None,
    });
    s.txn().creates.push(t.clone());
    if temp {
        s.temp_namespace();
    }
    Ok(t)
}

/// `CREATE [TEMPORARY] SEQUENCE [IF NOT EXISTS] name [AS type] [options] [OWNED BY t.c]`.
pub fn create_sequence(
    s: &mut Session,
    temporary: bool,
    if_not_exists: bool,
    name: &sqlparser::ast::ObjectName,
    data_type: Option<&sqlparser::ast::DataType>,
    options: &[SequenceOptions],
    owned_by: Option<&sqlparser::ast::ObjectName>,
) -> Result<QueryResult> {
    let (schema, name) = crate::catalog::qualified_name(name)?;
    if temporary && schema == Some(crate::catalog::Schema::Public) {
        return Err(PgError::new("42P16", "cannot create temporary relation in non-temporary schema"));
    }
    let temporary = temporary || schema == Some(crate::catalog::Schema::Temp);
    let key = format!("{}{name}", if temporary { "\0pg_temp\0" } else { "\0public\0" });
    if s.lookup_table(&key).is_some() && if_not_exists {
        let mut r = super::tag("CREATE SEQUENCE");
        r.notices.push(format!("NOTICE:  relation \"{name}\" already exists, skipping"));
        return Ok(r);
    }
    let ty = match data_type {
        Some(dt) => super::ddl::sql_type(dt)?,
        None => SqlType::new(TypeId::Int8),
    };
    let owner = match owned_by {
        None => None,
        Some(o) if o.to_string().eq_ignore_ascii_case("none") => None,
        Some(o) => {
            let parts: Vec<String> = o.0.iter().filter_map(|p| p.as_ident().map(fold_ident)).collect();
            let [t, c] = parts.as_slice() else {
                return Err(PgError::syntax("invalid OWNED BY option").with_hint("Specify OWNED BY table.column or OWNED BY NONE."));
            };
            let table = s.table(t)?;
            if table.column_index(c).is_none() {
                return Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{c}\" of relation \"{t}\" does not exist")));
            }
            if table.is_temp() != temporary {
                return Err(PgError::new("55000", "sequence must be in same schema as table it is linked to"));
            }
            Some((table.oid, c.clone()))
        }
    };
    let def = sequence_def(ty, options, owner)?;
    make_sequence(s, &name, def, temporary)?;
    Ok(super::tag("CREATE SEQUENCE"))
}

/// The sequences owned by a column of `table` (dropped with it).
pub(crate) fn owned_sequences(s: &Session, table: &Table) -> Vec<Arc<Table>> {
    s.visible_tables()
        .into_iter()
        .filter(|t| t.sequence().and_then(|d| d.owned_by.as_ref()).is_some_and(|(o, _)| *o == table.oid))
        .collect()
}

/// The sequence an identity column takes its values from.
pub(crate) fn identity_sequence(s: &Session, table: &Table, column: &str) -> Result<Arc<Table>> {
    owned_sequences(s, table)
        .into_iter()
        .find(|q| q.sequence().and_then(|d| d.owned_by.as_ref()).is_some_and(|(_, c)| c == column))
        .ok_or_else(|| PgError::internal(format!("identity column \"{column}\" of \"{}\" has no sequence", table.name)))
}

/// A relation named by a `regclass`-style argument: a name (`'s'`, `'public.s'`, `'"S"'`)
/// or an OID.
fn resolve(s: &Session, v: &Value) -> Result<Arc<Table>> {
    let t = match v {
        Value::Text(name) => {
            let name = parse_relation_name(name, &crate::sql::pg_catalog::temp_schema_name(s))?;
            s.table_any(&name)?
        }
        Value::Regclass(o, _) | Value::Oid(o) => s
            .visible_tables()
            .into_iter()
            .find(|t| t.oid == *o)
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("could not open relation with OID {o}")))?,
        other => match crate::sql::expr::as_i64(other) {
            Some(o) => return resolve(s, &Value::Oid(o as u32)),
            None => return Err(PgError::internal("a sequence function's argument is not a relation")),
        },
    };
    if t.sequence().is_none() {
        return Err(PgError::new("42809", format!("\"{}\" is not a sequence", t.name)));
    }
    Ok(t)
}

/// A relation name as `regclass` input reads it (unquoted parts folded to lower case), as
/// `catalog::relation_key` gives it.
/// `temp_schema`: the session's temporary schema's name (`pg_temp_N`).
pub(crate) fn parse_relation_name(text: &str, temp_schema: &str) -> Result<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let (mut chars, mut quoted) = (text.trim().chars().peekable(), false);
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c if quoted => cur.push(c),
            c => cur.push(c.to_ascii_lowercase()),
        }
    }
    parts.push(cur);
    match parts.as_slice() {
        [t] => Ok(t.clone()),
        [schema, t] if schema == "public" => Ok(format!("\0public\0{t}")),
        [schema, t] if schema == "pg_temp" || schema == temp_schema => Ok(format!("\0pg_temp\0{t}")),
        [schema, _] => Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("schema \"{schema}\" does not exist"))),
        _ => Err(PgError::new("42602", format!("invalid name syntax: \"{text}\""))),
    }
}

fn limits(d: &SequenceDef) -> Limits {
    Limits { increment: d.increment, min: d.min, max: d.max, cycle: d.cycle }
}

/// nextval / setval in a READ ONLY transaction: refused (25006) but for a temporary
/// sequence, as PostgreSQL's.
fn read_only_check(s: &Session, f: SeqFunc, seq: &Table) -> Result<()> {
    if s.txn.as_ref().is_some_and(|t| t.read_only) && !seq.is_temp() {
        return Err(PgError::new(sqlstate::READ_ONLY_SQL_TRANSACTION, format!("cannot execute {}() in a read-only transaction", f.name())));
    }
    Ok(())
}

/// Runs `op` on the sequence's page under `ddl_lock`, if the sequence is still there
/// (invariant 1).
fn with_page<R>(s: &Session, seq: &Table, op: impl FnOnce(&SeqRel<'_>) -> Result<R>) -> Result<R> {
    let shared = s.shared.clone();
    let _guard = shared.ddl_lock.lock().unwrap_or_else(|e| e.into_inner());
    if s.lookup_table(&seq.key()).is_none_or(|now| now.relfile != seq.relfile)
        || !shared.smgr.exists(seq.relfile, crate::storage::ForkNumber::Main)
    {
        return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", seq.name)));
    }
    let wal = (!seq.is_temp()).then_some(&*shared.wal);
    let rel = SeqRel { pool: &shared.pool, pins: &s.pins, rel: seq.relfile, wal, full_page_writes: true };
    op(&rel)
}

/// `nextval` of `seq` for this session.
pub(crate) fn nextval(s: &Session, seq: &Table) -> Result<i64> {
    read_only_check(s, SeqFunc::Nextval, seq)?;
    let def = seq.sequence().expect("resolved as a sequence");
    let got = with_page(s, seq, |rel| rel.next(&limits(def)))?;
    let (v, end) = got.map_err(|e| {
        let (which, at) = match e {
            Exhausted::Max(m) => ("maximum", m),
            Exhausted::Min(m) => ("minimum", m),
        };
        PgError::new("2200H", format!("nextval: reached {which} value of sequence \"{}\" ({at})", seq.name))
    })?;
    s.note_seq_lsn(end);
    s.note_seq_value(seq.oid, v);
    Ok(v)
}

/// Evaluates a sequence function for this session (`args` already evaluated; NULL-strict).
pub(crate) fn call(s: &Session, f: SeqFunc, args: &[Value]) -> Result<Value> {
    if f != SeqFunc::Lastval && args.iter().take(if f == SeqFunc::Setval { 3 } else { 1 }).any(|a| *a == Value::Null) {
        return Ok(Value::Null);
    }
    match f {
        SeqFunc::Lastval => {
            let Some((oid, v)) = s.seq_last() else {
                return Err(PgError::new("55000", "lastval is not yet defined in this session"));
            };
            // PostgreSQL fails if the sequence was dropped since.
            if !s.visible_tables().iter().any(|t| t.oid == oid) {
                return Err(PgError::new("55000", "lastval is not yet defined in this session"));
            }
            Ok(Value::Int8(v))
        }
        SeqFunc::Nextval => Ok(Value::Int8(nextval(s, &*resolve(s, &args[0])?)?)),
        SeqFunc::Currval => {
            let seq = resolve(s, &args[0])?;
            match s.seq_value(seq.oid) {
                Some(v) => Ok(Value::Int8(v)),
                None => Err(PgError::new("55000", format!("currval of sequence \"{}\" is not yet defined in this session", seq.name))),
            }
        }
        SeqFunc::Setval => {
            let seq = resolve(s, &args[0])?;
            read_only_check(s, f, &seq)?;
            let def = seq.sequence().expect("resolved as a sequence");
            let v = crate::sql::expr::as_i64(&args[1]).ok_or_else(|| PgError::internal("setval's value is not an integer"))?;
            let is_called = match args.get(2) {
                None => true,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(PgError::internal("setval's is_called is not a boolean")),
            };
            if v < def.min || v > def.max {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!("setval: value {v} is out of bounds for sequence \"{}\" ({}..{})", seq.name, def.min, def.max),
                ));
            }
            let end = with_page(s, &seq, |rel| rel.set(v, is_called))?;
            s.note_seq_lsn(end);
            if is_called {
                s.note_seq_value(seq.oid, v);
            }
            Ok(Value::Int8(v))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_names_fold_like_regclass_input() {
        assert_eq!(parse_relation_name("Public.My_Seq", "pg_temp_1").unwrap(), "\0public\0my_seq");
        assert_eq!(parse_relation_name("pg_temp_1.s", "pg_temp_1").unwrap(), "\0pg_temp\0s");
        assert_eq!(parse_relation_name("\"My\"\"Seq\"", "pg_temp_1").unwrap(), "My\"Seq");
        assert!(parse_relation_name("other.s", "pg_temp_1").is_err());
        assert!(parse_relation_name("pg_temp_2.s", "pg_temp_1").is_err());
    }

    #[test]
    fn options_are_checked_as_postgres_does() {
        let int4 = SqlType::new(TypeId::Int4);
        let d = sequence_def(int4, &[], None).unwrap();
        assert_eq!((d.min, d.max, d.start, d.increment), (1, i32::MAX as i64, 1, 1));
        let neg =
            sequence_def(int4, &[SequenceOptions::IncrementBy(Expr::value(sqlparser::ast::Value::Number("-1".into(), false)), true)], None)
                .unwrap();
        assert_eq!((neg.min, neg.max, neg.start), (i32::MIN as i64, -1, -1));
    }
}

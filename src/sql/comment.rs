//! `COMMENT ON TABLE | VIEW | SEQUENCE | INDEX | COLUMN ... IS 'text' | NULL`: a comment is
//! part of its relation's catalog entry (`catalog::Table::comment`, `Column::comment`,
//! `Index::comment`), so it commits, rolls back and is recovered with the transaction's other
//! catalog changes, and it goes with its object (a dropped column or index takes its comment).
//! `obj_description`, `col_description` and `pg_description` read it.
//!
//! Invariant: the statement holds ShareUpdateExclusiveLock on the relation (PostgreSQL's lock
//! for COMMENT) while it replaces the definition, so two COMMENTs, or a COMMENT and an ALTER
//! TABLE, on one relation are serialized.
//!
//! Comments on other objects (database, schema, role, constraint, function) are refused with
//! 0A000: heapstore keeps none.

use super::dialect::COMMENT_KIND_MARKER;
use crate::catalog::{fold_ident, RelKind, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use sqlparser::ast::{CommentObject, ObjectName};
use std::sync::Arc;

/// What kind of relation the statement named.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Table,
    View,
    Sequence,
    Index,
}

/// Runs `COMMENT ON ...`. An empty comment removes it, as NULL does (PostgreSQL).
pub(crate) fn comment_on(
    s: &mut Session,
    object_type: CommentObject,
    object_name: &ObjectName,
    comment: Option<String>,
    if_exists: bool,
) -> Result<QueryResult> {
    if if_exists {
        return Err(PgError::syntax("syntax error at or near \"IF\""));
    }
    let comment = comment.filter(|c| !c.is_empty());
    let marker = object_name.0.first().and_then(|p| p.as_ident()).filter(|i| i.quote_style.is_some()).map(|i| i.value.as_str());
    match object_type {
        CommentObject::Table => {
            let (kind, name) = match marker.and_then(|m| m.strip_prefix(COMMENT_KIND_MARKER)) {
                Some("index") => (Kind::Index, ObjectName(object_name.0[1..].to_vec())),
                Some("view") => (Kind::View, ObjectName(object_name.0[1..].to_vec())),
                Some("sequence") => (Kind::Sequence, ObjectName(object_name.0[1..].to_vec())),
                _ => (Kind::Table, object_name.clone()),
            };
            if kind == Kind::Index {
                return comment_on_index(s, &name, comment);
            }
            let what = match kind {
                Kind::Table => "a table",
                Kind::View => "a view",
                _ => "a sequence",
            };
            let not = |n: &str| PgError::new("42809", format!("\"{n}\" is not {what}"));
            let table = relation(s, &name, &not)?;
            let ok = match kind {
                Kind::Table => table.is_table(),
                Kind::View => matches!(table.kind, RelKind::View(_)),
                _ => table.sequence().is_some(),
            };
            if !ok {
                return Err(not(&table.name));
            }
            s.lock_table(&table, LockMode::ShareUpdateExclusive)?;
            let table = relation_by_key(s, &table.key())?;
            let mut new = (*table).clone();
            new.comment = comment;
            s.xid();
            super::index::replace_table(s, &table, new);
        }
        CommentObject::Column => {
            let n = object_name.0.len();
            if n < 2 {
                return Err(PgError::syntax("column name must be qualified"));
            }
            let not_for_index = |n: &str| {
                PgError::new("42809", format!("cannot set comment on relation \"{n}\""))
                    .with_detail("This operation is not supported for indexes.")
            };
            let table = relation(s, &ObjectName(object_name.0[..n - 1].to_vec()), &not_for_index)?;
            if table.sequence().is_some() {
                return Err(PgError::new("42809", format!("cannot set comment on relation \"{}\"", table.name))
                    .with_detail("This operation is not supported for sequences."));
            }
            s.lock_table(&table, LockMode::ShareUpdateExclusive)?;
            let table = relation_by_key(s, &table.key())?;
            let col = object_name.0[n - 1].as_ident().map(fold_ident).ok_or_else(|| PgError::syntax("a column name is wanted"))?;
            let Some(c) = table.column_index(&col) else {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{col}\" of relation \"{}\" does not exist", table.name),
                ));
            };
            let mut new = (*table).clone();
            new.columns[c].comment = comment;
            s.xid();
            super::index::replace_table(s, &table, new);
        }
        other => {
            return Err(PgError::feature(format!("COMMENT ON {other} is not supported by heapstore")));
        }
    }
    Ok(super::tag("COMMENT"))
}

/// The relation `name` names, as this transaction sees the catalog: 42P01 if none; for an
/// index (which the statement's kind does not name), the error `index_err` makes of its name.
fn relation(s: &Session, name: &ObjectName, index_err: &dyn Fn(&str) -> PgError) -> Result<Arc<Table>> {
    let key = crate::catalog::relation_key(name)?;
    if let Some(t) = s.lookup_table(&key) {
        return Ok(t);
    }
    if let Some((_, ix)) = index_owner(s, name)? {
        return Err(index_err(&ix));
    }
    Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", crate::catalog::key_display(&key))))
}

/// The table owning the index `name` names (its schema, if written, decides where: the
/// session's temporary tables, or public; else the temporary ones first, as the search path
/// has them), and the index's name.
fn index_owner(s: &Session, name: &ObjectName) -> Result<Option<(Arc<Table>, String)>> {
    use crate::catalog::{split_key, Schema};
    let key = crate::catalog::relation_key(name)?;
    let (schema, ix) = split_key(&key);
    let tables = s.visible_tables();
    let owns = |t: &&Arc<Table>, temp: bool| t.is_temp() == temp && t.indexes.iter().any(|i| i.name == ix);
    let found = match schema {
        Some(Schema::Temp) => tables.iter().find(|t| owns(t, true)),
        Some(Schema::Public) => tables.iter().find(|t| owns(t, false)),
        None => tables.iter().find(|t| owns(t, true)).or_else(|| tables.iter().find(|t| owns(t, false))),
    };
    Ok(found.map(|t| (t.clone(), ix.to_string())))
}

/// The relation under `key` as this transaction sees the catalog now (after a lock wait).
fn relation_by_key(s: &Session, key: &str) -> Result<Arc<Table>> {
    s.lookup_table(key).ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, "the relation was dropped while COMMENT waited for it"))
}

/// `COMMENT ON INDEX name`: the index is part of its table's definition.
fn comment_on_index(s: &mut Session, name: &ObjectName, comment: Option<String>) -> Result<QueryResult> {
    let Some((table, ix_name)) = index_owner(s, name)? else {
        // A relation of that name that is not an index, or none.
        return match relation(s, name, &|n: &str| PgError::internal(format!("index \"{n}\" not found"))) {
            Ok(t) => Err(PgError::new("42809", format!("\"{}\" is not an index", t.name))),
            Err(e) => Err(e),
        };
    };
    s.lock_table(&table, LockMode::ShareUpdateExclusive)?;
    let table = relation_by_key(s, &table.key())?;
    let mut new = (*table).clone();
    let Some(ix) = new.indexes.iter_mut().find(|i| i.name == ix_name) else {
        return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{ix_name}\" does not exist")));
    };
    ix.comment = comment;
    s.xid();
    super::index::replace_table(s, &table, new);
    Ok(super::tag("COMMENT"))
}

/// Every comment the session sees, as `pg_description` rows: (object oid, objsubid, text).
/// Relations and indexes have objsubid 0, a column its attribute number.
pub(crate) fn descriptions(s: &Session) -> Vec<(u32, i32, String)> {
    let mut out = Vec::new();
    for t in s.visible_tables() {
        if let Some(c) = &t.comment {
            out.push((t.oid, 0, c.clone()));
        }
        for (i, col) in t.columns.iter().enumerate() {
            if let Some(c) = &col.comment {
                out.push((t.oid, i as i32 + 1, c.clone()));
            }
        }
        for ix in &t.indexes {
            if let Some(c) = &ix.comment {
                out.push((ix.oid, 0, c.clone()));
            }
        }
    }
    out
}

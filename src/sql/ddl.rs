//! CREATE TABLE, DROP TABLE, TRUNCATE: transactional through the session's pending changes
//! (see `catalog`).

use super::tag;
use crate::catalog::{fold_ident, Column, Persistence, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use crate::types::SqlType;
use sqlparser::ast::{ColumnOption, CreateTable, ObjectName, ObjectType, TruncateTableTarget};
use std::sync::Arc;

pub(crate) use crate::catalog::table_name;

/// Resolves a type as sqlparser prints it (`VARCHAR(16)`, `DOUBLE PRECISION`, ...).
pub(crate) fn sql_type(dt: &sqlparser::ast::DataType) -> Result<SqlType> {
    let mut text = dt.to_string();
    // `pg_catalog.int4`, `"pg_catalog"."int4"`, `"int4"`: the built-in types live in
    // pg_catalog; a quoted name is that name exactly (`"char"` stays the one-byte type).
    for prefix in ["\"pg_catalog\".", "pg_catalog."] {
        if text.len() > prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix) {
            text = text[prefix.len()..].to_string();
        }
    }
    if text.len() > 2 && text.starts_with('"') && text.ends_with('"') && text != "\"char\"" && !text[1..text.len() - 1].contains('"') {
        text = text[1..text.len() - 1].to_string();
    }
    let (name, args) = match text.find('(') {
        Some(i) => {
            let inner = text[i + 1..].trim_end_matches([')', ' ']);
            let rest_after = text[i..].find(')').map(|j| text[i + j + 1..].trim().to_string()).unwrap_or_default();
            let args: Vec<i64> = inner
                .split(',')
                .map(|a| a.trim().parse::<i64>().map_err(|_| PgError::syntax(format!("invalid type modifier in \"{text}\""))))
                .collect::<Result<_>>()?;
            let name = format!("{} {}", text[..i].trim(), rest_after).trim().to_string();
            (name, args)
        }
        None => (text.clone(), Vec::new()),
    };
    SqlType::from_name(&name.to_lowercase(), &args)
}

pub fn create_table(s: &mut Session, ct: CreateTable, unlogged: bool) -> Result<QueryResult> {
    let name = table_name(&ct.name)?;
    if ct.like.is_some() || ct.clone.is_some() {
        return Err(PgError::feature("CREATE TABLE LIKE / CLONE is not supported"));
    }
    if ct.query.is_some() && (!ct.columns.is_empty() || !ct.constraints.is_empty()) {
        return Err(PgError::feature("a column list in CREATE TABLE AS is not supported by heapstore yet"));
    }
    if ct.temporary {
        return Err(PgError::feature("temporary tables are not supported yet"));
    }
    if s.lookup_table(&name).is_some() {
        if ct.if_not_exists {
            let mut r = tag("CREATE TABLE");
            r.notices.push(format!("NOTICE:  relation \"{name}\" already exists, skipping"));
            return Ok(r);
        }
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
    }
    // PRIMARY KEY / UNIQUE (column or table constraints): (columns, primary, name).
    let mut keys: Vec<(Vec<String>, bool, Option<String>)> = Vec::new();
    for c in &ct.constraints {
        match c {
            sqlparser::ast::TableConstraint::PrimaryKey { name, columns, .. } => {
                keys.push((columns.iter().map(|c| c.column.expr.to_string().to_lowercase()).collect(), true, name.as_ref().map(fold_ident)))
            }
            sqlparser::ast::TableConstraint::Unique { name, columns, .. } => keys.push((
                columns.iter().map(|c| c.column.expr.to_string().to_lowercase()).collect(),
                false,
                name.as_ref().map(fold_ident),
            )),
            other => return Err(PgError::feature(format!("table constraint not supported yet: {other}"))),
        }
    }
    if ct.columns.len() > 1600 {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "tables can have at most 1600 columns"));
    }
    let mut columns: Vec<Column> = Vec::with_capacity(ct.columns.len());
    for c in &ct.columns {
        let cname = fold_ident(&c.name);
        if columns.iter().any(|x| x.name == cname) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{cname}\" specified more than once")));
        }
        let ty = sql_type(&c.data_type)?;
        if ty.id == crate::types::TypeId::Regclass {
            return Err(PgError::feature("columns of type regclass are not supported by heapstore (store the oid)"));
        }
        let mut not_null = false;
        for o in &c.options {
            match &o.option {
                ColumnOption::NotNull => not_null = true,
                ColumnOption::Null => not_null = false,
                ColumnOption::Unique { is_primary, .. } => {
                    not_null |= *is_primary;
                    keys.push((vec![cname.clone()], *is_primary, o.name.as_ref().map(fold_ident)));
                }
                other => return Err(PgError::feature(format!("column option not supported yet: {other}"))),
            }
        }
        columns.push(Column { name: cname, ty, not_null });
    }
    // CREATE TABLE AS: the query's columns (an untyped literal column is text).
    let source = match &ct.query {
        Some(q) => {
            let now = s.txn.as_ref().map(|t| t.start_us);
            let b = super::query::Planner::new(s, now).query(q, &[])?;
            for c in &b.columns {
                if columns.iter().any(|x| x.name == c.name) {
                    return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{}\" specified more than once", c.name)));
                }
                columns.push(Column { name: c.name.clone(), ty: c.ty, not_null: false });
            }
            Some(q)
        }
        None => None,
    };
    s.xid(); // DDL is logged (its catalog change rides on the commit), so it needs an xid
    let needs_toast = columns.iter().any(|c| c.ty.fixed_len().is_none());
    let relfile = s.create_files()?;
    let toast_relfile = if needs_toast { Some(s.create_files()?) } else { None };
    let t = Table {
        oid: s.shared.catalog.new_oid(),
        name,
        columns,
        relfile,
        toast_relfile,
        persistence: if unlogged { Persistence::Unlogged } else { Persistence::Permanent },
        indexes: Vec::new(),
    };
    let mut t = Arc::new(t);
    s.txn().creates.push(t.clone());
    for (cols, primary, name) in keys {
        t = super::index::add_constraint_index(s, &t, &cols, primary, name)?;
    }
    if let Some(q) = source {
        let cols: Vec<usize> = (0..t.columns.len()).collect();
        let r = super::dml::insert_select(s, &t, &cols, q, &[])?;
        // PostgreSQL tags CREATE TABLE AS with the rows it selected.
        return Ok(tag(&r.tag.replacen("INSERT 0", "SELECT", 1)));
    }
    Ok(tag("CREATE TABLE"))
}

pub fn drop_tables(s: &mut Session, object_type: ObjectType, if_exists: bool, names: Vec<ObjectName>) -> Result<QueryResult> {
    if object_type != ObjectType::Table {
        return Err(PgError::feature(format!("DROP {object_type} is not supported")));
    }
    let mut r = tag("DROP TABLE");
    for n in &names {
        let name = table_name(n)?;
        let Some(t) = s.lookup_table(&name) else {
            if if_exists {
                r.notices.push(format!("NOTICE:  table \"{name}\" does not exist, skipping"));
                continue;
            }
            return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("table \"{name}\" does not exist")));
        };
        s.lock_table(&t, LockMode::AccessExclusive)?;
        s.xid();
        let txn = s.txn();
        txn.dead_files.extend(std::iter::once(t.relfile).chain(t.toast_relfile).chain(t.indexes.iter().map(|i| i.relfile)));
        if let Some(i) = txn.creates.iter().position(|c| c.name == name) {
            txn.creates.remove(i);
            continue;
        }
        let original = match txn.replaces.iter().position(|(nw, _)| nw.name == name) {
            Some(i) => txn.replaces.remove(i).1,
            None => t.clone(),
        };
        txn.drops.push(original);
    }
    Ok(r)
}

pub fn truncate(s: &mut Session, targets: Vec<TruncateTableTarget>) -> Result<QueryResult> {
    for target in &targets {
        let name = table_name(&target.name)?;
        let t = s.table(&name)?;
        s.lock_table(&t, LockMode::AccessExclusive)?;
        s.xid();
        let relfile = s.create_files()?;
        let toast_relfile = if t.toast_relfile.is_some() { Some(s.create_files()?) } else { None };
        let mut new = Table { relfile, toast_relfile, ..(*t).clone() };
        super::index::truncate_indexes(s, &mut new)?;
        let new = Arc::new(new);
        s.count_changes(t.oid, |p| p.truncated = true);
        let txn = s.txn();
        txn.dead_files.extend(std::iter::once(t.relfile).chain(t.toast_relfile));
        if let Some(c) = txn.creates.iter_mut().find(|c| c.name == name) {
            *c = new;
        } else if let Some(rp) = txn.replaces.iter_mut().find(|(nw, _)| nw.name == name) {
            rp.0 = new;
        } else {
            txn.replaces.push((new, t));
        }
    }
    Ok(tag("TRUNCATE TABLE"))
}

/// `ALTER TABLE [IF EXISTS] [ONLY] t ADD [CONSTRAINT name] PRIMARY KEY (cols) | UNIQUE (cols)
/// [, ...]`: each builds its index (checking existing rows: uniqueness, and NOT NULL for a
/// primary key, whose columns become NOT NULL), under an ACCESS EXCLUSIVE lock as in PostgreSQL.
/// Every other ALTER TABLE action is refused (0A000).
pub fn alter_table(
    s: &mut Session,
    name: &ObjectName,
    if_exists: bool,
    operations: &[sqlparser::ast::AlterTableOperation],
) -> Result<QueryResult> {
    use sqlparser::ast::{AlterTableOperation, TableConstraint};
    let tname = table_name(name)?;
    let Some(t) = s.lookup_table(&tname) else {
        if if_exists {
            let mut r = tag("ALTER TABLE");
            r.notices.push(format!("NOTICE:  relation \"{tname}\" does not exist, skipping"));
            return Ok(r);
        }
        return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{tname}\" does not exist")));
    };
    // Refuse before doing anything: an ALTER TABLE is all-or-nothing.
    for op in operations {
        match op {
            AlterTableOperation::AddConstraint {
                constraint: TableConstraint::PrimaryKey { .. } | TableConstraint::Unique { .. },
                not_valid: false,
            } => {}
            AlterTableOperation::AddConstraint { not_valid: true, .. } => {
                return Err(PgError::feature("ADD CONSTRAINT ... NOT VALID is not supported by heapstore"))
            }
            other => {
                return Err(PgError::feature(format!(
                    "ALTER TABLE action not supported yet: {}",
                    other.to_string().split_whitespace().take(3).collect::<Vec<_>>().join(" ")
                )))
            }
        }
    }
    s.lock_table(&t, LockMode::AccessExclusive)?;
    let mut t = s.table(&tname)?;
    for op in operations {
        let AlterTableOperation::AddConstraint { constraint, .. } = op else { unreachable!("checked above") };
        super::check::table_constraint(constraint)?;
        let (cname, columns, primary) = match constraint {
            TableConstraint::PrimaryKey { name, columns, .. } => (name, columns, true),
            TableConstraint::Unique { name, columns, .. } => (name, columns, false),
            _ => unreachable!("checked above"),
        };
        let cols: Vec<String> = columns.iter().map(|c| c.column.expr.to_string().to_lowercase()).collect();
        t = super::index::add_constraint_index(s, &t, &cols, primary, cname.as_ref().map(fold_ident))?;
    }
    Ok(tag("ALTER TABLE"))
}

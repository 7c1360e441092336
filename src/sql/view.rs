//! Views: `CREATE [OR REPLACE] VIEW name [(columns)] AS query` and `DROP VIEW`. A view is a
//! catalog entry holding its query as SQL text and its output columns; wherever a query
//! names it, the planner plans that text as a subquery in the FROM clause (`sql::query`), so a
//! view always reads its tables as the statement's snapshot sees them.
//!
//! Invariants:
//! 1. A view's columns (names and types) are fixed when it is created; OR REPLACE may only add
//!    columns at the end, as PostgreSQL.
//! 2. The relations a view reads are recorded (`ViewDef::deps`), and none of them can be
//!    dropped while the view exists (2BP01), so a view never names a missing relation. (DROP
//!    ... CASCADE, which would drop the view too, is refused.)
//! 3. A view has no files. Row statements on a view are refused (0A000): PostgreSQL's
//!    automatically updatable views are not implemented.

use crate::catalog::{fold_ident, Column, RelKind, Table, ViewDef};
use crate::error::{sqlstate, PgError, Result};
use crate::session::{QueryResult, Session};
use std::sync::Arc;

/// Parses a stored view query.
pub(crate) fn parse_query(text: &str) -> Result<sqlparser::ast::Query> {
    let st = super::internal_statements(text)?;
    match st.into_iter().next() {
        Some(sqlparser::ast::Statement::Query(q)) => Ok(*q),
        _ => Err(PgError::internal(format!("a view's stored query does not parse as a query: {text}"))),
    }
}

/// `CREATE [OR REPLACE] VIEW name [(columns)] AS query`.
pub fn create_view(
    s: &mut Session,
    or_replace: bool,
    name: &sqlparser::ast::ObjectName,
    columns: &[sqlparser::ast::ViewColumnDef],
    query: &sqlparser::ast::Query,
) -> Result<QueryResult> {
    let (schema, name) = crate::catalog::qualified_name(name)?;
    if schema == Some(crate::catalog::Schema::Temp) {
        return Err(PgError::feature("temporary views are not supported by heapstore"));
    }
    super::check::query(query)?;
    let now = s.txn.as_ref().map(|t| t.start_us);
    let planner = super::query::Planner::new(s, now);
    let b = crate::types::tz::check_stored_definition("a view", || planner.query(query, &[]))?;
    let mut deps = Vec::new();
    let mut tables = Vec::new();
    b.node.tables(&mut tables);
    if let Some(t) = tables.iter().find(|t| t.is_temp()) {
        // PostgreSQL makes such a view temporary itself; heapstore has no temporary views.
        return Err(PgError::feature(format!("a view reading temporary table \"{}\" is not supported by heapstore", t.name))
            .with_detail("PostgreSQL would make the view temporary; heapstore has no temporary views."));
    }
    deps.extend(tables.iter().map(|t| t.oid));
    deps.extend(planner.views_used());
    deps.sort_unstable();
    deps.dedup();
    if columns.len() > b.columns.len() {
        return Err(PgError::syntax("CREATE VIEW specifies more column names than columns"));
    }
    let mut cols: Vec<Column> = Vec::with_capacity(b.columns.len());
    for (k, oc) in b.columns.iter().enumerate() {
        if columns.get(k).is_some_and(|c| c.data_type.is_some() || c.options.is_some()) {
            return Err(PgError::feature("column types or options in CREATE VIEW are not supported"));
        }
        let cname = columns.get(k).map(|c| fold_ident(&c.name)).unwrap_or_else(|| oc.name.clone());
        super::ddl::storable(&cname, &oc.ty)?;
        if cols.iter().any(|c| c.name == cname) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{cname}\" specified more than once")));
        }
        cols.push(Column::new(cname, oc.ty, false));
    }
    let existing = s.lookup_table(&format!("\0public\0{name}"));
    super::ddl::check_temp_name(s, &name, false)?;
    if let Some(old) = &existing {
        if !or_replace || !matches!(old.kind, RelKind::View(_)) {
            return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
        }
        if cols.len() < old.columns.len() {
            return Err(PgError::new("42P16", "cannot drop columns from view"));
        }
        for (o, n) in old.columns.iter().zip(&cols) {
            if o.name != n.name {
                return Err(PgError::new("42P16", format!("cannot change name of view column \"{}\" to \"{}\"", o.name, n.name))
                    .with_hint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."));
            }
            if o.ty != n.ty {
                return Err(PgError::new(
                    "42P16",
                    format!("cannot change data type of view column \"{}\" from {} to {}", o.name, o.ty.name(), n.ty.name()),
                ));
            }
        }
    }
    let def = ViewDef { query: query.to_string(), deps };
    s.xid();
    match existing {
        Some(old) => {
            s.lock_table(&old, crate::lock::LockMode::AccessExclusive)?;
            // The columns kept keep their comments, as in PostgreSQL.
            let mut cols = cols;
            for (c, o) in cols.iter_mut().zip(&old.columns) {
                c.comment = o.comment.clone();
            }
            let new = Arc::new(Table { columns: cols, kind: RelKind::View(def), ..(*old).clone() });
            let txn = s.txn();
            if let Some(c) = txn.creates.iter_mut().find(|c| c.oid == new.oid) {
                *c = new;
            } else if let Some(rp) = txn.replaces.iter_mut().find(|(nw, _)| nw.oid == new.oid) {
                rp.0 = new;
            } else {
                txn.replaces.push((new, old));
            }
        }
        None => {
            let t = Arc::new(Table {
                oid: s.shared.catalog.new_oid(),
                name,
                columns: cols,
                relfile: crate::storage::RelFileNumber(0),
                toast_relfile: None,
                persistence: crate::catalog::Persistence::Permanent,
                indexes: Vec::new(),
                kind: RelKind::View(def),
                checks: Vec::new(),
                foreign_keys: Vec::new(),
                comment: None,
            });
            s.txn().creates.push(t);
        }
    }
    Ok(super::tag("CREATE VIEW"))
}

/// Invariant 2: refuses to drop `t` while a view reads it.
pub(crate) fn check_no_dependent_views(s: &Session, t: &Table, cascade: bool) -> Result<()> {
    let all = s.visible_tables();
    let Some(v) = all.iter().find(|v| matches!(&v.kind, RelKind::View(d) if d.deps.contains(&t.oid)) && v.oid != t.oid) else {
        return Ok(());
    };
    if cascade {
        return Err(PgError::feature("DROP ... CASCADE of a relation a view reads is not supported by heapstore (drop the view first)"));
    }
    Err(PgError::new("2BP01", format!("cannot drop {} {} because other objects depend on it", t.kind_name(), t.name))
        .with_detail(format!("view {} depends on {} {}", v.name, t.kind_name(), t.name))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."))
}

//! CREATE TABLE, ALTER TABLE, DROP TABLE, TRUNCATE: transactional through the session's pending changes
//! (see `catalog`).

use super::tag;
use crate::catalog::{fold_ident, Column, Persistence, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use crate::storage::RelFileNumber;
use crate::types::{SqlType, TypeId};
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
    // `integer[]`, `varchar(3)[]`, `int ARRAY`, `int[3]` (a declared size is ignored, as
    // PostgreSQL does): the element type's array.
    for (suffix, strip) in [("[]", 2usize), (" ARRAY", 6)] {
        if text.len() > strip && text[text.len() - strip..].eq_ignore_ascii_case(suffix) {
            let elem = sql_type_text(&text[..text.len() - strip])?;
            return crate::sql::array::array_type_of(elem);
        }
    }
    if text.ends_with(']') {
        if let Some(i) = text.rfind('[') {
            if text[i + 1..text.len() - 1].trim().bytes().all(|b| b.is_ascii_digit()) {
                let elem = sql_type_text(&text[..i])?;
                return crate::sql::array::array_type_of(elem);
            }
        }
    }
    sql_type_text(&text)
}

/// A scalar type name as text (`VARCHAR(16)`).
fn sql_type_text(text: &str) -> Result<SqlType> {
    let text = text.trim().to_string();
    let (name, args) = match text.find('(') {
        Some(i) => {
            // `NAME(args) REST`: `timestamp(3) with time zone` is `timestamp with time zone`
            // with modifier 3.
            let close = text[i..].find(')').map_or(text.len(), |j| i + j);
            let inner = &text[i + 1..close];
            let rest_after = text.get(close + 1..).map(|r| r.trim().to_string()).unwrap_or_default();
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

/// A PRIMARY KEY / UNIQUE constraint of CREATE TABLE: (key columns, INCLUDE columns, primary,
/// name).
type KeySpec = (Vec<String>, Vec<String>, bool, Option<String>);

/// CREATE TABLE's PRIMARY KEY / UNIQUE constraints as PostgreSQL builds their indexes: the
/// primary key first, then each constraint that would not build the same index (same keys in
/// the same order, same INCLUDE columns) as one before it; an unnamed one takes the name of a
/// named one it stands for.
fn merge_keys(keys: Vec<KeySpec>) -> Vec<KeySpec> {
    let (mut out, rest): (Vec<KeySpec>, Vec<KeySpec>) = keys.into_iter().partition(|k| k.2);
    for k in rest {
        match out.iter_mut().find(|o| o.0 == k.0 && o.1 == k.1) {
            Some(o) => {
                if o.3.is_none() {
                    o.3 = k.3;
                }
            }
            None => out.push(k),
        }
    }
    out
}

/// A PRIMARY KEY / UNIQUE table constraint's key columns and INCLUDE columns (the list
/// `dialect::rewrite_constraint_include` joined at its marker), folded as identifiers.
fn constraint_columns(columns: &[sqlparser::ast::IndexColumn]) -> (Vec<String>, Vec<String>) {
    let names: Vec<String> = columns
        .iter()
        .map(|c| match &c.column.expr {
            sqlparser::ast::Expr::Identifier(id) => fold_ident(id),
            other => other.to_string().to_lowercase(),
        })
        .collect();
    match names.iter().position(|n| n == super::dialect::INCLUDE_MARKER) {
        Some(k) => (names[..k].to_vec(), names[k + 1..].to_vec()),
        None => (names, Vec::new()),
    }
}

pub fn create_table(s: &mut Session, ct: CreateTable, unlogged: bool) -> Result<QueryResult> {
    let (schema, name) = crate::catalog::qualified_name(&ct.name)?;
    let mut notices = Vec::new();
    let temp = ct.temporary || schema == Some(crate::catalog::Schema::Temp);
    if ct.temporary && schema == Some(crate::catalog::Schema::Public) {
        return Err(PgError::new("42P16", "cannot create temporary relation in non-temporary schema"));
    }
    if unlogged && schema == Some(crate::catalog::Schema::Temp) {
        return Err(PgError::new("42P16", "only temporary relations may be created in temporary schemas"));
    }
    if ct.global == Some(true) {
        notices.push("WARNING:  GLOBAL is deprecated in temporary table creation".to_string());
    }
    if ct.on_commit.is_some() && !temp {
        return Err(PgError::new("42P16", "ON COMMIT can only be used on temporary tables"));
    }
    let on_commit = match ct.on_commit {
        None | Some(sqlparser::ast::OnCommit::PreserveRows) => crate::catalog::OnCommit::PreserveRows,
        Some(sqlparser::ast::OnCommit::DeleteRows) => crate::catalog::OnCommit::DeleteRows,
        Some(sqlparser::ast::OnCommit::Drop) => crate::catalog::OnCommit::Drop,
    };
    if ct.like.is_some() || ct.clone.is_some() {
        return Err(PgError::feature("CREATE TABLE LIKE / CLONE is not supported"));
    }
    if ct.query.is_some() && (!ct.columns.is_empty() || !ct.constraints.is_empty()) {
        return Err(PgError::feature("a column list in CREATE TABLE AS is not supported by heapstore yet"));
    }
    let key = if temp { format!("\0pg_temp\0{name}") } else { format!("\0public\0{name}") };
    if s.lookup_table(&key).is_some() {
        if ct.if_not_exists {
            let mut r = tag("CREATE TABLE");
            r.notices.push(format!("NOTICE:  relation \"{name}\" already exists, skipping"));
            return Ok(r);
        }
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
    }
    check_temp_name(s, &name, temp)?;
    // PRIMARY KEY / UNIQUE (column or table constraints).
    let mut keys: Vec<KeySpec> = Vec::new();
    // CHECK constraints: (name given, expression, the column it was written on).
    let mut checks: Vec<(Option<String>, sqlparser::ast::Expr, Option<String>)> = Vec::new();
    // FOREIGN KEY constraints, resolved once the table's own keys exist (it may reference
    // itself).
    let mut fks: Vec<super::fk::FkSpec> = Vec::new();
    for c in &ct.constraints {
        match c {
            sqlparser::ast::TableConstraint::PrimaryKey { name, columns, .. } => {
                let (cols, include) = constraint_columns(columns);
                keys.push((cols, include, true, name.as_ref().map(fold_ident)))
            }
            sqlparser::ast::TableConstraint::Unique { name, columns, .. } => {
                let (cols, include) = constraint_columns(columns);
                keys.push((cols, include, false, name.as_ref().map(fold_ident)))
            }
            sqlparser::ast::TableConstraint::Check { name, expr, enforced: None } => {
                checks.push((name.as_ref().map(fold_ident), (**expr).clone(), None))
            }
            c @ sqlparser::ast::TableConstraint::ForeignKey { .. } => fks.extend(super::fk::FkSpec::of_constraint(c)?),
            other => return Err(PgError::feature(format!("table constraint not supported yet: {other}"))),
        }
    }
    if ct.columns.len() > 1600 {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "tables can have at most 1600 columns"));
    }
    let mut columns: Vec<Column> = Vec::with_capacity(ct.columns.len());
    // Columns that own a sequence: (column, sequence type, options).
    let mut owned: Vec<(usize, SqlType, Vec<sqlparser::ast::SequenceOptions>)> = Vec::new();
    let now = s.txn.as_ref().map_or(0, |t| t.start_us);
    for c in &ct.columns {
        let spec = column_def(&name, c, now, s)?;
        permanent_default(s, temp, &spec.col)?;
        if columns.iter().any(|x| x.name == spec.col.name) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{}\" specified more than once", spec.col.name)));
        }
        keys.extend(spec.keys.into_iter().map(|(cols, primary, name)| (cols, Vec::new(), primary, name)));
        fks.extend(spec.fks);
        checks.extend(spec.checks);
        if let Some((ty, options)) = spec.owned {
            owned.push((columns.len(), ty, options));
        }
        columns.push(spec.col);
    }
    // CREATE TABLE AS: the query's columns (an untyped literal column is text).
    let source = match &ct.query {
        Some(q) => {
            let now = s.txn.as_ref().map(|t| t.start_us);
            let b = super::query::Planner::new(s, now).query(q, &[])?;
            if s.c_collate.get() {
                // PostgreSQL gives a column the collation of its query's output; heapstore's
                // columns have only the default one.
                return Err(PgError::feature("CREATE TABLE AS of a query with a COLLATE clause is not supported by heapstore"));
            }
            for c in &b.columns {
                storable(&c.name, &c.ty)?;
                if columns.iter().any(|x| x.name == c.name) {
                    return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{}\" specified more than once", c.name)));
                }
                columns.push(Column::new(c.name.clone(), c.ty, false));
            }
            Some(q)
        }
        None => None,
    };
    s.xid(); // DDL is logged (its catalog change rides on the commit), so it needs an xid
    let needs_toast = columns.iter().any(|c| c.ty.fixed_len().is_none());
    let relfile = s.create_files()?;
    let toast_relfile = if needs_toast { Some(s.create_files()?) } else { None };
    let oid = s.shared.catalog.new_oid();
    // serial and identity columns: their sequences `<table>_<column>_seq`, owned by them.
    for (c, ty, options) in &owned {
        let cname = columns[*c].name.clone();
        let seq_name = choose_sequence_name(s, &name, &cname);
        let def = super::sequence::sequence_def(*ty, options, Some((oid, cname)))?;
        super::sequence::make_sequence(s, &seq_name, def, temp)?;
        if columns[*c].identity.is_none() {
            columns[*c].default = Some(format!("nextval('{}'::regclass)", seq_name.replace('\'', "''")));
        }
    }
    let t = Table {
        oid,
        name,
        columns,
        relfile,
        toast_relfile,
        persistence: if temp {
            Persistence::Temporary
        } else if unlogged {
            Persistence::Unlogged
        } else {
            Persistence::Permanent
        },
        indexes: Vec::new(),
        kind: crate::catalog::RelKind::Table,
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        comment: None,
    };
    let t = Table { checks: bind_checks(s, &t, checks)?, ..t };
    let mut t = Arc::new(t);
    s.txn().creates.push(t.clone());
    if temp {
        s.temp_namespace();
        s.set_on_commit(t.oid, on_commit);
    }
    for (cols, include, primary, name) in merge_keys(keys) {
        t = super::index::add_constraint_index(s, &t, &cols, &include, primary, name)?;
    }
    if !fks.is_empty() {
        let mut def = (*t).clone();
        for spec in fks {
            let fk = super::fk::define(s, &def, spec, &|n| constraint_name_taken(&def, n))?;
            def.foreign_keys.push(fk);
        }
        t = install(s, &t, def);
    }
    if let Some(q) = source {
        let cols: Vec<usize> = (0..t.columns.len()).collect();
        let r = super::dml::insert_select(s, &t, &cols, q, &[], None, None)?;
        // PostgreSQL tags CREATE TABLE AS with the rows it selected.
        let mut r = tag(&r.tag.replacen("INSERT 0", "SELECT", 1));
        r.notices = notices;
        return Ok(r);
    }
    let mut r = tag("CREATE TABLE");
    r.notices = notices;
    Ok(r)
}

/// A session never has a temporary and a permanent relation of the same name (`Session`'s
/// invariant 11): PostgreSQL allows it (the temporary one hides the other), heapstore refuses
/// it with 0A000 rather than keep two relations under one name in a transaction's pending
/// catalog changes.
pub(crate) fn check_temp_name(s: &Session, name: &str, temp: bool) -> Result<()> {
    let other = if temp { format!("\0public\0{name}") } else { format!("\0pg_temp\0{name}") };
    if s.lookup_table(&other).is_some() {
        let (what, other) = if temp { ("temporary", "permanent") } else { ("permanent", "temporary") };
        return Err(PgError::feature(format!("cannot create {what} relation \"{name}\": a {other} relation of that name exists"))
            .with_detail("heapstore does not let a temporary relation hide a permanent one of the same name.")
            .with_hint("Choose another name."));
    }
    Ok(())
}

/// One column of a CREATE TABLE or ALTER TABLE ... ADD COLUMN, with what it brings along.
struct ColumnSpec {
    col: Column,
    /// PRIMARY KEY / UNIQUE written on the column: (columns, primary, name).
    keys: Vec<(Vec<String>, bool, Option<String>)>,
    /// CHECK constraints written on the column: (name, expression, column).
    checks: Vec<(Option<String>, sqlparser::ast::Expr, Option<String>)>,
    /// `serial` or identity: the type and options of the sequence the column owns.
    owned: Option<(SqlType, Vec<sqlparser::ast::SequenceOptions>)>,
    /// REFERENCES written on the column.
    fks: Vec<super::fk::FkSpec>,
}

/// Whether table `t` has a constraint called `n`.
fn constraint_name_taken(t: &Table, n: &str) -> bool {
    t.checks.iter().any(|c| c.name == n)
        || t.indexes.iter().any(|i| i.constraint && i.name == n)
        || t.foreign_keys.iter().any(|f| f.name == n)
}

/// Reads a column definition of table `name` (type, NOT NULL, DEFAULT, CHECK, PRIMARY KEY /
/// UNIQUE, `serial`, identity), checking it as PostgreSQL does.
fn column_def(name: &str, c: &sqlparser::ast::ColumnDef, now: i64, s: &Session) -> Result<ColumnSpec> {
    let mut spec_keys = Vec::new();
    let mut spec_checks = Vec::new();
    let mut spec_fks = Vec::new();
    let mut owned = None;
    let cname = fold_ident(&c.name);
    let serial = match c.data_type.to_string().to_lowercase().as_str() {
        "serial" | "serial4" => Some(crate::types::TypeId::Int4),
        "bigserial" | "serial8" => Some(crate::types::TypeId::Int8),
        "smallserial" | "serial2" => Some(crate::types::TypeId::Int2),
        _ => None,
    };
    let ty = match serial {
        Some(id) => SqlType::new(id),
        None => sql_type(&c.data_type)?,
    };
    if ty.id == crate::types::TypeId::Regclass {
        return Err(PgError::feature("columns of type regclass are not supported by heapstore (store the oid)"));
    }
    storable(&cname, &ty)?;
    let mut col = Column::new(cname.clone(), ty, serial.is_some());
    let mut default: Option<&sqlparser::ast::Expr> = None;
    let mut seq_options = Vec::new();
    for o in &c.options {
        match &o.option {
            ColumnOption::NotNull => col.not_null = true,
            ColumnOption::Null => col.not_null = false,
            ColumnOption::Unique { is_primary, characteristics: None } => {
                col.not_null |= *is_primary;
                spec_keys.push((vec![cname.clone()], *is_primary, o.name.as_ref().map(fold_ident)));
            }
            ColumnOption::Default(e) => {
                if default.is_some() || serial.is_some() {
                    return Err(PgError::syntax(format!("multiple default values specified for column \"{cname}\" of table \"{name}\"")));
                }
                default = Some(e);
            }
            ColumnOption::Check(e) => spec_checks.push((o.name.as_ref().map(fold_ident), e.clone(), Some(cname.clone()))),
            ColumnOption::Generated {
                generated_as: g @ (sqlparser::ast::GeneratedAs::Always | sqlparser::ast::GeneratedAs::ByDefault),
                sequence_options,
                generation_expr: None,
                generation_expr_mode: None,
                generated_keyword: true,
            } => {
                if col.identity.is_some() {
                    return Err(PgError::syntax(format!("multiple identity specifications for column \"{cname}\" of table \"{name}\"")));
                }
                col.identity = Some(if matches!(g, sqlparser::ast::GeneratedAs::Always) {
                    crate::catalog::Identity::Always
                } else {
                    crate::catalog::Identity::ByDefault
                });
                col.not_null = true;
                seq_options = sequence_options.clone().unwrap_or_default();
            }
            ColumnOption::Generated { .. } => {
                return Err(PgError::feature("generated columns (GENERATED ALWAYS AS (expr) STORED) are not supported by heapstore"))
            }
            ColumnOption::ForeignKey { foreign_table, referred_columns, on_delete, on_update, characteristics } => {
                spec_fks.push(super::fk::FkSpec::of_column(
                    &cname,
                    o.name.as_ref().map(fold_ident),
                    foreign_table,
                    referred_columns,
                    *on_delete,
                    *on_update,
                    *characteristics,
                )?)
            }
            other => return Err(PgError::feature(format!("column option not supported yet: {other}"))),
        }
    }
    if col.identity.is_some() {
        if default.is_some() || serial.is_some() {
            return Err(PgError::syntax(format!("both default and identity specified for column \"{cname}\" of table \"{name}\"")));
        }
        if !matches!(ty.id, crate::types::TypeId::Int2 | crate::types::TypeId::Int4 | crate::types::TypeId::Int8) {
            return Err(PgError::new("22023", "identity column type must be smallint, integer, or bigint"));
        }
        owned = Some((ty, seq_options));
    } else if serial.is_some() {
        owned = Some((ty, Vec::new()));
    }
    if let Some(e) = default {
        let mut refs = false;
        let _ = sqlparser::ast::visit_expressions(e, |x| {
            refs |= matches!(x, sqlparser::ast::Expr::Identifier(_) | sqlparser::ast::Expr::CompoundIdentifier(_))
                && !super::dml::is_default_keyword(x)
                && !super::expr::is_keyword_function(x);
            refs |= matches!(
                x,
                sqlparser::ast::Expr::Subquery(_) | sqlparser::ast::Expr::Exists { .. } | sqlparser::ast::Expr::InSubquery { .. }
            );
            std::ops::ControlFlow::<()>::Continue(())
        });
        if refs {
            return Err(PgError::feature("cannot use column reference or subquery in DEFAULT expression"));
        }
        crate::types::tz::check_stored_definition("a DEFAULT", || super::dml::bind_default(e, &col, now, Some(s)))?;
        // `DEFAULT NULL` is no default at all, as PostgreSQL stores it.
        if !matches!(e, sqlparser::ast::Expr::Value(v) if matches!(v.value, sqlparser::ast::Value::Null)) {
            col.default = Some(deparse_default(e, ty));
        }
    }
    Ok(ColumnSpec { col, keys: spec_keys, checks: spec_checks, owned, fks: spec_fks })
}

/// `DROP TABLE | SEQUENCE | VIEW [IF EXISTS] names [CASCADE | RESTRICT]`. Dropping a table
/// drops the sequences its columns own (`serial`, identity); a sequence a column owns cannot
/// be dropped alone (2BP01), and CASCADE is refused where it would drop more.
pub fn drop_tables(
    s: &mut Session,
    object_type: ObjectType,
    if_exists: bool,
    names: Vec<ObjectName>,
    cascade: bool,
) -> Result<QueryResult> {
    let kind = match object_type {
        ObjectType::Table => "table",
        ObjectType::Sequence => "sequence",
        ObjectType::View => "view",
        other => return Err(PgError::feature(format!("DROP {other} is not supported"))),
    };
    let mut r = tag(&format!("DROP {}", kind.to_uppercase()));
    for n in &names {
        let name = table_name(n)?;
        let Some(t) = s.lookup_table(&crate::catalog::relation_key(n)?) else {
            let name = crate::catalog::key_display(&crate::catalog::relation_key(n)?);
            if if_exists {
                r.notices.push(format!("NOTICE:  {kind} \"{name}\" does not exist, skipping"));
                continue;
            }
            return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("{kind} \"{name}\" does not exist")));
        };
        // Locked first, then read again: what changed while the lock was waited for (a
        // foreign key added, the table rewritten) is seen.
        let t = s.lock_table_current(&t, LockMode::AccessExclusive)?;
        s.check_not_in_use(&t, &format!("DROP {}", t.kind_name().to_uppercase()))?;
        if t.kind_name() != kind {
            return Err(PgError::new("42809", format!("\"{name}\" is not a {kind}")).with_hint(format!(
                "Use DROP {} to remove a {}.",
                t.kind_name().to_uppercase(),
                t.kind_name()
            )));
        }
        if let Some((owner, col)) = t.sequence().and_then(|d| d.owned_by.clone()) {
            if let Some(ot) = s.visible_tables().into_iter().find(|x| x.oid == owner) {
                let uses = ot.columns.iter().any(|c| c.name == col && (c.identity.is_some() || c.default.is_some()));
                if uses && !names.iter().any(|m| table_name(m).is_ok_and(|m| m == ot.name)) {
                    let e = PgError::new("2BP01", format!("cannot drop sequence {name} because other objects depend on it"))
                        .with_detail(format!("default value for column {col} of table {} depends on sequence {name}", ot.name));
                    return Err(if cascade {
                        PgError::feature("DROP SEQUENCE ... CASCADE of a sequence a column uses is not supported by heapstore")
                    } else {
                        e.with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
                    });
                }
            }
        }
        if t.sequence().is_none() && !names.iter().any(|m| table_name(m).is_ok_and(|m| m != name && dependent_view(s, &t, &m))) {
            super::view::check_no_dependent_views(s, &t, cascade)?;
        }
        if t.is_table() {
            let also: Vec<String> = names.iter().filter_map(|m| table_name(m).ok()).collect();
            super::fk::check_not_referenced(s, &t, &also, false)?;
        }
        let owned = if t.is_table() { super::sequence::owned_sequences(s, &t) } else { Vec::new() };
        for x in std::iter::once(t).chain(owned) {
            drop_relation(s, x)?;
        }
    }
    Ok(r)
}

/// Whether `view` (a name the same DROP drops) is a view reading `t`.
fn dependent_view(s: &Session, t: &Table, view: &str) -> bool {
    s.lookup_table(view).is_some_and(|v| matches!(&v.kind, crate::catalog::RelKind::View(d) if d.deps.contains(&t.oid)))
}

/// Drops a table and the sequences its columns own in this transaction (`ON COMMIT DROP`,
/// `DISCARD TEMP`).
pub(crate) fn drop_with_owned(s: &mut Session, t: Arc<Table>) -> Result<()> {
    let owned = if t.is_table() { super::sequence::owned_sequences(s, &t) } else { Vec::new() };
    for x in std::iter::once(t).chain(owned) {
        drop_relation(s, x)?;
    }
    Ok(())
}

/// Drops one relation in this transaction (its files are deleted at commit).
fn drop_relation(s: &mut Session, t: Arc<Table>) -> Result<()> {
    s.lock_table(&t, LockMode::AccessExclusive)?;
    s.xid();
    let txn = s.txn();
    let files = |t: &Table| -> Vec<RelFileNumber> { t.files() };
    // Created (or renamed: its old name is already in `drops`) in this transaction.
    if let Some(i) = txn.creates.iter().position(|c| c.oid == t.oid) {
        txn.dead_files.extend(files(&t));
        txn.creates.remove(i);
        return Ok(());
    }
    if txn.drops.iter().any(|d| d.oid == t.oid) {
        return Ok(());
    }
    txn.dead_files.extend(files(&t));
    let original = match txn.replaces.iter().position(|(nw, _)| nw.oid == t.oid) {
        Some(i) => txn.replaces.remove(i).1,
        None => t.clone(),
    };
    txn.drops.push(original);
    Ok(())
}

pub fn truncate(s: &mut Session, targets: Vec<TruncateTableTarget>) -> Result<QueryResult> {
    let keys: Vec<String> = targets.iter().map(|t| crate::catalog::relation_key(&t.name)).collect::<Result<_>>()?;
    let names: Vec<String> = targets.iter().map(|t| table_name(&t.name)).collect::<Result<_>>()?;
    let mut tables = Vec::new();
    for key in &keys {
        let t = s.table(key)?;
        let t = s.lock_table_current(&t, LockMode::AccessExclusive)?;
        s.check_not_in_use(&t, "TRUNCATE")?;
        super::fk::check_not_referenced(s, &t, &names, true)?;
        tables.push(t);
    }
    for t in tables {
        let t = s.lookup_table(&format!("{}{}", if t.is_temp() { "\0pg_temp\0" } else { "\0public\0" }, t.name)).unwrap_or(t);
        truncate_relation(s, &t)?;
    }
    Ok(tag("TRUNCATE TABLE"))
}

/// Gives table `t` new, empty files in this transaction (TRUNCATE, `ON COMMIT DELETE ROWS`);
/// the old ones are deleted at commit.
pub(crate) fn truncate_relation(s: &mut Session, t: &Arc<Table>) -> Result<()> {
    s.xid();
    let relfile = s.create_files()?;
    let toast_relfile = if t.toast_relfile.is_some() { Some(s.create_files()?) } else { None };
    let mut new = Table { relfile, toast_relfile, ..(**t).clone() };
    super::index::truncate_indexes(s, &mut new)?;
    let new = Arc::new(new);
    s.count_changes(t.oid, |p| p.truncated = true);
    let txn = s.txn();
    txn.dead_files.extend(std::iter::once(t.relfile).chain(t.toast_relfile));
    if let Some(c) = txn.creates.iter_mut().find(|c| c.oid == t.oid) {
        *c = new;
    } else if let Some(rp) = txn.replaces.iter_mut().find(|(nw, _)| nw.oid == t.oid) {
        rp.0 = new;
    } else {
        txn.replaces.push((new, t.clone()));
    }
    Ok(())
}

/// `ALTER TABLE [IF EXISTS] [ONLY] t action [, ...]`, under an ACCESS EXCLUSIVE lock as in
/// PostgreSQL, each action in order, all in the statement's transaction (so all or nothing):
///
/// - `ADD [COLUMN] [IF NOT EXISTS] col type [constraints]`: without a default, NOT NULL or
///   CHECK only the catalog changes (existing rows read the new column as NULL, their tuples
///   having fewer attributes); otherwise the table is rewritten with each row's default.
/// - `DROP [COLUMN] [IF EXISTS] col`: the indexes and CHECK constraints using the column and
///   the sequence it owns go with it; the table is rewritten without it.
/// - `ALTER [COLUMN] col [SET DATA] TYPE t [USING expr]`: the table is rewritten with each
///   value converted (an assignment cast, or the USING expression); its indexes are rebuilt.
/// - `ALTER [COLUMN] col SET / DROP DEFAULT`, `SET / DROP NOT NULL` (existing rows checked).
/// - `ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE (cols) | CHECK (expr)` (existing rows
///   checked), `DROP CONSTRAINT [IF EXISTS] name`, `RENAME CONSTRAINT a TO b`.
/// - `RENAME [COLUMN] a TO b`, `RENAME TO name`.
///
/// A rewrite reads every current row (not the statement's snapshot: no other transaction can
/// hold the table) into new heap, TOAST and index files made in this transaction, and the old
/// files are deleted at commit — the same path as TRUNCATE followed by INSERT ... SELECT, so
/// it is as crash-safe and, as in PostgreSQL, not MVCC-safe: a transaction whose snapshot
/// predates the commit sees the table empty. Changing the columns of a table a view reads is
/// refused (0A000): a view stores its query as text. Every other action is refused (0A000).
pub fn alter_table(
    s: &mut Session,
    name: &ObjectName,
    if_exists: bool,
    operations: &[sqlparser::ast::AlterTableOperation],
) -> Result<QueryResult> {
    use sqlparser::ast::{AlterColumnOperation as ColOp, AlterTableOperation as Op, DropBehavior, TableConstraint};
    let key = crate::catalog::relation_key(name)?;
    let tname = crate::catalog::key_display(&key);
    let Some(t) = s.lookup_table(&key) else {
        if if_exists {
            let mut r = tag("ALTER TABLE");
            r.notices.push(format!("NOTICE:  relation \"{tname}\" does not exist, skipping"));
            return Ok(r);
        }
        return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{tname}\" does not exist")));
    };
    // Refuse before doing anything: an ALTER TABLE is all-or-nothing.
    let mut changes_columns = false;
    for op in operations {
        let supported = match op {
            Op::AddConstraint { not_valid: true, .. } => {
                return Err(PgError::feature("ADD CONSTRAINT ... NOT VALID is not supported by heapstore"))
            }
            Op::AddConstraint {
                constraint:
                    TableConstraint::PrimaryKey { .. }
                    | TableConstraint::Unique { .. }
                    | TableConstraint::Check { enforced: None, .. }
                    | TableConstraint::ForeignKey { .. },
                ..
            } => true,
            Op::AddColumn { column_position: None, .. } | Op::RenameColumn { .. } | Op::RenameTable { .. } => {
                changes_columns = true;
                true
            }
            Op::DropColumn { drop_behavior, .. } => {
                if matches!(drop_behavior, Some(DropBehavior::Cascade)) {
                    return Err(PgError::feature("DROP COLUMN ... CASCADE is not supported by heapstore"));
                }
                changes_columns = true;
                true
            }
            Op::DropConstraint { drop_behavior, .. } => {
                if matches!(drop_behavior, Some(DropBehavior::Cascade)) {
                    return Err(PgError::feature("DROP CONSTRAINT ... CASCADE is not supported by heapstore"));
                }
                true
            }
            Op::RenameConstraint { .. } => true,
            Op::AlterColumn { op: ColOp::SetDataType { .. }, .. } => {
                changes_columns = true;
                true
            }
            Op::AlterColumn { op: ColOp::SetNotNull | ColOp::DropNotNull | ColOp::SetDefault { .. } | ColOp::DropDefault, .. } => true,
            _ => false,
        };
        if !supported {
            return Err(PgError::feature(format!(
                "ALTER TABLE action not supported yet: {}",
                op.to_string().split_whitespace().take(3).collect::<Vec<_>>().join(" ")
            )));
        }
    }
    let t = s.lock_table_current(&t, LockMode::AccessExclusive)?;
    s.check_not_in_use(&t, "ALTER TABLE")?;
    if !t.is_table() {
        s.table(&key)?; // the error for a view or sequence
    }
    if changes_columns {
        if let Some(v) = dependent_views(s, &t).first() {
            return Err(PgError::feature(format!(
                "changing the columns or the name of table \"{}\" is not supported by heapstore while a view reads it",
                t.name
            ))
            .with_detail(format!("view {v} depends on table {}", t.name)));
        }
    }
    s.xid(); // DDL is logged with the commit, so it needs an xid
    let mut r = tag("ALTER TABLE");
    let mut cur = t;
    for op in operations {
        cur = alter_one(s, &cur, op, &mut r.notices)?;
    }
    Ok(r)
}

/// The views that read `t`, by name.
fn dependent_views(s: &Session, t: &Table) -> Vec<String> {
    s.visible_tables()
        .into_iter()
        .filter(|v| matches!(&v.kind, crate::catalog::RelKind::View(d) if d.deps.contains(&t.oid)))
        .map(|v| v.name.clone())
        .collect()
}

/// Refuses to drop index `ix` of `t` (as a constraint or an index) while a foreign key looks
/// keys up in it (2BP01, as PostgreSQL without CASCADE).
pub(crate) fn index_not_referenced(s: &Session, t: &Table, ix: &crate::catalog::Index, what: &str) -> Result<()> {
    if let Some((child, fk)) = crate::exec::fk::referencing(s, t.oid).into_iter().find(|(_, f)| f.ref_index == ix.oid) {
        let object =
            if what == "constraint" { format!("constraint {} on table {}", ix.name, t.name) } else { format!("index {}", ix.name) };
        return Err(PgError::new("2BP01", format!("cannot drop {object} because other objects depend on it"))
            .with_detail(format!("constraint {} on table {} depends on index {}", fk.name, child.name, ix.name))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    Ok(())
}

/// ALTER TABLE ... ADD FOREIGN KEY (or a REFERENCES of an added column): each defined, the
/// table's rows checked against it, and recorded.
fn add_foreign_keys(s: &mut Session, cur: &Arc<Table>, specs: Vec<super::fk::FkSpec>) -> Result<Arc<Table>> {
    let mut def = (**cur).clone();
    let mut added = Vec::new();
    for spec in specs {
        let fk = super::fk::define(s, &def, spec, &|n| constraint_name_taken(&def, n))?;
        def.foreign_keys.push(fk.clone());
        added.push(fk);
    }
    let table = install(s, cur, def);
    for fk in &added {
        super::fk::validate(s, &table, fk)?;
    }
    Ok(table)
}

/// One ALTER TABLE action on `cur` (locked, current): returns the table's new definition,
/// already recorded in the transaction.
fn alter_one(s: &mut Session, cur: &Arc<Table>, op: &sqlparser::ast::AlterTableOperation, notices: &mut Vec<String>) -> Result<Arc<Table>> {
    use sqlparser::ast::{AlterColumnOperation as ColOp, AlterTableOperation as Op, TableConstraint};
    let no_column =
        |c: &str| PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{c}\" of relation \"{}\" does not exist", cur.name));
    let now = s.txn.as_ref().map_or(0, |t| t.start_us);
    match op {
        Op::AddConstraint { constraint: TableConstraint::Check { name, expr, .. }, .. } => {
            let checks = bind_checks(s, cur, vec![(name.as_ref().map(fold_ident), (**expr).clone(), None)])?;
            let added = checks.last().expect("one was added").clone();
            let only = Table { checks: vec![added.clone()], ..(**cur).clone() };
            let bound = crate::exec::rows::Checks::new(&only)?;
            let mut bad = false;
            for_each_row(s, cur, |row| {
                bad |= bound.check_values(cur, row).is_err();
                Ok(())
            })?;
            if bad {
                return Err(PgError::new(
                    sqlstate::CHECK_VIOLATION,
                    format!("check constraint \"{}\" of relation \"{}\" is violated by some row", added.name, cur.name),
                )
                .with_table(cur)
                .with_constraint(&added.name));
            }
            Ok(install(s, cur, Table { checks, ..(**cur).clone() }))
        }
        Op::AddConstraint { constraint: c @ TableConstraint::ForeignKey { .. }, .. } => {
            let spec = super::fk::FkSpec::of_constraint(c)?.expect("a foreign key");
            add_foreign_keys(s, cur, vec![spec])
        }
        Op::AddConstraint { constraint, .. } => {
            super::check::table_constraint(constraint)?;
            let (cname, columns, primary) = match constraint {
                TableConstraint::PrimaryKey { name, columns, .. } => (name, columns, true),
                TableConstraint::Unique { name, columns, .. } => (name, columns, false),
                _ => unreachable!("checked by alter_table"),
            };
            let (cols, include) = constraint_columns(columns);
            super::index::add_constraint_index(s, cur, &cols, &include, primary, cname.as_ref().map(fold_ident))
        }
        Op::AddColumn { if_not_exists, column_def: cd, .. } => {
            let spec = column_def(&cur.name, cd, now, s)?;
            permanent_default(s, cur.is_temp(), &spec.col)?;
            let cname = spec.col.name.clone();
            if cur.column_index(&cname).is_some() {
                if *if_not_exists {
                    notices.push(format!("NOTICE:  column \"{cname}\" of relation \"{}\" already exists, skipping", cur.name));
                    return Ok(cur.clone());
                }
                return Err(PgError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{cname}\" of relation \"{}\" already exists", cur.name),
                ));
            }
            if cur.columns.len() >= 1600 {
                return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "tables can have at most 1600 columns"));
            }
            let mut new = (**cur).clone();
            new.columns.push(spec.col);
            let c = new.columns.len() - 1;
            if let Some((ty, options)) = &spec.owned {
                let seq_name = choose_sequence_name(s, &cur.name, &cname);
                let def = super::sequence::sequence_def(*ty, options, Some((cur.oid, cname.clone())))?;
                super::sequence::make_sequence(s, &seq_name, def, cur.is_temp())?;
                if new.columns[c].identity.is_none() {
                    new.columns[c].default = Some(format!("nextval('{}'::regclass)", seq_name.replace('\'', "''")));
                }
            }
            let added_checks = !spec.checks.is_empty();
            new.checks = bind_checks(s, &new, spec.checks)?;
            let col = &new.columns[c];
            let table = if col.default.is_some() || col.identity.is_some() || col.not_null || added_checks {
                let sources = (0..c).map(Source::Old).chain(std::iter::once(Source::Default)).collect();
                rewrite(s, cur, new, sources)?
            } else {
                // Existing tuples have fewer attributes: they read the new column as NULL.
                if new.toast_relfile.is_none() && col.ty.fixed_len().is_none() {
                    new.toast_relfile = Some(s.create_files()?);
                }
                install(s, cur, new)
            };
            let mut table = table;
            for (cols, primary, name) in spec.keys {
                table = super::index::add_constraint_index(s, &table, &cols, &[], primary, name)?;
            }
            if !spec.fks.is_empty() {
                table = add_foreign_keys(s, &table, spec.fks)?;
            }
            Ok(table)
        }
        Op::DropColumn { column_names, if_exists, .. } => {
            let mut table = cur.clone();
            for n in column_names {
                let n = fold_ident(n);
                let Some(i) = table.column_index(&n) else {
                    if *if_exists {
                        notices.push(format!("NOTICE:  column \"{n}\" of relation \"{}\" does not exist, skipping", table.name));
                        continue;
                    }
                    return Err(no_column(&n));
                };
                // A foreign key onto the column: refused (PostgreSQL without CASCADE).
                let referencing = crate::exec::fk::referencing(s, table.oid);
                for (child, fk) in &referencing {
                    if fk.ref_columns.contains(&i) && !(child.oid == table.oid && fk.columns.contains(&i)) {
                        return Err(PgError::new(
                            "2BP01",
                            format!("cannot drop column {n} of table {} because other objects depend on it", table.name),
                        )
                        .with_detail(format!(
                            "constraint {} on table {} depends on column {n} of table {}",
                            fk.name, child.name, table.name
                        ))
                        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                    }
                }
                let renumber = |cols: &mut Vec<usize>| cols.iter_mut().for_each(|c| *c -= usize::from(*c > i));
                let mut new = (*table).clone();
                new.columns.remove(i);
                // This table's foreign keys using the column go with it; the others, and
                // other tables' foreign keys onto later columns, are renumbered.
                new.foreign_keys.retain(|f| !f.columns.contains(&i));
                for f in &mut new.foreign_keys {
                    renumber(&mut f.columns);
                    if f.ref_table == table.oid {
                        renumber(&mut f.ref_columns);
                    }
                }
                let mut children: Vec<Arc<Table>> = referencing.iter().map(|(c, _)| c.clone()).filter(|c| c.oid != table.oid).collect();
                children.dedup_by_key(|c| c.oid);
                for child in children {
                    // Locked, then read again by OID: renamed or dropped meanwhile is seen.
                    s.lock_table(&child, LockMode::AccessExclusive)?;
                    let Some(child) = s.visible_tables().into_iter().find(|c| c.oid == child.oid) else { continue };
                    let mut def = (*child).clone();
                    for f in def.foreign_keys.iter_mut().filter(|f| f.ref_table == table.oid) {
                        renumber(&mut f.ref_columns);
                    }
                    install(s, &child, def);
                }
                // Indexes (and so PRIMARY KEY / UNIQUE constraints) and CHECK constraints
                // using the column go with it, as in PostgreSQL.
                let mut gone = Vec::new();
                let mut kept = Vec::new();
                for ix in new.indexes.drain(..) {
                    let mut in_predicate = match &ix.predicate {
                        Some(p) => mentions_column(p, &n)?,
                        None => false,
                    };
                    for e in &ix.exprs {
                        in_predicate |= mentions_column(e, &n)?;
                    }
                    if ix.columns.contains(&i) || ix.include.contains(&i) || in_predicate {
                        // A foreign key of another table (or one of this table's it keeps)
                        // through the index: refused, as PostgreSQL without CASCADE.
                        if let Some((child, fk)) =
                            referencing.iter().find(|(c, f)| f.ref_index == ix.oid && !(c.oid == table.oid && f.columns.contains(&i)))
                        {
                            return Err(PgError::new(
                                "2BP01",
                                format!("cannot drop column {n} of table {} because other objects depend on it", table.name),
                            )
                            .with_detail(format!("constraint {} on table {} depends on index {}", fk.name, child.name, ix.name))
                            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                        }
                        gone.push(ix);
                    } else {
                        kept.push(ix);
                    }
                }
                s.txn().dead_files.extend(gone.iter().map(|ix| ix.relfile));
                new.indexes = kept
                    .into_iter()
                    .map(|mut ix| {
                        ix.columns
                            .iter_mut()
                            .chain(ix.include.iter_mut())
                            .filter(|c| **c != crate::catalog::EXPR_KEY)
                            .for_each(|c| *c -= usize::from(*c > i));
                        ix
                    })
                    .collect();
                let mut checks = Vec::new();
                for c in new.checks.drain(..) {
                    if !mentions_column(&c.expr, &n)? {
                        checks.push(c);
                    }
                }
                new.checks = checks;
                for q in super::sequence::owned_sequences(s, &table) {
                    if q.sequence().and_then(|d| d.owned_by.as_ref()).is_some_and(|(_, c)| *c == n) {
                        drop_relation(s, q)?;
                    }
                }
                let sources = (0..table.columns.len()).filter(|&c| c != i).map(Source::Old).collect();
                table = rewrite(s, &table, new, sources)?;
            }
            Ok(table)
        }
        Op::RenameColumn { old_column_name, new_column_name } => {
            let (old, newn) = (fold_ident(old_column_name), fold_ident(new_column_name));
            let i = cur.column_index(&old).ok_or_else(|| no_column(&old))?;
            if cur.column_index(&newn).is_some() {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{newn}\" of relation \"{}\" already exists", cur.name),
                ));
            }
            let mut new = (**cur).clone();
            new.columns[i].name = newn.clone();
            for c in &mut new.checks {
                c.expr = rename_column_in(&c.expr, &old, &newn)?;
            }
            for ix in &mut new.indexes {
                if let Some(p) = &mut ix.predicate {
                    *p = rename_column_in(p, &old, &newn)?;
                }
                for e in &mut ix.exprs {
                    *e = rename_column_in(e, &old, &newn)?;
                }
            }
            for q in super::sequence::owned_sequences(s, cur) {
                let mut def = (*q).clone();
                if let crate::catalog::RelKind::Sequence(d) = &mut def.kind {
                    if let Some((_, c)) = &mut d.owned_by {
                        if *c == old {
                            *c = newn.clone();
                            s.lock_table(&q, LockMode::AccessExclusive)?;
                            install(s, &q, def);
                        }
                    }
                }
            }
            Ok(install(s, cur, new))
        }
        Op::RenameTable { table_name: to } => {
            let to = match to {
                sqlparser::ast::RenameTableNameKind::To(n) | sqlparser::ast::RenameTableNameKind::As(n) => table_name(n)?,
            };
            let same = format!("{}{to}", if cur.is_temp() { "\0pg_temp\0" } else { "\0public\0" });
            if s.lookup_table(&same).is_none() {
                check_temp_name(s, &to, cur.is_temp())?;
            }
            if s.lookup_table(&same).is_some() || cur.indexes.iter().any(|i| i.name == to) || super::index::relation_name_taken(s, &to) {
                return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{to}\" already exists")));
            }
            Ok(install(s, cur, Table { name: to, ..(**cur).clone() }))
        }
        Op::RenameConstraint { old_name, new_name } => {
            let (old, newn) = (fold_ident(old_name), fold_ident(new_name));
            let mut new = (**cur).clone();
            if constraint_name_taken(&new, &newn) {
                return Err(PgError::new("42710", format!("constraint \"{newn}\" for relation \"{}\" already exists", cur.name)));
            }
            if let Some(c) = new.checks.iter_mut().find(|c| c.name == old) {
                c.name = newn;
            } else if let Some(f) = new.foreign_keys.iter_mut().find(|f| f.name == old) {
                f.name = newn;
            } else if let Some(ix) = new.indexes.iter_mut().find(|i| i.constraint && i.name == old) {
                if super::index::relation_name_taken(s, &newn) {
                    return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{newn}\" already exists")));
                }
                ix.name = newn;
            } else {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("constraint \"{old}\" for table \"{}\" does not exist", cur.name),
                ));
            }
            Ok(install(s, cur, new))
        }
        Op::DropConstraint { if_exists, name, .. } => {
            let n = fold_ident(name);
            let mut new = (**cur).clone();
            if let Some(i) = new.checks.iter().position(|c| c.name == n) {
                new.checks.remove(i);
            } else if let Some(i) = new.foreign_keys.iter().position(|f| f.name == n) {
                new.foreign_keys.remove(i);
            } else if let Some(i) = new.indexes.iter().position(|ix| ix.constraint && ix.name == n) {
                index_not_referenced(s, cur, &new.indexes[i], "constraint")?;
                // Dropping a primary key leaves its columns NOT NULL, as in PostgreSQL.
                let ix = new.indexes.remove(i);
                // A foreign key of this table onto that key goes with it only if it is
                // this table's own (a self-reference): refused above otherwise.
                s.txn().dead_files.push(ix.relfile);
            } else if *if_exists {
                notices.push(format!("NOTICE:  constraint \"{n}\" of relation \"{}\" does not exist, skipping", cur.name));
                return Ok(cur.clone());
            } else {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("constraint \"{n}\" of relation \"{}\" does not exist", cur.name),
                ));
            }
            Ok(install(s, cur, new))
        }
        Op::AlterColumn { column_name, op } => {
            let cname = fold_ident(column_name);
            let i = cur.column_index(&cname).ok_or_else(|| no_column(&cname))?;
            let mut new = (**cur).clone();
            match op {
                ColOp::SetNotNull => {
                    if !new.columns[i].not_null {
                        let mut bad = false;
                        for_each_row(s, cur, |row| {
                            bad |= row[i] == crate::types::Value::Null;
                            Ok(())
                        })?;
                        if bad {
                            return Err(PgError::new(
                                sqlstate::NOT_NULL_VIOLATION,
                                format!("column \"{cname}\" of relation \"{}\" contains null values", cur.name),
                            )
                            .with_table(cur)
                            .with_column(&cname));
                        }
                        new.columns[i].not_null = true;
                    }
                }
                ColOp::DropNotNull => {
                    if cur.indexes.iter().any(|ix| ix.primary && ix.columns.contains(&i)) {
                        return Err(PgError::new("42P16", format!("column \"{cname}\" is in a primary key")));
                    }
                    if cur.columns[i].identity.is_some() {
                        return Err(PgError::new(
                            "42P16",
                            format!("column \"{cname}\" of relation \"{}\" is an identity column", cur.name),
                        ));
                    }
                    new.columns[i].not_null = false;
                }
                ColOp::SetDefault { value } => {
                    if cur.columns[i].identity.is_some() {
                        return Err(PgError::syntax(format!("column \"{cname}\" of relation \"{}\" is an identity column", cur.name))
                            .with_hint("Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead."));
                    }
                    new.columns[i].default = checked_default(value, &new.columns[i], now, s)?;
                    permanent_default(s, new.is_temp(), &new.columns[i])?;
                }
                ColOp::DropDefault => new.columns[i].default = None,
                ColOp::SetDataType { data_type, using, .. } => {
                    let in_fk = cur.foreign_keys.iter().any(|f| f.columns.contains(&i))
                        || crate::exec::fk::referencing(s, cur.oid).iter().any(|(_, f)| f.ref_columns.contains(&i));
                    if in_fk {
                        return Err(PgError::feature(format!(
                            "changing the type of column \"{cname}\", which a foreign key uses, is not supported by heapstore"
                        )));
                    }
                    // A partial index's predicate is kept as text: bound again over the new
                    // type, its literals could take another meaning.
                    for ix in &cur.indexes {
                        if let Some(p) = &ix.predicate {
                            if mentions_column(p, &cname)? {
                                return Err(PgError::feature(format!(
                                    "changing the type of column \"{cname}\", which the predicate of index \"{}\" reads, is not supported by heapstore",
                                    ix.name
                                )));
                            }
                        }
                        for e in &ix.exprs {
                            if mentions_column(e, &cname)? {
                                return Err(PgError::feature(format!(
                                    "changing the type of column \"{cname}\", which an expression of index \"{}\" reads, is not supported by heapstore",
                                    ix.name
                                )));
                            }
                        }
                    }
                    let ty = sql_type(data_type)?;
                    if ty.id == crate::types::TypeId::Regclass {
                        return Err(PgError::feature("columns of type regclass are not supported by heapstore (store the oid)"));
                    }
                    storable(&cname, &ty)?;
                    let from = cur.columns[i].ty;
                    let source = match using {
                        Some(e) => e.clone(),
                        None => {
                            if !super::dml::assignable(&from, &ty) {
                                return Err(PgError::new(
                                    sqlstate::DATATYPE_MISMATCH,
                                    format!("column \"{cname}\" cannot be cast automatically to type {}", ty.name()),
                                )
                                .with_hint(format!("You might need to specify \"USING {cname}::{}\".", ty.name())));
                            }
                            sqlparser::ast::Expr::Identifier(column_name.clone())
                        }
                    };
                    let bound = super::expr::bind(&source, cur)?;
                    // Converted to the type, then stored as any assigned value is: a length
                    // or precision the value exceeds is an error (22001, 22003), not a cut.
                    let converted = super::expr::Scalar::Cast(Box::new(bound), SqlType { typmod: -1, ..ty });
                    if cur.columns[i].identity.is_some()
                        && !matches!(ty.id, crate::types::TypeId::Int2 | crate::types::TypeId::Int4 | crate::types::TypeId::Int8)
                    {
                        return Err(PgError::new("22023", "identity column type must be smallint, integer, or bigint"));
                    }
                    new.columns[i].ty = ty;
                    if let Some(d) = &new.columns[i].default {
                        // The default must still make a value of the new type.
                        let e = crate::exec::rows::parse_stored_expr(d)?;
                        let _stored = crate::types::tz::stored_definition();
                        super::dml::bind_default(&e, &new.columns[i], now, Some(s)).map_err(|_| {
                            PgError::new(
                                sqlstate::DATATYPE_MISMATCH,
                                format!("default for column \"{cname}\" cannot be cast automatically to type {}", ty.name()),
                            )
                        })?;
                    }
                    if new.toast_relfile.is_none() && ty.fixed_len().is_none() {
                        new.toast_relfile = Some(s.create_files()?);
                    }
                    let sources =
                        (0..cur.columns.len()).map(|c| if c == i { Source::Expr(converted.clone()) } else { Source::Old(c) }).collect();
                    return rewrite(s, cur, new, sources);
                }
                ColOp::AddGenerated { .. } => unreachable!("refused by alter_table"),
            }
            Ok(install(s, cur, new))
        }
        _ => unreachable!("refused by alter_table"),
    }
}

/// A DEFAULT expression checked as CREATE TABLE checks it (no column references or
/// subqueries; a value of the column's type), deparsed for the catalog; None for DEFAULT NULL.
fn checked_default(e: &sqlparser::ast::Expr, col: &Column, now: i64, s: &Session) -> Result<Option<String>> {
    let mut refs = false;
    let _ = sqlparser::ast::visit_expressions(e, |x| {
        refs |= matches!(x, sqlparser::ast::Expr::Identifier(_) | sqlparser::ast::Expr::CompoundIdentifier(_))
            && !super::dml::is_default_keyword(x)
            && !super::expr::is_keyword_function(x);
        refs |=
            matches!(x, sqlparser::ast::Expr::Subquery(_) | sqlparser::ast::Expr::Exists { .. } | sqlparser::ast::Expr::InSubquery { .. });
        std::ops::ControlFlow::<()>::Continue(())
    });
    if refs {
        return Err(PgError::feature("cannot use column reference or subquery in DEFAULT expression"));
    }
    crate::types::tz::check_stored_definition("a DEFAULT", || super::dml::bind_default(e, col, now, Some(s)))?;
    if matches!(e, sqlparser::ast::Expr::Value(v) if matches!(v.value, sqlparser::ast::Value::Null)) {
        return Ok(None);
    }
    Ok(Some(deparse_default(e, col.ty)))
}

/// Refuses a permanent table's DEFAULT naming a temporary relation (`nextval('s')` of a
/// temporary sequence): PostgreSQL drops such a default with the session's temporary
/// relations; heapstore stores defaults as text, so it would name whatever relation has that
/// name later. Any string constant of the expression that names a temporary relation counts.
fn permanent_default(s: &Session, table_is_temp: bool, col: &Column) -> Result<()> {
    let Some(text) = col.default.as_deref().filter(|_| !table_is_temp) else { return Ok(()) };
    let e = crate::exec::rows::parse_stored_expr(text)?;
    let mut found = None;
    let _ = sqlparser::ast::visit_expressions(&e, |x| {
        if let sqlparser::ast::Expr::Value(v) = x {
            if let sqlparser::ast::Value::SingleQuotedString(name) = &v.value {
                let key = super::sequence::parse_relation_name(name, &super::pg_catalog::temp_schema_name(s));
                if key.is_ok_and(|k| s.lookup_table(&k).is_some_and(|t| t.is_temp())) {
                    found = Some(name.clone());
                }
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    match found {
        Some(name) => Err(PgError::feature(format!(
            "the DEFAULT of column \"{}\" of a permanent table cannot name temporary relation \"{name}\"",
            col.name
        ))
        .with_detail("PostgreSQL drops such a default when the session ends; heapstore does not.")),
        None => Ok(()),
    }
}

/// Whether a stored expression (a CHECK constraint) names column `col`.
fn mentions_column(text: &str, col: &str) -> Result<bool> {
    let e = crate::exec::rows::parse_stored_expr(text)?;
    let mut found = false;
    let _ = sqlparser::ast::visit_expressions(&e, |x| {
        found |= match x {
            sqlparser::ast::Expr::Identifier(i) => fold_ident(i) == col,
            sqlparser::ast::Expr::CompoundIdentifier(p) => p.last().is_some_and(|i| fold_ident(i) == col),
            _ => false,
        };
        std::ops::ControlFlow::<()>::Continue(())
    });
    Ok(found)
}

/// A stored expression with column `old` renamed to `new`.
fn rename_column_in(text: &str, old: &str, new: &str) -> Result<String> {
    let mut e = crate::exec::rows::parse_stored_expr(text)?;
    let simple = new.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && new.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && sqlparser::keywords::ALL_KEYWORDS.binary_search(&new.to_ascii_uppercase().as_str()).is_err();
    let rename = |i: &mut sqlparser::ast::Ident| {
        if fold_ident(i) == old {
            *i = if simple { sqlparser::ast::Ident::new(new) } else { sqlparser::ast::Ident::with_quote('"', new) };
        }
    };
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |x| {
        match x {
            sqlparser::ast::Expr::Identifier(i) => rename(i),
            sqlparser::ast::Expr::CompoundIdentifier(p) => {
                if let Some(i) = p.last_mut() {
                    rename(i)
                }
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    Ok(e.to_string())
}

/// Records `new` as the definition replacing `old` in this transaction (a new name drops the
/// old one and creates the new, keeping the oid and files).
fn install(s: &mut Session, old: &Arc<Table>, new: Table) -> Arc<Table> {
    let new = Arc::new(new);
    let txn = s.txn();
    if let Some(c) = txn.creates.iter_mut().find(|c| c.oid == old.oid) {
        *c = new.clone();
    } else if new.name == old.name {
        match txn.replaces.iter_mut().find(|(n, _)| n.oid == old.oid) {
            Some(r) => r.0 = new.clone(),
            None => txn.replaces.push((new.clone(), old.clone())),
        }
    } else {
        let original = match txn.replaces.iter().position(|(n, _)| n.oid == old.oid) {
            Some(i) => txn.replaces.remove(i).1,
            None => old.clone(),
        };
        txn.drops.push(original);
        txn.creates.push(new.clone());
    }
    new
}

/// Calls `f` with every current row of `t` (every version not deleted, whatever the
/// statement's snapshot: the caller holds ACCESS EXCLUSIVE, so no other transaction has one
/// in progress), its columns decoded.
pub(crate) fn for_each_row(s: &Session, t: &Table, mut f: impl FnMut(&[crate::types::Value]) -> Result<()>) -> Result<()> {
    let mut row = Vec::with_capacity(t.columns.len());
    super::index::heap_versions(s, t, |_, tuple, live, _| {
        if !live {
            return Ok(());
        }
        let stored = crate::exec::rows::stored_of(s, t, tuple)?;
        row.clear();
        row.extend(
            stored
                .iter()
                .zip(&t.columns)
                .map(|(v, c)| v.as_ref().map_or(crate::types::Value::Null, |b| crate::types::Value::decode(&c.ty, b))),
        );
        f(&row)
    })
}

/// Where a rewritten table's column gets its value.
enum Source {
    /// The old row's column.
    Old(usize),
    /// The column's DEFAULT (or identity), evaluated per row.
    Default,
    /// An expression over the old row's columns (ALTER COLUMN TYPE).
    Expr(super::expr::Scalar),
}

/// Rewrites `old`'s rows into new files under `new`'s definition, column `c` of each new row
/// coming from `sources[c]`: new heap and TOAST files, the kept indexes rebuilt in new files,
/// every row inserted through the rows-in path (CHECK, NOT NULL and unique checks, WAL as for
/// any insert into a relation created in this transaction). The old files are deleted at
/// commit. See [`alter_table`] for the snapshot rule.
fn rewrite(s: &mut Session, old: &Arc<Table>, mut new: Table, sources: Vec<Source>) -> Result<Arc<Table>> {
    debug_assert_eq!(sources.len(), new.columns.len());
    new.relfile = s.create_files()?;
    new.toast_relfile = if new.columns.iter().any(|c| c.ty.fixed_len().is_none()) { Some(s.create_files()?) } else { None };
    super::index::truncate_indexes(s, &mut new)?;
    s.txn().dead_files.extend(std::iter::once(old.relfile).chain(old.toast_relfile));
    // The rows go through a temporary file: reading the old heap borrows the session, which
    // inserting into the new one needs.
    let temp = crate::exec::spill::TempSpace::new(s.shared.vfs.clone(), &s.shared.dir, -1);
    let mut file = temp.create()?;
    for_each_row(s, old, |row| file.write_row(row))?;
    let mut rows = file.reader()?;
    let new = install(s, old, new);
    s.count_changes(old.oid, |p| p.truncated = true);
    let defaults = crate::exec::rows::Defaults::new(s, &new, |c| matches!(sources[c], Source::Default))?;
    let checks = crate::exec::rows::Checks::new(&new)?;
    let wal = super::dml::heap_rel(s, &new);
    let xid = s.xid();
    let cid = s.txn().cid;
    let mut vals = vec![crate::types::Value::Null; new.columns.len()];
    while let Some(row) = rows.next_row()? {
        for (c, src) in sources.iter().enumerate() {
            vals[c] = match src {
                Source::Old(i) => row[*i].clone(),
                Source::Default => defaults.value(s, c)?,
                Source::Expr(e) => super::expr::eval_with_session(e, s, &row, &[])?,
            };
            let col = &new.columns[c];
            if col.not_null && vals[c] == crate::types::Value::Null && !matches!(src, Source::Old(_)) {
                return Err(PgError::new(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!("column \"{}\" of relation \"{}\" contains null values", col.name, new.name),
                )
                .with_table(&new)
                .with_column(&col.name));
            }
        }
        super::dml::insert_row(s, &new, &vals, wal, xid, cid, &checks).map_err(|e| {
            match (e.objects.as_ref().and_then(|o| o.constraint.clone()), e.code) {
                (Some(c), sqlstate::CHECK_VIOLATION) => PgError::new(
                    sqlstate::CHECK_VIOLATION,
                    format!("check constraint \"{c}\" of relation \"{}\" is violated by some row", new.name),
                )
                .with_table(&new)
                .with_constraint(&c),
                _ => e,
            }
        })?;
    }
    Ok(new)
}

/// PostgreSQL's name for a column's sequence: `<table>_<column>_seq`, then with a number
/// appended until no relation has it.
fn choose_sequence_name(s: &Session, table: &str, column: &str) -> String {
    let base = format!("{table}_{column}_seq");
    if s.lookup_table(&base).is_none() {
        return base;
    }
    (1..).map(|i| format!("{base}{i}")).find(|n| s.lookup_table(n).is_none()).expect("some name is free")
}

/// Checks and names CHECK constraints: each must be a boolean expression over the table's
/// columns, without subqueries or aggregates. Unnamed ones get PostgreSQL's names
/// (`<table>_<column>_check` for a column constraint, `<table>_check` otherwise, numbered
/// when taken).
pub(crate) fn bind_checks(
    s: &Session,
    t: &Table,
    list: Vec<(Option<String>, sqlparser::ast::Expr, Option<String>)>,
) -> Result<Vec<crate::catalog::Check>> {
    let mut out: Vec<crate::catalog::Check> = t.checks.clone();
    let taken = |n: &str, out: &[crate::catalog::Check]| {
        out.iter().any(|c| c.name == n) || t.indexes.iter().any(|i| i.name == n) || s.lookup_table(n).is_some()
    };
    for (name, e, col) in list {
        let mut sub = false;
        let _ = sqlparser::ast::visit_expressions(&e, |x| {
            sub |= matches!(
                x,
                sqlparser::ast::Expr::Subquery(_) | sqlparser::ast::Expr::Exists { .. } | sqlparser::ast::Expr::InSubquery { .. }
            );
            std::ops::ControlFlow::<()>::Continue(())
        });
        if sub {
            return Err(PgError::feature("cannot use subquery in check constraint"));
        }
        let b = crate::types::tz::check_stored_definition("a CHECK constraint", || super::expr::bind(&e, t))?;
        if super::expr::type_of(&b).is_some_and(|ty| ty.id != crate::types::TypeId::Bool) {
            return Err(PgError::new(
                "42804",
                format!("argument of CHECK must be type boolean, not type {}", super::expr::type_of(&b).expect("typed").name()),
            ));
        }
        let name = match name {
            Some(n) => {
                if out.iter().any(|c| c.name == n) {
                    return Err(PgError::new("42710", format!("constraint \"{n}\" for relation \"{}\" already exists", t.name)));
                }
                n
            }
            None => {
                let base = match &col {
                    Some(c) => format!("{}_{c}_check", t.name),
                    None => format!("{}_check", t.name),
                };
                if !taken(&base, &out) {
                    base
                } else {
                    (1..).map(|i| format!("{base}{i}")).find(|n| !taken(n, &out)).expect("some name is free")
                }
            }
        };
        out.push(crate::catalog::Check { name, expr: e.to_string() });
    }
    Ok(out)
}

/// A DEFAULT expression as PostgreSQL prints it back (`pg_get_expr`): string literals with
/// their type (`'none'::text`), negative numbers quoted (`'-7'::integer`), the SQL-standard
/// date/time functions in upper case (`CURRENT_DATE`); anything else as written.
fn deparse_default(e: &sqlparser::ast::Expr, ty: SqlType) -> String {
    use sqlparser::ast::{Expr, UnaryOperator, Value as V};
    let tname = SqlType::new(ty.id).name();
    match e {
        Expr::Value(v) => match &v.value {
            V::SingleQuotedString(x) => format!("'{}'::{tname}", x.replace('\'', "''")),
            V::Number(n, _) => n.clone(),
            V::Boolean(b) => b.to_string(),
            _ => e.to_string(),
        },
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => match &**expr {
            Expr::Value(v) => match &v.value {
                V::Number(n, _) => format!("'-{n}'::{tname}"),
                _ => e.to_string(),
            },
            _ => e.to_string(),
        },
        Expr::Function(f) if matches!(f.args, sqlparser::ast::FunctionArguments::None) => {
            let n = f.name.to_string().to_ascii_lowercase();
            match n.as_str() {
                "current_date" | "current_timestamp" | "localtimestamp" | "current_time" | "localtime" | "current_user"
                | "session_user" | "current_role" | "user" => n.to_ascii_uppercase(),
                _ => e.to_string(),
            }
        }
        e if super::expr::is_keyword_function(e) => e.to_string().to_ascii_uppercase(),
        _ => e.to_string(),
    }
}

/// Whether a query's output column can be a table's or view's column. A record cannot: its
/// kind is a number of this process's registry (`types::record`). PostgreSQL refuses an
/// anonymous record the same way (42P16); a whole-row reference, which PostgreSQL would store
/// as the table's row type, is refused as not supported.
pub fn storable(name: &str, ty: &SqlType) -> Result<()> {
    match ty.id {
        TypeId::Record(k) if k.table().is_some() => {
            Err(PgError::feature(format!("column \"{name}\" holds a whole-row value, which heapstore cannot store (it has no row types)")))
        }
        TypeId::Record(_) => Err(PgError::new("42P16", format!("column \"{name}\" has pseudo-type record"))),
        TypeId::Void => Err(PgError::new("42P16", format!("column \"{name}\" has pseudo-type void"))),
        _ => Ok(()),
    }
}

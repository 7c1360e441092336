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
    // CHECK constraints: (name given, expression, the column it was written on).
    let mut checks: Vec<(Option<String>, sqlparser::ast::Expr, Option<String>)> = Vec::new();
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
            sqlparser::ast::TableConstraint::Check { name, expr, enforced: None } => {
                checks.push((name.as_ref().map(fold_ident), (**expr).clone(), None))
            }
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
        let cname = fold_ident(&c.name);
        if columns.iter().any(|x| x.name == cname) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{cname}\" specified more than once")));
        }
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
        let mut col = Column::new(cname.clone(), ty, serial.is_some());
        let mut default: Option<&sqlparser::ast::Expr> = None;
        let mut seq_options = Vec::new();
        for o in &c.options {
            match &o.option {
                ColumnOption::NotNull => col.not_null = true,
                ColumnOption::Null => col.not_null = false,
                ColumnOption::Unique { is_primary, characteristics: None } => {
                    col.not_null |= *is_primary;
                    keys.push((vec![cname.clone()], *is_primary, o.name.as_ref().map(fold_ident)));
                }
                ColumnOption::Default(e) => {
                    if default.is_some() || serial.is_some() {
                        return Err(PgError::syntax(format!(
                            "multiple default values specified for column \"{cname}\" of table \"{name}\""
                        )));
                    }
                    default = Some(e);
                }
                ColumnOption::Check(e) => checks.push((o.name.as_ref().map(fold_ident), e.clone(), Some(cname.clone()))),
                ColumnOption::Generated {
                    generated_as: g @ (sqlparser::ast::GeneratedAs::Always | sqlparser::ast::GeneratedAs::ByDefault),
                    sequence_options,
                    generation_expr: None,
                    generation_expr_mode: None,
                    generated_keyword: true,
                } => {
                    if col.identity.is_some() {
                        return Err(PgError::syntax(format!(
                            "multiple identity specifications for column \"{cname}\" of table \"{name}\""
                        )));
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
            owned.push((columns.len(), ty, seq_options));
        } else if serial.is_some() {
            owned.push((columns.len(), ty, Vec::new()));
        }
        if let Some(e) = default {
            let mut refs = false;
            let _ = sqlparser::ast::visit_expressions(e, |x| {
                refs |= matches!(x, sqlparser::ast::Expr::Identifier(_) | sqlparser::ast::Expr::CompoundIdentifier(_))
                    && !super::dml::is_default_keyword(x);
                refs |= matches!(
                    x,
                    sqlparser::ast::Expr::Subquery(_) | sqlparser::ast::Expr::Exists { .. } | sqlparser::ast::Expr::InSubquery { .. }
                );
                std::ops::ControlFlow::<()>::Continue(())
            });
            if refs {
                return Err(PgError::feature("cannot use column reference or subquery in DEFAULT expression"));
            }
            super::dml::bind_default(e, &col, now)?;
            // `DEFAULT NULL` is no default at all, as PostgreSQL stores it.
            if !matches!(e, sqlparser::ast::Expr::Value(v) if matches!(v.value, sqlparser::ast::Value::Null)) {
                col.default = Some(deparse_default(e, ty));
            }
        }
        columns.push(col);
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
        super::sequence::make_sequence(s, &seq_name, def)?;
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
        persistence: if unlogged { Persistence::Unlogged } else { Persistence::Permanent },
        indexes: Vec::new(),
        kind: crate::catalog::RelKind::Table,
        checks: Vec::new(),
    };
    let t = Table { checks: bind_checks(s, &t, checks)?, ..t };
    let mut t = Arc::new(t);
    s.txn().creates.push(t.clone());
    for (cols, primary, name) in keys {
        t = super::index::add_constraint_index(s, &t, &cols, primary, name)?;
    }
    if let Some(q) = source {
        let cols: Vec<usize> = (0..t.columns.len()).collect();
        let r = super::dml::insert_select(s, &t, &cols, q, &[], None, None)?;
        // PostgreSQL tags CREATE TABLE AS with the rows it selected.
        return Ok(tag(&r.tag.replacen("INSERT 0", "SELECT", 1)));
    }
    Ok(tag("CREATE TABLE"))
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
        let Some(t) = s.lookup_table(&name) else {
            if if_exists {
                r.notices.push(format!("NOTICE:  {kind} \"{name}\" does not exist, skipping"));
                continue;
            }
            return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("{kind} \"{name}\" does not exist")));
        };
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

/// Drops one relation in this transaction (its files are deleted at commit).
fn drop_relation(s: &mut Session, t: Arc<Table>) -> Result<()> {
    s.lock_table(&t, LockMode::AccessExclusive)?;
    s.xid();
    let txn = s.txn();
    if txn.drops.iter().any(|d| d.oid == t.oid) {
        return Ok(());
    }
    if !matches!(t.kind, crate::catalog::RelKind::View(_)) {
        txn.dead_files.extend(std::iter::once(t.relfile).chain(t.toast_relfile).chain(t.indexes.iter().map(|i| i.relfile)));
    }
    if let Some(i) = txn.creates.iter().position(|c| c.name == t.name) {
        txn.creates.remove(i);
        return Ok(());
    }
    let original = match txn.replaces.iter().position(|(nw, _)| nw.name == t.name) {
        Some(i) => txn.replaces.remove(i).1,
        None => t.clone(),
    };
    txn.drops.push(original);
    Ok(())
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
        let b = super::expr::bind(&e, t)?;
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
        _ => e.to_string(),
    }
}

//! SELECT: `count(*)`, `*` or a column list from one table, with LIMIT; and constant selects
//! (`SELECT 1`, `SELECT 'x'`).

use super::ddl::table_name;
use crate::access::heap::{self, tuple, Flow};
use crate::catalog::fold_ident;
use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments, LimitClause, Query, SelectItem, SetExpr, TableFactor, Value};

pub(crate) enum Projection {
    CountStar,
    Columns(Vec<usize>),
}

pub fn run_query(s: &mut Session, q: Query) -> Result<QueryResult> {
    if q.with.is_some() || q.order_by.is_some() || q.fetch.is_some() || !q.locks.is_empty() {
        return Err(PgError::feature("WITH, ORDER BY, FETCH and FOR UPDATE are not supported yet"));
    }
    let limit = match &q.limit_clause {
        None => None,
        Some(LimitClause::LimitOffset { limit, offset, .. }) => {
            if offset.is_some() {
                return Err(PgError::feature("OFFSET is not supported yet"));
            }
            match limit {
                None => None,
                Some(Expr::Value(v)) => match &v.value {
                    Value::Number(n, _) => {
                        Some(n.parse::<u64>().map_err(|_| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid LIMIT: {n}")))?)
                    }
                    Value::Null => None,
                    _ => return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "argument of LIMIT must be type bigint")),
                },
                Some(_) => return Err(PgError::feature("LIMIT must be a constant")),
            }
        }
        Some(_) => return Err(PgError::feature("this LIMIT form is not supported")),
    };
    let SetExpr::Select(sel) = *q.body else {
        return Err(PgError::feature("only simple SELECT is supported"));
    };
    if sel.from.is_empty() {
        return constant_select(&sel.projection, sel.selection.as_ref(), limit);
    }
    if sel.from.len() != 1 || !sel.from[0].joins.is_empty() {
        return Err(PgError::feature("joins are not supported"));
    }
    let TableFactor::Table { name, .. } = &sel.from[0].relation else {
        return Err(PgError::feature("only tables can be selected from"));
    };
    let tname = table_name(name)?;
    if tname == "pg_locks" && s.lookup_table("pg_locks").is_none() {
        return pg_locks(s, &sel.projection, limit);
    }
    let table = s.table(&tname)?;
    if sel.selection.is_some() {
        if sel.distinct.is_some() || sel.having.is_some() || sel.group_by != sqlparser::ast::GroupByExpr::Expressions(vec![], vec![]) {
            return Err(PgError::feature("DISTINCT, GROUP BY and HAVING are not supported yet"));
        }
        let plan = super::dml::plan_select(table, &sel.projection, sel.selection.as_ref(), limit)?;
        return super::dml::run_select(s, &plan, &[]);
    }
    let proj = projection_of(&sel.projection, &table)?;
    s.lock_table(&table, LockMode::AccessShare)?;
    let snap = s.snapshot();
    let shared = s.shared.clone();
    let (pool, txns) = (&shared.pool, &shared.txns);
    match proj {
        Projection::CountStar => {
            let mut n = 0u64;
            heap::scan_locked(pool, &s.pins, txns, table.relfile, &snap, |_, _, _| {
                n += 1;
                Ok(Flow::Continue)
            })?;
            let rows = if limit == Some(0) { vec![] } else { vec![vec![Some(n.to_string())]] };
            Ok(QueryResult {
                tag: format!("SELECT {}", rows.len()),
                columns: vec![("count".into(), "bigint".into())],
                rows,
                returns_rows: true,
                notices: vec![],
                wrote_to_client: false,
                column_sources: vec![],
            })
        }
        Projection::Columns(cols) => {
            let types: Vec<_> = table.columns.iter().map(|c| c.ty).collect();
            let mut rows = Vec::new();
            let mut scratch = Vec::new();
            let mut text = Vec::new();
            if limit != Some(0) {
                heap::scan(pool, &s.pins, txns, table.relfile, &snap, |block, off, t| {
                    let mut attrs = Vec::with_capacity(types.len());
                    tuple::deform(t, &types, &mut attrs).map_err(|_| heap::corrupt_tuple(pool, table.relfile, block, off))?;
                    let mut row = Vec::with_capacity(cols.len());
                    for &c in &cols {
                        row.push(match attrs[c] {
                            None => None,
                            Some(a) => {
                                let v = crate::copy::exec::attr_bytes(pool, &s.pins, a, &mut scratch)?;
                                text.clear();
                                types[c].output_text(v, &mut text);
                                Some(String::from_utf8_lossy(&text).into_owned())
                            }
                        });
                    }
                    rows.push(row);
                    Ok(if limit.is_some_and(|l| rows.len() as u64 >= l) { Flow::Stop } else { Flow::Continue })
                })?;
            }
            Ok(QueryResult {
                tag: format!("SELECT {}", rows.len()),
                columns: cols.iter().map(|&c| (table.columns[c].name.clone(), table.columns[c].ty.name())).collect(),
                rows,
                returns_rows: true,
                notices: vec![],
                wrote_to_client: false,
                column_sources: cols.iter().map(|&c| Some((table.oid, c as i16 + 1))).collect(),
            })
        }
    }
}

pub(crate) fn projection_of(items: &[SelectItem], table: &crate::catalog::Table) -> Result<Projection> {
    if items.len() == 1 {
        if let SelectItem::UnnamedExpr(Expr::Function(f)) = &items[0] {
            let fname = f.name.to_string().to_lowercase();
            let star = matches!(&f.args, FunctionArguments::List(l) if l.args.len() == 1 && matches!(l.args[0], FunctionArg::Unnamed(FunctionArgExpr::Wildcard)));
            if fname == "count" && star {
                return Ok(Projection::CountStar);
            }
            return Err(PgError::feature(format!("function {fname} is not supported")));
        }
    }
    let mut cols = Vec::new();
    for it in items {
        match it {
            SelectItem::Wildcard(_) => cols.extend(0..table.columns.len()),
            SelectItem::UnnamedExpr(Expr::Identifier(id)) => {
                let n = fold_ident(id);
                let i = table
                    .column_index(&n)
                    .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist")))?;
                cols.push(i);
            }
            other => return Err(PgError::feature(format!("select item not supported: {other}"))),
        }
    }
    Ok(Projection::Columns(cols))
}

/// The types of a query's parameters (see `dml::param_types`); `LIMIT $n` is bigint.
pub(crate) fn param_types(s: &Session, q: &Query, out: &mut Vec<Option<crate::types::SqlType>>) -> Result<()> {
    if let Some(LimitClause::LimitOffset { limit: Some(Expr::Value(v)), .. }) = &q.limit_clause {
        if let Value::Placeholder(p) = &v.value {
            if let Some(n) = p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()).filter(|&n| n >= 1) {
                super::expr::Scalar::Param(n, Some(crate::types::SqlType::new(crate::types::TypeId::Int8))).param_types(out);
            }
        }
    }
    let SetExpr::Select(sel) = &*q.body else { return Ok(()) };
    let table = match sel.from.as_slice() {
        [] => std::sync::Arc::new(no_table()),
        [t] => match &t.relation {
            TableFactor::Table { name, .. } => s.table(&table_name(name)?)?,
            _ => return Ok(()),
        },
        _ => return Ok(()),
    };
    if sel.from.is_empty() {
        for it in &sel.projection {
            if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = it {
                super::expr::bind(e, &table)?.param_types(out);
            }
        }
    }
    if let Some(w) = &sel.selection {
        super::expr::bind(w, &table)?.param_types(out);
    }
    Ok(())
}

/// PostgreSQL's internal name of a type (what it names a cast's column).
fn pg_type_name(sql_name: &str) -> String {
    let base = sql_name.split('(').next().unwrap_or(sql_name).trim();
    match base {
        "integer" => "int4",
        "smallint" => "int2",
        "bigint" => "int8",
        "real" => "float4",
        "double precision" => "float8",
        "boolean" => "bool",
        "character varying" => "varchar",
        "character" => "bpchar",
        "timestamp without time zone" => "timestamp",
        other => other,
    }
    .to_string()
}

/// A table with no columns: what a FROM-less query's expressions are bound against.
fn no_table() -> crate::catalog::Table {
    crate::catalog::Table {
        oid: 0,
        name: String::new(),
        columns: Vec::new(),
        relfile: crate::storage::RelFileNumber(0),
        toast_relfile: None,
        persistence: crate::catalog::Persistence::Permanent,
        indexes: Vec::new(),
    }
}

/// `SELECT consts [WHERE cond] [LIMIT n]`: one row, or none when the condition is not true or
/// the limit is 0.
fn constant_select(items: &[SelectItem], selection: Option<&Expr>, limit: Option<u64>) -> Result<QueryResult> {
    let keep = match selection {
        None => true,
        Some(w) => {
            let cond = super::expr::bind(w, &no_table())?;
            let cond = match cond {
                // `WHERE 'true'`: an untyped literal read as boolean, as PostgreSQL does.
                super::expr::Scalar::Unknown(t) => {
                    super::expr::Scalar::Const(super::expr::parse_as(&crate::types::SqlType::new(crate::types::TypeId::Bool), &t)?)
                }
                c => c,
            };
            if let Some(t) = super::expr::type_of(&cond) {
                if t.id != crate::types::TypeId::Bool {
                    return Err(PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!("argument of WHERE must be type boolean, not type {}", t.name()),
                    ));
                }
            }
            cond.matches(&[], &[])?
        }
    };
    let mut columns = Vec::new();
    let mut row = Vec::new();
    for it in items {
        let (expr, alias) = match it {
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(fold_ident(alias))),
            _ => return Err(PgError::feature("only constants can be selected without FROM")),
        };
        let (v, ty): (Option<String>, String) = match expr {
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => {
                    if n.parse::<i32>().is_ok() {
                        (Some(n.clone()), "integer".into())
                    } else if n.parse::<i64>().is_ok() {
                        (Some(n.clone()), "bigint".into())
                    } else {
                        (Some(super::expr::numeric_text(n)?), "numeric".into())
                    }
                }
                Value::SingleQuotedString(s) => (Some(s.clone()), "text".into()),
                Value::Boolean(b) => (Some(if *b { "t" } else { "f" }.to_string()), "boolean".into()),
                Value::Null => (None, "text".into()),
                _ => return Err(PgError::feature(format!("constant not supported: {v}"))),
            },
            other => {
                let sc = super::expr::bind(other, &no_table())?;
                if let super::expr::Scalar::Decimal(d) = &sc {
                    // `SELECT -1.5`: numeric, printed as written.
                    let text = super::expr::decimal_as(d, &crate::types::SqlType::new(crate::types::TypeId::Text))?;
                    columns.push((alias.clone().unwrap_or_else(|| "?column?".into()), "numeric".into()));
                    row.push(text.to_text(&crate::types::SqlType::new(crate::types::TypeId::Text)));
                    continue;
                }
                let ty = super::expr::type_of(&sc);
                let val = sc.eval(&[], &[])?;
                let text = match (&val, ty) {
                    (crate::types::Value::Null, _) => None,
                    (_, Some(t)) => val.to_text(&t),
                    (crate::types::Value::Text(s), None) => Some(s.clone()),
                    (_, None) => return Err(PgError::feature(format!("expression not supported: {other}"))),
                };
                (text, ty.map(|t| t.name()).unwrap_or_else(|| "text".into()))
            }
        };
        // PostgreSQL names a cast column after its type (`SELECT '1'::date` is "date").
        let default_name = match expr {
            Expr::Cast { .. } | Expr::TypedString(_) => pg_type_name(&ty),
            _ if ty == "boolean" => "bool".into(),
            _ => "?column?".into(),
        };
        let name = alias.unwrap_or(default_name);
        columns.push((name, ty));
        row.push(v);
    }
    let rows = if keep && limit != Some(0) { vec![row] } else { vec![] };
    Ok(QueryResult {
        tag: format!("SELECT {}", rows.len()),
        columns,
        rows,
        returns_rows: true,
        notices: vec![],
        wrote_to_client: false,
        column_sources: vec![],
    })
}

/// `SELECT * FROM pg_locks`: the heavyweight locks held and awaited now, as PostgreSQL's view
/// (`pid` is the session id).
fn pg_locks(s: &mut Session, items: &[SelectItem], limit: Option<u64>) -> Result<QueryResult> {
    if !matches!(items, [SelectItem::Wildcard(_)]) {
        return Err(PgError::feature("only SELECT * FROM pg_locks is supported"));
    }
    let mut rows: Vec<Vec<Option<String>>> = s
        .shared
        .locks
        .locks()
        .into_iter()
        .map(|l| {
            let (locktype, relation) = match l.tag {
                crate::lock::LockTag::Relation(oid) => ("relation", Some(oid.to_string())),
                crate::lock::LockTag::Transaction(_) => ("transactionid", None),
                crate::lock::LockTag::Object { .. } => ("object", None),
            };
            let waitstart =
                l.waitstart.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| format!("{:.3}", d.as_secs_f64()));
            vec![
                Some(locktype.to_string()),
                relation,
                Some(l.session.to_string()),
                Some(l.mode.name().to_string()),
                Some(if l.granted { "t" } else { "f" }.to_string()),
                Some(if l.fastpath { "t" } else { "f" }.to_string()),
                waitstart,
            ]
        })
        .collect();
    if let Some(n) = limit {
        rows.truncate(n as usize);
    }
    let cols = [
        ("locktype", "text"),
        ("relation", "oid"),
        ("pid", "integer"),
        ("mode", "text"),
        ("granted", "boolean"),
        ("fastpath", "boolean"),
        ("waitstart", "text"),
    ];
    Ok(QueryResult {
        tag: format!("SELECT {}", rows.len()),
        columns: cols.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect(),
        rows,
        returns_rows: true,
        notices: vec![],
        wrote_to_client: false,
        column_sources: vec![],
    })
}

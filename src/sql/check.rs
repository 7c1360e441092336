//! The structural gate: every field of a parsed row statement is either handled by the code
//! that runs it or refused here with 0A000 naming the clause, before anything runs.
//!
//! sqlparser's AST carries clauses of many dialects and many PostgreSQL clauses heapstore does
//! not run yet (GROUP BY, ORDER BY, joins, ...). A statement runner that reads only the fields
//! it knows would silently drop the rest: `SELECT count(*) FROM t GROUP BY k` would return
//! one row. So each statement kind is destructured here *exhaustively* (no `..` in the
//! patterns): a sqlparser upgrade that adds a field fails to compile until the new field is
//! either handled or refused.
//!
//! Invariants:
//! 1. [`statement`] runs on every statement before it runs: in `sql::execute`, and once at
//!    `sql::prepare` (a prepared statement's parameters cannot add clauses).
//! 2. A clause accepted here is implemented with PostgreSQL's meaning by the runner the
//!    statement goes to; expressions inside accepted clauses are checked when they are bound
//!    (`expr::bind` refuses any expression form it does not evaluate).

use crate::error::{PgError, Result};
use sqlparser::ast::{
    CopyLegacyOption, CopyOption, CopySource, Delete, Expr, FromTable, Insert, Query, SetExpr, Statement, TableFactor, TableObject,
    TableWithJoins,
};

/// 42P02 for the first parameter (`$n`) in `st`, at its position.
fn no_parameters(st: &Statement) -> Result<()> {
    use sqlparser::ast::Value;
    let mut found = None;
    let _ = sqlparser::ast::visit_expressions(st, |e| {
        if let Expr::Value(v) = e {
            if let Value::Placeholder(p) = &v.value {
                found = Some((p.clone(), v.span.start));
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    match found {
        Some((p, at)) => Err(PgError::new("42P02", format!("there is no parameter {p}")).at(at)),
        None => Ok(()),
    }
}

/// 0A000 `<what> is not supported by heapstore yet`.
pub(crate) fn refuse(what: &str) -> PgError {
    PgError::feature(format!("{what} is not supported by heapstore yet"))
}

/// Refuses with `what` unless `ok`.
pub(crate) fn need(ok: bool, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(refuse(what))
    }
}

/// Checks one statement (invariant 1). Statements not listed here are either run by a
/// runner that reads all of their fields (DDL, VACUUM, EXPLAIN's own options) or refused by
/// `run_one`'s catch-all.
pub fn statement(st: &Statement) -> Result<()> {
    // Definitions are stored and run later without parameters: a `$n` in one is 42P02 now,
    // as in PostgreSQL (CREATE TABLE AS's query is planned with the statement's parameters).
    let stored = match st {
        Statement::CreateTable(ct) => ct.query.is_none(),
        Statement::CreateView { .. } | Statement::AlterTable { .. } | Statement::CreateIndex(_) => true,
        _ => false,
    };
    if stored {
        no_parameters(st)?;
    }
    match st {
        Statement::Query(q) => query(q),
        Statement::Insert(i) => insert(i),
        Statement::Delete(d) => delete(d),
        Statement::Update { table, assignments, from, selection: _, returning, or, limit } => {
            if let Some(sqlparser::ast::UpdateTableFromKind::BeforeSet(_)) = from {
                return Err(PgError::syntax("syntax error at or near \"FROM\""));
            }
            let _ = returning; // bound by `dml::Returning` (every select-list form handled or refused)
            need(or.is_none(), "UPDATE OR ...")?;
            need(limit.is_none(), "UPDATE ... LIMIT")?;
            let _ = assignments; // `(a, b) = ROW(...)` expanded by `dml::update`
            single_table(table, "UPDATE")
        }
        Statement::Copy { source, to, target: _, options, legacy_options, values: _ } => {
            match source {
                CopySource::Table { .. } => {}
                // The query is checked by the planner that runs it.
                CopySource::Query(_) if *to => {}
                CopySource::Query(_) => return Err(PgError::syntax("syntax error at or near \"FROM\"")),
            }
            for o in options {
                copy_option(o, *to)?;
            }
            for o in legacy_options {
                match o {
                    CopyLegacyOption::Binary | CopyLegacyOption::Delimiter(_) | CopyLegacyOption::Null(_) | CopyLegacyOption::Csv(_) => {}
                    other => return Err(refuse(&format!("COPY option {other}"))),
                }
            }
            Ok(())
        }
        Statement::StartTransaction { modes: _, begin: _, transaction: _, modifier, statements, exception, has_end_keyword } => {
            need(modifier.is_none(), "this BEGIN modifier")?;
            need(statements.is_empty() && exception.is_none() && !has_end_keyword, "a BEGIN ... END block")
        }
        Statement::Explain { statement, .. } => statement_inner(statement),
        Statement::CreateTable(ct) => create_table(ct),
        Statement::CreateIndex(ci) => create_index(ci),
        _ => Ok(()),
    }
}

/// CREATE TABLE: the runner (`ddl::create_table`) reads the name, columns (refusing column
/// options other than NOT NULL / NULL / PRIMARY KEY / UNIQUE) and PRIMARY KEY / UNIQUE table
/// constraints, and refuses TEMPORARY, AS, LIKE and CLONE itself. Storage parameters: only
/// `fillfactor = 100`, which is what heapstore's heap does (pages are filled).
fn create_table(ct: &sqlparser::ast::CreateTable) -> Result<()> {
    use sqlparser::ast::{CreateTableOptions, HiveDistributionStyle, SqlOption};
    let sqlparser::ast::CreateTable {
        or_replace,
        temporary: _,
        external,
        dynamic,
        // GLOBAL / LOCAL TEMPORARY and ON COMMIT: `ddl::create_table`.
        global: _,
        if_not_exists: _,
        transient,
        volatile,
        iceberg,
        name: _,
        columns,
        constraints,
        hive_distribution,
        hive_formats,
        table_options,
        file_format,
        location,
        query: _,
        without_rowid,
        like: _,
        clone: _,
        version,
        comment,
        on_commit: _,
        on_cluster,
        primary_key,
        order_by,
        partition_by,
        cluster_by,
        clustered_by,
        inherits,
        strict,
        copy_grants,
        enable_schema_evolution,
        change_tracking,
        data_retention_time_in_days,
        max_data_extension_time_in_days,
        default_ddl_collation,
        with_aggregation_policy,
        with_row_access_policy,
        with_tags,
        external_volume,
        base_location,
        catalog,
        catalog_sync,
        storage_serialization_policy,
        target_lag,
        warehouse,
        refresh_mode,
        initialize,
        require_user,
    } = ct;
    need(!or_replace, "CREATE OR REPLACE TABLE")?;
    need(partition_by.is_none(), "PARTITION BY")?;
    need(inherits.is_none(), "INHERITS")?;
    need(
        !external
            && !dynamic
            && !transient
            && !volatile
            && !iceberg
            && matches!(hive_distribution, HiveDistributionStyle::NONE)
            // sqlparser fills an empty HiveFormat for every CREATE TABLE.
            && hive_formats.as_ref().is_none_or(|h| h.row_format.is_none() && h.serde_properties.is_none() && h.storage.is_none() && h.location.is_none())
            && file_format.is_none()
            && location.is_none()
            && !without_rowid
            && version.is_none()
            && comment.is_none()
            && on_cluster.is_none()
            && primary_key.is_none()
            && order_by.is_none()
            && cluster_by.is_none()
            && clustered_by.is_none()
            && !strict
            && !copy_grants
            && enable_schema_evolution.is_none()
            && change_tracking.is_none()
            && data_retention_time_in_days.is_none()
            && max_data_extension_time_in_days.is_none()
            && default_ddl_collation.is_none()
            && with_aggregation_policy.is_none()
            && with_row_access_policy.is_none()
            && with_tags.is_none()
            && external_volume.is_none()
            && base_location.is_none()
            && catalog.is_none()
            && catalog_sync.is_none()
            && storage_serialization_policy.is_none()
            && target_lag.is_none()
            && warehouse.is_none()
            && refresh_mode.is_none()
            && initialize.is_none()
            && !require_user,
        "this CREATE TABLE clause",
    )?;
    match table_options {
        CreateTableOptions::None => {}
        CreateTableOptions::With(opts) => {
            for o in opts {
                let ok = matches!(o, SqlOption::KeyValue { key, value: Expr::Value(v) }
                    if key.value.eq_ignore_ascii_case("fillfactor") && v.value.to_string() == "100");
                need(ok, &format!("storage parameter {o} (only fillfactor = 100)"))?;
            }
        }
        _ => return Err(refuse("these table options")),
    }
    for c in columns {
        for o in &c.options {
            if let sqlparser::ast::ColumnOption::Unique { characteristics, .. } = &o.option {
                need(characteristics.is_none(), "DEFERRABLE constraints")?;
            }
        }
    }
    for c in constraints {
        table_constraint(c)?;
    }
    Ok(())
}

/// The key columns of an index (`ordered`: CREATE INDEX, which reads ASC / DESC and NULLS
/// FIRST / LAST) or of a constraint (where PostgreSQL's grammar has no order).
fn index_columns(cols: &[sqlparser::ast::IndexColumn], ordered: bool) -> Result<()> {
    for c in cols {
        let sqlparser::ast::IndexColumn { column, operator_class } = c;
        need(operator_class.is_none() || ordered, "operator classes in a constraint")?;
        let sqlparser::ast::OrderByExpr { expr, options, with_fill } = column;
        // CREATE INDEX takes expressions (`sql::index` checks them); a constraint, columns.
        need(ordered || matches!(expr, Expr::Identifier(_)), "index expressions")?;
        if !ordered && (options.asc.is_some() || options.nulls_first.is_some()) {
            return Err(PgError::syntax("syntax error: a constraint's columns take no ASC, DESC or NULLS FIRST / LAST"));
        }
        need(with_fill.is_none(), "WITH FILL")?;
    }
    Ok(())
}

pub(crate) fn table_constraint(c: &sqlparser::ast::TableConstraint) -> Result<()> {
    use sqlparser::ast::{NullsDistinctOption, TableConstraint};
    match c {
        TableConstraint::PrimaryKey { name: _, index_name, index_type, columns, index_options, characteristics } => {
            need(index_name.is_none() && index_type.is_none() && index_options.is_empty(), "index options of a constraint")?;
            need(characteristics.is_none(), "DEFERRABLE constraints")?;
            index_columns(columns, false)
        }
        TableConstraint::Unique {
            name: _,
            index_name,
            index_type_display: _,
            index_type,
            columns,
            index_options,
            characteristics,
            nulls_distinct,
        } => {
            need(index_name.is_none() && index_type.is_none() && index_options.is_empty(), "index options of a constraint")?;
            need(characteristics.is_none(), "DEFERRABLE constraints")?;
            need(!matches!(nulls_distinct, NullsDistinctOption::NotDistinct), "UNIQUE NULLS NOT DISTINCT")?;
            index_columns(columns, false)
        }
        // The runner refuses the other constraint kinds (CHECK, FOREIGN KEY, ...).
        _ => Ok(()),
    }
}

/// CREATE INDEX: the runner reads name, table, columns, UNIQUE, IF NOT EXISTS, USING and
/// WHERE, INCLUDE and key expressions, and refuses CONCURRENTLY itself.
fn create_index(ci: &sqlparser::ast::CreateIndex) -> Result<()> {
    let sqlparser::ast::CreateIndex {
        name: _,
        table_name: _,
        using: _,
        columns,
        unique: _,
        concurrently: _,
        if_not_exists: _,
        include: _,
        nulls_distinct,
        with,
        predicate: _,
        index_options,
        alter_options,
    } = ci;
    need(nulls_distinct != &Some(false), "NULLS NOT DISTINCT")?;
    need(with.is_empty(), "index storage parameters")?;
    need(index_options.is_empty() && alter_options.is_empty(), "these index options")?;
    index_columns(columns, true)
}

fn statement_inner(st: &Statement) -> Result<()> {
    statement(st)
}

/// The COPY options `copy::options` reads; the rest (sqlparser knows Snowflake's and others')
/// are refused. Which options go with which direction is checked there, with PostgreSQL's
/// errors.
fn copy_option(o: &CopyOption, _to: bool) -> Result<()> {
    match o {
        CopyOption::Format(_)
        | CopyOption::Freeze(_)
        | CopyOption::Delimiter(_)
        | CopyOption::Null(_)
        | CopyOption::Header(_)
        | CopyOption::Quote(_)
        | CopyOption::Escape(_)
        | CopyOption::ForceQuote(_)
        | CopyOption::ForceNotNull(_)
        | CopyOption::ForceNull(_)
        | CopyOption::Encoding(_) => Ok(()),
    }
}

/// A query: the planner (`sql::query`) destructures `Query` and `Select` exhaustively itself
/// and refuses what it does not implement, so the gate for queries lives there.
pub fn query(_q: &Query) -> Result<()> {
    Ok(())
}

/// One plain table, no join (an alias, without a column list, then names it).
fn single_table(t: &TableWithJoins, stmt: &str) -> Result<()> {
    need(t.joins.is_empty(), "JOIN")?;
    match &t.relation {
        TableFactor::Table { name: _, alias, args, with_hints, version, with_ordinality, partitions, json_path, sample, index_hints } => {
            // An alias names the table (`UPDATE t AS x`); a column list after it is not
            // PostgreSQL's grammar.
            if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                return Err(PgError::syntax(format!("syntax error at or near \"(\" (a column list after {stmt}'s table alias)")));
            }
            need(args.is_none(), "a table function in FROM")?;
            need(sample.is_none(), "TABLESAMPLE")?;
            need(!with_ordinality, "WITH ORDINALITY")?;
            need(
                with_hints.is_empty() && version.is_none() && partitions.is_empty() && json_path.is_none() && index_hints.is_empty(),
                "this table clause",
            )
        }
        TableFactor::Derived { .. } => Err(refuse("a subquery in FROM")),
        TableFactor::Function { .. } | TableFactor::TableFunction { .. } | TableFactor::UNNEST { .. } => Err(refuse("a function in FROM")),
        _ => Err(refuse("this FROM item")),
    }
}

fn insert(i: &Insert) -> Result<()> {
    let Insert {
        or,
        ignore,
        into: _,
        table,
        table_alias,
        columns: _,
        overwrite,
        source,
        assignments,
        partitioned,
        after_columns,
        has_table_keyword,
        on,
        returning,
        replace_into,
        priority,
        insert_alias,
        settings,
        format_clause,
    } = i;
    need(or.is_none() && !ignore && !overwrite && !replace_into && priority.is_none() && insert_alias.is_none(), "this INSERT form")?;
    need(matches!(table, TableObject::TableName(_)) && !has_table_keyword, "INSERT into a function")?;
    let _ = table_alias; // names the target in ON CONFLICT and RETURNING (`dml::insert`)
    need(assignments.is_empty(), "INSERT ... SET")?;
    need(partitioned.is_none() && after_columns.is_empty() && settings.is_none() && format_clause.is_none(), "this INSERT clause")?;
    // ON CONFLICT and RETURNING are bound by `dml::OnConflict` / `dml::Returning`, which read
    // every field; MySQL's ON DUPLICATE KEY UPDATE is refused.
    need(!matches!(on, Some(sqlparser::ast::OnInsert::DuplicateKeyUpdate(_))), "ON DUPLICATE KEY UPDATE")?;
    let _ = returning;
    // INSERT ... DEFAULT VALUES.
    let Some(src) = source else { return Ok(()) };
    if !matches!(&*src.body, SetExpr::Values(_)) {
        // INSERT ... SELECT / VALUES with clauses: the query planner checks the query.
        return query(src);
    }
    let Query { with, body, order_by, limit_clause, fetch, locks, for_clause, settings, format_clause, pipe_operators } = &**src;
    need(
        with.is_none()
            && order_by.is_none()
            && limit_clause.is_none()
            && fetch.is_none()
            && locks.is_empty()
            && for_clause.is_none()
            && settings.is_none()
            && format_clause.is_none()
            && pipe_operators.is_empty(),
        "a clause on INSERT's VALUES",
    )?;
    match &**body {
        SetExpr::Values(v) => need(!v.explicit_row, "VALUES ROW(...)"),
        // INSERT ... SELECT: the query planner checks the query itself.
        SetExpr::Select(_) | SetExpr::Query(_) | SetExpr::SetOperation { .. } => Ok(()),
        _ => Err(refuse("this INSERT source")),
    }
}

fn delete(d: &Delete) -> Result<()> {
    let Delete { tables, from, using, selection: _, returning, order_by, limit } = d;
    need(tables.is_empty(), "DELETE of several tables")?;
    let _ = using; // bound by the planner as a SELECT's FROM items are
    let _ = returning; // bound by `dml::Returning`
    need(order_by.is_empty() && limit.is_none(), "DELETE ... ORDER BY / LIMIT")?;
    let (FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v)) = from;
    match v.as_slice() {
        [t] => single_table(t, "DELETE"),
        _ => Err(refuse("DELETE from several tables")),
    }
}

//! EXPLAIN [ANALYZE] [(ANALYZE, BUFFERS, TIMING, SUMMARY, COSTS OFF, VERBOSE OFF, SETTINGS OFF,
//! WAL OFF, FORMAT TEXT)] for SELECT. An option that would change the output in a way
//! heapstore cannot produce (COSTS, VERBOSE, SETTINGS, WAL on; other formats) is refused.
//!
//! The plan is the shape the executor runs: `Limit` over `Aggregate` over `Seq Scan on t` or
//! `Index Scan using i on t` (as the planner in `sql::dml` chooses; each node only when the
//! query has it). heapstore has no cost model, so plans print as
//! PostgreSQL's `COSTS OFF`. With ANALYZE the statement runs (its rows are discarded) and each
//! node shows `actual time=first..total rows=N loops=1`; with BUFFERS the scan also shows what
//! PostgreSQL does not: the strategy and its ring, ring reuses and escapes, the read stream's
//! reads and their average size, the look-ahead distance reached, time waited for reads, and
//! where a synchronized scan started.
//!
//! Invariant: EXPLAIN without ANALYZE runs nothing and takes no locks beyond the catalog
//! lookup; EXPLAIN ANALYZE runs the statement exactly as it would run on its own.

use super::ddl::table_name;
use crate::access::heap::{self, ScanTrace};
use crate::buffer::{Strategy, StrategyKind};
use crate::error::{PgError, Result};
use crate::session::{QueryResult, Session};
use crate::storage::ForkNumber;
use sqlparser::ast::{Expr, FunctionArguments, LimitClause, Query, SelectItem, SetExpr, Statement, TableFactor, UtilityOption, Value};
use std::fmt::Write as _;
use std::time::Instant;

#[derive(Default)]
struct Options {
    analyze: bool,
    buffers: bool,
    timing: bool,
    /// SUMMARY: the Planning / Execution Time lines (default: with ANALYZE).
    summary: Option<bool>,
}

fn bool_arg(o: &UtilityOption) -> Result<bool> {
    match &o.arg {
        None => Ok(true),
        Some(Expr::Value(v)) => match &v.value {
            Value::Boolean(b) => Ok(*b),
            Value::Number(n, _) => Ok(n != "0"),
            Value::SingleQuotedString(s) => parse_bool_word(s, &o.name.value),
            _ => Err(bad_value(&o.name.value, &v.to_string())),
        },
        Some(Expr::Identifier(id)) => parse_bool_word(&id.value, &o.name.value),
        Some(other) => Err(bad_value(&o.name.value, &other.to_string())),
    }
}

fn parse_bool_word(s: &str, opt: &str) -> Result<bool> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(bad_value(opt, s)),
    }
}

fn bad_value(opt: &str, v: &str) -> PgError {
    PgError::new(crate::error::sqlstate::INVALID_PARAMETER_VALUE, format!("{} requires a Boolean value", opt.to_uppercase()))
        .with_detail(format!("got \"{v}\""))
}

/// Runs an EXPLAIN statement.
pub fn explain(s: &mut Session, stmt: Statement) -> Result<QueryResult> {
    let Statement::Explain { analyze, statement, options, format, .. } = stmt else { unreachable!("explain() takes EXPLAIN") };
    let mut opt = Options { analyze, timing: true, ..Default::default() };
    if format.is_some() {
        return Err(PgError::feature("EXPLAIN formats other than TEXT are not supported"));
    }
    for o in options.unwrap_or_default() {
        match o.name.value.to_ascii_lowercase().as_str() {
            "analyze" => opt.analyze = bool_arg(&o)?,
            "buffers" => opt.buffers = bool_arg(&o)?,
            "timing" => opt.timing = bool_arg(&o)?,
            // Plans print as COSTS OFF (there is no cost model): COSTS ON cannot be honoured.
            "costs" => {
                if bool_arg(&o)? {
                    return Err(PgError::feature(
                        "EXPLAIN (COSTS) is not supported: heapstore has no cost model (plans print as COSTS OFF)",
                    ));
                }
            }
            "summary" => opt.summary = Some(bool_arg(&o)?),
            name @ ("verbose" | "settings" | "wal") => {
                if bool_arg(&o)? {
                    return Err(PgError::feature(format!("EXPLAIN ({}) is not supported by heapstore", name.to_ascii_uppercase())));
                }
            }
            "format" => {
                let v = o.arg.as_ref().map(|a| a.to_string().to_ascii_lowercase()).unwrap_or_default();
                if v != "text" {
                    return Err(PgError::feature("EXPLAIN formats other than TEXT are not supported"));
                }
            }
            other => {
                return Err(PgError::syntax(format!("unrecognized EXPLAIN option \"{other}\"")));
            }
        }
    }
    let Statement::Query(q) = *statement else {
        return Err(PgError::feature("EXPLAIN supports SELECT only"));
    };
    let planning_start = Instant::now();
    let shape = Shape::of(s, &q)?;
    let planning_ns = planning_start.elapsed().as_nanos() as u64;
    let mut lines = Vec::new();
    let summary = opt.summary.unwrap_or(opt.analyze);
    if !opt.analyze {
        shape.render(s, None, &opt, &mut lines)?;
        if summary {
            lines.push(format!("Planning Time: {:.3} ms", planning_ns as f64 / 1e6));
        }
    } else {
        let t0 = Instant::now();
        let (r, traces) = heap::traced(|| super::select::run_query(s, *q));
        let r = r?;
        let exec_ns = t0.elapsed().as_nanos() as u64;
        let out_rows = r.rows.len() as u64;
        shape.render(s, Some(Actuals { traces, out_rows, exec_ns }), &opt, &mut lines)?;
        if summary {
            lines.push(format!("Planning Time: {:.3} ms", planning_ns as f64 / 1e6));
            lines.push(format!("Execution Time: {:.3} ms", exec_ns as f64 / 1e6));
        }
    }
    Ok(QueryResult {
        tag: "EXPLAIN".into(),
        columns: vec![("QUERY PLAN".into(), "text".into())],
        rows: lines.into_iter().map(|l| vec![Some(l)]).collect(),
        returns_rows: true,
        notices: vec![],
        wrote_to_client: false,
        column_sources: vec![],
    })
}

/// The plan's nodes, read off the query.
struct Shape {
    table: Option<String>,
    aggregate: bool,
    limit: Option<String>,
    filter: Option<String>,
    /// The index the planner chose, and what it bounds.
    index: Option<(String, String)>,
}

struct Actuals {
    traces: Vec<ScanTrace>,
    out_rows: u64,
    exec_ns: u64,
}

impl Shape {
    fn of(s: &Session, q: &Query) -> Result<Shape> {
        let limit = match &q.limit_clause {
            Some(LimitClause::LimitOffset { limit: Some(l), .. }) => Some(l.to_string()),
            _ => None,
        };
        let SetExpr::Select(sel) = q.body.as_ref() else {
            return Err(PgError::feature("EXPLAIN supports simple SELECT only"));
        };
        let table = match sel.from.first().map(|f| &f.relation) {
            Some(TableFactor::Table { name, .. }) => {
                let n = table_name(name)?;
                if n != "pg_locks" || s.lookup_table("pg_locks").is_some() {
                    s.table(&n)?;
                }
                Some(n)
            }
            None => None,
            Some(_) => return Err(PgError::feature("only tables can be selected from")),
        };
        let aggregate = sel.projection.iter().any(|it| {
            matches!(it, SelectItem::UnnamedExpr(Expr::Function(f)) | SelectItem::ExprWithAlias { expr: Expr::Function(f), .. }
                if matches!(f.args, FunctionArguments::List(_)) && f.name.to_string().eq_ignore_ascii_case("count"))
        });
        let mut index = None;
        if let (Some(t), Some(_)) = (&table, &sel.selection) {
            if let Some(tab) = s.lookup_table(t) {
                let plan = super::dml::plan_select(tab.clone(), &sel.projection, sel.selection.as_ref(), None)?;
                if let super::dml::Access::Index { idx, eq, lo, hi } = &plan.plan.access {
                    let ix = &tab.indexes[*idx];
                    let col = |k: usize| tab.columns[ix.columns[k]].name.clone();
                    let mut cond: Vec<String> = (0..eq.len()).map(|k| format!("{} = ...", col(k))).collect();
                    if lo.is_some() || hi.is_some() {
                        let bounds = [lo.as_ref().map(|l| if l.1 { ">=" } else { ">" }), hi.as_ref().map(|h| if h.1 { "<=" } else { "<" })];
                        for b in bounds.into_iter().flatten() {
                            cond.push(format!("{} {b} ...", col(eq.len())));
                        }
                    }
                    index = Some((ix.name.clone(), cond.join(" AND ")));
                }
            }
        }
        Ok(Shape { table, aggregate, limit, filter: sel.selection.as_ref().map(|e| format!("({e})")), index })
    }

    fn render(&self, s: &Session, act: Option<Actuals>, opt: &Options, out: &mut Vec<String>) -> Result<()> {
        let trace = act.as_ref().and_then(|a| a.traces.first());
        let scan_rows = trace.map(|t| t.stats.tuples_visible).unwrap_or(0);
        let total_ms = |ns: u64| ns as f64 / 1e6;
        let scan_first = trace.and_then(|t| t.first_row_ns).unwrap_or(0);
        let scan_total = trace.map(|t| t.total_ns).unwrap_or(0);
        let exec = act.as_ref().map(|a| a.exec_ns).unwrap_or(0);
        let actual = |first: u64, total: u64, rows: u64| -> String {
            if act.is_none() {
                return String::new();
            }
            if opt.timing {
                format!(" (actual time={:.3}..{:.3} rows={rows} loops=1)", total_ms(first), total_ms(total))
            } else {
                format!(" (actual rows={rows} loops=1)")
            }
        };
        let buffers = |t: &ScanTrace| {
            format!("Buffers: shared hit={} read={}", t.stats.stream.hits + t.stats.stream.foreign, t.stats.stream.blocks_read)
        };
        let mut depth = 0usize;
        let push = |out: &mut Vec<String>, depth: &mut usize, text: String, details: Vec<String>| {
            let (prefix, pad) = if *depth == 0 {
                (String::new(), "  ".to_string())
            } else {
                let p = " ".repeat(6 * (*depth - 1) + 2);
                (format!("{p}->  "), format!("{p}      "))
            };
            out.push(format!("{prefix}{text}"));
            for d in details {
                out.push(format!("{pad}{d}"));
            }
            *depth += 1;
        };
        let out_rows = act.as_ref().map(|a| a.out_rows).unwrap_or(0);
        let scan_buffers: Vec<String> = match (opt.buffers, trace) {
            (true, Some(t)) if t.index.is_none() => vec![buffers(t)],
            _ => vec![],
        };
        if self.limit.is_some() {
            push(out, &mut depth, format!("Limit{}", actual(scan_first, exec, out_rows)), scan_buffers.clone());
        }
        if self.aggregate {
            let rows = if act.is_some() && self.limit.as_deref() == Some("0") { 0 } else { 1 };
            push(out, &mut depth, format!("Aggregate{}", actual(scan_total, scan_total, rows)), scan_buffers.clone());
        }
        let Some(table) = &self.table else {
            push(out, &mut depth, format!("Result{}", actual(0, 0, out_rows)), vec![]);
            return Ok(());
        };
        if table == "pg_locks" && s.lookup_table("pg_locks").is_none() {
            push(out, &mut depth, format!("Function Scan on pg_lock_status l{}", actual(0, 0, out_rows)), vec![]);
            return Ok(());
        }
        let mut details = Vec::new();
        if let Some((name, cond)) = &self.index {
            details.push(format!("Index Cond: ({cond})"));
            if let Some(f) = &self.filter {
                details.push(format!("Recheck: {f}"));
            }
            push(out, &mut depth, format!("Index Scan using {name} on {table}{}", actual(scan_first, scan_total, scan_rows)), details);
            return Ok(());
        }
        if let Some(f) = &self.filter {
            details.push(format!("Filter: {f}"));
        }
        match trace {
            Some(t) if opt.buffers => {
                details.push(buffers(t));
                details.extend(io_lines(s, t));
            }
            Some(_) => {}
            None if opt.buffers || act.is_none() => {
                // Not run (or not reached): say what the scan would use.
                let tab = s.table(table)?;
                let pool = &s.shared.pool;
                let nblocks = pool.smgr().nblocks(tab.relfile, ForkNumber::Main)?;
                if nblocks as usize > pool.nbuffers() as usize / 4 {
                    let st = Strategy::bulkread(pool, &pool.scan_settings());
                    details.push(format!(
                        "Strategy: {} ring {} kB ({} buffers); relation {} blocks",
                        kind_name(st.kind()),
                        st.ring_size_blocks() * pool.block_size() / 1024,
                        st.ring_size_blocks(),
                        nblocks
                    ));
                } else {
                    details.push(format!("Strategy: normal (relation {nblocks} blocks fits in a quarter of shared_buffers)"));
                }
            }
            None => {}
        }
        push(out, &mut depth, format!("Seq Scan on {table}{}", actual(scan_first, scan_total, scan_rows)), details);
        Ok(())
    }
}

fn kind_name(k: StrategyKind) -> &'static str {
    match k {
        StrategyKind::BulkRead => "bulkread",
        StrategyKind::BulkWrite => "bulkwrite",
        StrategyKind::Vacuum => "vacuum",
    }
}

/// The lines PostgreSQL's EXPLAIN does not have: strategy, ring, read stream, sync scan.
fn io_lines(s: &Session, t: &ScanTrace) -> Vec<String> {
    let st = &t.stats;
    let bs = s.shared.pool.block_size();
    let mut v = Vec::new();
    match st.strategy {
        Some((kind, blocks)) => v.push(format!(
            "Strategy: {} ring {} kB ({} buffers): {} reused, {} escapes, {} dirty rejected",
            kind_name(kind),
            blocks * bs / 1024,
            blocks,
            st.ring_reuses,
            st.ring_escapes,
            st.ring_rejected
        )),
        None => v.push("Strategy: normal".into()),
    }
    let rs = &st.stream;
    let mut line = String::new();
    let avg = if rs.reads > 0 { rs.blocks_read as f64 / rs.reads as f64 } else { 0.0 };
    let _ = write!(
        line,
        "I/O: io_method={} reads={} avg={:.1} blocks, look-ahead distance max={} (limit {}), read wait={:.3} ms",
        st.io_method,
        rs.reads,
        avg,
        rs.max_distance,
        rs.distance_limit,
        rs.wait_ns as f64 / 1e6
    );
    v.push(line);
    if st.start_block != 0 {
        v.push(format!("Synchronized Scan: started at block {} of {}", st.start_block, st.nblocks));
    }
    v
}

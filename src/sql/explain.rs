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

use super::dml;
use super::expr::{self, Scalar};
use crate::access::heap::{Flow, ScanTrace};
use crate::buffer::{Strategy, StrategyKind};
use crate::error::{PgError, Result};
use crate::exec::{self, Node};
use crate::session::{QueryResult, Session};
use crate::storage::ForkNumber;
use crate::types::{SqlType, Value};
use sqlparser::ast::{Expr, Statement, UtilityOption, Value as AstValue};
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
            AstValue::Boolean(b) => Ok(*b),
            AstValue::Number(n, _) => Ok(n != "0"),
            AstValue::SingleQuotedString(s) => parse_bool_word(s, &o.name.value),
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
    let q = match *statement {
        Statement::Query(q) => q,
        st @ (Statement::Update { .. } | Statement::Delete(_)) => {
            if opt.analyze {
                return Err(PgError::feature("EXPLAIN ANALYZE of UPDATE or DELETE is not supported by heapstore yet"));
            }
            // The row source under PostgreSQL's ModifyTable line.
            let planning_start = Instant::now();
            let (title, node) = super::dml::explain_change(s, &st)?;
            let planning_ns = planning_start.elapsed().as_nanos() as u64;
            let mut r = Render { s, opt: &opt, stats: None, lines: Vec::new(), subplans: 0, outer_names: None };
            r.push(0, title, Vec::new());
            r.node(&node, 1, Vec::new())?;
            let mut lines = r.lines;
            if opt.summary == Some(true) {
                lines.push(format!("Planning Time: {:.3} ms", planning_ns as f64 / 1e6));
            }
            return Ok(plan_result(lines));
        }
        _ => return Err(PgError::feature("EXPLAIN supports SELECT, UPDATE and DELETE only")),
    };
    let planning_start = Instant::now();
    let now = s.txn.as_ref().map(|t| t.start_us);
    let b = super::query::Planner::new(s, now).query(&q, &[])?;
    let planning_ns = planning_start.elapsed().as_nanos() as u64;
    let summary = opt.summary.unwrap_or(opt.analyze);
    let mut stats = None;
    let mut exec_ns = 0;
    if opt.analyze {
        exec::lock_tables(s, &b.node)?;
        let snap = s.snapshot();
        let mut ex = exec::Exec::new(s, snap, &[]);
        ex.stats = Some(Default::default());
        let t0 = Instant::now();
        ex.run(&b.node, &[], &mut |_| Ok(Flow::Continue))?;
        exec_ns = t0.elapsed().as_nanos() as u64;
        stats = ex.stats.map(|c| c.into_inner());
    }
    let mut r = Render { s, opt: &opt, stats: stats.as_ref(), lines: Vec::new(), subplans: 0, outer_names: None };
    r.node(&b.node, 0, Vec::new())?;
    let mut lines = r.lines;
    if summary {
        lines.push(format!("Planning Time: {:.3} ms", planning_ns as f64 / 1e6));
        if opt.analyze {
            lines.push(format!("Execution Time: {:.3} ms", exec_ns as f64 / 1e6));
        }
    }
    Ok(plan_result(lines))
}

/// EXPLAIN's result: one text column, `QUERY PLAN`, a row per line.
fn plan_result(lines: Vec<String>) -> QueryResult {
    QueryResult {
        tag: "EXPLAIN".into(),
        columns: vec![("QUERY PLAN".into(), "text".into())],
        rows: lines.into_iter().map(|l| vec![Some(l)]).collect(),
        returns_rows: true,
        notices: vec![],
        wrote_to_client: false,
        column_sources: vec![],
    }
}

/// The output column names of a node (for showing expressions over its rows).
fn names(node: &Node) -> Vec<String> {
    match node {
        Node::Unit => Vec::new(),
        Node::Values(_, w) => (1..=*w).map(|i| format!("\"*VALUES*\".column{i}")).collect(),
        Node::Scan(p) => {
            let mut n: Vec<String> = p.table.columns.iter().map(|c| c.name.clone()).collect();
            if p.tid_col {
                n.push("ctid".into());
            }
            n
        }
        Node::Filter(i, _) | Node::Sort(i, _) | Node::Limit(i, ..) | Node::Distinct(i, _) => names(i),
        Node::LockRows(l) => {
            let mut n = names(&l.input);
            n.pop();
            n
        }
        Node::Project(i, es) => {
            let n = names(i);
            es.iter().map(|e| show(e, &n)).collect()
        }
        Node::Join(j) => {
            let mut n = names(&j.left);
            n.extend(names(&j.right));
            n
        }
        Node::Agg(i, g, a) => {
            let n = names(i);
            let mut out: Vec<String> = g.iter().map(|e| show(e, &n)).collect();
            out.extend(a.iter().map(|c| agg_text(c, &n)));
            out
        }
        Node::SetOp(_, _, l, _) => names(l),
        Node::Window(i, w) => {
            let mut n = names(i);
            let base = n.clone();
            n.extend(w.iter().map(|c| format!("{}(...) OVER (...)", win_name(c, &base))));
            n
        }
        Node::Cte(c) => c.columns.iter().map(|n| format!("{}.{n}", c.name)).collect(),
        Node::WorkTable(_, w) => (1..=*w).map(|i| format!("worktable.col{i}")).collect(),
        Node::RecursiveUnion(r) => names(&r.nonrec),
        Node::Function(f) => {
            let mut out: Vec<String> =
                f.calls.iter().flat_map(|c| c.columns.clone().unwrap_or_else(|| crate::sql::srf::column_names(c)).into_iter()).collect();
            if f.ordinality {
                out.push("ordinality".into());
            }
            out
        }
        Node::ProjectSet(i, calls) => {
            let mut n = names(i);
            let base = n.clone();
            n.extend(calls.iter().map(|c| format!("{}({})", c.name, c.args.iter().map(|a| show(a, &base)).collect::<Vec<_>>().join(", "))));
            n
        }
    }
}

fn win_name(c: &exec::WinCall, _n: &[String]) -> String {
    match &c.kind {
        exec::window::WinKind::Func(f) => format!("{f:?}").to_lowercase(),
        exec::window::WinKind::Agg(a) => a.func.sql_name().to_string(),
    }
}

fn agg_text(c: &exec::AggCall, n: &[String]) -> String {
    let name = match c.func {
        exec::AggFunc::CountStar => return "count(*)".into(),
        exec::AggFunc::Ordered(_) => {
            let direct: Vec<String> = c.args.iter().skip(1).map(|a| show(a, n)).collect();
            let key = c.order.first().map(|k| show(&k.expr, n)).unwrap_or_default();
            return format!("{}({}) WITHIN GROUP (ORDER BY {key})", c.func.sql_name(), direct.join(", "));
        }
        f => f.sql_name().to_string(),
    };
    let args: Vec<String> = c.args.iter().map(|a| show(a, n)).collect();
    format!("{name}({}{})", if c.distinct { "DISTINCT " } else { "" }, args.join(", "))
}

/// An expression in EXPLAIN's style: operators parenthesized, constants quoted with their
/// type.
fn show(e: &Scalar, n: &[String]) -> String {
    let sh = |x: &Scalar| show(x, n);
    match e {
        Scalar::Col(i, _) => n.get(*i).cloned().unwrap_or_else(|| format!("${i}")),
        Scalar::Outer(d, i, _) => format!("outer{d}.col{}", i + 1),
        Scalar::Const(Value::Null) => "NULL".into(),
        Scalar::Const(v) => {
            let ty = expr::value_type(v).unwrap_or(SqlType::new(crate::types::TypeId::Text));
            let text = v.to_text(&ty).unwrap_or_default();
            match v {
                Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Float8(_) if !text.starts_with('-') => text,
                Value::Bool(b) => b.to_string(),
                _ => format!("'{}'::{}", text.replace('\'', "''"), ty.name()),
            }
        }
        Scalar::Unknown(t) => format!("'{}'", t.replace('\'', "''")),
        Scalar::Param(k, _) => format!("${k}"),
        Scalar::Arith(op, a, b) => {
            let o = match op {
                expr::ArithOp::Add => "+",
                expr::ArithOp::Sub => "-",
                expr::ArithOp::Mul => "*",
                expr::ArithOp::Div => "/",
                expr::ArithOp::Mod => "%",
            };
            format!("({} {o} {})", sh(a), sh(b))
        }
        Scalar::Concat(a, b) => format!("({} || {})", sh(a), sh(b)),
        Scalar::Neg(a) => format!("(- {})", sh(a)),
        Scalar::Cmp(op, a, b) => format!("({} {} {})", sh(a), op.symbol(), sh(b)),
        Scalar::And(a, b) => format!("({} AND {})", sh(a), sh(b)),
        Scalar::Or(a, b) => format!("({} OR {})", sh(a), sh(b)),
        Scalar::Not(a) => format!("(NOT {})", sh(a)),
        Scalar::IsNull(a, neg) => format!("({} IS {}NULL)", sh(a), if *neg { "NOT " } else { "" }),
        Scalar::InList(a, items, neg) => {
            format!("({} {}IN ({}))", sh(a), if *neg { "NOT " } else { "" }, items.iter().map(sh).collect::<Vec<_>>().join(", "))
        }
        Scalar::Cast(a, t) => format!("({})::{}", sh(a), t.name()),
        Scalar::Func(super::func::Func::Json(jf), args, _) => super::jsonfn::show(*jf, &args.iter().map(sh).collect::<Vec<_>>()),
        Scalar::Func(f, args, _) => format!("{}({})", format!("{f:?}").to_lowercase(), args.iter().map(sh).collect::<Vec<_>>().join(", ")),
        Scalar::Case(whens, els, _) => {
            let mut out = String::from("CASE");
            for (c, v) in whens {
                let _ = write!(out, " WHEN {} THEN {}", sh(c), sh(v));
            }
            if let Some(e) = els {
                let _ = write!(out, " ELSE {}", sh(e));
            }
            out + " END"
        }
        Scalar::Coalesce(items, _) => format!("COALESCE({})", items.iter().map(sh).collect::<Vec<_>>().join(", ")),
        Scalar::NullIf(a, b) => format!("NULLIF({}, {})", sh(a), sh(b)),
        Scalar::Lookup(a, t, _) => format!("{}({})", t.name, sh(a)),
        Scalar::Regex(a, re, n) => format!("({} {} '{}')", sh(a), if *n { "!~" } else { "~" }, re.as_str()),
        Scalar::MinMax(g, items, _) => {
            format!("{}({})", if *g { "GREATEST" } else { "LEAST" }, items.iter().map(sh).collect::<Vec<_>>().join(", "))
        }
        Scalar::Like(a, b, neg, ci, _) => {
            let op = match (neg, ci) {
                (false, false) => "~~",
                (true, false) => "!~~",
                (false, true) => "~~*",
                (true, true) => "!~~*",
            };
            format!("({} {op} {})", sh(a), sh(b))
        }
        Scalar::IsDistinct(a, b, not) => format!("({} IS {}DISTINCT FROM {})", sh(a), if *not { "NOT " } else { "" }, sh(b)),
        Scalar::IsBool(a, w, not) => {
            let w = match w {
                Some(true) => "TRUE",
                Some(false) => "FALSE",
                None => "UNKNOWN",
            };
            format!("({} IS {}{w})", sh(a), if *not { "NOT " } else { "" })
        }
        Scalar::SubLink(l) => match l.kind {
            exec::SubKind::Exists => "(EXISTS (SubPlan))".into(),
            exec::SubKind::Scalar => "(SubPlan)".into(),
            exec::SubKind::Array => "ARRAY(SubPlan)".into(),
            exec::SubKind::RowCompare(op) => {
                format!("(ROW({}) {} (SubPlan))", l.lhs_row.iter().map(sh).collect::<Vec<_>>().join(", "), op.symbol())
            }
            exec::SubKind::Any(op) if !l.lhs_row.is_empty() => {
                format!("(({}) {} ANY (SubPlan))", l.lhs_row.iter().map(sh).collect::<Vec<_>>().join(", "), op.symbol())
            }
            exec::SubKind::All(op) if !l.lhs_row.is_empty() => {
                format!("(({}) {} ALL (SubPlan))", l.lhs_row.iter().map(sh).collect::<Vec<_>>().join(", "), op.symbol())
            }
            exec::SubKind::Any(op) => format!("({} {} ANY (SubPlan))", l.lhs.as_ref().map(sh).unwrap_or_default(), op.symbol()),
            exec::SubKind::All(op) => format!("({} {} ALL (SubPlan))", l.lhs.as_ref().map(sh).unwrap_or_default(), op.symbol()),
        },
        Scalar::Agg(..) | Scalar::Win(..) | Scalar::Srf(..) => "?".into(),
    }
}

struct Render<'a> {
    s: &'a Session,
    opt: &'a Options,
    stats: Option<&'a std::collections::HashMap<usize, exec::NodeStats>>,
    lines: Vec<String>,
    subplans: usize,
    /// The outer row's column names, while the inner index scan of an index nested loop is
    /// rendered (its Index Cond reads the outer row).
    outer_names: Option<Vec<String>>,
}

impl Render<'_> {
    fn push(&mut self, depth: usize, text: String, details: Vec<String>) {
        let (prefix, pad) = if depth == 0 {
            (String::new(), "  ".to_string())
        } else {
            let p = " ".repeat(6 * (depth - 1) + 2);
            (format!("{p}->  "), format!("{p}      "))
        };
        self.lines.push(format!("{prefix}{text}"));
        for d in details {
            self.lines.push(format!("{pad}{d}"));
        }
    }

    fn actual(&self, node: &Node) -> String {
        let Some(stats) = self.stats else { return String::new() };
        let ms = |ns: u64| ns as f64 / 1e6;
        match stats.get(&(node as *const Node as usize)) {
            None => " (never executed)".into(),
            Some(st) => {
                let loops = st.loops.max(1);
                let rows = st.rows / loops;
                if self.opt.timing {
                    format!(
                        " (actual time={:.3}..{:.3} rows={rows} loops={})",
                        ms(st.first_ns.unwrap_or(st.total_ns) / loops),
                        ms(st.total_ns / loops),
                        st.loops
                    )
                } else {
                    format!(" (actual rows={rows} loops={})", st.loops)
                }
            }
        }
    }

    fn node_stats(&self, node: &Node) -> Option<&exec::NodeStats> {
        self.stats.and_then(|m| m.get(&(node as *const Node as usize)))
    }

    /// Renders `node` at `depth`, with `extra` detail lines from a parent folded into it
    /// (a Filter's condition, a projection being invisible).
    fn node(&mut self, node: &Node, depth: usize, mut extra: Vec<String>) -> Result<()> {
        let act = self.actual(node);
        match node {
            Node::Unit => self.push(depth, format!("Result{act}"), extra),
            Node::Values(..) => self.push(depth, format!("Values Scan on \"*VALUES*\"{act}"), extra),
            Node::Project(i, _) => self.node(i, depth, extra)?,
            Node::Filter(i, cond) => {
                let n = names(i);
                let what = if matches!(**i, Node::Join(_)) { "Join Filter" } else { "Filter" };
                extra.insert(0, format!("{what}: {}", show(cond, &n)));
                self.node(i, depth, extra)?;
                self.sublinks(cond, depth)?;
            }
            Node::Scan(p) => self.scan(node, p, depth, extra)?,
            Node::Join(j) => {
                let ln = names(&j.left);
                let rn = names(&j.right);
                let mut all = ln.clone();
                all.extend(rn.iter().cloned());
                // PostgreSQL names a join from its outer (probe) input's side: a LEFT join
                // that hashes its left input is a Right join of the right input to it.
                let kind = match (j.kind, j.build_left) {
                    (exec::JoinKind::Inner, _) => "",
                    (exec::JoinKind::Left, false) | (exec::JoinKind::Right, true) => " Left Join",
                    (exec::JoinKind::Right, false) | (exec::JoinKind::Left, true) => " Right Join",
                    (exec::JoinKind::Full, _) => " Full Join",
                };
                let mut details = Vec::new();
                let title = if j.keys.is_empty() || j.inner_index {
                    format!("Nested Loop{kind}")
                } else if j.merge {
                    let conds: Vec<String> = j.keys.iter().map(|(a, b)| format!("({} = {})", show(a, &ln), show(b, &rn))).collect();
                    details.push(format!(
                        "Merge Cond: {}",
                        if conds.len() == 1 { conds[0].clone() } else { format!("({})", conds.join(" AND ")) }
                    ));
                    format!("Merge{}", if kind.is_empty() { " Join".to_string() } else { kind.to_string() })
                } else {
                    let conds: Vec<String> = j
                        .keys
                        .iter()
                        .map(|(a, b)| {
                            let (a, b) = (show(a, &ln), show(b, &rn));
                            if j.build_left {
                                format!("({b} = {a})")
                            } else {
                                format!("({a} = {b})")
                            }
                        })
                        .collect();
                    details.push(format!(
                        "Hash Cond: {}",
                        if conds.len() == 1 { conds[0].clone() } else { format!("({})", conds.join(" AND ")) }
                    ));
                    format!("Hash{}", if kind.is_empty() { " Join".to_string() } else { kind.to_string() })
                };
                if let Some(c) = &j.cond {
                    details.push(format!("Join Filter: {}", show(c, &all)));
                }
                details.extend(extra);
                self.push(depth, format!("{title}{act}"), details);
                if j.inner_index {
                    self.node(&j.left, depth + 1, Vec::new())?;
                    self.outer_names = Some(ln.clone());
                    let r = self.node(&j.right, depth + 1, Vec::new());
                    self.outer_names = None;
                    return r;
                }
                if j.merge {
                    self.node(&j.left, depth + 1, Vec::new())?;
                    self.node(&j.right, depth + 1, Vec::new())?;
                    return Ok(());
                }
                // The probe input first, then the hashed (or materialized) one under it.
                let (probe, build) = if j.build_left { (&j.right, &j.left) } else { (&j.left, &j.right) };
                self.node(probe, depth + 1, Vec::new())?;
                let mut hd = Vec::new();
                if let (Some(st), false) = (self.node_stats(node), j.keys.is_empty()) {
                    if st.disk_bytes > 0 {
                        hd.push(format!(
                            "Buckets: {0}  Batches: {0}  Disk Usage: {1}kB",
                            exec::agg::PARTITIONS,
                            st.disk_bytes.div_ceil(1024)
                        ));
                    } else {
                        hd.push(format!("Batches: 1  Memory Usage: {}kB", st.mem_bytes.div_ceil(1024)));
                    }
                }
                let inner = if j.keys.is_empty() { "Materialize" } else { "Hash" };
                self.push(depth + 1, inner.to_string(), hd);
                self.node(build, depth + 2, Vec::new())?;
            }
            Node::Agg(i, g, a) => {
                let n = names(i);
                let mut details = Vec::new();
                let title = if g.is_empty() {
                    "Aggregate"
                } else {
                    details.push(format!("Group Key: {}", g.iter().map(|e| show(e, &n)).collect::<Vec<_>>().join(", ")));
                    "HashAggregate"
                };
                for c in a {
                    if let Some(f) = &c.filter {
                        details.push(format!("Filter ({}): {}", agg_text(c, &n), show(f, &n)));
                    }
                }
                if let (Some(st), true) = (self.node_stats(node), !g.is_empty()) {
                    if st.disk_bytes > 0 {
                        details.push(format!(
                            "Batches: {}  Memory Usage: {}kB  Disk Usage: {}kB",
                            exec::agg::PARTITIONS + 1,
                            st.mem_bytes.div_ceil(1024),
                            st.disk_bytes.div_ceil(1024)
                        ));
                    } else {
                        details.push(format!("Batches: 1  Memory Usage: {}kB", st.mem_bytes.div_ceil(1024)));
                    }
                }
                details.extend(extra);
                self.push(depth, format!("{title}{act}"), details);
                self.node(i, depth + 1, Vec::new())?;
            }
            Node::Sort(i, keys) => {
                let n = names(i);
                let mut details = vec![format!(
                    "Sort Key: {}",
                    keys.iter()
                        .map(|k| {
                            let mut t = show(&k.expr, &n);
                            if k.desc {
                                t.push_str(" DESC");
                            }
                            if k.nulls_first != k.desc {
                                t.push_str(if k.nulls_first { " NULLS FIRST" } else { " NULLS LAST" });
                            }
                            t
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                )];
                if let Some(st) = self.node_stats(node) {
                    if st.disk_bytes > 0 {
                        details.push(format!("Sort Method: external merge  Disk: {}kB", st.disk_bytes.div_ceil(1024)));
                    } else {
                        details.push(format!("Sort Method: quicksort  Memory: {}kB", st.mem_bytes.div_ceil(1024)));
                    }
                }
                details.extend(extra);
                self.push(depth, format!("Sort{act}"), details);
                self.node(i, depth + 1, Vec::new())?;
            }
            Node::Limit(i, ..) => {
                self.push(depth, format!("Limit{act}"), extra);
                self.node(i, depth + 1, Vec::new())?;
            }
            Node::LockRows(l) => {
                self.push(depth, format!("LockRows{act}"), extra);
                self.node(&l.input, depth + 1, Vec::new())?;
            }
            Node::Distinct(i, k) => {
                let n = names(i);
                let sorted_input = matches!(&**i, Node::Project(inner, _) if matches!(**inner, Node::Sort(..)));
                if sorted_input {
                    self.push(depth, format!("Unique{act}"), extra);
                } else {
                    let mut d = vec![format!("Group Key: {}", n.iter().take(*k).cloned().collect::<Vec<_>>().join(", "))];
                    d.extend(extra);
                    self.push(depth, format!("HashAggregate{act}"), d);
                }
                self.node(i, depth + 1, Vec::new())?;
            }
            Node::SetOp(kind, all, l, r) => {
                let title = match (kind, all) {
                    (exec::SetOpKind::Union, true) => "Append".to_string(),
                    (exec::SetOpKind::Union, false) => "HashAggregate".to_string(),
                    (exec::SetOpKind::Intersect, a) => format!("HashSetOp Intersect{}", if *a { " All" } else { "" }),
                    (exec::SetOpKind::Except, a) => format!("HashSetOp Except{}", if *a { " All" } else { "" }),
                };
                self.push(depth, format!("{title}{act}"), extra);
                let d = if matches!((kind, all), (exec::SetOpKind::Union, false)) {
                    self.push(depth + 1, "Append".into(), Vec::new());
                    depth + 2
                } else {
                    depth + 1
                };
                self.node(l, d, Vec::new())?;
                self.node(r, d, Vec::new())?;
            }
            Node::Window(i, _) => {
                self.push(depth, format!("WindowAgg{act}"), extra);
                self.node(i, depth + 1, Vec::new())?;
            }
            Node::Cte(c) => {
                self.push(depth, format!("CTE Scan on {}{act}", c.name), extra);
                self.node(&c.node, depth + 1, Vec::new())?;
            }
            Node::Function(f) => {
                let name = f.calls.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
                self.push(depth, format!("Function Scan on {name}{act}"), extra);
            }
            Node::ProjectSet(i, _) => {
                self.push(depth, format!("ProjectSet{act}"), extra);
                self.node(i, depth + 1, Vec::new())?;
            }
            Node::WorkTable(..) => self.push(depth, format!("WorkTable Scan{act}"), extra),
            Node::RecursiveUnion(r) => {
                self.push(depth, format!("Recursive Union{act}"), extra);
                self.node(&r.nonrec, depth + 1, Vec::new())?;
                self.node(&r.rec, depth + 1, Vec::new())?;
            }
        }
        Ok(())
    }

    /// SubPlan / InitPlan children for the subqueries inside `e`.
    fn sublinks(&mut self, e: &Scalar, depth: usize) -> Result<()> {
        let mut links = Vec::new();
        e.visit(&mut |x| {
            if let Scalar::SubLink(l) = x {
                links.push(l.clone());
            }
        });
        for l in links {
            self.subplans += 1;
            let title = if l.correlated {
                format!("SubPlan {}", self.subplans)
            } else {
                format!("InitPlan {} (returns ${})", self.subplans, self.subplans - 1)
            };
            let pad = " ".repeat(6 * depth + 2);
            self.lines.push(format!("{pad}{title}"));
            self.node(&l.plan, depth + 1, Vec::new())?;
        }
        Ok(())
    }

    fn scan(&mut self, node: &Node, p: &dml::Plan, depth: usize, extra: Vec<String>) -> Result<()> {
        let s = self.s;
        let act = self.actual(node);
        let table = &p.table;
        let n: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        let trace = self.node_stats(node).and_then(|st| st.scans.first().cloned());
        let mut details = Vec::new();
        if let dml::Access::Index { idx, eq, lo, hi, not_null } = &p.access {
            let ix = &table.indexes[*idx];
            let exprs = crate::sql::index::bind_key_exprs(table, ix)?;
            let expr_at = |k: usize| ix.columns[..k].iter().filter(|&&c| c == crate::catalog::EXPR_KEY).count();
            // A key expression as the conditions on it show it.
            let col = |k: usize| match table.columns.get(ix.columns[k]) {
                Some(c) => c.name.clone(),
                None => show(&exprs[expr_at(k)], &n),
            };
            let eq_names = self.outer_names.take().unwrap_or_else(|| n.clone());
            let mut cond: Vec<String> = eq.iter().enumerate().map(|(k, v)| format!("({} = {})", col(k), show(v, &eq_names))).collect();
            if let Some((v, inc)) = lo {
                cond.push(format!("({} {} {})", col(eq.len()), if *inc { ">=" } else { ">" }, show(v, &n)));
            }
            if let Some((v, inc)) = hi {
                cond.push(format!("({} {} {})", col(eq.len()), if *inc { "<=" } else { "<" }, show(v, &n)));
            }
            if *not_null && hi.is_none() {
                cond.push(format!("({} IS NOT NULL)", col(eq.len())));
            }
            if !cond.is_empty() {
                details
                    .push(format!("Index Cond: {}", if cond.len() == 1 { cond[0].clone() } else { format!("({})", cond.join(" AND ")) }));
            }
            // The conditions the index bounds are checked again on each row, but PostgreSQL
            // shows only the others as the Filter.
            if let Some(f) = &p.filter {
                let mut cs = Vec::new();
                dml::conjuncts(f, &mut cs);
                let rest: Vec<String> = cs.iter().map(|c| show(c, &n)).filter(|c| !cond.contains(c)).collect();
                match rest.len() {
                    0 => {}
                    1 => details.push(format!("Filter: {}", rest[0])),
                    _ => details.push(format!("Filter: ({})", rest.join(" AND "))),
                }
            }
            details.extend(extra);
            if p.index_only {
                if let Some(st) = self.node_stats(node) {
                    details.push(format!("Heap Fetches: {}", st.scans.iter().map(|t| t.stats.heap_fetches).sum::<u64>()));
                }
            }
            let kind = match (p.index_only, p.ordered == Some(dml::ScanDirection::Backward)) {
                (true, true) => "Index Only Scan Backward",
                (true, false) => "Index Only Scan",
                (false, true) => "Index Scan Backward",
                (false, false) => "Index Scan",
            };
            self.push(depth, format!("{kind} using {} on {}{act}", ix.name, table.name), details);
            return Ok(());
        }
        if let Some(f) = &p.filter {
            details.push(format!("Filter: {}", show(f, &n)));
        }
        details.extend(extra);
        let buffers = |t: &ScanTrace| {
            format!("Buffers: shared hit={} read={}", t.stats.stream.hits + t.stats.stream.foreign, t.stats.stream.blocks_read)
        };
        match &trace {
            Some(t) if self.opt.buffers => {
                details.push(buffers(t));
                details.extend(io_lines(s, t));
            }
            Some(_) => {}
            None if self.opt.buffers || self.stats.is_none() => {
                // Not run: say what the scan would use.
                let pool = &s.shared.pool;
                let nblocks = pool.smgr().nblocks(table.relfile, ForkNumber::Main)?;
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
        self.push(depth, format!("Seq Scan on {}{act}", table.name), details);
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
    v.push(format!(
        "Pages: {} read, {} all-visible (no per-tuple visibility check), {} pruned",
        st.pages, st.pages_all_visible, st.pages_pruned
    ));
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

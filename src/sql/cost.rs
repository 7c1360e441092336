//! The planner's cost model: row estimates from ANALYZE's statistics (`sql::statistics`), and
//! the choices made with them, in PostgreSQL's units (a sequential page read costs
//! `seq_page_cost`, a random one `random_page_cost`, a row `cpu_tuple_cost`, an index entry
//! `cpu_index_tuple_cost`, an operator `cpu_operator_cost`).
//!
//! What it decides:
//! - **sequential or index scan** of a table whose conditions bound an index ([`choose_access`]):
//!   the index when its estimated cost (the index entries read, plus the heap pages fetched,
//!   random or in sequence as the column's correlation says) is below a sequential scan's;
//! - **the build side of a hash join** and **hash or merge join** (`sql::query`): the smaller
//!   estimated input is hashed; a merge join when hash joins are disabled;
//! - **an index nested loop** ([`Estimator::index_probe`]): an INNER or LEFT join whose right
//!   input is a table with an index on the join key probes that index once per left row when
//!   the probes cost less than scanning and hashing the table;
//! - **the order of inner joins** (`sql::query::reorder`, with [`Estimator::rows`] and
//!   [`Estimator::distinct_of`]);
//! - **ORDER BY from an index** (`order_by_index`, `min_max_by_index`): a sort over a table
//!   scan that reads an index in the sort's order is dropped; a sequential scan under a
//!   constant LIMIT becomes an ordered index scan when the rows it must read through the index
//!   (LIMIT over the filter's selectivity) cost less than the whole table and a top-N sort.
//!
//! Estimates follow PostgreSQL's selectivity rules: `col = const` is the most-common-value
//! frequency when the constant is one, else the remaining frequency shared by the remaining
//! distinct values; `<`, `>` read the histogram (interpolating within a bucket for numbers and
//! dates); a pair of bounds on one column is `lo + hi - 1`; IS NULL is the NULL fraction; AND
//! multiplies, OR adds less the overlap, NOT complements. Without statistics the defaults are
//! PostgreSQL's (0.005 for equality, 1/3 for a range, 200 distinct values).
//!
//! Invariant: statistics choose between plans that give the same rows; no estimate changes an
//! answer. A scan an ORDER BY relies on (`Plan::ordered`) keeps its index whatever a later
//! pass estimates (`Estimator::choose` leaves it alone). A table never analyzed keeps the rule-based choices of `sql::dml::Plan` (an index
//! whose leading columns the conditions bound is used) and the join as written, so plans
//! change only once ANALYZE has run or a planner setting is changed.

use super::dml::conjuncts;
use super::expr::{CmpOp, Scalar};
use crate::catalog::Table;
use crate::exec::{JoinKind, Node};
use crate::session::Session;
use crate::sql::statistics::{ColumnStats, RelStats};
use crate::types::Value;
use std::sync::Arc;

/// The planner settings a session may SET (PostgreSQL's names and meanings).
pub const PLANNER_SETTINGS: &[&str] = &[
    "enable_seqscan",
    "enable_indexscan",
    "enable_indexonlyscan",
    "enable_hashjoin",
    "enable_mergejoin",
    "enable_nestloop",
    "seq_page_cost",
    "random_page_cost",
    "cpu_tuple_cost",
    "cpu_index_tuple_cost",
    "cpu_operator_cost",
];

/// A planner setting's value checked and normalized (`on` / `off` for the `enable_*` ones, a
/// non-negative number for the costs), with PostgreSQL's errors.
pub fn check_setting(name: &str, value: &str) -> crate::error::Result<String> {
    use crate::error::{sqlstate, PgError};
    if name.starts_with("enable_") {
        return match crate::config::parse_bool(value) {
            Some(b) => Ok(if b { "on" } else { "off" }.to_string()),
            None => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("parameter \"{name}\" requires a Boolean value"))),
        };
    }
    match value.trim().parse::<f64>() {
        Ok(f) if f >= 0.0 && f.is_finite() => Ok(value.trim().to_string()),
        Ok(f) if f < 0.0 && f.is_finite() => Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("{value} is outside the valid range for parameter \"{name}\" (0 .. 1.79769e+308)"),
        )),
        _ => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"{name}\": \"{value}\""))),
    }
}

const DEFAULT_EQ_SEL: f64 = 0.005;
const DEFAULT_INEQ_SEL: f64 = 1.0 / 3.0;
const DEFAULT_MATCH_SEL: f64 = 0.005;
const DEFAULT_NUM_DISTINCT: f64 = 200.0;

/// The planner settings in force for a session.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    pub seq_page: f64,
    pub random_page: f64,
    pub cpu_tuple: f64,
    pub cpu_index_tuple: f64,
    pub cpu_operator: f64,
    pub enable_seqscan: bool,
    pub enable_indexscan: bool,
    pub enable_indexonlyscan: bool,
    pub enable_hashjoin: bool,
    pub enable_mergejoin: bool,
    pub enable_nestloop: bool,
}

impl Costs {
    /// The planner settings in force for a session (kept in the session: no lookup).
    pub fn of(s: &Session) -> Costs {
        s.planner_costs()
    }

    /// The server's planner settings.
    pub fn of_server(settings: &crate::config::Settings) -> Costs {
        Costs::read(&|name| settings.get(name).ok())
    }

    /// The session's planner settings when its parameters set any (else None: the server's).
    pub fn of_session(s: &Session) -> Option<Costs> {
        PLANNER_SETTINGS
            .iter()
            .any(|n| s.client_setting(n).is_some())
            .then(|| Costs::read(&|name| s.client_setting(name).or_else(|| s.shared.settings.get(name).ok())))
    }

    fn read<'a>(value: &dyn Fn(&str) -> Option<&'a str>) -> Costs {
        let get = |name: &str| -> &str { value(name).unwrap_or("") };
        let real = |name: &str, d: f64| get(name).trim().parse::<f64>().unwrap_or(d);
        let flag = |name: &str| crate::config::parse_bool(get(name)).unwrap_or(true);
        Costs {
            seq_page: real("seq_page_cost", 1.0),
            random_page: real("random_page_cost", 4.0),
            cpu_tuple: real("cpu_tuple_cost", 0.01),
            cpu_index_tuple: real("cpu_index_tuple_cost", 0.005),
            cpu_operator: real("cpu_operator_cost", 0.0025),
            enable_seqscan: flag("enable_seqscan"),
            enable_indexscan: flag("enable_indexscan"),
            enable_indexonlyscan: flag("enable_indexonlyscan"),
            enable_hashjoin: flag("enable_hashjoin"),
            enable_mergejoin: flag("enable_mergejoin"),
            enable_nestloop: flag("enable_nestloop"),
        }
    }

    /// Whether any setting differs from PostgreSQL's default, so the cost model decides even
    /// for tables never analyzed.
    pub fn overridden(&self) -> bool {
        *self != Costs::POSTGRES_DEFAULTS
    }

    /// PostgreSQL's defaults.
    pub const POSTGRES_DEFAULTS: Costs = Costs {
        seq_page: 1.0,
        random_page: 4.0,
        cpu_tuple: 0.01,
        cpu_index_tuple: 0.005,
        cpu_operator: 0.0025,
        enable_seqscan: true,
        enable_indexscan: true,
        enable_indexonlyscan: true,
        enable_hashjoin: true,
        enable_mergejoin: true,
        enable_nestloop: true,
    };
}

/// What the planner knows about a table now.
pub struct TableEst {
    pub rows: f64,
    pub pages: f64,
    pub stats: Option<Arc<RelStats>>,
}

/// The estimator of one statement.
pub struct Estimator<'a> {
    s: &'a Session,
    pub costs: Costs,
}

/// A column's statistics and the rows of its table (a condition's column).
struct ColInfo<'a> {
    stats: Option<&'a ColumnStats>,
    rows: f64,
    unique: bool,
}

impl<'a> Estimator<'a> {
    pub fn new(s: &'a Session) -> Estimator<'a> {
        Estimator { s, costs: Costs::of(s) }
    }

    /// The table's rows and pages now: ANALYZE's density over the pages it has now (as
    /// PostgreSQL scales `reltuples` by the current size), else the live-row counter, else
    /// the pages filled with rows of the columns' widths.
    pub fn table(&self, t: &Table) -> TableEst {
        let sh = &self.s.shared;
        let pages = sh.smgr.nblocks(t.relfile, crate::storage::ForkNumber::Main).unwrap_or(0) as f64;
        let stats = sh.planner_stats.get(t.oid);
        let rows = match &stats {
            Some(st) if st.relpages > 0 => st.reltuples / st.relpages as f64 * pages.max(1.0),
            Some(st) => st.reltuples,
            None => {
                let live = sh.table_stats.get(t.oid).n_live_tup.load(std::sync::atomic::Ordering::Relaxed);
                if live > 0 {
                    live as f64
                } else {
                    let width: usize = t.columns.iter().map(|c| c.ty.fixed_len().unwrap_or(32)).sum::<usize>() + 28;
                    pages * (sh.pool.block_size() as f64 / width as f64).floor()
                }
            }
        };
        TableEst { rows: rows.max(1.0), pages: pages.max(1.0), stats }
    }

    /// Whether every table `node` scans has statistics (or a setting asks for costs).
    pub fn decides(&self, node: &Node) -> bool {
        if self.costs.overridden() {
            return true;
        }
        let mut all = true;
        let mut any = false;
        visit_scans(node, &mut |t| {
            any = true;
            all &= self.s.shared.planner_stats.get(t.oid).is_some();
        });
        any && all
    }

    /// The estimated rows of `node`.
    pub fn rows(&self, node: &Node) -> f64 {
        let r = match node {
            Node::Unit => 1.0,
            Node::Values(rows, _) => rows.len() as f64,
            Node::Scan(p) => {
                let te = self.table(&p.table);
                te.rows * p.filter.as_ref().map_or(1.0, |f| self.scan_sel(&p.table, &te, f))
            }
            Node::Filter(i, c) => {
                let n = self.rows(i);
                n * self.sel(c, &|c| self.col_info(i, c))
            }
            Node::Project(i, _) | Node::Sort(i, _) | Node::Window(i, _) => self.rows(i),
            Node::Join(j) => {
                let (l, r) = (self.rows(&j.left), self.rows(&j.right));
                let mut sel = 1.0;
                for (a, b) in &j.keys {
                    let da = self.distinct_of(&j.left, a).unwrap_or(DEFAULT_NUM_DISTINCT.min(l));
                    let db = self.distinct_of(&j.right, b).unwrap_or(DEFAULT_NUM_DISTINCT.min(r));
                    sel *= 1.0 / da.max(db).max(1.0);
                }
                if let Some(c) = &j.cond {
                    sel *= self.sel(c, &|_| None);
                }
                let inner = l * r * sel;
                match j.kind {
                    JoinKind::Inner => inner,
                    JoinKind::Left => inner.max(l),
                    JoinKind::Right => inner.max(r),
                    JoinKind::Full => inner.max(l + r),
                }
            }
            Node::Agg(i, g, _) => {
                let n = self.rows(i);
                if g.is_empty() {
                    1.0
                } else {
                    let d: f64 = g.iter().map(|e| self.distinct_of(i, e).unwrap_or(DEFAULT_NUM_DISTINCT)).product();
                    d.min(n)
                }
            }
            Node::Distinct(i, _) => self.rows(i),
            Node::Limit(i, n, _, _) => {
                let r = self.rows(i);
                match n {
                    Some(Scalar::Const(Value::Int8(k))) => r.min(*k as f64),
                    Some(Scalar::Const(Value::Int4(k))) => r.min(*k as f64),
                    _ => r,
                }
            }
            Node::SetOp(_, _, l, r) => self.rows(l) + self.rows(r),
            Node::Cte(c) => self.rows(&c.node),
            Node::Function(_) | Node::RecursiveUnion(_) => 1000.0,
            Node::WorkTable(..) => 100.0,
            Node::ProjectSet(i, _) => self.rows(i) * 10.0,
            Node::LockRows(l) => self.rows(&l.input),
        };
        r.max(1.0)
    }

    /// The table column that column `c` of `node`'s output reads unchanged, if any.
    fn origin(node: &Node, c: usize) -> Option<(&Arc<Table>, usize)> {
        match node {
            Node::Scan(p) => Some((&p.table, c)),
            Node::Filter(i, _) | Node::Sort(i, _) | Node::Limit(i, ..) | Node::Distinct(i, _) | Node::Window(i, _) => Self::origin(i, c),
            Node::LockRows(l) => Self::origin(&l.input, c),
            Node::Project(i, exprs) => match exprs.get(c)? {
                Scalar::Col(k, _) => Self::origin(i, *k),
                _ => None,
            },
            Node::Join(j) => {
                if c < j.left_width {
                    Self::origin(&j.left, c)
                } else {
                    Self::origin(&j.right, c - j.left_width)
                }
            }
            _ => None,
        }
    }

    fn col_info(&self, node: &Node, c: usize) -> Option<ColInfoOwned> {
        let (t, col) = Self::origin(node, c)?;
        let te = self.table(t);
        Some(ColInfoOwned::new(t, col, te))
    }

    /// The number of distinct values of `e` over `node`'s rows, when `e` is a column whose
    /// table was analyzed.
    pub fn distinct_of(&self, node: &Node, e: &Scalar) -> Option<f64> {
        let Scalar::Col(c, _) = strip(e) else { return None };
        let info = self.col_info(node, *c)?;
        let ci = info.get();
        if ci.unique {
            return Some(ci.rows);
        }
        ci.stats.map(|s| s.distinct(ci.rows))
    }

    /// The selectivity of a scan's filter (columns are the table's).
    pub fn scan_sel(&self, t: &Arc<Table>, te: &TableEst, f: &Scalar) -> f64 {
        let owned: Vec<ColInfoOwned> = (0..t.columns.len())
            .map(|c| ColInfoOwned::new(t, c, TableEst { rows: te.rows, pages: te.pages, stats: te.stats.clone() }))
            .collect();
        self.sel(f, &|c| owned.get(c).cloned())
    }

    /// The selectivity of a condition, with `col` giving what is known of a column.
    fn sel(&self, e: &Scalar, col: &dyn Fn(usize) -> Option<ColInfoOwned>) -> f64 {
        // A conjunction: bounds on one column pair up (PostgreSQL's range selectivity).
        let mut cs = Vec::new();
        conjuncts(e, &mut cs);
        if cs.len() > 1 {
            let mut total = 1.0;
            let mut ranges: Vec<(usize, Option<f64>, Option<f64>)> = Vec::new();
            for c in cs {
                if let Some((colno, op, v)) = col_cmp(c) {
                    if matches!(op, CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge) {
                        let s = self.one(c, col);
                        let _ = v;
                        let lower = matches!(op, CmpOp::Gt | CmpOp::Ge);
                        match ranges.iter_mut().find(|r| r.0 == colno) {
                            Some(r) if lower && r.1.is_none() => r.1 = Some(s),
                            Some(r) if !lower && r.2.is_none() => r.2 = Some(s),
                            Some(_) => total *= s,
                            None => ranges.push((colno, lower.then_some(s), (!lower).then_some(s))),
                        }
                        continue;
                    }
                }
                total *= self.one(c, col);
            }
            for (_, lo, hi) in ranges {
                total *= match (lo, hi) {
                    (Some(a), Some(b)) => (a + b - 1.0).max(0.0001),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => 1.0,
                };
            }
            return total.clamp(0.0, 1.0);
        }
        self.one(e, col)
    }

    fn one(&self, e: &Scalar, col: &dyn Fn(usize) -> Option<ColInfoOwned>) -> f64 {
        let s = match e {
            Scalar::And(..) => self.sel(e, col),
            Scalar::Or(a, b) => {
                let (x, y) = (self.sel(a, col), self.sel(b, col));
                x + y - x * y
            }
            Scalar::Not(a) => 1.0 - self.sel(a, col),
            Scalar::IsNull(a, negated) => {
                let nf = match strip(a) {
                    Scalar::Col(c, _) => col(*c).and_then(|i| i.get().stats.map(|s| s.null_frac)).unwrap_or(0.005),
                    _ => 0.005,
                };
                if *negated {
                    1.0 - nf
                } else {
                    nf
                }
            }
            Scalar::InList(a, items, negated) => {
                let s: f64 = items.iter().map(|v| self.cmp_sel(CmpOp::Eq, a, v, col)).sum::<f64>().min(1.0);
                if *negated {
                    1.0 - s
                } else {
                    s
                }
            }
            Scalar::Like(_, _, negated, ..) => {
                if *negated {
                    1.0 - DEFAULT_MATCH_SEL
                } else {
                    DEFAULT_MATCH_SEL
                }
            }
            Scalar::Cmp(op, a, b) => {
                if matches!(strip(b), Scalar::Col(..)) && !matches!(strip(a), Scalar::Col(..)) {
                    self.cmp_sel(op.commute(), b, a, col)
                } else {
                    self.cmp_sel(*op, a, b, col)
                }
            }
            Scalar::Const(Value::Bool(b)) => f64::from(u8::from(*b)),
            Scalar::Const(Value::Null) => 0.0,
            _ => 0.5,
        };
        s.clamp(0.0, 1.0)
    }

    /// `a op b` where `a` may be a column and `b` a value.
    fn cmp_sel(&self, op: CmpOp, a: &Scalar, b: &Scalar, col: &dyn Fn(usize) -> Option<ColInfoOwned>) -> f64 {
        let info = match strip(a) {
            Scalar::Col(c, _) => col(*c),
            _ => None,
        };
        let value = match b {
            Scalar::Const(v) => Some(v.clone()),
            Scalar::Cast(x, _) => match &**x {
                Scalar::Const(v) => Some(v.clone()),
                _ => None,
            },
            _ => None,
        };
        let Some(info) = info else {
            return if op == CmpOp::Eq {
                DEFAULT_EQ_SEL
            } else if op == CmpOp::Ne {
                1.0 - DEFAULT_EQ_SEL
            } else {
                DEFAULT_INEQ_SEL
            };
        };
        let ci = info.get();
        let typed = value.and_then(|v| match &ci.stats {
            Some(st) if v != Value::Null => super::expr::cast_value(v, &st.ty).ok(),
            _ => None,
        });
        match op {
            CmpOp::Eq => eq_sel(&ci, typed.as_ref()),
            CmpOp::Ne => {
                let nf = ci.stats.map_or(0.0, |s| s.null_frac);
                (1.0 - nf - eq_sel(&ci, typed.as_ref())).max(0.0)
            }
            CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => match (ci.stats, typed) {
                (Some(st), Some(v)) => ineq_sel(st, op, &v),
                _ => DEFAULT_INEQ_SEL,
            },
        }
    }
}

/// [`ColInfo`] holding its own table estimate.
#[derive(Clone)]
struct ColInfoOwned {
    stats: Option<Arc<RelStats>>,
    name: String,
    ty: crate::types::SqlType,
    rows: f64,
    unique: bool,
}

impl ColInfoOwned {
    fn new(t: &Table, col: usize, te: TableEst) -> ColInfoOwned {
        let unique = t.indexes.iter().any(|ix| ix.unique && ix.predicate.is_none() && ix.columns == [col]);
        ColInfoOwned { stats: te.stats, name: t.columns[col].name.clone(), ty: t.columns[col].ty, rows: te.rows, unique }
    }

    fn get(&self) -> ColInfo<'_> {
        ColInfo { stats: self.stats.as_ref().and_then(|s| s.column(&self.name, self.ty)), rows: self.rows, unique: self.unique }
    }
}

fn eq_sel(ci: &ColInfo<'_>, v: Option<&Value>) -> f64 {
    if ci.unique {
        return 1.0 / ci.rows.max(1.0);
    }
    let Some(st) = ci.stats else { return DEFAULT_EQ_SEL };
    let nd = st.distinct(ci.rows);
    let mcv_total: f64 = st.mcv.iter().map(|m| m.1).sum();
    if let Some(v) = v {
        if let Some((_, f)) = st.mcv.iter().find(|(m, _)| crate::exec::sort::compare_key(m, v, false, false).is_eq()) {
            return *f;
        }
        let rest = (nd - st.mcv.len() as f64).max(1.0);
        return ((1.0 - st.null_frac - mcv_total) / rest).clamp(0.0, 1.0);
    }
    ((1.0 - st.null_frac) / nd).clamp(0.0, 1.0)
}

fn ineq_sel(st: &ColumnStats, op: CmpOp, v: &Value) -> f64 {
    use std::cmp::Ordering;
    let cmp = |a: &Value| crate::exec::sort::compare_key(a, v, false, false);
    let keeps = |o: Ordering| match op {
        CmpOp::Lt => o == Ordering::Less,
        CmpOp::Le => o != Ordering::Greater,
        CmpOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    };
    let mcv_total: f64 = st.mcv.iter().map(|m| m.1).sum();
    let mcv_part: f64 = st.mcv.iter().filter(|(m, _)| keeps(cmp(m))).map(|m| m.1).sum();
    let hist_total = (1.0 - st.null_frac - mcv_total).max(0.0);
    let h = &st.histogram;
    let below = if h.len() < 2 {
        0.5
    } else if cmp(&h[0]) != Ordering::Less {
        0.0
    } else if cmp(&h[h.len() - 1]) == Ordering::Less {
        1.0
    } else {
        // The bucket holding v, and where in it.
        let k = h.partition_point(|b| cmp(b) == Ordering::Less); // h[k-1] < v <= h[k]
        let frac = match (as_f64(&h[k - 1]), as_f64(&h[k]), as_f64(v)) {
            (Some(lo), Some(hi), Some(x)) if hi > lo => ((x - lo) / (hi - lo)).clamp(0.0, 1.0),
            _ => 0.5,
        };
        ((k - 1) as f64 + frac) / (h.len() - 1) as f64
    };
    let hist_part = if matches!(op, CmpOp::Lt | CmpOp::Le) { below } else { 1.0 - below };
    (mcv_part + hist_part * hist_total).clamp(0.0, 1.0)
}

fn as_f64(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Int2(x) => *x as f64,
        Value::Int4(x) => *x as f64,
        Value::Int8(x) => *x as f64,
        Value::Float4(x) => *x as f64,
        Value::Float8(x) => *x,
        Value::Date(x) => *x as f64,
        Value::Timestamp(x) | Value::Timestamptz(x) | Value::Time(x) => *x as f64,
        _ => return None,
    })
}

/// A column under casts that keep its order (`char(n)` unpadding, widening).
fn strip(e: &Scalar) -> &Scalar {
    match e {
        Scalar::Cast(a, _) => strip(a),
        other => other,
    }
}

/// `col op value` (either way round) with a value that reads no column.
fn col_cmp(e: &Scalar) -> Option<(usize, CmpOp, &Scalar)> {
    let Scalar::Cmp(op, a, b) = e else { return None };
    let free = |x: &Scalar| {
        let mut any = false;
        x.visit(&mut |y| any |= matches!(y, Scalar::Col(..)));
        !any
    };
    match (strip(a), strip(b)) {
        (Scalar::Col(c, _), _) if free(b) => Some((*c, *op, b)),
        (_, Scalar::Col(c, _)) if free(a) => Some((*c, op.commute(), a)),
        _ => None,
    }
}

/// Calls `f` with each table a plan scans (not inside subqueries of expressions).
fn visit_scans(node: &Node, f: &mut dyn FnMut(&Table)) {
    match node {
        Node::Scan(p) => f(&p.table),
        Node::Filter(i, _)
        | Node::Project(i, _)
        | Node::Sort(i, _)
        | Node::Limit(i, ..)
        | Node::Distinct(i, _)
        | Node::Window(i, _)
        | Node::Agg(i, ..)
        | Node::ProjectSet(i, _) => visit_scans(i, f),
        Node::LockRows(l) => visit_scans(&l.input, f),
        Node::Join(j) => {
            visit_scans(&j.left, f);
            visit_scans(&j.right, f);
        }
        Node::SetOp(_, _, l, r) => {
            visit_scans(l, f);
            visit_scans(r, f);
        }
        Node::Cte(c) => visit_scans(&c.node, f),
        Node::RecursiveUnion(r) => {
            visit_scans(&r.nonrec, f);
            visit_scans(&r.rec, f);
        }
        Node::Unit | Node::Values(..) | Node::Function(_) | Node::WorkTable(..) => {}
    }
}

/// Chooses each table scan's access path by cost (see the module doc): a scan that
/// `sql::dml::Plan` gave an index keeps it unless its table has statistics (or a planner
/// setting is changed) and a sequential scan costs less.
pub fn choose_access(s: &Session, node: &mut Node) {
    let est = Estimator::new(s);
    walk_scans(node, false, &mut |p| est.choose(p));
    // Index-only scans wherever the index holds every column a scan reads (the inner
    // scans of index nested loops too).
    let ios = est.costs.enable_indexonlyscan;
    walk_scans(node, true, &mut |p| p.index_only = ios && p.index_only_possible());
    order_by_index(&est, node, None);
}

/// A constant LIMIT or OFFSET count (None: a parameter or an expression).
fn const_count(e: &Option<Scalar>) -> Option<f64> {
    fn of(e: &Scalar) -> Option<f64> {
        match e {
            Scalar::Cast(x, _) => of(x),
            Scalar::Const(Value::Int8(n)) => Some(*n as f64),
            Scalar::Const(Value::Int4(n)) => Some(f64::from(*n)),
            Scalar::Const(Value::Int2(n)) => Some(f64::from(*n)),
            _ => None,
        }
    }
    e.as_ref().map_or(Some(0.0), of)
}

/// ORDER BY from an index (PostgreSQL's pathkeys, for a sort directly over one table's scan):
/// a `Sort` whose keys are the table's columns in an index's column order, each in the index
/// column's order (ASC / DESC, NULLS FIRST / LAST) or each in its reverse, is dropped and the
/// scan reads the index in that order ([`dml::Plan::ordered`](super::dml::Plan::ordered),
/// backward for the reverse). Free where the scan already reads that index (columns its equality
/// conditions fix may appear anywhere in the keys). A sequential scan under a constant
/// `LIMIT` becomes such an index scan when reading the first LIMIT + OFFSET rows through the
/// index costs less than reading the whole table and keeping the top rows. `limit`: the rows
/// a LIMIT directly above wants.
fn order_by_index(est: &Estimator<'_>, node: &mut Node, limit: Option<f64>) {
    match node {
        Node::Limit(i, l, o, ties) => {
            // WITH TIES may need rows past the count: no count is assumed.
            let want = match (ties.is_none() && l.is_some(), const_count(l), const_count(o)) {
                (true, Some(l), Some(o)) => Some(l + o),
                _ => None,
            };
            order_by_index(est, i, want)
        }
        Node::Sort(i, keys) => {
            if index_order(est, i, keys, limit) {
                let inner = std::mem::replace(&mut **i, Node::Unit);
                *node = inner;
            } else {
                order_by_index(est, i, None);
            }
        }
        // The inner scan of an index nested loop is probed per outer row.
        Node::Join(j) if j.inner_index => order_by_index(est, &mut j.left, None),
        Node::Join(j) => {
            order_by_index(est, &mut j.left, None);
            order_by_index(est, &mut j.right, None);
        }
        Node::Agg(i, groups, aggs) => {
            if !(groups.is_empty() && min_max_by_index(est, i, aggs)) {
                order_by_index(est, i, None);
            }
        }
        Node::Filter(i, _) | Node::Project(i, _) | Node::Distinct(i, _) | Node::Window(i, _) | Node::ProjectSet(i, _) => {
            order_by_index(est, i, None)
        }
        Node::LockRows(l) => order_by_index(est, &mut l.input, limit),
        Node::SetOp(_, _, l, r) => {
            order_by_index(est, l, None);
            order_by_index(est, r, None);
        }
        Node::RecursiveUnion(r) => {
            order_by_index(est, &mut r.nonrec, None);
            order_by_index(est, &mut r.rec, None);
        }
        Node::Scan(_) | Node::Cte(_) | Node::Unit | Node::Values(..) | Node::Function(_) | Node::WorkTable(..) => {}
    }
}

/// `min(col)` or `max(col)` alone over one table, from an index whose order gives `col`
/// (PostgreSQL's planagg.c): the aggregate reads only the first row of the scan in that
/// order (backward for max) with `col IS NOT NULL` added to its filter, under a `LIMIT 1`.
/// `input`: the aggregate's input (filters over a table scan).
fn min_max_by_index(est: &Estimator<'_>, input: &mut Node, aggs: &[crate::exec::AggCall]) -> bool {
    use crate::exec::AggFunc;
    let [a] = aggs else { return false };
    // min: ascending, max: descending; NULLs are filtered out, so their place is free.
    let desc = match a.func {
        AggFunc::Min => false,
        AggFunc::Max => true,
        _ => return false,
    };
    let [Scalar::Col(c, ty)] = &a.args[..] else { return false };
    if a.distinct || a.filter.is_some() || !a.order.is_empty() {
        return false;
    }
    let mut cur: &mut Node = input;
    let mut limit = Some(1.0);
    while let Node::Filter(i, _) = cur {
        cur = i;
        limit = None; // as in `index_order`
    }
    let Node::Scan(p) = cur else { return false };
    let mut q = (**p).clone();
    let not_null = Scalar::IsNull(Box::new(Scalar::Col(*c, *ty)), true);
    q.filter = Some(match q.filter.take() {
        Some(f) => Scalar::And(Box::new(f), Box::new(not_null)),
        None => not_null,
    });
    if !order_scan(est, &mut q, &[(*c, desc, None)], limit) {
        return false;
    }
    **p = q;
    let whole = std::mem::replace(input, Node::Unit);
    *input = Node::Limit(Box::new(whole), Some(Scalar::Const(Value::Int8(1))), None, None);
    true
}

/// Whether the scan under `input` (a projection over filters over a table scan) can give
/// `keys`' order; if so, sets the scan up for it (see [`order_by_index`]).
fn index_order(est: &Estimator<'_>, input: &mut Node, keys: &[crate::exec::SortKey], limit: Option<f64>) -> bool {
    let Node::Project(x, exprs) = input else { return false };
    let mut cur: &mut Node = x;
    // Conditions above the scan (with subqueries or outer columns) are not estimated: under
    // them, reading the first rows of the index is no cheaper for sure, so only an index the
    // scan already reads gives the order.
    let mut limit = limit;
    while let Node::Filter(i, _) = cur {
        cur = i;
        limit = None;
    }
    let Node::Scan(p) = cur else { return false };
    // The table columns the keys sort by, each with its order.
    let mut cols = Vec::with_capacity(keys.len());
    for k in keys {
        let Scalar::Col(i, _) = &k.expr else { return false };
        let Some(Scalar::Col(c, _)) = exprs.get(*i) else { return false };
        cols.push((*c, k.desc, Some(k.nulls_first)));
    }
    order_scan(est, p, &cols, limit)
}

/// Sets scan `p` up to give its rows ordered by `cols` (table column, descending, NULLS FIRST
/// or None when the NULLs' place does not matter), if an index can, read forward or backward
/// (see [`order_by_index`]; `limit`: the rows wanted, when known).
fn order_scan(est: &Estimator<'_>, p: &mut super::dml::Plan, cols: &[(usize, bool, Option<bool>)], limit: Option<f64>) -> bool {
    use super::dml::{Access, ScanDirection};
    if p.ordered.is_some() || cols.is_empty() {
        return false;
    }
    // The direction reading index `idx` with `eq` fixing its leading columns gives the order
    // in: the keys the equalities do not fix are the next index columns, in order, each in
    // the index's own order (forward) or each in its reverse (backward). Not an index built
    // over HOT chains whose versions differ in its columns (`check_xmin`): an older snapshot
    // cannot use it and would have to sort. Not char(n) keys: the index orders them without
    // their trailing blanks, the sort node with them.
    let gives_order = |idx: usize, neq: usize| -> Option<ScanDirection> {
        let ix = &p.table.indexes[idx];
        let fixed = &ix.columns[..neq];
        let rest: Vec<(usize, bool, Option<bool>)> = cols.iter().copied().filter(|(c, ..)| !fixed.contains(c)).collect();
        let rest_cols: Vec<usize> = rest.iter().map(|&(c, ..)| c).collect();
        if ix.check_xmin.is_some()
            || !ix.columns[neq..].starts_with(&rest_cols)
            || rest_cols.iter().any(|&c| p.table.columns[c].ty.id == crate::types::TypeId::Bpchar)
        {
            return None;
        }
        // Per key: does the index read forward (its own order) or backward give it?
        let fits = |flip: bool| {
            rest.iter().enumerate().all(|(k, &(_, desc, nulls_first))| {
                let opt = ix.option(neq + k);
                let ix_desc = opt & crate::catalog::INDOPTION_DESC != 0;
                let ix_nf = opt & crate::catalog::INDOPTION_NULLS_FIRST != 0;
                (desc == (ix_desc != flip)) && nulls_first.is_none_or(|nf| nf == (ix_nf != flip))
            })
        };
        if fits(false) {
            Some(ScanDirection::Forward)
        } else if fits(true) {
            Some(ScanDirection::Backward)
        } else {
            None
        }
    };
    match &p.access {
        Access::Index { idx, eq, .. } => {
            if let Some(dir) = gives_order(*idx, eq.len()) {
                p.ordered = Some(dir);
                return true;
            }
            return false;
        }
        Access::Seq => {}
    }
    let c = &est.costs;
    let Some(want) = limit else { return false };
    if !c.enable_indexscan {
        return false;
    }
    // The index that gives the order with the most conditions bounding it.
    let Some((_, (access, dir))) = (0..p.table.indexes.len())
        .filter(|&i| super::index::usable_for(&p.table, i, p.filter.as_ref()))
        .filter_map(|i| {
            let a = match &p.filter {
                Some(f) => super::dml::Plan::index_access(f, &p.table, i),
                None => Access::Index { idx: i, eq: Vec::new(), lo: None, hi: None, not_null: false },
            };
            let Access::Index { eq, lo, hi, .. } = &a else { return None };
            let score = eq.len() * 4 + usize::from(lo.is_some()) + usize::from(hi.is_some());
            gives_order(i, eq.len()).map(|dir| (score, (a, dir)))
        })
        .rev()
        .max_by_key(|(score, _)| *score)
    else {
        return false;
    };
    // Rows read through the index until `want` pass the filter, against the whole table
    // read and its top rows kept (a top-N sort: log2(want) comparisons a row).
    let te = est.table(&p.table);
    let (nquals, sel) = match &p.filter {
        Some(f) => {
            let mut v = Vec::new();
            conjuncts(f, &mut v);
            (v.len() as f64, est.scan_sel(&p.table, &te, f).max(1e-10))
        }
        None => (0.0, 1.0),
    };
    let fetched = (want.max(1.0) / sel).min(te.rows);
    let Access::Index { idx, .. } = &access else { unreachable!("an index access") };
    let corr = te
        .stats
        .as_ref()
        .and_then(|st| {
            // An expression key has no statistics.
            let col = p.table.columns.get(p.table.indexes[*idx].columns[0])?;
            st.column(&col.name, col.ty).map(|cs| cs.correlation)
        })
        .unwrap_or(0.0);
    let max_io = fetched.min(te.pages) * c.random_page;
    let min_io = c.random_page + ((fetched / te.rows * te.pages).ceil() - 1.0).max(0.0) * c.seq_page;
    let io = max_io + corr * corr * (min_io - max_io);
    let index = io + fetched * (c.cpu_index_tuple + c.cpu_tuple + nquals * c.cpu_operator);
    let seq =
        te.pages * c.seq_page + te.rows * (c.cpu_tuple + nquals * c.cpu_operator) + te.rows * sel * want.max(2.0).log2() * c.cpu_operator;
    let seq = if c.enable_seqscan { seq } else { seq + 1e10 };
    if index >= seq {
        return false;
    }
    p.access = access;
    p.ordered = Some(dir);
    p.index_only = c.enable_indexonlyscan && p.index_only_possible();
    true
}

/// Calls `f` on each table scan of a plan; the inner scans of index nested loops too when
/// `probed` is set.
fn walk_scans(node: &mut Node, probed: bool, f: &mut dyn FnMut(&mut super::dml::Plan)) {
    match node {
        // The inner scan of an index nested loop is probed per outer row: its access stays.
        Node::Join(j) if j.inner_index && !probed => walk_scans(&mut j.left, probed, f),
        Node::Scan(p) => f(p),
        Node::Filter(i, _)
        | Node::Project(i, _)
        | Node::Sort(i, _)
        | Node::Limit(i, ..)
        | Node::Distinct(i, _)
        | Node::Window(i, _)
        | Node::Agg(i, ..)
        | Node::ProjectSet(i, _) => walk_scans(i, probed, f),
        Node::LockRows(l) => walk_scans(&mut l.input, probed, f),
        Node::Join(j) => {
            walk_scans(&mut j.left, probed, f);
            walk_scans(&mut j.right, probed, f);
        }
        Node::SetOp(_, _, l, r) => {
            walk_scans(l, probed, f);
            walk_scans(r, probed, f);
        }
        Node::RecursiveUnion(r) => {
            walk_scans(&mut r.nonrec, probed, f);
            walk_scans(&mut r.rec, probed, f);
        }
        Node::Cte(_) | Node::Unit | Node::Values(..) | Node::Function(_) | Node::WorkTable(..) => {}
    }
}

impl Estimator<'_> {
    /// Whether a join is cheaper as an index nested loop: for each left row, an index of the
    /// right table (a plain scan) probed with the left row's keys. Returns the index and its
    /// equality expressions (over the left row), bound to the index's leading columns by
    /// keys of exactly the column's type.
    pub fn index_probe(&self, j: &crate::exec::JoinNode) -> Option<(usize, Vec<Scalar>)> {
        let Node::Scan(p) = &j.right else { return None };
        let mut best: Option<(usize, Vec<Scalar>, Vec<usize>)> = None;
        for (i, ix) in p.table.indexes.iter().enumerate() {
            if !super::index::usable_for(&p.table, i, p.filter.as_ref()) {
                continue;
            }
            let mut eq = Vec::new();
            let mut cols = Vec::new();
            for &c in &ix.columns {
                if c == crate::catalog::EXPR_KEY {
                    break; // probed by columns only
                }
                let found = j
                    .keys
                    .iter()
                    .find(|(a, b)| matches!(b, Scalar::Col(bc, _) if *bc == c) && super::expr::type_of(a) == Some(p.table.columns[c].ty));
                match found {
                    Some((a, _)) => {
                        eq.push(a.clone());
                        cols.push(c);
                    }
                    None => break,
                }
            }
            if !eq.is_empty() && best.as_ref().is_none_or(|b| eq.len() > b.1.len()) {
                best = Some((i, eq, cols));
            }
        }
        let (idx, eq, cols) = best?;
        let c = &self.costs;
        let te = self.table(&p.table);
        let outer = self.rows(&j.left);
        // Rows one probe finds, and what it costs: a descent, then a heap fetch per row.
        let mut per_probe = te.rows;
        for &col in &cols {
            let nd = self.distinct_of(&j.right, &Scalar::Col(col, p.table.columns[col].ty)).unwrap_or(200f64.min(te.rows));
            per_probe /= nd.max(1.0);
        }
        let per_probe = per_probe.max(1.0);
        let nl = outer * (c.random_page + per_probe * (c.random_page + c.cpu_index_tuple + c.cpu_tuple));
        let inner_rows = self.rows(&j.right);
        let hash = te.pages * c.seq_page + te.rows * c.cpu_tuple + (outer + inner_rows) * c.cpu_operator * 2.0;
        let hash = if c.enable_hashjoin || c.enable_mergejoin { hash } else { hash + 1e10 };
        (c.enable_nestloop && nl < hash).then_some((idx, eq))
    }

    fn choose(&self, p: &mut super::dml::Plan) {
        if p.ordered.is_some() {
            // An ORDER BY relies on this index's order (`order_by_index`).
            return;
        }
        let super::dml::Access::Index { idx, eq, lo, hi, .. } = &p.access else { return };
        let te = self.table(&p.table);
        if te.stats.is_none() && !self.costs.overridden() {
            return;
        }
        let c = &self.costs;
        let nquals = p.filter.as_ref().map_or(0, |f| {
            let mut v = Vec::new();
            conjuncts(f, &mut v);
            v.len()
        }) as f64;
        let seq = te.pages * c.seq_page + te.rows * (c.cpu_tuple + nquals * c.cpu_operator);
        // The fraction of the index the bounds select.
        let ix = &p.table.indexes[*idx];
        // Each key as the conditions name it: its column, or its expression.
        let exprs = super::index::bind_key_exprs(&p.table, ix).unwrap_or_default();
        let mut next_expr = exprs.iter();
        let keys: Vec<Scalar> = ix
            .columns
            .iter()
            .map(|&c| match p.table.columns.get(c) {
                Some(col) => Scalar::Col(c, col.ty),
                None => next_expr.next().cloned().unwrap_or(Scalar::Const(Value::Null)),
            })
            .collect();
        let mut conds: Vec<Scalar> = Vec::new();
        for (k, v) in eq.iter().enumerate() {
            conds.push(Scalar::Cmp(CmpOp::Eq, Box::new(keys[k].clone()), Box::new(v.clone())));
        }
        if let Some(next) = keys.get(eq.len()) {
            let colx = || Box::new(next.clone());
            if let Some((v, incl)) = lo {
                conds.push(Scalar::Cmp(if *incl { CmpOp::Ge } else { CmpOp::Gt }, colx(), Box::new(v.clone())));
            }
            if let Some((v, incl)) = hi {
                conds.push(Scalar::Cmp(if *incl { CmpOp::Le } else { CmpOp::Lt }, colx(), Box::new(v.clone())));
            }
        }
        let bound = conds.into_iter().reduce(|a, b| Scalar::And(Box::new(a), Box::new(b)));
        let sel = bound.as_ref().map_or(1.0, |b| self.scan_sel(&p.table, &te, b));
        let n = (sel * te.rows).max(1.0);
        // Heap pages fetched: between a random read per row (uncorrelated) and the fraction
        // of the table read in order (correlated), as PostgreSQL interpolates by the square
        // of the leading column's correlation.
        let corr = te
            .stats
            .as_ref()
            .and_then(|st| {
                let col = p.table.columns.get(ix.columns[0])?;
                st.column(&col.name, col.ty).map(|cs| cs.correlation)
            })
            .unwrap_or(0.0);
        let max_io = n.min(te.pages) * c.random_page;
        let min_io = c.random_page + ((sel * te.pages).ceil() - 1.0).max(0.0) * c.seq_page;
        let io = max_io + corr * corr * (min_io - max_io);
        // An index-only scan visits only the heap pages the visibility map did not mark
        // all-visible (PostgreSQL's allvisfrac).
        let io = match &te.stats {
            Some(st) if c.enable_indexonlyscan && p.index_only_possible() && st.relpages > 0 => {
                io * (1.0 - (st.relallvisible as f64 / st.relpages as f64).min(1.0))
            }
            _ => io,
        };
        let index_pages = (n / 200.0).ceil() * c.random_page;
        let index =
            io + index_pages + n * (c.cpu_index_tuple + c.cpu_tuple + nquals * c.cpu_operator) + te.rows.log2().max(1.0) * c.cpu_operator;
        let seq = if c.enable_seqscan { seq } else { seq + 1e10 };
        let index = if c.enable_indexscan { index } else { index + 1e10 };
        if seq < index {
            p.access = super::dml::Access::Seq;
        }
    }
}

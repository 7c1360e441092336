//! Row statements: `INSERT INTO t [(cols)] VALUES (...), ... | query`, `UPDATE t SET col =
//! expr, ... [FROM ...] [WHERE ...]`, `DELETE FROM t [USING ...] [WHERE ...]` (with WITH
//! queries: [`inline_with`]), and the table access path every query scan uses ([`Plan`]: an
//! index scan when the conditions bound an index's leading column, else a sequential scan
//! with a filter); prepared queries keep their plan (`cached_select`).
//!
//! An UPDATE or DELETE finds its rows by a scan of its table, or, with FROM / USING items,
//! by a join the query planner plans (`query::Planner::change_join`) whose target scan adds
//! each row's TID as a column ([`Plan::tid_col`]); SET and RETURNING then read the joined row.
//!
//! Concurrency is PostgreSQL's READ COMMITTED: each statement reads with its own snapshot; an
//! UPDATE or DELETE that meets a row a running transaction is changing waits for that
//! transaction (`Session::wait_for_xid`), then skips the row if it was deleted, or follows
//! the update chain to the newest version and re-checks the WHERE clause on it
//! (EvalPlanQual) before changing that version; with FROM items the other items' rows stay
//! as the join gave them, and when the first joined row fails the target's other joined rows
//! are tried in turn.
//!
//! Invariants:
//! 1. DML takes RowExclusiveLock on its table, SELECT AccessShareLock, both held to
//!    transaction end (so DDL that rewrites the table waits for them).
//! 2. An UPDATE or DELETE first collects the TIDs its snapshot sees and the WHERE clause
//!    accepts, then changes them; versions it creates have its command id and are invisible to
//!    its own snapshot, so no row is changed twice by one statement (a TID that several
//!    joined rows name is collected once).
//! 3. Every heap version an INSERT or UPDATE creates gets an entry in each of the table's
//!    indexes before the statement ends (unique indexes checked), so an index scan finds every
//!    version a snapshot can see.

use super::expr::{self, CmpOp, Scalar};
use super::index;
use crate::access::heap::{self, dml::ChangeOutcome, dml::HeapRel, dml::Tid, tuple, Flow};
use crate::buffer::{BufferPool, Pins};
use crate::catalog::{fold_ident, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use crate::txn::Snapshot;
use crate::txn::INVALID_XID;
use crate::types::{SqlType, Value};
use sqlparser::ast::{Expr, FromTable, Insert, SetExpr, TableFactor, TableObject, TableWithJoins};
use std::sync::Arc;

/// Hit by an index-only scan before each entry it copied from a leaf (tests run a VACUUM there).
pub const FAILPOINT_INDEX_ONLY_ENTRY: &str = "index-only-scan-entry";

/// How the rows of a statement are found.
#[derive(Clone, Debug)]
pub enum Access {
    Seq,
    /// Index `idx` of the table: equality on its first `eq.len()` columns, then optionally a
    /// range on the next one (bound, inclusive); `not_null`: the filter says the next column
    /// `IS NOT NULL`, so the scan leaves out its NULL entries (at the end of the column's
    /// range, or at its start for a NULLS FIRST column).
    Index {
        idx: usize,
        eq: Vec<Scalar>,
        lo: Option<(Scalar, bool)>,
        hi: Option<(Scalar, bool)>,
        not_null: bool,
    },
}

/// The order an ordered index scan returns rows in: the index's (each column ASC NULLS LAST
/// unless the index says DESC / NULLS FIRST), or its reverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanDirection {
    Forward,
    Backward,
}

/// A planned row source: access path plus the whole WHERE clause, rechecked on every row.
#[derive(Clone, Debug)]
pub struct Plan {
    pub table: Arc<Table>,
    pub filter: Option<Scalar>,
    pub access: Access,
    /// Columns to decode: those the filter, the projection or the assignments read.
    pub needed: Vec<bool>,
    /// The table's column types (kept so that a run allocates nothing for them).
    pub types: Vec<SqlType>,
    /// An index-only scan (`Access::Index` whose index holds every column read: see
    /// [`Plan::index_only_possible`]): a row whose heap page the visibility map marks
    /// all-visible is read from its index entry without visiting the heap. Set by the SELECT
    /// planner only: the TID such a row reports is its index entry's (a HOT chain's root), not
    /// the version's own, so a statement that changes rows never uses it.
    pub index_only: bool,
    /// Set by the SELECT planner when an ORDER BY relies on this scan's order (the sort is
    /// gone): rows come in the index's key order, or its reverse. The scan streams entries
    /// as it reads them (so a LIMIT above ends it early); where a search value does not
    /// convert exactly to the key type it reads the whole index in order (the filter still
    /// applies every condition). The planner never orders by an index with `check_xmin`, so
    /// every snapshot may use the index an ordered scan reads.
    pub ordered: Option<ScanDirection>,
    /// The scan appends each row's TID as a last column ([`tid_value`]): the target table of
    /// UPDATE ... FROM / DELETE ... USING, whose joined rows must name the version each one
    /// changes. Never index-only (an index entry names a HOT chain's root, not the version).
    pub tid_col: bool,
    /// The scan's slot in a `FOR UPDATE` over several FROM items (`exec::lockrows`): while
    /// the LockRows node re-checks a row whose locked version was updated, this scan gives
    /// only the row version the node hands it for the slot. Set with `tid_col`.
    pub lock_slot: Option<usize>,
}

/// A TID as the `int8` value a [`Plan::tid_col`] scan gives it: block << 16 | offset.
pub(crate) fn tid_value((block, off): Tid) -> Value {
    Value::Int8((i64::from(block) << 16) | i64::from(off))
}

/// The TID [`tid_value`] made.
pub(crate) fn tid_of(v: &Value) -> Result<Tid> {
    match v {
        Value::Int8(x) if *x >= 0 => Ok(((*x >> 16) as u32, (*x & 0xffff) as u16)),
        other => Err(PgError::internal(format!("a target row's TID column holds {other:?}"))),
    }
}

/// A query's plan cached in a prepared statement, with the table definitions it was made
/// from (a table whose definition changed since — a new `Arc<Table>` — makes it stale).
#[derive(Debug)]
pub(crate) struct CachedQuery {
    pub bound: crate::exec::BoundQuery,
    pub tables: Vec<Arc<Table>>,
    /// The planner statistics' generation and the planner settings it was made with.
    pub stats_generation: u64,
    pub costs: super::cost::Costs,
    /// The `TimeZone` it was planned in: constants folded when planning (a date or text cast
    /// to timestamptz) hold that zone's instants. (A prepared statement may be shared by
    /// sessions, so this is the zone's name, not a per-session counter.)
    pub zone: Option<String>,
}

pub(crate) fn conjuncts<'a>(e: &'a Scalar, out: &mut Vec<&'a Scalar>) {
    if let Scalar::And(a, b) = e {
        conjuncts(a, out);
        conjuncts(b, out);
    } else {
        out.push(e);
    }
}

/// What an index key is in a scan's conditions: a column, or an expression over columns
/// (shown by its bound form's debug text, as the index's key expression binds).
#[derive(PartialEq)]
enum KeyRef {
    Col(usize),
    Expr(String),
}

/// Whether `x` reads no column.
fn reads_no_column(x: &Scalar) -> bool {
    let mut u = vec![false; 1600];
    x.columns_used(&mut u);
    !u.iter().any(|&b| b)
}

/// What `x` is as a key: a column, or (`exprs`: the index has expression keys) an expression
/// that reads a column.
fn key_ref(x: &Scalar, exprs: bool) -> Option<KeyRef> {
    match x {
        Scalar::Col(c, _) => Some(KeyRef::Col(*c)),
        _ if exprs && !reads_no_column(x) => Some(KeyRef::Expr(format!("{x:?}"))),
        _ => None,
    }
}

/// A comparison of a key (a column, or with `exprs` an expression) with something that reads
/// no column: (key, op as `key op value`, value).
fn key_cmp(e: &Scalar, exprs: bool) -> Option<(KeyRef, CmpOp, &Scalar)> {
    let Scalar::Cmp(op, a, b) = e else { return None };
    if reads_no_column(b) {
        if let Some(k) = key_ref(a, exprs) {
            return Some((k, *op, b));
        }
    }
    if reads_no_column(a) {
        if let Some(k) = key_ref(b, exprs) {
            return Some((k, op.commute(), a));
        }
    }
    None
}

impl Plan {
    /// Plans the row source for `filter` on `table`: the index whose leading columns the most
    /// equality conditions bound (then a range on the next column), else a sequential scan.
    pub fn new(table: Arc<Table>, filter: Option<Scalar>, mut needed: Vec<bool>) -> Plan {
        let mut access = Access::Seq;
        if let Some(f) = &filter {
            f.columns_used(&mut needed);
            let mut best: Option<(usize, Access)> = None;
            for (i, ix) in table.indexes.iter().enumerate() {
                if !index::usable_for(&table, i, Some(f)) {
                    continue;
                }
                let Access::Index { eq, lo, hi, not_null, .. } = Self::index_access(f, &table, i) else { unreachable!("an index access") };
                let score = eq.len() * 4
                    + usize::from(lo.is_some())
                    + usize::from(hi.is_some())
                    + usize::from(ix.unique && eq.len() == ix.columns.len());
                if score > 0 && best.as_ref().is_none_or(|(s, _)| score > *s) {
                    best = Some((score, Access::Index { idx: i, eq, lo, hi, not_null }));
                }
            }
            if let Some((_, a)) = best {
                access = a;
            }
        }
        let types = table.columns.iter().map(|c| c.ty).collect();
        Plan { table, filter, access, needed, types, index_only: false, ordered: None, tid_col: false, lock_slot: None }
    }

    /// The index access for index `idx` of `table` that `filter` bounds: equality on its
    /// leading keys, then a range on the next one (an unbounded scan of the whole index when
    /// it bounds none). A key expression is bounded by a condition on the same expression.
    pub fn index_access(filter: &Scalar, table: &Table, idx: usize) -> Access {
        let ix = &table.indexes[idx];
        let mut keys: Vec<KeyRef> = Vec::with_capacity(ix.columns.len());
        if ix.has_exprs() {
            // An index whose expressions no longer bind bounds nothing (it is not used).
            let Ok(exprs) = index::bind_key_exprs(table, ix) else {
                return Access::Index { idx, eq: Vec::new(), lo: None, hi: None, not_null: false };
            };
            let mut next = exprs.iter();
            for &c in &ix.columns {
                keys.push(if c == crate::catalog::EXPR_KEY {
                    KeyRef::Expr(format!("{:?}", next.next().expect("one expression for each expression key")))
                } else {
                    KeyRef::Col(c)
                });
            }
        } else {
            keys.extend(ix.columns.iter().map(|&c| KeyRef::Col(c)));
        }
        let mut cs = Vec::new();
        conjuncts(filter, &mut cs);
        let conds: Vec<(KeyRef, CmpOp, &Scalar)> = cs.iter().filter_map(|c| key_cmp(c, ix.has_exprs())).collect();
        let mut eq = Vec::new();
        for k in &keys {
            match conds.iter().find(|(kk, op, _)| kk == k && *op == CmpOp::Eq) {
                Some((_, _, v)) => eq.push((*v).clone()),
                None => break,
            }
        }
        let (mut lo, mut hi, mut not_null) = (None, None, false);
        if let Some(next) = keys.get(eq.len()) {
            not_null = cs.iter().any(|c| matches!(c, Scalar::IsNull(x, true) if key_ref(x, ix.has_exprs()).is_some_and(|k| k == *next)));
            for (kk, op, v) in &conds {
                if kk != next {
                    continue;
                }
                match op {
                    CmpOp::Gt | CmpOp::Ge if lo.is_none() => lo = Some(((*v).clone(), *op == CmpOp::Ge)),
                    CmpOp::Lt | CmpOp::Le if hi.is_none() => hi = Some(((*v).clone(), *op == CmpOp::Le)),
                    _ => {}
                }
            }
        }
        Access::Index { idx, eq, lo, hi, not_null }
    }

    /// Whether an index-only scan can answer this scan: it reads an index, every column it
    /// decodes (for the filter and above) is a key column of that index, and every key column
    /// gives its value back from the key exactly (`btree::keycode::returnable`).
    pub fn index_only_possible(&self) -> bool {
        let Access::Index { idx, .. } = &self.access else { return false };
        if self.tid_col {
            return false;
        }
        let ix = &self.table.indexes[*idx];
        // An expression key gives no column back.
        if ix.has_exprs() {
            return false;
        }
        // A key is read back whole, so every key column must come back exactly (or none is
        // read: `count(*)`).
        let returnable = ix.columns.iter().all(|&c| crate::access::btree::keycode::returnable(&self.types[c]));
        self.needed.iter().enumerate().all(|(c, &n)| !n || (returnable && ix.columns.contains(&c)))
    }

    /// Calls `f(tid, row)` for each row the snapshot sees and the filter accepts.
    pub fn for_each(
        &self,
        s: &Session,
        snap: &Snapshot,
        params: &[Option<String>],
        f: impl FnMut(Tid, &[Value]) -> Result<Flow>,
    ) -> Result<()> {
        self.for_each_keyed(s, snap, params, None, f)
    }

    /// [`Plan::for_each`] with an index scan's equality values given (`keys`, in place of
    /// the plan's own `eq` expressions): the inner side of an index nested loop, probed with
    /// each outer row's key.
    pub fn for_each_keyed(
        &self,
        s: &Session,
        snap: &Snapshot,
        params: &[Option<String>],
        keys: Option<&[Scalar]>,
        mut f: impl FnMut(Tid, &[Value]) -> Result<Flow>,
    ) -> Result<()> {
        let shared = s.shared.clone();
        let (pool, txns, pins) = (&shared.pool, &shared.txns, &s.pins);
        let types = &self.types;
        let mut row = Vec::with_capacity(types.len());
        if let (Some(dir), None) = (self.ordered, keys) {
            return self.ordered_each(s, snap, params, dir, &mut f);
        }
        if self.index_only {
            if let Access::Index { idx, eq, lo, hi, not_null } = &self.access {
                let ix = &self.table.indexes[*idx];
                let bounds = (lo.as_ref(), hi.as_ref(), *not_null);
                if ix.usable_by(snap.xmin) && self.index_entries_each(s, snap, params, ix, keys.unwrap_or(eq), bounds, false, &mut f)? {
                    return Ok(());
                }
            }
        }
        let tids = match &self.access {
            Access::Seq => None,
            // A snapshot that may see a version the index does not name scans the heap
            // (`sql::index` invariant 5).
            Access::Index { idx, .. } if !self.table.indexes[*idx].usable_by(snap.xmin) => None,
            Access::Index { idx, eq, lo, hi, not_null } => {
                let bounds = (lo.as_ref(), hi.as_ref(), *not_null);
                index::scan_tids(s, &self.table, &self.table.indexes[*idx], keys.unwrap_or(eq), bounds, params)?
            }
        };
        let Some(tids) = tids else {
            let fpw = shared.settings.bool("full_page_writes");
            let wal = s.prune_logged(&self.table).then_some(&*shared.wal);
            let heap = HeapRel { pool, pins, rel: self.table.relfile, wal, full_page_writes: fpw, touched: None };
            heap::scan_pruning(&heap, txns, snap, |block, off, t| {
                decode_row(pool, pins, t, types, &self.needed, &mut row)
                    .map_err(|_| heap::corrupt_tuple(pool, self.table.relfile, block, off))?;
                if let Some(w) = &self.filter {
                    if !w.matches(&row, params)? {
                        return Ok(Flow::Continue);
                    }
                }
                f((block, off), &row)
            })?;
            return Ok(());
        };
        let heap = HeapRel { pool, pins, rel: self.table.relfile, wal: None, full_page_writes: false, touched: None };
        let trace = heap::tracing().then(std::time::Instant::now);
        let (mut rows, mut first_row_ns) = (0u64, None);
        let r = self.fetch_each(&heap, txns, snap, params, types, &tids, &mut row, |tid, row| {
            rows += 1;
            if let (Some(t0), None) = (trace, first_row_ns) {
                first_row_ns = Some(t0.elapsed().as_nanos() as u64);
            }
            f(tid, row)
        });
        if let (Some(t0), Access::Index { idx, .. }) = (trace, &self.access) {
            heap::record_trace(heap::ScanTrace {
                rel: self.table.relfile,
                index: Some(self.table.indexes[*idx].name.clone()),
                stats: heap::ScanStats { tuples_visible: rows, ..Default::default() },
                first_row_ns,
                total_ns: t0.elapsed().as_nanos() as u64,
            });
        }
        r
    }

    /// An ordered scan ([`Plan::ordered`]): the index's entries streamed in `dir` order, each
    /// row fetched as its entry is reached; else (the index unusable for this snapshot or
    /// these values) the heap's rows sorted by the index's columns in that order.
    fn ordered_each(
        &self,
        s: &Session,
        snap: &Snapshot,
        params: &[Option<String>],
        dir: ScanDirection,
        f: &mut dyn FnMut(Tid, &[Value]) -> Result<Flow>,
    ) -> Result<()> {
        let Access::Index { idx, eq, lo, hi, not_null } = &self.access else {
            return Err(PgError::internal("an ordered scan without an index"));
        };
        let ix = &self.table.indexes[*idx];
        // The planner orders by no index that needs `check_xmin`, and a table's indexes are
        // fixed for a plan (a new index is a new table definition).
        if !ix.usable_by(snap.xmin) {
            return Err(PgError::internal(format!("an ordered scan of index \"{}\", which this snapshot may not use", ix.name)));
        }
        let backward = dir == ScanDirection::Backward;
        if self.index_entries_each(s, snap, params, ix, eq, (lo.as_ref(), hi.as_ref(), *not_null), backward, f)? {
            return Ok(());
        }
        // A search value does not convert exactly to its key type: the whole index in order.
        // The filter, checked on every row, still applies the conditions; rows an equality
        // keeps share its key prefix, so the index's order is still the ORDER BY's.
        if !self.index_entries_each(s, snap, params, ix, &[], (None, None, false), backward, f)? {
            return Err(PgError::internal(format!("an unbounded scan of index \"{}\" refused", ix.name)));
        }
        Ok(())
    }

    /// An index scan that streams (PostgreSQL's nodeIndexscan.c and nodeIndexonlyscan.c):
    /// entries are read in key order (descending when `backward`) as the scan reaches them.
    /// For an index-only scan the visibility map is read for each entry's heap page, and a
    /// page marked all-visible (`access::vm`) means the entry's version is visible to this
    /// snapshot, so the row is the key's values (the columns not decoded stay NULL).
    /// Otherwise the heap is visited ("Heap Fetches" in EXPLAIN ANALYZE of an index-only
    /// scan). `Ok(false)`: a search value does not convert to the key type and nothing was
    /// read; the caller scans the heap.
    #[allow(clippy::too_many_arguments)]
    fn index_entries_each(
        &self,
        s: &Session,
        snap: &Snapshot,
        params: &[Option<String>],
        ix: &crate::catalog::Index,
        eq: &[Scalar],
        bounds: index::RangeBounds<'_>,
        backward: bool,
        f: &mut dyn FnMut(Tid, &[Value]) -> Result<Flow>,
    ) -> Result<bool> {
        let shared = s.shared.clone();
        let (pool, txns, pins) = (&shared.pool, &shared.txns, &s.pins);
        let heap = HeapRel { pool, pins, rel: self.table.relfile, wal: None, full_page_writes: false, touched: None };
        let mut vm = crate::access::vm::Reader::new(pool, pins, self.table.relfile);
        let index_only = self.index_only;
        // Keys are decoded only by an index-only scan, never of an index with expression keys
        // (`index_only_possible`).
        let key_types: Vec<SqlType> = if index_only { ix.columns.iter().map(|&c| self.types[c]).collect() } else { Vec::new() };
        let decode = self.needed.iter().any(|&n| n);
        let (mut row, mut stored) = (vec![Value::Null; self.types.len()], Vec::with_capacity(key_types.len()));
        let trace = heap::tracing().then(std::time::Instant::now);
        let (mut rows, mut fetches, mut first_row_ns) = (0u64, 0u64, None);
        let mut mark = |tid: Tid| if index_only { vm.is_set(tid.0) } else { Ok(false) };
        let failpoints = &shared.wal.failpoints;
        let used = index::scan_entries(s, &self.table, ix, eq, bounds, params, backward, &mut mark, |key, tid, all_visible| {
            if index_only {
                failpoints.hit(FAILPOINT_INDEX_ONLY_ENTRY);
            }
            let tid = if all_visible {
                if decode {
                    crate::access::btree::keycode::decode_key(key, &key_types, &ix.options, &mut stored).ok_or_else(|| {
                        PgError::new(sqlstate::INDEX_CORRUPTED, format!("index \"{}\" has a key that does not parse", ix.name))
                    })?;
                    for (k, v) in stored.iter().enumerate() {
                        let c = ix.columns[k];
                        if self.needed[c] {
                            row[c] = v.as_ref().map_or(Value::Null, |v| Value::decode(&self.types[c], v));
                        }
                    }
                }
                tid
            } else {
                fetches += 1;
                match heap.fetch(txns, tid, snap, |t| decode_row(pool, pins, t, &self.types, &self.needed, &mut row))? {
                    None => return Ok(Flow::Continue),
                    Some((at, r)) => {
                        r.map_err(|_| heap::corrupt_tuple(pool, self.table.relfile, at.0, at.1))?;
                        at
                    }
                }
            };
            if let Some(w) = &self.filter {
                if !w.matches(&row, params)? {
                    return Ok(Flow::Continue);
                }
            }
            rows += 1;
            if let (Some(t0), None) = (trace, first_row_ns) {
                first_row_ns = Some(t0.elapsed().as_nanos() as u64);
            }
            f(tid, &row)
        })?;
        if let (Some(t0), true) = (trace, used) {
            heap::record_trace(heap::ScanTrace {
                rel: self.table.relfile,
                index: Some(ix.name.clone()),
                stats: heap::ScanStats { tuples_visible: rows, heap_fetches: fetches, ..Default::default() },
                first_row_ns,
                total_ns: t0.elapsed().as_nanos() as u64,
            });
        }
        Ok(used)
    }

    #[allow(clippy::too_many_arguments)]
    fn fetch_each(
        &self,
        heap: &HeapRel<'_>,
        txns: &crate::txn::TxnManager,
        snap: &Snapshot,
        params: &[Option<String>],
        types: &[SqlType],
        tids: &[Tid],
        row: &mut Vec<Value>,
        mut f: impl FnMut(Tid, &[Value]) -> Result<Flow>,
    ) -> Result<()> {
        let (pool, pins) = (heap.pool, heap.pins);
        for (i, &tid) in tids.iter().enumerate() {
            if i % 256 == 255 {
                crate::interrupt::check_for_interrupts()?;
            }
            let got = heap.fetch(txns, tid, snap, |t| decode_row(pool, pins, t, types, &self.needed, row))?;
            let tid = match got {
                None => continue,
                Some((at, r)) => {
                    r.map_err(|_| heap::corrupt_tuple(pool, self.table.relfile, at.0, at.1))?;
                    at
                }
            };
            if let Some(w) = &self.filter {
                if !w.matches(row, params)? {
                    continue;
                }
            }
            if let Flow::Stop = f(tid, row)? {
                break;
            }
        }
        Ok(())
    }
}

/// Decodes the `needed` columns of tuple `t` (others read as NULL), fetching TOASTed values.
pub(crate) fn decode_row(pool: &BufferPool, pins: &Pins, t: &[u8], types: &[SqlType], needed: &[bool], out: &mut Vec<Value>) -> Result<()> {
    if !needed.iter().any(|&n| n) {
        // `count(*)` and the like: no column is read, so none is decoded.
        if out.len() != types.len() || out.iter().any(|v| !matches!(v, Value::Null)) {
            out.clear();
            out.resize(types.len(), Value::Null);
        }
        return Ok(());
    }
    // The row is decoded in place: a column not needed is NULL from the first row on and
    // never written again (it is not decoded), and columns after the last one needed are
    // not walked (so damage there goes unnoticed, as it does in a column not needed).
    if out.len() != types.len() {
        out.clear();
        out.resize(types.len(), Value::Null);
    }
    debug_assert!(out.iter().zip(needed).all(|(v, &n)| n || *v == Value::Null), "an unneeded column holds a value");
    let last = needed.iter().rposition(|&n| n).unwrap_or(0);
    let mut scratch = Vec::new();
    let mut failed = None;
    tuple::deform_each(t, types, |i, a| {
        if needed[i] {
            match a {
                Some(a) => match crate::copy::exec::attr_bytes(pool, pins, a, &mut scratch) {
                    Ok(b) => out[i].decode_into(&types[i], b),
                    Err(e) => {
                        failed = Some(e);
                        return false;
                    }
                },
                None => out[i] = Value::Null,
            }
        }
        i < last
    })
    .map_err(|c| PgError::new(sqlstate::DATA_CORRUPTED, c.0))?;
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(())
}

/// Forms a heap tuple for `values` (one per column, NULL = `Value::Null`, already of the
/// column types): NOT NULL checked, big values moved to TOAST.
pub(crate) fn form_tuple(s: &mut Session, table: &Table, stored: &[Option<Vec<u8>>]) -> Result<Vec<u8>> {
    let shared = s.shared.clone();
    let types: Vec<SqlType> = table.columns.iter().map(|c| c.ty).collect();
    let mut b = tuple::TupleBuilder::new(types.len());
    b.begin();
    for (i, v) in stored.iter().enumerate() {
        match v {
            None => b.push_null(),
            Some(v) if types[i].fixed_len().is_some() => b.push_fixed(v),
            Some(v) => b.push_varlena(v),
        }
    }
    for (c, col) in table.columns.iter().enumerate() {
        if col.not_null && b.is_null(c) {
            let detail = crate::copy::exec::failing_row(&mut b, &types, &shared.pool, &s.pins);
            return Err(PgError::new(
                sqlstate::NOT_NULL_VIOLATION,
                format!("null value in column \"{}\" of relation \"{}\" violates not-null constraint", col.name, table.name),
            )
            .with_detail(detail)
            .with_table(table)
            .with_column(&col.name));
        }
    }
    let bs = shared.pool.block_size();
    let threshold = match shared.settings.bytes("heapstore.toast_threshold") {
        0 => heap::toast::default_threshold(bs),
        n => n as usize,
    };
    if b.len() > threshold {
        if let Some(trel) = table.toast_relfile {
            let (xid, cid) = (s.xid(), s.txn().cid);
            let wal = crate::exec::rows::wal_for(s, table);
            let fpw = shared.settings.bool("full_page_writes");
            let touched = s.touch_log();
            let mut tb = heap::BulkInsert::logged(&shared.pool, &s.pins, trel, true, wal.then_some(&*shared.wal), fpw);
            tb.touched = touched.as_deref();
            heap::toast::toast_row(&mut b, threshold, &mut tb, trel, xid, cid)?;
            tb.finish()?;
        }
    }
    Ok(b.finish().to_vec())
}

/// Stored forms of `values` for the table's columns (assignment conversion).
fn store_row(table: &Table, values: &[Value]) -> Result<Vec<Option<Vec<u8>>>> {
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        if *v == Value::Null {
            out.push(None);
            continue;
        }
        let mut b = Vec::new();
        expr::store(v, &table.columns[i].ty, &mut b).map_err(|e| {
            if e.code == sqlstate::NUMERIC_VALUE_OUT_OF_RANGE || e.code == sqlstate::INVALID_TEXT_REPRESENTATION {
                e
            } else {
                e.with_context(format!("column \"{}\"", table.columns[i].name))
            }
        })?;
        out.push(Some(b));
    }
    Ok(out)
}

/// Whether the table's changes are WAL-logged, and full_page_writes.
pub(crate) fn heap_rel(s: &mut Session, table: &Table) -> (bool, bool) {
    let wal = crate::exec::rows::wal_for(s, table);
    (wal, s.shared.settings.bool("full_page_writes"))
}

/// The target columns of an INSERT (its column list, or all columns).
fn insert_columns(table: &Table, columns: &[sqlparser::ast::Ident]) -> Result<Vec<usize>> {
    if columns.is_empty() {
        return Ok((0..table.columns.len()).collect());
    }
    let mut v = Vec::new();
    for c in columns {
        let n = fold_ident(c);
        let i = table.column_index(&n).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" of relation \"{}\" does not exist", table.name))
        })?;
        if v.contains(&i) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{n}\" specified more than once")));
        }
        v.push(i);
    }
    Ok(v)
}

/// PostgreSQL's 428C9 for a value given to a `GENERATED ALWAYS` identity column.
fn identity_always_error(col: &crate::catalog::Column) -> PgError {
    PgError::new("428C9", format!("cannot insert a non-DEFAULT value into column \"{}\"", col.name))
        .with_detail(format!("Column \"{}\" is an identity column defined as GENERATED ALWAYS.", col.name))
        .with_hint("Use OVERRIDING SYSTEM VALUE to override.")
}

/// Binds a column's DEFAULT expression: untyped literals take the column's type, and the
/// value must be assignable to it. With the session, the functions that read it
/// (`CURRENT_USER`, `CURRENT_SCHEMA`, `current_setting`, ...) are available.
pub(crate) fn bind_default(e: &Expr, col: &crate::catalog::Column, now_us: i64, s: Option<&Session>) -> Result<Scalar> {
    let scope = super::expr::Scope { same_query: false, cols: Vec::new() };
    let with_session = s.map(SessionOnly);
    let queries = with_session.as_ref().map(|q| q as &dyn super::expr::SubqueryBinder);
    let stmt_us = Some(s.map_or(now_us, |s| s.statement_start_us()));
    let binder = super::expr::Binder { now_us: Some(now_us), queries, stmt_us, ..super::expr::Binder::new(&scope) };
    let b = bind_untyped_with(&binder, e, col.ty, now_us)?;
    check_assignment(&b, col)?;
    Ok(b)
}

/// The session, and no subqueries: what a DEFAULT expression binds with.
struct SessionOnly<'a>(&'a Session);

impl super::expr::SubqueryBinder for SessionOnly<'_> {
    fn subquery(&self, _: &sqlparser::ast::Query, _: &[&super::expr::Scope]) -> Result<crate::exec::BoundQuery> {
        Err(PgError::feature("cannot use subquery in DEFAULT expression"))
    }

    fn session(&self) -> Option<&Session> {
        Some(self.0)
    }
}

/// INSERT INTO t [(cols)] VALUES (...), (...) | query | DEFAULT VALUES [RETURNING ...].
pub fn insert(s: &mut Session, ins: Insert, params: &[Option<String>]) -> Result<QueryResult> {
    let TableObject::TableName(name) = &ins.table else { return Err(PgError::feature("INSERT into a function is not supported")) };
    // Locked before anything is bound to its columns: an ALTER TABLE that commits while the
    // lock is waited for is seen (as PostgreSQL locks while it parses).
    let table = s.table(&crate::catalog::relation_key(name)?)?;
    let table = s.lock_table_current(&table, LockMode::RowExclusive)?;
    let cols = insert_columns(&table, &ins.columns)?;
    let alias = ins.table_alias.as_ref().map(fold_ident);
    let returning = ins.returning.as_deref().map(|items| Returning::bind_as(s, &table, alias.as_deref(), items)).transpose()?;
    lock_subquery_tables(s, returning.iter().flat_map(|r| r.exprs()))?;
    let conflict = ins.on.as_ref().map(|on| OnConflict::bind(s, &table, alias.as_deref(), on)).transpose()?;
    lock_subquery_tables(s, conflict.iter().flat_map(|c| c.exprs()))?;
    if let Some((sets, _)) = conflict.as_ref().and_then(|oc| oc.update.as_ref()) {
        // The keys such an update removes are not tracked for the foreign keys onto them.
        let referenced = crate::exec::fk::referencing(s, table.oid);
        if sets.iter().any(|(c, _)| referenced.iter().any(|(_, f)| f.ref_columns.contains(c))) {
            return Err(PgError::feature("ON CONFLICT DO UPDATE of a column a foreign key references is not supported by heapstore"));
        }
    }
    let src = match &ins.source {
        None => None,
        Some(src) => match &*src.body {
            SetExpr::Values(values) => Some(values),
            _ => return insert_select(s, &table, &cols, src, params, returning.as_ref(), conflict.as_ref()),
        },
    };
    let mut given: Vec<Vec<Option<Scalar>>> = Vec::new();
    let mut need_default = vec![false; table.columns.len()];
    match src {
        None => {
            given.push(vec![None; table.columns.len()]);
            need_default.iter_mut().for_each(|d| *d = true);
        }
        Some(values) => {
            for r in &values.rows {
                if r.len() > cols.len() {
                    return Err(PgError::syntax("INSERT has more expressions than target columns"));
                }
                let mut row: Vec<Option<Scalar>> = vec![None; table.columns.len()];
                for (k, e) in r.iter().enumerate() {
                    let c = cols[k];
                    if matches!(e, Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default") && id.quote_style.is_none()) {
                        need_default[c] = true;
                        continue;
                    }
                    if table.columns[c].identity == Some(crate::catalog::Identity::Always) {
                        return Err(identity_always_error(&table.columns[c]));
                    }
                    // No column can be referenced in VALUES: an empty scope.
                    let now = s.txn().start_us;
                    let b = bind_assignment(s, e, &expr::Scope::default(), table.columns[c].ty, now, "VALUES").map_err(|e| {
                        let named = e.message.strip_prefix("column \"").and_then(|m| m.strip_suffix("\" does not exist"));
                        match named.filter(|n| e.code == sqlstate::UNDEFINED_COLUMN && table.column_index(n).is_some()) {
                            Some(n) => {
                                let hint = format!(
                                    "There is a column named \"{n}\" in table \"{}\", but it cannot be referenced from this part of the query.",
                                    alias.as_deref().unwrap_or(&table.name)
                                );
                                e.with_hint(hint)
                            }
                            None => e,
                        }
                    })?;
                    check_assignment(&b, &table.columns[c])?;
                    row[c] = Some(b);
                }
                for (c, need) in need_default.iter_mut().enumerate() {
                    if !cols[..r.len()].contains(&c) {
                        *need = true;
                    }
                }
                given.push(row);
            }
        }
    }
    let defaults = crate::exec::rows::Defaults::new(s, &table, |c| need_default[c])?;
    let xid = s.xid();
    let cid = s.txn().cid;
    let (wal, fpw) = heap_rel(s, &table);
    let checks = crate::exec::rows::Checks::new(&table)?;
    let mut fk = crate::exec::fk::Tracker::new(s, &table)?;
    let mut out = RowsOut::new(returning.as_ref());
    // Subqueries in VALUES read the tables as the statement found them (not the rows it
    // inserts), as PostgreSQL's command id rule gives.
    lock_subquery_tables(s, given.iter().flatten().flatten())?;
    let snap = s.snapshot();
    out.snap = Some(snap.clone());
    // Values are computed row by row, in order (a volatile default, `nextval`, sees the rows
    // before it), then stored.
    for row in &given {
        let mut vals = vec![Value::Null; table.columns.len()];
        for (c, e) in row.iter().enumerate() {
            vals[c] = match e {
                Some(e) => eval_with_subqueries(e, s, &snap, &[], params)?,
                None => defaults.value(s, c)?,
            };
        }
        let done = match &conflict {
            Some(oc) => oc.insert_or_resolve(s, &table, &vals, (wal, fpw), xid, cid, &checks, params, &snap)?,
            None => Some(insert_row(s, &table, &vals, (wal, fpw), xid, cid, &checks)?),
        };
        if let Some(stored) = done {
            if let Some(fk) = &mut fk {
                fk.inserted_stored(&stored)?;
            }
            out.push(s, &table, &stored, &[], params)?;
        }
    }
    if let Some(fk) = fk {
        fk.finish(s)?;
    }
    out.finish("INSERT 0")
}

/// Whether a value of type `from` may be assigned to a column of type `to` (PostgreSQL's
/// assignment casts among the types heapstore has).
pub(crate) fn assignable(from: &SqlType, to: &SqlType) -> bool {
    use crate::types::TypeId::*;
    let num = |t: crate::types::TypeId| matches!(t, Int2 | Int4 | Int8 | Float4 | Float8 | Numeric);
    let text = |t: crate::types::TypeId| matches!(t, Text | Varchar | Bpchar | Name | Char);
    if to.id == Char && !text(from.id) {
        return false; // "char" from a number is a byte value in PostgreSQL: explicit only
    }
    // Arrays: element by element (PostgreSQL's array coercion with the element's
    // assignment cast); a vector and its array type are binary-compatible.
    if from.is_array() && to.is_array() {
        return match (from.elem(), to.elem()) {
            (Some(f), Some(t)) => f.id == t.id || (!from.is_vector() && !to.is_vector() && assignable(&f, &t)),
            _ => false,
        };
    }
    from.id == to.id
        || (num(from.id) && num(to.id))
        || text(to.id)
        || (expr::is_datetime(from.id) && expr::is_datetime(to.id))
        || matches!((from.id, to.id), (Int2 | Int4 | Int8, Oid) | (Oid, Int4 | Int8) | (Json, Jsonb) | (Jsonb, Json))
        || matches!(
            (from.id, to.id),
            (Timestamp | Timestamptz, Time) | (Timestamptz, TimeTz) | (TimeTz, Time) | (Time, TimeTz) | (Interval, Time) | (Time, Interval)
        )
}

/// `INSERT INTO t [(cols)] SELECT ...` (any query): the query runs to completion first, with
/// the statement's snapshot, so the rows it reads never include the ones being inserted.
pub(crate) fn insert_select(
    s: &mut Session,
    table: &Arc<Table>,
    cols: &[usize],
    src: &sqlparser::ast::Query,
    params: &[Option<String>],
    returning: Option<&Returning>,
    conflict: Option<&OnConflict>,
) -> Result<QueryResult> {
    let now = s.txn.as_ref().map(|t| t.start_us);
    let mut b = super::query::Planner::new(s, now).query(src, &[])?;
    if b.columns.len() > cols.len() {
        return Err(PgError::syntax("INSERT has more expressions than target columns"));
    }
    // An untyped literal (a quoted string, or NULL) in the select list takes its target
    // column's type, as PostgreSQL's transformInsertStmt resolves it, not text.
    // The planner resolved them to text; the select list says which they were.
    let items = match &*src.body {
        SetExpr::Select(sel) => sel.projection.as_slice(),
        _ => &[],
    };
    if let crate::exec::Node::Project(_, es) = &mut b.node {
        if es.len() == items.len() {
            for (k, item) in items.iter().enumerate() {
                let e = match item {
                    sqlparser::ast::SelectItem::UnnamedExpr(e) | sqlparser::ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
                    _ => continue,
                };
                let Expr::Value(v) = e else { continue };
                let ty = table.columns[cols[k]].ty;
                es[k] = match &v.value {
                    sqlparser::ast::Value::SingleQuotedString(t) | sqlparser::ast::Value::EscapedStringLiteral(t) => {
                        Scalar::Const(expr::parse_as(&ty, t)?)
                    }
                    sqlparser::ast::Value::Null => Scalar::Const(Value::Null),
                    _ => continue,
                };
                b.columns[k].ty = ty;
            }
        }
    }
    for (k, oc) in b.columns.iter().enumerate() {
        let col = &table.columns[cols[k]];
        if !assignable(&oc.ty, &col.ty) {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("column \"{}\" is of type {} but expression is of type {}", col.name, col.ty.name(), oc.ty.name()),
            )
            .with_hint("You will need to rewrite or cast the expression."));
        }
        if col.identity == Some(crate::catalog::Identity::Always) {
            return Err(identity_always_error(col));
        }
    }
    let given = &cols[..b.columns.len()];
    let defaults = crate::exec::rows::Defaults::new(s, table, |c| !given.contains(&c))?;
    s.lock_table(table, LockMode::RowExclusive)?;
    crate::exec::lock_tables(s, &b.node)?;
    let snap = s.snapshot();
    let rows = crate::exec::Exec::new(s, snap.clone(), params).collect(&b.node, &[])?;
    let xid = s.xid();
    let cid = s.txn().cid;
    let (wal, fpw) = heap_rel(s, table);
    let checks = crate::exec::rows::Checks::new(table)?;
    let mut fk = crate::exec::fk::Tracker::new(s, table)?;
    let mut out = RowsOut::new(returning);
    out.snap = Some(snap.clone());
    let mut vals = vec![Value::Null; table.columns.len()];
    let unpad: Vec<bool> = b.columns.iter().enumerate().map(|(k, oc)| pads_away(Some(oc.ty), table.columns[cols[k]].ty)).collect();
    for r in &rows {
        for (c, v) in vals.iter_mut().enumerate() {
            *v = if given.contains(&c) { Value::Null } else { defaults.value(s, c)? };
        }
        for (k, v) in r.iter().enumerate() {
            vals[cols[k]] = match v {
                Value::Text(t) if unpad[k] => Value::Text(t.trim_end_matches(' ').to_string()),
                v => v.clone(),
            };
        }
        let done = match conflict {
            Some(oc) => oc.insert_or_resolve(s, table, &vals, (wal, fpw), xid, cid, &checks, params, &snap)?,
            None => Some(insert_row(s, table, &vals, (wal, fpw), xid, cid, &checks)?),
        };
        if let Some(stored) = done {
            if let Some(fk) = &mut fk {
                fk.inserted_stored(&stored)?;
            }
            out.push(s, table, &stored, &[], params)?;
        }
    }
    if let Some(fk) = fk {
        fk.finish(s)?;
    }
    out.finish("INSERT 0")
}

/// A bound RETURNING list: expressions over the changed row's columns.
pub(crate) struct Returning {
    items: Vec<super::query::OutItem>,
}

/// A result's columns (name, type name) and, for table columns, their sources.
pub(crate) type Described = (Vec<(String, String)>, Vec<Option<(u32, i16)>>);

/// ON CONFLICT DO UPDATE's assignments and WHERE clause.
type DoUpdate = (Vec<(usize, Scalar)>, Option<Scalar>);

impl Returning {
    /// With the table named `alias` (`INSERT INTO t AS x ... RETURNING x.id`).
    pub(crate) fn bind_as(s: &Session, table: &Table, alias: Option<&str>, items: &[sqlparser::ast::SelectItem]) -> Result<Returning> {
        let r = Returning { items: super::query::bind_returning(s, table, alias, items)? };
        r.exprs().try_for_each(|e| once_per_row_only(e, "RETURNING"))?;
        Ok(r)
    }

    /// Its expressions.
    fn exprs(&self) -> impl Iterator<Item = &Scalar> {
        self.items.iter().map(|(_, e, _)| e)
    }

    /// Over `scope` (UPDATE ... FROM's: the FROM items' columns too).
    pub(crate) fn bind_in(s: &Session, scope: &expr::Scope, items: &[sqlparser::ast::SelectItem]) -> Result<Returning> {
        let r = Returning { items: super::query::bind_returning_in(s, scope, items)? };
        r.exprs().try_for_each(|e| once_per_row_only(e, "RETURNING"))?;
        Ok(r)
    }

    /// The result's columns (name, type name) and their sources.
    pub(crate) fn describe(&self) -> Described {
        let cols = self.items.iter().map(|(n, e, _)| (n.clone(), expr::type_of(e).map_or_else(|| "text".into(), |t| t.name()))).collect();
        (cols, self.items.iter().map(|(_, _, src)| *src).collect())
    }
}

/// What a row statement gives back: its count, and with RETURNING the rows.
struct RowsOut<'r> {
    ret: Option<&'r Returning>,
    rows: Vec<Vec<Option<String>>>,
    count: u64,
    row: Vec<Value>,
    /// The statement's snapshot, which subqueries in RETURNING read with (they do not see
    /// the statement's own changes, as in PostgreSQL). Set before the first row is pushed.
    snap: Option<Snapshot>,
}

impl<'r> RowsOut<'r> {
    fn new(ret: Option<&'r Returning>) -> RowsOut<'r> {
        RowsOut { ret, rows: Vec::new(), count: 0, row: Vec::new(), snap: None }
    }

    /// One row changed: `stored` is its new version (a deleted row's last); `rest` the rest
    /// of the row that found it (UPDATE ... FROM's joined row), which RETURNING may read.
    fn push(&mut self, s: &Session, table: &Table, stored: &[Option<Vec<u8>>], rest: &[Value], params: &[Option<String>]) -> Result<()> {
        self.count += 1;
        let Some(ret) = self.ret else { return Ok(()) };
        self.row.clear();
        for (c, v) in stored.iter().enumerate() {
            self.row.push(match v {
                None => Value::Null,
                Some(b) => Value::decode(&table.columns[c].ty, b),
            });
        }
        self.row.extend_from_slice(rest);
        let mut out = Vec::with_capacity(ret.items.len());
        for (_, e, _) in &ret.items {
            let v = match &self.snap {
                Some(snap) => eval_with_subqueries(e, s, snap, &self.row, params)?,
                None if has_sublink(e) => return Err(PgError::internal("RETURNING's subquery without the statement's snapshot")),
                None => expr::eval_with_session(e, s, &self.row, params)?,
            };
            let ty = expr::type_of(e).or_else(|| expr::value_type(&v)).unwrap_or(SqlType::new(crate::types::TypeId::Text));
            out.push(v.to_text(&ty));
        }
        self.rows.push(out);
        Ok(())
    }

    /// The result, tagged `<word> <count>`.
    fn finish(self, word: &str) -> Result<QueryResult> {
        let mut r = super::tag(&format!("{word} {}", self.count));
        if let Some(ret) = self.ret {
            let (columns, sources) = ret.describe();
            r.columns = columns;
            r.column_sources = sources;
            r.rows = self.rows;
            r.returns_rows = true;
        }
        Ok(r)
    }
}

/// `ON CONFLICT [target] DO NOTHING | DO UPDATE SET ... [WHERE ...]`, bound.
///
/// Arbiters: the unique index the target names (by its columns, or its constraint's name), or
/// every unique index for a DO NOTHING without target. Each proposed row is first looked up
/// through the arbiters with a fresh snapshot (READ COMMITTED: rows committed since the
/// statement began count); a row found is skipped (DO NOTHING) or updated (DO UPDATE, with
/// PostgreSQL's `excluded` row); else the row is inserted. If its insertion then meets a
/// conflicting row committed meanwhile (23505 on an arbiter), the inserted version is made dead
/// at once (its xmin invalid, as PostgreSQL's super-delete of a speculative tuple) and the row
/// is tried again.
pub(crate) struct OnConflict {
    arbiters: Vec<usize>,
    /// None: DO NOTHING; else the assignments (column, expression over the existing row's
    /// columns then the `excluded` row's) and the WHERE clause.
    update: Option<DoUpdate>,
}

/// The inference target `dialect::rewrite_on_conflict_target` put in a constraint name:
/// (elements, WHERE predicate) as SQL text.
fn inference_target(name: &sqlparser::ast::ObjectName) -> Option<(String, Option<String>)> {
    let [part] = name.0.as_slice() else { return None };
    let id = part.as_ident().filter(|i| i.quote_style.is_some())?;
    let rest = id.value.strip_prefix(super::dialect::INFER_MARKER)?;
    Some(match rest.split_once(super::dialect::INFER_WHERE) {
        Some((e, p)) => (e.to_string(), Some(p.to_string())),
        None => (rest.to_string(), None),
    })
}

/// PostgreSQL's arbiter inference for `ON CONFLICT (elements) [WHERE predicate]`: every unique
/// index whose keys — columns and expressions, in any order — are exactly the elements, and
/// which is not partial or whose predicate the WHERE clause implies (`index::implies`).
/// None: 42P10.
fn infer_arbiters(table: &Table, alias: Option<&str>, unique: &[usize], elements: &str, predicate: Option<&str>) -> Result<Vec<usize>> {
    let key = |k: KeyRef| match k {
        KeyRef::Col(c) => format!("c{c}"),
        KeyRef::Expr(d) => format!("e{d}"),
    };
    // Errors name no position: the text is the target's, not the statement's.
    let unplaced = |mut e: PgError| {
        e.position = 0;
        e
    };
    // The whole text, or a syntax error (an operator class, ASC / DESC after an element).
    let whole = |text: &str, what: &str| -> Result<sqlparser::parser::Parser<'static>> {
        sqlparser::parser::Parser::new(&super::dialect::Pg)
            .try_with_sql(text)
            .map_err(|e| PgError::syntax(format!("syntax error in ON CONFLICT's {what}: {e}")))
    };
    let mut p = whole(elements, "inference specification")?;
    let exprs = p
        .parse_comma_separated(sqlparser::parser::Parser::parse_expr)
        .and_then(|v| p.expect_token(&sqlparser::tokenizer::Token::EOF).map(|_| v))
        .map_err(|e| PgError::syntax(format!("syntax error in ON CONFLICT's inference specification: {e}")))?;
    let mut want = Vec::with_capacity(exprs.len());
    for e in &exprs {
        let b = super::expr::bind_as(e, table, alias).map_err(unplaced)?;
        want.push(key(match b {
            Scalar::Col(c, _) => KeyRef::Col(c),
            other => KeyRef::Expr(format!("{other:?}")),
        }));
    }
    want.sort();
    want.dedup();
    let filter = match predicate {
        Some(text) => {
            let mut p = whole(text, "WHERE clause")?;
            let e = p
                .parse_expr()
                .and_then(|e| p.expect_token(&sqlparser::tokenizer::Token::EOF).map(|_| e))
                .map_err(|e| PgError::syntax(format!("syntax error in ON CONFLICT's WHERE clause: {e}")))?;
            let scope = super::expr::Scope::of_table(table, alias);
            Some(super::expr::Binder::new(&scope).boolean(&e, "WHERE").map_err(unplaced)?)
        }
        None => None,
    };
    let mut found = Vec::new();
    for &i in unique {
        let ix = &table.indexes[i];
        let bound = index::bind_key_exprs(table, ix)?;
        let mut next = bound.iter();
        let mut have: Vec<String> = ix
            .columns
            .iter()
            .map(|&c| {
                key(if c == crate::catalog::EXPR_KEY {
                    KeyRef::Expr(format!("{:?}", next.next().expect("one expression for each expression key")))
                } else {
                    KeyRef::Col(c)
                })
            })
            .collect();
        have.sort();
        have.dedup();
        if have != want {
            continue;
        }
        if let Some(pred) = index::predicate_of(table, ix)? {
            if !index::implies(filter.as_ref(), &pred) {
                continue;
            }
        }
        found.push(i);
    }
    if found.is_empty() {
        return Err(PgError::new("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification"));
    }
    Ok(found)
}

impl OnConflict {
    pub(crate) fn bind(s: &Session, table: &Table, alias: Option<&str>, on: &sqlparser::ast::OnInsert) -> Result<OnConflict> {
        use sqlparser::ast::{ConflictTarget, OnConflictAction, OnInsert};
        let OnInsert::OnConflict(oc) = on else { return Err(PgError::feature("ON DUPLICATE KEY UPDATE is not PostgreSQL's syntax")) };
        let unique: Vec<usize> = (0..table.indexes.len()).filter(|&i| table.indexes[i].unique).collect();
        // Without a target all unique indexes are arbiters; a partial or expression index is
        // inferred only from a target naming its expressions (and with a WHERE clause
        // implying its predicate: `infer_arbiters`).
        let arbiters = match &oc.conflict_target {
            None => {
                if matches!(oc.action, OnConflictAction::DoUpdate(_)) {
                    return Err(PgError::syntax("ON CONFLICT DO UPDATE requires inference specification or constraint name")
                        .with_hint("For example, ON CONFLICT (column_name)."));
                }
                unique
            }
            Some(ConflictTarget::Columns(cs)) => {
                let mut want: Vec<usize> = Vec::new();
                for c in cs {
                    let n = fold_ident(c);
                    let i = table
                        .column_index(&n)
                        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist")))?;
                    want.push(i);
                }
                want.sort_unstable();
                want.dedup();
                let found: Vec<usize> = unique
                    .into_iter()
                    .filter(|&i| table.indexes[i].predicate.is_none() && !table.indexes[i].has_exprs())
                    .filter(|&i| {
                        let mut k = table.indexes[i].columns.clone();
                        k.sort_unstable();
                        k == want
                    })
                    .collect();
                if found.is_empty() {
                    return Err(PgError::new("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification"));
                }
                found
            }
            Some(ConflictTarget::OnConstraint(name)) if inference_target(name).is_some() => {
                let (elements, predicate) = inference_target(name).expect("checked");
                infer_arbiters(table, alias, &unique, &elements, predicate.as_deref())?
            }
            Some(ConflictTarget::OnConstraint(name)) => {
                let n = super::ddl_table_name(name)?;
                let i = table
                    .indexes
                    .iter()
                    .position(|ix| ix.name == n && ix.constraint && ix.unique)
                    .ok_or_else(|| PgError::new("42704", format!("constraint \"{n}\" for table \"{}\" does not exist", table.name)))?;
                vec![i]
            }
        };
        let update = match &oc.action {
            OnConflictAction::DoNothing => None,
            OnConflictAction::DoUpdate(du) => {
                let mut scope = super::expr::Scope::of_table(table, alias);
                let excluded = super::expr::Scope::of_table(table, Some("excluded"));
                scope.cols.extend(excluded.cols);
                let now = s.txn.as_ref().map_or(0, |t| t.start_us);
                let sets = bind_sets(s, table, &scope, &du.assignments, now)?;
                let planner = super::query::Planner::new(s, Some(now));
                let filter = du.selection.as_ref().map(|w| planner.bind_for_change(w, &scope)).transpose()?;
                for e in sets.iter().map(|(_, e)| e).chain(filter.iter()) {
                    once_per_row_only(e, "ON CONFLICT DO UPDATE")?;
                }
                Some((sets, filter))
            }
        };
        Ok(OnConflict { arbiters, update })
    }

    /// DO UPDATE's expressions (assignments and WHERE).
    fn exprs(&self) -> impl Iterator<Item = &Scalar> {
        self.update.iter().flat_map(|(sets, filter)| sets.iter().map(|(_, e)| e).chain(filter.iter()))
    }

    /// Inserts `vals` or resolves its conflict (the type's doc). Returns the stored row
    /// inserted or updated, None when it was skipped.
    #[allow(clippy::too_many_arguments)]
    fn insert_or_resolve(
        &self,
        s: &mut Session,
        table: &Arc<Table>,
        vals: &[Value],
        wal: (bool, bool),
        xid: crate::txn::Xid,
        cid: crate::txn::CommandId,
        checks: &crate::exec::rows::Checks,
        params: &[Option<String>],
        snap: &Snapshot,
    ) -> Result<Option<Vec<Option<Vec<u8>>>>> {
        let stored = store_row(table, vals)?;
        // Bounded: each turn either ends or follows a conflict that changed meanwhile.
        for _ in 0..10_000u32 {
            if let Some((tid, existing)) = self.find_conflict(s, table, &stored, xid, cid)? {
                let Some((sets, filter)) = &self.update else { return Ok(None) };
                let proposed: Vec<Value> = stored
                    .iter()
                    .enumerate()
                    .map(|(c, v)| v.as_ref().map_or(Value::Null, |b| Value::decode(&table.columns[c].ty, b)))
                    .collect();
                let mut both = existing.clone();
                both.extend(proposed);
                // Subqueries read with the statement's snapshot.
                if let Some(w) = filter {
                    if eval_with_subqueries(w, s, snap, &both, params)? != Value::Bool(true) {
                        return Ok(None);
                    }
                }
                let mut new_vals = existing.clone();
                for (c, e) in sets {
                    new_vals[*c] = eval_with_subqueries(e, s, snap, &both, params)?;
                }
                match update_one(s, table, tid, &existing, &new_vals, wal, xid, cid, checks)? {
                    Some(st) => return Ok(Some(st)),
                    None => continue,
                }
            }
            let (logged, fpw) = wal;
            let mut t = form_checked_tuple(s, table, &stored, checks)?;
            let tid = heap_insert(s, table, &mut t, logged, fpw, xid, cid)?;
            match index::insert_entries(s, table, &stored, tid) {
                Ok(()) => return Ok(Some(stored)),
                Err(e) if e.code == "23505" && self.is_arbiter(table, e.objects.as_ref().and_then(|o| o.constraint.as_deref())) => {
                    kill_inserted(s, table, tid, xid, logged, fpw)?;
                }
                Err(e) => return Err(e),
            }
        }
        Err(PgError::internal("ON CONFLICT did not settle after 10000 tries"))
    }

    fn is_arbiter(&self, table: &Table, name: Option<&str>) -> bool {
        self.arbiters.iter().any(|&i| Some(table.indexes[i].name.as_str()) == name)
    }

    /// A live row conflicting with `stored` on an arbiter, as a fresh snapshot sees it; waits
    /// for a running transaction deleting it first. A row this command already inserted or
    /// updated fails DO UPDATE with 21000, as in PostgreSQL.
    fn find_conflict(
        &self,
        s: &mut Session,
        table: &Arc<Table>,
        stored: &[Option<Vec<u8>>],
        me: crate::txn::Xid,
        cid: crate::txn::CommandId,
    ) -> Result<Option<(Tid, Vec<Value>)>> {
        for &i in &self.arbiters {
            let ix = &table.indexes[i];
            if ix.plain_columns().any(|c| stored[c].is_none()) {
                continue; // NULLs never conflict
            }
            // A partial arbiter: only rows inside it conflict, and only with a row it would hold.
            let mut filter: Option<Scalar> = index::predicate_of(table, ix)?;
            if let Some(p) = &filter {
                if !crate::exec::rows::predicate_holds(p, table, stored)? {
                    continue;
                }
            }
            // Each key equal to this row's: a column's value, or an expression's (computed as
            // the index computes it).
            let exprs = index::bind_key_exprs(table, ix)?;
            let computed = crate::exec::rows::expr_keys(table, &exprs, stored)?;
            if computed.iter().any(|(_, v)| v.is_none()) {
                continue;
            }
            let mut next = exprs.iter().zip(&computed);
            for &c in &ix.columns {
                let eq = if c == crate::catalog::EXPR_KEY {
                    let (e, (ty, v)) = next.next().expect("one expression for each expression key");
                    let v = Value::decode(ty, v.as_deref().expect("not NULL"));
                    Scalar::Cmp(CmpOp::Eq, Box::new(e.clone()), Box::new(Scalar::Const(v)))
                } else {
                    let ty = table.columns[c].ty;
                    let v = Value::decode(&ty, stored[c].as_deref().expect("not NULL"));
                    Scalar::Cmp(CmpOp::Eq, Box::new(Scalar::Col(c, ty)), Box::new(Scalar::Const(v)))
                };
                filter = Some(match filter {
                    None => eq,
                    Some(f) => Scalar::And(Box::new(f), Box::new(eq)),
                });
            }
            let plan = Plan::new(table.clone(), filter, vec![true; table.columns.len()]);
            // A fresh snapshot that also sees the rows this very command inserted.
            let snap = s.shared.txns.snapshot(me, cid + 1);
            let mut found = None;
            plan.for_each(s, &snap, &[], |tid, row| {
                found = Some((tid, row.to_vec()));
                Ok(Flow::Stop)
            })?;
            let Some((tid, row)) = found else { continue };
            let shared = s.shared.clone();
            let (xmin, cmin, xmax) = {
                let heap =
                    HeapRel { pool: &shared.pool, pins: &s.pins, rel: table.relfile, wal: None, full_page_writes: false, touched: None };
                heap.fetch_any(tid, |t| (tuple::xmin(t), tuple::cmin(t), tuple::xmax(t)))?.unwrap_or_default()
            };
            if xmax != INVALID_XID && xmax != me && matches!(heap::dml::xid_state(&shared.txns, xmax), heap::dml::XidState::Running) {
                s.wait_for_xid(xmax)?;
                return self.find_conflict(s, table, stored, me, cid);
            }
            if self.update.is_some() && ((xmin == me && cmin >= cid) || (xmax == me)) {
                return Err(PgError::new("21000", "ON CONFLICT DO UPDATE command cannot affect row a second time")
                    .with_hint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values."));
            }
            if s.snapshot_is_transaction_wide() {
                let txn_snap = s.snapshot();
                let heap =
                    HeapRel { pool: &shared.pool, pins: &s.pins, rel: table.relfile, wal: None, full_page_writes: false, touched: None };
                if heap.fetch(&shared.txns, tid, &txn_snap, |_| ())?.is_none() {
                    return Err(serialization_failure("update"));
                }
            }
            return Ok(Some((tid, row)));
        }
        Ok(None)
    }
}

/// The parameter types of an UPDATE's or DELETE's WHERE clause and FROM items.
fn rows_param_types(rows: &Rows, out: &mut Vec<Option<SqlType>>) {
    match rows {
        Rows::Table(Some(f)) => super::query::scalar_param_types(f, out),
        Rows::Table(None) => {}
        Rows::Join(j) => super::query::visit_exprs(&j.node, &mut |e| super::query::scalar_param_types(e, out)),
    }
}

pub(crate) fn is_default_keyword(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default") && id.quote_style.is_none())
}

/// PostgreSQL's 428C9 for an UPDATE of a `GENERATED ALWAYS` identity column.
fn identity_update_error(col: &crate::catalog::Column) -> PgError {
    PgError::new("428C9", format!("column \"{}\" can only be updated to DEFAULT", col.name))
        .with_detail(format!("Column \"{}\" is an identity column defined as GENERATED ALWAYS.", col.name))
}

/// The types of a row statement's parameters as its runner binds them: an INSERT value takes
/// its target column's type, an UPDATE assignment its column's, a comparison the other side's,
/// an explicit cast its type. Unfixed ones stay None.
pub(crate) fn param_types(s: &Session, st: &sqlparser::ast::Statement, out: &mut Vec<Option<SqlType>>) -> Result<()> {
    use sqlparser::ast::Statement;
    match st {
        Statement::Insert(ins) => {
            let TableObject::TableName(name) = &ins.table else { return Ok(()) };
            let table = s.table(&crate::catalog::relation_key(name)?)?;
            let cols: Vec<usize> = if ins.columns.is_empty() {
                (0..table.columns.len()).collect()
            } else {
                ins.columns.iter().map(|c| table.column_index(&fold_ident(c)).unwrap_or(usize::MAX)).collect()
            };
            if let Some(SetExpr::Values(values)) = ins.source.as_deref().map(|q| &*q.body) {
                for r in &values.rows {
                    for (k, e) in r.iter().enumerate() {
                        if let Some(&c) = cols.get(k).filter(|&&c| c < table.columns.len()) {
                            if !is_default_keyword(e) {
                                let b = bind_assignment(s, e, &expr::Scope::default(), table.columns[c].ty, 0, "VALUES")?;
                                super::query::scalar_param_types(&b, out);
                            }
                        }
                    }
                }
            }
        }
        Statement::Update { table, assignments, from, selection, .. } => {
            let (name, alias) = target_table(table)?;
            let table = s.table(&name)?;
            let (scope, rows) = bind_rows(s, &table, alias.as_deref(), update_from(from.as_ref())?, selection.as_ref(), None)?;
            rows_param_types(&rows, out);
            for (n, value) in assignment_pairs(assignments)? {
                if let Some(c) = table.column_index(&n) {
                    if !matches!(value, Assigned::Expr(e) if is_default_keyword(e)) {
                        let e = bind_assigned(s, &value, &scope, table.columns[c].ty, 0)?;
                        super::query::scalar_param_types(&e, out);
                    }
                }
            }
        }
        Statement::Delete(d) => {
            let (FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v)) = &d.from;
            if let [t] = v.as_slice() {
                let (name, alias) = target_table(t)?;
                let table = s.table(&name)?;
                let (_, rows) = bind_rows(s, &table, alias.as_deref(), d.using.as_deref(), d.selection.as_ref(), None)?;
                rows_param_types(&rows, out);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Binds `e`; an untyped literal or parameter takes `ty` (the target column's type).
/// `CURRENT_TIMESTAMP`, `now()`, `transaction_timestamp()` and `LOCALTIMESTAMP` assigned to a
/// `timestamp` or `date` column are the transaction's start time (`now_us`, microseconds since
/// 2000-01-01 UTC) on the session's clocks, as PostgreSQL assigns them.
/// Checks a row's CHECK constraints (on its stored values) and forms its tuple.
fn form_checked_tuple(s: &mut Session, table: &Table, stored: &[Option<Vec<u8>>], checks: &crate::exec::rows::Checks) -> Result<Vec<u8>> {
    if !checks.is_empty() {
        let row: Vec<Value> =
            stored.iter().enumerate().map(|(c, v)| v.as_ref().map_or(Value::Null, |b| Value::decode(&table.columns[c].ty, b))).collect();
        // NOT NULL is checked first, as PostgreSQL does.
        for (c, col) in table.columns.iter().enumerate() {
            if col.not_null && row[c] == Value::Null {
                return form_tuple(s, table, stored);
            }
        }
        checks.check(s, table, &row)?;
    }
    form_tuple(s, table, stored)
}

/// Inserts a formed tuple into the heap (WAL-logged when `logged`, noted in the savepoint
/// touch log).
fn heap_insert(
    s: &mut Session,
    table: &Table,
    t: &mut [u8],
    logged: bool,
    fpw: bool,
    xid: crate::txn::Xid,
    cid: crate::txn::CommandId,
) -> Result<Tid> {
    let shared = s.shared.clone();
    let touched = s.touch_log();
    let heap = HeapRel {
        pool: &shared.pool,
        pins: &s.pins,
        rel: table.relfile,
        wal: logged.then_some(&*shared.wal),
        full_page_writes: fpw,
        touched: touched.as_deref(),
    };
    let tid = heap.insert(t, xid, cid)?;
    s.count_changes(table.oid, |p| p.inserted += 1);
    Ok(tid)
}

/// Makes a version this transaction just inserted dead to everyone (ON CONFLICT's retry).
fn kill_inserted(s: &mut Session, table: &Table, tid: Tid, xid: crate::txn::Xid, logged: bool, fpw: bool) -> Result<()> {
    let shared = s.shared.clone();
    let heap = HeapRel {
        pool: &shared.pool,
        pins: &s.pins,
        rel: table.relfile,
        wal: logged.then_some(&*shared.wal),
        full_page_writes: fpw,
        touched: None,
    };
    heap.kill_own_insert(tid, xid)?;
    s.count_changes(table.oid, |p| {
        p.inserted -= 1;
        p.deleted += 1;
    });
    Ok(())
}

/// Stores one row of column values: CHECK constraints, the heap tuple, then its index entries
/// with their unique checks. Returns the stored values.
pub(crate) fn insert_row(
    s: &mut Session,
    table: &Table,
    vals: &[Value],
    wal: (bool, bool),
    xid: crate::txn::Xid,
    cid: crate::txn::CommandId,
    checks: &crate::exec::rows::Checks,
) -> Result<Vec<Option<Vec<u8>>>> {
    let (logged, fpw) = wal;
    let stored = store_row(table, vals)?;
    let mut t = form_checked_tuple(s, table, &stored, checks)?;
    let tid = heap_insert(s, table, &mut t, logged, fpw, xid, cid)?;
    index::insert_entries(s, table, &stored, tid)?;
    Ok(stored)
}

/// Replaces the version at `tid` (whose column values are `old`) with `new_vals`, for ON
/// CONFLICT DO UPDATE. None when the row changed meanwhile (the caller looks again); a
/// REPEATABLE READ transaction fails with 40001 instead.
#[allow(clippy::too_many_arguments)]
fn update_one(
    s: &mut Session,
    table: &Arc<Table>,
    tid: Tid,
    old: &[Value],
    new_vals: &[Value],
    wal: (bool, bool),
    xid: crate::txn::Xid,
    cid: crate::txn::CommandId,
    checks: &crate::exec::rows::Checks,
) -> Result<Option<Vec<Option<Vec<u8>>>>> {
    let (logged, fpw) = wal;
    let stored = store_row(table, new_vals)?;
    let indexed = indexed_columns(table)?;
    let hot_ok = same_index_columns(table, &indexed, old, &stored)?;
    let keys_kept = hot_ok || same_index_columns(table, &key_columns(table), old, &stored)?;
    let mut t = form_checked_tuple(s, table, &stored, checks)?;
    let shared = s.shared.clone();
    let touched = s.touch_log();
    let heap = HeapRel {
        pool: &shared.pool,
        pins: &s.pins,
        rel: table.relfile,
        wal: logged.then_some(&*shared.wal),
        full_page_writes: fpw,
        touched: touched.as_deref(),
    };
    let outcome = heap.update(&shared.txns, tid, &mut t, xid, cid, hot_ok, keys_kept)?;
    if let (ChangeOutcome::Done(_) | ChangeOutcome::DoneHot(_), Some(trel)) = (outcome, table.toast_relfile) {
        let types: Vec<SqlType> = table.columns.iter().map(|c| c.ty).collect();
        let pointers = heap.fetch_any(tid, |t| heap::toast::pointers_of(t, &types))?.transpose()?.unwrap_or_default();
        if !pointers.is_empty() {
            let toast = HeapRel { rel: trel, ..heap };
            heap::toast::delete_chunks(&toast, &shared.txns, &pointers, xid, cid)?;
        }
    }
    match outcome {
        ChangeOutcome::Done(new_tid) => {
            s.count_changes(table.oid, |p| p.updated += 1);
            index::insert_entries(s, table, &stored, new_tid)?;
            Ok(Some(stored))
        }
        ChangeOutcome::DoneHot(_) => {
            s.count_changes(table.oid, |p| {
                p.updated += 1;
                p.hot_updated += 1;
            });
            Ok(Some(stored))
        }
        ChangeOutcome::Wait(other) => {
            s.wait_for_xid(other)?;
            Ok(None)
        }
        ChangeOutcome::Gone => Err(PgError::new("21000", "ON CONFLICT DO UPDATE command cannot affect row a second time")
            .with_hint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")),
        ChangeOutcome::Deleted | ChangeOutcome::Updated(..) if s.snapshot_is_transaction_wide() => Err(serialization_failure("update")),
        ChangeOutcome::Deleted | ChangeOutcome::Updated(..) => Ok(None),
    }
}

/// PostgreSQL's assignment rule for a value given to a column: 42804 where no assignment cast
/// exists (a number into "char", ...).
fn check_assignment(e: &Scalar, col: &crate::catalog::Column) -> Result<()> {
    match expr::type_of(e) {
        Some(from) if !assignable(&from, &col.ty) => Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!("column \"{}\" is of type {} but expression is of type {}", col.name, col.ty.name(), from.name()),
        )
        .with_hint("You will need to rewrite or cast the expression.")),
        _ => Ok(()),
    }
}

/// As [`bind_untyped`] with a given binder (a scope other than one table's).
fn bind_untyped_with(b: &super::expr::Binder<'_>, e: &Expr, ty: SqlType, now_us: i64) -> Result<Scalar> {
    if expr::is_transaction_timestamp(e) && expr::is_datetime(ty.id) {
        // The instant, on the session's clocks for a timestamp or date column.
        let ts = Scalar::Cast(Box::new(Scalar::Const(Value::Timestamptz(now_us))), ty);
        return Ok(Scalar::Const(ts.eval(&[], &[])?));
    }
    Ok(match b.bind(e)? {
        Scalar::Unknown(t) => Scalar::Const(expr::parse_as(&ty, &t)?),
        Scalar::Param(n, None) => Scalar::Param(n, Some(ty)),
        other => other,
    })
}

/// Refuses a subquery calling a volatile function in `e` (evaluated row by row: RETURNING,
/// ON CONFLICT DO UPDATE). heapstore runs such a subquery again for each row, where
/// PostgreSQL computes an uncorrelated one once per statement; that gives the same answer
/// only when it calls no volatile function.
fn once_per_row_only(e: &Scalar, what: &str) -> Result<()> {
    let mut volatile = false;
    e.visit(&mut |x| {
        if let Scalar::SubLink(l) = x {
            volatile |= super::query::plan_calls_volatile(&l.plan);
        }
    });
    if volatile {
        return Err(PgError::feature(format!("a subquery calling a volatile function in {what} is not supported by heapstore yet")));
    }
    Ok(())
}

/// An UPDATE's (or ON CONFLICT DO UPDATE's) assignments bound over `scope`: (column, value),
/// with PostgreSQL's checks (an unknown or repeated column, a GENERATED ALWAYS identity,
/// the assignment's type). `DEFAULT` is the column's default.
fn bind_sets(
    s: &Session,
    table: &Table,
    scope: &expr::Scope,
    assignments: &[sqlparser::ast::Assignment],
    now: i64,
) -> Result<Vec<(usize, Scalar)>> {
    let mut sets: Vec<(usize, Scalar)> = Vec::new();
    for (n, value) in assignment_pairs(assignments)? {
        let c = table.column_index(&n).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" of relation \"{}\" does not exist", table.name))
        })?;
        if sets.iter().any(|(x, _)| *x == c) {
            return Err(PgError::syntax(format!("multiple assignments to same column \"{n}\"")));
        }
        let col = &table.columns[c];
        let e = if matches!(value, Assigned::Expr(e) if is_default_keyword(e)) {
            crate::exec::rows::Defaults::new(s, table, |x| x == c)?
                .bound(c)
                .unwrap_or_else(|| Scalar::Cast(Box::new(Scalar::Const(Value::Null)), col.ty))
        } else {
            if col.identity == Some(crate::catalog::Identity::Always) {
                return Err(identity_update_error(col));
            }
            bind_assigned(s, &value, scope, col.ty, now)?
        };
        check_assignment(&e, col)?;
        sets.push((c, e));
    }
    Ok(sets)
}

/// One column's assigned value.
enum Assigned<'a> {
    Expr(&'a Expr),
    /// Column `k` of `(a, b) = (SELECT x, y ...)`'s sub-SELECT, of `n` targets.
    SubColumn(&'a sqlparser::ast::Query, usize, usize),
}

/// An UPDATE's assignments as (column name, value): `(a, b) = (x, y)` and
/// `(a, b) = ROW(x, y)` assign each column its item, as PostgreSQL's grammar expands them;
/// `(a, b) = (SELECT ...)` each column its column of the sub-SELECT's row.
fn assignment_pairs(assignments: &[sqlparser::ast::Assignment]) -> Result<Vec<(String, Assigned<'_>)>> {
    use sqlparser::ast::AssignmentTarget;
    let name = |cn: &sqlparser::ast::ObjectName| cn.0.last().and_then(|p| p.as_ident()).map(fold_ident).unwrap_or_default();
    let mut out = Vec::new();
    for a in assignments {
        match &a.target {
            AssignmentTarget::ColumnName(cn) => out.push((name(cn), Assigned::Expr(&a.value))),
            AssignmentTarget::Tuple(cols) => {
                if let Expr::Subquery(q) = &a.value {
                    out.extend(cols.iter().enumerate().map(|(k, c)| (name(c), Assigned::SubColumn(q, k, cols.len()))));
                    continue;
                }
                let items = expr::row_items(&a.value)
                    .ok_or_else(|| PgError::feature("source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression"))?;
                if items.len() != cols.len() {
                    return Err(PgError::syntax("number of columns does not match number of values"));
                }
                out.extend(cols.iter().map(name).zip(items.into_iter().map(Assigned::Expr)));
            }
        }
    }
    Ok(out)
}

/// An UPDATE's assigned value (see [`bind_assignment`]). A column of a multiple-column
/// assignment's sub-SELECT is that column of the sub-SELECT's one row (NULL for no row,
/// 21000 for more), the sub-SELECT run once per column: one with volatile functions, which
/// could answer differently each time, is refused.
fn bind_assigned(s: &Session, value: &Assigned<'_>, scope: &expr::Scope, ty: SqlType, now_us: i64) -> Result<Scalar> {
    use crate::exec::{BoundQuery, Node, SubKind, SubLink};
    let (q, k, n) = match value {
        Assigned::Expr(e) => return bind_assignment(s, e, scope, ty, now_us, "UPDATE"),
        Assigned::SubColumn(q, k, n) => (q, *k, *n),
    };
    let b = super::query::Planner::new(s, Some(now_us)).query(q, &[scope])?;
    if b.columns.len() != n {
        return Err(PgError::syntax("number of columns does not match number of values"));
    }
    if super::query::plan_calls_volatile(&b.node) {
        return Err(PgError::feature(
            "a sub-SELECT calling volatile functions as the source of a multiple-column UPDATE item is not supported by heapstore",
        ));
    }
    let col = b.columns[k].clone();
    let col_ty = col.ty;
    let node = Node::Project(Box::new(b.node), vec![unpad_for(Scalar::Col(k, col_ty), ty)]);
    let one = BoundQuery { node, columns: vec![col], correlated: b.correlated };
    Ok(Scalar::SubLink(Box::new(SubLink::new(SubKind::Scalar, None, one, Some(col_ty)))))
}

/// An UPDATE's assigned value of type `ty`, over `scope` (the target's columns, or the
/// FROM join's row), or an INSERT's value (no columns), its subqueries planned. `what` names
/// the clause in errors (`UPDATE`, `VALUES`).
fn bind_assignment(s: &Session, e: &Expr, scope: &expr::Scope, ty: SqlType, now_us: i64, what: &str) -> Result<Scalar> {
    if expr::is_transaction_timestamp(e) && expr::is_datetime(ty.id) {
        // The instant, on the session's clocks for a timestamp or date column.
        let ts = Scalar::Cast(Box::new(Scalar::Const(Value::Timestamptz(now_us))), ty);
        return Ok(Scalar::Const(ts.eval(&[], &[])?));
    }
    let bound = super::query::Planner::new(s, Some(now_us)).bind_for_change(e, scope).map_err(|e| match e.code {
        "42803" if e.message.starts_with("aggregate functions are not allowed") => {
            PgError::new("42803", format!("aggregate functions are not allowed in {what}"))
        }
        "42P20" if e.message.starts_with("window functions are not allowed") => {
            PgError::new("42P20", format!("window functions are not allowed in {what}"))
        }
        _ => e,
    })?;
    Ok(match bound {
        Scalar::Unknown(t) => Scalar::Const(expr::parse_as(&ty, &t)?),
        Scalar::Param(n, None) => Scalar::Param(n, Some(ty)),
        other => unpad_for(other, ty),
    })
}

/// A char(n) value assigned to a column of another text type loses its padding, as
/// PostgreSQL's bpchar-to-text cast drops it.
fn unpad_for(e: Scalar, ty: SqlType) -> Scalar {
    if pads_away(expr::type_of(&e), ty) {
        expr::unpad(e)
    } else {
        e
    }
}

/// Whether a value of type `from` assigned to a column of type `to` loses char(n)'s padding.
fn pads_away(from: Option<SqlType>, to: SqlType) -> bool {
    use crate::types::TypeId;
    from.is_some_and(|f| f.id == TypeId::Bpchar) && expr::is_text(to.id) && to.id != TypeId::Bpchar
}

/// The table an UPDATE or DELETE changes (as `catalog::relation_key` gives it), and the alias it is known by (`UPDATE t AS x`: then
/// `x`, not `t`, names it in SET, WHERE and RETURNING, as in PostgreSQL).
pub(crate) fn target_table(t: &TableWithJoins) -> Result<(String, Option<String>)> {
    if !t.joins.is_empty() {
        return Err(PgError::feature("joins are not supported"));
    }
    let TableFactor::Table { name, alias, .. } = &t.relation else { return Err(PgError::feature("only tables can be changed")) };
    let alias = match alias {
        None => None,
        Some(a) if a.columns.is_empty() => Some(fold_ident(&a.name)),
        // PostgreSQL's grammar has no column list here.
        Some(_) => return Err(PgError::syntax("syntax error at or near \"(\"")),
    };
    Ok((crate::catalog::relation_key(name)?, alias))
}

/// Where an UPDATE's or DELETE's rows come from, bound: the target table alone, or joined
/// with FROM / USING items.
pub(crate) enum Rows {
    /// The target alone: its WHERE clause over the table's columns.
    Table(Option<Scalar>),
    /// `UPDATE ... FROM` / `DELETE ... USING`: the join that finds the rows (with the TID of
    /// each target row's version) and the whole WHERE clause.
    Join(super::query::ChangeJoin),
}

/// An UPDATE's `FROM` items (PostgreSQL writes them after SET).
pub(crate) fn update_from(from: Option<&sqlparser::ast::UpdateTableFromKind>) -> Result<Option<&[TableWithJoins]>> {
    use sqlparser::ast::UpdateTableFromKind;
    match from {
        None => Ok(None),
        Some(UpdateTableFromKind::AfterSet(items)) => Ok(Some(items)),
        Some(UpdateTableFromKind::BeforeSet(_)) => Err(PgError::syntax("syntax error at or near \"FROM\"")),
    }
}

/// Binds the rows an UPDATE or DELETE changes: FROM / USING items and WHERE (PostgreSQL's
/// order: the FROM items, then WHERE). The scope is what SET and RETURNING name: the
/// target's columns, then (with FROM items) a hidden TID column and the items' columns.
pub(crate) fn bind_rows(
    s: &Session,
    table: &Arc<Table>,
    alias: Option<&str>,
    from: Option<&[TableWithJoins]>,
    selection: Option<&Expr>,
    now: Option<i64>,
) -> Result<(expr::Scope, Rows)> {
    match from {
        Some(items) if !items.is_empty() => {
            let j = super::query::Planner::new(s, now).change_join(table, alias, items, selection)?;
            Ok((j.scope.clone(), Rows::Join(j)))
        }
        _ => {
            let filter = selection.map(|w| bind_change(s, now, w, table, alias)).transpose()?;
            Ok((expr::Scope::of_table(table, alias), Rows::Table(filter)))
        }
    }
}

/// UPDATE t [AS a] SET col = expr | DEFAULT [, ...] [FROM ...] [WHERE ...] [RETURNING ...].
pub fn update(
    s: &mut Session,
    table: &TableWithJoins,
    assignments: &[sqlparser::ast::Assignment],
    from: Option<&[TableWithJoins]>,
    selection: Option<&Expr>,
    returning: Option<&[sqlparser::ast::SelectItem]>,
    params: &[Option<String>],
) -> Result<QueryResult> {
    let (name, alias) = target_table(table)?;
    let alias = alias.as_deref();
    let table = s.table(&name)?;
    let table = s.lock_table_current(&table, LockMode::RowExclusive)?;
    let now = s.txn().start_us;
    // PostgreSQL's order: FROM, WHERE, RETURNING, then the assignments.
    let (scope, rows) = bind_rows(s, &table, alias, from, selection, Some(now))?;
    let returning = returning.map(|items| Returning::bind_in(s, &scope, items)).transpose()?;
    lock_subquery_tables(s, returning.iter().flat_map(|r| r.exprs()))?;
    let sets = bind_sets(s, &table, &scope, assignments, now)?;
    let mut out = RowsOut::new(returning.as_ref());
    let mut fk = crate::exec::fk::Tracker::new(s, &table)?;
    match rows {
        Rows::Table(filter) => {
            let (filter, post) = split_sublinks(filter);
            lock_subquery_tables(s, post.iter().chain(sets.iter().map(|(_, e)| e)))?;
            // The new version copies every column.
            let plan = Plan::new(table.clone(), filter, vec![true; table.columns.len()]);
            change_rows(s, &table, Source::Table(&plan, post.as_ref()), params, Some(&sets), &mut out, fk.as_mut())?;
        }
        Rows::Join(mut j) => {
            let read = returning.iter().flat_map(|r| r.exprs());
            j.narrow(table.columns.len(), sets.iter().map(|(_, e)| e).chain(read));
            crate::exec::lock_tables(s, &j.node)?;
            lock_subquery_tables(s, j.cond.iter().chain(sets.iter().map(|(_, e)| e)))?;
            change_rows(s, &table, Source::Join(&j), params, Some(&sets), &mut out, fk.as_mut())?;
        }
    }
    if let Some(fk) = fk {
        fk.finish(s)?;
    }
    out.finish("UPDATE")
}

/// DELETE FROM t [AS a] [USING ...] [WHERE ...] [RETURNING ...].
pub fn delete(s: &mut Session, d: sqlparser::ast::Delete, params: &[Option<String>]) -> Result<QueryResult> {
    if d.limit.is_some() || !d.order_by.is_empty() {
        return Err(PgError::feature("DELETE ... ORDER BY / LIMIT is not supported"));
    }
    let from = match &d.from {
        FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
    };
    let [t] = from.as_slice() else { return Err(PgError::feature("DELETE from more than one table is not supported")) };
    let (name, alias) = target_table(t)?;
    let alias = alias.as_deref();
    let table = s.table(&name)?;
    let table = s.lock_table_current(&table, LockMode::RowExclusive)?;
    let now = Some(s.txn().start_us);
    let (scope, rows) = bind_rows(s, &table, alias, d.using.as_deref(), d.selection.as_ref(), now)?;
    let returning = d.returning.as_deref().map(|items| Returning::bind_in(s, &scope, items)).transpose()?;
    lock_subquery_tables(s, returning.iter().flat_map(|r| r.exprs()))?;
    let mut fk = crate::exec::fk::Tracker::new(s, &table)?;
    let mut out = RowsOut::new(returning.as_ref());
    match rows {
        Rows::Table(filter) => {
            let (filter, post) = split_sublinks(filter);
            lock_subquery_tables(s, post.iter())?;
            // RETURNING reads the deleted rows' columns, foreign keys their keys, and a
            // subquery in WHERE the columns it names.
            let needed = vec![returning.is_some() || fk.is_some() || post.is_some(); table.columns.len()];
            let plan = Plan::new(table.clone(), filter, needed);
            change_rows(s, &table, Source::Table(&plan, post.as_ref()), params, None, &mut out, fk.as_mut())?;
        }
        Rows::Join(mut j) => {
            j.narrow(table.columns.len(), returning.iter().flat_map(|r| r.exprs()));
            crate::exec::lock_tables(s, &j.node)?;
            lock_subquery_tables(s, j.cond.iter())?;
            change_rows(s, &table, Source::Join(&j), params, None, &mut out, fk.as_mut())?;
        }
    }
    if let Some(fk) = fk {
        fk.finish(s)?;
    }
    out.finish("DELETE")
}

/// EXPLAIN of an UPDATE or DELETE: its ModifyTable line (`Update on t [alias]`) and the plan
/// that finds its rows, bound as the statement binds them (so its errors are the statement's),
/// without running it.
pub(crate) fn explain_change(s: &mut Session, st: &sqlparser::ast::Statement) -> Result<(String, crate::exec::Node)> {
    use crate::exec::Node;
    use sqlparser::ast::Statement;
    type Parts<'a> = (&'static str, &'a TableWithJoins, Option<&'a [TableWithJoins]>, Option<&'a Expr>, &'a [sqlparser::ast::Assignment]);
    let no_sets: &[sqlparser::ast::Assignment] = &[];
    let (returning, parts): (Option<&[sqlparser::ast::SelectItem]>, Parts<'_>) = match st {
        Statement::Update { table, assignments, from, selection, returning, or: None, limit: None } => {
            (returning.as_deref(), ("Update", table, update_from(from.as_ref())?, selection.as_ref(), assignments.as_slice()))
        }
        Statement::Delete(d) if d.limit.is_none() && d.order_by.is_empty() => {
            let (FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v)) = &d.from;
            let [t] = v.as_slice() else { return Err(PgError::feature("DELETE from more than one table is not supported")) };
            (d.returning.as_deref(), ("Delete", t, d.using.as_deref(), d.selection.as_ref(), no_sets))
        }
        _ => return Err(PgError::feature("EXPLAIN of this statement is not supported by heapstore")),
    };
    let (word, target, from, selection, assignments) = parts;
    let (name, alias) = target_table(target)?;
    let table = s.table(&name)?;
    let table = s.lock_table_current(&table, LockMode::RowExclusive)?;
    let now = s.txn.as_ref().map(|t| t.start_us);
    let (scope, rows) = bind_rows(s, &table, alias.as_deref(), from, selection, now)?;
    let returning = returning.map(|items| Returning::bind_in(s, &scope, items)).transpose()?;
    let sets: Vec<Scalar> = bind_sets(s, &table, &scope, assignments, now.unwrap_or_default())?.into_iter().map(|(_, e)| e).collect();
    let node = match rows {
        Rows::Table(filter) => {
            let (filter, post) = split_sublinks(filter);
            let scan = Node::Scan(Box::new(Plan::new(table.clone(), filter, vec![true; table.columns.len()])));
            match post {
                Some(p) => Node::Filter(Box::new(scan), p),
                None => scan,
            }
        }
        Rows::Join(mut j) => {
            j.narrow(table.columns.len(), sets.iter().chain(returning.iter().flat_map(|r| r.exprs())));
            j.node
        }
    };
    let title = match alias {
        Some(a) if a != table.name => format!("{word} on {} {a}", table.name),
        _ => format!("{word} on {}", table.name),
    };
    Ok((title, node))
}

/// PostgreSQL's 40001 for a REPEATABLE READ change that met a concurrent `what` (update or
/// delete) committed after its snapshot.
fn serialization_failure(what: &str) -> PgError {
    PgError::new(sqlstate::SERIALIZATION_FAILURE, format!("could not serialize access due to concurrent {what}"))
}

/// Binds an UPDATE's or DELETE's expression against its table (known by `alias`), planning its
/// subqueries (`IN (SELECT ...)`, `EXISTS`, scalar ones; a correlated one reads the row being
/// changed), as PostgreSQL allows in SET and WHERE.
/// `now_us`: the transaction's start (`now()`), or None where it is not known yet.
fn bind_change(s: &Session, now_us: Option<i64>, e: &Expr, table: &Table, alias: Option<&str>) -> Result<Scalar> {
    let scope = expr::Scope::of_table(table, alias);
    super::query::Planner::new(s, now_us).bind_for_change(e, &scope)
}

/// ACCESS SHARE on every table the subqueries of `exprs` read, held to transaction end, as a
/// query takes it (a concurrent DROP or TRUNCATE of one waits for the statement).
/// A subquery that locks rows (`FOR UPDATE`) takes its locks as `exec::lock_tables` does.
fn lock_subquery_tables<'e>(s: &mut Session, exprs: impl Iterator<Item = &'e Scalar>) -> Result<()> {
    let mut plans = Vec::new();
    for e in exprs {
        e.visit(&mut |x| {
            if let Scalar::SubLink(l) = x {
                plans.push(l.plan.clone());
            }
        });
    }
    for p in &plans {
        crate::exec::lock_tables(s, p)?;
    }
    Ok(())
}

fn has_sublink(e: &Scalar) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x, Scalar::SubLink(_)));
    found
}

/// A WHERE clause split into the conjuncts the table scan evaluates (and may answer from an
/// index) and those with subqueries, which the executor evaluates on each row the scan keeps.
fn split_sublinks(filter: Option<Scalar>) -> (Option<Scalar>, Option<Scalar>) {
    let Some(f) = filter else { return (None, None) };
    // Subqueries, and calls evaluated with the session (advisory locks, nextval).
    let executor = |e: &Scalar| has_sublink(e) || expr::needs_session(e);
    if !executor(&f) {
        return (Some(f), None);
    }
    let mut parts = Vec::new();
    conjuncts(&f, &mut parts);
    let (with, without): (Vec<&Scalar>, Vec<&Scalar>) = parts.into_iter().partition(|c| executor(c));
    let and = |v: Vec<&Scalar>| v.into_iter().cloned().reduce(|a, b| Scalar::And(Box::new(a), Box::new(b)));
    (and(without), and(with))
}

/// Evaluates an expression with subqueries against `row`, with the statement's snapshot: its
/// subqueries do not see the statement's own changes (PostgreSQL's command id rule).
fn eval_with_subqueries(e: &Scalar, s: &Session, snap: &Snapshot, row: &[Value], params: &[Option<String>]) -> Result<Value> {
    if !has_sublink(e) {
        return expr::eval_with_session(e, s, row, params);
    }
    let ex = crate::exec::Exec::new(s, snap.clone(), params);
    e.eval_cx(row, &expr::EvalCx { params, outer: &[], runner: Some(&ex) })
}

/// Where [`change_rows`] finds the rows to change.
enum Source<'a> {
    /// A scan of the target table, and the WHERE conjuncts with subqueries (evaluated on each
    /// row the scan keeps).
    Table(&'a Plan, Option<&'a Scalar>),
    /// UPDATE ... FROM / DELETE ... USING: a join whose rows are the target's columns, the
    /// version's TID, then the FROM items' columns. A target row that joins several FROM
    /// rows is changed once, with the first (PostgreSQL leaves which one unspecified).
    Join(&'a super::query::ChangeJoin),
}

/// The UPDATE / DELETE loop (module doc: READ COMMITTED, EvalPlanQual). `sets` None = delete.
/// Assignments, RETURNING and the recheck read the row the source gave: the target's columns
/// first (replaced by a newer version's when the loop follows an update chain), then, for a
/// join, the rest of the joined row, kept as it was found (PostgreSQL's EvalPlanQual keeps
/// the other relations' rows).
fn change_rows(
    s: &mut Session,
    table: &Arc<Table>,
    source: Source<'_>,
    params: &[Option<String>],
    sets: Option<&[(usize, Scalar)]>,
    out: &mut RowsOut<'_>,
    mut fk: Option<&mut crate::exec::fk::Tracker>,
) -> Result<u64> {
    let snap = s.snapshot();
    out.snap = Some(snap.clone());
    let width = table.columns.len();
    // The rows to change (TID and the source's row), with the values of the assignments that
    // hold subqueries, computed here by one executor for the whole statement: an uncorrelated
    // subquery runs once (as PostgreSQL's InitPlan: `SET v = (SELECT nextval('s'))` gives
    // every row one value), and a hashed IN list is built once.
    let mut targets: Vec<(Tid, Vec<Value>, Vec<Option<Value>>)> = Vec::new();
    // A joined target's number of joined rows (more than one: others to try when the first
    // fails the recheck on a newer version).
    let mut joins_of: std::collections::HashMap<Tid, u32> = std::collections::HashMap::new();
    let sublink_sets = sets.is_some_and(|v| v.iter().any(|(_, e)| has_sublink(e)));
    {
        let reader: &Session = s;
        let post = match source {
            Source::Table(_, post) => post,
            Source::Join(_) => None,
        };
        let joined = matches!(source, Source::Join(_));
        let ex = (joined || post.is_some() || sublink_sets).then(|| crate::exec::Exec::new(reader, snap.clone(), params));
        let eval = |e: &Scalar, row: &[Value]| match &ex {
            Some(ex) => e.eval_cx(row, &expr::EvalCx { params, outer: &[], runner: Some(ex) }),
            None => expr::eval_with_session(e, reader, row, params),
        };
        let mut keep = |tid: Tid, row: &[Value]| -> Result<()> {
            let mut pre = Vec::new();
            if let (Some(sets), true) = (sets, sublink_sets) {
                for (_, e) in sets {
                    pre.push(if has_sublink(e) { Some(eval(e, row)?) } else { None });
                }
            }
            targets.push((tid, row.to_vec(), pre));
            Ok(())
        };
        match source {
            Source::Table(plan, post) => plan.for_each(reader, &snap, params, |tid, row| {
                if let Some(p) = post {
                    if eval(p, row)? != Value::Bool(true) {
                        return Ok(Flow::Continue);
                    }
                }
                keep(tid, row)?;
                Ok(Flow::Continue)
            })?,
            Source::Join(j) => {
                let ex = ex.as_ref().expect("a join runs through the executor");
                ex.run(&j.node, &[], &mut |row| {
                    debug_assert!(row.len() > width, "a joined row holds the target's columns and its TID");
                    let tid = tid_of(&row[width])?;
                    let seen = joins_of.entry(tid).or_insert(0);
                    *seen += 1;
                    if *seen == 1 {
                        keep(tid, row)?;
                    }
                    Ok(Flow::Continue)
                })?;
            }
        }
    }
    if targets.is_empty() {
        return Ok(0);
    }
    let xid = s.xid();
    let cid = s.txn().cid;
    let (wal, fpw) = heap_rel(s, table);
    let types: Vec<SqlType> = table.columns.iter().map(|c| c.ty).collect();
    let all = vec![true; types.len()];
    let indexed = indexed_columns(table)?;
    let keys = key_columns(table);
    let checks = crate::exec::rows::Checks::new(table)?;
    let mut n = 0u64;
    for (first_tid, first_row, mut pre) in targets {
        let (mut tid, mut row) = (first_tid, first_row);
        // All of a joined target's joined rows, found again when first needed.
        let mut others: Option<Vec<Vec<Value>>> = None;
        // Bounded: each turn either ends, waits for a transaction to end, or moves one version
        // along an update chain.
        for _ in 0..1_000_000u32 {
            let shared = s.shared.clone();
            let mut new_version = None;
            let (mut hot_ok, mut keys_kept) = (false, false);
            if let Some(sets) = sets {
                let mut vals = row[..width].to_vec();
                for (k, (c, e)) in sets.iter().enumerate() {
                    // Computed above for the version found; recomputed for a newer one.
                    vals[*c] = match pre.get(k).cloned().flatten() {
                        Some(v) => v,
                        None => eval_with_subqueries(e, s, &snap, &row, params)?,
                    };
                }
                let stored = store_row(table, &vals)?;
                hot_ok = same_index_columns(table, &indexed, &row[..width], &stored)?;
                keys_kept = hot_ok || same_index_columns(table, &keys, &row[..width], &stored)?;
                let t = form_checked_tuple(s, table, &stored, &checks)?;
                new_version = Some((t, stored));
            }
            let touched = s.touch_log();
            let heap = HeapRel {
                pool: &shared.pool,
                pins: &s.pins,
                rel: table.relfile,
                wal: wal.then_some(&*shared.wal),
                full_page_writes: fpw,
                touched: touched.as_deref(),
            };
            let outcome = match &mut new_version {
                Some((t, _)) => heap.update(&shared.txns, tid, t, xid, cid, hot_ok, keys_kept)?,
                None => heap.delete(&shared.txns, tid, xid, cid)?,
            };
            if let (ChangeOutcome::Done(_) | ChangeOutcome::DoneHot(_), Some(trel)) = (outcome, table.toast_relfile) {
                // The old version's out-of-line values die with it (`heap::toast` invariant 1).
                let pointers = heap.fetch_any(tid, |t| heap::toast::pointers_of(t, &types))?.transpose()?.unwrap_or_default();
                if !pointers.is_empty() {
                    let toast = HeapRel { rel: trel, ..heap };
                    heap::toast::delete_chunks(&toast, &shared.txns, &pointers, xid, cid)?;
                }
            }
            match outcome {
                ChangeOutcome::Done(new_tid) => {
                    if let Some(fk) = fk.as_deref_mut() {
                        match &new_version {
                            Some((_, stored)) => fk.updated_stored(&row[..width], stored)?,
                            None => fk.deleted(&row[..width])?,
                        }
                    }
                    let update = new_version.is_some();
                    s.count_changes(table.oid, |p| if update { p.updated += 1 } else { p.deleted += 1 });
                    match &new_version {
                        Some((_, stored)) => {
                            index::insert_entries(s, table, stored, new_tid)?;
                            out.push(s, table, stored, &row[width..], params)?;
                        }
                        None if out.ret.is_some() => {
                            let old = store_row(table, &row[..width])?;
                            out.push(s, table, &old, &row[width..], params)?;
                        }
                        None => out.count += 1,
                    }
                    n += 1;
                    break;
                }
                ChangeOutcome::DoneHot(_) => {
                    if let (Some(fk), Some((_, stored))) = (fk.as_deref_mut(), &new_version) {
                        fk.updated_stored(&row[..width], stored)?;
                    }
                    s.count_changes(table.oid, |p| {
                        p.updated += 1;
                        p.hot_updated += 1;
                    });
                    let (_, stored) = new_version.as_ref().expect("a HOT update has a new version");
                    out.push(s, table, stored, &row[width..], params)?;
                    n += 1;
                    break;
                }
                ChangeOutcome::Gone => break,
                ChangeOutcome::Deleted if s.snapshot_is_transaction_wide() => return Err(serialization_failure("delete")),
                ChangeOutcome::Deleted => break,
                ChangeOutcome::Wait(other) => s.wait_for_xid(other)?,
                // REPEATABLE READ cannot follow the chain to a version its snapshot does not see.
                ChangeOutcome::Updated(..) if s.snapshot_is_transaction_wide() => return Err(serialization_failure("update")),
                ChangeOutcome::Updated(next, updater) => {
                    let mut next_row = Vec::new();
                    let got = heap.fetch_any(next, |t| {
                        // A line pointer reused after pruning holds someone else's tuple.
                        (tuple::xmin(t) == updater).then(|| decode_row(&shared.pool, &s.pins, t, &types, &all, &mut next_row))
                    })?;
                    match got.flatten() {
                        Some(r) => r?,
                        None => break,
                    }
                    // The new version with the rest of the source's row, as the WHERE clause
                    // reads it.
                    next_row.extend_from_slice(&row[width..]);
                    let mut keeps = recheck(&source, s, &snap, &next_row, params)?;
                    if let (false, Source::Join(j)) = (keeps, &source) {
                        // As PostgreSQL, which meets the target's other joined rows next:
                        // the first of them the new version passes with is used.
                        if joins_of.get(&first_tid).is_some_and(|&n| n > 1) {
                            if others.is_none() {
                                others = Some(joined_rows_of(s, &snap, params, j, first_tid, width)?);
                            }
                            for other in others.iter().flatten() {
                                next_row.truncate(width);
                                next_row.extend_from_slice(&other[width..]);
                                if recheck(&source, s, &snap, &next_row, params)? {
                                    keeps = true;
                                    break;
                                }
                            }
                        }
                    }
                    if !keeps {
                        break;
                    }
                    tid = next;
                    row = next_row;
                    pre.clear();
                }
            }
        }
    }
    Ok(n)
}

/// Whether a newer version of a target row (`row`: its columns, then the rest of the row
/// that found it) still passes the statement's WHERE clause.
fn recheck(source: &Source<'_>, s: &Session, snap: &Snapshot, row: &[Value], params: &[Option<String>]) -> Result<bool> {
    let holds = |e: &Scalar| -> Result<bool> { Ok(eval_with_subqueries(e, s, snap, row, params)? == Value::Bool(true)) };
    match source {
        Source::Table(plan, post) => {
            Ok(plan.filter.as_ref().map_or(Ok(true), |w| w.matches(row, params))? && post.map_or(Ok(true), holds)?)
        }
        Source::Join(j) => j.cond.as_ref().map_or(Ok(true), holds),
    }
}

/// Every joined row of the target row found at `tid`, in the join's order (the join run
/// again with the statement's snapshot, which gives the rows it gave the first time).
fn joined_rows_of(
    s: &Session,
    snap: &Snapshot,
    params: &[Option<String>],
    j: &super::query::ChangeJoin,
    tid: Tid,
    width: usize,
) -> Result<Vec<Vec<Value>>> {
    let ex = crate::exec::Exec::new(s, snap.clone(), params);
    let want = tid_value(tid);
    let mut out = Vec::new();
    ex.run(&j.node, &[], &mut |row| {
        if row[width] == want {
            out.push(row.to_vec());
        }
        Ok(Flow::Continue)
    })?;
    Ok(out)
}

/// The columns of `table`'s unique indexes: PostgreSQL's "key" columns, whose change makes an
/// UPDATE conflict with FOR KEY SHARE row locks (`txn::rowlock`). Not a partial index's, nor
/// the columns an expression key reads (PostgreSQL's INDEX_ATTR_BITMAP_KEY).
fn key_columns(table: &Table) -> Vec<usize> {
    let mut cols: Vec<usize> =
        table.indexes.iter().filter(|ix| ix.unique && ix.predicate.is_none()).flat_map(|ix| ix.plain_columns()).collect();
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// The columns any index of `table` covers.
fn indexed_columns(table: &Table) -> Result<Vec<usize>> {
    let mut cols: Vec<usize> = table.indexes.iter().flat_map(|ix| ix.plain_columns()).collect();
    // A partial index's predicate columns too (`sql::index` invariant 6), and those its key
    // expressions read (invariant 7).
    let mut used = vec![false; table.columns.len()];
    for b in crate::exec::rows::index_exprs(table)?.iter() {
        for e in b.pred.iter().chain(&b.keys) {
            e.columns_used(&mut used);
        }
    }
    cols.extend((0..used.len()).filter(|&c| used[c]));
    cols.sort_unstable();
    cols.dedup();
    Ok(cols)
}

/// Whether the new version's indexed columns are stored exactly as the old version's (a HOT
/// update may then leave the indexes alone: `access::heap::prune` invariant 1). Bytes are
/// compared, not values: `1.0` and `1.00` are equal numerics with different keys.
fn same_index_columns(table: &Table, indexed: &[usize], old: &[Value], new: &[Option<Vec<u8>>]) -> Result<bool> {
    let mut b = Vec::new();
    for &c in indexed {
        match (&old[c], &new[c]) {
            (Value::Null, None) => {}
            (Value::Null, Some(_)) | (_, None) => return Ok(false),
            (v, Some(n)) => {
                b.clear();
                expr::store(v, &table.columns[c].ty, &mut b)?;
                if b != *n {
                    return Ok(false);
                }
            }
        }
    }
    Ok(true)
}

/// The plan of prepared query `q` (the statement of `p`): the one cached in `p` while it is
/// fresh, else a new one, cached unless it read the transaction's time (`now()`, which is
/// bound as a constant). Stale once a table it reads is redefined, ANALYZE ran, or a planner
/// setting or the time zone changed. Execute runs it; Describe reads its columns.
pub(crate) fn cached_plan(s: &mut Session, p: &super::Prepared, q: &sqlparser::ast::Query) -> Result<Arc<CachedQuery>> {
    let cached = p.plan.lock().expect("poisoned").clone();
    let stats = s.shared.planner_stats.generation();
    let costs = super::cost::Costs::of(s);
    let fresh = cached.filter(|c| {
        c.stats_generation == stats
            && c.costs == costs
            && c.zone.as_deref() == s.time_zone_name()
            && c.tables.iter().all(|t| s.lookup_table(&t.key()).is_some_and(|now| Arc::ptr_eq(&now, t)))
    });
    if let Some(c) = fresh {
        return Ok(c);
    }
    let now = s.txn.as_ref().map(|t| t.start_us);
    let planner = super::query::Planner::new(s, now);
    let bound = planner.query(q, &[])?;
    let mut tables = Vec::new();
    bound.node.tables(&mut tables);
    let c = Arc::new(CachedQuery { bound, tables, stats_generation: stats, costs, zone: s.time_zone_name().map(str::to_string) });
    if !planner.used_now() {
        *p.plan.lock().expect("poisoned") = Some(c.clone());
    }
    Ok(c)
}

/// Runs a prepared row statement with its parameters.
type RunWithParams = fn(&mut Session, &sqlparser::ast::Statement, &[Option<String>]) -> Result<QueryResult>;

/// A prepared row statement (INSERT / UPDATE / DELETE, `$n` bound as parameters without
/// copying the statement), or a prepared single-table `SELECT ... FROM t WHERE ...` run with
/// its cached plan: planned at the first run (parameters stay `$n` nodes, typed by their context), re-planned only when the
/// table's definition changed (a new `Arc<Table>`: CREATE INDEX, TRUNCATE, DROP). None when the
/// statement is not of that shape (the caller substitutes and runs it the general way).
pub(crate) fn cached_select<'k>(
    s: &mut Session,
    p: &super::Prepared,
    params: &[Option<String>],
    sink: Option<&mut (dyn super::RowSink + 'k)>,
) -> Option<Result<QueryResult>> {
    use sqlparser::ast::Statement;
    // Row statements bind `$n` as parameter nodes: no copy of the statement, no substitution.
    let dml: Option<RunWithParams> = match &p.stmt {
        Some(Statement::Update { or: None, limit: None, .. }) => Some(|s, st, params| {
            let Statement::Update { table, assignments, from, selection, returning, .. } = st else { unreachable!("matched above") };
            update(s, table, assignments, update_from(from.as_ref())?, selection.as_ref(), returning.as_deref(), params)
        }),
        Some(Statement::Delete(_)) => Some(|s, st, params| {
            let Statement::Delete(d) = st else { unreachable!("matched above") };
            delete(s, d.clone(), params)
        }),
        Some(Statement::Insert(_)) => Some(|s, st, params| {
            let Statement::Insert(i) = st else { unreachable!("matched above") };
            insert(s, i.clone(), params)
        }),
        _ => None,
    };
    if let (Some(run), Some(st)) = (dml, &p.stmt) {
        if s.txn.as_ref().is_some_and(|t| t.failed) {
            return Some(Err(PgError::new(
                sqlstate::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            )));
        }
        s.begin_implicit();
        s.c_collate.set(false);
        if let Some(c) = super::write_command(st) {
            let temp = super::writes_only_temp(s, st);
            if let Err(e) = s.check_writable_unless_temp(c, temp) {
                return Some(Err(e));
            }
        }
        s.txn().ran_statement = true;
        let r = run(s, st, params);
        if r.is_ok() {
            s.command_done();
        }
        return Some(r);
    }
    let Some(Statement::Query(q)) = &p.stmt else { return None };
    if super::has_select_into(q) {
        return None; // CREATE TABLE AS (`sql::run_one`)
    }
    if s.txn.as_ref().is_some_and(|t| t.failed) {
        return Some(Err(PgError::new(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        )));
    }
    let run = |s: &mut Session| -> Result<QueryResult> {
        let plan = cached_plan(s, p, q)?;
        super::query::run_bound_sink(s, &plan.bound, params, sink)
    };
    s.begin_implicit();
    s.c_collate.set(false);
    let r = run(s);
    if r.is_ok() {
        s.command_done();
    }
    Some(r)
}

/// `WITH q AS (SELECT ...) UPDATE | DELETE | INSERT ...` as the statement alone: each FROM
/// item naming a WITH query (at any depth: the FROM / USING items, subqueries in SET and
/// WHERE, INSERT's query) becomes a subquery that defines the WITH queries and reads that one,
/// `FROM q AS x` → `FROM (WITH q AS (...) SELECT * FROM q) AS x`. Every reference then reads
/// the same rows with the statement's one snapshot, as PostgreSQL's once-computed WITH query
/// gives them; what could differ is refused with 0A000: a WITH query that changes rows, a
/// volatile function in a WITH query read more than once, and an inner WITH reusing a name.
/// Other statements are returned as they are.
/// Whether a query or one nested in it has a locking clause (`FOR UPDATE` ...).
fn query_locks_rows(q: &sqlparser::ast::Query) -> bool {
    use sqlparser::ast::{Visit, Visitor};
    use std::ops::ControlFlow;
    struct Locks;
    impl Visitor for Locks {
        type Break = ();
        fn pre_visit_query(&mut self, q: &sqlparser::ast::Query) -> ControlFlow<()> {
            if q.locks.is_empty() {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        }
    }
    q.visit(&mut Locks).is_break()
}

pub(crate) fn inline_with(st: sqlparser::ast::Statement) -> Result<sqlparser::ast::Statement> {
    use sqlparser::ast::{Statement, VisitMut, VisitorMut};
    use sqlparser::parser::Parser;
    use std::ops::ControlFlow;
    let Statement::Query(q) = st else { return Ok(st) };
    if !matches!(*q.body, SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Insert(_)) {
        return Ok(Statement::Query(q));
    }
    let sqlparser::ast::Query { with, body, order_by, limit_clause, fetch, locks, for_clause, settings, format_clause, pipe_operators } =
        *q;
    if order_by.is_some() || limit_clause.is_some() || fetch.is_some() || !locks.is_empty() {
        return Err(PgError::syntax("syntax error: ORDER BY, LIMIT or FOR UPDATE after UPDATE, DELETE or INSERT"));
    }
    super::check::need(
        for_clause.is_none() && settings.is_none() && format_clause.is_none() && pipe_operators.is_empty(),
        "this query clause",
    )?;
    let mut inner = match *body {
        SetExpr::Update(s) | SetExpr::Delete(s) | SetExpr::Insert(s) => s,
        _ => unreachable!("matched above"),
    };
    let Some(with) = with else { return Ok(inner) };
    let names: Vec<String> = with.cte_tables.iter().map(|c| fold_ident(&c.alias.name)).collect();
    let mut volatile = false;
    for c in &with.cte_tables {
        // A WITH query that locks rows runs once in PostgreSQL: read twice, inlined, it
        // would lock twice, with what other sessions did in between.
        volatile |= query_locks_rows(&c.query);
        if matches!(*c.query.body, SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Insert(_) | SetExpr::Merge(_)) {
            return Err(PgError::feature("a data-modifying statement in WITH is not supported by heapstore yet"));
        }
        let _ = sqlparser::ast::visit_expressions(&c.query, |e| {
            if let Expr::Function(f) = e {
                let n = f.name.0.last().and_then(|p| p.as_ident()).map(fold_ident).unwrap_or_default();
                volatile |= matches!(
                    n.as_str(),
                    "nextval"
                        | "setval"
                        | "random"
                        | "gen_random_uuid"
                        | "clock_timestamp"
                        | "timeofday"
                        | "pg_sleep"
                        | "pg_sleep_for"
                        | "pg_sleep_until"
                );
            }
            ControlFlow::<()>::Continue(())
        });
    }
    // The table changed is a table even where a WITH query has its name (PostgreSQL's
    // WITH queries do not hide the target): it is not rewritten.
    let target: Option<*const TableFactor> = match &inner {
        Statement::Update { table, .. } => Some(&table.relation as *const TableFactor),
        Statement::Delete(d) => match &d.from {
            FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v.first().map(|t| &t.relation as *const TableFactor),
        },
        _ => None,
    };
    // One-part names the WITH queries read: an inner WITH with one of these names (or a WITH
    // query's) would capture what a copy of the WITH clause reads.
    let mut read_by_bodies: Vec<String> = names.clone();
    for c in &with.cte_tables {
        let _ = sqlparser::ast::visit_relations(&c.query, |r| {
            if let [p] = r.0.as_slice() {
                if let Some(i) = p.as_ident() {
                    read_by_bodies.push(fold_ident(i));
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
    struct Inline<'a> {
        with: &'a sqlparser::ast::With,
        names: &'a [String],
        read_by_bodies: &'a [String],
        target: Option<*const TableFactor>,
        refs: Vec<usize>,
        shadowed: bool,
    }
    impl VisitorMut for Inline<'_> {
        type Break = PgError;
        fn pre_visit_query(&mut self, q: &mut sqlparser::ast::Query) -> ControlFlow<PgError> {
            if let Some(w) = &q.with {
                self.shadowed |= w.cte_tables.iter().any(|c| self.read_by_bodies.contains(&fold_ident(&c.alias.name)));
            }
            ControlFlow::Continue(())
        }
        fn post_visit_table_factor(&mut self, t: &mut TableFactor) -> ControlFlow<PgError> {
            if self.target == Some(t as *const TableFactor) {
                return ControlFlow::Continue(());
            }
            // A plain reference only: with TABLESAMPLE or other clauses it stays a table
            // reference, which the planner refuses or resolves as PostgreSQL would.
            let TableFactor::Table {
                name,
                alias,
                args: None,
                sample: None,
                with_hints,
                version: None,
                with_ordinality: false,
                partitions,
                json_path: None,
                index_hints,
            } = t
            else {
                return ControlFlow::Continue(());
            };
            if !with_hints.is_empty() || !partitions.is_empty() || !index_hints.is_empty() {
                return ControlFlow::Continue(());
            }
            let [part] = name.0.as_slice() else { return ControlFlow::Continue(()) };
            let Some(id) = part.as_ident() else { return ControlFlow::Continue(()) };
            let Some(k) = self.names.iter().position(|n| *n == fold_ident(id)) else { return ControlFlow::Continue(()) };
            self.refs[k] += 1;
            let sql = format!("SELECT * FROM {id}");
            let mut q = match Parser::new(&super::dialect::Pg).try_with_sql(&sql).and_then(|mut p| p.parse_query()) {
                Ok(q) => q,
                Err(e) => return ControlFlow::Break(PgError::internal(format!("re-reading WITH query \"{id}\": {e}"))),
            };
            q.with = Some(self.with.clone());
            let alias = alias.clone().or_else(|| Some(sqlparser::ast::TableAlias { name: id.clone(), columns: Vec::new() }));
            *t = TableFactor::Derived { lateral: false, subquery: q, alias };
            ControlFlow::Continue(())
        }
    }
    let mut v = Inline { with: &with, names: &names, read_by_bodies: &read_by_bodies, target, refs: vec![0; names.len()], shadowed: false };
    if let ControlFlow::Break(e) = inner.visit(&mut v) {
        return Err(e);
    }
    if v.shadowed {
        return Err(PgError::feature(
            "a WITH query inside UPDATE, DELETE or INSERT reusing a name the statement's WITH queries use is not supported by heapstore yet",
        ));
    }
    // PostgreSQL checks a WITH query nothing reads (and runs it only if it changes rows);
    // inlined, nothing would check it.
    for (k, n) in names.iter().enumerate() {
        let mut read = v.refs[k] > 0;
        // Read by another WITH query (its own recursive reference does not count).
        for c in with.cte_tables.iter().filter(|c| fold_ident(&c.alias.name) != *n) {
            let _ = sqlparser::ast::visit_relations(&c.query, |r| {
                read |= r.0.len() == 1 && r.0[0].as_ident().is_some_and(|i| fold_ident(i) == *n);
                ControlFlow::<()>::Continue(())
            });
        }
        if !read {
            return Err(PgError::feature(format!(
                "WITH query \"{n}\", which the statement does not read, is not supported by heapstore in UPDATE, DELETE or INSERT"
            )));
        }
    }
    if volatile && v.refs.iter().sum::<usize>() > 1 {
        return Err(PgError::feature(
            "a WITH query calling a volatile function or locking rows read more than once by UPDATE, DELETE or INSERT is not supported by heapstore yet",
        ));
    }
    Ok(inner)
}

//! `SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE [NOWAIT | SKIP LOCKED]`: the
//! LockRows node, as PostgreSQL's `nodeLockRows.c`.
//!
//! The planner (`sql::query`, `lock_rows`) puts the node above the sort and below any LIMIT,
//! over one table's scan whose rows carry their TID as a last column ([`dml::Plan::tid_col`]),
//! so only the rows the query returns are locked, and a row skipped with SKIP LOCKED does not
//! count toward the LIMIT. Between the node and the scan there are only projections, filters
//! and sorts (the planner refuses other shapes).
//!
//! For each row the node locks the version the scan found (`HeapRel::lock_row`):
//! - another transaction changing it or holding a conflicting lock: wait for that
//!   transaction's end (NOWAIT: 55P03; SKIP LOCKED: the row is left out), then try again;
//! - deleted by a transaction that committed after the statement's snapshot: the row is left
//!   out (REPEATABLE READ: 40001, "concurrent update" as PostgreSQL says for a delete too);
//! - updated so: the newest version is locked instead and the row is computed again from it
//!   (PostgreSQL's EvalPlanQual): the scan's WHERE clause and every filter below the node are
//!   checked on it, and the projections below the node recomputed. A version that no longer
//!   passes leaves the row out. Rows are not sorted again, as in PostgreSQL.
//!
//! Over several FROM items (a join, or a comma list of tables) the planner gives every table
//! scan in FROM a lock slot ([`dml::Plan::lock_slot`]) and a TID column, and the select list
//! carries each slot's TID up to the node as a hidden column ([`LockTarget`]); the node passes
//! the rows on unchanged (the projection above it drops those columns). For each row it locks
//! the version of each table the clauses name, in FROM order, as above. If one of them was
//! updated it locks the newest version and computes the row again by running its input once
//! more with every slot's scan giving just one row (`Exec::epq`): the newest version for a
//! table it locked, the version the row was built from for any other table, and no row where
//! the row was NULL-extended. The join conditions, WHERE clause and projections are so
//! checked and computed again; no row (or the first of several) is what PostgreSQL's
//! EvalPlanQual gives too. The planner refuses a locked table on the nullable side of an outer
//! join and FROM items other than tables (they have no version to fetch again).
//!
//! Invariant: the node runs in a transaction with an xid (`exec::lock_tables` assigns one
//! before a plan with a LockRows node runs, and takes ROW SHARE on the table); the locks are
//! the transaction's until it ends (`txn::rowlock`).

use super::{Exec, Node};
use crate::access::heap::{dml::ChangeOutcome, dml::HeapRel, tuple, Flow};
use crate::error::{sqlstate, PgError, Result};
use crate::sql::dml;
use crate::txn::rowlock::RowLockMode;
use crate::txn::INVALID_XID;
use crate::types::Value;

/// What to do about a row another transaction holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    Block,
    NoWait,
    SkipLocked,
}

/// A LockRows node: its input's rows end with the locked table's TID column, which the node
/// drops.
#[derive(Clone, Debug)]
pub struct LockRows {
    pub input: Node,
    pub mode: RowLockMode,
    pub wait: LockWait,
    /// Empty: one table's rows (the input's last column is its TID, dropped). Otherwise the
    /// lock slots of a FROM list of several items, whose TID columns the input carries and the
    /// node leaves in place.
    pub targets: Vec<LockTarget>,
}

/// One table scan of a multi-item FOR UPDATE (see the module doc).
#[derive(Clone, Debug)]
pub struct LockTarget {
    /// The scan's [`dml::Plan::lock_slot`].
    pub slot: usize,
    /// The input column holding its row's TID (NULL where an outer join NULL-extended it).
    pub col: usize,
    pub table: std::sync::Arc<crate::catalog::Table>,
    /// The strength and wait policy its clauses ask for; None: not locked (its rows are
    /// only read again by a re-check).
    pub lock: Option<(RowLockMode, LockWait)>,
}

/// The scan under a LockRows node and the nodes between them, top first.
pub(crate) fn spine(input: &Node) -> Result<(&dml::Plan, Vec<&Node>)> {
    let mut path = Vec::new();
    let mut n = input;
    loop {
        match n {
            Node::Project(i, _) | Node::Filter(i, _) | Node::Sort(i, _) => {
                path.push(n);
                n = i;
            }
            Node::Scan(p) if p.tid_col => return Ok((p, path)),
            _ => return Err(PgError::internal("a LockRows node over something other than one table's scan")),
        }
    }
}

pub(super) fn run(ex: &Exec<'_>, l: &LockRows, outer: &[&[Value]], sink: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
    if !l.targets.is_empty() {
        return run_multi(ex, l, outer, sink);
    }
    let s = ex.s;
    if s.txn.as_ref().map_or(INVALID_XID, |t| t.xid) == INVALID_XID {
        return Err(PgError::internal("a row lock taken outside a transaction with an xid"));
    }
    let (plan, path) = spine(&l.input)?;
    let width = l.input.width();
    let shared = s.shared.clone();
    let heap = HeapRel { pool: &shared.pool, pins: &s.pins, rel: plan.table.relfile, wal: None, full_page_writes: false, touched: None };
    ex.run(&l.input, outer, &mut |row| {
        debug_assert_eq!(row.len(), width);
        let mut tid = dml::tid_of(&row[width - 1])?;
        let updater = match lock_version(ex, &plan.table, &mut tid, l.mode, l.wait)? {
            Locked::LeftOut => return Ok(Flow::Continue),
            Locked::Yes(None) => return sink(&row[..width - 1]),
            Locked::Yes(Some(by)) => by,
        };
        // The newest version is locked (as PostgreSQL locks it before its re-check): compute
        // the row again from it.
        let mut raw = Vec::new();
        let got = heap.fetch_any(tid, |t| {
            // A line pointer reused after pruning holds someone else's tuple.
            (tuple::xmin(t) == updater).then(|| dml::decode_row(&shared.pool, &s.pins, t, &plan.types, &plan.needed, &mut raw))
        })?;
        match got.flatten() {
            Some(r) => r?,
            None => return Ok(Flow::Continue),
        }
        raw.push(dml::tid_value(tid));
        match recompute(ex, plan, &path, raw, outer)? {
            Some(r) => sink(&r[..width - 1]),
            None => Ok(Flow::Continue),
        }
    })
}

/// What locking one row version ended in.
enum Locked {
    /// Locked; Some(updater) when the version first found was updated and a newer one (by
    /// that transaction) is locked instead.
    Yes(Option<crate::txn::Xid>),
    /// The row is left out (deleted, or skipped with SKIP LOCKED).
    LeftOut,
}

/// Locks the version at `tid` of `table` or the newest version of its update chain, waiting
/// as `wait` says; `tid` ends naming the version locked.
fn lock_version(
    ex: &Exec<'_>,
    table: &crate::catalog::Table,
    tid: &mut crate::access::heap::dml::Tid,
    mode: RowLockMode,
    wait: LockWait,
) -> Result<Locked> {
    let s = ex.s;
    let me = s.txn.as_ref().map_or(INVALID_XID, |t| t.xid);
    let shared = s.shared.clone();
    let heap = HeapRel { pool: &shared.pool, pins: &s.pins, rel: table.relfile, wal: None, full_page_writes: false, touched: None };
    let wide = s.snapshot_is_transaction_wide();
    let mut updater = None;
    // Bounded: each turn locks, leaves the row out, waits for a transaction to end, or moves
    // one version along an update chain.
    for _ in 0..1_000_000u32 {
        match heap.lock_row(&shared.txns, *tid, me, mode)? {
            ChangeOutcome::Done(_) => return Ok(Locked::Yes(updater)),
            ChangeOutcome::DoneHot(_) => unreachable!("a row lock makes no version"),
            ChangeOutcome::Gone => return Ok(Locked::LeftOut),
            ChangeOutcome::Wait(other) => match wait {
                LockWait::SkipLocked => return Ok(Locked::LeftOut),
                LockWait::NoWait => {
                    return Err(PgError::new(
                        sqlstate::LOCK_NOT_AVAILABLE,
                        format!("could not obtain lock on row in relation \"{}\"", table.name),
                    ))
                }
                LockWait::Block => {
                    let mut locks = s.locks.try_borrow_mut().map_err(|_| PgError::internal("lock table borrowed while locking a row"))?;
                    crate::access::heap::dml::wait_for_xid(&shared.locks, &shared.txns, &mut locks, other)?;
                }
            },
            ChangeOutcome::Deleted | ChangeOutcome::Updated(..) if wide => return Err(serialization_failure()),
            ChangeOutcome::Deleted => return Ok(Locked::LeftOut),
            ChangeOutcome::Updated(next, by) => {
                *tid = next;
                updater = Some(by);
            }
        }
    }
    Err(PgError::internal(format!("row lock on relation \"{}\" did not settle", table.name)))
}

/// A LockRows node over several FROM items (module doc).
fn run_multi(ex: &Exec<'_>, l: &LockRows, outer: &[&[Value]], sink: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
    let s = ex.s;
    if s.txn.as_ref().map_or(INVALID_XID, |t| t.xid) == INVALID_XID {
        return Err(PgError::internal("a row lock taken outside a transaction with an xid"));
    }
    let shared = s.shared.clone();
    let mut tids = Vec::with_capacity(l.targets.len());
    // Per target: the transaction that made the version locked when it is not the one found.
    let mut newer = Vec::with_capacity(l.targets.len());
    ex.run(&l.input, outer, &mut |row| {
        tids.clear();
        newer.clear();
        for t in &l.targets {
            tids.push(match &row[t.col] {
                Value::Null => None,
                v => Some(dml::tid_of(v)?),
            });
        }
        for (k, t) in l.targets.iter().enumerate() {
            let (Some((mode, wait)), Some(tid)) = (t.lock, tids[k].as_mut()) else {
                newer.push(None);
                continue;
            };
            match lock_version(ex, &t.table, tid, mode, wait)? {
                Locked::Yes(by) => newer.push(by),
                Locked::LeftOut => return Ok(Flow::Continue),
            }
        }
        if newer.iter().all(Option::is_none) {
            return sink(row);
        }
        // EvalPlanQual: the input once more, each slot's scan giving one row.
        let mut rows: Vec<(usize, Option<Vec<Value>>)> = l.targets.iter().map(|t| (t.slot, None)).collect();
        for (k, t) in l.targets.iter().enumerate() {
            let Some(tid) = tids[k] else { continue };
            let heap =
                HeapRel { pool: &shared.pool, pins: &s.pins, rel: t.table.relfile, wal: None, full_page_writes: false, touched: None };
            let types: Vec<crate::types::SqlType> = t.table.columns.iter().map(|c| c.ty).collect();
            let all = vec![true; types.len()];
            let mut raw = Vec::new();
            let got = heap.fetch_any(tid, |tup| {
                // A line pointer reused after pruning holds someone else's tuple.
                let ours = newer[k].is_none_or(|by| tuple::xmin(tup) == by);
                ours.then(|| dml::decode_row(&shared.pool, &s.pins, tup, &types, &all, &mut raw))
            })?;
            match got.flatten() {
                Some(r) => r?,
                None => return Ok(Flow::Continue),
            }
            raw.push(dml::tid_value(tid));
            rows[k].1 = Some(raw);
        }
        let saved = ex.epq.replace(Some(std::rc::Rc::new(rows)));
        let mut first: Option<Vec<Value>> = None;
        let r = ex.run(&l.input, outer, &mut |r| {
            first = Some(r.to_vec());
            Ok(Flow::Stop)
        });
        ex.epq.replace(saved);
        r?;
        match first {
            Some(r) => sink(&r),
            None => Ok(Flow::Continue),
        }
    })
}

/// The row a newer version `raw` (the scan's columns and TID) gives at the LockRows node's
/// input, or None if the scan's WHERE clause or a filter on the way rejects it.
fn recompute(ex: &Exec<'_>, plan: &dml::Plan, path: &[&Node], raw: Vec<Value>, outer: &[&[Value]]) -> Result<Option<Vec<Value>>> {
    if let Some(w) = &plan.filter {
        if !w.matches(&raw, ex.params)? {
            return Ok(None);
        }
    }
    let mut row = raw;
    for n in path.iter().rev() {
        match n {
            Node::Filter(_, cond) => {
                if ex.eval(cond, &row, outer)? != Value::Bool(true) {
                    return Ok(None);
                }
            }
            Node::Project(_, exprs) => {
                row = exprs.iter().map(|e| ex.eval(e, &row, outer)).collect::<Result<Vec<_>>>()?;
            }
            Node::Sort(..) => {}
            _ => unreachable!("spine holds projections, filters and sorts"),
        }
    }
    Ok(Some(row))
}

fn serialization_failure() -> PgError {
    PgError::new(sqlstate::SERIALIZATION_FAILURE, "could not serialize access due to concurrent update")
}

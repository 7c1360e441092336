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
    let s = ex.s;
    let me = s.txn.as_ref().map_or(INVALID_XID, |t| t.xid);
    if me == INVALID_XID {
        return Err(PgError::internal("a row lock taken outside a transaction with an xid"));
    }
    let (plan, path) = spine(&l.input)?;
    let width = l.input.width();
    let shared = s.shared.clone();
    let heap = HeapRel { pool: &shared.pool, pins: &s.pins, rel: plan.table.relfile, wal: None, full_page_writes: false, touched: None };
    let wide = s.snapshot_is_transaction_wide();
    let mut newer: Vec<Value> = Vec::new();
    ex.run(&l.input, outer, &mut |row| {
        debug_assert_eq!(row.len(), width);
        let mut tid = dml::tid_of(&row[width - 1])?;
        let mut replaced = false;
        // Bounded: each turn locks, leaves the row out, waits for a transaction to end, or
        // moves one version along an update chain.
        for _ in 0..1_000_000u32 {
            match heap.lock_row(&shared.txns, tid, me, l.mode)? {
                ChangeOutcome::Done(_) => {
                    let out = if replaced { &newer[..] } else { row };
                    return sink(&out[..width - 1]);
                }
                ChangeOutcome::DoneHot(_) => unreachable!("a row lock makes no version"),
                ChangeOutcome::Gone => return Ok(Flow::Continue),
                ChangeOutcome::Wait(other) => match l.wait {
                    LockWait::SkipLocked => return Ok(Flow::Continue),
                    LockWait::NoWait => {
                        return Err(PgError::new(
                            sqlstate::LOCK_NOT_AVAILABLE,
                            format!("could not obtain lock on row in relation \"{}\"", plan.table.name),
                        ))
                    }
                    LockWait::Block => {
                        let mut locks =
                            s.locks.try_borrow_mut().map_err(|_| PgError::internal("lock table borrowed while locking a row"))?;
                        crate::access::heap::dml::wait_for_xid(&shared.locks, &shared.txns, &mut locks, other)?;
                    }
                },
                // PostgreSQL's LockRows says "update" for a delete too.
                ChangeOutcome::Deleted | ChangeOutcome::Updated(..) if wide => return Err(serialization_failure()),
                ChangeOutcome::Deleted => return Ok(Flow::Continue),
                ChangeOutcome::Updated(next, updater) => {
                    let mut raw = Vec::new();
                    let got = heap.fetch_any(next, |t| {
                        // A line pointer reused after pruning holds someone else's tuple.
                        (tuple::xmin(t) == updater).then(|| dml::decode_row(&shared.pool, &s.pins, t, &plan.types, &plan.needed, &mut raw))
                    })?;
                    match got.flatten() {
                        Some(r) => r?,
                        None => return Ok(Flow::Continue),
                    }
                    raw.push(dml::tid_value(next));
                    match recompute(ex, plan, &path, raw, outer)? {
                        Some(r) => newer = r,
                        None => return Ok(Flow::Continue),
                    }
                    replaced = true;
                    tid = next;
                }
            }
        }
        Err(PgError::internal(format!("row lock on relation \"{}\" did not settle", plan.table.name)))
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

//! Single-row heap changes — insert, delete, update — with their WAL records, the fetch of a
//! tuple by TID (index scans, EvalPlanQual), and the READ COMMITTED rules for rows that another
//! transaction is changing.
//!
//! Entry points: [`HeapRel`] ([`HeapRel::insert`], [`HeapRel::delete`], [`HeapRel::update`],
//! [`HeapRel::fetch`]), [`xid_state`], [`apply_ops`] (redo).
//!
//! ```text
//!  old version                          new version
//!  ┌──────────────────────────────┐     ┌──────────────────────────────┐
//!  │ xmin=A  xmax=B  ctid=(7,3) ──┼────►│ xmin=B  xmax=0  ctid=(7,3)   │  (update by B)
//!  └──────────────────────────────┘     └──────────────────────────────┘
//!  a deleted row has xmax=B and ctid pointing at itself
//! ```
//!
//! Invariants:
//! 1. A tuple's xmax/cmax/ctid change only under its page's exclusive content lock, and only
//!    when its xmax is empty, aborted, or its creator's own (a row is "claimed" by setting
//!    xmax: the check and the set are one critical section, so two updaters never both claim a
//!    version). A caller that finds xmax set by a running transaction waits for it on its
//!    transaction lock (`LockTag::Transaction`, ShareLock against the owner's ExclusiveLock,
//!    so deadlocks are found by the lock manager) and tries again. Under the same exclusive
//!    lock, before setting xmax, a change looks for another transaction's conflicting row
//!    lock (`txn::rowlock` invariant 1) and waits for that transaction the same way.
//! 2. An update locks both pages in block order (lower first) — the only place two heap page
//!    locks are held at once — and re-checks the old version's xmax after locking, since the
//!    lock on the old page was dropped while a page for the new version was found.
//! 3. Every change is WAL-logged while the page locks are held, and the page LSN is set to the
//!    record's end before the locks are released; the record carries a full-page image of a
//!    page at its first change after the checkpoint's REDO pointer (`full_page_writes`), the
//!    decision made again if the REDO pointer moved before the record was reserved.
//! 4. Readers read tuples only under the page's content lock (they copy what they need), so
//!    VACUUM may move tuple data within a page under the exclusive lock; line pointer numbers
//!    (TIDs) never move while an index entry can point at them.
//!
//! Record block data is a list of operations, applied in order by [`apply_ops`] — during redo,
//! and by the change itself, so both make the same page:
//! `1 = add tuple (offset u16, length u16, whole tuple)` at the next line pointer or an unused
//! one, `2 = set xmax (offset u16, xmax u64, cmax u32, ctid block u32, ctid offset u16)`, which
//! clears HEAP_HOT_UPDATED, `5` = the same setting it (a HOT update), `3 = set xmin (offset
//! u16, xmin u64, cmin u32)`, `4` = a prune (`prune::PruneOps`), `6 = set unused (count u16,
//! offsets u16...)`: VACUUM's LP_DEAD line pointers whose index entries are gone (then the
//! unused line pointers at the array's end are dropped: `page::truncate_unused_tail`), `7` = mark
//! the page all-visible (VACUUM; `storage::page` invariant 5). Operations 1, 2, 3 and 5 clear
//! the all-visible mark.
//!
//! Savepoints ([`TouchLog`], [`HeapRel::undo_page`]): while a savepoint is open, every page a
//! row change or bulk insert touches is noted. ROLLBACK TO SAVEPOINT revisits those pages and
//! undoes, in place and WAL-logged (HEAP_UNDO), what the transaction did at or after the
//! savepoint's command id: tuples it created get xmin = invalid (read as aborted by every
//! visibility check, unique check and VACUUM, as PostgreSQL's aborted speculative insertions),
//! and tuples it deleted or updated get xmax cleared and ctid pointing at themselves again.
//! This is sound because a tuple's xmin/cmin and xmax/cmax are stored separately, a version is
//! claimed only when its xmax is empty, aborted or this transaction's (invariant 1), and
//! xmax only ever records a change (row locks live in memory, `txn::rowlock`, and never mark
//! a tuple): an xmax equal to the transaction's xid with a cmax at or after the savepoint was
//! set after it.

use super::tuple;
use crate::access::fsm;
use crate::buffer::{BufferPool, PageMut, Pins};
use crate::error::{sqlstate, PgError, Result};
use crate::storage::{page, BlockNumber, ForkNumber, RelFileNumber};
use crate::txn::rowlock::RowLockMode;
use crate::txn::{CommandId, Snapshot, TxnManager, VisCache, Xid, XidStatus, INVALID_XID};

/// A heap tuple's address: (block, line pointer offset).
pub type Tid = (BlockNumber, u16);

const OP_ADD: u8 = 1;
const OP_SET_XMAX: u8 = 2;
const OP_SET_XMIN: u8 = 3;
// 4 is `prune::OP_PRUNE`.
const OP_SET_XMAX_HOT: u8 = 5;
const OP_SET_UNUSED: u8 = 6;
const OP_SET_ALL_VISIBLE: u8 = 7;

/// Attempts to find a page for one tuple before extending (bounded: the FSM is a hint).
const FSM_TRIES_MAX: usize = 4;

/// A heap relation as the row operations see it.
pub struct HeapRel<'a> {
    pub pool: &'a BufferPool,
    pub pins: &'a Pins,
    pub rel: RelFileNumber,
    /// The WAL, for a logged relation (None: unlogged, or WAL skipped until commit).
    pub wal: Option<&'a crate::wal::Wal>,
    pub full_page_writes: bool,
    /// The transaction's log of touched pages while a savepoint is open.
    pub touched: Option<&'a TouchLog>,
}

/// The state of a transaction as a row change sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XidState {
    Committed,
    Aborted,
    Running,
}

/// Committed, aborted or still running. An xid with no commit-log mark that is not running was
/// in progress at a crash: aborted.
pub fn xid_state(txns: &TxnManager, xid: Xid) -> XidState {
    match txns.clog.status(xid) {
        XidStatus::Committed => XidState::Committed,
        XidStatus::Aborted => XidState::Aborted,
        XidStatus::InProgress => {
            if txns.is_running(xid) {
                return XidState::Running;
            }
            // It may have finished between the two reads: the mark is set before it leaves
            // the running set (txn invariant 2).
            match txns.clog.status(xid) {
                XidStatus::Committed => XidState::Committed,
                _ => XidState::Aborted,
            }
        }
    }
}

/// What happened when a row change met the version it targeted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeOutcome {
    /// The change was made; for an update, the new version's TID.
    Done(Tid),
    /// A HOT update was made (`prune` invariant 1): the new version's TID; it needs no index
    /// entry.
    DoneHot(Tid),
    /// A running transaction holds the row: wait for it, then try again.
    Wait(Xid),
    /// A committed transaction (the xid) updated the row: its next version is at this TID
    /// (follow it, checking that the version there was created by that xid, and re-check the
    /// WHERE clause).
    Updated(Tid, Xid),
    /// A committed transaction deleted the row: skip it (READ COMMITTED) or fail (REPEATABLE
    /// READ).
    Deleted,
    /// This command already changed the row, or its line pointer is gone: skip it.
    Gone,
}

/// Appends an add-tuple operation to a record's block data.
fn push_add(data: &mut Vec<u8>, off: u16, t: &[u8]) {
    data.push(OP_ADD);
    data.extend_from_slice(&off.to_le_bytes());
    data.extend_from_slice(&(t.len() as u16).to_le_bytes());
    data.extend_from_slice(t);
}

/// Appends a set-xmax operation (`hot`: the version is HOT-updated, its ctid on the page).
fn push_set_xmax(data: &mut Vec<u8>, off: u16, xmax: Xid, cmax: CommandId, ctid: Tid) {
    push_set_xmax_as(data, off, xmax, cmax, ctid, false)
}

fn push_set_xmax_as(data: &mut Vec<u8>, off: u16, xmax: Xid, cmax: CommandId, ctid: Tid, hot: bool) {
    data.push(if hot { OP_SET_XMAX_HOT } else { OP_SET_XMAX });
    data.extend_from_slice(&off.to_le_bytes());
    data.extend_from_slice(&xmax.to_le_bytes());
    data.extend_from_slice(&cmax.to_le_bytes());
    data.extend_from_slice(&ctid.0.to_le_bytes());
    data.extend_from_slice(&ctid.1.to_le_bytes());
}

/// Appends a set-xmin operation.
fn push_set_xmin(data: &mut Vec<u8>, off: u16, xmin: Xid, cmin: CommandId) {
    data.push(OP_SET_XMIN);
    data.extend_from_slice(&off.to_le_bytes());
    data.extend_from_slice(&xmin.to_le_bytes());
    data.extend_from_slice(&cmin.to_le_bytes());
}

/// The pages a transaction changed since its oldest open savepoint, in the order it first
/// touched them in a run (consecutive repeats are folded). Shared by the row operations and
/// bulk inserts of one transaction.
#[derive(Default, Debug)]
pub struct TouchLog {
    pages: std::sync::Mutex<TouchedPages>,
}

#[derive(Default, Debug)]
struct TouchedPages {
    list: Vec<(RelFileNumber, BlockNumber, bool)>,
    /// Entries before this index belong to an older savepoint: a touch never folds into them.
    fence: usize,
    /// When the part after the fence grows past this, it is sorted and deduplicated (an
    /// UPDATE moving rows between pages alternates pages, which consecutive folding misses),
    /// so the log holds at most about twice as many entries as distinct pages.
    compact_at: usize,
}

impl TouchLog {
    /// Notes that `block` of `rel` is about to be changed, WAL-logged or not (`logged`).
    pub fn touch(&self, rel: RelFileNumber, block: BlockNumber, logged: bool) {
        let mut p = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        if p.list.len() == p.fence || p.list.last() != Some(&(rel, block, logged)) {
            p.list.push((rel, block, logged));
            if p.list.len() - p.fence > p.compact_at.max(1024) {
                let fence = p.fence;
                let part = &mut p.list[fence..];
                part.sort_unstable();
                let mut kept = part.len();
                if kept > 0 {
                    let mut w = 1;
                    for r in 1..part.len() {
                        if part[r] != part[w - 1] {
                            part[w] = part[r];
                            w += 1;
                        }
                    }
                    kept = w;
                }
                p.list.truncate(fence + kept);
                p.compact_at = 2 * kept;
            }
        }
    }

    /// Starts a savepoint's part of the log: returns its position.
    pub fn mark(&self) -> usize {
        let mut p = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        p.fence = p.list.len();
        p.compact_at = 0;
        p.fence
    }

    /// Removes and returns the entries from position `keep` on, sorted and without repeats;
    /// later touches start a new part at `keep`.
    pub fn take_from(&self, keep: usize) -> Vec<(RelFileNumber, BlockNumber, bool)> {
        let mut p = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = if keep < p.list.len() { p.list.split_off(keep) } else { Vec::new() };
        p.fence = p.list.len();
        p.compact_at = 0;
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Redo: applies a block's operations to its page.
pub fn apply_ops(pg: &mut [u8], mut data: &[u8]) -> std::result::Result<(), &'static str> {
    while let Some((&op, rest)) = data.split_first() {
        match op {
            OP_ADD => {
                if rest.len() < 4 {
                    return Err("truncated add-tuple operation");
                }
                let off = u16::from_le_bytes([rest[0], rest[1]]);
                let len = u16::from_le_bytes([rest[2], rest[3]]) as usize;
                let t = rest.get(4..4 + len).ok_or("tuple past record end")?;
                if off != page::max_offset(pg) + 1 && (off > page::max_offset(pg) || page::item_id(pg, off).0 != page::LP_UNUSED) {
                    return Err("tuple offset is neither the page's next line pointer nor an unused one");
                }
                page::add_item_at(pg, off, t).ok_or("tuple does not fit its page")?;
                data = &rest[4 + len..];
            }
            OP_SET_XMAX | OP_SET_XMAX_HOT => {
                let b = rest.get(..20).ok_or("truncated set-xmax operation")?;
                let off = u16::from_le_bytes([b[0], b[1]]);
                let xmax = u64::from_le_bytes(b[2..10].try_into().expect("8"));
                let cmax = u32::from_le_bytes(b[10..14].try_into().expect("4"));
                let blk = u32::from_le_bytes(b[14..18].try_into().expect("4"));
                let coff = u16::from_le_bytes([b[18], b[19]]);
                if off == 0 || off > page::max_offset(pg) {
                    return Err("set-xmax on a missing line pointer");
                }
                let t = page::item_mut(pg, off).ok_or("set-xmax on an unused line pointer")?;
                tuple::set_xmax(t, xmax, cmax);
                tuple::set_ctid(t, blk, coff);
                tuple::set_infomask_bits(t, tuple::HEAP_HOT_UPDATED, op == OP_SET_XMAX_HOT);
                clear_all_visible(pg);
                data = &rest[20..];
            }
            super::prune::OP_PRUNE => {
                let (ops, after) = super::prune::PruneOps::decode(rest)?;
                ops.apply(pg)?;
                data = after;
            }
            OP_SET_UNUSED => {
                let n = rest.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]])).ok_or("truncated set-unused operation")? as usize;
                let offs = rest.get(2..2 + 2 * n).ok_or("truncated set-unused operation")?;
                let offs = offs.chunks_exact(2).map(|o| u16::from_le_bytes([o[0], o[1]]));
                if !offs.clone().all(|off| off != 0 && off <= page::max_offset(pg) && page::item_id(pg, off).0 == page::LP_DEAD) {
                    return Err("set-unused on a line pointer that is not dead");
                }
                for off in offs {
                    page::set_item_id(pg, off, page::LP_UNUSED, 0, 0);
                }
                if n > 0 {
                    page::set_flags(pg, page::flags(pg) | page::PD_HAS_FREE_LINES);
                    page::truncate_unused_tail(pg);
                }
                data = &rest[2 + 2 * n..];
            }
            OP_SET_XMIN => {
                let b = rest.get(..14).ok_or("truncated set-xmin operation")?;
                let off = u16::from_le_bytes([b[0], b[1]]);
                let xmin = u64::from_le_bytes(b[2..10].try_into().expect("8"));
                let cmin = u32::from_le_bytes(b[10..14].try_into().expect("4"));
                if off == 0 || off > page::max_offset(pg) {
                    return Err("set-xmin on a missing line pointer");
                }
                let t = page::item_mut(pg, off).ok_or("set-xmin on an unused line pointer")?;
                tuple::set_xmin(t, xmin, cmin);
                clear_all_visible(pg);
                data = &rest[14..];
            }
            OP_SET_ALL_VISIBLE => {
                if page::is_new(pg) {
                    return Err("all-visible mark on an uninitialized page");
                }
                page::set_flags(pg, page::flags(pg) | page::PD_ALL_VISIBLE);
                data = rest;
            }
            _ => return Err("unknown heap operation"),
        }
    }
    Ok(())
}

/// Clears the page's all-visible mark (`page` invariant 5): a tuple header changed.
fn clear_all_visible(pg: &mut [u8]) {
    page::set_flags(pg, page::flags(pg) & !page::PD_ALL_VISIBLE);
}

/// One page of a record being logged.
struct LoggedPage<'p, 'b> {
    block: BlockNumber,
    pg: &'p mut PageMut<'b>,
    will_init: bool,
    data: &'p [u8],
}

impl HeapRel<'_> {
    /// Notes a page about to change in the savepoint log, if one is kept.
    fn touch(&self, block: BlockNumber) {
        if let Some(l) = self.touched {
            l.touch(self.rel, block, self.wal.is_some());
        }
    }

    /// ROLLBACK TO SAVEPOINT on one page: tuples `me` created at or after command `from` become
    /// dead to everyone (xmin = invalid) and tuples it deleted or updated at or after `from`
    /// are live again (xmax cleared, ctid back to themselves), WAL-logged as one HEAP_UNDO
    /// record in the critical section. Returns how many tuples changed.
    pub fn undo_page(&self, block: BlockNumber, me: Xid, from: CommandId) -> Result<usize> {
        debug_assert_ne!(me, INVALID_XID);
        if block >= self.pool.smgr().nblocks(self.rel, ForkNumber::Main)? {
            return Ok(0);
        }
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, block, None)?;
        let mut pg = buf.lock_exclusive();
        if page::is_new(&pg) {
            return Ok(0);
        }
        // Decide every change first (failing on a corrupt tuple before anything changed),
        // then apply them and log them together.
        let mut data = Vec::new();
        let mut changed = 0;
        for off in 1..=page::max_offset(&pg) {
            let Some(t) = page::item(&pg, off) else { continue };
            if t.len() < tuple::HEADER_SIZE {
                return Err(super::corrupt_tuple(self.pool, self.rel, block, off));
            }
            let mut hit = false;
            if tuple::xmin(t) == me && tuple::cmin(t) >= from {
                push_set_xmin(&mut data, off, INVALID_XID, tuple::cmin(t));
                hit = true;
            }
            if tuple::xmax(t) == me && tuple::cmax(t) >= from {
                push_set_xmax(&mut data, off, INVALID_XID, 0, (block, off));
                hit = true;
            }
            changed += usize::from(hit);
        }
        if changed > 0 {
            self.clear_vm(block, &pg)?;
            apply_ops(&mut pg, &data).map_err(|why| PgError::internal(format!("undo on block {block}: {why}")))?;
            self.log(crate::recovery::HEAP_UNDO, me, &mut [LoggedPage { block, pg: &mut pg, will_init: false, data: &data }])?;
        }
        Ok(changed)
    }

    /// Makes the version `me` just inserted at `tid` dead to everyone (xmin = invalid, as
    /// ROLLBACK TO does), WAL-logged as a HEAP_UNDO record: INSERT ... ON CONFLICT's
    /// "super-delete" of a row whose insertion met a conflict committed meanwhile. Its index
    /// entries stay and lead to a dead version, which unique checks and scans skip.
    pub fn kill_own_insert(&self, tid: Tid, me: Xid) -> Result<()> {
        let (block, off) = tid;
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, block, None)?;
        let mut pg = buf.lock_exclusive();
        let t = page::item(&pg, off).ok_or_else(|| super::corrupt_tuple(self.pool, self.rel, block, off))?;
        if t.len() < tuple::HEADER_SIZE || tuple::xmin(t) != me {
            return Err(PgError::internal(format!("the version at ({block},{off}) is not this transaction's insert")));
        }
        let mut data = Vec::new();
        push_set_xmin(&mut data, off, INVALID_XID, tuple::cmin(t));
        self.clear_vm(block, &pg)?;
        apply_ops(&mut pg, &data).map_err(|why| PgError::internal(format!("undo on block {block}: {why}")))?;
        self.log(crate::recovery::HEAP_UNDO, me, &mut [LoggedPage { block, pg: &mut pg, will_init: false, data: &data }])
    }

    /// Clears the visibility map bit of the locked page `block` if the page is marked
    /// all-visible: called before a change that clears the mark (`access::vm` invariant 2).
    fn clear_vm(&self, block: BlockNumber, pg: &[u8]) -> Result<()> {
        if page::flags(pg) & page::PD_ALL_VISIBLE != 0 {
            crate::access::vm::clear(self.pool, self.pins, self.rel, block)?;
        }
        Ok(())
    }

    /// Logs one record covering `pages` (already changed, all locked exclusively) and stamps
    /// them with its end LSN, in the critical section (invariant 3).
    fn log(&self, info: u8, xid: Xid, pages: &mut [LoggedPage<'_, '_>]) -> Result<()> {
        use crate::buffer::critical::{log_page_changes, Logged, PageChange, RecordKind};
        let mut changes: Vec<PageChange<'_, '_>> = pages
            .iter_mut()
            .map(|p| PageChange {
                pg: &mut *p.pg,
                rel: self.rel,
                fork: ForkNumber::Main,
                block: p.block,
                logged: Logged::Delta { data: p.data, will_init: p.will_init },
            })
            .collect();
        let kind = RecordKind { rmid: crate::recovery::RM_HEAP, info, xid, main: &[] };
        log_page_changes(self.wal, self.full_page_writes, kind, &mut changes, &mut crate::wal::RecordBuilder::new())?;
        Ok(())
    }

    /// Finds a page with room for `len` bytes: the free space map, then the relation's last
    /// page, then a new page. Returns the pinned buffer and whether it came from the FSM or was
    /// just extended (its left-over space is then given back to the FSM).
    fn page_for(&self, len: usize, avoid: Option<BlockNumber>) -> Result<(crate::buffer::Buffer<'_>, bool)> {
        let need = len + page::LINE_POINTER_SIZE;
        for _ in 0..FSM_TRIES_MAX {
            let Some(block) = fsm::take(self.pool, self.pins, self.rel, need)? else { break };
            if block >= self.pool.smgr().nblocks(self.rel, ForkNumber::Main)? || Some(block) == avoid {
                continue;
            }
            let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, block, None)?;
            let free = {
                let pg = buf.lock_shared();
                if page::is_new(&pg) {
                    self.pool.block_size() - page::PAGE_HEADER_SIZE
                } else {
                    page::free_space(&pg)
                }
            };
            if free >= len {
                return Ok((buf, true));
            }
            drop(buf);
            fsm::record(self.pool, self.pins, self.rel, block, free)?;
        }
        let n = self.pool.smgr().nblocks(self.rel, ForkNumber::Main)?;
        if n > 0 && Some(n - 1) != avoid {
            let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, n - 1, None)?;
            let room = {
                let pg = buf.lock_shared();
                page::is_new(&pg) || page::free_space(&pg) >= len
            };
            if room {
                return Ok((buf, false));
            }
        }
        let mut bufs = self.pool.extend_by(self.pins, self.rel, ForkNumber::Main, 1, None)?;
        let buf = bufs.pop().ok_or_else(|| PgError::internal("could not extend relation by one page"))?;
        Ok((buf, true))
    }

    /// Inserts one formed tuple (xmin/cmin and ctid are set here). Returns its TID.
    pub fn insert(&self, t: &mut [u8], xid: Xid, cid: CommandId) -> Result<Tid> {
        let bs = self.pool.block_size();
        if t.len() > super::max_tuple_size(bs) {
            return Err(super::row_too_big(t.len(), bs));
        }
        tuple::set_xmin(t, xid, cid);
        tuple::set_xmax(t, INVALID_XID, 0);
        tuple::set_infomask_bits(t, tuple::HEAP_HOT_UPDATED | tuple::HEAP_ONLY_TUPLE, false);
        // Bounded: a page that filled up between the search and the lock is retried.
        for _ in 0..16 {
            let (buf, give_back) = self.page_for(t.len(), None)?;
            let block = buf.block();
            let mut pg = buf.lock_exclusive();
            let will_init = page::is_new(&pg);
            if will_init {
                page::init(&mut pg, 0);
            }
            if page::free_space(&pg) < t.len() {
                continue;
            }
            self.touch(block);
            let off = place(&mut pg);
            tuple::set_ctid(t, block, off);
            let mut data = Vec::with_capacity(t.len() + 8);
            push_add(&mut data, off, t);
            self.clear_vm(block, &pg)?;
            apply_ops(&mut pg, &data).map_err(|why| PgError::internal(format!("insert on block {block}: {why}")))?;
            self.log(crate::recovery::HEAP_INSERT, xid, &mut [LoggedPage { block, pg: &mut pg, will_init, data: &data }])?;
            let free = page::free_space(&pg);
            drop(pg);
            if give_back {
                fsm::record(self.pool, self.pins, self.rel, block, free)?;
            } else {
                fsm::clamp(self.pool, self.pins, self.rel, block, free)?;
            }
            return Ok((block, off));
        }
        Err(PgError::internal(format!("could not find a page with room for a tuple of {} bytes", t.len())))
    }

    /// Decides whether `me` may claim the version `t` (invariant 1) with a change that
    /// counts as a row lock of `mode` (`txn::rowlock`): None if it may, else the outcome to
    /// report. The caller holds the page's exclusive content lock.
    fn claim_check(&self, txns: &TxnManager, t: &[u8], tid: Tid, me: Xid, mode: RowLockMode) -> Option<ChangeOutcome> {
        if let Some(o) = Self::xmax_check(txns, t, tid, me) {
            return Some(o);
        }
        // Another transaction's row lock (`rowlock` invariant 1): wait for it to end.
        txns.row_locks.conflicting(self.rel, tid, tuple::xmin(t), me, mode).map(ChangeOutcome::Wait)
    }

    /// The version's xmax as a change or a row lock meets it: None when it is empty or
    /// aborted (the version is free), else the outcome to report.
    fn xmax_check(txns: &TxnManager, t: &[u8], tid: Tid, me: Xid) -> Option<ChangeOutcome> {
        let xmax = tuple::xmax(t);
        if xmax == INVALID_XID {
            return None;
        }
        if xmax == me {
            // Changed by this transaction: by this command (skip), or by an earlier one, in
            // which case the caller's snapshot did not see the row at all.
            return Some(ChangeOutcome::Gone);
        }
        match xid_state(txns, xmax) {
            XidState::Aborted => None,
            XidState::Running => Some(ChangeOutcome::Wait(xmax)),
            XidState::Committed => {
                let ctid = tuple::ctid(t);
                Some(if ctid == tid { ChangeOutcome::Deleted } else { ChangeOutcome::Updated(ctid, xmax) })
            }
        }
    }

    /// Locks the version at `tid` for `me` in `mode` (`SELECT ... FOR UPDATE`; `txn::rowlock`
    /// invariant 1): [`ChangeOutcome::Done`] when locked (or already held), else what a row
    /// change would meet there — a running transaction changing it or holding a conflicting
    /// lock (`Wait`), a committed update or delete, or a version gone.
    pub fn lock_row(&self, txns: &TxnManager, tid: Tid, me: Xid, mode: RowLockMode) -> Result<ChangeOutcome> {
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, tid.0, None)?;
        let pg = buf.lock_shared();
        if page::is_new(&pg) || tid.1 == 0 || tid.1 > page::max_offset(&pg) {
            return Ok(ChangeOutcome::Gone);
        }
        let Some(t) = page::item(&pg, tid.1) else { return Ok(ChangeOutcome::Gone) };
        if let Some(o) = Self::xmax_check(txns, t, tid, me) {
            return Ok(o);
        }
        use crate::txn::rowlock::Acquired;
        match txns.row_locks.acquire(self.rel, tid, tuple::xmin(t), me, mode) {
            Acquired::Locked => Ok(ChangeOutcome::Done(tid)),
            Acquired::Conflict(holder) => Ok(ChangeOutcome::Wait(holder)),
            Acquired::Full => Err(PgError::new(sqlstate::OUT_OF_MEMORY, "out of shared memory")
                .with_detail(format!("heapstore.max_row_locks ({}) row locks are held.", txns.row_locks.limit()))
                .with_hint("heapstore keeps row locks in memory: lock fewer rows in one transaction, or raise heapstore.max_row_locks.")),
        }
    }

    /// Deletes the version at `tid` for transaction `xid` at command `cid`.
    pub fn delete(&self, txns: &TxnManager, tid: Tid, xid: Xid, cid: CommandId) -> Result<ChangeOutcome> {
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, tid.0, None)?;
        let mut pg = buf.lock_exclusive();
        let Some(t) = (tid.1 >= 1 && tid.1 <= page::max_offset(&pg)).then(|| page::item(&pg, tid.1)).flatten() else {
            return Ok(ChangeOutcome::Gone);
        };
        if let Some(o) = self.claim_check(txns, t, tid, xid, RowLockMode::Update) {
            return Ok(o);
        }
        self.touch(tid.0);
        let mut data = Vec::with_capacity(24);
        push_set_xmax(&mut data, tid.1, xid, cid, tid);
        self.clear_vm(tid.0, &pg)?;
        apply_ops(&mut pg, &data).map_err(|why| PgError::internal(format!("delete on block {}: {why}", tid.0)))?;
        self.log(crate::recovery::HEAP_DELETE, xid, &mut [LoggedPage { block: tid.0, pg: &mut pg, will_init: false, data: &data }])?;
        Ok(ChangeOutcome::Done(tid))
    }

    /// Prunes the locked page `block` (`prune` invariants 3 and 4) if anything on it is dead to
    /// everyone. Returns how many versions it removed.
    pub fn prune_locked(&self, txns: &TxnManager, block: BlockNumber, pg: &mut PageMut<'_>) -> Result<usize> {
        self.prune_locked_at(txns, block, pg, txns.vacuum_horizon())
    }

    /// As [`HeapRel::prune_locked`] against a given horizon (VACUUM takes it once).
    pub fn prune_locked_at(&self, txns: &TxnManager, block: BlockNumber, pg: &mut PageMut<'_>, horizon: Xid) -> Result<usize> {
        let ops = super::prune::prune_ops(txns, pg, block, horizon);
        if ops.is_empty() {
            return Ok(0);
        }
        let mut data = Vec::with_capacity(64);
        ops.encode(&mut data);
        apply_ops(pg, &data).map_err(|why| PgError::internal(format!("prune of block {block}: {why}")))?;
        self.log(crate::recovery::HEAP_PRUNE, INVALID_XID, &mut [LoggedPage { block, pg, will_init: false, data: &data }])?;
        Ok(ops.versions_removed())
    }

    /// VACUUM's last step on a locked page: the LP_DEAD line pointers `offs`, whose index
    /// entries are gone, become unused (`prune` invariant 3), and with `all_visible` the page
    /// is marked all-visible (`page` invariant 5; the caller checked every tuple under this
    /// lock), logged as one HEAP_PRUNE record.
    pub fn set_unused_locked(&self, block: BlockNumber, pg: &mut PageMut<'_>, offs: &[u16], all_visible: bool) -> Result<()> {
        let mark = all_visible && page::flags(pg) & page::PD_ALL_VISIBLE == 0;
        if !offs.is_empty() || mark {
            let mut data = Vec::with_capacity(4 + 2 * offs.len());
            if !offs.is_empty() {
                push_set_unused(&mut data, offs);
            }
            if mark {
                data.push(OP_SET_ALL_VISIBLE);
            }
            apply_ops(pg, &data).map_err(|why| PgError::internal(format!("vacuum of block {block}: {why}")))?;
            self.log(crate::recovery::HEAP_PRUNE, INVALID_XID, &mut [LoggedPage { block, pg, will_init: false, data: &data }])?;
        }
        if all_visible {
            // After the record: the VM page carries its LSN (`access::vm` invariant 1). A page
            // marked before whose bit was lost (a torn VM page) gets it back here.
            debug_assert!(page::flags(pg) & page::PD_ALL_VISIBLE != 0);
            crate::access::vm::set(self.pool, self.pins, self.rel, block, page::lsn(pg))?;
        }
        Ok(())
    }

    /// Replaces the version at `tid` with `new` (a formed tuple) for `xid` at `cid`. `hot_ok`:
    /// no indexed column changed, so a new version on the same page is heap-only and needs no
    /// index entry (`prune` invariant 1); the outcome is then [`ChangeOutcome::DoneHot`].
    /// `keys_kept`: no column of a unique index changed, so the update waits only for row
    /// locks that conflict with FOR NO KEY UPDATE (`txn::rowlock`), else with FOR UPDATE.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &self,
        txns: &TxnManager,
        tid: Tid,
        new: &mut [u8],
        xid: Xid,
        cid: CommandId,
        hot_ok: bool,
        keys_kept: bool,
    ) -> Result<ChangeOutcome> {
        let mode = if keys_kept { RowLockMode::NoKeyUpdate } else { RowLockMode::Update };
        let bs = self.pool.block_size();
        if new.len() > super::max_tuple_size(bs) {
            return Err(super::row_too_big(new.len(), bs));
        }
        tuple::set_xmin(new, xid, cid);
        tuple::set_xmax(new, INVALID_XID, 0);
        tuple::set_infomask_bits(new, tuple::HEAP_HOT_UPDATED | tuple::HEAP_ONLY_TUPLE, false);
        let old_buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, tid.0, None)?;
        // First try: the new version fits on the old version's page (after pruning it).
        {
            let mut pg = old_buf.lock_exclusive();
            let Some(t) = (tid.1 >= 1 && tid.1 <= page::max_offset(&pg)).then(|| page::item(&pg, tid.1)).flatten() else {
                return Ok(ChangeOutcome::Gone);
            };
            if let Some(o) = self.claim_check(txns, t, tid, xid, mode) {
                return Ok(o);
            }
            let old_xmin = tuple::xmin(t);
            if page::free_space(&pg) < new.len() && super::prune::worth_pruning(&pg, txns.oldest_running()) {
                // The old version is live to us, so pruning keeps it (and its line pointer).
                self.prune_locked(txns, tid.0, &mut pg)?;
            }
            if page::free_space(&pg) >= new.len() {
                self.touch(tid.0);
                let off = place(&mut pg);
                tuple::set_ctid(new, tid.0, off);
                tuple::set_infomask_bits(new, tuple::HEAP_ONLY_TUPLE, hot_ok);
                let mut data = Vec::with_capacity(new.len() + 32);
                push_add(&mut data, off, new);
                push_set_xmax_as(&mut data, tid.1, xid, cid, (tid.0, off), hot_ok);
                self.clear_vm(tid.0, &pg)?;
                apply_ops(&mut pg, &data).map_err(|why| PgError::internal(format!("update on block {}: {why}", tid.0)))?;
                txns.row_locks.carry(self.rel, tid, old_xmin, (tid.0, off), xid);
                self.log(
                    crate::recovery::HEAP_UPDATE,
                    xid,
                    &mut [LoggedPage { block: tid.0, pg: &mut pg, will_init: false, data: &data }],
                )?;
                let free = page::free_space(&pg);
                drop(pg);
                fsm::clamp(self.pool, self.pins, self.rel, tid.0, free)?;
                return Ok(if hot_ok { ChangeOutcome::DoneHot((tid.0, off)) } else { ChangeOutcome::Done((tid.0, off)) });
            }
        }
        // Another page: find one with the old page unlocked, then lock both in block order
        // and check the old version again (invariant 2).
        for _ in 0..16 {
            let (new_buf, give_back) = self.page_for(new.len(), Some(tid.0))?;
            let nb = new_buf.block();
            debug_assert_ne!(nb, tid.0);
            let (mut old_pg, mut new_pg) = if nb < tid.0 {
                let n = new_buf.lock_exclusive();
                (old_buf.lock_exclusive(), n)
            } else {
                let o = old_buf.lock_exclusive();
                (o, new_buf.lock_exclusive())
            };
            let Some(t) = page::item(&old_pg, tid.1) else { return Ok(ChangeOutcome::Gone) };
            if let Some(o) = self.claim_check(txns, t, tid, xid, mode) {
                return Ok(o);
            }
            let old_xmin = tuple::xmin(t);
            let will_init = page::is_new(&new_pg);
            if will_init {
                page::init(&mut new_pg, 0);
            }
            if page::free_space(&new_pg) < new.len() {
                continue;
            }
            self.touch(tid.0);
            self.touch(nb);
            let off = place(&mut new_pg);
            tuple::set_ctid(new, nb, off);
            let mut new_data = Vec::with_capacity(new.len() + 8);
            push_add(&mut new_data, off, new);
            let mut old_data = Vec::with_capacity(24);
            push_set_xmax(&mut old_data, tid.1, xid, cid, (nb, off));
            self.clear_vm(nb, &new_pg)?;
            self.clear_vm(tid.0, &old_pg)?;
            apply_ops(&mut new_pg, &new_data).map_err(|why| PgError::internal(format!("update on block {nb}: {why}")))?;
            apply_ops(&mut old_pg, &old_data).map_err(|why| PgError::internal(format!("update on block {}: {why}", tid.0)))?;
            txns.row_locks.carry(self.rel, tid, old_xmin, (nb, off), xid);
            self.log(
                crate::recovery::HEAP_UPDATE,
                xid,
                &mut [
                    LoggedPage { block: nb, pg: &mut new_pg, will_init, data: &new_data },
                    LoggedPage { block: tid.0, pg: &mut old_pg, will_init: false, data: &old_data },
                ],
            )?;
            let free = page::free_space(&new_pg);
            drop(new_pg);
            drop(old_pg);
            if give_back {
                fsm::record(self.pool, self.pins, self.rel, nb, free)?;
            }
            return Ok(ChangeOutcome::Done((nb, off)));
        }
        Err(PgError::internal(format!("could not find a page with room for a tuple of {} bytes", new.len())))
    }

    /// Calls `f` with the version of the chain rooted at `tid` that `snap` sees (pin, shared
    /// lock, visibility, `f` copies out what it needs), and returns that version's own TID
    /// with `f`'s result. None if no member is visible (`prune` invariant 2: at most one is).
    #[inline]
    pub fn fetch<R>(&self, txns: &TxnManager, tid: Tid, snap: &Snapshot, f: impl FnOnce(&[u8]) -> R) -> Result<Option<(Tid, R)>> {
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, tid.0, None)?;
        let pg = buf.lock_shared();
        if page::is_new(&pg) {
            return Ok(None);
        }
        let Some(mut off) = super::prune::chain_start(&pg, tid.1) else { return Ok(None) };
        let mut vis = VisCache::default();
        for _ in 0..page::max_offset(&pg) {
            let t = page::item(&pg, off).expect("chain members are normal tuples");
            if txns.visible(snap, tuple::xmin(t), tuple::cmin(t), tuple::xmax(t), tuple::cmax(t), &mut vis) {
                return Ok(Some(((tid.0, off), f(t))));
            }
            match super::prune::next_member(&pg, tid.0, t) {
                Some(n) => off = n,
                None => break,
            }
        }
        Ok(None)
    }

    /// Calls `f` with every member of the chain rooted at `tid` (unique checks, index checks),
    /// under one shared lock. Nothing for an unused or dead line pointer.
    pub fn for_each_member(&self, tid: Tid, mut f: impl FnMut(Tid, &[u8])) -> Result<()> {
        if tid.0 >= self.pool.smgr().nblocks(self.rel, ForkNumber::Main)? {
            return Ok(());
        }
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, tid.0, None)?;
        let pg = buf.lock_shared();
        if page::is_new(&pg) {
            return Ok(());
        }
        let mut members = Vec::new();
        super::prune::chain_members(&pg, tid.0, tid.1, &mut members);
        for m in members {
            f((tid.0, m), page::item(&pg, m).expect("chain members are normal tuples"));
        }
        Ok(())
    }

    /// Calls `f` with the version at `tid` whatever its visibility (EvalPlanQual follows update
    /// chains to versions the statement's snapshot cannot see). None for a line pointer that
    /// holds no tuple.
    pub fn fetch_any<R>(&self, tid: Tid, f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        if tid.0 >= self.pool.smgr().nblocks(self.rel, ForkNumber::Main)? {
            return Ok(None);
        }
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, tid.0, None)?;
        let pg = buf.lock_shared();
        if page::is_new(&pg) || tid.1 == 0 || tid.1 > page::max_offset(&pg) {
            return Ok(None);
        }
        Ok(page::item(&pg, tid.1).map(f))
    }
}

/// The line pointer a new tuple takes: an unused one, else the next new one.
fn place(pg: &mut [u8]) -> u16 {
    page::find_unused(pg).unwrap_or_else(|| page::max_offset(pg) + 1)
}

/// Appends VACUUM's operation making LP_DEAD line pointers unused (their index entries gone).
pub fn push_set_unused(data: &mut Vec<u8>, offs: &[u16]) {
    data.push(OP_SET_UNUSED);
    data.extend_from_slice(&(offs.len() as u16).to_le_bytes());
    for o in offs {
        data.extend_from_slice(&o.to_le_bytes());
    }
}

/// Waits until transaction `xid` has ended, on its transaction lock (ShareLock against the
/// ExclusiveLock its owner holds from xid assignment to its end). A deadlock fails with 40P01.
pub fn wait_for_xid(
    lock_manager: &crate::lock::LockManager,
    txns: &TxnManager,
    locks: &mut crate::lock::SessionLocks,
    xid: Xid,
) -> Result<()> {
    use crate::lock::{LockMode, LockTag};
    // Bounded: the owner takes its lock right after its xid is assigned, so a waiter that got
    // the lock while the xid still runs only spins for that short window.
    for i in 0..100_000u32 {
        lock_manager.lock(locks, LockTag::Transaction(xid), LockMode::Share)?;
        lock_manager.unlock(locks, LockTag::Transaction(xid), LockMode::Share);
        if xid_state(txns, xid) != XidState::Running {
            return Ok(());
        }
        if i > 10 {
            std::thread::sleep(std::time::Duration::from_micros(100));
        } else {
            std::thread::yield_now();
        }
    }
    Err(PgError::new(sqlstate::INTERNAL_ERROR, format!("transaction {xid} did not end")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty page and a small tuple created by xid 9.
    fn page_and_tuple() -> (Vec<u8>, Vec<u8>) {
        let mut pg = vec![0u8; 8192];
        page::init(&mut pg, 0);
        let mut t = vec![0u8; tuple::HEADER_SIZE + 4];
        tuple::set_xmin(&mut t, 9, 0);
        (pg, t)
    }

    #[test]
    fn ops_apply_in_order() {
        let (mut pg, t) = page_and_tuple();
        let mut data = Vec::new();
        push_add(&mut data, 1, &t);
        push_add(&mut data, 2, &t);
        push_set_xmax(&mut data, 1, 11, 3, (0, 2));
        apply_ops(&mut pg, &data).unwrap();
        assert_eq!(page::max_offset(&pg), 2);
        let t1 = page::item(&pg, 1).unwrap();
        assert_eq!(tuple::xmax(t1), 11);
        assert_eq!(tuple::ctid(t1), (0, 2));
        assert!(apply_ops(&mut pg, &[9]).is_err());
        let mut bad = Vec::new();
        push_add(&mut bad, 7, &t);
        assert!(apply_ops(&mut pg, &bad).is_err(), "offsets must be consecutive");
    }

    #[test]
    fn every_tuple_change_clears_the_all_visible_mark() {
        let (mut pg, t) = page_and_tuple();
        let mut data = Vec::new();
        push_add(&mut data, 1, &t);
        apply_ops(&mut pg, &data).unwrap();
        let visible = |pg: &[u8]| page::flags(pg) & page::PD_ALL_VISIBLE != 0;
        let mark = |pg: &mut Vec<u8>| {
            apply_ops(pg, &[OP_SET_ALL_VISIBLE]).unwrap();
            assert!(visible(pg));
        };
        let mut changes: Vec<Vec<u8>> = Vec::new();
        let mut d = Vec::new();
        push_add(&mut d, 2, &t);
        changes.push(d);
        let mut d = Vec::new();
        push_set_xmax(&mut d, 1, 11, 0, (0, 1));
        changes.push(d);
        let mut d = Vec::new();
        push_set_xmax_as(&mut d, 1, 12, 0, (0, 2), true);
        changes.push(d);
        let mut d = Vec::new();
        push_set_xmin(&mut d, 2, INVALID_XID, 0);
        changes.push(d);
        for c in &changes {
            mark(&mut pg);
            apply_ops(&mut pg, c).unwrap();
            assert!(!visible(&pg), "operation {} left the page all-visible", c[0]);
        }
        // Making dead line pointers unused changes no tuple: the mark stays.
        let mut pr = crate::access::heap::prune::PruneOps::default();
        pr.dead.push(2);
        let mut d = Vec::new();
        pr.encode(&mut d);
        apply_ops(&mut pg, &d).unwrap();
        mark(&mut pg);
        let mut d = Vec::new();
        push_set_unused(&mut d, &[2]);
        apply_ops(&mut pg, &d).unwrap();
        assert!(visible(&pg));
        let mut fresh = vec![0u8; 8192];
        assert!(apply_ops(&mut fresh, &[OP_SET_ALL_VISIBLE]).is_err(), "a new page cannot be marked");
    }
}

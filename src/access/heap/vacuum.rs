//! VACUUM of a heap: prune every page (`prune`: HOT chains shortened, dead versions' storage
//! freed, their line pointers left LP_DEAD), then, after the caller has removed the index
//! entries naming the LP_DEAD line pointers, make those unused and record every page's free
//! space in the FSM so later inserts reuse it.
//!
//! ```text
//!  prune_all ──► (caller) BTree::bulk_delete on every index ──► set_unused
//!   every page pruned          entries naming LP_DEAD TIDs gone     LP_DEAD → LP_UNUSED,
//!   (exclusive lock, logged)                                        free space to the FSM
//! ```
//!
//! Invariants:
//! 1. A version is dead when its creator aborted, or its deleter committed with an xid below
//!    the horizon (`TxnManager::vacuum_horizon`: below every running xid and every snapshot
//!    still held). Both states are final, so a version found dead stays dead.
//! 2. Index entries are removed before LP_DEAD line pointers become unused, so no index entry
//!    ever names an unused line pointer that VACUUM freed; nothing but VACUUM's last step
//!    changes an LP_DEAD line pointer (inserts reuse only unused ones).
//! 3. Pages are pruned and changed under their exclusive content lock and logged before it is
//!    released (`prune` invariant 4).
//! 4. The caller holds ShareUpdateExclusiveLock on the table (one VACUUM per table at a time).
//! 5. A page is marked all-visible ([`page_all_visible`]) only under its exclusive lock, after
//!    every line pointer on it was checked against the horizon of the same VACUUM: a creator
//!    that committed below the horizon committed before every running transaction began and
//!    before every snapshot still held was taken, so every snapshot sees its tuple; any later
//!    change to the page clears the mark (`storage::page` invariant 5).
//! 6. A page the visibility map marks all-visible is not read (PostgreSQL skips them too): it
//!    has no dead version and no LP_DEAD line pointer, since the bit is cleared before any
//!    change (`access::vm` invariant 2). What a change racing with the read of the bit leaves
//!    behind, the next VACUUM finds.

use super::dml::{xid_state, HeapRel, Tid, XidState};
use super::tuple;
use crate::access::fsm;
use crate::error::Result;
use crate::storage::{page, BlockNumber, ForkNumber};
use crate::txn::{TxnManager, Xid, INVALID_XID};

/// Figures of one VACUUM of a heap.
#[derive(Clone, Debug, Default)]
pub struct VacuumStats {
    pub pages_scanned: u64,
    /// Pages the visibility map marked all-visible, not read (invariant 6).
    pub pages_skipped: u64,
    pub pages_pruned: u64,
    pub tuples_removed: u64,
    pub tuples_remaining: u64,
    /// Line pointers made unused after their index entries were removed.
    pub dead_line_pointers: u64,
    /// Pages left marked all-visible (`storage::page` invariant 5).
    pub pages_all_visible: u64,
    /// Chunks removed from the table's TOAST relation, and its pages scanned.
    pub toast_chunks_removed: u64,
    pub toast_pages: u64,
}

/// Whether a version with these header fields is dead to everyone (invariant 1).
pub fn is_dead(txns: &TxnManager, xmin: Xid, xmax: Xid, horizon: Xid) -> bool {
    if xid_state(txns, xmin) == XidState::Aborted {
        return true;
    }
    xmax != INVALID_XID && xmax < horizon && xid_state(txns, xmax) == XidState::Committed
}

/// Prunes every page of the heap against `horizon` but those the visibility map marks
/// all-visible (invariant 6); returns the LP_DEAD line pointers (whose index entries the
/// caller must remove), in TID order. `st.tuples_remaining` counts the pages read only.
pub fn prune_all(heap: &HeapRel<'_>, txns: &TxnManager, horizon: Xid, st: &mut VacuumStats) -> Result<Vec<Tid>> {
    let nblocks = heap.pool.smgr().nblocks(heap.rel, ForkNumber::Main)?;
    let mut dead = Vec::new();
    let mut vm = crate::access::vm::Reader::new(heap.pool, heap.pins, heap.rel);
    for block in 0..nblocks {
        if vm.is_set(block)? {
            st.pages_skipped += 1;
            continue;
        }
        let buf = heap.pool.read_buffer(heap.pins, heap.rel, ForkNumber::Main, block, None)?;
        let mut pg = buf.lock_exclusive();
        st.pages_scanned += 1;
        if page::is_new(&pg) {
            continue;
        }
        for off in 1..=page::max_offset(&pg) {
            if let Some(t) = page::item(&pg, off) {
                if t.len() < tuple::HEADER_SIZE {
                    return Err(super::corrupt_tuple(heap.pool, heap.rel, block, off));
                }
            }
        }
        let removed = heap.prune_locked_at(txns, block, &mut pg, horizon)?;
        if removed > 0 {
            st.pages_pruned += 1;
            st.tuples_removed += removed as u64;
        }
        for off in 1..=page::max_offset(&pg) {
            match page::item_id(&pg, off).0 {
                page::LP_DEAD => dead.push((block, off)),
                page::LP_NORMAL => st.tuples_remaining += 1,
                _ => {}
            }
        }
    }
    Ok(dead)
}

/// Whether every tuple on the locked page is visible to every snapshot now and later once the
/// LP_DEAD line pointers `dying` are unused (invariant 5): each normal tuple's creator
/// committed below `horizon` (so before every running transaction and every snapshot's xmin)
/// and its deleter, if any, aborted.
pub fn page_all_visible(txns: &TxnManager, pg: &[u8], horizon: Xid, dying: &[u16]) -> bool {
    (1..=page::max_offset(pg)).all(|off| match page::item_id(pg, off).0 {
        page::LP_NORMAL => {
            let Some(t) = page::item(pg, off).filter(|t| t.len() >= tuple::HEADER_SIZE) else { return false };
            let (xmin, xmax) = (tuple::xmin(t), tuple::xmax(t));
            xmin != INVALID_XID
                && xmin < horizon
                && xid_state(txns, xmin) == XidState::Committed
                && (xmax == INVALID_XID || xid_state(txns, xmax) == XidState::Aborted)
        }
        page::LP_DEAD => dying.contains(&off),
        _ => true,
    })
}

/// Makes the LP_DEAD line pointers `dead` unused (their index entries already removed:
/// invariant 2), marks the pages whose every tuple all snapshots see all-visible (against
/// `horizon`, the one `prune_all` used), and records every page's free space.
pub fn set_unused(heap: &HeapRel<'_>, txns: &TxnManager, horizon: Xid, dead: &[Tid], st: &mut VacuumStats) -> Result<()> {
    let nblocks = heap.pool.smgr().nblocks(heap.rel, ForkNumber::Main)?;
    let mut fsm_entries: Vec<(BlockNumber, usize)> = Vec::with_capacity(nblocks as usize);
    let mut i = 0;
    let mut vm = crate::access::vm::Reader::new(heap.pool, heap.pins, heap.rel);
    for block in 0..nblocks {
        let start = i;
        while i < dead.len() && dead[i].0 == block {
            i += 1;
        }
        if start == i && vm.is_set(block)? {
            // Marked all-visible, so nothing on it changed since: its free space is as the
            // map last heard (invariant 6).
            st.pages_all_visible += 1;
            continue;
        }
        let buf = heap.pool.read_buffer(heap.pins, heap.rel, ForkNumber::Main, block, None)?;
        let mut pg = buf.lock_exclusive();
        if page::is_new(&pg) {
            fsm_entries.push((block, heap.pool.block_size() - page::PAGE_HEADER_SIZE));
            continue;
        }
        let offs: Vec<u16> = dead[start..i].iter().map(|t| t.1).collect();
        debug_assert!(offs.iter().all(|&o| page::item_id(&pg, o).0 == page::LP_DEAD), "invariant 2: only VACUUM changes LP_DEAD");
        let all_visible = page_all_visible(txns, &pg, horizon, &offs);
        heap.set_unused_locked(block, &mut pg, &offs, all_visible)?;
        st.dead_line_pointers += offs.len() as u64;
        st.pages_all_visible += u64::from(all_visible);
        fsm_entries.push((block, page::free_space(&pg)));
    }
    fsm::record_many(heap.pool, heap.pins, heap.rel, &mut fsm_entries)?;
    Ok(())
}

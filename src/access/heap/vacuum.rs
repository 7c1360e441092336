//! VACUUM of a heap: find the versions no snapshot can see any more, and after the caller has
//! removed their index entries, free their line pointers, compact their pages and record the
//! pages' free space in the FSM so later inserts reuse it.
//!
//! ```text
//!  collect_dead ──► (caller) BTree::bulk_delete on every index ──► prune_pages
//!   heap pages,        entries pointing at dead TIDs gone          LP_UNUSED, compact,
//!   shared locks                                                   WAL page image, FSM
//! ```
//!
//! Invariants:
//! 1. A version is dead when its creator aborted, or its deleter committed with an xid below
//!    the horizon (`TxnManager::vacuum_horizon`: below every running xid and every snapshot
//!    still held). Both states are final, so a version found dead stays dead.
//! 2. Index entries are removed before the line pointers are freed, so no index entry ever
//!    points at an unused line pointer; line pointers are never reused (inserts append), so a
//!    TID an index scan collected before VACUUM never names a different row afterwards.
//! 3. A page is pruned and compacted under its exclusive content lock, and logged as one
//!    full-page image (HEAP_PAGE_IMAGE) before the lock is released. Readers copy tuples under
//!    the content lock (heap `dml` invariant 4), so moving tuple data is safe.
//! 4. The caller holds ShareUpdateExclusiveLock on the table (one VACUUM per table at a time).

use super::dml::{xid_state, Tid, XidState};
use super::tuple;
use crate::access::fsm;
use crate::buffer::{BufferPool, Pins};
use crate::error::Result;
use crate::storage::{page, BlockNumber, ForkNumber, RelFileNumber};
use crate::txn::{TxnManager, Xid, INVALID_XID};

/// Figures of one VACUUM of a heap.
#[derive(Clone, Debug, Default)]
pub struct VacuumStats {
    pub pages_scanned: u64,
    pub pages_pruned: u64,
    pub tuples_removed: u64,
    pub tuples_remaining: u64,
}

/// Whether a version with these header fields is dead to everyone (invariant 1).
pub fn is_dead(txns: &TxnManager, xmin: Xid, xmax: Xid, horizon: Xid) -> bool {
    if xid_state(txns, xmin) == XidState::Aborted {
        return true;
    }
    xmax != INVALID_XID && xmax < horizon && xid_state(txns, xmax) == XidState::Committed
}

/// The TIDs of dead versions, in TID order.
pub fn collect_dead(
    pool: &BufferPool,
    pins: &Pins,
    txns: &TxnManager,
    rel: RelFileNumber,
    horizon: Xid,
    st: &mut VacuumStats,
) -> Result<Vec<Tid>> {
    let nblocks = pool.smgr().nblocks(rel, ForkNumber::Main)?;
    let mut dead = Vec::new();
    let mut copy = vec![0u8; pool.block_size()];
    for block in 0..nblocks {
        {
            let buf = pool.read_buffer(pins, rel, ForkNumber::Main, block, None)?;
            let pg = buf.lock_shared();
            copy.copy_from_slice(&pg);
        }
        st.pages_scanned += 1;
        if page::is_new(&copy) {
            continue;
        }
        for off in 1..=page::max_offset(&copy) {
            let Some(t) = page::item(&copy, off) else { continue };
            if t.len() < tuple::HEADER_SIZE {
                return Err(super::corrupt_tuple(pool, rel, block, off));
            }
            if is_dead(txns, tuple::xmin(t), tuple::xmax(t), horizon) {
                dead.push((block, off));
            } else {
                st.tuples_remaining += 1;
            }
        }
    }
    Ok(dead)
}

/// Rebuilds a page without the items at `dead` offsets: their line pointers become unused,
/// the other items keep their offsets, and tuple data is packed at the page's end.
pub fn compact(pg: &mut [u8], dead: &[u16]) {
    let mut out = vec![0u8; pg.len()];
    page::init(&mut out, 0);
    for off in 1..=page::max_offset(pg) {
        let keep = if dead.contains(&off) { None } else { page::item(pg, off) };
        let got = page::add_item(&mut out, keep.unwrap_or(&[])).expect("a compacted page holds what the page held");
        debug_assert_eq!(got, off);
        if keep.is_none() {
            page::set_item_id(&mut out, off, page::LP_UNUSED, 0, 0);
        }
    }
    page::set_lsn(&mut out, page::lsn(pg));
    page::set_flags(&mut out, page::flags(pg));
    pg.copy_from_slice(&out);
}

/// Frees the dead TIDs (index entries already removed: invariant 2), compacts their pages,
/// logs each as a full-page image when `wal` is given, and records every page's free space.
pub fn prune_pages(
    pool: &BufferPool,
    pins: &Pins,
    rel: RelFileNumber,
    wal: Option<&crate::wal::Wal>,
    dead: &[Tid],
    st: &mut VacuumStats,
) -> Result<()> {
    let nblocks = pool.smgr().nblocks(rel, ForkNumber::Main)?;
    let mut fsm_entries: Vec<(BlockNumber, usize)> = Vec::with_capacity(nblocks as usize);
    let mut i = 0;
    let mut rec = crate::wal::RecordBuilder::new();
    for block in 0..nblocks {
        let start = i;
        while i < dead.len() && dead[i].0 == block {
            i += 1;
        }
        let offs: Vec<u16> = dead[start..i].iter().map(|t| t.1).collect();
        let buf = pool.read_buffer(pins, rel, ForkNumber::Main, block, None)?;
        let mut pg = buf.lock_exclusive();
        if page::is_new(&pg) {
            fsm_entries.push((block, pool.block_size() - page::PAGE_HEADER_SIZE));
            continue;
        }
        if !offs.is_empty() {
            use crate::buffer::critical::{log_page_changes, Logged, PageChange, RecordKind};
            compact(&mut pg, &offs);
            let kind = RecordKind { rmid: crate::recovery::RM_HEAP, info: crate::recovery::HEAP_PAGE_IMAGE, xid: INVALID_XID, main: &[] };
            let change = PageChange { pg: &mut pg, rel, fork: ForkNumber::Main, block, logged: Logged::Image { will_init: false } };
            log_page_changes(wal, true, kind, &mut [change], &mut rec)?;
            st.pages_pruned += 1;
            st.tuples_removed += offs.len() as u64;
        }
        fsm_entries.push((block, page::free_space(&pg)));
    }
    fsm::record_many(pool, pins, rel, &mut fsm_entries)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_keeps_offsets_and_frees_space() {
        let mut pg = vec![0u8; 8192];
        page::init(&mut pg, 0);
        for i in 0..5u8 {
            let mut t = vec![i; tuple::HEADER_SIZE + 100];
            tuple::set_xmin(&mut t, 10 + u64::from(i), 0);
            page::add_item(&mut pg, &t).unwrap();
        }
        let before = page::free_space(&pg);
        compact(&mut pg, &[2, 4]);
        assert_eq!(page::max_offset(&pg), 5);
        assert!(page::item(&pg, 2).is_none() && page::item(&pg, 4).is_none());
        assert_eq!(tuple::xmin(page::item(&pg, 5).unwrap()), 14);
        assert_eq!(page::item(&pg, 3).unwrap()[40], 2);
        assert_eq!(page::free_space(&pg), before + 2 * (tuple::HEADER_SIZE + 100));
    }
}

//! VACUUM's pass over an index (PostgreSQL's btbulkdelete): every leaf, left to right along the
//! right links, each under its exclusive lock in turn, loses the entries whose heap TID the
//! caller says is dead; each changed leaf is logged as one BTREE_VACUUM record.
//!
//! Walking the right links (not the blocks in file order, as PostgreSQL does) needs no cycle ids:
//! a leaf that splits after it was vacuumed moves only vacuumed entries (and new ones, which
//! never point at dead TIDs: the heap reuses a dead TID only after the index pass) into the new
//! page to its right, and the walk goes on from the right link read under the lock.

use super::page::{self, ScanKey, TidBound};
use super::redo::BTREE_VACUUM;
use super::search::{descend, MOVE_RIGHT_MAX};
use super::{BTree, Tid};
use crate::buffer::PageMut;
use crate::error::Result;
use crate::recovery::RM_BTREE;
use crate::storage::{page as spage, BlockNumber, ForkNumber};

pub(crate) fn bulk_delete(t: &BTree<'_>, dead: &mut dyn FnMut(Tid) -> bool) -> Result<u64> {
    let sk = ScanKey { key: b"", tid: TidBound::NegInf };
    let Some(mut buf) = descend(t, &sk, None, 0)? else { return Ok(0) };
    let mut removed = 0u64;
    for _ in 0..MOVE_RIGHT_MAX {
        let block = buf.block();
        let right = {
            let mut pg = buf.lock_exclusive();
            t.check_page(&pg, block)?;
            let o = page::opaque(&pg);
            let offs: Vec<u16> =
                (o.first_data()..=spage::max_offset(&pg)).filter(|&off| dead(page::item_tid(page::get(&pg, off)))).collect();
            if !offs.is_empty() {
                delete_items(t, block, &mut pg, &offs)?;
                removed += offs.len() as u64;
            }
            o.right
        };
        if right == page::P_NONE {
            return Ok(removed);
        }
        buf = t.read(right)?;
    }
    Err(t.corrupt_page(buf.block(), "right links form a cycle"))
}

/// Removes the items at `offs` (ascending) from a locked leaf and logs it (critical section).
fn delete_items(t: &BTree<'_>, block: BlockNumber, pg: &mut PageMut<'_>, offs: &[u16]) -> Result<()> {
    use crate::buffer::critical::{log_page_changes, Logged, PageChange, RecordKind};
    debug_assert!(offs.windows(2).all(|w| w[0] < w[1]));
    page::retain_items(pg, |off: u16, _: &[u8]| offs.binary_search(&off).is_err());
    let data: Vec<u8> = if t.wal.is_some() { offs.iter().flat_map(|o| o.to_le_bytes()).collect() } else { Vec::new() };
    let kind = RecordKind { rmid: RM_BTREE, info: BTREE_VACUUM, xid: t.xid, main: &[] };
    let change = PageChange { pg, rel: t.rel, fork: ForkNumber::Main, block, logged: Logged::Delta { data: &data, will_init: false } };
    log_page_changes(t.wal, t.full_page_writes, kind, &mut [change], &mut crate::wal::RecordBuilder::new())?;
    Ok(())
}

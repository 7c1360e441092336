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

/// Removes the items at `offs` (ascending) from a locked leaf, WAL-logged first.
fn delete_items(t: &BTree<'_>, block: BlockNumber, pg: &mut PageMut<'_>, offs: &[u16]) -> Result<()> {
    debug_assert!(offs.windows(2).all(|w| w[0] < w[1]));
    let keep = |off: u16, _: &[u8]| offs.binary_search(&off).is_err();
    if let Some(wal) = t.wal {
        let data: Vec<u8> = offs.iter().flat_map(|o| o.to_le_bytes()).collect();
        let mut rec = crate::wal::RecordBuilder::new();
        loop {
            let redo = wal.redo_point();
            let image = t.full_page_writes && spage::lsn(pg) <= redo;
            rec.begin(RM_BTREE, BTREE_VACUUM, t.xid);
            let new_image = image.then(|| {
                let mut copy = pg.to_vec();
                page::retain_items(&mut copy, keep);
                copy
            });
            match &new_image {
                Some(img) => {
                    let (l, u) = (spage::lower(img), spage::upper(img));
                    rec.add_block(t.rel.0, ForkNumber::Main as u8, block, Some((img, l as u16, (u - l) as u16)), &[], false);
                }
                None => {
                    rec.add_block(t.rel.0, ForkNumber::Main as u8, block, None, &data, false);
                }
            }
            if let Some((_, end)) = wal.insert_if_redo(&mut rec, redo)? {
                match new_image {
                    Some(img) => pg.copy_from_slice(&img),
                    None => {
                        page::retain_items(pg, keep);
                    }
                }
                spage::set_lsn(pg, end);
                pg.mark_dirty();
                return Ok(());
            }
        }
    }
    page::retain_items(pg, keep);
    pg.mark_dirty();
    Ok(())
}

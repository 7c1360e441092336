//! The B-tree's WAL records (resource manager `RM_BTREE`) and their redo.
//!
//! | info | blocks | block data | redo |
//! |---|---|---|---|
//! | INSERT | the page | `offset u16, item` — or a full-page image at the page's first change after a checkpoint | add the item at its offset, shifting later line pointers |
//! | SPLIT | every page the split cascade changed: left half, new right page, old right sibling (left link), each parent that got a downlink or split, and for a root split the new root and the meta page | full images only (WILL_INIT) | restore the images |
//! | NEWPAGES | pages written whole: `create_empty`, `build` (PostgreSQL's log_newpage) | full images only (WILL_INIT) | restore the images |
//! | VACUUM | the leaf | the deleted offsets, `u16` each, ascending — or a full-page image | remove those items |
//!
//! Invariant 1 of `recovery` holds: a block change without an image is skipped when the page's
//! LSN is at or past the record's end. A SPLIT is one record, so redo never sees half a split.

use super::page;
use crate::error::{sqlstate, PgError, Result};
use crate::recovery::Recovery;
use crate::storage::{page as spage, ForkNumber, RelFileNumber};
use crate::wal::record::DecodedRecord;

pub const BTREE_INSERT: u8 = 1;
pub const BTREE_SPLIT: u8 = 2;
pub const BTREE_NEWPAGES: u8 = 3;
pub const BTREE_VACUUM: u8 = 4;

fn corrupt(rec: &DecodedRecord<'_>, why: &str) -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, format!("invalid B-tree WAL record at {}: {why}", crate::wal::lsn_str(rec.lsn())))
}

/// Replays one RM_BTREE record.
pub fn redo(r: &Recovery<'_>, rec: &DecodedRecord<'_>) -> Result<()> {
    let info = rec.info();
    if !matches!(info, BTREE_INSERT | BTREE_SPLIT | BTREE_NEWPAGES | BTREE_VACUUM) {
        return Err(corrupt(rec, &format!("unknown info {info}")));
    }
    for b in rec.blocks() {
        let rel = RelFileNumber(b.rel);
        if b.fork != ForkNumber::Main as u8 {
            return Err(corrupt(rec, "B-tree record for a fork other than main"));
        }
        r.ensure_block(rel, ForkNumber::Main, b.block)?;
        if let Some(img) = b.image() {
            let buf = r.pool.read_buffer_for_overwrite(r.pins, rel, ForkNumber::Main, b.block)?;
            let mut pg = buf.lock_exclusive();
            img.restore_into(&mut pg);
            spage::set_lsn(&mut pg, rec.end_lsn());
            pg.mark_dirty();
            continue;
        }
        if matches!(info, BTREE_SPLIT | BTREE_NEWPAGES) {
            return Err(corrupt(rec, "split or new-page block without an image"));
        }
        let buf = r.pool.read_buffer(r.pins, rel, ForkNumber::Main, b.block, None)?;
        let mut pg = buf.lock_exclusive();
        if !spage::is_new(&pg) && spage::lsn(&pg) >= rec.end_lsn() {
            continue; // already on disk
        }
        if !page::looks_like_btree(&pg) {
            return Err(corrupt(rec, &format!("block {} of base/{} is not an initialized B-tree page", b.block, b.rel)));
        }
        let data = b.data();
        match info {
            BTREE_INSERT => {
                if data.len() < 2 + page::ITEM_HEADER {
                    return Err(corrupt(rec, "insert data too short"));
                }
                let off = u16::from_le_bytes([data[0], data[1]]);
                if off == 0 || off > spage::max_offset(&pg) + 1 {
                    return Err(corrupt(rec, &format!("insert at offset {off} of a page with {} items", spage::max_offset(&pg))));
                }
                if !page::insert_at(&mut pg, off, &data[2..]) {
                    return Err(corrupt(rec, "item does not fit its page"));
                }
            }
            _ => {
                if data.len() % 2 != 0 {
                    return Err(corrupt(rec, "odd vacuum data length"));
                }
                let offs: Vec<u16> = data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
                page::retain_items(&mut pg, |off, _| offs.binary_search(&off).is_err());
            }
        }
        spage::set_lsn(&mut pg, rec.end_lsn());
        pg.mark_dirty();
    }
    Ok(())
}

//! What heapstore writes to the WAL, and crash recovery: replaying it from the last checkpoint's
//! REDO pointer.
//!
//! Resource managers and their records:
//!
//! | rmgr | info | record | redo |
//! |---|---|---|---|
//! | XLOG | CHECKPOINT | main: redo LSN, next xid, shutdown flag | nothing (the control file points at it) |
//! | XACT | COMMIT / ABORT | xid in the header | commit log; applies the transaction's catalog change |
//! | HEAP | MULTI_INSERT | one block: the tuples placed on one page (`offset u16, len u32, bytes`…), WILL_INIT if the insert initialized the page; or its full-page image | restore the image, or (re)initialize and add the tuples |
//! | HEAP | INSERT / DELETE / UPDATE | per block: operations (add tuple at offset; set xmax, cmax and ctid of an offset), see `access::heap::dml`; or the block's full-page image | restore the image, or apply the operations in order |
//! | HEAP | PAGE_IMAGE | one block's full-page image (a page rewritten whole; a sequence's page, `access::sequence`) | restore the image |
//! | HEAP | PRUNE | a page pruned (redirect / dead / unused line pointers, then compaction), or VACUUM's LP_DEAD line pointers made unused | the same operations (`access::heap::dml::apply_ops`) |
//! | BTREE | INSERT / SPLIT / NEWPAGES / VACUUM | see `access::btree::redo` | restore images, add or remove index items |
//! | CATALOG | DDL | main: the transaction's catalog change (JSON) | kept until the transaction's COMMIT or ABORT |
//!
//! Invariants:
//! 1. Redo of a block change is skipped when the page's LSN is already at or past the record's
//!    end (the change reached disk before the crash): replay is idempotent.
//! 2. A block whose record carries a full-page image or initializes the page is never read from
//!    disk during redo (it may be torn); it is rebuilt from the record.
//! 3. A catalog change takes effect in recovery only when its transaction's COMMIT record is
//!    replayed, exactly as at run time it takes effect only at commit.
//! 4. Recovery is single-threaded and runs before any session exists.

use crate::buffer::{BufferPool, Pins};
use crate::catalog::{Catalog, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::storage::{page, BlockNumber, ForkNumber, RelFileNumber, Smgr};
use crate::txn::{TxnManager, Xid};
use crate::wal::record::DecodedRecord;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

pub const RM_XLOG: u8 = 1;
pub const RM_XACT: u8 = 2;
pub const RM_HEAP: u8 = 3;
pub const RM_CATALOG: u8 = 4;
pub const RM_BTREE: u8 = 5;

pub const XLOG_CHECKPOINT: u8 = 1;
pub const XACT_COMMIT: u8 = 1;
pub const XACT_ABORT: u8 = 2;
pub const HEAP_MULTI_INSERT: u8 = 1;
/// One tuple added (`access::heap::dml`).
pub const HEAP_INSERT: u8 = 2;
/// A tuple's xmax set.
pub const HEAP_DELETE: u8 = 3;
/// A new version added and the old one's xmax and ctid set (one or two blocks).
pub const HEAP_UPDATE: u8 = 4;
/// A page rewritten whole (VACUUM's pruning and compaction): always a full-page image.
pub const HEAP_PAGE_IMAGE: u8 = 5;
/// ROLLBACK TO SAVEPOINT: a page's tuples created after the savepoint get xmin = invalid (dead
/// to everyone), and those deleted after it get their xmax cleared (`access::heap::dml`); also
/// INSERT ... ON CONFLICT's super-delete of the version it just inserted.
pub const HEAP_UNDO: u8 = 6;
/// A page pruned: HOT chains shortened, dead versions' storage freed (`access::heap::prune`),
/// or VACUUM's dead line pointers made unused.
pub const HEAP_PRUNE: u8 = 7;
pub const CATALOG_DDL: u8 = 1;

/// A transaction's catalog change, as logged before its commit record.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DdlChange {
    pub creates: Vec<Table>,
    pub drops: Vec<String>,
    pub replaces: Vec<Table>,
    /// Files to delete once the transaction commits (dropped or truncated relations).
    pub dead_files: Vec<RelFileNumber>,
}

/// The checkpoint record's main data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointData {
    pub redo: u64,
    pub next_xid: u64,
    pub shutdown: bool,
}

impl CheckpointData {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(17);
        v.extend_from_slice(&self.redo.to_le_bytes());
        v.extend_from_slice(&self.next_xid.to_le_bytes());
        v.push(self.shutdown as u8);
        v
    }

    pub fn decode(b: &[u8]) -> Option<CheckpointData> {
        if b.len() < 17 {
            return None;
        }
        Some(CheckpointData {
            redo: u64::from_le_bytes(b[0..8].try_into().ok()?),
            next_xid: u64::from_le_bytes(b[8..16].try_into().ok()?),
            shutdown: b[16] != 0,
        })
    }
}

/// Bytes of a heap tuple header that redo rebuilds instead of reading from the WAL: xmin (the
/// record's xid), xmax (none), cmin/cmax (0: after a crash only the commit matters) and ctid
/// (the block and offset). Like PostgreSQL's xl_multi_insert_tuple, a logged tuple carries
/// only what follows: infomask, natts, hoff, null bitmap and data.
const LOGGED_HEADER_SKIP: usize = 30;

/// Appends one tuple to a MULTI_INSERT record's block data: `offset u16, length u16`, then the
/// tuple from its infomask on.
pub fn push_tuple(data: &mut Vec<u8>, off: u16, tuple: &[u8]) {
    debug_assert!(tuple.len() >= crate::access::heap::tuple::HEADER_SIZE && tuple.len() <= u16::MAX as usize);
    data.extend_from_slice(&off.to_le_bytes());
    data.extend_from_slice(&(tuple.len() as u16).to_le_bytes());
    data.extend_from_slice(&tuple[LOGGED_HEADER_SKIP..]);
}

/// State of one recovery run.
pub struct Recovery<'a> {
    pub pool: &'a BufferPool,
    pub pins: &'a Pins,
    pub smgr: &'a Arc<Smgr>,
    pub txns: &'a TxnManager,
    pub catalog: &'a Catalog,
    pending_ddl: HashMap<Xid, DdlChange>,
    pub records: u64,
    pub bytes: u64,
    pub max_xid: Xid,
}

fn corrupt(rec: &DecodedRecord<'_>, why: &str) -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, format!("invalid WAL record at {}: {why}", crate::wal::lsn_str(rec.lsn())))
}

impl<'a> Recovery<'a> {
    pub fn new(pool: &'a BufferPool, pins: &'a Pins, smgr: &'a Arc<Smgr>, txns: &'a TxnManager, catalog: &'a Catalog) -> Recovery<'a> {
        Recovery { pool, pins, smgr, txns, catalog, pending_ddl: HashMap::new(), records: 0, bytes: 0, max_xid: 0 }
    }

    /// Replays one record.
    pub fn redo(&mut self, rec: &DecodedRecord<'_>) -> Result<()> {
        self.records += 1;
        self.bytes += rec.total_len() as u64;
        self.max_xid = self.max_xid.max(rec.xid());
        match (rec.rmgr(), rec.info()) {
            (RM_XLOG, XLOG_CHECKPOINT) => Ok(()),
            (RM_XACT, XACT_COMMIT) => self.redo_commit(rec.xid()),
            (RM_XACT, XACT_ABORT) => {
                self.txns.set_status_for_redo(rec.xid(), false);
                self.pending_ddl.remove(&rec.xid());
                Ok(())
            }
            (RM_HEAP, HEAP_MULTI_INSERT) => self.redo_multi_insert(rec),
            (RM_HEAP, HEAP_INSERT | HEAP_DELETE | HEAP_UPDATE | HEAP_PAGE_IMAGE | HEAP_UNDO | HEAP_PRUNE) => self.redo_heap_ops(rec),
            (RM_BTREE, _) => crate::access::btree::redo::redo(self, rec),
            (RM_CATALOG, CATALOG_DDL) => {
                let ch: DdlChange =
                    serde_json::from_slice(rec.main_data()).map_err(|e| corrupt(rec, &format!("bad catalog change: {e}")))?;
                self.pending_ddl.insert(rec.xid(), ch);
                Ok(())
            }
            (r, i) => Err(corrupt(rec, &format!("unknown resource manager {r} / info {i}"))),
        }
    }

    fn redo_commit(&mut self, xid: Xid) -> Result<()> {
        self.txns.set_status_for_redo(xid, true);
        if let Some(ch) = self.pending_ddl.remove(&xid) {
            apply_ddl(self.catalog, self.pool, self.smgr, &ch)?;
        }
        Ok(())
    }

    fn redo_multi_insert(&mut self, rec: &DecodedRecord<'_>) -> Result<()> {
        for b in rec.blocks() {
            let rel = RelFileNumber(b.rel);
            let fork = if b.fork == ForkNumber::Fsm as u8 { ForkNumber::Fsm } else { ForkNumber::Main };
            self.ensure_block(rel, fork, b.block)?;
            let overwrite = b.image().is_some() || b.will_init();
            let buf = if overwrite {
                self.pool.read_buffer_for_overwrite(self.pins, rel, fork, b.block)?
            } else {
                self.pool.read_buffer(self.pins, rel, fork, b.block, None)?
            };
            let mut pg = buf.lock_exclusive();
            if !overwrite && !page::is_new(&pg) && page::lsn(&pg) >= rec.end_lsn() {
                // Already on disk (invariant 1); the maps may still be older than the page.
                let free = page::free_space(&pg);
                if fork == ForkNumber::Main {
                    self.sync_vm(rel, b.block, &pg)?;
                    drop(pg);
                    crate::access::fsm::clamp(self.pool, self.pins, rel, b.block, free)?;
                }
                continue;
            }
            if let Some(img) = b.image() {
                img.restore_into(&mut pg);
            } else {
                if b.will_init() || page::is_new(&pg) {
                    page::init(&mut pg, 0);
                }
                apply_tuples(&mut pg, b.block, rec.xid(), b.data()).map_err(|why| corrupt(rec, why))?;
            }
            page::set_lsn(&mut pg, rec.end_lsn());
            pg.mark_dirty();
            let free = page::free_space(&pg);
            if fork == ForkNumber::Main {
                self.sync_vm(rel, b.block, &pg)?;
                drop(pg);
                crate::access::fsm::clamp(self.pool, self.pins, rel, b.block, free)?;
            }
        }
        Ok(())
    }

    /// Redo of the single-row records and VACUUM's page images: per block, the image or the
    /// operations (`access::heap::dml::apply_ops`), skipped when the page is already past the
    /// record (invariant 1).
    fn redo_heap_ops(&mut self, rec: &DecodedRecord<'_>) -> Result<()> {
        for b in rec.blocks() {
            let rel = RelFileNumber(b.rel);
            self.ensure_block(rel, ForkNumber::Main, b.block)?;
            let overwrite = b.image().is_some() || b.will_init();
            let buf = if overwrite {
                self.pool.read_buffer_for_overwrite(self.pins, rel, ForkNumber::Main, b.block)?
            } else {
                self.pool.read_buffer(self.pins, rel, ForkNumber::Main, b.block, None)?
            };
            let mut pg = buf.lock_exclusive();
            if !overwrite && !page::is_new(&pg) && page::lsn(&pg) >= rec.end_lsn() {
                let free = page::free_space(&pg);
                self.sync_vm(rel, b.block, &pg)?;
                drop(pg);
                crate::access::fsm::clamp(self.pool, self.pins, rel, b.block, free)?;
                continue;
            }
            if let Some(img) = b.image() {
                img.restore_into(&mut pg);
            } else {
                if b.will_init() || page::is_new(&pg) {
                    page::init(&mut pg, 0);
                }
                crate::access::heap::dml::apply_ops(&mut pg, b.data()).map_err(|why| corrupt(rec, why))?;
            }
            page::set_lsn(&mut pg, rec.end_lsn());
            pg.mark_dirty();
            // The map is not logged: after a crash it may promise this page more than redo
            // left on it.
            let free = page::free_space(&pg);
            self.sync_vm(rel, b.block, &pg)?;
            drop(pg);
            crate::access::fsm::clamp(self.pool, self.pins, rel, b.block, free)?;
        }
        Ok(())
    }

    /// Clears the visibility map bit of a heap page just redone (or found already past the
    /// record) whose all-visible mark is clear (`access::vm` invariant 2): clears made before
    /// a crash are not logged, so they are made again here. Bits are not set in redo (a bit
    /// lost is only a heap visit until the next VACUUM sets it again). The page is locked
    /// exclusively.
    fn sync_vm(&self, rel: RelFileNumber, block: BlockNumber, pg: &[u8]) -> Result<()> {
        if page::flags(pg) & page::PD_ALL_VISIBLE == 0 {
            crate::access::vm::clear(self.pool, self.pins, rel, block)?;
        }
        Ok(())
    }

    /// Makes sure the fork has `block` (files may be shorter after a crash: extension is not
    /// WAL-logged, as in PostgreSQL).
    pub(crate) fn ensure_block(&self, rel: RelFileNumber, fork: ForkNumber, block: BlockNumber) -> Result<()> {
        if !self.smgr.exists(rel, fork) {
            self.smgr.create(rel, fork)?;
        }
        loop {
            let n = self.smgr.nblocks(rel, fork)?;
            if block < n {
                return Ok(());
            }
            drop(self.pool.extend_by(self.pins, rel, fork, (block + 1 - n).min(crate::buffer::pool::MAX_EXTEND_BY), None)?);
        }
    }

    /// Transactions whose DDL was logged but that never committed: nothing to do (their files
    /// are orphans, removed at start-up).
    pub fn finish(self) -> (u64, u64, Xid) {
        (self.records, self.bytes, self.max_xid)
    }
}

/// Adds the tuples of a MULTI_INSERT block at their offsets, rebuilding their headers.
fn apply_tuples(pg: &mut [u8], block: BlockNumber, xid: Xid, mut data: &[u8]) -> std::result::Result<(), &'static str> {
    use crate::access::heap::tuple;
    let mut t = Vec::with_capacity(256);
    while !data.is_empty() {
        if data.len() < 4 {
            return Err("truncated tuple entry");
        }
        let off = u16::from_le_bytes([data[0], data[1]]);
        let len = u16::from_le_bytes([data[2], data[3]]) as usize;
        if len < tuple::HEADER_SIZE {
            return Err("logged tuple shorter than a tuple header");
        }
        let body = data.get(4..4 + len - LOGGED_HEADER_SKIP).ok_or("tuple past record end")?;
        t.clear();
        t.resize(LOGGED_HEADER_SKIP, 0);
        t.extend_from_slice(body);
        tuple::set_xmin(&mut t, xid, 0);
        tuple::set_ctid(&mut t, block, off);
        let next = page::max_offset(pg) + 1;
        if off == next {
            page::add_item(pg, &t).ok_or("tuple does not fit its page")?;
        } else if off > next {
            return Err("tuple offset skips line pointers");
        }
        data = &data[4 + len - LOGGED_HEADER_SKIP..];
    }
    Ok(())
}

/// Applies a committed catalog change and deletes the files it made dead.
pub fn apply_ddl(catalog: &Catalog, pool: &BufferPool, smgr: &Smgr, ch: &DdlChange) -> Result<()> {
    let creates: Vec<Arc<Table>> = ch.creates.iter().cloned().map(Arc::new).collect();
    let replaces: Vec<Arc<Table>> = ch.replaces.iter().cloned().map(Arc::new).collect();
    catalog.apply(&creates, &ch.drops, &replaces)?;
    for rel in &ch.dead_files {
        pool.drop_relation_buffers(*rel);
        smgr.unlink(*rel)?;
    }
    Ok(())
}

//! Bottom-up build from sorted input (PostgreSQL's nbtsort.c), as CREATE INDEX does it: leaves
//! filled left to right to 90 % (internal pages to 70 %), each level's pages linked as they
//! are finished, a downlink for each new page added to the level above, and the meta page
//! written last. Pages are written whole: WAL-logged as BTREE_NEWPAGES records of up to
//! [`NEWPAGES_PER_RECORD`] full images (PostgreSQL's log_newpages), or, for an index that skips
//! the WAL, only written to the pool (its caller flushes and syncs the file at commit).
//!
//! The caller sorts; [`sort_entries`] sorts in memory (fine for indexes that fit in memory; an
//! external merge sort for larger ones is future work).

use super::insert::{INTERNAL_FILL_PERCENT, LEAF_FILL_PERCENT};
use super::page::{self, Opaque, P_NONE};
use super::redo::BTREE_NEWPAGES;
use super::{BTree, Tid};
use crate::error::{sqlstate, PgError, Result};
use crate::recovery::RM_BTREE;
use crate::storage::{page as spage, BlockNumber, ForkNumber};
use std::cmp::Ordering;

/// Images per NEWPAGES record (PostgreSQL's XLR_MAX_BLOCK_ID batch in log_newpages).
pub const NEWPAGES_PER_RECORD: usize = 32;

/// What a build did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    pub entries: u64,
    pub leaf_pages: u64,
    /// Every page written, the meta page included.
    pub pages: u64,
    /// Levels above the leaves (0: the root is a leaf).
    pub root_level: u32,
}

/// Sorts `(key, tid)` entries into index order (key, then TID), in memory.
pub fn sort_entries(v: &mut [(Vec<u8>, Tid)]) {
    v.sort_unstable();
}

/// Writes whole pages into new blocks of an index, WAL-logging them in batches.
pub(crate) struct PageWriter<'t, 'a> {
    t: &'t BTree<'a>,
    pending: Vec<(BlockNumber, Vec<u8>)>,
    pub pages: u64,
}

impl<'t, 'a> PageWriter<'t, 'a> {
    pub fn new(t: &'t BTree<'a>) -> Self {
        PageWriter { t, pending: Vec::new(), pages: 0 }
    }

    /// A new (zeroed) block at the end of the index.
    pub fn allocate(&mut self) -> Result<BlockNumber> {
        let v = self.t.pool.extend_by(self.t.pins, self.t.rel, ForkNumber::Main, 1, None)?;
        assert_eq!(v.len(), 1);
        Ok(v[0].block())
    }

    /// Queues the final image of `block`.
    pub fn write(&mut self, block: BlockNumber, image: Vec<u8>) -> Result<()> {
        debug_assert_eq!(image.len(), self.t.pool.block_size());
        self.pending.push((block, image));
        self.pages += 1;
        if self.pending.len() >= NEWPAGES_PER_RECORD {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the queued images into their (locked) buffers and logs them as one record, in
    /// the critical section.
    fn flush(&mut self) -> Result<()> {
        use crate::buffer::critical::{log_page_changes, Logged, PageChange, RecordKind};
        if self.pending.is_empty() {
            return Ok(());
        }
        let t = self.t;
        let bufs = self.pending.iter().map(|(block, _)| t.read(*block)).collect::<Result<Vec<_>>>()?;
        let mut pgs: Vec<_> = bufs.iter().map(|b| b.lock_exclusive()).collect();
        for (pg, (_, img)) in pgs.iter_mut().zip(&self.pending) {
            pg.copy_from_slice(img);
        }
        let mut changes: Vec<PageChange<'_, '_>> = pgs
            .iter_mut()
            .zip(&self.pending)
            .map(|(pg, (block, _))| PageChange {
                pg,
                rel: t.rel,
                fork: ForkNumber::Main,
                block: *block,
                logged: Logged::Image { will_init: true },
            })
            .collect();
        let kind = RecordKind { rmid: RM_BTREE, info: BTREE_NEWPAGES, xid: t.xid, main: &[] };
        log_page_changes(t.wal, t.full_page_writes, kind, &mut changes, &mut crate::wal::RecordBuilder::new())?;
        drop(changes);
        drop(pgs);
        self.pending.clear();
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        self.flush()
    }
}

/// The page being filled on one level.
struct Level {
    block: BlockNumber,
    left: BlockNumber,
    /// Full items (on internal pages the first is written without its key).
    items: Vec<Vec<u8>>,
    used_bytes: usize,
}

struct Builder<'w, 't, 'a> {
    w: &'w mut PageWriter<'t, 'a>,
    levels: Vec<Level>,
    block_size: usize,
    stats: BuildStats,
}

impl Builder<'_, '_, '_> {
    fn fill_limit(&self, level: usize) -> usize {
        let pct = if level == 0 { LEAF_FILL_PERCENT } else { INTERNAL_FILL_PERCENT };
        page::usable_bytes(self.block_size) * pct / 100
    }

    /// Adds an item (for level > 0 a downlink) at `level`, finishing the page if it is full.
    fn add(&mut self, level: usize, item: Vec<u8>) -> Result<()> {
        if level == self.levels.len() {
            let block = self.w.allocate()?;
            self.levels.push(Level { block, left: P_NONE, items: Vec::new(), used_bytes: 0 });
        }
        let need = item.len() + spage::LINE_POINTER_SIZE;
        let lv = &self.levels[level];
        if lv.items.is_empty() || lv.used_bytes + need <= self.fill_limit(level) {
            let lv = &mut self.levels[level];
            lv.used_bytes += need;
            lv.items.push(item);
            return Ok(());
        }
        // Full: the next page starts with `item` (and any items moved over so the high key,
        // a copy of the next page's first item, fits).
        let usable = page::usable_bytes(self.block_size);
        let mut carry = vec![item];
        loop {
            let lv = &self.levels[level];
            let hk_need = carry[0].len() + spage::LINE_POINTER_SIZE;
            if lv.used_bytes + hk_need <= usable || lv.items.len() <= 1 {
                break;
            }
            let lv = &mut self.levels[level];
            let it = lv.items.pop().expect("more than one item");
            lv.used_bytes -= it.len() + spage::LINE_POINTER_SIZE;
            carry.insert(0, it);
        }
        let next_block = self.w.allocate()?;
        let first = &carry[0];
        let hk = page::item_vec(0, page::item_tid(first), page::item_key(first));
        let pivot = page::item_vec(next_block, page::item_tid(first), page::item_key(first));
        let old = std::mem::replace(&mut self.levels[level], Level { block: next_block, left: P_NONE, items: Vec::new(), used_bytes: 0 });
        self.levels[level].left = old.block;
        let first_of_level = old.left == P_NONE;
        let old_block = old.block;
        self.finish_page(level, old, Some(&hk), next_block, false)?;
        if first_of_level {
            // The level above starts with the minus-infinity downlink to this level's first page.
            self.add(level + 1, page::item_vec(old_block, (0, 0), b""))?;
        }
        self.add(level + 1, pivot)?;
        for it in carry {
            let lv = &mut self.levels[level];
            lv.used_bytes += it.len() + spage::LINE_POINTER_SIZE;
            lv.items.push(it);
        }
        Ok(())
    }

    fn finish_page(&mut self, level: usize, lv: Level, hk: Option<&[u8]>, right: BlockNumber, root: bool) -> Result<()> {
        let mut flags = if level == 0 { page::FLAG_LEAF } else { 0 };
        if root {
            flags |= page::FLAG_ROOT;
        }
        let mut p = vec![0u8; self.block_size];
        page::init(&mut p, &Opaque { left: lv.left, right, level: level as u32, flags });
        if let Some(hk) = hk {
            spage::add_item(&mut p, hk).expect("room for the high key was kept");
        }
        for (i, it) in lv.items.iter().enumerate() {
            let ok = if level > 0 && i == 0 {
                spage::add_item(&mut p, &page::item_vec(page::item_child(it), (0, 0), b""))
            } else {
                spage::add_item(&mut p, it)
            };
            ok.ok_or_else(|| PgError::internal("B-tree build overfilled a page"))?;
        }
        if level == 0 {
            self.stats.leaf_pages += 1;
        }
        self.w.write(lv.block, p)
    }
}

pub(crate) fn build(t: &BTree<'_>, sorted: impl Iterator<Item = (Vec<u8>, Tid)>) -> Result<BuildStats> {
    let smgr = t.pool.smgr();
    if !smgr.exists(t.rel, ForkNumber::Main) {
        smgr.create(t.rel, ForkNumber::Main)?;
    }
    let n = smgr.nblocks(t.rel, ForkNumber::Main)?;
    if n != 0 {
        return Err(PgError::new(sqlstate::OBJECT_IN_USE, format!("index \"{}\" already contains data ({n} blocks)", t.display_name())));
    }
    let bs = t.pool.block_size();
    let max = page::max_item_size(bs);
    let mut w = PageWriter::new(t);
    let meta_block = w.allocate()?;
    assert_eq!(meta_block, 0, "a new index starts at block 0");
    let mut b = Builder { w: &mut w, levels: Vec::new(), block_size: bs, stats: BuildStats::default() };
    let mut prev: Option<Vec<u8>> = None;
    for (key, tid) in sorted {
        let item = page::item_vec(0, tid, &key);
        if item.len() > max {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("index row size {} exceeds btree maximum {max} for index \"{}\"", item.len(), t.display_name()),
            )
            .with_hint("Values larger than 1/4 of a buffer page cannot be indexed."));
        }
        if let Some(p) = &prev {
            if page::cmp_items(p, &item) != Ordering::Less {
                return Err(PgError::internal(format!(
                    "B-tree build input for index \"{}\" is not in strictly increasing (key, tid) order",
                    t.display_name()
                )));
            }
        }
        b.stats.entries += 1;
        b.add(0, item.clone())?;
        prev = Some(item);
    }
    if b.levels.is_empty() {
        let block = b.w.allocate()?;
        b.levels.push(Level { block, left: P_NONE, items: Vec::new(), used_bytes: 0 });
    }
    // Finish the rightmost page of each level, bottom up (finishing one never adds above it:
    // every level but the top already has its parent level).
    let top = b.levels.len() - 1;
    let levels = std::mem::take(&mut b.levels);
    let root = levels[top].block;
    for (level, lv) in levels.into_iter().enumerate() {
        b.finish_page(level, lv, None, P_NONE, level == top)?;
    }
    let mut stats = std::mem::take(&mut b.stats);
    stats.root_level = top as u32;
    let mut m = vec![0u8; bs];
    page::init_meta(&mut m, &page::Meta { root, level: top as u32 });
    w.write(0, m)?;
    stats.pages = w.pages;
    w.finish()?;
    Ok(stats)
}

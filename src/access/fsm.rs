//! The free space map: per relation, how much room each heap page has, as a tree of
//! max-free-space categories in the relation's FSM fork (PostgreSQL's freespace.c design).
//!
//! ```text
//!  category of a heap page = free bytes / (block_size / 256)      (0..=255)
//!
//!  FSM fork, depth first:   block 0: root (level 2)
//!                           block 1: level-1 page 0, blocks 2..: its leaf pages, then
//!                           level-1 page 1, its leaf pages, ...
//!  each FSM page: page header, then a complete binary max-tree of u8 nodes over
//!  SLOTS = block_size / 4 slots; a slot of a leaf page is one heap page, a slot of an upper
//!  page is the max category of one child page.
//! ```
//!
//! Entry points: [`take`] (find a page with room and mark it taken in one step), [`take_run`]
//! (the same for a run of neighbouring pages, as a bulk insert wants them), [`record`],
//! [`record_many`] (batched updates), [`max_category`].
//!
//! Invariants:
//! 1. An FSM page is read or changed only under its buffer's content lock (shared to read,
//!    exclusive to change); at most one FSM page lock is held at a time.
//! 2. Upper levels may lag behind (an upper slot may be higher than the child's true max, never
//!    used as truth): a search that descends into a child with less room than promised fixes the
//!    upper slot and retries, with a bounded number of restarts.
//! 3. `take` / `take_run` set the leaves of the pages they return to 0 while holding the leaf
//!    page's exclusive lock, so two concurrent takers are never sent to the same page (no
//!    thundering herd). The taker records each page's true free space when it is done with it.
//! 4. The FSM is a hint: it is not WAL-logged, and a wrong entry costs only a retry.

use crate::buffer::{BufferPool, Pins};
use crate::error::Result;
use crate::storage::{page, BlockNumber, ForkNumber, RelFileNumber};

const LEVELS: u32 = 3;
const MAX_RESTARTS: usize = 8;

fn slots(bs: usize) -> usize {
    bs / 4
}

/// Category for `free` bytes on a page of `bs` bytes (rounded down: a page is never promised
/// more than it has).
pub fn category(free: usize, bs: usize) -> u8 {
    (free / (bs / 256)).min(255) as u8
}

/// Category a request of `need` bytes requires (rounded up).
fn needed_category(need: usize, bs: usize) -> u8 {
    need.div_ceil(bs / 256).min(255) as u8
}

/// FSM block number of page `index` (0-based within its level) at `level` (0 = leaves).
fn fsm_block(level: u32, index: u64, s: u64) -> BlockNumber {
    // Depth-first layout: subtree of a level-l page spans 1 + s + s^2 ... blocks.
    let span1 = 1 + s; // a level-1 page and its leaves
    let b = match level {
        2 => 0,
        1 => 1 + index * span1,
        _ => 1 + (index / s) * span1 + 1 + (index % s),
    };
    b as BlockNumber
}

/// Tree nodes live after the page header: node 0 is the root, node i's children are 2i+1,
/// 2i+2; the last `s` nodes are the slots.
struct Tree<'a> {
    nodes: &'a mut [u8],
    s: usize,
}

impl<'a> Tree<'a> {
    fn new(pg: &'a mut [u8], s: usize) -> Tree<'a> {
        let nodes = &mut pg[page::PAGE_HEADER_SIZE..page::PAGE_HEADER_SIZE + 2 * s - 1];
        Tree { nodes, s }
    }
    fn root(&self) -> u8 {
        self.nodes[0]
    }
    fn set(&mut self, slot: usize, v: u8) {
        let mut n = self.s - 1 + slot;
        self.nodes[n] = v;
        while n > 0 {
            n = (n - 1) / 2;
            let m = self.nodes[2 * n + 1].max(self.nodes[2 * n + 2]);
            if self.nodes[n] == m {
                break;
            }
            self.nodes[n] = m;
        }
    }
    /// Leftmost slot with value >= want.
    fn find(&self, want: u8) -> Option<usize> {
        if self.nodes[0] < want {
            return None;
        }
        let mut n = 0;
        while n < self.s - 1 {
            n = if self.nodes[2 * n + 1] >= want { 2 * n + 1 } else { 2 * n + 2 };
        }
        Some(n - (self.s - 1))
    }
    fn get(&self, slot: usize) -> u8 {
        self.nodes[self.s - 1 + slot]
    }
}

fn read_only_max(pg: &[u8]) -> u8 {
    if page::is_new(pg) {
        0
    } else {
        pg[page::PAGE_HEADER_SIZE]
    }
}

fn find_ro(pg: &[u8], s: usize, want: u8) -> Option<usize> {
    if page::is_new(pg) {
        return None;
    }
    let nodes = &pg[page::PAGE_HEADER_SIZE..page::PAGE_HEADER_SIZE + 2 * s - 1];
    if nodes[0] < want {
        return None;
    }
    let mut n = 0;
    while n < s - 1 {
        n = if nodes[2 * n + 1] >= want { 2 * n + 1 } else { 2 * n + 2 };
    }
    Some(n - (s - 1))
}

/// Makes sure FSM block `blk` exists, extending the FSM fork with zeroed pages if needed.
fn ensure_block(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, blk: BlockNumber) -> Result<()> {
    loop {
        let n = pool.smgr().nblocks(rel, ForkNumber::Fsm)?;
        if blk < n {
            return Ok(());
        }
        let want = (blk + 1 - n).min(crate::buffer::pool::MAX_EXTEND_BY);
        drop(pool.extend_by(pins, rel, ForkNumber::Fsm, want, None)?);
    }
}

/// Sets slot `slot` of FSM page (`level`, `index`) to `v`; returns the page's new max.
fn set_slot(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, level: u32, index: u64, slot: usize, v: u8) -> Result<u8> {
    let s = slots(pool.block_size());
    let blk = fsm_block(level, index, s as u64);
    ensure_block(pool, pins, rel, blk)?;
    let buf = pool.read_buffer(pins, rel, ForkNumber::Fsm, blk, None)?;
    {
        // Most propagations find the slot already right: a shared lock suffices to see it.
        let pg = buf.lock_shared();
        if !page::is_new(&pg) && pg[page::PAGE_HEADER_SIZE + s - 1 + slot] == v {
            return Ok(read_only_max(&pg));
        }
    }
    let mut pg = buf.lock_exclusive();
    if page::is_new(&pg) {
        page::init(&mut pg, 0);
    }
    let mut t = Tree::new(&mut pg, s);
    if t.get(slot) != v {
        t.set(slot, v);
        let root = t.root();
        pg.mark_dirty();
        return Ok(root);
    }
    Ok(t.root())
}

/// Propagates a page's max into its parents (level+1 ...).
fn propagate(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, mut level: u32, mut index: u64, mut max: u8) -> Result<()> {
    let s = slots(pool.block_size()) as u64;
    while level + 1 < LEVELS {
        let (pidx, pslot) = (index / s, (index % s) as usize);
        max = set_slot(pool, pins, rel, level + 1, pidx, pslot, max)?;
        level += 1;
        index = pidx;
    }
    Ok(())
}

/// Records that heap page `block` has `free` bytes.
pub fn record(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, block: BlockNumber, free: usize) -> Result<()> {
    record_many(pool, pins, rel, &mut [(block, free)])
}

/// Lowers the recorded free space of heap page `block` to `free` if the map promises more (a
/// shared lock when it does not): for changes that used a page without taking it from the
/// map, and for pages recovery replayed, so that the map never promises a page more than it
/// has (the map is not WAL-logged; after a crash it may be older than the heap).
pub fn clamp(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, block: BlockNumber, free: usize) -> Result<()> {
    if max_category(pool, pins, rel, block)? <= category(free, pool.block_size()) {
        return Ok(());
    }
    record(pool, pins, rel, block, free)
}

/// Records several pages at once: one lock and one propagation per leaf page touched.
pub fn record_many(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, entries: &mut [(BlockNumber, usize)]) -> Result<()> {
    let bs = pool.block_size();
    let s = slots(bs) as u64;
    entries.sort_unstable_by_key(|e| e.0);
    let mut i = 0;
    while i < entries.len() {
        let leaf = entries[i].0 as u64 / s;
        let blk = fsm_block(0, leaf, s);
        ensure_block(pool, pins, rel, blk)?;
        let before;
        let after;
        {
            let buf = pool.read_buffer(pins, rel, ForkNumber::Fsm, blk, None)?;
            let mut pg = buf.lock_exclusive();
            if page::is_new(&pg) {
                page::init(&mut pg, 0);
            }
            let mut t = Tree::new(&mut pg, s as usize);
            before = t.root();
            while i < entries.len() && entries[i].0 as u64 / s == leaf {
                t.set((entries[i].0 as u64 % s) as usize, category(entries[i].1, bs));
                i += 1;
            }
            after = t.root();
            pg.mark_dirty();
        }
        if before != after {
            propagate(pool, pins, rel, 0, leaf, after)?;
        }
    }
    Ok(())
}

/// Finds a heap page with at least `need` free bytes, marks it taken (category 0) in the same
/// critical section, and returns it. None if the map knows no such page.
pub fn take(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, need: usize) -> Result<Option<BlockNumber>> {
    Ok(take_run(pool, pins, rel, need, 1)?.map(|r| r.start))
}

/// As [`take`], and also takes the pages right after the one found, up to `max_pages` in all,
/// while each has at least `need` free bytes (pages extended for waiters lie side by side in
/// the map): one search, one leaf lock and at most one propagation for the whole run, instead
/// of one per page. Returns the blocks taken.
pub fn take_run(
    pool: &BufferPool,
    pins: &Pins,
    rel: RelFileNumber,
    need: usize,
    max_pages: u32,
) -> Result<Option<std::ops::Range<BlockNumber>>> {
    assert!(max_pages >= 1);
    let bs = pool.block_size();
    let s = slots(bs);
    let want = needed_category(need, bs).max(1);
    let nfsm = pool.smgr().nblocks(rel, ForkNumber::Fsm)?;
    'restart: for _ in 0..MAX_RESTARTS {
        let mut index = 0u64;
        for level in (1..LEVELS).rev() {
            let blk = fsm_block(level, index, s as u64);
            if blk >= nfsm {
                return Ok(None);
            }
            let buf = pool.read_buffer(pins, rel, ForkNumber::Fsm, blk, None)?;
            let slot = {
                let pg = buf.lock_shared();
                match find_ro(&pg, s, want) {
                    Some(slot) => slot,
                    None if level == LEVELS - 1 => return Ok(None),
                    None => {
                        // The parent promised more than this page has: fix the parent, retry.
                        let max = read_only_max(&pg);
                        drop(pg);
                        propagate(pool, pins, rel, level, index, max)?;
                        continue 'restart;
                    }
                }
            };
            index = index * s as u64 + slot as u64;
        }
        let blk = fsm_block(0, index, s as u64);
        if blk >= nfsm {
            propagate(pool, pins, rel, 0, index, 0)?;
            continue;
        }
        let buf = pool.read_buffer(pins, rel, ForkNumber::Fsm, blk, None)?;
        let (found, before, max) = {
            let mut pg = buf.lock_exclusive();
            if page::is_new(&pg) {
                (None, 1, 0)
            } else {
                let mut t = Tree::new(&mut pg, s);
                let before = t.root();
                match t.find(want) {
                    Some(slot) => {
                        let mut n = 0;
                        while n < max_pages as usize && slot + n < s && (n == 0 || t.get(slot + n) >= want) {
                            t.set(slot + n, 0);
                            n += 1;
                        }
                        let m = t.root();
                        pg.mark_dirty();
                        (Some((slot, n)), before, m)
                    }
                    None => (None, before, t.root()),
                }
            }
        };
        drop(buf);
        // The upper levels need telling only if this leaf page's best changed (taking one of
        // many fresh pages usually leaves it as it was).
        if max != before {
            propagate(pool, pins, rel, 0, index, max)?;
        }
        if let Some((slot, n)) = found {
            let first = (index * s as u64 + slot as u64) as BlockNumber;
            return Ok(Some(first..first + n as BlockNumber));
        }
    }
    Ok(None)
}

/// The category recorded for a heap page (tests and tools).
pub fn max_category(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, block: BlockNumber) -> Result<u8> {
    let s = slots(pool.block_size()) as u64;
    let blk = fsm_block(0, block as u64 / s, s);
    if blk >= pool.smgr().nblocks(rel, ForkNumber::Fsm)? {
        return Ok(0);
    }
    let buf = pool.read_buffer(pins, rel, ForkNumber::Fsm, blk, None)?;
    let pg = buf.lock_shared();
    if page::is_new(&pg) {
        return Ok(0);
    }
    Ok(pg[page::PAGE_HEADER_SIZE + s as usize - 1 + (block as u64 % s) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Smgr;
    use std::sync::Arc;

    fn pool() -> (tempfile::TempDir, BufferPool) {
        let d = tempfile::tempdir().unwrap();
        let smgr = Arc::new(Smgr::new(d.path(), 8192, false).unwrap());
        let p = BufferPool::new(smgr, 64, 4, 1024, "off", 1).unwrap();
        (d, p)
    }

    #[test]
    fn layout_is_depth_first() {
        assert_eq!(fsm_block(2, 0, 2048), 0);
        assert_eq!(fsm_block(1, 0, 2048), 1);
        assert_eq!(fsm_block(0, 0, 2048), 2);
        assert_eq!(fsm_block(0, 2047, 2048), 2049);
        assert_eq!(fsm_block(1, 1, 2048), 2050);
        assert_eq!(fsm_block(0, 2048, 2048), 2051);
    }

    #[test]
    fn take_marks_and_record_restores() {
        let (_d, p) = pool();
        let pins = p.new_pins();
        let rel = RelFileNumber(5);
        assert_eq!(take(&p, &pins, rel, 100).unwrap(), None);
        record_many(&p, &pins, rel, &mut [(3, 4000), (7000, 8000), (10, 50)]).unwrap();
        assert_eq!(take(&p, &pins, rel, 5000).unwrap(), Some(7000));
        assert_eq!(take(&p, &pins, rel, 5000).unwrap(), None, "taken pages are marked");
        assert_eq!(take(&p, &pins, rel, 1000).unwrap(), Some(3));
        assert_eq!(take(&p, &pins, rel, 10).unwrap(), Some(10));
        assert_eq!(take(&p, &pins, rel, 10).unwrap(), None);
        record(&p, &pins, rel, 7000, 8100).unwrap();
        assert_eq!(max_category(&p, &pins, rel, 7000).unwrap(), category(8100, 8192));
        assert_eq!(take(&p, &pins, rel, 8000).unwrap(), Some(7000));
        assert_eq!(p.total_pins(), 0);
    }

    #[test]
    fn take_run_takes_neighbours_with_room_only() {
        let (_d, p) = pool();
        let pins = p.new_pins();
        let rel = RelFileNumber(7);
        // 105 has too little room for the runs below: the first run stops before it.
        let mut e: Vec<(BlockNumber, usize)> = (100..110).map(|b| (b, if b == 105 { 100 } else { 8000 })).collect();
        record_many(&p, &pins, rel, &mut e).unwrap();
        assert_eq!(take_run(&p, &pins, rel, 4000, 32).unwrap(), Some(100..105));
        assert_eq!(take_run(&p, &pins, rel, 4000, 3).unwrap(), Some(106..109), "at most max_pages");
        assert_eq!(take_run(&p, &pins, rel, 4000, 32).unwrap(), Some(109..110));
        assert_eq!(take_run(&p, &pins, rel, 4000, 32).unwrap(), None, "taken pages are marked");
        assert_eq!(take(&p, &pins, rel, 50).unwrap(), Some(105));
        // Upper levels still show what is left after partial takes.
        record(&p, &pins, rel, 3000, 8000).unwrap();
        assert_eq!(take_run(&p, &pins, rel, 100, 32).unwrap(), Some(3000..3001));
        assert_eq!(p.total_pins(), 0);
    }

    #[test]
    fn stale_upper_levels_are_repaired() {
        let (_d, p) = pool();
        let pins = p.new_pins();
        let rel = RelFileNumber(6);
        record(&p, &pins, rel, 5, 6000).unwrap();
        // Lower the leaf behind the upper levels' back.
        set_slot(&p, &pins, rel, 0, 0, 5, 0).unwrap();
        assert_eq!(take(&p, &pins, rel, 1000).unwrap(), None);
    }
}

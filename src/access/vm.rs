//! The visibility map: one bit per heap page, in the relation's `_vm` fork, set when every
//! tuple on the page is visible to every snapshot now and later (PostgreSQL's visibilitymap.c,
//! with only its all-visible bit: heapstore's transaction ids are 64 bits wide and never
//! frozen). Index-only scans read it to return a row from the index alone, without visiting
//! the heap page.
//!
//! ```text
//!  VM page: page header (24 bytes), then a bitmap; bit (b % BITS) of VM page (b / BITS) is
//!  heap page b, where BITS = (block_size - 24) * 8 (65,344 heap pages per 8 kB VM page)
//! ```
//!
//! Entry points: [`set`] (VACUUM), [`clear`] (every heap change to an all-visible page),
//! [`Reader`] (index-only scans), [`count`] (`pg_class.relallvisible`).
//!
//! Invariants:
//! 1. A set bit implies that the heap page has `PD_ALL_VISIBLE` (`storage::page` invariant 5),
//!    at run time and after any crash. So a bit is set only while the heap page's exclusive
//!    content lock is held and its flag is set, and the VM page's LSN is raised to the heap
//!    page's LSN first: the WAL record that set the flag reaches disk before the VM page does.
//! 2. A bit is cleared under the heap page's exclusive content lock, before the change that
//!    clears `PD_ALL_VISIBLE` is made to the page. An inserter adds its index entries after
//!    that, and a deleter commits after it, so a scan that read an index entry (or took its
//!    snapshot) after the change finds the bit clear and visits the heap. VACUUM sets a bit
//!    only after it removed the index entries of the page's dead versions (under their
//!    leaves' exclusive locks), so an index-only scan reads an entry's bit while the entry's
//!    leaf is still share-locked (`btree::Cursor::next_marked`): a bit read set then means
//!    the entry names a version every snapshot sees. A clear is not logged: redo clears the
//!    bit of every heap page whose flag is clear once the record is replayed (`recovery`), so
//!    a clear lost in a crash is made again; redo never sets a bit.
//! 3. Lock order: B-tree leaf, heap page, then VM page; at most one VM page lock is held, and
//!    no other lock is taken while it is.
//! 4. The map is a cache of the heap's flags: a torn VM page (one that fails verification)
//!    reads as all zeros (nothing all-visible), which is always safe; it costs only heap
//!    visits until the next VACUUM sets the bits again. A page that cannot be read at all is
//!    an error, never zeros: a clear made to a zeroed copy would not reach the page on disk.

use crate::buffer::{Buffer, BufferPool, Pins};
use crate::error::Result;
use crate::storage::{page, BlockNumber, ForkNumber, RelFileNumber};

/// Heap pages one VM page covers.
pub fn bits_per_page(bs: usize) -> u64 {
    ((bs - page::PAGE_HEADER_SIZE) * 8) as u64
}

/// (VM block, byte offset in the page, bit mask) of heap page `block`.
fn locate(bs: usize, block: BlockNumber) -> (BlockNumber, usize, u8) {
    let per = bits_per_page(bs);
    let vm_block = (block as u64 / per) as BlockNumber;
    let bit = block as u64 % per;
    (vm_block, page::PAGE_HEADER_SIZE + (bit / 8) as usize, 1 << (bit % 8))
}

/// Makes sure VM block `blk` exists, extending the fork with zeroed pages.
fn ensure_block(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, blk: BlockNumber) -> Result<()> {
    loop {
        let n = pool.smgr().nblocks(rel, ForkNumber::Vm)?;
        if blk < n {
            return Ok(());
        }
        let want = (blk + 1 - n).min(crate::buffer::pool::MAX_EXTEND_BY);
        drop(pool.extend_by(pins, rel, ForkNumber::Vm, want, None)?);
    }
}

/// Sets heap page `block`'s bit. The caller holds the heap page's exclusive content lock, the
/// page has `PD_ALL_VISIBLE`, and `heap_lsn` is its LSN (invariant 1).
pub fn set(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, block: BlockNumber, heap_lsn: u64) -> Result<()> {
    let (vb, byte, mask) = locate(pool.block_size(), block);
    ensure_block(pool, pins, rel, vb)?;
    let buf = pool.read_buffer(pins, rel, ForkNumber::Vm, vb, None)?;
    let mut pg = buf.lock_exclusive();
    if page::is_new(&pg) {
        page::init(&mut pg, 0);
    }
    if page::lsn(&pg) < heap_lsn {
        page::set_lsn(&mut pg, heap_lsn);
    }
    if pg[byte] & mask == 0 {
        pg[byte] |= mask;
    }
    pg.mark_dirty();
    Ok(())
}

/// Clears heap page `block`'s bit, if it is set. The caller holds the heap page's exclusive
/// content lock and has not yet changed it (invariant 2).
pub fn clear(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, block: BlockNumber) -> Result<()> {
    let (vb, byte, mask) = locate(pool.block_size(), block);
    if vb >= pool.smgr().nblocks(rel, ForkNumber::Vm)? {
        return Ok(());
    }
    let buf = pool.read_buffer(pins, rel, ForkNumber::Vm, vb, None)?;
    {
        let pg = buf.lock_shared();
        if page::is_new(&pg) || pg[byte] & mask == 0 {
            return Ok(());
        }
    }
    let mut pg = buf.lock_exclusive();
    if pg[byte] & mask != 0 {
        pg[byte] &= !mask;
        pg.mark_dirty();
    }
    Ok(())
}

/// Whether heap page `block`'s bit is set (one lookup; [`Reader`] keeps the VM page pinned
/// across many).
pub fn is_set(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, block: BlockNumber) -> Result<bool> {
    Reader::new(pool, pins, rel).is_set(block)
}

/// Reads bits for a scan, keeping the last VM page pinned (PostgreSQL's `vmbuffer`).
pub struct Reader<'a> {
    pool: &'a BufferPool,
    pins: &'a Pins,
    rel: RelFileNumber,
    current: Option<Buffer<'a>>,
}

impl<'a> Reader<'a> {
    pub fn new(pool: &'a BufferPool, pins: &'a Pins, rel: RelFileNumber) -> Self {
        Reader { pool, pins, rel, current: None }
    }

    /// Whether heap page `block` is marked all-visible now. A bit read set means every tuple
    /// on the page was visible to every snapshot when it was read, and the caller's index
    /// entry was made before (invariant 2).
    pub fn is_set(&mut self, block: BlockNumber) -> Result<bool> {
        let (vb, byte, mask) = locate(self.pool.block_size(), block);
        if self.current.as_ref().is_none_or(|b| b.block() != vb) {
            self.current = None;
            if vb >= self.pool.smgr().nblocks(self.rel, ForkNumber::Vm)? {
                return Ok(false);
            }
            self.current = Some(self.pool.read_buffer(self.pins, self.rel, ForkNumber::Vm, vb, None)?);
        }
        let pg = self.current.as_ref().expect("pinned above").lock_shared();
        Ok(!page::is_new(&pg) && pg[byte] & mask != 0)
    }
}

/// How many of the first `heap_blocks` heap pages are marked (`pg_class.relallvisible`).
pub fn count(pool: &BufferPool, pins: &Pins, rel: RelFileNumber, heap_blocks: BlockNumber) -> Result<u64> {
    let bs = pool.block_size();
    let per = bits_per_page(bs);
    let n = pool.smgr().nblocks(rel, ForkNumber::Vm)?;
    let mut total = 0u64;
    for vb in 0..n {
        let first = vb as u64 * per;
        if first >= heap_blocks as u64 {
            break;
        }
        let bits = (heap_blocks as u64 - first).min(per) as usize;
        let buf = pool.read_buffer(pins, rel, ForkNumber::Vm, vb, None)?;
        let pg = buf.lock_shared();
        if page::is_new(&pg) {
            continue;
        }
        let map = &pg[page::PAGE_HEADER_SIZE..];
        total += map[..bits / 8].iter().map(|b| b.count_ones() as u64).sum::<u64>();
        if bits % 8 != 0 {
            total += (map[bits / 8] & ((1u8 << (bits % 8)) - 1)).count_ones() as u64;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_spans_pages_and_bytes() {
        let bs = 8192;
        assert_eq!(bits_per_page(bs), 65_344);
        assert_eq!(locate(bs, 0), (0, 24, 1));
        assert_eq!(locate(bs, 9), (0, 25, 2));
        assert_eq!(locate(bs, 65_343), (0, 24 + 8167, 0x80));
        assert_eq!(locate(bs, 65_344), (1, 24, 1));
    }
}

//! The WAL buffer ring (`wal_buffers` bytes): WAL position `p` lives at byte `p % len`.
//!
//! The ring itself knows nothing about who may touch which bytes; that is the insertion and
//! write protocol's business (invariants 3 and 4 in the module doc of `wal`), which is why its
//! two accessors are `unsafe` and say what their callers must guarantee. In short: an inserter
//! writes only positions it reserved and only once their previous occupant (one ring length
//! earlier) has been written out; the writer reads only positions that every insertion has
//! finished copying and that have not been written yet. Those two sets never share a byte.

use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use super::Lsn;

/// Alignment of the ring's memory: a page, so that direct I/O can use it one day.
const RING_ALIGN: usize = 4096;

pub(crate) struct Ring {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the ring is plain memory; concurrent access to it is governed by the insertion and
// write protocol (see the accessors' contracts), never by the type system.
unsafe impl Send for Ring {}
// SAFETY: as above: shared references only hand out raw access through `unsafe` methods whose
// callers guarantee that no two threads touch the same byte unless both only read.
unsafe impl Sync for Ring {}

impl Ring {
    /// A zeroed ring of `len` bytes (`len > 0`).
    pub(crate) fn new(len: usize) -> Ring {
        assert!(len > 0);
        let layout = Layout::from_size_align(len, RING_ALIGN).expect("ring layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| handle_alloc_error(layout));
        Ring { ptr, len }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn offset(&self, pos: Lsn) -> usize {
        (pos % self.len as u64) as usize
    }

    /// Copies `src` to positions `pos .. pos + src.len()`, wrapping around the ring's end.
    ///
    /// # Safety
    /// `src.len() <= len`, and for the duration of the call no other thread reads or writes
    /// the ring bytes of those positions: the caller reserved them and their previous
    /// occupants have been written out, so neither the writer nor another inserter uses them.
    #[inline]
    pub(crate) unsafe fn copy_in(&self, pos: Lsn, src: &[u8]) {
        debug_assert!(src.len() <= self.len);
        let off = self.offset(pos);
        let first = src.len().min(self.len - off);
        // SAFETY: `off + first <= len` and `src.len() - first <= len`, so both destinations lie
        // inside the allocation; `src` is session memory, never the ring, so they do not
        // overlap; exclusivity of the destination bytes is the caller's guarantee.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.as_ptr().add(off), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), self.ptr.as_ptr(), src.len() - first);
        }
    }

    /// The bytes of positions `from .. to` as one or two slices (two when the range wraps).
    ///
    /// # Safety
    /// `to - from <= len`, and while the slices live nobody writes those ring bytes: every
    /// insertion into them has finished, and no inserter may reuse them until `written` passes
    /// `to`, which only the holder of the WALWrite lock (the caller) advances.
    pub(crate) unsafe fn slices(&self, from: Lsn, to: Lsn) -> (&[u8], &[u8]) {
        debug_assert!(from <= to && to - from <= self.len as u64);
        let n = (to - from) as usize;
        let off = self.offset(from);
        let first = n.min(self.len - off);
        // SAFETY: both ranges lie inside the allocation (as in `copy_in`); the memory is
        // initialized (allocated zeroed); no writer touches it while the slices live (the
        // caller's guarantee).
        unsafe { (std::slice::from_raw_parts(self.ptr.as_ptr().add(off), first), std::slice::from_raw_parts(self.ptr.as_ptr(), n - first)) }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, RING_ALIGN).expect("ring layout");
        // SAFETY: allocated in `new` with this very layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr(), layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_and_read_back_across_the_wrap() {
        let r = Ring::new(64);
        let data: Vec<u8> = (1..=40).collect();
        // SAFETY: single-threaded test; ranges fit the ring.
        unsafe {
            r.copy_in(64 * 3 + 50, &data);
            let (a, b) = r.slices(64 * 3 + 50, 64 * 3 + 90);
            assert_eq!(a.len(), 14);
            assert_eq!(b.len(), 26);
            assert_eq!([a, b].concat(), data);
            let (a, b) = r.slices(64, 64 + 10);
            assert_eq!((a.len(), b.len()), (10, 0));
        }
    }
}

//! Per-session pins (PostgreSQL's PrivateRefCount) and the RAII guards for pins and content
//! locks.
//!
//! A session counts its own pins per buffer; the shared refcount in the descriptor moves only
//! when the session's count goes 0 → 1 or 1 → 0. Guards release on drop, so an error (`?`) or
//! a panic unwinding through a session releases every pin and content lock it held: Rust's
//! drop order is the resource owner.
//!
//! Invariants:
//! 1. `held()` equals the number of live [`Buffer`] guards of this session, and the shared
//!    refcount of a buffer is at least the number of sessions holding it.
//! 2. At transaction end `held() == 0` (asserted by the session: a leaked pin is a bug).
//! 3. A content lock is taken only while the buffer is pinned (the lock guard borrows the pin).

use super::pool::{BufferId, BufferPool};
use crate::lock::LWLockMode;
use crate::storage::BlockNumber;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// A session's private pin counts.
pub struct Pins {
    counts: RefCell<HashMap<BufferId, u32>>,
    held: Cell<usize>,
    limit: usize,
}

impl Pins {
    pub fn new(limit: usize) -> Pins {
        Pins { counts: RefCell::new(HashMap::new()), held: Cell::new(0), limit: limit.max(1) }
    }

    /// Pins currently held by this session (counting re-pins).
    pub fn held(&self) -> usize {
        self.held.get()
    }

    /// The session's pin share.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Pins `id` (taking a shared pin if this session had none on it).
    #[inline]
    pub fn pin<'a>(&'a self, pool: &'a BufferPool, id: BufferId, strategy: bool) -> Buffer<'a> {
        let mut c = self.counts.borrow_mut();
        let e = c.entry(id).or_insert(0);
        if *e == 0 {
            pool.pin_shared(id, strategy);
        }
        *e += 1;
        self.held.set(self.held.get() + 1);
        Buffer { pool, pins: self, id }
    }

    /// Takes over a shared pin already added to the descriptor (by the clock sweep).
    pub(crate) fn adopt<'a>(&'a self, pool: &'a BufferPool, id: BufferId) -> Buffer<'a> {
        let mut c = self.counts.borrow_mut();
        let e = c.entry(id).or_insert(0);
        if *e > 0 {
            // We already had it pinned: the sweep's extra shared pin is redundant.
            pool.unpin_shared(id);
        }
        *e += 1;
        self.held.set(self.held.get() + 1);
        Buffer { pool, pins: self, id }
    }

    #[inline]
    fn unpin(&self, pool: &BufferPool, id: BufferId) {
        let mut c = self.counts.borrow_mut();
        let e = c.get_mut(&id).expect("unpinning a buffer this session has not pinned");
        *e -= 1;
        if *e == 0 {
            c.remove(&id);
            pool.unpin_shared(id);
        }
        self.held.set(self.held.get() - 1);
    }
}

/// A pinned buffer. Dropping it unpins.
pub struct Buffer<'a> {
    pool: &'a BufferPool,
    pins: &'a Pins,
    id: BufferId,
}

impl<'a> Buffer<'a> {
    pub fn id(&self) -> BufferId {
        self.id
    }

    pub fn block(&self) -> BlockNumber {
        self.pool.desc(self.id).tag().block
    }

    pub fn tag(&self) -> super::desc::BufferTag {
        self.pool.desc(self.id).tag()
    }

    /// Takes the content lock shared; the page can be read through the guard.
    pub fn lock_shared(&self) -> PageRef<'_> {
        self.pool.desc(self.id).content_lock.acquire(LWLockMode::Shared);
        PageRef { buf: self }
    }

    /// Takes the content lock exclusively; the page can be changed through the guard.
    pub fn lock_exclusive(&self) -> PageMut<'_> {
        self.pool.desc(self.id).content_lock.acquire(LWLockMode::Exclusive);
        PageMut { buf: self }
    }

    fn page_len(&self) -> usize {
        self.pool.block_size()
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        self.pins.unpin(self.pool, self.id);
    }
}

/// A page under a shared content lock.
pub struct PageRef<'b> {
    buf: &'b Buffer<'b>,
}

impl std::ops::Deref for PageRef<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the buffer is pinned and valid, and we hold its content lock shared, so no
        // one writes the page while this borrow lives.
        unsafe { std::slice::from_raw_parts(self.buf.pool.page_ptr(self.buf.id), self.buf.page_len()) }
    }
}

impl Drop for PageRef<'_> {
    fn drop(&mut self) {
        self.buf.pool.desc(self.buf.id).content_lock.release(LWLockMode::Shared);
    }
}

/// A page under the exclusive content lock.
pub struct PageMut<'b> {
    buf: &'b Buffer<'b>,
}

impl PageMut<'_> {
    /// Marks the buffer dirty (call after changing the page).
    pub fn mark_dirty(&self) {
        self.buf.pool.mark_dirty(self.buf.id);
    }

    /// The buffer this page is in.
    pub fn buffer_id(&self) -> super::pool::BufferId {
        self.buf.id
    }

    /// Whether the buffer is marked dirty.
    pub fn is_dirty(&self) -> bool {
        self.buf.pool.desc(self.buf.id).state.load(std::sync::atomic::Ordering::Acquire) & super::desc::DIRTY != 0
    }
}

impl std::ops::Deref for PageMut<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: pinned, valid, content lock held exclusively.
        unsafe { std::slice::from_raw_parts(self.buf.pool.page_ptr(self.buf.id), self.buf.page_len()) }
    }
}

impl std::ops::DerefMut for PageMut<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: pinned, valid, content lock held exclusively: this is the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.buf.pool.page_ptr(self.buf.id), self.buf.page_len()) }
    }
}

impl Drop for PageMut<'_> {
    fn drop(&mut self) {
        self.buf.pool.desc(self.buf.id).content_lock.release(LWLockMode::Exclusive);
    }
}

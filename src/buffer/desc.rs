//! Buffer descriptors: one atomic state word per buffer, plus its tag and content lock.
//!
//! ```text
//!  state: u64
//!  ┌────────────────────────────┬───────────┬──────────────────┐
//!  │ 22.. flags                 │ 18..21    │ 0..17            │
//!  │ LOCKED DIRTY VALID TAG_VALID│ usage     │ refcount (pins)  │
//!  │ IO_IN_PROGRESS IO_ERROR    │ count     │                  │
//!  │ PERMANENT                  │ (0..=5)   │                  │
//!  └────────────────────────────┴───────────┴──────────────────┘
//! ```
//!
//! An I/O's life (see `pool.rs` for the transitions, all in `start_io` / `end_io`):
//!
//! ```text
//!  unmapped ──map──► TAG_VALID|IO_IN_PROGRESS ──read ok──► TAG_VALID|VALID
//!                          │                    └─read failed─► TAG_VALID|IO_ERROR (retry later)
//!  VALID|DIRTY ──start_io──► VALID|DIRTY|IO_IN_PROGRESS ──written──► VALID
//! ```
//!
//! Invariants:
//! 1. `tag` changes only while the header lock (LOCKED) is held *and* the changer holds the
//!    only pin; so a pinned buffer's tag is stable and may be read without the header lock.
//! 2. Pinning never waits for the content lock or for I/O; it spins only while LOCKED is held,
//!    which is held for a few instructions.
//! 3. usage count ≤ [`MAX_USAGE`] (PostgreSQL's BM_MAX_USAGE_COUNT).
//! 4. DIRTY is set only under the exclusive content lock, and cleared only by the writer that
//!    holds IO_IN_PROGRESS after its write succeeded.
//! 5. IO_WAITERS is set (by CAS, while IO_IN_PROGRESS is set) by a session about to wait for
//!    the I/O; ending the I/O clears both under the header lock and wakes waiters only if it
//!    was set, so an I/O nobody waits for costs no wake-up call.

use crate::lock::{LWLock, LWLockClass};
use crate::storage::{BlockNumber, ForkNumber, RelFileNumber};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

pub const REFCOUNT_ONE: u64 = 1;
pub const REFCOUNT_MASK: u64 = (1 << 18) - 1;
pub const USAGE_SHIFT: u32 = 18;
pub const USAGE_ONE: u64 = 1 << USAGE_SHIFT;
pub const USAGE_MASK: u64 = 0xF << USAGE_SHIFT;
pub const MAX_USAGE: u64 = 5;

pub const LOCKED: u64 = 1 << 22;
pub const DIRTY: u64 = 1 << 23;
pub const VALID: u64 = 1 << 24;
pub const TAG_VALID: u64 = 1 << 25;
pub const IO_IN_PROGRESS: u64 = 1 << 26;
pub const IO_ERROR: u64 = 1 << 27;
pub const PERMANENT: u64 = 1 << 28;
/// Someone waits for this buffer's I/O (so ending it must wake them).
pub const IO_WAITERS: u64 = 1 << 29;

#[inline]
pub fn refcount(s: u64) -> u64 {
    s & REFCOUNT_MASK
}

#[inline]
pub fn usage(s: u64) -> u64 {
    (s & USAGE_MASK) >> USAGE_SHIFT
}

/// Which page a buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferTag {
    pub rel: RelFileNumber,
    pub fork: ForkNumber,
    pub block: BlockNumber,
}

impl BufferTag {
    pub const INVALID: BufferTag = BufferTag { rel: RelFileNumber(0), fork: ForkNumber::Main, block: BlockNumber::MAX };

    /// A well-mixed hash (for partition choice and the mapping table).
    #[inline]
    pub fn hash(&self) -> u64 {
        let k = ((self.rel.0 as u64) << 32) ^ ((self.fork as u64) << 30) ^ self.block as u64;
        // splitmix64 finalizer
        let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// One buffer's shared bookkeeping.
pub struct BufferDesc {
    pub state: AtomicU64,
    tag: UnsafeCell<BufferTag>,
    pub content_lock: LWLock,
}

// SAFETY: `tag` is written only under the header lock by the sole pin holder (invariant 1) and
// read either under the header lock or while pinned; everything else is atomic.
unsafe impl Sync for BufferDesc {}

impl Default for BufferDesc {
    fn default() -> Self {
        BufferDesc {
            state: AtomicU64::new(0),
            tag: UnsafeCell::new(BufferTag::INVALID),
            content_lock: LWLock::new(LWLockClass::BufferContent),
        }
    }
}

impl BufferDesc {
    /// Spins until it sets LOCKED; returns the state with LOCKED set.
    #[inline]
    pub fn lock_header(&self) -> u64 {
        let mut spins = 0u32;
        loop {
            let prev = self.state.fetch_or(LOCKED, Ordering::Acquire);
            if prev & LOCKED == 0 {
                return prev | LOCKED;
            }
            spins += 1;
            if spins > 1000 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Stores `new_state` (which must have LOCKED clear), releasing the header lock.
    #[inline]
    pub fn unlock_header(&self, new_state: u64) {
        debug_assert!(new_state & LOCKED == 0);
        self.state.store(new_state, Ordering::Release);
    }

    /// Waits until the header lock is free; returns the state.
    #[inline]
    pub fn wait_header_unlocked(&self) -> u64 {
        let mut spins = 0u32;
        loop {
            let s = self.state.load(Ordering::Acquire);
            if s & LOCKED == 0 {
                return s;
            }
            spins += 1;
            if spins > 1000 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// The tag. Caller holds a pin or the header lock (invariant 1).
    #[inline]
    pub fn tag(&self) -> BufferTag {
        // SAFETY: by the caller's contract no one writes the tag concurrently.
        unsafe { *self.tag.get() }
    }

    /// Sets the tag. Caller holds the header lock and the only pin.
    #[inline]
    pub fn set_tag(&self, tag: BufferTag) {
        debug_assert!(self.state.load(Ordering::Relaxed) & LOCKED != 0);
        // SAFETY: header lock held and we hold the only pin: no concurrent reader or writer.
        unsafe { *self.tag.get() = tag }
    }

    /// Address used to park I/O waiters (distinct from the content lock's key).
    pub fn io_key(&self) -> usize {
        &self.state as *const AtomicU64 as usize
    }
}

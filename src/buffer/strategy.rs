//! Buffer access strategies (PostgreSQL's GetAccessStrategy): a ring of buffers that a bulk
//! operation recycles, so that a big scan or load does not push everything else out of the pool.
//!
//! Ring sizes (seed 002's settlement):
//! - BULKREAD: 256 kB on top of io_combine_limit × effective_io_concurrency blocks (the reads a
//!   stream keeps in flight), capped at 1/8 of the pool and at the session's pin share;
//! - BULKWRITE: 16 MB, capped at 1/8 of the pool;
//! - VACUUM: 2 MB.
//!
//! Invariants:
//! 1. A slot's buffer is reused only if no one has it pinned and its usage count is ≤ 1 (no one
//!    else used it since we did); otherwise a buffer is taken from the clock sweep and replaces
//!    the slot. That is a *ring escape* and is counted, so EXPLAIN can show it.
//! 2. BULKREAD rejects a dirty ring buffer (writing it would stall the scan) and takes another
//!    from the clock, as PostgreSQL's StrategyRejectBuffer does.
//! 3. The ring holds at most `ring_size_blocks` buffers; together with the one buffer a scan holds
//!    pinned, a scan of any size leaves at most that many of its pages in the pool.

use super::pool::{BufferId, BufferPool};
use crate::stats::IoContext;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    BulkRead,
    BulkWrite,
    Vacuum,
}

const NONE: BufferId = BufferId::MAX;

/// A ring of buffers for one bulk operation.
pub struct Strategy {
    kind: StrategyKind,
    ring: Vec<BufferId>,
    current: usize,
    /// Buffers reused from the ring.
    pub reuses: u64,
    /// Buffers taken from outside the ring once it was full (ring escapes).
    pub escapes: u64,
    /// Dirty ring buffers rejected (BULKREAD).
    pub rejected: u64,
    filled: usize,
}

impl Strategy {
    /// A strategy of `kind` sized for `pool`.
    pub fn new(kind: StrategyKind, pool: &BufferPool, io_combine_limit_blocks: usize, effective_io_concurrency: usize) -> Strategy {
        let bs = pool.block_size();
        let bytes = match kind {
            // The base 256 kB plus the stream's look-ahead: the reads in flight never fill
            // the whole ring, so a synchronized scan that joins behind this one still finds the
            // last 256 kB it read (seed 002: "we should only *add* to the 256kB").
            StrategyKind::BulkRead => (256 << 10) + io_combine_limit_blocks * effective_io_concurrency * bs,
            StrategyKind::BulkWrite => 16 << 20,
            StrategyKind::Vacuum => 2 << 20,
        };
        let mut blocks = bytes / bs;
        blocks = blocks.min(pool.nbuffers() as usize / 8).max(1);
        if kind == StrategyKind::BulkRead {
            blocks = blocks.min(pool.pin_limit().max(1));
        }
        Self::with_size(kind, blocks)
    }

    /// The BULKREAD ring of a sequential scan under `settings` (a fixed size if
    /// `heapstore.bulkread_ring_size` is set; then still capped as the formula's).
    pub fn bulkread(pool: &BufferPool, settings: &super::ScanSettings) -> Strategy {
        if settings.bulkread_ring_bytes == 0 {
            return Strategy::new(StrategyKind::BulkRead, pool, settings.io_combine_limit, settings.effective_io_concurrency);
        }
        let blocks = (settings.bulkread_ring_bytes / pool.block_size()).min(pool.nbuffers() as usize / 8).min(pool.pin_limit()).max(1);
        Self::with_size(StrategyKind::BulkRead, blocks)
    }

    pub fn with_size(kind: StrategyKind, blocks: usize) -> Strategy {
        Strategy { kind, ring: vec![NONE; blocks.max(1)], current: 0, reuses: 0, escapes: 0, rejected: 0, filled: 0 }
    }

    pub fn kind(&self) -> StrategyKind {
        self.kind
    }

    pub fn ring_size_blocks(&self) -> usize {
        self.ring.len()
    }

    pub fn io_context(&self) -> IoContext {
        match self.kind {
            StrategyKind::BulkRead => IoContext::BulkRead,
            StrategyKind::BulkWrite => IoContext::BulkWrite,
            StrategyKind::Vacuum => IoContext::Vacuum,
        }
    }

    /// Advances to the next slot and returns its buffer pinned if it can be reused.
    pub(crate) fn next_candidate(&mut self, pool: &BufferPool) -> Option<BufferId> {
        self.current = (self.current + 1) % self.ring.len();
        let id = self.ring[self.current];
        if id == NONE {
            return None;
        }
        let s = pool.desc(id).state.load(std::sync::atomic::Ordering::Relaxed);
        if super::desc::usage(s) <= 1 && pool.try_pin_unpinned(id) {
            return Some(id);
        }
        None
    }

    pub(crate) fn reject_dirty(&self) -> bool {
        self.kind == StrategyKind::BulkRead
    }

    pub(crate) fn note_rejected(&mut self) {
        self.rejected += 1;
        self.ring[self.current] = NONE;
    }

    /// Records the victim chosen for the current slot.
    pub(crate) fn record(&mut self, id: BufferId, from_ring: bool) {
        if from_ring {
            self.reuses += 1;
            return;
        }
        if self.ring[self.current] == NONE && self.filled < self.ring.len() {
            self.filled += 1;
        } else {
            self.escapes += 1;
        }
        self.ring[self.current] = id;
    }
}

//! The relation fast path: weak relation locks (AccessShare, RowShare, RowExclusive) recorded
//! only in the taking session's own slots, and the strong-lock counters that say when that is
//! allowed (PostgreSQL's `FastPathGrantRelationLock` and `FastPathStrongRelationLocks`).
//!
//! Slots are in groups of [`GROUP_SLOTS`]; a relation's group is chosen by hash, so a lookup
//! scans at most one group (PostgreSQL 18's fast-path groups). A session whose group for a
//! relation is full takes that lock through the shared table instead.
//!
//! Invariants (the protocol itself is in `manager.rs`, invariant 3):
//! 1. A session's [`FastPathSlots`] are guarded by that session's own mutex (in `Proc`); its
//!    owner reads and writes them, and a strong locker moves entries out of them.
//! 2. A slot is free iff its mask is empty; `used` counts the other slots.
//! 3. A strong counter counts the (session, relation, strong mode) locals granted or being
//!    acquired on relations hashing to it; relations sharing a counter only cost each other
//!    fast-path eligibility, never correctness.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use super::mode::{LockMask, LockMode};
use super::tag::LockTag;

/// Slots per fast-path group.
pub const GROUP_SLOTS: usize = 16;

/// Number of strong-lock counters (PostgreSQL's `FAST_PATH_STRONG_LOCK_HASH_PARTITIONS`).
pub const STRONG_COUNTERS: usize = 1024;

fn relation_hash(rel: u32) -> u64 {
    LockTag::Relation(rel).hash_code()
}

/// One session's fast-path slots.
pub(crate) struct FastPathSlots {
    rels: Box<[u32]>,
    modes: Box<[LockMask]>,
    groups: usize,
    used: usize,
}

impl FastPathSlots {
    /// `groups` groups of [`GROUP_SLOTS`] slots; zero groups disables the fast path.
    pub fn new(groups: usize) -> FastPathSlots {
        let n = groups * GROUP_SLOTS;
        FastPathSlots { rels: vec![0; n].into(), modes: vec![LockMask::EMPTY; n].into(), groups, used: 0 }
    }

    fn group(&self, rel: u32) -> Range<usize> {
        let g = (relation_hash(rel) % self.groups as u64) as usize;
        g * GROUP_SLOTS..(g + 1) * GROUP_SLOTS
    }

    fn find(&self, rel: u32) -> Option<usize> {
        if self.groups == 0 {
            return None;
        }
        self.group(rel).find(|&i| !self.modes[i].is_empty() && self.rels[i] == rel)
    }

    /// Records `mode` on `rel`; false when the relation's group is full (or no slots exist).
    pub fn grant(&mut self, rel: u32, mode: LockMode) -> bool {
        debug_assert!(mode.is_weak());
        if let Some(i) = self.find(rel) {
            self.modes[i].insert(mode);
            return true;
        }
        if self.groups == 0 {
            return false;
        }
        let Some(i) = self.group(rel).find(|&i| self.modes[i].is_empty()) else {
            return false;
        };
        self.rels[i] = rel;
        self.modes[i] = mode.bit();
        self.used += 1;
        true
    }

    /// Forgets `mode` on `rel`; false when it is not here (a strong locker moved it to the
    /// shared table).
    pub fn release(&mut self, rel: u32, mode: LockMode) -> bool {
        let Some(i) = self.find(rel).filter(|&i| self.modes[i].contains(mode)) else {
            return false;
        };
        self.modes[i].remove(mode);
        if self.modes[i].is_empty() {
            self.used -= 1;
        }
        true
    }

    /// Removes and returns every mode held on `rel` (for transfer to the shared table).
    pub fn take(&mut self, rel: u32) -> LockMask {
        let Some(i) = self.find(rel) else {
            return LockMask::EMPTY;
        };
        self.used -= 1;
        std::mem::take(&mut self.modes[i])
    }

    /// Slots in use.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Every (relation, modes) recorded.
    pub fn iter(&self) -> impl Iterator<Item = (u32, LockMask)> + '_ {
        self.rels.iter().zip(self.modes.iter()).filter(|(_, m)| !m.is_empty()).map(|(r, m)| (*r, *m))
    }
}

/// Counters of strong relation locks, hashed by relation.
pub(crate) struct StrongCounts(Box<[AtomicU32]>);

impl StrongCounts {
    pub fn new() -> StrongCounts {
        StrongCounts((0..STRONG_COUNTERS).map(|_| AtomicU32::new(0)).collect())
    }

    fn slot(&self, rel: u32) -> &AtomicU32 {
        &self.0[((relation_hash(rel) >> 32) % STRONG_COUNTERS as u64) as usize]
    }

    /// Read by a weak locker while it holds its own fast-path mutex. The mutex, not this
    /// ordering, is what makes the protocol sound (see `manager.rs`, invariant 3).
    pub fn get(&self, rel: u32) -> u32 {
        self.slot(rel).load(Ordering::SeqCst)
    }

    pub fn increment(&self, rel: u32) {
        self.slot(rel).fetch_add(1, Ordering::SeqCst);
    }

    pub fn decrement(&self, rel: u32) {
        let before = self.slot(rel).fetch_sub(1, Ordering::SeqCst);
        debug_assert!(before > 0, "strong lock counter underflow");
    }

    /// Sum of all counters (zero when no strong relation lock is held or awaited).
    pub fn total(&self) -> u64 {
        self.0.iter().map(|c| u64::from(c.load(Ordering::SeqCst))).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_grant_release_take() {
        let mut fp = FastPathSlots::new(1);
        assert!(fp.grant(10, LockMode::AccessShare));
        assert!(fp.grant(10, LockMode::RowExclusive));
        assert!(fp.grant(11, LockMode::RowShare));
        assert_eq!(fp.used(), 2);
        assert!(fp.release(10, LockMode::AccessShare));
        assert!(!fp.release(10, LockMode::AccessShare));
        assert_eq!(fp.take(10), LockMode::RowExclusive.bit());
        assert_eq!(fp.take(10), LockMask::EMPTY);
        assert_eq!(fp.iter().collect::<Vec<_>>(), [(11, LockMode::RowShare.bit())]);
        assert_eq!(fp.used(), 1);
    }

    #[test]
    fn a_full_group_refuses_and_no_groups_means_no_fast_path() {
        let mut fp = FastPathSlots::new(1);
        for rel in 0..GROUP_SLOTS as u32 {
            assert!(fp.grant(rel, LockMode::AccessShare));
        }
        assert!(!fp.grant(999, LockMode::AccessShare));
        assert!(fp.grant(3, LockMode::RowShare), "an existing slot still takes more modes");
        let mut none = FastPathSlots::new(0);
        assert!(!none.grant(1, LockMode::AccessShare));
        assert!(!none.release(1, LockMode::AccessShare));
    }

    #[test]
    fn strong_counts() {
        let c = StrongCounts::new();
        c.increment(5);
        c.increment(5);
        assert_eq!(c.get(5), 2);
        c.decrement(5);
        c.decrement(5);
        assert_eq!(c.total(), 0);
    }
}

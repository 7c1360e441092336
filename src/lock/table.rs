//! The shared lock table: partitions, each a mutex over a hash map from tag to lock object
//! ([`LockObj`]: granted counts per mode, holders, FIFO wait queue), plus the map of which
//! sessions wait on which tag in the partition (for deadlock detection).
//!
//! The grant rules are PostgreSQL's (lock.c `LockAcquireExtended`, proc.c `JoinWaitQueue` and
//! `ProcLockWakeup`):
//! 1. A request is granted at once iff it conflicts with no lock granted to another session
//!    and with no request already waiting (so a stream of weak requests cannot starve a queued
//!    strong one).
//! 2. A session already holding a lock on the object gets a better place: it goes just ahead of
//!    the first waiter whose request conflicts with what it holds (that waiter must wait for it
//!    anyway), and is granted at once if it conflicts with no granted lock and no waiter ahead
//!    of that place; if that waiter also holds a lock the request conflicts with, the two are
//!    deadlocked and the request fails at once.
//! 3. On every release, and whenever a waiter leaves the queue, the queue is walked in order
//!    and every request that conflicts with no granted lock and no earlier still-waiting
//!    request is granted and its session woken (grant-on-release: a woken waiter owns its lock
//!    and re-checks nothing).
//!
//! Invariants, all under the partition's mutex:
//! 1. `granted[m]` = number of holders whose `held` contains `m`; `grant_mask` = modes with
//!    `granted[m] > 0`; a holder entry exists iff its `held` is non-empty.
//! 2. A session appears at most once in all wait queues, and `waiting` maps it to the tag
//!    whose queue it is in.
//! 3. A lock object with no holders and no waiters is removed from the map.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::mode::{LockMask, LockMode, NUM_MODES};
use super::proc::Proc;
use super::tag::{KeyBuild, LockTag};

/// A session's granted modes on one lock object (PostgreSQL's `PROCLOCK.holdMask`). The
/// local table counts re-acquisitions, so each (session, mode) is granted here at most once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Holder {
    pub session: u64,
    pub held: LockMask,
}

/// A queued request.
pub(crate) struct Waiter {
    pub proc: Arc<Proc>,
    pub mode: LockMode,
    /// When the wait began, for `locks()`'s `waitstart`.
    pub waitstart: SystemTime,
}

/// What to do with a new request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Grant,
    /// Wait at this position in the queue.
    Wait(usize),
    /// Rule 2's immediate deadlock with a queued session.
    Deadlock {
        blocker: u64,
        blocker_mode: LockMode,
    },
}

/// One lockable object's shared state (PostgreSQL's `LOCK`).
#[derive(Default)]
pub(crate) struct LockObj {
    granted: [u32; NUM_MODES],
    grant_mask: LockMask,
    holders: Vec<Holder>,
    queue: Vec<Waiter>,
}

impl LockObj {
    pub fn holders(&self) -> &[Holder] {
        &self.holders
    }

    pub fn queue(&self) -> &[Waiter] {
        &self.queue
    }

    pub fn is_unused(&self) -> bool {
        self.holders.is_empty() && self.queue.is_empty()
    }

    /// Modes `session` holds here.
    pub fn held_by(&self, session: u64) -> LockMask {
        self.holders.iter().find(|h| h.session == session).map_or(LockMask::EMPTY, |h| h.held)
    }

    /// Whether `mode` conflicts with a mode granted to a session other than `session`
    /// (PostgreSQL's `LockCheckConflicts`).
    pub fn conflicts_granted(&self, session: u64, mode: LockMode) -> bool {
        let candidates = LockMask::from_bits(mode.conflicts().bits() & self.grant_mask.bits());
        if candidates.is_empty() {
            return false;
        }
        let mine = self.held_by(session);
        candidates.iter().any(|c| self.granted[c.index()] > u32::from(mine.contains(c)))
    }

    fn wait_mask(&self) -> LockMask {
        self.queue.iter().fold(LockMask::EMPTY, |m, w| m.with(w.mode))
    }

    /// Applies grant rules 1 and 2 to a new request by `session`.
    pub fn decide(&self, session: u64, mode: LockMode) -> Decision {
        if !mode.conflicts().intersects(self.wait_mask()) && !self.conflicts_granted(session, mode) {
            return Decision::Grant;
        }
        let mine = self.held_by(session);
        if mine.is_empty() {
            return Decision::Wait(self.queue.len());
        }
        let mut ahead = LockMask::EMPTY;
        for (pos, w) in self.queue.iter().enumerate() {
            if w.mode.conflicts().intersects(mine) {
                if mode.conflicts().intersects(self.held_by(w.proc.id)) {
                    return Decision::Deadlock { blocker: w.proc.id, blocker_mode: w.mode };
                }
                if !mode.conflicts().intersects(ahead) && !self.conflicts_granted(session, mode) {
                    return Decision::Grant;
                }
                return Decision::Wait(pos);
            }
            ahead.insert(w.mode);
        }
        Decision::Wait(self.queue.len())
    }

    /// Records `mode` as granted to `session`.
    pub fn grant(&mut self, session: u64, mode: LockMode) {
        match self.holders.iter_mut().find(|h| h.session == session) {
            Some(h) if h.held.contains(mode) => return,
            Some(h) => h.held.insert(mode),
            None => self.holders.push(Holder { session, held: mode.bit() }),
        }
        self.granted[mode.index()] += 1;
        self.grant_mask.insert(mode);
    }

    /// Forgets `mode` granted to `session`; false if it was not granted.
    pub fn ungrant(&mut self, session: u64, mode: LockMode) -> bool {
        let Some(i) = self.holders.iter().position(|h| h.session == session && h.held.contains(mode)) else {
            return false;
        };
        self.holders[i].held.remove(mode);
        if self.holders[i].held.is_empty() {
            self.holders.swap_remove(i);
        }
        self.granted[mode.index()] -= 1;
        if self.granted[mode.index()] == 0 {
            self.grant_mask.remove(mode);
        }
        true
    }

    fn dequeue(&mut self, session: u64) -> Option<Waiter> {
        let pos = self.queue.iter().position(|w| w.proc.id == session)?;
        Some(self.queue.remove(pos))
    }

    /// Grant rule 3; returns the sessions granted (already woken).
    fn wake_waiters(&mut self) -> Vec<u64> {
        let mut granted = Vec::new();
        let mut ahead = LockMask::EMPTY;
        let mut i = 0;
        while i < self.queue.len() {
            let (session, mode) = (self.queue[i].proc.id, self.queue[i].mode);
            if !mode.conflicts().intersects(ahead) && !self.conflicts_granted(session, mode) {
                let w = self.queue.remove(i);
                self.grant(session, mode);
                w.proc.grant();
                granted.push(session);
            } else {
                ahead.insert(mode);
                i += 1;
            }
        }
        granted
    }

    /// The wait-for edges out of queued `session`: its mode, and the sessions it waits for —
    /// holders of a conflicting granted mode ("hard" edges) and earlier waiters whose request
    /// conflicts ("soft" edges).
    pub fn blockers(&self, session: u64) -> Option<(LockMode, Vec<u64>)> {
        let pos = self.queue.iter().position(|w| w.proc.id == session)?;
        let mode = self.queue[pos].mode;
        let conflicts = mode.conflicts();
        let mut out: Vec<u64> =
            self.holders.iter().filter(|h| h.session != session && h.held.intersects(conflicts)).map(|h| h.session).collect();
        for w in &self.queue[..pos] {
            if w.proc.id != session && conflicts.contains(w.mode) && !out.contains(&w.proc.id) {
                out.push(w.proc.id);
            }
        }
        Some((mode, out))
    }
}

/// The state behind one partition's mutex.
#[derive(Default)]
pub(crate) struct PartitionTable {
    pub locks: HashMap<LockTag, LockObj, KeyBuild>,
    /// Session → tag it is queued on (invariant 2).
    pub waiting: HashMap<u64, LockTag, KeyBuild>,
}

impl PartitionTable {
    /// Queues `proc`'s request at `pos` and marks it waiting.
    pub fn enqueue(&mut self, tag: LockTag, pos: usize, proc: &Arc<Proc>, mode: LockMode) {
        let obj = self.locks.entry(tag).or_default();
        proc.begin_wait();
        obj.queue.insert(pos, Waiter { proc: Arc::clone(proc), mode, waitstart: SystemTime::now() });
        self.waiting.insert(proc.id, tag);
    }

    /// Takes `session`'s request out of `tag`'s queue (timeout, deadlock) and grants what that
    /// unblocks; false if it was not queued (it was granted).
    pub fn dequeue(&mut self, tag: LockTag, session: u64) -> bool {
        let Some(obj) = self.locks.get_mut(&tag) else {
            return false;
        };
        if obj.dequeue(session).is_none() {
            return false;
        }
        self.waiting.remove(&session);
        self.wake(tag);
        true
    }

    /// Releases `mode` held by `session` on `tag` and grants what that unblocks; false if it
    /// was not held.
    pub fn release(&mut self, tag: LockTag, session: u64, mode: LockMode) -> bool {
        let Some(obj) = self.locks.get_mut(&tag) else {
            return false;
        };
        let released = obj.ungrant(session, mode);
        self.wake(tag);
        released
    }

    /// Grant rule 3 on `tag`, then invariant 3.
    fn wake(&mut self, tag: LockTag) {
        let Some(obj) = self.locks.get_mut(&tag) else {
            return;
        };
        if !obj.queue.is_empty() {
            for session in obj.wake_waiters() {
                self.waiting.remove(&session);
            }
        }
        self.drop_if_unused(tag);
    }

    /// Invariant 3.
    pub fn drop_if_unused(&mut self, tag: LockTag) {
        if self.locks.get(&tag).is_some_and(LockObj::is_unused) {
            self.locks.remove(&tag);
        }
    }
}

/// One partition, padded to its own cache lines so that neighbours do not false-share.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Partition {
    pub table: Mutex<PartitionTable>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use LockMode::*;

    fn procs(n: u64) -> Vec<Arc<Proc>> {
        (0..n).map(|i| Arc::new(Proc::new(i, 0))).collect()
    }

    #[test]
    fn granted_counts_exclude_own_locks() {
        let mut obj = LockObj::default();
        obj.grant(1, AccessShare);
        obj.grant(1, RowExclusive);
        assert!(!obj.conflicts_granted(1, AccessExclusive), "own locks never conflict");
        assert!(obj.conflicts_granted(2, Share));
        obj.grant(2, AccessShare);
        assert!(obj.conflicts_granted(1, AccessExclusive), "session 2's AccessShare conflicts");
        assert!(obj.ungrant(2, AccessShare) && !obj.ungrant(2, AccessShare));
        assert_eq!(obj.held_by(1), AccessShare.bit().with(RowExclusive));
    }

    #[test]
    fn a_waiting_strong_request_blocks_later_weak_ones() {
        let p = procs(4);
        let mut t = PartitionTable::default();
        let tag = LockTag::Relation(1);
        t.locks.entry(tag).or_default().grant(0, RowExclusive);
        let d = t.locks[&tag].decide(1, AccessExclusive);
        assert_eq!(d, Decision::Wait(0));
        t.enqueue(tag, 0, &p[1], AccessExclusive);
        assert_eq!(t.locks[&tag].decide(2, AccessShare), Decision::Wait(1));
        t.enqueue(tag, 1, &p[2], AccessShare);
        // Session 0 holds RowExclusive: it goes ahead of the AccessExclusive waiter.
        assert_eq!(t.locks[&tag].decide(0, AccessShare), Decision::Grant);
        assert!(t.release(tag, 0, RowExclusive));
        assert_eq!(t.locks[&tag].held_by(1), AccessExclusive.bit());
        assert_eq!(t.waiting.get(&2), Some(&tag));
        assert!(t.release(tag, 1, AccessExclusive));
        assert_eq!(t.locks[&tag].held_by(2), AccessShare.bit());
        assert!(t.waiting.is_empty());
        assert!(t.release(tag, 2, AccessShare));
        assert!(t.locks.is_empty());
    }

    #[test]
    fn lock_upgrade_deadlock_is_found_at_once() {
        let p = procs(3);
        let mut t = PartitionTable::default();
        let tag = LockTag::Relation(1);
        let obj = t.locks.entry(tag).or_default();
        obj.grant(1, AccessShare);
        obj.grant(2, AccessShare);
        assert_eq!(t.locks[&tag].decide(1, AccessExclusive), Decision::Wait(0));
        t.enqueue(tag, 0, &p[1], AccessExclusive);
        assert_eq!(t.locks[&tag].decide(2, AccessExclusive), Decision::Deadlock { blocker: 1, blocker_mode: AccessExclusive });
        assert_eq!(t.locks[&tag].blockers(1), Some((AccessExclusive, vec![2])));
        assert!(t.dequeue(tag, 1) && !t.dequeue(tag, 1));
    }

    #[test]
    fn blockers_include_conflicting_earlier_waiters() {
        let p = procs(4);
        let mut t = PartitionTable::default();
        let tag = LockTag::Object { class: 1, id: 1 };
        t.locks.entry(tag).or_default().grant(0, Share);
        t.enqueue(tag, 0, &p[1], Exclusive);
        t.enqueue(tag, 1, &p[2], Share);
        t.enqueue(tag, 2, &p[3], RowExclusive);
        assert_eq!(t.locks[&tag].blockers(2), Some((Share, vec![1])));
        assert_eq!(t.locks[&tag].blockers(3), Some((RowExclusive, vec![0, 1, 2])));
        assert_eq!(t.locks[&tag].blockers(0), None);
    }
}

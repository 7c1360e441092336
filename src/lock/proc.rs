//! The shared part of a session ([`Proc`], after PostgreSQL's `PGPROC`): its fast-path slots
//! and its wait state, reachable by other sessions (strong lockers move its fast-path entries;
//! releasers grant its awaited lock and wake it).
//!
//! Invariants:
//! 1. `status` is Waiting exactly while the session's request is in some lock's wait queue;
//!    it is set to Waiting and to Granted only by a thread holding that lock's partition mutex,
//!    so a waiter that holds the partition mutex and sees Waiting knows it is still queued.
//! 2. The waiter sleeps only after reading Waiting under `status`'s mutex, and a granter sets
//!    Granted and notifies under the same mutex: no wake-up is lost.
//! 3. `status`'s mutex is a leaf: nothing else is locked while it is held.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::fastpath::FastPathSlots;

/// Locks a mutex, ignoring poisoning: the lock manager's critical sections panic only on a
/// broken invariant, and a session unwinding from a panic must still release its locks.
pub(crate) fn guard<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a session's lock request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitStatus {
    /// Not waiting.
    Idle,
    /// Queued on a lock.
    Waiting,
    /// A releaser granted the awaited lock; the waiter has not yet noticed.
    Granted,
}

/// A session's shared state.
pub(crate) struct Proc {
    pub id: u64,
    pub fast_path: Mutex<FastPathSlots>,
    status: Mutex<WaitStatus>,
    wake: Condvar,
}

impl Proc {
    pub fn new(id: u64, fast_path_groups: usize) -> Proc {
        Proc { id, fast_path: Mutex::new(FastPathSlots::new(fast_path_groups)), status: Mutex::new(WaitStatus::Idle), wake: Condvar::new() }
    }

    /// Marks the session queued (caller holds the lock's partition mutex).
    pub fn begin_wait(&self) {
        *guard(&self.status) = WaitStatus::Waiting;
    }

    /// Grants the awaited lock and wakes the session (caller holds the partition mutex).
    pub fn grant(&self) {
        let mut status = guard(&self.status);
        debug_assert_eq!(*status, WaitStatus::Waiting);
        *status = WaitStatus::Granted;
        self.wake.notify_one();
    }

    pub fn status(&self) -> WaitStatus {
        *guard(&self.status)
    }

    /// Back to Idle once the waiter has dealt with the outcome.
    pub fn end_wait(&self) {
        *guard(&self.status) = WaitStatus::Idle;
    }

    /// Sleeps while Waiting, until `deadline`; returns the status seen last.
    pub fn sleep_until(&self, deadline: Instant) -> WaitStatus {
        let mut status = guard(&self.status);
        while *status == WaitStatus::Waiting {
            let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                break;
            };
            status = self.wake.wait_timeout(status, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        *status
    }
}

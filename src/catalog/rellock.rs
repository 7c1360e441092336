//! Relation locks held to transaction end, in two strengths: shared (SELECT, COPY) and
//! exclusive (DROP, TRUNCATE). A stand-in with the right waiting behaviour until the
//! heavyweight lock manager (issue 6) replaces it: a DROP waits for a running COPY, and a
//! SELECT waits for a TRUNCATE.
//!
//! Invariants:
//! 1. A relation is held exclusively by at most one session and then by no sharer.
//! 2. A session's locks are all released at its transaction's end (commit or abort).
//! 3. A waiting exclusive request blocks new shared requests (no starvation of DROP).

use crate::catalog::Oid;
use crate::error::{sqlstate, PgError, Result};
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Entry {
    shared: u32,
    exclusive: Option<u64>,
    exclusive_waiters: u32,
}

#[derive(Default)]
pub struct RelLocks {
    table: Mutex<HashMap<Oid, Entry>>,
    cv: Condvar,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelLockMode {
    Shared,
    Exclusive,
}

impl RelLocks {
    /// Takes a lock for `session`. `timeout` bounds the wait (lock_timeout); None waits forever.
    pub fn acquire(&self, oid: Oid, name: &str, mode: RelLockMode, session: u64, timeout: Option<Duration>) -> Result<()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut t = self.table.lock().expect("poisoned");
        let mut waiting = false;
        loop {
            let e = t.entry(oid).or_default();
            let ok = match mode {
                RelLockMode::Shared => e.exclusive.is_none() && (e.exclusive_waiters == 0 || waiting),
                RelLockMode::Exclusive => e.exclusive.is_none() && e.shared == 0,
            };
            if ok {
                if waiting && mode == RelLockMode::Exclusive {
                    e.exclusive_waiters -= 1;
                }
                match mode {
                    RelLockMode::Shared => e.shared += 1,
                    RelLockMode::Exclusive => e.exclusive = Some(session),
                }
                return Ok(());
            }
            if !waiting && mode == RelLockMode::Exclusive {
                e.exclusive_waiters += 1;
            }
            waiting = true;
            let wait = deadline.map(|d| d.saturating_duration_since(Instant::now())).unwrap_or(Duration::from_secs(1));
            if deadline.is_some() && wait.is_zero() {
                if mode == RelLockMode::Exclusive {
                    e.exclusive_waiters -= 1;
                }
                self.cv.notify_all();
                return Err(PgError::new(
                    sqlstate::LOCK_NOT_AVAILABLE,
                    format!("canceling statement due to lock timeout on relation \"{name}\""),
                ));
            }
            t = self.cv.wait_timeout(t, wait).expect("poisoned").0;
        }
    }

    pub fn release(&self, oid: Oid, mode: RelLockMode) {
        let mut t = self.table.lock().expect("poisoned");
        let remove = {
            let e = t.get_mut(&oid).expect("releasing a relation lock not held");
            match mode {
                RelLockMode::Shared => {
                    assert!(e.shared > 0);
                    e.shared -= 1;
                }
                RelLockMode::Exclusive => {
                    assert!(e.exclusive.is_some());
                    e.exclusive = None;
                }
            }
            e.shared == 0 && e.exclusive.is_none() && e.exclusive_waiters == 0
        };
        if remove {
            t.remove(&oid);
        }
        drop(t);
        self.cv.notify_all();
    }
}

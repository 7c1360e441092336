//! Locks, in two layers as in PostgreSQL.
//!
//! - [`lwlock`]: lightweight locks for shared memory structures (buffer mapping partitions,
//!   content locks, the commit log ...), with wait statistics per lock class; also the relation
//!   extension lock (an LWLock per relation in the buffer pool).
//! - The heavyweight lock manager ([`LockManager`]) gives sessions table-level locks in
//!   PostgreSQL's eight modes, held to transaction end, with a per-session fast path for weak
//!   relation locks, a local lock table whose release-all costs O(locks held now) (seed 003),
//!   FIFO wait queues, deadlock detection, lock timeouts and lock-wait logging. Its design and
//!   invariants are in `manager.rs`; the parts:
//!   - `mode`: [`LockMode`], [`LockMask`], PostgreSQL's conflict table
//!   - `tag`: [`LockTag`], what a lock is on, named as PostgreSQL names it
//!   - `local`: [`LocalLocks`], the per-session segmented local lock table
//!   - `fastpath`: per-session fast-path slots and the strong-lock counters
//!   - `proc`: a session's shared part (fast-path slots, wait status)
//!   - `table`: the partitioned shared lock table and its grant rules
//!   - `deadlock`: wait-for graph cycle search and the 40P01 report

mod deadlock;
mod fastpath;
pub mod local;
pub mod lwlock;
pub mod manager;
pub mod mode;
mod proc;
mod table;
pub mod tag;

#[cfg(test)]
mod tests;

pub use local::LocalLocks;
pub use lwlock::{LWLock, LWLockClass, LWLockGuard, LWLockMode, LWLocked};
pub use manager::{LockInfo, LockLogger, LockManager, LockSettings, SessionLocks};
pub use mode::{LockMask, LockMode};
pub use tag::LockTag;

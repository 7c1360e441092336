//! Locks: lightweight locks ([`lwlock`]) for shared memory structures, and the relation
//! extension lock ([`extension`]). The heavyweight lock manager with its per-session local lock
//! table arrives with issue 6; until then DDL and COPY are serialized per relation by the
//! catalog's relation locks (see `catalog`).

pub mod lwlock;

pub use lwlock::{LWLock, LWLockClass, LWLockGuard, LWLockMode, LWLocked};

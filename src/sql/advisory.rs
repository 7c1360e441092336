//! PostgreSQL's advisory lock functions: `pg_advisory_lock`, `pg_try_advisory_lock`,
//! `pg_advisory_unlock`, their `_shared` forms, `pg_advisory_xact_lock` /
//! `pg_try_advisory_xact_lock` (and `_shared`), and `pg_advisory_unlock_all`.
//!
//! An advisory lock is a heavyweight lock on a number the application chooses
//! (`lock::LockTag::Advisory`: a bigint key, or two integer keys, which are different locks),
//! ExclusiveLock or ShareLock, so it waits, times out (`lock_timeout`), is cancelled and takes
//! part in deadlock detection as table locks do, and shows in `pg_locks` (locktype
//! `advisory`, the key in classid / objid / objsubid as PostgreSQL shows it).
//!
//! Invariants:
//! 1. A transaction-level lock (`_xact_`) is released at its transaction's end, as every
//!    heavyweight lock; a session-level one is a session take of the lock
//!    (`LockManager::lock_session`), kept past transaction ends (commit, rollback, a failed
//!    block) until `pg_advisory_unlock[_all]` or the session's end.
//! 2. A session holding a lock at either level takes it again at once at either level (one
//!    lock object, several takes), as in PostgreSQL; `pg_advisory_unlock` releases only
//!    session-level takes, and false (nothing released) when the session has none.

use crate::error::{PgError, Result};
use crate::lock::{LockMode, LockTag};
use crate::session::Session;
use crate::types::Value;

/// One of the advisory lock functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdvisoryFunc {
    /// `pg_[try_]advisory_[xact_]lock[_shared]`.
    Lock { shared: bool, xact: bool, try_only: bool },
    /// `pg_advisory_unlock[_shared]`.
    Unlock { shared: bool },
    /// `pg_advisory_unlock_all()`.
    UnlockAll,
}

impl AdvisoryFunc {
    /// The function named `name`, if it is one of them.
    pub fn lookup(name: &str) -> Option<AdvisoryFunc> {
        if name == "pg_advisory_unlock_all" {
            return Some(AdvisoryFunc::UnlockAll);
        }
        let rest = name.strip_prefix("pg_")?;
        let (shared, rest) = match rest.strip_suffix("_shared") {
            Some(r) => (true, r),
            None => (false, rest),
        };
        if rest == "advisory_unlock" {
            return Some(AdvisoryFunc::Unlock { shared });
        }
        let (try_only, rest) = match rest.strip_prefix("try_") {
            Some(r) => (true, r),
            None => (false, rest),
        };
        match rest {
            "advisory_lock" => Some(AdvisoryFunc::Lock { shared, xact: false, try_only }),
            "advisory_xact_lock" => Some(AdvisoryFunc::Lock { shared, xact: true, try_only }),
            _ => None,
        }
    }

    /// Whether it returns boolean (the others return void).
    pub fn returns_bool(self) -> bool {
        matches!(self, AdvisoryFunc::Lock { try_only: true, .. } | AdvisoryFunc::Unlock { .. })
    }
}

/// The lock tag of a call's keys: one bigint, or two integers.
fn tag_of(args: &[Value]) -> Result<LockTag> {
    match args {
        [Value::Int8(k)] => Ok(LockTag::Advisory { key: *k as u64, pair: false }),
        [Value::Int4(a), Value::Int4(b)] => Ok(LockTag::Advisory { key: (u64::from(*a as u32) << 32) | u64::from(*b as u32), pair: true }),
        other => Err(PgError::internal(format!("advisory lock keys of unexpected types: {other:?}"))),
    }
}

/// Calls `f` for session `s` (invariants 1 and 2). Strict: a NULL key locks nothing and
/// gives NULL.
pub fn call(s: &Session, f: AdvisoryFunc, args: &[Value]) -> Result<Value> {
    if args.contains(&Value::Null) {
        return Ok(Value::Null);
    }
    let locks = &s.shared.locks;
    let mut mine = s.locks.try_borrow_mut().map_err(|_| PgError::internal("the session's locks are in use by the statement"))?;
    let mode = |shared: bool| if shared { LockMode::Share } else { LockMode::Exclusive };
    let void = Value::Text(String::new());
    Ok(match f {
        AdvisoryFunc::Lock { shared, xact: true, try_only: false } => {
            locks.lock(&mut mine, tag_of(args)?, mode(shared))?;
            void
        }
        AdvisoryFunc::Lock { shared, xact: true, try_only: true } => Value::Bool(locks.try_lock(&mut mine, tag_of(args)?, mode(shared))),
        AdvisoryFunc::Lock { shared, xact: false, try_only } => {
            let got = locks.lock_session(&mut mine, tag_of(args)?, mode(shared), !try_only)?;
            if try_only {
                Value::Bool(got)
            } else {
                void
            }
        }
        AdvisoryFunc::Unlock { shared } => Value::Bool(locks.unlock_session(&mut mine, tag_of(args)?, mode(shared))),
        AdvisoryFunc::UnlockAll => {
            locks.unlock_all_session(&mut mine, |t| matches!(t, LockTag::Advisory { .. }));
            void
        }
    })
}

//! Query cancellation inside the engine (PostgreSQL's CHECK_FOR_INTERRUPTS): a thread that runs
//! a session on behalf of a client registers the flag a cancel request sets; long loops (heap
//! scans, index fetches) poll it and stop the statement with 57014.
//!
//! Invariant: a check is one thread-local read and one relaxed atomic load; loops check at
//! most once per page (or per few hundred rows), never while holding a content lock.

use crate::error::{sqlstate, PgError, Result};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

thread_local! {
    static CANCEL: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Makes `flag` this thread's cancel flag (a server connection's, set by CancelRequest).
pub fn set_cancel_flag(flag: Option<Arc<AtomicBool>>) {
    CANCEL.with(|c| *c.borrow_mut() = flag);
}

/// Fails with 57014 if this thread's statement was asked to stop.
#[inline]
pub fn check_for_interrupts() -> Result<()> {
    let canceled = CANCEL.with(|c| c.borrow().as_ref().is_some_and(|f| f.load(Ordering::Relaxed)));
    if canceled {
        return Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to user request"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_flag_stops_the_next_check() {
        assert!(check_for_interrupts().is_ok());
        let f = Arc::new(AtomicBool::new(false));
        set_cancel_flag(Some(f.clone()));
        assert!(check_for_interrupts().is_ok());
        f.store(true, Ordering::SeqCst);
        assert_eq!(check_for_interrupts().unwrap_err().code, "57014");
        set_cancel_flag(None);
        assert!(check_for_interrupts().is_ok());
    }
}

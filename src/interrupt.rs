//! Query cancellation inside the engine (PostgreSQL's CHECK_FOR_INTERRUPTS): a thread that runs
//! a session on behalf of a client registers the flag a cancel request sets; long loops (heap
//! scans, index fetches) poll it and stop the statement with 57014.
//!
//! `statement_timeout` is the other interrupt: the server sets it on its thread when a
//! statement starts ([`set_statement_timeout`]), which arms that statement's deadline; each
//! further statement of the same Query text re-arms it ([`restart_statement_timer`]), so the
//! timeout applies to each statement separately, as in PostgreSQL 13 and later. The same checks
//! stop a statement past its deadline, with PostgreSQL's "canceling statement due to statement
//! timeout".
//!
//! Invariant: a check is one thread-local read and one relaxed atomic load (and a clock read
//! while a deadline is set); loops check at most once per page (or per few hundred rows), never
//! while holding a content lock. Waits (lock waits, `pg_sleep`) wake at least every
//! [`POLL_INTERVAL`] to check.

use crate::error::{sqlstate, PgError, Result};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a waiting statement wakes to check for a cancel request or its deadline.
pub const POLL_INTERVAL: Duration = Duration::from_millis(100);

thread_local! {
    static CANCEL: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    static TIMEOUT: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// Sets (or clears, with None) the `statement_timeout` of the statements this thread runs,
/// and arms the deadline of the one starting now.
pub fn set_statement_timeout(timeout: Option<Duration>) {
    TIMEOUT.with(|t| t.set(timeout));
    DEADLINE.with(|d| d.set(timeout.map(|t| Instant::now() + t)));
}

/// A further statement of the same text starts: its deadline is `statement_timeout` from now
/// (nothing when no timeout is set).
pub fn restart_statement_timer() {
    if let Some(t) = TIMEOUT.with(|t| t.get()) {
        DEADLINE.with(|d| d.set(Some(Instant::now() + t)));
    }
}

/// How long a wait may sleep before it must check again: [`POLL_INTERVAL`], or less when the
/// statement's deadline comes sooner.
pub fn wait_slice() -> Duration {
    match DEADLINE.with(|d| d.get()) {
        Some(d) => d.saturating_duration_since(Instant::now()).min(POLL_INTERVAL),
        None => POLL_INTERVAL,
    }
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
    if DEADLINE.with(|d| d.get()).is_some_and(|d| Instant::now() >= d) {
        return Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to statement timeout"));
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

    #[test]
    fn each_statement_gets_its_own_deadline() {
        set_statement_timeout(Some(Duration::from_millis(30)));
        assert!(check_for_interrupts().is_ok());
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(check_for_interrupts().unwrap_err().message, "canceling statement due to statement timeout");
        restart_statement_timer();
        assert!(check_for_interrupts().is_ok());
        set_statement_timeout(None);
        restart_statement_timer();
        std::thread::sleep(Duration::from_millis(40));
        assert!(check_for_interrupts().is_ok());
    }
}

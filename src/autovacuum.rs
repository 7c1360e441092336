//! Autovacuum: one background thread (PostgreSQL's launcher with one worker) that wakes every
//! `autovacuum_naptime` and vacuums, one at a time in a session of its own, each table whose
//! dead versions pass PostgreSQL's threshold:
//!
//! ```text
//!  n_dead_tup > autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × n_live_tup
//! ```
//!
//! (`stats::tables` counters), and analyzes (PostgreSQL's autoanalyze) each table whose rows
//! changed since its last ANALYZE pass the analyze threshold:
//!
//! ```text
//!  n_mod_since_analyze > autovacuum_analyze_threshold + autovacuum_analyze_scale_factor × reltuples
//! ```
//!
//! (`reltuples`: the last ANALYZE's row count, else `n_live_tup`). Its ANALYZE is the
//! statement's (`sql::vacuum::analyze_table`), counted in `autoanalyze_count`. Its VACUUM is the statement's (`sql::vacuum::vacuum_table`):
//! pruning, index cleanup, free space to the FSM; it is counted in
//! `pg_stat_user_tables.autovacuum_count` and its I/O under the backend type "autovacuum
//! worker". TOAST relations are not vacuumed: the chunks of a deleted value are not marked
//! dead yet, so there is nothing there VACUUM could reclaim.
//!
//! Invariants:
//! 1. The thread holds only a weak reference to the database between rounds, so it never keeps
//!    a closed database alive; [`Autovacuum::stop`] joins it (a vacuum in progress finishes its
//!    table first) before the shutdown checkpoint.
//! 2. It takes ShareUpdateExclusiveLock like VACUUM, with `lock_timeout` semantics of its own:
//!    a table it cannot lock at once (DDL holds it) is skipped until the next round, so it never
//!    waits behind, or makes others queue behind, a user's lock.
//! 3. `autovacuum = off` stops new rounds; settings are read at each round.

use crate::db::Shared;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The launcher thread.
pub struct Autovacuum {
    state: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl Autovacuum {
    /// Starts the thread for `shared`.
    pub fn start(shared: &Arc<Shared>) -> Autovacuum {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let weak = Arc::downgrade(shared);
        let st = state.clone();
        let handle = std::thread::Builder::new().name("autovacuum".into()).spawn(move || run(weak, st)).expect("spawn autovacuum");
        Autovacuum { state, handle: Some(handle) }
    }

    /// Stops the thread and waits for it (invariant 1).
    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        let (m, cv) = &*self.state;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Autovacuum {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

/// Whether a table with these counters is due (module doc).
pub fn due(dead: i64, live: i64, threshold: i64, scale_factor: f64) -> bool {
    dead > 0 && (dead as f64) > threshold as f64 + scale_factor * live.max(0) as f64
}

fn run(weak: Weak<Shared>, state: Arc<(Mutex<bool>, Condvar)>) {
    crate::stats::set_backend_type(crate::stats::BackendType::AutovacuumWorker);
    loop {
        let nap = match weak.upgrade() {
            Some(sh) => Duration::from_millis(sh.settings.ms("autovacuum_naptime").max(1000)),
            None => return,
        };
        let until = Instant::now() + nap;
        {
            let (m, cv) = &*state;
            let mut stop = m.lock().unwrap_or_else(|e| e.into_inner());
            while !*stop && Instant::now() < until {
                stop = cv.wait_timeout(stop, until.saturating_duration_since(Instant::now())).unwrap_or_else(|e| e.into_inner()).0;
            }
            if *stop {
                return;
            }
        }
        let Some(sh) = weak.upgrade() else { return };
        if let Err(e) = round(&sh, &state) {
            eprintln!("ERROR:  {}\nCONTEXT:  automatic vacuum", e.message);
        }
    }
}

/// One round: every due table, one at a time, until asked to stop.
fn round(sh: &Arc<Shared>, state: &(Mutex<bool>, Condvar)) -> crate::error::Result<()> {
    if !sh.settings.bool("autovacuum") {
        return Ok(());
    }
    let threshold = sh.settings.int("autovacuum_vacuum_threshold");
    let scale = sh.settings.real("autovacuum_vacuum_scale_factor");
    let analyze_threshold = sh.settings.int("autovacuum_analyze_threshold");
    let analyze_scale = sh.settings.real("autovacuum_analyze_scale_factor");
    for table in sh.catalog.tables().into_iter().filter(|t| t.is_table()) {
        if *state.0.lock().unwrap_or_else(|e| e.into_inner()) {
            return Ok(());
        }
        let Some(c) = sh.table_stats.lookup(table.oid) else { continue };
        let (dead, live) =
            (c.n_dead_tup.load(std::sync::atomic::Ordering::Relaxed), c.n_live_tup.load(std::sync::atomic::Ordering::Relaxed));
        if due(dead, live, threshold, scale) {
            let mut s = sh.new_session();
            match crate::sql::vacuum::autovacuum_table(&mut s, &table) {
                Ok(_) => {} // None: locked by someone, next round (invariant 2)
                Err(e) => eprintln!("ERROR:  {}\nCONTEXT:  automatic vacuum of table \"public.{}\"", e.message, table.name),
            }
        }
        let reltuples = sh.planner_stats.get(table.oid).map_or(live.max(0) as f64, |st| st.reltuples);
        let mods = c.mods_since_analyze() as i64;
        if mods > 0 && mods as f64 > analyze_threshold as f64 + analyze_scale * reltuples {
            let mut s = sh.new_session();
            if let Err(e) = crate::sql::vacuum::autoanalyze_table(&mut s, &table) {
                eprintln!("ERROR:  {}\nCONTEXT:  automatic analyze of table \"public.{}\"", e.message, table.name);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn threshold_is_postgres_formula() {
        assert!(!super::due(50, 0, 50, 0.2));
        assert!(super::due(51, 0, 50, 0.2));
        assert!(!super::due(250, 1000, 50, 0.2));
        assert!(super::due(251, 1000, 50, 0.2));
        assert!(!super::due(0, 0, 0, 0.0));
    }
}

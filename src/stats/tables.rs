//! Per-table activity counters, as PostgreSQL's `pg_stat_user_tables` shows them: rows
//! inserted, updated (HOT among them) and deleted, estimated live and dead versions, and when
//! VACUUM and autovacuum last ran. Autovacuum reads `n_dead_tup` to decide what to vacuum.
//!
//! A transaction's changes are noted privately ([`Pending`], kept in the session's
//! transaction) and added when it ends, as PostgreSQL's pgstat does: at commit an insert is a
//! live row, an update or delete leaves one dead version; at abort every version the
//! transaction created is dead (its inserts and the new versions of its updates). VACUUM sets
//! `n_live_tup` to the versions it left and `n_dead_tup` to zero.
//!
//! Invariants:
//! 1. Counters live in memory from the database's opening (like PostgreSQL's after a crash,
//!    they start at zero; VACUUM re-establishes `n_live_tup`). `n_tup_*` only grow.
//! 2. Only the transaction's own session writes its [`Pending`]; the shared counters are
//!    atomics, so readers (the view, autovacuum) never block writers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// "Never" for the last-vacuum times.
pub const NEVER: i64 = i64::MIN;

/// One table's counters.
#[derive(Debug)]
pub struct TableCounters {
    pub n_tup_ins: AtomicU64,
    pub n_tup_upd: AtomicU64,
    pub n_tup_hot_upd: AtomicU64,
    pub n_tup_del: AtomicU64,
    pub n_live_tup: AtomicI64,
    pub n_dead_tup: AtomicI64,
    /// Rows inserted since the last VACUUM (autovacuum's insert threshold is not used yet).
    pub n_ins_since_vacuum: AtomicI64,
    pub vacuum_count: AtomicU64,
    pub autovacuum_count: AtomicU64,
    /// Microseconds since 2000-01-01 UTC, or [`NEVER`].
    pub last_vacuum_us: AtomicI64,
    pub last_autovacuum_us: AtomicI64,
    pub analyze_count: AtomicU64,
    pub autoanalyze_count: AtomicU64,
    pub last_analyze_us: AtomicI64,
    pub last_autoanalyze_us: AtomicI64,
    /// Rows inserted, updated and deleted as of the last ANALYZE.
    pub mods_at_analyze: AtomicU64,
}

impl TableCounters {
    /// Rows inserted, updated or deleted since the last ANALYZE (`n_mod_since_analyze`).
    pub fn mods_since_analyze(&self) -> u64 {
        let all = self.n_tup_ins.load(Ordering::Relaxed) + self.n_tup_upd.load(Ordering::Relaxed) + self.n_tup_del.load(Ordering::Relaxed);
        all.saturating_sub(self.mods_at_analyze.load(Ordering::Relaxed))
    }
}

impl Default for TableCounters {
    fn default() -> Self {
        TableCounters {
            n_tup_ins: AtomicU64::new(0),
            n_tup_upd: AtomicU64::new(0),
            n_tup_hot_upd: AtomicU64::new(0),
            n_tup_del: AtomicU64::new(0),
            n_live_tup: AtomicI64::new(0),
            n_dead_tup: AtomicI64::new(0),
            n_ins_since_vacuum: AtomicI64::new(0),
            vacuum_count: AtomicU64::new(0),
            autovacuum_count: AtomicU64::new(0),
            last_vacuum_us: AtomicI64::new(NEVER),
            last_autovacuum_us: AtomicI64::new(NEVER),
            analyze_count: AtomicU64::new(0),
            autoanalyze_count: AtomicU64::new(0),
            last_analyze_us: AtomicI64::new(NEVER),
            last_autoanalyze_us: AtomicI64::new(NEVER),
            mods_at_analyze: AtomicU64::new(0),
        }
    }
}

/// A transaction's changes to one table, not yet counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    pub inserted: u64,
    pub updated: u64,
    pub hot_updated: u64,
    pub deleted: u64,
    /// TRUNCATE ran: what the table held before is gone.
    pub truncated: bool,
}

/// The counters of every table, by table OID.
#[derive(Default)]
pub struct TableStats {
    map: RwLock<HashMap<u32, Arc<TableCounters>>>,
}

impl TableStats {
    /// The counters of table `oid` (created at zero on first use).
    pub fn get(&self, oid: u32) -> Arc<TableCounters> {
        if let Some(c) = self.map.read().unwrap_or_else(|e| e.into_inner()).get(&oid) {
            return c.clone();
        }
        self.map.write().unwrap_or_else(|e| e.into_inner()).entry(oid).or_default().clone()
    }

    /// The counters of table `oid` if it has any.
    pub fn lookup(&self, oid: u32) -> Option<Arc<TableCounters>> {
        self.map.read().unwrap_or_else(|e| e.into_inner()).get(&oid).cloned()
    }

    /// Adds a transaction's changes at its end (module doc).
    pub fn finish(&self, oid: u32, p: &Pending, committed: bool) {
        let c = self.get(oid);
        if committed && p.truncated {
            c.n_live_tup.store(0, Ordering::Relaxed);
            c.n_dead_tup.store(0, Ordering::Relaxed);
        }
        c.n_tup_ins.fetch_add(p.inserted, Ordering::Relaxed);
        c.n_tup_upd.fetch_add(p.updated, Ordering::Relaxed);
        c.n_tup_hot_upd.fetch_add(p.hot_updated, Ordering::Relaxed);
        c.n_tup_del.fetch_add(p.deleted, Ordering::Relaxed);
        let (ins, upd, del) = (p.inserted as i64, p.updated as i64, p.deleted as i64);
        if committed {
            c.n_live_tup.fetch_add(ins - del, Ordering::Relaxed);
            c.n_dead_tup.fetch_add(upd + del, Ordering::Relaxed);
            c.n_ins_since_vacuum.fetch_add(ins, Ordering::Relaxed);
        } else {
            c.n_dead_tup.fetch_add(ins + upd, Ordering::Relaxed);
        }
    }

    /// Records a VACUUM of table `oid` that left `live` versions, at `now_us`.
    pub fn vacuumed(&self, oid: u32, live: u64, auto: bool, now_us: i64) {
        let c = self.get(oid);
        c.n_live_tup.store(live as i64, Ordering::Relaxed);
        c.n_dead_tup.store(0, Ordering::Relaxed);
        c.n_ins_since_vacuum.store(0, Ordering::Relaxed);
        if auto {
            c.autovacuum_count.fetch_add(1, Ordering::Relaxed);
            c.last_autovacuum_us.store(now_us, Ordering::Relaxed);
        } else {
            c.vacuum_count.fetch_add(1, Ordering::Relaxed);
            c.last_vacuum_us.store(now_us, Ordering::Relaxed);
        }
    }

    /// ANALYZE counted `live` rows.
    pub fn analyzed(&self, oid: u32, live: u64, auto: bool, now_us: i64) {
        let c = self.get(oid);
        c.n_live_tup.store(live as i64, Ordering::Relaxed);
        let all = c.n_tup_ins.load(Ordering::Relaxed) + c.n_tup_upd.load(Ordering::Relaxed) + c.n_tup_del.load(Ordering::Relaxed);
        c.mods_at_analyze.store(all, Ordering::Relaxed);
        if auto {
            c.autoanalyze_count.fetch_add(1, Ordering::Relaxed);
            c.last_autoanalyze_us.store(now_us, Ordering::Relaxed);
        } else {
            c.analyze_count.fetch_add(1, Ordering::Relaxed);
            c.last_analyze_us.store(now_us, Ordering::Relaxed);
        }
    }

    /// DROP TABLE: the counters go with the table.
    pub fn forget(&self, oid: u32) {
        self.map.write().unwrap_or_else(|e| e.into_inner()).remove(&oid);
    }
}

/// The current time in microseconds since 2000-01-01 UTC.
pub fn now_us() -> i64 {
    let unix_us = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64);
    unix_us - 946_684_800_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_and_abort_count_as_postgres_does() {
        let s = TableStats::default();
        s.finish(7, &Pending { inserted: 10, updated: 3, hot_updated: 2, deleted: 1, truncated: false }, true);
        let c = s.get(7);
        assert_eq!(c.n_live_tup.load(Ordering::Relaxed), 9);
        assert_eq!(c.n_dead_tup.load(Ordering::Relaxed), 4);
        s.finish(7, &Pending { inserted: 5, updated: 2, hot_updated: 0, deleted: 4, truncated: true }, false);
        assert_eq!(c.n_live_tup.load(Ordering::Relaxed), 9, "an aborted transaction's rows never lived");
        assert_eq!(c.n_dead_tup.load(Ordering::Relaxed), 11, "its inserts and new versions are dead");
        assert_eq!(c.n_tup_ins.load(Ordering::Relaxed), 15);
        s.vacuumed(7, 9, true, 1);
        assert_eq!(c.n_dead_tup.load(Ordering::Relaxed), 0);
        assert_eq!(c.autovacuum_count.load(Ordering::Relaxed), 1);
        assert_eq!(c.last_vacuum_us.load(Ordering::Relaxed), NEVER);
    }
}

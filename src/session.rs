//! A session: what PostgreSQL keeps per backend — private pin counts, the current transaction,
//! its pending catalog changes, and its heavyweight locks (released all at once at transaction end).
//!
//! ```text
//!  idle ──BEGIN──► in block ──COMMIT──► idle
//!   │                 │  error
//!   │                 ▼
//!   │              failed ──COMMIT/ROLLBACK──► idle (rolled back)
//!   └─ statement outside a block: implicit transaction, committed or rolled back at its end
//! ```
//!
//! Invariants:
//! 1. An xid is assigned at the first write of a transaction only; read-only transactions
//!    leave no trace in the commit log.
//! 2. At transaction end the session holds no buffer pins (asserted) and no heavyweight locks.
//! 3. Files created by a transaction are deleted if it aborts; files it made obsolete (DROP,
//!    TRUNCATE) are deleted only after its commit is recorded.
//! 4. Commit order: relations that skipped the WAL are written and fsynced; the catalog change
//!    (if any) and the COMMIT record are inserted into the WAL and, unless
//!    `synchronous_commit = off`, flushed; only then is the transaction marked committed in the
//!    commit log (so no one sees a commit that a crash could lose) and its catalog change saved.
//!    An abort writes an ABORT record without flushing it: a lost one reads as aborted anyway.
//! 5. From the COMMIT record's insertion to the commit log update the session holds
//!    `delay_checkpoint` shared (PostgreSQL's DELAY_CHKPT_START): a checkpoint whose REDO
//!    pointer falls after the record waits for it before saving the commit log, so recovery
//!    never starts past a COMMIT whose commit-log bit the checkpoint did not save.
//! 6. Once the COMMIT record is inserted, the transaction cannot be rolled back: any error
//!    until the end of the commit sequence is a PANIC (the database stops; reopening recovers
//!    the commit from the WAL or not, as a crash would).

use crate::buffer::Pins;
use crate::catalog::Table;
use crate::db::Shared;
use crate::error::{sqlstate, PgError, Result};
use crate::lock::{LockMode, LockTag, SessionLocks};
use crate::storage::{ForkNumber, RelFileNumber};
use crate::txn::{CommandId, Snapshot, Xid, INVALID_XID};
use std::sync::Arc;

/// The failpoint hit after a COMMIT record is inserted and before the commit log is updated.
pub const FAILPOINT_COMMIT_AFTER_RECORD: &str = "commit-after-record";

/// The result of one statement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryResult {
    /// Command tag, as PostgreSQL's CommandComplete: `SELECT 3`, `COPY 5000`, `CREATE TABLE`.
    pub tag: String,
    /// Column names and type names (empty for commands without rows).
    pub columns: Vec<(String, String)>,
    /// Rows in text form; None = NULL.
    pub rows: Vec<Vec<Option<String>>>,
    /// Whether the statement returns rows (a SELECT), even if none.
    pub returns_rows: bool,
    /// Lines to show after the result (EXPLAIN output is rows; notices go here).
    pub notices: Vec<String>,
    /// The statement wrote its data to the client (COPY ... TO STDOUT): psql prints no tag.
    pub wrote_to_client: bool,
}

#[derive(Default)]
pub(crate) struct Txn {
    pub xid: Xid,
    pub cid: CommandId,
    pub creates: Vec<Arc<Table>>,
    pub drops: Vec<Arc<Table>>,
    /// (new definition, old definition)
    pub replaces: Vec<(Arc<Table>, Arc<Table>)>,
    pub new_files: Vec<RelFileNumber>,
    pub dead_files: Vec<RelFileNumber>,
    /// Relations whose changes skipped the WAL (created or truncated in this transaction,
    /// wal_level = minimal): synced at commit.
    pub wal_skipped: Vec<RelFileNumber>,
    /// The transaction wrote WAL for data: its commit must be flushed.
    pub wrote_wal: bool,
    pub explicit: bool,
    pub failed: bool,
}

/// One session. Not `Sync`: use one per thread.
pub struct Session {
    pub(crate) shared: Arc<Shared>,
    pub(crate) pins: Pins,
    pub(crate) id: u64,
    pub(crate) txn: Option<Txn>,
    /// Heavyweight locks held (released at transaction end).
    pub(crate) locks: SessionLocks,
    /// The xmin of the oldest snapshot this transaction took (VACUUM's horizon respects it).
    snapshot_xmin: Arc<std::sync::atomic::AtomicU64>,
}

impl Session {
    pub(crate) fn new(shared: Arc<Shared>, id: u64) -> Session {
        let pins = shared.pool.new_pins();
        let locks = shared.locks.register(id);
        let snapshot_xmin = shared.txns.register_snapshot_slot();
        Session { shared, pins, id, txn: None, locks, snapshot_xmin }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub fn pins(&self) -> &Pins {
        &self.pins
    }

    /// Fails with the PANIC that stopped the database, if one did (every statement after a
    /// PANIC fails; reopening the database recovers).
    pub fn check_not_stopped(&self) -> Result<()> {
        if self.shared.wal.panicked() {
            return self.shared.wal.check_poison();
        }
        Ok(())
    }

    /// True inside BEGIN ... COMMIT.
    pub fn in_transaction_block(&self) -> bool {
        self.txn.as_ref().is_some_and(|t| t.explicit)
    }

    pub(crate) fn txn(&mut self) -> &mut Txn {
        self.txn.as_mut().expect("statement runs inside a transaction")
    }

    /// Starts an implicit transaction if none is open. Returns true if it started one.
    pub(crate) fn begin_implicit(&mut self) -> bool {
        if self.txn.is_some() {
            return false;
        }
        self.txn = Some(Txn::default());
        true
    }

    pub(crate) fn begin_explicit(&mut self) -> Option<String> {
        match &mut self.txn {
            Some(t) if t.explicit => Some("WARNING:  there is already a transaction in progress".into()),
            Some(t) => {
                t.explicit = true;
                None
            }
            None => {
                self.txn = Some(Txn { explicit: true, ..Default::default() });
                None
            }
        }
    }

    /// The transaction's xid, assigning one at the first write.
    pub(crate) fn xid(&mut self) -> Xid {
        let shared = self.shared.clone();
        let t = self.txn();
        if t.xid == INVALID_XID {
            t.xid = shared.txns.assign_xid();
            let xid = t.xid;
            // Others wait for this transaction's end on its lock (heap::dml::wait_for_xid); it
            // conflicts with nothing the transaction could already hold, so it cannot fail.
            shared.locks.lock(&mut self.locks, LockTag::Transaction(xid), LockMode::Exclusive).expect("a new xid's lock is free");
        }
        self.txn().xid
    }

    /// A snapshot for the current statement.
    pub(crate) fn snapshot(&mut self) -> Snapshot {
        let (xid, cid) = {
            let t = self.txn();
            (t.xid, t.cid)
        };
        self.shared.txns.snapshot_published(xid, cid, &self.snapshot_xmin)
    }

    /// Ends the current command: later commands of the transaction see its changes.
    pub(crate) fn command_done(&mut self) {
        if let Some(t) = &mut self.txn {
            t.cid += 1;
        }
    }

    /// Looks a table up as this transaction sees it (its own uncommitted DDL included).
    pub fn lookup_table(&self, name: &str) -> Option<Arc<Table>> {
        if let Some(t) = &self.txn {
            if let Some(x) = t.replaces.iter().rev().find(|(n, _)| n.name == name) {
                return Some(x.0.clone());
            }
            if let Some(x) = t.creates.iter().rev().find(|x| x.name == name) {
                return Some(x.clone());
            }
            if t.drops.iter().any(|d| d.name == name) {
                return None;
            }
        }
        self.shared.catalog.get(name)
    }

    /// Looks up a table or fails with PostgreSQL's 42P01.
    pub fn table(&self, name: &str) -> Result<Arc<Table>> {
        self.lookup_table(name).ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))
    }

    /// Locks a table in `mode` until transaction end (AccessShare for SELECT and COPY TO,
    /// RowExclusive for COPY FROM, AccessExclusive for DROP and TRUNCATE, as PostgreSQL).
    pub(crate) fn lock_table(&mut self, t: &Table, mode: LockMode) -> Result<()> {
        self.shared.locks.lock(&mut self.locks, LockTag::Relation(t.oid), mode)
    }

    /// Commits the current transaction (if any).
    pub(crate) fn commit(&mut self) -> Result<()> {
        let Some(t) = self.txn.take() else { return Ok(()) };
        assert_eq!(self.pins.held(), 0, "buffer pins leaked at commit");
        if t.failed {
            self.finish_abort(t);
            return Ok(());
        }
        match self.commit_durably(&t) {
            Ok(()) => {
                self.release_locks(&t);
                Ok(())
            }
            Err(e) if e.panic => {
                // Invariant 6: neither committed nor aborted in memory; the database has
                // stopped, and recovery decides from the WAL.
                self.release_locks(&t);
                Err(e)
            }
            Err(e) => {
                self.finish_abort(t);
                Err(e)
            }
        }
    }

    /// The commit sequence: relations that skipped the WAL are synced; the catalog change and
    /// the COMMIT record are logged and (with synchronous_commit) flushed; only then is the
    /// transaction marked committed, the catalog saved and dead files deleted.
    fn commit_durably(&mut self, t: &Txn) -> Result<()> {
        if t.xid == INVALID_XID {
            return Ok(());
        }
        let sh = self.shared.clone();
        for &rel in &t.wal_skipped {
            sh.pool.flush_all(&self.pins, Some(rel))?;
            sh.smgr.fsync(rel, ForkNumber::Main)?;
        }
        let ddl = crate::recovery::DdlChange {
            creates: t.creates.iter().map(|x| (**x).clone()).collect(),
            drops: t.drops.iter().map(|d| d.name.clone()).collect(),
            replaces: t.replaces.iter().map(|(n, _)| (**n).clone()).collect(),
            dead_files: t.dead_files.clone(),
        };
        let has_ddl = !ddl.creates.is_empty() || !ddl.drops.is_empty() || !ddl.replaces.is_empty() || !ddl.dead_files.is_empty();
        let _ddl_guard = has_ddl.then(|| sh.ddl_lock.lock().expect("poisoned"));
        let mut rec = crate::wal::RecordBuilder::new();
        if has_ddl {
            rec.begin(crate::recovery::RM_CATALOG, crate::recovery::CATALOG_DDL, t.xid);
            rec.set_main(&serde_json::to_vec(&ddl).expect("serializable"));
            sh.wal.insert(&mut rec)?;
        }
        // Invariant 5: no checkpoint saves the commit log between our COMMIT record and our
        // commit-log bit.
        let _delay = sh.delay_checkpoint.read().unwrap_or_else(|e| e.into_inner());
        rec.begin(crate::recovery::RM_XACT, crate::recovery::XACT_COMMIT, t.xid);
        let (_, end) = sh.wal.insert(&mut rec)?;
        // Invariant 6: from here on, an error is a PANIC.
        let critical = |e: PgError| sh.wal.panic(e.with_context(format!("committing transaction {}", t.xid)));
        sh.wal.failpoints.hit(FAILPOINT_COMMIT_AFTER_RECORD);
        let sync = sh.settings.get("synchronous_commit").map(|v| v != "off").unwrap_or(true);
        if (t.wrote_wal || has_ddl) && sync {
            sh.wal.flush(end).map_err(critical)?;
        }
        if has_ddl {
            let creates: Vec<Arc<Table>> = t.creates.clone();
            let replaces: Vec<Arc<Table>> = t.replaces.iter().map(|(n, _)| n.clone()).collect();
            sh.catalog.apply(&creates, &ddl.drops, &replaces).map_err(critical)?;
        }
        sh.txns.finish(t.xid, true);
        drop(_delay);
        for rel in &t.dead_files {
            sh.pool.drop_relation_buffers(*rel);
            let _ = sh.smgr.unlink(*rel);
        }
        Ok(())
    }

    /// Rolls back the current transaction (if any).
    pub(crate) fn rollback(&mut self) {
        if let Some(t) = self.txn.take() {
            self.finish_abort(t);
        }
    }

    fn finish_abort(&mut self, t: Txn) {
        assert_eq!(self.pins.held(), 0, "buffer pins leaked at abort");
        if t.xid != INVALID_XID {
            // The ABORT record is not flushed: without it recovery treats the xid as aborted
            // anyway.
            let mut rec = crate::wal::RecordBuilder::new();
            rec.begin(crate::recovery::RM_XACT, crate::recovery::XACT_ABORT, t.xid);
            let _ = self.shared.wal.insert(&mut rec);
            self.shared.txns.finish(t.xid, false);
        }
        for rel in &t.new_files {
            self.shared.pool.drop_relation_buffers(*rel);
            let _ = self.shared.smgr.unlink(*rel);
        }
        self.release_locks(&t);
    }

    fn release_locks(&mut self, _t: &Txn) {
        self.snapshot_xmin.store(crate::txn::NO_SNAPSHOT, std::sync::atomic::Ordering::Release);
        self.shared.locks.release_all(&mut self.locks);
    }

    /// Marks the open explicit transaction failed (after an error inside BEGIN ... COMMIT).
    pub(crate) fn mark_failed(&mut self) {
        if let Some(t) = &mut self.txn {
            t.failed = true;
        }
    }

    /// New, empty files for a relation being created or truncated by this transaction.
    pub(crate) fn create_files(&mut self) -> Result<RelFileNumber> {
        let rel = self.shared.catalog.new_relfile();
        self.txn().new_files.push(rel);
        self.shared.smgr.create(rel, ForkNumber::Main)?;
        Ok(rel)
    }

    /// Runs one or more SQL statements; see [`crate::sql`].
    pub fn execute(&mut self, sql: &str) -> Result<Vec<QueryResult>> {
        let mut io = crate::sql::CopyIo::default();
        crate::sql::execute(self, sql, &mut io)
    }

    /// Parses a statement once, for [`Session::execute_prepared`].
    pub fn prepare(&self, sql: &str) -> Result<crate::sql::Prepared> {
        crate::sql::prepare(sql)
    }

    /// Runs a prepared statement with text parameters (`None` = NULL).
    pub fn execute_prepared(&mut self, p: &crate::sql::Prepared, params: &[Option<String>]) -> Result<QueryResult> {
        let mut io = crate::sql::CopyIo::default();
        crate::sql::execute_prepared(self, p, params, &mut io)
    }

    /// Runs statements with COPY's STDIN/STDOUT connected to `io`.
    pub fn execute_with_io(&mut self, sql: &str, io: &mut crate::sql::CopyIo<'_>) -> Result<Vec<QueryResult>> {
        crate::sql::execute(self, sql, io)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.txn.is_some() {
            self.rollback();
        }
        self.shared.txns.unregister_snapshot_slot(&self.snapshot_xmin);
    }
}

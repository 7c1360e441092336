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
//! A block fails at its error the way PostgreSQL's does: with no savepoint open the transaction
//! is aborted there and then (xid aborted, locks released, settings restored), and the failed
//! block that remains holds nothing ([`Session::mark_failed`]).
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
//! 7. Isolation, as PostgreSQL's: READ COMMITTED (and READ UNCOMMITTED, which PostgreSQL runs
//!    as READ COMMITTED) takes a snapshot per statement; REPEATABLE READ takes one at the first
//!    statement and keeps it to the end, and a row change that meets a version changed by a
//!    transaction its snapshot does not see fails with 40001 (`sql::dml`). SERIALIZABLE is
//!    refused (0A000), never run at a weaker level.
//! 8. A READ ONLY transaction gets an xid only to write its temporary tables: every other
//!    writing statement is refused with 25006 before it runs (`sql::write_command`,
//!    `sql::writes_only_temp`: PostgreSQL's rule), and [`Session::xid`] asserts that a READ
//!    ONLY transaction asking for one let such a statement through.
//! 9. Savepoints. A savepoint remembers the transaction's next command id and the lengths of
//!    its pending catalog lists. While one is open, every heap page a row change touches is
//!    noted in the transaction's [`TouchLog`]. ROLLBACK TO SAVEPOINT undoes, on exactly those
//!    pages, what the transaction did from that command on (`access::heap::dml`'s undo:
//!    created tuples dead to everyone, deleted ones live again, WAL-logged), forgets catalog
//!    changes made since (files created since are deleted at transaction end, whichever way it
//!    ends), clears the failed state, and keeps the savepoint with a new subtransaction id
//!    ([`Savepoint::id`]; the old one goes to `undone_log`, for the server to close its
//!    cursors declared under it). Heavyweight locks first taken since are given back
//!    (`lock::manager` invariant 7), but for the tables of cursors and portals that stay open
//!    ([`Session::in_use`]). An error during the undo leaves the transaction failed with no
//!    savepoints: only ROLLBACK ends it, and the abort makes every change of the xid
//!    invisible.
//! 10. Settings are transactional, as PostgreSQL's: a transaction remembers the session's
//!     settings ([`SessionSettings`]) when it starts and each savepoint when it is set; an
//!     abort, or ROLLBACK TO SAVEPOINT, puts them back. SET LOCAL changes only the current
//!     value: from the first one, the transaction also keeps the value each setting will have
//!     at commit (every later SET writes there too, SET LOCAL does not), and commit installs it.
//!     Settings the server keeps (DateStyle, application_name, ...) are restored here as
//!     `client` pairs; the server takes them back ([`Session::take_restored_client_settings`])
//!     before its next ReadyForQuery and reports the changed ones.
//! 11. Temporary relations (`CREATE TEMP TABLE`, the sequences their `serial` columns own)
//!     are the session's own: their committed definitions live in [`Session`]'s `temp` map,
//!     never in the shared catalog or the WAL, and a transaction changes them through the same
//!     pending lists as permanent ones (so a rollback undoes them), applied to the map instead
//!     of the catalog at commit. A name the session looks up finds its temporary relation
//!     before a permanent one (PostgreSQL's `pg_temp` first in the search path); `public.t`
//!     and `pg_temp.t` look in one place only. No name is both a permanent relation (or
//!     index) and any session's committed temporary relation (or index): a statement making
//!     one of the other's name is refused (0A000), and so, checked again under `ddl_lock`
//!     before its COMMIT record, is a commit that would (two transactions that made them at
//!     once: the second to commit fails). `Shared::temp_names` holds every session's
//!     temporary names for that check. So a name means one relation in a session, and
//!     statements built from names (foreign keys' checks and actions, stored defaults, view
//!     queries) cannot reach a temporary table instead of a permanent one. Before a commit, `ON COMMIT DELETE ROWS` tables the transaction wrote are
//!     truncated and `ON COMMIT DROP` tables dropped, in the committing transaction (refused,
//!     as PostgreSQL, where a foreign key of a table keeping its rows references one losing
//!     them). When the session ends, its temporary relations' buffers and files are deleted;
//!     after a crash their files are orphans, deleted at start-up. No change to a temporary
//!     relation is WAL-logged (`exec::rows::wal_for`), nor its files in a commit's record.

use crate::access::heap::dml::TouchLog;
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
    /// For each column that is a table's column: the table's OID and the column's number
    /// (1-based), as RowDescription reports them. Empty, or shorter than `columns`, for
    /// computed columns.
    pub column_sources: Vec<Option<(u32, i16)>>,
}

impl QueryResult {
    /// A result with only a command tag (`CREATE TABLE`, `COPY 5`).
    pub fn tagged(tag: &str) -> QueryResult {
        QueryResult { tag: tag.to_string(), ..Default::default() }
    }
}

/// A transaction isolation level (the four SQL names; see invariant 7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IsolationLevel {
    ReadUncommitted,
    #[default]
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl IsolationLevel {
    /// The name `SHOW transaction_isolation` prints.
    pub fn name(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "read uncommitted",
            IsolationLevel::ReadCommitted => "read committed",
            IsolationLevel::RepeatableRead => "repeatable read",
            IsolationLevel::Serializable => "serializable",
        }
    }

    /// Parses a level as `SET default_transaction_isolation` takes it (any case, one or two
    /// words).
    pub fn parse(s: &str) -> Option<IsolationLevel> {
        let norm = s.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
        [IsolationLevel::ReadUncommitted, IsolationLevel::ReadCommitted, IsolationLevel::RepeatableRead, IsolationLevel::Serializable]
            .into_iter()
            .find(|l| l.name() == norm)
    }

    /// Fails for a level heapstore does not run (invariant 7).
    pub fn check_supported(self) -> Result<IsolationLevel> {
        if self == IsolationLevel::Serializable {
            return Err(PgError::feature("SERIALIZABLE isolation is not supported by heapstore")
                .with_detail("heapstore has no serializable snapshot isolation; it never runs SERIALIZABLE at a weaker level.")
                .with_hint("Use REPEATABLE READ, which PostgreSQL also offers, and retry on SQLSTATE 40001."));
        }
        Ok(self)
    }

    fn keeps_snapshot(self) -> bool {
        matches!(self, IsolationLevel::RepeatableRead | IsolationLevel::Serializable)
    }
}

/// The characteristics a transaction starts with (`SET SESSION CHARACTERISTICS AS
/// TRANSACTION`, `default_transaction_isolation`, `default_transaction_read_only`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxnCharacteristics {
    pub isolation: IsolationLevel,
    pub read_only: bool,
}

/// Every setting a session can change, as one value (invariant 10).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SessionSettings {
    defaults: TxnCharacteristics,
    work_mem_kb: Option<u64>,
    temp_file_limit_kb: Option<i64>,
    client: Arc<Vec<(String, String)>>,
}

impl SessionSettings {
    /// Copies setting `name` (None: every setting) from `from`.
    fn copy_from(&mut self, from: &SessionSettings, name: Option<&str>) {
        let Some(name) = name else {
            *self = from.clone();
            return;
        };
        match name.to_ascii_lowercase().as_str() {
            "work_mem" => self.work_mem_kb = from.work_mem_kb,
            "temp_file_limit" => self.temp_file_limit_kb = from.temp_file_limit_kb,
            "default_transaction_isolation" => self.defaults.isolation = from.defaults.isolation,
            "default_transaction_read_only" => self.defaults.read_only = from.defaults.read_only,
            "session characteristics" => self.defaults = from.defaults,
            other => {
                let Some(v) = from.client.iter().find(|(n, _)| n.eq_ignore_ascii_case(other)) else { return };
                let client = Arc::make_mut(&mut self.client);
                match client.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(other)) {
                    Some(e) => e.1 = v.1.clone(),
                    None => client.push(v.clone()),
                }
            }
        }
    }
}

#[derive(Default)]
pub(crate) struct Txn {
    /// The session's settings when the transaction started: an abort restores them
    /// (invariant 10).
    pub settings_at_start: SessionSettings,
    /// After a SET LOCAL: the settings commit installs (invariant 10).
    pub settings_at_commit: Option<SessionSettings>,
    pub isolation: IsolationLevel,
    pub read_only: bool,
    /// A statement that writes only temporary tables ran in this READ ONLY transaction
    /// (invariant 8).
    pub temp_writes: bool,
    /// REPEATABLE READ: the snapshot taken at the first statement, kept to the end.
    pub snapshot: Option<Snapshot>,
    /// When the transaction started, in microseconds since 2000-01-01 UTC (`now()`).
    pub start_us: i64,
    /// A statement other than transaction control has run (SET TRANSACTION ISOLATION LEVEL
    /// must come before).
    pub ran_statement: bool,
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
    /// Open savepoints, oldest first (invariant 9).
    pub savepoints: Vec<Savepoint>,
    /// Checks of deferred foreign keys waiting for COMMIT (`exec::fk` invariant 3).
    pub fk_deferred: Vec<crate::exec::fk::Tracker>,
    /// `SET CONSTRAINTS`: ALL's mode (true: deferred), then each named constraint's.
    pub constraint_modes: (Option<bool>, Vec<(u32, bool)>),
    /// Pages changed since the oldest open savepoint (kept while one is open).
    pub touched: Option<Arc<TouchLog>>,
    /// Row changes by table OID, counted into `pg_stat_user_tables` when the transaction ends.
    pub counts: Vec<(u32, crate::stats::tables::Pending)>,
}

/// An open savepoint: where ROLLBACK TO SAVEPOINT returns the transaction to.
#[derive(Debug)]
pub(crate) struct Savepoint {
    pub name: String,
    /// The subtransaction it starts, unique within the session; ROLLBACK TO gives the
    /// savepoint a new one (PostgreSQL starts a new subtransaction there).
    pub id: u64,
    /// The first command after it: changes made at or after this command are undone.
    pub cid: CommandId,
    /// The touch log's length when it was set.
    touch_len: usize,
    /// The pending catalog lists when it was set, restored whole by ROLLBACK TO (DDL edits
    /// and removes entries in place, so lengths would not do).
    creates: Vec<Arc<Table>>,
    drops: Vec<Arc<Table>>,
    replaces: Vec<(Arc<Table>, Arc<Table>)>,
    new_files: usize,
    dead_files: Vec<RelFileNumber>,
    /// The transaction's row-lock acquisitions when it was set (`txn::rowlock`): ROLLBACK TO
    /// releases those after it, as PostgreSQL's aborted subtransaction releases its row locks.
    row_locks: u64,
    /// The session's lock journal's length when it was set (`LockManager::xact_mark`):
    /// ROLLBACK TO gives back the relation and advisory locks first taken after it.
    locks: usize,
    /// The session's settings, and the transaction's settings for commit, when it was set
    /// (invariant 10).
    settings: SessionSettings,
    settings_at_commit: Option<SessionSettings>,
    /// The deferred foreign-key checks queued, and the SET CONSTRAINTS modes, when it was set
    /// (`exec::fk` invariant 3: a copy, since SET CONSTRAINTS ... IMMEDIATE takes checks out).
    fk_deferred: Vec<crate::exec::fk::Tracker>,
    constraint_modes: (Option<bool>, Vec<(u32, bool)>),
}

/// One session. Not `Sync`: use one per thread.
pub struct Session {
    pub(crate) shared: Arc<Shared>,
    pub(crate) pins: Pins,
    pub(crate) id: u64,
    pub(crate) txn: Option<Txn>,
    /// Heavyweight locks held (released at transaction end).
    /// In a cell so that a COPY can hold them while a per-row DEFAULT reads the session
    /// (`copy::exec`); everything else borrows them through `&mut self` (`get_mut`).
    pub(crate) locks: std::cell::RefCell<SessionLocks>,
    /// The xmin of the oldest snapshot this transaction took (VACUUM's horizon respects it).
    snapshot_xmin: Arc<std::sync::atomic::AtomicU64>,
    /// What new transactions start with.
    pub(crate) defaults: TxnCharacteristics,
    /// `work_mem` (kB) and `temp_file_limit` (kB, -1 unlimited) as this session set them
    /// (None: the server's setting).
    pub(crate) work_mem_kb: Option<u64>,
    pub(crate) temp_file_limit_kb: Option<i64>,
    /// The role and database the session connected as (`current_user`, `current_database()`,
    /// `pg_database`): "postgres" for both unless the server says otherwise.
    user: String,
    database: String,
    /// Session settings the client can see that live outside the engine (the server's
    /// TimeZone, DateStyle, application_name, ...), for `pg_settings`.
    client_settings: Arc<Vec<(String, String)>>,
    /// The zone `TimeZone` in `client_settings` names (`None`: UTC), installed on the thread
    /// whenever it changes (`types::tz` invariant).
    time_zone: Option<crate::types::tz::SessionZone>,
    /// The `TimeZone` text `time_zone` was made from.
    time_zone_name: Option<String>,
    /// The server's `TimeZone` (heapstore.conf or --set; None: UTC), what a session that never
    /// set its own runs in: read once, when the session starts.
    server_time_zone: Option<String>,
    /// Their values at the session's start, what RESET returns to (`pg_settings.reset_val`).
    client_reset: Arc<Vec<(String, String)>>,
    /// The settings the client gave at connection (startup packet, `options`): their
    /// `pg_settings.source` is "client".
    client_given: Arc<Vec<String>>,
    /// The planner settings the session's parameters set (None: the server's), kept with
    /// them so that planning reads them without a lookup.
    planner_costs: Option<crate::sql::cost::Costs>,
    /// An abort or commit put back `client_settings` (invariant 10): the server takes them.
    client_restored: bool,
    /// Sequence values this session was given (`currval`), by sequence oid, and the sequence
    /// `nextval` last ran on (`lastval`): `sql::sequence` invariant 3.
    seq_values: std::cell::RefCell<std::collections::HashMap<u32, i64>>,
    seq_last: std::cell::Cell<Option<u32>>,
    /// The end of the last WAL record a sequence function wrote in this transaction: flushed
    /// at commit (`sql::sequence` invariant 2).
    seq_flush: std::cell::Cell<crate::wal::Lsn>,
    /// Foreign keys' key lookups, planned once per table definition (`exec::fk`).
    pub(crate) fk_probes: std::cell::RefCell<crate::exec::fk::ProbeCache>,
    /// Partial indexes' bound predicates, by table definition (`exec::rows`).
    pub(crate) index_preds: std::cell::RefCell<crate::exec::rows::PredicateCache>,
    /// Foreign-key work of the statements a referential action ran, done by the outermost
    /// statement's [`crate::exec::fk::Tracker::finish`] in a loop rather than by recursion.
    pub(crate) fk_queue: std::cell::RefCell<Vec<crate::exec::fk::Tracker>>,
    pub(crate) fk_nested: std::cell::Cell<bool>,
    /// The tables this session's open cursors and suspended portals read (the server sets
    /// them before each statement), each with the subtransactions open when its cursor was
    /// declared ([`Session::open_subxacts`]; none for a portal): DDL on one of them is refused
    /// with 55006, as PostgreSQL's CheckTableNotInUse does, and ROLLBACK TO SAVEPOINT keeps
    /// their locks unless it closes the cursor.
    pub in_use: Vec<(u32, Vec<u64>)>,
    /// How many transactions this session has ended: what a portal opened in one compares
    /// with to know that its transaction is over.
    pub ended_txns: u64,
    /// Set by the server: commits and ROLLBACK TO are noted in the two lists below, which the
    /// server takes after each statement to close its SQL cursors (a WITH HOLD cursor outlives
    /// its transaction only if it committed; ROLLBACK TO closes those declared since).
    pub(crate) log_ends: bool,
    /// The transactions committed since the server last took the list, by the value
    /// `ended_txns` had while each ran.
    pub(crate) committed_log: Vec<u64>,
    /// The subtransactions ([`Savepoint::id`]) ROLLBACK TO SAVEPOINT undid since the server
    /// last took the list.
    pub(crate) undone_log: Vec<u64>,
    /// The last subtransaction id handed to a savepoint ([`Savepoint::id`]).
    subxact_seq: u64,
    /// When the current client message arrived (microseconds since 2000-01-01):
    /// `statement_timestamp()`, and the start of a transaction the statement begins. Set by
    /// [`Session::mark_statement_start`]; `None` before the first statement.
    stmt_start_us: Option<i64>,
    /// The statement being planned has bound a C-like `COLLATE`
    /// (`SubqueryBinder::c_collation_seen`); reset before each statement.
    pub(crate) c_collate: std::cell::Cell<bool>,
    /// The session's committed temporary relations, by name (invariant 11).
    temp: std::collections::BTreeMap<String, Arc<Table>>,
    /// The `ON COMMIT` action of temporary tables, by oid (entries of relations that no
    /// longer exist are ignored and pruned at commit).
    on_commit: std::collections::HashMap<u32, crate::catalog::OnCommit>,
    /// The oid of the session's temporary schema (`pg_temp_N`), from its first temporary
    /// relation on, as PostgreSQL makes it on first use.
    temp_namespace: std::cell::Cell<Option<u32>>,
}

/// The temporary or the permanent relations of `all` (those committed) as transaction `txn`
/// sees them (its pending creates, drops and replaces applied).
fn visible_with(txn: Option<&Txn>, temp: bool, mut all: Vec<Arc<Table>>) -> Vec<Arc<Table>> {
    if let Some(t) = txn {
        let mine = |x: &Arc<Table>| x.is_temp() == temp;
        all.retain(|x| {
            !t.drops.iter().filter(|d| mine(d)).any(|d| d.name == x.name)
                && !t.replaces.iter().filter(|(n, _)| mine(n)).any(|(n, _)| n.name == x.name)
        });
        all.extend(t.replaces.iter().map(|(n, _)| n).filter(|n| mine(n)).cloned());
        let created: Vec<Arc<Table>> = t.creates.iter().filter(|c| mine(c) && !all.iter().any(|x| x.name == c.name)).cloned().collect();
        all.extend(created);
    }
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all.dedup_by(|a, b| a.name == b.name);
    all
}

/// The time now in microseconds since PostgreSQL's epoch, 2000-01-01 00:00:00 UTC (946,684,800 s
/// after the Unix epoch).
fn pg_now_us() -> i64 {
    let unix_us = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64);
    unix_us - 946_684_800_000_000
}

impl Session {
    /// A client message that runs or prepares statements arrived (Query, Parse, Bind, Execute,
    /// or a library call): `statement_timestamp()` reads this time from now on, as PostgreSQL
    /// sets it per message, and a transaction the statement starts starts at it.
    pub fn mark_statement_start(&mut self) {
        self.c_collate.set(false);
        // This session's time zone on the thread running its statement (`types::tz`).
        crate::types::tz::set_session(self.time_zone.clone());
        let now = pg_now_us();
        self.stmt_start_us = Some(now);
        // `'now'` in input text is the transaction's start: an open one's, or this
        // statement's, which starts the next (`new_txn`).
        crate::types::tz::set_transaction_start(Some(self.txn.as_ref().map_or(now, |t| t.start_us)));
    }

    /// When the open transaction started (None: none is open).
    pub(crate) fn transaction_start_us(&self) -> Option<i64> {
        self.txn.as_ref().map(|t| t.start_us)
    }

    /// `statement_timestamp()`: when the current message arrived (the time now if none did).
    pub fn statement_start_us(&self) -> i64 {
        self.stmt_start_us.unwrap_or_else(pg_now_us)
    }

    /// 55006 when an open cursor of this session reads `table` (`what`: the command, as
    /// PostgreSQL names it in the message).
    pub(crate) fn check_not_in_use(&self, table: &crate::catalog::Table, what: &str) -> Result<()> {
        if self.in_use.iter().any(|(oid, _)| *oid == table.oid) {
            return Err(PgError::new(
                "55006",
                format!("cannot {what} \"{}\" because it is being used by active queries in this session", table.name),
            ));
        }
        // Deferred foreign-key checks read the tables as they are when they run (`exec::fk`
        // invariant 3): no DDL under them, as PostgreSQL's pending trigger events.
        if self.txn.as_ref().is_some_and(|t| t.fk_deferred.iter().any(|tr| tr.involves(table.oid))) {
            return Err(PgError::new("55006", format!("cannot {what} \"{}\" because it has pending trigger events", table.name)));
        }
        Ok(())
    }

    pub(crate) fn new(shared: Arc<Shared>, id: u64) -> Session {
        let pins = shared.pool.new_pins();
        let locks = shared.locks.register(id);
        let snapshot_xmin = shared.txns.register_snapshot_slot();
        let server_time_zone = Some(shared.settings.time_zone()).filter(|z| z != "UTC");
        let time_zone = server_time_zone.as_deref().and_then(|n| crate::types::tz::setting(n).ok()).and_then(|(_, z)| z);
        Session {
            shared,
            pins,
            id,
            txn: None,
            locks: std::cell::RefCell::new(locks),
            snapshot_xmin,
            defaults: TxnCharacteristics::default(),
            work_mem_kb: None,
            temp_file_limit_kb: None,
            user: "postgres".into(),
            database: "postgres".into(),
            client_settings: Default::default(),
            time_zone,
            time_zone_name: server_time_zone.clone(),
            server_time_zone,
            client_reset: Default::default(),
            client_given: Default::default(),
            planner_costs: None,
            client_restored: false,
            seq_values: Default::default(),
            seq_last: Default::default(),
            seq_flush: Default::default(),
            fk_probes: Default::default(),
            index_preds: Default::default(),
            fk_queue: Default::default(),
            fk_nested: Default::default(),
            in_use: Vec::new(),
            ended_txns: 0,
            log_ends: false,
            committed_log: Vec::new(),
            undone_log: Vec::new(),
            subxact_seq: 0,
            stmt_start_us: None,
            c_collate: Default::default(),
            temp: Default::default(),
            on_commit: Default::default(),
            temp_namespace: Default::default(),
        }
    }

    /// Notes a WAL record a sequence function wrote (flushed at commit).
    pub(crate) fn note_seq_lsn(&self, end: crate::wal::Lsn) {
        if end > self.seq_flush.get() {
            self.seq_flush.set(end);
        }
    }

    /// Notes the value a sequence gave this session (`currval`, `lastval`).
    pub(crate) fn note_seq_value(&self, oid: u32, v: i64) {
        self.seq_values.borrow_mut().insert(oid, v);
        self.seq_last.set(Some(oid));
    }

    /// `DISCARD SEQUENCES`: `currval` and `lastval` know no value until the next `nextval`.
    pub(crate) fn forget_sequence_values(&self) {
        self.seq_values.borrow_mut().clear();
        self.seq_last.set(None);
    }

    pub(crate) fn seq_value(&self, oid: u32) -> Option<i64> {
        self.seq_values.borrow().get(&oid).copied()
    }

    /// The sequence `nextval` last ran on in this session, and its `currval`.
    pub(crate) fn seq_last(&self) -> Option<(u32, i64)> {
        let oid = self.seq_last.get()?;
        Some((oid, self.seq_value(oid)?))
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// Sets who the session is (the server, after authentication).
    pub fn set_identity(&mut self, user: &str, database: &str) {
        self.user = user.to_string();
        self.database = database.to_string();
    }

    /// The session's role and database.
    pub fn identity(&self) -> crate::sql::pg_catalog::Identity<'_> {
        crate::sql::pg_catalog::Identity { user: &self.user, database: &self.database }
    }

    /// The settings kept outside the engine as the session starts: their values now, and what
    /// RESET returns them to.
    pub fn start_client_settings(&mut self, settings: Vec<(String, String)>) {
        self.client_reset = Arc::new(settings.clone());
        self.set_client_settings(settings);
    }

    /// Notes the settings the client gave at connection (`pg_settings.source` "client").
    pub fn set_client_given(&mut self, names: Vec<String>) {
        self.client_given = Arc::new(names);
    }

    /// Whether the client gave setting `name` at connection.
    pub(crate) fn client_gave(&self, name: &str) -> bool {
        self.client_given.iter().any(|n| n.eq_ignore_ascii_case(name))
    }

    /// The value RESET gives a setting kept outside the engine (None: not one).
    pub(crate) fn client_reset_value(&self, name: &str) -> Option<String> {
        self.client_reset.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone())
    }

    /// Replaces the settings kept outside the engine that `pg_settings` shows.
    pub fn set_client_settings(&mut self, settings: Vec<(String, String)>) {
        self.client_settings = Arc::new(settings);
        self.planner_costs = crate::sql::cost::Costs::of_session(self);
        self.install_time_zone();
    }

    /// Reads `TimeZone` from the client settings (already checked when set) and installs it
    /// on this thread.
    fn install_time_zone(&mut self) {
        // Not set in the session: the server's (`TimeZone` in heapstore.conf or --set).
        let name = self.client_setting("TimeZone").or(self.server_time_zone.as_deref());
        if name != self.time_zone_name.as_deref() {
            let zone = match name {
                Some(v) => crate::types::tz::setting(v).ok().and_then(|(_, z)| z),
                None => None,
            };
            self.time_zone_name = name.map(str::to_string);
            self.time_zone = zone;
        }
        crate::types::tz::set_session(self.time_zone.clone());
    }

    /// The session's `TimeZone`: as set, else the server's.
    pub(crate) fn time_zone_setting(&self) -> String {
        self.client_setting("TimeZone").or(self.server_time_zone.as_deref()).unwrap_or("UTC").to_string()
    }

    /// The session's `TimeZone` as set (None: never set, UTC).
    pub(crate) fn time_zone_name(&self) -> Option<&str> {
        self.time_zone_name.as_deref()
    }

    /// The session's time zone (`None`: UTC), for threads and entry points that install it
    /// (`types::tz::scope`).
    pub fn time_zone(&self) -> Option<crate::types::tz::SessionZone> {
        self.time_zone.clone()
    }

    /// The planner settings in force (`sql::cost`).
    pub(crate) fn planner_costs(&self) -> crate::sql::cost::Costs {
        self.planner_costs.unwrap_or(self.shared.planner_costs)
    }

    /// One session parameter's value (by any capitalization), without copying the list.
    pub(crate) fn client_setting(&self, name: &str) -> Option<&str> {
        self.client_settings.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub(crate) fn client_settings(&self) -> Vec<(String, String)> {
        self.client_settings.as_ref().clone()
    }

    /// The server's settings as an abort or commit put them back (invariant 10), once: the
    /// server installs them and reports the changed ones.
    pub fn take_restored_client_settings(&mut self) -> Option<Vec<(String, String)>> {
        std::mem::take(&mut self.client_restored).then(|| self.client_settings())
    }

    /// Every setting the session changed, as one value.
    fn settings(&self) -> SessionSettings {
        SessionSettings {
            defaults: self.defaults,
            work_mem_kb: self.work_mem_kb,
            temp_file_limit_kb: self.temp_file_limit_kb,
            client: self.client_settings.clone(),
        }
    }

    fn restore_settings(&mut self, s: SessionSettings) {
        if s.client != self.client_settings {
            self.client_restored = true;
        }
        self.defaults = s.defaults;
        self.work_mem_kb = s.work_mem_kb;
        self.temp_file_limit_kb = s.temp_file_limit_kb;
        self.client_settings = s.client;
        self.planner_costs = crate::sql::cost::Costs::of_session(self);
        self.install_time_zone();
    }

    /// Before a SET (`local`: SET LOCAL) of any setting (invariant 10). Returns false for a SET
    /// LOCAL outside a transaction block, which PostgreSQL warns about and which changes
    /// nothing: the caller must not apply it.
    pub fn begin_setting(&mut self, local: bool) -> bool {
        if !local {
            return true;
        }
        if !self.in_transaction_block() {
            return false;
        }
        let now = self.settings();
        self.txn().settings_at_commit.get_or_insert(now);
        true
    }

    /// After a SET of `name` (None: RESET ALL) applied (invariant 10): a session-level SET in
    /// a transaction that used SET LOCAL also writes the value commit installs.
    pub fn end_setting(&mut self, name: Option<&str>, local: bool) {
        if local {
            return;
        }
        let now = self.settings();
        if let Some(view) = self.txn.as_mut().and_then(|t| t.settings_at_commit.as_mut()) {
            view.copy_from(&now, name);
        }
    }

    /// Every relation as this transaction sees it (its own uncommitted DDL included), by name;
    /// the session's temporary relations (invariant 11) before a permanent one of the same
    /// name.
    pub fn visible_tables(&self) -> Vec<Arc<Table>> {
        let mut all = self.visible_in(false, self.shared.catalog.tables());
        all.extend(self.visible_in(true, self.temp.values().cloned().collect()));
        all.sort_by(|a, b| a.name.cmp(&b.name).then(b.is_temp().cmp(&a.is_temp())));
        all
    }

    /// The temporary or the permanent relations (`committed`: those committed) as this
    /// transaction sees them.
    fn visible_in(&self, temp: bool, all: Vec<Arc<Table>>) -> Vec<Arc<Table>> {
        visible_with(self.txn.as_ref(), temp, all)
    }

    /// Whether a committed temporary table of the session has a foreign key (the shared
    /// catalog, which [`crate::catalog::Catalog::any_foreign_keys`] reads, never holds them).
    pub(crate) fn temp_foreign_keys(&self) -> bool {
        self.temp.values().any(|t| !t.foreign_keys.is_empty())
    }

    /// The session's temporary relations as this transaction sees them.
    pub(crate) fn temp_tables(&self) -> Vec<Arc<Table>> {
        self.visible_in(true, self.temp.values().cloned().collect())
    }

    /// The oid of the session's temporary schema (`pg_temp_N`), made on first use.
    pub(crate) fn temp_namespace(&self) -> u32 {
        if let Some(o) = self.temp_namespace.get() {
            return o;
        }
        let o = self.shared.catalog.new_oid();
        self.temp_namespace.set(Some(o));
        o
    }

    /// The session's temporary schema's oid if it has one (`pg_namespace`).
    pub(crate) fn temp_namespace_if_any(&self) -> Option<u32> {
        self.temp_namespace.get()
    }

    /// Notes the `ON COMMIT` action of temporary table `oid`.
    pub(crate) fn set_on_commit(&mut self, oid: u32, action: crate::catalog::OnCommit) {
        if action == crate::catalog::OnCommit::PreserveRows {
            self.on_commit.remove(&oid);
        } else {
            self.on_commit.insert(oid, action);
        }
    }

    /// Waits until transaction `xid` has ended (`heap::dml::wait_for_xid`).
    pub(crate) fn wait_for_xid(&mut self, xid: crate::txn::Xid) -> Result<()> {
        let shared = self.shared.clone();
        crate::access::heap::dml::wait_for_xid(&shared.locks, &shared.txns, self.locks.get_mut(), xid)
    }

    /// `work_mem` in bytes: what a sort or hash may hold in memory before it spills.
    pub fn work_mem_bytes(&self) -> u64 {
        self.work_mem_kb.unwrap_or_else(|| self.shared.settings.bytes("work_mem") / 1024) * 1024
    }

    /// `temp_file_limit` in kB (-1: unlimited).
    pub fn temp_file_limit_kb(&self) -> i64 {
        self.temp_file_limit_kb.unwrap_or_else(|| self.shared.settings.int("temp_file_limit"))
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
        self.txn = Some(self.new_txn(false));
        true
    }

    fn new_txn(&self, explicit: bool) -> Txn {
        // As PostgreSQL's xactStartTimestamp: the start of the statement that begins it.
        Txn {
            explicit,
            settings_at_start: self.settings(),
            isolation: self.defaults.isolation,
            read_only: self.defaults.read_only,
            start_us: self.statement_start_us(),
            ..Default::default()
        }
    }

    /// `RESET ALL`: the session's own settings back to the server's (transaction
    /// characteristics, work_mem, temp_file_limit).
    pub fn reset_session_settings(&mut self) -> Result<()> {
        self.set_transaction_defaults(TxnCharacteristics::default())?;
        self.work_mem_kb = None;
        self.temp_file_limit_kb = None;
        Ok(())
    }

    /// The characteristics new transactions start with.
    pub fn transaction_defaults(&self) -> TxnCharacteristics {
        self.defaults
    }

    /// Sets what new transactions start with (`SET SESSION CHARACTERISTICS`).
    pub fn set_transaction_defaults(&mut self, c: TxnCharacteristics) -> Result<()> {
        c.isolation.check_supported()?;
        self.defaults = c;
        Ok(())
    }

    /// The current transaction's characteristics (the defaults outside one).
    pub fn transaction_characteristics(&self) -> TxnCharacteristics {
        match &self.txn {
            Some(t) => TxnCharacteristics { isolation: t.isolation, read_only: t.read_only },
            None => self.defaults,
        }
    }

    /// `SET TRANSACTION` / `BEGIN ...` modes for the open transaction: the level only before its
    /// first statement (25001, as PostgreSQL), READ WRITE never after READ ONLY has had a
    /// statement run (25001 too).
    pub(crate) fn set_transaction_modes(&mut self, isolation: Option<IsolationLevel>, read_only: Option<bool>) -> Result<()> {
        if let Some(l) = isolation {
            l.check_supported()?;
        }
        let t = self.txn();
        if let Some(l) = isolation {
            if t.ran_statement && l != t.isolation {
                return Err(PgError::new(
                    sqlstate::ACTIVE_SQL_TRANSACTION,
                    "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                ));
            }
            t.isolation = l;
        }
        if let Some(ro) = read_only {
            if t.read_only && !ro && t.ran_statement {
                return Err(PgError::new(sqlstate::ACTIVE_SQL_TRANSACTION, "transaction read-write mode must be set before any query"));
            }
            t.read_only = ro;
        }
        Ok(())
    }

    /// [`Session::check_writable`], but for a statement that writes only temporary tables
    /// (`temp`), which a READ ONLY transaction may run (invariant 8).
    pub(crate) fn check_writable_unless_temp(&mut self, command: &str, temp: bool) -> Result<()> {
        if temp {
            if let Some(t) = self.txn.as_mut().filter(|t| t.read_only) {
                t.temp_writes = true;
            }
            return Ok(());
        }
        self.check_writable(command)
    }

    /// Fails with 25006 if the transaction is READ ONLY (invariant 8). `command` is the
    /// statement's tag word (INSERT, UPDATE, COPY FROM, ...).
    pub(crate) fn check_writable(&self, command: &str) -> Result<()> {
        if self.txn.as_ref().is_some_and(|t| t.read_only) {
            return Err(PgError::new(sqlstate::READ_ONLY_SQL_TRANSACTION, format!("cannot execute {command} in a read-only transaction")));
        }
        Ok(())
    }

    /// Whether the transaction keeps one snapshot (REPEATABLE READ): a row change that meets
    /// a concurrent change fails with 40001 instead of following it.
    pub(crate) fn snapshot_is_transaction_wide(&self) -> bool {
        self.txn.as_ref().is_some_and(|t| t.isolation.keeps_snapshot())
    }

    pub(crate) fn begin_explicit(&mut self) -> Option<String> {
        match &mut self.txn {
            Some(t) if t.explicit => Some("WARNING:  there is already a transaction in progress".into()),
            Some(t) => {
                t.explicit = true;
                None
            }
            None => {
                self.txn = Some(self.new_txn(true));
                None
            }
        }
    }

    /// The transaction's xid, assigning one at the first write.
    pub(crate) fn xid(&mut self) -> Xid {
        let shared = self.shared.clone();
        let t = self.txn();
        if t.xid == INVALID_XID {
            // Invariant 8: writing statements were refused before they ran, but for those
            // that write only temporary tables.
            assert!(!t.read_only || t.temp_writes, "an xid assigned in a READ ONLY transaction");
            t.xid = shared.txns.assign_xid();
            let xid = t.xid;
            // Others wait for this transaction's end on its lock (heap::dml::wait_for_xid); it
            // conflicts with nothing the transaction could already hold, so it cannot fail.
            shared.locks.lock(self.locks.get_mut(), LockTag::Transaction(xid), LockMode::Exclusive).expect("a new xid's lock is free");
        }
        self.txn().xid
    }

    /// A snapshot for the current statement.
    /// REPEATABLE READ reuses the transaction's first snapshot, seen with the current xid
    /// (assigned, perhaps, after it was taken) and command (invariant 7).
    pub(crate) fn snapshot(&mut self) -> Snapshot {
        let t = self.txn();
        let (xid, cid) = (t.xid, t.cid);
        if let Some(snap) = &t.snapshot {
            let mut snap = snap.clone();
            snap.me = xid;
            snap.cid = cid;
            return snap;
        }
        t.ran_statement = true;
        let keep = t.isolation.keeps_snapshot();
        let snap = self.shared.txns.snapshot_published(xid, cid, &self.snapshot_xmin);
        if keep {
            self.txn().snapshot = Some(snap.clone());
        }
        snap
    }

    /// Ends the current command: later commands of the transaction see its changes.
    pub(crate) fn command_done(&mut self) {
        if let Some(t) = &mut self.txn {
            t.cid += 1;
            // A temporary-table write let an xid be assigned for that statement only
            // (invariant 8).
            t.temp_writes = false;
        }
    }

    /// Looks a relation up as this transaction sees it (its own uncommitted DDL included).
    /// `key` is a name, or a [`crate::catalog::relation_key`] naming the schema too: an
    /// unqualified name finds the session's temporary relation first (invariant 11).
    pub fn lookup_table(&self, key: &str) -> Option<Arc<Table>> {
        use crate::catalog::Schema;
        match crate::catalog::split_key(key) {
            (None, name) => self.lookup_in(true, name).or_else(|| self.lookup_in(false, name)),
            (Some(Schema::Temp), name) => self.lookup_in(true, name),
            (Some(Schema::Public), name) => self.lookup_in(false, name),
        }
    }

    /// Looks a temporary or a permanent relation up by name.
    fn lookup_in(&self, temp: bool, name: &str) -> Option<Arc<Table>> {
        if temp && self.temp.is_empty() && !self.txn.as_ref().is_some_and(|t| t.creates.iter().any(|c| c.is_temp())) {
            return None;
        }
        if let Some(t) = &self.txn {
            let mine = |x: &Arc<Table>| x.is_temp() == temp && x.name == name;
            if let Some(x) = t.replaces.iter().rev().find(|(n, _)| mine(n)) {
                return Some(x.0.clone());
            }
            if let Some(x) = t.creates.iter().rev().find(|x| mine(x)) {
                return Some(x.clone());
            }
            if t.drops.iter().any(mine) {
                return None;
            }
        }
        if temp {
            self.temp.get(name).cloned()
        } else {
            self.shared.catalog.get(name)
        }
    }

    /// Looks up an ordinary table or fails: 42P01 if there is no relation of that name,
    /// 42809 if it is a sequence or a view (row statements, COPY, TRUNCATE, indexes).
    pub fn table(&self, name: &str) -> Result<Arc<Table>> {
        let t = self.table_any(name)?;
        let name = crate::catalog::key_display(name);
        if matches!(t.kind, crate::catalog::RelKind::View(_)) {
            return Err(PgError::feature(format!("cannot change view \"{name}\""))
                .with_detail("Automatically updatable views are not supported by heapstore: change the view's table."));
        }
        if !t.is_table() {
            return Err(PgError::new("42809", format!("\"{name}\" is not a table"))
                .with_detail(format!("This operation is not supported for {}s.", t.kind_name())));
        }
        Ok(t)
    }

    /// Looks up a relation of any kind (table, sequence, view) or fails with 42P01.
    pub fn table_any(&self, name: &str) -> Result<Arc<Table>> {
        self.lookup_table(name).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", crate::catalog::key_display(name)))
        })
    }

    /// Locks a table in `mode` until transaction end (AccessShare for SELECT and COPY TO,
    /// RowExclusive for COPY FROM, AccessExclusive for DROP and TRUNCATE, as PostgreSQL).
    pub(crate) fn lock_table(&mut self, t: &Table, mode: LockMode) -> Result<()> {
        self.shared.locks.lock(self.locks.get_mut(), LockTag::Relation(t.oid), mode)
    }

    /// Locks a table a statement has looked up but not yet bound anything to, and returns its
    /// definition as of now (an ALTER TABLE that committed while the lock was waited for is
    /// seen, as PostgreSQL locks before it analyzes a statement). A table dropped meanwhile
    /// is an error.
    pub(crate) fn lock_table_current(&mut self, t: &Arc<Table>, mode: LockMode) -> Result<Arc<Table>> {
        self.lock_table(t, mode)?;
        match self.lookup_in(t.is_temp(), &t.name) {
            Some(now) if now.oid == t.oid => Ok(now),
            _ => Err(PgError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{}\" was dropped while the statement waited for it", t.name),
            )),
        }
    }

    /// A relation a query names, locked ACCESS SHARE first inside a transaction (as
    /// PostgreSQL locks while it parses), then looked up again: the definition a plan is made
    /// from cannot change before it runs (a DDL that committed while the lock was waited for
    /// is seen). Outside a transaction (Describe) nothing is locked.
    pub(crate) fn relation_for_query(&self, name: &str) -> Result<Arc<Table>> {
        let mut t = self.table_any(name)?;
        if self.txn.is_none() {
            return Ok(t);
        }
        // The name may have come to mean another relation while its lock was waited for
        // (dropped and made again): then that one is locked too, until the name holds still.
        loop {
            let mut locks = self.locks.try_borrow_mut().map_err(|_| PgError::internal("lock table borrowed while planning"))?;
            self.shared.locks.lock(&mut locks, LockTag::Relation(t.oid), LockMode::AccessShare)?;
            drop(locks);
            match self.lookup_table(name) {
                Some(now) if now.oid == t.oid => return Ok(now),
                Some(now) => t = now,
                None => {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_TABLE,
                        format!("relation \"{}\" does not exist", crate::catalog::key_display(name)),
                    ))
                }
            }
        }
    }

    /// Locks any object until transaction end (foreign keys' key locks: `exec::fk`).
    pub(crate) fn lock_tag(&mut self, tag: LockTag, mode: LockMode) -> Result<()> {
        self.shared.locks.lock(self.locks.get_mut(), tag, mode)
    }

    /// A snapshot of this moment, whatever the isolation level (`exec::fk` invariant 1): it
    /// sees every transaction committed now, and this transaction's changes up to the current
    /// command. Its xmin is published only if lower than the session's.
    pub(crate) fn latest_snapshot(&mut self) -> Snapshot {
        let t = self.txn();
        let (xid, cid) = (t.xid, t.cid);
        self.shared.txns.snapshot_published(xid, cid, &self.snapshot_xmin)
    }

    /// As [`Session::lock_table`] without waiting: false if the lock is not free now.
    pub(crate) fn try_lock_table(&mut self, t: &Table, mode: LockMode) -> bool {
        self.shared.locks.try_lock(self.locks.get_mut(), LockTag::Relation(t.oid), mode)
    }

    /// Notes row changes to table `oid` for its statistics (counted when the transaction ends).
    pub(crate) fn count_changes(&mut self, oid: u32, f: impl FnOnce(&mut crate::stats::tables::Pending)) {
        let t = self.txn();
        match t.counts.iter_mut().find(|(o, _)| *o == oid) {
            Some((_, p)) => f(p),
            None => {
                let mut p = crate::stats::tables::Pending::default();
                f(&mut p);
                t.counts.push((oid, p));
            }
        }
    }

    /// Commits the current transaction (if any).
    /// Releases the session-level advisory locks it holds (`pg_advisory_unlock_all`, DISCARD
    /// ALL).
    pub fn unlock_all_advisory(&mut self) {
        let shared = self.shared.clone();
        shared.locks.unlock_all_session(self.locks.get_mut(), |t| matches!(t, crate::lock::LockTag::Advisory { .. }));
    }

    /// Whether `fk`'s checks wait for the transaction's end now (`exec::fk` invariant 3):
    /// a DEFERRABLE constraint named by SET CONSTRAINTS, else as SET CONSTRAINTS ALL says,
    /// else as it was declared.
    pub(crate) fn constraint_deferred(&self, fk: &crate::catalog::ForeignKey) -> bool {
        if !fk.deferrable {
            return false;
        }
        let Some(t) = &self.txn else { return false };
        let (all, named) = &t.constraint_modes;
        named.iter().rev().find(|(o, _)| *o == fk.oid).map(|(_, d)| *d).or(*all).unwrap_or(fk.initially_deferred)
    }

    pub(crate) fn commit(&mut self) -> Result<()> {
        // Deferred foreign-key checks run first (`exec::fk` invariant 3): a violation fails
        // the COMMIT, which rolls the transaction back.
        if self.txn.as_ref().is_some_and(|t| !t.failed && !t.fk_deferred.is_empty()) {
            if let Err(e) = crate::exec::fk::run_deferred(self, None) {
                self.rollback();
                return Err(e);
            }
        }
        if self.txn.as_ref().is_some_and(|t| !t.failed) && !self.on_commit.is_empty() {
            if let Err(e) = self.on_commit_actions() {
                self.rollback();
                return Err(e);
            }
        }
        // Cursors and portals end with their transaction (none is WITH HOLD).
        self.in_use.clear();
        self.ended_txns += 1;
        let Some(t) = self.txn.take() else { return Ok(()) };
        assert_eq!(self.pins.held(), 0, "buffer pins leaked at commit");
        if t.failed {
            self.finish_abort(t);
            return Ok(());
        }
        match self.commit_durably(&t) {
            Ok(()) => {
                if self.log_ends {
                    self.committed_log.push(self.ended_txns - 1);
                }
                self.apply_temp(&t);
                self.release_locks(&t);
                if let Some(at_commit) = t.settings_at_commit {
                    self.restore_settings(at_commit);
                }
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
        let sh = self.shared.clone();
        let seq_flush = self.seq_flush.replace(0);
        let sync = sh.settings.get("synchronous_commit").map(|v| v != "off").unwrap_or(true);
        if t.xid == INVALID_XID {
            // `sql::sequence` invariant 2: values handed out are durable before the commit
            // is acknowledged.
            if seq_flush > 0 && sync {
                sh.wal.flush(seq_flush)?;
            }
            return Ok(());
        }
        for &rel in &t.wal_skipped {
            sh.pool.flush_all(&self.pins, Some(rel))?;
            sh.smgr.fsync(rel, ForkNumber::Main)?;
        }
        // Temporary relations' changes go to the session, not the catalog, nor do their dead
        // files go into the WAL record: after a crash they are orphans (invariant 11). Files
        // made by this transaction and dead at its end need no record either: no committed
        // catalog references them, so start-up deletes them as orphans.
        let temp_ddl = t.creates.iter().chain(&t.drops).chain(t.replaces.iter().map(|(n, _)| n)).any(|x| x.is_temp());
        let unlogged_dead: std::collections::HashSet<RelFileNumber> = if temp_ddl || !t.new_files.is_empty() {
            self.temp
                .values()
                .chain(t.drops.iter().filter(|d| d.is_temp()))
                .chain(t.replaces.iter().flat_map(|(n, o)| [n, o]).filter(|x| x.is_temp()))
                .flat_map(|x| x.files())
                .chain(t.new_files.iter().copied())
                .collect()
        } else {
            Default::default()
        };
        let ddl = crate::recovery::DdlChange {
            creates: t.creates.iter().filter(|x| !x.is_temp()).map(|x| (**x).clone()).collect(),
            drops: t.drops.iter().filter(|x| !x.is_temp()).map(|d| d.name.clone()).collect(),
            replaces: t.replaces.iter().filter(|(n, _)| !n.is_temp()).map(|(n, _)| (**n).clone()).collect(),
            dead_files: t.dead_files.iter().copied().filter(|f| !unlogged_dead.contains(f)).collect(),
        };
        let has_ddl = !ddl.creates.is_empty() || !ddl.drops.is_empty() || !ddl.replaces.is_empty() || !ddl.dead_files.is_empty();
        let _ddl_guard = (has_ddl || temp_ddl).then(|| sh.ddl_lock.lock().expect("poisoned"));
        // Invariant 11: no name is both a permanent relation and a session's temporary one.
        let temp_after = if temp_ddl { Some(visible_with(Some(t), true, self.temp.values().cloned().collect())) } else { None };
        self.check_names_apart(t, &ddl, temp_after.as_deref())?;
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
        if (t.wrote_wal || has_ddl || seq_flush > 0) && sync {
            sh.wal.flush(end).map_err(critical)?;
        }
        if has_ddl {
            let creates: Vec<Arc<Table>> = t.creates.iter().filter(|x| !x.is_temp()).cloned().collect();
            let replaces: Vec<Arc<Table>> = t.replaces.iter().filter(|(n, _)| !n.is_temp()).map(|(n, _)| n.clone()).collect();
            sh.catalog.apply(&creates, &ddl.drops, &replaces).map_err(critical)?;
        }
        if let Some(after) = &temp_after {
            self.register_temp_names(after);
        }
        sh.txns.finish(t.xid, true);
        drop(_delay);
        for (oid, p) in &t.counts {
            sh.table_stats.finish(*oid, p, true);
        }
        // A renamed table's old name is dropped and its new one created, with the same oid:
        // its counters stay.
        for d in t.drops.iter().filter(|d| !t.creates.iter().any(|c| c.oid == d.oid)) {
            sh.table_stats.forget(d.oid);
        }
        for rel in &t.dead_files {
            sh.pool.drop_relation_buffers(*rel);
            let _ = sh.smgr.unlink(*rel);
        }
        Ok(())
    }

    /// Invariant 11, checked by a committing transaction holding `ddl_lock` before its COMMIT
    /// record: the permanent relations (and indexes) it makes carry no name of another
    /// session's committed temporary relation, and its temporary ones (`temp_after`: the
    /// session's temporary relations as they will be) no name of a permanent relation as the
    /// transaction leaves them.
    fn check_names_apart(&self, t: &Txn, ddl: &crate::recovery::DdlChange, temp_after: Option<&[Arc<Table>]>) -> Result<()> {
        let names =
            |x: &Table| -> Vec<String> { std::iter::once(x.name.clone()).chain(x.indexes.iter().map(|i| i.name.clone())).collect() };
        let refuse = |name: &str, what: &str| {
            Err(PgError::feature(format!("cannot commit relation \"{name}\": {what} relation of that name exists"))
                .with_detail("heapstore does not let a temporary relation and a permanent one share a name."))
        };
        if !ddl.creates.is_empty() || !ddl.replaces.is_empty() {
            let reg = self.shared.temp_names.lock().unwrap_or_else(|e| e.into_inner());
            for x in ddl.creates.iter().chain(&ddl.replaces) {
                for n in names(x) {
                    if reg.get(&n).is_some_and(|ids| ids.iter().any(|&id| id != self.id)) {
                        return refuse(&n, "another session's temporary");
                    }
                }
            }
        }
        if let Some(after) = temp_after {
            let perm = visible_with(Some(t), false, self.shared.catalog.tables());
            let taken: std::collections::HashSet<String> = perm.iter().flat_map(|x| names(x)).collect();
            for x in after {
                for n in names(x) {
                    if taken.contains(&n) {
                        return refuse(&n, "a permanent");
                    }
                }
            }
        }
        Ok(())
    }

    /// Records the names of the session's temporary relations (`after`) in the shared
    /// registry (invariant 11), under `ddl_lock`.
    fn register_temp_names(&self, after: &[Arc<Table>]) {
        let mut reg = self.shared.temp_names.lock().unwrap_or_else(|e| e.into_inner());
        reg.retain(|_, ids| {
            ids.retain(|&id| id != self.id);
            !ids.is_empty()
        });
        for x in after {
            for n in std::iter::once(&x.name).chain(x.indexes.iter().map(|i| &i.name)) {
                reg.entry(n.clone()).or_default().push(self.id);
            }
        }
    }

    /// `ON COMMIT` actions before a commit (invariant 11): `DELETE ROWS` tables this
    /// transaction wrote are truncated, `DROP` tables dropped.
    fn on_commit_actions(&mut self) -> Result<()> {
        use crate::catalog::OnCommit;
        let temps = self.temp_tables();
        self.on_commit.retain(|oid, _| temps.iter().any(|t| t.oid == *oid));
        let written = |s: &Session, oid: u32| {
            s.txn
                .as_ref()
                .is_some_and(|x| x.counts.iter().any(|(o, p)| *o == oid && p.inserted + p.updated + p.hot_updated + p.deleted > 0))
        };
        let drop: Vec<Arc<Table>> = temps.iter().filter(|t| self.on_commit.get(&t.oid) == Some(&OnCommit::Drop)).cloned().collect();
        let empty: Vec<Arc<Table>> =
            temps.iter().filter(|t| self.on_commit.get(&t.oid) == Some(&OnCommit::DeleteRows) && written(self, t.oid)).cloned().collect();
        // As PostgreSQL, whose check runs at every commit of a transaction that used a
        // temporary relation: every ON COMMIT DELETE ROWS table is checked, those written
        // are emptied (the others are empty already).
        let touched = self.txn.as_ref().is_some_and(|x| {
            x.creates.iter().chain(&x.drops).chain(x.replaces.iter().map(|(n, _)| n)).any(|t| t.is_temp())
                || x.counts.iter().any(|(o, _)| temps.iter().any(|t| t.oid == *o))
        });
        let checked: Vec<Arc<Table>> = if touched {
            temps.iter().filter(|t| self.on_commit.get(&t.oid) == Some(&OnCommit::DeleteRows)).cloned().collect()
        } else {
            Vec::new()
        };
        // A table keeping its rows (or its existence) may not reference one losing them, as
        // PostgreSQL's heap_truncate_check_FKs; PostgreSQL drops the constraint of a table
        // referencing an ON COMMIT DROP one, which heapstore refuses.
        for (set, dropping) in [(&checked, false), (&drop, true)] {
            for p in set.iter() {
                for (c, _) in crate::exec::fk::referencing(self, p.oid) {
                    // A referencing table dropped too, or (for emptied ones) emptied at every
                    // commit that writes it, keeps no row pointing at what goes.
                    let fine = match self.on_commit.get(&c.oid) {
                        Some(OnCommit::Drop) => true,
                        Some(OnCommit::DeleteRows) => !dropping,
                        _ => c.oid == p.oid,
                    };
                    if fine {
                        continue;
                    }
                    return Err(if dropping {
                        PgError::feature(format!(
                            "ON COMMIT DROP of table \"{}\", which table \"{}\" references, is not supported by heapstore",
                            p.name, c.name
                        ))
                    } else {
                        PgError::feature("unsupported ON COMMIT and foreign key combination").with_detail(format!(
                            "Table \"{}\" references \"{}\", but they do not have the same ON COMMIT setting.",
                            c.name, p.name
                        ))
                    });
                }
            }
        }
        for t in drop {
            crate::sql::ddl::drop_with_owned(self, t)?;
        }
        for t in empty {
            crate::sql::ddl::truncate_relation(self, &t)?;
        }
        Ok(())
    }

    /// Installs a committed transaction's changes to temporary relations (invariant 11).
    fn apply_temp(&mut self, t: &Txn) {
        for d in t.drops.iter().filter(|d| d.is_temp()) {
            if self.temp.get(&d.name).is_some_and(|x| x.oid == d.oid) {
                self.temp.remove(&d.name);
            }
            self.on_commit.remove(&d.oid);
        }
        for x in t.creates.iter().chain(t.replaces.iter().map(|(n, _)| n)).filter(|x| x.is_temp()) {
            self.temp.insert(x.name.clone(), x.clone());
        }
        debug_assert!(self.temp.iter().all(|(n, x)| *n == x.name && x.is_temp()));
    }

    /// Drops every temporary relation of the session in the current transaction (`DISCARD
    /// TEMP`, `DISCARD ALL`).
    pub(crate) fn discard_temp(&mut self) -> Result<()> {
        let temps = self.temp_tables();
        if !temps.is_empty() {
            // Dropping needs an xid, which a READ ONLY transaction never gets (invariant 8);
            // PostgreSQL allows it, heapstore refuses.
            self.check_writable("DISCARD TEMP")?;
        }
        for t in temps {
            if t.sequence().is_some_and(|d| d.owned_by.is_some()) {
                continue; // goes with its table
            }
            self.check_not_in_use(&t, "DROP TABLE")?;
            crate::sql::ddl::drop_with_owned(self, t)?;
        }
        Ok(())
    }

    /// Deletes the session's temporary relations' buffers and files (at session end; no
    /// transaction is open). After the database stopped or closed (a PANIC, a simulated
    /// crash, a close with sessions still open) nothing is touched: the files are orphans the
    /// next start-up deletes.
    fn delete_temp_files(&mut self) {
        let temp = std::mem::take(&mut self.temp);
        if !temp.is_empty() {
            self.register_temp_names(&[]);
        }
        if self.check_not_stopped().is_err() || self.shared.closed.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        for (_, t) in temp {
            for rel in t.files() {
                self.shared.pool.drop_relation_buffers(rel);
                let _ = self.shared.smgr.unlink(rel);
            }
            self.shared.table_stats.forget(t.oid);
        }
    }

    /// Rolls back the current transaction (if any).
    pub(crate) fn rollback(&mut self) {
        self.in_use.clear();
        self.ended_txns += 1;
        if let Some(t) = self.txn.take() {
            self.finish_abort(t);
        }
    }

    fn finish_abort(&mut self, t: Txn) {
        assert_eq!(self.pins.held(), 0, "buffer pins leaked at abort");
        self.seq_flush.set(0);
        if t.xid != INVALID_XID {
            // The ABORT record is not flushed: without it recovery treats the xid as aborted
            // anyway.
            let mut rec = crate::wal::RecordBuilder::new();
            rec.begin(crate::recovery::RM_XACT, crate::recovery::XACT_ABORT, t.xid);
            let _ = self.shared.wal.insert(&mut rec);
            self.shared.txns.finish(t.xid, false);
        }
        for (oid, p) in &t.counts {
            self.shared.table_stats.finish(*oid, p, false);
        }
        for rel in &t.new_files {
            self.shared.pool.drop_relation_buffers(*rel);
            let _ = self.shared.smgr.unlink(*rel);
        }
        self.release_locks(&t);
        self.restore_settings(t.settings_at_start);
    }

    fn release_locks(&mut self, _t: &Txn) {
        self.snapshot_xmin.store(crate::txn::NO_SNAPSHOT, std::sync::atomic::Ordering::Release);
        self.shared.locks.release_all(self.locks.get_mut());
    }

    /// Marks the open explicit transaction failed (after an error inside BEGIN ... COMMIT).
    ///
    /// With no savepoint open the transaction is aborted now, as PostgreSQL aborts it at the
    /// error: its xid is aborted, its locks are released (a session waiting on one of its rows
    /// or tables goes on, a deadlock victim frees the others), the files it created are
    /// deleted and its settings are put back. What remains is the failed block: no xid, no
    /// lock, refusing every statement (25P02) until ROLLBACK or COMMIT ends it. With a
    /// savepoint open, the changes stay until ROLLBACK TO SAVEPOINT undoes them (invariant 9).
    pub(crate) fn mark_failed(&mut self) {
        let Some(t) = &mut self.txn else { return };
        t.failed = true;
        if !t.savepoints.is_empty() {
            return;
        }
        let t = self.txn.take().expect("checked");
        let (isolation, read_only, start_us, explicit) = (t.isolation, t.read_only, t.start_us, t.explicit);
        self.in_use.clear();
        self.finish_abort(t);
        self.txn = Some(Txn {
            settings_at_start: self.settings(),
            isolation,
            read_only,
            start_us,
            ran_statement: true,
            explicit,
            failed: true,
            ..Default::default()
        });
    }

    /// Whether pruning `table`'s pages from a read is WAL-logged: as its row changes would be
    /// (`exec::rows::wal_for`), but without noting anything in the transaction — a prune
    /// record need not be flushed at commit; the page's LSN keeps it ahead of the page.
    pub(crate) fn prune_logged(&self, table: &crate::catalog::Table) -> bool {
        if table.persistence != crate::catalog::Persistence::Permanent {
            return false;
        }
        let minimal = self.shared.settings.get("wal_level").is_ok_and(|v| v == "minimal");
        !(minimal && self.txn.as_ref().is_some_and(|t| t.new_files.contains(&table.relfile)))
    }

    /// The transaction's touch log while a savepoint is open (row changes note their pages).
    pub(crate) fn touch_log(&self) -> Option<Arc<TouchLog>> {
        self.txn.as_ref().filter(|t| !t.savepoints.is_empty()).and_then(|t| t.touched.clone())
    }

    /// `SAVEPOINT name` in the open transaction block (invariant 9).
    pub(crate) fn savepoint(&mut self, name: &str) -> Result<()> {
        self.command_done();
        let settings = self.settings();
        let shared = self.shared.clone();
        let locks = shared.locks.xact_mark(self.locks.get_mut());
        let t = self.txn();
        let row_locks = shared.txns.row_locks.mark();
        let touched = t.touched.get_or_insert_with(Default::default).clone();
        self.subxact_seq += 1;
        let id = self.subxact_seq;
        let t = self.txn.as_mut().expect("in a transaction");
        let sp = Savepoint {
            id,
            row_locks,
            locks,
            name: name.to_string(),
            cid: t.cid,
            touch_len: touched.mark(),
            creates: t.creates.clone(),
            drops: t.drops.clone(),
            replaces: t.replaces.clone(),
            new_files: t.new_files.len(),
            dead_files: t.dead_files.clone(),
            settings,
            settings_at_commit: t.settings_at_commit.clone(),
            fk_deferred: t.fk_deferred.clone(),
            constraint_modes: t.constraint_modes.clone(),
        };
        // Like any statement: SET TRANSACTION ISOLATION LEVEL is refused from here on.
        t.ran_statement = true;
        t.savepoints.push(sp);
        Ok(())
    }

    /// The subtransactions open now ([`Savepoint::id`], oldest first): what a SQL cursor
    /// declared now belongs to.
    pub(crate) fn open_subxacts(&self) -> Vec<u64> {
        self.txn.as_ref().map(|t| t.savepoints.iter().map(|sp| sp.id).collect()).unwrap_or_default()
    }

    /// The position of the newest open savepoint called `name`, or 3B001.
    fn find_savepoint(&mut self, name: &str) -> Result<usize> {
        self.txn()
            .savepoints
            .iter()
            .rposition(|sp| sp.name == name)
            .ok_or_else(|| PgError::new(sqlstate::INVALID_SAVEPOINT_SPECIFICATION, format!("savepoint \"{name}\" does not exist")))
    }

    /// `RELEASE SAVEPOINT name`: forgets it and every savepoint set after it; their changes
    /// stay part of the transaction.
    pub(crate) fn release_savepoint(&mut self, name: &str) -> Result<()> {
        let i = self.find_savepoint(name)?;
        let t = self.txn();
        t.savepoints.truncate(i);
        if t.savepoints.is_empty() {
            if let Some(l) = &t.touched {
                l.take_from(0);
            }
        }
        Ok(())
    }

    /// `ROLLBACK TO SAVEPOINT name` (invariant 9): undoes what the transaction did since the
    /// savepoint, forgets the savepoints set after it, keeps it, and clears the failed state.
    pub(crate) fn rollback_to_savepoint(&mut self, name: &str) -> Result<()> {
        let i = self.find_savepoint(name)?;
        match self.undo_since(i) {
            Ok(()) => {
                self.subxact_seq += 1;
                let fresh = self.subxact_seq;
                let t = self.txn();
                t.savepoints.truncate(i + 1);
                let undone = std::mem::replace(&mut t.savepoints[i].id, fresh);
                t.failed = false;
                let sp = &t.savepoints[i];
                let (settings, at_commit) = (sp.settings.clone(), sp.settings_at_commit.clone());
                let (fk_deferred, modes) = (sp.fk_deferred.clone(), sp.constraint_modes.clone());
                t.settings_at_commit = at_commit;
                t.fk_deferred = fk_deferred;
                t.constraint_modes = modes;
                self.restore_settings(settings);
                // Later commands must not reuse a command id whose changes were just undone.
                self.command_done();
                // Cursors declared since are closed (by the server): their tables are no longer
                // in use.
                self.in_use.retain(|(_, subxacts)| !subxacts.contains(&undone));
                if self.log_ends {
                    self.undone_log.push(undone);
                }
                Ok(())
            }
            Err(e) => {
                let t = self.txn();
                t.savepoints.clear();
                t.failed = true;
                Err(e.with_context("rolling back to savepoint".to_string()))
            }
        }
    }

    fn undo_since(&mut self, i: usize) -> Result<()> {
        let sh = self.shared.clone();
        let t = self.txn.as_mut().expect("in a transaction");
        let sp = &t.savepoints[i];
        let (from, touch_len, row_locks, locks, undone) = (sp.cid, sp.touch_len, sp.row_locks, sp.locks, sp.id);
        // Catalog changes since the savepoint are forgotten; files created since are deleted at
        // transaction end either way (they stay in new_files for an abort, and join
        // dead_files for a commit).
        let discarded: Vec<RelFileNumber> = t.new_files[sp.new_files..].to_vec();
        t.creates = sp.creates.clone();
        t.drops = sp.drops.clone();
        t.replaces = sp.replaces.clone();
        t.dead_files = sp.dead_files.clone();
        t.dead_files.extend_from_slice(&discarded);
        t.wal_skipped.retain(|r| !discarded.contains(r));
        let pages = match &t.touched {
            Some(l) => l.take_from(touch_len),
            None => Vec::new(),
        };
        let me = t.xid;
        for rel in &discarded {
            sh.pool.drop_relation_buffers(*rel);
        }
        // The relations a cursor or suspended portal that stays open reads keep their locks:
        // a cursor declared since the savepoint is closed with it (by the server), a portal
        // stays (heapstore keeps those open past ROLLBACK TO; PostgreSQL fails them).
        let in_use: Vec<u32> = self.in_use.iter().filter(|(_, subxacts)| !subxacts.contains(&undone)).map(|(oid, _)| *oid).collect();
        let keep = move |tag: crate::lock::LockTag| tag.relation().is_some_and(|oid| in_use.contains(&oid));
        if me == INVALID_XID {
            sh.locks.release_xact_since(self.locks.get_mut(), locks, keep);
            return Ok(());
        }
        sh.txns.row_locks.release_since(me, row_locks);
        let fpw = sh.settings.bool("full_page_writes");
        for (rel, block, logged) in pages {
            if discarded.contains(&rel) {
                continue;
            }
            let heap = crate::access::heap::dml::HeapRel {
                pool: &sh.pool,
                pins: &self.pins,
                rel,
                wal: logged.then_some(&*sh.wal),
                full_page_writes: fpw,
                touched: None,
            };
            heap.undo_page(block, me, from)?;
        }
        // Last, once the changes made under them are undone: the relation and advisory locks
        // first taken since the savepoint, as PostgreSQL's aborted subtransaction gives back.
        sh.locks.release_xact_since(self.locks.get_mut(), locks, keep);
        Ok(())
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
        self.mark_statement_start();
        let mut io = crate::sql::CopyIo::default();
        crate::sql::execute(self, sql, &mut io)
    }

    /// Parses a statement once, for [`Session::execute_prepared`].
    pub fn prepare(&self, sql: &str) -> Result<crate::sql::Prepared> {
        crate::sql::prepare(sql)
    }

    /// Runs a prepared statement with text parameters (`None` = NULL).
    pub fn execute_prepared(&mut self, p: &crate::sql::Prepared, params: &[Option<String>]) -> Result<QueryResult> {
        self.mark_statement_start();
        let mut io = crate::sql::CopyIo::default();
        crate::sql::execute_prepared(self, p, params, &mut io)
    }

    /// Runs statements with COPY's STDIN/STDOUT connected to `io`.
    pub fn execute_with_io(&mut self, sql: &str, io: &mut crate::sql::CopyIo<'_>) -> Result<Vec<QueryResult>> {
        self.mark_statement_start();
        crate::sql::execute(self, sql, io)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.txn.is_some() {
            self.rollback();
        }
        self.delete_temp_files();
        self.shared.txns.unregister_snapshot_slot(&self.snapshot_xmin);
    }
}

/// Where COPY ... FROM STDIN reads and COPY ... TO STDOUT writes. COPY TO STDOUT hands each
/// row to `stdout` in one `write_all` call (the binary header with the first row; a header
/// line and the binary trailer alone), so a destination can frame rows as PostgreSQL's
/// protocol does: one CopyData message per row.
///
/// `rows`, when given, receives the rows of a query that is the only statement of its text
/// as they are produced (the server's simple Query streams them to the client this way);
/// that statement's result then holds no rows and `returns_rows` is false.
#[derive(Default)]
pub struct CopyIo<'a> {
    pub stdin: Option<&'a mut dyn std::io::Read>,
    pub stdout: Option<&'a mut dyn std::io::Write>,
    pub rows: Option<&'a mut dyn RowSink>,
}

/// Receives a query's result as it is produced: its columns once, then each row (text form,
/// None = NULL).
pub trait RowSink {
    fn columns(&mut self, columns: &[(String, String)], sources: &[Option<(u32, i16)>]) -> Result<()>;
    fn row(&mut self, row: &[Option<String>]) -> Result<()>;
}

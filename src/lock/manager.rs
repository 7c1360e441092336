//! The heavyweight lock manager: table-level locks with PostgreSQL's eight modes, held by
//! sessions until they release them (normally all at once at transaction end; a
//! session-level take, [`LockManager::lock_session`], stays until it is unlocked or the
//! session ends: advisory locks).
//!
//! It owns the shared lock table (`table.rs`: partitions of lock objects with FIFO wait
//! queues), the strong-lock counters and every session's fast-path slots (`fastpath.rs`), the
//! registry of sessions (`proc.rs`), wait statistics and lock-wait logging. Each session owns
//! its [`SessionLocks`]: its local lock table (`local.rs`) and a handle to its shared part.
//!
//! Entry points: [`LockManager::new`] / [`LockManager::with_logger`], [`LockManager::register`]
//! (a session's [`SessionLocks`]; dropping it releases its locks and unregisters it),
//! [`LockManager::lock`], [`LockManager::try_lock`], [`LockManager::unlock`],
//! [`LockManager::release_all`], [`LockManager::lock_session`] /
//! [`LockManager::unlock_session`], [`LockManager::holds`], and for introspection
//! [`LockManager::locks`] (pg_locks) and [`LockManager::wait_stats`].
//!
//! ```text
//! lock(tag, mode)
//!  ├─ local table has (tag, mode)? ── count += 1, done (no shared state touched)
//!  ├─ weak relation mode, strong counter 0, slot free ── record in own fast-path slots
//!  ├─ strong relation mode ── counter += 1; move all sessions' fast-path locks on it to the table
//!  └─ partition mutex: grant, or queue and sleep (deadlock check every deadlock_timeout,
//!     lock_timeout cancels); a releaser grants in queue order and wakes
//! ```
//!
//! Invariants:
//! 1. Protection: a partition mutex guards its `PartitionTable` (lock objects, queues, the
//!    waiting map); a session's fast-path mutex guards its fast-path slots; a session's status
//!    mutex guards its wait status (`proc.rs`); the registry `RwLock` guards the session list;
//!    a session's local table is owned by its thread and needs no lock.
//! 2. Lock order: registry (read) → fast-path mutex → partition mutex → status mutex. At most
//!    one partition mutex is held at a time, except by deadlock detection and [`LockManager::locks`],
//!    which take all of them in ascending index order while holding no fast-path mutex. No
//!    fast-path mutex is taken while a partition mutex is held. The logger is called with no
//!    lock held.
//! 3. Fast path (PostgreSQL's protocol): a weak locker reads the relation's strong counter while
//!    holding its own fast-path mutex and uses a slot only if the counter is zero. A strong
//!    locker first increments the counter, then visits every registered session's fast-path
//!    mutex and moves that session's entries for the relation into the shared table, holding
//!    the fast-path mutex across the move. For each session either its slot update came first
//!    (and was moved) or came after (its mutex acquire follows the mover's release, which
//!    follows the increment, so it saw the counter). So while a strong lock on a relation is
//!    held or awaited, every weak lock on it is in the shared table, where conflicts are
//!    checked. The counter drops only after the strong lock has left the shared table, or when
//!    its acquisition failed. A weak lock is released from the slots if still there, else from
//!    the shared table.
//! 4. A local entry exists iff the session holds (tag, mode); its first take acquired the
//!    shared or fast-path state and its last release (or release-all) gives it back. Its
//!    `session` takes (at most its `count`) survive release-all at transaction end; only
//!    the session's end releases them all at once.
//! 5. Waiting is grant-on-release (`table.rs`, rule 3). A waiter sleeps on its status, checks
//!    for deadlock every `deadlock_timeout` (PostgreSQL checks once; checking again costs
//!    nothing on short waits and closes any gap), and leaves the queue under the partition
//!    mutex on deadlock or `lock_timeout`. If it finds itself granted at that point it keeps the
//!    lock and succeeds. A deadlock victim keeps the locks it already held: the caller ends its
//!    transaction with [`LockManager::release_all`], which lets the others proceed.
//! 6. Wait statistics are two atomics per mode, touched only on the wait path.
//! 7. A session's journal (`SessionLocks::xact_takes`) holds, in order, each relation, object
//!    or advisory (tag, mode) whose transaction-level take count went from 0 to 1; ROLLBACK TO
//!    SAVEPOINT ([`LockManager::release_xact_since`]) sets the count of each entry after the
//!    savepoint's mark back to the session-level takes (releasing the lock at 0), and transaction
//!    end empties it. Transaction-id locks are never journaled: a transaction's own xid lock
//!    lasts until it ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, MutexGuard, PoisonError, RwLock, RwLockReadGuard};
use std::time::{Duration, Instant, SystemTime};

use super::deadlock::{deadlock_error, find_cycle, Edge, WaitsFor};
use super::fastpath::{StrongCounts, GROUP_SLOTS};
use super::local::{LocalLock, LocalLocks};
use super::mode::{LockMode, NUM_MODES};
use super::proc::{guard, Proc, WaitStatus};
use super::table::{Decision, Partition, PartitionTable};
use super::tag::LockTag;
use crate::error::{sqlstate, PgError, Result};

/// The lock manager's settings.
#[derive(Clone, Debug)]
pub struct LockSettings {
    /// Shared lock table partitions, each under its own mutex (PostgreSQL: 16).
    pub partitions: usize,
    /// Fast-path slots per session, rounded up to groups of 16; 0 disables the fast path.
    pub fast_path_slots: usize,
    /// How long a waiter waits before checking for deadlock (and again after each further
    /// such interval); at least 1 ms is used.
    pub deadlock_timeout: Duration,
    /// Longest wait for one lock before failing with 55P03; `None` waits indefinitely.
    pub lock_timeout: Option<Duration>,
    /// Log waits that last longer than `deadlock_timeout`, and how they ended.
    pub log_lock_waits: bool,
    /// Release-all walks every slot ever allocated in the local table (the old design, for
    /// benchmarks) instead of only the locks held.
    pub release_walks_whole_table: bool,
}

impl Default for LockSettings {
    fn default() -> LockSettings {
        LockSettings {
            partitions: 16,
            fast_path_slots: 64,
            deadlock_timeout: Duration::from_secs(1),
            lock_timeout: None,
            log_lock_waits: false,
            release_walks_whole_table: false,
        }
    }
}

/// One row of [`LockManager::locks`], like a row of pg_locks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockInfo {
    pub tag: LockTag,
    pub mode: LockMode,
    pub session: u64,
    pub granted: bool,
    /// Held in the session's fast-path slots rather than the shared table.
    pub fastpath: bool,
    /// When a waiting request began waiting (`None` for granted locks).
    pub waitstart: Option<SystemTime>,
}

/// Receives log lines (`"LOG:  ..."`, with `"\nDETAIL:  ..."` where there is one).
pub type LockLogger = Box<dyn Fn(&str) + Send + Sync>;

/// Waits per mode: count and total nanoseconds.
#[derive(Default)]
struct WaitStats {
    count: [AtomicU64; NUM_MODES],
    nanos: [AtomicU64; NUM_MODES],
}

impl WaitStats {
    fn record(&self, mode: LockMode, waited: Duration) {
        self.count[mode.index()].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        self.nanos[mode.index()].fetch_add(nanos, Ordering::Relaxed);
    }
}

/// How a new lock was granted.
struct Granted {
    fast_path: bool,
    strong: bool,
}

/// Outcome of one deadlock check.
enum Check {
    Granted,
    StillWaiting,
    Deadlock(PgError),
}

/// A queued request, as the wait loop and the log see it.
#[derive(Clone, Copy)]
struct Request {
    session: u64,
    tag: LockTag,
    mode: LockMode,
    /// The tag's partition.
    part: usize,
}

struct Shared {
    settings: LockSettings,
    fast_path_groups: usize,
    partitions: Box<[Partition]>,
    strong: StrongCounts,
    sessions: RwLock<Vec<Arc<Proc>>>,
    stats: WaitStats,
    logger: LockLogger,
}

/// The heavyweight lock manager, shared by all sessions (cloning shares it).
#[derive(Clone)]
pub struct LockManager {
    shared: Arc<Shared>,
}

/// A session's locks: its local lock table and its handle to its shared state. Owned by the
/// session's thread. Dropping it releases every lock it holds and unregisters the session.
pub struct SessionLocks {
    shared: Arc<Shared>,
    proc: Arc<Proc>,
    local: LocalLocks,
    /// The relation and advisory locks the transaction came to hold, in order: each entry is
    /// a (tag, mode) the transaction did not hold before (its first transaction-level take),
    /// so ROLLBACK TO SAVEPOINT can give back those taken since the savepoint
    /// ([`LockManager::release_xact_since`]). Emptied at transaction end.
    xact_takes: Vec<(LockTag, LockMode)>,
}

impl SessionLocks {
    /// The session id given to [`LockManager::register`].
    pub fn session_id(&self) -> u64 {
        self.proc.id
    }

    /// The local lock table (entries held, segments, release-all cost counter).
    pub fn local(&self) -> &LocalLocks {
        &self.local
    }
}

impl Drop for SessionLocks {
    fn drop(&mut self) {
        self.shared.release_all(&self.proc, &mut self.local, false);
        self.shared.unregister(self.proc.id);
    }
}

impl LockManager {
    /// A lock manager logging to standard error.
    pub fn new(settings: LockSettings) -> LockManager {
        LockManager::with_logger(settings, Box::new(|line| eprintln!("{line}")))
    }

    /// A lock manager logging through `logger`.
    pub fn with_logger(settings: LockSettings, logger: LockLogger) -> LockManager {
        let partitions = (0..settings.partitions.max(1)).map(|_| Partition::default()).collect();
        let shared = Shared {
            fast_path_groups: settings.fast_path_slots.div_ceil(GROUP_SLOTS),
            settings,
            partitions,
            strong: StrongCounts::new(),
            sessions: RwLock::new(Vec::new()),
            stats: WaitStats::default(),
            logger,
        };
        LockManager { shared: Arc::new(shared) }
    }

    pub fn settings(&self) -> &LockSettings {
        &self.shared.settings
    }

    /// Registers a session and returns its lock state.
    ///
    /// # Panics
    /// If `session_id` is already registered: ids name sessions in waits and deadlock reports.
    pub fn register(&self, session_id: u64) -> SessionLocks {
        let proc = Arc::new(Proc::new(session_id, self.shared.fast_path_groups));
        let mut sessions = self.shared.sessions.write().unwrap_or_else(PoisonError::into_inner);
        assert!(sessions.iter().all(|p| p.id != session_id), "session {session_id} is already registered with the lock manager");
        sessions.push(Arc::clone(&proc));
        drop(sessions);
        let local = LocalLocks::new(self.shared.settings.release_walks_whole_table);
        SessionLocks { shared: Arc::clone(&self.shared), proc, local, xact_takes: Vec::new() }
    }

    /// Releases the session's locks and unregisters it (the same as dropping it).
    pub fn unregister(&self, s: SessionLocks) {
        self.check(&s);
        drop(s);
    }

    /// Takes `mode` on `tag`, waiting as long as needed (bounded by `lock_timeout`).
    ///
    /// Errors: 40P01 `deadlock detected` (the request is withdrawn; locks already held stay
    /// held until [`LockManager::release_all`]), 55P03 `canceling statement due to lock timeout`.
    pub fn lock(&self, s: &mut SessionLocks, tag: LockTag, mode: LockMode) -> Result<()> {
        self.check(s);
        let first = Self::first_xact_take(s, tag, mode);
        self.shared.lock(&s.proc, &mut s.local, tag, mode, true, false)?;
        if first {
            s.xact_takes.push((tag, mode));
        }
        Ok(())
    }

    /// Takes `mode` on `tag` if that needs no wait; false otherwise.
    pub fn try_lock(&self, s: &mut SessionLocks, tag: LockTag, mode: LockMode) -> bool {
        self.check(s);
        let first = Self::first_xact_take(s, tag, mode);
        let got = matches!(self.shared.lock(&s.proc, &mut s.local, tag, mode, false, false), Ok(true));
        if got && first {
            s.xact_takes.push((tag, mode));
        }
        got
    }

    /// Whether a transaction-level take of `mode` on `tag` would be the transaction's first of
    /// a relation, object (a foreign key's key lock) or advisory lock
    /// ([`SessionLocks::xact_takes`]). Transaction-id locks are not journaled: the
    /// transaction's own xid lock must last until its end.
    fn first_xact_take(s: &SessionLocks, tag: LockTag, mode: LockMode) -> bool {
        !matches!(tag, LockTag::Transaction(_))
            && s.local.find(tag, mode).is_none_or(|slot| {
                let e = s.local.entry(slot);
                e.count == e.session
            })
    }

    /// Where the transaction's lock journal is now: a savepoint's mark for
    /// [`LockManager::release_xact_since`].
    pub fn xact_mark(&self, s: &SessionLocks) -> usize {
        s.xact_takes.len()
    }

    /// ROLLBACK TO SAVEPOINT: gives back every transaction-level take of the relation, object
    /// and advisory locks the transaction first took after `mark`, as PostgreSQL releases the
    /// locks of an aborted subtransaction; session-level takes and locks held since before
    /// the savepoint stay, and so do those `keep` selects (they are then held to the
    /// transaction's end, unjournaled).
    pub fn release_xact_since(&self, s: &mut SessionLocks, mark: usize, keep: impl Fn(LockTag) -> bool) {
        self.check(s);
        while s.xact_takes.len() > mark {
            let (tag, mode) = s.xact_takes.pop().expect("longer than mark");
            if keep(tag) {
                continue;
            }
            let Some(slot) = s.local.find(tag, mode) else { continue };
            let entry = s.local.entry_mut(slot);
            entry.count = entry.session;
            if entry.count == 0 {
                let lock = s.local.remove(slot);
                self.shared.release_held(&s.proc, lock);
            }
        }
    }

    /// Takes `mode` on `tag` for the session: the take outlives the transaction, until
    /// [`LockManager::unlock_session`] or the session's end (session-level advisory locks).
    /// `wait` false: only if that needs no wait (`Ok(false)` otherwise).
    pub fn lock_session(&self, s: &mut SessionLocks, tag: LockTag, mode: LockMode, wait: bool) -> Result<bool> {
        self.check(s);
        self.shared.lock(&s.proc, &mut s.local, tag, mode, wait, true)
    }

    /// Releases one session-level take of `mode` on `tag`; false if the session has none.
    pub fn unlock_session(&self, s: &mut SessionLocks, tag: LockTag, mode: LockMode) -> bool {
        self.check(s);
        let Some(slot) = s.local.find(tag, mode) else { return false };
        let entry = s.local.entry_mut(slot);
        if entry.session == 0 {
            return false;
        }
        entry.session -= 1;
        entry.count -= 1;
        if entry.count == 0 {
            let lock = s.local.remove(slot);
            self.shared.release_held(&s.proc, lock);
        }
        true
    }

    /// Releases every session-level take of the locks whose tag `which` selects
    /// (`pg_advisory_unlock_all`); transaction-level takes stay.
    pub fn unlock_all_session(&self, s: &mut SessionLocks, which: impl Fn(LockTag) -> bool) {
        self.check(s);
        let held: Vec<(LockTag, LockMode, u32)> = s
            .local
            .iter()
            .filter(|(tag, _, _)| which(*tag))
            .filter_map(|(tag, mode, _)| s.local.find(tag, mode).map(|slot| (tag, mode, s.local.entry(slot).session)))
            .collect();
        for (tag, mode, n) in held {
            for _ in 0..n {
                self.unlock_session(s, tag, mode);
            }
        }
    }

    /// Releases one take of `mode` on `tag`; the last take gives the lock back. Returns false
    /// (and logs a WARNING, as PostgreSQL does) if the session does not hold it.
    pub fn unlock(&self, s: &mut SessionLocks, tag: LockTag, mode: LockMode) -> bool {
        self.check(s);
        self.shared.unlock(&s.proc, &mut s.local, tag, mode)
    }

    /// Releases every lock the session holds for its transaction (transaction end), in
    /// O(locks held): all but session-level takes ([`LockManager::lock_session`]).
    pub fn release_all(&self, s: &mut SessionLocks) {
        self.check(s);
        s.xact_takes.clear();
        self.shared.release_all(&s.proc, &mut s.local, true);
    }

    /// Whether the session holds `mode` on `tag`.
    pub fn holds(&self, s: &SessionLocks, tag: LockTag, mode: LockMode) -> bool {
        self.check(s);
        s.local.find(tag, mode).is_some()
    }

    /// Every granted and awaited lock, fast-path ones included, sorted by tag and session.
    pub fn locks(&self) -> Vec<LockInfo> {
        self.shared.locks()
    }

    /// Per mode: waits that ended (granted or failed) and their total duration.
    pub fn wait_stats(&self) -> Vec<(LockMode, u64, Duration)> {
        let stats = &self.shared.stats;
        LockMode::ALL
            .into_iter()
            .map(|m| {
                let nanos = stats.nanos[m.index()].load(Ordering::Relaxed);
                (m, stats.count[m.index()].load(Ordering::Relaxed), Duration::from_nanos(nanos))
            })
            .collect()
    }

    /// Lock objects in the shared table (fast-path locks are not there).
    pub fn shared_lock_objects(&self) -> usize {
        self.shared.partitions.iter().map(|p| guard(&p.table).locks.len()).sum()
    }

    /// Sum of the strong-lock counters: zero when no strong relation lock is held or awaited.
    pub fn strong_lock_count(&self) -> u64 {
        self.shared.strong.total()
    }

    fn check(&self, s: &SessionLocks) {
        assert!(Arc::ptr_eq(&s.shared, &self.shared), "SessionLocks used with a lock manager it is not registered with");
    }
}

impl Shared {
    fn partition_of(&self, tag: LockTag) -> usize {
        (tag.hash_code() % self.partitions.len() as u64) as usize
    }

    fn table(&self, part: usize) -> MutexGuard<'_, PartitionTable> {
        guard(&self.partitions[part].table)
    }

    fn all_tables(&self) -> Vec<MutexGuard<'_, PartitionTable>> {
        self.partitions.iter().map(|p| guard(&p.table)).collect()
    }

    fn sessions(&self) -> RwLockReadGuard<'_, Vec<Arc<Proc>>> {
        self.sessions.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn unregister(&self, id: u64) {
        let mut sessions = self.sessions.write().unwrap_or_else(PoisonError::into_inner);
        sessions.retain(|p| p.id != id);
    }

    /// Ok(false) only when `wait` is false and the lock is not free.
    fn lock(&self, proc: &Arc<Proc>, local: &mut LocalLocks, tag: LockTag, mode: LockMode, wait: bool, session: bool) -> Result<bool> {
        if let Some(slot) = local.find(tag, mode) {
            let entry = local.entry_mut(slot);
            entry.count = entry.count.checked_add(1).expect("lock taken 2^32 times");
            entry.session += u32::from(session);
            return Ok(true);
        }
        let Some(how) = self.acquire_new(proc, tag, mode, wait)? else {
            return Ok(false);
        };
        local.insert(LocalLock { tag, mode, count: 1, session: u32::from(session), fast_path: how.fast_path, strong: how.strong });
        Ok(true)
    }

    fn acquire_new(&self, proc: &Arc<Proc>, tag: LockTag, mode: LockMode, wait: bool) -> Result<Option<Granted>> {
        let fast_rel = tag.relation().filter(|_| self.fast_path_groups > 0);
        if let Some(rel) = fast_rel.filter(|_| mode.is_weak()) {
            if self.fast_path_grant(proc, rel, mode) {
                return Ok(Some(Granted { fast_path: true, strong: false }));
            }
        }
        let strong_rel = fast_rel.filter(|_| mode.is_strong());
        if let Some(rel) = strong_rel {
            self.strong.increment(rel);
            self.transfer_fast_path(rel);
        }
        let result = self.acquire_shared(proc, tag, mode, wait);
        if let Some(rel) = strong_rel.filter(|_| !matches!(result, Ok(true))) {
            self.strong.decrement(rel);
        }
        Ok(result?.then_some(Granted { fast_path: false, strong: strong_rel.is_some() }))
    }

    /// Invariant 3, weak side.
    fn fast_path_grant(&self, proc: &Proc, rel: u32, mode: LockMode) -> bool {
        let mut slots = guard(&proc.fast_path);
        self.strong.get(rel) == 0 && slots.grant(rel, mode)
    }

    /// Invariant 3, strong side: moves every session's fast-path locks on `rel` to the table.
    fn transfer_fast_path(&self, rel: u32) {
        let tag = LockTag::Relation(rel);
        let part = self.partition_of(tag);
        for p in self.sessions().iter() {
            let mut slots = guard(&p.fast_path);
            if slots.used() == 0 {
                continue;
            }
            let modes = slots.take(rel);
            if modes.is_empty() {
                continue;
            }
            let mut table = self.table(part);
            let obj = table.locks.entry(tag).or_default();
            for m in modes.iter() {
                obj.grant(p.id, m);
            }
        }
    }

    /// The shared-table path: grant, fail (no wait), report an immediate deadlock, or wait.
    fn acquire_shared(&self, proc: &Arc<Proc>, tag: LockTag, mode: LockMode, wait: bool) -> Result<bool> {
        let part = self.partition_of(tag);
        let mut table = self.table(part);
        let obj = table.locks.entry(tag).or_default();
        let decision = obj.decide(proc.id, mode);
        match decision {
            Decision::Grant => {
                obj.grant(proc.id, mode);
                return Ok(true);
            }
            _ if !wait => {
                table.drop_if_unused(tag);
                return Ok(false);
            }
            Decision::Deadlock { blocker, blocker_mode } => {
                let mine = Edge { waiter: proc.id, tag, mode, blocker };
                let theirs = Edge { waiter: blocker, tag, mode: blocker_mode, blocker: proc.id };
                return Err(deadlock_error(&[mine, theirs]));
            }
            Decision::Wait(pos) => table.enqueue(tag, pos, proc, mode),
        }
        drop(table);
        self.wait(proc, Request { session: proc.id, tag, mode, part }).map(|()| true)
    }

    /// Sleeps until granted, deadlocked or timed out (invariant 5).
    fn wait(&self, proc: &Proc, req: Request) -> Result<()> {
        let start = Instant::now();
        let interval = self.settings.deadlock_timeout.max(Duration::from_millis(1));
        let deadline = self.settings.lock_timeout.map(|t| start + t);
        let mut next_check = start + interval;
        let mut logged = false;
        let outcome = loop {
            // Wake at least every interrupt poll: a cancel request or the statement's
            // deadline (statement_timeout) ends the wait as lock_timeout does.
            let poll = Instant::now() + crate::interrupt::wait_slice().max(Duration::from_millis(1));
            let until = deadline.map_or(next_check, |d| d.min(next_check)).min(poll);
            if proc.sleep_until(until) == WaitStatus::Granted {
                break Ok(());
            }
            if let Err(e) = crate::interrupt::check_for_interrupts() {
                break self.cancel_wait(proc, req, e);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                let e = PgError::new(sqlstate::LOCK_NOT_AVAILABLE, "canceling statement due to lock timeout");
                break self.cancel_wait(proc, req, e);
            }
            if now < next_check {
                continue;
            }
            match self.check_deadlock(proc, req.part) {
                Check::Granted => break Ok(()),
                Check::Deadlock(err) => break Err(err),
                Check::StillWaiting if self.settings.log_lock_waits && !logged => {
                    self.log_wait(req, "still waiting for", start.elapsed());
                    logged = true;
                }
                Check::StillWaiting => {}
            }
            next_check = Instant::now() + interval;
        };
        proc.end_wait();
        let waited = start.elapsed();
        self.stats.record(req.mode, waited);
        if self.settings.log_lock_waits {
            self.log_wait_end(req, waited, logged, &outcome);
        }
        outcome
    }

    /// Lock timeout, a cancel request or statement_timeout (`err`): leave the queue, unless
    /// granted meanwhile.
    fn cancel_wait(&self, proc: &Proc, req: Request, err: PgError) -> Result<()> {
        let mut table = self.table(req.part);
        if proc.status() == WaitStatus::Granted {
            return Ok(());
        }
        table.dequeue(req.tag, proc.id);
        Err(err)
    }

    /// Looks for a wait-for cycle through `proc` with every partition mutex held (invariant 2);
    /// on finding one, withdraws `proc`'s request.
    fn check_deadlock(&self, proc: &Proc, part: usize) -> Check {
        let mut tables = self.all_tables();
        if proc.status() == WaitStatus::Granted {
            return Check::Granted;
        }
        let cycle = {
            let waiting: HashMap<u64, (usize, LockTag)> =
                tables.iter().enumerate().flat_map(|(i, t)| t.waiting.iter().map(move |(s, tag)| (*s, (i, *tag)))).collect();
            find_cycle(proc.id, |s| {
                let (i, tag) = *waiting.get(&s)?;
                let (mode, blockers) = tables[i].locks.get(&tag)?.blockers(s)?;
                Some(WaitsFor { tag, mode, blockers })
            })
        };
        let Some(cycle) = cycle else {
            return Check::StillWaiting;
        };
        tables[part].dequeue(cycle[0].tag, proc.id);
        Check::Deadlock(deadlock_error(&cycle))
    }

    fn unlock(&self, proc: &Proc, local: &mut LocalLocks, tag: LockTag, mode: LockMode) -> bool {
        let Some(slot) = local.find(tag, mode) else {
            (self.logger)(&format!("WARNING:  you don't own a lock of type {mode}"));
            return false;
        };
        let entry = local.entry_mut(slot);
        entry.count -= 1;
        if entry.count == 0 {
            let lock = local.remove(slot);
            self.release_held(proc, lock);
        }
        true
    }

    /// Releases the session's locks; with `keep_session`, the session-level takes stay
    /// (transaction end), each entry then counting only those.
    fn release_all(&self, proc: &Proc, local: &mut LocalLocks, keep_session: bool) {
        let mut kept = Vec::new();
        local.drain(|lock| {
            if keep_session && lock.session > 0 {
                kept.push(lock);
            } else {
                self.release_held(proc, lock);
            }
        });
        for mut lock in kept {
            lock.count = lock.session;
            local.insert(lock);
        }
    }

    /// Gives back a lock whose last take is being released (invariants 3 and 4).
    fn release_held(&self, proc: &Proc, lock: LocalLock) {
        if lock.fast_path {
            let rel = lock.tag.relation().expect("fast-path locks are relation locks");
            let released = guard(&proc.fast_path).release(rel, lock.mode);
            if released {
                return;
            }
        }
        let released = self.table(self.partition_of(lock.tag)).release(lock.tag, proc.id, lock.mode);
        debug_assert!(released, "shared table lost {} on {} held by session {}", lock.mode, lock.tag, proc.id);
        if lock.strong {
            self.strong.decrement(lock.tag.relation().expect("strong counts are for relations"));
        }
    }

    fn locks(&self) -> Vec<LockInfo> {
        let mut out = Vec::new();
        for p in self.sessions().iter() {
            for (rel, modes) in guard(&p.fast_path).iter() {
                let row =
                    |mode| LockInfo { tag: LockTag::Relation(rel), mode, session: p.id, granted: true, fastpath: true, waitstart: None };
                out.extend(modes.iter().map(row));
            }
        }
        for table in self.all_tables().iter() {
            for (tag, obj) in &table.locks {
                for h in obj.holders() {
                    let row = |mode| LockInfo { tag: *tag, mode, session: h.session, granted: true, fastpath: false, waitstart: None };
                    out.extend(h.held.iter().map(row));
                }
                out.extend(obj.queue().iter().map(|w| LockInfo {
                    tag: *tag,
                    mode: w.mode,
                    session: w.proc.id,
                    granted: false,
                    fastpath: false,
                    waitstart: Some(w.waitstart),
                }));
            }
        }
        out.sort_by_key(|l| (l.tag, l.session, l.mode, !l.granted));
        out
    }

    /// PostgreSQL's holder and wait-queue lists for a lock-wait log DETAIL: sessions holding
    /// the lock (and not waiting on it), and the queue in order.
    fn holders_and_waiters(&self, req: Request) -> (Vec<u64>, Vec<u64>) {
        let table = self.table(req.part);
        let Some(obj) = table.locks.get(&req.tag) else {
            return (Vec::new(), Vec::new());
        };
        let waiters: Vec<u64> = obj.queue().iter().map(|w| w.proc.id).collect();
        let mut holders: Vec<u64> = obj.holders().iter().map(|h| h.session).filter(|s| !waiters.contains(s)).collect();
        holders.sort_unstable();
        (holders, waiters)
    }

    fn log_wait(&self, req: Request, what: &str, waited: Duration) {
        let (holders, waiters) = self.holders_and_waiters(req);
        let list = |ids: &[u64]| ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let label = if holders.len() == 1 { "Process holding the lock" } else { "Processes holding the lock" };
        let Request { session, tag, mode, .. } = req;
        (self.logger)(&format!(
            "LOG:  process {session} {what} {mode} on {tag} after {} ms\nDETAIL:  {label}: {}. Wait queue: {}.",
            format_ms(waited),
            list(&holders),
            list(&waiters)
        ));
    }

    /// How a wait ended: a deadlock is always logged, other outcomes when the wait was.
    fn log_wait_end(&self, req: Request, waited: Duration, logged: bool, outcome: &Result<()>) {
        let Request { session, tag, mode, .. } = req;
        match outcome {
            Err(e) if e.code == sqlstate::DEADLOCK_DETECTED => self.log_wait(req, "detected deadlock while waiting for", waited),
            Ok(()) if logged => {
                (self.logger)(&format!("LOG:  process {session} acquired {mode} on {tag} after {} ms", format_ms(waited)));
            }
            Err(_) if logged => {
                (self.logger)(&format!("LOG:  process {session} failed to acquire {mode} on {tag} after {} ms", format_ms(waited)));
            }
            _ => {}
        }
    }
}

/// Milliseconds with three decimals, as PostgreSQL's `%ld.%03d ms`.
fn format_ms(d: Duration) -> String {
    let micros = d.as_micros();
    format!("{}.{:03}", micros / 1000, micros % 1000)
}

//! The crash torture: the whole engine on the simulated disk ([`crate::storage::simdisk`]),
//! driven by a seeded workload and checked against a model after every simulated power loss.
//!
//! ```text
//!  seed ─► init on an empty simulated disk
//!   ┌──► open (recovery) ─► check: the database equals the model (an in-doubt commit wholly
//!   │    or not at all), indexes agree with heaps (also read alone, by index-only scans),
//!   │    pages verify, the visibility map marks only pages whose every tuple all see, the
//!   │    FSM promises no more than an empty page holds (stale entries are counted), catalog
//!   │    and files agree
//!   │    run 20..200 statements from 3 interleaved sessions: COPY text/csv/binary (good and
//!   │    bad input; a third of them with PARALLEL 2..4, whose workers take turns on the
//!   │    one thread; a quarter staged through a temporary table and moved with INSERT ...
//!   │    SELECT), INSERT/UPDATE/DELETE by primary key, BEGIN/COMMIT/ROLLBACK, SAVEPOINT /
//!   │    ROLLBACK TO / RELEASE (also to recover a failed block), TOAST-sized
//!   │    values, VACUUM (half of them with ANALYZE), TRUNCATE, ALTER TABLE rewrites and renames, CREATE/DROP TABLE and INDEX, `nextval` / `setval` of a
//!   │    sequence (after recovery a `nextval` must exceed every value an acknowledged
//!   │    commit was given); between them the work of the
//!   │    background processes (WAL writer, background writer, checkpoints begun, written step
//!   │    by step and finished, or whole); at failpoints inside commits and critical sections,
//!   │    checkpoints begin (and try to finish) exactly in the windows races would hit
//!   │    the power is cut at a random disk operation (or, now and then, the database is shut
//!   │    down cleanly first); injected EIO / ENOSPC / short writes in some generations
//!   └─── power loss: volatile writes survive, tear or vanish by the seed
//! ```
//!
//! Everything runs on one thread with the engine's background threads off, so a seed replays
//! exactly: a failure prints the one command line that repeats it.
//!
//! Sessions never wait for each other: DDL runs only while no other session has a
//! transaction open, and a session changes only rows no other open transaction has changed
//! (the model knows which). `lock_timeout` turns any unexpected wait into a reported failure
//! instead of a hang.

pub mod check;
pub mod model;
pub mod workload;

use crate::checkpoint::{CheckpointKind, CheckpointRun};
use crate::db::{Database, Environment, Shared};
use crate::error::PgError;
use crate::rng::Rng;
use crate::sql::CopyIo;
use crate::storage::simdisk::{FaultRates, PowerLossModel, SimDisk};
use crate::Session;
use model::{Change, Model, Row};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use workload::Format;

/// What one seed runs.
#[derive(Clone, Debug)]
pub struct Options {
    pub seed: u64,
    /// Crash generations (each: open and check, work, power loss).
    pub generations: u32,
    /// Most statements in a generation.
    pub max_steps: u32,
    /// Inject EIO / ENOSPC / short writes in some generations.
    pub faults: bool,
}

impl Options {
    pub fn new(seed: u64) -> Options {
        Options { seed, generations: 6, max_steps: 160, faults: true }
    }

    /// The command line that replays this seed.
    pub fn replay_command(&self) -> String {
        format!(
            "heapstore torture --seed {} --generations {} --max-steps {}{}",
            self.seed,
            self.generations,
            self.max_steps,
            if self.faults { "" } else { " --no-faults" }
        )
    }
}

/// What a run covered.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub seeds: u64,
    pub generations: u64,
    pub power_losses: u64,
    pub clean_restarts: u64,
    pub statements: u64,
    /// Acknowledged commits whose effects a check after recovery found intact.
    pub commits_checked: u64,
    /// Commits in doubt at a crash (their acknowledgement never came), resolved one way.
    pub in_doubt: u64,
    pub panics: u64,
    pub faults_injected: u64,
    pub writes_torn: u64,
    pub writes_lost: u64,
    pub checkpoints: u64,
    /// Free-space-map entries found promising a page more room than it had after recovery
    /// (see `check::consistency`: a hint, as PostgreSQL's map is).
    pub stale_fsm_entries: u64,
    /// ROLLBACK TO SAVEPOINT statements that succeeded (their undo is then checked with the
    /// rest of the transaction when it commits).
    pub rollbacks_to_savepoint: u64,
    /// Pages written from the write-back queue (filled COPY pages, written off the session).
    pub write_back_pages: u64,
    /// COPYs WITH (PARALLEL n) that loaded their rows (their workers' turns inline).
    pub parallel_copies: u64,
    /// Pages the pre-extender added ahead of loads (run by loaders that found the FSM empty).
    pub pre_extended_pages: u64,
    /// WAL segments made ahead of the insert position (the `wal prealloc` thread's work).
    pub wal_segments_made_ahead: u64,
    /// `nextval` / `setval` calls that succeeded.
    pub sequence_calls: u64,
    /// Heap pages the visibility map marked all-visible after recovery, each checked against
    /// its tuples (`check::consistency`).
    pub all_visible_pages_checked: u64,
}

impl Report {
    pub fn add(&mut self, o: &Report) {
        self.seeds += o.seeds;
        self.generations += o.generations;
        self.power_losses += o.power_losses;
        self.clean_restarts += o.clean_restarts;
        self.statements += o.statements;
        self.commits_checked += o.commits_checked;
        self.in_doubt += o.in_doubt;
        self.panics += o.panics;
        self.faults_injected += o.faults_injected;
        self.writes_torn += o.writes_torn;
        self.writes_lost += o.writes_lost;
        self.checkpoints += o.checkpoints;
        self.stale_fsm_entries += o.stale_fsm_entries;
        self.rollbacks_to_savepoint += o.rollbacks_to_savepoint;
        self.write_back_pages += o.write_back_pages;
        self.parallel_copies += o.parallel_copies;
        self.pre_extended_pages += o.pre_extended_pages;
        self.wal_segments_made_ahead += o.wal_segments_made_ahead;
        self.sequence_calls += o.sequence_calls;
        self.all_visible_pages_checked += o.all_visible_pages_checked;
    }
}

/// A seed that found a defect.
#[derive(Debug)]
pub struct Failure {
    pub seed: u64,
    pub generation: u32,
    pub message: String,
    pub replay: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "torture seed {} failed in generation {}: {}\nreplay: {}", self.seed, self.generation, self.message, self.replay)
    }
}

/// The background processes' work, shared with the failpoint actions.
struct Background {
    run: Option<CheckpointRun>,
    rng: Rng,
    shared: Weak<Shared>,
    checkpoints: u64,
    /// An error a failpoint action met (reported after the statement).
    error: Option<String>,
}

struct Sess {
    s: Session,
    open: bool,
    failed: bool,
    pending: Vec<Change>,
    /// Open savepoints `sp0`, `sp1`, ...: how many pending changes each one keeps.
    savepoints: Vec<usize>,
}

#[derive(Clone, Copy)]
enum SavepointOp {
    Set,
    RollbackTo,
    Release,
}

/// How a statement ended.
enum Outcome {
    /// Nothing explains the error: the caller reports it as a failure.
    Unexplained,
    /// Failed on purpose (bad input) or by an injected fault: the statement (or, in a block,
    /// the transaction) is rolled back.
    Failed,
    /// The power went out, or a PANIC stopped the database: end the generation.
    Stopped,
}

const DIR: &str = "/sim/data";
/// The torture's sequence.
const SEQ: &str = "torture_seq";
const SESSIONS: usize = 3;
const SETTINGS: &[&str] = &["shared_buffers=384kB", "wal_buffers=64kB", "lock_timeout=5s", "deadlock_timeout=1s", "max_connections=8"];

/// Runs one seed; `Err` names what broke and how to replay it.
pub fn run_seed(opts: &Options) -> Result<Report, Failure> {
    let mut t = Torture::new(opts.clone());
    let mut generation = 0;
    let r = (|| {
        t.init()?;
        for g in 0..opts.generations {
            generation = g;
            t.generation(g == 0)?;
        }
        // A last open and check: the final crash must lose nothing either.
        let db = t.open()?;
        t.verify(&db)?;
        drop(db);
        Ok(())
    })();
    match r {
        Ok(()) => {
            let st = t.disk.stats();
            t.report.faults_injected = st.faults_injected;
            t.report.writes_torn = st.writes_torn;
            t.report.writes_lost = st.writes_lost;
            t.report.seeds = 1;
            Ok(t.report)
        }
        Err(message) => Err(Failure { seed: opts.seed, generation, message, replay: opts.replay_command() }),
    }
}

struct Torture {
    opts: Options,
    disk: SimDisk,
    dir: PathBuf,
    rng: Rng,
    model: Model,
    /// Changes whose commit was never acknowledged (at most one: a single thread runs).
    in_doubt: Option<Vec<Change>>,
    next_id: i64,
    next_table: u32,
    /// The highest value `torture_seq` gave or was set to, acknowledged or not (`setval`
    /// only ever moves it past this, so no value can legitimately come twice).
    seq_high: i64,
    acked: u64,
    report: Report,
}

impl Torture {
    fn new(opts: Options) -> Torture {
        Torture {
            disk: SimDisk::new(opts.seed),
            rng: Rng::new(opts.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x70_7274),
            opts,
            dir: PathBuf::from(DIR),
            model: Model::default(),
            in_doubt: None,
            next_id: 1,
            next_table: 1,
            seq_high: 0,
            acked: 0,
            report: Report::default(),
        }
    }

    fn env(&self) -> Environment {
        Environment { vfs: Arc::new(self.disk.clone()), background_workers: false }
    }

    fn init(&mut self) -> Result<(), String> {
        Database::init_in(Arc::new(self.disk.clone()), &self.dir, &["wal_segment_size=1MB".into()]).map_err(|e| format!("init: {e}"))
    }

    fn open(&mut self) -> Result<Database, String> {
        let mut set: Vec<String> = SETTINGS.iter().map(|s| s.to_string()).collect();
        // WAL compression changes from one start to the next: recovery reads whatever the
        // previous run wrote, compressed or not.
        set.push(format!("wal_compression={}", ["off", "lz4", "zstd"][self.rng.below(3) as usize]));
        // Small COPY chunks, so that a parallel COPY's workers share even the torture's inputs.
        set.push(format!("heapstore.copy_chunk_size={}", ["1kB", "4kB", "64kB"][self.rng.below(3) as usize]));
        Database::open_in(self.env(), &self.dir, &set).map_err(|e| format!("recovery failed: {e}"))
    }

    /// The database against the model (taking an in-doubt commit as whichever it was), then
    /// its own consistency.
    fn verify(&mut self, db: &Database) -> Result<(), String> {
        let got = check::read_back(db)?;
        let without = self.model.clone();
        match (check::diff(&without, &got), self.in_doubt.take()) {
            (None, d) => {
                if d.is_some() {
                    self.report.in_doubt += 1;
                }
            }
            (Some(e), None) => return Err(e),
            (Some(e), Some(d)) => {
                let mut with = self.model.clone();
                with.apply_all(&d);
                if let Some(e2) = check::diff(&with, &got) {
                    return Err(format!("{e} (without the in-doubt commit); {e2} (with it)"));
                }
                self.model = with;
                self.report.in_doubt += 1;
            }
        }
        self.report.commits_checked += std::mem::take(&mut self.acked);
        let c = check::consistency(db)?;
        self.report.stale_fsm_entries += c.stale_fsm_entries;
        self.report.all_visible_pages_checked += c.all_visible_pages;
        if let Some(floor) = self.model.seq_floor {
            let v = check::next_value(db, SEQ)?;
            if v <= floor {
                return Err(format!(
                    "sequence {SEQ}: nextval gave {v} after recovery, not past {floor}, a value an acknowledged commit was given"
                ));
            }
            self.model.seq_floor = Some(v);
            // Values handed to work that was never acknowledged (an open or rolled-back
            // transaction whose WAL was not flushed) may come back after a crash, as in
            // PostgreSQL: from here on, only values past this one are new.
            self.seq_high = v;
        }
        Ok(())
    }

    /// `SELECT nextval(..)` or `SELECT setval(.., past every value given so far)`, in the
    /// session's block or alone.
    fn sequence(&mut self, db: &Database, sess: &mut Sess) -> Result<bool, String> {
        let set = self.rng.below(8) == 0;
        let target = self.seq_high + 1 + self.rng.below(50) as i64;
        let sql = if set { format!("SELECT setval('{SEQ}', {target})") } else { format!("SELECT nextval('{SEQ}')") };
        trace(|| format!("session {}: {sql}", sess.s.id()));
        let r = sess.s.execute(&sql);
        let r = match r {
            Ok(res) => {
                let got = res.last().and_then(|q| q.rows.first()).and_then(|row| row[0].as_deref()).and_then(|x| x.parse::<i64>().ok());
                match got {
                    Some(v) => {
                        if v <= self.seq_high && !set {
                            return Err(format!("sequence {SEQ}: nextval gave {v}, not past {} given before", self.seq_high));
                        }
                        self.seq_high = self.seq_high.max(v);
                        self.report.sequence_calls += 1;
                        Ok(v)
                    }
                    None => return Err(format!("{sql} answered no value")),
                }
            }
            Err(e) => Err(e),
        };
        let v = r.as_ref().map_or(0, |v| *v);
        self.finish(db, sess, r.map(|_| ()), vec![Change::Seq(v)], false, "sequence")
    }

    fn generation(&mut self, first: bool) -> Result<(), String> {
        self.report.generations += 1;
        trace(|| format!("generation {} opens (disk op {})", self.report.generations, self.disk.ops()));
        let db = self.open()?;
        if !first {
            self.verify(&db)?;
        }
        let bg = Arc::new(Mutex::new(Background {
            run: None,
            rng: Rng::new(self.rng.next_u64()),
            shared: Arc::downgrade(db.shared()),
            checkpoints: 0,
            error: None,
        }));
        set_failpoints(&db, &bg);
        if self.model.seq_floor.is_none() {
            // Created before any fault or power cut is armed: its creation is acknowledged.
            let mut s = db.session();
            s.execute(&format!("CREATE SEQUENCE {SEQ}")).map_err(|e| format!("CREATE SEQUENCE failed: {e}"))?;
            self.model.seq_floor = Some(0);
            self.acked += 1;
        }
        let faults = self.opts.faults && self.rng.below(4) == 0;
        if faults {
            let r = |rng: &mut Rng, max: f64| if rng.below(2) == 0 { 0.0 } else { rng.next_f64() * max };
            self.disk.set_fault_rates(FaultRates {
                eio_read: r(&mut self.rng, 0.002),
                eio_write: r(&mut self.rng, 0.003),
                eio_fsync: r(&mut self.rng, 0.01),
                enospc: r(&mut self.rng, 0.003),
                short_write: r(&mut self.rng, 0.05),
            });
        }
        let mut sessions: Vec<Sess> = (0..SESSIONS)
            .map(|_| Sess { s: db.session(), open: false, failed: false, pending: Vec::new(), savepoints: Vec::new() })
            .collect();
        let steps = 20 + self.rng.below(self.opts.max_steps.max(21) as u64 - 20) as u32;
        let cut_at = self.rng.below(steps as u64) as u32;
        let clean = self.rng.below(10) == 0;
        let mut result = Ok(());
        for step in 0..steps {
            if step == cut_at && !clean {
                self.disk.cut_power_at(self.disk.ops() + 1 + self.rng.below(400));
            }
            match self.background(&db, &bg) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            self.report.statements += 1;
            match self.statement(&db, &mut sessions) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            if let Some(e) = bg.lock().unwrap_or_else(|e| e.into_inner()).error.take() {
                result = Err(e);
                break;
            }
        }
        self.disk.set_fault_rates(FaultRates::default());
        db.shared().wal.failpoints.clear(crate::session::FAILPOINT_COMMIT_AFTER_RECORD);
        db.shared().wal.failpoints.clear(crate::buffer::critical::FAILPOINT_AFTER_INSERT);
        {
            let mut b = bg.lock().unwrap_or_else(|e| e.into_inner());
            self.report.checkpoints += b.checkpoints;
            b.run = None;
        }
        self.report.write_back_pages += db.shared().pool.write_back.pages_written.load(std::sync::atomic::Ordering::Relaxed);
        self.report.pre_extended_pages += db.shared().pre_extend.pages.load(std::sync::atomic::Ordering::Relaxed);
        self.report.wal_segments_made_ahead += db.shared().wal.stats().segments_created_ahead;
        result?;
        let stopped = self.stopped(&db);
        if clean && !stopped {
            // A clean shutdown: every open transaction rolls back, then the shutdown checkpoint.
            for ss in &mut sessions {
                if ss.open {
                    let _ = ss.s.execute("ROLLBACK");
                }
            }
            drop(sessions);
            match db.close() {
                Ok(()) => self.report.clean_restarts += 1,
                // A shutdown checkpoint that meets an injected fault fails; the power loss then
                // follows as for any crash.
                Err(_) if self.disk.is_dead() || self.faults_on() => {}
                Err(e) => return Err(format!("clean shutdown failed: {e}")),
            }
        } else {
            drop(sessions);
            self.disk.cut_power();
            db.crash();
        }
        // The power goes out (after a clean shutdown too: nothing durable may be lost).
        let survive = [0.0, 0.3, 0.5, 0.9, 1.0][self.rng.below(5) as usize];
        trace(|| format!("power loss (survive {survive}) at disk op {}", self.disk.ops()));
        self.disk.power_loss(PowerLossModel { survive, tear: 0.4 });
        self.report.power_losses += 1;
        Ok(())
    }

    /// The background processes' work between statements. False: the database stopped.
    fn background(&mut self, db: &Database, bg: &Arc<Mutex<Background>>) -> Result<bool, String> {
        let sh = db.shared();
        let pins = sh.pool.new_pins();
        let roll = self.rng.below(100);
        trace(|| format!("background {roll}"));
        let r = match roll {
            0..=9 => {
                crate::buffer::bgwriter::round_now(&sh.pool, &pins, 1 + self.rng.below(16), 1 + self.rng.below(24));
                Ok(())
            }
            10..=14 => {
                // The write-back worker's round: pages COPY filled, written off the session.
                sh.pool.write_back.drain(&sh.pool, &pins, 1 + self.rng.below(64) as usize);
                Ok(())
            }
            15..=27 => sh.wal.write_upto(sh.wal.insert_lsn()),
            28..=31 => sh.wal.flush(sh.wal.insert_lsn()),
            // The `wal prealloc` thread's round: segments made ahead of the insert position,
            // so power losses find them complete, half made (a temporary file) or in use.
            50..=53 => sh.wal.prepare_ahead().map(|_| ()),
            32..=47 => {
                let mut b = bg.lock().unwrap_or_else(|e| e.into_inner());
                match b.run.take() {
                    None if self.rng.below(3) == 0 => sh.checkpoint_begin(CheckpointKind::Time).map(|run| b.run = Some(run)),
                    None => Ok(()),
                    Some(mut run) if self.rng.below(3) != 0 => {
                        let n = 1 + self.rng.below(8) as usize;
                        let r = sh.checkpoint_write(&mut run, n);
                        b.run = Some(run);
                        r.map(|_| ())
                    }
                    Some(run) => match sh.checkpoint_finish(run, false) {
                        Ok(Some(run)) => {
                            b.run = Some(run);
                            Ok(())
                        }
                        Ok(None) => {
                            b.checkpoints += 1;
                            Ok(())
                        }
                        Err(e) => Err(e),
                    },
                }
            }
            48..=49 => {
                let b = bg.lock().unwrap_or_else(|e| e.into_inner());
                if b.run.is_none() {
                    drop(b);
                    let r = sh.checkpoint(CheckpointKind::Requested);
                    if r.is_ok() {
                        bg.lock().unwrap_or_else(|e| e.into_inner()).checkpoints += 1;
                    }
                    r
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        };
        if let Err(e) = &r {
            trace(|| format!("background {roll} failed: {e}"));
        }
        match r {
            Ok(()) => Ok(!self.stopped(db)),
            Err(_) if self.stopped(db) => Ok(false),
            Err(_) if self.faults_on() => Ok(true),
            Err(e) => Err(format!("background work failed with no fault injected: {e}")),
        }
    }

    fn faults_on(&self) -> bool {
        self.disk.stats().faults_injected > 0
    }

    /// The power is out, a PANIC stopped the database, or a failed fsync poisoned it.
    fn stopped(&self, db: &Database) -> bool {
        let sh = db.shared();
        self.disk.is_dead() || sh.wal.panicked() || sh.wal.check_poison().is_err() || sh.smgr.check_poisoned().is_err()
    }

    /// Runs one statement of one session. False: the database stopped.
    fn statement(&mut self, db: &Database, sessions: &mut [Sess]) -> Result<bool, String> {
        let i = self.rng.below(sessions.len() as u64) as usize;
        let others_open = sessions.iter().enumerate().any(|(j, x)| j != i && x.open);
        // Rows other open transactions changed: this session must not wait for them.
        let locked: std::collections::BTreeSet<(String, i64)> = sessions
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, x)| x.pending.iter())
            .filter_map(|c| match c {
                Change::Insert { table, id, .. } | Change::Update { table, id, .. } | Change::Delete { table, id } => {
                    Some((table.clone(), *id))
                }
                _ => None,
            })
            .collect();
        let sess = &mut sessions[i];
        if sess.open {
            if sess.failed {
                if !sess.savepoints.is_empty() && self.rng.below(100) < 60 {
                    return self.savepoint(db, sess, SavepointOp::RollbackTo);
                }
                return self.end_block(db, sess, "ROLLBACK");
            }
            match self.rng.below(100) {
                0..=14 => return self.end_block(db, sess, "COMMIT"),
                15..=21 => return self.end_block(db, sess, "ROLLBACK"),
                22..=27 => return self.savepoint(db, sess, SavepointOp::Set),
                28..=32 if !sess.savepoints.is_empty() => return self.savepoint(db, sess, SavepointOp::RollbackTo),
                33..=35 if !sess.savepoints.is_empty() => return self.savepoint(db, sess, SavepointOp::Release),
                36..=40 => return self.sequence(db, sess),
                _ => return self.dml(db, sess, &locked),
            }
        }
        match self.rng.below(100) {
            0..=14 => {
                trace(|| format!("session {}: BEGIN", sess.s.id()));
                sess.s.execute("BEGIN").map_err(|e| format!("BEGIN failed: {e}"))?;
                sess.open = true;
                Ok(true)
            }
            15..=21 => self.sequence(db, sess),
            22..=76 => self.dml(db, sess, &locked),
            77..=89 if !others_open => self.ddl(db, sess),
            77..=89 => Ok(true),
            _ => {
                let Some(t) = self.pick_table() else { return Ok(true) };
                // Half of them also ANALYZE (the statistics file is replaced at each).
                let what = if self.rng.below(2) == 0 { "VACUUM ANALYZE" } else { "VACUUM" };
                trace(|| format!("session {}: {what} {t}", sess.s.id()));
                let r = sess.s.execute(&format!("{what} {t}"));
                self.finish(db, sess, r.map(|_| ()), Vec::new(), false, "VACUUM")
            }
        }
    }

    fn pick_table(&mut self) -> Option<String> {
        let n = self.model.tables.len();
        (n > 0).then(|| self.model.tables.keys().nth(self.rng.below(n as u64) as usize).expect("in range").clone())
    }

    /// SAVEPOINT, ROLLBACK TO or RELEASE in the session's open block; the model keeps the
    /// pending changes a savepoint covers and drops those after it when rolled back to.
    fn savepoint(&mut self, db: &Database, sess: &mut Sess, op: SavepointOp) -> Result<bool, String> {
        let n = sess.savepoints.len();
        let k = if n == 0 { 0 } else { self.rng.below(n as u64) as usize };
        let sql = match op {
            SavepointOp::Set => format!("SAVEPOINT sp{n}"),
            SavepointOp::RollbackTo => format!("ROLLBACK TO SAVEPOINT sp{k}"),
            SavepointOp::Release => format!("RELEASE SAVEPOINT sp{k}"),
        };
        let r = sess.s.execute(&sql);
        trace(|| format!("session {}: {sql}: {}", sess.s.id(), r.as_ref().map_or_else(|e| e.to_string(), |_| "ok".into())));
        match r {
            Ok(_) => {
                match op {
                    SavepointOp::Set => sess.savepoints.push(sess.pending.len()),
                    SavepointOp::RollbackTo => {
                        sess.pending.truncate(sess.savepoints[k]);
                        sess.savepoints.truncate(k + 1);
                        sess.failed = false;
                        self.report.rollbacks_to_savepoint += 1;
                    }
                    SavepointOp::Release => sess.savepoints.truncate(k),
                }
                Ok(true)
            }
            Err(e) => match self.classify(db, &e, false) {
                Outcome::Stopped => Ok(false),
                Outcome::Failed => {
                    // The transaction is failed with no savepoints left: only ROLLBACK ends it.
                    sess.failed = true;
                    sess.savepoints.clear();
                    Ok(true)
                }
                Outcome::Unexplained => Err(format!("{sql} failed unexpectedly: {e}")),
            },
        }
    }

    fn end_block(&mut self, db: &Database, sess: &mut Sess, what: &str) -> Result<bool, String> {
        let r = sess.s.execute(what);
        trace(|| {
            format!(
                "session {}: {what}: {}",
                sess.s.id(),
                match &r {
                    Ok(_) => "ok".to_string(),
                    Err(e) => e.to_string(),
                }
            )
        });
        let changes = std::mem::take(&mut sess.pending);
        sess.savepoints.clear();
        let failed = sess.failed;
        sess.open = false;
        sess.failed = false;
        match r {
            Ok(res) => {
                let tag = res.last().map(|q| q.tag.as_str()).unwrap_or("");
                if what == "COMMIT" && !failed {
                    if tag != "COMMIT" {
                        return Err(format!("COMMIT answered {tag:?}"));
                    }
                    self.model.apply_all(&changes);
                    self.acked += 1;
                }
                Ok(true)
            }
            Err(e) => {
                let committing = what == "COMMIT" && !failed;
                match self.classify(db, &e, false) {
                    Outcome::Stopped => {
                        if committing {
                            self.in_doubt = Some(changes);
                        }
                        Ok(false)
                    }
                    Outcome::Failed => Ok(true),
                    Outcome::Unexplained => Err(format!("{what} failed unexpectedly: {e}")),
                }
            }
        }
    }

    /// What an error means for the model.
    fn classify(&mut self, db: &Database, e: &PgError, bad_input: bool) -> Outcome {
        if e.panic {
            self.report.panics += 1;
            return Outcome::Stopped;
        }
        if self.stopped(db) {
            return Outcome::Stopped;
        }
        let input_error = matches!(e.code, "22P02" | "22P03" | "22P04" | "08P01");
        if bad_input && input_error {
            return Outcome::Failed;
        }
        if self.faults_on() && matches!(e.code, "58030" | "53100" | "XX001" | "58P01") {
            return Outcome::Failed;
        }
        Outcome::Unexplained
    }

    /// Ends a statement: applies its changes (autocommit), keeps them (in a block), or
    /// classifies its error.
    fn finish(
        &mut self,
        db: &Database,
        sess: &mut Sess,
        r: Result<(), PgError>,
        changes: Vec<Change>,
        bad_input: bool,
        what: &str,
    ) -> Result<bool, String> {
        trace(|| {
            format!(
                "{what}: {}",
                match &r {
                    Ok(()) => "ok".to_string(),
                    Err(e) => e.to_string(),
                }
            )
        });
        match r {
            Ok(()) => {
                if bad_input {
                    return Err(format!("{what}: malformed input was accepted"));
                }
                if sess.open {
                    sess.pending.extend(changes);
                } else {
                    self.model.apply_all(&changes);
                    self.acked += 1;
                }
                Ok(true)
            }
            Err(e) => match self.classify(db, &e, bad_input) {
                Outcome::Stopped => {
                    if !sess.open && !changes.is_empty() {
                        self.in_doubt = Some(changes);
                    }
                    Ok(false)
                }
                Outcome::Failed => {
                    if sess.open {
                        sess.failed = true;
                    }
                    Ok(true)
                }
                Outcome::Unexplained => Err(format!("{what} failed: {e}")),
            },
        }
    }

    fn dml(&mut self, db: &Database, sess: &mut Sess, locked: &std::collections::BTreeSet<(String, i64)>) -> Result<bool, String> {
        let Some(table) = self.pick_table() else { return if sess.open { Ok(true) } else { self.ddl(db, sess) } };
        let rows_now = self.model.tables[&table].rows.len();
        let roll = if rows_now > 3000 { 70 + self.rng.below(30) } else { self.rng.below(100) };
        match roll {
            0..=29 => {
                let (id, row) = (self.new_id(), workload::random_row(&mut self.rng));
                trace(|| format!("session {}: INSERT {table} id {id}", sess.s.id()));
                let r = sess.s.execute(&workload::insert(&table, id, &row)).and_then(|res| expect_tag(&res, "INSERT 0 1"));
                self.finish(db, sess, r, vec![Change::Insert { table, id, row }], false, "INSERT")
            }
            30..=54 => {
                let n = match self.rng.below(10) {
                    0 => 300 + self.rng.below(1200),
                    _ => 1 + self.rng.below(60),
                } as usize;
                let rows: Vec<(i64, Row)> = (0..n).map(|_| (self.new_id(), workload::random_row(&mut self.rng))).collect();
                let format = Format::pick(&mut self.rng);
                let bad = (self.rng.below(8) == 0).then(|| self.rng.below(n as u64) as usize);
                let input = workload::copy_input(format, &rows, bad);
                let mut reader: &[u8] = &input;
                let parallel = (self.rng.below(3) == 0).then(|| 2 + self.rng.below(3));
                if self.rng.below(4) == 0 {
                    return self.staged_copy(db, sess, &table, format, parallel, &input, rows, bad.is_some());
                }
                let sql = workload::copy_sql(&table, format, parallel);
                trace(|| format!("session {}: COPY {table} ids {}..={}", sess.s.id(), rows[0].0, rows[n - 1].0));
                let r = sess
                    .s
                    .execute_with_io(&sql, &mut CopyIo { stdin: Some(&mut reader), stdout: None, rows: None })
                    .and_then(|res| expect_tag(&res, &format!("COPY {n}")));
                if r.is_ok() && parallel.is_some() {
                    self.report.parallel_copies += 1;
                }
                let changes = rows.into_iter().map(|(id, row)| Change::Insert { table: table.clone(), id, row }).collect();
                self.finish(db, sess, r, changes, bad.is_some(), "COPY")
            }
            _ => {
                // An existing committed row no other open transaction changed, that this one
                // has not deleted.
                let t = &self.model.tables[&table];
                if t.rows.is_empty() {
                    return Ok(true);
                }
                let k = self.rng.below(t.rows.len() as u64) as usize;
                let id = *t.rows.keys().nth(k).expect("in range");
                let gone = sess.pending.iter().any(|c| matches!(c, Change::Delete { table: tt, id: x } if *tt == table && *x == id))
                    || sess.pending.iter().any(|c| matches!(c, Change::Truncate { name } | Change::DropTable { name } if *name == table));
                if locked.contains(&(table.clone(), id)) || gone {
                    return Ok(true);
                }
                trace(|| format!("session {}: {} {table} id {id}", sess.s.id(), if roll < 85 { "UPDATE" } else { "DELETE" }));
                if roll < 85 {
                    let row = workload::random_row(&mut self.rng);
                    let r = sess.s.execute(&workload::update(&table, id, &row)).and_then(|res| expect_tag(&res, "UPDATE 1"));
                    self.finish(db, sess, r, vec![Change::Update { table, id, row }], false, "UPDATE")
                } else {
                    let r = sess.s.execute(&workload::delete(&table, id)).and_then(|res| expect_tag(&res, "DELETE 1"));
                    self.finish(db, sess, r, vec![Change::Delete { table, id }], false, "DELETE")
                }
            }
        }
    }

    fn ddl(&mut self, db: &Database, sess: &mut Sess) -> Result<bool, String> {
        let ntables = self.model.tables.len();
        let roll = if ntables == 0 { 0 } else { self.rng.below(100) };
        let (sql, change) = match roll {
            0..=24 if ntables < 4 => {
                let name = format!("t{}", self.next_table);
                self.next_table += 1;
                let pk = self.rng.below(10) < 7;
                (workload::create_table(&name, pk), Change::CreateTable { name, pk })
            }
            25..=34 if ntables > 1 => {
                let name = self.pick_table().expect("tables exist");
                (format!("DROP TABLE {name}"), Change::DropTable { name })
            }
            35..=46 => {
                let name = self.pick_table().expect("tables exist");
                (format!("TRUNCATE {name}"), Change::Truncate { name })
            }
            47..=54 => {
                let name = self.pick_table().expect("tables exist");
                let sql = format!(
                    "ALTER TABLE {name} ADD COLUMN extra int DEFAULT 1, DROP COLUMN extra, RENAME TO {name}_r; ALTER TABLE {name}_r RENAME TO {name}"
                );
                (sql, Change::Rewrite { name })
            }
            55..=79 => {
                let table = self.pick_table().expect("tables exist");
                if self.model.tables[&table].indexes.len() >= 2 {
                    return Ok(true);
                }
                let name = format!("{table}_v{}", self.next_table);
                self.next_table += 1;
                (format!("CREATE INDEX {name} ON {table} (v)"), Change::CreateIndex { table, name })
            }
            80..=99 => {
                let table = self.pick_table().expect("tables exist");
                let Some(name) = self.model.tables[&table].indexes.iter().next().cloned() else { return Ok(true) };
                (format!("DROP INDEX {name}"), Change::DropIndex { table, name })
            }
            _ => return Ok(true),
        };
        let r = sess.s.execute(&sql).map(|_| ());
        self.finish(db, sess, r, vec![change], false, &sql)
    }

    /// A load staged through a temporary table: COPY into it, then `INSERT INTO table SELECT`
    /// from it (the rows reach the table in that one statement), then DROP it (in a block,
    /// `ON COMMIT DROP` does).
    #[allow(clippy::too_many_arguments)]
    fn staged_copy(
        &mut self,
        db: &Database,
        sess: &mut Sess,
        table: &str,
        format: Format,
        parallel: Option<u64>,
        input: &[u8],
        rows: Vec<(i64, Row)>,
        bad: bool,
    ) -> Result<bool, String> {
        let stage = format!("stage{}", self.next_table);
        self.next_table += 1;
        let n = rows.len();
        let create = format!("CREATE TEMP TABLE {stage} (id bigint, v bigint, pad text){}", if sess.open { " ON COMMIT DROP" } else { "" });
        trace(|| format!("session {}: staged COPY {table} through {stage} ids {}..={}", sess.s.id(), rows[0].0, rows[n - 1].0));
        let r = sess.s.execute(&create).map(|_| ());
        let ok = r.is_ok();
        if !self.finish(db, sess, r, Vec::new(), false, &create)? {
            return Ok(false);
        }
        if !ok {
            return Ok(true);
        }
        let mut reader: &[u8] = input;
        let sql = workload::copy_sql(&stage, format, parallel);
        let r = sess
            .s
            .execute_with_io(&sql, &mut CopyIo { stdin: Some(&mut reader), stdout: None, rows: None })
            .and_then(|res| expect_tag(&res, &format!("COPY {n}")));
        let ok = r.is_ok();
        if !self.finish(db, sess, r, Vec::new(), bad, &sql)? {
            return Ok(false);
        }
        if !ok {
            return Ok(true);
        }
        let sql = format!("INSERT INTO {table} SELECT * FROM {stage}");
        let r = sess.s.execute(&sql).and_then(|res| expect_tag(&res, &format!("INSERT 0 {n}")));
        let ok = r.is_ok();
        let changes = rows.into_iter().map(|(id, row)| Change::Insert { table: table.to_string(), id, row }).collect();
        if !self.finish(db, sess, r, changes, false, &sql)? {
            return Ok(false);
        }
        if ok && !sess.open {
            let sql = format!("DROP TABLE {stage}");
            let r = sess.s.execute(&sql).map(|_| ());
            return self.finish(db, sess, r, Vec::new(), false, &sql);
        }
        Ok(true)
    }

    fn new_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }
}

/// `HEAPSTORE_TORTURE_TRACE=1` prints every statement and event (for replaying a failure).
fn trace(what: impl FnOnce() -> String) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("HEAPSTORE_TORTURE_TRACE").is_some()) {
        let mut line = what();
        if line.len() > 160 {
            let mut cut = 160;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        eprintln!("torture: {line}");
    }
}

fn expect_tag(res: &[crate::QueryResult], want: &str) -> crate::Result<()> {
    let tag = res.last().map(|q| q.tag.as_str()).unwrap_or("");
    if tag == want {
        Ok(())
    } else {
        Err(PgError::internal(format!("statement answered {tag:?}, the model expects {want:?}")))
    }
}

/// Failpoint actions: a checkpoint begins (and, after a COMMIT record, tries to finish) inside
/// the windows that the commit and critical-section invariants protect.
fn set_failpoints(db: &Database, bg: &Arc<Mutex<Background>>) {
    let fp = &db.shared().wal.failpoints;
    let b = bg.clone();
    fp.set(crate::session::FAILPOINT_COMMIT_AFTER_RECORD, move || failpoint_checkpoint(&b, true));
    let b = bg.clone();
    fp.set(crate::buffer::critical::FAILPOINT_AFTER_INSERT, move || failpoint_checkpoint(&b, false));
}

fn failpoint_checkpoint(bg: &Arc<Mutex<Background>>, try_finish: bool) {
    let Ok(mut b) = bg.try_lock() else { return };
    if b.rng.below(4) != 0 {
        return;
    }
    let Some(sh) = b.shared.upgrade() else { return };
    let run = match b.run.take() {
        Some(r) => Some(r),
        None => sh.checkpoint_begin_nowait(CheckpointKind::Time).unwrap_or_default(),
    };
    let Some(run) = run else { return };
    if !try_finish {
        b.run = Some(run);
        return;
    }
    match sh.checkpoint_finish(run, false) {
        Ok(Some(run)) => b.run = Some(run),
        Ok(None) => b.checkpoints += 1,
        Err(e) => {
            // Expected only when the disk is failing; the runner decides.
            let _ = e;
        }
    }
}

/// Runs seeds from `first` for `seeds` seeds or until `minutes` have passed (whichever ends
/// first; `minutes` 0 = no limit). Stops at the first failure.
pub fn soak(first: u64, seeds: u64, minutes: f64, base: &Options, mut progress: impl FnMut(&Report)) -> Result<Report, Failure> {
    let start = std::time::Instant::now();
    let mut total = Report::default();
    for seed in first..first.saturating_add(seeds) {
        if minutes > 0.0 && start.elapsed().as_secs_f64() > minutes * 60.0 {
            break;
        }
        let opts = Options { seed, ..base.clone() };
        total.add(&run_seed(&opts)?);
        progress(&total);
    }
    Ok(total)
}

/// One line saying what a run covered.
pub fn summary(r: &Report, took: std::time::Duration) -> String {
    format!(
        "torture: {} seeds, {} generations, {} simulated power losses ({} after a clean shutdown), {} statements, \
         {} acknowledged commits checked after recovery, {} in-doubt commits resolved, {} PANICs, {} injected faults, \
         {} torn and {} lost volatile writes, {} checkpoints, {} rollbacks to savepoints, {} stale free-space-map entries, \
         {} pages written back off the session, {} parallel COPYs, {} pages pre-extended, {} WAL segments made ahead, {} nextval/setval calls, \
         {} all-visible pages checked; nothing lost ({:.1} s)",
        r.seeds,
        r.generations,
        r.power_losses,
        r.clean_restarts,
        r.statements,
        r.commits_checked,
        r.in_doubt,
        r.panics,
        r.faults_injected,
        r.writes_torn,
        r.writes_lost,
        r.checkpoints,
        r.rollbacks_to_savepoint,
        r.stale_fsm_entries,
        r.write_back_pages,
        r.parallel_copies,
        r.pre_extended_pages,
        r.wal_segments_made_ahead,
        r.sequence_calls,
        r.all_visible_pages_checked,
        took.as_secs_f64()
    )
}

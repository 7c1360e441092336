//! Checkpoints and the checkpointer.
//!
//! A checkpoint makes everything before its REDO pointer durable in the data files, so that
//! recovery can start there and the WAL before it can be recycled:
//!
//! ```text
//!  1. REDO := current insert position (taken with every WAL insertion lock held, and the DDL
//!     lock, so no DDL commit sits between its commit record and its catalog save)
//!  2. write every dirty buffer (WAL before data applies); a timed checkpoint spreads this over
//!     checkpoint_completion_target × checkpoint_timeout
//!  3. wait until no commit is between its COMMIT record and its commit-log bit (commits
//!     hold `delay_checkpoint` shared there: PostgreSQL's DELAY_CHKPT_START); fsync every
//!     relation segment written since the last checkpoint, each once (the sync request queue
//!     in smgr), and save the commit log
//!  4. insert the CHECKPOINT record {REDO, next xid} and flush it
//!  5. control file := {checkpoint LSN, REDO}; recycle WAL segments before REDO
//! ```
//!
//! The checkpointer thread starts one when `checkpoint_timeout` has passed since the last, or
//! when more than half of `max_wal_size` of WAL was written since the last REDO pointer, or on
//! request; shutdown and the end of recovery run one directly.
//!
//! Invariants:
//! 1. One checkpoint at a time (`CheckpointSlot`).
//! 2. A page changed before REDO is on disk and synced before the control file points at the
//!    new checkpoint; a change after REDO whose page had not been logged in full since REDO
//!    carries a full-page image (the heap's decision against the REDO pointer, remade if it
//!    moved), so recovery from REDO repairs torn pages.
//! 3. A commit whose COMMIT record lies before REDO has set its commit-log bit before the
//!    commit log is saved (step 3's wait), so recovery, which replays only from REDO, never
//!    loses it.
//! 4. A buffer changed by a record before REDO is dirty when step 1 collects (the critical
//!    section marks pages dirty before inserting their record: `buffer::critical`), so step 2
//!    writes it.

use crate::db::Shared;
use crate::error::Result;
use crate::recovery::{CheckpointData, RM_XLOG, XLOG_CHECKPOINT};
use crate::stats::{self, BackendType};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointKind {
    Time,
    Wal,
    Requested,
    Shutdown,
    EndOfRecovery,
}

impl CheckpointKind {
    /// PostgreSQL's words in "checkpoint starting: ...".
    pub fn describe(self) -> &'static str {
        match self {
            CheckpointKind::Time => "time",
            CheckpointKind::Wal => "wal",
            CheckpointKind::Requested => "immediate force wait",
            CheckpointKind::Shutdown => "shutdown immediate",
            CheckpointKind::EndOfRecovery => "end-of-recovery immediate wait",
        }
    }
}

/// pg_stat_checkpointer's counters.
#[derive(Default)]
pub struct CheckpointStats {
    pub timed: AtomicU64,
    pub requested: AtomicU64,
    pub buffers_written: AtomicU64,
    pub write_ms: AtomicU64,
    pub sync_ms: AtomicU64,
}

/// One checkpoint at a time (invariant 1): a flag, so that a checkpoint driven step by step
/// (the crash torture's) can hold it across statements.
#[derive(Default)]
pub(crate) struct CheckpointSlot {
    running: Mutex<bool>,
    free: Condvar,
}

impl CheckpointSlot {
    fn take(self: &Arc<Self>) -> SlotGuard {
        let mut r = self.running.lock().unwrap_or_else(|e| e.into_inner());
        while *r {
            r = self.free.wait(r).unwrap_or_else(|e| e.into_inner());
        }
        *r = true;
        SlotGuard(self.clone())
    }
}

impl CheckpointSlot {
    fn try_take(self: &Arc<Self>) -> Option<SlotGuard> {
        let mut r = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if *r {
            return None;
        }
        *r = true;
        Some(SlotGuard(self.clone()))
    }
}

struct SlotGuard(Arc<CheckpointSlot>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        *self.0.running.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.0.free.notify_all();
    }
}

/// A checkpoint in progress: begun ([`Shared::checkpoint_begin`]: REDO pointer taken, dirty
/// buffers collected), written step by step ([`Shared::checkpoint_write`]), finished
/// ([`Shared::checkpoint_finish`]: sync, commit log, record, control file). The checkpointer
/// runs all three at once; the crash torture interleaves them with statements.
pub struct CheckpointRun {
    kind: CheckpointKind,
    redo: u64,
    prev_redo: u64,
    dirty: Vec<crate::buffer::pool::BufferId>,
    next: usize,
    written: u64,
    start: Instant,
    write_s: Option<Duration>,
    _slot: SlotGuard,
}

impl CheckpointRun {
    /// The REDO pointer this checkpoint chose.
    pub fn redo(&self) -> u64 {
        self.redo
    }

    /// Buffers collected that are still to be written.
    pub fn left(&self) -> usize {
        self.dirty.len() - self.next
    }
}

impl Shared {
    /// Runs a checkpoint now.
    pub fn checkpoint(&self, kind: CheckpointKind) -> Result<()> {
        let prev_backend = stats::backend_type();
        stats::set_backend_type(BackendType::Checkpointer);
        let r = (|| {
            let mut run = self.checkpoint_begin(kind)?;
            let spread = matches!(kind, CheckpointKind::Time);
            let target = Duration::from_secs_f64(
                self.settings.ms("checkpoint_timeout") as f64 / 1e3 * self.settings.real("checkpoint_completion_target"),
            );
            let total = run.dirty.len().max(1);
            while !self.checkpoint_write(&mut run, 1)? {
                // Shutdown (fast mode, as PostgreSQL's) or someone waiting for a checkpoint of
                // their own: finish at full speed.
                let hurry = self.closed.load(Ordering::Acquire) || self.checkpoint_waiters.load(Ordering::Acquire) > 0;
                if spread && target > Duration::ZERO && !hurry {
                    // Stay at or behind schedule: progress i/n by elapsed/target.
                    let due = target.mul_f64(run.next as f64 / total as f64);
                    let ahead = due.saturating_sub(run.start.elapsed());
                    if ahead > Duration::from_millis(5) {
                        std::thread::sleep(ahead.min(Duration::from_millis(100)));
                    }
                }
            }
            let left = self.checkpoint_finish(run, true)?;
            debug_assert!(left.is_none(), "a waiting finish always finishes");
            Ok(())
        })();
        stats::set_backend_type(prev_backend);
        r
    }

    /// Step 1: waits for any other checkpoint, takes the REDO pointer (with the DDL lock, so no
    /// DDL commit sits between its commit record and its catalog save) and collects the dirty
    /// buffers. Takes no content lock, so it may run where pages are locked (a failpoint).
    pub fn checkpoint_begin(&self, kind: CheckpointKind) -> Result<CheckpointRun> {
        let waiting = kind != CheckpointKind::Time;
        if waiting {
            self.checkpoint_waiters.fetch_add(1, Ordering::AcqRel);
        }
        let slot = self.checkpoint_slot.take();
        if waiting {
            self.checkpoint_waiters.fetch_sub(1, Ordering::AcqRel);
        }
        let ddl = self.ddl_lock.lock().expect("poisoned");
        self.begin_locked(kind, slot, ddl)
    }

    /// As [`Shared::checkpoint_begin`], but `None` instead of waiting when a checkpoint is
    /// running or a DDL commit holds the DDL lock (the crash torture begins checkpoints from
    /// failpoints, where waiting could be waiting for itself).
    pub fn checkpoint_begin_nowait(&self, kind: CheckpointKind) -> Result<Option<CheckpointRun>> {
        let Some(slot) = self.checkpoint_slot.try_take() else { return Ok(None) };
        let Ok(ddl) = self.ddl_lock.try_lock() else { return Ok(None) };
        self.begin_locked(kind, slot, ddl).map(Some)
    }

    fn begin_locked(&self, kind: CheckpointKind, slot: SlotGuard, ddl: std::sync::MutexGuard<'_, ()>) -> Result<CheckpointRun> {
        let start = Instant::now();
        if self.settings.bool("log_checkpoints") {
            eprintln!("LOG:  checkpoint starting: {}", kind.describe());
        }
        self.wal.check_poison()?;
        let redo = self.wal.mark_redo_point();
        drop(ddl);
        let prev_redo = self.last_redo.load(Ordering::Acquire);
        let dirty = self.pool.dirty_buffer_ids();
        Ok(CheckpointRun { kind, redo, prev_redo, dirty, next: 0, written: 0, start, write_s: None, _slot: slot })
    }

    /// Step 2: writes up to `max` of the collected buffers (WAL before data applies); returns
    /// true once every collected buffer is written.
    pub fn checkpoint_write(&self, run: &mut CheckpointRun, max: usize) -> Result<bool> {
        let pins = self.pool.new_pins();
        let end = run.next.saturating_add(max).min(run.dirty.len());
        while run.next < end {
            run.written += self.pool.flush_buffer_id(&pins, run.dirty[run.next])? as u64;
            run.next += 1;
        }
        let done = run.next == run.dirty.len();
        if done && run.write_s.is_none() {
            run.write_s = Some(run.start.elapsed());
        }
        Ok(done)
    }

    /// Step 3: writes what is left, fsyncs every relation segment written since the last
    /// checkpoint, saves the commit log, inserts and flushes the CHECKPOINT record, points the
    /// control file at it and recycles WAL. Before saving the commit log it waits until no
    /// commit sits between its COMMIT record and its commit-log bit (session invariant 5);
    /// with `wait` false it returns the run instead of waiting (`Some`: call again later).
    pub fn checkpoint_finish(&self, mut run: CheckpointRun, wait: bool) -> Result<Option<CheckpointRun>> {
        while !self.checkpoint_write(&mut run, usize::MAX)? {}
        if wait {
            drop(self.delay_checkpoint.write().unwrap_or_else(|e| e.into_inner()));
        } else {
            match self.delay_checkpoint.try_write() {
                Ok(g) => drop(g),
                Err(std::sync::TryLockError::WouldBlock) => return Ok(Some(run)),
                Err(std::sync::TryLockError::Poisoned(g)) => drop(g),
            }
        }
        let (kind, redo, prev_redo, written, start) = (run.kind, run.redo, run.prev_redo, run.written, run.start);
        let write_s = run.write_s.unwrap_or_default();
        // Sync phase.
        let t_sync = Instant::now();
        let (files, longest) = if self.settings.bool("fsync") { self.smgr.sync_pending()? } else { (0, Duration::ZERO) };
        self.txns.save()?;
        let sync_s = t_sync.elapsed();
        // The checkpoint record and the control file.
        let shutdown = kind == CheckpointKind::Shutdown;
        let mut rec = crate::wal::RecordBuilder::new();
        rec.begin(RM_XLOG, XLOG_CHECKPOINT, 0);
        rec.set_main(&CheckpointData { redo, next_xid: self.txns.next_xid(), shutdown }.encode());
        let (ckpt, end) = self.wal.insert(&mut rec)?;
        self.wal.flush(end)?;
        self.update_control(ckpt, redo, shutdown)?;
        self.last_redo.store(redo, Ordering::Release);
        let recycled = self.wal.recycle_before(redo)?;
        match kind {
            CheckpointKind::Time => self.checkpoint_stats.timed.fetch_add(1, Ordering::Relaxed),
            _ => self.checkpoint_stats.requested.fetch_add(1, Ordering::Relaxed),
        };
        self.checkpoint_stats.buffers_written.fetch_add(written, Ordering::Relaxed);
        self.checkpoint_stats.write_ms.fetch_add(write_s.as_millis() as u64, Ordering::Relaxed);
        self.checkpoint_stats.sync_ms.fetch_add(sync_s.as_millis() as u64, Ordering::Relaxed);
        if self.settings.bool("log_checkpoints") {
            let total = start.elapsed();
            eprintln!(
                "LOG:  checkpoint complete: wrote {written} buffers ({:.1}%); 0 WAL file(s) added, 0 removed, {recycled} recycled; write={:.3} s, sync={:.3} s, total={:.3} s; sync files={files}, longest={:.3} s, average={:.3} s; distance={} kB, estimate={} kB",
                100.0 * written as f64 / self.pool.nbuffers() as f64,
                write_s.as_secs_f64(),
                sync_s.as_secs_f64(),
                total.as_secs_f64(),
                longest.as_secs_f64(),
                if files > 0 { sync_s.as_secs_f64() / files as f64 } else { 0.0 },
                redo.saturating_sub(prev_redo) / 1024,
                redo.saturating_sub(prev_redo) / 1024,
            );
        }
        Ok(None)
    }
}

#[derive(Default)]
struct Request {
    requested: bool,
    stop: bool,
}

/// The checkpointer thread.
pub struct Checkpointer {
    state: Arc<(Mutex<Request>, Condvar)>,
    handle: Option<JoinHandle<()>>,
    /// Set when a checkpoint failed (it is retried on the next trigger).
    pub failed: Arc<AtomicBool>,
}

impl Checkpointer {
    /// Starts the thread and registers it in `shared`.
    pub fn start(shared: &Arc<Shared>) {
        let state = Arc::new((Mutex::new(Request::default()), Condvar::new()));
        let failed = Arc::new(AtomicBool::new(false));
        let weak: Weak<Shared> = Arc::downgrade(shared);
        let st = state.clone();
        let f = failed.clone();
        let handle = std::thread::Builder::new().name("checkpointer".into()).spawn(move || run(weak, st, f)).expect("spawn checkpointer");
        *shared.checkpointer.lock().expect("poisoned") = Some(Checkpointer { state, handle: Some(handle), failed });
    }

    /// Asks for a checkpoint soon.
    pub fn request(&self) {
        let (m, cv) = &*self.state;
        m.lock().expect("poisoned").requested = true;
        cv.notify_all();
    }

    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        let (m, cv) = &*self.state;
        m.lock().expect("poisoned").stop = true;
        cv.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

fn run(shared: Weak<Shared>, state: Arc<(Mutex<Request>, Condvar)>, failed: Arc<AtomicBool>) {
    stats::set_backend_type(BackendType::Checkpointer);
    let mut last = Instant::now();
    loop {
        let requested = {
            let (m, cv) = &*state;
            let g = m.lock().expect("poisoned");
            let (mut g, _) = cv.wait_timeout(g, Duration::from_millis(200)).expect("poisoned");
            if g.stop {
                return;
            }
            std::mem::take(&mut g.requested)
        };
        let Some(sh) = shared.upgrade() else { return };
        let timeout = Duration::from_millis(sh.settings.ms("checkpoint_timeout").max(1000));
        let distance = sh.wal.insert_lsn().saturating_sub(sh.last_redo.load(Ordering::Acquire));
        let kind = if requested {
            Some(CheckpointKind::Requested)
        } else if distance >= sh.settings.bytes("max_wal_size") / 2 {
            Some(CheckpointKind::Wal)
        } else if last.elapsed() >= timeout {
            Some(CheckpointKind::Time)
        } else {
            None
        };
        if let Some(k) = kind {
            match sh.checkpoint(k) {
                Ok(()) => failed.store(false, Ordering::Relaxed),
                Err(e) => {
                    failed.store(true, Ordering::Relaxed);
                    eprintln!("{e}\nCONTEXT:  checkpoint ({})", k.describe());
                }
            }
            last = Instant::now();
        }
    }
}

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
//!  3. fsync every relation segment written since the last checkpoint, each once (the sync
//!     request queue in smgr), and save the commit log
//!  4. insert the CHECKPOINT record {REDO, next xid} and flush it
//!  5. control file := {checkpoint LSN, REDO}; recycle WAL segments before REDO
//! ```
//!
//! The checkpointer thread starts one when `checkpoint_timeout` has passed since the last, or
//! when more than half of `max_wal_size` of WAL was written since the last REDO pointer, or on
//! request; shutdown and the end of recovery run one directly.
//!
//! Invariants:
//! 1. One checkpoint at a time (`checkpoint_lock`).
//! 2. A page changed before REDO is on disk and synced before the control file points at the
//!    new checkpoint; a change after REDO whose page had not been logged in full since REDO
//!    carries a full-page image (the heap's decision against the REDO pointer, remade if it
//!    moved), so recovery from REDO repairs torn pages.

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

impl Shared {
    /// Runs a checkpoint now.
    pub fn checkpoint(&self, kind: CheckpointKind) -> Result<()> {
        let _one = self.checkpoint_lock.lock().expect("poisoned");
        let prev_backend = stats::backend_type();
        stats::set_backend_type(BackendType::Checkpointer);
        let r = self.checkpoint_locked(kind);
        stats::set_backend_type(prev_backend);
        r
    }

    fn checkpoint_locked(&self, kind: CheckpointKind) -> Result<()> {
        let log = self.settings.bool("log_checkpoints");
        let start = Instant::now();
        if log {
            eprintln!("LOG:  checkpoint starting: {}", kind.describe());
        }
        let redo = {
            let _ddl = self.ddl_lock.lock().expect("poisoned");
            self.wal.mark_redo_point()
        };
        let prev_redo = self.last_redo.load(Ordering::Acquire);
        // Write phase.
        let spread = matches!(kind, CheckpointKind::Time);
        let target = Duration::from_secs_f64(
            self.settings.ms("checkpoint_timeout") as f64 / 1e3 * self.settings.real("checkpoint_completion_target"),
        );
        let pins = self.pool.new_pins();
        let dirty = self.pool.dirty_buffer_ids();
        let mut written = 0u64;
        for (i, &id) in dirty.iter().enumerate() {
            written += self.pool.flush_buffer_id(&pins, id)? as u64;
            if spread && target > Duration::ZERO {
                // Stay at or behind schedule: progress i/n by elapsed/target.
                let due = target.mul_f64((i + 1) as f64 / dirty.len() as f64);
                let ahead = due.saturating_sub(start.elapsed());
                if ahead > Duration::from_millis(5) {
                    std::thread::sleep(ahead.min(Duration::from_millis(100)));
                }
            }
        }
        let write_s = start.elapsed();
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
        if log {
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
        Ok(())
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

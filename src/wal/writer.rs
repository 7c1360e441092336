//! Writing and flushing: [`Wal::write_upto`], [`Wal::flush`] with group commit, poisoning, and
//! the WAL writer thread.
//!
//! ```text
//!  flush(upto):
//!    flushed ≥ upto?  ──yes──► return                       (fast path, no lock)
//!    finished = wait_insertions_to_finish(upto)             (no lock held: invariant 6)
//!    take WALWrite ─────────── others queue here ─────────┐
//!    flushed ≥ upto?  ──yes──► return (group commit hit)  │ served by the leader's sync
//!    write ring[written .. max(finished, finished now)]   │
//!    fdatasync every segment written since the last sync  │
//!    flushed = written                                    │
//!    release WALWrite ──────────────────────────────────► ┘
//! ```
//!
//! The leader writes *everything* finished, not just up to its own target, so that sessions
//! queued behind it on the WALWrite lock usually find their commit already durable (PostgreSQL's
//! XLogFlush does the same). Writes are byte ranges (`pwritev`: one call per segment touched,
//! two iovecs when the range wraps around the ring), never whole pages, so nothing is ever
//! written twice.
//!
//! **Poisoning** (PostgreSQL's fsync lesson, 2018): after a failed fsync the kernel may have
//! dropped the dirty pages and marked them clean, so a retry can "succeed" without the data
//! ever reaching the disk. So the first failed fsync poisons the WAL: that call fails with the
//! fsync error and every later insert, write and flush fails with an error that names it,
//! until the engine restarts and recovery reads what is really on disk. A torn write injected
//! by the fault injector (a simulated crash) poisons the same way. ENOSPC does not poison: the
//! data is still in the ring and `written` did not pass it, so a later attempt simply retries.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{sqlstate, PgError, Result};
use crate::lock::lwlock::LWWriteGuard;

use super::segment::SegmentFile;
use super::{Counters, Lsn, SyncMethod, Wal};

/// What the WALWrite lock protects besides the right to advance `written` and `flushed`.
#[derive(Default)]
pub(crate) struct WriterState {
    /// Open segment files: those written since the last sync (dirty) and the newest one.
    pub(crate) files: Vec<SegmentFile>,
}

/// Where flushers wait for a group commit leader.
#[derive(Default)]
pub(crate) struct FlushWait {
    /// True while a flusher holds WALWrite to write and sync for everyone.
    leader: AtomicBool,
    /// Set by a flusher before it parks; the leader wakes all parked flushers when it is done
    /// and finds this set.
    waiters: AtomicBool,
}

impl FlushWait {
    fn key(&self) -> usize {
        &self.waiters as *const AtomicBool as usize
    }

    /// Parks until `flushed ≥ upto` or no leader is active (spurious returns are fine).
    /// Lost wake-ups are impossible: the waiter stores `waiters` then (in the validation)
    /// loads `leader` and `flushed`; the leader stores `flushed` and `leader` then loads
    /// `waiters`; all SeqCst, so one side sees the other's store.
    fn wait(&self, flushed: &AtomicU64, upto: Lsn) {
        self.waiters.store(true, Ordering::SeqCst);
        // SAFETY: the key is the address of `self.waiters`, alive for the whole park (we
        // borrow `self`); the closures neither panic nor call into the parking lot.
        unsafe {
            parking_lot_core::park(
                self.key(),
                || self.waiters.load(Ordering::SeqCst) && self.leader.load(Ordering::SeqCst) && flushed.load(Ordering::SeqCst) < upto,
                || {},
                |_, _| {},
                parking_lot_core::DEFAULT_PARK_TOKEN,
                None,
            );
        }
    }

    /// Marks this session (holding WALWrite) the leader until the returned guard drops (also
    /// on unwinding); the drop clears the mark, releases WALWrite, then wakes the waiters, in
    /// that order, so that woken sessions that must lead next find the lock free.
    fn lead<'a>(&'a self, st: LWWriteGuard<'a, WriterState>) -> LeaderGuard<'a> {
        self.leader.store(true, Ordering::SeqCst);
        LeaderGuard { wait: self, st: Some(st) }
    }

    fn wake(&self) {
        if self.waiters.load(Ordering::SeqCst) && self.waiters.swap(false, Ordering::SeqCst) {
            // SAFETY: unpark_all only touches the parking lot's queue for this address.
            unsafe {
                parking_lot_core::unpark_all(self.key(), parking_lot_core::DEFAULT_UNPARK_TOKEN);
            }
        }
    }
}

struct LeaderGuard<'a> {
    wait: &'a FlushWait,
    st: Option<LWWriteGuard<'a, WriterState>>,
}

impl LeaderGuard<'_> {
    fn state(&mut self) -> &mut WriterState {
        self.st.as_mut().expect("held until drop")
    }
}

impl Drop for LeaderGuard<'_> {
    fn drop(&mut self) {
        self.wait.leader.store(false, Ordering::SeqCst);
        drop(self.st.take());
        self.wait.wake();
    }
}

/// The sticky failure state (invariant 8).
#[derive(Default)]
pub(crate) struct Poison {
    set: AtomicBool,
    /// The failure was a PANIC (an error inside a critical section), not a failed WAL write.
    panic: AtomicBool,
    /// The first failure: what failed ("fsync", "write") and its error.
    first: Mutex<Option<(&'static str, PgError)>>,
}

impl Poison {
    #[inline]
    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Records a failure; the first one is kept.
    pub(crate) fn set(&self, what: &'static str, err: &PgError) {
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some((what, err.clone()));
        }
        self.set.store(true, Ordering::Release);
    }

    fn error(&self) -> PgError {
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        let (what, err) = first.as_ref().expect("poison is set only with a first failure");
        if self.panic.load(Ordering::Acquire) {
            return PgError::new(err.code, format!("the database stopped after a PANIC: {}", err.message))
                .with_hint("Reopen the database: crash recovery restores a consistent state.")
                .into_panic();
        }
        PgError::new(sqlstate::IO_ERROR, format!("write-ahead log is unusable after an earlier {what} failure: {}", err.message))
            .with_hint("Restart to run crash recovery; WAL that was not reported durable may be lost.")
    }
}

impl Wal {
    /// PANIC: an error inside a critical section (pages or the commit log changed in memory in
    /// a way the WAL may not hold). Poisons the WAL for good (invariant 8): every later insert
    /// and flush fails, and with them every data-page write, since pages are written only
    /// after the WAL is flushed past their LSN. Returns `err` raised to PANIC.
    pub fn panic(&self, err: PgError) -> PgError {
        let err = err.into_panic();
        self.poison.panic.store(true, Ordering::Release);
        self.poison.set("PANIC", &err);
        err
    }

    /// True after [`Wal::panic`].
    pub fn panicked(&self) -> bool {
        self.poison.panic.load(Ordering::Acquire)
    }

    /// Fails if the WAL is poisoned (invariant 8).
    #[inline]
    pub fn check_poison(&self) -> Result<()> {
        if self.poison.is_set() {
            return Err(self.poison.error());
        }
        Ok(())
    }

    /// Writes (without syncing) at least everything inserted below `upto` (clamped to
    /// [`Wal::insert_lsn`]): the background writer's and a full ring's way to get WAL out.
    pub fn write_upto(&self, upto: Lsn) -> Result<()> {
        self.check_poison()?;
        let upto = upto.min(self.insert_lsn());
        if self.written.load(Ordering::Acquire) >= upto {
            return Ok(());
        }
        let finished = self.wait_insertions_to_finish(upto);
        let mut st = self.writer.write();
        self.check_poison()?;
        if self.written.load(Ordering::Relaxed) >= upto {
            return Ok(());
        }
        let target = finished.max(self.finished_now());
        self.write_locked(&mut st, target)
    }

    /// Makes everything below `upto` (clamped to [`Wal::insert_lsn`]) durable, with group
    /// commit: at most one session syncs at a time, and it syncs everything finished so that
    /// those queued behind it return without a sync of their own.
    pub fn flush(&self, upto: Lsn) -> Result<()> {
        self.check_poison()?;
        Counters::add(&self.counters.flush_calls, 1);
        if self.flushed.load(Ordering::Acquire) >= upto {
            Counters::add(&self.counters.flushes_already_done, 1);
            return Ok(());
        }
        let upto = upto.min(self.insert_lsn());
        // Invariant 6: wait for insertions before taking WALWrite.
        let finished = self.wait_insertions_to_finish(upto);
        loop {
            if self.flushed.load(Ordering::SeqCst) >= upto {
                Counters::add(&self.counters.group_commit_hits, 1);
                return Ok(());
            }
            if self.flush_wait.leader.load(Ordering::SeqCst) {
                // A leader is syncing: wait for it to finish without queueing on its lock, so
                // that everyone its sync covers returns at once (PostgreSQL's
                // LWLockAcquireOrWait). Waiting on the lock instead would let the leader, back
                // with its next commit, barge in ahead of the woken sessions again and again.
                self.flush_wait.wait(&self.flushed, upto);
                self.check_poison()?;
                continue;
            }
            let st = self.writer.write();
            self.check_poison()?;
            if self.flushed.load(Ordering::Relaxed) >= upto {
                Counters::add(&self.counters.group_commit_hits, 1);
                return Ok(());
            }
            let mut leading = self.flush_wait.lead(st);
            return self.flush_locked(leading.state(), finished, upto);
        }
    }

    /// The group commit leader's work (WALWrite held): write everything finished, sync,
    /// advance `flushed`.
    fn flush_locked(&self, st: &mut WriterState, finished: Lsn, upto: Lsn) -> Result<()> {
        let target = finished.max(self.finished_now());
        self.write_locked(st, target)?;
        let written = self.written.load(Ordering::Relaxed);
        self.sync_locked(st)?;
        debug_assert!(written >= upto && written >= self.flushed.load(Ordering::Relaxed));
        self.flushed.store(written, Ordering::SeqCst);
        Ok(())
    }

    /// Writes ring bytes `written .. target` to the segment files. Caller holds WALWrite and
    /// has established that every insertion below `target` finished.
    fn write_locked(&self, st: &mut WriterState, target: Lsn) -> Result<()> {
        let mut pos = self.written.load(Ordering::Relaxed);
        debug_assert!(target <= self.insert_lsn());
        debug_assert!(target.saturating_sub(pos) <= self.ring.len() as u64, "unwritten WAL exceeds the ring");
        while pos < target {
            let segno = pos / self.seg_size;
            let seg_start = segno * self.seg_size;
            let end = target.min(seg_start + self.seg_size);
            let file = self.segment_for_write(st, segno)?;
            // SAFETY (invariants 4 and 5): every insertion below `target` finished copying, so
            // nobody writes positions pos..end now; no inserter reuses their ring bytes before
            // `written` passes them, and only we (holding WALWrite) advance `written`.
            let (a, b) = unsafe { self.ring.slices(pos, end) };
            self.write_segment(file, pos - seg_start, a, b)?;
            pos = end;
            self.written.store(pos, Ordering::Release);
        }
        Ok(())
    }

    /// The open file for segment `segno`, opening (or creating) it if needed; closes files
    /// that are neither dirty nor the newest.
    fn segment_for_write<'s>(&self, st: &'s mut WriterState, segno: u64) -> Result<&'s mut SegmentFile> {
        if let Some(i) = st.files.iter().position(|f| f.segno == segno) {
            return Ok(&mut st.files[i]);
        }
        let f = self.open_segment(segno)?;
        st.files.retain(|f| f.dirty);
        st.files.push(f);
        Ok(st.files.last_mut().expect("just pushed"))
    }

    /// One `pwritev` (repeated on short writes) of `a` then `b` at `offset` in `file`.
    fn write_segment(&self, file: &mut SegmentFile, offset: u64, a: &[u8], b: &[u8]) -> Result<()> {
        let total = (a.len() + b.len()) as u64;
        if self.faults.as_ref().is_some_and(|f| f.take_torn_write()) {
            // Simulated crash in the middle of this write: the first half reaches the file.
            let half = (a.len() + b.len()) / 2;
            let (a1, b1) = if half <= a.len() { (&a[..half], &b[..0]) } else { (a, &b[..half - a.len()]) };
            let _ = super::segment::pwritev_all(&*file.file, offset, a1, b1);
            let e = PgError::new(
                sqlstate::IO_ERROR,
                format!("could not write to file \"{}\": simulated crash after a torn write (fault injection)", file.rel_path.display()),
            );
            self.poison.set("write", &e);
            return Err(e);
        }
        let t = Instant::now();
        super::segment::pwritev_all(&*file.file, offset, a, b).map_err(|e| PgError::io("write to", &file.rel_path, e))?;
        Counters::add(&self.counters.write_ns, t.elapsed().as_nanos() as u64);
        Counters::add(&self.counters.writes, 1);
        Counters::add(&self.counters.write_bytes, total);
        if self.sync_method != SyncMethod::OpenDatasync {
            file.dirty = true;
        }
        Ok(())
    }

    /// Syncs every dirty segment file; a failure poisons the WAL.
    fn sync_locked(&self, st: &mut WriterState) -> Result<()> {
        for f in st.files.iter_mut().filter(|f| f.dirty) {
            let t = Instant::now();
            let injected = self.faults.as_ref().is_some_and(|fi| fi.take_fsync_failure());
            let res = if injected {
                Err(std::io::Error::from_raw_os_error(libc::EIO))
            } else {
                match self.sync_method {
                    SyncMethod::Fsync => f.file.sync_all(),
                    _ => f.file.sync_data(),
                }
            };
            Counters::add(&self.counters.fsyncs, 1);
            Counters::add(&self.counters.fsync_ns, t.elapsed().as_nanos() as u64);
            if let Err(err) = res {
                let mut e = PgError::io("fsync", &f.rel_path, err);
                e.code = sqlstate::IO_ERROR;
                self.poison.set("fsync", &e);
                return Err(e);
            }
            f.dirty = false;
        }
        let n = st.files.len();
        if n > 1 {
            st.files.drain(..n - 1);
        }
        Ok(())
    }

    /// Starts the WAL writer: every `delay` (PostgreSQL's `wal_writer_delay`, default 200 ms) it
    /// writes and flushes whatever insertions have finished, so that commits made with
    /// `synchronous_commit = off` become durable within a few delays. Stop it with
    /// [`WalWriterHandle::stop`] (or drop).
    ///
    /// Write-behind (`write_behind` bytes, 0 for none): an insertion that crosses a multiple of
    /// `write_behind` wakes the writer at once, and a round woken that way writes (without
    /// syncing, unless `flush_after` bytes or more are unsynced) everything finished. So a
    /// loading session's WAL is copied to the kernel on the writer's core, and the session
    /// writes only if it fills the whole ring before the writer gets there (counted as
    /// `buffer_full_waits`). WAL-before-data is unchanged: a data page's write still flushes
    /// the WAL up to its LSN first ([`Wal::flush`]).
    ///
    /// A second thread, `wal prealloc`, creates the segments ahead of the insert position
    /// ([`Wal::prepare_ahead`]) when an insertion crosses into a new segment, so that WALWrite
    /// is not held through a segment's zero-fill and fsync.
    pub fn start_writer(self: &Arc<Self>, delay: Duration, write_behind: u64, flush_after: u64) -> WalWriterHandle {
        let shared = Arc::clone(&self.writer_ctl);
        {
            let mut g = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            g.stop = false;
            g.kick = false;
            let mut p = shared.prealloc.lock().unwrap_or_else(|e| e.into_inner());
            p.stop = false;
            p.kick = false;
        }
        let wal = Arc::clone(self);
        let sh = Arc::clone(&shared);
        self.writer_running.store(true, Ordering::Release);
        self.write_behind.store(write_behind, Ordering::Release);
        let thread = std::thread::Builder::new()
            .name("wal writer".into())
            .spawn(move || {
                let mut last_flush = Instant::now();
                loop {
                    let woken;
                    {
                        let mut g = sh.state.lock().unwrap_or_else(|e| e.into_inner());
                        if !g.stop && !g.kick {
                            g = sh.cv.wait_timeout(g, delay).unwrap_or_else(|e| e.into_inner()).0;
                        }
                        if g.stop {
                            break;
                        }
                        woken = g.kick;
                        g.kick = false;
                    }
                    let target = wal.finished_now();
                    let unsynced = target.saturating_sub(wal.flushed_lsn());
                    let r = if woken && unsynced < flush_after.max(1) && last_flush.elapsed() < delay {
                        Counters::add(&wal.counters.writer_write_behind, 1);
                        wal.write_upto(target)
                    } else if unsynced > 0 {
                        last_flush = Instant::now();
                        wal.flush(target)
                    } else {
                        Ok(())
                    };
                    if let Err(e) = r {
                        *sh.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    }
                    sh.rounds.fetch_add(1, Ordering::Relaxed);
                }
                wal.write_behind.store(0, Ordering::Release);
                wal.writer_running.store(false, Ordering::Release);
            })
            .expect("spawn the WAL writer thread");
        let wal = Arc::clone(self);
        let sh = Arc::clone(&shared);
        let prealloc = std::thread::Builder::new()
            .name("wal prealloc".into())
            .spawn(move || {
                // After a failure (ENOSPC), the next try waits this long, so that a full disk is
                // not filled and freed again by every kick.
                const BACKOFF: Duration = Duration::from_secs(1);
                let mut failed_at: Option<Instant> = None;
                loop {
                    {
                        let mut g = sh.prealloc.lock().unwrap_or_else(|e| e.into_inner());
                        // Only kicks (an insertion entering a new segment) start work: an idle
                        // database makes nothing ahead.
                        while !g.stop && !g.kick {
                            g = sh.prealloc_cv.wait(g).unwrap_or_else(|e| e.into_inner());
                        }
                        if g.stop {
                            break;
                        }
                        g.kick = false;
                    }
                    if wal.poison.is_set() || !wal.wants_segments() || failed_at.is_some_and(|t| t.elapsed() < BACKOFF) {
                        continue;
                    }
                    // An error is not reported here: the writer makes a missing segment itself
                    // when it needs it and reports the error then (ENOSPC there fails that
                    // write, not the WAL).
                    failed_at = wal.prepare_ahead().is_err().then(Instant::now);
                }
            })
            .expect("spawn the WAL prealloc thread");
        WalWriterHandle { shared, thread: Some(thread), prealloc: Some(prealloc) }
    }

    /// Wakes the `wal prealloc` thread to create the segments ahead of the insert position
    /// ([`Wal::prepare_ahead`]); does nothing if it is not running.
    pub(crate) fn kick_prealloc(&self) {
        let mut g = self.writer_ctl.prealloc.lock().unwrap_or_else(|e| e.into_inner());
        if !g.kick {
            g.kick = true;
            self.writer_ctl.prealloc_cv.notify_one();
        }
    }

    /// Wakes the WAL writer for a round now (does nothing if it is not running).
    pub(crate) fn kick_writer(&self) {
        let mut g = self.writer_ctl.state.lock().unwrap_or_else(|e| e.into_inner());
        if !g.kick {
            g.kick = true;
            self.writer_ctl.cv.notify_one();
        }
    }
}

#[derive(Default)]
struct WriterControl {
    stop: bool,
    kick: bool,
}

/// The WAL writer's wake-up and results, shared by the [`Wal`] and the thread.
#[derive(Default)]
pub(crate) struct WriterShared {
    state: Mutex<WriterControl>,
    cv: Condvar,
    rounds: AtomicU64,
    last_error: Mutex<Option<PgError>>,
    /// How the `wal prealloc` thread is woken and stopped.
    prealloc: Mutex<WriterControl>,
    prealloc_cv: Condvar,
}

/// The running WAL writer thread. Dropping it stops it.
pub struct WalWriterHandle {
    shared: Arc<WriterShared>,
    thread: Option<JoinHandle<()>>,
    prealloc: Option<JoinHandle<()>>,
}

impl WalWriterHandle {
    /// Asks for a round now instead of at the end of the current delay.
    pub fn wake(&self) {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).kick = true;
        self.shared.cv.notify_one();
    }

    /// Rounds done so far.
    pub fn rounds(&self) -> u64 {
        self.shared.rounds.load(Ordering::Relaxed)
    }

    /// The last error a round met, if any (e.g. the poisoning fsync failure).
    pub fn last_error(&self) -> Option<PgError> {
        self.shared.last_error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Stops the thread and waits for it; returns the last error it met.
    pub fn stop(mut self) -> Option<PgError> {
        self.stop_and_join();
        self.last_error()
    }

    fn stop_and_join(&mut self) {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        self.shared.cv.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.shared.prealloc.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        self.shared.prealloc_cv.notify_one();
        if let Some(t) = self.prealloc.take() {
            let _ = t.join();
        }
    }
}

impl Drop for WalWriterHandle {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

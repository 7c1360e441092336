//! Asynchronous write-back of bulk-loaded pages: a loading session hands each page it has
//! filled to a queue and goes on; the write-back worker thread writes the queued pages (WAL
//! first, combined with their neighbours, as every write does), on another core. The session
//! waits only when its BULKWRITE ring comes round to a buffer that is still dirty, and then for
//! the worker, not for a write of its own.
//!
//! Without a worker thread (the crash torture runs the engine without background threads) the
//! queue still fills, and whoever needs a queued page clean drains the queue itself
//! ([`WriteBack::drain`]), as the torture does at chosen points: the same write path, run by
//! another party at another time.
//!
//! Invariants:
//! 1. A queued entry is a hint: the worker writes the buffer only if, once pinned, it still
//!    has the queued tag and is dirty; otherwise it skips it. Writing goes through
//!    [`BufferPool::flush_buffer`] (shared content lock, IO_IN_PROGRESS, WAL flushed up to the
//!    page LSN first, checksum), so nothing about durability differs from a session's write.
//! 2. Draining never evicts, remaps or waits for a content lock: it pins (without raising the
//!    usage count, so the session's ring still reuses the buffer) and only tries the shared
//!    content lock, skipping the page if it is taken. A session waiting for the worker may hold
//!    its relation's extension lock, and a content lock's holder may be waiting for that
//!    extension lock: waiting for the content lock here could close that cycle.
//! 3. `completed` only grows; once it passes an entry's sequence number, that entry has been
//!    taken from the queue (and written or skipped, unless a second drainer still has it). A
//!    session that waits for a buffer waits until everything queued before it started waiting
//!    has been taken, then writes the buffer itself if it is still dirty. So a missed or
//!    skipped entry costs time, never a lost write.

use super::desc::BufferTag;
use super::pool::{BufferId, BufferPool};
use crate::stats::{self, BackendType, IoContext};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Entries handed to the worker at once: a write-combined run's worth.
const WAKE_BATCH: usize = 16;
/// Without a worker thread, the queue is drained by the session that queues past this.
const UNSERVED_LIMIT: usize = 1024;

#[derive(Default)]
struct State {
    queue: VecDeque<(BufferId, BufferTag)>,
    /// Sequence number of the next entry queued.
    next: u64,
    /// Every entry below this is handled (invariant 3).
    completed: u64,
    stop: bool,
}

/// The queue and its counters (pg_stat_io shows the writes under the worker's backend type).
#[derive(Default)]
pub struct WriteBack {
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    /// A worker thread serves the queue.
    running: AtomicBool,
    /// The setting `heapstore.async_write_back`.
    enabled: AtomicBool,
    /// Pages written by whoever drained the queue (worker or helper).
    pub pages_written: AtomicU64,
    /// Times a session found a ring buffer still queued and waited for it.
    pub session_waits: AtomicU64,
    /// Ring buffers a session had to write itself after all (skipped or re-dirtied).
    pub session_writes: AtomicU64,
}

impl WriteBack {
    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Release);
    }

    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// Queues a filled page for writing; false if write-back is off (the caller's ring then
    /// writes it when it comes round, as before).
    pub fn queue(&self, pool: &BufferPool, id: BufferId, tag: BufferTag) -> bool {
        if !self.enabled() {
            return false;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.queue.push_back((id, tag));
        st.next += 1;
        let len = st.queue.len();
        if self.running.load(Ordering::Relaxed) {
            if len >= WAKE_BATCH {
                self.work.notify_one();
            }
        } else if len > UNSERVED_LIMIT {
            // No worker: keep the queue bounded by draining half of it here.
            drop(st);
            self.drain(pool, &pool.new_pins(), UNSERVED_LIMIT / 2);
        }
        true
    }

    /// Forgets every queued entry (a simulated crash: the pages stay dirty, unwritten).
    pub fn discard(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.queue.clear();
        st.completed = st.next;
        self.done.notify_all();
    }

    /// Entries queued and not yet handled.
    pub fn pending(&self) -> usize {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).queue.len()
    }

    /// Waits until buffer `id` is clean or everything queued so far is handled (invariant 3).
    /// Without a worker thread, drains the queue itself. Returns whether it had to wait.
    pub(crate) fn wait_clean(&self, pool: &BufferPool, id: BufferId) -> bool {
        let dirty = || pool.desc(id).state.load(Ordering::Acquire) & super::desc::DIRTY != 0;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let target = st.next;
        if st.completed >= target || !dirty() {
            return false;
        }
        self.session_waits.fetch_add(1, Ordering::Relaxed);
        if !self.running.load(Ordering::Acquire) {
            drop(st);
            self.drain(pool, &pool.new_pins(), usize::MAX);
            return true;
        }
        self.work.notify_one();
        while st.completed < target && dirty() && self.running.load(Ordering::Acquire) {
            st = self.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        true
    }

    /// Handles up to `max` queued entries (in queue order, written sorted by block so that
    /// neighbours combine); returns how many pages were written.
    pub fn drain(&self, pool: &BufferPool, pins: &super::Pins, max: usize) -> u64 {
        let (mut batch, end) = {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let n = st.queue.len().min(max);
            let batch: Vec<(BufferId, BufferTag)> = st.queue.drain(..n).collect();
            let end = st.next - st.queue.len() as u64;
            (batch, end)
        };
        if batch.is_empty() {
            return 0;
        }
        batch.sort_unstable_by_key(|&(_, t)| (t.rel.0, t.fork as u8, t.block));
        let mut written = 0u64;
        for (id, tag) in batch {
            let Some(buf) = pool.pin_if_tag(pins, id, tag) else { continue };
            if pool.desc(id).state.load(Ordering::Acquire) & super::desc::DIRTY == 0 {
                continue;
            }
            // A failed write leaves the buffer dirty: the session that needs it writes it
            // itself and reports the error there.
            if let Ok(n) = pool.try_flush_buffer(&buf, IoContext::BulkWrite) {
                written += n as u64;
            }
        }
        self.pages_written.fetch_add(written, Ordering::Relaxed);
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.completed = st.completed.max(end);
        self.done.notify_all();
        written
    }
}

/// The write-back worker thread.
pub struct WriteBackWorker {
    wb: Arc<WriteBack>,
    handle: Option<JoinHandle<()>>,
}

impl WriteBackWorker {
    pub fn start(pool: Arc<BufferPool>) -> WriteBackWorker {
        let wb = pool.write_back.clone();
        wb.state.lock().unwrap_or_else(|e| e.into_inner()).stop = false;
        wb.running.store(true, Ordering::Release);
        let wb2 = wb.clone();
        let handle = std::thread::Builder::new()
            .name("write-back".into())
            .spawn(move || {
                stats::set_backend_type(BackendType::WriteBack);
                let pins = pool.new_pins();
                loop {
                    {
                        let mut st = wb2.state.lock().unwrap_or_else(|e| e.into_inner());
                        while st.queue.is_empty() && !st.stop {
                            st = wb2.work.wait_timeout(st, std::time::Duration::from_millis(50)).unwrap_or_else(|e| e.into_inner()).0;
                        }
                        if st.stop && st.queue.is_empty() {
                            break;
                        }
                    }
                    wb2.drain(&pool, &pins, 256);
                }
                wb2.running.store(false, Ordering::Release);
                wb2.done.notify_all();
            })
            .expect("spawn the write-back worker");
        WriteBackWorker { wb, handle: Some(handle) }
    }

    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        self.wb.state.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        self.wb.work.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for WriteBackWorker {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

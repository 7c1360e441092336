//! Asynchronous buffer reads: `io_method` = `sync` | `worker` | `io_uring` (PostgreSQL 18's
//! names and meanings).
//!
//! A read stream maps a run of consecutive blocks to buffers it holds IO_IN_PROGRESS on, then
//! hands the run to [`BufferPool::submit_read`] as one [`ReadRequest`]. Who executes it:
//! - `sync`: the submitting session, at once (`preadv`);
//! - `worker`: one of `io_workers` I/O threads (`preadv`);
//! - `io_uring`: the kernel, through one shared ring; a completion thread reaps the results.
//!
//! Whoever executes a read also *completes* it: verifies each page's checksum and ends the
//! buffer's I/O (VALID, or IO_ERROR so that the next reader retries the read itself and reports
//! the error with its relation and block). Completion never depends on the submitting session
//! doing anything more, so a session waiting for a buffer another session is reading cannot
//! deadlock against it (PostgreSQL's rule that any backend can complete an I/O, realised here by
//! never leaving completion to the submitter).
//!
//! Invariants:
//! 1. From submission to completion the request owns IO_IN_PROGRESS on each of its buffers; no
//!    one else reads or writes their memory (`desc` invariant on IO_IN_PROGRESS), so the
//!    executor may write into them without a content lock.
//! 2. A request covers consecutive blocks of one fork within one segment file.
//! 3. The io_uring submission queue is touched only under `Uring::sq`; its completion queue
//!    only by the completion thread. Each in-flight request's iovecs live in the `inflight`
//!    slab until its completion is reaped, so the kernel never writes through a dangling pointer.
//! 4. The number of io_uring requests in flight never exceeds the ring's size; beyond it a
//!    request is executed synchronously (back-pressure without blocking).

use super::pool::{BufferId, BufferPool};
use crate::error::{sqlstate, PgError, Result};
use crate::stats::{self, BackendType, IoContext, IoOp};
use crate::storage::{BlockNumber, ForkNumber, RelFileNumber};
use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::Instant;

/// How reads are executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoMethod {
    Sync,
    Worker,
    IoUring,
}

impl IoMethod {
    pub fn parse(s: &str) -> Option<IoMethod> {
        match s {
            "sync" => Some(IoMethod::Sync),
            "worker" => Some(IoMethod::Worker),
            "io_uring" => Some(IoMethod::IoUring),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IoMethod::Sync => "sync",
            IoMethod::Worker => "worker",
            IoMethod::IoUring => "io_uring",
        }
    }
}

/// One read of consecutive blocks into buffers whose IO_IN_PROGRESS the request owns.
pub(crate) struct ReadRequest {
    pub rel: RelFileNumber,
    pub fork: ForkNumber,
    pub block: BlockNumber,
    pub ids: Vec<BufferId>,
    pub ctx: IoContext,
    pub backend: BackendType,
}

/// The executor of reads, started once the pool is shared.
pub(crate) struct Aio {
    pub method: IoMethod,
    workers: Option<Mutex<mpsc::Sender<ReadRequest>>>,
    uring: Option<Arc<Uring>>,
}

impl Drop for Aio {
    fn drop(&mut self) {
        if let Some(u) = &self.uring {
            u.stop();
        }
    }
}

const URING_ENTRIES: u32 = 256;
const EXIT_TOKEN: u64 = u64::MAX;

struct InFlight {
    req: ReadRequest,
    iov: Vec<libc::iovec>,
    /// Keeps the segment file open until the kernel is done with it.
    _file: Arc<dyn crate::storage::VfsFile>,
    expect: usize,
    started: Instant,
}

// SAFETY: the iovecs point into the pool's shared memory, which outlives the request (the
// completion thread holds only a Weak and completes nothing once the pool is gone); the
// request is moved between threads only through the slab's mutex.
unsafe impl Send for InFlight {}

struct Uring {
    ring: io_uring::IoUring,
    sq: Mutex<()>,
    inflight: Mutex<Slab>,
}

#[derive(Default)]
struct Slab {
    slots: Vec<Option<InFlight>>,
    free: Vec<usize>,
    len: usize,
}

impl Uring {
    fn stop(&self) {
        let nop = io_uring::opcode::Nop::new().build().user_data(EXIT_TOKEN);
        let _g = self.sq.lock().expect("poisoned");
        // SAFETY: the submission queue is used only under `sq` (invariant 3).
        unsafe {
            let mut sq = self.ring.submission_shared();
            let _ = sq.push(&nop);
        }
        let _ = self.ring.submit();
    }
}

impl BufferPool {
    /// Starts the read executor for `method` (`io_workers` threads for `worker`). Until this
    /// is called (recovery, tests that build a bare pool) reads are synchronous.
    pub fn start_aio(self: &Arc<Self>, method: IoMethod, io_workers: usize) -> Result<()> {
        let mut aio = Aio { method, workers: None, uring: None };
        match method {
            IoMethod::Sync => {}
            IoMethod::Worker => {
                let (tx, rx) = mpsc::channel::<ReadRequest>();
                let rx = Arc::new(Mutex::new(rx));
                for i in 0..io_workers.max(1) {
                    let rx = rx.clone();
                    let pool = Arc::downgrade(self);
                    std::thread::Builder::new()
                        .name(format!("io worker {i}"))
                        .spawn(move || io_worker(pool, rx))
                        .map_err(|e| PgError::new(sqlstate::INSUFFICIENT_RESOURCES, format!("could not start I/O worker: {e}")))?;
                }
                aio.workers = Some(Mutex::new(tx));
            }
            IoMethod::IoUring => {
                let ring = io_uring::IoUring::new(URING_ENTRIES).map_err(|e| {
                    PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("could not set up io_uring: {e}"))
                        .with_hint("Set io_method to worker or sync.")
                })?;
                let u = Arc::new(Uring { ring, sq: Mutex::new(()), inflight: Mutex::new(Slab::default()) });
                let uc = u.clone();
                let pool = Arc::downgrade(self);
                std::thread::Builder::new()
                    .name("io_uring completion".into())
                    .spawn(move || uring_completer(pool, uc))
                    .map_err(|e| PgError::new(sqlstate::INSUFFICIENT_RESOURCES, format!("could not start io_uring completer: {e}")))?;
                aio.uring = Some(u);
            }
        }
        self.aio.set(aio).map_err(|_| PgError::internal("start_aio called twice"))?;
        Ok(())
    }

    /// The io_method reads are executed with.
    pub fn io_method(&self) -> IoMethod {
        self.aio.get().map(|a| a.method).unwrap_or(IoMethod::Sync)
    }

    /// Starts a read (see the module doc for who executes it).
    pub(crate) fn submit_read(&self, req: ReadRequest) {
        debug_assert!(!req.ids.is_empty());
        let Some(aio) = self.aio.get() else { return self.execute_read(req) };
        match aio.method {
            IoMethod::Sync => self.execute_read(req),
            IoMethod::Worker => {
                let tx = aio.workers.as_ref().expect("worker method has workers").lock().expect("poisoned").clone();
                if let Err(mpsc::SendError(req)) = tx.send(req) {
                    self.execute_read(req);
                }
            }
            IoMethod::IoUring => {
                let u = aio.uring.as_ref().expect("io_uring method has a ring");
                if let Some(req) = self.uring_submit(u, req) {
                    self.execute_read(req);
                }
            }
        }
    }

    /// Executes a read synchronously and completes it.
    pub(crate) fn execute_read(&self, req: ReadRequest) {
        let t0 = Instant::now();
        let mut pages: Vec<&mut [u8]> = req
            .ids
            .iter()
            // SAFETY: the request owns IO_IN_PROGRESS on each buffer (invariant 1); distinct ids
            // give disjoint slices.
            .map(|&id| unsafe { std::slice::from_raw_parts_mut(self.page_ptr(id), self.block_size()) })
            .collect();
        let r = self.smgr.readv(req.rel, req.fork, req.block, &mut pages);
        drop(pages);
        self.complete_read_request(&req, r.is_ok(), t0);
    }

    /// Verifies and validates each buffer of a finished read (or marks them failed).
    fn complete_read_request(&self, req: &ReadRequest, ok: bool, started: Instant) {
        let ns = started.elapsed().as_nanos() as u64;
        for (i, &id) in req.ids.iter().enumerate() {
            let good = ok && {
                // SAFETY: as in execute_read: IO_IN_PROGRESS is ours until end_io.
                let page = unsafe { std::slice::from_raw_parts_mut(self.page_ptr(id), self.block_size()) };
                // The relation's name is needed only for an error, which the reader reports.
                match crate::storage::page::verify(page, req.block + i as u32, "") {
                    Ok(()) => true,
                    Err(_) if matches!(req.fork, ForkNumber::Fsm | ForkNumber::Vm) => {
                        page.fill(0);
                        true
                    }
                    Err(_) => false,
                }
            };
            // A failed buffer is left invalid with IO_ERROR: its reader retries the read
            // synchronously and reports the error (with relation and block).
            self.end_io(id, false, good, !good);
        }
        if ok {
            let n = req.ids.len() as u64;
            stats::count_io_for(req.backend, req.ctx, IoOp::Read, n, n * self.block_size() as u64, ns);
        }
    }

    /// Puts a request on the shared ring; gives it back if the ring is full or the file cannot
    /// be opened (the caller then reads synchronously, which reports any error).
    fn uring_submit(&self, u: &Uring, req: ReadRequest) -> Option<ReadRequest> {
        let Ok((file, offset, left)) = self.smgr.segment_for(req.rel, req.fork, req.block) else { return Some(req) };
        assert!(req.ids.len() as u32 <= left, "a read request crosses a segment boundary");
        let bs = self.block_size();
        let iov: Vec<libc::iovec> =
            req.ids.iter().map(|&id| libc::iovec { iov_base: self.page_ptr(id) as *mut libc::c_void, iov_len: bs }).collect();
        // Only real files have a descriptor; a simulated one is read synchronously.
        let Some(fd) = file.raw_fd() else { return Some(req) };
        let expect = bs * req.ids.len();
        let mut slab = u.inflight.lock().expect("poisoned");
        if slab.len >= URING_ENTRIES as usize {
            return Some(req);
        }
        let entry = InFlight { req, iov, _file: file, expect, started: Instant::now() };
        let idx = match slab.free.pop() {
            Some(i) => {
                slab.slots[i] = Some(entry);
                i
            }
            None => {
                slab.slots.push(Some(entry));
                slab.slots.len() - 1
            }
        };
        slab.len += 1;
        let e = slab.slots[idx].as_ref().expect("just inserted");
        let sqe = io_uring::opcode::Readv::new(io_uring::types::Fd(fd), e.iov.as_ptr(), e.iov.len() as u32)
            .offset(offset)
            .build()
            .user_data(idx as u64);
        drop(slab);
        let _g = u.sq.lock().expect("poisoned");
        loop {
            // SAFETY: the submission queue is used only under `sq` (invariant 3); the iovecs
            // stay in the slab until the completion is reaped.
            let pushed = unsafe { u.ring.submission_shared().push(&sqe).is_ok() };
            if pushed {
                break;
            }
            // Queue full of unsubmitted entries: submit them and try again.
            let _ = u.ring.submit();
        }
        if let Err(e) = u.ring.submit() {
            // The entry stays queued; the completion thread's next enter submits it.
            debug_assert!(e.raw_os_error().is_some());
        }
        None
    }
}

fn io_worker(pool: Weak<BufferPool>, rx: Arc<Mutex<mpsc::Receiver<ReadRequest>>>) {
    stats::set_backend_type(BackendType::ClientBackend);
    loop {
        let req = match rx.lock().expect("poisoned").recv() {
            Ok(r) => r,
            Err(_) => return,
        };
        let Some(pool) = pool.upgrade() else { return };
        pool.execute_read(req);
    }
}

fn uring_completer(pool: Weak<BufferPool>, u: Arc<Uring>) {
    let mut done: Vec<(u64, i32)> = Vec::with_capacity(URING_ENTRIES as usize);
    loop {
        match u.ring.submitter().submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) || e.raw_os_error() == Some(libc::EBUSY) => {}
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
        done.clear();
        // SAFETY: only this thread touches the completion queue (invariant 3).
        unsafe {
            for cqe in u.ring.completion_shared() {
                done.push((cqe.user_data(), cqe.result()));
            }
        }
        for &(token, res) in &done {
            if token == EXIT_TOKEN {
                return;
            }
            let entry = {
                let mut slab = u.inflight.lock().expect("poisoned");
                let e = slab.slots[token as usize].take().expect("completion for a request in flight");
                slab.free.push(token as usize);
                slab.len -= 1;
                e
            };
            let Some(pool) = pool.upgrade() else { return };
            let ok = res >= 0 && res as usize == entry.expect;
            drop(entry.iov);
            // A short or failed read leaves the buffers failed: their reader retries the read
            // synchronously, which either succeeds or reports the error properly.
            pool.complete_read_request(&entry.req, ok, entry.started);
        }
    }
}

//! Parallel COPY FROM within one session: `COPY t FROM ... WITH (PARALLEL n)`.
//!
//! The session's own thread, the *leader*, reads the input and cuts it into chunks of whole
//! records of `heapstore.copy_chunk_size`: text and CSV lines ([`CopyReader::next_lines_into`],
//! cut only where a serial reader ends a line, so never inside a quoted CSV field or after an
//! escaping backslash; each with its line number), or binary tuples
//! ([`CopyReader::next_tuple_into`], with the tuple number the chunk starts at). It does not
//! split fields. `n` worker threads take chunks from a bounded queue: a line is split by
//! [`CopyReader::parse_line_at`], a binary chunk read by a [`CopyReader::resuming`] reader, so
//! field splitting, type input, the not-null check, TOAST and the errors with their CONTEXT
//! lines are the serial code's ([`RowLoader`]). Each worker inserts
//! into the heap through its own bulk inserts (its own target page, ring and pages extended
//! ahead, as concurrent sessions do), under the session's transaction id and command id.
//!
//! Index entries and errors are settled in input order, by the *completion*: a worker that has
//! finished a chunk, or stopped at the chunk's first error, hands over the tuples it inserted
//! (with their TIDs) and the error. Chunk by chunk in input order, one thread at a time,
//! whichever worker is free adds those index entries with the session's lock table, then
//! takes the chunk's error. So a unique violation is found at the later of two equal keys, as
//! serially, and the error returned is the first a serial COPY would meet
//! ([`super::exec`] invariant 3). A worker hands over and goes on to its next chunk; it waits
//! only when too many chunks are waiting for the completion.
//!
//! Why threads of one session and not sessions: all of it is one statement of one
//! transaction: one xid, all-or-nothing (an error aborts the transaction; the rows already
//! inserted are dead), one lock on the table, the session's snapshot and savepoints.
//!
//! Invariants:
//! 1. Chunks are numbered from 0 in input order; the completion takes chunk k only after
//!    every chunk before it, each exactly once (`Order::next`), and only one thread runs it
//!    at a time (`Order::busy`), holding the session's lock table.
//! 2. Once chunk k has failed, no later chunk adds index entries and later errors are
//!    ignored; earlier chunks still complete, so the error returned is the first in input
//!    order. Rows that later chunks inserted into the heap die with the transaction.
//! 3. Memory is bounded whatever the input size: at most `2n` chunks queued, `n` in work,
//!    and `2n` handed over but not yet completed (a worker waits for room).
//! 4. Every worker thread has ended, and released its pins, before [`copy_from`] returns.
//! 5. At most `max_parallel_workers` worker threads run at once across sessions; a COPY that
//!    finds none free loads serially, as PostgreSQL runs a parallel plan without workers.

use super::exec::{index_tuples, LoadCtx, RowLoader};
use super::{CopyReader, ResumePoint};
use crate::error::{PgError, Result};
use crate::storage::BlockNumber;
use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// CPU nanoseconds used by COPY worker threads that have ended (for `heapstore bench copy`,
/// whose sessions measure their own CPU time and would miss their workers').
static WORKER_CPU_NS: AtomicU64 = AtomicU64::new(0);

/// CPU seconds used so far by the worker threads of parallel COPYs that have ended.
pub fn worker_cpu_seconds() -> f64 {
    WORKER_CPU_NS.load(Ordering::Relaxed) as f64 / 1e9
}

fn this_thread_cpu_ns() -> u64 {
    // SAFETY: clock_gettime only writes the timespec we own; CLOCK_THREAD_CPUTIME_ID is
    // always available on Linux.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Worker threads reserved under `max_parallel_workers` (given back on drop).
pub(super) struct Workers<'a> {
    active: &'a AtomicUsize,
    n: usize,
}

impl<'a> Workers<'a> {
    /// Reserves up to `wanted` workers; None when none is free (invariant 5).
    pub(super) fn reserve(shared: &'a crate::db::Shared, wanted: usize) -> Option<Workers<'a>> {
        let max = shared.settings.int("max_parallel_workers").max(0) as usize;
        let active = &shared.parallel_workers;
        let mut cur = active.load(Ordering::Relaxed);
        loop {
            let n = wanted.min(max.saturating_sub(cur));
            if n == 0 {
                return None;
            }
            match active.compare_exchange_weak(cur, cur + n, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Some(Workers { active, n }),
                Err(now) => cur = now,
            }
        }
    }
}

impl Drop for Workers<'_> {
    fn drop(&mut self) {
        self.active.fetch_sub(self.n, Ordering::AcqRel);
    }
}

/// Records cut out of the input, in order.
#[derive(Default)]
struct Chunk {
    seq: u64,
    /// Text and CSV: the lines, without their endings, one after another.
    text: String,
    /// Text and CSV: where each line ends in `text`, and its line number.
    lines: Vec<(usize, u64)>,
    /// Binary: the tuples with their framing, and where they start.
    tuples: Vec<u8>,
    start: Option<ResumePoint>,
    /// The leader's error reading on after the chunk's records (it stopped there).
    error: Option<PgError>,
}

/// What a worker hands the completion for one chunk.
struct Done {
    seq: u64,
    rows: u64,
    /// The tuples inserted into the heap (only when the table has indexes) and their TIDs.
    tuples: Vec<u8>,
    lens: Vec<usize>,
    placed: Vec<(BlockNumber, u16)>,
    error: Option<PgError>,
}

struct Queue {
    chunks: VecDeque<Chunk>,
    closed: bool,
}

struct Order {
    next: u64,
    ready: BTreeMap<u64, Done>,
    busy: bool,
    failed: Option<PgError>,
    rows: u64,
}

struct State<'a> {
    queue: Mutex<Queue>,
    /// Signalled when a chunk is queued, or the queue closed.
    work: Condvar,
    /// Signalled when a chunk leaves the queue.
    room: Condvar,
    order: Mutex<Order>,
    /// Signalled when the completion moves on.
    settled: Condvar,
    /// The lowest chunk number known to have failed (u64::MAX: none): later chunks are
    /// skipped and the leader stops reading.
    failed_at: AtomicU64,
    /// Chunks handed back for their buffers' reuse.
    spare: Mutex<Vec<Chunk>>,
    locks: Mutex<&'a mut crate::lock::SessionLocks>,
    depth: usize,
    chunk_bytes: usize,
}

/// Unblocks everyone if the thread holding it panics (a bug): the COPY fails, every thread
/// waiting for a chunk, for room or for the completion gives up, and the panic goes on to the
/// session when the threads are joined (invariant 4 still holds).
struct OnPanic<'s, 'a>(&'s State<'a>);

impl Drop for OnPanic<'_, '_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let st = self.0;
        st.fail(0);
        if let Ok(mut o) = st.order.lock() {
            o.failed.get_or_insert_with(|| PgError::internal("a parallel COPY thread panicked"));
        }
        if let Ok(mut q) = st.queue.lock() {
            q.closed = true;
        }
        st.settled.notify_all();
        st.room.notify_all();
        st.work.notify_all();
    }
}

impl State<'_> {
    fn fail(&self, seq: u64) {
        self.failed_at.fetch_min(seq, Ordering::AcqRel);
    }

    fn skipped(&self, seq: u64) -> bool {
        seq > self.failed_at.load(Ordering::Acquire)
    }
}

/// Loads the rows of `rdr` with `workers` worker threads; returns how many.
pub(super) fn copy_from(
    ctx: &LoadCtx<'_>,
    mut rdr: CopyReader<&mut dyn Read>,
    names: &[String],
    locks: &mut crate::lock::SessionLocks,
    workers: Workers<'_>,
) -> Result<u64> {
    let n = workers.n;
    let st = State {
        queue: Mutex::new(Queue { chunks: VecDeque::new(), closed: false }),
        work: Condvar::new(),
        room: Condvar::new(),
        order: Mutex::new(Order { next: 0, ready: BTreeMap::new(), busy: false, failed: None, rows: 0 }),
        settled: Condvar::new(),
        failed_at: AtomicU64::new(u64::MAX),
        spare: Mutex::new(Vec::new()),
        locks: Mutex::new(locks),
        depth: 2 * n,
        chunk_bytes: ctx.chunk_bytes,
    };
    let opts = rdr.opts.clone();
    if !ctx.shared.threads {
        let r = copy_inline(&st, ctx, &mut rdr, names, n);
        drop(workers);
        let order = st.order.into_inner().expect("poisoned");
        r?;
        return match order.failed {
            Some(e) => Err(e),
            None => Ok(order.rows),
        };
    }
    ctx.shared.parallel_workers_launched.fetch_add(n as u64, Ordering::Relaxed);
    // The workers parse timestamptz text in the session's time zone (`types::tz` invariant).
    let (zone, txn_start) = (crate::types::tz::session(), crate::types::tz::transaction_start());
    let (ended, canceled) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (st, opts, zone) = (&st, opts.clone(), zone.clone());
                std::thread::Builder::new()
                    .name(format!("copy worker {i}"))
                    // Evaluates the table's DEFAULT and CHECK expressions, as deep as the
                    // session's thread let them be created (`sql::dialect::check_nesting`).
                    .stack_size(crate::server::CONN_STACK_SIZE)
                    .spawn_scoped(scope, move || {
                        let _unblock = OnPanic(st);
                        let _zone = crate::types::tz::scope(zone);
                        crate::types::tz::set_transaction_start(txn_start);
                        let r = worker(st, ctx, opts, names);
                        WORKER_CPU_NS.fetch_add(this_thread_cpu_ns(), Ordering::Relaxed);
                        r
                    })
                    .expect("spawn a COPY worker thread")
            })
            .collect();
        let canceled = {
            let _unblock = OnPanic(&st);
            lead(&st, &mut rdr).err()
        };
        {
            let mut q = st.queue.lock().expect("poisoned");
            q.closed = true;
            st.work.notify_all();
        }
        let ended: Vec<Result<()>> = handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect();
        (ended, canceled)
    });
    drop(workers);
    if let Some(e) = canceled {
        return Err(e);
    }
    let order = st.order.into_inner().expect("poisoned");
    if let Some(e) = order.failed {
        return Err(e);
    }
    for r in ended {
        r?;
    }
    Ok(order.rows)
}

/// Without threads (the crash torture, whose seeds must replay exactly): the same chunks,
/// loaded in turn by `n` workers' loaders on this thread, settled by the same completion.
fn copy_inline(st: &State<'_>, ctx: &LoadCtx<'_>, rdr: &mut CopyReader<&mut dyn Read>, names: &[String], n: usize) -> Result<()> {
    // Each worker with its own pins, as a thread would have.
    let pins: Vec<crate::buffer::Pins> = (0..n).map(|_| ctx.shared.pool.new_pins()).collect();
    let mut workers: Vec<Worker<'_>> = pins.iter().map(|p| Worker::new(ctx, p, rdr.opts.clone(), names)).collect();
    let mut seq = 0u64;
    let read = loop {
        match next_chunk(st, rdr, seq) {
            Err(e) => break Err(e),
            Ok(None) => break Ok(()),
            Ok(Some(mut c)) => {
                let k = (seq % n as u64) as usize;
                let done = workers[k].load(ctx, &mut c);
                if done.error.is_some() {
                    st.fail(seq);
                }
                complete(st, ctx, &pins[k], done);
                st.spare.lock().expect("poisoned").push(c);
                seq += 1;
            }
        }
    };
    for w in workers {
        w.ld.finish()?;
    }
    read
}

/// The leader: cuts the input into chunks and queues them, until the data ends, a read
/// fails (that error travels with the last chunk) or a chunk has failed. Err only for a
/// cancel request.
fn lead(st: &State<'_>, rdr: &mut CopyReader<&mut dyn Read>) -> Result<()> {
    let mut seq = 0u64;
    while let Some(c) = next_chunk(st, rdr, seq)? {
        let last = c.error.is_some();
        let mut q = st.queue.lock().expect("poisoned");
        while q.chunks.len() >= st.depth && st.failed_at.load(Ordering::Acquire) == u64::MAX {
            q = st.room.wait(q).expect("poisoned");
        }
        q.chunks.push_back(c);
        st.work.notify_one();
        seq += 1;
        if last {
            break;
        }
    }
    Ok(())
}

/// The next chunk of the input, numbered `seq`: whole records up to `chunk_bytes`, and
/// the error that stopped the reading if one did. None at the end of data, or once a chunk
/// has failed. Err only for a cancel request.
fn next_chunk(st: &State<'_>, rdr: &mut CopyReader<&mut dyn Read>, seq: u64) -> Result<Option<Chunk>> {
    let chunk_bytes = st.chunk_bytes;
    crate::interrupt::check_for_interrupts().inspect_err(|_| st.fail(0))?;
    if st.failed_at.load(Ordering::Acquire) != u64::MAX {
        return Ok(None);
    }
    let mut c = st.spare.lock().expect("poisoned").pop().unwrap_or_default();
    c.seq = seq;
    c.text.clear();
    c.lines.clear();
    c.tuples.clear();
    c.error = None;
    c.start = Some(rdr.resume_point());
    let mut taken = 0usize;
    if rdr.opts.format == super::CopyFormat::Binary {
        while taken < chunk_bytes {
            match rdr.next_tuple_into(&mut c.tuples) {
                Ok(Some(size)) => taken += size,
                Ok(None) => break,
                Err(e) => {
                    c.error = Some(e);
                    break;
                }
            }
        }
    } else {
        match rdr.next_lines_into(&mut c.text, &mut c.lines, chunk_bytes) {
            Ok((t, _)) => taken = t,
            Err(e) => c.error = Some(e),
        }
    }
    Ok((taken > 0 || c.error.is_some()).then_some(c))
}

/// One worker's loading state: its bulk inserts and its line parser.
struct Worker<'a> {
    ld: RowLoader<'a>,
    /// Splits the text and CSV lines into fields (its input is never read).
    parser: CopyReader<&'static [u8]>,
    opts: super::CopyOptions,
    names: &'a [String],
    indexed: bool,
}

impl<'a> Worker<'a> {
    fn new(ctx: &'a LoadCtx<'a>, pins: &'a crate::buffer::Pins, opts: super::CopyOptions, names: &'a [String]) -> Worker<'a> {
        Worker {
            ld: RowLoader::new(ctx, pins),
            parser: CopyReader::new(&[][..], opts.clone(), &ctx.table.name, names),
            opts,
            names,
            indexed: !ctx.table.indexes.is_empty(),
        }
    }

    /// Loads `chunk`'s rows; what the completion needs of it.
    fn load(&mut self, ctx: &LoadCtx<'_>, chunk: &mut Chunk) -> Done {
        let mut done = Done { seq: chunk.seq, rows: 0, tuples: Vec::new(), lens: Vec::new(), placed: Vec::new(), error: None };
        let (ld, indexed) = (&mut self.ld, self.indexed);
        let loaded = if self.opts.format == super::CopyFormat::Binary {
            let start = chunk.start.expect("set by the leader");
            let rdr = CopyReader::resuming(&chunk.tuples[..], self.opts.clone(), &ctx.table.name, self.names, start);
            load_tuples(rdr, ld, &mut done, indexed)
        } else {
            let Chunk { text, lines, .. } = chunk;
            self.parser.with_lines(text, |p| load_lines(p, lines, ld, &mut done, indexed))
        };
        match loaded {
            // The rows of the unfinished batch were never inserted (as serially).
            Err(e) => {
                self.ld.clear();
                done.error = Some(e);
            }
            Ok(()) => done.error = chunk.error.take(),
        }
        done
    }
}

/// A worker thread: loads chunks until the queue is closed and empty.
fn worker(st: &State<'_>, ctx: &LoadCtx<'_>, opts: super::CopyOptions, names: &[String]) -> Result<()> {
    let pins = ctx.shared.pool.new_pins();
    let mut w = Worker::new(ctx, &pins, opts, names);
    loop {
        let chunk = {
            let mut q = st.queue.lock().expect("poisoned");
            loop {
                if let Some(c) = q.chunks.pop_front() {
                    st.room.notify_one();
                    break Some(c);
                }
                if q.closed {
                    break None;
                }
                q = st.work.wait(q).expect("poisoned");
            }
        };
        let Some(mut chunk) = chunk else { break };
        if !st.skipped(chunk.seq) {
            let done = w.load(ctx, &mut chunk);
            if done.error.is_some() {
                st.fail(done.seq);
            }
            complete(st, ctx, &pins, done);
        }
        st.spare.lock().expect("poisoned").push(chunk);
    }
    w.ld.finish()
}

/// Loads one chunk's lines, in order, batch by batch.
fn load_lines(
    parser: &mut CopyReader<&[u8]>,
    lines: &[(usize, u64)],
    ld: &mut RowLoader<'_>,
    done: &mut Done,
    indexed: bool,
) -> Result<()> {
    let mut from = 0;
    for &(end, lineno) in lines {
        let row = parser.parse_line_at(from, end, lineno)?;
        from = end;
        let full = ld.add(row)?;
        done.rows += 1;
        if full {
            flush(ld, done, indexed)?;
        }
    }
    flush(ld, done, indexed)
}

/// Loads one chunk's binary tuples, in order, batch by batch.
fn load_tuples(mut rdr: CopyReader<&[u8]>, ld: &mut RowLoader<'_>, done: &mut Done, indexed: bool) -> Result<()> {
    while let Some(row) = rdr.next_row()? {
        let full = ld.add(row)?;
        done.rows += 1;
        if full {
            flush(ld, done, indexed)?;
        }
    }
    flush(ld, done, indexed)
}

/// Inserts the loader's batch into the heap and keeps what the indexes will need.
fn flush(ld: &mut RowLoader<'_>, done: &mut Done, indexed: bool) -> Result<()> {
    ld.flush()?;
    if indexed {
        done.tuples.extend_from_slice(&ld.batch);
        done.lens.extend_from_slice(&ld.lens);
        done.placed.extend_from_slice(ld.bulk.placed.as_deref().unwrap_or_default());
    }
    ld.clear();
    Ok(())
}

/// Hands `done` to the completion and runs the completion while it is this thread's turn
/// (invariants 1 to 3).
fn complete(st: &State<'_>, ctx: &LoadCtx<'_>, pins: &crate::buffer::Pins, done: Done) {
    let mut o = st.order.lock().expect("poisoned");
    // Room for one more, unless this is the chunk the completion waits for.
    while o.ready.len() >= st.depth && done.seq != o.next && o.failed.is_none() {
        o = st.settled.wait(o).expect("poisoned");
    }
    if o.failed.is_some() {
        return;
    }
    o.ready.insert(done.seq, done);
    while !o.busy && o.failed.is_none() {
        let next = o.next;
        let Some(d) = o.ready.remove(&next) else { break };
        o.busy = true;
        drop(o);
        let seq = d.seq;
        let result = settle(st, ctx, pins, d);
        o = st.order.lock().expect("poisoned");
        o.busy = false;
        o.next += 1;
        match result {
            Ok(rows) => o.rows += rows,
            Err(e) => {
                st.fail(seq);
                o.failed = Some(e);
                o.ready.clear();
                st.room.notify_all();
            }
        }
        st.settled.notify_all();
    }
}

/// One chunk's turn at the completion: its index entries in order, then its error.
fn settle(st: &State<'_>, ctx: &LoadCtx<'_>, pins: &crate::buffer::Pins, d: Done) -> Result<u64> {
    if !d.lens.is_empty() {
        let mut locks = st.locks.lock().expect("poisoned");
        let mut m = crate::exec::rows::Maintainer {
            shared: ctx.shared,
            pins,
            locks: &mut locks,
            me: ctx.xid,
            wal: ctx.index_wal,
            key: Vec::new(),
            preds: None,
        };
        index_tuples(&mut m, ctx.table, &d.tuples, &d.lens, &d.placed)?;
    }
    match d.error {
        Some(e) => Err(e),
        None => Ok(d.rows),
    }
}

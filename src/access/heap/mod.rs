//! Heap tables: pages of tuples in insertion order, with MVCC headers.
//!
//! Entry points: [`BulkInsert`] (multi-insert of formed tuples, filling whole pages, as COPY
//! uses it), [`scan`] (visible tuples of a relation, page at a time; [`scan_pruning`] prunes
//! as it reads), [`toast`] (out-of-line
//! values), [`dml`] (single-row insert / delete / update, fetch by TID, READ COMMITTED waits),
//! [`prune`] (HOT chains, pruning a page of its dead versions), [`vacuum`] (every page pruned,
//! LP_DEAD line pointers freed after their index entries, free space to the FSM, pages marked
//! all-visible).
//!
//! Invariants:
//! 1. Every page is changed only under its exclusive content lock, and a page found new (all
//!    zeros) is initialized by whoever first locks it exclusively (`init if new`), so two
//!    sessions that reach the same fresh page cannot both initialize it.
//! 2. A multi-insert computes how many pages its batch needs and extends by that many at once
//!    (`BufferPool::extend_by`), or takes a run of up to that many neighbouring pages from the
//!    free space map in one step (`fsm::take_run`); the pages it got stay pinned in its
//!    [`BulkInsert`] state until it has filled them, so it does not extend again while it holds
//!    empty pages, and they are not advertised in the free space map until the insert finishes
//!    with them.
//! 4. When a bulk insert ends, its partly filled page and unused extended pages are recorded in
//!    the FSM; extra pages extended for waiters are recorded at once. So every block of a
//!    relation is either holding tuples or known to the FSM.
//! 3. A scan copies each page under its shared content lock and reads tuples from the copy,
//!    so no lock or pin is held while rows are processed or written out (the only pins a scan
//!    holds are its read stream's, which is what lets the stream's ring accounting hold).
//!    [`scan_pruning`] also keeps the current page's pin (never its lock) while its rows are
//!    processed, then prunes it under the exclusive lock if its copy showed a nearly full page
//!    with a version dead to everyone; one page at a time, as `scan_locked` holds it.
//! 5. Scans read through a read stream (`buffer::stream`): look-ahead, combined reads,
//!    io_method; a scan of a relation larger than a quarter of the pool uses a BULKREAD ring and
//!    reports its read stream's look-ahead frontier every 128 kB; with synchronize_seqscans it
//!    starts at the position a running scan last reported and wraps around. A scan that
//!    finishes reports its own starting block, so scans that follow one another (not running
//!    together) start where the last one did: block 0, unless scans overlapped.
//! 6. A page marked all-visible (`storage::page` invariant 5) has its tuples returned without
//!    visibility checks; it holds nothing worth pruning.

pub mod dml;
pub mod extend;
pub mod prune;
pub mod toast;
pub mod tuple;
pub mod vacuum;

use crate::access::fsm;

use crate::buffer::{Buffer, BufferPool, Pins, ReadStream, Strategy, StrategyKind};
use crate::error::{sqlstate, PgError, Result};
use crate::storage::{page, BlockNumber, ForkNumber, RelFileNumber};
use crate::txn::{CommandId, Snapshot, TxnManager, VisCache, Xid};
use std::collections::VecDeque;
use std::time::Instant;

/// The largest tuple a page can hold (MaxHeapTupleSize).
pub fn max_tuple_size(block_size: usize) -> usize {
    block_size - page::PAGE_HEADER_SIZE - page::LINE_POINTER_SIZE
}

/// State of one bulk insert (one COPY): the page being filled and pages extended ahead.
pub struct BulkInsert<'a> {
    pub(crate) pool: &'a BufferPool,
    pins: &'a Pins,
    rel: RelFileNumber,
    use_fsm: bool,
    strategy: Strategy,
    current: Option<Buffer<'a>>,
    ahead: VecDeque<Buffer<'a>>,
    started: bool,
    /// Pages this insert extended the relation by (including extra pages given to the FSM).
    pub pages_extended: u64,
    /// Pages this insert got from the free space map.
    pub pages_from_fsm: u64,
    pub tuples_inserted: u64,
    /// Where the last tuple went.
    pub last_tid: (BlockNumber, u16),
    /// When Some, every tuple's TID is appended here (COPY into an indexed table).
    pub placed: Option<Vec<(BlockNumber, u16)>>,
    /// The WAL, for a logged relation (None: unlogged, or WAL skipped until commit).
    wal: Option<&'a crate::wal::Wal>,
    full_page_writes: bool,
    wal_data: Vec<u8>,
    record: crate::wal::RecordBuilder,
    /// The transaction's log of touched pages while a savepoint is open.
    pub touched: Option<&'a dml::TouchLog>,
    /// Pages to extend by next time at least (with the FSM): doubles each time this insert has
    /// to extend, up to `MAX_EXTEND_BY`, so a long load extends ahead of its demand in a few
    /// large steps (fewer posix_fallocate calls, each of which waits for the file's inode lock
    /// that the write-back worker's writes hold).
    extend_step: u32,
    /// This load's registration with the pre-extender ([`BulkInsert::pre_extend`]).
    demand: Option<extend::Registration<'a>>,
}

/// Bytes a tuple of `len` takes on a page, with its line pointer.
fn footprint(len: usize) -> usize {
    len + page::LINE_POINTER_SIZE
}

impl<'a> BulkInsert<'a> {
    /// A bulk insert into `rel`; `use_fsm` is the `heapstore.use_fsm` setting.
    pub fn new(pool: &'a BufferPool, pins: &'a Pins, rel: RelFileNumber, use_fsm: bool) -> BulkInsert<'a> {
        Self::logged(pool, pins, rel, use_fsm, None, true)
    }

    /// A bulk insert whose page changes are WAL-logged through `wal`: one MULTI_INSERT record
    /// per page it fills (seed 001: "call the WAL fewer times for bulk loads"), with a
    /// full-page image at a page's first change after a checkpoint when `full_page_writes`.
    pub fn logged(
        pool: &'a BufferPool,
        pins: &'a Pins,
        rel: RelFileNumber,
        use_fsm: bool,
        wal: Option<&'a crate::wal::Wal>,
        full_page_writes: bool,
    ) -> BulkInsert<'a> {
        let strategy = Strategy::new(StrategyKind::BulkWrite, pool, 16, 16);
        BulkInsert {
            pool,
            pins,
            rel,
            use_fsm,
            strategy,
            current: None,
            ahead: VecDeque::new(),
            started: false,
            pages_extended: 0,
            pages_from_fsm: 0,
            tuples_inserted: 0,
            last_tid: (0, 0),
            placed: None,
            wal,
            full_page_writes,
            wal_data: Vec::new(),
            record: crate::wal::RecordBuilder::new(),
            touched: None,
            extend_step: 0,
            demand: None,
        }
    }

    /// Inserts formed tuples (header fields other than xmin/cmin filled by the caller's
    /// builder). Tuples are placed in order, filling each page before the next.
    /// `data` is their concatenation; `lens` their lengths.
    pub fn insert_batch(&mut self, data: &mut [u8], lens: &[usize], xid: Xid, cid: CommandId) -> Result<()> {
        let bs = self.pool.block_size();
        let mut pos = 0usize;
        let mut i = 0usize;
        if !self.started {
            self.started = true;
            if !self.use_fsm {
                self.try_last_page()?;
            }
        }
        while i < lens.len() {
            if lens[i] > max_tuple_size(bs) {
                return Err(row_too_big(lens[i], bs));
            }
            if self.current.is_none() {
                self.next_page(&lens[i..])?;
            }
            let buf = self.current.as_ref().expect("set above");
            let block = buf.block();
            let mut pg = buf.lock_exclusive();
            let will_init = page::is_new(&pg);
            if will_init {
                page::init(&mut pg, 0);
            }
            if page::flags(&pg) & page::PD_ALL_VISIBLE != 0 {
                // Before the tuples clear the mark (`access::vm` invariant 2).
                crate::access::vm::clear(self.pool, self.pins, self.rel, block)?;
            }
            self.wal_data.clear();
            if let Some(l) = self.touched {
                l.touch(self.rel, block, self.wal.is_some());
            }
            let mut placed = 0;
            while i < lens.len() {
                let len = lens[i];
                if page::free_space(&pg) < len {
                    break;
                }
                let t = &mut data[pos..pos + len];
                tuple::set_xmin(t, xid, cid);
                let off = page::max_offset(&pg) + 1;
                tuple::set_ctid(t, block, off);
                let got = page::add_item(&mut pg, t).expect("free space was checked");
                debug_assert_eq!(got, off);
                if self.wal.is_some() {
                    crate::recovery::push_tuple(&mut self.wal_data, off, t);
                }
                self.last_tid = (block, off);
                if let Some(p) = &mut self.placed {
                    p.push((block, off));
                }
                pos += len;
                i += 1;
                placed += 1;
            }
            if placed > 0 {
                // One MULTI_INSERT record for the tuples just placed (seed 001: log whole pages'
                // worth, not tuple by tuple), in the critical section.
                use crate::buffer::critical::{log_page_changes, Logged, PageChange, RecordKind};
                let kind = RecordKind { rmid: crate::recovery::RM_HEAP, info: crate::recovery::HEAP_MULTI_INSERT, xid, main: &[] };
                let logged = Logged::Delta { data: &self.wal_data, will_init };
                let change = PageChange { pg: &mut pg, rel: self.rel, fork: ForkNumber::Main, block, logged };
                log_page_changes(self.wal, self.full_page_writes, kind, &mut [change], &mut self.record)?;
            }
            drop(pg);
            if i < lens.len() {
                // Page full: move on. Its remaining space is too small to be worth recording.
                // The page is done with: queue it for the write-back worker, so that it is
                // written off this session before the ring comes round to its buffer.
                if let Some(done) = self.current.take() {
                    let (id, tag) = (done.id(), done.tag());
                    drop(done);
                    self.pool.write_back.queue(self.pool, id, tag);
                }
            }
            self.tuples_inserted += placed;
        }
        Ok(())
    }

    /// Without the FSM, starts on the relation's last page if it has room (as PostgreSQL's
    /// target-block hint), so consecutive small COPYs do not each leave a half-empty page.
    fn try_last_page(&mut self) -> Result<()> {
        let n = self.pool.smgr().nblocks(self.rel, ForkNumber::Main)?;
        if n == 0 {
            return Ok(());
        }
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, n - 1, None)?;
        let room = {
            let pg = buf.lock_shared();
            page::is_new(&pg) || page::free_space(&pg) > self.pool.block_size() / 5
        };
        if room {
            self.current = Some(buf);
        }
        Ok(())
    }

    /// Loads through the pre-extender (`extend`): it keeps pages extended ahead of this
    /// load's demand in the free space map (only with the FSM).
    pub fn pre_extend(&mut self, pre: &'a extend::PreExtend) {
        if self.use_fsm && self.demand.is_none() {
            self.demand = pre.register(self.rel);
        }
    }

    /// Finds the next page for `pending` tuples: a page extended ahead, else one from the free
    /// space map with room for the next tuple, else new pages — as many as the pending tuples
    /// need (seed 000: the multi-insert tells extension its need), plus min(512, 20 × waiters)
    /// when others wait for the extension lock; pages beyond our need go straight to the FSM.
    fn next_page(&mut self, pending: &[usize]) -> Result<()> {
        if let Some(b) = self.ahead.pop_front() {
            self.current = Some(b);
            return Ok(());
        }
        if self.use_fsm && self.page_from_fsm(pending)? {
            return Ok(());
        }
        if let Some(d) = &self.demand {
            d.ran_dry(pages_needed(pending, self.pool.block_size()) as u64)?;
            if self.page_from_fsm(pending)? {
                return Ok(());
            }
        }
        let bs = self.pool.block_size();
        let need = pages_needed(pending, bs).max(self.extend_step);
        if self.use_fsm {
            // Pages beyond this batch's need wait in `ahead`; those left at the end go to the
            // FSM (`release_pages`), so nothing extended is lost to later inserts.
            self.extend_step = (need * 2).min(crate::buffer::pool::MAX_EXTEND_BY);
        }
        // With the FSM, a session that finds the extension lock busy waits for it to be free
        // and looks in the FSM again (once) before extending itself: the holder is most likely
        // adding extra pages for exactly such waiters.
        let mut yield_if_busy = self.use_fsm;
        let (bufs, extra_blocks) = loop {
            let waiters = self.pool.extension_lock(self.rel).waiters.load(std::sync::atomic::Ordering::Relaxed);
            let extra = if self.use_fsm && waiters > 0 { (20 * waiters).min(512) } else { 0 };
            match self.pool.extend_by_with_extra(
                self.pins,
                self.rel,
                ForkNumber::Main,
                need,
                extra,
                Some(&mut self.strategy),
                yield_if_busy,
            )? {
                Some(r) => break r,
                None => {
                    yield_if_busy = false;
                    if self.page_from_fsm(pending)? {
                        return Ok(());
                    }
                }
            }
        };
        self.pages_extended += bufs.len() as u64 + extra_blocks.len() as u64;
        self.ahead.extend(bufs);
        if !extra_blocks.is_empty() {
            let mut spare: Vec<(BlockNumber, usize)> = extra_blocks.map(|b| (b, bs - page::PAGE_HEADER_SIZE)).collect();
            fsm::record_many(self.pool, self.pins, self.rel, &mut spare)?;
        }
        self.current = self.ahead.pop_front();
        Ok(())
    }

    /// Takes pages with room for the pending tuples from the FSM: a run of up to as many
    /// neighbouring pages as they need, in one FSM operation (pages extended for waiters lie
    /// side by side there), with bounded retries when the map was optimistic. The first page
    /// becomes current, the others wait in `ahead`, private as extended pages are. True if
    /// `current` was set.
    fn page_from_fsm(&mut self, pending: &[usize]) -> Result<bool> {
        let bs = self.pool.block_size();
        let need = footprint(pending[0]);
        let max_pages = pages_needed(pending, bs);
        debug_assert!(self.current.is_none() && self.ahead.is_empty());
        for _ in 0..4 {
            let Some(run) = fsm::take_run(self.pool, self.pins, self.rel, need, max_pages)? else {
                return Ok(false);
            };
            let nblocks = self.pool.smgr().nblocks(self.rel, ForkNumber::Main)?;
            for block in run {
                if block >= nblocks {
                    continue; // the relation was truncated since: forget the entry
                }
                let buf = self.pool.read_buffer_taken(self.pins, self.rel, ForkNumber::Main, block, Some(&mut self.strategy))?;
                let free = {
                    let mut pg = buf.lock_exclusive();
                    if page::is_new(&pg) {
                        page::init(&mut pg, 0);
                        pg.mark_dirty();
                    }
                    page::free_space(&pg)
                };
                // `free_space` already keeps room for the tuple's line pointer: compare with
                // the tuple alone, or a page emptied by VACUUM never takes a tuple of the
                // largest size (a TOAST chunk) and the relation grows instead.
                if free >= pending[0] {
                    self.pages_from_fsm += 1;
                    self.ahead.push_back(buf);
                } else {
                    drop(buf);
                    fsm::record(self.pool, self.pins, self.rel, block, free)?;
                }
            }
            if let Some(first) = self.ahead.pop_front() {
                if let Some(d) = &self.demand {
                    d.took_from_fsm(self.ahead.len() as u64 + 1);
                }
                self.current = Some(first);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Ends the insert: the page in use and any pages extended ahead but not used go to the
    /// free space map (batched), and every pin is released.
    pub fn finish(mut self) -> Result<()> {
        self.release_pages()
    }

    /// Gives the page in use and the pages extended ahead to the free space map and unpins
    /// them. Also run when the insert is dropped unfinished (a COPY that failed), so that pages
    /// it extended are not lost to later inserts.
    fn release_pages(&mut self) -> Result<()> {
        let bs = self.pool.block_size();
        // Extended pages are new; the page in use and pages taken from the FSM may hold tuples.
        let entry = |b: Buffer<'_>| {
            let pg = b.lock_shared();
            let free = if page::is_new(&pg) { bs - page::PAGE_HEADER_SIZE } else { page::free_space(&pg) };
            (b.block(), free)
        };
        let mut entries: Vec<(BlockNumber, usize)> = self.current.take().into_iter().chain(self.ahead.drain(..)).map(entry).collect();
        if self.use_fsm && !entries.is_empty() {
            fsm::record_many(self.pool, self.pins, self.rel, &mut entries)?;
        }
        Ok(())
    }
}

impl Drop for BulkInsert<'_> {
    fn drop(&mut self) {
        if (self.current.is_some() || !self.ahead.is_empty()) && !std::thread::panicking() {
            // Best effort: the FSM is a hint, and the error that dropped us is the one to report.
            let _ = self.release_pages();
        }
    }
}

fn row_too_big(len: usize, bs: usize) -> PgError {
    PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("row is too big: size {len}, maximum size {}", max_tuple_size(bs)))
}

/// Pages needed for tuples of these lengths, filled in order.
fn pages_needed(lens: &[usize], bs: usize) -> u32 {
    let cap = bs - page::PAGE_HEADER_SIZE;
    let mut pages = 1u32;
    let mut used = 0usize;
    for &l in lens {
        let need = l + page::LINE_POINTER_SIZE;
        if used + need > cap {
            pages += 1;
            used = 0;
        }
        used += need;
        if pages >= crate::buffer::pool::MAX_EXTEND_BY {
            break;
        }
    }
    pages
}

/// What a scan callback wants next.
pub enum Flow {
    Continue,
    Stop,
}

/// Per-scan figures (for EXPLAIN and tests).
#[derive(Clone, Debug, Default)]
pub struct ScanStats {
    pub pages: u64,
    pub tuples_visible: u64,
    /// Pages marked all-visible, read without per-tuple visibility checks.
    pub pages_all_visible: u64,
    /// Pages the scan pruned ([`scan_pruning`]).
    pub pages_pruned: u64,
    /// An index-only scan's visits to the heap (entries whose page the visibility map did
    /// not mark all-visible).
    pub heap_fetches: u64,
    /// The ring (kind, buffers), if the scan used one.
    pub strategy: Option<(StrategyKind, usize)>,
    pub ring_escapes: u64,
    pub ring_reuses: u64,
    pub ring_rejected: u64,
    /// The read stream's figures.
    pub stream: crate::buffer::StreamStats,
    /// Where the scan started (not 0 when it joined a running scan: synchronized scans).
    pub start_block: BlockNumber,
    pub nblocks: BlockNumber,
    /// The io_method reads went through.
    pub io_method: &'static str,
}

/// One scan's figures, collected for EXPLAIN ANALYZE by [`traced`].
#[derive(Clone, Debug)]
pub struct ScanTrace {
    pub rel: RelFileNumber,
    /// The index, for an index scan (its `stats` then carry only `tuples_visible`).
    pub index: Option<String>,
    pub stats: ScanStats,
    /// Time from the scan's start to its first visible tuple.
    pub first_row_ns: Option<u64>,
    pub total_ns: u64,
}

thread_local! {
    static TRACE: std::cell::RefCell<Option<Vec<ScanTrace>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f`, collecting a [`ScanTrace`] for every heap scan it does on this thread.
pub fn traced<R>(f: impl FnOnce() -> R) -> (R, Vec<ScanTrace>) {
    let outer = TRACE.with(|t| t.borrow_mut().replace(Vec::new()));
    let r = f();
    let traces = TRACE.with(|t| std::mem::replace(&mut *t.borrow_mut(), outer)).unwrap_or_default();
    (r, traces)
}

/// True while [`traced`] collects scans on this thread.
pub fn tracing() -> bool {
    TRACE.with(|t| t.borrow().is_some())
}

/// Adds a scan's figures to the collection of [`traced`] (no-op when not tracing).
pub fn record_trace(trace: ScanTrace) {
    TRACE.with(|t| t.borrow_mut().as_mut().map(|v| v.push(trace)));
}

/// Blocks between two reports of a synchronized scan's position (PostgreSQL's
/// SYNC_SCAN_REPORT_INTERVAL: 128 kB worth).
fn sync_scan_report_interval(block_size: usize) -> u32 {
    ((128 << 10) / block_size).max(1) as u32
}

/// Scans the visible tuples of `rel`, calling `f(block, offset, tuple)`, through a read stream.
/// A relation larger than a quarter of the pool is read through a BULKREAD ring and, with
/// `synchronize_seqscans`, starts where a running scan of it is and wraps around (so the
/// order of blocks is then not 0..n).
pub fn scan(
    pool: &BufferPool,
    pins: &Pins,
    txns: &TxnManager,
    rel: RelFileNumber,
    snap: &Snapshot,
    f: impl FnMut(BlockNumber, u16, &[u8]) -> Result<Flow>,
) -> Result<ScanStats> {
    scan_pages(pool, pins, txns, rel, snap, true, None, f)
}

/// Like [`scan`], and prunes the pages it reads that are nearly full and hold versions dead to
/// everyone (PostgreSQL's heap_page_prune_opt), through `heap` (its WAL decides logging).
pub fn scan_pruning(
    heap: &dml::HeapRel<'_>,
    txns: &TxnManager,
    snap: &Snapshot,
    f: impl FnMut(BlockNumber, u16, &[u8]) -> Result<Flow>,
) -> Result<ScanStats> {
    scan_pages(heap.pool, heap.pins, txns, heap.rel, snap, true, Some(heap), f)
}

/// Like [`scan`], but `f` runs on the page itself under its shared content lock, with no copy
/// (PostgreSQL's page-at-a-time visibility pass): for callers that only look at a tuple
/// briefly, such as `count(*)`. `f` must not block, take locks, or pin other buffers.
pub fn scan_locked(
    pool: &BufferPool,
    pins: &Pins,
    txns: &TxnManager,
    rel: RelFileNumber,
    snap: &Snapshot,
    f: impl FnMut(BlockNumber, u16, &[u8]) -> Result<Flow>,
) -> Result<ScanStats> {
    scan_pages(pool, pins, txns, rel, snap, false, None, f)
}

/// Whether a page read by a scan is worth pruning: less than a tenth of it free (PostgreSQL's
/// heap_page_prune_opt threshold without fillfactor).
fn worth_pruning(pg: &[u8], block_size: usize) -> bool {
    page::free_space(pg) < block_size / 10
}

#[allow(clippy::too_many_arguments)]
fn scan_pages(
    pool: &BufferPool,
    pins: &Pins,
    txns: &TxnManager,
    rel: RelFileNumber,
    snap: &Snapshot,
    copy_pages: bool,
    prune: Option<&dml::HeapRel<'_>>,
    mut f: impl FnMut(BlockNumber, u16, &[u8]) -> Result<Flow>,
) -> Result<ScanStats> {
    debug_assert!(prune.is_none() || copy_pages, "pruning needs the page unlocked while the callback runs");
    let nblocks = pool.smgr().nblocks(rel, ForkNumber::Main)?;
    let settings = pool.scan_settings();
    let large = nblocks as usize > pool.nbuffers() as usize / 4;
    let strategy = large.then(|| Strategy::bulkread(pool, &settings));
    let sync = large && settings.synchronize_seqscans;
    let start = if sync { pool.sync_scan_start(rel, nblocks) } else { 0 };
    let mut st = ScanStats {
        strategy: strategy.as_ref().map(|s| (s.kind(), s.ring_size_blocks())),
        start_block: start,
        nblocks,
        io_method: pool.io_method().name(),
        ..Default::default()
    };
    let mut i = 0u32;
    let blocks = move || {
        if i >= nblocks {
            return None;
        }
        let b = (start + i) % nblocks.max(1);
        i += 1;
        Some((b, ()))
    };
    let mut stream = ReadStream::new(pool, pins, rel, ForkNumber::Main, strategy, blocks);
    let report_every = sync_scan_report_interval(pool.block_size());
    let mut copy = vec![0u8; pool.block_size()];
    let mut vis = VisCache::default();
    let tracing = TRACE.with(|t| t.borrow().is_some()).then(Instant::now);
    let mut first_row_ns = None;
    let mut stopped = false;
    // The horizon pruning judges against, taken once when first needed: a horizon only moves
    // forward, so an older one prunes less, never wrongly.
    let mut horizon: Option<Xid> = None;
    'blocks: while let Some((buf, ())) = stream.next_buffer()? {
        crate::interrupt::check_for_interrupts()?;
        let block = buf.block();
        let mut kept = None;
        let locked = if copy_pages {
            copy.copy_from_slice(&buf.lock_shared());
            if prune.is_some() {
                kept = Some(buf);
            } else {
                drop(buf);
            }
            None
        } else {
            Some(buf)
        };
        let guard = locked.as_ref().map(|b| b.lock_shared());
        let copy: &[u8] = match &guard {
            Some(g) => g,
            None => &copy,
        };
        st.pages += 1;
        if large && st.pages % report_every as u64 == 0 {
            // Report the look-ahead frontier, not the page being processed: a scan that joins
            // there reads ahead of this one, and this one then finds those pages in the pool,
            // instead of the newcomer racing through this scan's look-ahead and ending up a
            // whole ring ahead of it (where neither finds the other's pages).
            pool.sync_scan_report(rel, stream.frontier().map(|f| (f + 1) % nblocks).unwrap_or(block));
        }
        if page::is_new(copy) {
            continue;
        }
        // `storage::page` invariant 5: every tuple of an all-visible page is visible to this
        // snapshot, so none is checked.
        let all_visible = page::flags(copy) & page::PD_ALL_VISIBLE != 0;
        st.pages_all_visible += u64::from(all_visible);
        let mut look_for_dead = kept.is_some() && !all_visible && worth_pruning(copy, pool.block_size());
        let mut found_dead = false;
        for off in 1..=page::max_offset(copy) {
            let Some(t) = page::item(copy, off) else { continue };
            if t.len() < tuple::HEADER_SIZE {
                return Err(corrupt_tuple(pool, rel, block, off));
            }
            if !all_visible && !txns.visible(snap, tuple::xmin(t), tuple::cmin(t), tuple::xmax(t), tuple::cmax(t), &mut vis) {
                if look_for_dead {
                    let h = *horizon.get_or_insert_with(|| txns.vacuum_horizon());
                    if vacuum::is_dead(txns, tuple::xmin(t), tuple::xmax(t), h) {
                        found_dead = true;
                        look_for_dead = false;
                    }
                }
                continue;
            }
            st.tuples_visible += 1;
            if let (Some(t0), None) = (tracing, first_row_ns) {
                first_row_ns = Some(t0.elapsed().as_nanos() as u64);
            }
            if let Flow::Stop = f(block, off, t)? {
                stopped = true;
                break 'blocks;
            }
        }
        if let (true, Some(buf), Some(heap), Some(h)) = (found_dead, kept, prune, horizon) {
            // Pruning decides again under the exclusive lock (`prune` invariant 4); the tuples
            // the callback saw were copies.
            let mut pg = buf.lock_exclusive();
            if heap.prune_locked_at(txns, block, &mut pg, h)? > 0 {
                st.pages_pruned += 1;
                let free = page::free_space(&pg);
                drop(pg);
                // Inserts find the room in the free space map (a hint).
                fsm::record(pool, pins, rel, block, free)?;
            }
        }
    }
    if sync && !stopped && nblocks > 0 {
        // A scan that went all the way round leaves its starting block as the hint, as
        // PostgreSQL's does: otherwise each finished scan would move the next one's start (and
        // a scan started after this one ended would begin mid-table for no one's benefit).
        pool.sync_scan_report(rel, start);
    }
    st.stream = stream.stats().clone();
    if let Some(s) = stream.strategy() {
        st.ring_escapes = s.escapes;
        st.ring_reuses = s.reuses;
        st.ring_rejected = s.rejected;
    }
    drop(stream);
    if let Some(t0) = tracing {
        record_trace(ScanTrace { rel, index: None, stats: st.clone(), first_row_ns, total_ns: t0.elapsed().as_nanos() as u64 });
    }
    Ok(st)
}

pub(crate) fn corrupt_tuple(pool: &BufferPool, rel: RelFileNumber, block: BlockNumber, off: u16) -> PgError {
    PgError::new(
        sqlstate::DATA_CORRUPTED,
        format!("corrupt tuple at ({block},{off}) in relation {}", pool.smgr().display_name(rel, ForkNumber::Main)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_needed_counts_whole_pages() {
        assert_eq!(pages_needed(&[100; 10], 8192), 1);
        // 8168 usable bytes: 78 tuples of 100 + 4 per page.
        assert_eq!(pages_needed(&[100; 79], 8192), 2);
        assert_eq!(pages_needed(&[8000; 200], 8192), crate::buffer::pool::MAX_EXTEND_BY);
    }
}

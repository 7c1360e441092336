//! The shared buffer pool: lookup, pin, victim, read, extend, flush.
//!
//! Principal entry points: [`BufferPool::read_buffer`], [`BufferPool::extend_by`],
//! [`BufferPool::flush_all`], [`BufferPool::drop_relation_buffers`]. See the module doc of
//! `buffer` for the rules callers follow.

use super::desc::*;
use super::memory::{AlignedBuf, Region};
use super::pins::{Buffer, Pins};
use super::strategy::Strategy;
use crate::error::{sqlstate, PgError, Result};
use crate::lock::{LWLock, LWLockClass, LWLockMode, LWLocked};
use crate::stats::{self, IoContext, IoOp};
use crate::storage::{page, BlockNumber, ForkNumber, RelFileNumber, Smgr};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub type BufferId = u32;

/// Hasher for tags that are already hashed by [`BufferTag::hash`].
#[derive(Default)]
pub struct PassHasher(u64);
impl Hasher for PassHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only write_u64 is used")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct HashedTag(BufferTag, u64);
impl std::hash::Hash for HashedTag {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.1)
    }
}
impl HashedTag {
    fn new(t: BufferTag) -> Self {
        HashedTag(t, t.hash())
    }
}

type PartitionMap = HashMap<HashedTag, BufferId, BuildHasherDefault<PassHasher>>;

/// The relation extension lock of one relation, with a count of its waiters (seed 000: extend
/// by more when others wait).
pub struct ExtensionLock {
    pub lock: LWLock,
    pub waiters: AtomicU32,
    /// Blocks extended for others (zeros on disk, never handed out yet): the first session to
    /// take one fills its buffer with zeros instead of reading it
    /// ([`BufferPool::read_buffer_taken`]). A block stops being fresh when it is taken that
    /// way or when any buffer of it is written to disk (`write_run`), whichever path put data
    /// on it: a block whose data may be on disk is never zero-filled.
    fresh: Mutex<Vec<std::ops::Range<BlockNumber>>>,
}

/// Removes `cut` from a list of ranges; returns how many blocks were removed.
fn remove_range(ranges: &mut Vec<std::ops::Range<BlockNumber>>, cut: std::ops::Range<BlockNumber>) -> u64 {
    let mut removed = 0u64;
    let mut out = Vec::with_capacity(ranges.len() + 1);
    for r in ranges.drain(..) {
        let (lo, hi) = (r.start.max(cut.start), r.end.min(cut.end));
        if lo >= hi {
            out.push(r);
            continue;
        }
        removed += (hi - lo) as u64;
        if r.start < lo {
            out.push(r.start..lo);
        }
        if hi < r.end {
            out.push(hi..r.end);
        }
    }
    *ranges = out;
    removed
}

/// How long a victim search may keep finding every buffer pinned before it gives up.
const ALL_PINNED_TIMEOUT: Duration = Duration::from_secs(30);
/// Relations whose synchronized-scan position is remembered (PostgreSQL keeps 20).
pub const SYNC_SCAN_MAX_RELATIONS: usize = 64;

/// PostgreSQL's MAX_BUFFERS_TO_EXTEND_BY.
pub const MAX_EXTEND_BY: u32 = 64;
/// The most blocks one combined write carries (`io_combine_limit` is capped at this).
pub const MAX_WRITE_COMBINE: usize = 32;

pub struct BufferPool {
    pub(crate) descs: Box<[BufferDesc]>,
    memory: Region,
    block_size: usize,
    nbuffers: u32,
    partitions: Box<[LWLocked<PartitionMap>]>,
    partition_mask: u64,
    hand: AtomicU64,
    max_examined: u64,
    /// Buffers that DROP / TRUNCATE unmapped, newest last (PostgreSQL's freelist): a victim
    /// search takes these before sweeping, so a relation loaded after one was dropped reuses
    /// memory already in use instead of touching pages of the pool no one has touched yet.
    /// A hint only: the sweep may take a listed buffer first (see [`BufferPool::pop_free`]).
    free: Mutex<Vec<BufferId>>,
    /// `free.len()`, read without the lock by victim searches that find it empty.
    free_len: AtomicU32,
    pub(crate) smgr: Arc<Smgr>,
    ext_locks: Mutex<HashMap<RelFileNumber, Arc<ExtensionLock>>>,
    max_connections: usize,
    /// `log_lock_waits` and `deadlock_timeout`, for extension-lock waits.
    log_lock_waits: bool,
    deadlock_timeout: Duration,
    /// Buffers handed out by the clock sweep (pg_stat_bgwriter's buffers_alloc).
    pub buffers_alloc: AtomicU64,
    /// The WAL, once open: a page is written only after the WAL up to its LSN is durable.
    wal: std::sync::OnceLock<Arc<crate::wal::Wal>>,
    /// Blocks added to main forks by `extend_by` (a test checks no block is handed out twice).
    pub extended_main_blocks: AtomicU64,
    /// The read executor (io_method), once started.
    pub(crate) aio: std::sync::OnceLock<super::aio::Aio>,
    /// Settings of sequential scans (read streams, rings, synchronized scans).
    scan_settings: std::sync::OnceLock<ScanSettings>,
    /// Where running sequential scans of large relations are (synchronized scans).
    pub(crate) sync_scans: Mutex<HashMap<RelFileNumber, BlockNumber>>,
    /// Fresh blocks in all relations' extension locks (0: writes need not look).
    fresh_blocks: AtomicU64,
    /// Filled bulk-load pages waiting to be written off the session (`writeback`).
    pub write_back: Arc<super::writeback::WriteBack>,
}

/// Settings that shape sequential scans, with PostgreSQL's names.
#[derive(Clone, Debug)]
pub struct ScanSettings {
    /// `io_combine_limit`, in blocks.
    pub io_combine_limit: usize,
    /// `effective_io_concurrency`: reads a stream keeps in flight.
    pub effective_io_concurrency: usize,
    /// `synchronize_seqscans`.
    pub synchronize_seqscans: bool,
    /// `heapstore.bulkread_ring_size` in bytes (0: seed 002's formula).
    pub bulkread_ring_bytes: usize,
}

impl Default for ScanSettings {
    fn default() -> Self {
        ScanSettings { io_combine_limit: 16, effective_io_concurrency: 16, synchronize_seqscans: true, bulkread_ring_bytes: 0 }
    }
}

/// What [`BufferPool::stage_read`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Staged {
    /// Valid in the pool.
    Hit,
    /// Newly mapped; the caller owns IO_IN_PROGRESS and must submit a read for it.
    Mine,
    /// Mapped but not valid: another session's read is in progress (or failed).
    Foreign,
}

thread_local! {
    static SCRATCH: RefCell<Option<AlignedBuf>> = const { RefCell::new(None) };
}

impl BufferPool {
    pub fn new(
        smgr: Arc<Smgr>,
        nbuffers: usize,
        partitions: usize,
        max_examined: u64,
        huge_pages: &str,
        max_connections: usize,
    ) -> Result<BufferPool> {
        assert!(nbuffers >= 16, "shared_buffers must be at least 16 blocks");
        assert!(partitions.is_power_of_two());
        let block_size = smgr.block_size();
        let memory = Region::map(nbuffers * block_size, huge_pages).map_err(|e| {
            PgError::new(sqlstate::OUT_OF_MEMORY, format!("could not allocate {} bytes for shared_buffers: {e}", nbuffers * block_size))
        })?;
        let descs: Box<[BufferDesc]> = (0..nbuffers).map(|_| BufferDesc::default()).collect();
        let per = nbuffers / partitions + 8;
        let parts: Box<[LWLocked<PartitionMap>]> = (0..partitions)
            .map(|_| LWLocked::new(LWLockClass::BufferMapping, PartitionMap::with_capacity_and_hasher(per + per / 4, Default::default())))
            .collect();
        Ok(BufferPool {
            descs,
            memory,
            block_size,
            nbuffers: nbuffers as u32,
            partitions: parts,
            partition_mask: partitions as u64 - 1,
            hand: AtomicU64::new(0),
            max_examined: max_examined.max(16),
            free: Mutex::new(Vec::new()),
            free_len: AtomicU32::new(0),
            smgr,
            ext_locks: Mutex::new(HashMap::new()),
            max_connections: max_connections.max(1),
            log_lock_waits: false,
            deadlock_timeout: Duration::from_secs(1),
            extended_main_blocks: AtomicU64::new(0),
            wal: std::sync::OnceLock::new(),
            buffers_alloc: AtomicU64::new(0),
            aio: std::sync::OnceLock::new(),
            scan_settings: std::sync::OnceLock::new(),
            sync_scans: Mutex::new(HashMap::new()),
            fresh_blocks: AtomicU64::new(0),
            write_back: Arc::default(),
        })
    }

    /// Connects the WAL (WAL before data: invariant 6 of `buffer`).
    pub fn set_wal(&self, wal: Arc<crate::wal::Wal>) {
        let _ = self.wal.set(wal);
    }

    /// Turns on logging of extension-lock waits longer than `deadlock_timeout`.
    pub fn set_lock_wait_logging(&mut self, log_lock_waits: bool, deadlock_timeout: Duration) {
        self.log_lock_waits = log_lock_waits;
        self.deadlock_timeout = deadlock_timeout;
    }

    pub fn nbuffers(&self) -> u32 {
        self.nbuffers
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }

    pub fn smgr(&self) -> &Arc<Smgr> {
        &self.smgr
    }

    pub fn huge_pages(&self) -> super::memory::HugePages {
        self.memory.huge
    }

    /// The pins one session may hold: its proportional share of the pool, at least one.
    pub fn pin_limit(&self) -> usize {
        (self.nbuffers as usize / self.max_connections).max(1)
    }

    /// A new per-session pin table.
    pub fn new_pins(&self) -> Pins {
        Pins::new(self.pin_limit())
    }

    /// Raw pointer to buffer `id`'s page.
    #[inline]
    pub(crate) fn page_ptr(&self, id: BufferId) -> *mut u8 {
        debug_assert!(id < self.nbuffers);
        // SAFETY: id < nbuffers, so the offset is inside the region.
        unsafe { self.memory.as_ptr().add(id as usize * self.block_size) }
    }

    #[inline]
    fn partition(&self, h: &HashedTag) -> &LWLocked<PartitionMap> {
        &self.partitions[(h.1 & self.partition_mask) as usize]
    }

    #[inline]
    pub(crate) fn desc(&self, id: BufferId) -> &BufferDesc {
        &self.descs[id as usize]
    }

    /// Adds a shared pin (the session already accounted it privately). Bumps the usage count
    /// (only to 1 for strategy access, as PostgreSQL does, so rings do not heat the pool).
    #[inline]
    pub(crate) fn pin_shared(&self, id: BufferId, strategy: bool) {
        let d = self.desc(id);
        let mut s = d.state.load(Ordering::Relaxed);
        loop {
            if s & LOCKED != 0 {
                s = d.wait_header_unlocked();
            }
            let mut n = s + REFCOUNT_ONE;
            let u = usage(s);
            if (strategy && u == 0) || (!strategy && u < MAX_USAGE) {
                n += USAGE_ONE;
            }
            match d.state.compare_exchange_weak(s, n, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return,
                Err(cur) => s = cur,
            }
        }
    }

    #[inline]
    pub(crate) fn unpin_shared(&self, id: BufferId) {
        let d = self.desc(id);
        let mut s = d.state.load(Ordering::Relaxed);
        loop {
            if s & LOCKED != 0 {
                s = d.wait_header_unlocked();
            }
            debug_assert!(refcount(s) > 0, "unpinning unpinned buffer {id}");
            match d.state.compare_exchange_weak(s, s - REFCOUNT_ONE, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(cur) => s = cur,
            }
        }
    }

    /// Sets DIRTY. Caller holds the exclusive content lock.
    #[inline]
    pub(crate) fn mark_dirty(&self, id: BufferId) {
        let d = self.desc(id);
        debug_assert!(d.content_lock.is_locked_exclusive());
        let mut s = d.state.load(Ordering::Relaxed);
        loop {
            if s & DIRTY != 0 {
                return;
            }
            if s & LOCKED != 0 {
                s = d.wait_header_unlocked();
            }
            match d.state.compare_exchange_weak(s, s | DIRTY, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return,
                Err(cur) => s = cur,
            }
        }
    }

    fn io_context(strategy: Option<&Strategy>) -> IoContext {
        strategy.map(|s| s.io_context()).unwrap_or(IoContext::Normal)
    }

    /// Sets the scan settings (once, at open).
    pub fn set_scan_settings(&self, s: ScanSettings) {
        let _ = self.scan_settings.set(s);
    }

    pub fn scan_settings(&self) -> ScanSettings {
        self.scan_settings.get().cloned().unwrap_or_default()
    }

    /// Returns block `block` of a fork, pinned and valid (read from disk on a miss).
    pub fn read_buffer<'a>(
        &'a self,
        pins: &'a Pins,
        rel: RelFileNumber,
        fork: ForkNumber,
        block: BlockNumber,
        strategy: Option<&mut Strategy>,
    ) -> Result<Buffer<'a>> {
        let ctx = Self::io_context(strategy.as_deref());
        let (buf, staged) = self.stage_read(pins, rel, fork, block, strategy)?;
        match staged {
            Staged::Hit => {}
            Staged::Mine => self.read_into(&buf, ctx)?,
            Staged::Foreign => self.complete_read(&buf, ctx)?,
        }
        Ok(buf)
    }

    /// Pins block `block`, mapping it to a victim buffer on a miss without reading it: the
    /// first step of a read, shared by [`BufferPool::read_buffer`] and read streams. On
    /// [`Staged::Mine`] the caller owns IO_IN_PROGRESS and must read the page (or submit a
    /// read for it); on [`Staged::Foreign`] it calls [`BufferPool::wait_valid`] before use.
    pub(crate) fn stage_read<'a>(
        &'a self,
        pins: &'a Pins,
        rel: RelFileNumber,
        fork: ForkNumber,
        block: BlockNumber,
        mut strategy: Option<&mut Strategy>,
    ) -> Result<(Buffer<'a>, Staged)> {
        let tag = BufferTag { rel, fork, block };
        let h = HashedTag::new(tag);
        let ctx = Self::io_context(strategy.as_deref());
        // Fast path: mapped already.
        {
            let part = self.partition(&h).read();
            if let Some(&id) = part.get(&h) {
                let buf = pins.pin(self, id, strategy.is_some());
                drop(part);
                if self.desc(id).state.load(Ordering::Acquire) & VALID != 0 {
                    stats::count_io(ctx, IoOp::Hit, 1, 0, 0);
                    return Ok((buf, Staged::Hit));
                }
                return Ok((buf, Staged::Foreign));
            }
        }
        // Miss: get a clean, unmapped victim first, holding no mapping lock.
        let victim = self.get_victim(pins, strategy.as_deref_mut())?;
        let mut part = self.partition(&h).write();
        if let Some(&id) = part.get(&h) {
            // Someone mapped it meanwhile: use theirs; our victim goes back unmapped.
            let buf = pins.pin(self, id, strategy.is_some());
            drop(part);
            drop(victim);
            if self.desc(id).state.load(Ordering::Acquire) & VALID == 0 {
                return Ok((buf, Staged::Foreign));
            }
            stats::count_io(ctx, IoOp::Hit, 1, 0, 0);
            return Ok((buf, Staged::Hit));
        }
        let d = self.desc(victim.id());
        let s = d.lock_header();
        debug_assert_eq!(refcount(s), 1);
        debug_assert_eq!(s & (TAG_VALID | VALID | DIRTY | IO_IN_PROGRESS), 0);
        d.set_tag(tag);
        part.insert(h, victim.id());
        d.unlock_header((s & !(LOCKED | USAGE_MASK)) | TAG_VALID | IO_IN_PROGRESS | USAGE_ONE);
        drop(part);
        Ok((victim, Staged::Mine))
    }

    /// Waits until a pinned buffer whose read someone started is valid; if that read failed,
    /// reads the page itself (so the error is reported with its relation and block). Returns
    /// whether it had to wait.
    pub(crate) fn wait_valid(&self, buf: &Buffer<'_>, ctx: IoContext) -> Result<bool> {
        let id = buf.id();
        let mut waited = false;
        loop {
            let s = self.desc(id).state.load(Ordering::Acquire);
            if s & VALID != 0 {
                return Ok(waited);
            }
            if s & IO_IN_PROGRESS != 0 {
                waited = true;
                self.wait_io(id);
                continue;
            }
            self.complete_read(buf, ctx)?;
            return Ok(waited);
        }
    }

    /// Where a new scan of `rel` should start: the last position a running scan reported
    /// (synchronized scans), or 0.
    pub(crate) fn sync_scan_start(&self, rel: RelFileNumber, nblocks: BlockNumber) -> BlockNumber {
        let m = self.sync_scans.lock().expect("poisoned");
        m.get(&rel).copied().filter(|&b| b < nblocks).unwrap_or(0)
    }

    /// Records a scan's position (at most [`SYNC_SCAN_MAX_RELATIONS`] relations are tracked).
    pub(crate) fn sync_scan_report(&self, rel: RelFileNumber, block: BlockNumber) {
        let mut m = self.sync_scans.lock().expect("poisoned");
        if m.len() >= SYNC_SCAN_MAX_RELATIONS && !m.contains_key(&rel) {
            m.clear();
        }
        m.insert(rel, block);
    }

    /// Like [`BufferPool::read_buffer`], for a block just taken from the free space map: if it
    /// is one of the blocks extended for others and never handed out before, it is known to be
    /// zeros on disk, so a miss fills the buffer with zeros instead of reading the file (seed
    /// 000's extra pages would otherwise each cost a read).
    pub fn read_buffer_taken<'a>(
        &'a self,
        pins: &'a Pins,
        rel: RelFileNumber,
        fork: ForkNumber,
        block: BlockNumber,
        strategy: Option<&mut Strategy>,
    ) -> Result<Buffer<'a>> {
        let fresh = {
            let ext = self.extension_lock(rel);
            let mut f = ext.fresh.lock().expect("poisoned");
            let taken = remove_range(&mut f, block..block + 1);
            self.fresh_blocks.fetch_sub(taken, Ordering::AcqRel);
            taken > 0
        };
        if !fresh || fork != ForkNumber::Main {
            return self.read_buffer(pins, rel, fork, block, strategy);
        }
        let ctx = Self::io_context(strategy.as_deref());
        let (buf, staged) = self.stage_read(pins, rel, fork, block, strategy)?;
        match staged {
            Staged::Hit => {}
            Staged::Foreign => {
                self.wait_valid(&buf, ctx)?;
            }
            Staged::Mine => {
                // SAFETY: we hold IO_IN_PROGRESS on a buffer that is not valid.
                unsafe { std::ptr::write_bytes(self.page_ptr(buf.id()), 0, self.block_size) };
                self.end_io(buf.id(), false, true, false);
            }
        }
        Ok(buf)
    }

    /// Waits until no I/O is in progress on a pinned buffer (without reading it).
    pub(crate) fn wait_valid_quiet(&self, buf: &Buffer<'_>) {
        while self.desc(buf.id()).state.load(Ordering::Acquire) & IO_IN_PROGRESS != 0 {
            self.wait_io(buf.id());
        }
    }

    /// Pins block `block` without reading it from disk: a page that recovery is about to
    /// overwrite entirely (full-page image, or a record that initializes the page). If the
    /// block is not in the pool it comes back zeroed and valid. The caller holds the only
    /// access to the relation (recovery is single-threaded).
    pub fn read_buffer_for_overwrite<'a>(
        &'a self,
        pins: &'a Pins,
        rel: RelFileNumber,
        fork: ForkNumber,
        block: BlockNumber,
    ) -> Result<Buffer<'a>> {
        let tag = BufferTag { rel, fork, block };
        let h = HashedTag::new(tag);
        {
            let part = self.partition(&h).read();
            if let Some(&id) = part.get(&h) {
                let buf = pins.pin(self, id, false);
                drop(part);
                if self.start_io(id, true) {
                    // SAFETY: IO_IN_PROGRESS held on a buffer that is not valid.
                    unsafe { std::ptr::write_bytes(self.page_ptr(id), 0, self.block_size) };
                    self.end_io(id, false, true, false);
                }
                return Ok(buf);
            }
        }
        let victim = self.get_victim(pins, None)?;
        let mut part = self.partition(&h).write();
        assert!(!part.contains_key(&h), "recovery reads are single-threaded");
        let d = self.desc(victim.id());
        let s = d.lock_header();
        d.set_tag(tag);
        part.insert(h, victim.id());
        d.unlock_header((s & !(LOCKED | USAGE_MASK)) | TAG_VALID | IO_IN_PROGRESS | USAGE_ONE);
        drop(part);
        // SAFETY: IO_IN_PROGRESS held on a buffer that is not valid.
        unsafe { std::ptr::write_bytes(self.page_ptr(victim.id()), 0, self.block_size) };
        self.end_io(victim.id(), false, true, false);
        Ok(victim)
    }

    /// Finishes a read that another session may be doing: wait for it, or do it ourselves.
    fn complete_read(&self, buf: &Buffer<'_>, ctx: IoContext) -> Result<()> {
        if self.start_io(buf.id(), true) {
            self.read_into(buf, ctx)
        } else {
            Ok(())
        }
    }

    /// Reads the page from disk; the caller holds IO_IN_PROGRESS on the buffer.
    fn read_into(&self, buf: &Buffer<'_>, ctx: IoContext) -> Result<()> {
        let id = buf.id();
        let tag = self.desc(id).tag();
        // SAFETY: we hold IO_IN_PROGRESS and the buffer is not VALID, so no one else reads or
        // writes its memory until end_io (they wait in start_io or on the mapping).
        let page = unsafe { std::slice::from_raw_parts_mut(self.page_ptr(id), self.block_size) };
        let t0 = Instant::now();
        let read = self.smgr.read(tag.rel, tag.fork, tag.block, page);
        let was_read = read.is_ok();
        let mut r = read.and_then(|_| page::verify_with(page, tag.block, || self.smgr.display_name(tag.rel, tag.fork)));
        if r.is_err() && (tag.fork == ForkNumber::Fsm || (tag.fork == ForkNumber::Vm && was_read)) {
            // The free space map is a hint and not WAL-logged: a torn or unreadable FSM page
            // reads as empty (PostgreSQL's RBM_ZERO_ON_ERROR for the FSM). A torn visibility
            // map page reads as zeros, marking nothing all-visible, which is always safe
            // (`access::vm` invariant 4); one that could not be read at all is an error, since
            // a clear made to a zeroed copy would never reach the page on disk.
            page.fill(0);
            r = Ok(());
        }
        match r {
            Ok(()) => {
                stats::count_io(ctx, IoOp::Read, 1, self.block_size as u64, t0.elapsed().as_nanos() as u64);
                self.end_io(id, false, true, false);
                Ok(())
            }
            Err(e) => {
                self.end_io(id, false, false, true);
                Err(e)
            }
        }
    }

    /// Sets IO_IN_PROGRESS, waiting for another I/O on the buffer first. Returns false if the
    /// work is already done (input: VALID; output: not DIRTY).
    pub(crate) fn start_io(&self, id: BufferId, for_input: bool) -> bool {
        let d = self.desc(id);
        loop {
            let s = d.lock_header();
            if s & IO_IN_PROGRESS == 0 {
                let done = if for_input { s & VALID != 0 } else { s & DIRTY == 0 };
                if done {
                    d.unlock_header(s & !LOCKED);
                    return false;
                }
                d.unlock_header((s & !LOCKED) | IO_IN_PROGRESS);
                return true;
            }
            d.unlock_header(s & !LOCKED);
            self.wait_io(id);
        }
    }

    fn wait_io(&self, id: BufferId) {
        let d = self.desc(id);
        // Announce the wait (desc invariant 5); if the I/O ended meanwhile, nothing to wait for.
        let mut s = d.state.load(Ordering::Acquire);
        loop {
            if s & IO_IN_PROGRESS == 0 {
                return;
            }
            if s & IO_WAITERS != 0 {
                break;
            }
            if s & LOCKED != 0 {
                s = d.wait_header_unlocked();
                continue;
            }
            match d.state.compare_exchange_weak(s, s | IO_WAITERS, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(cur) => s = cur,
            }
        }
        // SAFETY: key is the descriptor's address, valid for the pool's life; closures are
        // trivial and do not re-enter the parking lot.
        unsafe {
            parking_lot_core::park(
                d.io_key(),
                || d.state.load(Ordering::Acquire) & IO_IN_PROGRESS != 0,
                || {},
                |_, _| {},
                parking_lot_core::DEFAULT_PARK_TOKEN,
                Some(Instant::now() + Duration::from_millis(100)),
            );
        }
    }

    /// Ends an I/O: clears IO_IN_PROGRESS, sets VALID / clears DIRTY / sets IO_ERROR, wakes
    /// waiters.
    pub(crate) fn end_io(&self, id: BufferId, clear_dirty: bool, set_valid: bool, error: bool) {
        let d = self.desc(id);
        let mut s = d.lock_header();
        debug_assert!(s & IO_IN_PROGRESS != 0);
        let waiters = s & IO_WAITERS != 0;
        s &= !(LOCKED | IO_IN_PROGRESS | IO_ERROR | IO_WAITERS);
        if clear_dirty {
            s &= !DIRTY;
        }
        if set_valid {
            s |= VALID;
        }
        if error {
            s |= IO_ERROR;
        }
        d.unlock_header(s);
        if waiters {
            // SAFETY: unpark only touches the parking lot's queue for this key.
            unsafe {
                parking_lot_core::unpark_all(d.io_key(), parking_lot_core::DEFAULT_UNPARK_TOKEN);
            }
        }
    }

    /// A pinned, clean, unmapped buffer (seed 000's split of BufferAlloc: no mapping or
    /// relation lock is held while the victim is found and cleaned).
    pub(crate) fn get_victim<'a>(&'a self, pins: &'a Pins, mut strategy: Option<&mut Strategy>) -> Result<Buffer<'a>> {
        let deadline = Instant::now() + ALL_PINNED_TIMEOUT;
        loop {
            let (id, from_ring) = match strategy.as_deref_mut().and_then(|s| s.next_candidate(self)) {
                Some(id) => (id, true),
                None => match self.pop_free().or_else(|| self.clock_sweep()) {
                    Some(id) => (id, false),
                    None => {
                        if Instant::now() > deadline {
                            return Err(PgError::new(sqlstate::INSUFFICIENT_RESOURCES, "no unpinned buffers available").with_hint(
                                format!("shared_buffers has {} buffers; raise it or lower the number of sessions.", self.nbuffers),
                            ));
                        }
                        std::thread::sleep(Duration::from_micros(200));
                        continue;
                    }
                },
            };
            // The candidate carries one shared pin taken by the sweep/ring; account it.
            let buf = pins.adopt(self, id);
            let ctx = Self::io_context(strategy.as_deref());
            let s = self.desc(id).state.load(Ordering::Acquire);
            if s & DIRTY != 0 {
                if let Some(st) = strategy.as_deref_mut() {
                    if from_ring && st.reject_dirty() {
                        st.note_rejected();
                        continue;
                    }
                }
                // A BULKWRITE ring buffer whose page was queued for write-back: wait for the
                // worker instead of writing (seed 002: bulk writes bounded by the dirty
                // buffers outstanding, not written by the session at a fixed ring distance).
                let queued = from_ring
                    && strategy.as_deref().is_some_and(|st| st.kind() == super::StrategyKind::BulkWrite)
                    && self.write_back.enabled();
                if queued {
                    self.write_back.wait_clean(self, id);
                }
                if self.desc(id).state.load(Ordering::Acquire) & DIRTY != 0 {
                    if queued {
                        self.write_back.session_writes.fetch_add(1, Ordering::Relaxed);
                    }
                    self.flush_buffer(&buf, ctx)?;
                }
            }
            if self.invalidate_victim(id) {
                let op = if from_ring { IoOp::Reuse } else { IoOp::Eviction };
                if s & TAG_VALID != 0 {
                    stats::count_io(ctx, op, 1, 0, 0);
                }
                if let Some(st) = strategy.as_deref_mut() {
                    st.record(id, from_ring);
                }
                return Ok(buf);
            }
            // Someone pinned or dirtied it meanwhile: drop our pin and look again.
        }
    }

    /// Removes the buffer's mapping if we hold the only pin and it is clean.
    fn invalidate_victim(&self, id: BufferId) -> bool {
        let d = self.desc(id);
        let s0 = d.state.load(Ordering::Acquire);
        if s0 & TAG_VALID == 0 {
            let s = d.lock_header();
            if refcount(s) != 1 || s & (TAG_VALID | IO_IN_PROGRESS) != 0 {
                d.unlock_header(s & !LOCKED);
                return false;
            }
            d.unlock_header(s & !(LOCKED | VALID | DIRTY | IO_ERROR | USAGE_MASK | PERMANENT));
            return true;
        }
        let old = HashedTag::new(d.tag());
        let mut part = self.partition(&old).write();
        let s = d.lock_header();
        if refcount(s) != 1 || s & (DIRTY | IO_IN_PROGRESS) != 0 {
            d.unlock_header(s & !LOCKED);
            return false;
        }
        let removed = part.remove(&old);
        debug_assert_eq!(removed, Some(id));
        d.set_tag(BufferTag::INVALID);
        d.unlock_header(s & !(LOCKED | TAG_VALID | VALID | DIRTY | IO_ERROR | USAGE_MASK | PERMANENT));
        true
    }

    /// The newest buffer on the free list that is still unmapped and unpinned, pinned for the
    /// caller (one shared pin, as the sweep's). A listed buffer the sweep took and mapped
    /// meanwhile is dropped from the list and the next one tried, as PostgreSQL's
    /// StrategyGetBuffer does.
    fn pop_free(&self) -> Option<BufferId> {
        if self.free_len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut free = self.free.lock().expect("buffer free list");
        while let Some(id) = free.pop() {
            if self.try_pin_unpinned(id) {
                if self.desc(id).state.load(Ordering::Acquire) & TAG_VALID == 0 {
                    self.free_len.store(free.len() as u32, Ordering::Relaxed);
                    self.buffers_alloc.fetch_add(1, Ordering::Relaxed);
                    return Some(id);
                }
                self.unpin_shared(id);
            }
        }
        self.free_len.store(0, Ordering::Relaxed);
        None
    }

    /// The bounded clock sweep. Returns a buffer with one shared pin taken for the caller, or
    /// None if every buffer examined was pinned.
    ///
    /// Bound: at most `max_examined` buffers per call (setting
    /// `heapstore.clock_sweep_max_examined`), whatever the usage counts. Each unpinned buffer
    /// passed over has its usage count decremented, as in PostgreSQL; when the bound is reached
    /// without finding a zero, the unpinned buffer with the lowest usage count seen is taken.
    /// So seed 004's search over tens of millions of hot buffers cannot happen: the cost of a
    /// victim is O(max_examined), not O(shared_buffers × max usage).
    pub(crate) fn clock_sweep(&self) -> Option<BufferId> {
        self.clock_sweep_counted().0
    }

    /// The clock sweep, also returning how many buffers it examined (for `bench victim`).
    pub fn clock_sweep_counted(&self) -> (Option<BufferId>, u64) {
        let n = self.nbuffers as u64;
        let bound = self.max_examined.min(n * (MAX_USAGE + 1));
        let mut best: Option<(u64, BufferId)> = None;
        let mut examined = 0u64;
        while examined < bound {
            let id = (self.hand.fetch_add(1, Ordering::Relaxed) % n) as BufferId;
            examined += 1;
            let d = self.desc(id);
            let s = d.state.load(Ordering::Relaxed);
            if s & LOCKED != 0 || refcount(s) != 0 {
                continue;
            }
            let u = usage(s);
            if u == 0 {
                if self.try_pin_unpinned(id) {
                    stats::count_victim_search(examined);
                    self.buffers_alloc.fetch_add(1, Ordering::Relaxed);
                    return (Some(id), examined);
                }
                continue;
            }
            if d.state.compare_exchange(s, s - USAGE_ONE, Ordering::Relaxed, Ordering::Relaxed).is_ok()
                && best.is_none_or(|(bu, _)| u - 1 < bu)
            {
                best = Some((u - 1, id));
            }
        }
        stats::count_victim_search(examined);
        let got = best.and_then(|(_, id)| self.try_pin_unpinned(id).then_some(id));
        if got.is_some() {
            self.buffers_alloc.fetch_add(1, Ordering::Relaxed);
        }
        (got, examined)
    }

    /// Drops a pin taken by [`BufferPool::clock_sweep_counted`] (for `bench victim`).
    pub fn release_sweep_pin(&self, id: BufferId) {
        self.unpin_shared(id);
    }

    /// Raises every buffer's usage count to the maximum, as a hot workload would (for
    /// `bench victim`).
    pub fn heat_all(&self) {
        for d in self.descs.iter() {
            let mut s = d.state.load(Ordering::Relaxed);
            loop {
                if s & LOCKED != 0 {
                    s = d.wait_header_unlocked();
                }
                let n = (s & !USAGE_MASK) | (MAX_USAGE << USAGE_SHIFT);
                match d.state.compare_exchange_weak(s, n, Ordering::AcqRel, Ordering::Relaxed) {
                    Ok(_) => break,
                    Err(c) => s = c,
                }
            }
        }
    }

    /// Where the clock hand points now (the background writer cleans ahead of it).
    pub(crate) fn clock_hand(&self) -> u64 {
        self.hand.load(Ordering::Relaxed)
    }

    /// Pins buffer `id` if it still holds `tag`, without raising its usage count (for the
    /// write-back worker: a queued page must stay reusable by its session's ring).
    pub(crate) fn pin_if_tag<'a>(&'a self, pins: &'a Pins, id: BufferId, tag: BufferTag) -> Option<Buffer<'a>> {
        let d = self.desc(id);
        let mut s = d.state.load(Ordering::Relaxed);
        loop {
            if s & LOCKED != 0 {
                s = d.wait_header_unlocked();
            }
            if s & TAG_VALID == 0 {
                return None;
            }
            match d.state.compare_exchange_weak(s, s + REFCOUNT_ONE, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => break,
                Err(cur) => s = cur,
            }
        }
        // Pinned, the buffer cannot be given another tag; it may have had one before the pin.
        let buf = pins.adopt(self, id);
        (d.tag() == tag).then_some(buf)
    }

    /// Pins a buffer only if no one has it pinned (for victims).
    pub(crate) fn try_pin_unpinned(&self, id: BufferId) -> bool {
        let d = self.desc(id);
        let s = d.state.load(Ordering::Relaxed);
        s & LOCKED == 0 && refcount(s) == 0 && d.state.compare_exchange(s, s + REFCOUNT_ONE, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Writes a dirty buffer (caller holds a pin) and, in the same `pwritev`, the dirty buffers
    /// of the blocks that follow it in the file (write combining, up to `io_combine_limit`
    /// blocks). Returns how many buffers it wrote (0 if the buffer was already clean).
    ///
    /// A neighbour joins the write only if it can be taken without waiting: it is mapped,
    /// valid, dirty, unpinned, not recently used (usage count ≤ 1, so a hot page is not written
    /// again and again), its content lock is free for sharing and no I/O is in progress on it.
    /// So the only wait here is for the first buffer's own content lock and I/O, as without
    /// combining; a caller that holds other content locks cannot deadlock through a neighbour.
    /// Each page is checksummed in a private copy, under its shared content lock (no one can
    /// change it meanwhile: changes need the exclusive lock), and the WAL is flushed up to the
    /// highest page LSN of the run before the write (WAL before data).
    pub fn flush_buffer(&self, buf: &Buffer<'_>, ctx: IoContext) -> Result<u32> {
        self.flush_buffer_inner(buf, ctx, true)
    }

    /// [`BufferPool::flush_buffer`] that gives up (returning 0) instead of waiting when the
    /// buffer's content lock is taken: for the write-back worker, which must never wait for a
    /// content lock (its waiters may hold an extension lock that the lock's holder wants).
    pub(crate) fn try_flush_buffer(&self, buf: &Buffer<'_>, ctx: IoContext) -> Result<u32> {
        self.flush_buffer_inner(buf, ctx, false)
    }

    fn flush_buffer_inner(&self, buf: &Buffer<'_>, ctx: IoContext, wait: bool) -> Result<u32> {
        let id = buf.id();
        let d = self.desc(id);
        if wait {
            d.content_lock.acquire(LWLockMode::Shared);
        } else if !d.content_lock.try_acquire(LWLockMode::Shared) {
            return Ok(0);
        }
        if !self.start_io(id, false) {
            d.content_lock.release(LWLockMode::Shared);
            return Ok(0);
        }
        let tag = d.tag();
        let limit = self.scan_settings().io_combine_limit.clamp(1, MAX_WRITE_COMBINE);
        let mut run: [BufferId; MAX_WRITE_COMBINE] = [id; MAX_WRITE_COMBINE];
        let mut n = 1usize;
        while n < limit {
            let Some(block) = tag.block.checked_add(n as u32) else { break };
            match self.claim_neighbour(BufferTag { block, ..tag }) {
                Some(nid) => run[n] = nid,
                None => break,
            }
            n += 1;
        }
        let run = &run[..n];
        let r = self.write_run(run, tag, ctx);
        for (i, &b) in run.iter().enumerate() {
            self.end_io(b, r.is_ok(), false, r.is_err());
            self.desc(b).content_lock.release(LWLockMode::Shared);
            if i > 0 {
                self.unpin_shared(b);
            }
        }
        r.map(|()| n as u32)
    }

    /// The buffer of `tag` pinned, share-locked and with IO_IN_PROGRESS set for writing, if it
    /// is dirty and can be had without waiting (see [`BufferPool::flush_buffer`]).
    fn claim_neighbour(&self, tag: BufferTag) -> Option<BufferId> {
        let h = HashedTag::new(tag);
        let id = *self.partition(&h).read().get(&h)?;
        let d = self.desc(id);
        let s = d.state.load(Ordering::Relaxed);
        let want = DIRTY | VALID | TAG_VALID;
        if s & (want | IO_IN_PROGRESS) != want || usage(s) > 1 || !self.try_pin_unpinned(id) {
            return None;
        }
        // Pinned, the buffer cannot be given another tag; it may have had one before the pin.
        if d.tag() != tag || !d.content_lock.try_acquire(LWLockMode::Shared) {
            self.unpin_shared(id);
            return None;
        }
        let s = d.lock_header();
        if s & (IO_IN_PROGRESS | DIRTY) != DIRTY {
            d.unlock_header(s & !LOCKED);
            d.content_lock.release(LWLockMode::Shared);
            self.unpin_shared(id);
            return None;
        }
        d.unlock_header((s & !LOCKED) | IO_IN_PROGRESS);
        Some(id)
    }

    /// Writes the buffers of `run` (consecutive blocks from `first`, each share-locked with
    /// IO_IN_PROGRESS held by us) in one vectored write, WAL first.
    ///
    /// Buffered, the pages go to the kernel straight from the pool, each as three pieces: the
    /// bytes before its checksum field, the checksum computed for it here, the bytes after. No
    /// page is copied: under the shared content lock no one can change it (every change takes
    /// the exclusive lock, and there are no hint-bit writes under a shared lock). With
    /// `io_direct`, whose buffers must be aligned, each page is checksummed in an aligned copy.
    fn write_run(&self, run: &[BufferId], first: BufferTag, ctx: IoContext) -> Result<()> {
        let bs = self.block_size;
        let n = run.len();
        debug_assert!(n <= MAX_WRITE_COMBINE);
        // SAFETY (for each page slice below): we hold the buffer's content lock shared and its
        // IO_IN_PROGRESS until the write is done, so no one writes to the page meanwhile.
        let page = |i: usize| unsafe { std::slice::from_raw_parts(self.page_ptr(run[i]), bs) };
        let mut sums = [[0u8; 4]; MAX_WRITE_COMBINE];
        let mut max_lsn = 0;
        for (i, sum) in sums.iter_mut().enumerate().take(n) {
            debug_assert_eq!(self.desc(run[i]).tag(), BufferTag { block: first.block + i as u32, ..first });
            debug_assert!(self.desc(run[i]).state.load(Ordering::Relaxed) & IO_IN_PROGRESS != 0);
            let p = page(i);
            *sum = if page::is_new(p) {
                p[8..12].try_into().expect("4 bytes")
            } else {
                page::checksum(p, first.block + i as u32).to_le_bytes()
            };
            max_lsn = max_lsn.max(page::lsn(p));
        }
        if let Some(wal) = self.wal.get() {
            // After a PANIC nothing more is written (critical section invariant 3), whatever
            // the page's LSN.
            wal.check_poison()?;
            if max_lsn > wal.flushed_lsn() {
                wal.flush(max_lsn)?;
            }
        }
        if first.fork == ForkNumber::Main {
            self.end_fresh(first.rel, first.block..first.block + n as u32);
        }
        let t0 = Instant::now();
        let r = if self.smgr.io_direct() {
            SCRATCH.with(|cell| {
                let mut slot = cell.borrow_mut();
                if slot.as_ref().is_none_or(|b| b.len() < n * bs) {
                    *slot = Some(AlignedBuf::zeroed((n * bs).max(MAX_WRITE_COMBINE * 8192)));
                }
                let scratch = &mut slot.as_mut().expect("set above")[..n * bs];
                for (i, copy) in scratch.chunks_exact_mut(bs).enumerate() {
                    copy.copy_from_slice(page(i));
                    copy[8..12].copy_from_slice(&sums[i]);
                }
                let pages: [&[u8]; MAX_WRITE_COMBINE] = std::array::from_fn(|i| if i < n { &scratch[i * bs..(i + 1) * bs] } else { &[] });
                self.smgr.writev(first.rel, first.fork, first.block, &pages[..n])
            })
        } else {
            let parts: [&[u8]; 3 * MAX_WRITE_COMBINE] = std::array::from_fn(|k| {
                let i = k / 3;
                if i >= n {
                    return &[][..];
                }
                match k % 3 {
                    0 => &page(i)[..8],
                    1 => &sums[i][..],
                    _ => &page(i)[12..],
                }
            });
            self.smgr.writev_parts(first.rel, first.fork, first.block, n, &parts[..3 * n])
        };
        if r.is_ok() {
            stats::count_io(ctx, IoOp::Write, n as u64, (n * bs) as u64, t0.elapsed().as_nanos() as u64);
            if cfg!(debug_assertions) {
                for (i, sum) in sums.iter().enumerate().take(n) {
                    let p = page(i);
                    debug_assert!(
                        page::is_new(p) || page::checksum(p, first.block + i as u32).to_le_bytes() == *sum,
                        "page changed during its write"
                    );
                }
            }
        }
        r
    }

    /// Blocks about to be written stop being fresh (`ExtensionLock::fresh`): their data may be
    /// on disk from now on. Called before the write, while the buffers are still mapped, so no
    /// one can take them as fresh and zero-fill a buffer in between.
    fn end_fresh(&self, rel: RelFileNumber, blocks: std::ops::Range<BlockNumber>) {
        if self.fresh_blocks.load(Ordering::Acquire) == 0 {
            return;
        }
        let Some(ext) = self.ext_locks.lock().expect("poisoned").get(&rel).cloned() else { return };
        let mut f = ext.fresh.lock().expect("poisoned");
        let removed = remove_range(&mut f, blocks);
        self.fresh_blocks.fetch_sub(removed, Ordering::AcqRel);
    }

    /// The extension lock of a relation.
    pub fn extension_lock(&self, rel: RelFileNumber) -> Arc<ExtensionLock> {
        self.ext_locks
            .lock()
            .expect("poisoned")
            .entry(rel)
            .or_insert_with(|| {
                Arc::new(ExtensionLock {
                    lock: LWLock::new(LWLockClass::RelationExtension),
                    waiters: AtomicU32::new(0),
                    fresh: Mutex::new(Vec::new()),
                })
            })
            .clone()
    }

    /// Extends a fork by up to `n` new zeroed blocks and returns them pinned, valid and
    /// unlocked, in block order.
    ///
    /// Seed 000's order: victims first (pinned, cleaned, unmapped, with no lock held); then,
    /// under the relation's extension lock, only: read nblocks, insert the mappings, mark them
    /// IO_IN_PROGRESS, zero-extend the file; after the lock, zero the memory and mark valid.
    /// Fewer than `n` are returned when the session's pin share does not allow `n`.
    pub fn extend_by<'a>(
        &'a self,
        pins: &'a Pins,
        rel: RelFileNumber,
        fork: ForkNumber,
        n: u32,
        strategy: Option<&mut Strategy>,
    ) -> Result<Vec<Buffer<'a>>> {
        Ok(self.extend_by_with_extra(pins, rel, fork, n, 0, strategy, false)?.map(|(b, _)| b).expect("extends when not yielding"))
    }

    /// As [`BufferPool::extend_by`], and in the same critical section also extends the file by
    /// `extra` more zeroed blocks that get no buffer (a zeroed block on disk is a valid new
    /// page). Returns the pinned buffers and the range of the extra blocks, which the caller
    /// gives to the free space map: when others wait for the extension lock this serves them
    /// without another trip through it (seed 000's extend-by-more, without pinning the extra).
    ///
    /// With `yield_if_busy`, a caller that finds the lock held waits for it to be free and gets
    /// `None` instead of extending, to look in the free space map again first.
    #[allow(clippy::too_many_arguments)]
    pub fn extend_by_with_extra<'a>(
        &'a self,
        pins: &'a Pins,
        rel: RelFileNumber,
        fork: ForkNumber,
        n: u32,
        extra: u32,
        mut strategy: Option<&mut Strategy>,
        yield_if_busy: bool,
    ) -> Result<Option<(Vec<Buffer<'a>>, std::ops::Range<BlockNumber>)>> {
        let ext = self.extension_lock(rel);
        if yield_if_busy && ext.lock.is_locked() {
            // Someone is extending, probably by extra pages for waiters like us: wait until
            // they are done, then let the caller look in the free space map first (PostgreSQL
            // re-checks the FSM after waiting for the extension lock, for the same reason).
            self.acquire_extension_lock(&ext, rel, fork);
            ext.lock.release(LWLockMode::Exclusive);
            return Ok(None);
        }
        let room = pins.limit().saturating_sub(pins.held()).max(1) as u32;
        let n = n.clamp(1, MAX_EXTEND_BY).min(room);
        let ctx = Self::io_context(strategy.as_deref());
        let mut victims = Vec::with_capacity(n as usize);
        for _ in 0..n {
            victims.push(self.get_victim(pins, strategy.as_deref_mut())?);
        }
        self.acquire_extension_lock(&ext, rel, fork);
        let r = self.extend_locked(&victims, extra, rel, fork, ctx);
        ext.lock.release(LWLockMode::Exclusive);
        let first = r?;
        let extra_blocks = first + n..first + n + extra;
        if extra > 0 {
            ext.fresh.lock().expect("poisoned").push(extra_blocks.clone());
            self.fresh_blocks.fetch_add(extra as u64, Ordering::AcqRel);
        }
        for (i, b) in victims.iter().enumerate() {
            debug_assert_eq!(self.desc(b.id()).tag().block, first + i as u32);
            // SAFETY: we hold IO_IN_PROGRESS on a buffer that is not VALID: no one else touches
            // its memory (they wait for the I/O).
            unsafe { std::ptr::write_bytes(self.page_ptr(b.id()), 0, self.block_size) };
            self.end_io(b.id(), false, true, false);
        }
        Ok(Some((victims, extra_blocks)))
    }

    /// Extends `rel`'s main fork by `n` zeroed blocks that no buffer maps, for the
    /// pre-extender (`access::heap::extend`): they are fresh (`ExtensionLock::fresh`) until
    /// taken or written, and the caller records them in the free space map. The extension
    /// lock is held only while the file grows. Returns the new blocks.
    pub fn extend_fresh(&self, rel: RelFileNumber, n: u32) -> Result<std::ops::Range<BlockNumber>> {
        let ext = self.extension_lock(rel);
        self.acquire_extension_lock(&ext, rel, ForkNumber::Main);
        let r = self.extend_locked(&[], n, rel, ForkNumber::Main, IoContext::BulkWrite);
        ext.lock.release(LWLockMode::Exclusive);
        let first = r?;
        let blocks = first..first + n;
        let mut f = ext.fresh.lock().expect("poisoned");
        match f.last_mut() {
            Some(last) if last.end == first => last.end = blocks.end,
            _ => f.push(blocks.clone()),
        }
        self.fresh_blocks.fetch_add(n as u64, Ordering::AcqRel);
        Ok(blocks)
    }

    /// Blocks of `rel` extended for others and not yet taken or written (`ExtensionLock::fresh`).
    pub fn fresh_count(&self, rel: RelFileNumber) -> u64 {
        if self.fresh_blocks.load(Ordering::Acquire) == 0 {
            return 0;
        }
        let ext = self.extension_lock(rel);
        let f = ext.fresh.lock().expect("poisoned");
        f.iter().map(|r| (r.end - r.start) as u64).sum()
    }

    /// Takes a relation's extension lock, counted as a waiter while waiting (the count sizes
    /// the extra pages the holder adds), logging waits beyond deadlock_timeout if asked.
    fn acquire_extension_lock(&self, ext: &ExtensionLock, rel: RelFileNumber, fork: ForkNumber) {
        ext.waiters.fetch_add(1, Ordering::Relaxed);
        if self.log_lock_waits {
            let name = self.smgr.display_name(rel, fork);
            ext.lock.acquire_reporting(LWLockMode::Exclusive, self.deadlock_timeout, &mut |d| {
                eprintln!("LOG:  still waiting for extension lock on relation {name} after {:.1} ms", d.as_secs_f64() * 1e3);
            });
        } else {
            ext.lock.acquire(LWLockMode::Exclusive);
        }
        ext.waiters.fetch_sub(1, Ordering::Relaxed);
    }

    /// The part of `extend_by` under the extension lock. Returns the first new block.
    fn extend_locked(
        &self,
        victims: &[Buffer<'_>],
        extra: u32,
        rel: RelFileNumber,
        fork: ForkNumber,
        ctx: IoContext,
    ) -> Result<BlockNumber> {
        let first = self.smgr.nblocks(rel, fork)?;
        let mapped = victims.len() as u32;
        let n = mapped + extra;
        for (i, b) in victims.iter().enumerate() {
            let tag = BufferTag { rel, fork, block: first + i as u32 };
            let h = HashedTag::new(tag);
            let mut part = self.partition(&h).write();
            if part.contains_key(&h) {
                drop(part);
                self.unmap_new(&victims[..i]);
                return Err(PgError::new(
                    sqlstate::DATA_CORRUPTED,
                    format!("unexpected data beyond EOF in block {} of relation {}", tag.block, self.smgr.display_name(rel, fork)),
                ));
            }
            let d = self.desc(b.id());
            let s = d.lock_header();
            d.set_tag(tag);
            part.insert(h, b.id());
            d.unlock_header((s & !(LOCKED | USAGE_MASK)) | TAG_VALID | IO_IN_PROGRESS | USAGE_ONE);
        }
        let t0 = Instant::now();
        if let Err(e) = self.smgr.zero_extend(rel, fork, first, n) {
            self.unmap_new(victims);
            return Err(e);
        }
        debug_assert!(mapped <= n);
        stats::count_io(ctx, IoOp::Extend, n as u64, n as u64 * self.block_size as u64, t0.elapsed().as_nanos() as u64);
        if fork == ForkNumber::Main {
            self.extended_main_blocks.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(first)
    }

    /// Undoes the mappings of a failed extension: the buffers go back unmapped.
    fn unmap_new(&self, bufs: &[Buffer<'_>]) {
        for b in bufs {
            let d = self.desc(b.id());
            let h = HashedTag::new(d.tag());
            let mut part = self.partition(&h).write();
            part.remove(&h);
            let s = d.lock_header();
            d.set_tag(BufferTag::INVALID);
            d.unlock_header(s & !(LOCKED | TAG_VALID | VALID | IO_IN_PROGRESS | IO_WAITERS));
            drop(part);
            // SAFETY: as in end_io.
            unsafe { parking_lot_core::unpark_all(d.io_key(), parking_lot_core::DEFAULT_UNPARK_TOKEN) };
        }
    }

    /// Writes every dirty buffer (of `rel` if given). Used at shutdown and by commits of
    /// relations that skip the WAL.
    pub fn flush_all(&self, pins: &Pins, rel: Option<RelFileNumber>) -> Result<u64> {
        let mut written = 0;
        for id in 0..self.nbuffers {
            let s = self.desc(id).state.load(Ordering::Relaxed);
            if s & (DIRTY | TAG_VALID) != (DIRTY | TAG_VALID) {
                continue;
            }
            let buf = pins.pin(self, id, true);
            let s = self.desc(id).state.load(Ordering::Acquire);
            if s & (DIRTY | VALID | TAG_VALID) != (DIRTY | VALID | TAG_VALID) {
                continue;
            }
            if rel.is_some_and(|r| self.desc(id).tag().rel != r) {
                continue;
            }
            written += self.flush_buffer(&buf, IoContext::Normal)? as u64;
        }
        Ok(written)
    }

    /// Buffers that are dirty now (a checkpoint's work list).
    pub fn dirty_buffer_ids(&self) -> Vec<BufferId> {
        (0..self.nbuffers).filter(|&id| self.desc(id).state.load(Ordering::Relaxed) & (DIRTY | TAG_VALID) == (DIRTY | TAG_VALID)).collect()
    }

    /// Writes buffer `id` if it is still valid and dirty, combined with dirty neighbours as
    /// [`BufferPool::flush_buffer`]; returns how many buffers it wrote.
    pub fn flush_buffer_id(&self, pins: &Pins, id: BufferId) -> Result<u32> {
        let buf = pins.pin(self, id, true);
        let s = self.desc(id).state.load(Ordering::Acquire);
        if s & (DIRTY | VALID | TAG_VALID) != (DIRTY | VALID | TAG_VALID) {
            return Ok(0);
        }
        self.flush_buffer(&buf, IoContext::Normal)
    }

    /// Forgets every buffer of a relation without writing it (DROP, TRUNCATE, crash reset).
    /// No one may hold a pin on them: the caller holds the relation exclusively.
    pub fn drop_relation_buffers(&self, rel: RelFileNumber) {
        let mut freed = Vec::new();
        for id in 0..self.nbuffers {
            let d = self.desc(id);
            let s = d.state.load(Ordering::Acquire);
            if s & TAG_VALID == 0 {
                continue;
            }
            let t = self.tag_locked(id);
            if t.rel != rel {
                continue;
            }
            let h = HashedTag::new(t);
            // A victim search elsewhere may hold a transient pin; wait for it (bounded).
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let mut part = self.partition(&h).write();
                let s = d.lock_header();
                if s & TAG_VALID == 0 || d.tag() != t {
                    d.unlock_header(s & !LOCKED);
                    break;
                }
                if refcount(s) != 0 {
                    d.unlock_header(s & !LOCKED);
                    drop(part);
                    assert!(Instant::now() < deadline, "buffer {id} of dropped relation {} stays pinned", rel.0);
                    std::thread::yield_now();
                    continue;
                }
                part.remove(&h);
                d.set_tag(BufferTag::INVALID);
                d.unlock_header(s & !(LOCKED | TAG_VALID | VALID | DIRTY | IO_ERROR | USAGE_MASK | PERMANENT));
                freed.push(id);
                break;
            }
        }
        if !freed.is_empty() {
            let mut free = self.free.lock().expect("buffer free list");
            free.extend(freed.into_iter().rev());
            // A buffer listed before and taken by the sweep since may be listed again now:
            // past the pool's size, keep each buffer's newest entry only, in order, so the
            // list never holds more entries than the pool has buffers.
            if free.len() > self.nbuffers as usize {
                let mut seen = vec![false; self.nbuffers as usize];
                let mut kept: Vec<BufferId> =
                    free.iter().rev().copied().filter(|&id| !std::mem::replace(&mut seen[id as usize], true)).collect();
                kept.reverse();
                *free = kept;
            }
            debug_assert!(free.len() <= self.nbuffers as usize);
            self.free_len.store(free.len() as u32, Ordering::Relaxed);
        }
    }

    /// Buffers currently holding pages of `rel` (for tests and EXPLAIN).
    pub fn count_relation_buffers(&self, rel: RelFileNumber) -> usize {
        (0..self.nbuffers)
            .filter(|&id| {
                let d = self.desc(id);
                d.state.load(Ordering::Acquire) & VALID != 0 && self.tag_locked(id).rel == rel
            })
            .count()
    }

    /// Reads a buffer's tag under its header lock (for callers that hold no pin).
    fn tag_locked(&self, id: BufferId) -> BufferTag {
        let d = self.desc(id);
        let s = d.lock_header();
        let t = d.tag();
        d.unlock_header(s & !LOCKED);
        t
    }

    /// Total shared pins held (0 when every session has released everything).
    pub fn total_pins(&self) -> u64 {
        self.descs.iter().map(|d| refcount(d.state.load(Ordering::Acquire))).sum()
    }

    /// Dirty buffer count.
    pub fn dirty_buffers(&self) -> usize {
        self.descs.iter().filter(|d| d.state.load(Ordering::Relaxed) & DIRTY != 0).count()
    }
}

//! The write-ahead log: record format, insertion, WAL buffers, writing, flushing (group commit),
//! segment files and reading back.
//!
//! # Why it looks like this
//!
//! Seed 001 measured WAL insertion as *the* bottleneck of parallel bulk COPY: with one
//! WALInsertLock every session spent more than half its life waiting for it. The cure, which
//! PostgreSQL 9.4 adopted and this module follows, is to keep almost nothing in the critical
//! section:
//!
//! 1. **Assemble and CRC in session memory** ([`RecordBuilder`]), before any shared lock.
//! 2. **Reserve with one atomic add.** Each record carries its own start position (`lsn`) instead
//!    of PostgreSQL's back-link `xl_prev` (the 2025 pgsql-hackers RFC "Lock-free XLog
//!    Reservation from WAL"), so reserving needs no knowledge of the previous record: it is one
//!    `fetch_add` on the insert position. The lsn is then written into the session's copy of
//!    the record and 8 more bytes of CRC computed — outside any shared lock.
//! 3. **Copy in parallel** into the WAL buffer ring under one of N insertion locks
//!    (`wal_insert_locks`), each advertising how far its insertion has got, so that a flusher
//!    waits only for the insertions before its target ([`Wal::wait_insertions_to_finish`]).
//! 4. **Group commit**: one flusher (the leader, holding WALWrite) writes and syncs everything
//!    inserted so far; the others wait for it — not in the queue for its lock — and return
//!    without a sync of their own when its sync covered them.
//! 5. **Write-behind**: an insertion that crosses a multiple of the write-behind distance
//!    wakes the WAL writer thread, which writes what is finished, so that a loading session
//!    rarely finds the ring full and has to copy WAL to the kernel itself.
//!
//! # Positions
//!
//! WAL positions ([`Lsn`]) are byte offsets in one endless stream, with no page headers: segment
//! file `k` holds positions `k * wal_segment_size ..` and a record may span segments. Records
//! start at multiples of 8.
//!
//! ```text
//!            durable     written, not     copied into the ring,   being copied   free
//!                        yet synced       not yet written
//!   ──────────────────┬──────────────────┬───────────────────────┬──────────────┬────────►
//!                  flushed            written                 finished       reserved
//!                                                       (the lowest position an
//!                                                        insertion in progress has
//!                                                        not copied yet)
//!
//!   flushed ≤ written ≤ finished ≤ reserved;  copied-but-unwritten bytes lie in written .. written + wal_buffers
//!
//!   the ring (wal_buffers bytes; position p lives at p % wal_buffers):
//!     ┌──────────────────────────────────────────────────────────────────┐
//!     │ ...older, already written... │ written ........ reserved │ free  │  (wrapping)
//!     └──────────────────────────────────────────────────────────────────┘
//!     an inserter may copy into position p only when p < written + wal_buffers,
//!     i.e. when the previous occupant of p's ring byte (p − wal_buffers) is on its way to disk.
//! ```
//!
//! `finished` is not stored: it is computed by scanning the insertion slots
//! ([`Wal::wait_insertions_to_finish`]), as PostgreSQL's WaitXLogInsertionsToFinish does.
//!
//! # Invariants (and which lock protects what)
//!
//! 1. `flushed ≤ written ≤ finished ≤ reserved`; all four only grow (a scan of the slots may
//!    return less than the true `finished`, never more).
//! 2. `reserved` is advanced only by `fetch_add`, by a thread that holds an insertion slot's
//!    lock (class `WALInsert`) and has already advertised in that slot a lower bound of the
//!    position it is about to get. So a flusher that reads `reserved` and then scans the slots
//!    sees every insertion that reserved below what it read. (This is why the slot is taken
//!    *before* the add, as in PostgreSQL: reserving first and then waiting for a slot could
//!    leave a reserved-but-invisible insertion behind a slot holder that waits for it.)
//! 3. A slot advertises `IDLE` or a position `P` such that its insertion has copied every byte
//!    it reserved below `P`. It advances only by its owner (the slot lock holder), with release
//!    ordering, after the bytes are in the ring.
//! 4. An inserter copies into ring bytes of positions `p .. q` only for positions it reserved
//!    and only when `written ≥ q − wal_buffers`; it advertises its progress before it waits for
//!    `written` to advance (and helps by writing).
//! 5. `written`, the open segment files and their dirty flags change only under the WALWrite
//!    lock; `written` advances only to a position `≤ finished` (bytes below are final), after
//!    `pwrite` returned. `flushed` advances only under the WALWrite lock, after every segment
//!    written so far is synced (or, with `open_datasync`, as soon as the write returned).
//!    WALWrite is held across `pwrite` and `fsync`, as PostgreSQL's WALWriteLock is: that is
//!    what makes one sync serve everyone queued (group commit).
//! 6. Nobody waits for insertions while holding the WALWrite lock or the segment install lock.
//!    The only lock held while waiting for insertions is the waiter's own slot, and then only
//!    with an advertised position at or above the wait target; so waits always go to strictly
//!    lower positions and cannot form a cycle.
//! 7. Lock order: insertion slot → WALWrite → segment install mutex.
//! 8. A failed fsync poisons the WAL for good (see `writer`): every later insert, write and
//!    flush fails naming the first failure. ENOSPC poisons nothing. A PANIC ([`Wal::panic`],
//!    an error inside a critical section) poisons it the same way, and every data-page write
//!    checks the poison first, so nothing reaches the disk after a PANIC.
//! 9. A segment file appears under its name only complete (temporary file, zero-filled,
//!    fsynced, renamed); after [`Wal::open`] no file after the start segment exists and the
//!    start segment is zero from `start` on, so nothing valid-looking follows new records.
//!
//! # Files
//!
//! - `record`: the record format, [`RecordBuilder`], [`decode`]
//! - `buffers`: the ring
//! - `insert`: insertion slots, [`Wal::insert`], [`Wal::wait_insertions_to_finish`]
//! - `writer`: [`Wal::write_upto`], [`Wal::flush`], poisoning, the WAL writer thread
//! - `segment`: segment names, creation, recycling, fault injection
//! - `reader`: [`WalReader`], which finds the end of valid WAL
//!
//! # Integration hooks (used by the engine on top)
//!
//! [`Wal::mark_redo_point`] (checkpoint: takes every insertion lock, returns the REDO pointer)
//! and [`Wal::insert_if_redo`] (insert only if the REDO pointer is still the one the caller's
//! full-page-image decisions were based on; otherwise decide again).

mod buffers;
mod insert;
pub mod reader;
pub mod record;
pub mod segment;
mod writer;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{sqlstate, PgError, Result};
use crate::lock::{LWLockClass, LWLocked};

use buffers::Ring;
use insert::InsertSlot;
use writer::{FlushWait, Poison, WriterState};

pub use reader::WalReader;
pub use record::{decode, BlockRef, DecodedRecord, PageImage, RecordBuilder, WalCompression};
pub use segment::{parse_segment_name, segment_name, FaultInjector, WAL_DIR};
pub use writer::WalWriterHandle;

/// A WAL position: a byte offset in the WAL stream.
pub type Lsn = u64;

/// PostgreSQL's `%X/%X` spelling of a position.
pub fn lsn_str(lsn: Lsn) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn as u32)
}

pub const DEFAULT_SEGMENT_SIZE: u64 = 16 << 20;
pub const MIN_SEGMENT_SIZE: u64 = 1 << 20;
pub const MAX_SEGMENT_SIZE: u64 = 1 << 30;
pub const DEFAULT_WAL_BUFFERS: usize = 16 << 20;
/// The smallest ring: four 8 kB pages, as PostgreSQL's smallest `wal_buffers`.
pub const MIN_WAL_BUFFERS: usize = 32 << 10;
pub const DEFAULT_INSERT_LOCKS: usize = 8;
pub const MAX_INSERT_LOCKS: usize = 1024;
pub const DEFAULT_WRITER_DELAY: Duration = Duration::from_millis(200);
pub const DEFAULT_RECYCLE_KEEP: usize = 8;

/// `wal_sync_method`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyncMethod {
    /// Write, then `fdatasync` each segment written since the last sync (the default).
    #[default]
    Fdatasync,
    /// Write, then `fsync`.
    Fsync,
    /// Segment files are opened `O_DSYNC`: each write returns when durable; no separate sync.
    OpenDatasync,
}

impl SyncMethod {
    /// The setting's value as PostgreSQL spells it.
    pub fn name(self) -> &'static str {
        match self {
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Fsync => "fsync",
            SyncMethod::OpenDatasync => "open_datasync",
        }
    }

    pub fn parse(s: &str) -> Option<SyncMethod> {
        match s {
            "fdatasync" => Some(SyncMethod::Fdatasync),
            "fsync" => Some(SyncMethod::Fsync),
            "open_datasync" => Some(SyncMethod::OpenDatasync),
            _ => None,
        }
    }
}

/// WAL settings, named after PostgreSQL's.
#[derive(Clone, Debug)]
pub struct WalSettings {
    /// The data directory: WAL segments live in `dir/pg_wal/`, and error messages name them
    /// `pg_wal/<segment>` as PostgreSQL does (its working directory is the data directory).
    pub dir: PathBuf,
    /// `wal_segment_size`: a power of two from 1 MB to 1 GB.
    pub segment_size: u64,
    /// `wal_buffers` in bytes: at least 32 kB, a multiple of 8 kB.
    pub buffers_bytes: usize,
    /// `wal_insert_locks` (PostgreSQL's NUM_XLOGINSERT_LOCKS), 1 ..= 1024.
    pub insert_locks: usize,
    /// `wal_sync_method`.
    pub sync_method: SyncMethod,
    /// The "before" design, for benchmarks: every insert takes one global lock and holds it
    /// through record assembly, CRC, reservation and copy.
    pub single_lock_insert: bool,
    /// `wal_compression`: how block images and bulk-load page data are compressed.
    pub compression: record::WalCompression,
    /// How many segment files [`Wal::recycle_before`] keeps, renamed to future names, for reuse;
    /// beyond that it removes them.
    pub recycle_keep: usize,
    /// Fault injection for tests; `None` in production.
    pub faults: Option<Arc<FaultInjector>>,
    /// The file system the segments live on.
    pub vfs: Arc<dyn crate::storage::Vfs>,
}

impl WalSettings {
    /// Defaults for a data directory.
    pub fn new(dir: impl Into<PathBuf>) -> WalSettings {
        WalSettings {
            dir: dir.into(),
            segment_size: DEFAULT_SEGMENT_SIZE,
            buffers_bytes: DEFAULT_WAL_BUFFERS,
            insert_locks: DEFAULT_INSERT_LOCKS,
            sync_method: SyncMethod::default(),
            single_lock_insert: false,
            compression: record::WalCompression::Off,
            recycle_keep: DEFAULT_RECYCLE_KEEP,
            faults: None,
            vfs: crate::storage::vfs::real(),
        }
    }

    /// The position a brand-new WAL starts at: the start of segment 1, as in PostgreSQL, so
    /// that 0 stays free to mean "no position".
    pub fn initial_lsn(&self) -> Lsn {
        self.segment_size
    }

    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, m));
        let s = self.segment_size;
        if !s.is_power_of_two() || !(MIN_SEGMENT_SIZE..=MAX_SEGMENT_SIZE).contains(&s) {
            return bad(format!("invalid value for parameter \"wal_segment_size\": {s}"))
                .map_err(|e: PgError| e.with_detail("It must be a power of two between 1 MB and 1 GB."));
        }
        let b = self.buffers_bytes;
        if b < MIN_WAL_BUFFERS || b % 8192 != 0 {
            return bad(format!("invalid value for parameter \"wal_buffers\": {b}"))
                .map_err(|e: PgError| e.with_detail("It must be a multiple of 8 kB, at least 32 kB."));
        }
        if !(1..=MAX_INSERT_LOCKS).contains(&self.insert_locks) {
            return bad(format!("invalid value for parameter \"wal_insert_locks\": {}", self.insert_locks));
        }
        Ok(())
    }
}

/// Counters, all cheap relaxed atomics (per insertion slot for the per-record ones, so that
/// counting adds no shared cache line to the insert path).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Records inserted.
    pub records: u64,
    /// Bytes inserted, padding included.
    pub bytes: u64,
    /// `pwrite`/`pwritev` calls and the bytes and time they took.
    pub writes: u64,
    pub write_bytes: u64,
    pub write_ns: u64,
    /// `fsync`/`fdatasync` calls on segment files and the time they took (none with
    /// `open_datasync`, whose writes are synchronous).
    pub fsyncs: u64,
    pub fsync_ns: u64,
    /// `flush` calls.
    pub flush_calls: u64,
    /// Flushes whose target was already durable when called.
    pub flushes_already_done: u64,
    /// Group commit hits: flushes that waited for the WALWrite lock and then found their target
    /// made durable by another session's sync.
    pub group_commit_hits: u64,
    /// Inserts that found the ring full and wrote (or waited for) older WAL first.
    pub buffer_full_waits: u64,
    /// WAL writer rounds woken by write-behind that wrote without syncing.
    pub writer_write_behind: u64,
    pub segments_created: u64,
    /// Of `segments_created`, those the `wal prealloc` thread made ahead of the writer.
    pub segments_created_ahead: u64,
    pub segments_recycled: u64,
    pub segments_removed: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub writes: AtomicU64,
    pub write_bytes: AtomicU64,
    pub write_ns: AtomicU64,
    pub fsyncs: AtomicU64,
    pub fsync_ns: AtomicU64,
    pub flush_calls: AtomicU64,
    pub flushes_already_done: AtomicU64,
    pub group_commit_hits: AtomicU64,
    pub buffer_full_waits: AtomicU64,
    pub writer_write_behind: AtomicU64,
    pub segments_created: AtomicU64,
    pub segments_created_ahead: AtomicU64,
    pub segments_recycled: AtomicU64,
    pub segments_removed: AtomicU64,
}

impl Counters {
    #[inline]
    pub(crate) fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

/// A value alone on its cache line(s), so that hot atomics do not share lines.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Padded<T>(pub T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The write-ahead log. `Send + Sync`: share it (e.g. in an `Arc`) among sessions.
pub struct Wal {
    /// `<data directory>/pg_wal`.
    pub(crate) wal_dir: PathBuf,
    pub(crate) vfs: Arc<dyn crate::storage::Vfs>,
    pub(crate) seg_size: u64,
    pub(crate) sync_method: SyncMethod,
    pub(crate) recycle_keep: usize,
    pub(crate) faults: Option<Arc<FaultInjector>>,
    pub(crate) ring: Ring,
    /// Next free position (invariant 2).
    pub(crate) reserved: Padded<AtomicU64>,
    /// Everything below is written to the segment files (invariant 5).
    pub(crate) written: Padded<AtomicU64>,
    /// Everything below is durable (invariant 5).
    pub(crate) flushed: Padded<AtomicU64>,
    /// The REDO pointer of the checkpoint in progress or last done ([`Wal::mark_redo_point`]).
    pub(crate) redo: AtomicU64,
    /// Insertion slots (one in single-lock mode).
    pub(crate) slots: Box<[InsertSlot]>,
    /// Single-lock mode: the lock is held through assembly and CRC too.
    pub(crate) single_lock: bool,
    /// `wal_compression`, applied by the inserter before assembly.
    pub(crate) compression: record::WalCompression,
    /// The WALWrite lock and what it protects: open segment files.
    pub(crate) writer: LWLocked<WriterState>,
    /// Serializes creating, renaming and removing segment files.
    pub(crate) install: Mutex<()>,
    /// Every segment from the current insert segment through this one exists as a file
    /// (created, recycled or made ahead). Advanced under the install lock, reset at start-up.
    pub(crate) ready_through: AtomicU64,
    pub(crate) poison: Poison,
    /// Places where tests and the crash torture run code of their own ([`crate::failpoint`]).
    pub failpoints: crate::failpoint::Failpoints,
    /// Group commit: flushers wait here for the leader.
    pub(crate) flush_wait: FlushWait,
    pub(crate) counters: Counters,
    /// Set while the WAL writer thread runs (so tests and stats can tell).
    pub(crate) writer_running: AtomicBool,
    /// How the WAL writer is woken (shared with its thread once started).
    pub(crate) writer_ctl: Arc<writer::WriterShared>,
    /// Write-behind: an insertion that crosses a multiple of this many bytes wakes the WAL
    /// writer to write what is finished, so that sessions rarely find the ring full and write
    /// it themselves (0: never; set when the writer starts).
    pub(crate) write_behind: AtomicU64,
}

impl Wal {
    /// Opens the WAL to insert from `start`: the end of valid WAL that recovery's
    /// [`WalReader`] found, or [`WalSettings::initial_lsn`] for a new cluster.
    ///
    /// Everything after `start` is discarded: the rest of its segment is zeroed and later
    /// segment files are removed (invariant 9). The bytes before `start` in its segment stay
    /// as they are: the writer writes byte ranges, never whole pages, so it never rewrites them
    /// and they need not be loaded into the ring.
    pub fn open(s: WalSettings, start: Lsn) -> Result<Wal> {
        s.validate()?;
        if start % record::RECORD_ALIGN != 0 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("WAL start position {} is not 8-byte aligned", lsn_str(start)),
            ));
        }
        let wal_dir = s.dir.join(WAL_DIR);
        s.vfs.create_dir_all(&wal_dir).map_err(|e| PgError::io("create directory", std::path::Path::new(WAL_DIR), e))?;
        let nslots = if s.single_lock_insert { 1 } else { s.insert_locks };
        let wal = Wal {
            wal_dir,
            vfs: s.vfs.clone(),
            seg_size: s.segment_size,
            sync_method: s.sync_method,
            recycle_keep: s.recycle_keep,
            faults: s.faults,
            ring: Ring::new(s.buffers_bytes),
            reserved: Padded(AtomicU64::new(start)),
            written: Padded(AtomicU64::new(start)),
            flushed: Padded(AtomicU64::new(start)),
            redo: AtomicU64::new(start),
            slots: (0..nslots).map(|_| InsertSlot::new(start)).collect(),
            single_lock: s.single_lock_insert,
            compression: s.compression,
            writer: LWLocked::new(LWLockClass::WalWrite, WriterState::default()),
            install: Mutex::new(()),
            ready_through: AtomicU64::new(0),
            poison: Poison::default(),
            failpoints: crate::failpoint::Failpoints::default(),
            flush_wait: FlushWait::default(),
            counters: Counters::default(),
            writer_running: AtomicBool::new(false),
            writer_ctl: Arc::default(),
            write_behind: AtomicU64::new(0),
        };
        let first = wal.prepare_start(start)?;
        wal.writer.write().files.push(first);
        Ok(wal)
    }

    /// `wal_segment_size`.
    pub fn segment_size(&self) -> u64 {
        self.seg_size
    }

    /// `wal_buffers` in bytes.
    pub fn buffers_bytes(&self) -> usize {
        self.ring.len()
    }

    /// The next position to be reserved (PostgreSQL's GetXLogInsertRecPtr): the end of every
    /// record inserted or being inserted.
    pub fn insert_lsn(&self) -> Lsn {
        self.reserved.load(Ordering::Acquire)
    }

    /// Everything below is written to the segment files (not necessarily durable).
    pub fn written_lsn(&self) -> Lsn {
        self.written.load(Ordering::Acquire)
    }

    /// Everything below is durable.
    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed.load(Ordering::Acquire)
    }

    pub fn stats(&self) -> WalStats {
        let c = &self.counters;
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut s = WalStats {
            records: 0,
            bytes: 0,
            writes: r(&c.writes),
            write_bytes: r(&c.write_bytes),
            write_ns: r(&c.write_ns),
            fsyncs: r(&c.fsyncs),
            fsync_ns: r(&c.fsync_ns),
            flush_calls: r(&c.flush_calls),
            flushes_already_done: r(&c.flushes_already_done),
            group_commit_hits: r(&c.group_commit_hits),
            buffer_full_waits: r(&c.buffer_full_waits),
            writer_write_behind: r(&c.writer_write_behind),
            segments_created: r(&c.segments_created),
            segments_created_ahead: r(&c.segments_created_ahead),
            segments_recycled: r(&c.segments_recycled),
            segments_removed: r(&c.segments_removed),
        };
        for slot in self.slots.iter() {
            s.records += r(&slot.records);
            s.bytes += r(&slot.bytes);
        }
        s
    }
}

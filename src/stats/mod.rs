//! Cumulative statistics: I/O by (backend type, object, context) as `pg_stat_io` keeps them,
//! buffer-pool victim search figures, and (through `lock::lwlock`) LWLock waits.
//!
//! Counters are process-wide atomics in cache-line-padded stripes picked per thread, so that
//! keeping them costs an uncontended atomic add (cheap enough to stay on). They are saved to
//! `pg_stat/stats.json` at clean shutdown and loaded at start-up, so `heapstore stats` shows
//! totals since `init` (or the last reset), as PostgreSQL's cumulative statistics do.
//!
//! Invariants:
//! 1. Times are counted only where an operation is timed anyway (I/O), never on hit paths.
//! 2. A counter only grows within a process; the saved file is the sum over all past runs.

pub mod tables;

use crate::error::{PgError, Result};
use crate::lock::lwlock::{lwlock_stats, LWLockClass, NUM_CLASSES};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum BackendType {
    ClientBackend = 0,
    BackgroundWriter,
    Checkpointer,
    Startup,
    AutovacuumWorker,
    WriteBack,
}
pub const NUM_BACKEND_TYPES: usize = 6;

impl BackendType {
    pub const ALL: [BackendType; NUM_BACKEND_TYPES] = [
        BackendType::ClientBackend,
        BackendType::BackgroundWriter,
        BackendType::Checkpointer,
        BackendType::Startup,
        BackendType::AutovacuumWorker,
        BackendType::WriteBack,
    ];
    pub fn name(self) -> &'static str {
        match self {
            BackendType::ClientBackend => "client backend",
            BackendType::BackgroundWriter => "background writer",
            BackendType::Checkpointer => "checkpointer",
            BackendType::Startup => "startup",
            BackendType::AutovacuumWorker => "autovacuum worker",
            BackendType::WriteBack => "write-back worker",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum IoContext {
    Normal = 0,
    BulkRead,
    BulkWrite,
    Vacuum,
}
pub const NUM_CONTEXTS: usize = 4;

impl IoContext {
    pub const ALL: [IoContext; NUM_CONTEXTS] = [IoContext::Normal, IoContext::BulkRead, IoContext::BulkWrite, IoContext::Vacuum];
    pub fn name(self) -> &'static str {
        match self {
            IoContext::Normal => "normal",
            IoContext::BulkRead => "bulkread",
            IoContext::BulkWrite => "bulkwrite",
            IoContext::Vacuum => "vacuum",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum IoOp {
    Read = 0,
    Write,
    Extend,
    Hit,
    Eviction,
    Reuse,
    Fsync,
}
pub const NUM_OPS: usize = 7;

impl IoOp {
    pub const ALL: [IoOp; NUM_OPS] = [IoOp::Read, IoOp::Write, IoOp::Extend, IoOp::Hit, IoOp::Eviction, IoOp::Reuse, IoOp::Fsync];
    pub fn name(self) -> &'static str {
        match self {
            IoOp::Read => "reads",
            IoOp::Write => "writes",
            IoOp::Extend => "extends",
            IoOp::Hit => "hits",
            IoOp::Eviction => "evictions",
            IoOp::Reuse => "reuses",
            IoOp::Fsync => "fsyncs",
        }
    }
    fn timed(self) -> bool {
        matches!(self, IoOp::Read | IoOp::Write | IoOp::Extend | IoOp::Fsync)
    }
}

const CELLS: usize = NUM_BACKEND_TYPES * NUM_CONTEXTS * NUM_OPS;
const STRIPES: usize = 16;
/// Histogram buckets of buffers examined per victim search: bucket i counts searches that
/// examined [2^i, 2^(i+1)) buffers (bucket 0 also counts 0).
pub const VICTIM_BUCKETS: usize = 40;

#[repr(align(128))]
struct Stripe {
    count: [AtomicU64; CELLS],
    time_ns: [AtomicU64; CELLS],
    /// Bytes moved by reads/writes/extends, per cell.
    bytes: [AtomicU64; CELLS],
    victim_hist: [AtomicU64; VICTIM_BUCKETS],
}

static STATS: [Stripe; STRIPES] = [const {
    Stripe {
        count: [const { AtomicU64::new(0) }; CELLS],
        time_ns: [const { AtomicU64::new(0) }; CELLS],
        bytes: [const { AtomicU64::new(0) }; CELLS],
        victim_hist: [const { AtomicU64::new(0) }; VICTIM_BUCKETS],
    }
}; STRIPES];
static VICTIM_MAX: AtomicU64 = AtomicU64::new(0);
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MY_STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
    static MY_BACKEND: Cell<BackendType> = const { Cell::new(BackendType::ClientBackend) };
}

fn stripe() -> &'static Stripe {
    let i = MY_STRIPE.with(|c| {
        let mut i = c.get();
        if i == usize::MAX {
            i = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
            c.set(i);
        }
        i
    });
    &STATS[i]
}

/// What kind of backend the current thread is.
pub fn backend_type() -> BackendType {
    MY_BACKEND.with(|c| c.get())
}

/// Declares what kind of backend the current thread is (default: client backend).
pub fn set_backend_type(t: BackendType) {
    MY_BACKEND.with(|c| c.set(t));
}

fn cell(b: BackendType, ctx: IoContext, op: IoOp) -> usize {
    (b as usize * NUM_CONTEXTS + ctx as usize) * NUM_OPS + op as usize
}

/// Counts one I/O operation of `bytes` taking `ns` (0 when untimed).
#[inline]
pub fn count_io(ctx: IoContext, op: IoOp, n: u64, bytes: u64, ns: u64) {
    count_io_for(MY_BACKEND.with(|c| c.get()), ctx, op, n, bytes, ns)
}

/// Counts I/O done on behalf of backend `b` (an I/O worker completing a session's read).
#[inline]
pub fn count_io_for(b: BackendType, ctx: IoContext, op: IoOp, n: u64, bytes: u64, ns: u64) {
    let i = cell(b, ctx, op);
    let s = stripe();
    s.count[i].fetch_add(n, Ordering::Relaxed);
    if ns != 0 {
        s.time_ns[i].fetch_add(ns, Ordering::Relaxed);
    }
    if bytes != 0 {
        s.bytes[i].fetch_add(bytes, Ordering::Relaxed);
    }
}

/// Records how many buffers one victim search examined.
#[inline]
pub fn count_victim_search(examined: u64) {
    let bucket = (64 - examined.max(1).leading_zeros() as usize - 1).min(VICTIM_BUCKETS - 1);
    stripe().victim_hist[bucket].fetch_add(1, Ordering::Relaxed);
    VICTIM_MAX.fetch_max(examined, Ordering::Relaxed);
}

/// One row of the I/O table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoRow {
    pub backend_type: String,
    pub object: String,
    pub context: String,
    pub reads: u64,
    pub read_time_ms: f64,
    pub writes: u64,
    pub write_time_ms: f64,
    pub extends: u64,
    pub extend_time_ms: f64,
    pub hits: u64,
    pub evictions: u64,
    pub reuses: u64,
    pub fsyncs: u64,
    pub fsync_time_ms: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub extend_bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LWLockRow {
    pub class: String,
    pub acquire_shared: u64,
    pub acquire_exclusive: u64,
    pub waits: u64,
    pub wait_time_ms: f64,
}

/// pg_stat_bgwriter's counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BgWriterRow {
    /// Buffers written by the background writer.
    pub buffers_clean: u64,
    /// Rounds stopped because bgwriter_lru_maxpages was reached.
    pub maxwritten_clean: u64,
    /// Buffers handed out by the clock sweep.
    pub buffers_alloc: u64,
}

/// pg_stat_wal's counters (and group commit's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WalRow {
    pub wal_records: u64,
    pub wal_bytes: u64,
    pub wal_write: u64,
    pub wal_sync: u64,
    pub wal_write_time_ms: f64,
    pub wal_sync_time_ms: f64,
    /// Flushes served by another session's sync (group commit).
    pub group_commit_hits: u64,
    pub flush_calls: u64,
    pub wal_buffers_full: u64,
}

/// Heavyweight lock waits by mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LockWaitRow {
    pub mode: String,
    pub waits: u64,
    pub wait_time_ms: f64,
}

/// pg_stat_checkpointer's counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckpointerRow {
    pub num_timed: u64,
    pub num_requested: u64,
    pub buffers_written: u64,
    pub write_time_ms: u64,
    pub sync_time_ms: u64,
}

/// Everything `heapstore stats` shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub io: Vec<IoRow>,
    pub lwlocks: Vec<LWLockRow>,
    /// Victim searches per log2 bucket of buffers examined.
    pub victim_hist: Vec<u64>,
    pub victim_examined_max: u64,
    #[serde(default)]
    pub bgwriter: BgWriterRow,
    #[serde(default)]
    pub wal: WalRow,
    #[serde(default)]
    pub checkpointer: CheckpointerRow,
    #[serde(default)]
    pub lock_waits: Vec<LockWaitRow>,
}

impl Snapshot {
    /// The current process's counters.
    pub fn current() -> Snapshot {
        let mut io = Vec::new();
        for b in BackendType::ALL {
            for ctx in IoContext::ALL {
                let mut row =
                    IoRow { backend_type: b.name().into(), object: "relation".into(), context: ctx.name().into(), ..Default::default() };
                let mut any = false;
                for op in IoOp::ALL {
                    let i = cell(b, ctx, op);
                    let (mut c, mut t, mut by) = (0u64, 0u64, 0u64);
                    for s in &STATS {
                        c += s.count[i].load(Ordering::Relaxed);
                        t += s.time_ns[i].load(Ordering::Relaxed);
                        by += s.bytes[i].load(Ordering::Relaxed);
                    }
                    any |= c != 0;
                    let ms = t as f64 / 1e6;
                    match op {
                        IoOp::Read => (row.reads, row.read_time_ms, row.read_bytes) = (c, ms, by),
                        IoOp::Write => (row.writes, row.write_time_ms, row.write_bytes) = (c, ms, by),
                        IoOp::Extend => (row.extends, row.extend_time_ms, row.extend_bytes) = (c, ms, by),
                        IoOp::Hit => row.hits = c,
                        IoOp::Eviction => row.evictions = c,
                        IoOp::Reuse => row.reuses = c,
                        IoOp::Fsync => (row.fsyncs, row.fsync_time_ms) = (c, ms),
                    }
                    debug_assert!(op.timed() || t == 0);
                }
                if any {
                    io.push(row);
                }
            }
        }
        let lwlocks = lwlock_stats()
            .into_iter()
            .filter(|(_, s)| s.acquire_shared + s.acquire_exclusive != 0)
            .map(|(c, s)| LWLockRow {
                class: c.name().into(),
                acquire_shared: s.acquire_shared,
                acquire_exclusive: s.acquire_exclusive,
                waits: s.waits,
                wait_time_ms: s.wait_ns as f64 / 1e6,
            })
            .collect();
        let victim_hist = (0..VICTIM_BUCKETS).map(|b| STATS.iter().map(|s| s.victim_hist[b].load(Ordering::Relaxed)).sum()).collect();
        let _ = NUM_CLASSES;
        let _ = LWLockClass::ALL;
        Snapshot {
            io,
            lwlocks,
            victim_hist,
            victim_examined_max: VICTIM_MAX.load(Ordering::Relaxed),
            bgwriter: BgWriterRow::default(),
            wal: WalRow::default(),
            checkpointer: CheckpointerRow::default(),
            lock_waits: Vec::new(),
        }
    }

    /// Adds `other` into `self` (saved totals plus this run's).
    pub fn merge(&mut self, other: &Snapshot) {
        for r in &other.io {
            match self.io.iter_mut().find(|x| x.backend_type == r.backend_type && x.object == r.object && x.context == r.context) {
                Some(x) => {
                    x.reads += r.reads;
                    x.read_time_ms += r.read_time_ms;
                    x.writes += r.writes;
                    x.write_time_ms += r.write_time_ms;
                    x.extends += r.extends;
                    x.extend_time_ms += r.extend_time_ms;
                    x.hits += r.hits;
                    x.evictions += r.evictions;
                    x.reuses += r.reuses;
                    x.fsyncs += r.fsyncs;
                    x.fsync_time_ms += r.fsync_time_ms;
                    x.read_bytes += r.read_bytes;
                    x.write_bytes += r.write_bytes;
                    x.extend_bytes += r.extend_bytes;
                }
                None => self.io.push(r.clone()),
            }
        }
        for r in &other.lwlocks {
            match self.lwlocks.iter_mut().find(|x| x.class == r.class) {
                Some(x) => {
                    x.acquire_shared += r.acquire_shared;
                    x.acquire_exclusive += r.acquire_exclusive;
                    x.waits += r.waits;
                    x.wait_time_ms += r.wait_time_ms;
                }
                None => self.lwlocks.push(r.clone()),
            }
        }
        if self.victim_hist.len() < other.victim_hist.len() {
            self.victim_hist.resize(other.victim_hist.len(), 0);
        }
        for (a, b) in self.victim_hist.iter_mut().zip(&other.victim_hist) {
            *a += b;
        }
        self.victim_examined_max = self.victim_examined_max.max(other.victim_examined_max);
        self.bgwriter.buffers_clean += other.bgwriter.buffers_clean;
        self.bgwriter.maxwritten_clean += other.bgwriter.maxwritten_clean;
        self.bgwriter.buffers_alloc += other.bgwriter.buffers_alloc;
        let (w, o) = (&mut self.wal, &other.wal);
        w.wal_records += o.wal_records;
        w.wal_bytes += o.wal_bytes;
        w.wal_write += o.wal_write;
        w.wal_sync += o.wal_sync;
        w.wal_write_time_ms += o.wal_write_time_ms;
        w.wal_sync_time_ms += o.wal_sync_time_ms;
        w.group_commit_hits += o.group_commit_hits;
        w.flush_calls += o.flush_calls;
        w.wal_buffers_full += o.wal_buffers_full;
        let (c, o) = (&mut self.checkpointer, &other.checkpointer);
        c.num_timed += o.num_timed;
        c.num_requested += o.num_requested;
        c.buffers_written += o.buffers_written;
        c.write_time_ms += o.write_time_ms;
        c.sync_time_ms += o.sync_time_ms;
        for r in &other.lock_waits {
            match self.lock_waits.iter_mut().find(|x| x.mode == r.mode) {
                Some(x) => {
                    x.waits += r.waits;
                    x.wait_time_ms += r.wait_time_ms;
                }
                None => self.lock_waits.push(r.clone()),
            }
        }
    }

    /// Buffers written by backends of a type (all contexts).
    pub fn writes_by(&self, backend_type: &str) -> u64 {
        self.io.iter().filter(|r| r.backend_type == backend_type).map(|r| r.writes).sum()
    }

    /// The p-quantile (0..1) of buffers examined per victim search, as the upper edge of the
    /// log2 bucket that holds it.
    pub fn victim_examined_quantile(&self, p: f64) -> u64 {
        let total: u64 = self.victim_hist.iter().sum();
        if total == 0 {
            return 0;
        }
        let target = (total as f64 * p).ceil() as u64;
        let mut seen = 0;
        for (i, c) in self.victim_hist.iter().enumerate() {
            seen += c;
            if seen >= target {
                return ((1u64 << (i + 1)) - 1).min(self.victim_examined_max.max(1));
            }
        }
        self.victim_examined_max
    }

    pub fn load(vfs: &dyn crate::storage::Vfs, path: &Path) -> Result<Snapshot> {
        match crate::storage::fsutil::read_if_exists(vfs, path)? {
            Some(b) => {
                serde_json::from_slice(&b).map_err(|e| PgError::internal(format!("corrupt statistics file \"{}\": {e}", path.display())))
            }
            None => Ok(Snapshot::default()),
        }
    }

    pub fn save(&self, vfs: &dyn crate::storage::Vfs, path: &Path) -> Result<()> {
        let b = serde_json::to_vec_pretty(self).expect("serializable");
        crate::storage::fsutil::write_file_durably(vfs, path, &b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_from_histogram() {
        let mut s = Snapshot { victim_hist: vec![0; VICTIM_BUCKETS], victim_examined_max: 900, ..Default::default() };
        s.victim_hist[0] = 999;
        s.victim_hist[9] = 1; // 512..1023
        assert_eq!(s.victim_examined_quantile(0.5), 1);
        assert_eq!(s.victim_examined_quantile(1.0), 900);
    }
}

//! Transactions: 64-bit transaction ids, the commit log, running transactions, snapshots and
//! MVCC visibility.
//!
//! ```text
//!  a transaction's life           commit log (2 bits per xid)
//!  ─────────────────────          ───────────────────────────
//!  begin ─► xid assigned ─┬─► commit ─► COMMITTED
//!   (on first write)      └─► abort  ─► ABORTED
//!                                       (in progress = 0 = no mark yet)
//! ```
//!
//! A snapshot is `(xmin, xmax, xip)`: every xid < xmin had finished when it was taken, every
//! xid ≥ xmax had not started, and `xip` lists the ones in between still running.
//!
//! Visibility of a heap tuple to a snapshot taken by transaction `me` at command `cid`:
//! the creator is `me` with a command before `cid`, or committed and not in the snapshot's
//! future; and the deleter is none, aborted, `me` at `cid` or later, or not visible the same way.
//!
//! Invariants:
//! 1. Xids are never reused: `next_xid` is saved at clean shutdown and at every checkpoint, and
//!    restarts from at least the saved value plus a safety gap after a crash.
//! 2. A transaction is marked committed in the commit log *before* it leaves the running set,
//!    under the ProcArray lock taken exclusively; a snapshot reads the running set under the same
//!    lock shared, so no transaction is seen as neither running nor committed.
//! 3. After a crash, every xid with no mark is treated as aborted (it was in progress).

pub mod rowlock;

use crate::error::{PgError, Result};
use crate::lock::{LWLockClass, LWLocked};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

pub type Xid = u64;
pub type CommandId = u32;

/// No transaction.
pub const INVALID_XID: Xid = 0;
/// A snapshot slot's value when its session holds no snapshot.
pub const NO_SNAPSHOT: Xid = u64::MAX;
/// Rows created by bootstrap: always visible.
pub const FROZEN_XID: Xid = 2;
pub const FIRST_NORMAL_XID: Xid = 3;

const XIDS_PER_CHUNK: u64 = 1 << 18;
const XIDS_PER_BYTE: u64 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XidStatus {
    InProgress = 0,
    Committed = 1,
    Aborted = 2,
}

/// The commit log: two bits per xid, in chunks that are allocated as xids grow.
pub struct Clog {
    chunks: LWLocked<Vec<Arc<[AtomicU8]>>>,
}

impl Clog {
    fn new() -> Clog {
        Clog { chunks: LWLocked::new(LWLockClass::Clog, Vec::new()) }
    }

    fn chunk(&self, xid: Xid, create: bool) -> Option<Arc<[AtomicU8]>> {
        let idx = (xid / XIDS_PER_CHUNK) as usize;
        {
            let c = self.chunks.read();
            if let Some(ch) = c.get(idx) {
                return Some(ch.clone());
            }
        }
        if !create {
            return None;
        }
        let mut c = self.chunks.write();
        while c.len() <= idx {
            c.push((0..XIDS_PER_CHUNK / XIDS_PER_BYTE).map(|_| AtomicU8::new(0)).collect());
        }
        Some(c[idx].clone())
    }

    pub fn status(&self, xid: Xid) -> XidStatus {
        if xid == FROZEN_XID {
            return XidStatus::Committed;
        }
        let Some(ch) = self.chunk(xid, false) else {
            return XidStatus::InProgress;
        };
        let off = xid % XIDS_PER_CHUNK;
        let b = ch[(off / XIDS_PER_BYTE) as usize].load(Ordering::Acquire);
        match (b >> ((off % XIDS_PER_BYTE) * 2)) & 3 {
            1 => XidStatus::Committed,
            2 => XidStatus::Aborted,
            _ => XidStatus::InProgress,
        }
    }

    fn set(&self, xid: Xid, st: XidStatus) {
        let ch = self.chunk(xid, true).expect("created");
        let off = xid % XIDS_PER_CHUNK;
        let shift = (off % XIDS_PER_BYTE) * 2;
        let byte = &ch[(off / XIDS_PER_BYTE) as usize];
        let mut cur = byte.load(Ordering::Relaxed);
        loop {
            let new = (cur & !(3 << shift)) | ((st as u8) << shift);
            match byte.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return,
                Err(c) => cur = c,
            }
        }
    }

    fn save(&self, vfs: &dyn crate::storage::Vfs, path: &Path) -> Result<()> {
        let c = self.chunks.read();
        let mut out = Vec::with_capacity(c.len() * (XIDS_PER_CHUNK / XIDS_PER_BYTE) as usize);
        for ch in c.iter() {
            out.extend(ch.iter().map(|b| b.load(Ordering::Acquire)));
        }
        drop(c);
        crate::storage::fsutil::write_file_durably(vfs, path, &out)
    }

    fn load(&self, vfs: &dyn crate::storage::Vfs, path: &Path) -> Result<()> {
        let Some(data) = crate::storage::fsutil::read_if_exists(vfs, path)? else { return Ok(()) };
        let per = (XIDS_PER_CHUNK / XIDS_PER_BYTE) as usize;
        let mut c = self.chunks.write();
        c.clear();
        for part in data.chunks(per) {
            let ch: Arc<[AtomicU8]> = (0..per).map(|i| AtomicU8::new(part.get(i).copied().unwrap_or(0))).collect();
            c.push(ch);
        }
        Ok(())
    }
}

/// A snapshot of which transactions had committed.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub xmin: Xid,
    pub xmax: Xid,
    /// Sorted running xids in [xmin, xmax).
    pub xip: Vec<Xid>,
    /// The taking transaction (may be INVALID_XID) and its current command.
    pub me: Xid,
    pub cid: CommandId,
}

impl Snapshot {
    /// True if `xid`'s effects are visible: it committed before the snapshot was taken.
    #[inline]
    fn committed_before(&self, xid: Xid, clog: &Clog) -> bool {
        if xid == FROZEN_XID {
            return true;
        }
        if xid >= self.xmax {
            return false;
        }
        if xid >= self.xmin && self.xip.binary_search(&xid).is_ok() {
            return false;
        }
        clog.status(xid) == XidStatus::Committed
    }
}

/// Everything about transactions that is shared between sessions.
pub struct TxnManager {
    next_xid: AtomicU64,
    running: LWLocked<BTreeSet<Xid>>,
    /// Each session's published snapshot xmin (`NO_SNAPSHOT` when it holds none), for
    /// [`TxnManager::vacuum_horizon`]. Set under the running set's read lock; the horizon is
    /// computed under its write lock, so no snapshot is taken unseen while a horizon is made.
    snapshot_xmins: std::sync::RwLock<Vec<Arc<AtomicU64>>>,
    pub clog: Clog,
    /// Row locks (`SELECT ... FOR UPDATE`), released by [`TxnManager::finish`].
    pub row_locks: rowlock::RowLocks,
    dir: PathBuf,
    vfs: Arc<dyn crate::storage::Vfs>,
}

/// Per-scan cache of the last xid's verdict (rows of a page mostly share their creator).
/// Valid for one snapshot only: a verdict is stable for the snapshot's whole life.
#[derive(Default)]
pub struct VisCache {
    xid: Xid,
    visible: bool,
}

impl TxnManager {
    /// Opens the commit log under `datadir/pg_xact`.
    pub fn open(vfs: Arc<dyn crate::storage::Vfs>, datadir: &Path, next_xid: Xid) -> Result<TxnManager> {
        let dir = datadir.join("pg_xact");
        vfs.create_dir_all(&dir).map_err(|e| PgError::io("create directory", &dir, e))?;
        let clog = Clog::new();
        clog.load(&*vfs, &dir.join("clog"))?;
        Ok(TxnManager {
            next_xid: AtomicU64::new(next_xid.max(FIRST_NORMAL_XID)),
            running: LWLocked::new(LWLockClass::ProcArray, BTreeSet::new()),
            snapshot_xmins: std::sync::RwLock::new(Vec::new()),
            clog,
            row_locks: Default::default(),
            dir,
            vfs,
        })
    }

    pub fn next_xid(&self) -> Xid {
        self.next_xid.load(Ordering::Acquire)
    }

    /// Assigns a new xid and adds it to the running set.
    pub fn assign_xid(&self) -> Xid {
        let mut r = self.running.write();
        let xid = self.next_xid.fetch_add(1, Ordering::AcqRel);
        r.insert(xid);
        xid
    }

    /// Marks `xid` committed or aborted, then removes it from the running set (invariant 2).
    /// Its row locks are released first (`rowlock` invariant 2).
    pub fn finish(&self, xid: Xid, committed: bool) {
        self.row_locks.release_all(xid);
        let mut r = self.running.write();
        self.clog.set(xid, if committed { XidStatus::Committed } else { XidStatus::Aborted });
        r.remove(&xid);
    }

    /// Recovery: records a transaction's outcome replayed from the WAL.
    pub fn set_status_for_redo(&self, xid: Xid, committed: bool) {
        self.clog.set(xid, if committed { XidStatus::Committed } else { XidStatus::Aborted });
        self.advance_next_xid(xid + 1);
    }

    /// Makes sure xids below `at_least` are never handed out again.
    pub fn advance_next_xid(&self, at_least: Xid) {
        self.next_xid.fetch_max(at_least, Ordering::AcqRel);
    }

    /// A snapshot for transaction `me` at command `cid`.
    pub fn snapshot(&self, me: Xid, cid: CommandId) -> Snapshot {
        let r = self.running.read();
        let xmax = self.next_xid.load(Ordering::Acquire);
        let xip: Vec<Xid> = r.iter().copied().filter(|&x| x != me).collect();
        let xmin = xip.first().copied().unwrap_or(xmax).min(if me != INVALID_XID { me } else { xmax });
        Snapshot { xmin, xmax, xip, me, cid }
    }

    /// A session's slot for its snapshot xmin (see [`TxnManager::snapshot_published`]).
    pub fn register_snapshot_slot(&self) -> Arc<AtomicU64> {
        let slot = Arc::new(AtomicU64::new(NO_SNAPSHOT));
        self.snapshot_xmins.write().expect("poisoned").push(slot.clone());
        slot
    }

    /// Forgets a session's slot (the session ends).
    pub fn unregister_snapshot_slot(&self, slot: &Arc<AtomicU64>) {
        self.snapshot_xmins.write().expect("poisoned").retain(|s| !Arc::ptr_eq(s, slot));
    }

    /// As [`TxnManager::snapshot`], publishing the snapshot's xmin in `slot` (if lower than
    /// what it holds) before the running set is released.
    pub fn snapshot_published(&self, me: Xid, cid: CommandId, slot: &AtomicU64) -> Snapshot {
        let r = self.running.read();
        let xmax = self.next_xid.load(Ordering::Acquire);
        let xip: Vec<Xid> = r.iter().copied().filter(|&x| x != me).collect();
        let xmin = xip.first().copied().unwrap_or(xmax).min(if me != INVALID_XID { me } else { xmax });
        slot.fetch_min(xmin, Ordering::AcqRel);
        drop(r);
        Snapshot { xmin, xmax, xip, me, cid }
    }

    /// VACUUM's horizon: every xid below it had finished before any running transaction began
    /// and before any snapshot still held was taken, so a version deleted by a committed xid
    /// below it is invisible to everyone now and later.
    pub fn vacuum_horizon(&self) -> Xid {
        let r = self.running.write();
        let mut h = r.first().copied().unwrap_or_else(|| self.next_xid());
        for s in self.snapshot_xmins.read().expect("poisoned").iter() {
            h = h.min(s.load(Ordering::Acquire));
        }
        drop(r);
        h
    }

    /// The oldest xid any running transaction might still need to see as running.
    pub fn oldest_running(&self) -> Xid {
        let r = self.running.read();
        r.first().copied().unwrap_or_else(|| self.next_xid())
    }

    /// Whether `xid` is in the running set (assigned, not yet committed or aborted).
    pub fn is_running(&self, xid: Xid) -> bool {
        self.running.read().contains(&xid)
    }

    pub fn running_count(&self) -> usize {
        self.running.read().len()
    }

    /// MVCC visibility of a tuple with header fields `xmin`/`cmin`/`xmax`/`cmax`.
    #[inline]
    pub fn visible(&self, snap: &Snapshot, xmin: Xid, cmin: CommandId, xmax: Xid, cmax: CommandId, cache: &mut VisCache) -> bool {
        let created = if xmin == snap.me && xmin != INVALID_XID {
            cmin < snap.cid
        } else if cache.xid == xmin && xmin != INVALID_XID {
            cache.visible
        } else {
            let v = snap.committed_before(xmin, &self.clog);
            cache.xid = xmin;
            cache.visible = v;
            v
        };
        if !created {
            return false;
        }
        if xmax == INVALID_XID {
            return true;
        }
        if xmax == snap.me {
            return cmax >= snap.cid;
        }
        !snap.committed_before(xmax, &self.clog)
    }

    /// Saves the commit log (at checkpoints and clean shutdown).
    pub fn save(&self) -> Result<()> {
        self.clog.save(&*self.vfs, &self.dir.join("clog"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visibility_follows_commit_order() {
        let dir = tempfile::tempdir().unwrap();
        let tm = TxnManager::open(crate::storage::vfs::real(), dir.path(), FIRST_NORMAL_XID).unwrap();
        let a = tm.assign_xid();
        let b = tm.assign_xid();
        let mut c = VisCache::default();
        let s1 = tm.snapshot(INVALID_XID, 0);
        assert!(!tm.visible(&s1, a, 0, 0, 0, &mut c));
        tm.finish(a, true);
        let mut c = VisCache::default();
        assert!(!tm.visible(&s1, a, 0, 0, 0, &mut c), "committed after the snapshot");
        let s2 = tm.snapshot(INVALID_XID, 0);
        let mut c = VisCache::default(); // a cache belongs to one snapshot
        assert!(tm.visible(&s2, a, 0, 0, 0, &mut c));
        tm.finish(b, false);
        let s3 = tm.snapshot(INVALID_XID, 0);
        let mut c = VisCache::default();
        assert!(!tm.visible(&s3, b, 0, 0, 0, &mut c), "aborted");
        // own rows: visible to later commands only
        let me = tm.assign_xid();
        let s4 = tm.snapshot(me, 1);
        assert!(tm.visible(&s4, me, 0, 0, 0, &mut VisCache::default()));
        assert!(!tm.visible(&s4, me, 1, 0, 0, &mut VisCache::default()));
    }

    #[test]
    fn clog_persists() {
        let dir = tempfile::tempdir().unwrap();
        let tm = TxnManager::open(crate::storage::vfs::real(), dir.path(), FIRST_NORMAL_XID).unwrap();
        let xs: Vec<Xid> = (0..1000).map(|_| tm.assign_xid()).collect();
        for (i, &x) in xs.iter().enumerate() {
            tm.finish(x, i % 3 != 0);
        }
        tm.save().unwrap();
        let tm2 = TxnManager::open(crate::storage::vfs::real(), dir.path(), tm.next_xid()).unwrap();
        for (i, &x) in xs.iter().enumerate() {
            let want = if i % 3 != 0 { XidStatus::Committed } else { XidStatus::Aborted };
            assert_eq!(tm2.clog.status(x), want);
        }
    }
}

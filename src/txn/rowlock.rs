//! Row locks: `SELECT ... FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE / FOR KEY SHARE`.
//!
//! PostgreSQL marks a locked row on its page (a lock-only xmax, a MultiXact for several
//! sharers). heapstore keeps row locks in memory instead, in this table keyed by the locked
//! version (relation, TID, xmin), each held by a transaction (its xid) until it ends. Nothing on
//! disk changes, so a row lock writes no WAL and dirties no page; a crash ends every
//! transaction, and with it every row lock, so none needs to survive one. The cost is memory
//! per locked row (about 200 bytes), where PostgreSQL's costs a page write.
//!
//! The four strengths conflict as PostgreSQL's do (its documentation's table 13.3):
//!
//! ```text
//!                 KEY SHARE  SHARE  NO KEY UPDATE  UPDATE
//!  KEY SHARE                                         X
//!  SHARE                             X               X
//!  NO KEY UPDATE             X       X               X
//!  UPDATE             X      X       X               X
//! ```
//!
//! A row change claims the version it changes as the strongest lock it conflicts with: a
//! DELETE, or an UPDATE of a column of a unique index, as UPDATE; any other UPDATE as NO KEY
//! UPDATE (so it does not wait for a FOR KEY SHARE lock, as in PostgreSQL). Such an update
//! carries the other transactions' locks to the new version ([`RowLocks::carry`]), as
//! PostgreSQL keeps its key-share lockers in the new version's xmax: a later key change of
//! the new version still waits for them.
//!
//! Invariants:
//! 1. A lock is added only under a shared content lock of the locked version's page, after
//!    the version was seen with no live xmax under that same lock; a row change looks for
//!    conflicting locks under the page's exclusive content lock, before it sets xmax
//!    (`heap::dml` invariant 1). The two are mutually exclusive, so a version is never both
//!    locked by one transaction and changed by another: whichever comes second waits for the
//!    first transaction's end.
//! 2. A transaction's locks are released in [`crate::txn::TxnManager::finish`], before it
//!    leaves the running set: a waiter woken by its end finds them gone. ROLLBACK TO SAVEPOINT
//!    releases those taken since the savepoint ([`RowLocks::release_since`]; a lock carried
//!    to a new version counts as taken when the lock it came from was).
//! 3. `held` counts the entries of the table (changed under a shard's mutex); a row change
//!    that reads 0 under its page's exclusive lock skips the table: a lock added before that
//!    page lock was taken was added under the page's shared lock (invariant 1), whose release
//!    makes the count visible.
//! 4. At most `limit` entries exist (`heapstore.max_row_locks`): a lock past it is refused
//!    ([`Acquired::Full`], 53200) rather than grow the table until memory runs out. Carried
//!    locks (invariant 2's copies for a new version) are never refused: an update must not
//!    fail for another transaction's locks, so the table may exceed the limit by those.

use super::Xid;
use crate::storage::{BlockNumber, RelFileNumber};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// A lock's strength, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowLockMode {
    KeyShare,
    Share,
    NoKeyUpdate,
    Update,
}

impl RowLockMode {
    /// PostgreSQL's conflict table (module doc).
    pub fn conflicts(self, other: RowLockMode) -> bool {
        use RowLockMode::*;
        matches!((self, other), (Update, _) | (_, Update) | (NoKeyUpdate, Share | NoKeyUpdate) | (Share, NoKeyUpdate))
    }

    /// The words of the locking clause (`FOR ...`), as PostgreSQL's errors name it.
    pub fn clause(self) -> &'static str {
        match self {
            RowLockMode::KeyShare => "FOR KEY SHARE",
            RowLockMode::Share => "FOR SHARE",
            RowLockMode::NoKeyUpdate => "FOR NO KEY UPDATE",
            RowLockMode::Update => "FOR UPDATE",
        }
    }
}

/// A locked version: its relation, its TID and its xmin. The xmin tells this version from a
/// later tuple in the same line pointer (after the version died and was pruned): an entry
/// left on a dead version never matches a newer tuple there.
type Key = (RelFileNumber, (BlockNumber, u16), Xid);

const SHARDS: usize = 16;

/// One shard of the table: each locked version's holders (xid, the strongest mode it holds).
type Shard = HashMap<Key, Vec<(Xid, RowLockMode)>>;

/// One transaction's acquisitions.
#[derive(Default)]
struct Owned {
    /// One entry per acquisition, upgrade or carry, with the sequence number of the
    /// acquisition it stems from.
    list: Vec<(Key, RowLockMode, u64)>,
    /// The sequence number of each key's first entry in `list`.
    first: HashMap<Key, u64>,
}

/// The row-lock table (module doc).
pub struct RowLocks {
    /// Holders of each locked version: (xid, the strongest mode it holds).
    shards: [Mutex<Shard>; SHARDS],
    /// Each transaction's acquisitions. Lock order: `owned`, then a shard (`carry`);
    /// nothing else holds both.
    owned: Mutex<HashMap<Xid, Owned>>,
    /// Entries in `shards` (invariant 3).
    held: AtomicUsize,
    /// The next acquisition's sequence number (savepoint marks compare with it).
    seq: AtomicU64,
    /// Invariant 4's bound on `held`.
    limit: AtomicUsize,
}

/// What [`RowLocks::acquire`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// Taken (or held already in that strength or a stronger one).
    Locked,
    /// Another transaction (this xid) holds a conflicting lock.
    Conflict(Xid),
    /// The table is full (invariant 4).
    Full,
}

impl Default for RowLocks {
    fn default() -> Self {
        RowLocks {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
            owned: Mutex::new(HashMap::new()),
            held: AtomicUsize::new(0),
            seq: AtomicU64::new(1),
            limit: AtomicUsize::new(usize::MAX),
        }
    }
}

fn shard_of(key: &Key) -> usize {
    let (rel, (block, off), _) = *key;
    (rel.0 as usize).wrapping_mul(31).wrapping_add(block as usize).wrapping_mul(31).wrapping_add(off as usize) % SHARDS
}

impl RowLocks {
    fn shard(&self, key: &Key) -> std::sync::MutexGuard<'_, Shard> {
        self.shards[shard_of(key)].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn owned(&self) -> std::sync::MutexGuard<'_, HashMap<Xid, Owned>> {
        self.owned.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A transaction other than `me` holding a lock on the version (`tid`, created by
    /// `xmin`) that conflicts with `mode` (the caller holds the page's exclusive content
    /// lock: invariant 1).
    pub fn conflicting(&self, rel: RelFileNumber, tid: (BlockNumber, u16), xmin: Xid, me: Xid, mode: RowLockMode) -> Option<Xid> {
        if self.held.load(Ordering::Acquire) == 0 {
            return None;
        }
        let key = (rel, tid, xmin);
        self.shard(&key).get(&key)?.iter().find(|&&(x, m)| x != me && m.conflicts(mode)).map(|&(x, _)| x)
    }

    /// The most entries the table may hold (invariant 4).
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Release);
    }

    /// Invariant 4's bound.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Acquire)
    }

    /// Takes a lock of `mode` on the version for `me` (the caller holds the page's content
    /// lock and saw the version with no live xmax: invariant 1), or names a transaction
    /// holding a conflicting one. Holding an equal or stronger lock already is success.
    pub fn acquire(&self, rel: RelFileNumber, tid: (BlockNumber, u16), xmin: Xid, me: Xid, mode: RowLockMode) -> Acquired {
        debug_assert_ne!(me, super::INVALID_XID, "a row lock is held by a transaction's xid");
        let key = (rel, tid, xmin);
        let mut shard = self.shard(&key);
        let holders = shard.entry(key).or_default();
        if let Some(&(x, _)) = holders.iter().find(|&&(x, m)| x != me && m.conflicts(mode)) {
            return Acquired::Conflict(x);
        }
        match holders.iter_mut().find(|(x, _)| *x == me) {
            Some((_, m)) if *m >= mode => return Acquired::Locked,
            Some((_, m)) => *m = mode,
            None => {
                let limit = self.limit.load(Ordering::Acquire);
                if self.held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| (h < limit).then_some(h + 1)).is_err() {
                    if holders.is_empty() {
                        shard.remove(&key);
                    }
                    return Acquired::Full;
                }
                holders.push((me, mode));
            }
        }
        // Noted after the shard's mutex is released (lock order); `carry` cannot run between
        // the two, since the caller's page lock excludes it (invariant 1).
        drop(shard);
        let seq = self.seq.fetch_add(1, Ordering::AcqRel);
        let mut owned = self.owned();
        let o = owned.entry(me).or_default();
        o.list.push((key, mode, seq));
        o.first.entry(key).or_insert(seq);
        Acquired::Locked
    }

    /// Gives the new version (`to`, created by `me`) of a row the locks other transactions
    /// hold on its old version (`from`, created by `from_xmin`): a NO KEY UPDATE by `me` that
    /// key-share lockers let through. The caller holds both pages' exclusive content locks.
    /// A holder whose release has begun (its acquisitions are gone from `owned`, which is
    /// locked first here) is not carried.
    pub fn carry(&self, rel: RelFileNumber, from: (BlockNumber, u16), from_xmin: Xid, to: (BlockNumber, u16), me: Xid) {
        if self.held.load(Ordering::Acquire) == 0 {
            return;
        }
        let (kf, kt) = ((rel, from, from_xmin), (rel, to, me));
        let mut owned = self.owned();
        let holders: Vec<(Xid, RowLockMode)> = match self.shard(&kf).get(&kf) {
            Some(h) => h.iter().copied().filter(|&(x, _)| x != me).collect(),
            None => return,
        };
        for (x, mode) in holders {
            debug_assert!(!mode.conflicts(RowLockMode::NoKeyUpdate), "a conflicting lock was carried");
            let Some(o) = owned.get_mut(&x) else { continue };
            // Taken when the lock it comes from was (invariant 2).
            let Some(&seq) = o.first.get(&kf) else { continue };
            o.list.push((kt, mode, seq));
            o.first.entry(kt).or_insert(seq);
            let mut shard = self.shard(&kt);
            let at = shard.entry(kt).or_default();
            match at.iter_mut().find(|(h, _)| *h == x) {
                Some((_, m)) => *m = (*m).max(mode),
                None => {
                    at.push((x, mode));
                    self.held.fetch_add(1, Ordering::AcqRel);
                }
            }
        }
    }

    /// A savepoint's mark: acquisitions after it are undone by [`RowLocks::release_since`].
    pub fn mark(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// Releases every lock `me` holds (its transaction is ending: invariant 2).
    pub fn release_all(&self, me: Xid) {
        self.release_since(me, 0);
    }

    /// Undoes `me`'s acquisitions made at or after `mark` (ROLLBACK TO SAVEPOINT): a lock
    /// taken since is released, one strengthened since goes back to its earlier mode.
    pub fn release_since(&self, me: Xid, mark: u64) {
        if self.held.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut owned = self.owned();
        let Some(o) = owned.get_mut(&me) else { return };
        if !o.list.iter().any(|&(.., s)| s >= mark) {
            return;
        }
        let (undone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut o.list).into_iter().partition(|&(.., s)| s >= mark);
        // The mode each key keeps: the strongest of its entries before the mark.
        let mut before: HashMap<Key, RowLockMode> = HashMap::new();
        for &(k, m, _) in &kept {
            let e = before.entry(k).or_insert(m);
            *e = (*e).max(m);
        }
        if kept.is_empty() {
            owned.remove(&me);
        } else {
            o.first.retain(|k, _| before.contains_key(k));
            o.list = kept;
        }
        drop(owned);
        let mut keys: Vec<Key> = undone.into_iter().map(|(k, ..)| k).collect();
        keys.sort_unstable_by_key(|&(r, t, x)| (r.0, t, x));
        keys.dedup();
        for key in keys {
            let mut shard = self.shard(&key);
            let Some(holders) = shard.get_mut(&key) else { continue };
            let Some(i) = holders.iter().position(|(x, _)| *x == me) else { continue };
            match before.get(&key) {
                Some(&m) => holders[i].1 = m,
                None => {
                    holders.swap_remove(i);
                    self.held.fetch_sub(1, Ordering::AcqRel);
                    if holders.is_empty() {
                        shard.remove(&key);
                    }
                }
            }
        }
    }

    /// Entries in the table (for tests and statistics).
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RowLockMode::*;

    #[test]
    fn conflicts_are_postgres_table() {
        let all = [KeyShare, Share, NoKeyUpdate, Update];
        let expect = [[false, false, false, true], [false, false, true, true], [false, true, true, true], [true, true, true, true]];
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a.conflicts(*b), expect[i][j], "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn locks_conflict_upgrade_and_release() {
        let l = RowLocks::default();
        let r = RelFileNumber(7);
        assert_eq!(l.acquire(r, (0, 1), 0, 10, Share), Acquired::Locked);
        assert_eq!(l.acquire(r, (0, 1), 0, 11, KeyShare), Acquired::Locked);
        assert_eq!(l.acquire(r, (0, 1), 0, 12, NoKeyUpdate), Acquired::Conflict(10));
        assert_eq!(l.conflicting(r, (0, 1), 0, 12, NoKeyUpdate), Some(10));
        assert_eq!(l.conflicting(r, (0, 1), 0, 10, Update), Some(11), "another holder's KEY SHARE blocks a key change");
        assert_eq!(l.conflicting(r, (0, 2), 0, 12, Update), None);
        assert_eq!(l.held(), 2);
        let mark = l.mark();
        assert_eq!(l.acquire(r, (0, 1), 0, 10, Share), Acquired::Locked, "held already");
        assert_eq!(l.mark(), mark);
        assert_eq!(l.acquire(r, (0, 3), 0, 10, Update), Acquired::Locked);
        assert_eq!(l.acquire(r, (0, 3), 0, 11, KeyShare), Acquired::Conflict(10));
        l.release_since(10, mark);
        assert_eq!(l.acquire(r, (0, 3), 0, 11, KeyShare), Acquired::Locked, "released by the rollback to the mark");
        assert_eq!(l.conflicting(r, (0, 1), 0, 12, NoKeyUpdate), Some(10), "the lock before the mark stays");
        l.release_all(10);
        l.release_all(11);
        assert_eq!(l.held(), 0);
        assert_eq!(l.acquire(r, (0, 1), 0, 12, Update), Acquired::Locked);
    }

    #[test]
    fn an_upgrade_rolled_back_returns_to_the_earlier_mode() {
        let l = RowLocks::default();
        let r = RelFileNumber(1);
        assert_eq!(l.acquire(r, (3, 4), 0, 20, KeyShare), Acquired::Locked);
        let mark = l.mark();
        assert_eq!(l.acquire(r, (3, 4), 0, 20, Update), Acquired::Locked);
        assert_eq!(l.conflicting(r, (3, 4), 0, 21, KeyShare), Some(20));
        l.release_since(20, mark);
        assert_eq!(l.conflicting(r, (3, 4), 0, 21, KeyShare), None);
        assert_eq!(l.conflicting(r, (3, 4), 0, 21, Update), Some(20));
        l.release_all(20);
        assert_eq!(l.held(), 0);
    }

    #[test]
    fn carried_locks_follow_the_row_and_its_savepoint() {
        let l = RowLocks::default();
        let r = RelFileNumber(1);
        assert_eq!(l.acquire(r, (0, 1), 0, 30, KeyShare), Acquired::Locked);
        let mark = l.mark();
        assert_eq!(l.acquire(r, (0, 2), 0, 30, KeyShare), Acquired::Locked);
        // 31's non-key update of both rows: 30's locks go to the new versions.
        l.carry(r, (0, 1), 0, (0, 5), 31);
        l.carry(r, (0, 2), 0, (0, 6), 31);
        assert_eq!(l.conflicting(r, (0, 5), 31, 32, Update), Some(30));
        assert_eq!(l.conflicting(r, (0, 5), 31, 32, NoKeyUpdate), None);
        // Rolling back to the mark drops the lock taken after it, and its carried copy.
        l.release_since(30, mark);
        assert_eq!(l.conflicting(r, (0, 6), 31, 32, Update), None);
        assert_eq!(l.conflicting(r, (0, 2), 0, 32, Update), None);
        assert_eq!(l.conflicting(r, (0, 5), 31, 32, Update), Some(30), "carried from a lock taken before the mark: kept");
        l.release_all(30);
        assert_eq!(l.held(), 0);
    }

    #[test]
    fn a_lock_on_a_dead_version_does_not_lock_a_new_tuple_in_its_place() {
        let l = RowLocks::default();
        let r = RelFileNumber(1);
        assert_eq!(l.acquire(r, (0, 1), 5, 40, KeyShare), Acquired::Locked);
        assert_eq!(l.conflicting(r, (0, 1), 5, 41, Update), Some(40));
        assert_eq!(l.conflicting(r, (0, 1), 9, 41, Update), None, "another tuple (xmin 9) in the same line pointer");
        assert_eq!(l.acquire(r, (0, 1), 9, 41, Update), Acquired::Locked);
        l.release_all(40);
        l.release_all(41);
        assert_eq!(l.held(), 0);
    }

    #[test]
    fn a_holder_whose_release_began_is_not_carried() {
        let l = RowLocks::default();
        let r = RelFileNumber(1);
        assert_eq!(l.acquire(r, (0, 1), 0, 50, KeyShare), Acquired::Locked);
        l.release_all(50);
        l.carry(r, (0, 1), 0, (0, 2), 51);
        assert_eq!(l.held(), 0);
        assert_eq!(l.conflicting(r, (0, 2), 51, 52, Update), None);
    }

    #[test]
    fn a_full_table_refuses_new_locks_only() {
        let l = RowLocks::default();
        let r = RelFileNumber(1);
        l.set_limit(2);
        assert_eq!(l.acquire(r, (0, 1), 0, 60, KeyShare), Acquired::Locked);
        assert_eq!(l.acquire(r, (0, 2), 0, 60, KeyShare), Acquired::Locked);
        assert_eq!(l.acquire(r, (0, 3), 0, 60, KeyShare), Acquired::Full);
        assert_eq!(l.acquire(r, (0, 1), 0, 60, Update), Acquired::Locked, "an upgrade takes no entry");
        assert_eq!(l.acquire(r, (0, 2), 0, 61, Update), Acquired::Conflict(60), "a conflict is still a conflict");
        assert_eq!(l.held(), 2);
        l.release_all(60);
        assert_eq!(l.acquire(r, (0, 3), 0, 61, KeyShare), Acquired::Locked);
        l.release_all(61);
        assert_eq!(l.held(), 0);
    }
}

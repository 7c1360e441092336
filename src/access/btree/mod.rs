//! B-tree indexes (PostgreSQL's nbtree): Lehman–Yao trees with right links and high keys, so
//! readers never wait for a split; keys compared with `memcmp` only ([`keycode`]); the heap TID
//! as the last key column, so every entry is unique.
//!
//! Entry points ([`BTree`]): [`BTree::create_empty`], [`BTree::build`] (bottom-up from sorted
//! input, as CREATE INDEX), [`BTree::insert`] / [`BTree::insert_unique`], [`BTree::scan`]
//! ([`Cursor`]) and [`BTree::scan_backward`] ([`BackCursor`]), [`BTree::lookup_eq`], [`BTree::bulk_delete`] (VACUUM), [`BTree::check`]
//! (amcheck). See also `page.rs` (layout), `insert.rs` (splits), `redo.rs` (WAL records).
//!
//! ```text
//!   block 0: meta ──► root (level 2)
//!                    ┌──────────────────────────┐
//!                    │ -inf→1   (k40,t)→7        │
//!                    └───┬──────────────┬────────┘
//!          level 1  ┌────▼─────┐ right ┌▼─────────┐
//!                   │ hk=k40   ├──────►│ (rightmost)│ …
//!                   └──┬────┬──┘       └───────────┘
//!          level 0   leaf ─► leaf ─► leaf ─► …        (every level linked left ─► right)
//! ```
//!
//! Invariants (what holds under which lock):
//! 1. A page is changed only under its exclusive content lock; a page's items are read only
//!    under its shared or exclusive lock, and readers copy what they need (keys, TIDs, links)
//!    before releasing it: so a page may be rewritten (items moved) under its exclusive lock.
//! 2. On every page, data items are in strictly increasing `(key, tid)` order; on a page that
//!    is not rightmost every item is `<` its high key (line pointer 1), and every item of its
//!    right sibling is `>=` it. Pages are never deleted (not even empty ones; PostgreSQL too
//!    keeps them until a later VACUUM can delete them, which heapstore does not do yet), and
//!    items only ever move right (splits), never left.
//! 3. Lehman–Yao descent: a reader holds at most one content lock at a time. It reads the
//!    child's block number under the parent's lock, releases the parent, then locks the child;
//!    if the child split meanwhile, its search key is `>=` the child's high key and it follows
//!    the right link. A reader therefore never waits for a split to finish, and never misses an
//!    entry that was in the tree before it started looking (entries move only right).
//! 4. A split changes, under exclusive locks held together: the page (left half), the new right
//!    page, the old right sibling (left link), the parent (new downlink) — recursively upward —
//!    and, for a root split, the new root and the meta page. It is logged as **one** WAL record
//!    with full images of all of them (BTREE_SPLIT), written before any of those pages is
//!    changed in the pool, so a crash never leaves a half-finished split (no "incomplete split"
//!    flag is needed, unlike PostgreSQL, which logs each level separately).
//! 5. Lock order: child before parent, left before right, the meta page after every other page.
//!    Every lock taken while holding another is on a higher level, or on the same level to the
//!    right (the relative order of existing pages never changes: new pages go right of the page
//!    that split). Descents and scans hold one lock at a time; the one exception, a splitter
//!    re-descending to find a parent it lost (the root split since it looked), holds only pages
//!    below the levels it descends through. A page just added to the file is locked while
//!    others are held, but no one else can reach it before it is linked. So every waiter waits
//!    for a page later in one total order (level, then left to right, then the meta page) than
//!    all pages it holds: no cycle, no deadlock. Heap pages come after index pages (the unique
//!    callback reads the heap under the leaf's lock), so callers hold no heap content lock
//!    while they call into the index.
//! 6. A unique insert holds the exclusive lock on the first leaf that can hold its key from the
//!    uniqueness check until its entry is inserted, so two inserters of one key are serialized
//!    there. It never waits for a transaction while holding a content lock: on `WaitFor(xid)`
//!    it releases everything, calls the wait hook and starts again from the root.
//! 7. Block 0 is the meta page (root block and level), changed only with the root split. A
//!    [`BTree`] handle caches it; a descent that finds its cached root no longer root reads it
//!    again (a former root is still a correct, only slower, place to start).
//!    An index file of 0 blocks is an empty index (an UNLOGGED index reset after a crash); the
//!    first insert creates its meta page and root.
//!
//! WAL: see [`redo`]. An index with `wal: None` (UNLOGGED, or wal_level=minimal in the
//! creating transaction) writes no WAL; its caller flushes and syncs the file at commit, as for
//! the heap.
//!
//! ## Using it from the SQL layer
//!
//! * **The file.** An index is one relation file (main fork only, no FSM): take a
//!   `catalog.new_relfile()`, `smgr.create(rel, ForkNumber::Main)`, record it with the
//!   transaction's new files, and make the catalog's `referenced_relfiles` include it (start-up
//!   deletes unreferenced files as orphans). Then [`BTree::build`] (CREATE INDEX) or
//!   [`BTree::create_empty`] (an index on an empty table). After a crash, an UNLOGGED index is
//!   reset like its table (unlink + create an empty file): an empty file is an empty index.
//! * **The WAL.** `Some(&*shared.wal)` for a logged index; `None` for an UNLOGGED one, and for
//!   one created in this transaction under wal_level=minimal (then push its relfile on
//!   `txn.wal_skipped`, so commit flushes and fsyncs it, as COPY does for the heap). Pass
//!   `with_full_page_writes(settings.bool("full_page_writes"))`, `with_name(index name)` and
//!   `with_xid(xid)`.
//! * **Keys.** [`keycode::encode_key`] from the stored values (`tuple::deform`'s
//!   `Attr::Inline` bytes; detoast `Attr::External` first), in index column order. It returns
//!   true when a column is NULL: skip the unique check then (NULLs are distinct). Point lookups
//!   on all columns: [`BTree::lookup_eq`]; on leading columns: [`BTree::scan`] from
//!   `Included(prefix)` to `Excluded(keycode::prefix_end(prefix))`. Results are heap TIDs of
//!   entries, dead ones included: check visibility on the heap tuple.
//! * **CREATE INDEX.** Scan the heap (`heap::scan`'s callback gets block and offset), push
//!   `(key, (block, offset))`, [`build::sort_entries`], [`BTree::build`].
//! * **INSERT / COPY.** After the heap insert (the TID is in the tuple's `t_ctid`, set by
//!   `BulkInsert::insert_batch`), [`BTree::insert_unique`] for each index. The unique callback
//!   looks at the heap tuple at the TID: inserted or deleted by a transaction still in progress
//!   (not ours) → `WaitFor(xid)`; live (inserted by a committed transaction or by us, and not
//!   deleted by a committed one or by us) → `Conflict`; otherwise (dead, aborted, or deleted by
//!   us, as the old version in an UPDATE) → `NoConflict`. It runs under the leaf's exclusive
//!   lock, so hold no heap content lock when calling insert (the callback may lock heap pages:
//!   index before heap). The wait hook waits on the lock manager for that transaction; it is
//!   called with no content lock held. A conflict is
//!   an error with SQLSTATE 23505 ([`is_unique_violation`]): replace its message and detail
//!   with the constraint's name and `Key (id)=(5) already exists.`.
//! * **UPDATE** inserts a new entry for the new tuple's TID (there is no HOT); **DELETE**
//!   changes no index. **VACUUM**: [`BTree::bulk_delete`] with the set of dead heap TIDs,
//!   before the heap's line pointers are freed for reuse.

pub mod build;
mod check;
mod insert;
pub mod keycode;
pub mod page;
pub mod redo;
mod search;
mod vacuum;

#[cfg(test)]
mod tests;

pub use build::BuildStats;
pub use check::CheckReport;
pub use search::{BackCursor, Cursor};

use crate::buffer::{Buffer, BufferPool, Pins};
use crate::error::{sqlstate, PgError, Result};
use crate::storage::{page as spage, BlockNumber, ForkNumber, RelFileNumber};
use crate::txn::Xid;
use crate::wal::Wal;
use page::Meta;
use std::ops::Bound;

/// A heap tuple identifier: (block, offset).
pub type Tid = (BlockNumber, u16);

/// SQLSTATE of a unique violation (PostgreSQL's unique_violation).
pub const UNIQUE_VIOLATION: &str = "23505";

/// What the unique check's callback says about one existing entry with the same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UniqueVerdict {
    /// A live row (visible or committed): the insert must fail.
    Conflict,
    /// A dead or invisible-for-good row: no conflict.
    NoConflict,
    /// A row whose inserting or deleting transaction is still in progress: wait for it, then
    /// check again.
    WaitFor(Xid),
}

/// A B-tree index on one relation file, as seen by one session (its pins).
#[derive(Clone)]
pub struct BTree<'a> {
    pub(crate) pool: &'a BufferPool,
    pub(crate) pins: &'a Pins,
    pub(crate) wal: Option<&'a Wal>,
    pub(crate) rel: RelFileNumber,
    pub(crate) unique: bool,
    pub(crate) full_page_writes: bool,
    pub(crate) name: Option<String>,
    pub(crate) xid: Xid,
    /// The meta page as last read through this handle (see `search::descend`).
    pub(crate) root_cache: std::cell::Cell<Option<Meta>>,
}

/// Serializes the creation of a missing meta page (an empty file: rare, see invariant 7).
static CREATE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl<'a> BTree<'a> {
    /// The index stored in `rel` (whose file the caller created). `wal` is None for an index
    /// that skips the WAL. `unique` is recorded for [`BTree::check`]; the uniqueness check
    /// itself is asked for per insert.
    pub fn new(pool: &'a BufferPool, pins: &'a Pins, wal: Option<&'a Wal>, rel: RelFileNumber, unique: bool) -> Self {
        BTree { pool, pins, wal, rel, unique, full_page_writes: true, name: None, xid: 0, root_cache: std::cell::Cell::new(None) }
    }

    /// Names the index in error messages (default: its file, `base/N`).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The `full_page_writes` setting (default on).
    pub fn with_full_page_writes(mut self, on: bool) -> Self {
        self.full_page_writes = on;
        self
    }

    /// The transaction id written in this index's WAL records (informational; redo of index
    /// records does not depend on it).
    pub fn with_xid(mut self, xid: Xid) -> Self {
        self.xid = xid;
        self
    }

    pub fn rel(&self) -> RelFileNumber {
        self.rel
    }

    pub fn is_unique(&self) -> bool {
        self.unique
    }

    /// The index's name for messages.
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => self.pool.smgr().display_name(self.rel, ForkNumber::Main),
        }
    }

    pub(crate) fn read(&self, block: BlockNumber) -> Result<Buffer<'a>> {
        self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, block, None)
    }

    /// Checks that a page reached through the tree is an initialized B-tree page.
    pub(crate) fn check_page(&self, p: &[u8], block: BlockNumber) -> Result<()> {
        if spage::is_new(p) {
            return Err(PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!("index \"{}\" contains unexpected zero page at block {block}", self.display_name()),
            )
            .with_hint("Please REINDEX it."));
        }
        if !page::looks_like_btree(p) {
            return Err(self.corrupt_page(block, "bad special area"));
        }
        Ok(())
    }

    pub(crate) fn corrupt_page(&self, block: BlockNumber, why: &str) -> PgError {
        PgError::new(sqlstate::DATA_CORRUPTED, format!("index \"{}\" contains corrupted page at block {block}", self.display_name()))
            .with_detail(why.to_string())
            .with_hint("Please REINDEX it.")
    }

    /// The meta page's contents; None for an empty file (see invariant 7).
    pub(crate) fn meta(&self) -> Result<Option<Meta>> {
        if self.pool.smgr().nblocks(self.rel, ForkNumber::Main)? == 0 {
            return Ok(None);
        }
        let buf = self.read(0)?;
        let pg = buf.lock_shared();
        match page::read_meta(&pg) {
            Some(m) => Ok(Some(m)),
            None if spage::is_new(&pg) => Ok(None), // being created (extended, not yet written)
            None => Err(PgError::new(sqlstate::DATA_CORRUPTED, format!("index \"{}\" is not a btree", self.display_name()))),
        }
    }

    /// Creates the meta page and an empty root leaf if the file has none yet.
    fn ensure_created(&self) -> Result<Meta> {
        if let Some(m) = self.root_cache.get() {
            return Ok(m);
        }
        if let Some(m) = self.meta()? {
            return Ok(m);
        }
        let _g = CREATE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = self.meta()? {
            return Ok(m);
        }
        self.create_empty()?;
        self.meta()?.ok_or_else(|| PgError::internal("meta page missing right after it was created"))
    }

    /// Writes the meta page and an empty root leaf into an empty index file (creating the file
    /// if it does not exist), WAL-logged as new pages.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let smgr = std::sync::Arc::new(heapstore::storage::Smgr::new(dir.path(), 8192, false).unwrap());
    /// # let pool = heapstore::buffer::BufferPool::new(smgr.clone(), 64, 4, 64, "off", 4).unwrap();
    /// # let pins = pool.new_pins();
    /// use heapstore::access::btree::BTree;
    /// use std::ops::Bound;
    /// let rel = heapstore::storage::RelFileNumber(16384);
    /// smgr.create(rel, heapstore::storage::ForkNumber::Main).unwrap();
    /// let t = BTree::new(&pool, &pins, None, rel, false);
    /// t.create_empty().unwrap();
    /// t.insert(b"k", (1, 1), None).unwrap();
    /// t.insert(b"m", (1, 2), None).unwrap();
    /// assert_eq!(t.lookup_eq(b"k").unwrap(), vec![(1, 1)]);
    /// let all: Vec<_> = t.scan(Bound::Excluded(&b"k"[..]), Bound::Unbounded).unwrap().map(|r| r.unwrap()).collect();
    /// assert_eq!(all, vec![(b"m".to_vec(), (1, 2))]);
    /// assert_eq!(t.bulk_delete(&mut |tid| tid == (1, 1)).unwrap(), 1);
    /// assert_eq!(t.check().unwrap().entries, 1);
    /// ```
    pub fn create_empty(&self) -> Result<()> {
        let smgr = self.pool.smgr();
        if !smgr.exists(self.rel, ForkNumber::Main) {
            smgr.create(self.rel, ForkNumber::Main)?;
        }
        let n = smgr.nblocks(self.rel, ForkNumber::Main)?;
        if n != 0 {
            return Err(PgError::new(
                sqlstate::OBJECT_IN_USE,
                format!("index \"{}\" already contains data ({n} blocks)", self.display_name()),
            ));
        }
        let bs = self.pool.block_size();
        let mut writer = build::PageWriter::new(self);
        let meta_block = writer.allocate()?;
        let root = writer.allocate()?;
        assert_eq!((meta_block, root), (0, 1), "a new index starts at block 0");
        let mut p = vec![0u8; bs];
        page::init(&mut p, &page::Opaque { left: page::P_NONE, right: page::P_NONE, level: 0, flags: page::FLAG_LEAF | page::FLAG_ROOT });
        writer.write(root, p.clone())?;
        page::init_meta(&mut p, &Meta { root, level: 0 });
        writer.write(0, p)?;
        writer.finish()
    }

    /// Inserts `(key, tid)`. With `unique`, first asks the callback about every entry with an
    /// equal key (see [`BTree::insert_unique`]); `WaitFor` then makes this call yield and retry
    /// (bounded), so callers with transactions to wait for should use
    /// [`BTree::insert_unique`] with a real wait hook.
    pub fn insert(&self, key: &[u8], tid: Tid, unique: Option<&mut dyn FnMut(Tid) -> Result<UniqueVerdict>>) -> Result<()> {
        self.insert_unique(key, tid, unique, &mut |_| {
            std::thread::yield_now();
            Ok(())
        })
    }

    /// Inserts `(key, tid)`, checking uniqueness when `unique` is given: the callback is asked
    /// about the heap TID of every entry with an equal key (under the leaf's lock: it must not
    /// touch this index or wait). `Conflict` fails the insert with SQLSTATE 23505 (see
    /// [`unique_violation`]); `WaitFor(xid)` releases every lock, calls `wait(xid)` (which
    /// waits for that transaction to end) and retries from the root.
    pub fn insert_unique(
        &self,
        key: &[u8],
        tid: Tid,
        unique: Option<&mut dyn FnMut(Tid) -> Result<UniqueVerdict>>,
        wait: &mut dyn FnMut(Xid) -> Result<()>,
    ) -> Result<()> {
        insert::insert(self, key, tid, unique, wait)
    }

    /// The entries with `lo <= key <= hi` (bounds on the encoded key), in `(key, tid)` order.
    pub fn scan(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Result<Cursor<'a>> {
        search::scan(self, lo, hi)
    }

    /// The entries with `lo <= key <= hi`, in descending `(key, tid)` order.
    pub fn scan_backward(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> BackCursor<'a> {
        search::scan_backward(self, lo, hi)
    }

    /// The heap TIDs of the entries whose key equals `key`, in TID order.
    pub fn lookup_eq(&self, key: &[u8]) -> Result<Vec<Tid>> {
        let mut out = Vec::new();
        search::lookup_eq(self, key, &mut out)?;
        Ok(out)
    }

    /// As [`BTree::lookup_eq`], appending to `out` (no allocation when it has room).
    pub fn lookup_eq_into(&self, key: &[u8], out: &mut Vec<Tid>) -> Result<()> {
        search::lookup_eq(self, key, out)
    }

    /// Builds the index bottom-up from `(key, tid)` pairs in increasing order (see [`build`]).
    pub fn build(&self, sorted: impl IntoIterator<Item = (Vec<u8>, Tid)>) -> Result<BuildStats> {
        build::build(self, sorted.into_iter())
    }

    /// VACUUM: removes every entry whose heap TID `dead` says is dead; returns how many.
    pub fn bulk_delete(&self, dead: &mut dyn FnMut(Tid) -> bool) -> Result<u64> {
        vacuum::bulk_delete(self, dead)
    }

    /// Verifies the tree's structure (see [`CheckReport`]).
    pub fn check(&self) -> Result<CheckReport> {
        check::check(self)
    }
}

/// The error of a unique violation, before the SQL layer names the constraint: SQLSTATE 23505,
/// PostgreSQL's message shape with the index's name; the detail names the existing heap TID.
/// The caller replaces message and detail (`Key (id)=(5) already exists.`).
pub fn unique_violation(index: &str, existing: Tid) -> PgError {
    PgError::new(UNIQUE_VIOLATION, format!("duplicate key value violates unique constraint \"{index}\""))
        .with_detail(format!("Key already exists at heap TID ({},{}).", existing.0, existing.1))
}

/// True if `e` is a unique violation from [`BTree::insert_unique`].
pub fn is_unique_violation(e: &PgError) -> bool {
    e.code == UNIQUE_VIOLATION
}

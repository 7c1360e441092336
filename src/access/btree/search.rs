//! Descents, scans and point lookups (PostgreSQL's nbtsearch.c): one content lock at a time,
//! moving right past pages that split after their downlink was read (invariant 3).

use super::page::{self, ScanKey, TidBound};
use super::{BTree, Tid};
use crate::buffer::Buffer;
use crate::error::{PgError, Result};
use crate::storage::{page as spage, BlockNumber};
use std::collections::VecDeque;
use std::ops::Bound;

/// Most right-moves one search makes on one level before it calls the index corrupt (a cycle
/// of right links would otherwise loop forever).
pub(crate) const MOVE_RIGHT_MAX: u32 = 1 << 24;

/// One step of a descent: the internal page and the offset of the downlink followed.
pub(crate) type StackEntry = (BlockNumber, u16);

/// Descends from the root to the page at `level` whose key range holds `sk`, and returns it
/// pinned but not locked (the caller locks it and moves right if it split meanwhile). Pushes
/// the internal pages passed (top first) on `stack` if given. None for an empty index.
pub(crate) fn descend<'a>(
    t: &BTree<'a>,
    sk: &ScanKey<'_>,
    mut stack: Option<&mut Vec<StackEntry>>,
    level: u32,
) -> Result<Option<Buffer<'a>>> {
    // The root as last seen by this handle (PostgreSQL caches the meta page in the relcache):
    // a former root is still a valid place to start (pages are never deleted), but a descent
    // that finds it no longer root reads the meta page again, so it never starts far down.
    let (meta, cached) = match t.root_cache.get() {
        Some(m) if m.level >= level => (m, true),
        _ => {
            let Some(m) = t.meta()? else { return Ok(None) };
            t.root_cache.set(Some(m));
            (m, false)
        }
    };
    if meta.level < level {
        return Err(PgError::internal(format!("descent to level {level} of index \"{}\" of height {}", t.display_name(), meta.level)));
    }
    let mut buf = t.read(meta.root)?;
    let mut moves = 0u32;
    let mut at_root = true;
    loop {
        let child = {
            let pg = buf.lock_shared();
            let block = buf.block();
            t.check_page(&pg, block)?;
            let o = page::opaque(&pg);
            if std::mem::take(&mut at_root) && cached && !o.is_root() {
                drop(pg);
                t.root_cache.set(None);
                return descend(t, sk, stack, level);
            }
            if page::beyond_high_key(&pg, &o, sk) {
                moves += 1;
                if moves > MOVE_RIGHT_MAX {
                    return Err(t.corrupt_page(block, "right links form a cycle"));
                }
                Some(o.right)
            } else if o.level == level {
                None
            } else if o.level < level || o.is_leaf() {
                return Err(t.corrupt_page(block, &format!("level {} below the descent's target level {level}", o.level)));
            } else {
                let off = page::internal_child_offset(&pg, &o, sk);
                if let Some(s) = stack.as_deref_mut() {
                    s.push((block, off));
                }
                moves = 0;
                Some(page::item_child(page::get(&pg, off)))
            }
        };
        match child {
            None => return Ok(Some(buf)),
            Some(next) => {
                if next == page::P_NONE {
                    return Err(t.corrupt_page(buf.block(), "link to block 0"));
                }
                buf = t.read(next)?;
            }
        }
    }
}

/// Point lookup: appends the TIDs of entries equal to `key`.
pub(crate) fn lookup_eq(t: &BTree<'_>, key: &[u8], out: &mut Vec<Tid>) -> Result<()> {
    let sk = ScanKey { key, tid: TidBound::NegInf };
    let Some(buf) = descend(t, &sk, None, 0)? else { return Ok(()) };
    lookup_from(t, buf, key, out)
}

/// Point lookup from a leaf found by a descent (which may have split since: invariant 3).
pub(crate) fn lookup_from<'a>(t: &BTree<'a>, mut buf: Buffer<'a>, key: &[u8], out: &mut Vec<Tid>) -> Result<()> {
    let sk = ScanKey { key, tid: TidBound::NegInf };
    let mut first = true;
    let mut moves = 0u32;
    loop {
        let next = {
            let pg = buf.lock_shared();
            let block = buf.block();
            t.check_page(&pg, block)?;
            let o = page::opaque(&pg);
            if first && page::beyond_high_key(&pg, &o, &sk) {
                Some(o.right)
            } else {
                // Past the first leaf every item is >= its left sibling's high key, which is key.
                let start = if first { page::leaf_lower_bound(&pg, &o, &sk) } else { o.first_data() };
                first = false;
                let max = spage::max_offset(&pg);
                let mut ended = false;
                for off in start..=max {
                    let it = page::get(&pg, off);
                    if page::item_key(it) != key {
                        ended = true;
                        break;
                    }
                    out.push(page::item_tid(it));
                }
                // Equal keys may continue on the right sibling only if its high key equals key.
                match page::high_key(&pg, &o) {
                    Some(hk) if !ended && page::item_key(hk) == key => Some(o.right),
                    _ => None,
                }
            }
        };
        match next {
            None => return Ok(()),
            Some(r) => {
                moves += 1;
                if moves > MOVE_RIGHT_MAX {
                    return Err(t.corrupt_page(buf.block(), "right links form a cycle"));
                }
                buf = t.read(r)?;
            }
        }
    }
}

/// A range scan's position: entries copied from one leaf at a time.
pub struct Cursor<'a> {
    tree: BTree<'a>,
    hi: Bound<Vec<u8>>,
    /// Entries copied from the current leaf, not yet returned, each with the mark
    /// [`Cursor::next_marked`] computed for it while the leaf was locked.
    items: VecDeque<(Vec<u8>, Tid, bool)>,
    /// The leaf to read next (its right link as it was when the current leaf was copied).
    next_block: Option<BlockNumber>,
    /// The first leaf must be searched for the start key (and moved right past splits).
    start: Option<(Vec<u8>, TidBound)>,
    pages_read: u64,
}

pub(crate) fn scan<'a>(t: &BTree<'a>, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Result<Cursor<'a>> {
    let (key, tid) = match lo {
        Bound::Included(k) => (k.to_vec(), TidBound::NegInf),
        Bound::Excluded(k) => (k.to_vec(), TidBound::PosInf),
        Bound::Unbounded => (Vec::new(), TidBound::NegInf),
    };
    let sk = ScanKey { key: &key, tid };
    let first = descend(t, &sk, None, 0)?.map(|b| b.block());
    Ok(Cursor {
        tree: t.clone(),
        hi: match hi {
            Bound::Included(k) => Bound::Included(k.to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        },
        items: VecDeque::new(),
        next_block: first,
        start: Some((key, tid)),
        pages_read: 0,
    })
}

impl<'a> Cursor<'a> {
    /// Leaves read so far.
    pub fn pages_read(&self) -> u64 {
        self.pages_read
    }

    fn past_hi(&self, key: &[u8]) -> bool {
        match &self.hi {
            Bound::Included(h) => key > &h[..],
            Bound::Excluded(h) => key >= &h[..],
            Bound::Unbounded => false,
        }
    }

    /// Copies the matching entries of the next leaf, each marked by `mark` (called while the
    /// leaf's shared lock is held) or false; false when the scan is done.
    fn load_next(&mut self, mut mark: Option<&mut dyn FnMut(Tid) -> Result<bool>>) -> Result<bool> {
        let tree = &self.tree;
        let mut moves = 0u32;
        while let Some(block) = self.next_block.take() {
            let buf = tree.read(block)?;
            let pg = buf.lock_shared();
            tree.check_page(&pg, block)?;
            let o = page::opaque(&pg);
            let start = match &self.start {
                Some((k, tb)) => {
                    let sk = ScanKey { key: k, tid: *tb };
                    if page::beyond_high_key(&pg, &o, &sk) {
                        moves += 1;
                        if moves > MOVE_RIGHT_MAX {
                            return Err(tree.corrupt_page(block, "right links form a cycle"));
                        }
                        self.next_block = Some(o.right);
                        continue;
                    }
                    page::leaf_lower_bound(&pg, &o, &sk)
                }
                None => o.first_data(),
            };
            self.start = None;
            self.pages_read += 1;
            let mut done = false;
            for off in start..=spage::max_offset(&pg) {
                let it = page::get(&pg, off);
                let key = page::item_key(it);
                if self.past_hi(key) {
                    done = true;
                    break;
                }
                let tid = page::item_tid(it);
                let marked = match mark.as_mut() {
                    Some(m) => m(tid)?,
                    None => false,
                };
                self.items.push_back((key.to_vec(), tid, marked));
            }
            if !done && !o.is_rightmost() {
                // Items of the right sibling are >= our high key: stop early if that is past hi.
                let hk = page::high_key(&pg, &o).expect("not rightmost");
                if !self.past_hi(page::item_key(hk)) {
                    self.next_block = Some(o.right);
                }
            }
            if !self.items.is_empty() {
                return Ok(true);
            }
        }
        Ok(!self.items.is_empty())
    }
}

/// A scan that copies one leaf's entries at a time ([`Cursor`] forward, [`BackCursor`]
/// backward): the entries handed out one by one, the next leaf copied when they run out.
trait LeafScan {
    /// Entries copied and not yet returned, each with its mark.
    fn items(&mut self) -> &mut VecDeque<(Vec<u8>, Tid, bool)>;
    /// Copies the next leaf's matching entries (marking each with `mark` under the leaf's
    /// lock); false when the scan is done.
    fn load(&mut self, mark: Option<&mut dyn FnMut(Tid) -> Result<bool>>) -> Result<bool>;
    /// Ends the scan (after an error).
    fn stop(&mut self);

    fn next_entry(&mut self, mark: Option<&mut dyn FnMut(Tid) -> Result<bool>>) -> Option<Result<(Vec<u8>, Tid, bool)>> {
        if self.items().is_empty() {
            match self.load(mark) {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    self.stop();
                    return Some(Err(e));
                }
            }
        }
        self.items().pop_front().map(Ok)
    }
}

impl LeafScan for Cursor<'_> {
    fn items(&mut self) -> &mut VecDeque<(Vec<u8>, Tid, bool)> {
        &mut self.items
    }

    fn load(&mut self, mark: Option<&mut dyn FnMut(Tid) -> Result<bool>>) -> Result<bool> {
        self.load_next(mark)
    }

    fn stop(&mut self) {
        self.next_block = None;
    }
}

impl Cursor<'_> {
    /// The next entry, with `mark(tid)` as it was while the entry was on its locked leaf: an
    /// index-only scan reads the visibility map bit of the entry's heap page there, so VACUUM,
    /// which removes an entry (under the leaf's exclusive lock) before it can mark the page,
    /// cannot mark it between the copy and the read (`access::vm` invariant 2).
    pub fn next_marked(&mut self, mark: &mut dyn FnMut(Tid) -> Result<bool>) -> Option<Result<(Vec<u8>, Tid, bool)>> {
        self.next_entry(Some(mark))
    }
}

impl Iterator for Cursor<'_> {
    type Item = Result<(Vec<u8>, Tid)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry(None).map(|r| r.map(|(k, t, _)| (k, t)))
    }
}

/// A backward range scan's position: entries in descending `(key, tid)` order, copied from
/// one leaf at a time (PostgreSQL's backward index scan, nbtsearch.c). Each leaf is found by a
/// fresh descent for the entries strictly below the last one returned, so no left link is
/// followed: a leaf's lower bound (the separator its parent holds for it) never changes,
/// because items only move right and pages are never deleted (invariant 2). One content lock
/// at a time, as the forward scan.
pub struct BackCursor<'a> {
    tree: BTree<'a>,
    lo: Bound<Vec<u8>>,
    /// Entries not yet copied are strictly below this `(key, tid)` (`Some(None)`: no bound
    /// yet, the scan starts at the last entry); None when none is left.
    before: Option<Option<(Vec<u8>, TidBound)>>,
    items: VecDeque<(Vec<u8>, Tid, bool)>,
    pages_read: u64,
}

pub(crate) fn scan_backward<'a>(t: &BTree<'a>, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> BackCursor<'a> {
    let before = match hi {
        Bound::Included(k) => Some((k.to_vec(), TidBound::PosInf)),
        Bound::Excluded(k) => Some((k.to_vec(), TidBound::NegInf)),
        Bound::Unbounded => None,
    };
    BackCursor {
        tree: t.clone(),
        lo: match lo {
            Bound::Included(k) => Bound::Included(k.to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        },
        before: Some(before),
        items: VecDeque::new(),
        pages_read: 0,
    }
}

/// Internal search for a backward scan: the offset of the downlink to follow for the entries
/// strictly below `sk` — the last item `< sk`, counting the first data item as minus infinity
/// (`sk` None: above every key, the last item).
fn internal_child_before(p: &[u8], o: &page::Opaque, sk: Option<&ScanKey<'_>>) -> u16 {
    let first = o.first_data();
    let Some(sk) = sk else { return spage::max_offset(p) };
    let (mut lo, mut hi) = (first + 1, spage::max_offset(p) + 1);
    // First item >= sk among first+1 ..= max; the answer is the one before it.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if sk.cmp_item(page::get(p, mid)) == std::cmp::Ordering::Greater {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo - 1
}

/// The leaf entries strictly below `sk` (None: above every key): descends to the leaf whose key range holds the
/// greatest entry `< sk` (moving right on a level while a page's high key is `< sk`: it split
/// after its downlink was read), and copies its entries `< sk` with `mark(tid)` computed
/// under the leaf's lock. Also returns the leaf's lower bound, the separator the descent
/// followed into it (None: minus infinity). None for an empty index.
#[allow(clippy::type_complexity)]
fn leaf_before(
    t: &BTree<'_>,
    sk: Option<&ScanKey<'_>>,
    mark: &mut Option<&mut dyn FnMut(Tid) -> Result<bool>>,
) -> Result<Option<(Vec<(Vec<u8>, Tid, bool)>, Option<(Vec<u8>, Tid)>)>> {
    // The root as last seen by this handle: a former root is the leftmost page of its level,
    // so it too starts a descent (moving right), with minus infinity as its lower bound.
    let root = match t.root_cache.get() {
        Some(m) => m.root,
        None => {
            let Some(m) = t.meta()? else { return Ok(None) };
            t.root_cache.set(Some(m));
            m.root
        }
    };
    let mut buf = t.read(root)?;
    // The lower bound of the page being read: the root's is minus infinity.
    let mut low: Option<(Vec<u8>, Tid)> = None;
    let mut moves = 0u32;
    loop {
        let next = {
            let pg = buf.lock_shared();
            let block = buf.block();
            t.check_page(&pg, block)?;
            let o = page::opaque(&pg);
            match page::high_key(&pg, &o) {
                Some(hk) if sk.is_none_or(|sk| sk.cmp_item(hk) == std::cmp::Ordering::Greater) => {
                    // Entries in [high key, sk) are on the right sibling.
                    moves += 1;
                    if moves > MOVE_RIGHT_MAX {
                        return Err(t.corrupt_page(block, "right links form a cycle"));
                    }
                    low = Some((page::item_key(hk).to_vec(), page::item_tid(hk)));
                    o.right
                }
                _ if o.is_leaf() => {
                    let end = match sk {
                        Some(sk) => page::leaf_lower_bound(&pg, &o, sk),
                        None => spage::max_offset(&pg) + 1,
                    };
                    let mut out = Vec::with_capacity(usize::from(end.saturating_sub(o.first_data())));
                    for off in o.first_data()..end {
                        let it = page::get(&pg, off);
                        let tid = page::item_tid(it);
                        let marked = match mark.as_mut() {
                            Some(m) => m(tid)?,
                            None => false,
                        };
                        out.push((page::item_key(it).to_vec(), tid, marked));
                    }
                    return Ok(Some((out, low)));
                }
                _ => {
                    if spage::max_offset(&pg) < o.first_data() {
                        return Err(t.corrupt_page(block, "internal page without items"));
                    }
                    let off = internal_child_before(&pg, &o, sk);
                    let it = page::get(&pg, off);
                    if off != o.first_data() {
                        low = Some((page::item_key(it).to_vec(), page::item_tid(it)));
                    }
                    moves = 0;
                    page::item_child(it)
                }
            }
        };
        if next == page::P_NONE {
            return Err(t.corrupt_page(buf.block(), "link to block 0"));
        }
        buf = t.read(next)?;
    }
}

impl BackCursor<'_> {
    /// Leaves read so far.
    pub fn pages_read(&self) -> u64 {
        self.pages_read
    }

    fn below_lo(&self, key: &[u8]) -> bool {
        match &self.lo {
            Bound::Included(l) => key < &l[..],
            Bound::Excluded(l) => key <= &l[..],
            Bound::Unbounded => false,
        }
    }

    /// Copies the entries of the next leaf to the left that has any below the position;
    /// false when the scan is done.
    fn load_prev(&mut self, mut mark: Option<&mut dyn FnMut(Tid) -> Result<bool>>) -> Result<bool> {
        let mut steps = 0u32;
        while let Some(before) = self.before.take() {
            steps += 1;
            if steps > MOVE_RIGHT_MAX {
                return Err(PgError::internal(format!("backward scan of index \"{}\" does not advance", self.tree.display_name())));
            }
            let sk = before.as_ref().map(|(key, tb)| ScanKey { key, tid: *tb });
            let Some((entries, low)) = leaf_before(&self.tree, sk.as_ref(), &mut mark)? else { return Ok(false) };
            self.pages_read += 1;
            // Every entry of this leaf below sk is copied: what is left is below the leaf's
            // lower bound. (An entry inserted into this leaf later, below the ones copied, is
            // a version this scan's snapshot cannot see, as for the forward scan.)
            self.before = low.map(|(k, t)| Some((k, TidBound::At(t))));
            for (k, t, m) in entries.into_iter().rev() {
                if self.below_lo(&k) {
                    self.before = None;
                    break;
                }
                self.items.push_back((k, t, m));
            }
            // Below the lower bound of the scan: nothing further left can match.
            if matches!(&self.before, Some(Some((k, _))) if self.below_lo(k)) {
                self.before = None;
            }
            if !self.items.is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// As [`Cursor::next_marked`], backward.
    pub fn next_marked(&mut self, mark: &mut dyn FnMut(Tid) -> Result<bool>) -> Option<Result<(Vec<u8>, Tid, bool)>> {
        self.next_entry(Some(mark))
    }
}

impl LeafScan for BackCursor<'_> {
    fn items(&mut self) -> &mut VecDeque<(Vec<u8>, Tid, bool)> {
        &mut self.items
    }

    fn load(&mut self, mark: Option<&mut dyn FnMut(Tid) -> Result<bool>>) -> Result<bool> {
        self.load_prev(mark)
    }

    fn stop(&mut self) {
        self.before = None;
    }
}

impl Iterator for BackCursor<'_> {
    type Item = Result<(Vec<u8>, Tid)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry(None).map(|r| r.map(|(k, t, _)| (k, t)))
    }
}

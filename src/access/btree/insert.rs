//! Insertion and page splits (PostgreSQL's nbtinsert.c, with the whole split cascade in one WAL
//! record: invariant 4).
//!
//! ```text
//!  insert(key, tid)
//!    descend (stack of parents) ─► lock leaf exclusive, move right ─► [unique check]
//!    fits?  yes ─► log BTREE_INSERT, add the item                                   done
//!           no  ─► split(page): new right page, old right sibling's left link
//!                    └► parent found through the stack (move right by downlink search)
//!                         fits? yes ─► add the downlink
//!                               no  ─► split(parent) … up to a root split: new root + meta
//!                  one BTREE_SPLIT record with the new images of every page above, then each
//!                  page is overwritten with its image and stamped with the record's LSN
//! ```
//!
//! Changes are computed into private page images first and copied into the pool only after the
//! WAL record is inserted: a failed WAL insert leaves every page as it was.

use super::page::{self, Opaque, ScanKey, TidBound};
use super::redo::{BTREE_INSERT, BTREE_SPLIT};
use super::search::{descend, StackEntry, MOVE_RIGHT_MAX};
use super::{unique_violation, BTree, Tid, UniqueVerdict};
use crate::buffer::{Buffer, PageMut};
use crate::error::{sqlstate, PgError, Result};
use crate::recovery::RM_BTREE;
use crate::storage::{page as spage, BlockNumber, ForkNumber};
use crate::txn::Xid;
use std::cmp::Ordering;

/// Most times one insert waits for other transactions before giving up (a bound on the retry
/// loop; each wait is for a transaction that was running, so this is never reached in practice).
const WAIT_RETRIES_MAX: u32 = 100_000;

/// Leaf fill of a rightmost split (PostgreSQL's BTREE_DEFAULT_FILLFACTOR).
pub(crate) const LEAF_FILL_PERCENT: usize = 90;
/// Internal page fill of a rightmost split (BTREE_NONLEAF_FILLFACTOR).
pub(crate) const INTERNAL_FILL_PERCENT: usize = 70;

enum Outcome {
    Done,
    Wait(Xid),
}

pub(crate) fn insert(
    t: &BTree<'_>,
    key: &[u8],
    tid: Tid,
    mut unique: Option<&mut dyn FnMut(Tid) -> Result<UniqueVerdict>>,
    wait: &mut dyn FnMut(Xid) -> Result<()>,
) -> Result<()> {
    let item = page::item_vec(0, tid, key);
    let max = page::max_item_size(t.pool.block_size());
    if item.len() > max {
        return Err(PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            format!("index row size {} exceeds btree maximum {max} for index \"{}\"", item.len(), t.display_name()),
        )
        .with_hint("Values larger than 1/4 of a buffer page cannot be indexed."));
    }
    t.ensure_created()?;
    for _ in 0..WAIT_RETRIES_MAX {
        let check = unique.as_mut().map(|f| &mut **f as &mut dyn FnMut(Tid) -> Result<UniqueVerdict>);
        match try_insert(t, key, tid, &item, check)? {
            Outcome::Done => return Ok(()),
            Outcome::Wait(xid) => wait(xid)?, // no content lock is held here (invariant 6)
        }
    }
    Err(PgError::internal(format!("gave up inserting into index \"{}\" after {WAIT_RETRIES_MAX} waits", t.display_name())))
}

fn try_insert(
    t: &BTree<'_>,
    key: &[u8],
    tid: Tid,
    item: &[u8],
    unique: Option<&mut dyn FnMut(Tid) -> Result<UniqueVerdict>>,
) -> Result<Outcome> {
    let sk_ins = ScanKey { key, tid: TidBound::At(tid) };
    // A unique insert lands on the first leaf that can hold the key (invariant 6).
    let sk_first = if unique.is_some() { ScanKey { key, tid: TidBound::NegInf } } else { sk_ins };
    let mut stack: Vec<StackEntry> = Vec::new();
    let mut buf = descend(t, &sk_first, Some(&mut stack), 0)?.ok_or_else(|| PgError::internal("index has no root"))?;
    let mut moves = 0u32;
    let mut pg: PageMut<'_>;
    loop {
        pg = buf.lock_exclusive();
        t.check_page(&pg, buf.block())?;
        let o = page::opaque(&pg);
        if !page::beyond_high_key(&pg, &o, &sk_first) {
            break;
        }
        moves += 1;
        if moves > MOVE_RIGHT_MAX {
            return Err(t.corrupt_page(buf.block(), "right links form a cycle"));
        }
        drop(pg);
        buf = t.read(o.right)?;
    }
    if let Some(check) = unique {
        let tids = equal_key_tids(t, &pg, key)?;
        for other in tids {
            if other == tid {
                continue;
            }
            match check(other)? {
                UniqueVerdict::NoConflict => {}
                UniqueVerdict::Conflict => return Err(unique_violation(&t.display_name(), other)),
                UniqueVerdict::WaitFor(xid) => return Ok(Outcome::Wait(xid)),
            }
        }
        let o = page::opaque(&pg);
        if page::beyond_high_key(&pg, &o, &sk_ins) {
            // The entry goes further right; keep the first leaf locked until it is in.
            let mut block = o.right;
            for _ in 0..MOVE_RIGHT_MAX {
                let tbuf = t.read(block)?;
                let mut tpg = tbuf.lock_exclusive();
                t.check_page(&tpg, block)?;
                let to = page::opaque(&tpg);
                if page::beyond_high_key(&tpg, &to, &sk_ins) {
                    block = to.right;
                    continue;
                }
                insert_on_leaf(t, &tbuf, &mut tpg, item, &sk_ins, &mut stack)?;
                return Ok(Outcome::Done);
            }
            return Err(t.corrupt_page(block, "right links form a cycle"));
        }
    }
    insert_on_leaf(t, &buf, &mut pg, item, &sk_ins, &mut stack)?;
    Ok(Outcome::Done)
}

/// The TIDs of entries equal to `key` from the locked first leaf rightwards (right siblings are
/// locked shared one at a time while the first leaf stays locked: left before right).
fn equal_key_tids(t: &BTree<'_>, pg: &[u8], key: &[u8]) -> Result<Vec<Tid>> {
    let mut out = Vec::new();
    let sk = ScanKey { key, tid: TidBound::NegInf };
    let mut next = collect_equal(pg, &sk, true, &mut out);
    let mut moves = 0u32;
    while let Some(block) = next {
        moves += 1;
        if moves > MOVE_RIGHT_MAX {
            return Err(t.corrupt_page(block, "right links form a cycle"));
        }
        let b = t.read(block)?;
        let p = b.lock_shared();
        t.check_page(&p, block)?;
        next = collect_equal(&p, &sk, false, &mut out);
    }
    Ok(out)
}

/// Appends TIDs of items equal to `sk.key`; returns the right sibling if equal keys may go on.
fn collect_equal(pg: &[u8], sk: &ScanKey<'_>, first: bool, out: &mut Vec<Tid>) -> Option<BlockNumber> {
    let o = page::opaque(pg);
    let start = if first { page::leaf_lower_bound(pg, &o, sk) } else { o.first_data() };
    for off in start..=spage::max_offset(pg) {
        let it = page::get(pg, off);
        if page::item_key(it) != sk.key {
            return None;
        }
        out.push(page::item_tid(it));
    }
    match page::high_key(pg, &o) {
        Some(hk) if page::item_key(hk) == sk.key => Some(o.right),
        _ => None,
    }
}

/// Inserts a leaf item on the locked page that covers it, splitting as needed.
fn insert_on_leaf(
    t: &BTree<'_>,
    buf: &Buffer<'_>,
    pg: &mut PageMut<'_>,
    item: &[u8],
    sk: &ScanKey<'_>,
    stack: &mut Vec<StackEntry>,
) -> Result<()> {
    let o = page::opaque(pg);
    debug_assert!(o.is_leaf());
    let off = page::leaf_lower_bound(pg, &o, sk);
    if off <= spage::max_offset(pg) && page::cmp_items(page::get(pg, off), item) == Ordering::Equal {
        let (b, o) = page::item_tid(item);
        return Err(PgError::internal(format!("index \"{}\" already has an entry for heap TID ({b},{o}) with this key", t.display_name())));
    }
    if item.len() <= spage::free_space(pg) {
        return insert_simple(t, buf.block(), pg, off, item);
    }
    let mut changes = Changes::default();
    split(t, buf.block(), pg, off, item, stack, &mut changes).map(|_| ())
}

/// Adds `item` at `off` on a page with room, WAL-logged as BTREE_INSERT (or with a full-page
/// image at the page's first change after a checkpoint).
fn insert_simple(t: &BTree<'_>, block: BlockNumber, pg: &mut PageMut<'_>, off: u16, item: &[u8]) -> Result<()> {
    use crate::buffer::critical::{log_page_changes, Logged, PageChange, RecordKind};
    assert!(page::insert_at(pg, off, item), "free space was checked");
    let mut data = Vec::new();
    if t.wal.is_some() {
        data.reserve(2 + item.len());
        data.extend_from_slice(&off.to_le_bytes());
        data.extend_from_slice(item);
    }
    let kind = RecordKind { rmid: RM_BTREE, info: BTREE_INSERT, xid: t.xid, main: &[] };
    let change = PageChange { pg, rel: t.rel, fork: ForkNumber::Main, block, logged: Logged::Delta { data: &data, will_init: false } };
    log_page_changes(t.wal, t.full_page_writes, kind, &mut [change], &mut crate::wal::RecordBuilder::new())?;
    Ok(())
}

/// New images of the pages a split cascade changes, in the order they are logged.
#[derive(Default)]
pub(crate) struct Changes {
    /// (block, new image, the locked buffer it goes to)
    pages: Vec<(BlockNumber, Vec<u8>, crate::buffer::pool::BufferId)>,
}

impl Changes {
    fn push(&mut self, block: BlockNumber, image: Vec<u8>, pg: &PageMut<'_>) -> usize {
        self.pages.push((block, image, pg.buffer_id()));
        self.pages.len() - 1
    }

    fn image(&self, i: usize) -> &[u8] {
        &self.pages[i].1
    }

    /// Logs every image as one BTREE_SPLIT record; returns its end LSN (0 without WAL). The
    /// pages are locked exclusively by the frames of the cascade, which apply their images
    /// when this returns ([`crate::buffer::critical::log_images`]).
    fn log(&self, t: &BTree<'_>) -> Result<u64> {
        let images: Vec<crate::buffer::critical::PendingImage<'_>> = self
            .pages
            .iter()
            .map(|(block, img, id)| crate::buffer::critical::PendingImage {
                buffer: *id,
                rel: t.rel,
                fork: ForkNumber::Main,
                block: *block,
                image: img,
            })
            .collect();
        crate::buffer::critical::log_images(t.wal, t.pool, RM_BTREE, BTREE_SPLIT, t.xid, &images)
    }
}

/// Overwrites a locked page with its logged image (the end of `log_images`' critical
/// section: nothing between the insert and this can fail).
fn apply(pg: &mut PageMut<'_>, image: &[u8], lsn: u64) {
    debug_assert!(pg.is_dirty(), "log_images marked the page dirty before inserting its record");
    pg.copy_from_slice(image);
    if lsn != 0 {
        spage::set_lsn(pg, lsn);
    }
}

/// One new page, pinned (zeroed and valid: see `BufferPool::extend_by`).
fn new_page<'a>(t: &BTree<'a>) -> Result<Buffer<'a>> {
    let mut v = t.pool.extend_by(t.pins, t.rel, ForkNumber::Main, 1, None)?;
    assert_eq!(v.len(), 1, "extend_by(1) returns one buffer");
    Ok(v.pop().expect("one"))
}

/// Where to split `items` (left keeps `items[..s]`): the sizes both halves need must fit; a
/// rightmost insert leaves the left page `fill_percent` full, others balance bytes.
fn choose_split(
    items: &[&[u8]],
    internal: bool,
    old_hk: Option<usize>,
    usable: usize,
    fill_percent: usize,
    rightmost_insert: bool,
) -> usize {
    let n = items.len();
    assert!(n >= 2, "a split needs at least two items");
    let lp = spage::LINE_POINTER_SIZE;
    let total: usize = items.iter().map(|i| i.len() + lp).sum();
    let right_extra = old_hk.map_or(0, |h| h + lp);
    let mut best = None;
    let mut best_score = usize::MAX;
    let mut left = 0usize;
    for s in 1..n {
        left += items[s - 1].len() + lp;
        let left_size = left + items[s].len() + lp; // + the new high key, a copy of items[s]
        let mut right_size = total - left + right_extra;
        if internal {
            right_size -= items[s].len() - page::ITEM_HEADER; // its first item loses its key
        }
        if left_size > usable || right_size > usable {
            continue;
        }
        let score = if rightmost_insert {
            let target = usable * fill_percent / 100;
            if left_size <= target {
                target - left_size
            } else {
                usable + left_size - target // over the target: only if nothing else fits
            }
        } else {
            left_size.abs_diff(right_size)
        };
        if score < best_score {
            best_score = score;
            best = Some(s);
        }
    }
    best.expect("some split point fits: items are at most a quarter page")
}

/// Splits the locked page `block` while inserting `item` at `off`, then inserts the downlink of
/// the new right page into the parent (recursively), and logs and applies the whole cascade.
fn split(
    t: &BTree<'_>,
    block: BlockNumber,
    pg: &mut PageMut<'_>,
    off: u16,
    item: &[u8],
    stack: &mut Vec<StackEntry>,
    changes: &mut Changes,
) -> Result<u64> {
    let bs = t.pool.block_size();
    let o = page::opaque(pg);
    let internal = !o.is_leaf();
    let first = o.first_data();
    let max = spage::max_offset(pg);
    assert!(off >= first && off <= max + 1, "insert offset {off} outside {first}..={}", max + 1);
    assert!(!internal || off > first, "nothing goes before an internal page's minus-infinity item");

    let new_buf = new_page(t)?;
    let new_block = new_buf.block();
    let mut new_pg = new_buf.lock_exclusive();
    assert!(spage::is_new(&new_pg), "a page just added to the index is new");

    let (left, right, pivot) = {
        let mut items: Vec<&[u8]> = (first..=max).map(|i| page::get(pg, i)).collect();
        items.insert((off - first) as usize, item);
        let old_hk = page::high_key(pg, &o);
        let rightmost_insert = o.is_rightmost() && off == max + 1;
        let fill = if internal { INTERNAL_FILL_PERCENT } else { LEAF_FILL_PERCENT };
        let s = choose_split(&items, internal, old_hk.map(|h| h.len()), page::usable_bytes(bs), fill, rightmost_insert);
        let split_item = items[s];
        let (sk_key, sk_tid) = (page::item_key(split_item), page::item_tid(split_item));
        let flags = o.flags & !page::FLAG_ROOT;
        let mut left = vec![0u8; bs];
        page::init(&mut left, &Opaque { left: o.left, right: new_block, level: o.level, flags });
        add(&mut left, &page::item_vec(0, sk_tid, sk_key));
        for it in &items[..s] {
            add(&mut left, it);
        }
        let mut right = vec![0u8; bs];
        page::init(&mut right, &Opaque { left: block, right: o.right, level: o.level, flags });
        if let Some(hk) = old_hk {
            add(&mut right, hk);
        }
        for (i, it) in items[s..].iter().enumerate() {
            if internal && i == 0 {
                add(&mut right, &page::item_vec(page::item_child(it), (0, 0), b""));
            } else {
                add(&mut right, it);
            }
        }
        (left, right, page::item_vec(new_block, sk_tid, sk_key))
    };
    let i_left = changes.push(block, left, pg);
    let i_right = changes.push(new_block, right, &new_pg);

    // The old right sibling's left link now points at the new page.
    let sib_buf = if o.is_rightmost() { None } else { Some(t.read(o.right)?) };
    let mut sib_pg = sib_buf.as_ref().map(|b| b.lock_exclusive());
    let i_sib = match sib_pg.as_ref() {
        Some(sp) => {
            t.check_page(sp, o.right)?;
            let mut img = sp.to_vec();
            let mut so = page::opaque(&img);
            if so.left != block {
                return Err(t.corrupt_page(o.right, &format!("left link {} where {block} was expected", so.left)));
            }
            so.left = new_block;
            page::set_opaque(&mut img, &so);
            Some(changes.push(o.right, img, sp))
        }
        None => None,
    };

    let lsn = if o.is_root() {
        new_root(t, block, new_block, o.level, &pivot, changes)?
    } else {
        insert_downlink(t, block, o.level, &pivot, stack, changes)?
    };
    apply(pg, changes.image(i_left), lsn);
    apply(&mut new_pg, changes.image(i_right), lsn);
    if let (Some(sp), Some(i)) = (sib_pg.as_mut(), i_sib) {
        apply(sp, changes.image(i), lsn);
    }
    Ok(lsn)
}

fn add(p: &mut [u8], it: &[u8]) {
    spage::add_item(p, it).expect("the split point was chosen so that both halves fit");
}

/// A root split: a new root above the two halves, and the meta page pointing at it. Logs the
/// cascade and applies the new root and meta page; returns the record's end LSN.
fn new_root(t: &BTree<'_>, left: BlockNumber, right: BlockNumber, level: u32, pivot: &[u8], changes: &mut Changes) -> Result<u64> {
    assert_eq!(page::item_child(pivot), right, "the pivot is the downlink to the right half");
    let bs = t.pool.block_size();
    let root_buf = new_page(t)?;
    let root_block = root_buf.block();
    let mut root_pg = root_buf.lock_exclusive();
    let mut root = vec![0u8; bs];
    page::init(&mut root, &Opaque { left: page::P_NONE, right: page::P_NONE, level: level + 1, flags: page::FLAG_ROOT });
    add(&mut root, &page::item_vec(left, (0, 0), b""));
    add(&mut root, pivot);
    let i_root = changes.push(root_block, root, &root_pg);
    let meta_buf = t.read(0)?;
    let mut meta_pg = meta_buf.lock_exclusive();
    let old = page::read_meta(&meta_pg).ok_or_else(|| t.corrupt_page(0, "not a meta page"))?;
    if old.root != left {
        return Err(t.corrupt_page(0, &format!("meta page points at root {} while block {left} is the root", old.root)));
    }
    let mut meta = vec![0u8; bs];
    page::init_meta(&mut meta, &page::Meta { root: root_block, level: level + 1 });
    let i_meta = changes.push(0, meta, &meta_pg);
    let lsn = changes.log(t)?;
    apply(&mut root_pg, changes.image(i_root), lsn);
    apply(&mut meta_pg, changes.image(i_meta), lsn);
    Ok(lsn)
}

/// Inserts the downlink `pivot` (to the new right half of `child`) into `child`'s parent,
/// found through the stack (moving right until the page with `child`'s downlink), or by a new
/// descent when the stack is used up (the root split since our descent). Splits the parent if
/// it is full. Logs the cascade; returns the record's end LSN.
fn insert_downlink(
    t: &BTree<'_>,
    child: BlockNumber,
    child_level: u32,
    pivot: &[u8],
    stack: &mut Vec<StackEntry>,
    changes: &mut Changes,
) -> Result<u64> {
    let (mut block, hint) = match stack.pop() {
        Some(e) => e,
        None => {
            let sk = ScanKey { key: page::item_key(pivot), tid: TidBound::At(page::item_tid(pivot)) };
            let b = descend(t, &sk, None, child_level + 1)?.ok_or_else(|| PgError::internal("index has no root"))?;
            (b.block(), 0)
        }
    };
    for _ in 0..MOVE_RIGHT_MAX {
        let pbuf = t.read(block)?;
        let mut ppg = pbuf.lock_exclusive();
        t.check_page(&ppg, block)?;
        let o = page::opaque(&ppg);
        if o.level != child_level + 1 {
            return Err(t.corrupt_page(block, &format!("parent level {} above a child of level {child_level}", o.level)));
        }
        let Some(at) = find_downlink(&ppg, &o, child, hint) else {
            if o.is_rightmost() {
                return Err(PgError::new(
                    sqlstate::DATA_CORRUPTED,
                    format!(
                        "failed to re-find parent key in index \"{}\" for split pages {child}/{}",
                        t.display_name(),
                        page::item_child(pivot)
                    ),
                ));
            }
            block = o.right;
            continue;
        };
        let off = at + 1;
        if pivot.len() <= spage::free_space(&ppg) {
            let mut img = ppg.to_vec();
            assert!(page::insert_at(&mut img, off, pivot), "free space was checked");
            let i = changes.push(block, img, &ppg);
            let lsn = changes.log(t)?;
            apply(&mut ppg, changes.image(i), lsn);
            return Ok(lsn);
        }
        return split(t, block, &mut ppg, off, pivot, stack, changes);
    }
    Err(t.corrupt_page(block, "right links form a cycle"))
}

/// The offset of the downlink to `child` on an internal page (trying `hint` first).
fn find_downlink(p: &[u8], o: &Opaque, child: BlockNumber, hint: u16) -> Option<u16> {
    let max = spage::max_offset(p);
    if hint >= o.first_data() && hint <= max && page::item_child(page::get(p, hint)) == child {
        return Some(hint);
    }
    (o.first_data()..=max).find(|&i| page::item_child(page::get(p, i)) == child)
}

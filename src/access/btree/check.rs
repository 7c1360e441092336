//! Structure verification (PostgreSQL's amcheck `bt_index_parent_check`, for a quiescent
//! index: pages are locked one at a time, so concurrent splits can make it report false
//! errors).
//!
//! Checked: the meta page points at a root page of its level; every level is a chain of right
//! links whose left links point back; items are strictly increasing on every page and below
//! its high key; the downlinks of each level, in order, are exactly the pages of the level
//! below in right-link order; each child's high key equals its parent's next pivot (or the
//! parent's high key), and its first item is not below its downlink's pivot; leaves are level
//! 0 and only leaves; every initialized page of the file is reached.

use super::page::{self, Opaque};
use super::{BTree, Tid};
use crate::error::{sqlstate, PgError, Result};
use crate::storage::{page as spage, BlockNumber, ForkNumber};
use std::cmp::Ordering;

/// What [`BTree::check`] found (it returns an error at the first violation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// False for an empty file (no meta page yet).
    pub initialized: bool,
    pub root: BlockNumber,
    /// Levels above the leaves.
    pub root_level: u32,
    /// Pages reached from the root (the meta page not counted).
    pub pages: u64,
    pub leaf_pages: u64,
    /// Leaf entries.
    pub entries: u64,
    /// Blocks of the file that were never initialized (extended, then unused after a crash).
    pub unused_blocks: u64,
}

/// A downlink expected on the level below, with the bounds of its subtree.
struct Expect {
    block: BlockNumber,
    /// The pivot (None: minus infinity).
    lower: Option<(Vec<u8>, Tid)>,
    /// The next pivot or the parent's high key (None: plus infinity, so rightmost).
    upper: Option<(Vec<u8>, Tid)>,
}

fn key_tid(it: &[u8]) -> (Vec<u8>, Tid) {
    (page::item_key(it).to_vec(), page::item_tid(it))
}

fn cmp_kt(it: &[u8], kt: &(Vec<u8>, Tid)) -> Ordering {
    page::item_key(it).cmp(&kt.0[..]).then_with(|| page::item_tid(it).cmp(&kt.1))
}

pub(crate) fn check(t: &BTree<'_>) -> Result<CheckReport> {
    let fail = |block: BlockNumber, why: String| {
        PgError::new(sqlstate::DATA_CORRUPTED, format!("index \"{}\" fails check at block {block}", t.display_name())).with_detail(why)
    };
    let mut rep = CheckReport::default();
    let Some(meta) = t.meta()? else { return Ok(rep) };
    rep.initialized = true;
    rep.root = meta.root;
    rep.root_level = meta.level;
    let nblocks = t.pool.smgr().nblocks(t.rel, ForkNumber::Main)?;
    let mut expect = vec![Expect { block: meta.root, lower: None, upper: None }];
    let mut copy = vec![0u8; t.pool.block_size()];
    for level in (0..=meta.level).rev() {
        let mut below: Vec<Expect> = Vec::new();
        let mut prev: BlockNumber = page::P_NONE;
        let mut block = expect[0].block;
        let mut i = 0usize;
        loop {
            if i >= expect.len() {
                return Err(fail(block, format!("level {level} has more pages than downlinks ({})", expect.len())));
            }
            let e = &expect[i];
            if e.block != block {
                return Err(fail(block, format!("right-link order reaches block {block} where the downlink order has {}", e.block)));
            }
            if rep.pages > nblocks as u64 {
                return Err(fail(block, "more pages reached than the file has: a cycle".into()));
            }
            {
                let buf = t.read(block)?;
                let pg = buf.lock_shared();
                copy.copy_from_slice(&pg);
            }
            t.check_page(&copy, block)?;
            let p = &copy[..];
            let o: Opaque = page::opaque(p);
            rep.pages += 1;
            if o.level != level {
                return Err(fail(block, format!("level {} where {level} was expected", o.level)));
            }
            if o.is_leaf() != (level == 0) {
                return Err(fail(block, format!("leaf flag {} on level {level}", o.is_leaf())));
            }
            if o.is_root() != (block == meta.root) {
                return Err(fail(block, format!("root flag {} (meta says the root is {})", o.is_root(), meta.root)));
            }
            if o.left != prev {
                return Err(fail(block, format!("left link {} where {prev} was expected", o.left)));
            }
            match (&e.upper, page::high_key(p, &o)) {
                (None, None) => {}
                (Some(u), Some(hk)) if cmp_kt(hk, u) == Ordering::Equal => {}
                (u, hk) => {
                    return Err(fail(block, format!("high key {:?} does not match the parent's bound {u:?}", hk.map(key_tid))));
                }
            }
            let first = o.first_data();
            let max = spage::max_offset(p);
            let cmp_from = if level > 0 { first + 1 } else { first };
            if level > 0 && max < first {
                return Err(fail(block, "internal page without downlinks".into()));
            }
            for off in cmp_from..=max {
                let it = page::get(p, off);
                if off > cmp_from && page::cmp_items(page::get(p, off - 1), it) != Ordering::Less {
                    return Err(fail(block, format!("items {} and {off} out of order", off - 1)));
                }
                if let Some(hk) = page::high_key(p, &o) {
                    if page::cmp_items(it, hk) != Ordering::Less {
                        return Err(fail(block, format!("item {off} not below the high key")));
                    }
                }
                if off == cmp_from {
                    if let Some(lo) = &e.lower {
                        if cmp_kt(it, lo) == Ordering::Less {
                            return Err(fail(block, format!("item {off} below its downlink's pivot")));
                        }
                    }
                }
            }
            if level == 0 {
                rep.leaf_pages += 1;
                rep.entries += (max + 1 - first) as u64;
            } else {
                for off in first..=max {
                    let it = page::get(p, off);
                    let lower = if off == first { e.lower.clone() } else { Some(key_tid(it)) };
                    let upper = if off < max { Some(key_tid(page::get(p, off + 1))) } else { page::high_key(p, &o).map(key_tid) };
                    below.push(Expect { block: page::item_child(it), lower, upper });
                }
            }
            i += 1;
            prev = block;
            if o.is_rightmost() {
                break;
            }
            block = o.right;
        }
        if i != expect.len() {
            return Err(fail(block, format!("level {level} has {i} pages but {} downlinks", expect.len())));
        }
        expect = below;
    }
    // Every initialized page must have been reached.
    let mut initialized = 0u64;
    for block in 1..nblocks {
        let buf = t.read(block)?;
        let pg = buf.lock_shared();
        if spage::is_new(&pg) {
            rep.unused_blocks += 1;
        } else {
            initialized += 1;
        }
    }
    if initialized != rep.pages {
        return Err(fail(0, format!("{initialized} initialized pages but {} reachable from the root", rep.pages)));
    }
    Ok(rep)
}

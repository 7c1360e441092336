//! B-tree page layout on top of the slotted page ([`crate::storage::page`]).
//!
//! ```text
//!  ┌ header ┬ lp1 lp2 … ─►        free        ◄─ … items ┬ special (16 bytes) ──────────────┐
//!  │        │ (high key, unless rightmost), data items    │ left u32 right u32 level u32     │
//!  │        │ in key order                                │ flags u16 reserved u16           │
//!  └────────┴─────────────────────────────────────────────┴──────────────────────────────────┘
//! ```
//!
//! An index tuple ("item") is `child u32 | tid block u32 | tid offset u16 | key bytes` (all
//! little-endian): 10 bytes of header, then the encoded key (`keycode`). `child` is the downlink
//! of an internal item and 0 elsewhere. Items are ordered by `(key, tid)`: the heap TID is the
//! last key column, so every entry is unique (PostgreSQL 12's heapkeyspace).
//!
//! * Line pointer 1 of a page that is not rightmost holds its **high key**: an upper bound
//!   (exclusive) of every item on the page, equal to the first item's `(key, tid)` of its right
//!   sibling at the time of the split.
//! * The first data item of an internal page is "minus infinity": its key and tid are not
//!   compared (stored empty), only its downlink is used.
//! * A pivot (an internal item or a high key) is `(key, tid)` of the first item of the page
//!   to its right at split time; the subtree under a downlink holds items `>= pivot` and `<`
//!   the next pivot (or the page's high key).
//!
//! Block 0 is the meta page: one item holding [`Meta`]; its special area has [`FLAG_META`].
//! Left/right links use 0 for "none" (block 0 is never a sibling).

use super::Tid;
use crate::storage::{page, BlockNumber};
use std::cmp::Ordering;

/// Bytes of special space on every B-tree page.
pub const SPECIAL_SIZE: usize = 16;
/// Bytes before the key in an item.
pub const ITEM_HEADER: usize = 10;
/// "No sibling" in a left or right link.
pub const P_NONE: BlockNumber = 0;

pub const FLAG_LEAF: u16 = 0x01;
pub const FLAG_ROOT: u16 = 0x02;
pub const FLAG_META: u16 = 0x04;

/// Magic number in the meta page (PostgreSQL's BTREE_MAGIC).
pub const META_MAGIC: u32 = 0x053162;
pub const META_VERSION: u32 = 1;

/// The special area of a B-tree page (PostgreSQL's BTPageOpaqueData).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opaque {
    pub left: BlockNumber,
    pub right: BlockNumber,
    pub level: u32,
    pub flags: u16,
}

impl Opaque {
    pub fn is_leaf(&self) -> bool {
        self.flags & FLAG_LEAF != 0
    }
    pub fn is_root(&self) -> bool {
        self.flags & FLAG_ROOT != 0
    }
    pub fn is_rightmost(&self) -> bool {
        self.right == P_NONE
    }
    /// Offset of the first data item (after the high key, if any).
    pub fn first_data(&self) -> u16 {
        if self.is_rightmost() {
            1
        } else {
            2
        }
    }
}

pub fn opaque(p: &[u8]) -> Opaque {
    let s = p.len() - SPECIAL_SIZE;
    let r32 = |at: usize| u32::from_le_bytes(p[s + at..s + at + 4].try_into().expect("4 bytes"));
    Opaque { left: r32(0), right: r32(4), level: r32(8), flags: u16::from_le_bytes([p[s + 12], p[s + 13]]) }
}

pub fn set_opaque(p: &mut [u8], o: &Opaque) {
    let s = p.len() - SPECIAL_SIZE;
    p[s..s + 4].copy_from_slice(&o.left.to_le_bytes());
    p[s + 4..s + 8].copy_from_slice(&o.right.to_le_bytes());
    p[s + 8..s + 12].copy_from_slice(&o.level.to_le_bytes());
    p[s + 12..s + 14].copy_from_slice(&o.flags.to_le_bytes());
    p[s + 14..s + 16].fill(0);
}

/// Initializes an empty B-tree page.
pub fn init(p: &mut [u8], o: &Opaque) {
    page::init(p, SPECIAL_SIZE);
    set_opaque(p, o);
}

/// True if the page has the B-tree special size (a sanity check on pages read).
pub fn looks_like_btree(p: &[u8]) -> bool {
    !page::is_new(p) && page::special(p) == p.len() - SPECIAL_SIZE
}

/// The meta page's contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub root: BlockNumber,
    pub level: u32,
}

pub fn init_meta(p: &mut [u8], m: &Meta) {
    init(p, &Opaque { left: P_NONE, right: P_NONE, level: 0, flags: FLAG_META });
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&META_MAGIC.to_le_bytes());
    b[4..8].copy_from_slice(&META_VERSION.to_le_bytes());
    b[8..12].copy_from_slice(&m.root.to_le_bytes());
    b[12..16].copy_from_slice(&m.level.to_le_bytes());
    page::add_item(p, &b).expect("an empty page holds the meta item");
}

/// Reads the meta page; None if it is not one.
pub fn read_meta(p: &[u8]) -> Option<Meta> {
    if !looks_like_btree(p) || opaque(p).flags & FLAG_META == 0 || page::max_offset(p) < 1 {
        return None;
    }
    let b = page::item(p, 1)?;
    if b.len() < 16 || u32::from_le_bytes(b[0..4].try_into().ok()?) != META_MAGIC {
        return None;
    }
    Some(Meta { root: u32::from_le_bytes(b[8..12].try_into().ok()?), level: u32::from_le_bytes(b[12..16].try_into().ok()?) })
}

// ---- items ----

/// Builds an item into `out` (cleared first).
pub fn make_item(out: &mut Vec<u8>, child: BlockNumber, tid: Tid, key: &[u8]) {
    out.clear();
    out.reserve(ITEM_HEADER + key.len());
    out.extend_from_slice(&child.to_le_bytes());
    out.extend_from_slice(&tid.0.to_le_bytes());
    out.extend_from_slice(&tid.1.to_le_bytes());
    out.extend_from_slice(key);
}

pub fn item_vec(child: BlockNumber, tid: Tid, key: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    make_item(&mut v, child, tid, key);
    v
}

#[inline]
pub fn item_child(it: &[u8]) -> BlockNumber {
    u32::from_le_bytes(it[0..4].try_into().expect("item header"))
}

#[inline]
pub fn item_tid(it: &[u8]) -> Tid {
    (u32::from_le_bytes(it[4..8].try_into().expect("item header")), u16::from_le_bytes([it[8], it[9]]))
}

#[inline]
pub fn item_key(it: &[u8]) -> &[u8] {
    &it[ITEM_HEADER..]
}

/// The item at `off`, which must be a normal line pointer with at least an item header.
#[inline]
pub fn get(p: &[u8], off: u16) -> &[u8] {
    let it = page::item(p, off).expect("B-tree pages hold only normal line pointers");
    debug_assert!(it.len() >= ITEM_HEADER);
    it
}

/// The high key of a page that is not rightmost.
pub fn high_key<'p>(p: &'p [u8], o: &Opaque) -> Option<&'p [u8]> {
    (!o.is_rightmost()).then(|| get(p, 1))
}

/// Where the search stands relative to items with an equal key: a search for "key" alone is
/// `NegInf` (before every TID: finds the first entry of the key); `PosInf` is after them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TidBound {
    NegInf,
    At(Tid),
    PosInf,
}

/// A search key: an encoded key and a position among the TIDs of that key.
#[derive(Clone, Copy, Debug)]
pub struct ScanKey<'k> {
    pub key: &'k [u8],
    pub tid: TidBound,
}

/// Byte-wise (lexicographic) order of two keys, as `<[u8]>::cmp`, without a call into the C
/// library's memcmp: keys are short (an int4 key is 5 bytes), and the searches of a point
/// lookup make dozens of comparisons. Eight bytes at a time as big-endian integers (whose
/// order is the bytes' order), then the rest, then the shorter first.
#[inline]
pub fn key_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_be_bytes(a[i..i + 8].try_into().expect("8 bytes"));
        let y = u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    while i < n {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
        i += 1;
    }
    a.len().cmp(&b.len())
}

impl ScanKey<'_> {
    /// Compares the search key with an item (or pivot).
    #[inline]
    pub fn cmp_item(&self, it: &[u8]) -> Ordering {
        match key_cmp(self.key, item_key(it)) {
            Ordering::Equal => match self.tid {
                TidBound::NegInf => Ordering::Less,
                TidBound::PosInf => Ordering::Greater,
                TidBound::At(t) => t.cmp(&item_tid(it)),
            },
            o => o,
        }
    }
}

/// Compares two items by `(key, tid)`.
#[inline]
pub fn cmp_items(a: &[u8], b: &[u8]) -> Ordering {
    key_cmp(item_key(a), item_key(b)).then_with(|| item_tid(a).cmp(&item_tid(b)))
}

/// True if a search for `sk` must move right from this page: `sk >= high key`.
#[inline]
pub fn beyond_high_key(p: &[u8], o: &Opaque, sk: &ScanKey<'_>) -> bool {
    match high_key(p, o) {
        Some(hk) => sk.cmp_item(hk) != Ordering::Less,
        None => false,
    }
}

/// Leaf search: the offset of the first data item `>= sk` (max_offset + 1 if none).
pub fn leaf_lower_bound(p: &[u8], o: &Opaque, sk: &ScanKey<'_>) -> u16 {
    let (mut lo, mut hi) = (o.first_data(), page::max_offset(p) + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if sk.cmp_item(get(p, mid)) == Ordering::Greater {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Internal search: the offset of the downlink to follow — the last item `<= sk`, counting the
/// first data item as minus infinity.
pub fn internal_child_offset(p: &[u8], o: &Opaque, sk: &ScanKey<'_>) -> u16 {
    let first = o.first_data();
    let max = page::max_offset(p);
    debug_assert!(first <= max, "internal page without items");
    // First item > sk among first+1 ..= max; the answer is the one before it.
    let (mut lo, mut hi) = (first + 1, max + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if sk.cmp_item(get(p, mid)) == Ordering::Less {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo - 1
}

/// Inserts `data` as line pointer `off` (1-based, at most max_offset + 1), shifting later line
/// pointers up (PageAddItem with a given offset). Returns false if it does not fit.
pub fn insert_at(p: &mut [u8], off: u16, data: &[u8]) -> bool {
    let max = page::max_offset(p);
    assert!(off >= 1 && off <= max + 1, "item offset {off} on a page with {max} items");
    let Some(got) = page::add_item(p, data) else { return false };
    debug_assert_eq!(got, max + 1);
    if off <= max {
        let (_, at, len) = page::item_id(p, got);
        for i in (off..=max).rev() {
            let (f, a, l) = page::item_id(p, i);
            page::set_item_id(p, i + 1, f, a, l);
        }
        page::set_item_id(p, off, page::LP_NORMAL, at, len);
    }
    true
}

/// Rewrites a page keeping only the items `keep` says yes to (the special area and header
/// flags stay): items move, so this is done under the exclusive lock only (readers copy what
/// they need under their shared lock and never keep pointers into a page).
pub fn retain_items(p: &mut [u8], mut keep: impl FnMut(u16, &[u8]) -> bool) -> usize {
    let o = opaque(p);
    let flags = page::flags(p);
    let lsn = page::lsn(p);
    let old = p.to_vec();
    init(p, &o);
    page::set_flags(p, flags);
    page::set_lsn(p, lsn);
    let mut removed = 0;
    for off in 1..=page::max_offset(&old) {
        let it = get(&old, off);
        if keep(off, it) {
            page::add_item(p, it).expect("a subset of the items fits");
        } else {
            removed += 1;
        }
    }
    removed
}

/// Usable bytes on a page (for items and their line pointers).
pub fn usable_bytes(block_size: usize) -> usize {
    block_size - page::PAGE_HEADER_SIZE - SPECIAL_SIZE
}

/// The largest item accepted: three items and a high key must fit on a page (as PostgreSQL's
/// BTMaxItemSize, one third of a page).
pub fn max_item_size(block_size: usize) -> usize {
    (usable_bytes(block_size) / 4 - page::LINE_POINTER_SIZE) & !7
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_cmp_is_the_byte_order() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let (la, lb) = ((next() % 24) as usize, (next() % 24) as usize);
            // Few distinct byte values, so long equal prefixes and ties are common.
            let a: Vec<u8> = (0..la).map(|_| (next() % 3) as u8 * 127).collect();
            let mut b: Vec<u8> = (0..lb).map(|_| (next() % 3) as u8 * 127).collect();
            if next() % 4 == 0 {
                b = a.clone();
                if let Some(last) = b.last_mut().filter(|_| next() % 2 == 0) {
                    *last = last.wrapping_add(1);
                }
            }
            assert_eq!(key_cmp(&a, &b), a.as_slice().cmp(b.as_slice()), "{a:?} {b:?}");
        }
    }

    fn leaf(bs: usize) -> Vec<u8> {
        let mut p = vec![0u8; bs];
        init(&mut p, &Opaque { left: P_NONE, right: P_NONE, level: 0, flags: FLAG_LEAF });
        p
    }

    #[test]
    fn insert_at_keeps_order() {
        let mut p = leaf(8192);
        for (i, k) in [b"b", b"d", b"a", b"c"].iter().enumerate() {
            let o = opaque(&p);
            let sk = ScanKey { key: &k[..], tid: TidBound::At((i as u32, 1)) };
            let at = leaf_lower_bound(&p, &o, &sk);
            assert!(insert_at(&mut p, at, &item_vec(0, (i as u32, 1), &k[..])));
        }
        let keys: Vec<&[u8]> = (1..=page::max_offset(&p)).map(|o| item_key(get(&p, o))).collect();
        assert_eq!(keys, vec![&b"a"[..], b"b", b"c", b"d"]);
        let removed = retain_items(&mut p, |_, it| item_key(it) != b"b");
        assert_eq!(removed, 1);
        assert_eq!(page::max_offset(&p), 3);
        assert_eq!(opaque(&p).flags, FLAG_LEAF);
    }

    #[test]
    fn meta_round_trip() {
        let mut p = vec![0u8; 4096];
        init_meta(&mut p, &Meta { root: 7, level: 2 });
        assert_eq!(read_meta(&p), Some(Meta { root: 7, level: 2 }));
        let l = leaf(4096);
        assert_eq!(read_meta(&l), None);
        assert!(max_item_size(8192) * 3 + ITEM_HEADER < usable_bytes(8192));
    }

    #[test]
    fn internal_search_treats_first_as_minus_infinity() {
        let mut p = vec![0u8; 8192];
        init(&mut p, &Opaque { left: P_NONE, right: P_NONE, level: 1, flags: 0 });
        page::add_item(&mut p, &item_vec(10, (0, 0), b"")).unwrap();
        page::add_item(&mut p, &item_vec(11, (5, 1), b"m")).unwrap();
        page::add_item(&mut p, &item_vec(12, (0, 1), b"t")).unwrap();
        let o = opaque(&p);
        let at = |k: &[u8], t| item_child(get(&p, internal_child_offset(&p, &o, &ScanKey { key: k, tid: t })));
        assert_eq!(at(b"a", TidBound::NegInf), 10);
        assert_eq!(at(b"m", TidBound::NegInf), 10);
        assert_eq!(at(b"m", TidBound::At((5, 1))), 11);
        assert_eq!(at(b"m", TidBound::PosInf), 11);
        assert_eq!(at(b"z", TidBound::NegInf), 12);
    }
}

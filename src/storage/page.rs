//! Slotted pages (PostgreSQL's bufpage.c): a header, an array of line pointers growing up,
//! tuples growing down, and an optional special space at the end.
//!
//! ```text
//!  0        8      12     14       16       18         20        22   24
//!  ┌────────┬──────┬──────┬────────┬────────┬──────────┬─────────┬────┐
//!  │ pd_lsn │ crc  │flags │pd_lower│pd_upper│pd_special│size|ver │ -- │ line pointers →
//!  └────────┴──────┴──────┴────────┴────────┴──────────┴─────────┴────┘
//!        … free space (pd_lower .. pd_upper) …   ← tuples │ special space
//! ```
//!
//! A line pointer is 4 bytes: offset (15 bits), flags (2 bits), length (15 bits), as PostgreSQL's
//! ItemIdData. Offsets and lengths fit 15 bits because block_size ≤ 32768.
//!
//! Invariants:
//! 1. `24 ≤ pd_lower ≤ pd_upper ≤ pd_special ≤ block_size` on every initialized page; a page of
//!    all zeros is "new" (never initialized) and valid.
//! 2. The checksum is CRC32C over the block number, the LSN and every byte after the checksum
//!    field, so a page written to the wrong block fails verification too. It is set only on a
//!    private copy just before the write and checked on every read from disk.
//! 3. A line pointer's number (the TID) never changes while it is in use; tuple *data* moves
//!    only under the page's exclusive content lock ([`repair_fragmentation`]: pruning and
//!    VACUUM), and readers copy what they need under the shared lock, so no reader ever holds a
//!    pointer into a page across a lock release.
//! 4. `PD_HAS_FREE_LINES` is a hint: when clear, no line pointer is unused; when set, one may be
//!    ([`find_unused`] clears it when it finds none).
//! 5. `PD_ALL_VISIBLE` is not a hint: a scan that finds it set skips every per-tuple
//!    visibility check on the page. It is set only by VACUUM, WAL-logged, under the exclusive
//!    content lock, after checking every tuple; every change that could make a tuple
//!    invisible to some snapshot clears it in the same critical section as the change, at do
//!    time and at redo alike: [`add_item`] and [`add_item_at`] clear it here, and the heap's
//!    set-xmax / set-xmin operations clear it (`access::heap::dml::apply_ops`).

use crate::error::{sqlstate, PgError, Result};

pub const PAGE_HEADER_SIZE: usize = 24;
pub const LINE_POINTER_SIZE: usize = 4;
pub const PAGE_LAYOUT_VERSION: u16 = 1;

/// Line pointer states (ItemIdData.lp_flags).
pub const LP_UNUSED: u8 = 0;
pub const LP_NORMAL: u8 = 1;
pub const LP_REDIRECT: u8 = 2;
pub const LP_DEAD: u8 = 3;

/// Page header flag: some line pointer may be unused (a hint, invariant 4).
pub const PD_HAS_FREE_LINES: u16 = 0x0001;
/// Page header flag (heap pages, PostgreSQL's PD_ALL_VISIBLE): every tuple on the page is
/// visible to every snapshot that exists or will exist (invariant 5).
pub const PD_ALL_VISIBLE: u16 = 0x0004;

/// 1-based position of a line pointer on its page.
pub type OffsetNumber = u16;

#[inline]
fn rd16(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}
#[inline]
fn wr16(p: &mut [u8], at: usize, v: u16) {
    p[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

pub fn lsn(p: &[u8]) -> u64 {
    u64::from_le_bytes(p[0..8].try_into().expect("8 bytes"))
}
pub fn set_lsn(p: &mut [u8], lsn: u64) {
    p[0..8].copy_from_slice(&lsn.to_le_bytes());
}
pub fn lower(p: &[u8]) -> usize {
    rd16(p, 14) as usize
}
pub fn upper(p: &[u8]) -> usize {
    rd16(p, 16) as usize
}
pub fn special(p: &[u8]) -> usize {
    rd16(p, 18) as usize
}
pub fn flags(p: &[u8]) -> u16 {
    rd16(p, 12)
}
pub fn set_flags(p: &mut [u8], f: u16) {
    wr16(p, 12, f)
}

/// True for a page that was never initialized (PageIsNew).
#[inline]
pub fn is_new(p: &[u8]) -> bool {
    upper(p) == 0
}

/// Initializes an empty page with `special_size` bytes of special space.
pub fn init(p: &mut [u8], special_size: usize) {
    let bs = p.len();
    assert!(special_size < bs - PAGE_HEADER_SIZE);
    p.fill(0);
    let sp = bs - special_size;
    wr16(p, 14, PAGE_HEADER_SIZE as u16);
    wr16(p, 16, sp as u16);
    wr16(p, 18, sp as u16);
    // pd_pagesize_version: size in the high bits as PostgreSQL does (size is a multiple of 256).
    wr16(p, 20, ((bs as u32 & 0xFF00) as u16) | PAGE_LAYOUT_VERSION | if bs == 32768 { 0x8000 } else { 0 });
}

/// Number of line pointers.
#[inline]
pub fn max_offset(p: &[u8]) -> OffsetNumber {
    let l = lower(p);
    if l <= PAGE_HEADER_SIZE {
        0
    } else {
        ((l - PAGE_HEADER_SIZE) / LINE_POINTER_SIZE) as OffsetNumber
    }
}

/// (flags, offset, length) of line pointer `off` (1-based).
#[inline]
pub fn item_id(p: &[u8], off: OffsetNumber) -> (u8, usize, usize) {
    debug_assert!(off >= 1 && off <= max_offset(p));
    let at = PAGE_HEADER_SIZE + (off as usize - 1) * LINE_POINTER_SIZE;
    let v = u32::from_le_bytes(p[at..at + 4].try_into().expect("4 bytes"));
    let lp_off = (v & 0x7FFF) as usize;
    let lp_flags = ((v >> 15) & 3) as u8;
    let lp_len = (v >> 17) as usize;
    (lp_flags, lp_off, lp_len)
}

pub fn set_item_id(p: &mut [u8], off: OffsetNumber, flags: u8, at: usize, len: usize) {
    debug_assert!(at < 0x8000 && len < 0x8000);
    let v = (at as u32) | ((flags as u32) << 15) | ((len as u32) << 17);
    let pos = PAGE_HEADER_SIZE + (off as usize - 1) * LINE_POINTER_SIZE;
    p[pos..pos + 4].copy_from_slice(&v.to_le_bytes());
}

/// The item bytes at line pointer `off`, if it is LP_NORMAL.
#[inline]
pub fn item(p: &[u8], off: OffsetNumber) -> Option<&[u8]> {
    let (f, at, len) = item_id(p, off);
    (f == LP_NORMAL).then(|| &p[at..at + len])
}

pub fn item_mut(p: &mut [u8], off: OffsetNumber) -> Option<&mut [u8]> {
    let (f, at, len) = item_id(p, off);
    (f == LP_NORMAL).then(|| &mut p[at..at + len])
}

/// Free bytes available for one more item with its line pointer (PageGetFreeSpace).
#[inline]
pub fn free_space(p: &[u8]) -> usize {
    if is_new(p) {
        return 0;
    }
    (upper(p) - lower(p)).saturating_sub(LINE_POINTER_SIZE)
}

/// Appends an item; returns its offset, or None if it does not fit.
pub fn add_item(p: &mut [u8], data: &[u8]) -> Option<OffsetNumber> {
    let (l, u) = (lower(p), upper(p));
    let len = data.len();
    if u < l + LINE_POINTER_SIZE + len {
        return None;
    }
    let new_upper = u - len;
    p[new_upper..u].copy_from_slice(data);
    set_flags(p, flags(p) & !PD_ALL_VISIBLE);
    let off = max_offset(p) + 1;
    wr16(p, 14, (l + LINE_POINTER_SIZE) as u16);
    wr16(p, 16, new_upper as u16);
    // An empty item (VACUUM's placeholder for a slot it then marks unused) has no bytes to
    // point at: offset 0, since on a 32 kB page `new_upper` may be 32768, past what the line
    // pointer's 15 bits hold.
    set_item_id(p, off, LP_NORMAL, if len == 0 { 0 } else { new_upper }, len);
    debug_assert!(lower(p) <= upper(p));
    Some(off)
}

/// Drops the unused line pointers at the end of the array (PostgreSQL's
/// PageTruncateLinePointerArray), giving the page their 4 bytes each: a page VACUUM emptied
/// holds a tuple of the largest size again. Their numbers could be reused either way; no index
/// entry or HOT chain names an unused line pointer, and a TID past the array reads as absent.
pub fn truncate_unused_tail(p: &mut [u8]) {
    let mut max = max_offset(p);
    while max > 0 && item_id(p, max).0 == LP_UNUSED {
        max -= 1;
    }
    wr16(p, 14, (PAGE_HEADER_SIZE + max as usize * LINE_POINTER_SIZE) as u16);
}

/// The first unused line pointer, if the page has one (clears the hint when it has none).
pub fn find_unused(p: &mut [u8]) -> Option<OffsetNumber> {
    if flags(p) & PD_HAS_FREE_LINES == 0 {
        return None;
    }
    let found = (1..=max_offset(p)).find(|&off| item_id(p, off).0 == LP_UNUSED);
    if found.is_none() {
        set_flags(p, flags(p) & !PD_HAS_FREE_LINES);
    }
    found
}

/// Puts an item at line pointer `off`: the next new one (`max_offset + 1`, as [`add_item`]) or
/// an unused one. None if it does not fit or `off` is neither.
pub fn add_item_at(p: &mut [u8], off: OffsetNumber, data: &[u8]) -> Option<()> {
    let max = max_offset(p);
    if off == max + 1 {
        return (add_item(p, data)? == off).then_some(());
    }
    if off == 0 || off > max || item_id(p, off).0 != LP_UNUSED || data.is_empty() {
        return None;
    }
    let (l, u) = (lower(p), upper(p));
    if u < l + data.len() {
        return None;
    }
    let new_upper = u - data.len();
    p[new_upper..u].copy_from_slice(data);
    set_flags(p, flags(p) & !PD_ALL_VISIBLE);
    wr16(p, 16, new_upper as u16);
    set_item_id(p, off, LP_NORMAL, new_upper, data.len());
    Some(())
}

/// Packs the data of every LP_NORMAL item at the page's end, in line pointer order, so that
/// the space of items made unused, dead or redirected becomes free (PageRepairFragmentation).
/// Line pointer numbers and states do not change (invariant 3); the result depends only on
/// the page's items, so redo rebuilds the same page.
pub fn repair_fragmentation(p: &mut [u8]) {
    let old = p.to_vec();
    let sp = special(&old);
    let mut upper = sp;
    for off in 1..=max_offset(&old) {
        let (f, at, len) = item_id(&old, off);
        if f != LP_NORMAL || len == 0 {
            continue;
        }
        upper -= len;
        p[upper..upper + len].copy_from_slice(&old[at..at + len]);
        set_item_id(p, off, LP_NORMAL, upper, len);
    }
    let lo = lower(p);
    debug_assert!(upper >= lo);
    p[lo..upper].fill(0);
    wr16(p, 16, upper as u16);
}

/// The page checksum for block `block` (over everything but the checksum field).
pub fn checksum(p: &[u8], block: u32) -> u32 {
    let c = crc32c::crc32c(&block.to_le_bytes());
    let c = crc32c::crc32c_append(c, &p[0..8]);
    crc32c::crc32c_append(c, &p[12..])
}

pub fn set_checksum(p: &mut [u8], block: u32) {
    let c = checksum(p, block);
    p[8..12].copy_from_slice(&c.to_le_bytes());
}

fn stored_checksum(p: &[u8]) -> u32 {
    u32::from_le_bytes(p[8..12].try_into().expect("4 bytes"))
}

/// Checks a page just read from disk (PageIsVerified): header sanity and checksum, or all zeros.
/// `what` names the relation in the error, e.g. `base/16384`.
pub fn verify(p: &[u8], block: u32, what: &str) -> Result<()> {
    verify_with(p, block, || what.to_string())
}

/// [`verify`] with the relation's name computed only if the page is bad (the read path calls
/// this for every page it reads).
pub fn verify_with(p: &[u8], block: u32, what: impl FnOnce() -> String) -> Result<()> {
    if is_new(p) {
        if p.iter().all(|&b| b == 0) {
            return Ok(());
        }
        return Err(invalid_page(block, &what(), "page header is zero but the page is not all zeros".into()));
    }
    let (l, u, s) = (lower(p), upper(p), special(p));
    if !(l >= PAGE_HEADER_SIZE && l <= u && u <= s && s <= p.len()) {
        return Err(invalid_page(block, &what(), format!("corrupt page header: lower {l}, upper {u}, special {s}")));
    }
    let computed = checksum(p, block);
    let stored = stored_checksum(p);
    if computed != stored {
        return Err(invalid_page(
            block,
            &what(),
            format!("page verification failed, calculated checksum {computed} but expected {stored}"),
        ));
    }
    Ok(())
}

fn invalid_page(block: u32, what: &str, detail: String) -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, format!("invalid page in block {block} of relation {what}")).with_detail(detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn add_and_read_items() {
        let mut p = vec![0u8; 8192];
        init(&mut p, 0);
        assert_eq!(max_offset(&p), 0);
        let a = add_item(&mut p, b"hello").unwrap();
        let b = add_item(&mut p, b"world!").unwrap();
        assert_eq!((a, b), (1, 2));
        assert_eq!(item(&p, 1).unwrap(), b"hello");
        assert_eq!(item(&p, 2).unwrap(), b"world!");
        set_checksum(&mut p, 3);
        verify(&p, 3, "base/1").unwrap();
        assert!(verify(&p, 4, "base/1").is_err(), "wrong block must fail");
        p[5000] ^= 1;
        let e = verify(&p, 3, "base/1").unwrap_err();
        assert_eq!(e.message, "invalid page in block 3 of relation base/1");
    }

    #[test]
    fn all_zero_page_is_valid() {
        let p = vec![0u8; 4096];
        verify(&p, 0, "x").unwrap();
        let mut q = p.clone();
        q[100] = 1;
        assert!(verify(&q, 0, "x").is_err());
    }

    proptest! {
        #[test]
        fn items_round_trip(items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..600), 0..40), bs in prop_oneof![Just(4096usize), Just(8192), Just(32768)]) {
            let mut p = vec![0u8; bs];
            init(&mut p, 0);
            let mut stored = Vec::new();
            for it in &items {
                let before = free_space(&p);
                match add_item(&mut p, it) {
                    Some(off) => stored.push((off, it.clone())),
                    // Refused only when it does not fit, or no line pointer fits at all.
                    None => prop_assert!(before < it.len() || upper(&p) - lower(&p) < LINE_POINTER_SIZE),
                }
            }
            set_checksum(&mut p, 9);
            prop_assert!(verify(&p, 9, "r").is_ok());
            for (off, it) in stored {
                prop_assert_eq!(item(&p, off).unwrap(), &it[..]);
            }
        }
    }
}

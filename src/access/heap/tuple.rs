//! Heap tuple format.
//!
//! ```text
//!  0      8      16     20     24        28       30         32      34     35
//!  ┌──────┬──────┬──────┬──────┬─────────┬────────┬──────────┬───────┬──────┬──────────────┬──────┐
//!  │ xmin │ xmax │ cmin │ cmax │ctid.blk │ctid.off│ infomask │ natts │ hoff │ null bitmap  │ data │
//!  └──────┴──────┴──────┴──────┴─────────┴────────┴──────────┴───────┴──────┴──────────────┴──────┘
//! ```
//!
//! Attributes follow in column order, NULLs omitted (bit i of the null bitmap set = column i
//! is present, as PostgreSQL's t_bits). Fixed-width values are stored little-endian without
//! padding; variable-length values carry a varlena header:
//!
//! - `0xxxxxxx`: 1-byte header, payload length 0..=127;
//! - `10xxxxxx xxxxxxxx xxxxxxxx xxxxxxxx` (big-endian): 4-byte header, length < 2^30;
//! - `0xC0` followed by a [`ToastPointer`]: the value is stored out of line.
//!
//! Invariants:
//! 1. `hoff = HEADER_SIZE + bitmap bytes`; the bitmap is present iff HASNULL is set.
//! 2. A tuple's length is its line pointer's length; deforming never reads past it (checked).
//! 3. xmin/cmin are set before the tuple is placed on a page, and change afterwards only when
//!    ROLLBACK TO SAVEPOINT invalidates them; that and every xmax/cmax change happen under the
//!    page's exclusive content lock.

use crate::storage::BlockNumber;
use crate::txn::{CommandId, Xid};
use crate::types::SqlType;

pub const HEADER_SIZE: usize = 35;
pub const HEAP_HASNULL: u16 = 0x0001;
pub const HEAP_HASEXTERNAL: u16 = 0x0004;
/// This version was updated in place on its page (HOT): its ctid names the next version of
/// the chain, a heap-only tuple on the same page (`heap::prune` module doc).
pub const HEAP_HOT_UPDATED: u16 = 0x4000;
/// A heap-only tuple: no index entry points at it; it is reached through its chain's root.
pub const HEAP_ONLY_TUPLE: u16 = 0x8000;

pub const VARLENA_EXTERNAL_TAG: u8 = 0xC0;
pub const TOAST_POINTER_SIZE: usize = 18;

#[inline]
fn rd_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
#[inline]
fn rd_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
#[inline]
fn rd_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub fn xmin(t: &[u8]) -> Xid {
    rd_u64(t, 0)
}
pub fn xmax(t: &[u8]) -> Xid {
    rd_u64(t, 8)
}
pub fn cmin(t: &[u8]) -> CommandId {
    rd_u32(t, 16)
}
pub fn cmax(t: &[u8]) -> CommandId {
    rd_u32(t, 20)
}
pub fn infomask(t: &[u8]) -> u16 {
    rd_u16(t, 30)
}
pub fn natts(t: &[u8]) -> usize {
    rd_u16(t, 32) as usize
}
pub fn hoff(t: &[u8]) -> usize {
    t[34] as usize
}

pub fn is_hot_updated(t: &[u8]) -> bool {
    infomask(t) & HEAP_HOT_UPDATED != 0
}
pub fn is_heap_only(t: &[u8]) -> bool {
    infomask(t) & HEAP_ONLY_TUPLE != 0
}
/// Sets or clears infomask bits `bits`.
pub fn set_infomask_bits(t: &mut [u8], bits: u16, on: bool) {
    let m = if on { infomask(t) | bits } else { infomask(t) & !bits };
    t[30..32].copy_from_slice(&m.to_le_bytes());
}

pub fn set_xmin(t: &mut [u8], xid: Xid, cid: CommandId) {
    t[0..8].copy_from_slice(&xid.to_le_bytes());
    t[16..20].copy_from_slice(&cid.to_le_bytes());
}
pub fn set_xmax(t: &mut [u8], xid: Xid, cid: CommandId) {
    t[8..16].copy_from_slice(&xid.to_le_bytes());
    t[20..24].copy_from_slice(&cid.to_le_bytes());
}
pub fn set_ctid(t: &mut [u8], block: BlockNumber, off: u16) {
    t[24..28].copy_from_slice(&block.to_le_bytes());
    t[28..30].copy_from_slice(&off.to_le_bytes());
}
pub fn ctid(t: &[u8]) -> (BlockNumber, u16) {
    (rd_u32(t, 24), rd_u16(t, 28))
}

/// Where an out-of-line value lives: a chain of chunks in the table's TOAST relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToastPointer {
    pub toast_rel: u32,
    pub raw_len: u32,
    pub first_block: BlockNumber,
    pub first_off: u16,
    pub chunks: u32,
}

impl ToastPointer {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(VARLENA_EXTERNAL_TAG);
        out.extend_from_slice(&self.toast_rel.to_le_bytes());
        out.extend_from_slice(&self.raw_len.to_le_bytes());
        out.extend_from_slice(&self.first_block.to_le_bytes());
        out.extend_from_slice(&self.first_off.to_le_bytes());
        out.extend_from_slice(&self.chunks.to_le_bytes());
    }

    pub fn decode(b: &[u8]) -> ToastPointer {
        debug_assert_eq!(b.len(), TOAST_POINTER_SIZE);
        ToastPointer {
            toast_rel: rd_u32(b, 0),
            raw_len: rd_u32(b, 4),
            first_block: rd_u32(b, 8),
            first_off: rd_u16(b, 12),
            chunks: rd_u32(b, 14),
        }
    }
}

/// A deformed attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attr<'a> {
    /// The stored form (for varlena: the payload without its header).
    Inline(&'a [u8]),
    External(ToastPointer),
}

/// Appends a varlena header and payload.
pub fn put_varlena(out: &mut Vec<u8>, payload: &[u8]) {
    if payload.len() <= 127 {
        out.push(payload.len() as u8);
    } else {
        assert!(payload.len() < 1 << 30, "varlena too long");
        out.extend_from_slice(&(0x8000_0000u32 | payload.len() as u32).to_be_bytes());
    }
    out.extend_from_slice(payload);
}

/// Why a tuple could not be deformed: it is corrupt.
#[derive(Debug)]
pub struct Corrupt(pub &'static str);

/// Splits a tuple into its attributes (None = NULL). `types` must be the table's columns;
/// a tuple with fewer attributes (a column added later) reads as NULL for the rest.
pub fn deform<'a>(t: &'a [u8], types: &[SqlType], out: &mut Vec<Option<Attr<'a>>>) -> Result<(), Corrupt> {
    out.clear();
    deform_each(t, types, |_, a| {
        out.push(a);
        true
    })
}

/// Calls `f` with each attribute of the tuple in column order (None = NULL), as [`deform`]
/// splits them, until `f` returns false (a caller that needs no later column stops there and
/// the rest of the tuple is not walked).
#[inline]
pub fn deform_each<'a>(t: &'a [u8], types: &[SqlType], mut f: impl FnMut(usize, Option<Attr<'a>>) -> bool) -> Result<(), Corrupt> {
    if t.len() < HEADER_SIZE {
        return Err(Corrupt("tuple shorter than its header"));
    }
    let n = natts(t);
    let h = hoff(t);
    if h > t.len() || h < HEADER_SIZE {
        return Err(Corrupt("bad t_hoff"));
    }
    let has_null = infomask(t) & HEAP_HASNULL != 0;
    let bitmap = &t[HEADER_SIZE..h];
    let mut pos = h;
    for (i, ty) in types.iter().enumerate() {
        let a = if i >= n || (has_null && bitmap.get(i / 8).is_none_or(|b| b & (1 << (i % 8)) == 0)) {
            None
        } else if let Some(len) = ty.fixed_len() {
            let v = t.get(pos..pos + len).ok_or(Corrupt("fixed attribute past tuple end"))?;
            pos += len;
            Some(Attr::Inline(v))
        } else {
            let b0 = *t.get(pos).ok_or(Corrupt("varlena header past tuple end"))?;
            if b0 & 0x80 == 0 {
                let len = b0 as usize;
                let v = t.get(pos + 1..pos + 1 + len).ok_or(Corrupt("short varlena past tuple end"))?;
                pos += 1 + len;
                Some(Attr::Inline(v))
            } else if b0 == VARLENA_EXTERNAL_TAG {
                let v = t.get(pos + 1..pos + 1 + TOAST_POINTER_SIZE).ok_or(Corrupt("toast pointer past tuple end"))?;
                pos += 1 + TOAST_POINTER_SIZE;
                Some(Attr::External(ToastPointer::decode(v)))
            } else {
                let hdr = t.get(pos..pos + 4).ok_or(Corrupt("varlena header past tuple end"))?;
                let len = (u32::from_be_bytes(hdr.try_into().expect("4")) & 0x3FFF_FFFF) as usize;
                let v = t.get(pos + 4..pos + 4 + len).ok_or(Corrupt("varlena past tuple end"))?;
                pos += 4 + len;
                Some(Attr::Inline(v))
            }
        };
        if !f(i, a) {
            break;
        }
    }
    Ok(())
}

/// Builds tuples column by column into a reusable buffer.
///
/// ```
/// use heapstore::access::heap::tuple::{TupleBuilder, deform, Attr};
/// use heapstore::types::{SqlType, TypeId};
/// let types = [SqlType::new(TypeId::Int4), SqlType::new(TypeId::Text)];
/// let mut b = TupleBuilder::new(2);
/// b.begin();
/// b.push_fixed(&42i32.to_le_bytes());
/// b.push_varlena(b"hello");
/// let t = b.finish().to_vec();
/// let mut attrs = Vec::new();
/// deform(&t, &types, &mut attrs).unwrap();
/// assert_eq!(attrs[1], Some(Attr::Inline(&b"hello"[..])));
/// ```
pub struct TupleBuilder {
    natts: usize,
    buf: Vec<u8>,
    nulls: Vec<bool>,
    /// Data spans of varlena attributes: (column, start, end) in `data`.
    pub(crate) data: Vec<u8>,
    pub(crate) spans: Vec<(usize, usize, usize)>,
    has_external: bool,
}

impl TupleBuilder {
    pub fn new(natts: usize) -> TupleBuilder {
        TupleBuilder {
            natts,
            buf: Vec::with_capacity(256),
            nulls: Vec::with_capacity(natts),
            data: Vec::with_capacity(256),
            spans: Vec::new(),
            has_external: false,
        }
    }

    pub fn begin(&mut self) {
        self.nulls.clear();
        self.data.clear();
        self.spans.clear();
        self.has_external = false;
    }

    pub fn push_null(&mut self) {
        self.nulls.push(true);
    }

    /// Appends a fixed-width value's stored bytes.
    pub fn push_fixed(&mut self, v: &[u8]) {
        self.nulls.push(false);
        self.data.extend_from_slice(v);
    }

    /// Appends a variable-length value's payload.
    pub fn push_varlena(&mut self, payload: &[u8]) {
        let start = self.data.len();
        put_varlena(&mut self.data, payload);
        self.spans.push((self.nulls.len(), start, self.data.len()));
        self.nulls.push(false);
    }

    /// Appends a value by letting `fill` write its stored form; for varlena types the header
    /// is added around what `fill` wrote (no copy for payloads ≤ 127 bytes beyond a 3-byte
    /// shift).
    #[inline]
    pub fn push_with<E>(&mut self, fixed: bool, fill: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<(), E> {
        if fixed {
            fill(&mut self.data)?;
            self.nulls.push(false);
            return Ok(());
        }
        let start = self.data.len();
        self.data.extend_from_slice(&[0, 0, 0, 0]);
        fill(&mut self.data)?;
        let len = self.data.len() - start - 4;
        if len <= 127 {
            self.data[start] = len as u8;
            self.data.copy_within(start + 4.., start + 1);
            self.data.truncate(start + 1 + len);
        } else {
            assert!(len < 1 << 30, "varlena too long");
            self.data[start..start + 4].copy_from_slice(&(0x8000_0000u32 | len as u32).to_be_bytes());
        }
        self.spans.push((self.nulls.len(), start, self.data.len()));
        self.nulls.push(false);
        Ok(())
    }

    /// Payload length of the largest inline varlena at least `min_len` long: (span index, len).
    pub(crate) fn largest_inline(&self, min_len: usize) -> Option<(usize, usize)> {
        self.spans
            .iter()
            .enumerate()
            .filter(|(_, (_, s, e))| self.data[*s] != VARLENA_EXTERNAL_TAG && e - s > min_len)
            .max_by_key(|(_, (_, s, e))| e - s)
            .map(|(i, (_, s, e))| (i, e - s))
    }

    /// The payload of span `i`.
    pub(crate) fn span_payload(&self, i: usize) -> &[u8] {
        let (_, s, e) = self.spans[i];
        let b0 = self.data[s];
        if b0 & 0x80 == 0 {
            &self.data[s + 1..e]
        } else {
            &self.data[s + 4..e]
        }
    }

    /// Replaces span `i` with a toast pointer.
    pub(crate) fn replace_with_pointer(&mut self, i: usize, p: &ToastPointer) {
        let (col, s, e) = self.spans[i];
        let mut enc = Vec::with_capacity(1 + TOAST_POINTER_SIZE);
        p.encode(&mut enc);
        let delta = (e - s) as isize - enc.len() as isize;
        self.data.splice(s..e, enc.iter().copied());
        self.spans[i] = (col, s, s + enc.len());
        for sp in self.spans.iter_mut().skip(i + 1) {
            sp.1 = (sp.1 as isize - delta) as usize;
            sp.2 = (sp.2 as isize - delta) as usize;
        }
        self.has_external = true;
    }

    /// Size the tuple will have.
    pub fn len(&self) -> usize {
        let has_null = self.nulls.iter().any(|&n| n);
        HEADER_SIZE + if has_null { self.natts.div_ceil(8) } else { 0 } + self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nulls.is_empty()
    }

    /// Whether column `i` of the row being built is NULL.
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls.get(i).copied().unwrap_or(true)
    }

    /// Completes the tuple (header with xmin/xmax zero) and returns it.
    pub fn finish(&mut self) -> &[u8] {
        debug_assert_eq!(self.nulls.len(), self.natts, "every column must be pushed");
        let has_null = self.nulls.iter().any(|&n| n);
        let bitmap_len = if has_null { self.natts.div_ceil(8) } else { 0 };
        let hoff = HEADER_SIZE + bitmap_len;
        self.buf.clear();
        self.buf.resize(hoff, 0);
        let mut mask = 0u16;
        if has_null {
            mask |= HEAP_HASNULL;
            for (i, &n) in self.nulls.iter().enumerate() {
                if !n {
                    self.buf[HEADER_SIZE + i / 8] |= 1 << (i % 8);
                }
            }
        }
        if self.has_external {
            mask |= HEAP_HASEXTERNAL;
        }
        self.buf[30..32].copy_from_slice(&mask.to_le_bytes());
        self.buf[32..34].copy_from_slice(&(self.natts as u16).to_le_bytes());
        self.buf[34] = hoff as u8;
        self.buf.extend_from_slice(&self.data);
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TypeId;
    use proptest::prelude::*;

    fn types() -> Vec<SqlType> {
        vec![SqlType::new(TypeId::Int8), SqlType::new(TypeId::Text), SqlType::new(TypeId::Bool), SqlType::new(TypeId::Bytea)]
    }

    proptest! {
        #[test]
        fn tuples_round_trip(vals in proptest::collection::vec(prop_oneof![
            Just(None),
            any::<i64>().prop_map(|v| Some(Err(v))),
            proptest::collection::vec(any::<u8>(), 0..400).prop_map(|v| Some(Ok(v))),
        ], 4..=4)) {
            let tys = types();
            let mut b = TupleBuilder::new(4);
            b.begin();
            let mut expect: Vec<Option<Vec<u8>>> = Vec::new();
            for (i, v) in vals.iter().enumerate() {
                let fixed = tys[i].fixed_len().is_some();
                match v {
                    None => { b.push_null(); expect.push(None); }
                    Some(_) if fixed => {
                        let len = tys[i].fixed_len().unwrap();
                        let bytes = vec![7u8; len];
                        b.push_fixed(&bytes); expect.push(Some(bytes));
                    }
                    Some(Ok(bytes)) => {
                        let bytes = bytes.clone();
                        b.push_with::<()>(false, |o| { o.extend_from_slice(&bytes); Ok(()) }).unwrap();
                        expect.push(Some(bytes));
                    }
                    Some(Err(x)) => {
                        let bytes = x.to_le_bytes().to_vec();
                        b.push_varlena(&bytes); expect.push(Some(bytes));
                    }
                }
            }
            let len = b.len();
            let t = b.finish().to_vec();
            prop_assert_eq!(t.len(), len);
            let mut out = Vec::new();
            deform(&t, &tys, &mut out).unwrap();
            for (a, e) in out.iter().zip(&expect) {
                match (a, e) {
                    (None, None) => {}
                    (Some(Attr::Inline(x)), Some(y)) => prop_assert_eq!(*x, &y[..]),
                    _ => prop_assert!(false, "mismatch {:?} {:?}", a, e),
                }
            }
        }
    }

    #[test]
    fn truncated_tuple_is_reported_not_read_past() {
        let tys = types();
        let mut b = TupleBuilder::new(4);
        b.begin();
        b.push_fixed(&1i64.to_le_bytes());
        b.push_varlena(&[1; 300]);
        b.push_fixed(&[1]);
        b.push_null();
        let t = b.finish().to_vec();
        let mut out = Vec::new();
        assert!(deform(&t[..t.len() - 10], &tys, &mut out).is_err());
    }
}

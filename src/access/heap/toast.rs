//! Out-of-line storage for large values (PostgreSQL's TOAST, without compression).
//!
//! A value whose row would exceed `heapstore.toast_threshold` (default block_size / 4, as
//! PostgreSQL's TOAST_TUPLE_THRESHOLD) is cut into chunks that each fill one page of the
//! table's TOAST relation. Chunks are heap tuples with no attributes and a data area of
//! `next chunk (block u32, offset u16) ‖ payload`; they are inserted last chunk first, so each
//! knows where the next one is, and the row keeps a [`ToastPointer`] to the first.
//!
//! Invariants:
//! 1. Chunks carry the inserting transaction's xmin, so they live and die with their row: a
//!    row version that is deleted or updated has its chunks deleted by the same transaction
//!    and command ([`delete_chunks`]; an update stores its new version's values anew), so
//!    chunks become dead to everyone exactly when their row version does, and VACUUM of the
//!    table reclaims them from the TOAST relation with the table's own horizon.
//! 2. A pointer's chain has exactly `chunks` links and `raw_len` payload bytes; anything else
//!    is reported as corruption naming the TOAST relation and block, never returned.
//! 3. A chunk's xmax is set only by [`delete_chunks`], by the transaction that claimed the row
//!    version pointing at it (its xmax was set first, under `dml` invariant 1).

use super::dml::{ChangeOutcome, HeapRel};
use super::tuple::{self, ToastPointer, TupleBuilder};
use super::BulkInsert;
use crate::buffer::{BufferPool, Pins};
use crate::error::{sqlstate, PgError, Result};
use crate::storage::{page, ForkNumber, RelFileNumber};
use crate::txn::{CommandId, TxnManager, Xid};

/// Payload bytes per chunk for a block size.
pub fn chunk_payload(block_size: usize) -> usize {
    super::max_tuple_size(block_size) - tuple::HEADER_SIZE - 6
}

/// Default threshold above which a row's values go out of line.
pub fn default_threshold(block_size: usize) -> usize {
    block_size / 4
}

/// Moves the largest inline values of the row being built out of line until the row is at most
/// `threshold` bytes (values of 128 bytes or less stay inline).
pub fn toast_row(
    b: &mut TupleBuilder,
    threshold: usize,
    bulk: &mut BulkInsert<'_>,
    toast_rel: RelFileNumber,
    xid: Xid,
    cid: CommandId,
) -> Result<()> {
    while b.len() > threshold {
        let Some((i, _)) = b.largest_inline(128) else { break };
        let payload = b.span_payload(i).to_vec();
        let p = store(bulk, toast_rel, &payload, xid, cid)?;
        b.replace_with_pointer(i, &p);
    }
    Ok(())
}

/// Stores `payload` as a chain of chunks; returns the pointer to it.
pub fn store(bulk: &mut BulkInsert<'_>, toast_rel: RelFileNumber, payload: &[u8], xid: Xid, cid: CommandId) -> Result<ToastPointer> {
    let cs = chunk_payload(bulk_block_size(bulk));
    let nchunks = payload.len().div_ceil(cs).max(1);
    let mut next: (u32, u16) = (u32::MAX, 0);
    let mut t = Vec::with_capacity(tuple::HEADER_SIZE + 6 + cs);
    for i in (0..nchunks).rev() {
        let part = &payload[i * cs..((i + 1) * cs).min(payload.len())];
        t.clear();
        t.resize(tuple::HEADER_SIZE, 0);
        t[34] = tuple::HEADER_SIZE as u8;
        t.extend_from_slice(&next.0.to_le_bytes());
        t.extend_from_slice(&next.1.to_le_bytes());
        t.extend_from_slice(part);
        let len = t.len();
        bulk.insert_batch(&mut t, &[len], xid, cid)?;
        next = bulk.last_tid;
    }
    Ok(ToastPointer {
        toast_rel: toast_rel.0,
        raw_len: u32::try_from(payload.len()).map_err(|_| PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "value too large to store"))?,
        first_block: next.0,
        first_off: next.1,
        chunks: nchunks as u32,
    })
}

fn bulk_block_size(bulk: &BulkInsert<'_>) -> usize {
    bulk.pool.block_size()
}

/// The TIDs of a pointer's chunks, first to last (the chain checked as [`fetch`] checks it).
pub fn chunk_tids(pool: &BufferPool, pins: &Pins, p: &ToastPointer) -> Result<Vec<(u32, u16)>> {
    let mut tids = Vec::with_capacity(p.chunks as usize);
    walk(pool, pins, p, |tid, _| tids.push(tid))?;
    Ok(tids)
}

/// Follows a pointer's chain of `chunks` links, calling `f(tid, payload)` for each chunk;
/// a missing or short chunk is corruption naming the TOAST relation and block (invariant 2).
fn walk(pool: &BufferPool, pins: &Pins, p: &ToastPointer, mut f: impl FnMut((u32, u16), &[u8])) -> Result<()> {
    let rel = RelFileNumber(p.toast_rel);
    let (mut block, mut off) = (p.first_block, p.first_off);
    for n in 0..p.chunks {
        let corrupt = |why: &str| {
            PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!(
                    "missing chunk number {n} for toast value in {} block {block}: {why}",
                    pool.smgr().display_name(rel, ForkNumber::Main)
                ),
            )
        };
        if block == u32::MAX {
            return Err(corrupt("chain ended early"));
        }
        let buf = pool.read_buffer(pins, rel, ForkNumber::Main, block, None)?;
        let pg = buf.lock_shared();
        if page::is_new(&pg) || off == 0 || off > page::max_offset(&pg) {
            return Err(corrupt("no such line pointer"));
        }
        let t = page::item(&pg, off).ok_or_else(|| corrupt("line pointer not in use"))?;
        if t.len() < tuple::HEADER_SIZE + 6 {
            return Err(corrupt("chunk too short"));
        }
        let d = &t[tuple::HEADER_SIZE..];
        f((block, off), &d[6..]);
        (block, off) = (u32::from_le_bytes(d[0..4].try_into().expect("4")), u16::from_le_bytes([d[4], d[5]]));
    }
    Ok(())
}

/// Deletes the chunks of every pointer in `pointers` for transaction `xid` at command `cid`
/// (PostgreSQL's toast_delete), through `toast` (the TOAST relation, logged as its table is):
/// the row version that holds them was just deleted or updated by the same transaction and
/// command (invariant 3), so no one else can be deleting them.
pub fn delete_chunks(toast: &HeapRel<'_>, txns: &TxnManager, pointers: &[ToastPointer], xid: Xid, cid: CommandId) -> Result<()> {
    for p in pointers {
        debug_assert_eq!(p.toast_rel, toast.rel.0, "a pointer into another table's TOAST relation");
        for tid in chunk_tids(toast.pool, toast.pins, p)? {
            match toast.delete(txns, tid, xid, cid)? {
                ChangeOutcome::Done(_) => {}
                other => {
                    return Err(PgError::new(
                        sqlstate::DATA_CORRUPTED,
                        format!(
                            "toast chunk ({}, {}) in {} could not be deleted: {other:?}",
                            tid.0,
                            tid.1,
                            toast.pool.smgr().display_name(toast.rel, ForkNumber::Main)
                        ),
                    ))
                }
            }
        }
    }
    Ok(())
}

/// The TOAST pointers of a tuple of a table with column `types`.
pub fn pointers_of(t: &[u8], types: &[crate::types::SqlType]) -> Result<Vec<ToastPointer>> {
    let mut attrs = Vec::with_capacity(types.len());
    tuple::deform(t, types, &mut attrs).map_err(|c| PgError::new(sqlstate::DATA_CORRUPTED, c.0))?;
    Ok(attrs
        .iter()
        .filter_map(|a| match a {
            Some(tuple::Attr::External(p)) => Some(*p),
            _ => None,
        })
        .collect())
}

/// Appends the value a pointer refers to.
pub fn fetch(pool: &BufferPool, pins: &Pins, p: &ToastPointer, out: &mut Vec<u8>) -> Result<()> {
    let rel = RelFileNumber(p.toast_rel);
    let start = out.len();
    walk(pool, pins, p, |_, payload| out.extend_from_slice(payload))?;
    if out.len() - start != p.raw_len as usize {
        return Err(PgError::new(
            sqlstate::DATA_CORRUPTED,
            format!(
                "toast value in {} has {} bytes, expected {}",
                pool.smgr().display_name(rel, ForkNumber::Main),
                out.len() - start,
                p.raw_len
            ),
        ));
    }
    Ok(())
}

/// The stored bytes of an attribute, fetching it from TOAST if it is out of line.
pub fn attr_bytes<'a>(
    pool: &crate::buffer::BufferPool,
    pins: &crate::buffer::Pins,
    a: super::tuple::Attr<'a>,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    match a {
        super::tuple::Attr::Inline(v) => Ok(v),
        super::tuple::Attr::External(p) => {
            scratch.clear();
            fetch(pool, pins, &p, scratch)?;
            Ok(&scratch[..])
        }
    }
}

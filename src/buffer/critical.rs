//! Changing shared pages with WAL: the one critical section every access method uses.
//!
//! PostgreSQL's rule (src/backend/access/transam/README, "Write-Ahead Log Coding"), kept here
//! in one place instead of once per access method:
//!
//! ```text
//!  caller:   pin and lock every page exclusively, check, then change them
//!  ───────── critical section (log_page_changes) ─────────────────────────────
//!   1. mark every page dirty          (so a checkpoint whose REDO pointer falls after the
//!                                      record cannot skip the page: it is dirty already)
//!   2. decide full-page images against the REDO pointer, insert the record; if a checkpoint
//!      moved the REDO pointer between the decision and the reservation, decide again
//!   3. set every page's LSN to the record's end (WAL before data: the page cannot be
//!      written before the record is durable)
//!  ───────────────────────────────────────────────────────────────────────────
//!  caller:   unlock, unpin
//! ```
//!
//! Invariants:
//! 1. The pages are changed before the critical section and locked exclusively throughout it.
//! 2. Every page is dirty before the record is inserted (asserted).
//! 3. An error inside the critical section is a PANIC ([`crate::wal::Wal::panic`]): the pages
//!    in memory already hold a change the WAL does not, so the database stops writing (the WAL
//!    is poisoned, and with it every data-page write) and must be reopened, which recovers.

use super::pins::PageMut;
use super::pool::{BufferId, BufferPool};
use crate::error::Result;
use crate::storage::{page, BlockNumber, ForkNumber, RelFileNumber};
use crate::txn::Xid;
use crate::wal::{Lsn, RecordBuilder, Wal};

/// How a changed page is described in the record.
pub enum Logged<'d> {
    /// The change as redo data (`will_init`: redo starts from an empty page); a full-page
    /// image replaces it at the page's first change after a checkpoint.
    Delta { data: &'d [u8], will_init: bool },
    /// Always the whole page (`will_init`: replayed onto an empty page).
    Image { will_init: bool },
}

/// One page changed by the caller, locked exclusively.
pub struct PageChange<'p, 'b> {
    pub pg: &'p mut PageMut<'b>,
    pub rel: RelFileNumber,
    pub fork: ForkNumber,
    pub block: BlockNumber,
    pub logged: Logged<'p>,
}

/// The WAL record kind and its main data.
#[derive(Clone, Copy)]
pub struct RecordKind<'m> {
    pub rmid: u8,
    pub info: u8,
    pub xid: Xid,
    pub main: &'m [u8],
}

/// The failpoint hit after the record is inserted and before the page LSNs are set (tests and
/// the crash torture start a checkpoint there).
pub const FAILPOINT_AFTER_INSERT: &str = "log-page-changes-after-insert";

/// Logs changes already made to `pages` and stamps them (the module doc's critical section).
/// Without WAL (`wal` None: unlogged relations, or a relation that skips the WAL) the pages
/// are only marked dirty. `rec` is scratch space (bulk loads keep one). Returns the record's
/// end LSN (0 without WAL).
pub fn log_page_changes(
    wal: Option<&Wal>,
    full_page_writes: bool,
    kind: RecordKind<'_>,
    pages: &mut [PageChange<'_, '_>],
    rec: &mut RecordBuilder,
) -> Result<Lsn> {
    // 1. Dirty first.
    for p in pages.iter() {
        p.pg.mark_dirty();
        debug_assert!(p.pg.is_dirty(), "a page is dirty before its record is inserted");
    }
    let Some(wal) = wal else { return Ok(0) };
    // 2. Decide images and insert; again if the REDO pointer moved (bounded: each retry means
    //    a checkpoint started in between, and checkpoints run one at a time).
    let end = loop {
        let redo = wal.redo_point();
        rec.begin(kind.rmid, kind.info, kind.xid);
        if !kind.main.is_empty() {
            rec.set_main(kind.main);
        }
        for p in pages.iter() {
            match p.logged {
                Logged::Image { will_init } => {
                    let (l, u) = (page::lower(p.pg), page::upper(p.pg));
                    rec.add_block(p.rel.0, p.fork as u8, p.block, Some((&p.pg[..], l as u16, (u - l) as u16)), &[], will_init);
                }
                Logged::Delta { data, will_init } => {
                    if full_page_writes && !will_init && page::lsn(p.pg) <= redo {
                        let (l, u) = (page::lower(p.pg), page::upper(p.pg));
                        rec.add_block(p.rel.0, p.fork as u8, p.block, Some((&p.pg[..], l as u16, (u - l) as u16)), &[], false);
                    } else {
                        rec.add_block(p.rel.0, p.fork as u8, p.block, None, data, will_init);
                    }
                }
            }
        }
        match wal.insert_if_redo(rec, redo) {
            Ok(Some((_, end))) => break end,
            Ok(None) => continue,
            Err(e) => return Err(wal.panic(e.with_context("inserting a WAL record for changed pages"))),
        }
    };
    wal.failpoints.hit(FAILPOINT_AFTER_INSERT);
    // 3. Stamp.
    for p in pages.iter_mut() {
        page::set_lsn(p.pg, end);
    }
    Ok(end)
}

/// A new image for a page that the caller holds locked exclusively and will overwrite with it
/// once the record is in ([`log_images`]).
pub struct PendingImage<'i> {
    pub buffer: BufferId,
    pub rel: RelFileNumber,
    pub fork: ForkNumber,
    pub block: BlockNumber,
    pub image: &'i [u8],
}

/// The critical section for changes whose pages are locked in several stack frames (a B-tree
/// split cascade): marks every buffer dirty, then logs every image as one record (each
/// replayed onto an empty page); the caller then copies each image in and sets its LSN, with
/// nothing that can fail in between. No page has changed yet when the record is inserted, so
/// an insert error is an ordinary error here, not a PANIC. Returns the end LSN (0 without WAL).
pub fn log_images(wal: Option<&Wal>, pool: &BufferPool, rmid: u8, info: u8, xid: Xid, images: &[PendingImage<'_>]) -> Result<Lsn> {
    for i in images {
        pool.mark_dirty(i.buffer);
    }
    let Some(wal) = wal else { return Ok(0) };
    let mut rec = RecordBuilder::new();
    rec.begin(rmid, info, xid);
    for i in images {
        let (l, u) = (page::lower(i.image), page::upper(i.image));
        rec.add_block(i.rel.0, i.fork as u8, i.block, Some((i.image, l as u16, (u - l) as u16)), &[], true);
    }
    let (_, end) = wal.insert(&mut rec)?;
    wal.failpoints.hit(FAILPOINT_AFTER_INSERT);
    Ok(end)
}

//! Sequences: one page holding one heap tuple `(last_value bigint, log_cnt bigint, is_called
//! boolean)`, changed in place, as PostgreSQL's sequence.c keeps them. The tuple's xmin is
//! frozen, so an ordinary scan reads it (`SELECT * FROM seq`).
//!
//! **Non-transactional, crash-safe.** `nextval` does not wait for, or roll back with, its
//! transaction. To avoid a WAL record per value, a logged change reserves up to
//! [`LOG_VALS`] values ahead: the record carries the page with `last_value` advanced past
//! them and `log_cnt` 0 (as if they had all been handed out), while the page in memory holds
//! the value actually returned and `log_cnt` = how many reserved values are left. The next
//! calls hand those out by changing the page in memory only. After a crash, redo restores the
//! reserved state, so no value handed out before the crash can be handed out again.
//!
//! Invariants (each call holds the page's buffer locked exclusively throughout):
//! 1. A change that is not WAL-logged only consumes values an earlier record reserved
//!    (`log_cnt` > 0).
//! 2. The first change after a checkpoint's REDO pointer is logged whatever `log_cnt` says:
//!    the checkpoint may write the page with its in-memory `log_cnt`, and redo starts after
//!    the record that reserved those values. The page is marked dirty *before* the REDO
//!    pointer is read, so a checkpoint that starts later finds it dirty and writes the change
//!    (the order of `buffer::critical`).
//! 3. A logged change is a full-page image replayed onto an empty page: redo never reads the
//!    page from disk.
//! 4. `setval` is always logged, with `log_cnt` 0.
//! 5. The values handed out are durable only once WAL is flushed past the record that
//!    reserved them: `next` returns that record's end (the page LSN when it wrote none; the
//!    reserving transaction may not have committed), the caller records it and flushes it at
//!    commit (`Session` does), so a value a committed transaction saw is never repeated.

use crate::access::heap::tuple;
use crate::buffer::critical::{log_page_changes, Logged, PageChange, RecordKind};
use crate::buffer::{BufferPool, Pins};
use crate::error::{PgError, Result};
use crate::storage::{page, ForkNumber, RelFileNumber};
use crate::txn::FROZEN_XID;
use crate::wal::{Lsn, RecordBuilder, Wal};

/// Values reserved by one WAL record (PostgreSQL's SEQ_LOG_VALS).
pub const LOG_VALS: i64 = 32;

/// A sequence's fixed parameters (from its definition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cycle: bool,
}

/// The tuple's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub last_value: i64,
    pub log_cnt: i64,
    pub is_called: bool,
}

/// Why `nextval` could not give a value.
#[derive(Debug, PartialEq, Eq)]
pub enum Exhausted {
    /// Reached the maximum (ascending) or minimum (descending) value, without CYCLE.
    Max(i64),
    Min(i64),
}

/// A sequence relation, as a session's thread uses it.
pub struct SeqRel<'a> {
    pub pool: &'a BufferPool,
    pub pins: &'a Pins,
    pub rel: RelFileNumber,
    /// None: the change is not logged (never for a permanent sequence).
    pub wal: Option<&'a Wal>,
    pub full_page_writes: bool,
}

const ROW_TYPES: [crate::types::TypeId; 3] = [crate::types::TypeId::Int8, crate::types::TypeId::Int8, crate::types::TypeId::Bool];

/// The tuple for `st`.
fn form(st: State) -> Vec<u8> {
    let mut b = tuple::TupleBuilder::new(3);
    b.begin();
    b.push_fixed(&st.last_value.to_le_bytes());
    b.push_fixed(&st.log_cnt.to_le_bytes());
    b.push_fixed(&[u8::from(st.is_called)]);
    let mut t = b.finish().to_vec();
    tuple::set_xmin(&mut t, FROZEN_XID, 0);
    tuple::set_xmax(&mut t, crate::txn::INVALID_XID, 0);
    tuple::set_ctid(&mut t, 0, 1);
    t
}

/// The page for `st` (one tuple at offset 1), written over `pg`.
fn write_page(pg: &mut [u8], st: State) -> Result<()> {
    page::init(pg, 0);
    page::add_item(pg, &form(st)).filter(|&o| o == 1).ok_or_else(|| PgError::internal("sequence tuple does not fit its page"))?;
    Ok(())
}

fn read_state(pg: &[u8], rel: RelFileNumber) -> Result<State> {
    let corrupt = || PgError::new(crate::error::sqlstate::DATA_CORRUPTED, format!("sequence relation {} has a corrupt page", rel.0));
    let t = page::item(pg, 1).ok_or_else(corrupt)?;
    let types = ROW_TYPES.map(crate::types::SqlType::new);
    let mut attrs = Vec::new();
    tuple::deform(t, &types, &mut attrs).map_err(|_| corrupt())?;
    let inline = |i: usize| match attrs.get(i) {
        Some(Some(tuple::Attr::Inline(v))) => Ok(*v),
        _ => Err(corrupt()),
    };
    let i8 = |v: &[u8]| v.try_into().map(i64::from_le_bytes).map_err(|_| corrupt());
    Ok(State { last_value: i8(inline(0)?)?, log_cnt: i8(inline(1)?)?, is_called: inline(2)?.first() == Some(&1) })
}

/// One step from `v`: None past the limit.
fn step(v: i64, l: &Limits) -> Option<i64> {
    let n = v.checked_add(l.increment)?;
    (n >= l.min && n <= l.max).then_some(n)
}

impl SeqRel<'_> {
    /// Writes the first page of a new sequence (its file exists and is empty). Returns the
    /// record's end LSN.
    pub fn init(&self, start: i64) -> Result<Lsn> {
        let mut bufs = self.pool.extend_by(self.pins, self.rel, ForkNumber::Main, 1, None)?;
        let buf = bufs.pop().ok_or_else(|| PgError::internal("could not extend a new sequence"))?;
        let mut pg = buf.lock_exclusive();
        write_page(&mut pg, State { last_value: start, log_cnt: 0, is_called: false })?;
        self.log(&mut pg)
    }

    /// The current state (as `SELECT * FROM seq` shows it).
    pub fn read(&self) -> Result<State> {
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, 0, None)?;
        let pg = buf.lock_shared();
        read_state(&pg, self.rel)
    }

    /// Logs the locked page as a full image replayed onto an empty page (invariant 3), in
    /// the critical section.
    fn log(&self, pg: &mut crate::buffer::PageMut<'_>) -> Result<Lsn> {
        let mut changes = [PageChange { pg, rel: self.rel, fork: ForkNumber::Main, block: 0, logged: Logged::Image { will_init: true } }];
        let kind =
            RecordKind { rmid: crate::recovery::RM_HEAP, info: crate::recovery::HEAP_PAGE_IMAGE, xid: crate::txn::INVALID_XID, main: &[] };
        log_page_changes(self.wal, self.full_page_writes, kind, &mut changes, &mut RecordBuilder::new())
    }

    /// The next value (`nextval`), and the end LSN of the WAL record the value depends on: the
    /// one it wrote, or the earlier one that reserved it (0: none, an unlogged sequence).
    pub fn next(&self, l: &Limits) -> Result<std::result::Result<(i64, Lsn), Exhausted>> {
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, 0, None)?;
        let mut pg = buf.lock_exclusive();
        let st = read_state(&pg, self.rel)?;
        let value = if st.is_called {
            match step(st.last_value, l) {
                Some(v) => v,
                None if l.cycle => {
                    if l.increment > 0 {
                        l.min
                    } else {
                        l.max
                    }
                }
                None if l.increment > 0 => return Ok(Err(Exhausted::Max(l.max))),
                None => return Ok(Err(Exhausted::Min(l.min))),
            }
        } else {
            st.last_value
        };
        // Invariant 2: dirty first, then read the REDO pointer.
        pg.mark_dirty();
        let logit = !st.is_called || st.log_cnt <= 0 || self.wal.is_some_and(|w| page::lsn(&pg) <= w.redo_point());
        if !logit {
            let t = page::item_mut(&mut pg, 1).expect("read above");
            let h = tuple::hoff(t);
            t[h..h + 8].copy_from_slice(&value.to_le_bytes());
            t[h + 8..h + 16].copy_from_slice(&(st.log_cnt - 1).to_le_bytes());
            // The value is safe from reuse only once the record that reserved it is durable
            // (invariant 5): that record may belong to a transaction that has not committed,
            // so this caller must flush to it too. Its end is the page's LSN.
            return Ok(Ok((value, if self.wal.is_some() { page::lsn(&pg) } else { 0 })));
        }
        // Reserve up to LOG_VALS more (stopping at the limit; a cycling sequence does not
        // reserve across its wrap).
        let (mut reserved_to, mut n) = (value, 0);
        while n < LOG_VALS {
            match step(reserved_to, l) {
                Some(v) => {
                    reserved_to = v;
                    n += 1;
                }
                None => break,
            }
        }
        write_page(&mut pg, State { last_value: reserved_to, log_cnt: 0, is_called: true })?;
        let end = self.log(&mut pg)?;
        // The page in memory: the value handed out, `n` reserved values left (invariant 1).
        // Nothing can fail from here: the tuple has the same shape.
        let t = page::item_mut(&mut pg, 1).expect("just written");
        let h = tuple::hoff(t);
        t[h..h + 8].copy_from_slice(&value.to_le_bytes());
        t[h + 8..h + 16].copy_from_slice(&n.to_le_bytes());
        Ok(Ok((value, end)))
    }

    /// `setval`: the state becomes `(value, 0, is_called)`, logged (invariant 4). Returns the
    /// record's end LSN.
    pub fn set(&self, value: i64, is_called: bool) -> Result<Lsn> {
        let buf = self.pool.read_buffer(self.pins, self.rel, ForkNumber::Main, 0, None)?;
        let mut pg = buf.lock_exclusive();
        read_state(&pg, self.rel)?;
        write_page(&mut pg, State { last_value: value, log_cnt: 0, is_called })?;
        self.log(&mut pg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_stop_at_the_limits() {
        let l = Limits { increment: 5, min: 1, max: 12, cycle: false };
        assert_eq!(step(1, &l), Some(6));
        assert_eq!(step(11, &l), None);
        let d = Limits { increment: -1, min: i64::MIN, max: -1, cycle: false };
        assert_eq!(step(i64::MIN, &d), None);
        assert_eq!(step(-1, &d), Some(-2));
        let big = Limits { increment: i64::MAX, min: 1, max: i64::MAX, cycle: false };
        assert_eq!(step(2, &big), None);
    }

    #[test]
    fn the_tuple_round_trips_through_a_page() {
        let mut pg = vec![0u8; 8192];
        let st = State { last_value: -42, log_cnt: 7, is_called: true };
        write_page(&mut pg, st).unwrap();
        assert_eq!(read_state(&pg, RelFileNumber(1)).unwrap(), st);
    }
}

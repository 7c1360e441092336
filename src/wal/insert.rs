//! Insertion: reserve with one atomic add, copy in parallel under N insertion locks.
//!
//! ```text
//!  session memory                      shared
//!  ──────────────                      ──────
//!  RecordBuilder::finish()             (no lock: assembly + CRC of all but the lsn)
//!  lock my slot (WALInsert, usually uncontended: slots are picked per thread)
//!    slot.at = slot.last_end           advertise a lower bound of what I will get
//!    start = reserved.fetch_add(len)   ◄── the only serialization point: one atomic add
//!    slot.at = start
//!  stamp(start)                        lsn field + 8 bytes of CRC, in session memory
//!    copy into the ring                waiting for / helping `written` when the ring is full
//!    slot.at = IDLE
//!  unlock my slot
//! ```
//!
//! The benchmark baseline (`heapstore.wal_single_lock_insert`, one slot) takes its one lock
//! first and holds it through assembly, CRC, reservation and copy, as PostgreSQL's single
//! WALInsertLock did before insertion was made to scale.
//!
//! A flusher that wants everything below `upto` on disk reads `reserved`, then for each slot
//! waits until it is idle or advertises a position `≥ upto` ([`Wal::wait_insertions_to_finish`]).
//! It never waits for an insertion that started after `upto` (PostgreSQL's
//! WaitXLogInsertionsToFinish).
//!
//! Slots are picked per thread (a thread-local ticket modulo the number of slots), so sessions
//! keep to their own slot and its cache line; a session that finds its slot busy moves to the
//! next one for its following inserts, as PostgreSQL's WALInsertLockAcquire does.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::error::{sqlstate, PgError, Result};
use crate::lock::{LWLock, LWLockClass, LWLockMode};

use super::record::{align_len, RecordBuilder, MAX_RECORD_LEN, RECORD_ALIGN};
use super::{Counters, Lsn, Wal};

/// What an idle slot advertises.
pub(crate) const IDLE: Lsn = u64::MAX;

/// One insertion lock and its advertisement (PostgreSQL's WALInsertLock with insertingAt).
#[repr(align(128))]
pub(crate) struct InsertSlot {
    /// Held by the session inserting through this slot, for its whole insertion.
    lock: LWLock,
    /// `IDLE`, or `P`: the insertion through this slot has copied every byte it reserved
    /// below `P` (invariant 3). Written only by the lock holder.
    at: AtomicU64,
    /// Set by a flusher before it parks on `at`; the owner wakes parked flushers when it
    /// advances `at` and finds this set.
    waiters: AtomicBool,
    /// End of the last insertion through this slot: `≤ reserved`, so a valid lower bound to
    /// advertise before reserving. Written only by the lock holder.
    last_end: AtomicU64,
    pub(crate) records: AtomicU64,
    pub(crate) bytes: AtomicU64,
}

impl InsertSlot {
    pub(crate) fn new(start: Lsn) -> InsertSlot {
        InsertSlot {
            lock: LWLock::new(LWLockClass::WalInsert),
            at: AtomicU64::new(IDLE),
            waiters: AtomicBool::new(false),
            last_end: AtomicU64::new(start),
            records: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    fn key(&self) -> usize {
        &self.at as *const AtomicU64 as usize
    }

    /// Publishes progress (or `IDLE`). SeqCst store, then SeqCst load of `waiters`, against the
    /// flusher's SeqCst store of `waiters` then load of `at` (in its park validation): one of
    /// the two sees the other's store, so no wake-up is lost. The store also releases the
    /// bytes copied before it.
    #[inline]
    fn advertise(&self, pos: Lsn) {
        self.at.store(pos, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) {
            self.wake();
        }
    }

    #[cold]
    fn wake(&self) {
        if self.waiters.swap(false, Ordering::SeqCst) {
            // SAFETY: unpark_all only touches the parking lot's queue for this address.
            unsafe {
                parking_lot_core::unpark_all(self.key(), parking_lot_core::DEFAULT_UNPARK_TOKEN);
            }
        }
    }

    /// Waits until the slot is idle or advertises `≥ upto`; returns what it advertises then.
    fn wait_past(&self, upto: Lsn) -> Lsn {
        let mut spins = 0u32;
        loop {
            let at = self.at.load(Ordering::SeqCst);
            if at >= upto {
                return at;
            }
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
                continue;
            }
            if spins < 80 {
                std::thread::yield_now();
                continue;
            }
            self.waiters.store(true, Ordering::SeqCst);
            // SAFETY: the key is this slot's address, which outlives the park (we borrow `self`);
            // the closures neither panic nor call into the parking lot.
            unsafe {
                parking_lot_core::park(
                    self.key(),
                    || self.at.load(Ordering::SeqCst) < upto && self.waiters.load(Ordering::SeqCst),
                    || {},
                    |_, _| {},
                    parking_lot_core::DEFAULT_PARK_TOKEN,
                    None,
                );
            }
        }
    }
}

/// Holds a slot: on drop (also on unwinding) advertises `IDLE`, then releases the lock, so a
/// flusher can never wait forever for an insertion that is gone.
struct SlotGuard<'a> {
    slot: &'a InsertSlot,
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        self.slot.advertise(IDLE);
        self.slot.lock.release(LWLockMode::Exclusive);
    }
}

static NEXT_TICKET: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's preferred slot (modulo the number of slots).
    static TICKET: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn my_ticket() -> usize {
    TICKET.with(|t| {
        if t.get() == usize::MAX {
            t.set(NEXT_TICKET.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

impl Wal {
    fn acquire_slot(&self) -> SlotGuard<'_> {
        let ticket = my_ticket();
        let slot = &self.slots[ticket % self.slots.len()];
        if slot.lock.is_locked() && self.slots.len() > 1 {
            // Busy: wait for it this time, but try the next slot from now on.
            TICKET.with(|t| t.set(ticket.wrapping_add(1)));
        }
        slot.lock.acquire(LWLockMode::Exclusive);
        debug_assert_eq!(slot.at.load(Ordering::Relaxed), IDLE);
        SlotGuard { slot }
    }

    /// Inserts a record; returns its start and end positions (end = where the next record
    /// starts; a page changed by this record gets `end` as its LSN, and a commit flushes to it).
    ///
    /// Fails before anything is reserved when the WAL is poisoned, the record is too large, or
    /// the ring is full and writing older WAL out fails (e.g. ENOSPC: 53100). Once space is
    /// reserved the insert cannot fail (that would leave a hole in the WAL) unless the WAL is
    /// poisoned meanwhile; if the ring fills and the disk is full at that moment, it waits and
    /// retries until space is back.
    pub fn insert(&self, rec: &mut RecordBuilder) -> Result<(Lsn, Lsn)> {
        Ok(self.insert_inner(rec, None)?.expect("inserts without a REDO check always insert"))
    }

    /// Like [`Wal::insert`], but only if the REDO pointer ([`Wal::redo_point`]) is still `redo`,
    /// the one the caller's full-page-image decisions were based on; `Ok(None)` otherwise (decide
    /// again and retry). The check is made under the insertion lock, which
    /// [`Wal::mark_redo_point`] takes too, so it cannot go stale before the reservation.
    pub fn insert_if_redo(&self, rec: &mut RecordBuilder, redo: Lsn) -> Result<Option<(Lsn, Lsn)>> {
        self.insert_inner(rec, Some(redo))
    }

    fn insert_inner(&self, rec: &mut RecordBuilder, redo_check: Option<Lsn>) -> Result<Option<(Lsn, Lsn)>> {
        self.check_poison()?;
        // The single-lock baseline (the "before" of WAL insertion scaling) holds its one lock
        // through assembly, CRC and copy; it takes it here, and acquire_slot below is skipped.
        let early = self.single_lock.then(|| self.acquire_slot());
        // Compression, assembly and CRC, in session memory: before any lock, but for the
        // baseline.
        rec.compress_blocks(self.compression);
        let len = if early.is_some() { rec.reassemble().len() } else { rec.finish().len() };
        if len > MAX_RECORD_LEN {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("WAL record would be {len} bytes, more than the limit of {MAX_RECORD_LEN}"),
            ));
        }
        let alen = align_len(len as u64);
        let ring = self.ring.len() as u64;

        // If the ring looks full, write older WAL out now, while failing is still clean.
        let r = self.reserved.load(Ordering::Relaxed);
        if r + alen > self.written.load(Ordering::Acquire) + ring {
            Counters::add(&self.counters.buffer_full_waits, 1);
            self.make_room((r + alen - ring).min(r), false)?;
        }

        let guard = match early {
            Some(g) => g,
            None => self.acquire_slot(),
        };
        let slot = guard.slot;
        if let Some(expected) = redo_check {
            if self.redo.load(Ordering::Acquire) != expected {
                return Ok(None);
            }
        }
        // Invariant 2: advertise a lower bound, then reserve with one atomic add.
        slot.advertise(slot.last_end.load(Ordering::Relaxed));
        let start = self.reserved.fetch_add(alen, Ordering::AcqRel);
        slot.advertise(start);
        let end = start + alen;
        debug_assert!(start % RECORD_ALIGN == 0 && slot.last_end.load(Ordering::Relaxed) <= start);
        slot.last_end.store(end, Ordering::Relaxed);

        let bytes = rec.stamp(start);
        debug_assert_eq!(bytes.len() as u64, alen);
        self.copy_record(slot, start, bytes)?;
        slot.records.fetch_add(1, Ordering::Relaxed);
        slot.bytes.fetch_add(alen, Ordering::Relaxed);
        drop(guard);
        // Write-behind: wake the WAL writer each time the insert position crosses a multiple
        // of the distance (after releasing the slot: the writer waits for it to finish).
        let wb = self.write_behind.load(Ordering::Relaxed);
        if wb != 0 && start / wb != end / wb {
            self.kick_writer();
        }
        // Into a new segment: have the next ones made ahead ([`Wal::prepare_ahead`]).
        if start / self.seg_size != end / self.seg_size && self.writer_running.load(Ordering::Relaxed) {
            self.kick_prealloc();
        }
        Ok(Some((start, end)))
    }

    /// Copies a reserved record into the ring, in as many pieces as the free part of the ring
    /// allows (a record larger than the ring goes through in several).
    fn copy_record(&self, slot: &InsertSlot, start: Lsn, bytes: &[u8]) -> Result<()> {
        let ring = self.ring.len() as u64;
        let end = start + bytes.len() as u64;
        let mut pos = start;
        while pos < end {
            let limit = self.written.load(Ordering::Acquire) + ring;
            if pos >= limit {
                // Invariant 4: publish progress before waiting, so that the writer can take
                // what we copied so far and nobody waits for us below `pos`.
                slot.advertise(pos);
                Counters::add(&self.counters.buffer_full_waits, 1);
                self.make_room(end.min(pos + ring) - ring, true)?;
                continue;
            }
            let upto = end.min(limit);
            let off = (pos - start) as usize;
            // SAFETY: positions pos..upto were reserved by this insertion alone (invariant 2);
            // their ring bytes last held positions below `written` (upto ≤ written + ring),
            // which are written out, so no other inserter writes them and the writer, which
            // reads only below `finished ≤ pos` (this slot advertises ≤ pos), does not read them.
            unsafe { self.ring.copy_in(pos, &bytes[off..off + (upto - pos) as usize]) };
            pos = upto;
        }
        Ok(())
    }

    /// Makes `written` reach `target` by writing (this is PostgreSQL's AdvanceXLInsertBuffer
    /// role). After a reservation a full disk is waited out rather than failed: the insertion
    /// must complete.
    fn make_room(&self, target: Lsn, after_reservation: bool) -> Result<()> {
        loop {
            match self.write_upto(target) {
                Err(e) if after_reservation && e.code == sqlstate::DISK_FULL && !self.poison.is_set() => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                other => return other,
            }
        }
    }

    /// Waits until every insertion that reserved space below `upto` has copied it, and returns
    /// a position `finished ≥ upto` below which all reserved bytes are in the ring. Waits only
    /// for insertions before `upto` (those after are not looked at). `upto` is clamped to
    /// [`Wal::insert_lsn`].
    pub fn wait_insertions_to_finish(&self, upto: Lsn) -> Lsn {
        // Read `reserved` first (invariant 2): every insertion below it is visible in a slot.
        let reserved = self.reserved.load(Ordering::Acquire);
        let upto = upto.min(reserved);
        let mut finished = reserved;
        for slot in self.slots.iter() {
            let at = slot.wait_past(upto);
            if at != IDLE {
                finished = finished.min(at);
            }
        }
        debug_assert!(finished >= upto);
        finished
    }

    /// Like [`Wal::wait_insertions_to_finish`] with no target: what is finished right now,
    /// without waiting. May be below `written` (a slot's lower bound can be stale).
    pub(crate) fn finished_now(&self) -> Lsn {
        let mut finished = self.reserved.load(Ordering::Acquire);
        for slot in self.slots.iter() {
            let at = slot.at.load(Ordering::SeqCst);
            if at != IDLE {
                finished = finished.min(at);
            }
        }
        finished
    }

    /// Checkpoint hook: takes every insertion lock (so no insertion is between its REDO check
    /// and its reservation), records the insert position as the new REDO pointer and returns
    /// it. Records reserved after this see the new pointer in [`Wal::insert_if_redo`].
    pub fn mark_redo_point(&self) -> Lsn {
        for slot in self.slots.iter() {
            slot.lock.acquire(LWLockMode::Exclusive);
        }
        let redo = self.reserved.load(Ordering::Acquire);
        self.redo.store(redo, Ordering::Release);
        for slot in self.slots.iter() {
            slot.lock.release(LWLockMode::Exclusive);
        }
        redo
    }

    /// The REDO pointer last set by [`Wal::mark_redo_point`] (initially the open position).
    pub fn redo_point(&self) -> Lsn {
        self.redo.load(Ordering::Acquire)
    }
}

//! Lightweight locks: a reader/writer lock on one atomic word, parking waiters on its address.
//!
//! ```text
//!  state: u32
//!  ┌───────────┬──────────┬───────────────────────────┐
//!  │ 31 EXCL   │ 30 WAIT  │ 0..29 shared holders      │
//!  └───────────┴──────────┴───────────────────────────┘
//! ```
//!
//! Invariants:
//! 1. EXCL set ⇒ shared holders = 0; shared holders > 0 ⇒ EXCL clear.
//! 2. WAIT is set by a waiter (with a CAS) before it parks; the park re-checks, under the
//!    parking lot's bucket lock, that the lock is still held and WAIT still set. A releaser that
//!    sees WAIT clears it and wakes the first exclusive waiter or the shared waiters, setting
//!    WAIT again (under the bucket lock, before anyone woken runs) if others stay parked. So no
//!    wake-up is lost: a waiter either sees the release during validation or is queued when the
//!    releaser looks, and a woken waiter that loses the lock to a newcomer parks again with WAIT
//!    set, so the newcomer's release wakes the queue.
//! 3. An uncontended acquire is one CAS and no clock call. Only the wait path reads the clock
//!    (seed 001: "a clock call per wait, none per uncontended acquire").
//! 4. Statistics are per lock class ([`LWLockClass`]), kept in cache-line-padded stripes chosen
//!    per thread so that counting does not itself become a contended cache line.
//!
//! A woken waiter still competes with newcomers (no hand-off: holders are brief, and barging
//! keeps the lock busy). Writers can be overtaken by a stream of readers; no LWLock in heapstore
//! is held across I/O except a buffer's content lock, whose holders are bounded by pins.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

const EXCL: u32 = 1 << 31;
const WAIT: u32 = 1 << 30;
const SHARED_MASK: u32 = WAIT - 1;
const SHARED_WAITER: parking_lot_core::ParkToken = parking_lot_core::ParkToken(1);
const EXCLUSIVE_WAITER: parking_lot_core::ParkToken = parking_lot_core::ParkToken(2);

/// What a lock protects; statistics are kept per class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LWLockClass {
    BufferMapping = 0,
    BufferContent,
    BufferIo,
    Clog,
    ProcArray,
    XidGen,
    Catalog,
    RelationExtension,
    FreeSpaceMap,
    WalInsert,
    WalWrite,
    Other,
}

pub const NUM_CLASSES: usize = 12;

impl LWLockClass {
    pub const ALL: [LWLockClass; NUM_CLASSES] = [
        LWLockClass::BufferMapping,
        LWLockClass::BufferContent,
        LWLockClass::BufferIo,
        LWLockClass::Clog,
        LWLockClass::ProcArray,
        LWLockClass::XidGen,
        LWLockClass::Catalog,
        LWLockClass::RelationExtension,
        LWLockClass::FreeSpaceMap,
        LWLockClass::WalInsert,
        LWLockClass::WalWrite,
        LWLockClass::Other,
    ];

    /// PostgreSQL's wait event name for the class.
    pub fn name(self) -> &'static str {
        match self {
            LWLockClass::BufferMapping => "BufferMapping",
            LWLockClass::BufferContent => "BufferContent",
            LWLockClass::BufferIo => "BufferIO",
            LWLockClass::Clog => "XactBuffer",
            LWLockClass::ProcArray => "ProcArray",
            LWLockClass::XidGen => "XidGen",
            LWLockClass::Catalog => "Catalog",
            LWLockClass::RelationExtension => "RelationExtension",
            LWLockClass::FreeSpaceMap => "FreeSpaceMap",
            LWLockClass::WalInsert => "WALInsert",
            LWLockClass::WalWrite => "WALWrite",
            LWLockClass::Other => "Other",
        }
    }
}

const STRIPES: usize = 16;

#[repr(align(128))]
#[derive(Default)]
struct Stripe {
    acquire_shared: [AtomicU64; NUM_CLASSES],
    acquire_exclusive: [AtomicU64; NUM_CLASSES],
    waits: [AtomicU64; NUM_CLASSES],
    wait_ns: [AtomicU64; NUM_CLASSES],
}

static STATS: [Stripe; STRIPES] = [const {
    Stripe {
        acquire_shared: [const { AtomicU64::new(0) }; NUM_CLASSES],
        acquire_exclusive: [const { AtomicU64::new(0) }; NUM_CLASSES],
        waits: [const { AtomicU64::new(0) }; NUM_CLASSES],
        wait_ns: [const { AtomicU64::new(0) }; NUM_CLASSES],
    }
}; STRIPES];

static NEXT_STRIPE: AtomicU32 = AtomicU32::new(0);

thread_local! {
    static MY_STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn stripe() -> &'static Stripe {
    let i = MY_STRIPE.with(|c| {
        let mut i = c.get();
        if i == usize::MAX {
            i = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) as usize % STRIPES;
            c.set(i);
        }
        i
    });
    &STATS[i]
}

/// Totals for one lock class, summed over stripes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LWLockStats {
    pub acquire_shared: u64,
    pub acquire_exclusive: u64,
    pub waits: u64,
    pub wait_ns: u64,
}

/// Current totals for every class, process-wide.
pub fn lwlock_stats() -> Vec<(LWLockClass, LWLockStats)> {
    LWLockClass::ALL
        .iter()
        .map(|&c| {
            let i = c as usize;
            let mut s = LWLockStats::default();
            for st in &STATS {
                s.acquire_shared += st.acquire_shared[i].load(Ordering::Relaxed);
                s.acquire_exclusive += st.acquire_exclusive[i].load(Ordering::Relaxed);
                s.waits += st.waits[i].load(Ordering::Relaxed);
                s.wait_ns += st.wait_ns[i].load(Ordering::Relaxed);
            }
            (c, s)
        })
        .collect()
}

/// A lightweight reader/writer lock.
pub struct LWLock {
    state: AtomicU32,
    class: LWLockClass,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LWLockMode {
    Shared,
    Exclusive,
}

impl LWLock {
    pub const fn new(class: LWLockClass) -> Self {
        LWLock { state: AtomicU32::new(0), class }
    }

    pub fn class(&self) -> LWLockClass {
        self.class
    }

    fn key(&self) -> usize {
        &self.state as *const AtomicU32 as usize
    }

    /// Tries once to take the lock; never blocks.
    #[inline]
    pub fn try_acquire(&self, mode: LWLockMode) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        match mode {
            LWLockMode::Shared => {
                s & EXCL == 0
                    && (s & SHARED_MASK) < SHARED_MASK
                    && self.state.compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
            }
            LWLockMode::Exclusive => {
                s & (EXCL | SHARED_MASK) == 0 && self.state.compare_exchange_weak(s, s | EXCL, Ordering::Acquire, Ordering::Relaxed).is_ok()
            }
        }
    }

    /// Takes the lock, waiting if needed. Pair with [`LWLock::release`], or use [`LWLock::lock`].
    #[inline]
    pub fn acquire(&self, mode: LWLockMode) {
        let st = stripe();
        match mode {
            LWLockMode::Shared => st.acquire_shared[self.class as usize].fetch_add(1, Ordering::Relaxed),
            LWLockMode::Exclusive => st.acquire_exclusive[self.class as usize].fetch_add(1, Ordering::Relaxed),
        };
        for _ in 0..4 {
            if self.try_acquire(mode) {
                return;
            }
            std::hint::spin_loop();
        }
        self.acquire_slow(mode, st);
    }

    /// Like [`LWLock::acquire`], but if the wait lasts longer than `report_after`, calls
    /// `report` once with the time waited so far (for `log_lock_waits`), then keeps waiting.
    pub fn acquire_reporting(&self, mode: LWLockMode, report_after: std::time::Duration, report: &mut dyn FnMut(std::time::Duration)) {
        let st = stripe();
        match mode {
            LWLockMode::Shared => st.acquire_shared[self.class as usize].fetch_add(1, Ordering::Relaxed),
            LWLockMode::Exclusive => st.acquire_exclusive[self.class as usize].fetch_add(1, Ordering::Relaxed),
        };
        if self.try_acquire(mode) {
            return;
        }
        self.acquire_wait(mode, st, Some((report_after, report)));
    }

    #[cold]
    fn acquire_slow(&self, mode: LWLockMode, st: &Stripe) {
        self.acquire_wait(mode, st, None)
    }

    fn acquire_wait(&self, mode: LWLockMode, st: &Stripe, mut report: Option<(std::time::Duration, &mut dyn FnMut(std::time::Duration))>) {
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            if self.try_acquire(mode) {
                break;
            }
            if spins < 32 {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            let blocked = |s: u32| match mode {
                LWLockMode::Shared => s & EXCL != 0,
                LWLockMode::Exclusive => s & (EXCL | SHARED_MASK) != 0,
            };
            let s = self.state.load(Ordering::Relaxed);
            if !blocked(s) {
                continue;
            }
            if s & WAIT == 0 && self.state.compare_exchange_weak(s, s | WAIT, Ordering::Relaxed, Ordering::Relaxed).is_err() {
                continue;
            }
            let timeout = report.as_ref().map(|(after, _)| start + *after);
            if let Some(deadline) = timeout {
                if Instant::now() >= deadline {
                    let (_, f) = report.take().expect("checked");
                    f(start.elapsed());
                    continue;
                }
            }
            // SAFETY: the key is this lock's address, which outlives the park (we are inside a
            // method borrowing `self`); the closures do not panic and do not call into the
            // parking lot.
            unsafe {
                parking_lot_core::park(
                    self.key(),
                    || {
                        let s = self.state.load(Ordering::Relaxed);
                        blocked(s) && s & WAIT != 0
                    },
                    || {},
                    |_, _| {},
                    match mode {
                        LWLockMode::Shared => SHARED_WAITER,
                        LWLockMode::Exclusive => EXCLUSIVE_WAITER,
                    },
                    timeout,
                );
            }
        }
        st.waits[self.class as usize].fetch_add(1, Ordering::Relaxed);
        st.wait_ns[self.class as usize].fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// Releases a lock taken in `mode`.
    #[inline]
    pub fn release(&self, mode: LWLockMode) {
        let prev = match mode {
            LWLockMode::Exclusive => {
                let prev = self.state.fetch_and(!(EXCL | WAIT), Ordering::Release);
                debug_assert!(prev & EXCL != 0, "releasing an LWLock not held exclusively");
                prev
            }
            LWLockMode::Shared => {
                let prev = self.state.fetch_sub(1, Ordering::Release);
                debug_assert!(prev & SHARED_MASK != 0, "releasing an LWLock not held shared");
                if prev & SHARED_MASK != 1 || prev & WAIT == 0 {
                    return;
                }
                self.state.fetch_and(!WAIT, Ordering::Relaxed)
            }
        };
        if prev & WAIT != 0 {
            self.wake_waiters();
        }
    }

    /// Wakes the first waiter if it wants the lock exclusively, else every shared waiter
    /// (PostgreSQL's LWLockWakeup), and sets WAIT again if anyone is left parked. Waking one
    /// writer rather than all avoids a thundering herd when dozens of sessions queue for the
    /// same lock (the relation extension lock at 32 loaders): the others stay parked instead of
    /// all waking to fight for one CAS.
    #[cold]
    fn wake_waiters(&self) {
        let mut woke_shared = false;
        let mut woke_exclusive = false;
        // SAFETY: unpark_filter only touches the parking lot's queue for this address; the
        // closures do not call into the parking lot.
        unsafe {
            parking_lot_core::unpark_filter(
                self.key(),
                |token| {
                    if woke_exclusive {
                        parking_lot_core::FilterOp::Stop
                    } else if token == EXCLUSIVE_WAITER {
                        if woke_shared {
                            parking_lot_core::FilterOp::Skip
                        } else {
                            woke_exclusive = true;
                            parking_lot_core::FilterOp::Unpark
                        }
                    } else {
                        woke_shared = true;
                        parking_lot_core::FilterOp::Unpark
                    }
                },
                |result| {
                    // Runs under the queue's lock, before anyone woken runs: a waiter left parked
                    // is seen by the next release (invariant 2).
                    if result.have_more_threads {
                        self.state.fetch_or(WAIT, Ordering::Relaxed);
                    }
                    parking_lot_core::DEFAULT_UNPARK_TOKEN
                },
            );
        }
    }

    /// Takes the lock and returns a guard that releases it on drop.
    #[inline]
    pub fn lock(&self, mode: LWLockMode) -> LWLockGuard<'_> {
        self.acquire(mode);
        LWLockGuard { lock: self, mode }
    }

    /// True if some holder has it (for assertions only: racy by nature).
    pub fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (EXCL | SHARED_MASK) != 0
    }

    pub fn is_locked_exclusive(&self) -> bool {
        self.state.load(Ordering::Relaxed) & EXCL != 0
    }
}

/// Releases its LWLock on drop.
pub struct LWLockGuard<'a> {
    lock: &'a LWLock,
    mode: LWLockMode,
}

impl LWLockGuard<'_> {
    pub fn mode(&self) -> LWLockMode {
        self.mode
    }
}

impl Drop for LWLockGuard<'_> {
    fn drop(&mut self) {
        self.lock.release(self.mode);
    }
}

/// An LWLock with the data it protects, in the style of `std::sync::RwLock`.
pub struct LWLocked<T> {
    lock: LWLock,
    data: std::cell::UnsafeCell<T>,
}

// SAFETY: access to `data` is only through guards that hold `lock` in the right mode: shared
// guards hand out `&T` (needs T: Sync), the exclusive guard `&mut T` (needs T: Send).
unsafe impl<T: Send> Send for LWLocked<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for LWLocked<T> {}

impl<T> LWLocked<T> {
    pub const fn new(class: LWLockClass, data: T) -> Self {
        LWLocked { lock: LWLock::new(class), data: std::cell::UnsafeCell::new(data) }
    }

    pub fn read(&self) -> LWReadGuard<'_, T> {
        self.lock.acquire(LWLockMode::Shared);
        LWReadGuard { owner: self }
    }

    pub fn write(&self) -> LWWriteGuard<'_, T> {
        self.lock.acquire(LWLockMode::Exclusive);
        LWWriteGuard { owner: self }
    }

    pub fn raw(&self) -> &LWLock {
        &self.lock
    }
}

pub struct LWReadGuard<'a, T> {
    owner: &'a LWLocked<T>,
}

impl<T> std::ops::Deref for LWReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: we hold the lock shared, so no `&mut T` exists.
        unsafe { &*self.owner.data.get() }
    }
}

impl<T> Drop for LWReadGuard<'_, T> {
    fn drop(&mut self) {
        self.owner.lock.release(LWLockMode::Shared);
    }
}

pub struct LWWriteGuard<'a, T> {
    owner: &'a LWLocked<T>,
}

impl<T> std::ops::Deref for LWWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: we hold the lock exclusively.
        unsafe { &*self.owner.data.get() }
    }
}

impl<T> std::ops::DerefMut for LWWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: we hold the lock exclusively, so this is the only reference.
        unsafe { &mut *self.owner.data.get() }
    }
}

impl<T> Drop for LWWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.owner.lock.release(LWLockMode::Exclusive);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn exclusive_excludes() {
        let l = Arc::new(LWLocked::new(LWLockClass::Other, 0u64));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let mut g = l.write();
                        let v = *g;
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*l.read(), 160_000);
    }

    /// Many more threads than cores, holding the lock across a yield so that queues form:
    /// waking one writer (or the readers) at a time must never leave anyone parked for good.
    #[test]
    fn queued_readers_and_writers_all_get_through() {
        let l = Arc::new(LWLocked::new(LWLockClass::Other, 0u64));
        let threads: Vec<_> = (0..24)
            .map(|i| {
                let l = l.clone();
                std::thread::spawn(move || {
                    let mut seen = 0;
                    for _ in 0..2_000 {
                        if i % 3 == 0 {
                            let g = l.read();
                            seen = seen.max(*g);
                            std::thread::yield_now();
                        } else {
                            let mut g = l.write();
                            *g += 1;
                            std::thread::yield_now();
                        }
                    }
                    seen
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*l.read(), 16 * 2_000);
    }

    #[test]
    fn readers_share_and_writers_wait() {
        let l = LWLock::new(LWLockClass::Other);
        l.acquire(LWLockMode::Shared);
        assert!(l.try_acquire(LWLockMode::Shared));
        assert!(!l.try_acquire(LWLockMode::Exclusive));
        l.release(LWLockMode::Shared);
        l.release(LWLockMode::Shared);
        assert!(l.try_acquire(LWLockMode::Exclusive));
        assert!(!l.try_acquire(LWLockMode::Shared));
        l.release(LWLockMode::Exclusive);
        assert!(!l.is_locked());
    }

    #[test]
    fn long_waits_are_reported_once() {
        let l = Arc::new(LWLock::new(LWLockClass::Other));
        l.acquire(LWLockMode::Exclusive);
        let l2 = l.clone();
        let t = std::thread::spawn(move || {
            let mut reports = Vec::new();
            l2.acquire_reporting(LWLockMode::Exclusive, std::time::Duration::from_millis(50), &mut |d| reports.push(d));
            l2.release(LWLockMode::Exclusive);
            reports
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        l.release(LWLockMode::Exclusive);
        let reports = t.join().unwrap();
        assert_eq!(reports.len(), 1, "a long wait is reported exactly once");
    }

    #[test]
    fn mixed_readers_writers_no_lost_wakeup() {
        let l = Arc::new(LWLocked::new(LWLockClass::Other, (0u64, 0u64)));
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let l = l.clone();
                std::thread::spawn(move || {
                    for _ in 0..5_000 {
                        if i % 2 == 0 {
                            let mut g = l.write();
                            g.0 += 1;
                            g.1 += 1;
                        } else {
                            let g = l.read();
                            assert_eq!(g.0, g.1);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(l.read().0, 8 * 5_000);
    }
}

//! Pre-extension: a background thread extends relations that are being bulk-loaded ahead of
//! their demand, so that loaders find empty pages in the free space map instead of taking the
//! extension lock themselves (seed 004's question: why no process extends ahead of demand).
//!
//! Loaders ([`super::BulkInsert`] with the FSM on) register the relation for as long as they
//! load it and report the pages they take. Each round (every [`ROUND`]; a loader that finds
//! the FSM empty runs one for its relation at once), the extender estimates each registered
//! relation's fill rate (pages per second, smoothed over rounds) and keeps about [`LOOKAHEAD`]
//! worth of pages extended ahead — never more than the loads have taken since they began (a
//! small COPY gets nothing, a long one at most doubles ahead of itself), at most
//! [`MAX_AHEAD`] — and when fewer are left unclaimed it
//! extends by the difference in one step ([`BufferPool::extend_fresh`]: the extension lock is
//! held only while the file grows) and records the new pages in the FSM as empty.
//!
//! Invariants:
//! 1. Pre-extended pages are zero pages past the old end of the file, fresh (the first loader
//!    to take one zero-fills its buffer instead of reading it) and recorded in the FSM right
//!    after the extension, so every block is holding tuples or known to the FSM (heap
//!    invariant 4) once the round is over.
//! 2. A relation is extended only while a loader has it registered, and a registration ends
//!    only when no extension of that relation is under way (`Slot::extending`, waited for
//!    under the registry's lock). A loader holds the relation's lock until its transaction
//!    ends, after its registration; so a relation is never extended after it could have been
//!    dropped or truncated.
//! 3. The extender holds no content lock while it waits for the extension lock, and the
//!    extension lock only while the file grows; a loader never waits for the extender except
//!    as any extension-lock waiter does, or at the end of its registration.
//! 4. A loader that finds the FSM empty runs the extender's step for its relation itself
//!    (unless one is under way), then looks in the FSM again: the extender thread is only
//!    one of many threads on a busy machine. Without threads (the crash torture) that is the
//!    only way rounds run, so a seed still replays exactly.

use crate::access::fsm;
use crate::buffer::BufferPool;
use crate::error::Result;
use crate::storage::page;
use crate::storage::RelFileNumber;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often the extender looks at the loads, when any is registered.
pub const ROUND: Duration = Duration::from_millis(10);
/// How far ahead of the fill rate the extender keeps a relation.
pub const LOOKAHEAD: Duration = Duration::from_millis(50);
/// Most pages kept extended ahead for one relation (16 MB at 8 kB pages): about what is left
/// unused in the FSM when a load ends.
pub const MAX_AHEAD: i64 = 2048;
/// The same without threads (the torture's small simulated disk and small loads).
const MAX_AHEAD_INLINE: i64 = 64;
/// Fewest pages one extension adds (fewer missing are left for the next round).
const MIN_STEP: i64 = 64;
/// The same without threads.
const MIN_STEP_INLINE: i64 = 8;

/// One registered relation's demand.
struct Slot {
    /// Pages loaders took (from the FSM or by extending themselves), ever.
    taken: AtomicU64,
    state: Mutex<SlotState>,
}

struct SlotState {
    /// Loaders that have the relation registered.
    active: usize,
    /// The extender is extending the relation now (invariant 2).
    extending: bool,
    taken_at_last_round: u64,
    last_round: Instant,
    /// Pages per second, smoothed.
    rate: f64,
}

/// The registry of loads and the extender's switch; one per database.
pub struct PreExtend {
    pool: Arc<BufferPool>,
    enabled: bool,
    threaded: bool,
    rels: Mutex<HashMap<RelFileNumber, Arc<Slot>>>,
    /// Signalled when an extension ends (registrations wait for it).
    extended: Condvar,
    wake: Mutex<bool>,
    woken: Condvar,
    stop: AtomicBool,
    /// Pages pre-extended since the database opened.
    pub pages: AtomicU64,
    /// Extensions the extender made.
    pub extensions: AtomicU64,
}

/// A loader's registration of a relation (ends on drop, invariant 2).
pub struct Registration<'a> {
    pre: &'a PreExtend,
    rel: RelFileNumber,
    slot: Arc<Slot>,
}

impl PreExtend {
    /// `enabled`: `heapstore.pre_extend`; `threaded`: whether a thread runs the rounds (see
    /// [`PreExtend::start`]) or loaders run them (invariant 4).
    pub fn new(pool: Arc<BufferPool>, enabled: bool, threaded: bool) -> PreExtend {
        PreExtend {
            pool,
            enabled,
            threaded,
            rels: Mutex::new(HashMap::new()),
            extended: Condvar::new(),
            wake: Mutex::new(false),
            woken: Condvar::new(),
            stop: AtomicBool::new(false),
            pages: AtomicU64::new(0),
            extensions: AtomicU64::new(0),
        }
    }

    /// Starts the extender thread (named "pre-extend").
    pub fn start(self: &Arc<Self>) -> Option<std::thread::JoinHandle<()>> {
        if !self.enabled || !self.threaded {
            return None;
        }
        let me = self.clone();
        let h = std::thread::Builder::new().name("pre-extend".into()).spawn(move || me.run()).expect("spawn the pre-extend thread");
        Some(h)
    }

    /// Stops the extender thread (it finishes its round).
    pub fn stop(&self, h: Option<std::thread::JoinHandle<()>>) {
        self.stop.store(true, Ordering::Release);
        *self.wake.lock().expect("poisoned") = true;
        self.woken.notify_all();
        if let Some(h) = h {
            let _ = h.join();
        }
    }

    fn run(&self) {
        loop {
            {
                let idle = self.rels.lock().expect("poisoned").is_empty();
                let mut w = self.wake.lock().expect("poisoned");
                while !*w && !self.stop.load(Ordering::Acquire) {
                    if idle {
                        w = self.woken.wait(w).expect("poisoned");
                        break;
                    }
                    let (g, t) = self.woken.wait_timeout(w, ROUND).expect("poisoned");
                    w = g;
                    if t.timed_out() {
                        break;
                    }
                }
                *w = false;
            }
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            // An error (a full disk, say) leaves the loaders to extend for themselves, and
            // they report it.
            let _ = self.round();
        }
    }

    /// Registers a load of `rel` (None when pre-extension is off).
    pub fn register(&self, rel: RelFileNumber) -> Option<Registration<'_>> {
        if !self.enabled {
            return None;
        }
        let slot = {
            let mut rels = self.rels.lock().expect("poisoned");
            let slot = rels
                .entry(rel)
                .or_insert_with(|| {
                    Arc::new(Slot {
                        taken: AtomicU64::new(0),
                        state: Mutex::new(SlotState {
                            active: 0,
                            extending: false,
                            taken_at_last_round: 0,
                            last_round: Instant::now(),
                            rate: 0.0,
                        }),
                    })
                })
                .clone();
            slot.state.lock().expect("poisoned").active += 1;
            slot
        };
        self.nudge();
        Some(Registration { pre: self, rel, slot })
    }

    /// Wakes the extender thread.
    fn nudge(&self) {
        if self.threaded {
            *self.wake.lock().expect("poisoned") = true;
            self.woken.notify_one();
        }
    }

    /// One round: every registered relation whose pages extended ahead fall short of its fill
    /// rate is extended by the difference.
    pub fn round(&self) -> Result<()> {
        let now = Instant::now();
        let work: Vec<(RelFileNumber, Arc<Slot>, u32)> = {
            let rels = self.rels.lock().expect("poisoned");
            rels.iter().filter_map(|(&rel, slot)| self.plan(rel, slot, now).map(|n| (rel, slot.clone(), n))).collect()
        };
        let mut first_error = None;
        for (rel, slot, n) in work {
            if let Err(e) = self.extend_planned(rel, &slot, n) {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// How many pages to extend `rel` by now, if any; marks it `extending` if so (the caller
    /// then runs [`Self::extend_planned`]).
    fn plan(&self, rel: RelFileNumber, slot: &Slot, now: Instant) -> Option<u32> {
        let mut st = slot.state.lock().expect("poisoned");
        if st.active == 0 || st.extending {
            return None;
        }
        let taken = slot.taken.load(Ordering::Acquire);
        let delta = taken - st.taken_at_last_round;
        let dt = now.duration_since(st.last_round).as_secs_f64().max(1e-3);
        st.taken_at_last_round = taken;
        st.last_round = now;
        let inst = delta as f64 / dt;
        st.rate = if st.rate == 0.0 { inst } else { 0.5 * st.rate + 0.5 * inst };
        let (max, min_step) = if self.threaded { (MAX_AHEAD, MIN_STEP) } else { (MAX_AHEAD_INLINE, MIN_STEP_INLINE) };
        let target = ((st.rate * LOOKAHEAD.as_secs_f64()) as i64).min(taken as i64).min(max);
        // Pages extended ahead and not yet taken: the relation's fresh blocks (those extended
        // for extension-lock waiters count too).
        let missing = target - self.pool.fresh_count(rel) as i64;
        if delta == 0 || missing < min_step {
            return None;
        }
        st.extending = true;
        Some(missing as u32)
    }

    /// Runs a planned extension and ends its `extending` mark (invariant 2).
    fn extend_planned(&self, rel: RelFileNumber, slot: &Slot, n: u32) -> Result<()> {
        let r = self.extend(rel, n);
        slot.state.lock().expect("poisoned").extending = false;
        // Registrations wait for `extending` under the registry's lock.
        let _rels = self.rels.lock().expect("poisoned");
        self.extended.notify_all();
        r
    }

    fn extend(&self, rel: RelFileNumber, n: u32) -> Result<()> {
        let blocks = self.pool.extend_fresh(rel, n)?;
        let empty = self.pool.block_size() - page::PAGE_HEADER_SIZE;
        let mut entries: Vec<(crate::storage::BlockNumber, usize)> = blocks.map(|b| (b, empty)).collect();
        let pins = self.pool.new_pins();
        fsm::record_many(&self.pool, &pins, rel, &mut entries)?;
        self.pages.fetch_add(n as u64, Ordering::Relaxed);
        self.extensions.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

impl Registration<'_> {
    /// The loader took `n` pages from the free space map.
    pub fn took_from_fsm(&self, n: u64) {
        self.slot.taken.fetch_add(n, Ordering::AcqRel);
    }

    /// The loader found no page in the FSM and needs `n`: the extender is behind (or has not
    /// started on this load), so the loader does its work for this relation now, on its own
    /// thread, unless an extension of it is already under way. The loader then looks in the
    /// FSM again.
    pub fn ran_dry(&self, n: u64) -> Result<()> {
        self.slot.taken.fetch_add(n, Ordering::AcqRel);
        match self.pre.plan(self.rel, &self.slot, Instant::now()) {
            Some(k) => self.pre.extend_planned(self.rel, &self.slot, k),
            None => Ok(()),
        }
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut rels = self.pre.rels.lock().expect("poisoned");
        loop {
            let mut st = self.slot.state.lock().expect("poisoned");
            if !st.extending {
                st.active -= 1;
                if st.active == 0 {
                    rels.remove(&self.rel);
                }
                return;
            }
            drop(st);
            rels = self.pre.extended.wait(rels).expect("poisoned");
        }
    }
}

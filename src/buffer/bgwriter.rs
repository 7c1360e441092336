//! The background writer: writes dirty buffers that the clock sweep is about to reach, so
//! that sessions rarely have to write a victim themselves (PostgreSQL's BgBufferSync).
//!
//! Each round (`bgwriter_delay`) it estimates the allocations of the next round as the recent
//! rate (smoothed) × `bgwriter_lru_multiplier`, then walks the buffers ahead of the clock hand,
//! counting reusable ones (unpinned, usage count 0) and writing those that are dirty, until it
//! has found enough or written `bgwriter_lru_maxpages` (then `maxwritten_clean` counts a stop).
//!
//! Invariants:
//! 1. It only writes buffers it has pinned with no other pin (`try_pin_unpinned`), under the
//!    shared content lock, as every writer does; it never evicts or remaps.
//! 2. It never walks more than one full lap of the pool per round.

use super::desc::{refcount, usage, DIRTY, VALID};
use super::pool::BufferPool;
use crate::stats::{self, BackendType, IoContext};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// pg_stat_bgwriter's counters.
#[derive(Default)]
pub struct BgWriterStats {
    pub buffers_clean: AtomicU64,
    pub maxwritten_clean: AtomicU64,
    pub rounds: AtomicU64,
}

pub struct BgWriter {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

#[derive(Clone, Copy)]
pub struct BgWriterSettings {
    pub delay: Duration,
    pub lru_maxpages: u64,
    pub lru_multiplier: f64,
}

impl BgWriter {
    /// Starts the writer thread, or returns None if `lru_maxpages` is 0.
    pub fn start(pool: Arc<BufferPool>, cfg: BgWriterSettings, st: Arc<BgWriterStats>) -> Option<BgWriter> {
        if cfg.lru_maxpages == 0 {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let handle = std::thread::Builder::new()
            .name("bgwriter".into())
            .spawn(move || run(&pool, cfg, &st, &stop2))
            .expect("spawn background writer");
        Some(BgWriter { stop, handle: Some(handle) })
    }

    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Drop for BgWriter {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

fn run(pool: &BufferPool, cfg: BgWriterSettings, st: &BgWriterStats, stop: &AtomicBool) {
    stats::set_backend_type(BackendType::BackgroundWriter);
    let pins = pool.new_pins();
    let mut last_alloc = pool.buffers_alloc.load(Ordering::Relaxed);
    let mut smoothed = 0.0f64;
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(cfg.delay);
        if stop.load(Ordering::Acquire) {
            break;
        }
        let alloc = pool.buffers_alloc.load(Ordering::Relaxed);
        let recent = alloc.saturating_sub(last_alloc) as f64;
        last_alloc = alloc;
        // PostgreSQL smooths over 16 rounds, but follows increases at once.
        smoothed = if recent > smoothed { recent } else { smoothed + (recent - smoothed) / 16.0 };
        let upcoming = (smoothed * cfg.lru_multiplier).ceil() as u64;
        st.rounds.fetch_add(1, Ordering::Relaxed);
        if upcoming == 0 {
            continue;
        }
        one_round(pool, &pins, cfg, st, upcoming);
    }
}

/// One round of the background writer, run by the caller (the crash torture runs the engine
/// without background threads and does their work at chosen points).
pub fn round_now(pool: &BufferPool, pins: &super::Pins, lru_maxpages: u64, upcoming: u64) {
    let cfg = BgWriterSettings { delay: std::time::Duration::ZERO, lru_maxpages, lru_multiplier: 1.0 };
    one_round(pool, pins, cfg, &BgWriterStats::default(), upcoming);
}

fn one_round(pool: &BufferPool, pins: &super::Pins, cfg: BgWriterSettings, st: &BgWriterStats, upcoming: u64) {
    let n = pool.nbuffers() as u64;
    let start = pool.clock_hand();
    let (mut reusable, mut written) = (0u64, 0u64);
    for step in 0..n {
        if reusable >= upcoming {
            return;
        }
        if written >= cfg.lru_maxpages {
            st.maxwritten_clean.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let id = ((start + step) % n) as u32;
        let s = pool.desc(id).state.load(Ordering::Relaxed);
        if refcount(s) != 0 || usage(s) != 0 {
            continue;
        }
        reusable += 1;
        if s & (DIRTY | VALID) != (DIRTY | VALID) || !pool.try_pin_unpinned(id) {
            continue;
        }
        let buf = pins.adopt(pool, id);
        if let Ok(n) = pool.flush_buffer(&buf, IoContext::Normal) {
            written += n as u64;
            st.buffers_clean.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{page, ForkNumber, RelFileNumber, Smgr};

    #[test]
    fn a_round_writes_dirty_reusable_buffers_ahead_of_the_hand() {
        let d = tempfile::tempdir().unwrap();
        let smgr = Arc::new(Smgr::new(d.path(), 8192, false).unwrap());
        let rel = RelFileNumber(9);
        smgr.create(rel, ForkNumber::Main).unwrap();
        let pool = BufferPool::new(smgr, 32, 4, 1024, "off", 1).unwrap();
        let pins = pool.new_pins();
        let bufs = pool.extend_by(&pins, rel, ForkNumber::Main, 20, None).unwrap();
        for b in &bufs {
            let mut pg = b.lock_exclusive();
            page::init(&mut pg, 0);
            pg.mark_dirty();
        }
        drop(bufs);
        // Cool every buffer down, as the sweep does on its way round: pin each once, release.
        let mut taken = Vec::new();
        while let (Some(id), _) = pool.clock_sweep_counted() {
            taken.push(id);
            if taken.len() == pool.nbuffers() as usize {
                break;
            }
        }
        for id in taken {
            pool.release_sweep_pin(id);
        }
        assert_eq!(pool.total_pins(), 0);
        assert!(pool.dirty_buffers() > 0);
        let st = BgWriterStats::default();
        let cfg = BgWriterSettings { delay: Duration::from_millis(10), lru_maxpages: 100, lru_multiplier: 2.0 };
        one_round(&pool, &pins, cfg, &st, 1000);
        assert_eq!(pool.dirty_buffers(), 0, "every dirty reusable buffer is cleaned");
        assert_eq!(st.buffers_clean.load(Ordering::Relaxed), 20);
        assert_eq!(pool.total_pins(), 0);
    }
}

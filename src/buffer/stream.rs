//! Read streams (PostgreSQL's read_stream.c, reasoned afresh): the caller says which blocks it
//! will want, in order; the stream pins them ahead, combines consecutive misses into one read
//! of up to `io_combine_limit` blocks, keeps up to `effective_io_concurrency` reads in flight,
//! and hands the buffers back in order.
//!
//! Look-ahead distance (how many buffers the stream keeps pinned ahead of the consumer):
//! starts at 1; doubles on every miss, up to the maximum; decays by one on every hit. So a
//! relation that is all in the pool is read one buffer ahead (no pins wasted), and one that is
//! on disk quickly reaches full look-ahead with whole combined reads in flight.
//!
//! A partly built read (consecutive blocks not yet io_combine_limit long) is not started while
//! buffers before it are ready for the consumer: it waits to grow into a full read, and is
//! started as soon as the consumer reaches it or the block sequence ends. Until then its blocks
//! are only numbers: nothing is pinned or mapped for them, so no other session can be made to
//! wait for a read that has not been started.
//!
//! Invariants:
//! 1. Buffers come back in exactly the order the block callback produced them.
//! 2. The stream never holds more than `max_distance` pins, where `max_distance` ≤ the
//!    session's free pin share − 1 (the buffer handed to the caller) and, with a ring, ≤ the
//!    ring size − 2 (the buffer handed out, and one pin held outside the stream: seed 002's two
//!    ring escapes), and leaves the ring's last 256 kB (at most a quarter of it) to pages already
//!    consumed, for a synchronized scan that follows. So a scan through a ring always finds
//!    the ring's oldest slot unpinned.
//! 3. Every buffer in the queue is pinned; a buffer whose read this stream started is not used
//!    until its I/O has ended (`BufferPool::wait_valid`); a read that failed is retried
//!    synchronously by the consumer, which reports the error.
//! 4. A buffer this stream maps for a read (IO_IN_PROGRESS) has its read started before the
//!    stream returns to its caller, and the read completes without the stream (see `aio`): a
//!    session that waits for it never waits on this stream's consumer (no deadlock, even when
//!    the consumer itself scans the same relation or waits for a lock).
//! 5. On drop, started reads are waited for, so no I/O outlives the pins that protect it from a
//!    concurrent DROP.

use super::aio::ReadRequest;
use super::pins::{Buffer, Pins};
use super::pool::{BufferPool, Staged};
use super::strategy::Strategy;
use crate::error::Result;
use crate::stats::{self, IoContext};
use crate::storage::{BlockNumber, ForkNumber, RelFileNumber};
use std::collections::VecDeque;
use std::time::Instant;

/// What a stream did (EXPLAIN shows it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamStats {
    /// Buffers found valid in the pool.
    pub hits: u64,
    /// Buffers another session was reading when the stream reached them.
    pub foreign: u64,
    /// Blocks read by this stream's reads.
    pub blocks_read: u64,
    /// Reads issued (each of up to io_combine_limit blocks).
    pub reads: u64,
    /// The largest look-ahead distance reached.
    pub max_distance: usize,
    /// The look-ahead limit.
    pub distance_limit: usize,
    /// Time the consumer waited for reads.
    pub wait_ns: u64,
}

struct Entry<'a, D> {
    buf: Buffer<'a>,
    data: D,
    staged: Staged,
    /// The last buffer of a read this stream started.
    ends_run: bool,
}

/// A stream of buffers for a sequence of blocks chosen by `next`.
pub struct ReadStream<'a, D, F: FnMut() -> Option<(BlockNumber, D)>> {
    pool: &'a BufferPool,
    pins: &'a Pins,
    rel: RelFileNumber,
    fork: ForkNumber,
    strategy: Option<Strategy>,
    next: F,
    /// Staged buffers, in order: pinned; hits, or reads already started.
    queue: VecDeque<Entry<'a, D>>,
    /// Consecutive blocks after the queue's, not yet staged (nothing pinned or mapped for
    /// them), growing into one read.
    pending: Vec<(BlockNumber, D)>,
    distance: usize,
    max_distance: usize,
    combine: usize,
    max_ios: usize,
    ios_in_flight: usize,
    exhausted: bool,
    /// The last block the callback produced (the stream's look-ahead frontier).
    frontier: Option<BlockNumber>,
    ctx: IoContext,
    stats: StreamStats,
}

impl<'a, D, F: FnMut() -> Option<(BlockNumber, D)>> ReadStream<'a, D, F> {
    /// A stream over `rel`'s `fork`, taking victims from `strategy`'s ring if given.
    pub fn new(
        pool: &'a BufferPool,
        pins: &'a Pins,
        rel: RelFileNumber,
        fork: ForkNumber,
        strategy: Option<Strategy>,
        next: F,
    ) -> ReadStream<'a, D, F> {
        let settings = pool.scan_settings();
        let combine = settings.io_combine_limit.clamp(1, 128);
        let max_ios = settings.effective_io_concurrency;
        // Invariant 2.
        let pin_budget = pins.limit().saturating_sub(pins.held()).saturating_sub(1).max(1);
        let mut max_distance = (max_ios.max(1) * combine).min(pin_budget);
        if let Some(s) = &strategy {
            // Keep the ring's last 256 kB (at most a quarter of it) out of the look-ahead, so a
            // synchronized scan following this one finds them; and at least 2 buffers (seed
            // 002's two escapes).
            let ring = s.ring_size_blocks();
            let tail = ((256 << 10) / pool.block_size()).min(ring / 4).max(2);
            max_distance = max_distance.min(ring.saturating_sub(tail).max(1));
        }
        let ctx = strategy.as_ref().map(|s| s.io_context()).unwrap_or(IoContext::Normal);
        ReadStream {
            pool,
            pins,
            rel,
            fork,
            strategy,
            next,
            queue: VecDeque::with_capacity(max_distance.min(1024)),
            pending: Vec::with_capacity(combine),
            distance: 1,
            max_distance,
            combine: combine.min(max_distance),
            max_ios: max_ios.max(1),
            ios_in_flight: 0,
            exhausted: false,
            frontier: None,
            ctx,
            stats: StreamStats { distance_limit: max_distance, ..Default::default() },
        }
    }

    pub fn stats(&self) -> &StreamStats {
        &self.stats
    }

    pub fn strategy(&self) -> Option<&Strategy> {
        self.strategy.as_ref()
    }

    /// The last block the stream asked its callback for: how far its look-ahead reaches.
    pub fn frontier(&self) -> Option<BlockNumber> {
        self.frontier
    }

    /// The next buffer (pinned, valid) and its data, or None at the end.
    pub fn next_buffer(&mut self) -> Result<Option<(Buffer<'a>, D)>> {
        self.look_ahead()?;
        let Some(e) = self.queue.pop_front() else { return Ok(None) };
        if e.ends_run {
            self.ios_in_flight -= 1;
        }
        if e.staged != Staged::Hit {
            let t0 = Instant::now();
            if self.pool.wait_valid(&e.buf, self.ctx)? {
                self.stats.wait_ns += t0.elapsed().as_nanos() as u64;
            }
        }
        Ok(Some((e.buf, e.data)))
    }

    fn look_ahead(&mut self) -> Result<()> {
        let bps = self.pool.smgr().blocks_per_segment();
        while !self.exhausted && self.queue.len() + self.pending.len() < self.distance && self.ios_in_flight < self.max_ios {
            let Some((block, data)) = (self.next)() else {
                self.exhausted = true;
                break;
            };
            self.frontier = Some(block);
            if let Some(&(last, _)) = self.pending.last() {
                if block != last.wrapping_add(1) || block % bps == 0 {
                    self.start_pending()?;
                }
            }
            self.pending.push((block, data));
            if self.pending.len() >= self.combine {
                self.start_pending()?;
            }
        }
        // A partial read waits to grow unless the consumer would otherwise stall on it.
        if !self.pending.is_empty() && (self.exhausted || self.queue.is_empty()) {
            self.start_pending()?;
        }
        Ok(())
    }

    /// Stages the pending blocks: hits are queued as they are; each run of consecutive misses
    /// becomes one read, started at once.
    fn start_pending(&mut self) -> Result<()> {
        let mut run: Vec<crate::buffer::BufferId> = Vec::with_capacity(self.pending.len());
        let mut run_first = 0;
        let pending = std::mem::take(&mut self.pending);
        let mut result = Ok(());
        for (block, data) in pending {
            if result.is_err() {
                break;
            }
            match self.pool.stage_read(self.pins, self.rel, self.fork, block, self.strategy.as_mut()) {
                Ok((buf, staged)) => {
                    if staged == Staged::Mine {
                        if run.is_empty() {
                            run_first = block;
                        }
                        run.push(buf.id());
                        self.distance = (self.distance * 2).min(self.max_distance);
                    } else {
                        self.submit(&mut run, run_first);
                        if staged == Staged::Hit {
                            self.stats.hits += 1;
                            self.distance = self.distance.saturating_sub(1).max(1);
                        } else {
                            self.stats.foreign += 1;
                        }
                    }
                    self.queue.push_back(Entry { buf, data, staged, ends_run: false });
                }
                Err(e) => result = Err(e),
            }
        }
        self.submit(&mut run, run_first);
        self.stats.max_distance = self.stats.max_distance.max(self.queue.len());
        result
    }

    /// Starts one read of the buffers in `run` (the last ones queued).
    fn submit(&mut self, run: &mut Vec<crate::buffer::BufferId>, first: BlockNumber) {
        if run.is_empty() {
            return;
        }
        let ids = std::mem::take(run);
        let n = ids.len();
        debug_assert!(self.queue.iter().rev().take(n).zip(ids.iter().rev()).all(|(e, &id)| e.buf.id() == id && e.staged == Staged::Mine));
        self.queue.back_mut().expect("the run is queued").ends_run = true;
        self.ios_in_flight += 1;
        self.stats.reads += 1;
        self.stats.blocks_read += n as u64;
        self.pool.submit_read(ReadRequest {
            rel: self.rel,
            fork: self.fork,
            block: first,
            ids,
            ctx: self.ctx,
            backend: stats::backend_type(),
        });
    }
}

impl<D, F: FnMut() -> Option<(BlockNumber, D)>> Drop for ReadStream<'_, D, F> {
    fn drop(&mut self) {
        // Invariant 4.
        for e in self.queue.drain(..) {
            if e.staged == Staged::Mine {
                self.pool.wait_valid_quiet(&e.buf);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::{IoMethod, StrategyKind};
    use crate::storage::Smgr;
    use std::sync::Arc;

    const METHODS: [IoMethod; 3] = [IoMethod::Sync, IoMethod::Worker, IoMethod::IoUring];

    fn pool_with_relation(blocks: u32, method: IoMethod) -> (tempfile::TempDir, Arc<BufferPool>, RelFileNumber) {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Arc::new(Smgr::new(dir.path(), 8192, false).unwrap());
        let rel = RelFileNumber(16384);
        smgr.create(rel, ForkNumber::Main).unwrap();
        smgr.zero_extend(rel, ForkNumber::Main, 0, blocks).unwrap();
        let pool = Arc::new(BufferPool::new(smgr, 256, 16, 1024, "off", 2).unwrap());
        pool.start_aio(method, 2).unwrap();
        (dir, pool, rel)
    }

    /// Seed 002: the consumer holds the buffer the stream returned while it asks for the next,
    /// and one more pin outside the stream (the previous tuple's slot). With the ring's two
    /// buffers reserved for them, the scan never has to take a buffer from outside its ring.
    /// (With the stream allowed the whole ring, this test fails: that is the seed's leak.)
    #[test]
    fn a_consumer_holding_two_pins_never_escapes_the_ring() {
        for method in METHODS {
            let (_d, pool, rel) = pool_with_relation(2000, method);
            let pins = pool.new_pins();
            let mut i = 0u32;
            let next = move || {
                i += 1;
                (i <= 2000).then_some((i - 1, i - 1))
            };
            let ring = Strategy::with_size(StrategyKind::BulkRead, 32);
            let mut stream = ReadStream::new(&pool, &pins, rel, ForkNumber::Main, Some(ring), next);
            let mut held = VecDeque::new();
            let mut expect = 0;
            while let Some((buf, data)) = stream.next_buffer().unwrap() {
                assert_eq!((buf.block(), data), (expect, expect), "buffers come back in order");
                expect += 1;
                held.push_back(buf);
                if held.len() > 2 {
                    held.pop_front();
                }
            }
            assert_eq!(expect, 2000);
            let s = stream.strategy().unwrap();
            assert_eq!(s.escapes, 0, "{method:?}: ring escapes");
            assert!(stream.stats().reads < 2000 / 4, "{method:?}: reads are combined: {:?}", stream.stats());
            assert_eq!(stream.stats().blocks_read, 2000);
            drop(held);
            drop(stream);
            assert_eq!(pins.held(), 0);
            assert!(pool.count_relation_buffers(rel) <= 32);
        }
    }

    #[test]
    fn a_stream_dropped_midway_leaves_no_io_in_progress() {
        for method in METHODS {
            let (_d, pool, rel) = pool_with_relation(600, method);
            let pins = pool.new_pins();
            {
                let mut i = 0u32;
                let next = move || {
                    i += 1;
                    (i <= 600).then_some((i - 1, ()))
                };
                let mut stream = ReadStream::new(&pool, &pins, rel, ForkNumber::Main, None, next);
                for _ in 0..40 {
                    stream.next_buffer().unwrap().unwrap();
                }
            }
            assert_eq!(pins.held(), 0);
            // Every block reads again, whether the stream had staged, submitted or finished it.
            for b in 0..600 {
                let buf = pool.read_buffer(&pins, rel, ForkNumber::Main, b, None).unwrap();
                assert!(crate::storage::page::is_new(&buf.lock_shared()));
            }
        }
    }
}

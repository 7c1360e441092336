//! 64 threads on a pool of 16 buffers read and write 1,000 pages whose contents encode their
//! own block number: no mix-up, no lost update, no deadlock, and the pool is fully unpinned at
//! the end. Also: a write takes the dirty buffers of the blocks after it along (write
//! combining), but only those it can have without waiting.

use heapstore::buffer::BufferPool;
use heapstore::storage::{page, ForkNumber, RelFileNumber, Smgr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const PAGES: u32 = 1000;
const THREADS: usize = 64;
const OPS: usize = 1500;

fn stamp(p: &[u8]) -> (u32, u64) {
    let o = page::PAGE_HEADER_SIZE;
    (u32::from_le_bytes(p[o..o + 4].try_into().unwrap()), u64::from_le_bytes(p[o + 4..o + 12].try_into().unwrap()))
}

#[test]
fn many_threads_tiny_pool_no_mixup() {
    let dir = tempfile::tempdir().unwrap();
    let smgr = Arc::new(Smgr::new(dir.path(), 8192, false).unwrap());
    let rel = RelFileNumber(16384);
    smgr.create(rel, ForkNumber::Main).unwrap();
    let pool = Arc::new(BufferPool::new(smgr, 16, 4, 1024, "off", THREADS).unwrap());
    {
        let pins = pool.new_pins();
        for b in 0..PAGES {
            let bufs = pool.extend_by(&pins, rel, ForkNumber::Main, 1, None).unwrap();
            assert_eq!(bufs[0].block(), b);
            let mut pg = bufs[0].lock_exclusive();
            page::init(&mut pg, 0);
            let o = page::PAGE_HEADER_SIZE;
            pg[o..o + 4].copy_from_slice(&b.to_le_bytes());
            pg[o + 4..o + 12].copy_from_slice(&0u64.to_le_bytes());
            page::set_flags(&mut pg, 0);
            pg.mark_dirty();
        }
    }
    let writes = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let pool = pool.clone();
            let writes = writes.clone();
            std::thread::spawn(move || {
                let pins = pool.new_pins();
                let mut x = 0x9E37_79B9u64 ^ (t as u64 * 7919);
                for _ in 0..OPS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let block = (x % PAGES as u64) as u32;
                    let buf = pool.read_buffer(&pins, rel, ForkNumber::Main, block, None).unwrap();
                    if x % 3 == 0 {
                        let mut pg = buf.lock_exclusive();
                        let (b, n) = stamp(&pg);
                        assert_eq!(b, block, "page mix-up");
                        let o = page::PAGE_HEADER_SIZE;
                        pg[o + 4..o + 12].copy_from_slice(&(n + 1).to_le_bytes());
                        pg.mark_dirty();
                        writes.fetch_add(1, Ordering::Relaxed);
                    } else {
                        let pg = buf.lock_shared();
                        assert_eq!(stamp(&pg).0, block, "page mix-up");
                    }
                }
                assert_eq!(pins.held(), 0);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(pool.total_pins(), 0, "pins leaked");
    let pins = pool.new_pins();
    let mut total = 0;
    for b in 0..PAGES {
        let buf = pool.read_buffer(&pins, rel, ForkNumber::Main, b, None).unwrap();
        let pg = buf.lock_shared();
        let (blk, n) = stamp(&pg);
        assert_eq!(blk, b);
        total += n;
    }
    assert_eq!(total, writes.load(Ordering::Relaxed), "lost updates");
    pool.flush_all(&pins, None).unwrap();
    drop(pins);
    assert_eq!(pool.total_pins(), 0);
}

/// A pool holding blocks 0..20 of one relation, each page stamped with its block number and
/// dirty, none pinned.
fn dirty_pool(dir: &std::path::Path, direct: bool) -> (Arc<BufferPool>, RelFileNumber) {
    let smgr = Arc::new(Smgr::new(dir, 8192, direct).unwrap());
    let rel = RelFileNumber(16385);
    smgr.create(rel, ForkNumber::Main).unwrap();
    let pool = Arc::new(BufferPool::new(smgr, 64, 4, 1024, "off", 4).unwrap());
    let pins = pool.new_pins();
    for b in 0..20u32 {
        let bufs = pool.extend_by(&pins, rel, ForkNumber::Main, 1, None).unwrap();
        let mut pg = bufs[0].lock_exclusive();
        page::init(&mut pg, 0);
        let o = page::PAGE_HEADER_SIZE;
        pg[o..o + 4].copy_from_slice(&b.to_le_bytes());
        pg.mark_dirty();
    }
    (pool, rel)
}

/// Which of blocks 0..20 hold their stamp on disk (with a valid checksum).
fn on_disk(pool: &BufferPool, rel: RelFileNumber) -> Vec<u32> {
    let mut buf = heapstore::buffer::memory::AlignedBuf::zeroed(8192);
    (0..20u32)
        .filter(|&b| {
            pool.smgr().read(rel, ForkNumber::Main, b, &mut buf).unwrap();
            if page::is_new(&buf) {
                return false;
            }
            page::verify(&buf, b, "test").unwrap();
            stamp(&buf).0 == b
        })
        .collect()
}

#[test]
fn a_write_takes_the_dirty_blocks_after_it_along() {
    for direct in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (pool, rel) = dirty_pool(dir.path(), direct);
        let pins = pool.new_pins();
        let id = |b: u32| pool.read_buffer(&pins, rel, ForkNumber::Main, b, None).unwrap().id();
        let (id3, id12) = (id(3), id(12));
        // Block 12 stays pinned and block 7's content lock is held by someone else (here: us,
        // exclusively): a write starting at 3 takes 3..=6 along and stops at 7.
        let held12 = pool.read_buffer(&pins, rel, ForkNumber::Main, 12, None).unwrap();
        assert_eq!(held12.id(), id12);
        {
            let seven = pool.read_buffer(&pins, rel, ForkNumber::Main, 7, None).unwrap();
            let _locked = seven.lock_exclusive();
            assert_eq!(pool.flush_buffer_id(&pins, id3).unwrap(), 4, "direct={direct}");
        }
        assert_eq!(on_disk(&pool, rel), vec![3, 4, 5, 6], "direct={direct}");
        // Now from 7: 7..=11, stopping at the pinned block 12 (at most io_combine_limit).
        assert_eq!(pool.flush_buffer_id(&pins, id(7)).unwrap(), 5);
        assert_eq!(on_disk(&pool, rel), (3..12).collect::<Vec<_>>());
        // A clean buffer writes nothing, and takes no neighbour along.
        assert_eq!(pool.flush_buffer_id(&pins, id3).unwrap(), 0);
        drop(held12);
        // Everything else, and the blocks before 3, which a write never looks back for.
        assert_eq!(pool.flush_all(&pins, None).unwrap(), 11);
        assert_eq!(on_disk(&pool, rel), (0..20).collect::<Vec<_>>());
        assert_eq!(pool.dirty_buffers(), 0);
        drop(pins);
        assert_eq!(pool.total_pins(), 0, "a neighbour's pin leaked");
    }
}

/// Stamps `n` new pages of `rel` (block number and `tag` in each), dirty, unpinned.
fn fill(pool: &BufferPool, rel: RelFileNumber, n: u32, tag: u64) -> Vec<u32> {
    let pins = pool.new_pins();
    let mut ids = Vec::new();
    for b in 0..n {
        let bufs = pool.extend_by(&pins, rel, ForkNumber::Main, 1, None).unwrap();
        assert_eq!(bufs[0].block(), b);
        ids.push(bufs[0].id());
        let mut pg = bufs[0].lock_exclusive();
        page::init(&mut pg, 0);
        let o = page::PAGE_HEADER_SIZE;
        pg[o..o + 4].copy_from_slice(&b.to_le_bytes());
        pg[o + 4..o + 12].copy_from_slice(&tag.to_le_bytes());
        pg.mark_dirty();
    }
    ids
}

/// Buffers a dropped relation held are what the next pages get (the free list), newest
/// first, before the clock sweep reaches buffers no one has used.
#[test]
fn a_dropped_relations_buffers_are_reused_before_untouched_ones() {
    let dir = tempfile::tempdir().unwrap();
    let smgr = Arc::new(Smgr::new(dir.path(), 8192, false).unwrap());
    let (a, c) = (RelFileNumber(16384), RelFileNumber(16386));
    smgr.create(a, ForkNumber::Main).unwrap();
    smgr.create(c, ForkNumber::Main).unwrap();
    let pool = BufferPool::new(smgr, 256, 4, 1024, "off", 4).unwrap();
    let mut freed = fill(&pool, a, 20, 1);
    pool.drop_relation_buffers(a);
    let mut got = fill(&pool, c, 20, 2);
    freed.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, freed, "the dropped relation's buffers are reused first");
    assert_eq!(pool.total_pins(), 0);
}

/// Relations created, filled and dropped by some threads while others read and write a
/// shared relation through a tiny pool: the free list and the clock sweep hand out the same
/// buffers concurrently, and a buffer is never given to two pages (each page's stamp stays
/// its own).
#[test]
fn freed_buffers_are_never_handed_out_twice() {
    let dir = tempfile::tempdir().unwrap();
    let smgr = Arc::new(Smgr::new(dir.path(), 8192, false).unwrap());
    let shared = RelFileNumber(16384);
    smgr.create(shared, ForkNumber::Main).unwrap();
    let pool = Arc::new(BufferPool::new(smgr.clone(), 48, 4, 1024, "off", 16).unwrap());
    fill(&pool, shared, 64, 0);
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let (pool, smgr) = (pool.clone(), smgr.clone());
            std::thread::spawn(move || {
                let pins = pool.new_pins();
                let mut x = 0x9E37_79B9u64 ^ (u64::from(t) * 7919);
                for round in 0..150u32 {
                    if t % 2 == 0 {
                        // A private relation: fill, check, drop its buffers.
                        let rel = RelFileNumber(20000 + t * 1000 + round);
                        smgr.create(rel, ForkNumber::Main).unwrap();
                        let n = 1 + round % 3;
                        fill(&pool, rel, n, u64::from(rel.0));
                        for b in 0..n {
                            let buf = pool.read_buffer(&pins, rel, ForkNumber::Main, b, None).unwrap();
                            let pg = buf.lock_shared();
                            assert_eq!(stamp(&pg), (b, u64::from(rel.0)), "page mix-up in a private relation");
                        }
                        pool.drop_relation_buffers(rel);
                    } else {
                        for _ in 0..4 {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            let block = (x % 64) as u32;
                            let buf = pool.read_buffer(&pins, shared, ForkNumber::Main, block, None).unwrap();
                            let pg = buf.lock_shared();
                            assert_eq!(stamp(&pg), (block, 0), "page mix-up in the shared relation");
                        }
                    }
                }
                assert_eq!(pins.held(), 0);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(pool.total_pins(), 0, "pins leaked");
}

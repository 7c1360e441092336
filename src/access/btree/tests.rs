//! Unit tests: inserts with splits, scans, unique checks, build, vacuum and concurrent readers
//! during splits, on a pool without WAL (the WAL, restart and crash tests are in
//! tests/btree.rs).

use super::build::sort_entries;
use super::*;
use crate::buffer::BufferPool;
use crate::rng::Rng;
use crate::storage::{ForkNumber, RelFileNumber, Smgr};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

const REL: RelFileNumber = RelFileNumber(16384);

fn new_pool(nbuffers: usize) -> (tempfile::TempDir, BufferPool) {
    let dir = tempfile::tempdir().unwrap();
    let smgr = Arc::new(Smgr::new(dir.path(), 8192, false).unwrap());
    smgr.create(REL, ForkNumber::Main).unwrap();
    let pool = BufferPool::new(smgr, nbuffers, 4, 64, "off", 8).unwrap();
    (dir, pool)
}

fn k8(i: u64) -> Vec<u8> {
    let mut v = Vec::new();
    keycode::encode_values(&mut v, &[(crate::types::SqlType::new(crate::types::TypeId::Int8), &crate::types::Value::Int8(i as i64))]);
    v
}

/// A key of about `len` bytes that sorts like `i`.
fn long_key(i: u64, len: usize) -> Vec<u8> {
    let mut v = i.to_be_bytes().to_vec();
    v.resize(len, b'x');
    v
}

fn all(t: &BTree<'_>) -> Vec<(Vec<u8>, Tid)> {
    t.scan(Bound::Unbounded, Bound::Unbounded).unwrap().map(|r| r.unwrap()).collect()
}

#[test]
fn increasing_inserts_split_rightmost_and_stay_ordered() {
    let (_d, pool) = new_pool(256);
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, false);
    t.create_empty().unwrap();
    let n = 30_000u64;
    for i in 0..n {
        t.insert(&k8(i), (i as u32, 1), None).unwrap();
    }
    let rep = t.check().unwrap();
    assert_eq!(rep.entries, n);
    assert!(rep.root_level >= 1, "{rep:?}");
    // Rightmost splits leave leaves ~90 % full: about n * 25 bytes / (0.9 * 8152) leaves.
    let per_leaf = n / rep.leaf_pages;
    assert!(per_leaf > 250, "leaves too empty for increasing keys: {per_leaf} entries per leaf");
    for i in (0..n).step_by(7) {
        assert_eq!(t.lookup_eq(&k8(i)).unwrap(), vec![(i as u32, 1)]);
    }
    assert!(t.lookup_eq(&k8(n)).unwrap().is_empty());
    let got: Vec<u32> = t.scan(Bound::Included(&k8(100)[..]), Bound::Excluded(&k8(200)[..])).unwrap().map(|r| r.unwrap().1 .0).collect();
    assert_eq!(got, (100..200).collect::<Vec<u32>>());
    assert_eq!(pins.held(), 0, "no pin leaked");
}

#[test]
fn random_inserts_with_duplicates_and_long_keys() {
    let (_d, pool) = new_pool(64); // small pool: pages are evicted and read back
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, false);
    t.create_empty().unwrap();
    let mut model = BTreeSet::new();
    let mut rng = Rng::new(7);
    for i in 0..6_000u32 {
        let k = long_key(rng.below(500), 40 + rng.below(400) as usize);
        let tid = (i, (i % 7) as u16 + 1);
        t.insert(&k, tid, None).unwrap();
        model.insert((k, tid));
    }
    let rep = t.check().unwrap();
    assert_eq!(rep.entries, model.len() as u64);
    assert!(rep.root_level >= 2, "long keys make a deeper tree: {rep:?}");
    assert_eq!(all(&t), model.iter().cloned().collect::<Vec<_>>());
    for k in model.iter().map(|(k, _)| k.clone()).collect::<BTreeSet<_>>().iter().take(50) {
        let want: Vec<Tid> = model.range((k.clone(), (0, 0))..=(k.clone(), (u32::MAX, u16::MAX))).map(|(_, t)| *t).collect();
        assert_eq!(t.lookup_eq(k).unwrap(), want);
        let scanned: Vec<Tid> = t.scan(Bound::Included(&k[..]), Bound::Included(&k[..])).unwrap().map(|r| r.unwrap().1).collect();
        assert_eq!(scanned, want);
    }
    // Duplicate (key, tid) is refused.
    let (k, tid) = model.iter().next().unwrap().clone();
    assert!(t.insert(&k, tid, None).is_err());
    // Too long a key.
    let e = t.insert(&vec![b'a'; 5000], (1, 1), None).unwrap_err();
    assert_eq!(e.code, crate::error::sqlstate::PROGRAM_LIMIT_EXCEEDED);
    assert_eq!(pins.held(), 0);
}

/// The entries `lo <= (key) <= hi` of the model, descending: what a backward scan must give.
fn model_backward(model: &BTreeSet<(Vec<u8>, Tid)>, lo: Bound<&Vec<u8>>, hi: Bound<&Vec<u8>>) -> Vec<(Vec<u8>, Tid)> {
    model
        .iter()
        .filter(|(k, _)| match lo {
            Bound::Included(l) => k >= l,
            Bound::Excluded(l) => k > l,
            Bound::Unbounded => true,
        })
        .filter(|(k, _)| match hi {
            Bound::Included(h) => k <= h,
            Bound::Excluded(h) => k < h,
            Bound::Unbounded => true,
        })
        .rev()
        .cloned()
        .collect()
}

#[test]
fn backward_scans_give_the_forward_order_reversed() {
    let (_d, pool) = new_pool(64);
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, false);
    t.create_empty().unwrap();
    // An empty index, then one with long keys (a deep tree) and many duplicates (equal keys
    // span leaves), keys of every first byte included.
    assert!(t.scan_backward(Bound::Unbounded, Bound::Unbounded).next().is_none());
    let mut model = BTreeSet::new();
    let mut rng = Rng::new(11);
    for i in 0..6_000u32 {
        let mut k = long_key(rng.below(300), 40 + rng.below(300) as usize);
        k[0] = (rng.below(3) * 127) as u8;
        let tid = (i, (i % 5) as u16 + 1);
        t.insert(&k, tid, None).unwrap();
        model.insert((k, tid));
    }
    assert!(t.check().unwrap().root_level >= 2);
    let back: Vec<_> = t.scan_backward(Bound::Unbounded, Bound::Unbounded).map(|r| r.unwrap()).collect();
    assert_eq!(back, model_backward(&model, Bound::Unbounded, Bound::Unbounded));
    let keys: Vec<Vec<u8>> = model.iter().map(|(k, _)| k.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    for _ in 0..60 {
        // Bounds on keys that exist and on keys that do not (a key's prefix).
        let pick = |rng: &mut Rng| {
            let k = keys[rng.below(keys.len() as u64) as usize].clone();
            if rng.below(3) == 0 {
                k[..k.len() / 2].to_vec()
            } else {
                k
            }
        };
        let (a, b) = (pick(&mut rng), pick(&mut rng));
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let lob = match rng.below(3) {
            0 => Bound::Included(&lo),
            1 => Bound::Excluded(&lo),
            _ => Bound::Unbounded,
        };
        let hib = match rng.below(3) {
            0 => Bound::Included(&hi),
            1 => Bound::Excluded(&hi),
            _ => Bound::Unbounded,
        };
        fn slice(b: Bound<&Vec<u8>>) -> Bound<&[u8]> {
            b.map(|v| &v[..])
        }
        let got: Vec<_> = t.scan_backward(slice(lob), slice(hib)).map(|r| r.unwrap()).collect();
        assert_eq!(got, model_backward(&model, lob, hib), "bounds {lob:?} {hib:?}");
        let mut fwd: Vec<_> = t.scan(slice(lob), slice(hib)).unwrap().map(|r| r.unwrap()).collect();
        fwd.reverse();
        assert_eq!(got, fwd);
    }
    // Marks are computed for every entry returned.
    let mut cur = t.scan_backward(Bound::Unbounded, Bound::Unbounded);
    let mut marked = 0;
    while let Some(e) = cur.next_marked(&mut |tid| Ok(tid.1 == 1)) {
        let (_, tid, m) = e.unwrap();
        assert_eq!(m, tid.1 == 1);
        marked += usize::from(m);
    }
    assert_eq!(marked, model.iter().filter(|(_, t)| t.1 == 1).count());
    assert_eq!(pins.held(), 0, "no pin leaked");
}

#[test]
fn unique_checks_ask_about_every_equal_key_and_wait_without_locks() {
    let (_d, pool) = new_pool(64);
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, true).with_name("t_pkey");
    t.create_empty().unwrap();
    // Many dead duplicates of one key spanning several leaves, among other keys.
    for i in 0..2000u32 {
        t.insert(&long_key(1, 200), (i, 1), None).unwrap();
        t.insert(&long_key(i as u64 + 2, 200), (i, 2), None).unwrap();
    }
    let mut asked = Vec::new();
    let mut no_conflict = |tid: Tid| {
        asked.push(tid);
        Ok(UniqueVerdict::NoConflict)
    };
    t.insert(&long_key(1, 200), (5000, 1), Some(&mut no_conflict)).unwrap();
    assert_eq!(asked.len(), 2000, "every equal key was asked about");
    let mut conflict = |tid: Tid| Ok(if tid == (1500, 1) { UniqueVerdict::Conflict } else { UniqueVerdict::NoConflict });
    let e = t.insert(&long_key(1, 200), (5001, 1), Some(&mut conflict)).unwrap_err();
    assert!(is_unique_violation(&e));
    assert_eq!(e.message, "duplicate key value violates unique constraint \"t_pkey\"");
    // WaitFor: the wait hook runs with no pin or lock held, then the check is repeated.
    let mut waited = 0;
    let mut first = true;
    let mut wait_then_ok = |_tid: Tid| Ok(if std::mem::take(&mut first) { UniqueVerdict::WaitFor(42) } else { UniqueVerdict::NoConflict });
    let pins_ref = &pins;
    t.insert_unique(&long_key(1, 200), (5002, 1), Some(&mut wait_then_ok), &mut |xid| {
        assert_eq!(xid, 42);
        assert_eq!(pins_ref.held(), 0, "waits hold no pin");
        waited += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(waited, 1);
    assert_eq!(t.lookup_eq(&long_key(1, 200)).unwrap().len(), 2002);
    t.check().unwrap();
}

#[test]
fn build_bottom_up_then_insert_and_vacuum() {
    let (_d, pool) = new_pool(128);
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, false);
    let mut rng = Rng::new(3);
    let mut entries: Vec<(Vec<u8>, Tid)> = (0..40_000u32).map(|i| (k8(rng.below(10_000)), (i / 100, (i % 100) as u16 + 1))).collect();
    sort_entries(&mut entries);
    let st = t.build(entries.clone()).unwrap();
    assert_eq!(st.entries, 40_000);
    let rep = t.check().unwrap();
    assert_eq!(rep.entries, 40_000);
    assert_eq!(rep.root_level, st.root_level);
    assert!(st.root_level >= 1);
    assert_eq!(all(&t), entries);
    // Not sorted: refused.
    let (_d2, pool2) = new_pool(32);
    let pins2 = pool2.new_pins();
    let t2 = BTree::new(&pool2, &pins2, None, REL, false);
    assert!(t2.build(vec![(k8(2), (1, 1)), (k8(1), (1, 2))]).is_err());
    // Inserts into a built tree split its 90 %-full leaves.
    let mut model: BTreeSet<(Vec<u8>, Tid)> = entries.into_iter().collect();
    for i in 0..5_000u32 {
        let e = (k8(rng.below(12_000)), (1000 + i, 1));
        t.insert(&e.0, e.1, None).unwrap();
        model.insert(e);
    }
    assert_eq!(t.check().unwrap().entries, model.len() as u64);
    // VACUUM: every entry whose heap block is even is dead.
    let removed = t.bulk_delete(&mut |tid| tid.0 % 2 == 0).unwrap();
    let before = model.len();
    model.retain(|(_, tid)| tid.0 % 2 != 0);
    assert_eq!(removed as usize, before - model.len());
    assert_eq!(t.check().unwrap().entries, model.len() as u64);
    assert_eq!(all(&t), model.iter().cloned().collect::<Vec<_>>());
    // Empty build: a root leaf with nothing.
    let (_d3, pool3) = new_pool(32);
    let pins3 = pool3.new_pins();
    let t3 = BTree::new(&pool3, &pins3, None, REL, false);
    assert_eq!(t3.build(Vec::new()).unwrap().entries, 0);
    assert_eq!(t3.check().unwrap().entries, 0);
    assert!(all(&t3).is_empty());
}

#[test]
fn empty_file_is_an_empty_index_until_the_first_insert() {
    let (_d, pool) = new_pool(32);
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, false);
    assert!(t.lookup_eq(b"a").unwrap().is_empty());
    assert!(all(&t).is_empty());
    assert_eq!(t.bulk_delete(&mut |_| true).unwrap(), 0);
    assert!(!t.check().unwrap().initialized);
    t.insert(b"a", (1, 1), None).unwrap();
    assert_eq!(t.lookup_eq(b"a").unwrap(), vec![(1, 1)]);
    assert!(t.create_empty().is_err(), "create_empty refuses a file with data");
}

#[test]
fn concurrent_readers_never_miss_a_committed_key_during_splits() {
    let (_d, pool) = new_pool(1024);
    {
        let pins = pool.new_pins();
        BTree::new(&pool, &pins, None, REL, false).create_empty().unwrap();
    }
    let committed: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let writers = 3u64;
    let per_writer = 15_000u64;
    let done = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..writers {
            let (pool, committed, done) = (&pool, &committed, &done);
            s.spawn(move || {
                let pins = pool.new_pins();
                let t = BTree::new(pool, &pins, None, REL, false);
                let mut rng = Rng::new(w + 1);
                for i in 0..per_writer {
                    // Interleaved random keys: splits happen all over the tree.
                    let k = rng.below(1 << 40) * writers + w;
                    let _ = i;
                    t.insert(&long_key(k, 60), ((k % 1_000_000) as u32, 1), None).unwrap();
                    committed.lock().unwrap().push(k);
                }
                done.fetch_add(1, std::sync::atomic::Ordering::Release);
            });
        }
        for r in 0..3u64 {
            let (pool, committed, done) = (&pool, &committed, &done);
            s.spawn(move || {
                let pins = pool.new_pins();
                let t = BTree::new(pool, &pins, None, REL, false);
                let mut rng = Rng::new(100 + r);
                let mut found = 0u64;
                // Bounded by count, not time: at most this many lookups, stopping early when
                // the writers are done.
                for _ in 0..10_000_000u64 {
                    let k = {
                        let c = committed.lock().unwrap();
                        if c.is_empty() {
                            drop(c);
                            std::thread::yield_now();
                            continue;
                        }
                        c[rng.below(c.len() as u64) as usize]
                    };
                    let got = t.lookup_eq(&long_key(k, 60)).unwrap();
                    assert!(got.contains(&((k % 1_000_000) as u32, 1)), "committed key {k} not found");
                    found += 1;
                    if found % 200 == 0 {
                        // A range scan must return every key committed before it started.
                        let (lo, hi) = (long_key(k, 60), long_key(k + (1 << 38), 60));
                        let want: Vec<u64> = {
                            let c = committed.lock().unwrap();
                            c.iter().copied().filter(|&x| long_key(x, 60) >= lo && long_key(x, 60) <= hi).collect()
                        };
                        let seen: BTreeSet<Vec<u8>> =
                            t.scan(Bound::Included(&lo[..]), Bound::Included(&hi[..])).unwrap().map(|r| r.unwrap().0).collect();
                        for &x in &want {
                            assert!(seen.contains(&long_key(x, 60)), "range scan missed committed key {x}");
                        }
                        // So must a backward scan, in descending order.
                        let back: Vec<Vec<u8>> =
                            t.scan_backward(Bound::Included(&lo[..]), Bound::Included(&hi[..])).map(|r| r.unwrap().0).collect();
                        assert!(back.windows(2).all(|w| w[0] >= w[1]), "backward scan out of order");
                        let back: BTreeSet<Vec<u8>> = back.into_iter().collect();
                        for x in want {
                            assert!(back.contains(&long_key(x, 60)), "backward scan missed committed key {x}");
                        }
                    }
                    if done.load(std::sync::atomic::Ordering::Acquire) == writers as usize && found > 1000 {
                        break;
                    }
                }
                assert!(found > 1000, "the reader ran lookups while the writers split pages");
                assert_eq!(pins.held(), 0);
            });
        }
    });
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, false);
    let rep = t.check().unwrap();
    assert_eq!(rep.entries, writers * per_writer);
    assert!(rep.root_level >= 1);
}

#[test]
fn concurrent_unique_inserts_of_one_key_let_exactly_one_win() {
    let (_d, pool) = new_pool(256);
    {
        let pins = pool.new_pins();
        BTree::new(&pool, &pins, None, REL, true).create_empty().unwrap();
    }
    let keys = 1_500u64;
    let threads = 4u32;
    let wins = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for th in 0..threads {
            let (pool, wins) = (&pool, &wins);
            s.spawn(move || {
                let pins = pool.new_pins();
                let t = BTree::new(pool, &pins, None, REL, true);
                for i in 0..keys {
                    // Every thread inserts every key (with its own heap TID); any existing
                    // entry is a live row, so only the first inserter of a key may succeed.
                    let k = long_key(i.wrapping_mul(0x9E37_79B9) % 100_000, 100);
                    let mut any = |_: Tid| Ok(UniqueVerdict::Conflict);
                    match t.insert(&k, (i as u32, th as u16 + 1), Some(&mut any)) {
                        Ok(()) => {
                            wins.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Err(e) => assert!(is_unique_violation(&e), "{e}"),
                    }
                }
            });
        }
    });
    assert_eq!(wins.into_inner(), keys, "exactly one insert per key succeeds");
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, true);
    assert_eq!(t.check().unwrap().entries, keys);
}

/// A reader that read a downlink before the leaf split (the Lehman–Yao race, made deterministic
/// by pausing the reader between reading the downlink and locking the child) still finds its
/// key by moving right.
#[test]
fn a_reader_arriving_after_a_split_moves_right() {
    let (_d, pool) = new_pool(128);
    let pins = pool.new_pins();
    let t = BTree::new(&pool, &pins, None, REL, false);
    t.create_empty().unwrap();
    for i in 0..2000u32 {
        t.insert(format!("b{i:05}").as_bytes(), (i, 1), None).unwrap();
    }
    let target = b"b01000".to_vec();
    let sk = page::ScanKey { key: &target, tid: page::TidBound::NegInf };
    let stale = super::search::descend(&t, &sk, None, 0).unwrap().unwrap();
    let stale_block = stale.block();
    drop(stale);
    let cursor = t.scan(Bound::Included(&target[..]), Bound::Included(&target[..])).unwrap();
    // Split the leaf until the target has moved off it (keys just below the target).
    let other_pins = pool.new_pins();
    let writer = BTree::new(&pool, &other_pins, None, REL, false);
    let mut moved = false;
    for j in 0..10_000u32 {
        writer.insert(format!("b00999/{j:05}").as_bytes(), (100_000 + j, 1), None).unwrap();
        let buf = t.read(stale_block).unwrap();
        let pg = buf.lock_shared();
        let o = page::opaque(&pg);
        if page::beyond_high_key(&pg, &o, &sk) {
            moved = true;
            break;
        }
    }
    assert!(moved, "the target key moved right of its old leaf");
    let mut got = Vec::new();
    super::search::lookup_from(&t, t.read(stale_block).unwrap(), &target, &mut got).unwrap();
    assert_eq!(got, vec![(1000, 1)]);
    let scanned: Vec<Tid> = cursor.map(|r| r.unwrap().1).collect();
    assert_eq!(scanned, vec![(1000, 1)]);
    t.check().unwrap();
}

/// A handle that cached the root before the tree grew reads the meta page again when its root
/// is no longer root (instead of walking right along a low level).
#[test]
fn a_cached_root_that_is_no_longer_root_is_refreshed() {
    let (_d, pool) = new_pool(256);
    let pins = pool.new_pins();
    let old = BTree::new(&pool, &pins, None, REL, false);
    old.create_empty().unwrap();
    old.insert(&k8(0), (0, 1), None).unwrap();
    assert_eq!(old.root_cache.get().map(|m| m.level), Some(0));
    let other_pins = pool.new_pins();
    let writer = BTree::new(&pool, &other_pins, None, REL, false);
    for i in 1..40_000u64 {
        writer.insert(&k8(i), (i as u32, 1), None).unwrap();
    }
    assert_eq!(old.lookup_eq(&k8(39_999)).unwrap(), vec![(39_999, 1)]);
    let fresh = writer.check().unwrap();
    assert_eq!(old.root_cache.get().map(|m| (m.root, m.level)), Some((fresh.root, fresh.root_level)));
    assert!(fresh.root_level >= 1);
}

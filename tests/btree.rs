//! B-tree indexes through a whole database: WAL-logged inserts, splits, builds and vacuums
//! survive clean restarts and crashes (WAL replay), checked against an in-memory model.

mod common;
use common::*;
use heapstore::access::btree::{build::sort_entries, keycode, BTree, Tid};
use heapstore::storage::RelFileNumber;
use heapstore::types::{SqlType, TypeId, Value};
use heapstore::Database;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::Path;

/// A relation file the catalog keeps (start-up removes unreferenced files as orphans): an
/// empty table's file, used here as the index's file until the catalog knows indexes.
fn index_file(db: &Database) -> RelFileNumber {
    let mut s = db.session();
    s.execute("CREATE TABLE idx_holder (a integer)").unwrap();
    db.shared().catalog.get("idx_holder").unwrap().relfile
}

fn key(i: i64, pad: usize) -> Vec<u8> {
    let mut k = Vec::new();
    keycode::encode_values(
        &mut k,
        &[(SqlType::new(TypeId::Int8), &Value::Int8(i)), (SqlType::new(TypeId::Text), &Value::Text("p".repeat(pad)))],
    );
    k
}

/// Runs `f` on the index of `db` with a session's pins and the WAL.
fn with_tree<R>(db: &Database, rel: RelFileNumber, f: impl FnOnce(&BTree<'_>) -> R) -> R {
    let sh = db.shared();
    let pins = sh.pool.new_pins();
    let fpw = sh.settings.bool("full_page_writes");
    let t = BTree::new(&sh.pool, &pins, Some(&*sh.wal), rel, false).with_full_page_writes(fpw).with_name("idx");
    f(&t)
}

/// Makes everything logged so far durable, as a commit does.
fn commit_point(db: &Database) {
    let w = &db.shared().wal;
    w.flush(w.insert_lsn()).unwrap();
}

fn contents(db: &Database, rel: RelFileNumber) -> Vec<(Vec<u8>, Tid)> {
    with_tree(db, rel, |t| {
        let rep = t.check().unwrap();
        let all: Vec<_> = t.scan(Bound::Unbounded, Bound::Unbounded).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(rep.entries, all.len() as u64);
        all
    })
}

fn reopen(dir: &Path) -> Database {
    Database::open(dir, &["shared_buffers=1MB".to_string()]).unwrap()
}

#[test]
fn splits_survive_a_crash_and_a_clean_restart() {
    let (_t, dir, db) = new_db(&["shared_buffers=1MB"]);
    let rel = index_file(&db);
    let mut model = BTreeSet::new();
    with_tree(&db, rel, |t| {
        t.create_empty().unwrap();
        for i in 0..20_000i64 {
            let k = key((i * 7919) % 20_000, (i % 50) as usize);
            let tid = (i as u32 / 50, (i % 50) as u16 + 1);
            t.insert(&k, tid, None).unwrap();
            model.insert((k, tid));
            if i == 10_000 {
                db.checkpoint().unwrap(); // later first changes log full-page images
            }
        }
    });
    commit_point(&db);
    db.crash();
    let db = reopen(&dir);
    let want: Vec<_> = model.iter().cloned().collect();
    assert!(contents(&db, rel) == want, "index after crash recovery differs from the model");
    let rep = with_tree(&db, rel, |t| t.check().unwrap());
    assert!(rep.root_level >= 1);
    db.close().unwrap();
    let db = reopen(&dir);
    assert!(contents(&db, rel) == want, "index after a clean restart differs");
}

#[test]
fn build_and_vacuum_are_logged() {
    let (_t, dir, db) = new_db(&["shared_buffers=1MB"]);
    let rel = index_file(&db);
    let mut entries: Vec<(Vec<u8>, Tid)> = (0..30_000i64).map(|i| (key(i % 9_000, 3), (i as u32 / 100, (i % 100) as u16 + 1))).collect();
    sort_entries(&mut entries);
    let stats = with_tree(&db, rel, |t| t.build(entries.clone()).unwrap());
    assert_eq!(stats.entries, 30_000);
    let removed = with_tree(&db, rel, |t| t.bulk_delete(&mut |tid| tid.0 % 3 == 0).unwrap());
    entries.retain(|(_, tid)| tid.0 % 3 != 0);
    assert_eq!(removed, 30_000 - entries.len() as u64);
    commit_point(&db);
    db.crash();
    let db = reopen(&dir);
    assert!(contents(&db, rel) == entries, "built and vacuumed index differs after recovery");
}

#[derive(Clone, Debug)]
enum Op {
    Insert(i64, u16),
    /// A unique insert: any entry with the same key is a conflict.
    InsertUnique(i64),
    InsertRun(i64, u16),
    Vacuum(u32),
    Lookup(i64),
    Range(i64, i64),
    Checkpoint,
    Restart,
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => (0i64..400, 0u16..300).prop_map(|(k, p)| Op::Insert(k, p)),
        6 => (0i64..400, 1u16..400).prop_map(|(k, n)| Op::InsertRun(k, n)),
        6 => (0i64..400).prop_map(Op::InsertUnique),
        2 => (2u32..5).prop_map(Op::Vacuum),
        6 => (0i64..400).prop_map(Op::Lookup),
        4 => (0i64..400, 0i64..400).prop_map(|(a, b)| Op::Range(a.min(b), a.max(b))),
        1 => Just(Op::Checkpoint),
        1 => Just(Op::Restart),
        1 => Just(Op::Crash),
    ]
}

fn run_model(ops: &[Op]) {
    let (_t, dir, db) = new_db(&["shared_buffers=1MB"]);
    let rel = index_file(&db);
    with_tree(&db, rel, |t| t.create_empty().unwrap());
    let mut db = Some(db);
    let mut model: BTreeSet<(Vec<u8>, Tid)> = BTreeSet::new();
    let mut next_tid = 1u32;
    for op in ops {
        let d = db.as_ref().unwrap();
        match *op {
            Op::Insert(k, pad) => {
                let e = (key(k, pad as usize), (next_tid, 1));
                next_tid += 1;
                with_tree(d, rel, |t| t.insert(&e.0, e.1, None).unwrap());
                model.insert(e);
            }
            Op::InsertUnique(k) => {
                let e = (key(k, 0), (next_tid, 3));
                next_tid += 1;
                let mut asked = Vec::new();
                let r = with_tree(d, rel, |t| {
                    t.insert(
                        &e.0,
                        e.1,
                        Some(&mut |tid| {
                            asked.push(tid);
                            Ok(heapstore::access::btree::UniqueVerdict::Conflict)
                        }),
                    )
                });
                let existing: Vec<Tid> = model.iter().filter(|(kk, _)| *kk == e.0).map(|(_, t)| *t).collect();
                if existing.is_empty() {
                    r.unwrap();
                    model.insert(e);
                } else {
                    assert!(heapstore::access::btree::is_unique_violation(&r.unwrap_err()));
                    assert_eq!(asked, existing[..1].to_vec(), "the first equal entry is asked about first");
                }
            }
            Op::InsertRun(k, n) => with_tree(d, rel, |t| {
                for i in 0..n {
                    let e = (key(k + i as i64, 100), (next_tid, 2));
                    next_tid += 1;
                    t.insert(&e.0, e.1, None).unwrap();
                    model.insert(e);
                }
            }),
            Op::Vacuum(m) => {
                let removed = with_tree(d, rel, |t| t.bulk_delete(&mut |tid| tid.0 % m == 0).unwrap());
                let before = model.len();
                model.retain(|(_, tid)| tid.0 % m != 0);
                assert_eq!(removed as usize, before - model.len());
            }
            Op::Lookup(k) => {
                let got = with_tree(d, rel, |t| t.lookup_eq(&key(k, 0)).unwrap());
                let want: Vec<Tid> = model.iter().filter(|(kk, _)| *kk == key(k, 0)).map(|(_, t)| *t).collect();
                assert_eq!(got, want);
            }
            Op::Range(a, b) => {
                let (lo, hi) = (key(a, 0), key(b, 0));
                let got: Vec<_> = with_tree(d, rel, |t| {
                    t.scan(Bound::Excluded(&lo[..]), Bound::Included(&hi[..])).unwrap().map(|r| r.unwrap()).collect()
                });
                let want: Vec<_> = model.iter().filter(|(k, _)| *k > lo && *k <= hi).cloned().collect();
                assert!(got == want, "range ({a}, {b}] differs");
            }
            Op::Checkpoint => d.checkpoint().unwrap(),
            Op::Restart => {
                db.take().unwrap().close().unwrap();
                db = Some(reopen(&dir));
            }
            Op::Crash => {
                commit_point(d);
                db.take().unwrap().crash();
                db = Some(reopen(&dir));
                let want: Vec<_> = model.iter().cloned().collect();
                assert!(contents(db.as_ref().unwrap(), rel) == want, "index differs from the model after crash recovery");
            }
        }
    }
    let d = db.take().unwrap();
    let want: Vec<_> = model.iter().cloned().collect();
    assert!(contents(&d, rel) == want, "index differs from the model at the end");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, max_shrink_iters: 50, ..ProptestConfig::default() })]
    #[test]
    fn model_based_inserts_vacuums_lookups_with_restarts_and_crashes(ops in proptest::collection::vec(op(), 1..120)) {
        run_model(&ops);
    }
}

/// Pages changed after a checkpoint are torn on disk at the crash (half old, half zeros):
/// recovery rebuilds them from the full-page images their first change logged.
#[test]
fn torn_pages_are_rebuilt_from_full_page_images() {
    let (_t, dir, db) = new_db(&["shared_buffers=1MB"]);
    let rel = index_file(&db);
    let mut model = BTreeSet::new();
    let mut tid = 0u32;
    let mut insert = |db: &Database, n: u32, model: &mut BTreeSet<(Vec<u8>, Tid)>| {
        with_tree(db, rel, |t| {
            for _ in 0..n {
                tid += 1;
                let e = (key((tid as i64 * 7919) % 5000, 20), (tid, 1));
                t.insert(&e.0, e.1, None).unwrap();
                model.insert(e);
            }
        })
    };
    with_tree(&db, rel, |t| t.create_empty().unwrap());
    insert(&db, 5000, &mut model);
    db.checkpoint().unwrap();
    let path = db.shared().smgr.segment_path(rel, heapstore::storage::ForkNumber::Main, 0);
    let before = std::fs::read(&path).unwrap();
    insert(&db, 3000, &mut model);
    let vacuumed = with_tree(&db, rel, |t| t.bulk_delete(&mut |tid| tid.0 % 5 == 0).unwrap());
    model.retain(|(_, tid)| tid.0 % 5 != 0);
    assert!(vacuumed > 0);
    commit_point(&db);
    {
        let pins = db.shared().pool.new_pins();
        db.shared().pool.flush_all(&pins, Some(rel)).unwrap();
    }
    db.crash();
    let bs = 8192;
    let mut after = std::fs::read(&path).unwrap();
    let mut torn = 0;
    for (b, page) in after.chunks_mut(bs).enumerate() {
        let old = before.get(b * bs..(b + 1) * bs);
        if old != Some(&page[..]) {
            page[bs / 2..].fill(0);
            torn += 1;
        }
    }
    assert!(torn > 10, "the test tears pages changed since the checkpoint ({torn})");
    std::fs::write(&path, &after).unwrap();
    let db = reopen(&dir);
    let want: Vec<_> = model.iter().cloned().collect();
    assert!(contents(&db, rel) == want, "torn pages were not rebuilt");
}

/// Concurrent inserters splitting pages with the WAL on, then a crash: replay of interleaved
/// INSERT and SPLIT records gives back every entry.
#[test]
fn concurrent_logged_inserts_recover_after_a_crash() {
    let (_t, dir, db) = new_db(&["shared_buffers=1MB"]);
    let rel = index_file(&db);
    with_tree(&db, rel, |t| t.create_empty().unwrap());
    let threads = 3u32;
    let per_thread = 6_000u32;
    std::thread::scope(|s| {
        for th in 0..threads {
            let db = &db;
            s.spawn(move || {
                with_tree(db, rel, |t| {
                    for i in 0..per_thread {
                        let k = ((i as i64) * 7919 + th as i64) % 50_000;
                        t.insert(&key(k, (i % 30) as usize), (i, th as u16 + 1), None).unwrap();
                        if th == 0 && i == per_thread / 2 {
                            db.checkpoint().unwrap();
                        }
                    }
                })
            });
        }
    });
    let want = contents(&db, rel);
    assert_eq!(want.len(), (threads * per_thread) as usize);
    commit_point(&db);
    db.crash();
    let db = reopen(&dir);
    assert!(contents(&db, rel) == want, "concurrently built index differs after recovery");
}

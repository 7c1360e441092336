//! Model-based property test of the row statements: random INSERT / UPDATE (of the value and of
//! the key) / DELETE / point and range SELECT through a primary key, rolled-back transactions,
//! VACUUM, clean restarts (close + open) and crash restarts, against an in-memory `BTreeMap`.
//! After every restart the index must agree with the heap.

mod common;

use heapstore::{Database, Session};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    Insert(i32, i32),
    Update(i32, i32),
    UpdateKey(i32, i32),
    Delete(i32),
    DeleteRange(i32, i32),
    Lookup(i32),
    Range(i32, i32),
    RolledBack(i32, i32),
    Vacuum,
    Restart,
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0..40i32;
    prop_oneof![
        6 => (k.clone(), any::<i32>()).prop_map(|(a, b)| Op::Insert(a, b)),
        3 => (k.clone(), any::<i32>()).prop_map(|(a, b)| Op::Update(a, b)),
        2 => (k.clone(), k.clone()).prop_map(|(a, b)| Op::UpdateKey(a, b)),
        2 => k.clone().prop_map(Op::Delete),
        1 => (k.clone(), k.clone()).prop_map(|(a, b)| Op::DeleteRange(a.min(b), a.max(b))),
        4 => k.clone().prop_map(Op::Lookup),
        2 => (k.clone(), k.clone()).prop_map(|(a, b)| Op::Range(a.min(b), a.max(b))),
        1 => (k.clone(), any::<i32>()).prop_map(|(a, b)| Op::RolledBack(a, b)),
        1 => Just(Op::Vacuum),
        1 => Just(Op::Restart),
        1 => Just(Op::Crash),
    ]
}

fn tag(s: &mut Session, sql: &str) -> Result<String, String> {
    s.execute(sql).map(|mut r| r.pop().unwrap().tag).map_err(|e| e.code.to_string())
}

fn pairs(s: &mut Session, sql: &str) -> Vec<(i32, i32)> {
    let r = s.execute(sql).unwrap().pop().unwrap();
    let mut v: Vec<(i32, i32)> =
        r.rows.iter().map(|row| (row[0].as_ref().unwrap().parse().unwrap(), row[1].as_ref().unwrap().parse().unwrap())).collect();
    v.sort_unstable();
    v
}

fn check(s: &mut Session, model: &BTreeMap<i32, i32>) {
    let n = heapstore::sql::index::check_table(s, "m").unwrap().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n as usize, model.len());
    let all = pairs(s, "SELECT k, v FROM m WHERE k >= -1");
    assert_eq!(all, model.iter().map(|(a, b)| (*a, *b)).collect::<Vec<_>>());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn row_statements_match_a_btreemap(ops in proptest::collection::vec(op(), 1..70)) {
        let (_t, dir, db) = common::new_db(&["shared_buffers=1MB"]);
        let mut db = Some(db);
        let mut s = db.as_ref().unwrap().session();
        s.execute("CREATE TABLE m (k int PRIMARY KEY, v int)").unwrap();
        let mut lookup = s.prepare("SELECT v FROM m WHERE k = $1").unwrap();
        let mut model: BTreeMap<i32, i32> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => {
                    let r = tag(&mut s, &format!("INSERT INTO m VALUES ({k}, {v})"));
                    match model.entry(k) {
                        std::collections::btree_map::Entry::Occupied(_) => prop_assert_eq!(r, Err("23505".to_string())),
                        std::collections::btree_map::Entry::Vacant(e) => {
                            prop_assert_eq!(r, Ok("INSERT 0 1".to_string()));
                            e.insert(v);
                        }
                    }
                }
                Op::Update(k, v) => {
                    let r = tag(&mut s, &format!("UPDATE m SET v = {v} WHERE k = {k}"));
                    let n = usize::from(model.contains_key(&k));
                    prop_assert_eq!(r, Ok(format!("UPDATE {n}")));
                    if n == 1 {
                        model.insert(k, v);
                    }
                }
                Op::UpdateKey(k, k2) => {
                    let r = tag(&mut s, &format!("UPDATE m SET k = {k2} WHERE k = {k}"));
                    match model.get(&k).copied() {
                        None => prop_assert_eq!(r, Ok("UPDATE 0".to_string())),
                        Some(_) if k2 != k && model.contains_key(&k2) => prop_assert_eq!(r, Err("23505".to_string())),
                        Some(v) => {
                            prop_assert_eq!(r, Ok("UPDATE 1".to_string()));
                            model.remove(&k);
                            model.insert(k2, v);
                        }
                    }
                }
                Op::Delete(k) => {
                    let r = tag(&mut s, &format!("DELETE FROM m WHERE k = {k}"));
                    let n = usize::from(model.remove(&k).is_some());
                    prop_assert_eq!(r, Ok(format!("DELETE {n}")));
                }
                Op::DeleteRange(lo, hi) => {
                    let r = tag(&mut s, &format!("DELETE FROM m WHERE k BETWEEN {lo} AND {hi}"));
                    let gone: Vec<i32> = model.range(lo..=hi).map(|(k, _)| *k).collect();
                    for k in &gone {
                        model.remove(k);
                    }
                    prop_assert_eq!(r, Ok(format!("DELETE {}", gone.len())));
                }
                Op::Lookup(k) => {
                    let r = s.execute_prepared(&lookup, &[Some(k.to_string())]).unwrap();
                    let got: Vec<i32> = r.rows.iter().map(|row| row[0].as_ref().unwrap().parse().unwrap()).collect();
                    prop_assert_eq!(got, model.get(&k).copied().into_iter().collect::<Vec<_>>());
                }
                Op::Range(lo, hi) => {
                    let got = pairs(&mut s, &format!("SELECT k, v FROM m WHERE k >= {lo} AND k < {hi}"));
                    let want: Vec<(i32, i32)> = model.range(lo..hi).map(|(a, b)| (*a, *b)).collect();
                    prop_assert_eq!(got, want);
                }
                Op::RolledBack(k, v) => {
                    s.execute("BEGIN").unwrap();
                    let _ = s.execute(&format!("DELETE FROM m WHERE k = {k}"));
                    let _ = s.execute(&format!("INSERT INTO m VALUES ({k}, {v})"));
                    let _ = s.execute(&format!("UPDATE m SET v = {v} WHERE k >= {k}"));
                    s.execute("ROLLBACK").unwrap();
                }
                Op::Vacuum => {
                    s.execute("VACUUM m").unwrap();
                }
                Op::Restart | Op::Crash => {
                    drop(s);
                    let d = db.take().unwrap();
                    if matches!(op, Op::Restart) {
                        d.close().unwrap();
                    } else {
                        d.crash();
                    }
                    db = Some(Database::open(&dir, &["shared_buffers=1MB".to_string()]).unwrap());
                    s = db.as_ref().unwrap().session();
                    lookup = s.prepare("SELECT v FROM m WHERE k = $1").unwrap();
                    check(&mut s, &model);
                }
            }
        }
        check(&mut s, &model);
    }
}

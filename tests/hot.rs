//! HOT updates and pruning (`access::heap::prune`): updates that leave indexed columns alone
//! stay on their page and add no index entry, pruning keeps what any snapshot can still see,
//! and chains survive crashes, savepoints, unique checks and indexes built over them.

mod common;
use common::check;

use heapstore::{Database, Session};

fn one(s: &mut Session, sql: &str) -> Option<String> {
    let mut r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let r = r.pop().unwrap();
    r.rows.first().and_then(|row| row[0].clone())
}

/// Every row's first column.
fn firsts(s: &mut Session, sql: &str) -> Vec<Option<String>> {
    let mut r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.pop().unwrap().rows.into_iter().map(|row| row[0].clone()).collect()
}

fn size(s: &mut Session, rel: &str) -> u64 {
    one(s, &format!("SELECT pg_relation_size('{rel}')")).unwrap().parse().unwrap()
}

#[test]
fn repeated_updates_of_one_row_stay_on_its_page_and_leave_the_index_alone() {
    let (_t, _dir, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE u (id int PRIMARY KEY, n int, pad text)").unwrap();
    s.execute("INSERT INTO u VALUES (1, 0, repeat('x', 200)), (2, 0, 'y')").unwrap();
    let index_before = size(&mut s, "u_pkey");
    for _ in 0..3000 {
        s.execute("UPDATE u SET n = n + 1 WHERE id = 1").unwrap();
    }
    // Without HOT and pruning 3,000 versions of 250 bytes need about 90 pages, and the index
    // 3,000 more entries.
    assert_eq!(size(&mut s, "u"), 8192, "the table grew: updates did not stay on the page");
    assert_eq!(size(&mut s, "u_pkey"), index_before, "HOT updates added index entries");
    assert_eq!(one(&mut s, "SELECT n FROM u WHERE id = 1").as_deref(), Some("3000"));
    assert_eq!(one(&mut s, "SELECT count(*) FROM u").as_deref(), Some("2"));
    assert_eq!(check(&mut s, "u"), 2);
}

#[test]
fn an_update_of_an_indexed_column_is_not_hot() {
    let (_t, _dir, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE k (id int PRIMARY KEY, v int)").unwrap();
    s.execute("CREATE INDEX k_v ON k (v)").unwrap();
    s.execute("INSERT INTO k VALUES (1, 10)").unwrap();
    for i in 0..50 {
        s.execute(&format!("UPDATE k SET v = {} WHERE id = 1", 11 + i)).unwrap();
    }
    assert_eq!(one(&mut s, "SELECT id FROM k WHERE v = 60").as_deref(), Some("1"));
    assert_eq!(one(&mut s, "SELECT count(*) FROM k WHERE v = 10").as_deref(), Some("0"));
    // numeric 1.0 and 1.00 are equal values with different stored bytes (and keys)
    s.execute("CREATE TABLE nk (id int PRIMARY KEY, x numeric)").unwrap();
    s.execute("CREATE INDEX nk_x ON nk (x)").unwrap();
    s.execute("INSERT INTO nk VALUES (1, 1.0)").unwrap();
    s.execute("UPDATE nk SET x = 1.00 WHERE id = 1").unwrap();
    assert_eq!(one(&mut s, "SELECT x FROM nk WHERE x = 1").as_deref(), Some("1.00"));
    assert_eq!(check(&mut s, "k"), 1);
    assert_eq!(check(&mut s, "nk"), 1);
}

#[test]
fn pruning_keeps_the_versions_an_older_snapshot_sees() {
    let (_t, _dir, db) = common::new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE h (id int PRIMARY KEY, n int, pad text)").unwrap();
    a.execute("INSERT INTO h VALUES (1, 0, repeat('p', 300))").unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(one(&mut a, "SELECT n FROM h WHERE id = 1").as_deref(), Some("0"));
    // Far more versions than one page holds: the page fills with versions `a` may see, so
    // later ones move to other pages; the pruning those updates try must keep n = 0.
    for _ in 0..200 {
        b.execute("UPDATE h SET n = n + 1 WHERE id = 1").unwrap();
    }
    assert_eq!(one(&mut a, "SELECT n FROM h WHERE id = 1").as_deref(), Some("0"));
    assert_eq!(one(&mut a, "SELECT n FROM h").as_deref(), Some("0"));
    a.execute("COMMIT").unwrap();
    assert_eq!(one(&mut a, "SELECT n FROM h WHERE id = 1").as_deref(), Some("200"));
    for _ in 0..200 {
        b.execute("UPDATE h SET n = n + 1 WHERE id = 1").unwrap();
    }
    assert_eq!(one(&mut b, "SELECT n FROM h WHERE id = 1").as_deref(), Some("400"));
    b.execute("VACUUM h").unwrap();
    assert_eq!(one(&mut b, "SELECT n FROM h WHERE id = 1").as_deref(), Some("400"));
    assert_eq!(check(&mut b, "h"), 1);
}

#[test]
fn unique_checks_follow_hot_chains() {
    let (_t, _dir, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE q (id int PRIMARY KEY, n int)").unwrap();
    s.execute("INSERT INTO q VALUES (1, 0)").unwrap();
    for _ in 0..5 {
        s.execute("UPDATE q SET n = n + 1 WHERE id = 1").unwrap();
    }
    // The index entry names the root, whose version is deleted: the live one is down the chain.
    let e = s.execute("INSERT INTO q VALUES (1, 9)").unwrap_err();
    assert_eq!(e.code, "23505");
    s.execute("DELETE FROM q WHERE id = 1").unwrap();
    s.execute("INSERT INTO q VALUES (1, 9)").unwrap();
    assert_eq!(one(&mut s, "SELECT n FROM q WHERE id = 1").as_deref(), Some("9"));
    assert_eq!(check(&mut s, "q"), 1);
}

#[test]
fn rollback_to_savepoint_undoes_a_hot_update() {
    let (_t, _dir, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE sp (id int PRIMARY KEY, n int)").unwrap();
    s.execute("INSERT INTO sp VALUES (1, 0)").unwrap();
    s.execute("BEGIN").unwrap();
    s.execute("UPDATE sp SET n = 1 WHERE id = 1").unwrap();
    s.execute("SAVEPOINT a").unwrap();
    s.execute("UPDATE sp SET n = 2 WHERE id = 1").unwrap();
    s.execute("UPDATE sp SET n = 3 WHERE id = 1").unwrap();
    s.execute("ROLLBACK TO a").unwrap();
    assert_eq!(one(&mut s, "SELECT n FROM sp WHERE id = 1").as_deref(), Some("1"));
    s.execute("UPDATE sp SET n = n + 10 WHERE id = 1").unwrap();
    s.execute("COMMIT").unwrap();
    assert_eq!(one(&mut s, "SELECT n FROM sp WHERE id = 1").as_deref(), Some("11"));
    // An aborted HOT update leaves its new version behind the live one; pruning removes it.
    s.execute("BEGIN").unwrap();
    s.execute("UPDATE sp SET n = 99 WHERE id = 1").unwrap();
    s.execute("ROLLBACK").unwrap();
    s.execute("VACUUM sp").unwrap();
    assert_eq!(one(&mut s, "SELECT n FROM sp WHERE id = 1").as_deref(), Some("11"));
    assert_eq!(one(&mut s, "SELECT count(*) FROM sp").as_deref(), Some("1"));
    assert_eq!(check(&mut s, "sp"), 1);
}

#[test]
fn an_index_built_over_hot_chains_finds_every_snapshot_its_version() {
    let (_t, _dir, db) = common::new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE c (id int PRIMARY KEY, v int)").unwrap();
    a.execute("INSERT INTO c VALUES (1, 10), (2, 20)").unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(one(&mut a, "SELECT v FROM c WHERE id = 1").as_deref(), Some("10"));
    // v is not indexed yet: HOT. Then an index on v over a chain whose versions differ in v.
    b.execute("UPDATE c SET v = 11 WHERE id = 1").unwrap();
    b.execute("CREATE INDEX c_v ON c (v)").unwrap();
    assert_eq!(one(&mut b, "SELECT id FROM c WHERE v = 11").as_deref(), Some("1"));
    assert_eq!(one(&mut b, "SELECT count(*) FROM c WHERE v = 10").as_deref(), Some("0"));
    // The older snapshot sees v = 10, which the index does not name: it scans the heap.
    assert_eq!(one(&mut a, "SELECT id FROM c WHERE v = 10").as_deref(), Some("1"));
    assert_eq!(one(&mut a, "SELECT count(*) FROM c WHERE v = 11").as_deref(), Some("0"));
    assert_eq!(one(&mut a, "SELECT count(*) FROM c WHERE v >= 10").as_deref(), Some("2"));
    // An ORDER BY on the index's column: sorted, both ways (the planner does not order by
    // an index this snapshot may be unable to use).
    let (n1, n2) = (Some("1".to_string()), Some("2".to_string()));
    assert_eq!(firsts(&mut a, "SELECT id FROM c WHERE v >= 10 ORDER BY v DESC"), vec![n2.clone(), n1.clone()]);
    assert_eq!(firsts(&mut a, "SELECT id FROM c WHERE v >= 10 ORDER BY v"), vec![n1.clone(), n2.clone()]);
    assert_eq!(firsts(&mut a, "SELECT id FROM c WHERE v > 0 ORDER BY v LIMIT 1"), vec![n1.clone()]);
    let plan = firsts(&mut a, "EXPLAIN SELECT id FROM c WHERE v >= 10 ORDER BY v DESC");
    assert!(plan.iter().flatten().any(|l| l.contains("Sort Key: v DESC")), "{plan:?}");
    a.execute("COMMIT").unwrap();
    assert_eq!(firsts(&mut b, "SELECT id FROM c WHERE v >= 10 ORDER BY v DESC"), vec![n2, n1]);
    // Each row once through a range of the index, whatever its versions' keys were.
    assert_eq!(one(&mut b, "SELECT count(*) FROM c WHERE v >= 10").as_deref(), Some("2"));
    b.execute("VACUUM c").unwrap();
    assert_eq!(one(&mut b, "SELECT id FROM c WHERE v = 11").as_deref(), Some("1"));
    assert_eq!(one(&mut b, "SELECT count(*) FROM c WHERE v = 10").as_deref(), Some("0"));
    assert_eq!(one(&mut b, "SELECT count(*) FROM c WHERE v >= 10").as_deref(), Some("2"));
    assert_eq!(check(&mut b, "c"), 2);
    // A unique index over such a chain: the stale key does not conflict.
    b.execute("CREATE TABLE cu (id int PRIMARY KEY, v int)").unwrap();
    b.execute("INSERT INTO cu VALUES (1, 10)").unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(one(&mut a, "SELECT v FROM cu WHERE id = 1").as_deref(), Some("10"));
    b.execute("UPDATE cu SET v = 11 WHERE id = 1").unwrap();
    b.execute("CREATE UNIQUE INDEX cu_v ON cu (v)").unwrap();
    a.execute("COMMIT").unwrap();
    // Pruning makes the root a redirect to the v = 11 version; v = 10 is free.
    b.execute("VACUUM cu").unwrap();
    b.execute("INSERT INTO cu VALUES (2, 10)").unwrap();
    assert_eq!(b.execute("INSERT INTO cu VALUES (3, 11)").unwrap_err().code, "23505");
    assert_eq!(check(&mut b, "cu"), 2);
    // A duplicate found by CREATE UNIQUE INDEX through a redirected root names the live key.
    b.execute("CREATE TABLE d (id int PRIMARY KEY, v int, n int)").unwrap();
    b.execute("INSERT INTO d VALUES (1, 5, 0), (2, 5, 0)").unwrap();
    for _ in 0..3 {
        b.execute("UPDATE d SET n = n + 1 WHERE id = 2").unwrap();
    }
    b.execute("VACUUM d").unwrap();
    let e = b.execute("CREATE UNIQUE INDEX d_v ON d (v)").unwrap_err();
    assert_eq!(e.code, "23505", "{e:?}");
    assert_eq!(e.detail.as_deref(), Some("Key (v)=(5) is duplicated."));
}

#[test]
fn hot_chains_and_pruning_survive_a_crash() {
    let (_t, dir, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE r (id int PRIMARY KEY, n int, pad text)").unwrap();
    let rows: Vec<String> = (1..=20).map(|g| format!("({g}, 0, repeat('r', 100))")).collect();
    s.execute(&format!("INSERT INTO r VALUES {}", rows.join(", "))).unwrap();
    for i in 0..600 {
        s.execute(&format!("UPDATE r SET n = n + 1 WHERE id = {}", 1 + i % 20)).unwrap();
    }
    s.execute("DELETE FROM r WHERE id > 18").unwrap();
    s.execute("VACUUM r").unwrap();
    s.execute("INSERT INTO r VALUES (19, 7, 'reused')").unwrap();
    drop(s);
    db.crash();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(one(&mut s, "SELECT sum(n) FROM r").as_deref(), Some(&*(18 * 30 + 7).to_string()));
    assert_eq!(one(&mut s, "SELECT n FROM r WHERE id = 5").as_deref(), Some("30"));
    assert_eq!(one(&mut s, "SELECT pad FROM r WHERE id = 19").as_deref(), Some("reused"));
    assert_eq!(check(&mut s, "r"), 19);
    for _ in 0..100 {
        s.execute("UPDATE r SET n = n + 1 WHERE id = 5").unwrap();
    }
    assert_eq!(one(&mut s, "SELECT n FROM r WHERE id = 5").as_deref(), Some("130"));
    assert_eq!(check(&mut s, "r"), 19);
}

//! All-visible pages and pruning on read (`storage::page` invariant 5, `access::heap::vacuum`
//! invariant 5, `access::heap::scan_pruning`): VACUUM marks a page all-visible only when every
//! snapshot sees every tuple on it, every change clears the mark, scans skip per-tuple checks
//! on marked pages, and sequential scans prune nearly full pages without taking anything an
//! open snapshot still sees.

mod common;
use common::check;

use heapstore::{Database, Session};

fn one(s: &mut Session, sql: &str) -> String {
    let mut r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let r = r.pop().unwrap();
    r.rows.first().and_then(|row| row[0].clone()).unwrap_or_default()
}

fn explain(s: &mut Session, sql: &str) -> Vec<String> {
    let r = s.execute(&format!("EXPLAIN (ANALYZE, BUFFERS) {sql}")).unwrap();
    r[0].rows.iter().map(|r| r[0].clone().unwrap()).collect()
}

/// (pages read, all-visible, pruned) from a scan's EXPLAIN line.
fn pages(s: &mut Session, table: &str) -> (u64, u64, u64) {
    let plan = explain(s, &format!("SELECT count(*) FROM {table}"));
    let line = plan.iter().find(|l| l.contains("Pages:")).unwrap_or_else(|| panic!("no Pages line in {plan:#?}"));
    let nums: Vec<u64> = line.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty()).map(|w| w.parse().unwrap()).collect();
    (nums[0], nums[1], nums[2])
}

fn relation_pages(s: &mut Session, table: &str) -> u64 {
    one(s, &format!("SELECT pg_relation_size('{table}')")).parse::<u64>().unwrap() / 8192
}

fn fill(s: &mut Session, table: &str, from: i64, to: i64, pad: usize) {
    let rows: Vec<String> = (from..=to).map(|i| format!("({i}, repeat('p', {pad}))")).collect();
    for chunk in rows.chunks(500) {
        s.execute(&format!("INSERT INTO {table} VALUES {}", chunk.join(", "))).unwrap();
    }
}

#[test]
fn vacuum_marks_pages_all_visible_and_every_change_clears_the_mark() {
    let (_t, _dir, db) = common::new_db(&["autovacuum=off"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int PRIMARY KEY, pad text)").unwrap();
    fill(&mut s, "t", 1, 2000, 80);
    let n = relation_pages(&mut s, "t");
    assert!(n > 20, "{n} pages");
    assert_eq!(pages(&mut s, "t").1, 0, "nothing is all-visible before VACUUM");
    let r = s.execute("VACUUM VERBOSE t").unwrap();
    let info = r[0].notices.join("\n");
    assert!(info.contains(&format!("{n} all-visible")), "{info}");
    assert_eq!(pages(&mut s, "t"), (n, n, 0));
    assert_eq!(one(&mut s, "SELECT count(*) FROM t"), "2000");

    // An update, a delete, an insert, and a rolled-back delete each clear their page's mark,
    // and the scan then checks that page's tuples again.
    s.execute("UPDATE t SET pad = 'changed' WHERE id = 1").unwrap();
    s.execute("DELETE FROM t WHERE id = 1000").unwrap();
    s.execute("BEGIN").unwrap();
    s.execute("SAVEPOINT a").unwrap();
    s.execute("DELETE FROM t WHERE id = 1500").unwrap();
    s.execute("ROLLBACK TO SAVEPOINT a").unwrap();
    s.execute("COMMIT").unwrap();
    s.execute("BEGIN").unwrap();
    s.execute("DELETE FROM t WHERE id = 1800").unwrap();
    s.execute("ROLLBACK").unwrap();
    let (_, marked, _) = pages(&mut s, "t");
    assert!(marked <= n - 4 && marked >= n - 5, "{marked} of {n} pages still marked");
    assert_eq!(one(&mut s, "SELECT count(*) FROM t"), "1999");
    assert_eq!(one(&mut s, "SELECT pad FROM t WHERE id = 1"), "changed");
    assert_eq!(one(&mut s, "SELECT count(*) FROM t WHERE id IN (1000, 1500, 1800)"), "2");
    let mut other = db.session();
    assert_eq!(one(&mut other, "SELECT count(*) FROM t WHERE pad = 'changed'"), "1");
    assert_eq!(one(&mut other, "SELECT count(*) FROM t"), "1999");
    s.execute("VACUUM t").unwrap();
    assert_eq!(pages(&mut s, "t").1, relation_pages(&mut s, "t"));
    assert_eq!(one(&mut s, "SELECT count(*) FROM t"), "1999");
    assert_eq!(check(&mut s, "t"), 1999);
}

#[test]
fn an_open_snapshot_keeps_pages_from_being_marked_and_sees_what_it_saw() {
    let (_t, _dir, db) = common::new_db(&["autovacuum=off"]);
    let mut a = db.session();
    let mut b = db.session();
    b.execute("CREATE TABLE t (id int PRIMARY KEY, pad text)").unwrap();
    fill(&mut b, "t", 1, 300, 60);
    b.execute("VACUUM t").unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(one(&mut a, "SELECT count(*) FROM t"), "300");
    fill(&mut b, "t", 301, 600, 60);
    b.execute("DELETE FROM t WHERE id <= 50").unwrap();
    b.execute("UPDATE t SET pad = 'new' WHERE id BETWEEN 100 AND 110").unwrap();
    b.execute("VACUUM t").unwrap();
    // Pages holding b's new rows or versions a does not see must not be marked: a would then
    // skip the check that hides them.
    assert_eq!(one(&mut a, "SELECT count(*) FROM t"), "300");
    assert_eq!(one(&mut a, "SELECT min(id) FROM t"), "1");
    assert_eq!(one(&mut a, "SELECT count(*) FROM t WHERE pad = 'new'"), "0");
    assert_eq!(one(&mut b, "SELECT count(*) FROM t"), "550");
    let (n, marked, _) = pages(&mut b, "t");
    assert!(marked < n, "{marked} of {n} marked while a snapshot older than the changes is open");
    a.execute("COMMIT").unwrap();
    b.execute("VACUUM t").unwrap();
    let (n, marked, _) = pages(&mut b, "t");
    assert_eq!(marked, n);
    assert_eq!(one(&mut a, "SELECT count(*) FROM t"), "550");
    assert_eq!(one(&mut a, "SELECT count(*) FROM t WHERE pad = 'new'"), "11");
    assert_eq!(check(&mut b, "t"), 550);
}

#[test]
fn a_sequential_scan_prunes_nearly_full_pages_but_not_what_a_snapshot_sees() {
    let (_t, _dir, db) = common::new_db(&["autovacuum=off"]);
    let mut s = db.session();
    s.execute("CREATE TABLE p (id int PRIMARY KEY, pad text)").unwrap();
    fill(&mut s, "p", 1, 400, 150);
    let n = relation_pages(&mut s, "p");
    let mut old = db.session();
    old.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(one(&mut old, "SELECT count(*) FROM p"), "400");
    s.execute("DELETE FROM p WHERE id % 2 = 0").unwrap();
    // The old snapshot still sees the deleted rows: nothing may be pruned.
    assert_eq!(pages(&mut s, "p").2, 0);
    assert_eq!(one(&mut old, "SELECT count(*) FROM p"), "400");
    assert_eq!(one(&mut old, "SELECT sum(id) FROM p"), (400 * 401 / 2).to_string());
    old.execute("COMMIT").unwrap();
    // Now every full page is worth pruning, once.
    let (read, _, pruned) = pages(&mut s, "p");
    assert_eq!(read, n);
    assert!(pruned >= n - 1 && pruned > 0, "{pruned} of {n} pages pruned");
    assert_eq!(pages(&mut s, "p").2, 0, "pruned pages have room: not pruned again");
    assert_eq!(one(&mut s, "SELECT count(*) FROM p"), "200");
    assert_eq!(one(&mut s, "SELECT sum(id) FROM p"), (200 * 200).to_string());
    assert_eq!(one(&mut s, "SELECT pad FROM p WHERE id = 7").len(), 150);
    assert_eq!(one(&mut s, "SELECT count(*) FROM p WHERE id = 8"), "0");
    assert_eq!(check(&mut s, "p"), 200);
    // The room pruning made is used without the table growing.
    fill(&mut s, "p", 1001, 1150, 150);
    assert_eq!(relation_pages(&mut s, "p"), n);
    s.execute("VACUUM p").unwrap();
    assert_eq!(check(&mut s, "p"), 350);
}

#[test]
fn marks_and_read_path_prunes_survive_a_crash() {
    let (_t, dir, db) = common::new_db(&["autovacuum=off"]);
    let mut s = db.session();
    s.execute("CREATE TABLE c (id int PRIMARY KEY, pad text)").unwrap();
    fill(&mut s, "c", 1, 600, 150);
    s.execute("VACUUM c").unwrap();
    // Changes after the mark: redo must clear the mark again, or the deleted rows would come
    // back for scans that trust it.
    s.execute("DELETE FROM c WHERE id % 3 = 0").unwrap();
    s.execute("UPDATE c SET pad = 'u' WHERE id % 3 = 1 AND id < 100").unwrap();
    assert!(pages(&mut s, "c").2 > 0, "the scan pruned");
    s.execute("INSERT INTO c VALUES (5000, 'late')").unwrap();
    drop(s);
    db.crash();
    let db = Database::open(&dir, &["autovacuum=off".to_string()]).unwrap();
    let mut s = db.session();
    assert_eq!(one(&mut s, "SELECT count(*) FROM c"), "401");
    assert_eq!(one(&mut s, "SELECT count(*) FROM c WHERE id % 3 = 0"), "0");
    assert_eq!(one(&mut s, "SELECT count(*) FROM c WHERE pad = 'u'"), "33");
    assert_eq!(check(&mut s, "c"), 401);
    s.execute("VACUUM c").unwrap();
    let (n, marked, _) = pages(&mut s, "c");
    assert_eq!(marked, n);
    assert_eq!(one(&mut s, "SELECT count(*) FROM c"), "401");
}

#[test]
fn deleted_and_updated_values_leave_the_toast_relation_to_vacuum() {
    let (_t, dir, db) = common::new_db(&["autovacuum=off"]);
    let mut s = db.session();
    s.execute("CREATE TABLE big (id int PRIMARY KEY, doc text)").unwrap();
    let toast_size = |s: &mut Session| -> u64 {
        one(s, "SELECT pg_total_relation_size('big') - pg_relation_size('big') - pg_indexes_size('big')").parse().unwrap()
    };
    // 20 rows of 20 kB each: three chunks apiece, out of line.
    for i in 1..=20 {
        s.execute(&format!("INSERT INTO big VALUES ({i}, repeat(chr(65 + {i}), 20000))")).unwrap();
    }
    let full = toast_size(&mut s);
    assert!(full >= 60 * 8192, "{full} bytes of TOAST");
    let mut old = db.session();
    old.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(one(&mut old, "SELECT sum(length(doc)) FROM big"), "400000");
    s.execute("DELETE FROM big WHERE id <= 10").unwrap();
    s.execute("UPDATE big SET doc = repeat('z', 20000) WHERE id > 15").unwrap();
    // A snapshot from before still reads every old value through its chunks.
    let r = s.execute("VACUUM VERBOSE big").unwrap();
    assert!(r[0].notices.join("\n").contains("chunks: 0 removed"), "{:?}", r[0].notices);
    assert_eq!(one(&mut old, "SELECT sum(length(doc)) FROM big"), "400000");
    assert_eq!(one(&mut old, "SELECT count(*) FROM big WHERE doc = repeat(chr(65 + id), 20000)"), "20");
    old.execute("COMMIT").unwrap();
    // Now the 15 dead versions' 45 chunks go, and their space is reused by new values.
    let r = s.execute("VACUUM VERBOSE big").unwrap();
    assert!(r[0].notices.join("\n").contains("chunks: 45 removed"), "{:?}", r[0].notices);
    for i in 21..=30 {
        s.execute(&format!("INSERT INTO big VALUES ({i}, repeat('n', 20000))")).unwrap();
    }
    // 15 live old values and 15 new ones: the relation holds 30 values in the room of 35.
    assert!(toast_size(&mut s) <= full + 15 * 3 * 8192, "TOAST grew from {full} to {}", toast_size(&mut s));
    assert_eq!(one(&mut s, "SELECT count(*) FROM big WHERE doc = repeat(chr(65 + id), 20000)"), "5");
    assert_eq!(one(&mut s, "SELECT count(*) FROM big WHERE doc = repeat('z', 20000)"), "5");
    assert_eq!(one(&mut s, "SELECT count(*) FROM big WHERE doc = repeat('n', 20000)"), "10");
    // A rolled-back delete and a savepoint rolled back leave the chunks alive.
    s.execute("BEGIN").unwrap();
    s.execute("DELETE FROM big WHERE id = 11").unwrap();
    s.execute("SAVEPOINT a").unwrap();
    s.execute("DELETE FROM big WHERE id = 12").unwrap();
    s.execute("ROLLBACK TO SAVEPOINT a").unwrap();
    s.execute("ROLLBACK").unwrap();
    s.execute("VACUUM big").unwrap();
    assert_eq!(one(&mut s, "SELECT length(doc) FROM big WHERE id = 11"), "20000");
    assert_eq!(one(&mut s, "SELECT length(doc) FROM big WHERE id = 12"), "20000");
    s.execute("DELETE FROM big WHERE id = 13").unwrap();
    drop(s);
    drop(old);
    db.crash();
    let db = Database::open(&dir, &["autovacuum=off".to_string()]).unwrap();
    let mut s = db.session();
    assert_eq!(one(&mut s, "SELECT sum(length(doc)) FROM big"), (19 * 20000).to_string());
    let r = s.execute("VACUUM VERBOSE big").unwrap();
    assert!(r[0].notices.join("\n").contains("chunks: 3 removed"), "{:?}", r[0].notices);
    assert_eq!(one(&mut s, "SELECT sum(length(doc)) FROM big"), (19 * 20000).to_string());
}

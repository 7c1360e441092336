//! Index-only scans and the visibility map: a row whose heap page VACUUM marked all-visible
//! comes from its index entry alone; every change clears the mark first, so no snapshot ever
//! sees a row it should not, or misses one it should.

mod common;
use common::{new_db, rows};
use heapstore::Session;

fn plan(s: &mut Session, q: &str) -> Vec<String> {
    rows(s, &format!("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {q}"))
}

/// The `Heap Fetches` figure of the plan's index-only scan.
fn heap_fetches(s: &mut Session, q: &str) -> u64 {
    let p = plan(s, q);
    assert!(p.iter().any(|l| l.contains("Index Only Scan using")), "{p:#?}");
    let l = p.iter().find(|l| l.trim_start().starts_with("Heap Fetches: ")).unwrap_or_else(|| panic!("{p:#?}"));
    l.trim_start()["Heap Fetches: ".len()..].parse().unwrap()
}

/// The same query's rows through a sequential scan.
fn by_seqscan(s: &mut Session, q: &str) -> Vec<String> {
    s.execute("SET enable_indexscan = off").unwrap();
    let r = rows(s, q);
    s.execute("SET enable_indexscan = on").unwrap();
    r
}

#[test]
fn all_visible_pages_are_answered_from_the_index() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int PRIMARY KEY, v text)").unwrap();
    s.execute("INSERT INTO t SELECT g, repeat('x', 40) || g FROM generate_series(1, 5000) g").unwrap();
    let q = "SELECT id FROM t WHERE id BETWEEN 100 AND 1999";
    // Before VACUUM no page is marked: every entry visits the heap.
    assert_eq!(heap_fetches(&mut s, q), 1900);
    s.execute("VACUUM t").unwrap();
    assert_eq!(heap_fetches(&mut s, q), 0);
    assert_eq!(rows(&mut s, q), by_seqscan(&mut s, q));
    assert_eq!(rows(&mut s, "SELECT count(*), sum(id) FROM t WHERE id < 1000"), vec!["999|499500"]);
    // Each kind of change clears its page's bit before it is made.
    s.execute("DELETE FROM t WHERE id = 150").unwrap();
    s.execute("UPDATE t SET id = id + 10000 WHERE id = 160").unwrap();
    s.execute("UPDATE t SET v = 'changed' WHERE id = 170").unwrap();
    s.execute("INSERT INTO t VALUES (0, 'new')").unwrap();
    let want = by_seqscan(&mut s, "SELECT id FROM t WHERE id < 2000 ORDER BY id");
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE id < 2000 ORDER BY id"), want);
    assert!(!want.contains(&"150".to_string()) && !want.contains(&"160".to_string()) && want.contains(&"0".to_string()));
    let fetches = heap_fetches(&mut s, q);
    assert!(fetches > 0 && fetches < 1900, "only the changed pages are visited: {fetches}");
    // A column the index lacks needs the heap: a plain index scan.
    let p = plan(&mut s, "SELECT v FROM t WHERE id = 5");
    assert!(p[0].starts_with("Index Scan using t_pkey"), "{p:#?}");
    s.execute("VACUUM t").unwrap();
    assert_eq!(heap_fetches(&mut s, q), 0);
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE id < 2000 ORDER BY id"), want);
    // ANALYZE records how much of the table is marked.
    s.execute("ANALYZE t").unwrap();
    let r = rows(&mut s, "SELECT relpages, relallvisible FROM pg_class WHERE relname = 't'");
    let (pages, vis) = r[0].split_once('|').unwrap();
    assert_eq!(pages, vis, "every page all-visible after VACUUM: {r:?}");
}

#[test]
fn snapshots_see_what_they_should_through_index_only_scans() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    b.execute("CREATE TABLE t (id int PRIMARY KEY, v int)").unwrap();
    b.execute("INSERT INTO t SELECT g, g FROM generate_series(1, 3000) g").unwrap();
    b.execute("VACUUM t").unwrap();
    let q = "SELECT count(*), sum(id) FROM t WHERE id < 10000";
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, q), vec!["3000|4501500"]);
    b.execute("DELETE FROM t WHERE id = 5").unwrap();
    b.execute("INSERT INTO t VALUES (5000, 0)").unwrap();
    b.execute("UPDATE t SET v = -1 WHERE id = 2000").unwrap();
    // A's snapshot still sees id 5 and not id 5000, through the index alone or the heap.
    assert_eq!(rows(&mut a, q), vec!["3000|4501500"]);
    // VACUUM cannot mark the changed pages while A's snapshot may need the old versions.
    b.execute("VACUUM t").unwrap();
    assert_eq!(rows(&mut a, q), vec!["3000|4501500"]);
    assert_eq!(rows(&mut b, q), vec!["3000|4506495"]);
    assert!(heap_fetches(&mut b, q) > 0);
    a.execute("COMMIT").unwrap();
    b.execute("VACUUM t").unwrap();
    assert_eq!(heap_fetches(&mut b, q), 0);
    assert_eq!(rows(&mut a, q), vec!["3000|4506495"]);
    // A transaction's own uncommitted rows are seen by it alone.
    a.execute("BEGIN").unwrap();
    a.execute("INSERT INTO t VALUES (6000, 0)").unwrap();
    a.execute("DELETE FROM t WHERE id = 1").unwrap();
    assert_eq!(rows(&mut a, q), vec!["3000|4512494"]);
    assert_eq!(rows(&mut b, q), vec!["3000|4506495"]);
    a.execute("ROLLBACK").unwrap();
    assert_eq!(rows(&mut b, q), vec!["3000|4506495"]);
}

#[test]
fn every_returnable_key_type_comes_back_exactly() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute(
        "CREATE TABLE k (a smallint, b bigint, c text, d date, e timestamptz, f uuid, g bytea, h boolean, i varchar(20), j float8, n numeric)",
    )
    .unwrap();
    s.execute(
        "INSERT INTO k SELECT (g % 7)::smallint, g::bigint * 1000000007, 'τ' || g || E'\\n', date '2024-02-28' + g, \
         timestamptz '2024-01-01 00:00:00+00' + g * interval '1 hour', \
         ('00000000-0000-0000-0000-' || lpad(g::text, 12, '0'))::uuid, ('\\x' || lpad(to_hex(g), 4, '0') || '00ff')::bytea, g % 2 = 0, \
         CASE WHEN g % 5 = 0 THEN NULL ELSE 'v' || g END, -0.0::float8 * g, g / 3.0 FROM generate_series(1, 300) g",
    )
    .unwrap();
    s.execute("CREATE INDEX k_all ON k (a, b, c, d, e, f, g, h, i)").unwrap();
    s.execute("CREATE INDEX k_j ON k (j)").unwrap();
    s.execute("CREATE INDEX k_n ON k (n)").unwrap();
    s.execute("VACUUM k").unwrap();
    let q = "SELECT a, b, c, d, e, f, g, h, i FROM k WHERE a = 3 ORDER BY b";
    assert_eq!(heap_fetches(&mut s, q), 0);
    let got = rows(&mut s, q);
    assert_eq!(got.len(), 43);
    assert_eq!(got, by_seqscan(&mut s, q));
    // Keys that fold distinct values (-0 and 0; 1.0 and 1.00) are read from the heap, also
    // when the column read is another of the index's.
    s.execute("CREATE INDEX k_bn ON k (b, n)").unwrap();
    s.execute("VACUUM k").unwrap();
    for q in ["SELECT j FROM k WHERE j <= 0", "SELECT n FROM k WHERE n > 50", "SELECT b FROM k WHERE b > 5000000000"] {
        let p = plan(&mut s, q);
        assert!(p[0].starts_with("Index Scan using"), "{p:#?}");
        assert_eq!(rows(&mut s, q), by_seqscan(&mut s, q));
    }
}

#[test]
fn vacuum_reads_only_the_pages_not_marked_all_visible() {
    let (_t, _dir, db) = new_db(&["autovacuum=off"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int PRIMARY KEY, v text)").unwrap();
    s.execute("INSERT INTO t SELECT g, repeat('x', 60) FROM generate_series(1, 4000) g").unwrap();
    let verbose = |s: &mut Session| -> String {
        let r = s.execute("VACUUM VERBOSE t").unwrap();
        r.last().unwrap().notices.join("\n")
    };
    let first = verbose(&mut s);
    let pages: u64 = rows(&mut s, "SELECT pg_relation_size('t') / 8192")[0].parse().unwrap();
    assert!(first.contains(&format!("pages: {pages} scanned, 0 skipped as all-visible")), "{first}");
    let again = verbose(&mut s);
    assert!(again.contains(&format!("pages: 0 scanned, {pages} skipped as all-visible")), "{again}");
    assert!(again.contains("4000 remain"), "the skipped pages' rows are estimated: {again}");
    s.execute("DELETE FROM t WHERE id = 2000").unwrap();
    let third = verbose(&mut s);
    assert!(third.contains(&format!("pages: 1 scanned, {} skipped as all-visible", pages - 1)), "{third}");
    assert!(third.contains("1 removed"), "{third}");
    // One page counted, the others estimated at the table's density.
    let remain: i64 = third.split(" remain").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    assert!((remain - 3999).abs() <= 40, "{third}");
    let live: i64 = rows(&mut s, "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 't'")[0].parse().unwrap();
    assert_eq!(live, remain);
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t WHERE id > 0"), vec!["3999"]);
}

/// VACUUM racing an index-only scan: the scan copied a leaf's entries, then VACUUM removed one
/// of them (a row deleted before the scan's snapshot) and marked its page all-visible. The
/// scan must not return the removed row: it reads each entry's visibility map bit while the
/// leaf is locked, before VACUUM could mark the page.
#[test]
fn an_index_only_scan_racing_vacuum_does_not_return_a_removed_row() {
    let (_t, _dir, db) = new_db(&["autovacuum=off"]);
    let mut s = db.session();
    s.execute("CREATE TABLE r (id int PRIMARY KEY)").unwrap();
    s.execute("INSERT INTO r SELECT g FROM generate_series(1, 400) g").unwrap();
    s.execute("DELETE FROM r WHERE id = 5").unwrap();
    // The VACUUM runs in another session, on the scanning thread, once.
    let vacuumer = std::sync::Mutex::new(Some(db.session()));
    db.shared().wal.failpoints.set(heapstore::sql::dml::FAILPOINT_INDEX_ONLY_ENTRY, move || {
        if let Some(mut v) = vacuumer.lock().unwrap().take() {
            v.execute("VACUUM r").unwrap();
        }
    });
    let got = rows(&mut s, "SELECT id FROM r WHERE id < 8");
    db.shared().wal.failpoints.clear(heapstore::sql::dml::FAILPOINT_INDEX_ONLY_ENTRY);
    assert_eq!(got, ["1", "2", "3", "4", "6", "7"]);
    assert_eq!(heap_fetches(&mut s, "SELECT id FROM r WHERE id < 8"), 0, "VACUUM marked the page");
}

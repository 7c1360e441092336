//! Read streams, io_method, rings and EXPLAIN (issue: read streams and asynchronous I/O).

mod common;

use common::*;
use heapstore::Database;
use std::path::Path;

const METHODS: [&str; 3] = ["sync", "worker", "io_uring"];

/// Loads `rows` rows of ~120 bytes into `t`.
fn load(s: &mut heapstore::Session, rows: usize) {
    s.execute("CREATE TABLE t (id bigint NOT NULL, payload text)").unwrap();
    let mut data = String::with_capacity(rows * 130);
    let mut rng = heapstore::rng::Rng::new(7);
    for i in 0..rows {
        data.push_str(&format!("{i}\t{:0>100}\n", rng.next_u64()));
    }
    copy_in(s, "COPY t FROM STDIN", data.as_bytes()).unwrap();
}

fn plan_value(plan: &[String], key: &str) -> u64 {
    let line = plan.iter().find(|l| l.contains(key)).unwrap_or_else(|| panic!("no {key} in {plan:#?}"));
    let rest = &line[line.find(key).unwrap() + key.len()..];
    rest.trim_start_matches(['=', ' ']).split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

fn explain(s: &mut heapstore::Session, sql: &str) -> Vec<String> {
    let r = s.execute(&format!("EXPLAIN (ANALYZE, BUFFERS) {sql}")).unwrap();
    r[0].rows.iter().map(|r| r[0].clone().unwrap()).collect()
}

#[test]
fn a_scan_ten_times_the_pool_leaves_at_most_the_ring_in_it() {
    for method in METHODS {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("data");
        Database::init(&dir, &[]).unwrap();
        let set = |extra: &[&str]| -> Vec<String> {
            let mut v = vec!["shared_buffers=2MB".to_string(), "max_connections=4".to_string(), format!("io_method={method}")];
            v.extend(extra.iter().map(|s| s.to_string()));
            v
        };
        let db = Database::open(&dir, &set(&[])).unwrap();
        let mut s = db.session();
        load(&mut s, 180_000); // ~ 2,600 pages: 10 x the 256-buffer pool
        let rel = s.table("t").unwrap().relfile;
        drop(s);
        db.close().unwrap();

        let db = Database::open(&dir, &set(&[])).unwrap();
        let pool_blocks = db.shared().pool.nbuffers() as u64;
        let mut s = db.session();
        let plan = explain(&mut s, "SELECT count(*) FROM t");
        let rows = plan_value(&plan, "rows=");
        assert_eq!(rows, 1);
        let read = plan_value(&plan, "read=");
        assert!(read >= 10 * pool_blocks, "{method}: the table must be 10x the pool: {plan:#?}");
        let ring_buffers: u64 = {
            let l = plan.iter().find(|l| l.contains("Strategy: bulkread")).unwrap();
            l.split('(').nth(1).unwrap().split(' ').next().unwrap().parse().unwrap()
        };
        let escapes: u64 = {
            let l = plan.iter().find(|l| l.contains("escapes")).unwrap();
            l.split(", ").find(|p| p.ends_with("escapes")).unwrap().split(' ').next().unwrap().parse().unwrap()
        };
        assert_eq!(escapes, 0, "{method}: no ring escapes: {plan:#?}");
        let in_pool = db.shared().pool.count_relation_buffers(rel) as u64;
        assert!(in_pool <= ring_buffers, "{method}: {in_pool} pages of the table stayed in the pool, ring is {ring_buffers}: {plan:#?}");
        assert_eq!(count(&mut s, "t"), 180_000);
        drop(s);
        db.close().unwrap();
    }
}

#[test]
fn results_are_identical_whatever_the_io_method_and_direct_io() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("data");
    Database::init(&dir, &[]).unwrap();
    let db = Database::open(&dir, &["shared_buffers=1MB".into()]).unwrap();
    let mut s = db.session();
    load(&mut s, 40_000);
    let reference = copy_out(&mut s, "COPY t TO STDOUT");
    drop(s);
    db.close().unwrap();
    for method in METHODS {
        for direct in ["off", "on"] {
            for combine in ["8kB", "128kB"] {
                let set = vec![
                    "shared_buffers=1MB".to_string(),
                    format!("io_method={method}"),
                    format!("io_direct={direct}"),
                    format!("io_combine_limit={combine}"),
                    "synchronize_seqscans=off".to_string(),
                ];
                let db = Database::open(&dir, &set).unwrap();
                let mut s = db.session();
                let out = copy_out(&mut s, "COPY t TO STDOUT");
                assert!(out == reference, "COPY TO differs with io_method={method} io_direct={direct} io_combine_limit={combine}");
                let r = s.execute("SELECT id, payload FROM t LIMIT 5").unwrap();
                assert_eq!(r[0].rows.len(), 5);
                assert_eq!(count(&mut s, "t"), 40_000);
                drop(s);
                db.close().unwrap();
            }
        }
    }
}

#[test]
fn a_corrupt_page_read_through_a_stream_is_reported_with_relation_and_block() {
    for method in METHODS {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("data");
        Database::init(&dir, &[]).unwrap();
        let db = Database::open(&dir, &["shared_buffers=1MB".into()]).unwrap();
        let mut s = db.session();
        load(&mut s, 20_000);
        let rel = s.table("t").unwrap().relfile;
        drop(s);
        db.close().unwrap();
        corrupt(&dir.join("base").join(rel.0.to_string()), 37);
        let db = Database::open(&dir, &["shared_buffers=1MB".into(), format!("io_method={method}")]).unwrap();
        let e = db.session().execute("SELECT count(*) FROM t").unwrap_err();
        assert_eq!(e.message, format!("invalid page in block 37 of relation base/{}", rel.0), "{method}");
        assert_eq!(e.code, "XX001");
        // The pool is not left with a stuck I/O: other blocks still read fine.
        let e2 = db.session().execute("SELECT * FROM t LIMIT 1");
        assert!(e2.is_ok(), "{method}: {e2:?}");
        db.close().unwrap();
    }
}

fn corrupt(path: &Path, block: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[8192 * block + 5000] ^= 0x40;
    std::fs::write(path, &bytes).unwrap();
}

#[test]
fn explain_without_analyze_runs_nothing_and_names_the_strategy() {
    let (_t, _dir, db) = new_db(&["shared_buffers=1MB"]);
    let mut s = db.session();
    load(&mut s, 20_000);
    let r = s.execute("EXPLAIN SELECT count(*) FROM t").unwrap();
    let lines: Vec<String> = r[0].rows.iter().map(|r| r[0].clone().unwrap()).collect();
    assert_eq!(r[0].columns[0].0, "QUERY PLAN");
    assert_eq!(lines[0], "Aggregate");
    assert_eq!(lines[1], "  ->  Seq Scan on t");
    assert!(lines[2].trim_start().starts_with("Strategy: bulkread ring"), "{lines:#?}");
    let plan = explain(&mut s, "SELECT * FROM t LIMIT 3");
    assert!(plan[0].starts_with("Limit (actual time="), "{plan:#?}");
    assert!(plan[0].contains("rows=3 loops=1"), "{plan:#?}");
    assert!(plan.last().unwrap().starts_with("Execution Time: "), "{plan:#?}");
    let e = s.execute("EXPLAIN (ANALYZE, COLOR) SELECT 1").unwrap_err();
    assert_eq!(e.code, "42601");
    assert_eq!(e.message, "unrecognized EXPLAIN option \"color\"");
    let e = s.execute("EXPLAIN SELECT count(*) FROM nope").unwrap_err();
    assert_eq!(e.code, "42P01");
}

#[test]
fn a_second_scan_starts_where_a_running_scan_is_and_wraps_around() {
    use heapstore::access::heap::{self, Flow};
    let (_t, _dir, db) = new_db(&["shared_buffers=2MB", "max_connections=4"]);
    let mut s = db.session();
    load(&mut s, 60_000);
    let rel = s.table("t").unwrap().relfile;
    drop(s);
    let sh = db.shared().clone();
    let snap = sh.txns.snapshot(0, 0);
    let pins_a = sh.pool.new_pins();
    let mut seen_a = 0u64;
    let mut second = None;
    let first = heap::scan(&sh.pool, &pins_a, &sh.txns, rel, &snap, |block, _, _| {
        seen_a += 1;
        if second.is_none() && block >= 300 {
            // A second scan begins while the first is at block 300.
            let pins_b = sh.pool.new_pins();
            let mut seen_b = 0u64;
            let st = heap::scan(&sh.pool, &pins_b, &sh.txns, rel, &snap, |_, _, _| {
                seen_b += 1;
                Ok(Flow::Continue)
            })?;
            second = Some((st, seen_b));
        }
        Ok(Flow::Continue)
    })
    .unwrap();
    let (st, seen_b) = second.unwrap();
    assert_eq!(first.start_block, 0);
    // The first scan reports its read stream's frontier (at most its look-ahead limit, 24 with
    // this ring, plus one partly built read of 16 ahead of the page it is on) every 16 pages.
    assert!(
        (284..=300 + 24 + 16).contains(&st.start_block),
        "the second scan joins at the first's last reported look-ahead frontier: {}",
        st.start_block
    );
    assert_eq!((seen_a, seen_b), (60_000, 60_000), "both scans see every row once, the second wrapping around");
    assert_eq!(st.pages, first.pages);

    // With synchronize_seqscans off every scan starts at block 0.
    drop(pins_a);
    db.close().unwrap();
}

#[test]
fn explain_shows_the_index_the_planner_uses() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE a (id integer PRIMARY KEY, v text)").unwrap();
    s.execute("INSERT INTO a VALUES (1, 'x'), (2, 'y'), (3, 'z')").unwrap();
    let plan = explain(&mut s, "SELECT v FROM a WHERE id = 2");
    assert!(plan[0].starts_with("Index Scan using a_pkey on a (actual time="), "{plan:#?}");
    assert!(plan[0].contains("rows=1 loops=1"), "{plan:#?}");
    let r = s.execute("EXPLAIN SELECT * FROM a WHERE v = 'x'").unwrap();
    assert_eq!(r[0].rows[0][0].as_deref(), Some("Seq Scan on a"));
    assert_eq!(r[0].rows[1][0].as_deref(), Some("  Filter: (v = 'x'::text)"));
}

#[test]
fn a_canceled_statement_stops_its_scan_with_57014() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let (_t, _dir, db) = new_db(&["shared_buffers=1MB"]);
    let mut s = db.session();
    load(&mut s, 5_000);
    let flag = Arc::new(AtomicBool::new(true));
    heapstore::interrupt::set_cancel_flag(Some(flag.clone()));
    let e = s.execute("SELECT count(*) FROM t").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("57014", "canceling statement due to user request"));
    flag.store(false, Ordering::SeqCst);
    assert_eq!(count(&mut s, "t"), 5_000, "the session goes on after a cancel");
    heapstore::interrupt::set_cancel_flag(None);
}

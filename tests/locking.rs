//! Statements take PostgreSQL's locks: a DROP waits for a running COPY, a SELECT waits for a
//! TRUNCATE, and two sessions locking two tables in opposite orders get a deadlock error.

mod common;
use common::*;
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn drop_waits_for_running_copy_and_select_waits_for_truncate() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    a.execute("CREATE TABLE t (x integer)").unwrap();
    a.execute("BEGIN").unwrap();
    copy_in(&mut a, "COPY t FROM STDIN", b"1\n2\n").unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|sc| {
        let db = &db;
        sc.spawn(move || {
            let mut b = db.session();
            b.execute("DROP TABLE t").unwrap();
            tx.send(Instant::now()).unwrap();
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(rx.try_recv().is_err(), "DROP did not wait for the open COPY transaction");
        let rows = a.execute("SELECT * FROM pg_locks").unwrap();
        assert!(
            rows[0].rows.iter().any(|r| r[3].as_deref() == Some("AccessExclusiveLock") && r[4].as_deref() == Some("f")),
            "the waiting DROP shows in pg_locks"
        );
        a.execute("COMMIT").unwrap();
        rx.recv_timeout(Duration::from_secs(10)).expect("DROP proceeds after COMMIT");
    });
    a.execute("CREATE TABLE u (x integer)").unwrap();
    copy_in(&mut a, "COPY u FROM STDIN", b"1\n").unwrap();
    a.execute("BEGIN; TRUNCATE u").unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|sc| {
        let db = &db;
        sc.spawn(move || {
            let mut b = db.session();
            tx.send(count(&mut b, "u")).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err(), "SELECT did not wait for TRUNCATE");
        a.execute("ROLLBACK").unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 1, "after the rollback the row is there");
    });
}

#[test]
fn opposite_order_deadlock_is_detected() {
    // A lock_timeout far beyond deadlock_timeout: the error can only come from detection.
    let (_t, _dir, db) = new_db(&["deadlock_timeout=200ms", "lock_timeout=10min"]);
    db.session().execute("CREATE TABLE a (x integer); CREATE TABLE b (x integer)").unwrap();
    let barrier = std::sync::Barrier::new(2);
    let results: Vec<Result<(), heapstore::PgError>> = std::thread::scope(|sc| {
        let hs: Vec<_> = [("a", "b"), ("b", "a")]
            .into_iter()
            .map(|(first, second)| {
                let (db, barrier) = (&db, &barrier);
                sc.spawn(move || {
                    let mut s = db.session();
                    s.execute(&format!("BEGIN; TRUNCATE {first}")).unwrap();
                    barrier.wait();
                    let r = s.execute(&format!("TRUNCATE {second}")).map(|_| ());
                    s.execute("ROLLBACK").unwrap();
                    r
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let errors: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "exactly one victim: {results:?}");
    let e = errors[0];
    assert_eq!(e.code, "40P01");
    assert_eq!(e.message, "deadlock detected");
    let detail = e.detail.as_deref().unwrap_or("");
    assert!(detail.contains("AccessExclusiveLock on relation"), "{detail}");
}

/// LOCK TABLE on a view locks the view and, recursively, the relations its query reads, in the
/// same mode (PostgreSQL 11 and later): a reader of a base table waits (here: times out).
#[test]
fn locking_a_view_locks_its_base_tables() {
    let (_t, _dir, db) = new_db(&["lock_timeout=300ms"]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE base1 (x int); CREATE TABLE base2 (y int); CREATE TABLE other (z int)").unwrap();
    a.execute("CREATE VIEW v1 AS SELECT x FROM base1").unwrap();
    a.execute("CREATE VIEW v2 AS SELECT v1.x, base2.y FROM v1, base2").unwrap();
    a.execute("BEGIN").unwrap();
    a.execute("LOCK TABLE v2 IN ACCESS EXCLUSIVE MODE").unwrap();
    for t in ["base1", "base2", "v1", "v2"] {
        let e = b.execute(&format!("SELECT * FROM {t}")).unwrap_err();
        assert_eq!(e.code, "55P03", "{t} was not locked: {e:?}");
    }
    b.execute("SELECT * FROM other").unwrap();
    b.execute("BEGIN").unwrap();
    let e = b.execute("LOCK TABLE v1 IN SHARE MODE NOWAIT").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("55P03", "could not obtain lock on relation \"v1\""));
    b.execute("ROLLBACK").unwrap();
    a.execute("COMMIT").unwrap();
    b.execute("BEGIN").unwrap();
    b.execute("LOCK TABLE v2 IN SHARE MODE NOWAIT").unwrap();
    b.execute("COMMIT").unwrap();
}

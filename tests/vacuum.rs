//! `pg_stat_user_tables` counters and autovacuum (`stats::tables`, `autovacuum`).

mod common;

use heapstore::Session;
use std::time::{Duration, Instant};

fn row(s: &mut Session, sql: &str) -> Vec<Option<String>> {
    let mut r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.pop().unwrap().rows.into_iter().next().unwrap_or_default()
}

fn stats(s: &mut Session, table: &str) -> Vec<Option<String>> {
    row(
        s,
        &format!(
            "SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_live_tup, n_dead_tup, vacuum_count, autovacuum_count, \
             last_vacuum IS NULL, last_autovacuum IS NULL FROM pg_stat_user_tables WHERE relname = '{table}'"
        ),
    )
}

fn v(x: &[&str]) -> Vec<Option<String>> {
    x.iter().map(|s| Some(s.to_string())).collect()
}

#[test]
fn counters_follow_commits_aborts_and_vacuum() {
    let (_t, _dir, db) = common::new_db(&["autovacuum=off"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int PRIMARY KEY, n int)").unwrap();
    s.execute("INSERT INTO t VALUES (1, 0), (2, 0), (3, 0)").unwrap();
    s.execute("UPDATE t SET n = 1 WHERE id = 1").unwrap(); // HOT
    s.execute("UPDATE t SET id = 4 WHERE id = 2").unwrap(); // not HOT: the key changed
    s.execute("DELETE FROM t WHERE id = 3").unwrap();
    // ins, upd, hot_upd, del, live, dead, vacuum_count, autovacuum_count, never vacuumed x2
    assert_eq!(stats(&mut s, "t"), v(&["3", "2", "1", "1", "2", "3", "0", "0", "t", "t"]));
    s.execute("BEGIN").unwrap();
    s.execute("INSERT INTO t VALUES (9, 9)").unwrap();
    s.execute("UPDATE t SET n = 5 WHERE id = 1").unwrap();
    s.execute("ROLLBACK").unwrap();
    // The aborted insert and the aborted update's new version are dead; nothing became live.
    assert_eq!(stats(&mut s, "t"), v(&["4", "3", "2", "1", "2", "5", "0", "0", "t", "t"]));
    s.execute("VACUUM t").unwrap();
    assert_eq!(stats(&mut s, "t"), v(&["4", "3", "2", "1", "2", "0", "1", "0", "f", "t"]));
    heapstore::sql::index::check_table(&mut s, "t").unwrap().unwrap();
    // Columns heapstore does not count are refused, not invented.
    let e = s.execute("SELECT seq_scan FROM pg_stat_user_tables").unwrap_err();
    assert_eq!(e.code, "0A000");
}

#[test]
fn autovacuum_vacuums_a_table_past_its_threshold() {
    let (_t, _dir, db) = common::new_db(&["autovacuum_naptime=1", "autovacuum_vacuum_threshold=20", "autovacuum_vacuum_scale_factor=0"]);
    let mut s = db.session();
    s.execute("CREATE TABLE a (id int PRIMARY KEY, pad text)").unwrap();
    s.execute("CREATE TABLE quiet (id int)").unwrap();
    for i in 0..200 {
        s.execute(&format!("INSERT INTO a VALUES ({i}, repeat('x', 100))")).unwrap();
    }
    s.execute("INSERT INTO quiet VALUES (1)").unwrap();
    s.execute("DELETE FROM a WHERE id < 150").unwrap();
    // Wait for a round (naptime 1 s); the deadline only bounds a broken build.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = stats(&mut s, "a");
        if r[7].as_deref() == Some("1") {
            assert_eq!(r[4].as_deref(), Some("50"), "live versions after the vacuum: {r:?}");
            assert_eq!(r[5].as_deref(), Some("0"));
            assert_eq!(r[9].as_deref(), Some("f"), "last_autovacuum is set");
            break;
        }
        assert!(Instant::now() < deadline, "autovacuum never ran: {r:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The table with no dead versions is left alone.
    assert_eq!(stats(&mut s, "quiet")[7].as_deref(), Some("0"));
    assert_eq!(row(&mut s, "SELECT count(*) FROM a")[0].as_deref(), Some("50"));
    heapstore::sql::index::check_table(&mut s, "a").unwrap().unwrap();
    // The freed space is reused: new rows go into the vacuumed pages.
    let before = row(&mut s, "SELECT pg_relation_size('a')")[0].clone();
    for i in 1000..1100 {
        s.execute(&format!("INSERT INTO a VALUES ({i}, repeat('y', 100))")).unwrap();
    }
    assert_eq!(row(&mut s, "SELECT pg_relation_size('a')")[0], before);
}

//! SAVEPOINT / RELEASE / ROLLBACK TO: PostgreSQL's answers, the undo of every kind of row change
//! (INSERT, UPDATE, DELETE, COPY, TOAST, TRUNCATE, CREATE TABLE), the race it could open with
//! another session's row change, and recovery of a transaction that rolled back to a savepoint
//! after a power loss on the simulated disk.

mod common;
use common::{ok, rows};

use heapstore::db::Environment;
use heapstore::sql::CopyIo;
use heapstore::storage::simdisk::{PowerLossModel, SimDisk};
use heapstore::{Database, Session};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn err(s: &mut Session, sql: &str) -> (String, String) {
    match s.execute(sql) {
        Ok(_) => panic!("{sql}: succeeded"),
        Err(e) => (e.code.to_string(), e.message.clone()),
    }
}

#[test]
fn rollback_to_undoes_inserts_updates_deletes_and_keeps_the_savepoint() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id int PRIMARY KEY, v text)");
    ok(&mut s, "CREATE INDEX t_v ON t (v)");
    ok(&mut s, "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (4, 'four')");
    assert_eq!(ok(&mut s, "SAVEPOINT a"), "SAVEPOINT");
    ok(&mut s, "INSERT INTO t VALUES (5, 'five')");
    ok(&mut s, "UPDATE t SET v = 'TWO' WHERE id = 2");
    ok(&mut s, "UPDATE t SET v = 'FOUR' WHERE id = 4");
    ok(&mut s, "DELETE FROM t WHERE id = 3");
    assert_eq!(rows(&mut s, "SELECT id, v FROM t ORDER BY id"), ["1|one", "2|TWO", "4|FOUR", "5|five"]);
    assert_eq!(ok(&mut s, "ROLLBACK TO SAVEPOINT a"), "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT id, v FROM t ORDER BY id"), ["1|one", "2|two", "3|three", "4|four"]);
    // Index scans agree with the heap: the undone versions are dead to them too.
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE v = 'TWO'"), Vec::<String>::new());
    assert_eq!(rows(&mut s, "SELECT v FROM t WHERE id = 5"), Vec::<String>::new());
    assert_eq!(rows(&mut s, "SELECT v FROM t WHERE id = 3"), ["three"]);
    // The savepoint is still there: roll back to it a second time.
    ok(&mut s, "DELETE FROM t WHERE id = 1");
    ok(&mut s, "ROLLBACK TO a");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["4"]);
    // The key of an undone insert can be inserted again.
    ok(&mut s, "INSERT INTO t VALUES (5, 'again')");
    ok(&mut s, "RELEASE SAVEPOINT a");
    ok(&mut s, "COMMIT");
    let mut o = db.session();
    assert_eq!(rows(&mut o, "SELECT id, v FROM t ORDER BY id"), ["1|one", "2|two", "3|three", "4|four", "5|again"]);
    assert_eq!(rows(&mut o, "SELECT id FROM t WHERE v = 'again'"), ["5"]);
    // VACUUM removes the undone versions (their creator reads as aborted).
    let r = o.execute("VACUUM t").unwrap();
    assert!(!r.is_empty());
    assert_eq!(rows(&mut o, "SELECT id, v FROM t ORDER BY id"), ["1|one", "2|two", "3|three", "4|four", "5|again"]);
}

#[test]
fn an_error_is_recovered_by_rollback_to_and_nested_savepoints_unwind() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id int PRIMARY KEY)");
    ok(&mut s, "BEGIN");
    ok(&mut s, "SAVEPOINT a");
    ok(&mut s, "INSERT INTO t VALUES (1)");
    ok(&mut s, "SAVEPOINT b");
    ok(&mut s, "INSERT INTO t VALUES (2)");
    ok(&mut s, "SAVEPOINT b"); // a second savepoint of the same name hides the first
    ok(&mut s, "INSERT INTO t VALUES (3)");
    let (code, _) = err(&mut s, "INSERT INTO t VALUES (4), (1)");
    assert_eq!(code, "23505");
    assert_eq!(err(&mut s, "SELECT 1").0, "25P02");
    assert_eq!(err(&mut s, "SAVEPOINT c").0, "25P02");
    assert_eq!(err(&mut s, "RELEASE b").0, "25P02");
    ok(&mut s, "ROLLBACK TO b");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
    ok(&mut s, "RELEASE b"); // the newer b
    ok(&mut s, "ROLLBACK TO b"); // the older b: undoes the insert of 2
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1"]);
    ok(&mut s, "RELEASE a"); // releases a and b
    let (code, msg) = err(&mut s, "ROLLBACK TO b");
    assert_eq!((code.as_str(), msg.as_str()), ("3B001", "savepoint \"b\" does not exist"));
    // That error failed the transaction, as in PostgreSQL: COMMIT rolls it back.
    assert_eq!(ok(&mut s, "COMMIT"), "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["0"]);
    // Outside a block.
    assert_eq!(err(&mut s, "SAVEPOINT x"), ("25P01".into(), "SAVEPOINT can only be used in transaction blocks".into()));
    assert_eq!(err(&mut s, "ROLLBACK TO x").0, "25P01");
    assert_eq!(err(&mut s, "RELEASE x").0, "25P01");
    // Names fold to lower case unless quoted.
    ok(&mut s, "BEGIN");
    ok(&mut s, "SAVEPOINT MixedCase");
    ok(&mut s, "ROLLBACK TO mixedcase");
    assert_eq!(err(&mut s, "ROLLBACK TO \"MixedCase\"").0, "3B001");
    ok(&mut s, "ROLLBACK");
    // A statement that does not parse fails the block as any other error: a script with a
    // typo in it commits nothing, and ROLLBACK TO recovers from it.
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (7)");
    ok(&mut s, "SAVEPOINT p");
    ok(&mut s, "INSERT INTO t VALUES (8)");
    assert_eq!(err(&mut s, "INSRT INTO t VALUES (9)").0, "42601");
    assert_eq!(err(&mut s, "SELECT 1").0, "25P02");
    ok(&mut s, "ROLLBACK TO p");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["7"]);
    assert_eq!(err(&mut s, "SELEC 1").0, "42601");
    assert_eq!(ok(&mut s, "COMMIT"), "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["0"]);
}

#[test]
fn copy_and_toast_and_ddl_since_the_savepoint_are_undone() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id int PRIMARY KEY, big text)");
    ok(&mut s, "INSERT INTO t VALUES (0, 'keep')");
    ok(&mut s, "BEGIN");
    ok(&mut s, "SAVEPOINT a");
    // A COPY that fails at its last line after many rows went in (several pages).
    let mut data = String::new();
    for i in 1..=5000 {
        data.push_str(&format!("{i}\t{}\n", "x".repeat(if i % 1000 == 0 { 20000 } else { 10 })));
    }
    data.push_str("oops\tbad\n");
    let e = common::copy_in(&mut s, "COPY t FROM STDIN", data.as_bytes()).unwrap_err();
    assert_eq!(e.code, "22P02");
    ok(&mut s, "ROLLBACK TO a");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["1"]);
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE id = 1000"), Vec::<String>::new());
    // A good COPY with TOASTed values, then undone.
    let good: String = (1..=3000).map(|i| format!("{i}\t{}\n", "y".repeat(if i % 500 == 0 { 30000 } else { 5 }))).collect();
    common::copy_in(&mut s, "COPY t FROM STDIN", good.as_bytes()).unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["3001"]);
    ok(&mut s, "ROLLBACK TO a");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["1"]);
    // TRUNCATE and CREATE TABLE since the savepoint.
    ok(&mut s, "TRUNCATE t");
    ok(&mut s, "CREATE TABLE u (x int)");
    ok(&mut s, "INSERT INTO u VALUES (1)");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["0"]);
    ok(&mut s, "ROLLBACK TO a");
    assert_eq!(rows(&mut s, "SELECT id, big FROM t"), ["0|keep"]);
    assert_eq!(err(&mut s, "SELECT * FROM u").0, "42P01");
    ok(&mut s, "ROLLBACK TO a"); // that error failed the transaction
                                 // Work after the rollback commits.
    common::copy_in(&mut s, "COPY t FROM STDIN", b"7\tseven\n").unwrap();
    ok(&mut s, "COMMIT");
    let mut o = db.session();
    assert_eq!(rows(&mut o, "SELECT id, big FROM t ORDER BY id"), ["0|keep", "7|seven"]);
    assert_eq!(err(&mut o, "SELECT * FROM u").0, "42P01");
    ok(&mut o, "CREATE TABLE u (x int)"); // the name is free
}

#[test]
fn another_session_can_change_a_row_whose_change_was_undone_without_waiting() {
    // The race ROLLBACK TO could open: a version claimed after the savepoint must be released
    // by the undo, or a second session would wait on it until the whole transaction ends.
    let (_d, _p, db) = common::new_db(&["lock_timeout=2s"]);
    let mut a = db.session();
    let mut b = db.session();
    ok(&mut a, "CREATE TABLE t (id int PRIMARY KEY, n int)");
    ok(&mut a, "INSERT INTO t VALUES (1, 0), (2, 0)");
    ok(&mut a, "BEGIN");
    ok(&mut a, "SAVEPOINT s");
    ok(&mut a, "UPDATE t SET n = 10 WHERE id = 1");
    ok(&mut a, "DELETE FROM t WHERE id = 2");
    ok(&mut a, "ROLLBACK TO s");
    // b changes both rows while a's transaction is still open: no wait, no lost update.
    assert_eq!(ok(&mut b, "UPDATE t SET n = n + 1 WHERE id = 1"), "UPDATE 1");
    assert_eq!(ok(&mut b, "UPDATE t SET n = n + 1 WHERE id = 2"), "UPDATE 1");
    // a no longer sees its own undone change, and cannot overwrite b's committed one silently:
    // in READ COMMITTED its update follows b's version.
    ok(&mut a, "UPDATE t SET n = n + 100 WHERE id = 1");
    ok(&mut a, "COMMIT");
    assert_eq!(rows(&mut b, "SELECT id, n FROM t ORDER BY id"), ["1|101", "2|1"]);
}

const DIR: &str = "/sim/sp";

fn open(disk: &SimDisk, dir: &Path) -> Database {
    let env = Environment { vfs: Arc::new(disk.clone()), background_workers: false };
    Database::open_in(env, dir, &["shared_buffers=256kB".into()]).unwrap()
}

#[test]
fn a_committed_rollback_to_survives_power_loss() {
    let disk = SimDisk::new(7);
    let dir = PathBuf::from(DIR);
    Database::init_in(Arc::new(disk.clone()), &dir, &["wal_segment_size=1MB".into()]).unwrap();
    let db = open(&disk, &dir);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id int PRIMARY KEY, v text)");
    ok(&mut s, "INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    db.checkpoint().unwrap();
    ok(&mut s, "BEGIN");
    ok(&mut s, "SAVEPOINT s");
    let many: String = (10..2010).map(|i| format!("{i}\tv{i}\n")).collect();
    common::copy_in(&mut s, "COPY t FROM STDIN", many.as_bytes()).unwrap();
    ok(&mut s, "UPDATE t SET v = 'changed' WHERE id = 1");
    ok(&mut s, "DELETE FROM t WHERE id = 2");
    ok(&mut s, "ROLLBACK TO s");
    ok(&mut s, "INSERT INTO t VALUES (3, 'c')");
    ok(&mut s, "COMMIT");
    drop(s);
    // Power loss: only what was fsynced (the WAL up to the commit) survives; the pages are
    // rebuilt by replay, the undo records included.
    disk.cut_power();
    db.crash();
    disk.power_loss(PowerLossModel { survive: 0.0, tear: 0.0 });
    let db = open(&disk, &dir);
    let mut s = db.session();
    assert_eq!(rows(&mut s, "SELECT id, v FROM t ORDER BY id"), ["1|a", "2|b", "3|c"]);
    assert_eq!(rows(&mut s, "SELECT v FROM t WHERE id = 500"), Vec::<String>::new());
    let mut out = Vec::new();
    s.execute_with_io("COPY t (id) TO STDOUT", &mut CopyIo { stdin: None, stdout: Some(&mut out), rows: None }).unwrap();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 3);
}

#[test]
fn ddl_that_edits_earlier_catalog_changes_is_restored_whole() {
    let (_d, dir, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE keep (id int PRIMARY KEY)");
    ok(&mut s, "INSERT INTO keep VALUES (1), (2), (3)");
    // A DROP of a table created before the savepoint, then a CREATE: the dropped table comes
    // back and the created one goes.
    ok(&mut s, "BEGIN");
    ok(&mut s, "CREATE TABLE a (x int)");
    ok(&mut s, "INSERT INTO a VALUES (7)");
    ok(&mut s, "CREATE TABLE b (x int)");
    ok(&mut s, "SAVEPOINT s");
    ok(&mut s, "DROP TABLE a");
    ok(&mut s, "CREATE TABLE c (x int)");
    ok(&mut s, "ROLLBACK TO s");
    assert_eq!(rows(&mut s, "SELECT x FROM a"), ["7"]);
    assert_eq!(err(&mut s, "SELECT * FROM c").0, "42P01");
    ok(&mut s, "ROLLBACK TO s");
    // TRUNCATE of a committed table whose definition this transaction replaced earlier (an
    // index), undone: the committed rows stay.
    ok(&mut s, "CREATE INDEX keep_idx ON keep (id)");
    ok(&mut s, "SAVEPOINT t");
    ok(&mut s, "TRUNCATE keep");
    ok(&mut s, "ROLLBACK TO t");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM keep"), ["3"]);
    // An index created after the savepoint is gone with it.
    ok(&mut s, "SAVEPOINT u");
    ok(&mut s, "CREATE INDEX b_x ON b (x)");
    ok(&mut s, "ROLLBACK TO u");
    ok(&mut s, "INSERT INTO b VALUES (1)");
    // A failed statement that changed the lists before failing (psql's ON_ERROR_ROLLBACK).
    ok(&mut s, "SAVEPOINT v");
    assert_eq!(err(&mut s, "DROP TABLE a, missing").0, "42P01");
    ok(&mut s, "ROLLBACK TO v");
    assert_eq!(rows(&mut s, "SELECT x FROM a"), ["7"]);
    ok(&mut s, "COMMIT");
    drop(s);
    drop(db);
    // After a restart (which removes files no table references), everything is intact.
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM keep"), ["3"]);
    assert_eq!(rows(&mut s, "SELECT id FROM keep WHERE id = 2"), ["2"]);
    assert_eq!(rows(&mut s, "SELECT x FROM a"), ["7"]);
    assert_eq!(rows(&mut s, "SELECT x FROM b"), ["1"]);
    assert_eq!(err(&mut s, "SELECT * FROM c").0, "42P01");
    ok(&mut s, "CREATE INDEX b_x ON b (x)"); // the name is free
}

#[test]
fn wal_skipped_table_rolled_back_to_then_committed_survives_power_loss() {
    let disk = SimDisk::new(11);
    let dir = PathBuf::from("/sim/minimal");
    Database::init_in(Arc::new(disk.clone()), &dir, &["wal_segment_size=1MB".into()]).unwrap();
    let env = Environment { vfs: Arc::new(disk.clone()), background_workers: false };
    let db = Database::open_in(env, &dir, &["shared_buffers=256kB".into(), "wal_level=minimal".into()]).unwrap();
    let mut s = db.session();
    ok(&mut s, "BEGIN");
    ok(&mut s, "CREATE TABLE m (id int, v text)");
    common::copy_in(&mut s, "COPY m FROM STDIN", b"1\tone\n2\ttwo\n").unwrap();
    ok(&mut s, "SAVEPOINT s");
    let many: String = (10..3010).map(|i| format!("{i}\tv{i}\n")).collect();
    common::copy_in(&mut s, "COPY m FROM STDIN", many.as_bytes()).unwrap();
    ok(&mut s, "ROLLBACK TO s");
    common::copy_in(&mut s, "COPY m FROM STDIN", b"3\tthree\n").unwrap();
    ok(&mut s, "COMMIT");
    drop(s);
    disk.cut_power();
    db.crash();
    disk.power_loss(PowerLossModel { survive: 0.0, tear: 0.0 });
    let db = open(&disk, &dir);
    let mut s = db.session();
    assert_eq!(rows(&mut s, "SELECT id, v FROM m ORDER BY id"), ["1|one", "2|two", "3|three"]);
}

//! Temporary tables (`CREATE TEMP TABLE`): seen only by the session that made them, found
//! before a permanent relation of the same name, never in the catalog file or the WAL, their
//! files deleted when the session ends and, after a crash, at start-up.

mod common;
use common::*;
use heapstore::Session;

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql).pop().unwrap_or_else(|| panic!("{sql}: no row"))
}

/// The files of relation `name` as this session sees it (heap, and its indexes).
fn files(s: &mut Session, dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    rows(
        s,
        &format!(
            "SELECT c.relfilenode FROM pg_class c WHERE c.oid = '{name}'::regclass OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = '{name}'::regclass)"
        ),
    )
    .into_iter()
    .map(|n| dir.join("base").join(n))
    .collect()
}

#[test]
fn each_session_sees_only_its_own_temporary_tables() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    ok(&mut a, "CREATE TEMP TABLE stage (id int PRIMARY KEY, v text)");
    ok(&mut a, "INSERT INTO stage VALUES (1, 'a'), (2, 'b')");
    assert_eq!(err(&mut b, "SELECT * FROM stage").code, "42P01");
    // The same name in another session is another table.
    ok(&mut b, "CREATE TEMPORARY TABLE stage (id int, w int)");
    ok(&mut b, "INSERT INTO stage VALUES (7, 70)");
    assert_eq!(rows(&mut a, "SELECT id, v FROM stage ORDER BY id"), ["1|a", "2|b"]);
    assert_eq!(rows(&mut b, "SELECT * FROM stage"), ["7|70"]);
    assert_eq!(rows(&mut a, "SELECT id FROM pg_temp.stage ORDER BY id"), ["1", "2"]);
    assert_eq!(err(&mut a, "SELECT * FROM public.stage").code, "42P01");
    // No name is both a permanent relation and a session's temporary one (PostgreSQL lets
    // the temporary one hide the other; heapstore refuses): a permanent table, or an index,
    // under the name of another session's temporary table is refused ...
    let mut c = db.session();
    assert_eq!(err(&mut c, "CREATE TABLE stage (x text)").code, "0A000");
    assert_eq!(err(&mut c, "CREATE TABLE stage_pkey (x text)").code, "0A000", "the temporary table's index name");
    // ... also when the two are made at the same time: the one committing second fails.
    ok(&mut c, "BEGIN");
    ok(&mut c, "CREATE TABLE raced (x text)");
    ok(&mut a, "CREATE TEMP TABLE raced (y int)");
    assert_eq!(err(&mut c, "COMMIT").code, "0A000");
    assert_eq!(err(&mut c, "SELECT * FROM raced").code, "42P01", "the failed commit made nothing");
    ok(&mut a, "BEGIN");
    ok(&mut a, "CREATE TEMP TABLE raced2 (y int)");
    ok(&mut c, "CREATE TABLE raced2 (x text)");
    assert_eq!(err(&mut a, "COMMIT").code, "0A000");
    assert_eq!(rows(&mut a, "SELECT count(*) FROM raced2"), ["0"], "the permanent one");
    // A view reads permanent relations only.
    ok(&mut c, "CREATE TABLE vbase (x text)");
    ok(&mut c, "INSERT INTO vbase VALUES ('perm')");
    ok(&mut c, "CREATE VIEW vbase_v AS SELECT x FROM vbase");
    assert_eq!(rows(&mut a, "SELECT * FROM vbase_v"), ["perm"]);
    // The catalogs list a session's own temporary tables, in its pg_temp_N schema.
    assert_eq!(rows(&mut a, "SELECT relpersistence FROM pg_class WHERE relname IN ('stage', 'vbase') ORDER BY 1"), ["p", "t"]);
    assert_eq!(
        rows(
            &mut a,
            "SELECT table_type, table_schema LIKE 'pg_temp_%' FROM information_schema.tables WHERE table_name IN ('stage', 'vbase') ORDER BY 1"
        ),
        ["BASE TABLE|f", "LOCAL TEMPORARY|t"]
    );
    assert_eq!(rows(&mut c, "SELECT count(*) FROM pg_class WHERE relname = 'stage'"), ["0"]);
    // Once no session holds a temporary "stage", the name is free.
    ok(&mut a, "DROP TABLE stage");
    assert_eq!(err(&mut c, "CREATE TABLE stage (x text)").code, "0A000", "b still has one");
    drop(b);
    ok(&mut c, "CREATE TABLE stage (x text)");
    assert_eq!(err(&mut a, "CREATE TEMP TABLE stage (x text)").code, "0A000");
}

#[test]
fn a_temporary_and_a_permanent_relation_of_one_name_are_refused_in_one_session() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE p (a int)");
    let e = err(&mut s, "CREATE TEMP TABLE p (a int)");
    assert_eq!(e.code, "0A000", "{e}");
    ok(&mut s, "CREATE TEMP TABLE q (a int)");
    assert_eq!(err(&mut s, "CREATE TABLE q (a int)").code, "0A000");
    assert_eq!(err(&mut s, "CREATE TEMP TABLE q (a int)").code, "42P07");
    assert_eq!(err(&mut s, "ALTER TABLE q RENAME TO p").code, "0A000");
    assert_eq!(err(&mut s, "CREATE VIEW v AS SELECT * FROM q").code, "0A000", "PostgreSQL would make a temporary view");
    assert_eq!(err(&mut s, "CREATE TEMP VIEW v AS SELECT 1").code, "0A000");
    assert_eq!(err(&mut s, "CREATE TABLE r (a int) ON COMMIT DELETE ROWS").code, "42P16");
    assert_eq!(err(&mut s, "CREATE TEMP TABLE public.r (a int)").code, "42P16");
    assert_eq!(err(&mut s, "CREATE TABLE r (a int REFERENCES q (a))").code, "42P16");
    // A permanent table's default may not name a temporary sequence (PostgreSQL would drop
    // the default with the session).
    ok(&mut s, "CREATE TEMP SEQUENCE ts");
    assert_eq!(err(&mut s, "CREATE TABLE r (a int DEFAULT nextval('ts'))").code, "0A000");
    assert_eq!(err(&mut s, "ALTER TABLE p ADD COLUMN b bigint DEFAULT nextval('ts')").code, "0A000");
    assert_eq!(err(&mut s, "ALTER TABLE p ALTER COLUMN a SET DEFAULT nextval('ts')").code, "0A000");
    ok(&mut s, "CREATE TEMP TABLE r (a int DEFAULT nextval('ts'))");
}

#[test]
fn on_commit_actions_and_rollback() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TEMP TABLE d (a int, t text) ON COMMIT DELETE ROWS");
    ok(&mut s, "CREATE INDEX d_a ON d (a)");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO d SELECT g, repeat('x', 3000) FROM generate_series(1, 500) g");
    assert_eq!(one(&mut s, "SELECT count(*) FROM d WHERE a > 10"), "490");
    ok(&mut s, "COMMIT");
    assert_eq!(one(&mut s, "SELECT count(*) FROM d"), "0");
    assert_eq!(one(&mut s, "SELECT count(*) FROM d WHERE a = 5"), "0", "the index was emptied too");
    // An autocommit INSERT commits, and so deletes its rows.
    ok(&mut s, "INSERT INTO d VALUES (1, 'x')");
    assert_eq!(one(&mut s, "SELECT count(*) FROM d"), "0");
    // ON COMMIT DROP.
    ok(&mut s, "BEGIN");
    ok(&mut s, "CREATE TEMP TABLE g (a serial, b int) ON COMMIT DROP");
    ok(&mut s, "INSERT INTO g (b) VALUES (1), (2)");
    assert_eq!(one(&mut s, "SELECT max(a) FROM g"), "2");
    ok(&mut s, "COMMIT");
    assert_eq!(err(&mut s, "SELECT * FROM g").code, "42P01");
    assert_eq!(err(&mut s, "SELECT nextval('g_a_seq')").code, "42P01", "its sequence went with it");
    // A rolled-back CREATE, and one rolled back to a savepoint.
    ok(&mut s, "BEGIN");
    ok(&mut s, "CREATE TEMP TABLE r1 (a int)");
    ok(&mut s, "SAVEPOINT sp");
    ok(&mut s, "CREATE TEMP TABLE r2 (a int)");
    ok(&mut s, "INSERT INTO r1 VALUES (1)");
    ok(&mut s, "ROLLBACK TO SAVEPOINT sp");
    assert_eq!(one(&mut s, "SELECT count(*) FROM pg_class WHERE relname = 'r2'"), "0");
    ok(&mut s, "RELEASE sp");
    ok(&mut s, "COMMIT");
    assert_eq!(err(&mut s, "SELECT * FROM r2").code, "42P01");
    assert_eq!(one(&mut s, "SELECT count(*) FROM r1"), "0");
    ok(&mut s, "BEGIN");
    ok(&mut s, "DROP TABLE r1");
    ok(&mut s, "ROLLBACK");
    assert_eq!(one(&mut s, "SELECT count(*) FROM r1"), "0", "a rolled-back DROP keeps the table");
    // DISCARD TEMP drops them all.
    ok(&mut s, "DISCARD TEMP");
    assert_eq!(err(&mut s, "SELECT * FROM r1").code, "42P01");
    assert_eq!(err(&mut s, "SELECT * FROM d").code, "42P01");
}

#[test]
fn copy_into_a_temporary_table_and_a_prepared_plan_that_outlives_it() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE target (id int PRIMARY KEY, v text)");
    ok(&mut s, "CREATE TEMP TABLE load (id int, v text)");
    let data: String = (1..=20_000).map(|i| format!("{i}\tv{i}\n")).collect();
    copy_in(&mut s, "COPY load FROM STDIN WITH (PARALLEL 2)", data.as_bytes()).unwrap();
    ok(&mut s, "ANALYZE load");
    ok(&mut s, "VACUUM load");
    assert_eq!(ok(&mut s, "INSERT INTO target SELECT * FROM load WHERE id % 2 = 0"), "INSERT 0 10000");
    assert_eq!(one(&mut s, "SELECT count(*) FROM target"), "10000");
    let p = s.prepare("SELECT count(*) FROM load").unwrap();
    assert_eq!(s.execute_prepared(&p, &[]).unwrap().rows[0][0].as_deref(), Some("20000"));
    ok(&mut s, "DROP TABLE load");
    ok(&mut s, "CREATE TEMP TABLE load (id int)");
    ok(&mut s, "INSERT INTO load VALUES (1)");
    assert_eq!(s.execute_prepared(&p, &[]).unwrap().rows[0][0].as_deref(), Some("1"), "the plan follows the new table");
}

#[test]
fn a_temporary_tables_files_go_with_its_session_and_with_a_crash() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE keep (a int)");
    ok(&mut s, "CREATE TEMP TABLE tmp (id serial PRIMARY KEY, t text)");
    ok(&mut s, "INSERT INTO tmp (t) SELECT repeat('y', 5000) FROM generate_series(1, 50)");
    ok(&mut s, "CHECKPOINT");
    let f = files(&mut s, &dir, "tmp");
    assert_eq!(f.len(), 2);
    assert!(f.iter().all(|p| p.exists()), "{f:?}");
    drop(s);
    assert!(f.iter().all(|p| !p.exists()), "the session's end deleted {f:?}");
    // A crash: nothing recovers a temporary table, and its files are orphans removed at
    // start-up.
    let mut s = db.session();
    ok(&mut s, "CREATE TEMP TABLE tmp2 (id int PRIMARY KEY, t text)");
    ok(&mut s, "INSERT INTO tmp2 SELECT g, 'z' FROM generate_series(1, 1000) g");
    ok(&mut s, "INSERT INTO keep VALUES (1)");
    ok(&mut s, "CHECKPOINT");
    let f = files(&mut s, &dir, "tmp2");
    assert!(f.iter().all(|p| p.exists()));
    db.crash();
    drop(s);
    assert!(f.iter().all(|p| p.exists()), "a crashed session deletes nothing");
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    assert!(f.iter().all(|p| !p.exists()), "start-up deleted {f:?}");
    let mut s = db.session();
    assert_eq!(err(&mut s, "SELECT * FROM tmp2").code, "42P01");
    assert_eq!(one(&mut s, "SELECT count(*) FROM keep"), "1");
    assert_eq!(one(&mut s, "SELECT count(*) FROM pg_class WHERE relpersistence = 't'"), "0");
}

#[test]
fn temporary_rows_are_not_in_the_wal_and_a_crash_after_vacuum_recovers() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TEMP TABLE w (a int PRIMARY KEY, t text)");
    ok(&mut s, "CREATE TABLE p (a int PRIMARY KEY, t text)");
    let wal = |db: &heapstore::Database| db.stats().wal.wal_bytes;
    let before = wal(&db);
    ok(&mut s, "INSERT INTO w SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g");
    ok(&mut s, "UPDATE w SET t = 'y' WHERE a % 3 = 0");
    ok(&mut s, "DELETE FROM w WHERE a % 2 = 0");
    ok(&mut s, "VACUUM w");
    ok(&mut s, "INSERT INTO w SELECT g, 'z' FROM generate_series(1, 20000, 2) g ON CONFLICT DO NOTHING");
    ok(&mut s, "INSERT INTO w SELECT g, 'z' FROM generate_series(2, 20000, 2) g");
    let temp = wal(&db) - before;
    assert!(temp < 64 * 1024, "the temporary table's changes went into the WAL: {temp} bytes");
    let before = wal(&db);
    ok(&mut s, "INSERT INTO p SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g");
    assert!(wal(&db) - before > 1 << 20, "a permanent table's rows are logged");
    assert_eq!(one(&mut s, "SELECT count(*) FROM w"), "20000");
    // A crash with no checkpoint since: recovery replays the permanent table only.
    db.crash();
    drop(s);
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(one(&mut s, "SELECT count(*) FROM p"), "20000");
    assert_eq!(err(&mut s, "SELECT * FROM w").code, "42P01");
}

#[test]
fn on_commit_and_foreign_keys() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TEMP TABLE par (id int PRIMARY KEY) ON COMMIT DELETE ROWS");
    // As PostgreSQL: a table keeping its rows may not reference one emptied at commit; the
    // check runs at every commit that used a temporary relation, this one's included.
    let e = err(&mut s, "CREATE TEMP TABLE kid (id int REFERENCES par)");
    assert_eq!((e.code, e.message.as_str()), ("0A000", "unsupported ON COMMIT and foreign key combination"));
    assert_eq!(err(&mut s, "SELECT * FROM kid").code, "42P01", "the commit failed and rolled back");
    ok(&mut s, "BEGIN");
    ok(&mut s, "CREATE TEMP TABLE kid (id int REFERENCES par)");
    ok(&mut s, "INSERT INTO par VALUES (1)");
    ok(&mut s, "INSERT INTO kid VALUES (1)");
    assert_eq!(err(&mut s, "COMMIT").code, "0A000");
    // ON COMMIT DROP of a referenced table is refused at the commit.
    ok(&mut s, "BEGIN");
    ok(&mut s, "CREATE TEMP TABLE gone (id int PRIMARY KEY) ON COMMIT DROP");
    ok(&mut s, "CREATE TEMP TABLE stays (id int REFERENCES gone)");
    assert_eq!(err(&mut s, "COMMIT").code, "0A000");
    assert_eq!(err(&mut s, "SELECT * FROM stays").code, "42P01");
    // DISCARD TEMP in a READ ONLY transaction: refused, as a drop needs a transaction id.
    ok(&mut s, "CREATE TEMP TABLE keep (a int)");
    ok(&mut s, "BEGIN READ ONLY");
    assert_eq!(err(&mut s, "DISCARD TEMP").code, "25006");
    ok(&mut s, "ROLLBACK");
    // Both emptied at commit: allowed.
    ok(&mut s, "CREATE TEMP TABLE par2 (id int PRIMARY KEY) ON COMMIT DELETE ROWS");
    ok(&mut s, "CREATE TEMP TABLE kid2 (id int REFERENCES par2) ON COMMIT DELETE ROWS");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO par2 VALUES (1)");
    ok(&mut s, "INSERT INTO kid2 VALUES (1)");
    ok(&mut s, "COMMIT");
    assert_eq!(one(&mut s, "SELECT count(*) FROM kid2"), "0");
    assert_eq!(one(&mut s, "SELECT count(*) FROM par2"), "0");
}

/// A temporary table's foreign keys are checked and their actions run in a database with no
/// other foreign key (the shared catalog, which says whether any exists, never holds a
/// temporary table), as PostgreSQL does.
#[test]
fn temporary_foreign_keys_hold_in_a_database_without_other_foreign_keys() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TEMP TABLE tpar (a int PRIMARY KEY)");
    ok(&mut s, "CREATE TEMP TABLE tchild (a int REFERENCES tpar)");
    ok(&mut s, "CREATE TEMP TABLE tcasc (a int REFERENCES tpar ON DELETE CASCADE)");
    ok(&mut s, "INSERT INTO tpar VALUES (1), (2), (3)");
    ok(&mut s, "INSERT INTO tchild VALUES (1)");
    ok(&mut s, "INSERT INTO tcasc VALUES (2), (3)");
    assert_eq!(err(&mut s, "INSERT INTO tchild VALUES (9)").code, "23503");
    assert_eq!(err(&mut s, "DELETE FROM tpar WHERE a = 1").code, "23503");
    ok(&mut s, "DELETE FROM tpar WHERE a = 2");
    assert_eq!(rows(&mut s, "SELECT a FROM tcasc"), ["3"]);
    assert_eq!(rows(&mut s, "SELECT a FROM tpar ORDER BY a"), ["1", "3"]);
}

/// In a READ ONLY transaction, rows of temporary tables may be locked (PostgreSQL checks
/// only the relations that are not temporary); a permanent table's may not.
#[test]
fn read_only_transactions_lock_rows_of_temporary_tables() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE p (a int)");
    ok(&mut s, "INSERT INTO p VALUES (1)");
    ok(&mut s, "CREATE TEMP TABLE tt (a int)");
    ok(&mut s, "INSERT INTO tt VALUES (1), (2)");
    ok(&mut s, "BEGIN READ ONLY");
    assert_eq!(rows(&mut s, "SELECT a FROM tt ORDER BY a FOR UPDATE"), ["1", "2"]);
    ok(&mut s, "INSERT INTO tt SELECT a + 10 FROM tt FOR SHARE");
    let e = err(&mut s, "SELECT a FROM p FOR UPDATE");
    assert_eq!((e.code, e.message.as_str()), ("25006", "cannot execute SELECT FOR UPDATE in a read-only transaction"));
    ok(&mut s, "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM tt"), ["2"]);
}

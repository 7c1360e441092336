//! Row statements: INSERT / UPDATE / DELETE / SELECT ... WHERE, their errors, READ COMMITTED
//! waits, and recovery of the single-row WAL records.

mod common;

use common::new_db;
use heapstore::Session;

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Option<String>>> {
    s.execute(sql).unwrap().pop().unwrap().rows
}

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql)[0][0].clone().unwrap_or_default()
}

#[test]
fn insert_update_delete_select() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int NOT NULL, name text, bal bigint)").unwrap();
    let r = s.execute("INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20), (3, NULL, 30)").unwrap();
    assert_eq!(r[0].tag, "INSERT 0 3");
    let r = s.execute("INSERT INTO t (name, id) VALUES ('d', '4')").unwrap();
    assert_eq!(r[0].tag, "INSERT 0 1");
    assert_eq!(rows(&mut s, "SELECT name FROM t WHERE id = 4"), vec![vec![Some("d".to_string())]]);
    assert_eq!(rows(&mut s, "SELECT bal FROM t WHERE id = 4"), vec![vec![None]]);
    assert_eq!(one(&mut s, "SELECT count(*) FROM t WHERE id BETWEEN 2 AND 3"), "2");
    assert_eq!(one(&mut s, "SELECT count(*) FROM t WHERE name IS NULL OR id IN (1, 2)"), "3");
    let r = s.execute("UPDATE t SET bal = bal + 5, name = 'x' WHERE id >= 2").unwrap();
    assert_eq!(r[0].tag, "UPDATE 3");
    assert_eq!(rows(&mut s, "SELECT id, name, bal FROM t WHERE id = 2"), vec![vec![Some("2".into()), Some("x".into()), Some("25".into())]]);
    assert_eq!(one(&mut s, "SELECT count(*) FROM t"), "4");
    let r = s.execute("DELETE FROM t WHERE name = 'x' AND bal > 30").unwrap();
    assert_eq!(r[0].tag, "DELETE 1");
    let r = s.execute("DELETE FROM t WHERE id = 99").unwrap();
    assert_eq!(r[0].tag, "DELETE 0");
    assert_eq!(one(&mut s, "SELECT count(*) FROM t"), "3");
    // Rolled back changes are invisible.
    s.execute("BEGIN; UPDATE t SET bal = 0; DELETE FROM t WHERE id = 1").unwrap();
    assert_eq!(one(&mut s, "SELECT count(*) FROM t WHERE bal = 0"), "2");
    s.execute("ROLLBACK").unwrap();
    assert_eq!(one(&mut s, "SELECT count(*) FROM t WHERE bal = 0"), "0");
    assert_eq!(one(&mut s, "SELECT count(*) FROM t"), "3");
}

#[test]
fn errors_are_postgres_shaped() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int NOT NULL, v int)").unwrap();
    let e = s.execute("INSERT INTO t VALUES (NULL, 1)").unwrap_err();
    assert_eq!(e.code, "23502");
    assert_eq!(e.message, "null value in column \"id\" of relation \"t\" violates not-null constraint");
    assert_eq!(e.detail.as_deref(), Some("Failing row contains (null, 1)."));
    let e = s.execute("SELECT x FROM t WHERE id = 1").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("42703", "column \"x\" does not exist"));
    let e = s.execute("SELECT * FROM t WHERE nope = 1").unwrap_err();
    assert_eq!(e.code, "42703");
    s.execute("INSERT INTO t VALUES (1, 2147483647)").unwrap();
    let e = s.execute("UPDATE t SET v = v + 1").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("22003", "integer out of range"));
    let e = s.execute("INSERT INTO t VALUES (3000000000, 1)").unwrap_err();
    assert_eq!(e.code, "22003");
    let e = s.execute("SELECT * FROM t WHERE id = 'abc'").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("22P02", "invalid input syntax for type integer: \"abc\""));
    assert_eq!(one(&mut s, "SELECT v FROM t WHERE id = 1"), "2147483647");
}

#[test]
fn prepared_statements_take_parameters() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE acc (aid int NOT NULL, abalance int)").unwrap();
    let ins = s.prepare("INSERT INTO acc VALUES ($1, $2)").unwrap();
    for i in 1..=50 {
        s.execute_prepared(&ins, &[Some(i.to_string()), Some("0".into())]).unwrap();
    }
    let upd = s.prepare("UPDATE acc SET abalance = abalance + $1 WHERE aid = $2").unwrap();
    assert_eq!(s.execute_prepared(&upd, &[Some("7".into()), Some("5".into())]).unwrap().tag, "UPDATE 1");
    let sel = s.prepare("SELECT abalance FROM acc WHERE aid = $1").unwrap();
    for _ in 0..3 {
        let r = s.execute_prepared(&sel, &[Some("5".into())]).unwrap();
        assert_eq!(r.rows, vec![vec![Some("7".to_string())]]);
    }
    assert!(s.execute_prepared(&sel, &[Some("1000".into())]).unwrap().rows.is_empty());
}

#[test]
fn concurrent_updates_wait_and_follow_the_chain() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE c (k int, n int)").unwrap();
    a.execute("INSERT INTO c VALUES (1, 0), (2, 0)").unwrap();
    a.execute("BEGIN; UPDATE c SET n = n + 1 WHERE k = 1").unwrap();
    let h = std::thread::spawn(move || {
        // Waits for a's transaction, then re-evaluates on the newest version: 1 + 10.
        let r = b.execute("UPDATE c SET n = n + 10 WHERE k = 1").unwrap();
        assert_eq!(r[0].tag, "UPDATE 1");
        // A delete that meets a row deleted by a committed transaction skips it.
        b
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    a.execute("COMMIT").unwrap();
    let mut b = h.join().unwrap();
    assert_eq!(one(&mut b, "SELECT n FROM c WHERE k = 1"), "11");
    // Many threads incrementing one row: no lost update.
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let mut s = db.session();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    s.execute("UPDATE c SET n = n + 1 WHERE k = 2").unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(one(&mut b, "SELECT n FROM c WHERE k = 2"), "100");
}

/// READ COMMITTED: an UPDATE that waited for a concurrent one re-evaluates its whole WHERE,
/// subqueries included, and its SET, on the newest version (PostgreSQL's EvalPlanQual).
#[test]
fn a_waiting_update_rechecks_its_subqueries_on_the_new_version() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE c2 (k int, n int)").unwrap();
    a.execute("CREATE TABLE w (k int)").unwrap();
    a.execute("INSERT INTO c2 VALUES (1, 0), (2, 0)").unwrap();
    a.execute("INSERT INTO w VALUES (1), (2)").unwrap();
    a.execute("BEGIN; UPDATE c2 SET n = 5 WHERE k = 1; UPDATE c2 SET n = 7 WHERE k = 2").unwrap();
    let h = std::thread::spawn(move || {
        // On the version it found (n = 0) the EXISTS holds (w has 1); on the committed one
        // (n = 5) it does not (w has no 6), so the row is left alone.
        let r = b
            .execute(
                "UPDATE c2 x SET n = x.n + 100 WHERE x.k IN (SELECT k FROM w) AND EXISTS (SELECT 1 FROM w WHERE w.k = x.n + 1) AND x.k = 1",
            )
            .unwrap();
        assert_eq!(r[0].tag, "UPDATE 0");
        // SET's subquery and column read the committed version: 2 + 7.
        let r = b.execute("UPDATE c2 x SET n = (SELECT count(*) FROM w) + x.n WHERE x.k = 2 RETURNING n").unwrap();
        assert_eq!(r[0].rows, vec![vec![Some("9".to_string())]]);
        b
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    a.execute("COMMIT").unwrap();
    let mut b = h.join().unwrap();
    assert_eq!(one(&mut b, "SELECT n FROM c2 WHERE k = 1"), "5");
    assert_eq!(one(&mut b, "SELECT n FROM c2 WHERE k = 2"), "9");
}

#[test]
fn a_waiting_update_from_rechecks_its_join_on_the_new_version() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE acct (id int PRIMARY KEY, bal int)").unwrap();
    a.execute("CREATE TABLE moves (id int, amt int)").unwrap();
    a.execute("INSERT INTO acct VALUES (1, 100), (2, 200), (3, 300), (4, 400)").unwrap();
    a.execute("INSERT INTO moves VALUES (1, 1), (2, 5), (3, 7), (3, 7), (4, 9)").unwrap();
    a.execute("BEGIN; UPDATE acct SET bal = bal + 1000 WHERE id = 1; UPDATE acct SET bal = 50 WHERE id = 2; DELETE FROM acct WHERE id = 4")
        .unwrap();
    let h = std::thread::spawn(move || {
        // Rows 1, 2 and 4 wait for the other transaction. Row 1's committed version
        // (1100) fails `bal < 500` and is left alone; row 2's (50) passes and is updated from
        // it, with the same moves row; row 4 is gone. Row 3 joins two moves rows and is
        // changed once.
        let r = b
            .execute("UPDATE acct SET bal = acct.bal + m.amt FROM moves m WHERE m.id = acct.id AND acct.bal < 500 RETURNING acct.id, acct.bal, m.amt")
            .unwrap();
        let mut rows = r[0].rows.clone();
        rows.sort();
        let s = |x: &str| Some(x.to_string());
        assert_eq!(rows, vec![vec![s("2"), s("55"), s("5")], vec![s("3"), s("307"), s("7")]]);
        assert_eq!(r[0].tag, "UPDATE 2");
        b
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    a.execute("COMMIT").unwrap();
    let mut b = h.join().unwrap();
    assert_eq!(one(&mut b, "SELECT string_agg(id || ':' || bal, ' ' ORDER BY id) FROM acct"), "1:1100 2:55 3:307");
    // DELETE ... USING waits the same way and rechecks on the new version.
    b.execute("BEGIN; UPDATE acct SET bal = 0 WHERE id = 2; UPDATE acct SET bal = 9999 WHERE id = 3").unwrap();
    let h = std::thread::spawn(move || {
        let r = a.execute("DELETE FROM acct USING moves m WHERE m.id = acct.id AND acct.bal > m.amt RETURNING acct.id, acct.bal").unwrap();
        let mut rows = r[0].rows.clone();
        rows.sort();
        let s = |x: &str| Some(x.to_string());
        // Row 2 (now 0) no longer passes; row 3 (now 9999) is deleted once, as it now is.
        assert_eq!(rows, vec![vec![s("1"), s("1100")], vec![s("3"), s("9999")]]);
        a
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    b.execute("COMMIT").unwrap();
    let mut a = h.join().unwrap();
    assert_eq!(one(&mut a, "SELECT string_agg(id || ':' || bal, ' ' ORDER BY id) FROM acct"), "2:0");
    // A target row joining several rows: when the one it was found with fails on the new
    // version, the others are tried in turn (PostgreSQL meets them next in its join).
    a.execute("INSERT INTO acct VALUES (3, 100)").unwrap();
    a.execute("BEGIN; UPDATE acct SET bal = 6 WHERE id = 3").unwrap();
    let h = std::thread::spawn(move || {
        let r = b
            .execute(
                "UPDATE acct SET bal = acct.bal + m.amt FROM (VALUES (3, 7), (3, 8), (3, 5), (3, 2)) AS m(id, amt) \
                 WHERE m.id = acct.id AND acct.bal > m.amt RETURNING acct.bal, m.amt",
            )
            .unwrap();
        let amt = r[0].rows[0][1].clone().unwrap();
        assert!(amt == "5" || amt == "2", "a joined row the new version passes with: {:?}", r[0].rows);
        assert_eq!(r[0].tag, "UPDATE 1");
        b
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    a.execute("COMMIT").unwrap();
    let mut b = h.join().unwrap();
    let bal = one(&mut b, "SELECT bal FROM acct WHERE id = 3");
    assert!(bal == "11" || bal == "8", "6 plus the amount of a joined row that passes: {bal}");
}

#[test]
fn deadlocks_are_detected() {
    let (_t, _dir, db) = new_db(&["deadlock_timeout=50ms"]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE d (k int, n int)").unwrap();
    a.execute("INSERT INTO d VALUES (1, 0), (2, 0)").unwrap();
    a.execute("BEGIN; UPDATE d SET n = 1 WHERE k = 1").unwrap();
    b.execute("BEGIN; UPDATE d SET n = 2 WHERE k = 2").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = b.execute("UPDATE d SET n = 2 WHERE k = 1");
        let _ = b.execute("ROLLBACK");
        tx.send(r).unwrap();
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    // Either may be the victim. If it is `a`, its error aborts its transaction there and then
    // (as PostgreSQL's does), so `b` goes on before `a` ends its failed block.
    let ra = a.execute("UPDATE d SET n = 1 WHERE k = 2");
    let rb = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the survivor was never woken");
    let codes: Vec<String> = [&ra, &rb].iter().filter_map(|r| r.as_ref().err().map(|e| e.code.to_string())).collect();
    assert_eq!(codes, vec!["40P01".to_string()], "exactly one deadlock victim: {ra:?} {rb:?}");
    let _ = a.execute("COMMIT");
}

/// An error inside a transaction block aborts the transaction at once, as in PostgreSQL: its
/// row and table locks are released and its changes are dead before the block is ended, and
/// the failed block refuses statements until ROLLBACK.
#[test]
fn a_failed_block_holds_no_locks() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE f (k int, n int)").unwrap();
    a.execute("INSERT INTO f VALUES (1, 0)").unwrap();
    a.execute("CREATE TABLE g (k int)").unwrap();
    a.execute("BEGIN").unwrap();
    a.execute("UPDATE f SET n = 1 WHERE k = 1").unwrap();
    a.execute("ALTER TABLE g ADD COLUMN m int").unwrap();
    assert_eq!(a.execute("SELECT 1/0").unwrap_err().code, "22012");
    // `a` is in a failed block; `b` neither waits for its row nor for its table.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let n = one(&mut b, "UPDATE f SET n = n + 10 WHERE k = 1 RETURNING n");
        // Reading g needs the lock `a`'s ALTER TABLE held.
        let cols = one(&mut b, "SELECT count(*) FROM g");
        tx.send((n, cols)).unwrap();
    });
    let got = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("blocked by a failed transaction block");
    assert_eq!(got, ("10".to_string(), "0".to_string()));
    let e = a.execute("SELECT 1").unwrap_err();
    assert_eq!(e.code, "25P02");
    // PostgreSQL's ABORT is ROLLBACK.
    assert_eq!(a.execute("ABORT").unwrap()[0].tag, "ROLLBACK");
    assert!(!a.in_transaction_block());
    assert_eq!(one(&mut a, "SELECT n FROM f"), "10");
}

#[test]
fn single_row_changes_survive_a_crash() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE r (k int, v text)").unwrap();
    for i in 0..200 {
        s.execute(&format!("INSERT INTO r VALUES ({i}, 'value {i}')")).unwrap();
    }
    s.execute("UPDATE r SET v = 'updated' WHERE k < 50").unwrap();
    s.execute("DELETE FROM r WHERE k >= 150").unwrap();
    s.execute("BEGIN; DELETE FROM r WHERE k < 10").unwrap();
    drop(s);
    db.crash();
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(one(&mut s, "SELECT count(*) FROM r"), "150");
    assert_eq!(one(&mut s, "SELECT count(*) FROM r WHERE v = 'updated'"), "50");
    assert_eq!(one(&mut s, "SELECT v FROM r WHERE k = 120"), "value 120");
    s.execute("UPDATE r SET v = 'again' WHERE k = 5").unwrap();
    assert_eq!(one(&mut s, "SELECT v FROM r WHERE k = 5"), "again");
}

fn check_indexes(s: &mut Session, table: &str) -> u64 {
    heapstore::sql::index::check_table(s, table).unwrap().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn primary_keys_and_indexes() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE p (id int PRIMARY KEY, name text, d date)").unwrap();
    s.execute("INSERT INTO p VALUES (1, 'a', '2024-01-01'), (2, 'b', '2024-01-02'), (5, 'e', '2024-01-05')").unwrap();
    let e = s.execute("INSERT INTO p VALUES (5, 'dup', NULL)").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("23505", "duplicate key value violates unique constraint \"p_pkey\""));
    assert_eq!(e.detail.as_deref(), Some("Key (id)=(5) already exists."));
    let e = s.execute("INSERT INTO p (name) VALUES ('x')").unwrap_err();
    assert_eq!(e.code, "23502");
    assert_eq!(one(&mut s, "SELECT name FROM p WHERE id = 5"), "e");
    assert_eq!(one(&mut s, "SELECT count(*) FROM p WHERE id >= 2 AND id < 5"), "1");
    assert_eq!(one(&mut s, "SELECT count(*) FROM p WHERE id > 1"), "2");
    // An update of the key moves the row; the old key is free again once deleted.
    s.execute("UPDATE p SET id = 6 WHERE id = 5").unwrap();
    s.execute("INSERT INTO p VALUES (5, 'again', NULL)").unwrap();
    assert_eq!(one(&mut s, "SELECT name FROM p WHERE id = 6"), "e");
    assert_eq!(one(&mut s, "SELECT name FROM p WHERE id = 5"), "again");
    s.execute("DELETE FROM p WHERE id = 5").unwrap();
    s.execute("INSERT INTO p VALUES (5, 'third', NULL)").unwrap();
    assert_eq!(check_indexes(&mut s, "p"), 4);
    // CREATE INDEX on a second column; a failing unique build; DROP INDEX.
    s.execute("CREATE INDEX ON p (d)").unwrap();
    assert_eq!(one(&mut s, "SELECT id FROM p WHERE d = '2024-01-02'"), "2");
    s.execute("INSERT INTO p VALUES (7, 'b', '2024-01-02')").unwrap();
    let e = s.execute("CREATE UNIQUE INDEX p_name ON p (name)").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("23505", "could not create unique index \"p_name\""));
    assert_eq!(e.detail.as_deref(), Some("Key (name)=(b) is duplicated."));
    s.execute("CREATE INDEX p_name ON p (name, id)").unwrap();
    assert_eq!(one(&mut s, "SELECT count(*) FROM p WHERE name = 'b'"), "2");
    assert_eq!(one(&mut s, "SELECT count(*) FROM p WHERE name = 'b' AND id > 2"), "1");
    assert_eq!(check_indexes(&mut s, "p"), 5);
    let e = s.execute("CREATE INDEX p_name ON p (id)").unwrap_err();
    assert_eq!(e.code, "42P07");
    s.execute("DROP INDEX p_name").unwrap();
    assert_eq!(s.execute("DROP INDEX p_name").unwrap_err().code, "42704");
    assert_eq!(s.execute("DROP INDEX p_pkey").unwrap_err().code, "2BP01");
    // Rolled-back CREATE INDEX leaves nothing.
    s.execute("BEGIN; CREATE INDEX q ON p (name); ROLLBACK").unwrap();
    s.execute("CREATE INDEX q ON p (name)").unwrap();
    // TRUNCATE empties the indexes too.
    s.execute("TRUNCATE p").unwrap();
    s.execute("INSERT INTO p VALUES (1, 'a', NULL)").unwrap();
    assert_eq!(one(&mut s, "SELECT name FROM p WHERE id = 1"), "a");
    assert_eq!(check_indexes(&mut s, "p"), 1);
}

#[test]
fn copy_maintains_indexes_and_fails_whole() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE c (k bigint, v text, PRIMARY KEY (k))").unwrap();
    let data: String = (0..3000).map(|i| format!("{i}\tv{i}\n")).collect();
    common::copy_in(&mut s, "COPY c FROM STDIN", data.as_bytes()).unwrap();
    assert_eq!(one(&mut s, "SELECT v FROM c WHERE k = 2999"), "v2999");
    let e = common::copy_in(&mut s, "COPY c FROM STDIN", b"5000\tx\n7\tdup\n").unwrap_err();
    assert_eq!(e.code, "23505");
    assert_eq!(one(&mut s, "SELECT count(*) FROM c"), "3000");
    assert_eq!(one(&mut s, "SELECT count(*) FROM c WHERE k = 5000"), "0");
    assert_eq!(check_indexes(&mut s, "c"), 3000);
}

#[test]
fn unique_inserts_wait_for_the_other_transaction() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE u (id int PRIMARY KEY)").unwrap();
    a.execute("BEGIN; INSERT INTO u VALUES (1)").unwrap();
    let h = std::thread::spawn(move || {
        let r = b.execute("INSERT INTO u VALUES (1)");
        (b, r)
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    a.execute("ROLLBACK").unwrap();
    let (mut b, r) = h.join().unwrap();
    assert_eq!(r.unwrap()[0].tag, "INSERT 0 1", "the other inserter aborted: no conflict");
    a.execute("BEGIN; DELETE FROM u WHERE id = 1").unwrap();
    let h = std::thread::spawn(move || {
        let r = b.execute("INSERT INTO u VALUES (1)");
        (b, r)
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    a.execute("ROLLBACK").unwrap();
    let (_b, r) = h.join().unwrap();
    assert_eq!(r.unwrap_err().code, "23505", "the deleter aborted: the row is live");
}

#[test]
fn indexes_survive_a_crash() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE k (id int PRIMARY KEY, v int)").unwrap();
    let data: String = (0..2000).map(|i| format!("{i}\t{i}\n")).collect();
    common::copy_in(&mut s, "COPY k FROM STDIN", data.as_bytes()).unwrap();
    s.execute("CREATE INDEX k_v ON k (v)").unwrap();
    for i in 2000..2300 {
        s.execute(&format!("INSERT INTO k VALUES ({i}, {i})")).unwrap();
    }
    s.execute("UPDATE k SET v = v + 1 WHERE id < 100").unwrap();
    s.execute("DELETE FROM k WHERE id >= 2200").unwrap();
    drop(s);
    db.crash();
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(check_indexes(&mut s, "k"), 2200);
    assert_eq!(one(&mut s, "SELECT v FROM k WHERE id = 50"), "51");
    assert_eq!(one(&mut s, "SELECT count(*) FROM k WHERE v BETWEEN 1 AND 100"), "101");
    s.execute("INSERT INTO k VALUES (2250, 0)").unwrap();
    assert_eq!(s.execute("INSERT INTO k VALUES (7, 0)").unwrap_err().code, "23505");
}

fn table_blocks(dir: &std::path::Path, s: &mut Session, table: &str) -> u64 {
    let _ = dir;
    let t = s.lookup_table(table).unwrap();
    s.shared().smgr.nblocks(t.relfile, heapstore::storage::ForkNumber::Main).unwrap() as u64
}

#[test]
fn vacuum_removes_dead_rows_and_space_is_reused() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE v (id int PRIMARY KEY, pad text)").unwrap();
    let data: String = (0..2000).map(|i| format!("{i}\t{}\n", "x".repeat(100))).collect();
    common::copy_in(&mut s, "COPY v FROM STDIN", data.as_bytes()).unwrap();
    let blocks = table_blocks(&dir, &mut s, "v");
    // An open snapshot (a reader's transaction) keeps what it can see.
    let mut reader = db.session();
    reader.execute("BEGIN").unwrap();
    assert_eq!(one(&mut reader, "SELECT count(*) FROM v"), "2000");
    s.execute("DELETE FROM v WHERE id < 1500").unwrap();
    let vacuum = |s: &mut Session| {
        s.execute("BEGIN").unwrap();
        let t = s.lookup_table("v").unwrap();
        let st = heapstore::sql::vacuum::vacuum_table(s, &t).unwrap();
        s.execute("COMMIT").unwrap();
        st
    };
    assert_eq!(vacuum(&mut s).tuples_removed, 0, "the reader's snapshot predates the delete");
    reader.execute("COMMIT").unwrap();
    assert_eq!(vacuum(&mut s).tuples_removed, 1500);
    assert_eq!(s.execute("VACUUM v").unwrap()[0].tag, "VACUUM");
    assert_eq!(check_indexes(&mut s, "v"), 500);
    // Freed space is reused: re-inserting what was deleted does not grow the table.
    for i in 0..1500 {
        s.execute(&format!("INSERT INTO v VALUES ({i}, '{}')", "y".repeat(100))).unwrap();
    }
    let now = table_blocks(&dir, &mut s, "v");
    assert!(now <= blocks + 1, "{now} > {blocks}");
    assert_eq!(one(&mut s, "SELECT count(*) FROM v"), "2000");
    assert_eq!(check_indexes(&mut s, "v"), 2000);
    assert_eq!(s.execute("BEGIN; VACUUM v").unwrap_err().code, "25001");
    s.execute("ROLLBACK").unwrap();
    // VACUUM's page images replay after a crash.
    s.execute("DELETE FROM v WHERE id >= 1000").unwrap();
    s.execute("VACUUM").unwrap();
    drop(s);
    drop(reader);
    db.crash();
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(check_indexes(&mut s, "v"), 1000);
    assert_eq!(one(&mut s, "SELECT pad FROM v WHERE id = 999").len(), 100);
}

#[test]
fn readers_never_miss_a_committed_key_while_the_index_splits() {
    use std::sync::atomic::{AtomicI64, Ordering};
    let (_t, _dir, db) = new_db(&["shared_buffers=2MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE g (k int PRIMARY KEY, pad text)").unwrap();
    let committed = AtomicI64::new(-1);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        for r in 0..2u64 {
            let (db, committed, done) = (&db, &committed, &done);
            sc.spawn(move || {
                let mut s = db.session();
                let p = s.prepare("SELECT k FROM g WHERE k = $1").unwrap();
                let mut rng = 0x9E37_79B9u64 + r;
                let mut checked = 0u64;
                while !done.load(Ordering::Acquire) || checked < 100 {
                    let m = committed.load(Ordering::Acquire);
                    if m < 0 {
                        std::thread::yield_now();
                        continue;
                    }
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    // Keys are inserted in a scattered order: k -> k * 7919 % 4001.
                    let i = (rng % (m as u64 + 1)) as i64;
                    let k = i * 7919 % 4001;
                    let got = s.execute_prepared(&p, &[Some(k.to_string())]).unwrap();
                    assert_eq!(got.rows.len(), 1, "committed key {k} (insert #{i}) not found");
                    checked += 1;
                }
            });
        }
        let pad = "p".repeat(200);
        for i in 0..3000i64 {
            let k = i * 7919 % 4001;
            s.execute(&format!("INSERT INTO g VALUES ({k}, '{pad}')")).unwrap();
            committed.store(i, Ordering::Release);
        }
        done.store(true, Ordering::Release);
    });
    assert_eq!(check_indexes(&mut s, "g"), 3000);
}

#[test]
fn unlogged_table_and_its_index_are_reset_after_a_crash() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE UNLOGGED TABLE ul (id int PRIMARY KEY, v text)").unwrap();
    for i in 0..300 {
        s.execute(&format!("INSERT INTO ul VALUES ({i}, 'x')")).unwrap();
    }
    drop(s);
    db.crash();
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(one(&mut s, "SELECT count(*) FROM ul WHERE id = 5"), "0");
    s.execute("INSERT INTO ul VALUES (5, 'again')").unwrap();
    assert_eq!(one(&mut s, "SELECT v FROM ul WHERE id = 5"), "again");
    assert_eq!(check_indexes(&mut s, "ul"), 1);
}

#[test]
fn explain_names_the_index_it_reads() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE e (id int PRIMARY KEY, v text)").unwrap();
    let plan = |s: &mut Session, sql: &str| rows(s, sql).into_iter().map(|r| r[0].clone().unwrap()).collect::<Vec<_>>();
    assert_eq!(plan(&mut s, "EXPLAIN SELECT v FROM e WHERE id = 3")[0], "Index Scan using e_pkey on e");
    assert_eq!(plan(&mut s, "EXPLAIN SELECT v FROM e WHERE id > 3 AND id < 9")[0], "Index Scan using e_pkey on e");
    assert_eq!(plan(&mut s, "EXPLAIN SELECT v FROM e WHERE v = 'x'")[0], "Seq Scan on e");
}

#[test]
fn explain_of_update_and_delete_shows_how_rows_are_found_and_changes_nothing() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE e (id int PRIMARY KEY, v text)").unwrap();
    s.execute("CREATE TABLE f (id int, w text)").unwrap();
    s.execute("INSERT INTO e VALUES (1, 'a'), (3, 'c')").unwrap();
    s.execute("INSERT INTO f VALUES (1, 'x'), (3, 'y')").unwrap();
    let plan = |s: &mut Session, sql: &str| rows(s, sql).into_iter().map(|r| r[0].clone().unwrap()).collect::<Vec<_>>();
    let p = plan(&mut s, "EXPLAIN UPDATE e SET v = 'z' WHERE id = 3");
    assert_eq!(p[..2], ["Update on e".to_string(), "  ->  Index Scan using e_pkey on e".to_string()], "{p:?}");
    let p = plan(&mut s, "EXPLAIN UPDATE e AS x SET v = f.w FROM f WHERE f.id = x.id");
    assert_eq!(p[0], "Update on e x");
    assert!(p[1].contains("Join") || p[1].contains("Nested Loop"), "{p:?}");
    let p = plan(&mut s, "EXPLAIN DELETE FROM e USING f WHERE f.id = e.id AND f.w = 'y'");
    assert_eq!(p[0], "Delete on e");
    // The statement's binding errors, and nothing changed.
    assert_eq!(s.execute("EXPLAIN UPDATE e SET nope = 1").unwrap_err().code, "42703");
    assert_eq!(s.execute("EXPLAIN (ANALYZE) DELETE FROM e").unwrap_err().code, "0A000");
    assert_eq!(one(&mut s, "SELECT string_agg(id || v, ',' ORDER BY id) FROM e"), "1a,3c");
}

#[test]
fn vacuum_verbose_reports_counts() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE w (id int PRIMARY KEY)").unwrap();
    s.execute("INSERT INTO w VALUES (1), (2), (3)").unwrap();
    s.execute("DELETE FROM w WHERE id < 3").unwrap();
    let r = s.execute("VACUUM VERBOSE").unwrap().pop().unwrap();
    assert_eq!(r.tag, "VACUUM");
    assert_eq!(r.notices[0], "INFO:  vacuuming \"public.w\"");
    assert!(r.notices[1].ends_with("tuples: 2 removed, 1 remain"), "{}", r.notices[1]);
}

/// Indexes with DESC / NULLS FIRST columns: kept by INSERT, COPY, UPDATE and DELETE, read in
/// both directions, and recovered (their column orders are in the logged catalog).
#[test]
fn ordered_index_columns_survive_a_crash() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE o (id int PRIMARY KEY, v int, t text)").unwrap();
    s.execute("CREATE UNIQUE INDEX o_v ON o (v DESC NULLS LAST, t NULLS FIRST)").unwrap();
    let data: String =
        (0..1500).map(|i| if i % 100 == 0 { format!("{i}\t\\N\t\\N\n") } else { format!("{i}\t{}\tx{}\n", i % 700, i % 3) }).collect();
    common::copy_in(&mut s, "COPY o FROM STDIN", data.as_bytes()).unwrap();
    for i in 1500..1600 {
        s.execute(&format!("INSERT INTO o VALUES ({i}, {}, NULL)", 800 + i)).unwrap();
    }
    s.execute("UPDATE o SET v = v + 10000 WHERE id % 250 = 1").unwrap();
    s.execute("DELETE FROM o WHERE id % 300 = 2").unwrap();
    let before = rows(&mut s, "SELECT v, t FROM o ORDER BY v DESC NULLS LAST, t NULLS FIRST LIMIT 30");
    drop(s);
    db.crash();
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(check_indexes(&mut s, "o"), 1594);
    // The plans under test, whatever the costs say.
    s.execute("SET enable_seqscan = off").unwrap();
    let plan = rows(&mut s, "EXPLAIN (COSTS OFF) SELECT v, t FROM o ORDER BY v DESC NULLS LAST, t NULLS FIRST LIMIT 30");
    assert!(
        plan.iter().any(|l| l[0].as_deref().is_some_and(|x| x.contains("Index") && x.contains("o_v") && !x.contains("Backward"))),
        "{plan:?}"
    );
    assert_eq!(rows(&mut s, "SELECT v, t FROM o ORDER BY v DESC NULLS LAST, t NULLS FIRST LIMIT 30"), before);
    let back = rows(&mut s, "SELECT v, t FROM o ORDER BY v NULLS FIRST, t DESC NULLS LAST LIMIT 5");
    let plan = rows(&mut s, "EXPLAIN (COSTS OFF) SELECT v, t FROM o ORDER BY v NULLS FIRST, t DESC NULLS LAST LIMIT 5");
    assert!(plan.iter().any(|l| l[0].as_deref().is_some_and(|x| x.contains("Backward using o_v"))), "{plan:?}");
    assert_eq!(back[0], vec![None, None], "NULLs first read backward");
    assert_eq!(one(&mut s, "SELECT count(*) FROM o WHERE v > 690 AND v <= 700"), "18");
    let e = s.execute("INSERT INTO o VALUES (5000, 3, 'x0')").unwrap_err();
    assert_eq!((e.code, e.detail.as_deref()), ("23505", Some("Key (v, t)=(3, x0) already exists.")));
    assert_eq!(
        one(&mut s, "SELECT pg_get_indexdef('o_v'::regclass)"),
        "CREATE UNIQUE INDEX o_v ON public.o USING btree (v DESC NULLS LAST, t NULLS FIRST)"
    );
}

//! `SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE [NOWAIT | SKIP LOCKED]`, as
//! PostgreSQL's: the rows a query returns are locked until its transaction ends; row changes
//! and other lockers wait for a conflicting lock; a locker that waited for a row's update
//! sees the newest version (READ COMMITTED) or fails (REPEATABLE READ).

mod common;
use common::*;
use heapstore::Session;
use std::sync::mpsc;
use std::time::Duration;

fn jobs(s: &mut Session) {
    s.execute("CREATE TABLE jobs (id int PRIMARY KEY, status text, n int)").unwrap();
    s.execute("INSERT INTO jobs SELECT g, 'new', 0 FROM generate_series(1, 5) g").unwrap();
}

/// With `lock_timeout` set, a statement that has to wait fails with 55P03: "it waited",
/// without any timing in the test.
fn waits(s: &mut Session, sql: &str) -> bool {
    match s.execute(sql) {
        Ok(_) => false,
        Err(e) if e.code == "55P03" => {
            s.execute("ROLLBACK").unwrap();
            true
        }
        Err(e) => panic!("{sql}: {e}"),
    }
}

#[test]
fn skip_locked_hands_each_worker_its_own_row_and_nowait_refuses() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    jobs(&mut a);
    let q = "SELECT id FROM jobs WHERE status = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";
    a.execute("BEGIN").unwrap();
    assert_eq!(rows(&mut a, q), ["1"]);
    b.execute("BEGIN").unwrap();
    assert_eq!(rows(&mut b, q), ["2"], "the locked row is skipped and does not count toward the LIMIT");
    let e = err(&mut b, "SELECT * FROM jobs WHERE id = 1 FOR UPDATE NOWAIT");
    assert_eq!((e.code, e.message.as_str()), ("55P03", "could not obtain lock on row in relation \"jobs\""));
    b.execute("ROLLBACK").unwrap();
    // The queue's usual statement: a subquery picks and locks, the UPDATE takes it.
    b.execute("BEGIN").unwrap();
    let took = rows(
        &mut b,
        "UPDATE jobs SET status = 'running' WHERE id = (SELECT id FROM jobs WHERE status = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id",
    );
    assert_eq!(took, ["2"]);
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id <= 3 FOR UPDATE SKIP LOCKED"), ["2", "3"], "its own locks are no obstacle");
    a.execute("COMMIT").unwrap();
    // Released at commit.
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT"), ["1"]);
    b.execute("COMMIT").unwrap();
    // A plain SELECT never waits for row locks.
    a.execute("BEGIN").unwrap();
    a.execute("SELECT * FROM jobs FOR UPDATE").unwrap();
    assert_eq!(rows(&mut b, "SELECT count(*) FROM jobs"), ["5"]);
    a.execute("ROLLBACK").unwrap();
    assert_eq!(rows(&mut b, "SELECT id FROM jobs FOR UPDATE NOWAIT").len(), 5, "released at rollback");
}

#[test]
fn lock_strengths_conflict_as_in_postgres() {
    let (_t, _dir, db) = new_db(&["lock_timeout=300ms"]);
    let mut a = db.session();
    let mut b = db.session();
    jobs(&mut a);
    // FOR SHARE: other sharers go on; updaters and FOR UPDATE wait.
    a.execute("BEGIN; SELECT * FROM jobs WHERE id = 1 FOR SHARE").unwrap();
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR SHARE NOWAIT"), ["1"]);
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR KEY SHARE NOWAIT"), ["1"]);
    assert_eq!(err(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR NO KEY UPDATE NOWAIT").code, "55P03");
    assert!(waits(&mut b, "UPDATE jobs SET n = 1 WHERE id = 1"), "an UPDATE waits for FOR SHARE");
    assert!(waits(&mut b, "DELETE FROM jobs WHERE id = 1"), "a DELETE waits for FOR SHARE");
    assert!(!waits(&mut b, "UPDATE jobs SET n = 1 WHERE id = 2"), "another row is free");
    a.execute("COMMIT").unwrap();
    // FOR KEY SHARE: an UPDATE that leaves the key alone goes on; one that changes it, and a
    // DELETE, wait.
    a.execute("BEGIN; SELECT * FROM jobs WHERE id = 1 FOR KEY SHARE").unwrap();
    assert!(!waits(&mut b, "UPDATE jobs SET n = n + 1, status = 'x' WHERE id = 1"), "a non-key UPDATE does not wait for FOR KEY SHARE");
    // The lock stayed on the new version that UPDATE made.
    assert!(waits(&mut b, "UPDATE jobs SET id = 10 WHERE id = 1"), "a key UPDATE waits for FOR KEY SHARE");
    assert!(waits(&mut b, "DELETE FROM jobs WHERE id = 1"));
    assert_eq!(err(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT").code, "55P03");
    a.execute("COMMIT").unwrap();
    // FOR NO KEY UPDATE: FOR KEY SHARE goes on, FOR SHARE waits.
    a.execute("BEGIN; SELECT * FROM jobs WHERE id = 2 FOR NO KEY UPDATE").unwrap();
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id = 2 FOR KEY SHARE NOWAIT"), ["2"]);
    assert_eq!(err(&mut b, "SELECT id FROM jobs WHERE id = 2 FOR SHARE NOWAIT").code, "55P03");
    assert!(waits(&mut b, "SELECT id FROM jobs WHERE id = 2 FOR SHARE"), "without NOWAIT it waits");
    a.execute("COMMIT").unwrap();
    // A row another transaction is updating: the locker waits, NOWAIT refuses, SKIP LOCKED skips.
    a.execute("BEGIN; UPDATE jobs SET n = 5 WHERE id = 3").unwrap();
    assert_eq!(err(&mut b, "SELECT id FROM jobs WHERE id = 3 FOR KEY SHARE NOWAIT").code, "55P03");
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id IN (3, 4) ORDER BY id FOR UPDATE SKIP LOCKED"), ["4"]);
    assert!(waits(&mut b, "SELECT id FROM jobs WHERE id = 3 FOR SHARE"));
    a.execute("ROLLBACK").unwrap();
    // An uncommitted lock of one's own is stronger than any other's need.
    a.execute("BEGIN; SELECT * FROM jobs WHERE id = 4 FOR KEY SHARE; SELECT * FROM jobs WHERE id = 4 FOR UPDATE").unwrap();
    assert_eq!(err(&mut b, "SELECT id FROM jobs WHERE id = 4 FOR KEY SHARE NOWAIT").code, "55P03", "upgraded to FOR UPDATE");
    a.execute("COMMIT").unwrap();
}

#[test]
fn a_locker_that_waited_sees_the_newest_version() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    jobs(&mut a);
    for (change, query, expect) in [
        // The row still matches: its new version is returned and locked.
        ("UPDATE jobs SET n = 7 WHERE id = 1", "SELECT id, n FROM jobs WHERE id = 1 FOR UPDATE", vec!["1|7"]),
        // It no longer matches: left out, and the LIMIT takes the next row.
        (
            "UPDATE jobs SET status = 'done' WHERE id = 1",
            "SELECT id, status FROM jobs WHERE status = 'new' ORDER BY id LIMIT 1 FOR UPDATE",
            vec!["2|new"],
        ),
        // Deleted: left out.
        ("DELETE FROM jobs WHERE id = 2", "SELECT id FROM jobs WHERE id <= 3 ORDER BY id FOR SHARE", vec!["1", "3"]),
        // Projections are computed from the new version.
        (
            "UPDATE jobs SET n = n + 40 WHERE id = 3",
            "SELECT id, n * 2 AS d, upper(status) FROM jobs WHERE id = 3 FOR NO KEY UPDATE",
            vec!["3|80|NEW"],
        ),
    ] {
        let (got, held) = locker_after_change(&db, &mut a, change, "", query, |db, got| {
            // The lock is held: another locker cannot take it.
            let id = got[0].split('|').next().unwrap().to_string();
            db.session().execute(&format!("SELECT 1 FROM jobs WHERE id = {id} FOR UPDATE NOWAIT")).is_err()
        });
        assert_eq!(got, expect, "{change} / {query}");
        assert!(held, "{query}: the newest version is locked");
    }
}

/// Runs `change` in an open transaction of `a`, then `query` (after `prep`) in a transaction
/// of another session, which must wait for `a`; commits `a` and returns the query's rows and
/// what `probe` found while the querying transaction was still open.
fn locker_after_change(
    db: &heapstore::Database,
    a: &mut Session,
    change: &str,
    prep: &str,
    query: &str,
    probe: impl Fn(&heapstore::Database, &[String]) -> bool + Send,
) -> (Vec<String>, bool) {
    a.execute("BEGIN").unwrap();
    a.execute(change).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|sc| {
        sc.spawn(move || {
            let mut b = db.session();
            if !prep.is_empty() {
                b.execute(prep).unwrap();
            }
            b.execute("BEGIN").unwrap();
            let got = rows(&mut b, query);
            let found = probe(db, &got);
            b.execute("COMMIT").unwrap();
            tx.send((got, found)).unwrap();
        });
        std::thread::sleep(Duration::from_millis(200));
        assert!(rx.try_recv().is_err(), "{query}: did not wait for the change");
        a.execute("COMMIT").unwrap();
        rx.recv_timeout(Duration::from_secs(60)).expect("the locker was never woken")
    })
}

#[test]
fn repeatable_read_fails_on_a_row_changed_since_its_snapshot() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    jobs(&mut a);
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SELECT count(*) FROM jobs"), ["5"]);
    b.execute("UPDATE jobs SET n = 1 WHERE id = 1").unwrap();
    b.execute("DELETE FROM jobs WHERE id = 2").unwrap();
    let e = err(&mut a, "SELECT * FROM jobs WHERE id = 1 FOR UPDATE");
    assert_eq!((e.code, e.message.as_str()), ("40001", "could not serialize access due to concurrent update"));
    a.execute("ROLLBACK").unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SELECT count(*) FROM jobs"), ["4"]);
    b.execute("DELETE FROM jobs WHERE id = 3").unwrap();
    // PostgreSQL's words for a delete too.
    assert_eq!(err(&mut a, "SELECT * FROM jobs WHERE id = 3 FOR SHARE").message, "could not serialize access due to concurrent update");
    a.execute("ROLLBACK").unwrap();
    // A lock that only locked does not fail REPEATABLE READ.
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SELECT count(*) FROM jobs"), ["3"]);
    b.execute("BEGIN; SELECT * FROM jobs WHERE id = 4 FOR UPDATE; COMMIT").unwrap();
    assert_eq!(rows(&mut a, "SELECT id FROM jobs WHERE id = 4 FOR UPDATE"), ["4"]);
    a.execute("COMMIT").unwrap();
}

#[test]
fn savepoints_errors_and_deadlocks_release_row_locks() {
    let (_t, _dir, db) = new_db(&["deadlock_timeout=50ms"]);
    let mut a = db.session();
    let mut b = db.session();
    jobs(&mut a);
    a.execute("BEGIN; SELECT * FROM jobs WHERE id = 1 FOR UPDATE; SAVEPOINT s; SELECT * FROM jobs WHERE id = 2 FOR UPDATE").unwrap();
    a.execute("ROLLBACK TO SAVEPOINT s").unwrap();
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id = 2 FOR UPDATE NOWAIT"), ["2"], "released by ROLLBACK TO");
    assert_eq!(err(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT").code, "55P03", "taken before the savepoint: kept");
    // An error with a savepoint open keeps the transaction (and its locks) until ROLLBACK.
    assert_eq!(err(&mut a, "SELECT 1/0").code, "22012");
    a.execute("RELEASE SAVEPOINT s").unwrap_err();
    a.execute("ROLLBACK").unwrap();
    // With none, an error aborts the transaction there and then, and its row locks go with it.
    a.execute("BEGIN; SELECT * FROM jobs WHERE id = 1 FOR UPDATE").unwrap();
    let _ = a.execute("SELECT 1/0");
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT"), ["1"], "released by the failed block");
    a.execute("ROLLBACK").unwrap();
    // Two lockers in opposite orders: one is the deadlock victim.
    a.execute("BEGIN; SELECT * FROM jobs WHERE id = 1 FOR UPDATE").unwrap();
    b.execute("BEGIN; SELECT * FROM jobs WHERE id = 2 FOR UPDATE").unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = b.execute("SELECT * FROM jobs WHERE id = 1 FOR UPDATE");
        let _ = b.execute("ROLLBACK");
        tx.send(r).unwrap();
    });
    std::thread::sleep(Duration::from_millis(100));
    let ra = a.execute("UPDATE jobs SET n = 1 WHERE id = 2");
    let rb = rx.recv_timeout(Duration::from_secs(60)).expect("the survivor was never woken");
    let codes: Vec<String> =
        [&ra.map(|_| ()), &rb.map(|_| ())].iter().filter_map(|r| r.as_ref().err().map(|e| e.code.to_string())).collect();
    assert_eq!(codes, vec!["40P01".to_string()]);
    let _ = a.execute("ROLLBACK");
}

#[test]
fn locking_clauses_are_checked_as_postgres_checks_them() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    jobs(&mut a);
    a.execute("CREATE VIEW newjobs AS SELECT id, n FROM jobs WHERE status = 'new'").unwrap();
    for (sql, code, msg) in [
        ("SELECT count(*) FROM jobs FOR UPDATE", "0A000", "FOR UPDATE is not allowed with aggregate functions"),
        ("SELECT status FROM jobs GROUP BY status FOR SHARE", "0A000", "FOR SHARE is not allowed with GROUP BY clause"),
        ("SELECT DISTINCT status FROM jobs FOR KEY SHARE", "0A000", "FOR KEY SHARE is not allowed with DISTINCT clause"),
        ("SELECT id, row_number() OVER () FROM jobs FOR NO KEY UPDATE", "0A000", "FOR NO KEY UPDATE is not allowed with window functions"),
        (
            "SELECT generate_series(1, 2) FROM jobs FOR UPDATE",
            "0A000",
            "FOR UPDATE is not allowed with set-returning functions in the target list",
        ),
        ("SELECT id FROM jobs UNION SELECT id FROM jobs FOR UPDATE", "0A000", "FOR UPDATE is not allowed with UNION/INTERSECT/EXCEPT"),
        ("SELECT * FROM jobs FOR UPDATE OF x", "42P01", "relation \"x\" in FOR UPDATE clause not found in FROM clause"),
        ("SELECT * FROM jobs j FOR UPDATE OF j, jobs", "42P01", "relation \"jobs\" in FOR UPDATE clause not found in FROM clause"),
        ("SELECT * FROM jobs FOR SHARE OF public.jobs", "42601", "FOR SHARE must specify unqualified relation names"),
        ("WITH c AS (SELECT 1) SELECT * FROM c FOR UPDATE OF c", "0A000", "FOR UPDATE cannot be applied to a WITH query"),
        ("BEGIN READ ONLY; SELECT * FROM jobs FOR SHARE", "25006", "cannot execute SELECT FOR SHARE in a read-only transaction"),
    ] {
        let e = err(&mut a, sql);
        assert_eq!((e.code, e.message.as_str()), (code, msg), "{sql}");
        let _ = a.execute("ROLLBACK");
    }
    // What heapstore does not lock is refused, never answered without the locks.
    for sql in [
        "SELECT * FROM (SELECT * FROM jobs FOR UPDATE) s",
        "SELECT * FROM jobs j JOIN (SELECT * FROM jobs) s USING (id) FOR UPDATE",
        "SELECT * FROM jobs j, newjobs v WHERE j.id = v.id FOR UPDATE OF j",
        "SELECT * FROM jobs j, generate_series(1, 2) g FOR SHARE",
    ] {
        assert_eq!(err(&mut a, sql).code, "0A000", "{sql}");
    }
    let e = err(&mut a, "SELECT * FROM jobs a LEFT JOIN jobs b USING (id) FOR UPDATE");
    assert_eq!((e.code, e.message.as_str()), ("0A000", "FOR UPDATE cannot be applied to the nullable side of an outer join"));
    let e = err(&mut a, "SELECT * FROM jobs x JOIN jobs y USING (id) FOR UPDATE OF jobs");
    assert_eq!(e.code, "42P01", "{e}");
    // Nothing to lock: answered, as in PostgreSQL.
    assert_eq!(rows(&mut a, "SELECT 1 FOR UPDATE"), ["1"]);
    assert_eq!(rows(&mut a, "WITH c AS (SELECT 2) SELECT * FROM c FOR UPDATE"), ["2"]);
    // Through a view, and with its spellings: OF a list, a qualified name, several clauses.
    let mut b = db.session();
    a.execute("BEGIN").unwrap();
    assert_eq!(rows(&mut a, "SELECT id FROM newjobs WHERE id = 1 FOR UPDATE"), ["1"]);
    assert_eq!(err(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR KEY SHARE NOWAIT").code, "55P03");
    assert_eq!(rows(&mut a, "SELECT id FROM jobs j WHERE id = 2 FOR KEY SHARE OF j FOR NO KEY UPDATE OF j"), ["2"]);
    assert_eq!(err(&mut b, "SELECT id FROM jobs WHERE id = 2 FOR SHARE NOWAIT").code, "55P03", "the strongest clause wins");
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE id = 2 FOR KEY SHARE NOWAIT"), ["2"]);
    assert_eq!(rows(&mut a, "SELECT id FROM jobs j WHERE id = 3 FOR SHARE OF j, j SKIP LOCKED"), ["3"]);
    a.execute("COMMIT").unwrap();
    let plan = rows(&mut a, "EXPLAIN (COSTS OFF) SELECT * FROM jobs WHERE id > 2 ORDER BY n LIMIT 1 FOR UPDATE");
    assert_eq!(plan[0], "Limit");
    assert_eq!(plan[1].trim(), "->  LockRows");
}

/// The race row locks close: workers taking jobs with SKIP LOCKED each get different ones,
/// and read-modify-write cycles under FOR UPDATE lose no increment.
#[test]
fn workers_take_each_job_once_and_lose_no_increment() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    a.execute("CREATE TABLE q (id int PRIMARY KEY, status text, worker int)").unwrap();
    a.execute("INSERT INTO q SELECT g, 'new', NULL FROM generate_series(1, 200) g").unwrap();
    a.execute("CREATE TABLE counter (id int PRIMARY KEY, n int)").unwrap();
    a.execute("INSERT INTO counter VALUES (1, 0)").unwrap();
    let taken: Vec<Vec<u32>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|w| {
                let db = &db;
                sc.spawn(move || {
                    let mut s = db.session();
                    let mut mine = Vec::new();
                    loop {
                        s.execute("BEGIN").unwrap();
                        let got = rows(
                            &mut s,
                            &format!(
                                "UPDATE q SET status = 'done', worker = {w} WHERE id = \
                                 (SELECT id FROM q WHERE status = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id"
                            ),
                        );
                        // A read-modify-write of one counter row: FOR UPDATE serializes them.
                        let n: i64 = rows(&mut s, "SELECT n FROM counter WHERE id = 1 FOR UPDATE")[0].parse().unwrap();
                        s.execute(&format!("UPDATE counter SET n = {} WHERE id = 1", n + 1)).unwrap();
                        s.execute("COMMIT").unwrap();
                        match got.first() {
                            Some(id) => mine.push(id.parse().unwrap()),
                            None => break,
                        }
                    }
                    mine
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<u32> = taken.iter().flatten().copied().collect();
    let rounds = all.len() + taken.len();
    all.sort_unstable();
    assert_eq!(all, (1..=200).collect::<Vec<u32>>(), "every job taken exactly once");
    assert_eq!(rows(&mut a, "SELECT count(*) FROM q WHERE status = 'done'"), ["200"]);
    assert_eq!(rows(&mut a, "SELECT n FROM counter"), [rounds.to_string()], "no increment lost");
}

#[test]
fn a_locking_with_query_runs_once() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    jobs(&mut a);
    let e = err(
        &mut a,
        "WITH c AS (SELECT id FROM jobs ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) UPDATE jobs SET n = 1 FROM c, c AS d WHERE jobs.id = c.id",
    );
    assert_eq!(e.code, "0A000");
    let got = rows(
        &mut a,
        "WITH c AS (SELECT id FROM jobs WHERE status = 'new' ORDER BY id LIMIT 2 FOR UPDATE SKIP LOCKED) \
         UPDATE jobs SET status = 'run' FROM c WHERE jobs.id = c.id RETURNING jobs.id",
    );
    assert_eq!(got, ["1", "2"]);
}

/// Row locks live in memory: past `heapstore.max_row_locks` a locking query fails with 53200
/// and a hint, instead of growing until the server runs out of memory; the locks it took are
/// released with its transaction.
#[test]
fn too_many_row_locks_is_an_error_not_a_crash() {
    let (_t, _dir, db) = new_db(&["heapstore.max_row_locks=50"]);
    let mut a = db.session();
    a.execute("CREATE TABLE many (id int)").unwrap();
    a.execute("INSERT INTO many SELECT g FROM generate_series(1, 80) g").unwrap();
    a.execute("BEGIN").unwrap();
    assert_eq!(rows(&mut a, "SELECT id FROM many WHERE id <= 50 FOR UPDATE").len(), 50);
    let e = err(&mut a, "SELECT id FROM many WHERE id > 50 FOR SHARE");
    assert_eq!((e.code, e.message.as_str()), ("53200", "out of shared memory"));
    assert!(e.hint.as_deref().is_some_and(|h| h.contains("heapstore.max_row_locks")), "{e:?}");
    a.execute("ROLLBACK").unwrap();
    assert_eq!(rows(&mut a, "SELECT id FROM many WHERE id > 50 FOR SHARE").len(), 30, "released with the transaction");
}

/// A locking clause over a join locks the rows of each table it names (all, without OF) that
/// the query returns; a locker that waited re-checks the whole row with the newest version of
/// the row it locked and the other tables' rows as they were (PostgreSQL's EvalPlanQual): the
/// join condition, the WHERE clause, an outer join's NULL-extension and the select list.
#[test]
fn row_locks_over_joins_recheck_the_joined_row() {
    let (_t, _dir, db) = new_db(&["lock_timeout=300ms"]);
    let mut a = db.session();
    let mut b = db.session();
    let setup = "DROP TABLE IF EXISTS d; DROP TABLE IF EXISTS m; \
        CREATE TABLE m (id int PRIMARY KEY, v int); CREATE TABLE d (id int PRIMARY KEY, mid int, w text); \
        INSERT INTO m VALUES (1, 10), (2, 20), (3, 30); INSERT INTO d VALUES (1, 1, 'x'), (2, 2, 'y'), (3, 1, 'z')";
    a.execute(setup).unwrap();
    // OF names what is locked; the other table's rows stay free.
    a.execute("BEGIN").unwrap();
    assert_eq!(rows(&mut a, "SELECT m.id, d.w FROM m JOIN d ON d.mid = m.id WHERE d.id = 2 FOR UPDATE OF m"), ["2|y"]);
    assert_eq!(err(&mut b, "SELECT 1 FROM m WHERE id = 2 FOR KEY SHARE NOWAIT").code, "55P03");
    assert_eq!(rows(&mut b, "SELECT id FROM d WHERE id = 2 FOR UPDATE NOWAIT"), ["2"]);
    assert!(waits(&mut b, "UPDATE m SET v = 0 WHERE id = 2"));
    // Without OF every table is locked; comma joins too.
    assert_eq!(rows(&mut a, "SELECT m.id, d.id FROM m, d WHERE d.mid = m.id AND d.id = 3 FOR SHARE"), ["1|3"]);
    assert!(waits(&mut b, "UPDATE d SET w = 'q' WHERE id = 3"));
    assert!(!waits(&mut b, "UPDATE d SET w = 'q' WHERE id = 1"), "only the rows returned are locked");
    a.execute("ROLLBACK").unwrap();
    // SKIP LOCKED over a join: a queue of jobs with their details.
    a.execute("BEGIN; SELECT * FROM m WHERE id = 1 FOR UPDATE").unwrap();
    let q = "SELECT m.id, d.id FROM m JOIN d ON d.mid = m.id ORDER BY d.id LIMIT 1 FOR UPDATE SKIP LOCKED";
    assert_eq!(rows(&mut b, q), ["2|2"]);
    a.execute("ROLLBACK").unwrap();
    for (change, query, expect) in [
        // The locked row's new version fails the WHERE clause: left out.
        (
            "UPDATE m SET v = v + 1 WHERE id = 1",
            "SELECT m.id, m.v, d.w FROM m JOIN d ON d.mid = m.id WHERE m.v = 10 ORDER BY d.id FOR UPDATE",
            vec![],
        ),
        // It passes: the joined rows carry its new values.
        (
            "UPDATE m SET v = v + 1 WHERE id = 1",
            "SELECT m.id, m.v, d.w FROM m JOIN d ON d.mid = m.id WHERE m.v >= 10 ORDER BY d.id FOR UPDATE",
            vec!["1|11|x", "2|20|y", "1|11|z"],
        ),
        // The locked row's join key changed: the join condition fails on the re-check.
        (
            "UPDATE d SET mid = 2 WHERE id = 1",
            "SELECT m.id, d.id, d.mid FROM m JOIN d ON d.mid = m.id ORDER BY d.id FOR UPDATE OF d",
            vec!["2|2|2", "1|3|1"],
        ),
        // The same change to a table not locked goes unseen: its row is read as it was
        // (the locker waits for the lock on m's row only).
        (
            "UPDATE d SET mid = 2 WHERE id = 1; SELECT 1 FROM m WHERE id = 1 FOR UPDATE",
            "SELECT m.id, d.id, d.mid FROM m JOIN d ON d.mid = m.id ORDER BY d.id FOR UPDATE OF m",
            vec!["1|1|1", "2|2|2", "1|3|1"],
        ),
        // A locked row deleted: its joined rows are left out.
        (
            "DELETE FROM d WHERE mid = 1; DELETE FROM m WHERE id = 1",
            "SELECT m.id, d.id FROM m JOIN d ON d.mid = m.id ORDER BY d.id FOR UPDATE",
            vec!["2|2"],
        ),
        // An outer join's preserved row changed so that it no longer matches: NULL-extended.
        (
            "UPDATE m SET id = 9 WHERE id = 1",
            "SELECT m.id, d.id FROM m LEFT JOIN d ON d.mid = m.id ORDER BY m.v, d.id FOR UPDATE OF m",
            vec!["9|NULL", "9|NULL", "2|2", "3|NULL"],
        ),
        // A subquery with its own locking clause over a join, run during the re-check, reads
        // its own tables (not the rows the re-check gives the outer query's scans).
        (
            "UPDATE m SET v = 11 WHERE id = 1",
            "SELECT x.id, x.v, (SELECT y2.mid FROM m x2 JOIN d y2 ON y2.id = x2.id WHERE x2.id = x.id + 1 FOR UPDATE) \
             FROM m x JOIN d y ON y.id = x.id ORDER BY x.id FOR UPDATE OF x",
            vec!["1|11|2", "2|20|1", "3|30|NULL"],
        ),
        // The select list is computed from the new version; the rows are not sorted again.
        (
            "UPDATE m SET v = 5 WHERE id = 1",
            "SELECT m.v * 2, d.w || m.v FROM m, d WHERE m.id = d.mid ORDER BY d.id DESC LIMIT 2 FOR NO KEY UPDATE OF m",
            vec!["10|z5", "40|y20"],
        ),
    ] {
        for plan in ["", "SET enable_hashjoin = off; SET enable_mergejoin = off", "SET enable_hashjoin = off; SET enable_nestloop = off"] {
            a.execute(setup).unwrap();
            let (got, _) = locker_after_change(&db, &mut a, change, plan, query, |_, _| true);
            assert_eq!(got, expect, "{change} / {query} / {plan}");
        }
    }
    // REPEATABLE READ fails on a locked row changed since its snapshot.
    a.execute(setup).unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SELECT count(*) FROM d"), ["3"]);
    b.execute("UPDATE d SET w = 'new' WHERE id = 2").unwrap();
    assert_eq!(rows(&mut a, "SELECT m.id FROM m JOIN d ON d.mid = m.id WHERE d.id = 2 FOR UPDATE OF m"), ["2"], "d is not locked");
    assert_eq!(err(&mut a, "SELECT m.id FROM m JOIN d ON d.mid = m.id WHERE d.id = 2 FOR UPDATE").code, "40001");
    a.execute("ROLLBACK").unwrap();
}

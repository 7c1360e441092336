//! Advisory locks (`pg_advisory_lock` and its family), as PostgreSQL's: session-level locks
//! outlive transactions (commit, rollback, a failed block) until unlocked or the session
//! ends; transaction-level ones end with their transaction; takes nest; a bigint key and two
//! integer keys are different locks; shared and exclusive conflict as ShareLock and
//! ExclusiveLock; waits time out, and a cycle of waits is a deadlock (40P01).

mod common;
use common::*;

fn one(s: &mut heapstore::Session, sql: &str) -> String {
    rows(s, sql).remove(0)
}

#[test]
fn session_and_transaction_level_locks_live_as_in_postgres() {
    let (_t, _dir, db) = new_db(&["lock_timeout=200ms"]);
    let mut a = db.session();
    let mut b = db.session();
    // Session level: held across statements and transactions, nested takes.
    assert_eq!(one(&mut a, "SELECT pg_advisory_lock(1)"), "");
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(1)"), "f");
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(0, 1)"), "t", "two int keys are another lock");
    assert_eq!(one(&mut a, "SELECT pg_try_advisory_lock(1)"), "t", "the holder takes it again");
    assert_eq!(one(&mut a, "SELECT pg_advisory_unlock(1)"), "t");
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(1)"), "f", "one take is left");
    assert_eq!(one(&mut a, "SELECT pg_advisory_unlock(1)"), "t");
    assert_eq!(one(&mut a, "SELECT pg_advisory_unlock(1)"), "f", "nothing left to unlock");
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(1)"), "t");
    // A rollback and a failed block keep session-level locks.
    a.execute("BEGIN; SELECT pg_advisory_lock(9); ROLLBACK").unwrap();
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(9)"), "f");
    a.execute("BEGIN").unwrap();
    assert_eq!(err(&mut a, "SELECT 1 / 0").code, "22012");
    a.execute("ROLLBACK").unwrap();
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(9)"), "f");
    // Waiting for one: lock_timeout.
    assert_eq!(err(&mut b, "SELECT pg_advisory_lock(9)").code, "55P03");
    // pg_locks shows them with PostgreSQL's classid / objid / objsubid.
    assert_eq!(
        rows(&mut a, "SELECT classid, objid, objsubid, mode, granted FROM pg_locks WHERE locktype = 'advisory' ORDER BY objsubid, objid"),
        ["0|1|1|ExclusiveLock|t", "0|9|1|ExclusiveLock|t", "0|1|2|ExclusiveLock|t"]
    );
    // Unlock all: this session's session-level locks only.
    assert_eq!(one(&mut b, "SELECT pg_advisory_unlock_all()"), "");
    assert_eq!(one(&mut a, "SELECT pg_try_advisory_lock(1)"), "t");
    assert_eq!(one(&mut a, "SELECT pg_try_advisory_lock(0, 1)"), "t");
    // Shared and exclusive.
    assert_eq!(one(&mut a, "SELECT pg_try_advisory_lock_shared(7)"), "t");
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock_shared(7)"), "t");
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(7)"), "f");
    assert_eq!(one(&mut b, "SELECT pg_advisory_unlock(7)"), "f", "an exclusive unlock of a shared lock");
    assert_eq!(one(&mut b, "SELECT pg_advisory_unlock_shared(7)"), "t");
    // Transaction level: released at the end, not by pg_advisory_unlock.
    a.execute("BEGIN").unwrap();
    assert_eq!(one(&mut a, "SELECT pg_advisory_xact_lock(5)"), "");
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_xact_lock(5)"), "f");
    assert_eq!(one(&mut a, "SELECT pg_advisory_unlock(5)"), "f");
    a.execute("COMMIT").unwrap();
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_xact_lock(5)"), "t");
    // A NULL key locks nothing.
    assert_eq!(one(&mut a, "SELECT pg_advisory_lock(NULL) IS NULL"), "t");
    // In a WHERE clause (the job-queue pattern) and an UPDATE's: evaluated by the executor.
    a.execute("CREATE TABLE jobs (id int PRIMARY KEY, done boolean DEFAULT false)").unwrap();
    a.execute("INSERT INTO jobs (id) SELECT g FROM generate_series(100, 104) g").unwrap();
    assert_eq!(rows(&mut b, "SELECT id FROM jobs WHERE pg_try_advisory_lock(id) AND id < 102 ORDER BY id"), ["100", "101"]);
    assert_eq!(rows(&mut a, "SELECT id FROM jobs WHERE id < 103 AND pg_try_advisory_lock(id) ORDER BY id"), ["102"]);
    assert_eq!(rows(&mut a, "UPDATE jobs SET done = true WHERE pg_try_advisory_xact_lock(id) RETURNING id").len(), 3);
    // The session's end releases its locks.
    drop(a);
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(9)"), "t");
    assert_eq!(one(&mut b, "SELECT pg_try_advisory_lock(1)"), "t");
}

#[test]
fn waits_for_advisory_locks_end_in_a_grant_or_a_deadlock_error() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("SELECT pg_advisory_lock(21)").unwrap();
    b.execute("SELECT pg_advisory_lock(11)").unwrap();
    std::thread::scope(|sc| {
        // Each side, if it is the victim, gives its lock up so that the other goes on.
        let waiter = sc.spawn(move || {
            let r = b.execute("SELECT pg_advisory_lock(21)").map(drop);
            if r.is_err() {
                b.execute("SELECT pg_advisory_unlock(11)").unwrap();
            }
            r
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        let ra = a.execute("SELECT pg_advisory_lock(11)").map(drop);
        if ra.is_err() {
            a.execute("SELECT pg_advisory_unlock(21)").unwrap();
        }
        let rb = waiter.join().unwrap();
        let codes: Vec<&str> = [&ra, &rb].iter().filter_map(|r| r.as_ref().err().map(|e| e.code)).collect();
        assert_eq!(codes, ["40P01"], "one of the two is the deadlock's victim: {ra:?} {rb:?}");
    });
}

/// ROLLBACK TO SAVEPOINT gives back the relation and transaction-level advisory locks first
/// taken after the savepoint, as PostgreSQL's aborted subtransaction does; session-level
/// advisory locks, and locks held since before the savepoint, stay.
#[test]
fn rollback_to_savepoint_gives_back_the_locks_taken_since() {
    let (_t, _dir, db) = new_db(&["lock_timeout=300ms"]);
    let mut a = db.session();
    let mut b = db.session();
    // Whether `b` could take a table lock at once: "ok", or the error's SQLSTATE.
    let try_lock = |b: &mut heapstore::Session, sql: &str| {
        b.execute("BEGIN").unwrap();
        let r = b.execute(sql).map(|_| "ok".to_string()).unwrap_or_else(|e| e.code.to_string());
        b.execute("ROLLBACK").unwrap();
        r
    };
    a.execute("CREATE TABLE lk1 (x int); CREATE TABLE lk2 (x int)").unwrap();
    a.execute("BEGIN").unwrap();
    a.execute("SAVEPOINT s").unwrap();
    a.execute("LOCK TABLE lk1 IN ACCESS EXCLUSIVE MODE").unwrap();
    a.execute("SELECT pg_advisory_xact_lock(7), pg_advisory_lock(8)").unwrap();
    a.execute("INSERT INTO lk2 VALUES (1)").unwrap();
    // Held now.
    assert_eq!(try_lock(&mut b, "LOCK TABLE lk1 IN ACCESS SHARE MODE NOWAIT"), "55P03");
    assert_eq!(rows(&mut b, "SELECT pg_try_advisory_lock(7)"), ["f"]);
    a.execute("ROLLBACK TO SAVEPOINT s").unwrap();
    assert_eq!(try_lock(&mut b, "LOCK TABLE lk1 IN ACCESS SHARE MODE NOWAIT"), "ok");
    assert_eq!(rows(&mut b, "SELECT pg_try_advisory_lock(7), pg_try_advisory_lock(8)"), ["t|f"]);
    b.execute("SELECT pg_advisory_unlock(7)").unwrap();
    // A lock taken before the savepoint and again after it stays.
    a.execute("LOCK TABLE lk2 IN EXCLUSIVE MODE").unwrap();
    a.execute("SAVEPOINT t").unwrap();
    a.execute("LOCK TABLE lk2 IN EXCLUSIVE MODE").unwrap();
    a.execute("LOCK TABLE lk1 IN SHARE MODE").unwrap();
    a.execute("RELEASE SAVEPOINT t").unwrap();
    a.execute("SAVEPOINT u").unwrap();
    a.execute("ROLLBACK TO SAVEPOINT u").unwrap();
    assert_eq!(try_lock(&mut b, "LOCK TABLE lk2 IN ROW EXCLUSIVE MODE NOWAIT"), "55P03");
    // A released savepoint's locks belong to the transaction: they stay too.
    assert_eq!(try_lock(&mut b, "LOCK TABLE lk1 IN ROW EXCLUSIVE MODE NOWAIT"), "55P03");
    a.execute("COMMIT").unwrap();
    assert_eq!(try_lock(&mut b, "LOCK TABLE lk2 IN ROW EXCLUSIVE MODE NOWAIT"), "ok");
    assert_eq!(rows(&mut a, "SELECT pg_advisory_unlock(8)"), ["t"]);
    assert_eq!(rows(&mut a, "SELECT count(*) FROM lk2"), ["0"]);
    // A foreign key's key lock taken for a row since undone is given back: deleting the
    // parent does not wait for the transaction.
    a.execute("CREATE TABLE par (id int PRIMARY KEY); CREATE TABLE ch (p int REFERENCES par); INSERT INTO par VALUES (1), (2)").unwrap();
    a.execute("BEGIN").unwrap();
    a.execute("INSERT INTO ch VALUES (2)").unwrap();
    a.execute("SAVEPOINT s").unwrap();
    a.execute("INSERT INTO ch VALUES (1)").unwrap();
    a.execute("ROLLBACK TO SAVEPOINT s").unwrap();
    b.execute("DELETE FROM par WHERE id = 1").unwrap();
    // The key lock taken before the savepoint stays (lock_timeout: 55P03).
    assert_eq!(err(&mut b, "DELETE FROM par WHERE id = 2").code, "55P03");
    a.execute("COMMIT").unwrap();
}

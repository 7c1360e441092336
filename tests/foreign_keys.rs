//! FOREIGN KEY constraints: PostgreSQL 15's answers and errors for the same statements
//! (checks at the end of each statement, NO ACTION / RESTRICT / CASCADE / SET NULL / SET
//! DEFAULT, multi-column keys, MATCH SIMPLE NULLs, self-references, COPY, the DDL that must
//! respect them), the catalogs' view of them, the races between a transaction that
//! references a key and one that removes it, and foreign keys surviving a power loss.

mod common;
use common::{err, ok, rows};

use heapstore::db::Environment;
use heapstore::storage::simdisk::{PowerLossModel, SimDisk};
use heapstore::Database;
use std::path::PathBuf;
use std::sync::Arc;

#[test]
fn foreign_keys_answer_as_postgres() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE fp (id int PRIMARY KEY, code text UNIQUE, v int)");
    ok(&mut s, "CREATE TABLE fc (id int PRIMARY KEY, pid int REFERENCES fp, note text)");
    ok(
        &mut s,
        "CREATE TABLE fc2 (id serial PRIMARY KEY, pcode text, CONSTRAINT fc2_code FOREIGN KEY (pcode) REFERENCES fp (code) ON DELETE CASCADE ON UPDATE CASCADE)",
    );
    ok(&mut s, "INSERT INTO fp VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)");
    ok(&mut s, "INSERT INTO fc VALUES (1, 1, 'x'), (2, 1, 'y'), (3, NULL, 'z')");
    let e = err(&mut s, "INSERT INTO fc VALUES (4, 9, 'bad')");
    assert_eq!(e.code, "23503");
    assert_eq!(e.message, "insert or update on table \"fc\" violates foreign key constraint \"fc_pid_fkey\"");
    assert_eq!(e.detail.as_deref(), Some("Key (pid)=(9) is not present in table \"fp\"."));
    ok(&mut s, "INSERT INTO fc2 (pcode) VALUES ('a'), ('b'), ('b')");
    // NO ACTION: the referenced key cannot go; CASCADE takes the referencing rows along.
    let e = err(&mut s, "DELETE FROM fp WHERE id = 1");
    assert_eq!(e.message, "update or delete on table \"fp\" violates foreign key constraint \"fc_pid_fkey\" on table \"fc\"");
    assert_eq!(e.detail.as_deref(), Some("Key (id)=(1) is still referenced from table \"fc\"."));
    ok(&mut s, "DELETE FROM fp WHERE id = 2");
    assert_eq!(rows(&mut s, "SELECT id, pcode FROM fc2 ORDER BY id"), ["1|a"]);
    // ON UPDATE CASCADE follows the key; an update that leaves the key alone checks nothing.
    ok(&mut s, "INSERT INTO fc2 (pcode) VALUES ('c')");
    ok(&mut s, "UPDATE fp SET code = 'cc' WHERE id = 3");
    assert_eq!(rows(&mut s, "SELECT id, pcode FROM fc2 ORDER BY id"), ["1|a", "4|cc"]);
    ok(&mut s, "UPDATE fp SET v = 11 WHERE id = 1");
    assert_eq!(err(&mut s, "UPDATE fp SET id = 100 WHERE id = 1").code, "23503");
    ok(&mut s, "UPDATE fc SET pid = 3 WHERE id = 1");
    assert_eq!(err(&mut s, "UPDATE fc SET pid = 77 WHERE id = 1").code, "23503");
    // COPY checks its rows too (and runs serially to do it).
    let data = b"10\t3\tcopy ok\n";
    common::copy_in(&mut s, "COPY fc FROM STDIN WITH (PARALLEL 2)", data).unwrap();
    let e = common::copy_in(&mut s, "COPY fc FROM STDIN", b"11\t42\tcopy bad\n").unwrap_err();
    assert_eq!(e.detail.as_deref(), Some("Key (pid)=(42) is not present in table \"fp\"."));
    assert_eq!(rows(&mut s, "SELECT count(*) FROM fc"), ["4"]);
    // What DDL must respect.
    let e = err(&mut s, "DROP TABLE fp");
    assert_eq!((e.code, e.message.as_str()), ("2BP01", "cannot drop table fp because other objects depend on it"));
    assert_eq!(
        e.detail.as_deref(),
        Some("constraint fc_pid_fkey on table fc depends on table fp\nconstraint fc2_code on table fc2 depends on table fp")
    );
    let e = err(&mut s, "TRUNCATE fp");
    assert_eq!((e.code, e.detail.as_deref()), ("0A000", Some("Table \"fc\" references \"fp\".")));
    let e = err(&mut s, "ALTER TABLE fp DROP CONSTRAINT fp_pkey");
    assert_eq!(e.detail.as_deref(), Some("constraint fc_pid_fkey on table fc depends on index fp_pkey"));
    let e = err(&mut s, "ALTER TABLE fp DROP COLUMN id");
    assert_eq!(e.message, "cannot drop column id of table fp because other objects depend on it");
    assert_eq!(err(&mut s, "ALTER TABLE fc ALTER COLUMN pid TYPE bigint").code, "0A000");
    // A column dropped before the referenced ones renumbers the foreign keys onto it.
    ok(&mut s, "ALTER TABLE fp DROP COLUMN v");
    assert_eq!(err(&mut s, "INSERT INTO fc VALUES (12, 99, 'x')").code, "23503");
    ok(&mut s, "INSERT INTO fc VALUES (12, 1, 'x')");
    ok(&mut s, "TRUNCATE fp, fc, fc2");
    // ALTER TABLE ADD FOREIGN KEY checks the rows there are; SET NULL.
    ok(&mut s, "ALTER TABLE fc DROP CONSTRAINT fc_pid_fkey");
    ok(&mut s, "INSERT INTO fc VALUES (21, 6, 'n')");
    assert_eq!(err(&mut s, "ALTER TABLE fc ADD FOREIGN KEY (pid) REFERENCES fp (id) ON DELETE SET NULL").code, "23503");
    ok(&mut s, "DELETE FROM fc");
    ok(&mut s, "ALTER TABLE fc ADD FOREIGN KEY (pid) REFERENCES fp (id) ON DELETE SET NULL");
    ok(&mut s, "INSERT INTO fp VALUES (5, 'e')");
    ok(&mut s, "INSERT INTO fc VALUES (20, 5, 'n')");
    ok(&mut s, "DELETE FROM fp WHERE id = 5");
    assert_eq!(rows(&mut s, "SELECT * FROM fc"), ["20|NULL|n"]);
    // Definitions refused as PostgreSQL refuses them.
    assert_eq!(err(&mut s, "CREATE TABLE fbad (x text REFERENCES fp (id))").code, "42804");
    assert_eq!(err(&mut s, "CREATE TABLE fbad (x text REFERENCES fc (note))").code, "42830");
    assert_eq!(err(&mut s, "CREATE TABLE fbad (x int REFERENCES nosuch)").code, "42P01");
    assert_eq!(err(&mut s, "CREATE TABLE fbad (x int REFERENCES fp NOT DEFERRABLE INITIALLY DEFERRED)").code, "42601");
    ok(&mut s, "CREATE UNLOGGED TABLE ul (id int PRIMARY KEY)");
    assert_eq!(err(&mut s, "CREATE TABLE fbad (id int REFERENCES ul)").code, "42P16");
    // The catalogs.
    assert_eq!(
        rows(&mut s, "SELECT conname, confupdtype, confdeltype, conkey, confkey, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' ORDER BY conname"),
        [
            "fc2_code|c|c|{2}|{2}|FOREIGN KEY (pcode) REFERENCES fp(code) ON UPDATE CASCADE ON DELETE CASCADE",
            "fc_pid_fkey|a|n|{2}|{1}|FOREIGN KEY (pid) REFERENCES fp(id) ON DELETE SET NULL",
        ]
    );
    assert_eq!(
        rows(&mut s, "SELECT relname, relhastriggers FROM pg_class WHERE relname IN ('fp', 'fc', 'ul') ORDER BY 1"),
        ["fc|t", "fp|t", "ul|f"]
    );
    ok(&mut s, "DROP TABLE fc, fc2, fp");
    drop(s);
    db.close().unwrap();
}

#[test]
fn cascades_chain_and_keys_of_several_columns() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE g1 (id int PRIMARY KEY)");
    ok(&mut s, "CREATE TABLE g2 (id int PRIMARY KEY, g1 int REFERENCES g1 ON DELETE CASCADE ON UPDATE CASCADE)");
    ok(
        &mut s,
        "CREATE TABLE g3 (id int PRIMARY KEY, g2 int REFERENCES g2 ON DELETE SET NULL, g1 int DEFAULT 1 REFERENCES g1 ON DELETE SET DEFAULT)",
    );
    ok(&mut s, "INSERT INTO g1 SELECT generate_series(1, 5)");
    ok(&mut s, "INSERT INTO g2 SELECT i, i % 5 + 1 FROM generate_series(1, 20) i");
    ok(&mut s, "INSERT INTO g3 SELECT i, i, i % 5 + 1 FROM generate_series(1, 20) i");
    // g1 3 goes: its g2 rows are deleted, their g3 rows get NULL, its g3 rows get g1's default.
    ok(&mut s, "DELETE FROM g1 WHERE id = 3");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM g2"), ["16"]);
    assert_eq!(rows(&mut s, "SELECT count(*), count(g2) FROM g3"), ["20|16"]);
    assert_eq!(rows(&mut s, "SELECT g1, count(*) FROM g3 GROUP BY g1 ORDER BY 1"), ["1|8", "2|4", "4|4", "5|4"]);
    // SET DEFAULT to a key that is going too fails.
    assert_eq!(err(&mut s, "DELETE FROM g1 WHERE id = 1").code, "23503");
    // ON UPDATE CASCADE reaches g2, but g3's NO ACTION fails the statement, cascade and all.
    let e = err(&mut s, "UPDATE g1 SET id = id + 100");
    assert_eq!(e.message, "update or delete on table \"g1\" violates foreign key constraint \"g3_g1_fkey\" on table \"g3\"");
    assert_eq!(rows(&mut s, "SELECT g1, count(*) FROM g2 GROUP BY g1 ORDER BY 1"), ["1|4", "2|4", "4|4", "5|4"]);
    ok(&mut s, "UPDATE g3 SET g1 = NULL");
    ok(&mut s, "UPDATE g1 SET id = id + 100");
    assert_eq!(rows(&mut s, "SELECT g1, count(*) FROM g2 GROUP BY g1 ORDER BY 1"), ["101|4", "102|4", "104|4", "105|4"]);
    // A self-reference, deleted down the tree.
    ok(&mut s, "CREATE TABLE tree (id int PRIMARY KEY, parent int REFERENCES tree ON DELETE CASCADE)");
    ok(&mut s, "INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2), (4, 1), (5, NULL)");
    assert_eq!(err(&mut s, "INSERT INTO tree VALUES (6, 7)").code, "23503");
    ok(&mut s, "INSERT INTO tree VALUES (7, 7)");
    ok(&mut s, "DELETE FROM tree WHERE id = 1");
    assert_eq!(rows(&mut s, "SELECT id FROM tree ORDER BY id"), ["5", "7"]);
    // A cascade down a chain thousands of rows deep (worked through in a loop, not recursion).
    ok(&mut s, "CREATE TABLE chain (id int PRIMARY KEY, prev int REFERENCES chain ON DELETE CASCADE)");
    ok(&mut s, "CREATE INDEX chain_prev ON chain (prev)");
    ok(&mut s, "INSERT INTO chain SELECT i, NULLIF(i - 1, 0) FROM generate_series(1, 3000) i");
    assert_eq!(ok(&mut s, "DELETE FROM chain WHERE id = 1"), "DELETE 1");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM chain"), ["0"]);
    // NO ACTION is checked at the statement's end: a statement removing both the key and
    // every reference to it passes.
    ok(&mut s, "CREATE TABLE na (id int PRIMARY KEY, parent int REFERENCES na)");
    ok(&mut s, "INSERT INTO na VALUES (1, NULL), (2, 1)");
    ok(&mut s, "DELETE FROM na");
    // Several columns; MATCH SIMPLE: a NULL in any column is not checked.
    ok(&mut s, "CREATE TABLE mk (a int, b int, PRIMARY KEY (a, b))");
    ok(&mut s, "CREATE TABLE mr (x int, y int, FOREIGN KEY (x, y) REFERENCES mk)");
    ok(&mut s, "INSERT INTO mk VALUES (1, 1), (1, 2)");
    ok(&mut s, "INSERT INTO mr VALUES (1, 1), (1, NULL), (NULL, 9), (1, 2)");
    let e = err(&mut s, "INSERT INTO mr VALUES (1, 3)");
    assert_eq!(e.detail.as_deref(), Some("Key (x, y)=(1, 3) is not present in table \"mk\"."));
    assert_eq!(
        err(&mut s, "DELETE FROM mk WHERE b = 1").detail.as_deref(),
        Some("Key (a, b)=(1, 1) is still referenced from table \"mr\".")
    );
    // Keys of other (comparable) types.
    ok(&mut s, "CREATE TABLE big8 (k bigint PRIMARY KEY)");
    ok(&mut s, "CREATE TABLE ref4 (k int REFERENCES big8)");
    ok(&mut s, "INSERT INTO big8 VALUES (1), (5000000000)");
    ok(&mut s, "INSERT INTO ref4 VALUES (1)");
    assert_eq!(err(&mut s, "INSERT INTO ref4 VALUES (2)").code, "23503");
    assert_eq!(err(&mut s, "DELETE FROM big8 WHERE k = 1").code, "23503");
    drop(s);
    db.close().unwrap();
}

/// The race a key lock closes: a transaction referencing a key and one deleting it. Whichever
/// locks the key second waits for the other to end, then sees its outcome.
#[test]
fn a_reference_and_a_delete_of_its_key_never_both_commit() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut a = db.session();
    ok(&mut a, "CREATE TABLE p (id int PRIMARY KEY)");
    ok(&mut a, "CREATE TABLE c (pid int REFERENCES p)");
    ok(&mut a, "INSERT INTO p VALUES (1), (2), (3), (4)");
    // The insert first: the delete waits for it, then sees the reference.
    ok(&mut a, "BEGIN");
    ok(&mut a, "INSERT INTO c VALUES (1)");
    let deleted = std::thread::scope(|sc| {
        let h = sc.spawn(|| {
            let mut b = db.session();
            b.execute("DELETE FROM p WHERE id = 1").map(|_| ()).map_err(|e| e.code)
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        ok(&mut a, "COMMIT");
        h.join().unwrap()
    });
    assert_eq!(deleted, Err("23503"));
    // The delete first: the insert waits for it, then finds the key gone (or, after a
    // rollback, present).
    for (key, end, expect) in [(2, "COMMIT", Err("23503")), (3, "ROLLBACK", Ok(()))] {
        ok(&mut a, "BEGIN");
        ok(&mut a, &format!("DELETE FROM p WHERE id = {key}"));
        let inserted = std::thread::scope(|sc| {
            let h = sc.spawn(|| {
                let mut b = db.session();
                b.execute(&format!("INSERT INTO c VALUES ({key})")).map(|_| ()).map_err(|e| e.code)
            });
            std::thread::sleep(std::time::Duration::from_millis(300));
            ok(&mut a, end);
            h.join().unwrap()
        });
        assert_eq!(inserted, expect, "after {end}");
    }
    // No row references a missing key.
    assert_eq!(rows(&mut a, "SELECT count(*) FROM c WHERE pid NOT IN (SELECT id FROM p)"), ["0"]);
    // REPEATABLE READ: a reference committed after the snapshot fails the delete with 40001.
    ok(&mut a, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(rows(&mut a, "SELECT count(*) FROM c WHERE pid = 4"), ["0"]);
    let mut b = db.session();
    ok(&mut b, "INSERT INTO c VALUES (4)");
    assert_eq!(err(&mut a, "DELETE FROM p WHERE id = 4").code, "40001");
    ok(&mut a, "ROLLBACK");
    drop((a, b));
    db.close().unwrap();
}

#[test]
fn foreign_keys_survive_power_loss() {
    const DIR: &str = "/sim/fk";
    let open = |disk: &SimDisk| {
        let env = Environment { vfs: Arc::new(disk.clone()), background_workers: false };
        Database::open_in(env, &PathBuf::from(DIR), &["shared_buffers=256kB".into()]).unwrap()
    };
    for survive in [0.0, 1.0] {
        let disk = SimDisk::new(31);
        Database::init_in(Arc::new(disk.clone()), &PathBuf::from(DIR), &["wal_segment_size=1MB".into()]).unwrap();
        let db = open(&disk);
        let mut s = db.session();
        ok(&mut s, "CREATE TABLE p (id int PRIMARY KEY)");
        ok(&mut s, "CREATE TABLE c (id int PRIMARY KEY, pid int REFERENCES p ON DELETE CASCADE)");
        ok(&mut s, "INSERT INTO p SELECT generate_series(1, 100)");
        ok(&mut s, "INSERT INTO c SELECT i, i % 100 + 1 FROM generate_series(1, 500) i");
        ok(&mut s, "DELETE FROM p WHERE id <= 10");
        drop(s);
        disk.cut_power();
        db.crash();
        disk.power_loss(PowerLossModel { survive, tear: 0.3 });
        let db = open(&disk);
        let mut s = db.session();
        assert_eq!(rows(&mut s, "SELECT count(*) FROM c"), ["450"]);
        assert_eq!(err(&mut s, "INSERT INTO c VALUES (1000, 5)").code, "23503");
        ok(&mut s, "DELETE FROM p WHERE id = 20");
        assert_eq!(rows(&mut s, "SELECT count(*) FROM c"), ["445"]);
    }
}

/// DEFERRABLE foreign keys, as Django declares every one (`DEFERRABLE INITIALLY DEFERRED`):
/// their checks wait for COMMIT (which fails and rolls back on a violation), SET CONSTRAINTS
/// moves them, ROLLBACK TO SAVEPOINT forgets what was queued after it, a reference gone by
/// commit time is not checked, and the declaration survives a crash.
#[test]
fn deferrable_foreign_keys_are_checked_at_commit() {
    let (_t, dir, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE dp (id int PRIMARY KEY)").unwrap();
    s.execute("CREATE TABLE dc (id int PRIMARY KEY, pid int REFERENCES dp DEFERRABLE INITIALLY DEFERRED)").unwrap();
    s.execute("CREATE TABLE dc2 (id int, pid int, CONSTRAINT dc2_fk FOREIGN KEY (pid) REFERENCES dp (id) DEFERRABLE)").unwrap();
    let e = s.execute("CREATE TABLE dc3 (pid int REFERENCES dp NOT DEFERRABLE INITIALLY DEFERRED)").unwrap_err();
    assert_eq!(e.code, "42601");
    assert_eq!(
        rows(
            &mut s,
            "SELECT conname, condeferrable, condeferred, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' ORDER BY 1"
        ),
        [
            "dc2_fk|t|f|FOREIGN KEY (pid) REFERENCES dp(id) DEFERRABLE",
            "dc_pid_fkey|t|t|FOREIGN KEY (pid) REFERENCES dp(id) DEFERRABLE INITIALLY DEFERRED"
        ]
    );
    // The child first, the parent later, in one transaction.
    s.execute("BEGIN; INSERT INTO dc VALUES (1, 10); INSERT INTO dp VALUES (10)").unwrap();
    s.execute("COMMIT").unwrap();
    // A violation fails the COMMIT and rolls everything back.
    s.execute("BEGIN; INSERT INTO dp VALUES (11); INSERT INTO dc VALUES (2, 20)").unwrap();
    let e = s.execute("COMMIT").unwrap_err();
    assert_eq!((e.code, e.detail.as_deref()), ("23503", Some("Key (pid)=(20) is not present in table \"dp\".")));
    assert_eq!(rows(&mut s, "SELECT count(*) FROM dp WHERE id = 11"), ["0"]);
    assert!(!s.in_transaction_block());
    // Autocommit: checked at the statement's own commit.
    assert_eq!(err(&mut s, "INSERT INTO dc VALUES (3, 30)").code, "23503");
    // A reference gone (deleted, or changed to a present key) by commit time is not checked.
    s.execute("BEGIN; INSERT INTO dc VALUES (4, 40); DELETE FROM dc WHERE id = 4; COMMIT").unwrap();
    s.execute("BEGIN; INSERT INTO dc VALUES (5, 50); UPDATE dc SET pid = 10 WHERE id = 5; COMMIT").unwrap();
    // A referenced key deleted and put back before commit (NO ACTION waits too).
    s.execute("BEGIN; DELETE FROM dp WHERE id = 10; INSERT INTO dp VALUES (10); COMMIT").unwrap();
    s.execute("BEGIN; DELETE FROM dp WHERE id = 10").unwrap();
    let e = s.execute("COMMIT").unwrap_err();
    assert_eq!(e.code, "23503", "{e}");
    // Not deferred (DEFERRABLE INITIALLY IMMEDIATE): checked at the statement, unless SET
    // CONSTRAINTS defers it; IMMEDIATE then runs what was queued.
    s.execute("BEGIN").unwrap();
    assert_eq!(err(&mut s, "INSERT INTO dc2 VALUES (1, 99)").code, "23503");
    s.execute("ROLLBACK").unwrap();
    s.execute("BEGIN; SET CONSTRAINTS dc2_fk DEFERRED; INSERT INTO dc2 VALUES (1, 99)").unwrap();
    assert_eq!(err(&mut s, "SET CONSTRAINTS ALL IMMEDIATE").code, "23503");
    s.execute("ROLLBACK").unwrap();
    s.execute("BEGIN; SET CONSTRAINTS ALL IMMEDIATE").unwrap();
    assert_eq!(err(&mut s, "INSERT INTO dc VALUES (6, 60)").code, "23503");
    s.execute("ROLLBACK").unwrap();
    // ROLLBACK TO SAVEPOINT forgets the checks queued after it.
    s.execute("BEGIN; INSERT INTO dc VALUES (7, 70); SAVEPOINT a; INSERT INTO dc VALUES (8, 80); ROLLBACK TO a").unwrap();
    s.execute("INSERT INTO dp VALUES (70); COMMIT").unwrap();
    assert_eq!(rows(&mut s, "SELECT id FROM dc ORDER BY id"), ["1", "5", "7"]);
    // Checks run by SET CONSTRAINTS ... IMMEDIATE after a savepoint are queued again by a
    // ROLLBACK TO it (the row that satisfied them may be gone).
    s.execute("BEGIN; INSERT INTO dc VALUES (10, 100); SAVEPOINT a; INSERT INTO dp VALUES (100); SET CONSTRAINTS ALL IMMEDIATE").unwrap();
    s.execute("ROLLBACK TO a").unwrap();
    assert_eq!(s.execute("COMMIT").unwrap_err().code, "23503");
    // No DDL on a table a queued check reads (PostgreSQL: pending trigger events).
    s.execute("BEGIN; INSERT INTO dc VALUES (11, 110)").unwrap();
    assert_eq!(err(&mut s, "ALTER TABLE dc DROP CONSTRAINT dc_pid_fkey").code, "55006");
    s.execute("ROLLBACK; BEGIN; DELETE FROM dp WHERE id = 70").unwrap();
    assert_eq!(err(&mut s, "ALTER TABLE dp ADD COLUMN x int").code, "55006");
    s.execute("ROLLBACK").unwrap();
    // What SET CONSTRAINTS refuses.
    s.execute("BEGIN").unwrap();
    assert_eq!(err(&mut s, "SET CONSTRAINTS nope DEFERRED").code, "42704");
    s.execute("ROLLBACK; BEGIN").unwrap();
    assert_eq!(err(&mut s, "SET CONSTRAINTS dp_pkey DEFERRED").code, "55000");
    s.execute("ROLLBACK").unwrap();
    let r = s.execute("SET CONSTRAINTS ALL DEFERRED").unwrap();
    assert_eq!(r[0].notices, ["WARNING:  SET CONSTRAINTS can only be used in transaction blocks"]);
    // The declaration survives a crash.
    drop(s);
    db.crash();
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    s.execute("BEGIN; INSERT INTO dc VALUES (9, 90); INSERT INTO dp VALUES (90); COMMIT").unwrap();
    assert_eq!(rows(&mut s, "SELECT id FROM dc ORDER BY id"), ["1", "5", "7", "9"]);
}

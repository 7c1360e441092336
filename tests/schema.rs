//! The schema statements that come with real tables: sequences (`CREATE SEQUENCE`, `serial`,
//! identity columns, `nextval` / `currval` / `setval` / `lastval`), DEFAULT, CHECK, views,
//! `RETURNING`, `INSERT ... ON CONFLICT` and `DEFAULT VALUES`: PostgreSQL's answers and
//! errors, COPY with omitted columns, the catalogs' view of them, and sequences surviving a
//! simulated power loss.

mod common;

use heapstore::db::Environment;
use heapstore::storage::simdisk::{PowerLossModel, SimDisk};
use heapstore::{Database, Session};
use std::path::PathBuf;
use std::sync::Arc;

fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.last()
        .unwrap()
        .rows
        .iter()
        .map(|r| r.iter().map(|v| v.clone().unwrap_or_else(|| "NULL".into())).collect::<Vec<_>>().join("|"))
        .collect()
}

fn ok(s: &mut Session, sql: &str) -> String {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).last().unwrap().tag.clone()
}

fn err(s: &mut Session, sql: &str) -> heapstore::PgError {
    match s.execute(sql) {
        Ok(_) => panic!("{sql}: succeeded"),
        Err(e) => e,
    }
}

fn code(s: &mut Session, sql: &str) -> String {
    err(s, sql).code.to_string()
}

#[test]
fn sequences_answer_as_postgres() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    assert_eq!(ok(&mut s, "CREATE SEQUENCE s"), "CREATE SEQUENCE");
    assert_eq!(code(&mut s, "SELECT currval('s')"), "55000");
    assert_eq!(code(&mut s, "SELECT lastval()"), "55000");
    assert_eq!(rows(&mut s, "SELECT nextval('s'), nextval('s'), currval('s'), lastval()"), ["1|2|2|2"]);
    // The tuple as PostgreSQL shows it: 32 values reserved by the first call's WAL record.
    assert_eq!(rows(&mut s, "SELECT last_value, log_cnt, is_called FROM s"), ["2|31|t"]);
    assert_eq!(rows(&mut s, "SELECT setval('s', 100), nextval('s')"), ["100|101"]);
    assert_eq!(rows(&mut s, "SELECT setval('s', 7, false), nextval('s'), nextval('s')"), ["7|7|8"]);
    assert_eq!(rows(&mut s, "SELECT nextval('public.s'), nextval('s'::regclass), nextval('\"s\"')"), ["9|10|11"]);
    // Options in any order (pg_dump writes START before INCREMENT), descending, limits.
    ok(&mut s, "CREATE SEQUENCE d START WITH 10 INCREMENT BY -4 MINVALUE 0 MAXVALUE 100 NO CYCLE");
    assert_eq!(rows(&mut s, "SELECT nextval('d'), nextval('d'), nextval('d')"), ["10|6|2"]);
    let e = err(&mut s, "SELECT nextval('d')");
    assert_eq!((e.code, e.message.as_str()), ("2200H", "nextval: reached minimum value of sequence \"d\" (0)"));
    ok(&mut s, "CREATE SEQUENCE c AS smallint MAXVALUE 3 CYCLE");
    assert_eq!(rows(&mut s, "SELECT nextval('c'), nextval('c'), nextval('c'), nextval('c')"), ["1|2|3|1"]);
    let e = err(&mut s, "SELECT setval('c', 4)");
    assert_eq!((e.code, e.message.as_str()), ("22003", "setval: value 4 is out of bounds for sequence \"c\" (1..3)"));
    // CREATE SEQUENCE's checks.
    assert_eq!(err(&mut s, "CREATE SEQUENCE x INCREMENT 0").message, "INCREMENT must not be zero");
    assert_eq!(err(&mut s, "CREATE SEQUENCE x START 0").message, "START value (0) cannot be less than MINVALUE (1)");
    assert_eq!(err(&mut s, "CREATE SEQUENCE x MINVALUE 5 MAXVALUE 5").message, "MINVALUE (5) must be less than MAXVALUE (5)");
    assert_eq!(
        err(&mut s, "CREATE SEQUENCE x AS smallint MAXVALUE 40000").message,
        "MAXVALUE (40000) is out of range for sequence data type smallint"
    );
    assert_eq!(code(&mut s, "CREATE SEQUENCE x CACHE 20"), "0A000");
    assert_eq!(code(&mut s, "CREATE SEQUENCE s"), "42P07");
    ok(&mut s, "CREATE SEQUENCE IF NOT EXISTS s");
    // A sequence is not a table, and a table is not a sequence.
    ok(&mut s, "CREATE TABLE t (a int)");
    assert_eq!(code(&mut s, "SELECT nextval('t')"), "42809");
    assert_eq!(code(&mut s, "INSERT INTO s VALUES (1, 1, true)"), "42809");
    assert_eq!(code(&mut s, "TRUNCATE s"), "42809");
    assert_eq!(code(&mut s, "DROP TABLE s"), "42809");
    assert_eq!(code(&mut s, "SELECT nextval('nosuch')"), "42P01");
    // Not transactional: a rolled-back nextval is not given again.
    ok(&mut s, "BEGIN");
    assert_eq!(rows(&mut s, "SELECT nextval('s')"), ["12"]);
    ok(&mut s, "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT nextval('s')"), ["13"]);
    // currval is the session's own.
    let mut other = db.session();
    assert_eq!(rows(&mut other, "SELECT nextval('s')"), ["14"]);
    assert_eq!(rows(&mut s, "SELECT currval('s')"), ["13"]);
    // READ ONLY transactions may not change a sequence.
    ok(&mut s, "BEGIN READ ONLY");
    assert_eq!(code(&mut s, "SELECT nextval('s')"), "25006");
    ok(&mut s, "ROLLBACK");
    assert_eq!(ok(&mut s, "DROP SEQUENCE s, c"), "DROP SEQUENCE");
    assert_eq!(code(&mut s, "SELECT nextval('s')"), "42P01");
    assert_eq!(code(&mut s, "DROP SEQUENCE s"), "42P01");
    ok(&mut s, "DROP SEQUENCE IF EXISTS s");
}

#[test]
fn serial_identity_and_defaults() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(
        &mut s,
        "CREATE TABLE t (id serial PRIMARY KEY, v text DEFAULT 'none', n int DEFAULT 7, d date DEFAULT current_date, \
         g bigint GENERATED ALWAYS AS IDENTITY, h int GENERATED BY DEFAULT AS IDENTITY (START WITH 100))",
    );
    ok(&mut s, "INSERT INTO t (v) VALUES ('a'), (DEFAULT)");
    ok(&mut s, "INSERT INTO t DEFAULT VALUES");
    ok(&mut s, "INSERT INTO t (id, v, n, h) VALUES (DEFAULT, 'b', NULL, 5)");
    assert_eq!(
        rows(&mut s, "SELECT id, v, n, d = current_date, g, h FROM t ORDER BY id"),
        ["1|a|7|t|1|100", "2|none|7|t|2|101", "3|none|7|t|3|102", "4|b|NULL|t|4|5"]
    );
    assert_eq!(rows(&mut s, "SELECT currval('t_id_seq'), currval('t_g_seq')"), ["4|4"]);
    // GENERATED ALWAYS refuses a value, in INSERT and UPDATE, as PostgreSQL does.
    let e = err(&mut s, "INSERT INTO t (g) VALUES (9)");
    assert_eq!((e.code, e.message.as_str()), ("428C9", "cannot insert a non-DEFAULT value into column \"g\""));
    assert_eq!(e.detail.as_deref(), Some("Column \"g\" is an identity column defined as GENERATED ALWAYS."));
    assert_eq!(code(&mut s, "UPDATE t SET g = 1"), "428C9");
    assert_eq!(ok(&mut s, "UPDATE t SET g = DEFAULT, n = DEFAULT WHERE id = 4"), "UPDATE 1");
    assert_eq!(rows(&mut s, "SELECT g, n FROM t WHERE id = 4"), ["5|7"]);
    // INSERT ... SELECT fills the columns it leaves out from their defaults.
    ok(&mut s, "INSERT INTO t (v) SELECT 'x' || i FROM (VALUES (1), (2), (3)) AS g (i)");
    assert_eq!(rows(&mut s, "SELECT id, v, g FROM t WHERE v LIKE 'x%' ORDER BY id"), ["5|x1|6", "6|x2|7", "7|x3|8"]);
    // Serial columns are NOT NULL, their sequences owned by them and dropped with the table.
    assert_eq!(code(&mut s, "INSERT INTO t (id) VALUES (NULL)"), "23502");
    let e = err(&mut s, "DROP SEQUENCE t_id_seq");
    assert_eq!(e.code, "2BP01");
    assert_eq!(e.detail.as_deref(), Some("default value for column id of table t depends on sequence t_id_seq"));
    // Defaults are checked when the table is created.
    assert_eq!(code(&mut s, "CREATE TABLE bad (a int DEFAULT 'x')"), "22P02");
    assert_eq!(code(&mut s, "CREATE TABLE bad (a int, b int DEFAULT a)"), "0A000");
    assert_eq!(code(&mut s, "CREATE TABLE bad (a serial DEFAULT 1)"), "42601");
    assert_eq!(code(&mut s, "CREATE TABLE bad (a text GENERATED ALWAYS AS IDENTITY)"), "22023");
    // The catalogs.
    assert_eq!(
        rows(&mut s, "SELECT a.attname, pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum ORDER BY d.adnum"),
        ["id|nextval('t_id_seq'::regclass)", "v|'none'::text", "n|7", "d|CURRENT_DATE"]
    );
    assert_eq!(
        rows(&mut s, "SELECT column_name, is_identity, identity_generation, identity_start FROM information_schema.columns WHERE table_name = 't' AND column_name IN ('g', 'h') ORDER BY 1"),
        ["g|YES|ALWAYS|1", "h|YES|BY DEFAULT|100"]
    );
    assert_eq!(
        rows(&mut s, "SELECT relname, relkind FROM pg_class WHERE relname LIKE 't%' AND relkind <> 'v' ORDER BY 1"),
        ["t|r", "t_g_seq|S", "t_h_seq|S", "t_id_seq|S", "t_pkey|i"]
    );
    assert_eq!(
        rows(&mut s, "SELECT seqstart, seqincrement, seqmax FROM pg_sequence JOIN pg_class ON oid = seqrelid WHERE relname = 't_h_seq'"),
        ["100|1|2147483647"]
    );
    ok(&mut s, "DROP TABLE t");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_class WHERE relname LIKE 't%' AND relkind <> 'v'"), ["0"]);
}

#[test]
fn copy_fills_omitted_columns_with_their_defaults() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id bigserial PRIMARY KEY, n int CHECK (n > 0), tag text DEFAULT 'copied')");
    let data: String = (1..=2000).map(|i| format!("{i}\n")).collect();
    common::copy_in(&mut s, "COPY t (n) FROM STDIN", data.as_bytes()).unwrap();
    // PARALLEL with a per-row default (nextval) runs serially, in row order.
    common::copy_in(&mut s, "COPY t (n) FROM STDIN WITH (PARALLEL 2)", data.as_bytes()).unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t"), ["4000|4000|1|4000"]);
    assert_eq!(rows(&mut s, "SELECT id, n, tag FROM t WHERE id IN (1, 2001) ORDER BY id"), ["1|1|copied", "2001|1|copied"]);
    assert_eq!(rows(&mut s, "SELECT currval('t_id_seq')"), ["4000"]);
    // A constant default with PARALLEL: filled by the workers.
    ok(&mut s, "CREATE TABLE u (a int, b text DEFAULT 'b')");
    common::copy_in(&mut s, "COPY u (a) FROM STDIN WITH (PARALLEL 2)", data.as_bytes()).unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*), min(b), max(b) FROM u"), ["2000|b|b"]);
    // CHECK constraints hold for COPY, with the line in CONTEXT.
    let e = common::copy_in(&mut s, "COPY t (n) FROM STDIN", b"5\n-1\n").unwrap_err();
    assert_eq!(e.code, "23514");
    assert_eq!(e.message, "new row for relation \"t\" violates check constraint \"t_n_check\"");
    assert_eq!(e.context.as_deref(), Some("COPY t, line 2: \"-1\""));
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["4000"]);
}

#[test]
fn check_constraints() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (a int CHECK (a > 0), b int, CONSTRAINT b_small CHECK (b < 10), CHECK (a <> b))");
    ok(&mut s, "INSERT INTO t VALUES (1, 2), (2, NULL)");
    let e = err(&mut s, "INSERT INTO t VALUES (0, 1)");
    assert_eq!((e.code, e.message.as_str()), ("23514", "new row for relation \"t\" violates check constraint \"t_a_check\""));
    assert_eq!(e.detail.as_deref(), Some("Failing row contains (0, 1)."));
    assert_eq!(err(&mut s, "UPDATE t SET b = 10").message, "new row for relation \"t\" violates check constraint \"b_small\"");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (3, 3)").message, "new row for relation \"t\" violates check constraint \"t_check\"");
    assert_eq!(rows(&mut s, "SELECT a, b FROM t ORDER BY a"), ["1|2", "2|NULL"]);
    assert_eq!(
        rows(&mut s, "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint ORDER BY conname"),
        ["b_small|c|CHECK ((b < 10))", "t_a_check|c|CHECK ((a > 0))", "t_check|c|CHECK ((a <> b))"]
    );
    assert_eq!(code(&mut s, "CREATE TABLE bad (a int CHECK (a + 1))"), "42804");
    assert_eq!(code(&mut s, "CREATE TABLE bad (a int CHECK (a IN (SELECT 1)))"), "0A000");
}

#[test]
fn returning_gives_the_changed_rows() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id serial PRIMARY KEY, v text, n int DEFAULT 0)");
    let r = s.execute("INSERT INTO t (v) VALUES ('a'), ('b') RETURNING id, v AS val, n + 1").unwrap();
    let r = r.last().unwrap();
    assert_eq!(r.tag, "INSERT 0 2");
    assert_eq!(r.columns.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["id", "val", "?column?"]);
    assert_eq!(rows(&mut s, "INSERT INTO t (v) VALUES ('c') RETURNING *"), ["3|c|0"]);
    assert_eq!(rows(&mut s, "UPDATE t SET n = n + id WHERE id >= 2 RETURNING id, n"), ["2|2", "3|3"]);
    assert_eq!(rows(&mut s, "DELETE FROM t WHERE id = 1 RETURNING t.*"), ["1|a|0"]);
    let r = s.execute("DELETE FROM t WHERE id = 99 RETURNING id").unwrap();
    assert_eq!((r.last().unwrap().tag.as_str(), r.last().unwrap().rows.len()), ("DELETE 0", 0));
    assert_eq!(code(&mut s, "DELETE FROM t RETURNING nosuch"), "42703");
    assert_eq!(code(&mut s, "DELETE FROM t RETURNING (SELECT 1)"), "0A000");
}

#[test]
fn on_conflict_do_nothing_and_do_update() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id int PRIMARY KEY, v text, hits int DEFAULT 1, u int UNIQUE)");
    ok(&mut s, "INSERT INTO t (id, v, u) VALUES (1, 'a', 10), (2, 'b', 20)");
    assert_eq!(ok(&mut s, "INSERT INTO t (id, v) VALUES (1, 'x'), (3, 'c') ON CONFLICT DO NOTHING"), "INSERT 0 1");
    // A conflict on an index that is not the arbiter is an error.
    assert_eq!(code(&mut s, "INSERT INTO t (id, v, u) VALUES (5, 'e', 10) ON CONFLICT (id) DO NOTHING"), "23505");
    assert_eq!(ok(&mut s, "INSERT INTO t (id, v, u) VALUES (5, 'e', 10) ON CONFLICT (u) DO NOTHING"), "INSERT 0 0");
    assert_eq!(
        rows(&mut s, "INSERT INTO t (id, v) VALUES (1, 'z'), (6, 'f') ON CONFLICT (id) DO UPDATE SET hits = t.hits + 1, v = excluded.v || t.v RETURNING id, v, hits"),
        ["1|za|2", "6|f|1"]
    );
    // WHERE on DO UPDATE: a row it rejects is neither updated nor returned.
    assert_eq!(ok(&mut s, "INSERT INTO t (id, v) VALUES (2, 'q') ON CONFLICT (id) DO UPDATE SET v = 'no' WHERE t.hits > 5"), "INSERT 0 0");
    assert_eq!(
        ok(&mut s, "INSERT INTO t (id, v) VALUES (2, 'q') ON CONFLICT ON CONSTRAINT t_pkey DO UPDATE SET v = excluded.v"),
        "INSERT 0 1"
    );
    assert_eq!(rows(&mut s, "SELECT id, v, hits FROM t ORDER BY id"), ["1|za|2", "2|q|1", "3|c|1", "6|f|1"]);
    // PostgreSQL's errors.
    assert_eq!(code(&mut s, "INSERT INTO t (id) VALUES (7) ON CONFLICT (v) DO NOTHING"), "42P10");
    assert_eq!(code(&mut s, "INSERT INTO t (id) VALUES (7) ON CONFLICT DO UPDATE SET v = 'x'"), "42601");
    assert_eq!(code(&mut s, "INSERT INTO t (id) VALUES (8), (8) ON CONFLICT (id) DO UPDATE SET v = 'x'"), "21000");
    // DO NOTHING skips a row the same command inserted.
    assert_eq!(ok(&mut s, "INSERT INTO t (id) VALUES (8), (8) ON CONFLICT DO NOTHING"), "INSERT 0 1");
    ok(&mut s, "DELETE FROM t WHERE id = 8");
    assert_eq!(code(&mut s, "INSERT INTO t (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET v = v"), "42702");
    // The index still agrees with the heap after the conflicts (checked by a scan both ways).
    assert_eq!(rows(&mut s, "SELECT v FROM t WHERE id = 1"), ["za"]);
    assert_eq!(rows(&mut s, "SELECT count(*) FROM t"), ["4"]);
}

#[test]
fn on_conflict_waits_for_a_concurrent_insert_of_the_same_key() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut a = db.session();
    ok(&mut a, "CREATE TABLE t (id int PRIMARY KEY, n int)");
    ok(&mut a, "BEGIN");
    ok(&mut a, "INSERT INTO t VALUES (1, 10)");
    let (r, r2) = std::thread::scope(|sc| {
        let h = sc.spawn(|| {
            let mut b = db.session();
            // Waits for a's insert of the same key; once a commits, the row conflicts.
            let r = rows(&mut b, "INSERT INTO t VALUES (1, 20) ON CONFLICT (id) DO UPDATE SET n = t.n + excluded.n RETURNING n");
            let r2 = ok(&mut b, "INSERT INTO t VALUES (1, 99) ON CONFLICT DO NOTHING");
            (r, r2)
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        ok(&mut a, "COMMIT");
        h.join().unwrap()
    });
    assert_eq!(r, ["30"]);
    assert_eq!(r2, "INSERT 0 0");
    assert_eq!(rows(&mut a, "SELECT id, n FROM t"), ["1|30"]);
}

#[test]
fn views_read_their_tables_and_guard_them() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id int, n int)");
    ok(&mut s, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
    assert_eq!(ok(&mut s, "CREATE VIEW big (ident, n) AS SELECT id, n FROM t WHERE n > 15"), "CREATE VIEW");
    assert_eq!(rows(&mut s, "SELECT * FROM big ORDER BY ident"), ["2|20", "3|30"]);
    ok(&mut s, "CREATE VIEW total AS SELECT sum(n) AS s FROM big");
    assert_eq!(rows(&mut s, "SELECT s FROM total"), ["50"]);
    // The view reads the table as it is now.
    ok(&mut s, "INSERT INTO t VALUES (4, 40)");
    assert_eq!(rows(&mut s, "SELECT v.s FROM total v"), ["90"]);
    assert_eq!(rows(&mut s, "SELECT b.ident FROM big b JOIN t ON t.id = b.ident WHERE t.n = 40"), ["4"]);
    // OR REPLACE may add columns, not change them.
    ok(&mut s, "CREATE OR REPLACE VIEW big (ident, n, twice) AS SELECT id, n, n * 2 FROM t WHERE n > 35");
    assert_eq!(rows(&mut s, "SELECT * FROM big"), ["4|40|80"]);
    assert_eq!(code(&mut s, "CREATE OR REPLACE VIEW big AS SELECT n FROM t"), "42P16");
    assert_eq!(code(&mut s, "CREATE VIEW big AS SELECT 1"), "42P07");
    // A view's tables cannot be dropped while it exists; the view itself is not a table.
    let e = err(&mut s, "DROP TABLE t");
    assert_eq!((e.code, e.detail.as_deref()), ("2BP01", Some("view big depends on table t")));
    assert_eq!(code(&mut s, "DROP VIEW big"), "2BP01"); // total reads it
    assert_eq!(code(&mut s, "INSERT INTO big VALUES (1, 1, 1)"), "0A000");
    assert_eq!(code(&mut s, "DROP TABLE big"), "42809");
    assert_eq!(rows(&mut s, "SELECT relkind FROM pg_class WHERE relname = 'total'"), ["v"]);
    assert_eq!(rows(&mut s, "SELECT pg_get_viewdef('total'::regclass)"), [" SELECT sum(n) AS s FROM big;"]);
    // Views survive a restart; and rolled-back ones are gone.
    ok(&mut s, "BEGIN");
    ok(&mut s, "CREATE VIEW gone AS SELECT 1 AS one");
    ok(&mut s, "ROLLBACK");
    assert_eq!(code(&mut s, "SELECT * FROM gone"), "42P01");
    assert_eq!(ok(&mut s, "DROP VIEW total, big"), "DROP VIEW");
    assert_eq!(ok(&mut s, "DROP TABLE t"), "DROP TABLE");
}

#[test]
fn describe_reports_returning_columns() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE t (id serial, v text)");
    let p = s.prepare("INSERT INTO t (v) VALUES ($1) RETURNING id, v").unwrap();
    let d = heapstore::sql::describe(&mut s, &p).unwrap();
    assert!(d.returns_rows);
    assert_eq!(d.columns, [("id".to_string(), "integer".to_string()), ("v".to_string(), "text".to_string())]);
    let p = s.prepare("DELETE FROM t WHERE id = $1").unwrap();
    assert!(!heapstore::sql::describe(&mut s, &p).unwrap().returns_rows);
}

const DIR: &str = "/sim/seq";

fn open(disk: &SimDisk) -> Database {
    let env = Environment { vfs: Arc::new(disk.clone()), background_workers: false };
    Database::open_in(env, &PathBuf::from(DIR), &["shared_buffers=256kB".into()]).unwrap()
}

/// The race the value reservation opens: a checkpoint writes the page with values still
/// reserved in memory, and redo starts after the record that reserved them. The first change
/// after the checkpoint must be logged again, or a crash hands those values out twice.
/// A value reserved by one transaction's WAL record and handed out to another, which
/// commits while the first is still open: the commit must make the reserving record durable
/// (torture seed 100279 found this).
#[test]
fn a_committed_value_reserved_by_an_open_transaction_survives_power_loss() {
    let disk = SimDisk::new(22);
    Database::init_in(Arc::new(disk.clone()), &PathBuf::from(DIR), &["wal_segment_size=1MB".into()]).unwrap();
    let db = open(&disk);
    let mut a = db.session();
    let mut b = db.session();
    ok(&mut a, "CREATE SEQUENCE s");
    db.checkpoint().unwrap();
    ok(&mut a, "BEGIN");
    // The first nextval after the checkpoint writes a record reserving 1..=33; nothing
    // flushes it yet.
    assert_eq!(rows(&mut a, "SELECT nextval('s')"), ["1"]);
    // B is handed 2 from that reservation, without a record of its own, and commits.
    assert_eq!(rows(&mut b, "SELECT nextval('s')"), ["2"]);
    drop((a, b));
    disk.cut_power();
    db.crash();
    disk.power_loss(PowerLossModel { survive: 0.0, tear: 0.0 });
    let db = open(&disk);
    let mut s = db.session();
    assert_eq!(rows(&mut s, "SELECT nextval('s') > 2"), ["t"]);
}

#[test]
fn sequence_values_are_never_given_twice_after_power_loss() {
    for survive in [0.0, 1.0] {
        let disk = SimDisk::new(21);
        Database::init_in(Arc::new(disk.clone()), &PathBuf::from(DIR), &["wal_segment_size=1MB".into()]).unwrap();
        let db = open(&disk);
        let mut s = db.session();
        ok(&mut s, "CREATE SEQUENCE s");
        ok(&mut s, "CREATE TABLE t (id serial PRIMARY KEY, v int)");
        assert_eq!(rows(&mut s, "SELECT nextval('s'), nextval('s')"), ["1|2"]);
        db.checkpoint().unwrap();
        // After the checkpoint: values from the reservation made before it.
        assert_eq!(rows(&mut s, "SELECT nextval('s')"), ["3"]);
        ok(&mut s, "INSERT INTO t (v) VALUES (1), (2)");
        ok(&mut s, "BEGIN");
        ok(&mut s, "INSERT INTO t (v) VALUES (3)");
        assert_eq!(rows(&mut s, "SELECT setval('s', 40)"), ["40"]);
        ok(&mut s, "ROLLBACK"); // setval is not undone, but only a commit makes it durable
        assert_eq!(rows(&mut s, "SELECT nextval('s')"), ["41"]);
        assert_eq!(rows(&mut s, "SELECT setval('s', 50)"), ["50"]);
        drop(s);
        disk.cut_power();
        db.crash();
        disk.power_loss(PowerLossModel { survive, tear: 0.3 });
        let db = open(&disk);
        let mut s = db.session();
        assert_eq!(rows(&mut s, "SELECT nextval('s') > 50"), ["t"]);
        assert_eq!(rows(&mut s, "SELECT id, v FROM t ORDER BY id"), ["1|1", "2|2"]);
        // The table's sequence never gives 3 again (the rolled-back insert took it).
        assert_eq!(rows(&mut s, "INSERT INTO t (v) VALUES (4) RETURNING id > 3"), ["t"]);
    }
}

/// ALTER TABLE's actions, with PostgreSQL 15's answers and errors for the same statements.
#[test]
fn alter_table_actions() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    let all = "SELECT * FROM at1 ORDER BY id";
    ok(&mut s, "CREATE TABLE at1 (id int PRIMARY KEY, a text, b int CHECK (b > 0))");
    ok(&mut s, "INSERT INTO at1 VALUES (1, 'x', 5), (2, NULL, 7), (3, 'zz', NULL)");
    // Without a default: the catalog only; old rows read NULL.
    ok(&mut s, "ALTER TABLE at1 ADD COLUMN c int");
    assert_eq!(rows(&mut s, all), ["1|x|5|NULL", "2|NULL|7|NULL", "3|zz|NULL|NULL"]);
    // With a default, NOT NULL or a sequence: every row gets its value.
    ok(&mut s, "ALTER TABLE at1 ADD COLUMN d text DEFAULT 'dflt' NOT NULL");
    let e = err(&mut s, "ALTER TABLE at1 ADD COLUMN e int NOT NULL");
    assert_eq!((e.code, e.message.as_str()), ("23502", "column \"e\" of relation \"at1\" contains null values"));
    ok(&mut s, "ALTER TABLE at1 ADD COLUMN f serial");
    ok(&mut s, "INSERT INTO at1 (id, b) VALUES (4, 1)");
    assert_eq!(rows(&mut s, all), ["1|x|5|NULL|dflt|1", "2|NULL|7|NULL|dflt|2", "3|zz|NULL|NULL|dflt|3", "4|NULL|1|NULL|dflt|4"]);
    assert_eq!(code(&mut s, "ALTER TABLE at1 ADD COLUMN c int"), "42701");
    let r = s.execute("ALTER TABLE at1 ADD COLUMN IF NOT EXISTS c int").unwrap();
    assert_eq!(r[0].notices, ["NOTICE:  column \"c\" of relation \"at1\" already exists, skipping"]);
    // DROP COLUMN takes its CHECK constraint along.
    ok(&mut s, "ALTER TABLE at1 DROP COLUMN b");
    assert_eq!(rows(&mut s, all), ["1|x|NULL|dflt|1", "2|NULL|NULL|dflt|2", "3|zz|NULL|dflt|3", "4|NULL|NULL|dflt|4"]);
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'at1'::regclass AND contype = 'c'"), ["0"]);
    assert_eq!(code(&mut s, "ALTER TABLE at1 DROP COLUMN nosuch"), "42703");
    let r = s.execute("ALTER TABLE at1 DROP COLUMN IF EXISTS nosuch").unwrap();
    assert_eq!(r[0].notices, ["NOTICE:  column \"nosuch\" of relation \"at1\" does not exist, skipping"]);
    // RENAME COLUMN, SET / DROP NOT NULL, SET / DROP DEFAULT.
    ok(&mut s, "ALTER TABLE at1 RENAME COLUMN a TO aa");
    assert_eq!(code(&mut s, "ALTER TABLE at1 RENAME COLUMN aa TO id"), "42701");
    let e = err(&mut s, "ALTER TABLE at1 ALTER COLUMN aa SET NOT NULL");
    assert_eq!((e.code, e.message.as_str()), ("23502", "column \"aa\" of relation \"at1\" contains null values"));
    ok(&mut s, "UPDATE at1 SET aa = 'filled' WHERE aa IS NULL");
    ok(&mut s, "ALTER TABLE at1 ALTER COLUMN aa SET NOT NULL");
    assert_eq!(code(&mut s, "INSERT INTO at1 (id) VALUES (9)"), "23502");
    ok(&mut s, "ALTER TABLE at1 ALTER COLUMN aa DROP NOT NULL");
    let e = err(&mut s, "ALTER TABLE at1 ALTER COLUMN id DROP NOT NULL");
    assert_eq!((e.code, e.message.as_str()), ("42P16", "column \"id\" is in a primary key"));
    // The failed INSERT took a value from f's sequence, as in PostgreSQL.
    ok(&mut s, "ALTER TABLE at1 ALTER COLUMN c SET DEFAULT 42");
    ok(&mut s, "INSERT INTO at1 (id) VALUES (5)");
    ok(&mut s, "ALTER TABLE at1 ALTER COLUMN c DROP DEFAULT");
    ok(&mut s, "INSERT INTO at1 (id) VALUES (6)");
    assert_eq!(rows(&mut s, "SELECT id, c, f FROM at1 WHERE id >= 5 ORDER BY id"), ["5|42|6", "6|NULL|7"]);
    // ADD CHECK checks the rows there are; DROP / RENAME CONSTRAINT.
    let e = err(&mut s, "ALTER TABLE at1 ADD CONSTRAINT c_pos CHECK (c > 100)");
    assert_eq!((e.code, e.message.as_str()), ("23514", "check constraint \"c_pos\" of relation \"at1\" is violated by some row"));
    ok(&mut s, "ALTER TABLE at1 ADD CONSTRAINT c_pos CHECK (c > 0)");
    assert_eq!(code(&mut s, "INSERT INTO at1 (id, c) VALUES (7, -1)"), "23514");
    ok(&mut s, "ALTER TABLE at1 RENAME CONSTRAINT c_pos TO c_positive");
    ok(&mut s, "ALTER TABLE at1 DROP CONSTRAINT c_positive");
    let e = err(&mut s, "ALTER TABLE at1 DROP CONSTRAINT c_positive");
    assert_eq!((e.code, e.message.as_str()), ("42704", "constraint \"c_positive\" of relation \"at1\" does not exist"));
    ok(&mut s, "ALTER TABLE at1 DROP CONSTRAINT IF EXISTS c_positive");
    // ALTER COLUMN TYPE: an assignment cast or USING; a value that does not fit is an error.
    let e = err(&mut s, "ALTER TABLE at1 ALTER COLUMN aa TYPE int");
    assert_eq!((e.code, e.message.as_str()), ("42804", "column \"aa\" cannot be cast automatically to type integer"));
    assert_eq!(e.hint.as_deref(), Some("You might need to specify \"USING aa::integer\"."));
    assert_eq!(code(&mut s, "ALTER TABLE at1 ALTER COLUMN aa TYPE varchar(3)"), "22001");
    ok(&mut s, "ALTER TABLE at1 ALTER COLUMN c TYPE bigint");
    ok(&mut s, "ALTER TABLE at1 ALTER COLUMN id TYPE text USING 'k' || id");
    assert_eq!(
        rows(&mut s, "SELECT id, aa, c FROM at1 ORDER BY id"),
        ["k1|x|NULL", "k2|filled|NULL", "k3|zz|NULL", "k4|filled|NULL", "k5|NULL|42", "k6|NULL|NULL"]
    );
    assert_eq!(rows(&mut s, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'at1'::regclass AND attname IN ('id', 'c') ORDER BY attnum"), ["text", "bigint"]);
    // The primary key was rebuilt for the new type.
    assert_eq!(rows(&mut s, "SELECT aa FROM at1 WHERE id = 'k3'"), ["zz"]);
    // RENAME TO keeps the table's indexes and constraints.
    ok(&mut s, "ALTER TABLE at1 RENAME TO at2");
    assert_eq!(code(&mut s, "SELECT count(*) FROM at1"), "42P01");
    let e = err(&mut s, "INSERT INTO at2 (id) VALUES ('k1')");
    assert_eq!((e.code, e.message.as_str()), ("23505", "duplicate key value violates unique constraint \"at1_pkey\""));
    // All of it is transactional.
    ok(&mut s, "BEGIN");
    ok(&mut s, "ALTER TABLE at2 DROP COLUMN c");
    ok(&mut s, "ALTER TABLE at2 RENAME TO at3");
    assert_eq!(rows(&mut s, "SELECT * FROM at3 WHERE id = 'k5'"), ["k5|NULL|dflt|6"]);
    ok(&mut s, "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT * FROM at2 WHERE id = 'k5'"), ["k5|NULL|42|dflt|6"]);
    assert_eq!(code(&mut s, "SELECT * FROM at3"), "42P01");
    ok(&mut s, "ALTER TABLE at2 DROP CONSTRAINT at1_pkey");
    ok(&mut s, "INSERT INTO at2 (id) VALUES ('k1')");
    // A renamed table dropped in the same transaction is gone.
    ok(&mut s, "BEGIN");
    ok(&mut s, "ALTER TABLE at2 RENAME TO at3");
    ok(&mut s, "DROP TABLE at3");
    ok(&mut s, "COMMIT");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_class WHERE relname IN ('at2', 'at3')"), ["0"]);
    // A table a view reads keeps its columns.
    ok(&mut s, "CREATE TABLE vt (a int)");
    ok(&mut s, "CREATE VIEW vv AS SELECT * FROM vt");
    assert_eq!(code(&mut s, "ALTER TABLE vt ADD COLUMN b int"), "0A000");
    assert_eq!(code(&mut s, "ALTER TABLE vt RENAME TO vt2"), "0A000");
    ok(&mut s, "ALTER TABLE vt ALTER COLUMN a SET DEFAULT 1");
    assert_eq!(code(&mut s, "ALTER TABLE vt ALTER COLUMN a ADD GENERATED ALWAYS AS IDENTITY"), "0A000");
    drop(s);
    db.close().unwrap();
}

/// A statement that waits for an ALTER TABLE's lock binds to the columns the ALTER left
/// (it locks before it reads the definition), never to the ones it replaced.
#[test]
fn a_statement_waiting_for_alter_table_sees_its_columns() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut a = db.session();
    ok(&mut a, "CREATE TABLE r (x int, y text)");
    ok(&mut a, "INSERT INTO r VALUES (1, 'one')");
    ok(&mut a, "BEGIN");
    // As many columns as before, in another order and of other types.
    ok(&mut a, "ALTER TABLE r DROP COLUMN x");
    ok(&mut a, "ALTER TABLE r ADD COLUMN x text");
    let (ins, sel) = std::thread::scope(|sc| {
        let h1 = sc.spawn(|| {
            let mut b = db.session();
            ok(&mut b, "INSERT INTO r VALUES ('two', 'second')")
        });
        let h2 = sc.spawn(|| {
            let mut c = db.session();
            rows(&mut c, "SELECT * FROM r ORDER BY y")
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        ok(&mut a, "COMMIT");
        (h1.join().unwrap(), h2.join().unwrap())
    });
    assert_eq!(ins, "INSERT 0 1");
    // The reader either waited and saw the new columns (and maybe the new row), never x int.
    assert!(sel == ["one|NULL"] || sel == ["one|NULL", "two|second"], "{sel:?}");
    assert_eq!(rows(&mut a, "SELECT y, x FROM r ORDER BY y"), ["one|NULL", "two|second"]);
}

/// ALTER TABLE's rewrites and renames are as durable as any committed change, and an
/// uncommitted one leaves no trace, whatever a power loss keeps of the page cache.
#[test]
fn alter_table_survives_power_loss() {
    for survive in [0.0, 1.0] {
        let disk = SimDisk::new(23);
        Database::init_in(Arc::new(disk.clone()), &PathBuf::from(DIR), &["wal_segment_size=1MB".into()]).unwrap();
        let db = open(&disk);
        let mut s = db.session();
        ok(&mut s, "CREATE TABLE p (id int PRIMARY KEY, a text, b int)");
        ok(&mut s, "INSERT INTO p SELECT i, 'row' || i, i FROM generate_series(1, 2000) AS g(i)");
        db.checkpoint().unwrap();
        ok(&mut s, "ALTER TABLE p DROP COLUMN b, ADD COLUMN c int DEFAULT 7, ALTER COLUMN a TYPE varchar(20)");
        ok(&mut s, "ALTER TABLE p RENAME TO q");
        ok(&mut s, "ALTER TABLE q ADD COLUMN d text");
        let mut t = db.session();
        ok(&mut t, "BEGIN");
        ok(&mut t, "ALTER TABLE q DROP COLUMN a");
        ok(&mut t, "INSERT INTO q VALUES (5000, 1)");
        drop((s, t));
        disk.cut_power();
        db.crash();
        disk.power_loss(PowerLossModel { survive, tear: 0.3 });
        let db = open(&disk);
        let mut s = db.session();
        assert_eq!(code(&mut s, "SELECT * FROM p"), "42P01");
        assert_eq!(rows(&mut s, "SELECT count(*), sum(c), max(id) FROM q"), ["2000|14000|2000"]);
        assert_eq!(rows(&mut s, "SELECT * FROM q WHERE id = 1500"), ["1500|row1500|7|NULL"]);
        assert_eq!(
            rows(
                &mut s,
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'q'::regclass AND attnum > 0 ORDER BY attnum"
            ),
            ["integer", "character varying(20)", "integer", "text"]
        );
        assert_eq!(code(&mut s, "INSERT INTO q (id) VALUES (1)"), "23505");
    }
}

/// uuid keys made by `gen_random_uuid()` as a DEFAULT: one per row (a volatile default, in
/// INSERT ... SELECT, a multi-row VALUES and COPY alike), found through the primary key's
/// index before and after a restart, and in byte order.
#[test]
fn uuid_keys_from_gen_random_uuid() {
    let (_d, dir, db) = common::new_db(&[]);
    let mut s = db.session();
    ok(&mut s, "CREATE TABLE u (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), n int)");
    ok(&mut s, "INSERT INTO u (n) SELECT g FROM generate_series(1, 2000) g");
    ok(&mut s, "INSERT INTO u (n) VALUES (2001), (2002), (2003)");
    let data: Vec<u8> = (2004..2100).flat_map(|i| format!("{i}\n").into_bytes()).collect();
    common::copy_in(&mut s, "COPY u (n) FROM STDIN", &data).unwrap();
    ok(&mut s, "INSERT INTO u VALUES ('00000000-0000-0000-0000-000000000000', 0), ('FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', -1)");
    assert_eq!(rows(&mut s, "SELECT count(DISTINCT id), count(*) FROM u"), ["2101|2101"]);
    // Version 4, variant 1: the 13th hex digit is 4, the 17th one of 8, 9, a, b.
    assert_eq!(
        rows(
            &mut s,
            "SELECT count(*) FROM u WHERE n > 0 AND substr(id::text, 15, 1) = '4' AND substr(id::text, 20, 1) IN ('8', '9', 'a', 'b')"
        ),
        ["2099"]
    );
    assert_eq!(rows(&mut s, "SELECT n FROM u ORDER BY id LIMIT 1"), ["0"]);
    assert_eq!(rows(&mut s, "SELECT n FROM u ORDER BY id DESC LIMIT 1"), ["-1"]);
    let ids = rows(&mut s, "SELECT id || '|' || n FROM u WHERE n % 97 = 1");
    assert!(err(&mut s, "INSERT INTO u VALUES ('ffffffffffffffffffffffffffffffff', 5)").code == "23505");
    drop(s);
    db.close().unwrap();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    for pair in &ids {
        let (id, n) = pair.split_once('|').unwrap();
        assert_eq!(rows(&mut s, &format!("SELECT n FROM u WHERE id = '{}'", id.to_uppercase())), [n]);
        let plan = rows(&mut s, &format!("EXPLAIN SELECT n FROM u WHERE id = '{id}'")).join("\n");
        assert!(plan.contains("Index Scan"), "{plan}");
    }
}

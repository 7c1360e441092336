//! `COMMENT ON TABLE | VIEW | SEQUENCE | INDEX | COLUMN`: kept in the catalog with the
//! transaction's other changes (rolled back with it, recovered after a crash), gone with its
//! object, and read back by `obj_description`, `col_description` and `pg_description` as in
//! PostgreSQL.

mod common;
use common::*;
use heapstore::Database;

#[test]
fn comments_are_transactional_and_survive_a_crash() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE acct (id int PRIMARY KEY, email text, note text)").unwrap();
    s.execute("CREATE VIEW live AS SELECT id, email FROM acct").unwrap();
    s.execute("CREATE SEQUENCE ids").unwrap();
    for sql in [
        "COMMENT ON TABLE acct IS 'Accounts'",
        "COMMENT ON COLUMN acct.email IS 'Login, as typed'",
        "COMMENT ON COLUMN public.acct.note IS 'Free text'",
        "COMMENT ON INDEX acct_pkey IS 'The key'",
        "COMMENT ON VIEW live IS 'Live accounts'",
        "COMMENT ON COLUMN live.email IS 'From acct'",
        "COMMENT ON SEQUENCE ids IS 'Numbers'",
    ] {
        assert_eq!(s.execute(sql).unwrap()[0].tag, "COMMENT", "{sql}");
    }
    let q = "SELECT obj_description('acct'::regclass, 'pg_class'), obj_description('acct_pkey'::regclass), \
             col_description('acct'::regclass, 2), col_description('live'::regclass, 2), \
             obj_description('ids'::regclass, 'pg_class'), obj_description('acct'::regclass, 'pg_proc')";
    let all = "Accounts|The key|Login, as typed|From acct|Numbers|NULL";
    assert_eq!(rows(&mut s, q), [all]);
    // Rolled back with its transaction; '' and NULL remove a comment.
    s.execute("BEGIN").unwrap();
    s.execute("COMMENT ON TABLE acct IS 'Other'").unwrap();
    s.execute("COMMENT ON COLUMN acct.email IS NULL").unwrap();
    assert_eq!(
        rows(&mut s, "SELECT obj_description('acct'::regclass, 'pg_class') || '/' || coalesce(col_description('acct'::regclass, 2), '-')"),
        ["Other/-"]
    );
    s.execute("ROLLBACK").unwrap();
    assert_eq!(rows(&mut s, q), [all]);
    s.execute("COMMENT ON COLUMN acct.note IS ''").unwrap();
    drop(s);
    db.crash();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(rows(&mut s, q), [all]);
    assert_eq!(
        rows(&mut s, "SELECT objoid::regclass, classoid::regclass, objsubid, description FROM pg_description ORDER BY description"),
        [
            "acct|pg_class|0|Accounts",
            "live|pg_class|2|From acct",
            "live|pg_class|0|Live accounts",
            "acct|pg_class|2|Login, as typed",
            "ids|pg_class|0|Numbers",
            "acct_pkey|pg_class|0|The key"
        ]
    );
    // CREATE OR REPLACE VIEW keeps the view's comments; a dropped column takes its own.
    s.execute("CREATE OR REPLACE VIEW live AS SELECT id, email, note FROM acct").unwrap();
    assert_eq!(rows(&mut s, "SELECT col_description('live'::regclass, 2), obj_description('live'::regclass)"), ["From acct|Live accounts"]);
    s.execute("DROP VIEW live").unwrap();
    s.execute("ALTER TABLE acct DROP COLUMN email").unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_description WHERE objoid = 'acct'::regclass AND objsubid > 0"), ["0"]);
}

#[test]
fn comment_errors_are_postgresqls() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (a int)").unwrap();
    s.execute("CREATE VIEW v AS SELECT a FROM t").unwrap();
    s.execute("CREATE SEQUENCE q").unwrap();
    for (sql, code, msg) in [
        ("COMMENT ON TABLE v IS 'x'", "42809", "\"v\" is not a table"),
        ("COMMENT ON VIEW t IS 'x'", "42809", "\"t\" is not a view"),
        ("COMMENT ON INDEX t IS 'x'", "42809", "\"t\" is not an index"),
        ("COMMENT ON SEQUENCE t IS 'x'", "42809", "\"t\" is not a sequence"),
        ("COMMENT ON TABLE nope IS 'x'", "42P01", "relation \"nope\" does not exist"),
        ("COMMENT ON INDEX nope IS 'x'", "42P01", "relation \"nope\" does not exist"),
        ("COMMENT ON COLUMN t.zz IS 'x'", "42703", "column \"zz\" of relation \"t\" does not exist"),
        ("COMMENT ON COLUMN q.last_value IS 'x'", "42809", "cannot set comment on relation \"q\""),
        ("COMMENT ON COLUMN a IS 'x'", "42601", "column name must be qualified"),
        ("COMMENT ON DATABASE postgres IS 'x'", "0A000", "COMMENT ON DATABASE is not supported by heapstore"),
    ] {
        let e = err(&mut s, sql);
        assert_eq!((e.code, e.message.as_str()), (code, msg), "{sql}");
    }
    s.execute("BEGIN READ ONLY").unwrap();
    assert_eq!(err(&mut s, "COMMENT ON TABLE t IS 'x'").code, "25006");
}

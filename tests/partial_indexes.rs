//! Partial indexes (`CREATE [UNIQUE] INDEX ... WHERE predicate`), as PostgreSQL's: only the
//! rows the predicate holds for have entries, whatever path wrote them (INSERT, UPDATE in and
//! out of the predicate, COPY serial and parallel, an index built over HOT chains); a unique
//! partial index constrains only those rows; a scan uses the index only when its WHERE
//! clause implies the predicate; the predicate survives a crash and follows column renames.

mod common;
use common::*;
use heapstore::Database;

#[test]
fn a_unique_partial_index_constrains_only_the_rows_it_holds() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE acct (id int PRIMARY KEY, email text, deleted boolean NOT NULL DEFAULT false, n int)").unwrap();
    s.execute("INSERT INTO acct SELECT g, 'u' || (g % 10), g > 10, 0 FROM generate_series(1, 40) g").unwrap();
    s.execute("CREATE UNIQUE INDEX acct_live ON acct (email) WHERE NOT deleted").unwrap();
    assert_eq!(check(&mut s, "acct"), 40);
    // Deleted rows may repeat a live row's email; live ones may not.
    s.execute("INSERT INTO acct VALUES (41, 'u1', true, 0)").unwrap();
    let e = s.execute("INSERT INTO acct VALUES (42, 'u1', false, 0)").unwrap_err();
    assert_eq!((e.code, e.detail.as_deref()), ("23505", Some("Key (email)=(u1) already exists.")));
    // An UPDATE moving a row into the index is checked; one moving it out frees the key.
    assert_eq!(s.execute("UPDATE acct SET deleted = false WHERE id = 41").unwrap_err().code, "23505");
    s.execute("UPDATE acct SET deleted = true WHERE id = 1").unwrap();
    s.execute("UPDATE acct SET deleted = false WHERE id = 41").unwrap();
    // Updates of other columns, repeated (HOT where the predicate's column is left alone).
    for _ in 0..50 {
        s.execute("UPDATE acct SET n = n + 1 WHERE id IN (2, 41)").unwrap();
    }
    assert_eq!(check(&mut s, "acct"), 41);
    // ON CONFLICT: without a target the partial index is an arbiter for rows it would hold;
    // a column target does not infer it (PostgreSQL needs the predicate there).
    assert_eq!(rows(&mut s, "INSERT INTO acct VALUES (50, 'u2', false, 0) ON CONFLICT DO NOTHING RETURNING id"), Vec::<String>::new());
    assert_eq!(rows(&mut s, "INSERT INTO acct VALUES (51, 'u2', true, 0) ON CONFLICT DO NOTHING RETURNING id"), ["51"]);
    assert_eq!(err(&mut s, "INSERT INTO acct VALUES (52, 'u3', false, 0) ON CONFLICT (email) DO NOTHING").code, "42P10");
    // A foreign key cannot reference it.
    assert_eq!(err(&mut s, "CREATE TABLE ref (e text REFERENCES acct (email))").code, "42830");
    // COPY, serial and parallel: the same rules, all or nothing.
    let ok = b"60\tv1\tf\t0\n61\tv1\tt\t0\n62\tv2\tf\t0\n";
    copy_in(&mut s, "COPY acct FROM STDIN", ok).unwrap();
    let dup: Vec<u8> =
        (70..2070).map(|i| format!("{i}\tw{}\t{}\t0\n", i % 1000, if i < 1070 { "f" } else { "t" })).collect::<String>().into();
    copy_in(&mut s, "COPY acct FROM STDIN WITH (PARALLEL 2)", &dup).unwrap();
    // A live duplicate of a row loaded by the parallel COPY: the whole COPY is refused.
    let mut bad: Vec<u8> = (3000..4000).map(|i| format!("{i}\tn{i}\tf\t0\n")).collect::<String>().into();
    bad.extend_from_slice(b"4000\tw7\tf\t0\n");
    let e = copy_in(&mut s, "COPY acct FROM STDIN WITH (PARALLEL 2)", &bad).unwrap_err();
    assert_eq!((e.code, e.objects.as_ref().and_then(|o| o.constraint.as_deref())), ("23505", Some("acct_live")), "{e}");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM acct WHERE email LIKE 'n%'"), ["0"]);
    assert_eq!(rows(&mut s, "SELECT count(*) FROM acct WHERE email LIKE 'w%'"), ["2000"]);
    let total: u64 = rows(&mut s, "SELECT count(*) FROM acct")[0].parse().unwrap();
    assert_eq!(check(&mut s, "acct"), total);
    // Answers through the index equal a sequential scan's.
    let q = "SELECT id FROM acct WHERE email = 'w7' AND NOT deleted ORDER BY id";
    assert!(plan(&mut s, q).contains("acct_live"), "{}", plan(&mut s, q));
    let through = rows(&mut s, q);
    assert_eq!(through, ["1007"]);
    s.execute("SET enable_indexscan = off").unwrap();
    assert_eq!(rows(&mut s, q), through);
    s.execute("RESET enable_indexscan").unwrap();
    // A condition that does not imply the predicate never reads the index (its deleted rows
    // are not in it).
    let q = "SELECT id FROM acct WHERE email = 'w7' ORDER BY id";
    assert!(!plan(&mut s, q).contains("acct_live"), "{}", plan(&mut s, q));
    assert_eq!(rows(&mut s, q), ["1007", "2007"]);
    // The catalog shows the predicate; a renamed column is renamed in it; it survives a crash.
    s.execute("ALTER TABLE acct RENAME COLUMN deleted TO gone").unwrap();
    assert_eq!(
        rows(&mut s, "SELECT pg_get_indexdef('acct_live'::regclass)"),
        ["CREATE UNIQUE INDEX acct_live ON public.acct USING btree (email) WHERE (NOT gone)"]
    );
    drop(s);
    db.crash();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(err(&mut s, "INSERT INTO acct VALUES (9000, 'w7', false, 0)").code, "23505");
    s.execute("INSERT INTO acct VALUES (9001, 'w7', true, 0)").unwrap();
    assert_eq!(check(&mut s, "acct"), total + 1);
    // Dropping a column the predicate reads drops the index, as in PostgreSQL.
    s.execute("ALTER TABLE acct DROP COLUMN gone").unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_class WHERE relname = 'acct_live'"), ["0"]);
}

#[test]
fn an_index_scan_is_used_only_where_the_predicate_is_implied() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE ev (id int PRIMARY KEY, kind text, done boolean, at int)").unwrap();
    s.execute("INSERT INTO ev SELECT g, CASE WHEN g % 3 = 0 THEN 'a' END, g % 2 = 0, g FROM generate_series(1, 3000) g").unwrap();
    s.execute("CREATE INDEX ev_open ON ev (at) WHERE done = false AND kind IS NOT NULL").unwrap();
    s.execute("ANALYZE ev").unwrap();
    for (q, uses) in [
        ("SELECT count(*) FROM ev WHERE at < 100 AND done = false AND kind IS NOT NULL", true),
        // IS NOT NULL follows from a comparison of the column.
        ("SELECT count(*) FROM ev WHERE at < 100 AND done = false AND kind = 'a'", true),
        ("SELECT count(*) FROM ev WHERE at < 100 AND done = false", false),
        ("SELECT count(*) FROM ev WHERE at < 100 AND (done = false OR kind IS NOT NULL)", false),
        ("SELECT count(*) FROM ev WHERE at < 100", false),
    ] {
        let p = plan(&mut s, q);
        assert_eq!(p.contains("ev_open"), uses, "{q}\n{p}");
        let got = rows(&mut s, q);
        s.execute("SET enable_indexscan = off").unwrap();
        assert_eq!(rows(&mut s, q), got, "{q}");
        s.execute("RESET enable_indexscan").unwrap();
    }
    // An ORDER BY ... LIMIT is not served from it unless the WHERE clause implies it.
    assert_eq!(rows(&mut s, "SELECT id FROM ev ORDER BY at LIMIT 2"), ["1", "2"]);
    assert_eq!(rows(&mut s, "SELECT id FROM ev WHERE done = false AND kind IS NOT NULL ORDER BY at LIMIT 2"), ["3", "9"]);
    // Rows moving in and out of it by UPDATE.
    s.execute("UPDATE ev SET done = true WHERE id = 3").unwrap();
    s.execute("UPDATE ev SET kind = 'b' WHERE id = 1").unwrap();
    assert_eq!(rows(&mut s, "SELECT id FROM ev WHERE done = false AND kind IS NOT NULL ORDER BY at LIMIT 2"), ["1", "9"]);
    assert_eq!(check(&mut s, "ev"), 3000);
    // What PostgreSQL refuses in a predicate, and what heapstore does not take yet.
    for (sql, code) in [
        ("CREATE INDEX x ON ev (at) WHERE at > (SELECT 1)", "0A000"),
        ("CREATE INDEX x ON ev (at) WHERE count(*) > 1", "42803"),
        ("CREATE INDEX x ON ev (at) WHERE at", "42804"),
        ("CREATE INDEX x ON ev (at) WHERE random() > 0.5", "42P17"),
        ("CREATE INDEX x ON ev (at) WHERE pg_size_pretty(at::bigint) = 'a'", "0A000"),
        ("CREATE INDEX x ON ev (at) WHERE to_char(at, '9') = 'a'", "42P17"),
        ("CREATE INDEX x ON ev (at) WHERE nope", "42703"),
    ] {
        assert_eq!(err(&mut s, sql).code, code, "{sql}");
    }
}

#[test]
fn a_partial_index_built_over_hot_chains_is_checked_by_old_snapshots() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE h (id int PRIMARY KEY, flag boolean, v int)").unwrap();
    a.execute("INSERT INTO h VALUES (1, true, 10), (2, false, 20)").unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SELECT v FROM h WHERE id = 1"), ["10"]);
    // HOT (nothing indexed reads flag yet), then a partial index the new version is outside.
    b.execute("UPDATE h SET flag = false WHERE id = 1").unwrap();
    b.execute("CREATE INDEX h_flagged ON h (v) WHERE flag").unwrap();
    assert_eq!(rows(&mut b, "SELECT count(*) FROM h WHERE flag AND v = 10"), ["0"]);
    // The old snapshot still sees flag = true for id 1: it must not trust the index.
    assert_eq!(rows(&mut a, "SELECT id FROM h WHERE flag AND v = 10"), ["1"]);
    a.execute("COMMIT").unwrap();
    assert_eq!(check(&mut b, "h"), 2);
}

/// A predicate is what it meant when the index was made: one the session's TimeZone would
/// change is refused (PostgreSQL: not immutable), an untyped literal is a boolean, a table
/// qualifier survives the table's rename, a column renamed to a keyword is quoted, and a
/// column it reads cannot change type under it.
#[test]
fn a_predicate_keeps_its_meaning() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int, ts timestamptz, d date, b int)").unwrap();
    for (sql, code) in [
        ("CREATE INDEX x ON t (id) WHERE ts > '2020-01-01 00:00'::timestamp", "42P17"),
        ("CREATE INDEX x ON t (id) WHERE d < ts", "42P17"),
        ("CREATE INDEX x ON t (id) WHERE ts::date > '2020-01-01'", "0A000"),
        ("CREATE INDEX x ON t (id) WHERE 'abc'", "22P02"),
    ] {
        assert_eq!(err(&mut s, sql).code, code, "{sql}");
    }
    // A timestamptz compared with a timestamptz literal is immutable (the literal is read once).
    s.execute("CREATE INDEX tz ON t (id) WHERE ts > '2020-01-01 00:00+00'").unwrap();
    s.execute("CREATE UNIQUE INDEX u ON t (id) WHERE 'true'").unwrap();
    s.execute("INSERT INTO t (id, b) VALUES (1, 1)").unwrap();
    assert_eq!(err(&mut s, "INSERT INTO t (id, b) VALUES (1, 2)").code, "23505");
    s.execute("CREATE INDEX q ON t (id) WHERE t.b > 0").unwrap();
    s.execute("CREATE INDEX lit ON t (id) WHERE b > '10'").unwrap();
    let e = err(&mut s, "ALTER TABLE t ALTER COLUMN b TYPE text");
    assert_eq!(e.code, "0A000", "{e}");
    s.execute("ALTER TABLE t RENAME TO t2").unwrap();
    s.execute("INSERT INTO t2 (id, b) VALUES (2, 5)").unwrap();
    s.execute("ALTER TABLE t2 RENAME COLUMN b TO \"user\"").unwrap();
    s.execute("INSERT INTO t2 (id, \"user\") VALUES (3, 6)").unwrap();
    assert_eq!(
        rows(&mut s, "SELECT pg_get_indexdef('q'::regclass), pg_get_indexdef('q'::regclass, 0, true)"),
        ["CREATE INDEX q ON public.t2 USING btree (id) WHERE (\"user\" > 0)|CREATE INDEX q ON t2 USING btree (id) WHERE \"user\" > 0"]
    );
    assert_eq!(rows(&mut s, "SELECT id FROM t2 WHERE \"user\" > 0 ORDER BY id"), ["1", "2", "3"]);
    assert_eq!(check(&mut s, "t2"), 3);
}

//! Indexes on expressions (`CREATE [UNIQUE] INDEX ... ((a + b))`, `(lower(email))`), as
//! PostgreSQL's: each key is the expression's value for the row, kept on every write path
//! (INSERT, UPDATE, COPY serial and parallel, the build); a unique one constrains the values;
//! a scan whose WHERE clause compares the same expression reads it; the expression must be
//! immutable; it survives a crash and follows column renames.

mod common;
use common::*;
use heapstore::{Database, Session};

fn check(s: &mut Session, table: &str) -> u64 {
    heapstore::sql::index::check_table(s, table).unwrap().unwrap_or_else(|e| panic!("{e}"))
}

fn plan(s: &mut Session, sql: &str) -> String {
    rows(s, &format!("EXPLAIN (COSTS OFF) {sql}")).join("\n")
}

#[test]
fn a_unique_expression_index_constrains_the_expressions_value() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE acct (id int PRIMARY KEY, email text, n int)").unwrap();
    s.execute("INSERT INTO acct SELECT g, 'User' || g || '@Example.com', 0 FROM generate_series(1, 40) g").unwrap();
    s.execute("CREATE UNIQUE INDEX acct_email ON acct (lower(email))").unwrap();
    assert_eq!(check(&mut s, "acct"), 40);
    let e = s.execute("INSERT INTO acct VALUES (41, 'USER1@example.COM', 0)").unwrap_err();
    assert_eq!((e.code, e.detail.as_deref()), ("23505", Some("Key (lower(email))=(user1@example.com) already exists.")));
    // NULLs are distinct; an UPDATE to a taken value is checked; one away from it frees it.
    s.execute("INSERT INTO acct VALUES (42, NULL, 0), (43, NULL, 0)").unwrap();
    assert_eq!(s.execute("UPDATE acct SET email = 'user2@EXAMPLE.com' WHERE id = 3").unwrap_err().code, "23505");
    s.execute("UPDATE acct SET email = 'gone@example.com' WHERE id = 2").unwrap();
    s.execute("UPDATE acct SET email = 'user2@EXAMPLE.com' WHERE id = 3").unwrap();
    // Updates of other columns, repeated (HOT: nothing indexed changes).
    for _ in 0..50 {
        s.execute("UPDATE acct SET n = n + 1 WHERE id IN (3, 4)").unwrap();
    }
    assert_eq!(check(&mut s, "acct"), 42);
    // ON CONFLICT without a target: the expression index is an arbiter; a column target
    // does not infer it.
    assert_eq!(
        rows(&mut s, "INSERT INTO acct VALUES (50, 'USER5@example.com', 0) ON CONFLICT DO NOTHING RETURNING id"),
        Vec::<String>::new()
    );
    assert_eq!(rows(&mut s, "INSERT INTO acct VALUES (51, 'new@example.com', 0) ON CONFLICT DO NOTHING RETURNING id"), ["51"]);
    assert_eq!(err(&mut s, "INSERT INTO acct VALUES (52, 'x', 0) ON CONFLICT (email) DO NOTHING").code, "42P10");
    // A foreign key cannot reference it.
    assert_eq!(err(&mut s, "CREATE TABLE ref (e text REFERENCES acct (email))").code, "42830");
    // COPY, serial and parallel: the same rules, all or nothing.
    copy_in(&mut s, "COPY acct FROM STDIN", b"60\tA@x\t0\n61\tB@x\t0\n").unwrap();
    assert_eq!(copy_in(&mut s, "COPY acct FROM STDIN", b"62\tC@x\t0\n63\ta@X\t0\n").unwrap_err().code, "23505");
    let many: Vec<u8> = (1000..3000).map(|i| format!("{i}\tW{i}@x\t0\n")).collect::<String>().into();
    copy_in(&mut s, "COPY acct FROM STDIN WITH (PARALLEL 2)", &many).unwrap();
    let mut bad: Vec<u8> = (3000..4000).map(|i| format!("{i}\tn{i}\t0\n")).collect::<String>().into();
    bad.extend_from_slice(b"4000\tw1500@X\t0\n");
    let e = copy_in(&mut s, "COPY acct FROM STDIN WITH (PARALLEL 2)", &bad).unwrap_err();
    assert_eq!((e.code, e.objects.as_ref().and_then(|o| o.constraint.as_deref())), ("23505", Some("acct_email")), "{e}");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM acct WHERE email LIKE 'n3%'"), ["0"]);
    let total: u64 = rows(&mut s, "SELECT count(*) FROM acct")[0].parse().unwrap();
    assert_eq!(check(&mut s, "acct"), total);
    // A renamed column is renamed in the expression; the index survives a crash.
    s.execute("ALTER TABLE acct RENAME COLUMN email TO mail").unwrap();
    assert_eq!(
        rows(&mut s, "SELECT pg_get_indexdef('acct_email'::regclass)"),
        ["CREATE UNIQUE INDEX acct_email ON public.acct USING btree (lower(mail))"]
    );
    drop(s);
    db.crash();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(err(&mut s, "INSERT INTO acct VALUES (9000, 'W1500@X', 0)").code, "23505");
    s.execute("INSERT INTO acct VALUES (9001, 'W1500@Y', 0)").unwrap();
    assert_eq!(check(&mut s, "acct"), total + 1);
    // The column cannot change type under it; dropping it drops the index, as in PostgreSQL.
    assert_eq!(err(&mut s, "ALTER TABLE acct ALTER COLUMN mail TYPE varchar(200)").code, "0A000");
    s.execute("ALTER TABLE acct DROP COLUMN mail").unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_class WHERE relname = 'acct_email'"), ["0"]);
}

#[test]
fn a_scan_comparing_the_expression_reads_the_index() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE ev (id int PRIMARY KEY, name text, n int, doc jsonb)").unwrap();
    s.execute("INSERT INTO ev SELECT g, 'Name' || g, g % 50, ('{\"k\": \"' || (g % 300) || '\"}')::jsonb FROM generate_series(1, 6000) g")
        .unwrap();
    s.execute("CREATE INDEX ev_lower ON ev (lower(name))").unwrap();
    s.execute("CREATE INDEX ev_k ON ev ((doc ->> 'k'))").unwrap();
    s.execute("CREATE INDEX ev_n2 ON ev ((n * 2), id DESC)").unwrap();
    s.execute("ANALYZE ev").unwrap();
    for (q, index) in [
        ("SELECT id FROM ev WHERE lower(name) = 'name77'", Some("ev_lower")),
        ("SELECT id FROM ev WHERE 'name77' = lower(name)", Some("ev_lower")),
        ("SELECT id FROM ev WHERE lower(name) = 'Name77'", Some("ev_lower")),
        ("SELECT count(*) FROM ev WHERE doc ->> 'k' = '17'", Some("ev_k")),
        ("SELECT count(*) FROM ev WHERE n * 2 = 10 AND id < 500", Some("ev_n2")),
        ("SELECT id FROM ev WHERE n * 2 = 10 AND id BETWEEN 100 AND 400 ORDER BY id", Some("ev_n2")),
        // Another expression, or the column alone, does not read it.
        ("SELECT id FROM ev WHERE upper(name) = 'NAME77'", None),
        ("SELECT id FROM ev WHERE n = 5 AND id < 100 ORDER BY id", None),
    ] {
        let p = plan(&mut s, q);
        match index {
            Some(i) => assert!(p.contains(i), "{q}\n{p}"),
            None => assert!(!p.contains("Index Cond: (lower") && !p.contains("ev_n2"), "{q}\n{p}"),
        }
        let got = rows(&mut s, q);
        s.execute("SET enable_indexscan = off").unwrap();
        assert_eq!(rows(&mut s, q), got, "{q}");
        s.execute("RESET enable_indexscan").unwrap();
    }
    assert_eq!(
        plan(&mut s, "SELECT id FROM ev WHERE lower(name) = 'name77'"),
        "Index Scan using ev_lower on ev\n  Index Cond: (lower(name) = 'name77'::text)"
    );
    // Keys follow UPDATE and DELETE.
    let q = |name: &str| format!("SELECT id FROM ev WHERE lower(name) = '{name}'");
    assert_eq!(rows(&mut s, &q("name4321")), ["4321"]);
    s.execute("UPDATE ev SET name = 'Renamed' WHERE id = 4321").unwrap();
    assert_eq!(rows(&mut s, &q("name4321")), Vec::<String>::new());
    assert_eq!(rows(&mut s, &q("renamed")), ["4321"]);
    s.execute("DELETE FROM ev WHERE id = 4321").unwrap();
    assert_eq!(rows(&mut s, &q("renamed")), Vec::<String>::new());
    assert_eq!(check(&mut s, "ev"), 5999);
    // The catalog: indkey 0 for an expression, its column named as PostgreSQL names it.
    assert_eq!(rows(&mut s, "SELECT indkey FROM pg_index WHERE indexrelid = 'ev_n2'::regclass"), ["0 1"]);
    assert_eq!(
        rows(&mut s, "SELECT attname, atttypid::regtype FROM pg_attribute WHERE attrelid = 'ev_n2'::regclass ORDER BY attnum"),
        ["expr|integer", "id|integer"]
    );
    assert_eq!(
        rows(&mut s, "SELECT pg_get_indexdef('ev_n2'::regclass), pg_get_indexdef('ev_n2'::regclass, 1, true)"),
        ["CREATE INDEX ev_n2 ON public.ev USING btree (((n * 2)), id DESC)|(n * 2)"]
    );
    s.execute("CREATE INDEX ON ev (lower(name), (n + 1), (n - 1))").unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_class WHERE relname = 'ev_lower_expr_expr1_idx'"), ["1"]);
}

#[test]
fn an_index_expression_must_be_immutable() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int, a int, b text, ts timestamp, tz timestamptz, j jsonb, f float8)").unwrap();
    for (sql, code) in [
        ("CREATE INDEX x ON t (random())", "42P17"),
        ("CREATE INDEX x ON t ((now()))", "42P17"),
        ("CREATE INDEX x ON t ((current_date))", "42P17"),
        ("CREATE INDEX x ON t (concat(a, b))", "42P17"),
        ("CREATE INDEX x ON t ((a || b))", "42P17"),
        ("CREATE INDEX x ON t (to_char(a, '999'))", "42P17"),
        ("CREATE INDEX x ON t (date_trunc('day', tz))", "42P17"),
        ("CREATE INDEX x ON t ((a + (SELECT 1)))", "0A000"),
        ("CREATE INDEX x ON t (sum(a))", "42803"),
        ("CREATE INDEX x ON t ((f::text))", "0A000"),
        ("CREATE INDEX x ON t ((j::json))", "42704"),
        ("CREATE INDEX x ON t ((nope + 1))", "42703"),
    ] {
        assert_eq!(err(&mut s, sql).code, code, "{sql}");
    }
    // Immutable ones: over zone-less date/time values, text, numbers, jsonb.
    for sql in [
        "CREATE INDEX ON t (date_trunc('day', ts))",
        "CREATE INDEX ON t ((b || 'x'))",
        "CREATE INDEX ON t (coalesce(b, ''), abs(a))",
        "CREATE INDEX ON t ((j -> 'k'))",
        "CREATE INDEX ON t ((CASE WHEN a > 0 THEN 1 ELSE 0 END))",
    ] {
        s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    s.execute("INSERT INTO t VALUES (1, -2, NULL, '2024-03-04 05:06', now(), '{\"k\": [1]}', 1.5)").unwrap();
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE date_trunc('day', ts) = '2024-03-04'"), ["1"]);
    // A parenthesized column is the column, as in PostgreSQL.
    s.execute("CREATE INDEX paren ON t ((a))").unwrap();
    assert_eq!(rows(&mut s, "SELECT indkey FROM pg_index WHERE indexrelid = 'paren'::regclass"), ["2"]);
    // An immutable function in a partial index's predicate too.
    s.execute("CREATE UNIQUE INDEX one_lower ON t (id) WHERE lower(b) = 'x'").unwrap();
    assert_eq!(check(&mut s, "t"), 1);
}

#[test]
fn an_expression_index_built_over_hot_chains_is_checked_by_old_snapshots() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE h (id int PRIMARY KEY, name text)").unwrap();
    a.execute("INSERT INTO h VALUES (1, 'Old'), (2, 'Two')").unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SELECT name FROM h WHERE id = 1"), ["Old"]);
    // HOT (nothing indexed reads name yet), then an index on an expression of it.
    b.execute("UPDATE h SET name = 'New' WHERE id = 1").unwrap();
    b.execute("CREATE INDEX h_lower ON h (lower(name))").unwrap();
    assert_eq!(rows(&mut b, "SELECT id FROM h WHERE lower(name) = 'old'"), Vec::<String>::new());
    // The old snapshot still sees 'Old' for id 1: it must not trust the index.
    assert_eq!(rows(&mut a, "SELECT id FROM h WHERE lower(name) = 'old'"), ["1"]);
    a.execute("COMMIT").unwrap();
    assert_eq!(check(&mut b, "h"), 2);
    // Now an update of name is not HOT: the index gets the new key.
    b.execute("UPDATE h SET name = 'Newer' WHERE id = 1").unwrap();
    assert_eq!(rows(&mut b, "SELECT id FROM h WHERE lower(name) = 'newer'"), ["1"]);
    assert_eq!(check(&mut b, "h"), 2);
}

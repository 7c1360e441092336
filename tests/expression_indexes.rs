//! Indexes on expressions (`CREATE [UNIQUE] INDEX ... ((a + b))`, `(lower(email))`), as
//! PostgreSQL's: each key is the expression's value for the row, kept on every write path
//! (INSERT, UPDATE, COPY serial and parallel, the build); a unique one constrains the values;
//! a scan whose WHERE clause compares the same expression reads it; the expression must be
//! immutable; it survives a crash and follows column renames. And INCLUDE columns: in the
//! catalog after the keys, outside the key's uniqueness.

mod common;
use common::*;
use heapstore::Database;

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
        // What the session's TimeZone or clock decides, however it is spelled.
        ("CREATE INDEX x ON t ((nullif(tz, ts)))", "42P17"),
        ("CREATE INDEX x ON t ((CASE WHEN a > 0 THEN tz ELSE ts END))", "0A000"),
        ("CREATE INDEX x ON t ((b::timestamptz[]))", "0A000"),
        ("CREATE INDEX x ON t ((ts < 'now'))", "0A000"),
        ("CREATE INDEX x ON t (id) WHERE ts < 'today'", "0A000"),
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

/// The keys follow the table's definition, whoever changed it and whether it committed: the
/// bound expressions a session caches are those of the definition it writes with.
#[test]
fn keys_follow_column_changes_in_any_session() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    a.execute("CREATE TABLE k (x int, y text)").unwrap();
    a.execute("CREATE INDEX k_lower ON k (lower(y))").unwrap();
    a.execute("INSERT INTO k VALUES (1, 'One')").unwrap();
    // Another session drops a column and adds one: the same number of columns.
    b.execute("ALTER TABLE k DROP COLUMN x").unwrap();
    b.execute("ALTER TABLE k ADD COLUMN z text").unwrap();
    a.execute("INSERT INTO k VALUES ('Two', 'Zzz')").unwrap();
    assert_eq!(rows(&mut a, "SELECT z FROM k WHERE lower(y) = 'two'"), ["Zzz"]);
    // A change rolled back: the old definition's expressions again.
    a.execute("BEGIN").unwrap();
    a.execute("ALTER TABLE k DROP COLUMN z").unwrap();
    a.execute("ALTER TABLE k ADD COLUMN w text").unwrap();
    a.execute("INSERT INTO k VALUES ('Three', 'Www')").unwrap();
    a.execute("ROLLBACK").unwrap();
    a.execute("INSERT INTO k VALUES ('Four', 'Yyy')").unwrap();
    assert_eq!(rows(&mut a, "SELECT z FROM k WHERE lower(y) = 'four'"), ["Yyy"]);
    assert_eq!(check(&mut a, "k"), 3);
    // A column of the same name and another type under a new index on the same text.
    a.execute("CREATE TABLE n (id int, v int)").unwrap();
    a.execute("CREATE INDEX ON n ((v + 1))").unwrap();
    a.execute("INSERT INTO n VALUES (1, 1)").unwrap();
    a.execute("ALTER TABLE n DROP COLUMN v").unwrap();
    a.execute("ALTER TABLE n ADD COLUMN v numeric").unwrap();
    a.execute("CREATE INDEX ON n ((v + 1))").unwrap();
    a.execute("INSERT INTO n VALUES (2, 2.5)").unwrap();
    assert_eq!(rows(&mut a, "SELECT id FROM n WHERE v + 1 = 3.5"), ["2"]);
    assert_eq!(check(&mut a, "n"), 2);
}

/// A build evaluates the expression only for versions some snapshot may still see, and
/// only inside a partial index's predicate (PostgreSQL's order).
#[test]
fn a_build_skips_dead_versions_and_rows_outside_the_predicate() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE d (id int, b int)").unwrap();
    s.execute("INSERT INTO d VALUES (1, 0), (2, 5), (3, 0)").unwrap();
    s.execute("DELETE FROM d WHERE id = 1").unwrap();
    s.execute("UPDATE d SET b = 2 WHERE id = 3").unwrap();
    s.execute("CREATE INDEX d_inv ON d ((10 / b))").unwrap();
    assert_eq!(rows(&mut s, "SELECT id FROM d WHERE 10 / b = 5 ORDER BY id"), ["3"]);
    s.execute("INSERT INTO d VALUES (4, 0)").unwrap_err();
    s.execute("DROP INDEX d_inv").unwrap();
    s.execute("INSERT INTO d VALUES (4, 0)").unwrap();
    s.execute("CREATE INDEX d_part ON d ((10 / b)) WHERE b <> 0").unwrap();
    s.execute("INSERT INTO d VALUES (5, 0)").unwrap();
    assert_eq!(check(&mut s, "d"), 4);
    // A version an open snapshot still sees is indexed, and its expression evaluated.
    let mut old = db.session();
    old.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut old, "SELECT count(*) FROM d"), ["4"]);
    s.execute("DELETE FROM d WHERE id = 4").unwrap();
    assert_eq!(err(&mut s, "CREATE INDEX ON d ((10 / b))").code, "22012");
    old.execute("COMMIT").unwrap();
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

#[test]
fn include_columns_are_outside_the_key() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE inc (id int, a int, note text, doc json)").unwrap();
    s.execute("CREATE UNIQUE INDEX ON inc (id) INCLUDE (note, doc)").unwrap();
    s.execute("CREATE INDEX inc_x ON inc ((a + 1)) INCLUDE (note)").unwrap();
    // Uniqueness is the key's alone.
    s.execute("INSERT INTO inc VALUES (1, 1, 'x', '{}'), (2, 1, 'x', '[]')").unwrap();
    let e = s.execute("INSERT INTO inc VALUES (1, 5, 'other', '{}')").unwrap_err();
    assert_eq!((e.code, e.detail.as_deref()), ("23505", Some("Key (id)=(1) already exists.")));
    s.execute("UPDATE inc SET note = 'y' WHERE id = 1").unwrap();
    assert_eq!(rows(&mut s, "SELECT note FROM inc WHERE id = 1"), ["y"]);
    assert_eq!(check(&mut s, "inc"), 2);
    assert_eq!(
        rows(
            &mut s,
            "SELECT indnatts, indnkeyatts, indkey, pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'inc'::regclass ORDER BY indexrelid"
        ),
        [
            "3|1|1 3 4|CREATE UNIQUE INDEX inc_id_note_doc_idx ON public.inc USING btree (id) INCLUDE (note, doc)",
            "2|1|0 3|CREATE INDEX inc_x ON public.inc USING btree (((a + 1))) INCLUDE (note)"
        ]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT attname, atttypid::regtype FROM pg_attribute WHERE attrelid = 'inc_id_note_doc_idx'::regclass ORDER BY attnum"
        ),
        ["id|integer", "note|text", "doc|json"]
    );
    // A foreign key may reference it by its key; dropping an included column it needs is
    // refused, as in PostgreSQL; without one the index goes with the column.
    s.execute("CREATE TABLE child (p int REFERENCES inc (id))").unwrap();
    let e = err(&mut s, "ALTER TABLE inc DROP COLUMN doc");
    assert_eq!(
        (e.code, e.detail.as_deref()),
        ("2BP01", Some("constraint child_p_fkey on table child depends on index inc_id_note_doc_idx"))
    );
    s.execute("DROP TABLE child").unwrap();
    s.execute("ALTER TABLE inc DROP COLUMN note").unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_index WHERE indrelid = 'inc'::regclass"), ["0"]);
}

/// `ON CONFLICT (element, ...) [WHERE predicate]`: PostgreSQL's arbiter inference over
/// expression keys and partial indexes.
#[test]
fn on_conflict_infers_expression_and_partial_indexes() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE up (id int PRIMARY KEY, email text, n int, gone boolean NOT NULL DEFAULT false)").unwrap();
    s.execute("CREATE UNIQUE INDEX up_email ON up (lower(email))").unwrap();
    s.execute("CREATE UNIQUE INDEX up_live_n ON up (n) WHERE NOT gone").unwrap();
    s.execute("INSERT INTO up VALUES (1, 'A@x', 10, false)").unwrap();
    // An expression target: DO UPDATE on the row whose lower(email) conflicts.
    assert_eq!(
        rows(&mut s, "INSERT INTO up VALUES (2, 'a@X', 20) ON CONFLICT (lower(email)) DO UPDATE SET n = excluded.n RETURNING id, n"),
        ["1|20"]
    );
    assert_eq!(rows(&mut s, "INSERT INTO up VALUES (3, 'B@x', 30) ON CONFLICT ((lower(email))) DO NOTHING RETURNING id"), ["3"]);
    // A partial index: inferred only with a WHERE clause implying its predicate.
    assert_eq!(err(&mut s, "INSERT INTO up VALUES (4, 'c', 20) ON CONFLICT (n) DO NOTHING").code, "42P10");
    assert_eq!(
        rows(
            &mut s,
            "INSERT INTO up VALUES (4, 'c', 20) ON CONFLICT (n) WHERE NOT gone DO UPDATE SET email = 'updated' RETURNING id, email"
        ),
        ["1|updated"]
    );
    // A deleted row's n is outside the index: no conflict.
    s.execute("UPDATE up SET gone = true WHERE id = 3").unwrap();
    assert_eq!(rows(&mut s, "INSERT INTO up VALUES (5, 'd', 30) ON CONFLICT (n) WHERE NOT gone DO NOTHING RETURNING id"), ["5"]);
    // A target no unique index has, or a WHERE clause that does not imply the predicate.
    for sql in [
        "INSERT INTO up VALUES (6, 'e', 1) ON CONFLICT (upper(email)) DO NOTHING",
        "INSERT INTO up VALUES (6, 'e', 1) ON CONFLICT (n) WHERE n > 0 DO NOTHING",
        "INSERT INTO up VALUES (6, 'e', 1) ON CONFLICT (lower(email), n) DO NOTHING",
    ] {
        assert_eq!(err(&mut s, sql).code, "42P10", "{sql}");
    }
    // A WHERE clause with a plain unique index: that index is still an arbiter.
    assert_eq!(
        rows(&mut s, "INSERT INTO up VALUES (1, 'f', 1) ON CONFLICT (id) WHERE n > 0 DO NOTHING RETURNING id"),
        Vec::<String>::new()
    );
    assert_eq!(check(&mut s, "up"), 3);
}

//! Never a silently wrong answer: every clause of the statements heapstore runs is either
//! implemented with PostgreSQL's meaning (and checked against PostgreSQL's answer here) or
//! refused with 0A000; transaction isolation levels and access modes are honoured.

mod common;

use common::{copy_in, new_db};
use heapstore::Session;

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Option<String>>> {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).pop().unwrap().rows
}

fn code(s: &mut Session, sql: &str) -> String {
    match s.execute(sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => e.code.to_string(),
    }
}

fn v(x: &[&str]) -> Vec<Vec<Option<String>>> {
    x.iter().map(|c| vec![Some(c.to_string())]).collect()
}

fn setup(s: &mut Session) {
    s.execute("CREATE TABLE emp (id int PRIMARY KEY, dept_id int, name text)").unwrap();
    s.execute("INSERT INTO emp VALUES (1, 10, 'a'), (2, 10, 'b'), (3, 20, 'c')").unwrap();
}

/// One statement per clause of sqlparser's SELECT, INSERT, UPDATE, DELETE, COPY and BEGIN that
/// PostgreSQL accepts: each either gives PostgreSQL's answer (listed) or is refused with 0A000.
/// (The exhaustive destructuring in `sql::check` makes a new sqlparser field a compile error.)
#[test]
fn every_clause_is_handled_or_refused() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    // Handled: (statement, PostgreSQL's rows).
    let handled: &[(&str, Vec<Vec<Option<String>>>)] = &[
        ("SELECT count(*) FROM emp", v(&["3"])),
        ("SELECT count(*) FROM emp WHERE dept_id = 10", v(&["2"])),
        ("SELECT name FROM emp WHERE id = 3", v(&["c"])),
        ("SELECT name FROM emp WHERE id = 3 LIMIT 0", vec![]),
        ("SELECT count(*) FROM emp LIMIT 0", vec![]),
        ("SELECT 1 WHERE false", vec![]),
        ("SELECT 1 WHERE 1 = 2", vec![]),
        ("SELECT 1 WHERE true", v(&["1"])),
        ("SELECT 1 LIMIT 0", vec![]),
        ("SELECT 1 LIMIT 5", v(&["1"])),
        ("SELECT 1 WHERE NULL", vec![]),
        // The query executor's clauses (PostgreSQL 15's answers).
        ("SELECT count(*) FROM emp GROUP BY dept_id ORDER BY 1", v(&["1", "2"])),
        ("SELECT count(*) FROM emp WHERE id > 0 GROUP BY dept_id ORDER BY 1 DESC", v(&["2", "1"])),
        ("SELECT count(*) FROM emp HAVING count(*) > 5", vec![]),
        ("SELECT DISTINCT dept_id FROM emp ORDER BY 1", v(&["10", "20"])),
        ("SELECT DISTINCT ON (dept_id) name FROM emp ORDER BY dept_id, name DESC", v(&["b", "c"])),
        ("SELECT id FROM emp ORDER BY id DESC", v(&["3", "2", "1"])),
        ("SELECT id FROM emp ORDER BY id OFFSET 1", v(&["2", "3"])),
        ("SELECT id FROM emp ORDER BY id LIMIT 1 OFFSET 1", v(&["2"])),
        ("SELECT id FROM emp ORDER BY id FETCH FIRST 1 ROWS ONLY", v(&["1"])),
        ("WITH x AS (SELECT 1 AS o) SELECT o FROM x", v(&["1"])),
        ("SELECT id FROM emp UNION SELECT id + 1 FROM emp ORDER BY 1", v(&["1", "2", "3", "4"])),
        ("SELECT e.id FROM emp e ORDER BY 1", v(&["1", "2", "3"])),
        ("SELECT count(*) FROM emp, emp AS f", v(&["9"])),
        ("SELECT count(*) FROM emp JOIN emp f ON true", v(&["9"])),
        ("SELECT * FROM (SELECT 1) AS x", v(&["1"])),
        ("SELECT count(*) FILTER (WHERE id > 1) FROM emp", v(&["2"])),
        ("SELECT count(*) OVER () FROM emp", v(&["3", "3", "3"])),
        ("SELECT count(*) OVER w FROM emp WINDOW w AS (ORDER BY id) ORDER BY 1", v(&["1", "2", "3"])),
        ("SELECT dept_id FROM emp ORDER BY dept_id FETCH FIRST 1 ROWS WITH TIES", v(&["10", "10"])),
        ("SELECT count(*) FILTER (WHERE id > 1) OVER () FROM emp", v(&["2", "2", "2"])),
        ("SELECT count(DISTINCT dept_id) FROM emp", v(&["2"])),
        ("VALUES (1)", v(&["1"])),
        ("SELECT * FROM generate_series(1, 3)", v(&["1", "2", "3"])),
        ("SELECT unnest(ARRAY[2, 1])", v(&["2", "1"])),
    ];
    for (sql, want) in handled {
        assert_eq!(&rows(&mut s, sql), want, "{sql}");
    }
    // SELECT ... INTO runs as CREATE TABLE AS; an INTO anywhere else is PostgreSQL's 42601.
    assert_eq!(s.execute("SELECT * INTO TEMP emp2 FROM emp WHERE id > 1").unwrap()[0].tag, "SELECT 2");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM emp2"), v(&["2"]));
    assert_eq!(code(&mut s, "SELECT * FROM (SELECT * INTO emp3 FROM emp) s"), "42601");
    // Handled clauses that change rows: run in a transaction rolled back at the end.
    s.execute("BEGIN").unwrap();
    let changing: &[(&str, Vec<Vec<Option<String>>>)] = &[
        ("INSERT INTO emp VALUES (9, 9, 'z') RETURNING id", v(&["9"])),
        ("INSERT INTO emp VALUES (1, 9, 'z') ON CONFLICT DO NOTHING RETURNING id", vec![]),
        (
            "INSERT INTO emp AS e VALUES (1, 9, 'z') ON CONFLICT (id) DO UPDATE SET name = e.name || excluded.name RETURNING name",
            v(&["az"]),
        ),
        ("UPDATE emp SET name = 'q' WHERE id = 9 RETURNING id", v(&["9"])),
        ("UPDATE emp AS e SET name = e.name || 'r' WHERE e.id = 9 RETURNING e.name", v(&["qr"])),
        ("UPDATE emp SET name = f.name || 's' FROM emp AS f WHERE emp.id = f.id AND f.id = 9 RETURNING emp.name", v(&["qrs"])),
        (
            "UPDATE emp SET (dept_id, name) = (SELECT 8, upper(f.name) FROM emp AS f WHERE f.id = emp.id) WHERE id = 9 RETURNING name",
            v(&["QRS"]),
        ),
        ("DELETE FROM emp USING emp AS f WHERE emp.id = f.id AND f.id = 9 RETURNING f.name", v(&["QRS"])),
        ("DELETE FROM emp AS e WHERE e.id = 9 RETURNING e.name", vec![]),
    ];
    for (sql, want) in changing {
        assert_eq!(&rows(&mut s, sql), want, "{sql}");
    }
    // DEFAULT VALUES fills every column from its default: NULL here, which the key refuses.
    assert_eq!(code(&mut s, "INSERT INTO emp DEFAULT VALUES"), "23502");
    s.execute("ROLLBACK").unwrap();
    // Refused with 0A000, never run with the clause dropped.
    let refused = [
        "SELECT * FROM emp TABLESAMPLE SYSTEM (50)",
        "SELECT * FROM emp a JOIN (SELECT * FROM emp) b USING (id) FOR UPDATE",
        "SELECT * FROM (SELECT * FROM emp FOR SHARE) s",
        "SELECT id FROM emp ORDER BY id FETCH FIRST 50 PERCENT ROWS ONLY",
        "EXPLAIN ANALYZE UPDATE emp SET name = 'q'",
        "UPDATE emp SET (id, name) = (SELECT random()::int, 'x')",
        "EXPLAIN (ANALYZE) DELETE FROM emp WHERE id = 1",
        // Inlined WITH queries: one nothing reads would go unchecked, one that changes rows
        // is not built.
        "WITH x AS (SELECT * FROM emp) UPDATE emp SET name = 'q'",
        "WITH x AS (UPDATE emp SET name = 'q' RETURNING id) SELECT * FROM x",
        "WITH x AS (SELECT random() AS r) UPDATE emp SET name = 'q' FROM x, x AS y",
        "COPY emp TO STDOUT WITH (FORCE_QUOTE (name), FORMAT csv)",
        "BEGIN ISOLATION LEVEL SERIALIZABLE",
        "SET TRANSACTION SNAPSHOT '00000003-0000001B-1'",
        // Regular expression matches heapstore cannot place where PostgreSQL does: a
        // pattern mixing greedy and non-greedy quantifiers, groups under alternation or in a
        // repeated group; time zones with daylight-saving rules given as POSIX strings.
        "SELECT regexp_replace('Hello', 'l+?o*', 'x')",
        "SELECT regexp_match('abc', '(b|bc)')",
        "SELECT substring('bc' from '(b*)+[ab]*b?')",
        "SELECT regexp_replace('abc', '(b)|c', '\\1', 'g')",
        "SELECT now() AT TIME ZONE 'XYZ5ABC'",
        // PostgreSQL's types heapstore does not have: not supported, never "does not exist".
        "CREATE TABLE tz (t box)",
        "CREATE TABLE tz (t tsvector)",
        "SELECT '10.0.0.1'::inet",
        "SELECT '1'::bit(1)",
        "SELECT '{}'::money[]",
    ];
    for sql in refused {
        let c = code(&mut s, sql);
        assert_eq!(c, "0A000", "{sql}");
        // A refusal in an implicit transaction leaves nothing open.
        assert!(!s.in_transaction_block(), "{sql}");
    }
    // Nothing that was refused ran.
    assert_eq!(rows(&mut s, "SELECT count(*) FROM emp"), v(&["3"]));
    assert_eq!(rows(&mut s, "SELECT name FROM emp WHERE id = 1"), v(&["a"]));
}

#[test]
fn copy_format_names_fold_like_identifiers() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    let out = common::copy_out(&mut s, "COPY emp TO STDOUT WITH (FORMAT CSV)");
    assert_eq!(String::from_utf8(out).unwrap().lines().next(), Some("1,10,a"));
    // Quoted, it is case-sensitive, as in PostgreSQL.
    let e = s.execute("COPY emp TO STDOUT WITH (FORMAT \"CSV\")").unwrap_err();
    assert_eq!(e.code, "22023");
}

#[test]
fn read_only_transactions_refuse_writes() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    s.execute("BEGIN READ ONLY").unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM emp"), v(&["3"]));
    let e = s.execute("INSERT INTO emp VALUES (4, 1, 'd')").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("25006", "cannot execute INSERT in a read-only transaction"));
    s.execute("ROLLBACK").unwrap();
    for (sql, what) in [
        ("UPDATE emp SET name = 'x'", "UPDATE"),
        ("DELETE FROM emp", "DELETE"),
        ("CREATE TABLE z (a int)", "CREATE TABLE"),
        ("TRUNCATE emp", "TRUNCATE TABLE"),
        ("DROP TABLE emp", "DROP TABLE"),
        ("CREATE INDEX ON emp (name)", "CREATE INDEX"),
    ] {
        s.execute("START TRANSACTION READ ONLY").unwrap();
        let e = s.execute(sql).unwrap_err();
        assert_eq!(e.code, "25006", "{sql}");
        assert_eq!(e.message, format!("cannot execute {what} in a read-only transaction"));
        s.execute("ROLLBACK").unwrap();
    }
    // A prepared statement is checked as well.
    let p = s.prepare("INSERT INTO emp VALUES ($1, 1, 'p')").unwrap();
    s.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY").unwrap();
    assert_eq!(s.execute_prepared(&p, &[Some("7".into())]).unwrap_err().code, "25006");
    assert_eq!(rows(&mut s, "SHOW transaction_read_only"), v(&["on"]));
    assert_eq!(rows(&mut s, "SHOW default_transaction_read_only"), v(&["on"]));
    s.execute("SET default_transaction_read_only = off").unwrap();
    s.execute_prepared(&p, &[Some("7".into())]).unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM emp"), v(&["4"]));
    // READ WRITE cannot follow READ ONLY once a query ran.
    s.execute("BEGIN READ ONLY").unwrap();
    rows(&mut s, "SELECT count(*) FROM emp");
    assert_eq!(code(&mut s, "SET TRANSACTION READ WRITE"), "25001");
    s.execute("ROLLBACK").unwrap();
}

/// PostgreSQL's rule for READ ONLY: the relations written must be temporary. INSERT,
/// UPDATE, DELETE, COPY FROM, ON CONFLICT and a temporary sequence's nextval run on a
/// temporary table (prepared too), and commit; a permanent table, DDL (CREATE TEMP TABLE
/// too) and TRUNCATE are still refused.
#[test]
fn read_only_transactions_may_write_temporary_tables() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    s.execute("CREATE TEMP TABLE tt (a int PRIMARY KEY, b text)").unwrap();
    s.execute("CREATE TEMP TABLE ts (id serial, v int)").unwrap();
    s.execute("BEGIN READ ONLY").unwrap();
    s.execute("INSERT INTO tt VALUES (1, 'x'), (2, 'y')").unwrap();
    s.execute("UPDATE tt SET b = 'z' WHERE a = 1").unwrap();
    s.execute("DELETE FROM tt WHERE a = 2").unwrap();
    s.execute("INSERT INTO tt SELECT id + 10, name FROM emp WHERE id = 1").unwrap();
    s.execute("INSERT INTO tt VALUES (1, 'q') ON CONFLICT (a) DO UPDATE SET b = 'r'").unwrap();
    copy_in(&mut s, "COPY tt FROM STDIN", b"5\tc\n").unwrap();
    s.execute("INSERT INTO ts (v) VALUES (7)").unwrap();
    let p = s.prepare("INSERT INTO tt VALUES ($1, 'p')").unwrap();
    s.execute_prepared(&p, &[Some("6".into())]).unwrap();
    for (sql, what) in [
        ("INSERT INTO emp VALUES (9, 1, 'n')", "INSERT"),
        ("UPDATE emp SET name = 'x'", "UPDATE"),
        ("CREATE TEMP TABLE t2 (a int)", "CREATE TABLE"),
        ("TRUNCATE tt", "TRUNCATE TABLE"),
    ] {
        s.execute("SAVEPOINT p").unwrap();
        let e = s.execute(sql).unwrap_err();
        assert_eq!((e.code, e.message.clone()), ("25006", format!("cannot execute {what} in a read-only transaction")), "{sql}");
        s.execute("ROLLBACK TO SAVEPOINT p").unwrap();
    }
    s.execute("COMMIT").unwrap();
    assert_eq!(rows(&mut s, "SELECT a || ':' || b FROM tt ORDER BY a"), v(&["1:r", "5:c", "6:p", "11:a"]));
    assert_eq!(rows(&mut s, "SELECT id || ':' || v FROM ts"), v(&["1:7"]));
    assert_eq!(rows(&mut s, "SELECT count(*) FROM emp"), v(&["3"]));
}

#[test]
fn repeatable_read_keeps_its_snapshot() {
    let (_t, _dir, db) = new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    setup(&mut a);
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SHOW transaction isolation level"), v(&["repeatable read"]));
    assert_eq!(rows(&mut a, "SELECT count(*) FROM emp"), v(&["3"]));
    b.execute("INSERT INTO emp VALUES (4, 30, 'd')").unwrap();
    b.execute("UPDATE emp SET name = 'B' WHERE id = 2").unwrap();
    // The second read sees the first's snapshot, not b's commits.
    assert_eq!(rows(&mut a, "SELECT count(*) FROM emp"), v(&["3"]));
    assert_eq!(rows(&mut a, "SELECT name FROM emp WHERE id = 2"), v(&["b"]));
    // Its own changes it sees.
    a.execute("UPDATE emp SET name = 'A' WHERE id = 1").unwrap();
    assert_eq!(rows(&mut a, "SELECT name FROM emp WHERE id = 1"), v(&["A"]));
    // Changing a row another transaction changed after the snapshot: 40001.
    let e = a.execute("UPDATE emp SET name = 'x' WHERE id = 2").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("40001", "could not serialize access due to concurrent update"));
    a.execute("ROLLBACK").unwrap();
    // READ COMMITTED (the default) sees each commit.
    a.execute("BEGIN").unwrap();
    assert_eq!(rows(&mut a, "SHOW transaction_isolation"), v(&["read committed"]));
    assert_eq!(rows(&mut a, "SELECT count(*) FROM emp"), v(&["4"]));
    b.execute("DELETE FROM emp WHERE id = 4").unwrap();
    assert_eq!(rows(&mut a, "SELECT count(*) FROM emp"), v(&["3"]));
    a.execute("COMMIT").unwrap();
    // A concurrent delete under REPEATABLE READ.
    a.execute("BEGIN; SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SELECT count(*) FROM emp"), v(&["3"]));
    assert_eq!(code(&mut a, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED"), "25001");
    a.execute("ROLLBACK").unwrap();
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(rows(&mut a, "SELECT count(*) FROM emp"), v(&["3"]));
    b.execute("DELETE FROM emp WHERE id = 3").unwrap();
    let e = a.execute("DELETE FROM emp WHERE id = 3").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("40001", "could not serialize access due to concurrent delete"));
    a.execute("ROLLBACK").unwrap();
    // The session default applies to implicit transactions too.
    a.execute("SET default_transaction_isolation = 'repeatable read'").unwrap();
    assert_eq!(rows(&mut a, "SHOW transaction_isolation"), v(&["repeatable read"]));
    assert_eq!(code(&mut a, "SET default_transaction_isolation = 'serializable'"), "0A000");
    assert_eq!(code(&mut a, "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE"), "0A000");
    // COMMIT AND CHAIN starts the next block with the same characteristics.
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").unwrap();
    a.execute("COMMIT AND CHAIN").unwrap();
    assert!(a.in_transaction_block());
    assert_eq!(rows(&mut a, "SHOW transaction_isolation"), v(&["repeatable read"]));
    assert_eq!(code(&mut a, "DELETE FROM emp"), "25006");
    a.execute("ROLLBACK AND CHAIN").unwrap();
    assert_eq!(rows(&mut a, "SHOW transaction_read_only"), v(&["on"]));
    a.execute("ROLLBACK").unwrap();
    assert!(!a.in_transaction_block());
    assert_eq!(code(&mut a, "COMMIT AND CHAIN"), "25P01");
    assert_eq!(code(&mut a, "SAVEPOINT sp"), "25P01"); // outside a block, as PostgreSQL
    a.execute("BEGIN ISOLATION LEVEL READ UNCOMMITTED").unwrap();
    assert_eq!(rows(&mut a, "SHOW transaction_isolation"), v(&["read uncommitted"]));
    a.execute("COMMIT").unwrap();
}

#[test]
fn casts_on_literals_parameters_and_columns() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    let one = |s: &mut Session, sql: &str| -> (String, Option<String>) {
        let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).pop().unwrap();
        (r.columns[0].1.clone(), r.rows[0][0].clone())
    };
    assert_eq!(one(&mut s, "SELECT '2024-02-29'::date"), ("date".into(), Some("2024-02-29".into())));
    assert_eq!(one(&mut s, "SELECT DATE '2024-02-29'"), ("date".into(), Some("2024-02-29".into())));
    assert_eq!(one(&mut s, "SELECT CAST('7' AS integer)"), ("integer".into(), Some("7".into())));
    assert_eq!(one(&mut s, "SELECT '\\x4142'::bytea"), ("bytea".into(), Some("\\x4142".into())));
    assert_eq!(one(&mut s, "SELECT 2.5::float8::int"), ("integer".into(), Some("2".into())));
    assert_eq!(one(&mut s, "SELECT 3.5::float8::int"), ("integer".into(), Some("4".into())));
    assert_eq!(one(&mut s, "SELECT 10000000000"), ("bigint".into(), Some("10000000000".into())));
    assert_eq!(one(&mut s, "SELECT NULL::int"), ("integer".into(), None));
    // Decimal literals are numeric in PostgreSQL: to an integer they round half away from zero.
    assert_eq!(one(&mut s, "SELECT 2.5::int"), ("integer".into(), Some("3".into())));
    assert_eq!(one(&mut s, "SELECT CAST(-2.5 AS integer)"), ("integer".into(), Some("-3".into())));
    assert_eq!(one(&mut s, "SELECT 1.50::text"), ("text".into(), Some("1.50".into())));
    assert_eq!(one(&mut s, "SELECT -1.5"), ("numeric".into(), Some("-1.5".into())));
    assert_eq!(one(&mut s, "SELECT 00.50"), ("numeric".into(), Some("0.50".into())));
    assert_eq!(one(&mut s, "SELECT -.5"), ("numeric".into(), Some("-0.5".into())));
    // numeric arithmetic is exact, with PostgreSQL's display scales.
    assert_eq!(one(&mut s, "SELECT 1e3"), ("numeric".into(), Some("1000".into())));
    assert_eq!(one(&mut s, "SELECT 0.1 + 0.2"), ("numeric".into(), Some("0.3".into())));
    assert_eq!(one(&mut s, "SELECT 1 + 0.5"), ("numeric".into(), Some("1.5".into())));
    assert_eq!(one(&mut s, "SELECT 1.0 / 3"), ("numeric".into(), Some("0.33333333333333333333".into())));
    assert_eq!(one(&mut s, "SELECT 0.5 + 1.5::float8"), ("double precision".into(), Some("2".into())));
    assert_eq!(one(&mut s, "SELECT 99999999999999999999"), ("numeric".into(), Some("99999999999999999999".into())));
    assert_eq!(one(&mut s, "SELECT 99999999999999999999 + 1"), ("numeric".into(), Some("100000000000000000000".into())));
    s.execute("INSERT INTO emp VALUES (4.5, 10, 'r')").unwrap();
    assert_eq!(rows(&mut s, "SELECT id FROM emp WHERE name = 'r'"), v(&["5"]));
    s.execute("DELETE FROM emp WHERE name = 'r'").unwrap();
    assert_eq!(one(&mut s, "SELECT 1 + 2 * 3"), ("integer".into(), Some("7".into())));
    let r = s.execute("SELECT '1'::date").unwrap_err();
    assert_eq!(r.code, "22007");
    assert_eq!(code(&mut s, "SELECT 'x'::integer"), "22P02");
    assert_eq!(code(&mut s, "SELECT 40000::smallint"), "22003");
    assert_eq!(code(&mut s, "SELECT 1::date"), "42846");
    // Columns and parameters.
    assert_eq!(rows(&mut s, "SELECT name FROM emp WHERE id::text = '2'"), v(&["b"]));
    assert_eq!(rows(&mut s, "SELECT count(*) FROM emp WHERE dept_id::bigint > '15'::bigint"), v(&["1"]));
    let p = s.prepare("INSERT INTO emp VALUES ($1::INTEGER, $2::integer, $3)").unwrap();
    s.execute_prepared(&p, &[Some("9".into()), Some("90".into()), Some("z".into())]).unwrap();
    assert_eq!(rows(&mut s, "SELECT name FROM emp WHERE id = 9"), v(&["z"]));
    let p = s.prepare("SELECT count(*) FROM emp WHERE id < $1::int").unwrap();
    assert_eq!(s.execute_prepared(&p, &[Some("3".into())]).unwrap().rows, v(&["2"]));
}

/// What `pgbench -i` and its TPC-B script send: COPY ... WITH (FREEZE ON) into tables truncated
/// in the same transaction, VACUUM ANALYZE, ALTER TABLE ... ADD PRIMARY KEY, CURRENT_TIMESTAMP
/// into a timestamp column, END.
#[test]
fn pgbench_statements() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE acc (aid int NOT NULL, bid int, abalance int, filler char(84)) WITH (fillfactor=100)").unwrap();
    s.execute("CREATE TABLE hist (tid int, delta int, mtime timestamp, d date)").unwrap();
    // FREEZE needs the table created or truncated in the transaction.
    let e = common::copy_in(&mut s, "COPY acc FROM STDIN WITH (FREEZE ON)", b"1\t1\t0\t\n").unwrap_err();
    assert_eq!(e.code, "55000");
    s.execute("BEGIN; TRUNCATE acc, hist").unwrap();
    common::copy_in(&mut s, "copy acc from stdin with (freeze on)", b"1\t1\t0\t\n2\t1\t0\t\n").unwrap();
    s.execute("COMMIT").unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM acc"), v(&["2"]));
    let r = s.execute("VACUUM ANALYZE acc; vacuum verbose analyze hist").unwrap();
    assert_eq!(r[0].tag, "VACUUM");
    s.execute("ALTER TABLE acc ADD PRIMARY KEY (aid)").unwrap();
    assert_eq!(code(&mut s, "INSERT INTO acc VALUES (1, 1, 0, '')"), "23505");
    assert_eq!(code(&mut s, "INSERT INTO acc VALUES (NULL, 1, 0, '')"), "23502");
    assert_eq!(code(&mut s, "ALTER TABLE acc ADD PRIMARY KEY (bid)"), "42P16");
    assert_eq!(code(&mut s, "ALTER TABLE acc ALTER COLUMN aid ADD GENERATED ALWAYS AS IDENTITY"), "0A000");
    assert_eq!(code(&mut s, "ALTER TABLE acc ADD UNIQUE (bid) DEFERRABLE INITIALLY DEFERRED"), "0A000");
    // The transaction's start time, in a timestamp and a date column.
    s.execute("BEGIN").unwrap();
    s.execute("INSERT INTO hist (tid, delta, mtime, d) VALUES (1, 5, CURRENT_TIMESTAMP, now())").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    s.execute("INSERT INTO hist (tid, delta, mtime) VALUES (2, 5, now())").unwrap();
    s.execute("END").unwrap();
    let r = rows(&mut s, "SELECT mtime, d FROM hist WHERE tid = 1");
    let (ts, d) = (r[0][0].clone().unwrap(), r[0][1].clone().unwrap());
    assert_eq!(rows(&mut s, "SELECT mtime FROM hist WHERE tid = 2")[0][0].as_deref(), Some(ts.as_str()), "one start time per transaction");
    assert!(ts.starts_with(&d), "{ts} / {d}");
    // Elsewhere it is a timestamptz (the session time zone is UTC).
    assert_eq!(rows(&mut s, "SELECT count(*) FROM hist WHERE mtime < now()"), v(&["2"]));
    // Table and index options heapstore does not honour are refused.
    for sql in [
        "CREATE TABLE f1 (a int) WITH (fillfactor=50)",
        "CREATE TABLE f2 (a int) PARTITION BY RANGE (a)",
        "CREATE TABLE f3 (a int) INHERITS (acc)",
        "CREATE TABLE f4 (a int UNIQUE DEFERRABLE INITIALLY DEFERRED)",
        "CREATE TABLE f5 (a int, UNIQUE NULLS NOT DISTINCT (a))",
        "CREATE INDEX ON acc (bid) WITH (fillfactor = 70)",
        "CREATE INDEX ON acc (filler text_pattern_ops)",
        "CREATE INDEX CONCURRENTLY ON acc (bid)",
        "CREATE INDEX ON acc (bid) NULLS NOT DISTINCT",
        "COPY acc TO STDOUT WITH (FREEZE)",
    ] {
        assert_eq!(code(&mut s, sql), "0A000", "{sql}");
    }
}

#[test]
fn explain_options_are_honoured_or_refused() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    let lines = |s: &mut Session, sql: &str| -> Vec<String> { rows(s, sql).into_iter().map(|r| r[0].clone().unwrap()).collect() };
    let plain = lines(&mut s, "EXPLAIN (COSTS OFF) SELECT * FROM emp WHERE id = 1");
    assert!(!plain.iter().any(|l| l.contains("Time:")), "{plain:?}");
    let analyzed = lines(&mut s, "EXPLAIN (ANALYZE) SELECT * FROM emp");
    assert!(analyzed.iter().any(|l| l.starts_with("Execution Time:")), "{analyzed:?}");
    let quiet = lines(&mut s, "EXPLAIN (ANALYZE, SUMMARY OFF) SELECT * FROM emp");
    assert!(!quiet.iter().any(|l| l.contains("Time:")), "{quiet:?}");
    let planned = lines(&mut s, "EXPLAIN (SUMMARY) SELECT * FROM emp");
    assert!(planned.iter().any(|l| l.starts_with("Planning Time:")), "{planned:?}");
    for sql in [
        "EXPLAIN (VERBOSE) SELECT * FROM emp",
        "EXPLAIN (COSTS ON) SELECT * FROM emp",
        "EXPLAIN (SETTINGS) SELECT * FROM emp",
        "EXPLAIN (FORMAT JSON) SELECT * FROM emp",
    ] {
        assert_eq!(code(&mut s, sql), "0A000", "{sql}");
    }
}

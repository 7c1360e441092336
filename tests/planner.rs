//! The cost-based planner: ANALYZE's statistics, the access path and join method they choose,
//! and that every choice gives the same rows.

mod common;
use common::{new_db, ok, rows};
use heapstore::Session;

fn setup(s: &mut Session) {
    s.execute("CREATE TABLE u (id int PRIMARY KEY, name text)").unwrap();
    s.execute("INSERT INTO u SELECT g, 'u' || g FROM generate_series(1, 500) g").unwrap();
    s.execute("CREATE TABLE o (oid int, uid int, k int)").unwrap();
    s.execute("INSERT INTO o SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE g % 600 END, g % 100 FROM generate_series(1, 20000) g").unwrap();
    s.execute("CREATE INDEX o_k ON o (k)").unwrap();
}

const JOINS: &[&str] = &[
    "SELECT count(*), sum(o.oid), count(u.id), sum(u.id) FROM o JOIN u ON u.id = o.uid",
    "SELECT count(*), sum(o.oid), count(u.id), sum(u.id) FROM o LEFT JOIN u ON u.id = o.uid",
    "SELECT count(*), sum(o.oid), count(u.id), sum(u.id) FROM o RIGHT JOIN u ON u.id = o.uid",
    "SELECT count(*), sum(o.oid), count(u.id), sum(u.id) FROM o FULL JOIN u ON u.id = o.uid",
    "SELECT count(*), sum(o.oid), count(u.id), sum(u.id) FROM u LEFT JOIN o ON u.id = o.uid",
    "SELECT count(*), sum(o.oid), count(u.id), sum(u.id) FROM u RIGHT JOIN o ON u.id = o.uid",
    "SELECT count(*), sum(o.oid), count(u.id), sum(u.id) FROM u FULL JOIN o ON u.id = o.uid AND o.oid % 2 = 0",
    "SELECT u.id, count(o.oid) FROM u LEFT JOIN o ON u.id = o.uid AND o.k < 10 GROUP BY u.id ORDER BY 2 DESC, 1 LIMIT 5",
];

fn answers(s: &mut Session) -> Vec<Vec<String>> {
    JOINS.iter().map(|q| rows(s, q)).collect()
}

fn plan(s: &mut Session, q: &str) -> String {
    rows(s, &format!("EXPLAIN {q}")).join("\n")
}

#[test]
fn analyze_gathers_statistics_and_plans_change_only_after_it() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    let before = answers(&mut s);
    // Never analyzed: an index the condition bounds is used, the right input is hashed.
    assert!(plan(&mut s, "SELECT * FROM o WHERE k = 5").contains("Index Scan using o_k"));
    let p = plan(&mut s, JOINS[4]);
    assert!(p.contains("Hash Left Join"), "{p}");
    ok(&mut s, "ANALYZE o");
    ok(&mut s, "ANALYZE VERBOSE u (id)");
    // k = 5 keeps 1% of the rows, spread over every page: a sequential scan is cheaper.
    assert!(plan(&mut s, "SELECT * FROM o WHERE k = 5").contains("Seq Scan on o"));
    // A bounded range of the primary key stays an index scan.
    assert!(plan(&mut s, "SELECT * FROM u WHERE id < 5").contains("Index Scan using u_pkey"));
    // The smaller input (u, on the left) is hashed: PostgreSQL calls that a right join.
    let p = plan(&mut s, JOINS[4]);
    assert!(p.contains("Hash Right Join"), "{p}");
    assert_eq!(answers(&mut s), before);
    // The statistics survive a restart.
    drop(s);
    drop(db);
    let db = heapstore::Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert!(plan(&mut s, "SELECT * FROM o WHERE k = 5").contains("Seq Scan on o"));
    assert_eq!(answers(&mut s), before);
    // ANALYZE errors.
    let e = s.execute("ANALYZE nosuch").unwrap_err();
    assert_eq!(e.code, "42P01");
    let e = s.execute("ANALYZE o (nosuch)").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("42703", "column \"nosuch\" of relation \"o\" does not exist"));
    let e = s.execute("ANALYZE o, (x)").unwrap_err();
    assert_eq!(e.code, "42601");
    ok(&mut s, "ANALYZE");
    ok(&mut s, "VACUUM ANALYZE o");
}

#[test]
fn merge_joins_and_disabled_paths_give_the_same_rows() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    let want = answers(&mut s);
    drop(s);
    drop(db);
    for settings in
        [&["enable_hashjoin=off"][..], &["enable_hashjoin=off", "work_mem=64kB"], &["enable_indexscan=off"], &["enable_seqscan=off"]]
    {
        let (_t, _dir, db) = new_db(settings);
        let mut s = db.session();
        setup(&mut s);
        assert_eq!(answers(&mut s), want, "{settings:?}");
        if settings[0] == "enable_hashjoin=off" {
            let p = plan(&mut s, JOINS[3]);
            assert!(p.contains("Merge Full Join") && p.contains("Merge Cond: (uid = id)") && p.contains("Sort Key: uid"), "{p}");
        }
        if settings[0] == "enable_indexscan=off" {
            assert!(plan(&mut s, "SELECT * FROM u WHERE id = 3").contains("Seq Scan on u"));
        }
    }
}

fn one(s: &mut Session, q: &str) -> String {
    rows(s, q).remove(0)
}

#[test]
fn autovacuum_analyzes_a_table_whose_rows_changed() {
    let (_t, _dir, db) = new_db(&["autovacuum_naptime=1s"]);
    let mut s = db.session();
    s.execute("CREATE TABLE a (id int, k int)").unwrap();
    s.execute("INSERT INTO a SELECT g, g % 10 FROM generate_series(1, 1000) g").unwrap();
    assert_eq!(one(&mut s, "SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'a'"), "1000");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while one(&mut s, "SELECT autoanalyze_count FROM pg_stat_user_tables WHERE relname = 'a'") == "0" {
        assert!(std::time::Instant::now() < deadline, "autovacuum did not analyze the table");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(one(&mut s, "SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'a'"), "0");
    assert_eq!(rows(&mut s, "SELECT attname, n_distinct, null_frac FROM pg_stats WHERE tablename = 'a' ORDER BY 1"), ["id|-1|0", "k|10|0"]);
    assert_eq!(one(&mut s, "SELECT reltuples FROM pg_class WHERE relname = 'a'"), "1000");
    assert_eq!(
        one(&mut s, "SELECT last_autoanalyze IS NOT NULL AND last_analyze IS NULL FROM pg_stat_user_tables WHERE relname = 'a'"),
        "t"
    );
}

#[test]
fn join_order_and_index_nested_loops_follow_the_estimates() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE big (id int, a int, pad text)").unwrap();
    s.execute("INSERT INTO big SELECT g, g % 1000, repeat('x', 50) FROM generate_series(1, 50000) g").unwrap();
    s.execute("CREATE INDEX big_id ON big (id)").unwrap();
    s.execute("CREATE TABLE mid (a int, b int)").unwrap();
    s.execute("INSERT INTO mid SELECT g, g % 50 FROM generate_series(1, 1000) g").unwrap();
    s.execute("CREATE TABLE small (b int PRIMARY KEY, name text)").unwrap();
    s.execute("INSERT INTO small SELECT g, 'n' || g FROM generate_series(0, 49) g").unwrap();
    let queries = [
        // Written with the big table first; the small filtered one should lead.
        "SELECT count(*), sum(big.id) FROM big JOIN mid ON big.a = mid.a JOIN small ON small.b = mid.b WHERE small.name = 'n7'",
        "SELECT big.id, small.name, mid.a FROM small, big, mid WHERE big.a = mid.a AND small.b = mid.b AND big.id < 20 ORDER BY 1",
        // A few outer rows: probe big's index once per row.
        "SELECT mid.a, big.id, big.a FROM mid JOIN big ON big.id = mid.a WHERE mid.b = 3 ORDER BY 1",
        "SELECT mid.a, big.id FROM mid LEFT JOIN big ON big.id = mid.b * 1000 WHERE mid.a < 5 ORDER BY 1",
        "SELECT mid.a, big.id FROM mid LEFT JOIN big ON big.id = mid.b * 1000 AND big.a > 0 WHERE mid.a < 60 ORDER BY 1",
    ];
    let before: Vec<Vec<String>> = queries.iter().map(|q| rows(&mut s, q)).collect();
    assert!(!plan(&mut s, queries[2]).contains("Nested Loop"), "never analyzed: a hash join");
    ok(&mut s, "ANALYZE big");
    ok(&mut s, "ANALYZE mid");
    ok(&mut s, "ANALYZE small");
    let after: Vec<Vec<String>> = queries.iter().map(|q| rows(&mut s, q)).collect();
    assert_eq!(after, before);
    // The join of big comes last, over the join of mid and the filtered small.
    let p = plan(&mut s, queries[0]);
    let big_at = p.find("Seq Scan on big").unwrap();
    assert!(p.find("Seq Scan on small").unwrap() > big_at && p.matches("Hash Join").count() == 2, "{p}");
    let lines: Vec<&str> = p.lines().collect();
    assert!(lines.iter().position(|l| l.contains("Seq Scan on big")).unwrap() < 5, "big probes the other two's join:\n{p}");
    let p = plan(&mut s, queries[2]);
    assert!(p.contains("Nested Loop") && p.contains("Index Scan using big_id on big") && p.contains("Index Cond: (id = a)"), "{p}");
    let p = plan(&mut s, queries[3]);
    assert!(p.contains("Nested Loop Left Join") && p.contains("Index Cond: (id = (b * 1000))"), "{p}");
    // EXPLAIN ANALYZE counts the inner scan's loops.
    let p = rows(&mut s, &format!("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) {}", queries[2])).join("\n");
    assert!(p.contains("Index Scan using big_id on big (actual rows=1 loops=20)"), "{p}");
}

#[test]
fn review_regressions() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    // A merge join over two key columns, one right row NULL in the second.
    s.execute("CREATE TABLE m1 (a int, b int); CREATE TABLE m2 (a int, b int)").unwrap();
    s.execute("INSERT INTO m1 VALUES (1, 5), (2, 1), (3, 3); INSERT INTO m2 VALUES (1, NULL), (2, 1), (3, 3), (1, 5)").unwrap();
    ok(&mut s, "SET enable_hashjoin = off");
    assert!(plan(&mut s, "SELECT * FROM m1 x JOIN m2 y ON x.a = y.a AND x.b = y.b").contains("Merge Join"));
    let mut r = rows(&mut s, "SELECT * FROM m1 x JOIN m2 y ON x.a = y.a AND x.b = y.b");
    r.sort();
    assert_eq!(r, ["1|5|1|5", "2|1|2|1", "3|3|3|3"]);
    assert_eq!(rows(&mut s, "SELECT count(*) FROM m1 x FULL JOIN m2 y ON x.a = y.a AND x.b = y.b"), ["4"]);
    ok(&mut s, "SET enable_hashjoin = DEFAULT");
    // An ANALYZE in a text leaves the other statements' text alone.
    s.execute("CREATE TABLE lit (v text); INSERT INTO lit VALUES (E'q\\\\x'), ('a''b'); ANALYZE lit").unwrap();
    assert_eq!(rows(&mut s, "SELECT v, length(v) FROM lit ORDER BY 1"), ["a'b|3", "q\\x|3"]);
    let e = s.execute("ANALYZE lit v").unwrap_err();
    assert_eq!(e.code, "42601");
    s.execute("CREATE TABLE \"we\"\"ird\" (x int); ANALYZE \"we\"\"ird\" (x)").unwrap();
    // ANALYZE of a view with columns: skipped with a warning.
    s.execute("CREATE VIEW v AS SELECT 1 AS a").unwrap();
    let r = s.execute("ANALYZE v (a)").unwrap();
    assert!(r[0].notices.iter().any(|n| n.contains("skipping \"v\"")), "{:?}", r[0].notices);
    // Wide values stay out of the statistics.
    s.execute("CREATE TABLE w (t text); INSERT INTO w SELECT repeat(md5(g::text), 100) FROM generate_series(1, 20) g; ANALYZE w").unwrap();
    assert_eq!(rows(&mut s, "SELECT n_distinct, most_common_freqs IS NULL FROM pg_stats WHERE tablename = 'w'"), ["-1|t"]);
}

#[test]
fn syntax_errors_carry_their_position() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    // (text, message, 1-based character position), as PostgreSQL 15 reports them.
    for (sql, msg, pos) in [
        ("selec 1", "syntax error at or near \"selec\"", 1),
        ("select 1 +", "syntax error at end of input", 11),
        ("select 1 from t where (a = 1", "syntax error at end of input", 29),
        ("select 1,\n  2 3", "syntax error at or near \"3\"", 15),
        ("select 'é', 2 3", "syntax error at or near \"3\"", 15),
    ] {
        let e = s.execute(sql).unwrap_err();
        assert_eq!((e.code, e.message.as_str(), e.position), ("42601", msg, pos), "{sql}");
    }
}

#[test]
fn unknown_columns_and_relations_carry_their_position() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE pp (a int, b int); CREATE VIEW vv AS SELECT a FROM pp").unwrap();
    // (text, SQLSTATE, message, position), as PostgreSQL 15 reports them.
    for (sql, code, msg, pos) in [
        ("select nosuch from pp", "42703", "column \"nosuch\" does not exist", 8),
        ("select pp.a, x.b from pp", "42P01", "missing FROM-clause entry for table \"x\"", 14),
        ("select a from nosuch", "42P01", "relation \"nosuch\" does not exist", 15),
        ("select a,\n  zz from pp where b = 1", "42703", "column \"zz\" does not exist", 13),
        ("select * from vv where nosuch = 1", "42703", "column \"nosuch\" does not exist", 24),
        ("select a from pp, vv", "42702", "column reference \"a\" is ambiguous", 8),
        ("select p.zz from pp p", "42703", "column p.zz does not exist", 8),
        ("update pp set a = 1 where zz = 2", "42703", "column \"zz\" does not exist", 27),
        // A literal's input error points at the literal; the select list's errors come
        // before WHERE's.
        ("select 'x'::int", "22P02", "invalid input syntax for type integer: \"x\"", 8),
        ("select cast('x' as int)", "22P02", "invalid input syntax for type integer: \"x\"", 13),
        ("select date 'abc'", "22007", "invalid input syntax for type date: \"abc\"", 13),
        ("select interval 'zz'", "22007", "invalid input syntax for type interval: \"zz\"", 17),
        ("select nosuch1 from pp where nosuch2 = 1", "42703", "column \"nosuch1\" does not exist", 8),
    ] {
        let e = s.execute(sql).unwrap_err();
        assert_eq!((e.code, e.message.as_str(), e.char_position()), (code, msg, Some(pos)), "{sql}");
    }
    // `operator does not exist` at the operator (past a cast's type and parentheses), the
    // IN and ANY keywords' operators included, as PostgreSQL 15 reports them.
    for (sql, msg, pos) in [
        ("select '{\"a\":1}'::json #- '{a}'", "operator does not exist: json #- unknown", 24),
        ("select (1) + 'a'::text", "operator does not exist: integer + text", 12),
        ("select 1\n  +   true", "operator does not exist: integer + boolean", 12),
        ("select 'a' ~~ 1", "operator does not exist: unknown ~~ integer", 12),
        ("select 1 like 'a'", "operator does not exist: integer ~~ unknown", 10),
        ("select 1 = any(array['a'::text])", "operator does not exist: integer = text", 10),
        ("select 1 in ('a'::text, 2)", "operator does not exist: integer = text", 10),
        ("select 1 in (select 'a'::text)", "operator does not exist: integer = text", 10),
        ("select a from pp where a::int8 not in (1, 'x'::text)", "operator does not exist: bigint <> text", 32),
    ] {
        let e = s.execute(sql).unwrap_err();
        assert_eq!((e.code, e.message.as_str(), e.char_position()), ("42883", msg, Some(pos)), "{sql}");
    }
    // A prepared statement's error has its position in the prepared text.
    let p = heapstore::sql::prepare("select b,\n nosuch from pp where a = $1").unwrap();
    let e = heapstore::sql::execute_prepared(&mut s, &p, &[Some("1".into())], &mut heapstore::sql::CopyIo::default()).unwrap_err();
    assert_eq!(e.char_position(), Some(12));
}

#[test]
fn an_index_gives_order_by_its_order_and_a_limit_reads_only_the_first_rows() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    ok(&mut s, "ANALYZE");
    // A LIMIT over the whole table: the index read forward or backward, no sort.
    let p = plan(&mut s, "SELECT * FROM u ORDER BY id LIMIT 3");
    assert!(p.contains("Index Scan using u_pkey on u") && !p.contains("Sort"), "{p}");
    let p = plan(&mut s, "SELECT * FROM u ORDER BY id DESC LIMIT 3");
    assert!(p.contains("Index Scan Backward using u_pkey on u") && !p.contains("Sort"), "{p}");
    assert_eq!(rows(&mut s, "SELECT id FROM u ORDER BY id DESC LIMIT 3"), vec!["500", "499", "498"]);
    // NULLs last ascending and first descending, as the index holds them; another NULL
    // placement, or mixed directions, keep the sort.
    let p = plan(&mut s, "SELECT k FROM o ORDER BY k DESC LIMIT 3");
    assert!(p.contains("Index Only Scan Backward using o_k on o") && !p.contains("Sort"), "{p}");
    for q in ["SELECT k FROM o ORDER BY k DESC NULLS LAST LIMIT 3", "SELECT k FROM o ORDER BY k NULLS FIRST LIMIT 3"] {
        assert!(plan(&mut s, q).contains("Sort Key"), "{q}");
    }
    // Without a LIMIT, the whole table through the index costs more than a sort.
    assert!(plan(&mut s, "SELECT * FROM o ORDER BY k").contains("Sort Key: k"));
    // A rare filter: reading the index until LIMIT rows pass it would read most of the table.
    assert!(plan(&mut s, "SELECT * FROM o WHERE oid = 77 ORDER BY k LIMIT 2").contains("Sort Key: k"));
    // A range the index already reads gives its order for free, backward too.
    let p = plan(&mut s, "SELECT id FROM u WHERE id BETWEEN 10 AND 20 ORDER BY id DESC");
    assert!(p.contains("Backward") && !p.contains("Sort"), "{p}");
    assert_eq!(rows(&mut s, "SELECT id FROM u WHERE id BETWEEN 10 AND 13 ORDER BY id DESC"), vec!["13", "12", "11", "10"]);
    ok(&mut s, "CREATE INDEX o_uid ON o (uid)");
    assert!(plan(&mut s, "SELECT uid FROM o ORDER BY uid DESC LIMIT 3").contains("Index Only Scan Backward using o_uid"));
    assert_eq!(rows(&mut s, "SELECT uid FROM o ORDER BY uid DESC LIMIT 3"), vec!["NULL"; 3]);
    assert_eq!(rows(&mut s, "SELECT uid FROM o WHERE uid IS NOT NULL ORDER BY uid DESC LIMIT 2"), vec!["599"; 2]);
    assert_eq!(rows(&mut s, "SELECT uid FROM o ORDER BY uid LIMIT 2"), vec!["0"; 2]);
    // min and max alone read the first row of the index in their order that is not NULL.
    let p = plan(&mut s, "SELECT max(uid) FROM o");
    assert!(p.contains("Limit") && p.contains("Index Only Scan Backward using o_uid"), "{p}");
    assert_eq!(rows(&mut s, "SELECT max(uid), (SELECT min(uid) FROM o) FROM o"), vec!["599|0"]);
    assert_eq!(rows(&mut s, "SELECT max(uid) FROM o WHERE uid IS NULL"), vec!["NULL"]);
}

#[test]
fn analyze_takes_several_tables_each_with_its_columns() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    ok(&mut s, "CREATE TABLE \"Q t\" (a int, b int)");
    ok(&mut s, "INSERT INTO \"Q t\" SELECT g, g % 3 FROM generate_series(1, 30) g");
    assert_eq!(ok(&mut s, "ANALYZE u (name), \"Q t\", o (k)"), "ANALYZE");
    let got = rows(&mut s, "SELECT tablename || '.' || attname FROM pg_stats ORDER BY 1");
    assert_eq!(got, vec!["Q t.a", "Q t.b", "o.k", "u.name"]);
    let notices = s.execute("ANALYZE VERBOSE u, o").unwrap().pop().unwrap().notices;
    assert_eq!(notices.iter().filter(|n| n.contains("analyzing")).count(), 2, "{notices:?}");
    for bad in ["ANALYZE u,", "ANALYZE , u", "ANALYZE u o"] {
        assert_eq!(s.execute(bad).unwrap_err().code, "42601", "{bad}");
    }
    assert_eq!(s.execute("ANALYZE u, nosuch").unwrap_err().code, "42P01");
    assert_eq!(s.execute("ANALYZE u, o (nosuch)").unwrap_err().code, "42703");
}

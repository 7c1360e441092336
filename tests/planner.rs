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
    let e = s.execute("ANALYZE o, u").unwrap_err();
    assert_eq!(e.code, "0A000");
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

//! The query executor: sorts, hash aggregates and hash joins that outgrow `work_mem` spill to
//! temporary files and give the same answers as in memory; `temp_file_limit` is enforced;
//! EXPLAIN ANALYZE says which happened.

mod common;

use common::new_db;
use heapstore::Session;

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Option<String>>> {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).pop().unwrap().rows
}

fn plan(s: &mut Session, sql: &str) -> String {
    rows(s, &format!("EXPLAIN (ANALYZE, TIMING OFF) {sql}")).into_iter().map(|r| r[0].clone().unwrap()).collect::<Vec<_>>().join("\n")
}

/// 40,000 rows: `big(id, k, v)` with 4,000 distinct `k`, and `small(k, name)`.
fn setup(s: &mut Session) {
    s.execute("CREATE TABLE big (id int, k int, v text)").unwrap();
    s.execute("CREATE TABLE small (k int, name text)").unwrap();
    let mut csv = String::new();
    for i in 0..40_000u32 {
        let k = (i.wrapping_mul(2_654_435_761) >> 7) % 4000;
        csv.push_str(&format!("{i},{k},value-{}\n", i % 977));
    }
    common::copy_in(s, "COPY big FROM STDIN WITH (FORMAT csv)", csv.as_bytes()).unwrap();
    let mut csv = String::new();
    for k in (0..4000).step_by(2) {
        csv.push_str(&format!("{k},name-{k}\n"));
    }
    common::copy_in(s, "COPY small FROM STDIN WITH (FORMAT csv)", csv.as_bytes()).unwrap();
}

#[test]
fn spilling_gives_the_in_memory_answers() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    let queries = [
        ("SELECT id, k, v FROM big ORDER BY v DESC, k, id", "external merge"),
        ("SELECT k, count(*), sum(id), max(v), count(DISTINCT v) FROM big GROUP BY k ORDER BY k", "Disk Usage"),
        ("SELECT b.id, s.name FROM big b JOIN small s ON b.k = s.k ORDER BY b.id", "Batches: 16"),
        ("SELECT b.id, s.name FROM small s RIGHT JOIN big b ON b.k = s.k ORDER BY b.id", "Batches: 16"),
        ("SELECT s.k, count(b.id) FROM big b FULL JOIN small s ON b.k = s.k + 1 GROUP BY s.k ORDER BY 1 NULLS FIRST", "Batches: 16"),
        ("SELECT DISTINCT v FROM big ORDER BY v", "external merge"),
    ];
    for (q, sign) in queries {
        s.execute("SET work_mem = '64MB'").unwrap();
        let want = rows(&mut s, q);
        assert!(!plan(&mut s, q).contains(sign), "{q}: fits in 64MB");
        s.execute("SET work_mem = '64kB'").unwrap();
        let got = rows(&mut s, q);
        assert_eq!(got.len(), want.len(), "{q}");
        assert!(got == want, "{q}: spilled answer differs");
        let p = plan(&mut s, q);
        assert!(p.contains(sign), "{q}: expected {sign} in\n{p}");
    }
    // Nothing is left in pgsql_tmp.
    let tmp = _dir.join("pgsql_tmp");
    assert!(std::fs::read_dir(&tmp).map(|d| d.count()).unwrap_or(0) == 0);
}

#[test]
fn temp_file_limit_stops_a_spilling_sort() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    setup(&mut s);
    s.execute("SET work_mem = '64kB'").unwrap();
    s.execute("SET temp_file_limit = 100").unwrap();
    let e = s.execute("SELECT * FROM big ORDER BY v").unwrap_err();
    assert_eq!(e.code, "53400", "{e}");
    assert!(e.message.contains("temp_file_limit (100kB)"), "{e}");
    s.execute("SET temp_file_limit = -1").unwrap();
    assert_eq!(rows(&mut s, "SELECT count(*) FROM (SELECT * FROM big ORDER BY v) x"), vec![vec![Some("40000".to_string())]]);
    assert_eq!(rows(&mut s, "SHOW work_mem"), vec![vec![Some("64kB".to_string())]]);
}

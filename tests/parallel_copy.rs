//! Parallel COPY within one session (`COPY ... WITH (PARALLEL n)`): it loads the same rows as
//! a serial COPY, in text, CSV and binary, and fails with the same first error (line, column,
//! value, DETAIL), all-or-nothing. The inputs span several of COPY's 512 kB chunks, so records
//! cross chunk cuts and errors sit in later chunks than the one that is loaded first.

mod common;
use common::*;
use heapstore::{PgError, Session};
use std::sync::atomic::Ordering;

fn setup(s: &mut Session, ddl: &str) {
    s.execute("DROP TABLE IF EXISTS t").unwrap();
    s.execute(ddl).unwrap();
}

/// The table's rows as COPY text lines, sorted (parallel workers fill different pages).
fn sorted_rows(s: &mut Session) -> Vec<String> {
    let out = copy_out(s, "COPY t TO STDOUT");
    let mut v: Vec<String> = String::from_utf8(out).unwrap().lines().map(str::to_string).collect();
    v.sort();
    v
}

/// Loads `data` serially and with 1, 2 and 4 workers into fresh tables made by `ddl`; the
/// rows and the COPY tags are the same every time. Returns the row count.
fn same_rows(s: &mut Session, ddl: &str, options: &str, data: &[u8]) -> usize {
    let with = |p: &str| if options.is_empty() { format!("WITH ({p})") } else { format!("WITH ({options}{p})") };
    setup(s, ddl);
    let serial_sql = if options.is_empty() {
        "COPY t FROM STDIN".to_string()
    } else {
        format!("COPY t FROM STDIN WITH ({})", options.trim_end_matches(", "))
    };
    let tag = copy_in(s, &serial_sql, data).unwrap()[0].tag.clone();
    let want = sorted_rows(s);
    for n in [1, 2, 4] {
        setup(s, ddl);
        let launched = s.shared().parallel_workers_launched.load(Ordering::Relaxed);
        let got = copy_in(s, &format!("COPY t FROM STDIN {}", with(&format!("PARALLEL {n}"))), data).unwrap();
        let now = s.shared().parallel_workers_launched.load(Ordering::Relaxed);
        let free = s.shared().settings.int("max_parallel_workers") as u64;
        // PARALLEL 1 runs serially; more starts that many workers if they are free.
        assert_eq!(now - launched, if n > 1 { (n as u64).min(free) } else { 0 }, "PARALLEL {n}: workers launched");
        assert_eq!(got[0].tag, tag, "PARALLEL {n}");
        assert!(sorted_rows(s) == want, "PARALLEL {n} loaded other rows");
    }
    want.len()
}

/// The error a serial COPY of `data` raises, then the same for PARALLEL 2 and 3; each leaves
/// the table empty and usable.
fn same_error(s: &mut Session, ddl: &str, options: &str, data: &[u8]) -> PgError {
    let sql = |extra: &str| {
        let all: Vec<&str> = [options, extra].into_iter().filter(|o| !o.is_empty()).collect();
        if all.is_empty() {
            "COPY t FROM STDIN".to_string()
        } else {
            format!("COPY t FROM STDIN WITH ({})", all.join(", "))
        }
    };
    setup(s, ddl);
    let want = copy_in(s, &sql(""), data).unwrap_err();
    assert_eq!(count(s, "t"), 0);
    for n in [2, 3] {
        setup(s, ddl);
        let got = copy_in(s, &sql(&format!("PARALLEL {n}")), data).unwrap_err();
        assert_eq!(
            (got.code, &got.message, &got.detail, &got.context),
            (want.code, &want.message, &want.detail, &want.context),
            "PARALLEL {n}"
        );
        assert_eq!(count(s, "t"), 0, "a failed parallel COPY left rows");
    }
    s.execute("INSERT INTO t (id) VALUES (-1)").unwrap();
    assert_eq!(count(s, "t"), 1);
    want
}

fn text_rows(n: usize) -> Vec<u8> {
    rows(n, true)
}

/// As [`text_rows`], one physical line per row (line k + 1 is row k).
fn line_rows(n: usize) -> Vec<String> {
    String::from_utf8(rows(n, false)).unwrap().lines().map(str::to_string).collect()
}

fn rows(n: usize, feeds: bool) -> Vec<u8> {
    let mut d = String::new();
    for i in 0..n {
        // Escapes, an escaped line feed inside a value, NULLs and multi-byte text.
        match i % 5 {
            0 => d.push_str(&format!("{i}\tplain {i}\t{}\n", i * 3)),
            1 if feeds => d.push_str(&format!("{i}\ttab\\there\\\\ and \\\nfeed\t\\N\n")),
            1 => d.push_str(&format!("{i}\ttab\\there\\\\ and \\nfeed\t\\N\n")),
            2 => d.push_str(&format!("{i}\tnaïve ☃ {i}\t{}\n", -(i as i64))),
            3 => d.push_str(&format!("{i}\t\\N\t7\n")),
            _ => d.push_str(&format!("{i}\t\\x41\\101 octal and hex\t0\n")),
        }
    }
    d.into_bytes()
}

const DDL: &str = "CREATE TABLE t (id int NOT NULL, v text, w bigint)";

#[test]
fn text_rows_are_the_same_with_any_number_of_workers() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    let data = text_rows(200_000);
    assert!(data.len() > 4 * (512 << 10), "the input must span several chunks");
    assert_eq!(same_rows(&mut s, DDL, "", &data), 200_000);
}

#[test]
fn csv_records_with_quoted_line_breaks_and_crlf_are_the_same() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    let mut d = String::from("id,v,w\r\n");
    for i in 0..150_000 {
        match i % 4 {
            0 => d.push_str(&format!("{i},\"multi\r\nline \"\"quoted\"\" \n{i}\",{i}\r\n")),
            1 => d.push_str(&format!("{i},,\r\n")),
            2 => d.push_str(&format!("{i},\"\",-{i}\r\n")),
            _ => d.push_str(&format!("{i},\"a,b\",1\r\n")),
        }
    }
    assert_eq!(same_rows(&mut s, DDL, "FORMAT csv, HEADER, ", d.as_bytes()), 150_000);
}

#[test]
fn binary_tuples_are_the_same() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    setup(&mut s, DDL);
    copy_in(&mut s, "COPY t FROM STDIN", &text_rows(120_000)).unwrap();
    let bin = copy_out(&mut s, "COPY t TO STDOUT WITH (FORMAT binary)");
    assert_eq!(same_rows(&mut s, DDL, "FORMAT binary, ", &bin), 120_000);
}

#[test]
fn indexes_and_toast_are_kept_by_every_worker() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    let ddl = "CREATE TABLE t (id int PRIMARY KEY, v text, w bigint)";
    let mut d = String::new();
    for i in 0..60_000 {
        // Every 1000th value is large enough to go out of line.
        let v = if i % 1000 == 0 { format!("{i}-{}", "xy".repeat(3000)) } else { format!("v{i}") };
        d.push_str(&format!("{i}\t{v}\t{i}\n"));
    }
    assert_eq!(same_rows(&mut s, ddl, "", d.as_bytes()), 60_000);
    for id in [0, 1, 29_999, 30_000, 59_999] {
        let r = s.execute(&format!("SELECT w, length(v) FROM t WHERE id = {id}")).unwrap();
        assert_eq!(r[0].rows.len(), 1, "id {id} through the index");
        assert_eq!(r[0].rows[0][0].as_deref(), Some(id.to_string().as_str()));
    }
    let e = s.execute("INSERT INTO t VALUES (42, 'again', 0)").unwrap_err();
    assert_eq!(e.code, "23505");
}

#[test]
fn the_first_bad_value_is_the_one_reported() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    let mut lines = line_rows(150_000);
    // Line 140,001 (a late chunk) and line 90,001 are bad; a serial COPY stops at the earlier.
    lines[140_000] = "140000\tx\tnot a number".into();
    lines[90_000] = "90000\tx\t12abc".into();
    let data = lines.join("\n") + "\n";
    let e = same_error(&mut s, DDL, "", data.as_bytes());
    assert_eq!(e.code, "22P02");
    assert_eq!(e.context.as_deref(), Some("COPY t, line 90001, column w: \"12abc\""));
}

#[test]
fn field_count_not_null_and_encoding_errors_match() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    let base = line_rows(100_000);
    let with = |k: usize, line: &str| {
        let mut l = base.clone();
        l[k] = line.to_string();
        (l.join("\n") + "\n").into_bytes()
    };
    let e = same_error(&mut s, DDL, "", &with(77_777, "1\t2"));
    assert_eq!(e.message, "missing data for column \"w\"");
    let e = same_error(&mut s, DDL, "", &with(66_666, "1\t2\t3\t4"));
    assert_eq!(e.message, "extra data after last expected column");
    let e = same_error(&mut s, DDL, "", &with(55_555, "\\N\tx\t1"));
    assert_eq!(e.code, "23502");
    // Invalid UTF-8 is found by the reading thread (the leader): same line all the same.
    let mut bad = with(44_444, "1\tABC\t1");
    let at = bad.windows(3).position(|w| w == b"ABC").unwrap();
    bad[at + 1] = 0xff;
    let e = same_error(&mut s, DDL, "", &bad);
    assert_eq!(e.code, "22021");
    assert_eq!(e.context.as_deref(), Some("COPY t, line 44445"));
    // A bad value before the bad bytes, in the same chunk, comes first.
    let mut both = bad.clone();
    let early = both.windows(9).position(|w| w == b"44440\tpla").unwrap();
    both[early] = b'x';
    let e = same_error(&mut s, DDL, "", &both);
    assert_eq!(e.code, "22P02");
    // A literal carriage return in a line-feed file.
    let e = same_error(&mut s, DDL, "", &with(88_888, "1\tcr\rhere\t1"));
    assert_eq!(e.message, "literal carriage return found in data");
    // An unterminated quoted CSV field at the end.
    let mut csv = String::new();
    for i in 0..80_000 {
        csv.push_str(&format!("{i},v,{i}\n"));
    }
    csv.push_str("1,\"open,1\n");
    let e = same_error(&mut s, DDL, "FORMAT csv", csv.as_bytes());
    assert_eq!(e.message, "unterminated CSV quoted field");
}

#[test]
fn a_unique_violation_names_the_later_line_as_serially() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    let ddl = "CREATE TABLE t (id int PRIMARY KEY, v text, w bigint)";
    let mut lines: Vec<String> = (0..120_000).map(|i| format!("{i}\tv{i}\t{i}")).collect();
    // Key 5 again at line 110,001 and key 100,000 again at line 100,002: the serial COPY
    // meets the second pair first.
    lines[110_000] = "5\tdup\t0".into();
    lines[100_001] = "100000\tdup\t0".into();
    let data = lines.join("\n") + "\n";
    let e = same_error(&mut s, ddl, "", data.as_bytes());
    assert_eq!(e.code, "23505");
    assert_eq!(e.detail.as_deref(), Some("Key (id)=(100000) already exists."));
    // A duplicate and a bad value 100 lines later, in the same chunk.
    lines[100_100] = "x\tbad\t0".into();
    let data = lines.join("\n") + "\n";
    // Which comes first depends on where the batch ends; parallel and serial agree on it.
    same_error(&mut s, ddl, "", data.as_bytes());
}

#[test]
fn the_end_marker_and_header_are_honoured() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    let mut data = text_rows(90_000);
    data.extend_from_slice(b"\\.\nthis is not read\n");
    assert_eq!(same_rows(&mut s, DDL, "", &data), 90_000);
    let mut h = b"id\tv\tw\n".to_vec();
    h.extend_from_slice(&text_rows(70_000));
    assert_eq!(same_rows(&mut s, DDL, "HEADER, ", &h), 70_000);
}

#[test]
fn the_option_is_checked() {
    let (_t, _d, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id int, parallel int)").unwrap();
    let e = copy_in(&mut s, "COPY t FROM STDIN WITH (PARALLEL 0)", b"").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("22023", "value 0 out of bounds for option \"parallel\""));
    let e = copy_in(&mut s, "COPY t FROM STDIN WITH (PARALLEL x)", b"").unwrap_err();
    assert_eq!(e.code, "42601");
    let e = copy_in(&mut s, "COPY t FROM STDIN WITH (PARALLEL 2, PARALLEL 3)", b"").unwrap_err();
    assert_eq!(e.message, "conflicting or redundant options");
    let e = s.execute("COPY t TO STDOUT WITH (PARALLEL 2)").unwrap_err();
    assert_eq!(e.code, "0A000");
    let e = s.execute("COPY (SELECT 1) TO STDOUT WITH (PARALLEL 2)").unwrap_err();
    assert_eq!(e.code, "0A000");
    // A column named parallel is a column; the option may sit anywhere in the list.
    let r = copy_in(&mut s, "COPY t (id, parallel) FROM STDIN WITH (FORMAT csv, PARALLEL 2, HEADER)", b"a,b\n1,2\n3,4\n").unwrap();
    assert_eq!(r[0].tag, "COPY 2");
    let r = copy_in(&mut s, "copy t from stdin with (parallel '2')", b"5\t6\n").unwrap();
    assert_eq!(r[0].tag, "COPY 1");
    assert_eq!(count(&mut s, "t"), 3);
}

#[test]
fn without_free_workers_the_copy_runs_serially() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB", "max_parallel_workers=0"]);
    let mut s = db.session();
    assert_eq!(same_rows(&mut s, DDL, "", &text_rows(50_000)), 50_000);
}

#[test]
fn a_savepoint_rollback_undoes_a_parallel_copy() {
    let (_t, _d, db) = new_db(&["shared_buffers=64MB"]);
    let mut s = db.session();
    s.execute(DDL).unwrap();
    s.execute("BEGIN").unwrap();
    copy_in(&mut s, "COPY t FROM STDIN", b"1\ta\t1\n").unwrap();
    s.execute("SAVEPOINT a").unwrap();
    copy_in(&mut s, "COPY t FROM STDIN WITH (PARALLEL 2)", &text_rows(80_000)).unwrap();
    assert_eq!(count(&mut s, "t"), 80_001);
    s.execute("ROLLBACK TO SAVEPOINT a").unwrap();
    assert_eq!(count(&mut s, "t"), 1);
    s.execute("COMMIT").unwrap();
    assert_eq!(count(&mut s, "t"), 1);
}

#[test]
fn one_kilobyte_chunks_cut_between_every_few_records() {
    // With 1 kB chunks almost every CSV record with line breaks in quotes starts a chunk, and
    // workers hand over far more often than they load.
    let (_t, _d, db) = new_db(&["shared_buffers=64MB", "heapstore.copy_chunk_size=1kB"]);
    let mut s = db.session();
    let mut d = String::new();
    for i in 0..20_000 {
        d.push_str(&format!("{i},\"a\nb {i}\",{i}\n"));
    }
    assert_eq!(same_rows(&mut s, DDL, "FORMAT csv, ", d.as_bytes()), 20_000);
    let ddl = "CREATE TABLE t (id int PRIMARY KEY, v text, w bigint)";
    let mut lines: Vec<String> = (0..20_000).map(|i| format!("{i}\tv\t{i}")).collect();
    lines[19_000] = "17\tdup\t0".into();
    lines[18_000] = "x\tbad\t0".into();
    let e = same_error(&mut s, ddl, "", (lines.join("\n") + "\n").as_bytes());
    assert_eq!(e.context.as_deref(), Some("COPY t, line 18001, column id: \"x\""));
}

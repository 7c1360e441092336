//! End-to-end behaviour of the engine through its library API and its binary.

mod common;
use common::*;
use heapstore::Database;
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn one_megabyte_text_and_100k_bytea_round_trip() {
    let (_t, dir, db) = new_db(&["shared_buffers=1MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE big (id integer, t text, b bytea)").unwrap();
    let text: String = (0..1_000_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    let bytes: Vec<u8> = (0..100_000u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let line = format!("1\t{text}\t\\\\x{hex}\n2\tsmall\t\\\\x00\n");
    copy_in(&mut s, "COPY big FROM STDIN", line.as_bytes()).unwrap();
    let out = copy_out(&mut s, "COPY big TO STDOUT");
    assert!(out == line.as_bytes(), "large values did not round trip");
    drop(s);
    db.close().unwrap();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert!(copy_out(&mut s, "COPY big TO STDOUT") == line.as_bytes(), "large values lost at restart");
    let csv = copy_out(&mut s, "COPY big TO STDOUT WITH (FORMAT binary)");
    s.execute("CREATE TABLE big2 (id integer, t text, b bytea)").unwrap();
    copy_in(&mut s, "COPY big2 FROM STDIN WITH (FORMAT binary)", &csv).unwrap();
    assert!(copy_out(&mut s, "COPY big2 TO STDOUT") == line.as_bytes());
}

#[test]
fn failed_copy_leaves_nothing_and_table_stays_usable() {
    let (_t, _dir, db) = new_db(&["shared_buffers=1MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (a integer NOT NULL, b text)").unwrap();
    let mut data = String::new();
    for i in 0..50_000 {
        data.push_str(&format!("{i}\trow {i}\n"));
    }
    data.push_str("oops\tbad\n");
    let e = copy_in(&mut s, "COPY t FROM STDIN", data.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("line 50001, column a: \"oops\""), "{e}");
    assert_eq!(count(&mut s, "t"), 0);
    copy_in(&mut s, "COPY t FROM STDIN", b"1\tone\n2\ttwo\n").unwrap();
    assert_eq!(count(&mut s, "t"), 2);
}

#[test]
fn transactions_group_statements_and_roll_back_ddl() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("BEGIN; CREATE TABLE a (x integer); ROLLBACK").unwrap();
    assert!(s.execute("SELECT count(*) FROM a").unwrap_err().message.contains("does not exist"));
    s.execute("CREATE TABLE a (x integer)").unwrap();
    copy_in(&mut s, "COPY a FROM STDIN", b"1\n2\n").unwrap();
    s.execute("BEGIN").unwrap();
    copy_in(&mut s, "COPY a FROM STDIN", b"3\n").unwrap();
    assert_eq!(count(&mut s, "a"), 3, "a transaction sees its own rows");
    {
        let mut other = db.session();
        assert_eq!(count(&mut other, "a"), 2, "others do not see uncommitted rows");
    }
    s.execute("ROLLBACK").unwrap();
    assert_eq!(count(&mut s, "a"), 2);
    // An error inside a block fails it until ROLLBACK / COMMIT.
    s.execute("BEGIN").unwrap();
    assert!(s.execute("SELECT count(*) FROM nope").is_err());
    let e = s.execute("SELECT count(*) FROM a").unwrap_err();
    assert_eq!(e.code, "25P02");
    let r = s.execute("COMMIT").unwrap();
    assert_eq!(r[0].tag, "ROLLBACK");
    // TRUNCATE and DROP are transactional.
    s.execute("BEGIN; TRUNCATE a").unwrap();
    assert_eq!(count(&mut s, "a"), 0);
    s.execute("ROLLBACK").unwrap();
    assert_eq!(count(&mut s, "a"), 2);
    s.execute("BEGIN; DROP TABLE a; ROLLBACK").unwrap();
    assert_eq!(count(&mut s, "a"), 2);
    s.execute("TRUNCATE a").unwrap();
    assert_eq!(count(&mut s, "a"), 0);
    copy_in(&mut s, "COPY a FROM STDIN", b"7\n").unwrap();
    // A multi-statement string is one implicit transaction: an error undoes all of it.
    assert!(s.execute("CREATE TABLE b (y integer); SELECT count(*) FROM missing").is_err());
    assert!(s.lookup_table("b").is_none());
    drop(s);
    db.close().unwrap();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(count(&mut s, "a"), 1);
    s.execute("DROP TABLE a").unwrap();
    s.execute("DROP TABLE IF EXISTS a").unwrap();
    assert_eq!(s.execute("DROP TABLE a").unwrap_err().code, "42P01");
    drop(s);
    db.close().unwrap();
    // Only the catalog's files remain: dropped and truncated files are gone.
    let files: Vec<_> = std::fs::read_dir(dir.join("base")).unwrap().collect();
    assert!(files.is_empty(), "orphan relation files: {files:?}");
}

#[test]
fn second_process_gets_error_naming_owner_pid() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    Database::init(&dir, &[]).unwrap();
    {
        let db = Database::open(&dir, &[]).unwrap();
        db.session().execute("CREATE TABLE t (a integer)").unwrap();
        db.close().unwrap();
    }
    // A child holds the directory while it waits for COPY data on stdin.
    let mut child = Command::new(bin())
        .arg("-D")
        .arg(&dir)
        .args(["-c", "COPY t FROM STDIN"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the child has written its pid into the lock file (never opening it ourselves,
    // which would make the child the second opener).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_to_string(dir.join("heapstore.pid")).unwrap_or_default().lines().next() != Some(&pid.to_string()) {
        assert!(std::time::Instant::now() < deadline, "child never took the lock");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let err = Database::open(&dir, &[]).err().expect("a second opener must be refused");
    assert!(err.message.contains("in use"), "{err}");
    assert!(err.message.contains(&format!("pid {pid}")), "{err}");
    child.stdin.take().unwrap().write_all(b"1\n2\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(!dir.join("heapstore.pid").exists(), "a clean shutdown removes the pid file");
    let db = Database::open(&dir, &[]).unwrap();
    assert!(dir.join("heapstore.pid").exists());
    assert_eq!(count(&mut db.session(), "t"), 2);
    db.close().unwrap();
    assert!(!dir.join("heapstore.pid").exists(), "a clean shutdown removes the pid file");
}

#[test]
fn crash_keeps_committed_rows_and_resets_unlogged_tables() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    Database::init(&dir, &[]).unwrap();
    {
        let db = Database::open(&dir, &[]).unwrap();
        let mut s = db.session();
        s.execute("CREATE TABLE t (a integer, b text); CREATE UNLOGGED TABLE u (a integer)").unwrap();
        copy_in(&mut s, "COPY t FROM STDIN", b"1\tx\n").unwrap();
        copy_in(&mut s, "COPY u FROM STDIN", b"1\n2\n").unwrap();
        drop(s);
        db.close().unwrap();
    }
    let mut child = Command::new(bin())
        .arg("-D")
        .arg(&dir)
        .args(["-c", "COPY t FROM STDIN"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..20_000 {
        writeln!(stdin, "{i}\tsome row text {i}").unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let db = Database::open(&dir, &[]).unwrap();
    assert!(db.shared().startup_messages.iter().any(|m| m.contains("not properly shut down")));
    let mut s = db.session();
    assert_eq!(count(&mut s, "t"), 1, "the committed row survives; the killed COPY left nothing");
    assert_eq!(count(&mut s, "u"), 0, "an UNLOGGED table is reset after a crash");
    copy_in(&mut s, "COPY t FROM STDIN", b"5\tafter\n").unwrap();
    assert_eq!(count(&mut s, "t"), 2);
}

#[test]
fn corrupted_page_is_reported_with_relation_and_block() {
    let (_t, dir, db) = new_db(&["shared_buffers=1MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (a integer, b text)").unwrap();
    let mut data = String::new();
    for i in 0..5000 {
        data.push_str(&format!("{i}\tpadding padding padding {i}\n"));
    }
    copy_in(&mut s, "COPY t FROM STDIN", data.as_bytes()).unwrap();
    let rel = s.table("t").unwrap().relfile;
    drop(s);
    db.close().unwrap();
    let path = dir.join("base").join(rel.0.to_string());
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8192 * 2 + 4000] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let db = Database::open(&dir, &[]).unwrap();
    let e = db.session().execute("SELECT count(*) FROM t").unwrap_err();
    assert_eq!(e.message, format!("invalid page in block 2 of relation base/{}", rel.0));
    assert_eq!(e.code, "XX001");
}

#[test]
fn cli_runs_statements_like_psql() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    assert!(Command::new(bin()).arg("-D").arg(&dir).args(["init", "--block-size", "4096"]).status().unwrap().success());
    let mut child = Command::new(bin())
        .arg("-D")
        .arg(&dir)
        .args([
            "--set",
            "shared_buffers=1MB",
            "-c",
            "CREATE TABLE t (a integer, b text); COPY t FROM STDIN",
            "-c",
            "SELECT * FROM t LIMIT 2",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"1\tone\n2\ttwo\n3\tthree\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "CREATE TABLE\nCOPY 3\n a |  b  \n---+-----\n 1 | one\n 2 | two\n(2 rows)\n\n");
    let out = Command::new(bin()).arg("-D").arg(&dir).args(["-A", "-t", "-c", "SELECT count(*) FROM t"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "3\n");
    let out = Command::new(bin()).arg("-D").arg(&dir).args(["--set", "block_size=8192", "-c", "SELECT 1"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be changed after init"));
    let out = Command::new(bin()).arg("-D").arg(&dir).args(["stats", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["io"].as_array().unwrap().iter().any(|r| r["extends"].as_u64().unwrap_or(0) > 0));
}

#[test]
fn prepared_statements_take_parameters_and_run_many_times() {
    let dir = tempfile::tempdir().unwrap();
    heapstore::Database::init(dir.path(), &[]).unwrap();
    let db = heapstore::Database::open(dir.path(), &[]).unwrap();
    let mut s = db.session();
    let p = s.prepare("SELECT $1, $2").unwrap();
    assert_eq!(p.nparams, 2);
    let r = s.execute_prepared(&p, &[Some("7".into()), None]).unwrap();
    assert_eq!(r.rows, vec![vec![Some("7".to_string()), None]]);
    let r = s.execute_prepared(&p, &[Some("x".into()), Some("y".into())]).unwrap();
    assert_eq!(r.rows, vec![vec![Some("x".to_string()), Some("y".to_string())]]);
    let e = s.execute_prepared(&p, &[Some("1".into())]).unwrap_err();
    assert_eq!(e.code, "08P01", "{e:?}");
    let e = s.prepare("SELECT 1; SELECT 2").unwrap_err();
    assert_eq!(e.code, "42601");
    assert!(s.prepare("").unwrap().is_empty());
    drop(s);
    db.close().unwrap();
}

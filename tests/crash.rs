//! Crash safety, tested by killing processes and by injecting faults at the storage boundary.
//!
//! - A child process (`heapstore crash-child`) runs concurrent COPYs — small committed transactions,
//!   large ones, and ones that fail on purpose — and prints each outcome after its statement
//!   returned. The parent SIGKILLs it at a random moment, reopens the directory (recovery),
//!   and checks: every acknowledged commit is there exactly once, nothing of a failed COPY is
//!   visible, every page's checksum is valid, and the primary key of the table the child also
//!   changes with INSERT / UPDATE / DELETE / VACUUM agrees with its heap. 20 cycles by default;
//!   `HEAPSTORE_CRASH_CYCLES=500 cargo test --release --test crash` runs more.
//! - A torn page (half written, then a crash) is repaired from its full-page image.
//! - A failed fsync poisons the write path; ENOSPC fails the statement cleanly and work
//!   resumes when space is back.

mod common;
use common::*;
use heapstore::storage::{page, ForkNumber};
use heapstore::Database;
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// (first id, rows) of each batch.
type Batches = Vec<(u64, u64)>;

fn parse(lines: &[String]) -> (Batches, Batches) {
    let (mut acks, mut fails) = (Vec::new(), Vec::new());
    for l in lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 3 {
            continue;
        }
        let (a, b) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        match f[0] {
            "ACK" => acks.push((a, b)),
            "FAIL" => fails.push((a, b)),
            _ => {}
        }
    }
    (acks, fails)
}

fn verify(dir: &std::path::Path, acks: &[(u64, u64)], fails: &[(u64, u64)]) -> usize {
    let db = Database::open(dir, &["shared_buffers=4MB".to_string()]).unwrap();
    let mut s = db.session();
    let out = copy_out(&mut s, "COPY crash (id) TO STDOUT");
    let mut present = HashSet::new();
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let id: u64 = std::str::from_utf8(line).unwrap().parse().unwrap();
        assert!(present.insert(id), "row {id} present twice");
    }
    for &(first, n) in acks {
        for id in first..first + n {
            assert!(present.contains(&id), "acknowledged row {id} (batch {first}+{n}) lost");
        }
    }
    for &(first, n) in fails {
        for id in first..first + n {
            assert!(!present.contains(&id), "row {id} of a failed COPY is visible");
        }
    }
    // The row-statement table's primary key agrees with its heap: every visible row is found
    // through the index under its key, and no entry points at nothing or at another key.
    if s.lookup_table("crash_kv").is_some() {
        if let Err(e) = heapstore::sql::index::check_table(&mut s, "crash_kv").unwrap() {
            panic!("index and heap disagree after recovery: {e}");
        }
    }
    // Every page of the table verifies (its checksum is checked on every read from disk).
    let rel = s.table("crash").unwrap().relfile;
    drop(s);
    db.close().unwrap();
    let smgr = heapstore::storage::Smgr::new(dir, 8192, false).unwrap();
    let n = smgr.nblocks(rel, ForkNumber::Main).unwrap();
    for b in 0..n {
        let p = smgr.read_raw(rel, ForkNumber::Main, b).unwrap();
        page::verify(&p, b, "crash").unwrap();
    }
    present.len()
}

#[test]
fn killed_process_loses_no_acknowledged_commit() {
    let cycles: u64 = std::env::var("HEAPSTORE_CRASH_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    Database::init(&dir, &["wal_segment_size=1MB".to_string()]).unwrap();
    let (mut acks, mut fails) = (Vec::new(), Vec::new());
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    for cycle in 0..cycles {
        let mut child = Command::new(bin())
            .arg("-D")
            .arg(&dir)
            .args([
                "--set",
                "shared_buffers=2MB",
                "--set",
                "checkpoint_timeout=1s",
                "--set",
                "max_wal_size=4MB",
                "--set",
                "bgwriter_delay=20ms",
            ])
            .args(["crash-child", "--threads", "3", "--seed", &(cycle + 1).to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || BufReader::new(stdout).lines().map_while(Result::ok).collect::<Vec<String>>());
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::thread::sleep(Duration::from_millis(150 + rng % 600));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let lines = reader.join().unwrap();
        let (a, f) = parse(&lines);
        acks.extend(a);
        fails.extend(f);
        verify(&dir, &acks, &fails);
    }
    assert!(acks.len() as u64 >= cycles, "the child acknowledged too few commits to test anything: {}", acks.len());
}

#[test]
fn torn_page_is_repaired_from_its_full_page_image() {
    let (_t, dir, db) = new_db(&["shared_buffers=2MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id integer, v text)").unwrap();
    let mut data = String::new();
    for i in 0..1000 {
        data.push_str(&format!("{i}\trow {i} padding padding\n"));
    }
    copy_in(&mut s, "COPY t FROM STDIN", data.as_bytes()).unwrap();
    let rel = s.table("t").unwrap().relfile;
    db.checkpoint().unwrap();
    // The first change to a page after the checkpoint logs its full image.
    copy_in(&mut s, "COPY t FROM STDIN", b"5000\tafter the checkpoint\n").unwrap();
    assert_eq!(count(&mut s, "t"), 1001);
    // The page that COPY changed: the one with the highest LSN (a load may leave pages it
    // extended ahead empty at the end, so it need not be the last block).
    let pins = db.shared().pool.new_pins();
    let nblocks = db.shared().smgr.nblocks(rel, ForkNumber::Main).unwrap();
    let last = (0..nblocks)
        .max_by_key(|&b| {
            let buf = db.shared().pool.read_buffer(&pins, rel, ForkNumber::Main, b, None).unwrap();
            let pg = buf.lock_shared();
            page::lsn(&pg)
        })
        .unwrap();
    drop(pins);
    // Write that page torn (its first half only), then crash.
    *db.shared().smgr.faults.torn_write.lock().unwrap() = Some((rel, last));
    let pins = db.shared().pool.new_pins();
    db.shared().pool.flush_all(&pins, Some(rel)).unwrap();
    drop(pins);
    let raw = db.shared().smgr.read_raw(rel, ForkNumber::Main, last).unwrap();
    assert!(page::verify(&raw, last, "t").is_err(), "the page on disk is torn");
    drop(s);
    db.crash();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(count(&mut s, "t"), 1001, "recovery repaired the torn page");
    drop(s);
    db.close().unwrap();
    let smgr = heapstore::storage::Smgr::new(&dir, 8192, false).unwrap();
    page::verify(&smgr.read_raw(rel, ForkNumber::Main, last).unwrap(), last, "t").unwrap();
}

#[test]
fn failed_fsync_poisons_writes_until_restart() {
    let (_t, dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id integer)").unwrap();
    copy_in(&mut s, "COPY t FROM STDIN", b"1\n2\n").unwrap();
    db.shared().smgr.faults.fail_next_fsync.store(true, Ordering::Relaxed);
    let e = db.checkpoint().unwrap_err();
    assert!(e.message.contains("could not fsync"), "{e}");
    let mut big = String::new();
    for i in 0..5000 {
        big.push_str(&format!("{i}\n"));
    }
    let e = copy_in(&mut s, "COPY t FROM STDIN", big.as_bytes()).unwrap_err();
    assert!(
        e.message.contains("earlier fsync failure") && e.message.contains("could not fsync"),
        "later writes name the first failure: {e}"
    );
    drop(s);
    db.crash();
    let db = Database::open(&dir, &[]).unwrap();
    assert_eq!(count(&mut db.session(), "t"), 2, "recovery brings back what was committed");
}

#[test]
fn disk_full_fails_the_statement_cleanly_and_work_resumes() {
    let (_t, _dir, db) = new_db(&["shared_buffers=1MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id integer, v text)").unwrap();
    let mut data = String::new();
    for i in 0..20_000 {
        data.push_str(&format!("{i}\tsome text for row {i}\n"));
    }
    db.shared().smgr.faults.enospc.store(true, Ordering::Relaxed);
    let e = copy_in(&mut s, "COPY t FROM STDIN", data.as_bytes()).unwrap_err();
    assert_eq!(e.code, "53100", "{e}");
    assert_eq!(count(&mut s, "t"), 0);
    db.shared().smgr.faults.enospc.store(false, Ordering::Relaxed);
    copy_in(&mut s, "COPY t FROM STDIN", data.as_bytes()).unwrap();
    assert_eq!(count(&mut s, "t"), 20_000);
}

#[test]
fn wal_level_minimal_skips_the_wal_for_a_new_table_and_syncs_it_at_commit() {
    let (_t, dir, db) = new_db(&["wal_level=minimal"]);
    let mut s = db.session();
    let mut data = String::new();
    for i in 0..20_000 {
        data.push_str(&format!("{i}\tsome row text {i}\n"));
    }
    let before = db.stats().wal.wal_bytes;
    s.execute("BEGIN; CREATE TABLE m (id integer, v text)").unwrap();
    copy_in(&mut s, "COPY m FROM STDIN", data.as_bytes()).unwrap();
    s.execute("COMMIT").unwrap();
    let skipped = db.stats().wal.wal_bytes - before;
    // The same load into an existing table is logged.
    s.execute("CREATE TABLE l (id integer, v text)").unwrap();
    let before = db.stats().wal.wal_bytes;
    copy_in(&mut s, "COPY l FROM STDIN", data.as_bytes()).unwrap();
    let logged = db.stats().wal.wal_bytes - before;
    assert!(skipped * 20 < logged, "skipped {skipped} bytes vs logged {logged}");
    drop(s);
    db.crash();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    assert_eq!(count(&mut s, "m"), 20_000, "synced at commit");
    assert_eq!(count(&mut s, "l"), 20_000, "recovered from the WAL");
}

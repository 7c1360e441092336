//! Concurrent bulk load (issue 3): 16 sessions each COPY 100,000 distinct rows into one table,
//! for several rounds. Every row is present exactly once, no block is handed out twice, and
//! every block of the relation either holds tuples or is known to the free space map.

mod common;
use common::*;
use heapstore::access::fsm;
use heapstore::storage::{page, ForkNumber};
use std::sync::atomic::Ordering;

const SESSIONS: u64 = 16;
const ROWS: u64 = 100_000;
const ROUNDS: u64 = 3;

#[test]
fn sixteen_sessions_copy_into_one_table() {
    let (_t, _dir, db) = new_db(&["shared_buffers=32MB", "max_connections=20"]);
    db.session().execute("CREATE TABLE t (id bigint NOT NULL, v text)").unwrap();
    for round in 0..ROUNDS {
        std::thread::scope(|sc| {
            for k in 0..SESSIONS {
                let db = &db;
                sc.spawn(move || {
                    let mut s = db.session();
                    let mut data = String::with_capacity(ROWS as usize * 24);
                    for i in 0..ROWS {
                        let id = (round * SESSIONS + k) * ROWS + i;
                        data.push_str(&format!("{id}\tv{}\n", id % 977));
                    }
                    let r = copy_in(&mut s, "COPY t FROM STDIN", data.as_bytes()).unwrap();
                    assert_eq!(r[0].tag, format!("COPY {ROWS}"));
                });
            }
        });
    }
    let mut s = db.session();
    let out = copy_out(&mut s, "COPY t (id) TO STDOUT");
    let total = (ROUNDS * SESSIONS * ROWS) as usize;
    let mut seen = vec![false; total];
    let mut n = 0;
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let id: usize = std::str::from_utf8(line).unwrap().parse().unwrap();
        assert!(!seen[id], "row {id} present twice");
        seen[id] = true;
        n += 1;
    }
    assert_eq!(n, total, "rows missing");

    let sh = db.shared();
    let rel = s.table("t").unwrap().relfile;
    let nblocks = sh.smgr.nblocks(rel, ForkNumber::Main).unwrap();
    assert_eq!(sh.pool.extended_main_blocks.load(Ordering::Relaxed), nblocks as u64, "a block was handed out twice (or lost)");
    let pins = sh.pool.new_pins();
    let mut in_fsm = 0;
    for b in 0..nblocks {
        let used = {
            let buf = sh.pool.read_buffer(&pins, rel, ForkNumber::Main, b, None).unwrap();
            let pg = buf.lock_shared();
            !page::is_new(&pg) && page::max_offset(&pg) > 0
        };
        if !used {
            assert!(fsm::max_category(&sh.pool, &pins, rel, b).unwrap() > 0, "block {b} is neither used nor in the FSM");
            in_fsm += 1;
        }
    }
    assert!(in_fsm < nblocks / 4, "too many empty pages: {in_fsm} of {nblocks}");
}

#[test]
fn free_space_is_reused_by_later_loads() {
    let (_t, _dir, db) = new_db(&["shared_buffers=8MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id integer, v text)").unwrap();
    // 100 rows of ~53 bytes fit one 8 kB page.
    for i in 0..100 {
        copy_in(&mut s, "COPY t FROM STDIN", format!("{i}\tsmall row\n").as_bytes()).unwrap();
    }
    let rel = s.table("t").unwrap().relfile;
    assert_eq!(db.shared().smgr.nblocks(rel, ForkNumber::Main).unwrap(), 1, "each small COPY must reuse the page with room");
    assert_eq!(count(&mut s, "t"), 100);
}

#[test]
fn a_failed_copy_gives_its_page_with_room_back_to_the_fsm() {
    let (_t, _dir, db) = new_db(&["shared_buffers=8MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id integer, v text)").unwrap();
    // More than one 256 kB batch, so pages are filled before the bad last row fails the COPY.
    let mut bad = String::new();
    for i in 0..6000 {
        bad.push_str(&format!("{i}\tsome row text that fills pages {i}\n"));
    }
    bad.push_str("oops\tx\n");
    assert!(copy_in(&mut s, "COPY t FROM STDIN", bad.as_bytes()).is_err());
    let rel = s.table("t").unwrap().relfile;
    let n = db.shared().smgr.nblocks(rel, ForkNumber::Main).unwrap();
    assert!(n > 0);
    // A small COPY now goes into the failed COPY's last page, which still has room.
    copy_in(&mut s, "COPY t FROM STDIN", b"1\tsmall\n").unwrap();
    assert_eq!(db.shared().smgr.nblocks(rel, ForkNumber::Main).unwrap(), n, "the page with room was lost to the FSM");
    assert_eq!(count(&mut s, "t"), 1);
}

#[test]
fn long_loads_are_extended_ahead_and_small_ones_are_not() {
    let (_t, _dir, db) = new_db(&["shared_buffers=32MB"]);
    let mut s = db.session();
    s.execute("CREATE TABLE t (id bigint, v text)").unwrap();
    for i in 0..50 {
        copy_in(&mut s, "COPY t FROM STDIN", format!("{i}\tsmall\n").as_bytes()).unwrap();
    }
    let pre = &db.shared().pre_extend;
    assert_eq!(pre.pages.load(Ordering::Relaxed), 0, "a small COPY must not be extended ahead");
    // Four sessions load 40 MB: the extender keeps pages ahead of them in the FSM.
    std::thread::scope(|sc| {
        for k in 0..4u64 {
            let db = &db;
            sc.spawn(move || {
                let mut s = db.session();
                let mut data = String::new();
                for i in 0..100_000u64 {
                    data.push_str(&format!("{}\t{}\n", k * 1_000_000 + i, "x".repeat(80)));
                }
                copy_in(&mut s, "COPY t FROM STDIN", data.as_bytes()).unwrap();
            });
        }
    });
    assert!(pre.pages.load(Ordering::Relaxed) > 0, "nothing was extended ahead of the loads");
    assert_eq!(count(&mut s, "t"), 400_050);
    // Pages extended ahead and left unused are in the FSM: a later load uses them first.
    let sh = db.shared();
    let rel = s.table("t").unwrap().relfile;
    let before = sh.smgr.nblocks(rel, ForkNumber::Main).unwrap();
    copy_in(&mut s, "COPY t FROM STDIN", "1\tafter\n".repeat(500).as_bytes()).unwrap();
    assert_eq!(sh.smgr.nblocks(rel, ForkNumber::Main).unwrap(), before, "a small load after the long ones extended the table");
}

//! `heapstore -D DIR crash-child`: the child process of the kill -9 crash test. Sessions run concurrent
//! COPYs (small committed transactions, some large ones, and some that fail on purpose) into
//! table `crash (id bigint NOT NULL, who integer, pad text)` and print one line per outcome:
//!
//! ```text
//! ACK <first_id> <rows>     the COMMIT returned: these rows must survive any crash
//! FAIL <first_id> <rows>    the COPY failed: none of these rows may ever be visible
//! ```
//!
//! Each line is written and flushed only after the statement returned, so every ACK the parent
//! read was acknowledged. The parent kills this process with SIGKILL at a random moment.

use crate::db::Database;
use crate::error::Result;
use crate::sql::CopyIo;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// `pause_us` between transactions keeps the table small enough to verify after hundreds of
/// crash cycles (without it the child commits ~25k transactions a second here).
pub fn run(dir: &Path, set: &[String], threads: usize, seed: u64, pause_us: u64) -> Result<()> {
    let db = Database::open(dir, set)?;
    db.session().execute("CREATE TABLE IF NOT EXISTS crash (id bigint NOT NULL, who integer, pad text)")?;
    // Row statements through a primary key, so that crashes land in single-row heap records,
    // index inserts and splits, and VACUUM too; the crash test checks index and heap agree.
    db.session().execute("CREATE TABLE IF NOT EXISTS crash_kv (k bigint PRIMARY KEY, v bigint)")?;
    let out = Mutex::new(std::io::stdout());
    let base = seed.wrapping_mul(1_000_000_007) % 1_000_000 * 1_000_000_000;
    std::thread::scope(|sc| {
        for t in 0..threads {
            let (db, out) = (&db, &out);
            sc.spawn(move || -> Result<()> {
                let mut s = db.session();
                let mut rng = seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let mut next_id = base + t as u64 * 100_000_000;
                loop {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    // Mostly small transactions; now and then a batch of a few pages, so that
                    // crashes land inside multi-page COPYs too (and the table stays small
                    // enough to verify quickly after hundreds of cycles).
                    let rows = match rng % 40 {
                        0 => 500 + rng % 1500,
                        _ => 1 + rng % 8,
                    };
                    let fail = rng % 13 == 0;
                    let mut data = String::with_capacity(rows as usize * 40);
                    for i in 0..rows {
                        data.push_str(&format!("{}\t{t}\tpadding {}\n", next_id + i, "x".repeat((rng % 60) as usize)));
                    }
                    if fail {
                        data.push_str("not-a-number\t0\tx\n");
                    }
                    let mut r: &[u8] = data.as_bytes();
                    let res = s.execute_with_io("COPY crash FROM STDIN", &mut CopyIo { stdin: Some(&mut r), stdout: None, rows: None });
                    let line = match (&res, fail) {
                        (Ok(_), false) => format!("ACK {next_id} {rows}\n"),
                        (Err(_), true) => format!("FAIL {next_id} {rows}\n"),
                        (Ok(_), true) => panic!("a bad row was accepted"),
                        (Err(e), false) => {
                            eprintln!("{e}");
                            return Err(e.clone());
                        }
                    };
                    {
                        let mut o = out.lock().expect("poisoned");
                        let _ = o.write_all(line.as_bytes());
                        let _ = o.flush();
                    }
                    if rng % 4 == 0 {
                        s.execute(&format!("INSERT INTO crash_kv VALUES ({next_id}, {})", rng % 1000))?;
                        if rng % 3 == 0 {
                            s.execute(&format!("UPDATE crash_kv SET v = v + 1 WHERE k = {next_id}"))?;
                        }
                        if rng % 5 == 0 {
                            s.execute(&format!("DELETE FROM crash_kv WHERE k = {next_id}"))?;
                        }
                    }
                    if t == 0 && rng % 97 == 0 {
                        s.execute("VACUUM crash_kv")?;
                    }
                    next_id += rows + 1;
                    if pause_us > 0 {
                        std::thread::sleep(std::time::Duration::from_micros(pause_us));
                    }
                }
            });
        }
    });
    Ok(())
}

//! `heapstore demo`: the main job, end to end in one command.
//!
//! 1. creates a database (a temporary directory unless one is given);
//! 2. generates a COPY text file of `--rows` rows (default 3 million, ~200 MB);
//! 3. loads it with `COPY ... FROM` under a progress bar;
//! 4. counts the rows with a sequential scan, exports them with `COPY ... TO`, and shows a few;
//! 5. prints MB/s for each step and the statistics tables.

use crate::db::Database;
use crate::error::{PgError, Result};
use crate::sql::CopyIo;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

const WORDS: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november",
    "oscar", "papa",
];

/// Writes `rows` rows of `(id bigint, name text, amount double precision, day date, active boolean)`.
pub fn generate(path: &Path, rows: u64) -> Result<u64> {
    let f = std::fs::File::create(path).map_err(|e| PgError::io("create", path, e))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let mut rng = crate::rng::Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut line = String::with_capacity(128);
    let mut bytes = 0u64;
    for id in 1..=rows {
        use std::fmt::Write as _;
        let r = rng.next_u64();
        line.clear();
        let day = 1 + (r % 28) as u32;
        let month = 1 + ((r >> 8) % 12) as u32;
        let year = 2000 + ((r >> 16) % 25) as u32;
        let _ = writeln!(
            line,
            "{id}\tcustomer {} {} {}\t{}\t{year:04}-{month:02}-{day:02}\t{}",
            WORDS[(r >> 24) as usize % 16],
            WORDS[(r >> 28) as usize % 16],
            r % 100_000,
            // Two decimals, printed as PostgreSQL prints a float8 (12.5, not 12.50).
            ((r >> 32) % 100_000_000) as f64 / 100.0,
            if r & 1 == 0 { 't' } else { 'f' }
        );
        bytes += line.len() as u64;
        w.write_all(line.as_bytes()).map_err(|e| PgError::io("write", path, e))?;
    }
    w.flush().map_err(|e| PgError::io("write", path, e))?;
    Ok(bytes)
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

pub fn run(dir: Option<PathBuf>, rows: u64, set: &[String]) -> Result<()> {
    let tmp;
    let dir = match dir {
        Some(d) => d,
        None => {
            tmp = tempfile::Builder::new().prefix("heapstore-demo-").tempdir().map_err(|e| PgError::io("create", Path::new("/tmp"), e))?;
            tmp.path().join("data")
        }
    };
    println!("heapstore {} demo", env!("CARGO_PKG_VERSION"));
    println!("data directory: {}", dir.display());
    Database::init(&dir, &[])?;
    let db = Database::open(&dir, set)?;
    let sh = db.shared().clone();
    println!(
        "shared_buffers = {} ({} buffers of {} bytes, huge pages: {:?}), io_direct = {}",
        sh.settings.get("shared_buffers")?,
        sh.pool.nbuffers(),
        sh.block_size,
        sh.pool.huge_pages(),
        sh.settings.get("io_direct")?
    );

    let input = dir.join("demo_input.txt");
    let t0 = Instant::now();
    let in_bytes = generate(&input, rows)?;
    println!("\n1. generated {rows} rows, {:.1} MB of COPY text in {:.2} s", mb(in_bytes), t0.elapsed().as_secs_f64());

    let mut s = db.session();
    s.execute("CREATE TABLE demo (id bigint NOT NULL, name text, amount double precision, day date, active boolean)")?;
    let pb = ProgressBar::new(in_bytes);
    pb.set_style(ProgressStyle::with_template("   {bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}").expect("valid template"));
    let f = std::fs::File::open(&input).map_err(|e| PgError::io("open", &input, e))?;
    let mut reader = pb.wrap_read(f);
    let t0 = Instant::now();
    let r = s.execute_with_io("COPY demo FROM STDIN", &mut CopyIo { stdin: Some(&mut reader), stdout: None, rows: None })?;
    let load_s = t0.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let table_bytes = sh.smgr.nblocks(s.table("demo")?.relfile, crate::storage::ForkNumber::Main)? as u64 * sh.block_size as u64;
    println!(
        "2. {}: {:.2} s, {:.0} MB/s of input, {:.0} MB/s of table ({:.1} MB table), {:.0}k rows/s",
        r[0].tag,
        load_s,
        mb(in_bytes) / load_s,
        mb(table_bytes) / load_s,
        mb(table_bytes),
        rows as f64 / load_s / 1000.0
    );

    let t0 = Instant::now();
    let r = s.execute("SELECT count(*) FROM demo")?;
    let scan_s = t0.elapsed().as_secs_f64();
    println!(
        "3. SELECT count(*) = {}: {:.3} s, {:.0} MB/s of table",
        r[0].rows[0][0].as_deref().unwrap_or("?"),
        scan_s,
        mb(table_bytes) / scan_s
    );

    let out = dir.join("demo_export.txt");
    let t0 = Instant::now();
    let r = s.execute(&format!("COPY demo TO '{}'", out.display()))?;
    let export_s = t0.elapsed().as_secs_f64();
    let same = std::fs::read(&out).ok() == std::fs::read(&input).ok();
    println!(
        "4. {} to a file: {:.2} s, {:.0} MB/s of output; export identical to the input: {}",
        r[0].tag,
        export_s,
        mb(in_bytes) / export_s,
        if same { "yes" } else { "NO" }
    );

    let r = s.execute("SELECT * FROM demo LIMIT 5")?;
    println!("\n5. SELECT * FROM demo LIMIT 5\n");
    print!("{}", super::print::format_result(&r[0], &Default::default()));
    drop(s);
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&out);
    let stats = db.stats();
    db.close()?;
    println!("6. statistics of this run (heapstore -D DIR stats shows them for any data directory)\n");
    print!("{}", super::print::format_stats(&stats));
    if !same {
        return Err(PgError::internal("the exported file differs from the loaded one"));
    }
    Ok(())
}

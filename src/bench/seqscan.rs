//! `heapstore bench seqscan` — seed 002's experiment, in two parts.
//!
//! Like for like (with `--vs-postgres`): the same psql runs `SELECT count(*) FROM t` against
//! `heapstore serve` (a child process) and every PostgreSQL major version found, over a Unix
//! socket, on the same rows (the same file COPYed the same number of times, then `VACUUM t`),
//! with the same shared_buffers, each with its own default ring and io_method, and PostgreSQL
//! without parallel workers (`max_parallel_workers_per_gather = 0`: one process scans, as in
//! heapstore). Each figure is the whole psql process's wall time; MB/s divides each system's
//! own table size (`pg_relation_size('t')`) by it, rows/s the same row count, and the ratio is
//! of rows/s (the same work). Modes: buffered-warm (one untimed scan first) and buffered-cold
//! (the system's own table files dropped from the page cache before the run; the servers keep
//! running, and a scan of a table over a quarter of shared_buffers goes through a small ring
//! on both, so their pools hold almost none of it).
//!
//! heapstore's own matrix, in-process (a session calling the library; no PostgreSQL ratio):
//! BULKREAD ring size × io_method × buffered/direct I/O × page cache warm/cold, timing
//! `SELECT count(*)` over a table several times shared_buffers. Reports MB/s and CPU seconds
//! (user + sys of the whole process, I/O workers included) per GB scanned, next to what `dd`
//! reads from the same files in the same command: `dd iflag=direct bs=1M` for cold direct I/O,
//! `dd bs=1M` from the page cache for warm buffered I/O. `--concurrent` also runs two scans of
//! the table at once, with and without synchronized scans, and reports the blocks read from
//! disk against the table's size. Cold: every segment file's pages are dropped from the page
//! cache (posix_fadvise DONTNEED) and the database is reopened (an empty pool) before each
//! run. Warm: one untimed scan first. Direct I/O bypasses the page cache, so it has one state,
//! reported as cold.
//!
//! Defaults end within 5 minutes on a 2-core machine: a 256MB table over 64MB of
//! shared_buffers, four ring sizes.

use super::{print_header, print_table, Common, Report, Workdir};
use crate::config::parse_memory;
use crate::db::Database;
use crate::error::{PgError, Result};
use crate::storage::ForkNumber;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The system label of the in-process matrix (never compared with PostgreSQL).
const IN_PROCESS: &str = super::copy::IN_PROCESS;

#[derive(clap::Args, Debug, Clone)]
pub struct SeqscanArgs {
    #[command(flatten)]
    pub common: Common,
    /// Table size to build (it should be several times shared_buffers).
    #[arg(long, default_value = "256MB")]
    pub table_size: String,
    /// shared_buffers for every system.
    #[arg(long, default_value = "64MB")]
    pub shared_buffers: String,
    /// BULKREAD ring sizes of heapstore's in-process matrix, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "64kB,256kB,1MB,16MB")]
    pub rings: Vec<String>,
    /// io_method values of heapstore's in-process matrix, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "sync,worker,io_uring")]
    pub io_methods: Vec<String>,
    /// I/O modes: buffered-warm, buffered-cold, direct (direct: the in-process matrix only).
    #[arg(long, value_delimiter = ',', default_value = "buffered-warm,buffered-cold,direct")]
    pub modes: Vec<String>,
    /// Also run two concurrent scans, with and without synchronize_seqscans.
    #[arg(long)]
    pub concurrent: bool,
}

struct Point {
    ring: String,
    method: String,
    mode: String,
}

impl Point {
    fn name(&self) -> String {
        format!("{} {} {}", self.mode, self.method, self.ring)
    }
}

/// Drops a file's pages from the page cache.
fn drop_cache(path: &Path) -> Result<()> {
    let f = std::fs::File::open(path).map_err(|e| PgError::io("open", path, e))?;
    use std::os::fd::AsRawFd;
    // SAFETY: fadvise on an open descriptor we own; it only affects the page cache.
    let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        return Err(PgError::io("posix_fadvise", path, std::io::Error::from_raw_os_error(r)));
    }
    Ok(())
}

/// Runs dd over `files`; returns MB/s (bytes / seconds as dd reports them).
fn dd(files: &[PathBuf], direct: bool) -> Result<f64> {
    let (mut bytes, mut secs) = (0f64, 0f64);
    for f in files {
        let mut c = std::process::Command::new("dd");
        c.arg(format!("if={}", f.display())).args(["of=/dev/null", "bs=1M"]);
        if direct {
            c.arg("iflag=direct");
        }
        let out = c.output().map_err(|e| PgError::io("run", Path::new("dd"), e))?;
        let err = String::from_utf8_lossy(&out.stderr);
        // "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.81 s, 1.3 GB/s"
        let line = err.lines().find(|l| l.contains("copied")).ok_or_else(|| super::bad_arg(format!("dd said: {err}")))?;
        let b: f64 = line.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0.0);
        let s: f64 = line
            .split("copied, ")
            .nth(1)
            .and_then(|v| v.split(" s").next())
            .and_then(|v| v.trim().replace(',', ".").parse().ok())
            .unwrap_or(0.0);
        bytes += b;
        secs += s;
    }
    Ok(if secs > 0.0 { bytes / secs / 1e6 } else { 0.0 })
}

fn segment_files(db: &Database, rel: crate::storage::RelFileNumber) -> Vec<PathBuf> {
    (0..).map(|seg| db.shared().smgr.segment_path(rel, ForkNumber::Main, seg)).take_while(|p| p.exists()).collect()
}

pub fn run(args: SeqscanArgs, set_args: &[String]) -> Result<()> {
    let c = &args.common;
    let quick = c.quick;
    let table_bytes = parse_memory(&args.table_size, 1).ok_or_else(|| super::bad_arg(format!("bad --table-size {}", args.table_size)))?;
    let table_bytes = if quick { table_bytes.min(48 << 20) } else { table_bytes };
    let sb = if quick { "8MB".to_string() } else { args.shared_buffers.clone() };
    let runs = c.runs.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let rings: Vec<String> = if quick { vec!["64kB".into(), "1MB".into()] } else { args.rings.clone() };
    for r in &rings {
        parse_memory(r, 1).ok_or_else(|| super::bad_arg(format!("bad ring size \"{r}\"")))?;
    }
    for m in &args.io_methods {
        crate::buffer::IoMethod::parse(m).ok_or_else(|| super::bad_arg(format!("unknown io_method \"{m}\"")))?;
    }
    for m in &args.modes {
        if !["buffered-warm", "buffered-cold", "direct"].contains(&m.as_str()) {
            return Err(super::bad_arg(format!("unknown mode \"{m}\" (buffered-warm, buffered-cold, direct)")));
        }
    }
    let work = Workdir::new(c.data_dir.as_deref())?;
    let dir = work.path.join("db");
    let mut base: Vec<String> = vec![format!("shared_buffers={sb}"), "max_connections=2".into(), "synchronize_seqscans=off".into()];
    base.extend(set_args.iter().cloned());
    let mut settings: Vec<(String, String)> =
        base.iter().filter_map(|s| s.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
    if c.vs_postgres {
        settings.push(("client".into(), "psql -c 'SELECT count(*) FROM t' over a Unix socket, whole process timed, every system".into()));
        settings.push(("postgres".into(), format!("shared_buffers={sb}, max_parallel_workers_per_gather=0")));
    }
    let pg_bin = if c.vs_postgres { Some(super::postgres::find_bin(c.pg_bin.as_deref())?) } else { None };
    let pg_bins = if c.vs_postgres { super::postgres::find_bins(c.pg_bin.as_deref())? } else { Vec::new() };

    // Build the table: the seed-000 rows, COPYed until the table is big enough.
    Database::init(&dir, &[])?;
    let file_rows: u64 = if quick { 100_000 } else { 1_000_000 };
    let (text, _bin, file_bytes) = super::copy::generate(&work.path, file_rows)?;
    super::open_up(&work.path)?;
    super::open_up(&text)?;
    let mut copies = 0u64;
    let (table_mb, nblocks, files) = {
        let db = Database::open(&dir, &base)?;
        let mut s = db.session();
        s.execute("CREATE TABLE t (v text)")?;
        let mut loaded = 0u64;
        while loaded < table_bytes {
            s.execute(&format!("COPY t FROM '{}'", text.display()))?;
            copies += 1;
            let t = s.table("t")?;
            loaded = db.shared().smgr.nblocks(t.relfile, ForkNumber::Main)? as u64 * db.shared().block_size as u64;
            if file_bytes == 0 {
                break;
            }
        }
        s.execute("VACUUM t")?;
        let t = s.table("t")?;
        let nblocks = db.shared().smgr.nblocks(t.relfile, ForkNumber::Main)?;
        let files = segment_files(&db, t.relfile);
        let mb = nblocks as f64 * db.shared().block_size as f64 / 1e6;
        drop(s);
        db.close()?;
        (mb, nblocks, files)
    };
    let table_rows = copies * file_rows;

    let mut report = Report::new("seqscan", settings.clone());
    // PostgreSQL: the same rows, loaded the same way, one process per scan.
    let mut pgs: Vec<(String, super::postgres::PgServer)> = Vec::new();
    for (major, bin) in &pg_bins {
        let pg = super::postgres::PgServer::start(
            bin,
            &work.path.join(format!("pg{major}")),
            &sb,
            c.pg_user.clone(),
            &[("max_parallel_workers_per_gather", "0")],
        )?
        .with_clients(pg_bin.as_ref().expect("found with pg_bins"));
        let t = pg.target();
        t.psql("CREATE TABLE t (v text)")?;
        for _ in 0..copies {
            t.psql(&format!("COPY t FROM '{}'", text.display()))?;
        }
        t.psql("VACUUM t")?;
        pgs.push((format!("postgres {major}"), pg));
    }
    let versions: Vec<String> = pgs.iter().map(|(_, p)| p.version.clone()).collect();
    report.pg_version = (!versions.is_empty()).then(|| versions.join("; "));
    print_header("seqscan", &work.path, &settings, report.pg_version.as_deref());
    println!(
        "table: {table_rows} rows ({copies} COPYs of a {file_rows}-row file); heapstore: {table_mb:.0} MB ({nblocks} blocks); each run is SELECT count(*) FROM t; {runs} runs per point\n"
    );

    // The machine's own limits, measured now on the same files.
    let dd_direct = dd(&files, true)?;
    dd(&files, false)?; // warm the page cache
    let dd_cached = dd(&files, false)?;
    println!("dd iflag=direct bs=1M: {dd_direct:.0} MB/s; dd bs=1M from the page cache: {dd_cached:.0} MB/s\n");

    let mut points = Vec::new();
    for mode in &args.modes {
        for method in &args.io_methods {
            for ring in &rings {
                points.push(Point { ring: ring.clone(), method: method.clone(), mode: mode.clone() });
            }
        }
    }
    let bar = indicatif::ProgressBar::new((points.len() * runs) as u64);
    bar.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").expect("template"));
    for run in 0..runs {
        for p in &points {
            bar.set_message(p.name());
            let mut set = base.clone();
            set.push(format!("io_method={}", p.method));
            set.push(format!("io_direct={}", if p.mode == "direct" { "on" } else { "off" }));
            set.push(format!("heapstore.bulkread_ring_size={}", p.ring));
            let db = Database::open(&dir, &set)?;
            let mut s = db.session();
            if p.mode == "buffered-warm" {
                s.execute("SELECT count(*) FROM t")?;
            } else {
                for f in &files {
                    drop_cache(f)?;
                }
            }
            let (cpu0, t0) = (super::cpu_seconds().total(), Instant::now());
            let (r, traces) = crate::access::heap::traced(|| s.execute("SELECT count(*) FROM t"));
            r?;
            let secs = t0.elapsed().as_secs_f64();
            let cpu = super::cpu_seconds().total() - cpu0;
            let tr = traces.first().map(|t| t.stats.clone()).unwrap_or_default();
            let ring_blocks = tr.strategy.map(|(_, b)| b).unwrap_or(0);
            report.add(
                IN_PROCESS,
                &p.name(),
                1,
                run,
                json!({
                    "seconds": secs,
                    "mb_per_s": table_mb / secs,
                    "cpu_seconds_per_gb": cpu / (table_mb / 1000.0),
                    "ring_buffers": ring_blocks,
                    "reads": tr.stream.reads,
                    "avg_read_blocks": if tr.stream.reads > 0 { tr.stream.blocks_read as f64 / tr.stream.reads as f64 } else { 0.0 },
                    "max_distance": tr.stream.max_distance,
                    "read_wait_seconds": tr.stream.wait_ns as f64 / 1e9,
                    "ring_escapes": tr.ring_escapes,
                }),
            );
            drop(s);
            db.close()?;
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let mut rows = Vec::new();
    for p in &points {
        let name = p.name();
        let (Some(mbs), Some(cpu)) =
            (report.spread(IN_PROCESS, &name, 1, "mb_per_s"), report.spread(IN_PROCESS, &name, 1, "cpu_seconds_per_gb"))
        else {
            continue;
        };
        let reference = if p.mode == "buffered-warm" { dd_cached } else { dd_direct };
        let extra = |f: &str| report.spread(IN_PROCESS, &name, 1, f).map(|s| s.median).unwrap_or(0.0);
        rows.push(vec![
            p.mode.clone(),
            p.method.clone(),
            p.ring.clone(),
            mbs.show(0),
            format!("{:.0}%", 100.0 * mbs.median / reference.max(1e-9)),
            format!("{:.2}", cpu.median),
            format!("{:.1}", extra("avg_read_blocks")),
            format!("{:.0}", extra("max_distance")),
            format!("{:.0}", extra("ring_escapes")),
        ]);
    }
    println!("heapstore in-process (a session calling the library; its own matrix, not compared with PostgreSQL):");
    print_table(&["mode", "io_method", "ring", "MB/s", "vs dd", "CPU s/GB", "blocks/read", "distance", "escapes"], 3, rows);
    println!("('vs dd': warm buffered against dd from the page cache, cold and direct against dd iflag=direct)");

    if let Some(pg_bin) = &pg_bin {
        let modes: Vec<&str> = ["buffered-warm", "buffered-cold"].into_iter().filter(|m| args.modes.iter().any(|x| x == m)).collect();
        compare(&dir, &base, pg_bin, &work.path, &files, &pgs, &modes, runs, table_rows, &mut report)?;
    }
    drop(pgs);

    if args.concurrent {
        println!();
        let largest = rings.iter().max_by_key(|r| parse_memory(r, 1).unwrap_or(0)).cloned();
        concurrent(&dir, &base, nblocks, runs, &files, largest.as_deref())?;
    }

    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-seqscan.json"));
    report.settings.push(("dd_direct_mb_per_s".into(), format!("{dd_direct:.0}")));
    report.settings.push(("dd_cached_mb_per_s".into(), format!("{dd_cached:.0}")));
    report.write_json(&json_path, &work.path, &["mb_per_s", "rows_per_s", "cpu_seconds_per_gb"])?;
    let mut written = format!("wrote {}", json_path.display());
    if let Some(png) = &c.plot {
        let mut series = Vec::new();
        for mode in &args.modes {
            for method in &args.io_methods {
                let pts: Vec<(f64, f64)> = rings
                    .iter()
                    .filter_map(|r| {
                        let kb = parse_memory(r, 1)? as f64 / 1024.0;
                        let name = Point { ring: r.clone(), method: method.clone(), mode: mode.clone() }.name();
                        Some((kb, report.spread(IN_PROCESS, &name, 1, "mb_per_s")?.median))
                    })
                    .collect();
                series.push(super::plot::Series { label: format!("{mode} {method}"), points: pts });
            }
        }
        super::plot::line_chart(png, "seqscan: MB/s by BULKREAD ring size (kB, log2)", "ring size, kB (log2)", "MB/s", &series)?;
        written.push_str(&format!(" and {}", png.display()));
    }
    println!("{written}");
    Ok(())
}

/// The like-for-like part: the same psql `SELECT count(*) FROM t` against `heapstore serve` on
/// `dir` and each PostgreSQL in `pgs`, whole psql process timed, systems alternating run by run.
#[allow(clippy::too_many_arguments)]
fn compare(
    dir: &Path,
    base: &[String],
    pg_bin: &Path,
    work: &Path,
    hs_files: &[PathBuf],
    pgs: &[(String, super::postgres::PgServer)],
    modes: &[&str],
    runs: usize,
    rows: u64,
    report: &mut Report,
) -> Result<()> {
    let mut set = base.to_vec();
    set.retain(|s| !s.starts_with("max_connections"));
    set.push("max_connections=10".into());
    let serve = super::postgres::ServeChild::start(pg_bin, dir, &work.join("serve"), &set)?;
    let mut systems: Vec<(String, super::postgres::Target, Vec<PathBuf>)> = vec![("heapstore".into(), serve.target(), hs_files.to_vec())];
    for (label, pg) in pgs {
        let path = pg.target().psql("SELECT pg_relation_filepath('t')")?;
        let first = pg.data.join(path.trim());
        let files: Vec<PathBuf> = (0..)
            .map(|seg| if seg == 0 { first.clone() } else { PathBuf::from(format!("{}.{seg}", first.display())) })
            .take_while(|p| p.exists())
            .collect();
        systems.push((label.clone(), pg.target(), files));
    }
    let mut sizes = Vec::new();
    for (label, t, _) in &systems {
        let bytes: f64 = t.psql("SELECT pg_relation_size('t')")?.trim().parse().unwrap_or(0.0);
        sizes.push(bytes / 1e6);
        let n: u64 = t.psql("SELECT count(*) FROM t")?.trim().parse().unwrap_or(0);
        if n != rows {
            return Err(super::bad_arg(format!("{label} counts {n} rows in t, not {rows}")));
        }
    }
    for run in 0..runs {
        for mode in modes {
            for ((label, t, files), mb) in systems.iter().zip(&sizes) {
                if *mode == "buffered-cold" {
                    for f in files {
                        drop_cache(f)?;
                    }
                } else {
                    t.psql("SELECT count(*) FROM t")?;
                }
                let (secs, _) = t.psql_timed("SELECT count(*) FROM t")?;
                report.add(
                    label,
                    mode,
                    1,
                    run,
                    json!({"seconds": secs, "table_mb": mb, "mb_per_s": mb / secs, "rows_per_s": rows as f64 / secs}),
                );
            }
        }
    }
    serve.stop()?;
    println!(
        "\nlike for like: the same psql runs SELECT count(*) FROM t against each system over a Unix socket; the whole psql process timed;"
    );
    println!("MB/s with each system's own table size, the ratio of rows/s (the same {rows} rows):");
    let mut table = Vec::new();
    for mode in modes {
        for ((label, _, _), mb) in systems.iter().zip(&sizes) {
            let (Some(secs), Some(mbs), Some(rps)) = (
                report.spread(label, mode, 1, "seconds"),
                report.spread(label, mode, 1, "mb_per_s"),
                report.spread(label, mode, 1, "rows_per_s"),
            ) else {
                continue;
            };
            let ratio = match (label.starts_with("postgres"), report.spread("heapstore", mode, 1, "rows_per_s")) {
                (true, Some(h)) if rps.median > 0.0 => format!("{:.2}", h.median / rps.median),
                _ => String::new(),
            };
            let name = if label == "heapstore" { "heapstore serve (Unix socket)".to_string() } else { format!("{label} (Unix socket)") };
            table.push(vec![mode.to_string(), name, format!("{mb:.0}"), secs.show(3), mbs.show(0), format!("{:.0}", rps.median), ratio]);
        }
    }
    print_table(&["mode", "system", "table MB", "seconds (psql process)", "MB/s", "rows/s", "heapstore serve / this (rows/s)"], 2, table);
    Ok(())
}

/// Two concurrent scans of the table, with and without synchronized scans: blocks read from
/// disk (cold page cache, direct I/O so the page cache cannot hide a second read).
fn concurrent(dir: &Path, base: &[String], nblocks: u32, runs: usize, files: &[PathBuf], big_ring: Option<&str>) -> Result<()> {
    let mut rows = Vec::new();
    let mut cases = vec![(None, "on"), (None, "off")];
    if let Some(r) = big_ring {
        cases.push((Some(r), "on"));
    }
    for (ring, sync) in cases {
        let mut read = Vec::new();
        let mut secs = Vec::new();
        for _ in 0..runs {
            let mut set = base.to_vec();

            set.retain(|s| !s.starts_with("synchronize_seqscans"));
            set.push(format!("synchronize_seqscans={sync}"));
            set.push("io_direct=on".into());
            if let Some(r) = ring {
                set.push(format!("heapstore.bulkread_ring_size={r}"));
            }
            let db = Database::open(dir, &set)?;
            for f in files {
                drop_cache(f)?;
            }
            let t0 = Instant::now();
            let blocks: u64 = std::thread::scope(|sc| -> Result<u64> {
                let hs: Vec<_> = (0..2)
                    .map(|i| {
                        let db = &db;
                        sc.spawn(move || -> Result<u64> {
                            let mut s = db.session();
                            if i == 1 {
                                // Start when the first scan is a quarter through the table.
                                let rel = s.table("t")?.relfile;
                                let t0 = Instant::now();
                                while db.shared().pool.sync_scan_start(rel, nblocks) < nblocks / 4 && t0.elapsed().as_secs() < 60 {
                                    std::thread::sleep(std::time::Duration::from_micros(200));
                                }
                            }
                            let (r, tr) = crate::access::heap::traced(|| s.execute("SELECT count(*) FROM t"));
                            r?;
                            Ok(tr.iter().map(|t| t.stats.stream.blocks_read).sum())
                        })
                    })
                    .collect();
                let mut total = 0;
                for h in hs {
                    total += h.join().expect("scan thread")?;
                }
                Ok(total)
            })?;
            secs.push(t0.elapsed().as_secs_f64());
            read.push(blocks as f64);
            db.close()?;
        }
        let r = super::Spread::of(&read).expect("runs");
        let s = super::Spread::of(&secs).expect("runs");
        rows.push(vec![
            format!("synchronize_seqscans={sync}, ring {}", ring.unwrap_or("default")),
            r.show(0),
            format!("{:.2}", r.median / nblocks as f64),
            s.show(2),
        ]);
    }
    println!("two concurrent scans of the table ({nblocks} blocks), direct I/O, the second starting when the first is a quarter through:");
    print_table(&["setting", "blocks read from disk", "× table size", "seconds"], 1, rows);
    println!("(the least possible is 1.25: the second scan reads the first quarter alone after wrapping around)");
    Ok(())
}

//! `heapstore bench seqscan` — seed 002's matrix: BULKREAD ring size × io_method ×
//! buffered/direct I/O × page cache warm/cold, timing `SELECT count(*)` over a table several
//! times shared_buffers. Reports MB/s and CPU seconds (user + sys of the whole process, I/O
//! workers included) per GB scanned, next to what `dd` reads from the same files in the same
//! command: `dd iflag=direct bs=1M` for cold direct I/O, `dd bs=1M` from the page cache for warm
//! buffered I/O. `--concurrent` also runs two scans of the table at once, with and without
//! synchronized scans, and reports the blocks read from disk against the table's size.
//!
//! Cold: every segment file's pages are dropped from the page cache (posix_fadvise DONTNEED)
//! and the database is reopened (an empty pool) before each run. Warm: one untimed scan first.
//! Direct I/O bypasses the page cache, so it has one state, reported as cold.

use super::{print_header, print_table, Common, Report, Workdir};
use crate::config::parse_memory;
use crate::db::Database;
use crate::error::{PgError, Result};
use crate::storage::ForkNumber;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Debug, Clone)]
pub struct SeqscanArgs {
    #[command(flatten)]
    pub common: Common,
    /// Table size to build (it should be several times shared_buffers).
    #[arg(long, default_value = "1GB")]
    pub table_size: String,
    #[arg(long, default_value = "256MB")]
    pub shared_buffers: String,
    /// BULKREAD ring sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "64kB,256kB,1MB,4MB,16MB,32MB")]
    pub rings: Vec<String>,
    /// io_method values, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "sync,worker,io_uring")]
    pub io_methods: Vec<String>,
    /// I/O modes: buffered-warm, buffered-cold, direct.
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
    let settings: Vec<(String, String)> =
        base.iter().filter_map(|s| s.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let pg = if c.vs_postgres { Some(super::postgres::find_bin(c.pg_bin.as_deref())?) } else { None };

    // Build the table: the seed-000 rows, COPYed until the table is big enough.
    Database::init(&dir, &[])?;
    let (text, _bin, file_bytes) = super::copy::generate(&work.path, if quick { 100_000 } else { 1_000_000 })?;
    let (table_mb, nblocks, files) = {
        let db = Database::open(&dir, &base)?;
        let mut s = db.session();
        s.execute("CREATE TABLE t (v text)")?;
        let mut loaded = 0u64;
        while loaded < table_bytes {
            s.execute(&format!("COPY t FROM '{}'", text.display()))?;
            let t = s.table("t")?;
            loaded = db.shared().smgr.nblocks(t.relfile, ForkNumber::Main)? as u64 * db.shared().block_size as u64;
            if file_bytes == 0 {
                break;
            }
        }
        let t = s.table("t")?;
        let nblocks = db.shared().smgr.nblocks(t.relfile, ForkNumber::Main)?;
        let files = segment_files(&db, t.relfile);
        drop(s);
        db.close()?;
        (loaded as f64 / 1e6, nblocks, files)
    };

    let mut report = Report::new("seqscan", settings.clone());
    let mut pg_server = None;
    if let Some(bin) = &pg {
        let srv = super::postgres::PgServer::start(bin, &work.path.join("pg"), &sb, c.pg_user.clone(), &[])?;
        super::open_up(&work.path)?;
        let _ = std::fs::set_permissions(&text, std::os::unix::fs::PermissionsExt::from_mode(0o644));
        srv.psql("CREATE TABLE t (v text)")?;
        let mut loaded = 0f64;
        while loaded < table_mb {
            srv.psql(&format!("COPY t FROM '{}'", text.display()))?;
            loaded = srv.psql("SELECT pg_relation_size('t')")?.trim().parse::<f64>().unwrap_or(0.0) / 1e6;
        }
        srv.psql("VACUUM t")?;
        report.pg_version = Some(srv.version.clone());
        pg_server = Some(srv);
    }
    print_header("seqscan", &work.path, &settings, report.pg_version.as_deref());
    println!("table: {:.0} MB ({} blocks); each run is SELECT count(*) FROM t; {} runs per point\n", table_mb, nblocks, runs);

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
                "heapstore",
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
        if let Some(srv) = &pg_server {
            for mode in ["buffered-warm", "buffered-cold"] {
                if !args.modes.iter().any(|m| m == mode) {
                    continue;
                }
                if mode == "buffered-cold" {
                    let path = srv.psql("SELECT pg_relation_filepath('t')")?;
                    let first = srv.data.join(path.trim());
                    let mut seg = 0;
                    loop {
                        let p = if seg == 0 { first.clone() } else { PathBuf::from(format!("{}.{seg}", first.display())) };
                        if !p.exists() {
                            break;
                        }
                        drop_cache(&p)?;
                        seg += 1;
                    }
                } else {
                    srv.psql("SELECT count(*) FROM t")?;
                }
                let t0 = Instant::now();
                let out = srv.psql("EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM t")?;
                let wall = t0.elapsed().as_secs_f64();
                let ms: f64 = out
                    .lines()
                    .find_map(|l| l.strip_prefix("Execution Time: ").and_then(|v| v.trim_end_matches(" ms").parse().ok()))
                    .unwrap_or(wall * 1000.0);
                let secs = ms / 1000.0;
                report.add("postgres", &format!("{mode} postgres"), 1, run, json!({"seconds": secs, "mb_per_s": table_mb / secs}));
            }
        }
    }
    bar.finish_and_clear();

    let mut rows = Vec::new();
    for p in &points {
        let name = p.name();
        let (Some(mbs), Some(cpu)) =
            (report.spread("heapstore", &name, 1, "mb_per_s"), report.spread("heapstore", &name, 1, "cpu_seconds_per_gb"))
        else {
            continue;
        };
        let reference = if p.mode == "buffered-warm" { dd_cached } else { dd_direct };
        let pg_ratio = report
            .spread("postgres", &format!("{} postgres", p.mode), 1, "mb_per_s")
            .map(|pgs| format!("{:.2}", mbs.median / pgs.median))
            .unwrap_or_else(|| "-".into());
        let extra = |f: &str| report.spread("heapstore", &name, 1, f).map(|s| s.median).unwrap_or(0.0);
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
            pg_ratio,
        ]);
    }
    print_table(&["mode", "io_method", "ring", "MB/s", "vs dd", "CPU s/GB", "blocks/read", "distance", "escapes", "vs PG"], 3, rows);
    for mode in ["buffered-warm", "buffered-cold"] {
        if let Some(s) = report.spread("postgres", &format!("{mode} postgres"), 1, "mb_per_s") {
            println!("PostgreSQL ({mode}, its own ring and io_method): {} MB/s", s.show(0));
        }
    }
    println!("('vs dd': warm buffered against dd from the page cache, cold and direct against dd iflag=direct)");

    if args.concurrent {
        println!();
        let largest = rings.iter().max_by_key(|r| parse_memory(r, 1).unwrap_or(0)).cloned();
        concurrent(&dir, &base, nblocks, runs, &files, largest.as_deref())?;
    }

    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-seqscan.json"));
    report.settings.push(("dd_direct_mb_per_s".into(), format!("{dd_direct:.0}")));
    report.settings.push(("dd_cached_mb_per_s".into(), format!("{dd_cached:.0}")));
    report.write_json(&json_path, &work.path, &["mb_per_s", "cpu_seconds_per_gb"])?;
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
                        Some((kb, report.spread("heapstore", &name, 1, "mb_per_s")?.median))
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

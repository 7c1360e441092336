//! `heapstore bench copy` — seed 000's experiment: N sessions each COPY their own copy of a
//! generated file into one table; table MB/s per session count, per configuration (format,
//! file size, FSM on/off, logged/unlogged), optionally beside PostgreSQL running the same files
//! through pgbench.
//!
//! As in the seed ("pgbench -t is set according to the client count, so that the same amount
//! of data is inserted"), every session count loads the same data by default: `--total-copies`
//! COPYs in all (default: the largest session count), each session running its share one after
//! another. Session counts then differ only in concurrency, not also in how much of the data
//! outgrows shared_buffers and must be written out; and the smallest counts run long enough to
//! be timed. `--total-copies 0` gives each session one COPY instead (the data grows with the
//! sessions).
//!
//! Files as the seed's: `small` 100,000 rows, `medium` 600,000 rows, each row one text value
//! like `repeat(random()::text, 5)`; text and binary formats of the same rows.

use super::postgres::{find_bin, PgServer};
use super::{bad_arg, print_header, Common, Report, Workdir};
use crate::db::Database;
use crate::error::{PgError, Result};
use crate::storage::ForkNumber;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::Instant;

#[derive(clap::Args, Debug, Clone)]
pub struct CopyArgs {
    #[command(flatten)]
    pub common: Common,
    /// File formats, comma-separated: text, binary.
    #[arg(long, value_delimiter = ',', default_value = "text,binary")]
    pub formats: Vec<String>,
    /// File sizes: small (100,000 rows), medium (600,000 rows).
    #[arg(long, value_delimiter = ',', default_value = "small")]
    pub sizes: Vec<String>,
    /// Free space map: on, off, or both ("on,off").
    #[arg(long, value_delimiter = ',', default_value = "on")]
    pub fsm: Vec<String>,
    /// Table persistence: unlogged, logged (or both: "unlogged,logged").
    #[arg(long, value_delimiter = ',', default_value = "unlogged")]
    pub persistence: Vec<String>,
    /// shared_buffers for both systems.
    #[arg(long, default_value = "128MB")]
    pub shared_buffers: String,
    /// COPYs per point in all, shared out among the sessions (each runs total / sessions,
    /// rounded up), so that every session count loads the same data, as the seed's pgbench -t;
    /// default: the largest session count. 0: each session runs one COPY.
    #[arg(long)]
    pub total_copies: Option<usize>,
}

/// Writes `rows` rows of `repeat(random()::text, 5)` in text and binary COPY format.
pub fn generate(dir: &Path, rows: u64) -> Result<(PathBuf, PathBuf, u64)> {
    let text = dir.join(format!("copy_{rows}.txt"));
    let bin = dir.join(format!("copy_{rows}.bin"));
    let mut t = std::io::BufWriter::new(std::fs::File::create(&text).map_err(|e| PgError::io("create", &text, e))?);
    let mut b = std::io::BufWriter::new(std::fs::File::create(&bin).map_err(|e| PgError::io("create", &bin, e))?);
    let io = |e, p: &Path| PgError::io("write", p, e);
    b.write_all(b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0").map_err(|e| io(e, &bin))?;
    let mut rng = crate::rng::Rng::new(0x853c_49e6_748f_ea9b);
    let mut bytes = 0u64;
    for _ in 0..rows {
        let v = format!("{}", rng.next_f64()).repeat(5);
        t.write_all(v.as_bytes()).and_then(|_| t.write_all(b"\n")).map_err(|e| io(e, &text))?;
        bytes += v.len() as u64 + 1;
        b.write_all(&1i16.to_be_bytes()).map_err(|e| io(e, &bin))?;
        b.write_all(&(v.len() as i32).to_be_bytes()).map_err(|e| io(e, &bin))?;
        b.write_all(v.as_bytes()).map_err(|e| io(e, &bin))?;
    }
    b.write_all(&(-1i16).to_be_bytes()).map_err(|e| io(e, &bin))?;
    t.flush().map_err(|e| io(e, &text))?;
    b.flush().map_err(|e| io(e, &bin))?;
    Ok((text, bin, bytes))
}

#[derive(Clone)]
struct Config {
    format: String,
    size: String,
    rows: u64,
    fsm: bool,
    logged: bool,
}

impl Config {
    fn name(&self) -> String {
        format!(
            "{} {} {} {}",
            self.format,
            self.size,
            if self.fsm { "fsm" } else { "no_fsm" },
            if self.logged { "logged" } else { "unlogged" }
        )
    }
}

/// Runs the experiment; `set` are the command line's `--set name=value` heapstore settings.
pub fn run(args: CopyArgs, set_args: &[String]) -> Result<()> {
    let c = &args.common;
    let quick = c.quick;
    let clients = c.clients.clone().unwrap_or_else(|| if quick { vec![1, 2] } else { vec![1, 2, 4, 8, 16, 32] });
    let runs = c.runs.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let work = Workdir::new(c.data_dir.as_deref())?;
    super::open_up(&work.path)?;
    let mut configs = Vec::new();
    for p in &args.persistence {
        let logged = match p.as_str() {
            "unlogged" => false,
            "logged" => true,
            other => return Err(bad_arg(format!("unknown persistence \"{other}\" (unlogged, logged)"))),
        };
        for size in &args.sizes {
            let rows = match (size.as_str(), quick) {
                (_, true) => 2_000,
                ("small", _) => 100_000,
                ("medium", _) => 600_000,
                (other, _) => return Err(bad_arg(format!("unknown size \"{other}\" (small, medium)"))),
            };
            for f in &args.formats {
                if f != "text" && f != "binary" {
                    return Err(bad_arg(format!("unknown format \"{f}\" (text, binary)")));
                }
                for fsm in &args.fsm {
                    let fsm = crate::config::parse_bool(fsm).ok_or_else(|| bad_arg(format!("--fsm takes on/off, not \"{fsm}\"")))?;
                    configs.push(Config { format: f.clone(), size: size.clone(), rows, fsm, logged });
                }
            }
        }
    }
    let mut settings: Vec<(String, String)> = vec![("shared_buffers".into(), args.shared_buffers.clone())];
    for s in set_args {
        let (k, v) = s.split_once('=').ok_or_else(|| bad_arg(format!("--set takes name=value, not \"{s}\"")))?;
        settings.push((k.into(), v.into()));
    }
    let pg = if c.vs_postgres {
        let bin = find_bin(c.pg_bin.as_deref())?;
        Some(PgServer::start(&bin, &work.path.join("pg"), &args.shared_buffers, c.pg_user.clone(), &[("max_connections", "200")])?)
    } else {
        None
    };
    print_header("copy", &work.path, &settings, pg.as_ref().map(|p| p.version.as_str()));
    let top = clients.iter().copied().max().unwrap_or(1);
    match args.total_copies.unwrap_or(top) {
        0 => println!("data per point: each session runs one COPY of its file (the data grows with the sessions)\n"),
        t => println!("data per point: {t} COPYs of the file in all, shared out among the sessions (--total-copies)\n"),
    }
    let mut report = Report::new("copy", settings.clone());
    report.pg_version = pg.as_ref().map(|p| p.version.clone());
    let mut files = std::collections::HashMap::new();
    let mut lock_tables = Vec::new();
    for cfg in &configs {
        if let std::collections::hash_map::Entry::Vacant(e) = files.entry(cfg.rows) {
            e.insert(generate(&work.path, cfg.rows)?);
        }
        let (text, bin, text_bytes) = files[&cfg.rows].clone();
        let file = if cfg.format == "text" { text } else { bin };
        let fmt = if cfg.format == "text" { "text" } else { "binary" };
        let mut set: Vec<String> = set_args.to_vec();
        set.push(format!("shared_buffers={}", args.shared_buffers));
        set.push(format!("heapstore.use_fsm={}", if cfg.fsm { "on" } else { "off" }));
        set.push(format!("max_connections={}", clients.iter().max().copied().unwrap_or(1).max(100)));
        let hs_dir = work.path.join(format!("hs_{}", cfg.name().replace(' ', "_")));
        Database::init(&hs_dir, &[])?;
        let db = Database::open(&hs_dir, &set)?;
        let total = args.total_copies.unwrap_or(top);
        // Run by run, every session count in turn: on a shared, noisy machine a slow spell
        // then hits all session counts alike instead of all runs of one.
        for r in 0..runs {
            for &n in &clients {
                let create = if cfg.logged { "CREATE TABLE copytest (data text)" } else { "CREATE UNLOGGED TABLE copytest (data text)" };
                let before = crate::lock::lwlock::lwlock_stats();
                let copies = total.div_ceil(n).max(1);
                let f = heapstore_run_measured(&db, &file, fmt, n, copies, create)?;
                let (secs, mb) = (f.seconds, f.table_mb);
                if n == top && r == runs - 1 {
                    lock_tables.push((cfg.name(), n, secs, before, crate::lock::lwlock::lwlock_stats()));
                }
                let gb = mb / 1024.0;
                report.add(
                    "heapstore",
                    &cfg.name(),
                    n,
                    r,
                    json!({
                        "seconds": secs,
                        "table_mb_per_s": mb / secs,
                        "table_mb": mb,
                        "copies_per_session": copies,
                        "input_mb": text_bytes as f64 / 1048576.0 * (n * copies) as f64,
                        "user_cpu_s_per_gb": f.cpu.user / gb,
                        "sys_cpu_s_per_gb": f.cpu.sys / gb,
                        "machine_busy": f.machine_busy,
                        "blocks_written_by_sessions": f.written_by_sessions,
                        "blocks_written_by_bgwriter": f.written_by_bgwriter,
                    }),
                );
                if let Some(pg) = &pg {
                    let (secs, mb) = postgres_run(pg, &work.path, &file, fmt, n, copies, create)?;
                    report.add("postgres", &cfg.name(), n, r, json!({"seconds": secs, "table_mb_per_s": mb / secs, "table_mb": mb}));
                }
            }
        }
        db.close()?;
        let _ = std::fs::remove_dir_all(&hs_dir);
    }
    print_tables(&report, pg.is_some());
    for (name, n, secs, before, after) in &lock_tables {
        super::print_lwlock_waits(name, *n, *secs, before, after);
    }
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-copy.json"));
    report.write_json(&json_path, &work.path, &["seconds", "table_mb_per_s"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-copy.png"));
    let mut series = Vec::new();
    for cfg in report.configs() {
        for system in ["heapstore", "postgres"] {
            let pts: Vec<(f64, f64)> = report
                .clients(&cfg)
                .into_iter()
                .filter_map(|n| report.spread(system, &cfg, n, "table_mb_per_s").map(|s| (n as f64, s.median)))
                .collect();
            if !pts.is_empty() {
                series.push(super::plot::Series { label: format!("{system}: {cfg}"), points: pts });
            }
        }
    }
    super::plot::line_chart(&plot_path, "Concurrent COPY into one table (seed 000)", "sessions", "table MB/s", &series)?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    Ok(())
}

/// N sessions each COPY `file` once into a fresh table `copytest` made by `create`; returns
/// (seconds, table MB).
pub(crate) fn heapstore_run(db: &Database, file: &Path, fmt: &str, n: usize, create: &str) -> Result<(f64, f64)> {
    let r = heapstore_run_measured(db, file, fmt, n, 1, create)?;
    Ok((r.seconds, r.table_mb))
}

/// What one heapstore run measured.
pub(crate) struct RunFigures {
    pub seconds: f64,
    pub table_mb: f64,
    /// This process's CPU time during the run.
    pub cpu: super::CpuSeconds,
    /// Fraction of the machine's CPU time that was busy during the run (all processes).
    pub machine_busy: Option<f64>,
    /// Blocks written during the run by the sessions (evicting dirty victims) and by the
    /// background writer.
    pub written_by_sessions: u64,
    pub written_by_bgwriter: u64,
}

/// N sessions each COPY `file` `copies` times, one after another (each COPY its own
/// transaction), into a fresh table `copytest` made by `create`; also measures CPU time during
/// the timed window.
pub(crate) fn heapstore_run_measured(db: &Database, file: &Path, fmt: &str, n: usize, copies: usize, create: &str) -> Result<RunFigures> {
    let mut s = db.session();
    s.execute(&format!("DROP TABLE IF EXISTS copytest; {create}"))?;
    let barrier = Barrier::new(n + 1);
    let sql = format!("COPY copytest FROM '{}' WITH (FORMAT {fmt})", file.display());
    let (mut cpu0, mut m0) = (super::cpu_seconds(), None);
    let st0 = db.stats();
    // The window is measured by the sessions themselves, from the first one that starts after
    // the barrier to the last one that finishes: on an oversubscribed machine the main thread
    // may be scheduled well after the barrier opens, and a clock read there would miss the
    // start of the run.
    let secs = std::thread::scope(|sc| -> Result<f64> {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let (barrier, sql) = (&barrier, &sql);
                sc.spawn(move || -> Result<(Instant, Instant)> {
                    let mut s = db.session();
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..copies {
                        s.execute(sql)?;
                    }
                    Ok((start, Instant::now()))
                })
            })
            .collect();
        (cpu0, m0) = (super::cpu_seconds(), super::machine_ticks());
        barrier.wait();
        let mut window: Option<(Instant, Instant)> = None;
        for h in handles {
            let (a, b) = h.join().map_err(|_| PgError::internal("COPY session panicked"))??;
            window = Some(window.map_or((a, b), |(s, e)| (s.min(a), e.max(b))));
        }
        let (start, end) = window.expect("at least one session");
        Ok(end.duration_since(start).as_secs_f64())
    });
    let (cpu1, m1) = (super::cpu_seconds(), super::machine_ticks());
    let st1 = db.stats();
    let secs = secs?;
    let t = s.table("copytest")?;
    let sh = db.shared();
    let mb = sh.smgr.nblocks(t.relfile, ForkNumber::Main)? as f64 * sh.block_size as f64 / 1048576.0;
    let machine_busy = match (m0, m1) {
        (Some((b0, i0)), Some((b1, i1))) if b1 + i1 > b0 + i0 => Some((b1 - b0) as f64 / ((b1 + i1) - (b0 + i0)) as f64),
        _ => None,
    };
    Ok(RunFigures {
        seconds: secs,
        table_mb: mb,
        cpu: cpu1.since(cpu0),
        machine_busy,
        written_by_sessions: st1.writes_by("client backend").saturating_sub(st0.writes_by("client backend")),
        written_by_bgwriter: st1.bgwriter.buffers_clean.saturating_sub(st0.bgwriter.buffers_clean),
    })
}

/// N pgbench clients each run `copies` COPYs of `file` (pgbench -t) into a fresh `copytest`;
/// returns (seconds, table MB).
pub(crate) fn postgres_run(
    pg: &PgServer,
    work: &Path,
    file: &Path,
    fmt: &str,
    n: usize,
    copies: usize,
    create: &str,
) -> Result<(f64, f64)> {
    pg.psql(&format!("DROP TABLE IF EXISTS copytest; {create}"))?;
    let script = work.join("copy.sql");
    std::fs::write(&script, format!("COPY copytest FROM '{}' WITH (FORMAT {fmt});\n", file.display()))
        .map_err(|e| PgError::io("write", &script, e))?;
    super::open_up(&script).ok();
    let jobs = n.min(std::thread::available_parallelism().map(|x| x.get()).unwrap_or(1)).to_string();
    let t0 = Instant::now();
    pg.pgbench(&script, &["-n", "-c", &n.to_string(), "-j", &jobs, "-t", &copies.to_string()])?;
    let secs = t0.elapsed().as_secs_f64();
    let bytes: f64 = pg.psql("SELECT pg_relation_size('copytest')")?.trim().parse().unwrap_or(0.0);
    Ok((secs, bytes / 1048576.0))
}

fn print_tables(r: &Report, vs: bool) {
    for cfg in r.configs() {
        println!("config: {cfg}");
        let mut rows = Vec::new();
        let mut best = 0.0f64;
        let mut last = 0.0f64;
        for n in r.clients(&cfg) {
            let hs_s = r.spread("heapstore", &cfg, n, "seconds");
            let hs = r.spread("heapstore", &cfg, n, "table_mb_per_s");
            let user = r.spread("heapstore", &cfg, n, "user_cpu_s_per_gb").map(|s| s.median);
            let sys = r.spread("heapstore", &cfg, n, "sys_cpu_s_per_gb").map(|s| s.median);
            let busy = r.spread("heapstore", &cfg, n, "machine_busy").map(|s| s.median);
            let by_sessions = r.spread("heapstore", &cfg, n, "blocks_written_by_sessions").map(|s| s.median);
            let by_bgwriter = r.spread("heapstore", &cfg, n, "blocks_written_by_bgwriter").map(|s| s.median);
            let mut row = vec![
                n.to_string(),
                hs_s.map(|s| s.show(3)).unwrap_or_default(),
                hs.map(|s| s.show(0)).unwrap_or_default(),
                match (user, sys) {
                    (Some(u), Some(s)) => format!("{u:.2} + {s:.2}"),
                    _ => String::new(),
                },
                busy.map(|b| format!("{:.0}", 100.0 * b)).unwrap_or_default(),
                match (by_sessions, by_bgwriter) {
                    (Some(s), Some(b)) => format!("{s:.0} / {b:.0}"),
                    _ => String::new(),
                },
            ];
            if let Some(h) = hs {
                best = best.max(h.median);
                last = h.median;
            }
            if vs {
                let pg_s = r.spread("postgres", &cfg, n, "seconds");
                let pg = r.spread("postgres", &cfg, n, "table_mb_per_s");
                row.push(pg_s.map(|s| s.show(3)).unwrap_or_default());
                row.push(pg.map(|s| s.show(0)).unwrap_or_default());
                row.push(match (hs, pg) {
                    (Some(h), Some(p)) if p.median > 0.0 => format!("{:.2}", h.median / p.median),
                    _ => String::new(),
                });
            }
            rows.push(row);
        }
        let mut header = vec![
            "clients",
            "heapstore seconds",
            "heapstore table MB/s",
            "CPU s/GB user + sys",
            "machine busy %",
            "blocks written: sessions / bgwriter",
        ];
        if vs {
            header.extend(["postgres seconds", "postgres table MB/s", "ratio"]);
        }
        super::print_table(&header, 1, rows);
        if best > 0.0 {
            println!("heapstore at the most sessions: {:.0}% of its best session count\n", 100.0 * last / best);
        }
    }
}

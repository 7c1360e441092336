//! `heapstore bench copy` — seed 000's experiment: N sessions each COPY their own copy of a
//! generated file into one table; table MB/s per session count, per configuration (format,
//! file size, FSM on/off, logged/unlogged).
//!
//! Like for like: every system is driven by the same client program the same way. pgbench
//! (`-n -c N -j min(N, cores) -t COPIES -f copy.sql`, the script one server-side
//! `COPY copytest FROM '/abs/file' WITH (FORMAT f)`) runs against `heapstore serve` (a child
//! process) and, with `--vs-postgres`, against every PostgreSQL major version found, each over
//! a Unix socket, with the same table definition (`copytest (data text)`, logged or unlogged as
//! the configuration says, dropped and created before each run, untimed), the same file and the
//! same `shared_buffers`. Each figure is the whole pgbench process's wall time, from its start
//! until its last client is done; table MB/s divides each system's own table size
//! (`pg_relation_size('copytest')` after the run) by it. The ratio against PostgreSQL is of
//! seconds for the same rows, since the tables' sizes differ. The FSM switch is heapstore's own
//! (`heapstore.use_fsm`): PostgreSQL runs only in the configurations with the FSM on.
//!
//! `--in-process` adds heapstore's sessions as threads calling the library (no protocol, no
//! socket, timed by the sessions' own window), with its CPU seconds per GB, machine busy share,
//! the CPU breakdown per GB (the session threads' own CPU time, and the writer threads': WAL
//! writer, write-back worker, background writer, checkpointer, from /proc/self/task), blocks
//! written by sessions, the background writer and the write-back worker, the WAL inserted, and
//! an LWLock wait table: labelled
//! "in-process", never in the ratio column.
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
//!
//! Invariant: the systems alternate run by run (bench invariant 1).

use super::postgres::{find_bin, find_bins, PgServer, ServeChild, Target};
use super::{bad_arg, print_header, Common, Report, Workdir};
use crate::db::Database;
use crate::error::{PgError, Result};
use crate::storage::ForkNumber;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::Instant;

/// The system label of heapstore's in-process figures (never compared with PostgreSQL).
pub const IN_PROCESS: &str = "heapstore-in-process";

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
    /// Free space map (heapstore's heapstore.use_fsm): on, off, or both ("on,off").
    /// PostgreSQL runs only where it is on.
    #[arg(long, value_delimiter = ',', default_value = "on")]
    pub fsm: Vec<String>,
    /// Table persistence, the same on every system: unlogged, logged (or both: "unlogged,logged").
    #[arg(long, value_delimiter = ',', default_value = "unlogged")]
    pub persistence: Vec<String>,
    /// shared_buffers for every system.
    #[arg(long, default_value = "128MB")]
    pub shared_buffers: String,
    /// COPYs per point in all, shared out among the sessions (each runs total / sessions,
    /// rounded up), so that every session count loads the same data, as the seed's pgbench -t;
    /// default: the largest session count. 0: each session runs one COPY.
    #[arg(long)]
    pub total_copies: Option<usize>,
    /// Also measure heapstore in-process (sessions as threads calling the library), shown
    /// labelled and never compared with PostgreSQL.
    #[arg(long)]
    pub in_process: bool,
    /// heapstore's `COPY ... WITH (PARALLEL n)` values, comma-separated (1: serial). Each
    /// value above 1 is a configuration of its own, shown with its speed over the same
    /// configuration at 1 in the same run; PostgreSQL (which has no such option) runs at 1.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub parallel: Vec<usize>,
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

/// The COPY statement heapstore runs for `file` with `PARALLEL n` (1: serial, no option).
fn copy_sql(file: &Path, fmt: &str, parallel: usize) -> String {
    match parallel {
        1 => format!("COPY copytest FROM '{}' WITH (FORMAT {fmt})", file.display()),
        n => format!("COPY copytest FROM '{}' WITH (FORMAT {fmt}, PARALLEL {n})", file.display()),
    }
}

/// The system label of heapstore at `PARALLEL n` (`base` at 1).
fn parallel_label(base: &str, n: usize) -> String {
    match n {
        1 => base.to_string(),
        n => format!("{base} parallel {n}"),
    }
}

/// Runs the experiment; `set` are the command line's `--set name=value` heapstore settings.
pub fn run(args: CopyArgs, set_args: &[String]) -> Result<()> {
    let c = &args.common;
    let quick = c.quick;
    let clients = c.clients.clone().unwrap_or_else(|| if quick { vec![1, 2] } else { vec![1, 4, 16, 32] });
    if clients.contains(&0) {
        return Err(bad_arg("--clients must be at least 1"));
    }
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
    let top = clients.iter().copied().max().unwrap_or(1);
    let total = args.total_copies.unwrap_or(top);
    let mut parallel = args.parallel.clone();
    if parallel.contains(&0) {
        return Err(bad_arg("--parallel values must be at least 1"));
    }
    if !parallel.contains(&1) {
        parallel.insert(0, 1);
    }
    parallel.dedup();
    // One pgbench drives every system, so it is needed even without --vs-postgres.
    let pg_bin = find_bin(c.pg_bin.as_deref())?;
    let pg_bins = if c.vs_postgres { find_bins(c.pg_bin.as_deref())? } else { Vec::new() };
    let mut settings: Vec<(String, String)> = vec![
        ("shared_buffers".into(), format!("{} (every system)", args.shared_buffers)),
        ("client".into(), "pgbench -n -c N -j min(N, cores) -t COPIES -f copy.sql over a Unix socket, for every system".into()),
        ("copy.sql".into(), "COPY copytest FROM '<absolute path>' WITH (FORMAT <format>) (read by the server)".into()),
        ("timing".into(), "the whole pgbench process's wall time, for every system".into()),
        ("heapstore".into(), "heapstore serve (a child process)".into()),
        ("pgbench".into(), pg_bin.join("pgbench").display().to_string()),
    ];
    if args.in_process {
        settings.push(("heapstore in-process".into(), "sessions are threads calling the library (not compared)".into()));
    }
    for s in set_args {
        let (k, v) = s.split_once('=').ok_or_else(|| bad_arg(format!("--set takes name=value, not \"{s}\"")))?;
        settings.push((k.into(), v.into()));
    }
    let max_conns = (top + 10).max(100);
    let mut pgs: Vec<(String, PgServer)> = Vec::new();
    for (major, bin) in &pg_bins {
        let conns = max_conns.to_string();
        let pg = PgServer::start(
            bin,
            &work.path.join(format!("pg{major}")),
            &args.shared_buffers,
            c.pg_user.clone(),
            &[("max_connections", &conns)],
        )?
        .with_clients(&pg_bin);
        pgs.push((format!("postgres {major}"), pg));
    }
    let versions: Vec<String> = pgs.iter().map(|(_, p)| p.version.clone()).collect();
    let pg_version = (!versions.is_empty()).then(|| versions.join("; "));
    print_header("copy", &work.path, &settings, pg_version.as_deref());
    match total {
        0 => println!("data per point: each session runs one COPY of its file (the data grows with the sessions)\n"),
        t => println!("data per point: {t} COPYs of the file in all, shared out among the sessions (--total-copies)\n"),
    }
    let mut report = Report::new("copy", settings.clone());
    report.pg_version = pg_version;
    let mut files = std::collections::HashMap::new();
    let mut lock_tables = Vec::new();
    for cfg in &configs {
        if let std::collections::hash_map::Entry::Vacant(e) = files.entry(cfg.rows) {
            let (text, bin, bytes) = generate(&work.path, cfg.rows)?;
            super::open_up(&text)?;
            super::open_up(&bin)?;
            e.insert((text, bin, bytes));
        }
        let (text, bin, text_bytes) = files[&cfg.rows].clone();
        let file = if cfg.format == "text" { text } else { bin };
        let fmt = if cfg.format == "text" { "text" } else { "binary" };
        let script = work.path.join(format!("copy_{}_{fmt}.sql", cfg.rows));
        std::fs::write(&script, format!("COPY copytest FROM '{}' WITH (FORMAT {fmt});\n", file.display()))
            .map_err(|e| PgError::io("write", &script, e))?;
        let mut targets: Vec<(String, Target, PathBuf)> = Vec::new();
        let mut set: Vec<String> = set_args.to_vec();
        set.push(format!("shared_buffers={}", args.shared_buffers));
        set.push(format!("heapstore.use_fsm={}", if cfg.fsm { "on" } else { "off" }));
        set.push(format!("max_connections={max_conns}"));
        let tag = cfg.name().replace(' ', "_");
        let hs_dir = work.path.join(format!("hs_{tag}"));
        Database::init(&hs_dir, &[])?;
        let serve = ServeChild::start(&pg_bin, &hs_dir, &work.path.join(format!("serve_{tag}")), &set)?;
        for &p in &parallel {
            let hs_script = work.path.join(format!("copy_{}_{fmt}_parallel{p}.sql", cfg.rows));
            std::fs::write(&hs_script, format!("{};\n", copy_sql(&file, fmt, p))).map_err(|e| PgError::io("write", &hs_script, e))?;
            targets.push((parallel_label("heapstore", p), serve.target(), hs_script));
        }
        if cfg.fsm {
            targets.extend(pgs.iter().map(|(l, p)| (l.clone(), p.target(), script.clone())));
        }
        let in_proc = if args.in_process {
            let d = work.path.join(format!("inproc_{tag}"));
            Database::init(&d, &[])?;
            Some((Database::open(&d, &set)?, d))
        } else {
            None
        };
        let create = if cfg.logged { "CREATE TABLE copytest (data text)" } else { "CREATE UNLOGGED TABLE copytest (data text)" };
        // Run by run, every session count in turn, every system in turn: on a shared, noisy
        // machine a slow spell then hits all session counts and systems alike.
        for r in 0..runs {
            for &n in &clients {
                let copies = total.div_ceil(n).max(1);
                let input_mb = text_bytes as f64 / 1048576.0 * (n * copies) as f64;
                for (label, t, script) in &targets {
                    let (secs, mb) = client_run(t, script, n, copies, cfg.rows, create)?;
                    report.add(
                        label,
                        &cfg.name(),
                        n,
                        r,
                        json!({"seconds": secs, "table_mb_per_s": mb / secs, "table_mb": mb,
                            "copies_per_session": copies, "input_mb": input_mb}),
                    );
                }
                for &p in parallel.iter().filter(|_| in_proc.is_some()) {
                    let Some((db, _)) = &in_proc else { break };
                    let before = crate::lock::lwlock::lwlock_stats();
                    let f = heapstore_run_measured(db, &copy_sql(&file, fmt, p), n, copies, create)?;
                    let (secs, mb) = (f.seconds, f.table_mb);
                    if n == top && r == runs - 1 && p == 1 {
                        lock_tables.push((cfg.name(), n, secs, before, crate::lock::lwlock::lwlock_stats()));
                    }
                    let gb = mb / 1024.0;
                    report.add(
                        &parallel_label(IN_PROCESS, p),
                        &cfg.name(),
                        n,
                        r,
                        json!({
                            "seconds": secs,
                            "table_mb_per_s": mb / secs,
                            "table_mb": mb,
                            "copies_per_session": copies,
                            "input_mb": input_mb,
                            "user_cpu_s_per_gb": f.cpu.user / gb,
                            "sys_cpu_s_per_gb": f.cpu.sys / gb,
                            "machine_busy": f.machine_busy,
                            "blocks_written_by_sessions": f.written_by_sessions,
                            "blocks_written_by_bgwriter": f.written_by_bgwriter,
                            "blocks_written_by_write_back": f.written_by_write_back,
                            "session_cpu_s_per_gb": f.cpu_sessions / gb,
                            "writer_cpu_s_per_gb": f.cpu_writers / gb,
                            "wal_mb": f.wal_mb,
                        }),
                    );
                }
            }
        }
        serve.stop()?;
        let _ = std::fs::remove_dir_all(&hs_dir);
        if let Some((db, d)) = in_proc {
            db.close()?;
            let _ = std::fs::remove_dir_all(&d);
        }
    }
    let pg_labels: Vec<String> = pgs.iter().map(|(l, _)| l.clone()).collect();
    print_tables(&report, &pg_labels, args.in_process, &parallel);
    for (name, n, secs, before, after) in &lock_tables {
        super::print_lwlock_waits(&format!("in-process, {name}"), *n, *secs, before, after);
    }
    drop(pgs);
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-copy.json"));
    report.write_json(&json_path, &work.path, &["seconds", "table_mb_per_s"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-copy.png"));
    let mut systems = vec!["heapstore".to_string()];
    systems.extend(pg_labels.iter().cloned());
    systems.push(IN_PROCESS.to_string());
    for &p in parallel.iter().filter(|&&p| p > 1) {
        systems.push(parallel_label("heapstore", p));
        systems.push(parallel_label(IN_PROCESS, p));
    }
    let mut series = Vec::new();
    for cfg in report.configs() {
        for system in &systems {
            let pts: Vec<(f64, f64)> = report
                .clients(&cfg)
                .into_iter()
                .filter_map(|n| report.spread(system, &cfg, n, "table_mb_per_s").map(|s| (n as f64, s.median)))
                .collect();
            if !pts.is_empty() {
                let label = match system.as_str() {
                    "heapstore" => "heapstore serve",
                    IN_PROCESS => "heapstore in-process",
                    other => other,
                };
                series.push(super::plot::Series { label: format!("{label}: {cfg}"), points: pts });
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
    let sql = format!("COPY copytest FROM '{}' WITH (FORMAT {fmt})", file.display());
    let r = heapstore_run_measured(db, &sql, n, 1, create)?;
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
    pub written_by_write_back: u64,
    /// CPU seconds of the session threads and of the writer threads during the run.
    pub cpu_sessions: f64,
    pub cpu_writers: f64,
    /// WAL inserted during the run.
    pub wal_mb: f64,
}

/// N sessions each run `sql` (a COPY into `copytest`) `copies` times, one after another (each
/// COPY its own transaction), into a fresh table `copytest` made by `create`; also measures CPU
/// time during the timed window (a parallel COPY's worker threads count with the sessions).
pub(crate) fn heapstore_run_measured(db: &Database, sql: &str, n: usize, copies: usize, create: &str) -> Result<RunFigures> {
    let mut s = db.session();
    s.execute(&format!("DROP TABLE IF EXISTS copytest; {create}"))?;
    let barrier = Barrier::new(n + 1);
    let workers_cpu0 = crate::copy::exec::copy_worker_cpu_seconds();
    let (mut cpu0, mut m0) = (super::cpu_seconds(), None);
    let mut threads0 = Vec::new();
    let mut session_cpu = 0.0;
    let st0 = db.stats();
    let wal0 = db.shared().wal.stats().bytes;
    // The window is measured by the sessions themselves, from the first one that starts after
    // the barrier to the last one that finishes: on an oversubscribed machine the main thread
    // may be scheduled well after the barrier opens, and a clock read there would miss the
    // start of the run.
    let secs = std::thread::scope(|sc| -> Result<f64> {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let (barrier, sql) = (&barrier, &sql);
                let b = std::thread::Builder::new().name("copy session".into());
                b.spawn_scoped(sc, move || -> Result<(Instant, Instant, f64)> {
                    let mut s = db.session();
                    barrier.wait();
                    let (start, cpu) = (Instant::now(), super::this_thread_cpu());
                    for _ in 0..copies {
                        s.execute(sql)?;
                    }
                    Ok((start, Instant::now(), super::this_thread_cpu() - cpu))
                })
                .expect("spawn a COPY session")
            })
            .collect();
        (cpu0, m0) = (super::cpu_seconds(), super::machine_ticks());
        threads0 = super::thread_cpu();
        barrier.wait();
        let mut window: Option<(Instant, Instant)> = None;
        for h in handles {
            let (a, b, cpu) = h.join().map_err(|_| PgError::internal("COPY session panicked"))??;
            window = Some(window.map_or((a, b), |(s, e)| (s.min(a), e.max(b))));
            session_cpu += cpu;
        }
        let (start, end) = window.expect("at least one session");
        Ok(end.duration_since(start).as_secs_f64())
    });
    let (cpu1, m1) = (super::cpu_seconds(), super::machine_ticks());
    let threads = super::thread_cpu_by(&threads0, &super::thread_cpu(), thread_group);
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
        written_by_write_back: st1.writes_by("write-back worker").saturating_sub(st0.writes_by("write-back worker")),
        cpu_sessions: session_cpu + (crate::copy::exec::copy_worker_cpu_seconds() - workers_cpu0),
        wal_mb: sh.wal.stats().bytes.saturating_sub(wal0) as f64 / 1048576.0,
        cpu_writers: threads.iter().filter(|t| t.0 == "writers").map(|t| t.1).sum(),
    })
}

/// The CPU breakdown's groups: the threads that write (WAL writer, write-back worker,
/// background writer, checkpointer) and the rest. (The sessions measure their own CPU time:
/// they have ended when the run's second sample is taken.)
fn thread_group(name: &str) -> &'static str {
    match name {
        "wal writer" | "wal prealloc" | "write-back" | "bgwriter" | "checkpointer" => "writers",
        _ => "other",
    }
}

/// Through a server's client programs: drops and creates `copytest` with `create` (psql,
/// untimed), then runs pgbench with `n` clients, each running `copies` transactions of
/// `script` (one COPY each); returns (the pgbench process's wall time in seconds, the table's
/// MB by `pg_relation_size`). The same function, so the same client and timing, for every
/// system.
/// `file_rows` is the file's row count: the table must hold `n × copies × file_rows` rows after
/// the run, or the run fails.
pub(crate) fn client_run(t: &Target, script: &Path, n: usize, copies: usize, file_rows: u64, create: &str) -> Result<(f64, f64)> {
    t.psql(&format!("DROP TABLE IF EXISTS copytest; {create}"))?;
    let jobs = n.min(std::thread::available_parallelism().map(|x| x.get()).unwrap_or(1));
    let args = [n.to_string(), jobs.to_string(), copies.to_string(), script.to_string_lossy().into_owned()];
    let (secs, _, _) = t.pgbench_timed(&["-n", "-c", &args[0], "-j", &args[1], "-t", &args[2], "-f", &args[3]])?;
    let out = t.psql("SELECT pg_relation_size('copytest'), count(*) FROM copytest")?;
    let (bytes, rows) = out.trim().split_once('|').unwrap_or(("0", "0"));
    let expected = (n * copies) as u64 * file_rows;
    if rows.parse::<u64>().ok() != Some(expected) {
        return Err(PgError::internal(format!("after the COPYs copytest holds {rows} rows, not {expected}")));
    }
    Ok((secs, bytes.parse::<f64>().unwrap_or(0.0) / 1048576.0))
}

fn print_tables(r: &Report, pgs: &[String], in_process: bool, parallel: &[usize]) {
    for cfg in r.configs() {
        println!("config: {cfg}");
        let mut rows = Vec::new();
        let mut systems: Vec<(String, String)> = parallel
            .iter()
            .map(|&p| match p {
                1 => ("heapstore".to_string(), "heapstore serve (Unix socket)".to_string()),
                p => (parallel_label("heapstore", p), format!("heapstore serve, COPY PARALLEL {p}")),
            })
            .collect();
        systems.extend(pgs.iter().map(|p| (p.clone(), format!("{p} (Unix socket)"))));
        for n in r.clients(&cfg) {
            for (sys, label) in &systems {
                let (Some(secs), Some(mbs)) = (r.spread(sys, &cfg, n, "seconds"), r.spread(sys, &cfg, n, "table_mb_per_s")) else {
                    continue;
                };
                let table = r.spread(sys, &cfg, n, "table_mb").map(|s| format!("{:.1}", s.median)).unwrap_or_default();
                // On each PostgreSQL row: that version's seconds over heapstore serve's for the same
                // rows (not table MB/s: each system's table has its own size — heapstore's holds
                // the pages extended ahead and left unused, PostgreSQL's its own extension slack).
                let ratio = match (sys.starts_with("postgres"), r.spread("heapstore", &cfg, n, "seconds")) {
                    (true, Some(h)) if h.median > 0.0 => format!("{:.2}", secs.median / h.median),
                    _ => String::new(),
                };
                rows.push(vec![n.to_string(), label.clone(), secs.show(3), table, mbs.show(0), ratio]);
            }
        }
        super::print_table(
            &["clients", "system", "seconds (pgbench process)", "table MB", "table MB/s", "speed: heapstore serve / this (same rows)"],
            2,
            rows,
        );
        let best = r
            .clients(&cfg)
            .into_iter()
            .filter_map(|n| r.spread("heapstore", &cfg, n, "table_mb_per_s"))
            .map(|s| s.median)
            .fold(0.0, f64::max);
        let last = r.clients(&cfg).into_iter().max().and_then(|n| r.spread("heapstore", &cfg, n, "table_mb_per_s")).map(|s| s.median);
        if let (true, Some(last)) = (best > 0.0, last) {
            println!("heapstore serve at the most sessions: {:.0}% of its best session count", 100.0 * last / best);
        }
        for &p in parallel.iter().filter(|&&p| p > 1) {
            for (sys, label) in [("heapstore", "heapstore serve"), (IN_PROCESS, "heapstore in-process")] {
                let ratios: Vec<String> = r
                    .clients(&cfg)
                    .into_iter()
                    .filter_map(|n| {
                        let par = r.spread(&parallel_label(sys, p), &cfg, n, "seconds")?.median;
                        let ser = r.spread(sys, &cfg, n, "seconds")?.median;
                        (par > 0.0).then(|| format!("{n} session(s) {:.2}x", ser / par))
                    })
                    .collect();
                if !ratios.is_empty() {
                    println!(
                        "{label}: COPY PARALLEL {p}'s speed over serial COPY's (same rows, by seconds), same run: {}",
                        ratios.join(", ")
                    );
                }
            }
        }
        if in_process {
            let mut rows = Vec::new();
            for (n, &p) in r.clients(&cfg).into_iter().flat_map(|n| parallel.iter().map(move |p| (n, p))) {
                let sys = parallel_label(IN_PROCESS, p);
                let (Some(secs), Some(mbs)) = (r.spread(&sys, &cfg, n, "seconds"), r.spread(&sys, &cfg, n, "table_mb_per_s")) else {
                    continue;
                };
                let m = |f: &str| r.spread(&sys, &cfg, n, f).map(|s| s.median);
                rows.push(vec![
                    if p == 1 { n.to_string() } else { format!("{n}, PARALLEL {p}") },
                    secs.show(3),
                    mbs.show(0),
                    match (m("user_cpu_s_per_gb"), m("sys_cpu_s_per_gb")) {
                        (Some(u), Some(s)) => format!("{u:.2} + {s:.2}"),
                        _ => String::new(),
                    },
                    m("machine_busy").map(|b| format!("{:.0}", 100.0 * b)).unwrap_or_default(),
                    match (m("session_cpu_s_per_gb"), m("writer_cpu_s_per_gb")) {
                        (Some(s), Some(w)) => format!("{s:.2} / {w:.2}"),
                        _ => String::new(),
                    },
                    match (m("blocks_written_by_sessions"), m("blocks_written_by_bgwriter"), m("blocks_written_by_write_back")) {
                        (Some(s), Some(b), Some(w)) => format!("{s:.0} / {b:.0} / {w:.0}"),
                        _ => String::new(),
                    },
                    m("wal_mb").map(|w| format!("{w:.1}")).unwrap_or_default(),
                ]);
            }
            println!("heapstore in-process (sessions as threads calling the library, timed by their own window; not comparable):");
            super::print_table(
                &[
                    "clients",
                    "seconds",
                    "table MB/s",
                    "CPU s/GB user + sys",
                    "machine busy %",
                    "CPU s/GB sessions / writers",
                    "blocks written: sessions / bgwriter / write-back",
                    "WAL MB",
                ],
                1,
                rows,
            );
        }
        println!();
    }
}

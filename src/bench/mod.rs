//! `heapstore bench ...`: the seeds' experiments, one command each, all in one shape
//! (see the README's Benchmarks section): a header naming the machine and settings, the seed's table
//! with each figure a median (min..max) and a ratio against PostgreSQL where compared, a JSON
//! file with every run, and a PNG chart.
//!
//! Experiments: [`copy`] (seed 000's concurrent COPY), [`select_only`] (seed 000's pgbench -S),
//! `tpcb`, [`victim`] (seed 004's hot-pool victim search), [`wal`] (seed 001), [`lockbloat`]
//! (seed 003), [`seqscan`] (seed 002's ring × io_method matrix), [`query`] (the query executor's
//! GROUP BY and hash join through psql, like for like). Benchmarks are never tests: the
//! test suite only checks that `--quick` runs produce
//! well-formed JSON.
//!
//! Invariants:
//! 1. heapstore and PostgreSQL runs alternate run by run, so that the machine's drift (this is a
//!    shared, noisy 2-core machine) hits both alike; ratios are computed from medians of the
//!    same command.
//! 2. Figures carry their unit in their names (`seconds`, `table_mb_per_s`, `examined`).
//! 3. A ratio against PostgreSQL compares the same client program (pgbench or psql) over the
//!    same kind of socket against `heapstore serve` (system "heapstore") and PostgreSQL
//!    (systems "postgres N"), timed the same way. In-process figures (system
//!    "heapstore-in-process", or experiments that compare heapstore only with itself) are
//!    labelled so and never put in such a ratio; the JSON summary's `heapstore_over_this` is
//!    set only on PostgreSQL rows.

pub mod copy;
pub mod lockbloat;
pub mod plot;
pub mod postgres;
pub mod query;
pub mod select_only;
pub mod seqscan;
pub mod victim;
pub mod wal;

use crate::error::{sqlstate, PgError, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Flags every experiment shares.
#[derive(clap::Args, Debug, Clone)]
pub struct Common {
    /// Session counts, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub clients: Option<Vec<usize>>,
    /// Runs per point (the median is reported).
    #[arg(long)]
    pub runs: Option<usize>,
    /// Where to put the databases (default: a temporary directory; /dev/shm takes the disk out).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Write every run and the summary as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw the main figure as PNG here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Run the same workload on a local PostgreSQL started by the harness.
    #[arg(long)]
    pub vs_postgres: bool,
    /// Directory with PostgreSQL's initdb, pg_ctl, postgres, psql and pgbench.
    #[arg(long)]
    pub pg_bin: Option<PathBuf>,
    /// Unprivileged OS user to run PostgreSQL as when the harness runs as root
    /// (default: "postgres" if it exists).
    #[arg(long)]
    pub pg_user: Option<String>,
    /// Tiny sizes, a few seconds: for CI, which checks that experiments run, never how fast.
    #[arg(long)]
    pub quick: bool,
}

/// One measured run.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub system: String,
    pub config: String,
    pub clients: usize,
    pub run: usize,
    /// Figures by name (units in the names).
    pub figures: serde_json::Map<String, Value>,
}

/// Median, min and max of a figure over runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Some(Spread { median, min: v[0], max: v[n - 1] })
    }

    pub fn show(&self, decimals: usize) -> String {
        format!("{:.d$} ({:.d$}..{:.d$})", self.median, self.min, self.max, d = decimals)
    }
}

/// Collects runs and writes the report.
pub struct Report {
    pub experiment: String,
    pub settings: Vec<(String, String)>,
    pub runs: Vec<Run>,
    pub pg_version: Option<String>,
}

impl Report {
    pub fn new(experiment: &str, settings: Vec<(String, String)>) -> Report {
        Report { experiment: experiment.into(), settings, runs: Vec::new(), pg_version: None }
    }

    pub fn add(&mut self, system: &str, config: &str, clients: usize, run: usize, figures: Value) {
        let figures = match figures {
            Value::Object(m) => m,
            _ => panic!("figures must be an object"),
        };
        self.runs.push(Run { system: system.into(), config: config.into(), clients, run, figures });
    }

    /// The spread of `figure` for (system, config, clients).
    pub fn spread(&self, system: &str, config: &str, clients: usize, figure: &str) -> Option<Spread> {
        let v: Vec<f64> = self
            .runs
            .iter()
            .filter(|r| r.system == system && r.config == config && r.clients == clients)
            .filter_map(|r| r.figures.get(figure).and_then(|x| x.as_f64()))
            .collect();
        Spread::of(&v)
    }

    pub fn configs(&self) -> Vec<String> {
        let mut c: Vec<String> = Vec::new();
        for r in &self.runs {
            if !c.contains(&r.config) {
                c.push(r.config.clone());
            }
        }
        c
    }

    pub fn clients(&self, config: &str) -> Vec<usize> {
        let mut c: Vec<usize> = self.runs.iter().filter(|r| r.config == config).map(|r| r.clients).collect();
        c.sort_unstable();
        c.dedup();
        c
    }

    /// Writes the JSON file: `{experiment, machine, settings, runs, summary}`.
    pub fn write_json(&self, path: &Path, data_dir: &Path, figures: &[&str]) -> Result<()> {
        let mut systems: Vec<&str> = Vec::new();
        for r in &self.runs {
            if !systems.contains(&r.system.as_str()) {
                systems.push(&r.system);
            }
        }
        let mut summary = Vec::new();
        for config in self.configs() {
            for clients in self.clients(&config) {
                for &system in &systems {
                    for f in figures {
                        let Some(s) = self.spread(system, &config, clients, f) else { continue };
                        // On a PostgreSQL row: heapstore's (through the same client) median over
                        // this one's. In-process figures are never compared.
                        let ratio = if system.starts_with("postgres") {
                            self.spread("heapstore", &config, clients, f).map(|h| h.median / s.median)
                        } else {
                            None
                        };
                        summary.push(json!({"config": config, "clients": clients, "system": system, "figure": f,
                            "median": s.median, "min": s.min, "max": s.max, "heapstore_over_this": ratio}));
                    }
                }
            }
        }
        let v = json!({
            "experiment": self.experiment,
            "machine": machine(data_dir),
            "settings": self.settings.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "postgres_version": self.pg_version,
            "runs": self.runs.iter().map(|r| {
                let mut m = serde_json::Map::new();
                m.insert("system".into(), json!(r.system));
                m.insert("config".into(), json!(r.config));
                m.insert("clients".into(), json!(r.clients));
                m.insert("run".into(), json!(r.run));
                m.extend(r.figures.clone());
                Value::Object(m)
            }).collect::<Vec<_>>(),
            "summary": summary,
        });
        let bytes = serde_json::to_vec_pretty(&v).expect("serializable");
        std::fs::write(path, bytes).map_err(|e| PgError::io("write", path, e))
    }
}

/// Facts about this machine for the report header.
pub fn machine(data_dir: &Path) -> Value {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mem_kb: u64 = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("MemTotal:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()))
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
    json!({
        "cores": cores,
        "memory_gib": (mem_kb as f64 / 1048576.0 * 10.0).round() / 10.0,
        "kernel": kernel,
        "filesystem": filesystem(data_dir),
        "heapstore_version": env!("CARGO_PKG_VERSION"),
        "heapstore_commit": option_env!("HEAPSTORE_GIT_COMMIT").unwrap_or("unknown"),
    })
}

fn filesystem(p: &Path) -> String {
    let mut p = p.to_path_buf();
    while !p.exists() {
        if !p.pop() {
            return "unknown".into();
        }
    }
    let c = std::ffi::CString::new(p.as_os_str().to_string_lossy().as_bytes()).unwrap_or_default();
    // SAFETY: statfs fills a zeroed struct we own; the path is a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return "unknown".into();
    }
    match st.f_type as u64 {
        0xEF53 => "ext4",
        0x0102_1994 => "tmpfs",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x794C_7630 => "overlayfs",
        _ => "other",
    }
    .into()
}

/// Prints the report header.
pub fn print_header(experiment: &str, data_dir: &Path, settings: &[(String, String)], pg_version: Option<&str>) {
    let m = machine(data_dir);
    println!("heapstore bench {experiment}");
    println!(
        "machine: {} cores, {} GiB, Linux {}, data directory on {} ({})",
        m["cores"],
        m["memory_gib"],
        m["kernel"].as_str().unwrap_or("?"),
        m["filesystem"].as_str().unwrap_or("?"),
        data_dir.display()
    );
    println!("heapstore {} (commit {})", m["heapstore_version"].as_str().unwrap_or("?"), m["heapstore_commit"].as_str().unwrap_or("?"));
    if settings.is_empty() {
        println!("settings: all defaults");
    } else {
        let s: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!("settings: {}", s.join(", "));
    }
    if let Some(v) = pg_version {
        println!("compared with: {v} (started by the harness; Unix socket only)");
    }
    println!();
}

/// A scratch directory for an experiment: `--data-dir` or a fresh temporary one.
pub struct Workdir {
    _tmp: Option<tempfile::TempDir>,
    pub path: PathBuf,
}

impl Workdir {
    pub fn new(given: Option<&Path>) -> Result<Workdir> {
        match given {
            Some(p) => {
                std::fs::create_dir_all(p).map_err(|e| PgError::io("create directory", p, e))?;
                let t =
                    tempfile::Builder::new().prefix("heapstore-bench-").tempdir_in(p).map_err(|e| PgError::io("create directory", p, e))?;
                let path = t.path().to_path_buf();
                Ok(Workdir { _tmp: Some(t), path })
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix("heapstore-bench-")
                    .tempdir()
                    .map_err(|e| PgError::io("create directory", Path::new("/tmp"), e))?;
                let path = t.path().to_path_buf();
                Ok(Workdir { _tmp: Some(t), path })
            }
        }
    }
}

/// Makes a directory readable (and traversable) by other users (PostgreSQL reads our files).
/// CPU seconds of this process so far, user and system.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuSeconds {
    pub user: f64,
    pub sys: f64,
}

impl CpuSeconds {
    pub fn total(self) -> f64 {
        self.user + self.sys
    }

    pub fn since(self, earlier: CpuSeconds) -> CpuSeconds {
        CpuSeconds { user: self.user - earlier.user, sys: self.sys - earlier.sys }
    }
}

pub fn cpu_seconds() -> CpuSeconds {
    // SAFETY: getrusage fills a zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    CpuSeconds { user: tv(ru.ru_utime), sys: tv(ru.ru_stime) }
}

/// The calling thread's CPU time so far, in seconds.
pub fn this_thread_cpu() -> f64 {
    // SAFETY: clock_gettime fills a zeroed timespec we own.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: as above; CLOCK_THREAD_CPUTIME_ID is always available on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// CPU time of each of this process's threads so far: (thread id, thread name, nanoseconds on
/// a CPU), from /proc/self/task/*/schedstat (falling back to the tick counts of `stat`). Empty
/// where /proc is not readable.
pub fn thread_cpu() -> Vec<(u64, String, u64)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return out };
    for e in dir.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|t| t.parse::<u64>().ok()) else { continue };
        let p = e.path();
        let name = std::fs::read_to_string(p.join("comm")).unwrap_or_default().trim().to_string();
        let ns = std::fs::read_to_string(p.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse::<u64>().ok()))
            .or_else(|| {
                // utime and stime: fields 14 and 15, counted after the ')' that ends the name.
                let st = std::fs::read_to_string(p.join("stat")).ok()?;
                let rest = &st[st.rfind(')')? + 2..];
                let f: Vec<u64> = rest.split_whitespace().filter_map(|x| x.parse().ok()).collect();
                // SAFETY: sysconf has no preconditions.
                let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
                Some((f.get(11)? + f.get(12)?) * 1_000_000_000 / hz)
            })
            .unwrap_or(0);
        out.push((tid, name, ns));
    }
    out
}

/// CPU seconds per thread group between two [`thread_cpu`] samples, threads named by `group`
/// (threads that ended in between are not counted).
pub fn thread_cpu_by(
    before: &[(u64, String, u64)],
    after: &[(u64, String, u64)],
    group: impl Fn(&str) -> &'static str,
) -> Vec<(&'static str, f64)> {
    let mut out: Vec<(&'static str, f64)> = Vec::new();
    for (tid, name, ns) in after {
        let prev = before.iter().find(|(t, n, _)| t == tid && n == name).map_or(0, |b| b.2);
        let g = group(name);
        let secs = ns.saturating_sub(prev) as f64 / 1e9;
        match out.iter_mut().find(|(k, _)| *k == g) {
            Some(e) => e.1 += secs,
            None => out.push((g, secs)),
        }
    }
    out
}

/// The machine's CPU time so far, from /proc/stat: (busy, idle + iowait), in clock ticks, all
/// processes (kernel writeback threads included). None where /proc/stat is not readable.
pub fn machine_ticks() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    let v: Vec<u64> = s.lines().next()?.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    if v.len() < 5 {
        return None;
    }
    let idle = v[3] + v[4];
    Some((v.iter().sum::<u64>() - idle, idle))
}

pub fn open_up(p: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).map_err(|e| PgError::io("chmod", p, e))
}

/// Prints seed 001's LWLock table for one run: per class, acquisitions, waits, wait seconds and
/// the share of the sessions' lifetime spent waiting, from counters taken before and after.
pub fn print_lwlock_waits(
    title: &str,
    sessions: usize,
    secs: f64,
    before: &[(crate::lock::LWLockClass, crate::lock::lwlock::LWLockStats)],
    after: &[(crate::lock::LWLockClass, crate::lock::lwlock::LWLockStats)],
) {
    println!("LWLock waits, {title}, {sessions} sessions (% = wait time / ({sessions} sessions × {secs:.2} s)):");
    let mut rows = Vec::new();
    for ((class, b), (_, a)) in before.iter().zip(after.iter()) {
        let acq = (a.acquire_shared + a.acquire_exclusive) - (b.acquire_shared + b.acquire_exclusive);
        if acq == 0 || matches!(class, crate::lock::LWLockClass::Other) {
            continue;
        }
        let wait_s = (a.wait_ns - b.wait_ns) as f64 / 1e9;
        rows.push(vec![
            class.name().to_string(),
            acq.to_string(),
            (a.waits - b.waits).to_string(),
            format!("{wait_s:.3}"),
            format!("{:.1}", 100.0 * wait_s / (sessions as f64 * secs)),
        ]);
    }
    print_table(&["lock class", "acquisitions", "waits", "wait seconds", "% of lifetime"], 1, rows);
}

/// Prints a table in psql's aligned format; the first `text_cols` columns are left-aligned,
/// the rest right-aligned as numbers.
pub fn print_table(header: &[&str], text_cols: usize, rows: Vec<Vec<String>>) {
    let qr = crate::session::QueryResult {
        tag: String::new(),
        columns: header
            .iter()
            .enumerate()
            .map(|(i, h)| (h.to_string(), if i < text_cols { "text".into() } else { "numeric".into() }))
            .collect(),
        rows: rows.into_iter().map(|r| r.into_iter().map(Some).collect()).collect(),
        returns_rows: true,
        notices: vec![],
        wrote_to_client: false,
        column_sources: vec![],
    };
    print!("{}", crate::cli::print::format_result(&qr, &Default::default()));
}

pub fn bad_arg(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

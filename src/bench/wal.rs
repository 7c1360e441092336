//! `heapstore bench wal` — seed 001's experiment: N sessions COPY into one skinny, unindexed,
//! logged table. It runs three heapstore configurations in one command, in-process (sessions
//! as threads calling the library, timed by their own window): WAL insertion as built
//! (reservation by one atomic add, parallel copy under `wal_insert_locks` locks), the design
//! before seed 001's fix (`heapstore.wal_single_lock_insert=on`: one global lock, held while
//! each record is assembled, CRC'd, reserved and copied in, as PostgreSQL's single
//! WALInsertLock was before WAL insertion was made to scale), and the same load into an
//! UNLOGGED table (no WAL) for the logged/unlogged ratio. These are heapstore's own ablation:
//! their ratios compare heapstore with itself. It prints throughput and, in the shape of the
//! seed's LWLock statistics, per lock class: acquisitions, waits, wait seconds and the share
//! of the sessions' lifetime spent waiting.
//!
//! `--vs-postgres` adds a like-for-like comparison of the logged, parallel configuration: the
//! same pgbench (each client one server-side `COPY copytest FROM '/abs/file'`, the whole
//! process timed; see [`super::copy`]) against `heapstore serve` (a child process) and every
//! PostgreSQL major version found, over a Unix socket, with the same file, table and
//! shared_buffers. Only those figures are put in a ratio against PostgreSQL.

use super::copy::{client_run, heapstore_run};
use super::postgres::{find_bin, find_bins, PgServer, ServeChild, Target};
use super::{print_header, Common, Report, Workdir};
use crate::db::Database;
use crate::error::{PgError, Result};
use crate::lock::lwlock::lwlock_stats;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub struct WalArgs {
    #[command(flatten)]
    pub common: Common,
    /// Rows each session loads.
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: u64,
    /// shared_buffers for both systems.
    #[arg(long, default_value = "128MB")]
    pub shared_buffers: String,
}

/// The config of the like-for-like runs (through pgbench), and heapstore's label there.
const CLIENT_CONFIG: &str = "logged, parallel insertion, through pgbench";
const SERVE: &str = "heapstore";
/// The system label of the in-process ablation.
const IN_PROCESS: &str = super::copy::IN_PROCESS;

const CONFIGS: [(&str, bool, bool); 3] =
    [("logged, parallel insertion", true, false), ("logged, single insertion lock", true, true), ("unlogged", false, false)];

fn generate(dir: &Path, rows: u64) -> Result<PathBuf> {
    let p = dir.join(format!("skinny_{rows}.txt"));
    let mut w = std::io::BufWriter::new(std::fs::File::create(&p).map_err(|e| PgError::io("create", &p, e))?);
    for i in 0..rows {
        writeln!(w, "{i}").map_err(|e| PgError::io("write", &p, e))?;
    }
    w.flush().map_err(|e| PgError::io("write", &p, e))?;
    Ok(p)
}

pub fn run(args: WalArgs, set_args: &[String]) -> Result<()> {
    let c = &args.common;
    let quick = c.quick;
    let clients = c.clients.clone().unwrap_or_else(|| if quick { vec![1, 2] } else { vec![1, 2, 4, 8] });
    let runs = c.runs.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let rows = if quick { 5_000 } else { args.rows };
    let work = Workdir::new(c.data_dir.as_deref())?;
    super::open_up(&work.path)?;
    let mut settings: Vec<(String, String)> =
        vec![("shared_buffers".into(), args.shared_buffers.clone()), ("rows_per_session".into(), rows.to_string())];
    for s in set_args {
        if let Some((k, v)) = s.split_once('=') {
            settings.push((k.into(), v.into()));
        }
    }
    let mut pgs: Vec<(String, PgServer)> = Vec::new();
    let mut serve = None;
    let script = work.path.join("copy_skinny.sql");
    if c.vs_postgres {
        let pg_bin = find_bin(c.pg_bin.as_deref())?;
        for (major, bin) in find_bins(c.pg_bin.as_deref())? {
            let pg = PgServer::start(
                &bin,
                &work.path.join(format!("pg{major}")),
                &args.shared_buffers,
                c.pg_user.clone(),
                &[("max_connections", "100"), ("max_wal_size", "4GB")],
            )?
            .with_clients(&pg_bin);
            pgs.push((format!("postgres {major}"), pg));
        }
        let dir = work.path.join("hs_serve");
        Database::init(&dir, &[])?;
        let mut set = set_args.to_vec();
        set.extend([format!("shared_buffers={}", args.shared_buffers), "max_wal_size=4GB".into(), "max_connections=100".into()]);
        serve = Some(ServeChild::start(&pg_bin, &dir, &work.path.join("serve"), &set)?);
        settings.push(("client (--vs-postgres)".into(), "pgbench -n -c N -t 1 -f copy.sql over a Unix socket, whole process timed".into()));
    }
    let versions: Vec<String> = pgs.iter().map(|(_, p)| p.version.clone()).collect();
    let pg_version = (!versions.is_empty()).then(|| versions.join("; "));
    print_header("wal", &work.path, &settings, pg_version.as_deref());
    let file = generate(&work.path, rows)?;
    super::open_up(&file)?;
    std::fs::write(&script, format!("COPY copytest FROM '{}' WITH (FORMAT text);\n", file.display()))
        .map_err(|e| PgError::io("write", &script, e))?;
    let mut targets: Vec<(String, Target)> = Vec::new();
    if let Some(s) = &serve {
        targets.push((SERVE.into(), s.target()));
    }
    targets.extend(pgs.iter().map(|(l, p)| (l.clone(), p.target())));
    let mut report = Report::new("wal", settings.clone());
    report.pg_version = pg_version;
    let mut lock_tables = Vec::new();
    for (name, logged, single) in CONFIGS {
        let dir = work.path.join(format!(
            "hs_{}",
            if !logged {
                "unlogged"
            } else if single {
                "single"
            } else {
                "parallel"
            }
        ));
        Database::init(&dir, &[])?;
        let mut set = set_args.to_vec();
        set.push(format!("shared_buffers={}", args.shared_buffers));
        set.push(format!("heapstore.wal_single_lock_insert={}", if single { "on" } else { "off" }));
        set.push("max_wal_size=4GB".into());
        let db = Database::open(&dir, &set)?;
        let create = if logged { "CREATE TABLE copytest (id integer)" } else { "CREATE UNLOGGED TABLE copytest (id integer)" };
        let top = *clients.iter().max().unwrap_or(&1);
        for &n in &clients {
            for r in 0..runs {
                let before = lwlock_stats();
                let (secs, mb) = heapstore_run(&db, &file, "text", n, create)?;
                let after = lwlock_stats();
                report.add(
                    IN_PROCESS,
                    name,
                    n,
                    r,
                    json!({"seconds": secs, "table_mb_per_s": mb / secs, "rows_per_s": (rows * n as u64) as f64 / secs}),
                );
                if n == top && r == runs - 1 {
                    lock_tables.push((name, n, secs, before, after));
                }
                if CONFIGS[0].0 == name {
                    for (label, t) in &targets {
                        let (secs, mb) = client_run(t, &script, n, 1, rows, "CREATE TABLE copytest (id integer)")?;
                        report.add(
                            label,
                            CLIENT_CONFIG,
                            n,
                            r,
                            json!({"seconds": secs, "table_mb_per_s": mb / secs, "rows_per_s": (rows * n as u64) as f64 / secs}),
                        );
                    }
                }
            }
        }
        db.close()?;
    }
    if let Some(s) = serve {
        s.stop()?;
    }
    let pg_labels: Vec<String> = pgs.iter().map(|(l, _)| l.clone()).collect();
    drop(pgs);
    print_results(&report, &clients, &pg_labels);
    for (name, n, secs, before, after) in lock_tables {
        super::print_lwlock_waits(name, n, secs, &before, &after);
    }
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-wal.json"));
    report.write_json(&json_path, &work.path, &["seconds", "table_mb_per_s", "rows_per_s"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-wal.png"));
    let mut series = Vec::new();
    let mut systems: Vec<(String, String)> = CONFIGS.iter().map(|c| (IN_PROCESS.to_string(), c.0.to_string())).collect();
    systems.push((SERVE.to_string(), CLIENT_CONFIG.to_string()));
    systems.extend(pg_labels.iter().map(|l| (l.clone(), CLIENT_CONFIG.to_string())));
    for (system, cfg) in &systems {
        let pts: Vec<(f64, f64)> =
            clients.iter().filter_map(|&n| report.spread(system, cfg, n, "rows_per_s").map(|s| (n as f64, s.median))).collect();
        if !pts.is_empty() {
            let label = if system == IN_PROCESS { format!("in-process: {cfg}") } else { format!("{system}: through pgbench") };
            series.push(super::plot::Series { label, points: pts });
        }
    }
    super::plot::line_chart(&plot_path, "Parallel COPY into a skinny logged table (seed 001)", "sessions", "rows per second", &series)?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    Ok(())
}

fn print_results(r: &Report, clients: &[usize], pgs: &[String]) {
    let ratio = |a: Option<super::Spread>, b: Option<super::Spread>| match (a, b) {
        (Some(a), Some(b)) if b.median > 0.0 => format!("{:.2}", a.median / b.median),
        _ => String::new(),
    };
    let mut rows = Vec::new();
    for &n in clients {
        let par = r.spread(IN_PROCESS, CONFIGS[0].0, n, "rows_per_s");
        let single = r.spread(IN_PROCESS, CONFIGS[1].0, n, "rows_per_s");
        let unl = r.spread(IN_PROCESS, CONFIGS[2].0, n, "rows_per_s");
        rows.push(vec![
            n.to_string(),
            par.map(|s| s.show(0)).unwrap_or_default(),
            single.map(|s| s.show(0)).unwrap_or_default(),
            ratio(par, single),
            unl.map(|s| s.show(0)).unwrap_or_default(),
            ratio(par, unl),
        ]);
    }
    println!("heapstore in-process (sessions as threads calling the library; its own designs compared, not PostgreSQL):");
    let header = ["clients", "logged rows/s", "single-lock rows/s", "parallel / single", "unlogged rows/s", "logged / unlogged"];
    super::print_table(&header, 1, rows);
    if pgs.is_empty() {
        return;
    }
    let mut rows = Vec::new();
    for &n in clients {
        let hs = r.spread(SERVE, CLIENT_CONFIG, n, "rows_per_s");
        rows.push(vec![n.to_string(), "heapstore serve (Unix socket)".into(), hs.map(|s| s.show(0)).unwrap_or_default(), String::new()]);
        for p in pgs {
            let pg = r.spread(p, CLIENT_CONFIG, n, "rows_per_s");
            rows.push(vec![n.to_string(), format!("{p} (Unix socket)"), pg.map(|s| s.show(0)).unwrap_or_default(), ratio(hs, pg)]);
        }
    }
    println!("\nlogged table, through the same pgbench (each client one COPY of the file; the whole pgbench process timed):");
    super::print_table(&["clients", "system", "rows/s", "heapstore serve / this"], 2, rows);
}

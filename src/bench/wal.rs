//! `heapstore bench wal` — seed 001's experiment: N sessions COPY into one skinny, unindexed,
//! logged table. It runs three configurations in one command: WAL insertion as built
//! (reservation by one atomic add, parallel copy under `wal_insert_locks` locks), the design
//! before seed 001's fix (`heapstore.wal_single_lock_insert=on`: one global lock for the whole
//! insert), and the same load into an UNLOGGED table (no WAL) for the logged/unlogged ratio.
//! It prints throughput and, in the shape of the seed's LWLock statistics, per lock class:
//! acquisitions, waits, wait seconds and the share of the sessions' lifetime spent waiting.

use super::copy::{heapstore_run, postgres_run};
use super::postgres::{find_bin, PgServer};
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
    let pg = if c.vs_postgres {
        let bin = find_bin(c.pg_bin.as_deref())?;
        Some(PgServer::start(
            &bin,
            &work.path.join("pg"),
            &args.shared_buffers,
            c.pg_user.clone(),
            &[("max_connections", "100"), ("max_wal_size", "4GB")],
        )?)
    } else {
        None
    };
    print_header("wal", &work.path, &settings, pg.as_ref().map(|p| p.version.as_str()));
    let file = generate(&work.path, rows)?;
    let _ = super::open_up(&file);
    let mut report = Report::new("wal", settings.clone());
    report.pg_version = pg.as_ref().map(|p| p.version.clone());
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
                    "heapstore",
                    name,
                    n,
                    r,
                    json!({"seconds": secs, "table_mb_per_s": mb / secs, "rows_per_s": (rows * n as u64) as f64 / secs}),
                );
                if n == top && r == runs - 1 {
                    lock_tables.push((name, n, secs, before, after));
                }
                if let (Some(pg), 0) = (&pg, CONFIGS.iter().position(|x| x.0 == name).unwrap_or(1)) {
                    let (secs, mb) = postgres_run(pg, &work.path, &file, "text", n, 1, "CREATE TABLE copytest (id integer)")?;
                    report.add(
                        "postgres",
                        name,
                        n,
                        r,
                        json!({"seconds": secs, "table_mb_per_s": mb / secs, "rows_per_s": (rows * n as u64) as f64 / secs}),
                    );
                }
            }
        }
        db.close()?;
    }
    print_results(&report, &clients, pg.is_some());
    for (name, n, secs, before, after) in lock_tables {
        super::print_lwlock_waits(name, n, secs, &before, &after);
    }
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-wal.json"));
    report.write_json(&json_path, &work.path, &["seconds", "table_mb_per_s", "rows_per_s"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-wal.png"));
    let mut series = Vec::new();
    for cfg in report.configs() {
        for system in ["heapstore", "postgres"] {
            let pts: Vec<(f64, f64)> =
                clients.iter().filter_map(|&n| report.spread(system, &cfg, n, "rows_per_s").map(|s| (n as f64, s.median))).collect();
            if !pts.is_empty() {
                series.push(super::plot::Series { label: format!("{system}: {cfg}"), points: pts });
            }
        }
    }
    super::plot::line_chart(&plot_path, "Parallel COPY into a skinny logged table (seed 001)", "sessions", "rows per second", &series)?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    Ok(())
}

fn print_results(r: &Report, clients: &[usize], vs: bool) {
    let mut rows = Vec::new();
    for &n in clients {
        let par = r.spread("heapstore", CONFIGS[0].0, n, "rows_per_s");
        let single = r.spread("heapstore", CONFIGS[1].0, n, "rows_per_s");
        let unl = r.spread("heapstore", CONFIGS[2].0, n, "rows_per_s");
        let pg = r.spread("postgres", CONFIGS[0].0, n, "rows_per_s");
        let ratio = |a: Option<super::Spread>, b: Option<super::Spread>| match (a, b) {
            (Some(a), Some(b)) if b.median > 0.0 => format!("{:.2}", a.median / b.median),
            _ => String::new(),
        };
        let mut row = vec![
            n.to_string(),
            par.map(|s| s.show(0)).unwrap_or_default(),
            single.map(|s| s.show(0)).unwrap_or_default(),
            ratio(par, single),
            unl.map(|s| s.show(0)).unwrap_or_default(),
            ratio(par, unl),
        ];
        if vs {
            row.push(pg.map(|s| s.show(0)).unwrap_or_default());
            row.push(ratio(par, pg));
        }
        rows.push(row);
    }
    let mut header = vec!["clients", "logged rows/s", "single-lock rows/s", "parallel / single", "unlogged rows/s", "logged / unlogged"];
    if vs {
        header.extend(["postgres logged rows/s", "ratio vs postgres"]);
    }
    super::print_table(&header, 1, rows);
}

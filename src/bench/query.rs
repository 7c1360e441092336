//! `heapstore bench query` — the query executor against PostgreSQL, like for like: the same
//! psql binary runs the same query text over a Unix socket against `heapstore serve` (started
//! in-process on the bench's data) and, with `--vs-postgres`, against a local PostgreSQL with
//! the same data, `shared_buffers` and `work_mem`, and `max_parallel_workers_per_gather = 0`
//! (one core per query on both sides). Each figure is the whole psql process's wall time
//! (connect, plan, run, send the few result rows), median of `--runs`.
//!
//! Queries: a GROUP BY over `--rows` rows (`fact(id, k, v)`, 1,000 groups), and a hash join of
//! `fact` with `dim` (`--dim-rows` rows, a filter keeping 1 in 9 of them). Both systems must
//! give the same answer; a difference fails the run.
//!
//! Invariant: heapstore and PostgreSQL runs alternate run by run (bench invariant 1).

use super::postgres::{find_bin, PgServer};
use super::{print_header, print_table, Common, Report, Workdir};
use crate::db::Database;
use crate::error::{PgError, Result};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug, Clone)]
pub struct QueryArgs {
    #[command(flatten)]
    pub common: Common,
    /// Rows of the fact table.
    #[arg(long, default_value_t = 10_000_000)]
    pub rows: u64,
    /// Rows of the dimension table.
    #[arg(long, default_value_t = 100_000)]
    pub dim_rows: u64,
    /// shared_buffers on both systems.
    #[arg(long, default_value = "1GB")]
    pub shared_buffers: String,
}

const QUERIES: [(&str, &str); 2] = [
    ("group_by", "SELECT k % 1000 AS g, count(*), sum(v), max(v) FROM fact GROUP BY 1 ORDER BY 1"),
    ("hash_join", "SELECT count(*), sum(f.v), min(d.name) FROM fact f JOIN dim d ON f.k = d.k WHERE d.name LIKE 'n1%'"),
];

/// Runs `sql` with psql against the server on `socket_dir`:`port`; (seconds, output).
fn psql(bin: &Path, socket_dir: &Path, port: u16, sql: &str) -> Result<(f64, String)> {
    let t0 = Instant::now();
    let out = Command::new(bin.join("psql"))
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"])
        .arg(socket_dir)
        .args(["-p", &port.to_string(), "-U", "postgres", "-d", "postgres", "-c", sql])
        .output()
        .map_err(|e| PgError::io("run", &bin.join("psql"), e))?;
    let secs = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(super::bad_arg(format!("psql failed: {}", String::from_utf8_lossy(&out.stderr))));
    }
    Ok((secs, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// Writes the two tables as CSV files (deterministic pseudo-random values).
fn write_data(dir: &Path, rows: u64, dim_rows: u64) -> Result<()> {
    let f = dir.join("fact.csv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&f).map_err(|e| PgError::io("create", &f, e))?);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        writeln!(w, "{i},{},{}", x % dim_rows.max(1), (x >> 20) % 1_000_000).map_err(|e| PgError::io("write", &f, e))?;
    }
    w.flush().map_err(|e| PgError::io("write", &f, e))?;
    let d = dir.join("dim.csv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&d).map_err(|e| PgError::io("create", &d, e))?);
    for k in 0..dim_rows {
        writeln!(w, "{k},n{k}").map_err(|e| PgError::io("write", &d, e))?;
    }
    w.flush().map_err(|e| PgError::io("write", &d, e))?;
    super::open_up(&f)?;
    super::open_up(&d)
}

fn load_sql(dir: &Path) -> String {
    format!(
        "CREATE TABLE fact (id integer, k integer, v integer);\nCREATE TABLE dim (k integer PRIMARY KEY, name text);\n\\copy fact FROM '{}' WITH (FORMAT csv)\n\\copy dim FROM '{}' WITH (FORMAT csv)\nVACUUM ANALYZE fact;\nVACUUM ANALYZE dim;\n",
        dir.join("fact.csv").display(),
        dir.join("dim.csv").display()
    )
}

fn psql_script(bin: &Path, socket_dir: &Path, port: u16, script: &str) -> Result<()> {
    let f = socket_dir.join("load.sql");
    std::fs::write(&f, script).map_err(|e| PgError::io("write", &f, e))?;
    let out = Command::new(bin.join("psql"))
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h"])
        .arg(socket_dir)
        .args(["-p", &port.to_string(), "-U", "postgres", "-d", "postgres", "-f"])
        .arg(&f)
        .output()
        .map_err(|e| PgError::io("run", &bin.join("psql"), e))?;
    if !out.status.success() {
        return Err(super::bad_arg(format!("loading failed: {}", String::from_utf8_lossy(&out.stderr))));
    }
    Ok(())
}

pub fn run(args: QueryArgs, set_args: &[String]) -> Result<()> {
    let c = &args.common;
    let quick = c.quick;
    let runs = c.runs.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let (rows, dim_rows) = if quick { (args.rows.min(20_000), args.dim_rows.min(1_000)) } else { (args.rows, args.dim_rows) };
    let sb = if quick { "16MB".to_string() } else { args.shared_buffers.clone() };
    let work = Workdir::new(c.data_dir.as_deref())?;
    let bin = find_bin(c.pg_bin.as_deref())?;
    write_data(&work.path, rows, dim_rows)?;
    let mut settings: Vec<(String, String)> = vec![
        ("rows".into(), rows.to_string()),
        ("dim_rows".into(), dim_rows.to_string()),
        ("shared_buffers".into(), sb.clone()),
        ("work_mem".into(), "4MB (both)".into()),
        ("client".into(), "psql over a Unix socket (both)".into()),
    ];
    for s in set_args {
        if let Some((k, v)) = s.split_once('=') {
            settings.push((k.into(), v.into()));
        }
    }
    // heapstore: serve in this process on a socket in the work directory.
    let hs_dir = work.path.join("heapstore");
    let data = hs_dir.join("data");
    Database::init(&data, &[])?;
    crate::auth::init_roles(&data, "postgres")?;
    let mut set = set_args.to_vec();
    set.push(format!("shared_buffers={sb}"));
    let db = std::sync::Arc::new(Database::open(&data, &set)?);
    let cfg = crate::server::ServerConfig {
        listen_addresses: vec![],
        port: 54000 + ((std::process::id() + 500) % 1000) as u16,
        socket_dir: Some(hs_dir.clone()),
        hba: crate::auth::Hba::parse("local all all trust")?,
        max_connections: 10,
        tls: None,
    };
    let hs_port = cfg.port;
    super::open_up(&hs_dir)?;
    let server = crate::server::Server::start(db, cfg)?;
    psql_script(&bin, &hs_dir, hs_port, &load_sql(&work.path))?;
    let pg = if c.vs_postgres {
        let pg = PgServer::start(
            &bin,
            &work.path.join("pg"),
            &sb,
            c.pg_user.clone(),
            &[("max_parallel_workers_per_gather", "0"), ("work_mem", "4MB")],
        )?;
        psql_script(&bin, &pg.socket_dir, pg.port, &load_sql(&work.path))?;
        Some(pg)
    } else {
        None
    };
    print_header("query", &work.path, &settings, pg.as_ref().map(|p| p.version.as_str()));
    let mut report = Report::new("query", settings);
    report.pg_version = pg.as_ref().map(|p| p.version.clone());
    for (name, sql) in QUERIES {
        for run in 0..runs {
            let (t, hs_out) = psql(&bin, &hs_dir, hs_port, sql)?;
            report.add("heapstore", name, 1, run, json!({ "seconds": t }));
            if let Some(pg) = &pg {
                let (t, pg_out) = psql(&bin, &pg.socket_dir, pg.port, sql)?;
                if pg_out != hs_out {
                    return Err(super::bad_arg(format!("{name}: heapstore and PostgreSQL answer differently:\n{hs_out}\n---\n{pg_out}")));
                }
                report.add("postgres", name, 1, run, json!({ "seconds": t }));
            }
        }
    }
    let mut table = Vec::new();
    for (name, _) in QUERIES {
        let hs = report.spread("heapstore", name, 1, "seconds");
        let pgs = report.spread("postgres", name, 1, "seconds");
        table.push(vec![
            name.to_string(),
            hs.map(|s| s.show(3)).unwrap_or_default(),
            pgs.map(|s| s.show(3)).unwrap_or_else(|| "-".into()),
            match (hs, pgs) {
                (Some(h), Some(p)) if h.median > 0.0 => format!("{:.2}", p.median / h.median),
                _ => "-".into(),
            },
        ]);
    }
    print_table(&["query", "heapstore s", "PostgreSQL s", "speed ratio (PG time / heapstore time)"], 1, table);
    let json_path = c.json.clone().unwrap_or_else(|| std::path::PathBuf::from("bench-query.json"));
    report.write_json(&json_path, &work.path, &["seconds"])?;
    // The chart: seconds per query (x: 1 = group_by, 2 = hash_join) for each system.
    let plot_path = c.plot.clone().unwrap_or_else(|| std::path::PathBuf::from("bench-query.png"));
    let mut series = Vec::new();
    for system in ["heapstore", "postgres"] {
        let pts: Vec<(f64, f64)> = QUERIES
            .iter()
            .enumerate()
            .filter_map(|(i, (name, _))| report.spread(system, name, 1, "seconds").map(|s| ((i + 1) as f64, s.median)))
            .collect();
        if !pts.is_empty() {
            series.push(super::plot::Series { label: system.to_string(), points: pts });
        }
    }
    super::plot::line_chart(&plot_path, "Query executor through psql (1 = GROUP BY, 2 = hash join)", "query", "seconds", &series)?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    let db = server.shutdown(Duration::from_secs(5));
    if let Ok(db) = std::sync::Arc::try_unwrap(db) {
        db.close()?;
    }
    drop(pg);
    Ok(())
}

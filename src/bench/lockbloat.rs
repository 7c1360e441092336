//! `heapstore bench lockbloat` — seed 003's experiment: sessions run a trivial select on a
//! one-row table; now and then (weight 1 against `--weight`) a transaction touches all
//! `--tables` tables, which grows the session's local lock table. The trivial select's rate
//! is measured without and with those bloating transactions.
//!
//! Like for like: the same pgbench with the same scripts and weights runs against
//! `heapstore serve` (a child process; heapstore's local lock table, where release-all costs
//! O(locks held now)), `heapstore serve` with the old design
//! (`heapstore.lock_release_walks_whole_table=on`: release walks every slot ever used), and,
//! with `--vs-postgres`, every PostgreSQL major version found, each over a Unix socket:
//!
//! - `trivial.sql`: `SELECT * FROM one;` (weight `--weight`);
//! - `bloat.sql`: one Query of `--tables` statements `SELECT count(*) FROM tN`, joined with
//!   pgbench's `\;` so that they run in one implicit transaction and hold all their locks to
//!   its end (weight 1; the phase "without bloat" runs `trivial.sql` alone).
//!
//! Every figure is pgbench's own: tps over all transactions, bloating ones and their time
//! included, for every system; the number of bloating transactions each run made is reported
//! next to it (pgbench picks scripts at random, so a short run may make none: the defaults,
//! weight 20,000 and 3 s per run, give a few per client and run, and end within 5 minutes with
//! two PostgreSQL versions; the seed's weight was 100,000 over longer runs). The tables (`one` with one row, `t0` ... `tN-1`, empty) are the
//! same on every system. PostgreSQL gets `max_locks_per_transaction` large enough for every
//! client to hold all tables' locks at once.
//!
//! Invariant: the systems alternate run by run (bench invariant 1).

use super::postgres::{find_bin, find_bins, PgServer, ServeChild, Target};
use super::{print_header, Common, Report, Workdir};
use crate::db::Database;
use crate::error::{PgError, Result};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub struct LockBloatArgs {
    #[command(flatten)]
    pub common: Common,
    /// Tables the bloating transaction touches.
    #[arg(long, default_value_t = 10_000)]
    pub tables: usize,
    /// Seconds per measurement (pgbench -T; 3 keeps the default run within 5 minutes).
    #[arg(long, default_value_t = 3)]
    pub duration: u64,
    /// Weight of the trivial select against the bloating transaction's 1 (pgbench's @weight).
    #[arg(long, default_value_t = 20_000)]
    pub weight: u64,
}

const OLD: &str = "heapstore old design";
const OLD_SETTING: &str = "heapstore.lock_release_walks_whole_table";

/// The DDL of the data set, the same on every system.
fn schema_sql(tables: usize) -> String {
    let mut sql = String::from("BEGIN;\nCREATE TABLE one (x integer);\nINSERT INTO one VALUES (1);\n");
    for i in 0..tables {
        sql.push_str(&format!("CREATE TABLE t{i} (x integer);\n"));
    }
    sql.push_str("COMMIT;\n");
    sql
}

/// Writes the two pgbench scripts; returns (trivial, bloat).
fn write_scripts(dir: &Path, tables: usize) -> Result<(PathBuf, PathBuf)> {
    let trivial = dir.join("trivial.sql");
    let bloat = dir.join("bloat.sql");
    std::fs::write(&trivial, "SELECT * FROM one;\n").map_err(|e| PgError::io("write", &trivial, e))?;
    let mut b = String::with_capacity(tables * 32);
    for i in 0..tables {
        // `\;` continues the command: one Query, one implicit transaction.
        b.push_str(&format!("SELECT count(*) FROM t{i}{}\n", if i + 1 < tables { " \\;" } else { ";" }));
    }
    std::fs::write(&bloat, b).map_err(|e| PgError::io("write", &bloat, e))?;
    Ok((trivial, bloat))
}

/// What one pgbench run reported.
struct Figures {
    tps: f64,
    bloats: u64,
    trivial: u64,
}

/// One measurement: pgbench with `n` clients for `secs`, the trivial script alone or with the
/// bloating one at weight 1.
fn measure(t: &Target, scripts: &(PathBuf, PathBuf), n: usize, secs: u64, bloat: bool, weight: u64) -> Result<Figures> {
    let (c, j, d) = (n.to_string(), n.min(std::thread::available_parallelism().map_or(1, |x| x.get())).to_string(), secs.to_string());
    let trivial = format!("{}@{weight}", scripts.0.display());
    let bl = format!("{}@1", scripts.1.display());
    let mut args = vec!["-n", "-c", &c, "-j", &j, "-T", &d, "-f", &trivial];
    if bloat {
        args.extend(["-f", &bl]);
    }
    let (_, out, _) = t.pgbench_timed(&args)?;
    let tps = super::postgres::pgbench_tps(&out)?;
    let total = transactions(&out, None).unwrap_or(0);
    let bloats = if bloat { transactions(&out, Some(2)).unwrap_or(0) } else { 0 };
    if let Some(l) = out.lines().find(|l| l.starts_with("number of failed transactions:")) {
        if !l.contains(": 0 (") {
            return Err(PgError::internal(format!("pgbench reported failures: {l}")));
        }
    }
    Ok(Figures { tps, bloats, trivial: total - bloats })
}

/// Transactions pgbench reports: over the run (`None`), or for script number `k` (its
/// per-script section, printed when there are several scripts).
fn transactions(out: &str, script: Option<usize>) -> Option<u64> {
    match script {
        None => out
            .lines()
            .find(|l| l.starts_with("number of transactions actually processed:"))?
            .split(':')
            .nth(1)?
            .split_whitespace()
            .next()?
            .split('/')
            .next()?
            .parse()
            .ok(),
        Some(k) => {
            let mut lines = out.lines().skip_while(|l| !l.starts_with(&format!("SQL script {k}:")));
            lines.next()?;
            // " - 3 transactions (0.0% of total, tps = 0.6)"
            let l = lines.find(|l| l.contains(" transactions ("))?;
            l.trim_start().trim_start_matches("- ").split_whitespace().next()?.parse().ok()
        }
    }
}

pub fn run(args: LockBloatArgs, set_args: &[String]) -> Result<()> {
    let c = &args.common;
    let quick = c.quick;
    let clients = c.clients.clone().unwrap_or_else(|| if quick { vec![1] } else { vec![1, 2] });
    if clients.contains(&0) {
        return Err(super::bad_arg("--clients must be at least 1"));
    }
    let runs = c.runs.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let tables = if quick { args.tables.min(200) } else { args.tables }.max(1);
    let weight = if quick { args.weight.min(200) } else { args.weight }.max(1);
    let secs = if quick { 1 } else { args.duration.max(1) };
    let max_clients = *clients.iter().max().expect("non-empty");
    let work = Workdir::new(c.data_dir.as_deref())?;
    super::open_up(&work.path)?;
    let pg_bin = find_bin(c.pg_bin.as_deref())?;
    let pg_bins = if c.vs_postgres { find_bins(c.pg_bin.as_deref())? } else { Vec::new() };
    let mut settings: Vec<(String, String)> = vec![
        ("tables".into(), tables.to_string()),
        ("seconds".into(), secs.to_string()),
        (
            "client".into(),
            format!("pgbench -n -c N -j min(N, cores) -T {secs} -f trivial.sql@{weight} [-f bloat.sql@1] over a Unix socket, every system"),
        ),
        ("trivial.sql".into(), "SELECT * FROM one;".into()),
        ("bloat.sql".into(), format!("SELECT count(*) FROM t0 \\; ... \\; SELECT count(*) FROM t{} (one Query)", tables - 1)),
        ("heapstore".into(), format!("heapstore serve (a child process), and with {OLD_SETTING}=on")),
        ("pgbench".into(), pg_bin.join("pgbench").display().to_string()),
    ];
    for s in set_args {
        if let Some((k, v)) = s.split_once('=') {
            settings.push((k.into(), v.into()));
        }
    }
    let scripts = write_scripts(&work.path, tables)?;
    // PostgreSQL's shared lock table has max_locks_per_transaction × max_connections slots.
    let max_conns = 100usize;
    let locks = ((tables + 64) * max_clients).div_ceil(max_conns) + 64;
    let mut pgs: Vec<(String, PgServer)> = Vec::new();
    for (major, bin) in &pg_bins {
        let (conns, locks) = (max_conns.to_string(), locks.to_string());
        let pg = PgServer::start(
            bin,
            &work.path.join(format!("pg{major}")),
            "128MB",
            c.pg_user.clone(),
            &[("max_connections", &conns), ("max_locks_per_transaction", &locks)],
        )?
        .with_clients(&pg_bin);
        pg.target().psql(&schema_sql(tables))?;
        pgs.push((format!("postgres {major}"), pg));
    }
    if !pgs.is_empty() {
        settings.push(("postgres".into(), format!("shared_buffers=128MB, max_locks_per_transaction={locks}")));
    }
    // heapstore: the same tables, created once per design's data directory, then served.
    let mut serves = Vec::new();
    for (label, old) in [("heapstore", false), (OLD, true)] {
        let dir = work.path.join(if old { "hs_old" } else { "hs_new" });
        Database::init(&dir, &[])?;
        {
            let db = Database::open(&dir, set_args)?;
            db.session().execute(&schema_sql(tables))?;
            db.close()?;
        }
        let mut set = set_args.to_vec();
        set.push("shared_buffers=128MB".into());
        set.push(format!("max_connections={}", max_clients + 10));
        set.push(format!("{OLD_SETTING}={}", if old { "on" } else { "off" }));
        let s = ServeChild::start(&pg_bin, &dir, &work.path.join(format!("serve_{}", if old { "old" } else { "new" })), &set)?;
        serves.push((label.to_string(), s));
    }
    let versions: Vec<String> = pgs.iter().map(|(_, p)| p.version.clone()).collect();
    let pg_version = (!versions.is_empty()).then(|| versions.join("; "));
    print_header("lockbloat", &work.path, &settings, pg_version.as_deref());
    let mut report = Report::new("lockbloat", settings.clone());
    report.pg_version = pg_version;
    let mut targets: Vec<(String, Target)> = serves.iter().map(|(l, s)| (l.clone(), s.target())).collect();
    targets.extend(pgs.iter().map(|(l, p)| (l.clone(), p.target())));
    for &n in &clients {
        for r in 0..runs {
            for (label, bloat) in [("without bloat", false), ("with bloat", true)] {
                for (system, t) in &targets {
                    let f = measure(t, &scripts, n, secs, bloat, weight)?;
                    report.add(
                        system,
                        label,
                        n,
                        r,
                        json!({"tps": f.tps, "trivial_transactions": f.trivial, "bloating_transactions": f.bloats}),
                    );
                }
            }
        }
    }
    for (_, s) in serves {
        s.stop()?;
    }
    let systems: Vec<String> = targets.iter().map(|(l, _)| l.clone()).collect();
    drop(pgs);
    print_results(&report, &clients, &systems);
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-lockbloat.json"));
    report.write_json(&json_path, &work.path, &["tps"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-lockbloat.png"));
    let mut series = Vec::new();
    for system in &systems {
        for label in ["without bloat", "with bloat"] {
            let pts: Vec<(f64, f64)> =
                clients.iter().filter_map(|&n| report.spread(system, label, n, "tps").map(|s| (n as f64, s.median))).collect();
            if !pts.is_empty() {
                series.push(super::plot::Series { label: format!("{system}, {label}"), points: pts });
            }
        }
    }
    super::plot::line_chart(
        &plot_path,
        "Trivial select after transactions that touched many tables (seed 003), pgbench tps",
        "sessions",
        "transactions per second",
        &series,
    )?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    Ok(())
}

fn print_results(r: &Report, clients: &[usize], systems: &[String]) {
    let mut rows = Vec::new();
    for &n in clients {
        for sys in systems {
            let a = r.spread(sys, "without bloat", n, "tps");
            let b = r.spread(sys, "with bloat", n, "tps");
            let bloats = r.spread(sys, "with bloat", n, "bloating_transactions");
            // On each PostgreSQL row: heapstore serve's tps with bloat over this one's.
            let ratio = match (sys.starts_with("postgres"), r.spread("heapstore", "with bloat", n, "tps"), b) {
                (true, Some(h), Some(p)) if p.median > 0.0 => format!("{:.2}", h.median / p.median),
                _ => String::new(),
            };
            let label = match sys.as_str() {
                "heapstore" => "heapstore serve".to_string(),
                OLD => format!("heapstore serve, {OLD_SETTING}=on"),
                other => other.to_string(),
            };
            rows.push(vec![
                n.to_string(),
                label,
                a.map(|s| s.show(0)).unwrap_or_default(),
                b.map(|s| s.show(0)).unwrap_or_default(),
                bloats.map(|s| s.show(0)).unwrap_or_default(),
                match (a, b) {
                    (Some(a), Some(b)) if a.median > 0.0 => format!("{:.3}", b.median / a.median),
                    _ => String::new(),
                },
                ratio,
            ]);
        }
    }
    super::print_table(
        &[
            "clients",
            "system",
            "tps without bloat",
            "tps with bloat",
            "bloating transactions",
            "with / without",
            "heapstore serve / this (with bloat)",
        ],
        2,
        rows,
    );
    println!("(tps as pgbench reports it, over all transactions, the bloating ones and their time included, on every system)");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pgbench_transaction_counts() {
        let out = "transaction type: multiple scripts\nnumber of transactions actually processed: 1234\n\
                   number of failed transactions: 0 (0.000%)\ntps = 246.8 (without initial connection time)\n\
                   SQL script 1: /w/trivial.sql\n - weight: 200 (targets 99.5% of total)\n - 1230 transactions (99.7% of total, tps = 246.0)\n\
                   SQL script 2: /w/bloat.sql\n - weight: 1 (targets 0.5% of total)\n - 4 transactions (0.3% of total, tps = 0.8)\n";
        assert_eq!(transactions(out, None), Some(1234));
        assert_eq!(transactions(out, Some(2)), Some(4));
        assert_eq!(transactions(out, Some(1)), Some(1230));
        assert_eq!(super::super::postgres::pgbench_tps(out).unwrap(), 246.8);
        let t = "number of transactions actually processed: 50/50\n";
        assert_eq!(transactions(t, None), Some(50));
    }
}

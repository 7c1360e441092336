//! `heapstore bench lockbloat` — seed 003's experiment: sessions run a trivial select on a
//! one-row table; with weight 1 in 100,000 (and once at the start of the phase) a transaction
//! touches all `--tables` tables, which grows the session's local lock table. The trivial
//! select's rate is measured without and with that bloat, for heapstore's local lock table
//! (release-all costs O(locks held now)) and for the old design
//! (`heapstore.lock_release_walks_whole_table=on`: release walks every slot ever used), in one
//! run. The rate counts only trivial transactions, over the time not spent in bloating ones.
//!
//! `--vs-postgres` runs the same mix through pgbench: `SELECT * FROM one` with weight 100,000
//! and `SELECT count(*) FROM p` over a table of `--tables` partitions with weight 1.

use super::postgres::{find_bin, PgServer};
use super::{print_header, Common, Report, Workdir};
use crate::db::Database;
use crate::error::{PgError, Result};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Barrier;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug, Clone)]
pub struct LockBloatArgs {
    #[command(flatten)]
    pub common: Common,
    /// Tables the bloating transaction touches.
    #[arg(long, default_value_t = 10_000)]
    pub tables: usize,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// One bloating transaction per this many trivial ones.
    #[arg(long, default_value_t = 100_000)]
    pub weight: u64,
}

struct Phase {
    trivial: u64,
    trivial_secs: f64,
    bloats: u64,
}

fn run_phase(db: &Database, clients: usize, secs: f64, bloat_sql: Option<&str>, weight: u64) -> Result<Phase> {
    let barrier = Barrier::new(clients);
    let results: Vec<Result<Phase>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..clients)
            .map(|k| {
                let barrier = &barrier;
                sc.spawn(move || -> Result<Phase> {
                    let mut s = db.session();
                    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ (k as u64 + 1);
                    let mut p = Phase { trivial: 0, trivial_secs: 0.0, bloats: 0 };
                    let mut bloat_time = Duration::ZERO;
                    if let Some(sql) = bloat_sql {
                        let t = Instant::now();
                        s.execute(sql)?;
                        bloat_time += t.elapsed();
                        p.bloats += 1;
                    }
                    barrier.wait();
                    let start = Instant::now();
                    let end = start + Duration::from_secs_f64(secs);
                    while Instant::now() < end {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        if let (Some(sql), 0) = (bloat_sql, rng % weight) {
                            let t = Instant::now();
                            s.execute(sql)?;
                            bloat_time += t.elapsed();
                            p.bloats += 1;
                            continue;
                        }
                        s.execute("SELECT * FROM one")?;
                        p.trivial += 1;
                    }
                    p.trivial_secs = (start.elapsed().saturating_sub(bloat_time)).as_secs_f64();
                    Ok(p)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(PgError::internal("session panicked")))).collect()
    });
    let mut total = Phase { trivial: 0, trivial_secs: 0.0, bloats: 0 };
    for r in results {
        let p = r?;
        total.trivial += p.trivial;
        total.trivial_secs += p.trivial_secs;
        total.bloats += p.bloats;
    }
    total.trivial_secs /= clients as f64;
    Ok(total)
}

pub fn run(args: LockBloatArgs, set_args: &[String]) -> Result<()> {
    let c = &args.common;
    let quick = c.quick;
    let clients = c.clients.clone().unwrap_or_else(|| if quick { vec![1] } else { vec![1, 2] });
    let runs = c.runs.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let tables = if quick { args.tables.min(200) } else { args.tables };
    let secs = if quick { 0.3 } else { args.duration };
    let work = Workdir::new(c.data_dir.as_deref())?;
    let mut settings: Vec<(String, String)> = vec![("tables".into(), tables.to_string()), ("weight".into(), args.weight.to_string())];
    for s in set_args {
        if let Some((k, v)) = s.split_once('=') {
            settings.push((k.into(), v.into()));
        }
    }
    let pg = if c.vs_postgres {
        let bin = find_bin(c.pg_bin.as_deref())?;
        let locks = (tables / 50 + 64).to_string();
        let pg = PgServer::start(&bin, &work.path.join("pg"), "128MB", c.pg_user.clone(), &[("max_locks_per_transaction", &locks)])?;
        let mut sql =
            String::from("CREATE TABLE one (x integer); INSERT INTO one VALUES (1); CREATE TABLE p (x integer) PARTITION BY RANGE (x);");
        for i in 0..tables {
            sql.push_str(&format!("CREATE TABLE p{i} PARTITION OF p FOR VALUES FROM ({i}) TO ({});", i + 1));
        }
        pg.psql(&sql)?;
        Some(pg)
    } else {
        None
    };
    print_header("lockbloat", &work.path, &settings, pg.as_ref().map(|p| p.version.as_str()));
    let mut report = Report::new("lockbloat", settings.clone());
    report.pg_version = pg.as_ref().map(|p| p.version.clone());
    let mut bloat_sql = String::with_capacity(tables * 32);
    for i in 0..tables {
        bloat_sql.push_str(&format!("SELECT count(*) FROM t{i};"));
    }
    for (design, old) in [("heapstore", false), ("old design (release walks whole table)", true)] {
        let dir = work.path.join(if old { "old" } else { "new" });
        Database::init(&dir, &[])?;
        let mut set = set_args.to_vec();
        set.push(format!("heapstore.lock_release_walks_whole_table={}", if old { "on" } else { "off" }));
        let db = Database::open(&dir, &set)?;
        {
            let mut s = db.session();
            let mut ddl = String::from("CREATE TABLE one (x integer);");
            for i in 0..tables {
                ddl.push_str(&format!("CREATE TABLE t{i} (x integer);"));
            }
            s.execute(&ddl)?;
            let mut one: &[u8] = b"1\n";
            s.execute_with_io("COPY one FROM STDIN", &mut crate::sql::CopyIo { stdin: Some(&mut one), stdout: None, rows: None })?;
        }
        for &n in &clients {
            for r in 0..runs {
                for (label, bloat) in [("without bloat", None), ("with bloat", Some(bloat_sql.as_str()))] {
                    let p = run_phase(&db, n, secs, bloat, args.weight)?;
                    let tps = p.trivial as f64 / p.trivial_secs.max(1e-9);
                    report.add(
                        design,
                        label,
                        n,
                        r,
                        json!({"tps": tps, "trivial_transactions": p.trivial, "bloating_transactions": p.bloats}),
                    );
                }
                if let (Some(pg), false) = (&pg, old) {
                    for (label, bloat) in [("without bloat", false), ("with bloat", true)] {
                        let tps = pgbench_tps(pg, &work.path, n, secs, bloat, args.weight)?;
                        report.add("postgres", label, n, r, json!({"tps": tps}));
                    }
                }
            }
        }
        db.close()?;
    }
    print_results(&report, &clients, pg.is_some());
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-lockbloat.json"));
    report.write_json(&json_path, &work.path, &["tps"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-lockbloat.png"));
    let mut series = Vec::new();
    for system in ["heapstore", "old design (release walks whole table)", "postgres"] {
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
        "Trivial select after one transaction touched many tables (seed 003)",
        "sessions",
        "transactions per second",
        &series,
    )?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    Ok(())
}

fn pgbench_tps(pg: &PgServer, work: &std::path::Path, n: usize, secs: f64, bloat: bool, weight: u64) -> Result<f64> {
    let trivial = work.join("trivial.sql");
    let bl = work.join("bloat.sql");
    std::fs::write(&trivial, "SELECT * FROM one;\n").map_err(|e| PgError::io("write", &trivial, e))?;
    std::fs::write(&bl, "SELECT count(*) FROM p;\n").map_err(|e| PgError::io("write", &bl, e))?;
    let _ = super::open_up(&trivial);
    let _ = super::open_up(&bl);
    let t = format!("{}", secs.ceil().max(1.0) as u64);
    let jobs = n.to_string();
    let out = if bloat {
        // pgbench takes the weight after '@' on the script name.
        let script = format!("{}@{weight}", trivial.display());
        let bscript = format!("{}@1", bl.display());
        pg.pgbench_scripts(&[&script, &bscript], &["-n", "-c", &jobs, "-j", &jobs, "-T", &t])?
    } else {
        pg.pgbench(&trivial, &["-n", "-c", &jobs, "-j", &jobs, "-T", &t])?
    };
    out.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| PgError::internal(format!("could not read pgbench's tps from: {out}")))
}

fn print_results(r: &Report, clients: &[usize], vs: bool) {
    let mut rows = Vec::new();
    let systems: &[&str] = if vs {
        &["heapstore", "old design (release walks whole table)", "postgres"]
    } else {
        &["heapstore", "old design (release walks whole table)"]
    };
    for &n in clients {
        for sys in systems {
            let a = r.spread(sys, "without bloat", n, "tps");
            let b = r.spread(sys, "with bloat", n, "tps");
            rows.push(vec![
                n.to_string(),
                sys.to_string(),
                a.map(|s| s.show(0)).unwrap_or_default(),
                b.map(|s| s.show(0)).unwrap_or_default(),
                match (a, b) {
                    (Some(a), Some(b)) if a.median > 0.0 => format!("{:.3}", b.median / a.median),
                    _ => String::new(),
                },
            ]);
        }
    }
    super::print_table(&["clients", "system", "tps without bloat", "tps with bloat", "with / without"], 2, rows);
}

//! `heapstore bench select-only` — seed 000's second benchmark, pgbench -S: the pgbench schema
//! at `--scale` (100,000 accounts per scale unit, plus branches, tellers and an empty history),
//! accounts loaded by COPY and then given their primary key; N sessions (threads) look up
//! random aids with the prepared statement `SELECT abalance FROM pgbench_accounts WHERE aid =
//! $1` for `--seconds`; the best 5 seconds and the whole run are reported as transactions per
//! second, per session count and `--shared-buffers` value.
//!
//! heapstore runs **in-process** (sessions are threads calling the library: no protocol, no
//! socket); `--vs-postgres` runs `pgbench -S -M prepared` against a local PostgreSQL **over a
//! Unix socket** (same scale via `pgbench -i -s`, same shared_buffers and session counts). The
//! two are reported side by side and labelled so; the ratio includes that difference.
//!
//! Invariants:
//! 1. The data set is built once and reopened for each shared_buffers value; each run starts on
//!    the same data (the workload only reads).
//! 2. heapstore and PostgreSQL runs alternate run by run (bench invariant 1).

use super::postgres::{find_bin, PgServer};
use super::{print_header, Common, Report, Workdir};
use crate::db::Database;
use crate::error::{PgError, Result};
use serde_json::json;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Accounts per scale unit, as pgbench's `naccounts`.
pub const ACCOUNTS_PER_SCALE: u64 = 100_000;
/// Width of the window for "best seconds".
const BEST_WINDOW_S: usize = 5;

#[derive(clap::Args, Debug, Clone)]
pub struct SelectOnlyArgs {
    #[command(flatten)]
    pub common: Common,
    /// pgbench scale factor (100,000 accounts each).
    #[arg(long, default_value_t = 100)]
    pub scale: u64,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// shared_buffers values, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub shared_buffers: Option<Vec<String>>,
}

/// Generates pgbench_accounts rows as COPY text (`aid, bid, abalance, filler`) without holding
/// them all in memory.
struct AccountsText {
    next: u64,
    last: u64,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for AccountsText {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            while self.next <= self.last && self.buf.len() < 64 << 10 {
                use std::io::Write;
                let bid = (self.next - 1) / ACCOUNTS_PER_SCALE + 1;
                writeln!(self.buf, "{}\t{bid}\t0\t", self.next)?;
                self.next += 1;
            }
            if self.buf.is_empty() {
                return Ok(0);
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Creates and loads the pgbench tables at `scale`, as `pgbench -i` does (primary keys after
/// the load).
pub fn build(db: &Database, scale: u64) -> Result<()> {
    let mut s = db.session();
    s.execute(
        "CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88));
         CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84));
         CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84));
         CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))",
    )?;
    let branches: String = (1..=scale).map(|b| format!("{b}\t0\t\n")).collect();
    let tellers: String = (1..=scale * 10).map(|t| format!("{t}\t{}\t0\t\n", (t - 1) / 10 + 1)).collect();
    let copy = |s: &mut crate::Session, sql: &str, src: &mut dyn Read| -> Result<()> {
        s.execute_with_io(sql, &mut crate::sql::CopyIo { stdin: Some(src), stdout: None }).map(|_| ())
    };
    copy(&mut s, "COPY pgbench_branches FROM STDIN", &mut branches.as_bytes())?;
    copy(&mut s, "COPY pgbench_tellers FROM STDIN", &mut tellers.as_bytes())?;
    let mut accounts = AccountsText { next: 1, last: scale * ACCOUNTS_PER_SCALE, buf: Vec::new(), pos: 0 };
    copy(&mut s, "COPY pgbench_accounts FROM STDIN", &mut accounts)?;
    s.execute(
        "CREATE UNIQUE INDEX pgbench_branches_pkey ON pgbench_branches (bid);
         CREATE UNIQUE INDEX pgbench_tellers_pkey ON pgbench_tellers (tid);
         CREATE UNIQUE INDEX pgbench_accounts_pkey ON pgbench_accounts (aid)",
    )?;
    Ok(())
}

/// Transactions per second: (over the best `BEST_WINDOW_S` consecutive seconds, over the run).
fn rates(per_second: &[u64], secs: f64) -> (f64, f64) {
    let total: u64 = per_second.iter().sum();
    let w = BEST_WINDOW_S.min(per_second.len()).max(1);
    let best = per_second.windows(w).map(|x| x.iter().sum::<u64>()).max().unwrap_or(total);
    (best as f64 / w as f64, total as f64 / secs.max(1e-9))
}

/// One measurement: `clients` sessions looking up random aids for `secs` seconds. Returns
/// transactions completed in each whole second of the run.
pub fn measure(db: &Database, clients: usize, secs: u64, naccounts: u64, seed: u64) -> Result<Vec<u64>> {
    let barrier = Barrier::new(clients);
    // One clock for all sessions: the first past the barrier starts it, and every session
    // stops at the same instant, so the per-second counts add up over the same wall seconds
    // however late the scheduler runs a thread.
    let start_cell = std::sync::OnceLock::new();
    let results: Vec<Result<Vec<u64>>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..clients)
            .map(|k| {
                let (barrier, start_cell) = (&barrier, &start_cell);
                std::thread::Builder::new()
                    .stack_size(256 << 10)
                    .spawn_scoped(sc, move || -> Result<Vec<u64>> {
                        let mut s = db.session();
                        let p = s.prepare("SELECT abalance FROM pgbench_accounts WHERE aid = $1")?;
                        let mut rng = crate::rng::Rng::new(seed ^ ((k as u64 + 1) * 0x9E37_79B9_7F4A_7C15));
                        let mut counts = vec![0u64; secs as usize];
                        let mut params = [Some(String::with_capacity(12))];
                        barrier.wait();
                        let start = *start_cell.get_or_init(Instant::now);
                        let end = Duration::from_secs(secs);
                        loop {
                            let el = start.elapsed();
                            if el >= end {
                                break;
                            }
                            let aid = rng.below(naccounts) + 1;
                            let t = params[0].as_mut().expect("set");
                            t.clear();
                            use std::fmt::Write;
                            let _ = write!(t, "{aid}");
                            let r = s.execute_prepared(&p, &params)?;
                            if r.rows.len() != 1 {
                                return Err(PgError::internal(format!("aid {aid} returned {} rows", r.rows.len())));
                            }
                            counts[(el.as_secs() as usize).min(secs as usize - 1)] += 1;
                        }
                        Ok(counts)
                    })
                    .expect("spawn a session thread")
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(PgError::internal("session panicked")))).collect()
    });
    let mut total = vec![0u64; secs as usize];
    for r in results {
        for (t, c) in total.iter_mut().zip(r?) {
            *t += c;
        }
    }
    Ok(total)
}

/// pgbench -S -M prepared: (best 5 s, total) tps from its per-second progress and summary.
fn pgbench_rates(pg: &PgServer, clients: usize, secs: u64) -> Result<(f64, f64)> {
    let (c, t) = (clients.to_string(), secs.to_string());
    let (out, err) = pg.pgbench_output(&["-n", "-S", "-M", "prepared", "-c", &c, "-j", &c, "-T", &t, "-P", "1"])?;
    let total: f64 = out
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| PgError::internal(format!("could not read pgbench's tps from: {out}")))?;
    // "progress: 3.0 s, 12345.6 tps, lat ..."
    let per_s: Vec<u64> = err
        .lines()
        .filter(|l| l.starts_with("progress:"))
        .filter_map(|l| l.split(", ").nth(1)?.split_whitespace().next()?.parse::<f64>().ok())
        .map(|v| v.round() as u64)
        .collect();
    let best = if per_s.is_empty() { total } else { rates(&per_s, per_s.len() as f64).0 };
    Ok((best, total))
}

pub fn run(args: SelectOnlyArgs, set_args: &[String]) -> Result<()> {
    let c = &args.common;
    let quick = c.quick;
    let clients = c.clients.clone().unwrap_or_else(|| if quick { vec![1, 2] } else { (0..=10).map(|i| 1usize << i).collect() });
    if clients.contains(&0) {
        return Err(super::bad_arg("--clients must be at least 1"));
    }
    let runs = c.runs.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let scale = if quick { 1 } else { args.scale.max(1) };
    let secs = if quick { 1 } else { args.seconds.max(1) };
    let sbs = args.shared_buffers.clone().unwrap_or_else(|| if quick { vec!["16MB".into()] } else { vec!["128MB".into(), "1GB".into()] });
    let max_clients = *clients.iter().max().expect("non-empty");
    let work = Workdir::new(c.data_dir.as_deref())?;
    let mut settings: Vec<(String, String)> = vec![
        ("scale".into(), scale.to_string()),
        ("seconds".into(), secs.to_string()),
        ("shared_buffers".into(), sbs.join(",")),
        ("heapstore".into(), "in-process (sessions are threads calling the library)".into()),
    ];
    if c.vs_postgres {
        settings.push(("postgres".into(), "pgbench -S -M prepared over a Unix socket".into()));
    }
    for s in set_args {
        if let Some((k, v)) = s.split_once('=') {
            settings.push((k.into(), v.into()));
        }
    }
    let pg_bin = if c.vs_postgres { Some(find_bin(c.pg_bin.as_deref())?) } else { None };
    let dir = work.path.join("heapstore");
    Database::init(&dir, &[])?;
    let open = |sb: &str| -> Result<Database> {
        let mut set = vec![format!("shared_buffers={sb}"), format!("max_connections={}", max_clients + 8)];
        set.extend(set_args.iter().cloned());
        Database::open(&dir, &set)
    };
    {
        let t = Instant::now();
        let db = open(&sbs[0])?;
        build(&db, scale)?;
        db.close()?;
        settings.push(("heapstore_build_seconds".into(), format!("{:.1}", t.elapsed().as_secs_f64())));
    }
    print_header("select-only", &work.path, &settings, None);
    let mut report = Report::new("select-only", settings.clone());
    let naccounts = scale * ACCOUNTS_PER_SCALE;
    for sb in &sbs {
        let config = format!("shared_buffers={sb}");
        let pg = match &pg_bin {
            Some(bin) => {
                let conns = (max_clients + 10).to_string();
                let pg = PgServer::start(bin, &work.path.join(format!("pg-{sb}")), sb, c.pg_user.clone(), &[("max_connections", &conns)])?;
                pg.pgbench_output(&["-i", "-q", "-s", &scale.to_string()])?;
                report.pg_version = Some(pg.version.clone());
                Some(pg)
            }
            None => None,
        };
        let db = open(sb)?;
        for &n in &clients {
            for r in 0..runs {
                let per_s = measure(&db, n, secs, naccounts, 0x5EED + r as u64)?;
                let (best, total) = rates(&per_s, secs as f64);
                report.add("heapstore", &config, n, r, json!({"tps_best_5s": best, "tps": total}));
                if let Some(pg) = &pg {
                    let (best, total) = pgbench_rates(pg, n, secs)?;
                    report.add("postgres", &config, n, r, json!({"tps_best_5s": best, "tps": total}));
                }
            }
        }
        db.close()?;
    }
    print_results(&report, &sbs, &clients, pg_bin.is_some());
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-select-only.json"));
    report.write_json(&json_path, &work.path, &["tps_best_5s", "tps"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-select-only.png"));
    plot(&report, &sbs, &clients, &plot_path)?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    Ok(())
}

fn print_results(r: &Report, sbs: &[String], clients: &[usize], vs: bool) {
    let systems: &[(&str, &str)] = if vs {
        &[("heapstore", "heapstore (in-process)"), ("postgres", "postgres (Unix socket)")]
    } else {
        &[("heapstore", "heapstore (in-process)")]
    };
    for sb in sbs {
        let config = format!("shared_buffers={sb}");
        println!("\n{config}");
        let mut rows = Vec::new();
        for &n in clients {
            for (sys, label) in systems {
                let best = r.spread(sys, &config, n, "tps_best_5s");
                let total = r.spread(sys, &config, n, "tps");
                let ratio = match (*sys, total, r.spread("postgres", &config, n, "tps")) {
                    ("heapstore", Some(h), Some(p)) if p.median > 0.0 => format!("{:.2}", h.median / p.median),
                    _ => String::new(),
                };
                rows.push(vec![
                    n.to_string(),
                    label.to_string(),
                    best.map(|s| s.show(0)).unwrap_or_default(),
                    total.map(|s| s.show(0)).unwrap_or_default(),
                    ratio,
                ]);
            }
        }
        super::print_table(&["clients", "system", "tps best 5 s", "tps total", "heapstore / postgres"], 2, rows);
        for (sys, label) in systems {
            let best =
                clients.iter().filter_map(|&n| r.spread(sys, &config, n, "tps").map(|s| (n, s.median))).max_by(|a, b| a.1.total_cmp(&b.1));
            let most = clients.iter().max().and_then(|&n| r.spread(sys, &config, n, "tps").map(|s| (n, s.median)));
            if let (Some((bn, b)), Some((mn, m))) = (best, most) {
                if b > 0.0 {
                    println!("{label}: {mn} sessions reach {:.0}% of the best ({bn} sessions)", 100.0 * m / b);
                }
            }
        }
    }
}

fn plot(r: &Report, sbs: &[String], clients: &[usize], path: &Path) -> Result<()> {
    let mut series = Vec::new();
    for sb in sbs {
        let config = format!("shared_buffers={sb}");
        for (sys, label) in [("heapstore", "heapstore in-process"), ("postgres", "postgres socket")] {
            let pts: Vec<(f64, f64)> =
                clients.iter().filter_map(|&n| r.spread(sys, &config, n, "tps").map(|s| (n as f64, s.median))).collect();
            if !pts.is_empty() {
                series.push(super::plot::Series { label: format!("{label}, {config}"), points: pts });
            }
        }
    }
    super::plot::line_chart(path, "pgbench -S: random primary-key lookups (seed 000)", "sessions", "transactions per second", &series)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_window_and_total() {
        let (best, total) = rates(&[1, 10, 10, 10, 10, 10, 1], 7.0);
        assert_eq!(best, 10.0);
        assert!((total - 52.0 / 7.0).abs() < 1e-9);
        assert_eq!(rates(&[4, 6], 2.0), (5.0, 5.0));
    }

    #[test]
    fn accounts_text_streams_every_row() {
        let mut a = AccountsText { next: 1, last: 25_000, buf: Vec::new(), pos: 0 };
        let mut s = String::new();
        a.read_to_string(&mut s).unwrap();
        assert_eq!(s.lines().count(), 25_000);
        assert_eq!(s.lines().last(), Some("25000\t1\t0\t"));
    }
}

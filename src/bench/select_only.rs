//! `heapstore bench select-only` — seed 000's second benchmark, pgbench -S: the pgbench schema
//! at `--scale` (100,000 accounts per scale unit, plus branches, tellers and an empty history),
//! accounts loaded by COPY and then given their primary key; N sessions (threads) look up
//! random aids with the prepared statement `SELECT abalance FROM pgbench_accounts WHERE aid =
//! $1` for `--seconds`; the best 5 seconds and the whole run are reported as transactions per
//! second, per session count and `--shared-buffers` value.
//!
//! Like for like: heapstore is measured **through `heapstore serve`** with PostgreSQL's own
//! `pgbench -M prepared` over a Unix socket, exactly as `--vs-postgres` measures a local
//! PostgreSQL (same pgbench binary and arguments, same scale, shared_buffers, session counts
//! and timing window: pgbench's own). `--in-process` adds heapstore's sessions as threads
//! calling the library (no protocol, no socket), labelled so and never in the ratio column.
//!
//! `heapstore bench tpcb` runs pgbench's built-in TPC-B-like script instead (BEGIN; UPDATE an
//! account; SELECT it; UPDATE its teller and branch; INSERT into history; COMMIT), autovacuum
//! on for both systems (their defaults).
//!
//! Invariants:
//! 1. The data set is built once and reopened for each shared_buffers value; select-only runs
//!    start on the same data (they only read); tpcb runs continue on what earlier runs left.
//! 2. heapstore and PostgreSQL runs alternate run by run (bench invariant 1); both servers run
//!    for the whole shared_buffers block and are stopped on any way out, a signal included.

use super::postgres::{find_bin, find_bins, PgServer, ServeChild};
use super::{print_header, Common, Report, Workdir};
use crate::db::Database;
use crate::error::{PgError, Result};
use serde_json::{json, Value};
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
    /// pgbench scale factor (100,000 accounts each; default 10 for select-only, 4 for tpcb).
    #[arg(long)]
    pub scale: Option<u64>,
    /// Seconds per measurement (default 5 for select-only, 10 for tpcb).
    #[arg(long)]
    pub seconds: Option<u64>,
    /// shared_buffers values, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub shared_buffers: Option<Vec<String>>,
    /// Also measure heapstore in-process (threads calling the library), shown labelled and never
    /// compared with PostgreSQL.
    #[arg(long)]
    pub in_process: bool,
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
        s.execute_with_io(sql, &mut crate::sql::CopyIo { stdin: Some(src), stdout: None, rows: None }).map(|_| ())
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
/// What each session runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// pgbench -S: one primary-key lookup per transaction.
    SelectOnly,
    /// pgbench's default TPC-B-like transaction: update an account, read it back, update its
    /// teller and branch, append to the history, commit.
    Tpcb,
}

/// Prepared statements of one session.
struct Statements {
    lookup: crate::sql::Prepared,
    tpcb: Option<[crate::sql::Prepared; 4]>,
}

impl Statements {
    fn new(s: &crate::Session, w: Workload) -> Result<Statements> {
        let lookup = s.prepare("SELECT abalance FROM pgbench_accounts WHERE aid = $1")?;
        let tpcb = match w {
            Workload::SelectOnly => None,
            Workload::Tpcb => Some([
                s.prepare("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2")?,
                s.prepare("UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2")?,
                s.prepare("UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2")?,
                s.prepare("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, $5)")?,
            ]),
        };
        Ok(Statements { lookup, tpcb })
    }

    /// One transaction with random ids, as pgbench draws them.
    fn run(&self, s: &mut crate::Session, rng: &mut crate::rng::Rng, scale: u64) -> Result<()> {
        let aid = rng.below(scale * ACCOUNTS_PER_SCALE) + 1;
        let Some([acc, tel, bra, his]) = &self.tpcb else {
            let r = s.execute_prepared(&self.lookup, &[Some(aid.to_string())])?;
            if r.rows.len() != 1 {
                return Err(PgError::internal(format!("aid {aid} returned {} rows", r.rows.len())));
            }
            return Ok(());
        };
        let bid = rng.below(scale) + 1;
        let tid = rng.below(scale * 10) + 1;
        let delta = rng.below(10_001) as i64 - 5000;
        let (a, b, t, d) = (Some(aid.to_string()), Some(bid.to_string()), Some(tid.to_string()), Some(delta.to_string()));
        let now_us = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0);
        let ts = crate::types::Value::Timestamp(now_us - 946_684_800_000_000)
            .to_text(&crate::types::SqlType::new(crate::types::TypeId::Timestamp));
        let body = |s: &mut crate::Session| -> Result<()> {
            s.execute_prepared(acc, &[d.clone(), a.clone()])?;
            s.execute_prepared(&self.lookup, std::slice::from_ref(&a))?;
            s.execute_prepared(tel, &[d.clone(), t.clone()])?;
            s.execute_prepared(bra, &[d.clone(), b.clone()])?;
            s.execute_prepared(his, &[t.clone(), b.clone(), a.clone(), d.clone(), ts.clone()])?;
            Ok(())
        };
        s.execute("BEGIN")?;
        match body(s) {
            Ok(()) => s.execute("COMMIT").map(|_| ()),
            Err(e) => {
                let _ = s.execute("ROLLBACK");
                Err(e)
            }
        }
    }
}

pub fn measure(db: &Database, clients: usize, secs: u64, scale: u64, seed: u64, w: Workload) -> Result<Vec<u64>> {
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
                        let st = Statements::new(&s, w)?;
                        let mut rng = crate::rng::Rng::new(seed ^ (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                        let mut counts = vec![0u64; secs as usize];
                        barrier.wait();
                        let start = *start_cell.get_or_init(Instant::now);
                        let end = Duration::from_secs(secs);
                        loop {
                            let el = start.elapsed();
                            if el >= end {
                                break;
                            }
                            st.run(&mut s, &mut rng, scale)?;
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

/// The pgbench arguments of one measurement (the same for both systems).
fn pgbench_args(clients: usize, secs: u64, w: Workload) -> Vec<String> {
    let jobs = clients.min(std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut a: Vec<String> =
        ["-n", "-M", "prepared", "-c", &clients.to_string(), "-j", &jobs.to_string(), "-T", &secs.to_string(), "-P", "1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    if w == Workload::SelectOnly {
        a.push("-S".into());
    }
    a
}

/// The figures of one pgbench run: tps over the best 5 s and in all from its per-second
/// progress and summary, and, for runs of two minutes or more, the tps of the first and the
/// last whole minute (how much a long run decays). Fails on failed transactions.
fn pgbench_figures(out: &str, err: &str) -> Result<Value> {
    let (best, total, per_s) = pgbench_rates(out, err)?;
    let mut f = json!({"tps_best_5s": best, "tps": total});
    if per_s.len() >= 120 {
        let minute = |s: &[u64]| s.iter().sum::<u64>() as f64 / 60.0;
        f["tps_first_minute"] = json!(minute(&per_s[..60]));
        f["tps_last_minute"] = json!(minute(&per_s[per_s.len() - 60..]));
    }
    Ok(f)
}

/// (best 5 s, total, per second) tps from pgbench's per-second progress and summary; fails on
/// failed transactions.
fn pgbench_rates(out: &str, err: &str) -> Result<(f64, f64, Vec<u64>)> {
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
    if let Some(l) = out.lines().find(|l| l.starts_with("number of failed transactions:")) {
        if !l.contains(": 0 (") {
            return Err(PgError::internal(format!("pgbench reported failures: {l}")));
        }
    }
    Ok((best, total, per_s))
}

pub fn run(args: SelectOnlyArgs, set_args: &[String], w: Workload) -> Result<()> {
    let experiment = if w == Workload::Tpcb { "tpcb" } else { "select-only" };
    let c = &args.common;
    let quick = c.quick;
    let default_clients: &[usize] = match w {
        Workload::SelectOnly => &[2, 8, 64],
        Workload::Tpcb => &[1, 4, 16],
    };
    let clients = c.clients.clone().unwrap_or_else(|| if quick { vec![1, 2] } else { default_clients.to_vec() });
    if clients.contains(&0) {
        return Err(super::bad_arg("--clients must be at least 1"));
    }
    let runs = c.runs.unwrap_or(if quick { 1 } else { 3 }).max(1);
    let (default_scale, default_secs) = if w == Workload::Tpcb { (4, 10) } else { (10, 5) };
    let scale = if quick { 1 } else { args.scale.unwrap_or(default_scale).max(1) };
    let secs = if quick { 2 } else { args.seconds.unwrap_or(default_secs).max(1) };
    let default_sbs: &[&str] = match w {
        Workload::SelectOnly => &["16MB", "1GB"],
        Workload::Tpcb => &["128MB"],
    };
    let sbs = args.shared_buffers.clone().unwrap_or_else(|| {
        if quick {
            vec!["16MB".into()]
        } else {
            default_sbs.iter().map(|s| s.to_string()).collect()
        }
    });
    let max_clients = *clients.iter().max().expect("non-empty");
    let work = Workdir::new(c.data_dir.as_deref())?;
    let script = if w == Workload::Tpcb { "pgbench's TPC-B-like script" } else { "pgbench -S" };
    let mut settings: Vec<(String, String)> = vec![
        ("scale".into(), scale.to_string()),
        ("seconds".into(), secs.to_string()),
        ("shared_buffers".into(), sbs.join(",")),
        ("client".into(), format!("{script} -M prepared over a Unix socket, for every system")),
        ("heapstore".into(), "heapstore serve (a child process)".into()),
    ];
    if args.in_process {
        settings.push(("heapstore in-process".into(), "sessions are threads calling the library (not compared)".into()));
    }
    for s in set_args {
        if let Some((k, v)) = s.split_once('=') {
            settings.push((k.into(), v.into()));
        }
    }
    // One pgbench drives every system, so it is needed even without --vs-postgres; the
    // servers compared are every PostgreSQL major version found (15 and 18 when both are).
    let pg_bin = find_bin(c.pg_bin.as_deref())?;
    let pg_servers = if c.vs_postgres { find_bins(c.pg_bin.as_deref())? } else { Vec::new() };
    settings.push(("pgbench".into(), pg_bin.join("pgbench").display().to_string()));
    let dir = work.path.join("heapstore");
    Database::init(&dir, &[])?;
    let hs_settings = |sb: &str| -> Vec<String> {
        let mut set = vec![format!("shared_buffers={sb}"), format!("max_connections={}", max_clients + 8)];
        set.extend(set_args.iter().cloned());
        set
    };
    {
        let t = Instant::now();
        let db = Database::open(&dir, &hs_settings(&sbs[0]))?;
        build(&db, scale)?;
        db.close()?;
        settings.push(("heapstore_build_seconds".into(), format!("{:.1}", t.elapsed().as_secs_f64())));
    }
    print_header(experiment, &work.path, &settings, None);
    let mut report = Report::new(experiment, settings.clone());
    for sb in &sbs {
        let config = format!("shared_buffers={sb}");
        let mut pgs: Vec<(String, PgServer)> = Vec::new();
        for (major, bin) in &pg_servers {
            let conns = (max_clients + 10).to_string();
            let dir = work.path.join(format!("pg{major}-{sb}"));
            let pg = PgServer::start(bin, &dir, sb, c.pg_user.clone(), &[("max_connections", &conns)])?.with_clients(&pg_bin);
            pg.pgbench_output(&["-i", "-q", "-s", &scale.to_string()])?;
            if !report.pg_version.as_deref().is_some_and(|v| v.contains(&pg.version)) {
                println!("postgres: {}", pg.version);
                report.pg_version = Some(match report.pg_version.take() {
                    Some(v) => format!("{v}; {}", pg.version),
                    None => pg.version.clone(),
                });
            }
            pgs.push((format!("postgres {major}"), pg));
        }
        if args.in_process {
            let db = Database::open(&dir, &hs_settings(sb))?;
            for &n in &clients {
                for r in 0..runs {
                    let per_s = measure(&db, n, secs, scale, 0x5EED + r as u64, w)?;
                    let (best, total) = rates(&per_s, secs as f64);
                    report.add("heapstore-in-process", &config, n, r, json!({"tps_best_5s": best, "tps": total}));
                }
            }
            db.close()?;
        }
        let serve = ServeChild::start(&pg_bin, &dir, &work.path.join(format!("serve-{sb}")), &hs_settings(sb))?;
        for &n in &clients {
            let a = pgbench_args(n, secs, w);
            let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
            for r in 0..runs {
                let (out, err) = serve.pgbench_output(&a)?;
                report.add("heapstore", &config, n, r, pgbench_figures(&out, &err)?);
                for (label, pg) in &pgs {
                    let (out, err) = pg.pgbench_output(&a)?;
                    report.add(label, &config, n, r, pgbench_figures(&out, &err)?);
                }
            }
        }
        serve.stop()?;
        drop(pgs);
    }
    let pg_labels: Vec<String> = pg_servers.iter().map(|(v, _)| format!("postgres {v}")).collect();
    print_results(&report, &sbs, &clients, &pg_labels, args.in_process);
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from(format!("bench-{experiment}.json")));
    report.write_json(&json_path, &work.path, &["tps_best_5s", "tps", "tps_first_minute", "tps_last_minute"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from(format!("bench-{experiment}.png")));
    plot(&report, &sbs, &clients, &pg_labels, &plot_path, w)?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    Ok(())
}

fn print_results(r: &Report, sbs: &[String], clients: &[usize], pgs: &[String], in_process: bool) {
    let mut systems: Vec<(&str, String)> = vec![("heapstore", "heapstore serve (Unix socket)".to_string())];
    for p in pgs {
        systems.push((p, format!("{p} (Unix socket)")));
    }
    if in_process {
        systems.push(("heapstore-in-process", "heapstore in-process (not comparable)".to_string()));
    }
    for sb in sbs {
        let config = format!("shared_buffers={sb}");
        println!("\n{config}");
        let mut rows = Vec::new();
        for &n in clients {
            for (sys, label) in &systems {
                let best = r.spread(sys, &config, n, "tps_best_5s");
                let total = r.spread(sys, &config, n, "tps");
                // On each PostgreSQL row: heapstore serve's tps over that version's.
                let ratio = match (sys.starts_with("postgres"), r.spread("heapstore", &config, n, "tps"), total) {
                    (true, Some(h), Some(p)) if p.median > 0.0 => format!("{:.2}", h.median / p.median),
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
        super::print_table(&["clients", "system", "tps best 5 s", "tps total", "heapstore serve / this"], 2, rows);
        // Runs of two minutes or more: does the rate hold (dead versions, bloat, checkpoints)?
        let mut decay = Vec::new();
        for &n in clients {
            for (sys, label) in &systems {
                let first = r.spread(sys, &config, n, "tps_first_minute");
                let last = r.spread(sys, &config, n, "tps_last_minute");
                if let (Some(f), Some(l)) = (first, last) {
                    let ratio = if f.median > 0.0 { format!("{:.2}", l.median / f.median) } else { String::new() };
                    decay.push(vec![n.to_string(), label.to_string(), f.show(0), l.show(0), ratio]);
                }
            }
        }
        if !decay.is_empty() {
            println!();
            super::print_table(&["clients", "system", "tps first minute", "tps last minute", "last / first"], 2, decay);
        }
        for (sys, label) in &systems {
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

fn plot(r: &Report, sbs: &[String], clients: &[usize], pgs: &[String], path: &Path, w: Workload) -> Result<()> {
    let mut series = Vec::new();
    let mut systems: Vec<(&str, &str)> = vec![("heapstore", "heapstore serve")];
    systems.extend(pgs.iter().map(|p| (p.as_str(), p.as_str())));
    systems.push(("heapstore-in-process", "heapstore in-process"));
    for sb in sbs {
        let config = format!("shared_buffers={sb}");
        for &(sys, label) in &systems {
            let pts: Vec<(f64, f64)> =
                clients.iter().filter_map(|&n| r.spread(sys, &config, n, "tps").map(|s| (n as f64, s.median))).collect();
            if !pts.is_empty() {
                series.push(super::plot::Series { label: format!("{label}, {config}"), points: pts });
            }
        }
    }
    let title = match w {
        Workload::SelectOnly => "pgbench -S: random primary-key lookups (seed 000)",
        Workload::Tpcb => "pgbench TPC-B-like: update account, teller, branch; insert history",
    };
    super::plot::line_chart(path, title, "sessions", "transactions per second", &series)
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
    fn long_runs_report_first_and_last_minute() {
        let out = "number of failed transactions: 0 (0.000%)\ntps = 150.0 (without initial connection time)\n";
        let err: String = (1..=150)
            .map(|s| format!("progress: {s}.0 s, {}.0 tps, lat 1.0 ms stddev 0.1, 0 failed\n", if s <= 60 { 200 } else { 100 }))
            .collect();
        let f = pgbench_figures(out, &err).unwrap();
        assert_eq!(f["tps"], json!(150.0));
        assert_eq!(f["tps_first_minute"], json!(200.0));
        assert_eq!(f["tps_last_minute"], json!(100.0));
        let short: String = err.lines().take(100).map(|l| format!("{l}\n")).collect();
        assert!(pgbench_figures(out, &short).unwrap().get("tps_first_minute").is_none());
        let failed = out.replace(": 0 (0.000%)", ": 3 (0.010%)");
        assert!(pgbench_figures(&failed, &err).is_err());
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

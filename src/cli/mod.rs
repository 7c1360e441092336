//! The `heapstore` command line, psql-like: `-D DIR`, `--set name=value`, `-c SQL`, `-f FILE`,
//! `-A`, `-t`, and the commands `init`, `stats`, `demo`, `serve`, `user add`.

pub mod crash_child;
pub mod demo;
pub mod print;
pub mod serve;

use crate::db::Database;
use crate::error::{sqlstate, PgError, Result};
use crate::sql::CopyIo;
use clap::{Parser, Subcommand};
use print::PrintOptions;
use std::io::Write;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "heapstore", version, about = "An embeddable, crash-safe table storage engine on PostgreSQL's storage design")]
pub struct Cli {
    /// Data directory (or $HEAPSTORE_DATA).
    #[arg(short = 'D', long = "pgdata", env = "HEAPSTORE_DATA", global = true)]
    pub dir: Option<PathBuf>,
    /// Override a setting for this run (PostgreSQL names), e.g. --set shared_buffers=1GB.
    #[arg(long = "set", value_name = "NAME=VALUE", global = true)]
    pub set: Vec<String>,
    /// Run SQL (several statements separated by ';'); repeatable.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    pub commands: Vec<String>,
    /// Run SQL from a file; repeatable.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Unaligned output (as psql -A).
    #[arg(short = 'A', long = "no-align")]
    pub unaligned: bool,
    /// Rows only, no header or footer (as psql -t).
    #[arg(short = 't', long = "tuples-only")]
    pub tuples_only: bool,
    /// Print how long each -c / -f string took (as psql's \timing), on stderr.
    #[arg(long)]
    pub timing: bool,
    /// Field separator for unaligned output.
    #[arg(short = 'F', long = "field-separator", default_value = "|")]
    pub field_separator: String,
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Create a data directory.
    Init {
        /// Page size in bytes (4096..32768, a power of two); fixed for the directory's life.
        #[arg(long)]
        block_size: Option<u32>,
        /// Name of the superuser role that `serve` knows from the start.
        #[arg(long, default_value = "postgres")]
        superuser: String,
    },
    /// Serve the PostgreSQL wire protocol (psql, pgbench, drivers) on a Unix socket and TCP.
    Serve(serve::ServeArgs),
    /// Manage roles for `serve`.
    #[command(subcommand)]
    User(serve::UserCmd),
    /// Show cumulative I/O, LWLock and buffer-replacement statistics.
    Stats {
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Crash torture on the simulated disk: seeded workloads, simulated power losses,
    /// recovery and checks against a model (no data directory needed).
    Torture {
        /// Run only this seed (replays a failure exactly).
        #[arg(long)]
        seed: Option<u64>,
        /// How many seeds to run, from --first-seed.
        #[arg(long, default_value_t = 100)]
        seeds: u64,
        #[arg(long, default_value_t = 1)]
        first_seed: u64,
        /// Stop starting new seeds after this many minutes (0: no limit).
        #[arg(long, default_value_t = 0.0)]
        minutes: f64,
        /// Crash generations per seed.
        #[arg(long, default_value_t = 6)]
        generations: u32,
        /// Most statements in one generation.
        #[arg(long, default_value_t = 160)]
        max_steps: u32,
        /// No injected EIO / ENOSPC / short writes (power losses only).
        #[arg(long)]
        no_faults: bool,
    },
    /// The kill -9 crash test's child: concurrent COPYs printing each acknowledged commit (hidden).
    #[command(hide = true)]
    CrashChild {
        #[arg(long, default_value_t = 4)]
        threads: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Microseconds each session sleeps between transactions.
        #[arg(long, default_value_t = 500)]
        pause_us: u64,
    },
    /// Rerun a seed experiment. How each is measured, and how it compares like for like with
    /// PostgreSQL: docs/BENCH.md in the repository.
    #[command(subcommand, after_help = "The harness contract and every experiment: docs/BENCH.md")]
    Bench(Box<BenchCmd>),
    /// The main job: create a database, generate and COPY a few million rows, scan them, and
    /// show throughput and statistics.
    Demo {
        /// Where to put the database (default: a temporary directory, removed afterwards).
        dir: Option<PathBuf>,
        /// Rows to generate.
        #[arg(long, default_value_t = 3_000_000)]
        rows: u64,
    },
}

#[derive(Subcommand, Debug)]
pub enum BenchCmd {
    /// Seed 000: concurrent COPY into one table, the same pgbench against `heapstore serve` and PostgreSQL.
    Copy(crate::bench::copy::CopyArgs),
    /// Seed 000: pgbench -S through `heapstore serve` and PostgreSQL, same pgbench, same socket.
    SelectOnly(crate::bench::select_only::SelectOnlyArgs),
    /// pgbench's built-in TPC-B-like script through `heapstore serve` and PostgreSQL.
    Tpcb(crate::bench::select_only::SelectOnlyArgs),
    /// Seed 004: victim search in a huge, hot pool, bounded vs unbounded sweep (heapstore only).
    Victim(crate::bench::victim::VictimArgs),
    /// Seed 001: parallel COPY into a skinny logged table; WAL insertion designs compared in-process.
    Wal(crate::bench::wal::WalArgs),
    /// Seed 003: trivial selects with transactions that touch 10,000 tables, the same pgbench on every system.
    Lockbloat(crate::bench::lockbloat::LockBloatArgs),
    /// Seed 002: sequential scans: psql count(*) against serve and PostgreSQL; heapstore's ring x io_method matrix.
    Seqscan(crate::bench::seqscan::SeqscanArgs),
    /// The query executor: GROUP BY and a hash join through psql, against PostgreSQL.
    Query(crate::bench::query::QueryArgs),
}

fn need_dir(cli: &Cli) -> Result<PathBuf> {
    cli.dir.clone().ok_or_else(|| {
        PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "no data directory specified").with_hint("Use -D DIR or set HEAPSTORE_DATA.")
    })
}

/// Runs the command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    match run_inner(&cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

fn run_inner(cli: &Cli) -> Result<i32> {
    match &cli.cmd {
        Some(Cmd::Serve(a)) => return serve::serve(&need_dir(cli)?, &cli.set, a),
        Some(Cmd::User(u)) => return serve::user(&need_dir(cli)?, u),
        Some(Cmd::Init { block_size, superuser }) => {
            let dir = need_dir(cli)?;
            let mut set = cli.set.clone();
            if let Some(b) = block_size {
                set.push(format!("block_size={b}"));
            }
            Database::init(&dir, &set)?;
            crate::auth::init_roles(&dir, superuser)?;
            println!("heapstore data directory initialized at {}", dir.display());
            println!("superuser role \"{superuser}\"; `serve` trusts the Unix socket, TCP needs a password: heapstore -D DIR user add {superuser}");
            return Ok(0);
        }
        Some(Cmd::Stats { json }) => {
            let dir = need_dir(cli)?;
            let s = crate::db::saved_stats(&dir)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&s).expect("serializable"));
            } else {
                print!("{}", print::format_stats(&s));
            }
            return Ok(0);
        }
        Some(Cmd::Demo { dir, rows }) => return demo::run(dir.clone(), *rows, &cli.set).map(|_| 0),
        Some(Cmd::CrashChild { threads, seed, pause_us }) => {
            let dir = need_dir(cli)?;
            return crash_child::run(&dir, &cli.set, *threads, *seed, *pause_us).map(|_| 0);
        }
        Some(Cmd::Torture { seed, seeds, first_seed, minutes, generations, max_steps, no_faults }) => {
            if !cli.set.is_empty() {
                return Err(PgError::feature("heapstore torture runs with its own settings; --set is not supported here"));
            }
            let base = crate::torture::Options { seed: 0, generations: *generations, max_steps: *max_steps, faults: !*no_faults };
            let (first, n) = match seed {
                Some(s) => (*s, 1),
                None => (*first_seed, *seeds),
            };
            let start = std::time::Instant::now();
            let r = crate::torture::soak(first, n, *minutes, &base, |r| {
                if r.seeds % 25 == 0 {
                    eprintln!(
                        "torture: {} seeds, {} power losses, {} commits checked ({:.0} s)",
                        r.seeds,
                        r.power_losses,
                        r.commits_checked,
                        start.elapsed().as_secs_f64()
                    );
                }
            });
            return match r {
                Ok(r) => {
                    println!("{}", crate::torture::summary(&r, start.elapsed()));
                    Ok(0)
                }
                Err(f) => {
                    eprintln!("{f}");
                    Ok(1)
                }
            };
        }
        Some(Cmd::Bench(b)) => {
            return match &**b {
                BenchCmd::Copy(a) => crate::bench::copy::run(a.clone(), &cli.set),
                BenchCmd::SelectOnly(a) => {
                    crate::bench::select_only::run(a.clone(), &cli.set, crate::bench::select_only::Workload::SelectOnly)
                }
                BenchCmd::Tpcb(a) => crate::bench::select_only::run(a.clone(), &cli.set, crate::bench::select_only::Workload::Tpcb),
                BenchCmd::Victim(a) => crate::bench::victim::run(a.clone()),
                BenchCmd::Wal(a) => crate::bench::wal::run(a.clone(), &cli.set),
                BenchCmd::Lockbloat(a) => crate::bench::lockbloat::run(a.clone(), &cli.set),
                BenchCmd::Query(a) => crate::bench::query::run(a.clone(), &cli.set),
                BenchCmd::Seqscan(a) => crate::bench::seqscan::run(a.clone(), &cli.set),
            }
            .map(|_| 0)
        }
        None => {}
    }
    if cli.commands.is_empty() && cli.files.is_empty() {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "nothing to do")
            .with_hint("Give -c SQL, -f FILE, or a command (init, stats, demo); see --help."));
    }
    let dir = need_dir(cli)?;
    let db = Database::open(&dir, &cli.set)?;
    for m in &db.shared().startup_messages {
        eprintln!("{m}");
    }
    let opts = PrintOptions { unaligned: cli.unaligned, tuples_only: cli.tuples_only, field_separator: cli.field_separator.clone() };
    let mut scripts: Vec<String> = cli.commands.clone();
    for f in &cli.files {
        scripts.push(std::fs::read_to_string(f).map_err(|e| PgError::io("read", f, e))?);
    }
    let mut code = 0;
    {
        let mut session = db.session();
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        for sql in &scripts {
            let mut inp = stdin.lock();
            // COPY TO STDOUT hands over one row per write: buffer them (stdout alone is
            // line-buffered, a system call per row).
            let mut out = std::io::BufWriter::with_capacity(256 << 10, stdout.lock());
            let mut io = CopyIo { stdin: Some(&mut inp), stdout: Some(&mut out), rows: None };
            let t0 = std::time::Instant::now();
            let res = session.execute_with_io(sql, &mut io);
            let _ = out.flush();
            if cli.timing {
                eprintln!("Time: {:.3} ms", t0.elapsed().as_secs_f64() * 1e3);
            }
            match res {
                Ok(results) => {
                    for r in &results {
                        for n in &r.notices {
                            eprintln!("{n}");
                        }
                        // COPY TO STDOUT writes data only, as psql does.
                        if r.wrote_to_client {
                            continue;
                        }
                        let _ = out.write_all(print::format_result(r, &opts).as_bytes());
                    }
                    let _ = out.flush();
                }
                Err(e) => {
                    let _ = out.flush();
                    eprintln!("{e}");
                    code = 1;
                    break;
                }
            }
        }
    }
    db.close()?;
    Ok(code)
}

//! `heapstore bench victim` — seed 004's problem: a huge pool whose buffers all have the
//! maximum usage count, and the cost of one victim search in it. heapstore measured against
//! itself, in-process (the pool is driven directly): PostgreSQL exposes no per-search figures,
//! so there is no PostgreSQL arm and no ratio against it (`--vs-postgres` is ignored).
//!
//! Hot pool: it fills a pool (default 1 GiB) with pages of one relation, heats every buffer to
//! the maximum usage count, and times victim searches, re-heating the whole pool every
//! `--reheat-every` searches as a hot workload would. It runs twice in one command: "bounded",
//! with heapstore's bound (`heapstore.clock_sweep_max_examined`, default 1024: after that many
//! buffers the least used one seen is taken), and "unbounded sweep", the bound lifted to
//! shared_buffers × (max usage + 1), where the sweep goes on until it finds a buffer at usage
//! zero, as PostgreSQL's clock sweep does. It reports the maximum and p99.9 of buffers
//! examined and of time per search.
//!
//! Skewed reads: what the bound costs in hit ratio. A smaller pool (`--skew-shared-buffers`)
//! serves one session's reads of a relation `--skew-table-factor` times its size, block numbers
//! drawn from a Zipf distribution (`--zipf`, over a fixed random permutation of the blocks);
//! after a warm-up of twice the relation's blocks, `--accesses` reads are counted, with the
//! bound and without it, the same sequence for both. Hit ratio = 1 − misses / reads, a miss
//! being a read that took a victim from the clock sweep.

use super::{print_header, Common, Report, Workdir};
use crate::buffer::BufferPool;
use crate::config::parse_memory;
use crate::error::Result;
use crate::storage::{ForkNumber, RelFileNumber, Smgr};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

const HOT_UNBOUNDED: &str = "hot pool, unbounded sweep";

#[derive(clap::Args, Debug, Clone)]
pub struct VictimArgs {
    #[command(flatten)]
    pub common: Common,
    /// Pool size (at least 1GB for the seed's point).
    #[arg(long, default_value = "1GB")]
    pub shared_buffers: String,
    /// Victim searches per configuration.
    #[arg(long, default_value_t = 20_000)]
    pub searches: usize,
    /// Re-heat every buffer to the maximum usage count after this many searches.
    #[arg(long, default_value_t = 2_000)]
    pub reheat_every: usize,
    /// The bound heapstore uses.
    #[arg(long, default_value_t = 1024)]
    pub max_examined: u64,
    /// Pool size of the skewed-reads run.
    #[arg(long, default_value = "128MB")]
    pub skew_shared_buffers: String,
    /// The skewed-reads relation is this many times the pool.
    #[arg(long, default_value_t = 4)]
    pub skew_table_factor: u32,
    /// Zipf exponent of the skewed reads (0.99 is YCSB's).
    #[arg(long, default_value_t = 0.99)]
    pub zipf: f64,
    /// Reads counted per configuration of the skewed run (after the warm-up).
    #[arg(long, default_value_t = 1_000_000)]
    pub accesses: u64,
}

fn quantile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

pub fn run(args: VictimArgs) -> Result<()> {
    let c = &args.common;
    let bytes = parse_memory(&args.shared_buffers, 8192)
        .ok_or_else(|| super::bad_arg(format!("bad --shared-buffers \"{}\"", args.shared_buffers)))?;
    let bytes = if c.quick { bytes.min(64 << 20) } else { bytes };
    let searches = if c.quick { 500 } else { args.searches };
    let runs = c.runs.unwrap_or(if c.quick { 1 } else { 3 }).max(1);
    let work = Workdir::new(c.data_dir.as_deref())?;
    let nbuffers = (bytes / 8192) as usize;
    let settings = vec![
        ("shared_buffers".to_string(), format!("{} MB", bytes >> 20)),
        ("heapstore.clock_sweep_max_examined".to_string(), args.max_examined.to_string()),
    ];
    print_header("victim", &work.path, &settings, None);
    if c.vs_postgres {
        println!(
            "note: --vs-postgres does not apply: PostgreSQL exposes no per-search victim figures; heapstore is compared with itself\n"
        );
    }
    let mut report = Report::new("victim", settings.clone());
    let bounded = format!("hot pool, bounded (max_examined={})", args.max_examined);
    let configs = [(bounded.as_str(), args.max_examined), (HOT_UNBOUNDED, nbuffers as u64 * 6)];
    for &(name, bound) in &configs {
        for r in 0..runs {
            let smgr = Arc::new(Smgr::new(&work.path, 8192, false)?);
            let rel = RelFileNumber(16384 + r as u32);
            smgr.create(rel, ForkNumber::Main)?;
            let pool = BufferPool::new(smgr.clone(), nbuffers, 128, bound, "try", 1)?;
            {
                let pins = pool.new_pins();
                let mut left = nbuffers as u32;
                while left > 0 {
                    let got = pool.extend_by(&pins, rel, ForkNumber::Main, left.min(64), None)?;
                    left -= got.len() as u32;
                }
            }
            let mut examined = Vec::with_capacity(searches);
            let mut ns = Vec::with_capacity(searches);
            for i in 0..searches {
                if i % args.reheat_every.max(1) == 0 {
                    pool.heat_all();
                }
                let t0 = Instant::now();
                let (id, n) = pool.clock_sweep_counted();
                ns.push(t0.elapsed().as_nanos() as u64);
                examined.push(n);
                if let Some(id) = id {
                    pool.release_sweep_pin(id);
                }
            }
            examined.sort_unstable();
            ns.sort_unstable();
            report.add(
                "heapstore",
                name,
                1,
                r,
                json!({
                    "searches": searches,
                    "examined_max": examined[examined.len() - 1],
                    "examined_p999": quantile(&examined, 0.999),
                    "examined_p50": quantile(&examined, 0.5),
                    "search_us_max": ns[ns.len() - 1] as f64 / 1e3,
                    "search_us_p999": quantile(&ns, 0.999) as f64 / 1e3,
                    "search_us_p50": quantile(&ns, 0.5) as f64 / 1e3,
                }),
            );
            drop(pool);
            smgr.unlink(rel)?;
        }
    }
    println!(
        "{} buffers, all at usage count 5, re-heated every {} searches; {} searches per configuration\n",
        nbuffers, args.reheat_every, searches
    );
    let mut rows = Vec::new();
    for (cfg, _) in configs {
        let f = |k: &str, d: usize| report.spread("heapstore", cfg, 1, k).map(|s| s.show(d)).unwrap_or_default();
        rows.push(vec![
            cfg.to_string(),
            f("examined_max", 0),
            f("examined_p999", 0),
            f("examined_p50", 0),
            f("search_us_max", 1),
            f("search_us_p999", 1),
            f("search_us_p50", 2),
        ]);
    }
    super::print_table(&["sweep", "examined max", "examined p99.9", "examined p50", "µs max", "µs p99.9", "µs p50"], 1, rows);
    skewed(&args, &work.path, runs, &mut report)?;
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-victim.json"));
    report.write_json(&json_path, &work.path, &["examined_max", "examined_p999", "search_us_max", "search_us_p999", "hit_ratio"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-victim.png"));
    let series: Vec<super::plot::Series> = configs
        .iter()
        .map(|(cfg, _)| super::plot::Series {
            label: cfg.to_string(),
            points: ["examined_p50", "examined_p999", "examined_max"]
                .iter()
                .enumerate()
                .filter_map(|(i, k)| report.spread("heapstore", cfg, 1, k).map(|s| ((1u64 << (i * 2)) as f64, s.median)))
                .collect(),
        })
        .collect();
    super::plot::line_chart(
        &plot_path,
        "Buffers examined per victim search, hot pool (seed 004): p50, p99.9, max",
        "quantile (p50, p99.9, max)",
        "buffers examined",
        &series,
    )?;
    println!("wrote {} and {}", json_path.display(), plot_path.display());
    Ok(())
}

/// Block numbers drawn from a Zipf distribution over `n` blocks, rank r (from 1) with weight
/// r^-s, ranks mapped to blocks by a fixed random permutation.
struct Zipf {
    cdf: Vec<f64>,
    blocks: Vec<u32>,
}

impl Zipf {
    fn new(n: u32, s: f64, rng: &mut crate::rng::Rng) -> Zipf {
        let mut cdf = Vec::with_capacity(n as usize);
        let mut sum = 0.0;
        for r in 1..=n {
            sum += (r as f64).powf(-s);
            cdf.push(sum);
        }
        for x in cdf.iter_mut() {
            *x /= sum;
        }
        let mut blocks: Vec<u32> = (0..n).collect();
        for i in (1..blocks.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            blocks.swap(i, j);
        }
        Zipf { cdf, blocks }
    }

    fn sample(&self, rng: &mut crate::rng::Rng) -> u32 {
        let u = rng.next_f64();
        let i = self.cdf.partition_point(|&c| c < u).min(self.blocks.len() - 1);
        self.blocks[i]
    }
}

/// The skewed-reads run: hit ratio with the bound and without it.
fn skewed(args: &VictimArgs, dir: &std::path::Path, runs: usize, report: &mut Report) -> Result<()> {
    let quick = args.common.quick;
    let bytes = parse_memory(&args.skew_shared_buffers, 8192)
        .ok_or_else(|| super::bad_arg(format!("bad --skew-shared-buffers \"{}\"", args.skew_shared_buffers)))?;
    let bytes = if quick { bytes.min(8 << 20) } else { bytes };
    let nbuffers = ((bytes / 8192) as usize).max(16);
    let nblocks = nbuffers as u32 * args.skew_table_factor.max(1);
    let accesses = if quick { 20_000 } else { args.accesses.max(1) };
    let smgr = Arc::new(Smgr::new(dir, 8192, false)?);
    let rel = RelFileNumber(20000);
    smgr.create(rel, ForkNumber::Main)?;
    smgr.zero_extend(rel, ForkNumber::Main, 0, nblocks)?;
    let zipf = Zipf::new(nblocks, args.zipf, &mut crate::rng::Rng::new(0x5EED_0004));
    let bounded = format!("skewed reads, bounded (max_examined={})", args.max_examined);
    let configs = [(bounded.as_str(), args.max_examined), ("skewed reads, unbounded sweep", nbuffers as u64 * 6)];
    for r in 0..runs {
        for &(name, bound) in &configs {
            let pool = BufferPool::new(smgr.clone(), nbuffers, 128, bound, "try", 1)?;
            let pins = pool.new_pins();
            let mut rng = crate::rng::Rng::new(0xACCE55 + r as u64);
            let mut read = |k: u64| -> Result<()> {
                for _ in 0..k {
                    let b = zipf.sample(&mut rng);
                    drop(pool.read_buffer(&pins, rel, ForkNumber::Main, b, None)?);
                }
                Ok(())
            };
            read(2 * nblocks as u64)?;
            let a0 = pool.buffers_alloc.load(std::sync::atomic::Ordering::Relaxed);
            let t0 = Instant::now();
            read(accesses)?;
            let secs = t0.elapsed().as_secs_f64();
            let misses = pool.buffers_alloc.load(std::sync::atomic::Ordering::Relaxed) - a0;
            report.add(
                "heapstore",
                name,
                1,
                r,
                json!({"reads": accesses, "misses": misses, "hit_ratio": 1.0 - misses as f64 / accesses as f64,
                    "read_us_mean": secs * 1e6 / accesses as f64}),
            );
            drop(pins);
            drop(pool);
        }
    }
    smgr.unlink(rel)?;
    println!(
        "\nskewed reads: {} buffers, a relation of {} blocks, Zipf s = {}, {} reads counted after a warm-up of {}; {} run(s):\n",
        nbuffers,
        nblocks,
        args.zipf,
        accesses,
        2 * nblocks as u64,
        runs
    );
    let mut rows = Vec::new();
    for (cfg, _) in configs {
        let f = |k: &str, d: usize| report.spread("heapstore", cfg, 1, k).map(|s| s.show(d)).unwrap_or_default();
        rows.push(vec![cfg.to_string(), f("hit_ratio", 4), f("misses", 0), f("read_us_mean", 2)]);
    }
    super::print_table(&["sweep", "hit ratio", "misses", "µs per read"], 1, rows);
    let (b, u) = (report.spread("heapstore", configs[0].0, 1, "hit_ratio"), report.spread("heapstore", configs[1].0, 1, "hit_ratio"));
    if let (Some(b), Some(u)) = (b, u) {
        println!("the bound's cost in hit ratio: {:+.4} (bounded − unbounded)", b.median - u.median);
    }
    Ok(())
}

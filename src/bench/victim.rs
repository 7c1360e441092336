//! `heapstore bench victim` — seed 004's problem: a huge pool whose buffers all have the
//! maximum usage count, and the cost of one victim search in it.
//!
//! It fills a pool (default 1 GiB) with pages of one relation, heats every buffer to the
//! maximum usage count, and times victim searches, re-heating the whole pool every
//! `--reheat-every` searches as a hot workload would. It runs twice in one command: with
//! heapstore's bound (`heapstore.clock_sweep_max_examined`, default 1024) and with the bound
//! lifted to what PostgreSQL's unbounded sweep can take (shared_buffers × (max usage + 1)), and
//! reports the maximum and p99.9 of buffers examined and of time per search.

use super::{print_header, Common, Report, Workdir};
use crate::buffer::BufferPool;
use crate::config::parse_memory;
use crate::error::Result;
use crate::storage::{ForkNumber, RelFileNumber, Smgr};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

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
    let runs = c.runs.unwrap_or(1).max(1);
    let work = Workdir::new(c.data_dir.as_deref())?;
    let nbuffers = (bytes / 8192) as usize;
    let settings = vec![
        ("shared_buffers".to_string(), format!("{} MB", bytes >> 20)),
        ("heapstore.clock_sweep_max_examined".to_string(), args.max_examined.to_string()),
    ];
    print_header("victim", &work.path, &settings, None);
    if c.vs_postgres {
        println!("note: --vs-postgres does not apply: PostgreSQL does not expose per-search victim figures\n");
    }
    let mut report = Report::new("victim", settings.clone());
    let configs = [("heapstore bounded", args.max_examined), ("unbounded (PostgreSQL's sweep)", nbuffers as u64 * 6)];
    for (name, bound) in configs {
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
    for cfg in report.configs() {
        let f = |k: &str, d: usize| report.spread("heapstore", &cfg, 1, k).map(|s| s.show(d)).unwrap_or_default();
        rows.push(vec![
            cfg.clone(),
            f("examined_max", 0),
            f("examined_p999", 0),
            f("examined_p50", 0),
            f("search_us_max", 1),
            f("search_us_p999", 1),
            f("search_us_p50", 2),
        ]);
    }
    super::print_table(&["sweep", "examined max", "examined p99.9", "examined p50", "µs max", "µs p99.9", "µs p50"], 1, rows);
    let json_path = c.json.clone().unwrap_or_else(|| PathBuf::from("bench-victim.json"));
    report.write_json(&json_path, &work.path, &["examined_max", "examined_p999", "search_us_max", "search_us_p999"])?;
    let plot_path = c.plot.clone().unwrap_or_else(|| PathBuf::from("bench-victim.png"));
    let series: Vec<super::plot::Series> = report
        .configs()
        .iter()
        .map(|cfg| super::plot::Series {
            label: cfg.clone(),
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

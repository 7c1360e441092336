//! Every `heapstore bench` experiment runs in `--quick` mode and writes well-formed JSON and a
//! PNG (benchmarks are not tests: nothing here looks at speed).

mod common;
use common::bin;
use std::process::Command;

fn run_quick(experiment: &str) -> serde_json::Value {
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("out.json");
    let png = t.path().join("out.png");
    let out = Command::new(bin())
        .args(["bench", experiment, "--quick", "--data-dir"])
        .arg(t.path().join("work"))
        .arg("--json")
        .arg(&json)
        .arg("--plot")
        .arg(&png)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let png_bytes = std::fs::read(&png).unwrap();
    assert_eq!(&png_bytes[..8], b"\x89PNG\r\n\x1a\n");
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

#[test]
fn bench_copy_quick_writes_json() {
    if !has_pgbench() {
        return;
    }
    let v = run_quick("copy");
    assert_eq!(v["experiment"], "copy");
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
    let runs = v["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    for r in runs {
        assert!(r["seconds"].as_f64().unwrap() > 0.0);
        assert!(r["table_mb_per_s"].as_f64().unwrap() > 0.0);
        // As in the seed, every session count loads the same data: --quick runs 1 and 2
        // sessions, so 2 COPYs in all.
        let (n, copies) = (r["clients"].as_u64().unwrap(), r["copies_per_session"].as_u64().unwrap());
        assert_eq!(n * copies, 2, "{r}");
    }
    let input: Vec<f64> = runs.iter().map(|r| r["input_mb"].as_f64().unwrap()).collect();
    assert!(input.iter().all(|&x| x == input[0]), "{input:?}");
    assert!(!v["summary"].as_array().unwrap().is_empty());
}

#[test]
fn bench_victim_quick_writes_json() {
    let v = run_quick("victim");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "hot pool and skewed reads, each bounded and unbounded");
    // The bound holds by construction: the bounded sweep never examines more than it.
    let bounded = runs.iter().find(|r| r["config"] == "hot pool, bounded (max_examined=1024)").unwrap();
    assert!(bounded["examined_max"].as_u64().unwrap() <= 1024);
    // No PostgreSQL arm: heapstore against itself.
    assert!(runs.iter().all(|r| r["system"] == "heapstore"));
    for r in runs.iter().filter(|r| r["config"].as_str().unwrap().starts_with("skewed reads")) {
        let h = r["hit_ratio"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&h), "{r}");
    }
}

#[test]
fn bench_wal_quick_writes_json() {
    let v = run_quick("wal");
    assert!(v["runs"].as_array().unwrap().iter().all(|r| r["system"] == "heapstore-in-process"));
    let configs: std::collections::HashSet<String> =
        v["runs"].as_array().unwrap().iter().map(|r| r["config"].as_str().unwrap().to_string()).collect();
    assert_eq!(configs.len(), 3, "parallel, single-lock and unlogged: {configs:?}");
}

#[test]
fn bench_lockbloat_quick_writes_json() {
    if !has_pgbench() {
        return;
    }
    let v = run_quick("lockbloat");
    let runs = v["runs"].as_array().unwrap();
    assert!(runs.iter().all(|r| r["tps"].as_f64().unwrap() > 0.0));
    assert!(runs.iter().any(|r| r["config"] == "with bloat" && r["bloating_transactions"].as_u64().unwrap() >= 1));
}

#[test]
fn bench_seqscan_quick_writes_json() {
    let v = run_quick("seqscan");
    let runs = v["runs"].as_array().unwrap();
    // 3 modes x 3 io_methods x 2 rings in quick mode.
    assert_eq!(runs.len(), 18);
    for r in runs {
        assert!(r["mb_per_s"].as_f64().unwrap() > 0.0);
        assert_eq!(r["ring_escapes"].as_u64().unwrap(), 0, "{r}");
        assert!(r["reads"].as_u64().unwrap() > 0, "every run read from outside the pool: {r}");
    }
    assert!(v["settings"]["dd_direct_mb_per_s"].as_str().unwrap().parse::<f64>().unwrap() > 0.0);
}

/// copy, lockbloat, select-only and tpcb drive every system with PostgreSQL's pgbench.
fn has_pgbench() -> bool {
    let ok = std::path::Path::new("/usr/lib/postgresql/15/bin/pgbench").exists() || std::env::var_os("HEAPSTORE_PG_BIN").is_some();
    if !ok {
        eprintln!("SKIPPED: the experiment needs pgbench (PostgreSQL's client)");
    }
    ok
}

#[test]
fn bench_select_only_quick_writes_json() {
    if !has_pgbench() {
        return;
    }
    let v = run_quick("select-only");
    assert_eq!(v["experiment"], "select-only");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "clients 1 and 2, one run each");
    for r in runs {
        assert!(r["tps"].as_f64().unwrap() > 0.0);
        assert!(r["tps_best_5s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn bench_tpcb_quick_writes_json() {
    if !has_pgbench() {
        return;
    }
    let v = run_quick("tpcb");
    assert_eq!(v["experiment"], "tpcb");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r["tps"].as_f64().unwrap() > 0.0));
}

#[test]
fn bench_query_quick_writes_json() {
    if !std::path::Path::new("/usr/lib/postgresql/15/bin/psql").exists() && std::env::var_os("HEAPSTORE_PG_BIN").is_none() {
        eprintln!("SKIPPED: bench query needs psql (PostgreSQL's client)");
        return;
    }
    let v = run_quick("query");
    assert_eq!(v["experiment"], "query");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "one heapstore run per query");
    for r in runs {
        assert!(r["seconds"].as_f64().unwrap() > 0.0);
    }
}

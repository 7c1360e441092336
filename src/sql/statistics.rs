//! Planner statistics, as PostgreSQL's `pg_statistic` and `pg_class.reltuples` keep them:
//! what `ANALYZE` learned about a table (its row and page counts) and about each column (the
//! fraction of NULLs, the average stored width, the number of distinct values, the most common
//! values with their frequencies, a histogram of the rest, and the correlation between a
//! value's order and its physical position). The planner (`sql::cost`) reads them to estimate
//! how many rows a condition keeps.
//!
//! [`gather`] computes a table's statistics from a sample of its rows (ANALYZE takes up to
//! `300 × default_statistics_target` rows by reservoir sampling, as PostgreSQL does); the
//! [`Store`] holds them by table oid and writes them to `global/pg_statistic.json`.
//!
//! Invariants:
//! 1. Statistics are hints: no answer depends on them, only which plan computes it. So they
//!    are not transactional (as PostgreSQL's `reltuples` is updated in place), and a crash may
//!    lose the latest ANALYZE but never leaves a torn file: the file is replaced atomically
//!    (`fsutil::write_file_durably`) under the store's lock. A file that does not read is
//!    ignored with a WARNING (the tables are then planned as never analyzed).
//! 2. A column's statistics are used only while the table still has a column of that name and
//!    type ([`RelStats::column`]); statistics of a table that no longer exists are dropped at
//!    the next write and ignored when loaded.
//! 3. Every change bumps [`Store::generation`], so cached plans made with older statistics are
//!    planned again.

use crate::error::{PgError, Result};
use crate::exec::sort::compare_key;
use crate::storage::vfs::Vfs;
use crate::types::{SqlType, Value};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The file, under the data directory.
pub const FILE: &str = "global/pg_statistic.json";

/// One column's statistics (`pg_stats`' columns).
#[derive(Clone, Debug)]
pub struct ColumnStats {
    pub name: String,
    pub ty: SqlType,
    pub null_frac: f64,
    pub avg_width: f64,
    /// PostgreSQL's convention: > 0 a count of distinct values; < 0 minus a fraction of the
    /// rows (the count grows with the table).
    pub n_distinct: f64,
    /// Most common values and their frequencies (of all rows), most common first.
    pub mcv: Vec<(Value, f64)>,
    /// Bounds of equal-population buckets over the values not in `mcv`, ascending.
    pub histogram: Vec<Value>,
    /// Correlation (-1..1) between a value's order and its row's physical position.
    pub correlation: f64,
}

/// A table's statistics.
#[derive(Clone, Debug)]
pub struct RelStats {
    pub reltuples: f64,
    pub relpages: u64,
    /// Pages the visibility map marked all-visible (`access::vm`) when ANALYZE ran.
    pub relallvisible: u64,
    pub columns: Vec<ColumnStats>,
    /// When ANALYZE ran (microseconds since 2000-01-01 UTC).
    pub analyzed_us: i64,
}

impl RelStats {
    /// The statistics of the column `name` of type `ty` (invariant 2).
    pub fn column(&self, name: &str, ty: SqlType) -> Option<&ColumnStats> {
        self.columns.iter().find(|c| c.name == name && c.ty == ty)
    }
}

impl ColumnStats {
    /// The number of distinct non-NULL values in a table of `rows` rows.
    pub fn distinct(&self, rows: f64) -> f64 {
        if self.n_distinct < 0.0 {
            (-self.n_distinct * rows).max(1.0)
        } else {
            self.n_distinct.max(1.0)
        }
    }
}

/// Values wider than this (stored bytes) are not kept in the statistics: counted, taken as
/// distinct, never a most common value or a histogram bound (PostgreSQL's WIDTH_THRESHOLD).
pub const WIDTH_THRESHOLD: usize = 1024;

/// A sampled value: its value, or (too wide to keep) its width.
#[derive(Clone, Debug)]
pub enum Sampled {
    Value(Value),
    Wide(usize),
}

/// Computes one column's statistics from `sample` (its values in the sampled rows' physical
/// order), of a table estimated to hold `total_rows` rows. `width` gives a value's stored
/// size.
pub fn gather(name: &str, ty: SqlType, sample: &[Sampled], total_rows: f64, target: usize, width: &dyn Fn(&Value) -> usize) -> ColumnStats {
    let n_all = sample.len();
    let wide: Vec<usize> = sample.iter().filter_map(|s| if let Sampled::Wide(w) = s { Some(*w) } else { None }).collect();
    let mut vals: Vec<(usize, &Value)> = sample
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Sampled::Value(v) if *v != Value::Null => Some((i, v)),
            _ => None,
        })
        .collect();
    let nonnull = vals.len() + wide.len();
    let null_frac = if n_all == 0 { 0.0 } else { (n_all - nonnull) as f64 / n_all as f64 };
    let avg_width = if nonnull == 0 {
        0.0
    } else {
        (vals.iter().map(|(_, v)| width(v)).sum::<usize>() + wide.iter().sum::<usize>()) as f64 / nonnull as f64
    };
    let empty = ColumnStats {
        name: name.into(),
        ty,
        null_frac,
        avg_width,
        n_distinct: 0.0,
        mcv: Vec::new(),
        histogram: Vec::new(),
        correlation: 0.0,
    };
    if nonnull == 0 {
        return empty;
    }
    if vals.is_empty() {
        // Only values too wide to keep: taken as all distinct.
        return ColumnStats { n_distinct: -(1.0 - null_frac), ..empty };
    }
    let kept = vals.len();
    // Order by value (ties by position), then count each distinct value's run.
    vals.sort_by(|a, b| compare_key(a.1, b.1, false, false).then(a.0.cmp(&b.0)));
    let mut runs: Vec<(usize, usize)> = Vec::new(); // (start in `vals`, count)
    for i in 0..kept {
        match runs.last_mut() {
            Some((start, count)) if compare_key(vals[*start].1, vals[i].1, false, false).is_eq() => *count += 1,
            _ => runs.push((i, 1)),
        }
    }
    // Values too wide to keep count as distinct, each seen once.
    let d = (runs.len() + wide.len()) as f64;
    let f1 = (runs.iter().filter(|r| r.1 == 1).count() + wide.len()) as f64;
    let n = nonnull as f64;
    let total_nonnull = (total_rows * (1.0 - null_frac)).max(n);
    let whole = n_all as f64 >= total_rows;
    // The number of distinct values: exact when the sample is the table; all unique
    // (-1); every value seen twice (all values found); else Haas and Stokes' Duj1 estimator,
    // as PostgreSQL's ANALYZE.
    let mut n_distinct = if whole || f1 == 0.0 {
        d
    } else if f1 == n {
        -1.0
    } else {
        let est = n * d / ((n - f1) + f1 * n / total_nonnull);
        est.clamp(d, total_nonnull)
    };
    if n_distinct > 0.0 && n_distinct > 0.1 * total_nonnull {
        n_distinct = -(n_distinct / total_nonnull) * (1.0 - null_frac);
    } else if n_distinct < 0.0 {
        n_distinct *= 1.0 - null_frac;
    }
    // Most common values: those seen more often than 1.25 times the average (and at least
    // twice), or every value when the sample is the table, every value fits the list and the
    // distinct count is absolute (PostgreSQL's rule).
    let mut by_count: Vec<&(usize, usize)> = runs.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let all_fit = whole && wide.is_empty() && runs.len() <= target && n_distinct > 0.0;
    let min_count = if all_fit { 1.0 } else { (1.25 * n / d).max(2.0) };
    let mut in_mcv = vec![false; runs.len()];
    let mut mcv = Vec::new();
    for r in by_count.iter().take(target) {
        if (r.1 as f64) < min_count {
            break;
        }
        mcv.push((vals[r.0].1.clone(), r.1 as f64 / n_all as f64));
        let idx = runs.iter().position(|x| x.0 == r.0).expect("run");
        in_mcv[idx] = true;
    }
    // Histogram over the rest: `target + 1` bounds at equal steps through the sorted values.
    let rest: Vec<&Value> = runs.iter().zip(&in_mcv).filter(|(_, m)| !**m).flat_map(|(r, _)| (r.0..r.0 + r.1).map(|i| vals[i].1)).collect();
    let mut histogram = Vec::new();
    let rest_distinct = in_mcv.iter().filter(|m| !**m).count();
    if rest_distinct >= 2 {
        let buckets = target.min(rest.len() - 1).max(1);
        for k in 0..=buckets {
            let i = k * (rest.len() - 1) / buckets;
            histogram.push(rest[i].clone());
        }
        histogram.dedup_by(|a, b| compare_key(a, b, false, false).is_eq());
    }
    // Correlation of value rank with physical position (Pearson over the ranks).
    let correlation = if kept < 2 {
        0.0
    } else {
        let mut pos: Vec<(usize, f64)> = Vec::with_capacity(kept);
        for (ri, r) in runs.iter().enumerate() {
            for v in &vals[r.0..r.0 + r.1] {
                pos.push((v.0, ri as f64));
            }
        }
        pos.sort_by_key(|p| p.0);
        let m = kept as f64;
        let (mut sx, mut sy, mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (i, (_, y)) in pos.iter().enumerate() {
            let x = i as f64;
            sx += x;
            sy += y;
            sxx += x * x;
            syy += y * y;
            sxy += x * y;
        }
        let cov = sxy / m - (sx / m) * (sy / m);
        let vx = sxx / m - (sx / m).powi(2);
        let vy = syy / m - (sy / m).powi(2);
        if vx <= 0.0 || vy <= 0.0 {
            1.0
        } else {
            (cov / (vx.sqrt() * vy.sqrt())).clamp(-1.0, 1.0)
        }
    };
    ColumnStats { n_distinct, mcv, histogram, correlation, ..empty }
}

/// The reservoir of rows ANALYZE keeps (Vitter's algorithm R over the whole scan): at most
/// `capacity` rows, each row of the table equally likely to be in it.
pub struct Reservoir<T> {
    pub rows: Vec<(u64, T)>,
    capacity: usize,
    seen: u64,
    rng: crate::rng::Rng,
}

impl<T> Reservoir<T> {
    pub fn new(capacity: usize, seed: u64) -> Reservoir<T> {
        Reservoir { rows: Vec::new(), capacity: capacity.max(1), seen: 0, rng: crate::rng::Rng::new(seed) }
    }

    /// Offers the next row (made by `make` only if it is kept).
    pub fn offer(&mut self, make: impl FnOnce() -> T) {
        let pos = self.seen;
        self.seen += 1;
        if self.rows.len() < self.capacity {
            self.rows.push((pos, make()));
        } else {
            let j = self.rng.below(self.seen) as usize;
            if j < self.capacity {
                self.rows[j] = (pos, make());
            }
        }
    }

    /// How many rows were offered.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// The kept rows in physical order.
    pub fn into_sorted(mut self) -> Vec<T> {
        self.rows.sort_by_key(|r| r.0);
        self.rows.into_iter().map(|r| r.1).collect()
    }
}

/// How a column's statistics are written: values as their stored bytes, in hex.
#[derive(Serialize, Deserialize)]
struct ColumnFile {
    name: String,
    ty: SqlType,
    null_frac: f64,
    avg_width: f64,
    n_distinct: f64,
    mcv: Vec<(String, f64)>,
    histogram: Vec<String>,
    correlation: f64,
}

#[derive(Serialize, Deserialize)]
struct RelFile {
    oid: u32,
    reltuples: f64,
    relpages: u64,
    #[serde(default)]
    relallvisible: u64,
    analyzed_us: i64,
    columns: Vec<ColumnFile>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect()
}

fn encode(v: &Value, ty: &SqlType) -> Option<String> {
    let mut b = Vec::new();
    crate::sql::expr::store(v, ty, &mut b).ok()?;
    Some(hex(&b))
}

/// Every table's statistics (invariants 1 to 3).
pub struct Store {
    map: RwLock<HashMap<u32, Arc<RelStats>>>,
    generation: AtomicU64,
    /// Serializes writers of the file.
    write: Mutex<()>,
    vfs: Arc<dyn Vfs>,
    path: PathBuf,
}

impl Store {
    /// Loads `global/pg_statistic.json` (absent: no statistics), keeping the tables `live`.
    pub fn open(vfs: Arc<dyn Vfs>, dir: &std::path::Path, live: &dyn Fn(u32) -> bool) -> Result<Store> {
        let path = dir.join(FILE);
        let mut map = HashMap::new();
        if let Some(data) = crate::storage::fsutil::read_if_exists(&*vfs, &path)? {
            // Statistics are hints (invariant 1): a file that does not read is reported and
            // ignored, never a reason not to open the database.
            let rels: Vec<RelFile> = serde_json::from_slice(&data).unwrap_or_else(|e| {
                eprintln!("WARNING:  ignoring planner statistics in \"{}\": {e}; run ANALYZE", path.display());
                Vec::new()
            });
            for r in rels.into_iter().filter(|r| live(r.oid)) {
                let columns = r
                    .columns
                    .into_iter()
                    .map(|c| {
                        let dec = |h: &str| unhex(h).map(|b| Value::decode(&c.ty, &b)).unwrap_or(Value::Null);
                        ColumnStats {
                            mcv: c.mcv.iter().map(|(h, f)| (dec(h), *f)).collect(),
                            histogram: c.histogram.iter().map(|h| dec(h)).collect(),
                            name: c.name,
                            ty: c.ty,
                            null_frac: c.null_frac,
                            avg_width: c.avg_width,
                            n_distinct: c.n_distinct,
                            correlation: c.correlation,
                        }
                    })
                    .collect();
                let st = RelStats {
                    reltuples: r.reltuples,
                    relpages: r.relpages,
                    relallvisible: r.relallvisible,
                    columns,
                    analyzed_us: r.analyzed_us,
                };
                map.insert(r.oid, Arc::new(st));
            }
        }
        Ok(Store { map: RwLock::new(map), generation: AtomicU64::new(0), write: Mutex::new(()), vfs, path })
    }

    pub fn get(&self, oid: u32) -> Option<Arc<RelStats>> {
        self.map.read().expect("statistics").get(&oid).cloned()
    }

    /// Bumped by every change (invariant 3).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Installs table `oid`'s statistics and writes the file, keeping only the tables `live`.
    pub fn put(&self, oid: u32, st: RelStats, live: &dyn Fn(u32) -> bool) -> Result<()> {
        let _w = self.write.lock().expect("statistics writer");
        {
            let mut m = self.map.write().expect("statistics");
            m.insert(oid, Arc::new(st));
            m.retain(|o, _| live(*o));
        }
        self.generation.fetch_add(1, Ordering::AcqRel);
        let mut rels: Vec<RelFile> = self
            .map
            .read()
            .expect("statistics")
            .iter()
            .map(|(oid, r)| RelFile {
                oid: *oid,
                reltuples: r.reltuples,
                relpages: r.relpages,
                relallvisible: r.relallvisible,
                analyzed_us: r.analyzed_us,
                columns: r
                    .columns
                    .iter()
                    .map(|c| ColumnFile {
                        name: c.name.clone(),
                        ty: c.ty,
                        null_frac: c.null_frac,
                        avg_width: c.avg_width,
                        n_distinct: c.n_distinct,
                        mcv: c.mcv.iter().filter_map(|(v, f)| Some((encode(v, &c.ty)?, *f))).collect(),
                        histogram: c.histogram.iter().filter_map(|v| encode(v, &c.ty)).collect(),
                        correlation: c.correlation,
                    })
                    .collect(),
            })
            .collect();
        rels.sort_by_key(|r| r.oid);
        let data = serde_json::to_vec(&rels).map_err(|e| PgError::internal(e.to_string()))?;
        crate::storage::fsutil::write_file_durably(&*self.vfs, &self.path, &data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TypeId;

    fn int(v: i32) -> Value {
        Value::Int4(v)
    }

    #[test]
    fn whole_table_counts_are_exact() {
        // 1000 rows: values 0..10 each 90 times, then 100 unique values, NULL in 0 rows.
        let mut s: Vec<Value> = (0..900).map(|i| int(i % 10)).collect();
        s.extend((1000..1100).map(int));
        let s: Vec<Sampled> = s.into_iter().map(Sampled::Value).collect();
        let c = gather("a", SqlType::new(TypeId::Int4), &s, 1000.0, 100, &|_| 4);
        assert_eq!(c.null_frac, 0.0);
        // 110 distinct of 1000 rows is over 10%: a fraction.
        assert!((c.distinct(1000.0) - 110.0).abs() < 1e-9, "{}", c.n_distinct);
        assert_eq!(c.mcv.len(), 10);
        assert!((c.mcv[0].1 - 0.09).abs() < 1e-9);
        // The histogram covers only the unique values.
        assert_eq!(c.histogram.first(), Some(&int(1000)));
        assert_eq!(c.histogram.last(), Some(&int(1099)));
    }

    #[test]
    fn a_sample_of_unique_values_says_unique() {
        let s: Vec<Value> = (0..300).map(int).chain(std::iter::repeat_n(Value::Null, 100)).collect();
        let s: Vec<Sampled> = s.into_iter().map(Sampled::Value).collect();
        let c = gather("a", SqlType::new(TypeId::Int4), &s, 1e6, 100, &|_| 4);
        assert!((c.null_frac - 0.25).abs() < 1e-9);
        assert!((c.n_distinct + 0.75).abs() < 1e-9, "{}", c.n_distinct);
        assert!(c.mcv.is_empty());
        assert!((c.correlation - 1.0).abs() < 1e-9);
    }

    #[test]
    fn wide_values_count_as_distinct_and_are_not_kept() {
        let t = SqlType::new(TypeId::Text);
        let mut s: Vec<Sampled> = (0..10).map(|i| Sampled::Value(Value::Text(format!("v{}", i % 2)))).collect();
        s.extend((0..10).map(|_| Sampled::Wide(5000)));
        let c = gather("a", t, &s, 20.0, 100, &|v| if let Value::Text(x) = v { x.len() } else { 0 });
        assert_eq!(c.null_frac, 0.0);
        assert!((c.avg_width - (20.0 + 50_000.0) / 20.0).abs() < 1e-9);
        // 2 kept values plus 10 wide ones.
        assert!((c.distinct(20.0) - 12.0).abs() < 1e-9, "{}", c.n_distinct);
        assert!(c.mcv.iter().all(|(v, _)| matches!(v, Value::Text(x) if x.len() == 2)));
        assert!(c.histogram.is_empty());
    }

    #[test]
    fn unique_values_are_not_most_common() {
        let s: Vec<Sampled> = (0..50).map(|i| Sampled::Value(int(i))).collect();
        let c = gather("a", SqlType::new(TypeId::Int4), &s, 50.0, 100, &|_| 4);
        assert!(c.mcv.is_empty());
        assert_eq!(c.histogram.len(), 50);
    }

    #[test]
    fn reservoir_keeps_capacity_in_physical_order() {
        let mut r = Reservoir::new(10, 7);
        for i in 0..1000u64 {
            r.offer(|| i);
        }
        assert_eq!(r.seen(), 1000);
        let rows = r.into_sorted();
        assert_eq!(rows.len(), 10);
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
    }
}

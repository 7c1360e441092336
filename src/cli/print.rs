//! Result printing in psql's shapes: aligned (default), unaligned (`-A`), tuples only (`-t`).

use crate::session::QueryResult;
use crate::stats::Snapshot;
use std::fmt::Write as _;

#[derive(Clone, Debug)]
pub struct PrintOptions {
    pub unaligned: bool,
    pub tuples_only: bool,
    pub field_separator: String,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions { unaligned: false, tuples_only: false, field_separator: "|".into() }
    }
}

fn is_numeric(ty: &str) -> bool {
    // psql right-aligns the numeric types and oid.
    matches!(ty, "smallint" | "integer" | "bigint" | "real" | "double precision" | "numeric" | "oid") || ty.starts_with("numeric(")
}

fn width(s: &str) -> usize {
    s.chars().count()
}

/// Formats one result as psql would print it.
pub fn format_result(r: &QueryResult, o: &PrintOptions) -> String {
    let mut out = String::new();
    if !r.returns_rows {
        if !o.tuples_only {
            out.push_str(&r.tag);
            out.push('\n');
        }
        return out;
    }
    if o.unaligned {
        if !o.tuples_only {
            let names: Vec<&str> = r.columns.iter().map(|c| c.0.as_str()).collect();
            let _ = writeln!(out, "{}", names.join(&o.field_separator));
        }
        for row in &r.rows {
            let vals: Vec<&str> = row.iter().map(|v| v.as_deref().unwrap_or("")).collect();
            let _ = writeln!(out, "{}", vals.join(&o.field_separator));
        }
        if !o.tuples_only {
            let _ = writeln!(out, "{}", footer(r.rows.len()));
        }
        return out;
    }
    let ncols = r.columns.len();
    let mut w: Vec<usize> = r.columns.iter().map(|c| width(&c.0)).collect();
    for row in &r.rows {
        for (i, v) in row.iter().enumerate() {
            w[i] = w[i].max(v.as_deref().map(width).unwrap_or(0));
        }
    }
    if !o.tuples_only {
        let mut h = String::new();
        let mut sep = String::new();
        for (i, (name, _)) in r.columns.iter().enumerate() {
            let pad = w[i] - width(name);
            let left = pad / 2;
            let right = pad - left;
            if i > 0 {
                h.push('|');
                sep.push('+');
            }
            let _ = write!(h, " {}{}{} ", " ".repeat(left), name, " ".repeat(right));
            sep.push_str(&"-".repeat(w[i] + 2));
        }
        let _ = writeln!(out, "{h}");
        let _ = writeln!(out, "{sep}");
    }
    for row in &r.rows {
        let mut line = String::new();
        for (i, v) in row.iter().enumerate() {
            let v = v.as_deref().unwrap_or("");
            let pad = w[i] - width(v);
            if i > 0 {
                line.push('|');
            }
            if is_numeric(&r.columns[i].1) {
                let _ = write!(line, " {}{}", " ".repeat(pad), v);
                if i + 1 < ncols {
                    line.push(' ');
                }
            } else if i + 1 == ncols {
                let _ = write!(line, " {v}");
            } else {
                let _ = write!(line, " {}{} ", v, " ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{line}");
    }
    if !o.tuples_only {
        let _ = writeln!(out, "{}", footer(r.rows.len()));
        out.push('\n');
    }
    out
}

fn footer(n: usize) -> String {
    if n == 1 {
        "(1 row)".into()
    } else {
        format!("({n} rows)")
    }
}

/// A table whose first `text_cols` columns are text and the rest right-aligned numbers.
fn table(title: &str, header: &[&str], rows: &[Vec<String>], text_cols: usize) -> String {
    let r = QueryResult {
        tag: String::new(),
        columns: header
            .iter()
            .enumerate()
            .map(|(i, h)| (h.to_string(), if i < text_cols { "text".into() } else { "numeric".into() }))
            .collect(),
        rows: rows.iter().map(|r| r.iter().map(|v| Some(v.clone())).collect()).collect(),
        returns_rows: true,
        notices: vec![],
        wrote_to_client: false,
        column_sources: vec![],
    };
    format!("{title}\n{}", format_result(&r, &PrintOptions::default()))
}

/// The `heapstore stats` tables.
pub fn format_stats(s: &Snapshot) -> String {
    let io_rows: Vec<Vec<String>> =
        s.io.iter()
            .map(|r| {
                vec![
                    r.backend_type.clone(),
                    r.object.clone(),
                    r.context.clone(),
                    r.reads.to_string(),
                    format!("{:.3}", r.read_time_ms),
                    r.writes.to_string(),
                    format!("{:.3}", r.write_time_ms),
                    r.extends.to_string(),
                    format!("{:.3}", r.extend_time_ms),
                    r.hits.to_string(),
                    r.evictions.to_string(),
                    r.reuses.to_string(),
                    r.fsyncs.to_string(),
                    format!("{:.3}", r.fsync_time_ms),
                ]
            })
            .collect();
    let mut out = table(
        "I/O (as pg_stat_io; times in ms)",
        &[
            "backend_type",
            "object",
            "context",
            "reads",
            "read_time",
            "writes",
            "write_time",
            "extends",
            "extend_time",
            "hits",
            "evictions",
            "reuses",
            "fsyncs",
            "fsync_time",
        ],
        &io_rows,
        3,
    );
    let lw: Vec<Vec<String>> = s
        .lwlocks
        .iter()
        .map(|r| {
            vec![
                r.class.clone(),
                r.acquire_shared.to_string(),
                r.acquire_exclusive.to_string(),
                r.waits.to_string(),
                format!("{:.3}", r.wait_time_ms),
            ]
        })
        .collect();
    out.push_str(&table(
        "LWLocks (waits are timed; uncontended acquires are only counted)",
        &["lock_class", "acquire_shared", "acquire_exclusive", "waits", "wait_time_ms"],
        &lw,
        1,
    ));
    let _ = writeln!(
        out,
        "Background writer (as pg_stat_bgwriter): buffers_clean {}, maxwritten_clean {}, buffers_alloc {}; buffers written by sessions {}, by the checkpointer {}",
        s.bgwriter.buffers_clean,
        s.bgwriter.maxwritten_clean,
        s.bgwriter.buffers_alloc,
        s.writes_by("client backend"),
        s.writes_by("checkpointer")
    );
    let w = &s.wal;
    let _ = writeln!(
        out,
        "WAL (as pg_stat_wal): records {}, bytes {}, writes {}, syncs {} ({:.3} ms), write time {:.3} ms; flushes {}, served by another's sync (group commit) {}, waits for WAL buffers {}",
        w.wal_records, w.wal_bytes, w.wal_write, w.wal_sync, w.wal_sync_time_ms, w.wal_write_time_ms, w.flush_calls, w.group_commit_hits, w.wal_buffers_full
    );
    let c = &s.checkpointer;
    let _ = writeln!(
        out,
        "Checkpointer (as pg_stat_checkpointer): num_timed {}, num_requested {}, buffers_written {}, write_time {} ms, sync_time {} ms",
        c.num_timed, c.num_requested, c.buffers_written, c.write_time_ms, c.sync_time_ms
    );
    let lw: Vec<String> = s.lock_waits.iter().map(|r| format!("{} {} ({:.1} ms)", r.mode, r.waits, r.wait_time_ms)).collect();
    let _ = writeln!(out, "Heavyweight lock waits by mode: {}", if lw.is_empty() { "none".to_string() } else { lw.join(", ") });
    let searches: u64 = s.victim_hist.iter().sum();
    let _ = writeln!(
        out,
        "Victim buffer searches: {searches}; buffers examined per search: max {}, p99.9 <= {}\n",
        s.victim_examined_max,
        s.victim_examined_quantile(0.999)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_like_psql() {
        let r = QueryResult {
            tag: "SELECT 2".into(),
            columns: vec![("id".into(), "integer".into()), ("name".into(), "text".into())],
            rows: vec![vec![Some("1".into()), Some("hello".into())], vec![Some("22".into()), None]],
            returns_rows: true,
            notices: vec![],
            wrote_to_client: false,
            column_sources: vec![],
        };
        let s = format_result(&r, &PrintOptions::default());
        assert_eq!(s, " id | name  \n----+-------\n  1 | hello\n 22 | \n(2 rows)\n\n");
        let u = format_result(&r, &PrintOptions { unaligned: true, tuples_only: true, ..Default::default() });
        assert_eq!(u, "1|hello\n22|\n");
    }
}

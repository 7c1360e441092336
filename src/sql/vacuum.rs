//! `VACUUM [table]` and `VACUUM VERBOSE` (all tables, with INFO counts): removes the versions
//! no snapshot can see from a table's indexes, heap and TOAST relation, records the freed
//! space in the FSM, and marks the pages whose every tuple all snapshots see all-visible
//! (`access::heap::vacuum`). Without a table name every
//! table is vacuumed. Like PostgreSQL, it refuses to run inside a transaction block.
//!
//! Invariants:
//! 1. The table is locked ShareUpdateExclusive (one VACUUM per table; readers and writers run).
//! 2. The horizon is taken once, before the heap is read; index entries go before line
//!    pointers (heap vacuum invariant 2).

use crate::access::btree::BTree;
use crate::access::heap::dml::HeapRel;
use crate::access::heap::vacuum::{self, VacuumStats};
use crate::catalog::Table;
use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use std::collections::HashSet;

/// VACUUM of one table; returns its figures.
pub fn vacuum_table(s: &mut Session, table: &Table) -> Result<VacuumStats> {
    s.lock_table(table, LockMode::ShareUpdateExclusive)?;
    vacuum_locked(s, table)
}

/// Autovacuum's VACUUM of one table in a transaction of its own; None when the table cannot
/// be locked at once (`autovacuum` invariant 2).
pub fn autovacuum_table(s: &mut Session, table: &Table) -> Result<Option<VacuumStats>> {
    s.begin_implicit();
    if !s.try_lock_table(table, LockMode::ShareUpdateExclusive) {
        s.rollback();
        return Ok(None);
    }
    // The table may have been dropped or replaced (TRUNCATE) since the catalog was read.
    let r = match s.lookup_table(&table.key()) {
        Some(now) if now.oid == table.oid => vacuum_locked(s, &now).map(Some),
        _ => Ok(None),
    };
    match &r {
        Ok(_) => s.commit()?,
        Err(_) => s.rollback(),
    }
    r
}

/// VACUUM of a table locked ShareUpdateExclusive.
fn vacuum_locked(s: &mut Session, table: &Table) -> Result<VacuumStats> {
    let table = s.table(&table.key())?;
    let sh = s.shared.clone();
    let horizon = sh.txns.vacuum_horizon();
    let mut st = VacuumStats::default();
    let logged = table.persistence == crate::catalog::Persistence::Permanent;
    let wal = logged.then_some(&*sh.wal);
    let fpw = sh.settings.bool("full_page_writes");
    let heap = HeapRel { pool: &sh.pool, pins: &s.pins, rel: table.relfile, wal, full_page_writes: fpw, touched: None };
    let live_before = sh.table_stats.get(table.oid).n_live_tup.load(std::sync::atomic::Ordering::Relaxed);
    let dead = vacuum::prune_all(&heap, &sh.txns, horizon, &mut st)?;
    if st.pages_skipped > 0 {
        // The pages skipped as all-visible were not counted: estimate their rows at the
        // density the table had (PostgreSQL's vac_estimate_reltuples), from ANALYZE's figures
        // or the live-row counter.
        let total = st.pages_scanned + st.pages_skipped;
        let density = match sh.planner_stats.get(table.oid) {
            Some(ps) if ps.relpages > 0 => ps.reltuples / ps.relpages as f64,
            _ if live_before > 0 => live_before as f64 / total as f64,
            _ => st.tuples_remaining as f64 / st.pages_scanned.max(1) as f64,
        };
        st.tuples_remaining += (density * st.pages_skipped as f64).round() as u64;
    }
    if !dead.is_empty() {
        let set: HashSet<(u32, u16)> = dead.iter().copied().collect();
        for ix in &table.indexes {
            let t = BTree::new(&sh.pool, &s.pins, wal, ix.relfile, ix.unique).with_name(ix.name.clone()).with_full_page_writes(fpw);
            t.bulk_delete(&mut |tid| set.contains(&tid))?;
        }
    }
    vacuum::set_unused(&heap, &sh.txns, horizon, &dead, &mut st)?;
    if let Some(trel) = table.toast_relfile {
        // The TOAST relation, with the same horizon: chunks die with their row version
        // (`heap::toast` invariant 1). No index names a chunk, so its line pointers are made
        // unused at once.
        let toast = HeapRel { rel: trel, ..heap };
        let mut tst = VacuumStats::default();
        let dead = vacuum::prune_all(&toast, &sh.txns, horizon, &mut tst)?;
        vacuum::set_unused(&toast, &sh.txns, horizon, &dead, &mut tst)?;
        st.toast_chunks_removed = tst.tuples_removed;
        st.toast_pages = tst.pages_scanned;
    }
    let auto = crate::stats::backend_type() == crate::stats::BackendType::AutovacuumWorker;
    sh.table_stats.vacuumed(table.oid, st.tuples_remaining, auto, crate::stats::tables::now_us());
    Ok(st)
}

/// The VACUUM statement.
/// `verbose` / `analyze`: the words the statement front end took out of the text (sqlparser
/// reads VACUUM in Redshift's grammar). With ANALYZE each table is analyzed after it is
/// vacuumed.
pub fn run(s: &mut Session, v: sqlparser::ast::VacuumStatement, verbose: bool, analyze: bool) -> Result<QueryResult> {
    if s.in_transaction_block() {
        return Err(PgError::new(sqlstate::ACTIVE_SQL_TRANSACTION, "VACUUM cannot run inside a transaction block"));
    }
    if v.full || v.sort_only || v.delete_only || v.reindex || v.recluster || v.threshold.is_some() || v.boost {
        return Err(PgError::feature("only plain VACUUM [table] is supported"));
    }
    let mut r = super::tag("VACUUM");
    let tables: Vec<std::sync::Arc<Table>> = match &v.table_name {
        Some(n) => {
            let t = s.table_any(&crate::catalog::relation_key(n)?)?;
            match &t.kind {
                crate::catalog::RelKind::Table => vec![t],
                // A sequence's one page holds one frozen tuple: nothing to do.
                crate::catalog::RelKind::Sequence(_) => Vec::new(),
                crate::catalog::RelKind::View(_) => {
                    r.notices.push(format!("WARNING:  skipping \"{}\" --- cannot vacuum non-tables or special system tables", t.name));
                    Vec::new()
                }
            }
        }
        _ => s.visible_tables().into_iter().filter(|t| t.is_table()).collect(),
    };
    for t in tables {
        let st = vacuum_table(s, &t)?;
        if analyze {
            analyze_table(s, &t, &[])?;
        }
        if verbose {
            r.notices.push(format!("INFO:  vacuuming \"public.{}\"", t.name));
            r.notices.push(format!(
                "INFO:  finished vacuuming \"public.{}\": index scans: {}\npages: {} scanned, {} skipped as all-visible, {} pruned, {} all-visible\ntuples: {} removed, {} remain",
                t.name,
                usize::from(st.tuples_removed > 0) * t.indexes.len().min(1),
                st.pages_scanned,
                st.pages_skipped,
                st.pages_pruned,
                st.pages_all_visible,
                st.tuples_removed,
                st.tuples_remaining
            ));
            if t.toast_relfile.is_some() {
                r.notices.push(format!(
                    "INFO:  finished vacuuming the TOAST relation of \"public.{}\": pages: {} scanned\nchunks: {} removed",
                    t.name, st.toast_pages, st.toast_chunks_removed
                ));
            }
        }
    }
    Ok(r)
}

/// `ANALYZE [VERBOSE] [table [(columns)]]` (one table of `ANALYZE a, b`): gathers the planner's statistics
/// (`sql::statistics`) of one table, or of every table. Unlike VACUUM it may run in a
/// transaction block; its sample is read with a snapshot of this moment.
pub fn analyze(
    s: &mut Session,
    table: Option<&sqlparser::ast::ObjectName>,
    columns: &[sqlparser::ast::Ident],
    verbose: bool,
) -> Result<QueryResult> {
    let mut r = super::tag("ANALYZE");
    let tables: Vec<std::sync::Arc<Table>> = match table {
        Some(n) => {
            let t = s.table_any(&crate::catalog::relation_key(n)?)?;
            match &t.kind {
                crate::catalog::RelKind::Table => vec![t],
                _ => {
                    r.notices.push(format!("WARNING:  skipping \"{}\" --- cannot analyze non-tables or special system tables", t.name));
                    Vec::new()
                }
            }
        }
        None => s.visible_tables().into_iter().filter(|t| t.is_table()).collect(),
    };
    let mut cols = Vec::new();
    for c in columns {
        let name = crate::catalog::fold_ident(c);
        let Some(t) = tables.first() else { break }; // a view: skipped with its warning
        match t.columns.iter().position(|x| x.name == name) {
            Some(i) if !cols.contains(&i) => cols.push(i),
            Some(_) => return Err(PgError::new("42701", format!("column \"{name}\" of relation \"{}\" appears more than once", t.name))),
            None => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{name}\" of relation \"{}\" does not exist", t.name),
                ))
            }
        }
    }
    for t in tables {
        let (sampled, live) = analyze_table(s, &t, &cols)?;
        if verbose {
            r.notices.push(format!("INFO:  analyzing \"public.{}\"", t.name));
            let st = s.shared.planner_stats.get(t.oid);
            r.notices.push(format!(
                "INFO:  \"{}\": scanned {} of {} pages, containing {} live rows; {} rows in sample, {} estimated total rows",
                t.name,
                st.as_ref().map_or(0, |x| x.relpages),
                st.as_ref().map_or(0, |x| x.relpages),
                live,
                sampled,
                live
            ));
        }
    }
    Ok(r)
}

/// ANALYZE of one table: every live row is offered to a reservoir of `300 ×
/// default_statistics_target` rows; the statistics of `cols` (every column when empty) are
/// computed from it and stored. Returns (rows in the sample, live rows).
pub fn analyze_table(s: &mut Session, table: &Table, cols: &[usize]) -> Result<(usize, u64)> {
    s.lock_table(table, LockMode::ShareUpdateExclusive)?;
    analyze_locked(s, table, cols)
}

/// Autovacuum's ANALYZE of one table in a transaction of its own; nothing when the table
/// cannot be locked at once or is gone (`autovacuum` invariant 2).
pub fn autoanalyze_table(s: &mut Session, table: &Table) -> Result<()> {
    s.begin_implicit();
    if !s.try_lock_table(table, LockMode::ShareUpdateExclusive) {
        s.rollback();
        return Ok(());
    }
    let r = match s.lookup_table(&table.key()) {
        Some(now) if now.oid == table.oid => analyze_locked(s, &now, &[]).map(|_| ()),
        _ => Ok(()),
    };
    match &r {
        Ok(_) => s.commit()?,
        Err(_) => s.rollback(),
    }
    r
}

/// ANALYZE of a table locked ShareUpdateExclusive.
fn analyze_locked(s: &mut Session, table: &Table, cols: &[usize]) -> Result<(usize, u64)> {
    let table = s.table(&table.key())?;
    let sh = s.shared.clone();
    let target = sh.settings.int("default_statistics_target").clamp(1, 10_000) as usize;
    let all: Vec<usize> = if cols.is_empty() { (0..table.columns.len()).collect() } else { cols.to_vec() };
    let mut needed = vec![false; table.columns.len()];
    for &c in &all {
        needed[c] = true;
    }
    let snap = s.latest_snapshot();
    let plan = super::dml::Plan::new(table.clone(), None, needed);
    use crate::sql::statistics::{Sampled, WIDTH_THRESHOLD};
    let width = |ty: &crate::types::SqlType, v: &crate::types::Value| {
        let mut b = Vec::new();
        super::expr::store(v, ty, &mut b).map_or(0, |_| b.len())
    };
    let mut res = crate::sql::statistics::Reservoir::new(300 * target, table.oid as u64 ^ crate::stats::tables::now_us() as u64);
    plan.for_each(s, &snap, &[], |_, row| {
        // A value too wide for the statistics is kept as its width only.
        res.offer(|| {
            all.iter()
                .map(|&c| match width(&table.columns[c].ty, &row[c]) {
                    w if w > WIDTH_THRESHOLD => Sampled::Wide(w),
                    _ => Sampled::Value(row[c].clone()),
                })
                .collect::<Vec<_>>()
        });
        Ok(crate::access::heap::Flow::Continue)
    })?;
    let live = res.seen();
    let rows = res.into_sorted();
    let relpages = sh.smgr.nblocks(table.relfile, crate::storage::ForkNumber::Main)? as u64;
    let mut columns: Vec<crate::sql::statistics::ColumnStats> = Vec::new();
    for (k, &c) in all.iter().enumerate() {
        let col = &table.columns[c];
        let sample: Vec<Sampled> = rows.iter().map(|r| r[k].clone()).collect();
        columns.push(crate::sql::statistics::gather(&col.name, col.ty, &sample, live as f64, target, &|v| width(&col.ty, v)));
    }
    if !cols.is_empty() {
        // Columns not named keep what an earlier ANALYZE found.
        if let Some(old) = sh.planner_stats.get(table.oid) {
            for oc in &old.columns {
                if !columns.iter().any(|c| c.name == oc.name) && table.columns.iter().any(|c| c.name == oc.name && c.ty == oc.ty) {
                    columns.push(oc.clone());
                }
            }
        }
    }
    let relallvisible = crate::access::vm::count(&sh.pool, &s.pins, table.relfile, relpages as u32)?;
    let st = crate::sql::statistics::RelStats {
        reltuples: live as f64,
        relpages,
        relallvisible,
        columns,
        analyzed_us: crate::stats::tables::now_us(),
    };
    let oids: HashSet<u32> = sh.catalog.tables().iter().map(|t| t.oid).chain(std::iter::once(table.oid)).collect();
    sh.planner_stats.put(table.oid, st, &|o| oids.contains(&o))?;
    sh.table_stats.analyzed(
        table.oid,
        live,
        crate::stats::backend_type() == crate::stats::BackendType::AutovacuumWorker,
        crate::stats::tables::now_us(),
    );
    Ok((rows.len(), live))
}

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
    let r = match s.lookup_table(&table.name) {
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
    let table = s.table(&table.name)?;
    let sh = s.shared.clone();
    let horizon = sh.txns.vacuum_horizon();
    let mut st = VacuumStats::default();
    let logged = table.persistence == crate::catalog::Persistence::Permanent;
    let wal = logged.then_some(&*sh.wal);
    let fpw = sh.settings.bool("full_page_writes");
    let heap = HeapRel { pool: &sh.pool, pins: &s.pins, rel: table.relfile, wal, full_page_writes: fpw, touched: None };
    let dead = vacuum::prune_all(&heap, &sh.txns, horizon, &mut st)?;
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
/// reads VACUUM in Redshift's grammar). ANALYZE gathers nothing: heapstore has no planner
/// statistics yet, so no answer depends on them.
pub fn run(s: &mut Session, v: sqlparser::ast::VacuumStatement, verbose: bool, _analyze: bool) -> Result<QueryResult> {
    if s.in_transaction_block() {
        return Err(PgError::new(sqlstate::ACTIVE_SQL_TRANSACTION, "VACUUM cannot run inside a transaction block"));
    }
    if v.full || v.sort_only || v.delete_only || v.reindex || v.recluster || v.threshold.is_some() || v.boost {
        return Err(PgError::feature("only plain VACUUM [table] is supported"));
    }
    let mut r = super::tag("VACUUM");
    let tables: Vec<std::sync::Arc<Table>> = match &v.table_name {
        Some(n) => {
            let t = s.table_any(&super::ddl_table_name(n)?)?;
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
        _ => s.shared.catalog.tables().into_iter().filter(|t| t.is_table()).collect(),
    };
    for t in tables {
        let st = vacuum_table(s, &t)?;
        if verbose {
            r.notices.push(format!("INFO:  vacuuming \"public.{}\"", t.name));
            r.notices.push(format!(
                "INFO:  finished vacuuming \"public.{}\": index scans: {}\npages: {} scanned, {} pruned, {} all-visible\ntuples: {} removed, {} remain",
                t.name,
                usize::from(st.tuples_removed > 0) * t.indexes.len().min(1),
                st.pages_scanned,
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

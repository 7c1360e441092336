//! The checks after recovery: the database against the model, and its own consistency.

use super::model::{Model, Row, TableModel};
use crate::db::Database;
use crate::sql::CopyIo;
use crate::storage::{page, ForkNumber, RelFileNumber};
use std::collections::BTreeMap;

/// What the database holds, read back the way a user would (`COPY ... TO STDOUT`), with the
/// catalog's view of tables and indexes.
pub fn read_back(db: &Database) -> Result<Model, String> {
    let mut s = db.session();
    let mut m = Model::default();
    for t in db.shared().catalog.tables() {
        if !t.is_table() {
            continue; // the sequence is checked by `Torture::verify`
        }
        let mut out = Vec::new();
        s.execute_with_io(&format!("COPY {} TO STDOUT", t.name), &mut CopyIo { stdin: None, stdout: Some(&mut out), rows: None })
            .map_err(|e| format!("reading table {}: {e}", t.name))?;
        let mut rows = BTreeMap::new();
        for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let line = std::str::from_utf8(line).map_err(|_| format!("table {}: output is not UTF-8", t.name))?;
            let f: Vec<&str> = line.split('\t').collect();
            let [id, v, pad] = f[..] else { return Err(format!("table {}: unexpected row {line:?}", t.name)) };
            let id: i64 = id.parse().map_err(|_| format!("table {}: bad id in {line:?}", t.name))?;
            let row = Row { v: v.parse().map_err(|_| format!("table {}: bad v in {line:?}", t.name))?, pad: pad.to_string() };
            if rows.insert(id, row).is_some() {
                return Err(format!("table {}: row {id} is present twice", t.name));
            }
        }
        // Each index read alone (an index-only scan: the visibility map decides which rows
        // come from the index without a heap visit) gives the same values as the heap.
        for ix in t.indexes.iter().filter(|i| i.columns.len() == 1 && !i.has_exprs()) {
            let col = &t.columns[ix.columns[0]];
            let mut want: Vec<i64> = match col.name.as_str() {
                "id" => rows.keys().copied().collect(),
                "v" => rows.values().map(|r| r.v).collect(),
                _ => continue,
            };
            want.sort_unstable();
            let mut out = Vec::new();
            s.execute("SET enable_seqscan = off").map_err(|e| e.to_string())?;
            let q = format!("COPY (SELECT {0} FROM {1} WHERE {0} >= -9223372036854775807) TO STDOUT", col.name, t.name);
            let r = s.execute_with_io(&q, &mut CopyIo { stdin: None, stdout: Some(&mut out), rows: None });
            s.execute("SET enable_seqscan = on").map_err(|e| e.to_string())?;
            r.map_err(|e| format!("reading index {}: {e}", ix.name))?;
            let mut got: Vec<i64> = Vec::with_capacity(want.len());
            for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                got.push(
                    std::str::from_utf8(line).ok().and_then(|l| l.parse().ok()).ok_or_else(|| format!("index {}: bad value", ix.name))?,
                );
            }
            got.sort_unstable();
            if got != want {
                return Err(format!(
                    "table {}: an index-only scan of {} gives {} values, the heap {}",
                    t.name,
                    ix.name,
                    got.len(),
                    want.len()
                ));
            }
        }
        let pk = t.indexes.iter().any(|i| i.primary);
        let indexes = t.indexes.iter().filter(|i| !i.primary).map(|i| i.name.clone()).collect();
        m.tables.insert(t.name.clone(), TableModel { pk, indexes, rows });
    }
    Ok(m)
}

/// The first difference between what the model expects and what the database holds.
pub fn diff(want: &Model, got: &Model) -> Option<String> {
    let wn: Vec<&String> = want.tables.keys().collect();
    let gn: Vec<&String> = got.tables.keys().collect();
    if wn != gn {
        return Some(format!("tables: expected {wn:?}, found {gn:?}"));
    }
    for (name, w) in &want.tables {
        let g = &got.tables[name];
        if w.pk != g.pk || w.indexes != g.indexes {
            return Some(format!("table {name}: expected pk={} indexes {:?}, found pk={} indexes {:?}", w.pk, w.indexes, g.pk, g.indexes));
        }
        for (id, r) in &w.rows {
            match g.rows.get(id) {
                None => return Some(format!("table {name}: acknowledged row {id} is missing")),
                Some(x) if x != r => {
                    return Some(format!(
                        "table {name}: row {id} has v={} pad of {} bytes, expected v={} pad of {} bytes",
                        x.v,
                        x.pad.len(),
                        r.v,
                        r.pad.len()
                    ))
                }
                Some(_) => {}
            }
        }
        if let Some(id) = g.rows.keys().find(|id| !w.rows.contains_key(id)) {
            return Some(format!("table {name}: row {id} is visible but was never committed (or was deleted)"));
        }
    }
    None
}

/// What [`consistency`] counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Consistency {
    /// Map entries that promise a page more than it has now: the map is not WAL-logged (as in
    /// PostgreSQL), so a crash can leave one behind when a checkpoint's REDO pointer fell
    /// between a heap change and its map update; recovery lowers the entries of every page it
    /// replays, and a taker checks a page's real room before using it, so a stale entry costs
    /// a retry, never a wrong answer.
    pub stale_fsm_entries: u64,
    /// Heap pages the visibility map marks all-visible, each found marked and holding only
    /// tuples visible to all.
    pub all_visible_pages: u64,
}

/// The database's own consistency: every index agrees with its heap, every page on disk
/// verifies (checksum, header), the free space map promises no page more room than an empty
/// page has, the visibility map marks only pages whose every tuple is visible to all, and the
/// catalog and the relation files agree.
pub fn consistency(db: &Database) -> Result<Consistency, String> {
    let mut stale_fsm = 0u64;
    let mut all_visible = 0u64;
    let sh = db.shared().clone();
    let mut s = db.session();
    let mut referenced: Vec<RelFileNumber> = Vec::new();
    for t in sh.catalog.tables() {
        if !t.is_table() {
            // A sequence: its one page (verified below); a view: no files.
            if t.sequence().is_some() {
                referenced.push(t.relfile);
            }
            continue;
        }
        match crate::sql::index::check_table(&mut s, &t.name) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(format!("table {}: index and heap disagree: {e}", t.name)),
            Err(e) => return Err(format!("table {}: index check failed: {e}", t.name)),
        }
        referenced.push(t.relfile);
        referenced.extend(t.toast_relfile);
        referenced.extend(t.indexes.iter().map(|i| i.relfile));
        let pins = sh.pool.new_pins();
        // A page the visibility map marks all-visible has the mark itself, and every tuple
        // on it is visible to every snapshot (`access::vm` invariant 1).
        let horizon = sh.txns.vacuum_horizon();
        for rel in std::iter::once(t.relfile).chain(t.toast_relfile) {
            let n = sh.smgr.nblocks(rel, ForkNumber::Main).map_err(|e| e.to_string())?;
            let mut vm = crate::access::vm::Reader::new(&sh.pool, &pins, rel);
            for b in 0..n {
                if !vm.is_set(b).map_err(|e| e.to_string())? {
                    continue;
                }
                let buf = sh.pool.read_buffer(&pins, rel, ForkNumber::Main, b, None).map_err(|e| e.to_string())?;
                let pg = buf.lock_shared();
                let name = || sh.smgr.display_name(rel, ForkNumber::Main);
                if page::flags(&pg) & page::PD_ALL_VISIBLE == 0 {
                    return Err(format!("the visibility map marks block {b} of {} all-visible, but the page is not marked", name()));
                }
                if !crate::access::heap::vacuum::page_all_visible(&sh.txns, &pg, horizon, &[]) {
                    return Err(format!("block {b} of {} is marked all-visible, but a tuple on it is not visible to all", name()));
                }
                all_visible += 1;
            }
        }
        // The FSM never promises more than a heap page has.
        for rel in std::iter::once(t.relfile).chain(t.toast_relfile) {
            let n = sh.smgr.nblocks(rel, ForkNumber::Main).map_err(|e| e.to_string())?;
            for b in 0..n {
                let promised = crate::access::fsm::max_category(&sh.pool, &pins, rel, b).map_err(|e| e.to_string())?;
                if promised == 0 {
                    continue;
                }
                let buf = sh.pool.read_buffer(&pins, rel, ForkNumber::Main, b, None).map_err(|e| e.to_string())?;
                let pg = buf.lock_shared();
                let free = if page::is_new(&pg) { sh.block_size - page::PAGE_HEADER_SIZE } else { page::free_space(&pg) };
                let has = crate::access::fsm::category(free, sh.block_size);
                let most = crate::access::fsm::category(sh.block_size - page::PAGE_HEADER_SIZE, sh.block_size);
                if promised > most {
                    return Err(format!(
                        "free space map promises category {promised} for block {b} of {}, more than an empty page holds ({most})",
                        sh.smgr.display_name(rel, ForkNumber::Main)
                    ));
                }
                if promised > has {
                    stale_fsm += 1;
                }
            }
        }
    }
    drop(s);
    // Every relation file the catalog references exists; no other is left.
    referenced.sort();
    for &rel in &referenced {
        if !sh.smgr.exists(rel, ForkNumber::Main) {
            return Err(format!("the catalog references {}, which does not exist", sh.smgr.display_name(rel, ForkNumber::Main)));
        }
    }
    let on_disk = sh.smgr.list_relations().map_err(|e| e.to_string())?;
    if let Some(orphan) = on_disk.iter().find(|r| referenced.binary_search(r).is_err()) {
        return Err(format!("{} exists but no table references it", sh.smgr.display_name(*orphan, ForkNumber::Main)));
    }
    // Every page on disk verifies. Written out first: what recovery repaired may still be
    // only in the pool.
    let pins = sh.pool.new_pins();
    sh.pool.flush_all(&pins, None).map_err(|e| e.to_string())?;
    for &rel in &referenced {
        let n = sh.smgr.nblocks(rel, ForkNumber::Main).map_err(|e| e.to_string())?;
        for b in 0..n {
            let raw = sh.smgr.read_raw(rel, ForkNumber::Main, b).map_err(|e| e.to_string())?;
            page::verify(&raw, b, &sh.smgr.display_name(rel, ForkNumber::Main)).map_err(|e| e.to_string())?;
        }
    }
    Ok(Consistency { stale_fsm_entries: stale_fsm, all_visible_pages: all_visible })
}

/// `nextval` of sequence `name` in a new session (autocommit).
pub fn next_value(db: &Database, name: &str) -> Result<i64, String> {
    let mut s = db.session();
    let r = s.execute(&format!("SELECT nextval('{name}')")).map_err(|e| format!("nextval of {name} after recovery: {e}"))?;
    r.last()
        .and_then(|q| q.rows.first())
        .and_then(|row| row[0].as_deref())
        .and_then(|x| x.parse::<i64>().ok())
        .ok_or_else(|| format!("nextval of {name} gave no value"))
}

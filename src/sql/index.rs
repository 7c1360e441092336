//! Indexes as the row statements use them: keys from rows (`btree::keycode`), maintenance on
//! INSERT / UPDATE / COPY with unique checks against heap visibility, index scans for the
//! planner, and the DDL — `CREATE [UNIQUE] INDEX ... (column | (expression), ...) [WHERE
//! predicate]`, `PRIMARY KEY`,
//! `DROP INDEX`.
//!
//! An index is part of its table's catalog entry (`catalog::Index`), so creating or dropping
//! one replaces the table's definition in the transaction's pending catalog change, and it
//! commits, aborts and is recovered with the same transactional DDL as the table.
//!
//! Invariants:
//! 1. CREATE INDEX holds ShareLock on the table (no writer runs while it reads the heap) and
//!    indexes every version whose creator did not abort — also deleted ones, since older
//!    snapshots may still see them; the unique check of the build counts only live versions.
//! 2. A unique check is made under the B-tree leaf's lock (btree invariant 6). For each equal
//!    key it looks at the heap version: creator aborted, or deleter committed (or this
//!    transaction) → no conflict; creator or deleter still running → wait for it (with no
//!    index lock held) and check again; otherwise → 23505.
//! 3. Keys with a NULL column are never checked for uniqueness (NULLs are distinct).
//! 4. An index scan returns TIDs only; the caller fetches each under the heap page's lock and
//!    checks visibility with the statement's snapshot and the full WHERE clause.
//! 5. An index entry names a HOT chain's root (`access::heap::prune` invariant 1) under the key
//!    of the chain's newest version. When a build meets a chain whose versions differ in the
//!    index's columns (HOT-updated before the index existed), the index gets `check_xmin` (the
//!    building transaction's xid, PostgreSQL's indcheckxmin): snapshots that might still see an
//!    older version scan the heap instead, until every such snapshot is gone.
//! 6. A partial index (`CREATE INDEX ... WHERE p`) has an entry for a chain only when `p` is
//!    true of its newest version (for invariant 5, a version outside the index differs from
//!    one inside it); the columns `p` reads count as indexed for HOT updates, so a chain's
//!    HOT versions agree on it. A scan uses the index only when its conditions imply `p`
//!    (`implies`), and a unique partial index constrains only the rows it holds.
//! 7. An expression key (`catalog::EXPR_KEY`) holds the value its immutable expression
//!    (`check_key_expr`, `immutable_func`) has for the row's stored columns, computed as a
//!    stored definition is read (`types::tz::stored_definition`), so every session and every
//!    write path computes the same key for the same row; the columns it reads count as
//!    indexed for HOT updates. A scan reads it for a condition comparing the same bound
//!    expression (`dml::Plan::index_access`) and checks its full WHERE clause on each row
//!    (invariant 4), so the key expression only narrows what is fetched.

use super::expr::{self, Scalar};
use crate::access::btree::{keycode, BTree};
use crate::access::heap::dml::{xid_state, HeapRel, Tid, XidState};
use crate::access::heap::tuple;
use crate::catalog::{fold_ident, Index, Table};
use crate::error::{sqlstate, PgError, Result};
pub(crate) use crate::exec::rows::{index_wal, insert_entries, key_of, key_text, stored_of};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use crate::storage::{page, ForkNumber};
use crate::txn::INVALID_XID;
use crate::types::{SqlType, TypeId, Value};
use std::ops::Bound;
use std::sync::Arc;

/// The B-tree handle of `ix`, WAL-logged as its table is.
fn tree<'a>(s: &'a Session, ix: &Index, wal: bool) -> BTree<'a> {
    let sh = &s.shared;
    BTree::new(&sh.pool, &s.pins, wal.then_some(&*sh.wal), ix.relfile, ix.unique)
        .with_name(ix.name.clone())
        .with_full_page_writes(sh.settings.bool("full_page_writes"))
}

/// The stored form of a search value for a key column of type `ty`, when the value converts
/// exactly (same type family); None when it does not (the caller scans the heap instead).
fn search_value(v: &Value, ty: &SqlType) -> Option<Vec<u8>> {
    let vt = expr::value_type(v)?;
    let int = |t: TypeId| matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Int8);
    let text = |t: TypeId| matches!(t, TypeId::Text | TypeId::Varchar | TypeId::Bpchar);
    let ok = (int(vt.id) && int(ty.id)) || (text(vt.id) && text(ty.id)) || vt.id == ty.id;
    if !ok {
        return None;
    }
    // Stored without the column's type modifier: a bound must keep its exact value (2.25
    // against a numeric(5,1) column is not 2.3, '10:00:00.6' against a timestamp(0) column
    // not '10:00:01'); no key encoding depends on the modifier.
    let mut out = Vec::new();
    expr::store(v, &SqlType { typmod: -1, ..*ty }, &mut out).ok()?;
    Some(out)
}

/// Appends the encoded key column for value `v` (not NULL) in the column's order (`option`:
/// its `indoption` bits). None: no exact conversion.
fn push_key(out: &mut Vec<u8>, ty: &SqlType, v: &Value, option: u8) -> Option<()> {
    let st = search_value(v, ty)?;
    keycode::encode_key_opts(out, &[(*ty, Some(&st))], &[option]);
    Some(())
}

/// Tag bytes are at most `TAG_NULL`: a byte above it bounds every key with a given prefix.
const PREFIX_END: u8 = keycode::TAG_NULL + 1;

/// TIDs from an index scan of `ix` for equality values `eq` on its leading columns and an
/// optional range on the next. `Ok(None)`: a value does not convert exactly to the key type,
/// so the caller must scan the heap.
pub(crate) fn scan_tids(
    s: &Session,
    table: &Table,
    ix: &Index,
    eq: &[Scalar],
    bounds: RangeBounds<'_>,
    params: &[Option<String>],
) -> Result<Option<Vec<Tid>>> {
    let Some(b) = scan_bounds(table, ix, eq, bounds, params)? else { return Ok(None) };
    let t = tree(s, ix, false);
    let mut out = Vec::new();
    match b {
        ScanBounds::Empty => {}
        ScanBounds::Equal(key) => t.lookup_eq_into(&key, &mut out)?,
        ScanBounds::Range(lo, hi) => {
            for e in t.scan(lo.as_ref().map(|k| &k[..]), hi.as_ref().map(|k| &k[..]))? {
                out.push(e?.1);
            }
        }
    }
    Ok(Some(out))
}

/// As [`scan_tids`], streaming: calls `f(key, tid, marked)` for each entry in key order
/// (descending when `backward`) as the scan reaches it, where `marked` is `mark(tid)` as it was while the entry was on its locked
/// leaf (`btree::Cursor::next_marked`: an index-only scan's visibility map bit). `Ok(false)`:
/// a value does not convert exactly to the key type and `f` was never called; the caller
/// scans the heap.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_entries(
    s: &Session,
    table: &Table,
    ix: &Index,
    eq: &[Scalar],
    bounds: RangeBounds<'_>,
    params: &[Option<String>],
    backward: bool,
    mark: &mut dyn FnMut(Tid) -> Result<bool>,
    mut f: impl FnMut(&[u8], Tid, bool) -> Result<crate::access::heap::Flow>,
) -> Result<bool> {
    use crate::access::heap::Flow;
    let Some(b) = scan_bounds(table, ix, eq, bounds, params)? else { return Ok(false) };
    let (lo, hi) = match b {
        ScanBounds::Empty => return Ok(true),
        // The entries equal to a whole key: keys are self-delimiting, so no other key starts
        // with it.
        ScanBounds::Equal(key) => {
            let mut end = key.clone();
            end.push(PREFIX_END);
            (Bound::Included(key), Bound::Excluded(end))
        }
        ScanBounds::Range(lo, hi) => (lo, hi),
    };
    let t = tree(s, ix, false);
    let (lo, hi) = (lo.as_ref().map(|k| &k[..]), hi.as_ref().map(|k| &k[..]));
    enum Dir<'a> {
        Forward(crate::access::btree::Cursor<'a>),
        Backward(crate::access::btree::BackCursor<'a>),
    }
    let mut cur = if backward { Dir::Backward(t.scan_backward(lo, hi)) } else { Dir::Forward(t.scan(lo, hi)?) };
    let mut i = 0u64;
    while let Some(e) = match &mut cur {
        Dir::Forward(c) => c.next_marked(mark),
        Dir::Backward(c) => c.next_marked(mark),
    } {
        i += 1;
        if i % 256 == 0 {
            crate::interrupt::check_for_interrupts()?;
        }
        let (key, tid, marked) = e?;
        if let Flow::Stop = f(&key, tid, marked)? {
            break;
        }
    }
    Ok(true)
}

/// The range an index scan reads on the column after its equalities: the lower and upper
/// bounds (value, inclusive), and whether the column's NULL entries are left out (`IS NOT
/// NULL`; they sort after every value, or before with NULLS FIRST).
pub(crate) type RangeBounds<'a> = (Option<&'a (Scalar, bool)>, Option<&'a (Scalar, bool)>, bool);

/// What an index scan reads: nothing, the entries equal to one whole key, or a key range.
enum ScanBounds {
    Empty,
    Equal(Vec<u8>),
    Range(Bound<Vec<u8>>, Bound<Vec<u8>>),
}

/// The keys an index scan for `eq` / `lo` / `hi` reads; None when a value does not convert
/// exactly to its key column's type.
fn scan_bounds(
    table: &Table,
    ix: &Index,
    eq: &[Scalar],
    (lo, hi, not_null): RangeBounds<'_>,
    params: &[Option<String>],
) -> Result<Option<ScanBounds>> {
    let types = key_types(table, ix)?;
    let mut prefix = Vec::with_capacity(32);
    for (k, e) in eq.iter().enumerate() {
        let v = e.eval(&[], params)?;
        if v == Value::Null {
            return Ok(Some(ScanBounds::Empty)); // col = NULL is never true
        }
        if push_key(&mut prefix, &types[k], &v, ix.option(k)).is_none() {
            return Ok(None);
        }
    }
    if eq.len() == ix.columns.len() {
        return Ok(Some(ScanBounds::Equal(prefix)));
    }
    // The range column's order: DESC keys run from the upper value bound down to the lower,
    // and its NULLs sit before or after every value.
    let option = ix.option(eq.len());
    let desc = option & crate::catalog::INDOPTION_DESC != 0;
    let nulls_first = option & crate::catalog::INDOPTION_NULLS_FIRST != 0;
    let (lo, hi) = if desc { (hi, lo) } else { (lo, hi) };
    // `upper`: the bound is the key range's upper end.
    let bound = |b: Option<&(Scalar, bool)>, upper: bool| -> Result<Option<Bound<Vec<u8>>>> {
        let Some((e, incl)) = b else {
            let mut k = prefix.clone();
            return Ok(Some(if upper {
                // Up to the NULLs when they come last and are left out.
                k.push(if not_null && !nulls_first { keycode::TAG_NULL } else { PREFIX_END });
                Bound::Excluded(k)
            } else if not_null && nulls_first {
                // From the first value, past the NULLs.
                k.push(keycode::TAG_VALUE);
                Bound::Included(k)
            } else if k.is_empty() {
                Bound::Unbounded
            } else {
                Bound::Included(k)
            }));
        };
        let v = e.eval(&[], params)?;
        if v == Value::Null {
            return Ok(Some(Bound::Excluded(Vec::new()))); // col < NULL: nothing
        }
        let mut k = prefix.clone();
        if push_key(&mut k, &types[eq.len()], &v, option).is_none() {
            return Ok(None);
        }
        Ok(Some(match (upper, *incl) {
            (false, true) => Bound::Included(k),
            (false, false) => {
                k.push(PREFIX_END);
                Bound::Included(k)
            }
            (true, true) => {
                k.push(PREFIX_END);
                Bound::Excluded(k)
            }
            (true, false) => Bound::Excluded(k),
        }))
    };
    let (Some(lo), Some(hi)) = (bound(lo, false)?, bound(hi, true)?) else { return Ok(None) };
    if matches!(&hi, Bound::Excluded(k) if k.is_empty()) || matches!(&lo, Bound::Excluded(k) if k.is_empty()) {
        return Ok(Some(ScanBounds::Empty));
    }
    Ok(Some(ScanBounds::Range(lo, hi)))
}

/// Every version of the heap whose creator did not abort, chain by chain in chain order, with
/// the TID its index entry names (its HOT chain's root: `access::heap::prune` invariant 1),
/// whether it is live (not deleted by a committed or own transaction), and whether it is its
/// chain's newest such version: what an index build reads (invariant 5).
pub(crate) fn heap_versions(s: &Session, table: &Table, mut f: impl FnMut(Tid, &[u8], bool, bool) -> Result<()>) -> Result<()> {
    let sh = &s.shared;
    let me = s.txn.as_ref().map(|t| t.xid).unwrap_or(INVALID_XID);
    let nblocks = sh.pool.smgr().nblocks(table.relfile, ForkNumber::Main)?;
    let mut copy = vec![0u8; sh.pool.block_size()];
    let mut members = Vec::new();
    for block in 0..nblocks {
        {
            let buf = sh.pool.read_buffer(&s.pins, table.relfile, ForkNumber::Main, block, None)?;
            let pg = buf.lock_shared();
            copy.copy_from_slice(&pg);
        }
        if page::is_new(&copy) {
            continue;
        }
        // Heap-only versions no chain reaches are not visited: their creator aborted or they
        // are dead to everyone, and no index entry may name them.
        for root in 1..=page::max_offset(&copy) {
            crate::access::heap::prune::chain_members(&copy, block, root, &mut members);
            members.retain(|&m| {
                let xmin = tuple::xmin(page::item(&copy, m).expect("chain members are normal tuples"));
                xmin == me || xid_state(&sh.txns, xmin) != XidState::Aborted
            });
            for (i, &m) in members.iter().enumerate() {
                let t = page::item(&copy, m).expect("chain members are normal tuples");
                let xmax = tuple::xmax(t);
                let live = xmax == INVALID_XID || (xmax != me && xid_state(&sh.txns, xmax) == XidState::Aborted);
                f((block, root), t, live, i + 1 == members.len())?;
            }
        }
    }
    Ok(())
}

/// Builds `ix` (its file created, empty) from the heap: scan, encode, sort, bottom-up build.
/// Each chain is indexed under its newest version's key; returns whether an older version had
/// another key (the index then needs `check_xmin`: invariant 5).
fn build(s: &mut Session, table: &Table, ix: &Index) -> Result<bool> {
    let wal = index_wal(s, table);
    let mut entries: Vec<(Vec<u8>, Tid, bool)> = Vec::new();
    let mut older: Vec<Vec<u8>> = Vec::new();
    let mut broken = false;
    let pred = predicate_of(table, ix)?;
    let keys = bind_key_exprs(table, ix)?;
    // Versions dead to every snapshot (now and later: the build holds ShareLock, so no
    // writer runs) need no entry, and their expressions are not evaluated (PostgreSQL
    // indexes only live and recently dead versions).
    let horizon = s.shared.txns.vacuum_horizon();
    heap_versions(s, table, |tid, t, live, newest| {
        let dead = crate::access::heap::vacuum::is_dead(&s.shared.txns, tuple::xmin(t), tuple::xmax(t), horizon);
        if dead && !newest {
            return Ok(());
        }
        let mut k = Vec::new();
        let mut any_null = false;
        if !dead {
            let stored = stored_of(s, table, t)?;
            // Outside a partial index: no key (invariant 6), its expressions not evaluated.
            let inside = match &pred {
                Some(p) => crate::exec::rows::predicate_holds(p, table, &stored)?,
                None => true,
            };
            if inside {
                any_null = key_of(table, ix, &keys, &stored, &mut k)?;
            }
        }
        if newest {
            broken |= older.iter().any(|o| *o != k);
            older.clear();
            if !k.is_empty() {
                entries.push((k, tid, live && !any_null));
            }
        } else {
            older.push(k);
        }
        Ok(())
    })?;
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    if ix.unique {
        let mut last_live: Option<usize> = None;
        for i in 0..entries.len() {
            if i > 0 && entries[i].0 != entries[i - 1].0 {
                last_live = None;
            }
            if entries[i].2 {
                if last_live.is_some() {
                    let tid = entries[i].1;
                    // The entry names a chain's root: its newest version holds the key.
                    let mut t = Vec::new();
                    HeapRel { pool: &s.shared.pool, pins: &s.pins, rel: table.relfile, wal: None, full_page_writes: false, touched: None }
                        .for_each_member(tid, |_, m| {
                            if xid_state(&s.shared.txns, tuple::xmin(m)) != XidState::Aborted {
                                t = m.to_vec();
                            }
                        })?;
                    let stored = stored_of(s, table, &t)?;
                    let (names, vals) = key_text(table, ix, &keys, &stored);
                    return Err(PgError::new(
                        crate::access::btree::UNIQUE_VIOLATION,
                        format!("could not create unique index \"{}\"", ix.name),
                    )
                    .with_detail(format!("Key ({names})=({vals}) is duplicated."))
                    .with_table(table)
                    .with_constraint(&ix.name));
                }
                last_live = Some(i);
            }
        }
    }
    let t = tree(s, ix, wal).with_xid(s.txn.as_ref().map(|t| t.xid).unwrap_or(INVALID_XID));
    t.build(entries.into_iter().map(|(k, tid, _)| (k, tid)))?;
    Ok(broken)
}

/// The type of each key of `ix`: its column's, or its expression's.
pub(crate) fn key_types(table: &Table, ix: &Index) -> Result<Vec<SqlType>> {
    if !ix.has_exprs() {
        return Ok(ix.columns.iter().map(|&c| table.columns[c].ty).collect());
    }
    let exprs = bind_key_exprs(table, ix)?;
    let mut next = exprs.iter();
    ix.columns
        .iter()
        .map(|&c| {
            if c == crate::catalog::EXPR_KEY {
                let e = next.next().expect("one expression for each expression key");
                expr::type_of(e).ok_or_else(|| PgError::internal(format!("index \"{}\" has an expression of no type", ix.name)))
            } else {
                Ok(table.columns[c].ty)
            }
        })
        .collect()
}

/// The name of each key of `ix` (PostgreSQL's index column names): its column's, or the name
/// its expression figures (`figure_name`), made unique within the index with a number.
pub(crate) fn key_names(table: &Table, ix: &Index) -> Vec<String> {
    let mut exprs = ix.exprs.iter();
    let mut names: Vec<String> = Vec::with_capacity(ix.columns.len());
    for &c in &ix.columns {
        let name = if c == crate::catalog::EXPR_KEY {
            let text = exprs.next().expect("one expression for each expression key");
            crate::exec::rows::parse_stored_expr(text).map_or_else(|_| "expr".to_string(), |e| figure_name(&e))
        } else {
            table.columns[c].name.clone()
        };
        push_unique_name(&mut names, name);
    }
    // INCLUDE columns after the keys (PostgreSQL names them by their columns).
    for &c in &ix.include {
        push_unique_name(&mut names, table.columns[c].name.clone());
    }
    names
}

/// Adds `name` to an index's column names, with the first number after it that makes it
/// unique among them (PostgreSQL's `ChooseIndexColumnNames`).
fn push_unique_name(names: &mut Vec<String>, name: String) {
    let name = if names.contains(&name) {
        (1..).map(|i| format!("{name}{i}")).find(|n| !names.contains(n)).expect("some name is free")
    } else {
        name
    };
    names.push(name);
}

/// Each attribute of `ix` (its keys, then its INCLUDE columns) as the catalog shows it: name
/// and type.
pub(crate) fn index_attributes(table: &Table, ix: &Index) -> Result<Vec<(String, SqlType)>> {
    let mut types = key_types(table, ix)?;
    types.extend(ix.include.iter().map(|&c| table.columns[c].ty));
    Ok(key_names(table, ix).into_iter().zip(types).collect())
}

/// The bound predicate of index `ix` of `table` when it is partial.
pub(crate) fn predicate_of(table: &Table, ix: &Index) -> Result<Option<Scalar>> {
    ix.predicate.as_deref().map(|p| bind_predicate(table, p)).transpose()
}

/// A partial index's stored predicate bound over its table's columns, as a stored definition
/// (`types::tz::stored_definition`) and as a WHERE clause (an untyped literal is boolean).
pub(crate) fn bind_predicate(table: &Table, text: &str) -> Result<Scalar> {
    let e = crate::exec::rows::parse_stored_expr(text)?;
    // Not a scope of its own inside one (`check_stored_definition` counts what it read).
    let _stored = (!crate::types::tz::in_stored_definition()).then(crate::types::tz::stored_definition);
    let scope = expr::Scope::of_table(table, None);
    expr::Binder::new(&scope).boolean(&e, "WHERE")
}

/// Whether conditions `filter` (over a table's columns) imply a partial index's predicate
/// `pred`, so that every row they accept has an entry: each of its conjuncts is one of the
/// filter's, or says that an expression IS NOT NULL which a filter conjunct compares with a
/// strict operator (the simplest of PostgreSQL's `predicate_implied_by` rules). False when
/// unsure (the index is then not used).
pub(crate) fn implies(filter: Option<&Scalar>, pred: &Scalar) -> bool {
    let mut have = Vec::new();
    if let Some(f) = filter {
        super::dml::conjuncts(f, &mut have);
    }
    let shown: Vec<String> = have.iter().map(|e| format!("{e:?}")).collect();
    let mut need = Vec::new();
    super::dml::conjuncts(pred, &mut need);
    need.iter().all(|p| {
        if shown.contains(&format!("{p:?}")) {
            return true;
        }
        let Scalar::IsNull(x, true) = p else { return false };
        let x = format!("{x:?}");
        have.iter().any(|h| match h {
            Scalar::Cmp(_, a, b) => format!("{a:?}") == x || format!("{b:?}") == x,
            Scalar::InList(a, _, _) | Scalar::Like(a, ..) => format!("{a:?}") == x,
            Scalar::IsNull(a, true) => format!("{a:?}") == x,
            _ => false,
        })
    })
}

/// Whether a scan with conditions `filter` may read index `i` of `table`: any index that is
/// not partial, a partial one when the conditions imply its predicate.
pub(crate) fn usable_for(table: &Table, i: usize, filter: Option<&Scalar>) -> bool {
    let ix = &table.indexes[i];
    if ix.predicate.is_none() {
        return true;
    }
    match predicate_of(table, ix) {
        Ok(Some(p)) => implies(filter, &p),
        _ => false,
    }
}

/// Whether any table (as this transaction sees the catalog) has an index or is named `name`.
pub(crate) fn relation_name_taken(s: &Session, name: &str) -> bool {
    s.visible_tables().iter().any(|t| t.name == name || t.indexes.iter().any(|i| i.name == name))
}

/// Replaces `old` by `new` in the transaction's pending catalog change.
pub(crate) fn replace_table(s: &mut Session, old: &Arc<Table>, new: Table) {
    let new = Arc::new(new);
    let txn = s.txn();
    if let Some(c) = txn.creates.iter_mut().find(|c| c.oid == old.oid) {
        *c = new;
        return;
    }
    match txn.replaces.iter_mut().find(|(n, _)| n.oid == old.oid) {
        Some(r) => r.0 = new,
        None => txn.replaces.push((new, old.clone())),
    }
}

/// What an index is made of: its keys (columns, [`crate::catalog::EXPR_KEY`] for an
/// expression, `exprs` their text), their order options and operator classes, its kind and
/// its predicate.
pub(crate) struct IndexDef {
    pub cols: Vec<usize>,
    pub exprs: Vec<String>,
    /// `INCLUDE` columns.
    pub include: Vec<usize>,
    pub options: Vec<u8>,
    pub unique: bool,
    pub primary: bool,
    pub constraint: bool,
    pub predicate: Option<String>,
    pub opclasses: Vec<u32>,
}

/// Adds an index to `table` (already locked) and builds it. Returns the new table
/// definition (also recorded in the transaction).
pub(crate) fn add_index(s: &mut Session, table: &Arc<Table>, name: String, def: IndexDef) -> Result<Arc<Table>> {
    let IndexDef { cols, exprs, include, options, unique, primary, constraint, predicate, opclasses } = def;
    if relation_name_taken(s, &name) {
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
    }
    if primary && table.indexes.iter().any(|i| i.primary) {
        return Err(PgError::new("42P16", format!("multiple primary keys for table \"{}\" are not allowed", table.name)));
    }
    s.xid();
    let relfile = s.create_files()?;
    let mut ix = Index {
        oid: s.shared.catalog.new_oid(),
        name,
        columns: cols,
        unique: unique || primary,
        primary,
        relfile,
        constraint,
        check_xmin: None,
        options,
        predicate,
        opclasses,
        exprs,
        include,
        comment: None,
    };
    let mut new = (**table).clone();
    if primary {
        for &c in &ix.columns {
            new.columns[c].not_null = true;
        }
    }
    if primary {
        // The primary key's columns became NOT NULL: existing rows must satisfy it.
        let mut bad = None;
        heap_versions(s, table, |_, t, live, _| {
            if live && bad.is_none() {
                let stored = stored_of(s, table, t)?;
                if let Some(&c) = ix.columns.iter().find(|&&c| stored[c].is_none()) {
                    bad = Some(c);
                }
            }
            Ok(())
        })?;
        if let Some(c) = bad {
            return Err(PgError::new(
                sqlstate::NOT_NULL_VIOLATION,
                format!("column \"{}\" of relation \"{}\" contains null values", table.columns[c].name, table.name),
            )
            .with_table(table)
            .with_column(&table.columns[c].name));
        }
    }
    if build(s, &new, &ix)? {
        ix.check_xmin = Some(s.xid());
    }
    new.indexes.push(ix);
    replace_table(s, table, new);
    Ok(s.lookup_table(&table.key()).expect("just replaced"))
}

/// Resolves index column names.
/// PostgreSQL's INDEX_MAX_KEYS (`max_index_keys`): the most key columns an index has.
pub const MAX_INDEX_KEYS: usize = 32;

pub(crate) fn index_columns(table: &Table, names: &[String]) -> Result<Vec<usize>> {
    if names.len() > MAX_INDEX_KEYS {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("cannot use more than {MAX_INDEX_KEYS} columns in an index")));
    }
    let mut cols = Vec::with_capacity(names.len());
    for n in names {
        let c = table.column_index(n).ok_or_else(|| PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist")))?;
        if table.columns[c].ty.id == crate::types::TypeId::Json {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                "data type json has no default operator class for access method \"btree\"",
            )
            .with_hint("You must specify an operator class for the index or define a default operator class for the data type."));
        }
        cols.push(c);
    }
    Ok(cols)
}

/// PostgreSQL's default index name: `t_a_b_idx` / `t_pkey`, made unique with a number.
fn default_name(s: &Session, table: &Table, cols: &[usize], primary: bool) -> String {
    if primary {
        return unused_name(s, format!("{}_pkey", table.name));
    }
    let names: Vec<&str> = cols.iter().map(|&c| table.columns[c].name.as_str()).collect();
    unused_name(s, format!("{}_{}_idx", table.name, names.join("_")))
}

/// `base`, or `base` with the first number after it that makes no relation's name.
fn unused_name(s: &Session, base: String) -> String {
    if !relation_name_taken(s, &base) {
        return base;
    }
    (1..).map(|i| format!("{base}{i}")).find(|n| !relation_name_taken(s, n)).expect("some name is free")
}

/// CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON t (cols) [WHERE predicate].
pub fn create_index(s: &mut Session, ci: sqlparser::ast::CreateIndex) -> Result<QueryResult> {
    if ci.concurrently {
        return Err(PgError::feature("CREATE INDEX CONCURRENTLY is not supported"));
    }
    if let Some(u) = &ci.using {
        let am = u.to_string().to_lowercase();
        // PostgreSQL's other built-in access methods exist there; heapstore has B-trees only.
        if matches!(am.as_str(), "hash" | "gist" | "gin" | "spgist" | "brin") {
            return Err(PgError::feature(format!("access method \"{am}\" is not supported by heapstore; only btree indexes exist")));
        }
        if am != "btree" {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("access method \"{}\" does not exist", u.to_string().to_lowercase()),
            ));
        }
    }
    let table = s.table(&crate::catalog::relation_key(&ci.table_name)?)?;
    if ci.columns.len() + ci.include.len() > MAX_INDEX_KEYS {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("cannot use more than {MAX_INDEX_KEYS} columns in an index")));
    }
    let mut cols = Vec::with_capacity(ci.columns.len());
    let mut exprs = Vec::new();
    // Each key's name (PostgreSQL's index column names, unique within the index) and type.
    let mut key_names: Vec<String> = Vec::with_capacity(ci.columns.len());
    let mut key_types = Vec::with_capacity(ci.columns.len());
    let mut options = Vec::new();
    for c in &ci.columns {
        // A parenthesized column is the column (PostgreSQL: an expression that is a Var).
        let mut e = &c.column.expr;
        while let sqlparser::ast::Expr::Nested(inner) = e {
            e = inner;
        }
        let column = match e {
            sqlparser::ast::Expr::Identifier(id) => Some(fold_ident(id)),
            sqlparser::ast::Expr::CompoundIdentifier(parts)
                if (2..=3).contains(&parts.len()) && fold_ident(&parts[parts.len() - 2]) == table.name =>
            {
                Some(fold_ident(&parts[parts.len() - 1]))
            }
            _ => None,
        };
        let name = match column {
            Some(n) => {
                let col = index_columns(&table, std::slice::from_ref(&n))?[0];
                cols.push(col);
                key_types.push(table.columns[col].ty);
                n
            }
            None => {
                let (text, ty) = check_key_expr(&table, e)?;
                cols.push(crate::catalog::EXPR_KEY);
                exprs.push(text);
                key_types.push(ty);
                figure_name(e)
            }
        };
        push_unique_name(&mut key_names, name);
        // PostgreSQL's indoption: DESC, and NULLS FIRST (the default with DESC).
        let desc = c.column.options.asc == Some(false);
        let nulls_first = c.column.options.nulls_first.unwrap_or(desc);
        options.push(
            if desc { crate::catalog::INDOPTION_DESC } else { 0 } | if nulls_first { crate::catalog::INDOPTION_NULLS_FIRST } else { 0 },
        );
    }
    if options.iter().all(|&o| o == 0) {
        options.clear();
    }
    // INCLUDE: plain columns of any type (no operator class is needed), named after the keys.
    let mut include = Vec::with_capacity(ci.include.len());
    for id in &ci.include {
        let n = fold_ident(id);
        let c = table.column_index(&n).ok_or_else(|| PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist")))?;
        include.push(c);
        push_unique_name(&mut key_names, n);
    }
    let mut opclasses = Vec::with_capacity(cols.len());
    for (c, ty) in ci.columns.iter().zip(&key_types) {
        opclasses.push(match &c.operator_class {
            Some(name) => super::pg_catalog::btree_opclass(&fold_ident(name), ty.id)?,
            None => 0,
        });
    }
    if opclasses.iter().all(|&o| o == 0) {
        opclasses.clear();
    }
    s.lock_table(&table, LockMode::Share)?;
    let table = s.table(&table.key())?;
    let predicate = ci.predicate.as_ref().map(|p| check_predicate(&table, p)).transpose()?;
    s.check_not_in_use(&table, "CREATE INDEX")?;
    let name = match &ci.name {
        Some(n) => super::ddl_table_name(n)?,
        None => unused_name(s, format!("{}_{}_idx", table.name, key_names.join("_"))),
    };
    if ci.if_not_exists && relation_name_taken(s, &name) {
        let mut r = super::tag("CREATE INDEX");
        r.notices.push(format!("NOTICE:  relation \"{name}\" already exists, skipping"));
        return Ok(r);
    }
    let def = IndexDef { cols, exprs, include, options, unique: ci.unique, primary: false, constraint: false, predicate, opclasses };
    add_index(s, &table, name, def)?;
    Ok(super::tag("CREATE INDEX"))
}

/// `e` with column references qualified by the table's name left bare (a stored definition
/// can only name this table, which may be renamed).
fn unqualified(table: &Table, e: &sqlparser::ast::Expr) -> sqlparser::ast::Expr {
    let mut e = e.clone();
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |x| {
        if let sqlparser::ast::Expr::CompoundIdentifier(parts) = x {
            let n = parts.len();
            if (2..=3).contains(&n) && fold_ident(&parts[n - 2]) == table.name {
                *x = sqlparser::ast::Expr::Identifier(parts[n - 1].clone());
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    e
}

/// Refuses a subquery in an index expression or predicate (`what`), as PostgreSQL does.
fn refuse_subquery(e: &sqlparser::ast::Expr, what: &str) -> Result<()> {
    let mut bad = None;
    let _ = sqlparser::ast::visit_expressions(e, |x| {
        if matches!(x, sqlparser::ast::Expr::Subquery(_) | sqlparser::ast::Expr::Exists { .. } | sqlparser::ast::Expr::InSubquery { .. }) {
            bad = Some(PgError::feature(format!("cannot use subquery in {what}")));
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    bad.map_or(Ok(()), Err)
}

/// Checks a partial index's predicate as PostgreSQL does (a boolean expression over the
/// table's columns, without subqueries or aggregates, whose functions are immutable) and
/// returns its stored text.
fn check_predicate(table: &Table, e: &sqlparser::ast::Expr) -> Result<String> {
    let e = unqualified(table, e);
    refuse_subquery(&e, "index predicate")?;
    let text = e.to_string();
    let b = crate::types::tz::check_stored_definition("an index predicate", || bind_predicate(table, &text)).map_err(|e| {
        if e.code == "42803" {
            PgError::new("42803", "aggregate functions are not allowed in index predicates")
        } else {
            e
        }
    })?;
    check_immutable(&b, "index predicate")?;
    Ok(text)
}

/// Checks an index key expression as PostgreSQL does (over the table's columns, without
/// subqueries or aggregates, its functions immutable, of a type with a B-tree order) and
/// returns its stored text and type.
fn check_key_expr(table: &Table, e: &sqlparser::ast::Expr) -> Result<(String, SqlType)> {
    let e = unqualified(table, e);
    refuse_subquery(&e, "index expression")?;
    // The functions of the transaction, statement and session: stable in PostgreSQL.
    let mut stable = false;
    let _ = sqlparser::ast::visit_expressions(&e, |x| {
        if let sqlparser::ast::Expr::Function(f) = x {
            let name = f.name.to_string().to_ascii_lowercase();
            stable |= super::func::TRANSACTION_FUNCTIONS.contains(&name.as_str());
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    if stable {
        return Err(PgError::new("42P17", "functions in index expression must be marked IMMUTABLE"));
    }
    let text = e.to_string();
    let b = crate::types::tz::check_stored_definition("an index expression", || bind_key_expr(table, &text)).map_err(|e| {
        if e.code == "42803" {
            PgError::new("42803", "aggregate functions are not allowed in index expressions")
        } else {
            e
        }
    })?;
    check_immutable(&b, "index expression")?;
    let ty = expr::type_of(&b).ok_or_else(|| PgError::feature(format!("the index expression {text} has no known type")))?;
    if ty.id == TypeId::Json {
        return Err(no_json_opclass());
    }
    if matches!(ty.id, TypeId::Record(_)) {
        return Err(PgError::feature("an index expression of a record type is not supported by heapstore"));
    }
    Ok((text, ty))
}

/// PostgreSQL's error for a json key: json has no B-tree operator class.
fn no_json_opclass() -> PgError {
    PgError::new(sqlstate::UNDEFINED_OBJECT, "data type json has no default operator class for access method \"btree\"")
        .with_hint("You must specify an operator class for the index or define a default operator class for the data type.")
}

/// Whether function `f` with arguments `args` is immutable as heapstore evaluates it: its
/// value depends on its arguments alone, never on a setting (TimeZone, DateStyle,
/// IntervalStyle, extra_float_digits, bytea_output), the clock or the catalog. The functions
/// PostgreSQL marks immutable that heapstore has; a date/time function only over zone-less
/// values.
fn immutable_func(f: &super::func::Func, args: &[Scalar]) -> bool {
    use super::func::Func as F;
    use super::jsonfn::JsonFunc as J;
    let zoned = args.iter().any(|a| expr::type_of(a).is_some_and(|t| matches!(t.id, TypeId::Timestamptz | TypeId::TimeTz)));
    match f {
        F::Length | F::OctetLength | F::BitLength | F::Lower | F::Upper | F::Initcap | F::LowerC | F::UpperC | F::InitcapC => true,
        F::Substr | F::StrPos | F::Replace | F::Trim(..) | F::Left | F::Right | F::Lpad | F::Rpad | F::Repeat | F::Reverse => true,
        F::Ascii | F::Chr | F::SplitPart | F::StartsWith | F::Translate | F::ToHex | F::Md5 | F::Sha(_) | F::Encode | F::Decode => true,
        F::QuoteIdent | F::Overlay | F::RegexpReplace | F::RegexpLike | F::RegexpCount | F::RegexpSubstring => true,
        F::Abs | F::Round | F::Trunc | F::Floor | F::Ceil | F::Power | F::Sqrt | F::Exp | F::Ln | F::Mod | F::Sign => true,
        F::Cbrt | F::Gcd | F::Lcm | F::Div | F::Degrees | F::Radians | F::Trig(_) | F::Atan2 | F::Log10 | F::Log => true,
        F::Factorial | F::WidthBucket | F::ByteaCat | F::Bit(_) | F::NumScale(_) | F::NumNulls(_) => true,
        F::MakeDate | F::MakeTime | F::MakeTimestamp | F::DateAdd | F::DateDiff | F::IsFinite | F::Justify(_) => true,
        F::DatePart | F::Extract | F::DateTrunc | F::TsInterval(_) | F::TsDiff | F::IntervalArith(_) | F::TimeArith(_) => !zoned,
        F::Age => args.len() == 2 && !zoned,
        F::Json(j) => matches!(
            j,
            J::Get { .. } | J::Path { .. } | J::Contains | J::ContainedBy | J::Exists | J::ExistsAnyAll { .. } | J::Typeof { .. }
        ),
        _ => false,
    }
}

/// Checks that a bound index expression or predicate (`what`) is immutable: 42P17 where
/// PostgreSQL finds a function that is not (volatile, or reading a setting), 0A000 for a
/// call heapstore cannot show is immutable.
fn check_immutable(b: &Scalar, what: &str) -> Result<()> {
    let datetime = |t: &SqlType| {
        matches!(t.id, TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Time | TypeId::TimeTz | TypeId::Interval)
    };
    let textual = |t: Option<SqlType>| t.is_some_and(|t| matches!(t.id, TypeId::Text | TypeId::Varchar | TypeId::Bpchar));
    // An untyped literal next to text is text.
    let textual_side = |x: &Scalar| matches!(x, Scalar::Unknown(_)) || textual(expr::type_of(x));
    // What the session's TimeZone decides: a zone-aware value next to a zone-less one.
    let zoned = |t: Option<SqlType>| t.map(|t| matches!(t.id, TypeId::Timestamptz | TypeId::TimeTz));
    let mixes = |a: &Scalar, b: &Scalar| {
        let (ta, tb) = (expr::type_of(a), expr::type_of(b));
        ta.zip(tb).is_some_and(|(x, y)| datetime(&x) && datetime(&y) && x.id != y.id) && zoned(ta) != zoned(tb)
    };
    let not_immutable = || PgError::new("42P17", format!("functions in {what} must be marked IMMUTABLE"));
    let mut err = None;
    b.visit(&mut |x| match x {
        Scalar::Func(f, ..) if f.is_volatile() => {
            err.get_or_insert(not_immutable());
        }
        Scalar::Func(f, args, _) if immutable_func(f, args) => {}
        Scalar::Func(
            super::func::Func::ToChar
            | super::func::Func::Concat
            | super::func::Func::ConcatWs
            | super::func::Func::Format
            | super::func::Func::Timezone
            | super::func::Func::ToTimestamp
            | super::func::Func::ToDate
            | super::func::Func::DatePart
            | super::func::Func::Extract
            | super::func::Func::DateTrunc
            | super::func::Func::TsInterval(_)
            | super::func::Func::TsDiff
            | super::func::Func::TimeArith(_)
            | super::func::Func::Age,
            ..,
        ) => {
            err.get_or_insert(not_immutable());
        }
        Scalar::Func(..) | Scalar::Lookup(..) | Scalar::SubLink(..) | Scalar::Param(..) | Scalar::Outer(..) => {
            err.get_or_insert(PgError::feature(format!("this function call in an {what} is not supported by heapstore yet")));
        }
        // `anytextcat`: a non-text side is converted by its output function (stable).
        Scalar::Concat(a, c) if !textual_side(a) || !textual_side(c) => {
            err.get_or_insert(not_immutable());
        }
        // Casts of date/time values depend on TimeZone and DateStyle, of reg* ones on the
        // catalog, of float and bytea to text on extra_float_digits and bytea_output; of
        // arrays, on their elements' casts.
        Scalar::Cast(inner, to)
            if datetime(to)
                || matches!(to.id, TypeId::Array(_))
                || expr::type_of(inner).is_some_and(|t| matches!(t.id, TypeId::Array(_)))
                || expr::type_of(inner).is_some_and(|t| datetime(&t))
                || matches!(to.id, TypeId::Regclass | TypeId::Regtype | TypeId::Regnamespace)
                || (textual(Some(*to))
                    && expr::type_of(inner).is_some_and(|t| matches!(t.id, TypeId::Float4 | TypeId::Float8 | TypeId::Bytea))) =>
        {
            err.get_or_insert(PgError::feature(format!(
                "a cast to or from a date/time, reg*, float or bytea type in an {what} is not supported by heapstore yet"
            )));
        }
        Scalar::Cmp(_, a, c) | Scalar::IsDistinct(a, c, _) if mixes(a, c) => {
            err.get_or_insert(not_immutable());
        }
        Scalar::InList(a, items, _) if items.iter().any(|i| mixes(a, i)) => {
            err.get_or_insert(not_immutable());
        }
        Scalar::Case(arms, other, _)
            if arms
                .iter()
                .map(|(_, r)| r)
                .chain(other.as_deref())
                .any(|a| arms.iter().map(|(_, r)| r).chain(other.as_deref()).any(|c| mixes(a, c))) =>
        {
            err.get_or_insert(not_immutable());
        }
        Scalar::NullIf(a, c) if mixes(a, c) => {
            err.get_or_insert(not_immutable());
        }
        Scalar::Coalesce(items, _) | Scalar::MinMax(_, items, _) if items.iter().any(|a| items.iter().any(|c| mixes(a, c))) => {
            err.get_or_insert(not_immutable());
        }
        _ => {}
    });
    err.map_or(Ok(()), Err)
}

/// An index key expression's stored text bound over its table's columns, as a stored
/// definition.
fn bind_key_expr(table: &Table, text: &str) -> Result<Scalar> {
    let e = crate::exec::rows::parse_stored_expr(text)?;
    // Not a scope of its own inside one (`check_stored_definition` counts what it read).
    let _stored = (!crate::types::tz::in_stored_definition()).then(crate::types::tz::stored_definition);
    expr::bind(&e, table)
}

/// The bound key expressions of index `ix` (one for each expression key, in order).
pub(crate) fn bind_key_exprs(table: &Table, ix: &Index) -> Result<Vec<Scalar>> {
    ix.exprs.iter().map(|t| bind_key_expr(table, t)).collect()
}

/// Whether a stored expression is a function call as written (PostgreSQL's
/// `looks_like_function`: shown without parentheses of its own in an index's definition).
fn looks_like_function(text: &str) -> bool {
    matches!(crate::exec::rows::parse_stored_expr(text), Ok(sqlparser::ast::Expr::Function(_)))
}

/// An index key expression as an error's `Key (...)` and `pg_get_indexdef(oid, k, true)` show
/// it: a function call as is, any other expression in parentheses.
pub(crate) fn expr_display(text: &str) -> String {
    if looks_like_function(text) {
        text.to_string()
    } else {
        format!("({text})")
    }
}

/// An index key expression as `pg_get_indexdef` writes it in the key list (`pretty`: as psql's
/// `\d` shows it).
pub(crate) fn expr_in_definition(text: &str, pretty: bool) -> String {
    if looks_like_function(text) || pretty {
        expr_display(text)
    } else {
        format!("(({text}))")
    }
}

/// The name PostgreSQL gives an index column (`FigureColname`): the column's name, a
/// function's name, `case`, or `expr`.
fn figure_name(e: &sqlparser::ast::Expr) -> String {
    use sqlparser::ast::Expr as E;
    match e {
        E::Identifier(id) => fold_ident(id),
        E::CompoundIdentifier(parts) => parts.last().map_or_else(|| "expr".into(), fold_ident),
        E::Nested(inner) => figure_name(inner),
        E::Cast { expr, .. } => figure_name(expr),
        E::Function(f) => f.name.0.last().map_or_else(|| "expr".into(), |p| p.to_string().trim_matches('"').to_lowercase()),
        E::Case { .. } => "case".into(),
        _ => "expr".into(),
    }
}

/// Adds the PRIMARY KEY / UNIQUE constraints of a table being created.
pub(crate) fn add_constraint_index(
    s: &mut Session,
    table: &Arc<Table>,
    names: &[String],
    include_names: &[String],
    primary: bool,
    name: Option<String>,
) -> Result<Arc<Table>> {
    if let Some(n) = names.iter().chain(include_names).find(|n| table.column_index(n).is_none()) {
        return Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" named in key does not exist")));
    }
    if let Some((_, n)) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)) {
        let kind = if primary { "primary key" } else { "unique" };
        return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{n}\" appears twice in {kind} constraint")));
    }
    let cols = index_columns(table, names)?;
    if names.len() + include_names.len() > MAX_INDEX_KEYS {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("cannot use more than {MAX_INDEX_KEYS} columns in an index")));
    }
    // INCLUDE: plain columns of any type, as CREATE INDEX's.
    let mut include = Vec::with_capacity(include_names.len());
    for n in include_names {
        include.push(table.column_index(n).expect("checked above"));
    }
    let name = match name {
        Some(n) => n,
        None if primary => default_name(s, table, &cols, true),
        None => {
            // PostgreSQL names a UNIQUE constraint after its INCLUDE columns too, numbering a
            // name repeated among them.
            let mut names: Vec<String> = Vec::new();
            for &c in cols.iter().chain(&include) {
                push_unique_name(&mut names, table.columns[c].name.clone());
            }
            let base = format!("{}_{}_key", table.name, names.join("_"));
            if relation_name_taken(s, &base) {
                (1..).map(|i| format!("{base}{i}")).find(|n| !relation_name_taken(s, n)).expect("free")
            } else {
                base
            }
        }
    };
    let def = IndexDef {
        cols,
        exprs: Vec::new(),
        include,
        options: Vec::new(),
        unique: true,
        primary,
        constraint: true,
        predicate: None,
        opclasses: Vec::new(),
    };
    add_index(s, table, name, def)
}

/// DROP INDEX [IF EXISTS] name [, ...].
pub fn drop_indexes(s: &mut Session, if_exists: bool, names: Vec<sqlparser::ast::ObjectName>) -> Result<QueryResult> {
    let mut r = super::tag("DROP INDEX");
    for n in &names {
        let name = super::ddl_table_name(n)?;
        let owner = s.visible_tables().into_iter().find(|t| t.indexes.iter().any(|i| i.name == name));
        let Some(table) = owner else {
            if if_exists {
                r.notices.push(format!("NOTICE:  index \"{name}\" does not exist, skipping"));
                continue;
            }
            return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("index \"{name}\" does not exist")));
        };
        s.lock_table(&table, LockMode::AccessExclusive)?;
        let table = s.table(&table.key())?;
        let Some(pos) = table.indexes.iter().position(|i| i.name == name) else { continue };
        super::ddl::index_not_referenced(s, &table, &table.indexes[pos], "index")?;
        if table.indexes[pos].constraint {
            return Err(PgError::new(
                "2BP01",
                format!("cannot drop index {name} because constraint {name} on table {} requires it", table.name),
            )
            .with_hint(format!("You can drop constraint {name} on table {} instead.", table.name)));
        }
        s.xid();
        let mut new = (*table).clone();
        let ix = new.indexes.remove(pos);
        s.txn().dead_files.push(ix.relfile);
        replace_table(s, &table, new);
    }
    Ok(r)
}

/// New, empty index files for a table getting new heap files (TRUNCATE).
pub(crate) fn truncate_indexes(s: &mut Session, new: &mut Table) -> Result<()> {
    let wal = index_wal(s, new);
    for i in 0..new.indexes.len() {
        let old = new.indexes[i].relfile;
        let relfile = s.create_files()?;
        new.indexes[i].relfile = relfile;
        s.txn().dead_files.push(old);
        tree(s, &new.indexes[i], wal).create_empty()?;
    }
    Ok(())
}

/// Copies of one heap's pages with their chain roots (`prune::roots`), read once each.
struct PageCopies {
    rel: crate::storage::RelFileNumber,
    pages: std::collections::HashMap<crate::storage::BlockNumber, (Vec<u8>, Vec<u16>)>,
}

impl PageCopies {
    fn get(&mut self, s: &Session, block: crate::storage::BlockNumber) -> Result<&(Vec<u8>, Vec<u16>)> {
        if !self.pages.contains_key(&block) {
            let buf = s.shared.pool.read_buffer(&s.pins, self.rel, ForkNumber::Main, block, None)?;
            let copy = buf.lock_shared().to_vec();
            let roots = if page::is_new(&copy) { Vec::new() } else { crate::access::heap::prune::roots(&copy, block) };
            self.pages.insert(block, (copy, roots));
        }
        Ok(&self.pages[&block])
    }
}

/// Checks that each index of `table` agrees with its heap: every version the snapshot sees is
/// found through each index under its key, and every index entry points at a version whose
/// key matches. Returns a description of the first disagreement. For tests and `amcheck`-like
/// use.
pub fn check_table(s: &mut Session, table: &str) -> Result<std::result::Result<u64, String>> {
    let started = s.begin_implicit();
    let r = check_table_in_txn(s, table);
    if started {
        s.rollback();
    }
    r
}

fn check_table_in_txn(s: &mut Session, table: &str) -> Result<std::result::Result<u64, String>> {
    let table = s.table(table)?;
    s.lock_table(&table, LockMode::AccessShare)?;
    let snap = s.snapshot();
    let sh = s.shared.clone();
    let heap = HeapRel { pool: &sh.pool, pins: &s.pins, rel: table.relfile, wal: None, full_page_writes: false, touched: None };
    let mut pages = PageCopies { rel: table.relfile, pages: Default::default() };
    let mut visible = Vec::new();
    crate::access::heap::scan(&sh.pool, &s.pins, &sh.txns, table.relfile, &snap, |b, o, t| {
        visible.push(((b, o), t.to_vec()));
        Ok(crate::access::heap::Flow::Continue)
    })?;
    for ix in &table.indexes {
        let pred = predicate_of(&table, ix)?;
        let keys = bind_key_exprs(&table, ix)?;
        let t = tree(s, ix, false);
        if let Err(e) = t.check() {
            return Ok(Err(format!("index \"{}\": {e}", ix.name)));
        }
        let mut entries = std::collections::BTreeSet::new();
        for e in t.scan(Bound::Unbounded, Bound::Unbounded)? {
            let (k, tid) = e?;
            entries.insert((tid, k));
        }
        for (tid, tup) in &visible {
            let stored = stored_of(s, &table, tup)?;
            if let Some(p) = &pred {
                if !crate::exec::rows::predicate_holds(p, &table, &stored)? {
                    continue;
                }
            }
            let mut k = Vec::new();
            key_of(&table, ix, &keys, &stored, &mut k)?;
            let root = (tid.0, pages.get(s, tid.0)?.1[tid.1 as usize]);
            if !entries.contains(&(root, k)) {
                return Ok(Err(format!(
                    "index \"{}\": visible row ({},{}) (chain root ({},{})) has no entry with its key",
                    ix.name, tid.0, tid.1, root.0, root.1
                )));
            }
        }
        for (tid, k) in &entries {
            let what = |why: &str| Ok(Err(format!("index \"{}\": entry for ({},{}) {why}", ix.name, tid.0, tid.1)));
            if tid.0 >= sh.pool.smgr().nblocks(table.relfile, ForkNumber::Main)? {
                return what("points past the heap's end");
            }
            let (flags, heap_only) = {
                let pg = &pages.get(s, tid.0)?.0;
                if tid.1 == 0 || tid.1 > page::max_offset(pg) {
                    return what("points at a missing line pointer");
                }
                let flags = page::item_id(pg, tid.1).0;
                (flags, page::item(pg, tid.1).is_some_and(tuple::is_heap_only))
            };
            match flags {
                page::LP_UNUSED => return what("points at an unused line pointer"),
                page::LP_NORMAL if heap_only => return what("points at a heap-only tuple"),
                page::LP_NORMAL | page::LP_REDIRECT => {
                    // Invariant 5: the chain's newest version (the one pruning keeps) carries
                    // the key its entry names it under.
                    let mut found = false;
                    let mut err = None;
                    heap.for_each_member(*tid, |_, t| {
                        if found || err.is_some() {
                            return;
                        }
                        match stored_of(s, &table, t) {
                            Ok(stored) => {
                                let inside = match &pred {
                                    Some(p) => crate::exec::rows::predicate_holds(p, &table, &stored),
                                    None => Ok(true),
                                };
                                let mut hk = Vec::new();
                                match inside.and_then(|inside| Ok(inside && key_of(&table, ix, &keys, &stored, &mut hk).map(|_| hk == *k)?))
                                {
                                    Ok(f) => found = f,
                                    Err(e) => err = Some(e),
                                }
                            }
                            Err(e) => err = Some(e),
                        }
                    })?;
                    if let Some(e) = err {
                        return Err(e);
                    }
                    if !found {
                        return what("does not match any version of its chain");
                    }
                }
                _ => {} // LP_DEAD: VACUUM removes its entries
            }
        }
    }
    Ok(Ok(visible.len() as u64))
}

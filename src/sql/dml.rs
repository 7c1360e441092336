//! Row statements: `INSERT INTO t [(cols)] VALUES (...), ... | query`, `UPDATE t SET col =
//! expr, ... [WHERE ...]`, `DELETE FROM t [WHERE ...]`, and the table access path every query
//! scan uses ([`Plan`]: an index scan when the conditions bound an index's leading column,
//! else a sequential scan with a filter); prepared queries keep their plan (`cached_select`).
//!
//! Concurrency is PostgreSQL's READ COMMITTED: each statement reads with its own snapshot; an
//! UPDATE or DELETE that meets a row a running transaction is changing waits for that
//! transaction (`Session::wait_for_xid`), then skips the row if it was deleted, or follows
//! the update chain to the newest version and re-checks the WHERE clause on it
//! (EvalPlanQual) before changing that version.
//!
//! Invariants:
//! 1. DML takes RowExclusiveLock on its table, SELECT AccessShareLock, both held to
//!    transaction end (so DDL that rewrites the table waits for them).
//! 2. An UPDATE or DELETE first collects the TIDs its snapshot sees and the WHERE clause
//!    accepts, then changes them; versions it creates have its command id and are invisible to
//!    its own snapshot, so no row is changed twice by one statement.
//! 3. Every heap version an INSERT or UPDATE creates gets an entry in each of the table's
//!    indexes before the statement ends (unique indexes checked), so an index scan finds every
//!    version a snapshot can see.

use super::expr::{self, CmpOp, Scalar};
use super::index;
use crate::access::heap::{self, dml::ChangeOutcome, dml::HeapRel, dml::Tid, tuple, Flow};
use crate::buffer::{BufferPool, Pins};
use crate::catalog::{fold_ident, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::{QueryResult, Session};
use crate::txn::Snapshot;
use crate::types::{SqlType, Value};
use sqlparser::ast::{Expr, FromTable, Insert, SetExpr, TableFactor, TableObject, TableWithJoins};
use std::sync::Arc;

/// How the rows of a statement are found.
#[derive(Clone, Debug)]
pub enum Access {
    Seq,
    /// Index `idx` of the table: equality on its first `eq.len()` columns, then optionally a
    /// range on the next one (bound, inclusive).
    Index {
        idx: usize,
        eq: Vec<Scalar>,
        lo: Option<(Scalar, bool)>,
        hi: Option<(Scalar, bool)>,
    },
}

/// A planned row source: access path plus the whole WHERE clause, rechecked on every row.
#[derive(Clone, Debug)]
pub struct Plan {
    pub table: Arc<Table>,
    pub filter: Option<Scalar>,
    pub access: Access,
    /// Columns to decode: those the filter, the projection or the assignments read.
    pub needed: Vec<bool>,
    /// The table's column types (kept so that a run allocates nothing for them).
    pub types: Vec<SqlType>,
}

/// A query's plan cached in a prepared statement, with the table definitions it was made
/// from (a table whose definition changed since — a new `Arc<Table>` — makes it stale).
#[derive(Debug)]
pub(crate) struct CachedQuery {
    pub bound: crate::exec::BoundQuery,
    pub tables: Vec<Arc<Table>>,
}

fn conjuncts<'a>(e: &'a Scalar, out: &mut Vec<&'a Scalar>) {
    if let Scalar::And(a, b) = e {
        conjuncts(a, out);
        conjuncts(b, out);
    } else {
        out.push(e);
    }
}

/// A comparison of column `col` with something that reads no column: (op as `col op value`,
/// value).
fn col_cmp(e: &Scalar) -> Option<(usize, CmpOp, &Scalar)> {
    let Scalar::Cmp(op, a, b) = e else { return None };
    let free = |x: &Scalar| {
        let mut u = vec![false; 1600];
        x.columns_used(&mut u);
        !u.iter().any(|&b| b)
    };
    match (&**a, &**b) {
        (Scalar::Col(c, _), v) if free(v) => Some((*c, *op, v)),
        (v, Scalar::Col(c, _)) if free(v) => Some((*c, op.commute(), v)),
        _ => None,
    }
}

impl Plan {
    /// Plans the row source for `filter` on `table`: the index whose leading columns the most
    /// equality conditions bound (then a range on the next column), else a sequential scan.
    pub fn new(table: Arc<Table>, filter: Option<Scalar>, mut needed: Vec<bool>) -> Plan {
        let mut access = Access::Seq;
        if let Some(f) = &filter {
            f.columns_used(&mut needed);
            let mut cs = Vec::new();
            conjuncts(f, &mut cs);
            let conds: Vec<(usize, CmpOp, &Scalar)> = cs.iter().filter_map(|c| col_cmp(c)).collect();
            let mut best: Option<(usize, Access)> = None;
            for (i, ix) in table.indexes.iter().enumerate() {
                let mut eq = Vec::new();
                for &c in &ix.columns {
                    match conds.iter().find(|(cc, op, _)| *cc == c && *op == CmpOp::Eq) {
                        Some((_, _, v)) => eq.push((*v).clone()),
                        None => break,
                    }
                }
                let (mut lo, mut hi) = (None, None);
                if let Some(&next) = ix.columns.get(eq.len()) {
                    for (cc, op, v) in &conds {
                        if *cc != next {
                            continue;
                        }
                        match op {
                            CmpOp::Gt | CmpOp::Ge if lo.is_none() => lo = Some(((*v).clone(), *op == CmpOp::Ge)),
                            CmpOp::Lt | CmpOp::Le if hi.is_none() => hi = Some(((*v).clone(), *op == CmpOp::Le)),
                            _ => {}
                        }
                    }
                }
                let score = eq.len() * 4
                    + usize::from(lo.is_some())
                    + usize::from(hi.is_some())
                    + usize::from(ix.unique && eq.len() == ix.columns.len());
                if score > 0 && best.as_ref().is_none_or(|(s, _)| score > *s) {
                    best = Some((score, Access::Index { idx: i, eq, lo, hi }));
                }
            }
            if let Some((_, a)) = best {
                access = a;
            }
        }
        let types = table.columns.iter().map(|c| c.ty).collect();
        Plan { table, filter, access, needed, types }
    }

    /// Calls `f(tid, row)` for each row the snapshot sees and the filter accepts.
    pub fn for_each(
        &self,
        s: &Session,
        snap: &Snapshot,
        params: &[Option<String>],
        mut f: impl FnMut(Tid, &[Value]) -> Result<Flow>,
    ) -> Result<()> {
        let shared = s.shared.clone();
        let (pool, txns, pins) = (&shared.pool, &shared.txns, &s.pins);
        let types = &self.types;
        let mut row = Vec::with_capacity(types.len());
        let tids = match &self.access {
            Access::Seq => None,
            // A snapshot that may see a version the index does not name scans the heap
            // (`sql::index` invariant 5).
            Access::Index { idx, .. } if !self.table.indexes[*idx].usable_by(snap.xmin) => None,
            Access::Index { idx, eq, lo, hi } => {
                index::scan_tids(s, &self.table, &self.table.indexes[*idx], eq, lo.as_ref(), hi.as_ref(), params)?
            }
        };
        let Some(tids) = tids else {
            let fpw = shared.settings.bool("full_page_writes");
            let wal = s.prune_logged(&self.table).then_some(&*shared.wal);
            let heap = HeapRel { pool, pins, rel: self.table.relfile, wal, full_page_writes: fpw, touched: None };
            heap::scan_pruning(&heap, txns, snap, |block, off, t| {
                decode_row(pool, pins, t, types, &self.needed, &mut row)
                    .map_err(|_| heap::corrupt_tuple(pool, self.table.relfile, block, off))?;
                if let Some(w) = &self.filter {
                    if !w.matches(&row, params)? {
                        return Ok(Flow::Continue);
                    }
                }
                f((block, off), &row)
            })?;
            return Ok(());
        };
        let heap = HeapRel { pool, pins, rel: self.table.relfile, wal: None, full_page_writes: false, touched: None };
        let trace = heap::tracing().then(std::time::Instant::now);
        let (mut rows, mut first_row_ns) = (0u64, None);
        let r = self.fetch_each(&heap, txns, snap, params, types, &tids, &mut row, |tid, row| {
            rows += 1;
            if let (Some(t0), None) = (trace, first_row_ns) {
                first_row_ns = Some(t0.elapsed().as_nanos() as u64);
            }
            f(tid, row)
        });
        if let (Some(t0), Access::Index { idx, .. }) = (trace, &self.access) {
            heap::record_trace(heap::ScanTrace {
                rel: self.table.relfile,
                index: Some(self.table.indexes[*idx].name.clone()),
                stats: heap::ScanStats { tuples_visible: rows, ..Default::default() },
                first_row_ns,
                total_ns: t0.elapsed().as_nanos() as u64,
            });
        }
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn fetch_each(
        &self,
        heap: &HeapRel<'_>,
        txns: &crate::txn::TxnManager,
        snap: &Snapshot,
        params: &[Option<String>],
        types: &[SqlType],
        tids: &[Tid],
        row: &mut Vec<Value>,
        mut f: impl FnMut(Tid, &[Value]) -> Result<Flow>,
    ) -> Result<()> {
        let (pool, pins) = (heap.pool, heap.pins);
        for (i, &tid) in tids.iter().enumerate() {
            if i % 256 == 255 {
                crate::interrupt::check_for_interrupts()?;
            }
            let got = heap.fetch(txns, tid, snap, |t| decode_row(pool, pins, t, types, &self.needed, row))?;
            let tid = match got {
                None => continue,
                Some((at, r)) => {
                    r.map_err(|_| heap::corrupt_tuple(pool, self.table.relfile, at.0, at.1))?;
                    at
                }
            };
            if let Some(w) = &self.filter {
                if !w.matches(row, params)? {
                    continue;
                }
            }
            if let Flow::Stop = f(tid, row)? {
                break;
            }
        }
        Ok(())
    }
}

/// Decodes the `needed` columns of tuple `t` (others read as NULL), fetching TOASTed values.
pub(crate) fn decode_row(pool: &BufferPool, pins: &Pins, t: &[u8], types: &[SqlType], needed: &[bool], out: &mut Vec<Value>) -> Result<()> {
    if !needed.iter().any(|&n| n) {
        // `count(*)` and the like: no column is read, so none is decoded.
        if out.len() != types.len() || out.iter().any(|v| !matches!(v, Value::Null)) {
            out.clear();
            out.resize(types.len(), Value::Null);
        }
        return Ok(());
    }
    let mut attrs = Vec::with_capacity(types.len());
    tuple::deform(t, types, &mut attrs).map_err(|c| PgError::new(sqlstate::DATA_CORRUPTED, c.0))?;
    out.clear();
    let mut scratch = Vec::new();
    for (i, a) in attrs.iter().enumerate() {
        out.push(match a {
            Some(a) if needed[i] => Value::decode(&types[i], crate::copy::exec::attr_bytes(pool, pins, *a, &mut scratch)?),
            _ => Value::Null,
        });
    }
    Ok(())
}

/// Forms a heap tuple for `values` (one per column, NULL = `Value::Null`, already of the
/// column types): NOT NULL checked, big values moved to TOAST.
pub(crate) fn form_tuple(s: &mut Session, table: &Table, stored: &[Option<Vec<u8>>]) -> Result<Vec<u8>> {
    let shared = s.shared.clone();
    let types: Vec<SqlType> = table.columns.iter().map(|c| c.ty).collect();
    let mut b = tuple::TupleBuilder::new(types.len());
    b.begin();
    for (i, v) in stored.iter().enumerate() {
        match v {
            None => b.push_null(),
            Some(v) if types[i].fixed_len().is_some() => b.push_fixed(v),
            Some(v) => b.push_varlena(v),
        }
    }
    for (c, col) in table.columns.iter().enumerate() {
        if col.not_null && b.is_null(c) {
            let detail = crate::copy::exec::failing_row(&mut b, &types, &shared.pool, &s.pins);
            return Err(PgError::new(
                sqlstate::NOT_NULL_VIOLATION,
                format!("null value in column \"{}\" of relation \"{}\" violates not-null constraint", col.name, table.name),
            )
            .with_detail(detail)
            .with_table(&table.name)
            .with_column(&col.name));
        }
    }
    let bs = shared.pool.block_size();
    let threshold = match shared.settings.bytes("heapstore.toast_threshold") {
        0 => heap::toast::default_threshold(bs),
        n => n as usize,
    };
    if b.len() > threshold {
        if let Some(trel) = table.toast_relfile {
            let (xid, cid) = (s.xid(), s.txn().cid);
            let wal = crate::exec::rows::wal_for(s, table);
            let fpw = shared.settings.bool("full_page_writes");
            let touched = s.touch_log();
            let mut tb = heap::BulkInsert::logged(&shared.pool, &s.pins, trel, true, wal.then_some(&*shared.wal), fpw);
            tb.touched = touched.as_deref();
            heap::toast::toast_row(&mut b, threshold, &mut tb, trel, xid, cid)?;
            tb.finish()?;
        }
    }
    Ok(b.finish().to_vec())
}

/// Stored forms of `values` for the table's columns (assignment conversion).
fn store_row(table: &Table, values: &[Value]) -> Result<Vec<Option<Vec<u8>>>> {
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        if *v == Value::Null {
            out.push(None);
            continue;
        }
        let mut b = Vec::new();
        expr::store(v, &table.columns[i].ty, &mut b).map_err(|e| {
            if e.code == sqlstate::NUMERIC_VALUE_OUT_OF_RANGE || e.code == sqlstate::INVALID_TEXT_REPRESENTATION {
                e
            } else {
                e.with_context(format!("column \"{}\"", table.columns[i].name))
            }
        })?;
        out.push(Some(b));
    }
    Ok(out)
}

/// Whether the table's changes are WAL-logged, and full_page_writes.
fn heap_rel(s: &mut Session, table: &Table) -> (bool, bool) {
    let wal = crate::exec::rows::wal_for(s, table);
    (wal, s.shared.settings.bool("full_page_writes"))
}

/// INSERT INTO t [(cols)] VALUES (...), (...).
pub fn insert(s: &mut Session, ins: Insert, params: &[Option<String>]) -> Result<QueryResult> {
    if ins.on.is_some() || ins.returning.is_some() {
        return Err(PgError::feature("INSERT ... ON CONFLICT / RETURNING is not supported yet"));
    }
    let TableObject::TableName(name) = &ins.table else { return Err(PgError::feature("INSERT into a function is not supported")) };
    let table = s.table(&super::ddl_table_name(name)?)?;
    let cols: Vec<usize> = if ins.columns.is_empty() {
        (0..table.columns.len()).collect()
    } else {
        let mut v = Vec::new();
        for c in &ins.columns {
            let n = fold_ident(c);
            let i = table.column_index(&n).ok_or_else(|| {
                PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" of relation \"{}\" does not exist", table.name))
            })?;
            if v.contains(&i) {
                return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{n}\" specified more than once")));
            }
            v.push(i);
        }
        v
    };
    let Some(src) = &ins.source else { return Err(PgError::feature("INSERT without VALUES is not supported")) };
    let table = s.lock_table_fresh(&table, LockMode::RowExclusive)?;
    let SetExpr::Values(values) = &*src.body else {
        return insert_select(s, &table, &cols, src, params);
    };
    // No column can be referenced in VALUES: bind against a table without columns.
    let empty = Table { columns: Vec::new(), indexes: Vec::new(), ..(*table).clone() };
    let mut rows = Vec::with_capacity(values.rows.len());
    for r in &values.rows {
        if r.len() > cols.len() {
            return Err(PgError::syntax("INSERT has more expressions than target columns"));
        }
        let mut vals = vec![Value::Null; table.columns.len()];
        for (k, e) in r.iter().enumerate() {
            if matches!(e, Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default")) {
                continue;
            }
            let c = cols[k];
            let b = bind_untyped(e, &empty, table.columns[c].ty, s.txn().start_us)?;
            check_assignment(&b, &table.columns[c])?;
            vals[c] = b.eval(&[], params)?;
        }
        rows.push(vals);
    }
    let xid = s.xid();
    let cid = s.txn().cid;
    let (wal, fpw) = heap_rel(s, &table);
    let mut n = 0u64;
    for vals in &rows {
        insert_row(s, &table, vals, (wal, fpw), xid, cid)?;
        n += 1;
    }
    Ok(super::tag(&format!("INSERT 0 {n}")))
}

/// Whether a value of type `from` may be assigned to a column of type `to` (PostgreSQL's
/// assignment casts among the types heapstore has).
fn assignable(from: &SqlType, to: &SqlType) -> bool {
    use crate::types::TypeId::*;
    let num = |t: crate::types::TypeId| matches!(t, Int2 | Int4 | Int8 | Float4 | Float8 | Numeric);
    let text = |t: crate::types::TypeId| matches!(t, Text | Varchar | Bpchar | Name | Char);
    if to.id == Char && !text(from.id) {
        return false; // "char" from a number is a byte value in PostgreSQL: explicit only
    }
    from.id == to.id
        || (num(from.id) && num(to.id))
        || text(to.id)
        || (expr::is_datetime(from.id) && expr::is_datetime(to.id))
        || matches!((from.id, to.id), (Int2 | Int4 | Int8, Oid) | (Oid, Int4 | Int8))
}

/// `INSERT INTO t [(cols)] SELECT ...` (any query): the query runs to completion first, with
/// the statement's snapshot, so the rows it reads never include the ones being inserted.
pub(crate) fn insert_select(
    s: &mut Session,
    table: &Arc<Table>,
    cols: &[usize],
    src: &sqlparser::ast::Query,
    params: &[Option<String>],
) -> Result<QueryResult> {
    let now = s.txn.as_ref().map(|t| t.start_us);
    let b = super::query::Planner::new(s, now).query(src, &[])?;
    if b.columns.len() > cols.len() {
        return Err(PgError::syntax("INSERT has more expressions than target columns"));
    }
    for (k, oc) in b.columns.iter().enumerate() {
        let col = &table.columns[cols[k]];
        if !assignable(&oc.ty, &col.ty) {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("column \"{}\" is of type {} but expression is of type {}", col.name, col.ty.name(), oc.ty.name()),
            )
            .with_hint("You will need to rewrite or cast the expression."));
        }
    }
    s.lock_table(table, LockMode::RowExclusive)?;
    crate::exec::lock_tables(s, &b.node)?;
    let snap = s.snapshot();
    let rows = crate::exec::Exec::new(s, snap, params).collect(&b.node, &[])?;
    let xid = s.xid();
    let cid = s.txn().cid;
    let (wal, fpw) = heap_rel(s, table);
    let mut vals = vec![Value::Null; table.columns.len()];
    for r in &rows {
        vals.iter_mut().for_each(|v| *v = Value::Null);
        for (k, v) in r.iter().enumerate() {
            vals[cols[k]] = v.clone();
        }
        insert_row(s, table, &vals, (wal, fpw), xid, cid)?;
    }
    Ok(super::tag(&format!("INSERT 0 {}", rows.len())))
}

/// The types of a row statement's parameters as its runner binds them: an INSERT value takes
/// its target column's type, an UPDATE assignment its column's, a comparison the other side's,
/// an explicit cast its type. Unfixed ones stay None.
pub(crate) fn param_types(s: &Session, st: &sqlparser::ast::Statement, out: &mut Vec<Option<SqlType>>) -> Result<()> {
    use sqlparser::ast::Statement;
    match st {
        Statement::Insert(ins) => {
            let TableObject::TableName(name) = &ins.table else { return Ok(()) };
            let table = s.table(&super::ddl_table_name(name)?)?;
            let cols: Vec<usize> = if ins.columns.is_empty() {
                (0..table.columns.len()).collect()
            } else {
                ins.columns.iter().map(|c| table.column_index(&fold_ident(c)).unwrap_or(usize::MAX)).collect()
            };
            let empty = Table { columns: Vec::new(), indexes: Vec::new(), ..(*table).clone() };
            if let Some(SetExpr::Values(values)) = ins.source.as_deref().map(|q| &*q.body) {
                for r in &values.rows {
                    for (k, e) in r.iter().enumerate() {
                        if let Some(&c) = cols.get(k).filter(|&&c| c < table.columns.len()) {
                            bind_untyped(e, &empty, table.columns[c].ty, 0)?.param_types(out);
                        }
                    }
                }
            }
        }
        Statement::Update { table, assignments, selection, .. } => {
            let table = s.table(&single_table(table)?)?;
            for a in assignments {
                if let sqlparser::ast::AssignmentTarget::ColumnName(cn) = &a.target {
                    let n = cn.0.last().and_then(|p| p.as_ident()).map(fold_ident).unwrap_or_default();
                    if let Some(c) = table.column_index(&n) {
                        bind_untyped(&a.value, &table, table.columns[c].ty, 0)?.param_types(out);
                    }
                }
            }
            if let Some(w) = selection {
                expr::bind(w, &table)?.param_types(out);
            }
        }
        Statement::Delete(d) => {
            let (FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v)) = &d.from;
            if let ([t], Some(w)) = (v.as_slice(), &d.selection) {
                let table = s.table(&single_table(t)?)?;
                expr::bind(w, &table)?.param_types(out);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Binds `e`; an untyped literal or parameter takes `ty` (the target column's type).
/// `CURRENT_TIMESTAMP`, `now()`, `transaction_timestamp()` and `LOCALTIMESTAMP` assigned to a
/// `timestamp` or `date` column are the transaction's start time (`now_us`, microseconds since
/// 2000-01-01 UTC; the session time zone is UTC), as PostgreSQL assigns them.
/// Stores one row of column values: the heap tuple (WAL-logged when `wal.0`, noted in the
/// savepoint touch log), then its index entries with their unique checks.
fn insert_row(
    s: &mut Session,
    table: &Table,
    vals: &[Value],
    wal: (bool, bool),
    xid: crate::txn::Xid,
    cid: crate::txn::CommandId,
) -> Result<()> {
    let (logged, fpw) = wal;
    let stored = store_row(table, vals)?;
    let mut t = form_tuple(s, table, &stored)?;
    let shared = s.shared.clone();
    let touched = s.touch_log();
    let heap = HeapRel {
        pool: &shared.pool,
        pins: &s.pins,
        rel: table.relfile,
        wal: logged.then_some(&*shared.wal),
        full_page_writes: fpw,
        touched: touched.as_deref(),
    };
    let tid = heap.insert(&mut t, xid, cid)?;
    s.count_changes(table.oid, |p| p.inserted += 1);
    index::insert_entries(s, table, &stored, tid)
}

/// PostgreSQL's assignment rule for a value given to a column: 42804 where no assignment cast
/// exists (a number into "char", ...).
fn check_assignment(e: &Scalar, col: &crate::catalog::Column) -> Result<()> {
    match expr::type_of(e) {
        Some(from) if !assignable(&from, &col.ty) => Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!("column \"{}\" is of type {} but expression is of type {}", col.name, col.ty.name(), from.name()),
        )
        .with_hint("You will need to rewrite or cast the expression.")),
        _ => Ok(()),
    }
}

fn bind_untyped(e: &Expr, table: &Table, ty: SqlType, now_us: i64) -> Result<Scalar> {
    if expr::is_transaction_timestamp(e) && expr::is_datetime(ty.id) {
        let ts = Scalar::Cast(Box::new(Scalar::Const(Value::Timestamp(now_us))), ty);
        return Ok(Scalar::Const(ts.eval(&[], &[])?));
    }
    Ok(match expr::bind(e, table)? {
        Scalar::Unknown(t) => Scalar::Const(expr::parse_as(&ty, &t)?),
        Scalar::Param(n, None) => Scalar::Param(n, Some(ty)),
        other => other,
    })
}

fn single_table(t: &TableWithJoins) -> Result<String> {
    if !t.joins.is_empty() {
        return Err(PgError::feature("joins are not supported"));
    }
    let TableFactor::Table { name, .. } = &t.relation else { return Err(PgError::feature("only tables can be changed")) };
    super::ddl_table_name(name)
}

/// UPDATE t SET col = expr [, ...] [WHERE ...].
pub fn update(
    s: &mut Session,
    table: &TableWithJoins,
    assignments: &[sqlparser::ast::Assignment],
    selection: Option<&Expr>,
    params: &[Option<String>],
) -> Result<QueryResult> {
    let table = s.table(&single_table(table)?)?;
    let mut sets: Vec<(usize, Scalar)> = Vec::new();
    let mut needed = vec![false; table.columns.len()];
    for a in assignments {
        let sqlparser::ast::AssignmentTarget::ColumnName(cn) = &a.target else {
            return Err(PgError::feature("multiple-column assignment is not supported"));
        };
        let n = cn.0.last().and_then(|p| p.as_ident()).map(fold_ident).unwrap_or_default();
        let c = table.column_index(&n).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" of relation \"{}\" does not exist", table.name))
        })?;
        if sets.iter().any(|(x, _)| *x == c) {
            return Err(PgError::syntax(format!("multiple assignments to same column \"{n}\"")));
        }
        let e = bind_untyped(&a.value, &table, table.columns[c].ty, s.txn().start_us)?;
        check_assignment(&e, &table.columns[c])?;
        e.columns_used(&mut needed);
        sets.push((c, e));
    }
    // The new version copies every column.
    needed.iter_mut().for_each(|b| *b = true);
    let filter = selection.map(|w| expr::bind(w, &table)).transpose()?;
    let table = s.lock_table_fresh(&table, LockMode::RowExclusive)?;
    let plan = Plan::new(table.clone(), filter, needed);
    let n = change_rows(s, &plan, params, Some(&sets))?;
    Ok(super::tag(&format!("UPDATE {n}")))
}

/// DELETE FROM t [WHERE ...].
pub fn delete(s: &mut Session, d: sqlparser::ast::Delete, params: &[Option<String>]) -> Result<QueryResult> {
    if d.using.is_some() || d.returning.is_some() || d.limit.is_some() || !d.order_by.is_empty() {
        return Err(PgError::feature("DELETE ... USING / RETURNING / LIMIT is not supported"));
    }
    let from = match &d.from {
        FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
    };
    let [t] = from.as_slice() else { return Err(PgError::feature("DELETE from more than one table is not supported")) };
    let table = s.table(&single_table(t)?)?;
    let filter = d.selection.as_ref().map(|w| expr::bind(w, &table)).transpose()?;
    let table = s.lock_table_fresh(&table, LockMode::RowExclusive)?;
    let plan = Plan::new(table.clone(), filter, vec![false; table.columns.len()]);
    let n = change_rows(s, &plan, params, None)?;
    Ok(super::tag(&format!("DELETE {n}")))
}

/// PostgreSQL's 40001 for a REPEATABLE READ change that met a concurrent `what` (update or
/// delete) committed after its snapshot.
fn serialization_failure(what: &str) -> PgError {
    PgError::new(sqlstate::SERIALIZATION_FAILURE, format!("could not serialize access due to concurrent {what}"))
}

/// The UPDATE / DELETE loop (module doc: READ COMMITTED, EvalPlanQual). `sets` None = delete.
fn change_rows(s: &mut Session, plan: &Plan, params: &[Option<String>], sets: Option<&[(usize, Scalar)]>) -> Result<u64> {
    let table = plan.table.clone();
    let snap = s.snapshot();
    let mut targets: Vec<(Tid, Vec<Value>)> = Vec::new();
    plan.for_each(s, &snap, params, |tid, row| {
        targets.push((tid, row.to_vec()));
        Ok(Flow::Continue)
    })?;
    if targets.is_empty() {
        return Ok(0);
    }
    let xid = s.xid();
    let cid = s.txn().cid;
    let (wal, fpw) = heap_rel(s, &table);
    let types: Vec<SqlType> = table.columns.iter().map(|c| c.ty).collect();
    let all = vec![true; types.len()];
    let indexed = indexed_columns(&table);
    let mut n = 0u64;
    for (first_tid, first_row) in targets {
        let (mut tid, mut row) = (first_tid, first_row);
        // Bounded: each turn either ends, waits for a transaction to end, or moves one version
        // along an update chain.
        for _ in 0..1_000_000u32 {
            let shared = s.shared.clone();
            let mut new_version = None;
            let mut hot_ok = false;
            if let Some(sets) = sets {
                let mut vals = row.clone();
                for (c, e) in sets {
                    vals[*c] = e.eval(&row, params)?;
                }
                let stored = store_row(&table, &vals)?;
                hot_ok = same_index_columns(&table, &indexed, &row, &stored)?;
                let t = form_tuple(s, &table, &stored)?;
                new_version = Some((t, stored));
            }
            let touched = s.touch_log();
            let heap = HeapRel {
                pool: &shared.pool,
                pins: &s.pins,
                rel: table.relfile,
                wal: wal.then_some(&*shared.wal),
                full_page_writes: fpw,
                touched: touched.as_deref(),
            };
            let outcome = match &mut new_version {
                Some((t, _)) => heap.update(&shared.txns, tid, t, xid, cid, hot_ok)?,
                None => heap.delete(&shared.txns, tid, xid, cid)?,
            };
            if let (ChangeOutcome::Done(_) | ChangeOutcome::DoneHot(_), Some(trel)) = (outcome, table.toast_relfile) {
                // The old version's out-of-line values die with it (`heap::toast` invariant 1).
                let pointers = heap.fetch_any(tid, |t| heap::toast::pointers_of(t, &types))?.transpose()?.unwrap_or_default();
                if !pointers.is_empty() {
                    let toast = HeapRel { rel: trel, ..heap };
                    heap::toast::delete_chunks(&toast, &shared.txns, &pointers, xid, cid)?;
                }
            }
            match outcome {
                ChangeOutcome::Done(new_tid) => {
                    let update = new_version.is_some();
                    s.count_changes(table.oid, |p| if update { p.updated += 1 } else { p.deleted += 1 });
                    if let Some((_, stored)) = &new_version {
                        index::insert_entries(s, &table, stored, new_tid)?;
                    }
                    n += 1;
                    break;
                }
                ChangeOutcome::DoneHot(_) => {
                    s.count_changes(table.oid, |p| {
                        p.updated += 1;
                        p.hot_updated += 1;
                    });
                    n += 1;
                    break;
                }
                ChangeOutcome::Gone => break,
                ChangeOutcome::Deleted if s.snapshot_is_transaction_wide() => return Err(serialization_failure("delete")),
                ChangeOutcome::Deleted => break,
                ChangeOutcome::Wait(other) => s.wait_for_xid(other)?,
                // REPEATABLE READ cannot follow the chain to a version its snapshot does not see.
                ChangeOutcome::Updated(..) if s.snapshot_is_transaction_wide() => return Err(serialization_failure("update")),
                ChangeOutcome::Updated(next, updater) => {
                    let mut next_row = Vec::new();
                    let got = heap.fetch_any(next, |t| {
                        // A line pointer reused after pruning holds someone else's tuple.
                        (tuple::xmin(t) == updater).then(|| decode_row(&shared.pool, &s.pins, t, &types, &all, &mut next_row))
                    })?;
                    match got.flatten() {
                        Some(r) => r?,
                        None => break,
                    }
                    if let Some(w) = &plan.filter {
                        if !w.matches(&next_row, params)? {
                            break;
                        }
                    }
                    tid = next;
                    row = next_row;
                }
            }
        }
    }
    Ok(n)
}

/// The columns any index of `table` covers.
fn indexed_columns(table: &Table) -> Vec<usize> {
    let mut cols: Vec<usize> = table.indexes.iter().flat_map(|ix| ix.columns.iter().copied()).collect();
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// Whether the new version's indexed columns are stored exactly as the old version's (a HOT
/// update may then leave the indexes alone: `access::heap::prune` invariant 1). Bytes are
/// compared, not values: `1.0` and `1.00` are equal numerics with different keys.
fn same_index_columns(table: &Table, indexed: &[usize], old: &[Value], new: &[Option<Vec<u8>>]) -> Result<bool> {
    let mut b = Vec::new();
    for &c in indexed {
        match (&old[c], &new[c]) {
            (Value::Null, None) => {}
            (Value::Null, Some(_)) | (_, None) => return Ok(false),
            (v, Some(n)) => {
                b.clear();
                expr::store(v, &table.columns[c].ty, &mut b)?;
                if b != *n {
                    return Ok(false);
                }
            }
        }
    }
    Ok(true)
}

/// Runs a prepared row statement with its parameters.
type RunWithParams = fn(&mut Session, &sqlparser::ast::Statement, &[Option<String>]) -> Result<QueryResult>;

/// A prepared row statement (INSERT / UPDATE / DELETE, `$n` bound as parameters without
/// copying the statement), or a prepared single-table `SELECT ... FROM t WHERE ...` run with
/// its cached plan: planned at the first run (parameters stay `$n` nodes, typed by their context), re-planned only when the
/// table's definition changed (a new `Arc<Table>`: CREATE INDEX, TRUNCATE, DROP). None when the
/// statement is not of that shape (the caller substitutes and runs it the general way).
pub(crate) fn cached_select(s: &mut Session, p: &super::Prepared, params: &[Option<String>]) -> Option<Result<QueryResult>> {
    use sqlparser::ast::Statement;
    // Row statements bind `$n` as parameter nodes: no copy of the statement, no substitution.
    let dml: Option<RunWithParams> = match &p.stmt {
        Some(Statement::Update { from: None, returning: None, or: None, limit: None, .. }) => Some(|s, st, params| {
            let Statement::Update { table, assignments, selection, .. } = st else { unreachable!("matched above") };
            update(s, table, assignments, selection.as_ref(), params)
        }),
        Some(Statement::Delete(_)) => Some(|s, st, params| {
            let Statement::Delete(d) = st else { unreachable!("matched above") };
            delete(s, d.clone(), params)
        }),
        Some(Statement::Insert(_)) => Some(|s, st, params| {
            let Statement::Insert(i) = st else { unreachable!("matched above") };
            insert(s, i.clone(), params)
        }),
        _ => None,
    };
    if let (Some(run), Some(st)) = (dml, &p.stmt) {
        if s.txn.as_ref().is_some_and(|t| t.failed) {
            return Some(Err(PgError::new(
                sqlstate::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            )));
        }
        s.begin_implicit();
        if let Some(c) = super::write_command(st) {
            if let Err(e) = s.check_writable(c) {
                return Some(Err(e));
            }
        }
        s.txn().ran_statement = true;
        let r = run(s, st, params);
        if r.is_ok() {
            s.command_done();
        }
        return Some(r);
    }
    let Some(Statement::Query(q)) = &p.stmt else { return None };
    if s.txn.as_ref().is_some_and(|t| t.failed) {
        return Some(Err(PgError::new(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        )));
    }
    let run = |s: &mut Session| -> Result<QueryResult> {
        let cached = p.plan.lock().expect("poisoned").clone();
        let fresh = cached.filter(|c| c.tables.iter().all(|t| s.lookup_table(&t.name).is_some_and(|now| Arc::ptr_eq(&now, t))));
        let plan = match fresh {
            Some(c) => c,
            None => {
                let now = s.txn.as_ref().map(|t| t.start_us);
                let planner = super::query::Planner::new(s, now);
                let bound = planner.query(q, &[])?;
                let mut tables = Vec::new();
                bound.node.tables(&mut tables);
                let c = Arc::new(CachedQuery { bound, tables });
                if !planner.used_now() {
                    *p.plan.lock().expect("poisoned") = Some(c.clone());
                }
                c
            }
        };
        super::query::run_bound(s, &plan.bound, params)
    };
    s.begin_implicit();
    let r = run(s);
    if r.is_ok() {
        s.command_done();
    }
    Some(r)
}

//! The rows-in layer: what every statement that adds row versions to a table goes through
//! after the heap insert — index maintenance with unique checks, and the decision whether the
//! table's changes are WAL-logged. COPY (`copy::exec`), INSERT and UPDATE (`sql::dml`) call
//! here; none of them keeps an index or decides WAL by itself.
//!
//! Invariants:
//! 1. Every heap version a statement creates gets an entry in each index of its table before
//!    the statement ends; a unique index is checked under its B-tree leaf's lock against heap
//!    visibility (see `sql::index` for the verdict rules).
//! 2. A relation whose changes skip the WAL (created in this transaction with `wal_level =
//!    minimal`, or unlogged) is recorded in the transaction, which syncs it at commit.

use crate::access::btree::keycode;
use crate::access::btree::{BTree, UniqueVerdict};
use crate::access::heap::dml::{xid_state, HeapRel, Tid, XidState};
use crate::access::heap::tuple;
use crate::catalog::{Index, Table, EXPR_KEY};
use crate::error::{sqlstate, PgError, Result};
use crate::session::Session;
use crate::sql::expr::Scalar;
use crate::txn::{TxnManager, Xid, INVALID_XID};
use crate::types::{SqlType, Value};

/// Whether COPY into `table` is WAL-logged in this transaction: not for UNLOGGED and
/// temporary tables, and not (with wal_level = minimal) for a table created or truncated in
/// this same transaction, whose files are synced at commit instead. Records the choice in the
/// transaction.
pub fn wal_for(s: &mut Session, table: &Table) -> bool {
    if table.persistence != crate::catalog::Persistence::Permanent {
        return false;
    }
    let minimal = s.shared.settings.get("wal_level").map(|v| v == "minimal").unwrap_or(false);
    let t = s.txn();
    if minimal && t.new_files.contains(&table.relfile) {
        for rel in std::iter::once(table.relfile).chain(table.toast_relfile) {
            if !t.wal_skipped.contains(&rel) {
                t.wal_skipped.push(rel);
            }
        }
        return false;
    }
    t.wrote_wal = true;
    true
}

/// Whether the table's index changes are WAL-logged (as its heap's); relations that skip the
/// WAL are synced at commit.
pub fn index_wal(s: &mut Session, table: &Table) -> bool {
    let wal = wal_for(s, table);
    if !wal && table.persistence == crate::catalog::Persistence::Permanent {
        let t = s.txn();
        for ix in &table.indexes {
            if !t.wal_skipped.contains(&ix.relfile) {
                t.wal_skipped.push(ix.relfile);
            }
        }
    }
    wal
}

/// Encodes the key of `ix` for a row's stored column values, its expression keys computed
/// with `exprs` (the index's bound key expressions, [`IndexExprs::keys`]). True if a key is
/// NULL.
pub fn key_of(table: &Table, ix: &Index, exprs: &[Scalar], stored: &[Option<Vec<u8>>], out: &mut Vec<u8>) -> Result<bool> {
    out.clear();
    if !ix.has_exprs() {
        let vals: Vec<(SqlType, Option<&[u8]>)> = ix.columns.iter().map(|&c| (table.columns[c].ty, stored[c].as_deref())).collect();
        return Ok(keycode::encode_key_opts(out, &vals, &ix.options));
    }
    let computed = expr_keys(table, exprs, stored)?;
    let mut vals: Vec<(SqlType, Option<&[u8]>)> = Vec::with_capacity(ix.columns.len());
    let mut next = computed.iter();
    for &c in &ix.columns {
        vals.push(if c == EXPR_KEY {
            let (ty, v) = next.next().expect("one bound expression for each expression key");
            (*ty, v.as_deref())
        } else {
            (table.columns[c].ty, stored[c].as_deref())
        });
    }
    Ok(keycode::encode_key_opts(out, &vals, &ix.options))
}

/// The values of key expressions `exprs` for a row's stored columns, in stored form with
/// their types (None: NULL), computed as a stored definition is read (`types::tz::
/// stored_definition`: the session's settings play no part, `sql::index` invariant 7).
pub fn expr_keys(table: &Table, exprs: &[Scalar], stored: &[Option<Vec<u8>>]) -> Result<Vec<(SqlType, Option<Vec<u8>>)>> {
    let row = row_for(table, exprs.iter(), stored);
    let _stored = crate::types::tz::stored_definition();
    exprs
        .iter()
        .map(|e| {
            let ty = crate::sql::expr::type_of(e).ok_or_else(|| PgError::internal("an index expression of no type"))?;
            let v = e.eval(&row, &[])?;
            if v == Value::Null {
                return Ok((ty, None));
            }
            let mut b = Vec::new();
            crate::sql::expr::store(&v, &ty, &mut b)?;
            Ok((ty, Some(b)))
        })
        .collect()
}

/// A row of `table` with the columns `exprs` read decoded from `stored` (the others NULL).
fn row_for<'a>(table: &Table, exprs: impl Iterator<Item = &'a Scalar>, stored: &[Option<Vec<u8>>]) -> Vec<Value> {
    let mut used = vec![false; table.columns.len()];
    for e in exprs {
        e.columns_used(&mut used);
    }
    stored
        .iter()
        .zip(&table.columns)
        .zip(&used)
        .map(|((v, c), &u)| match v {
            Some(b) if u => Value::decode(&c.ty, b),
            _ => Value::Null,
        })
        .collect()
}

/// One index's bound expressions: its partial predicate (None: not partial) and its key
/// expressions (empty: none).
#[derive(Debug, Default)]
pub struct BoundIndex {
    pub pred: Option<Scalar>,
    pub keys: Vec<Scalar>,
}

/// The bound expressions of a table's indexes, by index.
pub type IndexExprs = std::sync::Arc<Vec<BoundIndex>>;

/// The bound predicates and key expressions of `table`'s indexes (`sql::index::
/// bind_predicate`, `bind_key_exprs`).
pub fn index_exprs(table: &Table) -> Result<IndexExprs> {
    let v = table
        .indexes
        .iter()
        .map(|ix| {
            Ok(BoundIndex {
                pred: ix.predicate.as_deref().map(|p| crate::sql::index::bind_predicate(table, p)).transpose()?,
                keys: crate::sql::index::bind_key_exprs(table, ix)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(std::sync::Arc::new(v))
}

/// Whether some index of `table` is partial or has an expression key.
pub fn has_index_exprs(table: &Table) -> bool {
    table.indexes.iter().any(|ix| ix.predicate.is_some() || ix.has_exprs())
}

/// A session's bound index expressions, by what they were bound from: the table's oid, its
/// columns' names and types in order, and the expressions' text. Binding reads nothing else,
/// so a definition with the same key binds the same way: any column renamed, added,
/// dropped or retyped, or any index made or dropped, in this session or another, committed
/// or rolled back, gives another key.
#[derive(Default)]
pub struct PredicateCache(Vec<(PredicateKey, IndexExprs)>);

/// What a table's index expressions were bound from (see [`PredicateCache`]).
struct PredicateKey {
    oid: crate::catalog::Oid,
    columns: Vec<(String, SqlType)>,
    exprs: Vec<(Option<String>, Vec<String>)>,
}

impl PredicateKey {
    fn of(table: &Table) -> PredicateKey {
        PredicateKey {
            oid: table.oid,
            columns: table.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
            exprs: table.indexes.iter().map(|ix| (ix.predicate.clone(), ix.exprs.clone())).collect(),
        }
    }

    /// Whether `table`'s definition has this key (compared without building one).
    fn matches(&self, table: &Table) -> bool {
        self.oid == table.oid
            && self.columns.len() == table.columns.len()
            && self.columns.iter().zip(&table.columns).all(|((n, ty), c)| *n == c.name && *ty == c.ty)
            && self.exprs.len() == table.indexes.len()
            && self.exprs.iter().zip(&table.indexes).all(|((p, e), ix)| *p == ix.predicate && *e == ix.exprs)
    }
}

/// [`index_exprs`] through the session's cache: a row statement binds them once.
pub fn cached_index_exprs(s: &Session, table: &Table) -> Result<IndexExprs> {
    if let Some((_, p)) = s.index_preds.borrow().0.iter().find(|(k, _)| k.matches(table)) {
        return Ok(p.clone());
    }
    let p = index_exprs(table)?;
    let mut cache = s.index_preds.borrow_mut();
    if cache.0.len() >= 16 {
        cache.0.remove(0);
    }
    cache.0.push((PredicateKey::of(table), p.clone()));
    Ok(p)
}

/// Whether a row version (its stored columns) satisfies a partial index's bound predicate:
/// true, not false or NULL.
pub fn predicate_holds(pred: &Scalar, table: &Table, stored: &[Option<Vec<u8>>]) -> Result<bool> {
    let row = row_for(table, std::iter::once(pred), stored);
    let _stored = crate::types::tz::stored_definition();
    Ok(pred.eval(&row, &[])? == Value::Bool(true))
}

/// Stored column values of a heap tuple (TOASTed values fetched).
pub fn stored_of(s: &Session, table: &Table, t: &[u8]) -> Result<Vec<Option<Vec<u8>>>> {
    stored_of_parts(&s.shared.pool, &s.pins, table, t)
}

pub fn stored_of_parts(
    pool: &crate::buffer::BufferPool,
    pins: &crate::buffer::Pins,
    table: &Table,
    t: &[u8],
) -> Result<Vec<Option<Vec<u8>>>> {
    let types: Vec<SqlType> = table.columns.iter().map(|c| c.ty).collect();
    let mut attrs = Vec::with_capacity(types.len());
    tuple::deform(t, &types, &mut attrs).map_err(|c| PgError::new(sqlstate::DATA_CORRUPTED, c.0))?;
    let mut scratch = Vec::new();
    attrs
        .iter()
        .map(|a| match a {
            None => Ok(None),
            Some(a) => crate::access::heap::toast::attr_bytes(pool, pins, *a, &mut scratch).map(|v| Some(v.to_vec())),
        })
        .collect()
}

/// "Key (a, lower(b))=(1, x)" names and values in output form (`exprs`: the index's bound
/// key expressions).
pub fn key_text(table: &Table, ix: &Index, exprs: &[Scalar], stored: &[Option<Vec<u8>>]) -> (String, String) {
    let computed = if ix.has_exprs() { expr_keys(table, exprs, stored).ok() } else { None };
    let mut next = 0;
    let mut names = Vec::with_capacity(ix.columns.len());
    let mut vals = Vec::with_capacity(ix.columns.len());
    let show = |ty: &SqlType, v: Option<&[u8]>| match v {
        None => "null".to_string(),
        Some(v) => {
            let mut out = Vec::new();
            ty.output_text(v, &mut out);
            String::from_utf8_lossy(&out).into_owned()
        }
    };
    for &c in &ix.columns {
        if c == EXPR_KEY {
            names.push(crate::sql::index::expr_display(&ix.exprs[next]));
            vals.push(match computed.as_ref().and_then(|v| v.get(next)) {
                Some((ty, v)) => show(ty, v.as_deref()),
                None => "?".to_string(),
            });
            next += 1;
        } else {
            names.push(table.columns[c].name.clone());
            vals.push(show(&table.columns[c].ty, stored[c].as_deref()));
        }
    }
    (names.join(", "), vals.join(", "))
}

/// The unique-check verdict for the row whose index entry names `tid` (invariant 2): the
/// strongest verdict over the versions of its HOT chain. Every version that may be live or in
/// progress carries the entry's key (`sql::index` invariant 5: an index names a chain under its
/// newest version's key, and HOT updates leave indexed columns alone); older versions with
/// another key were deleted by committed transactions and never conflict.
fn verdict(heap: &HeapRel<'_>, txns: &TxnManager, me: Xid, tid: Tid) -> Result<UniqueVerdict> {
    let mut members: Vec<(Xid, Xid)> = Vec::with_capacity(2);
    heap.for_each_member(tid, |_, t| members.push((tuple::xmin(t), tuple::xmax(t))))?;
    let mut wait = None;
    for (xmin, xmax) in &members {
        match version_verdict(txns, me, *xmin, *xmax) {
            UniqueVerdict::Conflict => return Ok(UniqueVerdict::Conflict),
            UniqueVerdict::WaitFor(x) => wait = wait.or(Some(x)),
            UniqueVerdict::NoConflict => {}
        }
    }
    Ok(wait.map_or(UniqueVerdict::NoConflict, UniqueVerdict::WaitFor))
}

/// The unique-check verdict for one heap version's header.
fn version_verdict(txns: &TxnManager, me: Xid, xmin: Xid, xmax: Xid) -> UniqueVerdict {
    if xmin != me {
        match xid_state(txns, xmin) {
            XidState::Aborted => return UniqueVerdict::NoConflict,
            XidState::Running => return UniqueVerdict::WaitFor(xmin),
            XidState::Committed => {}
        }
    }
    if xmax == INVALID_XID {
        return UniqueVerdict::Conflict;
    }
    if xmax == me {
        return UniqueVerdict::NoConflict;
    }
    match xid_state(txns, xmax) {
        XidState::Aborted => UniqueVerdict::Conflict,
        XidState::Running => UniqueVerdict::WaitFor(xmax),
        XidState::Committed => UniqueVerdict::NoConflict,
    }
}

/// Adds entries for the new heap version at `tid` (stored column values `stored`) to every
/// index of `table`, checking unique indexes.
pub fn insert_entries(s: &mut Session, table: &Table, stored: &[Option<Vec<u8>>], tid: Tid) -> Result<()> {
    if table.indexes.is_empty() {
        return Ok(());
    }
    let wal = index_wal(s, table);
    let me = s.xid();
    let shared = s.shared.clone();
    let preds = if has_index_exprs(table) { Some((table.oid, cached_index_exprs(s, table)?)) } else { None };
    let mut m = Maintainer { shared: &shared, pins: &s.pins, locks: s.locks.get_mut(), me, wal, key: Vec::new(), preds };
    m.insert(table, stored, tid)
}

/// Index maintenance for one statement, with the session's parts borrowed separately (COPY
/// holds its bulk insert's borrow of the pins meanwhile).
pub struct Maintainer<'a> {
    pub shared: &'a crate::db::Shared,
    pub pins: &'a crate::buffer::Pins,
    pub locks: &'a mut crate::lock::SessionLocks,
    pub me: Xid,
    pub wal: bool,
    pub key: Vec<u8>,
    /// The bound index expressions (predicates, key expressions) of the table last
    /// maintained (its oid), bound at first use.
    pub preds: Option<(crate::catalog::Oid, IndexExprs)>,
}

impl Maintainer<'_> {
    /// Prepares `s` for maintaining `table`'s indexes: returns (xid, wal).
    pub fn prepare(s: &mut Session, table: &Table) -> (Xid, bool) {
        (s.xid(), index_wal(s, table))
    }

    /// Inserts the entries of one heap version (invariants 2 and 3).
    pub fn insert(&mut self, table: &Table, stored: &[Option<Vec<u8>>], tid: Tid) -> Result<()> {
        let shared = self.shared;
        let me = self.me;
        if has_index_exprs(table) && self.preds.as_ref().is_none_or(|(oid, _)| *oid != table.oid) {
            self.preds = Some((table.oid, index_exprs(table)?));
        }
        let bound = self.preds.as_ref().filter(|(oid, _)| *oid == table.oid).map(|(_, v)| v.clone());
        for (i, ix) in table.indexes.iter().enumerate() {
            let b = bound.as_ref().map(|v| &v[i]);
            // A partial index has entries only for versions its predicate holds for.
            if let Some(p) = b.and_then(|b| b.pred.as_ref()) {
                if !predicate_holds(p, table, stored)? {
                    continue;
                }
            }
            let exprs: &[Scalar] = b.map_or(&[], |b| &b.keys);
            let any_null = key_of(table, ix, exprs, stored, &mut self.key)?;
            let t = BTree::new(&shared.pool, self.pins, self.wal.then_some(&*shared.wal), ix.relfile, ix.unique)
                .with_name(ix.name.clone())
                .with_full_page_writes(shared.settings.bool("full_page_writes"))
                .with_xid(me);
            let heap =
                HeapRel { pool: &shared.pool, pins: self.pins, rel: table.relfile, wal: None, full_page_writes: false, touched: None };
            let mut check = |other: Tid| -> Result<UniqueVerdict> {
                if other == tid {
                    return Ok(UniqueVerdict::NoConflict);
                }
                verdict(&heap, &shared.txns, me, other)
            };
            let locks = &mut *self.locks;
            let mut wait = |xid: Xid| crate::access::heap::dml::wait_for_xid(&shared.locks, &shared.txns, locks, xid);
            let unique: Option<&mut dyn FnMut(Tid) -> Result<UniqueVerdict>> = (ix.unique && !any_null).then_some(&mut check as _);
            if let Err(e) = t.insert_unique(&self.key, tid, unique, &mut wait) {
                if crate::access::btree::is_unique_violation(&e) {
                    let (names, vals) = key_text(table, ix, exprs, stored);
                    return Err(PgError::new(
                        crate::access::btree::UNIQUE_VIOLATION,
                        format!("duplicate key value violates unique constraint \"{}\"", ix.name),
                    )
                    .with_detail(format!("Key ({names})=({vals}) already exists."))
                    .with_table(table)
                    .with_constraint(&ix.name));
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Inserts the entries of a heap tuple as stored (COPY's batches).
    pub fn insert_tuple(&mut self, table: &Table, t: &[u8], tid: Tid) -> Result<()> {
        let stored = stored_of_parts(&self.shared.pool, self.pins, table, t)?;
        self.insert(table, &stored, tid)
    }
}

/// Parses a stored expression (a column's DEFAULT, a CHECK constraint).
pub fn parse_stored_expr(text: &str) -> Result<sqlparser::ast::Expr> {
    let dialect = crate::sql::dialect::Pg;
    // Without locations: an error binding it has no position in the user's statement.
    let toks = crate::sql::tokens_without_locations(text)?;
    crate::sql::dialect::check_nesting(&toks)?;
    sqlparser::parser::Parser::new(&dialect)
        .with_recursion_limit(crate::sql::dialect::RECURSION_LIMIT)
        .with_tokens_with_locations(toks)
        .parse_expr()
        .map_err(|e| PgError::internal(format!("stored expression \"{text}\" does not parse: {e}")))
}

/// The values of the columns a row statement leaves out: each column's DEFAULT expression,
/// or its identity sequence's `nextval`, bound once per statement; NULL for the others.
///
/// Invariant: a default is *volatile* when it calls a volatile function (`nextval`,
/// `gen_random_uuid`; `sql::expr::calls_volatile`): it is evaluated
/// once per row, in row order, by the session's own thread. Any other default is evaluated
/// once per statement (the transaction-start functions and constants are the same for every
/// row of a statement).
pub struct Defaults {
    cols: Vec<Option<crate::sql::expr::Scalar>>,
    volatile: Vec<bool>,
}

impl Defaults {
    /// Binds the defaults of `table`'s columns for which `wanted(c)` holds.
    pub fn new(s: &Session, table: &Table, wanted: impl Fn(usize) -> bool) -> Result<Defaults> {
        use crate::sql::expr::Scalar;
        let mut cols = Vec::with_capacity(table.columns.len());
        let mut volatile = Vec::with_capacity(table.columns.len());
        let now = s.txn.as_ref().map_or(0, |t| t.start_us);
        for (c, col) in table.columns.iter().enumerate() {
            let e = if !wanted(c) {
                None
            } else if col.identity.is_some() {
                let seq = crate::sql::sequence::identity_sequence(s, table, &col.name)?;
                let f = crate::sql::func::Func::Seq(crate::sql::sequence::SeqFunc::Nextval);
                let call =
                    Scalar::Func(f, vec![Scalar::Const(crate::types::Value::Oid(seq.oid))], SqlType::new(crate::types::TypeId::Int8));
                Some(Scalar::Cast(Box::new(call), col.ty))
            } else if let Some(text) = &col.default {
                let e = parse_stored_expr(text)?;
                let _stored = crate::types::tz::stored_definition();
                Some(crate::sql::dml::bind_default(&e, col, now, Some(s))?)
            } else {
                None
            };
            volatile.push(e.as_ref().is_some_and(crate::sql::expr::calls_volatile));
            cols.push(e);
        }
        Ok(Defaults { cols, volatile })
    }

    /// Whether column `c` has a default that is evaluated per row.
    pub fn is_volatile(&self, c: usize) -> bool {
        self.volatile[c]
    }

    pub fn any_volatile(&self) -> bool {
        self.volatile.iter().any(|&v| v)
    }

    /// Column `c`'s bound default expression (None: NULL).
    pub fn bound(&self, c: usize) -> Option<crate::sql::expr::Scalar> {
        self.cols[c].clone()
    }

    /// Whether column `c` has a default at all (else it is NULL).
    pub fn has(&self, c: usize) -> bool {
        self.cols[c].is_some()
    }

    /// Column `c`'s default for the next row (NULL when it has none).
    pub fn value(&self, s: &Session, c: usize) -> Result<crate::types::Value> {
        match &self.cols[c] {
            None => Ok(crate::types::Value::Null),
            Some(e) => crate::sql::expr::eval_with_session(e, s, &[], &[]),
        }
    }

    /// Column `c`'s default in stored form (None: NULL), for COPY.
    pub fn stored(&self, s: &Session, table: &Table, c: usize) -> Result<Option<Vec<u8>>> {
        let v = self.value(s, c)?;
        if v == crate::types::Value::Null {
            return Ok(None);
        }
        let mut b = Vec::new();
        crate::sql::expr::store(&v, &table.columns[c].ty, &mut b)?;
        Ok(Some(b))
    }
}

/// A table's CHECK constraints, bound once per statement against its columns.
pub struct Checks {
    list: Vec<(String, crate::sql::expr::Scalar)>,
}

impl Checks {
    pub fn new(table: &Table) -> Result<Checks> {
        let mut list = Vec::with_capacity(table.checks.len());
        for c in &table.checks {
            let e = parse_stored_expr(&c.expr)?;
            let _stored = crate::types::tz::stored_definition();
            list.push((c.name.clone(), crate::sql::expr::bind(&e, table)?));
        }
        // PostgreSQL checks them in name order (its catalog index on the constraint name).
        list.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Checks { list })
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Checks a row (all of the table's columns): a constraint that is false fails with
    /// 23514 (NULL passes, as in PostgreSQL).
    pub fn check(&self, _s: &Session, table: &Table, row: &[crate::types::Value]) -> Result<()> {
        self.check_values(table, row)
    }

    /// As [`Checks::check`], without a session (a CHECK expression reads only the row).
    pub fn check_values(&self, table: &Table, row: &[crate::types::Value]) -> Result<()> {
        for (name, e) in &self.list {
            if e.eval(row, &[])? == crate::types::Value::Bool(false) {
                let vals: Vec<String> =
                    row.iter().zip(&table.columns).map(|(v, c)| v.to_text(&c.ty).unwrap_or_else(|| "null".into())).collect();
                return Err(PgError::new(
                    sqlstate::CHECK_VIOLATION,
                    format!("new row for relation \"{}\" violates check constraint \"{name}\"", table.name),
                )
                .with_detail(format!("Failing row contains ({}).", vals.join(", ")))
                .with_table(table)
                .with_constraint(name));
            }
        }
        Ok(())
    }
}

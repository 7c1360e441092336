//! FOREIGN KEY checks and actions: what every row statement runs at its end, as PostgreSQL's
//! referential-integrity triggers do. (The constraints' definitions are DDL: `sql::fk`.)
//!
//! A statement that changes a table with foreign keys (either side) keeps a [`Tracker`]: the
//! keys its new row versions reference, and the referenced keys it removed (deleted rows, or
//! updates that changed the key). When the statement's rows are all written,
//! [`Tracker::finish`] makes them visible to itself (a new command id) and then:
//!
//! - each referencing key (no column NULL: MATCH SIMPLE) must be present in the referenced
//!   table: else 23503 `insert or update on table "c" violates foreign key constraint "f"`;
//! - each removed referenced key: NO ACTION fails (23503 `update or delete on table "p"
//!   violates foreign key constraint "f" on table "c"`) if no row has the key any more and a
//!   row still references it; RESTRICT fails if a row references it; CASCADE, SET NULL and SET
//!   DEFAULT run a DELETE or UPDATE of the referencing rows (whose own trackers check further
//!   tables), after which no row may reference the removed key.
//!
//! Invariants:
//! 1. Every check reads with a snapshot taken after the locks below are granted (not the
//!    transaction's): it sees every committed row, so REPEATABLE READ cannot miss a
//!    referencing row committed after its snapshot (an action that leaves one behind fails
//!    with 40001, as in PostgreSQL).
//! 2. Key locks stand in for PostgreSQL's FOR KEY SHARE row locks, in the heavyweight lock
//!    manager and held to transaction end: a statement that relies on a referenced key
//!    being present takes it SHARE, one that removed a referenced key takes it EXCLUSIVE
//!    before it looks for references. So of a transaction inserting a reference to a key
//!    and one deleting the key, whichever locks second waits for the other to end and then
//!    sees its commit: no orphan can be committed. A key is locked by the referenced table's
//!    OID and the key's values in the referenced columns' types (both sides hash the same
//!    bytes). Past [`KEY_LOCK_LIMIT`] keys of one constraint in one statement, the lock is
//!    taken on the table instead: SHARE on the referenced table (which waits for, and then
//!    blocks, every writer of it) or SHARE ROW EXCLUSIVE on the referencing table.
//! 3. A `DEFERRABLE` constraint's NO ACTION checks (the referencing side's, and a removed
//!    referenced key's under NO ACTION) wait, while it is deferred (`INITIALLY DEFERRED` or
//!    `SET CONSTRAINTS ... DEFERRED`), in the transaction's queue (`Txn::fk_deferred`; a
//!    savepoint keeps a copy of it, which ROLLBACK TO puts back: checks queued since are
//!    forgotten, checks run since are queued again) until COMMIT, or `SET CONSTRAINTS ...
//!    IMMEDIATE` for it, runs them ([`run_deferred`]); RESTRICT and the actions never wait, as
//!    in PostgreSQL. A deferred check reads both tables' definitions as they are when it runs,
//!    and while one is queued DDL on either table is refused (55006, as PostgreSQL's pending
//!    trigger events). A deferred referencing key is checked only if a row still references
//!    it then (the row that did may have been deleted or changed). Every other check runs at
//!    the end of its statement.

use crate::catalog::{FkAction, ForeignKey, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::lock::{LockMode, LockTag};
use crate::session::Session;
use crate::types::{SqlType, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// More keys than this of one constraint in one statement are locked as a table
/// (invariant 2).
pub const KEY_LOCK_LIMIT: usize = 10_000;

/// The lock class of key locks (`LockTag::Object`, invariant 2).
const KEY_LOCK_CLASS: u32 = 0x464b_0000;

/// The foreign keys of other tables (and self-references) that reference table `oid`, with
/// their tables, as this transaction sees them.
pub(crate) fn referencing(s: &Session, oid: u32) -> Vec<(Arc<Table>, ForeignKey)> {
    let mut out = Vec::new();
    for t in s.visible_tables() {
        for fk in &t.foreign_keys {
            if fk.ref_table == oid {
                out.push((t.clone(), fk.clone()));
            }
        }
    }
    out
}

/// The columns `cols` of a row converted to the comparison types `types`; None if one is NULL
/// (MATCH SIMPLE: no check).
pub(crate) fn key_of(row: &[Value], cols: &[usize], types: &[SqlType]) -> Result<Option<Vec<Value>>> {
    let mut key = Vec::with_capacity(cols.len());
    for (&c, ty) in cols.iter().zip(types) {
        let v = &row[c];
        if *v == Value::Null {
            return Ok(None);
        }
        key.push(to_compare(v, ty)?);
    }
    Ok(Some(key))
}

/// A non-NULL value in comparison type `ty` (exact for the pairs [`comparable`] allows, up to
/// float8's precision when one side is a float, as PostgreSQL compares them).
fn to_compare(v: &Value, ty: &SqlType) -> Result<Value> {
    if crate::sql::expr::value_type(v).is_some_and(|t| t.id == ty.id) {
        return Ok(v.clone());
    }
    crate::sql::expr::cast_value(v.clone(), ty)
}

pub(crate) fn keycode(key: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    super::key_of(key, &mut out);
    out
}

/// The key lock of a key of the referenced table `parent`, in comparison types (invariant 2).
fn key_lock(parent: u32, code: &[u8]) -> LockTag {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parent.hash(&mut h);
    code.hash(&mut h);
    LockTag::Object { class: KEY_LOCK_CLASS, id: h.finish() }
}

/// `(a, b)=(1, 2)` as PostgreSQL's DETAIL prints a key: columns `cols` of `row` of `table`.
pub(crate) fn key_text(table: &Table, cols: &[usize], row: &[Value]) -> String {
    let names: Vec<&str> = cols.iter().map(|&c| table.columns[c].name.as_str()).collect();
    let vals: Vec<String> = cols.iter().map(|&c| row[c].to_text(&table.columns[c].ty).unwrap_or_else(|| "null".into())).collect();
    format!("({})=({})", names.join(", "), vals.join(", "))
}

/// The comparison types of a foreign key's columns.
pub(crate) fn compare_types(child: &Table, parent: &Table, fk: &ForeignKey) -> Result<Vec<SqlType>> {
    fk.columns.iter().zip(&fk.ref_columns).map(|(&c, &r)| crate::sql::fk::compare_type(child.columns[c].ty, parent.columns[r].ty)).collect()
}

/// The keys one statement added to or removed from the keys foreign keys depend on (see the
/// module doc).
#[derive(Clone, Debug)]
pub(crate) struct Tracker {
    table: Arc<Table>,
    outgoing: Vec<Outgoing>,
    incoming: Vec<Incoming>,
}

/// One of this table's foreign keys, its referenced table, and the keys new rows reference:
/// by key code, the key in comparison types and the new row (for the error's DETAIL).
#[derive(Clone, Debug)]
struct Outgoing {
    fk: ForeignKey,
    parent: Arc<Table>,
    types: Vec<SqlType>,
    keys: HashMap<Vec<u8>, (Vec<Value>, Vec<Value>)>,
}

/// A foreign key referencing this table, and the keys rows lost, in the order first seen.
#[derive(Clone, Debug)]
struct Incoming {
    child: Arc<Table>,
    fk: ForeignKey,
    types: Vec<SqlType>,
    removed: Vec<Removed>,
    seen: std::collections::HashSet<Vec<u8>>,
}

/// A referenced key a row lost: the key in comparison types, the old row, and for an update
/// the new row (ON UPDATE CASCADE copies its key columns, NULLs included).
#[derive(Clone, Debug)]
struct Removed {
    key: Vec<Value>,
    old: Vec<Value>,
    new: Option<Vec<Value>>,
}

impl Tracker {
    /// A tracker for a statement changing `table`; None when no foreign key involves it.
    pub fn new(s: &Session, table: &Arc<Table>) -> Result<Option<Tracker>> {
        // The common case, checked without listing the tables: no foreign key anywhere (the
        // shared catalog's, the session's temporary tables', this transaction's new ones).
        let pending =
            s.txn.as_ref().is_some_and(|t| t.creates.iter().chain(t.replaces.iter().map(|(n, _)| n)).any(|x| !x.foreign_keys.is_empty()));
        if table.foreign_keys.is_empty() && !pending && !s.shared.catalog.any_foreign_keys() && !s.temp_foreign_keys() {
            return Ok(None);
        }
        let mut incoming = Vec::new();
        for (child, fk) in referencing(s, table.oid) {
            let types = compare_types(&child, table, &fk)?;
            incoming.push(Incoming { child, fk, types, removed: Vec::new(), seen: Default::default() });
        }
        if table.foreign_keys.is_empty() && incoming.is_empty() {
            return Ok(None);
        }
        let mut outgoing = Vec::with_capacity(table.foreign_keys.len());
        for fk in &table.foreign_keys {
            let parent = if fk.ref_table == table.oid {
                table.clone()
            } else {
                s.visible_tables()
                    .into_iter()
                    .find(|t| t.oid == fk.ref_table)
                    .ok_or_else(|| PgError::internal(format!("foreign key \"{}\" references a missing table", fk.name)))?
            };
            let types = compare_types(table, &parent, fk)?;
            outgoing.push(Outgoing { fk: fk.clone(), parent, types, keys: HashMap::new() });
        }
        Ok(Some(Tracker { table: table.clone(), outgoing, incoming }))
    }

    /// Whether this table references another (a statement that only inserts has checks to
    /// make).
    pub fn references(&self) -> bool {
        !self.outgoing.is_empty()
    }

    /// A new row version (all columns).
    pub fn inserted(&mut self, row: &[Value]) -> Result<()> {
        for o in &mut self.outgoing {
            if let Some(k) = key_of(row, &o.fk.columns, &o.types)? {
                o.keys.entry(keycode(&k)).or_insert_with(|| (k, row.to_vec()));
            }
        }
        Ok(())
    }

    fn decode(&self, stored: &[Option<Vec<u8>>]) -> Vec<Value> {
        stored.iter().zip(&self.table.columns).map(|(v, c)| v.as_ref().map_or(Value::Null, |b| Value::decode(&c.ty, b))).collect()
    }

    /// A new row version in stored form.
    pub fn inserted_stored(&mut self, stored: &[Option<Vec<u8>>]) -> Result<()> {
        if self.outgoing.is_empty() {
            return Ok(());
        }
        let row = self.decode(stored);
        self.inserted(&row)
    }

    /// Heap tuples a COPY wrote (`batch`, lengths `lens`).
    pub fn inserted_tuples(
        &mut self,
        pool: &crate::buffer::BufferPool,
        pins: &crate::buffer::Pins,
        batch: &[u8],
        lens: &[usize],
    ) -> Result<()> {
        let types: Vec<SqlType> = self.table.columns.iter().map(|c| c.ty).collect();
        let mut attrs = Vec::with_capacity(types.len());
        let mut scratch = Vec::new();
        let mut row = vec![Value::Null; types.len()];
        let mut pos = 0;
        for &len in lens {
            let t = &batch[pos..pos + len];
            pos += len;
            crate::access::heap::tuple::deform(t, &types, &mut attrs)
                .map_err(|_| PgError::internal("a tuple COPY formed does not deform"))?;
            for o in &self.outgoing {
                for &c in &o.fk.columns {
                    row[c] = match attrs[c] {
                        None => Value::Null,
                        Some(a) => Value::decode(&types[c], crate::access::heap::toast::attr_bytes(pool, pins, a, &mut scratch)?),
                    };
                }
            }
            self.inserted(&row)?;
        }
        Ok(())
    }

    /// A row deleted (its old values, all columns).
    pub fn deleted(&mut self, old: &[Value]) -> Result<()> {
        self.removed(old, None)
    }

    /// A row updated from `old` (all columns) to the stored version `stored`.
    pub fn updated_stored(&mut self, old: &[Value], stored: &[Option<Vec<u8>>]) -> Result<()> {
        let new = self.decode(stored);
        self.updated(old, &new)
    }

    /// A row updated from `old` to `new` (all columns). As in PostgreSQL, a key the update
    /// left as it was is not checked again.
    pub fn updated(&mut self, old: &[Value], new: &[Value]) -> Result<()> {
        for o in &mut self.outgoing {
            let Some(k) = key_of(new, &o.fk.columns, &o.types)? else { continue };
            let code = keycode(&k);
            if key_of(old, &o.fk.columns, &o.types)?.is_some_and(|was| keycode(&was) == code) {
                continue;
            }
            o.keys.entry(code).or_insert_with(|| (k, new.to_vec()));
        }
        self.removed(old, Some(new))
    }

    fn removed(&mut self, old: &[Value], new: Option<&[Value]>) -> Result<()> {
        for inc in &mut self.incoming {
            let Some(k) = key_of(old, &inc.fk.ref_columns, &inc.types)? else { continue };
            let code = keycode(&k);
            if let Some(n) = new {
                // An update that leaves the key as it was removes nothing. As in PostgreSQL
                // (`ri_KeysEqual` on the referenced side), "as it was" means the same stored
                // bytes: a key changed to one that only compares equal ('1 mon' to '30 days',
                // 1.0 to 1.00) is a change, which CASCADE carries to the referencing rows.
                let image = |row: &[Value]| -> Vec<Option<Vec<u8>>> {
                    inc.fk
                        .ref_columns
                        .iter()
                        .map(|&c| {
                            (row[c] != Value::Null).then(|| {
                                let mut b = Vec::new();
                                row[c].encode(&mut b);
                                b
                            })
                        })
                        .collect()
                };
                if image(old) == image(n) {
                    continue;
                }
            }
            if inc.seen.insert(code) {
                inc.removed.push(Removed { key: k, old: old.to_vec(), new: new.map(<[Value]>::to_vec) });
            }
        }
        Ok(())
    }

    /// The statement's end: the checks and actions of the module doc. The statements an
    /// action runs queue their own trackers here, which the outermost call works through in a
    /// loop (a cascade down a deep self-reference does not recurse).
    pub fn finish(self, s: &mut Session) -> Result<()> {
        if s.fk_nested.get() {
            s.fk_queue.borrow_mut().push(self);
            return Ok(());
        }
        s.fk_nested.set(true);
        let mut r = self.run(s);
        while r.is_ok() {
            let Some(next) = s.fk_queue.borrow_mut().pop() else { break };
            r = next.run(s);
        }
        s.fk_nested.set(false);
        s.fk_queue.borrow_mut().clear();
        r
    }

    fn run(self, s: &mut Session) -> Result<()> {
        let now = self.defer(s);
        now.check(s, false)
    }

    fn busy(&self) -> bool {
        self.outgoing.iter().any(|o| !o.keys.is_empty()) || self.incoming.iter().any(|i| !i.removed.is_empty())
    }

    /// Moves the checks of deferred constraints into the transaction's queue (invariant 3);
    /// returns the rest.
    fn defer(mut self, s: &mut Session) -> Tracker {
        if s.txn.is_none() || !self.busy() {
            return self;
        }
        let mut later = Tracker { table: self.table.clone(), outgoing: Vec::new(), incoming: Vec::new() };
        let (defer, keep): (Vec<Outgoing>, Vec<Outgoing>) =
            self.outgoing.drain(..).partition(|o| !o.keys.is_empty() && s.constraint_deferred(&o.fk));
        self.outgoing = keep;
        later.outgoing = defer;
        for inc in self.incoming.iter_mut() {
            if inc.removed.is_empty() || !s.constraint_deferred(&inc.fk) {
                continue;
            }
            let fk = &inc.fk;
            let (defer, keep): (Vec<Removed>, Vec<Removed>) =
                inc.removed.drain(..).partition(|r| (if r.new.is_some() { fk.on_update } else { fk.on_delete }) == FkAction::NoAction);
            inc.removed = keep;
            if !defer.is_empty() {
                later.incoming.push(Incoming {
                    child: inc.child.clone(),
                    fk: inc.fk.clone(),
                    types: inc.types.clone(),
                    removed: defer,
                    seen: Default::default(),
                });
            }
        }
        if later.busy() {
            s.txn().fk_deferred.push(later);
        }
        self
    }

    /// Whether a check of this tracker reads table `oid`.
    pub(crate) fn involves(&self, oid: u32) -> bool {
        self.table.oid == oid || self.outgoing.iter().any(|o| o.parent.oid == oid) || self.incoming.iter().any(|i| i.child.oid == oid)
    }

    /// The constraints this tracker has checks of.
    fn constraints(&self) -> impl Iterator<Item = u32> + '_ {
        self.outgoing.iter().map(|o| o.fk.oid).chain(self.incoming.iter().map(|i| i.fk.oid))
    }

    /// Splits off the checks of constraint `oid`.
    fn take(&mut self, oid: u32) -> Tracker {
        let (a, b): (Vec<Outgoing>, Vec<Outgoing>) = self.outgoing.drain(..).partition(|o| o.fk.oid == oid);
        self.outgoing = b;
        let (c, d): (Vec<Incoming>, Vec<Incoming>) = self.incoming.drain(..).partition(|i| i.fk.oid == oid);
        self.incoming = d;
        Tracker { table: self.table.clone(), outgoing: a, incoming: c }
    }

    /// The checks (module doc). `deferred`: checks a deferred constraint queued, run at
    /// COMMIT or SET CONSTRAINTS ... IMMEDIATE, against the tables as they are then.
    fn check(self, s: &mut Session, deferred: bool) -> Result<()> {
        if !self.busy() {
            return Ok(());
        }
        // The statement's own rows become visible to what follows.
        s.command_done();
        for Outgoing { fk, parent, types, keys } in &self.outgoing {
            if keys.is_empty() {
                continue;
            }
            // A deferred check: the referencing table, the constraint and the referenced
            // table as they are now (dropped meanwhile: nothing to check), and only the keys
            // some row still references.
            let (fk, parent, still) = if deferred {
                let Some(child) = s.visible_tables().into_iter().find(|t| t.oid == self.table.oid) else { continue };
                let Some(fk) = child.foreign_keys.iter().find(|f| f.oid == fk.oid).cloned() else { continue };
                let Some(parent) = s.visible_tables().into_iter().find(|t| t.oid == fk.ref_table) else { continue };
                let still = Probe::new(s, &child, &fk.columns, types)?;
                (fk, parent, Some(still))
            } else {
                (fk.clone(), parent.clone(), None)
            };
            let keys: Vec<&(Vec<Value>, Vec<Value>)> = match &still {
                Some(p) => {
                    let snap = s.latest_snapshot();
                    let mut live = Vec::new();
                    for k in keys.values() {
                        if p.exists(s, &snap, &k.0)? {
                            live.push(k);
                        }
                    }
                    live
                }
                None => keys.values().collect(),
            };
            if keys.is_empty() {
                continue;
            }
            let (fk, parent) = (&fk, &parent);
            if keys.len() > KEY_LOCK_LIMIT {
                s.lock_table(parent, LockMode::Share)?;
            } else {
                for (key, _) in &keys {
                    s.lock_tag(key_lock(parent.oid, &keycode(key)), LockMode::Share)?;
                }
            }
            let probe = Probe::new(s, parent, &fk.ref_columns, types)?;
            let snap = s.latest_snapshot();
            for (key, row) in keys {
                if probe.exists(s, &snap, key)? {
                    continue;
                }
                // A key this REPEATABLE READ transaction sees that is gone now: removed by a
                // transaction that committed after the snapshot (PostgreSQL: 40001).
                if s.snapshot_is_transaction_wide() {
                    let mine = s.snapshot();
                    if probe.exists(s, &mine, key)? {
                        return Err(PgError::new(sqlstate::SERIALIZATION_FAILURE, "could not serialize access due to concurrent update"));
                    }
                }
                return Err(PgError::new(
                    "23503",
                    format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", self.table.name, fk.name),
                )
                .with_detail(format!("Key {} is not present in table \"{}\".", key_text(&self.table, &fk.columns, row), parent.name))
                .with_table(&self.table)
                .with_constraint(&fk.name));
            }
        }
        // A deferred check: the referenced table as it is now (renamed, or its columns
        // renumbered, since the statement that queued it).
        let parent_now = if deferred && !self.incoming.is_empty() {
            match s.visible_tables().into_iter().find(|t| t.oid == self.table.oid) {
                Some(t) => t,
                None => return Ok(()),
            }
        } else {
            self.table.clone()
        };
        for Incoming { child, fk, types, removed, .. } in &self.incoming {
            if removed.is_empty() {
                continue;
            }
            // The referencing table locked, then read again: its definition (and the foreign
            // key's column numbers) as they are now; a foreign key dropped meanwhile is gone.
            s.lock_table(child, LockMode::AccessShare)?;
            let Some(child) = s.visible_tables().into_iter().find(|t| t.oid == child.oid) else { continue };
            let Some(fk) = child.foreign_keys.iter().find(|f| f.oid == fk.oid).cloned() else { continue };
            if removed.len() > KEY_LOCK_LIMIT {
                s.lock_table(&child, LockMode::ShareRowExclusive)?;
            } else {
                for r in removed {
                    s.lock_tag(key_lock(parent_now.oid, &keycode(&r.key)), LockMode::Exclusive)?;
                }
            }
            let refs = Probe::new(s, &child, &fk.columns, types)?;
            let again = Probe::new(s, &parent_now, &fk.ref_columns, types)?;
            for r in removed {
                let act = if r.new.is_some() { fk.on_update } else { fk.on_delete };
                let still_referenced = |s: &mut Session| -> Result<bool> {
                    let snap = s.latest_snapshot();
                    refs.exists(s, &snap, &r.key)
                };
                let violation = || {
                    PgError::new(
                        "23503",
                        format!(
                            "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                            parent_now.name, fk.name, child.name
                        ),
                    )
                    .with_detail(format!(
                        "Key {} is still referenced from table \"{}\".",
                        key_text(&parent_now, &fk.ref_columns, &r.old),
                        child.name
                    ))
                    .with_table(&child)
                    .with_constraint(&fk.name)
                };
                // A referencing row this REPEATABLE READ transaction cannot see was committed
                // after its snapshot: PostgreSQL fails such a change with 40001.
                let refused = |s: &mut Session| -> Result<PgError> {
                    if s.snapshot_is_transaction_wide() {
                        let snap = s.snapshot();
                        if !refs.exists(s, &snap, &r.key)? {
                            return Ok(PgError::new(
                                sqlstate::SERIALIZATION_FAILURE,
                                "could not serialize access due to concurrent update",
                            ));
                        }
                    }
                    Ok(violation())
                };
                match act {
                    FkAction::NoAction => {
                        let snap = s.latest_snapshot();
                        if again.exists(s, &snap, &r.key)? {
                            continue;
                        }
                        if still_referenced(s)? {
                            return Err(refused(s)?);
                        }
                    }
                    FkAction::Restrict => {
                        if still_referenced(s)? {
                            return Err(refused(s)?);
                        }
                    }
                    _ => {
                        run_action(s, &parent_now, &child, &fk, types, act, r)?;
                        // A key changed to one that compares equal ('1 mon' to '30 days') is
                        // still referenced by the rows the action updated: rightly so.
                        let equal_key = match &r.new {
                            Some(n) => key_of(n, &fk.ref_columns, types)?.is_some_and(|k| keycode(&k) == keycode(&r.key)),
                            None => false,
                        };
                        if !equal_key && still_referenced(s)? {
                            return Err(refused(s)?);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Runs the checks deferred constraints queued in this transaction (invariant 3): all of them
/// (COMMIT), or those of the constraints `only` names (SET CONSTRAINTS ... IMMEDIATE).
pub(crate) fn run_deferred(s: &mut Session, only: Option<&[u32]>) -> Result<()> {
    let Some(t) = s.txn.as_mut() else { return Ok(()) };
    let queued = std::mem::take(&mut t.fk_deferred);
    let (run, keep): (Vec<Tracker>, Vec<Tracker>) = match only {
        None => (queued, Vec::new()),
        Some(oids) => {
            let mut run = Vec::new();
            let mut keep = Vec::new();
            for mut tr in queued {
                for &oid in oids {
                    if tr.constraints().any(|c| c == oid) {
                        run.push(tr.take(oid));
                    }
                }
                if tr.busy() {
                    keep.push(tr);
                }
            }
            (run, keep)
        }
    };
    s.txn().fk_deferred = keep;
    for tr in run {
        tr.check(s, true)?;
    }
    Ok(())
}

/// Plans of [`Probe`]s by (table OID, column names, comparison types), each with the table
/// definition it was made from: a plan is reused only while that definition is current.
pub(crate) type ProbeCache = HashMap<(u32, Vec<String>, Vec<SqlType>), (Arc<Table>, Arc<crate::exec::Node>)>;

/// `SELECT 1 FROM t WHERE c1 = $1 AND ... LIMIT 1` in comparison types, planned once per
/// table definition (an index scan where an index covers the columns and no conversion is
/// needed) and run per key with a given snapshot.
pub(crate) struct Probe {
    node: Arc<crate::exec::Node>,
    types: Vec<SqlType>,
}

/// `col = $n::type`, or `col::type = $n::type` when the column's type is not the comparison
/// type.
fn condition(col: &crate::catalog::Column, n: usize, ty: &SqlType) -> String {
    let name = crate::sql::func::quote_ident(&col.name);
    if col.ty.id == ty.id {
        format!("{name} = ${n}::{}", ty.name())
    } else {
        format!("{name}::{} = ${n}::{}", ty.name(), ty.name())
    }
}

/// A table's name qualified by its schema (`public` or the session's `pg_temp`), quoted as
/// needed, for the statements foreign keys run.
fn qualified(t: &Table) -> String {
    format!("{}.{}", if t.is_temp() { "pg_temp" } else { "public" }, crate::sql::func::quote_ident(&t.name))
}

impl Probe {
    /// A probe of table `t` (named as it is in `t`; planned against its current definition,
    /// locked ACCESS SHARE as planning it would) on columns `cols` in `types`.
    pub(crate) fn new(s: &Session, t: &Table, cols: &[usize], types: &[SqlType]) -> Result<Probe> {
        let names: Vec<String> = cols.iter().map(|&c| t.columns[c].name.clone()).collect();
        let current = s.relation_for_query(&t.key())?;
        let key = (current.oid, names, types.to_vec());
        if let Some((def, node)) = s.fk_probes.borrow().get(&key) {
            if Arc::ptr_eq(def, &current) {
                return Ok(Probe { node: node.clone(), types: types.to_vec() });
            }
        }
        let mut conds = Vec::with_capacity(cols.len());
        for (i, (name, ty)) in key.1.iter().zip(types).enumerate() {
            let c = current.column_index(name).ok_or_else(|| {
                PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" of relation \"{}\" does not exist", current.name))
            })?;
            conds.push(condition(&current.columns[c], i + 1, ty));
        }
        let sql = format!("SELECT 1 FROM {} WHERE {} LIMIT 1", qualified(&current), conds.join(" AND "));
        let q = crate::sql::view::parse_query(&sql)?;
        let now = s.txn.as_ref().map(|x| x.start_us);
        let node = Arc::new(crate::sql::query::Planner::new(s, now).query(&q, &[])?.node);
        s.fk_probes.borrow_mut().insert(key, (current, node.clone()));
        Ok(Probe { node, types: types.to_vec() })
    }

    pub(crate) fn exists(&self, s: &Session, snap: &crate::txn::Snapshot, key: &[Value]) -> Result<bool> {
        let params: Vec<Option<String>> = key.iter().zip(&self.types).map(|(v, ty)| v.to_text(ty)).collect();
        let ex = crate::exec::Exec::new(s, snap.clone(), &params);
        let mut found = false;
        ex.run(&self.node, &[], &mut |_| {
            found = true;
            Ok(crate::access::heap::Flow::Stop)
        })?;
        Ok(found)
    }
}

/// CASCADE, SET NULL or SET DEFAULT on the rows of `child` referencing the key `r` of
/// `parent` lost: a DELETE or an UPDATE run as a statement of its own (its tracker's work is
/// queued: [`Tracker::finish`]).
fn run_action(
    s: &mut Session,
    parent: &Table,
    child: &Table,
    fk: &ForeignKey,
    types: &[SqlType],
    act: FkAction,
    r: &Removed,
) -> Result<()> {
    let q = crate::sql::func::quote_ident;
    let mut params: Vec<Option<String>> = Vec::new();
    let mut conds = Vec::new();
    for ((&c, v), ty) in fk.columns.iter().zip(&r.key).zip(types) {
        params.push(v.to_text(ty));
        conds.push(condition(&child.columns[c], params.len(), ty));
    }
    // The referencing columns' new values: the new row's key columns as the referenced table
    // has them (ON UPDATE CASCADE, NULLs included; assigned as any value is), NULL, or the
    // columns' defaults.
    let mut sets = Vec::with_capacity(fk.columns.len());
    for (&c, &pc) in fk.columns.iter().zip(&fk.ref_columns) {
        let value = match (act, &r.new) {
            (FkAction::Cascade, Some(new)) => {
                let pty = SqlType::new(parent.columns[pc].ty.id);
                params.push(new[pc].to_text(&parent.columns[pc].ty));
                format!("${}::{}", params.len(), pty.name())
            }
            (FkAction::SetNull, _) => "NULL".to_string(),
            _ => "DEFAULT".to_string(),
        };
        sets.push(format!("{} = {value}", q(&child.columns[c].name)));
    }
    let sql = match (act, &r.new) {
        (FkAction::Cascade, None) => format!("DELETE FROM {} WHERE {}", qualified(child), conds.join(" AND ")),
        (FkAction::Cascade | FkAction::SetNull | FkAction::SetDefault, _) => {
            format!("UPDATE {} SET {} WHERE {}", qualified(child), sets.join(", "), conds.join(" AND "))
        }
        _ => unreachable!("NO ACTION and RESTRICT run no statement"),
    };
    let st = crate::sql::internal_statements(&sql)?.into_iter().next().ok_or_else(|| PgError::internal("empty action statement"))?;
    match st {
        sqlparser::ast::Statement::Delete(d) => crate::sql::dml::delete(s, d, &params)?,
        sqlparser::ast::Statement::Update { table, assignments, selection, .. } => {
            crate::sql::dml::update(s, &table, &assignments, None, selection.as_ref(), None, &params)?
        }
        _ => return Err(PgError::internal("unexpected action statement")),
    };
    s.command_done();
    Ok(())
}

//! FOREIGN KEY constraints: their definition (CREATE TABLE, ALTER TABLE ADD), and the checks
//! and actions every row statement runs at its end, as PostgreSQL's referential-integrity
//! triggers do.
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
//! 3. Constraints are not deferrable: the checks run at the end of every statement.

use crate::catalog::{fold_ident, FkAction, ForeignKey, Table};
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

/// A FOREIGN KEY as written (a table constraint, a column's REFERENCES, or ALTER TABLE ADD).
pub(crate) struct FkSpec {
    pub name: Option<String>,
    pub columns: Vec<String>,
    pub ref_table: String,
    pub ref_columns: Vec<String>,
    pub on_delete: Option<sqlparser::ast::ReferentialAction>,
    pub on_update: Option<sqlparser::ast::ReferentialAction>,
    pub characteristics: Option<sqlparser::ast::ConstraintCharacteristics>,
}

impl FkSpec {
    /// From a table constraint; None if it is not a FOREIGN KEY.
    pub fn of_constraint(c: &sqlparser::ast::TableConstraint) -> Result<Option<FkSpec>> {
        let sqlparser::ast::TableConstraint::ForeignKey {
            name,
            index_name,
            columns,
            foreign_table,
            referred_columns,
            on_delete,
            on_update,
            characteristics,
        } = c
        else {
            return Ok(None);
        };
        if index_name.is_some() {
            return Err(PgError::syntax("syntax error at or near \"(\""));
        }
        Ok(Some(FkSpec {
            name: name.as_ref().map(fold_ident),
            columns: columns.iter().map(fold_ident).collect(),
            ref_table: super::ddl_table_name(foreign_table)?,
            ref_columns: referred_columns.iter().map(fold_ident).collect(),
            on_delete: *on_delete,
            on_update: *on_update,
            characteristics: *characteristics,
        }))
    }

    /// From a column's `REFERENCES` option.
    pub fn of_column(
        column: &str,
        name: Option<String>,
        foreign_table: &sqlparser::ast::ObjectName,
        referred_columns: &[sqlparser::ast::Ident],
        on_delete: Option<sqlparser::ast::ReferentialAction>,
        on_update: Option<sqlparser::ast::ReferentialAction>,
        characteristics: Option<sqlparser::ast::ConstraintCharacteristics>,
    ) -> Result<FkSpec> {
        Ok(FkSpec {
            name,
            columns: vec![column.to_string()],
            ref_table: super::ddl_table_name(foreign_table)?,
            ref_columns: referred_columns.iter().map(fold_ident).collect(),
            on_delete,
            on_update,
            characteristics,
        })
    }
}

fn action(a: Option<sqlparser::ast::ReferentialAction>) -> FkAction {
    use sqlparser::ast::ReferentialAction as R;
    match a {
        None | Some(R::NoAction) => FkAction::NoAction,
        Some(R::Restrict) => FkAction::Restrict,
        Some(R::Cascade) => FkAction::Cascade,
        Some(R::SetNull) => FkAction::SetNull,
        Some(R::SetDefault) => FkAction::SetDefault,
    }
}

/// Whether values of types `a` and `b` compare by equality (PostgreSQL's requirement that the
/// referencing type coerce to the referenced one).
fn comparable(a: SqlType, b: SqlType) -> bool {
    use super::expr::{is_datetime, is_num, is_text};
    a.id == b.id || (is_num(a.id) && is_num(b.id)) || (is_text(a.id) && is_text(b.id)) || (is_datetime(a.id) && is_datetime(b.id))
}

/// Resolves and checks a FOREIGN KEY of `table` (its columns as they will be; `table` itself
/// when it references itself): the referenced table and columns (its primary key when none
/// are named), a unique index covering exactly them, comparable types, the name
/// (`<table>_<columns>_fkey` by default). `taken` says whether a constraint name is in use.
pub(crate) fn define(s: &Session, table: &Table, spec: FkSpec, taken: &dyn Fn(&str) -> bool) -> Result<ForeignKey> {
    if let Some(c) = &spec.characteristics {
        if c.deferrable == Some(true) || matches!(c.initially, Some(sqlparser::ast::DeferrableInitial::Deferred)) {
            return Err(PgError::feature("DEFERRABLE foreign keys are not supported by heapstore"));
        }
        if c.enforced.is_some() {
            return Err(PgError::syntax("syntax error at or near \"ENFORCED\""));
        }
    }
    let parent: Arc<Table> = if spec.ref_table == table.name {
        Arc::new(table.clone())
    } else {
        s.lookup_table(&spec.ref_table)
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", spec.ref_table)))?
    };
    if !parent.is_table() {
        return Err(PgError::new("42809", format!("referenced relation \"{}\" is not a table", parent.name)));
    }
    if table.persistence == crate::catalog::Persistence::Permanent && parent.persistence != crate::catalog::Persistence::Permanent {
        return Err(PgError::new("42P16", "constraints on permanent tables may reference only permanent tables"));
    }
    let mut columns = Vec::with_capacity(spec.columns.len());
    for c in &spec.columns {
        let i = table.column_index(c).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{c}\" referenced in foreign key constraint does not exist"))
        })?;
        columns.push(i);
    }
    let (ref_columns, index) = if spec.ref_columns.is_empty() {
        let pk = parent
            .indexes
            .iter()
            .find(|i| i.primary)
            .ok_or_else(|| PgError::new("42830", format!("there is no primary key for referenced table \"{}\"", parent.name)))?;
        (pk.columns.clone(), pk.oid)
    } else {
        let mut cols = Vec::with_capacity(spec.ref_columns.len());
        for c in &spec.ref_columns {
            let i = parent.column_index(c).ok_or_else(|| {
                PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{c}\" referenced in foreign key constraint does not exist"))
            })?;
            cols.push(i);
        }
        let mut sorted = cols.clone();
        sorted.sort_unstable();
        let ix = parent.indexes.iter().find(|i| {
            let mut k = i.columns.clone();
            k.sort_unstable();
            i.unique && k == sorted && k.len() == cols.len()
        });
        let ix = ix.ok_or_else(|| {
            PgError::new("42830", format!("there is no unique constraint matching given keys for referenced table \"{}\"", parent.name))
        })?;
        (cols, ix.oid)
    };
    if columns.len() != ref_columns.len() {
        return Err(PgError::new("42830", "number of referencing and referenced columns for foreign key disagree"));
    }
    let name = match spec.name {
        Some(n) => {
            if taken(&n) {
                return Err(PgError::new("42710", format!("constraint \"{n}\" for relation \"{}\" already exists", table.name)));
            }
            n
        }
        None => {
            let names: Vec<&str> = columns.iter().map(|&c| table.columns[c].name.as_str()).collect();
            let base = format!("{}_{}_fkey", table.name, names.join("_"));
            if taken(&base) {
                (1..).map(|i| format!("{base}{i}")).find(|n| !taken(n)).expect("some name is free")
            } else {
                base
            }
        }
    };
    for (&c, &r) in columns.iter().zip(&ref_columns) {
        let (a, b) = (table.columns[c].ty, parent.columns[r].ty);
        if !comparable(a, b) {
            return Err(PgError::new("42804", format!("foreign key constraint \"{name}\" cannot be implemented")).with_detail(format!(
                "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                table.columns[c].name,
                parent.columns[r].name,
                a.name(),
                b.name()
            )));
        }
    }
    let on_delete = action(spec.on_delete);
    let on_update = action(spec.on_update);
    Ok(ForeignKey {
        oid: s.shared.catalog.new_oid(),
        name,
        columns,
        ref_table: parent.oid,
        ref_columns,
        ref_index: index,
        on_delete,
        on_update,
    })
}

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

/// `fk`'s referencing columns of a row of `table`, converted to the referenced columns' types
/// (so both sides of a key lock hash the same bytes); None if one is NULL (MATCH SIMPLE: no
/// check).
fn key_of(row: &[Value], cols: &[usize], types: &[SqlType]) -> Result<Option<Vec<Value>>> {
    let mut key = Vec::with_capacity(cols.len());
    for (&c, ty) in cols.iter().zip(types) {
        let v = &row[c];
        if *v == Value::Null {
            return Ok(None);
        }
        key.push(if super::expr::value_type(v).is_some_and(|t| t.id == ty.id) {
            v.clone()
        } else {
            super::expr::cast_value(v.clone(), ty)?
        });
    }
    Ok(Some(key))
}

fn keycode(key: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    crate::exec::key_of(key, &mut out);
    out
}

/// The key lock of `key` in the referenced table `parent` (invariant 2).
fn key_lock(parent: u32, code: &[u8]) -> LockTag {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parent.hash(&mut h);
    code.hash(&mut h);
    LockTag::Object { class: KEY_LOCK_CLASS, id: h.finish() }
}

/// `(a, b)=(1, 2)` as PostgreSQL's DETAIL prints a key.
fn key_text(table: &Table, cols: &[usize], key: &[Value]) -> String {
    let names: Vec<&str> = cols.iter().map(|&c| table.columns[c].name.as_str()).collect();
    let vals: Vec<String> = key
        .iter()
        .zip(cols)
        .map(|(v, &c)| v.to_text(&super::expr::value_type(v).unwrap_or(table.columns[c].ty)).unwrap_or_else(|| "null".into()))
        .collect();
    format!("({})=({})", names.join(", "), vals.join(", "))
}

/// The keys one statement added to or removed from the keys foreign keys depend on (see the
/// module doc).
pub(crate) struct Tracker {
    table: Arc<Table>,
    outgoing: Vec<Outgoing>,
    incoming: Vec<Incoming>,
}

/// One of this table's foreign keys, its referenced table, and the keys new rows reference
/// (by key code).
struct Outgoing {
    fk: ForeignKey,
    parent: Arc<Table>,
    keys: HashMap<Vec<u8>, Vec<Value>>,
}

/// A foreign key referencing this table, and the keys rows lost: (old key, the new key of an
/// update), in the order first seen.
struct Incoming {
    child: Arc<Table>,
    fk: ForeignKey,
    removed: Vec<(Vec<Value>, Option<Vec<Value>>)>,
    seen: std::collections::HashSet<Vec<u8>>,
}

impl Tracker {
    /// A tracker for a statement changing `table`; None when no foreign key involves it.
    pub fn new(s: &Session, table: &Arc<Table>) -> Result<Option<Tracker>> {
        // The common case, checked without listing the tables: no foreign key anywhere.
        let pending =
            s.txn.as_ref().is_some_and(|t| t.creates.iter().chain(t.replaces.iter().map(|(n, _)| n)).any(|x| !x.foreign_keys.is_empty()));
        if table.foreign_keys.is_empty() && !pending && !s.shared.catalog.any_foreign_keys() {
            return Ok(None);
        }
        let incoming: Vec<Incoming> = referencing(s, table.oid)
            .into_iter()
            .map(|(child, fk)| Incoming { child, fk, removed: Vec::new(), seen: Default::default() })
            .collect();
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
            outgoing.push(Outgoing { fk: fk.clone(), parent, keys: HashMap::new() });
        }
        Ok(Some(Tracker { table: table.clone(), outgoing, incoming }))
    }

    /// Whether a statement that only inserts has anything to check (this table references
    /// another).
    pub fn references(&self) -> bool {
        !self.outgoing.is_empty()
    }

    /// A new row version (all columns).
    pub fn inserted(&mut self, row: &[Value]) -> Result<()> {
        for o in &mut self.outgoing {
            let types: Vec<SqlType> = o.fk.ref_columns.iter().map(|&c| o.parent.columns[c].ty).collect();
            if let Some(k) = key_of(row, &o.fk.columns, &types)? {
                o.keys.entry(keycode(&k)).or_insert(k);
            }
        }
        Ok(())
    }

    /// A new row version in stored form.
    pub fn inserted_stored(&mut self, stored: &[Option<Vec<u8>>]) -> Result<()> {
        if self.outgoing.is_empty() {
            return Ok(());
        }
        let row: Vec<Value> =
            stored.iter().zip(&self.table.columns).map(|(v, c)| v.as_ref().map_or(Value::Null, |b| Value::decode(&c.ty, b))).collect();
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

    /// A row updated from `old` (all columns) to the stored version `stored`.
    pub fn updated_stored(&mut self, old: &[Value], stored: &[Option<Vec<u8>>]) -> Result<()> {
        let new: Vec<Value> =
            stored.iter().zip(&self.table.columns).map(|(v, c)| v.as_ref().map_or(Value::Null, |b| Value::decode(&c.ty, b))).collect();
        self.updated(old, &new)
    }

    /// A row deleted (its old values).
    pub fn deleted(&mut self, old: &[Value]) -> Result<()> {
        self.removed(old, None)
    }

    /// A row updated from `old` to `new` (all columns). As in PostgreSQL, a key the update
    /// left as it was is not checked again.
    pub fn updated(&mut self, old: &[Value], new: &[Value]) -> Result<()> {
        for o in &mut self.outgoing {
            let types: Vec<SqlType> = o.fk.ref_columns.iter().map(|&c| o.parent.columns[c].ty).collect();
            let Some(k) = key_of(new, &o.fk.columns, &types)? else { continue };
            let code = keycode(&k);
            if key_of(old, &o.fk.columns, &types)?.is_some_and(|was| keycode(&was) == code) {
                continue;
            }
            o.keys.entry(code).or_insert(k);
        }
        self.removed(old, Some(new))
    }

    fn removed(&mut self, old: &[Value], new: Option<&[Value]>) -> Result<()> {
        for inc in &mut self.incoming {
            let types: Vec<SqlType> = inc.fk.ref_columns.iter().map(|&c| self.table.columns[c].ty).collect();
            let Some(k) = key_of(old, &inc.fk.ref_columns, &types)? else { continue };
            let nk = match new {
                Some(n) => {
                    let nk = key_of(n, &inc.fk.ref_columns, &types)?;
                    // An update that leaves the key as it was removes nothing.
                    if nk.as_ref().is_some_and(|nk| keycode(nk) == keycode(&k)) {
                        continue;
                    }
                    nk.or(Some(Vec::new()))
                }
                None => None,
            };
            if inc.seen.insert(keycode(&k)) {
                inc.removed.push((k, nk));
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
        let busy = self.outgoing.iter().any(|o| !o.keys.is_empty()) || self.incoming.iter().any(|i| !i.removed.is_empty());
        if !busy {
            return Ok(());
        }
        // The statement's own rows become visible to what follows.
        s.command_done();
        for Outgoing { fk, parent, keys } in &self.outgoing {
            if keys.is_empty() {
                continue;
            }
            if keys.len() > KEY_LOCK_LIMIT {
                s.lock_table(parent, LockMode::Share)?;
            } else {
                for code in keys.keys() {
                    s.lock_tag(key_lock(parent.oid, code), LockMode::Share)?;
                }
            }
            let probe = Probe::new(s, parent, &fk.ref_columns)?;
            let snap = s.latest_snapshot();
            for key in keys.values() {
                if !probe.exists(s, &snap, key)? {
                    return Err(PgError::new(
                        "23503",
                        format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", self.table.name, fk.name),
                    )
                    .with_detail(format!("Key {} is not present in table \"{}\".", key_text(&self.table, &fk.columns, key), parent.name))
                    .with_table(&self.table.name)
                    .with_constraint(&fk.name));
                }
            }
        }
        for Incoming { child, fk, removed: keys, .. } in &self.incoming {
            if keys.is_empty() {
                continue;
            }
            if keys.len() > KEY_LOCK_LIMIT {
                s.lock_table(child, LockMode::ShareRowExclusive)?;
            } else {
                for (k, _) in keys {
                    s.lock_tag(key_lock(self.table.oid, &keycode(k)), LockMode::Exclusive)?;
                }
            }
            // The referencing table as it is now (an earlier action may have changed it).
            let child = s.lookup_table(&child.name).filter(|c| c.oid == child.oid).unwrap_or_else(|| child.clone());
            let refs = Probe::new(s, &child, &fk.columns)?;
            let again = Probe::new(s, &self.table, &fk.ref_columns)?;
            for (old, new) in keys {
                let act = if new.is_some() { fk.on_update } else { fk.on_delete };
                let still_referenced = |s: &mut Session| -> Result<bool> {
                    let snap = s.latest_snapshot();
                    refs.exists(s, &snap, old)
                };
                let violation = || {
                    PgError::new(
                        "23503",
                        format!(
                            "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                            self.table.name, fk.name, child.name
                        ),
                    )
                    .with_detail(format!(
                        "Key {} is still referenced from table \"{}\".",
                        key_text(&self.table, &fk.ref_columns, old),
                        child.name
                    ))
                    .with_table(&child.name)
                    .with_constraint(&fk.name)
                };
                // A referencing row this REPEATABLE READ transaction cannot see was committed
                // after its snapshot: PostgreSQL fails such a change with 40001.
                let refused = |s: &mut Session| -> Result<PgError> {
                    if s.snapshot_is_transaction_wide() {
                        let snap = s.snapshot();
                        if !refs.exists(s, &snap, old)? {
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
                        if again.exists(s, &snap, old)? {
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
                        run_action(s, &child, fk, act, old, new.as_deref())?;
                        if still_referenced(s)? {
                            // A row the action could not see references the key: one
                            // committed after this REPEATABLE READ transaction's snapshot.
                            return Err(if s.snapshot_is_transaction_wide() {
                                PgError::new(sqlstate::SERIALIZATION_FAILURE, "could not serialize access due to concurrent update")
                            } else {
                                violation()
                            });
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Plans of [`Probe`]s by (table OID, columns), each with the table definition it was made
/// from: a plan is reused only while that definition is the current one.
pub(crate) type ProbeCache = HashMap<(u32, Vec<usize>), (Arc<Table>, Arc<crate::exec::Node>)>;

/// `SELECT 1 FROM t WHERE c1 = $1 AND ... LIMIT 1`, planned once per table definition (an
/// index scan where an index covers the columns) and run per key with a given snapshot.
struct Probe {
    node: Arc<crate::exec::Node>,
    types: Vec<SqlType>,
}

impl Probe {
    fn new(s: &Session, t: &Table, cols: &[usize]) -> Result<Probe> {
        let types = cols.iter().map(|&c| t.columns[c].ty).collect();
        // Locked as planning it would (ACCESS SHARE), then the current definition.
        let current = s.relation_for_query(&t.name)?;
        let key = (t.oid, cols.to_vec());
        if let Some((def, node)) = s.fk_probes.borrow().get(&key) {
            if Arc::ptr_eq(def, &current) {
                return Ok(Probe { node: node.clone(), types });
            }
        }
        let node = Arc::new(Self::plan(s, t, cols)?);
        s.fk_probes.borrow_mut().insert(key, (current, node.clone()));
        Ok(Probe { node, types })
    }

    fn plan(s: &Session, t: &Table, cols: &[usize]) -> Result<crate::exec::Node> {
        let conds: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, &c)| format!("{} = ${}::{}", super::func::quote_ident(&t.columns[c].name), i + 1, t.columns[c].ty.name()))
            .collect();
        let sql = format!("SELECT 1 FROM {} WHERE {} LIMIT 1", super::func::quote_ident(&t.name), conds.join(" AND "));
        let q = super::view::parse_query(&sql)?;
        let now = s.txn.as_ref().map(|x| x.start_us);
        Ok(super::query::Planner::new(s, now).query(&q, &[])?.node)
    }

    fn exists(&self, s: &Session, snap: &crate::txn::Snapshot, key: &[Value]) -> Result<bool> {
        let params: Vec<Option<String>> = key
            .iter()
            .zip(&self.types)
            .map(|(v, ty)| {
                let v = if super::expr::value_type(v).is_some_and(|t| t.id == ty.id) {
                    v.clone()
                } else {
                    super::expr::cast_value(v.clone(), ty)?
                };
                Ok(v.to_text(ty))
            })
            .collect::<Result<_>>()?;
        let ex = crate::exec::Exec::new(s, snap.clone(), &params);
        let mut found = false;
        ex.run(&self.node, &[], &mut |_| {
            found = true;
            Ok(crate::access::heap::Flow::Stop)
        })?;
        Ok(found)
    }
}

/// CASCADE, SET NULL or SET DEFAULT on the rows of `child` referencing `old`: a DELETE or an
/// UPDATE run as a statement of its own (its tracker checks the tables it affects in turn).
fn run_action(s: &mut Session, child: &Table, fk: &ForeignKey, act: FkAction, old: &[Value], new: Option<&[Value]>) -> Result<()> {
    let q = super::func::quote_ident;
    let mut params: Vec<Option<String>> = Vec::new();
    let mut conds = Vec::new();
    for (i, &c) in fk.columns.iter().enumerate() {
        let ty = child.columns[c].ty;
        let v = super::expr::cast_value(old[i].clone(), &ty)?;
        params.push(v.to_text(&ty));
        conds.push(format!("{} = ${}::{}", q(&child.columns[c].name), params.len(), ty.name()));
    }
    // The referencing columns' new values: the new key (ON UPDATE CASCADE; a key column the
    // update made NULL gives NULL), NULL, or their defaults.
    let mut sets = Vec::with_capacity(fk.columns.len());
    for (i, &c) in fk.columns.iter().enumerate() {
        let ty = child.columns[c].ty;
        let value = match (act, new) {
            (FkAction::Cascade, Some(new)) => {
                let v = match new.get(i) {
                    Some(v) if *v != Value::Null => super::expr::cast_value(v.clone(), &ty)?.to_text(&ty),
                    _ => None,
                };
                params.push(v);
                format!("${}::{}", params.len(), ty.name())
            }
            (FkAction::SetNull, _) => "NULL".to_string(),
            _ => "DEFAULT".to_string(),
        };
        sets.push(format!("{} = {value}", q(&child.columns[c].name)));
    }
    let sql = match (act, new) {
        (FkAction::Cascade, None) => format!("DELETE FROM {} WHERE {}", q(&child.name), conds.join(" AND ")),
        (FkAction::Cascade | FkAction::SetNull | FkAction::SetDefault, _) => {
            format!("UPDATE {} SET {} WHERE {}", q(&child.name), sets.join(", "), conds.join(" AND "))
        }
        _ => unreachable!("NO ACTION and RESTRICT run no statement"),
    };
    let st = super::statements(&sql)?.into_iter().next().ok_or_else(|| PgError::internal("empty action statement"))?;
    match st {
        sqlparser::ast::Statement::Delete(d) => super::dml::delete(s, d, &params)?,
        sqlparser::ast::Statement::Update { table, assignments, selection, .. } => {
            super::dml::update(s, &table, &assignments, selection.as_ref(), None, &params)?
        }
        _ => return Err(PgError::internal("unexpected action statement")),
    };
    s.command_done();
    Ok(())
}

/// Checks that every row of `table` satisfies `fk` (ALTER TABLE ... ADD FOREIGN KEY), taking
/// SHARE ROW EXCLUSIVE on the referenced table as PostgreSQL does.
pub(crate) fn validate(s: &mut Session, table: &Arc<Table>, fk: &ForeignKey) -> Result<()> {
    let parent = if fk.ref_table == table.oid {
        table.clone()
    } else {
        let p = s.visible_tables().into_iter().find(|t| t.oid == fk.ref_table).ok_or_else(|| PgError::internal("referenced table"))?;
        s.lock_table(&p, LockMode::ShareRowExclusive)?;
        s.lookup_table(&p.name).unwrap_or(p)
    };
    let types: Vec<SqlType> = fk.ref_columns.iter().map(|&c| parent.columns[c].ty).collect();
    let mut keys: HashMap<Vec<u8>, Vec<Value>> = HashMap::new();
    let mut err = None;
    super::ddl::for_each_row(s, table, |row| {
        match key_of(row, &fk.columns, &types) {
            Ok(Some(k)) => {
                keys.entry(keycode(&k)).or_insert(k);
            }
            Ok(None) => {}
            Err(e) => err = Some(e),
        }
        Ok(())
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    s.command_done();
    let probe = Probe::new(s, &parent, &fk.ref_columns)?;
    let snap = s.latest_snapshot();
    for key in keys.values() {
        if !probe.exists(s, &snap, key)? {
            return Err(PgError::new(
                "23503",
                format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", table.name, fk.name),
            )
            .with_detail(format!("Key {} is not present in table \"{}\".", key_text(table, &fk.columns, key), parent.name))
            .with_table(&table.name)
            .with_constraint(&fk.name));
        }
    }
    Ok(())
}

/// `pg_get_constraintdef` of a foreign key: `FOREIGN KEY (a) REFERENCES p(id) ON DELETE
/// CASCADE`.
pub(crate) fn definition(table: &Table, fk: &ForeignKey, parent: &Table) -> String {
    let q = super::func::quote_ident;
    let cols: Vec<String> = fk.columns.iter().map(|&c| q(&table.columns[c].name)).collect();
    let refs: Vec<String> = fk.ref_columns.iter().map(|&c| q(&parent.columns[c].name)).collect();
    let mut d = format!("FOREIGN KEY ({}) REFERENCES {}({})", cols.join(", "), q(&parent.name), refs.join(", "));
    if fk.on_update != FkAction::NoAction {
        d.push_str(&format!(" ON UPDATE {}", fk.on_update.sql()));
    }
    if fk.on_delete != FkAction::NoAction {
        d.push_str(&format!(" ON DELETE {}", fk.on_delete.sql()));
    }
    d
}

/// Refuses to drop or empty `t` while a foreign key of a table not also named in the same
/// statement (`also`) references it.
pub(crate) fn check_not_referenced(s: &Session, t: &Table, also: &[String], truncate: bool) -> Result<()> {
    let mut deps: Vec<(Arc<Table>, ForeignKey)> =
        referencing(s, t.oid).into_iter().filter(|(child, _)| child.oid != t.oid && !also.contains(&child.name)).collect();
    deps.sort_by_key(|d| d.1.oid);
    let Some((child, _)) = deps.first() else { return Ok(()) };
    Err(if truncate {
        PgError::feature("cannot truncate a table referenced in a foreign key constraint")
            .with_detail(format!("Table \"{}\" references \"{}\".", child.name, t.name))
            .with_hint(format!("Truncate table \"{}\" at the same time, or use TRUNCATE ... CASCADE.", child.name))
    } else {
        let lines: Vec<String> =
            deps.iter().map(|(c, f)| format!("constraint {} on table {} depends on table {}", f.name, c.name, t.name)).collect();
        let msg = if also.len() > 1 {
            "cannot drop desired object(s) because other objects depend on them".to_string()
        } else {
            format!("cannot drop table {} because other objects depend on it", t.name)
        };
        PgError::new("2BP01", msg).with_detail(lines.join("\n")).with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
    })
}

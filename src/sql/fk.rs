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

/// Whether a referencing column of type `a` may reference one of type `b`: PostgreSQL's rule
/// that `a` coerce implicitly to `b` or that the two share a B-tree operator family with a
/// cross-type equality (integers; the text types; date, timestamp and timestamptz).
fn comparable(a: SqlType, b: SqlType) -> bool {
    use super::expr::{is_datetime, is_int, is_text};
    use crate::types::TypeId::{Float4, Float8, Numeric};
    a.id == b.id
        || (is_int(a.id) && is_int(b.id))
        || (is_int(a.id) && b.id == Numeric)
        || ((is_int(a.id) || matches!(a.id, Numeric | Float4)) && matches!(b.id, Float4 | Float8))
        || (is_text(a.id) && is_text(b.id))
        || (is_datetime(a.id) && is_datetime(b.id))
}

/// The type a referencing value of type `a` and a referenced value of type `b` are compared
/// (and key-locked) in: their common type, without a type modifier (no length or scale is
/// applied to a key), `char(n)` as text (trailing blanks do not count).
fn compare_type(a: SqlType, b: SqlType) -> Result<SqlType> {
    let t = super::func::common_type(&[Some(a), Some(b)], "foreign key")?.unwrap_or(b);
    let id = if t.id == crate::types::TypeId::Bpchar { crate::types::TypeId::Text } else { t.id };
    Ok(SqlType::new(id))
}

/// Resolves and checks a FOREIGN KEY of `table` (its columns as they will be; `table` itself
/// when it references itself): the referenced table and columns (its primary key when none
/// are named), a unique index covering exactly them, comparable types, the name
/// (`<table>_<columns>_fkey` by default). `taken` says whether a constraint name is in use.
pub(crate) fn define(s: &mut Session, table: &Table, spec: FkSpec, taken: &dyn Fn(&str) -> bool) -> Result<ForeignKey> {
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
        let p = s
            .lookup_table(&spec.ref_table)
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", spec.ref_table)))?;
        // As PostgreSQL: SHARE ROW EXCLUSIVE on the referenced table until the transaction
        // ends, so no row of it changes before the new constraint is visible to all.
        s.lock_table_current(&p, crate::lock::LockMode::ShareRowExclusive)?
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

/// The columns `cols` of a row converted to the comparison types `types`; None if one is NULL
/// (MATCH SIMPLE: no check).
fn key_of(row: &[Value], cols: &[usize], types: &[SqlType]) -> Result<Option<Vec<Value>>> {
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
    if super::expr::value_type(v).is_some_and(|t| t.id == ty.id) {
        return Ok(v.clone());
    }
    super::expr::cast_value(v.clone(), ty)
}

fn keycode(key: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    crate::exec::key_of(key, &mut out);
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
fn key_text(table: &Table, cols: &[usize], row: &[Value]) -> String {
    let names: Vec<&str> = cols.iter().map(|&c| table.columns[c].name.as_str()).collect();
    let vals: Vec<String> = cols.iter().map(|&c| row[c].to_text(&table.columns[c].ty).unwrap_or_else(|| "null".into())).collect();
    format!("({})=({})", names.join(", "), vals.join(", "))
}

/// The comparison types of a foreign key's columns.
fn compare_types(child: &Table, parent: &Table, fk: &ForeignKey) -> Result<Vec<SqlType>> {
    fk.columns.iter().zip(&fk.ref_columns).map(|(&c, &r)| compare_type(child.columns[c].ty, parent.columns[r].ty)).collect()
}

/// The keys one statement added to or removed from the keys foreign keys depend on (see the
/// module doc).
pub(crate) struct Tracker {
    table: Arc<Table>,
    outgoing: Vec<Outgoing>,
    incoming: Vec<Incoming>,
}

/// One of this table's foreign keys, its referenced table, and the keys new rows reference:
/// by key code, the key in comparison types and the new row (for the error's DETAIL).
struct Outgoing {
    fk: ForeignKey,
    parent: Arc<Table>,
    types: Vec<SqlType>,
    keys: HashMap<Vec<u8>, (Vec<Value>, Vec<Value>)>,
}

/// A foreign key referencing this table, and the keys rows lost, in the order first seen.
struct Incoming {
    child: Arc<Table>,
    fk: ForeignKey,
    types: Vec<SqlType>,
    removed: Vec<Removed>,
    seen: std::collections::HashSet<Vec<u8>>,
}

/// A referenced key a row lost: the key in comparison types, the old row, and for an update
/// the new row (ON UPDATE CASCADE copies its key columns, NULLs included).
struct Removed {
    key: Vec<Value>,
    old: Vec<Value>,
    new: Option<Vec<Value>>,
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
        let busy = self.outgoing.iter().any(|o| !o.keys.is_empty()) || self.incoming.iter().any(|i| !i.removed.is_empty());
        if !busy {
            return Ok(());
        }
        // The statement's own rows become visible to what follows.
        s.command_done();
        for Outgoing { fk, parent, types, keys } in &self.outgoing {
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
            let probe = Probe::new(s, parent, &fk.ref_columns, types)?;
            let snap = s.latest_snapshot();
            for (key, row) in keys.values() {
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
                .with_table(&self.table.name)
                .with_constraint(&fk.name));
            }
        }
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
                    s.lock_tag(key_lock(self.table.oid, &keycode(&r.key)), LockMode::Exclusive)?;
                }
            }
            let refs = Probe::new(s, &child, &fk.columns, types)?;
            let again = Probe::new(s, &self.table, &fk.ref_columns, types)?;
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
                            self.table.name, fk.name, child.name
                        ),
                    )
                    .with_detail(format!(
                        "Key {} is still referenced from table \"{}\".",
                        key_text(&self.table, &fk.ref_columns, &r.old),
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
                        run_action(s, &self.table, &child, &fk, types, act, r)?;
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

/// Plans of [`Probe`]s by (table OID, column names, comparison types), each with the table
/// definition it was made from: a plan is reused only while that definition is current.
pub(crate) type ProbeCache = HashMap<(u32, Vec<String>, Vec<SqlType>), (Arc<Table>, Arc<crate::exec::Node>)>;

/// `SELECT 1 FROM t WHERE c1 = $1 AND ... LIMIT 1` in comparison types, planned once per
/// table definition (an index scan where an index covers the columns and no conversion is
/// needed) and run per key with a given snapshot.
struct Probe {
    node: Arc<crate::exec::Node>,
    types: Vec<SqlType>,
}

/// `col = $n::type`, or `col::type = $n::type` when the column's type is not the comparison
/// type.
fn condition(col: &crate::catalog::Column, n: usize, ty: &SqlType) -> String {
    let name = super::func::quote_ident(&col.name);
    if col.ty.id == ty.id {
        format!("{name} = ${n}::{}", ty.name())
    } else {
        format!("{name}::{} = ${n}::{}", ty.name(), ty.name())
    }
}

impl Probe {
    /// A probe of table `t` (named as it is in `t`; planned against its current definition,
    /// locked ACCESS SHARE as planning it would) on columns `cols` in `types`.
    fn new(s: &Session, t: &Table, cols: &[usize], types: &[SqlType]) -> Result<Probe> {
        let names: Vec<String> = cols.iter().map(|&c| t.columns[c].name.clone()).collect();
        let current = s.relation_for_query(&t.name)?;
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
        let sql = format!("SELECT 1 FROM {} WHERE {} LIMIT 1", super::func::quote_ident(&current.name), conds.join(" AND "));
        let q = super::view::parse_query(&sql)?;
        let now = s.txn.as_ref().map(|x| x.start_us);
        let node = Arc::new(super::query::Planner::new(s, now).query(&q, &[])?.node);
        s.fk_probes.borrow_mut().insert(key, (current, node.clone()));
        Ok(Probe { node, types: types.to_vec() })
    }

    fn exists(&self, s: &Session, snap: &crate::txn::Snapshot, key: &[Value]) -> Result<bool> {
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
    let q = super::func::quote_ident;
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

/// Checks that every row of `table` satisfies `fk` (ALTER TABLE ... ADD FOREIGN KEY; the
/// referenced table was locked SHARE ROW EXCLUSIVE by [`define`]).
pub(crate) fn validate(s: &mut Session, table: &Arc<Table>, fk: &ForeignKey) -> Result<()> {
    let parent = if fk.ref_table == table.oid {
        table.clone()
    } else {
        s.visible_tables().into_iter().find(|t| t.oid == fk.ref_table).ok_or_else(|| PgError::internal("referenced table"))?
    };
    let types = compare_types(table, &parent, fk)?;
    let mut keys: HashMap<Vec<u8>, (Vec<Value>, Vec<Value>)> = HashMap::new();
    let mut err = None;
    super::ddl::for_each_row(s, table, |row| {
        match key_of(row, &fk.columns, &types) {
            Ok(Some(k)) => {
                keys.entry(keycode(&k)).or_insert_with(|| (k, row.to_vec()));
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
    let probe = Probe::new(s, &parent, &fk.ref_columns, &types)?;
    let snap = s.latest_snapshot();
    for (key, row) in keys.values() {
        if !probe.exists(s, &snap, key)? {
            return Err(PgError::new(
                "23503",
                format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", table.name, fk.name),
            )
            .with_detail(format!("Key {} is not present in table \"{}\".", key_text(table, &fk.columns, row), parent.name))
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

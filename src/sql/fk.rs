//! FOREIGN KEY constraints as DDL: their definition (CREATE TABLE, ALTER TABLE ADD), the check
//! of existing rows when one is added ([`validate`]), `pg_get_constraintdef`'s text, and the
//! refusal to drop or truncate a referenced table. The checks and actions every row statement
//! runs at its end live in the executor (`exec::fk`), which COPY, INSERT, UPDATE and DELETE
//! call down into.
//!
//! Invariant: a foreign key's referenced columns are covered exactly by a unique index of the
//! referenced table, and the pairs of column types are comparable ([`define`] refuses
//! others), so `exec::fk` can find a referenced key with one index probe.

use crate::catalog::{fold_ident, FkAction, ForeignKey, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::exec::fk::{compare_types, key_of, key_text, keycode, referencing, Probe};
use crate::session::Session;
use crate::types::{SqlType, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// A FOREIGN KEY as written (a table constraint, a column's REFERENCES, or ALTER TABLE ADD).
pub(crate) struct FkSpec {
    pub name: Option<String>,
    pub columns: Vec<String>,
    /// The referenced table as `catalog::relation_key` gives it.
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
            ref_table: crate::catalog::relation_key(foreign_table)?,
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
            ref_table: crate::catalog::relation_key(foreign_table)?,
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
pub(crate) fn compare_type(a: SqlType, b: SqlType) -> Result<SqlType> {
    let t = super::func::common_type(&[Some(a), Some(b)], "foreign key")?.unwrap_or(b);
    let id = if t.id == crate::types::TypeId::Bpchar { crate::types::TypeId::Text } else { t.id };
    Ok(SqlType::new(id))
}

/// Resolves and checks a FOREIGN KEY of `table` (its columns as they will be; `table` itself
/// when it references itself): the referenced table and columns (its primary key when none
/// are named), a unique index covering exactly them, comparable types, the name
/// (`<table>_<columns>_fkey` by default). `taken` says whether a constraint name is in use.
pub(crate) fn define(s: &mut Session, table: &Table, spec: FkSpec, taken: &dyn Fn(&str) -> bool) -> Result<ForeignKey> {
    let (mut deferrable, mut initially_deferred) = (false, false);
    if let Some(c) = &spec.characteristics {
        initially_deferred = matches!(c.initially, Some(sqlparser::ast::DeferrableInitial::Deferred));
        if c.deferrable == Some(false) && initially_deferred {
            return Err(PgError::syntax("constraint declared INITIALLY DEFERRED must be DEFERRABLE"));
        }
        deferrable = c.deferrable == Some(true) || initially_deferred;
        if c.enforced.is_some() {
            return Err(PgError::syntax("syntax error at or near \"ENFORCED\""));
        }
    }
    let (ref_schema, ref_name) = crate::catalog::split_key(&spec.ref_table);
    let itself = ref_name == table.name && ref_schema.is_none_or(|sc| (sc == crate::catalog::Schema::Temp) == table.is_temp());
    let parent: Arc<Table> = if itself {
        Arc::new(table.clone())
    } else {
        let p = s.lookup_table(&spec.ref_table).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", crate::catalog::key_display(&spec.ref_table)))
        })?;
        // As PostgreSQL: SHARE ROW EXCLUSIVE on the referenced table until the transaction
        // ends, so no row of it changes before the new constraint is visible to all.
        s.lock_table_current(&p, crate::lock::LockMode::ShareRowExclusive)?
    };
    if !parent.is_table() {
        return Err(PgError::new("42809", format!("referenced relation \"{}\" is not a table", parent.name)));
    }
    {
        use crate::catalog::Persistence::*;
        match (table.persistence, parent.persistence) {
            (Permanent, Unlogged | Temporary) => {
                return Err(PgError::new("42P16", "constraints on permanent tables may reference only permanent tables"))
            }
            (Unlogged, Temporary) => {
                return Err(PgError::new("42P16", "constraints on unlogged tables may reference only permanent or unlogged tables"))
            }
            (Temporary, Permanent | Unlogged) => {
                return Err(PgError::new("42P16", "constraints on temporary tables may reference only temporary tables"))
            }
            _ => {}
        }
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
            i.unique && i.predicate.is_none() && !i.has_exprs() && k == sorted && k.len() == cols.len()
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
        deferrable,
        initially_deferred,
    })
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
            .with_table(table)
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
    if fk.initially_deferred {
        d.push_str(" DEFERRABLE INITIALLY DEFERRED");
    } else if fk.deferrable {
        d.push_str(" DEFERRABLE");
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

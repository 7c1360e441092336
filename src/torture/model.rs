//! What the database must hold: tables, their secondary indexes and their rows, as the
//! acknowledged statements left them.
//!
//! A transaction's changes are kept aside ([`Change`]) and applied to the model only when its
//! COMMIT (or its autocommit statement) is acknowledged. A commit whose acknowledgement never
//! came (a power loss or a PANIC during it) is *in doubt*: after recovery the database must
//! equal the model either without it or with all of it, never with a part.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub v: i64,
    pub pad: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableModel {
    /// `id` is the PRIMARY KEY.
    pub pk: bool,
    /// Secondary index names (on `v`).
    pub indexes: BTreeSet<String>,
    pub rows: BTreeMap<i64, Row>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    pub tables: BTreeMap<String, TableModel>,
    /// The sequence `torture_seq`, once its creation was acknowledged: the highest value
    /// `nextval` gave, or `setval` set, in an acknowledged commit. A `nextval` after any crash
    /// must give more (values are never handed out twice).
    pub seq_floor: Option<i64>,
}

/// One change a statement made.
#[derive(Clone, Debug)]
pub enum Change {
    CreateTable {
        name: String,
        pk: bool,
    },
    DropTable {
        name: String,
    },
    Truncate {
        name: String,
    },
    /// ALTER TABLE that rewrites the table into new files (a column added with a default and
    /// dropped again) and renames it there and back: the rows stay as they were.
    Rewrite {
        name: String,
    },
    CreateIndex {
        table: String,
        name: String,
    },
    DropIndex {
        table: String,
        name: String,
    },
    Insert {
        table: String,
        id: i64,
        row: Row,
    },
    Update {
        table: String,
        id: i64,
        row: Row,
    },
    Delete {
        table: String,
        id: i64,
    },
    /// `nextval` gave, or `setval` set, this value of `torture_seq`.
    Seq(i64),
}

impl Model {
    /// Applies one committed change.
    pub fn apply(&mut self, c: &Change) {
        match c {
            Change::Seq(v) => {
                if let Some(f) = &mut self.seq_floor {
                    *f = (*f).max(*v);
                }
            }
            Change::CreateTable { name, pk } => {
                self.tables.insert(name.clone(), TableModel { pk: *pk, ..Default::default() });
            }
            Change::DropTable { name } => {
                self.tables.remove(name);
            }
            Change::Truncate { name } => {
                if let Some(t) = self.tables.get_mut(name) {
                    t.rows.clear();
                }
            }
            Change::Rewrite { .. } => {}
            Change::CreateIndex { table, name } => {
                if let Some(t) = self.tables.get_mut(table) {
                    t.indexes.insert(name.clone());
                }
            }
            Change::DropIndex { table, name } => {
                if let Some(t) = self.tables.get_mut(table) {
                    t.indexes.remove(name);
                }
            }
            Change::Insert { table, id, row } | Change::Update { table, id, row } => {
                if let Some(t) = self.tables.get_mut(table) {
                    t.rows.insert(*id, row.clone());
                }
            }
            Change::Delete { table, id } => {
                if let Some(t) = self.tables.get_mut(table) {
                    t.rows.remove(id);
                }
            }
        }
    }

    pub fn apply_all(&mut self, changes: &[Change]) {
        for c in changes {
            self.apply(c);
        }
    }

    /// Rows in all tables.
    pub fn row_count(&self) -> usize {
        self.tables.values().map(|t| t.rows.len()).sum()
    }
}

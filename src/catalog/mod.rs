//! The catalog: tables, their columns and types, their indexes, and which files hold them;
//! persisted in `global/catalog.json`. An index belongs to its table's entry
//! ([`Table::indexes`]), so CREATE / DROP INDEX are table definition changes ("replaces") and
//! share the tables' transactional DDL and its WAL record.
//!
//! DDL is transactional the way PostgreSQL's is, with relation file numbers doing the work:
//! CREATE TABLE makes new files; TRUNCATE gives the table *new* files and keeps the old ones
//! until commit; DROP deletes the files only at commit. A transaction's catalog changes are
//! held in its session (see `session`) and applied here at commit; an abort deletes the files
//! it created. So a failed or rolled-back DDL leaves nothing behind, and a reader never sees a
//! half-changed table.
//!
//! Invariants:
//! 1. The catalog file is replaced atomically (`fsutil::write_file_durably`) at every commit
//!    that changed it, before the commit is acknowledged.
//! 2. Table names are unique (case-folded as PostgreSQL folds unquoted identifiers); oids and
//!    relfile numbers are never reused (the counters only grow and are saved).
//! 3. Relation files on disk that no table references are orphans of a crashed transaction
//!    and are removed at start-up.

use crate::error::{sqlstate, PgError, Result};
use crate::storage::RelFileNumber;
use crate::types::SqlType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

pub type Oid = u32;

/// First oid handed to user objects (PostgreSQL's FirstNormalObjectId).
pub const FIRST_NORMAL_OID: Oid = 16384;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
    /// The DEFAULT expression, as SQL text (parsed and bound by each statement that needs
    /// it; `pg_attrdef` shows it). `serial` columns get `nextval('<seq>'::regclass)`.
    #[serde(default)]
    pub default: Option<String>,
    /// `GENERATED ALWAYS / BY DEFAULT AS IDENTITY`: the value comes from the sequence the
    /// column owns ([`SequenceDef::owned_by`]).
    #[serde(default)]
    pub identity: Option<Identity>,
    /// `COMMENT ON COLUMN` (`col_description`, `pg_description`).
    #[serde(default)]
    pub comment: Option<String>,
}

impl Column {
    pub fn new(name: String, ty: SqlType, not_null: bool) -> Column {
        Column { name, ty, not_null, default: None, identity: None, comment: None }
    }
}

/// An identity column's kind (`pg_attribute.attidentity` 'a' / 'd').
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Identity {
    Always,
    ByDefault,
}

/// What a relation is (`pg_class.relkind`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum RelKind {
    /// An ordinary table ('r').
    #[default]
    Table,
    /// A sequence ('S'): its one page holds `(last_value, log_cnt, is_called)`
    /// (`access::sequence`); its parameters are here.
    Sequence(SequenceDef),
    /// A view ('v'): planned as a subquery wherever it is named.
    View(ViewDef),
}

/// A view's definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    /// The query, as SQL text.
    pub query: String,
    /// The relations the query reads (a table or view named here cannot be dropped while
    /// the view exists).
    pub deps: Vec<Oid>,
}

/// A sequence's parameters (PostgreSQL's `pg_sequence`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SequenceDef {
    /// smallint, integer or bigint.
    pub ty: SqlType,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cache: i64,
    pub cycle: bool,
    /// The column that owns it (`serial`, identity, `OWNED BY`): (table oid, column name).
    /// It is dropped with that table.
    pub owned_by: Option<(Oid, String)>,
}

/// A CHECK constraint: its name and its expression as SQL text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub expr: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Persistence {
    Permanent,
    Unlogged,
    /// A session's temporary relation (`CREATE TEMP TABLE`): never in the shared catalog nor
    /// in the WAL, seen only by the session that made it (`Session`'s temporary relations),
    /// its files deleted when the session ends (or, after a crash, as orphans at start-up).
    Temporary,
}

/// What a temporary table's `ON COMMIT` clause does at each commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnCommit {
    PreserveRows,
    DeleteRows,
    Drop,
}

/// A relation name's schema as a statement wrote it: the session's temporary schema
/// (`pg_temp`) or `public`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    Temp,
    Public,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub oid: Oid,
    pub name: String,
    pub columns: Vec<Column>,
    pub relfile: RelFileNumber,
    /// Files of the out-of-line storage (TOAST) relation, if the table has varlena columns.
    pub toast_relfile: Option<RelFileNumber>,
    pub persistence: Persistence,
    /// The table's indexes (B-trees). Part of the table's definition, so an index is created,
    /// dropped and truncated with the same transactional DDL as the table (a "replace").
    #[serde(default)]
    pub indexes: Vec<Index>,
    /// Table, sequence or view.
    #[serde(default)]
    pub kind: RelKind,
    /// CHECK constraints, checked on every row an INSERT, UPDATE or COPY writes.
    #[serde(default)]
    pub checks: Vec<Check>,
    /// FOREIGN KEY constraints this table's rows must satisfy (`sql::fk`).
    #[serde(default)]
    pub foreign_keys: Vec<ForeignKey>,
    /// `COMMENT ON TABLE | VIEW | SEQUENCE` (`obj_description`, `pg_description`).
    #[serde(default)]
    pub comment: Option<String>,
}

/// A FOREIGN KEY constraint of the referencing table: its `columns` must hold, unless one of
/// them is NULL (MATCH SIMPLE), a key some row of table `ref_table` has in `ref_columns`, which
/// a unique index of that table (`ref_index`) covers exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// The constraint's OID (`pg_constraint.oid`).
    pub oid: Oid,
    pub name: String,
    /// Referencing columns (indexes into this table's columns), in key order.
    pub columns: Vec<usize>,
    /// The referenced table, by OID (a RENAME keeps it).
    pub ref_table: Oid,
    /// Referenced columns (indexes into the referenced table's columns), paired with `columns`.
    pub ref_columns: Vec<usize>,
    /// The referenced table's unique index the key is looked up in (`pg_constraint.conindid`).
    pub ref_index: Oid,
    pub on_delete: FkAction,
    pub on_update: FkAction,
    /// `DEFERRABLE`: its NO ACTION checks may wait for the transaction's end (`exec::fk`
    /// invariant 3); `initially_deferred`: they do unless `SET CONSTRAINTS ... IMMEDIATE`.
    #[serde(default)]
    pub deferrable: bool,
    #[serde(default)]
    pub initially_deferred: bool,
}

/// What a change to a referenced key does to the rows referencing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FkAction {
    /// The statement fails if, at its end, a row still references a key no row has.
    NoAction,
    /// The statement fails if a row references the changed key.
    Restrict,
    Cascade,
    SetNull,
    SetDefault,
}

impl FkAction {
    /// `pg_constraint.confupdtype` / `confdeltype`.
    pub fn code(self) -> char {
        match self {
            FkAction::NoAction => 'a',
            FkAction::Restrict => 'r',
            FkAction::Cascade => 'c',
            FkAction::SetNull => 'n',
            FkAction::SetDefault => 'd',
        }
    }

    /// As `pg_get_constraintdef` writes it after ON DELETE / ON UPDATE.
    pub fn sql(self) -> &'static str {
        match self {
            FkAction::NoAction => "NO ACTION",
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
            FkAction::SetDefault => "SET DEFAULT",
        }
    }
}

/// A B-tree index on columns of a table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Index {
    pub oid: Oid,
    pub name: String,
    /// Key columns (indexes into the table's columns), in key order; [`EXPR_KEY`] for a key
    /// that is an expression (PostgreSQL's `indkey` 0), the next of `exprs`.
    pub columns: Vec<usize>,
    pub unique: bool,
    /// The table's PRIMARY KEY (implies unique; its columns are NOT NULL).
    pub primary: bool,
    /// Made by a PRIMARY KEY or UNIQUE constraint (not CREATE INDEX): the catalog views
    /// report the constraint (`pg_constraint.contype` 'p' / 'u').
    #[serde(default)]
    pub constraint: bool,
    pub relfile: RelFileNumber,
    /// PostgreSQL's indcheckxmin: the index was built over HOT chains whose versions differ in
    /// its columns and names each chain by its newest version's key only, so a snapshot whose
    /// xmin is not past this xid (the building transaction's) may see an older version it
    /// cannot find through the index, and must not use it for scans (`sql::index` invariant 5).
    #[serde(default)]
    pub check_xmin: Option<u64>,
    /// Each key column's order, PostgreSQL's `pg_index.indoption` bits: [`INDOPTION_DESC`],
    /// [`INDOPTION_NULLS_FIRST`]. Missing entries (and an index made before DESC columns
    /// existed) are 0: ASC NULLS LAST.
    #[serde(default)]
    pub options: Vec<u8>,
    /// A partial index's predicate (`CREATE INDEX ... WHERE`), as SQL text over the table's
    /// columns: only row versions for which it is true have an entry (`sql::index`
    /// invariant 6). None: every version has one.
    #[serde(default)]
    pub predicate: Option<String>,
    /// Each key column's B-tree operator class when it is not its type's default (its OID,
    /// `pg_index.indclass`); 0 or missing: the default. heapstore compares text bytewise (the
    /// C collation), under which the pattern classes order and compare as the defaults do.
    #[serde(default)]
    pub opclasses: Vec<u32>,
    /// The key expressions (`CREATE INDEX ... ((a + b))`, `(lower(email))`), as SQL text over
    /// the table's columns, one for each [`EXPR_KEY`] in `columns`, in order (PostgreSQL's
    /// `indexprs`). Each is immutable: its value depends on the row alone (`sql::index`
    /// invariant 7).
    #[serde(default)]
    pub exprs: Vec<String>,
    /// Non-key columns (`INCLUDE (...)`), after the keys in the catalog (PostgreSQL's
    /// `indnatts` counts them, `indnkeyatts` does not). They take no part in the key's order
    /// or uniqueness; heapstore does not store them in the entries, so an index-only scan
    /// never reads them (every answer is the same; only that plan is not open to them).
    #[serde(default)]
    pub include: Vec<usize>,
    /// `COMMENT ON INDEX` (`obj_description`, `pg_description`).
    #[serde(default)]
    pub comment: Option<String>,
}

/// The `columns` entry of an index key that is an expression (PostgreSQL's `indkey` 0).
pub const EXPR_KEY: usize = usize::MAX;

/// `indoption` bit: the column is in descending order.
pub const INDOPTION_DESC: u8 = 1;
/// `indoption` bit: NULLs sort before the values.
pub const INDOPTION_NULLS_FIRST: u8 = 2;

impl Index {
    /// Key column `k`'s `indoption` bits.
    pub fn option(&self, k: usize) -> u8 {
        self.options.get(k).copied().unwrap_or(0)
    }

    /// Key column `k`'s operator class when it is not the default (0: the default).
    pub fn opclass(&self, k: usize) -> u32 {
        self.opclasses.get(k).copied().unwrap_or(0)
    }

    /// Whether some key is an expression.
    pub fn has_exprs(&self) -> bool {
        !self.exprs.is_empty()
    }

    /// The plain key columns (expression keys left out).
    pub fn plain_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns.iter().copied().filter(|&c| c != EXPR_KEY)
    }

    /// For each key, None for a plain column, or the position in `exprs` of its expression.
    pub fn expr_positions(&self) -> Vec<Option<usize>> {
        let mut n = 0;
        self.columns
            .iter()
            .map(|&c| {
                (c == EXPR_KEY).then(|| {
                    n += 1;
                    n - 1
                })
            })
            .collect()
    }

    /// Whether a scan with this snapshot may use the index (see `check_xmin`).
    pub fn usable_by(&self, snapshot_xmin: u64) -> bool {
        self.check_xmin.is_none_or(|x| snapshot_xmin > x)
    }
}

impl Table {
    pub fn column_names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// `pg_class.relkind`.
    pub fn relkind(&self) -> char {
        match self.kind {
            RelKind::Table => 'r',
            RelKind::Sequence(_) => 'S',
            RelKind::View(_) => 'v',
        }
    }

    pub fn is_table(&self) -> bool {
        matches!(self.kind, RelKind::Table)
    }

    /// The [`relation_key`] naming this relation in its schema.
    pub fn key(&self) -> String {
        if self.is_temp() {
            format!("\0pg_temp\0{}", self.name)
        } else {
            format!("\0public\0{}", self.name)
        }
    }

    /// A session's temporary relation.
    pub fn is_temp(&self) -> bool {
        self.persistence == Persistence::Temporary
    }

    /// Every file of the relation: heap, TOAST, indexes (none for a view).
    pub fn files(&self) -> Vec<RelFileNumber> {
        if matches!(self.kind, RelKind::View(_)) {
            return Vec::new();
        }
        std::iter::once(self.relfile).chain(self.toast_relfile).chain(self.indexes.iter().map(|i| i.relfile)).collect()
    }

    pub fn sequence(&self) -> Option<&SequenceDef> {
        match &self.kind {
            RelKind::Sequence(d) => Some(d),
            _ => None,
        }
    }

    /// The kind of relation in PostgreSQL's words ("table", "sequence", "view").
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            RelKind::Table => "table",
            RelKind::Sequence(_) => "sequence",
            RelKind::View(_) => "view",
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct CatalogFile {
    next_oid: Oid,
    next_relfile: u32,
    tables: Vec<Table>,
}

/// The shared catalog.
pub struct Catalog {
    path: PathBuf,
    vfs: Arc<dyn crate::storage::Vfs>,
    state: RwLock<CatalogState>,
    /// Some committed table has a foreign key (row statements skip looking for them if not).
    foreign_keys: std::sync::atomic::AtomicBool,
}

struct CatalogState {
    next_oid: Oid,
    next_relfile: u32,
    by_name: BTreeMap<String, Arc<Table>>,
}

impl Catalog {
    pub fn open(vfs: Arc<dyn crate::storage::Vfs>, datadir: &Path) -> Result<Catalog> {
        let dir = datadir.join("global");
        vfs.create_dir_all(&dir).map_err(|e| PgError::io("create directory", &dir, e))?;
        let path = dir.join("catalog.json");
        let file: CatalogFile = match crate::storage::fsutil::read_if_exists(&*vfs, &path)? {
            Some(b) => serde_json::from_slice(&b)
                .map_err(|e| PgError::new(sqlstate::DATA_CORRUPTED, format!("catalog file \"{}\" is corrupt: {e}", path.display())))?,
            None => CatalogFile { next_oid: FIRST_NORMAL_OID, next_relfile: FIRST_NORMAL_OID, tables: Vec::new() },
        };
        let by_name: BTreeMap<String, Arc<Table>> = file.tables.into_iter().map(|t| (t.name.clone(), Arc::new(t))).collect();
        let foreign_keys = std::sync::atomic::AtomicBool::new(by_name.values().any(|t| !t.foreign_keys.is_empty()));
        Ok(Catalog {
            foreign_keys,
            path,
            vfs,
            state: RwLock::new(CatalogState {
                next_oid: file.next_oid.max(FIRST_NORMAL_OID),
                next_relfile: file.next_relfile.max(FIRST_NORMAL_OID),
                by_name,
            }),
        })
    }

    pub fn get(&self, name: &str) -> Option<Arc<Table>> {
        self.state.read().expect("poisoned").by_name.get(name).cloned()
    }

    /// Whether some committed table has a foreign key.
    pub fn any_foreign_keys(&self) -> bool {
        self.foreign_keys.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn tables(&self) -> Vec<Arc<Table>> {
        self.state.read().expect("poisoned").by_name.values().cloned().collect()
    }

    /// A fresh oid (never reused; saved with the next commit that writes the catalog).
    pub fn new_oid(&self) -> Oid {
        let mut s = self.state.write().expect("poisoned");
        let o = s.next_oid;
        s.next_oid += 1;
        o
    }

    /// A fresh relation file number.
    pub fn new_relfile(&self) -> RelFileNumber {
        let mut s = self.state.write().expect("poisoned");
        let r = s.next_relfile;
        s.next_relfile += 1;
        RelFileNumber(r)
    }

    /// Applies a committing transaction's changes and saves the catalog durably.
    /// `creates` are new tables, `drops` table names, `replaces` tables with new definitions
    /// (TRUNCATE's new files).
    pub fn apply(&self, creates: &[Arc<Table>], drops: &[String], replaces: &[Arc<Table>]) -> Result<()> {
        let mut s = self.state.write().expect("poisoned");
        for d in drops {
            s.by_name.remove(d);
        }
        for t in creates.iter().chain(replaces) {
            // Counters stay past every number in use (invariant 2): recovery applies changes
            // whose numbers were handed out by a run that crashed before saving its counters.
            for rel in std::iter::once(t.relfile).chain(t.toast_relfile).chain(t.indexes.iter().map(|i| i.relfile)) {
                s.next_relfile = s.next_relfile.max(rel.0 + 1);
            }
            for oid in std::iter::once(t.oid).chain(t.indexes.iter().map(|i| i.oid)) {
                s.next_oid = s.next_oid.max(oid + 1);
            }
            s.by_name.insert(t.name.clone(), t.clone());
        }
        let any = s.by_name.values().any(|t| !t.foreign_keys.is_empty());
        self.foreign_keys.store(any, std::sync::atomic::Ordering::Release);
        self.save_locked(&s)
    }

    fn save_locked(&self, s: &CatalogState) -> Result<()> {
        let file =
            CatalogFile { next_oid: s.next_oid, next_relfile: s.next_relfile, tables: s.by_name.values().map(|t| (**t).clone()).collect() };
        let b = serde_json::to_vec_pretty(&file).expect("serializable");
        crate::storage::fsutil::write_file_durably(&*self.vfs, &self.path, &b)
    }

    /// Saves the counters (so that oids handed out are not reused after a restart).
    pub fn save(&self) -> Result<()> {
        let s = self.state.read().expect("poisoned");
        self.save_locked(&s)
    }

    /// Every relation file any table references.
    pub fn referenced_relfiles(&self) -> Vec<RelFileNumber> {
        let s = self.state.read().expect("poisoned");
        s.by_name
            .values()
            .flat_map(|t| std::iter::once(t.relfile).chain(t.toast_relfile).chain(t.indexes.iter().map(|i| i.relfile)))
            .collect()
    }
}

/// The last part of a possibly qualified name (`public.t` → `t`, `pg_temp.t` → `t`); other
/// schemas are refused. Where the schema decides which relation is meant, use
/// [`relation_key`].
pub fn table_name(n: &sqlparser::ast::ObjectName) -> Result<String> {
    Ok(qualified_name(n)?.1)
}

/// A possibly qualified relation name: its schema if written (`public` or the session's
/// temporary schema, `pg_temp`), and the name.
pub fn qualified_name(n: &sqlparser::ast::ObjectName) -> Result<(Option<Schema>, String)> {
    let parts: Vec<String> = n.0.iter().filter_map(|p| p.as_ident().map(fold_ident)).collect();
    match parts.as_slice() {
        [t] => Ok((None, t.clone())),
        [schema, t] if schema == "public" => Ok((Some(Schema::Public), t.clone())),
        [schema, t] if schema == "pg_temp" => Ok((Some(Schema::Temp), t.clone())),
        [schema, _] => Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("schema \"{schema}\" does not exist"))),
        _ => Err(PgError::syntax(format!("improper relation name (too many dotted names): {n}"))),
    }
}

/// What `Session::lookup_table` takes for a relation a statement names: the bare name when
/// unqualified (the session's temporary relations first, then `public`, as PostgreSQL's
/// default search path), else the schema and name joined by NUL bytes, which no identifier
/// holds ([`split_key`]).
pub fn relation_key(n: &sqlparser::ast::ObjectName) -> Result<String> {
    Ok(match qualified_name(n)? {
        (None, t) => t,
        (Some(Schema::Temp), t) => format!("\0pg_temp\0{t}"),
        (Some(Schema::Public), t) => format!("\0public\0{t}"),
    })
}

/// A [`relation_key`] taken apart: the schema if one was written, and the name.
pub fn split_key(key: &str) -> (Option<Schema>, &str) {
    if let Some(t) = key.strip_prefix("\0pg_temp\0") {
        (Some(Schema::Temp), t)
    } else if let Some(t) = key.strip_prefix("\0public\0") {
        (Some(Schema::Public), t)
    } else {
        (None, key)
    }
}

/// A [`relation_key`] as PostgreSQL writes the name in messages (`pg_temp.t`, `public.t`).
pub fn key_display(key: &str) -> String {
    match split_key(key) {
        (Some(Schema::Temp), t) => format!("pg_temp.{t}"),
        (Some(Schema::Public), t) => format!("public.{t}"),
        (None, t) => t.to_string(),
    }
}

/// An identifier as PostgreSQL folds it: a quoted one as written, an unquoted one with its
/// ASCII letters lower-cased (`downcase_identifier` under UTF-8: `ΣΑΣ` stays `ΣΑΣ`).
pub fn fold_ident(ident: &sqlparser::ast::Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_ascii_lowercase()
    }
}

//! The system catalogs as relations: `pg_catalog.pg_class`, `pg_namespace`, `pg_attribute`,
//! `pg_type`, `pg_index`, `pg_constraint`, `pg_opclass`, `pg_database`, `pg_roles`,
//! `pg_authid`, `pg_settings`, `pg_am`, `pg_collation`, `pg_attrdef`, `pg_sequence`,
//! `pg_depend`, `pg_tablespace`, `pg_description`, `pg_inherits`, the relations of features
//! heapstore has none of (`pg_auth_members`, `pg_policy`, `pg_trigger`, `pg_extension`, ...:
//! empty), and `information_schema.tables` / `columns`, generated from heapstore's catalog
//! when a query names them and then planned like any other relation (joins, WHERE, GROUP BY,
//! ...).
//!
//! ```text
//!  FROM pg_class c JOIN pg_namespace n ON ...      the planner asks relation("pg_class")
//!        │                                         ──► rows built from the catalog as this
//!        ▼                                             transaction sees it (own DDL included)
//!  Values node (one per reference; never cached)  ──► ordinary plan above it
//! ```
//!
//! Invariants:
//! 1. Every row is true of heapstore: a table appears with the indexes, columns and
//!    constraints it has, and features heapstore does not have give the answer PostgreSQL
//!    gives for their absence (no rows in `pg_description`, `pg_inherits`, `pg_policy`, ...;
//!    `relhastriggers` true only for tables a foreign key involves; `reltype` 0, since heapstore makes no row types). OIDs of
//!    built-in objects are PostgreSQL's (types and their array types, operator classes,
//!    `pg_catalog` 11, `public` 2200, the catalogs' own relation OIDs, `heap` 2, `btree` 403,
//!    collations 100/950/951, tablespaces 1663/1664); user tables and indexes have the OIDs
//!    heapstore's catalog gave them; the role made at `init` is 10, other roles follow from
//!    16384 in the roles file's order. Every table is owned by role 10 (heapstore has no
//!    ownership or privileges).
//! 2. A column of a type heapstore does not have (`regproc`, `xid`) is not a column of the
//!    relation here: naming it is refused with 0A000, never answered with a stand-in. Array
//!    columns whose true value is always NULL here (`relacl`, `reloptions`) are NULL;
//!    `pg_node_tree` columns (partition bounds, index expressions, defaults) are NULL:
//!    heapstore has none of those.
//! 3. System columns (`ctid`, `xmin`, ...) are not listed in `pg_attribute`: heapstore's
//!    tables do not expose them. TOAST relations are not listed (`reltoastrelid` is 0).
//! 4. `pg_database` has one row: the database this session connected to (a heapstore data
//!    directory holds one database, which answers to any name a client connects with).

use crate::catalog::Table;
use crate::session::Session;
use crate::types::{SqlType, TypeId, Value};
use std::sync::Arc;

/// `pg_catalog`'s namespace OID.
pub const PG_CATALOG: u32 = 11;

/// The namespace of relation `t`: `public`, or the session's temporary schema.
fn ns_oid(s: &Session, t: &Table) -> u32 {
    if t.is_temp() {
        s.temp_namespace()
    } else {
        PUBLIC
    }
}

/// The name of the session's temporary schema (`pg_temp_N`, N the session's number, as
/// PostgreSQL numbers it by backend).
pub(crate) fn temp_schema_name(s: &Session) -> String {
    format!("pg_temp_{}", s.id())
}

/// The schema name of relation `t`.
pub(crate) fn ns_name(s: &Session, t: &Table) -> String {
    if t.is_temp() {
        temp_schema_name(s)
    } else {
        "public".to_string()
    }
}
/// `public`'s namespace OID.
pub const PUBLIC: u32 = 2200;
const PG_TOAST: u32 = 99;
const INFORMATION_SCHEMA: u32 = 13_000;
/// The bootstrap superuser's OID.
pub const BOOTSTRAP_ROLE: u32 = 10;
const HEAP_AM: u32 = 2;
const BTREE_AM: u32 = 403;
const DEFAULT_COLLATION: u32 = 100;
pub(crate) const DATABASE_OID: u32 = 5;

/// A column type of a catalog relation.
#[derive(Clone, Copy)]
enum Ty {
    T(TypeId),
    /// A type heapstore does not have: its PostgreSQL name (invariant 2).
    No(&'static str),
    /// An array column whose true value is always NULL here (default privileges, no
    /// options): the array type's OID (invariant 2).
    Null(u32),
}
use Ty::{No, Null, T};

const ACL: Ty = Null(1034);
const TEXTS: Ty = Null(1009);
const INT2VECTOR: Ty = T(TypeId::Int2Vector);
const OIDVECTOR: Ty = T(TypeId::OidVector);
const INT2S: Ty = T(TypeId::Array(crate::types::ArrayElem::Int2));

/// The type of an always-NULL array column: the array type when heapstore has it.
fn null_array_type(oid: u32) -> SqlType {
    match crate::types::ArrayElem::by_array_oid(oid) {
        Some(e) => SqlType::new(TypeId::Array(e)),
        None => SqlType::with_typmod(TypeId::NullArray, oid as i32),
    }
}

const OID: Ty = T(TypeId::Oid);
const NAME: Ty = T(TypeId::Name);
const CHAR: Ty = T(TypeId::Char);
const BOOL: Ty = T(TypeId::Bool);
const INT2: Ty = T(TypeId::Int2);
const INT8: Ty = T(TypeId::Int8);
const INT4: Ty = T(TypeId::Int4);
const TEXT: Ty = T(TypeId::Text);

/// One catalog relation: its OID, schema, name and columns in PostgreSQL 15's order.
struct Def {
    oid: u32,
    schema: u32,
    name: &'static str,
    /// 'r' table, 'v' view.
    kind: char,
    cols: &'static [(&'static str, Ty)],
}

const DEFS: &[Def] = &[
    Def {
        oid: 1259,
        schema: PG_CATALOG,
        name: "pg_class",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("relname", NAME),
            ("relnamespace", OID),
            ("reltype", OID),
            ("reloftype", OID),
            ("relowner", OID),
            ("relam", OID),
            ("relfilenode", OID),
            ("reltablespace", OID),
            ("relpages", INT4),
            ("reltuples", T(TypeId::Float4)),
            ("relallvisible", INT4),
            ("reltoastrelid", OID),
            ("relhasindex", BOOL),
            ("relisshared", BOOL),
            ("relpersistence", CHAR),
            ("relkind", CHAR),
            ("relnatts", INT2),
            ("relchecks", INT2),
            ("relhasrules", BOOL),
            ("relhastriggers", BOOL),
            ("relhassubclass", BOOL),
            ("relrowsecurity", BOOL),
            ("relforcerowsecurity", BOOL),
            ("relispopulated", BOOL),
            ("relreplident", CHAR),
            ("relispartition", BOOL),
            ("relrewrite", OID),
            ("relfrozenxid", No("xid")),
            ("relminmxid", No("xid")),
            ("relacl", ACL),
            ("reloptions", TEXTS),
            ("relpartbound", T(TypeId::PgNodeTree)),
        ],
    },
    Def {
        oid: 2615,
        schema: PG_CATALOG,
        name: "pg_namespace",
        kind: 'r',
        cols: &[("oid", OID), ("nspname", NAME), ("nspowner", OID), ("nspacl", ACL)],
    },
    Def {
        oid: 1249,
        schema: PG_CATALOG,
        name: "pg_attribute",
        kind: 'r',
        cols: &[
            ("attrelid", OID),
            ("attname", NAME),
            ("atttypid", OID),
            ("attstattarget", INT4),
            ("attlen", INT2),
            ("attnum", INT2),
            ("attndims", INT4),
            ("attcacheoff", INT4),
            ("atttypmod", INT4),
            ("attbyval", BOOL),
            ("attalign", CHAR),
            ("attstorage", CHAR),
            ("attcompression", CHAR),
            ("attnotnull", BOOL),
            ("atthasdef", BOOL),
            ("atthasmissing", BOOL),
            ("attidentity", CHAR),
            ("attgenerated", CHAR),
            ("attisdropped", BOOL),
            ("attislocal", BOOL),
            ("attinhcount", INT4),
            ("attcollation", OID),
            ("attacl", ACL),
            ("attoptions", TEXTS),
            ("attfdwoptions", TEXTS),
            ("attmissingval", Null(2277)),
        ],
    },
    Def {
        oid: 1247,
        schema: PG_CATALOG,
        name: "pg_type",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("typname", NAME),
            ("typnamespace", OID),
            ("typowner", OID),
            ("typlen", INT2),
            ("typbyval", BOOL),
            ("typtype", CHAR),
            ("typcategory", CHAR),
            ("typispreferred", BOOL),
            ("typisdefined", BOOL),
            ("typdelim", CHAR),
            ("typrelid", OID),
            ("typsubscript", No("regproc")),
            ("typelem", OID),
            ("typarray", OID),
            ("typinput", No("regproc")),
            ("typoutput", No("regproc")),
            ("typreceive", No("regproc")),
            ("typsend", No("regproc")),
            ("typmodin", No("regproc")),
            ("typmodout", No("regproc")),
            ("typanalyze", No("regproc")),
            ("typalign", CHAR),
            ("typstorage", CHAR),
            ("typnotnull", BOOL),
            ("typbasetype", OID),
            ("typtypmod", INT4),
            ("typndims", INT4),
            ("typcollation", OID),
            ("typdefaultbin", T(TypeId::PgNodeTree)),
            ("typdefault", TEXT),
            ("typacl", ACL),
        ],
    },
    Def {
        oid: 2610,
        schema: PG_CATALOG,
        name: "pg_index",
        kind: 'r',
        cols: &[
            ("indexrelid", OID),
            ("indrelid", OID),
            ("indnatts", INT2),
            ("indnkeyatts", INT2),
            ("indisunique", BOOL),
            ("indnullsnotdistinct", BOOL),
            ("indisprimary", BOOL),
            ("indisexclusion", BOOL),
            ("indimmediate", BOOL),
            ("indisclustered", BOOL),
            ("indisvalid", BOOL),
            ("indcheckxmin", BOOL),
            ("indisready", BOOL),
            ("indislive", BOOL),
            ("indisreplident", BOOL),
            ("indkey", INT2VECTOR),
            ("indcollation", OIDVECTOR),
            ("indclass", OIDVECTOR),
            ("indoption", INT2VECTOR),
            ("indexprs", T(TypeId::PgNodeTree)),
            ("indpred", T(TypeId::PgNodeTree)),
        ],
    },
    Def {
        oid: 2606,
        schema: PG_CATALOG,
        name: "pg_constraint",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("conname", NAME),
            ("connamespace", OID),
            ("contype", CHAR),
            ("condeferrable", BOOL),
            ("condeferred", BOOL),
            ("convalidated", BOOL),
            ("conrelid", OID),
            ("contypid", OID),
            ("conindid", OID),
            ("conparentid", OID),
            ("confrelid", OID),
            ("confupdtype", CHAR),
            ("confdeltype", CHAR),
            ("confmatchtype", CHAR),
            ("conislocal", BOOL),
            ("coninhcount", INT4),
            ("connoinherit", BOOL),
            ("conkey", INT2S),
            ("confkey", INT2S),
            ("conpfeqop", Null(1028)),
            ("conppeqop", Null(1028)),
            ("conffeqop", Null(1028)),
            ("confdelsetcols", Null(1005)),
            ("conexclop", Null(1028)),
            ("conbin", T(TypeId::PgNodeTree)),
        ],
    },
    Def {
        oid: 1262,
        schema: PG_CATALOG,
        name: "pg_database",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("datname", NAME),
            ("datdba", OID),
            ("encoding", INT4),
            ("datlocprovider", CHAR),
            ("datistemplate", BOOL),
            ("datallowconn", BOOL),
            ("datconnlimit", INT4),
            ("datfrozenxid", No("xid")),
            ("datminmxid", No("xid")),
            ("dattablespace", OID),
            ("datcollate", TEXT),
            ("datctype", TEXT),
            ("daticulocale", TEXT),
            ("datcollversion", TEXT),
            ("datacl", ACL),
        ],
    },
    Def {
        oid: 1260,
        schema: PG_CATALOG,
        name: "pg_authid",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("rolname", NAME),
            ("rolsuper", BOOL),
            ("rolinherit", BOOL),
            ("rolcreaterole", BOOL),
            ("rolcreatedb", BOOL),
            ("rolcanlogin", BOOL),
            ("rolreplication", BOOL),
            ("rolbypassrls", BOOL),
            ("rolconnlimit", INT4),
            ("rolpassword", TEXT),
            ("rolvaliduntil", T(TypeId::Timestamptz)),
        ],
    },
    Def {
        oid: 12_001,
        schema: PG_CATALOG,
        name: "pg_roles",
        kind: 'v',
        cols: &[
            ("rolname", NAME),
            ("rolsuper", BOOL),
            ("rolinherit", BOOL),
            ("rolcreaterole", BOOL),
            ("rolcreatedb", BOOL),
            ("rolcanlogin", BOOL),
            ("rolreplication", BOOL),
            ("rolconnlimit", INT4),
            ("rolpassword", TEXT),
            ("rolvaliduntil", T(TypeId::Timestamptz)),
            ("rolbypassrls", BOOL),
            ("rolconfig", TEXTS),
            ("oid", OID),
        ],
    },
    Def {
        oid: 12_003,
        schema: PG_CATALOG,
        name: "pg_stat_user_tables",
        kind: 'v',
        cols: &[
            ("relid", OID),
            ("schemaname", NAME),
            ("relname", NAME),
            ("seq_scan", No("bigint: scans are not counted yet")),
            ("seq_tup_read", No("bigint: scans are not counted yet")),
            ("idx_scan", No("bigint: scans are not counted yet")),
            ("idx_tup_fetch", No("bigint: scans are not counted yet")),
            ("n_tup_ins", T(TypeId::Int8)),
            ("n_tup_upd", T(TypeId::Int8)),
            ("n_tup_del", T(TypeId::Int8)),
            ("n_tup_hot_upd", T(TypeId::Int8)),
            ("n_live_tup", T(TypeId::Int8)),
            ("n_dead_tup", T(TypeId::Int8)),
            ("n_mod_since_analyze", T(TypeId::Int8)),
            ("n_ins_since_vacuum", T(TypeId::Int8)),
            ("last_vacuum", T(TypeId::Timestamptz)),
            ("last_autovacuum", T(TypeId::Timestamptz)),
            ("last_analyze", T(TypeId::Timestamptz)),
            ("last_autoanalyze", T(TypeId::Timestamptz)),
            ("vacuum_count", T(TypeId::Int8)),
            ("autovacuum_count", T(TypeId::Int8)),
            ("analyze_count", T(TypeId::Int8)),
            ("autoanalyze_count", T(TypeId::Int8)),
        ],
    },
    Def {
        oid: 12_005,
        schema: PG_CATALOG,
        name: "pg_tables",
        kind: 'v',
        cols: &[
            ("schemaname", NAME),
            ("tablename", NAME),
            ("tableowner", NAME),
            ("tablespace", NAME),
            ("hasindexes", BOOL),
            ("hasrules", BOOL),
            ("hastriggers", BOOL),
            ("rowsecurity", BOOL),
        ],
    },
    Def {
        oid: 12_006,
        schema: PG_CATALOG,
        name: "pg_indexes",
        kind: 'v',
        cols: &[("schemaname", NAME), ("tablename", NAME), ("indexname", NAME), ("tablespace", NAME), ("indexdef", TEXT)],
    },
    Def {
        oid: 12_007,
        schema: PG_CATALOG,
        name: "pg_views",
        kind: 'v',
        cols: &[("schemaname", NAME), ("viewname", NAME), ("viewowner", NAME), ("definition", TEXT)],
    },
    Def {
        oid: 12_004,
        schema: PG_CATALOG,
        name: "pg_stats",
        kind: 'v',
        cols: &[
            ("schemaname", NAME),
            ("tablename", NAME),
            ("attname", NAME),
            ("inherited", BOOL),
            ("null_frac", T(TypeId::Float4)),
            ("avg_width", INT4),
            ("n_distinct", T(TypeId::Float4)),
            ("most_common_vals", No("anyarray: heapstore has no anyarray type")),
            ("most_common_freqs", T(TypeId::Array(crate::types::ArrayElem::Float4))),
            ("histogram_bounds", No("anyarray: heapstore has no anyarray type")),
            ("correlation", T(TypeId::Float4)),
            ("most_common_elems", No("anyarray: heapstore has no anyarray type")),
            ("most_common_elem_freqs", No("real[]: heapstore keeps no element statistics")),
            ("elem_count_histogram", No("real[]: heapstore keeps no element statistics")),
        ],
    },
    Def {
        oid: 12_002,
        schema: PG_CATALOG,
        name: "pg_settings",
        kind: 'v',
        cols: &[
            ("name", TEXT),
            ("setting", TEXT),
            ("unit", TEXT),
            ("category", TEXT),
            ("short_desc", TEXT),
            ("extra_desc", TEXT),
            ("context", TEXT),
            ("vartype", TEXT),
            ("source", TEXT),
            ("min_val", TEXT),
            ("max_val", TEXT),
            ("enumvals", T(TypeId::Array(crate::types::ArrayElem::Text))),
            ("boot_val", TEXT),
            ("reset_val", TEXT),
            ("sourcefile", TEXT),
            ("sourceline", INT4),
            ("pending_restart", BOOL),
        ],
    },
    Def {
        oid: 2601,
        schema: PG_CATALOG,
        name: "pg_am",
        kind: 'r',
        cols: &[("oid", OID), ("amname", NAME), ("amhandler", No("regproc")), ("amtype", CHAR)],
    },
    Def {
        oid: 3456,
        schema: PG_CATALOG,
        name: "pg_collation",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("collname", NAME),
            ("collnamespace", OID),
            ("collowner", OID),
            ("collprovider", CHAR),
            ("collisdeterministic", BOOL),
            ("collencoding", INT4),
            ("collcollate", TEXT),
            ("collctype", TEXT),
            ("colliculocale", TEXT),
            ("collversion", TEXT),
        ],
    },
    Def {
        oid: 2604,
        schema: PG_CATALOG,
        name: "pg_attrdef",
        kind: 'r',
        cols: &[("oid", OID), ("adrelid", OID), ("adnum", INT2), ("adbin", T(TypeId::PgNodeTree))],
    },
    Def {
        oid: 1261,
        schema: PG_CATALOG,
        name: "pg_auth_members",
        kind: 'r',
        cols: &[("roleid", OID), ("member", OID), ("grantor", OID), ("admin_option", BOOL)],
    },
    Def {
        oid: 2607,
        schema: PG_CATALOG,
        name: "pg_conversion",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("conname", NAME),
            ("connamespace", OID),
            ("conowner", OID),
            ("conforencoding", INT4),
            ("contoencoding", INT4),
            ("conproc", No("regproc")),
            ("condefault", BOOL),
        ],
    },
    Def {
        oid: 3501,
        schema: PG_CATALOG,
        name: "pg_enum",
        kind: 'r',
        cols: &[("oid", OID), ("enumtypid", OID), ("enumsortorder", T(TypeId::Float4)), ("enumlabel", NAME)],
    },
    Def {
        oid: 3466,
        schema: PG_CATALOG,
        name: "pg_event_trigger",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("evtname", NAME),
            ("evtevent", NAME),
            ("evtowner", OID),
            ("evtfoid", OID),
            ("evtenabled", CHAR),
            ("evttags", TEXTS),
        ],
    },
    Def {
        oid: 3079,
        schema: PG_CATALOG,
        name: "pg_extension",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("extname", NAME),
            ("extowner", OID),
            ("extnamespace", OID),
            ("extrelocatable", BOOL),
            ("extversion", TEXT),
            ("extconfig", Null(1028)),
            ("extcondition", TEXTS),
        ],
    },
    Def {
        oid: 3118,
        schema: PG_CATALOG,
        name: "pg_foreign_table",
        kind: 'r',
        cols: &[("ftrelid", OID), ("ftserver", OID), ("ftoptions", TEXTS)],
    },
    Def {
        oid: 3350,
        schema: PG_CATALOG,
        name: "pg_partitioned_table",
        kind: 'r',
        cols: &[
            ("partrelid", OID),
            ("partstrat", CHAR),
            ("partnatts", INT2),
            ("partdefid", OID),
            ("partattrs", INT2VECTOR),
            ("partclass", OIDVECTOR),
            ("partcollation", OIDVECTOR),
            ("partexprs", T(TypeId::PgNodeTree)),
        ],
    },
    Def {
        oid: 3256,
        schema: PG_CATALOG,
        name: "pg_policy",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("polname", NAME),
            ("polrelid", OID),
            ("polcmd", CHAR),
            ("polpermissive", BOOL),
            ("polroles", Null(1028)),
            ("polqual", T(TypeId::PgNodeTree)),
            ("polwithcheck", T(TypeId::PgNodeTree)),
        ],
    },
    Def {
        oid: 6104,
        schema: PG_CATALOG,
        name: "pg_publication",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("pubname", NAME),
            ("pubowner", OID),
            ("puballtables", BOOL),
            ("pubinsert", BOOL),
            ("pubupdate", BOOL),
            ("pubdelete", BOOL),
            ("pubtruncate", BOOL),
            ("pubviaroot", BOOL),
        ],
    },
    Def {
        oid: 6237,
        schema: PG_CATALOG,
        name: "pg_publication_namespace",
        kind: 'r',
        cols: &[("oid", OID), ("pnpubid", OID), ("pnnspid", OID)],
    },
    Def {
        oid: 6106,
        schema: PG_CATALOG,
        name: "pg_publication_rel",
        kind: 'r',
        cols: &[("oid", OID), ("prpubid", OID), ("prrelid", OID), ("prqual", T(TypeId::PgNodeTree)), ("prattrs", INT2VECTOR)],
    },
    Def {
        oid: 3541,
        schema: PG_CATALOG,
        name: "pg_range",
        kind: 'r',
        cols: &[
            ("rngtypid", OID),
            ("rngsubtype", OID),
            ("rngmultitypid", OID),
            ("rngcollation", OID),
            ("rngsubopc", OID),
            ("rngcanonical", No("regproc")),
            ("rngsubdiff", No("regproc")),
        ],
    },
    Def {
        oid: 2618,
        schema: PG_CATALOG,
        name: "pg_rewrite",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("rulename", NAME),
            ("ev_class", OID),
            ("ev_type", CHAR),
            ("ev_enabled", CHAR),
            ("is_instead", BOOL),
            ("ev_qual", T(TypeId::PgNodeTree)),
            ("ev_action", T(TypeId::PgNodeTree)),
        ],
    },
    Def {
        oid: 3381,
        schema: PG_CATALOG,
        name: "pg_statistic_ext",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("stxrelid", OID),
            ("stxname", NAME),
            ("stxnamespace", OID),
            ("stxowner", OID),
            ("stxstattarget", INT4),
            ("stxkeys", INT2VECTOR),
            ("stxkind", Null(1002)),
            ("stxexprs", T(TypeId::PgNodeTree)),
        ],
    },
    Def {
        oid: 1213,
        schema: PG_CATALOG,
        name: "pg_tablespace",
        kind: 'r',
        cols: &[("oid", OID), ("spcname", NAME), ("spcowner", OID), ("spcacl", ACL), ("spcoptions", TEXTS)],
    },
    Def {
        oid: 2620,
        schema: PG_CATALOG,
        name: "pg_trigger",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("tgrelid", OID),
            ("tgparentid", OID),
            ("tgname", NAME),
            ("tgfoid", OID),
            ("tgtype", INT2),
            ("tgenabled", CHAR),
            ("tgisinternal", BOOL),
            ("tgconstrrelid", OID),
            ("tgconstrindid", OID),
            ("tgconstraint", OID),
            ("tgdeferrable", BOOL),
            ("tginitdeferred", BOOL),
            ("tgnargs", INT2),
            ("tgattr", INT2VECTOR),
            ("tgargs", T(TypeId::Bytea)),
            ("tgqual", T(TypeId::PgNodeTree)),
            ("tgoldtable", NAME),
            ("tgnewtable", NAME),
        ],
    },
    Def {
        oid: 2616,
        schema: PG_CATALOG,
        name: "pg_opclass",
        kind: 'r',
        cols: &[
            ("oid", OID),
            ("opcmethod", OID),
            ("opcname", NAME),
            ("opcnamespace", OID),
            ("opcowner", OID),
            ("opcfamily", OID),
            ("opcintype", OID),
            ("opcdefault", BOOL),
            ("opckeytype", OID),
        ],
    },
    Def {
        oid: 2224,
        schema: PG_CATALOG,
        name: "pg_sequence",
        kind: 'r',
        cols: &[
            ("seqrelid", OID),
            ("seqtypid", OID),
            ("seqstart", INT8),
            ("seqincrement", INT8),
            ("seqmax", INT8),
            ("seqmin", INT8),
            ("seqcache", INT8),
            ("seqcycle", BOOL),
        ],
    },
    Def {
        oid: 2609,
        schema: PG_CATALOG,
        name: "pg_description",
        kind: 'r',
        cols: &[("objoid", OID), ("classoid", OID), ("objsubid", INT4), ("description", TEXT)],
    },
    Def {
        oid: 2611,
        schema: PG_CATALOG,
        name: "pg_inherits",
        kind: 'r',
        cols: &[("inhrelid", OID), ("inhparent", OID), ("inhseqno", INT4), ("inhdetachpending", BOOL)],
    },
    Def {
        oid: 2608,
        schema: PG_CATALOG,
        name: "pg_depend",
        kind: 'r',
        cols: &[
            ("classid", OID),
            ("objid", OID),
            ("objsubid", INT4),
            ("refclassid", OID),
            ("refobjid", OID),
            ("refobjsubid", INT4),
            ("deptype", CHAR),
        ],
    },
    Def {
        oid: 13_001,
        schema: INFORMATION_SCHEMA,
        name: "tables",
        kind: 'v',
        cols: &[
            ("table_catalog", NAME),
            ("table_schema", NAME),
            ("table_name", NAME),
            ("table_type", T(TypeId::Varchar)),
            ("self_referencing_column_name", NAME),
            ("reference_generation", T(TypeId::Varchar)),
            ("user_defined_type_catalog", NAME),
            ("user_defined_type_schema", NAME),
            ("user_defined_type_name", NAME),
            ("is_insertable_into", T(TypeId::Varchar)),
            ("is_typed", T(TypeId::Varchar)),
            ("commit_action", T(TypeId::Varchar)),
        ],
    },
    Def {
        oid: 13_002,
        schema: INFORMATION_SCHEMA,
        name: "columns",
        kind: 'v',
        cols: &[
            ("table_catalog", NAME),
            ("table_schema", NAME),
            ("table_name", NAME),
            ("column_name", NAME),
            ("ordinal_position", INT4),
            ("column_default", T(TypeId::Varchar)),
            ("is_nullable", T(TypeId::Varchar)),
            ("data_type", T(TypeId::Varchar)),
            ("character_maximum_length", INT4),
            ("character_octet_length", INT4),
            ("numeric_precision", INT4),
            ("numeric_precision_radix", INT4),
            ("numeric_scale", INT4),
            ("datetime_precision", INT4),
            ("interval_type", T(TypeId::Varchar)),
            ("interval_precision", INT4),
            ("character_set_catalog", NAME),
            ("character_set_schema", NAME),
            ("character_set_name", NAME),
            ("collation_catalog", NAME),
            ("collation_schema", NAME),
            ("collation_name", NAME),
            ("domain_catalog", NAME),
            ("domain_schema", NAME),
            ("domain_name", NAME),
            ("udt_catalog", NAME),
            ("udt_schema", NAME),
            ("udt_name", NAME),
            ("scope_catalog", NAME),
            ("scope_schema", NAME),
            ("scope_name", NAME),
            ("maximum_cardinality", INT4),
            ("dtd_identifier", NAME),
            ("is_self_referencing", T(TypeId::Varchar)),
            ("is_identity", T(TypeId::Varchar)),
            ("identity_generation", T(TypeId::Varchar)),
            ("identity_start", T(TypeId::Varchar)),
            ("identity_increment", T(TypeId::Varchar)),
            ("identity_maximum", T(TypeId::Varchar)),
            ("identity_minimum", T(TypeId::Varchar)),
            ("identity_cycle", T(TypeId::Varchar)),
            ("is_generated", T(TypeId::Varchar)),
            ("generation_expression", T(TypeId::Varchar)),
            ("is_updatable", T(TypeId::Varchar)),
        ],
    },
];

/// The built-in types heapstore has, as `pg_type` describes them:
/// (type, typlen, typbyval, typcategory, typispreferred, typalign, typstorage, collatable).
/// (type, typlen, typbyval, typcategory, typispreferred, typalign, typstorage, collatable).
type TypeFacts = (TypeId, i16, bool, char, bool, char, char, bool);

const TYPES: &[TypeFacts] = &[
    (TypeId::Bool, 1, true, 'B', true, 'c', 'p', false),
    (TypeId::Bytea, -1, false, 'U', false, 'i', 'x', false),
    (TypeId::Char, 1, true, 'Z', false, 'c', 'p', false),
    (TypeId::Name, 64, false, 'S', false, 'c', 'p', true),
    (TypeId::Int8, 8, true, 'N', false, 'd', 'p', false),
    (TypeId::Int2, 2, true, 'N', false, 's', 'p', false),
    (TypeId::Int4, 4, true, 'N', false, 'i', 'p', false),
    (TypeId::Text, -1, false, 'S', true, 'i', 'x', true),
    (TypeId::Oid, 4, true, 'N', true, 'i', 'p', false),
    (TypeId::Float4, 4, true, 'N', false, 'i', 'p', false),
    (TypeId::Float8, 8, true, 'N', true, 'd', 'p', false),
    (TypeId::Bpchar, -1, false, 'S', false, 'i', 'x', true),
    (TypeId::Varchar, -1, false, 'S', false, 'i', 'x', true),
    (TypeId::Date, 4, true, 'D', false, 'i', 'p', false),
    (TypeId::Timestamp, 8, true, 'D', false, 'd', 'p', false),
    (TypeId::Timestamptz, 8, true, 'D', true, 'd', 'p', false),
    (TypeId::Numeric, -1, false, 'N', false, 'i', 'm', false),
    (TypeId::Regclass, 4, true, 'N', false, 'i', 'p', false),
    (TypeId::Regtype, 4, true, 'N', false, 'i', 'p', false),
    (TypeId::Regnamespace, 4, true, 'N', false, 'i', 'p', false),
    (TypeId::PgNodeTree, -1, false, 'Z', false, 'i', 'x', true),
    (TypeId::Json, -1, false, 'U', false, 'i', 'x', false),
    (TypeId::Uuid, 16, false, 'U', false, 'c', 'p', false),
    (TypeId::Jsonb, -1, false, 'U', false, 'i', 'x', false),
    (TypeId::Interval, 16, false, 'T', true, 'd', 'p', false),
    (TypeId::Time, 8, true, 'D', false, 'd', 'p', false),
    (TypeId::TimeTz, 12, false, 'D', false, 'd', 'p', false),
    (TypeId::Void, 4, true, 'P', false, 'i', 'p', false),
];

/// A type's `pg_type.typcategory` (`N` numeric, `S` string, `U` user-defined, `A` array, ...).
pub fn type_category(id: TypeId) -> char {
    type_facts(id).2
}

/// The `pg_type` facts of a type.
fn type_facts(id: TypeId) -> (i16, bool, char, bool, char, char, bool) {
    match id {
        TypeId::NullArray => return (-1, false, 'A', false, 'i', 'x', false),
        TypeId::Int2Vector | TypeId::OidVector => return (-1, false, 'A', false, 'i', 'p', false),
        // record: a pseudo-type.
        TypeId::Record(_) => return (-1, false, 'P', false, 'd', 'x', false),
        TypeId::Array(e) => {
            let (_, _, _, _, align, _, collatable) = type_facts(e.id());
            return (-1, false, 'A', false, array_align(align), 'x', collatable);
        }
        _ => {}
    }
    let t = TYPES.iter().find(|t| t.0 == id).expect("every type heapstore has is in TYPES");
    (t.1, t.2, t.3, t.4, t.5, t.6, t.7)
}

/// An array's alignment: its header holds int4s, so at least 'i' ('d' for elements aligned so).
fn array_align(elem: char) -> char {
    if elem == 'd' {
        'd'
    } else {
        'i'
    }
}

/// The catalog relation `schema.name` names, if it is one: schema `pg_catalog` or
/// `information_schema`, or no schema (pg_catalog is searched first, as in PostgreSQL).
fn find(schema: Option<&str>, name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| {
        d.name == name
            && match schema {
                None => d.schema == PG_CATALOG,
                Some("pg_catalog") => d.schema == PG_CATALOG,
                Some("information_schema") => d.schema == INFORMATION_SCHEMA,
                Some(_) => false,
            }
    })
}

/// The OIDs of the catalog relations.
pub fn catalog_oids() -> impl Iterator<Item = u32> {
    DEFS.iter().map(|d| d.oid)
}

/// The relkind of the catalog relation with OID `oid` ('r' or 'v'), if it is one.
pub fn catalog_kind(oid: u32) -> Option<char> {
    DEFS.iter().find(|d| d.oid == oid).map(|d| d.kind)
}

/// (OID, name) of the catalog relations in `pg_catalog`.
pub fn catalog_relations() -> Vec<(u32, String)> {
    DEFS.iter().filter(|d| d.schema == PG_CATALOG).map(|d| (d.oid, d.name.to_string())).collect()
}

/// Whether `schema.name` is a catalog relation heapstore provides.
pub fn is_catalog_relation(schema: Option<&str>, name: &str) -> bool {
    find(schema, name).is_some()
}

/// Whether a name refers to a PostgreSQL system schema heapstore answers for.
pub fn is_system_schema(schema: &str) -> bool {
    matches!(schema, "pg_catalog" | "information_schema")
}

/// The refusal for a catalog column of a type heapstore does not have (invariant 2), if
/// `rel_oid`'s relation has such a column called `name`.
pub fn unsupported_column(rel_oid: u32, name: &str) -> Option<crate::error::PgError> {
    let d = DEFS.iter().find(|d| d.oid == rel_oid)?;
    d.cols.iter().find_map(|(n, t)| match t {
        No(ty) if *n == name => {
            Some(crate::error::PgError::feature(format!("column {}.{} (of type {ty}) is not supported by heapstore", d.name, n)))
        }
        _ => None,
    })
}

/// A catalog relation's rows, generated now.
pub struct Relation {
    pub oid: u32,
    /// (column name, type), supported columns only.
    pub cols: Vec<(String, SqlType)>,
    pub rows: Vec<Vec<Value>>,
}

/// Who is asking: the session's role and the database it connected to.
pub struct Identity<'a> {
    pub user: &'a str,
    pub database: &'a str,
}

/// Builds the rows of catalog relation `schema.name` for this session, or None if it is
/// not one.
pub fn relation(s: &Session, schema: Option<&str>, name: &str) -> Option<Relation> {
    let d = find(schema, name)?;
    let tables = s.visible_tables();
    let who = s.identity();
    let mut rows = match d.name {
        "pg_class" => pg_class(s, &tables),
        "pg_namespace" => {
            let mut v = vec![
                vec![Value::Oid(PG_TOAST), name_v("pg_toast"), Value::Oid(BOOTSTRAP_ROLE)],
                vec![Value::Oid(PG_CATALOG), name_v("pg_catalog"), Value::Oid(BOOTSTRAP_ROLE)],
                vec![Value::Oid(PUBLIC), name_v("public"), Value::Oid(BOOTSTRAP_ROLE)],
                vec![Value::Oid(INFORMATION_SCHEMA), name_v("information_schema"), Value::Oid(BOOTSTRAP_ROLE)],
            ];
            // The session's temporary schema once it has made a temporary relation. Other
            // sessions' temporary schemas and relations are not listed (heapstore keeps them
            // in their sessions only).
            if let Some(o) = s.temp_namespace_if_any() {
                v.push(vec![Value::Oid(o), name_v(&temp_schema_name(s)), Value::Oid(BOOTSTRAP_ROLE)]);
            }
            v
        }
        "pg_attribute" => pg_attribute(&tables),
        "pg_type" => pg_type(),
        "pg_index" => pg_index(&tables),
        "pg_constraint" => pg_constraint(s, &tables),
        "pg_database" => vec![vec![
            Value::Oid(DATABASE_OID),
            name_v(who.database),
            Value::Oid(BOOTSTRAP_ROLE),
            Value::Int4(6), // UTF8
            Value::Text("c".into()),
            Value::Bool(false),
            Value::Bool(true),
            Value::Int4(-1),
            Value::Oid(1663), // pg_default
            Value::Text("C".into()),
            Value::Text("C".into()),
            Value::Null,
            Value::Null,
        ]],
        "pg_authid" | "pg_roles" => roles(s, d.name == "pg_roles"),
        "pg_settings" => settings(s),
        "pg_stat_user_tables" => stat_user_tables(s, &tables),
        "pg_tables" | "pg_indexes" | "pg_views" => relation_views(s, d.name, &tables),
        "pg_stats" => pg_stats(s, &tables),
        "pg_am" => vec![
            vec![Value::Oid(HEAP_AM), name_v("heap"), Value::Text("t".into())],
            vec![Value::Oid(BTREE_AM), name_v("btree"), Value::Text("i".into())],
        ],
        "pg_collation" => {
            let coll = |oid: u32, name: &str, provider: &str, enc: i32, c: Option<&str>| {
                let t = |x: Option<&str>| x.map_or(Value::Null, |v| Value::Text(v.into()));
                vec![
                    Value::Oid(oid),
                    name_v(name),
                    Value::Oid(PG_CATALOG),
                    Value::Oid(BOOTSTRAP_ROLE),
                    Value::Text(provider.into()),
                    Value::Bool(true),
                    Value::Int4(enc),
                    t(c),
                    t(c),
                    Value::Null,
                    Value::Null,
                ]
            };
            vec![
                coll(DEFAULT_COLLATION, "default", "d", -1, None),
                coll(950, "C", "c", -1, Some("C")),
                coll(951, "POSIX", "c", -1, Some("POSIX")),
            ]
        }
        "pg_attrdef" => pg_attrdef(&tables),
        "pg_sequence" => pg_sequence(&tables),
        "pg_opclass" => pg_opclass(),
        "pg_depend" => pg_depend(&tables),
        // The comments on relations, indexes and columns (`sql::comment`), all in pg_class.
        "pg_description" => super::comment::descriptions(s)
            .into_iter()
            .map(|(oid, sub, text)| vec![Value::Oid(oid), Value::Oid(1259), Value::Int4(sub), Value::Text(text)])
            .collect(),
        // What heapstore has none of: no rows is the true answer.
        "pg_inherits"
        | "pg_auth_members"
        | "pg_conversion"
        | "pg_enum"
        | "pg_event_trigger"
        | "pg_extension"
        | "pg_foreign_table"
        | "pg_partitioned_table"
        | "pg_policy"
        | "pg_publication"
        | "pg_publication_namespace"
        | "pg_publication_rel"
        | "pg_range"
        | "pg_rewrite"
        | "pg_statistic_ext"
        | "pg_trigger" => Vec::new(),
        // The default tablespace (every relation's) and the shared one, as in PostgreSQL.
        "pg_tablespace" => vec![
            vec![Value::Oid(1663), name_v("pg_default"), Value::Oid(BOOTSTRAP_ROLE)],
            vec![Value::Oid(1664), name_v("pg_global"), Value::Oid(BOOTSTRAP_ROLE)],
        ],
        "tables" => info_tables(s, &tables, who.database),
        "columns" => info_columns(s, &tables, who.database),
        other => unreachable!("catalog relation {other} without rows"),
    };
    // Rows are built with the typed columns; the always-NULL arrays go in here and the
    // unsupported columns stay out (invariant 2).
    let width = d.cols.iter().filter(|(_, t)| matches!(t, T(_))).count();
    for r in &mut rows {
        assert_eq!(r.len(), width, "{}: a row of {} values for {width} columns", d.name, r.len());
        let mut vals = std::mem::take(r).into_iter();
        *r = d
            .cols
            .iter()
            .filter_map(|(_, t)| match t {
                T(_) => vals.next(),
                Null(_) => Some(Value::Null),
                No(_) => None,
            })
            .collect();
    }
    let cols = d
        .cols
        .iter()
        .filter_map(|(n, t)| match t {
            T(id) => Some((n.to_string(), SqlType::new(*id))),
            Null(oid) => Some((n.to_string(), null_array_type(*oid))),
            No(_) => None,
        })
        .collect();
    Some(Relation { oid: d.oid, cols, rows })
}

fn name_v(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn ch(c: char) -> Value {
    if c == '\0' {
        Value::Text(String::new())
    } else {
        Value::Text(c.to_string())
    }
}

/// Every relation as `pg_class` lists it: the catalogs themselves, then user tables and
/// their indexes.
fn pg_class(s: &Session, tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    #[allow(clippy::too_many_arguments)]
    let row = |oid: u32,
               name: &str,
               ns: u32,
               am: u32,
               filenode: u32,
               persistence: char,
               kind: char,
               natts: usize,
               hasindex: bool,
               checks: usize,
               triggers: bool| {
        vec![
            Value::Oid(oid),
            name_v(name),
            Value::Oid(ns),
            Value::Oid(0),
            Value::Oid(0),
            Value::Oid(BOOTSTRAP_ROLE),
            Value::Oid(am),
            Value::Oid(filenode),
            Value::Oid(0),
            Value::Int4(0),
            Value::Float4(-1.0),
            Value::Int4(0),
            Value::Oid(0),
            Value::Bool(hasindex),
            Value::Bool(false),
            ch(persistence),
            ch(kind),
            Value::Int2(natts as i16),
            Value::Int2(checks as i16),
            Value::Bool(false),
            // PostgreSQL implements foreign keys with (internal) triggers: psql shows them
            // only for a relation that has some.
            Value::Bool(triggers),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(true),
            // User tables: DEFAULT; the system catalogs and everything else: NOTHING.
            ch(if kind == 'r' && !matches!(ns, PG_CATALOG | INFORMATION_SCHEMA | PG_TOAST) { 'd' } else { 'n' }),
            Value::Bool(false),
            Value::Oid(0),
            Value::Null,
        ]
    };
    let mut out = Vec::new();
    for d in DEFS {
        let natts = d.cols.iter().filter(|(_, t)| !matches!(t, No(_))).count();
        let (am, node) = if d.kind == 'r' { (HEAP_AM, d.oid) } else { (0, 0) };
        out.push(row(d.oid, d.name, d.schema, am, node, 'p', d.kind, natts, false, 0, false));
    }
    let referenced: std::collections::HashSet<u32> = tables.iter().flat_map(|t| t.foreign_keys.iter().map(|f| f.ref_table)).collect();
    for t in tables {
        let p = match t.persistence {
            crate::catalog::Persistence::Permanent => 'p',
            crate::catalog::Persistence::Unlogged => 'u',
            crate::catalog::Persistence::Temporary => 't',
        };
        let ns = ns_oid(s, t);
        let kind = t.relkind();
        let am = if kind == 'r' { HEAP_AM } else { 0 };
        let triggers = !t.foreign_keys.is_empty() || referenced.contains(&t.oid);
        out.push(row(t.oid, &t.name, ns, am, t.relfile.0, p, kind, t.columns.len(), !t.indexes.is_empty(), t.checks.len(), triggers));
        // relpages, reltuples and relallvisible as the last ANALYZE found them (-1: never
        // analyzed).
        if let Some(st) = s.shared().planner_stats.get(t.oid) {
            let r = out.last_mut().expect("just pushed");
            r[9] = Value::Int4(st.relpages.min(i32::MAX as u64) as i32);
            r[10] = Value::Float4(st.reltuples as f32);
            r[11] = Value::Int4(st.relallvisible.min(i32::MAX as u64) as i32);
        }
        for ix in &t.indexes {
            out.push(row(ix.oid, &ix.name, ns, BTREE_AM, ix.relfile.0, p, 'i', ix.columns.len() + ix.include.len(), false, 0, false));
        }
    }
    out
}

/// `atttypmod`: PostgreSQL's encoding of a type modifier (varchar/char: length + 4).
pub fn pg_typmod(ty: SqlType) -> i32 {
    match ty.id {
        TypeId::Varchar | TypeId::Bpchar if ty.typmod >= 0 => ty.typmod + 4,
        _ => ty.typmod,
    }
}

/// One `pg_attribute` row.
fn attribute(rel: u32, num: i16, name: &str, ty: SqlType, not_null: bool) -> Vec<Value> {
    attribute_of(rel, num, name, ty, not_null, false, '\0')
}

/// One `pg_attribute` row, with `atthasdef` and `attidentity`.
fn attribute_of(rel: u32, num: i16, name: &str, ty: SqlType, not_null: bool, has_default: bool, identity: char) -> Vec<Value> {
    let (len, byval, _, _, align, storage, collatable) = type_facts(ty.id);
    vec![
        Value::Oid(rel),
        name_v(name),
        Value::Oid(ty.pg_oid()),
        Value::Int4(-1),
        Value::Int2(len),
        Value::Int2(num),
        Value::Int4(0),
        Value::Int4(-1),
        Value::Int4(pg_typmod(ty)),
        Value::Bool(byval),
        ch(align),
        ch(storage),
        ch('\0'),
        Value::Bool(not_null),
        Value::Bool(has_default),
        Value::Bool(false),
        ch(identity),
        ch('\0'),
        Value::Bool(false),
        Value::Bool(true),
        Value::Int4(0),
        Value::Oid(collation_of(ty.id, collatable)),
    ]
}

/// A type's collation: name uses "C" (950), other collatable types the default (100).
fn collation_of(id: TypeId, collatable: bool) -> u32 {
    match (id, collatable) {
        (TypeId::Name, _) => 950,
        (_, true) => DEFAULT_COLLATION,
        _ => 0,
    }
}

fn pg_attribute(tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for d in DEFS {
        let mut num = 0;
        for (n, t) in d.cols {
            let ty = match t {
                T(id) => SqlType::new(*id),
                Null(oid) => null_array_type(*oid),
                No(_) => continue,
            };
            num += 1;
            out.push(attribute(d.oid, num, n, ty, d.kind == 'r' && matches!(t, T(_))));
        }
    }
    for t in tables {
        for (i, c) in t.columns.iter().enumerate() {
            let identity = match c.identity {
                Some(crate::catalog::Identity::Always) => 'a',
                Some(crate::catalog::Identity::ByDefault) => 'd',
                None => '\0',
            };
            out.push(attribute_of(t.oid, i as i16 + 1, &c.name, c.ty, c.not_null, c.default.is_some(), identity));
        }
        for ix in &t.indexes {
            let Ok(attrs) = crate::sql::index::index_attributes(t, ix) else { continue };
            for (k, (name, ty)) in attrs.iter().enumerate() {
                let mut row = attribute(ix.oid, k as i16 + 1, name, *ty, false);
                // INCLUDE columns have no collation (PostgreSQL sets it for keys only).
                if k >= ix.columns.len() {
                    *row.last_mut().expect("attcollation") = Value::Oid(0);
                }
                out.push(row);
            }
        }
    }
    out
}

fn pg_type() -> Vec<Vec<Value>> {
    let arrays = crate::types::NULL_ARRAYS.iter().map(|&(oid, name)| {
        let typname = match name.strip_suffix("[]") {
            Some(elem) => format!("_{}", crate::sql::query::pg_type_name(elem)),
            None => name.to_string(),
        };
        vec![
            Value::Oid(oid),
            name_v(&typname),
            Value::Oid(PG_CATALOG),
            Value::Oid(BOOTSTRAP_ROLE),
            Value::Int2(-1),
            Value::Bool(false),
            ch(if name == "anyarray" { 'p' } else { 'b' }),
            ch(if name == "anyarray" { 'P' } else { 'A' }),
            Value::Bool(false),
            Value::Bool(true),
            ch(','),
            Value::Oid(0),
            Value::Oid(0),
            Value::Oid(0),
            ch(if name == "anyarray" { 'd' } else { 'i' }),
            ch('x'),
            Value::Bool(false),
            Value::Oid(0),
            Value::Int4(-1),
            Value::Int4(0),
            Value::Oid(0),
            Value::Null,
            Value::Null,
        ]
    });
    // (oid, typname, typlen, typbyval, category, preferred, elem, array, align, storage, collation)
    let row = |oid: u32,
               name: &str,
               len: i16,
               byval: bool,
               category: char,
               preferred: bool,
               elem: u32,
               array: u32,
               align: char,
               storage: char,
               coll: u32| {
        vec![
            Value::Oid(oid),
            name_v(name),
            Value::Oid(PG_CATALOG),
            Value::Oid(BOOTSTRAP_ROLE),
            Value::Int2(len),
            Value::Bool(byval),
            // typtype: a pseudo-type (void) is 'p'.
            ch(if category == 'P' { 'p' } else { 'b' }),
            ch(category),
            Value::Bool(preferred),
            Value::Bool(true),
            ch(','),
            Value::Oid(0),
            Value::Oid(elem),
            Value::Oid(array),
            ch(align),
            ch(storage),
            Value::Bool(false),
            Value::Oid(0),
            Value::Int4(-1),
            Value::Int4(0),
            Value::Oid(coll),
            Value::Null,
            Value::Null,
        ]
    };
    let mut rows: Vec<Vec<Value>> = Vec::new();
    for &(id, len, byval, category, preferred, align, storage, collatable) in TYPES {
        let ty = SqlType::new(id);
        let array = ty.array_of().filter(|a| a.id != id).map_or(0, |a| a.pg_oid());
        let coll = collation_of(id, collatable);
        rows.push(row(
            ty.pg_oid(),
            &crate::sql::query::pg_type_name(&ty.name()),
            len,
            byval,
            category,
            preferred,
            0,
            array,
            align,
            storage,
            coll,
        ));
    }
    // The vectors (no array types of their own here) and the array types.
    rows.push(row(22, "int2vector", -1, false, 'A', false, 21, 0, 'i', 'p', 0));
    rows.push(row(30, "oidvector", -1, false, 'A', false, 26, 0, 'i', 'p', 0));
    for e in crate::types::ArrayElem::all() {
        let (_, _, _, _, align, _, collatable) = type_facts(e.id());
        let coll = collation_of(e.id(), collatable);
        rows.push(row(e.array_oid(), e.typname(), -1, false, 'A', false, SqlType::new(e.id()).pg_oid(), 0, array_align(align), 'x', coll));
    }
    rows.extend(arrays);
    rows
}

/// The default B-tree operator classes PostgreSQL 15 has for heapstore's types:
/// (type, opclass OID, name, family OID, the opclass's input type OID).
const OPCLASSES: &[(TypeId, u32, &str, u32, u32)] = &[
    (TypeId::Bool, 10003, "bool_ops", 424, 16),
    (TypeId::Bytea, 10006, "bytea_ops", 428, 17),
    (TypeId::Char, 10007, "char_ops", 429, 18),
    (TypeId::Name, 10028, "name_ops", 1994, 19),
    (TypeId::Int8, 3124, "int8_ops", 1976, 20),
    (TypeId::Int2, 1979, "int2_ops", 1976, 21),
    (TypeId::Int4, 1978, "int4_ops", 1976, 23),
    (TypeId::Text, 3126, "text_ops", 1994, 25),
    (TypeId::Oid, 1981, "oid_ops", 1989, 26),
    (TypeId::OidVector, 10032, "oidvector_ops", 1991, 30),
    (TypeId::Float4, 10012, "float4_ops", 1970, 700),
    (TypeId::Float8, 3123, "float8_ops", 1970, 701),
    (TypeId::Bpchar, 10004, "bpchar_ops", 426, 1042),
    (TypeId::Date, 3122, "date_ops", 434, 1082),
    (TypeId::Timestamp, 3128, "timestamp_ops", 434, 1114),
    (TypeId::Timestamptz, 3127, "timestamptz_ops", 434, 1184),
    (TypeId::Numeric, 3125, "numeric_ops", 1988, 1700),
    (TypeId::Time, 10038, "time_ops", 1996, 1083),
    (TypeId::TimeTz, 10041, "timetz_ops", 2000, 1266),
];

/// B-tree operator classes that are not a type's default: (OID, name, family, input type).
/// Under heapstore's bytewise text comparison (the C collation) they order and compare as the
/// defaults do.
const OTHER_OPCLASSES: &[(u32, &str, u32, u32)] = &[
    (4217, "text_pattern_ops", 2095, 25),
    (4218, "varchar_pattern_ops", 2095, 25),
    (4219, "bpchar_pattern_ops", 2097, 1042),
    (10044, "varchar_ops", 1994, 25),
];

/// The B-tree operator class `name` for a key column of type `ty`, as CREATE INDEX reads it:
/// 0 for the type's default class, the OID of another class that takes the type; 42704 for
/// no such class, 42804 for one that does not take the type (PostgreSQL's errors).
pub(crate) fn btree_opclass(name: &str, ty: TypeId) -> crate::error::Result<u32> {
    let default = default_opclass(ty);
    if default.is_some_and(|d| d.1 == name) {
        return Ok(0);
    }
    let known = OPCLASSES.iter().map(|o| (o.1, o.2, o.4)).chain(std::iter::once((ARRAY_OPS.0, ARRAY_OPS.1, ARRAY_OPS.3)));
    let other = OTHER_OPCLASSES.iter().map(|o| (o.0, o.1, o.3));
    let Some((oid, _, intype)) = known.chain(other).find(|o| o.1 == name) else {
        return Err(crate::error::PgError::new("42704", format!("operator class \"{name}\" does not exist for access method \"btree\"")));
    };
    // A class takes its input type and the types binary-coercible to it (varchar to text).
    let takes = default.is_some_and(|d| d.3 == intype);
    let textual = |id: TypeId| matches!(id, TypeId::Text | TypeId::Varchar | TypeId::Bpchar);
    if !takes && textual(ty) && (intype == 25 || intype == 1042) {
        // PostgreSQL also takes text with a bpchar class and the reverse, comparing as the
        // class's type does (trailing blanks ignored or not): not built.
        return Err(crate::error::PgError::feature(format!(
            "operator class \"{name}\" on a column of type {} is not supported by heapstore",
            crate::types::SqlType::new(ty).name()
        )));
    }
    if !takes {
        return Err(crate::error::PgError::new(
            "42804",
            format!("operator class \"{name}\" does not accept data type {}", crate::types::SqlType::new(ty).name()),
        ));
    }
    Ok(if OPCLASSES.iter().any(|o| o.1 == oid) || oid == ARRAY_OPS.0 { 0 } else { oid })
}

/// An operator class's name by OID (the non-default ones an index may name).
pub(crate) fn opclass_name(oid: u32) -> Option<&'static str> {
    OTHER_OPCLASSES.iter().find(|o| o.0 == oid).map(|o| o.1)
}

/// `array_ops` (any array type).
const ARRAY_OPS: (u32, &str, u32, u32) = (10000, "array_ops", 397, 2277);

/// The default B-tree operator class of a type: (OID, name, family, input type). varchar
/// uses text's, regtype oid's, arrays `array_ops`, as in PostgreSQL.
fn default_opclass(id: TypeId) -> Option<(u32, &'static str, u32, u32)> {
    let id = match id {
        TypeId::Varchar => TypeId::Text,
        TypeId::Regtype | TypeId::Regnamespace | TypeId::Regclass => TypeId::Oid,
        TypeId::Array(_) | TypeId::Int2Vector => return Some(ARRAY_OPS),
        other => other,
    };
    OPCLASSES.iter().find(|o| o.0 == id).map(|o| (o.1, o.2, o.3, o.4))
}

fn pg_opclass() -> Vec<Vec<Value>> {
    OPCLASSES
        .iter()
        .map(|o| (o.1, o.2, o.3, o.4, true))
        .chain(std::iter::once((ARRAY_OPS.0, ARRAY_OPS.1, ARRAY_OPS.2, ARRAY_OPS.3, true)))
        .chain(OTHER_OPCLASSES.iter().map(|o| (o.0, o.1, o.2, o.3, false)))
        .map(|(oid, name, family, intype, default)| {
            vec![
                Value::Oid(oid),
                Value::Oid(BTREE_AM),
                name_v(name),
                Value::Oid(PG_CATALOG),
                Value::Oid(BOOTSTRAP_ROLE),
                Value::Oid(family),
                Value::Oid(intype),
                Value::Bool(default),
                Value::Oid(0),
            ]
        })
        .collect()
}

fn pg_index(tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        for ix in &t.indexes {
            let natts = Value::Int2((ix.columns.len() + ix.include.len()) as i16);
            let n = Value::Int2(ix.columns.len() as i16);
            let b = Value::Bool;
            let vector = |ty: TypeId, items: Vec<Value>| Value::Array(Box::new(crate::types::Array::from_items(SqlType::new(ty), items)));
            let Ok(types) = crate::sql::index::key_types(t, ix) else { continue };
            let cols = || types.iter().copied();
            out.push(vec![
                Value::Oid(ix.oid),
                Value::Oid(t.oid),
                natts,
                n,
                b(ix.unique),
                b(false),
                b(ix.primary),
                b(false),
                b(true),
                b(false),
                b(true),
                b(false),
                b(true),
                b(true),
                b(false),
                // An expression key is 0, as in PostgreSQL.
                vector(
                    TypeId::Int2Vector,
                    ix.columns
                        .iter()
                        .chain(&ix.include)
                        .map(|&c| Value::Int2(if c == crate::catalog::EXPR_KEY { 0 } else { c as i16 + 1 }))
                        .collect(),
                ),
                vector(TypeId::OidVector, cols().map(|ty| Value::Oid(collation_of(ty.id, type_facts(ty.id).6))).collect()),
                vector(
                    TypeId::OidVector,
                    cols()
                        .enumerate()
                        .map(|(k, ty)| match ix.opclass(k) {
                            0 => Value::Oid(default_opclass(ty.id).map_or(0, |o| o.0)),
                            oid => Value::Oid(oid),
                        })
                        .collect(),
                ),
                // Each column's order: DESC 1, NULLS FIRST 2, as PostgreSQL's indoption.
                vector(TypeId::Int2Vector, (0..ix.columns.len()).map(|k| Value::Int2(i16::from(ix.option(k)))).collect()),
                // The key expressions: their text (PostgreSQL stores a node tree).
                if ix.has_exprs() { Value::Text(format!("({})", ix.exprs.join(", "))) } else { Value::Null },
                // A partial index's predicate: its text (PostgreSQL stores a node tree).
                ix.predicate.as_ref().map_or(Value::Null, |p| Value::Text(format!("({p})"))),
            ]);
        }
    }
    out
}

/// A column default's oid: derived from the table's oid and the column number (heapstore
/// gives defaults no catalog rows of their own; PostgreSQL's oids are only unique too).
fn attrdef_oid(table: u32, column: usize) -> u32 {
    table.wrapping_mul(1601).wrapping_add(column as u32 + 1) | 0x8000_0000
}

/// A CHECK constraint's oid (as [`attrdef_oid`], in another range).
fn check_oid(table: u32, k: usize) -> u32 {
    (table.wrapping_mul(1601).wrapping_add(k as u32 + 1) & 0x7fff_ffff) | 0x4000_0000
}

/// `pg_attrdef`: one row per column DEFAULT; `adbin` holds the expression's SQL text, which is
/// what `pg_get_expr(adbin, adrelid)` gives back.
fn pg_attrdef(tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        for (i, c) in t.columns.iter().enumerate() {
            if let Some(d) = &c.default {
                out.push(vec![Value::Oid(attrdef_oid(t.oid, i)), Value::Oid(t.oid), Value::Int2(i as i16 + 1), Value::Text(d.clone())]);
            }
        }
    }
    out
}

/// `pg_depend`, for the dependencies heapstore keeps: a sequence owned by a column (`serial`:
/// 'a', identity: 'i'), an index on its table ('a'; 'i' on its constraint for PRIMARY KEY /
/// UNIQUE), a CHECK constraint and a column default on their table ('a'), and a view on the
/// relations it reads ('n').
fn pg_depend(tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    const PG_CLASS: u32 = 1259;
    const PG_CONSTRAINT: u32 = 2606;
    const PG_ATTRDEF: u32 = 2604;
    let row = |classid: u32, objid: u32, refclassid: u32, refobjid: u32, refsub: i32, deptype: char| {
        vec![
            Value::Oid(classid),
            Value::Oid(objid),
            Value::Int4(0),
            Value::Oid(refclassid),
            Value::Oid(refobjid),
            Value::Int4(refsub),
            ch(deptype),
        ]
    };
    let mut out = Vec::new();
    for t in tables {
        if let Some((owner, col)) = t.sequence().and_then(|d| d.owned_by.as_ref()) {
            if let Some(ot) = tables.iter().find(|x| x.oid == *owner) {
                if let Some(c) = ot.column_index(col) {
                    let kind = if ot.columns[c].identity.is_some() { 'i' } else { 'a' };
                    out.push(row(PG_CLASS, t.oid, PG_CLASS, ot.oid, c as i32 + 1, kind));
                }
            }
        }
        if let crate::catalog::RelKind::View(d) = &t.kind {
            for dep in &d.deps {
                out.push(row(PG_CLASS, t.oid, PG_CLASS, *dep, 0, 'n'));
            }
        }
        for ix in &t.indexes {
            if ix.constraint {
                out.push(row(PG_CLASS, ix.oid, PG_CONSTRAINT, ix.oid, 0, 'i'));
                out.push(row(PG_CONSTRAINT, ix.oid, PG_CLASS, t.oid, 0, 'a'));
            } else {
                out.push(row(PG_CLASS, ix.oid, PG_CLASS, t.oid, 0, 'a'));
            }
        }
        for k in 0..t.checks.len() {
            out.push(row(PG_CONSTRAINT, check_oid(t.oid, k), PG_CLASS, t.oid, 0, 'a'));
        }
        for (i, c) in t.columns.iter().enumerate() {
            if c.default.is_some() {
                out.push(row(PG_ATTRDEF, attrdef_oid(t.oid, i), PG_CLASS, t.oid, i as i32 + 1, 'a'));
            }
        }
    }
    out
}

/// `pg_get_viewdef(oid)`: every view's query text.
pub fn view_defs(s: &Session) -> Vec<(u32, String)> {
    s.visible_tables()
        .iter()
        .filter_map(|t| match &t.kind {
            crate::catalog::RelKind::View(d) => Some((t.oid, format!(" {};", d.query))),
            _ => None,
        })
        .collect()
}

/// `pg_sequence`: each sequence's parameters.
fn pg_sequence(tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    tables
        .iter()
        .filter_map(|t| {
            let d = t.sequence()?;
            Some(vec![
                Value::Oid(t.oid),
                Value::Oid(d.ty.pg_oid()),
                Value::Int8(d.start),
                Value::Int8(d.increment),
                Value::Int8(d.max),
                Value::Int8(d.min),
                Value::Int8(d.cache),
                Value::Bool(d.cycle),
            ])
        })
        .collect()
}

/// Every CHECK constraint the session sees: (oid, `pg_get_constraintdef`).
/// Every CHECK constraint: (oid, `pg_get_constraintdef` plain, and pretty).
pub fn check_defs(s: &Session) -> Vec<(u32, String, String)> {
    s.visible_tables()
        .iter()
        .flat_map(|t| {
            t.checks
                .iter()
                .enumerate()
                .map(|(k, c)| (check_oid(t.oid, k), check_def(&c.expr), format!("CHECK ({})", c.expr)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A CHECK constraint's definition as `pg_get_constraintdef` prints it: `CHECK ((expr))`.
fn check_def(expr: &str) -> String {
    format!("CHECK (({expr}))")
}

/// A `smallint[]` of column numbers (`conkey`).
fn int2_array(cols: Vec<i16>) -> Value {
    let ty = SqlType::new(TypeId::Array(crate::types::ArrayElem::Int2));
    Value::Array(Box::new(crate::types::Array::from_items(ty, cols.into_iter().map(Value::Int2).collect())))
}

/// The columns a CHECK expression reads, by number in ascending order (`conkey`).
fn check_columns(t: &Table, expr: &str) -> Vec<i16> {
    use sqlparser::ast::{visit_expressions, Expr};
    let Ok(toks) = crate::sql::tokens_without_locations(expr) else { return Vec::new() };
    if crate::sql::dialect::check_nesting(&toks).is_err() {
        return Vec::new();
    }
    let parsed = sqlparser::parser::Parser::new(&crate::sql::dialect::Pg)
        .with_recursion_limit(crate::sql::dialect::RECURSION_LIMIT)
        .with_tokens_with_locations(toks)
        .parse_expr();
    let Ok(e) = parsed else {
        return Vec::new();
    };
    let mut cols = std::collections::BTreeSet::new();
    let _ = visit_expressions(&e, |x| {
        let name = match x {
            Expr::Identifier(id) => Some(crate::catalog::fold_ident(id)),
            Expr::CompoundIdentifier(ids) => ids.last().map(crate::catalog::fold_ident),
            _ => None,
        };
        if let Some(k) = name.and_then(|n| t.columns.iter().position(|c| c.name == n)) {
            cols.insert(k as i16 + 1);
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    cols.into_iter().collect()
}

fn pg_constraint(s: &Session, tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let ns = ns_oid(s, t);
        for (k, c) in t.checks.iter().enumerate() {
            let b = Value::Bool;
            out.push(vec![
                Value::Oid(check_oid(t.oid, k)),
                name_v(&c.name),
                Value::Oid(ns),
                ch('c'),
                b(false),
                b(false),
                b(true),
                Value::Oid(t.oid),
                Value::Oid(0),
                Value::Oid(0),
                Value::Oid(0),
                Value::Oid(0),
                ch(' '),
                ch(' '),
                ch(' '),
                b(true),
                Value::Int4(0),
                b(false),
                int2_array(check_columns(t, &c.expr)),
                Value::Null,
                Value::Text(c.expr.clone()),
            ]);
        }
        for fk in &t.foreign_keys {
            let b = Value::Bool;
            out.push(vec![
                Value::Oid(fk.oid),
                name_v(&fk.name),
                Value::Oid(ns),
                ch('f'),
                b(fk.deferrable),
                b(fk.initially_deferred),
                b(true),
                Value::Oid(t.oid),
                Value::Oid(0),
                Value::Oid(fk.ref_index),
                Value::Oid(0),
                Value::Oid(fk.ref_table),
                ch(fk.on_update.code()),
                ch(fk.on_delete.code()),
                ch('s'),
                b(true),
                Value::Int4(0),
                b(true),
                int2_array(fk.columns.iter().map(|&c| c as i16 + 1).collect()),
                int2_array(fk.ref_columns.iter().map(|&c| c as i16 + 1).collect()),
                Value::Null,
            ]);
        }
        for ix in t.indexes.iter().filter(|ix| ix.constraint) {
            let b = Value::Bool;
            out.push(vec![
                Value::Oid(ix.oid),
                name_v(&ix.name),
                Value::Oid(ns),
                ch(if ix.primary { 'p' } else { 'u' }),
                b(false),
                b(false),
                b(true),
                Value::Oid(t.oid),
                Value::Oid(0),
                Value::Oid(ix.oid),
                Value::Oid(0),
                Value::Oid(0),
                ch(' '),
                ch(' '),
                ch(' '),
                b(true),
                Value::Int4(0),
                b(true),
                int2_array(ix.columns.iter().map(|&c| c as i16 + 1).collect()),
                Value::Null,
                Value::Null,
            ]);
        }
    }
    out
}

fn roles(s: &Session, view: bool) -> Vec<Vec<Value>> {
    let roles = crate::auth::load_roles(&s.shared().dir).unwrap_or_default();
    let mut next = 16_384u32;
    roles
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let oid = if i == 0 {
                BOOTSTRAP_ROLE
            } else {
                next += 1;
                next - 1
            };
            let b = Value::Bool;
            let password = if view { Some("********".to_string()) } else { r.rolpassword.clone() };
            let password = password.map_or(Value::Null, Value::Text);
            if view {
                vec![
                    name_v(&r.rolname),
                    b(r.rolsuper),
                    b(true),
                    b(r.rolsuper),
                    b(r.rolsuper),
                    b(true),
                    b(r.rolsuper),
                    Value::Int4(-1),
                    password,
                    Value::Null,
                    b(r.rolsuper),
                    Value::Oid(oid),
                ]
            } else {
                vec![
                    Value::Oid(oid),
                    name_v(&r.rolname),
                    b(r.rolsuper),
                    b(true),
                    b(r.rolsuper),
                    b(r.rolsuper),
                    b(true),
                    b(r.rolsuper),
                    b(r.rolsuper),
                    Value::Int4(-1),
                    password,
                    Value::Null,
                ]
            }
        })
        .collect()
}

/// The OID `pg_authid` gives a role (invariant 1), or None.
pub fn role_oid(s: &Session, name: &str) -> Option<u32> {
    let roles = crate::auth::load_roles(&s.shared().dir).ok()?;
    let i = roles.iter().position(|r| r.rolname == name)?;
    Some(if i == 0 { BOOTSTRAP_ROLE } else { 16_384 + i as u32 - 1 })
}

/// The role with OID `oid`, or None.
pub fn role_name(s: &Session, oid: u32) -> Option<String> {
    let roles = crate::auth::load_roles(&s.shared().dir).ok()?;
    let i = if oid == BOOTSTRAP_ROLE { 0 } else { (oid.checked_sub(16_384)? + 1) as usize };
    roles.get(i).map(|r| r.rolname.clone())
}

/// PostgreSQL's views over `pg_class`: `pg_tables` (ordinary tables, the catalogs' included,
/// as `pg_class` lists them), `pg_indexes` (each index with its `pg_get_indexdef`) and
/// `pg_views` (each view with its `pg_get_viewdef`). Every relation is in the default
/// tablespace (NULL) and owned by the bootstrap superuser, as `pg_class` says.
fn relation_views(s: &Session, which: &str, tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    let owner = crate::auth::load_roles(&s.shared().dir)
        .ok()
        .and_then(|r| r.first().map(|r| r.rolname.clone()))
        .unwrap_or_else(|| "postgres".into());
    let b = Value::Bool;
    let mut out = Vec::new();
    match which {
        "pg_tables" => {
            for d in DEFS.iter().filter(|d| d.kind == 'r') {
                let schema = if d.schema == INFORMATION_SCHEMA { "information_schema" } else { "pg_catalog" };
                out.push(vec![name_v(schema), name_v(d.name), name_v(&owner), Value::Null, b(false), b(false), b(false), b(false)]);
            }
            let referenced: std::collections::HashSet<u32> =
                tables.iter().flat_map(|t| t.foreign_keys.iter().map(|f| f.ref_table)).collect();
            for t in tables.iter().filter(|t| t.is_table()) {
                // Foreign keys are triggers in PostgreSQL, on both tables (`pg_class.relhastriggers`).
                let triggers = !t.foreign_keys.is_empty() || referenced.contains(&t.oid);
                out.push(vec![
                    name_v(&ns_name(s, t)),
                    name_v(&t.name),
                    name_v(&owner),
                    Value::Null,
                    b(!t.indexes.is_empty()),
                    b(false),
                    b(triggers),
                    b(false),
                ]);
            }
        }
        "pg_indexes" => {
            for t in tables.iter().filter(|t| t.is_table()) {
                for ix in &t.indexes {
                    let def = index_def(s, ix.oid).map_or(Value::Null, Value::Text);
                    out.push(vec![name_v(&ns_name(s, t)), name_v(&t.name), name_v(&ix.name), Value::Null, def]);
                }
            }
        }
        _ => {
            // The catalog views pg_class lists: heapstore builds them, so they have no SQL
            // definition (NULL, as pg_get_viewdef gives for them).
            for d in DEFS.iter().filter(|d| d.kind == 'v') {
                let schema = if d.schema == INFORMATION_SCHEMA { "information_schema" } else { "pg_catalog" };
                out.push(vec![name_v(schema), name_v(d.name), name_v(&owner), Value::Null]);
            }
            for t in tables {
                if let crate::catalog::RelKind::View(d) = &t.kind {
                    out.push(vec![name_v(&ns_name(s, t)), name_v(&t.name), name_v(&owner), Value::Text(format!(" {};", d.query))]);
                }
            }
        }
    }
    out
}

/// `pg_stat_user_tables` from the per-table counters (`stats::tables`).
fn stat_user_tables(s: &Session, tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    use std::sync::atomic::Ordering::Relaxed;
    let stats = &s.shared().table_stats;
    tables
        .iter()
        .filter(|t| t.is_table())
        .map(|t| {
            let c = stats.get(t.oid);
            let i8 = |v: u64| Value::Int8(v as i64);
            let time = |us: i64| if us == crate::stats::tables::NEVER { Value::Null } else { Value::Timestamptz(us) };
            vec![
                Value::Oid(t.oid),
                name_v(&ns_name(s, t)),
                name_v(&t.name),
                i8(c.n_tup_ins.load(Relaxed)),
                i8(c.n_tup_upd.load(Relaxed)),
                i8(c.n_tup_del.load(Relaxed)),
                i8(c.n_tup_hot_upd.load(Relaxed)),
                Value::Int8(c.n_live_tup.load(Relaxed).max(0)),
                Value::Int8(c.n_dead_tup.load(Relaxed).max(0)),
                Value::Int8(c.mods_since_analyze() as i64),
                Value::Int8(c.n_ins_since_vacuum.load(Relaxed).max(0)),
                time(c.last_vacuum_us.load(Relaxed)),
                time(c.last_autovacuum_us.load(Relaxed)),
                time(c.last_analyze_us.load(Relaxed)),
                time(c.last_autoanalyze_us.load(Relaxed)),
                i8(c.vacuum_count.load(Relaxed)),
                i8(c.autovacuum_count.load(Relaxed)),
                i8(c.analyze_count.load(Relaxed)),
                i8(c.autoanalyze_count.load(Relaxed)),
            ]
        })
        .collect()
}

/// `pg_stats`: what ANALYZE keeps per column (`sql::statistics`), for the tables that have
/// statistics and the columns they still have.
fn pg_stats(s: &Session, tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables.iter().filter(|t| t.is_table()) {
        let Some(st) = s.shared().planner_stats.get(t.oid) else { continue };
        for col in &t.columns {
            let Some(c) = st.column(&col.name, col.ty) else { continue };
            let freqs = (!c.mcv.is_empty()).then(|| {
                Value::Array(Box::new(crate::types::Array::from_items(
                    SqlType::new(TypeId::Array(crate::types::ArrayElem::Float4)),
                    c.mcv.iter().map(|m| Value::Float4(m.1 as f32)).collect(),
                )))
            });
            out.push(vec![
                name_v(&ns_name(s, t)),
                name_v(&t.name),
                name_v(&col.name),
                Value::Bool(false),
                Value::Float4(c.null_frac as f32),
                Value::Int4(c.avg_width.round() as i32),
                Value::Float4(c.n_distinct as f32),
                freqs.unwrap_or(Value::Null),
                Value::Float4(c.correlation as f32),
            ]);
        }
    }
    out
}

fn settings(s: &Session) -> Vec<Vec<Value>> {
    let mut rows: Vec<Vec<Value>> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (name, value) in s.client_settings() {
        seen.insert(name.to_ascii_lowercase());
        // What RESET gives: the value at connection, else (an embedded session's SET of a
        // planner setting) the server's.
        let reset = s
            .client_reset_value(&name)
            .or_else(|| s.shared().settings.get(&name).ok().map(|v| v.to_string()))
            .unwrap_or_else(|| value.clone());
        // The integer ones in their base unit, with their range, as PostgreSQL shows them
        // (extra_float_digits' range is the values heapstore takes).
        let (kind, range): (&str, Option<(&str, &str)>) = match name.as_str() {
            "statement_timeout" => ("integer", Some(("0", "2147483647"))),
            "extra_float_digits" => ("integer", Some(("1", "3"))),
            _ => ("string", None),
        };
        let base = |v: &str| {
            if name == "statement_timeout" {
                crate::config::parse_time_ms(v).map_or(v.to_string(), |ms| ms.to_string())
            } else {
                v.to_string()
            }
        };
        let unit = (name == "statement_timeout").then_some("ms");
        // Changed in the session (its value is not what RESET gives), given by the client at
        // connection, or the server's (the planner settings copy the server's value).
        let source = if value != reset {
            "session"
        } else if s.client_gave(&name) {
            "client"
        } else {
            s.shared().settings.source(&name)
        };
        // Reported by the server, never SET: PostgreSQL's internal settings.
        let internal =
            matches!(name.as_str(), "server_version" | "server_version_num" | "server_encoding" | "integer_datetimes" | "is_superuser");
        let mut row = setting_row(&name, (base(&value), unit, kind, None), "", if internal { "internal" } else { "user" }, source);
        if let Some((min, max)) = range {
            row[9] = Value::Text(min.into());
            row[10] = Value::Text(max.into());
        }
        row[13] = Value::Text(base(&reset));
        // The planner settings are the server's: their built-in default.
        if let Some(boot) = crate::config::Settings::boot_value(&name) {
            row[12] = Value::Text(s.shared().settings.describe(&name, boot).map_or(boot.to_string(), |d| d.0));
        }
        rows.push(row);
    }
    // PostgreSQL's compile-time limits that heapstore keeps too (drivers read them).
    let max_keys = super::index::MAX_INDEX_KEYS.to_string();
    let mut row = setting_row(
        "max_index_keys",
        (max_keys.clone(), None, "integer", None),
        "Shows the maximum number of index keys.",
        "internal",
        "default",
    );
    row[12] = Value::Text(max_keys);
    rows.push(row);
    seen.insert("max_index_keys".to_string());
    let settings = &s.shared().settings;
    for (name, value, doc) in settings.all() {
        if seen.insert(name.to_ascii_lowercase()) {
            // work_mem, temp_file_limit and TimeZone are SET per session; the others are the
            // server's, fixed until it restarts.
            let per_session =
                matches!(name, "work_mem" | "temp_file_limit" | "TimeZone") || crate::sql::cost::PLANNER_SETTINGS.contains(&name);
            let changed = match name {
                "work_mem" => s.work_mem_kb.is_some(),
                "temp_file_limit" => s.temp_file_limit_kb.is_some(),
                "TimeZone" => s.time_zone_setting() != value,
                _ => false,
            };
            let current = match name {
                "work_mem" => format!("{}kB", s.work_mem_bytes() / 1024),
                "temp_file_limit" => s.temp_file_limit_kb().to_string(),
                "TimeZone" => s.time_zone_setting(),
                _ => value.clone(),
            };
            let base = |v: &str| settings.describe(name, v).map_or(v.to_string(), |d| d.0);
            let shown = settings.describe(name, &current).unwrap_or((current, None, "string", None));
            let source = if changed { "session" } else { settings.source(name) };
            let context = if crate::config::Settings::is_init_only(name) {
                "internal"
            } else if per_session {
                "user"
            } else {
                "postmaster"
            };
            let mut row = setting_row(name, shown, doc, context, source);
            row[12] = crate::config::Settings::boot_value(name).map_or(Value::Null, |b| Value::Text(base(b)));
            row[13] = Value::Text(base(&value));
            rows.push(row);
        }
    }
    rows.sort_by(|a, b| crate::sql::expr::compare(&a[0], &b[0]).unwrap_or(std::cmp::Ordering::Equal));
    rows
}

/// One `pg_settings` row: the setting as `Settings::describe` gives it (value in its base
/// unit, the unit, vartype, enum values).
type Shown = (String, Option<&'static str>, &'static str, Option<&'static [&'static str]>);

fn setting_row(name: &str, (value, unit, vartype, enumvals): Shown, doc: &str, context: &str, source: &str) -> Vec<Value> {
    let t = |x: &str| Value::Text(x.to_string());
    let enumvals = match enumvals {
        Some(vals) => Value::Array(Box::new(crate::types::Array::from_items(
            SqlType::new(TypeId::Array(crate::types::ArrayElem::Text)),
            vals.iter().map(|v| t(v)).collect(),
        ))),
        None => Value::Null,
    };
    vec![
        t(name),
        t(&value),
        unit.map_or(Value::Null, t),
        Value::Null,
        if doc.is_empty() { Value::Null } else { t(doc) },
        Value::Null,
        t(context),
        t(vartype),
        t(source),
        Value::Null,
        Value::Null,
        enumvals,
        Value::Null,
        t(&value),
        Value::Null,
        Value::Null,
        Value::Bool(false),
    ]
}

/// `information_schema.tables`: user tables (schema public) and the catalogs.
fn info_tables(s: &Session, tables: &[Arc<Table>], db: &str) -> Vec<Vec<Value>> {
    let v = |x: &str| Value::Text(x.to_string());
    let row = |schema: &str, name: &str, kind: &str, insertable: bool| {
        vec![
            name_v(db),
            name_v(schema),
            name_v(name),
            v(kind),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            v(if insertable { "YES" } else { "NO" }),
            v("NO"),
            Value::Null,
        ]
    };
    let mut out: Vec<Vec<Value>> = DEFS
        .iter()
        .map(|d| {
            let schema = if d.schema == PG_CATALOG { "pg_catalog" } else { "information_schema" };
            row(schema, d.name, if d.kind == 'v' { "VIEW" } else { "BASE TABLE" }, false)
        })
        .collect();
    // Sequences are not in information_schema.tables (PostgreSQL lists them elsewhere).
    out.extend(tables.iter().filter(|t| t.sequence().is_none()).map(|t| {
        let view = !t.is_table();
        let kind = if view {
            "VIEW"
        } else if t.is_temp() {
            "LOCAL TEMPORARY"
        } else {
            "BASE TABLE"
        };
        row(&ns_name(s, t), &t.name, kind, !view)
    }));
    out
}

/// `information_schema.columns` for user tables.
fn info_columns(s: &Session, tables: &[Arc<Table>], db: &str) -> Vec<Vec<Value>> {
    let v = |x: &str| Value::Text(x.to_string());
    let i = |x: Option<i32>| x.map_or(Value::Null, Value::Int4);
    let mut out = Vec::new();
    for t in tables.iter().filter(|t| t.sequence().is_none()) {
        for (k, c) in t.columns.iter().enumerate() {
            let ty = c.ty;
            let n = ty.typmod;
            let (char_len, octets) = match ty.id {
                TypeId::Varchar | TypeId::Bpchar if n >= 0 => (Some(n), Some(n * 4)),
                TypeId::Varchar | TypeId::Bpchar | TypeId::Text => (None, Some(1_073_741_824)),
                _ => (None, None),
            };
            let (prec, radix, scale) = match ty.id {
                TypeId::Int2 => (Some(16), Some(2), Some(0)),
                TypeId::Int4 => (Some(32), Some(2), Some(0)),
                TypeId::Int8 => (Some(64), Some(2), Some(0)),
                TypeId::Float4 => (Some(24), Some(2), None),
                TypeId::Float8 => (Some(53), Some(2), None),
                TypeId::Numeric if n >= 4 => (Some(((n - 4) >> 16) & 0xffff), Some(10), Some(((n - 4) & 0x7ff) << 21 >> 21)),
                TypeId::Numeric => (None, Some(10), None),
                _ => (None, None, None),
            };
            let dt_prec = match ty.id {
                TypeId::Date => Some(0),
                TypeId::Timestamp | TypeId::Timestamptz | TypeId::Time | TypeId::TimeTz => Some(if n >= 0 { n } else { 6 }),
                // interval(p) is not a type heapstore has: always the full precision.
                TypeId::Interval => Some(6),
                _ => None,
            };
            let data_type = match ty.id {
                // information_schema names every array type ARRAY (its udt_name says which).
                _ if ty.is_array() => "ARRAY".to_string(),
                TypeId::Varchar => "character varying".to_string(),
                TypeId::Bpchar => "character".to_string(),
                TypeId::Numeric => "numeric".to_string(),
                TypeId::Timestamp => "timestamp without time zone".to_string(),
                TypeId::Timestamptz => "timestamp with time zone".to_string(),
                TypeId::Time => "time without time zone".to_string(),
                TypeId::TimeTz => "time with time zone".to_string(),
                TypeId::Char => "\"char\"".to_string(),
                _ => ty.name(),
            };
            let mut row = vec![
                name_v(db),
                name_v(&ns_name(s, t)),
                name_v(&t.name),
                name_v(&c.name),
                Value::Int4(k as i32 + 1),
                c.default.as_deref().map_or(Value::Null, v),
                v(if c.not_null { "NO" } else { "YES" }),
                v(&data_type),
                i(char_len),
                i(octets),
                i(prec),
                i(radix),
                i(scale),
                i(dt_prec),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ];
            // Collation (NULL: the default one) and domain: none.
            row.extend([Value::Null, Value::Null, Value::Null]);
            row.extend([Value::Null, Value::Null, Value::Null]);
            let udt =
                if ty.is_array() { ty.internal_name().to_string() } else { crate::sql::query::pg_type_name(&SqlType::new(ty.id).name()) };
            row.extend([name_v(db), name_v("pg_catalog"), name_v(&udt)]);
            row.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
            row.push(name_v(&(k + 1).to_string()));
            row.push(v("NO"));
            match c.identity {
                None => {
                    row.push(v("NO"));
                    row.extend([Value::Null, Value::Null, Value::Null, Value::Null, Value::Null, v("NO")]);
                }
                Some(kind) => {
                    row.push(v("YES"));
                    row.push(v(if kind == crate::catalog::Identity::Always { "ALWAYS" } else { "BY DEFAULT" }));
                    let seq = tables
                        .iter()
                        .find_map(|q| q.sequence().filter(|d| d.owned_by.as_ref().is_some_and(|(o, cn)| *o == t.oid && *cn == c.name)));
                    match seq {
                        Some(d) => row.extend([
                            v(&d.start.to_string()),
                            v(&d.increment.to_string()),
                            v(&d.max.to_string()),
                            v(&d.min.to_string()),
                            v(if d.cycle { "YES" } else { "NO" }),
                        ]),
                        None => row.extend([Value::Null, Value::Null, Value::Null, Value::Null, Value::Null]),
                    }
                }
            }
            row.push(v("NEVER"));
            row.push(Value::Null);
            row.push(v("YES"));
            out.push(row);
        }
    }
    out
}

/// The name of the type with OID `oid` as `regtype` prints it (`integer`, `character
/// varying`, ...), or None.
pub fn type_name_of_oid(oid: u32) -> Option<String> {
    TYPES.iter().map(|t| SqlType::new(t.0)).find(|t| t.pg_oid() == oid).map(|t| t.name())
}

/// The OID of the type named `name` as `to_regtype` reads it, or None.
pub fn type_oid_of_name(name: &str) -> Option<u32> {
    let n = name.trim();
    let n = n.strip_prefix("pg_catalog.").unwrap_or(n);
    let n = n.trim_matches('"');
    SqlType::from_name(n, &[]).ok().filter(|t| TYPES.iter().any(|x| x.0 == t.id)).map(|t| t.pg_oid())
}

/// The relation `name` (optionally schema-qualified) as `to_regclass` reads it: its OID.
pub fn relation_oid_of_name(s: &Session, name: &str) -> Option<u32> {
    let parts = split_identifiers(name)?;
    let (schema, rel) = match parts.as_slice() {
        [a, b] => (Some(a.as_str()), b.as_str()),
        [b] => (None, b.as_str()),
        _ => return None,
    };
    if let Some(d) = find(schema, rel) {
        return Some(d.oid);
    }
    // Which relations the schema allows: None any (temporary ones first), Some(true) the
    // session's temporary ones, Some(false) `public`'s.
    let temp = match schema {
        None => None,
        Some("public") => Some(false),
        Some(sc) if sc == "pg_temp" || sc == temp_schema_name(s) => Some(true),
        Some(_) => return None,
    };
    for t in s.visible_tables() {
        if temp.is_some_and(|x| x != t.is_temp()) {
            continue;
        }
        if t.name == rel {
            return Some(t.oid);
        }
        if let Some(ix) = t.indexes.iter().find(|i| i.name == rel) {
            return Some(ix.oid);
        }
    }
    None
}

/// A possibly qualified name as PostgreSQL reads it (`"My Table"` exactly, `My` as `my`); None
/// if it is malformed.
pub fn split_identifiers(name: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut chars = name.trim().chars().peekable();
    loop {
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        cur.push('"');
                    }
                    '"' => break,
                    c => cur.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' {
                    break;
                }
                cur.push(c.to_ascii_lowercase());
                chars.next();
            }
        }
        if cur.is_empty() {
            return None;
        }
        parts.push(std::mem::take(&mut cur));
        match chars.next() {
            None => return Some(parts),
            Some('.') => {}
            Some(_) => return None,
        }
    }
}

/// The name of the relation with OID `oid` as `regclass` prints it, or None.
pub fn relation_name_of_oid(s: &Session, oid: u32) -> Option<String> {
    if let Some(d) = DEFS.iter().find(|d| d.oid == oid) {
        return Some(d.name.to_string());
    }
    for t in s.visible_tables() {
        if t.oid == oid {
            return Some(t.name.clone());
        }
        if let Some(ix) = t.indexes.iter().find(|i| i.oid == oid) {
            return Some(ix.name.clone());
        }
    }
    None
}

/// `pg_get_indexdef(oid)`: `CREATE [UNIQUE] INDEX name ON public.table USING btree (cols)`
/// (`pg_temp.table` for a temporary table's index).
pub fn index_def(s: &Session, oid: u32) -> Option<String> {
    index_def_pretty(s, oid, false)
}

/// As [`index_def`]; `pretty` (psql's `\d`) leaves out the parentheses around a predicate.
pub fn index_def_pretty(s: &Session, oid: u32, pretty: bool) -> Option<String> {
    for t in s.visible_tables() {
        if let Some(ix) = t.indexes.iter().find(|i| i.oid == oid) {
            // PostgreSQL's words: DESC, and NULLS FIRST / LAST where not the default for it.
            let mut exprs = ix.exprs.iter();
            let cols: Vec<String> = ix
                .columns
                .iter()
                .enumerate()
                .map(|(k, &c)| {
                    let opt = ix.option(k);
                    let desc = opt & crate::catalog::INDOPTION_DESC != 0;
                    let nf = opt & crate::catalog::INDOPTION_NULLS_FIRST != 0;
                    let order = match (desc, nf) {
                        (false, false) => "",
                        (false, true) => " NULLS FIRST",
                        (true, true) => " DESC",
                        (true, false) => " DESC NULLS LAST",
                    };
                    let class = opclass_name(ix.opclass(k)).map_or(String::new(), |n| format!(" {n}"));
                    let key = if c == crate::catalog::EXPR_KEY {
                        crate::sql::index::expr_in_definition(exprs.next().expect("one expression for each expression key"), pretty)
                    } else {
                        super::func::quote_ident(&t.columns[c].name)
                    };
                    format!("{key}{class}{order}")
                })
                .collect();
            let include = if ix.include.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = ix.include.iter().map(|&c| super::func::quote_ident(&t.columns[c].name)).collect();
                format!(" INCLUDE ({})", names.join(", "))
            };
            return Some(format!(
                "CREATE {}INDEX {} ON {}{} USING btree ({}){include}{}",
                if ix.unique { "UNIQUE " } else { "" },
                super::func::quote_ident(&ix.name),
                // PostgreSQL names the session's temporary schema `pg_temp` here; pretty
                // output leaves out a schema on the search path.
                match (pretty, t.is_temp()) {
                    (true, _) => "",
                    (false, true) => "pg_temp.",
                    (false, false) => "public.",
                },
                super::func::quote_ident(&t.name),
                cols.join(", "),
                ix.predicate.as_ref().map_or(String::new(), |p| if pretty { format!(" WHERE {p}") } else { format!(" WHERE ({p})") })
            ));
        }
    }
    None
}

/// Every foreign key the session sees: (oid, `pg_get_constraintdef`).
pub fn fk_defs(s: &Session) -> Vec<(u32, String)> {
    let tables = s.visible_tables();
    let mut out = Vec::new();
    for t in &tables {
        for fk in &t.foreign_keys {
            if let Some(p) = tables.iter().find(|p| p.oid == fk.ref_table) {
                out.push((fk.oid, super::fk::definition(t, fk, p)));
            }
        }
    }
    out
}

/// `pg_get_constraintdef(oid)`: `PRIMARY KEY (cols)` / `UNIQUE (cols)`.
pub fn constraint_def(s: &Session, oid: u32) -> Option<String> {
    for t in s.visible_tables() {
        for (k, c) in t.checks.iter().enumerate() {
            if check_oid(t.oid, k) == oid {
                return Some(check_def(&c.expr));
            }
        }
        if let Some(ix) = t.indexes.iter().find(|i| i.oid == oid && i.constraint) {
            let names = |cols: &[usize]| cols.iter().map(|&c| super::func::quote_ident(&t.columns[c].name)).collect::<Vec<_>>().join(", ");
            let include = if ix.include.is_empty() { String::new() } else { format!(" INCLUDE ({})", names(&ix.include)) };
            return Some(format!("{} ({}){include}", if ix.primary { "PRIMARY KEY" } else { "UNIQUE" }, names(&ix.columns)));
        }
    }
    None
}

/// Whether relation `oid` is visible in the search path by its unqualified name
/// (`pg_table_is_visible`): user tables and catalogs are (public and pg_catalog are on the
/// path); an unknown OID gives NULL.
pub fn table_is_visible(s: &Session, oid: u32) -> Option<bool> {
    // The search path is pg_catalog, public: information_schema's relations are not visible
    // by their bare names.
    if DEFS.iter().any(|d| d.oid == oid && d.schema == INFORMATION_SCHEMA) {
        return Some(false);
    }
    relation_name_of_oid(s, oid).map(|_| true)
}

//! Settings, with PostgreSQL's names, units and meanings.
//!
//! A setting comes from (later wins): its built-in default, the data directory's
//! `heapstore.conf` (written by `init --set name=value`), then `--set name=value` on the
//! command line. Values are parsed as PostgreSQL's GUC machinery parses them: memory sizes
//! take `kB`, `MB`, `GB`, `TB` (or a bare number in the setting's base unit), times take
//! `ms`, `s`, `min`, `h`, booleans take on/off/true/false/yes/no/1/0.
//!
//! Invariants:
//! 1. Every name is one PostgreSQL has (or, for heapstore-only knobs, is prefixed `heapstore.`),
//!    and an unknown name is refused with PostgreSQL's error
//!    (`unrecognized configuration parameter "x"`), never silently ignored.
//! 2. `block_size` is fixed at `init`; changing it afterwards is refused.

use crate::error::{sqlstate, PgError, Result};
use crate::types::util::{is_space, take_sign};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The name of the config file inside a data directory.
pub const CONFIG_FILE: &str = "heapstore.conf";

/// How a setting's value is interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Memory size; the base unit in bytes (8192 for shared_buffers' "blocks", 1 for bytes).
    Memory {
        unit_bytes: u64,
    },
    /// Time; a number without a unit is in `unit_ms` milliseconds (PostgreSQL's unit for the
    /// setting: ms for bgwriter_delay, s for checkpoint_timeout).
    Time {
        unit_ms: u64,
    },
    Int,
    Real,
    Bool,
    Enum(&'static [&'static str]),
    /// Free text (checked where it is used, e.g. `heapstore.hba` by `auth::Hba::parse`).
    Str,
}

struct Def {
    name: &'static str,
    kind: Kind,
    default: &'static str,
    /// Only settable at init.
    init_only: bool,
    doc: &'static str,
}

const DEFS: &[Def] = &[
    Def {
        name: "block_size",
        kind: Kind::Int,
        default: "8192",
        init_only: true,
        doc: "page size in bytes, 4096..32768, a power of two; fixed at init",
    },
    Def {
        name: "default_table_access_method",
        kind: Kind::Enum(&["heap"]),
        default: "heap",
        init_only: false,
        doc: "access method of new tables (heapstore has heap only)",
    },
    Def {
        name: "shared_buffers",
        kind: Kind::Memory { unit_bytes: 8192 },
        default: "128MB",
        init_only: false,
        doc: "size of the shared buffer pool",
    },
    Def {
        name: "work_mem",
        kind: Kind::Memory { unit_bytes: 1024 },
        default: "4MB",
        init_only: false,
        doc: "memory a sort or hash may use before it writes to temporary files (also SET per session)",
    },
    Def {
        name: "enable_seqscan",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "let the planner choose sequential scans (off: only where nothing else can run the query; also SET per session)",
    },
    Def {
        name: "enable_indexscan",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "let the planner choose index scans (off: only where nothing else can run the query; also SET per session)",
    },
    Def {
        name: "enable_indexonlyscan",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "let the planner choose index-only scans (off: a plain index scan reads the heap for every entry; also SET per session)",
    },
    Def {
        name: "enable_hashjoin",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "let the planner choose hash joins (off: only where nothing else can run the query; also SET per session)",
    },
    Def {
        name: "enable_mergejoin",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "let the planner choose merge joins (off: only where nothing else can run the query; also SET per session)",
    },
    Def {
        name: "enable_nestloop",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "let the planner choose nested-loop joins (off: only where nothing else can run the query; also SET per session)",
    },
    Def {
        name: "seq_page_cost",
        kind: Kind::Real,
        default: "1",
        init_only: false,
        doc: "the planner's cost of a page read in sequence (also SET per session)",
    },
    Def {
        name: "random_page_cost",
        kind: Kind::Real,
        default: "4",
        init_only: false,
        doc: "the planner's cost of a page read out of sequence (also SET per session)",
    },
    Def {
        name: "cpu_tuple_cost",
        kind: Kind::Real,
        default: "0.01",
        init_only: false,
        doc: "the planner's cost of processing a row (also SET per session)",
    },
    Def {
        name: "cpu_index_tuple_cost",
        kind: Kind::Real,
        default: "0.005",
        init_only: false,
        doc: "the planner's cost of processing an index entry (also SET per session)",
    },
    Def {
        name: "cpu_operator_cost",
        kind: Kind::Real,
        default: "0.0025",
        init_only: false,
        doc: "the planner's cost of evaluating an operator (also SET per session)",
    },
    Def {
        name: "default_statistics_target",
        kind: Kind::Int,
        default: "100",
        init_only: false,
        doc: "ANALYZE keeps up to this many most common values and histogram buckets per column, from a sample of 300 times as many rows",
    },
    Def {
        name: "temp_file_limit",
        kind: Kind::Int,
        default: "-1",
        init_only: false,
        doc: "kB of temporary file space a session may use, -1 for no limit (also SET per session)",
    },
    Def {
        name: "huge_pages",
        kind: Kind::Enum(&["try", "on", "off"]),
        default: "try",
        init_only: false,
        doc: "back the pool with huge pages (MAP_HUGETLB), else transparent huge pages",
    },
    Def { name: "io_direct", kind: Kind::Bool, default: "off", init_only: false, doc: "open relation files with O_DIRECT" },
    Def {
        name: "max_connections",
        kind: Kind::Int,
        default: "100",
        init_only: false,
        doc: "sessions; each may pin shared_buffers / max_connections buffers",
    },
    Def {
        name: "listen_addresses",
        kind: Kind::Str,
        default: "localhost",
        init_only: false,
        doc: "serve: TCP addresses to listen on (comma-separated; '' = none, '*' = all; beyond loopback needs heapstore.hba lines)",
    },
    Def {
        name: "max_parallel_workers",
        kind: Kind::Int,
        default: "8",
        init_only: false,
        doc: "worker threads that parallel operations (COPY ... WITH (PARALLEL n)) may run at once, 0..1024; an operation gets fewer, or none, when they are taken",
    },
    Def {
        name: "port",
        kind: Kind::Int,
        default: "5433",
        init_only: false,
        doc: "serve: TCP port, and the number in the Unix socket's name",
    },
    Def {
        name: "unix_socket_directories",
        kind: Kind::Str,
        default: "",
        init_only: false,
        doc: "serve: directory of the Unix socket (empty = the data directory)",
    },
    Def { name: "ssl", kind: Kind::Bool, default: "off", init_only: false, doc: "serve: accept TLS connections (SSLRequest answered 'S')" },
    Def {
        name: "ssl_cert_file",
        kind: Kind::Str,
        default: "server.crt",
        init_only: false,
        doc: "serve: PEM certificate chain for TLS (relative to the data directory)",
    },
    Def {
        name: "ssl_key_file",
        kind: Kind::Str,
        default: "server.key",
        init_only: false,
        doc: "serve: PEM private key for TLS (relative to the data directory)",
    },
    Def {
        name: "password_encryption",
        kind: Kind::Enum(&["scram-sha-256"]),
        default: "scram-sha-256",
        init_only: false,
        doc: "how `user add` stores passwords",
    },
    Def {
        name: "heapstore.hba",
        kind: Kind::Str,
        default: "local all all trust; host all all 127.0.0.1/32 scram-sha-256; host all all ::1/128 scram-sha-256",
        init_only: false,
        doc: "serve: client authentication, pg_hba.conf lines separated by ';' (local DB USER METHOD | host|hostssl|hostnossl DB USER ADDR/BITS METHOD)",
    },
    Def {
        name: "heapstore.buffer_partitions",
        kind: Kind::Int,
        default: "128",
        init_only: false,
        doc: "partitions of the buffer mapping table (a power of two)",
    },
    Def {
        name: "heapstore.max_row_locks",
        kind: Kind::Int,
        default: "1000000",
        init_only: false,
        doc: "row locks (SELECT ... FOR UPDATE) all transactions may hold at once, in memory (about 200 bytes each); past it a locking query fails with 53200",
    },
    Def {
        name: "heapstore.clock_sweep_max_examined",
        kind: Kind::Int,
        default: "1024",
        init_only: false,
        doc: "bound on buffers examined per victim search; past it the least-used unpinned buffer seen is taken",
    },
    Def { name: "bgwriter_delay", kind: Kind::Time { unit_ms: 1 }, default: "200ms", init_only: false, doc: "sleep between background writer rounds" },
    Def {
        name: "bgwriter_lru_maxpages",
        kind: Kind::Int,
        default: "100",
        init_only: false,
        doc: "most buffers the background writer writes per round (0 turns it off)",
    },
    Def {
        name: "bgwriter_lru_multiplier",
        kind: Kind::Real,
        default: "2.0",
        init_only: false,
        doc: "clean this multiple of the recent allocation rate ahead of the clock hand",
    },
    Def {
        name: "lock_timeout",
        kind: Kind::Time { unit_ms: 1 },
        default: "0",
        init_only: false,
        doc: "give up waiting for a heavyweight lock after this long (0: wait forever)",
    },
    Def {
        name: "max_locks_per_transaction",
        kind: Kind::Int,
        default: "64",
        init_only: false,
        doc: "sizes each session's fast-path lock slots (weak relation locks kept out of the shared table)",
    },
    Def {
        name: "heapstore.lock_release_walks_whole_table",
        kind: Kind::Bool,
        default: "off",
        init_only: false,
        doc: "release locks at commit by walking every local lock slot ever used (the old design, for bench lockbloat)",
    },
    Def {
        name: "wal_level",
        kind: Kind::Enum(&["minimal", "replica"]),
        default: "replica",
        init_only: false,
        doc: "minimal: a table created or truncated in the same transaction as its COPY skips the WAL and is synced at commit",
    },
    Def { name: "wal_buffers", kind: Kind::Memory { unit_bytes: 8192 }, default: "16MB", init_only: false, doc: "shared WAL buffer ring" },
    Def {
        name: "wal_segment_size",
        kind: Kind::Memory { unit_bytes: 1 },
        default: "16MB",
        init_only: true,
        doc: "WAL segment file size (a power of two, 1MB..1GB); fixed at init",
    },
    Def {
        name: "wal_insert_locks",
        kind: Kind::Int,
        default: "8",
        init_only: false,
        doc: "WAL insertion locks: records are copied into WAL buffers in parallel under this many",
    },
    Def {
        name: "wal_sync_method",
        kind: Kind::Enum(&["fdatasync", "fsync", "open_datasync"]),
        default: "fdatasync",
        init_only: false,
        doc: "how WAL is made durable",
    },
    Def {
        name: "wal_writer_delay",
        kind: Kind::Time { unit_ms: 1 },
        default: "200ms",
        init_only: false,
        doc: "how often the WAL writer writes and flushes (for synchronous_commit = off)",
    },
    Def {
        name: "wal_compression",
        kind: Kind::Enum(&["off", "lz4", "zstd"]),
        default: "off",
        init_only: false,
        doc: "compress full-page images and bulk-load page data in WAL records (pglz is not offered)",
    },
    Def {
        name: "wal_writer_flush_after",
        kind: Kind::Memory { unit_bytes: 8192 },
        default: "1MB",
        init_only: false,
        doc: "a WAL writer round woken by write-behind also syncs once this much written WAL is unsynced",
    },
    Def {
        name: "heapstore.async_write_back",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "write WAL and bulk-loaded pages off the loading session (WAL writer write-behind, write-back worker)",
    },
    Def {
        name: "full_page_writes",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "log a page's full image at its first change after a checkpoint (protects against torn pages)",
    },
    Def {
        name: "max_wal_size",
        kind: Kind::Memory { unit_bytes: 1048576 },
        default: "1GB",
        init_only: false,
        doc: "WAL written since the last checkpoint that triggers a checkpoint",
    },
    Def {
        name: "checkpoint_timeout",
        kind: Kind::Time { unit_ms: 1000 },
        default: "5min",
        init_only: false,
        doc: "longest time between checkpoints",
    },
    Def { name: "autovacuum", kind: Kind::Bool, default: "on", init_only: false, doc: "run the autovacuum launcher and its worker" },
    Def {
        name: "autovacuum_naptime",
        kind: Kind::Time { unit_ms: 1000 },
        default: "1min",
        init_only: false,
        doc: "time between autovacuum rounds over the tables",
    },
    Def {
        name: "autovacuum_vacuum_threshold",
        kind: Kind::Int,
        default: "50",
        init_only: false,
        doc: "dead versions a table needs before it is vacuumed (plus the scale factor's share)",
    },
    Def {
        name: "autovacuum_vacuum_scale_factor",
        kind: Kind::Real,
        default: "0.2",
        init_only: false,
        doc: "fraction of a table's live rows added to autovacuum_vacuum_threshold",
    },
    Def {
        name: "autovacuum_analyze_threshold",
        kind: Kind::Int,
        default: "50",
        init_only: false,
        doc: "rows inserted, updated or deleted since the last ANALYZE before autovacuum analyzes a table (plus the scale factor's share)",
    },
    Def {
        name: "autovacuum_analyze_scale_factor",
        kind: Kind::Real,
        default: "0.1",
        init_only: false,
        doc: "fraction of a table's rows added to autovacuum_analyze_threshold",
    },
    Def {
        name: "checkpoint_completion_target",
        kind: Kind::Real,
        default: "0.9",
        init_only: false,
        doc: "spread a timed checkpoint's writes over this fraction of checkpoint_timeout",
    },
    Def {
        name: "log_checkpoints",
        kind: Kind::Bool,
        default: "off",
        init_only: false,
        doc: "log each checkpoint's start and completion as PostgreSQL does",
    },
    Def {
        name: "heapstore.wal_single_lock_insert",
        kind: Kind::Bool,
        default: "off",
        init_only: false,
        doc: "one global lock for the whole WAL insert (the design before seed 001's fix, for bench wal)",
    },
    Def {
        name: "heapstore.use_fsm",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "bulk inserts look for pages with room in the free space map (off: always extend, seed 000's no_fsm)",
    },
    Def {
        name: "heapstore.pre_extend",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "a background thread extends relations being bulk-loaded ahead of their fill rate and puts the pages in the free space map (needs heapstore.use_fsm)",
    },
    Def {
        name: "heapstore.copy_chunk_size",
        kind: Kind::Memory { unit_bytes: 1 },
        default: "512kB",
        init_only: false,
        doc: "COPY FROM takes its input in chunks of this many bytes of whole records (a parallel COPY hands them to its workers; a batch never spans two), 1kB..64MB",
    },
    Def {
        name: "heapstore.toast_threshold",
        kind: Kind::Memory { unit_bytes: 1 },
        default: "0",
        init_only: false,
        doc: "values larger than this are stored out of line (0: block_size / 4)",
    },
    Def {
        name: "io_combine_limit",
        kind: Kind::Memory { unit_bytes: 8192 },
        default: "128kB",
        init_only: false,
        doc: "largest read issued at once",
    },
    Def { name: "effective_io_concurrency", kind: Kind::Int, default: "16", init_only: false, doc: "reads a stream keeps in flight" },
    Def {
        name: "TimeZone",
        kind: Kind::Str,
        default: "UTC",
        init_only: false,
        doc: "the time zone sessions start in (read as SET TIME ZONE reads it; a client's startup packet, options or SET change its own session's)",
    },
    Def {
        name: "io_method",
        kind: Kind::Enum(&["sync", "worker", "io_uring"]),
        default: "worker",
        init_only: false,
        doc: "how reads are executed: inline, by I/O worker threads, or by io_uring",
    },
    Def { name: "io_workers", kind: Kind::Int, default: "3", init_only: false, doc: "I/O worker threads (io_method = worker)" },
    Def {
        name: "synchronize_seqscans",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "a scan of a large table starts where a running scan of it is",
    },
    Def {
        name: "heapstore.bulkread_ring_size",
        kind: Kind::Memory { unit_bytes: 1024 },
        default: "0",
        init_only: false,
        doc: "BULKREAD ring size (0: 256kB + io_combine_limit * effective_io_concurrency)",
    },
    Def { name: "log_lock_waits", kind: Kind::Bool, default: "off", init_only: false, doc: "log lock waits longer than deadlock_timeout" },
    Def {
        name: "deadlock_timeout",
        kind: Kind::Time { unit_ms: 1 },
        default: "1s",
        init_only: false,
        doc: "wait this long before checking for deadlock / logging a wait",
    },
    Def {
        name: "synchronous_commit",
        kind: Kind::Enum(&["on", "off", "local", "remote_write", "remote_apply"]),
        default: "on",
        init_only: false,
        doc: "wait for durability at commit",
    },
    Def {
        name: "fsync",
        kind: Kind::Bool,
        default: "on",
        init_only: false,
        doc: "issue fsync at checkpoints and shutdown (off is unsafe)",
    },
];

/// Resolved settings for one open data directory.
#[derive(Clone, Debug)]
pub struct Settings {
    values: BTreeMap<&'static str, String>,
    /// Where each value set at start came from (`pg_settings.source`): "configuration file"
    /// or "command line"; absent: the built-in default.
    sources: BTreeMap<&'static str, &'static str>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { values: DEFS.iter().map(|d| (d.name, d.default.to_string())).collect(), sources: BTreeMap::new() }
    }
}

fn def(name: &str) -> Result<&'static Def> {
    let lname = name.to_ascii_lowercase();
    DEFS.iter()
        .find(|d| d.name.eq_ignore_ascii_case(&lname))
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("unrecognized configuration parameter \"{name}\"")))
}

/// How `pg_settings` shows a setting: the value in its base unit, the unit, vartype, and an
/// enum's allowed values.
pub type Described = (String, Option<&'static str>, &'static str, Option<&'static [&'static str]>);

impl Settings {
    /// Sets `name` to `value` after validating it.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let d = def(name)?;
        validate(d, value)?;
        // A time zone is kept in PostgreSQL's spelling (`europe/paris` is `Europe/Paris`).
        let value = if d.name == "TimeZone" { crate::types::tz::setting(value.trim())?.0 } else { value.trim().to_string() };
        self.values.insert(d.name, value);
        Ok(())
    }

    /// Applies a `name=value` string as given to `--set` (or to `Database::open`): its source
    /// is "command line", as for PostgreSQL's `postgres -c`.
    pub fn set_pair(&mut self, pair: &str) -> Result<()> {
        let (n, v) = pair
            .split_once('=')
            .ok_or_else(|| PgError::new(sqlstate::SYNTAX_ERROR, format!("invalid setting \"{pair}\": expected name=value")))?;
        self.set_from(n.trim(), v.trim(), "command line")
    }

    /// [`Settings::set`], noting where the value came from (`pg_settings.source`).
    pub fn set_from(&mut self, name: &str, value: &str, source: &'static str) -> Result<()> {
        self.set(name, value)?;
        self.sources.insert(def(name)?.name, source);
        Ok(())
    }

    /// Where the value came from: "default", "configuration file" or "command line".
    pub fn source(&self, name: &str) -> &'static str {
        def(name).ok().and_then(|d| self.sources.get(d.name).copied()).unwrap_or("default")
    }

    /// The `TimeZone` sessions start in, in PostgreSQL's spelling (`europe/paris` is
    /// `Europe/Paris`, `+5` is `<+05>-05`).
    pub fn time_zone(&self) -> String {
        let v = self.get("TimeZone").unwrap_or("UTC");
        crate::types::tz::setting(v).map(|(shown, _)| shown).unwrap_or_else(|_| v.to_string())
    }

    /// The built-in default (`pg_settings.boot_val`, as written).
    pub fn boot_value(name: &str) -> Option<&'static str> {
        def(name).ok().map(|d| d.default)
    }

    /// The value as written, e.g. `"128MB"`.
    pub fn get(&self, name: &str) -> Result<&str> {
        let d = def(name)?;
        Ok(self.values.get(d.name).map(|s| s.as_str()).unwrap_or(d.default))
    }

    pub fn is_init_only(name: &str) -> bool {
        def(name).map(|d| d.init_only).unwrap_or(false)
    }

    /// A memory setting in bytes.
    pub fn bytes(&self, name: &str) -> u64 {
        let d = def(name).expect("known setting");
        let Kind::Memory { unit_bytes } = d.kind else { panic!("{name} is not a memory setting") };
        parse_memory(self.get(name).expect("known"), unit_bytes).expect("validated")
    }

    pub fn ms(&self, name: &str) -> u64 {
        let d = def(name).expect("known setting");
        let Kind::Time { unit_ms } = d.kind else { panic!("{name} is not a time setting") };
        parse_time_in(self.get(name).expect("known"), unit_ms).expect("validated")
    }

    pub fn int(&self, name: &str) -> i64 {
        self.get(name).expect("known").parse().expect("validated")
    }

    pub fn real(&self, name: &str) -> f64 {
        self.get(name).expect("known").parse().expect("validated")
    }

    pub fn bool(&self, name: &str) -> bool {
        parse_bool(self.get(name).expect("known")).expect("validated")
    }

    /// Settings whose value differs from the default, as `(name, value)`.
    pub fn non_default(&self) -> Vec<(String, String)> {
        DEFS.iter()
            .filter_map(|d| {
                let v = self.values.get(d.name)?;
                (v != d.default).then(|| (d.name.to_string(), v.clone()))
            })
            .collect()
    }

    /// How `pg_settings` shows a setting: (setting in the setting's base unit, that unit,
    /// vartype, the allowed values of an enum), as PostgreSQL's view does (`work_mem` is
    /// `4096` in `kB`, `shared_buffers` `16384` in `8kB`, a boolean `on` / `off`).
    pub fn describe(&self, name: &str, value: &str) -> Option<Described> {
        let d = DEFS.iter().find(|d| d.name == name)?;
        Some(match d.kind {
            Kind::Memory { unit_bytes } => {
                let unit = match unit_bytes {
                    1 => "B",
                    1024 => "kB",
                    8192 => "8kB",
                    1_048_576 => "MB",
                    _ => "B",
                };
                let base = match unit {
                    "kB" => 1024,
                    "8kB" => 8192,
                    "MB" => 1_048_576,
                    _ => 1,
                };
                let setting = parse_memory(value, unit_bytes).map_or_else(|| value.to_string(), |b| (b / base).to_string());
                (setting, Some(unit), "integer", None)
            }
            Kind::Time { unit_ms } => {
                let unit = match unit_ms {
                    1000 => "s",
                    60_000 => "min",
                    _ => "ms",
                };
                let base = match unit {
                    "s" => 1000,
                    "min" => 60_000,
                    _ => 1,
                };
                let setting = parse_time_in(value, unit_ms).map_or_else(|| value.to_string(), |ms| (ms / base).to_string());
                (setting, Some(unit), "integer", None)
            }
            Kind::Int => (value.to_string(), None, "integer", None),
            Kind::Real => (value.to_string(), None, "real", None),
            Kind::Bool => (if parse_bool(value) == Some(true) { "on" } else { "off" }.to_string(), None, "bool", None),
            Kind::Enum(vals) => (value.to_string(), None, "enum", Some(vals)),
            Kind::Str => (value.to_string(), None, "string", None),
        })
    }

    /// All settings with their documentation (for `SHOW ALL`-like listings).
    pub fn all(&self) -> Vec<(&'static str, String, &'static str)> {
        DEFS.iter().map(|d| (d.name, self.get(d.name).unwrap_or(d.default).to_string(), d.doc)).collect()
    }

    /// Reads `heapstore.conf` lines of the form `name = value` (`#` starts a comment).
    pub fn load_file(&mut self, vfs: &dyn crate::storage::Vfs, path: &Path) -> Result<()> {
        let Some(bytes) = crate::storage::fsutil::read_if_exists(vfs, path)? else { return Ok(()) };
        let text = String::from_utf8(bytes).map_err(|_| {
            PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, format!("configuration file \"{}\" is not valid UTF-8", path.display()))
        })?;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (n, v) = line.split_once('=').ok_or_else(|| {
                PgError::new(sqlstate::SYNTAX_ERROR, format!("syntax error in file \"{}\" line {}", path.display(), i + 1))
            })?;
            let v = v.trim().trim_matches('\'');
            self.set_from(n.trim(), v, "configuration file")
                .map_err(|e| e.with_context(format!("line {} of configuration file \"{}\"", i + 1, path.display())))?;
        }
        Ok(())
    }

    /// Writes the non-default settings to `path`.
    pub fn save_file(&self, vfs: &dyn crate::storage::Vfs, path: &Path) -> Result<()> {
        let mut s = String::from("# heapstore configuration (PostgreSQL setting names)\n");
        for (n, v) in self.non_default() {
            let _ = writeln!(s, "{n} = '{v}'");
        }
        crate::storage::fsutil::write_file_durably(vfs, path, s.as_bytes())
    }

    /// The pool size in buffers.
    pub fn shared_buffers_blocks(&self, block_size: usize) -> usize {
        (self.bytes("shared_buffers") / block_size as u64).max(16) as usize
    }
}

fn invalid(name: &str, value: &str, why: &str) -> PgError {
    let mut e = PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"{name}\": \"{value}\""));
    if !why.is_empty() {
        e = e.with_hint(why.to_string());
    }
    e
}

fn validate(d: &Def, value: &str) -> Result<()> {
    let v = value.trim();
    let ok = match d.kind {
        Kind::Memory { unit_bytes } => parse_memory(v, unit_bytes).is_some(),
        Kind::Time { unit_ms } => parse_time_in(v, unit_ms).is_some(),
        Kind::Int => v.parse::<i64>().is_ok(),
        Kind::Real => v.parse::<f64>().is_ok_and(|x| x.is_finite()),
        Kind::Bool => parse_bool(v).is_some(),
        Kind::Enum(vals) => vals.iter().any(|x| x.eq_ignore_ascii_case(v)),
        Kind::Str => true,
    };
    if !ok {
        let hint = match d.kind {
            Kind::Memory { .. } => "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".".to_string(),
            Kind::Time { .. } => "Valid units for this parameter are \"ms\", \"s\", \"min\", \"h\", and \"d\".".to_string(),
            Kind::Enum(vals) => format!("Available values: {}.", vals.join(", ")),
            _ => String::new(),
        };
        return Err(invalid(d.name, value, &hint));
    }
    if d.name == "block_size" {
        let n: i64 = v.parse().unwrap_or(0);
        if !(4096..=32768).contains(&n) || (n & (n - 1)) != 0 {
            return Err(invalid(d.name, value, "block_size must be a power of two between 4096 and 32768."));
        }
    }
    if d.name == "heapstore.buffer_partitions" {
        let n: i64 = v.parse().unwrap_or(0);
        if !(1..=1024).contains(&n) || (n & (n - 1)) != 0 {
            return Err(invalid(d.name, value, "must be a power of two between 1 and 1024."));
        }
    }
    if d.name == "heapstore.copy_chunk_size" && !(1024..=64 << 20).contains(&parse_memory(v, 1).unwrap_or(0)) {
        return Err(invalid(d.name, value, "must be between 1kB and 64MB."));
    }
    if d.name == "max_parallel_workers" && !(0..=1024).contains(&v.parse::<i64>().unwrap_or(-1)) {
        return Err(invalid(d.name, value, "must be between 0 and 1024."));
    }
    if d.name == "TimeZone" {
        // Read as SET TIME ZONE reads it, with its errors (22023 naming the value, 0A000).
        crate::types::tz::setting(v)?;
    }
    if d.name == "max_connections" && v.parse::<i64>().unwrap_or(0) < 1 {
        return Err(invalid(d.name, value, "must be at least 1."));
    }
    Ok(())
}

/// Parses a PostgreSQL memory value; a bare number is in `unit_bytes` units.
pub fn parse_memory(v: &str, unit_bytes: u64) -> Option<u64> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" => unit_bytes,
        "B" => 1,
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A time in milliseconds; a bare number is milliseconds.
pub fn parse_time_ms(v: &str) -> Option<u64> {
    parse_time_in(v, 1)
}

/// A time in milliseconds; a bare number is in units of `unit_ms` milliseconds.
pub fn parse_time_in(v: &str, unit_ms: u64) -> Option<u64> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" => unit_ms,
        "ms" => 1,
        "s" => 1000,
        "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// The time units of a setting kept in milliseconds, with their size in milliseconds.
pub const MS_UNITS: &[(&str, f64)] = &[("us", 0.001), ("ms", 1.0), ("s", 1e3), ("min", 6e4), ("h", 3.6e6), ("d", 8.64e7)];

/// An integer setting's value as PostgreSQL's `parse_int` reads it (for `SET`): an integer
/// in C's `strtol` base-0 syntax (so `0x10` is 16 and `010` is 8), or, when that stops at
/// `.`, `e` or `E` or overflows, a floating-point number as `strtod` reads it; then blanks,
/// and an optional unit from `units` (case-sensitive, its size in the setting's base unit),
/// then blanks. The result is rounded half to even, as `rint`. The error's hint, when
/// PostgreSQL gives one, names the valid units or the integer range.
pub fn parse_int_setting(value: &str, units: &[(&str, f64)]) -> std::result::Result<i64, Option<String>> {
    let b = value.as_bytes();
    let (int, int_end, overflow) = c_strtol(b);
    let (mut val, end) = if overflow || matches!(b.get(int_end), Some(b'.' | b'e' | b'E')) {
        match c_strtod(b) {
            Some((v, e)) if e > 0 => (v, e),
            _ => return Err(None),
        }
    } else if int_end == 0 {
        return Err(None);
    } else {
        (int as f64, int_end)
    };
    let rest = value[end..].trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
    if !rest.is_empty() {
        let unit = rest.trim_end_matches(|c: char| c.is_ascii() && is_space(c as u8));
        let Some(at) = units.iter().position(|(u, _)| *u == unit) else {
            if units.is_empty() {
                return Err(None);
            }
            let names: Vec<String> = units.iter().map(|(u, _)| format!("\"{u}\"")).collect();
            let (last, init) = names.split_last().expect("units");
            return Err(Some(format!("Valid units for this parameter are {}, and {last}.", init.join(", "))));
        };
        let size = units[at].1;
        val = if size < 1.0 { val / (1.0 / size).round() } else { val * size };
        // As PostgreSQL's convert_to_base_unit: a fraction of a unit is rounded to the
        // nearest multiple of the next smaller unit (`1.0001min` is 1min, not 60006ms).
        if let Some(&(_, smaller)) = at.checked_sub(1).and_then(|i| units.get(i)) {
            val = (val / smaller).round_ties_even() * smaller;
        }
    }
    let val = val.round_ties_even();
    if !(i32::MIN as f64..=i32::MAX as f64).contains(&val) {
        return Err(Some("Value exceeds integer range.".into()));
    }
    Ok(val as i64)
}

/// C's `strtol(s, &end, 0)`: the value, where it ended (0 when no digits were read), and
/// whether it overflowed a 64-bit long.
fn c_strtol(b: &[u8]) -> (i64, usize, bool) {
    let mut i = b.iter().take_while(|c| is_space(**c)).count();
    let neg = take_sign(b, &mut i);
    let (radix, start) =
        if b.get(i) == Some(&b'0') && matches!(b.get(i + 1), Some(b'x' | b'X')) && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit()) {
            (16, i + 2)
        } else if b.get(i) == Some(&b'0') {
            (8, i)
        } else {
            (10, i)
        };
    let digits = b[start..].iter().take_while(|c| (**c as char).is_digit(radix)).count();
    if digits == 0 {
        return (0, 0, false);
    }
    let mut v: i128 = 0;
    let mut overflow = false;
    for c in &b[start..start + digits] {
        v = v * radix as i128 + (*c as char).to_digit(radix).expect("digit") as i128;
        if v > i64::MAX as i128 + 1 {
            overflow = true;
            v = i64::MAX as i128 + 1;
        }
    }
    let v = if neg { -v } else { v };
    if v > i64::MAX as i128 {
        overflow = true;
    }
    (v.clamp(i64::MIN as i128, i64::MAX as i128) as i64, start + digits, overflow)
}

/// C's `strtod` for decimal and hexadecimal numbers: the value and where it ended, or None
/// when it is out of range (ERANGE).
fn c_strtod(b: &[u8]) -> Option<(f64, usize)> {
    let mut i = b.iter().take_while(|c| is_space(**c)).count();
    let neg = take_sign(b, &mut i);
    let hex = b.get(i) == Some(&b'0') && matches!(b.get(i + 1), Some(b'x' | b'X'));
    let (radix, exp_marks, start) = if hex { (16, [b'p', b'P'], i + 2) } else { (10, [b'e', b'E'], i) };
    let is_digit = |c: &u8| (*c as char).is_digit(radix);
    let int_digits = b[start..].iter().take_while(|c| is_digit(c)).count();
    let mut j = start + int_digits;
    let mut frac_digits = 0;
    if b.get(j) == Some(&b'.') {
        frac_digits = b[j + 1..].iter().take_while(|c| is_digit(c)).count();
        if int_digits + frac_digits > 0 {
            j += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return Some((0.0, 0));
    }
    let mantissa_end = j;
    let mut exp: i64 = 0;
    if b.get(j).is_some_and(|c| exp_marks.contains(c)) {
        let mut k = j + 1;
        let eneg = matches!(b.get(k), Some(b'-'));
        if matches!(b.get(k), Some(b'-' | b'+')) {
            k += 1;
        }
        let ed = b[k..].iter().take_while(|c| c.is_ascii_digit()).count();
        if ed > 0 {
            let e: i64 = std::str::from_utf8(&b[k..k + ed]).ok()?.parse().unwrap_or(i64::MAX / 2);
            exp = if eneg { -e } else { e };
            j = k + ed;
        }
    }
    let v = if hex {
        let mut m = 0f64;
        let mut scale = 0i64;
        for c in &b[start..mantissa_end] {
            if *c == b'.' {
                continue;
            }
            m = m * 16.0 + (*c as char).to_digit(16).expect("digit") as f64;
        }
        scale -= 4 * frac_digits as i64;
        m * 2f64.powi((exp + scale).clamp(-2000, 2000) as i32)
    } else {
        let text = std::str::from_utf8(&b[start..j]).ok()?;
        text.parse::<f64>().ok()?
    };
    let nonzero = b[start..mantissa_end].iter().any(|c| is_digit(c) && *c != b'0');
    // glibc's strtod sets ERANGE for an overflow and for an underflow (subnormals included).
    if v.is_infinite() || (v == 0.0 && nonzero) || (v != 0.0 && v.abs() < f64::MIN_POSITIVE) {
        return None;
    }
    Some((if neg { -v } else { v }, j))
}

pub fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" | "t" | "y" => Some(true),
        "off" | "false" | "no" | "0" | "f" | "n" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_settings_parse_as_postgres_does() {
        let ms = |v: &str| parse_int_setting(v, MS_UNITS);
        // Each pair was checked against PostgreSQL 15's `SET statement_timeout`.
        for (v, want) in [
            ("1.5s", 1500),
            ("1.5", 2),
            ("2.5", 2),
            ("100us", 0),
            ("1500us", 2),
            ("1 s", 1000),
            ("1e3", 1000),
            ("0x10", 16),
            ("010", 8),
            ("0.0001s", 0),
            ("1.4999", 1),
            (" 7 min ", 420_000),
            ("-0.4", 0),
            ("1.5d", 129_600_000),
            ("2147483647.4", 2_147_483_647),
            ("-1", -1),
            ("-1.5s", -1500),
            ("1.5e-1s", 150),
            (".5s", 500),
            ("5.s", 5000),
            ("0x1.8", 2),
            ("+5s", 5000),
            ("1.25min", 75_000),
            // A fraction of a unit rounds to the next smaller unit first.
            ("1.0001min", 60_000),
            ("0.0015min", 0),
            ("1.001h", 3_600_000),
            ("1.0004s", 1000),
            ("1.0006s", 1001),
            ("0.0005ms", 0),
        ] {
            assert_eq!(ms(v), Ok(want), "{v}");
        }
        for v in ["abc", "", "1e400", "nan", "inf", "-.5", "1e-310"] {
            assert_eq!(ms(v), Err(None), "{v}");
        }
        let units = Some("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".".to_string());
        for v in ["1.5x", "1 ks", "1S", "08"] {
            assert_eq!(ms(v), Err(units.clone()), "{v}");
        }
        let range = Some("Value exceeds integer range.".to_string());
        for v in ["3000000000", "3000000s", "3000000000.0", "-3000000000", "99999999999999999999s"] {
            assert_eq!(ms(v), Err(range.clone()), "{v}");
        }
    }

    #[test]
    fn memory_units() {
        let mut s = Settings::default();
        assert_eq!(s.bytes("shared_buffers"), 128 << 20);
        s.set("shared_buffers", "1GB").unwrap();
        assert_eq!(s.bytes("shared_buffers"), 1 << 30);
        s.set("shared_buffers", "16").unwrap();
        assert_eq!(s.bytes("shared_buffers"), 16 * 8192);
        assert!(s.set("shared_buffers", "12XB").is_err());
    }

    #[test]
    fn unknown_setting_is_refused() {
        let mut s = Settings::default();
        let e = s.set("no_such", "1").unwrap_err();
        assert_eq!(e.message, "unrecognized configuration parameter \"no_such\"");
    }

    #[test]
    fn block_size_is_checked() {
        let mut s = Settings::default();
        assert!(s.set("block_size", "4096").is_ok());
        assert!(s.set("block_size", "5000").is_err());
        assert!(s.set("block_size", "65536").is_err());
    }
}

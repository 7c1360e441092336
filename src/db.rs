//! A data directory opened by one process: shared state, start-up, shutdown.
//!
//! ```text
//!  DIR/
//!    heapstore.conf     settings given at init (PostgreSQL names)
//!    heapstore.pid      lock file: flock'd by the owning process, holds its pid
//!    global/pg_control  block size, state (shut down / in production), next xid
//!    global/catalog.json
//!    base/<relfile>[.N|_fsm]   relation files
//!    pg_xact/clog       commit log (saved at checkpoints; rebuilt past them from the WAL)
//!    pg_wal/            WAL segment files
//!    pg_stat/stats.json cumulative statistics
//! ```
//!
//! Start-up: read the control file, take the lock file, reset UNLOGGED tables if the last run
//! crashed, replay the WAL from the last checkpoint's REDO pointer (`recovery`), open the WAL
//! for writing at the end of valid WAL, remove orphan relation files, run an end-of-recovery
//! checkpoint if anything was replayed, and start the WAL writer, background writer and
//! checkpointer. Shutdown: stop those, run a shutdown checkpoint (everything written and
//! synced, control file "shut down"), save statistics.
//!
//! Every file of the directory is reached through the file-system seam
//! ([`crate::storage::vfs`]): [`Environment`] names the file system (the real one, or the crash
//! torture's simulated disk) and whether the background threads run.
//!
//! Invariants:
//! 1. One process owns a data directory: it holds an exclusive `flock` on `heapstore.pid` for
//!    its whole life (released by the kernel when it dies). A second opener gets an error
//!    naming the owner's pid.
//! 2. The data directory is created 0700, its files 0600.
//! 3. `block_size` comes from the control file; it cannot be changed after init.

use crate::buffer::bgwriter::{BgWriter, BgWriterSettings, BgWriterStats};
use crate::buffer::BufferPool;
use crate::catalog::Catalog;
use crate::config::{Settings, CONFIG_FILE};
use crate::error::{sqlstate, PgError, Result};
use crate::lock::{LockManager, LockSettings};
use crate::session::Session;
use crate::storage::vfs::{DirLock, LockFailed, Vfs};
use crate::storage::{fsutil, ForkNumber, Smgr};
use crate::txn::TxnManager;
use crate::wal::{Wal, WalReader, WalSettings};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DbState {
    #[serde(rename = "shut down")]
    ShutDown,
    #[serde(rename = "in production")]
    InProduction,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ControlFile {
    pub version: u32,
    pub system_identifier: u64,
    pub block_size: usize,
    pub state: DbState,
    pub next_xid: u64,
    /// Where the last checkpoint record starts (0: none yet).
    #[serde(default)]
    pub checkpoint_lsn: u64,
    /// The last checkpoint's REDO pointer: recovery replays the WAL from here.
    #[serde(default)]
    pub redo_lsn: u64,
    #[serde(default = "default_segment_size")]
    pub wal_segment_size: u64,
}

fn default_segment_size() -> u64 {
    crate::wal::DEFAULT_SEGMENT_SIZE
}

const CONTROL_VERSION: u32 = 1;
/// Xids skipped after a crash, so that none handed out before it (but not yet saved) repeats.
const XID_GAP_AFTER_CRASH: u64 = 1 << 20;

/// Where and how a database runs, beyond its settings.
#[derive(Clone)]
pub struct Environment {
    /// The file system (the real one, or the crash torture's simulated disk).
    pub vfs: Arc<dyn Vfs>,
    /// Start the WAL writer, background writer, checkpointer and I/O worker threads. The crash
    /// torture turns them off and does their work itself at chosen points, so that a seed
    /// replays exactly; `io_method` is then `sync`.
    pub background_workers: bool,
}

impl Default for Environment {
    fn default() -> Self {
        Environment { vfs: crate::storage::vfs::real(), background_workers: true }
    }
}

/// What every session of a database shares.
pub struct Shared {
    pub dir: PathBuf,
    pub vfs: Arc<dyn Vfs>,
    pub settings: Settings,
    pub block_size: usize,
    pub smgr: Arc<Smgr>,
    pub pool: Arc<BufferPool>,
    pub bgwriter_stats: Arc<BgWriterStats>,
    bgwriter: Mutex<Option<BgWriter>>,
    write_back: Mutex<Option<crate::buffer::writeback::WriteBackWorker>>,
    /// Relations being bulk-loaded, and the thread that extends them ahead of demand.
    pub pre_extend: Arc<crate::access::heap::extend::PreExtend>,
    pre_extender: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Per-table activity counters (`pg_stat_user_tables`, autovacuum's input).
    pub table_stats: crate::stats::tables::TableStats,
    /// What ANALYZE gathered, for the planner (`sql::statistics`).
    pub planner_stats: crate::sql::statistics::Store,
    /// The server's planner settings (`sql::cost`; a session's parameters may override them).
    pub planner_costs: crate::sql::cost::Costs,
    pub txns: TxnManager,
    pub wal: Arc<Wal>,
    wal_writer: Mutex<Option<crate::wal::WalWriterHandle>>,
    pub(crate) checkpointer: Mutex<Option<crate::checkpoint::Checkpointer>>,
    autovacuum: Mutex<Option<crate::autovacuum::Autovacuum>>,
    pub checkpoint_stats: crate::checkpoint::CheckpointStats,
    /// Held by a committing DDL transaction from its catalog record to its catalog save, and by
    /// a checkpoint while it takes its REDO pointer: so a DDL commit before the REDO pointer is
    /// always in the saved catalog.
    pub(crate) ddl_lock: Mutex<()>,
    /// The names of every session's committed temporary relations and their indexes, with
    /// the ids of the sessions holding each (`Session`'s invariant 11). Changed only by a
    /// committing transaction holding `ddl_lock`, and by a session's end.
    pub(crate) temp_names: Mutex<std::collections::HashMap<String, Vec<u64>>>,
    /// Held shared by a committing transaction from its COMMIT record to its commit-log
    /// update; a checkpoint takes it exclusively (briefly) after choosing its REDO pointer and
    /// before saving the commit log (session invariant 5, PostgreSQL's DELAY_CHKPT_START).
    pub(crate) delay_checkpoint: std::sync::RwLock<()>,
    pub(crate) checkpoint_slot: Arc<crate::checkpoint::CheckpointSlot>,
    /// The REDO pointer of the last checkpoint (for max_wal_size).
    pub(crate) last_redo: AtomicU64,
    pub catalog: Catalog,
    pub locks: LockManager,
    control: Mutex<ControlFile>,
    next_session: AtomicU64,
    /// Set by the first shutdown (or a simulated crash); a spread checkpoint then hurries.
    pub(crate) closed: AtomicBool,
    /// Checkpoints waiting for the running one to end (it then hurries, as PostgreSQL's
    /// CHECKPOINT does during a spread one).
    pub(crate) checkpoint_waiters: std::sync::atomic::AtomicUsize,
    /// Parallel worker threads running now, across sessions (bounded by max_parallel_workers).
    pub(crate) parallel_workers: std::sync::atomic::AtomicUsize,
    /// Parallel worker threads started since the database opened (PostgreSQL 18's
    /// `pg_stat_database.parallel_workers_launched`).
    pub parallel_workers_launched: AtomicU64,
    /// Threads may be started ([`Environment::background_workers`]); when not (the crash
    /// torture), a parallel COPY runs its workers' steps in turn on the session's thread.
    pub(crate) threads: bool,
    saved_stats: crate::stats::Snapshot,
    _lock_file: Box<dyn DirLock>,
    /// What start-up had to say (e.g. that a crash reset the tables).
    pub startup_messages: Vec<String>,
}

/// An open data directory.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// heapstore::Database::init(dir.path(), &[]).unwrap();
/// let db = heapstore::Database::open(dir.path(), &[]).unwrap();
/// let mut s = db.session();
/// s.execute("CREATE TABLE t (a integer)").unwrap();
/// db.close().unwrap();
/// ```
pub struct Database {
    shared: Arc<Shared>,
}

fn control_path(dir: &Path) -> PathBuf {
    dir.join("global").join("pg_control")
}

fn read_control(vfs: &dyn Vfs, dir: &Path) -> Result<ControlFile> {
    let p = control_path(dir);
    let b = vfs.read(&p).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            PgError::new(sqlstate::UNDEFINED_FILE, format!("\"{}\" is not a heapstore data directory", dir.display()))
                .with_hint(format!("Create one with: heapstore -D {} init", dir.display()))
        } else {
            PgError::io("read", &p, e)
        }
    })?;
    parse_control(&b).map_err(|e| e.with_context(format!("control file \"{}\"", p.display())))
}

/// Decodes a control file's bytes; anything malformed is a clear 'XX001' error.
pub fn parse_control(b: &[u8]) -> Result<ControlFile> {
    let c: ControlFile =
        serde_json::from_slice(b).map_err(|e| PgError::new(sqlstate::DATA_CORRUPTED, format!("control file is corrupt: {e}")))?;
    if c.version != CONTROL_VERSION {
        return Err(PgError::new(sqlstate::DATA_CORRUPTED, format!("control file version {} is not {CONTROL_VERSION}", c.version)));
    }
    if !c.block_size.is_power_of_two() || !(4096..=32768).contains(&c.block_size) {
        return Err(PgError::new(sqlstate::DATA_CORRUPTED, format!("control file names an invalid block size {}", c.block_size)));
    }
    if !c.wal_segment_size.is_power_of_two() || !(crate::wal::MIN_SEGMENT_SIZE..=crate::wal::MAX_SEGMENT_SIZE).contains(&c.wal_segment_size)
    {
        return Err(PgError::new(
            sqlstate::DATA_CORRUPTED,
            format!("control file names an invalid WAL segment size {}", c.wal_segment_size),
        ));
    }
    if c.redo_lsn > c.checkpoint_lsn || (c.checkpoint_lsn != 0 && c.redo_lsn % 8 != 0) {
        return Err(PgError::new(
            sqlstate::DATA_CORRUPTED,
            format!(
                "control file's REDO pointer {} is past its checkpoint {}",
                crate::wal::lsn_str(c.redo_lsn),
                crate::wal::lsn_str(c.checkpoint_lsn)
            ),
        ));
    }
    Ok(c)
}

fn write_control(vfs: &dyn Vfs, dir: &Path, c: &ControlFile) -> Result<()> {
    fsutil::write_file_durably(vfs, &control_path(dir), &serde_json::to_vec_pretty(c).expect("serializable"))
}

/// The WAL's settings from the data directory's settings.
fn wal_settings(vfs: &Arc<dyn Vfs>, dir: &Path, settings: &Settings, segment_size: u64) -> Result<WalSettings> {
    let mut w = WalSettings::new(dir);
    w.vfs = vfs.clone();
    w.segment_size = segment_size;
    w.buffers_bytes = (settings.bytes("wal_buffers") as usize).max(crate::wal::MIN_WAL_BUFFERS);
    w.insert_locks = (settings.int("wal_insert_locks").max(1) as usize).min(crate::wal::MAX_INSERT_LOCKS);
    w.sync_method = crate::wal::SyncMethod::parse(settings.get("wal_sync_method")?).unwrap_or(crate::wal::SyncMethod::Fdatasync);
    w.single_lock_insert = settings.bool("heapstore.wal_single_lock_insert");
    w.compression = crate::wal::WalCompression::parse(settings.get("wal_compression")?).expect("validated enum");
    w.validate()?;
    Ok(w)
}

/// Replays the WAL from `redo`; returns (end of valid WAL, records, bytes, highest xid seen).
fn replay(
    dir: &Path,
    pool: &BufferPool,
    smgr: &Arc<Smgr>,
    txns: &TxnManager,
    catalog: &Catalog,
    segment_size: u64,
    redo: u64,
) -> Result<(u64, u64, u64, u64)> {
    crate::stats::set_backend_type(crate::stats::BackendType::Startup);
    let pins = pool.new_pins();
    let mut rec = crate::recovery::Recovery::new(pool, &pins, smgr, txns, catalog);
    let mut reader = WalReader::with_vfs(smgr.vfs().clone(), dir, segment_size, redo)?;
    let r = (|| -> Result<()> {
        while let Some((_, bytes)) = reader.next()? {
            let d = crate::wal::decode(bytes)?;
            rec.redo(&d)?;
        }
        Ok(())
    })();
    crate::stats::set_backend_type(crate::stats::BackendType::ClientBackend);
    r.map_err(|e| e.with_context("WAL redo"))?;
    let end = reader.end_lsn();
    let (records, bytes, max_xid) = rec.finish();
    Ok((end, records, bytes, max_xid))
}

/// Takes the data directory's lock file, or says who holds it.
fn lock_datadir(vfs: &dyn Vfs, dir: &Path) -> Result<Box<dyn DirLock>> {
    let p = dir.join("heapstore.pid");
    match vfs.lock_file(&p, &format!("{}\n{}\n", std::process::id(), dir.display())) {
        Ok(l) => Ok(l),
        Err(LockFailed::Held { owner }) => Err(PgError::new(
            sqlstate::OBJECT_IN_USE,
            format!("data directory \"{}\" is in use by another process (pid {owner})", dir.display()),
        )
        .with_hint("Stop that process, or use another data directory.")),
        Err(LockFailed::Io(e)) => Err(PgError::io("open", &p, e)),
    }
}

impl Database {
    /// Creates a new data directory. `settings` are `name=value` pairs stored in its config.
    pub fn init(dir: &Path, settings: &[String]) -> Result<()> {
        Self::init_in(crate::storage::vfs::real(), dir, settings)
    }

    /// As [`Database::init`], on the file system `vfs`.
    pub fn init_in(vfs: Arc<dyn Vfs>, dir: &Path, settings: &[String]) -> Result<()> {
        let vfs_arc = vfs;
        let vfs: &dyn Vfs = &*vfs_arc;
        let mut s = Settings::default();
        for p in settings {
            s.set_pair(p)?;
        }
        if vfs.exists(dir) && vfs.read_dir(dir).map(|d| !d.is_empty()).unwrap_or(false) {
            return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("directory \"{}\" exists but is not empty", dir.display()))
                .with_hint("Remove it, empty it, or give init another directory."));
        }
        vfs.create_dir_all(dir).map_err(|e| PgError::io("create directory", dir, e))?;
        for sub in ["global", "base", "pg_xact", "pg_stat", crate::wal::WAL_DIR] {
            let p = dir.join(sub);
            vfs.create_dir_all(&p).map_err(|e| PgError::io("create directory", &p, e))?;
        }
        let wal_segment_size = s.bytes("wal_segment_size");
        if !wal_segment_size.is_power_of_two() || !(crate::wal::MIN_SEGMENT_SIZE..=crate::wal::MAX_SEGMENT_SIZE).contains(&wal_segment_size)
        {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("invalid value for parameter \"wal_segment_size\": \"{}\"", s.get("wal_segment_size")?),
            )
            .with_hint("It must be a power of two between 1MB and 1GB."));
        }
        s.save_file(vfs, &dir.join(CONFIG_FILE))?;
        let sysid = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
            ^ std::process::id() as u64;
        write_control(
            vfs,
            dir,
            &ControlFile {
                version: CONTROL_VERSION,
                system_identifier: sysid,
                block_size: s.int("block_size") as usize,
                state: DbState::ShutDown,
                next_xid: crate::txn::FIRST_NORMAL_XID,
                checkpoint_lsn: 0,
                redo_lsn: 0,
                wal_segment_size,
            },
        )?;
        Catalog::open(vfs_arc.clone(), dir)?.save()?;
        fsutil::fsync_dir(vfs, dir)
    }

    /// Opens a data directory. `overrides` are `name=value` pairs (`--set`) for this run.
    pub fn open(dir: &Path, overrides: &[String]) -> Result<Database> {
        Self::open_in(Environment::default(), dir, overrides)
    }

    /// As [`Database::open`], in `env` (the crash torture opens databases on its simulated
    /// disk without background threads).
    pub fn open_in(env: Environment, dir: &Path, overrides: &[String]) -> Result<Database> {
        let vfs = env.vfs.clone();
        let mut control = read_control(&*vfs, dir)?;
        let lock = lock_datadir(&*vfs, dir)?;
        // Temporary files of statements that were running when the last owner stopped.
        let tmp = dir.join(crate::exec::spill::TMP_DIR);
        if vfs.exists(&tmp) {
            for name in vfs.read_dir(&tmp).map_err(|e| PgError::io("read directory", &tmp, e))? {
                let _ = vfs.remove_file(&tmp.join(name));
            }
        }
        let mut settings = Settings::default();
        settings.load_file(&*vfs, &dir.join(CONFIG_FILE))?;
        for p in overrides {
            let name = p.split('=').next().unwrap_or("").trim();
            if Settings::is_init_only(name) {
                return Err(PgError::new(
                    sqlstate::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{name}\" cannot be changed after init"),
                ));
            }
            settings.set_pair(p)?;
        }
        settings.set("block_size", &control.block_size.to_string())?;
        let bs = control.block_size;
        if !env.background_workers {
            settings.set("io_method", "sync")?;
        }
        let smgr = Arc::new(Smgr::with_vfs(vfs.clone(), dir, bs, settings.bool("io_direct"), crate::storage::smgr::SEGMENT_BYTES)?);
        let mut pool = BufferPool::new(
            smgr.clone(),
            settings.shared_buffers_blocks(bs),
            settings.int("heapstore.buffer_partitions") as usize,
            settings.int("heapstore.clock_sweep_max_examined") as u64,
            settings.get("huge_pages")?,
            settings.int("max_connections") as usize,
        )?;
        pool.set_lock_wait_logging(settings.bool("log_lock_waits"), std::time::Duration::from_millis(settings.ms("deadlock_timeout")));
        let catalog = Catalog::open(vfs.clone(), dir)?;
        let oids: std::collections::HashSet<u32> = catalog.tables().iter().map(|t| t.oid).collect();
        let planner_stats = crate::sql::statistics::Store::open(vfs.clone(), dir, &|o| oids.contains(&o))?;
        let planner_costs = crate::sql::cost::Costs::of_server(&settings);
        let mut messages = Vec::new();
        let crashed = control.state == DbState::InProduction;
        let txns = TxnManager::open(vfs.clone(), dir, control.next_xid)?;
        let max_row_locks = settings.int("heapstore.max_row_locks");
        if max_row_locks < 1 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("{max_row_locks} is outside the valid range for parameter \"heapstore.max_row_locks\" (1 .. 9223372036854775807)"),
            ));
        }
        txns.row_locks.set_limit(max_row_locks as usize);
        if crashed {
            // Unlogged tables are not in the WAL: after a crash they are reset to empty.
            for t in catalog.tables().iter().filter(|t| t.persistence == crate::catalog::Persistence::Unlogged) {
                for rel in std::iter::once(t.relfile).chain(t.toast_relfile).chain(t.indexes.iter().map(|i| i.relfile)) {
                    smgr.unlink(rel)?;
                    smgr.create(rel, ForkNumber::Main)?;
                }
            }
            messages.push("LOG:  database system was not properly shut down; automatic recovery in progress".to_string());
        }
        let wal_settings = wal_settings(&vfs, dir, &settings, control.wal_segment_size)?;
        let redo = if control.redo_lsn == 0 { wal_settings.initial_lsn() } else { control.redo_lsn };
        let t0 = std::time::Instant::now();
        let (end, records, bytes, max_xid) = replay(dir, &pool, &smgr, &txns, &catalog, control.wal_segment_size, redo)?;
        let secs = t0.elapsed().as_secs_f64();
        // Records past a clean shutdown's checkpoint mean the previous run wrote after it:
        // the shutdown was not clean after all.
        if crashed || records > 1 {
            messages.push(format!("LOG:  redo starts at {}", crate::wal::lsn_str(redo)));
            messages.push(format!(
                "LOG:  redo done at {}; {records} records, {:.1} MB replayed in {secs:.3} s ({:.0} MB/s)",
                crate::wal::lsn_str(end),
                bytes as f64 / 1048576.0,
                bytes as f64 / 1048576.0 / secs.max(1e-9)
            ));
        }
        txns.advance_next_xid(control.next_xid.max(max_xid + 1));
        if crashed {
            txns.advance_next_xid(control.next_xid + XID_GAP_AFTER_CRASH);
        }
        let wal = Arc::new(Wal::open(wal_settings, end)?);
        pool.set_wal(wal.clone());
        // Orphans: files no table references (a transaction that created them did not commit).
        let referenced = catalog.referenced_relfiles();
        for rel in smgr.list_relations()? {
            if !referenced.contains(&rel) {
                pool.drop_relation_buffers(rel);
                smgr.unlink(rel)?;
            }
        }
        control.state = DbState::InProduction;
        write_control(&*vfs, dir, &control)?;
        let saved_stats = crate::stats::Snapshot::load(&*vfs, &dir.join("pg_stat").join("stats.json"))?;
        let locks = LockManager::new(LockSettings {
            partitions: 16,
            fast_path_slots: settings.int("max_locks_per_transaction").max(0) as usize,
            deadlock_timeout: std::time::Duration::from_millis(settings.ms("deadlock_timeout").max(1)),
            lock_timeout: match settings.ms("lock_timeout") {
                0 => None,
                ms => Some(std::time::Duration::from_millis(ms)),
            },
            log_lock_waits: settings.bool("log_lock_waits"),
            release_walks_whole_table: settings.bool("heapstore.lock_release_walks_whole_table"),
        });
        let pool = Arc::new(pool);
        pool.set_scan_settings(crate::buffer::ScanSettings {
            io_combine_limit: (settings.bytes("io_combine_limit") as usize / bs).max(1),
            effective_io_concurrency: settings.int("effective_io_concurrency").max(0) as usize,
            synchronize_seqscans: settings.bool("synchronize_seqscans"),
            bulkread_ring_bytes: settings.bytes("heapstore.bulkread_ring_size") as usize,
        });
        let method = crate::buffer::IoMethod::parse(settings.get("io_method")?).expect("validated enum");
        pool.start_aio(method, settings.int("io_workers").max(1) as usize)?;
        let bgwriter_stats = Arc::new(BgWriterStats::default());
        let bgwriter_settings = BgWriterSettings {
            delay: std::time::Duration::from_millis(settings.ms("bgwriter_delay").max(10)),
            lru_maxpages: settings.int("bgwriter_lru_maxpages").max(0) as u64,
            lru_multiplier: settings.real("bgwriter_lru_multiplier"),
        };
        let bgwriter = if env.background_workers { BgWriter::start(pool.clone(), bgwriter_settings, bgwriter_stats.clone()) } else { None };
        pool.write_back.set_enabled(settings.bool("heapstore.async_write_back"));
        let write_back =
            (env.background_workers && pool.write_back.enabled()).then(|| crate::buffer::writeback::WriteBackWorker::start(pool.clone()));
        let pre_extend = Arc::new(crate::access::heap::extend::PreExtend::new(
            pool.clone(),
            settings.bool("heapstore.pre_extend") && settings.bool("heapstore.use_fsm"),
            env.background_workers,
        ));
        let pre_extender = pre_extend.start();
        let db = Database {
            shared: Arc::new(Shared {
                dir: dir.to_path_buf(),
                vfs: vfs.clone(),
                settings,
                block_size: bs,
                smgr,
                pool,
                bgwriter_stats,
                table_stats: Default::default(),
                planner_stats,
                planner_costs,
                bgwriter: Mutex::new(bgwriter),
                write_back: Mutex::new(write_back),
                pre_extend,
                pre_extender: Mutex::new(pre_extender),
                txns,
                wal: wal.clone(),
                wal_writer: Mutex::new(None),
                checkpointer: Mutex::new(None),
                autovacuum: Mutex::new(None),
                checkpoint_stats: crate::checkpoint::CheckpointStats::default(),
                ddl_lock: Mutex::new(()),
                temp_names: Mutex::new(Default::default()),
                delay_checkpoint: std::sync::RwLock::new(()),
                checkpoint_slot: Arc::default(),
                last_redo: AtomicU64::new(redo),
                catalog,
                locks,
                control: Mutex::new(control),
                next_session: AtomicU64::new(1),
                closed: AtomicBool::new(false),
                checkpoint_waiters: Default::default(),
                parallel_workers: Default::default(),
                parallel_workers_launched: Default::default(),
                threads: env.background_workers,
                saved_stats,
                _lock_file: lock,
                startup_messages: messages,
            }),
        };
        if crashed || records > 1 {
            db.shared.checkpoint(crate::checkpoint::CheckpointKind::EndOfRecovery)?;
        }
        if env.background_workers {
            let delay = std::time::Duration::from_millis(db.shared.settings.ms("wal_writer_delay").max(1));
            let async_wb = db.shared.settings.bool("heapstore.async_write_back");
            // Write-behind every eighth of the ring: the writer starts on a chunk long before
            // the ring is full, and wake-ups stay rare (16 per ring).
            let behind = if async_wb { (db.shared.wal.buffers_bytes() as u64 / 8).max(64 << 10) } else { 0 };
            let flush_after = db.shared.settings.bytes("wal_writer_flush_after");
            *db.shared.wal_writer.lock().expect("poisoned") = Some(db.shared.wal.start_writer(delay, behind, flush_after));
            crate::checkpoint::Checkpointer::start(&db.shared);
            *db.shared.autovacuum.lock().expect("poisoned") = Some(crate::autovacuum::Autovacuum::start(&db.shared));
        }
        Ok(db)
    }

    /// A new session (one per thread; sessions are Send, not Sync).
    pub fn session(&self) -> Session {
        self.shared.new_session()
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Clean shutdown: write every dirty buffer, fsync every relation, save the commit log,
    /// statistics and catalog, and mark the control file "shut down".
    pub fn close(self) -> Result<()> {
        self.shared.shutdown()
    }

    /// Runs a checkpoint now (CHECKPOINT).
    pub fn checkpoint(&self) -> Result<()> {
        self.shared.checkpoint(crate::checkpoint::CheckpointKind::Requested)
    }

    /// Stops without a shutdown checkpoint, as a crash would: the next open runs recovery.
    /// For tests; the data directory lock is released when the last session is dropped.
    pub fn crash(self) {
        self.shared.simulate_crash();
    }

    /// Statistics: saved totals plus this process's counters.
    pub fn stats(&self) -> crate::stats::Snapshot {
        self.shared.stats()
    }
}

impl Shared {
    pub fn stats(&self) -> crate::stats::Snapshot {
        let mut s = self.saved_stats.clone();
        let mut cur = crate::stats::Snapshot::current();
        cur.bgwriter = crate::stats::BgWriterRow {
            buffers_clean: self.bgwriter_stats.buffers_clean.load(Ordering::Relaxed),
            maxwritten_clean: self.bgwriter_stats.maxwritten_clean.load(Ordering::Relaxed),
            buffers_alloc: self.pool.buffers_alloc.load(Ordering::Relaxed),
        };
        let w = self.wal.stats();
        cur.wal = crate::stats::WalRow {
            wal_records: w.records,
            wal_bytes: w.bytes,
            wal_write: w.writes,
            wal_sync: w.fsyncs,
            wal_write_time_ms: w.write_ns as f64 / 1e6,
            wal_sync_time_ms: w.fsync_ns as f64 / 1e6,
            group_commit_hits: w.group_commit_hits,
            flush_calls: w.flush_calls,
            wal_buffers_full: w.buffer_full_waits,
        };
        let c = &self.checkpoint_stats;
        cur.checkpointer = crate::stats::CheckpointerRow {
            num_timed: c.timed.load(Ordering::Relaxed),
            num_requested: c.requested.load(Ordering::Relaxed),
            buffers_written: c.buffers_written.load(Ordering::Relaxed),
            write_time_ms: c.write_ms.load(Ordering::Relaxed),
            sync_time_ms: c.sync_ms.load(Ordering::Relaxed),
        };
        cur.lock_waits = self
            .locks
            .wait_stats()
            .into_iter()
            .filter(|(_, n, _)| *n > 0)
            .map(|(m, n, d)| crate::stats::LockWaitRow { mode: m.name().to_string(), waits: n, wait_time_ms: d.as_secs_f64() * 1e3 })
            .collect();
        s.merge(&cur);
        s
    }

    /// A new session on this database.
    pub(crate) fn new_session(self: &Arc<Self>) -> Session {
        let id = self.next_session.fetch_add(1, Ordering::Relaxed);
        Session::new(self.clone(), id)
    }

    /// Stops the autovacuum thread (a table being vacuumed is finished first).
    fn stop_autovacuum(&self) {
        if let Some(a) = self.autovacuum.lock().expect("poisoned").take() {
            a.stop();
        }
    }

    fn shutdown(&self) -> Result<()> {
        self.stop_autovacuum();
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        assert_eq!(self.txns.running_count(), 0, "shutdown with transactions still running");
        if let Some(c) = self.checkpointer.lock().expect("poisoned").take() {
            c.stop();
        }
        if let Some(bg) = self.bgwriter.lock().expect("poisoned").take() {
            bg.stop();
        }
        if let Some(wb) = self.write_back.lock().expect("poisoned").take() {
            wb.stop();
        }
        self.pre_extend.stop(self.pre_extender.lock().expect("poisoned").take());
        self.checkpoint(crate::checkpoint::CheckpointKind::Shutdown)?;
        if let Some(w) = self.wal_writer.lock().expect("poisoned").take() {
            w.stop();
        }
        self.catalog.save()?;
        self.stats().save(&*self.vfs, &self.dir.join("pg_stat").join("stats.json"))?;
        // Like postmaster.pid after a clean shutdown: gone. Everything is written by now, so a
        // process that opens the directory from here on (it creates and locks a new file)
        // finds it consistent; this one writes nothing more.
        self.vfs.unlock_file(&self.dir.join("heapstore.pid"));
        Ok(())
    }

    /// Writes the control file after a checkpoint.
    pub(crate) fn update_control(&self, checkpoint_lsn: u64, redo_lsn: u64, shutdown: bool) -> Result<()> {
        let mut c = self.control.lock().expect("poisoned");
        c.checkpoint_lsn = checkpoint_lsn;
        c.redo_lsn = redo_lsn;
        c.next_xid = self.txns.next_xid();
        c.state = if shutdown { DbState::ShutDown } else { DbState::InProduction };
        write_control(&*self.vfs, &self.dir, &c)
    }

    /// Leaves without a shutdown checkpoint, as a crash would (tests): the next open recovers.
    pub fn simulate_crash(&self) {
        self.stop_autovacuum();
        self.closed.store(true, Ordering::Release);
        if let Some(c) = self.checkpointer.lock().expect("poisoned").take() {
            c.stop();
        }
        if let Some(bg) = self.bgwriter.lock().expect("poisoned").take() {
            bg.stop();
        }
        self.pool.write_back.discard();
        if let Some(wb) = self.write_back.lock().expect("poisoned").take() {
            wb.stop();
        }
        self.pre_extend.stop(self.pre_extender.lock().expect("poisoned").take());
        if let Some(w) = self.wal_writer.lock().expect("poisoned").take() {
            w.stop();
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // The handle is going away: no more background vacuums (one in progress holds a
        // reference to the database until it finishes its table).
        self.shared.stop_autovacuum();
        if Arc::strong_count(&self.shared) == 1 && !self.shared.closed.load(Ordering::Acquire) && !std::thread::panicking() {
            if let Err(e) = self.shared.shutdown() {
                eprintln!("{e}");
            }
        }
    }
}

/// Reads saved statistics of a data directory without opening it (works while another
/// process owns it; shows totals as of its last clean shutdown).
pub fn saved_stats(dir: &Path) -> Result<crate::stats::Snapshot> {
    let vfs = crate::storage::vfs::real();
    read_control(&*vfs, dir)?;
    crate::stats::Snapshot::load(&*vfs, &dir.join("pg_stat").join("stats.json"))
}

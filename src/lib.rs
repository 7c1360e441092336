//! heapstore: an embeddable, crash-safe, page-based table storage engine on PostgreSQL's
//! storage design, with the fixes argued for in five pgsql-hackers threads.
//!
//! The data path (each module's doc has its part and its invariants):
//!
//! ```text
//! COPY file ─► copy (text/csv/binary) ─► heap::BulkInsert ─► hio: FSM or extend_by(n)
//!                                          ├─► WAL: one MULTI_INSERT record per page filled
//!                                          └─► buffer pool ─► smgr ─► files (WAL before data)
//! scan ─► heap::scan ─► buffer pool (BULKREAD ring) ─► page ─► visible tuples (snapshot)
//! commit ─► WAL COMMIT record, group-commit flush ─► commit log ─► locks released in O(held)
//! crash ─► recovery: redo from the last checkpoint's REDO pointer; full-page images fix torn pages
//! ```
//!
//! Start with [`Database`] and [`Session`]:
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let data = dir.path().join("data");
//! heapstore::Database::init(&data, &[]).unwrap();
//! let db = heapstore::Database::open(&data, &["shared_buffers=16MB".into()]).unwrap();
//! let mut s = db.session();
//! s.execute("CREATE TABLE t (id integer NOT NULL, name text)").unwrap();
//! let r = s.execute("SELECT count(*) FROM t").unwrap();
//! assert_eq!(r[0].rows[0][0].as_deref(), Some("0"));
//! drop(s);
//! db.close().unwrap();
//! ```

pub mod access;
pub mod api;
pub mod auth;
pub mod autovacuum;
pub mod bench;
pub mod buffer;
pub mod catalog;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod copy;
pub mod db;
pub mod error;
pub mod exec;
pub mod failpoint;
pub mod interrupt;
pub mod lock;
pub mod recovery;
pub mod rng;
pub mod server;
pub mod session;
pub mod sql;
pub mod stats;
pub mod storage;
pub mod torture;
pub mod txn;
pub mod types;
pub mod wal;

pub use api::{FromSql, Row, ToSql};
pub use db::Database;
pub use error::{PgError, Result};
pub use session::{QueryResult, Session};

/// The PostgreSQL version heapstore answers as (`server_version`).
pub const SERVER_VERSION: &str = "15.0";

/// `SELECT version()`.
pub fn server_version_string() -> String {
    format!(
        "PostgreSQL {SERVER_VERSION} (heapstore {}) on {}-linux, compiled by rustc, 64-bit",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH
    )
}

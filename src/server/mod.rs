//! `heapstore serve`: PostgreSQL's frontend/backend protocol 3.0 over a Unix socket and TCP,
//! one OS thread and one [`Session`](crate::session::Session) per connection on the shared
//! engine.
//!
//! ```text
//!  accept thread (Unix) ─┐                      ┌─ conn thread: startup → auth → query loop
//!  accept thread (TCP)  ─┴─ register (max_conn) ─┤   (wire.rs framing, conn.rs protocol,
//!                                                 └─  query.rs SET/SHOW/catalog, types.rs)
//!  serve (main thread): waits for SIGINT/SIGTERM → Server::shutdown → Database::close
//! ```
//!
//! Entry points: [`Server::start`] binds and returns at once; [`Server::shutdown`] stops it.
//! The wire format is `pgwire`'s message codec (default features off: no async runtime, no
//! TLS); framing, limits and the protocol state machine are ours, synchronous and blocking, so a
//! statement that waits on a heavyweight lock simply blocks its connection's thread.
//!
//! Invariants:
//! 1. At most `max_connections` sessions exist; the next startup gets 53300
//!    `sorry, too many clients already` and is closed. A connection must finish startup and
//!    authentication within [`AUTHENTICATION_TIMEOUT`]. A connection counts from its startup
//!    packet to the end of its thread (registration and deregistration in [`Registry`] only).
//! 2. A connection's thread owns its socket and its session; other threads touch it only
//!    through its [`ConnEntry`]: the cancel flag and a socket clone used to shut it down.
//! 3. Shutdown: stop accepting (the accept threads see the flag within `ACCEPT_POLL_MS` and
//!    are joined), wait up to the grace period for connections to finish, then cancel the
//!    rest and shut their sockets' reading side (each says FATAL 57P01 `terminating connection
//!    due to administrator command` and ends), then both sides of any left, and join every
//!    connection thread; only then may the caller close the database (a final checkpoint).
//! 4. A malformed message, bad length or unknown message type gets an ErrorResponse (08P01)
//!    and the connection is closed; nothing a client sends can stop the server or other
//!    connections (a panicking connection thread is confined to that connection).

mod conn;
mod cursor;
mod query;
pub mod tls;
mod types;
pub mod wire;

use crate::auth::Hba;
use crate::db::Database;
use crate::error::{sqlstate, PgError, Result};
use std::collections::HashMap;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// PostgreSQL's `authentication_timeout` default: a client that has not finished startup and
/// authentication by then is disconnected, so idle half-open connections cannot hold
/// `max_connections` slots.
pub const AUTHENTICATION_TIMEOUT: Duration = Duration::from_secs(60);

/// Where and how to listen.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// TCP addresses (`listen_addresses`: host names or IPs; empty = no TCP).
    pub listen_addresses: Vec<String>,
    /// TCP port, and the number in the Unix socket's name (`.s.PGSQL.<port>`); 0 for TCP = any.
    pub port: u16,
    /// Directory for the Unix socket; None = no Unix socket.
    pub socket_dir: Option<PathBuf>,
    /// Client authentication rules.
    pub hba: Hba,
    pub max_connections: usize,
    /// TLS (`ssl = on`), or None: SSLRequest answered 'N'.
    pub tls: Option<std::sync::Arc<rustls::ServerConfig>>,
}

impl ServerConfig {
    /// The configuration from the database's settings (`listen_addresses`, `port`,
    /// `unix_socket_directories` (empty = the data directory), `heapstore.hba`,
    /// `max_connections`, `ssl`, `ssl_cert_file`, `ssl_key_file`).
    pub fn from_settings(db: &Database) -> Result<ServerConfig> {
        let s = &db.shared().settings;
        let listen: Vec<String> = s.get("listen_addresses")?.split(',').map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect();
        let dirs = s.get("unix_socket_directories")?.trim().to_string();
        let socket_dir =
            if dirs.is_empty() { Some(db.shared().dir.clone()) } else { Some(PathBuf::from(dirs.split(',').next().unwrap_or("").trim())) };
        Ok(ServerConfig {
            listen_addresses: listen,
            port: s.int("port") as u16,
            socket_dir,
            hba: Hba::parse(s.get("heapstore.hba")?)?,
            max_connections: s.int("max_connections") as usize,
            tls: tls::load(&db.shared().dir, s)?,
        })
    }
}

/// A connection as other threads see it (invariant 2).
pub(crate) struct ConnEntry {
    secret: i32,
    cancel: Arc<AtomicBool>,
    closer: Option<Closer>,
}

enum Closer {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Closer {
    /// `Shutdown::Read` first: the session's next read sees EOF and it can still say goodbye
    /// (57P01); `Shutdown::Both` for one that does not end (blocked writing to a stalled client).
    fn close(&self, how: Shutdown) {
        let _ = match self {
            Closer::Tcp(s) => s.shutdown(how),
            Closer::Unix(s) => s.shutdown(how),
        };
    }
}

/// Live connections: the max_connections count, cancel keys, and shutdown handles.
pub(crate) struct Registry {
    conns: Mutex<HashMap<i32, ConnEntry>>,
    max: usize,
}

impl Registry {
    /// Registers a connection, or refuses it with 53300 (invariant 1).
    fn register(&self, pid: i32, secret: i32, cancel: Arc<AtomicBool>, closer: Option<Closer>) -> Result<()> {
        let mut c = self.conns.lock().expect("poisoned");
        if c.len() >= self.max {
            return Err(PgError::new(sqlstate::TOO_MANY_CONNECTIONS, "sorry, too many clients already"));
        }
        c.insert(pid, ConnEntry { secret, cancel, closer });
        Ok(())
    }

    fn deregister(&self, pid: i32) {
        self.conns.lock().expect("poisoned").remove(&pid);
    }

    /// A CancelRequest: sets the flag if pid and secret match (else ignored, as PostgreSQL).
    fn cancel(&self, pid: i32, secret: i32) -> bool {
        let c = self.conns.lock().expect("poisoned");
        match c.get(&pid) {
            Some(e) if e.secret == secret => {
                e.cancel.store(true, Ordering::SeqCst);
                true
            }
            _ => false,
        }
    }

    fn len(&self) -> usize {
        self.conns.lock().expect("poisoned").len()
    }
}

/// What every connection thread shares.
pub(crate) struct ServerShared {
    pub db: Arc<Database>,
    pub registry: Registry,
    pub hba: Hba,
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub shutting_down: AtomicBool,
    conn_threads: Mutex<Vec<JoinHandle<()>>>,
}

/// A running server.
pub struct Server {
    shared: Arc<ServerShared>,
    accept_threads: Vec<JoinHandle<()>>,
    tcp_addrs: Vec<SocketAddr>,
    socket_path: Option<PathBuf>,
}

/// The Unix socket's file name for a port, as PostgreSQL names it.
pub fn socket_file_name(port: u16) -> String {
    format!(".s.PGSQL.{port}")
}

fn bind_unix(path: &Path) -> Result<UnixListener> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(PgError::new(
                sqlstate::OBJECT_IN_USE,
                format!("could not bind Unix socket \"{}\": Address already in use", path.display()),
            )
            .with_hint("Is another server already running on this port?"));
        }
        // A stale socket of a server that is gone (we hold the data directory's lock).
        let _ = std::fs::remove_file(path);
    }
    UnixListener::bind(path).map_err(|e| PgError::io("bind Unix socket", path, e))
}

impl Server {
    /// Binds the listeners and starts the accept threads.
    ///
    /// ```
    /// use heapstore::server::{Server, ServerConfig};
    /// use std::sync::Arc;
    /// let tmp = tempfile::tempdir().unwrap();
    /// let dir = tmp.path().join("data");
    /// heapstore::Database::init(&dir, &[]).unwrap();
    /// heapstore::auth::init_roles(&dir, "postgres").unwrap();
    /// let db = Arc::new(heapstore::Database::open(&dir, &[]).unwrap());
    /// let cfg = ServerConfig {
    ///     listen_addresses: vec!["127.0.0.1".into()],
    ///     port: 0, // any free port
    ///     socket_dir: Some(dir.clone()),
    ///     hba: heapstore::auth::Hba::parse("local all all trust; host all all 127.0.0.1/32 trust").unwrap(),
    ///     max_connections: 10,
    ///     tls: None,
    /// };
    /// let server = Server::start(db, cfg).unwrap();
    /// let port = server.tcp_addrs()[0].port();
    /// let mut client = postgres::Client::connect(&format!("host=127.0.0.1 port={port} user=postgres"), postgres::NoTls).unwrap();
    /// client.batch_execute("CREATE TABLE t (a integer)").unwrap();
    /// assert_eq!(client.query_one("SELECT count(*) FROM t", &[]).unwrap().get::<_, i64>(0), 0);
    /// drop(client);
    /// let db = server.shutdown(std::time::Duration::from_secs(5));
    /// Arc::try_unwrap(db).ok().unwrap().close().unwrap();
    /// ```
    pub fn start(db: Arc<Database>, cfg: ServerConfig) -> Result<Server> {
        let shared = Arc::new(ServerShared {
            db,
            registry: Registry { conns: Mutex::new(HashMap::new()), max: cfg.max_connections.max(1) },
            hba: cfg.hba.clone(),
            tls: cfg.tls.clone(),
            shutting_down: AtomicBool::new(false),
            conn_threads: Mutex::new(Vec::new()),
        });
        let mut tcp = Vec::new();
        for a in &cfg.listen_addresses {
            let host = if a == "*" {
                "0.0.0.0"
            } else if a == "localhost" {
                "127.0.0.1"
            } else {
                a.as_str()
            };
            let l = TcpListener::bind((host, cfg.port))
                .map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not bind to address \"{a}\", port {}: {e}", cfg.port)))?;
            tcp.push(l);
        }
        let tcp_addrs: Vec<SocketAddr> = tcp.iter().map(|l| l.local_addr().expect("bound")).collect();
        // Port 0 (tests): the socket is named after the port the first TCP listener got.
        let socket_port = if cfg.port == 0 { tcp_addrs.first().map_or(0, |a| a.port()) } else { cfg.port };
        let mut unix = None;
        let mut socket_path = None;
        if let Some(d) = &cfg.socket_dir {
            let p = d.join(socket_file_name(socket_port));
            unix = Some(bind_unix(&p)?);
            socket_path = Some(p);
        }
        let mut accept_threads = Vec::new();
        for l in tcp {
            let sh = shared.clone();
            accept_threads.push(std::thread::Builder::new().name("accept-tcp".into()).spawn(move || accept_tcp(sh, l)).expect("spawn"));
        }
        if let Some(l) = unix {
            let sh = shared.clone();
            accept_threads.push(std::thread::Builder::new().name("accept-unix".into()).spawn(move || accept_unix(sh, l)).expect("spawn"));
        }
        Ok(Server { shared, accept_threads, tcp_addrs, socket_path })
    }

    /// The bound TCP addresses (the real port when configured with port 0).
    pub fn tcp_addrs(&self) -> &[SocketAddr] {
        &self.tcp_addrs
    }

    /// The Unix socket's path, if any.
    pub fn socket_path(&self) -> Option<&Path> {
        self.socket_path.as_deref()
    }

    /// Connections now open.
    pub fn connections(&self) -> usize {
        self.shared.registry.len()
    }

    /// Stops the server (invariant 3) and returns the database for the caller to close.
    /// Connections get up to `grace` to finish; the rest are cancelled and disconnected.
    pub fn shutdown(mut self, grace: Duration) -> Arc<Database> {
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        // The accept loops poll the flag every ACCEPT_POLL_MS (no wake-up connection: the
        // socket file may be gone, or the address unreachable).
        for t in self.accept_threads.drain(..) {
            let _ = t.join();
        }
        if let Some(p) = &self.socket_path {
            let _ = std::fs::remove_file(p);
        }
        let deadline = Instant::now() + grace;
        while self.shared.registry.len() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for how in [Shutdown::Read, Shutdown::Both] {
            {
                let c = self.shared.registry.conns.lock().expect("poisoned");
                for e in c.values() {
                    e.cancel.store(true, Ordering::SeqCst);
                    if let Some(cl) = &e.closer {
                        cl.close(how);
                    }
                }
            }
            let deadline = Instant::now() + Duration::from_secs(1);
            while self.shared.registry.len() > 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let threads: Vec<JoinHandle<()>> = std::mem::take(&mut *self.shared.conn_threads.lock().expect("poisoned"));
        for t in threads {
            let _ = t.join();
        }
        self.shared.db.clone()
    }
}

/// Stack reserved for each connection's thread: the statement passes recurse once per level of
/// expression nesting, and `sql::dialect::check_nesting` lets a statement nest as deep as the
/// thread's stack holds. Only the pages a statement touches are ever committed.
pub(crate) const CONN_STACK_SIZE: usize = 16 << 20;

fn spawn_conn(sh: &Arc<ServerShared>, f: impl FnOnce() + Send + 'static) {
    let h = std::thread::Builder::new().name("conn".into()).stack_size(CONN_STACK_SIZE).spawn(f);
    if let Ok(h) = h {
        let mut v = sh.conn_threads.lock().expect("poisoned");
        v.retain(|t| !t.is_finished());
        v.push(h);
    }
}

/// Waits up to `timeout_ms` for a listener to have a connection to accept.
fn wait_acceptable(fd: std::os::fd::RawFd, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd for a listening socket this thread owns, for the duration of the call.
    let n = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    n > 0
}

/// How often an accept loop looks at the shutdown flag.
const ACCEPT_POLL_MS: i32 = 100;

/// Accepts connections until shutdown: polls the listening socket (so the shutdown flag is seen
/// within ACCEPT_POLL_MS), backs off on errors such as running out of file descriptors, and hands
/// each new connection to `start`.
fn accept_loop<T>(sh: &ServerShared, fd: std::os::fd::RawFd, mut accept: impl FnMut() -> std::io::Result<T>, mut start: impl FnMut(T)) {
    while !sh.shutting_down.load(Ordering::SeqCst) {
        if !wait_acceptable(fd, ACCEPT_POLL_MS) {
            continue;
        }
        match accept() {
            Ok(s) => start(s),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

fn accept_tcp(sh: Arc<ServerShared>, l: TcpListener) {
    use std::os::fd::AsRawFd;
    let _ = l.set_nonblocking(true);
    accept_loop(
        &sh,
        l.as_raw_fd(),
        || l.accept().map(|(s, _)| s),
        |s| {
            let _ = s.set_nonblocking(false);
            let _ = s.set_nodelay(true);
            let _ = s.set_read_timeout(Some(AUTHENTICATION_TIMEOUT));
            let peer = s.peer_addr().ok();
            let closer = s.try_clone().ok().map(Closer::Tcp);
            let lift = s.try_clone().ok();
            let sh2 = sh.clone();
            spawn_conn(&sh, move || {
                conn::serve_connection(sh2, s, conn::Peer::Tcp(peer), closer, move || {
                    if let Some(l) = lift {
                        let _ = l.set_read_timeout(None);
                    }
                })
            });
        },
    );
}

fn accept_unix(sh: Arc<ServerShared>, l: UnixListener) {
    use std::os::fd::AsRawFd;
    let _ = l.set_nonblocking(true);
    accept_loop(
        &sh,
        l.as_raw_fd(),
        || l.accept().map(|(s, _)| s),
        |s| {
            let _ = s.set_nonblocking(false);
            let _ = s.set_read_timeout(Some(AUTHENTICATION_TIMEOUT));
            let closer = s.try_clone().ok().map(Closer::Unix);
            let lift = s.try_clone().ok();
            let sh2 = sh.clone();
            spawn_conn(&sh, move || {
                conn::serve_connection(sh2, s, conn::Peer::Unix, closer, move || {
                    if let Some(l) = lift {
                        let _ = l.set_read_timeout(None);
                    }
                })
            });
        },
    );
}

//! One connection: startup, authentication, then the simple and extended query protocols and
//! the COPY sub-protocols, on one thread with one session.
//!
//! ```text
//!  startup ──(SSLRequest: 'S' + TLS handshake with ssl = on over TCP, else 'N')──► startup packet ──► register (53300?) ──► hba → trust | SCRAM
//!     ──► AuthenticationOk, ParameterStatus*, BackendKeyData, ReadyForQuery
//!     ──► loop: Query | Parse/Bind/Describe/Execute/Close ... Sync | Terminate
//!  extended-protocol error ──► ErrorResponse, skip messages until Sync ──► ReadyForQuery
//! ```
//!
//! Invariants:
//! 1. Every Sync, and every Query not discarded by rule 2, is answered by exactly one
//!    ReadyForQuery, whose status is the session's: 'E' if the open block failed, 'T' inside
//!    BEGIN ... COMMIT, else 'I'.
//! 2. Between an extended-protocol error and the next Sync every message but Terminate is
//!    discarded.
//! 3. COPY FROM STDIN announces CopyInResponse only when the engine first reads its input (so a
//!    COPY that fails before, e.g. on a missing table, never puts the client in copy mode); COPY
//!    TO STDOUT announces CopyOutResponse at its first output, or at its end if it had none, and
//!    always ends with CopyDone before CommandComplete. During copy-in, Flush and Sync are
//!    ignored (as PostgreSQL does); copy messages arriving outside copy-in are discarded.
//! 4. A cancel request sets the connection's flag; it is checked between COPY messages in and
//!    out (the long-running statements of this engine) and cleared when a statement starts.
//!    A heap scan or index fetch checks it too (`crate::interrupt`), once per page.
//! 5. A portal's statement runs at its first Describe or Execute (pgbench and libpq send
//!    Bind, Describe portal, Execute); its rows are kept and sent in pieces of `max_rows`
//!    (PortalSuspended between them). The unnamed portal is dropped at Sync; named ones at
//!    Close, or when their transaction ends (outside a block: at the Sync that commits the
//!    implicit transaction), as PostgreSQL drops portals that are not holdable.
//!
//! 6. Outside BEGIN ... COMMIT, the statements Executed between two Syncs share one implicit
//!    transaction, committed at the Sync (`sql::end_implicit`); an error in any message before
//!    the Sync rolls it back (inside a block it fails the block), so a batch is all-or-nothing.
//! 7. COPY TO STDOUT sends one CopyData message per row (`sql::CopyIo`'s one-row-per-write
//!    contract), the binary header with the first row.
//! 8. A binary parameter is decoded by the statement's parameter type: the client's OID, or
//!    the type inferred at Parse (`sql::param_types`), never by the OID 0 the client may send.
//!
//! Approximation (documented in the README): in a simple Query with several statements, an
//! error discards the results of the earlier ones.

use super::query::{self, SessionParams};
use super::tls::MaybeTls;
use super::types;
use super::wire::{is_disconnect, StartupPacket, Wire};
use super::{Closer, ServerShared};
use crate::auth::{self, Method, Origin, ScramServer};
use crate::error::{sqlstate, PgError, Result};
use crate::session::{QueryResult, Session};
use crate::sql::{CopyIo, Prepared};
use bytes::{BufMut, Bytes};
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::data::{FieldDescription, NoData, ParameterDescription, RowDescription};
use pgwire::messages::extendedquery::{BindComplete, CloseComplete, ParseComplete, PortalSuspended};
use pgwire::messages::response::{CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse, ReadyForQuery, TransactionStatus};
use pgwire::messages::startup::{Authentication, BackendKeyData, ParameterStatus, SecretKey};
use pgwire::messages::{PgWireBackendMessage as B, PgWireFrontendMessage as F};
use sqlparser::ast::{CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Where a connection comes from.
pub(crate) enum Peer {
    Tcp(Option<SocketAddr>),
    Unix,
}

/// Buffered output is written once it passes this size (and always before a read).
const OUT_FLUSH_BYTES: usize = 64 * 1024;
/// SSLRequest / GSSENCRequest answered 'N' at most this often before the startup packet.
const NEGOTIATIONS_MAX: usize = 2;

fn error_fields(e: &PgError, severity: &str) -> Vec<(u8, String)> {
    let mut f = vec![(b'S', severity.to_string()), (b'V', severity.to_string()), (b'C', e.code.to_string()), (b'M', e.message.clone())];
    if let Some(d) = &e.detail {
        f.push((b'D', d.clone()));
    }
    if let Some(h) = &e.hint {
        f.push((b'H', h.clone()));
    }
    if let Some(p) = e.char_position() {
        f.push((b'P', p.to_string()));
    }
    if let Some(c) = &e.context {
        f.push((b'W', c.to_string()));
    }
    if let Some(o) = &e.objects {
        for (code, v) in [(b's', &o.schema), (b't', &o.table), (b'c', &o.column), (b'n', &o.constraint)] {
            if let Some(v) = v {
                f.push((code, v.clone()));
            }
        }
    }
    f
}

/// The settings in a startup packet's `options` (PostgreSQL's pg_split_opts, then its
/// command-line switches): words split at whitespace, a backslash taking the next character
/// literally; `-c name=value`, `-cname=value` and `--name=value`, with `-` in a name read as
/// `_`. Other switches are refused.
pub(crate) fn startup_options(opts: &str) -> Result<Vec<(String, String)>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut chars = opts.chars();
    let mut in_word = false;
    while let Some(c) = chars.next() {
        if c.is_ascii_whitespace() {
            if in_word {
                words.push(std::mem::take(&mut cur));
                in_word = false;
            }
            continue;
        }
        in_word = true;
        if c == '\\' {
            if let Some(n) = chars.next() {
                cur.push(n);
            }
        } else {
            cur.push(c);
        }
    }
    if in_word {
        words.push(cur);
    }
    let setting = |w: &str| -> Result<(String, String)> {
        match w.split_once('=') {
            Some((n, v)) if !n.is_empty() => Ok((n.replace('-', "_"), v.to_string())),
            _ => Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("-c {w} requires a value"))),
        }
    };
    let mut out = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        if w == "-c" {
            let Some(next) = it.next() else {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "invalid command-line argument for server process: -c requires a value"));
            };
            out.push(setting(next)?);
        } else if let Some(rest) = w.strip_prefix("--").or_else(|| w.strip_prefix("-c")) {
            out.push(setting(rest)?);
        } else {
            return Err(PgError::feature(format!("the command-line argument \"{w}\" in the startup options is not supported by heapstore (only -c name=value and --name=value)")));
        }
    }
    Ok(out)
}

fn send_error<S: Read + Write>(w: &mut Wire<S>, e: &PgError, severity: &str) -> Result<()> {
    let severity = if e.panic { "PANIC" } else { severity };
    w.send(B::ErrorResponse(ErrorResponse::new(error_fields(e, severity))))
}

/// Sends a notice line as the engine writes them (`WARNING:  text`).
fn send_notice<S: Read + Write>(w: &mut Wire<S>, line: &str) -> Result<()> {
    let (sev, code, msg) = [("WARNING:  ", "WARNING", "01000"), ("NOTICE:  ", "NOTICE", "00000"), ("INFO:  ", "INFO", "00000")]
        .iter()
        .find_map(|(p, sev, code)| line.strip_prefix(p).map(|m| (*sev, *code, m)))
        .unwrap_or(("NOTICE", "00000", line));
    let code = if msg.contains("transaction in progress") {
        if msg.contains("no transaction") {
            "25P01"
        } else {
            "25001"
        }
    } else {
        code
    };
    w.send(B::NoticeResponse(NoticeResponse::new(vec![
        (b'S', sev.to_string()),
        (b'V', sev.to_string()),
        (b'C', code.to_string()),
        (b'M', msg.to_string()),
    ])))
}

/// Runs a connection to its end; never panics out (invariant 4 of the server).
/// `authenticated` runs once the client is authenticated (it lifts the authentication timeout).
pub(crate) fn serve_connection<S: Read + Write>(
    sh: Arc<ServerShared>,
    stream: S,
    peer: Peer,
    closer: Option<Closer>,
    authenticated: impl FnOnce(),
) {
    let mut wire = Wire::new(MaybeTls::Plain(stream));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&sh, &mut wire, peer, closer, authenticated)));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(e)) if is_disconnect(&e) => {}
        Ok(Err(e)) => {
            eprintln!("FATAL:  {}", e.message);
            let _ = send_error(&mut wire, &e, "FATAL");
            let _ = wire.flush();
        }
        Err(_) => {
            let _ = send_error(&mut wire, &PgError::internal("internal error in connection; closing it"), "FATAL");
            let _ = wire.flush();
        }
    }
}

/// Deregisters on every way out of a connection.
struct Registered<'a>(&'a ServerShared, i32);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.registry.deregister(self.1);
    }
}

fn run<S: Read + Write>(
    sh: &Arc<ServerShared>,
    wire: &mut Wire<MaybeTls<S>>,
    peer: Peer,
    closer: Option<Closer>,
    authenticated: impl FnOnce(),
) -> Result<()> {
    let mut negotiations = 0;
    let params = loop {
        match wire.read_startup()? {
            // Invariant 1 of `tls`: TLS over TCP when `ssl = on`, once.
            StartupPacket::Ssl
                if negotiations < NEGOTIATIONS_MAX && !wire.stream.is_tls() && matches!(peer, Peer::Tcp(_)) && sh.tls.is_some() =>
            {
                negotiations += 1;
                let io = |e: std::io::Error| PgError::new(sqlstate::CONNECTION_FAILURE, e.to_string());
                if wire.has_buffered_input() {
                    // Bytes sent after SSLRequest and before the handshake would be read as
                    // if they had come over TLS (CVE-2021-23214).
                    return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "received unencrypted data after SSL request"));
                }
                wire.stream.write_all(b"S").and_then(|()| wire.stream.flush()).map_err(io)?;
                wire.stream.upgrade(sh.tls.as_ref().expect("checked")).map_err(io)?;
            }
            StartupPacket::Ssl | StartupPacket::Gss if negotiations < NEGOTIATIONS_MAX => {
                negotiations += 1;
                wire.stream.write_all(b"N").map_err(|e| PgError::new(sqlstate::CONNECTION_FAILURE, e.to_string()))?;
            }
            StartupPacket::Ssl | StartupPacket::Gss => {
                return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "too many encryption requests"))
            }
            StartupPacket::Cancel { pid, secret } => {
                sh.registry.cancel(pid, secret);
                return Ok(());
            }
            StartupPacket::Startup { params, .. } => break params,
        }
    };
    let param = |n: &str| params.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let user = param("user").filter(|u| !u.is_empty()).ok_or_else(|| {
        PgError::new(sqlstate::INVALID_AUTHORIZATION_SPECIFICATION, "no PostgreSQL user name specified in startup packet")
    })?;
    let database = param("database").filter(|d| !d.is_empty()).unwrap_or_else(|| user.clone());
    if sh.shutting_down.load(Ordering::SeqCst) {
        return Err(PgError::new("57P03", "the database system is shutting down"));
    }
    // The backend pid is the session id, as `pg_locks.pid` shows it.
    let session = sh.db.session();
    let pid = session.id() as i32;
    let mut secret_bytes = [0u8; 4];
    getrandom::getrandom(&mut secret_bytes).expect("OS random source");
    let secret = i32::from_ne_bytes(secret_bytes);
    let cancel = Arc::new(AtomicBool::new(false));
    sh.registry.register(pid, secret, cancel.clone(), closer)?;
    let _registered = Registered(sh, pid);

    let superuser = authenticate(sh, wire, &peer, &database, &user)?;
    authenticated();
    wire.send(B::Authentication(Authentication::Ok))?;
    let app = param("application_name").unwrap_or_default();
    let mut gucs = SessionParams::new(&user, superuser, &app);
    gucs.database = database.clone();
    gucs.add_planner_settings(&sh.db.shared().settings);
    gucs.use_server_time_zone(&sh.db.shared().settings);
    // Parameters in the startup packet (DateStyle, client_encoding, ...) apply as SET would; one
    // heapstore cannot honour keeps its value (reported below), rather than refusing the
    // connection (psql under a C locale asks for SQL_ASCII, for example).
    let mut given = Vec::new();
    if param("application_name").is_some() {
        given.push("application_name".to_string());
    }
    for (k, v) in &params {
        if matches!(k.as_str(), "user" | "database" | "application_name" | "options" | "replication") {
            continue;
        }
        match gucs.set(k, v, &sh.db.shared().settings) {
            Ok(_) => given.push(k.clone()),
            // A time zone heapstore cannot take would leave the session in UTC, every
            // timestamptz shown and read on the wrong clocks: the connection is refused, as
            // PostgreSQL refuses it.
            Err(e) if k.eq_ignore_ascii_case("TimeZone") => return Err(e),
            Err(_) => {}
        }
    }
    // `options` (libpq's PGOPTIONS): `-c name=value` / `--name=value` settings, applied as SET
    // would and kept as what RESET returns to; one that cannot be applied ends the connection
    // with PostgreSQL's FATAL, never silently.
    if let Some(opts) = param("options") {
        for (k, v) in startup_options(&opts)? {
            if query::engine_setting(&k) {
                // The engine keeps these per session and transaction, with the server's
                // value as what RESET returns to: refused rather than half applied.
                return Err(PgError::feature(format!(
                    "setting \"{k}\" in the startup options is not supported by heapstore; SET it after connecting"
                )));
            }
            gucs.set(&k, &v, &sh.db.shared().settings)?;
            given.push(k);
        }
    }
    gucs.keep_as_defaults();
    let mut session = session;
    session.set_identity(&user, &database);
    session.start_client_settings(gucs.pairs());
    session.set_client_given(given);
    session.log_ends = true;
    for name in query::REPORTED {
        wire.send(B::ParameterStatus(ParameterStatus::new(name.to_string(), gucs.get(name).unwrap_or("").to_string())))?;
    }
    wire.send(B::BackendKeyData(BackendKeyData::new(pid, SecretKey::I32(secret))))?;
    crate::interrupt::set_cancel_flag(Some(cancel.clone()));
    let mut c = Conn {
        wire,
        session,
        gucs,
        user,
        superuser,
        pid,
        cancel,
        stmts: HashMap::new(),
        portals: HashMap::new(),
        cursors: HashMap::new(),
        ignore_till_sync: false,
        stream_rows: false,
        in_pieces: false,
    };
    c.ready()?;
    let r = c.main_loop();
    drop(c);
    if sh.shutting_down.load(Ordering::SeqCst) {
        // The server closed our reading side to stop us: say why, as PostgreSQL does.
        let e = PgError::new(sqlstate::ADMIN_SHUTDOWN, "terminating connection due to administrator command");
        let _ = send_error(wire, &e, "FATAL");
        let _ = wire.flush();
        return Ok(());
    }
    r
}

/// Checks hba and runs the authentication exchange; returns whether the role is a superuser.
fn authenticate<S: Read + Write>(sh: &ServerShared, wire: &mut Wire<MaybeTls<S>>, peer: &Peer, database: &str, user: &str) -> Result<bool> {
    let origin = match peer {
        Peer::Unix => Origin::Local,
        Peer::Tcp(Some(a)) => Origin::Host(a.ip()),
        Peer::Tcp(None) => Origin::Host([0, 0, 0, 0].into()),
    };
    let method = sh.hba.method(origin, wire.stream.is_tls(), database, user)?;
    let roles = auth::load_roles(&sh.db.shared().dir)?;
    let role = roles.iter().find(|r| r.rolname == user);
    match method {
        Method::Reject => {
            let host = match origin {
                Origin::Local => "[local]".to_string(),
                Origin::Host(a) => a.to_string(),
            };
            Err(PgError::new(
                sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                format!("pg_hba.conf rejects connection for host \"{host}\", user \"{user}\", database \"{database}\", no encryption"),
            ))
        }
        Method::Trust => match role {
            Some(r) => Ok(r.rolsuper),
            None => Err(PgError::new(sqlstate::INVALID_AUTHORIZATION_SPECIFICATION, format!("role \"{user}\" does not exist"))),
        },
        Method::ScramSha256 => {
            let mut scram = ScramServer::new(role.and_then(|r| r.rolpassword.as_deref()), user);
            wire.send(B::Authentication(Authentication::SASL(vec!["SCRAM-SHA-256".to_string()])))?;
            wire.flush()?;
            let first = read_password_message(wire)?;
            let init = guarded(|| first.into_sasl_initial_response())?;
            if init.auth_method != "SCRAM-SHA-256" {
                return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "client selected an invalid SASL authentication mechanism"));
            }
            let data = init.data.unwrap_or_default();
            let server_first = scram.client_first(&data).map_err(|_| auth::password_failed(user))?;
            wire.send(B::Authentication(Authentication::SASLContinue(Bytes::from(server_first))))?;
            wire.flush()?;
            let second = read_password_message(wire)?;
            let resp = guarded(|| second.into_sasl_response())?;
            let server_final = scram.client_final(&resp.data).map_err(|_| auth::password_failed(user))?;
            wire.send(B::Authentication(Authentication::SASLFinal(Bytes::from(server_final))))?;
            Ok(role.is_some_and(|r| r.rolsuper))
        }
    }
}

fn guarded<T>(f: impl FnOnce() -> pgwire::error::PgWireResult<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        _ => Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "malformed SASL message")),
    }
}

fn read_password_message<S: Read + Write>(wire: &mut Wire<S>) -> Result<pgwire::messages::startup::PasswordMessageFamily> {
    match wire.read_message()? {
        F::PasswordMessageFamily(p) => Ok(p),
        _ => Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "expected SASL response")),
    }
}

/// A prepared statement of the extended protocol.
#[derive(Clone)]
struct Stmt {
    sql: String,
    /// DEALLOCATE / DISCARD: run by the connection ([`Conn::connection_command`]).
    conn_cmd: bool,
    /// None: answered by [`query::local`]. Shared: a Bind, Describe or Execute copies the
    /// handle, never the parsed statement.
    prepared: Option<Arc<Prepared>>,
    /// Each parameter's type: the client's OID where it gave one (not 0), else the type
    /// inferred from the parameter's use at Parse (`sql::param_types`), else text (what
    /// PostgreSQL resolves an unconstrained parameter to). Describe reports these; Bind
    /// decodes binary parameters by them.
    param_types: Vec<u32>,
}

impl Portal {
    /// Suspended at Execute's row limit with rows left to send.
    fn suspended(&self) -> bool {
        self.held.is_some() || self.result.as_ref().is_some_and(|r| r.returns_rows && self.rows_sent < r.rows.len())
    }
}

impl Stmt {
    fn nparams(&self) -> usize {
        self.prepared.as_ref().map_or(0, |p| p.nparams).max(self.param_types.len())
    }
}

/// A SQL cursor (`DECLARE`): its query ran at DECLARE under the transaction's snapshot and
/// its rows not yet fetched are held as a suspended portal's are (in memory up to
/// `work_mem`, then in a temporary file: a cursor over a large table takes no more memory
/// than that).
///
/// It closes with its transaction, unless declared WITH HOLD and that transaction commits:
/// it then stays until CLOSE or the session's end (its rows are already held, as PostgreSQL
/// materializes a holdable cursor at commit). ROLLBACK TO SAVEPOINT closes the cursors
/// declared since the savepoint ([`Conn::settle_cursors`]).
struct Cursor {
    /// The columns (names, types) and their sources; no rows.
    result: QueryResult,
    held: crate::exec::spill::HeldRows,
    /// The tables the query read: kept from DDL while the cursor's transaction lasts, as in
    /// PostgreSQL (`Session::in_use`); none once a held cursor outlives it.
    tables: Vec<u32>,
    /// Rows read so far (`server::cursor` invariant 1).
    pos: super::cursor::Position,
    /// WITH HOLD.
    hold: bool,
    /// The transaction it was declared in (`Session::ended_txns` then).
    declared_in: u64,
    /// The subtransactions open at DECLARE (`Session::open_subxacts`).
    subxacts: Vec<u64>,
    /// A WITH HOLD cursor whose transaction committed.
    persisted: bool,
    /// A FETCH or MOVE failed on it: it cannot run again (PostgreSQL's failed portal).
    failed: bool,
}

/// Where a cursor's query streams its rows at DECLARE.
struct CursorRows<'c> {
    cancel: &'c AtomicBool,
    held: crate::exec::spill::HeldRows,
    described: Option<Described>,
}

impl crate::sql::RowSink for CursorRows<'_> {
    fn columns(&mut self, columns: &[(String, String)], sources: &[Option<(u32, i16)>]) -> Result<()> {
        self.described = Some((columns.to_vec(), sources.to_vec()));
        Ok(())
    }

    fn row(&mut self, row: &[Option<String>]) -> Result<()> {
        if self.cancel.load(Ordering::SeqCst) {
            return Err(canceled());
        }
        self.held.push(row)
    }
}

/// A bound portal; its result is computed at its first Describe or Execute and then sent in
/// pieces of `max_rows` (portal suspension).
struct Portal {
    stmt: Stmt,
    params: Vec<Option<String>>,
    result_formats: Vec<i16>,
    result: Option<QueryResult>,
    rows_sent: usize,
    /// A query portal's rows not yet sent (it was suspended at Execute's row limit): held
    /// in memory up to `work_mem`, then in a temporary file; with their column types.
    held: Option<(crate::exec::spill::HeldRows, Vec<String>)>,
    /// The columns (names, types, sources) a streamed query's rows have, for Describe after
    /// Execute.
    described: Option<Described>,
    /// The tables a suspended query portal read, and the session's count of ended
    /// transactions when it was suspended: kept from DDL (55006) while that transaction
    /// lasts, as a cursor's are.
    tables: Vec<u32>,
    opened_in: u64,
}

/// A result's columns (name, type) and their sources, as RowDescription reports them.
type Described = (Vec<(String, String)>, Vec<Option<(u32, i16)>>);

struct Conn<'w, S: Read + Write> {
    wire: &'w mut Wire<S>,
    session: Session,
    gucs: SessionParams,
    user: String,
    superuser: bool,
    pid: i32,
    cancel: Arc<AtomicBool>,
    stmts: HashMap<String, Stmt>,
    portals: HashMap<String, Portal>,
    /// SQL cursors (`DECLARE`), closed at transaction end.
    cursors: HashMap<String, Cursor>,
    ignore_till_sync: bool,
    /// Set while a simple Query's own statement runs: its rows stream to the client.
    stream_rows: bool,
    /// While the pieces of a Query of several statements run (PostgreSQL's implicit
    /// transaction block: LOCK TABLE is allowed there).
    in_pieces: bool,
}

/// How a COPY statement talks to the client.
#[derive(Clone, Copy)]
struct CopyShape {
    binary: bool,
    columns: i16,
}

/// The COPY sub-protocol state shared by the STDIN reader and the STDOUT writer.
struct CopyState<'a, S: Read + Write> {
    wire: &'a mut Wire<S>,
    cancel: &'a AtomicBool,
    shape: Option<CopyShape>,
    in_started: bool,
    in_done: bool,
    in_buf: Bytes,
    out_started: bool,
    out_buf: Vec<u8>,
    /// Why the copy ended abnormally, to report instead of the engine's I/O error.
    abort: Option<PgError>,
}

fn canceled() -> PgError {
    PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to user request")
}

impl<S: Read + Write> CopyState<'_, S> {
    fn fail(&mut self, e: PgError) -> std::io::Error {
        let msg = e.message.clone();
        self.abort = Some(e);
        std::io::Error::other(msg)
    }

    fn shape(&self) -> CopyShape {
        self.shape.unwrap_or(CopyShape { binary: false, columns: 0 })
    }

    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.cancel.load(Ordering::SeqCst) {
            return Err(self.fail(canceled()));
        }
        if !self.in_started {
            self.in_started = true;
            let sh = self.shape();
            let fmt = i16::from(sh.binary);
            let m = B::CopyInResponse(CopyInResponse::new(fmt as i8, sh.columns, vec![fmt; sh.columns as usize]));
            self.wire.send(m).and_then(|_| self.wire.flush()).map_err(|e| self.fail(e))?;
        }
        while self.in_buf.is_empty() {
            if self.in_done {
                return Ok(0);
            }
            match self.wire.read_message() {
                Ok(F::CopyData(d)) => self.in_buf = d.data,
                Ok(F::CopyDone(_)) => self.in_done = true,
                Ok(F::CopyFail(f)) => {
                    self.in_done = true;
                    return Err(self.fail(PgError::new(sqlstate::QUERY_CANCELED, format!("COPY from stdin failed: {}", f.message))));
                }
                Ok(F::Flush(_)) | Ok(F::Sync(_)) => {}
                Ok(_) => {
                    self.in_done = true;
                    return Err(self.fail(PgError::new(sqlstate::PROTOCOL_VIOLATION, "unexpected message type during COPY from stdin")));
                }
                Err(e) => {
                    self.in_done = true;
                    return Err(self.fail(e));
                }
            }
            if self.cancel.load(Ordering::SeqCst) {
                return Err(self.fail(canceled()));
            }
        }
        let n = out.len().min(self.in_buf.len());
        out[..n].copy_from_slice(&self.in_buf[..n]);
        let _ = self.in_buf.split_to(n);
        Ok(n)
    }

    fn start_out(&mut self) -> Result<()> {
        if !self.out_started {
            self.out_started = true;
            let sh = self.shape();
            let fmt = i16::from(sh.binary);
            self.wire.send(B::CopyOutResponse(CopyOutResponse::new(fmt as i8, sh.columns, vec![fmt; sh.columns as usize])))?;
        }
        Ok(())
    }

    fn send_out(&mut self) -> Result<()> {
        if !self.out_buf.is_empty() {
            let data = Bytes::from(std::mem::take(&mut self.out_buf));
            self.wire.send(B::CopyData(CopyData::new(data)))?;
            if self.wire.pending_bytes() >= OUT_FLUSH_BYTES {
                self.wire.flush()?;
            }
        }
        Ok(())
    }

    /// One call is one row (`sql::CopyIo`'s contract): one CopyData message, as PostgreSQL
    /// sends.
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.cancel.load(Ordering::SeqCst) {
            return Err(self.fail(canceled()));
        }
        self.start_out().map_err(|e| self.fail(e))?;
        self.out_buf.extend_from_slice(data);
        self.send_out().map_err(|e| self.fail(e))?;
        Ok(data.len())
    }

    /// Ends COPY TO STDOUT: the rest of the data, then CopyDone (invariant 3).
    fn finish_out(&mut self) -> Result<()> {
        self.start_out()?;
        self.send_out()?;
        self.wire.send(B::CopyDone(CopyDone::new()))
    }
}

/// Streams a simple Query's rows to the client as DataRow messages (RowDescription first),
/// through the same wire state that COPY uses.
struct RowsOut<'s, 'w, S: Read + Write>(&'s RefCell<CopyState<'w, S>>);

impl<S: Read + Write> crate::sql::RowSink for RowsOut<'_, '_, S> {
    fn columns(&mut self, columns: &[(String, String)], sources: &[Option<(u32, i16)>]) -> Result<()> {
        let mut st = self.0.borrow_mut();
        st.wire.send(row_description(columns, sources, &[]))
    }

    fn row(&mut self, row: &[Option<String>]) -> Result<()> {
        let mut st = self.0.borrow_mut();
        let mut body = Vec::with_capacity(64);
        body.put_i16(row.len() as i16);
        for v in row {
            match v {
                None => body.put_i32(-1),
                Some(t) => {
                    body.put_i32(t.len() as i32);
                    body.put_slice(t.as_bytes());
                }
            }
        }
        st.wire.send_raw(b'D', &body);
        if st.wire.pending_bytes() >= OUT_FLUSH_BYTES {
            st.wire.flush()?;
        }
        if st.cancel.load(Ordering::SeqCst) {
            return Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to user request"));
        }
        Ok(())
    }
}

/// A DataRow's body for `row`: each value in its column's format (text, or binary from
/// the type's send function).
fn encode_data_row(row: &[Option<String>], types: &[String], formats: &[i16], body: &mut Vec<u8>, bin: &mut Vec<u8>) -> Result<()> {
    body.clear();
    body.put_i16(row.len() as i16);
    for (i, v) in row.iter().enumerate() {
        match v {
            None => body.put_i32(-1),
            Some(t) if format_for(formats, i) == 1 => {
                bin.clear();
                types::binary_value(&types[i], t, bin)?;
                body.put_i32(bin.len() as i32);
                body.put_slice(bin);
            }
            Some(t) => {
                body.put_i32(t.len() as i32);
                body.put_slice(t.as_bytes());
            }
        }
    }
    Ok(())
}

/// Streams an extended-protocol portal's rows (its RowDescription went at Describe): the
/// first `limit` go to the client as they are produced, the rest are held
/// ([`crate::exec::spill::HeldRows`]) for the next Execute.
struct PortalRows<'w, S: Read + Write> {
    wire: &'w mut Wire<S>,
    cancel: &'w AtomicBool,
    formats: Vec<i16>,
    types: Vec<String>,
    described: Option<Described>,
    limit: usize,
    sent: usize,
    held: crate::exec::spill::HeldRows,
    body: Vec<u8>,
    bin: Vec<u8>,
}

impl<S: Read + Write> crate::sql::RowSink for PortalRows<'_, S> {
    fn columns(&mut self, columns: &[(String, String)], sources: &[Option<(u32, i16)>]) -> Result<()> {
        self.types = columns.iter().map(|c| c.1.clone()).collect();
        self.described = Some((columns.to_vec(), sources.to_vec()));
        Ok(())
    }

    fn row(&mut self, row: &[Option<String>]) -> Result<()> {
        if self.cancel.load(Ordering::SeqCst) {
            return Err(canceled());
        }
        if self.sent >= self.limit {
            return self.held.push(row);
        }
        encode_data_row(row, &self.types, &self.formats, &mut self.body, &mut self.bin)?;
        self.wire.send_raw(b'D', &self.body);
        if self.wire.pending_bytes() >= OUT_FLUSH_BYTES {
            self.wire.flush()?;
        }
        self.sent += 1;
        Ok(())
    }
}

struct CopyIn<'r, 'a, S: Read + Write>(&'r RefCell<CopyState<'a, S>>);
struct CopyOut<'r, 'a, S: Read + Write>(&'r RefCell<CopyState<'a, S>>);

impl<S: Read + Write> Read for CopyIn<'_, '_, S> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().read(out)
    }
}

impl<S: Read + Write> Write for CopyOut<'_, '_, S> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(data)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// PostgreSQL's rule for server files: only superusers (`pg_read_server_files` /
/// `pg_write_server_files` in PostgreSQL) may COPY from or to a file or program.
fn check_server_file_access(superuser: bool, stmts: &[Statement]) -> Result<()> {
    if superuser {
        return Ok(());
    }
    for st in stmts {
        if let Statement::Copy { to, target, .. } = st {
            let (what, role) = match (to, target) {
                (_, CopyTarget::Stdin | CopyTarget::Stdout) => continue,
                (_, CopyTarget::Program { .. }) => ("COPY to or from an external program", "pg_execute_server_program"),
                (false, _) => ("COPY from a file", "pg_read_server_files"),
                (true, _) => ("COPY to a file", "pg_write_server_files"),
            };
            return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied to {what}"))
                .with_hint(format!("Only roles with privileges of the \"{role}\" role may {what}.")));
        }
    }
    Ok(())
}

/// The COPY shape of a statement (format and column count), if it is COPY FROM STDIN or TO STDOUT.
fn copy_shape(s: &Session, p: &Prepared) -> Option<CopyShape> {
    let Some(Statement::Copy { source, target, options, legacy_options, .. }) = &p.stmt else { return None };
    if !matches!(target, CopyTarget::Stdin | CopyTarget::Stdout) {
        return None;
    }
    let binary = options.iter().any(|o| matches!(o, CopyOption::Format(f) if f.value.eq_ignore_ascii_case("binary")))
        || legacy_options.iter().any(|o| matches!(o, CopyLegacyOption::Binary));
    let columns = match source {
        CopySource::Table { table_name, columns } if columns.is_empty() => {
            crate::catalog::relation_key(table_name).ok().and_then(|n| s.lookup_table(&n)).map_or(0, |t| t.columns.len())
        }
        CopySource::Table { columns, .. } => columns.len(),
        CopySource::Query(q) => crate::sql::query_width(s, q).unwrap_or(0),
    };
    Some(CopyShape { binary, columns: columns as i16 })
}

fn format_for(formats: &[i16], i: usize) -> i16 {
    match formats.len() {
        0 => 0,
        1 => formats[0],
        _ => formats.get(i).copied().unwrap_or(0),
    }
}

/// `DEALLOCATE [PREPARE] name | ALL`, `DISCARD ALL | PLANS | TEMP | SEQUENCES`, SQL-level
/// `PREPARE` / `EXECUTE`, and cursors (`DECLARE ... CURSOR FOR`, `FETCH`, `CLOSE`): statements
/// about the connection's own objects. None for any other text.
fn connection_statement(sql: &str) -> Option<Statement> {
    let first = skip_comments(sql).split(|c: char| !c.is_ascii_alphabetic()).next()?.to_ascii_lowercase();
    if !matches!(first.as_str(), "deallocate" | "discard" | "prepare" | "execute" | "declare" | "close") {
        return None;
    }
    let parsed = crate::sql::statements(sql).ok()?;
    match parsed.as_slice() {
        [st @ (Statement::Deallocate { .. }
        | Statement::Discard { .. }
        | Statement::Prepare { .. }
        | Statement::Execute { .. }
        | Statement::Declare { .. }
        | Statement::Close { .. })] => Some(st.clone()),
        _ => None,
    }
}

/// `sql` after its leading space and comments (`-- ...` lines, `/* ... */`, nested).
fn skip_comments(sql: &str) -> &str {
    let mut t = sql.trim_start();
    loop {
        if let Some(rest) = t.strip_prefix("--") {
            t = rest.find('\n').map_or("", |i| &rest[i..]).trim_start();
        } else if t.starts_with("/*") {
            let mut depth = 0usize;
            let mut end = None;
            let b = t.as_bytes();
            let mut i = 0;
            while i + 1 < b.len() {
                if b[i] == b'/' && b[i + 1] == b'*' {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b[i + 1] == b'/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            match end {
                Some(e) => t = t[e..].trim_start(),
                None => return t,
            }
        } else {
            return t;
        }
    }
}

/// The query of a `DECLARE ... CURSOR FOR query`, as text (its parameters `$n` kept).
fn declared_query(sql: &str) -> Option<String> {
    match connection_statement(sql)? {
        Statement::Declare { stmts } => match stmts.as_slice() {
            [d] => d.for_query.as_ref().map(|q| q.to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// A locking clause's words (`FOR NO KEY UPDATE`, ...), as PostgreSQL's errors name it.
fn locking_clause_name(l: &sqlparser::ast::LockClause) -> &'static str {
    crate::sql::query::lock_strength(l).0.clause()
}

/// `FETCH ...` (false) or `MOVE ...` (true): read by `server::cursor`, not sqlparser (which
/// takes few of PostgreSQL's forms).
fn fetch_or_move(sql: &str) -> Option<bool> {
    let t = skip_comments(sql);
    let word = |k: &str| {
        t.get(..k.len()).is_some_and(|w| w.eq_ignore_ascii_case(k))
            && t[k.len()..].chars().next().is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$'))
    };
    if word("fetch") {
        Some(false)
    } else if word("move") {
        Some(true)
    } else {
        None
    }
}

/// Whether [`Conn::connection_command`] runs `sql`.
fn is_connection_command(sql: &str) -> bool {
    connection_statement(sql).is_some() || fetch_or_move(sql).is_some() || crate::sql::is_checkpoint(sql) || crate::sql::lock::is_lock(sql)
}

/// Whether a piece of a simple Query must run on its own: a connection command, or a
/// statement the engine reads only alone (CHECKPOINT, RESET of an engine setting).
fn runs_alone(sql: &str) -> bool {
    is_connection_command(sql) || crate::sql::is_reset(sql) || is_copy(sql)
}

/// Whether `sql` is a COPY: in a Query of several statements it runs as a piece of its own,
/// so that the results of the statements before it are sent before its copy data.
fn is_copy(sql: &str) -> bool {
    let t = sql.trim_start();
    t.len() >= 4 && t[..4].eq_ignore_ascii_case("copy") && !t[4..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

fn no_cursor(name: &str) -> PgError {
    PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("cursor \"{name}\" does not exist"))
}

impl<S: Read + Write> Conn<'_, S> {
    /// Runs a [`connection_statement`]. DEALLOCATE ALL drops every prepared statement, the
    /// protocol's named ones included, as PostgreSQL; DISCARD ALL also closes portals and
    /// resets the session's parameters and transaction characteristics (and, like
    /// PostgreSQL, refuses to run inside a transaction block). DISCARD TEMP (and ALL) drops
    /// the session's temporary relations in the current transaction. DISCARD SEQUENCES forgets
    /// what `currval` / `lastval` would return.
    ///
    /// `params`: a DECLARE's parameter types and values (the extended protocol's Bind).
    fn connection_command(&mut self, sql: &str, params: Option<(&[u32], &[Option<String>])>) -> Option<Result<QueryResult>> {
        if let Some(is_move) = fetch_or_move(sql) {
            return Some(self.fetch(sql, is_move));
        }
        if let Some(stmt) = crate::sql::lock::parse(sql) {
            let in_block = self.in_pieces || self.session.in_transaction_block();
            return Some(stmt.and_then(|stmt| crate::sql::lock::run(&mut self.session, stmt, in_block)));
        }
        if crate::sql::is_checkpoint(sql) {
            // PostgreSQL 15: superusers and members of pg_checkpoint (heapstore has no role
            // membership: superusers).
            if !self.superuser {
                return Some(Err(PgError::new(
                    sqlstate::INSUFFICIENT_PRIVILEGE,
                    "must be superuser or have privileges of pg_checkpoint to do CHECKPOINT",
                )));
            }
            return Some(crate::sql::checkpoint(&self.session));
        }
        let st = connection_statement(sql)?;
        let fail_if_aborted = |s: &Session| -> Result<()> {
            if s.txn.as_ref().is_some_and(|t| t.failed) {
                return Err(PgError::new(
                    sqlstate::IN_FAILED_SQL_TRANSACTION,
                    "current transaction is aborted, commands ignored until end of transaction block",
                ));
            }
            Ok(())
        };
        if let Err(e) = fail_if_aborted(&self.session) {
            return Some(Err(e));
        }
        Some(match st {
            Statement::Deallocate { name, .. } => {
                if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
                    self.stmts.clear();
                    Ok(crate::sql::tag("DEALLOCATE ALL"))
                } else {
                    let n = crate::catalog::fold_ident(&name);
                    match self.stmts.remove(&n) {
                        Some(_) if !n.is_empty() => Ok(crate::sql::tag("DEALLOCATE")),
                        _ => Err(PgError::new(sqlstate::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{n}\" does not exist"))),
                    }
                }
            }
            Statement::Discard { object_type } => {
                use sqlparser::ast::DiscardObject;
                match object_type {
                    DiscardObject::ALL => {
                        if self.session.in_transaction_block() {
                            return Some(Err(PgError::new(
                                sqlstate::ACTIVE_SQL_TRANSACTION,
                                "DISCARD ALL cannot run inside a transaction block",
                            )));
                        }
                        self.session.begin_implicit();
                        if let Err(e) = self.session.discard_temp() {
                            return Some(Err(e));
                        }
                        self.session.forget_sequence_values();
                        self.session.unlock_all_advisory();
                        self.stmts.clear();
                        self.portals.clear();
                        self.cursors.clear();
                        self.gucs.reset_all();
                        if let Err(e) = self.session.reset_session_settings() {
                            return Some(Err(e));
                        }
                        self.session.set_client_settings(self.gucs.pairs());
                        Ok(crate::sql::tag("DISCARD ALL"))
                    }
                    DiscardObject::PLANS => {
                        for st in self.stmts.values() {
                            if let Some(p) = &st.prepared {
                                p.forget_plan();
                            }
                        }
                        Ok(crate::sql::tag("DISCARD PLANS"))
                    }
                    DiscardObject::TEMP => {
                        self.session.begin_implicit();
                        self.session.discard_temp().map(|()| crate::sql::tag("DISCARD TEMP"))
                    }
                    DiscardObject::SEQUENCES => {
                        self.session.forget_sequence_values();
                        Ok(crate::sql::tag("DISCARD SEQUENCES"))
                    }
                }
            }
            Statement::Prepare { name, data_types, statement } => self.sql_prepare(&name, &data_types, &statement),
            Statement::Execute {
                name: Some(name),
                parameters,
                has_parentheses: _,
                immediate: false,
                into,
                using,
                output: false,
                default: false,
            } if into.is_empty() && using.is_empty() => self.sql_execute(&name.to_string(), &parameters),
            Statement::Declare { stmts } => self.declare(stmts, params),
            Statement::Close { cursor } => match cursor {
                sqlparser::ast::CloseCursor::All => {
                    self.cursors.clear();
                    Ok(crate::sql::tag("CLOSE CURSOR ALL"))
                }
                sqlparser::ast::CloseCursor::Specific { name } => {
                    let n = crate::catalog::fold_ident(&name);
                    match self.cursors.remove(&n) {
                        Some(_) => Ok(crate::sql::tag("CLOSE CURSOR")),
                        None => Err(no_cursor(&n)),
                    }
                }
            },
            _ => Err(PgError::feature("this form of the statement is not supported by heapstore")),
        })
    }

    /// SQL-level `PREPARE name [(types)] AS statement`: a prepared statement in the same
    /// namespace as the protocol's (as in PostgreSQL).
    fn sql_prepare(
        &mut self,
        name: &sqlparser::ast::Ident,
        data_types: &[sqlparser::ast::DataType],
        st: &Statement,
    ) -> Result<QueryResult> {
        let n = crate::catalog::fold_ident(name);
        if self.stmts.contains_key(&n) {
            return Err(PgError::new(sqlstate::DUPLICATE_PSTATEMENT, format!("prepared statement \"{n}\" already exists")));
        }
        let mut oids = Vec::with_capacity(data_types.len());
        for dt in data_types {
            oids.push(crate::sql::ddl::sql_type(dt)?.pg_oid());
        }
        let sql = st.to_string();
        if connection_statement(&sql).is_some() {
            return Err(PgError::feature("PREPARE of this statement is not supported by heapstore"));
        }
        self.parse(n, sql, oids, false)?;
        Ok(crate::sql::tag("PREPARE"))
    }

    /// SQL-level `EXECUTE name [(constants)]`: runs the prepared statement with the constants as
    /// its parameters (text form, read by each parameter's type).
    fn sql_execute(&mut self, name: &str, args: &[sqlparser::ast::Expr]) -> Result<QueryResult> {
        let n = name.to_ascii_lowercase();
        let stmt = self
            .stmts
            .get(&n)
            .cloned()
            .ok_or_else(|| PgError::new(sqlstate::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{n}\" does not exist")))?;
        if args.len() != stmt.nparams() {
            return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("wrong number of parameters for prepared statement \"{n}\""))
                .with_detail(format!("Expected {} parameters but got {}.", stmt.nparams(), args.len())));
        }
        let mut params = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            params.push(crate::sql::execute_argument(a, i + 1, stmt.param_types.get(i).copied().unwrap_or(0))?);
        }
        let Some(prep) = &stmt.prepared else {
            return Err(PgError::feature("EXECUTE of this statement is not supported by heapstore"));
        };
        if prep.is_empty() {
            return Ok(QueryResult::default());
        }
        Ok(self.run_engine(&stmt.sql, Some((prep, &params)))?.pop().unwrap_or_default())
    }

    /// `DECLARE name [NO SCROLL] CURSOR [WITH HOLD | WITHOUT HOLD] FOR query`: inside a
    /// transaction block (a Query of several statements is one) unless WITH HOLD. `params`:
    /// the values of the query's `$n` (the extended protocol's Bind), by their types.
    fn declare(&mut self, stmts: Vec<sqlparser::ast::Declare>, params: Option<(&[u32], &[Option<String>])>) -> Result<QueryResult> {
        let [d] = stmts.as_slice() else { return Err(PgError::feature("DECLARE of several cursors is not supported")) };
        let sqlparser::ast::Declare { names, data_type, assignment, declare_type, binary, sensitive: _, scroll, hold, for_query } = d;
        let ([name], None, None, Some(sqlparser::ast::DeclareType::Cursor), Some(q)) =
            (names.as_slice(), data_type, assignment, declare_type, for_query)
        else {
            return Err(PgError::feature("this DECLARE form is not supported by heapstore"));
        };
        if binary == &Some(true) {
            return Err(PgError::feature("DECLARE BINARY CURSOR is not supported by heapstore"));
        }
        if scroll == &Some(true) {
            return Err(PgError::feature("SCROLL cursors are not supported by heapstore"));
        }
        let hold = hold == &Some(true);
        if let (true, Some(lock)) = (hold, q.locks.first()) {
            return Err(PgError::feature(format!("DECLARE CURSOR WITH HOLD ... {} is not supported", locking_clause_name(lock)))
                .with_detail("Holdable cursors must be READ ONLY."));
        }
        if !hold && !self.in_pieces && !self.session.in_transaction_block() {
            return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, "DECLARE CURSOR can only be used in transaction blocks"));
        }
        let n = crate::catalog::fold_ident(name);
        // A protocol portal of the transaction under way (bound, or suspended) has the name
        // too: portals and cursors share one namespace, as in PostgreSQL.
        let now = self.session.ended_txns;
        let live_portal = self.portals.get(&n).is_some_and(|p| p.result.is_none() || (p.suspended() && p.opened_in == now));
        if self.cursors.contains_key(&n) || (live_portal && !n.is_empty()) {
            return Err(PgError::new("42P03", format!("cursor \"{n}\" already exists")));
        }
        let mut prep = crate::sql::prepare(&q.to_string())?;
        let values = match params {
            Some((types, values)) => {
                crate::sql::declare_param_types(&mut prep, types);
                values
            }
            None => &[],
        };
        let held = crate::exec::spill::HeldRows::new(
            self.session.shared.vfs.clone(),
            &self.session.shared.dir,
            self.session.work_mem_bytes() as usize,
            self.session.temp_file_limit_kb(),
        );
        let (declared_in, subxacts) = (self.session.ended_txns, self.session.open_subxacts());
        Self::begin_statement(&self.cancel, &self.gucs);
        self.refresh_in_use();
        let mut sink = CursorRows { cancel: &self.cancel, held, described: None };
        let r = {
            let mut io = CopyIo { stdin: None, stdout: None, rows: Some(&mut sink) };
            crate::sql::execute_prepared_until_sync(&mut self.session, &prep, values, &mut io)
        };
        let CursorRows { mut held, described, .. } = sink;
        let mut r = r?;
        if r.returns_rows {
            // The query answered with its rows (it did not stream): held the same way.
            for row in std::mem::take(&mut r.rows) {
                held.push(&row)?;
            }
        } else if let Some((columns, sources)) = described {
            r.columns = columns;
            r.column_sources = sources;
            r.returns_rows = true;
        } else {
            return Err(PgError::syntax("cursor's query must be a SELECT"));
        }
        held.flush_file()?;
        let tables = crate::sql::query_tables(&self.session, q);
        let pos = Default::default();
        let persisted = false;
        self.cursors.insert(n, Cursor { result: r, held, tables, pos, hold, declared_in, subxacts, persisted, failed: false });
        Ok(crate::sql::tag("DECLARE CURSOR"))
    }

    /// Closes the SQL cursors whose (sub)transaction is over (`Session::log_ends`): once the
    /// transaction it was declared in has ended, every cursor but a WITH HOLD one whose
    /// transaction committed; those declared since a savepoint ROLLBACK TO went back to
    /// (PostgreSQL's portals of an aborted subtransaction). Called after every statement and
    /// at every ReadyForQuery, it takes the session's lists whether or not cursors are open.
    fn settle_cursors(&mut self) {
        let committed = std::mem::take(&mut self.session.committed_log);
        let undone = std::mem::take(&mut self.session.undone_log);
        if self.cursors.is_empty() {
            return;
        }
        let now = self.session.ended_txns;
        self.cursors.retain(|_, c| {
            if c.persisted {
                return true;
            }
            if c.subxacts.iter().any(|id| undone.contains(id)) {
                return false;
            }
            if c.declared_in == now {
                return true;
            }
            if c.hold && committed.contains(&c.declared_in) {
                c.persisted = true;
                c.tables.clear();
                return true;
            }
            false
        });
    }

    /// `FETCH [direction] [FROM | IN] name` and `MOVE ...` (`is_move`): the next rows of a
    /// cursor, or of a portal of the extended protocol for MOVE (the same namespace, as in
    /// PostgreSQL). Forward-only: what goes back fails as for a NO SCROLL cursor
    /// (`server::cursor`), and the cursor cannot run again.
    fn fetch(&mut self, sql: &str, is_move: bool) -> Result<QueryResult> {
        // Parsed first: a syntax error is reported as such in a failed block too.
        let (dir, name) = super::cursor::parse(sql)?;
        if self.session.txn.as_ref().is_some_and(|t| t.failed) {
            return Err(failed_block_error());
        }
        let verb = if is_move { "MOVE" } else { "FETCH" };
        if let Some(c) = self.cursors.get_mut(&name) {
            if c.failed {
                return Err(PgError::new("55000", format!("portal \"{name}\" cannot be run")));
            }
            let r = Self::fetch_cursor(c, dir, is_move);
            if r.is_err() {
                c.failed = true;
            }
            return r;
        }
        if !self.portals.contains_key(&name) {
            return Err(no_cursor(&name));
        }
        // A portal of the extended protocol: MOVE forward only.
        let n = match (is_move, dir) {
            (true, super::cursor::Direction::Forward(n)) if n > 0 => n,
            (true, super::cursor::Direction::Forward(_)) => {
                return Err(PgError::feature("MOVE 0 of a portal is not supported by heapstore"))
            }
            (true, _) => return Err(super::cursor::forward_only()),
            (false, _) => return Err(PgError::feature(format!("{verb} of a protocol portal is not supported by heapstore"))),
        };
        let moved = if self.portals.get(&name).is_some_and(|p| p.held.is_some()) {
            let (held, _) = self.portals.get_mut(&name).and_then(|p| p.held.as_mut()).expect("checked");
            let mut take = 0usize;
            while (take as u64) < n && held.pop()?.is_some() {
                take += 1;
            }
            take
        } else {
            self.run_portal(&name)?;
            let p = self.portals.get_mut(&name).expect("checked");
            let total = p.result.as_ref().map_or(0, |r| r.rows.len());
            let take = (total - p.rows_sent.min(total)).min(n.min(usize::MAX as u64) as usize);
            p.rows_sent += take;
            take
        };
        Ok(crate::sql::tag(&format!("MOVE {moved}")))
    }

    /// One FETCH or MOVE of a SQL cursor (`server::cursor::plan`).
    fn fetch_cursor(c: &mut Cursor, dir: super::cursor::Direction, is_move: bool) -> Result<QueryResult> {
        use super::cursor::Step;
        let (skip, take, lands) = match super::cursor::plan(dir, c.pos, is_move)? {
            Step::Stay(n) => return Ok(crate::sql::tag(&format!("MOVE {n}"))),
            Step::Read { skip, take, lands } => (skip, take, lands),
        };
        let mut skipped = 0u64;
        while skipped < skip && c.held.pop()?.is_some() {
            skipped += 1;
        }
        let mut rows = Vec::new();
        let mut moved = 0u64;
        if skipped == skip {
            while moved < take {
                match c.held.pop()? {
                    Some(row) => {
                        if !is_move {
                            rows.push(row);
                        }
                        moved += 1;
                    }
                    None => break,
                }
            }
        }
        c.pos.read += skipped + moved;
        if skipped + moved < skip.saturating_add(take) {
            c.pos.at_end = true;
        }
        let count = if lands { u64::from(moved > 0) } else { moved };
        if is_move {
            return Ok(crate::sql::tag(&format!("MOVE {count}")));
        }
        Ok(QueryResult {
            tag: format!("FETCH {count}"),
            columns: c.result.columns.clone(),
            rows,
            returns_rows: true,
            column_sources: c.result.column_sources.clone(),
            ..Default::default()
        })
    }

    fn status(&self) -> TransactionStatus {
        match &self.session.txn {
            Some(t) if t.failed => TransactionStatus::Error,
            Some(t) if t.explicit => TransactionStatus::Transaction,
            _ => TransactionStatus::Idle,
        }
    }

    fn ready(&mut self) -> Result<()> {
        // Cursors (but held ones) and portals live until their transaction ends (PostgreSQL's
        // protocol portals are not holdable): outside a block, the Sync that ends the
        // implicit transaction.
        self.settle_cursors();
        if self.session.txn.is_none() {
            self.portals.clear();
        }
        // Settings an abort or commit put back (the session's invariant 10), reported as
        // PostgreSQL reports them: before ReadyForQuery.
        if let Some(pairs) = self.session.take_restored_client_settings() {
            for (n, v) in self.gucs.restore(&pairs) {
                self.wire.send(B::ParameterStatus(ParameterStatus::new(n, v)))?;
            }
        }
        let st = self.status();
        self.wire.send(B::ReadyForQuery(ReadyForQuery::new(st)))?;
        self.wire.flush()
    }

    fn main_loop(&mut self) -> Result<()> {
        loop {
            // Invariant 3 of `wire`: flush only when the next read could block.
            if !self.wire.input_pending() {
                self.wire.flush()?;
            }
            let msg = self.wire.read_message()?;
            // Invariant 2: after an extended-protocol error everything up to Sync is dropped
            // (a Query too, as PostgreSQL does).
            if self.ignore_till_sync && !matches!(msg, F::Sync(_) | F::Terminate(_)) {
                continue;
            }
            if matches!(msg, F::Query(_) | F::Parse(_) | F::Bind(_) | F::Execute(_)) {
                // statement_timestamp(), per message as in PostgreSQL.
                self.session.mark_statement_start();
            }
            let r = match msg {
                F::Query(q) => {
                    self.simple_query(&q.query)?;
                    self.ready()?;
                    Ok(())
                }
                F::Parse(p) => self.parse(p.name.unwrap_or_default(), p.query, p.type_oids, true),
                F::Bind(b) => self.bind(b),
                F::Describe(d) => self.describe(d.target_type, d.name.unwrap_or_default()),
                F::Execute(e) => self.execute(e.name.unwrap_or_default(), e.max_rows),
                F::Close(c) => {
                    let name = c.name.unwrap_or_default();
                    if c.target_type == b'S' {
                        self.stmts.remove(&name);
                    } else {
                        self.portals.remove(&name);
                    }
                    self.wire.send(B::CloseComplete(CloseComplete::new()))
                }
                F::Sync(_) => {
                    self.ignore_till_sync = false;
                    self.portals.remove("");
                    // The implicit transaction of the messages since the last Sync commits
                    // here (an error already rolled it back).
                    if let Err(e) = crate::sql::end_implicit(&mut self.session) {
                        if is_disconnect(&e) {
                            return Err(e);
                        }
                        send_error(self.wire, &e, "ERROR")?;
                    }
                    self.ready()?;
                    Ok(())
                }
                F::Flush(_) => self.wire.flush(),
                F::Terminate(_) => return Ok(()),
                // Left over from a COPY FROM STDIN that failed (invariant 3).
                F::CopyData(_) | F::CopyDone(_) | F::CopyFail(_) => Ok(()),
                _ => return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "unexpected message type")),
            };
            // statement_timeout covers the message whose statement set it: the Sync that
            // commits afterwards is not timed, as PostgreSQL disables the timeout before it
            // commits. A cancel request that arrives between messages is forgotten, as
            // PostgreSQL forgets one that arrives while it is idle (it would otherwise stop the
            // next lock wait, even one in a Parse).
            crate::interrupt::set_statement_timeout(None);
            self.cancel.store(false, Ordering::SeqCst);
            if let Err(e) = r {
                if is_disconnect(&e) {
                    return Err(e);
                }
                // An error anywhere before the Sync (Parse, Bind, Execute) aborts what the
                // messages since the last Sync did: the implicit transaction rolls back, a
                // block fails.
                if self.session.in_transaction_block() {
                    self.session.mark_failed();
                } else {
                    self.session.rollback();
                }
                send_error(self.wire, &e, "ERROR")?;
                self.ignore_till_sync = true;
            }
        }
    }

    /// Sends a result's notices, and its rows unless `rows` is false.
    fn send_rows(&mut self, r: &QueryResult, from: usize, count: usize, formats: &[i16]) -> Result<()> {
        let mut body = Vec::new();
        let mut bin = Vec::new();
        let types: Vec<String> = r.columns.iter().map(|c| c.1.clone()).collect();
        for row in r.rows.iter().skip(from).take(count) {
            encode_data_row(row, &types, formats, &mut body, &mut bin)?;
            self.wire.send_raw(b'D', &body);
            if self.wire.pending_bytes() >= OUT_FLUSH_BYTES {
                self.wire.flush()?;
            }
        }
        Ok(())
    }

    /// Each column's name, source table OID and column number (0 for computed columns), type
    /// OID, size, type modifier and format, as PostgreSQL's RowDescription.
    fn row_description(columns: &[(String, String)], sources: &[Option<(u32, i16)>], formats: &[i16]) -> B {
        row_description(columns, sources, formats)
    }

    /// Whether the session is in a transaction block that failed.
    fn failed_block(&self) -> bool {
        self.session.txn.as_ref().is_some_and(|t| t.failed)
    }

    fn complete(&mut self, r: &QueryResult) -> Result<()> {
        self.wire.send(B::CommandComplete(CommandComplete::new(r.tag.clone())))
    }

    /// The tables open cursors and suspended portals read, for the session's DDL to refuse
    /// (`Session::in_use`): set before each statement runs.
    fn refresh_in_use(&mut self) {
        self.session.in_use = Self::in_use(&self.cursors, &self.portals, self.session.ended_txns);
    }

    /// What [`Conn::refresh_in_use`] sets (`now`: the session's count of ended transactions).
    fn in_use(cursors: &HashMap<String, Cursor>, portals: &HashMap<String, Portal>, now: u64) -> Vec<(u32, Vec<u64>)> {
        let cursors = cursors.values().flat_map(|c| c.tables.iter().map(|t| (*t, c.subxacts.clone())));
        let portals =
            portals.values().filter(|p| p.suspended() && p.opened_in == now).flat_map(|p| p.tables.iter().map(|t| (*t, Vec::new())));
        cursors.chain(portals).collect()
    }

    /// A statement starts: an earlier cancel request is forgotten, and `statement_timeout`
    /// (when not 0) sets its deadline (`crate::interrupt`).
    fn begin_statement(cancel: &AtomicBool, gucs: &SessionParams) {
        cancel.store(false, Ordering::SeqCst);
        let ms = gucs.get("statement_timeout").and_then(crate::config::parse_time_ms).unwrap_or(0);
        crate::interrupt::set_statement_timeout((ms > 0).then(|| std::time::Duration::from_millis(ms)));
    }

    /// Runs one statement of the engine with COPY connected to the client.
    fn run_engine(&mut self, sql: &str, prepared: Option<(&Prepared, &[Option<String>])>) -> Result<Vec<QueryResult>> {
        self.run_engine_as(sql, prepared, false)
    }

    /// `hold`: a simple-query text runs without ending its implicit transaction (it is one
    /// piece of a Query that [`Conn::simple_query`] ends).
    fn run_engine_as(&mut self, sql: &str, prepared: Option<(&Prepared, &[Option<String>])>, hold: bool) -> Result<Vec<QueryResult>> {
        let (done, r) = self.run_engine_partial(sql, prepared, hold);
        r.map(|()| done)
    }

    /// As [`Conn::run_engine_as`], but an error comes with the results of the statements of
    /// `sql` that completed before it (see [`crate::sql::execute_partial`]).
    fn run_engine_partial(
        &mut self,
        sql: &str,
        prepared: Option<(&Prepared, &[Option<String>])>,
        hold: bool,
    ) -> (Vec<QueryResult>, Result<()>) {
        Self::begin_statement(&self.cancel, &self.gucs);
        self.refresh_in_use();
        if !self.superuser {
            let r = match prepared {
                Some((p, _)) => check_server_file_access(false, p.stmt.as_slice()),
                // A text that does not parse fails in the engine the same way, running nothing.
                None if sql.to_ascii_lowercase().contains("copy") => {
                    check_server_file_access(false, &crate::sql::statements(sql).unwrap_or_default())
                }
                None => Ok(()),
            };
            if let Err(e) = r {
                return (Vec::new(), Err(e));
            }
        }
        let shape = match prepared {
            Some((p, _)) => copy_shape(&self.session, p),
            // Parsed a second time only when it may be a COPY.
            None if sql.to_ascii_lowercase().contains("copy") => crate::sql::prepare(sql).ok().and_then(|p| copy_shape(&self.session, &p)),
            None => None,
        };
        let state = RefCell::new(CopyState {
            wire: &mut *self.wire,
            cancel: &self.cancel,
            shape,
            in_started: false,
            in_done: false,
            in_buf: Bytes::new(),
            out_started: false,
            out_buf: Vec::new(),
            abort: None,
        });
        let r = {
            let mut rd = CopyIn(&state);
            let mut wr = CopyOut(&state);
            let mut rows = RowsOut(&state);
            // A simple Query's rows go out as they are produced (an extended-protocol portal
            // keeps its rows for Execute's row limit).
            let sink: Option<&mut dyn crate::sql::RowSink> = if prepared.is_none() && self.stream_rows { Some(&mut rows) } else { None };
            let mut io = CopyIo { stdin: Some(&mut rd), stdout: Some(&mut wr), rows: sink };
            match prepared {
                Some((p, params)) => match crate::sql::execute_prepared_until_sync(&mut self.session, p, params, &mut io) {
                    Ok(r) => (vec![r], Ok(())),
                    Err(e) => (Vec::new(), Err(e)),
                },
                None => crate::sql::execute_partial(&mut self.session, sql, &mut io, !hold),
            }
        };
        let (done, r) = r;
        let mut st = state.into_inner();
        let r = match r {
            Ok(()) if done.iter().any(|r| r.wrote_to_client) || st.out_started => st.finish_out(),
            Ok(()) => Ok(()),
            // (A COPY in a Query of several statements runs as a piece of its own: a failing
            // statement never follows one here.)
            Err(e) => Err(st.abort.take().unwrap_or(e)),
        };
        (done, r)
    }

    fn simple_query(&mut self, sql: &str) -> Result<()> {
        if sql.trim().trim_end_matches(';').trim().is_empty() {
            return self.wire.send(B::EmptyQueryResponse(EmptyQueryResponse::new()));
        }
        // A Query that mixes connection statements (PREPARE, EXECUTE, DECLARE, FETCH, ...)
        // with others: its pieces run in order, in one implicit transaction as any Query's.
        // So does one with a statement answered here (SET, SHOW, RESET of session parameters):
        // each piece is answered on its own, never read as part of another.
        let pieces = if sql.contains(';') { crate::sql::split_statements(sql).unwrap_or_default() } else { Vec::new() };
        let piecewise = pieces.len() > 1
            && pieces.iter().any(|p| {
                runs_alone(p) || {
                    let mut probe = self.gucs.clone();
                    probe.probe = true;
                    query::local(&mut probe, &mut self.session, &self.user, self.pid, p).is_some()
                }
            });
        if piecewise {
            // The Query's implicit transaction starts before its first piece, so that an
            // abort also undoes a SET among them, as in PostgreSQL.
            if !self.session.in_transaction_block() {
                self.session.begin_implicit();
            }
            // Each piece's results go out before the next piece runs (a COPY streams its data
            // while it runs); the last piece's wait for the Query's commit.
            let mut pending: Vec<QueryResult> = Vec::new();
            let mut failed = None;
            for p in &pieces {
                self.send_done(std::mem::take(&mut pending))?;
                self.in_pieces = true;
                let r = self.connection_command(p, None);
                self.in_pieces = false;
                let (done, r) = match r {
                    Some(Ok(r)) => (vec![r], Ok(())),
                    Some(Err(e)) => (Vec::new(), Err(e)),
                    None => self.local_or_engine(p, true)?,
                };
                pending.extend(done);
                // Cursors end with their transaction (a COMMIT or ROLLBACK piece) or savepoint.
                self.settle_cursors();
                if let Err(e) = r {
                    failed = Some(e);
                    break;
                }
            }
            let r = match failed {
                None => crate::sql::end_implicit(&mut self.session).inspect_err(|_| {
                    // PostgreSQL commits before the last statement's CommandComplete: a failed
                    // commit sends the error instead.
                    pending.pop();
                }),
                Some(e) => Err(e),
            };
            if r.is_err() {
                if self.session.in_transaction_block() {
                    self.session.mark_failed();
                } else {
                    self.session.rollback();
                }
            }
            return self.send_results(pending, r);
        }
        let conn_cmd = self.connection_command(sql, None).map(|r| {
            // EXECUTE ran in an implicit transaction that ends with the Query, as any
            // statement of a simple Query does.
            let r = r.and_then(|r| crate::sql::end_implicit(&mut self.session).map(|()| r));
            if r.is_err() {
                // As any statement's error: the block fails, an implicit transaction ends.
                if self.session.in_transaction_block() {
                    self.session.mark_failed();
                } else {
                    self.session.rollback();
                }
            }
            match r {
                Ok(r) => (vec![r], Ok(())),
                Err(e) => (Vec::new(), Err(e)),
            }
        });
        let (done, r) = match conn_cmd {
            Some(r) => r,
            None => {
                self.stream_rows = true;
                let r = self.local_or_engine(sql, false);
                self.stream_rows = false;
                r?
            }
        };
        self.send_results(done, r)
    }

    /// A statement [`query::local`] answers (its ParameterStatus reports sent), else the
    /// engine's run of `sql` (`hold`: see [`Conn::run_engine_as`]): the results of the
    /// statements that completed, and the statement error that stopped the rest. The outer
    /// error is the connection's (a failed send).
    fn local_or_engine(&mut self, sql: &str, hold: bool) -> Result<(Vec<QueryResult>, Result<()>)> {
        Ok(match query::local(&mut self.gucs, &mut self.session, &self.user, self.pid, sql) {
            Some(Ok(o)) => {
                for (n, v) in o.report {
                    self.wire.send(B::ParameterStatus(ParameterStatus::new(n, v)))?;
                }
                (vec![o.result], Ok(()))
            }
            Some(Err(e)) => (Vec::new(), Err(e)),
            None => self.run_engine_partial(sql, None, hold),
        })
    }

    /// A simple Query's results to the client: those of the statements that completed, in
    /// order, then the error that stopped the rest (PostgreSQL sends each statement's
    /// CommandComplete as it completes, so a client sees them before the error).
    fn send_results(&mut self, done: Vec<QueryResult>, r: Result<()>) -> Result<()> {
        if matches!(&r, Err(e) if is_disconnect(e)) {
            return r;
        }
        self.send_done(done)?;
        match r {
            Ok(()) => Ok(()),
            Err(e) => send_error(self.wire, &e, "ERROR"),
        }
    }

    /// Statements' results to the client, in order: notices, rows, CommandComplete.
    fn send_done(&mut self, done: Vec<QueryResult>) -> Result<()> {
        for r in &done {
            for n in &r.notices {
                send_notice(self.wire, n)?;
            }
            if r.returns_rows {
                self.wire.send(Self::row_description(&r.columns, &r.column_sources, &[]))?;
                self.send_rows(r, 0, usize::MAX, &[])?;
            }
            self.complete(r)?;
        }
        Ok(())
    }

    fn parse(&mut self, name: String, sql: String, type_oids: Vec<u32>, reply: bool) -> Result<()> {
        if !name.is_empty() && self.stmts.contains_key(&name) {
            return Err(PgError::new(sqlstate::DUPLICATE_PSTATEMENT, format!("prepared statement \"{name}\" already exists")));
        }
        let conn_cmd = is_connection_command(&sql);
        let is_local = conn_cmd || {
            let mut probe = self.gucs.clone();
            probe.probe = true;
            query::local(&mut probe, &mut self.session, &self.user, self.pid, &sql).is_some()
        };
        let prepared = if is_local {
            None
        } else {
            let mut p = crate::sql::prepare(&sql)?;
            crate::sql::declare_param_types(&mut p, &type_oids);
            Some(Arc::new(p))
        };
        // As PostgreSQL's Parse: in a failed block only COMMIT / ROLLBACK (or an empty query)
        // may be prepared; anything else would look up, and lock, what it names.
        if self.session.txn.as_ref().is_some_and(|t| t.failed) && !ends_block(prepared.as_deref()) {
            return Err(failed_block_error());
        }
        // A DECLARE's parameters are its query's.
        let declared = match conn_cmd.then(|| declared_query(&sql)).flatten() {
            Some(q) => {
                let mut p = crate::sql::prepare(&q)?;
                crate::sql::declare_param_types(&mut p, &type_oids);
                Some(p)
            }
            None => None,
        };
        let with_params = prepared.as_deref().or(declared.as_ref());
        // A statement whose table does not exist yet (created later in the same pipeline)
        // infers nothing; its parameters are then text, as Describe reports them.
        let inferred = with_params.and_then(|p| crate::sql::param_types(&self.session, p).ok()).unwrap_or_default();
        let n = with_params.map_or(0, |p| p.nparams).max(type_oids.len());
        let param_types = (0..n)
            .map(|i| match type_oids.get(i).copied().unwrap_or(0) {
                0 => inferred.get(i).copied().flatten().map_or(types::TEXT_OID, |t| t.pg_oid()),
                oid => oid,
            })
            .collect();
        self.stmts.insert(name, Stmt { sql, prepared, param_types, conn_cmd });
        if reply {
            self.wire.send(B::ParseComplete(ParseComplete::new()))?;
        }
        Ok(())
    }

    fn bind(&mut self, b: pgwire::messages::extendedquery::Bind) -> Result<()> {
        let sname = b.statement_name.unwrap_or_default();
        let stmt =
            self.stmts.get(&sname).cloned().ok_or_else(|| {
                PgError::new(sqlstate::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{sname}\" does not exist"))
            })?;
        // As PostgreSQL's Bind: in a failed block only COMMIT / ROLLBACK may be bound, and
        // without parameters.
        if self.session.txn.as_ref().is_some_and(|t| t.failed) && (!ends_block(stmt.prepared.as_deref()) || !b.parameters.is_empty()) {
            return Err(failed_block_error());
        }
        if b.parameters.len() != stmt.nparams() {
            return Err(PgError::new(
                sqlstate::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{sname}\" requires {}",
                    b.parameters.len(),
                    stmt.nparams()
                ),
            ));
        }
        let fmts = &b.parameter_format_codes;
        if fmts.len() > 1 && fmts.len() != b.parameters.len() {
            return Err(PgError::new(
                sqlstate::PROTOCOL_VIOLATION,
                format!("bind message has {} parameter formats but {} parameters", fmts.len(), b.parameters.len()),
            ));
        }
        let mut params = Vec::with_capacity(b.parameters.len());
        for (i, p) in b.parameters.iter().enumerate() {
            params.push(match p {
                None => None,
                Some(bytes) if format_for(fmts, i) == 1 => {
                    // By the parameter's type (the client's, or the one inferred at Parse),
                    // whatever OID the client sent, 0 included.
                    let oid = stmt.param_types.get(i).copied().unwrap_or(types::TEXT_OID);
                    Some(types::param_from_binary(oid, bytes)?)
                }
                Some(bytes) => Some(
                    String::from_utf8(bytes.to_vec())
                        .map_err(|_| PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\""))?,
                ),
            });
        }
        let pname = b.portal_name.unwrap_or_default();
        if !pname.is_empty() && (self.portals.contains_key(&pname) || self.cursors.contains_key(&pname)) {
            return Err(PgError::new("42P03", format!("cursor \"{pname}\" already exists")));
        }
        self.portals.insert(
            pname,
            Portal {
                stmt,
                params,
                result_formats: b.result_column_format_codes,
                result: None,
                rows_sent: 0,
                held: None,
                described: None,
                tables: Vec::new(),
                opened_in: 0,
            },
        );
        self.wire.send(B::BindComplete(BindComplete::new()))
    }

    /// Runs a portal's statement if it has not run yet.
    fn run_portal(&mut self, name: &str) -> Result<()> {
        let p = self
            .portals
            .get(name)
            .ok_or_else(|| PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("portal \"{name}\" does not exist")))?;
        if p.result.is_some() {
            return Ok(());
        }
        let (stmt, params) = (p.stmt.clone(), p.params.clone());
        let r = match &stmt.prepared {
            None if stmt.conn_cmd => self
                .connection_command(&stmt.sql, Some((&stmt.param_types, &params)))
                .unwrap_or_else(|| Err(PgError::internal("statement changed kind")))?,
            None => match query::local(&mut self.gucs, &mut self.session, &self.user, self.pid, &stmt.sql) {
                Some(Ok(o)) => {
                    for (n, v) in o.report {
                        self.wire.send(B::ParameterStatus(ParameterStatus::new(n, v)))?;
                    }
                    o.result
                }
                Some(Err(e)) => return Err(e),
                None => return Err(PgError::internal("statement changed kind")),
            },
            Some(prep) => {
                if prep.is_empty() {
                    QueryResult::default()
                } else {
                    self.run_engine(&stmt.sql, Some((prep, &params)))?.pop().unwrap_or_default()
                }
            }
        };
        for n in &r.notices {
            send_notice(self.wire, n)?;
        }
        self.settle_cursors();
        self.portals.get_mut(name).expect("checked").result = Some(r);
        Ok(())
    }

    fn describe(&mut self, target: u8, name: String) -> Result<()> {
        if target == b'S' {
            let stmt = self.stmts.get(&name).cloned().ok_or_else(|| {
                PgError::new(sqlstate::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{name}\" does not exist"))
            })?;
            let mut types: Vec<u32> = stmt.param_types.clone();
            types.resize(stmt.nparams(), types::TEXT_OID);
            self.wire.send(B::ParameterDescription(ParameterDescription::new(types)))?;
            let columns = match &stmt.prepared {
                // A FETCH returns its cursor's columns (none if it does not exist yet).
                None if fetch_or_move(&stmt.sql) == Some(false) => {
                    let name = super::cursor::parse(&stmt.sql).ok().map(|(_, n)| n);
                    name.and_then(|n| self.cursors.get(&n)).map(|c| c.result.clone())
                }
                None => {
                    let mut probe = self.gucs.clone();
                    probe.probe = true;
                    match query::local(&mut probe, &mut self.session, &self.user, self.pid, &stmt.sql) {
                        Some(Ok(o)) if o.result.returns_rows => Some(o.result),
                        Some(Err(e)) => return Err(e),
                        _ => None,
                    }
                }
                // In a failed block a statement that returns rows is not described (its
                // columns would need the catalog), as in PostgreSQL; its parameters were.
                Some(p) if p.returns_rows() && self.failed_block() => return Err(failed_block_error()),
                Some(p) if p.returns_rows() => Some(crate::sql::describe(&mut self.session, p)?),
                Some(_) => None,
            };
            return match columns {
                Some(r) => self.wire.send(Self::row_description(&r.columns, &r.column_sources, &[])),
                None => self.wire.send(B::NoData(NoData::new())),
            };
        }
        if self.failed_block()
            && self.portals.get(&name).is_some_and(|p| {
                p.stmt.prepared.as_ref().is_some_and(|x| x.returns_rows()) || p.result.as_ref().is_some_and(|r| r.returns_rows)
            })
        {
            return Err(failed_block_error());
        }
        let Some(p) = self.portals.get(&name) else {
            // A SQL cursor is a portal too (psycopg describes its named cursors so).
            if let Some(c) = self.cursors.get(&name) {
                return self.wire.send(Self::row_description(&c.result.columns, &c.result.column_sources, &[]));
            }
            return Err(PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("portal \"{name}\" does not exist")));
        };
        // A query not yet run is described from its plan: it runs at Execute, where its rows
        // stream.
        if p.result.is_none() && p.held.is_none() {
            if let Some(prep) = p.stmt.prepared.as_ref().filter(|x| Self::streams(x)) {
                let formats = p.result_formats.clone();
                let prep = prep.clone();
                let r = crate::sql::describe(&mut self.session, &prep)?;
                return self.wire.send(Self::row_description(&r.columns, &r.column_sources, &formats));
            }
        }
        // A query that ran (streamed, perhaps suspended): the columns its rows have.
        if let Some((cols, sources)) = &p.described {
            return self.wire.send(Self::row_description(cols, sources, &p.result_formats));
        }
        self.run_portal(&name)?;
        let p = self.portals.get(&name).expect("run_portal checked");
        let r = p.result.as_ref().expect("ran");
        let m =
            if r.returns_rows { Self::row_description(&r.columns, &r.column_sources, &p.result_formats) } else { B::NoData(NoData::new()) };
        self.wire.send(m)
    }

    /// Whether a prepared statement's rows stream at Execute (a query: its rows are produced
    /// by the executor one at a time).
    fn streams(p: &Prepared) -> bool {
        matches!(&p.stmt, Some(sqlparser::ast::Statement::Query(q)) if !crate::sql::has_select_into(q))
    }

    /// Sends up to `max_rows` (0: all) of a suspended portal's held rows, then
    /// PortalSuspended, or CommandComplete when none is left.
    fn execute_held(&mut self, name: &str, max_rows: i32) -> Result<()> {
        let p = self.portals.get_mut(name).expect("checked");
        let formats = p.result_formats.clone();
        let (held, types) = p.held.as_mut().expect("checked");
        let mut n = 0usize;
        let mut body = Vec::new();
        let mut bin = Vec::new();
        while max_rows <= 0 || n < max_rows as usize {
            let Some(row) = held.pop()? else { break };
            encode_data_row(&row, types, &formats, &mut body, &mut bin)?;
            self.wire.send_raw(b'D', &body);
            if self.wire.pending_bytes() >= OUT_FLUSH_BYTES {
                self.wire.flush()?;
            }
            n += 1;
        }
        if !held.is_empty() {
            return self.wire.send(B::PortalSuspended(PortalSuspended::new()));
        }
        let p = self.portals.get_mut(name).expect("checked");
        p.held = None;
        let mut r = p.result.clone().unwrap_or_default();
        r.tag = tag_with_count(&r.tag, n);
        self.complete(&r)
    }

    /// Runs a query portal with its rows streaming: the first `max_rows` (0: all) go to the
    /// client as they are produced, the rest are held for the next Execute.
    fn execute_streaming(
        &mut self,
        name: &str,
        prep: Arc<Prepared>,
        params: Vec<Option<String>>,
        formats: Vec<i16>,
        max_rows: i32,
    ) -> Result<()> {
        let held = crate::exec::spill::HeldRows::new(
            self.session.shared.vfs.clone(),
            &self.session.shared.dir,
            self.session.work_mem_bytes() as usize,
            self.session.temp_file_limit_kb(),
        );
        let mut sink = PortalRows {
            wire: &mut *self.wire,
            cancel: &self.cancel,
            formats,
            types: Vec::new(),
            described: None,
            limit: if max_rows > 0 { max_rows as usize } else { usize::MAX },
            sent: 0,
            held,
            body: Vec::new(),
            bin: Vec::new(),
        };
        Self::begin_statement(&self.cancel, &self.gucs);
        // As `refresh_in_use` (the sink borrows the wire).
        self.session.in_use = Self::in_use(&self.cursors, &self.portals, self.session.ended_txns);
        let r = {
            let mut io = CopyIo { stdin: None, stdout: None, rows: Some(&mut sink) };
            crate::sql::execute_prepared_until_sync(&mut self.session, &prep, &params, &mut io)
        };
        let PortalRows { held, types, described, .. } = sink;
        let r = r?;
        for n in &r.notices {
            send_notice(self.wire, n)?;
        }
        self.settle_cursors();
        let p = self.portals.get_mut(name).expect("checked");
        if r.returns_rows {
            // The statement did not stream (it answered with its rows): as any other.
            p.result = Some(r);
            return self.execute_materialized(name, max_rows);
        }
        p.result = Some(r.clone());
        p.described = described;
        if !held.is_empty() {
            p.held = Some((held, types));
            if let Some(sqlparser::ast::Statement::Query(q)) = &prep.stmt {
                p.tables = crate::sql::query_tables(&self.session, q);
                p.opened_in = self.session.ended_txns;
            }
            return self.wire.send(B::PortalSuspended(PortalSuspended::new()));
        }
        self.complete(&r)
    }

    fn execute(&mut self, name: String, max_rows: i32) -> Result<()> {
        let failed = self.session.txn.as_ref().is_some_and(|t| t.failed);
        // One lookup decides the route (this runs once per Execute).
        let streaming = match self.portals.get(&name) {
            // A portal that already ran (a query suspended before the block failed) would
            // answer from its rows without the engine's check: refused as PostgreSQL does.
            Some(p) if failed && (p.held.is_some() || p.result.is_some()) => return Err(failed_block_error()),
            Some(p) if p.held.is_some() => return self.execute_held(&name, max_rows),
            Some(p) if p.result.is_none() => {
                p.stmt.prepared.as_ref().filter(|x| Self::streams(x)).map(|prep| (prep.clone(), p.params.clone(), p.result_formats.clone()))
            }
            _ => None,
        };
        match streaming {
            Some((prep, params, formats)) => self.execute_streaming(&name, prep, params, formats, max_rows),
            None => self.execute_materialized(&name, max_rows),
        }
    }

    fn execute_materialized(&mut self, name: &str, max_rows: i32) -> Result<()> {
        let name = name.to_string();
        self.run_portal(&name)?;
        let p = self.portals.get_mut(&name).expect("run_portal checked");
        let r = p.result.take().expect("ran");
        let formats = p.result_formats.clone();
        let from = p.rows_sent;
        let left = r.rows.len().saturating_sub(from);
        let count = if max_rows > 0 { left.min(max_rows as usize) } else { left };
        if p.stmt.prepared.as_ref().is_some_and(|x| x.is_empty()) {
            p.result = Some(r);
            return self.wire.send(B::EmptyQueryResponse(EmptyQueryResponse::new()));
        }
        p.rows_sent += count;
        let suspended = r.returns_rows && count < left;
        let sent = self.send_rows(&r, from, count, &formats);
        let done = self.portals.get_mut(&name).expect("still there");
        done.result = Some(r);
        sent?;
        if suspended {
            let q = match done.stmt.prepared.as_deref().and_then(|x| x.stmt.as_ref()) {
                Some(sqlparser::ast::Statement::Query(q)) => Some(q.clone()),
                _ => None,
            };
            let tables = q.map(|q| crate::sql::query_tables(&self.session, &q)).unwrap_or_default();
            let ended = self.session.ended_txns;
            let done = self.portals.get_mut(&name).expect("still there");
            done.tables = tables;
            done.opened_in = ended;
            return self.wire.send(B::PortalSuspended(PortalSuspended::new()));
        }
        let mut r = self.portals.get(&name).and_then(|p| p.result.as_ref()).expect("kept").clone();
        if r.returns_rows {
            r.tag = tag_with_count(&r.tag, count);
        }
        self.complete(&r)
    }
}

/// Whether a prepared statement may run in a failed block: COMMIT, ROLLBACK (also ROLLBACK TO)
/// or the empty query (PostgreSQL's `IsTransactionExitStmt`). Statements the server answers
/// itself (`None`) may not.
fn ends_block(p: Option<&crate::sql::Prepared>) -> bool {
    p.is_some_and(|p| {
        p.stmt.as_ref().is_none_or(|st| matches!(st, sqlparser::ast::Statement::Commit { .. } | sqlparser::ast::Statement::Rollback { .. }))
    })
}

fn failed_block_error() -> PgError {
    PgError::new(sqlstate::IN_FAILED_SQL_TRANSACTION, "current transaction is aborted, commands ignored until end of transaction block")
}

/// A command tag with its row count replaced by `n`: the last Execute of a portal that was
/// suspended reports the rows that Execute sent (`SELECT 1` after `SELECT` of 4 more), as
/// PostgreSQL's PortalRun does.
fn tag_with_count(tag: &str, n: usize) -> String {
    match tag.rsplit_once(' ') {
        Some((head, count)) if count.parse::<u64>().is_ok() => format!("{head} {n}"),
        _ => tag.to_string(),
    }
}

/// Each column's name, source table OID and column number (0 for computed columns), type
/// OID, size, type modifier and format, as PostgreSQL's RowDescription.
fn row_description(columns: &[(String, String)], sources: &[Option<(u32, i16)>], formats: &[i16]) -> B {
    let fields = columns
        .iter()
        .enumerate()
        .map(|(i, (n, t))| {
            let (table, attnum) = sources.get(i).copied().flatten().unwrap_or((0, 0));
            FieldDescription::new(
                n.clone(),
                table as i32,
                attnum,
                types::type_oid(t),
                types::type_len(t),
                types::type_modifier(t),
                format_for(formats, i),
            )
        })
        .collect();
    B::RowDescription(RowDescription::new(fields))
}

//! `heapstore serve` with a real client (the `postgres` crate): startup, simple and extended
//! query protocols, COPY in and out, SQLSTATEs, concurrent sessions, max_connections, SCRAM,
//! cancellation, malformed input, shutdown. Each test runs its own server in-process on an
//! ephemeral port and a socket in its temp directory.

mod common;

use heapstore::auth::Hba;
use heapstore::server::{Server, ServerConfig};
use heapstore::Database;
use postgres::types::Type;
use postgres::{Client, Config, NoTls, SimpleQueryMessage};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

struct TestServer {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    server: Option<Server>,
    port: u16,
}

impl TestServer {
    fn start(hba: &str, max_connections: usize) -> TestServer {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        Database::init(&dir, &[]).unwrap();
        heapstore::auth::init_roles(&dir, "postgres").unwrap();
        heapstore::auth::set_password(&dir, "alice", "sekret").unwrap();
        let db = Arc::new(Database::open(&dir, &[]).unwrap());
        let cfg = ServerConfig {
            listen_addresses: vec!["127.0.0.1".into()],
            port: 0,
            socket_dir: Some(dir.clone()),
            hba: Hba::parse(hba).unwrap(),
            max_connections,
            tls: None,
        };
        let server = Server::start(db, cfg).unwrap();
        let port = server.tcp_addrs()[0].port();
        TestServer { _tmp: tmp, dir, server: Some(server), port }
    }

    fn default() -> TestServer {
        TestServer::start("local all all trust; host all all 127.0.0.1/32 trust", 20)
    }

    fn tcp_config(&self, user: &str) -> Config {
        let mut c = Config::new();
        c.host("127.0.0.1").port(self.port).user(user).dbname("postgres").connect_timeout(Duration::from_secs(10));
        c
    }

    fn tcp(&self) -> Client {
        self.tcp_config("postgres").connect(NoTls).unwrap()
    }

    fn unix(&self) -> Client {
        let mut c = Config::new();
        c.host_path(&self.dir).port(self.port).user("postgres").dbname("postgres");
        c.connect(NoTls).unwrap()
    }

    fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            let db = s.shutdown(Duration::from_secs(2));
            Arc::try_unwrap(db).ok().expect("no session holds the database").close().unwrap();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn code(e: &postgres::Error) -> String {
    e.code().map(|c| c.code().to_string()).unwrap_or_else(|| format!("no SQLSTATE: {e}"))
}

fn simple_rows(c: &mut Client, sql: &str) -> Vec<Vec<Option<String>>> {
    c.simple_query(sql)
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect()),
            _ => None,
        })
        .collect()
}

#[test]
fn simple_query_over_tcp_and_unix_socket() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE t (a integer NOT NULL, b text)").unwrap();
    assert_eq!(simple_rows(&mut c, "SELECT 1"), vec![vec![Some("1".to_string())]]);
    let v = simple_rows(&mut c, "SELECT version()");
    assert!(v[0][0].as_deref().unwrap().starts_with("PostgreSQL 15"), "{v:?}");
    assert_eq!(simple_rows(&mut c, "SHOW client_encoding"), vec![vec![Some("UTF8".to_string())]]);
    assert_eq!(simple_rows(&mut c, "SHOW shared_buffers")[0][0].as_deref(), Some("128MB"));
    let mut u = s.unix();
    assert_eq!(simple_rows(&mut u, "SELECT count(*) FROM t"), vec![vec![Some("0".to_string())]]);
    // The backend pid is the session id pg_locks shows.
    let pid = simple_rows(&mut u, "SELECT pg_backend_pid()")[0][0].clone().unwrap();
    u.batch_execute("BEGIN; SELECT count(*) FROM t").unwrap();
    let locks = c.simple_query("SELECT * FROM pg_locks").unwrap();
    let held_by_u = locks.iter().any(|m| matches!(m, SimpleQueryMessage::Row(r) if r.get("pid") == Some(pid.as_str())));
    assert!(held_by_u, "pid {pid} holds no lock in pg_locks");
    u.batch_execute("COMMIT").unwrap();
    // The empty query.
    assert!(simple_rows(&mut u, "").is_empty());
}

#[test]
fn extended_protocol_text_and_binary() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE t (a integer, b text, c bigint, d boolean, e date, f double precision)").unwrap();
    let mut w = c.copy_in("COPY t FROM STDIN").unwrap();
    w.write_all(b"1\tone\t10000000000\tt\t2024-02-29\t1.5\n2\t\\N\t-3\tf\t1999-12-31\t-0\n").unwrap();
    assert_eq!(w.finish().unwrap(), 2);
    // The client asks for binary results: each type's send function.
    let rows = c.query("SELECT * FROM t", &[]).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].get::<_, i32>(0), 1);
    assert_eq!(rows[0].get::<_, String>(1), "one");
    assert_eq!(rows[0].get::<_, i64>(2), 10_000_000_000);
    assert!(rows[0].get::<_, bool>(3));
    assert_eq!(rows[1].get::<_, Option<String>>(1), None);
    assert_eq!(rows[1].get::<_, f64>(5), 0.0);
    assert_eq!(rows[0].columns()[4].type_(), &Type::DATE);
    // Described without running: the statement's columns and a parameter typed text.
    let st = c.prepare("SELECT a, b FROM t").unwrap();
    assert_eq!(st.columns().iter().map(|c| c.name()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(st.columns()[0].type_(), &Type::INT4);
    // Row statements with RETURNING are described with their columns (Describe of the
    // statement, as asyncpg and tokio-postgres send it), those without as no data.
    let st = c.prepare("INSERT INTO t (a) VALUES ($1) RETURNING a, b").unwrap();
    assert_eq!(st.columns().iter().map(|c| c.name()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(st.params(), [Type::INT4]);
    let st = c.prepare("UPDATE t SET b = $1 WHERE a = 0 RETURNING c").unwrap();
    assert_eq!(st.columns()[0].type_(), &Type::INT8);
    let st = c.prepare("DELETE FROM t WHERE a = 0 RETURNING *").unwrap();
    assert_eq!(st.columns().len(), 6);
    assert!(c.prepare("DELETE FROM t WHERE a = 0").unwrap().columns().is_empty());
    // Parameters: text (untyped, reported as text) and binary (typed at Parse: the
    // parameters, and so the columns, have the declared types, as in PostgreSQL).
    let r = c.query_one("SELECT $1", &[&"héllo"]).unwrap();
    assert_eq!(r.get::<_, String>(0), "héllo");
    let st = c.prepare_typed("SELECT $1, $2", &[Type::INT4, Type::INT8]).unwrap();
    assert_eq!(st.columns().iter().map(|c| c.type_().clone()).collect::<Vec<_>>(), [Type::INT4, Type::INT8]);
    let r = c.query_one(&st, &[&-7i32, &(1i64 << 40)]).unwrap();
    assert_eq!(r.get::<_, i32>(0), -7);
    assert_eq!(r.get::<_, i64>(1), 1i64 << 40);
    // The same prepared statement many times.
    let st = c.prepare("SELECT count(*) FROM t").unwrap();
    for _ in 0..20 {
        assert_eq!(c.query_one(&st, &[]).unwrap().get::<_, i64>(0), 2);
    }
    // Portal suspension: rows fetched 1 at a time.
    let mut tx = c.transaction().unwrap();
    let portal = tx.bind("SELECT a FROM t", &[]).unwrap();
    let first = tx.query_portal(&portal, 1).unwrap();
    let second = tx.query_portal(&portal, 1).unwrap();
    let rest = tx.query_portal(&portal, 1).unwrap();
    assert_eq!((first.len(), second.len(), rest.len()), (1, 1, 0));
    assert_eq!(second[0].get::<_, i32>(0), 2);
    tx.commit().unwrap();
}

#[test]
fn copy_in_and_out_round_trip_the_fixtures() {
    let s = TestServer::default();
    let mut c = s.unix();
    c.batch_execute(&format!("CREATE TABLE types ({})", common::TYPES_COLUMNS.trim())).unwrap();
    for (file, opts) in [("types.text", ""), ("types.csv", " WITH (FORMAT csv, HEADER true)"), ("types.bin", " WITH (FORMAT binary)")] {
        let data = std::fs::read(common::fixture(file)).unwrap();
        c.batch_execute("TRUNCATE types").unwrap();
        let mut w = c.copy_in(&format!("COPY types FROM STDIN{opts}")).unwrap();
        for chunk in data.chunks(7_777) {
            w.write_all(chunk).unwrap();
        }
        assert_eq!(w.finish().unwrap(), 5000, "{file}");
        let mut out = Vec::new();
        c.copy_out(&format!("COPY types TO STDOUT{opts}")).unwrap().read_to_end(&mut out).unwrap();
        assert!(out == data, "{file} differs after a round trip");
    }
    // An empty table still gives a complete COPY OUT.
    c.batch_execute("TRUNCATE types").unwrap();
    let mut out = Vec::new();
    c.copy_out("COPY types TO STDOUT").unwrap().read_to_end(&mut out).unwrap();
    assert!(out.is_empty());
}

#[test]
fn errors_carry_postgres_sqlstates() {
    let s = TestServer::default();
    let mut c = s.tcp();
    assert_eq!(code(&c.batch_execute("SELECT * FROM nosuch").unwrap_err()), "42P01");
    assert_eq!(code(&c.query("SELECT * FROM nosuch", &[]).unwrap_err()), "42P01");
    assert_eq!(code(&c.batch_execute("SELEC 1").unwrap_err()), "42601");
    assert_eq!(code(&c.batch_execute("SHOW nosuch").unwrap_err()), "42704");
    assert_eq!(code(&c.batch_execute("SET nosuch = 1").unwrap_err()), "42704");
    assert_eq!(code(&c.batch_execute("SET shared_buffers = '1GB'").unwrap_err()), "55P02");
    c.batch_execute("SET application_name = 'tests'").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW application_name")[0][0].as_deref(), Some("tests"));
    c.batch_execute("CREATE TABLE t (a integer NOT NULL)").unwrap();
    let mut w = c.copy_in("COPY t FROM STDIN").unwrap();
    w.write_all(b"1\nx\n").unwrap();
    let e = w.finish().unwrap_err();
    assert_eq!(code(&e), "22P02");
    let db = e.as_db_error().unwrap();
    assert_eq!(db.message(), "invalid input syntax for type integer: \"x\"");
    assert!(db.where_().unwrap().contains("line 2"), "{:?}", db.where_());
    let mut w = c.copy_in("COPY t FROM STDIN").unwrap();
    w.write_all(b"\\N\n").unwrap();
    assert_eq!(code(&w.finish().unwrap_err()), "23502");
    // A COPY the client abandons (CopyFail) leaves nothing either.
    let mut w = c.copy_in("COPY t FROM STDIN").unwrap();
    w.write_all(b"5\n6\n").unwrap();
    drop(w);
    // The connection is still usable, and nothing of the failed COPYs is visible.
    assert_eq!(c.query_one("SELECT count(*) FROM t", &[]).unwrap().get::<_, i64>(0), 0);
    // A failed transaction block: 25P02 until ROLLBACK.
    c.batch_execute("BEGIN").unwrap();
    assert!(c.batch_execute("SELECT * FROM nosuch").is_err());
    assert_eq!(code(&c.batch_execute("SELECT 1").unwrap_err()), "25P02");
    // Parse is refused too (it would look up and lock the table), but not of ROLLBACK.
    assert_eq!(code(&c.prepare("SELECT count(*) FROM t").unwrap_err()), "25P02");
    c.prepare("ROLLBACK").unwrap();
    c.batch_execute("ROLLBACK").unwrap();
    assert_eq!(simple_rows(&mut c, "SELECT 1").len(), 1);
}

#[test]
fn concurrent_sessions_copy_into_one_table() {
    let s = TestServer::default();
    s.tcp().batch_execute("CREATE TABLE t (a integer, b text)").unwrap();
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let mut c = if i % 2 == 0 { s.tcp() } else { s.unix() };
            std::thread::spawn(move || {
                for _ in 0..5 {
                    let mut w = c.copy_in("COPY t FROM STDIN").unwrap();
                    for r in 0..200 {
                        writeln!(w, "{r}\tthread {i}").unwrap();
                    }
                    assert_eq!(w.finish().unwrap(), 200);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(s.tcp().query_one("SELECT count(*) FROM t", &[]).unwrap().get::<_, i64>(0), 6 * 5 * 200);
}

#[test]
fn max_connections_gives_53300() {
    let s = TestServer::start("host all all 127.0.0.1/32 trust", 2);
    let a = s.tcp();
    let _b = s.tcp();
    let e = s.tcp_config("postgres").connect(NoTls).err().expect("connection refused");
    assert_eq!(code(&e), "53300");
    drop(a);
    // The slot comes back once the session has ended.
    let mut ok = None;
    for _ in 0..100 {
        if let Ok(c) = s.tcp_config("postgres").connect(NoTls) {
            ok = Some(c);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(ok.is_some());
}

#[test]
fn scram_and_hba() {
    let s = TestServer::start("local all all trust; host all postgres 127.0.0.1/32 reject; host all all 127.0.0.1/32 scram-sha-256", 20);
    let mut c = s.tcp_config("alice").password("sekret").connect(NoTls).unwrap();
    assert_eq!(simple_rows(&mut c, "SELECT current_user")[0][0].as_deref(), Some("alice"));
    let wrong = s.tcp_config("alice").password("Sekret").connect(NoTls).err().expect("connection refused");
    assert_eq!(code(&wrong), "28P01");
    let unknown = s.tcp_config("mallory").password("sekret").connect(NoTls).err().expect("connection refused");
    assert_eq!(code(&unknown), "28P01");
    assert_eq!(
        wrong.as_db_error().unwrap().message().replace("alice", "X"),
        unknown.as_db_error().unwrap().message().replace("mallory", "X")
    );
    assert_eq!(code(&s.tcp_config("postgres").password("x").connect(NoTls).err().expect("connection refused")), "28000");
    // Server files are for superusers only.
    c.batch_execute("CREATE TABLE t (a integer)").unwrap();
    let path = s.dir.join("x.txt");
    std::fs::write(&path, "1\n").unwrap();
    let e = c.batch_execute(&format!("COPY t FROM '{}'", path.display())).unwrap_err();
    assert_eq!(code(&e), "42501");
    assert_eq!(e.as_db_error().unwrap().message(), "permission denied to COPY from a file");
    assert_eq!(code(&c.query(&format!("COPY t TO '{}'", path.display()), &[]).unwrap_err()), "42501");
    // Trust applies only where configured: the Unix socket.
    let mut u = s.unix();
    assert_eq!(simple_rows(&mut u, "SELECT 1").len(), 1);
    u.batch_execute(&format!("COPY t FROM '{}'", path.display())).unwrap();
    assert_eq!(simple_rows(&mut u, "SELECT count(*) FROM t")[0][0].as_deref(), Some("1"));
}

#[test]
fn cancel_request_stops_a_copy() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE t (a integer)").unwrap();
    let token = c.cancel_token();
    let mut w = c.copy_in("COPY t FROM STDIN").unwrap();
    w.write_all(b"1\n2\n").unwrap();
    w.flush().unwrap();
    token.cancel_query(NoTls).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    w.write_all(b"3\n").unwrap();
    let e = w.finish().unwrap_err();
    assert_eq!(code(&e), "57014");
    assert_eq!(c.query_one("SELECT count(*) FROM t", &[]).unwrap().get::<_, i64>(0), 0);
}

/// Runs `sql`, which must fail, while another thread sends cancel requests for `c` every 200 ms
/// until it has (a request that arrives before the statement starts is forgotten); returns the
/// error.
fn run_canceled(c: &mut Client, sql: &str) -> postgres::Error {
    let token = c.cancel_token();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let canceler = {
        let done = done.clone();
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(200));
                token.cancel_query(NoTls).unwrap();
            }
        })
    };
    let e = c.batch_execute(sql).unwrap_err();
    done.store(true, std::sync::atomic::Ordering::Release);
    canceler.join().unwrap();
    e
}

/// A sleeping statement (`pg_sleep`, as drivers' cancellation tests use it) stops at a cancel
/// request with 57014, and the connection goes on.
#[test]
fn cancel_request_stops_pg_sleep() {
    let s = TestServer::default();
    let mut c = s.tcp();
    let e = run_canceled(&mut c, "SELECT pg_sleep(600)");
    assert_eq!(code(&e), "57014");
    assert_eq!(c.query_one("SELECT pg_typeof(pg_sleep(0))::text", &[]).unwrap().get::<_, String>(0), "void");
}

/// statement_timeout, with PostgreSQL's units, display and errors: a sleep, a long series and
/// a wait for a row lock stop at it with 57014; a cancel request stops a row-lock wait too.
#[test]
fn statement_timeout_stops_statements_and_lock_waits() {
    let s = TestServer::default();
    let mut c = s.tcp();
    let show = |c: &mut Client| simple_rows(c, "SHOW statement_timeout")[0][0].clone().unwrap();
    assert_eq!(show(&mut c), "0");
    // PostgreSQL's reading of a number: fractions rounded half to even, a unit of
    // microseconds, whitespace before a unit, C's hexadecimal and octal integers.
    for (set, shown) in [
        ("5000", "5s"),
        ("'1min'", "1min"),
        ("'1500ms'", "1500ms"),
        ("'2h'", "2h"),
        ("'1.5s'", "1500ms"),
        ("2.5", "2ms"),
        ("'1500us'", "2ms"),
        ("'1.25 min'", "75s"),
        ("'0x10'", "16ms"),
        ("'010'", "8ms"),
        ("'100us'", "0"),
        ("0", "0"),
    ] {
        c.batch_execute(&format!("SET statement_timeout = {set}")).unwrap();
        assert_eq!(show(&mut c), shown, "SET statement_timeout = {set}");
    }
    let e = c.batch_execute("SET statement_timeout = '-1'").unwrap_err();
    assert_eq!(code(&e), "22023");
    assert_eq!(
        e.as_db_error().unwrap().message(),
        "-1 ms is outside the valid range for parameter \"statement_timeout\" (0 .. 2147483647)"
    );
    assert_eq!(code(&c.batch_execute("SET statement_timeout = 'soon'").unwrap_err()), "22023");
    let e = c.batch_execute("SET statement_timeout = '5 weeks'").unwrap_err();
    assert_eq!(
        e.as_db_error().unwrap().hint(),
        Some("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".")
    );
    let e = c.batch_execute("SET statement_timeout = '30d'").unwrap_err();
    assert_eq!(e.as_db_error().unwrap().hint(), Some("Value exceeds integer range."));
    let e = c.batch_execute("SET statement_timeout = -1.5").unwrap_err();
    assert_eq!(
        e.as_db_error().unwrap().message(),
        "-2 ms is outside the valid range for parameter \"statement_timeout\" (0 .. 2147483647)"
    );

    c.batch_execute("SET statement_timeout = '200ms'").unwrap();
    for sql in ["SELECT pg_sleep(60)", "SELECT count(*) FROM generate_series(1, 2000000000)"] {
        let e = c.batch_execute(sql).unwrap_err();
        assert_eq!(code(&e), "57014", "{sql}");
        assert_eq!(e.as_db_error().unwrap().message(), "canceling statement due to statement timeout");
    }
    // Each statement has its own time: a short one after a timeout runs.
    assert_eq!(simple_rows(&mut c, "SELECT 1")[0][0].as_deref(), Some("1"));
    // pg_settings shows it as PostgreSQL does: milliseconds, its unit and range, and the
    // value RESET returns to.
    c.batch_execute("SET statement_timeout = '5s'").unwrap();
    let row = simple_rows(
        &mut c,
        "SELECT setting, unit, vartype, min_val, max_val, reset_val, source FROM pg_settings WHERE name = 'statement_timeout'",
    );
    let want = ["5000", "ms", "integer", "0", "2147483647", "0", "session"];
    assert_eq!(row[0], want.map(|v| Some(v.to_string())).to_vec());
    // So has each statement of one Query: together these outlast the timeout.
    c.batch_execute("SET statement_timeout = '1s'").unwrap();
    c.batch_execute("SELECT pg_sleep(0.6); SELECT pg_sleep(0.6)").unwrap();

    // A wait for a row another transaction holds.
    c.batch_execute("SET statement_timeout = 0; CREATE TABLE lk (a int); INSERT INTO lk VALUES (1)").unwrap();
    let mut holder = s.tcp();
    holder.batch_execute("BEGIN; UPDATE lk SET a = 2").unwrap();
    c.batch_execute("SET statement_timeout = '300ms'").unwrap();
    let e = c.batch_execute("UPDATE lk SET a = 3").unwrap_err();
    assert_eq!(e.as_db_error().unwrap().message(), "canceling statement due to statement timeout");
    // The same wait, stopped by a cancel request (sent until the statement ends: one that
    // arrives before it starts is forgotten).
    c.batch_execute("SET statement_timeout = 0").unwrap();
    let e = run_canceled(&mut c, "UPDATE lk SET a = 4");
    assert_eq!(e.as_db_error().unwrap().message(), "canceling statement due to user request");
    holder.batch_execute("COMMIT").unwrap();
    // The waiter left the lock's queue: the row is free now.
    c.batch_execute("UPDATE lk SET a = 5").unwrap();
    assert_eq!(simple_rows(&mut c, "SELECT a FROM lk")[0][0].as_deref(), Some("5"));
}

/// LOCK TABLE: only in a transaction block (a Query of several statements is one), held to
/// the end of the transaction, modes as the lock manager's, NOWAIT; over the extended
/// protocol too.
#[test]
fn lock_table_holds_its_mode_until_the_transaction_ends() {
    let s = TestServer::default();
    let mut a = s.tcp();
    let mut b = s.tcp();
    a.batch_execute("CREATE TABLE lk (a int); INSERT INTO lk VALUES (1)").unwrap();
    assert_eq!(code(&a.batch_execute("LOCK TABLE lk").unwrap_err()), "25P01");
    a.batch_execute("LOCK TABLE lk IN SHARE MODE; SELECT 1").unwrap();
    // Extended protocol (Parse / Bind / Execute) inside a block.
    a.batch_execute("BEGIN").unwrap();
    a.execute("LOCK TABLE lk IN EXCLUSIVE MODE", &[]).unwrap();
    // EXCLUSIVE lets readers in and keeps writers out.
    assert_eq!(simple_rows(&mut b, "SELECT a FROM lk")[0][0].as_deref(), Some("1"));
    b.batch_execute("BEGIN").unwrap();
    let e = b.batch_execute("LOCK TABLE lk IN ROW EXCLUSIVE MODE NOWAIT").unwrap_err();
    assert_eq!(code(&e), "55P03");
    assert_eq!(e.as_db_error().unwrap().message(), "could not obtain lock on relation \"lk\"");
    b.batch_execute("ROLLBACK; SET statement_timeout = '200ms'").unwrap();
    assert_eq!(code(&b.batch_execute("UPDATE lk SET a = 2").unwrap_err()), "57014");
    a.batch_execute("COMMIT").unwrap();
    // Released at commit: the writer gets in.
    b.batch_execute("SET statement_timeout = 0; BEGIN; LOCK lk IN ACCESS EXCLUSIVE MODE NOWAIT; UPDATE lk SET a = 3; COMMIT").unwrap();
    assert_eq!(simple_rows(&mut a, "SELECT a FROM lk")[0][0].as_deref(), Some("3"));
    for (sql, want) in [
        ("BEGIN; LOCK TABLE nosuch; COMMIT", "42P01"),
        ("BEGIN; LOCK TABLE lk IN SHARE ROW MODE; COMMIT", "42601"),
        ("CREATE SEQUENCE lks; BEGIN; LOCK lks; COMMIT", "42809"),
    ] {
        assert_eq!(code(&a.batch_execute(sql).unwrap_err()), want, "{sql}");
        a.batch_execute("ROLLBACK").unwrap();
    }
    // A view is locked with the relations it reads.
    a.batch_execute("CREATE VIEW lkv AS SELECT * FROM lk; BEGIN; LOCK lkv; COMMIT").unwrap();
}

#[test]
fn a_parallel_copy_over_the_protocol_loads_and_can_be_canceled() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE t (a integer, b text)").unwrap();
    let mut w = c.copy_in("COPY t FROM STDIN WITH (PARALLEL 2)").unwrap();
    for r in 0..100_000 {
        writeln!(w, "{r}\trow {r} of a parallel copy").unwrap();
    }
    assert_eq!(w.finish().unwrap(), 100_000);
    let sum: i64 = c.query_one("SELECT sum(a)::bigint FROM t", &[]).unwrap().get(0);
    assert_eq!(sum, 99_999 * 100_000 / 2);
    // Canceled half way: nothing of it stays.
    let token = c.cancel_token();
    let mut w = c.copy_in("COPY t FROM STDIN WITH (PARALLEL 2)").unwrap();
    for r in 0..50_000 {
        writeln!(w, "{r}\tcanceled").unwrap();
    }
    w.flush().unwrap();
    token.cancel_query(NoTls).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    w.write_all(b"3\tafter\n").unwrap();
    let e = w.finish().unwrap_err();
    assert_eq!(code(&e), "57014");
    assert_eq!(c.query_one("SELECT count(*) FROM t", &[]).unwrap().get::<_, i64>(0), 100_000);
}

/// Sends raw bytes on a fresh connection and returns what came back until the server closed it.
fn raw_exchange(port: u16, startup: bool, bytes: &[u8]) -> Vec<u8> {
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    if startup {
        let mut p = Vec::new();
        p.extend_from_slice(&196608i32.to_be_bytes());
        p.extend_from_slice(b"user\0postgres\0\0");
        let mut m = ((p.len() + 4) as i32).to_be_bytes().to_vec();
        m.extend_from_slice(&p);
        sock.write_all(&m).unwrap();
    }
    // The server may close before reading everything (writes can then fail).
    let _ = sock.write_all(bytes);
    // EOF after the bytes: a truncated message must end the connection, not hang it.
    let _ = sock.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let _ = sock.read_to_end(&mut out);
    out
}

/// The SQLSTATE of the first ErrorResponse in a byte stream of backend messages.
fn first_error_code(mut b: &[u8]) -> Option<String> {
    while b.len() >= 5 {
        let len = i32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize;
        let (ty, body) = (b[0], &b[5..(len + 1).min(b.len())]);
        if ty == b'E' {
            let mut f = body;
            while let Some((&t, rest)) = f.split_first() {
                let end = rest.iter().position(|&x| x == 0)?;
                if t == b'C' {
                    return Some(String::from_utf8_lossy(&rest[..end]).into_owned());
                }
                f = &rest[end + 1..];
            }
        }
        b = &b[(len + 1).min(b.len())..];
    }
    None
}

#[test]
fn malformed_input_is_refused_and_others_are_still_served() {
    let s = TestServer::default();
    let mut bystander = s.tcp();
    // Garbage before startup: a length far beyond the startup limit.
    let out = raw_exchange(s.port, false, b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(first_error_code(&out).as_deref(), Some("08P01"));
    // After startup: an unknown message type, an oversized length, a length below 4, a Bind
    // whose counts run past its body, a truncated message then EOF.
    for bad in [&b"!\0\0\0\x04"[..], b"Q\x7f\xff\xff\xff", b"Q\0\0\0\x02", b"B\0\0\0\x0c\0\0\0\0\0\x05\0\0", b"P\0\0\0\x08\0"] {
        let out = raw_exchange(s.port, true, bad);
        assert!(out.starts_with(b"R"), "authentication first");
        if bad[0] != b'P' {
            assert_eq!(first_error_code(&out).as_deref(), Some("08P01"), "{bad:?}");
        }
    }
    // A deterministic stream of random bytes after startup.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..30 {
        let junk: Vec<u8> = (0..64)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let _ = raw_exchange(s.port, true, &junk);
    }
    assert_eq!(simple_rows(&mut bystander, "SELECT 1").len(), 1);
    assert_eq!(simple_rows(&mut s.tcp(), "SELECT 1").len(), 1);
}

#[test]
fn shutdown_disconnects_idle_sessions_and_checkpoints() {
    let mut s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE t (a integer)").unwrap();
    let mut w = c.copy_in("COPY t FROM STDIN").unwrap();
    w.write_all(b"1\n2\n3\n").unwrap();
    w.finish().unwrap();
    // Shutdown does not depend on reaching its own listeners (the socket file may be gone).
    std::fs::remove_file(s.dir.join(format!(".s.PGSQL.{}", s.port))).unwrap();
    s.stop();
    assert!(c.simple_query("SELECT 1").is_err());
    // Reopens cleanly with the data.
    let db = Database::open(&s.dir, &[]).unwrap();
    let mut sess = db.session();
    assert_eq!(sess.execute("SELECT count(*) FROM t").unwrap()[0].rows[0][0].as_deref(), Some("3"));
    db.close().unwrap();
    assert!(!s.dir.join(".s.PGSQL.".to_string() + &s.port.to_string()).exists());
}

/// A frontend message: type byte, length, body.
fn msg(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn cstr(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

/// Parse (unnamed, no parameter types) + Bind (params in `format`) + Execute, no Sync.
fn parse_bind_execute(sql: &str, params: &[&[u8]], format: i16) -> Vec<u8> {
    let mut out = msg(b'P', &[cstr(""), cstr(sql), 0i16.to_be_bytes().to_vec()].concat());
    let mut b = [cstr(""), cstr("")].concat();
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&format.to_be_bytes());
    b.extend_from_slice(&(params.len() as i16).to_be_bytes());
    for p in params {
        b.extend_from_slice(&(p.len() as i32).to_be_bytes());
        b.extend_from_slice(p);
    }
    b.extend_from_slice(&0i16.to_be_bytes());
    out.extend(msg(b'B', &b));
    out.extend(msg(b'E', &[cstr(""), 0i32.to_be_bytes().to_vec()].concat()));
    out
}

/// The backend messages of a byte stream: (type, body).
fn messages(mut b: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    // Skip the startup answer's 'R' etc. the same way: every message has the same framing.
    while b.len() >= 5 {
        let len = i32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize;
        out.push((b[0], b[5..(len + 1).min(b.len())].to_vec()));
        b = &b[(len + 1).min(b.len())..];
    }
    out
}

/// A simple Query of several statements that fails: the statements before the error send
/// their rows and CommandCompletes first, as PostgreSQL's do, and their effects are rolled
/// back with the implicit transaction.
#[test]
fn a_failing_query_sends_what_completed_before_its_error() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE mq (a int)").unwrap();
    for (sql, want) in [
        ("INSERT INTO mq VALUES (1); SELECT a FROM mq; SELECT 1/0; SELECT 2", "C:INSERT 0 1 T D C:SELECT 1 E:22012"),
        // One whose pieces run one by one (a SET the connection answers among them).
        ("SELECT 5; SET statement_timeout = '1s'; INSERT INTO mq VALUES (2); SELECT 1/0", "T D C:SELECT 1 C:SET C:INSERT 0 1 E:22012"),
        // A COPY runs as a piece of its own: what came before it is sent first, and a COPY
        // that fails sends no CopyDone.
        ("COPY (SELECT 7) TO STDOUT; SELECT 1/0", "H d c C:COPY 1 E:22012"),
        ("SELECT 1; COPY (SELECT 7) TO STDOUT", "T D C:SELECT 1 H d c C:COPY 1"),
        ("SELECT 1; COPY (SELECT 1 / (a - 2) FROM (VALUES (1), (2)) v(a)) TO STDOUT", "T D C:SELECT 1 H d E:22012"),
        ("COPY (SELECT 1) TO STDOUT; COPY (SELECT 1 / (a - 2) FROM (VALUES (1), (2)) v(a)) TO STDOUT", "H d c C:COPY 1 H d E:22012"),
        ("SELECT 1/0; SELECT 3", "E:22012"),
    ] {
        let out = raw_exchange(s.port, true, &[msg(b'Q', &cstr(sql)), msg(b'X', &[])].concat());
        let msgs = messages(&out);
        let first_ready = msgs.iter().position(|(t, _)| *t == b'Z').unwrap();
        let got: Vec<String> = msgs[first_ready + 1..]
            .iter()
            .take_while(|(t, _)| *t != b'Z')
            .map(|(t, body)| match t {
                b'C' => format!("C:{}", String::from_utf8_lossy(&body[..body.len() - 1])),
                b'E' => format!("E:{}", first_error_code(&[&[b'E'][..], &((body.len() + 4) as i32).to_be_bytes(), body].concat()).unwrap()),
                t => (*t as char).to_string(),
            })
            .collect();
        assert_eq!(got.join(" "), want, "{sql}");
    }
    assert_eq!(simple_rows(&mut c, "SELECT count(*) FROM mq")[0][0].as_deref(), Some("0"));
    // A SET among the statements is undone with them.
    assert!(c.batch_execute("SET statement_timeout = '50ms'; SELECT 1/0").is_err());
    assert_eq!(simple_rows(&mut c, "SHOW statement_timeout")[0][0].as_deref(), Some("0"));
    c.batch_execute("SET statement_timeout = '50ms'; SELECT 1").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW statement_timeout")[0][0].as_deref(), Some("50ms"));
}

#[test]
fn copy_to_stdout_sends_one_copydata_per_row() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE t (a integer, b text); INSERT INTO t VALUES (1, 'x'), (2, NULL), (3, 'z')").unwrap();
    for (sql, want_msgs) in
        [("COPY t TO STDOUT", 3), ("COPY t TO STDOUT WITH (FORMAT csv, HEADER)", 4), ("COPY t TO STDOUT (FORMAT binary)", 4)]
    {
        let out = raw_exchange(s.port, true, &[msg(b'Q', &cstr(sql)), msg(b'X', &[])].concat());
        let data: Vec<Vec<u8>> = messages(&out).into_iter().filter(|(t, _)| *t == b'd').map(|(_, b)| b).collect();
        assert_eq!(data.len(), want_msgs, "{sql}");
        if sql.contains("binary") {
            // The header travels with the first row, the trailer alone, as PostgreSQL sends.
            assert!(data[0].starts_with(b"PGCOPY\n\xff\r\n\0"));
            assert_eq!(data[3], (-1i16).to_be_bytes());
        } else if sql.contains("csv") {
            assert_eq!(data[0], b"a,b\n");
            assert_eq!(data[2], b"2,\n");
        } else {
            assert_eq!(data[1], b"2\t\\N\n");
        }
    }
}

#[test]
fn a_pipeline_up_to_sync_is_one_transaction() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE u (id integer PRIMARY KEY); INSERT INTO u VALUES (4)").unwrap();
    // Five inserts and one Sync; the fourth is a duplicate: nothing of the batch stays.
    let mut bytes = Vec::new();
    for id in ["1", "2", "3", "4", "5"] {
        bytes.extend(parse_bind_execute("INSERT INTO u VALUES ($1)", &[id.as_bytes()], 0));
    }
    bytes.extend(msg(b'S', &[]));
    bytes.extend(msg(b'X', &[]));
    let out = raw_exchange(s.port, true, &bytes);
    assert_eq!(first_error_code(&out).as_deref(), Some("23505"));
    assert_eq!(simple_rows(&mut c, "SELECT count(*) FROM u"), vec![vec![Some("1".to_string())]]);
    // Without an error the whole batch commits at the Sync.
    let mut bytes = Vec::new();
    for id in ["1", "2", "3"] {
        bytes.extend(parse_bind_execute("INSERT INTO u VALUES ($1)", &[id.as_bytes()], 0));
    }
    bytes.extend(msg(b'S', &[]));
    bytes.extend(msg(b'X', &[]));
    let out = raw_exchange(s.port, true, &bytes);
    assert_eq!(first_error_code(&out), None);
    assert_eq!(simple_rows(&mut c, "SELECT count(*) FROM u"), vec![vec![Some("4".to_string())]]);
}

#[test]
fn parameter_types_are_inferred_and_binary_parameters_read_by_them() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE b (id integer, v bytea, n bigint)").unwrap();
    let st = c.prepare("INSERT INTO b VALUES ($1, $2, $3)").unwrap();
    assert_eq!(st.params(), [Type::INT4, Type::BYTEA, Type::INT8]);
    let st = c.prepare("SELECT v FROM b WHERE n = $1 AND id < $2::smallint").unwrap();
    assert_eq!(st.params(), [Type::INT8, Type::INT2]);
    // Binary parameters sent with type OID 0 (node-postgres sends a Buffer so): read as the
    // inferred bytea, not as bytea's text form.
    let raw: &[u8] = b"\\x4142";
    let bytes = [parse_bind_execute("INSERT INTO b (id, v) VALUES (1, $1)", &[raw], 1), msg(b'S', &[]), msg(b'X', &[])].concat();
    let out = raw_exchange(s.port, true, &bytes);
    assert_eq!(first_error_code(&out), None);
    let got: Vec<u8> = c.query_one("SELECT v FROM b WHERE id = 1", &[]).unwrap().get(0);
    assert_eq!(got, raw);
    // Typed binary parameters through the driver.
    c.execute("INSERT INTO b VALUES ($1, $2, $3)", &[&2i32, &vec![0u8, 255, 92], &(1i64 << 40)]).unwrap();
    let r = c.query_one("SELECT v, n FROM b WHERE id = $1", &[&2i32]).unwrap();
    assert_eq!(r.get::<_, Vec<u8>>(0), vec![0u8, 255, 92]);
    assert_eq!(r.get::<_, i64>(1), 1i64 << 40);
}

#[test]
fn row_descriptions_and_errors_name_their_sources() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE r (id integer PRIMARY KEY, name varchar(16) NOT NULL)").unwrap();
    let st = c.prepare("SELECT name, id FROM r WHERE id = $1").unwrap();
    assert!(st.columns()[0].table_oid().is_some_and(|o| o > 0));
    assert_eq!(st.columns()[0].table_oid(), st.columns()[1].table_oid());
    assert_eq!((st.columns()[0].column_id(), st.columns()[1].column_id()), (Some(2), Some(1)));
    c.execute("INSERT INTO r VALUES (1, 'a')", &[]).unwrap();
    let e = c.execute("INSERT INTO r VALUES (1, 'b')", &[]).unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!((db.code().code(), db.constraint(), db.table(), db.schema()), ("23505", Some("r_pkey"), Some("r"), Some("public")));
    let e = c.execute("INSERT INTO r VALUES (2, NULL)", &[]).unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!((db.code().code(), db.table(), db.column()), ("23502", Some("r"), Some("name")));
    // The connection is still usable.
    assert_eq!(c.query_one("SELECT count(*) FROM r", &[]).unwrap().get::<_, i64>(0), 1);
}

#[test]
fn connection_statements_and_current_database() {
    let s = TestServer::default();
    let mut c = s.tcp();
    assert_eq!(simple_rows(&mut c, "SELECT current_database()"), vec![vec![Some("postgres".to_string())]]);
    let st = c.prepare("SELECT 1").unwrap();
    c.query(&st, &[]).unwrap();
    c.batch_execute("DEALLOCATE ALL").unwrap();
    // The protocol-level statement is gone too, as in PostgreSQL.
    assert_eq!(code(&c.query(&st, &[]).unwrap_err()), "26000");
    assert_eq!(code(&c.batch_execute("DEALLOCATE nope").unwrap_err()), "26000");
    c.batch_execute("SET application_name = 'x'; SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY").unwrap();
    c.batch_execute("BEGIN").unwrap();
    assert_eq!(code(&c.batch_execute("DISCARD ALL").unwrap_err()), "25001");
    c.batch_execute("ROLLBACK").unwrap();
    c.batch_execute("DISCARD ALL").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW application_name"), vec![vec![Some(String::new())]]);
    assert_eq!(simple_rows(&mut c, "SHOW transaction_read_only"), vec![vec![Some("off".to_string())]]);
    // Isolation levels over the wire.
    c.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW transaction isolation level"), vec![vec![Some("repeatable read".to_string())]]);
    c.batch_execute("COMMIT").unwrap();
    assert_eq!(code(&c.batch_execute("BEGIN ISOLATION LEVEL SERIALIZABLE").unwrap_err()), "0A000");
}

#[test]
fn sql_prepare_execute_and_cursors() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE cur (id integer PRIMARY KEY, v text)").unwrap();
    c.batch_execute("PREPARE ins (integer, text) AS INSERT INTO cur VALUES ($1, $2)").unwrap();
    for i in 1..=5 {
        c.batch_execute(&format!("EXECUTE ins ({i}, 'v{i}')")).unwrap();
    }
    c.batch_execute("PREPARE one AS SELECT v FROM cur WHERE id = $1").unwrap();
    assert_eq!(simple_rows(&mut c, "EXECUTE one (3)"), vec![vec![Some("v3".to_string())]]);
    assert_eq!(code(&c.batch_execute("PREPARE one AS SELECT 1").unwrap_err()), "42P05");
    assert_eq!(code(&c.batch_execute("EXECUTE one").unwrap_err()), "42601");
    assert_eq!(code(&c.batch_execute("EXECUTE nope (1)").unwrap_err()), "26000");
    // A failing EXECUTE rolls its implicit transaction back.
    assert_eq!(code(&c.batch_execute("EXECUTE ins (1, 'dup')").unwrap_err()), "23505");
    assert_eq!(simple_rows(&mut c, "SELECT count(*) FROM cur"), vec![vec![Some("5".to_string())]]);
    // Cursors: only in a transaction block, forward only, gone at its end.
    assert_eq!(code(&c.batch_execute("DECLARE k CURSOR FOR SELECT id FROM cur").unwrap_err()), "25P01");
    c.batch_execute("BEGIN; DECLARE k CURSOR FOR SELECT id FROM cur WHERE id > 1").unwrap();
    let mut got = Vec::new();
    for sql in ["FETCH 2 FROM k", "FETCH NEXT FROM k", "FETCH ALL IN k", "FETCH k"] {
        got.push(simple_rows(&mut c, sql).len());
    }
    assert_eq!(got, [2, 1, 1, 0]);
    assert_eq!(code(&c.batch_execute("FETCH PRIOR FROM k").unwrap_err()), "55000");
    c.batch_execute("ROLLBACK; BEGIN; DECLARE k CURSOR FOR SELECT id FROM cur").unwrap();
    c.batch_execute("CLOSE k").unwrap();
    assert_eq!(code(&c.batch_execute("FETCH k").unwrap_err()), "34000");
    c.batch_execute("ROLLBACK").unwrap();
    c.batch_execute("BEGIN; DECLARE k2 CURSOR FOR SELECT id FROM cur; COMMIT").unwrap();
    assert_eq!(code(&c.batch_execute("FETCH k2").unwrap_err()), "34000");
    assert_eq!(code(&c.batch_execute("BEGIN; DECLARE s SCROLL CURSOR FOR SELECT id FROM cur").unwrap_err()), "0A000");
    c.batch_execute("ROLLBACK").unwrap();
    // DDL on a table an open cursor reads is refused (55006), as PostgreSQL does; once the
    // cursor is closed it runs.
    c.batch_execute("CREATE TABLE other (x int)").unwrap();
    for ddl in ["ALTER TABLE cur ADD COLUMN z int", "TRUNCATE cur", "DROP TABLE cur", "CREATE INDEX ON cur (v)"] {
        c.batch_execute("BEGIN; DECLARE k CURSOR FOR SELECT c.id FROM other o RIGHT JOIN cur c ON c.id = o.x WHERE c.id > (SELECT 0)")
            .unwrap();
        assert_eq!(code(&c.batch_execute(ddl).unwrap_err()), "55006", "{ddl}");
        c.batch_execute("ROLLBACK").unwrap();
    }
    c.batch_execute("BEGIN; DECLARE k CURSOR FOR SELECT id FROM cur").unwrap();
    c.batch_execute("ALTER TABLE other ADD COLUMN y int").unwrap();
    c.batch_execute("CLOSE k; ALTER TABLE cur ADD COLUMN z int; ROLLBACK").unwrap();
    // A protocol portal suspended at Execute's row limit holds its tables the same way.
    {
        let mut tx = c.transaction().unwrap();
        let portal = tx.bind("SELECT id FROM cur", &[]).unwrap();
        assert_eq!(tx.query_portal(&portal, 2).unwrap().len(), 2);
        let e = tx.execute("ALTER TABLE cur ADD COLUMN z int", &[]).unwrap_err();
        assert_eq!(code(&e), "55006");
    }
    c.batch_execute("ALTER TABLE cur ADD COLUMN z int").unwrap();
    // A portal left suspended (never closed) holds nothing once its transaction is over.
    {
        let mut tx = c.transaction().unwrap();
        let portal = tx.bind("SELECT id FROM cur", &[]).unwrap();
        assert_eq!(tx.query_portal(&portal, 1).unwrap().len(), 1);
        std::mem::forget(portal); // no Close: the server keeps it past COMMIT
                                  // One Query, run statement by statement (the SET): the ALTER comes after COMMIT
                                  // ended the portal's transaction, before the Query's end drops the portal.
        tx.batch_execute("COMMIT; SET application_name = 'x'; ALTER TABLE cur ADD COLUMN w int").unwrap();
        tx.commit().unwrap_or_default();
    }
    // A stored definition cannot hold a parameter (42P02).
    for ddl in ["CREATE TABLE p (a int DEFAULT $1)", "CREATE VIEW pv AS SELECT $1::int", "ALTER TABLE cur ALTER COLUMN v SET DEFAULT $1"] {
        assert_eq!(code(&c.batch_execute(ddl).unwrap_err()), "42P02", "{ddl}");
    }
}

/// A CA and a server certificate for "localhost" signed by it, as PEM: (ca cert, server cert, server key).
fn test_certificates() -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap().signed_by(&key, &ca_cert, &ca_key).unwrap();
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

#[test]
fn tls_when_ssl_is_on_and_hostssl_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    Database::init(&dir, &[]).unwrap();
    heapstore::auth::init_roles(&dir, "postgres").unwrap();
    let (ca, cert, key) = test_certificates();
    std::fs::write(dir.join("server.crt"), &cert).unwrap();
    std::fs::write(dir.join("server.key"), &key).unwrap();
    let db = Arc::new(
        Database::open(
            &dir,
            &["ssl=on".into(), "heapstore.hba=hostssl all all 127.0.0.1/32 trust; hostnossl all all 127.0.0.1/32 reject".into()],
        )
        .unwrap(),
    );
    let cfg = ServerConfig::from_settings(&db).unwrap();
    assert!(cfg.tls.is_some());
    let server = Server::start(db, ServerConfig { port: 0, ..cfg }).unwrap();
    let port = server.tcp_addrs()[0].port();

    // Without TLS: the hostnossl line rejects.
    let plain = raw_exchange(port, true, &msg(b'X', &[]));
    assert_eq!(first_error_code(&plain).as_deref(), Some("28000"));

    // Plain bytes sent along with the SSLRequest would be read as if they had come over TLS
    // (CVE-2021-23214): refused, with no 'S'.
    let mut stuffed = vec![0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
    stuffed.extend_from_slice(&msg(b'Q', &cstr("SELECT 1")));
    let out = raw_exchange(port, false, &stuffed);
    assert_ne!(out.first(), Some(&b'S'));
    assert_eq!(first_error_code(&out).as_deref(), Some("08P01"));

    // SSLRequest, 'S', the handshake, then the protocol inside TLS.
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    sock.write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]).unwrap();
    let mut answer = [0u8; 1];
    sock.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"S");
    let mut roots = rustls::RootCertStore::empty();
    roots.add(rustls::pki_types::CertificateDer::from_pem_slice(ca.as_bytes()).unwrap()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let conn = rustls::ClientConnection::new(Arc::new(client), "localhost".try_into().unwrap()).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, sock);
    let mut p = Vec::new();
    p.extend_from_slice(&196608i32.to_be_bytes());
    p.extend_from_slice(b"user\0postgres\0\0");
    let mut startup = ((p.len() + 4) as i32).to_be_bytes().to_vec();
    startup.extend_from_slice(&p);
    tls.write_all(&startup).unwrap();
    tls.write_all(&[msg(b'Q', &cstr("SELECT 41 + 1")), msg(b'X', &[])].concat()).unwrap();
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out);
    let m = messages(&out);
    assert_eq!(first_error_code(&out), None);
    assert!(m.iter().any(|(t, body)| *t == b'D' && body.ends_with(b"42")), "{m:?}");
    server.shutdown(Duration::from_secs(2));
}

#[test]
fn ssl_on_without_a_certificate_stops_serve() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    Database::init(&dir, &[]).unwrap();
    let db = Database::open(&dir, &["ssl=on".into()]).unwrap();
    let e = ServerConfig::from_settings(&db).unwrap_err();
    assert_eq!(e.code, "F0000");
    assert!(e.message.starts_with("could not load server certificate file"), "{}", e.message);
}

use rustls::pki_types::pem::PemObject;

/// libpq's `options` (PGOPTIONS): `-c name=value` settings apply as SET would and are what
/// RESET returns to; one that cannot apply ends the connection with FATAL, never ignored.
#[test]
fn startup_options_set_settings_or_refuse_the_connection() {
    let s = TestServer::default();
    let mut cfg = s.tcp_config("postgres");
    cfg.options("-c enable_indexonlyscan=off --random-page-cost=1.5 -c application_name=with\\ space");
    let mut c = cfg.connect(NoTls).unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW enable_indexonlyscan")[0][0].as_deref(), Some("off"));
    assert_eq!(simple_rows(&mut c, "SHOW random_page_cost")[0][0].as_deref(), Some("1.5"));
    assert_eq!(simple_rows(&mut c, "SHOW application_name")[0][0].as_deref(), Some("with space"));
    c.batch_execute("SET random_page_cost = 3; RESET random_page_cost").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW random_page_cost")[0][0].as_deref(), Some("1.5"));
    for (opts, want) in [
        ("-c no_such_setting=1", "42704"),
        ("-c enable_seqscan=maybe", "22023"),
        ("-c shared_buffers=1GB", "55P02"),
        ("-B 100", "0A000"),
        ("-c work_mem", "42601"),
    ] {
        let mut cfg = s.tcp_config("postgres");
        cfg.options(opts);
        let e = cfg.connect(NoTls).err().unwrap_or_else(|| panic!("{opts}: connected"));
        assert_eq!(code(&e), want, "{opts}: {e}");
    }
}

/// A simple Query holding a SET (answered by the server's session parameters) and other
/// statements runs each of them: the SET's value is its own, and nothing after it is lost.
#[test]
fn a_set_in_a_multi_statement_query_is_one_statement() {
    let s = TestServer::default();
    let mut c = s.tcp();
    let msgs = c.simple_query("SET application_name = 'x'; SELECT 41 + 1; SHOW application_name").unwrap();
    let rows: Vec<String> =
        msgs.iter().filter_map(|m| if let SimpleQueryMessage::Row(r) = m { r.get(0).map(str::to_string) } else { None }).collect();
    assert_eq!(rows, ["42", "x"]);
    c.batch_execute("SET random_page_cost = 3; RESET random_page_cost").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW random_page_cost")[0][0].as_deref(), Some("4"));
}

/// CHECKPOINT, alone or among other statements, through both protocols.
#[test]
fn checkpoint_is_a_statement() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE cp (a int); INSERT INTO cp VALUES (1); CHECKPOINT; INSERT INTO cp VALUES (2)").unwrap();
    assert_eq!(simple_rows(&mut c, "SELECT count(*) FROM cp")[0][0].as_deref(), Some("2"));
    assert_eq!(c.execute("CHECKPOINT", &[]).unwrap(), 0);
    c.batch_execute("BEGIN; CHECKPOINT; COMMIT").unwrap();
    // Not in a failed block, as any statement but ROLLBACK.
    c.batch_execute("BEGIN").unwrap();
    assert!(c.batch_execute("SELECT 1 / 0").is_err());
    assert_eq!(code(&c.batch_execute("CHECKPOINT").unwrap_err()), "25P02");
    c.batch_execute("ROLLBACK").unwrap();
}

/// RESET of a setting the engine keeps (work_mem, transaction characteristics) returns it to
/// the server's value; such a setting in the startup options is refused, not half applied.
#[test]
fn reset_of_engine_settings() {
    let s = TestServer::default();
    let mut c = s.tcp();
    let before = simple_rows(&mut c, "SHOW work_mem")[0][0].clone();
    c.batch_execute("SET work_mem = '7MB'").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW work_mem")[0][0].as_deref(), Some("7MB"));
    c.batch_execute("RESET work_mem").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW work_mem")[0][0], before);
    c.batch_execute("SET default_transaction_isolation = 'repeatable read'; RESET default_transaction_isolation").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW default_transaction_isolation")[0][0].as_deref(), Some("read committed"));
    let mut cfg = s.tcp_config("postgres");
    cfg.options("-c work_mem=8MB");
    assert_eq!(code(&cfg.connect(NoTls).err().unwrap()), "0A000");
}

/// Bind of a named portal `portal` of the unnamed statement, no parameters, text results.
fn bind_named(portal: &str) -> Vec<u8> {
    let mut b = [cstr(portal), cstr("")].concat();
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    msg(b'B', &b)
}

fn execute_named(portal: &str, max_rows: i32) -> Vec<u8> {
    msg(b'E', &[cstr(portal), max_rows.to_be_bytes().to_vec()].concat())
}

/// The CommandComplete tags of a byte stream of backend messages.
fn command_tags(b: &[u8]) -> Vec<String> {
    messages(b)
        .into_iter()
        .filter(|(t, _)| *t == b'C')
        .map(|(_, body)| String::from_utf8_lossy(&body[..body.len() - 1]).into_owned())
        .collect()
}

#[test]
fn named_portals_end_with_their_transaction_and_the_last_execute_counts_its_own_rows() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE p (a integer); INSERT INTO p SELECT generate_series(1, 5)").unwrap();
    let parse = msg(b'P', &[cstr(""), cstr("SELECT a FROM p ORDER BY a"), 0i16.to_be_bytes().to_vec()].concat());
    // Outside a block the Sync ends the implicit transaction and the named portal with it: the
    // same name binds again (PostgreSQL's portals are not holdable). Executed 4 rows then the
    // rest, the last Execute reports its own row.
    let bytes = [
        parse.clone(),
        bind_named("c1"),
        execute_named("c1", 4),
        execute_named("c1", 0),
        msg(b'S', &[]),
        bind_named("c1"),
        execute_named("c1", 0),
        msg(b'S', &[]),
        msg(b'X', &[]),
    ]
    .concat();
    let out = raw_exchange(s.port, true, &bytes);
    assert_eq!(first_error_code(&out), None);
    assert_eq!(command_tags(&out), ["SELECT 1", "SELECT 5"]);
    assert_eq!(messages(&out).iter().filter(|(t, _)| *t == b's').count(), 1, "one PortalSuspended");
    // Inside a block it lives on across Syncs, so a second Bind of the name is 42P03.
    let bytes = [
        msg(b'Q', &cstr("BEGIN")),
        parse.clone(),
        bind_named("c2"),
        execute_named("c2", 2),
        msg(b'S', &[]),
        bind_named("c2"),
        msg(b'S', &[]),
        msg(b'X', &[]),
    ]
    .concat();
    let out = raw_exchange(s.port, true, &bytes);
    assert_eq!(first_error_code(&out).as_deref(), Some("42P03"));
    // In a failed block a portal that returns rows (bound before the failure) is not
    // described (25P02).
    let bytes = [
        msg(b'Q', &cstr("BEGIN")),
        parse,
        bind_named("c3"),
        msg(b'S', &[]),
        msg(b'Q', &cstr("SELECT 1/0")),
        msg(b'D', &[b"P".to_vec(), cstr("c3")].concat()),
        msg(b'S', &[]),
        msg(b'X', &[]),
    ]
    .concat();
    let codes: Vec<String> = messages(&raw_exchange(s.port, true, &bytes))
        .into_iter()
        .filter(|(t, _)| *t == b'E')
        .filter_map(|(_, body)| first_error_code(&msg(b'E', &body)))
        .collect();
    assert_eq!(codes, ["22012", "25P02"]);
}

#[test]
fn a_parameter_type_the_client_declares_types_the_parameter() {
    let s = TestServer::default();
    // Parse with $1 declared numeric (1700) and $2 int8 (20), Describe, Bind text values.
    let sql = "SELECT round($1), $1 / 2, $2 / 2, $1";
    let mut parse = [cstr(""), cstr(sql)].concat();
    parse.extend_from_slice(&2i16.to_be_bytes());
    parse.extend_from_slice(&1700i32.to_be_bytes());
    parse.extend_from_slice(&20i32.to_be_bytes());
    let mut bind = [cstr(""), cstr("")].concat();
    bind.extend_from_slice(&0i16.to_be_bytes());
    bind.extend_from_slice(&2i16.to_be_bytes());
    for p in [&b"2.5"[..], b"5"] {
        bind.extend_from_slice(&(p.len() as i32).to_be_bytes());
        bind.extend_from_slice(p);
    }
    bind.extend_from_slice(&0i16.to_be_bytes());
    let bytes = [
        msg(b'P', &parse),
        msg(b'B', &bind),
        msg(b'D', &[b"P".to_vec(), cstr("")].concat()),
        msg(b'E', &[cstr(""), 0i32.to_be_bytes().to_vec()].concat()),
        msg(b'S', &[]),
        msg(b'X', &[]),
    ]
    .concat();
    let out = raw_exchange(s.port, true, &bytes);
    assert_eq!(first_error_code(&out), None);
    let ms = messages(&out);
    // As PostgreSQL: round(numeric) is 3, numeric division keeps the fraction, bigint's does
    // not; the bare parameter's column is `?column?`, of type numeric.
    let row = ms.iter().find(|(t, _)| *t == b'D').map(|(_, b)| b.clone()).expect("a row");
    let mut fields = Vec::new();
    let mut at = 2;
    for _ in 0..i16::from_be_bytes([row[0], row[1]]) {
        let len = i32::from_be_bytes(row[at..at + 4].try_into().unwrap()) as usize;
        fields.push(String::from_utf8_lossy(&row[at + 4..at + 4 + len]).into_owned());
        at += 4 + len;
    }
    assert_eq!(fields, ["3", "1.25000000000000000000", "2", "2.5"]);
    let desc = ms.iter().find(|(t, _)| *t == b'T').map(|(_, b)| b.clone()).expect("a RowDescription");
    let desc = String::from_utf8_lossy(&desc).into_owned();
    assert!(desc.contains("?column?") && !desc.contains("numeric\0"), "{desc:?}");
}

#[test]
fn sql_execute_converts_its_constants_to_the_parameter_types() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("PREPARE p1(int) AS SELECT $1; PREPARE p2(numeric, date) AS SELECT round($1), $2 + 1").unwrap();
    // An assignment cast, as PostgreSQL's EXECUTE does: 1.5 is 2 for an integer.
    assert_eq!(simple_rows(&mut c, "EXECUTE p1(1.5)"), vec![vec![Some("2".to_string())]]);
    assert_eq!(simple_rows(&mut c, "EXECUTE p1('7')"), vec![vec![Some("7".to_string())]]);
    assert_eq!(simple_rows(&mut c, "EXECUTE p2(2.5, '2024-01-31')"), vec![vec![Some("3".to_string()), Some("2024-02-01".to_string())]]);
    let e = c.batch_execute("EXECUTE p1(true)").unwrap_err();
    assert_eq!(code(&e), "42804");
}

/// A cursor's rows past `work_mem` wait in a temporary file, not in memory: FETCH and MOVE
/// read them in order, and the file is gone when the transaction ends.
#[test]
fn a_large_cursor_holds_its_rows_in_a_temporary_file() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE big (id int, pad text); INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g")
        .unwrap();
    let tmp_files = || std::fs::read_dir(s.dir.join("pgsql_tmp")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(tmp_files(), 0);
    c.batch_execute("SET work_mem = '64kB'; BEGIN; DECLARE k CURSOR FOR SELECT id, pad FROM big ORDER BY id DESC").unwrap();
    assert_eq!(tmp_files(), 1, "the rows past work_mem are in a temporary file");
    let ids = |rows: Vec<Vec<Option<String>>>| rows.into_iter().map(|r| r[0].clone().unwrap().parse::<i32>().unwrap()).collect::<Vec<_>>();
    assert_eq!(ids(simple_rows(&mut c, "FETCH 3 FROM k")), [20000, 19999, 19998]);
    c.batch_execute("MOVE 19990 IN k").unwrap();
    assert_eq!(ids(simple_rows(&mut c, "FETCH ALL FROM k")), [7, 6, 5, 4, 3, 2, 1]);
    assert!(simple_rows(&mut c, "FETCH k").is_empty());
    c.batch_execute("COMMIT").unwrap();
    assert_eq!(tmp_files(), 0);
}

/// A simple Query of several statements run one by one (it holds a SET) keeps every string
/// constant as written: escapes, doubled quotes and quoted identifiers are not read twice.
#[test]
fn statements_of_one_query_keep_their_string_constants() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE sq (t text)").unwrap();
    c.batch_execute(
        r#"SET application_name = 'x'; INSERT INTO sq VALUES (E'a\\tb'), ('it''s'), ($$d$q$$), (U&'\0041'); SELECT 1 AS "a""b""#,
    )
    .unwrap();
    assert_eq!(
        simple_rows(&mut c, "SELECT t, length(t) FROM sq ORDER BY t"),
        vec![
            vec![Some("A".to_string()), Some("1".to_string())],
            vec![Some("a\\tb".to_string()), Some("4".to_string())],
            vec![Some("d$q".to_string()), Some("3".to_string())],
            vec![Some("it's".to_string()), Some("4".to_string())],
        ]
    );
    // SET, answered by the server itself, reads continued strings as the parser does.
    c.batch_execute("SET application_name = 'con'\n'tinued'").unwrap();
    assert_eq!(simple_rows(&mut c, "SHOW application_name"), vec![vec![Some("continued".to_string())]]);
}

/// A cursor opened after a savepoint stays open past ROLLBACK TO (heapstore keeps it), and
/// keeps the lock on the table it reads: another session cannot drop the table under it.
#[test]
fn rollback_to_closes_the_cursors_declared_since_and_gives_back_their_locks() {
    let s = TestServer::default();
    let mut a = s.tcp();
    let mut b = s.tcp();
    a.batch_execute("CREATE TABLE ck (x int); INSERT INTO ck VALUES (1), (2); CREATE TABLE ck2 (y int); INSERT INTO ck2 VALUES (7)")
        .unwrap();
    a.batch_execute("BEGIN; DECLARE early CURSOR FOR SELECT y FROM ck2; SAVEPOINT s; DECLARE c CURSOR FOR SELECT x FROM ck ORDER BY x")
        .unwrap();
    assert_eq!(simple_rows(&mut a, "FETCH 1 FROM c"), vec![vec![Some("1".to_string())]]);
    a.batch_execute("ROLLBACK TO SAVEPOINT s").unwrap();
    // The cursor declared since the savepoint is gone, and with it its table's lock.
    b.batch_execute("BEGIN; LOCK TABLE ck IN ACCESS EXCLUSIVE MODE NOWAIT; ROLLBACK").unwrap();
    b.batch_execute("BEGIN").unwrap();
    assert_eq!(code(&b.batch_execute("LOCK TABLE ck2 IN ACCESS EXCLUSIVE MODE NOWAIT").unwrap_err()), "55P03");
    b.batch_execute("ROLLBACK").unwrap();
    assert_eq!(simple_rows(&mut a, "FETCH early"), vec![vec![Some("7".to_string())]]);
    // RELEASE keeps what was declared since: it belongs to the transaction now.
    a.batch_execute("SAVEPOINT t; DECLARE d CURSOR FOR SELECT x FROM ck ORDER BY x; RELEASE t").unwrap();
    assert_eq!(simple_rows(&mut a, "FETCH d").len(), 1);
    a.batch_execute("SAVEPOINT u").unwrap();
    assert_eq!(code(&a.batch_execute("FETCH c").unwrap_err()), "34000");
    a.batch_execute("ROLLBACK TO u").unwrap();
    assert_eq!(simple_rows(&mut a, "FETCH d").len(), 1);
    a.batch_execute("COMMIT").unwrap();
    b.batch_execute("DROP TABLE ck, ck2").unwrap();
}

#[test]
fn cursors_with_hold_with_parameters_and_every_fetch_form() {
    let s = TestServer::default();
    let mut c = s.tcp();
    c.batch_execute("CREATE TABLE hc (id int PRIMARY KEY, v text); INSERT INTO hc SELECT g, 'v' || g FROM generate_series(1, 10) g")
        .unwrap();
    let ids = |rows: Vec<Vec<Option<String>>>| -> Vec<i32> { rows.iter().map(|r| r[0].as_deref().unwrap().parse().unwrap()).collect() };
    // DECLARE through the extended protocol with a parameter (psycopg's named cursors).
    c.batch_execute("BEGIN").unwrap();
    c.execute("DECLARE p CURSOR FOR SELECT id FROM hc WHERE id > $1 AND v <> $2 ORDER BY id", &[&7i32, &"v9"]).unwrap();
    assert_eq!(ids(simple_rows(&mut c, "FETCH ALL p")), [8, 10]);
    c.batch_execute("COMMIT").unwrap();
    // WITH HOLD outside a block: it outlives its transaction, without its tables' locks.
    c.batch_execute("DECLARE h CURSOR WITH HOLD FOR SELECT id FROM hc ORDER BY id").unwrap();
    assert_eq!(ids(simple_rows(&mut c, "FETCH 2 h")), [1, 2]);
    c.batch_execute("ALTER TABLE hc ADD COLUMN z int; DELETE FROM hc WHERE id = 3").unwrap();
    // Every forward form, as PostgreSQL answers a NO SCROLL cursor.
    assert_eq!(ids(simple_rows(&mut c, "FETCH h")), [3]);
    assert_eq!(ids(simple_rows(&mut c, "FETCH FORWARD 1 IN h")), [4]);
    assert_eq!(ids(simple_rows(&mut c, "FETCH RELATIVE 2 FROM h")), [6]);
    assert_eq!(ids(simple_rows(&mut c, "FETCH ABSOLUTE 8 h")), [8]);
    // What would go back fails, and the cursor cannot run again.
    for backward in ["FETCH -1 FROM b", "FETCH PRIOR b", "FETCH 0 b", "FETCH ABSOLUTE 2 b", "FETCH LAST b", "FETCH BACKWARD 1 b"] {
        c.batch_execute("DECLARE b CURSOR WITH HOLD FOR SELECT id FROM hc ORDER BY id; FETCH 2 b").unwrap();
        assert_eq!(code(&c.batch_execute(backward).unwrap_err()), "55000", "{backward}");
        let e = c.batch_execute("FETCH b").unwrap_err();
        assert_eq!(e.as_db_error().unwrap().message(), "portal \"b\" cannot be run");
        c.batch_execute("CLOSE b").unwrap();
    }
    let moved = |c: &mut Client, sql: &str| {
        c.simple_query(sql).unwrap().iter().find_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
    };
    assert_eq!(moved(&mut c, "MOVE 0 h"), Some(1));
    assert_eq!(moved(&mut c, "MOVE ALL IN h"), Some(2));
    assert_eq!(simple_rows(&mut c, "FETCH 0 h").len(), 0);
    assert_eq!(code(&c.batch_execute("FETCH 1.5 h").unwrap_err()), "42601");
    c.batch_execute("CLOSE h").unwrap();
    assert_eq!(code(&c.batch_execute("FETCH h").unwrap_err()), "34000");
    // Declared WITH HOLD in a block: kept at COMMIT, closed at ROLLBACK.
    c.batch_execute("BEGIN; DECLARE k CURSOR WITH HOLD FOR SELECT id FROM hc ORDER BY id; COMMIT").unwrap();
    c.batch_execute("BEGIN; DECLARE r CURSOR WITH HOLD FOR SELECT id FROM hc; ROLLBACK").unwrap();
    assert_eq!(code(&c.batch_execute("FETCH r").unwrap_err()), "34000");
    // A later rollback leaves a held cursor alone.
    c.batch_execute("BEGIN; SELECT 1; ROLLBACK").unwrap();
    assert_eq!(ids(simple_rows(&mut c, "FETCH 2 k")), [1, 2]);
    c.batch_execute("DISCARD ALL").unwrap();
    assert_eq!(code(&c.batch_execute("FETCH k").unwrap_err()), "34000");
    // However its transaction ends within one Query, a cursor goes with it.
    c.batch_execute("BEGIN; DECLARE x1 CURSOR WITH HOLD FOR SELECT 1").unwrap();
    c.batch_execute("ROLLBACK; SELECT 1").unwrap();
    assert_eq!(code(&c.batch_execute("FETCH x1").unwrap_err()), "34000");
    c.batch_execute("BEGIN; SAVEPOINT s; DECLARE x2 CURSOR WITH HOLD FOR SELECT 1").unwrap();
    c.batch_execute("ROLLBACK TO s; COMMIT").unwrap();
    assert_eq!(code(&c.batch_execute("FETCH x2").unwrap_err()), "34000");
    c.batch_execute("BEGIN; DECLARE x3 CURSOR FOR SELECT id FROM hc").unwrap();
    c.batch_execute("COMMIT AND CHAIN").unwrap();
    c.batch_execute("ALTER TABLE hc ADD COLUMN y int").unwrap();
    assert_eq!(code(&c.batch_execute("FETCH x3").unwrap_err()), "34000");
    c.batch_execute("ROLLBACK").unwrap();
    // A holdable cursor must be read-only; a failing query leaves no cursor behind.
    let e = c.batch_execute("DECLARE u CURSOR WITH HOLD FOR SELECT id FROM hc FOR NO KEY UPDATE").unwrap_err();
    assert_eq!(code(&e), "0A000");
    assert_eq!(e.as_db_error().unwrap().message(), "DECLARE CURSOR WITH HOLD ... FOR NO KEY UPDATE is not supported");
    assert_eq!(code(&c.batch_execute("DECLARE z CURSOR WITH HOLD FOR SELECT 1 / 0").unwrap_err()), "22012");
    assert_eq!(code(&c.batch_execute("FETCH z").unwrap_err()), "34000");
    // A Query of several statements is a transaction block for DECLARE.
    assert_eq!(ids(simple_rows(&mut c, "DECLARE m CURSOR FOR SELECT id FROM hc ORDER BY id; FETCH 2 m")), [1, 2]);
    assert_eq!(code(&c.batch_execute("FETCH m").unwrap_err()), "34000");
}

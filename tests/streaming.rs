//! Results stream: `SELECT *` over a table ten times the buffer pool, sent by `heapstore
//! serve` to a client that reads and discards it, raises the server process's peak resident
//! memory by far less than the table's size (rows go out as they are produced).
//!
//! This file holds one test, so the process's peak RSS is this test's.

mod common;

use heapstore::auth::Hba;
use heapstore::server::{Server, ServerConfig};
use heapstore::sql::CopyIo;
use heapstore::Database;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// CSV rows `i,<90 bytes of text>` generated on the fly.
struct Rows {
    next: u64,
    end: u64,
    buf: Vec<u8>,
    at: usize,
}

impl Read for Rows {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.buf.len() {
            if self.next == self.end {
                return Ok(0);
            }
            self.buf.clear();
            self.at = 0;
            for _ in 0..1000.min(self.end - self.next) {
                let i = self.next;
                self.next += 1;
                self.buf.extend_from_slice(format!("{i},{:090}\n", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).as_bytes());
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn msg(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

/// Reads messages until ReadyForQuery, counting DataRows; fails on an ErrorResponse.
fn drain(s: &mut TcpStream) -> u64 {
    let mut rows = 0;
    let mut hdr = [0u8; 5];
    let mut body = Vec::new();
    loop {
        s.read_exact(&mut hdr).unwrap();
        let n = u32::from_be_bytes(hdr[1..5].try_into().unwrap()) as usize - 4;
        body.resize(n, 0);
        s.read_exact(&mut body).unwrap();
        match hdr[0] {
            b'D' => rows += 1,
            b'E' => panic!("error: {}", String::from_utf8_lossy(&body)),
            b'Z' => return rows,
            _ => {}
        }
    }
}

#[test]
fn select_star_over_a_table_ten_times_the_pool_streams() {
    if !std::path::Path::new("/proc/self/clear_refs").exists() {
        eprintln!("SKIPPED: no /proc/self/clear_refs to reset the peak RSS");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    Database::init(&dir, &[]).unwrap();
    heapstore::auth::init_roles(&dir, "postgres").unwrap();
    let db = Arc::new(Database::open(&dir, &["shared_buffers=8MB".to_string()]).unwrap());
    // ~96 MB of heap: twelve times the 8 MB pool.
    let nrows = 800_000u64;
    {
        let mut s = db.session();
        s.execute("CREATE TABLE wide (id bigint, v text)").unwrap();
        let mut src = Rows { next: 0, end: nrows, buf: Vec::new(), at: 0 };
        s.execute_with_io("COPY wide FROM STDIN WITH (FORMAT csv)", &mut CopyIo { stdin: Some(&mut src), stdout: None, rows: None })
            .unwrap();
    }
    let cfg = ServerConfig {
        listen_addresses: vec!["127.0.0.1".into()],
        port: 0,
        socket_dir: None,
        hba: Hba::parse("host all all 127.0.0.1/32 trust").unwrap(),
        max_connections: 4,
        tls: None,
    };
    let server = Server::start(db, cfg).unwrap();
    let port = server.tcp_addrs()[0].port();
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut startup = Vec::new();
    startup.extend_from_slice(&196608u32.to_be_bytes());
    for kv in ["user", "postgres", "database", "postgres"] {
        startup.extend_from_slice(kv.as_bytes());
        startup.push(0);
    }
    startup.push(0);
    let mut m = ((startup.len() + 4) as u32).to_be_bytes().to_vec();
    m.extend_from_slice(&startup);
    c.write_all(&m).unwrap();
    drain(&mut c);

    // Reset the peak, then read the whole table through the wire.
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status_kb("VmRSS:");
    c.write_all(&msg(b'Q', b"SELECT * FROM wide\0")).unwrap();
    let rows = drain(&mut c);
    let peak = status_kb("VmHWM:");
    assert_eq!(rows, nrows);
    let grew_mb = peak.saturating_sub(before) / 1024;
    eprintln!("peak RSS grew by {grew_mb} MB while sending {nrows} rows (~96 MB of table)");
    // Materialized, the result would take well over the table's size; streamed, it takes the
    // pool (already counted before) plus buffers.
    assert!(grew_mb < 40, "peak RSS grew by {grew_mb} MB: the result was not streamed");
    c.write_all(&msg(b'X', &[])).unwrap();
    let db = server.shutdown(Duration::from_secs(5));
    Arc::try_unwrap(db).ok().expect("no session holds the database").close().unwrap();
}

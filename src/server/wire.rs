//! Message framing over a blocking stream: our own framing and length checks, `pgwire`'s
//! codec for the fields of each message.
//!
//! Invariants:
//! 1. A frame's length is checked before any of its body is read or buffered: a startup
//!    packet is 8..=[`STARTUP_LEN_MAX_BYTES`] bytes, a regular message 4..=[`MESSAGE_LEN_MAX_BYTES`]
//!    (PostgreSQL's `MAX_STARTUP_PACKET_LENGTH` and `PQ_LARGE_MESSAGE_LIMIT`); anything else is a
//!    protocol violation and the connection is closed after an ErrorResponse.
//! 2. `pgwire` decodes exactly one frame, copied into its own buffer: a malformed body can never
//!    read into the next message. A decoder that panics on a short body (it uses `bytes::Buf`'s
//!    panicking getters) is caught and reported as 08P01, not a dead thread.
//! 3. Backend messages are buffered in `out` and written by [`Wire::flush`]; the connection
//!    flushes before every read that would block (no complete input buffered:
//!    [`Wire::input_pending`]), so the client never waits on unsent output, and a pipelined
//!    batch (Bind, Execute, Sync, ...) is answered with one write, as PostgreSQL's pq_flush.
//! 4. Input is read [`IN_BUF_BYTES`] at a time into `inbuf` (one system call for a whole
//!    pipelined batch); a body longer than what is buffered is read straight from the stream.
//!    Bytes buffered when the stream changes (the TLS upgrade) are a protocol violation
//!    (PostgreSQL's "received unencrypted data after SSL request").

use crate::error::{sqlstate, PgError, Result};
use bytes::{BufMut, BytesMut};
use pgwire::messages::{DecodeContext, PgWireBackendMessage, PgWireFrontendMessage};
use std::io::{Read, Write};

/// PostgreSQL's `MAX_STARTUP_PACKET_LENGTH`.
pub const STARTUP_LEN_MAX_BYTES: usize = 10_000;
/// PostgreSQL's `PQ_LARGE_MESSAGE_LIMIT` (1 GB - 1).
pub const MESSAGE_LEN_MAX_BYTES: usize = 0x3fff_ffff;
/// Largest buffer reserved before a message's bytes have arrived.
const BODY_PREALLOC_MAX_BYTES: usize = 1 << 20;
/// Messages that are never long (PostgreSQL's `PQ_SMALL_MESSAGE_LIMIT` for Sync, Flush, ...).
const SMALL_MESSAGE_LEN_MAX_BYTES: usize = 10_000;

/// What a client sends before a session exists.
#[derive(Debug)]
pub enum StartupPacket {
    Ssl,
    Gss,
    Cancel { pid: i32, secret: i32 },
    Startup { major: u16, params: Vec<(String, String)> },
}

/// Bytes read from the client per system call (PostgreSQL's PQ_RECV_BUFFER_SIZE).
pub const IN_BUF_BYTES: usize = 8192;

/// A blocking stream (TCP or Unix socket) with input and output buffers.
pub struct Wire<S: Read + Write> {
    pub stream: S,
    out: BytesMut,
    /// Bytes received and not yet consumed: `inbuf[inpos..]` (invariant 4).
    inbuf: Vec<u8>,
    inpos: usize,
}

fn violation(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::PROTOCOL_VIOLATION, msg)
}

/// The connection ended (EOF or I/O error) while reading: nothing can be reported to the client.
pub fn is_disconnect(e: &PgError) -> bool {
    e.code == sqlstate::CONNECTION_FAILURE
}

fn disconnect(e: std::io::Error) -> PgError {
    PgError::new(sqlstate::CONNECTION_FAILURE, format!("could not receive data from client: {e}"))
}

impl<S: Read + Write> Wire<S> {
    pub fn new(stream: S) -> Self {
        Wire { stream, out: BytesMut::with_capacity(8192), inbuf: Vec::with_capacity(IN_BUF_BYTES), inpos: 0 }
    }

    /// Whether a complete message is already buffered (the next read will not block).
    pub fn input_pending(&self) -> bool {
        let b = &self.inbuf[self.inpos..];
        b.len() >= 5 && {
            let len = i32::from_be_bytes([b[1], b[2], b[3], b[4]]);
            len >= 4 && b.len() > len as usize
        }
    }

    /// Whether any received byte is still unconsumed (checked before a TLS upgrade).
    pub fn has_buffered_input(&self) -> bool {
        self.inpos < self.inbuf.len()
    }

    /// Reads once from the stream into the (empty) input buffer.
    fn fill(&mut self) -> Result<()> {
        debug_assert_eq!(self.inpos, self.inbuf.len());
        self.inbuf.resize(IN_BUF_BYTES, 0);
        self.inpos = 0;
        let n = loop {
            match self.stream.read(&mut self.inbuf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.inbuf.clear();
                    return Err(disconnect(e));
                }
            }
        };
        self.inbuf.truncate(n);
        if n == 0 {
            return Err(disconnect(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "end of stream")));
        }
        Ok(())
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<()> {
        let mut done = 0;
        while done < buf.len() {
            if self.inpos == self.inbuf.len() {
                if buf.len() - done >= IN_BUF_BYTES {
                    return self.stream.read_exact(&mut buf[done..]).map_err(disconnect);
                }
                self.fill()?;
            }
            let n = (buf.len() - done).min(self.inbuf.len() - self.inpos);
            buf[done..done + n].copy_from_slice(&self.inbuf[self.inpos..self.inpos + n]);
            self.inpos += n;
            done += n;
        }
        Ok(())
    }

    /// Reads the startup packet (or SSLRequest / GSSENCRequest / CancelRequest).
    pub fn read_startup(&mut self) -> Result<StartupPacket> {
        let mut len = [0u8; 4];
        self.read_exact(&mut len)?;
        let len = i32::from_be_bytes(len);
        if !(8..=STARTUP_LEN_MAX_BYTES as i32).contains(&len) {
            return Err(violation("invalid length of startup packet"));
        }
        let mut body = vec![0u8; len as usize - 4];
        self.read_exact(&mut body)?;
        let code = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
        match code {
            80877103 => return Ok(StartupPacket::Ssl),
            80877104 => return Ok(StartupPacket::Gss),
            80877102 => {
                if body.len() != 12 {
                    return Err(violation("invalid length of cancel request packet"));
                }
                let pid = i32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                let secret = i32::from_be_bytes([body[8], body[9], body[10], body[11]]);
                return Ok(StartupPacket::Cancel { pid, secret });
            }
            _ => {}
        }
        let major = (code >> 16) as u16;
        let minor = (code & 0xffff) as u16;
        if major != 3 {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"),
            ));
        }
        // The parameters: name\0value\0 ... \0. pgwire's Startup decoder does this too, but it
        // accepts a missing terminator; PostgreSQL does not.
        let rest = &body[4..];
        if rest.last() != Some(&0) {
            return Err(violation("invalid startup packet layout: expected terminator as last byte"));
        }
        let mut params = Vec::new();
        let mut parts = rest[..rest.len() - 1].split(|&b| b == 0);
        while let Some(name) = parts.next() {
            if name.is_empty() {
                break;
            }
            let Some(value) = parts.next() else {
                return Err(violation("invalid startup packet layout: expected terminator as last byte"));
            };
            let s = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| violation("invalid startup packet: not UTF-8"));
            params.push((s(name)?, s(value)?));
        }
        Ok(StartupPacket::Startup { major, params })
    }

    /// Reads one regular message: its type byte and body, length-checked (invariant 1).
    pub fn read_frame(&mut self) -> Result<(u8, BytesMut)> {
        let mut head = [0u8; 5];
        self.read_exact(&mut head)?;
        let ty = head[0];
        let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
        let max = match ty {
            b'S' | b'H' | b'X' | b'c' | b'C' | b'D' | b'E' => SMALL_MESSAGE_LEN_MAX_BYTES,
            _ => MESSAGE_LEN_MAX_BYTES,
        };
        if len < 4 || len as usize > max {
            return Err(violation(format!("invalid message length {len} for message type \"{}\"", ty.escape_ascii())));
        }
        // The body is read as it arrives, not allocated up front: a 5-byte header claiming 1 GB
        // costs nothing until the bytes come.
        let body_len = len as usize - 4;
        let mut body = Vec::with_capacity(body_len.min(BODY_PREALLOC_MAX_BYTES));
        let buffered = body_len.min(self.inbuf.len() - self.inpos);
        body.extend_from_slice(&self.inbuf[self.inpos..self.inpos + buffered]);
        self.inpos += buffered;
        if body.len() < body_len && body_len - body.len() < IN_BUF_BYTES {
            // A short rest: buffer what follows it too.
            let mut rest = vec![0u8; body_len - body.len()];
            self.read_exact(&mut rest)?;
            body.extend_from_slice(&rest);
        } else if body.len() < body_len {
            (&mut self.stream).take((body_len - body.len()) as u64).read_to_end(&mut body).map_err(disconnect)?;
        }
        if body.len() != body_len {
            return Err(disconnect(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed inside a message")));
        }
        let mut frame = BytesMut::with_capacity(body_len + 5);
        frame.put_slice(&head);
        frame.put_slice(&body);
        Ok((ty, frame))
    }

    /// Reads and decodes one regular message (invariant 2).
    pub fn read_message(&mut self) -> Result<PgWireFrontendMessage> {
        let (ty, frame) = self.read_frame()?;
        decode_frame(ty, frame)
    }

    /// Queues a backend message.
    pub fn send(&mut self, m: PgWireBackendMessage) -> Result<()> {
        m.encode(&mut self.out).map_err(|e| PgError::internal(format!("could not encode message: {e}")))
    }

    /// Queues a message encoded by the caller (DataRow is built in place).
    pub fn send_raw(&mut self, ty: u8, body: &[u8]) {
        self.out.put_u8(ty);
        self.out.put_i32(body.len() as i32 + 4);
        self.out.put_slice(body);
    }

    /// Bytes queued and not yet written.
    pub fn pending_bytes(&self) -> usize {
        self.out.len()
    }

    /// Writes everything queued.
    pub fn flush(&mut self) -> Result<()> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out).map_err(disconnect)?;
            self.out.clear();
        }
        self.stream.flush().map_err(disconnect)
    }
}

/// Decodes one complete frame with pgwire (invariant 2).
pub fn decode_frame(ty: u8, frame: BytesMut) -> Result<PgWireFrontendMessage> {
    let mut ctx = DecodeContext::default();
    ctx.awaiting_ssl = false;
    ctx.awaiting_startup = false;
    let r = std::panic::catch_unwind(move || {
        let mut frame = frame;
        PgWireFrontendMessage::decode(&mut frame, &ctx).map(|m| (m, frame.len()))
    });
    match r {
        Ok(Ok((Some(m), 0))) => Ok(m),
        Ok(Ok((Some(_), left))) => {
            Err(violation(format!("invalid message format: {left} bytes left over in message \"{}\"", ty.escape_ascii())))
        }
        Ok(Ok((None, _))) | Err(_) => Err(violation(format!("invalid message format in message \"{}\"", ty.escape_ascii()))),
        Ok(Err(pgwire::error::PgWireError::InvalidMessageType(t))) => Err(violation(format!("invalid frontend message type {t}"))),
        Ok(Err(e)) => Err(violation(format!("invalid message format: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    struct Duplex(Cursor<Vec<u8>>, Vec<u8>);
    impl Read for Duplex {
        fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
            self.0.read(b)
        }
    }
    impl Write for Duplex {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.1.write(b)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn wire(bytes: &[u8]) -> Wire<Duplex> {
        Wire::new(Duplex(Cursor::new(bytes.to_vec()), Vec::new()))
    }

    #[test]
    fn lengths_are_checked_before_reading() {
        let e = wire(&[b'Q', 0x7f, 0xff, 0xff, 0xff]).read_message().unwrap_err();
        assert_eq!(e.code, sqlstate::PROTOCOL_VIOLATION);
        let e = wire(&[b'Q', 0, 0, 0, 2]).read_message().unwrap_err();
        assert_eq!(e.code, sqlstate::PROTOCOL_VIOLATION);
        let e = wire(&[b'S', 0, 1, 0, 0]).read_message().unwrap_err();
        assert_eq!(e.code, sqlstate::PROTOCOL_VIOLATION);
        let e = wire(&[0, 1, 0, 0]).read_startup().unwrap_err();
        assert_eq!(e.code, sqlstate::PROTOCOL_VIOLATION);
    }

    #[test]
    fn pipelined_messages_are_read_from_one_buffer() {
        let mut bytes = Vec::new();
        for q in ["SELECT 1", "SELECT 2"] {
            bytes.push(b'Q');
            bytes.extend_from_slice(&(q.len() as i32 + 5).to_be_bytes());
            bytes.extend_from_slice(q.as_bytes());
            bytes.push(0);
        }
        bytes.extend_from_slice(&[b'S', 0, 0, 0, 4, b'X', 0, 0]); // Sync, then a partial header
        let mut w = wire(&bytes);
        assert!(!w.input_pending(), "nothing is buffered before the first read");
        assert!(matches!(w.read_message().unwrap(), PgWireFrontendMessage::Query(q) if q.query == "SELECT 1"));
        assert!(w.input_pending());
        assert!(matches!(w.read_message().unwrap(), PgWireFrontendMessage::Query(q) if q.query == "SELECT 2"));
        assert!(w.input_pending());
        assert!(matches!(w.read_message().unwrap(), PgWireFrontendMessage::Sync(_)));
        assert!(!w.input_pending(), "a partial message is not pending: the next read may block");
        assert!(w.has_buffered_input());
        assert!(is_disconnect(&w.read_message().unwrap_err()));
        // A body longer than the buffer arrives whole.
        let long = "x".repeat(3 * IN_BUF_BYTES);
        let mut bytes = vec![b'Q'];
        bytes.extend_from_slice(&(long.len() as i32 + 5).to_be_bytes());
        bytes.extend_from_slice(long.as_bytes());
        bytes.push(0);
        assert!(matches!(wire(&bytes).read_message().unwrap(), PgWireFrontendMessage::Query(q) if q.query == long));
    }

    #[test]
    fn truncated_and_garbage_bodies_are_violations() {
        // Bind claiming 5 parameters in a 12-byte body.
        let e = wire(&[b'B', 0, 0, 0, 12, 0, 0, 0, 0, 0, 5, 0, 0]).read_message().unwrap_err();
        assert_eq!(e.code, sqlstate::PROTOCOL_VIOLATION);
        let e = wire(&[b'!', 0, 0, 0, 4]).read_message().unwrap_err();
        assert_eq!(e.code, sqlstate::PROTOCOL_VIOLATION);
        let e = wire(&[b'Q', 0, 0, 0, 10, b'x']).read_message().unwrap_err();
        assert!(is_disconnect(&e));
    }

    #[test]
    fn random_bodies_never_escape_as_panics() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for &ty in b"BCDEFHPQSXcdfp!" {
            for _ in 0..300 {
                let len = (next() % 48) as usize;
                let mut frame = BytesMut::new();
                frame.put_u8(ty);
                frame.put_i32(len as i32 + 4);
                for _ in 0..len {
                    frame.put_u8(next() as u8 % 8);
                }
                // Ok or a protocol violation; never an unwinding panic.
                if let Err(e) = decode_frame(ty, frame) {
                    assert_eq!(e.code, sqlstate::PROTOCOL_VIOLATION);
                }
            }
        }
    }

    #[test]
    fn a_query_decodes() {
        let m = wire(&[b'Q', 0, 0, 0, 7, b'x', b'y', 0]).read_message().unwrap();
        assert!(matches!(m, PgWireFrontendMessage::Query(q) if q.query == "xy"));
    }
}

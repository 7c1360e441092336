//! TLS for `serve` (rustls): PostgreSQL's `ssl`, `ssl_cert_file` and `ssl_key_file` settings,
//! and the stream a connection upgrades in place when the client's SSLRequest is answered 'S'.
//!
//! Invariants:
//! 1. With `ssl = off` (the default) every SSLRequest is answered 'N', as PostgreSQL does; with
//!    `ssl = on` a TCP connection's SSLRequest is answered 'S' and the TLS handshake follows
//!    before anything else is read. Unix-socket connections are never encrypted (PostgreSQL
//!    answers 'N' there too).
//! 2. The certificate and key are loaded when the server starts: a missing or unreadable file
//!    stops `serve` with PostgreSQL's message, never a server that silently runs without TLS.
//! 3. A stream is upgraded only between frames (the wire layer reads exact frames, so no client
//!    byte sent after the SSLRequest has been consumed as plaintext).

use crate::error::{PgError, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

/// The TLS configuration from the settings, or None when `ssl` is off. Relative file names are
/// relative to the data directory (`server.crt` and `server.key` by default, as PostgreSQL's).
pub fn load(dir: &Path, settings: &crate::config::Settings) -> Result<Option<Arc<rustls::ServerConfig>>> {
    if !settings.bool("ssl") {
        return Ok(None);
    }
    let cert_file = dir.join(settings.get("ssl_cert_file")?);
    let key_file = dir.join(settings.get("ssl_key_file")?);
    let config_err =
        |what: &str, f: &Path, why: String| PgError::new("F0000", format!("could not load {what} file \"{}\": {why}", f.display()));
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_file)
        .map_err(|e| config_err("server certificate", &cert_file, e.to_string()))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| config_err("server certificate", &cert_file, e.to_string()))?;
    if certs.is_empty() {
        return Err(config_err("server certificate", &cert_file, "no certificate found".into()));
    }
    let key = PrivateKeyDer::from_pem_file(&key_file).map_err(|e| config_err("private key", &key_file, e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| PgError::new("F0000", format!("could not set up TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| PgError::new("F0000", format!("could not load private key file \"{}\": {e}", key_file.display())))?;
    Ok(Some(Arc::new(cfg)))
}

/// A connection's byte stream: plain, or TLS after the SSLRequest (invariant 3).
pub enum MaybeTls<S: Read + Write> {
    Plain(S),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, S>>),
    /// Only while upgrading.
    Swapping,
}

impl<S: Read + Write> MaybeTls<S> {
    /// Wraps the plain stream in a TLS session (the handshake runs on the first read/write).
    pub fn upgrade(&mut self, cfg: &Arc<rustls::ServerConfig>) -> std::io::Result<()> {
        let MaybeTls::Plain(s) = std::mem::replace(self, MaybeTls::Swapping) else {
            return Err(std::io::Error::other("the connection is already encrypted"));
        };
        let conn = rustls::ServerConnection::new(cfg.clone()).map_err(std::io::Error::other)?;
        let mut tls = rustls::StreamOwned::new(conn, s);
        // Finish the handshake now, so a failure is reported here.
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock)?;
        }
        *self = MaybeTls::Tls(Box::new(tls));
        Ok(())
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, MaybeTls::Tls(_))
    }
}

impl<S: Read + Write> Read for MaybeTls<S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            MaybeTls::Plain(s) => s.read(buf),
            MaybeTls::Tls(t) => t.read(buf),
            MaybeTls::Swapping => Err(std::io::Error::other("stream is being upgraded")),
        }
    }
}

impl<S: Read + Write> Write for MaybeTls<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            MaybeTls::Plain(s) => s.write(buf),
            MaybeTls::Tls(t) => t.write(buf),
            MaybeTls::Swapping => Err(std::io::Error::other("stream is being upgraded")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            MaybeTls::Plain(s) => s.flush(),
            MaybeTls::Tls(t) => t.flush(),
            MaybeTls::Swapping => Ok(()),
        }
    }
}

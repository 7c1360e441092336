//! Roles and client authentication: who may connect, from where, and how they prove it.
//!
//! - Roles live in `DIR/pg_authid.json` (PostgreSQL's `pg_authid`: name, superuser flag,
//!   password verifier). `init` writes it with one superuser (`postgres` or `--superuser`);
//!   `heapstore user add NAME` adds a role or sets its password. A data directory without the
//!   file (made before the server existed) has the single superuser `postgres`, no password.
//! - Passwords are stored only as SCRAM-SHA-256 verifiers in PostgreSQL's format
//!   `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64), so a verifier could
//!   be copied to PostgreSQL's `pg_authid.rolpassword` and back.
//! - `heapstore.hba` holds pg_hba.conf-like lines separated by `;`:
//!   `local DATABASE USER METHOD` and `host DATABASE USER ADDRESS/BITS METHOD`, METHOD one of
//!   `trust`, `scram-sha-256`, `reject`. The first line matching the connection type, address,
//!   database and user decides (DATABASE and USER: a name or `all`).
//!
//! Invariants:
//! 1. A password never appears on a command line or in a file: only verifiers are stored.
//! 2. An unknown role and a wrong password get the same error (28P01 `password authentication
//!    failed for user "x"`): an unknown role still runs the whole SCRAM exchange against a mock
//!    verifier derived from the name, as PostgreSQL's `scram_mock_salt` does.
//! 3. Proofs are compared in constant time.
//! 4. The roles file is replaced atomically (write to a temporary file, fsync, rename).

mod scram;

pub use scram::{make_verifier, ScramServer};

use crate::error::{sqlstate, PgError, Result};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The roles file in a data directory.
pub const AUTHID_FILE: &str = "pg_authid.json";

/// One role (`pg_authid` row).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct Role {
    pub rolname: String,
    pub rolsuper: bool,
    /// SCRAM-SHA-256 verifier, or None (no password: password methods always fail).
    pub rolpassword: Option<String>,
}

fn authid_path(dir: &Path) -> PathBuf {
    dir.join(AUTHID_FILE)
}

/// Reads the roles of a data directory.
pub fn load_roles(dir: &Path) -> Result<Vec<Role>> {
    let p = authid_path(dir);
    match crate::storage::fsutil::read_if_exists(&*crate::storage::vfs::real(), &p)? {
        Some(b) => serde_json::from_slice(&b)
            .map_err(|e| PgError::new(sqlstate::DATA_CORRUPTED, format!("invalid roles file \"{}\": {e}", p.display()))),
        None => Ok(vec![Role { rolname: "postgres".into(), rolsuper: true, rolpassword: None }]),
    }
}

/// Writes the roles file atomically and durably (invariant 4).
pub fn save_roles(dir: &Path, roles: &[Role]) -> Result<()> {
    let body = serde_json::to_vec_pretty(roles).expect("serializable");
    crate::storage::fsutil::write_file_durably(&*crate::storage::vfs::real(), &authid_path(dir), &body)
}

/// Creates the roles file at `init` with one superuser.
pub fn init_roles(dir: &Path, superuser: &str) -> Result<()> {
    check_role_name(superuser)?;
    save_roles(dir, &[Role { rolname: superuser.to_string(), rolsuper: true, rolpassword: None }])
}

fn check_role_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 63 || name.contains('\0') {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid role name \"{name}\"")));
    }
    Ok(())
}

/// Adds a role, or sets the password of an existing one. Returns true if the role is new.
pub fn set_password(dir: &Path, name: &str, password: &str) -> Result<bool> {
    check_role_name(name)?;
    if password.is_empty() {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "empty password"));
    }
    let mut roles = load_roles(dir)?;
    let verifier = make_verifier(password);
    let new = match roles.iter_mut().find(|r| r.rolname == name) {
        Some(r) => {
            r.rolpassword = Some(verifier);
            false
        }
        None => {
            roles.push(Role { rolname: name.to_string(), rolsuper: false, rolpassword: Some(verifier) });
            true
        }
    };
    save_roles(dir, &roles)?;
    Ok(new)
}

/// How a client must authenticate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Trust,
    ScramSha256,
    Reject,
}

/// Where a connection comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Local,
    Host(IpAddr),
}

#[derive(Clone, Debug, PartialEq)]
struct HbaLine {
    local: bool,
    database: String,
    user: String,
    /// (network address, prefix bits); None for `local`.
    net: Option<(IpAddr, u8)>,
    /// `hostssl`: Some(true), `hostnossl`: Some(false), `host` / `local`: None.
    ssl: Option<bool>,
    method: Method,
}

/// Parsed `heapstore.hba`.
#[derive(Clone, Debug, PartialEq)]
pub struct Hba {
    lines: Vec<HbaLine>,
}

fn hba_error(line: &str, why: &str) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"heapstore.hba\": \"{line}\""))
        .with_hint(why.to_string())
}

impl Hba {
    /// Parses `local DB USER METHOD; host DB USER ADDR/BITS METHOD; ...`.
    pub fn parse(text: &str) -> Result<Hba> {
        let mut lines = Vec::new();
        for raw in text.split(';').map(str::trim).filter(|l| !l.is_empty()) {
            let f: Vec<&str> = raw.split_whitespace().collect();
            let (local, ssl, rest) = match f.first().copied() {
                Some("local") if f.len() == 4 => (true, None, &f[1..]),
                Some("host") if f.len() == 5 => (false, None, &f[1..]),
                Some("hostssl") if f.len() == 5 => (false, Some(true), &f[1..]),
                Some("hostnossl") if f.len() == 5 => (false, Some(false), &f[1..]),
                _ => {
                    return Err(hba_error(
                        raw,
                        "Expected \"local DATABASE USER METHOD\" or \"host|hostssl|hostnossl DATABASE USER ADDRESS/BITS METHOD\".",
                    ))
                }
            };
            let net = if local {
                None
            } else {
                let (a, bits) = rest[2].split_once('/').ok_or_else(|| hba_error(raw, "ADDRESS must be written ADDRESS/BITS."))?;
                let a: IpAddr = a.parse().map_err(|_| hba_error(raw, "invalid IP address"))?;
                let bits: u8 = bits.parse().map_err(|_| hba_error(raw, "invalid CIDR mask"))?;
                if bits > if a.is_ipv4() { 32 } else { 128 } {
                    return Err(hba_error(raw, "invalid CIDR mask"));
                }
                Some((a, bits))
            };
            let method = match *rest.last().expect("4 or 5 fields") {
                "trust" => Method::Trust,
                "scram-sha-256" => Method::ScramSha256,
                "reject" => Method::Reject,
                m => return Err(hba_error(raw, &format!("invalid authentication method \"{m}\": use trust, scram-sha-256 or reject."))),
            };
            lines.push(HbaLine { local, database: rest[0].to_string(), user: rest[1].to_string(), net, ssl, method });
        }
        Ok(Hba { lines })
    }

    /// The method for a connection (`ssl`: it is encrypted), or PostgreSQL's error when no
    /// line matches.
    pub fn method(&self, origin: Origin, ssl: bool, database: &str, user: &str) -> Result<Method> {
        for l in &self.lines {
            let origin_ok = match (origin, l.net) {
                (Origin::Local, None) => l.local,
                (Origin::Host(a), Some((net, bits))) => !l.local && in_net(a, net, bits) && l.ssl.is_none_or(|need| need == ssl),
                _ => false,
            };
            if origin_ok && (l.database == "all" || l.database == database) && (l.user == "all" || l.user == user) {
                return Ok(l.method);
            }
        }
        let host = match origin {
            Origin::Local => "[local]".to_string(),
            Origin::Host(a) => a.to_string(),
        };
        Err(PgError::new(
            sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
            format!(
                "no pg_hba.conf entry for host \"{host}\", user \"{user}\", database \"{database}\", {}",
                if ssl { "SSL encryption" } else { "no encryption" }
            ),
        ))
    }
}

fn in_net(a: IpAddr, net: IpAddr, bits: u8) -> bool {
    let a = match a {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(a),
        v4 => v4,
    };
    match (a, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// 28P01, the same for an unknown role and a wrong password (invariant 2).
pub fn password_failed(user: &str) -> PgError {
    PgError::new(sqlstate::INVALID_PASSWORD, format!("password authentication failed for user \"{user}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hba_first_match_wins() {
        let h = Hba::parse("local all all trust; host all bob 10.0.0.0/8 reject; host all all 0.0.0.0/0 scram-sha-256").unwrap();
        assert_eq!(h.method(Origin::Local, false, "x", "bob").unwrap(), Method::Trust);
        assert_eq!(h.method(Origin::Host("10.1.2.3".parse().unwrap()), false, "x", "bob").unwrap(), Method::Reject);
        assert_eq!(h.method(Origin::Host("10.1.2.3".parse().unwrap()), false, "x", "al").unwrap(), Method::ScramSha256);
        let h = Hba::parse("host all all 127.0.0.1/32 trust").unwrap();
        assert_eq!(h.method(Origin::Local, false, "x", "a").unwrap_err().code, sqlstate::INVALID_AUTHORIZATION_SPECIFICATION);
        assert!(h.method(Origin::Host("127.0.0.2".parse().unwrap()), false, "x", "a").is_err());
        assert_eq!(h.method(Origin::Host("::ffff:127.0.0.1".parse().unwrap()), false, "x", "a").unwrap(), Method::Trust);
        assert!(Hba::parse("host all all 1.2.3.4 trust").is_err());
        assert!(Hba::parse("local all all md5").is_err());
        // hostssl / hostnossl match by whether the connection is encrypted.
        let h = Hba::parse("hostssl all all 0.0.0.0/0 trust; hostnossl all all 0.0.0.0/0 reject").unwrap();
        let a = Origin::Host("10.0.0.1".parse().unwrap());
        assert_eq!(h.method(a, true, "x", "a").unwrap(), Method::Trust);
        assert_eq!(h.method(a, false, "x", "a").unwrap(), Method::Reject);
        let h = Hba::parse("hostssl all all 0.0.0.0/0 trust").unwrap();
        assert!(h.method(a, false, "x", "a").unwrap_err().message.ends_with("no encryption"));
    }

    #[test]
    fn roles_file_round_trips() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(load_roles(d.path()).unwrap()[0].rolname, "postgres");
        init_roles(d.path(), "admin").unwrap();
        assert!(set_password(d.path(), "alice", "pw").unwrap());
        assert!(!set_password(d.path(), "admin", "pw2").unwrap());
        let r = load_roles(d.path()).unwrap();
        assert_eq!(r.len(), 2);
        assert!(r[0].rolsuper && !r[1].rolsuper);
        assert!(r[1].rolpassword.as_ref().unwrap().starts_with("SCRAM-SHA-256$4096:"));
        assert!(!std::fs::read_to_string(d.path().join(AUTHID_FILE)).unwrap().contains("\"pw\""));
    }
}

//! The server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL speaks it: mechanism
//! `SCRAM-SHA-256` only (no channel binding: the server offers no TLS), 4096 iterations for new
//! verifiers. Passwords are used as given (PostgreSQL applies SASLprep; for ASCII passwords
//! the two agree).
//!
//! ```text
//!  client-first  n,,n=,r=<cnonce>
//!  server-first  r=<cnonce><snonce>,s=<salt>,i=<iterations>
//!  client-final  c=biws,r=<nonce>,p=<ClientProof>      verify: H(proof ^ HMAC(StoredKey, msg)) == StoredKey
//!  server-final  v=<HMAC(ServerKey, AuthMessage)>
//! ```

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = hmac::Hmac<Sha256>;

/// PostgreSQL's `SCRAM_SHA_256_DEFAULT_ITERATIONS`.
pub const ITERATIONS: u32 = 4096;
const SALT_LEN_BYTES: usize = 16;
const NONCE_LEN_BYTES: usize = 18;

fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    m.update(msg);
    m.finalize().into_bytes().into()
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::getrandom(&mut b).expect("the OS random source works");
    b
}

/// (StoredKey, ServerKey) for a password.
fn keys(password: &str, salt: &[u8], iterations: u32) -> ([u8; 32], [u8; 32]) {
    let mut salted = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut salted);
    let client_key = hmac(&salted, b"Client Key");
    let stored: [u8; 32] = Sha256::digest(client_key).into();
    (stored, hmac(&salted, b"Server Key"))
}

/// A new verifier in PostgreSQL's `pg_authid.rolpassword` format, with a random salt.
pub fn make_verifier(password: &str) -> String {
    let salt = random_bytes::<SALT_LEN_BYTES>();
    let (stored, server) = keys(password, &salt, ITERATIONS);
    format!("SCRAM-SHA-256${ITERATIONS}:{}${}:{}", B64.encode(salt), B64.encode(stored), B64.encode(server))
}

struct Verifier {
    iterations: u32,
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

fn parse_verifier(v: &str) -> Option<Verifier> {
    let rest = v.strip_prefix("SCRAM-SHA-256$")?;
    let (iter_salt, keys) = rest.split_once('$')?;
    let (iter, salt) = iter_salt.split_once(':')?;
    let (stored, server) = keys.split_once(':')?;
    Some(Verifier {
        iterations: iter.parse().ok()?,
        salt: B64.decode(salt).ok()?,
        stored_key: B64.decode(stored).ok()?,
        server_key: B64.decode(server).ok()?,
    })
}

/// One SCRAM exchange. Feed it the client's messages in order; any `Err` means
/// authentication failed (the caller sends 28P01 whatever the reason, invariant 2 of `auth`).
pub struct ScramServer {
    verifier: Verifier,
    /// False when the role is unknown or has no usable verifier: the exchange runs against a
    /// mock verifier and fails at the proof.
    real: bool,
    client_first_bare: String,
    server_first: String,
    nonce: String,
}

/// Why an exchange failed (for the server log; the client only sees 28P01).
#[derive(Debug)]
pub struct ScramError(pub String);

fn err(s: &str) -> ScramError {
    ScramError(s.to_string())
}

impl ScramServer {
    /// Starts an exchange for a role's verifier (None: unknown role or no password).
    pub fn new(verifier: Option<&str>, user: &str) -> ScramServer {
        match verifier.and_then(parse_verifier) {
            Some(v) => {
                ScramServer { verifier: v, real: true, client_first_bare: String::new(), server_first: String::new(), nonce: String::new() }
            }
            None => {
                // PostgreSQL's scram_mock_salt: a salt derived from the name and a server secret,
                // so probing cannot tell unknown roles from known ones.
                let secret = mock_secret();
                let mut h = Sha256::new();
                h.update(user.as_bytes());
                h.update(secret);
                let salt = h.finalize()[..SALT_LEN_BYTES].to_vec();
                let v = Verifier { iterations: ITERATIONS, salt, stored_key: vec![0; 32], server_key: vec![0; 32] };
                ScramServer {
                    verifier: v,
                    real: false,
                    client_first_bare: String::new(),
                    server_first: String::new(),
                    nonce: String::new(),
                }
            }
        }
    }

    /// Handles client-first-message; returns server-first-message.
    pub fn client_first(&mut self, msg: &[u8]) -> Result<String, ScramError> {
        let msg = std::str::from_utf8(msg).map_err(|_| err("client-first-message is not UTF-8"))?;
        // gs2-header: "n,," (no channel binding) or "y,," (client could, server cannot).
        let bare = msg
            .strip_prefix("n,,")
            .or_else(|| msg.strip_prefix("y,,"))
            .ok_or_else(|| err("unsupported gs2 header (channel binding is not offered)"))?;
        let mut cnonce = None;
        for attr in bare.split(',') {
            if let Some(r) = attr.strip_prefix("r=") {
                cnonce = Some(r);
            } else if attr.starts_with("m=") {
                return Err(err("extensions are not supported"));
            }
        }
        let cnonce = cnonce
            .filter(|c| !c.is_empty() && c.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b','))
            .ok_or_else(|| err("bad client nonce"))?;
        let snonce = B64.encode(random_bytes::<NONCE_LEN_BYTES>());
        self.nonce = format!("{cnonce}{snonce}");
        self.client_first_bare = bare.to_string();
        self.server_first = format!("r={},s={},i={}", self.nonce, B64.encode(&self.verifier.salt), self.verifier.iterations);
        Ok(self.server_first.clone())
    }

    /// Handles client-final-message; returns server-final-message if the proof is right.
    pub fn client_final(&mut self, msg: &[u8]) -> Result<String, ScramError> {
        let msg = std::str::from_utf8(msg).map_err(|_| err("client-final-message is not UTF-8"))?;
        let (without_proof, proof) = msg.rsplit_once(",p=").ok_or_else(|| err("no proof"))?;
        let mut channel = None;
        let mut nonce = None;
        for attr in without_proof.split(',') {
            if let Some(c) = attr.strip_prefix("c=") {
                channel = Some(c);
            } else if let Some(r) = attr.strip_prefix("r=") {
                nonce = Some(r);
            }
        }
        // "biws" = base64("n,,"), "eSws" = base64("y,,").
        if !matches!(channel, Some("biws") | Some("eSws")) {
            return Err(err("unexpected channel binding"));
        }
        if nonce != Some(self.nonce.as_str()) {
            return Err(err("nonce mismatch"));
        }
        let proof = B64.decode(proof).map_err(|_| err("proof is not base64"))?;
        if proof.len() != 32 {
            return Err(err("proof has the wrong length"));
        }
        let auth_message = format!("{},{},{}", self.client_first_bare, self.server_first, without_proof);
        let signature = hmac(&self.verifier.stored_key, auth_message.as_bytes());
        let client_key: Vec<u8> = proof.iter().zip(signature.iter()).map(|(a, b)| a ^ b).collect();
        let computed: [u8; 32] = Sha256::digest(&client_key).into();
        // Constant-time comparison (invariant 3 of `auth`).
        let diff = computed.iter().zip(self.verifier.stored_key.iter()).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 || !self.real {
            return Err(err("wrong password or unknown role"));
        }
        Ok(format!("v={}", B64.encode(hmac(&self.verifier.server_key, auth_message.as_bytes()))))
    }
}

fn mock_secret() -> &'static [u8; 32] {
    static SECRET: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    SECRET.get_or_init(random_bytes::<32>)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client side, as libpq computes it.
    fn client_final(password: &str, client_first_bare: &str, server_first: &str) -> String {
        let attrs: Vec<&str> = server_first.split(',').collect();
        let nonce = attrs[0].strip_prefix("r=").unwrap();
        let salt = B64.decode(attrs[1].strip_prefix("s=").unwrap()).unwrap();
        let iters: u32 = attrs[2].strip_prefix("i=").unwrap().parse().unwrap();
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), &salt, iters, &mut salted);
        let client_key = hmac(&salted, b"Client Key");
        let stored: [u8; 32] = Sha256::digest(client_key).into();
        let without_proof = format!("c=biws,r={nonce}");
        let auth = format!("{client_first_bare},{server_first},{without_proof}");
        let sig = hmac(&stored, auth.as_bytes());
        let proof: Vec<u8> = client_key.iter().zip(sig.iter()).map(|(a, b)| a ^ b).collect();
        format!("{without_proof},p={}", B64.encode(proof))
    }

    #[test]
    fn right_password_passes_wrong_fails() {
        let v = make_verifier("sekret");
        for (pw, ok) in [("sekret", true), ("Sekret", false)] {
            let mut s = ScramServer::new(Some(&v), "u");
            let sf = s.client_first(b"n,,n=,r=abcdef").unwrap();
            assert!(sf.starts_with("r=abcdef"));
            let r = s.client_final(client_final(pw, "n=,r=abcdef", &sf).as_bytes());
            assert_eq!(r.is_ok(), ok);
        }
        let mut s = ScramServer::new(None, "ghost");
        let sf = s.client_first(b"n,,n=,r=xyz").unwrap();
        assert!(s.client_final(client_final("sekret", "n=,r=xyz", &sf).as_bytes()).is_err());
        assert!(ScramServer::new(Some(&v), "u").client_first(b"p=tls-server-end-point,,n=,r=a").is_err());
    }
}

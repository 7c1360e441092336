//! `uuid`: 16 bytes, stored, sent and compared as they are (PostgreSQL's `uuid_cmp` is a
//! `memcmp`, so B-tree order is byte order).
//!
//! Text input follows PostgreSQL's `string_to_uuid` exactly: 32 hex digits in either case,
//! with an optional hyphen after any group of four (never first or last), optionally inside
//! one pair of braces; no white space anywhere. Anything else is 22P02 `invalid input syntax
//! for type uuid`. Output is always the lowercase 8-4-4-4-12 form. `gen_random_uuid()` makes
//! a version 4 (random) UUID from the operating system's generator, as PostgreSQL does.

use crate::error::{sqlstate, PgError, Result};

/// Bytes in a uuid.
pub const UUID_LEN: usize = 16;

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `uuid_in`.
pub fn parse(s: &str) -> Result<[u8; UUID_LEN]> {
    let err = || PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type uuid: \"{s}\""));
    let b = s.as_bytes();
    let mut p = 0;
    let braces = b.first() == Some(&b'{');
    if braces {
        p += 1;
    }
    let mut out = [0u8; UUID_LEN];
    for (i, byte) in out.iter_mut().enumerate() {
        let (Some(hi), Some(lo)) = (b.get(p).copied().and_then(hex), b.get(p + 1).copied().and_then(hex)) else {
            return Err(err());
        };
        *byte = hi << 4 | lo;
        p += 2;
        if b.get(p) == Some(&b'-') && i % 2 == 1 && i < UUID_LEN - 1 {
            p += 1;
        }
    }
    if braces {
        if b.get(p) != Some(&b'}') {
            return Err(err());
        }
        p += 1;
    }
    if p != b.len() {
        return Err(err());
    }
    Ok(out)
}

/// `uuid_out`: lowercase, hyphens after bytes 4, 6, 8 and 10.
pub fn format(v: &[u8], out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, &byte) in v.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push(b'-');
        }
        out.push(DIGITS[usize::from(byte >> 4)]);
        out.push(DIGITS[usize::from(byte & 0xf)]);
    }
}

/// `gen_random_uuid()`: RFC 4122 version 4, variant 1.
pub fn random() -> Result<[u8; UUID_LEN]> {
    let mut u = [0u8; UUID_LEN];
    getrandom::getrandom(&mut u).map_err(|e| PgError::internal(format!("could not generate random values: {e}")))?;
    u[6] = (u[6] & 0x0f) | 0x40;
    u[8] = (u[8] & 0x3f) | 0x80;
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> std::result::Result<String, String> {
        parse(s)
            .map(|u| {
                let mut out = Vec::new();
                format(&u, &mut out);
                String::from_utf8(out).unwrap()
            })
            .map_err(|e| format!("{} {}", e.code, e.message))
    }

    #[test]
    fn input_forms_as_postgres() {
        let canon = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        for ok in [
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
        ] {
            assert_eq!(text(ok).as_deref(), Ok(canon), "{ok}");
        }
        for bad in [
            "",
            "a0eebc999c0b4ef8bb6d6bb9bd380a1",
            "a0eebc999c0b4ef8bb6d6bb9bd380a111",
            "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ] {
            assert_eq!(text(bad), Err(format!("22P02 invalid input syntax for type uuid: \"{bad}\"")), "{bad:?}");
        }
    }

    #[test]
    fn random_is_version_4() {
        let (a, b) = (random().unwrap(), random().unwrap());
        assert_ne!(a, b);
        for u in [a, b] {
            assert_eq!(u[6] >> 4, 4);
            assert_eq!(u[8] >> 6, 2);
        }
    }
}

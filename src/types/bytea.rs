//! `bytea` text I/O, ported from PostgreSQL 15's `varlena.c` (`byteain`, `byteaout` with
//! `bytea_output = hex`) and `encode.c` (`hex_decode`).
//!
//! Input accepts the hex format (`\x` then pairs of hex digits, whitespace allowed between
//! pairs) and the traditional escape format (`\\`, `\ooo` with a first digit 0-3, any other
//! byte literal). Output is always hex: `\x` and lowercase digits.

use crate::error::{sqlstate, PgError, Result};

/// `byteain`: appends the decoded bytes.
pub(crate) fn bytea_in(s: &str, out: &mut Vec<u8>) -> Result<()> {
    let b = s.as_bytes();
    if let Some(hex) = b.strip_prefix(b"\\x") {
        return hex_decode(hex, out);
    }
    escape_decode(b, out)
}

/// `hex_decode`: whitespace (space, \n, \t, \r) may precede each pair but not split it.
fn hex_decode(s: &[u8], out: &mut Vec<u8>) -> Result<()> {
    out.reserve(s.len() / 2);
    let mut i = 0;
    while i < s.len() {
        if matches!(s[i], b' ' | b'\n' | b'\t' | b'\r') {
            i += 1;
            continue;
        }
        let hi = hex_value(&s[i..])?;
        if i + 1 >= s.len() {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid hexadecimal data: odd number of digits"));
        }
        let lo = hex_value(&s[i + 1..])?;
        out.push(hi << 4 | lo);
        i += 2;
    }
    Ok(())
}

/// `get_hex` on the first character of `s` (which is non-empty).
#[inline]
fn hex_value(s: &[u8]) -> Result<u8> {
    let c = s.first().copied().unwrap_or(0);
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(invalid_hex_digit(s)),
    }
}

/// `invalid hexadecimal digit: "<c>"`, naming the whole (possibly multibyte) character.
#[cold]
fn invalid_hex_digit(s: &[u8]) -> PgError {
    let ch =
        std::str::from_utf8(s).ok().and_then(|t| t.chars().next()).or_else(|| String::from_utf8_lossy(s).chars().next()).unwrap_or('?');
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid hexadecimal digit: \"{ch}\""))
}

/// The traditional escape format: `\\` is a backslash, `\ooo` (first digit 0-3) an octal
/// byte; any other backslash is an error; other bytes are taken as they are.
fn escape_decode(mut s: &[u8], out: &mut Vec<u8>) -> Result<()> {
    out.reserve(s.len());
    while let Some(pos) = s.iter().position(|&c| c == b'\\') {
        out.extend_from_slice(&s[..pos]);
        let esc = &s[pos..];
        match esc {
            [_, b'\\', ..] => {
                out.push(b'\\');
                s = &esc[2..];
            }
            [_, a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7', ..] => {
                out.push(((a - b'0') << 6) | ((b - b'0') << 3) | (c - b'0'));
                s = &esc[4..];
            }
            _ => return Err(PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type bytea")),
        }
    }
    out.extend_from_slice(s);
    Ok(())
}

/// `byteaout` with `bytea_output = hex`.
pub(crate) fn bytea_out(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(2 + 2 * bytes.len());
    out.extend_from_slice(b"\\x");
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0x0f)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        bytea_in(s, &mut out)?;
        Ok(out)
    }

    #[test]
    fn hex_input() {
        assert_eq!(dec("\\x0a1B").ok(), Some(vec![0x0a, 0x1b]));
        assert_eq!(dec("\\x 0a\n1b\t").ok(), Some(vec![0x0a, 0x1b]));
        assert_eq!(dec("\\x").ok(), Some(vec![]));
        let e = dec("\\xZZ").unwrap_err();
        assert_eq!((e.code, e.message.as_str()), ("22023", "invalid hexadecimal digit: \"Z\""));
        let e = dec("\\x0 a").unwrap_err();
        assert_eq!(e.message, "invalid hexadecimal digit: \" \"");
        let e = dec("\\xé0").unwrap_err();
        assert_eq!(e.message, "invalid hexadecimal digit: \"é\"");
        let e = dec("\\x0a0").unwrap_err();
        assert_eq!((e.code, e.message.as_str()), ("22023", "invalid hexadecimal data: odd number of digits"));
    }

    #[test]
    fn escape_input() {
        assert_eq!(dec("a\\\\b\\101\\000").ok(), Some(b"a\\bA\0".to_vec()));
        assert!(dec("\\X0a").is_err());
        for bad in ["a\\b", "a\\400", "a\\", "\\12"] {
            let e = dec(bad).unwrap_err();
            assert_eq!((e.code, e.message.as_str()), ("22P02", "invalid input syntax for type bytea"));
        }
    }

    #[test]
    fn hex_output() {
        let mut out = Vec::new();
        bytea_out(&[0x00, 0xff, 0x5c], &mut out);
        assert_eq!(out, b"\\x00ff5c");
    }
}

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

/// The encodings of `encode(bytea, text)` and `decode(text, text)`, named case-insensitively
/// as in PostgreSQL 15: `hex`, `base64` and `escape`; any other is `unrecognized encoding`
/// (22023).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Hex,
    Base64,
    Escape,
}

impl Encoding {
    pub(crate) fn named(name: &str) -> Result<Encoding> {
        match name.to_ascii_lowercase().as_str() {
            "hex" => Ok(Encoding::Hex),
            "base64" => Ok(Encoding::Base64),
            "escape" => Ok(Encoding::Escape),
            _ => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized encoding: \"{name}\""))),
        }
    }
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `encode(data, format)`: hex in lowercase; base64 with a newline after every 76 characters
/// written (also at the very end when the output fills its line, as PostgreSQL's
/// `pg_base64_encode` does); escape with `\ooo` for NUL and bytes of the high half and `\\`
/// for a backslash.
pub(crate) fn encode(data: &[u8], enc: Encoding) -> String {
    match enc {
        Encoding::Hex => {
            let mut s = String::with_capacity(data.len() * 2);
            for b in data {
                s.push_str(&format!("{b:02x}"));
            }
            s
        }
        Encoding::Base64 => {
            let mut out = Vec::with_capacity(data.len() * 4 / 3 + data.len() / 57 + 4);
            let mut line = 0usize;
            for c in data.chunks(3) {
                let buf = u32::from(c[0]) << 16 | u32::from(*c.get(1).unwrap_or(&0)) << 8 | u32::from(*c.get(2).unwrap_or(&0));
                out.push(BASE64[(buf >> 18) as usize & 63]);
                out.push(BASE64[(buf >> 12) as usize & 63]);
                out.push(if c.len() > 1 { BASE64[(buf >> 6) as usize & 63] } else { b'=' });
                out.push(if c.len() > 2 { BASE64[buf as usize & 63] } else { b'=' });
                line += 4;
                // PostgreSQL breaks the line once 76 characters are out, before the next
                // input byte is read: only after a whole group.
                if line >= 76 && c.len() == 3 {
                    out.push(b'\n');
                    line = 0;
                }
            }
            String::from_utf8(out).expect("base64 is ASCII")
        }
        Encoding::Escape => {
            let mut s = String::with_capacity(data.len());
            for &b in data {
                if b == 0 || b >= 0x80 {
                    s.push_str(&format!("\\{b:03o}"));
                } else if b == b'\\' {
                    s.push_str("\\\\");
                } else {
                    s.push(b as char);
                }
            }
            s
        }
    }
}

/// `decode(text, format)`: hex as bytea input reads it (whitespace between pairs); base64
/// skipping whitespace, with PostgreSQL's errors for a misplaced `=`, a symbol outside the
/// alphabet and a truncated end; escape as bytea's escape input.
pub(crate) fn decode(text: &str, enc: Encoding) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    match enc {
        Encoding::Hex => hex_decode(text.as_bytes(), &mut out)?,
        Encoding::Escape => escape_decode(text.as_bytes(), &mut out)?,
        Encoding::Base64 => {
            let bad = |m: String| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, m);
            let (mut buf, mut pos, mut end) = (0u32, 0, 0);
            for (i, c) in text.char_indices() {
                if matches!(c, ' ' | '\t' | '\n' | '\r') {
                    continue;
                }
                let b = if c == '=' {
                    if end == 0 {
                        end = match pos {
                            2 => 1,
                            3 => 2,
                            _ => return Err(bad("unexpected \"=\" while decoding base64 sequence".into())),
                        };
                    }
                    0
                } else {
                    match BASE64.iter().position(|&x| x as char == c) {
                        Some(v) => v as u32,
                        None => {
                            let ch = &text[i..i + c.len_utf8()];
                            return Err(bad(format!("invalid symbol \"{ch}\" found while decoding base64 sequence")));
                        }
                    }
                };
                buf = (buf << 6) + b;
                pos += 1;
                if pos == 4 {
                    out.push((buf >> 16) as u8);
                    if end == 0 || end > 1 {
                        out.push((buf >> 8) as u8);
                    }
                    if end == 0 || end > 2 {
                        out.push(buf as u8);
                    }
                    buf = 0;
                    pos = 0;
                }
            }
            if pos != 0 {
                return Err(bad("invalid base64 end sequence".into())
                    .with_hint("Input data is missing padding, is truncated, or is otherwise corrupted."));
            }
        }
    }
    Ok(out)
}

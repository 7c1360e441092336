//! `text`, `varchar(n)` and `char(n)` (bpchar) input, ported from PostgreSQL 15's `varchar.c`
//! (`varchar_input`, `bpchar_input`) plus the UTF-8 verification (`pg_verify_mbstr`) that
//! the binary receive path applies.
//!
//! Invariant: stored text is valid UTF-8 without NUL bytes; char(n) is stored blank-padded
//! to exactly n characters, varchar(n) holds at most n characters.

use crate::error::{sqlstate, PgError, Result};

/// Appends `s` (text, or varchar/bpchar without a length).
pub(crate) fn text_in(s: &[u8], out: &mut Vec<u8>) -> Result<()> {
    reject_nul(s)?;
    out.extend_from_slice(s);
    Ok(())
}

/// `varchar_input`: too many characters is an error unless the excess is all spaces, which
/// are cut off.
pub(crate) fn varchar_in(s: &[u8], max_chars: i32, out: &mut Vec<u8>) -> Result<()> {
    reject_nul(s)?;
    let Ok(max) = usize::try_from(max_chars) else {
        out.extend_from_slice(s);
        return Ok(());
    };
    // Cheap pre-check as in PostgreSQL: a string of at most `max` bytes has at most `max`
    // characters.
    let clip = if s.len() > max { clip_len(s, max) } else { s.len() };
    if s[clip..].iter().any(|&b| b != b' ') {
        return Err(too_long("character varying", max));
    }
    out.extend_from_slice(&s[..clip]);
    Ok(())
}

/// `bpchar_input`: like varchar, then blank-padded to exactly `max_chars` characters.
pub(crate) fn bpchar_in(s: &[u8], max_chars: i32, out: &mut Vec<u8>) -> Result<()> {
    reject_nul(s)?;
    let Ok(max) = usize::try_from(max_chars) else {
        out.extend_from_slice(s);
        return Ok(());
    };
    let chars = char_count(s);
    if chars > max {
        let clip = clip_len(s, max);
        if s[clip..].iter().any(|&b| b != b' ') {
            return Err(too_long("character", max));
        }
        out.extend_from_slice(&s[..clip]);
    } else {
        out.extend_from_slice(s);
        out.resize(out.len() + (max - chars), b' ');
    }
    Ok(())
}

/// PostgreSQL's NAMEDATALEN: a name holds at most this many bytes minus one.
pub(crate) const NAMEDATALEN: usize = 64;

/// `namein`: the text, cut to at most 63 bytes at a character boundary (PostgreSQL cuts
/// silently too).
pub(crate) fn name_in(s: &[u8], out: &mut Vec<u8>) -> Result<()> {
    reject_nul(s)?;
    let mut n = s.len().min(NAMEDATALEN - 1);
    while n > 0 && n < s.len() && s[n] & 0xC0 == 0x80 {
        n -= 1;
    }
    out.extend_from_slice(&s[..n]);
    Ok(())
}

/// `charin` ("char"): the first byte, or `\ooo` in octal; nothing for the empty string.
/// heapstore keeps stored text valid UTF-8, so a byte outside ASCII is refused (PostgreSQL
/// would store it and print it as `\ooo`).
pub(crate) fn char_in(s: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let is_oct = |c: u8| (b'0'..=b'7').contains(&c);
    let byte = match s {
        [b'\\', a, b, c] if is_oct(*a) && is_oct(*b) && is_oct(*c) => {
            ((u32::from(*a - b'0') << 6) | (u32::from(*b - b'0') << 3) | u32::from(*c - b'0')) as u8
        }
        [] => 0,
        [c, ..] => *c,
    };
    push_char(byte, out)
}

/// `charrecv`: one byte.
pub(crate) fn char_recv(wire: &[u8], out: &mut Vec<u8>) -> Result<()> {
    match wire {
        [b] => push_char(*b, out),
        [] => Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "no data left in message")),
        _ => Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format")),
    }
}

fn push_char(byte: u8, out: &mut Vec<u8>) -> Result<()> {
    match byte {
        0 => Ok(()),
        1..=0x7f => {
            out.push(byte);
            Ok(())
        }
        _ => Err(PgError::feature(format!("\"char\" values outside ASCII (\\{byte:03o}) are not supported by heapstore"))),
    }
}

/// Number of characters in valid UTF-8.
pub(crate) fn char_count(s: &[u8]) -> usize {
    s.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

/// Byte length of the first `n` characters (`pg_mbcharcliplen`).
fn clip_len(s: &[u8], n: usize) -> usize {
    let mut seen = 0;
    for (i, &b) in s.iter().enumerate() {
        if b & 0xC0 != 0x80 {
            if seen == n {
                return i;
            }
            seen += 1;
        }
    }
    s.len()
}

#[cold]
fn too_long(type_name: &str, max: usize) -> PgError {
    PgError::new(sqlstate::STRING_DATA_RIGHT_TRUNCATION, format!("value too long for type {type_name}({max})"))
}

fn reject_nul(s: &[u8]) -> Result<()> {
    match memchr::memchr(0, s) {
        Some(i) => Err(invalid_encoding(&s[i..])),
        None => Ok(()),
    }
}

/// Checks UTF-8 with SIMD (`simdutf8`), asking the standard library only when the input is
/// bad, for where the bad sequence starts and whether it is merely cut short.
pub(crate) fn check_utf8(s: &[u8]) -> std::result::Result<(), std::str::Utf8Error> {
    match simdutf8::basic::from_utf8(s) {
        Ok(_) => Ok(()),
        Err(_) => std::str::from_utf8(s).map(|_| ()),
    }
}

/// `pg_verify_mbstr` for UTF-8: valid UTF-8 and no NUL bytes.
pub(crate) fn verify_utf8(s: &[u8]) -> Result<()> {
    let bad_utf8 = match check_utf8(s) {
        Ok(()) => None,
        Err(e) => Some(e.valid_up_to()),
    };
    let nul = memchr::memchr(0, s);
    match (nul, bad_utf8) {
        (Some(n), Some(b)) => Err(invalid_encoding(&s[n.min(b)..])),
        (Some(p), None) | (None, Some(p)) => Err(invalid_encoding(&s[p..])),
        (None, None) => Ok(()),
    }
}

/// `report_invalid_encoding`: names the bytes of the offending character, as many as its
/// lead byte announces (`pg_utf_mblen`) and the input still holds.
#[cold]
fn invalid_encoding(at: &[u8]) -> PgError {
    let lead = at.first().copied().unwrap_or(0);
    let announced = match lead {
        b if b & 0x80 == 0 => 1,
        b if b & 0xE0 == 0xC0 => 2,
        b if b & 0xF0 == 0xE0 => 3,
        b if b & 0xF8 == 0xF0 => 4,
        _ => 1,
    };
    let shown: Vec<String> = at.iter().take(announced).map(|b| format!("0x{b:02x}")).collect();
    PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: fn(&[u8], i32, &mut Vec<u8>) -> Result<()>, s: &str, n: i32) -> Result<String> {
        let mut out = Vec::new();
        f(s.as_bytes(), n, &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    proptest::proptest! {
        /// The SIMD check says exactly what the standard library says, error position and
        /// all, on mostly-ASCII input with bad and cut-short sequences mixed in.
        #[test]
        fn check_utf8_agrees_with_std(v in proptest::collection::vec(proptest::prop_oneof![
            8 => 0x20u8..0x7f, 1 => proptest::num::u8::ANY, 1 => proptest::sample::select(vec![0xc3u8, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x00]),
        ], 0..200)) {
            let ours = check_utf8(&v).map_err(|e| (e.valid_up_to(), e.error_len()));
            let std = std::str::from_utf8(&v).map(|_| ()).map_err(|e| (e.valid_up_to(), e.error_len()));
            proptest::prop_assert_eq!(ours, std);
            proptest::prop_assert_eq!(verify_utf8(&v).is_ok(), std.is_ok() && !v.contains(&0));
        }
    }

    #[test]
    fn varchar_rules() {
        assert_eq!(run(varchar_in, "abc  ", 3).ok().as_deref(), Some("abc"));
        assert_eq!(run(varchar_in, "héé", 3).ok().as_deref(), Some("héé"));
        assert_eq!(run(varchar_in, "héé ", 3).ok().as_deref(), Some("héé"));
        let e = run(varchar_in, "abcd", 3).unwrap_err();
        assert_eq!(e.message, "value too long for type character varying(3)");
        assert_eq!(e.code, "22001");
        assert_eq!(run(varchar_in, "abcd", -1).ok().as_deref(), Some("abcd"));
    }

    #[test]
    fn bpchar_rules() {
        assert_eq!(run(bpchar_in, "ab", 4).ok().as_deref(), Some("ab  "));
        assert_eq!(run(bpchar_in, "日本", 3).ok().as_deref(), Some("日本 "));
        assert_eq!(run(bpchar_in, "abc   ", 4).ok().as_deref(), Some("abc "));
        assert_eq!(run(bpchar_in, "ab", -1).ok().as_deref(), Some("ab"));
        let e = run(bpchar_in, "abcde", 4).unwrap_err();
        assert_eq!(e.message, "value too long for type character(4)");
    }

    #[test]
    fn utf8_verification() {
        assert!(verify_utf8("héllo".as_bytes()).is_ok());
        let e = verify_utf8(b"ab\xff").unwrap_err();
        assert_eq!(e.message, "invalid byte sequence for encoding \"UTF8\": 0xff");
        assert_eq!(e.code, "22021");
        let e = verify_utf8(b"a\xe6\x97").unwrap_err();
        assert_eq!(e.message, "invalid byte sequence for encoding \"UTF8\": 0xe6 0x97");
        let e = verify_utf8(b"a\x00b").unwrap_err();
        assert_eq!(e.message, "invalid byte sequence for encoding \"UTF8\": 0x00");
        let e = verify_utf8(b"\xc3\x28").unwrap_err();
        assert_eq!(e.message, "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28");
    }
}

//! `boolean`, `smallint`, `integer` and `bigint` text input, ported from PostgreSQL 15's
//! `bool.c` (`boolin`, `parse_bool_with_len`) and `numutils.c` (`pg_strtoint16/32/64`).
//!
//! Output is plain decimal (`t`/`f` for booleans), which needs no helper beyond
//! [`super::util::push_i64`].

use super::util::{int_out_of_range, invalid_syntax, is_space, trim_space};
use crate::error::Result;

/// `boolin`: t/true/yes/on/1, f/false/no/off/0, case-insensitive unique prefixes, with
/// surrounding whitespace.
pub(crate) fn parse_bool(s: &str) -> Result<bool> {
    parse_bool_bytes(trim_space(s.as_bytes())).ok_or_else(|| invalid_syntax("boolean", s))
}

/// `parse_bool_with_len` on an already trimmed value.
fn parse_bool_bytes(v: &[u8]) -> Option<bool> {
    let first = *v.first()?;
    match first.to_ascii_lowercase() {
        b't' => is_prefix_of(v, b"true").then_some(true),
        b'f' => is_prefix_of(v, b"false").then_some(false),
        b'y' => is_prefix_of(v, b"yes").then_some(true),
        b'n' => is_prefix_of(v, b"no").then_some(false),
        // "o" alone is ambiguous between on and off: at least two characters are compared.
        b'o' if v.len() >= 2 && is_prefix_of(v, b"on") => Some(true),
        b'o' if v.len() >= 2 && is_prefix_of(v, b"off") => Some(false),
        b'1' if v.len() == 1 => Some(true),
        b'0' if v.len() == 1 => Some(false),
        _ => None,
    }
}

/// `pg_strncasecmp(value, word, len) == 0`: `value` is a case-insensitive prefix of `word`.
fn is_prefix_of(value: &[u8], word: &[u8]) -> bool {
    value.len() <= word.len() && value.eq_ignore_ascii_case(&word[..value.len()])
}

/// Appends `t` or `f`.
pub(crate) fn format_bool(v: bool, out: &mut Vec<u8>) {
    out.push(if v { b't' } else { b'f' });
}

pub(crate) fn parse_int2(s: &str) -> Result<i16> {
    // The range check inside `parse_int` guarantees the narrowing cannot fail.
    parse_int(s, i16::MIN as i64, "smallint").map(|v| v as i16)
}

pub(crate) fn parse_int4(s: &str) -> Result<i32> {
    parse_int(s, i32::MIN as i64, "integer").map(|v| v as i32)
}

pub(crate) fn parse_int8(s: &str) -> Result<i64> {
    parse_int(s, i64::MIN, "bigint")
}

/// Skips leading whitespace and an optional sign: (index of the first digit, negative).
#[inline]
fn sign_prefix(b: &[u8]) -> (usize, bool) {
    let mut i = 0;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    match b.get(i) {
        Some(b'-') => (i + 1, true),
        Some(b'+') => (i + 1, false),
        _ => (i, false),
    }
}

/// `oidin`: as `strtoul` in base 10 (optional whitespace and sign, digits, optional trailing
/// whitespace), then within 0..=4294967295, or -2147483648..=-1 taken modulo 2^32 (so
/// `-1` is 4294967295), as PostgreSQL accepts.
pub(crate) fn parse_oid(s: &str) -> Result<u32> {
    let b = s.as_bytes();
    let (mut i, neg) = sign_prefix(b);
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return Err(invalid_syntax("oid", s));
    }
    let mut acc: u64 = 0;
    let mut overflow = false;
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        match acc.checked_mul(10).and_then(|a| a.checked_add(u64::from(c - b'0'))) {
            Some(a) => acc = a,
            None => overflow = true,
        }
        i += 1;
    }
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i != b.len() {
        return Err(invalid_syntax("oid", s));
    }
    let out_of_range = || {
        crate::error::PgError::new(
            crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value \"{s}\" is out of range for type oid"),
        )
    };
    if overflow {
        return Err(out_of_range());
    }
    match (neg, acc) {
        (false, a) if a <= u64::from(u32::MAX) => Ok(a as u32),
        (true, a) if a <= 1 << 31 => Ok((-(a as i64)) as u32),
        _ => Err(out_of_range()),
    }
}

/// `pg_strtoint16/32/64`: optional whitespace, optional sign, at least one digit, optional
/// trailing whitespace. The value is accumulated negatively so the most negative value
/// parses; overflow is reported as soon as it happens, even if garbage follows.
#[inline]
fn parse_int(s: &str, min: i64, ty: &str) -> Result<i64> {
    let b = s.as_bytes();
    let (mut i, neg) = sign_prefix(b);
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return Err(invalid_syntax(ty, s));
    }
    let mut acc: i64 = 0;
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        acc = match acc.checked_mul(10).and_then(|a| a.checked_sub(i64::from(c - b'0'))) {
            Some(a) if a >= min => a,
            _ => return Err(int_out_of_range(ty, s)),
        };
        i += 1;
    }
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i != b.len() {
        return Err(invalid_syntax(ty, s));
    }
    if neg {
        Ok(acc)
    } else if acc == min {
        Err(int_out_of_range(ty, s))
    } else {
        Ok(-acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_words_and_prefixes() {
        for t in ["t", "TRUE", "tr", " yes ", "y", "on", "ON", "1", "\ttrue\n"] {
            assert_eq!(parse_bool(t).ok(), Some(true), "{t:?}");
        }
        for f in ["f", "false", "FA", "no", "n", "off", "of", "0"] {
            assert_eq!(parse_bool(f).ok(), Some(false), "{f:?}");
        }
        for bad in ["o", "", " ", "maybe", "truex", "2", "00", "yess", "onn"] {
            assert!(parse_bool(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn int_limits() {
        assert_eq!(parse_int2("-32768").ok(), Some(i16::MIN));
        assert_eq!(parse_int2("32767").ok(), Some(i16::MAX));
        assert!(parse_int2("32768").is_err());
        assert_eq!(parse_int4(" +42 ").ok(), Some(42));
        assert_eq!(parse_int8("-9223372036854775808").ok(), Some(i64::MIN));
        assert!(parse_int8("9223372036854775808").is_err());
        assert_eq!(parse_int8("0009223372036854775807").ok(), Some(i64::MAX));
    }

    #[test]
    fn overflow_wins_over_trailing_garbage() {
        let e = parse_int2("99999abc").unwrap_err();
        assert_eq!(e.code, "22003");
        let e = parse_int2("12abc").unwrap_err();
        assert_eq!(e.code, "22P02");
    }
}

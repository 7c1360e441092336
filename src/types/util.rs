//! Small helpers shared by the per-type modules: C-locale character classes (PostgreSQL's
//! parsers use `isspace`/`isdigit`/... in the C locale), the common error constructors, and
//! defensive fixed-width reads of stored and wire bytes.

use crate::error::{sqlstate, PgError, Result};

/// C `isspace` in the C locale: space, \t, \n, \v, \f, \r.
#[inline]
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// An optional `-` or `+` at `b[*i]`, as C's `strtol` / `strtod` read one: true for `-`;
/// `*i` moves past it.
#[inline]
pub(crate) fn take_sign(b: &[u8], i: &mut usize) -> bool {
    match b.get(*i) {
        Some(b'-') => {
            *i += 1;
            true
        }
        Some(b'+') => {
            *i += 1;
            false
        }
        _ => false,
    }
}

/// Strips C-locale whitespace from both ends.
#[inline]
pub(crate) fn trim_space(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| !is_space(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|&b| !is_space(b)).map_or(start, |p| p + 1);
    &s[start..end]
}

/// `invalid input syntax for type <ty>: "<s>"` (22P02), the generic input-function error.
#[cold]
pub(crate) fn invalid_syntax(ty: &str, s: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type {ty}: \"{s}\""))
}

/// `value "<s>" is out of range for type <ty>` (22003), used by the integer parsers.
#[cold]
pub(crate) fn int_out_of_range(ty: &str, s: &str) -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("value \"{s}\" is out of range for type {ty}"))
}

/// `insufficient data left in message` (08P01), raised by PostgreSQL's `pq_getmsgint` family
/// when a binary value is shorter than its type.
#[cold]
pub(crate) fn insufficient_data() -> PgError {
    PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message")
}

/// `incorrect binary data format` (22P03): the receive function did not consume all bytes.
#[cold]
pub(crate) fn incorrect_binary_format() -> PgError {
    PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format")
}

/// Reads exactly `N` big-endian wire bytes, with PostgreSQL's errors for short and long input.
#[inline]
pub(crate) fn wire_exact<const N: usize>(wire: &[u8]) -> Result<[u8; N]> {
    match <[u8; N]>::try_from(wire) {
        Ok(a) => Ok(a),
        Err(_) if wire.len() < N => Err(insufficient_data()),
        Err(_) => Err(incorrect_binary_format()),
    }
}

/// Copies a stored fixed-width value into an array. Stored values are written by this
/// module and always have the right width; a short slice (a caller bug) reads as zero bytes
/// rather than panicking.
#[inline]
pub(crate) fn stored<const N: usize>(bytes: &[u8]) -> [u8; N] {
    debug_assert_eq!(bytes.len(), N, "stored fixed-width value has the wrong size");
    if let Ok(a) = bytes.try_into() {
        return a;
    }
    let mut a = [0u8; N];
    let n = bytes.len().min(N);
    a[..n].copy_from_slice(&bytes[..n]);
    a
}

/// Appends the decimal digits of `v` (no allocation).
#[inline]
pub(crate) fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends the decimal form of a signed integer (handles `i64::MIN`).
#[inline]
pub(crate) fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Appends `v` zero-padded to at least `width` digits.
#[inline]
pub(crate) fn push_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut digits = 1;
    let mut t = v / 10;
    while t > 0 {
        digits += 1;
        t /= 10;
    }
    for _ in digits..width {
        out.push(b'0');
    }
    push_u64(out, v);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_c_whitespace() {
        assert_eq!(trim_space(b" \t\x0b1\r\n"), b"1");
        assert_eq!(trim_space(b"   "), b"");
        assert_eq!(trim_space(b""), b"");
    }

    #[test]
    fn pushes_numbers() {
        let mut v = Vec::new();
        push_i64(&mut v, i64::MIN);
        v.push(b' ');
        push_padded(&mut v, 7, 4);
        v.push(b' ');
        push_padded(&mut v, 123456, 4);
        assert_eq!(v, b"-9223372036854775808 0007 123456");
    }

    #[test]
    fn wire_sizes() {
        assert_eq!(wire_exact::<2>(&[1, 2]).ok(), Some([1, 2]));
        assert_eq!(wire_exact::<2>(&[1]).unwrap_err().code, "08P01");
        assert_eq!(wire_exact::<2>(&[1, 2, 3]).unwrap_err().code, "22P03");
    }
}

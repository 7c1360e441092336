//! `real` and `double precision` text I/O, ported from PostgreSQL 15's `float.c`
//! (`float4in`, `float8in_internal`) and the shortest-round-trip output of `d2s.c`/`f2s.c`
//! that PostgreSQL uses with the default `extra_float_digits = 1`.
//!
//! Output: `NaN`, `Infinity`, `-Infinity`, `0`, `-0`; otherwise the shortest digit string
//! that reads back to the same bits, in fixed notation when the decimal exponent is in
//! [-4, 15) for float8 or [-4, 6) for float4, else `d.ddde+XX` (at least two exponent digits).

use super::ryu;
use super::strtod::{scan, Format};
use super::util::{invalid_syntax, is_space};
use crate::error::{sqlstate, PgError, Result};

/// `float8in`: whitespace, a glibc `strtod` number, whitespace.
pub(crate) fn parse_float8(s: &str) -> Result<f64> {
    parse(s, Format::F64).map(f64::from_bits)
}

/// `float4in`: as float8 but rounded directly to single precision (`strtof`).
pub(crate) fn parse_float4(s: &str) -> Result<f32> {
    // F32 results occupy the low 32 bits.
    parse(s, Format::F32).map(|bits| f32::from_bits(bits as u32))
}

fn parse(s: &str, fmt: Format) -> Result<u64> {
    let type_name = match fmt {
        Format::F32 => "real",
        Format::F64 => "double precision",
    };
    let b = s.as_bytes();
    let start = b.iter().position(|&c| !is_space(c)).unwrap_or(b.len());
    let Some(r) = scan(&b[start..], fmt) else {
        return Err(invalid_syntax(type_name, s));
    };
    let end = start + r.len;
    if r.out_of_range {
        // float8in names only the number itself; float4in (PG 15) repeats the whole input.
        let shown = match fmt {
            Format::F32 => s,
            Format::F64 => s.get(start..end).unwrap_or(s),
        };
        return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("\"{shown}\" is out of range for type {type_name}")));
    }
    if !b[end..].iter().all(|&c| is_space(c)) {
        return Err(invalid_syntax(type_name, s));
    }
    Ok(r.bits)
}

pub(crate) fn format_float8(v: f64, out: &mut Vec<u8>) {
    if let Some(special) = special_str(v.is_nan(), v.is_infinite(), v == 0.0, v.is_sign_negative()) {
        out.extend_from_slice(special.as_bytes());
        return;
    }
    let (digits, exponent) = ryu::d2d(v.to_bits());
    emit(v < 0.0, digits, exponent, 15, out);
}

pub(crate) fn format_float4(v: f32, out: &mut Vec<u8>) {
    if let Some(special) = special_str(v.is_nan(), v.is_infinite(), v == 0.0, v.is_sign_negative()) {
        out.extend_from_slice(special.as_bytes());
        return;
    }
    let (digits, exponent) = ryu::f2d(v.to_bits());
    emit(v < 0.0, u64::from(digits), exponent, 6, out);
}

/// `copy_special_str`: NaN (any sign), infinities and signed zero.
fn special_str(nan: bool, inf: bool, zero: bool, neg: bool) -> Option<&'static str> {
    match (nan, inf, zero, neg) {
        (true, ..) => Some("NaN"),
        (_, true, _, false) => Some("Infinity"),
        (_, true, _, true) => Some("-Infinity"),
        (_, _, true, false) => Some("0"),
        (_, _, true, true) => Some("-0"),
        _ => None,
    }
}

/// `to_chars`: `output * 10^exponent` in fixed notation when the decimal exponent is in
/// `[-4, fixed_limit)`, else `d.ddde±XX`.
fn emit(neg: bool, mut output: u64, exponent: i32, fixed_limit: i32, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut len = decimal_digits(output, &mut buf);
    let sci_exp = exponent + len as i32 - 1;
    if neg {
        out.push(b'-');
    }
    if (-4..fixed_limit).contains(&sci_exp) {
        emit_fixed(&buf[..len], sci_exp, out);
        return;
    }
    if exponent == 0 {
        // The small-integer path may leave trailing zeros; they move into the exponent.
        while output % 10 == 0 {
            output /= 10;
        }
        len = decimal_digits(output, &mut buf);
    }
    emit_exponential(&buf[..len], sci_exp, out);
}

/// Writes the decimal digits of `v` to the front of `buf`; returns their count.
fn decimal_digits(mut v: u64, buf: &mut [u8; 20]) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let len = tmp.len() - i;
    buf[..len].copy_from_slice(&tmp[i..]);
    len
}

/// `0.000ddd`, `ddd.ddd` or `ddd000`.
fn emit_fixed(digits: &[u8], exp: i32, out: &mut Vec<u8>) {
    if exp < 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-exp - 1) as usize, b'0');
        out.extend_from_slice(digits);
        return;
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        out.extend_from_slice(digits);
        out.resize(out.len() + int_len - digits.len(), b'0');
    } else {
        out.extend_from_slice(&digits[..int_len]);
        out.push(b'.');
        out.extend_from_slice(&digits[int_len..]);
    }
}

/// `d.ddde+XX` with a signed exponent of at least two digits.
fn emit_exponential(digits: &[u8], exp: i32, out: &mut Vec<u8>) {
    if let Some((first, rest)) = digits.split_first() {
        out.push(*first);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
    }
    out.push(b'e');
    out.push(if exp < 0 { b'-' } else { b'+' });
    let e = exp.unsigned_abs();
    if e >= 100 {
        out.push(b'0' + (e / 100) as u8);
    }
    out.push(b'0' + (e / 10 % 10) as u8);
    out.push(b'0' + (e % 10) as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f8(v: f64) -> String {
        let mut out = Vec::new();
        format_float8(v, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    fn f4(v: f32) -> String {
        let mut out = Vec::new();
        format_float4(v, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn float8_layout() {
        assert_eq!(f8(1e15), "1e+15");
        assert_eq!(f8(1e14), "100000000000000");
        assert_eq!(f8(123456789012345.0), "123456789012345");
        assert_eq!(f8(1234567890123456.0), "1.234567890123456e+15");
        assert_eq!(f8(0.0001), "0.0001");
        assert_eq!(f8(0.00001), "1e-05");
        assert_eq!(f8(1e-300), "1e-300");
        assert_eq!(f8(1.5e300), "1.5e+300");
        assert_eq!(f8(-137529336.6884436), "-137529336.6884436");
        assert_eq!(f8(-0.0), "-0");
        assert_eq!(f8(f64::NAN), "NaN");
        assert_eq!(f8(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(f8(5e-324), "5e-324");
        assert_eq!(f8(f64::MAX), "1.7976931348623157e+308");
    }

    #[test]
    fn float4_layout() {
        assert_eq!(f4(123456.0), "123456");
        assert_eq!(f4(1234567.0), "1.234567e+06");
        assert_eq!(f4(1e6), "1e+06");
        assert_eq!(f4(3.4e38), "3.4e+38");
        assert_eq!(f4(1e-45), "1e-45");
        assert_eq!(f4(242944.88), "242944.88");
        assert_eq!(f4(-0.0), "-0");
    }

    #[test]
    fn float_errors() {
        let e = parse_float4(" 1e50").unwrap_err();
        assert_eq!(e.message, "\" 1e50\" is out of range for type real");
        let e = parse_float8("  1e400  ").unwrap_err();
        assert_eq!(e.message, "\"1e400\" is out of range for type double precision");
        let e = parse_float8("1e").unwrap_err();
        assert_eq!(e.message, "invalid input syntax for type double precision: \"1e\"");
        assert!(parse_float8(" ").is_err());
        assert_eq!(parse_float8(" -Infinity ").ok(), Some(f64::NEG_INFINITY));
    }
}

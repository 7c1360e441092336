//! A `strtod`/`strtof` work-alike with glibc's grammar, which is what PostgreSQL's
//! `float4in`/`float8in` see on Linux:
//!
//! * decimal: `[+-] digits [. digits] [(e|E) [+-] digits]` (at least one mantissa digit; an
//!   exponent without digits is not consumed);
//! * hexadecimal: `[+-] 0x hexdigits [. hexdigits] [(p|P) [+-] digits]`, correctly rounded;
//! * `inf`, `infinity`, `nan` and `nan(n-char-sequence)` (case-insensitive), where a numeric
//!   n-char-sequence becomes the NaN payload exactly as glibc sets it.
//!
//! [`scan`] reports how many bytes form the number (C's `endptr`) and whether C would have set
//! `ERANGE` with a zero or infinite result (the only `ERANGE` PostgreSQL treats as an error).
//! Decimal conversion is delegated to Rust's correctly rounded parser, which agrees with
//! glibc bit for bit.

/// The IEEE binary format being produced.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Format {
    F32,
    F64,
}

impl Format {
    /// Significand bits including the implicit leading one.
    fn precision(self) -> i64 {
        match self {
            Format::F32 => 24,
            Format::F64 => 53,
        }
    }
    fn min_exp(self) -> i64 {
        match self {
            Format::F32 => -126,
            Format::F64 => -1022,
        }
    }
    fn max_exp(self) -> i64 {
        match self {
            Format::F32 => 127,
            Format::F64 => 1023,
        }
    }
    fn total_bits(self) -> u32 {
        match self {
            Format::F32 => 32,
            Format::F64 => 64,
        }
    }
    fn sign_bit(self) -> u64 {
        1 << (self.total_bits() - 1)
    }
    fn inf_bits(self) -> u64 {
        match self {
            Format::F32 => u64::from(f32::INFINITY.to_bits()),
            Format::F64 => f64::INFINITY.to_bits(),
        }
    }
    /// glibc's default quiet NaN.
    fn nan_bits(self) -> u64 {
        match self {
            Format::F32 => 0x7fc0_0000,
            Format::F64 => 0x7ff8_0000_0000_0000,
        }
    }
    /// Mantissa bits below the quiet bit, which a `nan(n)` payload may set.
    fn payload_mask(self) -> u64 {
        match self {
            Format::F32 => (1 << 22) - 1,
            Format::F64 => (1 << 51) - 1,
        }
    }
}

/// A recognised number prefix.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scanned {
    /// The value's bit pattern in the requested format (low 32 bits for F32).
    pub bits: u64,
    /// Bytes consumed (C's `endptr - str`).
    pub len: usize,
    /// C set `ERANGE` and the result is zero or infinite: PostgreSQL's "out of range".
    pub out_of_range: bool,
}

/// Scans a number at the start of `s` (no leading whitespace skipping). `None` when nothing
/// looks like a number (`endptr == str`).
pub(crate) fn scan(s: &[u8], fmt: Format) -> Option<Scanned> {
    let (neg, start) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let body = &s[start..];
    let mut r = scan_word(body, fmt, start > 0).or_else(|| scan_hex(body, fmt)).or_else(|| scan_decimal(body, fmt))?;
    r.len += start;
    if neg {
        r.bits |= fmt.sign_bit();
    }
    Some(r)
}

fn starts_with_ci(s: &[u8], word: &[u8]) -> bool {
    s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word)
}

/// `inf`, `infinity`, `nan`, `nan(...)`.
///
/// One glibc/PostgreSQL quirk is reproduced: when the payload of `nan(...)` overflows
/// `strtoull`, glibc leaves `errno = ERANGE`, so PostgreSQL falls back to its own keyword
/// matching. Unsigned, that recognises only `nan` (and the `(...)` is then trailing
/// garbage); signed, nothing matches and the ERANGE check passes a NaN, so glibc's result
/// stands.
fn scan_word(s: &[u8], fmt: Format, signed: bool) -> Option<Scanned> {
    if starts_with_ci(s, b"infinity") {
        return Some(exact(fmt.inf_bits(), 8));
    }
    if starts_with_ci(s, b"inf") {
        return Some(exact(fmt.inf_bits(), 3));
    }
    if !starts_with_ci(s, b"nan") {
        return None;
    }
    let seq_len = s[3..].iter().skip(1).take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
    let closed = s.get(3) == Some(&b'(') && s.get(4 + seq_len) == Some(&b')');
    if !closed {
        return Some(exact(fmt.nan_bits(), 3));
    }
    let (payload, overflow) = nan_payload(&s[4..4 + seq_len]);
    if overflow && !signed {
        return Some(exact(fmt.nan_bits(), 3));
    }
    Some(exact(fmt.nan_bits() | (payload & fmt.payload_mask()), 5 + seq_len))
}

fn exact(bits: u64, len: usize) -> Scanned {
    Scanned { bits, len, out_of_range: false }
}

/// glibc: the n-char-sequence is converted with `strtoull(seq, &end, 0)` and used only when
/// the whole sequence is consumed (overflow saturates). Returns the payload (0 when unused)
/// and whether `strtoull` overflowed.
fn nan_payload(seq: &[u8]) -> (u64, bool) {
    let hex_digits = seq.len() > 2 && (seq.starts_with(b"0x") || seq.starts_with(b"0X")) && seq[2].is_ascii_hexdigit();
    let (radix, digits) = if hex_digits {
        (16, &seq[2..])
    } else if seq.first() == Some(&b'0') {
        (8, seq)
    } else {
        (10, seq)
    };
    let mut acc: u64 = 0;
    let mut overflow = false;
    let mut used = 0;
    for &c in digits {
        let Some(d) = (c as char).to_digit(radix) else {
            break;
        };
        match acc.checked_mul(u64::from(radix)).and_then(|a| a.checked_add(u64::from(d))) {
            Some(a) if !overflow => acc = a,
            _ => {
                overflow = true;
                acc = u64::MAX;
            }
        }
        used += 1;
    }
    let consumed = used == digits.len();
    (if consumed { acc } else { 0 }, overflow)
}

/// Number of leading bytes of `s` satisfying `pred`.
fn run(s: &[u8], pred: impl Fn(u8) -> bool) -> usize {
    s.iter().take_while(|&&c| pred(c)).count()
}

/// Length of an exponent suffix `(marker) [+-] digits`, or 0 when there is none.
fn exponent_len(s: &[u8], markers: [u8; 2]) -> usize {
    if !s.first().is_some_and(|c| markers.contains(c)) {
        return 0;
    }
    let sign = usize::from(matches!(s.get(1), Some(b'+' | b'-')));
    let digits = run(&s[1 + sign..], |c| c.is_ascii_digit());
    if digits == 0 {
        0
    } else {
        1 + sign + digits
    }
}

fn scan_decimal(s: &[u8], fmt: Format) -> Option<Scanned> {
    let int_len = run(s, |c| c.is_ascii_digit());
    let mut len = int_len;
    let mut frac_len = 0;
    if s.get(len) == Some(&b'.') {
        frac_len = run(&s[len + 1..], |c| c.is_ascii_digit());
        if int_len + frac_len > 0 {
            len += 1 + frac_len;
        }
    }
    if int_len + frac_len == 0 {
        return None;
    }
    let mant_end = len;
    len += exponent_len(&s[len..], [b'e', b'E']);
    let text = std::str::from_utf8(&s[..len]).ok()?;
    let (bits, is_zero, is_inf) = match fmt {
        Format::F64 => {
            let v: f64 = text.parse().ok()?;
            (v.to_bits(), v == 0.0, v.is_infinite())
        }
        Format::F32 => {
            let v: f32 = text.parse().ok()?;
            (u64::from(v.to_bits()), v == 0.0, v.is_infinite())
        }
    };
    let nonzero_digits = s[..mant_end].iter().any(|c| (b'1'..=b'9').contains(c));
    Some(Scanned { bits, len, out_of_range: is_inf || (is_zero && nonzero_digits) })
}

/// Hexadecimal floating point (`0x1.8p3`), rounded to nearest-even like glibc.
fn scan_hex(s: &[u8], fmt: Format) -> Option<Scanned> {
    if !(s.starts_with(b"0x") || s.starts_with(b"0X")) {
        return None;
    }
    let body = &s[2..];
    let int_len = run(body, |c| c.is_ascii_hexdigit());
    let mut len = int_len;
    let mut frac_len = 0;
    if body.get(len) == Some(&b'.') {
        frac_len = run(&body[len + 1..], |c| c.is_ascii_hexdigit());
        if int_len + frac_len > 0 {
            len += 1 + frac_len;
        }
    }
    if int_len + frac_len == 0 {
        return None;
    }
    let exp_len = exponent_len(&body[len..], [b'p', b'P']);
    let bin_exp = parse_exponent(&body[len..len + exp_len]);
    let digits = body[..int_len].iter().chain(body[int_len..len].iter().skip(1)).copied();
    let (mant, scale, sticky) = accumulate_hex(digits, int_len);
    let (bits, out_of_range) = round_binary(mant, bin_exp.saturating_add(scale), sticky, fmt);
    Some(Scanned { bits, len: 2 + len + exp_len, out_of_range })
}

/// Parses `p[+-]digits` into a saturated exponent (0 for an empty slice).
fn parse_exponent(e: &[u8]) -> i64 {
    let Some((_, rest)) = e.split_first() else {
        return 0;
    };
    let (neg, digits) = match rest.split_first() {
        Some((b'-', d)) => (true, d),
        Some((b'+', d)) => (false, d),
        _ => (false, rest),
    };
    let mag = digits.iter().fold(0i64, |acc, &c| acc.saturating_mul(10).saturating_add(i64::from(c - b'0')).min(1 << 40));
    if neg {
        -mag
    } else {
        mag
    }
}

/// Folds hex digits into a 64-bit mantissa: returns (mantissa, power-of-two scale, sticky)
/// such that the value is `(mantissa + sticky-fraction) * 2^scale`.
fn accumulate_hex(digits: impl Iterator<Item = u8>, int_len: usize) -> (u64, i64, bool) {
    let mut mant: u64 = 0;
    let mut scale: i64 = 0;
    let mut sticky = false;
    for (i, c) in digits.enumerate() {
        let d = u64::from((c as char).to_digit(16).unwrap_or(0));
        let is_frac = i >= int_len;
        if mant >> 60 == 0 {
            mant = (mant << 4) | d;
            if is_frac {
                scale -= 4;
            }
        } else {
            sticky |= d != 0;
            if !is_frac {
                scale += 4;
            }
        }
    }
    (mant, scale, sticky)
}

/// Rounds `(mant + sticky) * 2^exp` to the format, nearest-even. Returns the bits and
/// whether the result overflowed to infinity or underflowed to zero.
fn round_binary(mant: u64, exp: i64, sticky: bool, fmt: Format) -> (u64, bool) {
    if mant == 0 {
        return (0, false);
    }
    let lz = i64::from(mant.leading_zeros());
    let mant = mant << lz;
    // Value is in [2^e, 2^(e+1)).
    let e = exp - lz + 63;
    if e > fmt.max_exp() {
        return (fmt.inf_bits(), true);
    }
    let p = fmt.precision();
    let keep = if e >= fmt.min_exp() { p } else { p - (fmt.min_exp() - e) };
    let kept = round_keep(mant, keep, sticky);
    if kept == 0 {
        return (0, true);
    }
    encode(kept, e, keep, fmt)
}

/// Keeps the top `keep` bits of a normalised 64-bit mantissa, rounding nearest-even.
fn round_keep(mant: u64, keep: i64, sticky: bool) -> u64 {
    if keep < 0 {
        return 0;
    }
    if keep == 0 {
        // Only the rounding decision against one half of the smallest unit remains.
        let above_half = mant > 1 << 63 || (mant == 1 << 63 && sticky);
        return u64::from(above_half);
    }
    let shift = 64 - keep as u32;
    let kept = mant >> shift;
    let rem = mant & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let round_up = rem > half || (rem == half && (sticky || kept & 1 == 1));
    kept + u64::from(round_up)
}

/// Builds the IEEE bits from a rounded significand `kept` of `keep` bits whose leading bit
/// has weight `2^e`.
fn encode(kept: u64, e: i64, keep: i64, fmt: Format) -> (u64, bool) {
    let p = fmt.precision();
    if keep < p {
        // Subnormal: the significand is the mantissa field; a carry into bit p-1 yields
        // the smallest normal number, which the same encoding represents.
        return (kept, false);
    }
    let (kept, e) = if kept >> p != 0 { (kept >> 1, e + 1) } else { (kept, e) };
    if e > fmt.max_exp() {
        return (fmt.inf_bits(), true);
    }
    let biased = (e - fmt.min_exp() + 1) as u64;
    let frac = kept & ((1u64 << (p - 1)) - 1);
    ((biased << (p - 1)) | frac, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64_of(s: &str) -> Option<(f64, usize, bool)> {
        scan(s.as_bytes(), Format::F64).map(|r| (f64::from_bits(r.bits), r.len, r.out_of_range))
    }

    #[test]
    fn decimal_prefixes() {
        assert_eq!(f64_of("1.5e3x"), Some((1500.0, 5, false)));
        assert_eq!(f64_of("1e"), Some((1.0, 1, false)));
        assert_eq!(f64_of("1e+"), Some((1.0, 1, false)));
        assert_eq!(f64_of(".5"), Some((0.5, 2, false)));
        assert_eq!(f64_of("5."), Some((5.0, 2, false)));
        assert!(f64_of(".").is_none());
        assert!(f64_of("e5").is_none());
        assert_eq!(f64_of("0x"), Some((0.0, 1, false)));
        assert_eq!(f64_of("1e400").map(|r| r.2), Some(true));
        assert_eq!(f64_of("1e-400").map(|r| r.2), Some(true));
        assert_eq!(f64_of("0e-400").map(|r| r.2), Some(false));
        assert_eq!(f64_of("4.9e-324").map(|r| r.0.to_bits()), Some(1));
    }

    #[test]
    fn hex_floats() {
        assert_eq!(f64_of("0x1p4"), Some((16.0, 5, false)));
        assert_eq!(f64_of("0x1.8p1"), Some((3.0, 7, false)));
        assert_eq!(f64_of("0X.8"), Some((0.5, 4, false)));
        assert_eq!(f64_of("0x1p-1074").map(|r| r.0.to_bits()), Some(1));
        assert_eq!(f64_of("0x1p-1075").map(|r| r.2), Some(true));
        assert_eq!(f64_of("0x1.8p-1075").map(|r| r.0.to_bits()), Some(1));
        assert_eq!(f64_of("0x1p1024").map(|r| r.2), Some(true));
        assert_eq!(f64_of("0x1.fffffffffffff8p1023").map(|r| r.2), Some(true));
        assert_eq!(f64_of("0x1.fffffffffffff7p1023").map(|r| r.0), Some(f64::MAX));
        assert_eq!(f64_of("0x1p"), Some((1.0, 3, false)));
        assert_eq!(f64_of("0x.p1"), Some((0.0, 1, false)));
        let r = scan(b"0x1.000001p0", Format::F32).map(|r| r.bits);
        assert_eq!(r, Some(u64::from(1.0f32.to_bits())));
        let r = scan(b"0x1.000003p0", Format::F32).map(|r| r.bits);
        assert_eq!(r, Some(u64::from(1.0f32.to_bits()) + 2));
    }

    #[test]
    fn words_and_payloads() {
        assert_eq!(f64_of("infinityx"), Some((f64::INFINITY, 8, false)));
        assert_eq!(f64_of("-INF").map(|r| (r.0, r.1)), Some((f64::NEG_INFINITY, 4)));
        let bits = |s: &str| scan(s.as_bytes(), Format::F64).map(|r| (r.bits, r.len));
        assert_eq!(bits("nan(123)"), Some((0x7ff8_0000_0000_007b, 8)));
        assert_eq!(bits("-nan"), Some((0xfff8_0000_0000_0000, 4)));
        assert_eq!(bits("nan(abc)"), Some((0x7ff8_0000_0000_0000, 8)));
        assert_eq!(bits("nan(010)"), Some((0x7ff8_0000_0000_0008, 8)));
        assert_eq!(bits("nan(1"), Some((0x7ff8_0000_0000_0000, 3)));
        assert_eq!(bits("nan(0xfffffffffffff)"), Some((0x7fff_ffff_ffff_ffff, 20)));
        assert_eq!(bits("nan(99999999999999999999999)"), Some((0x7ff8_0000_0000_0000, 3)));
        assert_eq!(bits("-nan(99999999999999999999999)"), Some((u64::MAX, 29)));
        let f = scan(b"nan(99999999999)", Format::F32).map(|r| r.bits);
        assert_eq!(f, Some(0x7ff6_e7ff));
    }
}

//! `numeric`: PostgreSQL 15's exact decimal type (`numeric.c`), reimplemented: text and
//! binary I/O, the `numeric(p,s)` modifier, arithmetic with PostgreSQL's result scales,
//! rounding, conversions, `sqrt`, `power`, `ln` and `exp`.
//!
//! # Representation
//!
//! A finite [`Numeric`] is `sign × Σ digits[i] × 10000^(weight − i)`: base-10000 ("NBASE")
//! digits, most significant first, `weight` being the power of 10000 of the first digit,
//! plus a display scale `dscale`, the number of decimal digits shown after the point
//! (`1.50` has digits `[1, 5000]`, weight 0, dscale 2). The other values are NaN,
//! `Infinity` and `-Infinity`.
//!
//! Invariants of every value this module hands out (and that comparison, hashing, output
//! and the storage form rely on):
//!
//! * digits are normalized: each is in `0..10000`, the first and the last are non-zero; zero
//!   has no digits, weight 0 and a positive sign (there is no negative zero);
//! * `0 <= dscale <= 16383` and no non-zero digit lies beyond `dscale` decimal places
//!   (the value is exactly what its text form shows); `-32768 <= weight <= 32767`, the
//!   limits of PostgreSQL's stored format (beyond them: `value overflows numeric format`);
//! * special values have no digits, weight 0 and dscale 0.
//!
//! Two values are equal when they are numerically equal: `1.0 = 1.00` (dscale is display
//! only), and `Hash` hashes the normalized digits, not the scale. The order is PostgreSQL's
//! btree order: `-Infinity` < finite values < `Infinity` < `NaN`, and NaN equals NaN.
//!
//! # Storage form
//!
//! Little-endian, mirroring PostgreSQL's long on-disk header:
//!
//! * finite: `u16` header = `0x4000` if negative, `| dscale` (14 bits); `i16` weight; then
//!   each base-10000 digit as `u16` (normalized, so zero is just the 4-byte header);
//! * NaN, `Infinity`, `-Infinity`: the `u16` header alone, `0xC000`, `0xD000`, `0xF000`.
//!
//! The btree key (`access::btree::keycode`) is derived from it by [`Numeric::sort_key`].
//!
//! # Result scales (PostgreSQL's rules, as implemented here)
//!
//! * `+`, `-`: exact, dscale `max(d1, d2)`;
//! * `*`: exact, dscale `d1 + d2`, rounded to 16383 places if that is exceeded;
//! * `/` (and `avg`, which divides the sum by the count): `select_div_scale`, enough places
//!   for at least 16 significant digits, but no fewer than either input's dscale, in
//!   0..=1000; the quotient is correctly rounded half away from zero;
//! * `%`: `x − trunc(x / y) × y`, exact, dscale `max(d1, d2)`; `div` truncates to dscale 0;
//! * `round(x, s)`/`trunc(x, s)`: s clamped to the stored format's places (−131073 to
//!   16383), dscale `max(s, 0)`, half away from zero; `floor`/`ceil` dscale 0;
//! * `sqrt`: at least 16 significant digits, no fewer than the input's dscale, correctly
//!   rounded;
//! * `^` with an integer exponent (in `i32`): scale `max(16, dscale of base)` (capped at
//!   1000), computed by repeated squaring with PostgreSQL's truncated products; otherwise
//!   `exp(y × ln(x))` at scale `16 − (estimated decimal weight of the result)`, no fewer
//!   than either input's dscale, within 0..=1000;
//! * `ln`, `exp`: at least 16 significant digits, no fewer than the input's dscale.
//!
//! Products inside `power`, `ln` and `exp` leave out the same partial products as
//! PostgreSQL's `mul_var`, so those functions give PostgreSQL's digits. One difference:
//! where PostgreSQL 15 divides with its approximate `div_var_fast` (the first term of the
//! `ln` series, and `x ^ n` for integers n < −1), this module divides exactly; the results
//! could differ only when the exact value lies within a few units of the last guard digit
//! of a rounding boundary (none among 44,000 cases compared with PostgreSQL 15, 11,000 of
//! them kept in `tests/fixtures/pg15_numeric_cases.tsv`).
//!
//! Not provided: `log(b, x)`, `log10`, `scale()`, `min_scale()`, `trim_scale()`,
//! `width_bucket`, `to_char` formats, the aggregates' transition states (callers sum with
//! [`Numeric::add`] and finish with [`Numeric::avg`]), PostgreSQL's `hash_numeric` values
//! (this `Hash` only agrees with `Eq`), and its short/TOASTed on-disk varlena formats (the
//! storage form above is heapstore's own).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use super::util::{incorrect_binary_format, insufficient_data, is_space};
use crate::error::{sqlstate, PgError, Result};

/// The base of a digit, and how many decimal digits one holds.
const NBASE: u32 = 10_000;
const HALF_NBASE: u16 = 5_000;
const DEC_DIGITS: i32 = 4;
/// Extra base-10000 digits a rounded multiplication keeps (`MUL_GUARD_DIGITS`).
const MUL_GUARD_DIGITS: i32 = 2;
/// `10^(4 - i)`: the unit of the last kept decimal digit inside a base-10000 digit.
const ROUND_POWERS: [u16; 4] = [0, 1000, 100, 10];

/// `numeric(p, s)`: the largest precision.
pub(crate) const MAX_PRECISION: i32 = 1000;
/// `numeric(p, s)`: the scale range (PostgreSQL 15 allows negative scales and s > p).
pub(crate) const MIN_SCALE: i32 = -1000;
pub(crate) const MAX_SCALE: i32 = 1000;
/// Bounds of computed result scales (`NUMERIC_MIN/MAX_DISPLAY_SCALE`).
const MIN_DISPLAY_SCALE: i32 = 0;
const MAX_DISPLAY_SCALE: i32 = 1000;
/// Bound of `exp`/`power` result weights (`NUMERIC_MAX_RESULT_SCALE`).
const MAX_RESULT_SCALE: i32 = 2000;
/// `round`/`trunc` scale range: every place the stored format has, plus one place before
/// the point for a rounding carry.
const MIN_ROUND_SCALE: i32 = -(i16::MAX as i32 + 1) * DEC_DIGITS - 1;
/// Significant digits a division, square root or power gives at least.
const MIN_SIG_DIGITS: i32 = 16;
/// The largest dscale the stored format holds (14 bits).
const DSCALE_MAX: i32 = 0x3FFF;

/// log10(e), log10(2) and ln(10) as PostgreSQL writes them (its scale estimates truncate
/// products of these, so the same literals give the same scales).
#[allow(clippy::approx_constant)]
const LOG10_E: f64 = 0.434294481903252;
#[allow(clippy::approx_constant)]
const LOG10_2: f64 = 0.301029995663981;
#[allow(clippy::approx_constant)]
const LN_10: f64 = 2.302585092994046;

/// Header bits of the binary and storage forms.
const SIGN_NEG: u16 = 0x4000;
const SIGN_NAN: u16 = 0xC000;
const SIGN_PINF: u16 = 0xD000;
const SIGN_NINF: u16 = 0xF000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Finite,
    NaN,
    PosInf,
    NegInf,
}

/// A PostgreSQL `numeric` value (see the module documentation for the invariants).
#[derive(Clone, Debug)]
pub struct Numeric {
    kind: Kind,
    /// Finite values only; never set for zero.
    neg: bool,
    weight: i32,
    /// Display scale. Intermediate results inside this module may carry a negative one.
    dscale: i32,
    digits: Vec<u16>,
}

// ---------------------------------------------------------------------------------------
// Errors

#[cold]
fn overflow() -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")
}

#[cold]
fn division_by_zero() -> PgError {
    PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero")
}

#[cold]
fn invalid_syntax(s: &str) -> PgError {
    super::util::invalid_syntax("numeric", s)
}

#[cold]
fn power_error(msg: &str) -> PgError {
    PgError::new(sqlstate::INVALID_ARGUMENT_FOR_POWER_FUNCTION, msg)
}

#[cold]
fn log_error(msg: &str) -> PgError {
    PgError::new(sqlstate::INVALID_ARGUMENT_FOR_LOG, msg)
}

#[cold]
fn invalid_external(what: &str) -> PgError {
    PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("invalid {what} in external \"numeric\" value"))
}

// ---------------------------------------------------------------------------------------
// Type modifier

/// PostgreSQL's typmod for `numeric(precision, scale)`: `((p << 16) | (s & 0x7ff)) + 4`.
pub(crate) fn make_typmod(precision: i32, scale: i32) -> i32 {
    ((precision << 16) | (scale & 0x7ff)) + 4
}

/// The precision of a valid typmod (`typmod >= 4`).
pub(crate) fn typmod_precision(typmod: i32) -> i32 {
    ((typmod - 4) >> 16) & 0xffff
}

/// The scale of a valid typmod: 11-bit two's complement.
pub(crate) fn typmod_scale(typmod: i32) -> i32 {
    (((typmod - 4) & 0x7ff) ^ 1024) - 1024
}

/// `numerictypmodin`: validates `numeric(p)` / `numeric(p, s)` and returns the typmod.
pub(crate) fn typmod_from_args(args: &[i64]) -> Result<i32> {
    let bad = |msg: String| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg);
    let (p, s) = match args {
        [p] => (*p, 0),
        [p, s] => (*p, *s),
        _ => return Err(bad("invalid NUMERIC type modifier".into())),
    };
    if !(1..=i64::from(MAX_PRECISION)).contains(&p) {
        return Err(bad(format!("NUMERIC precision {p} must be between 1 and {MAX_PRECISION}")));
    }
    if !(i64::from(MIN_SCALE)..=i64::from(MAX_SCALE)).contains(&s) {
        return Err(bad(format!("NUMERIC scale {s} must be between {MIN_SCALE} and {MAX_SCALE}")));
    }
    Ok(make_typmod(p as i32, s as i32))
}

// ---------------------------------------------------------------------------------------
// Construction and basic properties

impl Numeric {
    const fn special(kind: Kind) -> Numeric {
        Numeric { kind, neg: false, weight: 0, dscale: 0, digits: Vec::new() }
    }

    /// `NaN`.
    pub const fn nan() -> Numeric {
        Numeric::special(Kind::NaN)
    }

    /// `Infinity`.
    pub const fn infinity() -> Numeric {
        Numeric::special(Kind::PosInf)
    }

    /// `-Infinity`.
    pub const fn neg_infinity() -> Numeric {
        Numeric::special(Kind::NegInf)
    }

    /// Zero with `dscale` places (`0.00` for 2).
    fn zero_scaled(dscale: i32) -> Numeric {
        Numeric { kind: Kind::Finite, neg: false, weight: 0, dscale, digits: Vec::new() }
    }

    /// 0.
    pub fn zero() -> Numeric {
        Numeric::zero_scaled(0)
    }

    /// `int8_numeric`: the integer with dscale 0.
    pub fn from_i64(v: i64) -> Numeric {
        let mut u = v.unsigned_abs();
        let mut rev = [0u16; 5];
        let mut n = 0;
        while u > 0 {
            rev[n] = (u % u64::from(NBASE)) as u16;
            u /= u64::from(NBASE);
            n += 1;
        }
        let mut r =
            Numeric { kind: Kind::Finite, neg: v < 0, weight: n as i32 - 1, dscale: 0, digits: rev[..n].iter().rev().copied().collect() };
        r.strip();
        r
    }

    pub fn is_nan(&self) -> bool {
        self.kind == Kind::NaN
    }

    /// Neither NaN nor an infinity.
    pub fn is_finite(&self) -> bool {
        self.kind == Kind::Finite
    }

    /// `Infinity` or `-Infinity`.
    pub fn is_infinite(&self) -> bool {
        matches!(self.kind, Kind::PosInf | Kind::NegInf)
    }

    /// A finite zero (of any scale).
    pub fn is_zero(&self) -> bool {
        self.kind == Kind::Finite && self.digits.is_empty()
    }

    /// The display scale (0 for NaN and the infinities).
    pub fn dscale(&self) -> i32 {
        self.dscale.max(0)
    }

    fn one() -> Numeric {
        Numeric { kind: Kind::Finite, neg: false, weight: 0, dscale: 0, digits: vec![1] }
    }

    /// A finite value from parts, normalized (used for constants).
    fn from_parts(neg: bool, weight: i32, dscale: i32, digits: Vec<u16>) -> Numeric {
        let mut r = Numeric { kind: Kind::Finite, neg, weight, dscale, digits };
        r.strip();
        r
    }

    /// `numeric_sign_internal` for non-NaN values: -1, 0 or 1.
    fn sign_i(&self) -> i32 {
        match self.kind {
            Kind::PosInf => 1,
            Kind::NegInf => -1,
            Kind::NaN => 0,
            Kind::Finite if self.digits.is_empty() => 0,
            Kind::Finite if self.neg => -1,
            Kind::Finite => 1,
        }
    }

    /// No digits after the decimal point (`numeric_is_integral` for finite values).
    fn is_integral(&self) -> bool {
        self.digits.is_empty() || self.digits.len() as i32 <= self.weight + 1
    }

    /// Removes leading and trailing zero digits (`strip_var`); a zero gets weight 0 and a
    /// positive sign.
    fn strip(&mut self) {
        let lead = self.digits.iter().take_while(|&&d| d == 0).count();
        if lead == self.digits.len() {
            self.digits.clear();
            self.weight = 0;
            self.neg = false;
            return;
        }
        if lead > 0 {
            self.digits.drain(..lead);
            self.weight -= lead as i32;
        }
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
    }

    /// `make_result`: normalizes and checks that the value fits the stored format.
    fn finish(mut self) -> Result<Numeric> {
        if self.kind != Kind::Finite {
            return Ok(Numeric::special(self.kind));
        }
        self.strip();
        if self.weight < i32::from(i16::MIN) || self.weight > i32::from(i16::MAX) || !(0..=DSCALE_MAX).contains(&self.dscale) {
            return Err(overflow());
        }
        Ok(self)
    }

    /// The decimal exponent of the last digit: the value is `C × 10^exp10` with C the
    /// digits read as an integer.
    fn exp10(&self) -> i64 {
        i64::from(DEC_DIGITS) * (i64::from(self.weight) - self.digits.len() as i64 + 1)
    }
}

// ---------------------------------------------------------------------------------------
// Rounding

impl Numeric {
    /// `round_var`: rounds half away from zero to `rscale` decimal places (negative:
    /// before the point) and sets dscale to `rscale`; the result is normalized.
    fn round_var(&mut self, rscale: i32) {
        self.dscale = rscale;
        let di = (i64::from(self.weight) + 1) * i64::from(DEC_DIGITS) + i64::from(rscale);
        if di < 0 {
            self.digits.clear();
            self.strip();
            return;
        }
        let keep = ((di + 3) / 4) as usize;
        let within = (di % 4) as usize;
        let n = self.digits.len();
        if !(keep < n || (keep == n && within > 0)) {
            self.strip();
            return;
        }
        let mut carry;
        let mut next; // carries go into indices below this one
        if within == 0 {
            carry = self.digits[keep] >= HALF_NBASE;
            self.digits.truncate(keep);
            next = keep;
        } else {
            self.digits.truncate(keep);
            let last = keep - 1;
            let pow10 = ROUND_POWERS[within];
            let extra = self.digits[last] % pow10;
            self.digits[last] -= extra;
            carry = false;
            if extra >= pow10 / 2 {
                let v = self.digits[last] + pow10;
                if v >= NBASE as u16 {
                    self.digits[last] = v - NBASE as u16;
                    carry = true;
                } else {
                    self.digits[last] = v;
                }
            }
            next = last;
        }
        while carry {
            if next == 0 {
                self.digits.insert(0, 1);
                self.weight += 1;
                break;
            }
            next -= 1;
            if self.digits[next] == NBASE as u16 - 1 {
                self.digits[next] = 0;
            } else {
                self.digits[next] += 1;
                carry = false;
            }
        }
        self.strip();
    }

    /// `trunc_var`: truncates toward zero to `rscale` decimal places and sets dscale.
    fn trunc_var(&mut self, rscale: i32) {
        self.dscale = rscale;
        let di = (i64::from(self.weight) + 1) * i64::from(DEC_DIGITS) + i64::from(rscale);
        if di <= 0 {
            self.digits.clear();
            self.strip();
            return;
        }
        let keep = ((di + 3) / 4) as usize;
        if keep <= self.digits.len() {
            self.digits.truncate(keep);
            let within = (di % 4) as usize;
            if within > 0 {
                let last = keep - 1;
                self.digits[last] -= self.digits[last] % ROUND_POWERS[within];
            }
        }
        self.strip();
    }

    /// `round(numeric, int)`: half away from zero; the scale is clamped to -131073..=16383
    /// (the stored format's range); a negative scale rounds before the point and gives
    /// dscale 0. NaN and infinities are returned as is.
    pub fn round(&self, scale: i32) -> Result<Numeric> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        let scale = scale.clamp(MIN_ROUND_SCALE, DSCALE_MAX);
        let mut r = self.clone();
        r.round_var(scale);
        r.dscale = r.dscale.max(0);
        r.finish()
    }

    /// `trunc(numeric, int)`: toward zero, with the scale rules of [`Numeric::round`].
    pub fn trunc(&self, scale: i32) -> Result<Numeric> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        let scale = scale.clamp(MIN_ROUND_SCALE, DSCALE_MAX);
        let mut r = self.clone();
        r.trunc_var(scale);
        r.dscale = r.dscale.max(0);
        r.finish()
    }

    /// `floor`: the largest integer not greater than the value (dscale 0).
    pub fn floor(&self) -> Result<Numeric> {
        self.floor_ceil(true)
    }

    /// `ceil`/`ceiling`: the smallest integer not less than the value (dscale 0).
    pub fn ceil(&self) -> Result<Numeric> {
        self.floor_ceil(false)
    }

    fn floor_ceil(&self, floor: bool) -> Result<Numeric> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        let mut t = self.clone();
        t.trunc_var(0);
        // Truncation moved a negative value up (floor) or a positive one down (ceil).
        if self.neg == floor && t.cmp_finite(self) != Ordering::Equal {
            let step = if floor { Numeric::from_i64(-1) } else { Numeric::one() };
            t = add_finite(&t, &step, false);
        }
        t.finish()
    }
}

// ---------------------------------------------------------------------------------------
// Text I/O

impl Numeric {
    /// `numeric_in` without a type modifier: surrounding whitespace, an optional sign,
    /// digits with an optional point, an optional exponent (`1.5e-3`), or `NaN`,
    /// `Infinity`, `inf` with an optional sign, case-insensitively.
    pub fn parse(s: &str) -> Result<Numeric> {
        Numeric::parse_typmod(s, -1)
    }

    /// `numeric_in` with a type modifier (`-1` for none), applied after the syntax check.
    pub fn parse_typmod(s: &str, typmod: i32) -> Result<Numeric> {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        let rest = &b[i..];
        const SPECIAL: [(&[u8], Kind); 7] = [
            (b"NaN", Kind::NaN),
            (b"Infinity", Kind::PosInf),
            (b"+Infinity", Kind::PosInf),
            (b"-Infinity", Kind::NegInf),
            (b"inf", Kind::PosInf),
            (b"+inf", Kind::PosInf),
            (b"-inf", Kind::NegInf),
        ];
        let (mut v, end) = match SPECIAL.iter().find(|(w, _)| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w)) {
            Some((w, kind)) => (Numeric::special(*kind), i + w.len()),
            None => parse_finite(s, i)?,
        };
        if !b[end..].iter().all(|&c| is_space(c)) {
            return Err(invalid_syntax(s));
        }
        v.apply_typmod_mut(typmod)?;
        v.finish()
    }

    /// `numeric_out`: `NaN`, `Infinity`, `-Infinity`, or the plain decimal with exactly
    /// dscale digits after the point (`1.50`, `-0.001`, `100`).
    pub fn to_text(&self) -> String {
        let mut out = Vec::with_capacity(self.digits.len() * 4 + 8);
        self.write_text(&mut out);
        // Only ASCII is written.
        String::from_utf8(out).unwrap_or_default()
    }

    /// Appends [`Numeric::to_text`]'s output to `out`.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        match self.kind {
            Kind::NaN => return out.extend_from_slice(b"NaN"),
            Kind::PosInf => return out.extend_from_slice(b"Infinity"),
            Kind::NegInf => return out.extend_from_slice(b"-Infinity"),
            Kind::Finite => {}
        }
        if self.neg {
            out.push(b'-');
        }
        let digit = |i: i64| -> u16 { usize::try_from(i).ok().and_then(|i| self.digits.get(i)).copied().unwrap_or(0) };
        let mut d: i64 = 0;
        if self.weight < 0 {
            out.push(b'0');
            d = i64::from(self.weight) + 1;
        } else {
            while d <= i64::from(self.weight) {
                let dig = digit(d);
                let quad = [dig / 1000, dig / 100 % 10, dig / 10 % 10, dig % 10];
                // The first digit group has its leading zeros suppressed (but not its last).
                let skip = if d == 0 { quad[..3].iter().take_while(|&&q| q == 0).count() } else { 0 };
                out.extend(quad[skip..].iter().map(|&q| b'0' + q as u8));
                d += 1;
            }
        }
        if self.dscale > 0 {
            out.push(b'.');
            let end = out.len() + self.dscale as usize;
            while out.len() < end {
                let dig = digit(d);
                for q in [dig / 1000, dig / 100 % 10, dig / 10 % 10, dig % 10] {
                    if out.len() < end {
                        out.push(b'0' + q as u8);
                    }
                }
                d += 1;
            }
        }
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl std::str::FromStr for Numeric {
    type Err = PgError;

    fn from_str(s: &str) -> Result<Numeric> {
        Numeric::parse(s)
    }
}

/// `strtol(s + i, &end, 10)` as far as `set_var_from_str` needs it: whitespace, a sign,
/// digits (saturating); `None` when no digits follow.
fn strtol(b: &[u8], mut i: usize) -> Option<(i64, usize)> {
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    let neg = super::util::take_sign(b, &mut i);
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(i64::from(c - b'0'));
        i += 1;
    }
    Some((if neg { -v } else { v }, i))
}

/// `set_var_from_str` from byte `start` of `s`: returns the (not yet range-checked) value
/// and where it ended.
fn parse_finite(s: &str, start: usize) -> Result<(Numeric, usize)> {
    let b = s.as_bytes();
    let mut i = start;
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut have_dp = false;
    if b.get(i) == Some(&b'.') {
        have_dp = true;
        i += 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return Err(invalid_syntax(s));
    }
    let digits_start = i;
    let mut dweight: i64 = -1;
    let mut dscale: i64 = 0;
    let mut ddigits: i64 = 0;
    while let Some(&c) = b.get(i) {
        if c.is_ascii_digit() {
            ddigits += 1;
            if have_dp {
                dscale += 1;
            } else {
                dweight += 1;
            }
        } else if c == b'.' {
            if have_dp {
                return Err(invalid_syntax(s));
            }
            have_dp = true;
        } else {
            break;
        }
        i += 1;
    }
    let digits_end = i;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let Some((exponent, end)) = strtol(b, i + 1) else {
            return Err(invalid_syntax(s));
        };
        i = end;
        let limit = i64::from(i32::MAX / 2);
        if exponent >= limit || exponent <= -limit {
            return Err(overflow());
        }
        dweight += exponent;
        dscale = (dscale - exponent).max(0);
    }
    // Base-10000 alignment: `offset` zeros go before the first decimal digit so that the
    // digit of weight `dweight` lands in the right place of its group of four.
    let weight = if dweight >= 0 { (dweight + 4) / 4 - 1 } else { -((-dweight - 1) / 4 + 1) };
    let offset = (weight + 1) * 4 - (dweight + 1);
    let ndigits = ((ddigits + offset + 3) / 4) as usize;
    let mut digits = Vec::with_capacity(ndigits);
    let mut acc: u16 = 0;
    let mut filled = offset;
    for &c in &b[digits_start..digits_end] {
        if c == b'.' {
            continue;
        }
        acc = acc * 10 + u16::from(c - b'0');
        filled += 1;
        if filled == 4 {
            digits.push(acc);
            acc = 0;
            filled = 0;
        }
    }
    if filled > 0 {
        digits.push(acc * 10u16.pow((4 - filled) as u32));
    }
    // dscale and weight are bounded by the input length and the exponent limit; finish()
    // checks them against the stored format.
    let v = Numeric::from_parts(neg, weight as i32, dscale.min(i64::from(i32::MAX)) as i32, digits);
    Ok((v, i))
}

// ---------------------------------------------------------------------------------------
// Type modifier application

impl Numeric {
    /// `numeric(p, s)` coercion (`apply_typmod` / `apply_typmod_special`): rounds to the
    /// scale, then fails with `numeric field overflow` if the value needs more than p − s
    /// digits before the point. NaN passes; infinities are refused. `typmod < 4` (no
    /// modifier) returns the value unchanged.
    pub fn apply_typmod(&self, typmod: i32) -> Result<Numeric> {
        let mut v = self.clone();
        v.apply_typmod_mut(typmod)?;
        v.finish()
    }

    fn apply_typmod_mut(&mut self, typmod: i32) -> Result<()> {
        if typmod < 4 {
            return Ok(());
        }
        let precision = typmod_precision(typmod);
        let scale = typmod_scale(typmod);
        match self.kind {
            Kind::NaN => return Ok(()),
            Kind::PosInf | Kind::NegInf => {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow")
                    .with_detail(format!("A field with precision {precision}, scale {scale} cannot hold an infinite value.")))
            }
            Kind::Finite => {}
        }
        let maxdigits = i64::from(precision - scale);
        self.round_var(scale);
        self.dscale = self.dscale.max(0);
        // After round_var the digits are normalized: the first one fixes the true weight.
        if let Some(&first) = self.digits.first() {
            let leading_zeros = match first {
                0..=9 => 3,
                10..=99 => 2,
                100..=999 => 1,
                _ => 0,
            };
            let ddigits = (i64::from(self.weight) + 1) * i64::from(DEC_DIGITS) - leading_zeros;
            if ddigits > maxdigits {
                let bound = if maxdigits != 0 { format!("10^{maxdigits}") } else { "1".to_string() };
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow").with_detail(format!(
                    "A field with precision {precision}, scale {scale} must round to an absolute value less than {bound}."
                )));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Binary I/O and storage

/// Reads big-endian `u16`s with PostgreSQL's `insufficient data left in message`.
struct WireReader<'a> {
    wire: &'a [u8],
    pos: usize,
}

impl WireReader<'_> {
    fn u16(&mut self) -> Result<u16> {
        let b = self.wire.get(self.pos..self.pos + 2).ok_or_else(insufficient_data)?;
        self.pos += 2;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
}

impl Numeric {
    /// `numeric_send`: `int16` ndigits, `int16` weight, `uint16` sign (`0x0000`, `0x4000`
    /// negative, `0xC000` NaN, `0xD000` Infinity, `0xF000` -Infinity), `int16` dscale, then
    /// the base-10000 digits as `int16`, all big-endian. Like PostgreSQL, the infinities
    /// carry dscale 32 (bits of their short header).
    pub fn send(&self, out: &mut Vec<u8>) {
        let (sign, dscale) = match self.kind {
            Kind::NaN => (SIGN_NAN, 0),
            Kind::PosInf => (SIGN_PINF, 0x20),
            Kind::NegInf => (SIGN_NINF, 0x20),
            Kind::Finite => (if self.neg { SIGN_NEG } else { 0 }, self.dscale as u16),
        };
        out.reserve(8 + 2 * self.digits.len());
        out.extend_from_slice(&(self.digits.len() as u16).to_be_bytes());
        out.extend_from_slice(&(self.weight as i16).to_be_bytes());
        out.extend_from_slice(&sign.to_be_bytes());
        out.extend_from_slice(&dscale.to_be_bytes());
        for d in &self.digits {
            out.extend_from_slice(&d.to_be_bytes());
        }
    }

    /// `numeric_recv` (without type modifier): checks the sign (`invalid sign in external
    /// "numeric" value`), the dscale (`invalid scale ...`) and each digit (`invalid digit
    /// ...`, 22P03); digits hidden by the dscale are truncated away, as PostgreSQL does.
    /// Bytes left over give `incorrect binary data format`.
    pub fn recv(wire: &[u8]) -> Result<Numeric> {
        Numeric::recv_typmod(wire, -1)
    }

    /// [`Numeric::recv`], then the type modifier (`-1` for none).
    pub fn recv_typmod(wire: &[u8], typmod: i32) -> Result<Numeric> {
        let mut r = WireReader { wire, pos: 0 };
        let ndigits = r.u16()?;
        let weight = r.u16()? as i16;
        let (kind, neg) = match r.u16()? {
            0 => (Kind::Finite, false),
            SIGN_NEG => (Kind::Finite, true),
            SIGN_NAN => (Kind::NaN, false),
            SIGN_PINF => (Kind::PosInf, false),
            SIGN_NINF => (Kind::NegInf, false),
            _ => return Err(invalid_external("sign")),
        };
        let dscale = r.u16()?;
        if dscale > DSCALE_MAX as u16 {
            return Err(invalid_external("scale"));
        }
        let mut digits = Vec::with_capacity(usize::from(ndigits).min(wire.len() / 2));
        for _ in 0..ndigits {
            let d = r.u16()?;
            if u32::from(d) >= NBASE {
                return Err(invalid_external("digit"));
            }
            digits.push(d);
        }
        if r.pos != wire.len() {
            return Err(incorrect_binary_format());
        }
        let mut v = match kind {
            Kind::Finite => {
                let mut v = Numeric { kind, neg, weight: i32::from(weight), dscale: i32::from(dscale), digits };
                v.trunc_var(i32::from(dscale));
                v
            }
            _ => Numeric::special(kind),
        };
        v.apply_typmod_mut(typmod)?;
        v.finish()
    }

    /// Appends the storage form (see the module documentation).
    pub fn encode_stored(&self, out: &mut Vec<u8>) {
        let header = match self.kind {
            Kind::NaN => return out.extend_from_slice(&SIGN_NAN.to_le_bytes()),
            Kind::PosInf => return out.extend_from_slice(&SIGN_PINF.to_le_bytes()),
            Kind::NegInf => return out.extend_from_slice(&SIGN_NINF.to_le_bytes()),
            Kind::Finite => (if self.neg { SIGN_NEG } else { 0 }) | (self.dscale as u16 & DSCALE_MAX as u16),
        };
        out.reserve(4 + 2 * self.digits.len());
        out.extend_from_slice(&header.to_le_bytes());
        out.extend_from_slice(&(self.weight as i16).to_le_bytes());
        for d in &self.digits {
            out.extend_from_slice(&d.to_le_bytes());
        }
    }

    /// Decodes the storage form. Stored values are written by [`Numeric::encode_stored`];
    /// a malformed one (a caller bug) asserts in debug builds and reads as NaN otherwise.
    pub fn decode_stored(stored: &[u8]) -> Numeric {
        let Some(header) = stored.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]])) else {
            debug_assert!(false, "stored numeric of {} bytes", stored.len());
            return Numeric::nan();
        };
        match header {
            SIGN_NAN => return Numeric::nan(),
            SIGN_PINF => return Numeric::infinity(),
            SIGN_NINF => return Numeric::neg_infinity(),
            _ => {}
        }
        let (Some(w), true) = (stored.get(2..4), stored.len() % 2 == 0 && header & 0x8000 == 0) else {
            debug_assert!(false, "malformed stored numeric {stored:02x?}");
            return Numeric::nan();
        };
        let digits = stored[4..].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        Numeric {
            kind: Kind::Finite,
            neg: header & SIGN_NEG != 0,
            weight: i32::from(i16::from_le_bytes([w[0], w[1]])),
            dscale: i32::from(header & DSCALE_MAX as u16),
            digits,
        }
    }

    /// Appends an order-preserving key for a stored value: `memcmp` order of the keys is
    /// PostgreSQL's btree order (`-Infinity` < negatives < 0 < positives < `Infinity` <
    /// `NaN`; equal values of different scales have equal keys), and each key is
    /// self-delimiting. A class byte (0 -Infinity, 1 negative, 2 zero, 3 positive, 4
    /// Infinity, 5 NaN); for non-zero finite values then the weight (big-endian, sign bit
    /// flipped), each digit plus one as big-endian `u16`, and a `0x0000` terminator, all
    /// bits inverted for negative values.
    pub fn sort_key(stored: &[u8], out: &mut Vec<u8>) {
        let header = stored.get(..2).map_or(SIGN_NAN, |b| u16::from_le_bytes([b[0], b[1]]));
        let digits = stored.get(4..).unwrap_or_default();
        let class = match header {
            SIGN_NINF => 0,
            SIGN_PINF => 4,
            SIGN_NAN => 5,
            _ if digits.is_empty() => 2,
            h if h & SIGN_NEG != 0 => 1,
            _ => 3,
        };
        out.push(class);
        if class != 1 && class != 3 {
            return;
        }
        let flip: u8 = if class == 1 { 0xFF } else { 0 };
        out.reserve(4 + digits.len());
        out.push(stored[3] ^ 0x80 ^ flip);
        out.push(stored[2] ^ flip);
        for c in digits.chunks_exact(2) {
            let d = u16::from_le_bytes([c[0], c[1]]) + 1;
            out.extend(d.to_be_bytes().map(|b| b ^ flip));
        }
        out.extend([flip, flip]);
    }
}

// ---------------------------------------------------------------------------------------
// Comparison and hashing

impl Numeric {
    /// Compares two finite values.
    fn cmp_finite(&self, other: &Numeric) -> Ordering {
        let (a, b) = (self.sign_i(), other.sign_i());
        if a != b {
            return a.cmp(&b);
        }
        let abs = cmp_abs(self, other);
        if a < 0 {
            abs.reverse()
        } else {
            abs
        }
    }

    /// Position in the btree order of the value classes.
    fn class_rank(&self) -> u8 {
        match self.kind {
            Kind::NegInf => 0,
            Kind::Finite => 1,
            Kind::PosInf => 2,
            Kind::NaN => 3,
        }
    }
}

/// Compares magnitudes of two normalized finite values.
fn cmp_abs(a: &Numeric, b: &Numeric) -> Ordering {
    match (a.digits.is_empty(), b.digits.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        // Normalized: the first digits are non-zero and there are no trailing zeros, so a
        // prefix is the smaller value.
        (false, false) => a.weight.cmp(&b.weight).then_with(|| a.digits.cmp(&b.digits)),
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Numeric) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Numeric) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Numeric {
    fn cmp(&self, other: &Numeric) -> Ordering {
        match (self.kind, other.kind) {
            (Kind::Finite, Kind::Finite) => self.cmp_finite(other),
            _ => self.class_rank().cmp(&other.class_rank()),
        }
    }
}

impl Hash for Numeric {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind.hash(state);
        if self.kind == Kind::Finite {
            // The normalized value, not the display scale.
            self.neg.hash(state);
            self.weight.hash(state);
            self.digits.hash(state);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Addition, subtraction, multiplication

/// The digit of `x` at power `e` of 10000.
#[inline]
fn digit_at(x: &Numeric, e: i32) -> u32 {
    let i = x.weight - e;
    if i >= 0 && (i as usize) < x.digits.len() {
        u32::from(x.digits[i as usize])
    } else {
        0
    }
}

/// The power of 10000 of the last digit.
fn low_power(x: &Numeric) -> i32 {
    x.weight - x.digits.len() as i32 + 1
}

/// |a| + |b| (both non-zero), as (weight, digits).
fn add_abs(a: &Numeric, b: &Numeric) -> (i32, Vec<u16>) {
    let hi = a.weight.max(b.weight) + 1;
    let lo = low_power(a).min(low_power(b));
    let n = (hi - lo + 1) as usize;
    let mut out = vec![0u16; n];
    let mut carry = 0u32;
    for (k, e) in (lo..=hi).enumerate() {
        let s = digit_at(a, e) + digit_at(b, e) + carry;
        carry = u32::from(s >= NBASE);
        out[n - 1 - k] = (s - carry * NBASE) as u16;
    }
    (hi, out)
}

/// |a| − |b| for |a| > |b| > 0, as (weight, digits).
fn sub_abs(a: &Numeric, b: &Numeric) -> (i32, Vec<u16>) {
    let hi = a.weight;
    let lo = low_power(a).min(low_power(b));
    let n = (hi - lo + 1) as usize;
    let mut out = vec![0u16; n];
    let mut borrow = 0i32;
    for (k, e) in (lo..=hi).enumerate() {
        let mut s = digit_at(a, e) as i32 - digit_at(b, e) as i32 - borrow;
        borrow = i32::from(s < 0);
        s += borrow * NBASE as i32;
        out[n - 1 - k] = s as u16;
    }
    (hi, out)
}

/// `add_var` of two finite values, `b` negated if `negate_b`: exact, dscale max(d1, d2).
fn add_finite(a: &Numeric, b: &Numeric, negate_b: bool) -> Numeric {
    let dscale = a.dscale.max(b.dscale);
    let b_neg = b.neg != negate_b && !b.digits.is_empty();
    if b.digits.is_empty() {
        return Numeric { dscale, ..a.clone() };
    }
    if a.digits.is_empty() {
        return Numeric { neg: b_neg, dscale, ..b.clone() };
    }
    let (neg, (weight, digits)) = if a.neg == b_neg {
        (a.neg, add_abs(a, b))
    } else {
        match cmp_abs(a, b) {
            Ordering::Equal => return Numeric::zero_scaled(dscale),
            Ordering::Greater => (a.neg, sub_abs(a, b)),
            Ordering::Less => (b_neg, sub_abs(b, a)),
        }
    };
    Numeric::from_parts(neg, weight, dscale, digits)
}

/// `mul_var`: the product rounded to `rscale` places. Like PostgreSQL, when the exact
/// product has more places than `rscale` needs, partial products that only reach beyond
/// `MUL_GUARD_DIGITS` extra base-10000 digits are left out before rounding (so `power`,
/// `ln` and `exp` give PostgreSQL's digits).
fn mul_var(a: &Numeric, b: &Numeric, rscale: i32) -> Numeric {
    if a.digits.is_empty() || b.digits.is_empty() {
        return Numeric::zero_scaled(rscale);
    }
    let (n1, n2) = (a.digits.len(), b.digits.len());
    // Position p of the accumulator has power res_weight − p; digit i1 of a times digit
    // i2 of b lands in position i1 + i2 + 2.
    let res_weight = a.weight + b.weight + 2;
    let maxdigits =
        i64::from(res_weight) + 1 + (i64::from(rscale) + i64::from(DEC_DIGITS) - 1) / i64::from(DEC_DIGITS) + i64::from(MUL_GUARD_DIGITS);
    let res_ndigits = ((n1 + n2 + 1) as i64).min(maxdigits);
    if res_ndigits < 3 {
        return Numeric::zero_scaled(rscale);
    }
    let res_ndigits = res_ndigits as usize;
    // Row by row into u64 accumulators (small products stay on the stack). An entry sums at
    // most min(n1, n2) products below 10^8, far from overflowing; the wrapping operations
    // never wrap but keep the inner loop free of overflow checks, so it vectorizes.
    let mut stack = [0u64; 64];
    let mut heap = Vec::new();
    let acc: &mut [u64] = if res_ndigits <= stack.len() {
        &mut stack[..res_ndigits]
    } else {
        heap.resize(res_ndigits, 0);
        &mut heap
    };
    let (short, long) = if n1 <= n2 { (&a.digits, &b.digits) } else { (&b.digits, &a.digits) };
    for (i1, &d1) in short.iter().enumerate().take(res_ndigits - 2) {
        if d1 == 0 {
            continue;
        }
        let d1 = u64::from(d1);
        let limit = long.len().min(res_ndigits - i1 - 2);
        for (slot, &d2) in acc[i1 + 2..i1 + 2 + limit].iter_mut().zip(&long[..limit]) {
            *slot = slot.wrapping_add(d1.wrapping_mul(u64::from(d2)));
        }
    }
    let mut out = vec![0u16; res_ndigits];
    let mut carry = 0u64;
    for (o, &v) in out.iter_mut().zip(acc.iter()).rev() {
        let t = v + carry;
        carry = t / u64::from(NBASE);
        *o = (t - carry * u64::from(NBASE)) as u16;
    }
    debug_assert_eq!(carry, 0, "product overflowed its digits");
    let mut r = Numeric { kind: Kind::Finite, neg: a.neg != b.neg, weight: res_weight, dscale: rscale, digits: out };
    r.round_var(rscale);
    r
}

// ---------------------------------------------------------------------------------------
// Natural numbers (little-endian base-10000 digits in u32), for division and square roots

type Nat = Vec<u32>;

fn nat_trim(n: &mut Nat) {
    while n.last() == Some(&0) {
        n.pop();
    }
}

/// The digits of |x| as an integer.
fn nat_coef(x: &Numeric) -> Nat {
    x.digits.iter().rev().map(|&d| u32::from(d)).collect()
}

fn nat_mul_small(n: &mut Nat, m: u32) {
    let mut carry = 0u64;
    for d in n.iter_mut() {
        let p = u64::from(*d) * u64::from(m) + carry;
        *d = (p % u64::from(NBASE)) as u32;
        carry = p / u64::from(NBASE);
    }
    while carry > 0 {
        n.push((carry % u64::from(NBASE)) as u32);
        carry /= u64::from(NBASE);
    }
}

fn nat_add_small(n: &mut Nat, mut a: u32) {
    for d in n.iter_mut() {
        if a == 0 {
            return;
        }
        let s = *d + a;
        *d = s % NBASE;
        a = s / NBASE;
    }
    if a > 0 {
        n.push(a);
    }
}

/// Divides in place, returning the remainder.
fn nat_div_small(n: &mut Nat, d: u32) -> u32 {
    let mut rem = 0u64;
    for x in n.iter_mut().rev() {
        let cur = rem * u64::from(NBASE) + u64::from(*x);
        *x = (cur / u64::from(d)) as u32;
        rem = cur % u64::from(d);
    }
    nat_trim(n);
    rem as u32
}

fn nat_add(a: &[u32], b: &[u32]) -> Nat {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = 0;
    for (i, &x) in long.iter().enumerate() {
        let s = x + short.get(i).copied().unwrap_or(0) + carry;
        carry = u32::from(s >= NBASE);
        out.push(s - carry * NBASE);
    }
    if carry > 0 {
        out.push(carry);
    }
    out
}

fn nat_cmp(a: &[u32], b: &[u32]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

/// floor(|x| × 10^dec_exp) as a natural number.
fn nat_scaled(x: &Numeric, dec_exp: i64) -> Nat {
    let e = x.exp10() + dec_exp;
    let mut c = nat_coef(x);
    if e >= 0 {
        nat_mul_small(&mut c, 10u32.pow((e % 4) as u32));
        let shift = (e / 4) as usize;
        if shift > 0 && !c.is_empty() {
            c.splice(0..0, std::iter::repeat_n(0, shift));
        }
    } else {
        let m = -e;
        let drop = (m / 4) as usize;
        if drop >= c.len() {
            return Nat::new();
        }
        c.drain(..drop);
        nat_div_small(&mut c, 10u32.pow((m % 4) as u32));
    }
    nat_trim(&mut c);
    c
}

/// The value `n × 10^(−scale)`, normalized, with dscale `scale`.
fn nat_to_numeric(mut n: Nat, scale: i64, neg: bool) -> Numeric {
    let mut aligned = scale;
    let r = scale.rem_euclid(4);
    if r != 0 {
        nat_mul_small(&mut n, 10u32.pow((4 - r) as u32));
        aligned += 4 - r;
    }
    let weight = n.len() as i64 - 1 - aligned / 4;
    let digits = n.iter().rev().map(|&d| d as u16).collect();
    Numeric::from_parts(neg, weight as i32, scale as i32, digits)
}

/// Quotient and remainder (Knuth's algorithm D); `v` must be non-zero.
fn nat_divmod(u: &[u32], v: &[u32]) -> (Nat, Nat) {
    let b = u64::from(NBASE);
    let mut v = v.to_vec();
    nat_trim(&mut v);
    let mut u = u.to_vec();
    nat_trim(&mut u);
    debug_assert!(!v.is_empty(), "division by a zero natural");
    if nat_cmp(&u, &v) == Ordering::Less {
        return (Nat::new(), u);
    }
    if v.len() == 1 {
        let r = nat_div_small(&mut u, v[0]);
        let mut r = vec![r];
        nat_trim(&mut r);
        return (u, r);
    }
    let n = v.len();
    let m = u.len() - n;
    // Normalize so that the divisor's top digit is at least NBASE / 2.
    let d = NBASE / (v[n - 1] + 1);
    nat_mul_small(&mut v, d);
    nat_mul_small(&mut u, d);
    u.resize(m + n + 1, 0);
    let (vtop, vnext) = (u64::from(v[n - 1]), u64::from(v[n - 2]));
    let mut q = vec![0u32; m + 1];
    for j in (0..=m).rev() {
        let num = u64::from(u[j + n]) * b + u64::from(u[j + n - 1]);
        let mut qhat = num / vtop;
        let mut rhat = num % vtop;
        while qhat >= b || qhat * vnext > rhat * b + u64::from(u[j + n - 2]) {
            qhat -= 1;
            rhat += vtop;
            if rhat >= b {
                break;
            }
        }
        // u[j..=j+n] −= qhat × v
        let mut carry = 0u64;
        let mut borrow = 0i64;
        for i in 0..n {
            let p = qhat * u64::from(v[i]) + carry;
            carry = p / b;
            let mut t = i64::from(u[i + j]) - (p % b) as i64 - borrow;
            borrow = i64::from(t < 0);
            t += borrow * b as i64;
            u[i + j] = t as u32;
        }
        let top = i64::from(u[j + n]) - carry as i64 - borrow;
        if top < 0 {
            // qhat was one too large: add the divisor back.
            qhat -= 1;
            let mut c = 0u32;
            for i in 0..n {
                let s = u[i + j] + v[i] + c;
                c = u32::from(s >= NBASE);
                u[i + j] = s - c * NBASE;
            }
            u[j + n] = (top + i64::from(c)) as u32;
        } else {
            u[j + n] = top as u32;
        }
        q[j] = qhat as u32;
    }
    nat_trim(&mut q);
    u.truncate(n);
    nat_div_small(&mut u, d);
    (q, u)
}

/// floor(sqrt(n)): recursively from the square root of the top half of the digits, which
/// gives an upper bound close enough that Newton's iteration needs only a few full-size
/// divisions.
fn nat_isqrt(n: &[u32]) -> Nat {
    let len = n.len();
    if len <= 4 {
        let v = n.iter().rev().fold(0u128, |acc, &d| acc * u128::from(NBASE) + u128::from(d));
        let mut r = (v as f64).sqrt() as u128;
        while r * r > v {
            r -= 1;
        }
        while (r + 1) * (r + 1) <= v {
            r += 1;
        }
        let mut out = Nat::new();
        while r > 0 {
            out.push((r % u128::from(NBASE)) as u32);
            r /= u128::from(NBASE);
        }
        return out;
    }
    // sqrt(n) lies in [s, s + 1) × NBASE^k for s = isqrt(n / NBASE^2k).
    let k = len / 4;
    let mut x = nat_isqrt(&n[2 * k..]);
    nat_add_small(&mut x, 1);
    x.splice(0..0, std::iter::repeat_n(0, k));
    // Newton's iteration from above decreases monotonically to the root.
    loop {
        let (q, _) = nat_divmod(n, &x);
        let mut y = nat_add(&x, &q);
        nat_div_small(&mut y, 2);
        if nat_cmp(&y, &x) != Ordering::Less {
            return x;
        }
        x = y;
    }
}

// ---------------------------------------------------------------------------------------
// Division

/// floor(|a| / |b| × 10^scale); `b` non-zero.
fn div_nat(a: &Numeric, b: &Numeric, scale: i64) -> Nat {
    // |a| / |b| × 10^scale = (|a| × 10^(scale − eb)) / B with B = |b| × 10^(−eb) an
    // integer; flooring the numerator first does not change the floor of the quotient.
    let eb = b.exp10();
    let num = nat_scaled(a, scale - eb);
    nat_divmod(&num, &nat_coef(b)).0
}

/// `div_var_int`: a / (d × 10000^dweight) for 0 < d < 10^12 by short division, computing
/// the quotient one base-10000 digit past `rscale` when rounding (so the rounding is
/// correct), then rounding half away from zero or truncating; `neg` is the result's sign.
fn div_var_int(a: &Numeric, d: u64, dweight: i32, neg: bool, rscale: i32, round: bool) -> Numeric {
    if a.digits.is_empty() {
        return Numeric::zero_scaled(rscale);
    }
    let res_weight = a.weight - dweight;
    let mut res_ndigits = (i64::from(res_weight) + 1 + (i64::from(rscale) + i64::from(DEC_DIGITS) - 1) / i64::from(DEC_DIGITS)).max(1);
    if round {
        res_ndigits += 1;
    }
    let mut out = Vec::with_capacity(res_ndigits as usize);
    let mut carry = 0u64;
    for i in 0..res_ndigits as usize {
        let cur = carry * u64::from(NBASE) + a.digits.get(i).map_or(0, |&x| u64::from(x));
        out.push((cur / d) as u16);
        carry = cur % d;
    }
    let mut r = Numeric { kind: Kind::Finite, neg, weight: res_weight, dscale: rscale, digits: out };
    if round {
        r.round_var(rscale);
    } else {
        r.trunc_var(rscale);
    }
    r
}

/// `div_var`: a / b rounded half away from zero (`round`) or truncated to `rscale` places;
/// the rounding is correct (the quotient is computed exactly past `rscale` first).
fn div_var(a: &Numeric, b: &Numeric, rscale: i32, round: bool) -> Result<Numeric> {
    let neg = a.neg != b.neg;
    match b.digits[..] {
        [] => Err(division_by_zero()),
        [d] => Ok(div_var_int(a, u64::from(d), b.weight, neg, rscale, round)),
        [d0, d1] => Ok(div_var_int(a, u64::from(d0) * u64::from(NBASE) + u64::from(d1), b.weight - 1, neg, rscale, round)),
        _ => {
            let extra = i64::from(round);
            let mut q = div_nat(a, b, i64::from(rscale) + extra);
            if round {
                nat_add_small(&mut q, 5);
                nat_div_small(&mut q, 10);
            }
            Ok(nat_to_numeric(q, i64::from(rscale), neg))
        }
    }
}

/// `div_var(..., round = true)`.
fn div_round(a: &Numeric, b: &Numeric, rscale: i32) -> Result<Numeric> {
    div_var(a, b, rscale, true)
}

/// `div_var(..., round = false)`.
fn div_trunc_var(a: &Numeric, b: &Numeric, rscale: i32) -> Result<Numeric> {
    div_var(a, b, rscale, false)
}

/// `div_var_int` by a small positive integer, rounded.
fn div_int(a: &Numeric, d: i64, rscale: i32) -> Result<Numeric> {
    debug_assert!(d > 0 && d < 1_000_000_000_000);
    Ok(div_var_int(a, d as u64, 0, a.neg, rscale, true))
}

/// `select_div_scale`: enough places for 16 significant digits, at least either input's
/// dscale, within 0..=1000.
fn select_div_scale(a: &Numeric, b: &Numeric) -> i32 {
    let (w1, f1) = a.digits.first().map_or((0, 0), |&d| (a.weight, d));
    let (w2, f2) = b.digits.first().map_or((0, 0), |&d| (b.weight, d));
    // The quotient's weight, assuming a < b when the first digits are equal.
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    let rscale = MIN_SIG_DIGITS - qweight * DEC_DIGITS;
    rscale.max(a.dscale).max(b.dscale).clamp(MIN_DISPLAY_SCALE, MAX_DISPLAY_SCALE)
}

// ---------------------------------------------------------------------------------------
// Arithmetic operators

impl Numeric {
    /// `numeric_add`: exact, dscale max(d1, d2). NaN in gives NaN; `Infinity + -Infinity`
    /// is NaN; otherwise an infinity wins.
    pub fn add(&self, other: &Numeric) -> Result<Numeric> {
        self.add_sub(other, false)
    }

    /// `numeric_sub`: exact, dscale max(d1, d2); `Infinity - Infinity` is NaN.
    pub fn sub(&self, other: &Numeric) -> Result<Numeric> {
        self.add_sub(other, true)
    }

    fn add_sub(&self, other: &Numeric, subtract: bool) -> Result<Numeric> {
        use Kind::*;
        let flip = |k: Kind| match (k, subtract) {
            (PosInf, true) => NegInf,
            (NegInf, true) => PosInf,
            (k, _) => k,
        };
        match (self.kind, flip(other.kind)) {
            (Finite, Finite) => add_finite(self, other, subtract).finish(),
            (NaN, _) | (_, NaN) => Ok(Numeric::nan()),
            (PosInf, NegInf) | (NegInf, PosInf) => Ok(Numeric::nan()),
            (PosInf, _) | (_, PosInf) => Ok(Numeric::infinity()),
            (NegInf, _) | (_, NegInf) => Ok(Numeric::neg_infinity()),
        }
    }

    /// `numeric_mul`: exact, dscale d1 + d2 (rounded to 16383 places beyond that).
    /// `Infinity × 0` is NaN.
    pub fn mul(&self, other: &Numeric) -> Result<Numeric> {
        if self.is_nan() || other.is_nan() {
            return Ok(Numeric::nan());
        }
        if !self.is_finite() || !other.is_finite() {
            return Ok(match self.sign_i() * other.sign_i() {
                0 => Numeric::nan(),
                1 => Numeric::infinity(),
                _ => Numeric::neg_infinity(),
            });
        }
        let mut r = mul_var(self, other, self.dscale + other.dscale);
        if r.dscale > DSCALE_MAX {
            r.round_var(DSCALE_MAX);
        }
        r.finish()
    }

    /// `numeric_div`: the quotient correctly rounded to `select_div_scale` places (see the
    /// module documentation); `division by zero` (22012) for a zero divisor, also for an
    /// infinite dividend; `Infinity / Infinity` is NaN, finite / infinity is 0.
    pub fn div(&self, other: &Numeric) -> Result<Numeric> {
        if self.is_nan() || other.is_nan() {
            return Ok(Numeric::nan());
        }
        if self.is_infinite() {
            if other.is_infinite() {
                return Ok(Numeric::nan());
            }
            return match self.sign_i() * other.sign_i() {
                0 => Err(division_by_zero()),
                1 => Ok(Numeric::infinity()),
                _ => Ok(Numeric::neg_infinity()),
            };
        }
        if other.is_infinite() {
            return Ok(Numeric::zero());
        }
        let rscale = select_div_scale(self, other);
        div_round(self, other, rscale)?.finish()
    }

    /// `div(numeric, numeric)` (`numeric_div_trunc`): the quotient truncated to an integer
    /// (dscale 0).
    pub fn div_trunc(&self, other: &Numeric) -> Result<Numeric> {
        if self.is_nan() || other.is_nan() {
            return Ok(Numeric::nan());
        }
        if self.is_infinite() {
            if other.is_infinite() {
                return Ok(Numeric::nan());
            }
            return match self.sign_i() * other.sign_i() {
                0 => Err(division_by_zero()),
                1 => Ok(Numeric::infinity()),
                _ => Ok(Numeric::neg_infinity()),
            };
        }
        if other.is_infinite() {
            return Ok(Numeric::zero());
        }
        div_trunc_var(self, other, 0)?.finish()
    }

    /// `numeric_mod` (`%`): `x − trunc(x / y) × y`, exact, with the sign of x and dscale
    /// max(d1, d2); `division by zero` for y = 0 (also for an infinite x); infinity % y is
    /// NaN; x % infinity is x.
    pub fn rem(&self, other: &Numeric) -> Result<Numeric> {
        if self.is_nan() || other.is_nan() {
            return Ok(Numeric::nan());
        }
        if self.is_infinite() {
            if other.is_zero() {
                return Err(division_by_zero());
            }
            return Ok(Numeric::nan());
        }
        if other.is_infinite() {
            return Ok(self.clone());
        }
        if other.digits.is_empty() {
            return Err(division_by_zero());
        }
        let dscale = self.dscale.max(other.dscale);
        if self.digits.is_empty() {
            return Numeric::zero_scaled(dscale).finish();
        }
        // Both as integers at the smaller exponent: |x| mod |y| there is exact.
        let e = self.exp10().min(other.exp10());
        let x = nat_scaled(self, -e);
        let y = nat_scaled(other, -e);
        let (_, r) = nat_divmod(&x, &y);
        let mut r = nat_to_numeric(r, -e, self.neg);
        r.dscale = dscale;
        r.finish()
    }

    /// `numeric_uminus`: zero and NaN stay as they are.
    pub fn neg(&self) -> Numeric {
        match self.kind {
            Kind::PosInf => Numeric::neg_infinity(),
            Kind::NegInf => Numeric::infinity(),
            Kind::NaN => Numeric::nan(),
            Kind::Finite => Numeric { neg: !self.neg && !self.digits.is_empty(), ..self.clone() },
        }
    }

    /// `numeric_abs`.
    pub fn abs(&self) -> Numeric {
        match self.kind {
            Kind::NegInf => Numeric::infinity(),
            _ => Numeric { neg: false, ..self.clone() },
        }
    }

    /// `numeric_sign`: -1, 0 or 1 (dscale 0); NaN for NaN, ±1 for the infinities.
    pub fn sign(&self) -> Numeric {
        match self.kind {
            Kind::NaN => Numeric::nan(),
            _ => Numeric::from_i64(i64::from(self.sign_i())),
        }
    }

    /// PostgreSQL's `avg()` result from the sum of the inputs and their count: `sum /
    /// count` with [`Numeric::div`]'s scale rule (`numeric_avg`, `int8_avg` and
    /// `numeric_poly_avg` all end in `numeric_div`). A count of 0 (PostgreSQL returns NULL
    /// for an empty group; that is the caller's part) gives `division by zero`.
    pub fn avg(sum: &Numeric, count: i64) -> Result<Numeric> {
        if count == 0 && !sum.is_nan() {
            return Err(division_by_zero());
        }
        sum.div(&Numeric::from_i64(count))
    }

    /// PostgreSQL's `numeric_stddev_internal`: the variance (or standard deviation) of `n`
    /// finite inputs whose sum is `sum_x` and sum of squares `sum_x2` (both exact), and
    /// `special` NaN or infinite ones. None (SQL NULL) for no inputs, or one for the sample's
    /// statistics; NaN when a NaN or an infinity was among them. Otherwise `N·Σx² − (Σx)²`
    /// (0 when not positive) over `N·(N−1)` (sample) or `N²`, divided at `select_div_scale`
    /// places, and its square root at the same scale.
    pub fn stddev_internal(
        n: i64,
        special: i64,
        sum_x: &Numeric,
        sum_x2: &Numeric,
        variance: bool,
        sample: bool,
    ) -> Result<Option<Numeric>> {
        let total = n + special;
        if total <= i64::from(sample) {
            return Ok(None);
        }
        if special > 0 {
            return Ok(Some(Numeric::nan()));
        }
        let vn = Numeric::from_i64(n);
        let rscale = sum_x.dscale * 2;
        let sq = mul_var(sum_x, sum_x, rscale);
        let nx2 = mul_var(&vn, sum_x2, rscale);
        let num = nx2.sub(&sq)?;
        if num.digits.is_empty() || num.neg {
            // Roundoff cannot make it negative here (the sums are exact), but PostgreSQL
            // answers 0 for a zero numerator, without places.
            return Ok(Some(Numeric::zero()));
        }
        let den = if sample { mul_var(&vn, &Numeric::from_i64(n - 1), 0) } else { mul_var(&vn, &vn, 0) };
        let rscale = select_div_scale(&num, &den);
        let var = div_var(&num, &den, rscale, true)?;
        let r = if variance { var } else { sqrt_var(&var, rscale) };
        r.finish().map(Some)
    }
}

// ---------------------------------------------------------------------------------------
// Conversions

impl Numeric {
    /// `numeric_int8`: rounded half away from zero; `bigint out of range` (22003), `cannot
    /// convert NaN to bigint` / `cannot convert infinity to bigint` (0A000).
    pub fn to_i64(&self) -> Result<i64> {
        self.to_int(i128::from(i64::MIN), i128::from(i64::MAX), "bigint").map(|v| v as i64)
    }

    /// `numeric_int4`: as [`Numeric::to_i64`], `integer out of range`.
    pub fn to_i32(&self) -> Result<i32> {
        self.to_int(i128::from(i32::MIN), i128::from(i32::MAX), "integer").map(|v| v as i32)
    }

    /// `numeric_int2`: as [`Numeric::to_i64`], `smallint out of range`.
    pub fn to_i16(&self) -> Result<i16> {
        self.to_int(i128::from(i16::MIN), i128::from(i16::MAX), "smallint").map(|v| v as i16)
    }

    fn to_int(&self, min: i128, max: i128, name: &str) -> Result<i128> {
        match self.kind {
            Kind::NaN => return Err(PgError::feature(format!("cannot convert NaN to {name}"))),
            Kind::PosInf | Kind::NegInf => return Err(PgError::feature(format!("cannot convert infinity to {name}"))),
            Kind::Finite => {}
        }
        let out_of_range = || PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("{name} out of range"));
        // Anything of weight 5 or more is at least 10^20.
        if self.weight > 5 {
            return Err(out_of_range());
        }
        let mut mag: i128 = 0;
        for i in 0..=self.weight {
            mag = mag * i128::from(NBASE) + i128::from(digit_at(self, self.weight - i));
        }
        // Round half away from zero on the first decimal after the point.
        if digit_at(self, -1) >= u32::from(HALF_NBASE) {
            mag += 1;
        }
        let v = if self.neg { -mag } else { mag };
        if v < min || v > max {
            return Err(out_of_range());
        }
        Ok(v)
    }

    /// `numeric_float8`: the text form read by `float8in`, so overflow and underflow fail
    /// as in PostgreSQL (`"1e400" is out of range for type double precision`).
    pub fn to_f64(&self) -> Result<f64> {
        match self.kind {
            Kind::NaN => Ok(f64::NAN),
            Kind::PosInf => Ok(f64::INFINITY),
            Kind::NegInf => Ok(f64::NEG_INFINITY),
            Kind::Finite => super::float::parse_float8(&self.to_text()),
        }
    }

    /// `float8_numeric`: the value printed with 15 significant digits (`%.15g`, DBL_DIG)
    /// and read back, so 0.1 is `0.1`; NaN and the infinities map to their numeric
    /// counterparts.
    pub fn from_f64(v: f64) -> Result<Numeric> {
        Numeric::from_float(v, 15)
    }

    /// `float4_numeric`: as [`Numeric::from_f64`] with 6 significant digits (FLT_DIG).
    pub fn from_f32(v: f32) -> Result<Numeric> {
        Numeric::from_float(f64::from(v), 6)
    }

    fn from_float(v: f64, sig_digits: usize) -> Result<Numeric> {
        if v.is_nan() {
            return Ok(Numeric::nan());
        }
        if v.is_infinite() {
            return Ok(if v > 0.0 { Numeric::infinity() } else { Numeric::neg_infinity() });
        }
        // Rust's `{:.Ne}` is correctly rounded with ties to even, as glibc's printf; %g drops
        // trailing zeros of the mantissa, which decides the dscale.
        let s = format!("{:.*e}", sig_digits - 1, v);
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = if mantissa.contains('.') { mantissa.trim_end_matches('0').trim_end_matches('.') } else { mantissa };
        let text = format!("{mantissa}e{exponent}");
        let (n, _) = parse_finite(&text, 0)?;
        n.finish()
    }

    /// `numericvar_to_double_no_overflow`: overflow gives ±inf.
    fn to_f64_lossy(&self) -> f64 {
        self.to_text().parse().unwrap_or(f64::NAN)
    }
}

// ---------------------------------------------------------------------------------------
// Square root, power, logarithm, exponential

/// `sqrt_var`: the square root of x >= 0 correctly rounded to `rscale` places (negative:
/// before the point).
fn sqrt_var(x: &Numeric, rscale: i32) -> Numeric {
    if x.digits.is_empty() {
        return Numeric::zero_scaled(rscale);
    }
    // floor(sqrt(x) × 10^(rscale + 1)) = isqrt(floor(x × 10^(2 rscale + 2))), then round
    // the extra digit.
    let k = i64::from(rscale) + 1;
    let n = nat_scaled(x, 2 * k);
    let mut t = nat_isqrt(&n);
    nat_add_small(&mut t, 5);
    nat_div_small(&mut t, 10);
    nat_to_numeric(t, i64::from(rscale), false)
}

/// `estimate_ln_dweight`: the decimal weight of ln(x) for x > 0.
fn estimate_ln_dweight(x: &Numeric) -> i32 {
    if x.neg || x.digits.is_empty() {
        return 0;
    }
    let point_nine = Numeric::from_parts(false, -1, 1, vec![9000]);
    let one_point_one = Numeric::from_parts(false, 0, 1, vec![1, 1000]);
    if x.cmp_finite(&point_nine) != Ordering::Less && x.cmp_finite(&one_point_one) != Ordering::Greater {
        // ln(1 + t) ≈ t near 1.
        let t = add_finite(x, &Numeric::one(), true);
        match t.digits.first() {
            Some(&d) => t.weight * DEC_DIGITS + f64::from(d).log10() as i32,
            None => 0,
        }
    } else {
        let mut digits = f64::from(x.digits[0]);
        let mut dweight = x.weight * DEC_DIGITS;
        if let Some(&d) = x.digits.get(1) {
            digits = digits * f64::from(NBASE) + f64::from(d);
            dweight -= DEC_DIGITS;
        }
        let ln = digits.ln() + f64::from(dweight) * LN_10;
        ln.abs().log10() as i32
    }
}

/// `ln_var`: ln(x) rounded to `rscale` places.
fn ln_var(arg: &Numeric, rscale: i32) -> Result<Numeric> {
    match arg.sign_i() {
        0 => return Err(log_error("cannot take logarithm of zero")),
        -1 => return Err(log_error("cannot take logarithm of a negative number")),
        _ => {}
    }
    let point_nine = Numeric::from_parts(false, -1, 1, vec![9000]);
    let one_point_one = Numeric::from_parts(false, 0, 1, vec![1, 1000]);
    let two = Numeric::from_i64(2);
    let mut x = arg.clone();
    let mut fact = two.clone();
    let mut nsqrt = 0;
    // Bring x into (0.9, 1.1) by square roots, keeping enough digits at each step.
    while x.cmp_finite(&point_nine) != Ordering::Greater {
        x = sqrt_var(&x, rscale - x.weight * DEC_DIGITS / 2 + 8);
        fact = mul_var(&fact, &two, 0);
        nsqrt += 1;
    }
    while x.cmp_finite(&one_point_one) != Ordering::Less {
        x = sqrt_var(&x, rscale - x.weight * DEC_DIGITS / 2 + 8);
        fact = mul_var(&fact, &two, 0);
        nsqrt += 1;
    }
    // ln(x) = 2 atanh(z) = 2 (z + z^3/3 + z^5/5 + ...) with z = (x − 1) / (x + 1).
    let local_rscale = rscale + (f64::from(nsqrt + 1) * LOG10_2) as i32 + 8;
    let one = Numeric::one();
    let mut result = div_round(&add_finite(&x, &one, true), &add_finite(&x, &one, false), local_rscale)?;
    let mut xx = result.clone();
    let z2 = mul_var(&result, &result, local_rscale);
    let mut ni = 1;
    loop {
        ni += 2;
        xx = mul_var(&xx, &z2, local_rscale);
        let elem = div_int(&xx, ni, local_rscale)?;
        if elem.digits.is_empty() {
            break;
        }
        result = add_finite(&result, &elem, false);
        if elem.weight < result.weight - local_rscale * 2 / DEC_DIGITS {
            break;
        }
    }
    Ok(mul_var(&result, &fact, rscale))
}

/// `exp_var`: e^x rounded to `rscale` places.
fn exp_var(arg: &Numeric, rscale: i32) -> Result<Numeric> {
    let mut x = arg.clone();
    let mut val = x.to_f64_lossy();
    if val.abs() >= f64::from(MAX_RESULT_SCALE) * 3.0 {
        if val > 0.0 {
            return Err(overflow());
        }
        return Ok(Numeric::zero_scaled(rscale));
    }
    let dweight = (val * LOG10_E) as i32;
    // Reduce |x| to about 0.01 by halving, for a fast-converging Taylor series.
    let mut ndiv2 = 0;
    if val.abs() > 0.01 {
        while val.abs() > 0.01 {
            ndiv2 += 1;
            val /= 2.0;
        }
        let local_rscale = x.dscale + ndiv2;
        x = div_int(&x, 1i64 << ndiv2, local_rscale)?;
    }
    let sig_digits = (1 + dweight + rscale + (f64::from(ndiv2) * LOG10_2) as i32).max(0) + 8;
    let local_rscale = sig_digits - 1;
    let mut result = add_finite(&Numeric::one(), &x, false);
    let mut elem = mul_var(&x, &x, local_rscale);
    let mut ni = 2;
    elem = div_int(&elem, ni, local_rscale)?;
    while !elem.digits.is_empty() {
        result = add_finite(&result, &elem, false);
        elem = mul_var(&elem, &x, local_rscale);
        ni += 1;
        elem = div_int(&elem, ni, local_rscale)?;
    }
    // Undo the halvings by squaring; the weight doubles each time, so fewer places do.
    for _ in 0..ndiv2 {
        let lr = (sig_digits - result.weight * 2 * DEC_DIGITS).max(MIN_DISPLAY_SCALE);
        result = mul_var(&result, &result, lr);
    }
    result.round_var(rscale);
    Ok(result)
}

/// `power_var_int`: base^exp rounded to `rscale` places, by repeated squaring with
/// products truncated to the digits that matter.
fn power_var_int(base: &Numeric, exp: i32, rscale: i32) -> Result<Numeric> {
    match exp {
        0 => return Ok(Numeric { dscale: rscale, ..Numeric::one() }),
        1 => {
            let mut r = base.clone();
            r.round_var(rscale);
            return Ok(r);
        }
        -1 => return div_round(&Numeric::one(), base, rscale),
        2 => return Ok(mul_var(base, base, rscale)),
        _ => {}
    }
    if base.digits.is_empty() {
        if exp < 0 {
            return Err(division_by_zero());
        }
        return Ok(Numeric::zero_scaled(rscale));
    }
    // base ≈ f × 10^p, so log10(result) ≈ exp × (log10(f) + p).
    let mut f = f64::from(base.digits[0]);
    let mut p = base.weight * DEC_DIGITS;
    for &d in base.digits.iter().skip(1).take(3) {
        f = f * f64::from(NBASE) + f64::from(d);
        p -= DEC_DIGITS;
    }
    let f = f64::from(exp) * (f.log10() + f64::from(p));
    if f > 3.0 * f64::from(i16::MAX) * f64::from(DEC_DIGITS) {
        return Err(overflow());
    }
    if f + 1.0 < f64::from(-rscale) || f + 1.0 < f64::from(-MAX_DISPLAY_SCALE) {
        return Ok(Numeric::zero_scaled(rscale));
    }
    let mut sig_digits = 1 + rscale + f as i32;
    sig_digits += f64::from(exp).abs().ln() as i32 + 8;
    let mut neg = exp < 0;
    let mut mask = exp.unsigned_abs();
    let mut base_prod = base.clone();
    let mut result = if mask & 1 != 0 { base.clone() } else { Numeric::one() };
    loop {
        mask >>= 1;
        if mask == 0 {
            break;
        }
        let lr = (sig_digits - 2 * base_prod.weight * DEC_DIGITS).min(2 * base_prod.dscale).max(MIN_DISPLAY_SCALE);
        base_prod = mul_var(&base_prod, &base_prod, lr);
        if mask & 1 != 0 {
            let lr =
                (sig_digits - (base_prod.weight + result.weight) * DEC_DIGITS).min(base_prod.dscale + result.dscale).max(MIN_DISPLAY_SCALE);
            result = mul_var(&base_prod, &result, lr);
        }
        // Past the stored format's weight the result certainly overflows (or underflows).
        if base_prod.weight > i32::from(i16::MAX) || result.weight > i32::from(i16::MAX) {
            if !neg {
                return Err(overflow());
            }
            result = Numeric::zero();
            neg = false;
            break;
        }
    }
    if neg {
        div_round(&Numeric::one(), &result, rscale)
    } else {
        result.round_var(rscale);
        Ok(result)
    }
}

/// `power_var` for finite values (0 ^ negative already refused).
fn power_var(base: &Numeric, exp: &Numeric) -> Result<Numeric> {
    if exp.is_integral() {
        if let Ok(e) = i32::try_from(exp.to_int(i128::from(i64::MIN), i128::from(i64::MAX), "bigint").unwrap_or(i128::MAX)) {
            let rscale = MIN_SIG_DIGITS.max(base.dscale).clamp(MIN_DISPLAY_SCALE, MAX_DISPLAY_SCALE);
            return power_var_int(base, e, rscale);
        }
    }
    if base.digits.is_empty() {
        return Ok(Numeric::zero_scaled(MIN_SIG_DIGITS));
    }
    let mut res_neg = false;
    let abs_base = if base.neg {
        if !exp.is_integral() {
            return Err(power_error("a negative number raised to a non-integer power yields a complex result"));
        }
        res_neg = exp.digits.len() as i32 == exp.weight + 1 && exp.digits.last().is_some_and(|d| d & 1 == 1);
        base.abs()
    } else {
        base.clone()
    };
    // A low-precision exp × ln(base) estimates the result's weight, which sets the scale.
    let ln_dweight = estimate_ln_dweight(&abs_base);
    let local_rscale = (8 - ln_dweight).max(MIN_DISPLAY_SCALE);
    let ln_base = ln_var(&abs_base, local_rscale)?;
    let ln_num = mul_var(&ln_base, exp, local_rscale);
    let mut val = ln_num.to_f64_lossy();
    if val.abs() > f64::from(MAX_RESULT_SCALE) * 3.01 {
        if val > 0.0 {
            return Err(overflow());
        }
        return Ok(Numeric::zero_scaled(MAX_DISPLAY_SCALE));
    }
    val *= LOG10_E;
    let rscale = (MIN_SIG_DIGITS - val as i32).max(base.dscale).max(exp.dscale).clamp(MIN_DISPLAY_SCALE, MAX_DISPLAY_SCALE);
    let sig_digits = (rscale + val as i32).max(0);
    let local_rscale = (sig_digits - ln_dweight + 8).max(MIN_DISPLAY_SCALE);
    let ln_base = ln_var(&abs_base, local_rscale)?;
    let ln_num = mul_var(&ln_base, exp, local_rscale);
    let mut result = exp_var(&ln_num, rscale)?;
    if res_neg && !result.digits.is_empty() {
        result.neg = true;
    }
    Ok(result)
}

impl Numeric {
    /// `numeric_sqrt`: at least 16 significant digits and no fewer places than the input,
    /// correctly rounded; `cannot take square root of a negative number` (2201F).
    pub fn sqrt(&self) -> Result<Numeric> {
        match self.kind {
            Kind::NaN | Kind::PosInf => return Ok(self.clone()),
            Kind::NegInf => return Err(power_error("cannot take square root of a negative number")),
            Kind::Finite if self.neg => return Err(power_error("cannot take square root of a negative number")),
            Kind::Finite => {}
        }
        let sweight = (self.weight + 1) * DEC_DIGITS / 2 - 1;
        let rscale = (MIN_SIG_DIGITS - sweight).max(self.dscale).clamp(MIN_DISPLAY_SCALE, MAX_DISPLAY_SCALE);
        sqrt_var(self, rscale).finish()
    }

    /// `numeric_power` (`^`, `power()`): integer exponents (in `i32`) by repeated squaring
    /// with scale max(16, dscale of the base); other exponents as exp(y × ln(x)). Follows
    /// POSIX `pow` for NaN and infinities (`NaN ^ 0 = 1`, `1 ^ NaN = 1`, ...). Errors:
    /// `zero raised to a negative power is undefined`, `a negative number raised to a
    /// non-integer power yields a complex result` (2201F), `value overflows numeric format`.
    pub fn power(&self, exp: &Numeric) -> Result<Numeric> {
        if !self.is_finite() || !exp.is_finite() {
            return power_special(self, exp);
        }
        if self.sign_i() == 0 && exp.sign_i() < 0 {
            return Err(power_error("zero raised to a negative power is undefined"));
        }
        power_var(self, exp)?.finish()
    }

    /// `numeric_ln`: natural logarithm with at least 16 significant digits; `cannot take
    /// logarithm of zero` / `of a negative number` (2201E).
    pub fn ln(&self) -> Result<Numeric> {
        match self.kind {
            Kind::NaN | Kind::PosInf => return Ok(self.clone()),
            Kind::NegInf => return Err(log_error("cannot take logarithm of a negative number")),
            Kind::Finite => {}
        }
        let ln_dweight = estimate_ln_dweight(self);
        let rscale = (MIN_SIG_DIGITS - ln_dweight).max(self.dscale).clamp(MIN_DISPLAY_SCALE, MAX_DISPLAY_SCALE);
        ln_var(self, rscale)?.finish()
    }

    /// `numeric_log`: the logarithm of `num` to base `self`, with at least 16 significant
    /// digits and no fewer places than either input (`log_var`). NaN gives NaN; a negative
    /// or zero input is 2201E; `log(Infinity, x)` is 0 for finite x and NaN for Infinity;
    /// `log(b, Infinity)` is Infinity; base 1 divides by ln(1) = 0 (22012).
    pub fn log(&self, num: &Numeric) -> Result<Numeric> {
        if !self.is_finite() || !num.is_finite() {
            if self.is_nan() || num.is_nan() {
                return Ok(Numeric::nan());
            }
            let (sb, sn) = (self.sign_i(), num.sign_i());
            if sb < 0 || sn < 0 {
                return Err(log_error("cannot take logarithm of a negative number"));
            }
            if sb == 0 || sn == 0 {
                return Err(log_error("cannot take logarithm of zero"));
            }
            if self.kind == Kind::PosInf {
                return Ok(if num.kind == Kind::PosInf { Numeric::nan() } else { Numeric::zero() });
            }
            return Ok(Numeric::infinity());
        }
        for x in [self, num] {
            match x.sign_i() {
                0 => return Err(log_error("cannot take logarithm of zero")),
                -1 => return Err(log_error("cannot take logarithm of a negative number")),
                _ => {}
            }
        }
        let ln_base_dweight = estimate_ln_dweight(self);
        let ln_num_dweight = estimate_ln_dweight(num);
        let result_dweight = ln_num_dweight - ln_base_dweight;
        let rscale = (MIN_SIG_DIGITS - result_dweight).max(self.dscale).max(num.dscale).clamp(MIN_DISPLAY_SCALE, MAX_DISPLAY_SCALE);
        // Each logarithm carries more significant digits than the quotient needs.
        let ln_base_rscale = (rscale + result_dweight - ln_base_dweight + 8).max(MIN_DISPLAY_SCALE);
        let ln_num_rscale = (rscale + result_dweight - ln_num_dweight + 8).max(MIN_DISPLAY_SCALE);
        let ln_base = ln_var(self, ln_base_rscale)?;
        let ln_num = ln_var(num, ln_num_rscale)?;
        div_round(&ln_num, &ln_base, rscale)?.finish()
    }

    /// `numeric_fac` (`factorial(bigint)`): 1 for 0 and 1; `factorial of a negative number
    /// is undefined` and, past 32177!, `value overflows numeric format` (22003).
    pub fn factorial(n: i64) -> Result<Numeric> {
        if n < 0 {
            return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "factorial of a negative number is undefined"));
        }
        if n > 32177 {
            return Err(overflow());
        }
        let mut r = Numeric::one();
        for k in 2..=n {
            r = mul_var(&r, &Numeric::from_i64(k), 0);
        }
        r.finish()
    }

    /// `numeric_exp`: e^x with at least 16 significant digits; `exp(-Infinity)` is 0.
    pub fn exp(&self) -> Result<Numeric> {
        match self.kind {
            Kind::NaN | Kind::PosInf => return Ok(self.clone()),
            Kind::NegInf => return Ok(Numeric::zero()),
            Kind::Finite => {}
        }
        let val = (self.to_f64_lossy() * LOG10_E).clamp(-f64::from(MAX_RESULT_SCALE), f64::from(MAX_RESULT_SCALE));
        let rscale = (MIN_SIG_DIGITS - val as i32).max(self.dscale).clamp(MIN_DISPLAY_SCALE, MAX_DISPLAY_SCALE);
        exp_var(self, rscale)?.finish()
    }
}

/// `numeric_power` when an argument is NaN or infinite (POSIX `pow` rules).
fn power_special(x: &Numeric, y: &Numeric) -> Result<Numeric> {
    let one = Numeric::one();
    if x.is_nan() {
        return Ok(if y.is_zero() { one } else { Numeric::nan() });
    }
    if y.is_nan() {
        return Ok(if x.is_finite() && x.cmp_finite(&one) == Ordering::Equal { one } else { Numeric::nan() });
    }
    let (sx, sy) = (x.sign_i(), y.sign_i());
    if sx == 0 && sy < 0 {
        return Err(power_error("zero raised to a negative power is undefined"));
    }
    // Infinities count as integers here.
    if sx < 0 && y.is_finite() && !y.is_integral() {
        return Err(power_error("a negative number raised to a non-integer power yields a complex result"));
    }
    if x.is_finite() && x.cmp_finite(&one) == Ordering::Equal {
        return Ok(one);
    }
    if sy == 0 {
        return Ok(one);
    }
    if sx == 0 && sy > 0 {
        return Ok(Numeric::zero());
    }
    if y.is_infinite() {
        let abs_x_gt_one = if x.is_finite() {
            if x.cmp_finite(&Numeric::from_i64(-1)) == Ordering::Equal {
                return Ok(one);
            }
            cmp_abs(x, &one) == Ordering::Greater
        } else {
            true
        };
        return Ok(if abs_x_gt_one == (sy > 0) { Numeric::infinity() } else { Numeric::zero() });
    }
    if x.kind == Kind::PosInf {
        return Ok(if sy > 0 { Numeric::infinity() } else { Numeric::zero() });
    }
    // x = -Infinity, y finite and non-zero.
    if sy < 0 {
        return Ok(Numeric::zero());
    }
    let odd = y.digits.len() as i32 == y.weight + 1 && y.digits.last().is_some_and(|d| d & 1 == 1);
    Ok(if odd { Numeric::neg_infinity() } else { Numeric::infinity() })
}

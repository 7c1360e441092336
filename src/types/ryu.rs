//! Shortest decimal digits of a float, a port of PostgreSQL's `src/common/d2s.c` and
//! `f2s.c` (Ryu by Ulf Adams, as modified by PostgreSQL).
//!
//! PostgreSQL builds Ryu with `STRICTLY_SHORTEST 0`: the interval of acceptable decimals
//! excludes its bounds, so the exact midpoint to a neighbouring float is never printed.
//! That, and Ryu's tie-breaking, make the output differ from Rust's own shortest formatting
//! (and from the `ryu` crate) for some values, which is why this module exists.
//!
//! Both functions take a finite, non-zero value and return `(digits, exponent)` meaning
//! `digits * 10^exponent`; `digits` may carry trailing zeros only when `exponent == 0`.

use super::ryu_tables::{DOUBLE_POW5_INV_SPLIT, DOUBLE_POW5_SPLIT, FLOAT_POW5_INV_SPLIT, FLOAT_POW5_SPLIT};

/// `e == 0 ? 1 : ceil(log2(5^e))`.
fn pow5bits(e: u32) -> u32 {
    ((e * 1_217_359) >> 19) + 1
}

/// `floor(log10(2^e))`.
fn log10_pow2(e: u32) -> u32 {
    (e * 78_913) >> 18
}

/// `floor(log10(5^e))`.
fn log10_pow5(e: u32) -> u32 {
    (e * 732_923) >> 20
}

fn pow5_factor(mut v: u64) -> u32 {
    let mut count = 0;
    while v != 0 && v % 5 == 0 {
        v /= 5;
        count += 1;
    }
    count
}

fn multiple_of_pow5(v: u64, p: u32) -> bool {
    pow5_factor(v) >= p
}

fn multiple_of_pow2(v: u64, p: u32) -> bool {
    v & ((1u64 << p) - 1) == 0
}

// ---------------------------------------------------------------------------------------
// double (d2s.c)

const DOUBLE_MANTISSA_BITS: u32 = 52;
const DOUBLE_BIAS: i32 = 1023;
const DOUBLE_POW5_INV_BITCOUNT: i32 = 122;
const DOUBLE_POW5_BITCOUNT: i32 = 121;

/// `(m * mul) >> j` keeping the top 64 bits of the 64x128-bit product.
fn mul_shift64(m: u64, mul: &[u64; 2], j: i32) -> u64 {
    let b0 = u128::from(m) * u128::from(mul[0]);
    let b2 = u128::from(m) * u128::from(mul[1]);
    (((b0 >> 64) + b2) >> (j - 64)) as u64
}

/// Ryu's step 3 result: the value and its exclusive bounds scaled to `10^e10`.
#[derive(Clone, Copy)]
struct Scaled<T> {
    vr: T,
    vp: T,
    vm: T,
    e10: i32,
    /// The digits dropped from `vr` by the scaling are all zero.
    vr_trailing_zeros: bool,
}

/// The shortest digits of a finite non-zero double given its IEEE bits.
pub(crate) fn d2d(bits: u64) -> (u64, i32) {
    let ieee_mantissa = bits & ((1u64 << DOUBLE_MANTISSA_BITS) - 1);
    let ieee_exponent = ((bits >> DOUBLE_MANTISSA_BITS) & 0x7ff) as u32;
    if let Some(small) = d2d_small_int(ieee_mantissa, ieee_exponent) {
        return small;
    }
    // Two extra bits so that the bounds are integers too.
    let (e2, m2) = if ieee_exponent == 0 {
        (1 - DOUBLE_BIAS - DOUBLE_MANTISSA_BITS as i32 - 2, ieee_mantissa)
    } else {
        (ieee_exponent as i32 - DOUBLE_BIAS - DOUBLE_MANTISSA_BITS as i32 - 2, (1u64 << DOUBLE_MANTISSA_BITS) | ieee_mantissa)
    };
    let mm_shift = u64::from(ieee_mantissa != 0 || ieee_exponent <= 1);
    let sc = if e2 >= 0 { d2d_scale_down(m2, e2, mm_shift) } else { d2d_scale_up(m2, e2, mm_shift) };
    let (output, removed) = shorten(sc.vr, sc.vp, sc.vm, sc.vr_trailing_zeros);
    (output, sc.e10 + removed)
}

/// Step 3 for `e2 >= 0`: divide by a power of five.
fn d2d_scale_down(m2: u64, e2: i32, mm_shift: u64) -> Scaled<u64> {
    let mv = 4 * m2;
    let q = log10_pow2(e2 as u32) - u32::from(e2 > 3);
    let k = DOUBLE_POW5_INV_BITCOUNT + pow5bits(q) as i32 - 1;
    let i = -e2 + q as i32 + k;
    let mul = &DOUBLE_POW5_INV_SPLIT[q as usize];
    let mut sc = Scaled {
        vr: mul_shift64(mv, mul, i),
        vp: mul_shift64(mv + 2, mul, i),
        vm: mul_shift64(mv - 1 - mm_shift, mul, i),
        e10: q as i32,
        vr_trailing_zeros: false,
    };
    if q <= 21 {
        // Only one of mp, mv and mm can be a multiple of 5, if any.
        if mv % 5 == 0 {
            sc.vr_trailing_zeros = multiple_of_pow5(mv, q);
        } else {
            sc.vp -= u64::from(multiple_of_pow5(mv + 2, q));
        }
    }
    sc
}

/// Step 3 for `e2 < 0`: multiply by a power of five.
fn d2d_scale_up(m2: u64, e2: i32, mm_shift: u64) -> Scaled<u64> {
    let mv = 4 * m2;
    let q = log10_pow5((-e2) as u32) - u32::from(-e2 > 1);
    let i = -e2 - q as i32;
    let k = pow5bits(i as u32) as i32 - DOUBLE_POW5_BITCOUNT;
    let j = q as i32 - k;
    let mul = &DOUBLE_POW5_SPLIT[i as usize];
    let mut sc = Scaled {
        vr: mul_shift64(mv, mul, j),
        vp: mul_shift64(mv + 2, mul, j),
        vm: mul_shift64(mv - 1 - mm_shift, mul, j),
        e10: q as i32 + e2,
        vr_trailing_zeros: false,
    };
    if q <= 1 {
        // mv = 4 * m2 always has two trailing zero bits; mp = mv + 2 has one.
        sc.vr_trailing_zeros = true;
        sc.vp -= 1;
    } else if q < 63 {
        sc.vr_trailing_zeros = multiple_of_pow2(mv, q - 1);
    }
    sc
}

/// Integers in `[1, 2^53)` print exactly (possibly with trailing zeros).
fn d2d_small_int(ieee_mantissa: u64, ieee_exponent: u32) -> Option<(u64, i32)> {
    let e2 = ieee_exponent as i32 - DOUBLE_BIAS - DOUBLE_MANTISSA_BITS as i32;
    if !(-(DOUBLE_MANTISSA_BITS as i32)..=0).contains(&e2) {
        return None;
    }
    let mask = (1u64 << -e2) - 1;
    if ieee_mantissa & mask != 0 {
        return None;
    }
    let m2 = (1u64 << DOUBLE_MANTISSA_BITS) | ieee_mantissa;
    Some((m2 >> -e2, 0))
}

/// Ryu step 4 with exclusive bounds: drop digits while the interval allows, then round.
/// Returns the digits and the number of digits removed.
fn shorten(mut vr: u64, mut vp: u64, mut vm: u64, mut vr_trailing_zeros: bool) -> (u64, i32) {
    let mut removed = 0;
    if vr_trailing_zeros {
        // Rare general case: track whether the removed digits are exactly 50...0.
        let mut last_removed = 0;
        while vp / 10 > vm / 10 {
            vr_trailing_zeros &= last_removed == 0;
            last_removed = vr % 10;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed += 1;
        }
        if vr_trailing_zeros && last_removed == 5 && vr % 2 == 0 {
            // Round to even if the exact number is .....50..0.
            last_removed = 4;
        }
        return (vr + u64::from(vr == vm || last_removed >= 5), removed);
    }
    let mut round_up = false;
    if vp / 100 > vm / 100 {
        round_up = vr % 100 >= 50;
        vr /= 100;
        vp /= 100;
        vm /= 100;
        removed += 2;
    }
    while vp / 10 > vm / 10 {
        round_up = vr % 10 >= 5;
        vr /= 10;
        vp /= 10;
        vm /= 10;
        removed += 1;
    }
    (vr + u64::from(vr == vm || round_up), removed)
}

// ---------------------------------------------------------------------------------------
// float (f2s.c)

const FLOAT_MANTISSA_BITS: u32 = 23;
const FLOAT_BIAS: i32 = 127;
const FLOAT_POW5_INV_BITCOUNT: i32 = 59;
const FLOAT_POW5_BITCOUNT: i32 = 61;

/// `(m * factor) >> shift` for a 32-bit `m` (the result fits in 32 bits).
fn mul_shift32(m: u32, factor: u64, shift: i32) -> u32 {
    let lo = u64::from(m) * (factor & 0xffff_ffff);
    let hi = u64::from(m) * (factor >> 32);
    (((lo >> 32) + hi) >> (shift - 32)) as u32
}

fn mul_pow5_inv_div_pow2(m: u32, q: u32, j: i32) -> u32 {
    mul_shift32(m, FLOAT_POW5_INV_SPLIT[q as usize], j)
}

fn mul_pow5_div_pow2(m: u32, i: u32, j: i32) -> u32 {
    mul_shift32(m, FLOAT_POW5_SPLIT[i as usize], j)
}

/// The shortest digits of a finite non-zero float given its IEEE bits.
pub(crate) fn f2d(bits: u32) -> (u32, i32) {
    let ieee_mantissa = bits & ((1u32 << FLOAT_MANTISSA_BITS) - 1);
    let ieee_exponent = (bits >> FLOAT_MANTISSA_BITS) & 0xff;
    if let Some(small) = f2d_small_int(ieee_mantissa, ieee_exponent) {
        return small;
    }
    let (e2, m2) = if ieee_exponent == 0 {
        (1 - FLOAT_BIAS - FLOAT_MANTISSA_BITS as i32 - 2, ieee_mantissa)
    } else {
        (ieee_exponent as i32 - FLOAT_BIAS - FLOAT_MANTISSA_BITS as i32 - 2, (1u32 << FLOAT_MANTISSA_BITS) | ieee_mantissa)
    };
    let mm_shift = u32::from(ieee_mantissa != 0 || ieee_exponent <= 1);
    let (sc, last_removed) = if e2 >= 0 { f2d_scale_down(m2, e2, mm_shift) } else { f2d_scale_up(m2, e2, mm_shift) };
    let (output, removed) = shorten32(sc, last_removed);
    (output, sc.e10 + removed)
}

/// Step 3 for `e2 >= 0`, plus the first removed digit when the loop may not compute it.
fn f2d_scale_down(m2: u32, e2: i32, mm_shift: u32) -> (Scaled<u32>, u32) {
    let (mv, mp, mm) = (4 * m2, 4 * m2 + 2, 4 * m2 - 1 - mm_shift);
    let q = log10_pow2(e2 as u32);
    let k = FLOAT_POW5_INV_BITCOUNT + pow5bits(q) as i32 - 1;
    let i = -e2 + q as i32 + k;
    let mut sc = Scaled {
        vr: mul_pow5_inv_div_pow2(mv, q, i),
        vp: mul_pow5_inv_div_pow2(mp, q, i),
        vm: mul_pow5_inv_div_pow2(mm, q, i),
        e10: q as i32,
        vr_trailing_zeros: false,
    };
    let mut last_removed = 0;
    if q != 0 && (sc.vp - 1) / 10 <= sc.vm / 10 {
        let l = FLOAT_POW5_INV_BITCOUNT + pow5bits(q - 1) as i32 - 1;
        last_removed = mul_pow5_inv_div_pow2(mv, q - 1, -e2 + q as i32 - 1 + l) % 10;
    }
    if q <= 9 {
        if mv % 5 == 0 {
            sc.vr_trailing_zeros = multiple_of_pow5(u64::from(mv), q);
        } else {
            sc.vp -= u32::from(multiple_of_pow5(u64::from(mp), q));
        }
    }
    (sc, last_removed)
}

/// Step 3 for `e2 < 0`, plus the first removed digit when the loop may not compute it.
fn f2d_scale_up(m2: u32, e2: i32, mm_shift: u32) -> (Scaled<u32>, u32) {
    let (mv, mp, mm) = (4 * m2, 4 * m2 + 2, 4 * m2 - 1 - mm_shift);
    let q = log10_pow5((-e2) as u32);
    let i = (-e2) as u32 - q;
    let k = pow5bits(i) as i32 - FLOAT_POW5_BITCOUNT;
    let j = q as i32 - k;
    let mut sc = Scaled {
        vr: mul_pow5_div_pow2(mv, i, j),
        vp: mul_pow5_div_pow2(mp, i, j),
        vm: mul_pow5_div_pow2(mm, i, j),
        e10: q as i32 + e2,
        vr_trailing_zeros: false,
    };
    let mut last_removed = 0;
    if q != 0 && (sc.vp - 1) / 10 <= sc.vm / 10 {
        let j = q as i32 - 1 - (pow5bits(i + 1) as i32 - FLOAT_POW5_BITCOUNT);
        last_removed = mul_pow5_div_pow2(mv, i + 1, j) % 10;
    }
    if q <= 1 {
        sc.vr_trailing_zeros = true;
        sc.vp -= 1;
    } else if q < 31 {
        sc.vr_trailing_zeros = multiple_of_pow2(u64::from(mv), q - 1);
    }
    (sc, last_removed)
}

/// Integers in `[1, 2^24)` print exactly.
fn f2d_small_int(ieee_mantissa: u32, ieee_exponent: u32) -> Option<(u32, i32)> {
    let e2 = ieee_exponent as i32 - FLOAT_BIAS - FLOAT_MANTISSA_BITS as i32;
    if !(-(FLOAT_MANTISSA_BITS as i32)..=0).contains(&e2) {
        return None;
    }
    let mask = (1u32 << -e2) - 1;
    if ieee_mantissa & mask != 0 {
        return None;
    }
    let m2 = (1u32 << FLOAT_MANTISSA_BITS) | ieee_mantissa;
    Some((m2 >> -e2, 0))
}

/// `f2d` step 4 (one loop serves both of Ryu's cases, since the trailing-zero tracking
/// is inert when `vr_trailing_zeros` starts false).
fn shorten32(sc: Scaled<u32>, mut last_removed: u32) -> (u32, i32) {
    let Scaled { mut vr, mut vp, mut vm, mut vr_trailing_zeros, .. } = sc;
    let mut removed = 0;
    while vp / 10 > vm / 10 {
        vr_trailing_zeros &= last_removed == 0;
        last_removed = vr % 10;
        vr /= 10;
        vp /= 10;
        vm /= 10;
        removed += 1;
    }
    if vr_trailing_zeros && last_removed == 5 && vr % 2 == 0 {
        last_removed = 4;
    }
    (vr + u32::from(vr == vm || last_removed >= 5), removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excludes_midpoints_like_postgres() {
        // 21664062438971310 is the exact midpoint below this double: PostgreSQL (and
        // therefore we) print 17 digits rather than the 16-digit midpoint.
        assert_eq!(d2d(0x4353_3dd6_6684_45ec), (21_664_062_438_971_312, 0));
        assert_eq!(d2d(1.5e300f64.to_bits()), (15, 299));
        assert_eq!(d2d(1e-300f64.to_bits()), (1, -300));
        assert_eq!(f2d(0x4c36_e066), (47_939_992, 0));
        assert_eq!(f2d(0.1f32.to_bits()), (1, -1));
    }
}

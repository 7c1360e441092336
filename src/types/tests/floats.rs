//! Float text output must read back to the identical bits, for any bit pattern.

use crate::types::{SqlType, TypeId};

/// xorshift64*: a small deterministic generator (no dependency needed).
use crate::rng::Rng;

/// Output then input; returns the stored bytes read back.
fn through_text(ty: SqlType, stored: &[u8]) -> Vec<u8> {
    let mut text = Vec::new();
    ty.output_text(stored, &mut text);
    let s = String::from_utf8(text).unwrap_or_else(|e| panic!("{e}"));
    let mut back = Vec::new();
    ty.input_text(&s, &mut back).unwrap_or_else(|e| panic!("{} {s:?}: {e}", ty.name()));
    back
}

#[test]
fn float8_bits_roundtrip() {
    let ty = SqlType::new(TypeId::Float8);
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let special = [0u64, 1, 0x000f_ffff_ffff_ffff, 0x0010_0000_0000_0000, 0x7fef_ffff_ffff_ffff];
    let randoms = (0..200_000).map(|i| match i % 4 {
        // Uniform bits, subnormals, and values near integers/powers of ten.
        0 | 1 => rng.next_u64(),
        2 => rng.next_u64() & 0x800f_ffff_ffff_ffff,
        _ => (rng.next_u64() as i64 as f64 / 1024.0).to_bits(),
    });
    for bits in special.into_iter().chain(randoms) {
        let v = f64::from_bits(bits);
        let back = through_text(ty, &bits.to_le_bytes());
        let back = u64::from_le_bytes(back.try_into().unwrap_or_default());
        if v.is_nan() {
            assert!(f64::from_bits(back).is_nan());
        } else {
            assert_eq!(back, bits, "{v:e}");
        }
    }
}

#[test]
fn float4_bits_roundtrip() {
    let ty = SqlType::new(TypeId::Float4);
    let mut rng = Rng::new(0xD1B5_4A32_D192_ED03);
    let randoms = (0..200_000).map(|i| {
        let r = rng.next_u64() as u32;
        if i % 3 == 0 {
            r & 0x807f_ffff
        } else {
            r
        }
    });
    for bits in [0u32, 1, 0x007f_ffff, 0x0080_0000, 0x7f7f_ffff].into_iter().chain(randoms) {
        let v = f32::from_bits(bits);
        let back = through_text(ty, &bits.to_le_bytes());
        let back = u32::from_le_bytes(back.try_into().unwrap_or_default());
        if v.is_nan() {
            assert!(f32::from_bits(back).is_nan());
        } else {
            assert_eq!(back, bits, "{v:e}");
        }
    }
}

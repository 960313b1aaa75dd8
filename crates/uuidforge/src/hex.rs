//! The two hex kernels every text form is built on: 16 bytes to 32 hex digits
//! and back.
//!
//! On x86_64 both use SSE2 (part of the x86_64 baseline, so no runtime
//! detection); elsewhere a table-driven scalar version runs. The test suite
//! checks that both agree on every input it tries.

/// Encodes 16 bytes as 32 hex digits, lower case unless `upper`.
#[inline]
pub(crate) fn encode32(src: &[u8; 16], upper: bool) -> [u8; 32] {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        encode32_sse2(src, upper)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        encode32_scalar(src, upper)
    }
}

/// Decodes 32 hex digits (any case) into 16 bytes; `None` if any character
/// is not a hex digit. Callers that need the position re-scan the input.
#[inline]
pub(crate) fn decode32(hex: &[u8; 32]) -> Option<[u8; 16]> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        decode32_sse2(hex)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        decode32_scalar(hex)
    }
}

const LOWER: &[u8; 16] = b"0123456789abcdef";
const UPPER: &[u8; 16] = b"0123456789ABCDEF";

#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
pub(crate) fn encode32_scalar(src: &[u8; 16], upper: bool) -> [u8; 32] {
    let table = if upper { UPPER } else { LOWER };
    let mut out = [0u8; 32];
    for (i, &b) in src.iter().enumerate() {
        out[2 * i] = table[(b >> 4) as usize];
        out[2 * i + 1] = table[(b & 0x0f) as usize];
    }
    out
}

/// Value of a hex digit, or `0xff`.
pub(crate) const HEX_VALUE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
pub(crate) fn decode32_scalar(hex: &[u8; 32]) -> Option<[u8; 16]> {
    let mut out = [0u8; 16];
    let mut bad = 0u8;
    for i in 0..16 {
        let hi = HEX_VALUE[hex[2 * i] as usize];
        let lo = HEX_VALUE[hex[2 * i + 1] as usize];
        bad |= (hi | lo) & 0xf0;
        out[i] = (hi << 4) | (lo & 0x0f);
    }
    (bad == 0).then_some(out)
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn encode32_sse2(src: &[u8; 16], upper: bool) -> [u8; 32] {
    use core::arch::x86_64::*;
    let mut out = [0u8; 32];
    // SAFETY: SSE2 is enabled for this target (checked by cfg); the loads and
    // stores are unaligned and stay inside `src` (16 bytes) and `out` (32).
    unsafe {
        let x = _mm_loadu_si128(src.as_ptr().cast());
        let nibble = _mm_set1_epi8(0x0f);
        let hi = _mm_and_si128(_mm_srli_epi16(x, 4), nibble);
        let lo = _mm_and_si128(x, nibble);
        let first = _mm_unpacklo_epi8(hi, lo);
        let second = _mm_unpackhi_epi8(hi, lo);
        let nine = _mm_set1_epi8(9);
        let zero = _mm_set1_epi8(b'0' as i8);
        // Distance from '9'+1 to 'a' (or 'A').
        let alpha = _mm_set1_epi8(if upper { 7 } else { 39 });
        let to_ascii = |v: __m128i| {
            _mm_add_epi8(
                _mm_add_epi8(v, zero),
                _mm_and_si128(_mm_cmpgt_epi8(v, nine), alpha),
            )
        };
        _mm_storeu_si128(out.as_mut_ptr().cast(), to_ascii(first));
        _mm_storeu_si128(out.as_mut_ptr().add(16).cast(), to_ascii(second));
    }
    out
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn decode32_sse2(hex: &[u8; 32]) -> Option<[u8; 16]> {
    use core::arch::x86_64::*;
    let mut out = [0u8; 16];
    // SAFETY: SSE2 is enabled for this target (checked by cfg); the loads and
    // stores are unaligned and stay inside `hex` (32 bytes) and `out` (16).
    unsafe {
        // Signed compares are enough: bytes >= 0x80 are negative and fail
        // both range checks.
        let decode16 = |c: __m128i| {
            let is_digit = _mm_and_si128(
                _mm_cmpgt_epi8(c, _mm_set1_epi8(b'0' as i8 - 1)),
                _mm_cmplt_epi8(c, _mm_set1_epi8(b'9' as i8 + 1)),
            );
            let lower = _mm_or_si128(c, _mm_set1_epi8(0x20));
            let is_alpha = _mm_and_si128(
                _mm_cmpgt_epi8(lower, _mm_set1_epi8(b'a' as i8 - 1)),
                _mm_cmplt_epi8(lower, _mm_set1_epi8(b'f' as i8 + 1)),
            );
            let digit = _mm_and_si128(is_digit, _mm_sub_epi8(c, _mm_set1_epi8(b'0' as i8)));
            let alpha = _mm_and_si128(
                is_alpha,
                _mm_sub_epi8(lower, _mm_set1_epi8(b'a' as i8 - 10)),
            );
            let nibbles = _mm_or_si128(digit, alpha);
            // Each 16-bit lane holds (first nibble, second nibble); fold it
            // into one byte in the lane's low half.
            let high = _mm_and_si128(_mm_slli_epi16(nibbles, 4), _mm_set1_epi16(0x00f0));
            let low = _mm_srli_epi16(nibbles, 8);
            (_mm_or_si128(high, low), _mm_or_si128(is_digit, is_alpha))
        };
        let (a, valid_a) = decode16(_mm_loadu_si128(hex.as_ptr().cast()));
        let (b, valid_b) = decode16(_mm_loadu_si128(hex.as_ptr().add(16).cast()));
        if _mm_movemask_epi8(_mm_and_si128(valid_a, valid_b)) != 0xffff {
            return None;
        }
        _mm_storeu_si128(out.as_mut_ptr().cast(), _mm_packus_epi16(a, b));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn simd_and_scalar_encoders_agree(bytes in any::<[u8; 16]>(), upper in any::<bool>()) {
            prop_assert_eq!(encode32(&bytes, upper), encode32_scalar(&bytes, upper));
        }

        #[test]
        fn simd_and_scalar_decoders_agree(text in any::<[u8; 32]>()) {
            prop_assert_eq!(decode32(&text), decode32_scalar(&text));
        }

        #[test]
        fn decoders_agree_on_near_hex(text in proptest::collection::vec(
            prop_oneof![Just(b'/'), Just(b':'), Just(b'@'), Just(b'G'), Just(b'`'), Just(b'g'),
                        Just(0x80u8), Just(0xc6u8), b'0'..=b'9', b'a'..=b'f', b'A'..=b'F'], 32)) {
            let text: [u8; 32] = text.try_into().unwrap();
            prop_assert_eq!(decode32(&text), decode32_scalar(&text));
        }

        #[test]
        fn hex_round_trips(bytes in any::<[u8; 16]>(), upper in any::<bool>()) {
            prop_assert_eq!(decode32(&encode32(&bytes, upper)), Some(bytes));
        }
    }

    #[test]
    fn every_byte_value_decodes_like_the_table() {
        for c in 0..=255u8 {
            let mut text = [b'0'; 32];
            text[17] = c;
            let expected = HEX_VALUE[c as usize] != 0xff;
            assert_eq!(decode32(&text).is_some(), expected, "byte {c:#x}");
        }
    }
}

//! Crockford Base32 (<https://www.crockford.com/base32.html>), the text form
//! of ULID, and its optional mod-37 check symbol.
//!
//! A UUID is 128 bits; 26 characters hold 130, so the first character
//! carries the top 3 bits and is always `0`–`7`:
//!
//! ```text
//!  char:   0     1     2    ...   25
//!  bits: 00xxx xxxxx xxxxx  ...  xxxxx     (2 zero pad bits, then 128 value bits)
//! ```
//!
//! Encoding emits upper case from `0123456789ABCDEFGHJKMNPQRSTVWXYZ`, which is
//! in ASCII order, so the text sorts like the bytes. Decoding is
//! case-insensitive, reads `O` as `0` and `I`/`L` as `1`, and rejects `U`
//! (kept for the check symbol) and a first character above `7`.
//!
//! The check symbol is the value modulo 37, written with the alphabet
//! followed by `*~$=U`.

use crate::error::{InputKind, ParseError, ParseErrorKind};
use uuid::Uuid;

/// The 32 value symbols, in ascending order.
pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// The 37 check symbols: [`ALPHABET`] followed by `*~$=U`.
pub const CHECK_ALPHABET: &[u8; 37] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ*~$=U";

/// Length of a UUID in Base32.
pub const LEN: usize = 26;

const INVALID: u8 = 0xff;

/// Decoding table: the 5-bit value of each accepted byte, or [`INVALID`].
const DECODE: [u8; 256] = {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < 32 {
        let c = ALPHABET[i];
        t[c as usize] = i as u8;
        t[c.to_ascii_lowercase() as usize] = i as u8;
        i += 1;
    }
    t[b'O' as usize] = 0;
    t[b'o' as usize] = 0;
    t[b'I' as usize] = 1;
    t[b'i' as usize] = 1;
    t[b'L' as usize] = 1;
    t[b'l' as usize] = 1;
    t
};

/// The value of a symbol byte (any case, Crockford aliases), or `0xff`.
pub(crate) const fn symbol_value(c: u8) -> u8 {
    DECODE[c as usize]
}

const EXPECTED_SYMBOL: &str = "a Crockford Base32 symbol (0-9, A-Z except U)";

/// Spreads the low 40 bits of `x` into eight 5-bit groups, one per byte,
/// most significant group in the lowest byte.
#[inline(always)]
const fn spread40(x: u64) -> u64 {
    let y = ((x & 0xFF_FFF0_0000) << 12) | (x & 0xF_FFFF);
    let z = ((y & 0x000F_FC00_000F_FC00) << 6) | (y & 0x0000_03FF_0000_03FF);
    let w = ((z & 0x03E0_03E0_03E0_03E0) << 3) | (z & 0x001F_001F_001F_001F);
    w.swap_bytes()
}

/// Inverse of [`spread40`]: eight 5-bit values (first in the lowest byte)
/// packed into 40 bits.
#[inline(always)]
const fn pack40(w: u64) -> u64 {
    let x = w.swap_bytes();
    let z = (x & 0x001F_001F_001F_001F) | ((x & 0x1F00_1F00_1F00_1F00) >> 3);
    let y = (z & 0x0000_03FF_0000_03FF) | ((z & 0x03FF_0000_03FF_0000) >> 6);
    (y & 0xF_FFFF) | ((y & 0x000F_FFFF_0000_0000) >> 12)
}

/// Maps eight 5-bit values (one per byte) to their symbols, branch-free.
///
/// The alphabet is `'0' + v`, plus 7 past `9`, plus one for each skipped
/// letter (I, L, O, U) below `v`.
#[inline(always)]
const fn symbols8(v: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // (v + 128 - (k + 1)) has bit 7 set exactly when v > k; v < 32 so no byte
    // carries into the next.
    const fn above(v: u64, k: u64) -> u64 {
        ((v + ONES * (127 - k)) >> 7) & ONES
    }
    v + ONES * b'0' as u64
        + above(v, 9) * 7
        + above(v, 17)
        + above(v, 19)
        + above(v, 21)
        + above(v, 26)
}

/// 26 Base32 characters on the stack, as [`encode`] returns them.
///
/// The buffer is 32 bytes so that the SIMD encoders fill it with one store;
/// only the first 26 are the text.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Base32Text([u8; 32]);

impl Base32Text {
    /// The 26 ASCII bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8; LEN] {
        self.0[..LEN].try_into().expect("26 bytes")
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("Base32 is ASCII")
    }
}

impl std::ops::Deref for Base32Text {
    type Target = [u8; LEN];
    fn deref(&self) -> &[u8; LEN] {
        self.as_bytes()
    }
}

impl std::fmt::Display for Base32Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Base32Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// Encodes a UUID as 26 Crockford Base32 characters (upper case).
///
/// ```
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// assert_eq!(uuidforge::base32::encode(&id).as_str(), "01FWHE4YDGFK1SHH6W1G60EECF");
/// ```
#[inline]
pub fn encode(uuid: &Uuid) -> Base32Text {
    #[cfg(target_arch = "x86_64")]
    {
        Base32Text(crate::x86::base32_encode_bytes(uuid.as_bytes()))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Base32Text(encode_portable_32(uuid.as_bytes()))
    }
}

/// [`encode_portable`] into the 32 bytes of [`Base32Text`] (the kernels'
/// shape).
pub(crate) fn encode_portable_32(bytes: &[u8; 16]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out[..LEN].copy_from_slice(&encode_portable(&Uuid::from_bytes(*bytes)));
    out
}

/// [`encode_portable_32`] written to `out`, as the x86 kernels write.
///
/// # Safety
/// `out` must be 32 writable bytes.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn encode_portable_into(bytes: &[u8; 16], out: *mut [u8; 32]) {
    out.write(encode_portable_32(bytes));
}

/// The portable encoder (also the reference for the SIMD one).
pub(crate) fn encode_portable(uuid: &Uuid) -> [u8; LEN] {
    let v = uuid.as_u128();
    let mut out = [0u8; LEN];
    let head = (v >> 120) as u64; // top 8 bits -> 2 symbols (with 2 pad bits)
    out[0] = ALPHABET[(head >> 5) as usize];
    out[1] = ALPHABET[(head & 31) as usize];
    let chunks = [
        (v >> 80) as u64 & 0xFF_FFFF_FFFF,
        (v >> 40) as u64 & 0xFF_FFFF_FFFF,
        v as u64 & 0xFF_FFFF_FFFF,
    ];
    for (i, chunk) in chunks.into_iter().enumerate() {
        let s = symbols8(spread40(chunk)).to_le_bytes();
        out[2 + 8 * i..10 + 8 * i].copy_from_slice(&s);
    }
    out
}

/// The mod-37 check symbol of a 128-bit value.
///
/// ```
/// let id = uuid::Uuid::from_u128(37 * 1000 + 36);
/// assert_eq!(uuidforge::base32::check_symbol(&id), b'U');
/// ```
pub fn check_symbol(uuid: &Uuid) -> u8 {
    CHECK_ALPHABET[(uuid.as_u128() % 37) as usize]
}

/// Encodes a UUID as 26 Base32 characters followed by the check symbol.
///
/// ```
/// let id = uuid::Uuid::nil();
/// assert_eq!(&uuidforge::base32::encode_with_check(&id), b"000000000000000000000000000");
/// ```
pub fn encode_with_check(uuid: &Uuid) -> [u8; LEN + 1] {
    let mut out = [0u8; LEN + 1];
    out[..LEN].copy_from_slice(encode(uuid).as_bytes());
    out[LEN] = check_symbol(uuid);
    out
}

/// Decodes 26 Crockford Base32 characters into a UUID.
///
/// ```
/// let id = uuidforge::base32::decode(b"01fwhe4ydgfk1shh6w1g6oeecf").unwrap();
/// assert_eq!(id, uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"));
/// let err = uuidforge::base32::decode(b"81FWHE4YDGFK1SHH6W1G60EECF").unwrap_err();
/// assert_eq!(err.position(), Some(0));
/// ```
#[inline]
pub fn decode(text: &[u8]) -> Result<Uuid, ParseError> {
    let Ok(text) = <&[u8; LEN]>::try_from(text) else {
        return Err(ParseError::length(
            InputKind::Base32,
            text.len(),
            "26 characters",
        ));
    };
    #[cfg(target_arch = "x86_64")]
    {
        let mut bytes = core::mem::MaybeUninit::<[u8; 16]>::uninit();
        if crate::x86::base32_decode(text, bytes.as_mut_ptr()) {
            // SAFETY: the kernel wrote all 16 bytes (it returned true).
            Ok(Uuid::from_bytes(unsafe { bytes.assume_init() }))
        } else {
            Err(locate_error(text, InputKind::Base32))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    decode_portable(text)
}

/// Runs every Base32 kernel this CPU has (whatever `UUIDFORGE_CPU_TIER`
/// says) on `data` and panics, naming the tier, where one disagrees with
/// the portable code: the fuzz target calls it on every input.
#[doc(hidden)]
pub fn __check_every_tier(data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        if let Ok(text) = <&[u8; LEN]>::try_from(data) {
            let reference = decode_portable(text).ok().map(|u| u.as_u128());
            for (tier, value) in crate::x86::base32_decode_every_tier(text) {
                assert_eq!(value, reference, "{tier} decodes {data:?} otherwise");
            }
        }
        if let Ok(bytes) = <&[u8; 16]>::try_from(data) {
            let reference = encode_portable(&Uuid::from_bytes(*bytes));
            for (tier, text) in crate::x86::base32_encode_every_tier(bytes) {
                assert_eq!(text, reference, "{tier} encodes {data:?} otherwise");
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// The portable decoder (also the reference for the SIMD one).
/// [`decode_portable`] in the kernels' shape: the bytes to `out`, true when
/// valid.
///
/// # Safety
/// `out` is 16 writable bytes.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn decode_portable_into(text: &[u8; LEN], out: *mut [u8; 16]) -> bool {
    match decode_portable(text) {
        Ok(uuid) => {
            out.write(*uuid.as_bytes());
            true
        }
        Err(_) => false,
    }
}

pub(crate) fn decode_portable(text: &[u8; LEN]) -> Result<Uuid, ParseError> {
    let mut values = [0u8; LEN];
    let mut bad = 0u8;
    for (v, &c) in values.iter_mut().zip(text.iter()) {
        *v = DECODE[c as usize];
        bad |= *v;
    }
    if bad & 0xe0 != 0 || values[0] > 7 {
        return Err(locate_error(text, InputKind::Base32));
    }
    let chunk = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&values[2 + 8 * i..10 + 8 * i]);
        pack40(u64::from_le_bytes(b)) as u128
    };
    let head = ((values[0] as u128) << 5) | values[1] as u128;
    let v = (head << 120) | (chunk(0) << 80) | (chunk(1) << 40) | chunk(2);
    Ok(Uuid::from_u128(v))
}

/// Decodes 27 characters: a UUID in Base32 and its check symbol, which must
/// match.
///
/// ```
/// use uuidforge::base32;
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// let text = base32::encode_with_check(&id);
/// assert_eq!(base32::decode_with_check(&text).unwrap(), id);
/// ```
pub fn decode_with_check(text: &[u8]) -> Result<Uuid, ParseError> {
    if text.len() != LEN + 1 {
        return Err(ParseError::length(
            InputKind::Base32Check,
            text.len(),
            "27 characters",
        ));
    }
    let uuid = decode(&text[..LEN]).map_err(|e| e.offset(0, InputKind::Base32Check))?;
    let found = text[LEN];
    let Some(found_value) = check_value(found) else {
        return Err(ParseError::new(
            InputKind::Base32Check,
            ParseErrorKind::InvalidCharacter {
                position: LEN,
                found: found as char,
                expected: "a check symbol (0-9, A-Z, *, ~, $, =)",
            },
        ));
    };
    let expected = check_symbol(&uuid);
    if CHECK_ALPHABET[found_value as usize] != expected {
        return Err(ParseError::new(
            InputKind::Base32Check,
            ParseErrorKind::CheckSymbolMismatch {
                found: found as char,
                expected: expected as char,
            },
        ));
    }
    Ok(uuid)
}

/// The value of a check symbol, case-insensitive, with Crockford's aliases.
fn check_value(c: u8) -> Option<u8> {
    match c {
        b'*' => Some(32),
        b'~' => Some(33),
        b'$' => Some(34),
        b'=' => Some(35),
        b'U' | b'u' => Some(36),
        _ => Some(DECODE[c as usize]).filter(|&v| v != INVALID),
    }
}

/// Finds the first offending character of a text that failed the fast path.
fn locate_error(text: &[u8], input: InputKind) -> ParseError {
    // Report the first byte that is not a symbol; a multi-byte UTF-8
    // character is reported as the character that starts there.
    for (position, &c) in text.iter().enumerate() {
        if DECODE[c as usize] == INVALID {
            let found = std::str::from_utf8(&text[position..])
                .ok()
                .and_then(|s| s.chars().next())
                .unwrap_or(c as char);
            return ParseError::new(
                input,
                ParseErrorKind::InvalidCharacter {
                    position,
                    found,
                    expected: EXPECTED_SYMBOL,
                },
            );
        }
    }
    ParseError::new(
        input,
        ParseErrorKind::Overflow {
            found: text[0] as char,
        },
    )
}

/// Encodes `bytes` (big-endian) as `chars` symbols, most significant first,
/// padding with zero bits on the left. `5 * chars` must be at least
/// `8 * bytes.len()`. Used for UUID_192 and as the reference for the fast
/// 128-bit path.
pub(crate) fn encode_bytes(bytes: &[u8], chars: usize) -> Vec<u8> {
    debug_assert!(5 * chars >= 8 * bytes.len());
    let total_bits = 8 * bytes.len();
    let pad = 5 * chars - total_bits;
    let bit = |i: usize| -> u8 {
        // i indexes the padded bit string.
        if i < pad {
            0
        } else {
            let j = i - pad;
            (bytes[j / 8] >> (7 - j % 8)) & 1
        }
    };
    (0..chars)
        .map(|c| {
            let v = (0..5).fold(0u8, |acc, k| (acc << 1) | bit(5 * c + k));
            ALPHABET[v as usize]
        })
        .collect()
}

/// Decodes `N` bytes from their Base32 text (the inverse of
/// [`encode_bytes`]); the pad bits at the front must be zero.
pub(crate) fn decode_bytes<const N: usize>(
    text: &[u8],
    input: InputKind,
) -> Result<[u8; N], ParseError> {
    let chars = (8 * N).div_ceil(5);
    if text.len() != chars {
        return Err(ParseError::length(
            input,
            text.len(),
            if N == 24 {
                "39 characters"
            } else {
                "26 characters"
            },
        ));
    }
    let pad = 5 * chars - 8 * N;
    let mut out = [0u8; N];
    let mut bit_index = 0usize;
    for &c in text {
        let v = DECODE[c as usize];
        if v == INVALID {
            return Err(locate_error(text, input));
        }
        for k in (0..5).rev() {
            let b = (v >> k) & 1;
            if bit_index < pad {
                if b != 0 {
                    return Err(ParseError::new(
                        input,
                        ParseErrorKind::Overflow {
                            found: text[0] as char,
                        },
                    ));
                }
            } else {
                let j = bit_index - pad;
                out[j / 8] |= b << (7 - j % 8);
            }
            bit_index += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fast_encoder_matches_the_bitwise_reference(bytes in any::<[u8; 16]>()) {
            let id = Uuid::from_bytes(bytes);
            prop_assert_eq!(encode(&id).to_vec(), encode_bytes(&bytes, LEN));
            prop_assert_eq!(encode(&id).as_str().len(), LEN);
            prop_assert_eq!(encode_portable(&id).to_vec(), encode_bytes(&bytes, LEN));
            #[cfg(target_arch = "x86_64")]
            for (tier, text) in crate::x86::base32_encode_every_tier(&bytes) {
                prop_assert_eq!(text.to_vec(), encode_bytes(&bytes, LEN), "{}", tier);
            }
        }

        #[test]
        fn simd_and_portable_decoders_agree(text in proptest::collection::vec(
            prop_oneof![proptest::sample::select(ALPHABET.to_vec()), Just(b'o'), Just(b'i'), Just(b'L'), Just(b'u'),
                        Just(b'@'), Just(b'['), Just(b'`'), Just(b'{'), Just(0x80u8), Just(0xc9u8), Just(b'/'), Just(b':')], LEN)) {
            let text: [u8; LEN] = text.try_into().unwrap();
            let reference = decode_portable(&text).ok().map(|u| u.as_u128());
            prop_assert_eq!(decode(&text).ok().map(|u| u.as_u128()), reference);
            #[cfg(target_arch = "x86_64")]
            for (tier, value) in crate::x86::base32_decode_every_tier(&text) {
                prop_assert_eq!(value, reference, "{}", tier);
            }
        }

        #[test]
        fn every_tier_decodes_every_value(bytes in any::<[u8; 16]>()) {
            let text = encode_bytes(&bytes, LEN);
            let text: [u8; LEN] = text.try_into().unwrap();
            let v = u128::from_be_bytes(bytes);
            prop_assert_eq!(decode_portable(&text).unwrap().as_u128(), v);
            #[cfg(target_arch = "x86_64")]
            for (tier, value) in crate::x86::base32_decode_every_tier(&text) {
                prop_assert_eq!(value, Some(v), "{}", tier);
            }
        }

        #[test]
        fn fast_decoder_matches_the_bitwise_reference(bytes in any::<[u8; 16]>()) {
            let text = encode_bytes(&bytes, LEN);
            prop_assert_eq!(decode(&text).unwrap().into_bytes(), decode_bytes::<16>(&text, InputKind::Base32).unwrap());
        }

        #[test]
        fn round_trips_in_any_case(bytes in any::<[u8; 16]>(), lower in any::<bool>()) {
            let id = Uuid::from_bytes(bytes);
            let mut text = *encode(&id).as_bytes();
            if lower { text.make_ascii_lowercase(); }
            prop_assert_eq!(decode(&text).unwrap(), id);
            prop_assert_eq!(decode_with_check(&encode_with_check(&id)).unwrap(), id);
        }

        #[test]
        fn text_sorts_like_bytes(a in any::<[u8; 16]>(), b in any::<[u8; 16]>()) {
            prop_assert_eq!(a.cmp(&b), encode(&Uuid::from_bytes(a)).cmp(&encode(&Uuid::from_bytes(b))));
        }

        #[test]
        fn identical_to_ulid_text(bytes in any::<[u8; 16]>()) {
            let id = Uuid::from_bytes(bytes);
            let ulid = ulid::Ulid::from_bytes(bytes);
            prop_assert_eq!(encode(&id).to_string(), ulid.to_string());
        }

        #[test]
        fn decoder_never_panics(text in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = decode(&text);
            let _ = decode_with_check(&text);
        }
    }

    #[test]
    fn aliases_and_rejections() {
        let zero = decode(b"OOOOOOOOOOOOOOOOOOOOOOOOOO").unwrap();
        assert!(zero.is_nil());
        let ones = decode(b"0ILil1111111111111111111111").unwrap_err();
        assert!(matches!(
            ones.kind,
            ParseErrorKind::InvalidLength { found: 27, .. }
        ));
        let ones = decode(b"0ILil111111111111111111111").unwrap();
        assert_eq!(ones, decode(b"01111111111111111111111111").unwrap());
        let err = decode(b"0000000000000U000000000000").unwrap_err();
        assert_eq!(err.position(), Some(13));
        assert!(err.to_string().contains("'U' at position 13"), "{err}");
        let err = decode(b"8ZZZZZZZZZZZZZZZZZZZZZZZZZ").unwrap_err();
        assert!(matches!(err.kind, ParseErrorKind::Overflow { found: '8' }));
        assert_eq!(
            decode(b"7ZZZZZZZZZZZZZZZZZZZZZZZZZ").unwrap(),
            Uuid::max(),
            "7ZZ..Z is the largest 128-bit value"
        );
        let err = decode("0000000000000é00000000000".as_bytes()).unwrap_err();
        assert!(err.to_string().contains("'é' at position 13"), "{err}");
    }

    #[test]
    fn check_symbols_follow_crockford() {
        for (value, symbol) in [
            (0u128, b'0'),
            (31, b'Z'),
            (32, b'*'),
            (33, b'~'),
            (34, b'$'),
            (35, b'='),
            (36, b'U'),
            (37, b'0'),
        ] {
            assert_eq!(
                check_symbol(&Uuid::from_u128(value)),
                symbol,
                "value {value}"
            );
        }
        let id = Uuid::from_u128(u128::MAX);
        let mut text = encode_with_check(&id);
        assert_eq!(u128::MAX % 37, 32); // so the symbol is '*'
        assert_eq!(text[LEN], b'*');
        text[LEN] = b'4';
        let err = decode_with_check(&text).unwrap_err();
        assert_eq!(
            err.kind,
            ParseErrorKind::CheckSymbolMismatch {
                found: '4',
                expected: '*'
            }
        );
        // Lower-case and aliased check symbols are accepted.
        let id = Uuid::from_u128(36);
        let mut text = encode_with_check(&id);
        text[LEN] = b'u';
        assert_eq!(decode_with_check(&text).unwrap(), id);
    }
}

//! RFC 4648 §7 "base32hex": the extended hex alphabet `0-9A-V`, which is in
//! ASCII order, so the text sorts like the bytes. PostgreSQL 19 writes a
//! UUID this way with `rtrim(encode(id::bytea, 'base32hex'), '=')`: 26
//! symbols, the last of which carries the value's final 3 bits and 2 zero
//! bits (unlike Crockford [`base32`](crate::base32), whose 2 zero bits
//! come first). Its `encode` adds six `=` of padding (32 characters).
//!
//! ```text
//!  symbol:  0     1    ...   24     25
//!  bits:  xxxxx xxxxx  ...  xxxxx  xxx00     (128 value bits, then 2 zero bits)
//! ```
//!
//! Decoding reads as PostgreSQL 19's `decode(text, 'base32hex')` does:
//! any case, whitespace ignored, with or without the padding. It refuses
//! a last symbol whose 2 low bits are not zero: that text holds bits
//! beyond the UUID's 128, and no UUID encodes to it.

use crate::error::{InputKind, ParseError, ParseErrorKind};
use uuid::Uuid;

/// The 32 symbols, in ascending order.
pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHIJKLMNOPQRSTUV";

/// Length of a UUID in base32hex, without padding.
pub const LEN: usize = 26;

/// Length with the `=` padding PostgreSQL 19's `encode` writes.
pub const PADDED_LEN: usize = 32;

/// The 5-bit value of a symbol (any case).
const fn symbol_value(c: char) -> Option<u8> {
    match c {
        '0'..='9' => Some(c as u8 - b'0'),
        'A'..='V' => Some(c as u8 - b'A' + 10),
        'a'..='v' => Some(c as u8 - b'a' + 10),
        _ => None,
    }
}

/// The 26-symbol base32hex text of a UUID, upper case, unpadded.
///
/// ```
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// assert_eq!(uuidforge::base32hex::encode(&id), "05VI5OJPM1UC7664RG60O1PPHS");
/// assert_eq!(uuidforge::base32hex::encode(&uuid::Uuid::max()), "VVVVVVVVVVVVVVVVVVVVVVVVVS");
/// ```
pub fn encode(uuid: &Uuid) -> String {
    let v = uuid.as_u128();
    (0..LEN)
        .map(|i| {
            // Symbol i holds bits 123 - 5i .. 127 - 5i; the last one the
            // value's low 3 bits, then 2 zero bits.
            let value = if i + 1 < LEN {
                (v >> (123 - 5 * i)) & 31
            } else {
                (v & 7) << 2
            };
            ALPHABET[value as usize] as char
        })
        .collect()
}

/// [`encode`] with the six `=` of padding: what PostgreSQL 19's
/// `encode(id::bytea, 'base32hex')` gives.
///
/// ```
/// let id = uuid::uuid!("018570bb-4a7d-7000-8000-000000000000");
/// assert_eq!(uuidforge::base32hex::encode_padded(&id), "062N1EQAFLO010000000000000======");
/// ```
pub fn encode_padded(uuid: &Uuid) -> String {
    encode(uuid) + "======"
}

const EXPECTED_SYMBOL: &str = "a base32hex symbol (0-9, A-V, any case)";
const EXPECTED_LENGTH: &str = "26 base32hex symbols, then six '=' of padding or none";

/// The UUID of a base32hex text: any case, whitespace ignored, with or
/// without the padding.
///
/// ```
/// use uuidforge::base32hex::decode;
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// assert_eq!(decode("05VI5OJPM1UC7664RG60O1PPHS").unwrap(), id);
/// assert_eq!(decode("05vi5ojpm1uc7664 rg60o1pphs======").unwrap(), id);
/// // W is not a symbol; T leaves a 1 in the 2 bits past the UUID's 128.
/// assert_eq!(decode("05VI5OJPM1UC7664RG60O1PPHW").unwrap_err().position(), Some(25));
/// assert_eq!(decode("05VI5OJPM1UC7664RG60O1PPHT").unwrap_err().position(), Some(25));
/// assert!(decode("05VI5OJPM1UC7664RG60O1PPH").is_err());
/// ```
pub fn decode(text: &str) -> Result<Uuid, ParseError> {
    let mut value: u128 = 0;
    let mut symbols = 0;
    let mut padding = 0;
    for (position, c) in text.chars().enumerate() {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == '=' {
            padding += 1;
            continue;
        }
        let invalid = |expected| {
            ParseError::new(
                InputKind::Base32Hex,
                ParseErrorKind::InvalidCharacter {
                    position,
                    found: c,
                    expected,
                },
            )
        };
        if padding > 0 {
            return Err(invalid("'=' or whitespace: the padding ends the text"));
        }
        let Some(bits) = symbol_value(c) else {
            return Err(invalid(EXPECTED_SYMBOL));
        };
        symbols += 1;
        if symbols > LEN {
            break;
        }
        if symbols == LEN {
            if bits & 3 != 0 {
                return Err(invalid(
                    "a last symbol whose 2 low bits are zero (0, 4, 8, C, G, K, O, S): they are past the UUID's 128",
                ));
            }
            value = (value << 3) | u128::from(bits >> 2);
        } else {
            value = (value << 5) | u128::from(bits);
        }
    }
    if symbols != LEN || (padding != 0 && padding != PADDED_LEN - LEN) {
        return Err(ParseError::length(
            InputKind::Base32Hex,
            symbols + padding,
            EXPECTED_LENGTH,
        ));
    }
    Ok(Uuid::from_u128(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips_and_sorts_like_the_bytes(a in any::<u128>(), b in any::<u128>()) {
            let (a, b) = (Uuid::from_u128(a), Uuid::from_u128(b));
            let (ta, tb) = (encode(&a), encode(&b));
            prop_assert_eq!(ta.len(), LEN);
            prop_assert_eq!(decode(&ta).unwrap(), a);
            prop_assert_eq!(decode(&encode_padded(&a).to_lowercase()).unwrap(), a);
            prop_assert_eq!(ta.cmp(&tb), a.as_bytes().cmp(b.as_bytes()));
        }
    }

    #[test]
    fn the_padding_is_all_or_nothing() {
        let id = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let text = encode(&id);
        for bad in [
            format!("{text}="),
            format!("{text}======="),
            format!("{text}==="),
        ] {
            let e = decode(&bad).unwrap_err();
            assert!(
                matches!(e.kind, ParseErrorKind::InvalidLength { .. }),
                "{bad}: {e}"
            );
        }
        let e = decode(&format!("{}==={}", &text[..20], &text[20..])).unwrap_err();
        assert_eq!(e.position(), Some(23), "{e}");
        assert_eq!(decode(&format!(" {text}\n======\t")).unwrap(), id);
    }
}

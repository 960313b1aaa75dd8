//! Finding UUIDs inside longer text: URLs, log lines, JSON strings, CSV
//! fields (RFC 9562 §4 forms, Crockford Base32 and UUID_192).
//!
//! A *token* is a run of text that reads as one UUID and is not part of a
//! longer word: the character before it and the one after it are not ASCII
//! letters or digits. Recognised spellings:
//!
//! | form | length | example inside text |
//! |---|---|---|
//! | canonical (any case; also the core of braced and URN forms, and the left part of UUID_192 text) | 36 | `/orders/017f22e2-79b0-7cc3-98c4-dc0c0c07398f?x=1` |
//! | simple hex | 32 | `id=017f22e279b07cc398c4dc0c0c07398f` |
//! | Crockford Base32 (ULID text) | 26 | `01FWHE4YDGFK1SHH6W1G60EECF` |
//! | UUID_192 Base32 (checksum verified) | 39 | its left 128 bits |
//!
//! ```
//! use uuidforge::scan::{tokens, TokenForm};
//! let text = "GET /orders/017F22E2-79B0-7CC3-98C4-DC0C0C07398F/items HTTP/1.1";
//! let found: Vec<_> = tokens(text.as_bytes()).collect();
//! assert_eq!(found.len(), 1);
//! assert_eq!(found[0].uuid, uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"));
//! assert_eq!((found[0].start, found[0].end), (12, 48));
//! assert_eq!(found[0].form, TokenForm::Canonical);
//! ```

use uuid::Uuid;

/// The spelling a [`Token`] was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenForm {
    /// `8-4-4-4-12` hex digits, any case (braced, URN and UUID_192 text
    /// contain it).
    Canonical,
    /// 32 hex digits.
    Simple,
    /// 26 Crockford Base32 symbols.
    Base32,
    /// 39 Crockford Base32 symbols of a UUID_192: the token's UUID is its
    /// left 128 bits.
    Uuid192Base32,
}

/// One UUID found in text, with its byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Token {
    /// Offset of the first byte.
    pub start: usize,
    /// Offset just past the last byte.
    pub end: usize,
    /// The UUID (of a UUID_192: its left 128 bits).
    pub uuid: Uuid,
    /// How it was spelled.
    pub form: TokenForm,
}

/// Every UUID token of `text`, left to right, not overlapping.
///
/// ```
/// let ids: Vec<_> = uuidforge::scan::tokens(b"a 017f22e279b07cc398c4dc0c0c07398f, b 01FWHE4YDGFK1SHH6W1G60EECF")
///     .map(|t| t.uuid)
///     .collect();
/// assert_eq!(ids.len(), 2);
/// assert_eq!(ids[0], ids[1]);
/// ```
pub fn tokens(text: &[u8]) -> Tokens<'_> {
    Tokens { text, at: 0 }
}

/// Iterator returned by [`tokens`].
#[derive(Debug, Clone)]
pub struct Tokens<'a> {
    text: &'a [u8],
    at: usize,
}

impl Iterator for Tokens<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let text = self.text;
        // `at` is never inside a word, so the first run of 8 word bytes at
        // or after it starts a word; every spelling starts with such a word
        // (8 hex digits before a hyphen, or 26, 32 or 39 symbols).
        while let Some(start) = next_long_word(text, self.at) {
            let word_end = start
                + 8
                + text[start + 8..]
                    .iter()
                    .position(|b| !b.is_ascii_alphanumeric())
                    .unwrap_or(text.len() - start - 8);
            self.at = word_end;
            if let Some(token) = token_at(text, start, word_end) {
                self.at = token.end;
                return Some(token);
            }
        }
        self.at = text.len();
        None
    }
}

/// Shortest word any spelling starts with.
const LONG_WORD: usize = 8;

/// The first offset at or after `from` where `LONG_WORD` ASCII letters or
/// digits follow in a row.
#[inline]
fn next_long_word(text: &[u8], from: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut at = from;
        // 64 bytes per step with SSE2 (the x86_64 baseline); a run may
        // start in the first 57 of them and still be seen whole.
        while at + 64 <= text.len() {
            let mask = word_mask_64(&text[at..at + 64]);
            let mut runs = mask;
            for shift in 1..LONG_WORD {
                runs &= mask >> shift;
            }
            if runs != 0 {
                return Some(at + runs.trailing_zeros() as usize);
            }
            at += 64 - LONG_WORD + 1;
        }
        next_long_word_portable(text, at)
    }
    #[cfg(not(target_arch = "x86_64"))]
    next_long_word_portable(text, from)
}

fn next_long_word_portable(text: &[u8], from: usize) -> Option<usize> {
    let mut run = 0;
    for (i, b) in text.iter().enumerate().skip(from) {
        if b.is_ascii_alphanumeric() {
            run += 1;
            if run == LONG_WORD {
                return Some(i + 1 - LONG_WORD);
            }
        } else {
            run = 0;
        }
    }
    None
}

/// Bit i set when `block[i]` is an ASCII letter or digit.
#[cfg(target_arch = "x86_64")]
#[inline]
fn word_mask_64(block: &[u8]) -> u64 {
    use core::arch::x86_64::*;
    debug_assert_eq!(block.len(), 64);
    let mut mask = 0u64;
    for lane in 0..4 {
        // SAFETY: SSE2 is part of x86_64; the load reads 16 bytes inside
        // `block` (64 bytes long) and needs no alignment.
        let bits = unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(lane * 16) as *const __m128i);
            // Unsigned range checks as signed compares after a shift by 0x80.
            let digit = _mm_cmplt_epi8(
                _mm_add_epi8(v, _mm_set1_epi8((0x80u8.wrapping_sub(b'0')) as i8)),
                _mm_set1_epi8((0x80u8 + 10) as i8),
            );
            let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let letter = _mm_cmplt_epi8(
                _mm_add_epi8(lower, _mm_set1_epi8((0x80u8.wrapping_sub(b'a')) as i8)),
                _mm_set1_epi8((0x80u8 + 26) as i8),
            );
            _mm_movemask_epi8(_mm_or_si128(digit, letter)) as u32 as u64
        };
        mask |= bits << (lane * 16);
    }
    mask
}

/// The token starting at the word `text[start..word_end]`, if any.
fn token_at(text: &[u8], start: usize, word_end: usize) -> Option<Token> {
    let make = |end, uuid, form| Token {
        start,
        end,
        uuid,
        form,
    };
    if word_end - start == 8 && start + 36 <= text.len() {
        let end = start + 36;
        let bounded = text.get(end).is_none_or(|b| !b.is_ascii_alphanumeric());
        if bounded {
            if let Ok(uuid) = crate::parser::parse_canonical(&text[start..end]) {
                return Some(make(end, uuid, TokenForm::Canonical));
            }
        }
    }
    let word = &text[start..word_end];
    match word.len() {
        32 => crate::parser::parse_simple(word)
            .ok()
            .map(|u| make(word_end, u, TokenForm::Simple)),
        26 => crate::base32::decode(word)
            .ok()
            .map(|u| make(word_end, u, TokenForm::Base32)),
        crate::uuid192::BASE32_LEN => std::str::from_utf8(word)
            .ok()
            .and_then(|w| crate::uuid192::Uuid192::parse_base32(w).ok())
            .map(|k| make(word_end, k.uuid(), TokenForm::Uuid192Base32)),
        _ => None,
    }
}

/// The first 26 symbols of the Base32 form of any UUID_192 whose left 128
/// bits are `uuid`: they depend on those bits only, so a search can look for
/// them in text without knowing the segment.
///
/// ```
/// use uuidforge::uuid192::{SegmentFields, Uuid192};
/// let uuid = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// let key = Uuid192::new(uuid, SegmentFields::Raw { payload: 99 }).unwrap();
/// assert!(key.to_base32().starts_with(&uuidforge::scan::uuid192_base32_prefix(&uuid)));
/// ```
pub fn uuid192_base32_prefix(uuid: &Uuid) -> String {
    let mut bytes = [0u8; 24];
    bytes[..16].copy_from_slice(uuid.as_bytes());
    let text = crate::base32::encode_bytes(&bytes, crate::uuid192::BASE32_LEN);
    String::from_utf8(text[..26].to_vec()).expect("Base32 is ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uuid192::{SegmentFields, Uuid192};
    use proptest::prelude::*;

    const ID: Uuid = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");

    fn found(text: &str) -> Vec<(usize, usize, Uuid, TokenForm)> {
        tokens(text.as_bytes())
            .map(|t| (t.start, t.end, t.uuid, t.form))
            .collect()
    }

    #[test]
    fn every_spelling_inside_text() {
        let key = Uuid192::new(ID, SegmentFields::Raw { payload: 5 }).unwrap();
        for (text, form) in [
            ("017f22e2-79b0-7cc3-98c4-dc0c0c07398f", TokenForm::Canonical),
            (
                "x={017F22E2-79B0-7CC3-98C4-DC0C0C07398F}",
                TokenForm::Canonical,
            ),
            (
                "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f.",
                TokenForm::Canonical,
            ),
            (
                "https://h/o/017f22e279b07cc398c4dc0c0c07398f?q",
                TokenForm::Simple,
            ),
            ("\"01FWHE4YDGFK1SHH6W1G60EECF\"", TokenForm::Base32),
            ("\"01fwhe4ydgfk1shh6w1g60eecf\"", TokenForm::Base32),
            (&key.to_string(), TokenForm::Canonical),
            (&format!("k={}", key.to_base32()), TokenForm::Uuid192Base32),
        ] {
            let hits = found(text);
            assert_eq!(hits.len(), 1, "{text}: {hits:?}");
            assert_eq!(hits[0].2, ID, "{text}");
            assert_eq!(hits[0].3, form, "{text}");
        }
    }

    #[test]
    fn parts_of_longer_words_are_not_tokens() {
        for text in [
            "a017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398fa",
            "0017f22e279b07cc398c4dc0c0c07398f",
            "sha=017f22e279b07cc398c4dc0c0c07398f017f22e279b07cc398c4dc0c0c07398f",
            "X01FWHE4YDGFK1SHH6W1G60EECF",
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398",
            "",
            "-----",
        ] {
            assert!(found(text).is_empty(), "{text}: {:?}", found(text));
        }
    }

    #[test]
    fn several_tokens_in_order() {
        let text = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f,00000000-0000-0000-0000-000000000000 01FWHE4YDGFK1SHH6W1G60EECF";
        let hits = found(text);
        assert_eq!(hits.len(), 3);
        assert_eq!(hits[1].2, Uuid::nil());
        assert!(hits.windows(2).all(|w| w[0].1 <= w[1].0));
    }

    #[test]
    fn long_words_are_found_the_same_with_and_without_simd() {
        let mut text = Vec::new();
        for i in 0..4000u32 {
            let len = (i.wrapping_mul(2_654_435_761) >> 28) as usize;
            text.extend(std::iter::repeat_n(
                if i % 3 == 0 { b'Z' } else { b'7' },
                len,
            ));
            text.push([b' ', b'-', b'\xff', b'@', b'[', b'`', b'{', b'/', b':'][i as usize % 9]);
        }
        for from in 0..text.len() {
            assert_eq!(
                next_long_word(&text, from),
                next_long_word_portable(&text, from),
                "{from}"
            );
        }
    }

    proptest! {
        #[test]
        fn a_written_uuid_is_found_between_any_separators(
            bits in any::<u128>(),
            form in 0usize..4,
            before in "[ ,;:/=\"'(\\[{<>.?&#-]{0,3}[a-z ]{0,5}[ /=:]",
            after in "[ ,;/\"')\\]}<>.?&#]{1}[a-z ]{0,5}",
        ) {
            let uuid = Uuid::from_u128(bits);
            let written = match form {
                0 => crate::fmt::to_canonical_string(&uuid),
                1 => crate::fmt::to_canonical_string(&uuid).to_uppercase(),
                2 => crate::fmt::Format::Simple.to_text(&uuid),
                _ => crate::base32::encode(&uuid).as_str().to_string(),
            };
            let text = format!("{before}{written}{after}");
            let hits = found(&text);
            prop_assert_eq!(hits.len(), 1, "{}", text);
            prop_assert_eq!(hits[0].2, uuid);
            prop_assert_eq!(&text[hits[0].0..hits[0].1], written.as_str());
        }
    }
}

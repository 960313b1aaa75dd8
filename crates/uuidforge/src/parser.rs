//! Parsing every text form users paste (RFC 9562 §4: hex digits in any case;
//! braced and URN forms; plus Crockford Base32 from [`crate::base32`]).
//!
//! Each parser has a fast path that only decides valid or not, and a slow path
//! that runs only on failure to find the first offending character, so errors
//! always carry the position and the character found.

use crate::base32;
use crate::error::{InputKind, ParseError, ParseErrorKind};
use crate::fmt::Format;
use crate::hex;
use uuid::Uuid;

/// A parsed value: a UUID in one of its forms, or a UUID_192.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    /// A UUID and the form it was written in.
    Uuid(Uuid, Format),
    /// A UUID_192 (text or Base32 form), checksum verified.
    Uuid192(crate::uuid192::Uuid192),
}

impl Value {
    /// The 128-bit UUID (of a UUID_192: its left part).
    pub const fn uuid(&self) -> Uuid {
        match self {
            Value::Uuid(u, _) => *u,
            Value::Uuid192(k) => k.uuid(),
        }
    }

    /// The name of the form it was written in: a [`Format`] name, or
    /// `uuid192`.
    ///
    /// ```
    /// let v = uuidforge::parser::parse_value(b"{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}").unwrap();
    /// assert_eq!(v.form_name(), "braced");
    /// ```
    pub const fn form_name(&self) -> &'static str {
        match self {
            Value::Uuid(_, f) => f.name(),
            Value::Uuid192(_) => "uuid192",
        }
    }
}

/// The UTF-8 byte order mark that spreadsheets and some editors write at the
/// start of a text file.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// `text` without a leading UTF-8 byte order mark: every reader of lines
/// calls it on the start of its input, so the first value of a file saved by
/// a spreadsheet is read like the others. (RFC 9562 §4 text forms have no
/// BOM; RFC 3629 §6 allows one at the start of a stream.)
///
/// ```
/// use uuidforge::parser::strip_bom;
/// assert_eq!(strip_bom(b"\xEF\xBB\xBF017f22e2"), b"017f22e2");
/// assert_eq!(strip_bom(b"017f22e2"), b"017f22e2");
/// ```
pub fn strip_bom(text: &[u8]) -> &[u8] {
    text.strip_prefix(UTF8_BOM).unwrap_or(text)
}

/// Parses any UUID form or a UUID_192 (53-character text or 39-character
/// Base32), detected by length.
///
/// ```
/// use uuidforge::parser::{parse_value, Value};
/// assert!(matches!(parse_value(b"01FWHE4YDGFK1SHH6W1G60EECF").unwrap(), Value::Uuid(..)));
/// assert!(parse_value(b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f-0000000000000000").is_err()); // checksum
/// ```
pub fn parse_value(b: &[u8]) -> Result<Value, ParseError> {
    use crate::uuid192::{Uuid192, BASE32_LEN, TEXT_LEN};
    match b.len() {
        TEXT_LEN | BASE32_LEN => {
            let text = std::str::from_utf8(b).map_err(|e| {
                invalid_char(InputKind::Uuid192, b, e.valid_up_to(), "an ASCII character")
            })?;
            Uuid192::parse(text).map(Value::Uuid192)
        }
        _ => parse_detect_bytes(b)
            .map(|(u, f)| Value::Uuid(u, f))
            .map_err(|e| match e.kind {
                ParseErrorKind::InvalidLength { found, .. } => ParseError::length(
                    InputKind::Any,
                    found,
                    "36 (canonical), 32 (hex), 38 (braced), 45 (URN), 26 (Base32), 27 (Base32 with check), 53 (UUID_192) or 39 (UUID_192 Base32) characters",
                ),
                _ => e,
            }),
    }
}

const DASHES: [usize; 4] = [8, 13, 18, 23];
const EXPECTED_HEX: &str = "a hex digit";
const EXPECTED_DASH: &str = "'-'";

/// Parses any accepted form, detected by length (and prefix for the URN):
/// canonical (36), simple (32), braced (38), URN (45), Base32 (26) and
/// Base32 with check symbol (27).
///
/// ```
/// use uuidforge::parser::parse;
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// for text in ["017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "017f22e279b07cc398c4dc0c0c07398f",
///              "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
///              "URN:UUID:017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "01FWHE4YDGFK1SHH6W1G60EECF"] {
///     assert_eq!(parse(text).unwrap(), id);
/// }
/// ```
pub fn parse(text: &str) -> Result<Uuid, ParseError> {
    parse_detect(text).map(|(uuid, _)| uuid)
}

/// Like [`parse`], also telling which form the text was in.
///
/// ```
/// use uuidforge::{fmt::Format, parser::parse_detect};
/// let (_, form) = parse_detect("{00000000-0000-0000-0000-000000000000}").unwrap();
/// assert_eq!(form, Format::Braced);
/// ```
pub fn parse_detect(text: &str) -> Result<(Uuid, Format), ParseError> {
    parse_detect_bytes(text.as_bytes())
}

/// [`parse_detect`] on bytes (no UTF-8 check needed: every accepted form
/// is ASCII, and errors report the character found).
#[inline]
pub fn parse_detect_bytes(b: &[u8]) -> Result<(Uuid, Format), ParseError> {
    match b.len() {
        36 => parse_canonical(b).map(|u| (u, Format::Canonical)),
        32 => parse_simple(b).map(|u| (u, Format::Simple)),
        38 => parse_braced(b).map(|u| (u, Format::Braced)),
        45 => parse_urn(b).map(|u| (u, Format::Urn)),
        26 => base32::decode(b).map(|u| (u, Format::Base32)),
        27 => base32::decode_with_check(b).map(|u| (u, Format::Base32Check)),
        n => Err(ParseError::length(
            InputKind::Any,
            n,
            "36 (canonical), 32 (hex), 38 (braced), 45 (URN), 26 (Base32) or 27 (Base32 with check) characters",
        )),
    }
}

/// Parses `data` as a canonical UUID with every kernel this CPU has
/// (whatever `UUIDFORGE_CPU_TIER` says) and panics, naming the tier, where
/// one disagrees with the portable parser: the fuzz target calls it on
/// every input.
#[doc(hidden)]
pub fn __check_every_tier(data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if let Ok(text) = <&[u8; 36]>::try_from(data) {
        let portable = parse_canonical_portable(text).ok().map(|u| u.into_bytes());
        for (tier, parsed) in crate::x86::parse_canonical_every_tier(text) {
            assert_eq!(parsed, portable, "{tier} parses {data:?} otherwise");
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Parses the canonical 8-4-4-4-12 form, hex digits in any case.
///
/// ```
/// let id = uuidforge::parser::parse_canonical(b"ffffffff-ffff-ffff-ffff-ffffffffffff").unwrap();
/// assert!(id.is_max());
/// let err = uuidforge::parser::parse_canonical(b"ffffffff+ffff-ffff-ffff-ffffffffffff").unwrap_err();
/// assert_eq!(err.position(), Some(8));
/// ```
#[inline]
pub fn parse_canonical(text: &[u8]) -> Result<Uuid, ParseError> {
    let Ok(s) = <&[u8; 36]>::try_from(text) else {
        return Err(ParseError::length(
            InputKind::Canonical,
            text.len(),
            "36 characters",
        ));
    };
    #[cfg(target_arch = "x86_64")]
    {
        let mut bytes = core::mem::MaybeUninit::<[u8; 16]>::uninit();
        if crate::x86::parse_canonical(s, bytes.as_mut_ptr()) {
            // SAFETY: the kernel wrote all 16 bytes (it returned true).
            Ok(Uuid::from_bytes(unsafe { bytes.assume_init() }))
        } else {
            Err(locate_canonical_error(s))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    parse_canonical_portable(s)
}

/// [`parse_canonical_portable`] in the kernels' shape: the bytes to `out`,
/// true when valid.
///
/// # Safety
/// `out` is 16 writable bytes.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn parse_canonical_portable_into(s: &[u8; 36], out: *mut [u8; 16]) -> bool {
    match parse_canonical_portable(s) {
        Ok(uuid) => {
            out.write(*uuid.as_bytes());
            true
        }
        Err(_) => false,
    }
}

fn parse_canonical_portable(s: &[u8; 36]) -> Result<Uuid, ParseError> {
    let dashes_ok = s[8] == b'-' && s[13] == b'-' && s[18] == b'-' && s[23] == b'-';
    match hex::decode32(&gather_hex(s)) {
        Some(bytes) if dashes_ok => Ok(Uuid::from_bytes(bytes)),
        _ => Err(locate_canonical_error(s)),
    }
}

/// The 32 hex digits of a canonical text, dashes skipped.
#[inline]
fn gather_hex(s: &[u8; 36]) -> [u8; 32] {
    let mut h = [0u8; 32];
    h[0..8].copy_from_slice(&s[0..8]);
    h[8..12].copy_from_slice(&s[9..13]);
    h[12..16].copy_from_slice(&s[14..18]);
    h[16..20].copy_from_slice(&s[19..23]);
    h[20..32].copy_from_slice(&s[24..36]);
    h
}

/// Parses 32 hex digits without dashes.
///
/// ```
/// let id = uuidforge::parser::parse_simple(b"00000000000000000000000000000000").unwrap();
/// assert!(id.is_nil());
/// ```
#[inline]
pub fn parse_simple(text: &[u8]) -> Result<Uuid, ParseError> {
    let Ok(s) = <&[u8; 32]>::try_from(text) else {
        return Err(ParseError::length(
            InputKind::Simple,
            text.len(),
            "32 characters",
        ));
    };
    match hex::decode32(s) {
        Some(bytes) => Ok(Uuid::from_bytes(bytes)),
        None => Err(first_non_hex(s, 0, InputKind::Simple)),
    }
}

/// Parses `{8-4-4-4-12}`.
///
/// ```
/// let id = uuidforge::parser::parse_braced(b"{00000000-0000-0000-0000-000000000000}").unwrap();
/// assert!(id.is_nil());
/// ```
pub fn parse_braced(text: &[u8]) -> Result<Uuid, ParseError> {
    if text.len() != 38 {
        return Err(ParseError::length(
            InputKind::Braced,
            text.len(),
            "38 characters",
        ));
    }
    for (position, want) in [(0usize, b'{'), (37, b'}')] {
        if text[position] != want {
            return Err(invalid_char(
                InputKind::Braced,
                text,
                position,
                if want == b'{' { "'{'" } else { "'}'" },
            ));
        }
    }
    parse_canonical(&text[1..37]).map_err(|e| e.offset(1, InputKind::Braced))
}

/// Parses `urn:uuid:8-4-4-4-12`; the prefix is case-insensitive (RFC 8141).
///
/// ```
/// let id = uuidforge::parser::parse_urn(b"urn:uuid:00000000-0000-0000-0000-000000000000").unwrap();
/// assert!(id.is_nil());
/// ```
pub fn parse_urn(text: &[u8]) -> Result<Uuid, ParseError> {
    const PREFIX: &[u8; 9] = b"urn:uuid:";
    if text.len() != 45 {
        return Err(ParseError::length(
            InputKind::Urn,
            text.len(),
            "45 characters",
        ));
    }
    if let Some(position) = (0..9).find(|&i| !text[i].eq_ignore_ascii_case(&PREFIX[i])) {
        return Err(invalid_char(
            InputKind::Urn,
            text,
            position,
            "the prefix urn:uuid:",
        ));
    }
    parse_canonical(&text[9..]).map_err(|e| e.offset(9, InputKind::Urn))
}

fn locate_canonical_error(s: &[u8; 36]) -> ParseError {
    for (position, &c) in s.iter().enumerate() {
        if DASHES.contains(&position) {
            if c != b'-' {
                return invalid_char(InputKind::Canonical, s, position, EXPECTED_DASH);
            }
        } else if hex::HEX_VALUE[c as usize] == 0xff {
            return invalid_char(InputKind::Canonical, s, position, EXPECTED_HEX);
        }
    }
    unreachable!("the fast path rejected a valid canonical UUID")
}

pub(crate) fn first_non_hex(s: &[u8], offset: usize, input: InputKind) -> ParseError {
    let position = s
        .iter()
        .position(|&c| hex::HEX_VALUE[c as usize] == 0xff)
        .expect("the fast path rejected valid hex");
    invalid_char(input, s, position, EXPECTED_HEX).offset(offset, input)
}

/// An invalid-character error for byte `position` of `text`, reporting the
/// whole UTF-8 character that starts there.
pub(crate) fn invalid_char(
    input: InputKind,
    text: &[u8],
    position: usize,
    expected: &'static str,
) -> ParseError {
    let found = std::str::from_utf8(&text[position..])
        .ok()
        .and_then(|s| s.chars().next())
        .unwrap_or(text[position] as char);
    ParseError::new(
        input,
        ParseErrorKind::InvalidCharacter {
            position,
            found,
            expected,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_form_round_trips(bytes in any::<[u8; 16]>()) {
            let id = Uuid::from_bytes(bytes);
            for form in Format::ALL {
                if form == Format::Binary { continue; }
                let text = form.to_text(&id);
                prop_assert_eq!(parse_detect(&text).unwrap(), (id, form));
                prop_assert_eq!(parse(&text.to_uppercase()).unwrap(), id);
            }
        }

        #[test]
        fn agrees_with_the_uuid_crate_on_hex_forms(text in "[0-9a-fA-F{}:urnURNid-]{30,46}") {
            let ours = parse(&text).ok().filter(|_| text.len() != 26 && text.len() != 27);
            let theirs = Uuid::try_parse(&text).ok();
            if text.len() != 26 && text.len() != 27 {
                prop_assert_eq!(ours, theirs);
            }
        }

        #[test]
        fn one_bad_character_is_located(bytes in any::<[u8; 16]>(), pos in 0usize..36, bad in "[g-zG-Z!@#é]") {
            let mut text = Format::Canonical.to_text(&Uuid::from_bytes(bytes));
            let bad_char = bad.chars().next().unwrap();
            let byte_pos = pos;
            text.replace_range(byte_pos..byte_pos + 1, &bad.to_string());
            let err = parse(&text);
            // A multi-byte character changes the length, which is its own error.
            if bad_char.len_utf8() == 1 {
                let err = err.unwrap_err();
                prop_assert_eq!(err.position(), Some(pos));
                let is_bad_char = matches!(err.kind, ParseErrorKind::InvalidCharacter { found, .. } if found == bad_char);
                prop_assert!(is_bad_char);
            } else {
                prop_assert!(err.is_err());
            }
        }

        #[test]
        fn every_tier_parses_alike(bytes in any::<[u8; 16]>(), upper in any::<bool>(), flip in 0usize..40, to in any::<u8>()) {
            let mut text: [u8; 36] = if upper { crate::fmt::canonical_upper(&Uuid::from_bytes(bytes)) } else { crate::fmt::canonical(&Uuid::from_bytes(bytes)) };
            if flip < 36 { text[flip] = to; }
            let portable = parse_canonical_portable(&text);
            if flip >= 36 { prop_assert_eq!(portable.clone().unwrap(), Uuid::from_bytes(bytes)); }
            prop_assert_eq!(parse_canonical(&text), portable.clone());
            #[cfg(target_arch = "x86_64")]
            for (tier, parsed) in crate::x86::parse_canonical_every_tier(&text) {
                prop_assert_eq!(parsed, portable.clone().ok().map(|u| u.into_bytes()), "{}", tier);
            }
        }

        #[test]
        fn parsers_never_panic(text in "\\PC{0,50}") {
            let _ = parse(&text);
            let _ = parse_canonical(text.as_bytes());
            let _ = parse_braced(text.as_bytes());
            let _ = parse_urn(text.as_bytes());
            let _ = parse_simple(text.as_bytes());
        }
    }

    #[test]
    fn errors_name_position_and_character() {
        let err = parse("017f22e2-79b0-7cc3-98c4_dc0c0c07398f").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid canonical UUID (8-4-4-4-12 hex): character '_' at position 23, expected '-'"
        );
        let err = parse("{017f22e2-79b0-7cc3-98c4-dc0c0c07398x}").unwrap_err();
        assert_eq!(err.input, InputKind::Braced);
        assert_eq!(err.position(), Some(36));
        let err = parse("urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398x").unwrap_err();
        assert_eq!(err.position(), Some(44));
        let err = parse("urn:uuix:017f22e2-79b0-7cc3-98c4-dc0c0c07398f").unwrap_err();
        assert_eq!(err.position(), Some(7));
        let err = parse("017f22e2").unwrap_err();
        assert!(err.to_string().contains("length 8"), "{err}");
        let err = parse("017f22e279b07cc398c4dc0c0c07398Q").unwrap_err();
        assert_eq!(err.position(), Some(31));
    }

    #[test]
    fn rfc_sample_and_mixed_case() {
        // RFC 9562 §4: "f81d4fae-7dec-11d0-a765-00a0c91e6bf6" is 329800735698586629295641978511506172918.
        let id = parse("F81D4fAE-7dec-11D0-A765-00a0c91e6bf6").unwrap();
        assert_eq!(id.as_u128(), 329800735698586629295641978511506172918);
    }
}

//! Text and binary forms of a UUID (RFC 9562 §4) and their formatting.
//!
//! | form | example | length |
//! |---|---|---|
//! | canonical | `017f22e2-79b0-7cc3-98c4-dc0c0c07398f` | 36 |
//! | simple | `017f22e279b07cc398c4dc0c0c07398f` | 32 |
//! | braced | `{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}` | 38 |
//! | URN | `urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f` | 45 |
//! | Base32 | `01FWHE4YDGFK1SHH6W1G60EECF` | 26 |
//! | Base32 + check | `01FWHE4YDGFK1SHH6W1G60EECF` + check symbol | 27 |
//! | binary | the 16 bytes, big-endian | 16 |
//!
//! Every text form emitted here sorts like the bytes it encodes (lower-case
//! hex digits and Crockford's alphabet are both in ASCII order).

use crate::base32;
use crate::hex;
use uuid::Uuid;

/// A UUID representation that this crate can emit and parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// 8-4-4-4-12 hex, lower case (RFC 9562 §4).
    Canonical,
    /// 32 hex digits without dashes.
    Simple,
    /// `{8-4-4-4-12}` as Microsoft and Python print it.
    Braced,
    /// `urn:uuid:` followed by the canonical form (RFC 9562 §4).
    Urn,
    /// Crockford Base32, 26 characters, identical to ULID text.
    Base32,
    /// Crockford Base32 followed by its mod-37 check symbol (27 characters).
    Base32Check,
    /// The 16 raw bytes.
    Binary,
}

impl Format {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [Format; 7] = [
        Format::Canonical,
        Format::Simple,
        Format::Braced,
        Format::Urn,
        Format::Base32,
        Format::Base32Check,
        Format::Binary,
    ];

    /// The name used on the command line and in JSON.
    ///
    /// ```
    /// assert_eq!(uuidforge::fmt::Format::Base32Check.name(), "base32-check");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Format::Canonical => "canonical",
            Format::Simple => "simple",
            Format::Braced => "braced",
            Format::Urn => "urn",
            Format::Base32 => "base32",
            Format::Base32Check => "base32-check",
            Format::Binary => "binary",
        }
    }

    /// Looks a format up by [`Format::name`] (case-insensitive).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// Appends `uuid` in this format to `out`, lower case. [`Format::Binary`]
    /// appends the 16 raw bytes.
    ///
    /// ```
    /// use uuidforge::fmt::Format;
    /// let id = uuid::Uuid::max();
    /// let mut out = Vec::new();
    /// Format::Urn.write(&id, &mut out);
    /// assert_eq!(out, b"urn:uuid:ffffffff-ffff-ffff-ffff-ffffffffffff");
    /// ```
    pub fn write(self, uuid: &Uuid, out: &mut Vec<u8>) {
        match self {
            Format::Canonical => out.extend_from_slice(&canonical(uuid)),
            Format::Simple => out.extend_from_slice(&simple(uuid)),
            Format::Braced => {
                out.push(b'{');
                out.extend_from_slice(&canonical(uuid));
                out.push(b'}');
            }
            Format::Urn => {
                out.extend_from_slice(b"urn:uuid:");
                out.extend_from_slice(&canonical(uuid));
            }
            Format::Base32 => out.extend_from_slice(base32::encode(uuid).as_bytes()),
            Format::Base32Check => out.extend_from_slice(&base32::encode_with_check(uuid)),
            Format::Binary => out.extend_from_slice(uuid.as_bytes()),
        }
    }

    /// `uuid` in this text format as a `String`; [`Format::Binary`] gives
    /// the bytes as 32 hex digits.
    pub fn to_text(self, uuid: &Uuid) -> String {
        let mut out = Vec::with_capacity(48);
        match self {
            Format::Binary => Format::Simple.write(uuid, &mut out),
            _ => self.write(uuid, &mut out),
        }
        String::from_utf8(out).expect("every text form is ASCII")
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The canonical 8-4-4-4-12 form in lower case, as bytes (RFC 9562 §4).
///
/// ```
/// let id = uuid::uuid!("017F22E2-79B0-7CC3-98C4-DC0C0C07398F");
/// assert_eq!(&uuidforge::fmt::canonical(&id), b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// ```
#[inline]
pub fn canonical(uuid: &Uuid) -> [u8; 36] {
    dash(&hex::encode32(uuid.as_bytes(), false))
}

/// The canonical form in upper case.
///
/// ```
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// assert_eq!(&uuidforge::fmt::canonical_upper(&id), b"017F22E2-79B0-7CC3-98C4-DC0C0C07398F");
/// ```
#[inline]
pub fn canonical_upper(uuid: &Uuid) -> [u8; 36] {
    dash(&hex::encode32(uuid.as_bytes(), true))
}

/// 32 lower-case hex digits without dashes.
///
/// ```
/// let id = uuid::Uuid::nil();
/// assert_eq!(&uuidforge::fmt::simple(&id), &[b'0'; 32]);
/// ```
#[inline]
pub fn simple(uuid: &Uuid) -> [u8; 32] {
    hex::encode32(uuid.as_bytes(), false)
}

/// Inserts the four dashes of the 8-4-4-4-12 grouping.
#[inline]
fn dash(h: &[u8; 32]) -> [u8; 36] {
    let mut out = [b'-'; 36];
    out[0..8].copy_from_slice(&h[0..8]);
    out[9..13].copy_from_slice(&h[8..12]);
    out[14..18].copy_from_slice(&h[12..16]);
    out[19..23].copy_from_slice(&h[16..20]);
    out[24..36].copy_from_slice(&h[20..32]);
    out
}

/// The canonical form as a `String` (convenience over [`canonical`]).
///
/// ```
/// assert_eq!(uuidforge::fmt::to_canonical_string(&uuid::Uuid::nil()),
///            "00000000-0000-0000-0000-000000000000");
/// ```
pub fn to_canonical_string(uuid: &Uuid) -> String {
    String::from_utf8(canonical(uuid).to_vec()).expect("hex is ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn canonical_matches_the_uuid_crate(bytes in any::<[u8; 16]>()) {
            let id = Uuid::from_bytes(bytes);
            let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
            prop_assert_eq!(text(&canonical(&id)), id.hyphenated().to_string());
            prop_assert_eq!(text(&canonical_upper(&id)), id.hyphenated().to_string().to_uppercase());
            prop_assert_eq!(text(&simple(&id)), id.simple().to_string());
            prop_assert_eq!(Format::Braced.to_text(&id), id.braced().to_string());
            prop_assert_eq!(Format::Urn.to_text(&id), id.urn().to_string());
        }

        #[test]
        fn hex_text_sorts_like_bytes(a in any::<[u8; 16]>(), b in any::<[u8; 16]>()) {
            let (x, y) = (Uuid::from_bytes(a), Uuid::from_bytes(b));
            prop_assert_eq!(a.cmp(&b), canonical(&x).cmp(&canonical(&y)));
            prop_assert_eq!(a.cmp(&b), simple(&x).cmp(&simple(&y)));
        }
    }

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
            assert_eq!(Format::from_name(&f.name().to_uppercase()), Some(f));
        }
        assert_eq!(Format::from_name("hex"), None);
    }
}

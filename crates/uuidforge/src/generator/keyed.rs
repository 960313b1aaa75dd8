//! Keyed constructions: deterministic backfill (E8) and reversible
//! timestamp hiding (E10).

use crate::bits::{self, mask};
use crate::error::FieldError;
use crate::timestamp::IntoUnixMs;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use uuid::Uuid;

type HmacSha256 = Hmac<Sha256>;

fn hmac(secret: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes any key length");
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// The same UUIDv7 for the same `(at, stable_key, secret)` on every run
/// (E8): the timestamp is `at`'s millisecond (Unix milliseconds, a
/// `SystemTime` or a chrono `DateTime`: [`IntoUnixMs`]), the 74 other bits are
/// HMAC-SHA256(secret, "uuidforge/v7_from" ‖ unix_ms ‖ key). UUIDs sort by
/// time, then by that keyed hash; without the secret the bits cannot be
/// predicted from the key. What a re-runnable migration needs (D1).
///
/// ```
/// use uuidforge::generator::v7_from;
/// let a = v7_from(1_645_557_742_000u64, b"orders:42", b"secret").unwrap();
/// assert_eq!(a, v7_from(1_645_557_742_000u64, b"orders:42", b"secret").unwrap());
/// assert_ne!(a, v7_from(1_645_557_742_000u64, b"orders:43", b"secret").unwrap());
/// assert!(a < v7_from(1_645_557_742_001u64, b"orders:1", b"secret").unwrap());
/// let placed = chrono::DateTime::parse_from_rfc3339("2022-02-22T19:22:22Z").unwrap();
/// assert_eq!(v7_from(placed, b"orders:42", b"secret").unwrap(), a);
/// ```
pub fn v7_from(at: impl IntoUnixMs, stable_key: &[u8], secret: &[u8]) -> Result<Uuid, FieldError> {
    let unix_ms = at.into_unix_ms()?;
    crate::v7::from_unix_ms(unix_ms, 0, 0)?;
    let h = hmac(
        secret,
        &[b"uuidforge/v7_from", &unix_ms.to_be_bytes(), stable_key],
    );
    let x = u128::from_be_bytes(h[..16].try_into().expect("16 bytes"));
    Ok(crate::v7::from_fields_masked(
        unix_ms,
        (x >> 116) as u16,
        (x as u64) & crate::v7::MAX_RAND_B,
    ))
}

/// [`v7_from`] without a secret, for backfills whose keys need not be
/// unpredictable (E8; the SQL `uuidv7_from(timestamptz, text|bytea)` and
/// `uuidforge gen --at T --key K`): the key material is the HMAC-SHA256 key
/// of zero bytes over `"uuidforge/v7_from"` ‖ `unix_ms` as 8 bytes big-endian
/// ‖ the key's bytes (UTF-8 for text). Anyone can recompute it from the time
/// and the key, which is the point of a re-runnable backfill; use
/// [`v7_from`] with a secret when the key must not be guessable. UUIDs sort
/// by time, then by that hash of the key.
///
/// ```
/// use uuidforge::generator::{v7_from, v7_from_key};
/// let a = v7_from_key(1_645_557_742_000u64, b"orders:42").unwrap();
/// assert_eq!(a, v7_from(1_645_557_742_000u64, b"orders:42", b"").unwrap());
/// // Recomputed outside Rust (Python's hmac module) from the material above:
/// assert_eq!(a.to_string(), "017f22e2-79b0-7496-923e-225cc233cada");
/// ```
pub fn v7_from_key(at: impl IntoUnixMs, key: &[u8]) -> Result<Uuid, FieldError> {
    v7_from(at, key, b"")
}

/// Like [`v7_from`] for an integer key (an old `bigint` primary key), ordered
/// by time, then by the key: `rand_a` and the top 52 bits of `rand_b` hold
/// the key big-endian, the last 10 bits a keyed hash. The key is readable in
/// the UUID; hide it with [`TimestampHider`] if that matters.
///
/// ```
/// use uuidforge::generator::v7_from_ordered;
/// let (a, b) = (v7_from_ordered(7u64, 1, b"k").unwrap(), v7_from_ordered(7u64, 2, b"k").unwrap());
/// assert!(a < b);
/// ```
pub fn v7_from_ordered(at: impl IntoUnixMs, key: u64, secret: &[u8]) -> Result<Uuid, FieldError> {
    let unix_ms = at.into_unix_ms()?;
    crate::v7::from_unix_ms(unix_ms, 0, 0)?;
    let h = hmac(
        secret,
        &[
            b"uuidforge/v7_from_ordered",
            &unix_ms.to_be_bytes(),
            &key.to_be_bytes(),
        ],
    );
    let tail = (u16::from_be_bytes([h[0], h[1]]) & 0x3ff) as u64;
    let rand_b = ((key & mask(52) as u64) << 10) | tail;
    Ok(crate::v7::from_fields_masked(
        unix_ms,
        (key >> 52) as u16,
        rand_b,
    ))
}

/// A keyed, reversible permutation between UUIDv7 and v4-shaped values
/// (E10): inside a system keys stay time-ordered v7; outside they look
/// random and reveal no creation time.
///
/// Construction: the 122 bits other than version and variant are split into
/// two 61-bit halves and run through an 8-round Feistel network whose round
/// function is HMAC-SHA256(key, round ‖ half) truncated to 61 bits; the
/// version is then set to 4 (hide) or 7 (reveal). A Feistel network with a
/// pseudo-random round function is a strong pseudo-random permutation from 4
/// rounds on (Luby–Rackoff); HMAC-SHA256 is a PRF, and 8 rounds leave a
/// margin. So without the key a hidden value is indistinguishable from a
/// random v4, and with it every value maps back exactly. Unlike a constant
/// shift (B12), it hides the order and the time entirely. Cost: 8 HMACs
/// (about 4 µs) per call.
///
/// ```
/// use uuidforge::generator::TimestampHider;
/// let hider = TimestampHider::new(b"a 32-byte or longer secret key..");
/// let id = uuidforge::v7();
/// let outside = hider.hide(&id).unwrap();
/// assert_eq!(outside.get_version_num(), 4);
/// assert_eq!(hider.reveal(&outside).unwrap(), id);
/// ```
pub struct TimestampHider {
    key: Vec<u8>,
}

const ROUNDS: u8 = 8;

/// The size of a hiding key (E10): 32 random bytes, the HMAC-SHA256 block's
/// worth of secret. Key files hold exactly this many bytes.
pub const HIDE_KEY_BYTES: usize = 32;

impl TimestampHider {
    /// A hider with a secret key (use at least 32 random bytes; front ends
    /// go through [`TimestampHider::with_key`], which insists).
    pub fn new(key: &[u8]) -> TimestampHider {
        TimestampHider { key: key.to_vec() }
    }

    /// A hider whose key is checked: at least [`HIDE_KEY_BYTES`] bytes, else
    /// an error naming the field `key`.
    ///
    /// ```
    /// use uuidforge::generator::TimestampHider;
    /// assert!(TimestampHider::with_key(&[9u8; 32]).is_ok());
    /// assert_eq!(TimestampHider::with_key(b"short").err().unwrap().field, "key");
    /// ```
    pub fn with_key(key: &[u8]) -> Result<TimestampHider, FieldError> {
        if key.len() < HIDE_KEY_BYTES {
            return Err(FieldError::new(
                "key",
                format!("{} bytes", key.len()),
                format!("at least {HIDE_KEY_BYTES} random bytes"),
            ));
        }
        Ok(TimestampHider::new(key))
    }

    /// A hider from the bytes of a key file: exactly [`HIDE_KEY_BYTES`]
    /// raw bytes (not hex, no newline), as `uuidforge hide --new-key`
    /// writes them; any other length is refused, since a file of another
    /// kind given by mistake would otherwise become a key.
    ///
    /// ```
    /// use uuidforge::generator::TimestampHider;
    /// assert!(TimestampHider::from_key_file(&[7u8; 32]).is_ok());
    /// let e = TimestampHider::from_key_file(b"0123456789abcdef0123456789abcdef\n").err().unwrap();
    /// assert_eq!((e.field, e.value.as_str()), ("key file", "33 bytes"));
    /// ```
    pub fn from_key_file(bytes: &[u8]) -> Result<TimestampHider, FieldError> {
        if bytes.len() != HIDE_KEY_BYTES {
            return Err(FieldError::new(
                "key file",
                format!("{} bytes", bytes.len()),
                format!("exactly {HIDE_KEY_BYTES} raw bytes (make one with `uuidforge hide --new-key FILE`)"),
            ));
        }
        Ok(TimestampHider::new(bytes))
    }

    fn round(&self, i: u8, half: u64) -> u64 {
        let h = hmac(&self.key, &[b"uuidforge/hide", &[i], &half.to_be_bytes()]);
        u64::from_be_bytes(h[..8].try_into().expect("8 bytes")) & mask(61) as u64
    }

    fn payload(u: &Uuid) -> u128 {
        let v = u.as_u128();
        (bits::get(v, 0, 48) << 74) | (bits::get(v, 52, 12) << 62) | bits::get(v, 66, 62)
    }

    fn with_payload(p: u128, version: u8) -> Uuid {
        Uuid::from_u128(bits::assemble(
            version,
            (p >> 74) as u64,
            ((p >> 62) & 0xfff) as u16,
            (p & mask(62)) as u64,
        ))
    }

    fn check(u: &Uuid, version: usize) -> Result<(), FieldError> {
        if u.get_version_num() != version || u.get_variant() != uuid::Variant::RFC4122 {
            return Err(FieldError::new(
                "uuid",
                u,
                format!("an RFC 9562 version {version} UUID"),
            ));
        }
        Ok(())
    }

    /// Maps a UUIDv7 to its v4-shaped outside form.
    pub fn hide(&self, u: &Uuid) -> Result<Uuid, FieldError> {
        Self::check(u, 7)?;
        let p = Self::payload(u);
        let (mut l, mut r) = ((p >> 61) as u64, (p & mask(61)) as u64);
        for i in 0..ROUNDS {
            (l, r) = (r, l ^ self.round(i, r));
        }
        Ok(Self::with_payload(((l as u128) << 61) | r as u128, 4))
    }

    /// Maps an outside form back to the UUIDv7.
    pub fn reveal(&self, u: &Uuid) -> Result<Uuid, FieldError> {
        Self::check(u, 4)?;
        let p = Self::payload(u);
        let (mut l, mut r) = ((p >> 61) as u64, (p & mask(61)) as u64);
        for i in (0..ROUNDS).rev() {
            (l, r) = (r ^ self.round(i, l), l);
        }
        Ok(Self::with_payload(((l as u128) << 61) | r as u128, 7))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn hiding_round_trips(ms in 0..=crate::v7::MAX_UNIX_MS, a in 0u16..4096, b in 0..=crate::v7::MAX_RAND_B, key in any::<[u8; 32]>()) {
            let id = crate::v7::from_unix_ms(ms, a, b).unwrap();
            let h = TimestampHider::new(&key);
            let out = h.hide(&id).unwrap();
            prop_assert_eq!(out.get_version_num(), 4);
            prop_assert_eq!(out.get_variant(), uuid::Variant::RFC4122);
            prop_assert_eq!(h.reveal(&out).unwrap(), id);
            prop_assert_ne!(TimestampHider::new(b"other key").reveal(&out).unwrap(), id);
        }

        #[test]
        fn backfill_is_deterministic_and_time_ordered(ms in 0u64..(1 << 47), k1 in any::<u64>(), k2 in any::<u64>()) {
            let a = v7_from(ms, &k1.to_be_bytes(), b"s").unwrap();
            prop_assert_eq!(a, v7_from(ms, &k1.to_be_bytes(), b"s").unwrap());
            prop_assert!(a < v7_from(ms + 1, &k2.to_be_bytes(), b"s").unwrap());
            let (x, y) = (v7_from_ordered(ms, k1, b"s").unwrap(), v7_from_ordered(ms, k2, b"s").unwrap());
            prop_assert_eq!(k1.cmp(&k2), x.cmp(&y));
            prop_assert!(x < v7_from_ordered(ms + 1, 0, b"s").unwrap());
        }
    }

    #[test]
    fn hidden_times_do_not_keep_order_and_errors_name_the_value() {
        let h = TimestampHider::new(&[7u8; 32]);
        let ids: Vec<Uuid> = (0..64)
            .map(|i| crate::v7::from_unix_ms(1_700_000_000_000 + i, 0, 0).unwrap())
            .collect();
        let hidden: Vec<Uuid> = ids.iter().map(|u| h.hide(u).unwrap()).collect();
        assert!(
            !hidden.windows(2).all(|w| w[0] < w[1]),
            "hidden values must not be time-ordered"
        );
        let err = h.hide(&Uuid::nil()).unwrap_err();
        assert_eq!(err.field, "uuid");
        assert!(h.reveal(&ids[0]).is_err());
        assert!(v7_from(1 << 48, b"k", b"s").is_err());
    }
}

//! UUIDv7 in the RFC 9562 layout (§5.7): 48-bit Unix milliseconds, then 74
//! bits that are random, or hold a sub-millisecond fraction (§6.2 Method 3)
//! and/or a counter (Methods 1 and 2), filled most significant first.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                           unix_ts_ms                          |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          unix_ts_ms           |  ver  |       rand_a          |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |var|                        rand_b                             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                            rand_b                             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use crate::bits;
use crate::error::FieldError;
use crate::timestamp::{Precision, Timestamp};
use uuid::Uuid;

/// Largest `unix_ts_ms`: year 10889 (RFC 9562 §6.1).
pub const MAX_UNIX_MS: u64 = (1 << 48) - 1;
/// Largest `rand_b` (62 bits).
pub const MAX_RAND_B: u64 = (1 << 62) - 1;

/// Builds a UUIDv7 from its three fields, checking each range.
///
/// ```
/// // RFC 9562 A.6
/// let id = uuidforge::v7::from_unix_ms(0x017F22E279B0, 0xCC3, 0x18C4DC0C0C07398F).unwrap();
/// assert_eq!(id, uuid::uuid!("017F22E2-79B0-7CC3-98C4-DC0C0C07398F"));
/// ```
pub fn from_unix_ms(unix_ts_ms: u64, rand_a: u16, rand_b: u64) -> Result<Uuid, FieldError> {
    FieldError::check_max("unix_ts_ms", unix_ts_ms as u128, MAX_UNIX_MS as u128)?;
    FieldError::check_max("rand_a", rand_a as u128, 0xfff)?;
    FieldError::check_max("rand_b", rand_b as u128, MAX_RAND_B as u128)?;
    Ok(from_fields_masked(unix_ts_ms, rand_a, rand_b))
}

/// Builds a UUIDv7 keeping only the low 48, 12 and 62 bits of the fields.
/// For callers that guarantee the ranges (generators); others should use
/// [`from_unix_ms`].
///
/// ```
/// const ID: uuid::Uuid = uuidforge::v7::from_fields_masked(1, 0, 0);
/// assert_eq!(ID.to_string(), "00000000-0001-7000-8000-000000000000");
/// ```
#[inline]
pub const fn from_fields_masked(unix_ts_ms: u64, rand_a: u16, rand_b: u64) -> Uuid {
    Uuid::from_u128(bits::assemble(7, unix_ts_ms & MAX_UNIX_MS, rand_a, rand_b))
}

/// The 48-bit millisecond timestamp of a v7 UUID (no version check).
#[inline]
pub const fn unix_ms(uuid: &Uuid) -> u64 {
    bits::get(uuid.as_u128(), 0, 48) as u64
}

/// The 12-bit `rand_a` field.
#[inline]
pub const fn rand_a(uuid: &Uuid) -> u16 {
    bits::get(uuid.as_u128(), 52, 12) as u16
}

/// The 62-bit `rand_b` field.
#[inline]
pub const fn rand_b(uuid: &Uuid) -> u64 {
    bits::get(uuid.as_u128(), 66, 62) as u64
}

/// The instant of a UUIDv7 at millisecond precision; errors if the version
/// is not 7.
///
/// ```
/// let id = uuid::uuid!("017F22E2-79B0-7CC3-98C4-DC0C0C07398F");
/// assert_eq!(uuidforge::v7::timestamp(&id).unwrap().to_string(), "2022-02-22T19:22:22.000Z");
/// ```
pub fn timestamp(uuid: &Uuid) -> Result<Timestamp, FieldError> {
    if uuid.get_version_num() != 7 {
        return Err(FieldError::new("version", uuid.get_version_num(), "7"));
    }
    Ok(Timestamp::from_unix_ms(unix_ms(uuid)))
}

/// Method 3 (RFC 9562 §6.2): `floor(fraction_of_ms × 2^bits)` for the
/// nanoseconds within a millisecond.
///
/// ```
/// // The RFC's example: 0.4567 ms -> 1870 = 0x74E.
/// assert_eq!(uuidforge::v7::submillis_fraction(456_700, 12).unwrap(), 0x74E);
/// ```
pub fn submillis_fraction(nanos_in_ms: u32, bits: u8) -> Result<u16, FieldError> {
    FieldError::check_max("nanos_in_ms", nanos_in_ms as u128, 999_999)?;
    if !(1..=12).contains(&bits) {
        return Err(FieldError::new("fraction bits", bits, "1..=12"));
    }
    Ok(((nanos_in_ms as u64) << bits).div_euclid(1_000_000) as u16)
}

/// Inverse of [`submillis_fraction`]: the smallest nanosecond count that
/// encodes to `fraction`, so that encoding the result gives `fraction` back.
///
/// ```
/// assert_eq!(uuidforge::v7::fraction_to_nanos(0x74E, 12), 456_543);
/// assert_eq!(uuidforge::v7::submillis_fraction(456_543, 12).unwrap(), 0x74E);
/// ```
pub const fn fraction_to_nanos(fraction: u16, bits: u8) -> u32 {
    ((fraction as u64 * 1_000_000).div_ceil(1 << bits)) as u32
}

/// Builds a UUIDv7 with a Method 3 sub-millisecond fraction of `bits` bits
/// right after the timestamp, then `tail` (the remaining `74 - bits` bits:
/// counter and/or random) filling the rest, most significant first.
///
/// ```
/// // PostgreSQL 18 layout: 12-bit fraction, 62 random bits.
/// let unix_ns = 1_645_557_742_000_456_700u64;
/// let id = uuidforge::v7::from_unix_ns_method3(unix_ns, 12, 0).unwrap();
/// assert_eq!(uuidforge::v7::rand_a(&id), 0x74E);
/// let t = uuidforge::v7::timestamp_method3(&id, 12);
/// assert_eq!(t.to_string(), "2022-02-22T19:22:22.0004565Z");
/// ```
pub fn from_unix_ns_method3(unix_ns: u64, bits: u8, tail: u128) -> Result<Uuid, FieldError> {
    let ms = unix_ns / 1_000_000;
    FieldError::check_max("unix_ts_ms", ms as u128, MAX_UNIX_MS as u128)?;
    let fraction = submillis_fraction((unix_ns % 1_000_000) as u32, bits)?;
    let tail_bits = 74 - bits as u32;
    FieldError::check_max("tail", tail, bits::mask(tail_bits))?;
    let payload74 = ((fraction as u128) << tail_bits) | tail;
    let rand_a = (payload74 >> 62) as u16;
    let rand_b = (payload74 & bits::mask(62)) as u64;
    Ok(from_fields_masked(ms, rand_a, rand_b))
}

/// The instant of a v7 whose first `bits` bits of `rand_a` hold a Method 3
/// fraction (PostgreSQL 18 writes 12).
pub fn timestamp_method3(uuid: &Uuid, bits: u8) -> Timestamp {
    let bits = bits.clamp(1, 12);
    let fraction = rand_a(uuid) >> (12 - bits);
    let nanos = fraction_to_nanos(fraction, bits) as i128;
    Timestamp::new(
        unix_ms(uuid) as i128 * 1_000_000 + nanos,
        Precision::MillisecondFraction { bits },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fields_round_trip(ms in 0..=MAX_UNIX_MS, a in 0u16..4096, b in 0..=MAX_RAND_B) {
            let id = from_unix_ms(ms, a, b).unwrap();
            prop_assert_eq!(id.get_version_num(), 7);
            prop_assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
            prop_assert_eq!((unix_ms(&id), rand_a(&id), rand_b(&id)), (ms, a, b));
        }

        #[test]
        fn method3_round_trips_through_decode(ns in 0u32..1_000_000, bits in 1u8..=12) {
            let f = submillis_fraction(ns, bits).unwrap();
            prop_assert!(f < (1 << bits));
            let back = fraction_to_nanos(f, bits);
            prop_assert!(back <= ns);
            prop_assert_eq!(submillis_fraction(back, bits).unwrap(), f);
        }

        #[test]
        fn method3_sorts_by_time(a in 0u64..(1 << 50), b in 0u64..(1 << 50)) {
            let x = from_unix_ns_method3(a, 12, 0).unwrap();
            let y = from_unix_ns_method3(b, 12, 0).unwrap();
            if x != y { prop_assert_eq!(a.cmp(&b), x.cmp(&y)); }
        }
    }

    #[test]
    fn ranges_are_checked() {
        assert_eq!(from_unix_ms(0, 0x1000, 0).unwrap_err().field, "rand_a");
        assert_eq!(from_unix_ms(0, 0, 1 << 62).unwrap_err().field, "rand_b");
        assert_eq!(
            submillis_fraction(1_000_000, 12).unwrap_err().field,
            "nanos_in_ms"
        );
        assert_eq!(
            submillis_fraction(0, 13).unwrap_err().field,
            "fraction bits"
        );
        assert_eq!(
            from_unix_ns_method3(0, 12, 1 << 62).unwrap_err().field,
            "tail"
        );
        let v4 = uuid::uuid!("919108f7-52d1-4320-9bac-f847db4148a8");
        assert_eq!(
            timestamp(&v4).unwrap_err().to_string(),
            "invalid version: 4, expected 7"
        );
    }

    #[test]
    fn sorts_as_bytes_and_text() {
        let a = from_unix_ms(1, 0xfff, MAX_RAND_B).unwrap();
        let b = from_unix_ms(2, 0, 0).unwrap();
        assert!(a < b);
        assert!(a.to_string() < b.to_string());
    }
}

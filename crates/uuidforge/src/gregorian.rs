//! UUIDv1 and UUIDv6: the 60-bit Gregorian timestamp (100-ns ticks since
//! 1582-10-15), a 14-bit clock sequence and a 48-bit node (RFC 9562 §5.1,
//! §5.6). v6 stores the same timestamp most-significant first so it sorts by
//! time; conversion between the two only moves the timestamp bits (draft
//! Table 3).
//!
//! ```text
//! UUIDv1                                   UUIDv6
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  v1: time_low (ts bits 28..59)  /  v6: time_high (ts bits 0..31) |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |       time_mid (16)           |  ver  | v1: time_high / v6: low |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |var|     clock_seq (14)        |          node (48)            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          node (cont.)                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use crate::bits;
use crate::error::FieldError;
use crate::timestamp::Timestamp;
use uuid::Uuid;

/// The fields shared by v1 and v6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GregorianFields {
    /// 60-bit count of 100-ns ticks since 1582-10-15T00:00:00Z.
    pub ticks: u64,
    /// 14-bit clock sequence.
    pub clock_seq: u16,
    /// 48-bit node.
    pub node: u64,
}

impl GregorianFields {
    /// The instant, at 100-ns precision.
    pub const fn timestamp(&self) -> Timestamp {
        Timestamp::from_gregorian_ticks(self.ticks)
    }

    fn check(&self) -> Result<(), FieldError> {
        FieldError::check_max(
            "timestamp (100-ns Gregorian ticks)",
            self.ticks as u128,
            (1 << 60) - 1,
        )?;
        FieldError::check_max("clock_seq", self.clock_seq as u128, (1 << 14) - 1)?;
        FieldError::check_max("node", self.node as u128, (1 << 48) - 1)
    }

    /// Clock sequence and node as bits 64..128 with the variant.
    const fn tail(&self) -> u128 {
        (0b10u128 << 62)
            | ((self.clock_seq as u128 & 0x3fff) << 48)
            | (self.node as u128 & bits::mask(48))
    }
}

/// Builds a UUIDv1 from its fields (RFC 9562 §5.1), through the `uuid` crate.
///
/// ```
/// use uuidforge::gregorian::{v1_from_fields, GregorianFields};
/// // RFC 9562 A.1
/// let f = GregorianFields { ticks: 0x1EC9414C232AB00, clock_seq: 0x33C8, node: 0x9F6BDECED846 };
/// assert_eq!(v1_from_fields(f).unwrap(), uuid::uuid!("C232AB00-9414-11EC-B3C8-9F6BDECED846"));
/// ```
pub fn v1_from_fields(f: GregorianFields) -> Result<Uuid, FieldError> {
    f.check()?;
    let ts = uuid::Timestamp::from_gregorian_time(f.ticks, f.clock_seq);
    Ok(Uuid::new_v1(ts, &node_bytes(f.node)))
}

/// Builds a UUIDv6 from its fields (RFC 9562 §5.6), through the `uuid` crate.
///
/// ```
/// use uuidforge::gregorian::{v6_from_fields, GregorianFields};
/// // RFC 9562 A.5
/// let f = GregorianFields { ticks: 0x1EC9414C232AB00, clock_seq: 0x33C8, node: 0x9F6BDECED846 };
/// assert_eq!(v6_from_fields(f).unwrap(), uuid::uuid!("1EC9414C-232A-6B00-B3C8-9F6BDECED846"));
/// ```
pub fn v6_from_fields(f: GregorianFields) -> Result<Uuid, FieldError> {
    f.check()?;
    let ts = uuid::Timestamp::from_gregorian_time(f.ticks, f.clock_seq);
    Ok(Uuid::new_v6(ts, &node_bytes(f.node)))
}

fn node_bytes(node: u64) -> [u8; 6] {
    let b = node.to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// The fields of a v1 UUID (the version is not checked: see [`v1_fields`]).
const fn v1_fields_unchecked(u: u128) -> GregorianFields {
    let time_low = bits::get(u, 0, 32) as u64;
    let time_mid = bits::get(u, 32, 16) as u64;
    let time_high = bits::get(u, 52, 12) as u64;
    GregorianFields {
        ticks: (time_high << 48) | (time_mid << 32) | time_low,
        clock_seq: bits::get(u, 66, 14) as u16,
        node: bits::get(u, 80, 48) as u64,
    }
}

const fn v6_fields_unchecked(u: u128) -> GregorianFields {
    GregorianFields {
        ticks: ((bits::get(u, 0, 48) as u64) << 12) | bits::get(u, 52, 12) as u64,
        clock_seq: bits::get(u, 66, 14) as u16,
        node: bits::get(u, 80, 48) as u64,
    }
}

fn require_version(uuid: &Uuid, version: usize) -> Result<u128, FieldError> {
    if uuid.get_version_num() != version {
        return Err(FieldError::new(
            "version",
            uuid.get_version_num(),
            format!("{version}"),
        ));
    }
    Ok(uuid.as_u128())
}

/// Decodes a UUIDv1; errors if the version is not 1.
///
/// ```
/// let f = uuidforge::gregorian::v1_fields(&uuid::uuid!("C232AB00-9414-11EC-B3C8-9F6BDECED846")).unwrap();
/// assert_eq!((f.ticks, f.clock_seq, f.node), (0x1EC9414C232AB00, 0x33C8, 0x9F6BDECED846));
/// ```
pub fn v1_fields(uuid: &Uuid) -> Result<GregorianFields, FieldError> {
    require_version(uuid, 1).map(v1_fields_unchecked)
}

/// Decodes a UUIDv6; errors if the version is not 6.
///
/// ```
/// let f = uuidforge::gregorian::v6_fields(&uuid::uuid!("1EC9414C-232A-6B00-B3C8-9F6BDECED846")).unwrap();
/// assert_eq!(f.timestamp().to_string(), "2022-02-22T19:22:22.0000000Z");
/// ```
pub fn v6_fields(uuid: &Uuid) -> Result<GregorianFields, FieldError> {
    require_version(uuid, 6).map(v6_fields_unchecked)
}

/// Converts a UUIDv1 into the UUIDv6 of the same instant, clock sequence and
/// node (draft Table 3).
///
/// ```
/// use uuidforge::gregorian::{v1_to_v6, v6_to_v1};
/// let v1 = uuid::uuid!("C232AB00-9414-11EC-B3C8-9F6BDECED846");
/// let v6 = v1_to_v6(&v1).unwrap();
/// assert_eq!(v6, uuid::uuid!("1EC9414C-232A-6B00-B3C8-9F6BDECED846"));
/// assert_eq!(v6_to_v1(&v6).unwrap(), v1);
/// ```
pub fn v1_to_v6(uuid: &Uuid) -> Result<Uuid, FieldError> {
    let f = v1_fields(uuid)?;
    let head =
        ((f.ticks as u128 >> 12) << 80) | (0x6u128 << 76) | ((f.ticks as u128 & 0xfff) << 64);
    // Keep the variant bits as they were: conversion moves timestamp bits only.
    Ok(Uuid::from_u128(head | (uuid.as_u128() & bits::mask(64))))
}

/// Converts a UUIDv6 back into the UUIDv1 of the same instant, clock
/// sequence and node.
pub fn v6_to_v1(uuid: &Uuid) -> Result<Uuid, FieldError> {
    let f = v6_fields(uuid)?;
    let t = f.ticks as u128;
    let head = ((t & bits::mask(32)) << 96)
        | (((t >> 32) & 0xffff) << 80)
        | (0x1u128 << 76)
        | ((t >> 48) << 64);
    Ok(Uuid::from_u128(head | (uuid.as_u128() & bits::mask(64))))
}

/// A v6 UUID from fields, assembled bit by bit (used by the generator, which
/// must not go through the `uuid` crate's clock).
pub const fn v6_from_fields_raw(f: GregorianFields) -> Uuid {
    let head =
        ((f.ticks as u128 >> 12) << 80) | (0x6u128 << 76) | ((f.ticks as u128 & 0xfff) << 64);
    Uuid::from_u128(head | f.tail())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn v1_v6_round_trip(ticks in 0u64..(1 << 60), clock_seq in 0u16..(1 << 14), node in 0u64..(1 << 48)) {
            let f = GregorianFields { ticks, clock_seq, node };
            let v1 = v1_from_fields(f).unwrap();
            let v6 = v6_from_fields(f).unwrap();
            prop_assert_eq!(v6_from_fields_raw(f), v6);
            prop_assert_eq!(v1_to_v6(&v1).unwrap(), v6);
            prop_assert_eq!(v6_to_v1(&v6).unwrap(), v1);
            prop_assert_eq!(v1_fields(&v1).unwrap(), f);
            prop_assert_eq!(v6_fields(&v6).unwrap(), f);
        }

        #[test]
        fn v6_sorts_by_time(a in 0u64..(1 << 60), b in 0u64..(1 << 60)) {
            let mk = |ticks| v6_from_fields(GregorianFields { ticks, clock_seq: 0, node: 0 }).unwrap();
            prop_assert_eq!(a.cmp(&b), mk(a).cmp(&mk(b)));
        }
    }

    #[test]
    fn wrong_version_and_ranges_are_named() {
        let v4 = uuid::uuid!("919108f7-52d1-4320-9bac-f847db4148a8");
        let err = v1_to_v6(&v4).unwrap_err();
        assert_eq!(
            (err.field, err.value.as_str(), err.expected.as_str()),
            ("version", "4", "1")
        );
        let err = v6_from_fields(GregorianFields {
            ticks: 1 << 60,
            clock_seq: 0,
            node: 0,
        })
        .unwrap_err();
        assert!(err.field.starts_with("timestamp"));
        let err = v1_from_fields(GregorianFields {
            ticks: 0,
            clock_seq: 1 << 14,
            node: 0,
        })
        .unwrap_err();
        assert_eq!(err.field, "clock_seq");
    }
}

//! The UUIDv7 layout of draft-peabody-dispatch-new-uuid-format-01 (2021,
//! §4.4), still found in data written by early adopters: 36-bit Unix
//! *seconds*, then a binary fraction of a second spread over `subsec_a`,
//! `subsec_b` and `subsec_seq_node`, skipping the version and variant bits.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                            unixts                             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |unixts |       subsec_a        |  ver  |       subsec_b        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |var|                   subsec_seq_node                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                       subsec_seq_node                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! A decoder does not know how many fraction bits the encoder used; it reads
//! all 86 bits after the seconds as one binary fraction (draft §4.4.4.2) and
//! truncates to the precision asked for. The encoder examples of the draft
//! (Figures 3, 4, 5) are [`Draft01Precision::Millisecond`] (12 fraction bits,
//! 12-bit sequence, 62 random bits), [`Draft01Precision::Microsecond`] (24,
//! 14, 48) and [`Draft01Precision::Nanosecond`] (38, 8, 40).
//!
//! The fraction is encoded rounded *up* (`ceil(units × 2^bits / 10^k)`): with
//! more fraction bits than decimal units, that is the only choice for which
//! truncating decoders read back exactly the encoded value, whatever bits
//! follow.

use crate::bits;
use crate::error::FieldError;
use crate::timestamp::{Precision, Timestamp};
use uuid::Uuid;

/// One of the draft's three encoding examples, or a decoding precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Draft01Precision {
    /// Figure 3: 12 fraction bits, 12-bit sequence, 62 random bits.
    Millisecond,
    /// Figure 4: 24 fraction bits, 14-bit sequence, 48 random bits.
    Microsecond,
    /// Figure 5: 38 fraction bits, 8-bit sequence, 40 random bits.
    Nanosecond,
}

impl Draft01Precision {
    /// Every precision, coarsest first.
    pub const ALL: [Draft01Precision; 3] = [
        Draft01Precision::Millisecond,
        Draft01Precision::Microsecond,
        Draft01Precision::Nanosecond,
    ];

    /// (fraction bits, sequence bits, random bits) of the draft's example.
    pub const fn widths(self) -> (u32, u32, u32) {
        match self {
            Draft01Precision::Millisecond => (12, 12, 62),
            Draft01Precision::Microsecond => (24, 14, 48),
            Draft01Precision::Nanosecond => (38, 8, 40),
        }
    }

    /// Decimal units per second (10^3, 10^6, 10^9).
    pub const fn units_per_second(self) -> u64 {
        match self {
            Draft01Precision::Millisecond => 1_000,
            Draft01Precision::Microsecond => 1_000_000,
            Draft01Precision::Nanosecond => 1_000_000_000,
        }
    }

    const fn precision(self) -> Precision {
        match self {
            Draft01Precision::Millisecond => Precision::Millisecond,
            Draft01Precision::Microsecond => Precision::Microsecond,
            Draft01Precision::Nanosecond => Precision::Nanosecond,
        }
    }
}

/// Largest 36-bit seconds value (year 4147).
pub const MAX_SECONDS: u64 = (1 << 36) - 1;

/// What an encoder puts in a draft-01 UUIDv7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Draft01Fields {
    /// Unix seconds (36 bits).
    pub unix_seconds: u64,
    /// Nanoseconds within the second; truncated to the layout's precision.
    pub subsec_nanos: u32,
    /// Sequence counter.
    pub seq: u32,
    /// Random bits.
    pub random: u64,
}

/// Encodes a draft-01 UUIDv7 in one of the draft's example layouts.
///
/// ```
/// use uuidforge::draft01::{encode, decode, Draft01Fields, Draft01Precision};
/// let f = Draft01Fields { unix_seconds: 1_645_557_742, subsec_nanos: 123_456_789, seq: 7, random: 1 };
/// let id = encode(Draft01Precision::Microsecond, f).unwrap();
/// assert_eq!(id.get_version_num(), 7);
/// let t = decode(&id, Draft01Precision::Microsecond);
/// assert_eq!(t.to_string(), "2022-02-22T19:22:22.123456Z");
/// assert_eq!(decode(&id, Draft01Precision::Millisecond).to_string(), "2022-02-22T19:22:22.123Z");
/// ```
pub fn encode(layout: Draft01Precision, f: Draft01Fields) -> Result<Uuid, FieldError> {
    let (frac_bits, seq_bits, rand_bits) = layout.widths();
    FieldError::check_max("unix_seconds", f.unix_seconds as u128, MAX_SECONDS as u128)?;
    FieldError::check_max("subsec_nanos", f.subsec_nanos as u128, 999_999_999)?;
    FieldError::check_max("seq", f.seq as u128, bits::mask(seq_bits))?;
    FieldError::check_max("random", f.random as u128, bits::mask(rand_bits))?;
    let units = f.subsec_nanos as u128 / (1_000_000_000 / layout.units_per_second() as u128);
    let fraction = (units << frac_bits).div_ceil(layout.units_per_second() as u128);
    // 86 payload bits after the seconds: fraction, sequence, random.
    let payload =
        (fraction << (seq_bits + rand_bits)) | ((f.seq as u128) << rand_bits) | f.random as u128;
    Ok(Uuid::from_u128(assemble(f.unix_seconds, payload)))
}

/// Places 36 bits of seconds and 86 payload bits around version 7 and the
/// variant.
const fn assemble(seconds: u64, payload86: u128) -> u128 {
    let subsec_a = payload86 >> 74;
    let subsec_b = (payload86 >> 62) & 0xfff;
    let rest = payload86 & bits::mask(62);
    let v = ((seconds as u128) << 92) | (subsec_a << 80) | (subsec_b << 64) | rest;
    bits::with_version(v, 7)
}

/// The 86 fraction-and-following bits of a draft-01 UUIDv7.
const fn payload(uuid: &Uuid) -> u128 {
    let v = uuid.as_u128();
    (bits::get(v, 36, 12) << 74) | (bits::get(v, 52, 12) << 62) | bits::get(v, 66, 62)
}

/// The 36-bit Unix seconds of a draft-01 UUIDv7.
pub const fn unix_seconds(uuid: &Uuid) -> u64 {
    bits::get(uuid.as_u128(), 0, 36) as u64
}

/// Decodes the instant of a draft-01 UUIDv7 truncated to `precision`: the
/// first bits of the 86-bit fraction, times 10^k, divided by 2^86.
pub fn decode(uuid: &Uuid, precision: Draft01Precision) -> Timestamp {
    // units < 10^9 < 2^30, payload < 2^86: the product fits in 116 bits.
    let units = (payload(uuid) * precision.units_per_second() as u128) >> 86;
    let nanos = units * (1_000_000_000 / precision.units_per_second() as u128);
    Timestamp::new(
        unix_seconds(uuid) as i128 * 1_000_000_000 + nanos as i128,
        precision.precision(),
    )
}

/// The sequence counter of a value encoded in one of the draft's example
/// layouts.
pub fn seq(uuid: &Uuid, layout: Draft01Precision) -> u32 {
    let (_, seq_bits, rand_bits) = layout.widths();
    ((payload(uuid) >> rand_bits) & bits::mask(seq_bits)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_layout_round_trips_at_every_coarser_precision(
            secs in 0..=MAX_SECONDS, nanos in 0u32..1_000_000_000, sequence in any::<u32>(), random in any::<u64>(), i in 0usize..3
        ) {
            let layout = Draft01Precision::ALL[i];
            let (_, sb, rb) = layout.widths();
            let f = Draft01Fields {
                unix_seconds: secs,
                subsec_nanos: nanos,
                seq: (sequence as u128 & bits::mask(sb)) as u32,
                random: (random as u128 & bits::mask(rb)) as u64,
            };
            let id = encode(layout, f).unwrap();
            prop_assert_eq!(id.get_version_num(), 7);
            prop_assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
            prop_assert_eq!(seq(&id, layout), f.seq);
            for reader in Draft01Precision::ALL {
                let t = decode(&id, reader);
                let (s, n) = t.seconds_and_nanos();
                prop_assert_eq!(s as u64, secs);
                if reader.units_per_second() <= layout.units_per_second() {
                    // A reader at or below the encoder's precision gets the
                    // encoded value, truncated.
                    let unit = 1_000_000_000 / reader.units_per_second() as u32;
                    prop_assert_eq!(n, nanos / unit * unit);
                } else {
                    // A finer reader gets at least the encoder's value.
                    let unit = 1_000_000_000 / layout.units_per_second() as u32;
                    prop_assert_eq!(n / unit * unit, nanos / unit * unit);
                }
            }
        }
    }

    #[test]
    fn draft_example_fraction() {
        // Draft §4.4.4.2: the 16 bits 0x5555 mean 0.3333282 s.
        let id = Uuid::from_u128(assemble(0, 0x5555u128 << 70));
        let t = decode(&id, Draft01Precision::Nanosecond);
        assert_eq!(t.seconds_and_nanos(), (0, 333_328_247));
        assert_eq!(
            decode(&id, Draft01Precision::Millisecond).seconds_and_nanos(),
            (0, 333_000_000)
        );
    }

    #[test]
    fn ranges_are_checked() {
        let rejected_field = |layout, unix_seconds, subsec_nanos, seq| {
            let f = Draft01Fields {
                unix_seconds,
                subsec_nanos,
                seq,
                random: 0,
            };
            encode(layout, f).unwrap_err().field
        };
        assert_eq!(
            rejected_field(Draft01Precision::Millisecond, 1 << 36, 0, 0),
            "unix_seconds"
        );
        assert_eq!(
            rejected_field(Draft01Precision::Millisecond, 0, 0, 1 << 12),
            "seq"
        );
        assert_eq!(
            rejected_field(Draft01Precision::Nanosecond, 0, 1_000_000_000, 0),
            "subsec_nanos"
        );
    }
}

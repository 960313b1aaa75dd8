//! UUIDv8 (RFC 9562 §5.8): 122 free bits around version `1000` and variant
//! `10`. This module gives the time-based layouts of the 2021 draft (§4.5)
//! and the two examples of RFC 9562 Appendix B.
//!
//! Draft layouts (Figure 6 of the draft):
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          timestamp_32                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           timestamp_48        |  ver  |      time_or_seq      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |var|  seq_or_node  |          node                             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                              node                             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!
//!  layout | timestamp bits            | sequence              | node
//!  Ts32   | timestamp_32, ts_48 = 0   | 12 bits (time_or_seq) | 62 bits
//!  Ts48   | timestamp_32+timestamp_48 | 12 bits (time_or_seq) | 62 bits
//!  Ts60   | + time_or_seq             | 8 bits (seq_or_node)  | 54 bits
//!  Ts64   | top 60 of 64 bits         | 8 bits (seq_or_node)  | 54 bits
//! ```

use crate::bits;
use crate::error::FieldError;
use crate::timestamp::{Precision, Timestamp};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// A time-based UUIDv8 layout of the 2021 draft (§4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DraftLayout {
    /// 32-bit timestamp, 12-bit sequence, 62-bit node.
    Ts32,
    /// 48-bit timestamp, 12-bit sequence, 62-bit node.
    Ts48,
    /// 60-bit timestamp, 8-bit sequence, 54-bit node.
    Ts60,
    /// 64-bit timestamp truncated to its 60 most significant bits, 8-bit
    /// sequence, 54-bit node (draft §4.5.4).
    Ts64,
}

/// The fields of a draft time-based UUIDv8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DraftFields {
    /// The timestamp in the caller's own unit and epoch. For [`DraftLayout::Ts64`]
    /// the low 4 bits are lost on encoding and read back as zero.
    pub timestamp: u64,
    /// Clock sequence (12 or 8 bits).
    pub seq: u16,
    /// Node (62 or 54 bits).
    pub node: u64,
}

impl DraftLayout {
    /// Every layout.
    pub const ALL: [DraftLayout; 4] = [
        DraftLayout::Ts32,
        DraftLayout::Ts48,
        DraftLayout::Ts60,
        DraftLayout::Ts64,
    ];

    /// Bits of (timestamp, sequence, node) in this layout.
    pub const fn widths(self) -> (u32, u32, u32) {
        match self {
            DraftLayout::Ts32 => (32, 12, 62),
            DraftLayout::Ts48 => (48, 12, 62),
            DraftLayout::Ts60 => (60, 8, 54),
            DraftLayout::Ts64 => (64, 8, 54),
        }
    }

    /// Encodes the fields, checking each range.
    ///
    /// ```
    /// use uuidforge::v8::{DraftLayout, DraftFields};
    /// let f = DraftFields { timestamp: 0x0123_4567, seq: 5, node: 0x2A };
    /// let id = DraftLayout::Ts32.encode(f).unwrap();
    /// assert_eq!(id.to_string(), "01234567-0000-8005-8000-00000000002a");
    /// assert_eq!(DraftLayout::Ts32.decode(&id).unwrap(), f);
    /// ```
    pub fn encode(self, f: DraftFields) -> Result<Uuid, FieldError> {
        let (ts_bits, seq_bits, node_bits) = self.widths();
        FieldError::check_max("timestamp", f.timestamp as u128, bits::mask(ts_bits))?;
        FieldError::check_max("seq", f.seq as u128, bits::mask(seq_bits))?;
        FieldError::check_max("node", f.node as u128, bits::mask(node_bits))?;
        let ts60 = match self {
            DraftLayout::Ts32 => (f.timestamp as u128) << 28,
            DraftLayout::Ts48 => (f.timestamp as u128) << 12,
            DraftLayout::Ts60 => f.timestamp as u128,
            DraftLayout::Ts64 => (f.timestamp >> 4) as u128,
        };
        let mut v = bits::set(0, 0, 48, ts60 >> 12);
        v = match self {
            DraftLayout::Ts32 | DraftLayout::Ts48 => {
                let v = bits::set(v, 52, 12, f.seq as u128);
                bits::set(v, 66, 62, f.node as u128)
            }
            DraftLayout::Ts60 | DraftLayout::Ts64 => {
                let v = bits::set(v, 52, 12, ts60);
                let v = bits::set(v, 66, 8, f.seq as u128);
                bits::set(v, 74, 54, f.node as u128)
            }
        };
        Ok(Uuid::from_u128(bits::with_version(v, 8)))
    }

    /// Decodes the fields; errors if the version is not 8.
    pub fn decode(self, uuid: &Uuid) -> Result<DraftFields, FieldError> {
        if uuid.get_version_num() != 8 {
            return Err(FieldError::new("version", uuid.get_version_num(), "8"));
        }
        let v = uuid.as_u128();
        let a = bits::get(v, 0, 48) as u64;
        let b = bits::get(v, 52, 12) as u64;
        Ok(match self {
            DraftLayout::Ts32 => DraftFields {
                timestamp: a >> 16,
                seq: b as u16,
                node: bits::get(v, 66, 62) as u64,
            },
            DraftLayout::Ts48 => DraftFields {
                timestamp: a,
                seq: b as u16,
                node: bits::get(v, 66, 62) as u64,
            },
            DraftLayout::Ts60 | DraftLayout::Ts64 => {
                let ts60 = (a << 12) | b;
                DraftFields {
                    timestamp: if self == DraftLayout::Ts64 {
                        ts60 << 4
                    } else {
                        ts60
                    },
                    seq: bits::get(v, 66, 8) as u16,
                    node: bits::get(v, 74, 54) as u64,
                }
            }
        })
    }
}

/// RFC 9562 Appendix B.1: a 60-bit count of 10-ns ticks since the Unix epoch
/// in `custom_a` and `custom_b`, then 62 bits (`custom_c`) of the caller's.
///
/// ```
/// let id = uuidforge::v8::time_based_b1(0x2489E9AD2EE2E00, 0xEC932D5F69181C0).unwrap();
/// assert_eq!(id, uuid::uuid!("2489E9AD-2EE2-8E00-8EC9-32D5F69181C0"));
/// ```
pub fn time_based_b1(ticks_10ns: u64, custom_c: u64) -> Result<Uuid, FieldError> {
    FieldError::check_max(
        "timestamp (10-ns ticks)",
        ticks_10ns as u128,
        bits::mask(60),
    )?;
    FieldError::check_max("custom_c", custom_c as u128, bits::mask(62))?;
    Ok(Uuid::from_u128(bits::assemble(
        8,
        ticks_10ns >> 12,
        (ticks_10ns & 0xfff) as u16,
        custom_c,
    )))
}

/// The instant of an RFC 9562 B.1 UUIDv8 (10-ns precision).
///
/// ```
/// let id = uuid::uuid!("2489E9AD-2EE2-8E00-8EC9-32D5F69181C0");
/// assert_eq!(uuidforge::v8::time_based_b1_timestamp(&id).to_string(), "2022-02-22T19:22:22.00000000Z");
/// ```
pub fn time_based_b1_timestamp(uuid: &Uuid) -> Timestamp {
    let v = uuid.as_u128();
    let ticks = (bits::get(v, 0, 48) << 12) | bits::get(v, 52, 12);
    Timestamp::new(ticks as i128 * 10, Precision::Tick { nanos: 10 })
}

/// RFC 9562 Appendix B.2: a name-based UUIDv8 from SHA-256 of the namespace
/// bytes followed by the name; the first 128 bits of the hash are kept.
///
/// ```
/// let id = uuidforge::v8::sha256_name(&uuid::Uuid::NAMESPACE_DNS, b"www.example.com");
/// assert_eq!(id, uuid::uuid!("5c146b14-3c52-8afd-938a-375d0df1fbf6"));
/// ```
pub fn sha256_name(namespace: &Uuid, name: &[u8]) -> Uuid {
    let mut h = Sha256::new();
    h.update(namespace.as_bytes());
    h.update(name);
    let digest = h.finalize();
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    Uuid::from_u128(bits::with_version(u128::from_be_bytes(first), 8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn draft_layouts_round_trip(ts in any::<u64>(), seq in any::<u16>(), node in any::<u64>(), i in 0usize..4) {
            let layout = DraftLayout::ALL[i];
            let (tb, sb, nb) = layout.widths();
            let f = DraftFields {
                timestamp: (ts as u128 & bits::mask(tb)) as u64,
                seq: (seq as u128 & bits::mask(sb)) as u16,
                node: (node as u128 & bits::mask(nb)) as u64,
            };
            let id = layout.encode(f).unwrap();
            prop_assert_eq!(id.get_version_num(), 8);
            prop_assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
            let back = layout.decode(&id).unwrap();
            let expected_ts = if layout == DraftLayout::Ts64 { f.timestamp & !0xf } else { f.timestamp };
            prop_assert_eq!(back, DraftFields { timestamp: expected_ts, ..f });
        }

        #[test]
        fn draft_layouts_sort_by_timestamp(a in any::<u32>(), b in any::<u32>(), i in 0usize..4) {
            let layout = DraftLayout::ALL[i];
            let mk = |t: u32| layout.encode(DraftFields { timestamp: t as u64, seq: 0, node: 0 }).unwrap();
            prop_assert_eq!(a.cmp(&b), mk(a).cmp(&mk(b)));
        }
    }

    #[test]
    fn ts32_leaves_timestamp_48_zero_and_ranges_are_checked() {
        let id = DraftLayout::Ts32
            .encode(DraftFields {
                timestamp: u32::MAX as u64,
                seq: 0xfff,
                node: bits::mask(62) as u64,
            })
            .unwrap();
        assert_eq!(id.to_string(), "ffffffff-0000-8fff-bfff-ffffffffffff");
        let err = DraftLayout::Ts32
            .encode(DraftFields {
                timestamp: 1 << 32,
                seq: 0,
                node: 0,
            })
            .unwrap_err();
        assert_eq!(err.field, "timestamp");
        let err = DraftLayout::Ts60
            .encode(DraftFields {
                timestamp: 0,
                seq: 256,
                node: 0,
            })
            .unwrap_err();
        assert_eq!(err.field, "seq");
        assert_eq!(err.expected, "0..=255");
        let err = DraftLayout::Ts60.decode(&Uuid::nil()).unwrap_err();
        assert_eq!(err.field, "version");
    }
}

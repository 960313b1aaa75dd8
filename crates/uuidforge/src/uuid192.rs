//! UUID_192: a 128-bit UUID followed by a 64-bit segment that says what the
//! key is about (the article's feature 6), ordered by UUID then segment.
//!
//! The segment starts with a 4-bit structure code and ends with a 16-bit
//! checksum over the 16 UUID bytes and the first 6 segment bytes
//! (CRC-16/IBM-3740, also known as CRC-16/CCITT-FALSE: poly 0x1021, init
//! 0xFFFF), so a mistyped or spliced key is caught.
//!
//! Structure 1, *general*:
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | code  |    module     |      hub/anchor table |  source   | op  ..
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ..| message   |    shard    |A|D|          checksum             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!
//!  bits   field                       width  range
//!  0..4   structure code = 1          4
//!  4..12  module / microservice       8      0..=255
//!  12..24 hub / anchor table          12     0..=4095
//!  24..30 source system               6      0..=63
//!  30..33 operation type              3      0..=7 (see Operation)
//!  33..39 message type                6      0..=63
//!  39..46 shard / partition           7      0..=127
//!  46     archived mark               1
//!  47     deleted mark                1
//!  48..64 checksum                    16
//! ```
//!
//! Structure 0, *raw*: `code = 0 (4) | payload (44) | checksum (16)`, for
//! applications that define their own 44 bits.
//!
//! Forms: text `8-4-4-4-12-16` (53 characters, the canonical UUID, a dash,
//! 16 hex digits), Crockford Base32 (39 characters, first one `0`–`7`) and
//! 24 bytes. All three sort like the value.

use crate::base32;
use crate::error::{FieldError, InputKind, ParseError, ParseErrorKind};
use crate::fmt::canonical;
use crate::hex::HEX_VALUE;
use crate::parser::{first_non_hex, invalid_char, parse_canonical};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

const CRC: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_IBM_3740);

/// Length of the text form.
pub const TEXT_LEN: usize = 53;
/// Length of the Base32 form.
pub const BASE32_LEN: usize = 39;

/// Operation types of the general structure (3 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Operation {
    /// No operation recorded.
    None = 0,
    /// Row inserted.
    Insert = 1,
    /// Row updated.
    Update = 2,
    /// Row deleted.
    Delete = 3,
    /// Rows merged (duplicates resolved).
    Merge = 4,
    /// Row read (audit).
    Read = 5,
    /// Row archived.
    Archive = 6,
    /// Row restored.
    Restore = 7,
}

impl Operation {
    /// Every operation, in code order.
    pub const ALL: [Operation; 8] = [
        Operation::None,
        Operation::Insert,
        Operation::Update,
        Operation::Delete,
        Operation::Merge,
        Operation::Read,
        Operation::Archive,
        Operation::Restore,
    ];

    /// The operation of a 3-bit code.
    pub const fn from_code(code: u8) -> Operation {
        Operation::ALL[(code & 7) as usize]
    }

    /// The lower-case name, as in JSON.
    ///
    /// ```
    /// use uuidforge::uuid192::Operation;
    /// assert_eq!(Operation::Merge.name(), "merge");
    /// assert_eq!(Operation::from_name("MERGE"), Some(Operation::Merge));
    /// ```
    pub const fn name(self) -> &'static str {
        [
            "none", "insert", "update", "delete", "merge", "read", "archive", "restore",
        ][self as usize]
    }

    /// The operation of a name, case-insensitive.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL
            .into_iter()
            .find(|o| o.name().eq_ignore_ascii_case(name))
    }
}

/// The fields of the general structure (code 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct GeneralFields {
    /// Module or microservice id (8 bits).
    pub module: u8,
    /// Hub or anchor table id (12 bits).
    pub table: u16,
    /// Source system id (6 bits).
    pub source: u8,
    /// Operation type.
    pub operation: Operation,
    /// Message type (6 bits).
    pub message: u8,
    /// Shard or partition (7 bits).
    pub shard: u8,
    /// Archived mark.
    pub archived: bool,
    /// Deleted mark.
    pub deleted: bool,
}

/// What a segment carries, by structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(tag = "structure", rename_all = "lowercase")]
pub enum SegmentFields {
    /// Code 0: 44 bits for the application.
    Raw {
        /// The 44-bit payload.
        payload: u64,
    },
    /// Code 1: the article's fields.
    General(GeneralFields),
}

impl SegmentFields {
    /// The segment's first 48 bits (code and fields), checking every range.
    fn pack48(&self) -> Result<u64, FieldError> {
        Ok(match *self {
            SegmentFields::Raw { payload } => {
                FieldError::check_max("payload", payload as u128, (1 << 44) - 1)?;
                payload
            }
            SegmentFields::General(g) => {
                FieldError::check_max("table", g.table as u128, 4095)?;
                FieldError::check_max("source", g.source as u128, 63)?;
                FieldError::check_max("message", g.message as u128, 63)?;
                FieldError::check_max("shard", g.shard as u128, 127)?;
                (1u64 << 44)
                    | (g.module as u64) << 36
                    | (g.table as u64) << 24
                    | (g.source as u64) << 18
                    | (g.operation as u64) << 15
                    | (g.message as u64) << 9
                    | (g.shard as u64) << 2
                    | (g.archived as u64) << 1
                    | g.deleted as u64
            }
        })
    }

    fn unpack48(head: u64) -> Result<SegmentFields, ParseError> {
        match head >> 44 {
            0 => Ok(SegmentFields::Raw {
                payload: head & ((1 << 44) - 1),
            }),
            1 => Ok(SegmentFields::General(GeneralFields {
                module: (head >> 36) as u8,
                table: ((head >> 24) & 0xfff) as u16,
                source: ((head >> 18) & 63) as u8,
                operation: Operation::from_code((head >> 15) as u8),
                message: ((head >> 9) & 63) as u8,
                shard: ((head >> 2) & 127) as u8,
                archived: head & 2 != 0,
                deleted: head & 1 != 0,
            })),
            code => Err(ParseError::new(
                InputKind::Segment,
                ParseErrorKind::UnknownStructure { code: code as u8 },
            )),
        }
    }
}

/// The 64-bit segment as stored (structure code, fields, checksum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Segment(pub u64);

impl Segment {
    /// The 4-bit structure code.
    pub const fn structure_code(self) -> u8 {
        (self.0 >> 60) as u8
    }

    /// The stored 16-bit checksum.
    pub const fn checksum(self) -> u16 {
        self.0 as u16
    }

    /// Decodes the fields (without verifying the checksum, which needs the
    /// UUID).
    pub fn fields(self) -> Result<SegmentFields, ParseError> {
        SegmentFields::unpack48(self.0 >> 16)
    }

    /// Reads the segment from a UUID_192 text without parsing the UUID part:
    /// only the dash at position 36 and the 16 hex digits after it are read.
    ///
    /// ```
    /// use uuidforge::uuid192::Segment;
    /// let text = "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz-1000000000000abc"; // UUID part not read
    /// assert_eq!(Segment::from_text(text).unwrap(), Segment(0x1000000000000abc));
    /// ```
    pub fn from_text(text: &str) -> Result<Segment, ParseError> {
        let b = text.as_bytes();
        if b.len() != TEXT_LEN {
            return Err(ParseError::length(
                InputKind::Uuid192,
                b.len(),
                "53 characters",
            ));
        }
        if b[36] != b'-' {
            return Err(invalid_char(InputKind::Uuid192, b, 36, "'-'"));
        }
        parse_segment_hex(&b[37..]).map_err(|e| e.offset(37, InputKind::Uuid192))
    }
}

fn parse_segment_hex(hex: &[u8]) -> Result<Segment, ParseError> {
    let mut v = 0u64;
    for &c in hex {
        let d = HEX_VALUE[c as usize];
        if d == 0xff {
            return Err(first_non_hex(hex, 0, InputKind::Segment));
        }
        v = (v << 4) | d as u64;
    }
    Ok(Segment(v))
}

/// A UUID_192 value: a UUID and its segment. Ordering is by UUID, then by
/// segment, which is also the order of the bytes and of both text forms.
///
/// ```
/// use uuidforge::uuid192::{Uuid192, SegmentFields, GeneralFields, Operation};
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// let fields = SegmentFields::General(GeneralFields {
///     module: 3, table: 42, source: 1, operation: Operation::Insert,
///     message: 0, shard: 5, archived: false, deleted: false });
/// let key = Uuid192::new(id, fields).unwrap();
/// assert_eq!(key.uuid(), id);
/// let text = key.to_string();
/// assert_eq!(&text[..37], "017f22e2-79b0-7cc3-98c4-dc0c0c07398f-");
/// assert_eq!(text.parse::<Uuid192>().unwrap(), key);
/// assert_eq!(key.fields().unwrap(), fields);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid192 {
    uuid: Uuid,
    segment: Segment,
}

impl Uuid192 {
    /// Builds a UUID_192 with its checksum.
    pub fn new(uuid: Uuid, fields: SegmentFields) -> Result<Uuid192, FieldError> {
        let head = fields.pack48()?;
        Ok(Uuid192 {
            uuid,
            segment: Segment((head << 16) | checksum(&uuid, head) as u64),
        })
    }

    /// Pairs a UUID and a stored segment, verifying structure and checksum.
    pub fn from_parts(uuid: Uuid, segment: Segment) -> Result<Uuid192, ParseError> {
        segment.fields()?;
        let expected = checksum(&uuid, segment.0 >> 16);
        if expected != segment.checksum() {
            return Err(ParseError::new(
                InputKind::Uuid192,
                ParseErrorKind::ChecksumMismatch {
                    found: segment.checksum(),
                    expected,
                },
            ));
        }
        Ok(Uuid192 { uuid, segment })
    }

    /// The left 128 bits as a plain UUID, for joins (O(1)).
    #[inline]
    pub const fn uuid(&self) -> Uuid {
        self.uuid
    }

    /// The segment.
    #[inline]
    pub const fn segment(&self) -> Segment {
        self.segment
    }

    /// The segment's fields.
    pub fn fields(&self) -> Result<SegmentFields, ParseError> {
        self.segment.fields()
    }

    /// The 24 bytes: UUID then segment, big-endian.
    pub fn to_bytes(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..16].copy_from_slice(self.uuid.as_bytes());
        b[16..].copy_from_slice(&self.segment.0.to_be_bytes());
        b
    }

    /// Reads 24 bytes, verifying structure and checksum.
    pub fn from_bytes(bytes: [u8; 24]) -> Result<Uuid192, ParseError> {
        let mut u = [0u8; 16];
        u.copy_from_slice(&bytes[..16]);
        let mut s = [0u8; 8];
        s.copy_from_slice(&bytes[16..]);
        Uuid192::from_parts(Uuid::from_bytes(u), Segment(u64::from_be_bytes(s)))
    }

    /// The 39-character Crockford Base32 form.
    ///
    /// ```
    /// use uuidforge::uuid192::{Uuid192, SegmentFields};
    /// let key = Uuid192::new(uuid::Uuid::max(), SegmentFields::Raw { payload: 7 }).unwrap();
    /// let b32 = key.to_base32();
    /// assert_eq!(b32.len(), 39);
    /// assert_eq!(Uuid192::parse_base32(&b32).unwrap(), key);
    /// ```
    pub fn to_base32(&self) -> String {
        String::from_utf8(base32::encode_bytes(&self.to_bytes(), BASE32_LEN)).expect("ASCII")
    }

    /// Parses the Base32 form (case-insensitive, Crockford aliases),
    /// verifying the checksum.
    pub fn parse_base32(text: &str) -> Result<Uuid192, ParseError> {
        let bytes = base32::decode_bytes::<24>(text.as_bytes(), InputKind::Uuid192Base32)?;
        Uuid192::from_bytes(bytes)
    }

    /// Parses the text form or the Base32 form, chosen by length.
    pub fn parse(text: &str) -> Result<Uuid192, ParseError> {
        match text.len() {
            TEXT_LEN => text.parse(),
            BASE32_LEN => Uuid192::parse_base32(text),
            n => Err(ParseError::length(
                InputKind::Uuid192,
                n,
                "53 (8-4-4-4-12-16 hex) or 39 (Base32) characters",
            )),
        }
    }
}

/// CRC-16 over the UUID bytes and the segment's first 6 bytes.
fn checksum(uuid: &Uuid, head48: u64) -> u16 {
    let mut digest = CRC.digest();
    digest.update(uuid.as_bytes());
    digest.update(&head48.to_be_bytes()[2..]);
    digest.finalize()
}

impl fmt::Display for Uuid192 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = canonical(&self.uuid);
        write!(
            f,
            "{}-{:016x}",
            std::str::from_utf8(&c).expect("ASCII"),
            self.segment.0
        )
    }
}

impl FromStr for Uuid192 {
    type Err = ParseError;

    /// Parses `8-4-4-4-12-16` (hex in any case), verifying the checksum.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let segment = Segment::from_text(text)?;
        let uuid =
            parse_canonical(&text.as_bytes()[..36]).map_err(|e| e.offset(0, InputKind::Uuid192))?;
        Uuid192::from_parts(uuid, segment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn general() -> impl Strategy<Value = SegmentFields> {
        (
            any::<u8>(),
            0u16..4096,
            0u8..64,
            0u8..8,
            0u8..64,
            0u8..128,
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(module, table, source, op, message, shard, archived, deleted)| {
                    SegmentFields::General(GeneralFields {
                        module,
                        table,
                        source,
                        operation: Operation::from_code(op),
                        message,
                        shard,
                        archived,
                        deleted,
                    })
                },
            )
    }

    fn fields() -> impl Strategy<Value = SegmentFields> {
        prop_oneof![
            general(),
            (0u64..(1 << 44)).prop_map(|payload| SegmentFields::Raw { payload })
        ]
    }

    proptest! {
        #[test]
        fn every_form_round_trips(bytes in any::<[u8; 16]>(), f in fields()) {
            let key = Uuid192::new(Uuid::from_bytes(bytes), f).unwrap();
            prop_assert_eq!(key.fields().unwrap(), f);
            prop_assert_eq!(key.to_string().parse::<Uuid192>().unwrap(), key);
            prop_assert_eq!(key.to_string().to_uppercase().parse::<Uuid192>().unwrap(), key);
            prop_assert_eq!(Uuid192::parse_base32(&key.to_base32()).unwrap(), key);
            prop_assert_eq!(Uuid192::parse_base32(&key.to_base32().to_lowercase()).unwrap(), key);
            prop_assert_eq!(Uuid192::from_bytes(key.to_bytes()).unwrap(), key);
            prop_assert_eq!(Segment::from_text(&key.to_string()).unwrap(), key.segment());
        }

        #[test]
        fn every_form_sorts_like_the_value(a in any::<[u8; 16]>(), b in any::<[u8; 16]>(), fa in fields(), fb in fields(), same in any::<bool>()) {
            let ua = Uuid::from_bytes(a);
            let ub = if same { ua } else { Uuid::from_bytes(b) };
            let (x, y) = (Uuid192::new(ua, fa).unwrap(), Uuid192::new(ub, fb).unwrap());
            let order = (x.uuid(), x.segment()).cmp(&(y.uuid(), y.segment()));
            prop_assert_eq!(x.cmp(&y), order);
            prop_assert_eq!(x.to_bytes().cmp(&y.to_bytes()), order);
            prop_assert_eq!(x.to_string().cmp(&y.to_string()), order);
            prop_assert_eq!(x.to_base32().cmp(&y.to_base32()), order);
        }

        #[test]
        fn any_single_bit_flip_is_detected(bytes in any::<[u8; 16]>(), f in fields(), bit in 0usize..192) {
            let key = Uuid192::new(Uuid::from_bytes(bytes), f).unwrap();
            let mut b = key.to_bytes();
            b[bit / 8] ^= 1 << (7 - bit % 8);
            prop_assert!(Uuid192::from_bytes(b).is_err());
        }

        #[test]
        fn parsers_never_panic(text in "\\PC{0,60}") {
            let _ = Uuid192::parse(&text);
            let _ = Segment::from_text(&text);
        }
    }

    #[test]
    fn errors_are_specific() {
        let key = Uuid192::new(Uuid::nil(), SegmentFields::Raw { payload: 1 }).unwrap();
        let mut text = key.to_string();
        text.replace_range(52..53, if text.ends_with('0') { "1" } else { "0" });
        let err = text.parse::<Uuid192>().unwrap_err();
        assert!(
            matches!(err.kind, ParseErrorKind::ChecksumMismatch { .. }),
            "{err}"
        );
        let err = "00000000-0000-0000-0000-000000000000-2000000000000000"
            .parse::<Uuid192>()
            .unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::UnknownStructure { code: 2 });
        let err = "00000000-0000-0000-0000-000000000000-00000000000000x0"
            .parse::<Uuid192>()
            .unwrap_err();
        assert_eq!(err.position(), Some(51));
        assert_eq!(err.input, InputKind::Uuid192);
        let err = "00000000-0000-0000-0000-00000000000z-0000000000000000"
            .parse::<Uuid192>()
            .unwrap_err();
        assert_eq!(err.position(), Some(35));
        let err = Uuid192::new(Uuid::nil(), SegmentFields::Raw { payload: 1 << 44 }).unwrap_err();
        assert_eq!(err.field, "payload");
        let g = GeneralFields {
            module: 0,
            table: 4096,
            source: 0,
            operation: Operation::None,
            message: 0,
            shard: 0,
            archived: false,
            deleted: false,
        };
        assert_eq!(
            Uuid192::new(Uuid::nil(), SegmentFields::General(g))
                .unwrap_err()
                .field,
            "table"
        );
        let err = Uuid192::parse_base32("8000000000000000000000000000000000000000").unwrap_err();
        assert!(matches!(
            err.kind,
            ParseErrorKind::InvalidLength { found: 40, .. }
        ));
        let err = Uuid192::parse_base32("800000000000000000000000000000000000000").unwrap_err();
        assert!(matches!(err.kind, ParseErrorKind::Overflow { found: '8' }));
    }

    #[test]
    fn crc_is_the_documented_one() {
        // CRC-16/IBM-3740 check value of "123456789".
        assert_eq!(CRC.checksum(b"123456789"), 0x29B1);
    }
}

//! Everything a UUID says about itself: version and variant (RFC 9562 §4.1,
//! §4.2), the timestamp of time-based versions with the precision their
//! layout encodes, the fields of each version, the likely generator of a v7,
//! and what the value reads as in the 2021 draft layouts.

use crate::draft01::{self, Draft01Precision};
use crate::gregorian;
use crate::layout::{self, LayoutGuess, V7Layout, V7Reading};
use crate::timestamp::Timestamp;
use crate::v7;
use crate::v8::{self, DraftLayout};
use serde::ser::SerializeStruct;
use uuid::Uuid;

/// The variant field (RFC 9562 §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// `0xxx`: reserved, NCS backward compatibility.
    Ncs,
    /// `10xx`: the variant of RFC 9562 (and RFC 4122).
    Rfc9562,
    /// `110x`: reserved, Microsoft backward compatibility.
    Microsoft,
    /// `111x`: reserved for future definition.
    Future,
}

impl Variant {
    /// The variant of a UUID.
    ///
    /// ```
    /// use uuidforge::inspect::Variant;
    /// // RFC 9562 §4.1 examples: 8, 9, A and B are all the RFC variant.
    /// for n in ["8", "9", "a", "b"] {
    ///     let id: uuid::Uuid = format!("00000000-0000-4000-{n}000-000000000000").parse().unwrap();
    ///     assert_eq!(Variant::of(&id), Variant::Rfc9562);
    /// }
    /// assert_eq!(Variant::of(&uuid::Uuid::max()), Variant::Future);
    /// ```
    pub const fn of(uuid: &Uuid) -> Variant {
        let octet8 = uuid.as_bytes()[8];
        match octet8 >> 5 {
            0b000..=0b011 => Variant::Ncs,
            0b100 | 0b101 => Variant::Rfc9562,
            0b110 => Variant::Microsoft,
            _ => Variant::Future,
        }
    }
}

/// A name for a version number (RFC 9562 §4.2).
pub const fn version_name(version: u8) -> &'static str {
    match version {
        0 => "unused",
        1 => "Gregorian time-based",
        2 => "DCE Security",
        3 => "name-based (MD5)",
        4 => "random",
        5 => "name-based (SHA-1)",
        6 => "reordered Gregorian time-based",
        7 => "Unix Epoch time-based",
        8 => "custom",
        _ => "reserved",
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Timestamp", 4)?;
        st.serialize_field("iso8601", &self.to_iso8601())?;
        st.serialize_field("unix_ms", &(self.unix_ms() as i64))?;
        // Nanoseconds exceed 2^53; a string keeps JavaScript readers exact.
        st.serialize_field("unix_ns", &self.unix_nanos.to_string())?;
        st.serialize_field("precision", &self.precision.name())?;
        st.end()
    }
}

/// One named field of a version's layout.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Field {
    /// The field name as in RFC 9562 (or the draft).
    pub name: &'static str,
    /// Its value, in hex for bit fields.
    pub value: String,
}

fn field(name: &'static str, value: String) -> Field {
    Field { name, value }
}

/// A v7 value read in one generator's layout.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayoutReading {
    /// The layout.
    pub layout: V7Layout,
    /// Who writes it.
    pub written_by: &'static str,
    /// The instant at the layout's precision.
    pub timestamp: Timestamp,
    /// The counter, for counter layouts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counter: Option<u64>,
}

impl From<V7Reading> for LayoutReading {
    fn from(r: V7Reading) -> Self {
        LayoutReading {
            layout: r.layout,
            written_by: r.layout.written_by(),
            timestamp: r.timestamp,
            counter: r.counter,
        }
    }
}

/// A v7 value read in the 2021 draft-01 layout at each precision.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Draft01Reading {
    /// Truncated to milliseconds.
    pub ms: Timestamp,
    /// Truncated to microseconds.
    pub us: Timestamp,
    /// Truncated to nanoseconds.
    pub ns: Timestamp,
}

/// A v8 value read in one of the draft's time layouts (unit and epoch are
/// the writer's, so the timestamp is a bare number).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct V8DraftReading {
    /// The layout.
    pub layout: DraftLayout,
    /// The timestamp field.
    pub timestamp: u64,
    /// The sequence field.
    pub seq: u16,
    /// The node field, in hex.
    pub node: String,
}

/// Everything [`inspect`] finds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// The value, canonical.
    #[serde(serialize_with = "serialize_canonical")]
    pub uuid: Uuid,
    /// The version nibble (0–15).
    pub version: u8,
    /// What the version is.
    pub version_name: &'static str,
    /// The variant.
    pub variant: Variant,
    /// Nil (all zeros) or Max (all ones), RFC 9562 §5.9, §5.10.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub special: Option<&'static str>,
    /// The instant, for v1, v6 and v7 (and draft-01 values recognised as such).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// The version's fields.
    pub fields: Vec<Field>,
    /// For v7: the guessed generator layout and how sure the guess is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout_guess: Option<LayoutGuess>,
    /// For v7: the value read in the guessed layout, when that layout
    /// encodes more than milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout_reading: Option<LayoutReading>,
    /// For v7: the value read as a 2021 draft-01 UUIDv7.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft01: Option<Draft01Reading>,
    /// For v8: the RFC 9562 B.1 reading (10-ns ticks since 1970).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v8_b1_timestamp: Option<Timestamp>,
    /// For v8: the draft's four time layouts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub v8_draft: Vec<V8DraftReading>,
}

fn serialize_canonical<S: serde::Serializer>(u: &Uuid, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::fmt::to_canonical_string(u))
}

/// Inspects one value on its own.
///
/// ```
/// let r = uuidforge::inspect::inspect(&uuid::uuid!("C232AB00-9414-11EC-B3C8-9F6BDECED846"));
/// assert_eq!(r.version, 1);
/// assert_eq!(r.timestamp.unwrap().to_string(), "2022-02-22T19:22:22.0000000Z");
/// ```
pub fn inspect(uuid: &Uuid) -> Report {
    inspect_in_context(uuid, &[])
}

/// Inspects a value using the values written just before it (same
/// generator, in order) to guess a v7 layout better: counters and fractions
/// show themselves across consecutive values.
pub fn inspect_in_context(uuid: &Uuid, previous: &[Uuid]) -> Report {
    let version = uuid.get_version_num() as u8;
    let variant = Variant::of(uuid);
    let special = if uuid.is_nil() {
        Some("nil")
    } else if uuid.is_max() {
        Some("max")
    } else {
        None
    };
    let mut report = Report {
        uuid: *uuid,
        version,
        version_name: version_name(version),
        variant,
        special,
        timestamp: None,
        fields: Vec::new(),
        layout_guess: None,
        layout_reading: None,
        draft01: None,
        v8_b1_timestamp: None,
        v8_draft: Vec::new(),
    };
    if variant != Variant::Rfc9562 {
        return report;
    }
    match version {
        1 | 6 => {
            let f = if version == 1 {
                gregorian::v1_fields(uuid)
            } else {
                gregorian::v6_fields(uuid)
            }
            .expect("version checked");
            report.timestamp = Some(f.timestamp());
            report.fields = vec![
                // 100-ns ticks since 1582-10-15.
                field("gregorian_ticks", format!("0x{:015x}", f.ticks)),
                field("clock_seq", format!("0x{:04x}", f.clock_seq)),
                field("node", format!("0x{:012x}", f.node)),
                // RFC 9562 §6.10: a random node has the multicast bit set.
                field("node_multicast", ((f.node >> 40) & 1 == 1).to_string()),
            ];
        }
        7 => inspect_v7(uuid, previous, &mut report),
        8 => {
            report.fields = vec![
                field("custom_a", format!("0x{:012x}", v7::unix_ms(uuid))),
                field("custom_b", format!("0x{:03x}", v7::rand_a(uuid))),
                field("custom_c", format!("0x{:016x}", v7::rand_b(uuid))),
            ];
            report.v8_b1_timestamp = Some(v8::time_based_b1_timestamp(uuid));
            report.v8_draft = DraftLayout::ALL
                .into_iter()
                .map(|l| {
                    let f = l.decode(uuid).expect("version checked");
                    V8DraftReading {
                        layout: l,
                        timestamp: f.timestamp,
                        seq: f.seq,
                        node: format!("0x{:x}", f.node),
                    }
                })
                .collect();
        }
        _ => {}
    }
    report
}

fn inspect_v7(uuid: &Uuid, previous: &[Uuid], report: &mut Report) {
    report.fields = vec![
        field("unix_ts_ms", v7::unix_ms(uuid).to_string()),
        field("rand_a", format!("0x{:03x}", v7::rand_a(uuid))),
        field("rand_b", format!("0x{:016x}", v7::rand_b(uuid))),
    ];
    let mut values = previous.to_vec();
    values.push(*uuid);
    let guess = layout::guess_v7_layout(&values).expect("uuid is v7");
    report.draft01 = Some(Draft01Reading {
        ms: draft01::decode(uuid, Draft01Precision::Millisecond),
        us: draft01::decode(uuid, Draft01Precision::Microsecond),
        ns: draft01::decode(uuid, Draft01Precision::Nanosecond),
    });
    report.timestamp = Some(if guess.layout == V7Layout::Draft01 {
        draft01::decode(uuid, Draft01Precision::Millisecond)
    } else {
        Timestamp::from_unix_ms(v7::unix_ms(uuid))
    });
    if !matches!(guess.layout, V7Layout::Random | V7Layout::Draft01) {
        report.layout_reading = Some(layout::read_v7(uuid, guess.layout).into());
    }
    report.layout_guess = Some(guess);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_vectors_report_their_versions_and_times() {
        let cases = [
            (
                "C232AB00-9414-11EC-B3C8-9F6BDECED846",
                1,
                Some("2022-02-22T19:22:22.0000000Z"),
            ),
            ("5df41881-3aed-3515-88a7-2f4a814cf09e", 3, None),
            ("919108f7-52d1-4320-9bac-f847db4148a8", 4, None),
            ("2ed6657d-e927-568b-95e1-2665a8aea6a2", 5, None),
            (
                "1EC9414C-232A-6B00-B3C8-9F6BDECED846",
                6,
                Some("2022-02-22T19:22:22.0000000Z"),
            ),
            (
                "017F22E2-79B0-7CC3-98C4-DC0C0C07398F",
                7,
                Some("2022-02-22T19:22:22.000Z"),
            ),
            ("2489E9AD-2EE2-8E00-8EC9-32D5F69181C0", 8, None),
        ];
        for (text, version, time) in cases {
            let r = inspect(&text.parse().unwrap());
            assert_eq!(r.version, version, "{text}");
            assert_eq!(r.variant, Variant::Rfc9562);
            assert_eq!(
                r.timestamp.map(|t| t.to_string()).as_deref(),
                time,
                "{text}"
            );
        }
        let b1 = inspect(&"2489E9AD-2EE2-8E00-8EC9-32D5F69181C0".parse().unwrap());
        assert_eq!(
            b1.v8_b1_timestamp.unwrap().to_string(),
            "2022-02-22T19:22:22.00000000Z"
        );
        assert_eq!(b1.v8_draft.len(), 4);
    }

    #[test]
    fn nil_max_and_non_rfc_variants() {
        let nil = inspect(&Uuid::nil());
        assert_eq!(
            (nil.special, nil.variant, nil.version),
            (Some("nil"), Variant::Ncs, 0)
        );
        let max = inspect(&Uuid::max());
        assert_eq!(
            (max.special, max.variant, max.version),
            (Some("max"), Variant::Future, 15)
        );
        assert!(max.timestamp.is_none());
        let ms: Uuid = "00000000-0000-7000-c000-000000000000".parse().unwrap();
        assert_eq!(inspect(&ms).variant, Variant::Microsoft);
        assert!(
            inspect(&ms).timestamp.is_none(),
            "a non-RFC variant has no v7 layout"
        );
    }

    #[test]
    fn draft01_values_are_dated_by_the_draft() {
        let f = draft01::Draft01Fields {
            unix_seconds: 1_645_557_742,
            subsec_nanos: 250_000_000,
            seq: 1,
            random: 5,
        };
        let id = draft01::encode(Draft01Precision::Millisecond, f).unwrap();
        let r = inspect(&id);
        assert_eq!(r.layout_guess.unwrap().layout, V7Layout::Draft01);
        assert_eq!(r.timestamp.unwrap().to_string(), "2022-02-22T19:22:22.250Z");
        let json = serde_json::to_value(inspect(&id)).unwrap();
        assert_eq!(
            json["draft01"]["us"]["iso8601"],
            "2022-02-22T19:22:22.250000Z"
        );
        assert_eq!(json["layout_guess"]["layout"], "draft01");
    }
}

/// v7 values kept to guess the layout of the next one: consecutive values
/// of one generator show its counter or fraction.
const CONTEXT: usize = 8;

/// How far apart in time (ms) a preceding v7 value may be and still count
/// as the same generator's neighbour. Counters and sub-millisecond fractions
/// only show between values minted close together; unrelated values pasted
/// into one list (years apart, say) would otherwise be pooled and make any
/// layout look certain.
const NEIGHBOUR_WINDOW_MS: u64 = 1_000;

/// Inspects a sequence of values, each with the v7 values just before it as
/// context ([`inspect_in_context`]): what a list of values pasted from one
/// generator needs.
///
/// ```
/// let mut inspector = uuidforge::inspect::Inspector::default();
/// let a = inspector.next(&uuidforge::v7());
/// assert_eq!(a.version, 7);
/// ```
#[derive(Debug, Default, Clone)]
pub struct Inspector {
    previous: std::collections::VecDeque<Uuid>,
}

impl Inspector {
    /// The report of the next value of the sequence.
    pub fn next(&mut self, uuid: &Uuid) -> Report {
        if uuid.get_version_num() == 7 {
            let ms = v7::unix_ms(uuid);
            self.previous
                .retain(|p| v7::unix_ms(p).abs_diff(ms) <= NEIGHBOUR_WINDOW_MS);
        }
        let context: Vec<Uuid> = self.previous.iter().copied().collect();
        let report = inspect_in_context(uuid, &context);
        if uuid.get_version_num() == 7 {
            if self.previous.len() == CONTEXT {
                self.previous.pop_front();
            }
            self.previous.push_back(*uuid);
        }
        report
    }
}

/// The JSON form of a parsed value's report: the [`Report`] fields plus
/// `input`, `form` (the text form it was read in), `uuid192` (segment and
/// fields) for a UUID_192, and `layout_reading` when `layout` is given for
/// a v7.
///
/// ```
/// use uuidforge::inspect::{inspect, value_json};
/// let v = uuidforge::parser::parse_value(b"01FWHE4YDGFK1SHH6W1G60EECF").unwrap();
/// let j = value_json("01FWHE4YDGFK1SHH6W1G60EECF", v, &inspect(&v.uuid()), None);
/// assert_eq!(j["form"], "base32");
/// assert_eq!(j["version"], 7);
/// ```
pub fn value_json(
    input: &str,
    value: crate::parser::Value,
    report: &Report,
    layout: Option<V7Layout>,
) -> serde_json::Value {
    use crate::parser::Value;
    use serde_json::json;
    let mut j = serde_json::to_value(report).expect("a report serialises");
    j["input"] = json!(input);
    j["form"] = json!(value.form_name());
    if let Value::Uuid192(k) = value {
        j["uuid192"] = json!({
            "text": k.to_string(),
            "base32": k.to_base32(),
            "segment": format!("{:016x}", k.segment().0),
            "structure_code": k.segment().structure_code(),
            "checksum": format!("{:04x}", k.segment().checksum()),
            "checksum_valid": true,
            "fields": k.fields().ok(),
        });
    }
    if let Some(l) = layout.filter(|_| report.version == 7) {
        let r = layout::read_v7(&report.uuid, l);
        j["layout_reading"] = json!({
            "layout": l.name(), "written_by": l.written_by(), "timestamp": r.timestamp, "counter": r.counter,
        });
    }
    j
}

#[cfg(test)]
mod inspector_tests {
    use super::*;

    const RFC_V7: &str = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";

    #[test]
    fn values_far_apart_in_time_are_not_one_generators_context() {
        let rfc = Uuid::parse_str(RFC_V7).unwrap();
        let alone = inspect(&rfc).layout_guess.unwrap();
        let mut inspector = Inspector::default();
        for _ in 0..5 {
            inspector.next(&crate::v7());
        }
        let after_fresh = inspector.next(&rfc).layout_guess.unwrap();
        assert_eq!(after_fresh.layout, alone.layout);
        assert_eq!(after_fresh.confidence, alone.confidence);
        assert!(after_fresh.confidence < 1.0, "{after_fresh:?}");
    }

    #[test]
    fn values_close_in_time_still_share_their_context() {
        let mut generator =
            crate::generator::V7Generator::new(crate::generator::GeneratorConfig::default())
                .unwrap();
        let values: Vec<Uuid> = (0..6).map(|_| generator.generate().unwrap()).collect();
        let mut inspector = Inspector::default();
        let last = values.iter().map(|v| inspector.next(v)).last().unwrap();
        let pooled = inspect_in_context(&values[5], &values[..5]);
        assert_eq!(last.layout_guess, pooled.layout_guess);
    }
}

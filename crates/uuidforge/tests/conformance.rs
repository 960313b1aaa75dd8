//! Runs every vector of `conformance/vectors.json` (E14) against the library.
//! The file is written by `conformance/generate.py`, an independent Python
//! implementation, so these checks compare two implementations.

use serde_json::Value as Json;
use uuid::Uuid;
use uuidforge::bounds;
use uuidforge::draft01::{self, Draft01Fields, Draft01Precision};
use uuidforge::error::ParseErrorKind;
use uuidforge::fmt::Format;
use uuidforge::gregorian;
use uuidforge::inspect::inspect;
use uuidforge::parser::{parse, parse_value, Value};
use uuidforge::sortorder::{DotNetGuid, MySqlSwap, SqlServer, StoreOrder};
use uuidforge::uuid192::{GeneralFields, Operation, SegmentFields, Uuid192};
use uuidforge::v8::{DraftFields, DraftLayout};

fn vectors() -> Vec<Json> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../conformance/vectors.json"
    );
    let text = std::fs::read_to_string(path).expect("conformance/vectors.json");
    let doc: Json = serde_json::from_str(&text).expect("valid JSON");
    doc["vectors"].as_array().expect("vectors").clone()
}

fn s(j: &Json) -> &str {
    j.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {j}"))
}

fn u(j: &Json) -> u64 {
    j.as_u64()
        .unwrap_or_else(|| panic!("expected a number, got {j}"))
}

fn id(j: &Json) -> Uuid {
    parse(s(j)).unwrap()
}

fn canon(x: &Uuid) -> String {
    Format::Canonical.to_text(x)
}

#[test]
fn every_vector_passes() {
    let all = vectors();
    assert!(
        all.len() >= 90,
        "the vector file lost vectors: {}",
        all.len()
    );
    let mut failures = Vec::new();
    for v in &all {
        let result = std::panic::catch_unwind(|| check(v));
        if result.is_err() {
            failures.push(v["id"].to_string());
        }
    }
    assert!(failures.is_empty(), "failed vectors: {failures:?}");
}

fn check(v: &Json) {
    let e = &v["expect"];
    match s(&v["kind"]) {
        "decode" => {
            let x = id(&v["input"]);
            let r = inspect(&x);
            assert_eq!(canon(&x), s(&e["canonical"]));
            assert_eq!(r.version as u64, u(&e["version"]));
            let report = serde_json::to_value(&r).unwrap();
            assert_eq!(report["variant"], e["variant"]);
            if let Some(t) = e.get("timestamp") {
                assert_eq!(r.timestamp.unwrap().to_string(), s(t));
            }
            if let Some(sp) = e.get("special") {
                assert_eq!(r.special, Some(s(sp)));
            }
            for (name, value) in e["fields"].as_object().unwrap() {
                let f = r
                    .fields
                    .iter()
                    .find(|f| f.name == name)
                    .unwrap_or_else(|| panic!("field {name}"));
                assert_eq!(f.value, s(value), "{name}");
            }
        }
        "name-based" => {
            let ns = id(&v["namespace"]);
            let name = s(&v["name"]).as_bytes();
            let got = match u(&v["version"]) {
                3 => uuidforge::classic::v3(&ns, name),
                5 => uuidforge::classic::v5(&ns, name),
                8 => uuidforge::v8::sha256_name(&ns, name),
                n => panic!("version {n}"),
            };
            assert_eq!(canon(&got), s(&e["canonical"]));
        }
        "v1-v6" => {
            let (v1, v6) = (id(&v["v1"]), id(&v["v6"]));
            assert_eq!(gregorian::v1_to_v6(&v1).unwrap(), v6);
            assert_eq!(gregorian::v6_to_v1(&v6).unwrap(), v1);
            if let Some(t) = e["timestamp"].as_str() {
                assert_eq!(
                    gregorian::v6_fields(&v6).unwrap().timestamp().to_string(),
                    t
                );
            }
        }
        "encodings" => {
            let x = id(&v["input"]);
            for (form, text) in e.as_object().unwrap() {
                let f = Format::from_name(form).unwrap();
                assert_eq!(f.to_text(&x), s(text), "{form}");
                assert_eq!(parse(s(text)).unwrap(), x, "{form} parses back");
            }
        }
        "parse" => assert_eq!(canon(&id(&v["input"])), s(&e["canonical"])),
        "parse-error" => {
            let err = parse(s(&v["input"])).unwrap_err();
            assert_eq!(err.position().map(|p| p as u64), e["position"].as_u64());
            if let Some(found) = e["found"].as_str() {
                let c = found.chars().next().unwrap();
                let ok = matches!(err.kind, ParseErrorKind::InvalidCharacter { found, .. } | ParseErrorKind::Overflow { found } if found == c);
                assert!(ok, "{err}");
            }
            if let Some(check) = e.get("check_expected") {
                assert!(
                    matches!(err.kind, ParseErrorKind::CheckSymbolMismatch { expected, .. } if expected.to_string() == s(check))
                );
            }
        }
        "method3" => {
            let f =
                uuidforge::v7::submillis_fraction(u(&v["nanos_in_ms"]) as u32, u(&v["bits"]) as u8)
                    .unwrap();
            assert_eq!(f as u64, u(&e["fraction"]));
        }
        "counter42" => {
            let c = u(&v["counter"]);
            let x = uuidforge::v7::from_unix_ms(
                u(&v["unix_ms"]),
                (c >> 30) as u16,
                ((c & 0x3fff_ffff) << 32) | u(&v["random32"]),
            )
            .unwrap();
            assert_eq!(canon(&x), s(&e["canonical"]));
            let reading = uuidforge::layout::read_v7(&x, uuidforge::layout::V7Layout::Counter42);
            assert_eq!(reading.counter, Some(c));
        }
        "draft01" => {
            let layout = match s(&v["layout"]) {
                "ms" => Draft01Precision::Millisecond,
                "us" => Draft01Precision::Microsecond,
                _ => Draft01Precision::Nanosecond,
            };
            let f = Draft01Fields {
                unix_seconds: u(&v["unix_seconds"]),
                subsec_nanos: u(&v["subsec_nanos"]) as u32,
                seq: u(&v["seq"]) as u32,
                random: u(&v["random"]),
            };
            let x = draft01::encode(layout, f).unwrap();
            assert_eq!(canon(&x), s(&e["canonical"]));
            for (key, p) in [
                ("ms", Draft01Precision::Millisecond),
                ("us", Draft01Precision::Microsecond),
                ("ns", Draft01Precision::Nanosecond),
            ] {
                assert_eq!(draft01::decode(&x, p).to_string(), s(&e[key]), "{key}");
            }
        }
        "v8-draft" => {
            let layout: DraftLayout = serde_json::from_value(v["layout"].clone()).unwrap();
            let f = DraftFields {
                timestamp: u(&v["timestamp"]),
                seq: u(&v["seq"]) as u16,
                node: u(&v["node"]),
            };
            let x = layout.encode(f).unwrap();
            assert_eq!(canon(&x), s(&e["canonical"]));
            assert_eq!(layout.decode(&x).unwrap().timestamp, u(&e["timestamp"]));
        }
        "v8-b1" => {
            let x = uuidforge::v8::time_based_b1(u(&v["ticks_10ns"]), u(&v["custom_c"])).unwrap();
            assert_eq!(canon(&x), s(&e["canonical"]));
            assert_eq!(
                uuidforge::v8::time_based_b1_timestamp(&x).to_string(),
                s(&e["timestamp"])
            );
        }
        "uuid192" => {
            let f = &v["fields"];
            let fields = if s(&f["structure"]) == "raw" {
                SegmentFields::Raw {
                    payload: u(&f["payload"]),
                }
            } else {
                SegmentFields::General(GeneralFields {
                    module: u(&f["module"]) as u8,
                    table: u(&f["table"]) as u16,
                    source: u(&f["source"]) as u8,
                    operation: serde_json::from_value::<Operation>(f["operation"].clone()).unwrap(),
                    message: u(&f["message"]) as u8,
                    shard: u(&f["shard"]) as u8,
                    archived: f["archived"].as_bool().unwrap(),
                    deleted: f["deleted"].as_bool().unwrap(),
                })
            };
            let k = Uuid192::new(id(&v["uuid"]), fields).unwrap();
            assert_eq!(k.to_string(), s(&e["text"]));
            assert_eq!(k.to_base32(), s(&e["base32"]));
            let hex: String = k.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex, s(&e["bytes"]));
            assert_eq!(format!("{:04x}", k.segment().checksum()), s(&e["checksum"]));
            assert_eq!(
                parse_value(s(&e["base32"]).as_bytes()).unwrap(),
                Value::Uuid192(k)
            );
            assert_eq!(k.fields().unwrap(), fields);
        }
        "uuid192-error" => {
            let err = Uuid192::parse(s(&v["input"])).unwrap_err();
            match s(&e["error"]) {
                "checksum" => assert!(matches!(err.kind, ParseErrorKind::ChecksumMismatch { .. })),
                _ => assert!(matches!(err.kind, ParseErrorKind::UnknownStructure { .. })),
            }
        }
        "bounds" => {
            let ms = u(&v["unix_ms"]);
            assert_eq!(canon(&bounds::lowest_v7(ms).unwrap()), s(&e["lowest"]));
            assert_eq!(canon(&bounds::highest_v7(ms).unwrap()), s(&e["highest"]));
        }
        "partition" => {
            let (ms, bits) = (u(&v["unix_ms"]), u(&v["bits"]) as u8);
            let key = bounds::partition_key_at(ms, bits).unwrap();
            assert_eq!(key, u(&e["key"]));
            assert_eq!(bounds::key_span_ms(bits).unwrap(), u(&e["span_ms"]));
            let r = bounds::partition_range(key, bits).unwrap();
            assert_eq!(canon(&r.start), s(&e["start"]));
            assert_eq!(r.end.map(|x| canon(&x)).as_deref(), e["end"].as_str());
        }
        "sortorder" => {
            let x = id(&v["uuid"]);
            assert_eq!(canon(&SqlServer::shown(&x)), s(&e["sqlserver_shown"]));
            let dotnet: String = DotNetGuid::encode(&x)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(dotnet, s(&e["dotnet_bytes"]));
            assert_eq!(
                canon(&Uuid::from_bytes(MySqlSwap::encode(&x))),
                s(&e["mysql_swap_handed"])
            );
        }
        kind => panic!("unknown vector kind {kind}"),
    }
}

//! The JSON reader against serde_json: every UUID string of any document
//! is found once, with the path serde_json's tree gives it.

use proptest::prelude::*;
use serde_json::Value;
use uuidforge_grep::{search, Event, Format, Matcher};

fn uuid_text(bits: u128) -> String {
    uuid::Uuid::from_u128(bits).hyphenated().to_string()
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<u128>().prop_map(|b| Value::String(uuid_text(b))),
        any::<u128>().prop_map(|b| Value::String(format!("see https://h/o/{}?x", uuid_text(b)))),
        "[a-z ]{0,12}".prop_map(Value::String),
        any::<i32>().prop_map(Value::from),
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z][a-z0-9_ ]{0,6}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// (path, UUID) of every UUID in string values, as serde_json sees them.
fn expected(value: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => {
            for token in uuidforge::scan::tokens(s.as_bytes()) {
                out.push((path.to_string(), token.uuid.to_string()));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                expected(item, &format!("{path}[{i}]"), out);
            }
        }
        Value::Object(members) => {
            for (key, item) in members {
                let step = if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    format!(".{key}")
                } else {
                    format!("['{key}']")
                };
                expected(item, &format!("{path}{step}"), out);
            }
        }
        _ => {}
    }
}

proptest! {
    #[test]
    fn every_uuid_string_is_found_at_its_path(value in value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        let mut want = Vec::new();
        expected(&value, "$", &mut want);
        let mut got = Vec::new();
        search(text.as_bytes(), Format::Json, &Matcher::default(), false, &mut |event| {
            match event {
                Event::Record(record) => got.extend(record.hits.iter().map(|h| (h.path.clone().unwrap(), h.uuid.to_string()))),
                Event::Error(offset, message) => panic!("{offset}: {message} in {text}"),
                Event::Header(..) => {}
            }
            std::ops::ControlFlow::Continue(())
        });
        prop_assert_eq!(got, want);
    }

    #[test]
    fn truncated_json_is_an_error_never_a_panic(value in value(), cut in 0.0f64..1.0) {
        let text = serde_json::to_string(&value).unwrap();
        let end = ((text.len() as f64) * cut) as usize;
        let Some(prefix) = text.get(..end) else { return Ok(()) };
        let mut errors = 0;
        search(prefix.as_bytes(), Format::Json, &Matcher::default(), true, &mut |event| {
            if matches!(event, Event::Error(..)) {
                errors += 1;
            }
            std::ops::ControlFlow::Continue(())
        });
        let complete = serde_json::from_str::<Value>(prefix).is_ok();
        prop_assert_eq!(errors == 0, complete, "{}", prefix);
    }
}

/// A JSON document cut off near its end: every UUID of the records before
/// the cut is reported, then the error.
#[test]
fn a_cut_off_document_reports_what_was_read_then_the_error() {
    let ids: Vec<String> = (0..500)
        .map(|i| format!("017f22e2-79b0-7cc3-98c4-dc0c0c07{i:04x}"))
        .collect();
    let records: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| serde_json::json!({ "id": id }))
        .collect();
    let text = serde_json::to_string(&records).unwrap();
    let cut = &text[..text.len() - 30];
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for every_record in [false, true] {
        found.clear();
        errors.clear();
        search(
            cut.as_bytes(),
            Format::Json,
            &Matcher::default(),
            every_record,
            &mut |event| {
                match event {
                    Event::Record(record) => {
                        found.extend(record.hits.iter().map(|h| h.uuid.to_string()))
                    }
                    Event::Error(offset, message) => errors.push((offset, message)),
                    Event::Header(..) => {}
                }
                std::ops::ControlFlow::Continue(())
            },
        );
        let complete = ids
            .iter()
            .filter(|id| cut.contains(&format!("\"{id}\"")))
            .count();
        assert!(complete >= 498, "{complete}");
        assert_eq!(found, ids[..complete].to_vec());
        assert_eq!(errors.len(), 1, "{errors:?}");
    }
}

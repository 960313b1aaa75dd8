//! The OpenAPI document's patterns for UUID text agree with the library's
//! parser: every form the library writes matches, and texts the parser
//! refuses by their shape do not. (Checksums — Base32's check symbol and
//! UUID_192's CRC — are beyond a pattern; the parser alone checks them.)

use proptest::prelude::*;
use regex::Regex;
use serde_json::Value;
use uuidforge::convert::{convert, Target};
use uuidforge::fmt::Format;
use uuidforge::parser::Value as Parsed;
use uuidforge::uuid192::{SegmentFields, Uuid192};

fn document() -> Value {
    serde_json::from_str(include_str!("../api/openapi.json")).unwrap()
}

fn pattern(at: &Value) -> Regex {
    // The lookup's pattern repeats the UUID alternation up to 999 times.
    regex::RegexBuilder::new(at["pattern"].as_str().expect("a pattern"))
        .size_limit(1 << 30)
        .build()
        .unwrap()
}

struct Patterns {
    uuid: Regex,
    value: Regex,
    identicon: Regex,
    lookup: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: std::sync::LazyLock<Patterns> = std::sync::LazyLock::new(compile);
    &PATTERNS
}

fn compile() -> Patterns {
    let d = document();
    let schemas = &d["components"]["schemas"];
    let param = |path: &str| d["paths"][path]["get"]["parameters"][0]["schema"].clone();
    Patterns {
        uuid: pattern(&schemas["UuidText"]),
        value: pattern(&schemas["ValueText"]),
        identicon: pattern(&param("/api/v1/identicon/{file}")),
        lookup: pattern(&param("/api/v1/names")),
    }
}

/// Strings that a schema's pattern admits (proptest generates from the
/// pattern without its anchors).
fn admitted(schema: &str) -> impl Strategy<Value = String> {
    let d = document();
    let anchored = d["components"]["schemas"][schema]["pattern"]
        .as_str()
        .unwrap()
        .to_string();
    let inner = anchored
        .strip_prefix('^')
        .unwrap()
        .strip_suffix('$')
        .unwrap()
        .to_string();
    proptest::string::string_regex(&inner).unwrap()
}

fn written(value: Parsed, target: Target, upper: bool) -> String {
    let mut out = Vec::new();
    convert(value, target, false, upper, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

proptest! {
    #[test]
    fn every_uuid_form_matches(bits: u128, upper: bool) {
        let p = patterns();
        let uuid = uuid::Uuid::from_u128(bits);
        for format in Format::ALL.into_iter().filter(|f| *f != Format::Binary) {
            let text = written(Parsed::Uuid(uuid, format), Target::Form(format), upper);
            prop_assert!(uuidforge::parser::parse(&text).is_ok());
            prop_assert!(p.uuid.is_match(&text), "UuidText refuses {text}");
            prop_assert!(p.value.is_match(&text), "ValueText refuses {text}");
            prop_assert!(p.identicon.is_match(&format!("{text}.svg")), "{text}.svg");
            prop_assert!(p.lookup.is_match(&format!("{text},{text}")), "{text},{text}");
        }
    }

    #[test]
    fn every_uuid192_form_matches_value_text_only(bits: u128, payload in 0u64..(1 << 44), upper: bool) {
        let p = patterns();
        let key = Uuid192::new(uuid::Uuid::from_u128(bits), SegmentFields::Raw { payload }).unwrap();
        for target in [Target::Uuid192, Target::Uuid192Base32] {
            let text = written(Parsed::Uuid192(key), target, upper);
            prop_assert!(uuidforge::parser::parse_value(text.as_bytes()).is_ok());
            prop_assert!(p.value.is_match(&text), "ValueText refuses {text}");
            prop_assert!(!p.uuid.is_match(&text), "UuidText takes {text}");
        }
    }

    /// What UuidText admits, the parser reads, or refuses for a check
    /// symbol that does not match (27 characters).
    #[test]
    fn what_uuid_text_admits_parses_but_for_a_check_symbol(text in admitted("UuidText")) {
        match uuidforge::parser::parse(&text) {
            Ok(_) => {}
            Err(e) => prop_assert_eq!(text.len(), 27, "{} refused: {}", text, e),
        }
    }

    /// What ValueText admits, the parser reads, or refuses for a checksum:
    /// a check symbol (27) or a UUID_192's structure or CRC (53, 39).
    #[test]
    fn what_value_text_admits_parses_but_for_a_checksum(text in admitted("ValueText")) {
        match uuidforge::parser::parse_value(text.as_bytes()) {
            Ok(_) => {}
            Err(e) => prop_assert!([27, 39, 53].contains(&text.len()), "{} refused: {}", text, e),
        }
    }
}

#[test]
fn shapes_the_parser_refuses_do_not_match() {
    let p = patterns();
    for text in [
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398",   // a digit short
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398g",  // not hex
        "017f22e279b0-7cc3-98c4-dc0c0c07398f0",  // dash moved
        "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f", // brace missing
        "urn:uid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "81FWHE4YDGFK1SHH6W1G60EECF",  // first Base32 symbol above 7
        "01FWHE4YDGFK1SHH6W1G60EECU",  // U is not a Base32 digit
        "01FWHE4YDGFK1SHH6W1G60EECF#", // not a check symbol
        "",
    ] {
        assert!(uuidforge::parser::parse(text).is_err(), "{text}");
        assert!(!p.uuid.is_match(text), "UuidText takes {text}");
        assert!(!p.value.is_match(text), "ValueText takes {text}");
    }
    assert!(!p.identicon.is_match("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"));
    assert!(!p.lookup.is_match("017f22e2-79b0-7cc3-98c4-dc0c0c07398f,"));
}

//! Every text parser: no panic, and whatever parses writes back to a text
//! that parses to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use uuidforge::fmt::Format;
use uuidforge::parser::{parse_canonical, parse_detect_bytes, parse_value, Value};

fuzz_target!(|data: &[u8]| {
    if let Ok((uuid, form)) = parse_detect_bytes(data) {
        let text = form.to_text(&uuid);
        assert_eq!(parse_detect_bytes(text.as_bytes()).unwrap(), (uuid, form));
        if form == Format::Canonical {
            assert_eq!(text.as_bytes(), data.to_ascii_lowercase().as_slice());
        }
    }
    let _ = parse_canonical(data);
    uuidforge::parser::__check_every_tier(data);
    if let Ok(Value::Uuid192(k)) = parse_value(data) {
        assert_eq!(k.to_string().parse::<uuidforge::uuid192::Uuid192>().unwrap(), k);
    }
});

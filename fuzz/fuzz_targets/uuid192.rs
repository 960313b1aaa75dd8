//! UUID_192 text, Base32 and bytes: no panic, and verified values round-trip.
#![no_main]
use libfuzzer_sys::fuzz_target;
use uuidforge::uuid192::{Segment, Uuid192};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Segment::from_text(text);
        if let Ok(k) = Uuid192::parse(text) {
            assert_eq!(Uuid192::parse(&k.to_string()).unwrap(), k);
            assert_eq!(Uuid192::parse(&k.to_base32()).unwrap(), k);
        }
    }
    if let Ok(bytes) = <[u8; 24]>::try_from(data) {
        if let Ok(k) = Uuid192::from_bytes(bytes) {
            assert_eq!(k.to_bytes(), bytes);
        }
    }
});

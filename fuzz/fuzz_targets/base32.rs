//! Crockford Base32: no panic; a decoded value re-encodes to the canonical
//! spelling of the input (upper case, aliases resolved).
#![no_main]
use libfuzzer_sys::fuzz_target;
use uuidforge::base32;

fuzz_target!(|data: &[u8]| {
    // Every SIMD tier this CPU has agrees with the portable code.
    base32::__check_every_tier(data);
    if let Ok(uuid) = base32::decode(data) {
        let canonical: Vec<u8> = data
            .iter()
            .map(|c| match c.to_ascii_uppercase() {
                b'O' => b'0',
                b'I' | b'L' => b'1',
                c => c,
            })
            .collect();
        assert_eq!(base32::encode(&uuid).as_bytes().as_slice(), canonical.as_slice());
    }
    if let Ok(uuid) = base32::decode_with_check(data) {
        assert_eq!(base32::decode_with_check(&base32::encode_with_check(&uuid)).unwrap(), uuid);
    }
});

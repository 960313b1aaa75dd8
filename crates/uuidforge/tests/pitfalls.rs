//! Regression tests for the pitfalls of `shared/spec/rfc9562.md` §3 that
//! concern decoding and layouts (the generator pitfalls 2–6 and 8 are tested
//! with the generator).

use uuid::Uuid;
use uuidforge::layout::{read_v7, V7Layout};
use uuidforge::{gregorian, v7, v8};

/// Pitfall 1 (uuid-rs#869): a 42-bit counter must sit right after the
/// timestamp, 12 bits in rand_a then 30 in rand_b, so that incrementing it
/// increases the UUID across the rand_a / rand_b boundary.
#[test]
fn pitfall_1_counter_sits_after_the_timestamp() {
    let ms = 1_700_000_000_000;
    let encode = |c: u64| {
        v7::from_unix_ms(
            ms,
            (c >> 30) as u16,
            ((c & 0x3fff_ffff) << 32) | 0x1234_5678,
        )
        .unwrap()
    };
    let expected = [
        (0x3ff_ffff, "018bcfe5-6800-7000-83ff-ffff"),
        (0x400_0000, "018bcfe5-6800-7000-8400-0000"),
        (0x4000_0000, "018bcfe5-6800-7001-8000-0000"),
        (0x3ff_ffff_ffff, "018bcfe5-6800-7fff-bfff-ffff"),
    ];
    for (c, prefix) in expected {
        let id = encode(c);
        assert!(id.to_string().starts_with(prefix), "{c:#x}: {id}");
        assert_eq!(read_v7(&id, V7Layout::Counter42).counter, Some(c));
    }
    // Every step of the counter, including across the 12/30 split, sorts up.
    for c in [0x3fff_fffeu64, 0x3fff_ffff, 0x4000_0000, 0x7fff_ffff] {
        assert!(encode(c) < encode(c + 1), "{c:#x}");
    }
}

/// Pitfall 7 (uuid-utils#81, uuid-rs#831): accessors must say their unit.
#[test]
fn pitfall_7_timestamp_units_are_not_confused() {
    let a6: Uuid = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse().unwrap();
    assert_eq!(
        v7::unix_ms(&a6),
        1_645_557_742_000,
        "milliseconds, not seconds or microseconds"
    );
    let t = v7::timestamp(&a6).unwrap();
    assert_eq!(t.unix_ms(), 1_645_557_742_000);
    assert_eq!(t.unix_nanos, 1_645_557_742_000_000_000);
    let v1: Uuid = "C232AB00-9414-11EC-B3C8-9F6BDECED846".parse().unwrap();
    let f = gregorian::v1_fields(&v1).unwrap();
    assert_eq!(
        f.ticks, 0x1EC9414C232AB00,
        "100-ns ticks since 1582, not Unix"
    );
    assert_eq!(f.timestamp().unix_nanos, 1_645_557_742_000_000_000);
    let b1: Uuid = "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0".parse().unwrap();
    assert_eq!(
        v8::time_based_b1_timestamp(&b1).unix_nanos,
        1_645_557_742_000_000_000,
        "10-ns ticks"
    );
}

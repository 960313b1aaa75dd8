//! Generating UUIDv7: the process-wide generator most programs need, a
//! profile's, an owned generator for a hot loop, and the classic versions.
//!
//!     cargo run -p uuidforge --example generate

use uuidforge::generator::{global_profile, GeneratorConfig, V7Generator};
use uuidforge::Uuid;

fn main() {
    // One call, any thread: strictly increasing in the order handed out.
    let a = uuidforge::v7();
    let b = uuidforge::v7();
    assert!(a < b);
    println!("v7 (process-wide):       {a}");

    // PostgreSQL 18's layout (a 12-bit sub-millisecond fraction), in the
    // same order as uuidforge::v7().
    let pg18 = global_profile("pg18")
        .expect("a built-in profile")
        .generate_or_continue();
    assert!(b < pg18);
    println!("v7 (pg18 profile):       {pg18}");

    // An owned generator: no sharing, for filling buffers in a loop.
    let mut generator = V7Generator::new(GeneratorConfig::default()).expect("the default profile");
    let mut batch = vec![Uuid::nil(); 1000];
    generator.fill(&mut batch).expect("the clock is readable");
    assert!(batch.windows(2).all(|w| w[0] < w[1]));
    println!("v7 (owned, 1000 filled): {} .. {}", batch[0], batch[999]);

    // A value for an explicit time (a backfill), and the one value of a
    // (time, key) pair, the same as SQL's uuidv7_from(t, key).
    let at = chrono::DateTime::parse_from_rfc3339("2024-05-01T12:00:00Z").expect("RFC 3339");
    let backfilled = generator.generate_at(at).expect("a time after 1970");
    let keyed = uuidforge::generator::v7_from_key(at, b"orders:42").expect("a time after 1970");
    println!("v7 at 2024-05-01:        {backfilled}");
    println!("v7 of (2024-05-01, orders:42): {keyed}");

    println!("v4:                      {}", uuidforge::classic::v4());
    println!(
        "v5 (dns, example.com):   {}",
        uuidforge::classic::v5(&Uuid::NAMESPACE_DNS, b"example.com")
    );
}

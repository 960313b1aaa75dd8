//! The UUIDv7 keys of a time range as two bounds for `WHERE id >= $1 AND
//! id < $2` (an index range scan, no timestamp column needed), from
//! `SystemTime` or chrono, and the partitions that cover a year.
//!
//!     cargo run -p uuidforge --example time_range

use chrono::{TimeZone, Utc};
use std::time::{Duration, SystemTime};
use uuidforge::bounds::{partition_ddl, partitions, v7_range};

fn main() {
    // The last hour, from the system clock: a key made now is in it (its
    // millisecond is `now`'s or the one after, which the bound excludes).
    let now = SystemTime::now();
    let last_hour = v7_range(now - Duration::from_secs(3600), now).expect("times after 1970");
    println!("last hour: {}", last_hour.sql_predicate("id"));

    // January 2024, from chrono.
    let january = v7_range(
        Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap(),
        Utc.with_ymd_and_hms(2024, 2, 1, 0, 0, 0).unwrap(),
    )
    .expect("times after 1970");
    println!("January 2024: {}", january.sql_predicate("id"));
    let made_then = uuidforge::generator::v7_from_key(
        Utc.with_ymd_and_hms(2024, 1, 15, 12, 0, 0).unwrap(),
        b"an order",
    )
    .unwrap();
    assert!(january.contains(&made_then));

    // 2024 in partitions of 17 bits (about 25 days each).
    let year = partitions(
        17,
        Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap(),
        Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap(),
    )
    .expect("a valid range");
    println!("2024 in {} partitions; the first:", year.len());
    println!("{}", partition_ddl("public", "events", 17, &year)[0]);
}

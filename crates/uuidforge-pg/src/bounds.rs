//! Time ranges as UUIDv7 ranges (RFC 9562 §6.11 sorting, E7) and partition
//! keys that are left prefixes of the UUID (C3).

use crate::errors::{invalid_argument, time_out_of_range};
use crate::generate::{from_pg, to_pg};
use crate::time;
use pgrx::datum::{Range, RangeBound};
use pgrx::prelude::*;
use uuidforge::bounds::{highest_v7, lowest_v7};
use uuidforge::v7::MAX_UNIX_MS;

const RANGE: &str = "a time within 1970-01-01 00:00:00+00 .. 10889-08-02 05:31:50.655+00";

fn millisecond_of(function: &str, at: TimestampWithTimeZone) -> u64 {
    match time::unix_us(at).map(|us| us.div_euclid(1000)) {
        Some(ms) if (0..=MAX_UNIX_MS as i64).contains(&ms) => ms as u64,
        _ => time_out_of_range(function, format_args!("{at}"), RANGE),
    }
}

/// The lowest (`upper` false) or highest (`upper` true) UUIDv7 of the
/// millisecond that contains `at`: every v7 of that millisecond lies
/// between the two.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuidv7_boundary(at: TimestampWithTimeZone, upper: bool) -> pgrx::Uuid {
    let ms = millisecond_of("uuidv7_boundary", at);
    let u = if upper { highest_v7(ms) } else { lowest_v7(ms) };
    to_pg(u.expect("a checked millisecond is in range"))
}

/// The first millisecond (in Unix ms, may be outside the v7 range) whose
/// UUIDs a bound admits, given how far instants in it can reach.
fn first_ms(bound: &RangeBound<TimestampWithTimeZone>) -> Option<i128> {
    let us = time::unix_us(*bound.get()?)? as i128;
    Some(us.div_euclid(1000))
}

fn end_ms(bound: &RangeBound<TimestampWithTimeZone>) -> Option<i128> {
    let us = time::unix_us(*bound.get()?)? as i128;
    // An exclusive end admits instants up to one µs before it.
    let last_us = if bound.is_inclusive() { us } else { us - 1 };
    Some(last_us.div_euclid(1000) + 1)
}

fn uuid_at_ms(ms: i128) -> uuid::Uuid {
    match ms {
        ms if ms < 0 => uuid::Uuid::nil(),
        ms if ms > MAX_UNIX_MS as i128 => uuid::Uuid::max(),
        ms => lowest_v7(ms as u64).expect("in range"),
    }
}

/// The inclusive lower UUID bound of a `tstzrange`: with
/// `uuidv7_range_upper`, `id >= lower AND id < upper` selects exactly the
/// UUIDv7 whose millisecond overlaps the range (an index range scan).
/// Unbounded below gives the nil UUID; NULL for an empty range.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuidv7_range_lower(range: Range<TimestampWithTimeZone>) -> Option<pgrx::Uuid> {
    if range.is_empty() {
        return None;
    }
    let lower = range.lower()?;
    Some(to_pg(match first_ms(lower) {
        None if lower.is_infinite() || lower.get().is_some_and(|t| t.is_neg_infinity()) => {
            uuid::Uuid::nil()
        }
        None => uuid::Uuid::max(),
        Some(ms) => uuid_at_ms(ms),
    }))
}

/// The exclusive upper UUID bound of a `tstzrange` (see
/// `uuidv7_range_lower`). Unbounded above gives the max UUID (above every
/// v7); NULL for an empty range.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuidv7_range_upper(range: Range<TimestampWithTimeZone>) -> Option<pgrx::Uuid> {
    if range.is_empty() {
        return None;
    }
    let upper = range.upper()?;
    Some(to_pg(match end_ms(upper) {
        None if upper.get().is_some_and(|t| t.is_neg_infinity()) => uuid::Uuid::nil(),
        None => uuid::Uuid::max(),
        Some(ms) => uuid_at_ms(ms),
    }))
}

fn check_bits(function: &str, bits: i32) -> u8 {
    if !(1..=48).contains(&bits) {
        invalid_argument(
            function,
            "bits",
            bits,
            "1..=48 (the key is the UUID's left bits, within the 48-bit timestamp)",
        );
    }
    bits as u8
}

/// The partition key of a UUID: its left `bits` bits (1..=48). For UUIDv7 a
/// key of 17 bits spans 2^31 ms ≈ 24.9 days, a roughly monthly partition,
/// with no calendar arithmetic.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuidv7_partition_key(id: pgrx::Uuid, bits: i32) -> i64 {
    let bits = check_bits("uuidv7_partition_key", bits);
    uuidforge::bounds::partition_key(&from_pg(id), bits).expect("bits checked") as i64
}

/// The partition key a UUIDv7 made at `at` will have.
#[pg_extern(immutable, strict, parallel_safe, name = "uuidv7_partition_key")]
fn uuidv7_partition_key_at(at: TimestampWithTimeZone, bits: i32) -> i64 {
    let bits = check_bits("uuidv7_partition_key", bits);
    let ms = millisecond_of("uuidv7_partition_key", at);
    uuidforge::bounds::partition_key_at(ms, bits).expect("checked") as i64
}

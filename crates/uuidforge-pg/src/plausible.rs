//! Plausibility checks on client-supplied UUIDv7 (E9), for `CHECK`
//! constraints and ingest filters.

use crate::errors::invalid_argument;
use crate::generate::from_pg;
use crate::time;
use pgrx::prelude::*;
use uuidforge::plausible::{check, Rules};

fn rules(function: &str, max_skew: Interval, not_before: Option<TimestampWithTimeZone>) -> Rules {
    let skew_us = time::interval_from_now_us(max_skew);
    if skew_us < 0 {
        invalid_argument(function, "max_skew", max_skew, "an interval >= 0");
    }
    Rules {
        version: Some(7),
        max_skew_ms: Some((skew_us / 1000) as u64),
        not_before_ms: not_before.map(|t| match time::unix_us(t) {
            Some(us) => us.div_euclid(1000),
            None if t.is_neg_infinity() => i64::MIN,
            None => i64::MAX,
        }),
    }
}

fn reason(
    id: pgrx::Uuid,
    max_skew: Interval,
    not_before: Option<TimestampWithTimeZone>,
    function: &str,
) -> Option<String> {
    let rules = rules(function, max_skew, not_before);
    let now_ms = time::now_unix_us() / 1000;
    check(&from_pg(id), &rules, now_ms)
        .err()
        .map(|e| e.to_string())
}

/// Whether `id` is a UUIDv7 of the RFC variant whose time is at most
/// `max_skew` ahead of the clock and, if given, not before `not_before`.
/// Volatile (it reads the clock), which a `CHECK` constraint allows:
/// `CHECK (uuidv7_is_plausible(id, '5 seconds'))`. NULL for a NULL `id` or
/// `max_skew` (a `CHECK` lets NULL pass; `NOT NULL` is the column's job).
#[pg_extern(volatile, parallel_safe)]
fn uuidv7_is_plausible(
    id: Option<pgrx::Uuid>,
    max_skew: Option<Interval>,
    not_before: default!(Option<TimestampWithTimeZone>, "NULL"),
) -> Option<bool> {
    Some(reason(id?, max_skew?, not_before, "uuidv7_is_plausible").is_none())
}

/// Why `id` fails `uuidv7_is_plausible` (for flagging rather than
/// rejecting), or NULL when it passes (or an argument is NULL).
#[pg_extern(volatile, parallel_safe)]
fn uuidv7_implausibility(
    id: Option<pgrx::Uuid>,
    max_skew: Option<Interval>,
    not_before: default!(Option<TimestampWithTimeZone>, "NULL"),
) -> Option<String> {
    reason(id?, max_skew?, not_before, "uuidv7_implausibility")
}

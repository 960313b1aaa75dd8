//! Conversions between PostgreSQL's `timestamptz` (µs since 2000-01-01) and
//! Unix time, and the current time as PostgreSQL arithmetic sees it.

use pgrx::prelude::*;

/// Microseconds from 1970-01-01 to 2000-01-01.
const PG_EPOCH_UNIX_US: i64 = 946_684_800_000_000;

/// Unix microseconds of a finite `timestamptz` (`None` for ±infinity).
pub fn unix_us(ts: TimestampWithTimeZone) -> Option<i64> {
    ts.is_finite()
        .then(|| i64::from(ts).saturating_add(PG_EPOCH_UNIX_US))
}

/// The `timestamptz` of Unix microseconds, if PostgreSQL can represent it.
pub fn from_unix_us(us: i64) -> Option<TimestampWithTimeZone> {
    TimestampWithTimeZone::try_from(us.checked_sub(PG_EPOCH_UNIX_US)?).ok()
}

/// The `timestamp` (a UTC wall clock) of Unix microseconds, if PostgreSQL
/// can represent it.
pub fn timestamp_of_unix_us(us: i64) -> Option<Timestamp> {
    Timestamp::try_from(us.checked_sub(PG_EPOCH_UNIX_US)?).ok()
}

/// The current time as Unix microseconds, from the system clock (not the
/// transaction start: a long transaction must not make fresh UUIDs look
/// like they come from the future).
pub fn now_unix_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// `ts + shift` with PostgreSQL's calendar arithmetic (months and days in
/// the session time zone). Raises 22008 `timestamp out of range`, as
/// PostgreSQL's own `+` does, when the sum overflows: the error is caught
/// and raised again from here, so that no server version adds the Rust
/// frames it crossed to it.
pub fn plus_interval(ts: TimestampWithTimeZone, shift: Interval) -> TimestampWithTimeZone {
    PgTryBuilder::new(|| {
        // SAFETY: timestamptz_pl_interval is a strict built-in taking
        // (timestamptz, interval); both datums are valid for the call.
        unsafe {
            pgrx::direct_function_call::<TimestampWithTimeZone>(
                pg_sys::timestamptz_pl_interval,
                &[ts.into_datum(), shift.into_datum()],
            )
        }
    })
    .catch_when(PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW, |_| {
        timestamp_out_of_range()
    })
    .execute()
    .expect("timestamptz + interval is never NULL for non-NULL arguments")
}

/// PostgreSQL's own 22008 for a `timestamptz` sum beyond its range.
fn timestamp_out_of_range() -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        "timestamp out of range"
    );
}

/// The length of `shift` applied to the current time, in microseconds.
pub fn interval_from_now_us(shift: Interval) -> i64 {
    let now_us = now_unix_us();
    let now = from_unix_us(now_us).expect("the system clock is within timestamptz range");
    let then = plus_interval(now, shift);
    // PostgreSQL raises 22008 rather than returning an infinite sum; should
    // that change, saturate instead of wrapping into a wrong-signed shift.
    let then_us = unix_us(then).unwrap_or(if shift.is_negative() {
        i64::MIN
    } else {
        i64::MAX
    });
    then_us.saturating_sub(now_us)
}

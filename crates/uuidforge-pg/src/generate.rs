//! Generating functions: `uuidv7()` (server-wide or per-session order, see
//! [`crate::state`]), PostgreSQL 18's `uuidv7(shift)`, backfill, v6, v4, and
//! the per-table generation behind `uuidv7_gen` columns.

use crate::errors::time_out_of_range;
use crate::state;
use crate::time;
use pgrx::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use uuidforge::generator::{
    GenError, GeneratorConfig, OsCsprng, SharedGenerator, SystemClock, V6Generator, V7Generator,
};
use uuidforge::v7::MAX_UNIX_MS;

pub fn to_pg(u: uuid::Uuid) -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(*u.as_bytes())
}

pub fn from_pg(u: pgrx::Uuid) -> uuid::Uuid {
    uuid::Uuid::from_bytes(*u.as_bytes())
}

/// Per-backend state other than the `uuidv7()` cell.
#[derive(Default)]
struct Session {
    /// The last value `uuidv7_next` made for each table (by OID), for
    /// `uuid_v7_last`.
    last_by_table: HashMap<pg_sys::Oid, uuid::Uuid>,
    /// The generator of the last `uuidv7(shift)` call: reused while the
    /// profile and the shift (in ms) stay the same, so a statement with a
    /// constant shift gets increasing values.
    shifted: Option<(GeneratorConfig, i64, SharedGenerator)>,
    backfill: Option<(GeneratorConfig, V7Generator)>,
    v6: Option<V6Generator<SystemClock, OsCsprng>>,
}

thread_local! {
    static SESSION: RefCell<Session> = RefCell::new(Session::default());
}

/// A UUIDv7 (RFC 9562 §5.7) of the session's `uuidforge.profile`.
///
/// With `uuidforge` in `shared_preload_libraries` every value is greater
/// than every value handed out before by any session of the server;
/// otherwise values are increasing within this session.
#[pg_extern(volatile, parallel_safe)]
fn uuidv7() -> pgrx::Uuid {
    to_pg(state::next_v7())
}

/// PostgreSQL 18's `uuidv7(shift interval)`: a UUIDv7 for the current time
/// plus `shift` (calendar arithmetic, as `now() + shift`). Values with the
/// same shift are increasing within the session; they are not ordered with
/// unshifted ones (they carry another time).
#[pg_extern(volatile, parallel_safe, name = "uuidv7")]
fn uuidv7_shifted(shift: Interval) -> pgrx::Uuid {
    let shift_us = time::interval_from_now_us(shift);
    let shift_ms = shift_us.div_euclid(1000);
    let range = format!(
        "a shifted time within 1970-01-01 .. 10889-08-02 (0 ..= {MAX_UNIX_MS} ms since 1970)"
    );
    if shift_ms.unsigned_abs() > MAX_UNIX_MS {
        time_out_of_range("uuidv7", format_args!("shift {shift}"), &range);
    }
    let profile = state::active();
    let result = SESSION.with(|s| {
        let mut s = s.borrow_mut();
        let reuse =
            matches!(&s.shifted, Some((p, ms, _)) if *p == profile.config && *ms == shift_ms);
        if !reuse {
            let config = GeneratorConfig {
                shift_ms,
                ..profile.config.clone()
            };
            let g = SharedGenerator::new(config).expect("a checked shift is a valid setting");
            s.shifted = Some((profile.config.clone(), shift_ms, g));
        }
        s.shifted.as_ref().expect("set above").2.generate()
    });
    match result {
        Ok(u) => to_pg(u),
        Err(GenError::TimestampOutOfRange { unix_ms }) => time_out_of_range(
            "uuidv7",
            format_args!("shift {shift} (the shifted time is {unix_ms} ms since 1970)"),
            &range,
        ),
        Err(e) => time_out_of_range("uuidv7", format_args!("shift {shift}: {e}"), &range),
    }
}

/// The Unix millisecond of `at`, or an error naming `function` when a
/// UUIDv7 cannot carry it.
pub(crate) fn unix_ms_in_range(function: &str, at: TimestampWithTimeZone) -> i64 {
    unix_ms_shown_as(function, at, at)
}

/// [`unix_ms_in_range`] naming the value as `shown` (the argument as the
/// caller gave it, when that was not a `timestamptz`).
pub(crate) fn unix_ms_shown_as(
    function: &str,
    at: TimestampWithTimeZone,
    shown: impl std::fmt::Display,
) -> i64 {
    let expected = "a time within 1970-01-01 00:00:00+00 .. 10889-08-02 05:31:50.655+00";
    let Some(us) = time::unix_us(at) else {
        time_out_of_range(function, format_args!("{shown}"), expected);
    };
    let ms = us.div_euclid(1000);
    if !(0..=MAX_UNIX_MS as i64).contains(&ms) {
        time_out_of_range(function, format_args!("{shown}"), expected);
    }
    ms
}

/// A UUIDv7 for an explicit time (backfill, RFC 9562 §6.1): the
/// millisecond of `at`, then a fresh counter and random bits of the
/// session's profile. It does not touch the `uuidv7()` sequence.
#[pg_extern(volatile, parallel_safe)]
fn uuidv7_at(at: TimestampWithTimeZone) -> pgrx::Uuid {
    to_pg(backfill_v7(unix_ms_in_range("uuidv7_at", at)))
}

/// A UUIDv7 of Unix millisecond `ms` (in range) from the session's
/// backfill generator: a fresh counter and random bits.
pub(crate) fn backfill_v7(ms: i64) -> uuid::Uuid {
    let profile = state::active();
    SESSION.with(|s| {
        let mut s = s.borrow_mut();
        if !matches!(&s.backfill, Some((p, _)) if *p == profile.config) {
            let g = V7Generator::new(profile.config.clone()).expect("an active profile is valid");
            s.backfill = Some((profile.config.clone(), g));
        }
        let g = &mut s.backfill.as_mut().expect("set above").1;
        g.generate_at(ms as u64)
            .expect("a checked time is in range")
    })
}

/// A UUIDv6 (RFC 9562 §5.6), increasing within the session.
#[pg_extern(volatile, parallel_safe)]
fn uuidv6() -> pgrx::Uuid {
    SESSION.with(|s| {
        let mut s = s.borrow_mut();
        let g =
            s.v6.get_or_insert_with(|| V6Generator::new(SystemClock, OsCsprng::new()));
        match g.generate() {
            Ok(u) => to_pg(u),
            Err(e) => time_out_of_range(
                "uuidv6",
                format_args!("the clock ({e})"),
                "a time after 1582-10-15",
            ),
        }
    })
}

/// A random UUIDv4 (RFC 9562 §5.4) from the operating system's CSPRNG.
#[pg_extern(volatile, parallel_safe)]
fn uuidv4() -> pgrx::Uuid {
    to_pg(uuidforge::classic::v4())
}

/// Whether `uuidv7()` orders values across all sessions (shared memory) or
/// within each session only.
#[pg_extern(stable, parallel_safe)]
fn uuidv7_is_server_wide() -> bool {
    state::server_wide()
}

/// The default of `uuidv7_gen` columns: `uuidv7()` that also remembers the
/// value for `uuid_v7_last(table)`.
#[pg_extern(sql = "
CREATE FUNCTION uuidv7_next(\"table\" regclass) RETURNS uuid
    VOLATILE STRICT PARALLEL UNSAFE LANGUAGE c
    AS 'MODULE_PATHNAME', '@FUNCTION_NAME@';
COMMENT ON FUNCTION uuidv7_next(regclass) IS 'uuidv7() for a uuidv7_gen column of the table; remembered for uuid_v7_last(table)';
")]
fn uuidv7_next(table: pg_sys::Oid) -> pgrx::Uuid {
    let u = state::next_v7();
    SESSION.with(|s| s.borrow_mut().last_by_table.insert(table, u));
    to_pg(u)
}

/// The last value this session generated for a `uuidv7_gen` column of
/// `table`, like `currval`; an error if there is none yet.
#[pg_extern(sql = "
CREATE FUNCTION uuid_v7_last(\"table\" regclass) RETURNS uuid
    VOLATILE STRICT PARALLEL UNSAFE LANGUAGE c
    AS 'MODULE_PATHNAME', '@FUNCTION_NAME@';
COMMENT ON FUNCTION uuid_v7_last(regclass) IS 'the last UUIDv7 this session generated for a uuidv7_gen column of the table (like currval)';
")]
fn uuid_v7_last(table: pg_sys::Oid) -> pgrx::Uuid {
    match SESSION.with(|s| s.borrow().last_by_table.get(&table).copied()) {
        Some(u) => to_pg(u),
        None => {
            // SAFETY: a plain catalog lookup; NULL when the OID is unknown.
            let name = unsafe { pg_sys::get_rel_name(table) };
            let name = if name.is_null() {
                format!("OID {}", table.to_u32())
            } else {
                // SAFETY: get_rel_name returns a palloc'd C string.
                unsafe { std::ffi::CStr::from_ptr(name) }
                    .to_string_lossy()
                    .into_owned()
            };
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("uuid_v7_last: no UUIDv7 generated yet in this session for table \"{name}\""),
                "uuid_v7_last returns the last value a uuidv7_gen column default made in this session; insert a row first",
            );
        }
    }
}

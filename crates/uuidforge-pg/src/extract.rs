//! Reading UUIDs: PostgreSQL 17/18's `uuid_extract_timestamp` and
//! `uuid_extract_version`, answering exactly as PostgreSQL 18 does (v1 and
//! v7 times, NULL for every other version and variant); the time of a v6
//! under a name of its own, `uuid_extract_timestamp_v6`; v7 times in
//! generator layouts with sub-millisecond time; Crockford Base32 text.

use crate::errors::{invalid_argument, invalid_text};
use crate::generate::{from_pg, to_pg};
use crate::time;
use pgrx::prelude::*;
use uuidforge::layout::{read_v7, V7Layout};
use uuidforge::timestamp::Timestamp;

fn is_rfc_variant(u: &uuid::Uuid) -> bool {
    u.get_variant() == uuid::Variant::RFC4122
}

fn to_timestamptz(t: Timestamp) -> Option<TimestampWithTimeZone> {
    // Truncated to microseconds, the finest timestamptz holds.
    time::from_unix_us(i64::try_from(t.unix_nanos.div_euclid(1000)).ok()?)
}

/// The time of a v1 or v7 (RFC variant only), as PostgreSQL 18 reads it,
/// and of a v6 too when `with_v6` (releases before 0.3.0); v7 in
/// `v7_layout` when one is given.
fn timestamp_of(
    u: &uuid::Uuid,
    v7_layout: Option<V7Layout>,
    with_v6: bool,
) -> Option<TimestampWithTimeZone> {
    if !is_rfc_variant(u) {
        return None;
    }
    let t = match u.get_version_num() {
        1 => uuidforge::gregorian::v1_fields(u).ok()?.timestamp(),
        6 if with_v6 => uuidforge::gregorian::v6_fields(u).ok()?.timestamp(),
        7 => match v7_layout {
            Some(layout) => read_v7(u, layout).timestamp,
            None => Timestamp::from_unix_ms(uuidforge::v7::unix_ms(u)),
        },
        _ => return None,
    };
    to_timestamptz(t)
}

/// The layout named `layout`, or an error (22023) listing the names.
fn layout_named(layout: &str) -> V7Layout {
    V7Layout::from_name(layout).unwrap_or_else(|| {
        let names: Vec<&str> = V7Layout::ALL.iter().map(|l| l.name()).collect();
        invalid_argument(
            "uuid_extract_timestamp",
            "layout",
            format!("'{layout}'"),
            names.join(", "),
        )
    })
}

/// The time in a v1 or v7 UUID (RFC 9562 §5.1, §5.7): v1 to the
/// microsecond (its 100-ns ticks, truncated), v7 to the millisecond. NULL
/// for every other version (v6 too: see `uuid_extract_timestamp_v6`) and
/// for non-RFC variants: exactly PostgreSQL 18's answers, so a query gives
/// the same rows before and after an upgrade to 18.
#[pg_extern(immutable, strict, parallel_safe, name = "uuid_extract_timestamp")]
fn uuid_extract_timestamp_pg18(id: pgrx::Uuid) -> Option<TimestampWithTimeZone> {
    timestamp_of(&from_pg(id), None, false)
}

/// The time in a v6 UUID (RFC 9562 §5.6), to the microsecond (its 100-ns
/// ticks, truncated); NULL for other versions and non-RFC variants.
/// PostgreSQL 18's `uuid_extract_timestamp` gives NULL for v6.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_extract_timestamp_v6(id: pgrx::Uuid) -> Option<TimestampWithTimeZone> {
    let u = from_pg(id);
    if !is_rfc_variant(&u) || u.get_version_num() != 6 {
        return None;
    }
    to_timestamptz(uuidforge::gregorian::v6_fields(&u).ok()?.timestamp())
}

/// The time in a UUIDv7 read in a generator layout that encodes time below
/// the millisecond (`fraction12` for PostgreSQL 18, `micros` for MariaDB,
/// `go256ns`, `draft01`, or the counter layouts `counter18`, `counter42`,
/// `random`, which give milliseconds). v1 (and NULL for v6) as in the
/// one-argument form.
#[pg_extern(immutable, strict, parallel_safe, name = "uuid_extract_timestamp")]
fn uuid_extract_timestamp_layout_pg18(
    id: pgrx::Uuid,
    layout: &str,
) -> Option<TimestampWithTimeZone> {
    timestamp_of(&from_pg(id), Some(layout_named(layout)), false)
}

// What `uuid_extract_timestamp` answered before 0.3.0 (the v6 time too),
// under the C symbols those releases' SQL names. Not in 0.3.0's SQL: a
// database still at 0.1.0 or 0.2.0 keeps its answers — and so the
// indexes and stored columns computed from them — once this library is
// installed, until `ALTER EXTENSION uuidforge UPDATE` points the SQL
// functions at the PostgreSQL 18 answers above and rebuilds those indexes
// (sql/uuidforge--0.2.0--0.3.0.sql).

/// `uuid_extract_timestamp(uuid)` of releases 0.1.0 and 0.2.0.
#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn uuid_extract_timestamp(id: pgrx::Uuid) -> Option<TimestampWithTimeZone> {
    timestamp_of(&from_pg(id), None, true)
}

/// `uuid_extract_timestamp(uuid, text)` of releases 0.1.0 and 0.2.0.
#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn uuid_extract_timestamp_layout(id: pgrx::Uuid, layout: &str) -> Option<TimestampWithTimeZone> {
    timestamp_of(&from_pg(id), Some(layout_named(layout)), true)
}

/// The version number (RFC 9562 §4.2), or NULL for a non-RFC variant, as in
/// PostgreSQL 18.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_extract_version(id: pgrx::Uuid) -> Option<i16> {
    let u = from_pg(id);
    is_rfc_variant(&u).then(|| u.get_version_num() as i16)
}

/// The 26-character Crockford Base32 text (the ULID alphabet), which sorts
/// like the UUID.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_to_base32(id: pgrx::Uuid) -> String {
    uuidforge::base32::encode(&from_pg(id)).as_str().to_owned()
}

/// A UUID from its Crockford Base32 text (case-insensitive; O, I and L read
/// as 0, 1, 1). Bad text is an error (22P02) naming the value and position.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_from_base32(text: &str) -> pgrx::Uuid {
    match uuidforge::base32::decode(text.as_bytes()) {
        Ok(u) => to_pg(u),
        Err(e) => invalid_text("uuid (Crockford Base32)", text, e),
    }
}

/// The 26-character RFC 4648 base32hex text (`0-9A-V`), which sorts like
/// the UUID: PostgreSQL 19's `rtrim(encode(id::bytea, 'base32hex'), '=')`.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_to_base32hex(id: pgrx::Uuid) -> String {
    uuidforge::base32hex::encode(&from_pg(id))
}

/// A UUID from its base32hex text, read as PostgreSQL 19's
/// `decode(text, 'base32hex')::uuid` reads it: any case, whitespace
/// ignored, padded or not. Bad text is 22P02 naming the value and position.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_from_base32hex(text: &str) -> pgrx::Uuid {
    match uuidforge::base32hex::decode(text) {
        Ok(u) => to_pg(u),
        Err(e) => invalid_text("uuid (base32hex)", text, e),
    }
}

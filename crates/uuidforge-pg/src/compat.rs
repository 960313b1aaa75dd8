//! Drop-ins for the extensions users already run: pg_uuidv7's and
//! pg_idkit's UUIDv7 functions under their own names, signatures and
//! volatility, each set in a schema of its own (`uuidforge_pg_uuidv7`,
//! `uuidforge_pg_idkit`) that a database puts on its `search_path`, so that
//! column defaults and queries written for either run unchanged. The
//! values come from this extension's generator: `uuid_generate_v7()` is
//! `uuidv7()`, ordered across sessions when preloaded (pg_uuidv7 orders
//! nothing, not even within a millisecond), and a time turned into a UUID
//! is a backfill value of that millisecond (`uuidv7_at`'s: a fresh counter
//! and random bits, in no order, as pg_uuidv7's) or, with `zero`, the
//! lowest UUIDv7 of the millisecond.
//!
//! Where the originals answer garbage this answers an error: a time before
//! 1970 or after 10889 (pg_uuidv7 wraps it around), a text that is no UUID
//! or a UUID without a time (pg_idkit). pg_idkit drops the fraction of a
//! second from the times it extracts although it documents milliseconds;
//! these keep the UUID's whole time (a v7's millisecond, a v1's or v6's
//! microsecond).

use pgrx::prelude::*;

/// pg_uuidv7 1.6's functions (<https://github.com/fboulnois/pg_uuidv7>).
#[pg_schema]
pub mod uuidforge_pg_uuidv7 {
    use crate::generate::{backfill_v7, from_pg, to_pg, unix_ms_shown_as};
    use crate::time;
    use pgrx::prelude::*;
    use uuidforge::bounds::lowest_v7;

    // A new schema is its owner's alone: every role may call the drop-ins,
    // as it may call the functions they replace.
    extension_sql!(
        "GRANT USAGE ON SCHEMA uuidforge_pg_uuidv7 TO PUBLIC;",
        name = "uuidforge_pg_uuidv7_usage",
        requires = [uuid_generate_v7],
    );

    /// pg_uuidv7's `uuid_generate_v7()`: this extension's `uuidv7()`.
    #[pg_extern(sql = "
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_generate_v7() RETURNS uuid
    VOLATILE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', '@FUNCTION_NAME@';
")]
    fn uuid_generate_v7() -> pgrx::Uuid {
        to_pg(crate::state::next_v7())
    }

    /// The Unix microseconds of the millisecond in a UUID's first 48 bits,
    /// whatever its version (as pg_uuidv7 reads it).
    fn unix_us_of(id: pgrx::Uuid) -> i64 {
        uuidforge::v7::unix_ms(&from_pg(id)) as i64 * 1000
    }

    /// The `timestamptz` of the millisecond in the first 48 bits.
    #[pg_extern(sql = "
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_v7_to_timestamptz(uuid) RETURNS timestamptz
    STABLE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', '@FUNCTION_NAME@';
")]
    fn uuid_v7_to_timestamptz(id: pgrx::Uuid) -> TimestampWithTimeZone {
        time::from_unix_us(unix_us_of(id)).expect("48-bit milliseconds are a timestamptz")
    }

    /// The same time as a `timestamp` (its UTC wall clock).
    #[pg_extern(sql = "
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_v7_to_timestamp(uuid) RETURNS timestamp
    STABLE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', '@FUNCTION_NAME@';
")]
    fn uuid_v7_to_timestamp(id: pgrx::Uuid) -> Timestamp {
        time::timestamp_of_unix_us(unix_us_of(id)).expect("48-bit milliseconds are a timestamp")
    }

    /// A UUIDv7 of the millisecond of `at`: `uuidv7_at`'s value, or with
    /// `zero` the lowest UUIDv7 of that millisecond.
    fn v7_of(ms: i64, zero: bool) -> pgrx::Uuid {
        if zero {
            to_pg(lowest_v7(ms as u64).expect("a checked millisecond is in range"))
        } else {
            to_pg(backfill_v7(ms))
        }
    }

    /// pg_uuidv7's `uuid_timestamptz_to_v7(timestamptz, zero)`.
    #[pg_extern(sql = "
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_timestamptz_to_v7(timestamptz, zero bool = false) RETURNS uuid
    STABLE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', '@FUNCTION_NAME@';
")]
    fn uuid_timestamptz_to_v7(at: TimestampWithTimeZone, zero: bool) -> pgrx::Uuid {
        v7_of(unix_ms_shown_as("uuid_timestamptz_to_v7", at, at), zero)
    }

    /// pg_uuidv7's `uuid_timestamp_to_v7(timestamp, zero)`: the timestamp
    /// read as UTC.
    #[pg_extern(sql = "
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_timestamp_to_v7(timestamp, zero bool = false) RETURNS uuid
    STABLE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', '@FUNCTION_NAME@';
")]
    fn uuid_timestamp_to_v7(at: Timestamp, zero: bool) -> pgrx::Uuid {
        let as_utc = TimestampWithTimeZone::try_from(pg_sys::Timestamp::from(at))
            .unwrap_or_else(|_| TimestampWithTimeZone::positive_infinity());
        v7_of(unix_ms_shown_as("uuid_timestamp_to_v7", as_utc, at), zero)
    }
}

/// pg_idkit's UUIDv7 functions (<https://github.com/VADOSWARE/pg_idkit>).
#[pg_schema]
pub mod uuidforge_pg_idkit {
    use crate::errors::{invalid_argument, invalid_text};
    use crate::generate::to_pg;
    use crate::time;
    use pgrx::prelude::*;
    use uuidforge::timestamp::Timestamp as UuidTime;

    extension_sql!(
        "GRANT USAGE ON SCHEMA uuidforge_pg_idkit TO PUBLIC;",
        name = "uuidforge_pg_idkit_usage",
        requires = [idkit_uuidv7_generate],
    );

    /// pg_idkit's `idkit_uuidv7_generate()`: this extension's `uuidv7()`
    /// as text.
    #[pg_extern]
    fn idkit_uuidv7_generate() -> String {
        crate::state::next_v7().hyphenated().to_string()
    }

    /// The same, under pg_idkit's other name for it.
    #[pg_extern]
    fn idkit_uuidv7_generate_text() -> String {
        idkit_uuidv7_generate()
    }

    /// pg_idkit's `idkit_uuidv7_generate_uuid()`: this extension's
    /// `uuidv7()`.
    #[pg_extern]
    fn idkit_uuidv7_generate_uuid() -> pgrx::Uuid {
        to_pg(crate::state::next_v7())
    }

    /// The time in a UUID given as text (any form the `uuid` crate reads,
    /// as pg_idkit takes it) of a version holding one: 1 and 6 to the
    /// microsecond, 7 to the millisecond.
    #[pg_extern]
    fn idkit_uuidv7_extract_timestamptz(val: &str) -> TimestampWithTimeZone {
        const FUNCTION: &str = "idkit_uuidv7_extract_timestamptz";
        // The forms pg_idkit reads (the uuid crate's); the reason from the
        // library's parser, which says where the text goes wrong.
        let u = uuid::Uuid::try_parse(val).unwrap_or_else(|_| {
            let reason = match uuidforge::parser::parse(val) {
                Err(e) => e.to_string(),
                Ok(_) => String::new(),
            };
            invalid_text(
                "uuid",
                val,
                format_args!("{reason}{}expected 32 hex digits, hyphenated (8-4-4-4-12), in braces or as urn:uuid:", if reason.is_empty() { "" } else { "; " }),
            )
        });
        let at: Option<UuidTime> = match u.get_version_num() {
            1 => uuidforge::gregorian::v1_fields(&u)
                .ok()
                .map(|f| f.timestamp()),
            6 => uuidforge::gregorian::v6_fields(&u)
                .ok()
                .map(|f| f.timestamp()),
            7 => Some(UuidTime::from_unix_ms(uuidforge::v7::unix_ms(&u))),
            _ => None,
        };
        at.and_then(|t| time::from_unix_us(i64::try_from(t.unix_nanos.div_euclid(1000)).ok()?))
            .unwrap_or_else(|| {
                invalid_argument(
                    FUNCTION,
                    "val",
                    format_args!("'{val}' (version {})", u.get_version_num()),
                    "a UUID of version 1, 6 or 7, which hold a time",
                )
            })
    }
}

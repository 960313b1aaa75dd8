//! Keyed constructions in SQL: deterministic backfill `uuidv7_from` (E8)
//! and reversible timestamp hiding `uuid_hide`/`uuid_reveal` (E10), the
//! library's `v7_from`, `v7_from_key`, `v7_from_ordered` and
//! `TimestampHider` — so SQL, `uuidforge gen --at T --key K`,
//! `uuidforge hide|reveal` and the HTTP API give the same values.

use crate::errors::invalid_argument;
use crate::generate::{from_pg, to_pg, unix_ms_in_range};
use pgrx::prelude::*;
use uuidforge::generator::{v7_from, v7_from_key, v7_from_ordered, TimestampHider};

fn ms_of(function: &str, at: TimestampWithTimeZone) -> u64 {
    unix_ms_in_range(function, at) as u64
}

/// The same UUIDv7 for the same time and key on every call, server and
/// machine (E8, a re-runnable backfill): the millisecond of `at`, then 74
/// bits of HMAC-SHA256 with an empty key over "uuidforge/v7_from" ‖ the
/// millisecond (8 bytes big-endian) ‖ the key's UTF-8 bytes. Sorted by
/// time, then by that hash. Anyone can recompute it: give a secret (the
/// three-argument form) when keys must not be guessable.
#[pg_extern(immutable, strict, parallel_safe, name = "uuidv7_from")]
fn uuidv7_from_text(at: TimestampWithTimeZone, key: &str) -> pgrx::Uuid {
    let ms = ms_of("uuidv7_from", at);
    to_pg(v7_from_key(ms, key.as_bytes()).expect("a checked time is in range"))
}

/// [`uuidv7_from_text`] for binary keys: the key's bytes as they are.
#[pg_extern(immutable, strict, parallel_safe, name = "uuidv7_from")]
fn uuidv7_from_bytea(at: TimestampWithTimeZone, key: &[u8]) -> pgrx::Uuid {
    let ms = ms_of("uuidv7_from", at);
    to_pg(v7_from_key(ms, key).expect("a checked time is in range"))
}

/// For an integer key (an old `bigint` primary key): ordered by time, then
/// by the key itself, which `rand_a` and the top of `rand_b` carry
/// (readable in the UUID; hide it with `uuid_hide` if that matters). Keys
/// from 0 to 2^64−1 as `bigint` reinterpret negative values as unsigned.
#[pg_extern(immutable, strict, parallel_safe, name = "uuidv7_from")]
fn uuidv7_from_bigint(at: TimestampWithTimeZone, key: i64) -> pgrx::Uuid {
    let ms = ms_of("uuidv7_from", at);
    to_pg(v7_from_ordered(ms, key as u64, b"").expect("a checked time is in range"))
}

/// The same UUIDv7 for the same time, business key and secret on every
/// call, server and machine (E8): the millisecond of `at`, then 74 bits of
/// HMAC-SHA256(secret, key) — the library's `v7_from`. A Data Vault hub
/// key that replaces a hash key while sorting by load time (D9).
#[pg_extern(immutable, strict, parallel_safe)]
fn uuidv7_from(at: TimestampWithTimeZone, stable_key: &str, secret: &[u8]) -> pgrx::Uuid {
    let ms = ms_of("uuidv7_from", at);
    if secret.len() < 16 {
        invalid_argument(
            "uuidv7_from",
            "secret",
            format_args!("{} bytes", secret.len()),
            "at least 16 bytes (32 random bytes are best)",
        );
    }
    to_pg(v7_from(ms, stable_key.as_bytes(), secret).expect("a checked time is in range"))
}

fn hider(function: &str, key: &[u8]) -> TimestampHider {
    TimestampHider::with_key(key)
        .unwrap_or_else(|e| invalid_argument(function, "key", e.value, e.expected))
}

/// The v4-shaped outside form of a UUIDv7 under `key` (E10): a keyed
/// permutation that hides the creation time and the order; `uuid_reveal`
/// with the same key gives the UUIDv7 back. `key`: at least 32 bytes.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_hide(id: pgrx::Uuid, key: &[u8]) -> pgrx::Uuid {
    let h = hider("uuid_hide", key);
    match h.hide(&from_pg(id)) {
        Ok(u) => to_pg(u),
        Err(e) => invalid_argument("uuid_hide", "uuid", e.value, e.expected),
    }
}

/// The UUIDv7 behind an outside form made by `uuid_hide` with `key`.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_reveal(id: pgrx::Uuid, key: &[u8]) -> pgrx::Uuid {
    let h = hider("uuid_reveal", key);
    match h.reveal(&from_pg(id)) {
        Ok(u) => to_pg(u),
        Err(e) => invalid_argument("uuid_reveal", "uuid", e.value, e.expected),
    }
}

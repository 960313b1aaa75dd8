//! `min` and `max` of `uuid` (PostgreSQL has them from version 20 on) and
//! of `uuid192`, and the explicit casts between `uuid` and `bytea`
//! (PostgreSQL 19's): what batch tools reach for (`max(id)` of a UUID key)
//! and find missing on 15 to 18.
//!
//! Each aggregate keeps the smaller or larger value with a strict
//! transition function (NULLs are skipped, no rows give NULL), which is
//! also its combine function (parallel aggregation), and names the type's
//! `<` or `>` as its sort operator: over a b-tree index PostgreSQL answers
//! `max(id)` by reading one end of it, as it answers `ORDER BY id DESC
//! LIMIT 1`. Like every aggregate, they are window functions too.

use crate::errors::invalid_argument;
use crate::uuid192::Uuid192Datum;
use pgrx::prelude::*;

/// The smaller of two UUIDs in PostgreSQL's order (their bytes).
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_smaller(a: pgrx::Uuid, b: pgrx::Uuid) -> pgrx::Uuid {
    if a.as_bytes() <= b.as_bytes() {
        a
    } else {
        b
    }
}

/// The larger of two UUIDs.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_larger(a: pgrx::Uuid, b: pgrx::Uuid) -> pgrx::Uuid {
    if a.as_bytes() >= b.as_bytes() {
        a
    } else {
        b
    }
}

/// The smaller of two `uuid192` values (their bytes: UUID, then segment).
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_smaller(a: Uuid192Datum, b: Uuid192Datum) -> Uuid192Datum {
    a.min(b)
}

/// The larger of two `uuid192` values.
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_larger(a: Uuid192Datum, b: Uuid192Datum) -> Uuid192Datum {
    a.max(b)
}

extension_sql!(
    r#"
CREATE AGGREGATE min(uuid) (SFUNC = uuid_smaller, STYPE = uuid, COMBINEFUNC = uuid_smaller,
    SORTOP = OPERATOR(pg_catalog.<), PARALLEL = SAFE);
CREATE AGGREGATE max(uuid) (SFUNC = uuid_larger, STYPE = uuid, COMBINEFUNC = uuid_larger,
    SORTOP = OPERATOR(pg_catalog.>), PARALLEL = SAFE);
CREATE AGGREGATE min(uuid192) (SFUNC = uuid192_smaller, STYPE = uuid192, COMBINEFUNC = uuid192_smaller,
    SORTOP = <, PARALLEL = SAFE);
CREATE AGGREGATE max(uuid192) (SFUNC = uuid192_larger, STYPE = uuid192, COMBINEFUNC = uuid192_larger,
    SORTOP = >, PARALLEL = SAFE);
"#,
    name = "uuid_min_max",
    requires = [
        uuid_smaller,
        uuid_larger,
        uuid192_smaller,
        uuid192_larger,
        "uuid192_operators"
    ],
);

/// A UUID's 16 bytes (`id::bytea`), as PostgreSQL 19's cast gives them.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_bytea(id: pgrx::Uuid) -> Vec<u8> {
    id.as_bytes().to_vec()
}

/// The UUID of 16 bytes (`b::uuid`); any other length is 22023, as in
/// PostgreSQL 19.
#[pg_extern(immutable, strict, parallel_safe)]
fn bytea_uuid(b: &[u8]) -> pgrx::Uuid {
    match <[u8; 16]>::try_from(b) {
        Ok(bytes) => pgrx::Uuid::from_bytes(bytes),
        Err(_) => invalid_argument(
            "bytea_uuid",
            "b",
            format_args!("{} bytes", b.len()),
            "16 bytes (invalid uuid length)",
        ),
    }
}

extension_sql!(
    r#"
CREATE CAST (uuid AS bytea) WITH FUNCTION uuid_bytea(uuid);
CREATE CAST (bytea AS uuid) WITH FUNCTION bytea_uuid(bytea);
"#,
    name = "uuid_bytea_casts",
    requires = [uuid_bytea, bytea_uuid],
);

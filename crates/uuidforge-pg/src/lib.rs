//! # uuidforge — the PostgreSQL extension
//!
//! UUIDv7 keys in PostgreSQL 15 (and later): a server-wide monotonic
//! `uuidv7()` (shared memory when preloaded, E2), PostgreSQL 18's UUID
//! functions, backfill, boundaries and partition keys (C3, E7),
//! plausibility checks for `CHECK` constraints (E9), the `uuid192` type
//! (C1) and the `uuidv7_gen` column type with `uuid_v7_last(table)` (C2).
//! Every function is a thin SQL face of the `uuidforge` library.
//!
//! | module | what |
//! |---|---|
//! | [`state`] | `uuidforge.profile`, the shared-memory generator cell and its checkpoint file (E5) |
//! | [`generate`] | `uuidv7()`, `uuidv7(shift)`, `uuidv7_at`, `uuidv6`, `uuidv4`, `uuidv7_next`, `uuid_v7_last` |
//! | [`keyed`] | `uuidv7_from` (E8), `uuid_hide`/`uuid_reveal` (E10) |
//! | [`profiles`] | `uuidforge_profile_register`/`_drop`, the `uuidforge_profiles` table (B13) |
//! | [`shard`] | `uuidv8_shard(node)` and `uuidforge.shard_layout` (E11) |
//! | [`telemetry`] | `uuidforge_telemetry()` (E4) |
//! | [`extract`] | `uuid_extract_timestamp`, `uuid_extract_version`, Base32 |
//! | [`bounds`] | `uuidv7_boundary`, `uuidv7_range_lower/upper`, `uuidv7_partition_key` |
//! | [`plausible`] | `uuidv7_is_plausible`, `uuidv7_implausibility` |
//! | [`uuid192`] | the `uuid192` type, operators, opclasses, fields |
//! | [`column`] | the `uuidv7_gen` domain and its event trigger |
//! | [`find`] | `uuid_find(value, schemas)`: a UUID anywhere in the database (D5) |
//! | [`compat`] | pg_uuidv7's and pg_idkit's UUIDv7 functions, each in a schema of its own |
//! | [`minmax`] | `min`/`max` of `uuid` and `uuid192` (index-aware), `uuid` ↔ `bytea` casts |
//! | [`pages`] | `uuid_heap_candidates`: rows that may hold UUIDs, read from heap pages (D5) |

use pgrx::prelude::*;

pub mod bounds;
mod checkpoint;
pub mod column;
pub mod compat;
mod disk;
mod errors;
pub mod extract;
pub mod find;
pub mod generate;
pub mod keyed;
pub mod minmax;
pub mod pages;
pub mod plausible;
pub mod profiles;
pub mod shard;
pub mod state;
pub mod telemetry;
mod time;
pub mod uuid192;

::pgrx::pg_module_magic!(name, version);

/// Registers the settings and, under `shared_preload_libraries`, the
/// shared-memory cell.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    state::init();
}

//! UUIDv7 inside MariaDB and MySQL: a loadable function library (the
//! servers' one UDF interface, through the `udf` crate), installed with
//! `CREATE FUNCTION name RETURNS STRING SONAME 'libuuidforge_mysql.so'`
//! (`install.sql` of the Debian package `mariadb-plugin-uuidforge`).
//!
//! | function | returns |
//! |---|---|
//! | `uuidv7()` | a UUIDv7 as text, strictly increasing across every connection of the server (one process: the library's lock-free generator) |
//! | `uuidv7(shift_ms)` | the same for the current time plus `shift_ms` milliseconds |
//! | `uuidv7_bin()` | a UUIDv7 as 16 bytes in RFC order (for `BINARY(16)` and MariaDB's `UUID`) |
//! | `uuidv7_at(at)` | a UUIDv7 of time `at` (backfills) |
//! | `uuidv7_from(at, key)` | the one UUIDv7 of (`at`, `key`): the CLI's `gen --at … --key …`, SQL's and Python's `uuidv7_from` |
//! | `uuid_v7_timestamp(u)` | the time a UUIDv7 carries, as `DATETIME(3)` text (UTC); NULL for other versions |
//! | `uuidv7_lower(at)`, `uuidv7_upper(at)` | the lowest and highest UUIDv7 of the millisecond `at` |
//! | `uuid_to_rfc_bin(u)`, `uuid_to_swapped_bin(u)` | 16 bytes in RFC order, or in MySQL's `UUID_TO_BIN(u, 1)` order |
//! | `uuid_from_rfc_bin(b)`, `uuid_from_swapped_bin(b)` | the UUID's text from those 16 bytes |
//!
//! A UUID argument may be text in any spelling the library reads
//! (canonical, 32 hex digits, braces, URN; MariaDB's `UUID` and
//! `CHAR(36)` columns) or 16 bytes in RFC order (`BINARY(16)`). A time is
//! `DATETIME` text taken as UTC (`UTC_TIMESTAMP(3)`), or Unix seconds
//! (`UNIX_TIMESTAMP(x)`, its decimals exact to the millisecond). What is
//! not one gives NULL; a wrong number of arguments is an error when the
//! statement is prepared; no call panics into the server (each body runs
//! under `catch_unwind`).

#![deny(missing_docs)]

// The `extern "C"` entry points `#[register]` makes beside each function
// (`uuidv7`, `uuidv7_init`, `uuidv7_deinit`) carry no documentation of
// their own: the functions' types document them.
#[allow(missing_docs)]
pub mod convert;
#[allow(missing_docs)]
pub mod generate;
pub mod input;

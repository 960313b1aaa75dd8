//! uuidforge's read side of a live PostgreSQL database.
//!
//! A [`catalog::Snapshot`] is read with one statement; *planners* — pure
//! functions of the snapshot — turn it into the SQL each tool runs
//! ([`plan::Query`]: text plus bound parameters, identifiers quoted by
//! `uuidforge-ident`); the rows come back as JSON text and are read by
//! pure functions too. So the CLI and the HTTP server (through [`client`]
//! and [`exec`], feature `client`) and the extension (through SPI, without
//! it) run the same plans.
//!
//! | module | what |
//! |---|---|
//! | [`catalog`] | the catalog snapshot: relations, columns, types, keys, indexes, views |
//! | [`introspect`] | what a change reads beyond it: views, partitions, triggers and functions over given columns |
//! | [`columns`] | UUID columns and their index status, colours |
//! | [`find`] | a UUID anywhere: probes, scans, hits with JSON paths |
//! | [`related`] | columns carrying the same key (keys, views, names, values) |
//! | [`discover`], [`diagram`] | keys from the data, adoption DDL, ER diagram |
//! | [`pages`] | candidate rows read from heap pages (the extension's `uuid_heap_candidates`) |
//! | [`generators`] | which UUIDv7 generator a database has |
//!
//! Connections: [`error`] (what went wrong, typed), [`dsn`] and
//! [`connect`] (connections like psql), [`client`] (read-only sessions and
//! change transactions), [`exec`] (the read-side executors). Reading
//! sessions are read-only transactions.
//!
//! What changes a database (actions, operations, the runner) is the crate
//! `uuidforge-change`; fleets are `uuidforge-fleet`; the key-locality lab
//! is `uuidforge-lab`. None of them is imported here.
#![deny(missing_docs)]

pub mod catalog;
pub mod columns;
pub mod diagram;
pub mod discover;
pub mod dsn;
pub mod error;
pub mod find;
pub mod generators;
pub mod introspect;
pub mod nodes;
pub mod pages;
pub mod plan;
pub mod related;

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod connect;
#[cfg(feature = "client")]
pub mod exec;

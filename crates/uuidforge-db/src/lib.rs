//! uuidforge's tools on a live PostgreSQL database.
//!
//! A [`catalog::Snapshot`] is read with one statement; *planners* — pure
//! functions of the snapshot — turn it into the SQL each tool runs
//! ([`plan::Query`]: text plus bound parameters, identifiers quoted by
//! [`ident`]); the rows come back as JSON text and are read by pure
//! functions too. So the CLI and the HTTP server (through [`client`] and
//! [`exec`], feature `client`) and the extension (through SPI, without it)
//! run the same plans.
//!
//! Reading:
//!
//! | module | what |
//! |---|---|
//! | [`catalog`] | the catalog snapshot: relations, columns, types, keys, indexes, views |
//! | [`introspect`] | what a change reads beyond it: views, indexes and partitions over given columns |
//! | [`columns`] | UUID columns and their index status, colours |
//! | [`find`] | a UUID anywhere: probes, scans, hits with JSON paths |
//! | [`related`] | columns carrying the same key (keys, views, names, values) |
//! | [`discover`], [`diagram`] | keys from the data, adoption DDL, ER diagram |
//! | [`pages`] | candidate rows read from heap pages (the extension's `uuid_heap_candidates`) |
//! | [`lab`] | the key-locality lab's matrix, statements and recommendation |
//!
//! Changing — every change one shape ([`ops`]): planned purely, printed
//! and serialized from the plan, applied by one runner ([`runner`]):
//!
//! | module | what |
//! |---|---|
//! | [`ops`] | the shape: [`ops::Operation`], [`ops::ChangePlan`], steps by mode, checks, named reads, the printed form |
//! | [`ops::key`] | one model of a key and what refers to it (references, what sits on them, naming, checks) |
//! | [`ops::rename`] | a key's columns renamed together, with an undo script |
//! | [`ops::migrate_key`] | a primary key and its references moved to UUIDv7, order kept: in one transaction, or in batches, writers going on, resumable |
//! | [`ops::merge`], [`ops::unmerge`] | duplicate keys merged into one, logged, and undone |
//! | [`runner`] | locks against other changes, backup, plan again and compare, run, check, commit; the state of changes under way ([`backup`]) |
//!
//! Both sides: [`error`] (what went wrong, typed), [`dsn`] and [`connect`]
//! (connections like psql), [`client`] (read-only sessions and change
//! transactions), [`exec`] (the read-side executors).
//!
//! Reading sessions are read-only transactions; a change runs as one
//! read-write transaction ([`client::Change`]), or in steps recorded in a
//! state table, after a backup, verified before it commits.
#![deny(missing_docs)]

pub mod catalog;
pub mod columns;
pub mod diagram;
pub mod discover;
pub mod dsn;
pub mod error;
pub mod find;
pub mod fleet;
pub mod generators;
pub mod ident;
pub mod introspect;
pub mod lab;
pub mod nodes;
pub mod ops;
pub mod pages;
pub mod plan;
pub mod related;

#[cfg(feature = "client")]
pub mod backup;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod connect;
#[cfg(feature = "client")]
pub mod exec;
#[cfg(feature = "client")]
pub mod runner;

//! uuidforge's tools on a live PostgreSQL database.
//!
//! A [`catalog::Snapshot`] is read with one statement; *planners* — pure
//! functions of the snapshot — turn it into the SQL each feature runs
//! ([`plan::Query`]: text plus bound parameters, identifiers quoted by
//! [`ident`]); the rows come back as JSON text and are read by pure
//! functions too. So the CLI and the HTTP server (through [`client`] and
//! [`exec`], feature `client`) and the extension (through SPI, without it)
//! run the same plans.
//!
//! | module | feature |
//! |---|---|
//! | [`columns`] | D2: UUID columns and their index status, colours |
//! | [`find`] | D5: a UUID anywhere: probes, scans, hits with JSON paths |
//! | [`related`] | D6: columns carrying the same key (keys, views, names, values) |
//! | [`rename`] | D6: rename a key's columns together, with an undo script |
//! | [`migrate`] | D1: a primary key and its references moved to UUIDv7, order kept |
//! | [`discover`], [`diagram`] | D13: keys from the data, adoption DDL, ER diagram |
//! | [`pages`] | D5 in the extension: candidate rows read from heap pages |
//! | [`lab`] | B15, C4: the key-locality lab's matrix, statements and recommendation |
//!
//! Reading sessions are read-only transactions; a change runs as one
//! read-write transaction ([`client::Change`]) after a backup
//! ([`backup`]), verified before it commits.
#![deny(missing_docs)]

pub mod catalog;
pub mod columns;
pub mod diagram;
pub mod discover;
pub mod dsn;
pub mod find;
pub mod ident;
pub mod lab;
pub mod merge;
pub mod migrate;
pub mod migrate_batched;
pub mod pages;
pub mod plan;
pub mod related;
pub mod rename;

#[cfg(feature = "client")]
pub mod backup;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod connect;
#[cfg(feature = "client")]
pub mod exec;
#[cfg(feature = "client")]
pub mod merge_run;
#[cfg(feature = "client")]
pub mod migrate_run;

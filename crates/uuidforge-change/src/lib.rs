//! uuidforge's changes to a live PostgreSQL database.
//!
//! Every change has one shape:
//!
//! | module | what |
//! |---|---|
//! | [`ops`] | the operations: [`ops::Operation`] plans purely from a catalog snapshot and named reads into a [`ops::ChangePlan`] (its steps by mode, its checks, its printed form) |
//! | `ops::key` | one model of a key and what refers to it (references, what sits on them, naming, checks) |
//! | [`ops::rename`] | a key's columns renamed together, with an undo script |
//! | [`ops::migrate_key`] | a primary key and its references moved to UUIDv7, order kept: in one transaction, or in batches, writers going on, resumable |
//! | [`ops::merge`], [`ops::unmerge`] | duplicate keys merged into one, logged, and undone |
//! | [`ops::install_sql`] | the SQL edition installed or upgraded in a schema |
//! | [`runner`] | locks against other changes, backup, plan again and compare, run, check, commit; the state of changes under way |
//! | [`backup`] | the `pg_dump` made before a change runs |
//!
//! A change runs as one read-write transaction, or in steps recorded in a
//! state table, after a backup, verified before it commits.
#![deny(missing_docs)]

pub mod action;
pub mod backup;
pub mod ops;
pub mod runner;

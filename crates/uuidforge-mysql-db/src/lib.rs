//! The read side of a live MariaDB or MySQL database through its UUIDs:
//! connections as the clients make them ([`connect`]), one read-only
//! transaction with a consistent snapshot ([`session`]), what the schema
//! declares ([`catalog`]), every column holding UUIDs in any storage form
//! with its order ([`columns`]), [`find`], [`related`] and [`discover`].
//! The `uuidforge db` commands on a `mysql://` or `mariadb://` URL.

#![deny(missing_docs)]

pub mod catalog;
pub mod columns;
pub mod connect;
pub mod convert;
pub mod discover;
pub mod find;
pub mod related;
pub mod session;

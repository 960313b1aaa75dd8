//! What the database tools of every store share, whatever the server:
//!
//! | module | what |
//! |---|---|
//! | [`error`] | the error type: its kind, and a refusal's reason and ways out, typed, each front end spelling them its own way |
//! | [`private_file`] | files only their owner reads (0600): backups, key files, a fleet's state, a names store |
//! | [`names`] | the one rule that says a column's name points at a table's key (`customer_id` → `customers.id`) |
#![deny(missing_docs)]

pub mod error;
pub mod names;
pub mod private_file;

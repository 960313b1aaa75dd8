//! Every change a database tool makes has one shape, whatever it changes
//! (rename, migrate-key in one transaction or in batches, merge,
//! unmerge):
//!
//! 1. an [`Operation`] names what its planning pass reads beside the
//!    catalog snapshot ([`Operation::reads`]: read-only queries, answered
//!    by name in [`Answers`]) and plans from the two, purely
//!    ([`Operation::plan`]): a typed, serializable plan holding one
//!    [`ChangePlan`], where each statement stands once;
//! 2. the change plan's printed form ([`print()`], the exact SQL) and the
//!    command's JSON come from that one value, and its verification is part
//!    of it ([`Check`], [`BatchStep::Check`]);
//! 3. one runner ([`crate::runner`]) applies any of them: it locks what the
//!    change writes against other changes, backs up, plans again inside the
//!    transaction and compares (refused unchanged if the schema moved),
//!    runs the steps by mode ([`Run`]), checks, commits, and keeps the
//!    state of a change in batches.
//!
//! Key migrations (`migrate-key`, in both modes) and merges share one model
//! of a key and what refers to it (`key`).

mod change;
pub mod complete_key;
pub mod install_sql;
pub(crate) mod key;
mod lock;
pub mod merge;
pub mod migrate_key;
mod print;
mod reads;
pub mod rename;
mod step;
pub mod switch_generator;
pub mod unmerge;

pub use crate::action::{one_line, Binding, Statement, Value};
pub use change::{
    distinct, lines, touched, Backup, ChangePlan, GiveUp, Line, Measured, Run, SessionSetting,
    Touched,
};
pub use key::naming as key_names;
pub use lock::Lock;
pub use print::{print, print_compared};
pub use reads::{Answers, Named, NamedText, Probe, Read, Reading};
pub use step::{Backfill, BatchStep, Check, Part, Step, Stop};

use serde::Serialize;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::DbError;

/// A plan an operation makes: typed, serializable (the command's JSON),
/// compared whole when made again inside the transaction.
pub trait Planned: Serialize + PartialEq {
    /// The change it runs.
    fn change(&self) -> &ChangePlan;
}

/// A database change.
pub trait Operation {
    /// Its plan.
    type Plan: Planned;
    /// Its name, for messages.
    fn name(&self) -> &'static str;
    /// What the planning pass reads, given what it has read so far
    /// (`answers`): the runner asks those not answered yet, until none is
    /// left. Read-only.
    fn reads(&self, snapshot: &Snapshot, answers: &Answers) -> Result<Vec<Read>, DbError>;
    /// The plan, from the snapshot and the answers.
    fn plan(&self, snapshot: &Snapshot, answers: &Answers) -> Result<Self::Plan, DbError>;
}

//! The shapes a key migration's work takes in both schedules: a [`Move`]
//! (something moved to the new columns: the key, a reference, a
//! constraint, an index, a foreign key) with where each schedule puts its
//! actions — all at once in one transaction; in batches an index built
//! concurrently before the swap and adopted in it, a NOT NULL proved by a
//! CHECK validated before it, a constraint made `NOT VALID` in it and
//! validated after — and a [`Fill`] (a new column filled from the key map or
//! the referenced row).

use super::phase::{Phase, Placed, Schedule, Work};
use crate::action::{Action, Table};

/// Where the key map (old key as text → new UUID) lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyMap {
    /// A temporary table, gone at commit: a change in one transaction.
    Temporary,
    /// A table in the key's schema, kept until the change's last step: a
    /// change in batches outlives its sessions.
    Kept,
}

/// One thing moved to the new columns, as each schedule places it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Move {
    /// In one transaction, in order.
    pub at_once: Vec<Action>,
    /// In batches, before the swap: indexes built concurrently, each with
    /// what it is for.
    pub build: Vec<(String, Action)>,
    /// In batches, before the swap: a NOT NULL proved by a CHECK added
    /// `NOT VALID` (writers wait briefly) and validated (writers go on).
    pub prove: Vec<(Action, Action)>,
    /// In batches, in the swap, in order.
    pub swap: Vec<Action>,
    /// In batches, after the swap, writers going on.
    pub validate: Vec<Action>,
    /// In batches, after those, writers waiting: a partitioned table's
    /// foreign key attaching its partitions' copies.
    pub attach: Vec<Action>,
    /// In batches, after the attachments, writers going on.
    pub validate_attached: Vec<Action>,
}

impl Move {
    /// Its actions in `schedule`, each in its phase.
    pub fn placed(self, schedule: Schedule) -> Vec<Placed> {
        if !schedule.in_batches() {
            return Placed::actions(Phase::Move, self.at_once);
        }
        let mut out: Vec<Placed> = self
            .build
            .into_iter()
            .map(|(what, action)| Placed {
                phase: Phase::Build,
                work: Work::Build { what, action },
                by: "",
            })
            .collect();
        let (add, validate): (Vec<Action>, Vec<Action>) = self.prove.into_iter().unzip();
        out.extend(Placed::actions(Phase::ProveNotNull, add));
        out.extend(Placed::actions(Phase::ValidateNotNull, validate));
        out.extend(Placed::actions(Phase::Move, self.swap));
        out.extend(Placed::actions(Phase::Validate, self.validate));
        out.extend(Placed::actions(Phase::Attach, self.attach));
        out.extend(Placed::actions(
            Phase::ValidateAttached,
            self.validate_attached,
        ));
        out
    }
}

/// A new column filled from the key map or the referenced row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fill {
    /// The column being filled (its name before the swap), for messages.
    pub column: String,
    /// The table (quoted, qualified).
    pub table: String,
    /// Its pieces a batch reaches one by one: its partitions, or itself,
    /// as (quoted name, display name).
    pub pieces: Vec<(String, String)>,
    /// What is set, over row `x`.
    pub set: String,
    /// The relations joined.
    pub from: Option<String>,
    /// The rows filled (those left unfilled, in batches).
    pub condition: String,
    /// A 64-bit hash of the row's other columns, over `x` (what a batch
    /// compares before and after).
    pub row_hash: String,
}

impl Fill {
    /// The fill as one statement over the whole table.
    pub fn update(&self) -> Action {
        Action::Table(Table::Update {
            table: self.table.clone(),
            set: self.set.clone(),
            from: self.from.clone(),
            condition: self.condition.clone(),
        })
    }
}

//! What the runner asks of a database, and nothing more: sessions it runs
//! statements on, the catalog it plans from, advisory locks, the state
//! table of changes under way, the pages a backfill fills, the backup.
//! The rules (what is locked when, what is recorded before what, what is
//! retried, refused or resumed) are the runner's own, written once over
//! these traits: [`super::postgres`] implements them on a real server, a
//! fake in memory for the runner's unit tests.

use super::state::{Position, Recorded, UnderWay};
use crate::action::DataIo;
use crate::backup::Backup as BackupFile;
use crate::ops::{Backup, ChangePlan};
use std::path::Path;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::DbError;
use uuidforge_db::plan::Query;

/// A database the runner connects to.
#[allow(async_fn_in_trait)]
pub trait Database {
    /// One of its connections.
    type Session: Session;
    /// A new connection, outside any transaction.
    async fn connect(&self) -> Result<Self::Session, DbError>;
    /// `what` dumped into `file` and read back, before anything changes.
    fn back_up(
        &self,
        server_version_num: i32,
        what: &Backup,
        file: &Path,
    ) -> Result<BackupFile, DbError>;
}

/// Who holds an advisory lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its server process.
    pub pid: i32,
    /// When its session began.
    pub since: String,
    /// Whether it is the asking session.
    pub mine: bool,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {}, since {}", self.pid, self.since)
    }
}

/// A change to the state of a change under way, made in the step's
/// transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateUpdate {
    /// The run of this server process holds it now.
    Claim(i32),
    /// Its next step is this one.
    Advance(usize),
    /// This transaction's id is kept under this name.
    Mark(String),
    /// A backfill's next block and end block.
    Pages(i64, i64),
    /// A part of a step run side by side records where it stands under
    /// this key of the marks (the change's state gone is an error: the
    /// part rolls back).
    Part(String, String),
    /// Its tables found again by their names (the plan's backup
    /// relations): new tables took their places.
    TablesByName,
}

/// One connection: what the runner does on it.
#[allow(async_fn_in_trait)]
pub trait Session: DataIo {
    /// Runs `sql` (one or more statements, no rows): `BEGIN`, `COMMIT`,
    /// settings, savepoints, a step's statements.
    async fn execute(&self, sql: &str) -> Result<(), DbError>;
    /// The catalog as this session sees it.
    async fn snapshot(&self) -> Result<Snapshot, DbError>;
    /// The first column of `query`'s first row, as text ("" when none).
    async fn read(&self, query: &Query, context: &str) -> Result<String, DbError>;
    /// Its server process.
    async fn pid(&self) -> Result<i32, DbError>;
    /// The server's `deadlock_timeout`, in milliseconds.
    async fn deadlock_timeout_ms(&self) -> Result<i64, DbError>;

    /// Takes the session-level advisory lock `key` if no one holds it.
    async fn try_advisory_lock(&self, key: i64) -> Result<bool, DbError>;
    /// Who holds the advisory lock `key` in this database, if anyone.
    async fn advisory_holder(&self, key: i64) -> Result<Option<Holder>, DbError>;
    /// Lets every advisory lock of this session go.
    async fn unlock_all(&self);

    /// The changes under way that write one of `oids`.
    async fn under_way(&self, oids: &[u32]) -> Result<Vec<UnderWay>, DbError>;
    /// Records `change`, run by server process `pid` (its state table
    /// made when missing; step 1 next, the first step in this
    /// transaction).
    async fn record(&self, change: &ChangePlan, pid: i32) -> Result<Recorded, DbError>;
    /// Where the change recorded at `at` stands, its row locked until the
    /// transaction ends; `None` once it is no longer recorded.
    async fn position(&self, at: &Recorded) -> Result<Option<Position>, DbError>;
    /// Updates the state of the change recorded at `at`.
    async fn update(&self, at: &Recorded, update: StateUpdate) -> Result<(), DbError>;
    /// Removes the change recorded at `at`, and its state table once
    /// empty.
    async fn finish(&self, at: &Recorded) -> Result<(), DbError>;

    /// One row of JSON counts from `sql`, `binds` bound as `bigint`s.
    async fn counts(&self, sql: &str, binds: &[i64]) -> Result<String, DbError>;
    /// The pages of `table` now, and its rows per page (an estimate).
    async fn pages(&self, table: &str) -> Result<(i64, f64), DbError>;
    /// A backfill's statement over pages `from..until`: rows filled, and
    /// how many of them changed in other columns.
    async fn fill(&self, sql: &str, from: i64, until: i64) -> Result<(i64, i64), DbError>;
}

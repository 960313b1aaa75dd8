//! The steps of a change, typed by how it runs: [`Step`]s share one
//! transaction and are followed by [`Check`]s before it commits;
//! [`BatchStep`]s each commit on their own, recorded by the runner so that a
//! killed run goes on with `--resume`. What uuidforge computes between
//! reading and writing rows (new keys, rewritten values) is a data action
//! of the action layer ([`crate::action::Data`]): the runner runs any of
//! them the same way, knowing no operation.

use super::lock::Lock;
use crate::action::{Action, Data, Statement};
use serde::{Deserialize, Serialize};

/// How a failed expectation stops a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The database holds what the operation does not change (refused).
    Refused,
    /// Rows changed since the tool recorded them.
    Conflict,
}

/// One step of a change made in one transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// Runs a statement. With `output`, its first column of the first row
    /// is kept under that name for later bindings
    /// ([`super::Value::Output`]). With `rows`, it must change exactly that
    /// many rows, else the change stops ([`Stop::Conflict`]) with
    /// `message`.
    Run {
        /// The statement.
        statement: Statement,
        /// The name its value is kept under.
        output: Option<String>,
        /// The rows it must change.
        rows: Option<u64>,
        /// Why the change stops when `rows` does not hold.
        message: Option<String>,
    },
    /// Reads one text value that must be `expect`; otherwise the change
    /// stops, as `stop`, with `message` (`{value}` stands for what was
    /// read) about `context` (an argument or the operation).
    Expect {
        /// The query.
        statement: Statement,
        /// The value it must read.
        expect: String,
        /// How it stops otherwise.
        stop: Stop,
        /// What the message is about.
        context: String,
        /// Why.
        message: String,
    },
    /// A data action (its own `kind`: recorded plans read as before).
    #[serde(untagged)]
    Data(Data),
}

impl Step {
    /// A statement run as it is.
    pub fn run(statement: Statement) -> Step {
        Step::Run {
            statement,
            output: None,
            rows: None,
            message: None,
        }
    }

    /// The statements of a script (the SQL edition's), each a step.
    pub fn script(sqls: impl IntoIterator<Item = String>) -> Vec<Step> {
        sqls.into_iter()
            .map(|s| Step::run(Statement::sql(s)))
            .collect()
    }

    /// The statements of `actions`, each a step.
    pub fn actions<'a>(actions: impl IntoIterator<Item = &'a Action>) -> Vec<Step> {
        actions
            .into_iter()
            .flat_map(Action::statements)
            .map(|s| Step::run(Statement::sql(s)))
            .collect()
    }

    /// What the step does, for progress and the printed plan.
    pub fn what(&self) -> &str {
        match self {
            Step::Data(data) => data.what(),
            Step::Run { .. } => "run a statement",
            Step::Expect { .. } => "check a precondition",
        }
    }
}

/// A check made after the steps of one transaction, before it commits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    /// One row of JSON, named counts that must all be zero.
    Zero {
        /// What it checks.
        what: String,
        /// The query.
        statement: Statement,
    },
    /// One row of JSON read before the steps and after: the same.
    Unchanged {
        /// What it compares.
        what: String,
        /// The query.
        statement: Statement,
    },
    /// Counts that must each be above zero (rows back as they were).
    Present {
        /// What it checks.
        what: String,
        /// (what, the count) per row.
        statements: Vec<(String, Statement)>,
    },
}

/// A range of pages filled in one transaction of a backfill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backfill {
    /// What the step does.
    pub what: String,
    /// The table whose pages are filled (quoted, qualified).
    pub table: String,
    /// One statement (`$1` first block, `$2` the block after the last)
    /// that locks the range's rows with a hash of each one's other
    /// columns, fills them and returns how many it filled and how many of
    /// them hash otherwise now (0, else the batch rolls back).
    pub update_sql: String,
    /// Disables the table's user triggers around the update.
    #[serde(default)]
    pub quiet: Vec<String>,
    /// Puts them back.
    #[serde(default)]
    pub restore: Vec<String>,
    /// What a mismatch means, when not other columns changed by the
    /// update (a copy's rows not copied, or without their new key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<String>,
}

/// One step of a change in batches: each commits on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BatchStep {
    /// Statements in a transaction of their own; with `exclusive`, they
    /// lock writers out and the run times them: `lock` first (the tables
    /// it locks, taken before anything else, the plan compared under them
    /// when it is the first step), then `statements`. With `mark`, the
    /// runner records the transaction's id under that name (what later
    /// checks bind: rows written after it are the application's).
    Transaction {
        /// What the step does.
        what: String,
        /// The tables it locks first (plans recorded by earlier versions
        /// have none: their locks are among the statements).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lock: Option<Lock>,
        /// The statements.
        statements: Vec<String>,
        /// Whether writers wait while it runs.
        exclusive: bool,
        /// The name its transaction id is recorded under.
        #[serde(default)]
        mark: Option<String>,
        /// It puts new tables in the places of those the change writes (an
        /// online copy's swap): the change's tables are found again by
        /// their names before it commits.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        replaces_tables: bool,
    },
    /// A new column filled range of pages by range of pages.
    Backfill(Backfill),
    /// `cleanup` then `statement`, outside any transaction (an index built
    /// `CONCURRENTLY`).
    Concurrently {
        /// What the step does.
        what: String,
        /// Run first: drops what a killed earlier try left.
        cleanup: String,
        /// The statement.
        statement: String,
    },
    /// Counts that must all be zero, in a transaction of its own; `binds`
    /// name the marks bound to `$1`, `$2`, … (as `bigint`).
    Check {
        /// What it checks.
        what: String,
        /// One row of JSON counts.
        sql: String,
        /// The marks it binds.
        #[serde(default)]
        binds: Vec<String>,
    },
    /// The application's writes carried into a copy round by round, each
    /// round `statements` in a transaction of its own, until `remaining`
    /// (one number as text) is at most `until`, or after `rounds` rounds
    /// (the rest is carried under the swap's locks).
    Replay {
        /// What the step does.
        what: String,
        /// One round.
        statements: Vec<String>,
        /// How many writes are left to carry.
        remaining: String,
        /// Few enough to stop at.
        until: i64,
        /// At most this many rounds.
        rounds: u32,
    },
    /// Parts that depend on none of each other (the tables' copies, the
    /// shadows' indexes, the foreign keys' validations), run side by side
    /// on up to `sessions` sessions, the largest first. Each part records
    /// that it is done (or where its ranges stand) in the change's state
    /// as its own transaction commits, so that a killed run goes on with
    /// the parts and ranges not done.
    Beside {
        /// What the step does.
        what: String,
        /// At most this many parts at once.
        sessions: u32,
        /// The parts.
        parts: Vec<Part>,
    },
    /// A data action in a transaction of its own (its own `kind`).
    #[serde(untagged)]
    Data(Data),
}

/// One part of a [`BatchStep::Beside`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Part {
    /// Statements in one transaction that lock no table writers use (an
    /// index built on a shadow only the change writes, a foreign key
    /// validated).
    Transaction {
        /// What the part does.
        what: String,
        /// The table (quoted, qualified) whose size orders the part among
        /// the others, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sized_by: Option<String>,
        /// The statements.
        statements: Vec<String>,
    },
    /// A table's pages filled (or copied) range by range.
    Backfill(Backfill),
}

impl Part {
    /// What the part does.
    pub fn what(&self) -> &str {
        match self {
            Part::Transaction { what, .. } => what,
            Part::Backfill(b) => &b.what,
        }
    }
}

impl BatchStep {
    /// What the step does, for progress and the printed plan.
    pub fn what(&self) -> &str {
        match self {
            BatchStep::Transaction { what, .. }
            | BatchStep::Concurrently { what, .. }
            | BatchStep::Check { what, .. }
            | BatchStep::Replay { what, .. }
            | BatchStep::Beside { what, .. } => what,
            BatchStep::Backfill(b) => &b.what,
            BatchStep::Data(data) => data.what(),
        }
    }

    /// A transaction of `actions`, taking `lock` first: writers wait while
    /// it runs when one of them blocks them
    /// ([`crate::action::Locks::blocks_writers`]).
    pub fn transaction(
        what: impl Into<String>,
        lock: Option<&Lock>,
        actions: &[Action],
    ) -> BatchStep {
        let exclusive = actions.iter().any(|a| a.locks().blocks_writers());
        BatchStep::Transaction {
            what: what.into(),
            lock: lock.cloned(),
            statements: crate::action::statements(actions),
            exclusive,
            mark: None,
            replaces_tables: false,
        }
    }

    /// An action run outside any transaction (an index built
    /// concurrently): its first statement drops what a killed earlier try
    /// left, the second makes it.
    pub fn concurrently(what: impl Into<String>, action: &Action) -> BatchStep {
        let mut statements = action.statements().into_iter();
        BatchStep::Concurrently {
            what: what.into(),
            cleanup: statements.next().unwrap_or_default(),
            statement: statements.next().unwrap_or_default(),
        }
    }
}

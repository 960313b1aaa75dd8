//! The steps of a change, typed by how it runs: [`Step`]s share one
//! transaction and are followed by [`Check`]s before it commits;
//! [`BatchStep`]s each commit on their own, recorded by the runner so that a
//! killed run goes on with `--resume`. What a step does that belongs to one
//! operation (new keys of a key migration, a merge's rewritten values) is
//! that operation's type behind the step.

use super::key::NewKeys;
use super::lock::Lock;
use super::merge::Implicit;
use super::statement::Statement;
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
    /// The new keys of a key migration, computed by the library and copied
    /// into the key map.
    Keys(NewKeys),
    /// Values [`uuidforge_db::find`] saw outside the declared references of a
    /// merge, rewritten in place and logged.
    Implicit(Implicit),
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

    /// Statements run as they are, each a step.
    pub fn each(sqls: impl IntoIterator<Item = String>) -> Vec<Step> {
        sqls.into_iter()
            .map(|s| Step::run(Statement::sql(s)))
            .collect()
    }

    /// What the step does, for progress and the printed plan.
    pub fn what(&self) -> &str {
        match self {
            Step::Keys(_) => "compute the new keys and copy them into the map",
            Step::Implicit(_) => "rewrite the values outside the declared references",
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
    },
    /// The new keys, computed and copied into the key map.
    Keys(NewKeys),
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
}

impl BatchStep {
    /// What the step does, for progress and the printed plan.
    pub fn what(&self) -> &str {
        match self {
            BatchStep::Transaction { what, .. }
            | BatchStep::Concurrently { what, .. }
            | BatchStep::Check { what, .. } => what,
            BatchStep::Backfill(b) => &b.what,
            BatchStep::Keys(_) => "compute the new keys and copy them into the map",
        }
    }

    /// A transaction of `statements` that lets writers go on.
    pub fn transaction(what: impl Into<String>, statements: Vec<String>) -> BatchStep {
        BatchStep::Transaction {
            what: what.into(),
            lock: None,
            statements,
            exclusive: false,
            mark: None,
        }
    }

    /// A transaction that locks writers out: `lock`, then `statements`.
    pub fn exclusive(
        what: impl Into<String>,
        lock: Option<Lock>,
        statements: Vec<String>,
    ) -> BatchStep {
        BatchStep::Transaction {
            what: what.into(),
            lock,
            statements,
            exclusive: true,
            mark: None,
        }
    }
}

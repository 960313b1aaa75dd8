//! Every change a database tool makes has one shape, whatever it changes
//! (rename, migrate-key in one transaction or in batches, merge,
//! unmerge):
//!
//! 1. an [`Operation`] says what its planning pass reads beside the
//!    catalog snapshot ([`Operation::reads`], read-only queries) and plans
//!    from the two, purely ([`Operation::plan`]), a typed, serializable
//!    plan holding a [`ChangePlan`];
//! 2. the change plan's printed form ([`print`], the exact SQL) and the
//!    command's JSON come from that one value, and its verification is part
//!    of it ([`Check`]);
//! 3. one runner ([`crate::runner`]) applies any of them: backup, the plan
//!    made again inside the transaction and compared (refused unchanged if
//!    the schema moved), the steps, the checks, commit or roll back.
//!
//! Statements carry their values as named bindings ([`Statement`]): the
//! value an earlier step read is bound by its name, never found by the
//! position of a statement.

pub mod merge;
pub mod migrate_batched;
pub mod migrate_key;
pub mod rename;
pub mod unmerge;

use crate::catalog::Snapshot;
use crate::error::DbError;
use crate::plan::Query;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A value bound to a statement parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Value {
    /// `uuid`.
    Uuid(Uuid),
    /// `uuid[]`.
    Uuids(Vec<Uuid>),
    /// `text` (NULL when `None`).
    Text(Option<String>),
    /// What an earlier step kept under this binding's name (its
    /// `output`), as the parameter's type (`bigint`, `uuid`, `text`).
    Output,
}

/// A parameter by name: `$n` is the n-th binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// Its name (`new`, `olds`, `merge_id`).
    pub name: String,
    /// Its value.
    pub value: Value,
}

/// A statement of a change: the SQL (identifiers quoted, values as `$n`)
/// and its bindings in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// The SQL.
    pub sql: String,
    /// `$1`, `$2`, … in order.
    pub bindings: Vec<Binding>,
}

impl Statement {
    /// A statement without parameters.
    pub fn sql(sql: impl Into<String>) -> Statement {
        Statement {
            sql: sql.into(),
            bindings: Vec::new(),
        }
    }

    /// A statement with `bindings` (name, value), `$1` first.
    pub fn with(sql: impl Into<String>, bindings: &[(&str, Value)]) -> Statement {
        Statement {
            sql: sql.into(),
            bindings: bindings
                .iter()
                .map(|(name, value)| Binding {
                    name: (*name).to_string(),
                    value: value.clone(),
                })
                .collect(),
        }
    }

    /// The printed line: the SQL, then which binding each `$n` is.
    pub fn printed(&self) -> String {
        if self.bindings.is_empty() {
            return format!("{};", self.sql);
        }
        let names: Vec<String> = self
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| format!("${} = {}", i + 1, b.name))
            .collect();
        format!("{};  -- {}", self.sql, names.join(", "))
    }
}

/// How a failed expectation stops a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The database holds what the operation does not change (refused).
    Refused,
    /// Rows changed since the tool recorded them.
    Conflict,
}

/// One step of a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// Runs a statement. With `output`, its first column of the first row
    /// is kept under that name for later bindings ([`Value::Output`]).
    /// With `rows`, it must change exactly that many rows, else the change
    /// stops ([`Stop::Conflict`]) with `message`.
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
    /// The new keys of a key migration: `read` gives rows of (old key as
    /// text, Unix milliseconds or NULL) in the new order; the keys are
    /// computed by the library from the run's secret and copied into
    /// `map` (old text, new uuid).
    Keys {
        /// The read.
        read: String,
        /// The map table.
        map: String,
        /// Whether the times order the keys (`--order-by`).
        ordered: bool,
    },
    /// Values [`crate::find`] saw outside the declared references of a
    /// merge, rewritten in place and logged ([`merge::Implicit`]).
    Implicit(merge::Implicit),
    /// (in batches) statements in a transaction of their own; with
    /// `exclusive`, they lock writers out and the run times them.
    Transaction {
        /// What the step does.
        what: String,
        /// The statements.
        statements: Vec<String>,
        /// Whether writers wait while it runs.
        exclusive: bool,
    },
    /// (in batches) for each range of pages (`$1` first block, `$2` the
    /// block after the last), one transaction: `quiet` (the table's
    /// triggers kept from firing on the tool's own update), then with
    /// `checked` one statement, `update_sql`, that locks the range's rows
    /// to fill with a hash of each one's other columns, fills them and
    /// returns how many it filled and how many of them hash otherwise now
    /// (0, else rollback); `restore` after. (Plans recorded by earlier
    /// versions: `before_sql` locks and hashes, `update_sql` fills the rows
    /// by ctid returning the hashes again; without either, `update_sql`
    /// fills the range unchecked.)
    Backfill {
        /// What the step does.
        what: String,
        /// The table.
        table: String,
        /// The update of the rows `before_sql` locked, returning a hash of
        /// each one's other columns.
        update_sql: String,
        /// Locks the rows of a range the update will change: each one's
        /// ctid and the same hash (plans of earlier versions).
        #[serde(default)]
        before_sql: Option<String>,
        /// `update_sql` locks, hashes, fills and compares in one statement.
        #[serde(default)]
        checked: bool,
        /// Disables the table's user triggers.
        #[serde(default)]
        quiet: Vec<String>,
        /// Puts them back.
        #[serde(default)]
        restore: Vec<String>,
    },
    /// (in batches) `cleanup` then `statement`, outside any transaction
    /// (an index built `CONCURRENTLY`).
    Concurrently {
        /// What the step does.
        what: String,
        /// Run first: drops what a killed earlier try left.
        cleanup: String,
        /// The statement.
        statement: String,
    },
    /// (in batches) counts that must all be zero, in a transaction of its
    /// own.
    Check {
        /// What it checks.
        what: String,
        /// One row of JSON counts.
        sql: String,
    },
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

    /// What the step does, for progress and the printed plan.
    pub fn what(&self) -> &str {
        match self {
            Step::Transaction { what, .. }
            | Step::Backfill { what, .. }
            | Step::Concurrently { what, .. }
            | Step::Check { what, .. } => what,
            Step::Keys { .. } => "compute the new keys and copy them into the map",
            Step::Implicit(_) => "rewrite the values outside the declared references",
            Step::Run { .. } => "run a statement",
            Step::Expect { .. } => "check a precondition",
        }
    }
}

/// A check made after the steps, before commit.
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
    /// One row of JSON read before the steps and after: the same (row
    /// counts).
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
    /// The catalog after the steps: each renamed object by its new name
    /// and not by its old one.
    Renamed {
        /// The renamed objects.
        renamed: Vec<rename::Renamed>,
    },
}

/// How a change runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mode {
    /// All steps in one transaction, checked before commit.
    #[default]
    OneTransaction,
    /// Each step committed on its own and recorded in `state_table`, so
    /// that a killed run goes on with `--resume`.
    Steps {
        /// The state table (quoted, qualified).
        state_table: String,
        /// The changed table, as the state table names it.
        table: String,
        /// Rows per batch of a backfill.
        batch_size: i64,
    },
}

/// What a change backs up before it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Backup {
    /// The relations (quoted, qualified).
    pub relations: Vec<String>,
    /// Their definitions only (a rename), or their rows too.
    pub schema_only: bool,
}

/// A change: what the runner runs and the printer prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ChangePlan {
    /// The operation (`rename`, `migrate-key`, `merge`, `unmerge`).
    pub operation: String,
    /// The plan's comment lines, first `plan: …`.
    pub summary: Vec<String>,
    /// What to back up first.
    pub backup: Backup,
    /// How it runs.
    pub mode: Mode,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The checks after them.
    pub checks: Vec<Check>,
    /// Printed after the plan: notes and scripts (an undo), each line as
    /// it is.
    pub epilogue: Vec<String>,
}

/// A plan an operation makes: typed, serializable (the command's JSON),
/// compared whole when made again inside the transaction.
pub trait Planned: Serialize + PartialEq {
    /// The change it runs.
    fn change(&self) -> &ChangePlan;
}

/// A read of the planning pass: one row of text.
#[derive(Debug, Clone)]
pub struct Read {
    /// What it reads (for errors).
    pub what: String,
    /// The query.
    pub query: Query,
}

/// A database change.
pub trait Operation {
    /// Its plan.
    type Plan: Planned;
    /// Its name, for messages.
    fn name(&self) -> &'static str;
    /// What the planning pass reads after `answers` (the rows of the reads
    /// asked for before, in order): more reads, or none when it has all it
    /// needs. Read-only.
    fn reads(&self, snapshot: &Snapshot, answers: &[String]) -> Result<Vec<Read>, DbError>;
    /// The plan, from the snapshot and every answer.
    fn plan(&self, snapshot: &Snapshot, answers: &[String]) -> Result<Self::Plan, DbError>;
}

/// The printed form of `change`: its summary as comments, the exact SQL
/// of its steps in order, its checks, then its epilogue.
pub fn print(change: &ChangePlan) -> Vec<String> {
    let mut out: Vec<String> = change
        .summary
        .iter()
        .map(|line| format!("-- {}", one_line(line)))
        .collect();
    match &change.mode {
        Mode::OneTransaction => {
            out.push("BEGIN;".into());
            for step in &change.steps {
                out.extend(print_step(step));
            }
            for check in &change.checks {
                out.extend(print_check(check));
            }
            out.push("COMMIT;".into());
        }
        Mode::Steps { .. } => {
            for (i, step) in change.steps.iter().enumerate() {
                let how = match step {
                    Step::Transaction {
                        exclusive: true, ..
                    } => " (one transaction; writers wait)",
                    Step::Backfill { .. } => ", one transaction per range of pages",
                    Step::Concurrently { .. } => " (no transaction; writers go on)",
                    _ => " (one transaction)",
                };
                out.push(String::new());
                out.push(format!("-- step {}: {}{how}", i + 1, one_line(step.what())));
                out.extend(print_step(step));
            }
        }
    }
    out.extend(change.epilogue.iter().cloned());
    out
}

fn print_step(step: &Step) -> Vec<String> {
    match step {
        Step::Run { statement, .. } => vec![statement.printed()],
        Step::Expect {
            statement, expect, ..
        } => vec![format!(
            "-- expect '{}' from: {}",
            one_line(expect),
            statement.printed()
        )],
        Step::Keys { map, read, .. } => vec![
            format!("-- new keys computed by uuidforge from: {read};"),
            format!("-- COPY {map} (old, new): one row per key"),
        ],
        Step::Implicit(implicit) => implicit.printed(),
        Step::Transaction { statements, .. } => {
            let mut lines = vec!["BEGIN;".to_string()];
            lines.extend(statements.iter().map(|s| format!("{s};")));
            lines.push("COMMIT;".into());
            lines
        }
        Step::Backfill {
            update_sql,
            before_sql,
            checked,
            quiet,
            restore,
            ..
        } => {
            let mut out = vec!["-- each range of pages, one transaction:".to_string()];
            out.extend(quiet.iter().map(|s| format!("{s};")));
            if *checked {
                out.push(format!("{update_sql};  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)"));
            } else {
                if let Some(before) = before_sql {
                    out.push(format!("{before};  -- $1 its first page, $2 the page after its last: the rows to fill, locked, and their other columns"));
                }
                out.push(format!(
                    "{update_sql};  -- $1 those rows: their other columns again, equal or rollback"
                ));
            }
            out.extend(restore.iter().map(|s| format!("{s};")));
            out
        }
        Step::Concurrently {
            cleanup, statement, ..
        } => vec![format!("{cleanup};"), format!("{statement};")],
        Step::Check { sql, .. } => vec![format!("{sql};  -- every count 0")],
    }
}

fn print_check(check: &Check) -> Vec<String> {
    match check {
        Check::Zero { statement, .. } => vec![
            "-- verify (every count 0, else rollback):".into(),
            statement.printed(),
        ],
        Check::Unchanged { what, statement } => vec![
            format!("-- verify: {what} the same before and after:"),
            statement.printed(),
        ],
        Check::Present { what, statements } => {
            let mut lines = vec![format!("-- verify: {what}:")];
            lines.extend(statements.iter().map(|(_, s)| s.printed()));
            lines
        }
        Check::Renamed { renamed } => vec![format!(
            "-- verify: the {} renamed object(s) go by their new names in the catalog",
            renamed.len()
        )],
    }
}

/// The relations named by `names`, each once, in order (what a change
/// backs up).
pub fn distinct(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The foreign keys of `fks` that are not deferrable, made deferrable
/// (`make`) for a change's length, or back (checked at commit: a key
/// moves before the row that will hold it exists).
pub fn deferrable<'a>(
    fks: impl IntoIterator<Item = (&'a crate::catalog::Relation, &'a crate::catalog::Constraint)>,
    make: bool,
) -> Vec<Step> {
    fks.into_iter()
        .filter(|(_, fk)| !fk.deferrable)
        .map(|(table, fk)| {
            Step::run(Statement::sql(format!(
                "ALTER TABLE {} ALTER CONSTRAINT {} {}DEFERRABLE",
                table.sql_name(),
                crate::ident::quote_ident(&fk.name),
                if make { "" } else { "NOT " }
            )))
        })
        .collect()
}

/// `text` on one line, for an SQL comment: a name from the database may
/// hold a line break, which would end the comment and leave the rest of
/// the name to be read as SQL by whoever runs the printed script.
pub fn one_line(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

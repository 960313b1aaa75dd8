//! D1: migrate a table's primary key to UUIDv7, with every reference to it
//! — in one transaction ([`one_transaction`]), or in batches that keep
//! writers working ([`batched`]).
//!
//! The new keys are computed by the library (E8,
//! [`uuidforge::generator::v7_from`], keyed) from the `--order-by`
//! column's time, or — without it — from times synthesized one millisecond
//! apart in the old key order, so the new order equals the old one
//! exactly. Both modes are schedules of one list of actions that one model
//! of the key and what refers to it makes (`ops::key::Migration`),
//! and verify the same things (`ops::key::checks`).

pub mod batched;
pub mod copy;
pub mod one_transaction;

pub use crate::ops::key::keys_from;
pub use crate::ops::key::kinds::copies::CopySearch;
pub use crate::ops::key::{Jobs, MigrateOptions, Phase, Placed, Schedule, Work};

use crate::ops::key::{self, by_column, Migration, Target};
use crate::ops::{one_line, Answers, ChangePlan, Line, Lock, Operation, Planned, Read};
use serde::Serialize;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::DbError;
use uuidforge_db::error::WayOut;
use uuidforge_db::introspect::Mention;

/// Migrating a table's key to UUIDv7.
#[derive(Debug, Clone)]
pub struct MigrateKey {
    /// `table` or `schema.table`.
    pub table: String,
    /// How.
    pub options: MigrateOptions,
    /// In batches of about this many rows, writers going on; else in one
    /// transaction.
    pub batch_size: Option<i64>,
}

/// A referencing column, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReferenceSummary {
    /// `schema.table` (where its foreign key is declared), quoted.
    pub table: String,
    /// The column.
    pub column: String,
    /// The foreign key, or how it was named.
    pub constraint: String,
    /// What it becomes: `uuid`, or its own type taking the new key's text.
    pub becomes: String,
}

/// The plan of a key migration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MigratePlan {
    /// `schema.table`, quoted.
    pub table: String,
    /// The key column.
    pub key: String,
    /// Its type before.
    pub key_type: String,
    /// Where the old values are kept.
    pub old_name: String,
    /// Rows per batch, in batches.
    pub batch_size: Option<i64>,
    /// The referencing columns.
    pub references: Vec<ReferenceSummary>,
    /// What the key's default becomes, for people.
    pub default: String,
    /// The generator it calls (none with `--no-default`).
    pub generator: Option<uuidforge_db::generators::Generator>,
    /// Functions and procedures using the changed columns, to review.
    pub functions: Vec<Mention>,
    /// What it will cost: rows, sizes, the free disk it needs at most and
    /// the time it expects (estimates, printed with the plan).
    pub cost: key::cost::Cost,
    /// The change the runner runs.
    pub change: ChangePlan,
}

impl Planned for MigratePlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

impl Operation for MigrateKey {
    type Plan = MigratePlan;

    fn name(&self) -> &'static str {
        "migrate-key"
    }

    fn reads(&self, snapshot: &Snapshot, answers: &Answers) -> Result<Vec<Read>, DbError> {
        if let Some(size) = self
            .batch_size
            .filter(|s| !(1..=i64::from(i32::MAX)).contains(s))
        {
            return Err(DbError::invalid(
                "batch-size",
                format!("{size} (expected 1 to {})", i32::MAX),
            ));
        }
        if self.options.copy && self.batch_size.is_none() {
            return Err(DbError::invalid(
                "copy",
                "without --batch-size (expected it with --batch-size N: the copy runs online, in ranges of about N rows)",
            ));
        }
        let target = Target::new(snapshot, &self.table, &self.options)?;
        let mut reads = key::reads(&target, answers)?;
        if self.options.copy {
            let oids: Vec<u32> = target.written().iter().map(|r| r.oid).collect();
            reads.push(key::shadow::read(&oids));
        }
        Ok(reads)
    }

    fn plan(&self, snapshot: &Snapshot, answers: &Answers) -> Result<MigratePlan, DbError> {
        let target = Target::new(snapshot, &self.table, &self.options)?;
        let m = Migration::new(target, answers)?;
        let mut change = match self.schedule() {
            Schedule::Batches(size) if self.options.copy => copy::change(
                &m,
                (size, self.options.jobs.0),
                &answers.required(&key::shadow::SHADOWED)?,
            )?,
            Schedule::Batches(size) => batched::change(&m, size)?,
            Schedule::OneTransaction => one_transaction::change(&m)?,
        };
        let writing = match self.schedule() {
            Schedule::OneTransaction => key::cost::Writing::OneTransaction,
            Schedule::Batches(_) if self.options.copy => key::cost::Writing::Copy,
            Schedule::Batches(_) => key::cost::Writing::InPlace,
        };
        let cost = cost(&m, writing)?;
        change.measured = measured(&m, &cost);
        Ok(MigratePlan {
            table: m.key.table.sql_name(),
            key: m.key.column.name.clone(),
            key_type: m.key.column.type_name.clone(),
            old_name: m.old_name.clone(),
            batch_size: self.batch_size,
            references: references(&m),
            default: default_note(&m)
                .rendered(&uuidforge_db::error::Plain)
                .trim_start_matches("  new default: ")
                .to_string(),
            generator: m.generator.clone(),
            functions: m.functions.clone(),
            cost,
            change,
        })
    }
}

impl MigrateKey {
    /// How it runs.
    pub fn schedule(&self) -> Schedule {
        self.batch_size
            .map_or(Schedule::OneTransaction, Schedule::Batches)
    }

    /// The model's work before its schedule placed it: every kind's, each
    /// piece in its phase (what the schedule must place, each exactly
    /// once, or refuse by name).
    pub fn placed(&self, snapshot: &Snapshot, answers: &Answers) -> Result<Vec<Placed>, DbError> {
        let target = Target::new(snapshot, &self.table, &self.options)?;
        Migration::new(target, answers)?.placed(self.schedule())
    }
}

/// The time each new key carries, as the plan says it: the row's own
/// (`--order-by`), or made up from 2000-01-01 in the old key order, with
/// the table's creation-time column proposed when it has one.
fn key_times(m: &Migration) -> Line {
    if let Some(c) = &m.order_column {
        return format!("  key times: each row's {c}, to the millisecond (bounds by time then select rows by when they were made)").into();
    }
    let start = chrono::DateTime::from_timestamp_millis(crate::action::SYNTHESIZED_EPOCH_MS as i64)
        .map_or_else(String::new, |t| t.format("%Y-%m-%d").to_string());
    let made_up = format!(
        "  key times: made up: from {start} on, one millisecond per row in the old key order, not when the rows were made (bounds by time mean nothing for them)"
    );
    match crate::ops::key::creation_time::column(m.key.table) {
        Some(c) => Line::with(
            format!(
                "{made_up} — WARNING: {}.{} ({}) looks like each row's creation time",
                m.key.table.display_name(),
                c.name,
                c.type_name,
            ),
            WayOut::OrderBy {
                column: uuidforge_ident::as_typed(&c.name),
            },
        ),
        None => made_up.into(),
    }
}

/// What the plan says of the new key's default: the generator, none by
/// choice, or a warning that the database has none and the ways out.
fn default_note(m: &Migration) -> Line {
    match &m.missing_generator {
        Some(refusal) => Line {
            text: format!(
                "  new default: none — WARNING: {}; applying it is refused",
                refusal.why
            ),
            ways_out: refusal.ways_out.clone(),
        },
        None => format!(
            "  new default: {}",
            uuidforge_db::generators::default_note(m.generator.as_ref())
        )
        .into(),
    }
}

fn references(m: &Migration) -> Vec<ReferenceSummary> {
    m.references
        .iter()
        .map(|r| ReferenceSummary {
            table: r.declared_on.sql_name(),
            column: r.column.name.clone(),
            constraint: r.constraint_name(),
            becomes: match m.becomes(r) {
                key::values::Becomes::Uuid => "uuid".into(),
                key::values::Becomes::Text => {
                    format!("{} holding the new key's text", r.column.type_name)
                }
            },
        })
        .collect()
}

/// What planning measured: the search for copies of a uuid key's values.
/// What planning measured: the search for copies, the cost.
fn measured(m: &Migration, cost: &key::cost::Cost) -> crate::ops::Measured {
    let mut lines = crate::ops::key::kinds::copies::measured(m, &m.copies);
    lines.extend(cost.lines());
    crate::ops::Measured(lines)
}

/// What `m` will cost in `schedule`, with the free space the planning pass
/// read (none where the server could not tell).
fn cost(m: &Migration, writing: key::cost::Writing) -> Result<key::cost::Cost, DbError> {
    let free = m.answers.answer(&key::cost::FREE_SPACE)?.flatten();
    Ok(key::cost::Cost::of(m, writing, free))
}

/// The first lines of a migration plan: the table, the key and what
/// becomes of it, the references, the new default, the functions to
/// review; `how` ends the first line (`, in batches of about N rows`).
fn summary(m: &Migration, how: &str) -> Vec<Line> {
    let mut lines: Vec<Line> = vec![format!(
        "plan: {} key {} ({}) → uuid (UUIDv7, {}), old values kept in {}{how}",
        m.key.table.sql_name(),
        m.key.column.name,
        m.key.column.type_name,
        match &m.order_column {
            Some(c) => format!("time from {c}"),
            None => "old key order kept".into(),
        },
        m.old_name
    )
    .into()];
    lines.push(key_times(m));
    for r in references(m) {
        let becomes = if r.becomes == "uuid" {
            String::new()
        } else {
            format!(", kept as {}", r.becomes)
        };
        lines.push(
            format!(
                "  referenced by {}.{} ({}{becomes})",
                r.table, r.column, r.constraint
            )
            .into(),
        );
    }
    let moved = m.dependents.constraints.len() + m.dependents.indexes.len();
    if moved > 0 {
        lines.push(
            format!(
                "  moved to the new columns from their definitions: {}",
                m.dependents
                    .constraints
                    .iter()
                    .map(|c| format!("constraint {}", c.name))
                    .chain(
                        m.dependents
                            .indexes
                            .iter()
                            .map(|i| format!("index {}", i.name))
                    )
                    .collect::<Vec<_>>()
                    .join(", ")
            )
            .into(),
        );
    }
    lines.extend(m.old_keys.iter().cloned().map(Line::from));
    lines.extend(
        crate::ops::key::kinds::generated::lines(m)
            .into_iter()
            .map(Line::from),
    );
    lines.extend(crate::ops::key::kinds::copies::plan_lines(m, &m.copies));
    for kind in crate::ops::key::kinds::KINDS {
        lines.extend(kind.lines(m));
    }
    lines.push(default_note(m));
    lines.extend(crate::ops::key::kinds::publications::plan_lines(
        &m.published,
        &m.publications,
        !how.is_empty(),
    ));
    lines.extend(m.functions.iter().map(|f| {
        Line::from(format!(
            "  review {} {}: {}",
            f.kind,
            one_line(&f.name),
            one_line(&f.action)
        ))
    }));
    lines
}

/// The relations a migration backs up: the table and its referencing
/// tables.
fn backup(m: &Migration) -> crate::ops::Backup {
    crate::ops::Backup {
        relations: m.written().iter().map(|r| r.sql_name()).collect(),
        schema_only: false,
        ..Default::default()
    }
}

/// Locks every table written, referencing tables first (as a writer's
/// statement that checks a foreign key has).
fn lock_all(m: &Migration) -> Lock {
    let mut order: Vec<String> = m
        .written()
        .iter()
        .filter(|r| r.oid != m.key.table.oid)
        .map(|r| r.sql_name())
        .collect();
    order.push(m.key.table.sql_name());
    Lock::access_exclusive(order)
}

/// What a migration writes: the tables, and partitions declaring a
/// reference.
fn touches(m: &Migration) -> Vec<crate::ops::Touched> {
    let written = m.written();
    crate::ops::touched(
        written
            .into_iter()
            .chain(by_column(&m.references).iter().map(|r| r.declared_on))
            .chain(m.references.iter().map(|r| r.declared_on)),
    )
}

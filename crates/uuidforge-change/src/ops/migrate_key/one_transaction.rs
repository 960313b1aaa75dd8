//! A key migration in one transaction: every table locked first, then the
//! model's work (`ops::key::Migration::placed`) run in the order of its
//! phases, checked before it commits:
//!
//! 1. the key map (temporary) and the new columns; the new keys;
//! 2. views, foreign keys, what sits on the changed columns and the
//!    primary key out of the way (no index to maintain while every row is
//!    written), the new columns filled (the application's triggers kept
//!    quiet), copies of a uuid key rewritten;
//! 3. the key, the references, the keys, constraints, indexes and foreign
//!    keys over them made again over the new columns, the objects dropped
//!    made again, the columns' comments and privileges, the views; then
//!    nothing but the old values' unique index may be left on an old
//!    column (`pg_depend`), or it all rolls back;
//! 4. checks before commit: every count zero, row counts and every other
//!    column unchanged, every index, constraint and column as before.

use super::{backup, lock_all, summary, touches};
use crate::action::Data;
use crate::ops::key::checks::{self, When};
use crate::ops::key::{Migration, Phase, Schedule, Work};
use crate::ops::{ChangePlan, Check, Run, Statement, Step};
use uuidforge_db::error::DbError;

/// Whether a phase runs in the one transaction: every phase but those of
/// a change in batches alone (the compiler holds this list to the
/// phases).
fn runs(phase: Phase) -> bool {
    use Phase::*;
    match phase {
        MakeMap | AddColumns | Keys | Settings | QuietPublications | IdentityFull
        | CheckImmediately | DropViews | DropForeignKeys | DropDependents | DropKey
        | DropObjects | QuietTriggers | Fill | RewriteCopies | RestoreTriggers | Move
        | MakeObjects | ColumnExtras | MakeViews | IdentityBack | PublishingBack | Guard => true,
        PublishOwnColumns | WriterTriggers | DropWriterTriggers | Build | ProveNotNull
        | ValidateNotNull | PublishAllColumns | Validate | Attach | ValidateAttached | DropMap => {
            false
        }
    }
}

/// The change: the work in its phases' order, the checks.
pub fn change(m: &Migration) -> Result<ChangePlan, DbError> {
    let map = m.map_name(Schedule::OneTransaction.map());
    let mut steps = Vec::new();
    for p in m.placed(Schedule::OneTransaction)? {
        if !runs(p.phase) {
            return Err(DbError::unreadable(
                "plan",
                format!("{:?} work of {} placed in one transaction", p.phase, p.by),
            ));
        }
        match &p.work {
            Work::Action(a) => steps.extend(Step::actions([a])),
            Work::Fill(f) => steps.extend(Step::actions([&f.update()])),
            Work::Keys(k) => steps.push(Step::Data(Data::Keys(k.clone()))),
            Work::Build { .. } => {
                return Err(DbError::unreadable(
                    "plan",
                    "an index built concurrently placed in one transaction",
                ))
            }
        }
    }
    let written: Vec<String> = m.written().iter().map(|r| r.sql_name()).collect();
    Ok(ChangePlan {
        operation: "migrate-key".into(),
        target: m.key.table.typed_name(),
        schema: m.key.table.schema.clone(),
        touches: touches(m),
        summary: summary(m, ""),
        backup: backup(m),
        run: Run::OneTransaction {
            // Writers wait from here on: the rows counted and digested
            // before the steps, and the keys read, are all there will be.
            lock: Some(lock_all(m)),
            steps,
            checks: vec![
                Check::Zero {
                    what: "verify the migration".into(),
                    statement: Statement::sql(checks::verify_sql(m, When::OneTransaction, &map)),
                },
                Check::Unchanged {
                    what: "row counts".into(),
                    statement: Statement::sql(checks::counts_sql(m)),
                },
                Check::Unchanged {
                    what: "other columns".into(),
                    statement: Statement::sql(checks::digest_sql(m)),
                },
                Check::Unchanged {
                    what: "indexes, constraints and columns".into(),
                    statement: Statement::sql(checks::objects_sql(
                        &written,
                        &checks::translated_constraints(m),
                    )),
                },
            ],
        },
        epilogue: Vec::new(),
        measured: super::measured(m),
    })
}

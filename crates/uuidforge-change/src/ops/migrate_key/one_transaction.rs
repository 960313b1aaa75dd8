//! A key migration in one transaction: every table locked first, then the
//! model's work (`ops::key::Migration::placed`) run in the order of its
//! phases, checked before it commits. It already holds every table it
//! changes exclusively, so each is written once, as a fresh load would
//! write it (no dead row left, no dropped column's bytes):
//!
//! 1. the key map (temporary), the function the rewrite reads it
//!    through, the new keys; a column beside the key and each reference
//!    for the old values, added empty;
//! 2. views, foreign keys, what sits on the changed columns, the primary
//!    key and the changed columns' defaults out of the way;
//! 3. each table rewritten by one `ALTER TABLE … ALTER COLUMN … TYPE …
//!    USING …`: the key and its references take their new values in place
//!    (their column position, comments, privileges and NOT NULL kept), the
//!    columns beside them the old, every `USING` reading the row as it
//!    was; the table's other indexes built once after; copies of a uuid key
//!    rewritten;
//! 4. the key, the constraints, indexes and foreign keys over the changed
//!    columns made again, the objects dropped made again, the views; then
//!    nothing but the old values' unique index may be left on an old
//!    column (`pg_depend`), or it all rolls back;
//! 5. checks before commit: every count zero, row counts and every other
//!    column unchanged (one digest per table holds both), every index,
//!    constraint and column as before.

use super::{backup, lock_all, summary, touches};
use crate::action::Data;
use crate::ops::key::checks::{self, MapKeys, ReferencesWritten, When};
use crate::ops::key::{Migration, Phase, Schedule, Work};
use crate::ops::{ChangePlan, Check, Run, Statement, Step};
use uuidforge_db::error::DbError;

/// Whether a phase runs in the one transaction: every phase but those of
/// a change in batches alone (the compiler holds this list to the
/// phases).
fn runs(phase: Phase) -> bool {
    use Phase::*;
    match phase {
        MakeMap | AddColumns | Keys | IndexMap | MapLookup | Settings | QuietPublications
        | IdentityFull | CheckImmediately | DropViews | DropForeignKeys | DropDependents
        | DropKey | DropObjects | DropDefaults | QuietTriggers | Rewrite | RewriteCopies
        | RestoreTriggers | Move | MakeObjects | MakeViews | IdentityBack | PublishingBack
        | Guard | DropMap => true,
        PublishOwnColumns | WriterTriggers | DropWriterTriggers | Fill | Build | ProveNotNull
        | ValidateNotNull | ColumnExtras | PublishAllColumns | Validate | Attach
        | ValidateAttached => false,
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
                    statement: Statement::sql(checks::verify_through(
                        m,
                        When::OneTransaction,
                        &map,
                        MapKeys::Text,
                        ReferencesWritten::ThroughTheKeysMap,
                    )),
                },
                // Each table's digest holds its row count.
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
        // The search's time and the cost, added by the operation.
        measured: Default::default(),
    })
}

//! A key migration in one transaction: the schedule that runs the whole
//! list of actions (`ops::key::KeyActions`) in order, the tables
//! locked first, checked before it commits:
//!
//! 1. the key map (temporary) and the new columns; the new keys;
//! 2. views, foreign keys, what sits on the changed columns and the
//!    primary key out of the way (no index to maintain while every row is
//!    written), the new columns filled (the application's triggers kept
//!    quiet);
//! 3. each move made at once: the key and the references exchanged with
//!    their new columns, the keys, constraints, indexes and foreign keys
//!    made again from their definitions, the columns' comments and
//!    privileges, the views; then nothing but the old values' unique index
//!    may be left on an old column (`pg_depend`), or it all rolls back;
//! 4. checks before commit: every count zero, row counts and every other
//!    column unchanged, every index, constraint and column as before.

use super::{backup, lock_all, summary, touches};
use crate::action::{Action, Data, Transaction};
use crate::ops::key::checks::{self, Phase};
use crate::ops::key::publications::Publication;
use crate::ops::key::{KeyMap, Migration};
use crate::ops::{ChangePlan, Check, Run, Statement, Step};
use uuidforge_db::error::DbError;

/// Memory for the updates' joins and the index builds, for this
/// transaction only (`SET LOCAL`).
const WORK_MEM: &str = "256MB";
const MAINTENANCE_WORK_MEM: &str = "512MB";

/// The change: the list in order, the checks.
pub fn change(m: &Migration) -> Result<ChangePlan, DbError> {
    let a = m.actions(KeyMap::Temporary)?;
    let mut first = vec![a.make_map.clone()];
    first.extend(a.columns.iter().cloned());
    let mut steps = Step::actions(&first);
    steps.push(Step::Data(Data::Keys(a.keys.clone())));
    let mut rest = vec![
        Action::Transaction(Transaction::SetLocal {
            setting: "work_mem".into(),
            value: WORK_MEM.into(),
        }),
        Action::Transaction(Transaction::SetLocal {
            setting: "maintenance_work_mem".into(),
            value: MAINTENANCE_WORK_MEM.into(),
        }),
    ];
    // Subscribers are not to get the change's own writes (new columns
    // they lack): its publications publish nothing until it ends.
    let (quiet_publishing, publishing_back) = Publication::quieted(&m.publications);
    rest.extend(quiet_publishing);
    rest.extend(a.identity_full.iter().cloned());
    rest.extend(a.release.iter().cloned());
    // The application's triggers are not to see the migration's own
    // writes (a `last_update = now()` would stamp every row).
    let (quiet, restore) = Action::quiet_triggers(&a.triggers);
    rest.extend(quiet);
    rest.extend(a.fills.iter().map(|f| f.update()));
    rest.extend(crate::ops::key::copies::rewrite(m, &m.copies, &a.map));
    rest.extend(restore);
    rest.extend(a.moves.iter().flat_map(|m| m.at_once.iter().cloned()));
    rest.extend(a.extras.iter().cloned());
    rest.extend(a.views.iter().cloned());
    rest.extend(a.identity_back.iter().cloned());
    rest.extend(publishing_back);
    rest.push(a.guard.clone());
    steps.extend(Step::actions(&rest));
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
                    statement: Statement::sql(checks::verify_sql(m, Phase::OneTransaction, &a.map)),
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
        resume: None,
        measured: super::measured(m),
    })
}

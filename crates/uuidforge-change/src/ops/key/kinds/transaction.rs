//! What the change's transaction sets and checks: memory for its joins
//! and index builds (one transaction), deferrable constraints checked as
//! rows change, and last the rule that nothing but the old values' unique
//! index is left on an old column.

use super::{Kind, Migration, Placed, Schedule};
use crate::action::{Action, Timing, Transaction as Tx};
use crate::ops::key::by_column;
use crate::ops::key::naming::{old_column, piece};
use crate::ops::key::phase::Phase;
use uuidforge_db::error::DbError;
use uuidforge_ident::qualified;

/// Memory for the updates' joins and the index builds: for the one
/// transaction only (`SET LOCAL`), or for the session of a change in
/// batches ([`memory`]). With the server's defaults (4 MB, 64 MB) a join
/// through a key map of a million rows spills to disk in batches, and so
/// does a sort of a few million references.
const WORK_MEM: &str = "256MB";
const MAINTENANCE_WORK_MEM: &str = "512MB";

/// The memory settings of a change in batches' session.
pub(crate) fn memory() -> Vec<crate::ops::SessionSetting> {
    [
        ("work_mem", WORK_MEM),
        ("maintenance_work_mem", MAINTENANCE_WORK_MEM),
    ]
    .into_iter()
    .map(|(name, value)| crate::ops::SessionSetting {
        name: name.into(),
        value: value.into(),
    })
    .collect()
}

pub(super) struct Transaction;

impl Kind for Transaction {
    fn name(&self) -> &'static str {
        "the change's transaction"
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut out = Vec::new();
        if !schedule.in_batches() {
            let set = |setting: &str, value: &str| {
                Action::Transaction(Tx::SetLocal {
                    setting: setting.into(),
                    value: value.into(),
                })
            };
            out.extend(Placed::actions(
                Phase::Settings,
                [
                    set("work_mem", WORK_MEM),
                    set("maintenance_work_mem", MAINTENANCE_WORK_MEM),
                ],
            ));
        }
        // Deferred foreign key checks would leave events pending, and a
        // table with pending events cannot be altered.
        out.push(Placed::action(
            Phase::CheckImmediately,
            Action::Transaction(Tx::SetConstraints(Timing::Immediate)),
        ));
        out.push(Placed::action(Phase::Guard, old_columns_guard(m)));
        Ok(out)
    }
}

/// The check that only the old values' unique index (with its pieces on
/// partitions, however named) depends on the old key column and nothing
/// on an old reference column.
fn old_columns_guard(m: &Migration) -> Action {
    let mut columns = vec![(m.key.table.sql_name(), m.old_name.clone())];
    for r in by_column(&m.references) {
        columns.push((r.table.sql_name(), old_column(&r.column.name)));
    }
    let index = m.old_index_name();
    let mut except = vec![qualified(&m.key.table.schema, &index)];
    except.extend(
        m.leaves_of(m.key.table)
            .iter()
            .map(|p| qualified(&p.schema, &piece(&index, p.oid))),
    );
    Action::Transaction(Tx::NothingDependsOn { columns, except })
}

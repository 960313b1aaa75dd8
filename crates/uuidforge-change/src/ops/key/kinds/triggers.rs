//! Triggers: one whose column list or `WHEN` names a changed column is
//! dropped and made again from its definition over the new column, in the
//! state it fired in, its `WHEN` typed over the new columns first (its row
//! named `new` and `old`; old keys in it translated) and refused by name
//! where it does not hold, as is a constraint's trigger; the application's
//! other triggers of the tables written are kept from firing on the
//! migration's own writes (a `last_update = now()` would stamp every row),
//! and put back as they were.

use super::{
    dropped_and_made, from_definition, Kind, Migration, Placed, Schedule, SoFar, Staying, Target,
};
use crate::action::{Action, Object, UserTrigger};
use crate::ops::key::dependents::{refused_probe, unquoted, Other, OtherKind};
use crate::ops::key::model::probe_over_uuid;
use crate::ops::key::phase::Phase;
use crate::ops::{Read, Reading};
use uuidforge_db::error::DbError;
use uuidforge_ident::{qualified, quote_ident};

pub(crate) use crate::ops::reads::USER_TRIGGERS as APPLICATION_TRIGGERS;

pub(super) struct Triggers;

/// A trigger's `WHEN` condition as its definition writes it (between
/// `WHEN (` and `) EXECUTE`).
fn when_condition(o: &Other) -> Option<&str> {
    let definition = o.definition.as_deref()?;
    let start = definition.find(" WHEN (")? + " WHEN (".len();
    let end = definition.rfind(") EXECUTE ")?;
    definition.get(start..end)
}

/// A trigger over a changed column, whether it moves, and the server's
/// words where its `WHEN` does not hold over uuid.
type TriggerFound<'m> = (&'m Other, bool, Option<String>);

/// The triggers over a changed column, with whether each moves (it
/// belongs to no constraint, and its `WHEN` holds over uuid) and the
/// server's words where it does not hold.
fn triggers<'m>(m: &'m Migration) -> Result<Vec<TriggerFound<'m>>, DbError> {
    let mut out = Vec::new();
    for o in &m.dependents.others {
        let OtherKind::Trigger { own, .. } = &o.of else {
            continue;
        };
        let refused = refused_probe(&m.answers, "trigger", o.oid)?;
        out.push((o, *own && refused.is_none(), refused));
    }
    Ok(out)
}

impl Kind for Triggers {
    fn name(&self) -> &'static str {
        "triggers"
    }

    fn reads(&self, target: &Target, so_far: &SoFar) -> Result<Vec<Read>, DbError> {
        let written: Vec<u32> = target.written().iter().map(|r| r.oid).collect();
        let mut reads = vec![
            APPLICATION_TRIGGERS.read(uuidforge_db::introspect::user_triggers_query(&written))
        ];
        if let Some(found) = so_far.dependents {
            for o in &found.others {
                if let (
                    OtherKind::Trigger {
                        trigger_when: Some((table, _)),
                        ..
                    },
                    Some(condition),
                ) = (&o.of, when_condition(o))
                {
                    reads.extend(probe_over_uuid(
                        target,
                        ("trigger", o.oid),
                        (*table, &o.description),
                        vec![condition],
                        &["new", "old"],
                    ));
                }
            }
        }
        Ok(reads)
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        Ok(triggers(m)?
            .into_iter()
            .filter(|(_, moves, _)| !moves)
            .map(|(o, _, refused)| Staying {
                named: o.named(),
                why: refused.map(|message| format!("over uuid the server refuses it: {message}")),
                by_hand: "drop the trigger before the migration and create it again after, its WHEN comparing the new column with a value of the new type",
                ways_out: Vec::new(),
            })
            .collect())
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut drop = Vec::new();
        let mut make = Vec::new();
        for (o, _, _) in triggers(m)?.into_iter().filter(|(_, moves, _)| *moves) {
            let (Some((name, table)), Some(made)) = (o.name_on(), from_definition(o)) else {
                continue;
            };
            drop.push(Action::Object(Object::DropTrigger {
                name: name.to_string(),
                table: table.to_string(),
            }));
            make.push(made);
            let enabled = match &o.of {
                OtherKind::Trigger { enabled, .. } => enabled.as_deref(),
                _ => None,
            };
            let state = match enabled {
                Some("D") => Some("DISABLE"),
                Some("R") => Some("ENABLE REPLICA"),
                Some("A") => Some("ENABLE ALWAYS"),
                _ => None,
            };
            if let Some(state) = state {
                make.push(Action::Object(Object::SetTrigger {
                    table: table.to_string(),
                    trigger: unquoted(name),
                    state: state.to_string(),
                }));
            }
        }
        let mut out = dropped_and_made(drop, make);
        if !schedule.in_batches() {
            // In batches each range of pages keeps its table's quiet. In
            // one transaction a rewrite fires no trigger: only the tables
            // whose copies of the key are updated keep theirs quiet.
            let updated: Vec<String> = m
                .target
                .copies
                .iter()
                .filter_map(|(oid, _)| m.snapshot.relation(*oid))
                .map(|r| r.sql_name())
                .collect();
            let quieted: Vec<UserTrigger> = quieted_triggers(m)
                .into_iter()
                .filter(|t| updated.contains(&qualified(&t.schema, &t.table_name)))
                .collect();
            let (quiet, restore) = Action::quiet_triggers(&quieted);
            out.extend(Placed::actions(Phase::QuietTriggers, quiet));
            out.extend(Placed::actions(Phase::RestoreTriggers, restore));
        }
        Ok(out)
    }
}

/// The application's triggers to keep quiet during the fill: all but
/// those dropped before it to be made again over the new column.
pub(crate) fn quieted_triggers(m: &Migration) -> Vec<UserTrigger> {
    let remade: Vec<&str> = triggers(m)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, moves, _)| *moves)
        .filter_map(|(o, _, _)| o.drop_target.as_deref())
        .collect();
    m.triggers
        .iter()
        .filter(|t| {
            let target = format!(
                "{} ON {}",
                quote_ident(&t.name),
                qualified(&t.schema, &t.table_name)
            );
            !remade.contains(&target.as_str())
        })
        .cloned()
        .collect()
}

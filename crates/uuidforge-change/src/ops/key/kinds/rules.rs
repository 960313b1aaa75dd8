//! Rules over a changed column: dropped and made again from their
//! definitions over the new column (old keys in them translated), in one
//! transaction; refused in batches, where a conditional `INSTEAD` rule
//! would rewrite the fill's updates (it stays until the swap).

use super::{dropped_and_made, from_definition, others, Kind, Migration, Placed, Schedule};
use crate::action::{Action, Object};
use crate::ops::key::dependents::OtherKind;
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};

pub(super) struct Rules;

impl Kind for Rules {
    fn name(&self) -> &'static str {
        "rules"
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let rules = others(m, |k| matches!(k, OtherKind::Rule { .. }).then_some(()));
        if let (true, Some((r, _))) = (schedule.in_batches(), rules.first()) {
            return Err(DbError::refusal(
                "table",
                Refusal::new(
                    Reason::NotInBatches,
                    format!(
                        "{} rewrites the updates that fill rows in batches (it stays until the swap); one transaction makes it again after",
                        r.description
                    ),
                )
                .way_out(WayOut::OneTransaction),
            ));
        }
        let mut drop = Vec::new();
        let mut make = Vec::new();
        for (o, _) in rules {
            if let (Some((name, table)), Some(made)) = (o.name_on(), from_definition(o)) {
                drop.push(Action::Object(Object::DropRule {
                    name: name.to_string(),
                    table: table.to_string(),
                }));
                make.push(made);
            }
        }
        Ok(dropped_and_made(drop, make))
    }
}

//! Extended statistics on a changed column: on columns only, dropped and
//! made again from their definition over the new column; on an expression
//! (which might not hold over uuid) refused by name.

use super::{
    dropped_and_made, from_definition, others, Kind, Migration, Placed, Schedule, Staying,
};
use crate::action::{Action, Object};
use crate::ops::key::dependents::OtherKind;
use uuidforge_db::error::DbError;

pub(super) struct Statistics;

impl Kind for Statistics {
    fn name(&self) -> &'static str {
        "statistics"
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        Ok(statistics(m)
            .into_iter()
            .filter(|(_, on_columns)| !on_columns)
            .map(|(o, _)| Staying {
                named: o.named(),
                why: None,
                by_hand:
                    "drop the statistics before the migration and CREATE STATISTICS again after",
                ways_out: Vec::new(),
            })
            .collect())
    }

    fn place(&self, m: &Migration, _: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut drop = Vec::new();
        let mut make = Vec::new();
        for (o, _) in statistics(m)
            .into_iter()
            .filter(|(_, on_columns)| *on_columns)
        {
            if let (Some(name), Some(made)) = (&o.drop_target, from_definition(o)) {
                drop.push(Action::Object(Object::DropStatistics {
                    name: name.clone(),
                }));
                make.push(made);
            }
        }
        Ok(dropped_and_made(drop, make))
    }
}

fn statistics<'m>(m: &'m Migration) -> Vec<(&'m crate::ops::key::dependents::Other, bool)> {
    others(m, |k| match k {
        OtherKind::Statistics { on_columns } => Some(*on_columns),
        _ => None,
    })
}

//! A publication's column list over a changed column: the table taken out
//! of the publication and added back with its list, which then names the
//! new column; a row filter (which might not hold over uuid) refused by
//! name.

use super::{
    dropped_and_made, from_definition, others, Kind, Migration, Placed, Schedule, Staying,
};
use crate::action::{Action, Object};
use crate::ops::key::dependents::{Other, OtherKind};
use uuidforge_db::error::DbError;

pub(super) struct PublicationColumnLists;

impl Kind for PublicationColumnLists {
    fn name(&self) -> &'static str {
        "publications' column lists"
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        Ok(lists(m)
            .into_iter()
            .filter(|(_, unfiltered)| !unfiltered)
            .map(|(o, _)| Staying {
                named: o.named(),
                why: None,
                by_hand: "its row filter might not hold over uuid: take the table out of the publication (ALTER PUBLICATION … DROP TABLE) before the migration and add it back after with its filter over the new column",
                ways_out: Vec::new(),
            })
            .collect())
    }

    fn place(&self, m: &Migration, _: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut drop = Vec::new();
        let mut make = Vec::new();
        for (o, _) in lists(m).into_iter().filter(|(_, unfiltered)| *unfiltered) {
            if let (Some((publication, table)), Some(made)) = (o.name_on(), from_definition(o)) {
                drop.push(Action::Object(Object::DropPublicationTable {
                    publication: publication.to_string(),
                    table: table.to_string(),
                }));
                make.push(made);
            }
        }
        Ok(dropped_and_made(drop, make))
    }
}

fn lists<'m>(m: &'m Migration) -> Vec<(&'m Other, bool)> {
    others(m, |k| match k {
        OtherKind::Publication { unfiltered } => Some(*unfiltered),
        _ => None,
    })
}

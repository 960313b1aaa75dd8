//! Functions over the changed columns: those that name them in their
//! bodies are listed for review (the plan names each); one whose
//! SQL-standard body (`BEGIN ATOMIC`) PostgreSQL ties to a changed column
//! by number is refused by name. Any other object tied to a changed column
//! that no kind knows is refused by name too: none is left on an old
//! column unseen.

use super::{others, Kind, Migration, Placed, Schedule, SoFar, Staying, Target};
use crate::ops::key::dependents::OtherKind;
use crate::ops::{Named, Read, Reading};
use uuidforge_db::error::DbError;
use uuidforge_db::introspect::Mention;

/// The read of the functions and procedures whose bodies name a changed
/// column with its table.
pub(crate) const FUNCTIONS: Named<Vec<Mention>> =
    Named::new("functions", "list the functions using the columns");

pub(super) struct Functions;

impl Kind for Functions {
    fn name(&self) -> &'static str {
        "functions"
    }

    fn reads(&self, target: &Target, _: &SoFar) -> Result<Vec<Read>, DbError> {
        let (columns, tables): (Vec<String>, Vec<String>) = names_used(target).into_iter().unzip();
        Ok(vec![FUNCTIONS.read(
            uuidforge_db::introspect::functions_using_query(
                &columns,
                &tables,
                target.key.column.type_oid,
            ),
        )])
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        Ok(others(m, |k| matches!(k, OtherKind::Function {}).then_some(()))
            .into_iter()
            .map(|(o, _)| Staying {
                named: o.named(),
                why: None,
                by_hand: "its SQL-standard body (BEGIN ATOMIC) follows the column by number: drop the function before the migration and create it again after over the new column (a parameter or result of the old key's type becomes uuid)",
                ways_out: Vec::new(),
            })
            .collect())
    }

    fn place(&self, _: &Migration, _: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        Ok(Vec::new())
    }
}

pub(super) struct OtherObjects;

impl Kind for OtherObjects {
    fn name(&self) -> &'static str {
        "other objects"
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        Ok(
            others(m, |k| matches!(k, OtherKind::Object {}).then_some(()))
                .into_iter()
                .map(|(o, _)| Staying {
                    named: o.named(),
                    why: None,
                    by_hand: "drop it before the migration and make it again after",
                    ways_out: Vec::new(),
                })
                .collect(),
        )
    }

    fn place(&self, _: &Migration, _: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        Ok(Vec::new())
    }
}

/// The columns the migration changes (the key, the references), each with
/// the name of a table holding it (a partition declaring a reference
/// included), as pairs: what a function using one would name together —
/// `id` alone would tie every function naming any table's `id`.
fn names_used(target: &Target) -> Vec<(String, String)> {
    let mut pairs = vec![(
        target.key.column.name.clone(),
        target.key.table.name.clone(),
    )];
    for r in &target.references {
        pairs.push((r.column.name.clone(), r.table.name.clone()));
        if r.on_partition() {
            pairs.push((r.column.name.clone(), r.declared_on.name.clone()));
        }
    }
    pairs.sort();
    pairs.dedup();
    pairs
}

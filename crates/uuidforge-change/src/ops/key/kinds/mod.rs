//! The kinds of objects a key migration moves, each one module: what it
//! reads beside the catalog ([`Kind::reads`], typed reads), what refuses
//! the migration before anything runs whatever the schedule
//! ([`Kind::check`]: an error, or objects that would stay on an old column,
//! named together with every other kind's), and its work in a schedule
//! ([`Kind::place`]: each piece in its [`Phase`], or refused there by name
//! with the way out). The migration runs [`KINDS`], in this order; a new
//! kind of object is a module here and a line in that list.
//!
//! The order of the list is the order the kinds' work takes within a
//! phase: the key before its references, keys and unique constraints before
//! the foreign keys that may reference them; the objects dropped to be made
//! again in the order of their names (as PostgreSQL describes them).

pub(crate) mod binary_copies;
pub(crate) mod column_extras;
pub(crate) mod columns;
pub(crate) mod constraints;
pub(crate) mod copies;
pub(crate) mod foreign_keys;
pub(crate) mod generated;
pub(crate) mod indexes;
pub(crate) mod key;
pub(crate) mod key_map;
pub(crate) mod named;
pub(crate) mod objects;
pub(crate) mod partitions;
pub(crate) mod policies;
pub(crate) mod publication_lists;
pub(crate) mod publications;
pub(crate) mod references;
pub(crate) mod rules;
pub(crate) mod statistics;
pub(crate) mod transaction;
pub(crate) mod triggers;
pub(crate) mod views;
pub(crate) mod writers;

pub(crate) use copies::Copies;
pub(crate) use triggers::quieted_triggers;

use super::dependents::{Dependents, Other, OtherKind};
use super::model::Migration;
use super::phase::{Phase, Placed, Schedule};
use super::target::Target;
use crate::action::Action;
use crate::ops::{Line, Read};
use uuidforge_db::error::DbError;

/// An object that would stay on an old column, named in the refusal of
/// every such object at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Staying {
    /// The object and its definition.
    pub(crate) named: String,
    /// Why, when a probe or a rule said more than its kind.
    pub(crate) why: Option<String>,
    /// What to do before the migration and after it, in words.
    pub(crate) by_hand: &'static str,
    /// The ways out a parameter takes.
    pub(crate) ways_out: Vec<uuidforge_db::error::WayOut>,
}

/// What the planning pass has read when the kinds name their reads.
pub(crate) struct SoFar<'a> {
    /// The objects over the changed columns as their probes type them
    /// (old keys translated), once the first pass read them.
    pub(crate) dependents: Option<&'a Dependents>,
}

/// A kind of object a key migration reads, decides on and places.
pub(crate) trait Kind: Sync {
    /// What it is, for tests and messages (`foreign keys`).
    fn name(&self) -> &'static str;

    /// What it reads beside the catalog, given what was read so far.
    fn reads(&self, _target: &Target, _so_far: &SoFar) -> Result<Vec<Read>, DbError> {
        Ok(Vec::new())
    }

    /// What refuses the migration before anything runs, whatever the
    /// schedule: an error, or the objects of this kind that would stay on
    /// an old column.
    fn check(&self, _m: &Migration) -> Result<Vec<Staying>, DbError> {
        Ok(Vec::new())
    }

    /// Its lines in the plan's summary, after the copies' (what it found
    /// and does, in words).
    fn lines(&self, _m: &Migration) -> Vec<Line> {
        Vec::new()
    }

    /// Counts that must all be zero once the migration ran in one
    /// transaction, against the key map `map` (`'what', (SELECT count(*)
    /// …)` pairs of a JSON object).
    fn verify(&self, _m: &Migration, _map: &str) -> Vec<String> {
        Vec::new()
    }

    /// Its work in `schedule` (the key map named `map`), each piece in its
    /// phase; refused by name where it cannot run in that schedule.
    fn place(&self, m: &Migration, schedule: Schedule, map: &str) -> Result<Vec<Placed>, DbError>;
}

/// The objects of `m` over the changed columns that `of` picks, with what
/// it picked of each.
pub(crate) fn others<'m, T>(
    m: &'m Migration,
    of: impl Fn(&'m OtherKind) -> Option<T>,
) -> Vec<(&'m Other, T)> {
    m.dependents
        .others
        .iter()
        .filter_map(|o| Some((o, of(&o.of)?)))
        .collect()
}

/// An object dropped before the fill (`drop`) and made again after
/// (`make`), as placed.
fn dropped_and_made(drop: Vec<Action>, make: Vec<Action>) -> Vec<Placed> {
    let mut out = Placed::actions(Phase::DropObjects, drop);
    out.extend(Placed::actions(Phase::MakeObjects, make));
    out
}

/// `o` made again from the definition the server wrote of it.
fn from_definition(o: &Other) -> Option<Action> {
    Some(Action::Object(
        crate::action::Object::CreateFromDefinition {
            definition: o.definition.clone()?,
        },
    ))
}

/// Every kind, in the order their work takes within a phase.
pub(crate) const KINDS: &[&dyn Kind] = &[
    &partitions::Partitions,
    &transaction::Transaction,
    &key_map::KeyMap,
    &columns::NewColumns,
    &writers::Writers,
    &publications::Publications,
    &views::Views,
    &key::TheKey,
    &references::References,
    &constraints::Constraints,
    &indexes::Indexes,
    &foreign_keys::ForeignKeys,
    &generated::GeneratedColumns,
    &policies::Policies,
    &publication_lists::PublicationColumnLists,
    &rules::Rules,
    &statistics::Statistics,
    &triggers::Triggers,
    &objects::Functions,
    &objects::OtherObjects,
    &column_extras::ColumnExtras,
    &copies::CopiesOfTheKey,
    &binary_copies::BinaryCopies,
    &named::NamedForTheKey,
];

#[cfg(test)]
mod tests {
    use super::KINDS;

    #[test]
    fn the_registry_names_each_kind_once() {
        let mut names: Vec<&str> = KINDS.iter().map(|k| k.name()).collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "{names:?}");
    }
}

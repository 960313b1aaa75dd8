//! A key migration with everything its planning pass read ([`Migration`]):
//! the target, and what the server answered, typed, with the old keys
//! written in definitions marked where their new keys go. Made by reading
//! the answers and running every kind's check; nothing in it changes after,
//! and each schedule places the kinds' work from it ([`Migration::placed`]).

use super::dependents::{self, Dependents, Leaf};
use super::kinds::{Copies, SoFar, Staying, KINDS};
use super::literals::{self, ReferenceDefault};
use super::phase::{Placed, Schedule};
use super::substitute::{index_over, Remade, Remake};
use super::target::Target;
use super::values::{family, Becomes, Family};
use super::{by_column, new_column, piece, KeyMap, Reference};
use crate::action::{Action, Build, Index};
use crate::ops::{Answers, NamedText, Read, Reading};
use uuidforge_db::catalog::{RelKind, Relation};
use uuidforge_db::error::{DbError, Reason, Refusal};
use uuidforge_db::generators::Generator;
use uuidforge_db::introspect::{Mention, Partition, UserTrigger, ViewDefinition};
use uuidforge_ident::qualified;

/// The read of every index, constraint and column of the tables written
/// as they are before the change (JSON text of
/// [`super::checks::objects_sql`]), which the last check compares.
pub(crate) const OBJECTS: NamedText = NamedText::new(
    "objects",
    "read the indexes, constraints and columns of the tables written",
);

/// A key migration with everything its planning pass read.
pub struct Migration<'a> {
    /// The target.
    pub target: Target<'a>,
    /// What the new key's default calls (none with `--no-default`), with
    /// what the extension said of its order.
    pub generator: Option<Generator>,
    /// Views over the changed columns (and over those), made again; old
    /// keys in them marked.
    pub views: Vec<ViewDefinition>,
    /// The partitions of the partitioned tables written.
    pub partitions: Vec<Partition>,
    /// User triggers of the tables written, kept from firing on the
    /// migration's own writes.
    pub triggers: Vec<UserTrigger>,
    /// Functions and procedures using the changed columns, to review.
    pub functions: Vec<Mention>,
    /// What sits on the changed columns and moves with them (the table's
    /// primary key left out: the migration moves it itself); old keys in
    /// their definitions marked.
    pub dependents: Dependents,
    /// Every index, constraint and column of the tables written as read
    /// when planning (JSON text of [`super::checks::objects_sql`]).
    pub objects: String,
    /// The tables and partitions written that a publication publishes.
    pub published: Vec<super::kinds::publications::Published>,
    /// The publications publishing them.
    pub publications: Vec<super::kinds::publications::Publication>,
    /// The plan's lines on old keys written in definitions, each made
    /// again with its new key.
    pub old_keys: Vec<String>,
    /// Copies of a uuid key in other columns, as the plan found them.
    pub copies: Copies,
    /// The references' defaults, given to their new columns.
    pub defaults: Vec<ReferenceDefault>,
    /// What the planning pass read, for the kinds' probes.
    pub answers: Answers,
}

/// What the key's values are, by their base type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyBase {
    /// `smallint`, `integer`, `bigint`, or a domain over one.
    Integer,
    /// `uuid`, or a domain over it.
    Uuid,
    /// Text, or anything else.
    Other,
}

impl<'a> std::ops::Deref for Migration<'a> {
    type Target = Target<'a>;
    fn deref(&self) -> &Target<'a> {
        &self.target
    }
}

/// The reads of a migration's planning pass, given what it read so far:
/// the objects over the changed columns and the tables' own, then every
/// kind's (probes of the definitions that would move once those are
/// read).
pub fn reads(target: &Target, answers: &Answers) -> Result<Vec<Read>, DbError> {
    let names: Vec<String> = target.written().iter().map(|r| r.sql_name()).collect();
    let mut reads = vec![
        dependents::read(&target.watched()),
        OBJECTS.read(uuidforge_db::plan::Query::new(super::checks::objects_sql(
            &names,
            &[],
        ))),
    ];
    reads.extend(super::cost::free_space_reads(answers)?);
    let dependents = probed_dependents(target, answers)?;
    let so_far = SoFar {
        dependents: dependents.as_ref(),
    };
    for kind in KINDS {
        reads.extend(kind.reads(target, &so_far)?);
    }
    Ok(reads)
}

impl<'a> Migration<'a> {
    /// The migration of `target`, from the planning pass's answers;
    /// refused, naming what and the way out, when anything over the changed
    /// columns cannot move with them whatever the schedule.
    pub fn new(target: Target<'a>, answers: &Answers) -> Result<Migration<'a>, DbError> {
        let read: Dependents = answers.required(&dependents::DEPENDENTS)?;
        let views: Vec<ViewDefinition> = answers.required(&super::kinds::views::VIEWS)?;
        let translated = literals::translate_all(&target, &views, &read)?;
        let mut dependents = translated.dependents;
        // The table's own primary key moves with the key itself.
        dependents
            .constraints
            .retain(|c| !(c.table == target.key.table.oid && c.name == target.key.pk.name));
        let (defaults, default_lines) = literals::reference_defaults(&target, &dependents)?;
        let mut old_keys = translated.lines;
        old_keys.extend(default_lines);
        let m = Migration {
            generator: super::kinds::key::generator(&target, answers)?,
            views: translated.views,
            partitions: answers.required(&super::kinds::partitions::PARTITIONS)?,
            triggers: answers.required(&super::kinds::triggers::APPLICATION_TRIGGERS)?,
            functions: answers.required(&super::kinds::objects::FUNCTIONS)?,
            dependents,
            objects: answers.required(&OBJECTS)?,
            published: answers.required(&super::kinds::publications::PUBLISHED)?,
            publications: answers.required(&super::kinds::publications::PUBLICATIONS)?,
            old_keys,
            copies: super::kinds::copies::found(&target, answers)?,
            defaults,
            answers: answers.clone(),
            target,
        };
        let mut staying = Vec::new();
        for kind in KINDS {
            staying.extend(kind.check(&m)?);
        }
        if !staying.is_empty() {
            return Err(refuse_staying(staying));
        }
        Ok(m)
    }

    /// Every kind's work in `schedule`, each piece in its phase, in the
    /// order the phases keep (and, within one, the kinds'); refused by
    /// name where a kind cannot run in that schedule.
    pub fn placed(&self, schedule: Schedule) -> Result<Vec<Placed>, DbError> {
        let map = self.map_name(schedule.map());
        let mut placed = Vec::new();
        for kind in KINDS {
            placed.extend(
                kind.place(self, schedule, &map)?
                    .into_iter()
                    .map(|p| Placed {
                        by: kind.name(),
                        ..p
                    }),
            );
        }
        // Definitions naming old keys take the new ones from the map.
        for p in &mut placed {
            if let super::phase::Work::Action(a) = &mut p.work {
                *a = crate::action::old_keys::with_new_keys(a.clone(), &map);
            }
        }
        placed.sort_by_key(|p| p.phase);
        Ok(placed)
    }

    /// The key map's name: temporary, or kept in the key's schema.
    pub fn map_name(&self, map: KeyMap) -> String {
        match map {
            KeyMap::Temporary => super::naming::TEMPORARY_MAP.to_string(),
            KeyMap::Kept => qualified(
                &self.key.table.schema,
                &super::naming::kept_map(self.key.table.oid),
            ),
        }
    }

    /// The partitions of partitioned table `oid`, as read.
    pub fn leaves(&self, oid: u32) -> Vec<&Partition> {
        self.partitions.iter().filter(|p| p.parent == oid).collect()
    }

    /// The partitions of `table` when it is partitioned.
    pub fn leaves_of(&self, table: &Relation) -> Vec<&Partition> {
        if table.kind == RelKind::PartitionedTable {
            self.leaves(table.oid)
        } else {
            Vec::new()
        }
    }

    /// The tables a statement on `r` reaches one by one: its partitions,
    /// or itself, as (quoted name, display name).
    pub fn pieces(&self, r: &Relation) -> Vec<(String, String)> {
        if r.kind == RelKind::PartitionedTable {
            self.leaves(r.oid)
                .iter()
                .map(|p| (p.sql_name(), format!("{}.{}", p.schema, p.name)))
                .collect()
        } else {
            vec![(r.sql_name(), r.display_name())]
        }
    }

    /// The type of reference `r`'s new column.
    pub fn new_type(&self, r: &Reference) -> String {
        match self.becomes(r) {
            Becomes::Uuid => "uuid".into(),
            Becomes::Text => r.column.type_name.clone(),
        }
    }

    /// The text `expr` as a value of the key's type where it reads as one,
    /// else NULL (never an error: an application's text may hold anything),
    /// so that `key = …` uses the key's index.
    pub fn key_of_text(&self, expr: &str) -> String {
        match family(self.snapshot, self.key.column) {
            Some(Family::Number) => format!(
                "CASE WHEN {expr} ~ '^\\s*[-+]?[0-9]{{1,18}}\\s*$' THEN btrim({expr})::int8 END"
            ),
            Some(Family::Uuid) => format!(
                "CASE WHEN {expr} ~ '^\\s*\\{{?[0-9A-Fa-f]{{8}}-?[0-9A-Fa-f]{{4}}-?[0-9A-Fa-f]{{4}}-?[0-9A-Fa-f]{{4}}-?[0-9A-Fa-f]{{12}}\\}}?\\s*$' THEN btrim({expr})::uuid END"
            ),
            _ => expr.to_string(),
        }
    }

    /// What the key's values are, by their base type.
    pub fn key_base_type(&self) -> KeyBase {
        let name = self
            .snapshot
            .base_type(self.key.column.type_oid)
            .map_or(self.key.column.type_name.as_str(), |t| t.name.as_str());
        match name {
            "int2" | "int4" | "int8" | "smallint" | "integer" | "bigint" => KeyBase::Integer,
            "uuid" => KeyBase::Uuid,
            _ => KeyBase::Other,
        }
    }

    /// The unique index kept on the old values.
    pub fn old_index_name(&self) -> String {
        super::naming::old_key_index(&self.key.table.name, &self.old_name)
    }

    /// `definition` made again as `remake` over the new columns of
    /// `table`.
    pub fn over_new_columns(
        &self,
        definition: &str,
        table: u32,
        remake: Remake,
    ) -> Result<Remade, DbError> {
        let watched = self.watched();
        let renames: Vec<(String, String)> = dependents::changed_in(self.snapshot, table, &watched)
            .into_iter()
            .filter_map(|n| self.snapshot.relation(table)?.column(n))
            .map(|c| (c.name.clone(), new_column(&c.name)))
            .collect();
        let pairs: Vec<(&str, &str)> = renames
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        index_over(definition, &pairs, remake).ok_or_else(|| {
            DbError::refusal(
                "batch-size",
                Refusal::new(
                    Reason::NotInBatches,
                    format!("the index definition '{definition}' is not one uuidforge reads"),
                )
                .way_out(uuidforge_db::error::WayOut::OneTransaction),
            )
        })
    }

    /// The index of `definition` on `table` over its new columns, built
    /// concurrently before the swap as `name`: on each partition of a
    /// partitioned table.
    pub fn build_from_definition(
        &self,
        what: &str,
        table: &Relation,
        definition: &str,
        name: &str,
    ) -> Result<Vec<(String, Action)>, DbError> {
        let leaves = self.leaves_of(table);
        let on: Vec<(String, String, Option<String>)> = if leaves.is_empty() {
            vec![(table.schema.clone(), name.to_string(), None)]
        } else {
            leaves
                .iter()
                .map(|p| (p.schema.clone(), piece(name, p.oid), Some(p.sql_name())))
                .collect()
        };
        on.into_iter()
            .map(|(schema, index, on)| {
                let Remade { unique, rest } =
                    self.over_new_columns(definition, table.oid, Remake { on: on.as_deref() })?;
                Ok((
                    what.to_string(),
                    Action::Index(Index::Concurrently {
                        index: qualified(&schema, &index),
                        build: Build::Definition {
                            name: index,
                            unique,
                            rest,
                        },
                    }),
                ))
            })
            .collect()
    }

    /// The pieces of the partitioned index or constraint `parent`
    /// (qualified) given back the names `leaves` had: made again on the
    /// partitioned table, PostgreSQL names them itself.
    pub fn pieces_named(&self, parent: &str, leaves: &[Leaf]) -> Vec<Action> {
        leaves
            .iter()
            .filter_map(|leaf| {
                let partition = self.snapshot.relation(leaf.partition)?;
                Some(Action::Index(Index::NamePiece {
                    parent: parent.to_string(),
                    partition: partition.sql_name(),
                    name: leaf.name.clone(),
                }))
            })
            .collect()
    }

    /// The written tables with their references, the key's table first:
    /// what writers' triggers and new columns are made per table.
    pub fn tables_with_references(&self) -> Vec<(&'a Relation, Vec<&Reference<'a>>)> {
        let mut tables: Vec<(&Relation, Vec<&Reference>)> = vec![(self.key.table, Vec::new())];
        for r in by_column(&self.references) {
            match tables.iter_mut().find(|(t, _)| t.oid == r.table.oid) {
                Some((_, columns)) => columns.push(r),
                None => tables.push((r.table, vec![r])),
            }
        }
        tables
    }
}

/// The name of a piece on partition `partition` among `named`, else
/// PostgreSQL's way from `name`.
pub fn leaf_name(named: &[Leaf], partition: u32, name: &str) -> String {
    named
        .iter()
        .find(|l| l.partition == partition)
        .map_or_else(|| piece(name, partition), |l| l.name.clone())
}

/// The objects tied to a changed column that cannot move with it, named
/// together with what each says and the way out: refused before anything
/// runs (none is left on an old column unseen).
fn refuse_staying(mut staying: Vec<Staying>) -> DbError {
    staying.sort_by(|a, b| a.named.cmp(&b.named));
    let named: Vec<String> = staying
        .iter()
        .map(|o| {
            let why = o
                .why
                .as_ref()
                .map_or_else(String::new, |w| format!(" {w};"));
            format!("{}:{why} {}", o.named, o.by_hand)
        })
        .collect();
    let mut refusal = Refusal::new(
        Reason::StaysOnOldColumn,
        format!(
            "{} on a column the migration changes would stay on the old column: {}",
            if named.len() == 1 {
                "an object".to_string()
            } else {
                format!("{} objects", named.len())
            },
            named.join("; ")
        ),
    );
    for o in staying {
        for w in o.ways_out {
            refusal = refusal.way_out(w);
        }
    }
    DbError::refusal("table", refusal)
}

/// The objects over the changed columns as their probes type them, once
/// read: old keys translated (what cannot be is refused when the migration
/// is made).
fn probed_dependents(target: &Target, answers: &Answers) -> Result<Option<Dependents>, DbError> {
    let Some(found) = answers.answer(&dependents::DEPENDENTS)? else {
        return Ok(None);
    };
    Ok(Some(match literals::translate_all(target, &[], &found) {
        Ok(t) => t.dependents,
        Err(_) => found,
    }))
}

/// The probe of `expressions` of the object `kind` `oid` (named `name`)
/// on `table`, typed over the columns that become uuid, its row named by
/// each of `aliases`; none when no expression uses such a column.
pub(crate) fn probe_over_uuid(
    target: &Target,
    (kind, oid): (&'static str, u32),
    (table, name): (u32, &str),
    expressions: Vec<&str>,
    aliases: &[&str],
) -> Option<Read> {
    let changed = dependents::changed_in(target.snapshot, table, &target.to_uuid());
    let relation = target.snapshot.relation(table)?;
    if expressions.is_empty() || changed.is_empty() {
        return None;
    }
    let expressions: Vec<String> = expressions
        .into_iter()
        .map(crate::action::old_keys::probed)
        .collect();
    let expressions: Vec<&str> = expressions.iter().map(String::as_str).collect();
    Some(dependents::probe(
        dependents::ProbeOf {
            kind,
            oid,
            what: format!("check that {name} still holds over uuid"),
        },
        relation,
        &changed,
        &expressions,
        aliases,
    ))
}

//! Constraints over a changed column (primary and unique keys, exclusion,
//! CHECK; the migrated table's own primary key is the key's): dropped,
//! then made again from their definitions over the new columns — in
//! batches a key or unique constraint on an index built before the swap, a
//! CHECK `NOT VALID` and validated after; with their partitions' pieces'
//! names and their comments. One whose operator class or expression would
//! not hold over uuid is refused before anything runs; an exclusion
//! constraint in batches too (its index cannot be built before the swap).

use super::{Kind, Migration, Placed, Schedule, SoFar, Staying, Target};
use crate::action::{Action, Constraint, Deferrable, KeyKind, Object};
use crate::ops::key::dependents::{cannot_carry, changed_in, ConstraintDependent, ConstraintKind};
use crate::ops::key::model::{leaf_name, probe_over_uuid};
use crate::ops::key::moves::Move;
use crate::ops::key::naming::{piece, temporary};
use crate::ops::key::phase::Phase;
use crate::ops::Read;
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_ident::{qualified, quote_ident};

pub(super) struct Constraints;

impl Kind for Constraints {
    fn name(&self) -> &'static str {
        "constraints"
    }

    fn reads(&self, target: &Target, so_far: &SoFar) -> Result<Vec<Read>, DbError> {
        let Some(found) = so_far.dependents else {
            return Ok(Vec::new());
        };
        Ok(found
            .constraints
            .iter()
            .filter_map(|c| {
                probe_over_uuid(
                    target,
                    ("constraint", c.oid),
                    (c.table, &format!("constraint {}", c.name)),
                    c.expressions(),
                    &["x"],
                )
            })
            .collect())
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        let to_uuid = m.to_uuid();
        for c in &m.dependents.constraints {
            let changed = changed_in(m.snapshot, c.table, &to_uuid);
            if let Some(why) = cannot_carry(&m.answers, ("constraint", c.oid), &c.shape, &changed)?
            {
                let table = m
                    .snapshot
                    .relation(c.table)
                    .map_or_else(String::new, |r| r.display_name());
                return Err(cannot_move(
                    format!("constraint {} of {table} ({})", c.name, c.definition),
                    why,
                ));
            }
        }
        Ok(Vec::new())
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        if schedule.in_batches() {
            if let Some(x) = m
                .dependents
                .constraints
                .iter()
                .find(|c| c.kind == ConstraintKind::Exclusion)
            {
                return Err(DbError::refusal(
                    "batch-size",
                    Refusal::new(
                        Reason::NotInBatches,
                        format!(
                            "exclusion constraint {} ({}) is over a changed column: its index cannot be built before the swap without locking writers out",
                            x.name, x.definition
                        ),
                    )
                    .way_out(WayOut::OneTransaction),
                ));
            }
        }
        let mut out = Vec::new();
        for c in &m.dependents.constraints {
            if let Some(table) = m.snapshot.relation(c.table) {
                out.push(Placed::action(
                    Phase::DropDependents,
                    Action::Constraint(Constraint::Drop {
                        table: table.sql_name(),
                        name: c.name.clone(),
                    }),
                ));
            }
        }
        for c in &m.dependents.constraints {
            out.extend(constraint_move(m, c)?.placed(schedule));
        }
        Ok(out)
    }
}

/// The refusal of `what`, which cannot move to the new uuid column for
/// `why`.
pub(super) fn cannot_move(what: String, why: String) -> DbError {
    DbError::refusal(
        "table",
        Refusal::new(
            Reason::CannotMoveToUuid,
            format!(
                "{what} cannot move to the new uuid column: {why}; drop it first (and make it again over the new column after), or migrate without it"
            ),
        ),
    )
}

/// A constraint over a changed column made again from its definition over
/// the new column: a key or unique constraint in batches on an index built
/// before the swap, a CHECK `NOT VALID` and validated after; with its
/// partitions' pieces' names and its comment.
fn constraint_move(m: &Migration, c: &ConstraintDependent) -> Result<Move, DbError> {
    let table = m
        .snapshot
        .relation(c.table)
        .ok_or_else(|| DbError::unreadable("constraint", "table not found"))?;
    let t = table.sql_name();
    let comment = c.comment.as_ref().map(|text| {
        Action::Object(Object::Comment {
            on: format!("CONSTRAINT {} ON {t}", quote_ident(&c.name)),
            text: text.clone(),
        })
    });
    let mut mv = Move::default();
    mv.at_once.push(Action::Constraint(Constraint::Add {
        table: t.clone(),
        name: c.name.clone(),
        definition: c.definition.clone(),
        not_valid: false,
    }));
    mv.at_once
        .extend(m.pieces_named(&qualified(&c.schema, &c.name), &c.leaves));
    match c.kind {
        ConstraintKind::Check => {
            mv.swap.push(Action::Constraint(Constraint::Add {
                table: t.clone(),
                name: c.name.clone(),
                definition: c.definition.trim_end_matches(" NOT VALID").to_string(),
                not_valid: true,
            }));
            if c.validated {
                mv.validate.push(Action::Constraint(Constraint::Validate {
                    table: t.clone(),
                    name: c.name.clone(),
                }));
            }
        }
        // Refused in batches: in one transaction only.
        ConstraintKind::Exclusion => {}
        ConstraintKind::Primary | ConstraintKind::Unique => {
            let definition = c.index_definition.as_deref().ok_or_else(|| {
                DbError::unreadable("constraint", format!("{} has no index", c.name))
            })?;
            mv.build = m.build_from_definition(
                &format!("index {} for {}", table.display_name(), c.name),
                table,
                definition,
                &temporary(&c.name),
            )?;
            let kind = if c.kind == ConstraintKind::Primary {
                KeyKind::Primary
            } else {
                KeyKind::Unique
            };
            let deferrable = Deferrable::of(c.deferrable, c.deferred);
            let leaves = m.leaves_of(table);
            if leaves.is_empty() {
                mv.swap.push(Action::Constraint(Constraint::AddUsingIndex {
                    table: t.clone(),
                    name: c.name.clone(),
                    kind,
                    index: temporary(&c.name),
                    deferrable,
                }));
            } else {
                for p in &leaves {
                    mv.swap.push(Action::Constraint(Constraint::AddUsingIndex {
                        table: p.sql_name(),
                        name: leaf_name(&c.leaves, p.oid, &c.name),
                        kind,
                        index: piece(&temporary(&c.name), p.oid),
                        deferrable,
                    }));
                }
                mv.swap.push(Action::Constraint(Constraint::Add {
                    table: t,
                    name: c.name.clone(),
                    definition: c.definition.clone(),
                    not_valid: false,
                }));
            }
        }
    }
    mv.at_once.extend(comment.clone());
    mv.swap.extend(comment);
    Ok(mv)
}

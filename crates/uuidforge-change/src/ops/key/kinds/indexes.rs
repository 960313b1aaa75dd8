//! Indexes over a changed column that no constraint owns: dropped, then
//! made again from their definitions — in batches built before the swap
//! under a temporary name and renamed in it (a partitioned table's made
//! again, attaching the prebuilt pieces, their names given back); with
//! their comments. One whose operator class or expression would not hold
//! over uuid is refused before anything runs; one comparing a changed
//! column with an old key in its `WHERE` is refused in batches (built
//! before the swap, it cannot read the new key from the key map).

use super::{Kind, Migration, Placed, Schedule, SoFar, Staying, Target};
use crate::action::old_keys::has_old_keys;
use crate::action::{Action, Index, Object};
use crate::ops::key::dependents::{cannot_carry, changed_in, IndexDependent};
use crate::ops::key::model::probe_over_uuid;
use crate::ops::key::moves::Move;
use crate::ops::key::naming::{piece, temporary};
use crate::ops::key::phase::Phase;
use crate::ops::Read;
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_ident::qualified;

pub(super) struct Indexes;

impl Kind for Indexes {
    fn name(&self) -> &'static str {
        "indexes"
    }

    fn reads(&self, target: &Target, so_far: &SoFar) -> Result<Vec<Read>, DbError> {
        let Some(found) = so_far.dependents else {
            return Ok(Vec::new());
        };
        Ok(found
            .indexes
            .iter()
            .filter_map(|i| {
                probe_over_uuid(
                    target,
                    ("index", i.oid),
                    (i.table, &format!("index {}", i.name)),
                    i.shape.expressions(),
                    &["x"],
                )
            })
            .collect())
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        let to_uuid = m.to_uuid();
        for i in &m.dependents.indexes {
            let changed = changed_in(m.snapshot, i.table, &to_uuid);
            if let Some(why) = cannot_carry(&m.answers, ("index", i.oid), &i.shape, &changed)? {
                return Err(super::constraints::cannot_move(
                    format!("index {}.{} ({})", i.schema, i.name, i.definition),
                    why,
                ));
            }
        }
        Ok(Vec::new())
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        if schedule.in_batches() {
            if let Some(i) = m
                .dependents
                .indexes
                .iter()
                .find(|i| has_old_keys(&i.definition))
            {
                return Err(DbError::refusal(
                    "batch-size",
                    Refusal::new(
                        Reason::NotInBatches,
                        format!(
                            "index {}.{} compares a changed column with an old key in its WHERE: in batches it is built concurrently before the swap, which cannot read the new key from the key map; one transaction makes it again with the new key",
                            i.schema, i.name
                        ),
                    )
                    .way_out(WayOut::OneTransaction),
                ));
            }
        }
        let mut out: Vec<Placed> = m
            .dependents
            .indexes
            .iter()
            .map(|i| {
                Placed::action(
                    Phase::DropDependents,
                    Action::Index(Index::Drop {
                        index: qualified(&i.schema, &i.name),
                    }),
                )
            })
            .collect();
        for i in &m.dependents.indexes {
            out.extend(index_move(m, i)?.placed(schedule));
        }
        Ok(out)
    }
}

/// An index over a changed column made again from its definition: in
/// batches built before the swap under a temporary name and renamed in it
/// (a partitioned table's made again, attaching the prebuilt pieces, their
/// names given back); with its comment.
fn index_move(m: &Migration, i: &IndexDependent) -> Result<Move, DbError> {
    let table = m
        .snapshot
        .relation(i.table)
        .ok_or_else(|| DbError::unreadable("index", "table not found"))?;
    let comment = i.comment.as_ref().map(|text| {
        Action::Object(Object::Comment {
            on: format!("INDEX {}", qualified(&i.schema, &i.name)),
            text: text.clone(),
        })
    });
    let made = Action::Index(Index::Create {
        definition: i.definition.clone(),
    });
    let mut mv = Move::default();
    mv.at_once.push(made.clone());
    mv.at_once
        .extend(m.pieces_named(&qualified(&i.schema, &i.name), &i.leaves));
    mv.build = m.build_from_definition(
        &format!("index {} again over the new columns", i.name),
        table,
        &i.definition,
        &temporary(&i.name),
    )?;
    let leaves = m.leaves_of(table);
    if leaves.is_empty() {
        mv.swap.push(Action::Index(Index::Rename {
            schema: table.schema.clone(),
            from: temporary(&i.name),
            to: i.name.clone(),
        }));
    } else {
        mv.swap.push(made);
        for p in &leaves {
            if let Some(leaf) = i.leaves.iter().find(|l| l.partition == p.oid) {
                mv.swap.push(Action::Index(Index::Rename {
                    schema: p.schema.clone(),
                    from: piece(&temporary(&i.name), p.oid),
                    to: leaf.name.clone(),
                }));
            }
        }
    }
    mv.at_once.extend(comment.clone());
    mv.swap.extend(comment);
    Ok(mv)
}

//! The foreign keys to the key: dropped before the swap, made again over
//! the new columns with their actions and deferrability — in batches `NOT
//! VALID` and validated after the swap. PostgreSQL 15 makes no `NOT VALID`
//! foreign key on a partitioned table: each partition gets one, validated
//! after the swap, and the table's then attaches them. A partition's own
//! foreign key is made again on it `NOT VALID` and validated after the
//! partitioned tables' have attached their partitions' copies; where its
//! table has one too, it is made after that attachment (which would
//! otherwise take it in their place: PostgreSQL 18 attaches a not yet valid
//! one as well), the table's foreign key holding meanwhile. Any other
//! foreign key over a changed column (a reference to a reference) would be
//! left on the old column: refused, named.

use super::{Kind, Migration, Placed, Schedule, Staying};
use crate::action::{Action, Constraint};
use crate::ops::key::moves::Move;
use crate::ops::key::naming::{cut, cut_to};
use crate::ops::key::phase::Phase;
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};

pub(super) struct ForeignKeys;

impl Kind for ForeignKeys {
    fn name(&self) -> &'static str {
        "foreign keys"
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        refuse_foreign_constraints(m)?;
        Ok(Vec::new())
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut out: Vec<Placed> = m
            .references
            .iter()
            .filter(|r| r.fk.is_some())
            .map(|r| {
                Placed::action(
                    Phase::DropForeignKeys,
                    Action::Constraint(Constraint::Drop {
                        table: r.declared_on.sql_name(),
                        name: r.constraint_name(),
                    }),
                )
            })
            .collect();
        out.extend(
            foreign_key_moves(m)
                .into_iter()
                .flat_map(|mv| mv.placed(schedule)),
        );
        Ok(out)
    }
}

/// Another foreign key over a changed column (one referencing another
/// table, or one referencing a reference) would be left on the old column:
/// refused, named.
fn refuse_foreign_constraints(m: &Migration) -> Result<(), DbError> {
    let watched = m.watched();
    let ours = |oid: u32, name: &str| {
        m.references
            .iter()
            .any(|r| r.fk.is_some_and(|fk| fk.table == oid && fk.name == name))
    };
    let changed = |table: u32, columns: &[i16]| {
        let root = m.snapshot.partition_root(table).map_or(table, |r| r.oid);
        let holder = m.snapshot.relation(table);
        columns.iter().any(|&n| {
            let name = holder.and_then(|h| h.column(n)).map(|c| c.name.as_str());
            watched.iter().any(|&(t, w)| {
                (t == table && w == n)
                    || (t == root
                        && m.snapshot
                            .relation(root)
                            .and_then(|r| r.column(w))
                            .map(|c| c.name.as_str())
                            == name)
            })
        })
    };
    for fk in m.snapshot.foreign_keys() {
        if ours(fk.table, &fk.name) {
            continue;
        }
        let from = changed(fk.table, &fk.columns);
        let to = changed(fk.ref_table, fk.ref_columns.as_deref().unwrap_or_default());
        if from || to {
            let holder = m
                .snapshot
                .relation(fk.table)
                .map_or_else(String::new, |r| r.display_name());
            let other = m
                .snapshot
                .relation(fk.ref_table)
                .map_or_else(String::new, |r| r.display_name());
            let referenced = m
                .snapshot
                .relation(fk.ref_table)
                .map_or_else(String::new, |r| r.typed_name());
            return Err(DbError::refusal(
                "table",
                Refusal::new(
                    Reason::OtherForeignKey,
                    format!(
                        "foreign key {} of {holder} references {other} over a column the migration changes (a reference to a reference): it would stay on the old column; drop the foreign key",
                        fk.name
                    ),
                )
                .way_out(WayOut::MigrateFirst { target: referenced }),
            ));
        }
    }
    Ok(())
}

/// The foreign keys made again over the new columns.
fn foreign_key_moves(m: &Migration) -> Vec<Move> {
    let mut moves = Vec::new();
    for r in m.references.iter().filter(|r| r.fk.is_some()) {
        let Some(fk) = r.fk else { continue };
        let clause = r.fk_clause(&m.key);
        let on = r.declared_on.sql_name();
        let add = |table: String, name: String, not_valid: bool| {
            Action::Constraint(Constraint::Add {
                table,
                name,
                definition: clause.clone(),
                not_valid,
            })
        };
        let validate =
            |table: String, name: String| Action::Constraint(Constraint::Validate { table, name });
        let mut mv = Move {
            at_once: vec![add(on.clone(), fk.name.clone(), false)],
            ..Move::default()
        };
        if r.declared_on_table() {
            let leaves = m.leaves_of(r.table);
            if leaves.is_empty() {
                mv.swap.push(add(on.clone(), fk.name.clone(), true));
                mv.validate.push(validate(on, fk.name.clone()));
            } else {
                for p in leaves {
                    let name = cut(&format!("{}_{}", cut_to(&fk.name, 50), p.oid));
                    mv.swap.push(add(p.sql_name(), name.clone(), true));
                    mv.validate.push(validate(p.sql_name(), name));
                }
                mv.attach.push(add(on, fk.name.clone(), false));
            }
        } else {
            let table_has_one = m.references.iter().any(|o| {
                o.declared_on_table() && o.table.oid == r.table.oid && o.column.num == r.column.num
            });
            let made = add(on.clone(), fk.name.clone(), true);
            if table_has_one {
                mv.attach.push(made);
            } else {
                mv.swap.push(made);
            }
            mv.validate_attached.push(validate(on, fk.name.clone()));
        }
        moves.push(mv);
    }
    moves
}

//! Each reference column's default made again over its new values (an old
//! key in it made the new key of its row): in one transaction dropped
//! before the rewrite; in batches the column exchanged with its new one
//! in the swap, the old values kept beside it, NOT NULL where it was
//! (proved before the swap).

use super::{Kind, Migration, Placed, Schedule};
use crate::action::{Action, RelationKind, Table};
use crate::ops::key::literals::ReferenceDefault;
use crate::ops::key::moves::Move;
use crate::ops::key::naming::{new_column, old_column};
use crate::ops::key::phase::Phase;
use crate::ops::key::{by_column, Reference};
use uuidforge_db::error::DbError;

pub(super) struct References;

impl Kind for References {
    fn name(&self) -> &'static str {
        "references"
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        if !schedule.in_batches() {
            let mut out = Vec::new();
            for r in by_column(&m.references) {
                if let Some(d) = default_of(m, r) {
                    let t = r.table.sql_name();
                    let c = &r.column.name;
                    out.push(Placed::action(
                        Phase::DropDefaults,
                        Action::Table(Table::DropDefault {
                            table: t.clone(),
                            column: c.clone(),
                        }),
                    ));
                    out.extend(d.default.iter().map(|expression| {
                        Placed::action(
                            Phase::Move,
                            Action::Table(Table::SetDefault {
                                table: t.clone(),
                                column: c.clone(),
                                expression: expression.clone(),
                            }),
                        )
                    }));
                }
            }
            return Ok(out);
        }
        Ok(by_column(&m.references)
            .into_iter()
            .flat_map(|r| reference_move(m, r).placed(schedule))
            .collect())
    }
}

/// Reference `r`'s default, as it becomes over the new values.
fn default_of<'m>(m: &'m Migration, r: &Reference) -> Option<&'m ReferenceDefault> {
    m.defaults
        .iter()
        .find(|d| d.table == r.table.oid && d.column == r.column.name)
}

/// In batches, a reference column exchanged with its new one, NOT NULL
/// where it was.
fn reference_move(m: &Migration, r: &Reference) -> Move {
    let t = r.table.sql_name();
    let c = &r.column.name;
    let rename = |from: &str, to: &str| {
        Action::Table(Table::RenameColumn {
            relation: t.clone(),
            kind: RelationKind::Table,
            from: from.to_string(),
            to: to.to_string(),
        })
    };
    let mut mv = Move {
        swap: vec![rename(c, &old_column(c)), rename(&new_column(c), c)],
        ..Move::default()
    };
    // Its default goes from the old column to the new one.
    if let Some(d) = default_of(m, r) {
        let mut moved = vec![Action::Table(Table::DropDefault {
            table: t.clone(),
            column: old_column(c),
        })];
        moved.extend(d.default.iter().map(|expression| {
            Action::Table(Table::SetDefault {
                table: t.clone(),
                column: c.clone(),
                expression: expression.clone(),
            })
        }));
        mv.swap.extend(moved);
    }
    if r.column.not_null {
        // The old one's first: its NOT NULL constraint (PostgreSQL 18 names
        // them) gives its name to the new one's.
        let drop = Action::Table(Table::DropNotNull {
            table: t.clone(),
            column: old_column(c),
        });
        mv.swap.push(drop);
        let not_null = super::key::not_null(r.table, c);
        mv.prove = not_null.prove;
        mv.swap.extend(not_null.swap);
    }
    mv
}

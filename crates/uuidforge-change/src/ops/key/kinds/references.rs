//! Each reference column exchanged with its new one: the old values kept
//! beside it, its default given to the new column (an old key in it made
//! the new key of its row), NOT NULL where it was (proved before the swap
//! in batches).

use super::{Kind, Migration, Placed, Schedule};
use crate::action::{Action, RelationKind, Table};
use crate::ops::key::moves::Move;
use crate::ops::key::naming::{new_column, old_column};
use crate::ops::key::{by_column, Reference};
use uuidforge_db::error::DbError;

pub(super) struct References;

impl Kind for References {
    fn name(&self) -> &'static str {
        "references"
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        Ok(by_column(&m.references)
            .into_iter()
            .flat_map(|r| reference_move(m, r).placed(schedule))
            .collect())
    }
}

/// A reference column exchanged with its new one, NOT NULL where it was.
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
    let mut mv = Move::same(vec![rename(c, &old_column(c)), rename(&new_column(c), c)]);
    // Its default goes from the old column to the new one.
    if let Some(d) = m
        .defaults
        .iter()
        .find(|d| d.table == r.table.oid && d.column == *c)
    {
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
        mv.at_once.extend(moved.clone());
        mv.swap.extend(moved);
    }
    if r.column.not_null {
        // The old one's first: its NOT NULL constraint (PostgreSQL 18 names
        // them) gives its name to the new one's.
        let drop = Action::Table(Table::DropNotNull {
            table: t.clone(),
            column: old_column(c),
        });
        mv.at_once.push(drop.clone());
        mv.swap.push(drop);
        let not_null = super::key::not_null(r.table, c);
        mv.at_once.extend(not_null.at_once);
        mv.prove = not_null.prove;
        mv.swap.extend(not_null.swap);
    }
    mv
}

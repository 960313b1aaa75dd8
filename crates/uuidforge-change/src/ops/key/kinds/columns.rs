//! The new columns: added beside the key and each reference (one
//! statement per table, the key's table first), and filled — the key's
//! from the key map, each reference's from the row it names (a text
//! reference from the key's text, its other values as they are).

use super::{Kind, Migration, Placed, Schedule};
use crate::action::{Action, Table};
use crate::ops::key::by_column;
use crate::ops::key::checks::{changed_columns, row_hash};
use crate::ops::key::moves::Fill;
use crate::ops::key::naming::new_column;
use crate::ops::key::phase::{Phase, Work};
use crate::ops::key::values::{equal, Becomes};
use uuidforge_db::catalog::Relation;
use uuidforge_db::error::DbError;
use uuidforge_ident::quote_ident;

pub(super) struct NewColumns;

impl Kind for NewColumns {
    fn name(&self) -> &'static str {
        "the new columns"
    }

    fn place(&self, m: &Migration, _: Schedule, map: &str) -> Result<Vec<Placed>, DbError> {
        let mut out = Placed::actions(Phase::AddColumns, new_columns(m));
        out.extend(fills(m, map).into_iter().map(|f| Placed {
            phase: Phase::Fill,
            work: Work::Fill(f),
            by: "",
        }));
        Ok(out)
    }
}

/// The tables written, each with its new columns' names and types: the
/// key's table first.
fn new_columns(m: &Migration) -> Vec<Action> {
    m.tables_with_references()
        .into_iter()
        .map(|(t, references)| {
            let mut columns = Vec::new();
            if t.oid == m.key.table.oid {
                columns.push((new_column(&m.key.column.name), "uuid".to_string()));
            }
            columns.extend(
                references
                    .iter()
                    .map(|r| (new_column(&r.column.name), m.new_type(r))),
            );
            Action::Table(Table::AddColumns {
                table: t.sql_name(),
                columns,
            })
        })
        .collect()
}

/// The new columns filled: the key's from the map, each reference's from
/// the row it names (a text reference from the key's text, its other
/// values as they are).
fn fills(m: &Migration, map: &str) -> Vec<Fill> {
    let t = m.key.table.sql_name();
    let k = quote_ident(&m.key.column.name);
    let kn = quote_ident(&new_column(&m.key.column.name));
    let hash = |table: &Relation| row_hash(table, &changed_columns(m, table));
    let mut fills = vec![Fill {
        column: new_column(&m.key.column.name),
        table: t.clone(),
        pieces: m.pieces(m.key.table),
        set: format!("{kn} = m.new"),
        from: Some(format!("{map} m")),
        condition: format!("x.{kn} IS NULL AND m.old = x.{k}::text"),
        row_hash: hash(m.key.table),
    }];
    for r in by_column(&m.references) {
        let c = quote_ident(&r.column.name);
        let cn = quote_ident(&new_column(&r.column.name));
        let (set, from, condition) = match m.becomes(r) {
            // Joined with the table's new column on the old key's own type
            // (no text cast on millions of references).
            Becomes::Uuid => (
                format!("{cn} = p.{kn}"),
                Some(format!("{t} p")),
                format!(
                    "{}{} AND x.{cn} IS DISTINCT FROM p.{kn}",
                    equal(m.snapshot, &m.key, r.column, "p", "x"),
                    r.other_join(&m.key, "x", "p")
                ),
            ),
            Becomes::Text => (
                format!(
                    "{cn} = coalesce((SELECT p.{kn}::text FROM {t} p WHERE p.{k} = {}), x.{c})",
                    m.key_of_text(&format!("x.{c}"))
                ),
                None,
                format!("x.{cn} IS NULL AND x.{c} IS NOT NULL"),
            ),
        };
        fills.push(Fill {
            column: new_column(&r.column.name),
            table: r.table.sql_name(),
            pieces: m.pieces(r.table),
            set,
            from,
            condition,
            row_hash: hash(r.table),
        });
    }
    fills
}

//! The changed columns, each table written once:
//!
//! - in one transaction, each table rewritten by one `ALTER TABLE` whose
//!   `ALTER COLUMN … TYPE … USING` read the row as it was: the key and
//!   each reference take their new values in place (keeping their column
//!   position, comments, privileges and NOT NULL), and a column added
//!   beside each, empty until then, takes the old values;
//! - in batches, new columns added beside the key and each reference (one
//!   statement per table, the key's table first) and filled — the key's
//!   from the key map, each reference's from the row it names (a text
//!   reference from the key's text, its other values as they are).

use super::{Kind, Migration, Placed, Schedule};
use crate::action::{Action, Rewritten, Table};
use crate::ops::key::by_column;
use crate::ops::key::checks::{changed_columns, row_hash};
use crate::ops::key::model::KeyBase;
use crate::ops::key::moves::Fill;
use crate::ops::key::naming::{new_column, old_column, MAP_LOOKUP};
use crate::ops::key::phase::{Phase, Work};
use crate::ops::key::values::{declared, equal, family, Becomes, Family};
use uuidforge_db::catalog::{Column, Relation};
use uuidforge_db::error::DbError;
use uuidforge_ident::quote_ident;

pub(super) struct NewColumns;

impl Kind for NewColumns {
    fn name(&self) -> &'static str {
        "the new columns"
    }

    fn place(&self, m: &Migration, schedule: Schedule, map: &str) -> Result<Vec<Placed>, DbError> {
        if !schedule.in_batches() {
            let mut out = Placed::actions(Phase::AddColumns, old_columns(m));
            let integers = integer_key(m);
            out.push(Placed::action(
                Phase::MapLookup,
                Action::Table(Table::MapLookup {
                    names: MAP_LOOKUP,
                    map: map.to_string(),
                    integers,
                }),
            ));
            out.extend(Placed::actions(Phase::Rewrite, rewrites(m)));
            out.push(Placed::action(
                Phase::DropMap,
                Action::Table(Table::DropMapLookup {
                    names: MAP_LOOKUP,
                    integers,
                }),
            ));
            return Ok(out);
        }
        let mut out = Placed::actions(Phase::AddColumns, new_columns(m));
        out.extend(fills(m, map).into_iter().map(|f| Placed {
            phase: Phase::Fill,
            work: Work::Fill(f),
            by: "",
        }));
        Ok(out)
    }
}

/// The columns that keep the old values, added empty (no table is written
/// yet): one statement per table, the key's table first.
fn old_columns(m: &Migration) -> Vec<Action> {
    m.tables_with_references()
        .into_iter()
        .map(|(t, references)| {
            let mut columns = Vec::new();
            if t.oid == m.key.table.oid {
                columns.push((m.old_name.clone(), declared(m.key.column)));
            }
            columns.extend(
                references
                    .iter()
                    .map(|r| (old_column(&r.column.name), declared(r.column))),
            );
            Action::Table(Table::AddColumns {
                table: t.sql_name(),
                columns,
            })
        })
        .collect()
}

/// Each table written once: the key and each reference take their new
/// values from the key map in place, the columns added beside them their
/// old values (every `USING` reads the row as it was).
fn rewrites(m: &Migration) -> Vec<Action> {
    let integers = integer_key(m);
    // The new key of the old value in `column` (quoted `c`): the map's
    // old keys are the key's text, so a number of another type is read as
    // the key's type writes it.
    let new_key = |c: &str, column: &Column| {
        let text = if column.type_oid != m.key.column.type_oid
            && family(m.snapshot, column) == Some(Family::Number)
        {
            format!("{c}::{}::text", m.key.column.type_name)
        } else {
            format!("{c}::text")
        };
        MAP_LOOKUP.new_key(&text, integers.then_some(c))
    };
    m.tables_with_references()
        .into_iter()
        .map(|(t, references)| {
            let mut columns = Vec::new();
            if t.oid == m.key.table.oid {
                let k = quote_ident(&m.key.column.name);
                columns.push(Rewritten {
                    column: m.key.column.name.clone(),
                    type_name: "uuid".into(),
                    using: new_key(&k, m.key.column),
                });
                columns.push(Rewritten {
                    column: m.old_name.clone(),
                    type_name: declared(m.key.column),
                    using: k,
                });
            }
            for r in references {
                let c = quote_ident(&r.column.name);
                let (type_name, using) = match m.becomes(r) {
                    Becomes::Uuid => ("uuid".to_string(), new_key(&c, r.column)),
                    // Text: the values that are keys take the new key's
                    // text, the others stay.
                    Becomes::Text => {
                        let old = m.key_of_text(&c);
                        let new = MAP_LOOKUP.new_key(
                            &format!("({old})::text"),
                            integers.then_some(&format!("({old})")),
                        );
                        (declared(r.column), format!("coalesce(({new})::text, {c})"))
                    }
                };
                columns.push(Rewritten {
                    column: r.column.name.clone(),
                    type_name,
                    using,
                });
                columns.push(Rewritten {
                    column: old_column(&r.column.name),
                    type_name: declared(r.column),
                    using: c,
                });
            }
            Action::Table(Table::Rewrite {
                table: t.sql_name(),
                columns,
            })
        })
        .collect()
}

/// Whether the key is an integer: the map may then be an array indexed by
/// it.
fn integer_key(m: &Migration) -> bool {
    m.key_base_type() == KeyBase::Integer
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

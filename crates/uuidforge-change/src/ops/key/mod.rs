//! The model of a key and what refers to it, shared by every operation
//! that moves keys: the key column of a table ([`Key`]), the references to
//! it found once with one rule set ([`references`]); and a key migration
//! as one model — what it is asked ([`target`]), what it read
//! ([`model::Migration`]), what sits on the changed columns
//! ([`dependents`]), each kind of object one module deciding and placing
//! its work in phases ([`kinds`], [`phase`]), the names it makes
//! ([`naming`]), old keys written in definitions ([`literals`]) and the
//! verification SQL ([`checks`]).

pub mod checks;
pub mod cost;
pub mod creation_time;
pub mod dependents;
pub mod keys_from;
pub(crate) mod kinds;
pub mod literals;
pub mod model;
pub mod moves;
pub mod naming;
pub mod phase;
pub mod references;
pub mod shadow;
pub mod substitute;
pub mod target;
pub mod values;

pub use kinds::writers::BACKFILL_SETTING;
pub use model::{reads, Migration};
pub use moves::{Fill, KeyMap};
pub use naming::{new_column, old_column, piece};
pub use phase::{Phase, Placed, Schedule, Work};
pub use references::{by_column, deferrable, references_to, Reference};
pub use target::{Jobs, MigrateOptions, Target};

use uuidforge_db::catalog::{Column, Constraint, Relation, Snapshot};
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};

/// A table's key column within its primary key.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    /// The table.
    pub table: &'a Relation,
    /// Its primary key.
    pub pk: &'a Constraint,
    /// The key column, one of the primary key's.
    pub column: &'a Column,
}

impl<'a> Key<'a> {
    /// The key of `table`: the one column of its primary key, else `named`
    /// (`--column`), else its one integer or uuid column (of `(id,
    /// created_at)`, `id`). Errors name the argument and what was expected.
    pub fn find(
        snapshot: &'a Snapshot,
        table: &'a Relation,
        named: Option<&str>,
    ) -> Result<Key<'a>, DbError> {
        let pk = snapshot.primary_key(table.oid).ok_or_else(|| {
            DbError::refusal(
                "table",
                Refusal::new(
                    Reason::NoKey,
                    format!(
                        "{} has no primary key (expected one of one column)",
                        table.display_name()
                    ),
                ),
            )
        })?;
        let pk_columns = || -> String {
            pk.columns
                .iter()
                .filter_map(|&n| table.column(n).map(|c| c.name.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let num = match (&pk.columns[..], named) {
            ([only], None) => *only,
            (_, Some(name)) => Some(table.find_column("column", name)?)
                .filter(|c| pk.columns.contains(&c.num))
                .map(|c| c.num)
                .ok_or_else(|| {
                    DbError::invalid(
                        "column",
                        format!(
                            "'{name}' is not a column of the primary key of {} (expected one of {})",
                            table.display_name(),
                            pk_columns()
                        ),
                    )
                })?,
            (_, None) => {
                let keys: Vec<i16> = pk
                    .columns
                    .iter()
                    .copied()
                    .filter(|&n| {
                        table.column(n).is_some_and(|c| {
                            matches!(
                                c.type_name.as_str(),
                                "smallint" | "integer" | "bigint" | "uuid"
                            )
                        })
                    })
                    .collect();
                match keys[..] {
                    [one] => one,
                    _ => {
                        return Err(DbError::refusal(
                            "table",
                            Refusal::new(
                                Reason::NoKey,
                                format!(
                                    "the primary key of {} has {} columns ({})",
                                    table.display_name(),
                                    pk.columns.len(),
                                    pk_columns()
                                ),
                            )
                            .joined("; ", ", or ")
                            .way_out(WayOut::NameKeyColumn),
                        ))
                    }
                }
            }
        };
        let column = table
            .column(num)
            .ok_or_else(|| DbError::unreadable("table", "key column not found"))?;
        Ok(Key { table, pk, column })
    }

    /// The primary key's column names, the key among them.
    pub fn pk_columns(&self) -> Vec<String> {
        self.pk
            .columns
            .iter()
            .filter_map(|&n| self.table.column(n).map(|c| c.name.clone()))
            .collect()
    }

    /// The primary key's column names with `name` in the key's place.
    pub fn pk_with(&self, name: &str) -> Vec<String> {
        self.pk_columns()
            .into_iter()
            .map(|c| {
                if c == self.column.name {
                    name.to_string()
                } else {
                    c
                }
            })
            .collect()
    }
}

/// Quoted names, comma-separated.
///
pub fn names(columns: &[String]) -> String {
    columns
        .iter()
        .map(|c| uuidforge_ident::quote_ident(c))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_quote_each_and_join() {
        assert_eq!(super::names(&["a".into(), "B".into()]), "\"a\", \"B\"");
    }
}

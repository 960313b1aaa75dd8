//! What refers to a key: every foreign key to its table, found once with
//! one set of rules for every operation that moves keys (`migrate-key` in
//! both modes, `merge`, `unmerge`), and the columns a user names with
//! `--also` as references without one.

use super::Key;
use crate::action::{self, Action};
use uuidforge_db::catalog::{Column, Constraint, RelKind, Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_ident::quote_ident;

/// One column referencing a key.
#[derive(Debug, Clone, Copy)]
pub struct Reference<'a> {
    /// The table holding the column: the referencing table, or the
    /// partitioned table whose partition declares the foreign key (a
    /// partition's columns are its table's).
    pub table: &'a Relation,
    /// Where the foreign key is declared: `table`, or one of its partitions.
    pub declared_on: &'a Relation,
    /// The foreign key; none for a column named with `--also`.
    pub fk: Option<&'a Constraint>,
    /// The column, in `table`.
    pub column: &'a Column,
}

impl<'a> Reference<'a> {
    /// Whether a foreign key declares it on `table` itself (the constraint
    /// a key migration drops and makes again there).
    pub fn declared_on_table(&self) -> bool {
        self.fk.is_some() && self.declared_on.oid == self.table.oid
    }

    /// Whether its foreign key is declared on a partition.
    pub fn on_partition(&self) -> bool {
        self.fk.is_some() && self.declared_on.oid != self.table.oid
    }

    /// Its foreign key's name, or how it was named (`--also`).
    pub fn constraint_name(&self) -> String {
        self.fk.map_or_else(
            || "no foreign key: named as a reference".to_string(),
            |fk| fk.name.clone(),
        )
    }

    /// The foreign key's other column pairs (a composite foreign key's
    /// columns beside the reference), as (referencing, referenced) names.
    pub fn pairs(&self, key: &Key) -> Vec<(String, String)> {
        let Some(fk) = self.fk else {
            return Vec::new();
        };
        let refs = fk.ref_columns.clone().unwrap_or_default();
        fk.columns
            .iter()
            .zip(&refs)
            .filter(|(_, &r)| r != key.column.num)
            .filter_map(|(&c, &r)| {
                Some((
                    self.declared_on.column(c)?.name.clone(),
                    key.table.column(r)?.name.clone(),
                ))
            })
            .collect()
    }

    /// ` AND p.a = x.b` for the other column pairs of its foreign key.
    pub fn other_join(&self, key: &Key, x: &str, p: &str) -> String {
        self.pairs(key)
            .iter()
            .map(|(c, r)| format!(" AND {p}.{} = {x}.{}", quote_ident(r), quote_ident(c)))
            .collect()
    }

    /// Its foreign key as a clause again, over the same column names, with
    /// its actions and deferrability.
    pub fn fk_clause(&self, key: &Key) -> String {
        let Some(fk) = self.fk else {
            return String::new();
        };
        let names = |r: &Relation, nums: &[i16]| -> String {
            nums.iter()
                .filter_map(|&n| r.column(n).map(|c| quote_ident(&c.name)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let action = |code: &str| match code {
            "r" => "RESTRICT",
            "c" => "CASCADE",
            "n" => "SET NULL",
            "d" => "SET DEFAULT",
            _ => "NO ACTION",
        };
        let mut clause = format!(
            "FOREIGN KEY ({}) REFERENCES {} ({}) ON UPDATE {} ON DELETE {}",
            names(self.declared_on, &fk.columns),
            key.table.sql_name(),
            names(key.table, fk.ref_columns.as_deref().unwrap_or_default()),
            action(&fk.on_update),
            action(&fk.on_delete)
        );
        if fk.deferrable {
            clause.push_str(if fk.deferred {
                " DEFERRABLE INITIALLY DEFERRED"
            } else {
                " DEFERRABLE INITIALLY IMMEDIATE"
            });
        }
        clause
    }
}

/// Every foreign key referencing `key`, each a [`Reference`]: a foreign
/// key declared on a partition stands for its partitioned table's column.
/// Refused: a foreign key to the table that leaves the key out, one whose
/// holder is not a table, a partition numbering its columns unlike its
/// table.
pub fn references_to<'a>(
    snapshot: &'a Snapshot,
    key: &Key<'a>,
) -> Result<Vec<Reference<'a>>, DbError> {
    let mut found = Vec::new();
    for fk in snapshot
        .foreign_keys()
        .filter(|fk| fk.ref_table == key.table.oid)
    {
        let declared_on = snapshot
            .relation(fk.table)
            .ok_or_else(|| DbError::unreadable("foreign key", "table not found"))?;
        let refs = fk.ref_columns.as_deref().unwrap_or_default();
        let Some(at) = refs.iter().position(|&n| n == key.column.num) else {
            return Err(DbError::refused(
                "table",
                format!(
                    "foreign key {} of {} references columns of {} without its key {} (not moved)",
                    fk.name,
                    declared_on.display_name(),
                    key.table.display_name(),
                    key.column.name
                ),
            ));
        };
        let table = holder(snapshot, declared_on, fk)?;
        let column = table
            .column(fk.columns[at])
            .ok_or_else(|| DbError::unreadable("foreign key", "column not found"))?;
        found.push(Reference {
            table,
            declared_on,
            fk: Some(fk),
            column,
        });
    }
    Ok(found)
}

/// The table a foreign key declared on `declared_on` stands for: itself,
/// or the partitioned table at the top of its partition tree.
fn holder<'a>(
    snapshot: &'a Snapshot,
    declared_on: &'a Relation,
    fk: &Constraint,
) -> Result<&'a Relation, DbError> {
    let table = if declared_on.is_partition {
        let root = snapshot
            .partition_root(declared_on.oid)
            .filter(|r| !r.is_partition)
            .ok_or_else(|| {
                DbError::refused(
                    "table",
                    format!(
                        "{} referencing it is a partition whose partitioned table is not in the catalog read",
                        declared_on.display_name()
                    ),
                )
            })?;
        for &n in &fk.columns {
            if declared_on.column(n).map(|c| &c.name) != root.column(n).map(|c| &c.name) {
                return Err(DbError::refused(
                    "table",
                    format!(
                        "foreign key {} of partition {} numbers its columns unlike {} (a table attached with its columns in another order; not supported: declare the foreign key on {})",
                        fk.name,
                        declared_on.display_name(),
                        root.display_name(),
                        root.display_name()
                    ),
                ));
            }
        }
        root
    } else {
        declared_on
    };
    if !matches!(table.kind, RelKind::Table | RelKind::PartitionedTable) || table.is_partition {
        return Err(DbError::refused(
            "table",
            format!(
                "{} referencing it is a {} (expected a table or a partitioned table)",
                table.display_name(),
                table.kind.name()
            ),
        ));
    }
    Ok(table)
}

/// The referencing columns, each once: the reference a column's own table
/// declares stands for it, else the first partition's.
pub fn by_column<'r, 'a>(references: &'r [Reference<'a>]) -> Vec<&'r Reference<'a>> {
    let mut out: Vec<&Reference> = Vec::new();
    for r in references {
        match out
            .iter_mut()
            .find(|o| o.table.oid == r.table.oid && o.column.num == r.column.num)
        {
            Some(o) if !o.declared_on_table() && r.declared_on_table() => *o = r,
            Some(_) => {}
            None => out.push(r),
        }
    }
    out
}

/// The foreign keys of `references` that are not deferrable, made
/// deferrable (`make`) for a change's length, or back (checked at commit:
/// a key moves before the row that will hold it exists).
pub fn deferrable(references: &[Reference], make: bool) -> Vec<Action> {
    references
        .iter()
        .filter_map(|r| Some((r.declared_on, r.fk?)))
        .filter(|(_, fk)| !fk.deferrable)
        .map(|(table, fk)| {
            Action::Constraint(action::Constraint::SetDeferrable {
                table: table.sql_name(),
                name: fk.name.clone(),
                deferrable: make,
            })
        })
        .collect()
}

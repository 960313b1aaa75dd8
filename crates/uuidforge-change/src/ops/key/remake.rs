//! SQL both modes of a key migration write the same way: a text value as
//! the key's type (or nothing), the names of a partitioned key's or index's
//! pieces put back, the changed columns' comments and privileges.

use super::dependents::Leaf;
use super::values::{family, Family};
use super::Migration;
use uuidforge_db::catalog::Relation;
use uuidforge_ident::quote_literal;

impl Migration<'_> {
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

    /// The pieces of the partitioned index or constraint `parent` (quoted,
    /// qualified) given back the names `leaves` had: made again on the
    /// partitioned table, PostgreSQL names them itself.
    pub fn pieces_named(&self, parent: &str, leaves: &[Leaf]) -> Vec<String> {
        leaves
            .iter()
            .filter_map(|leaf| {
                let partition = self.snapshot.relation(leaf.partition)?;
                Some(format!(
                    "DO $uuidforge$ DECLARE piece regclass; BEGIN SELECT h.inhrelid::regclass INTO piece FROM pg_inherits h JOIN pg_index i ON i.indexrelid = h.inhrelid WHERE h.inhparent = {}::regclass AND i.indrelid = {}::regclass; IF piece IS NOT NULL AND (SELECT relname FROM pg_class WHERE oid = piece) <> {} THEN EXECUTE format('ALTER INDEX %s RENAME TO %I', piece, {}); END IF; END $uuidforge$",
                    quote_literal(parent),
                    quote_literal(&partition.sql_name()),
                    quote_literal(&leaf.name),
                    quote_literal(&leaf.name)
                ))
            })
            .collect()
    }

    /// The pieces of the table's primary key on its partitions, as named
    /// before (found by kind and column names).
    pub fn key_leaves(&self) -> Vec<Leaf> {
        let wanted = self.key.pk_columns();
        self.leaves(self.key.table.oid)
            .iter()
            .filter_map(|p| {
                let leaf = self.snapshot.relation(p.oid)?;
                let k = self.snapshot.constraints.iter().find(|k| {
                    k.table == p.oid && k.kind == "p" && column_names(leaf, &k.columns) == wanted
                })?;
                Some(Leaf {
                    partition: p.oid,
                    name: k.name.clone(),
                })
            })
            .collect()
    }

    /// [`Migration::pieces_named`] for the table's primary key.
    pub fn key_pieces_named(&self) -> Vec<String> {
        self.pieces_named(
            &uuidforge_ident::qualified(&self.key.table.schema, &self.key.pk.name),
            &self.key_leaves(),
        )
    }

    /// Every constraint and index over a changed column dropped (made again
    /// from its definition once the new columns have the old names).
    pub fn drop_dependents(&self) -> Vec<String> {
        let mut s = Vec::new();
        for c in &self.dependents.constraints {
            if let Some(table) = self.snapshot.relation(c.table) {
                s.push(format!(
                    "ALTER TABLE {} DROP CONSTRAINT {}",
                    table.sql_name(),
                    uuidforge_ident::quote_ident(&c.name)
                ));
            }
        }
        for i in &self.dependents.indexes {
            s.push(format!(
                "DROP INDEX {}",
                uuidforge_ident::qualified(&i.schema, &i.name)
            ));
        }
        s
    }

    /// The comments and privileges of the changed columns, given to the new
    /// ones (once they have the old names).
    pub fn column_extras(&self) -> Vec<String> {
        self.dependents
            .columns
            .iter()
            .filter_map(|extras| {
                let table = self.snapshot.relation(extras.table)?;
                let column = table.column(extras.num)?;
                Some(extras.statements(&table.sql_name(), &column.name))
            })
            .flatten()
            .collect()
    }
}

/// The names of columns `nums` of `r`.
pub fn column_names(r: &Relation, nums: &[i16]) -> Vec<String> {
    nums.iter()
        .filter_map(|&n| r.column(n).map(|c| c.name.clone()))
        .collect()
}

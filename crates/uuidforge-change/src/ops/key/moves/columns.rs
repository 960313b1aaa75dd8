//! The key and its references exchanged with their new columns: the new
//! columns filled (from the key map, from the row a reference names),
//! NOT NULL (proved before the swap in batches), the primary key on the
//! new column (on an index built before, in batches), the old values'
//! unique index, the default.

use super::{leaf_name, Fill, Move};
use crate::action::{Action, Constraint, Deferrable, Index, KeyKind, RelationKind, Table};
use crate::ops::key::values::{equal, family, Becomes, Family};
use crate::ops::key::{
    by_column, cut, names, new_column, old_reference, piece, Migration, Reference,
};
use uuidforge_db::catalog::Relation;
use uuidforge_ident::{qualified, quote_ident};

impl Migration<'_> {
    /// The new columns filled: the key's from the map, each reference's
    /// from the row it names (a text reference from the key's text, its
    /// other values as they are).
    pub(super) fn fills(&self, map: &str) -> Vec<Fill> {
        let t = self.key.table.sql_name();
        let k = quote_ident(&self.key.column.name);
        let kn = quote_ident(&new_column(&self.key.column.name));
        let hash = |table: &Relation| {
            crate::ops::key::checks::row_hash(
                table,
                &crate::ops::key::checks::changed_columns(self, table),
            )
        };
        let mut fills = vec![Fill {
            column: new_column(&self.key.column.name),
            table: t.clone(),
            pieces: self.pieces(self.key.table),
            set: format!("{kn} = m.new"),
            from: Some(format!("{map} m")),
            condition: format!("x.{kn} IS NULL AND m.old = x.{k}::text"),
            row_hash: hash(self.key.table),
        }];
        for r in by_column(&self.references) {
            let c = quote_ident(&r.column.name);
            let cn = quote_ident(&new_column(&r.column.name));
            let (set, from, condition) = match self.becomes(r) {
                // Joined with the table's new column on the old key's own
                // type (no text cast on millions of references).
                Becomes::Uuid => (
                    format!("{cn} = p.{kn}"),
                    Some(format!("{t} p")),
                    format!(
                        "{}{} AND x.{cn} IS DISTINCT FROM p.{kn}",
                        equal(self.snapshot, &self.key, r.column, "p", "x"),
                        r.other_join(&self.key, "x", "p")
                    ),
                ),
                Becomes::Text => (
                    format!(
                        "{cn} = coalesce((SELECT p.{kn}::text FROM {t} p WHERE p.{k} = {}), x.{c})",
                        self.key_of_text(&format!("x.{c}"))
                    ),
                    None,
                    format!("x.{cn} IS NULL AND x.{c} IS NOT NULL"),
                ),
            };
            fills.push(Fill {
                column: new_column(&r.column.name),
                table: r.table.sql_name(),
                pieces: self.pieces(r.table),
                set,
                from,
                condition,
                row_hash: hash(r.table),
            });
        }
        fills
    }

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

    /// The CHECK proving a new column NOT NULL before the swap.
    pub(super) fn not_null_check(&self, table_oid: u32, column: &str) -> String {
        cut(&format!("uuidforge_nn_{table_oid}_{column}"))
    }

    /// `column` of `table` made NOT NULL once it has its final name
    /// (`before_swap` until then): in batches proved first by a CHECK,
    /// dropped once it served.
    pub(super) fn not_null(&self, table: &Relation, column: &str) -> Move {
        let t = table.sql_name();
        let check = self.not_null_check(table.oid, column);
        let set = Action::Table(Table::SetNotNull {
            table: t.clone(),
            column: column.to_string(),
        });
        Move {
            at_once: vec![set.clone()],
            prove: vec![(
                Action::Constraint(Constraint::ReplaceCheck {
                    table: t.clone(),
                    name: check.clone(),
                    condition: format!("{} IS NOT NULL", quote_ident(&new_column(column))),
                }),
                Action::Constraint(Constraint::Validate {
                    table: t.clone(),
                    name: check.clone(),
                }),
            )],
            swap: vec![
                set,
                Action::Constraint(Constraint::Drop {
                    table: t,
                    name: check,
                }),
            ],
            ..Move::default()
        }
    }

    /// The new key's unique index, built before the swap.
    pub(super) fn new_key_index(&self) -> String {
        cut(&format!(
            "{}_{}",
            self.key.table.name,
            new_column(&self.key.column.name)
        ))
    }

    /// The unique index kept on the old key values.
    pub fn old_index_name(&self) -> String {
        cut(&format!("{}_{}_key", self.key.table.name, self.old_name))
    }

    /// A unique index over `columns` of `table` built concurrently before
    /// the swap as `name`: on each partition of a partitioned table.
    pub(super) fn build_unique(
        &self,
        what: &str,
        table: &Relation,
        name: &str,
        columns: &str,
    ) -> Vec<(String, Action)> {
        let leaves = self.leaves_of(table);
        let on: Vec<(String, String, String)> = if leaves.is_empty() {
            vec![(table.sql_name(), table.schema.clone(), name.to_string())]
        } else {
            leaves
                .iter()
                .map(|p| (p.sql_name(), p.schema.clone(), piece(name, p.oid)))
                .collect()
        };
        on.into_iter()
            .map(|(target, schema, index)| {
                (
                    what.to_string(),
                    Action::Index(Index::Concurrently {
                        index: qualified(&schema, &index),
                        definition: crate::action::statements(&[Action::Index(Index::On {
                            name: index,
                            table: target,
                            columns: columns.to_string(),
                            unique: true,
                            concurrently: true,
                            if_not_exists: false,
                        })])
                        .concat(),
                    }),
                )
            })
            .collect()
    }

    /// The key: its default and sequence gone, the columns exchanged,
    /// NOT NULL, the primary key on the new column (in batches on the
    /// index built before), the old values' unique index, the default
    /// `uuidv7()`.
    pub(super) fn key_move(&self) -> Move {
        let t = self.key.table.sql_name();
        let k = &self.key.column.name;
        let rename = |from: &str, to: &str| {
            Action::Table(Table::RenameColumn {
                relation: t.clone(),
                kind: RelationKind::Table,
                from: from.to_string(),
                to: to.to_string(),
            })
        };
        let mut m = Move::same(vec![
            Action::Table(Table::DropKeyDefault {
                table: t.clone(),
                column: k.clone(),
            }),
            rename(k, &self.old_name),
            // Rows made from now on have no old key.
            Action::Table(Table::DropNotNull {
                table: t.clone(),
                column: self.old_name.clone(),
            }),
            rename(&new_column(k), k),
        ]);
        let not_null = self.not_null(self.key.table, k);
        m.at_once.extend(not_null.at_once);
        m.prove = not_null.prove;
        m.swap.extend(not_null.swap);
        let pk = self.key.pk.name.clone();
        let pk_columns = names(&self.key.pk_columns());
        let old_columns = names(&self.key.pk_with(&self.old_name));
        // In one transaction: the key made, its partitions' pieces named
        // as they were, the old values' index.
        m.at_once.push(Action::Constraint(Constraint::Add {
            table: t.clone(),
            name: pk.clone(),
            definition: format!("PRIMARY KEY ({pk_columns})"),
            not_valid: false,
        }));
        m.at_once
            .extend(self.pieces_named(&qualified(&self.key.table.schema, &pk), &self.key_leaves()));
        let old_index = Action::Index(Index::On {
            name: self.old_index_name(),
            table: t.clone(),
            columns: old_columns,
            unique: true,
            concurrently: false,
            if_not_exists: false,
        });
        m.at_once.push(old_index.clone());
        // In batches: both indexes built before the swap (the old key
        // still has its name then), the key made on the new one.
        let new_key_index = self.new_key_index();
        m.build = self.build_unique(
            "index the new key",
            self.key.table,
            &new_key_index,
            &names(&self.key.pk_with(&new_column(k))),
        );
        m.build.extend(self.build_unique(
            "index the old key (kept unique)",
            self.key.table,
            &self.old_index_name(),
            &pk_columns_before(self),
        ));
        let leaves = self.leaves_of(self.key.table);
        if leaves.is_empty() {
            m.swap.push(Action::Constraint(Constraint::AddUsingIndex {
                table: t.clone(),
                name: pk.clone(),
                kind: KeyKind::Primary,
                index: new_key_index,
                deferrable: Deferrable::No,
            }));
        } else {
            // Each partition's key on its prebuilt index (keeping its
            // name), then the table's, which attaches them; then the old
            // values' index, which attaches theirs (no index is built
            // under the lock).
            let named = self.key_leaves();
            for p in &leaves {
                m.swap.push(Action::Constraint(Constraint::AddUsingIndex {
                    table: p.sql_name(),
                    name: leaf_name(&named, p.oid, &pk),
                    kind: KeyKind::Primary,
                    index: piece(&new_key_index, p.oid),
                    deferrable: Deferrable::No,
                }));
            }
            m.swap.push(Action::Constraint(Constraint::Add {
                table: t.clone(),
                name: pk,
                definition: format!("PRIMARY KEY ({pk_columns})"),
                not_valid: false,
            }));
            m.swap.push(old_index);
        }
        if let Some(generator) = &self.generator {
            let default = Action::Table(Table::SetDefault {
                table: t,
                column: k.clone(),
                expression: generator.call(),
            });
            m.at_once.push(default.clone());
            m.swap.push(default);
        }
        m
    }

    /// A reference column exchanged with its new one, NOT NULL where it
    /// was.
    pub(super) fn reference_move(&self, r: &Reference) -> Move {
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
        let mut m = Move::same(vec![
            rename(c, &old_reference(c)),
            rename(&new_column(c), c),
        ]);
        // Its default goes from the old column to the new one.
        if let Some(d) = self
            .defaults
            .iter()
            .find(|d| d.table == r.table.oid && d.column == *c)
        {
            let mut moved = vec![Action::Table(Table::DropDefault {
                table: t.clone(),
                column: old_reference(c),
            })];
            moved.extend(d.default.iter().map(|expression| {
                Action::Table(Table::SetDefault {
                    table: t.clone(),
                    column: c.clone(),
                    expression: expression.clone(),
                })
            }));
            m.at_once.extend(moved.clone());
            m.swap.extend(moved);
        }
        if r.column.not_null {
            // The old one's first: its NOT NULL constraint (PostgreSQL 18
            // names them) gives its name to the new one's.
            let drop = Action::Table(Table::DropNotNull {
                table: t.clone(),
                column: old_reference(c),
            });
            m.at_once.push(drop.clone());
            m.swap.push(drop);
            let not_null = self.not_null(r.table, c);
            m.at_once.extend(not_null.at_once);
            m.prove = not_null.prove;
            m.swap.extend(not_null.swap);
        }
        m
    }
}

/// The primary key's columns as named before the swap (the old key by its
/// own name).
fn pk_columns_before(m: &Migration) -> String {
    names(&m.key.pk_columns())
}

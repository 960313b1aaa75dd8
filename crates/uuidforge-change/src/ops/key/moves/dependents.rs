//! What sits on the changed columns, made again over the new ones from
//! its definition: constraints (keys and unique ones on indexes built
//! before the swap in batches, CHECKs `NOT VALID` and validated after),
//! indexes (built under a temporary name and renamed in the swap), the
//! names of partitioned pieces, the columns' comments, privileges and NOT
//! NULL names.

use super::{column_names, leaf_name, Move};
use crate::action::{Action, Constraint, Deferrable, Index, KeyKind, Object, Table};
use crate::ops::key::dependents::{ConstraintDependent, IndexDependent, Leaf};
use crate::ops::key::substitute::{index_over, Remake};
use crate::ops::key::{new_column, piece, temporary, Migration};
use uuidforge_db::catalog::Relation;
use uuidforge_db::error::DbError;
use uuidforge_ident::{qualified, quote_ident};

impl Migration<'_> {
    /// `definition` made again as `remake` over the new columns of
    /// `table`.
    pub(super) fn over_new_columns(
        &self,
        definition: &str,
        table: u32,
        remake: Remake,
    ) -> Result<String, DbError> {
        let watched = self.watched();
        let renames: Vec<(String, String)> =
            crate::ops::key::dependents::changed_in(self.snapshot, table, &watched)
                .into_iter()
                .filter_map(|n| self.snapshot.relation(table)?.column(n))
                .map(|c| (c.name.clone(), new_column(&c.name)))
                .collect();
        let pairs: Vec<(&str, &str)> = renames
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        index_over(definition, &pairs, remake).ok_or_else(|| {
            DbError::refused(
                "batch-size",
                format!("the index definition '{definition}' is not one uuidforge reads; migrate without --batch-size, in one transaction, which makes it again as it is"),
            )
        })
    }

    /// The index of `definition` on `table` over its new columns, built
    /// concurrently before the swap as `name`: on each partition of a
    /// partitioned table.
    pub(super) fn build_from_definition(
        &self,
        what: &str,
        table: &Relation,
        definition: &str,
        name: &str,
    ) -> Result<Vec<(String, Action)>, DbError> {
        let leaves = self.leaves_of(table);
        let on: Vec<(String, String, Option<String>)> = if leaves.is_empty() {
            vec![(table.schema.clone(), name.to_string(), None)]
        } else {
            leaves
                .iter()
                .map(|p| (p.schema.clone(), piece(name, p.oid), Some(p.sql_name())))
                .collect()
        };
        on.into_iter()
            .map(|(schema, index, on)| {
                let statement = self.over_new_columns(
                    definition,
                    table.oid,
                    Remake {
                        name: &index,
                        concurrently: true,
                        on: on.as_deref(),
                    },
                )?;
                Ok((
                    what.to_string(),
                    Action::Index(Index::Concurrently {
                        index: qualified(&schema, &index),
                        definition: statement,
                    }),
                ))
            })
            .collect()
    }

    /// A constraint over a changed column made again from its definition
    /// over the new column: a key or unique constraint in batches on an
    /// index built before the swap, a CHECK `NOT VALID` and validated
    /// after; with its partitions' pieces' names and its comment.
    pub(super) fn constraint_move(&self, c: &ConstraintDependent) -> Result<Move, DbError> {
        let table = self
            .snapshot
            .relation(c.table)
            .ok_or_else(|| DbError::unreadable("constraint", "table not found"))?;
        let t = table.sql_name();
        let comment = c.comment.as_ref().map(|text| {
            Action::Object(Object::Comment {
                on: format!("CONSTRAINT {} ON {t}", quote_ident(&c.name)),
                text: text.clone(),
            })
        });
        let mut m = Move::default();
        m.at_once.push(Action::Constraint(Constraint::Add {
            table: t.clone(),
            name: c.name.clone(),
            definition: c.definition.clone(),
            not_valid: false,
        }));
        m.at_once
            .extend(self.pieces_named(&qualified(&c.schema, &c.name), &c.leaves));
        match c.kind.as_str() {
            "c" => {
                m.swap.push(Action::Constraint(Constraint::Add {
                    table: t.clone(),
                    name: c.name.clone(),
                    definition: c.definition.trim_end_matches(" NOT VALID").to_string(),
                    not_valid: true,
                }));
                if c.validated {
                    m.validate.push(Action::Constraint(Constraint::Validate {
                        table: t.clone(),
                        name: c.name.clone(),
                    }));
                }
            }
            // Exclusion constraints are refused in batches (their index
            // cannot be built before the swap without locking writers
            // out): in one transaction only.
            "x" => {}
            _ => {
                let definition = c.index_definition.as_deref().ok_or_else(|| {
                    DbError::unreadable("constraint", format!("{} has no index", c.name))
                })?;
                m.build = self.build_from_definition(
                    &format!("index {} for {}", table.display_name(), c.name),
                    table,
                    definition,
                    &temporary(&c.name),
                )?;
                let kind = if c.kind == "p" {
                    KeyKind::Primary
                } else {
                    KeyKind::Unique
                };
                let deferrable = Deferrable::of(c.deferrable, c.deferred);
                let leaves = self.leaves_of(table);
                if leaves.is_empty() {
                    m.swap.push(Action::Constraint(Constraint::AddUsingIndex {
                        table: t.clone(),
                        name: c.name.clone(),
                        kind,
                        index: temporary(&c.name),
                        deferrable,
                    }));
                } else {
                    for p in &leaves {
                        m.swap.push(Action::Constraint(Constraint::AddUsingIndex {
                            table: p.sql_name(),
                            name: leaf_name(&c.leaves, p.oid, &c.name),
                            kind,
                            index: piece(&temporary(&c.name), p.oid),
                            deferrable,
                        }));
                    }
                    m.swap.push(Action::Constraint(Constraint::Add {
                        table: t,
                        name: c.name.clone(),
                        definition: c.definition.clone(),
                        not_valid: false,
                    }));
                }
            }
        }
        m.at_once.extend(comment.clone());
        m.swap.extend(comment);
        Ok(m)
    }

    /// An index over a changed column made again from its definition: in
    /// batches built before the swap under a temporary name and renamed in
    /// it (a partitioned table's made again, attaching the prebuilt
    /// pieces, their names given back); with its comment.
    pub(super) fn index_move(&self, i: &IndexDependent) -> Result<Move, DbError> {
        let table = self
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
        let mut m = Move::default();
        m.at_once.push(made.clone());
        m.at_once
            .extend(self.pieces_named(&qualified(&i.schema, &i.name), &i.leaves));
        m.build = self.build_from_definition(
            &format!("index {} again over the new columns", i.name),
            table,
            &i.definition,
            &temporary(&i.name),
        )?;
        let leaves = self.leaves_of(table);
        if leaves.is_empty() {
            m.swap.push(Action::Index(Index::Rename {
                schema: table.schema.clone(),
                from: temporary(&i.name),
                to: i.name.clone(),
            }));
        } else {
            m.swap.push(made);
            for p in &leaves {
                if let Some(leaf) = i.leaves.iter().find(|l| l.partition == p.oid) {
                    m.swap.push(Action::Index(Index::Rename {
                        schema: p.schema.clone(),
                        from: piece(&temporary(&i.name), p.oid),
                        to: leaf.name.clone(),
                    }));
                }
            }
        }
        m.at_once.extend(comment.clone());
        m.swap.extend(comment);
        Ok(m)
    }

    /// The pieces of the partitioned index or constraint `parent`
    /// (qualified) given back the names `leaves` had: made again on the
    /// partitioned table, PostgreSQL names them itself.
    pub(super) fn pieces_named(&self, parent: &str, leaves: &[Leaf]) -> Vec<Action> {
        leaves
            .iter()
            .filter_map(|leaf| {
                let partition = self.snapshot.relation(leaf.partition)?;
                Some(Action::Index(Index::NamePiece {
                    parent: parent.to_string(),
                    partition: partition.sql_name(),
                    name: leaf.name.clone(),
                }))
            })
            .collect()
    }

    /// The pieces of the table's primary key on its partitions, as named
    /// before (found by kind and column names).
    pub(super) fn key_leaves(&self) -> Vec<Leaf> {
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

    /// The comments, privileges and NOT NULL constraint names of the
    /// changed columns, given to the new ones (once they have the old
    /// names).
    pub(super) fn extras(&self) -> Vec<Action> {
        let mut out: Vec<Action> = self
            .dependents
            .others
            .iter()
            .filter_map(|o| o.remade())
            .flat_map(|(_, make)| make)
            .collect();
        for extras in &self.dependents.columns {
            let Some(table) = self.snapshot.relation(extras.table) else {
                continue;
            };
            let Some(column) = table.column(extras.num) else {
                continue;
            };
            let t = table.sql_name();
            if let Some(name) = &extras.not_null_name {
                out.push(Action::Table(Table::NameNotNull {
                    table: t.clone(),
                    column: column.name.clone(),
                    name: name.clone(),
                }));
            }
            if let Some(text) = &extras.comment {
                out.push(Action::Object(Object::Comment {
                    on: format!("COLUMN {t}.{}", quote_ident(&column.name)),
                    text: text.clone(),
                }));
            }
            for g in extras.grants.iter().flatten() {
                out.push(Action::Object(Object::Grant(crate::action::Grant {
                    privilege: g.privilege.clone(),
                    column: Some(column.name.clone()),
                    on: t.clone(),
                    grantee: g.grantee.clone(),
                    grantable: g.grantable,
                })));
            }
        }
        out
    }
}

//! A key migration as one list of typed actions ([`KeyActions`]), made
//! once by [`Migration::actions`]; the two modes of `migrate-key` are two
//! schedules of it (`ops::migrate_key`): everything in one transaction,
//! or prepared, filled in batches, swapped in a short step and validated
//! after. No SQL is written here: each [`Action`] renders its own.
//!
//! A [`Move`] is one thing that moves to the new columns (the key, a
//! reference, an index, a constraint, a foreign key) with where each
//! schedule puts its actions: all at once in one transaction; in batches,
//! an index built concurrently before the swap and adopted in it, a NOT
//! NULL proved by a CHECK validated before it, a constraint made `NOT
//! VALID` in it and validated after.

use super::dependents::{ConstraintDependent, IndexDependent, Leaf};
use super::substitute::{index_over, Remake};
use super::values::{equal, family, Becomes, Family};
use super::{by_column, cut, cut_to, names, new_column, old_reference, piece, temporary};
use super::{Migration, NewKeys, Reference};
use crate::action::{Action, Deferrable, KeyKind, RelationKind, Timing, UserTrigger};
use uuidforge_db::catalog::{RelKind, Relation};
use uuidforge_db::error::DbError;
use uuidforge_db::introspect::Partition;
use uuidforge_ident::{qualified, quote_ident};

/// Where the key map (old key as text → new UUID) lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyMap {
    /// A temporary table, gone at commit: a change in one transaction.
    Temporary,
    /// A table in the key's schema, kept until the change's last step: a
    /// change in batches outlives its sessions.
    Kept,
}

/// One thing moved to the new columns, as each schedule places it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Move {
    /// In one transaction, in order.
    pub at_once: Vec<Action>,
    /// In batches, before the swap: indexes built concurrently, each with
    /// what it is for.
    pub build: Vec<(String, Action)>,
    /// In batches, before the swap: a NOT NULL proved by a CHECK added
    /// `NOT VALID` (writers wait briefly) and validated (writers go on).
    pub prove: Vec<(Action, Action)>,
    /// In batches, in the swap, in order.
    pub swap: Vec<Action>,
    /// In batches, after the swap, writers going on.
    pub validate: Vec<Action>,
    /// In batches, after those, writers waiting: a partitioned table's
    /// foreign key attaching its partitions' copies.
    pub attach: Vec<Action>,
    /// In batches, after the attachments, writers going on.
    pub validate_attached: Vec<Action>,
}

impl Move {
    /// Actions placed the same in both schedules.
    fn same(actions: Vec<Action>) -> Move {
        Move {
            at_once: actions.clone(),
            swap: actions,
            ..Move::default()
        }
    }
}

/// A new column filled from the key map or the referenced row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fill {
    /// The column being filled (its name before the swap), for messages.
    pub column: String,
    /// The table (quoted, qualified).
    pub table: String,
    /// Its pieces a batch reaches one by one: its partitions, or itself,
    /// as (quoted name, display name).
    pub pieces: Vec<(String, String)>,
    /// What is set, over row `x`.
    pub set: String,
    /// The relations joined.
    pub from: Option<String>,
    /// The rows filled (those left unfilled, in batches).
    pub condition: String,
    /// A 64-bit hash of the row's other columns, over `x` (what a batch
    /// compares before and after).
    pub row_hash: String,
}

impl Fill {
    /// The fill as one statement over the whole table.
    pub fn update(&self) -> Action {
        Action::Update {
            table: self.table.clone(),
            set: self.set.clone(),
            from: self.from.clone(),
            condition: self.condition.clone(),
        }
    }
}

/// The triggers that keep a table's new columns right for rows others
/// write while a change in batches runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writers {
    /// Made in the first step.
    pub make: Vec<Action>,
    /// Dropped in the swap.
    pub drop: Vec<Action>,
}

/// A key migration as one list of actions, by phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyActions {
    /// The key map (quoted; qualified when kept).
    pub map: String,
    /// It made.
    pub make_map: Action,
    /// It dropped, when kept.
    pub drop_map: Option<Action>,
    /// The new columns, one statement per table.
    pub columns: Vec<Action>,
    /// Triggers for rows written meanwhile, per table (batches only).
    pub writers: Vec<Writers>,
    /// The new keys, computed and copied into the map.
    pub keys: NewKeys,
    /// What the swap needs out of the way: views, foreign keys, what sits
    /// on the changed columns, the primary key. In one transaction before
    /// the fill (no index to maintain while every row is written), in
    /// batches at the start of the swap.
    pub release: Vec<Action>,
    /// The application's triggers, kept from firing on the fill.
    pub triggers: Vec<UserTrigger>,
    /// The new columns filled: the key's first, then each reference's.
    pub fills: Vec<Fill>,
    /// The key, the references, the constraints, indexes and foreign keys
    /// over them, in order.
    pub moves: Vec<Move>,
    /// The changed columns' comments, privileges and NOT NULL names.
    pub extras: Vec<Action>,
    /// The views made again.
    pub views: Vec<Action>,
}

/// The setting a backfill transaction sets so that the writer triggers
/// leave its own updates alone.
pub const BACKFILL_SETTING: &str = "uuidforge_migrate.backfill";

impl<'a> Migration<'a> {
    /// The migration as one list of actions, its key map kept as `map`
    /// says. Refused where a definition cannot be made over the new
    /// columns before the swap (batches only read those).
    pub fn actions(&self, map: KeyMap) -> Result<KeyActions, DbError> {
        let map_name = match map {
            KeyMap::Temporary => "uuidforge_keymap".to_string(),
            KeyMap::Kept => qualified(
                &self.key.table.schema,
                &cut(&format!("uuidforge_keymap_{}", self.key.table.oid)),
            ),
        };
        let mut moves = vec![self.key_move()];
        moves.extend(
            by_column(&self.references)
                .into_iter()
                .map(|r| self.reference_move(r)),
        );
        // Keys and unique constraints before the foreign keys that may
        // reference them.
        for c in &self.dependents.constraints {
            moves.push(self.constraint_move(c)?);
        }
        for i in &self.dependents.indexes {
            moves.push(self.index_move(i)?);
        }
        moves.extend(self.foreign_key_moves());
        Ok(KeyActions {
            make_map: Action::CreateTable {
                table: map_name.clone(),
                columns: "old text PRIMARY KEY, new uuid NOT NULL UNIQUE".into(),
                temporary: map == KeyMap::Temporary,
                if_not_exists: false,
            },
            drop_map: (map == KeyMap::Kept).then(|| Action::DropTable {
                table: map_name.clone(),
            }),
            columns: self.new_columns(),
            writers: self.writers(&map_name),
            keys: NewKeys {
                read: super::checks::read_keys_sql(
                    self,
                    &format!(
                        " WHERE x.{} IS NULL",
                        quote_ident(&new_column(&self.key.column.name))
                    ),
                ),
                map: map_name.clone(),
                ordered: self.order_column.is_some(),
            },
            release: self.release(),
            triggers: self.triggers.clone(),
            fills: self.fills(&map_name),
            moves,
            extras: self.extras(),
            views: Action::create_views(&self.views, &self.snapshot.user),
            map: map_name,
        })
    }

    /// The tables written, each with its new columns' names and types:
    /// the key's table first.
    fn new_columns(&self) -> Vec<Action> {
        let mut tables: Vec<(&Relation, Vec<(String, String)>)> = vec![(
            self.key.table,
            vec![(new_column(&self.key.column.name), "uuid".into())],
        )];
        for r in by_column(&self.references) {
            let column = (new_column(&r.column.name), self.new_type(r));
            match tables.iter_mut().find(|(t, _)| t.oid == r.table.oid) {
                Some((_, columns)) => columns.push(column),
                None => tables.push((r.table, vec![column])),
            }
        }
        tables
            .into_iter()
            .map(|(t, columns)| Action::AddColumns {
                table: t.sql_name(),
                columns,
            })
            .collect()
    }

    /// The foreign keys, views and what sits on the changed columns
    /// dropped, then the primary key.
    fn release(&self) -> Vec<Action> {
        // Deferred foreign key checks would leave events pending, and a
        // table with pending events cannot be altered: check as rows
        // change.
        let mut out = vec![Action::SetConstraints(Timing::Immediate)];
        out.extend(Action::drop_views(&self.views));
        for r in self.references.iter().filter(|r| r.fk.is_some()) {
            out.push(Action::DropConstraint {
                table: r.declared_on.sql_name(),
                name: r.constraint_name(),
            });
        }
        for c in &self.dependents.constraints {
            if let Some(table) = self.snapshot.relation(c.table) {
                out.push(Action::DropConstraint {
                    table: table.sql_name(),
                    name: c.name.clone(),
                });
            }
        }
        for i in &self.dependents.indexes {
            out.push(Action::DropIndex {
                index: qualified(&i.schema, &i.name),
            });
        }
        out.push(Action::DropConstraint {
            table: self.key.table.sql_name(),
            name: self.key.pk.name.clone(),
        });
        out
    }

    /// The tables a statement on `r` reaches one by one: its partitions,
    /// or itself, as (quoted name, display name).
    fn pieces(&self, r: &Relation) -> Vec<(String, String)> {
        if r.kind == RelKind::PartitionedTable {
            self.leaves(r.oid)
                .iter()
                .map(|p| (p.sql_name(), format!("{}.{}", p.schema, p.name)))
                .collect()
        } else {
            vec![(r.sql_name(), r.display_name())]
        }
    }

    /// The partitions of `table` when it is partitioned.
    fn leaves_of(&self, table: &Relation) -> Vec<&Partition> {
        if table.kind == RelKind::PartitionedTable {
            self.leaves(table.oid)
        } else {
            Vec::new()
        }
    }

    /// The new columns filled: the key's from the map, each reference's
    /// from the row it names (a text reference from the key's text, its
    /// other values as they are).
    fn fills(&self, map: &str) -> Vec<Fill> {
        let t = self.key.table.sql_name();
        let k = quote_ident(&self.key.column.name);
        let kn = quote_ident(&new_column(&self.key.column.name));
        let hash = |table: &Relation| {
            super::checks::row_hash(table, &super::checks::changed_columns(self, table))
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
    fn not_null_check(&self, table_oid: u32, column: &str) -> String {
        cut(&format!("uuidforge_nn_{table_oid}_{column}"))
    }

    /// `column` of `table` made NOT NULL once it has its final name
    /// (`before_swap` until then): in batches proved first by a CHECK,
    /// dropped once it served.
    fn not_null(&self, table: &Relation, column: &str) -> Move {
        let t = table.sql_name();
        let check = self.not_null_check(table.oid, column);
        let set = Action::SetNotNull {
            table: t.clone(),
            column: column.to_string(),
        };
        Move {
            at_once: vec![set.clone()],
            prove: vec![(
                Action::ReplaceCheck {
                    table: t.clone(),
                    name: check.clone(),
                    condition: format!("{} IS NOT NULL", quote_ident(&new_column(column))),
                },
                Action::ValidateConstraint {
                    table: t.clone(),
                    name: check.clone(),
                },
            )],
            swap: vec![
                set,
                Action::DropConstraint {
                    table: t,
                    name: check,
                },
            ],
            ..Move::default()
        }
    }

    /// The new key's unique index, built before the swap.
    fn new_key_index(&self) -> String {
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
    fn build_unique(
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
                    Action::CreateIndexConcurrently {
                        index: qualified(&schema, &index),
                        definition: crate::action::statements(&[Action::IndexOn {
                            name: index,
                            table: target,
                            columns: columns.to_string(),
                            unique: true,
                            concurrently: true,
                            if_not_exists: false,
                        }])
                        .concat(),
                    },
                )
            })
            .collect()
    }

    /// The key: its default and sequence gone, the columns exchanged,
    /// NOT NULL, the primary key on the new column (in batches on the
    /// index built before), the old values' unique index, the default
    /// `uuidv7()`.
    fn key_move(&self) -> Move {
        let t = self.key.table.sql_name();
        let k = &self.key.column.name;
        let rename = |from: &str, to: &str| Action::RenameColumn {
            relation: t.clone(),
            kind: RelationKind::Table,
            from: from.to_string(),
            to: to.to_string(),
        };
        let mut m = Move::same(vec![
            Action::DropKeyDefault {
                table: t.clone(),
                column: k.clone(),
            },
            rename(k, &self.old_name),
            // Rows made from now on have no old key.
            Action::DropNotNull {
                table: t.clone(),
                column: self.old_name.clone(),
            },
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
        m.at_once.push(Action::AddConstraint {
            table: t.clone(),
            name: pk.clone(),
            definition: format!("PRIMARY KEY ({pk_columns})"),
            not_valid: false,
        });
        m.at_once
            .extend(self.pieces_named(&qualified(&self.key.table.schema, &pk), &self.key_leaves()));
        let old_index = Action::IndexOn {
            name: self.old_index_name(),
            table: t.clone(),
            columns: old_columns,
            unique: true,
            concurrently: false,
            if_not_exists: false,
        };
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
            m.swap.push(Action::AddKeyUsingIndex {
                table: t.clone(),
                name: pk.clone(),
                kind: KeyKind::Primary,
                index: new_key_index,
                deferrable: Deferrable::No,
            });
        } else {
            // Each partition's key on its prebuilt index (keeping its
            // name), then the table's, which attaches them; then the old
            // values' index, which attaches theirs (no index is built
            // under the lock).
            let named = self.key_leaves();
            for p in &leaves {
                m.swap.push(Action::AddKeyUsingIndex {
                    table: p.sql_name(),
                    name: leaf_name(&named, p.oid, &pk),
                    kind: KeyKind::Primary,
                    index: piece(&new_key_index, p.oid),
                    deferrable: Deferrable::No,
                });
            }
            m.swap.push(Action::AddConstraint {
                table: t.clone(),
                name: pk,
                definition: format!("PRIMARY KEY ({pk_columns})"),
                not_valid: false,
            });
            m.swap.push(old_index);
        }
        if let Some(generator) = &self.generator {
            let default = Action::SetDefault {
                table: t,
                column: k.clone(),
                expression: generator.call(),
            };
            m.at_once.push(default.clone());
            m.swap.push(default);
        }
        m
    }

    /// A reference column exchanged with its new one, NOT NULL where it
    /// was.
    fn reference_move(&self, r: &Reference) -> Move {
        let t = r.table.sql_name();
        let c = &r.column.name;
        let rename = |from: &str, to: &str| Action::RenameColumn {
            relation: t.clone(),
            kind: RelationKind::Table,
            from: from.to_string(),
            to: to.to_string(),
        };
        let mut m = Move::same(vec![
            rename(c, &old_reference(c)),
            rename(&new_column(c), c),
        ]);
        if r.column.not_null {
            // The old one's first: its NOT NULL constraint (PostgreSQL 18
            // names them) gives its name to the new one's.
            let drop = Action::DropNotNull {
                table: t.clone(),
                column: old_reference(c),
            };
            m.at_once.push(drop.clone());
            m.swap.push(drop);
            let not_null = self.not_null(r.table, c);
            m.at_once.extend(not_null.at_once);
            m.prove = not_null.prove;
            m.swap.extend(not_null.swap);
        }
        m
    }

    /// `definition` made again as `remake` over the new columns of
    /// `table`.
    fn over_new_columns(
        &self,
        definition: &str,
        table: u32,
        remake: Remake,
    ) -> Result<String, DbError> {
        let watched = self.watched();
        let renames: Vec<(String, String)> =
            super::dependents::changed_in(self.snapshot, table, &watched)
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
    fn build_from_definition(
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
                    Action::CreateIndexConcurrently {
                        index: qualified(&schema, &index),
                        definition: statement,
                    },
                ))
            })
            .collect()
    }

    /// A constraint over a changed column made again from its definition
    /// over the new column: a key or unique constraint in batches on an
    /// index built before the swap, a CHECK `NOT VALID` and validated
    /// after; with its partitions' pieces' names and its comment.
    fn constraint_move(&self, c: &ConstraintDependent) -> Result<Move, DbError> {
        let table = self
            .snapshot
            .relation(c.table)
            .ok_or_else(|| DbError::unreadable("constraint", "table not found"))?;
        let t = table.sql_name();
        let comment = c.comment.as_ref().map(|text| Action::Comment {
            on: format!("CONSTRAINT {} ON {t}", quote_ident(&c.name)),
            text: text.clone(),
        });
        let mut m = Move::default();
        m.at_once.push(Action::AddConstraint {
            table: t.clone(),
            name: c.name.clone(),
            definition: c.definition.clone(),
            not_valid: false,
        });
        m.at_once
            .extend(self.pieces_named(&qualified(&c.schema, &c.name), &c.leaves));
        match c.kind.as_str() {
            "c" => {
                m.swap.push(Action::AddConstraint {
                    table: t.clone(),
                    name: c.name.clone(),
                    definition: c.definition.trim_end_matches(" NOT VALID").to_string(),
                    not_valid: true,
                });
                if c.validated {
                    m.validate.push(Action::ValidateConstraint {
                        table: t.clone(),
                        name: c.name.clone(),
                    });
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
                    m.swap.push(Action::AddKeyUsingIndex {
                        table: t.clone(),
                        name: c.name.clone(),
                        kind,
                        index: temporary(&c.name),
                        deferrable,
                    });
                } else {
                    for p in &leaves {
                        m.swap.push(Action::AddKeyUsingIndex {
                            table: p.sql_name(),
                            name: leaf_name(&c.leaves, p.oid, &c.name),
                            kind,
                            index: piece(&temporary(&c.name), p.oid),
                            deferrable,
                        });
                    }
                    m.swap.push(Action::AddConstraint {
                        table: t,
                        name: c.name.clone(),
                        definition: c.definition.clone(),
                        not_valid: false,
                    });
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
    fn index_move(&self, i: &IndexDependent) -> Result<Move, DbError> {
        let table = self
            .snapshot
            .relation(i.table)
            .ok_or_else(|| DbError::unreadable("index", "table not found"))?;
        let comment = i.comment.as_ref().map(|text| Action::Comment {
            on: format!("INDEX {}", qualified(&i.schema, &i.name)),
            text: text.clone(),
        });
        let made = Action::CreateIndex {
            definition: i.definition.clone(),
        };
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
            m.swap.push(Action::RenameIndex {
                schema: table.schema.clone(),
                from: temporary(&i.name),
                to: i.name.clone(),
            });
        } else {
            m.swap.push(made);
            for p in &leaves {
                if let Some(leaf) = i.leaves.iter().find(|l| l.partition == p.oid) {
                    m.swap.push(Action::RenameIndex {
                        schema: p.schema.clone(),
                        from: piece(&temporary(&i.name), p.oid),
                        to: leaf.name.clone(),
                    });
                }
            }
        }
        m.at_once.extend(comment.clone());
        m.swap.extend(comment);
        Ok(m)
    }

    /// The foreign keys made again over the new columns, with their
    /// actions and deferrability: in batches `NOT VALID` and validated
    /// after the swap. PostgreSQL 15 makes no `NOT VALID` foreign key on a
    /// partitioned table: each partition gets one, validated after the
    /// swap, and the table's then attaches them. A partition's own foreign
    /// key is made again on it `NOT VALID` and validated after the
    /// partitioned tables' have attached their partitions' copies; where
    /// its table has one too, it is made after that attachment (which
    /// would otherwise take it in their place: PostgreSQL 18 attaches a
    /// not yet valid one as well), the table's foreign key holding
    /// meanwhile.
    fn foreign_key_moves(&self) -> Vec<Move> {
        let mut moves = Vec::new();
        for r in self.references.iter().filter(|r| r.fk.is_some()) {
            let Some(fk) = r.fk else { continue };
            let clause = r.fk_clause(&self.key);
            let on = r.declared_on.sql_name();
            let add = |table: String, name: String, not_valid: bool| Action::AddConstraint {
                table,
                name,
                definition: clause.clone(),
                not_valid,
            };
            let validate = |table: String, name: String| Action::ValidateConstraint { table, name };
            let mut m = Move {
                at_once: vec![add(on.clone(), fk.name.clone(), false)],
                ..Move::default()
            };
            if r.declared_on_table() {
                let leaves = self.leaves_of(r.table);
                if leaves.is_empty() {
                    m.swap.push(add(on.clone(), fk.name.clone(), true));
                    m.validate.push(validate(on, fk.name.clone()));
                } else {
                    for p in leaves {
                        let name = cut(&format!("{}_{}", cut_to(&fk.name, 50), p.oid));
                        m.swap.push(add(p.sql_name(), name.clone(), true));
                        m.validate.push(validate(p.sql_name(), name));
                    }
                    m.attach.push(add(on, fk.name.clone(), false));
                }
            } else {
                let table_has_one = self.references.iter().any(|o| {
                    o.declared_on_table()
                        && o.table.oid == r.table.oid
                        && o.column.num == r.column.num
                });
                let made = add(on.clone(), fk.name.clone(), true);
                if table_has_one {
                    m.attach.push(made);
                } else {
                    m.swap.push(made);
                }
                m.validate_attached.push(validate(on, fk.name.clone()));
            }
            moves.push(m);
        }
        moves
    }

    /// The pieces of the partitioned index or constraint `parent`
    /// (qualified) given back the names `leaves` had: made again on the
    /// partitioned table, PostgreSQL names them itself.
    fn pieces_named(&self, parent: &str, leaves: &[Leaf]) -> Vec<Action> {
        leaves
            .iter()
            .filter_map(|leaf| {
                let partition = self.snapshot.relation(leaf.partition)?;
                Some(Action::NamePiece {
                    parent: parent.to_string(),
                    partition: partition.sql_name(),
                    name: leaf.name.clone(),
                })
            })
            .collect()
    }

    /// The pieces of the table's primary key on its partitions, as named
    /// before (found by kind and column names).
    fn key_leaves(&self) -> Vec<Leaf> {
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
    fn extras(&self) -> Vec<Action> {
        let mut out = Vec::new();
        for extras in &self.dependents.columns {
            let Some(table) = self.snapshot.relation(extras.table) else {
                continue;
            };
            let Some(column) = table.column(extras.num) else {
                continue;
            };
            let t = table.sql_name();
            if let Some(name) = &extras.not_null_name {
                out.push(Action::NameNotNull {
                    table: t.clone(),
                    column: column.name.clone(),
                    name: name.clone(),
                });
            }
            if let Some(text) = &extras.comment {
                out.push(Action::Comment {
                    on: format!("COLUMN {t}.{}", quote_ident(&column.name)),
                    text: text.clone(),
                });
            }
            for g in extras.grants.iter().flatten() {
                out.push(Action::Grant(crate::action::Grant {
                    privilege: g.privilege.clone(),
                    column: Some(column.name.clone()),
                    on: t.clone(),
                    grantee: g.grantee.clone(),
                    grantable: g.grantable,
                }));
            }
        }
        out
    }

    /// The triggers of each table written: the new key of a row inserted
    /// or whose key changed (from the map, else a fresh UUIDv7), the new
    /// reference of a row whose reference changed (an updated row may
    /// move to a page the backfill has passed: an update gives it its new
    /// value as an insert does).
    fn writers(&self, map: &str) -> Vec<Writers> {
        let mut tables: Vec<(&Relation, Vec<&Reference>)> = vec![(self.key.table, Vec::new())];
        for r in by_column(&self.references) {
            match tables.iter_mut().find(|(t, _)| t.oid == r.table.oid) {
                Some((_, columns)) => columns.push(r),
                None => tables.push((r.table, vec![r])),
            }
        }
        tables
            .into_iter()
            .map(|(table, columns)| {
                let function = qualified(
                    &self.key.table.schema,
                    &format!("uuidforge_migrate_{}", table.oid),
                );
                Writers {
                    make: vec![
                        Action::CreateTriggerFunction {
                            function: function.clone(),
                            body: self.trigger_body(map, table, &columns),
                        },
                        Action::CreateRowTrigger {
                            name: "uuidforge_migrate".into(),
                            table: table.sql_name(),
                            when: format!(
                                "current_setting({}, true) IS DISTINCT FROM 'on'",
                                uuidforge_ident::quote_literal(BACKFILL_SETTING)
                            ),
                            function: function.clone(),
                        },
                    ],
                    drop: vec![
                        Action::DropTrigger {
                            name: "uuidforge_migrate".into(),
                            table: table.sql_name(),
                        },
                        Action::DropFunction { function },
                    ],
                }
            })
            .collect()
    }

    /// A UUIDv7 from the clock, in SQL, for rows written while the
    /// migration runs: the new key's generator or, without one
    /// (`--no-default`), a version 4 UUID whose first 48 bits become the
    /// Unix milliseconds (RFC 9562 §5.7).
    fn uuidv7_sql(&self) -> String {
        match &self.generator {
            Some(generator) => generator.call(),
            None => "encode(set_byte(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::int8) FROM 3) FROM 1 FOR 6), 6, (get_byte(uuid_send(gen_random_uuid()), 6) & 15) | 112), 'hex')::uuid".into(),
        }
    }

    fn trigger_body(&self, map: &str, table: &Relation, columns: &[&Reference]) -> String {
        let t = self.key.table.sql_name();
        let k = quote_ident(&self.key.column.name);
        let kn = quote_ident(&new_column(&self.key.column.name));
        let mut body = String::new();
        if table.oid == self.key.table.oid {
            let v7 = self.uuidv7_sql();
            body.push_str(&format!(
                "IF TG_OP = 'INSERT' OR NEW.{k} IS DISTINCT FROM OLD.{k} OR NEW.{kn} IS NULL THEN NEW.{kn} := (SELECT m.new FROM {map} m WHERE m.old = NEW.{k}::text); IF NEW.{kn} IS NULL AND NEW.{k} IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.{k} IS DISTINCT FROM OLD.{k}) THEN NEW.{kn} := {v7}; END IF; END IF; "
            ));
        }
        for r in columns {
            let (c, cn) = (
                quote_ident(&r.column.name),
                quote_ident(&new_column(&r.column.name)),
            );
            let changed: String = r
                .pairs(&self.key)
                .iter()
                .map(|(o, _)| format!(" OR NEW.{o} IS DISTINCT FROM OLD.{o}", o = quote_ident(o)))
                .collect();
            let value = match self.becomes(r) {
                Becomes::Uuid => {
                    let own = if table.oid == self.key.table.oid {
                        format!("WHEN NEW.{c} = NEW.{k} THEN NEW.{kn} ")
                    } else {
                        String::new()
                    };
                    format!(
                        "CASE WHEN NEW.{c} IS NULL THEN NULL {own}ELSE (SELECT p.{kn} FROM {t} p WHERE {}{}) END",
                        equal(self.snapshot, &self.key, r.column, "p", "NEW"),
                        r.other_join(&self.key, "NEW", "p")
                    )
                }
                Becomes::Text => format!(
                    "CASE WHEN NEW.{c} IS NULL THEN NULL ELSE coalesce((SELECT p.{kn}::text FROM {t} p WHERE p.{k} = {}), NEW.{c}) END",
                    self.key_of_text(&format!("NEW.{c}"))
                ),
            };
            body.push_str(&format!(
                "IF TG_OP = 'INSERT' OR NEW.{c} IS DISTINCT FROM OLD.{c}{changed} OR NEW.{cn} IS NULL THEN NEW.{cn} := {value}; END IF; "
            ));
        }
        body
    }
}

/// The primary key's columns as named before the swap (the old key by its
/// own name).
fn pk_columns_before(m: &Migration) -> String {
    names(&m.key.pk_columns())
}

/// The name of a piece on partition `partition` among `named`, else
/// PostgreSQL's way from `name`.
fn leaf_name(named: &[Leaf], partition: u32, name: &str) -> String {
    named
        .iter()
        .find(|l| l.partition == partition)
        .map_or_else(|| piece(name, partition), |l| l.name.clone())
}

/// The names of columns `nums` of `r`.
fn column_names(r: &Relation, nums: &[i16]) -> Vec<String> {
    nums.iter()
        .filter_map(|&n| r.column(n).map(|c| c.name.clone()))
        .collect()
}

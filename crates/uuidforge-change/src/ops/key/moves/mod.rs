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

use super::dependents::Leaf;
use super::{by_column, cut, new_column, old_reference, piece};
use super::{Migration, NewKeys};
use crate::action::{Action, Constraint, Index, Table, Timing, Transaction, UserTrigger};
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
        Action::Table(Table::Update {
            table: self.table.clone(),
            set: self.set.clone(),
            from: self.from.clone(),
            condition: self.condition.clone(),
        })
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
    /// Last, before the change commits (in batches, at the end of the
    /// swap): nothing but the old values' unique index is left on an old
    /// column, or the transaction fails naming what is.
    pub guard: Action,
    /// Published tables whose replica identity (their key, or an index on
    /// a changed column) goes during a change in one transaction:
    /// `REPLICA IDENTITY FULL` first.
    pub identity_full: Vec<Action>,
    /// Their own identity back, after everything is made again (in
    /// batches, in the swap).
    pub identity_back: Vec<Action>,
}

mod columns;
mod dependents;
mod foreign_keys;
mod writers;

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
        // Definitions naming old keys take the new ones from the map.
        let new_keys = |actions: Vec<Action>| -> Vec<Action> {
            actions
                .into_iter()
                .map(|a| super::literals::with_new_keys(a, &map_name))
                .collect()
        };
        for m in &mut moves {
            m.at_once = new_keys(std::mem::take(&mut m.at_once));
            m.swap = new_keys(std::mem::take(&mut m.swap));
        }
        Ok(KeyActions {
            make_map: Action::Table(Table::Create {
                table: map_name.clone(),
                columns: "old text PRIMARY KEY, new uuid NOT NULL UNIQUE".into(),
                temporary: map == KeyMap::Temporary,
                if_not_exists: false,
            }),
            drop_map: (map == KeyMap::Kept).then(|| {
                Action::Table(Table::Drop {
                    table: map_name.clone(),
                })
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
                given: self.given_keys.clone(),
            },
            release: self.release(),
            triggers: self.quieted_triggers(),
            fills: self.fills(&map_name),
            moves,
            extras: new_keys(self.extras()),
            views: new_keys(Action::create_views(&self.views, &self.snapshot.user)),
            guard: self.old_columns_guard(),
            identity_full: self.published.iter().filter_map(|p| p.full()).collect(),
            identity_back: self.published.iter().filter_map(|p| p.back()).collect(),
            map: map_name,
        })
    }

    /// The application's triggers to keep quiet during the fill: all but
    /// those dropped before it to be made again over the new column.
    fn quieted_triggers(&self) -> Vec<UserTrigger> {
        let remade: Vec<&str> = self
            .dependents
            .others
            .iter()
            .filter(|o| o.kind == "trigger" && o.carried)
            .filter_map(|o| o.drop_target.as_deref())
            .collect();
        self.triggers
            .iter()
            .filter(|t| {
                let target = format!(
                    "{} ON {}",
                    quote_ident(&t.name),
                    qualified(&t.schema, &t.table_name)
                );
                !remade.contains(&target.as_str())
            })
            .cloned()
            .collect()
    }

    /// The check that only the old values' unique index (with its pieces
    /// on partitions, however named) depends on the old key column and
    /// nothing on an old reference column.
    fn old_columns_guard(&self) -> Action {
        let mut columns = vec![(self.key.table.sql_name(), self.old_name.clone())];
        for r in by_column(&self.references) {
            columns.push((r.table.sql_name(), old_reference(&r.column.name)));
        }
        let index = self.old_index_name();
        let mut except = vec![qualified(&self.key.table.schema, &index)];
        except.extend(
            self.leaves_of(self.key.table)
                .iter()
                .map(|p| qualified(&p.schema, &piece(&index, p.oid))),
        );
        Action::Transaction(Transaction::NothingDependsOn { columns, except })
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
            .map(|(t, columns)| {
                Action::Table(Table::AddColumns {
                    table: t.sql_name(),
                    columns,
                })
            })
            .collect()
    }

    /// The foreign keys, views and what sits on the changed columns
    /// dropped, then the primary key.
    fn release(&self) -> Vec<Action> {
        // Deferred foreign key checks would leave events pending, and a
        // table with pending events cannot be altered: check as rows
        // change.
        let mut out = vec![Action::Transaction(Transaction::SetConstraints(
            Timing::Immediate,
        ))];
        out.extend(Action::drop_views(&self.views));
        for r in self.references.iter().filter(|r| r.fk.is_some()) {
            out.push(Action::Constraint(Constraint::Drop {
                table: r.declared_on.sql_name(),
                name: r.constraint_name(),
            }));
        }
        for c in &self.dependents.constraints {
            if let Some(table) = self.snapshot.relation(c.table) {
                out.push(Action::Constraint(Constraint::Drop {
                    table: table.sql_name(),
                    name: c.name.clone(),
                }));
            }
        }
        for i in &self.dependents.indexes {
            out.push(Action::Index(Index::Drop {
                index: qualified(&i.schema, &i.name),
            }));
        }
        out.push(Action::Constraint(Constraint::Drop {
            table: self.key.table.sql_name(),
            name: self.key.pk.name.clone(),
        }));
        // Statistics and column-list triggers on a changed column, made
        // again after (in `extras`).
        out.extend(
            self.dependents
                .others
                .iter()
                .filter_map(|o| o.remade())
                .flat_map(|(drop, _)| drop),
        );
        out
    }

    /// The tables a statement on `r` reaches one by one: its partitions,
    /// or itself, as (quoted name, display name).
    pub(super) fn pieces(&self, r: &Relation) -> Vec<(String, String)> {
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
    pub(super) fn leaves_of(&self, table: &Relation) -> Vec<&Partition> {
        if table.kind == RelKind::PartitionedTable {
            self.leaves(table.oid)
        } else {
            Vec::new()
        }
    }
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

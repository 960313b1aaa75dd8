//! The key itself: its default and sequence gone, the columns exchanged,
//! NOT NULL (proved before the swap in batches), the primary key on the
//! new column (in batches on an index built before), the old values'
//! unique index, the new default from the best generator the database has
//! (whether the extension orders across sessions it says itself).

use super::{Kind, Migration, Placed, Schedule, SoFar, Target};
use crate::action::{Action, Build, Constraint, Deferrable, Index, KeyKind, RelationKind, Table};
use crate::ops::key::dependents::Leaf;
use crate::ops::key::model::leaf_name;
use crate::ops::key::moves::Move;
use crate::ops::key::names;
use crate::ops::key::naming::{new_column, new_key_index, not_null_check, piece};
use crate::ops::key::phase::Phase;
use crate::ops::{Answers, Named, Read, Reading};
use uuidforge_db::catalog::Relation;
use uuidforge_db::error::DbError;
use uuidforge_db::generators::Generator;
use uuidforge_ident::{qualified, quote_ident};

/// The read of whether the extension's `uuidv7()` is server-wide.
const SERVER_WIDE: Named<bool> = Named::new(
    "extension_server_wide",
    "ask the extension whether its order is server-wide",
);

pub(super) struct TheKey;

impl Kind for TheKey {
    fn name(&self) -> &'static str {
        "the key"
    }

    fn reads(&self, target: &Target, _: &SoFar) -> Result<Vec<Read>, DbError> {
        let Some(Generator::Extension { function, .. }) = &target.generator else {
            return Ok(Vec::new());
        };
        // Whether the extension orders across sessions: it knows (a role
        // that is not a superuser may not read shared_preload_libraries).
        let schema = function.rsplit_once('.').map_or("", |(s, _)| s);
        Ok(vec![SERVER_WIDE.read(uuidforge_db::plan::Query::new(
            format!(
                "SELECT {}.uuidv7_is_server_wide()::text",
                quote_ident(schema)
            ),
        ))])
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut out = vec![Placed::action(
            Phase::DropKey,
            Action::Constraint(Constraint::Drop {
                table: m.key.table.sql_name(),
                name: m.key.pk.name.clone(),
            }),
        )];
        if !schedule.in_batches() {
            out.push(Placed::action(Phase::DropDefaults, drop_key_default(m)));
        }
        out.extend(key_move(m).placed(schedule));
        Ok(out)
    }
}

/// What the new key's default calls, with what the extension said of its
/// order.
pub(crate) fn generator(target: &Target, answers: &Answers) -> Result<Option<Generator>, DbError> {
    let mut generator = target.generator.clone();
    if let Some(Generator::Extension { server_wide, .. }) = generator.as_mut() {
        if let Some(answer) = answers.answer(&SERVER_WIDE)? {
            *server_wide = Some(answer);
        }
    }
    Ok(generator)
}

/// The key's identity, sequence or default dropped.
fn drop_key_default(m: &Migration) -> Action {
    Action::Table(Table::DropKeyDefault {
        table: m.key.table.sql_name(),
        column: m.key.column.name.clone(),
    })
}

/// `column` of `table` made NOT NULL once it has its final name: in
/// batches proved first by a CHECK, dropped once it served.
pub(super) fn not_null(table: &Relation, column: &str) -> Move {
    let t = table.sql_name();
    let check = not_null_check(table.oid, column);
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

/// A unique index over `columns` of `table` built concurrently before the
/// swap as `name`: on each partition of a partitioned table.
fn build_unique(
    m: &Migration,
    what: &str,
    table: &Relation,
    name: &str,
    columns: &str,
) -> Vec<(String, Action)> {
    let leaves = m.leaves_of(table);
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
                    build: Build::Columns {
                        name: index,
                        table: target,
                        columns: columns.to_string(),
                        unique: true,
                    },
                }),
            )
        })
        .collect()
}

/// The pieces of the table's primary key on its partitions, as named
/// before (found by kind and column names).
fn key_leaves(m: &Migration) -> Vec<Leaf> {
    let wanted = m.key.pk_columns();
    m.leaves(m.key.table.oid)
        .iter()
        .filter_map(|p| {
            let leaf = m.snapshot.relation(p.oid)?;
            let k = m.snapshot.constraints.iter().find(|k| {
                k.table == p.oid
                    && k.kind == "p"
                    && k.columns
                        .iter()
                        .filter_map(|&n| leaf.column(n).map(|c| c.name.clone()))
                        .collect::<Vec<_>>()
                        == wanted
            })?;
            Some(Leaf {
                partition: p.oid,
                name: k.name.clone(),
            })
        })
        .collect()
}

/// The key: in batches its default and sequence gone, the columns
/// exchanged, NOT NULL; the primary key on the new values (in batches on
/// the index built before), the old values' unique index, the default
/// `uuidv7()`.
fn key_move(m: &Migration) -> Move {
    let t = m.key.table.sql_name();
    let k = &m.key.column.name;
    let rename = |from: &str, to: &str| {
        Action::Table(Table::RenameColumn {
            relation: t.clone(),
            kind: RelationKind::Table,
            from: from.to_string(),
            to: to.to_string(),
        })
    };
    // In one transaction the column keeps its name, NOT NULL and place,
    // and its default went before the rewrite; in batches the columns are
    // exchanged in the swap.
    let mut mv = Move {
        swap: vec![
            drop_key_default(m),
            rename(k, &m.old_name),
            // Rows made from now on have no old key.
            Action::Table(Table::DropNotNull {
                table: t.clone(),
                column: m.old_name.clone(),
            }),
            rename(&new_column(k), k),
        ],
        ..Move::default()
    };
    let not_null = not_null(m.key.table, k);
    mv.prove = not_null.prove;
    mv.swap.extend(not_null.swap);
    let pk = m.key.pk.name.clone();
    let pk_columns = names(&m.key.pk_columns());
    let old_columns = names(&m.key.pk_with(&m.old_name));
    // In one transaction: the key made, its partitions' pieces named as
    // they were, the old values' index.
    mv.at_once.push(Action::Constraint(Constraint::Add {
        table: t.clone(),
        name: pk.clone(),
        definition: format!("PRIMARY KEY ({pk_columns})"),
        not_valid: false,
    }));
    mv.at_once
        .extend(m.pieces_named(&qualified(&m.key.table.schema, &pk), &key_leaves(m)));
    let old_index = Action::Index(Index::On {
        name: m.old_index_name(),
        table: t.clone(),
        columns: old_columns,
        unique: true,
        if_not_exists: false,
    });
    mv.at_once.push(old_index.clone());
    // In batches: both indexes built before the swap (the old key still
    // has its name then), the key made on the new one.
    let new_index = new_key_index(&m.key.table.name, k);
    mv.build = build_unique(
        m,
        "index the new key",
        m.key.table,
        &new_index,
        &names(&m.key.pk_with(&new_column(k))),
    );
    mv.build.extend(build_unique(
        m,
        "index the old key (kept unique)",
        m.key.table,
        &m.old_index_name(),
        &pk_columns,
    ));
    let leaves = m.leaves_of(m.key.table);
    if leaves.is_empty() {
        mv.swap.push(Action::Constraint(Constraint::AddUsingIndex {
            table: t.clone(),
            name: pk.clone(),
            kind: KeyKind::Primary,
            index: new_index,
            deferrable: Deferrable::No,
        }));
    } else {
        // Each partition's key on its prebuilt index (keeping its name),
        // then the table's, which attaches them; then the old values'
        // index, which attaches theirs (no index is built under the lock).
        let named = key_leaves(m);
        for p in &leaves {
            mv.swap.push(Action::Constraint(Constraint::AddUsingIndex {
                table: p.sql_name(),
                name: leaf_name(&named, p.oid, &pk),
                kind: KeyKind::Primary,
                index: piece(&new_index, p.oid),
                deferrable: Deferrable::No,
            }));
        }
        mv.swap.push(Action::Constraint(Constraint::Add {
            table: t.clone(),
            name: pk,
            definition: format!("PRIMARY KEY ({pk_columns})"),
            not_valid: false,
        }));
        mv.swap.push(old_index);
    }
    if let Some(generator) = &m.generator {
        let default = Action::Table(Table::SetDefault {
            table: t,
            column: k.clone(),
            expression: generator.call(),
        });
        mv.at_once.push(default.clone());
        mv.swap.push(default);
    }
    mv
}

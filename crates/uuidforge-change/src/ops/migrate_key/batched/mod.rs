//! D1 in batches (`--batch-size`): a key migration for tables too large
//! to lock for one transaction.
//!
//! Writers keep working throughout. The plan is a list of [`BatchStep`]s,
//! each committed on its own and recorded by the runner, so that after a
//! kill -9 or a lost connection the old schema still works and `--resume`
//! goes on from the last committed step:
//!
//! 1. *prepare* (short): the new columns, the key map table (old key as
//!    text → new UUID) and triggers that keep the new columns right for
//!    rows others write from now on;
//! 2. *keys*: the new keys computed by the library and copied into the map;
//! 3. *backfill*: the new columns filled in batches of pages, one
//!    transaction each (the table first, then each reference);
//! 4. *indexes*: the new primary key, the old key's unique index, and every
//!    index and key over a changed column built `CONCURRENTLY` from its
//!    definition over the new column; `NOT NULL` proved by `CHECK`
//!    constraints added `NOT VALID` and validated without blocking writes;
//! 5. *check*: every count zero before the swap;
//! 6. *swap* (short, exclusive locks): triggers dropped, constraints moved
//!    to the prebuilt indexes, columns renamed, foreign keys and CHECK
//!    constraints made again `NOT VALID`; its transaction id recorded
//!    (`swap`): rows written after it are the application's;
//! 7. *validate* (no write blocked), *check* again (the application's rows
//!    since the swap left out), *finish* (the map dropped).

mod prepare;
mod swap;

use super::{backup, summary, touches};
use uuidforge_db::catalog::{RelKind, Relation};
use uuidforge_db::error::DbError;
use uuidforge_ident::quote_ident;
use uuidforge_db::introspect::Partition;
use crate::ops::key::checks::{self, Phase};
use crate::ops::key::substitute::{index_over, Remake};
use crate::ops::key::{by_column, cut, new_column, piece, Migration, Reference};
use crate::ops::{BatchStep, ChangePlan, Lock, Run};

/// What the phases of a batched plan share: the migration, the names it
/// makes, and the tables the triggers keep right.
struct Ctx<'m, 'a> {
    m: &'m Migration<'a>,
    /// The table (quoted, qualified), its key and the key's new column
    /// (quoted).
    t: String,
    k: String,
    kn: String,
    /// The key map (quoted, qualified).
    map: String,
    /// Locks every table, referencing tables first (a deadlock with the
    /// application's own order loses the step, which the runner tries
    /// again).
    lock_all: Lock,
    /// The table itself and each referencing table, with its reference
    /// columns.
    tables: Vec<(&'a Relation, Vec<&'m Reference<'a>>)>,
}

impl<'m, 'a> Ctx<'m, 'a> {
    fn new(m: &'m Migration<'a>) -> Ctx<'m, 'a> {
        let relation = m.key.table;
        let t = relation.sql_name();
        let mut tables: Vec<(&Relation, Vec<&Reference>)> = vec![(relation, Vec::new())];
        for r in by_column(&m.references) {
            match tables.iter_mut().find(|(t, _)| t.oid == r.table.oid) {
                Some((_, columns)) => columns.push(r),
                None => tables.push((r.table, vec![r])),
            }
        }
        Ctx {
            m,
            k: quote_ident(&m.key.column.name),
            kn: quote_ident(&new_column(&m.key.column.name)),
            map: uuidforge_ident::qualified(
                &relation.schema,
                &cut(&format!("uuidforge_keymap_{}", relation.oid)),
            ),
            lock_all: super::one_transaction::lock_all(m),
            tables,
            t,
        }
    }

    fn parted(&self, r: &Relation) -> bool {
        r.kind == RelKind::PartitionedTable
    }

    /// The tables a statement on `r` reaches one by one: its partitions,
    /// or itself, as (quoted name, display name).
    fn pieces(&self, r: &Relation) -> Vec<(String, String)> {
        if self.parted(r) {
            self.m
                .leaves(r.oid)
                .iter()
                .map(|p| (p.sql_name(), format!("{}.{}", p.schema, p.name)))
                .collect()
        } else {
            vec![(r.sql_name(), r.display_name())]
        }
    }

    fn in_schema(&self, name: &str) -> String {
        uuidforge_ident::qualified(&self.m.key.table.schema, name)
    }

    /// The trigger function of a table.
    fn function(&self, oid: u32) -> String {
        self.in_schema(&format!("uuidforge_migrate_{oid}"))
    }

    /// The CHECK proving a new column NOT NULL.
    fn not_null_check(&self, table_oid: u32, column: &str) -> String {
        quote_ident(&cut(&format!("uuidforge_nn_{table_oid}_{column}")))
    }

    /// The new key's index, built before the swap.
    fn new_key_index(&self) -> String {
        cut(&format!(
            "{}_{}",
            self.m.key.table.name,
            new_column(&self.m.key.column.name)
        ))
    }

    /// The key and the references that are NOT NULL: proved by a
    /// validated CHECK before the swap.
    fn not_null(&self) -> Vec<(&'a Relation, String)> {
        let mut not_null = vec![(self.m.key.table, self.m.key.column.name.clone())];
        for r in by_column(&self.m.references) {
            if r.column.not_null {
                not_null.push((r.table, r.column.name.clone()));
            }
        }
        not_null
    }

    /// The changed columns of `table` (or of the table a partition belongs
    /// to) as (old name, new column's name) pairs, for definitions made
    /// over the new columns.
    fn renames(&self, table: u32) -> Vec<(String, String)> {
        let watched = self.m.watched();
        crate::ops::key::dependents::changed_in(self.m.snapshot, table, &watched)
            .into_iter()
            .filter_map(|n| self.m.snapshot.relation(table)?.column(n))
            .map(|c| (c.name.clone(), new_column(&c.name)))
            .collect()
    }

    /// The partitions of `table` when it is partitioned.
    fn leaves_of(&self, table: &Relation) -> Vec<&'m Partition> {
        if self.parted(table) {
            self.m.leaves(table.oid)
        } else {
            Vec::new()
        }
    }
}

/// `definition` made again as `remake` over the new columns of `table`.
fn over_new_columns(
    ctx: &Ctx,
    definition: &str,
    table: u32,
    remake: Remake,
) -> Result<String, DbError> {
    let renames = ctx.renames(table);
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

/// Refuses what batches do not handle: partitions that are not plain
/// tables, exclusion constraints over a changed column (their index cannot
/// be built before the swap).
fn refuse_unsupported(ctx: &Ctx) -> Result<(), DbError> {
    let m = ctx.m;
    for (r, _) in &ctx.tables {
        if let Some(p) = ctx.leaves_of(r).iter().find(|p| p.kind != "r") {
            return Err(DbError::refused("batch-size", format!("partition {}.{} of {} is {} (expected plain tables: migrate it without --batch-size, in one transaction)",
                p.schema,
                p.name,
                r.display_name(),
                if p.kind == "p" { "partitioned itself" } else { "a foreign table" }
            )));
        }
    }
    if let Some(x) = m.dependents.constraints.iter().find(|c| c.kind == "x") {
        return Err(DbError::refused("batch-size", format!("exclusion constraint {} ({}) is over a changed column: its index cannot be built before the swap without locking writers out; migrate without --batch-size, in one transaction", x.name, x.definition)));
    }
    Ok(())
}

/// The change in batches.
pub fn change(m: &Migration, batch_size: i64) -> Result<ChangePlan, DbError> {
    let ctx = Ctx::new(m);
    refuse_unsupported(&ctx)?;
    let mut steps = vec![BatchStep::exclusive(
        "prepare: new columns, the key map, triggers for rows written meanwhile",
        Some(ctx.lock_all.clone()),
        prepare::prepare(&ctx),
    )];
    steps.extend(prepare::keys_and_backfills(&ctx));
    steps.extend(prepare::index_steps(&ctx)?);
    steps.extend(prepare::check_steps(&ctx));
    let swapped = swap::swap(&ctx)?;
    steps.push(BatchStep::Transaction {
        what: "swap: constraints onto the new columns, names exchanged".into(),
        lock: Some(ctx.lock_all.clone()),
        statements: swapped.swap,
        exclusive: true,
        mark: Some("swap".into()),
    });
    for (what, statements, exclusive) in [
        (
            "validate the foreign keys and checks (writers go on)",
            swapped.validate,
            false,
        ),
        (
            "attach the partitions' foreign keys to their tables'",
            swapped.attach,
            true,
        ),
        (
            "validate the foreign keys declared on partitions (writers go on)",
            swapped.validate_partitions,
            false,
        ),
    ] {
        if !statements.is_empty() {
            steps.push(BatchStep::Transaction {
                what: what.into(),
                lock: None,
                statements,
                exclusive,
                mark: None,
            });
        }
    }
    let written: Vec<String> = m.written().iter().map(|r| r.sql_name()).collect();
    steps.push(BatchStep::Check {
        what: "verify the migration".into(),
        sql: checks::with_objects_check(
            &checks::verify_sql(m, Phase::AfterSwap, &ctx.map),
            &m.objects,
            &written,
        ),
        binds: vec!["swap".into()],
    });
    steps.push(BatchStep::transaction(
        "finish: drop the key map",
        vec![format!("DROP TABLE {}", ctx.map)],
    ));
    let mut lines = summary(m, &format!(", in batches of about {batch_size} rows"));
    lines.push("  progress: kept by the runner (a killed run goes on with --resume)".into());
    Ok(ChangePlan {
        operation: "migrate-key".into(),
        target: m.key.table.typed_name(),
        schema: m.key.table.schema.clone(),
        touches: touches(m),
        summary: lines,
        backup: backup(m),
        run: Run::Batches { batch_size, steps },
        epilogue: Vec::new(),
    })
}

/// The name of `c`'s piece on partition `p` (a key or unique constraint of
/// a partitioned table): the one read, else PostgreSQL's way.
fn leaf_constraint_name(
    c: &crate::ops::key::dependents::ConstraintDependent,
    p: &Partition,
) -> String {
    c.leaves
        .iter()
        .find(|l| l.partition == p.oid)
        .map_or_else(|| piece(&c.name, p.oid), |l| l.name.clone())
}

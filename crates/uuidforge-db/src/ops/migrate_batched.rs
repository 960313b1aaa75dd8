//! D1 in batches (`--batch-size`): a key migration for tables too large
//! to lock for one transaction.
//!
//! Writers keep working throughout. The plan is a list of [`Step`]s, each
//! committed on its own and recorded in a state table
//! (`uuidforge_migration`, in the table's schema), so that after a kill -9
//! or a lost connection the old schema still works and `--resume` goes on
//! from the last committed step:
//!
//! 1. *prepare* (short): the new `uuid` columns, the key map table
//!    (old key as text → new UUID) and triggers that keep the new columns
//!    right for rows others write from now on;
//! 2. *keys*: the new keys computed by the library and copied into the map;
//! 3. *backfill*: the new columns filled in batches of pages, one
//!    transaction each (the table first, then each reference);
//! 4. *indexes*: the new primary key, the old key's unique index and the
//!    references' indexes built `CONCURRENTLY`; `NOT NULL` proved by
//!    `CHECK` constraints added `NOT VALID` and validated without blocking
//!    writes;
//! 5. *check*: every count zero before the swap;
//! 6. *swap* (short, exclusive locks): triggers dropped, constraints moved
//!    to the prebuilt indexes, columns renamed, foreign keys made again
//!    `NOT VALID`;
//! 7. *validate* the foreign keys (no write blocked), *check* again,
//!    *finish* (the map dropped).

use crate::catalog::{Constraint, Relation, Snapshot};
use crate::error::DbError;
use crate::ident::{quote_ident, quote_literal};
use crate::introspect::{create_views, drop_views, Partition};
use crate::ops::migrate_key::{
    analyze, index_columns, names, new_column, old_index_name, old_reference, Target,
};
use crate::ops::migrate_key::{
    inputs_from, inputs_reads, summary, MigrateOptions, PlanInputs, Reference,
};
use crate::ops::{Backup, ChangePlan, Mode, Operation, Planned, Read, Step};
use serde::{Deserialize, Serialize};

/// The state table's name, in the migrated table's schema.
pub const STATE_TABLE: &str = "uuidforge_migration";

/// The setting a backfill transaction sets so that the triggers leave its
/// own updates alone.
pub const BACKFILL_SETTING: &str = "uuidforge_migrate.backfill";

/// The plan of a batched migration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchedPlan {
    /// `schema.table`, quoted.
    pub table: String,
    /// The key column.
    pub key: String,
    /// Its type before.
    pub key_type: String,
    /// Where the old values are kept.
    pub old_name: String,
    /// The referencing columns.
    pub references: Vec<Reference>,
    /// What the key's default becomes.
    pub default_note: String,
    /// Relations to back up.
    pub backup: Vec<String>,
    /// The state table (quoted, qualified).
    pub state_table: String,
    /// Whether `--order-by` times the keys.
    pub ordered: bool,
    /// The change the runner runs: the steps, in order.
    pub change: ChangePlan,
}

impl Planned for BatchedPlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

/// Migrating a table's key to UUIDv7 in batches, writers going on.
#[derive(Debug, Clone)]
pub struct MigrateBatched {
    /// `table` or `schema.table`.
    pub table: String,
    /// How.
    pub options: MigrateOptions,
    /// Rows per backfill transaction.
    pub batch_size: i64,
}

impl Operation for MigrateBatched {
    type Plan = BatchedPlan;

    fn name(&self) -> &'static str {
        "migrate-key"
    }

    fn reads(&self, snapshot: &Snapshot, answers: &[String]) -> Result<Vec<Read>, DbError> {
        let snapshot = crate::ops::migrate_key::with_also(snapshot, &self.table, &self.options)?;
        inputs_reads(&snapshot, &self.table, &self.options, answers)
    }

    fn plan(&self, snapshot: &Snapshot, answers: &[String]) -> Result<BatchedPlan, DbError> {
        let snapshot = crate::ops::migrate_key::with_also(snapshot, &self.table, &self.options)?;
        plan(
            &snapshot,
            &self.table,
            &self.options,
            &inputs_from(answers)?,
            self.batch_size,
        )
    }
}

/// A UUIDv7 from the clock, in SQL, for rows written while the migration
/// runs: the extension's `uuidv7()` or, without it, a version 4 UUID whose
/// first 48 bits become the Unix milliseconds (RFC 9562 §5.7).
fn uuidv7_sql(snapshot: &Snapshot) -> String {
    match &snapshot.extension_schema {
        Some(schema) => format!("{}.uuidv7()", quote_ident(schema)),
        None => "encode(set_byte(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::int8) FROM 3) FROM 1 FOR 6), 6, (get_byte(uuid_send(gen_random_uuid()), 6) & 15) | 112), 'hex')::uuid".into(),
    }
}

/// What the phases of a batched plan share: the migration's target, the
/// names it makes, and the tables the triggers keep right.
struct Ctx<'a> {
    snapshot: &'a Snapshot,
    inputs: &'a PlanInputs,
    target: Target<'a>,
    /// The table (quoted, qualified), its key and the key's new column
    /// (quoted).
    t: String,
    k: String,
    kn: String,
    /// The key map and the state table (quoted, qualified).
    map: String,
    state_table: String,
    /// Locks every table, referencing tables first.
    lock_all: String,
    /// The table itself and each referencing table, with its reference
    /// columns and their foreign keys.
    tables: Vec<(&'a Relation, Vec<(String, &'a Constraint)>)>,
}

impl<'a> Ctx<'a> {
    fn new(snapshot: &'a Snapshot, inputs: &'a PlanInputs, target: Target<'a>) -> Ctx<'a> {
        let relation = target.relation;
        let t = relation.sql_name();
        let in_schema = |name: &str| crate::ident::qualified(&relation.schema, name);
        let mut tables: Vec<(&Relation, Vec<(String, &Constraint)>)> = vec![(relation, Vec::new())];
        for (child, fk, column) in &target.children {
            match tables.iter_mut().find(|(r, _)| r.oid == child.oid) {
                Some((_, columns)) => columns.push((column.clone(), *fk)),
                None => tables.push((*child, vec![(column.clone(), *fk)])),
            }
        }
        // Referencing tables first: a writer's statement that reads the
        // table (its foreign key check, or the triggers' lookups) has locked
        // the referencing table before, so taking them in the same order
        // cannot deadlock with it.
        let mut lock_order: Vec<String> = tables
            .iter()
            .filter(|(r, _)| r.oid != relation.oid)
            .map(|(r, _)| r.sql_name())
            .collect();
        lock_order.push(t.clone());
        Ctx {
            snapshot,
            inputs,
            k: quote_ident(&target.key.name),
            kn: quote_ident(&new_column(&target.key.name)),
            map: in_schema(&cut(&format!("uuidforge_keymap_{}", relation.oid))),
            state_table: in_schema(STATE_TABLE),
            lock_all: format!(
                "LOCK TABLE {} IN ACCESS EXCLUSIVE MODE",
                lock_order.join(", ")
            ),
            tables,
            t,
            target,
        }
    }

    fn parted(&self, r: &Relation) -> bool {
        r.kind == crate::catalog::RelKind::PartitionedTable
    }

    fn leaves(&self, oid: u32) -> Vec<&'a Partition> {
        self.inputs
            .partitions
            .iter()
            .filter(|p| p.parent == oid)
            .collect()
    }

    /// The tables a statement on `r` reaches one by one: its partitions,
    /// or itself.
    fn pieces(&self, r: &Relation) -> Vec<(String, String)> {
        if self.parted(r) {
            self.leaves(r.oid)
                .iter()
                .map(|p| (p.sql_name(), format!("{}.{}", p.schema, p.name)))
                .collect()
        } else {
            vec![(r.sql_name(), r.display_name())]
        }
    }

    /// The name of partition `p`'s piece of `table`'s key or unique
    /// constraint `c` (PostgreSQL's or the user's), found by kind and
    /// column names; `{c}_{p's oid}` when the catalog read has none.
    fn leaf_constraint(&self, p: &Partition, table: &Relation, c: &Constraint) -> String {
        let columns = |r: &Relation, nums: &[i16]| -> Vec<String> {
            nums.iter()
                .filter_map(|&n| r.column(n).map(|col| col.name.clone()))
                .collect()
        };
        let wanted = columns(table, &c.columns);
        self.snapshot
            .relation(p.oid)
            .and_then(|leaf| {
                self.snapshot.constraints.iter().find(|k| {
                    k.table == p.oid && k.kind == c.kind && columns(leaf, &k.columns) == wanted
                })
            })
            .map_or_else(
                || cut(&format!("{}_{}", cut_to(&c.name, 50), p.oid)),
                |k| k.name.clone(),
            )
    }

    fn in_schema(&self, name: &str) -> String {
        crate::ident::qualified(&self.target.relation.schema, name)
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
            self.target.relation.name,
            new_column(&self.target.key.name)
        ))
    }

    /// The key and the references that are NOT NULL: proved by a
    /// validated CHECK before the swap.
    fn not_null(&self) -> Vec<(&'a Relation, String)> {
        let target = &self.target;
        let mut not_null = vec![(target.relation, target.key.name.clone())];
        for (child, fk, column) in &target.children {
            if child
                .column(target.reference_num(fk))
                .is_some_and(|c| c.not_null)
            {
                not_null.push((*child, column.clone()));
            }
        }
        not_null
    }
}

/// A temporary index name, made from `name`.
fn temporary(name: &str) -> String {
    cut(&format!("{}_uuidforge", cut_to(name, 50)))
}

/// Refuses what batches do not handle: an index over a reference that is
/// not a plain b-tree on columns, partitions that are not plain tables.
/// (Foreign keys declared on partitions and references named with
/// `--also` are handled.)
fn refuse_unsupported(
    snapshot: &Snapshot,
    target: &Target,
    inputs: &PlanInputs,
) -> Result<(), DbError> {
    let relation = target.relation;
    // Only plain b-tree indexes on columns (no order, operator class,
    // collation or INCLUDE) are built concurrently on the new column.
    if let Some(index) = target.indexes.iter().find(|d| {
        !target.reference_indexes.iter().any(|(_, _, i)| {
            i.oid == d.oid
                && snapshot
                    .relation(i.table)
                    .is_some_and(|t| is_plain(&d.definition, &index_columns(t, i, None)))
        })
    }) {
        return Err(DbError::refused("batch-size", format!("index {}.{} over a reference is not a plain b-tree index on columns ({}); migrate without --batch-size, in one transaction, which makes it again from its definition",
            index.schema, index.name, index.definition
        )));
    }
    // A partitioned table is filled and indexed partition by partition
    // (indexes cannot be built concurrently on it); the swap attaches the
    // partitions' indexes and constraints.
    let parted = |r: &Relation| r.kind == crate::catalog::RelKind::PartitionedTable;
    let leaves = |oid: u32| -> Vec<&Partition> {
        inputs
            .partitions
            .iter()
            .filter(|p| p.parent == oid)
            .collect()
    };
    for r in std::iter::once(relation).chain(target.children.iter().map(|(c, _, _)| *c)) {
        if parted(r) {
            let parts = leaves(r.oid);
            if let Some(p) = parts.iter().find(|p| p.kind != "r") {
                return Err(DbError::refused("batch-size", format!("partition {}.{} of {} is {} (expected plain tables: migrate it without --batch-size, in one transaction)",
                    p.schema,
                    p.name,
                    r.display_name(),
                    if p.kind == "p" { "partitioned itself" } else { "a foreign table" }
                )));
            }
        }
    }
    Ok(())
}

/// The first step: new columns, the key map, the state table and the
/// triggers that keep the new columns right for rows written meanwhile.
fn prepare(ctx: &Ctx) -> Vec<String> {
    let Ctx {
        snapshot,
        target,
        t,
        k,
        kn,
        map,
        state_table,
        lock_all,
        tables,
        ..
    } = ctx;
    let relation = target.relation;
    let q = |name: &str| quote_ident(name);
    let mut prepare = vec![
        lock_all.clone(),
        format!(
            "CREATE TABLE IF NOT EXISTS {state_table} (table_name text PRIMARY KEY, plan jsonb NOT NULL, step int NOT NULL, next_block bigint, end_block bigint, batch_size int NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now())"
        ),
        format!("CREATE TABLE {map} (old text PRIMARY KEY, new uuid NOT NULL UNIQUE)"),
    ];
    for (table, columns) in tables.iter() {
        let mut added = Vec::new();
        if table.oid == relation.oid {
            added.push(format!("ADD COLUMN {kn} uuid"));
        }
        added.extend(
            columns
                .iter()
                .map(|(c, _)| format!("ADD COLUMN {} uuid", q(&new_column(c)))),
        );
        prepare.push(format!(
            "ALTER TABLE {} {}",
            table.sql_name(),
            added.join(", ")
        ));
    }
    let v7 = uuidv7_sql(snapshot);
    for (table, columns) in tables.iter() {
        let mut body = String::new();
        // An updated row may move to a page the backfill has passed: an
        // update gives it its new value as an insert does.
        if table.oid == relation.oid {
            body.push_str(&format!(
                "IF TG_OP = 'INSERT' OR NEW.{k} IS DISTINCT FROM OLD.{k} OR NEW.{kn} IS NULL THEN NEW.{kn} := (SELECT m.new FROM {map} m WHERE m.old = NEW.{k}::text); IF NEW.{kn} IS NULL AND NEW.{k} IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.{k} IS DISTINCT FROM OLD.{k}) THEN NEW.{kn} := {v7}; END IF; END IF; "
            ));
        }
        for (column, fk) in columns {
            let (c, cn) = (q(column), q(&new_column(column)));
            let others = target.other_join(table, fk, "NEW", "p");
            let changed: String = target
                .other_pairs(table, fk)
                .iter()
                .map(|(o, _)| format!(" OR NEW.{o} IS DISTINCT FROM OLD.{o}", o = q(o)))
                .collect();
            let own = if table.oid == relation.oid {
                format!("WHEN NEW.{c} = NEW.{k} THEN NEW.{kn} ")
            } else {
                String::new()
            };
            body.push_str(&format!(
                "IF TG_OP = 'INSERT' OR NEW.{c} IS DISTINCT FROM OLD.{c}{changed} OR NEW.{cn} IS NULL THEN NEW.{cn} := CASE WHEN NEW.{c} IS NULL THEN NULL {own}ELSE (SELECT p.{kn} FROM {t} p WHERE p.{k} = NEW.{c}{others}) END; END IF; "
            ));
        }
        prepare.push(format!(
            "CREATE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ BEGIN {body}RETURN NEW; END $uuidforge$",
            ctx.function(table.oid)
        ));
        prepare.push(format!(
            "CREATE TRIGGER uuidforge_migrate BEFORE INSERT OR UPDATE ON {} FOR EACH ROW WHEN (current_setting({}, true) IS DISTINCT FROM 'on') EXECUTE FUNCTION {}()",
            table.sql_name(),
            quote_literal(BACKFILL_SETTING),
            ctx.function(table.oid)
        ));
    }

    prepare
}

/// The keys, then the new columns filled in batches of pages.
fn keys_and_backfills(ctx: &Ctx) -> Vec<Step> {
    let Ctx {
        target,
        t,
        k,
        kn,
        map,
        ..
    } = ctx;
    let relation = target.relation;
    let q = |name: &str| quote_ident(name);
    let mut steps = vec![Step::Keys {
        read: target.read_keys_sql(&format!(" WHERE x.{kn} IS NULL")),
        map: map.clone(),
        ordered: target.order_column.is_some(),
    }];
    let range =
        "x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid";
    let backfill = |piece: &str,
                    shown: &str,
                    column: &str,
                    table: &Relation,
                    set: String,
                    from: String,
                    cond: String| {
        let hash = crate::ops::migrate_key::row_hash(table, &target.changed_columns(table));
        let triggers: Vec<_> = target
            .triggers
            .iter()
            .filter(|t| crate::ident::qualified(&t.schema, &t.table_name) == piece)
            .cloned()
            .collect();
        let (quiet, restore) = crate::introspect::quiet_triggers(&triggers);
        // One statement: the rows locked with their hashes, filled, and
        // compared (the update's range lets it scan only those pages).
        Step::Backfill {
            what: format!("fill {shown}.{}", new_column(column)),
            table: piece.to_string(),
            update_sql: format!(
                "WITH locked AS (SELECT x.ctid AS row_id, {hash} AS before FROM {piece} AS x, {from} WHERE {range} AND {cond} FOR UPDATE OF x), \
                 filled AS (UPDATE {piece} AS x SET {set} FROM {from}, locked l WHERE x.ctid = l.row_id AND {range} AND {cond} RETURNING l.before, {hash} AS after) \
                 SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled"
            ),
            before_sql: None,
            checked: true,
            quiet,
            restore,
        }
    };
    for (piece, shown) in ctx.pieces(relation) {
        steps.push(backfill(
            &piece,
            &shown,
            &target.key.name,
            relation,
            format!("{kn} = m.new"),
            format!("{map} m"),
            format!("x.{kn} IS NULL AND m.old = x.{k}::text"),
        ));
    }
    for (child, fk, column) in &target.children {
        let (c, cn) = (q(column), q(&new_column(column)));
        let others = target.other_join(child, fk, "x", "p");
        for (piece, shown) in ctx.pieces(child) {
            steps.push(backfill(
                &piece,
                &shown,
                column,
                child,
                format!("{cn} = p.{kn}"),
                format!("{t} p"),
                format!("p.{k} = x.{c}{others} AND x.{cn} IS DISTINCT FROM p.{kn}"),
            ));
        }
    }

    steps
}

/// The indexes the swap adopts, built without blocking writes.
fn index_steps(ctx: &Ctx) -> Result<Vec<Step>, DbError> {
    let Ctx {
        snapshot, target, ..
    } = ctx;
    let relation = target.relation;
    let q = |name: &str| quote_ident(name);
    let mut steps = Vec::new();
    let new_key_index = ctx.new_key_index();
    // The index `name` on `table` (`columns` quoted), built concurrently:
    // on each partition of a partitioned table.
    let build = |what: String, table: &Relation, name: &str, unique: bool, columns: &str| {
        let unique = if unique { "UNIQUE " } else { "" };
        let on: Vec<(String, String, String)> = if ctx.parted(table) {
            ctx.leaves(table.oid)
                .iter()
                .map(|p| (p.sql_name(), p.schema.clone(), leaf_index(name, p)))
                .collect()
        } else {
            vec![(table.sql_name(), table.schema.clone(), name.to_string())]
        };
        on.into_iter()
            .map(|(piece, schema, index)| Step::Concurrently {
                what: what.clone(),
                cleanup: format!(
                    "DROP INDEX CONCURRENTLY IF EXISTS {}",
                    crate::ident::qualified(&schema, &index)
                ),
                statement: format!(
                    "CREATE {unique}INDEX CONCURRENTLY {} ON {piece} ({columns})",
                    q(&index)
                ),
            })
            .collect::<Vec<Step>>()
    };
    steps.extend(build(
        "index the new key".into(),
        relation,
        &new_key_index,
        true,
        &names(&target.pk_with(&new_column(&target.key.name))),
    ));
    let old_index = old_index_name(target);
    steps.extend(build(
        "index the old key (kept unique)".into(),
        relation,
        &old_index,
        true,
        &names(&target.pk_columns),
    ));
    for (_, column, index) in &target.reference_indexes {
        let child = snapshot
            .relation(index.table)
            .ok_or_else(|| DbError::unreadable("index", "table not found"))?;
        steps.extend(build(
            format!("index {}.{}", child.display_name(), new_column(column)),
            child,
            &temporary(&index.name),
            index.unique,
            &names(&index_columns(
                child,
                index,
                Some((column, &new_column(column))),
            )),
        ));
    }
    let migrated_columns = |child: &Relation, num: i16| -> Option<String> {
        target
            .children
            .iter()
            .find(|(c, fk, _)| c.oid == child.oid && target.reference_num(fk) == num)
            .map(|(_, _, column)| new_column(column))
    };
    for (child, constraint) in &target.child_keys {
        let columns: Vec<String> = constraint
            .columns
            .iter()
            .filter_map(|&n| {
                migrated_columns(child, n).or_else(|| child.column(n).map(|c| c.name.clone()))
            })
            .collect();
        steps.extend(build(
            format!("index {} for {}", child.display_name(), constraint.name),
            child,
            &temporary(&constraint.name),
            true,
            &names(&columns),
        ));
    }

    Ok(steps)
}

/// NOT NULL proved without a scan under the swap's locks (a validated
/// CHECK lets SET NOT NULL skip it), then every count checked.
fn check_steps(ctx: &Ctx) -> Vec<Step> {
    let Ctx {
        target,
        map,
        lock_all,
        ..
    } = ctx;
    let q = |name: &str| quote_ident(name);
    let not_null = ctx.not_null();
    let mut steps = Vec::new();
    let mut add_checks = vec![lock_all.clone()];
    let mut validate_checks = Vec::new();
    for (table, column) in &not_null {
        let check = ctx.not_null_check(table.oid, column);
        add_checks.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT IF EXISTS {check}, ADD CONSTRAINT {check} CHECK ({} IS NOT NULL) NOT VALID",
            table.sql_name(),
            q(&new_column(column))
        ));
        validate_checks.push(format!(
            "ALTER TABLE {} VALIDATE CONSTRAINT {check}",
            table.sql_name()
        ));
    }
    steps.push(Step::Transaction {
        what: "add NOT NULL checks (not valid yet)".into(),
        statements: add_checks,
        exclusive: true,
    });
    steps.push(Step::Transaction {
        what: "validate the NOT NULL checks (writers go on)".into(),
        statements: validate_checks,
        exclusive: false,
    });
    steps.push(Step::Check {
        what: "check the new columns before the swap".into(),
        sql: target.checks_sql(
            &target.key.name,
            &new_column(&target.key.name),
            &|column| (column.to_string(), new_column(column)),
            map,
            true,
        ),
    });

    steps
}

/// The swap's statements on the table itself: triggers, constraints and
/// indexes over the old columns dropped, the key moved to the prebuilt
/// index, the columns renamed, the default `uuidv7()`.
fn swap_key(ctx: &Ctx) -> Result<Vec<String>, DbError> {
    let Ctx {
        snapshot,
        target,
        t,
        k,
        kn,
        lock_all,
        tables,
        ..
    } = ctx;
    let relation = target.relation;
    let q = |name: &str| quote_ident(name);
    let new_key_index = ctx.new_key_index();
    let old_index = old_index_name(target);
    let mut swap = vec!["SET CONSTRAINTS ALL IMMEDIATE".to_string()];
    swap.push(lock_all.clone());
    swap.extend(drop_views(&target.views));
    for (table, _) in tables.iter() {
        swap.push(format!(
            "DROP TRIGGER uuidforge_migrate ON {}",
            table.sql_name()
        ));
        swap.push(format!("DROP FUNCTION {}()", ctx.function(table.oid)));
    }
    for (table, fk) in target.declared_fks() {
        swap.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            table.sql_name(),
            q(&fk.name)
        ));
    }
    for (child, c) in &target.child_keys {
        swap.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            child.sql_name(),
            q(&c.name)
        ));
    }
    for (_, _, index) in &target.reference_indexes {
        let child = snapshot
            .relation(index.table)
            .ok_or_else(|| DbError::unreadable("index", "table not found"))?;
        swap.push(format!(
            "DROP INDEX {}",
            crate::ident::qualified(&child.schema, &index.name)
        ));
    }
    let old = q(&target.old_name);
    let pk_name = q(&target.pk.name);
    swap.push(format!("ALTER TABLE {t} DROP CONSTRAINT {pk_name}"));
    // Apart: one ALTER TABLE would drop the check before the NOT NULL
    // verification could use it, and scan the table under the lock.
    swap.push(format!("ALTER TABLE {t} ALTER COLUMN {kn} SET NOT NULL"));
    swap.push(format!(
        "ALTER TABLE {t} DROP CONSTRAINT {}",
        ctx.not_null_check(relation.oid, &target.key.name)
    ));
    if ctx.parted(relation) {
        // Each partition's key on its prebuilt index, then the table's,
        // which attaches them (no index is built under the lock).
        for p in ctx.leaves(relation.oid) {
            // The partition's key keeps its name.
            swap.push(format!(
                "ALTER TABLE {} ADD CONSTRAINT {} PRIMARY KEY USING INDEX {}",
                p.sql_name(),
                q(&ctx.leaf_constraint(p, relation, target.pk)),
                q(&leaf_index(&new_key_index, p))
            ));
        }
        swap.push(format!(
            "ALTER TABLE {t} ADD CONSTRAINT {pk_name} PRIMARY KEY ({})",
            names(&target.pk_with(&new_column(&target.key.name)))
        ));
        swap.push(format!(
            "CREATE UNIQUE INDEX {} ON {t} ({})",
            q(&old_index),
            names(&target.pk_columns)
        ));
    } else {
        swap.push(format!(
            "ALTER TABLE {t} ADD CONSTRAINT {pk_name} PRIMARY KEY USING INDEX {}",
            q(&new_key_index)
        ));
    }
    swap.push(format!(
        "ALTER TABLE {t} ALTER COLUMN {k} DROP IDENTITY IF EXISTS"
    ));
    swap.push(format!("ALTER TABLE {t} ALTER COLUMN {k} DROP DEFAULT"));
    swap.push(format!(
        "DO $uuidforge$ DECLARE s text := pg_get_serial_sequence({}, {}); BEGIN IF s IS NOT NULL THEN EXECUTE 'DROP SEQUENCE ' || s; END IF; END $uuidforge$",
        quote_literal(t),
        quote_literal(&target.key.name)
    ));
    swap.push(format!("ALTER TABLE {t} RENAME COLUMN {k} TO {old}"));
    swap.push(format!("ALTER TABLE {t} ALTER COLUMN {old} DROP NOT NULL"));
    swap.push(format!("ALTER TABLE {t} RENAME COLUMN {kn} TO {k}"));
    if let Some(schema) = &snapshot.extension_schema {
        swap.push(format!(
            "ALTER TABLE {t} ALTER COLUMN {k} SET DEFAULT {}.uuidv7()",
            q(schema)
        ));
    }
    Ok(swap)
}

/// The swap's statements on the referencing tables: columns renamed,
/// indexes and keys moved to the new columns, foreign keys made again
/// `NOT VALID`; with the validations and the attachments that follow it.
#[allow(clippy::type_complexity)]
fn swap_references(ctx: &Ctx) -> (Vec<String>, Vec<String>, Vec<String>, Vec<String>) {
    let Ctx { target, .. } = ctx;
    let q = |name: &str| quote_ident(name);
    let not_null = ctx.not_null();
    let mut swap = Vec::new();
    let mut validate = Vec::new();
    let mut attach = Vec::new();
    for (child, fk, column) in &target.children {
        let ct = child.sql_name();
        let (c, cn, c_old) = (q(column), q(&new_column(column)), q(&old_reference(column)));
        swap.push(format!("ALTER TABLE {ct} RENAME COLUMN {c} TO {c_old}"));
        swap.push(format!("ALTER TABLE {ct} RENAME COLUMN {cn} TO {c}"));
        if not_null
            .iter()
            .any(|(r, name)| r.oid == child.oid && name == column)
        {
            swap.push(format!("ALTER TABLE {ct} ALTER COLUMN {c} SET NOT NULL"));
            swap.push(format!(
                "ALTER TABLE {ct} DROP CONSTRAINT {}, ALTER COLUMN {c_old} DROP NOT NULL",
                ctx.not_null_check(child.oid, column)
            ));
        }
        if !target.declared_on(child, fk) {
            // Its foreign keys are its partitions' (below), or it has none
            // (`--also`).
            continue;
        }
        if ctx.parted(child) {
            // PostgreSQL 15 makes no NOT VALID foreign key on a partitioned
            // table: each partition gets one, validated after the swap,
            // and the table's then attaches them.
            for p in ctx.leaves(child.oid) {
                let name = q(&cut(&format!("{}_{}", cut_to(&fk.name, 50), p.oid)));
                swap.push(format!(
                    "ALTER TABLE {} ADD CONSTRAINT {name} {} NOT VALID",
                    p.sql_name(),
                    target.fk_clause(child, fk)
                ));
                validate.push(format!(
                    "ALTER TABLE {} VALIDATE CONSTRAINT {name}",
                    p.sql_name()
                ));
            }
            attach.push(format!(
                "ALTER TABLE {ct} ADD CONSTRAINT {} {}",
                q(&fk.name),
                target.fk_clause(child, fk)
            ));
        } else {
            swap.push(format!(
                "ALTER TABLE {ct} ADD CONSTRAINT {} {} NOT VALID",
                q(&fk.name),
                target.fk_clause(child, fk)
            ));
            validate.push(format!(
                "ALTER TABLE {ct} VALIDATE CONSTRAINT {}",
                q(&fk.name)
            ));
        }
    }
    // Each partition's own foreign key, made again on it `NOT VALID` and
    // validated after the partitioned tables' foreign keys have attached
    // their partitions' copies. Where its table has one too, it is made
    // after that attachment (which would otherwise take it in their place:
    // PostgreSQL 18 attaches a not yet valid one as well), the table's
    // foreign key holding meanwhile; else in the swap.
    let mut validate_partitions = Vec::new();
    for (partition, fk) in &target.partition_fks {
        let table_has_one = ctx
            .snapshot
            .partition_root(partition.oid)
            .is_some_and(|root| {
                target
                    .children
                    .iter()
                    .any(|(c, k, _)| c.oid == root.oid && target.declared_on(c, k))
            });
        let add = format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {} NOT VALID",
            partition.sql_name(),
            q(&fk.name),
            target.fk_clause(partition, fk)
        );
        if table_has_one {
            attach.push(add);
        } else {
            swap.push(add);
        }
        validate_partitions.push(format!(
            "ALTER TABLE {} VALIDATE CONSTRAINT {}",
            partition.sql_name(),
            q(&fk.name)
        ));
    }
    // The indexes over the references, after every rename: built on a
    // partitioned table's partitions (its index attaches them), or on the
    // table (a partition's own too) under a temporary name.
    for (_, _, index) in &target.reference_indexes {
        let Some(table) = ctx.snapshot.relation(index.table) else {
            continue;
        };
        if ctx.parted(table) {
            swap.push(format!(
                "CREATE {}INDEX {} ON {} ({})",
                if index.unique { "UNIQUE " } else { "" },
                q(&index.name),
                table.sql_name(),
                names(&index_columns(table, index, None))
            ));
            // The partitions' pieces it attached get their names back.
            let leaves = ctx
                .inputs
                .indexes
                .iter()
                .find(|d| d.oid == index.oid)
                .map(|d| &d.leaves[..])
                .unwrap_or_default();
            for p in ctx.leaves(table.oid) {
                if let Some(leaf) = leaves.iter().find(|l| l.partition == p.oid) {
                    swap.push(format!(
                        "ALTER INDEX {} RENAME TO {}",
                        crate::ident::qualified(&p.schema, &leaf_index(&temporary(&index.name), p)),
                        q(&leaf.name)
                    ));
                }
            }
        } else {
            swap.push(format!(
                "ALTER INDEX {} RENAME TO {}",
                crate::ident::qualified(&table.schema, &temporary(&index.name)),
                q(&index.name)
            ));
        }
    }
    for (child, c) in &target.child_keys {
        let kind = if c.kind == "p" {
            "PRIMARY KEY"
        } else {
            "UNIQUE"
        };
        if ctx.parted(child) {
            for p in ctx.leaves(child.oid) {
                swap.push(format!(
                    "ALTER TABLE {} ADD CONSTRAINT {} {kind} USING INDEX {}",
                    p.sql_name(),
                    q(&ctx.leaf_constraint(p, child, c)),
                    q(&leaf_index(&temporary(&c.name), p))
                ));
            }
            let columns: Vec<String> = c
                .columns
                .iter()
                .filter_map(|&n| child.column(n).map(|col| col.name.clone()))
                .collect();
            swap.push(format!(
                "ALTER TABLE {} ADD CONSTRAINT {} {kind} ({})",
                child.sql_name(),
                q(&c.name),
                names(&columns)
            ));
        } else {
            swap.push(format!(
                "ALTER TABLE {} ADD CONSTRAINT {} {kind} USING INDEX {}",
                child.sql_name(),
                q(&c.name),
                q(&temporary(&c.name))
            ));
        }
    }
    (swap, validate, attach, validate_partitions)
}

/// Plans migrating `table`'s key in batches. Errors name the argument, the
/// value and what was expected.
pub fn plan(
    snapshot: &Snapshot,
    table: &str,
    options: &MigrateOptions,
    inputs: &PlanInputs,
    batch_size: i64,
) -> Result<BatchedPlan, DbError> {
    let target = analyze(snapshot, table, options, Some(inputs))?;
    refuse_unsupported(snapshot, &target, inputs)?;
    let ctx = Ctx::new(snapshot, inputs, target);
    let Ctx {
        target,
        t,
        map,
        state_table,
        ..
    } = &ctx;
    let mut steps = vec![Step::Transaction {
        what: "prepare: new columns, the key map, triggers for rows written meanwhile".into(),
        statements: prepare(&ctx),
        exclusive: true,
    }];
    steps.extend(keys_and_backfills(&ctx));
    steps.extend(index_steps(&ctx)?);
    steps.extend(check_steps(&ctx));
    let mut swap = swap_key(&ctx)?;
    let (references, validate, attach, validate_partitions) = swap_references(&ctx);
    swap.extend(references);
    swap.extend(create_views(&target.views, &snapshot.user));
    steps.push(Step::Transaction {
        what: "swap: constraints onto the new columns, names exchanged".into(),
        statements: swap,
        exclusive: true,
    });
    if !validate.is_empty() {
        steps.push(Step::Transaction {
            what: "validate the foreign keys (writers go on)".into(),
            statements: validate,
            exclusive: false,
        });
    }
    if !attach.is_empty() {
        steps.push(Step::Transaction {
            what: "attach the partitions' foreign keys to their tables'".into(),
            statements: attach,
            exclusive: true,
        });
    }
    if !validate_partitions.is_empty() {
        steps.push(Step::Transaction {
            what: "validate the foreign keys declared on partitions (writers go on)".into(),
            statements: validate_partitions,
            exclusive: false,
        });
    }
    let checks = target.checks_sql(
        &target.old_name,
        &target.key.name,
        &|column| (old_reference(column), column.to_string()),
        map,
        true,
    );
    steps.push(Step::Check {
        what: "verify the migration".into(),
        sql: with_index_check(&checks, target, &inputs.index_set),
    });
    steps.push(Step::Transaction {
        what: "finish: drop the key map".into(),
        statements: vec![format!("DROP TABLE {map}")],
        exclusive: false,
    });
    let mut lines = summary(
        (t, &target.key.name, &target.key.type_name, &target.old_name),
        &target.references,
        &target.default_note,
        target.order_column.as_deref(),
        &format!(", in batches of about {batch_size} rows"),
    );
    lines.push(format!(
        "  progress: {state_table} (a killed run goes on with --resume)"
    ));
    lines.extend(crate::ops::migrate_key::review_lines(&inputs.functions));
    let change = ChangePlan {
        operation: "migrate-key".into(),
        summary: lines,
        backup: Backup {
            relations: target.backup(),
            schema_only: false,
        },
        mode: Mode::Steps {
            state_table: state_table.clone(),
            table: t.clone(),
            batch_size,
        },
        steps,
        checks: Vec::new(),
        epilogue: Vec::new(),
    };
    Ok(BatchedPlan {
        table: t.clone(),
        key: target.key.name.clone(),
        key_type: target.key.type_name.clone(),
        old_name: target.old_name.clone(),
        references: target.references.clone(),
        default_note: target.default_note.clone(),
        backup: target.backup(),
        state_table: state_table.clone(),
        ordered: target.order_column.is_some(),
        change,
    })
}

/// `checks` (one row of JSON text) with `indexes changed`: how many of
/// the indexes read when planning (`index_set`, JSON text of
/// [`crate::introspect::index_set_sql`]) are not there again with the same
/// name and definition — none lost, none left on an old column.
fn with_index_check(checks: &str, target: &Target, index_set: &str) -> String {
    let before: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(index_set).unwrap_or_default();
    if before.is_empty() {
        return checks.to_string();
    }
    let tables: Vec<String> = target.written().iter().map(|r| r.sql_name()).collect();
    format!(
        "SELECT (({checks})::jsonb || jsonb_build_object('indexes changed', (SELECT count(*) FROM json_each_text({}::json) b WHERE b.value IS DISTINCT FROM ({})::json ->> b.key)))::text",
        quote_literal(index_set),
        crate::introspect::index_set_sql(&tables)
    )
}

/// Whether `definition` (`pg_get_indexdef`) is a b-tree over exactly
/// `columns`, each in its default order and operator class. Names are
/// written as PostgreSQL prints them: bare when lower case letters, digits
/// and underscores, else quoted; a bare keyword it would quote makes the
/// index count as not plain (the safe side).
fn is_plain(definition: &str, columns: &[String]) -> bool {
    let shown: Vec<String> = columns
        .iter()
        .map(|c| {
            let bare = c
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
                && c.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if bare {
                c.clone()
            } else {
                quote_ident(c)
            }
        })
        .collect();
    definition.ends_with(&format!(" USING btree ({})", shown.join(", ")))
}

/// The name of index `name`'s piece on partition `p`.
fn leaf_index(name: &str, p: &Partition) -> String {
    cut(&format!("{}_{}", cut_to(name, 50), p.oid))
}

/// `name` cut to PostgreSQL's 63 bytes.
fn cut(name: &str) -> String {
    cut_to(name, 63).to_string()
}

fn cut_to(name: &str, max: usize) -> &str {
    let mut end = name.len().min(max);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// Statements that record progress in the state table (`$1` is the table
/// name, quoted and qualified).
pub mod state {
    /// Inserts the state row: `$1` table, `$2` plan (JSON text), `$3`
    /// batch size.
    pub fn insert(state_table: &str) -> String {
        format!("INSERT INTO {state_table} (table_name, plan, step, batch_size) VALUES ($1, $2::text::jsonb, 1, $3)")
    }
    /// Reads (plan as text, step, next block, end block, batch size).
    pub fn read(state_table: &str) -> String {
        format!("SELECT plan::text, step, next_block, end_block, batch_size FROM {state_table} WHERE table_name = $1")
    }
    /// Moves to step `$2`.
    pub fn advance(state_table: &str) -> String {
        format!("UPDATE {state_table} SET step = $2, next_block = NULL, end_block = NULL, updated_at = now() WHERE table_name = $1")
    }
    /// Records a backfill's range: `$2` next block, `$3` end block.
    pub fn progress(state_table: &str) -> String {
        format!("UPDATE {state_table} SET next_block = $2, end_block = $3, updated_at = now() WHERE table_name = $1")
    }
    /// Removes the row, and the table once it is empty.
    pub fn finish(state_table: &str) -> Vec<String> {
        vec![
            format!("DELETE FROM {state_table} WHERE table_name = $1"),
            format!("DO $uuidforge$ BEGIN IF NOT EXISTS (SELECT FROM {state_table}) THEN DROP TABLE {state_table}; END IF; END $uuidforge$"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_at_a_character_boundary() {
        let long = "é".repeat(40);
        let c = cut(&long);
        assert!(c.len() <= 63 && c.len().is_multiple_of(2));
        assert_eq!(cut("short"), "short");
    }

    #[test]
    fn only_plain_btree_definitions_are_plain() {
        let cols = vec!["customer_id".to_string(), "n".to_string()];
        let def = "CREATE INDEX i ON public.t USING btree";
        assert!(is_plain(&format!("{def} (customer_id, n)"), &cols));
        assert!(!is_plain(&format!("{def} (customer_id DESC, n)"), &cols));
        assert!(!is_plain(
            &format!("{def} (customer_id) INCLUDE (n)"),
            &cols
        ));
        assert!(!is_plain(
            &format!("{def} (customer_id text_pattern_ops, n)"),
            &cols
        ));
        assert!(!is_plain(
            "CREATE INDEX i ON public.t USING hash (customer_id, n)",
            &cols
        ));
        // Quoted as PostgreSQL quotes them: plain.
        let odd = vec!["Kunde".to_string(), "a\"b".to_string()];
        assert!(is_plain(&format!("{def} (\"Kunde\", \"a\"\"b\")"), &odd));
        assert!(!is_plain(
            &format!("{def} (\"Kunde\" DESC, \"a\"\"b\")"),
            &odd
        ));
        assert!(!is_plain(&format!("{def} (Kunde, \"a\"\"b\")"), &odd));
    }

    #[test]
    fn steps_round_trip_through_the_state_table_json() {
        let step = Step::Backfill {
            what: "fill".into(),
            table: "\"t\"".into(),
            update_sql: "WITH".into(),
            before_sql: None,
            checked: true,
            quiet: vec!["ALTER TABLE".into()],
            restore: vec!["ALTER TABLE".into()],
        };
        let json = serde_json::to_string(&step).unwrap();
        assert!(json.contains("\"kind\":\"backfill\""), "{json}");
        assert_eq!(serde_json::from_str::<Step>(&json).unwrap(), step);
        // A step an earlier version recorded (two statements) reads back
        // as such, and runs as it was planned.
        let recorded = r#"{"kind":"backfill","what":"fill","table":"t","update_sql":"UPDATE","before_sql":"SELECT"}"#;
        let Step::Backfill {
            checked,
            before_sql,
            ..
        } = serde_json::from_str::<Step>(recorded).unwrap()
        else {
            panic!("a backfill step");
        };
        assert!(!checked);
        assert_eq!(before_sql.as_deref(), Some("SELECT"));
    }
}

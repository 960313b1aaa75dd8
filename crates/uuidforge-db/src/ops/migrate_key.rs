//! D1: migrate a table's primary key to UUIDv7, with every foreign key
//! that references it, in one transaction.
//!
//! The new keys are computed by the library (E8, [`uuidforge::generator::v7_from`],
//! keyed): from the `--order-by` column's time, or — without it — from
//! times synthesized one millisecond apart in the old key order, so the new
//! order equals the old one exactly. They reach the database as a
//! temporary map (old key as text → new UUID) and the plan runs:
//!
//! 1. a new `uuid` column on the table and on each referencing table,
//!    filled through the map;
//! 2. the referencing foreign keys and the primary key dropped, the
//!    identity or serial default dropped (its sequence too);
//! 3. `k` renamed `k_old` (kept, with a unique index), the new column
//!    renamed `k`; the same on each referencing column;
//! 4. `NOT NULL` and the primary key on the new column, the default
//!    `uuidv7()` when the extension is installed, single-column indexes of
//!    the referencing columns made again on the new columns, the foreign
//!    keys made again with their actions and deferrability;
//! 5. verification before commit ([`MigratePlan::verify_sql`]): row counts,
//!    1:1 old and new values, references resolved, order kept.

use crate::catalog::{Column, Constraint, Index, RelKind, Relation, Snapshot};
use crate::error::DbError;
use crate::ident::{quote_ident, quote_literal};
use crate::introspect::{
    create_views, dependent_views_query, drop_views, parse_indexes, parse_partitions, parse_views,
    partitions_query, reference_indexes_query, IndexDefinition, Partition, UserTrigger,
    ViewDefinition,
};
use crate::ops::{Backup, ChangePlan, Check, Mode, Operation, Planned, Read, Statement, Step};
use serde::Serialize;

/// What to migrate.
#[derive(Debug, Clone, Default)]
pub struct MigrateOptions {
    /// A column whose time orders the new keys (`created_at`); without it,
    /// the old key order.
    pub order_by: Option<String>,
    /// The name kept for the old values (default `<key>_old`).
    pub keep_old: Option<String>,
    /// The key column of a primary key of several columns (`id` of
    /// `(id, created_at)` on a partitioned table).
    pub column: Option<String>,
    /// Columns (`TABLE.COLUMN`) holding the key's values without a foreign
    /// key: migrated as references (no foreign key made for them).
    pub also: Vec<String>,
    /// Columns (`TABLE.COLUMN`) named for the key without a foreign key
    /// that hold other values than the key's: left as they are.
    pub leave: Vec<String>,
}

/// The column an option (`--also`, `--leave`) names: `TABLE.COLUMN` or
/// `SCHEMA.TABLE.COLUMN`, read as psql reads names; errors name the option.
fn column_option(
    snapshot: &Snapshot,
    option: &str,
    spec: &str,
) -> Result<crate::catalog::ColumnRef, DbError> {
    match crate::related::Target::parse_column(snapshot, spec).map_err(|e| e.within(option))? {
        crate::related::Target::Column(c) => Ok(c),
        crate::related::Target::Name(_) => unreachable!("parse_column returns a column"),
    }
}

/// `snapshot` with each `--also` column as a foreign key to the table's
/// key, marked undeclared (borrowed as it is without any).
pub fn with_also<'s>(
    snapshot: &'s Snapshot,
    table: &str,
    options: &MigrateOptions,
) -> Result<std::borrow::Cow<'s, Snapshot>, DbError> {
    if options.also.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(snapshot));
    }
    let relation = snapshot.find_relation(table)?;
    let (_, key_num, key, _) = key_column(snapshot, relation, options)?;
    let mut added = Vec::new();
    for spec in &options.also {
        let c = column_option(snapshot, "also", spec)?;
        let (Some(holder), Some(column)) = (
            snapshot.relation(c.relation),
            snapshot
                .relation(c.relation)
                .and_then(|r| r.column(c.column)),
        ) else {
            return Err(DbError::not_found(
                "also",
                format!("'{spec}' is not in the catalog"),
            ));
        };
        if snapshot.base_type(column.type_oid).map(|t| t.oid)
            != snapshot.base_type(key.type_oid).map(|t| t.oid)
        {
            return Err(DbError::invalid(
                "also",
                format!(
                    "{}.{} is {} (expected {}, the type of {}.{})",
                    holder.display_name(),
                    column.name,
                    column.type_name,
                    key.type_name,
                    relation.display_name(),
                    key.name
                ),
            ));
        }
        let declared = snapshot.foreign_keys().any(|fk| {
            fk.table == holder.oid
                && fk.columns.contains(&column.num)
                && fk.ref_table == relation.oid
        });
        if declared || (holder.oid == relation.oid && column.num == key_num) {
            return Err(DbError::invalid(
                "also",
                format!(
                    "{}.{} is migrated already (a foreign key to the key, or the key)",
                    holder.display_name(),
                    column.name
                ),
            ));
        }
        added.push(Constraint {
            name: crate::ident::quote_ident(&format!("{}.{}", holder.name, column.name)),
            kind: "f".into(),
            table: holder.oid,
            columns: vec![column.num],
            ref_table: relation.oid,
            ref_columns: Some(vec![key_num]),
            on_update: "a".into(),
            on_delete: "a".into(),
            deferrable: false,
            deferred: false,
            validated: true,
            inherited: false,
            undeclared: true,
        });
    }
    let mut with = snapshot.clone();
    with.constraints.extend(added);
    Ok(std::borrow::Cow::Owned(with))
}

/// A referencing column to rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Reference {
    /// `schema.table`, quoted.
    pub table: String,
    /// The column.
    pub column: String,
    /// The foreign key.
    pub constraint: String,
}

/// The plan of a migration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MigratePlan {
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
    /// Reads the old keys in the new order: rows of (old key as text,
    /// Unix milliseconds or NULL).
    pub read_keys_sql: String,
    /// Creates the temporary map (`uuidforge_keymap (old text, new uuid)`),
    /// filled by COPY before `statements` run.
    pub map_sql: String,
    /// The statements, in order.
    pub statements: Vec<String>,
    /// Checks after the statements: one row of named counts that must all
    /// be zero, as JSON text.
    pub verify_sql: String,
    /// Row counts per table (JSON text), read before and after the
    /// statements: they must be equal.
    pub counts_sql: String,
    /// Per table, a digest of every column but the key and its references
    /// (JSON text), read before and after: they must be equal.
    pub digest_sql: String,
    /// The index definitions of the tables written and their partitions
    /// (JSON text), read before and after: none lost or changed.
    pub index_set_sql: String,
    /// What the key's default becomes, for the report.
    pub default_note: String,
    /// Relations to back up (quoted qualified names).
    pub backup: Vec<String>,
    /// Whether `--order-by` times the keys.
    pub ordered: bool,
    /// Functions and procedures using the changed columns, to review.
    pub functions: Vec<crate::ops::rename::Mention>,
    /// The change the runner runs.
    pub change: ChangePlan,
}

impl Planned for MigratePlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

/// Migrating a table's key to UUIDv7 in one transaction.
#[derive(Debug, Clone)]
pub struct MigrateKey {
    /// `table` or `schema.table`.
    pub table: String,
    /// How.
    pub options: MigrateOptions,
}

impl Operation for MigrateKey {
    type Plan = MigratePlan;

    fn name(&self) -> &'static str {
        "migrate-key"
    }

    fn reads(&self, snapshot: &Snapshot, answers: &[String]) -> Result<Vec<Read>, DbError> {
        let snapshot = with_also(snapshot, &self.table, &self.options)?;
        inputs_reads(&snapshot, &self.table, &self.options, answers)
    }

    fn plan(&self, snapshot: &Snapshot, answers: &[String]) -> Result<MigratePlan, DbError> {
        let snapshot = with_also(snapshot, &self.table, &self.options)?;
        plan(
            &snapshot,
            &self.table,
            &self.options,
            &inputs_from(answers)?,
        )
    }
}

/// What a migration reads beside the snapshot: the views over the columns
/// it changes, the indexes over the references, the partitions of its
/// partitioned tables ([`PlanInputs`], in this order); nothing more once
/// `answers` holds them.
pub fn inputs_reads(
    snapshot: &Snapshot,
    table: &str,
    options: &MigrateOptions,
    answers: &[String],
) -> Result<Vec<Read>, DbError> {
    if !answers.is_empty() {
        return Ok(Vec::new());
    }
    let target = analyze(snapshot, table, options, None)?;
    let (columns, tables): (Vec<String>, Vec<String>) = target.names_used().into_iter().unzip();
    let watched = target.watched.clone();
    let parted = partitioned_tables(snapshot, table, options)?;
    let mut written: Vec<u32> = watched.iter().map(|(t, _)| *t).collect();
    written.dedup();
    let written_names: Vec<String> = target.written().iter().map(|r| r.sql_name()).collect();
    Ok(vec![
        Read {
            what: "read the dependent views".into(),
            query: dependent_views_query(&watched),
        },
        Read {
            what: "read the indexes over the references".into(),
            query: reference_indexes_query(watched.get(1..).unwrap_or_default()),
        },
        Read {
            what: "read the partitions".into(),
            query: partitions_query(&parted),
        },
        Read {
            what: "read the triggers of the tables written".into(),
            query: crate::introspect::user_triggers_query(&written),
        },
        Read {
            what: "list the functions using the columns".into(),
            query: crate::introspect::functions_using_query(&columns, &tables, target.key.type_oid),
        },
        Read {
            what: "read the indexes of the tables written".into(),
            query: crate::plan::Query::new(crate::introspect::index_set_sql(&written_names)),
        },
        Read {
            what: "read the values of columns named for the key without a foreign key".into(),
            query: named_values_query(&target, &named_for_key(snapshot, &target, options)?),
        },
    ])
}

/// The answers to [`inputs_reads`], read.
pub fn inputs_from(answers: &[String]) -> Result<PlanInputs, DbError> {
    let answer = |i: usize| answers.get(i).map_or("[]", String::as_str);
    Ok(PlanInputs {
        views: parse_views(answer(0))?,
        indexes: parse_indexes(answer(1))?,
        partitions: parse_partitions(answer(2))?,
        triggers: crate::introspect::parse_triggers(answer(3))?,
        functions: crate::introspect::parse_functions(answer(4))?,
        index_set: answers.get(5).cloned().unwrap_or_else(|| "{}".into()),
        named_values: serde_json::from_str(answer(6)).map_err(|e| {
            DbError::unreadable("values of columns named for the key", e.to_string())
        })?,
    })
}

/// The first lines of a migration plan: the table, the key and what
/// becomes of it, the references, the new default; `how` ends the first
/// line (`, in batches of about N rows`).
pub fn summary(
    plan: (&str, &str, &str, &str),
    references: &[Reference],
    default_note: &str,
    order_by: Option<&str>,
    how: &str,
) -> Vec<String> {
    let (table, key, key_type, old_name) = plan;
    let mut lines = vec![format!(
        "plan: {table} key {key} ({key_type}) → uuid (UUIDv7, {}), old values kept in {old_name}{how}",
        match order_by {
            Some(c) => format!("time from {c}"),
            None => "old key order kept".into(),
        },
    )];
    lines.extend(references.iter().map(|r| {
        format!(
            "  referenced by {}.{} ({})",
            r.table, r.column, r.constraint
        )
    }));
    lines.push(format!("  new default: {default_note}"));
    lines
}

/// The plan's lines for the functions and procedures to review.
pub fn review_lines(functions: &[crate::ops::rename::Mention]) -> Vec<String> {
    functions
        .iter()
        .map(|f| {
            format!(
                "  review {} {}: {}",
                f.kind,
                crate::ops::one_line(&f.name),
                crate::ops::one_line(&f.action)
            )
        })
        .collect()
}

/// The change: the key map made and filled, the statements, the checks
/// (every count zero, row counts unchanged), in one transaction.
fn change(plan: &MigratePlan, options: &MigrateOptions) -> ChangePlan {
    let mut steps = vec![
        Step::run(Statement::sql(plan.map_sql.clone())),
        Step::Keys {
            read: plan.read_keys_sql.clone(),
            map: "uuidforge_keymap".into(),
            ordered: plan.ordered,
        },
    ];
    steps.extend(
        plan.statements
            .iter()
            .map(|s| Step::run(Statement::sql(s.clone()))),
    );
    ChangePlan {
        operation: "migrate-key".into(),
        summary: summary(
            (&plan.table, &plan.key, &plan.key_type, &plan.old_name),
            &plan.references,
            &plan.default_note,
            options.order_by.as_deref(),
            "",
        )
        .into_iter()
        .chain(review_lines(&plan.functions))
        .collect(),
        backup: Backup {
            relations: plan.backup.clone(),
            schema_only: false,
        },
        mode: Mode::OneTransaction,
        steps,
        checks: vec![
            Check::Zero {
                what: "verify the migration".into(),
                statement: Statement::sql(plan.verify_sql.clone()),
            },
            Check::Unchanged {
                what: "row counts".into(),
                statement: Statement::sql(plan.counts_sql.clone()),
            },
            Check::Unchanged {
                what: "other columns".into(),
                statement: Statement::sql(plan.digest_sql.clone()),
            },
            Check::Unchanged {
                what: "indexes".into(),
                statement: Statement::sql(plan.index_set_sql.clone()),
            },
        ],
        epilogue: Vec::new(),
    }
}

/// Memory for the updates' joins and the index builds, for this
/// transaction only (`SET LOCAL`).
const WORK_MEM: &str = "256MB";
const MAINTENANCE_WORK_MEM: &str = "512MB";

/// Key types the migration reads.
const KEY_TYPES: [&str; 5] = ["smallint", "integer", "bigint", "text", "uuid"];

fn key_type_supported(type_name: &str) -> bool {
    KEY_TYPES.contains(&type_name)
        || type_name.starts_with("character varying")
        || type_name.starts_with("character(")
        || type_name == "character"
}

/// The foreign key `fk` made again from `columns` to `table (keys)`,
/// with its actions and deferrability.
pub(crate) fn fk_clause(
    fk: &Constraint,
    columns: &[String],
    table: &str,
    keys: &[String],
) -> String {
    let action = |code: &str| match code {
        "r" => "RESTRICT",
        "c" => "CASCADE",
        "n" => "SET NULL",
        "d" => "SET DEFAULT",
        _ => "NO ACTION",
    };
    let mut clause = format!(
        "FOREIGN KEY ({}) REFERENCES {table} ({}) ON UPDATE {} ON DELETE {}",
        names(columns),
        names(keys),
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

/// What a migration changes, read from the catalog and checked: the
/// single-transaction and the batched plans are both made from it.
pub(crate) struct Target<'a> {
    /// The key's column number.
    pub key_num: i16,
    /// The primary key's columns, the key among them.
    pub pk_columns: Vec<String>,
    /// The key and reference columns, (table, column number).
    pub watched: Vec<(u32, i16)>,
    /// Views over them (and over those), made again after the change.
    pub views: Vec<ViewDefinition>,
    /// Indexes over the references, made again from their definitions.
    pub indexes: Vec<IndexDefinition>,
    /// User triggers of the tables written, kept from firing on the
    /// change's own updates.
    pub triggers: Vec<UserTrigger>,
    pub relation: &'a Relation,
    pub key: &'a Column,
    pub pk: &'a Constraint,
    pub old_name: String,
    pub order_column: Option<String>,
    /// Referencing tables, their foreign key and column, one per column.
    /// The foreign key may be declared on a partition of the table
    /// (`fk.table` is then not the table's oid): it stands for the column.
    pub children: Vec<(&'a Relation, &'a Constraint, String)>,
    /// Foreign keys declared on partitions, each dropped and made again
    /// on its partition.
    pub partition_fks: Vec<(&'a Relation, &'a Constraint)>,
    /// A referencing table's primary key or unique constraints over the
    /// reference (they move to the new column).
    pub child_keys: Vec<(&'a Relation, &'a Constraint)>,
    /// Single-column plain btree indexes of a reference: (table, column,
    /// index).
    pub reference_indexes: Vec<(String, String, &'a Index)>,
    pub references: Vec<Reference>,
    pub default_note: String,
}

impl<'a> Target<'a> {
    /// The table (quoted, qualified), its key and the key's new column
    /// (quoted), as the statements name them.
    pub fn quoted(&self) -> (String, String, String) {
        (
            self.relation.sql_name(),
            quote_ident(&self.key.name),
            quote_ident(&new_column(&self.key.name)),
        )
    }

    /// The column of `fk` that references the key.
    pub fn reference_num(&self, fk: &Constraint) -> i16 {
        reference_column(fk, self.key_num)
    }

    /// `fk`'s other column pairs (a composite foreign key's columns beside
    /// the reference), as (referencing column, referenced column) names.
    pub fn other_pairs(&self, child: &Relation, fk: &Constraint) -> Vec<(String, String)> {
        let refs = fk.ref_columns.clone().unwrap_or_default();
        fk.columns
            .iter()
            .zip(&refs)
            .filter(|(_, &r)| r != self.key_num)
            .filter_map(|(&c, &r)| {
                Some((
                    child.column(c)?.name.clone(),
                    self.relation.column(r)?.name.clone(),
                ))
            })
            .collect()
    }

    /// ` AND p.a = x.b` for `fk`'s other column pairs.
    pub fn other_join(&self, child: &Relation, fk: &Constraint, x: &str, p: &str) -> String {
        self.other_pairs(child, fk)
            .iter()
            .map(|(c, r)| format!(" AND {p}.{} = {x}.{}", quote_ident(r), quote_ident(c)))
            .collect()
    }

    /// `fk` as a clause again, over the same column names.
    pub fn fk_clause(&self, child: &Relation, fk: &Constraint) -> String {
        let refs = fk.ref_columns.clone().unwrap_or_default();
        let columns: Vec<String> = fk
            .columns
            .iter()
            .filter_map(|&n| child.column(n).map(|c| c.name.clone()))
            .collect();
        let keys: Vec<String> = refs
            .iter()
            .filter_map(|&n| self.relation.column(n).map(|c| c.name.clone()))
            .collect();
        fk_clause(fk, &columns, &self.relation.sql_name(), &keys)
    }

    /// The columns the migration changes (the key, the references), each
    /// with the name of a table holding it (a partition declaring a
    /// reference included), as pairs: what a function using one would
    /// name together — `id` alone would tie every function naming any
    /// table's `id`.
    pub fn names_used(&self) -> Vec<(String, String)> {
        let mut pairs = vec![(self.key.name.clone(), self.relation.name.clone())];
        for (child, _, column) in &self.children {
            pairs.push((column.clone(), child.name.clone()));
        }
        for (partition, fk) in &self.partition_fks {
            let column = partition
                .column(self.reference_num(fk))
                .map_or_else(String::new, |c| c.name.clone());
            pairs.push((column, partition.name.clone()));
        }
        pairs.retain(|(column, _)| !column.is_empty());
        pairs.sort();
        pairs.dedup();
        pairs
    }

    /// Whether `fk` is declared on `child` itself (not on one of its
    /// partitions, nor a reference named with `--also`): the constraint
    /// the migration drops and makes again on `child`.
    pub fn declared_on(&self, child: &Relation, fk: &Constraint) -> bool {
        fk.table == child.oid && !fk.undeclared
    }

    /// Every foreign key over the references as declared, with the table
    /// declaring it: the referencing tables' own, then those declared on
    /// partitions.
    pub fn declared_fks(&self) -> Vec<(&'a Relation, &'a Constraint)> {
        let mut fks: Vec<(&Relation, &Constraint)> = self
            .children
            .iter()
            .filter(|(c, fk, _)| self.declared_on(c, fk))
            .map(|(c, fk, _)| (*c, *fk))
            .collect();
        fks.extend(self.partition_fks.iter().copied());
        fks
    }

    /// The primary key's columns with `key` in the key's place.
    pub fn pk_with(&self, key: &str) -> Vec<String> {
        self.pk_columns
            .iter()
            .map(|c| {
                if *c == self.key.name {
                    key.to_string()
                } else {
                    c.clone()
                }
            })
            .collect()
    }

    /// The relations a backup holds.
    pub fn backup(&self) -> Vec<String> {
        let mut backup = vec![self.relation.sql_name()];
        for r in &self.references {
            if !backup.contains(&r.table) {
                backup.push(r.table.clone());
            }
        }
        backup
    }

    /// Reads the old keys in the new order, (old key as text, Unix ms or
    /// NULL), of the rows `filter` (SQL over `x`) keeps.
    pub fn read_keys_sql(&self, filter: &str) -> String {
        let t = self.relation.sql_name();
        let k = quote_ident(&self.key.name);
        // Qualified in ORDER BY: a bare name would sort by the output column
        // of that name, the key as text (1, 10, 100, 2, …).
        match &self.order_column {
            Some(o) => format!(
                "SELECT x.{k}::text AS old_key, {ms} AS unix_ms FROM {t} x{filter} ORDER BY x.{o}, x.{k}",
                ms = unix_ms(o)
            ),
            None => format!(
                "SELECT x.{k}::text AS old_key, NULL::int8 AS unix_ms FROM {t} x{filter} ORDER BY x.{k}"
            ),
        }
    }

    /// The checks (a JSON object of counts that must all be zero) with the
    /// old values in `old`, the new ones in `new` (and each reference's
    /// `ref_old`/`ref_new` names from `names`), against the key map
    /// `map`. With `concurrent`, rows written by others during a batched
    /// migration (not in the map) are left out of the map and order checks.
    pub fn checks_sql(
        &self,
        old: &str,
        new: &str,
        reference_names: &dyn Fn(&str) -> (String, String),
        map: &str,
        concurrent: bool,
    ) -> String {
        let t = self.relation.sql_name();
        let (old, new) = (quote_ident(old), quote_ident(new));
        let mut checks = vec![
            format!("'rows without a new key', (SELECT count(*) FROM {t} WHERE {new} IS NULL)"),
            format!(
                "'new keys not 1:1 with old keys', (SELECT count(*) - count(DISTINCT {new}) + count({old}) - count(DISTINCT {old}) FROM {t})"
            ),
        ];
        if concurrent {
            checks.push(format!(
                "'new keys not from the map', (SELECT count(*) FROM {t} x JOIN {map} m ON m.old = x.{old}::text WHERE m.new <> x.{new})"
            ));
        } else {
            checks.push(format!(
                "'rows without their old key', (SELECT count(*) FROM {t} WHERE {old} IS NULL)"
            ));
            checks.push(format!(
                "'new keys not from the map', (SELECT count(*) FROM {t} x LEFT JOIN {map} m ON m.old = x.{old}::text WHERE m.new IS DISTINCT FROM x.{new})"
            ));
        }
        let mapped = if concurrent {
            format!(" JOIN {map} m ON m.old = x.{old}::text")
        } else {
            String::new()
        };
        if let Some(o) = &self.order_column {
            // Each key holds its row's millisecond, truncated (read here
            // through date_trunc, not the expression that made the keys).
            checks.push(format!(
                "'keys not at their row''s millisecond', (SELECT count(*) FROM {t} x{mapped} WHERE ('x' || substr(replace(x.{new}::text, '-', ''), 1, 12))::bit(48)::int8 <> (extract(epoch FROM date_trunc('milliseconds', x.{o})) * 1000)::int8)",
                o = quote_ident(o)
            ));
        }
        checks.push(match &self.order_column {
            // The millisecond the key holds decides the order; rows of the
            // same millisecond may swap.
            Some(o) => format!(
                "'rows out of order', (SELECT count(*) FROM (SELECT {ms} < lag({ms}) OVER (ORDER BY x.{new}) AS inverted FROM {t} x{mapped}) o WHERE inverted)",
                ms = unix_ms(o)
            ),
            None => format!(
                "'rows out of order', (SELECT count(*) FROM (SELECT x.{new} < lag(x.{new}) OVER (ORDER BY x.{old}) AS inverted FROM {t} x{mapped}) o WHERE inverted)"
            ),
        });
        for (child, fk, column) in &self.children {
            let ct = child.sql_name();
            let others = self.other_join(child, fk, "x", "p");
            let (c_old, c_new) = reference_names(column);
            let (c_old, c_new) = (quote_ident(&c_old), quote_ident(&c_new));
            // Rows others add during a batched migration have no old
            // reference to compare with (their foreign key checks them).
            let written_before = if concurrent {
                format!("x.{c_old} IS NOT NULL AND ")
            } else {
                String::new()
            };
            checks.push(format!(
                "{}, (SELECT count(*) FROM {ct} x LEFT JOIN {t} p ON p.{old} = x.{c_old}{others} WHERE {written_before}p.{new} IS DISTINCT FROM x.{c_new})",
                quote_literal(&format!("references of {}.{column} not rewritten", child.display_name()))
            ));
        }
        // Foreign keys made again are validated (in batches, after the
        // swap, by their own step).
        let declared = self.declared_fks();
        let fk_names: Vec<String> = declared
            .iter()
            .map(|(_, fk)| quote_literal(&fk.name))
            .collect();
        let fk_tables: Vec<String> = declared
            .iter()
            .map(|(table, _)| quote_literal(&table.sql_name()))
            .collect();
        if !fk_names.is_empty() {
            checks.push(format!(
                "'foreign keys not valid', (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conname = ANY (ARRAY[{}]) AND conrelid::regclass::text = ANY (ARRAY[{}]::text[]))",
                fk_names.join(", "),
                fk_tables.join(", ")
            ));
        }
        format!("SELECT json_build_object({})::text", checks.join(", "))
    }

    /// The row count of the table and of each referencing table, one row
    /// of JSON text: run before and after a migration in one transaction,
    /// the two must be equal.
    pub fn counts_sql(&self) -> String {
        let mut tables = vec![self.relation.sql_name()];
        for (child, _, _) in &self.children {
            if !tables.contains(&child.sql_name()) {
                tables.push(child.sql_name());
            }
        }
        let counts: Vec<String> = tables
            .iter()
            .map(|t| format!("{}, (SELECT count(*) FROM {t})", quote_literal(t)))
            .collect();
        format!("SELECT json_build_object({})::text", counts.join(", "))
    }

    /// The tables written, each once: the table, then its referencing
    /// tables.
    pub fn written(&self) -> Vec<&Relation> {
        let mut tables = vec![self.relation];
        for (child, _, _) in &self.children {
            if !tables.iter().any(|t| t.oid == child.oid) {
                tables.push(child);
            }
        }
        tables
    }

    /// The columns of `table` the migration changes: the key, the
    /// references to it.
    pub fn changed_columns(&self, table: &Relation) -> Vec<i16> {
        let mut changed: Vec<i16> = self
            .children
            .iter()
            .filter(|(c, _, _)| c.oid == table.oid)
            .map(|(_, fk, _)| self.reference_num(fk))
            .collect();
        if table.oid == self.relation.oid {
            changed.push(self.key_num);
        }
        changed
    }

    /// One row of JSON text: per table written, a digest of every row's
    /// other columns ([`row_digest`]: order-free, one pass). Read before
    /// the change and after, it proves that nothing but the key and its
    /// references changed: no trigger stamped a row, no value moved.
    pub fn digest_sql(&self) -> String {
        let digests: Vec<String> = self
            .written()
            .iter()
            .map(|table| {
                let changed = self.changed_columns(table);
                format!(
                    "{}, {}",
                    quote_literal(&table.sql_name()),
                    row_digest(table, &changed)
                )
            })
            .collect();
        format!("SELECT json_build_object({})::text", digests.join(", "))
    }
}

/// The text of row `x` of `table` without the columns `except`.
fn row_text(table: &Relation, except: &[i16]) -> String {
    let columns: Vec<String> = table
        .columns
        .iter()
        .filter(|c| !except.contains(&c.num))
        .map(|c| format!("x.{}", quote_ident(&c.name)))
        .collect();
    format!("ROW({})::text", columns.join(", "))
}

/// A 64-bit hash of row `x` of `table` without the columns `except`, as
/// text (`hashtextextended`: several times cheaper than MD5 over the same
/// text; it catches changes, not adversaries).
pub(crate) fn row_hash(table: &Relation, except: &[i16]) -> String {
    format!("hashtextextended({}, 0)::text", row_text(table, except))
}

/// `(SELECT ...)` over the rows of `table` without the columns `except`:
/// the row count and the sums of two 64-bit hashes of each row's text
/// (seeds 0 and 1), as text. Sums do not depend on row order, so no
/// sort: one pass. A changed row moves both sums unless both of its
/// hashes collide.
pub(crate) fn row_digest(table: &Relation, except: &[i16]) -> String {
    format!(
        "(SELECT count(*) || ':' || coalesce(sum(hashtextextended(d.t, 0)::numeric), 0) || ':' || coalesce(sum(hashtextextended(d.t, 1)::numeric), 0) FROM (SELECT {} AS t FROM {} x) d)",
        row_text(table, except),
        table.sql_name()
    )
}

/// The key and reference columns whose dependent views a plan needs
/// (read them with [`DEPENDENT_VIEWS_SQL`]).
pub fn watched_columns(
    snapshot: &Snapshot,
    table: &str,
    options: &MigrateOptions,
) -> Result<Vec<(u32, i16)>, DbError> {
    Ok(analyze(snapshot, table, options, None)?.watched)
}

/// What a plan reads beside the snapshot.
#[derive(Debug, Clone, Default)]
pub struct PlanInputs {
    /// Views over the changed columns ([`DEPENDENT_VIEWS_SQL`]).
    pub views: Vec<ViewDefinition>,
    /// Partitions of the partitioned tables ([`PARTITIONS_SQL`]).
    pub partitions: Vec<Partition>,
    /// Indexes over the references ([`REFERENCE_INDEXES_SQL`]).
    pub indexes: Vec<IndexDefinition>,
    /// User triggers of the tables written and their partitions
    /// ([`crate::introspect::USER_TRIGGERS_SQL`]).
    pub triggers: Vec<UserTrigger>,
    /// Functions and procedures using the changed columns
    /// ([`crate::introspect::FUNCTIONS_USING_SQL`]), listed for review.
    pub functions: Vec<crate::ops::rename::Mention>,
    /// Every index of the tables written and their partitions, JSON text
    /// of [`crate::introspect::index_set_sql`]: a batched migration checks
    /// at its end that each is there again, the same.
    pub index_set: String,
    /// Per column [`named_for_key`] finds, in its order: how many values
    /// it holds, and how many of them are not keys of the table.
    pub named_values: Vec<(i64, i64)>,
}

/// Columns that may hold the key's values without a foreign key saying
/// so: of the key's type, named for it (`customer_id` or `customer` for
/// `customer.customer_id`, as discovery reads names), in a table the login
/// can read, with no foreign key to the table (on it or on its
/// partitions), neither migrated with `--also` nor left with `--leave`.
/// Their values are read before planning ([`named_values_query`]).
pub(crate) fn named_for_key<'a>(
    snapshot: &'a Snapshot,
    target: &Target,
    options: &MigrateOptions,
) -> Result<Vec<(&'a Relation, &'a Column)>, DbError> {
    let mut left = Vec::new();
    for spec in &options.leave {
        let c = column_option(snapshot, "leave", spec)?;
        left.push((c.relation, c.column));
    }
    let key_type = snapshot.base_type(target.key.type_oid).map(|t| t.oid);
    let referencing = |r: &Relation, column: &Column| {
        snapshot.foreign_keys().any(|fk| {
            fk.ref_table == target.relation.oid
                && snapshot.relation(fk.table).is_some_and(|holder| {
                    let root = if holder.is_partition {
                        snapshot
                            .partition_root(holder.oid)
                            .map_or(holder.oid, |t| t.oid)
                    } else {
                        holder.oid
                    };
                    root == r.oid
                        && fk
                            .columns
                            .iter()
                            .any(|&n| holder.column(n).is_some_and(|c| c.name == column.name))
                })
        })
    };
    let mut found = Vec::new();
    for r in snapshot.relations.iter().filter(|r| {
        matches!(r.kind, RelKind::Table | RelKind::PartitionedTable)
            && !r.is_partition
            && r.can_select
    }) {
        for column in &r.columns {
            if (r.oid == target.relation.oid && column.num == target.key_num)
                || !column.can_select
                || snapshot.base_type(column.type_oid).map(|t| t.oid) != key_type
                || crate::discover::name_evidence(
                    &column.name,
                    &target.relation.name,
                    &target.key.name,
                ) < 1.0
                || left.contains(&(r.oid, column.num))
                || referencing(r, column)
            {
                continue;
            }
            found.push((r, column));
        }
    }
    Ok(found)
}

/// One row of JSON text: per column of `named` (in order), `[values, not
/// keys]` — how many non-null values it holds and how many of them are
/// not keys of the table.
pub(crate) fn named_values_query(
    target: &Target,
    named: &[(&Relation, &Column)],
) -> crate::plan::Query {
    let (t, k, _) = target.quoted();
    let counts: Vec<String> = named
        .iter()
        .map(|(r, c)| {
            format!(
                "(SELECT json_build_array(count(x.{c}), count(x.{c}) FILTER (WHERE NOT EXISTS (SELECT FROM {t} p WHERE p.{k} = x.{c}))) FROM {} x)",
                r.sql_name(),
                c = quote_ident(&c.name)
            )
        })
        .collect();
    crate::plan::Query::new(format!(
        "SELECT json_build_array({})::text",
        counts.join(", ")
    ))
}

/// Refuses when a column named for the key, without a foreign key, holds
/// only key values: a reference nobody declared, which the migration would
/// leave holding old keys.
fn refuse_named_references(
    snapshot: &Snapshot,
    target: &Target,
    options: &MigrateOptions,
    values: &[(i64, i64)],
) -> Result<(), DbError> {
    for ((r, c), (held, outside)) in named_for_key(snapshot, target, options)?.iter().zip(values) {
        if *held > 0 && *outside == 0 {
            let spec = also_spec(snapshot, (r.oid, c.num));
            return Err(DbError::refused(
                "table",
                format!(
                    "{}.{} has no foreign key to {} but is named for its key and each of its {held} values is one of its keys: it would keep the old keys; migrate it as a reference with --also {spec} (or declare its foreign key), or leave it as it is with --leave {spec}",
                    r.display_name(),
                    c.name,
                    target.relation.display_name()
                ),
            ));
        }
    }
    Ok(())
}

/// The partitioned tables among the migrated table and its referencing
/// tables.
pub fn partitioned_tables(
    snapshot: &Snapshot,
    table: &str,
    options: &MigrateOptions,
) -> Result<Vec<u32>, DbError> {
    let target = analyze(snapshot, table, options, None)?;
    let mut out = Vec::new();
    for r in std::iter::once(target.relation).chain(target.children.iter().map(|(c, _, _)| *c)) {
        if r.kind == RelKind::PartitionedTable && !out.contains(&r.oid) {
            out.push(r.oid);
        }
    }
    Ok(out)
}

/// The primary key of `relation` and the key column among its columns
/// (`--column` for a key of several columns).
fn key_column<'a>(
    snapshot: &'a Snapshot,
    relation: &'a Relation,
    options: &MigrateOptions,
) -> Result<(&'a Constraint, i16, &'a Column, Vec<String>), DbError> {
    let pk = snapshot.primary_key(relation.oid).ok_or_else(|| {
        DbError::refused(
            "table",
            format!(
                "{} has no primary key (expected one of one column)",
                relation.display_name()
            ),
        )
    })?;
    let pk_columns: Vec<String> = pk
        .columns
        .iter()
        .filter_map(|&n| relation.column(n).map(|c| c.name.clone()))
        .collect();
    let key_num = match (&pk.columns[..], &options.column) {
        ([only], None) => *only,
        (_, Some(name)) => Some(relation.find_column("column", name)?)
            .filter(|c| pk.columns.contains(&c.num))
            .map(|c| c.num)
            .ok_or_else(|| {
                DbError::invalid(
                    "column",
                    format!(
                        "'{name}' is not a column of the primary key of {} (expected one of {})",
                        relation.display_name(),
                        pk_columns.join(", ")
                    ),
                )
            })?,
        (_, None) => {
            // Of (id, created_at), the number or uuid column is the key.
            let keys: Vec<i16> = pk
                .columns
                .iter()
                .copied()
                .filter(|&n| {
                    relation.column(n).is_some_and(|c| {
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
                    return Err(DbError::refused(
                        "table",
                        format!(
                            "the primary key of {} has {} columns ({}); name the key with --column",
                            relation.display_name(),
                            pk.columns.len(),
                            pk_columns.join(", ")
                        ),
                    ))
                }
            }
        }
    };
    let key = relation
        .column(key_num)
        .ok_or_else(|| DbError::unreadable("table", "key column not found"))?;
    if !key_type_supported(&key.type_name) {
        return Err(DbError::refused(
            "table",
            format!(
                "key {}.{} is {} (expected smallint, integer, bigint, text, varchar, char or uuid)",
                relation.display_name(),
                key.name,
                key.type_name
            ),
        ));
    }
    Ok((pk, key_num, key, pk_columns))
}

/// Where the old values go (`--keep-old`) and the column whose time
/// orders the new keys (`--order-by`).
fn names_of(
    relation: &Relation,
    key: &Column,
    options: &MigrateOptions,
) -> Result<(String, Option<String>), DbError> {
    // A name the user gives reads as psql reads it (unquoted folds).
    let old_name = match &options.keep_old {
        Some(text) => match &crate::ident::parse_name(text)
            .map_err(|e| DbError::invalid("keep-old", e))?[..]
        {
            [one] => one.name.clone(),
            _ => {
                return Err(DbError::invalid(
                    "keep-old",
                    format!("'{text}' is not one column name"),
                ))
            }
        },
        None => format!("{}_old", key.name),
    };
    if old_name.is_empty() || old_name.len() > 63 || relation.column_named(&old_name).is_some() {
        return Err(DbError::invalid("keep-old", format!("'{old_name}' is taken or not a column name (expected a free name of 1 to 63 bytes)"
        )));
    }
    let order_column = match &options.order_by {
        Some(name) => {
            let c = relation.find_column("order-by", name)?;
            if !(c.type_name.starts_with("timestamp") || c.type_name == "date") {
                return Err(DbError::invalid(
                    "order-by",
                    format!(
                        "{}.{name} is {} (expected timestamp, timestamptz or date)",
                        relation.display_name(),
                        c.type_name
                    ),
                ));
            }
            Some(c.name.clone())
        }
        None => None,
    };

    Ok((old_name, order_column))
}

/// A referencing table, its foreign key and its referencing column.
type Child<'a> = (&'a Relation, &'a Constraint, String);

/// The foreign keys referencing the key: each referencing table, its
/// constraint and column, one per column (a foreign key declared on a
/// partition stands for its partitioned table's column); the references
/// for the report; the foreign keys declared on partitions.
#[allow(clippy::type_complexity)]
fn children_of<'a>(
    snapshot: &'a Snapshot,
    relation: &'a Relation,
    key: &Column,
    key_num: i16,
) -> Result<
    (
        Vec<Child<'a>>,
        Vec<Reference>,
        Vec<(&'a Relation, &'a Constraint)>,
    ),
    DbError,
> {
    let is_table = |r: &Relation| {
        matches!(r.kind, RelKind::Table | RelKind::PartitionedTable) && !r.is_partition
    };
    let mut references = Vec::new();
    let mut children: Vec<(&Relation, &Constraint, String)> = Vec::new();
    let mut partition_fks: Vec<(&Relation, &Constraint)> = Vec::new();
    for fk in snapshot
        .foreign_keys()
        .filter(|fk| fk.ref_table == relation.oid)
    {
        let child = snapshot
            .relation(fk.table)
            .ok_or_else(|| DbError::unreadable("foreign key", "table not found"))?;
        let refs = fk.ref_columns.clone().unwrap_or_default();
        let Some(at) = refs.iter().position(|&n| n == key_num) else {
            return Err(DbError::refused("table", format!("foreign key {} of {} references columns of {} without its key {} (not migrated)",
                fk.name,
                child.display_name(),
                relation.display_name(),
                key.name
            )));
        };
        // Declared on a partition: the column belongs to the partitioned
        // table at the top, which the migration changes (a partition's
        // columns are its table's); the constraint stays the partition's,
        // dropped and made again there.
        let declared_on = child;
        let child = if child.is_partition {
            let root = snapshot
                .partition_root(child.oid)
                .filter(|r| !r.is_partition)
                .ok_or_else(|| {
                    DbError::refused(
                        "table",
                        format!(
                            "{} referencing it is a partition whose partitioned table is not in the catalog read",
                            child.display_name()
                        ),
                    )
                })?;
            for &n in &fk.columns {
                let same = child.column(n).map(|c| &c.name) == root.column(n).map(|c| &c.name);
                if !same {
                    return Err(DbError::refused(
                        "table",
                        format!(
                            "foreign key {} of partition {} numbers its columns unlike {} (a table attached with its columns in another order; not supported: declare the foreign key on {})",
                            fk.name,
                            child.display_name(),
                            root.display_name(),
                            root.display_name()
                        ),
                    ));
                }
            }
            root
        } else {
            child
        };
        if !is_table(child) {
            return Err(DbError::refused(
                "table",
                format!(
                    "{} referencing it is a {} (expected a table or a partitioned table)",
                    child.display_name(),
                    child.kind.name()
                ),
            ));
        }
        let column = child
            .column(fk.columns[at])
            .ok_or_else(|| DbError::unreadable("foreign key", "column not found"))?
            .name
            .clone();
        references.push(Reference {
            table: declared_on.sql_name(),
            column: column.clone(),
            constraint: if fk.undeclared {
                "no foreign key: --also".into()
            } else {
                fk.name.clone()
            },
        });
        if declared_on.oid != child.oid {
            partition_fks.push((declared_on, fk));
            // One entry per column of the partitioned table.
            if children
                .iter()
                .any(|(c, _, col)| c.oid == child.oid && *col == column)
            {
                continue;
            }
        }
        let kept = format!("{column}_old");
        if child.column_named(&kept).is_some() {
            return Err(DbError::refused(
                "table",
                format!(
                    "{} already has a column '{kept}' (expected it free for the old references)",
                    child.display_name()
                ),
            ));
        }
        children.push((child, fk, column));
    }
    // A partitioned table's own foreign key over a column comes first:
    // its entry stands for the column.
    let own: Vec<(u32, String)> = children
        .iter()
        .filter(|(c, fk, _)| fk.table == c.oid)
        .map(|(c, _, col)| (c.oid, col.clone()))
        .collect();
    children.retain(|(c, fk, col)| fk.table == c.oid || !own.contains(&(c.oid, col.clone())));
    Ok((children, references, partition_fks))
}

/// The column of `fk` that references the key `key_num`.
fn reference_column(fk: &Constraint, key_num: i16) -> i16 {
    let at = fk
        .ref_columns
        .as_ref()
        .and_then(|r| r.iter().position(|&n| n == key_num))
        .unwrap_or(0);
    fk.columns[at]
}

/// Refuses when a view over `watched` columns was not read, or is
/// materialized (not made again).
fn check_views(
    snapshot: &Snapshot,
    watched: &[(u32, i16)],
    views: &[ViewDefinition],
) -> Result<(), DbError> {
    let read: Vec<u32> = views.iter().map(|v| v.oid).collect();
    let mut unread: Vec<String> = snapshot
        .view_sources()
        .iter()
        .filter(|(v, s)| watched.contains(&(s.relation, s.column)) && !read.contains(&v.relation))
        .filter_map(|(v, _)| snapshot.relation(v.relation).map(|r| r.display_name()))
        .collect();
    unread.sort();
    unread.dedup();
    if !unread.is_empty() {
        return Err(DbError::refused(
            "table",
            format!(
                "views {} show the key or its references but were not read (plan again)",
                unread.join(", ")
            ),
        ));
    }
    if let Some(reason) = unmigrated_comparison(snapshot, watched, views) {
        return Err(DbError::refused("table", reason));
    }
    Ok(())
}

/// `schema.table.column` as `--also` takes it (quoted where psql needs).
fn also_spec(snapshot: &Snapshot, (rel, num): (u32, i16)) -> String {
    snapshot
        .relation(rel)
        .map(|r| {
            let column = r
                .column(num)
                .map_or("?".to_string(), |c| crate::ident::as_typed(&c.name));
            format!("{}.{column}", r.typed_name())
        })
        .unwrap_or_default()
}

/// A dependent view that compares a changed column (the key, a reference)
/// with a column the migration leaves as it is — a reference without a
/// foreign key: made again over the new `uuid` column, it would fail
/// (`operator does not exist: integer = uuid`). Found in the view's query
/// tree, so before anything runs.
fn unmigrated_comparison(
    snapshot: &Snapshot,
    watched: &[(u32, i16)],
    views: &[ViewDefinition],
) -> Option<String> {
    // A partition's column is its partitioned table's.
    let normal = |(rel, num): (u32, i16)| -> (u32, i16) {
        let Some(r) = snapshot.relation(rel) else {
            return (rel, num);
        };
        match snapshot.partition_root(rel) {
            Some(root) if r.is_partition => r
                .column(num)
                .and_then(|c| root.column_named(&c.name))
                .map_or((rel, num), |c| (root.oid, c.num)),
            _ => (rel, num),
        }
    };
    let recreated: Vec<u32> = views.iter().map(|v| v.oid).collect();
    let changed = |c: (u32, i16)| watched.contains(&normal(c)) || recreated.contains(&c.0);
    let label = |(rel, num): (u32, i16)| {
        snapshot
            .relation(rel)
            .map(|r| {
                let column = r.column(num).map_or("?".to_string(), |c| c.name.clone());
                format!("{}.{column}", r.display_name())
            })
            .unwrap_or_default()
    };
    for view in views {
        let Some(rule) = snapshot.view_rules.iter().find(|r| r.view == view.oid) else {
            continue;
        };
        let Some(tree) = crate::nodes::parse(&rule.action) else {
            continue;
        };
        for (a, b) in crate::nodes::compared_columns(&tree) {
            let (migrated, left) = match (changed(a), changed(b)) {
                (true, false) => (a, b),
                (false, true) => (b, a),
                _ => continue,
            };
            return Some(format!(
                "view {}.{} compares {} with {}, which no foreign key ties to the key: over the new uuid column that comparison would fail; migrate it as a reference with --also {} (or declare its foreign key), or drop the view first",
                view.schema,
                view.name,
                label(migrated),
                label(left),
                also_spec(snapshot, left)
            ));
        }
    }
    None
}

/// A referencing table's own primary key or unique constraints over the
/// reference (they move to the new column); refused when referenced
/// themselves.
fn child_keys_of<'a>(
    snapshot: &'a Snapshot,
    relation: &Relation,
    pk: &Constraint,
    key_num: i16,
    children: &[Child<'a>],
) -> Result<Vec<(&'a Relation, &'a Constraint)>, DbError> {
    let reference_num = |fk: &Constraint| reference_column(fk, key_num);
    let mut child_keys: Vec<(&Relation, &Constraint)> = Vec::new();
    for (child, fk, _) in children.iter() {
        for c in snapshot.constraints.iter().filter(|c| {
            c.table == child.oid
                && matches!(c.kind.as_str(), "p" | "u")
                && c.columns.contains(&reference_num(fk))
        }) {
            if c.table == relation.oid && c.name == pk.name {
                continue;
            }
            if let Some(user) = snapshot.foreign_keys().find(|f| {
                f.ref_table == child.oid
                    && f.ref_columns
                        .as_ref()
                        .is_some_and(|r| r.contains(&reference_num(fk)))
            }) {
                return Err(DbError::refused("table", format!("{} of {} covers a reference and is itself referenced by {} (not migrated yet)",
                    c.name, child.display_name(), user.name
                )));
            }
            child_keys.push((child, c));
        }
    }
    Ok(child_keys)
}

/// Single-column plain b-tree indexes of the references that no
/// constraint owns; refused when one was not read in the planning pass.
fn reference_indexes_of<'a>(
    snapshot: &'a Snapshot,
    key_num: i16,
    children: &[Child<'a>],
    inputs: Option<&PlanInputs>,
) -> Result<Vec<(String, String, &'a Index)>, DbError> {
    let reference_num = |fk: &Constraint| reference_column(fk, key_num);
    // An index a key or unique constraint owns has its name (a foreign
    // key of the same name owns none).
    let owned = |index: &Index| {
        snapshot.constraints.iter().any(|c| {
            c.table == index.table
                && matches!(c.kind.as_str(), "p" | "u" | "x")
                && c.name == index.name
        })
    };
    let simple = |index: &Index, num: i16| {
        index.keys.contains(&num)
            && index.expressions.is_none()
            && index.predicate.is_none()
            && index.method == "btree"
            && !owned(index)
    };
    let mut reference_indexes = Vec::new();
    for (child, fk, column) in children.iter() {
        for index in snapshot.indexes_of(child.oid) {
            if simple(index, reference_num(fk)) {
                reference_indexes.push((child.sql_name(), column.clone(), index));
            }
        }
        // A partition's own indexes over the column (not attached to one of
        // its table's, which the table's index stands for): read in the
        // planning pass, which leaves the attached ones out.
        let Some(inputs) = inputs else { continue };
        for leaf in inputs.partitions.iter().filter(|p| p.parent == child.oid) {
            let Some(partition) = snapshot.relation(leaf.oid) else {
                continue;
            };
            let Some(num) = partition.column_named(column).map(|c| c.num) else {
                continue;
            };
            for index in snapshot.indexes_of(leaf.oid) {
                if simple(index, num) && inputs.indexes.iter().any(|d| d.oid == index.oid) {
                    reference_indexes.push((partition.sql_name(), column.clone(), index));
                }
            }
        }
    }
    if let Some(inputs) = inputs {
        if let Some((_, _, unread)) = reference_indexes
            .iter()
            .find(|(_, _, i)| !inputs.indexes.iter().any(|d| d.oid == i.oid))
        {
            return Err(DbError::refused(
                "table",
                format!(
                    "index {} over a reference was not read (plan again)",
                    unread.name
                ),
            ));
        }
    }
    Ok(reference_indexes)
}

/// Reads and checks what migrating `table`'s key changes. Errors name
/// the argument, the value and what was expected.
pub(crate) fn analyze<'a>(
    snapshot: &'a Snapshot,
    table: &str,
    options: &MigrateOptions,
    inputs: Option<&PlanInputs>,
) -> Result<Target<'a>, DbError> {
    let views = inputs.map(|i| &i.views[..]);
    let relation = snapshot.find_relation(table)?;
    if !matches!(relation.kind, RelKind::Table | RelKind::PartitionedTable) || relation.is_partition
    {
        return Err(DbError::refused(
            "table",
            format!(
                "{} is a {} (expected a table or a partitioned table; a partition is migrated with its table)",
                relation.display_name(),
                if relation.is_partition { "partition" } else { relation.kind.name() }
            ),
        ));
    }
    let (pk, key_num, key, pk_columns) = key_column(snapshot, relation, options)?;
    let (old_name, order_column) = names_of(relation, key, options)?;
    let (children, references, partition_fks) = children_of(snapshot, relation, key, key_num)?;
    // Views over the columns would go on showing the old values: they are
    // made again over the new columns, from definitions the caller read
    // (`DEPENDENT_VIEWS_SQL`) for exactly these columns.
    let mut watched = vec![(relation.oid, key_num)];
    watched.extend(
        children
            .iter()
            .map(|(c, fk, _)| (c.oid, reference_column(fk, key_num))),
    );
    if let Some(views) = views {
        check_views(snapshot, &watched, views)?;
    }
    let child_keys = child_keys_of(snapshot, relation, pk, key_num, &children)?;
    let reference_indexes = reference_indexes_of(snapshot, key_num, &children, inputs)?;
    let default_note = match &snapshot.extension_schema {
        Some(schema) => format!("{schema}.uuidv7() (the uuidforge extension)"),
        None => "none: the uuidforge extension is not installed; generate UUIDv7 keys in the application or install it and set DEFAULT uuidv7()".into(),
    };
    let target = Target {
        key_num,
        pk_columns,
        watched,
        views: views.map(<[ViewDefinition]>::to_vec).unwrap_or_default(),
        indexes: inputs.map(|i| i.indexes.clone()).unwrap_or_default(),
        triggers: inputs.map(|i| i.triggers.clone()).unwrap_or_default(),
        relation,
        key,
        pk,
        old_name,
        order_column,
        children,
        partition_fks,
        child_keys,
        reference_indexes,
        references,
        default_note,
    };
    if let Some(inputs) = inputs {
        refuse_named_references(snapshot, &target, options, &inputs.named_values)?;
    }
    Ok(target)
}

/// The Unix millisecond of the time in column `column` of row `x`,
/// truncated as a UUIDv7 holds it (and as `uuid_extract_timestamp` reads
/// it back): a cast would round half of the times up.
fn unix_ms(column: &str) -> String {
    format!(
        "floor(extract(epoch FROM x.{}) * 1000)::int8",
        quote_ident(column)
    )
}

/// The name of the new column made for `column` while the migration runs.
pub(crate) fn new_column(column: &str) -> String {
    format!("{column}_uuidforge_new")
}

/// The name the old references of `column` are kept under.
pub(crate) fn old_reference(column: &str) -> String {
    format!("{column}_old")
}

/// The unique index kept on the old key values.
pub(crate) fn old_index_name(target: &Target) -> String {
    truncate(&format!("{}_{}_key", target.relation.name, target.old_name))
}

/// An index's column names, `replace` = (column, with) swapped in.
pub(crate) fn index_columns(
    table: &Relation,
    index: &Index,
    replace: Option<(&str, &str)>,
) -> Vec<String> {
    index
        .keys
        .iter()
        .filter_map(|&n| table.column(n))
        .map(|c| match replace {
            Some((from, to)) if c.name == from => to.to_string(),
            _ => c.name.clone(),
        })
        .collect()
}

/// Quoted names, comma-separated.
pub(crate) fn names(columns: &[String]) -> String {
    columns
        .iter()
        .map(|c| quote_ident(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statements up to the new values: settings, views dropped, new
/// columns, constraints and indexes over the old ones dropped, the new
/// columns filled from the key map.
fn fill_statements(target: &Target) -> Vec<String> {
    let Target {
        pk,
        children,
        child_keys,
        ..
    } = target;
    let (t, k, kn) = target.quoted();
    let new_col = |name: &str| quote_ident(&new_column(name));
    let mut s = Vec::new();
    // Deferred foreign key checks would leave events pending, and a table
    // with pending events cannot be altered: check as rows change.
    s.push("SET CONSTRAINTS ALL IMMEDIATE".to_string());
    // The joins of the updates and the index builds, in memory.
    s.push(format!("SET LOCAL work_mem = {}", quote_literal(WORK_MEM)));
    s.push(format!(
        "SET LOCAL maintenance_work_mem = {}",
        quote_literal(MAINTENANCE_WORK_MEM)
    ));
    s.extend(drop_views(&target.views));
    s.push(format!("ALTER TABLE {t} ADD COLUMN {kn} uuid"));
    for (child, _, column) in children.iter() {
        s.push(format!(
            "ALTER TABLE {} ADD COLUMN {} uuid",
            child.sql_name(),
            new_col(column)
        ));
    }
    for (table, fk) in target.declared_fks() {
        s.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            table.sql_name(),
            quote_ident(&fk.name)
        ));
    }
    // A referencing table's own primary key or unique constraints over the
    // reference move to the new column: dropped here, made again below.
    for (child, c) in child_keys {
        s.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            child.sql_name(),
            quote_ident(&c.name)
        ));
    }
    // Indexes over a reference serve the new column: dropped before the
    // updates (which would otherwise add an entry per row), made again
    // from their definitions at the end.
    for index in &target.indexes {
        s.push(format!(
            "DROP INDEX {}",
            crate::ident::qualified(&index.schema, &index.name)
        ));
    }
    s.push(format!(
        "ALTER TABLE {t} DROP CONSTRAINT {}",
        quote_ident(&pk.name)
    ));
    // The application's triggers are not to see the migration's own
    // writes (a `last_update = now()` would stamp every row).
    let (quiet, restore) = crate::introspect::quiet_triggers(&target.triggers);
    s.extend(quiet);
    // With no key or reference index left to maintain, each row is
    // written once.
    s.push(format!(
        "UPDATE {t} AS x SET {kn} = m.new FROM uuidforge_keymap m WHERE m.old = x.{k}::text"
    ));
    for (child, fk, column) in children.iter() {
        // Joined with the table's new column on the old key's own type
        // (no text cast on millions of references).
        s.push(format!(
            "UPDATE {ct} AS x SET {cn} = p.{kn} FROM {t} p WHERE p.{k} = x.{c}{others}",
            ct = child.sql_name(),
            cn = new_col(column),
            c = quote_ident(column),
            others = target.other_join(child, fk, "x", "p")
        ));
    }
    s.extend(restore);
    s
}

/// The statements from the new values on: the old key's default and
/// sequence gone, columns swapped, keys, constraints and indexes made
/// again on the new columns, the default `uuidv7()`.
fn swap_statements(snapshot: &Snapshot, target: &Target) -> Vec<String> {
    let Target {
        key,
        pk,
        old_name,
        children,
        child_keys,
        ..
    } = target;
    let (t, k, kn) = target.quoted();
    let new_col = |name: &str| quote_ident(&new_column(name));
    let old = quote_ident(old_name);
    let mut s = Vec::new();
    // Identity or serial: the default goes, and its sequence with it.
    s.push(format!(
        "ALTER TABLE {t} ALTER COLUMN {k} DROP IDENTITY IF EXISTS"
    ));
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {k} DROP DEFAULT"));
    s.push(format!(
        "DO $uuidforge$ DECLARE s text := pg_get_serial_sequence({}, {}); BEGIN IF s IS NOT NULL THEN EXECUTE 'DROP SEQUENCE ' || s; END IF; END $uuidforge$",
        quote_literal(&t),
        quote_literal(&key.name)
    ));
    s.push(format!("ALTER TABLE {t} RENAME COLUMN {k} TO {old}"));
    // Rows made from now on have no old key.
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {old} DROP NOT NULL"));
    s.push(format!("ALTER TABLE {t} RENAME COLUMN {kn} TO {k}"));
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {k} SET NOT NULL"));
    s.push(format!(
        "ALTER TABLE {t} ADD CONSTRAINT {} PRIMARY KEY ({})",
        quote_ident(&pk.name),
        names(&target.pk_columns)
    ));
    // With the primary key's other columns (a partitioned table's unique
    // indexes hold its partition key).
    s.push(format!(
        "CREATE UNIQUE INDEX {} ON {t} ({})",
        quote_ident(&old_index_name(target)),
        names(&target.pk_with(old_name))
    ));
    if let Some(schema) = &snapshot.extension_schema {
        s.push(format!(
            "ALTER TABLE {t} ALTER COLUMN {k} SET DEFAULT {}.uuidv7()",
            quote_ident(schema)
        ));
    }
    for (child, fk, column) in children.iter() {
        let ct = child.sql_name();
        let c = quote_ident(column);
        let cold = quote_ident(&format!("{column}_old"));
        s.push(format!("ALTER TABLE {ct} RENAME COLUMN {c} TO {cold}"));
        s.push(format!(
            "ALTER TABLE {ct} RENAME COLUMN {} TO {c}",
            new_col(column)
        ));
        if child
            .column(target.reference_num(fk))
            .is_some_and(|c| c.not_null)
        {
            s.push(format!("ALTER TABLE {ct} ALTER COLUMN {c} SET NOT NULL"));
            s.push(format!(
                "ALTER TABLE {ct} ALTER COLUMN {cold} DROP NOT NULL"
            ));
        }
    }
    for (table, fk) in target.declared_fks() {
        s.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {}",
            table.sql_name(),
            quote_ident(&fk.name),
            target.fk_clause(table, fk)
        ));
    }
    // Their definitions name the columns: after every rename they name the
    // new ones (and keep method, order, operator classes, INCLUDE and
    // predicate).
    s.extend(target.indexes.iter().map(|i| i.definition.clone()));
    for (child, c) in child_keys.iter() {
        let names: Vec<String> = c
            .columns
            .iter()
            .filter_map(|&n| child.column(n))
            .map(|col| quote_ident(&col.name))
            .collect();
        s.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {} ({})",
            child.sql_name(),
            quote_ident(&c.name),
            if c.kind == "p" {
                "PRIMARY KEY"
            } else {
                "UNIQUE"
            },
            names.join(", ")
        ));
    }

    s
}

/// Plans migrating `table`'s primary key in one transaction. Errors name
/// the argument, the value and what was expected.
pub fn plan(
    snapshot: &Snapshot,
    table: &str,
    options: &MigrateOptions,
    inputs: &PlanInputs,
) -> Result<MigratePlan, DbError> {
    let target = analyze(snapshot, table, options, Some(inputs))?;
    let Target { key, old_name, .. } = &target;
    let read_keys_sql = target.read_keys_sql("");
    let map_sql = "CREATE TEMP TABLE uuidforge_keymap (old text PRIMARY KEY, new uuid NOT NULL UNIQUE) ON COMMIT DROP".to_string();
    let mut s = fill_statements(&target);
    s.extend(swap_statements(snapshot, &target));
    s.extend(create_views(&target.views, &snapshot.user));
    let verify_sql = target.checks_sql(
        old_name,
        &key.name,
        &|column| (old_reference(column), column.to_string()),
        "uuidforge_keymap",
        false,
    );
    let mut plan = MigratePlan {
        table: target.relation.sql_name(),
        key: key.name.clone(),
        key_type: key.type_name.clone(),
        old_name: old_name.clone(),
        references: target.references.clone(),
        read_keys_sql,
        map_sql,
        statements: s,
        verify_sql,
        counts_sql: target.counts_sql(),
        digest_sql: target.digest_sql(),
        index_set_sql: crate::introspect::index_set_sql(
            &target
                .written()
                .iter()
                .map(|r| r.sql_name())
                .collect::<Vec<_>>(),
        ),
        default_note: target.default_note.clone(),
        backup: target.backup(),
        ordered: options.order_by.is_some(),
        functions: inputs.functions.clone(),
        change: ChangePlan::default(),
    };
    plan.change = change(&plan, options);
    Ok(plan)
}

/// At most 63 bytes (PostgreSQL's limit), cut at a character boundary.
fn truncate(name: &str) -> String {
    let mut end = name.len().min(63);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// Where synthesized times start (2000-01-01T00:00:00Z): without
/// `--order-by`, row `i` in the old key order gets this time plus `i`
/// milliseconds, so a re-run gives the same keys.
pub const SYNTHESIZED_EPOCH_MS: u64 = 946_684_800_000;

/// The new key of each row, in the order `read_keys_sql` returned them:
/// `v7_from(time, old key, secret)` with the row's time (or the
/// synthesized one).
pub fn new_keys(
    rows: &[(String, Option<i64>)],
    ordered: bool,
    secret: &[u8],
) -> Result<Vec<uuid::Uuid>, DbError> {
    rows.iter()
        .enumerate()
        .map(|(i, (old, ms))| {
            let ms = match (ordered, ms) {
                (true, Some(ms)) => u64::try_from(*ms).map_err(|_| {
                    DbError::invalid(
                        "order-by",
                        format!(
                            "row with key '{old}' has a time before 1970 (expected 1970 to 10889)"
                        ),
                    )
                })?,
                (true, None) => {
                    return Err(DbError::invalid(
                        "order-by",
                        format!("row with key '{old}' has no time (expected a time in every row)"),
                    ))
                }
                (false, _) => SYNTHESIZED_EPOCH_MS + i as u64,
            };
            uuidforge::generator::v7_from(ms, old.as_bytes(), secret)
                .map_err(|e| DbError::invalid("order-by", format!("row with key '{old}': {e}")))
        })
        .collect()
}

/// The tables whose value differs between two rows of
/// [`Target::counts_sql`] or [`Target::digest_sql`], as
/// `table: before, after`.
pub fn count_changes(before: &str, after: &str) -> Vec<String> {
    let read = |json: &str| -> serde_json::Map<String, serde_json::Value> {
        serde_json::from_str(json).unwrap_or_default()
    };
    let (before, after) = (read(before), read(after));
    before
        .iter()
        .filter(|(table, n)| after.get(*table) != Some(n))
        .map(|(table, n)| {
            format!(
                "{table}: {n} before, {} after",
                after.get(table).cloned().unwrap_or_default()
            )
        })
        .collect()
}

/// Reads the verification row: the checks that failed (empty when all
/// hold), and every check as `name: count`.
pub fn verification(json: &str) -> Result<(Vec<String>, Vec<String>), DbError> {
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json)
        .map_err(|e| DbError::unreadable("verification", format!("{e}")))?;
    let mut failed = Vec::new();
    let mut all = Vec::new();
    for (name, count) in map {
        let n = count.as_i64().unwrap_or(-1);
        all.push(format!("{name}: {n}"));
        if n != 0 {
            failed.push(format!("{name}: {n}"));
        }
    }
    Ok((failed, all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesized_keys_keep_the_old_order_and_come_back_the_same() {
        let rows: Vec<(String, Option<i64>)> = (1..=5000).map(|i| (i.to_string(), None)).collect();
        let a = new_keys(&rows, false, b"secret").unwrap();
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, new_keys(&rows, false, b"secret").unwrap());
        assert_ne!(a, new_keys(&rows, false, b"other").unwrap());
        assert!(a.iter().all(|u| u.get_version_num() == 7));
    }

    #[test]
    fn times_from_a_column_order_the_keys() {
        let rows = vec![
            ("b".to_string(), Some(1_000)),
            ("a".to_string(), Some(2_000)),
        ];
        let keys = new_keys(&rows, true, b"s").unwrap();
        assert!(keys[0] < keys[1]);
        let err = new_keys(&[("x".into(), Some(-1))], true, b"s").unwrap_err();
        assert!(
            err.context == "order-by" && err.message.contains("'x'"),
            "{err}"
        );
        let err = new_keys(&[("y".into(), None)], true, b"s").unwrap_err();
        assert!(
            err.message.contains("no time") && err.message.contains("'y'"),
            "{err}"
        );
    }

    #[test]
    fn count_changes_names_the_table() {
        assert!(count_changes(r#"{"t": 3, "c": 5}"#, r#"{"t": 3, "c": 5}"#).is_empty());
        assert_eq!(
            count_changes(r#"{"t": 3, "c": 5}"#, r#"{"t": 3, "c": 4}"#),
            vec!["c: 5 before, 4 after"]
        );
    }

    #[test]
    fn verification_names_what_failed() {
        let (failed, all) =
            verification(r#"{"rows out of order": 0, "new keys not from the map": 2}"#).unwrap();
        assert_eq!(failed, vec!["new keys not from the map: 2"]);
        assert_eq!(all.len(), 2);
    }
}

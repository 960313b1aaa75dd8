//! Merging duplicate UUIDs. Several keys of one table that name one
//! object become one UUIDv7 everywhere, in one transaction, with a log
//! that [`unmerge`](super::unmerge) reads back.
//!
//! The plan, in order:
//! 1. the log (`uuidforge_merge_log`, in the table's schema) and
//!    `uuid_resolve(uuid)` made when missing; the log locked so merges
//!    run one at a time;
//! 2. one log row per old key with images of its row and of every row
//!    referencing it;
//! 3. the foreign keys to the table checked at the end of the
//!    transaction (made `DEFERRABLE` for its length when they are not);
//! 4. referencing rows that would collide on a unique constraint resolved
//!    by `--on-conflict` (their images logged first);
//! 5. every reference moved to the new key, the duplicates' rows deleted,
//!    the survivor's row given the new key;
//! 6. chains shortened: keys merged before into an old key now resolve to
//!    the new one, so `uuid_resolve` is one index lookup;
//! 7. checks before commit: no reference and no row left with an old key.

use crate::catalog::{Relation, Snapshot};
use crate::error::DbError;
use crate::find::Hit;
use crate::ident::{qualified, quote_ident};
use crate::ops::{
    deferrable, distinct, one_line, Backup, ChangePlan, Check, Mode, Operation, Planned, Read,
    Statement, Step, Stop, Value,
};
use crate::plan::{Param, Query};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// The log table's name, in the merged table's schema.
pub const LOG_TABLE: &str = "uuidforge_merge_log";

/// What happens when moving references makes two rows collide on a
/// unique constraint (`user_id, group_id` of a membership table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum OnConflict {
    /// In each colliding group, the row of the survivor (else of the
    /// oldest key) is kept and the others deleted.
    #[default]
    KeepSurvivor,
    /// Every colliding row of a duplicate is deleted; the survivor's rows
    /// stay (a group without one loses all its rows).
    DeleteDuplicate,
    /// The merge is refused, listing the collisions.
    Fail,
}

/// What to merge.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// The key they all become (default a new UUIDv7). One of the merged
    /// keys keeps its row; another must not exist in the table.
    pub into: Option<Uuid>,
    /// The row kept (default the oldest key by UUIDv7 time).
    pub keep: Option<Uuid>,
    /// Unique collisions among referencing rows.
    pub on_conflict: OnConflict,
    /// Why, for the log.
    pub reason: Option<String>,
}

/// A referencing column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Referencing {
    /// `schema.table`, quoted.
    pub table: String,
    /// The column.
    pub column: String,
    /// The foreign key.
    pub constraint: String,
}

/// The plan of a merge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergePlan {
    /// `schema.table`, quoted.
    pub table: String,
    /// Its key column.
    pub key: String,
    /// The key every merged one becomes.
    pub new: Uuid,
    /// The key whose row is kept (given `new`).
    pub survivor: Uuid,
    /// The keys that go away.
    pub olds: Vec<Uuid>,
    /// Every merged key, survivor first, then oldest first.
    pub priority: Vec<Uuid>,
    /// The log table (quoted, qualified).
    pub log_table: String,
    /// Declared references moved.
    pub references: Vec<Referencing>,
    /// Values outside the declared references rewritten in place.
    pub implicit: Implicit,
    /// `--reason`.
    pub reason: Option<String>,
    /// The change the runner runs.
    pub change: ChangePlan,
}

impl Planned for MergePlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

/// Values [`crate::find`] saw outside the declared references, rewritten
/// in place (each read and written whole as text) and logged with the
/// merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Implicit {
    /// Logs one rewritten value: `$1` merge number, `$2` the old key,
    /// `$3` its image (JSON text).
    pub log_sql: String,
    /// The values.
    pub values: Vec<ImplicitValue>,
}

/// One value to rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplicitValue {
    /// Its table (quoted, qualified).
    pub table: String,
    /// Its column.
    pub column: String,
    /// `schema.table.column`, for messages.
    pub column_name: String,
    /// Its row's primary key, as JSON text (`$1` of the statements).
    pub key: String,
    /// The merged key it holds.
    pub old: Uuid,
    /// (as written, the new key written the same way).
    pub spellings: Vec<(String, String)>,
    /// Reads the value as text, locking the row (`$1` the key).
    pub read_sql: String,
    /// Writes it (`$1` the key, `$2` the new text).
    pub write_sql: String,
}

impl Implicit {
    /// Its printed lines.
    pub fn printed(&self) -> Vec<String> {
        self.values
            .iter()
            .map(|v| {
                format!(
                    "-- rewrite {} of row {} in place: {}",
                    one_line(&v.column_name),
                    one_line(&v.key),
                    v.spellings
                        .iter()
                        .map(|(w, r)| format!("'{}' → '{}'", one_line(w), one_line(r)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect()
    }
}

/// Merging `ids` (keys of one table) into `new`, with the values
/// `implicit` (from [`crate::find`]) rewritten too.
#[derive(Debug, Clone)]
pub struct Merge {
    /// The merged keys.
    pub ids: Vec<Uuid>,
    /// What they become (`--into`, or a fresh UUIDv7 the caller made).
    pub new: Uuid,
    /// How.
    pub options: MergeOptions,
    /// What `find` saw of the keys outside the declared references.
    pub implicit: Vec<Hit>,
}

impl Operation for Merge {
    type Plan = MergePlan;

    fn name(&self) -> &'static str {
        "merge"
    }

    /// First how many of the keys each key table holds; then, when the new
    /// key is not one of them, whether the table has it already.
    fn reads(&self, snapshot: &Snapshot, answers: &[String]) -> Result<Vec<Read>, DbError> {
        let tables = key_tables(snapshot);
        if answers.is_empty() {
            return Ok(tables
                .iter()
                .map(|(_, sql)| Read {
                    what: "look for the keys".into(),
                    query: Query {
                        sql: format!("SELECT n::text FROM ({sql}) c(n)"),
                        params: vec![Param::UuidArray(self.ids.clone())],
                    },
                })
                .collect());
        }
        if answers.len() > tables.len() {
            return Ok(Vec::new());
        }
        let table = locate(&tables, answers, &self.ids)?;
        let (relation, sql) = &tables[table];
        // Then, in one pass: whether --into is taken (when it is not one of
        // the merged keys), and the triggers of the tables written (last).
        let mut reads = Vec::new();
        if !self.ids.contains(&self.new) {
            reads.push(Read {
                what: "check --into".into(),
                query: Query {
                    sql: format!("SELECT n::text FROM ({sql}) c(n)"),
                    params: vec![Param::UuidArray(vec![self.new])],
                },
            });
        }
        reads.push(Read {
            what: "read the triggers of the tables written".into(),
            query: crate::introspect::user_triggers_query(&written_tables(snapshot, relation)?),
        });
        Ok(reads)
    }

    fn plan(&self, snapshot: &Snapshot, answers: &[String]) -> Result<MergePlan, DbError> {
        let tables = key_tables(snapshot);
        let table = locate(&tables, answers, &self.ids)?;
        let relation = tables[table].0;
        let into_taken = if self.ids.contains(&self.new) {
            None
        } else {
            answers.get(tables.len())
        };
        if into_taken.is_some_and(|n| n != "0") {
            return Err(DbError::invalid(
                "into",
                format!(
                    "{} is already the key of another row of {} (expected a new UUID or one of the merged)",
                    self.new,
                    relation.sql_name()
                ),
            ));
        }
        let triggers = match answers.get(tables.len()..) {
            Some(rest) if !rest.is_empty() => {
                crate::introspect::parse_triggers(rest.last().map_or("[]", String::as_str))?
            }
            _ => Vec::new(),
        };
        plan(
            snapshot,
            relation.oid,
            &self.ids,
            self.new,
            &self.options,
            &self.implicit,
            &triggers,
        )
    }
}

/// The tables a merge into `relation` writes: it, and the tables whose
/// foreign keys reference its key.
fn written_tables(snapshot: &Snapshot, relation: &Relation) -> Result<Vec<u32>, DbError> {
    let key = key_of(snapshot, relation)?;
    let mut tables = vec![relation.oid];
    for (child, _, _) in references_of(snapshot, relation, key)? {
        if !tables.contains(&child.oid) {
            tables.push(child.oid);
        }
    }
    Ok(tables)
}

/// Which of `tables` holds all of `ids` (the only one), from the counts
/// in `answers`.
fn locate(
    tables: &[(&Relation, String)],
    answers: &[String],
    ids: &[Uuid],
) -> Result<usize, DbError> {
    let found: Vec<(usize, String, usize)> = tables
        .iter()
        .zip(answers)
        .enumerate()
        .filter_map(|(i, ((relation, _), n))| {
            let n: usize = n.parse().unwrap_or(0);
            (n > 0).then(|| (i, relation.display_name(), n))
        })
        .collect();
    match found.as_slice() {
        [(i, _, n)] if *n == ids.len() => Ok(*i),
        [] => Err(DbError::not_found(
            "ids",
            "none of them is the key of a row (expected keys of one table whose primary key is a uuid column)",
        )),
        _ => Err(DbError::invalid(
            "ids",
            format!(
                "found as keys of {} (expected all of them as keys of one table)",
                found
                    .iter()
                    .map(|(_, name, n)| format!("{name}: {n} of {}", ids.len()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Tables whose primary key is one `uuid` column: where merged keys are
/// looked for. Each with a query counting the given keys it holds
/// (binding `$1 uuid[]`).
pub fn key_tables(snapshot: &Snapshot) -> Vec<(&Relation, String)> {
    snapshot
        .relations
        .iter()
        .filter(|r| r.kind == crate::catalog::RelKind::Table && !r.is_partition)
        .filter_map(|r| {
            let pk = snapshot.primary_key(r.oid)?;
            let [num] = pk.columns[..] else { return None };
            let key = r.column(num)?;
            (key.type_name == "uuid" && r.can_select).then(|| {
                (
                    r,
                    format!(
                        "SELECT count(*) FROM {} WHERE {} = ANY ($1::uuid[])",
                        r.sql_name(),
                        quote_ident(&key.name)
                    ),
                )
            })
        })
        .collect()
}

/// The Unix milliseconds of a version 7 key, for "oldest"; others sort
/// last.
fn v7_time(id: &Uuid) -> u64 {
    if id.get_version_num() == 7 {
        let b = id.as_bytes();
        u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]])
    } else {
        u64::MAX
    }
}

/// The key column of `relation`, when its primary key is one column.
fn key_of<'a>(
    snapshot: &'a Snapshot,
    relation: &'a Relation,
) -> Result<&'a crate::catalog::Column, DbError> {
    let pk = snapshot.primary_key(relation.oid).ok_or_else(|| {
        DbError::refused(
            "table",
            format!("{} has no primary key", relation.display_name()),
        )
    })?;
    let [key_num] = pk.columns[..] else {
        return Err(DbError::refused(
            "table",
            format!(
                "the primary key of {} has {} columns (expected one uuid column)",
                relation.display_name(),
                pk.columns.len()
            ),
        ));
    };
    relation
        .column(key_num)
        .ok_or_else(|| DbError::unreadable("table", "key column not found"))
}

/// The survivor (the row already holding the new key, else `--keep`, else
/// the oldest by UUIDv7 time) and every key in priority order.
fn survivor_and_priority(
    ids: &[Uuid],
    new: Uuid,
    options: &MergeOptions,
) -> Result<(Uuid, Vec<Uuid>), DbError> {
    if ids.len() < 2 {
        return Err(DbError::invalid(
            "ids",
            format!("{} given (expected at least two UUIDs to merge)", ids.len()),
        ));
    }
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(DbError::invalid(
                "ids",
                format!("{id} is given twice (expected distinct UUIDs)"),
            ));
        }
    }
    if let Some(keep) = options.keep {
        if !ids.contains(&keep) {
            return Err(DbError::invalid(
                "keep",
                format!(
                    "{keep} is not one of the merged UUIDs (expected one of {})",
                    list(ids)
                ),
            ));
        }
    }
    if ids.contains(&new) && options.keep.is_some_and(|k| k != new) {
        return Err(DbError::invalid(
            "into",
            format!("{new} is one of the merged UUIDs and keeps its own row (expected --keep {new} or no --keep)"),
        ));
    }
    let survivor = if ids.contains(&new) {
        new
    } else if let Some(keep) = options.keep {
        keep
    } else {
        *ids.iter()
            .min_by_key(|id| v7_time(id))
            .expect("at least two ids")
    };
    let mut priority = vec![survivor];
    let mut rest: Vec<Uuid> = ids.iter().copied().filter(|&id| id != survivor).collect();
    rest.sort_by_key(v7_time);
    priority.extend(rest);
    Ok((survivor, priority))
}

/// A declared reference: the referencing table, its foreign key, its column.
type Fk<'a> = (
    &'a Relation,
    &'a crate::catalog::Constraint,
    &'a crate::catalog::Column,
);

/// The single-column foreign keys to the key (others are refused).
fn references_of<'a>(
    snapshot: &'a Snapshot,
    relation: &'a Relation,
    key: &crate::catalog::Column,
) -> Result<Vec<Fk<'a>>, DbError> {
    let mut fks = Vec::new();
    for fk in snapshot
        .foreign_keys()
        .filter(|f| f.ref_table == relation.oid)
    {
        let child = snapshot
            .relation(fk.table)
            .ok_or_else(|| DbError::unreadable("foreign key", "table not found"))?;
        if fk.columns.len() != 1 || fk.ref_columns.as_deref() != Some(&[key.num][..]) {
            return Err(DbError::refused(
                "table",
                format!(
                    "foreign key {} of {} covers {} columns (only single-column references to {} are merged)",
                    fk.name,
                    child.display_name(),
                    fk.columns.len(),
                    key.name
                ),
            ));
        }
        let column = child
            .column(fk.columns[0])
            .ok_or_else(|| DbError::unreadable("foreign key", "column not found"))?;
        fks.push((child, fk, column));
    }
    Ok(fks)
}

/// The values a plan binds, by name.
struct Values {
    new: Uuid,
    olds: Vec<Uuid>,
    survivor: Uuid,
    priority: Vec<Uuid>,
    reason: Option<String>,
}

impl Values {
    fn bind(&self, name: &str) -> (&'static str, Value) {
        match name {
            "new" => ("new", Value::Uuid(self.new)),
            "olds" => ("olds", Value::Uuids(self.olds.clone())),
            "survivor" => ("survivor", Value::Uuid(self.survivor)),
            "priority" => ("priority", Value::Uuids(self.priority.clone())),
            "reason" => ("reason", Value::Text(self.reason.clone())),
            _ => ("merge_id", Value::Output),
        }
    }

    /// A statement binding `names` in order.
    fn statement(&self, sql: String, names: &[&str]) -> Step {
        let bindings: Vec<(&str, Value)> = names.iter().map(|n| self.bind(n)).collect();
        Step::run(Statement::with(sql, &bindings))
    }
}

/// The log made when missing and locked, this merge numbered, one log row
/// per old key with the images of its row and of every row referencing it.
fn log_steps(relation: &Relation, key: &str, fks: &[Fk], v: &Values) -> Vec<Step> {
    let t = relation.sql_name();
    let k = quote_ident(key);
    let log = qualified(&relation.schema, LOG_TABLE);
    let resolve = qualified(&relation.schema, "uuid_resolve");
    let reference_images: Vec<String> = fks
        .iter()
        .map(|(child, _, column)| {
            format!(
                "jsonb_build_object('table', {table}, 'column', {column}, 'rows', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM {ct} x WHERE x.{c} = o))",
                table = sql_text(&child.sql_name()),
                column = sql_text(&column.name),
                ct = child.sql_name(),
                c = quote_ident(&column.name)
            )
        })
        .collect();
    vec![
        Step::run(Statement::sql(format!(
            "CREATE TABLE IF NOT EXISTS {log} (merge_id bigint NOT NULL, old uuid NOT NULL UNIQUE, new uuid NOT NULL, direct uuid NOT NULL, merged_at timestamptz NOT NULL DEFAULT now(), reason text, merged_by text NOT NULL DEFAULT current_user, table_name text NOT NULL, row_images jsonb NOT NULL)"
        ))),
        Step::run(Statement::sql(format!(
            "CREATE INDEX IF NOT EXISTS {} ON {log} (new)",
            quote_ident(&format!("{LOG_TABLE}_new_idx"))
        ))),
        Step::run(Statement::sql(format!(
            "CREATE OR REPLACE FUNCTION {resolve}(id uuid) RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $uuidforge$ SELECT coalesce((SELECT l.new FROM {log} l WHERE l.old = id), id) $uuidforge$"
        ))),
        Step::run(Statement::sql(format!("LOCK TABLE {log} IN SHARE ROW EXCLUSIVE MODE"))),
        Step::Run {
            statement: Statement::sql(format!(
                "SELECT (coalesce(max(merge_id), 0) + 1)::text FROM {log}"
            )),
            output: Some("merge_id".into()),
            rows: None,
            message: None,
        },
        v.statement(
            format!("UPDATE {log} SET new = $1 WHERE new = ANY ($2::uuid[])"),
            &["new", "olds"],
        ),
        v.statement(
            format!(
                "INSERT INTO {log} (merge_id, old, new, direct, reason, table_name, row_images) \
                 SELECT $1, o, $2, $2, $3, {tname}, jsonb_build_object('row', (SELECT to_jsonb(t) FROM {t} t WHERE t.{k} = o), 'survivor', o = $4, 'references', jsonb_build_array({refs}), 'deleted', '[]'::jsonb, 'implicit', '[]'::jsonb) \
                 FROM unnest($5::uuid[]) o",
                tname = sql_text(&t),
                refs = reference_images.join(", ")
            ),
            &["merge_id", "new", "reason", "survivor", "olds"],
        ),
    ]
}

/// Referencing rows that would collide on a unique constraint once moved:
/// counted (refused with `--on-conflict fail`), else their images logged
/// and the rows deleted.
fn collision_steps(
    snapshot: &Snapshot,
    log: &str,
    fks: &[Fk],
    on_conflict: OnConflict,
    v: &Values,
) -> Vec<Step> {
    let mut counts = Vec::new();
    let mut steps = Vec::new();
    for (child, _, column) in fks {
        let c = quote_ident(&column.name);
        for index in snapshot.indexes_of(child.oid).filter(|i| {
            i.unique
                && i.valid
                && i.predicate.is_none()
                && i.expressions.is_none()
                && i.keys.contains(&column.num)
        }) {
            let others: Vec<String> = index
                .keys
                .iter()
                .filter(|&&n| n != column.num)
                .filter_map(|&n| child.column(n))
                .map(|col| format!("x.{}", quote_ident(&col.name)))
                .collect();
            let partition = if others.is_empty() {
                String::new()
            } else {
                format!("PARTITION BY {} ", others.join(", "))
            };
            let not_null: String = others
                .iter()
                .map(|o| format!(" AND {o} IS NOT NULL"))
                .collect();
            let ranked = format!(
                "SELECT x.ctid AS row_id, x.{c} AS ref, row_number() OVER ({partition}ORDER BY array_position($1::uuid[], x.{c})) AS pos, count(*) OVER ({partition}) AS n FROM {ct} x WHERE x.{c} = ANY ($1::uuid[]){not_null}",
                ct = child.sql_name(),
            );
            counts.push(format!(
                "({}, (SELECT count(*) FROM ({ranked}) r WHERE n > 1 AND pos > 1))",
                sql_text(&format!(
                    "{}.{} ({})",
                    child.display_name(),
                    column.name,
                    index.name
                ))
            ));
            let doomed = match on_conflict {
                OnConflict::KeepSurvivor | OnConflict::Fail => "n > 1 AND pos > 1",
                OnConflict::DeleteDuplicate => "n > 1 AND ref <> $1[1]",
            };
            let selection = format!("SELECT row_id FROM ({ranked}) r WHERE {doomed}");
            // Deleted rows go into the log entry of the key they referenced.
            steps.push(v.statement(
                format!(
                    "UPDATE {log} l SET row_images = jsonb_set(l.row_images, '{{deleted}}', l.row_images->'deleted' || jsonb_build_array(jsonb_build_object('table', {tname}, 'rows', d.images))) \
                     FROM (SELECT x.{c} AS ref, jsonb_agg(to_jsonb(x)) AS images FROM {ct} x WHERE x.ctid = ANY (ARRAY({selection})) GROUP BY x.{c}) d \
                     WHERE l.merge_id = $2 AND l.old = d.ref",
                    ct = child.sql_name(),
                    tname = sql_text(&child.sql_name())
                ),
                &["priority", "merge_id"],
            ));
            steps.push(v.statement(
                format!(
                    "DELETE FROM {ct} x WHERE x.ctid = ANY (ARRAY({selection}))",
                    ct = child.sql_name()
                ),
                &["priority"],
            ));
        }
    }
    if counts.is_empty() {
        return steps;
    }
    // The collisions, as `table.column (index): n` for the report.
    let collisions = v.bind("priority");
    let read = Statement::with(
        format!(
            "SELECT coalesce(string_agg(c.name || ': ' || c.n, ', ' ORDER BY c.name), '') FROM (VALUES {}) c(name, n) WHERE c.n > 0",
            counts.join(", ")
        ),
        &[collisions],
    );
    let first = match on_conflict {
        OnConflict::Fail => Step::Expect {
            statement: read,
            expect: String::new(),
            stop: Stop::Refused,
            context: "on-conflict".into(),
            message: "fail: moving the references would make rows collide on unique constraints: {value} (nothing was changed; expected keep-survivor or delete-duplicate)".into(),
        },
        _ => Step::Run {
            statement: read,
            output: Some("collisions".into()),
            rows: None,
            message: None,
        },
    };
    let mut all = vec![first];
    all.extend(steps);
    all
}

/// Where a value is: schema, table, column, its row's key (JSON text).
type ValueAt = (String, String, String, String);
/// (as written, the new key written the same way).
type Spellings = Vec<(String, String)>;

/// The values `hits` name outside the declared references, to rewrite.
fn implicit_values(
    snapshot: &Snapshot,
    relation: &Relation,
    key: &str,
    fks: &[Fk],
    new: Uuid,
    hits: &[Hit],
) -> Result<Implicit, DbError> {
    // (schema, table, column, key) → spellings, and the old key to log under.
    let mut groups: BTreeMap<ValueAt, (Spellings, Uuid)> = BTreeMap::new();
    for hit in hits {
        let rel = snapshot
            .relations
            .iter()
            .find(|r| r.schema == hit.schema && r.name == hit.table)
            .ok_or_else(|| {
                DbError::not_found("implicit", format!("{}.{} is gone", hit.schema, hit.table))
            })?;
        let declared = rel.oid == relation.oid && hit.column == key
            || fks
                .iter()
                .any(|(c, _, col)| c.oid == rel.oid && col.name == hit.column)
            || rel.name == LOG_TABLE;
        if declared {
            continue;
        }
        if hit.key_unstable {
            return Err(DbError::refused(
                "implicit",
                format!(
                    "{}.{}.{} holds {} in a row without a primary key (nothing was changed: rewrite it by hand or merge without --implicit)",
                    hit.schema, hit.table, hit.column, hit.value
                ),
            ));
        }
        let old: Uuid = hit
            .value
            .parse()
            .map_err(|_| DbError::invalid("implicit", hit.value.clone()))?;
        let replacement = respell(&hit.written, &new)?;
        let entry = groups
            .entry((
                hit.schema.clone(),
                hit.table.clone(),
                hit.column.clone(),
                hit.key.to_string(),
            ))
            .or_insert_with(|| (Vec::new(), old));
        if !entry
            .0
            .contains(&(hit.written.clone(), replacement.clone()))
        {
            entry.0.push((hit.written.clone(), replacement));
        }
    }
    let mut values = Vec::new();
    for ((schema, table, column, row_key), (spellings, old)) in groups {
        let rel = snapshot
            .relations
            .iter()
            .find(|r| r.schema == schema && r.name == table)
            .expect("found above");
        let col = rel.column_named(&column).ok_or_else(|| {
            DbError::not_found("implicit", format!("{schema}.{table}.{column} is gone"))
        })?;
        let predicate = key_predicate(snapshot, rel).ok_or_else(|| {
            DbError::refused("implicit", format!("{schema}.{table} has no primary key"))
        })?;
        let c = quote_ident(&column);
        let t = rel.sql_name();
        values.push(ImplicitValue {
            read_sql: format!("SELECT x.{c}::text FROM {t} x WHERE {predicate} FOR UPDATE"),
            write_sql: format!(
                "UPDATE {t} x SET {c} = $2::text::{} WHERE {predicate}",
                col.type_name
            ),
            table: t,
            column,
            column_name: format!("{schema}.{table}.{}", col.name),
            key: row_key,
            old,
            spellings,
        });
    }
    Ok(Implicit {
        log_sql: format!(
            "UPDATE {} SET row_images = jsonb_set(row_images, '{{implicit}}', row_images->'implicit' || $3::text::jsonb) WHERE merge_id = $1 AND old = $2",
            qualified(&relation.schema, LOG_TABLE)
        ),
        values,
    })
}

/// The condition naming one row by its primary key, as `find` reported
/// it (`$1` the key as JSON text).
pub(crate) fn key_predicate(snapshot: &Snapshot, relation: &Relation) -> Option<String> {
    let pk = snapshot.primary_key(relation.oid)?;
    let names: Vec<String> = pk
        .columns
        .iter()
        .filter_map(|&n| relation.column(n))
        .map(|c| quote_ident(&c.name))
        .collect();
    let x: Vec<String> = names.iter().map(|n| format!("x.{n}")).collect();
    let r: Vec<String> = names.iter().map(|n| format!("r.{n}")).collect();
    Some(format!(
        "({}) = (SELECT {} FROM json_populate_record(NULL::{}, $1::text::json) r)",
        x.join(", "),
        r.join(", "),
        relation.sql_name()
    ))
}

/// Plans merging `ids` (keys of the table `table_oid`) into `new` (the
/// `--into` key or a fresh UUIDv7 the caller made), rewriting the values
/// of `hits` outside the declared references. Errors name the argument,
/// the value and what was expected.
pub fn plan(
    snapshot: &Snapshot,
    table_oid: u32,
    ids: &[Uuid],
    new: Uuid,
    options: &MergeOptions,
    hits: &[Hit],
    triggers: &[crate::introspect::UserTrigger],
) -> Result<MergePlan, DbError> {
    let relation = snapshot
        .relation(table_oid)
        .ok_or_else(|| DbError::unreadable("table", "not found in the catalog"))?;
    let key = key_of(snapshot, relation)?;
    let (survivor, priority) = survivor_and_priority(ids, new, options)?;
    let olds: Vec<Uuid> = ids.iter().copied().filter(|&id| id != new).collect();
    let fks = references_of(snapshot, relation, key)?;
    let v = Values {
        new,
        olds: olds.clone(),
        survivor,
        priority: priority.clone(),
        reason: options.reason.clone(),
    };
    let t = relation.sql_name();
    let k = quote_ident(&key.name);
    let log = qualified(&relation.schema, LOG_TABLE);
    let implicit = implicit_values(snapshot, relation, &key.name, &fks, new, hits)?;
    let mut steps = log_steps(relation, &key.name, &fks, &v);
    // Checked at commit: the new key exists only once the survivor has it.
    steps.extend(deferrable(fks.iter().map(|(c, fk, _)| (*c, *fk)), true));
    steps.push(Step::run(Statement::sql("SET CONSTRAINTS ALL DEFERRED")));
    // The application's triggers do not see the merge's own writes (a
    // `last_update = now()` would stamp the survivor, and unmerge would
    // then find it changed).
    let (quiet, restore) = crate::introspect::quiet_triggers(triggers);
    steps.extend(quiet.into_iter().map(|s| Step::run(Statement::sql(s))));
    steps.extend(collision_steps(
        snapshot,
        &log,
        &fks,
        options.on_conflict,
        &v,
    ));
    for (child, _, column) in &fks {
        steps.push(v.statement(
            format!(
                "UPDATE {} SET {c} = $1 WHERE {c} = ANY ($2::uuid[])",
                child.sql_name(),
                c = quote_ident(&column.name)
            ),
            &["new", "olds"],
        ));
    }
    steps.push(v.statement(
        format!("DELETE FROM {t} WHERE {k} = ANY ($1::uuid[]) AND {k} <> $2"),
        &["olds", "survivor"],
    ));
    if survivor != new {
        steps.push(v.statement(
            format!("UPDATE {t} SET {k} = $1 WHERE {k} = $2"),
            &["new", "survivor"],
        ));
    }
    if !implicit.values.is_empty() {
        steps.push(Step::Implicit(implicit.clone()));
    }
    steps.push(Step::run(Statement::sql("SET CONSTRAINTS ALL IMMEDIATE")));
    steps.extend(deferrable(fks.iter().map(|(c, fk, _)| (*c, *fk)), false));
    // After the deferred checks ran: a table with pending trigger events
    // cannot be altered.
    steps.extend(restore.into_iter().map(|s| Step::run(Statement::sql(s))));
    let mut checks = vec![format!(
        "'rows left with an old key', (SELECT count(*) FROM {t} WHERE {k} = ANY ($1::uuid[]))"
    )];
    for (child, _, column) in &fks {
        checks.push(format!(
            "{}, (SELECT count(*) FROM {} WHERE {} = ANY ($1::uuid[]))",
            sql_text(&format!(
                "references left in {}.{}",
                child.display_name(),
                column.name
            )),
            child.sql_name(),
            quote_ident(&column.name)
        ));
    }
    let references: Vec<Referencing> = fks
        .iter()
        .map(|(child, fk, column)| Referencing {
            table: child.sql_name(),
            column: column.name.clone(),
            constraint: fk.name.clone(),
        })
        .collect();
    let backup = distinct(
        std::iter::once(t.clone())
            .chain(references.iter().map(|r| r.table.clone()))
            .chain(implicit.values.iter().map(|i| i.table.clone())),
    );
    let summary = summary(ids.len(), &t, &v, &references);
    let change = ChangePlan {
        operation: "merge".into(),
        summary,
        backup: Backup {
            relations: backup,
            schema_only: false,
        },
        mode: Mode::OneTransaction,
        steps,
        checks: vec![Check::Zero {
            what: "verify the merge".into(),
            statement: Statement::with(
                format!("SELECT json_build_object({})::text", checks.join(", ")),
                &[v.bind("olds")],
            ),
        }],
        epilogue: Vec::new(),
    };
    Ok(MergePlan {
        table: t,
        key: key.name.clone(),
        new,
        survivor,
        olds,
        priority,
        log_table: log,
        references,
        implicit,
        reason: options.reason.clone(),
        change,
    })
}

/// The plan's first lines: what becomes what, the references moved, and
/// the values its statements bind.
fn summary(count: usize, table: &str, v: &Values, references: &[Referencing]) -> Vec<String> {
    let (new, survivor) = (v.new, v.survivor);
    let mut summary = vec![format!(
        "plan: merge {count} key(s) of {table} into {new} (row kept: {survivor}), one transaction"
    )];
    summary.extend(v.olds.iter().map(|old| format!("  {old} → {new}")));
    summary.extend(references.iter().map(|r| {
        format!(
            "  references moved in {}.{} ({})",
            r.table, r.column, r.constraint
        )
    }));
    summary.push(format!(
        "  parameters: new = {new}, olds = {{{}}}, survivor = {survivor}, priority = {{{}}}, reason = {}",
        list_compact(&v.olds),
        list_compact(&v.priority),
        v.reason.as_deref().unwrap_or("NULL")
    ));
    summary
}

fn list_compact(ids: &[Uuid]) -> String {
    ids.iter()
        .map(Uuid::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `written` (a UUID as `find` saw it spelled) with `new` spelled the
/// same way: format, and upper case where it was.
///
/// ```
/// use uuidforge_db::ops::merge::respell;
/// let new: uuid::Uuid = "01a20b75-a552-73f7-a8ca-662323ac601a".parse().unwrap();
/// assert_eq!(respell("{0190A5DA-AC96-774B-BCCE-B302099A8058}", &new).unwrap(),
///            "{01A20B75-A552-73F7-A8CA-662323AC601A}");
/// assert_eq!(respell("\\x01900a5dac96774bbcceb302099a8058", &new).unwrap(),
///            "\\x01a20b75a55273f7a8ca662323ac601a");
/// ```
pub fn respell(written: &str, new: &Uuid) -> Result<String, DbError> {
    // Bytes, as PostgreSQL shows a bytea holding a UUID.
    if let Some(hex) = written.strip_prefix("\\x") {
        if hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(format!("\\x{}", new.simple()));
        }
    }
    let (_, format) = uuidforge::parser::parse_detect(written).map_err(|e| {
        DbError::unreadable(
            "implicit",
            format!("'{written}' does not read back as a UUID ({e})"),
        )
    })?;
    let text = format.to_text(new);
    let hex_upper = written
        .chars()
        .any(|c| c.is_ascii_uppercase() && c.is_ascii_hexdigit())
        && !written
            .chars()
            .any(|c| c.is_ascii_lowercase() && c.is_ascii_hexdigit());
    Ok(match format {
        uuidforge::fmt::Format::Urn if hex_upper => {
            format!("{}{}", &written[..9], text[9..].to_ascii_uppercase())
        }
        uuidforge::fmt::Format::Canonical
        | uuidforge::fmt::Format::Simple
        | uuidforge::fmt::Format::Braced
            if hex_upper =>
        {
            text.to_ascii_uppercase()
        }
        uuidforge::fmt::Format::Base32 | uuidforge::fmt::Format::Base32Check
            if written.chars().any(|c| c.is_ascii_lowercase()) =>
        {
            text.to_ascii_lowercase()
        }
        _ => text,
    })
}

/// `text` as an SQL string literal (a name the plan itself wrote, never a
/// user's value).
fn sql_text(text: &str) -> String {
    crate::ident::quote_literal(text)
}

fn list(ids: &[Uuid]) -> String {
    ids.iter()
        .map(Uuid::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_v7_key_survives_and_others_sort_by_age() {
        let at = |ms: u64| uuidforge::generator::v7_from(ms, b"k", b"s").unwrap();
        let (a, b, c) = (at(3_000), at(1_000), at(2_000));
        let v4 = Uuid::from_u128(0x1234_5678_9abc_4def_8123_4567_89ab_cdef);
        let mut ids = vec![a, v4, b, c];
        assert_eq!(ids.iter().min_by_key(|id| v7_time(id)), Some(&b));
        ids.sort_by_key(v7_time);
        assert_eq!(ids, vec![b, c, a, v4]);
    }
}

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

mod implicit;
mod log;

pub use crate::action::{Implicit, ImplicitValue, Transaction};
pub(crate) use implicit::key_predicate;
pub use implicit::respell;

use crate::action::{Action, Data, Timing};
use crate::ops::key::{by_column, deferrable, references_to, Key, Reference};
use crate::ops::Reading;
use crate::ops::{
    distinct, touched, Answers, Backup, ChangePlan, Check, Operation, Planned, Read, Run,
    Statement, Step, Value,
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use uuidforge_db::catalog::{Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::find::Hit;
use uuidforge_db::plan::{Param, Query};
use uuidforge_ident::{qualified, quote_ident, quote_literal};

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
    pub implicit: Vec<ImplicitValue>,
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

/// Merging `ids` (keys of one table) into `new`, with the values
/// `implicit` (from [`uuidforge_db::find`]) rewritten too.
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

/// The name of the read counting the keys in key table `oid`.
fn count_read(oid: u32) -> crate::ops::reads::NumberOf {
    crate::ops::reads::NumberOf {
        prefix: "keys in",
        oid,
        what: "look for the keys",
    }
}

/// The read of whether the UUID merged into is another row's key.
const INTO: crate::ops::NamedText =
    crate::ops::NamedText::new("into", "check the UUID merged into");

impl Operation for Merge {
    type Plan = MergePlan;

    fn name(&self) -> &'static str {
        "merge"
    }

    /// First how many of the keys each key table holds; then, once the
    /// table is known, whether the new key is taken there (when it is not
    /// one of the merged) and the triggers of the tables written.
    fn reads(&self, snapshot: &Snapshot, answers: &Answers) -> Result<Vec<Read>, DbError> {
        let tables = key_tables(snapshot);
        let count = |sql: &str, ids: Vec<Uuid>| Query {
            sql: format!("SELECT n::text FROM ({sql}) c(n)"),
            params: vec![Param::UuidArray(ids)],
        };
        let mut reads: Vec<Read> = tables
            .iter()
            .map(|(r, sql)| count_read(r.oid).read(count(sql, self.ids.clone())))
            .collect();
        if tables
            .iter()
            .any(|(r, _)| !answers.has(&count_read(r.oid).name()))
        {
            return Ok(reads);
        }
        let (relation, sql) = locate(&tables, answers, &self.ids)?;
        if !self.ids.contains(&self.new) {
            reads.push(INTO.read(count(sql, vec![self.new])));
        }
        let key = merged_key(snapshot, relation)?;
        let written: Vec<u32> = std::iter::once(relation.oid)
            .chain(references_to(snapshot, &key)?.iter().map(|r| r.table.oid))
            .collect();
        reads.push(
            crate::ops::reads::USER_TRIGGERS
                .read(uuidforge_db::introspect::user_triggers_query(&written)),
        );
        Ok(reads)
    }

    fn plan(&self, snapshot: &Snapshot, answers: &Answers) -> Result<MergePlan, DbError> {
        let tables = key_tables(snapshot);
        let (relation, _) = locate(&tables, answers, &self.ids)?;
        if answers.answer(&INTO)?.is_some_and(|n| n != "0") {
            return Err(DbError::invalid(
                "into",
                format!(
                    "{} is already the key of another row of {} (expected a new UUID or one of the merged)",
                    self.new,
                    relation.sql_name()
                ),
            ));
        }
        let triggers = answers.required(&crate::ops::reads::USER_TRIGGERS)?;
        plan(snapshot, relation.oid, self, &triggers)
    }
}

/// Which of `tables` holds all of `ids` (the only one), from the counts
/// in `answers`.
fn locate<'t, 'a>(
    tables: &'t [(&'a Relation, String)],
    answers: &Answers,
    ids: &[Uuid],
) -> Result<&'t (&'a Relation, String), DbError> {
    let found: Vec<(&(&Relation, String), usize)> = tables
        .iter()
        .filter_map(|t| {
            let keys = answers
                .answer(&count_read(t.0.oid))
                .ok()
                .flatten()
                .flatten()?;
            let n = usize::try_from(keys).ok()?;
            (n > 0).then_some((t, n))
        })
        .collect();
    match found.as_slice() {
        [(t, n)] if *n == ids.len() => Ok(t),
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
                    .map(|((r, _), n)| format!("{}: {n} of {}", r.display_name(), ids.len()))
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
        .filter(|r| r.kind == uuidforge_db::catalog::RelKind::Table && !r.is_partition)
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

/// The key of a table merged: its primary key of one uuid column.
fn merged_key<'a>(snapshot: &'a Snapshot, relation: &'a Relation) -> Result<Key<'a>, DbError> {
    let key = Key::find(snapshot, relation, None)?;
    if key.pk.columns.len() != 1 {
        return Err(DbError::refused(
            "table",
            format!(
                "the primary key of {} has {} columns (expected one uuid column)",
                relation.display_name(),
                key.pk.columns.len()
            ),
        ));
    }
    Ok(key)
}

/// The references a merge moves: single-column foreign keys (a composite
/// one is refused).
fn merged_references<'a>(
    snapshot: &'a Snapshot,
    key: &Key<'a>,
) -> Result<Vec<Reference<'a>>, DbError> {
    let references = references_to(snapshot, key)?;
    if let Some((r, fk)) = references
        .iter()
        .find_map(|r| Some((r, r.fk?)).filter(|(_, fk)| fk.columns.len() != 1))
    {
        return Err(DbError::refused(
            "table",
            format!(
                "foreign key {} of {} covers {} columns (only single-column references to {} are merged)",
                fk.name,
                r.declared_on.display_name(),
                fk.columns.len(),
                key.column.name
            ),
        ));
    }
    Ok(references)
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
    if let Some(keep) = options.keep.filter(|k| !ids.contains(k)) {
        return Err(DbError::invalid(
            "keep",
            format!(
                "{keep} is not one of the merged UUIDs (expected one of {})",
                list(ids, ", ")
            ),
        ));
    }
    if ids.contains(&new) && options.keep.is_some_and(|k| k != new) {
        return Err(DbError::refusal(
            "into",
            uuidforge_db::error::Refusal::new(
                uuidforge_db::error::Reason::InvalidValue,
                format!("{new} is one of the merged UUIDs and keeps its own row"),
            )
            .way_out(uuidforge_db::error::WayOut::KeepOwnRow {
                uuid: new.to_string(),
            }),
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

/// The values a plan binds, by name.
pub(super) struct Values {
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

/// Plans merging `op.ids` (keys of the table `table_oid`) into `op.new`,
/// rewriting the values of `op.implicit` outside the declared references.
/// Errors name the argument, the value and what was expected.
pub fn plan(
    snapshot: &Snapshot,
    table_oid: u32,
    op: &Merge,
    triggers: &[uuidforge_db::introspect::UserTrigger],
) -> Result<MergePlan, DbError> {
    let relation = snapshot
        .relation(table_oid)
        .ok_or_else(|| DbError::unreadable("table", "not found in the catalog"))?;
    let key = merged_key(snapshot, relation)?;
    let (survivor, priority) = survivor_and_priority(&op.ids, op.new, &op.options)?;
    let olds: Vec<Uuid> = op.ids.iter().copied().filter(|&id| id != op.new).collect();
    let references = merged_references(snapshot, &key)?;
    let columns = by_column(&references);
    let v = Values {
        new: op.new,
        olds: olds.clone(),
        survivor,
        priority: priority.clone(),
        reason: op.options.reason.clone(),
    };
    let implicit = implicit::implicit_values(
        snapshot,
        (relation, &key.column.name),
        &references,
        op.new,
        &op.implicit,
    )?;
    let steps = steps(
        snapshot,
        (&key, &references, &columns),
        &v,
        (op, &implicit),
        triggers,
    );
    let t = relation.sql_name();
    let k = quote_ident(&key.column.name);
    let mut checks = vec![format!(
        "'rows left with an old key', (SELECT count(*) FROM {t} WHERE {k} = ANY ($1::uuid[]))"
    )];
    for r in &columns {
        checks.push(format!(
            "{}, (SELECT count(*) FROM {} WHERE {} = ANY ($1::uuid[]))",
            quote_literal(&format!(
                "references left in {}.{}",
                r.table.display_name(),
                r.column.name
            )),
            r.table.sql_name(),
            quote_ident(&r.column.name)
        ));
    }
    let referencing: Vec<Referencing> = columns
        .iter()
        .map(|r| Referencing {
            table: r.table.sql_name(),
            column: r.column.name.clone(),
            constraint: r.constraint_name(),
        })
        .collect();
    let backup = distinct(
        std::iter::once(t.clone())
            .chain(referencing.iter().map(|r| r.table.clone()))
            .chain(implicit.values.iter().map(|i| i.table.clone())),
    );
    let change =
        ChangePlan {
            operation: "merge".into(),
            target: relation.typed_name(),
            schema: relation.schema.clone(),
            touches: touched(
                std::iter::once(relation)
                    .chain(references.iter().map(|r| r.table))
                    .chain(implicit.values.iter().filter_map(|i| {
                        snapshot.relations.iter().find(|r| r.sql_name() == i.table)
                    })),
            ),
            summary: crate::ops::lines(summary(op.ids.len(), &t, &v, &referencing)),
            backup: Backup {
                relations: backup,
                schema_only: false,
                ..Default::default()
            },
            run: Run::OneTransaction {
                lock: None,
                steps,
                checks: vec![Check::Zero {
                    what: "verify the merge".into(),
                    statement: Statement::with(
                        uuidforge_db::plan::json_object(&checks),
                        &[v.bind("olds")],
                    ),
                }],
            },
            epilogue: Vec::new(),
            measured: Default::default(),
        };
    Ok(MergePlan {
        table: t,
        key: key.column.name.clone(),
        new: op.new,
        survivor,
        olds,
        priority,
        log_table: qualified(&relation.schema, LOG_TABLE),
        references: referencing,
        implicit: implicit.values,
        reason: op.options.reason.clone(),
        change,
    })
}

/// The steps of a merge, in one transaction.
fn steps(
    snapshot: &Snapshot,
    (key, references, columns): (&Key, &[Reference], &[&Reference]),
    v: &Values,
    (op, implicit): (&Merge, &Implicit),
    triggers: &[uuidforge_db::introspect::UserTrigger],
) -> Vec<Step> {
    let relation = key.table;
    let t = relation.sql_name();
    let k = quote_ident(&key.column.name);
    let log = qualified(&relation.schema, LOG_TABLE);
    let mut steps = log::log_steps(relation, &key.column.name, columns, v);
    // Checked at commit: the new key exists only once the survivor has it.
    let mut deferred = deferrable(references, true);
    deferred.push(Action::Transaction(Transaction::SetConstraints(
        Timing::Deferred,
    )));
    // The application's triggers do not see the merge's own writes (a
    // `last_update = now()` would stamp the survivor, and unmerge would
    // then find it changed).
    let (quiet, restore) = Action::quiet_triggers(triggers);
    deferred.extend(quiet);
    steps.extend(Step::actions(&deferred));
    steps.extend(log::collision_steps(
        snapshot,
        &log,
        columns,
        op.options.on_conflict,
        v,
    ));
    for r in columns {
        steps.push(v.statement(
            format!(
                "UPDATE {} SET {c} = $1 WHERE {c} = ANY ($2::uuid[])",
                r.table.sql_name(),
                c = quote_ident(&r.column.name)
            ),
            &["new", "olds"],
        ));
    }
    steps.push(v.statement(
        format!("DELETE FROM {t} WHERE {k} = ANY ($1::uuid[]) AND {k} <> $2"),
        &["olds", "survivor"],
    ));
    if v.survivor != op.new {
        steps.push(v.statement(
            format!("UPDATE {t} SET {k} = $1 WHERE {k} = $2"),
            &["new", "survivor"],
        ));
    }
    if !implicit.values.is_empty() {
        steps.push(Step::Data(Data::Implicit(implicit.clone())));
    }
    let mut immediate = vec![Action::Transaction(Transaction::SetConstraints(
        Timing::Immediate,
    ))];
    immediate.extend(deferrable(references, false));
    // After the deferred checks ran: a table with pending trigger events
    // cannot be altered.
    immediate.extend(restore);
    steps.extend(Step::actions(&immediate));
    steps
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
        list(&v.olds, ","),
        list(&v.priority, ","),
        v.reason.as_deref().unwrap_or("NULL")
    ));
    summary
}

fn list(ids: &[Uuid], separator: &str) -> String {
    ids.iter()
        .map(Uuid::to_string)
        .collect::<Vec<_>>()
        .join(separator)
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

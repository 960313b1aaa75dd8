//! Undoing a merge ([`super::merge`]) from its log: planned from the log
//! rows read in the planning pass, so the printed plan is exactly what
//! runs. In one transaction: the log locked; nothing written since the
//! merge may reference the key that goes away and the survivor's row must
//! be as the merge left it (else it stops, changing nothing); rows the
//! merge deleted inserted again, every moved reference and rewritten value
//! given its old value back (each statement must find its row), the
//! survivor its old key; the merge removed from the log and older merges
//! resolving through it again; then every logged row checked back as it
//! was.

use super::merge::{key_predicate, LOG_TABLE};
use crate::action::{Action, Timing, Transaction};
use crate::ops::key::{by_column, deferrable, references_to, Key, Reference};
use crate::ops::Reading;
use crate::ops::{
    distinct, touched, Answers, Backup, ChangePlan, Check, Operation, Planned, Read, Run,
    Statement, Step, Stop, Value,
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use uuidforge_db::catalog::{Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::plan::{Param, Query};
use uuidforge_ident::quote_ident;

/// Undoing the latest merge into `new`.
#[derive(Debug, Clone)]
pub struct Unmerge {
    /// The key the merge made (or kept).
    pub new: Uuid,
}

/// One log row of a merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The merged key.
    pub old: Uuid,
    /// The merged table (quoted, qualified).
    pub table_name: String,
    /// What the merge saw and did.
    pub row_images: Images,
}

/// The images a merge logged for one old key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Images {
    /// The key's row before the merge.
    pub row: Option<serde_json::Value>,
    /// Whether it is the survivor's.
    pub survivor: bool,
    /// The rows referencing it, per reference.
    pub references: Vec<ReferenceImages>,
    /// Rows deleted because they collided.
    pub deleted: Vec<DeletedImages>,
    /// Values rewritten in place.
    pub implicit: Vec<ImplicitImage>,
}

/// The rows referencing an old key through one column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferenceImages {
    /// The table.
    pub table: String,
    /// The column.
    pub column: String,
    /// The rows, as JSON.
    pub rows: Vec<serde_json::Value>,
}

/// Rows a merge deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletedImages {
    /// The table.
    pub table: String,
    /// The column they were found by (merges logged by earlier versions
    /// do not say).
    #[serde(default)]
    pub column: Option<String>,
    /// The rows, as JSON.
    pub rows: Vec<serde_json::Value>,
}

/// A value a merge rewrote in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplicitImage {
    /// The table.
    pub table: String,
    /// Its row's key, as JSON text.
    pub key: String,
    /// The column.
    pub column: String,
    /// The value before.
    pub before: String,
    /// The value after.
    pub after: String,
}

/// The plan of an unmerge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnmergePlan {
    /// The merge undone.
    pub merge_id: i64,
    /// The keys that come back.
    pub restored: Vec<Uuid>,
    /// The change the runner runs.
    pub change: ChangePlan,
}

impl Planned for UnmergePlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

fn logs(snapshot: &Snapshot) -> Vec<&Relation> {
    snapshot
        .relations
        .iter()
        .filter(|r| r.name == LOG_TABLE)
        .collect()
}

fn conflict(message: String) -> DbError {
    DbError::conflict("unmerge", format!("{message} (nothing was changed)"))
}

/// The name of the read of the latest merge into the key in log `oid`.
fn latest_read(oid: u32) -> crate::ops::reads::NumberOf {
    crate::ops::reads::NumberOf {
        prefix: "latest merge in",
        oid,
        what: "read the merge log",
    }
}

/// The read of the latest merge's log rows.
const ENTRIES: crate::ops::Named<Vec<Entry>> =
    crate::ops::Named::new("entries", "read the merge log");

impl Operation for Unmerge {
    type Plan = UnmergePlan;

    fn name(&self) -> &'static str {
        "unmerge"
    }

    /// First the latest merge into the key in each log; then that merge's
    /// log rows; then the triggers of the tables the unmerge writes.
    fn reads(&self, snapshot: &Snapshot, answers: &Answers) -> Result<Vec<Read>, DbError> {
        let logs = logs(snapshot);
        let mut reads: Vec<Read> = logs
            .iter()
            .map(|log| {
                latest_read(log.oid).read(Query {
                    sql: format!(
                        "SELECT max(merge_id)::text FROM {} WHERE direct = ANY ($1::uuid[])",
                        log.sql_name()
                    ),
                    params: vec![Param::UuidArray(vec![self.new])],
                })
            })
            .collect();
        if logs
            .iter()
            .any(|l| !answers.has(&latest_read(l.oid).name()))
        {
            return Ok(reads);
        }
        let (log, merge_id) = self.latest(&logs, answers)?;
        reads.push(ENTRIES.read(Query {
            sql: format!(
                "SELECT coalesce(json_agg(json_build_object('old', old, 'table_name', table_name, 'row_images', row_images) ORDER BY old), '[]')::text FROM {log} WHERE merge_id = $1::text::int8"
            ),
            params: vec![Param::Text(merge_id.to_string())],
        }));
        if let Some(entries) = answers.answer(&ENTRIES)? {
            reads.push(crate::ops::reads::USER_TRIGGERS.read(
                uuidforge_db::introspect::user_triggers_query(&written_tables(snapshot, &entries)?),
            ));
        }
        Ok(reads)
    }

    fn plan(&self, snapshot: &Snapshot, answers: &Answers) -> Result<UnmergePlan, DbError> {
        let logs = logs(snapshot);
        let (log, merge_id) = self.latest(&logs, answers)?;
        let entries = answers.required(&ENTRIES)?;
        let triggers = answers.required(&crate::ops::reads::USER_TRIGGERS)?;
        plan(snapshot, self.new, (&log, merge_id), &entries, &triggers)
    }
}

/// The merged table of `entries` and its key.
fn merged<'a>(snapshot: &'a Snapshot, entries: &[Entry]) -> Result<Key<'a>, DbError> {
    let table_name = entries
        .first()
        .map(|e| e.table_name.clone())
        .unwrap_or_default();
    let relation = snapshot
        .relations
        .iter()
        .find(|r| r.sql_name() == table_name)
        .ok_or_else(|| conflict(format!("the merged table {table_name} is gone")))?;
    Key::find(snapshot, relation, None)
        .map_err(|e| conflict(format!("{table_name} has no key of one column now ({e})")))
}

/// The tables an unmerge of `entries` writes: the merged table and every
/// table whose foreign keys reference it.
fn written_tables(snapshot: &Snapshot, entries: &[Entry]) -> Result<Vec<u32>, DbError> {
    let key = merged(snapshot, entries)?;
    Ok(std::iter::once(key.table.oid)
        .chain(references_to(snapshot, &key)?.iter().map(|r| r.table.oid))
        .collect())
}

impl Unmerge {
    /// The log holding the latest merge into the key, and its number.
    fn latest(&self, logs: &[&Relation], answers: &Answers) -> Result<(String, i64), DbError> {
        let mut found = None;
        for log in logs {
            if let Some(id) = answers.answer(&latest_read(log.oid))?.flatten() {
                found = Some((log.sql_name(), id));
            }
        }
        found.ok_or_else(|| {
            DbError::not_found(
                "new",
                format!(
                    "{}: no merge into it is in a merge log (expected the UUID a merge printed)",
                    self.new
                ),
            )
        })
    }
}

/// Plans undoing merge `merge_id` (its log rows `entries`, in `log`).
pub fn plan(
    snapshot: &Snapshot,
    new: Uuid,
    (log, merge_id): (&str, i64),
    entries: &[Entry],
    triggers: &[uuidforge_db::introspect::UserTrigger],
) -> Result<UnmergePlan, DbError> {
    let key = merged(snapshot, entries)?;
    let relation = key.table;
    let references = references_to(snapshot, &key)?;
    let columns = by_column(&references);
    let survivor = entries
        .iter()
        .find(|e| e.row_images.survivor)
        .map(|e| e.old);
    let mut steps = Step::actions(&[Action::Transaction(Transaction::LockTable {
        table: log.to_string(),
        mode: crate::action::Locks::ShareRowExclusive,
    })]);
    if survivor.is_some() {
        steps.extend(nothing_newer(new, entries, &columns));
    }
    let mut deferred = deferrable(&references, true);
    deferred.push(Action::Transaction(Transaction::SetConstraints(
        Timing::Deferred,
    )));
    // The application's triggers do not see the unmerge's own writes: the
    // rows come back as they were.
    let (quiet, restore) = Action::quiet_triggers(triggers);
    deferred.extend(quiet);
    steps.extend(Step::actions(&deferred));
    if let Some(s) = survivor {
        steps.extend(survivor_back(&key, new, s, entries, &columns));
    }
    steps.extend(values_back(snapshot, entries)?);
    steps.extend(rows_back(relation, new, entries));
    let mut immediate = vec![Action::Transaction(Transaction::SetConstraints(
        Timing::Immediate,
    ))];
    immediate.extend(deferrable(&references, false));
    // After the deferred checks ran: a table with pending trigger events
    // cannot be altered.
    immediate.extend(restore);
    steps.extend(Step::actions(&immediate));
    steps.push(Step::run(Statement::with(
        format!("DELETE FROM {log} WHERE merge_id = $1::text::int8"),
        &[("merge_id", Value::Text(Some(merge_id.to_string())))],
    )));
    // Keys merged into one of these before resolve through them again.
    steps.push(Step::run(Statement::with(
        format!("UPDATE {log} l SET new = w.final FROM (WITH RECURSIVE walk(old, cur, depth) AS (SELECT old, direct, 0 FROM {log} WHERE new = $1 UNION ALL SELECT w.old, n.direct, w.depth + 1 FROM walk w JOIN {log} n ON n.old = w.cur WHERE w.depth < 10000) SELECT DISTINCT ON (old) old, cur AS final FROM walk ORDER BY old, depth DESC) w WHERE l.old = w.old"),
        &[("new", Value::Uuid(new))],
    )));
    let restored: Vec<Uuid> = entries.iter().map(|e| e.old).collect();
    let implicit_tables: Vec<String> = entries
        .iter()
        .flat_map(|e| e.row_images.implicit.iter().map(|i| i.table.clone()))
        .collect();
    let backup = distinct(
        [relation.sql_name(), log.to_string()]
            .into_iter()
            .chain(columns.iter().map(|r| r.table.sql_name()))
            .chain(implicit_tables.iter().cloned()),
    );
    let change =
        ChangePlan {
            operation: "unmerge".into(),
            target: relation.typed_name(),
            schema: relation.schema.clone(),
            touches: touched(
                std::iter::once(relation)
                    .chain(references.iter().map(|r| r.table))
                    .chain(snapshot.relations.iter().filter(|r| {
                        r.sql_name() == log || implicit_tables.contains(&r.sql_name())
                    })),
            ),
            summary: vec![format!(
                "plan: merge {merge_id} undone, {} back, one transaction",
                restored
                    .iter()
                    .map(Uuid::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )
            .into()],
            backup: Backup {
                relations: backup,
                schema_only: false,
                ..Default::default()
            },
            run: Run::OneTransaction {
                lock: None,
                steps,
                checks: vec![back_as_they_were(relation, entries)],
            },
            epilogue: Vec::new(),
            measured: Default::default(),
        };
    Ok(UnmergePlan {
        merge_id,
        restored,
        change,
    })
}

/// How many rows the merge moved into `new` through reference `r` and
/// left there: the rows referencing a merged key through it, less those
/// the merge deleted instead (a table referencing the key twice counts per
/// column).
fn moved_through(entries: &[Entry], r: &Reference) -> usize {
    let (table, column) = (r.table.sql_name(), &r.column.name);
    entries
        .iter()
        .map(|e| {
            let deleted: Vec<&serde_json::Value> = e
                .row_images
                .deleted
                .iter()
                .filter(|d| d.table == table && d.column.as_ref().is_none_or(|c| c == column))
                .flat_map(|d| d.rows.iter())
                .collect();
            e.row_images
                .references
                .iter()
                .filter(|x| x.table == table && &x.column == column)
                .flat_map(|x| x.rows.iter())
                .filter(|row| !deleted.contains(row))
                .count()
        })
        .sum()
}

/// No row written since the merge references the new key through a
/// reference that goes back (that row would be left dangling).
fn nothing_newer(new: Uuid, entries: &[Entry], references: &[&Reference]) -> Vec<Step> {
    references
        .iter()
        .map(|r| {
            let moved = moved_through(entries, r);
            Step::Expect {
                statement: Statement::with(
                    format!(
                        "SELECT CASE WHEN count(*) > {moved} THEN (count(*) - {moved})::text ELSE 'none' END FROM {} WHERE {} = $1",
                        r.table.sql_name(),
                        quote_ident(&r.column.name)
                    ),
                    &[("new", Value::Uuid(new))],
                ),
                expect: "none".into(),
                stop: Stop::Conflict,
                context: "unmerge".into(),
                message: format!(
                    "{{value}} rows of {}.{} written since the merge reference {new}, which goes away (nothing was changed)",
                    r.table.display_name(),
                    r.column.name
                ),
            }
        })
        .collect()
}

/// The survivor's row, unchanged since the merge, back to its old key.
fn survivor_back(
    key: &Key,
    new: Uuid,
    survivor: Uuid,
    entries: &[Entry],
    references: &[&Reference],
) -> Vec<Step> {
    let relation = key.table;
    let t = relation.sql_name();
    let k = quote_ident(&key.column.name);
    let entry = entries
        .iter()
        .find(|e| e.old == survivor)
        .expect("the survivor has an entry");
    // As the merge left it: its own references to merged keys moved.
    let mut expected = entry.row_images.row.clone().unwrap_or_default();
    let merged: Vec<Uuid> = entries.iter().map(|e| e.old).collect();
    for r in references {
        let column = &r.column.name;
        let moved = expected
            .get(column)
            .and_then(|v| v.as_str())
            .and_then(|v| v.parse::<Uuid>().ok())
            .is_some_and(|v| merged.contains(&v));
        if r.table.oid == relation.oid && moved {
            expected[column] = serde_json::Value::String(new.to_string());
        }
    }
    vec![
        Step::Expect {
            statement: Statement::with(
                format!("SELECT ((to_jsonb(t) - $3) = ($2::text::jsonb - $3))::text FROM {t} t WHERE t.{k} = $1"),
                &[
                    ("new", Value::Uuid(new)),
                    ("row", Value::Text(Some(expected.to_string()))),
                    ("key", Value::Text(Some(key.column.name.clone()))),
                ],
            ),
            expect: "true".into(),
            stop: Stop::Conflict,
            context: "unmerge".into(),
            message: format!("the row of {new} in {t} changed since the merge (nothing was changed)"),
        },
        Step::run(Statement::with(
            format!("UPDATE {t} SET {k} = $2 WHERE {k} = $1"),
            &[("new", Value::Uuid(new)), ("survivor", Value::Uuid(survivor))],
        )),
    ]
}

/// Values rewritten in place, back (first: a row both referencing and
/// mentioning a key is compared whole when its reference comes back).
fn values_back(snapshot: &Snapshot, entries: &[Entry]) -> Result<Vec<Step>, DbError> {
    let mut steps = Vec::new();
    for value in entries.iter().flat_map(|e| e.row_images.implicit.iter()) {
        let rel = snapshot
            .relations
            .iter()
            .find(|r| r.sql_name() == value.table)
            .ok_or_else(|| conflict(format!("{} is gone", value.table)))?;
        let col = rel
            .column_named(&value.column)
            .ok_or_else(|| conflict(format!("{}.{} is gone", value.table, value.column)))?;
        let predicate = key_predicate(snapshot, rel)
            .ok_or_else(|| conflict(format!("{} has no primary key now", value.table)))?;
        let c = quote_ident(&value.column);
        steps.push(Step::Run {
            statement: Statement::with(
                format!(
                    "UPDATE {} x SET {c} = $2::text::{} WHERE {predicate} AND x.{c}::text = $3",
                    value.table, col.type_name
                ),
                &[
                    ("key", Value::Text(Some(value.key.clone()))),
                    ("before", Value::Text(Some(value.before.clone()))),
                    ("after", Value::Text(Some(value.after.clone()))),
                ],
            ),
            output: None,
            rows: Some(1),
            message: Some(format!(
                "{}.{} of the row {} changed since the merge",
                value.table, value.column, value.key
            )),
        });
    }
    Ok(steps)
}

/// The rows the merge deleted inserted again, and every moved reference
/// pointing at its old key again (each must find its row as the merge
/// left it).
fn rows_back(relation: &Relation, new: Uuid, entries: &[Entry]) -> Vec<Step> {
    let t = relation.sql_name();
    let insert = |table: &str, row: &serde_json::Value| {
        Step::run(Statement::with(
            format!("INSERT INTO {table} OVERRIDING SYSTEM VALUE SELECT * FROM jsonb_populate_record(NULL::{table}, $1::text::jsonb)"),
            &[("row", Value::Text(Some(row.to_string())))],
        ))
    };
    let survivor = entries
        .iter()
        .find(|e| e.row_images.survivor)
        .map(|e| e.old);
    let mut steps = Vec::new();
    for entry in entries {
        let images = &entry.row_images;
        if Some(entry.old) != survivor {
            if let Some(row) = &images.row {
                steps.push(insert(&t, row));
            }
        }
        for deleted in &images.deleted {
            steps.extend(deleted.rows.iter().map(|row| insert(&deleted.table, row)));
        }
        for refs in &images.references {
            let deleted: Vec<&serde_json::Value> = images
                .deleted
                .iter()
                .filter(|d| {
                    d.table == refs.table && d.column.as_ref().is_none_or(|c| c == &refs.column)
                })
                .flat_map(|d| d.rows.iter())
                .collect();
            for row in refs.rows.iter().filter(|r| !deleted.contains(r)) {
                let mut after = row.clone();
                after[&refs.column] = serde_json::Value::String(new.to_string());
                let c = quote_ident(&refs.column);
                steps.push(Step::Run {
                    statement: Statement::with(
                        format!(
                            "UPDATE {ct} x SET {c} = $2 WHERE x.ctid = (SELECT y.ctid FROM {ct} y WHERE y.{c} = $1 AND to_jsonb(y) = $3::text::jsonb LIMIT 1)",
                            ct = refs.table
                        ),
                        &[
                            ("new", Value::Uuid(new)),
                            ("old", Value::Uuid(entry.old)),
                            ("row", Value::Text(Some(after.to_string()))),
                        ],
                    ),
                    output: None,
                    rows: Some(1),
                    message: Some(format!(
                        "a row of {} that referenced {} changed since the merge: {row}",
                        refs.table, entry.old
                    )),
                });
            }
        }
    }
    steps
}

/// Every logged row back as it was.
fn back_as_they_were(relation: &Relation, entries: &[Entry]) -> Check {
    let t = relation.sql_name();
    let mut statements = Vec::new();
    for entry in entries {
        let images = &entry.row_images;
        let rows = images.row.iter().map(|r| (t.clone(), r)).chain(
            images
                .references
                .iter()
                .flat_map(|refs| refs.rows.iter().map(|r| (refs.table.clone(), r))),
        );
        for (table, row) in rows {
            statements.push((
                format!("a row of {table} for {}", entry.old),
                Statement::with(
                    format!(
                        "SELECT count(*)::text FROM {table} x WHERE to_jsonb(x) = $1::text::jsonb"
                    ),
                    &[("row", Value::Text(Some(row.to_string())))],
                ),
            ));
        }
    }
    Check::Present {
        what: "rows back as they were".into(),
        statements,
    }
}

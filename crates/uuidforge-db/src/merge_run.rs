//! Runs a merge ([`crate::merge`]) and its undo, `unmerge`, each in one
//! transaction, verified before it commits.

use crate::client::{Change, DbError, ReadOnly};
use crate::find::Hit;
use crate::merge::{MergeOptions, MergePlan, OnConflict, Param, LOG_TABLE};
use crate::plan::{Param as QueryParam, Query};
use std::collections::BTreeMap;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config};
use uuid::Uuid;

type Boxed = Box<dyn ToSql + Sync + Send>;

/// Values to rewrite: (schema, table, column, row key as JSON).
type ValueAt = (String, String, String, String);
/// The spellings to replace in it (written, replacement) and the old key
/// it is logged under.
type Rewrites = (Vec<(String, String)>, Uuid);

/// What a merge did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct MergeOutcome {
    /// The log's number of this merge.
    pub merge_id: i64,
    /// Referencing rows deleted as colliding, per constraint.
    pub collisions: BTreeMap<String, i64>,
    /// Values rewritten in place (`--implicit`).
    pub implicit: usize,
    /// The checks, each `name: 0`.
    pub checks: Vec<String>,
}

/// What an unmerge did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct UnmergeOutcome {
    /// The merge undone.
    pub merge_id: i64,
    /// The keys back.
    pub restored: Vec<Uuid>,
    /// Rows given back their old values or inserted again.
    pub rows: usize,
    /// The statements run, in order (values bound apart).
    pub statements: Vec<String>,
    /// Committed (else tried and rolled back).
    pub applied: bool,
}

/// Runs statements and keeps their text for the printed plan.
struct Recorded<'a> {
    client: &'a Client,
    statements: Vec<String>,
}

impl Recorded<'_> {
    async fn run(&mut self, sql: &str, params: &[Boxed]) -> Result<u64, DbError> {
        self.statements.push(sql.to_string());
        execute(self.client, sql, params).await
    }
}

/// The table all of `ids` are keys of (the only one).
pub async fn locate(session: &ReadOnly, ids: &[Uuid]) -> Result<u32, DbError> {
    let snapshot = session.snapshot().await?;
    let mut found = Vec::new();
    for (relation, sql) in crate::merge::key_tables(&snapshot) {
        let query = Query {
            sql: format!("SELECT n::text FROM ({sql}) c(n)"),
            params: vec![QueryParam::UuidArray(ids.to_vec())],
        };
        let n: usize = session
            .rows(&query, "look for the keys")
            .await?
            .first()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if n > 0 {
            found.push((relation.oid, relation.display_name(), n));
        }
    }
    match found.as_slice() {
        [(oid, _, n)] if *n == ids.len() => Ok(*oid),
        [] => Err(DbError::invalid(
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

/// Plans a merge of `ids` into `new` in the table they are keys of.
pub async fn merge_plan(
    session: &ReadOnly,
    ids: &[Uuid],
    new: Uuid,
    options: &MergeOptions,
) -> Result<MergePlan, DbError> {
    let table = locate(session, ids).await?;
    let snapshot = session.snapshot().await?;
    let plan = crate::merge::plan(&snapshot, table, ids, new, options)
        .map_err(|m| DbError::invalid("merge", m))?;
    if !ids.contains(&new) {
        let query = Query {
            sql: format!(
                "SELECT count(*)::text FROM {} WHERE {} = ANY ($1::uuid[])",
                plan.table,
                crate::ident::quote_ident(&plan.key)
            ),
            params: vec![QueryParam::UuidArray(vec![new])],
        };
        if session
            .rows(&query, "check --into")
            .await?
            .first()
            .map(String::as_str)
            != Some("0")
        {
            return Err(DbError::invalid(
                "into",
                format!("{new} is already the key of another row of {} (expected a new UUID or one of the merged)", plan.table),
            ));
        }
    }
    Ok(plan)
}

fn value(param: Param, plan: &MergePlan, merge_id: i64) -> Boxed {
    match param {
        Param::New => Box::new(plan.new),
        Param::Olds => Box::new(plan.olds.clone()),
        Param::Survivor => Box::new(plan.survivor),
        Param::Priority => Box::new(plan.priority.clone()),
        Param::Reason => Box::new(plan.reason.clone()),
        Param::MergeId => Box::new(merge_id),
    }
}

async fn execute(client: &Client, sql: &str, params: &[Boxed]) -> Result<u64, DbError> {
    let refs: Vec<&(dyn ToSql + Sync)> = params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect();
    client
        .execute(sql, &refs)
        .await
        .map_err(|e| DbError::new(sql.to_string(), e))
}

async fn one_text(
    client: &Client,
    sql: &str,
    params: &[Boxed],
    context: &str,
) -> Result<String, DbError> {
    let refs: Vec<&(dyn ToSql + Sync)> = params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect();
    let row = client
        .query_one(sql, &refs)
        .await
        .map_err(|e| DbError::new(context, e))?;
    Ok(row.get::<_, Option<String>>(0).unwrap_or_default())
}

/// `written` (a UUID as `find` saw it spelled) with `new` spelled the
/// same way: format, and upper case where it was.
///
/// ```
/// use uuidforge_db::merge_run::respell;
/// let new: uuid::Uuid = "01a20b75-a552-73f7-a8ca-662323ac601a".parse().unwrap();
/// assert_eq!(respell("{0190A5DA-AC96-774B-BCCE-B302099A8058}", &new).unwrap(),
///            "{01A20B75-A552-73F7-A8CA-662323AC601A}");
/// assert_eq!(respell("\\x01900a5dac96774bbcceb302099a8058", &new).unwrap(),
///            "\\x01a20b75a55273f7a8ca662323ac601a");
/// ```
pub fn respell(written: &str, new: &Uuid) -> Result<String, String> {
    // Bytes, as PostgreSQL shows a bytea holding a UUID.
    if let Some(hex) = written.strip_prefix("\\x") {
        if hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(format!("\\x{}", new.simple()));
        }
    }
    let (_, format) = uuidforge::parser::parse_detect(written)
        .map_err(|e| format!("'{written}' does not read back as a UUID ({e})"))?;
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

/// D8: runs `plan` in one transaction — planned again inside it, so that
/// a database changed since is refused — rewrites `implicit` occurrences
/// (from `find`, outside the declared references), verifies and commits.
pub async fn merge_apply(
    config: &Config,
    ids: &[Uuid],
    options: &MergeOptions,
    expected: &MergePlan,
    implicit: &[Hit],
) -> Result<MergeOutcome, DbError> {
    let change = Change::begin(config).await?;
    let snapshot = change.snapshot().await?;
    let table = snapshot
        .relations
        .iter()
        .find(|r| r.sql_name() == expected.table)
        .map(|r| r.oid)
        .ok_or_else(|| {
            DbError::invalid(
                "merge",
                "the table is gone (nothing was changed: plan again)",
            )
        })?;
    let plan = crate::merge::plan(&snapshot, table, ids, expected.new, options)
        .map_err(|m| DbError::invalid("merge", m))?;
    if plan.statements != expected.statements {
        return Err(DbError::invalid(
            "merge",
            "the database changed since the plan was printed (nothing was changed: plan again)",
        ));
    }
    let client = change.client();
    let collisions_json = match &plan.collisions_sql {
        Some(sql) => {
            one_text(
                client,
                sql,
                &[Box::new(plan.priority.clone()) as Boxed],
                "count unique collisions",
            )
            .await?
        }
        None => "{}".into(),
    };
    let collisions: BTreeMap<String, i64> =
        serde_json::from_str::<BTreeMap<String, i64>>(&collisions_json)
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .collect();
    if options.on_conflict == OnConflict::Fail && !collisions.is_empty() {
        return Err(DbError::invalid(
            "on-conflict",
            format!(
                "fail: moving the references would make rows collide on unique constraints: {} (nothing was changed; expected keep-survivor or delete-duplicate)",
                collisions.iter().map(|(k, n)| format!("{k}: {n}")).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let mut merge_id = 0;
    for (i, statement) in plan.statements.iter().enumerate() {
        // The log exists and is locked after the first four statements.
        if i == 4 {
            merge_id = one_text(
                client,
                &format!(
                    "SELECT (coalesce(max(merge_id), 0) + 1)::text FROM {}",
                    plan.log_table
                ),
                &[],
                "number the merge",
            )
            .await?
            .parse()
            .unwrap_or(1);
        }
        let params: Vec<Boxed> = statement
            .params
            .iter()
            .map(|&p| value(p, &plan, merge_id))
            .collect();
        execute(client, &statement.sql, &params).await?;
    }
    let rewritten = rewrite_implicit(client, &snapshot, &plan, merge_id, implicit).await?;
    let json = one_text(
        client,
        &plan.verify_sql,
        &[Box::new(plan.olds.clone()) as Boxed],
        "verify the merge",
    )
    .await?;
    let (failed, checks) = crate::migrate::verification(&json).map_err(|message| DbError {
        context: "verify the merge".into(),
        message,
        code: None,
    })?;
    if !failed.is_empty() {
        return Err(DbError {
            context: "verify the merge (nothing was changed)".into(),
            message: failed.join("; "),
            code: None,
        });
    }
    change.commit().await?;
    Ok(MergeOutcome {
        merge_id,
        collisions,
        implicit: rewritten,
        checks,
    })
}

/// The condition naming one row by its primary key, as `find` reported
/// it (`$1` the key as JSON text).
fn key_predicate(
    snapshot: &crate::catalog::Snapshot,
    relation: &crate::catalog::Relation,
) -> Option<String> {
    let pk = snapshot.primary_key(relation.oid)?;
    let names: Vec<String> = pk
        .columns
        .iter()
        .filter_map(|&n| relation.column(n))
        .map(|c| crate::ident::quote_ident(&c.name))
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

/// Rewrites the occurrences `find` reported outside the declared
/// references, each value read and written whole (as text), its before
/// and after logged; the number of values rewritten.
async fn rewrite_implicit(
    client: &Client,
    snapshot: &crate::catalog::Snapshot,
    plan: &MergePlan,
    merge_id: i64,
    hits: &[Hit],
) -> Result<usize, DbError> {
    // (schema, table, column, key) → spellings, and the old key to log under.
    let mut groups: BTreeMap<ValueAt, Rewrites> = BTreeMap::new();
    for hit in hits {
        let relation = snapshot
            .relations
            .iter()
            .find(|r| r.schema == hit.schema && r.name == hit.table)
            .ok_or_else(|| {
                DbError::invalid("implicit", format!("{}.{} is gone", hit.schema, hit.table))
            })?;
        let declared = relation.sql_name() == plan.table && hit.column == plan.key
            || plan
                .references
                .iter()
                .any(|r| r.table == relation.sql_name() && r.column == hit.column)
            || relation.name == LOG_TABLE;
        if declared {
            continue;
        }
        if hit.key_unstable {
            return Err(DbError::invalid(
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
        let replacement =
            respell(&hit.written, &plan.new).map_err(|m| DbError::invalid("implicit", m))?;
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
    let mut count = 0;
    for ((schema, table, column, key), (spellings, old)) in &groups {
        let relation = snapshot
            .relations
            .iter()
            .find(|r| &r.schema == schema && &r.name == table)
            .expect("found above");
        let col = relation.column_named(column).ok_or_else(|| {
            DbError::invalid("implicit", format!("{schema}.{table}.{column} is gone"))
        })?;
        let predicate = key_predicate(snapshot, relation).ok_or_else(|| {
            DbError::invalid("implicit", format!("{schema}.{table} has no primary key"))
        })?;
        let c = crate::ident::quote_ident(column);
        let t = relation.sql_name();
        let before = one_text(
            client,
            &format!("SELECT x.{c}::text FROM {t} x WHERE {predicate} FOR UPDATE"),
            &[Box::new(key.clone()) as Boxed],
            "read a value to rewrite",
        )
        .await?;
        let mut after = before.clone();
        for (written, replacement) in spellings {
            after = after.replace(written.as_str(), replacement);
        }
        if after == before {
            // find saw it, the value's text does not show it (an escape):
            // refuse rather than leave it behind.
            return Err(DbError::invalid(
                "implicit",
                format!(
                    "{schema}.{table}.{column} of row {key} holds {old}, but not as {} in its text (nothing was changed: rewrite it by hand or merge without --implicit)",
                    spellings.iter().map(|(w, _)| w.as_str()).collect::<Vec<_>>().join(" or ")
                ),
            ));
        }
        execute(
            client,
            &format!(
                "UPDATE {t} x SET {c} = $2::text::{} WHERE {predicate}",
                col.type_name
            ),
            &[Box::new(key.clone()) as Boxed, Box::new(after.clone())],
        )
        .await?;
        let image = serde_json::json!([{
            "table": t, "key": key, "column": column, "before": before, "after": after,
        }])
        .to_string();
        execute(
            client,
            &format!(
                "UPDATE {} SET row_images = jsonb_set(row_images, '{{implicit}}', row_images->'implicit' || $3::text::jsonb) WHERE merge_id = $1 AND old = $2",
                plan.log_table
            ),
            &[Box::new(merge_id) as Boxed, Box::new(*old), Box::new(image)],
        )
        .await?;
        count += 1;
    }
    Ok(count)
}

/// One log row of a merge.
#[derive(Debug, serde::Deserialize)]
struct Images {
    row: Option<serde_json::Value>,
    survivor: bool,
    references: Vec<ReferenceImages>,
    deleted: Vec<DeletedImages>,
    implicit: Vec<ImplicitImage>,
}

#[derive(Debug, serde::Deserialize)]
struct ReferenceImages {
    table: String,
    column: String,
    rows: Vec<serde_json::Value>,
}

#[derive(Debug, serde::Deserialize)]
struct DeletedImages {
    table: String,
    rows: Vec<serde_json::Value>,
}

#[derive(Debug, serde::Deserialize)]
struct ImplicitImage {
    table: String,
    key: String,
    column: String,
    before: String,
    after: String,
}

fn conflict(message: String) -> DbError {
    DbError::invalid("unmerge", format!("{message} (nothing was changed)"))
}

/// D8: undoes the latest merge into `new` from its log, in one
/// transaction (without `apply`, tried and rolled back, so the statements
/// it would run are known exactly): rows deleted are inserted again, every moved reference and
/// rewritten value gets its old value back, the survivor its old key — only
/// when nothing written since conflicts — then checks that every logged row
/// is back exactly and removes the merge from the log.
pub async fn unmerge(config: &Config, new: Uuid, apply: bool) -> Result<UnmergeOutcome, DbError> {
    let change = Change::begin(config).await?;
    let snapshot = change.snapshot().await?;
    let client = change.client();
    let mut rec = Recorded {
        client,
        statements: Vec::new(),
    };
    let logs: Vec<&crate::catalog::Relation> = snapshot
        .relations
        .iter()
        .filter(|r| r.name == LOG_TABLE)
        .collect();
    let mut found = None;
    for log in &logs {
        let id = one_text(
            client,
            &format!(
                "SELECT max(merge_id)::text FROM {} WHERE direct = $1",
                log.sql_name()
            ),
            &[Box::new(new) as Boxed],
            "read the merge log",
        )
        .await?;
        if let Ok(id) = id.parse::<i64>() {
            found = Some((log.sql_name(), id));
        }
    }
    let Some((log, merge_id)) = found else {
        return Err(DbError::invalid(
            "new",
            format!(
                "{new}: no merge into it is in a merge log (expected the UUID a merge printed)"
            ),
        ));
    };
    rec.run(
        &format!("LOCK TABLE {log} IN SHARE ROW EXCLUSIVE MODE"),
        &[],
    )
    .await?;
    let rows = client
        .query(
            &format!("SELECT old, table_name, row_images::text FROM {log} WHERE merge_id = $1 ORDER BY old"),
            &[&merge_id],
        )
        .await
        .map_err(|e| DbError::new("read the merge log", e))?;
    let mut entries = Vec::new();
    for row in &rows {
        let images: Images = serde_json::from_str(row.get::<_, &str>(2)).map_err(|e| DbError {
            context: "read the merge log".into(),
            message: e.to_string(),
            code: None,
        })?;
        entries.push((row.get::<_, Uuid>(0), row.get::<_, String>(1), images));
    }
    let table_name = entries.first().map(|e| e.1.clone()).unwrap_or_default();
    let relation = snapshot
        .relations
        .iter()
        .find(|r| r.sql_name() == table_name)
        .ok_or_else(|| conflict(format!("the merged table {table_name} is gone")))?;
    let pk = snapshot
        .primary_key(relation.oid)
        .ok_or_else(|| conflict(format!("{table_name} has no primary key now")))?;
    let key = relation
        .column(pk.columns[0])
        .ok_or_else(|| conflict("key column not found".into()))?
        .name
        .clone();
    let k = crate::ident::quote_ident(&key);
    let t = table_name.clone();
    let survivor = entries.iter().find(|e| e.2.survivor).map(|e| e.0);

    // References written since the merge to a key that goes away.
    let fks: Vec<(
        &crate::catalog::Relation,
        &crate::catalog::Constraint,
        String,
    )> = snapshot
        .foreign_keys()
        .filter(|f| f.ref_table == relation.oid)
        .filter_map(|f| {
            let child = snapshot.relation(f.table)?;
            let column = child.column(*f.columns.first()?)?.name.clone();
            Some((child, f, column))
        })
        .collect();
    if survivor.is_some() {
        for (child, _, column) in &fks {
            let moved: usize = entries
                .iter()
                .flat_map(|e| e.2.references.iter())
                .filter(|r| r.table == child.sql_name() && &r.column == column)
                .map(|r| r.rows.len())
                .sum::<usize>()
                - entries
                    .iter()
                    .flat_map(|e| e.2.deleted.iter())
                    .filter(|d| d.table == child.sql_name())
                    .map(|d| d.rows.len())
                    .sum::<usize>();
            let now: i64 = client
                .query_one(
                    &format!(
                        "SELECT count(*) FROM {} WHERE {} = $1",
                        child.sql_name(),
                        crate::ident::quote_ident(column)
                    ),
                    &[&new],
                )
                .await
                .map_err(|e| DbError::new("count references", e))?
                .get(0);
            if now as usize > moved {
                return Err(conflict(format!(
                    "{} rows of {}.{} written since the merge reference {new}, which goes away",
                    now as usize - moved,
                    child.display_name(),
                    column
                )));
            }
        }
    }
    for (child, fk, _) in &fks {
        if !fk.deferrable {
            rec.run(
                &format!(
                    "ALTER TABLE {} ALTER CONSTRAINT {} DEFERRABLE",
                    child.sql_name(),
                    crate::ident::quote_ident(&fk.name)
                ),
                &[],
            )
            .await?;
        }
    }
    rec.run("SET CONSTRAINTS ALL DEFERRED", &[]).await?;
    let mut restored_rows = 0;
    // The survivor's row back to its old key, unchanged since.
    if let Some(s) = survivor {
        let entry = entries.iter().find(|e| e.0 == s).expect("found above");
        // As the merge left it: its own references to merged keys moved.
        let mut expected = entry.2.row.clone().unwrap_or_default();
        let merged: Vec<Uuid> = entries.iter().map(|e| e.0).collect();
        for (child, _, column) in &fks {
            let moved = expected
                .get(column)
                .and_then(|v| v.as_str())
                .and_then(|v| v.parse::<Uuid>().ok())
                .is_some_and(|v| merged.contains(&v));
            if child.oid == relation.oid && moved {
                expected[column] = serde_json::Value::String(new.to_string());
            }
        }
        let same = one_text(
            client,
            &format!("SELECT ((to_jsonb(t) - $3) = ($2::text::jsonb - $3))::text FROM {t} t WHERE t.{k} = $1"),
            &[Box::new(new) as Boxed, Box::new(expected.to_string()), Box::new(key.clone())],
            "compare the survivor's row",
        )
        .await?;
        if same != "true" {
            return Err(conflict(format!(
                "the row of {new} in {t} changed since the merge"
            )));
        }
        rec.run(
            &format!("UPDATE {t} SET {k} = $2 WHERE {k} = $1"),
            &[Box::new(new) as Boxed, Box::new(s)],
        )
        .await?;
        restored_rows += 1;
    }
    // Values rewritten in place first: a row both referencing and
    // mentioning a key is compared whole when its reference comes back.
    for (_, _, images) in &entries {
        for value in &images.implicit {
            let rel = snapshot
                .relations
                .iter()
                .find(|r| r.sql_name() == value.table)
                .ok_or_else(|| conflict(format!("{} is gone", value.table)))?;
            let col = rel
                .column_named(&value.column)
                .ok_or_else(|| conflict(format!("{}.{} is gone", value.table, value.column)))?;
            let predicate = key_predicate(&snapshot, rel)
                .ok_or_else(|| conflict(format!("{} has no primary key now", value.table)))?;
            let c = crate::ident::quote_ident(&value.column);
            let n = rec
                .run(
                    &format!(
                        "UPDATE {} x SET {c} = $2::text::{} WHERE {predicate} AND x.{c}::text = $3",
                        value.table, col.type_name
                    ),
                    &[
                        Box::new(value.key.clone()) as Boxed,
                        Box::new(value.before.clone()),
                        Box::new(value.after.clone()),
                    ],
                )
                .await?;
            if n != 1 {
                return Err(conflict(format!(
                    "{}.{} of the row {} changed since the merge",
                    value.table, value.column, value.key
                )));
            }
            restored_rows += 1;
        }
    }
    for (old, _, images) in &entries {
        if Some(*old) != survivor {
            if let Some(row) = &images.row {
                rec.run(&format!("INSERT INTO {t} OVERRIDING SYSTEM VALUE SELECT * FROM jsonb_populate_record(NULL::{t}, $1::text::jsonb)"),
                    &[Box::new(row.to_string()) as Boxed],
                )
                .await
                .map_err(|e| conflict(format!("the row of {old} cannot come back: {e}")))?;
                restored_rows += 1;
            }
        }
        for deleted in &images.deleted {
            for row in &deleted.rows {
                rec.run(&format!(
                        "INSERT INTO {ct} OVERRIDING SYSTEM VALUE SELECT * FROM jsonb_populate_record(NULL::{ct}, $1::text::jsonb)",
                        ct = deleted.table
                    ),
                    &[Box::new(row.to_string()) as Boxed],
                )
                .await
                .map_err(|e| conflict(format!("a row of {} deleted by the merge cannot come back: {e}", deleted.table)))?;
                restored_rows += 1;
            }
        }
        for refs in &images.references {
            let deleted: Vec<&serde_json::Value> = images
                .deleted
                .iter()
                .filter(|d| d.table == refs.table)
                .flat_map(|d| d.rows.iter())
                .collect();
            for row in refs.rows.iter().filter(|r| !deleted.contains(r)) {
                let mut after = row.clone();
                after[&refs.column] = serde_json::Value::String(new.to_string());
                let c = crate::ident::quote_ident(&refs.column);
                let n = rec.run(&format!(
                        "UPDATE {ct} x SET {c} = $2 WHERE x.ctid = (SELECT y.ctid FROM {ct} y WHERE y.{c} = $1 AND to_jsonb(y) = $3::text::jsonb LIMIT 1)",
                        ct = refs.table
                    ),
                    &[Box::new(new) as Boxed, Box::new(*old), Box::new(after.to_string())],
                )
                .await?;
                if n != 1 {
                    return Err(conflict(format!(
                        "a row of {} that referenced {old} changed since the merge: {row}",
                        refs.table
                    )));
                }
                restored_rows += 1;
            }
        }
    }
    rec.run("SET CONSTRAINTS ALL IMMEDIATE", &[]).await?;
    for (child, fk, _) in &fks {
        if !fk.deferrable {
            rec.run(
                &format!(
                    "ALTER TABLE {} ALTER CONSTRAINT {} NOT DEFERRABLE",
                    child.sql_name(),
                    crate::ident::quote_ident(&fk.name)
                ),
                &[],
            )
            .await?;
        }
    }
    rec.run(
        &format!("DELETE FROM {log} WHERE merge_id = $1"),
        &[Box::new(merge_id) as Boxed],
    )
    .await?;
    // Keys merged into one of these before resolve through them again.
    rec.run(&format!(
            "UPDATE {log} l SET new = w.final FROM (WITH RECURSIVE walk(old, cur, depth) AS (SELECT old, direct, 0 FROM {log} WHERE new = $1 UNION ALL SELECT w.old, n.direct, w.depth + 1 FROM walk w JOIN {log} n ON n.old = w.cur WHERE w.depth < 10000) SELECT DISTINCT ON (old) old, cur AS final FROM walk ORDER BY old, depth DESC) w WHERE l.old = w.old"
        ),
        &[Box::new(new) as Boxed],
    )
    .await?;
    // Every logged row is back as it was.
    let mut missing = Vec::new();
    for (old, _, images) in &entries {
        let mut expect: Vec<(String, &serde_json::Value)> = Vec::new();
        if let Some(row) = &images.row {
            expect.push((t.clone(), row));
        }
        for refs in &images.references {
            expect.extend(refs.rows.iter().map(|r| (refs.table.clone(), r)));
        }
        for (table, row) in expect {
            let n: i64 = client
                .query_one(
                    &format!("SELECT count(*) FROM {table} x WHERE to_jsonb(x) = $1::text::jsonb"),
                    &[&row.to_string()],
                )
                .await
                .map_err(|e| DbError::new("verify the unmerge", e))?
                .get(0);
            if n == 0 {
                missing.push(format!("a row of {table} for {old}"));
            }
        }
    }
    if !missing.is_empty() {
        return Err(conflict(format!(
            "not back as they were: {}",
            missing.join(", ")
        )));
    }
    let statements = rec.statements;
    if apply {
        change.commit().await?;
    } else {
        change
            .client()
            .batch_execute("ROLLBACK")
            .await
            .map_err(|e| DbError::new("roll back the trial", e))?;
    }
    Ok(UnmergeOutcome {
        merge_id,
        restored: entries.iter().map(|e| e.0).collect(),
        rows: restored_rows,
        statements,
        applied: apply,
    })
}

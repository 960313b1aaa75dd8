//! D8: merge duplicate UUIDs. Several keys of one table that name one
//! object become one UUIDv7 everywhere, in one transaction, with a log
//! that [`unmerge`](crate::unmerge) reads back.
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
use crate::ident::{qualified, quote_ident};
use serde::{Deserialize, Serialize};
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

/// A value a statement binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    /// The new key (`uuid`).
    New,
    /// The keys that go away (`uuid[]`).
    Olds,
    /// The key whose row is kept (`uuid`).
    Survivor,
    /// Every merged key, survivor first, then oldest first (`uuid[]`).
    Priority,
    /// `--reason` (`text`).
    Reason,
    /// This merge's number in the log (`bigint`).
    MergeId,
}

/// One statement of a plan and the values it binds, `$1`, `$2`, … in
/// this order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Statement {
    /// The SQL.
    pub sql: String,
    /// Its parameters.
    pub params: Vec<Param>,
}

impl Statement {
    fn new(sql: String, params: &[Param]) -> Statement {
        Statement {
            sql,
            params: params.to_vec(),
        }
    }
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
#[derive(Debug, Clone, Serialize)]
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
    /// Every merged key, survivor first.
    pub priority: Vec<Uuid>,
    /// The log table (quoted, qualified).
    pub log_table: String,
    /// Declared references moved.
    pub references: Vec<Referencing>,
    /// Reads the number of unique collisions per referencing table:
    /// one row of JSON text (`{"table.column": n}`), binding
    /// [`Param::Priority`]; none when no unique constraint covers a
    /// reference.
    pub collisions_sql: Option<String>,
    /// The statements, in order.
    pub statements: Vec<Statement>,
    /// Counts that must all be zero before commit (one row of JSON text),
    /// binding [`Param::Olds`].
    pub verify_sql: String,
    /// `--reason`.
    pub reason: Option<String>,
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

/// Plans merging `ids` (keys of the table `table_oid`) into `new` (the
/// `--into` key or a fresh UUIDv7 the caller made). Errors name the
/// argument, the value and what was expected.
pub fn plan(
    snapshot: &Snapshot,
    table_oid: u32,
    ids: &[Uuid],
    new: Uuid,
    options: &MergeOptions,
) -> Result<MergePlan, String> {
    let relation = snapshot
        .relation(table_oid)
        .ok_or("table: not found in the catalog")?;
    let pk = snapshot
        .primary_key(relation.oid)
        .ok_or_else(|| format!("table: {} has no primary key", relation.display_name()))?;
    let [key_num] = pk.columns[..] else {
        return Err(format!(
            "table: the primary key of {} has {} columns (expected one uuid column)",
            relation.display_name(),
            pk.columns.len()
        ));
    };
    let key = relation
        .column(key_num)
        .ok_or("table: key column not found")?;
    if ids.len() < 2 {
        return Err(format!(
            "ids: {} given (expected at least two UUIDs to merge)",
            ids.len()
        ));
    }
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(format!(
                "ids: {id} is given twice (expected distinct UUIDs)"
            ));
        }
    }
    if let Some(keep) = options.keep {
        if !ids.contains(&keep) {
            return Err(format!(
                "keep: {keep} is not one of the merged UUIDs (expected one of {})",
                list(ids)
            ));
        }
    }
    if ids.contains(&new) && options.keep.is_some_and(|k| k != new) {
        return Err(format!(
            "into: {new} is one of the merged UUIDs and keeps its own row (expected --keep {new} or no --keep)"
        ));
    }
    // The row kept: the one already holding the new key, else --keep,
    // else the oldest by UUIDv7 time (the first given among equals).
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
    let olds: Vec<Uuid> = ids.iter().copied().filter(|&id| id != new).collect();

    let t = relation.sql_name();
    let k = quote_ident(&key.name);
    let log = qualified(&relation.schema, LOG_TABLE);
    let resolve = qualified(&relation.schema, "uuid_resolve");
    let mut s = vec![
        Statement::new(
            format!(
                "CREATE TABLE IF NOT EXISTS {log} (merge_id bigint NOT NULL, old uuid NOT NULL UNIQUE, new uuid NOT NULL, direct uuid NOT NULL, merged_at timestamptz NOT NULL DEFAULT now(), reason text, merged_by text NOT NULL DEFAULT current_user, table_name text NOT NULL, row_images jsonb NOT NULL)"
            ),
            &[],
        ),
        Statement::new(
            format!(
                "CREATE INDEX IF NOT EXISTS {} ON {log} (new)",
                quote_ident(&format!("{LOG_TABLE}_new_idx"))
            ),
            &[],
        ),
        Statement::new(
            format!(
                "CREATE OR REPLACE FUNCTION {resolve}(id uuid) RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $uuidforge$ SELECT coalesce((SELECT l.new FROM {log} l WHERE l.old = id), id) $uuidforge$"
            ),
            &[],
        ),
        Statement::new(format!("LOCK TABLE {log} IN SHARE ROW EXCLUSIVE MODE"), &[]),
    ];

    // Declared references to the key.
    let mut references = Vec::new();
    let mut fks = Vec::new();
    for fk in snapshot
        .foreign_keys()
        .filter(|f| f.ref_table == relation.oid)
    {
        let child = snapshot
            .relation(fk.table)
            .ok_or("foreign key: table not found")?;
        if fk.columns.len() != 1 || fk.ref_columns.as_deref() != Some(&[key_num][..]) {
            return Err(format!(
                "table: foreign key {} of {} covers {} columns (only single-column references to {} are merged)",
                fk.name,
                child.display_name(),
                fk.columns.len(),
                key.name
            ));
        }
        let column = child
            .column(fk.columns[0])
            .ok_or("foreign key: column not found")?;
        references.push(Referencing {
            table: child.sql_name(),
            column: column.name.clone(),
            constraint: fk.name.clone(),
        });
        fks.push((child, fk, column));
    }

    // Images first, while every row is as it was.
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
    s.push(Statement::new(
        format!("UPDATE {log} SET new = $1 WHERE new = ANY ($2::uuid[])"),
        &[Param::New, Param::Olds],
    ));
    s.push(Statement::new(
        format!(
            "INSERT INTO {log} (merge_id, old, new, direct, reason, table_name, row_images) \
             SELECT $1, o, $2, $2, $3, {tname}, jsonb_build_object('row', (SELECT to_jsonb(t) FROM {t} t WHERE t.{k} = o), 'survivor', o = $4, 'references', jsonb_build_array({refs}), 'deleted', '[]'::jsonb, 'implicit', '[]'::jsonb) \
             FROM unnest($5::uuid[]) o",
            tname = sql_text(&t),
            refs = reference_images.join(", ")
        ),
        &[Param::MergeId, Param::New, Param::Reason, Param::Survivor, Param::Olds],
    ));

    // Checked at commit: the new key exists only once the survivor has it.
    for (child, fk, _) in &fks {
        if !fk.deferrable {
            s.push(Statement::new(
                format!(
                    "ALTER TABLE {} ALTER CONSTRAINT {} DEFERRABLE",
                    child.sql_name(),
                    quote_ident(&fk.name)
                ),
                &[],
            ));
        }
    }
    s.push(Statement::new("SET CONSTRAINTS ALL DEFERRED".into(), &[]));

    // Unique collisions among referencing rows.
    let mut collision_counts = Vec::new();
    for (child, _, column) in &fks {
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
            collision_counts.push(format!(
                "{}, (SELECT count(*) FROM ({ranked}) r WHERE n > 1 AND pos > 1)",
                sql_text(&format!(
                    "{}.{} ({})",
                    child.display_name(),
                    column.name,
                    index.name
                ))
            ));
            let doomed = match options.on_conflict {
                OnConflict::KeepSurvivor | OnConflict::Fail => "n > 1 AND pos > 1",
                OnConflict::DeleteDuplicate => "n > 1 AND ref <> $1[1]",
            };
            let selection = format!("SELECT row_id FROM ({ranked}) r WHERE {doomed}");
            // Deleted rows go into the log entry of the key they referenced.
            s.push(Statement::new(
                format!(
                    "UPDATE {log} l SET row_images = jsonb_set(l.row_images, '{{deleted}}', l.row_images->'deleted' || jsonb_build_array(jsonb_build_object('table', {tname}, 'rows', d.images))) \
                     FROM (SELECT x.{c} AS ref, jsonb_agg(to_jsonb(x)) AS images FROM {ct} x WHERE x.ctid = ANY (ARRAY({selection})) GROUP BY x.{c}) d \
                     WHERE l.merge_id = $2 AND l.old = d.ref",
                    ct = child.sql_name(),
                    tname = sql_text(&child.sql_name())
                ),
                &[Param::Priority, Param::MergeId],
            ));
            s.push(Statement::new(
                format!(
                    "DELETE FROM {ct} x WHERE x.ctid = ANY (ARRAY({selection}))",
                    ct = child.sql_name()
                ),
                &[Param::Priority],
            ));
        }
    }
    let collisions_sql = (!collision_counts.is_empty()).then(|| {
        format!(
            "SELECT json_build_object({})::text",
            collision_counts.join(", ")
        )
    });

    for (child, _, column) in &fks {
        s.push(Statement::new(
            format!(
                "UPDATE {} SET {c} = $1 WHERE {c} = ANY ($2::uuid[])",
                child.sql_name(),
                c = quote_ident(&column.name)
            ),
            &[Param::New, Param::Olds],
        ));
    }
    s.push(Statement::new(
        format!("DELETE FROM {t} WHERE {k} = ANY ($1::uuid[]) AND {k} <> $2"),
        &[Param::Olds, Param::Survivor],
    ));
    if survivor != new {
        s.push(Statement::new(
            format!("UPDATE {t} SET {k} = $1 WHERE {k} = $2"),
            &[Param::New, Param::Survivor],
        ));
    }
    s.push(Statement::new("SET CONSTRAINTS ALL IMMEDIATE".into(), &[]));
    for (child, fk, _) in &fks {
        if !fk.deferrable {
            s.push(Statement::new(
                format!(
                    "ALTER TABLE {} ALTER CONSTRAINT {} NOT DEFERRABLE",
                    child.sql_name(),
                    quote_ident(&fk.name)
                ),
                &[],
            ));
        }
    }

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
    let verify_sql = format!("SELECT json_build_object({})::text", checks.join(", "));
    Ok(MergePlan {
        table: t,
        key: key.name.clone(),
        new,
        survivor,
        olds,
        priority,
        log_table: log,
        references,
        collisions_sql,
        statements: s,
        verify_sql,
        reason: options.reason.clone(),
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

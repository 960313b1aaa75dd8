//! The merge log and what a merge writes into it: one row per old key with
//! the images of its row and of every row referencing it; rows deleted
//! because moving references made them collide on a unique constraint.

use super::{OnConflict, Values, LOG_TABLE};
use crate::action::{Action, Index, Object, Table, Transaction};
use crate::ops::key::Reference;
use crate::ops::{Statement, Step, Stop};
use uuidforge_db::catalog::{Relation, Snapshot};
use uuidforge_ident::{qualified, quote_ident, quote_literal};

/// The log made when missing and locked, this merge numbered, one log row
/// per old key with the images of its row and of every row referencing it
/// (`references`, one per column).
pub(super) fn log_steps(
    relation: &Relation,
    key: &str,
    references: &[&Reference],
    v: &Values,
) -> Vec<Step> {
    let t = relation.sql_name();
    let k = quote_ident(key);
    let log = qualified(&relation.schema, LOG_TABLE);
    let resolve = qualified(&relation.schema, "uuid_resolve");
    let reference_images: Vec<String> = references
        .iter()
        .map(|r| {
            format!(
                "jsonb_build_object('table', {table}, 'column', {column}, 'rows', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM {ct} x WHERE x.{c} = o))",
                table = quote_literal(&r.table.sql_name()),
                column = quote_literal(&r.column.name),
                ct = r.table.sql_name(),
                c = quote_ident(&r.column.name)
            )
        })
        .collect();
    let mut steps = Step::actions(&[
        Action::Table(Table::Create {
            table: log.clone(),
            columns: "merge_id bigint NOT NULL, old uuid NOT NULL UNIQUE, new uuid NOT NULL, direct uuid NOT NULL, merged_at timestamptz NOT NULL DEFAULT now(), reason text, merged_by text NOT NULL DEFAULT current_user, table_name text NOT NULL, row_images jsonb NOT NULL".into(),
            temporary: false,
            if_not_exists: true,
        }),
        Action::Index(Index::On {
            name: format!("{LOG_TABLE}_new_idx"),
            table: log.clone(),
            columns: "new".into(),
            unique: false,
            if_not_exists: true,
        }),
        Action::Object(Object::CreateSqlFunction {
            signature: format!("{resolve}(id uuid)"),
            returns: "uuid LANGUAGE sql STABLE PARALLEL SAFE".into(),
            body: format!("SELECT coalesce((SELECT l.new FROM {log} l WHERE l.old = id), id)"),
        }),
        Action::Transaction(Transaction::LockTable {
            table: log.clone(),
            mode: crate::action::Locks::ShareRowExclusive,
        }),
    ]);
    steps.extend([
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
                tname = quote_literal(&t),
                refs = reference_images.join(", ")
            ),
            &["merge_id", "new", "reason", "survivor", "olds"],
        ),
    ]);
    steps
}

/// Referencing rows that would collide on a unique constraint once moved:
/// counted (refused with `--on-conflict fail`), else their images logged
/// (under the reference they were found by) and the rows deleted.
pub(super) fn collision_steps(
    snapshot: &Snapshot,
    log: &str,
    references: &[&Reference],
    on_conflict: OnConflict,
    v: &Values,
) -> Vec<Step> {
    let mut counts = Vec::new();
    let mut steps = Vec::new();
    for r in references {
        let (child, column) = (r.table, r.column);
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
                quote_literal(&format!(
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
            // Deleted rows go into the log entry of the key they referenced,
            // with the column they were found by.
            steps.push(v.statement(
                format!(
                    "UPDATE {log} l SET row_images = jsonb_set(l.row_images, '{{deleted}}', l.row_images->'deleted' || jsonb_build_array(jsonb_build_object('table', {tname}, 'column', {cname}, 'rows', d.images))) \
                     FROM (SELECT x.{c} AS ref, jsonb_agg(to_jsonb(x)) AS images FROM {ct} x WHERE x.ctid = ANY (ARRAY({selection})) GROUP BY x.{c}) d \
                     WHERE l.merge_id = $2 AND l.old = d.ref",
                    ct = child.sql_name(),
                    tname = quote_literal(&child.sql_name()),
                    cname = quote_literal(&column.name)
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
    let read = Statement::with(
        format!(
            "SELECT coalesce(string_agg(c.name || ': ' || c.n, ', ' ORDER BY c.name), '') FROM (VALUES {}) c(name, n) WHERE c.n > 0",
            counts.join(", ")
        ),
        &[v.bind("priority")],
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

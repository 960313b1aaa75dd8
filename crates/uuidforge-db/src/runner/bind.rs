//! Statements run with their named bindings: each value as the type the
//! server asks for, a kept output parsed into it.

use crate::client::DbError;
use crate::ops::merge::Implicit;
use crate::ops::{Statement, Value};
use std::collections::BTreeMap;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Client;
use uuid::Uuid;

type Boxed = Box<dyn ToSql + Sync + Send>;

/// The values of `statement`'s bindings, in order, typed as the prepared
/// statement's parameters.
fn values(
    statement: &Statement,
    types: &[Type],
    outputs: &BTreeMap<String, String>,
) -> Result<Vec<Boxed>, DbError> {
    statement
        .bindings
        .iter()
        .zip(types)
        .map(|(b, ty)| -> Result<Boxed, DbError> {
            Ok(match &b.value {
                Value::Uuid(u) => Box::new(*u),
                Value::Uuids(u) => Box::new(u.clone()),
                Value::Text(t) => Box::new(t.clone()),
                Value::Output => {
                    let text = outputs.get(&b.name).ok_or_else(|| {
                        DbError::unreadable("plan", format!("no step kept '{}' before", b.name))
                    })?;
                    let bad = |e: String| {
                        DbError::unreadable(b.name.clone(), format!("'{text}' as {ty}: {e}"))
                    };
                    match *ty {
                        Type::INT8 => {
                            Box::new(text.parse::<i64>().map_err(|e| bad(e.to_string()))?)
                        }
                        Type::INT4 => {
                            Box::new(text.parse::<i32>().map_err(|e| bad(e.to_string()))?)
                        }
                        Type::UUID => {
                            Box::new(text.parse::<Uuid>().map_err(|e| bad(e.to_string()))?)
                        }
                        _ => Box::new(text.clone()),
                    }
                }
            })
        })
        .collect()
}

async fn prepared(
    client: &Client,
    statement: &Statement,
    outputs: &BTreeMap<String, String>,
) -> Result<(tokio_postgres::Statement, Vec<Boxed>), DbError> {
    let prepared = client
        .prepare(&statement.sql)
        .await
        .map_err(|e| DbError::new(statement.sql.clone(), e))?;
    let values = values(statement, prepared.params(), outputs)?;
    Ok((prepared, values))
}

fn refs(values: &[Boxed]) -> Vec<&(dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| v.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

/// Runs `statement`; the rows it changed.
pub(super) async fn execute(
    client: &Client,
    statement: &Statement,
    outputs: &BTreeMap<String, String>,
) -> Result<u64, DbError> {
    let (prepared, values) = prepared(client, statement, outputs).await?;
    client
        .execute(&prepared, &refs(&values))
        .await
        .map_err(|e| DbError::new(statement.sql.clone(), e))
}

/// The first column of `statement`'s first row as text ("" when none).
pub(super) async fn one_text(
    client: &Client,
    statement: &Statement,
    outputs: &BTreeMap<String, String>,
    context: &str,
) -> Result<String, DbError> {
    let (prepared, values) = prepared(client, statement, outputs).await?;
    let row = client
        .query_opt(&prepared, &refs(&values))
        .await
        .map_err(|e| DbError::new(context, e))?;
    Ok(row
        .and_then(|r| r.get::<_, Option<String>>(0))
        .unwrap_or_default())
}

/// Rewrites the values of `implicit` in place, each read and written
/// whole as text and logged under `merge_id`; how many.
pub(super) async fn rewrite_implicit(
    client: &Client,
    implicit: &Implicit,
    merge_id: &str,
) -> Result<usize, DbError> {
    let merge_id: i64 = merge_id
        .parse()
        .map_err(|_| DbError::unreadable("merge", "no merge number before the rewrite"))?;
    for value in &implicit.values {
        let before: Option<String> = client
            .query_opt(&value.read_sql, &[&value.key])
            .await
            .map_err(|e| DbError::new("read a value to rewrite", e))?
            .and_then(|r| r.get(0));
        let before = before.unwrap_or_default();
        let mut after = before.clone();
        for (written, replacement) in &value.spellings {
            after = after.replace(written.as_str(), replacement);
        }
        if after == before {
            // find saw it, the value's text does not show it (an escape):
            // refuse rather than leave it behind.
            return Err(DbError::refused(
                "implicit",
                format!(
                    "{} of row {} holds {}, but not as {} in its text (nothing was changed: rewrite it by hand or merge without --implicit)",
                    value.column_name,
                    value.key,
                    value.old,
                    value.spellings.iter().map(|(w, _)| w.as_str()).collect::<Vec<_>>().join(" or ")
                ),
            ));
        }
        client
            .execute(&value.write_sql, &[&value.key, &after])
            .await
            .map_err(|e| DbError::new(value.write_sql.clone(), e))?;
        let image = serde_json::json!([{
            "table": value.table, "key": value.key, "column": value.column,
            "before": before, "after": after,
        }])
        .to_string();
        client
            .execute(&implicit.log_sql, &[&merge_id, &value.old, &image])
            .await
            .map_err(|e| DbError::new(implicit.log_sql.clone(), e))?;
    }
    Ok(implicit.values.len())
}

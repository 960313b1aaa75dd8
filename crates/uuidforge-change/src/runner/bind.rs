//! Statements run with their named bindings: each value as the type the
//! server asks for, a kept output parsed into it.

use uuidforge_db::client::DbError;
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
                Value::Texts(t) => Box::new(t.clone()),
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

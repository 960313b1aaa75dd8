//! `db find` on MariaDB and MySQL: UUIDs anywhere in the columns that
//! hold them, every storage form at once — each value compared in the
//! column's own form (so an index on it answers), inside JSON documents by
//! their text — with the row key of each hit.

use crate::catalog::{quote, Catalog, Form};
use crate::columns::{in_text, UuidColumn};
use crate::session::Session;
use serde::Serialize;
use std::collections::BTreeMap;
use uuid::Uuid;
use uuidforge_store::error::DbError;

/// Values compared in one statement.
const PER_STATEMENT: usize = 500;

/// One occurrence of a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The value.
    pub value: Uuid,
    /// `schema.table.column`.
    pub column: String,
    /// The column's form.
    pub form: &'static str,
    /// The row's primary key (column → text), or every column of it when
    /// the table has none.
    pub key: BTreeMap<String, String>,
}

/// Every occurrence of `needles` in `columns`.
pub async fn find(
    session: &mut Session,
    catalog: &Catalog,
    columns: &[UuidColumn],
    needles: &[Uuid],
) -> Result<Vec<Hit>, DbError> {
    let mut hits = Vec::new();
    for col in columns {
        let c = &col.candidate;
        let pk = catalog.primary_key(&c.schema, &c.table).to_vec();
        let key_exprs: Vec<String> = pk
            .iter()
            .map(|k| {
                match columns.iter().find(|o| {
                    o.candidate.schema == c.schema
                        && o.candidate.table == c.table
                        && o.candidate.column == *k
                }) {
                    Some(o) if o.candidate.form != Form::Json => {
                        o.candidate.form.canonical(&quote(k))
                    }
                    _ => format!("CAST({} AS CHAR)", quote(k)),
                }
            })
            .collect();
        let keys = if key_exprs.is_empty() {
            "''".to_string()
        } else {
            format!("CONCAT_WS(CHAR(31), {})", key_exprs.join(", "))
        };
        let context = format!("search {}", c.display());
        for chunk in needles.chunks(PER_STATEMENT) {
            let (condition, params): (String, Vec<mysql_async::Value>) = if c.form == Form::Json {
                let params: Vec<mysql_async::Value> = chunk
                    .iter()
                    .flat_map(|u| [format!("%{u}%"), format!("%{}%", u.simple())])
                    .map(|p| mysql_async::Value::Bytes(p.into_bytes()))
                    .collect();
                let likes =
                    vec![format!("{} LIKE ?", c.form.canonical(&c.column_sql())); params.len()];
                (likes.join(" OR "), params)
            } else {
                let params: Vec<mysql_async::Value> =
                    chunk.iter().flat_map(|u| c.form.params(u)).collect();
                if params.is_empty() {
                    continue;
                }
                let marks = vec!["?"; params.len()].join(", ");
                (format!("{} IN ({marks})", c.column_sql()), params)
            };
            let rows: Vec<(Option<String>, Option<String>)> = session
                .rows(
                    &context,
                    &format!(
                        "SELECT {keys}, {} FROM {} WHERE {condition}",
                        c.form.canonical(&c.column_sql()),
                        c.table_sql()
                    ),
                    params,
                )
                .await?;
            for (key, value) in rows {
                let found: Vec<Uuid> = in_text(&value.unwrap_or_default())
                    .into_iter()
                    .filter(|u| chunk.contains(u))
                    .collect();
                let key: BTreeMap<String, String> = pk
                    .iter()
                    .cloned()
                    .zip(key.unwrap_or_default().split('\u{1f}').map(str::to_string))
                    .collect();
                for value in found {
                    hits.push(Hit {
                        value,
                        column: c.display(),
                        form: c.form.name(),
                        key: key.clone(),
                    });
                }
            }
        }
    }
    hits.sort_by(|a, b| (a.value, &a.column).cmp(&(b.value, &b.column)));
    hits.dedup();
    Ok(hits)
}

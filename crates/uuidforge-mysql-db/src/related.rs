//! `db related` on MariaDB and MySQL: the columns of other tables that
//! carry the same key as a column — declared foreign keys both ways and
//! to the same key, values they share (compared as UUIDs across storage
//! forms, over every row of the other column), names alike — scored.

use crate::catalog::{Catalog, Form};
use crate::columns::{in_text, UuidColumn};
use crate::session::Session;
use serde::Serialize;
use uuid::Uuid;
use uuidforge_store::error::DbError;

/// Values of the column compared with the others'.
const SAMPLED: usize = 200;

/// A column related to the one asked about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Related {
    /// `schema.table.column`.
    pub column: String,
    /// Its form.
    pub form: &'static str,
    /// Why, each reason.
    pub why: Vec<String>,
    /// From 0 to 1.
    pub score: f64,
}

/// The column `spec` names (`TABLE.COLUMN` or `SCHEMA.TABLE.COLUMN`)
/// among `columns`.
pub fn named<'a>(columns: &'a [UuidColumn], spec: &str) -> Result<&'a UuidColumn, DbError> {
    let parts: Vec<&str> = spec.split('.').collect();
    let found = columns.iter().find(|c| {
        let c = &c.candidate;
        match parts.as_slice() {
            [t, k] => c.table == *t && c.column == *k,
            [s, t, k] => c.schema == *s && c.table == *t && c.column == *k,
            _ => false,
        }
    });
    found.ok_or_else(|| {
        DbError::not_found(
            "column",
            format!("'{spec}' (expected TABLE.COLUMN or SCHEMA.TABLE.COLUMN of a column holding UUIDs: see db columns)"),
        )
    })
}

/// The columns related to `target`, best first.
pub async fn related(
    session: &mut Session,
    catalog: &Catalog,
    columns: &[UuidColumn],
    target: &UuidColumn,
) -> Result<Vec<Related>, DbError> {
    let t = &target.candidate;
    let me = (t.schema.clone(), t.table.clone(), t.column.clone());
    let sample: Vec<Option<String>> = session
        .rows(
            &format!("sample {}", t.display()),
            &format!(
                "SELECT DISTINCT {} FROM {} WHERE {} IS NOT NULL LIMIT {SAMPLED}",
                t.form.canonical(&t.column_sql()),
                t.table_sql(),
                t.column_sql()
            ),
            (),
        )
        .await?;
    let mut values: Vec<Uuid> = sample
        .into_iter()
        .flatten()
        .flat_map(|v| in_text(&v))
        .collect();
    values.sort();
    values.dedup();
    let references = catalog
        .foreign_keys
        .iter()
        .find(|f| f.from == me)
        .map(|f| f.to.clone());
    let mut out = Vec::new();
    for other in columns {
        let o = &other.candidate;
        let theirs = (o.schema.clone(), o.table.clone(), o.column.clone());
        if theirs == me {
            continue;
        }
        let mut why = Vec::new();
        let mut score: f64 = 0.0;
        for f in &catalog.foreign_keys {
            if f.from == theirs && f.to == me {
                why.push(format!("foreign key {} references it", f.name));
                score = 1.0;
            } else if f.from == me && f.to == theirs {
                why.push(format!("it references this (foreign key {})", f.name));
                score = 1.0;
            } else if f.from == theirs && Some(&f.to) == references.as_ref() {
                why.push(format!("references the same key (foreign key {})", f.name));
                score = score.max(0.9);
            }
        }
        if !values.is_empty() {
            let shared = shared_values(session, other, &values).await?;
            if shared > 0 {
                why.push(format!(
                    "shares {shared} of {} sampled values (as UUIDs, {} here, {} there)",
                    values.len(),
                    t.form.name(),
                    o.form.name()
                ));
                score = score.max(0.8 * shared as f64 / values.len() as f64);
            }
        }
        if uuidforge_store::names::name_evidence(&o.column, &t.table, &t.column) > 0.0 {
            why.push("named for it".into());
            score = (score + 0.2).min(1.0);
        }
        if !why.is_empty() {
            out.push(Related {
                column: o.display(),
                form: o.form.name(),
                why,
                score: (score * 100.0).round() / 100.0,
            });
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.column.cmp(&b.column)));
    Ok(out)
}

/// How many of `values` `column` holds (over all its rows; inside JSON
/// documents by their text).
async fn shared_values(
    session: &mut Session,
    column: &UuidColumn,
    values: &[Uuid],
) -> Result<u64, DbError> {
    let c = &column.candidate;
    let canonical = c.form.canonical(&c.column_sql());
    let context = format!("compare values with {}", c.display());
    if c.form == Form::Json {
        let docs: Vec<Option<String>> = session
            .rows(
                &context,
                &format!(
                    "SELECT {canonical} FROM {} WHERE {} IS NOT NULL",
                    c.table_sql(),
                    c.column_sql()
                ),
                (),
            )
            .await?;
        let mut seen: Vec<Uuid> = docs
            .into_iter()
            .flatten()
            .flat_map(|d| in_text(&d))
            .filter(|u| values.contains(u))
            .collect();
        seen.sort();
        seen.dedup();
        return Ok(seen.len() as u64);
    }
    let marks = vec!["?"; values.len()].join(", ");
    let params: Vec<mysql_async::Value> = values
        .iter()
        .map(|u| mysql_async::Value::Bytes(u.to_string().into_bytes()))
        .collect();
    let n: Vec<u64> = session
        .rows(
            &context,
            &format!(
                "SELECT COUNT(DISTINCT {canonical}) FROM {} WHERE {canonical} IN ({marks})",
                c.table_sql()
            ),
            params,
        )
        .await?;
    Ok(n.first().copied().unwrap_or(0))
}

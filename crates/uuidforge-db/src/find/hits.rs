//! A row the SQL returned, checked: every occurrence of a searched UUID in
//! it, with its path inside the value and how it was written.

use crate::catalog::{Container, Snapshot};
use crate::error::DbError;
use crate::plan::Query;
use serde::Serialize;
use uuid::Uuid;

use super::{Needles, Step};

/// One occurrence of a searched UUID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// Schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// Column.
    pub column: String,
    /// Where inside the value: a JSON path (`$.order.items[2].id`, with
    /// `$` alone for a plain text value holding it among other text) for
    /// json, arrays and composite values; `null` when the value is the UUID.
    pub path: Option<String>,
    /// `value` or `key` (a JSON object key).
    pub role: &'static str,
    /// The row's primary key as a JSON object, or `{"ctid": …}`.
    pub key: serde_json::Value,
    /// The key is a ctid: it names the row only within this snapshot.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub key_unstable: bool,
    /// The UUID found (canonical).
    pub value: String,
    /// How it was written there.
    pub written: String,
    /// For a UUIDv7: the time it carries (RFC 9562 §5.7), ISO 8601 UTC to
    /// the millisecond, the row's creation time when the key was made then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v7_time: Option<String>,
}

/// The time a UUIDv7 carries, as [`Hit::v7_time`] shows it.
pub fn v7_time(uuid: &Uuid) -> Option<String> {
    (uuid.get_version_num() == 7 && uuid.get_variant() == uuid::Variant::RFC4122).then(|| {
        let ms = (uuid.as_u128() >> 80) as u64;
        uuidforge::timestamp::Timestamp::from_unix_ms(ms).to_string()
    })
}

/// The hits in one row returned by a step's statement.
pub fn hits_in_row(step: &Step, row: &str, needles: &Needles) -> Result<Vec<Hit>, DbError> {
    let row: serde_json::Value = serde_json::from_str(row)
        .map_err(|e| DbError::unreadable("find", format!("row of {}: {e}", step.table)))?;
    let serde_json::Value::Array(items) = row else {
        return Err(DbError::unreadable(
            "find",
            format!("row of {} is not an array", step.table),
        ));
    };
    if items.len() != step.columns.len() + 1 {
        return Err(DbError::unreadable(
            "find",
            format!(
                "row of {} has {} items, expected {}",
                step.table,
                items.len(),
                step.columns.len() + 1
            ),
        ));
    }
    let key = items[0].clone();
    let mut out = Vec::new();
    for (column, value) in step.columns.iter().zip(&items[1..]) {
        let mut found = Vec::new();
        match (column.container, value) {
            (_, serde_json::Value::Null) => {}
            (Container::Uuid, serde_json::Value::String(s)) => {
                if let Ok(u) = Uuid::parse_str(s) {
                    if needles.contains(&u) {
                        found.push((None, "value", u, s.clone()));
                    }
                }
            }
            (Container::Bytea, serde_json::Value::String(hex)) => {
                if let Some(u) = bytes_uuid(hex) {
                    if needles.contains(&u) {
                        found.push((None, "value", u, format!("\\x{hex}")));
                    }
                }
            }
            (Container::Text | Container::Uuid192, serde_json::Value::String(s)) => {
                let whole = uuidforge::scan::tokens(s.as_bytes())
                    .next()
                    .is_some_and(|t| t.start == 0 && t.end == s.len());
                let path = if whole { None } else { Some("$".to_string()) };
                push_tokens(s, path, "value", needles, &mut found);
            }
            (_, v) => walk(v, &mut "$".to_string(), needles, &mut found),
        }
        for (path, role, uuid, written) in found {
            out.push(Hit {
                schema: step.schema.clone(),
                table: step.table.clone(),
                column: column.name.clone(),
                path,
                role,
                key: key.clone(),
                key_unstable: step.ctid_key,
                value: uuid.to_string(),
                written,
                v7_time: v7_time(&uuid),
            });
        }
    }
    Ok(out)
}

type Found = (Option<String>, &'static str, Uuid, String);

/// Every searched UUID written in `text`, found at `path` in `role`.
fn push_tokens(
    text: &str,
    path: Option<String>,
    role: &'static str,
    needles: &Needles,
    out: &mut Vec<Found>,
) {
    for t in uuidforge::scan::tokens(text.as_bytes()) {
        if needles.contains(&t.uuid) {
            out.push((path.clone(), role, t.uuid, text[t.start..t.end].to_string()));
        }
    }
}

fn walk(value: &serde_json::Value, path: &mut String, needles: &Needles, out: &mut Vec<Found>) {
    match value {
        serde_json::Value::String(s) => push_tokens(s, Some(path.clone()), "value", needles, out),
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, path, needles, out);
                path.truncate(len);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let len = path.len();
                push_member(path, k);
                push_tokens(k, Some(path.clone()), "key", needles, out);
                walk(v, path, needles, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Appends `.name`, or `["name"]` when the name is not a plain identifier
/// (SQL/JSON path syntax).
fn push_member(path: &mut String, name: &str) {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        path.push('.');
        path.push_str(name);
    } else {
        path.push_str(&format!("[{}]", serde_json::Value::String(name.into())));
    }
}

fn bytes_uuid(hex: &str) -> Option<Uuid> {
    if hex.len() != 32 && hex.len() != 48 {
        return None;
    }
    uuidforge::parser::parse_simple(&hex.as_bytes()[..32]).ok()
}

/// D12: every row of `table` as one JSON object (`to_jsonb`), for a
/// search that reads rows as documents (`uuidforge grep --db --table`).
/// Only tables, views and materialized views are read; the name is
/// `table` or `schema.table`, resolved in `snapshot`.
pub fn rows_as_json(snapshot: &Snapshot, table: &str) -> Result<Query, DbError> {
    let relation = snapshot.find_relation(table)?;
    Ok(Query::new(format!(
        "SELECT to_jsonb(t)::text FROM {} AS t",
        uuidforge_ident::qualified(&relation.schema, &relation.name)
    )))
}

//! D2: every column that holds UUIDs, with how it is indexed.
//!
//! Columns whose declared type holds UUIDs (`uuid`, `uuid[]`, `uuid192`,
//! domains over them such as `uuidv7_gen`) are found in the catalog; text,
//! json and bytea columns are sampled ([`sample_plans`]) and listed when
//! their values are UUIDs. Each gets one [`IndexStatus`], the best the
//! column has; only a column that leads a valid, complete b-tree or hash
//! index (or a GIN index, for arrays and json) is coloured as indexed.

use crate::catalog::{Container, Index, RelKind, Relation, Snapshot};
use crate::error::DbError;
use crate::plan::{Param, Query};
use serde::Serialize;
use uuidforge_ident::quote_ident;

/// Colour of an indexed UUID column on a light background (D2).
pub const INDEXED_LIGHT: &str = "#0043ce";
/// Colour of an indexed UUID column on a dark background (D2).
pub const INDEXED_DARK: &str = "#85b1ff";
/// Colour of a UUID column without a usable index, light background (D2).
pub const UNINDEXED_LIGHT: &str = "#f34900";
/// Colour of a UUID column without a usable index, dark background (D2).
pub const UNINDEXED_DARK: &str = "#ff9766";

/// Rows read per relation to decide whether a text, json or bytea column
/// holds UUIDs.
pub const SAMPLE_ROWS: u32 = 1000;

/// How a column is indexed: the best of all indexes that mention it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum IndexStatus {
    /// Leading column of a valid, non-partial b-tree or hash index.
    Leading {
        /// The index.
        index: String,
        /// Unique (or the primary key).
        unique: bool,
        /// `btree` or `hash`.
        method: String,
    },
    /// In a valid b-tree index, but not its first column: equality on this
    /// column alone cannot use it well.
    NonLeading {
        /// The index.
        index: String,
        /// 1-based position among the key columns.
        position: usize,
    },
    /// Only in partial indexes: lookups not implied by the predicate scan
    /// the table (a known mistake when checking that a foreign key is
    /// covered).
    PartialOnly {
        /// The index.
        index: String,
        /// Its `WHERE` clause.
        predicate: String,
    },
    /// Only in an expression index or an index of another method (GIN,
    /// GiST, BRIN).
    ExpressionOrGin {
        /// The index.
        index: String,
        /// Its method.
        method: String,
    },
    /// Only in indexes that are not valid (a failed concurrent build).
    InvalidOnly {
        /// The index.
        index: String,
    },
    /// No index mentions it.
    None,
}

impl IndexStatus {
    /// The status's name in JSON and tables.
    pub const fn name(&self) -> &'static str {
        match self {
            IndexStatus::Leading { .. } => "leading",
            IndexStatus::NonLeading { .. } => "non_leading",
            IndexStatus::PartialOnly { .. } => "partial_only",
            IndexStatus::ExpressionOrGin { .. } => "expression_or_gin",
            IndexStatus::InvalidOnly { .. } => "invalid_only",
            IndexStatus::None => "none",
        }
    }

    fn rank(&self) -> u8 {
        match self {
            IndexStatus::Leading { .. } => 0,
            IndexStatus::NonLeading { .. } => 1,
            IndexStatus::PartialOnly { .. } => 2,
            IndexStatus::ExpressionOrGin { .. } => 3,
            IndexStatus::InvalidOnly { .. } => 4,
            IndexStatus::None => 5,
        }
    }

    /// A short description for people: `leading, unique btree orders_pkey`.
    pub fn describe(&self) -> String {
        match self {
            IndexStatus::Leading {
                index,
                unique,
                method,
            } => format!(
                "leading, {}{method} {index}",
                if *unique { "unique " } else { "" }
            ),
            IndexStatus::NonLeading { index, position } => {
                format!("column {position} of {index}")
            }
            IndexStatus::PartialOnly { index, predicate } => {
                format!("only partial {index} WHERE {predicate}")
            }
            IndexStatus::ExpressionOrGin { index, method } => {
                format!("only {method}/expression {index}")
            }
            IndexStatus::InvalidOnly { index } => format!("only invalid {index}"),
            IndexStatus::None => "no index".to_string(),
        }
    }
}

/// The index status of column `num` of `relation`.
pub fn index_status(snapshot: &Snapshot, relation: u32, num: i16) -> IndexStatus {
    snapshot
        .indexes_of(relation)
        .filter_map(|index| status_in(index, num))
        .min_by_key(IndexStatus::rank)
        .unwrap_or(IndexStatus::None)
}

fn status_in(index: &Index, num: i16) -> Option<IndexStatus> {
    let position = index.keys.iter().position(|&k| k == num);
    let in_expression = index.expressions.is_some()
        && index.referenced.contains(&num)
        && position.is_none()
        && index.predicate.is_none();
    if position.is_none() && !in_expression {
        return None;
    }
    let name = index.name.clone();
    if !index.valid {
        return Some(IndexStatus::InvalidOnly { index: name });
    }
    if let Some(predicate) = &index.predicate {
        return Some(IndexStatus::PartialOnly {
            index: name,
            predicate: predicate.clone(),
        });
    }
    let ordered = matches!(index.method.as_str(), "btree" | "hash");
    match position {
        Some(0) if ordered => Some(IndexStatus::Leading {
            index: name,
            unique: index.unique,
            method: index.method.clone(),
        }),
        Some(p) if ordered && index.method == "btree" => Some(IndexStatus::NonLeading {
            index: name,
            position: p + 1,
        }),
        _ => Some(IndexStatus::ExpressionOrGin {
            index: name,
            method: index.method.clone(),
        }),
    }
}

/// Whether a column with this status and container counts as indexed (and
/// is shown in the indexed colours): it leads a usable index, or it is an
/// array or json column with a GIN index (the index for containment).
pub(crate) fn is_indexed(status: &IndexStatus, container: Container) -> bool {
    match status {
        IndexStatus::Leading { .. } => true,
        IndexStatus::ExpressionOrGin { method, .. } => {
            method == "gin"
                && matches!(
                    container,
                    Container::UuidArray | Container::TextArray | Container::Jsonb
                )
        }
        _ => false,
    }
}

/// A column that holds UUIDs, with its index status (one element of
/// `uuidforge db columns --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UuidColumn {
    /// Schema.
    pub schema: String,
    /// Table, view or materialized view.
    pub table: String,
    /// Column.
    pub column: String,
    /// Declared type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// `declared` (the type holds UUIDs) or `sampled` (text, json or bytea
    /// whose sampled values are UUIDs).
    pub kind: &'static str,
    /// What it holds.
    pub container: Container,
    /// `table`, `partitioned table`, `view`, `materialized view`, …
    pub relation_kind: &'static str,
    /// The status's name (`leading`, `non_leading`, `partial_only`,
    /// `expression_or_gin`, `invalid_only`, `none`).
    pub index_status: &'static str,
    /// The status for people: `leading, unique btree orders_pkey`,
    /// `only partial: orders_open (WHERE …)`.
    pub index_description: String,
    /// The status with the index and its predicate.
    pub index: IndexStatus,
    /// Counts as indexed: it leads a usable index, or it is an array or
    /// json column with a GIN index.
    pub indexed: bool,
    /// Colour on a light background.
    pub colour_light: &'static str,
    /// Colour on a dark background.
    pub colour_dark: &'static str,
    /// For sampled columns: share of non-null sampled values that are UUIDs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled_share: Option<f64>,
    /// For sampled columns: non-null values sampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled_values: Option<i64>,
    /// For a view column: the table column its values come from (its index
    /// status is that column's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The foreign keys this column is part of whose referencing columns
    /// lead no valid, complete index, and no index is led by any of them
    /// (deletes and updates of the parent scan this table).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unindexed_foreign_keys: Vec<String>,
    /// The foreign keys this column is part of that an index covers only
    /// in part (led by some of their columns, not all), each as
    /// `constraint (index)`: the parent's deletes read that index and
    /// filter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partly_indexed_foreign_keys: Vec<String>,
    /// For a uuid column: the UUIDv7 among its sampled values and the
    /// times of the oldest and the newest (RFC 9562 §5.7).
    pub v7_times: Option<V7Times>,
    /// A default that calls a per-backend generator while the extension's
    /// server-wide one is installed, and the statement that fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_advice: Option<DefaultAdvice>,
    /// For a uuid column of a primary key: what makes its values when an
    /// insert leaves it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_default: Option<KeyDefault>,
}

/// What a key column's default calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyDefault {
    /// The generator, `None` without a default.
    pub generator: Option<crate::generators::Generator>,
    /// For people: the function and the order it keeps, or that the
    /// application supplies the keys.
    pub description: String,
}

/// What `column` of `relation`'s primary key gets by default (uuid
/// columns of a primary key only).
fn key_default(
    snapshot: &Snapshot,
    relation: &Relation,
    column: &crate::catalog::Column,
) -> Option<KeyDefault> {
    let pk = snapshot.primary_key(relation.oid)?;
    if !pk.columns.contains(&column.num)
        || column.type_name != "uuid" && !is_uuid_domain(snapshot, column)
    {
        return None;
    }
    let generator = crate::generators::of_column(snapshot, column);
    Some(KeyDefault {
        description: match &generator {
            Some(g) => g.describe(),
            None => "no default: the application supplies the keys".into(),
        },
        generator,
    })
}

/// Whether `column`'s type is a domain over uuid (`uuidv7_gen`).
fn is_uuid_domain(snapshot: &Snapshot, column: &crate::catalog::Column) -> bool {
    snapshot
        .type_info(column.type_oid)
        .and_then(|t| snapshot.type_info(t.base))
        .is_some_and(|base| base.name == "uuid" && base.schema == "pg_catalog")
}

/// A default to change: PostgreSQL 18's `uuidv7()` (`pg_catalog`, searched
/// first, so what an unqualified call reaches there) orders values per
/// session; the extension's orders them across the server.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DefaultAdvice {
    /// The per-backend function the default calls.
    pub calls: String,
    /// The statement that makes it call the extension's generator.
    pub fix: String,
}

/// The functions a default may call that generate per backend.
const PER_BACKEND: [&str; 1] = ["pg_catalog.uuidv7"];

fn default_advice(
    snapshot: &Snapshot,
    relation: &Relation,
    column: &crate::catalog::Column,
) -> Option<DefaultAdvice> {
    let extension = snapshot.extension_schema.as_deref()?;
    let calls = column
        .default_calls
        .iter()
        .find(|c| PER_BACKEND.contains(&c.as_str()))?;
    Some(DefaultAdvice {
        calls: format!("{calls}()"),
        fix: format!(
            "ALTER TABLE {} ALTER COLUMN {} SET DEFAULT {}.uuidv7()",
            relation.sql_name(),
            quote_ident(&column.name),
            quote_ident(extension)
        ),
    })
}

/// The creation times a uuid column's UUIDv7 carry, from its sample.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct V7Times {
    /// UUIDv7 values among the sampled rows.
    pub sampled: i64,
    /// The oldest time, ISO 8601 UTC to the millisecond.
    pub oldest: String,
    /// The newest time.
    pub newest: String,
}

impl V7Times {
    fn of(range: V7Range) -> V7Times {
        V7Times {
            sampled: range.count,
            oldest: uuidforge::timestamp::Timestamp::from_unix_ms(range.oldest_ms.max(0) as u64)
                .to_string(),
            newest: uuidforge::timestamp::Timestamp::from_unix_ms(range.newest_ms.max(0) as u64)
                .to_string(),
        }
    }
}

/// The sampling statement of one relation: which columns it judges.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplePlan {
    /// The relation.
    pub relation: u32,
    /// The columns judged, in the order of the result's pairs.
    pub columns: Vec<i16>,
    /// The statement: one row, one text column, a JSON array with, per
    /// column, `[non-null count, UUID count]` (text, json, bytea) or
    /// `[non-null count, UUIDv7 count, oldest ms, newest ms]` (uuid).
    pub query: Query,
}

/// Text that is one UUID in any spelling (hex with or without dashes,
/// braces, URN, UUID_192 text), or Base32 (26 or 39 symbols).
const UUID_TEXT_RE: &str = r"^\s*(\{|urn:uuid:)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}(-[0-9a-f]{16})?\}?\s*$|^\s*[0-7][0-9a-hjkmnp-tv-z]{25}\s*$|^\s*[0-3][0-9a-hjkmnp-tv-z]{38}\s*$";
/// A UUID somewhere inside a document.
const UUID_INSIDE_RE: &str = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/// Relations whose rows can be read for this feature: tables (a
/// partitioned table's rows through its parent, so partitions are
/// skipped), views and materialized views the role may read.
fn readable(r: &Relation) -> bool {
    r.can_select
        && !r.is_partition
        && matches!(
            r.kind,
            RelKind::Table
                | RelKind::PartitionedTable
                | RelKind::View
                | RelKind::MaterializedView
                | RelKind::ForeignTable
        )
}

/// One sampling statement per relation that has uuid, text, json or bytea
/// columns: the first [`SAMPLE_ROWS`] rows, each column judged (a uuid
/// column: the time range of its UUIDv7).
pub fn sample_plans(snapshot: &Snapshot) -> Vec<SamplePlan> {
    let mut plans = Vec::new();
    for relation in snapshot.relations.iter().filter(|r| readable(r)) {
        let mut columns = Vec::new();
        let mut judged = Vec::new();
        for column in relation.columns.iter().filter(|c| c.can_select) {
            let c = quote_ident(&column.name);
            if snapshot.container(column.type_oid) == Some(Container::Uuid) {
                // The UUIDv7 among the sampled values and the oldest and
                // newest time they carry (RFC 9562 §5.7: the first 48 bits
                // are Unix milliseconds), read without the extension.
                let v7 = format!("substr({c}::text, 15, 1) = '7'");
                let ms = format!("('x' || left(replace({c}::text, '-', ''), 12))::bit(48)::int8");
                judged.push(format!(
                    "json_build_array(count({c}), count(*) FILTER (WHERE {v7}), min({ms}) FILTER (WHERE {v7}), max({ms}) FILTER (WHERE {v7}))"
                ));
                columns.push(column.num);
                continue;
            }
            let test = match snapshot.container(column.type_oid) {
                Some(Container::Text) => format!("lower({}::text) ~ $1", quote_ident(&column.name)),
                Some(Container::Json | Container::Jsonb) => {
                    format!("lower({}::text) ~ $2", quote_ident(&column.name))
                }
                Some(Container::Bytea) => {
                    format!("length({}) IN (16, 24)", quote_ident(&column.name))
                }
                _ => continue,
            };
            judged.push(format!(
                "json_build_array(count({c}), count(*) FILTER (WHERE {test}))"
            ));
            columns.push(column.num);
        }
        if columns.is_empty() {
            continue;
        }
        let list = columns
            .iter()
            .filter_map(|&n| relation.column(n))
            .map(|c| quote_ident(&c.name))
            .collect::<Vec<_>>()
            .join(", ");
        let mut sql = format!(
            "SELECT json_build_array({})::text FROM (SELECT {list} FROM {} LIMIT {SAMPLE_ROWS}) s",
            judged.join(", "),
            relation.sql_name()
        );
        // Bind only the patterns the statement uses, numbered in order.
        let mut params = Vec::new();
        for (slot, pattern) in [("$1", UUID_TEXT_RE), ("$2", UUID_INSIDE_RE)] {
            if sql.contains(slot) {
                params.push(Param::Text(pattern.to_string()));
                sql = sql.replace(slot, &format!("${}::text", params.len()));
            }
        }
        plans.push(SamplePlan {
            relation: relation.oid,
            columns,
            query: Query { sql, params },
        });
    }
    plans
}

/// The share of a column's sampled values that are UUIDs, from its
/// sampling statement's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampled {
    /// Non-null values sampled.
    pub values: i64,
    /// Of those, UUIDs (or documents holding UUIDs).
    pub uuids: i64,
    /// For a uuid column: how many were UUIDv7 and the Unix milliseconds
    /// of the oldest and the newest.
    pub v7: Option<V7Range>,
}

/// The times of the UUIDv7 in a column's sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct V7Range {
    /// UUIDv7 values sampled.
    pub count: i64,
    /// The oldest one's time, Unix ms.
    pub oldest_ms: i64,
    /// The newest one's time, Unix ms.
    pub newest_ms: i64,
}

/// Reads a sampling statement's JSON result into per-column counts.
pub fn read_sample(plan: &SamplePlan, json: &str) -> Result<Vec<(i16, Sampled)>, DbError> {
    let items: Vec<Vec<Option<i64>>> = serde_json::from_str(json)
        .map_err(|e| DbError::unreadable("sample result", e.to_string()))?;
    if items.len() != plan.columns.len() {
        return Err(DbError::unreadable(
            "sample result",
            format!("{} items for {} columns", items.len(), plan.columns.len()),
        ));
    }
    plan.columns
        .iter()
        .zip(items)
        .map(|(&c, item)| match item[..] {
            [Some(values), Some(uuids)] => Ok((
                c,
                Sampled {
                    values,
                    uuids,
                    v7: None,
                },
            )),
            [Some(values), Some(count), oldest, newest] => Ok((
                c,
                Sampled {
                    values,
                    uuids: values,
                    v7: oldest.zip(newest).map(|(oldest_ms, newest_ms)| V7Range {
                        count,
                        oldest_ms,
                        newest_ms,
                    }),
                },
            )),
            _ => Err(DbError::unreadable(
                "sample result",
                format!("{item:?} for column {c}"),
            )),
        })
        .collect()
}

/// Builds the column list from the snapshot and the sampling results
/// (`samples`: relation oid and column number → counts). Sampled text and
/// bytea columns are listed when at least `min_share` of their values are
/// UUIDs; json columns when that share of documents holds one.
pub fn uuid_columns(
    snapshot: &Snapshot,
    samples: &std::collections::HashMap<(u32, i16), Sampled>,
    min_share: f64,
) -> Vec<UuidColumn> {
    let view_sources = snapshot.view_sources();
    let unindexed_fks = unindexed_foreign_keys(snapshot);
    let mut out = Vec::new();
    for relation in &snapshot.relations {
        // Partitions share their parent's columns and indexes: the parent
        // stands for them.
        if relation.kind == RelKind::CompositeType || relation.is_partition {
            continue;
        }
        for column in &relation.columns {
            let Some(container) = snapshot.container(column.type_oid) else {
                continue;
            };
            let v7 = samples.get(&(relation.oid, column.num)).and_then(|s| s.v7);
            let (kind, sampled) = if container.is_uuid_type() {
                ("declared", None)
            } else {
                match samples.get(&(relation.oid, column.num)) {
                    Some(s) if s.values > 0 && s.uuids as f64 / s.values as f64 >= min_share => {
                        ("sampled", Some(*s))
                    }
                    _ => continue,
                }
            };
            let here = crate::catalog::ColumnRef {
                relation: relation.oid,
                column: column.num,
            };
            let source = follow_view(snapshot, &view_sources, here);
            let (status_of, source_name) = match source {
                Some(src) if src != here => (
                    src,
                    snapshot.relation(src.relation).and_then(|r| {
                        r.column(src.column)
                            .map(|c| format!("{}.{}", r.display_name(), c.name))
                    }),
                ),
                _ => (here, None),
            };
            let status = index_status(snapshot, status_of.relation, status_of.column);
            let indexed = is_indexed(&status, container);
            out.push(UuidColumn {
                schema: relation.schema.clone(),
                table: relation.name.clone(),
                column: column.name.clone(),
                type_name: column.type_name.clone(),
                kind,
                container,
                relation_kind: relation.kind.name(),
                index_status: status.name(),
                index_description: status.describe(),
                index: status,
                indexed,
                colour_light: if indexed {
                    INDEXED_LIGHT
                } else {
                    UNINDEXED_LIGHT
                },
                colour_dark: if indexed {
                    INDEXED_DARK
                } else {
                    UNINDEXED_DARK
                },
                sampled_share: sampled.map(|s| s.uuids as f64 / s.values as f64),
                sampled_values: sampled.map(|s| s.values),
                v7_times: v7.map(V7Times::of),
                default_advice: default_advice(snapshot, relation, column),
                key_default: key_default(snapshot, relation, column),
                source: source_name,
                unindexed_foreign_keys: unindexed_fks
                    .iter()
                    .filter(|fk| fk.table == relation.oid && fk.columns.contains(&column.num))
                    .filter(|fk| fk.partly_by.is_none())
                    .map(|fk| fk.name.clone())
                    .collect(),
                partly_indexed_foreign_keys: unindexed_fks
                    .iter()
                    .filter(|fk| fk.table == relation.oid && fk.columns.contains(&column.num))
                    .filter_map(|fk| Some(format!("{} ({})", fk.name, fk.partly_by.as_ref()?)))
                    .collect(),
            });
        }
    }
    out
}

/// Follows a view column to the stored column it comes from (through views
/// of views); `None` when it is computed.
fn follow_view(
    snapshot: &Snapshot,
    sources: &std::collections::HashMap<crate::catalog::ColumnRef, crate::catalog::ColumnRef>,
    mut at: crate::catalog::ColumnRef,
) -> Option<crate::catalog::ColumnRef> {
    for _ in 0..32 {
        let relation = snapshot.relation(at.relation)?;
        if relation.kind != RelKind::View {
            return Some(at);
        }
        at = *sources.get(&at)?;
    }
    None
}

/// A declared foreign key whose referencing columns do not lead a valid,
/// complete b-tree or hash index: deletes and updates of the parent scan
/// its table, or (partly indexed) read an index on fewer columns and
/// filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnindexedForeignKey {
    /// The referencing table's oid.
    pub table: u32,
    /// The referencing columns.
    pub columns: Vec<i16>,
    /// The constraint's name.
    pub name: String,
    /// An index led by some of the key's columns (a composite key's
    /// `(service_id, ws_id)` with an index on `service_id`): the key is
    /// partly indexed, not unindexed.
    pub partly_by: Option<String>,
}

/// Whether `i` can serve lookups at all: valid, complete, b-tree or hash.
fn serves_lookups(i: &Index) -> bool {
    i.valid && i.predicate.is_none() && matches!(i.method.as_str(), "btree" | "hash")
}

/// Declared foreign keys whose referencing columns do not lead a valid,
/// complete b-tree or hash index, each with an index led by part of them
/// where there is one.
pub fn unindexed_foreign_keys(snapshot: &Snapshot) -> Vec<UnindexedForeignKey> {
    snapshot
        .foreign_keys()
        .filter(|fk| {
            !snapshot.indexes_of(fk.table).any(|i| {
                serves_lookups(i)
                    && i.keys.len() >= fk.columns.len()
                    && fk
                        .columns
                        .iter()
                        .all(|c| i.keys[..fk.columns.len()].contains(c))
            })
        })
        .filter(|fk| {
            // A partitioned parent's copies on partitions are judged on
            // the parent.
            snapshot
                .relation(fk.table)
                .is_some_and(|r| r.kind != RelKind::CompositeType)
        })
        .map(|fk| UnindexedForeignKey {
            table: fk.table,
            columns: fk.columns.clone(),
            name: fk.name.clone(),
            partly_by: snapshot
                .indexes_of(fk.table)
                .find(|i| {
                    serves_lookups(i) && i.keys.first().is_some_and(|k| fk.columns.contains(k))
                })
                .map(|i| i.name.clone()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(keys: &[i16], method: &str) -> Index {
        Index {
            oid: 1,
            name: "i".into(),
            table: 10,
            keys: keys.to_vec(),
            valid: true,
            unique: false,
            primary: false,
            method: method.into(),
            predicate: None,
            expressions: None,
            referenced: keys.iter().copied().filter(|&k| k > 0).collect(),
        }
    }

    #[test]
    fn statuses_of_each_index_shape() {
        assert_eq!(
            status_in(&index(&[1, 2], "btree"), 1).unwrap().name(),
            "leading"
        );
        assert_eq!(
            status_in(&index(&[1, 2], "btree"), 2).unwrap().name(),
            "non_leading"
        );
        assert_eq!(
            status_in(&index(&[3], "hash"), 3).unwrap().name(),
            "leading"
        );
        assert_eq!(
            status_in(&index(&[3], "gin"), 3).unwrap().name(),
            "expression_or_gin"
        );
        assert!(status_in(&index(&[1], "btree"), 2).is_none());
        let mut partial = index(&[1], "btree");
        partial.predicate = Some("(deleted IS NULL)".into());
        assert_eq!(status_in(&partial, 1).unwrap().name(), "partial_only");
        let mut invalid = index(&[1], "btree");
        invalid.valid = false;
        assert_eq!(status_in(&invalid, 1).unwrap().name(), "invalid_only");
        let mut expression = index(&[0], "btree");
        expression.expressions = Some("lower((id)::text)".into());
        expression.referenced = vec![4];
        assert_eq!(
            status_in(&expression, 4).unwrap().name(),
            "expression_or_gin"
        );
    }

    #[test]
    fn the_best_status_wins() {
        let all = [
            IndexStatus::None,
            IndexStatus::InvalidOnly { index: "a".into() },
            IndexStatus::NonLeading {
                index: "b".into(),
                position: 2,
            },
            IndexStatus::Leading {
                index: "c".into(),
                unique: true,
                method: "btree".into(),
            },
        ];
        let best = all.iter().min_by_key(|s| s.rank()).unwrap();
        assert_eq!(best.name(), "leading");
    }
}

//! What a planner hands to an executor: SQL text and the values bound to
//! its parameters. Values never appear in the SQL itself.

use uuid::Uuid;

/// A value bound to a statement parameter (`$1`, `$2`, … in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    /// `text`.
    Text(String),
    /// `text[]`.
    TextArray(Vec<String>),
    /// `uuid[]`.
    UuidArray(Vec<Uuid>),
    /// `bytea[]`.
    ByteaArray(Vec<Vec<u8>>),
}

/// One statement returning rows of a single `text` column (JSON in every
/// plan of this crate), so executors need no knowledge of its columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The SQL, identifiers quoted, values as `$n` parameters.
    pub sql: String,
    /// The parameters' values.
    pub params: Vec<Param>,
}

impl Query {
    /// A statement without parameters.
    pub fn new(sql: impl Into<String>) -> Query {
        Query {
            sql: sql.into(),
            params: Vec::new(),
        }
    }
}

/// `SELECT` of one JSON object of `entries` (each `'name', expression`) as
/// text: built in pieces of 50, since a function takes at most 100
/// arguments.
///
/// ```
/// let sql = uuidforge_db::plan::json_object(&["'a', 1".to_string(), "'b', 2".to_string()]);
/// assert_eq!(sql, "SELECT (jsonb_build_object('a', 1, 'b', 2))::text");
/// ```
pub fn json_object(entries: &[String]) -> String {
    if entries.is_empty() {
        return "SELECT '{}'::text".into();
    }
    let pieces: Vec<String> = entries
        .chunks(50)
        .map(|c| format!("jsonb_build_object({})", c.join(", ")))
        .collect();
    format!("SELECT ({})::text", pieces.join(" || "))
}

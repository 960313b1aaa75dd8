//! What a MariaDB or MySQL schema declares about its UUID columns: each
//! column that may hold UUIDs in one of the storage forms, the tables'
//! primary keys, the indexes that lead with a column, the single-column
//! foreign keys. Read from `information_schema` in the session's snapshot.

use crate::session::Session;
use serde::Serialize;
use uuid::Uuid;
use uuidforge_store::error::DbError;

/// How a column stores UUIDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// MariaDB's `UUID` type.
    Uuid,
    /// `BINARY(16)` in RFC order (`UUID_TO_BIN(u)`).
    BinaryRfc,
    /// `BINARY(16)` in MySQL's swapped order (`UUID_TO_BIN(u, 1)`).
    BinarySwapped,
    /// `BINARY(16)` without values to tell the order by.
    Binary,
    /// `CHAR(36)` or `VARCHAR(36)`: the canonical text.
    Text,
    /// `CHAR(32)`: 32 hex digits.
    Hex,
    /// JSON (MySQL's type, or MariaDB's `LONGTEXT` checked by
    /// `JSON_VALID`): UUIDs inside documents.
    Json,
}

impl Form {
    /// For people.
    pub fn name(self) -> &'static str {
        match self {
            Form::Uuid => "UUID",
            Form::BinaryRfc => "BINARY(16), RFC order",
            Form::BinarySwapped => "BINARY(16), swapped (UUID_TO_BIN(u, 1))",
            Form::Binary => "BINARY(16)",
            Form::Text => "text (36)",
            Form::Hex => "hex (32)",
            Form::Json => "JSON",
        }
    }

    /// The SQL giving `column`'s values as canonical lower-case text, to
    /// compare values across forms (JSON: the document's text).
    pub fn canonical(self, column: &str) -> String {
        let hex = |parts: [(u8, u8); 5]| {
            let p: Vec<String> = parts
                .iter()
                .map(|(at, n)| format!("HEX(SUBSTR({column}, {at}, {n}))"))
                .collect();
            format!("LOWER(CONCAT_WS('-', {}))", p.join(", "))
        };
        match self {
            Form::Uuid => format!("LOWER(CAST({column} AS CHAR))"),
            Form::BinaryRfc | Form::Binary => hex([(1, 4), (5, 2), (7, 2), (9, 2), (11, 6)]),
            Form::BinarySwapped => hex([(5, 4), (3, 2), (1, 2), (9, 2), (11, 6)]),
            Form::Text => format!("LOWER({column})"),
            Form::Hex => format!(
                "LOWER(CONCAT_WS('-', SUBSTR({column}, 1, 8), SUBSTR({column}, 9, 4), SUBSTR({column}, 13, 4), SUBSTR({column}, 17, 4), SUBSTR({column}, 21, 12)))"
            ),
            Form::Json => format!("LOWER(CAST({column} AS CHAR))"),
        }
    }

    /// The values `column = ?` is to be compared with for `id` in this
    /// form (both cases of text: a case-sensitive collation).
    pub fn params(self, id: &Uuid) -> Vec<mysql_async::Value> {
        use mysql_async::Value::Bytes;
        let text = |s: String| vec![Bytes(s.to_uppercase().into_bytes()), Bytes(s.into_bytes())];
        match self {
            Form::Uuid => vec![Bytes(id.to_string().into_bytes())],
            Form::BinaryRfc | Form::Binary => vec![Bytes(id.as_bytes().to_vec())],
            Form::BinarySwapped => vec![Bytes(
                uuidforge::sortorder::mysql_uuid_to_bin(id, true).to_vec(),
            )],
            Form::Text => text(id.to_string()),
            Form::Hex => text(id.simple().to_string()),
            Form::Json => Vec::new(),
        }
    }
}

/// A column that may hold UUIDs, as declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// Its schema (database).
    pub schema: String,
    /// Its table.
    pub table: String,
    /// Its name.
    pub column: String,
    /// `COLUMN_TYPE`.
    pub column_type: String,
    /// Its collation (text), else empty.
    pub collation: String,
    /// The form its declaration says (`BINARY(16)` undecided until sampled).
    pub form: Form,
}

impl Candidate {
    /// `schema.table.column`.
    pub fn display(&self) -> String {
        format!("{}.{}.{}", self.schema, self.table, self.column)
    }

    /// The table, quoted and qualified.
    pub fn table_sql(&self) -> String {
        format!("{}.{}", quote(&self.schema), quote(&self.table))
    }

    /// The column, quoted.
    pub fn column_sql(&self) -> String {
        quote(&self.column)
    }
}

/// An identifier quoted with backticks.
///
/// ```
/// assert_eq!(uuidforge_mysql_db::catalog::quote("a`b"), "`a``b`");
/// ```
pub fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A column: (schema, table, column).
pub type ColumnRef = (String, String, String);

/// A foreign key's column as `information_schema` gives it: its name,
/// (schema, table, column), the referenced (schema, table, column), and
/// how many columns it has.
type ForeignKeyRow = (String, String, String, String, String, String, String, i64);

/// A single-column foreign key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForeignKey {
    /// Its name.
    pub name: String,
    /// The referencing (schema, table, column).
    pub from: (String, String, String),
    /// The referenced (schema, table, column).
    pub to: (String, String, String),
}

/// What the schema declares.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Catalog {
    /// Every column that may hold UUIDs.
    pub candidates: Vec<Candidate>,
    /// (schema, table) → its primary key's columns.
    pub primary_keys: Vec<((String, String), Vec<String>)>,
    /// (schema, table, column) → the indexes leading with it (`PRIMARY`
    /// for the primary key), unique ones marked.
    pub leading: Vec<(ColumnRef, Vec<(String, bool)>)>,
    /// Single-column foreign keys.
    pub foreign_keys: Vec<ForeignKey>,
    /// (schema, table, column) of each unique index of one column.
    pub single_unique: Vec<(String, String, String)>,
}

impl Catalog {
    /// The primary key's columns of a table.
    pub fn primary_key(&self, schema: &str, table: &str) -> &[String] {
        self.primary_keys
            .iter()
            .find(|((s, t), _)| s == schema && t == table)
            .map_or(&[], |(_, c)| c.as_slice())
    }

    /// The indexes leading with a column, unique ones marked.
    pub fn leading(&self, c: &Candidate) -> &[(String, bool)] {
        self.leading
            .iter()
            .find(|((s, t, k), _)| *s == c.schema && *t == c.table && *k == c.column)
            .map_or(&[], |(_, i)| i.as_slice())
    }

    /// Whether a column alone is unique (a primary key or a unique index
    /// of it alone).
    pub fn unique(&self, c: &Candidate) -> bool {
        self.primary_key(&c.schema, &c.table) == [c.column.clone()]
            || self
                .single_unique
                .iter()
                .any(|(s, t, k)| *s == c.schema && *t == c.table && *k == c.column)
    }
}

/// The schemas a command reads: those given, else the connection's
/// database, else every schema but the server's own.
fn schema_filter(session: &Session, schemas: &[String]) -> (String, Vec<String>) {
    if !schemas.is_empty() {
        let marks = vec!["?"; schemas.len()].join(", ");
        return (format!("IN ({marks})"), schemas.to_vec());
    }
    match &session.settings.database {
        Some(db) => ("= ?".into(), vec![db.clone()]),
        None => (
            "NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')".into(),
            Vec::new(),
        ),
    }
}

/// Reads the catalog of `schemas`: those given, else the connection's
/// database, else every schema but the server's own.
pub async fn read(session: &mut Session, schemas: &[String]) -> Result<Catalog, DbError> {
    let (filter, params) = schema_filter(session, schemas);
    // MariaDB's JSON is LONGTEXT checked by JSON_VALID(column); MySQL's
    // CHECK_CONSTRAINTS has no table name, and MySQL has a JSON type.
    let json_check = if session.server.mariadb {
        "EXISTS (SELECT 1 FROM information_schema.CHECK_CONSTRAINTS k WHERE k.CONSTRAINT_SCHEMA = c.TABLE_SCHEMA \
         AND k.TABLE_NAME = c.TABLE_NAME AND k.CHECK_CLAUSE LIKE CONCAT('%json_valid(`', c.COLUMN_NAME, '`)%'))"
    } else {
        "0"
    };
    let rows: Vec<(String, String, String, String, String, String, i64)> = session
        .rows(
            "read the columns",
            &format!(
                "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, LOWER(c.DATA_TYPE), LOWER(c.COLUMN_TYPE), \
                 COALESCE(c.COLLATION_NAME, ''), {json_check} \
                 FROM information_schema.COLUMNS c JOIN information_schema.TABLES t \
                 ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME \
                 WHERE t.TABLE_TYPE = 'BASE TABLE' AND c.TABLE_SCHEMA {filter} \
                 ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION"
            ),
            params.clone(),
        )
        .await?;
    let candidates = rows
        .into_iter()
        .filter_map(
            |(schema, table, column, data_type, column_type, collation, json)| {
                let form = match (data_type.as_str(), column_type.as_str()) {
                    ("uuid", _) => Form::Uuid,
                    ("binary", "binary(16)") => Form::Binary,
                    ("char" | "varchar", t) if t.ends_with("(36)") => Form::Text,
                    ("char", "char(32)") => Form::Hex,
                    ("json", _) => Form::Json,
                    ("longtext", _) if json == 1 => Form::Json,
                    _ => return None,
                };
                Some(Candidate {
                    schema,
                    table,
                    column,
                    column_type,
                    collation,
                    form,
                })
            },
        )
        .collect();
    let stats: Vec<(String, String, String, String, i64, i64)> = session
        .rows(
            "read the indexes",
            &format!(
                "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX, NON_UNIQUE \
                 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA {filter} \
                 ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX"
            ),
            params.clone(),
        )
        .await?;
    let mut catalog = Catalog::default();
    for (schema, table, index, column, seq, non_unique) in &stats {
        if index == "PRIMARY" {
            let key = (schema.clone(), table.clone());
            match catalog.primary_keys.iter_mut().find(|(k, _)| *k == key) {
                Some((_, cols)) => cols.push(column.clone()),
                None => catalog.primary_keys.push((key, vec![column.clone()])),
            }
        }
        if *seq == 1 {
            let key = (schema.clone(), table.clone(), column.clone());
            let entry = (index.clone(), *non_unique == 0);
            match catalog.leading.iter_mut().find(|(k, _)| *k == key) {
                Some((_, list)) => list.push(entry),
                None => catalog.leading.push((key, vec![entry])),
            }
            let alone = stats
                .iter()
                .filter(|(s, t, i, ..)| s == schema && t == table && i == index)
                .count()
                == 1;
            if alone && *non_unique == 0 {
                catalog
                    .single_unique
                    .push((schema.clone(), table.clone(), column.clone()));
            }
        }
    }
    let fks: Vec<ForeignKeyRow> = session
        .rows(
            "read the foreign keys",
            &format!(
                "SELECT k.CONSTRAINT_NAME, k.TABLE_SCHEMA, k.TABLE_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_SCHEMA, \
                 k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME, \
                 (SELECT COUNT(*) FROM information_schema.KEY_COLUMN_USAGE o WHERE o.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA \
                  AND o.TABLE_NAME = k.TABLE_NAME AND o.CONSTRAINT_NAME = k.CONSTRAINT_NAME) \
                 FROM information_schema.KEY_COLUMN_USAGE k \
                 WHERE k.REFERENCED_TABLE_NAME IS NOT NULL AND k.TABLE_SCHEMA {filter} \
                 ORDER BY k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME"
            ),
            params,
        )
        .await?;
    catalog.foreign_keys = fks
        .into_iter()
        .filter(|f| f.7 == 1)
        .map(|(name, s, t, c, rs, rt, rc, _)| ForeignKey {
            name,
            from: (s, t, c),
            to: (rs, rt, rc),
        })
        .collect();
    catalog.candidates = candidates;
    Ok(catalog)
}

//! A snapshot of the catalog: relations and their columns, types, indexes,
//! constraints and where view columns come from.
//!
//! It is read with **one** statement ([`SNAPSHOT_SQL`]) that returns one
//! JSON document, whatever the number of tables, so the same snapshot comes
//! from tokio-postgres (the CLI, the server) or from SPI (the extension),
//! and every planner is a pure function of it.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Schemas never looked at: the system catalogs and temporary/toast schemas.
const USER_SCHEMAS: &str = "n.nspname NOT IN ('pg_catalog', 'information_schema') \
     AND n.nspname !~ '^pg_(toast|temp_|toast_temp_)'";

/// The statement that reads a [`Snapshot`]: one row, one `text` column
/// holding the JSON that [`Snapshot::from_json`] reads.
pub static SNAPSHOT_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        r#"SELECT json_build_object(
  'database', current_database(),
  'user', current_user,
  'server_version_num', current_setting('server_version_num')::int,
  'extension_schema', (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                        WHERE e.extname = 'uuidforge'),
  -- NULL where the role may not read it (it is a superuser's setting).
  'extension_preloaded', (SELECT 'uuidforge' = ANY (string_to_array(replace(s.setting, ' ', ''), ','))
                            FROM pg_settings s WHERE s.name = 'shared_preload_libraries'),
  -- The SQL edition (uuidforge db install-sql) in each schema holding it,
  -- with the version its version function returns.
  'sql_editions', (SELECT coalesce(json_agg(json_build_object('schema', n.nspname,
                            'version', substring(p.prosrc from '''([^'']*)''')) ORDER BY n.nspname), '[]')
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE p.proname = 'uuidforge_sql_version' AND p.pronargs = 0
        AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                           AND d.objid = p.oid AND d.deptype = 'e')),
  'token_matcher', (SELECT format('%I.%I', n.nspname, p.proname) FROM pg_proc p
       JOIN pg_namespace n ON n.oid = p.pronamespace
       JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
       JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'uuidforge'
      WHERE p.proname = 'uuid_text_holds_any' AND has_function_privilege(p.oid, 'EXECUTE') LIMIT 1),
  'page_matcher', (SELECT format('%I.%I', n.nspname, p.proname) FROM pg_proc p
       JOIN pg_namespace n ON n.oid = p.pronamespace
       JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
       JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'uuidforge'
      WHERE p.proname = 'uuid_heap_candidates' AND has_function_privilege(p.oid, 'EXECUTE') LIMIT 1),
  'relations', (SELECT coalesce(json_agg(r ORDER BY r.schema, r.name), '[]') FROM (
     SELECT c.oid::int8 AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
            c.relispartition AS is_partition,
            coalesce((SELECT i.inhparent::int8 FROM pg_inherits i WHERE i.inhrelid = c.oid AND c.relispartition), 0) AS partition_of,
            (c.relkind IN ('r', 'm') AND NOT c.relrowsecurity
             AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'heap')) AS heap_pages,
            CASE WHEN c.relkind = 'c' THEN true ELSE has_table_privilege(c.oid, 'SELECT') END AS can_select,
            greatest(c.reltuples, 0)::int8 AS est_rows,
            CASE WHEN c.relkind IN ('r', 'm') THEN pg_total_relation_size(c.oid) ELSE 0 END AS bytes,
            (SELECT coalesce(json_agg(json_build_object(
                      'num', a.attnum, 'name', a.attname, 'type_oid', a.atttypid::int8,
                      'type_name', format_type(a.atttypid, a.atttypmod), 'not_null', a.attnotnull,
                      'can_select', CASE WHEN c.relkind = 'c' THEN true
                                         ELSE has_column_privilege(c.oid, a.attnum, 'SELECT') END,
                      'default_calls', (SELECT coalesce(json_agg((SELECT nspname FROM pg_namespace WHERE oid = p.pronamespace) || '.' || p.proname
                                                                  ORDER BY p.oid), '[]')
                                          FROM pg_attrdef d
                                          JOIN pg_depend dep ON dep.classid = 'pg_attrdef'::regclass
                                               AND dep.objid = d.oid AND dep.refclassid = 'pg_proc'::regclass
                                          JOIN pg_proc p ON p.oid = dep.refobjid
                                         WHERE d.adrelid = c.oid AND d.adnum = a.attnum),
                      'default', (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
                                   WHERE d.adrelid = c.oid AND d.adnum = a.attnum AND a.attgenerated = ''),
                      'collation', (SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
                                      FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                                     WHERE co.oid = a.attcollation
                                       AND a.attcollation <> (SELECT t.typcollation FROM pg_type t WHERE t.oid = a.atttypid)))
                      ORDER BY a.attnum), '[]')
               FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c') AND {USER_SCHEMAS}) r),
  'types', (SELECT coalesce(json_agg(json_build_object(
                'oid', t.oid::int8, 'name', t.typname, 'schema', n.nspname, 'typtype', t.typtype::text,
                'base', t.typbasetype::int8,
                'elem', CASE WHEN t.typcategory = 'A' THEN t.typelem::int8 ELSE 0 END,
                'relid', t.typrelid::int8,
                'default_calls', CASE WHEN t.typtype = 'd' AND t.typdefaultbin IS NOT NULL THEN
                   (SELECT coalesce(json_agg((SELECT nspname FROM pg_namespace WHERE oid = p.pronamespace) || '.' || p.proname ORDER BY p.oid), '[]')
                      FROM pg_depend dep JOIN pg_proc p ON p.oid = dep.refobjid
                     WHERE dep.classid = 'pg_type'::regclass AND dep.objid = t.oid
                       AND dep.refclassid = 'pg_proc'::regclass) END) ORDER BY t.oid), '[]')
       FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE t.typtype IN ('b', 'd', 'c')
        AND (t.typtype <> 'c' OR n.nspname NOT IN ('pg_catalog', 'information_schema'))),
  'indexes', (SELECT coalesce(json_agg(json_build_object(
                'oid', i.indexrelid::int8, 'name', ic.relname, 'table', i.indrelid::int8,
                'keys', (i.indkey::int2[])[0:i.indnkeyatts - 1],
                'valid', i.indisvalid AND i.indisready, 'unique', i.indisunique, 'primary', i.indisprimary,
                'method', am.amname,
                'predicate', pg_get_expr(i.indpred, i.indrelid),
                'expressions', pg_get_expr(i.indexprs, i.indrelid),
                'referenced', (SELECT coalesce(array_agg(DISTINCT d.refobjsubid), '{{}}')
                                 FROM pg_depend d
                                WHERE d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid
                                  AND d.refclassid = 'pg_class'::regclass AND d.refobjid = i.indrelid
                                  AND d.refobjsubid > 0))
                ORDER BY n.nspname, c.relname, ic.relname), '[]')
       FROM pg_index i
       JOIN pg_class ic ON ic.oid = i.indexrelid
       JOIN pg_am am ON am.oid = ic.relam
       JOIN pg_class c ON c.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE {USER_SCHEMAS}),
  'constraints', (SELECT coalesce(json_agg(json_build_object(
                'name', co.conname, 'kind', co.contype::text, 'table', co.conrelid::int8,
                'columns', co.conkey, 'ref_table', co.confrelid::int8, 'ref_columns', co.confkey,
                'on_update', co.confupdtype::text, 'on_delete', co.confdeltype::text,
                'deferrable', co.condeferrable, 'deferred', co.condeferred,
                'validated', co.convalidated, 'inherited', co.conparentid <> 0)
                -- By name, not by where the rows happen to lie: plans read
                -- the same on every server version.
                ORDER BY n.nspname, c.relname, co.conname), '[]')
       FROM pg_constraint co
       JOIN pg_class c ON c.oid = co.conrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE co.contype IN ('p', 'u', 'f') AND {USER_SCHEMAS}),
  'view_rules', (SELECT coalesce(json_agg(json_build_object('view', rw.ev_class::int8, 'action', rw.ev_action::text)
                                    ORDER BY n.nspname, c.relname), '[]')
       FROM pg_rewrite rw
       JOIN pg_class c ON c.oid = rw.ev_class
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE rw.rulename = '_RETURN' AND c.relkind IN ('v', 'm') AND {USER_SCHEMAS})
)::text"#
    )
});

/// The kind of a relation (`pg_class.relkind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RelKind {
    /// An ordinary table (or a partition).
    #[serde(rename = "r")]
    Table,
    /// A partitioned table (holds no rows itself).
    #[serde(rename = "p")]
    PartitionedTable,
    /// A view.
    #[serde(rename = "v")]
    View,
    /// A materialized view.
    #[serde(rename = "m")]
    MaterializedView,
    /// A foreign table.
    #[serde(rename = "f")]
    ForeignTable,
    /// A composite type's row description (not a relation holding rows).
    #[serde(rename = "c")]
    CompositeType,
}

impl RelKind {
    /// The word used in reports.
    ///
    /// ```
    /// assert_eq!(uuidforge_db::catalog::RelKind::MaterializedView.name(), "materialized view");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            RelKind::Table => "table",
            RelKind::PartitionedTable => "partitioned table",
            RelKind::View => "view",
            RelKind::MaterializedView => "materialized view",
            RelKind::ForeignTable => "foreign table",
            RelKind::CompositeType => "composite type",
        }
    }

    /// Rows are stored here (so a scan reads them, and ctid exists).
    pub const fn stores_rows(self) -> bool {
        matches!(self, RelKind::Table | RelKind::MaterializedView)
    }
}

/// A column of a relation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// `attnum`, from 1.
    pub num: i16,
    /// The name.
    pub name: String,
    /// The declared type's oid.
    pub type_oid: u32,
    /// The declared type as `format_type` writes it (`character varying(40)`).
    pub type_name: String,
    /// Declared `NOT NULL`.
    pub not_null: bool,
    /// The connected role may read it.
    pub can_select: bool,
    /// The functions its default calls, as `schema.name` (the names as
    /// they are, unquoted).
    #[serde(default)]
    pub default_calls: Vec<String>,
    /// Its default as the server prints it (`now()`), where it has one
    /// (not a generated column's expression).
    #[serde(default)]
    pub default: Option<String>,
    /// Its collation (quoted, qualified) where not its type's.
    #[serde(default)]
    pub collation: Option<String>,
}

impl Column {
    /// Whether its default stamps each row with the time it was made
    /// (`now()`, `CURRENT_TIMESTAMP`, `clock_timestamp()`,
    /// `statement_timestamp()`, `transaction_timestamp()`, `CURRENT_DATE`,
    /// `LOCALTIMESTAMP`, through a cast or not).
    ///
    /// ```
    /// # use uuidforge_db::catalog::Column;
    /// let c = |d: &str| Column { num: 1, name: "placed_at".into(), type_oid: 1184,
    ///     type_name: "timestamp with time zone".into(), not_null: true, can_select: true,
    ///     default_calls: vec![], default: Some(d.into()), collation: None };
    /// assert!(c("now()").defaults_to_now());
    /// assert!(c("(CURRENT_TIMESTAMP)::timestamp without time zone").defaults_to_now());
    /// assert!(!c("'2020-01-01 00:00:00+00'::timestamp with time zone").defaults_to_now());
    /// ```
    pub fn defaults_to_now(&self) -> bool {
        let Some(default) = &self.default else {
            return false;
        };
        let bare: String = default
            .to_ascii_lowercase()
            .split("::")
            .next()
            .unwrap_or_default()
            .chars()
            .filter(|c| !matches!(c, '(' | ')' | ' '))
            .collect();
        [
            "now",
            "current_timestamp",
            "clock_timestamp",
            "statement_timestamp",
            "transaction_timestamp",
            "current_date",
            "localtimestamp",
        ]
        .contains(&bare.as_str())
    }
}

/// A table, view, materialized view, foreign table or composite type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    /// `pg_class.oid`.
    pub oid: u32,
    /// The schema.
    pub schema: String,
    /// The name.
    pub name: String,
    /// What it is.
    pub kind: RelKind,
    /// A partition of a partitioned table.
    pub is_partition: bool,
    /// A partition's partitioned table (its oid), else 0.
    #[serde(default)]
    pub partition_of: u32,
    /// A table or materialized view stored as heap pages, without
    /// row-level security: the extension may read its pages.
    #[serde(default)]
    pub heap_pages: bool,
    /// The connected role may read it (`SELECT` on the table).
    pub can_select: bool,
    /// The planner's row estimate (`reltuples`, 0 when never analysed).
    pub est_rows: i64,
    /// Size on disk with indexes and TOAST (tables and materialized views).
    pub bytes: i64,
    /// The columns in `attnum` order.
    pub columns: Vec<Column>,
}

impl Relation {
    /// The column numbered `num`.
    pub fn column(&self, num: i16) -> Option<&Column> {
        self.columns.iter().find(|c| c.num == num)
    }

    /// The column named `name`.
    pub fn column_named(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// `"schema"."name"`, quoted.
    pub fn sql_name(&self) -> String {
        uuidforge_ident::qualified(&self.schema, &self.name)
    }

    /// `schema.name` as shown to people (not quoted).
    pub fn display_name(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }

    /// `schema.name` as a user types it to mean this relation (parts quoted
    /// only where psql needs them: `public."Order"`).
    pub fn typed_name(&self) -> String {
        format!(
            "{}.{}",
            uuidforge_ident::as_typed(&self.schema),
            uuidforge_ident::as_typed(&self.name)
        )
    }

    /// The column a user named (`Name` folds to `name`, `"Name"` keeps its
    /// case), or an error naming what there is.
    pub fn find_column(&self, context: &str, text: &str) -> Result<&Column, crate::error::DbError> {
        use crate::error::DbError;
        match &uuidforge_ident::parse_name(text).map_err(|e| DbError::invalid(context, e))?[..] {
            [part] => self.column_from_part(context, text, part),
            _ => Err(DbError::invalid(
                context,
                format!("'{text}' is not one column name (quote a name that holds a dot: \"a.b\")"),
            )),
        }
    }

    /// [`Relation::find_column`] on a name already parsed.
    pub(crate) fn column_from_part(
        &self,
        context: &str,
        text: &str,
        part: &uuidforge_ident::NamePart,
    ) -> Result<&Column, crate::error::DbError> {
        use crate::error::DbError;
        if let Some(column) = self.column_named(&part.name) {
            return Ok(column);
        }
        let similar: Vec<&Column> = if part.quoted {
            Vec::new()
        } else {
            self.columns
                .iter()
                .filter(|c| c.name.to_lowercase() == part.name)
                .collect()
        };
        let hint = match similar.first() {
            Some(c) => format!(
                "; unquoted names fold to lower case: did you mean {}?",
                uuidforge_ident::quote_ident(&c.name)
            ),
            None => String::new(),
        };
        Err(DbError::not_found(
            context,
            format!(
                "{} has no column '{text}'{hint} (it has: {})",
                self.display_name(),
                self.columns
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ))
    }
}

/// A type (`pg_type`), enough to see through domains and arrays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeInfo {
    /// `pg_type.oid`.
    pub oid: u32,
    /// `typname` (`_uuid` for `uuid[]`).
    pub name: String,
    /// The schema.
    pub schema: String,
    /// `b` base, `d` domain, `c` composite.
    pub typtype: String,
    /// A domain's underlying type, else 0.
    pub base: u32,
    /// An array's element type, else 0.
    pub elem: u32,
    /// A composite type's relation, else 0.
    pub relid: u32,
    /// The functions a domain's default calls, as `schema.name`.
    #[serde(default)]
    pub default_calls: Option<Vec<String>>,
}

/// The uuidforge SQL edition installed in a schema
/// (`uuidforge db install-sql`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqlEdition {
    /// The schema.
    pub schema: String,
    /// What its `uuidforge_sql_version()` returns.
    pub version: String,
}

/// An index (`pg_index`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// `indexrelid`.
    pub oid: u32,
    /// The index's name.
    pub name: String,
    /// The indexed table.
    pub table: u32,
    /// Key columns in order (0: an expression); INCLUDE columns left out.
    pub keys: Vec<i16>,
    /// Valid and ready (not a failed `CREATE INDEX CONCURRENTLY`).
    pub valid: bool,
    /// Unique.
    pub unique: bool,
    /// The primary key's index.
    pub primary: bool,
    /// Access method: `btree`, `hash`, `gin`, `gist`, `brin`, …
    pub method: String,
    /// The `WHERE` of a partial index.
    pub predicate: Option<String>,
    /// The key expressions, as SQL.
    pub expressions: Option<String>,
    /// Every column the index refers to (keys, expressions, predicate).
    pub referenced: Vec<i16>,
}

/// A primary key, unique or foreign key constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constraint {
    /// The name.
    pub name: String,
    /// `p`, `u` or `f`.
    pub kind: String,
    /// The constrained table.
    pub table: u32,
    /// Its columns.
    pub columns: Vec<i16>,
    /// A foreign key's referenced table (else 0).
    pub ref_table: u32,
    /// A foreign key's referenced columns.
    pub ref_columns: Option<Vec<i16>>,
    /// `ON UPDATE` action code (`a` no action, `r` restrict, `c` cascade,
    /// `n` set null, `d` set default).
    pub on_update: String,
    /// `ON DELETE` action code.
    pub on_delete: String,
    /// `DEFERRABLE`.
    pub deferrable: bool,
    /// `INITIALLY DEFERRED`.
    pub deferred: bool,
    /// Validated (not `NOT VALID`).
    pub validated: bool,
    /// A copy made for a partition (the parent's constraint is the one to
    /// report).
    pub inherited: bool,
    /// Not in the catalog: a reference the user named (`migrate-key
    /// --also`), which a change treats as a foreign key it neither drops
    /// nor makes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undeclared: bool,
}

impl Constraint {
    /// A foreign key.
    pub(crate) fn is_foreign_key(&self) -> bool {
        self.kind == "f"
    }
}

/// The `_RETURN` rule of a view: its query tree as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewRule {
    /// The view's oid.
    pub view: u32,
    /// `pg_rewrite.ev_action` (a node tree).
    pub action: String,
}

/// Where a view column's values come from: a column of a table (or of
/// another view), as the view's query tree records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnRef {
    /// The relation.
    pub relation: u32,
    /// The column number.
    pub column: i16,
}

/// Everything the planners need to know about a database.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// `current_database()`.
    pub database: String,
    /// `current_user`.
    pub user: String,
    /// `server_version_num`.
    pub server_version_num: i32,
    /// Schema of the `uuidforge` extension when it is installed (its name
    /// as it is, unquoted).
    pub extension_schema: Option<String>,
    /// Whether the server preloads the extension (its `uuidv7()` then
    /// orders values across sessions); `None` where the role may not read
    /// `shared_preload_libraries`.
    #[serde(default)]
    pub extension_preloaded: Option<bool>,
    /// The SQL edition in each schema that holds it.
    #[serde(default)]
    pub sql_editions: Vec<SqlEdition>,
    /// The extension's `uuid_text_holds_any(text, uuid[])`, qualified and
    /// quoted, when installed and executable: finds UUID tokens in text
    /// much faster than a regular expression does.
    #[serde(default)]
    pub token_matcher: Option<String>,
    /// The extension's `uuid_heap_candidates`, qualified and quoted, when
    /// installed and executable: reads a table's pages for the rows that
    /// may hold UUIDs, at about the cost of `count(*)`.
    #[serde(default)]
    pub page_matcher: Option<String>,
    /// Relations of every user schema.
    pub relations: Vec<Relation>,
    /// Base, domain and composite types.
    pub types: Vec<TypeInfo>,
    /// Indexes of those relations.
    pub indexes: Vec<Index>,
    /// Their primary, unique and foreign keys.
    pub constraints: Vec<Constraint>,
    /// View query trees.
    pub view_rules: Vec<ViewRule>,
    #[serde(skip)]
    by_oid: HashMap<u32, usize>,
    #[serde(skip)]
    type_by_oid: HashMap<u32, usize>,
}

/// A snapshot could not be read from the catalog's JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError(pub String);

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "catalog snapshot: {}", self.0)
    }
}

impl std::error::Error for SnapshotError {}

impl Snapshot {
    /// Reads the JSON that [`SNAPSHOT_SQL`] returns.
    pub fn from_json(json: &str) -> Result<Snapshot, SnapshotError> {
        let mut snapshot: Snapshot =
            serde_json::from_str(json).map_err(|e| SnapshotError(e.to_string()))?;
        snapshot.index();
        Ok(snapshot)
    }

    fn index(&mut self) {
        self.by_oid = self
            .relations
            .iter()
            .enumerate()
            .map(|(i, r)| (r.oid, i))
            .collect();
        self.type_by_oid = self
            .types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.oid, i))
            .collect();
    }

    /// The relation with this oid.
    pub fn relation(&self, oid: u32) -> Option<&Relation> {
        self.by_oid.get(&oid).map(|&i| &self.relations[i])
    }

    /// The relation a user named, read as psql and pg_dump read names
    /// ([`uuidforge_ident::parse_name`]): `schema.name`, or `name` alone when
    /// it is unique among the schemas (like an unqualified name on a search
    /// path that holds every schema). Unquoted parts fold to lower case; when
    /// they then match nothing but a table differing only in case, the error
    /// says how to quote it.
    pub fn find_relation(&self, text: &str) -> Result<&Relation, crate::error::DbError> {
        use crate::error::DbError;
        let parts = uuidforge_ident::parse_name(text).map_err(|e| DbError::invalid("table", e))?;
        self.relation_from_parts(text, &parts)
    }

    /// [`Snapshot::find_relation`] on a name already parsed; `text` is how
    /// the user wrote it, for errors.
    pub(crate) fn relation_from_parts(
        &self,
        text: &str,
        parts: &[uuidforge_ident::NamePart],
    ) -> Result<&Relation, crate::error::DbError> {
        use crate::error::DbError;
        let (schema, name) = match parts {
            [name] => (None, name),
            [schema, name] => (Some(schema), name),
            _ => {
                return Err(DbError::invalid(
                    "table",
                    format!(
                        "'{text}' has {} parts (expected table or schema.table)",
                        parts.len()
                    ),
                ))
            }
        };
        let candidates = |fold: bool| -> Vec<&Relation> {
            let same = |part: &uuidforge_ident::NamePart, actual: &str| {
                part.name == actual || (fold && !part.quoted && part.name == actual.to_lowercase())
            };
            self.relations
                .iter()
                .filter(|r| r.kind != RelKind::CompositeType && same(name, &r.name))
                .filter(|r| schema.is_none_or(|s| same(s, &r.schema)))
                .collect()
        };
        match candidates(false)[..] {
            [one] => return Ok(one),
            [] => {}
            ref several => {
                return Err(DbError::invalid(
                    "table",
                    format!(
                        "'{text}' is in several schemas ({}): write schema.table",
                        several
                            .iter()
                            .map(|r| r.schema.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        }
        let hint = match &candidates(true)[..] {
            [] => String::new(),
            similar => format!(
                "; unquoted names fold to lower case: did you mean {}? (in a shell: '{}')",
                similar
                    .iter()
                    .map(|r| r.typed_name())
                    .collect::<Vec<_>>()
                    .join(" or "),
                similar[0].typed_name()
            ),
        };
        Err(DbError::not_found(
            "table",
            format!(
                "no table or view named '{text}'{hint} (expected schema.table or a table name)"
            ),
        ))
    }

    /// The partitioned table at the top of `oid`'s partition tree (itself
    /// when it is no partition).
    pub fn partition_root(&self, oid: u32) -> Option<&Relation> {
        let mut r = self.relation(oid)?;
        for _ in 0..64 {
            match self.relation(r.partition_of) {
                Some(parent) if r.is_partition => r = parent,
                _ => break,
            }
        }
        Some(r)
    }

    /// Whether some of `relation`'s rows live on another server: it is a
    /// foreign table, or a partitioned table with foreign partitions
    /// (postgres_fdw shards).
    pub(crate) fn has_foreign_rows(&self, relation: &Relation) -> bool {
        relation.kind == RelKind::ForeignTable
            || relation.kind == RelKind::PartitionedTable
                && self.relations.iter().any(|r| {
                    r.kind == RelKind::ForeignTable
                        && r.is_partition
                        && self
                            .partition_root(r.oid)
                            .is_some_and(|root| root.oid == relation.oid)
                })
    }

    /// The relation `schema`.`name`, exactly (names from a catalog or a
    /// plan, not typed by a user).
    pub fn relation_named(&self, schema: &str, name: &str) -> Option<&Relation> {
        self.relations
            .iter()
            .find(|r| r.kind != RelKind::CompositeType && r.schema == schema && r.name == name)
    }

    /// The type with this oid.
    pub(crate) fn type_info(&self, oid: u32) -> Option<&TypeInfo> {
        self.type_by_oid.get(&oid).map(|&i| &self.types[i])
    }

    /// The type under any number of domains.
    pub fn base_type(&self, mut oid: u32) -> Option<&TypeInfo> {
        for _ in 0..32 {
            let t = self.type_info(oid)?;
            if t.typtype == "d" {
                oid = t.base;
            } else {
                return Some(t);
            }
        }
        None
    }

    /// What a column of this type holds, as far as UUIDs go.
    pub fn container(&self, type_oid: u32) -> Option<Container> {
        let t = self.base_type(type_oid)?;
        if t.elem != 0 {
            let elem = self.base_type(t.elem)?;
            return match scalar_container(elem)? {
                Container::Uuid => Some(Container::UuidArray),
                Container::Text => Some(Container::TextArray),
                Container::Uuid192 | Container::Json | Container::Jsonb | Container::Composite => {
                    Some(Container::OtherArray)
                }
                _ => None,
            };
        }
        scalar_container(t)
    }

    /// The primary key of a table (its parent's for a partition).
    pub fn primary_key(&self, table: u32) -> Option<&Constraint> {
        self.constraints
            .iter()
            .find(|c| c.table == table && c.kind == "p")
    }

    /// Foreign keys as declared (copies on partitions left out).
    pub fn foreign_keys(&self) -> impl Iterator<Item = &Constraint> {
        self.constraints
            .iter()
            .filter(|c| c.is_foreign_key() && !c.inherited)
    }

    /// Indexes of a table.
    pub fn indexes_of(&self, table: u32) -> impl Iterator<Item = &Index> {
        self.indexes.iter().filter(move |i| i.table == table)
    }

    /// For every view column whose values come straight from another
    /// relation's column: (view, view column) → source. Read from the
    /// views' query trees (`resorigtbl`/`resorigcol` of each output column),
    /// so renamed outputs (`SELECT id AS order_id`) are followed too.
    pub fn view_sources(&self) -> HashMap<ColumnRef, ColumnRef> {
        let mut out = HashMap::new();
        for rule in &self.view_rules {
            let Some(view) = self.relation(rule.view) else {
                continue;
            };
            for entry in target_entries(&rule.action) {
                if entry.orig_table == 0 || entry.orig_column <= 0 {
                    continue;
                }
                if let Some(col) = view.column_named(&entry.name) {
                    out.entry(ColumnRef {
                        relation: view.oid,
                        column: col.num,
                    })
                    .or_insert(ColumnRef {
                        relation: entry.orig_table,
                        column: entry.orig_column,
                    });
                }
            }
        }
        out
    }

    /// A snapshot restricted to the given schemas (all when empty), for
    /// the `--schema` options.
    pub fn only_schemas(&self, schemas: &[String]) -> Snapshot {
        if schemas.is_empty() {
            return self.clone();
        }
        let keep: std::collections::HashSet<u32> = self
            .relations
            .iter()
            .filter(|r| schemas.contains(&r.schema))
            .map(|r| r.oid)
            .collect();
        let mut s = Snapshot {
            relations: self
                .relations
                .iter()
                .filter(|r| keep.contains(&r.oid) || r.kind == RelKind::CompositeType)
                .cloned()
                .collect(),
            indexes: self
                .indexes
                .iter()
                .filter(|i| keep.contains(&i.table))
                .cloned()
                .collect(),
            constraints: self
                .constraints
                .iter()
                .filter(|c| keep.contains(&c.table))
                .cloned()
                .collect(),
            view_rules: self
                .view_rules
                .iter()
                .filter(|v| keep.contains(&v.view))
                .cloned()
                .collect(),
            ..self.clone()
        };
        s.index();
        s
    }
}

fn scalar_container(t: &TypeInfo) -> Option<Container> {
    match (t.schema.as_str(), t.name.as_str()) {
        ("pg_catalog", "uuid") => Some(Container::Uuid),
        ("pg_catalog", "text" | "varchar" | "bpchar" | "name" | "citext") => Some(Container::Text),
        (_, "citext") => Some(Container::Text),
        ("pg_catalog", "json") => Some(Container::Json),
        ("pg_catalog", "jsonb") => Some(Container::Jsonb),
        ("pg_catalog", "bytea") => Some(Container::Bytea),
        (_, "uuid192") => Some(Container::Uuid192),
        _ if t.typtype == "c" => Some(Container::Composite),
        _ => None,
    }
}

/// What a column can hold, as far as UUIDs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Container {
    /// `uuid` (or a domain over it, such as `uuidv7_gen`).
    Uuid,
    /// `uuid[]`.
    UuidArray,
    /// The extension's `uuid192`.
    Uuid192,
    /// `text`, `varchar`, `char`, `name`, `citext`.
    Text,
    /// An array of those.
    TextArray,
    /// `json`.
    Json,
    /// `jsonb`.
    Jsonb,
    /// `bytea` (UUIDs as 16 bytes, UUID_192 as 24).
    Bytea,
    /// A composite type (its fields are searched).
    Composite,
    /// An array of json, jsonb, uuid192 or composite values.
    OtherArray,
}

impl Container {
    /// The column's declared type says it holds UUIDs (as opposed to text,
    /// json or bytes that may).
    pub const fn is_uuid_type(self) -> bool {
        matches!(
            self,
            Container::Uuid | Container::UuidArray | Container::Uuid192
        )
    }
}

/// One output column of a view's query tree.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TargetEntry {
    name: String,
    orig_table: u32,
    orig_column: i16,
}

/// The `TARGETENTRY` nodes of a node tree that name an output column, with
/// the relation and column the value comes from. The tree's text form
/// writes names with backslash escapes for spaces and special characters.
fn target_entries(tree: &str) -> Vec<TargetEntry> {
    let mut out = Vec::new();
    for part in tree.split("{TARGETENTRY ").skip(1) {
        let Some(name) = field_token(part, ":resname ") else {
            continue;
        };
        if name == "<>" {
            continue;
        }
        let orig_table = field_token(part, ":resorigtbl ").and_then(|t| t.parse().ok());
        let orig_column = field_token(part, ":resorigcol ").and_then(|t| t.parse().ok());
        if let (Some(orig_table), Some(orig_column)) = (orig_table, orig_column) {
            out.push(TargetEntry {
                name,
                orig_table,
                orig_column,
            });
        }
    }
    out
}

/// The token after `key` in a node's text, with `\x` escapes undone.
fn field_token(text: &str, key: &str) -> Option<String> {
    let at = text.find(key)? + key.len();
    let mut out = String::new();
    let mut chars = text[at..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            ' ' | '}' | ')' | '\n' => break,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_entries_of_a_view_tree() {
        let tree = r#"({QUERY :commandType 1 :targetList ({TARGETENTRY :expr {VAR :varno 1 :varattno 1 :vartype 2950} :resno 1 :resname order_id :ressortgroupref 0 :resorigtbl 16390 :resorigcol 1 :resjunk false} {TARGETENTRY :expr {FUNCEXPR :funcid 1} :resno 2 :resname n :ressortgroupref 0 :resorigtbl 0 :resorigcol 0 :resjunk false} {TARGETENTRY :expr {VAR :varno 1} :resno 3 :resname \<img\ src\=x\> :ressortgroupref 0 :resorigtbl 16390 :resorigcol 3 :resjunk false})})"#;
        let entries = target_entries(tree);
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].name, "order_id");
        assert_eq!((entries[0].orig_table, entries[0].orig_column), (16390, 1));
        assert_eq!(entries[1].orig_table, 0);
        assert_eq!(entries[2].name, "<img src=x>");
        assert_eq!(entries[2].orig_column, 3);
    }
}

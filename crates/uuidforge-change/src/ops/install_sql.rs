//! The uuidforge SQL edition (`sql/uuidforge-sql.sql`): UUIDv7 keys in
//! plain SQL and PL/pgSQL for servers that refuse custom extensions
//! (managed PostgreSQL), installed into a schema of the user's choice — or
//! upgraded in place where an older edition is — as a change like any
//! other: the plan is the edition's SQL, run in one transaction with
//! `--apply`, the schema backed up first when it exists, the installed
//! functions checked before commit.

use super::{
    Answers, Backup, ChangePlan, Check, Operation, Planned, Read, Run, Statement, Step, Value,
};
use crate::ops::Reading;
use serde::Serialize;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::DbError;
use uuidforge_ident::quote_ident;

/// The edition's SQL with `@schema@` and `@version@` to fill in.
const TEMPLATE: &str = include_str!("../../sql/uuidforge-sql.sql");

/// The edition this uuidforge writes: the workspace's version.
pub const EDITION_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The schema the edition goes into unless told otherwise.
pub const DEFAULT_SCHEMA: &str = "uuidforge";

/// The edition's SQL for `schema`: a script psql runs as it is.
///
/// ```
/// let sql = uuidforge_change::ops::install_sql::edition_sql("Util");
/// assert!(sql.contains("CREATE OR REPLACE FUNCTION \"Util\".uuidv7()"));
/// assert!(sql.contains("CREATE OR REPLACE FUNCTION \"Util_sql_pg_uuidv7\".uuid_generate_v7()"));
/// assert!(!sql.contains("@schema@"));
/// ```
pub fn edition_sql(schema: &str) -> String {
    let [pg_uuidv7, pg_idkit] = drop_in_schemas(schema);
    TEMPLATE
        .replace("@schema@", &quote_ident(schema))
        .replace("@pg_uuidv7@", &quote_ident(&pg_uuidv7))
        .replace("@pg_idkit@", &quote_ident(&pg_idkit))
        .replace("@version@", EDITION_VERSION)
}

/// The schemas of the edition's drop-ins for pg_uuidv7 and pg_idkit beside
/// `schema`: its name and `_sql_pg_uuidv7`, `_sql_pg_idkit`. Not the
/// extension's names of them (`uuidforge_pg_uuidv7`): `CREATE EXTENSION`
/// refuses a schema it would make that exists already, and a database may
/// move from the edition to the extension.
///
/// ```
/// use uuidforge_change::ops::install_sql::drop_in_schemas;
/// assert_eq!(drop_in_schemas("uuidforge"), ["uuidforge_sql_pg_uuidv7", "uuidforge_sql_pg_idkit"]);
/// ```
pub fn drop_in_schemas(schema: &str) -> [String; 2] {
    [
        format!("{schema}_sql_pg_uuidv7"),
        format!("{schema}_sql_pg_idkit"),
    ]
}

/// The longest name PostgreSQL keeps whole (NAMEDATALEN - 1 bytes): a
/// longer one is cut, and would name another schema.
const LONGEST_NAME: usize = 63;

/// The statements of a script, each without its final `;`: split at the
/// semicolons outside quotes, dollar quotes and comments.
///
/// ```
/// use uuidforge_change::ops::install_sql::statements;
/// let s = statements("SELECT ';'; -- a; comment\nDO $x$ BEGIN PERFORM 1; END $x$;");
/// assert_eq!(s, vec!["SELECT ';'", "DO $x$ BEGIN PERFORM 1; END $x$"]);
/// ```
pub fn statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut rest = script;
    while let Some(c) = rest.chars().next() {
        let take = match c {
            '-' if rest.starts_with("--") => {
                // A comment: left out (the plan prints statements only).
                rest = rest.find('\n').map_or("", |i| &rest[i..]);
                continue;
            }
            '\'' | '"' => rest[1..].find(c).map_or(rest.len(), |i| i + 2),
            '$' => match dollar_tag(rest) {
                Some(tag) => rest[tag.len()..]
                    .find(tag)
                    .map_or(rest.len(), |i| i + 2 * tag.len()),
                None => 1,
            },
            ';' => {
                let statement = current.trim().to_string();
                if !statement.is_empty() {
                    out.push(statement);
                }
                current.clear();
                rest = &rest[1..];
                continue;
            }
            _ => c.len_utf8(),
        };
        current.push_str(&rest[..take]);
        rest = &rest[take..];
    }
    let last = current.trim();
    if !last.is_empty() {
        out.push(last.to_string());
    }
    out
}

/// The `$tag$` opening a dollar-quoted string at the start of `text`.
fn dollar_tag(text: &str) -> Option<&str> {
    let end = text[1..].find(|c: char| !(c.is_alphanumeric() || c == '_'))? + 1;
    text[end..].starts_with('$').then(|| &text[..=end])
}

/// Installing the SQL edition into a schema.
#[derive(Debug, Clone)]
pub struct InstallSql {
    /// The schema (made if it does not exist).
    pub schema: String,
}

/// The plan of an installation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstallSqlPlan {
    /// The schema.
    pub schema: String,
    /// The edition installed there before, if any.
    pub installed: Option<String>,
    /// The edition installed now.
    pub version: String,
    /// `install`, `upgrade` or `reinstall`.
    pub action: &'static str,
    /// The change the runner runs.
    pub change: ChangePlan,
}

impl Planned for InstallSqlPlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

/// The value `uuidv7_from('2022-02-22 19:22:22+00', 'orders:42')` has in
/// every implementation (the library's documented vector).
const FROM_VECTOR: &str = "017f22e2-79b0-7496-923e-225cc233cada";

/// Which of a version's numbers come first (`0.10.0` after `0.9.1`).
fn version_key(version: &str) -> Vec<u64> {
    version
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect()
}

impl InstallSql {
    fn checks(&self) -> Vec<Check> {
        let s = quote_ident(&self.schema);
        let d = quote_ident(&drop_in_schemas(&self.schema)[0]);
        vec![Check::Zero {
            what: "the SQL edition".into(),
            statement: Statement::with(
                format!(
                    "SELECT json_build_object(\
                     'edition not at its version', ({s}.uuidforge_sql_version() IS DISTINCT FROM $1)::int, \
                     'uuidv7_from not the library''s value', ({s}.uuidv7_from(timestamptz '2022-02-22 19:22:22+00', 'orders:42') <> $2)::int, \
                     'uuidv7() not a version 7 UUID', (substr({s}.uuidv7()::text, 15, 1) <> '7')::int, \
                     'the pg_uuidv7 drop-in not the lowest UUIDv7 of the millisecond', ({d}.uuid_timestamptz_to_v7(timestamptz '2023-01-02 04:26:40.637+00', true) <> '018570bb-4a7d-7000-8000-000000000000')::int, \
                     'uuidv7() not increasing', (SELECT (count(*) FILTER (WHERE u <= p))::int FROM (SELECT u, lag(u) OVER (ORDER BY i) AS p FROM (SELECT i, {s}.uuidv7() AS u FROM generate_series(1, 1000) i) a) b))::text"
                ),
                &[
                    ("version", Value::Text(Some(EDITION_VERSION.into()))),
                    (
                        "vector",
                        Value::Uuid(FROM_VECTOR.parse().expect("a UUID")),
                    ),
                ],
            ),
        }]
    }
}

/// The schema an edition goes into, as read.
#[derive(serde::Deserialize)]
struct Schema {
    exists: bool,
    /// The drop-ins' schemas that exist already.
    drop_ins: Vec<String>,
    extension_functions: Vec<String>,
}

/// The read of the schema and the extensions' functions in it.
const SCHEMA: crate::ops::Named<Schema> =
    crate::ops::Named::new("schema", "the schema and the extensions' functions in it");

impl Operation for InstallSql {
    type Plan = InstallSqlPlan;

    fn name(&self) -> &'static str {
        "install-sql"
    }

    /// Whether the schema exists, and the functions in it of the edition's
    /// names that belong to an extension (which the edition would replace).
    fn reads(&self, _snapshot: &Snapshot, _answers: &Answers) -> Result<Vec<Read>, DbError> {
        Ok(vec![SCHEMA.read(uuidforge_db::plan::Query {
                sql: "SELECT json_build_object('exists', EXISTS (SELECT FROM pg_namespace WHERE nspname = $1), \
                 'drop_ins', (SELECT coalesce(json_agg(nspname ORDER BY nspname), '[]') FROM pg_namespace WHERE nspname IN ($2, $3)), \
                 'extension_functions', (SELECT coalesce(json_agg(DISTINCT e.extname || ': ' || p.proname), '[]') \
                    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                    JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e' \
                    JOIN pg_extension e ON e.oid = d.refobjid \
                   WHERE (n.nspname = $1 AND p.proname IN ('uuidv7', 'uuidv7_at', 'uuidv7_from', 'uuidv4', \
                        'uuidv7_boundary', 'uuidv7_range_lower', 'uuidv7_range_upper', 'uuidv7_partition_key', \
                        'uuidv7_is_plausible', 'uuidv7_implausibility', 'uuid_extract_timestamp', 'uuid_extract_version', \
                        'uuid_smaller', 'uuid_larger', 'min', 'max', 'uuid_bytea', 'bytea_uuid', 'uuid_to_base32hex', 'uuid_from_base32hex')) \
                      OR (n.nspname = $2 AND p.proname IN ('uuid_generate_v7', 'uuid_v7_to_timestamptz', 'uuid_v7_to_timestamp', \
                        'uuid_timestamptz_to_v7', 'uuid_timestamp_to_v7')) \
                      OR (n.nspname = $3 AND p.proname LIKE 'idkit\\_uuidv7\\_%')))::text"
                    .into(),
                params: {
                    let [pg_uuidv7, pg_idkit] = drop_in_schemas(&self.schema);
                    vec![
                        uuidforge_db::plan::Param::Text(self.schema.clone()),
                        uuidforge_db::plan::Param::Text(pg_uuidv7),
                        uuidforge_db::plan::Param::Text(pg_idkit),
                    ]
                },
        })])
    }

    fn plan(&self, snapshot: &Snapshot, answers: &Answers) -> Result<InstallSqlPlan, DbError> {
        let found = answers.required(&SCHEMA)?;
        if let Some(long) = drop_in_schemas(&self.schema)
            .into_iter()
            .find(|name| name.len() > LONGEST_NAME)
        {
            return Err(DbError::refused(
                "schema",
                format!(
                    "schema {}: the drop-ins' schema beside it, {long}, is {} bytes (expected a schema name of at most {} bytes, so that it stays at most {LONGEST_NAME})",
                    self.schema,
                    long.len(),
                    LONGEST_NAME - "_sql_pg_uuidv7".len()
                ),
            ));
        }
        if !found.extension_functions.is_empty() {
            return Err(DbError::refusal(
                "schema",
                uuidforge_db::error::Refusal::new(
                    uuidforge_db::error::Reason::NameTaken,
                    format!(
                        "schema {} (or a schema of the drop-ins beside it) holds functions of an extension under the edition's names ({}): the edition would replace them",
                        self.schema,
                        found.extension_functions.join(", ")
                    ),
                )
                .way_out(uuidforge_db::error::WayOut::AnotherSchema),
            ));
        }
        let installed = snapshot
            .sql_editions
            .iter()
            .find(|e| e.schema == self.schema)
            .map(|e| e.version.clone());
        let action = match &installed {
            None => "install",
            Some(v) if version_key(v) > version_key(EDITION_VERSION) => {
                return Err(DbError::refused(
                    "schema",
                    format!(
                        "schema {} holds the SQL edition {v}, newer than this uuidforge's {EDITION_VERSION} (expected an older one to upgrade)",
                        self.schema
                    ),
                ))
            }
            Some(v) if v == EDITION_VERSION => "reinstall",
            Some(_) => "upgrade",
        };
        let mut summary = vec![format!(
            "plan: {action} the uuidforge SQL edition {EDITION_VERSION} in schema {}{}",
            quote_ident(&self.schema),
            match &installed {
                Some(v) if v != EDITION_VERSION => format!(" (in place of {v})"),
                _ => String::new(),
            }
        )];
        summary.push(format!(
            "  then {}.uuidv7() makes UUIDv7 keys: increasing within a session, and across sessions for calls that do not overlap (no shared memory: the extension, preloaded, orders everything)",
            quote_ident(&self.schema)
        ));
        let [pg_uuidv7, pg_idkit] = drop_in_schemas(&self.schema);
        summary.push(format!(
            "  and the drop-ins for pg_uuidv7 in schema {} and for pg_idkit in schema {}: put one on the search_path of a schema written for that extension",
            quote_ident(&pg_uuidv7),
            quote_ident(&pg_idkit)
        ));
        if snapshot.server_version_num >= 180000 {
            summary.push("  PostgreSQL 18: call it schema-qualified (an unqualified uuidv7() is the server's own); the extraction functions are the server's".into());
        }
        let steps = Step::script(statements(&edition_sql(&self.schema)));
        Ok(InstallSqlPlan {
            schema: self.schema.clone(),
            installed,
            version: EDITION_VERSION.into(),
            action,
            change: ChangePlan {
                operation: "install-sql".into(),
                target: self.schema.clone(),
                schema: self.schema.clone(),
                touches: Vec::new(),
                summary: crate::ops::lines(summary),
                backup: Backup {
                    // Its definitions, where there is a schema to replace
                    // functions in.
                    schemas: found
                        .exists
                        .then(|| quote_ident(&self.schema))
                        .into_iter()
                        .chain(found.drop_ins.iter().map(|s| quote_ident(s)))
                        .collect(),
                    schema_only: true,
                    ..Backup::default()
                },
                run: Run::OneTransaction {
                    lock: None,
                    steps,
                    checks: self.checks(),
                },
                epilogue: Vec::new(),
                measured: Default::default(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edition_splits_into_statements_that_name_the_schema() {
        let sql = edition_sql("my schema");
        let all = statements(&sql);
        assert!(all.len() > 30, "{}", all.len());
        for s in &all {
            assert!(!s.ends_with(';') && !s.is_empty(), "{s}");
            assert!(!s.contains("@schema@") && !s.contains("@version@"), "{s}");
        }
        assert!(all
            .iter()
            .any(|s| s.starts_with("CREATE OR REPLACE FUNCTION \"my schema\".uuidv7()")));
        // Every function body stays whole.
        assert!(all
            .iter()
            .filter(|s| s.contains("LANGUAGE plpgsql"))
            .all(|s| s.trim_end().ends_with('$')));
    }

    #[test]
    fn versions_compare_by_their_numbers() {
        assert!(version_key("0.10.0") > version_key("0.9.1"));
        assert!(version_key("1.0.0") > version_key("0.99.0"));
        assert_eq!(version_key(EDITION_VERSION).len(), 3);
    }
}

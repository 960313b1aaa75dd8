//! `db convert-uuid` on MariaDB and MySQL: a key (or any UUID column)
//! converted between storage forms — text (`CHAR(36)`, `VARCHAR(36)`, 32
//! hex digits) or MySQL's swapped `BINARY(16)` to RFC-order `BINARY(16)`,
//! or to MariaDB's `UUID` — with every single-column foreign key that
//! references it, the values staying the same UUIDs.
//!
//! DDL on these servers commits on its own, so the change is a sequence of
//! steps, each its own commit, planned in full first: the foreign keys
//! referencing the column are dropped (MariaDB refuses a type change of a
//! column in one, even with `foreign_key_checks` off); each column is
//! rewritten in place through a length no old value has (text goes to
//! `VARBINARY(36)` and each value to its 16 bytes; swapped bytes go to
//! `VARBINARY(17)`, each value to a marker byte and its RFC bytes, then
//! the marker off), so no row collides with another under a unique key on
//! the way; the final type is set; the foreign keys are made again with
//! their `ON DELETE`/`ON UPDATE` rules, which checks every reference.
//! Before anything runs: a backup (`mariadb-dump --single-transaction` of
//! the tables, file 0600, never overwritten); after: each table's rows and
//! an order-free digest of each converted column's UUIDs as before.
//! Refused by name before anything runs: a value that is not a UUID, a
//! reference of several columns, a default, a column already in the form,
//! a column that itself references another key, `UUID` on MySQL; at
//! `--apply`, a second conversion of the same schema (a named lock) and a
//! column whose type changed since the plan. Each `UPDATE` touches only
//! the values still in the length it converts from.

use crate::catalog::{quote, Candidate, Catalog, Form};
use crate::columns::UuidColumn;
use crate::session::Session;
use serde::Serialize;
use uuidforge_store::error::DbError;

/// The form to convert to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// `BINARY(16)` in RFC order.
    Binary16,
    /// MariaDB's `UUID`.
    Uuid,
}

impl Target {
    /// `--to`'s value: `binary16` or `uuid`.
    pub fn parse(text: &str) -> Result<Target, DbError> {
        match text {
            "binary16" => Ok(Target::Binary16),
            "uuid" => Ok(Target::Uuid),
            other => Err(DbError::invalid(
                "to",
                format!("'{other}' (expected binary16 or uuid)"),
            )),
        }
    }

    fn sql_type(self) -> &'static str {
        match self {
            Target::Binary16 => "BINARY(16)",
            Target::Uuid => "UUID",
        }
    }
}

/// One column to convert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Converted {
    /// `schema.table.column`.
    pub column: String,
    /// (schema, table, column), as the server names them.
    #[serde(skip)]
    pub names: (String, String, String),
    /// Its `COLUMN_TYPE` when planned: `--apply` refuses to run where it
    /// is another by then.
    pub column_type: String,
    /// Its form before.
    pub from: &'static str,
    /// `NOT NULL`.
    pub not_null: bool,
}

/// A planned conversion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The columns: the one asked for, then its references.
    pub columns: Vec<Converted>,
    /// The tables written, quoted and qualified.
    pub tables: Vec<String>,
    /// (table's schema, table name) of each, for the backup.
    pub dump: Vec<(String, String)>,
    /// The statements, in order; each commits on its own.
    pub statements: Vec<String>,
    /// The checks: what each checks, its statement before and after (the
    /// same text expected of both).
    pub checks: Vec<(String, String, String)>,
}

/// A foreign key referencing the column, as it is made again.
struct Referencing {
    candidate: Candidate,
    name: String,
    on_delete: String,
    on_update: String,
}

/// Plans converting `spec` (`TABLE.COLUMN` or `SCHEMA.TABLE.COLUMN`) to
/// `to`, reading in `session`.
pub async fn plan(
    session: &mut Session,
    catalog: &Catalog,
    columns: &[UuidColumn],
    spec: &str,
    to: Target,
) -> Result<Plan, DbError> {
    if to == Target::Uuid && !session.server.mariadb {
        return Err(DbError::refused(
            "to",
            format!(
                "uuid: {} has no UUID type (expected MariaDB 10.7 or later; use --to binary16)",
                session.server.version
            ),
        ));
    }
    let key = crate::related::named(columns, spec)?.candidate.clone();
    let me = (key.schema.clone(), key.table.clone(), key.column.clone());
    if let Some(f) = catalog.foreign_keys.iter().find(|f| f.from == me) {
        return Err(DbError::refused(
            "column",
            format!(
                "{} references {}.{}.{} (foreign key {}): convert the key it references, which converts it with its other references",
                key.display(), f.to.0, f.to.1, f.to.2, f.name
            ),
        ));
    }
    let rules: Vec<(String, String, String, String, String, i64)> = session
        .rows(
            "read the foreign keys referencing the column",
            "SELECT r.CONSTRAINT_SCHEMA, r.TABLE_NAME, r.CONSTRAINT_NAME, r.DELETE_RULE, r.UPDATE_RULE, \
             (SELECT COUNT(*) FROM information_schema.KEY_COLUMN_USAGE k WHERE k.CONSTRAINT_SCHEMA = r.CONSTRAINT_SCHEMA \
              AND k.TABLE_NAME = r.TABLE_NAME AND k.CONSTRAINT_NAME = r.CONSTRAINT_NAME) \
             FROM information_schema.REFERENTIAL_CONSTRAINTS r \
             WHERE r.UNIQUE_CONSTRAINT_SCHEMA = ? AND r.REFERENCED_TABLE_NAME = ? AND EXISTS (\
               SELECT 1 FROM information_schema.KEY_COLUMN_USAGE k WHERE k.CONSTRAINT_SCHEMA = r.CONSTRAINT_SCHEMA \
               AND k.TABLE_NAME = r.TABLE_NAME AND k.CONSTRAINT_NAME = r.CONSTRAINT_NAME AND k.REFERENCED_COLUMN_NAME = ?) \
             ORDER BY r.CONSTRAINT_SCHEMA, r.TABLE_NAME, r.CONSTRAINT_NAME",
            (key.schema.clone(), key.table.clone(), key.column.clone()),
        )
        .await?;
    let mut referencing = Vec::new();
    for (schema, table, name, on_delete, on_update, width) in rules {
        if width != 1 {
            return Err(DbError::refused(
                "column",
                format!("foreign key {name} of {schema}.{table} references it with several columns (expected references of one column)"),
            ));
        }
        let f = catalog
            .foreign_keys
            .iter()
            .find(|f| f.name == name && f.from.0 == schema && f.from.1 == table)
            .ok_or_else(|| {
                DbError::unreadable("column", format!("foreign key {name} not in the catalog"))
            })?;
        let candidate = columns
            .iter()
            .map(|c| &c.candidate)
            .find(|c| (c.schema.clone(), c.table.clone(), c.column.clone()) == f.from)
            .cloned()
            .ok_or_else(|| {
                DbError::refused(
                    "column",
                    format!(
                        "{}.{}.{} references it but holds no UUID form uuidforge reads",
                        f.from.0, f.from.1, f.from.2
                    ),
                )
            })?;
        referencing.push(Referencing {
            candidate,
            name,
            on_delete,
            on_update,
        });
    }
    let all: Vec<&Candidate> = std::iter::once(&key)
        .chain(referencing.iter().map(|r| &r.candidate))
        .collect();
    let mut converted = Vec::new();
    for c in &all {
        converted.push(check_column(session, c, to).await?);
    }
    let mut statements: Vec<String> = referencing
        .iter()
        .map(|r| {
            format!(
                "ALTER TABLE {} DROP FOREIGN KEY {}",
                r.candidate.table_sql(),
                quote(&r.name)
            )
        })
        .collect();
    for (c, info) in all.iter().zip(&converted) {
        statements.extend(rewrite(c, info.not_null, to));
    }
    for r in &referencing {
        statements.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({}) ON DELETE {} ON UPDATE {}",
            r.candidate.table_sql(),
            quote(&r.name),
            r.candidate.column_sql(),
            key.table_sql(),
            key.column_sql(),
            r.on_delete,
            r.on_update
        ));
    }
    let mut tables: Vec<(String, String)> = all
        .iter()
        .map(|c| (c.schema.clone(), c.table.clone()))
        .collect();
    tables.sort();
    tables.dedup();
    if let Some((schema, table)) = tables.iter().find(|(s, _)| *s != key.schema) {
        return Err(DbError::refused(
            "column",
            format!("{schema}.{table} references it from another schema, which one backup cannot hold with it (expected its references in {})", key.schema),
        ));
    }
    let after = match to {
        Target::Binary16 => Form::BinaryRfc,
        Target::Uuid => Form::Uuid,
    };
    let digest = |c: &Candidate, form: Form| {
        format!(
            "SELECT CONCAT(COUNT(*), ' rows, ', COUNT({k}), ' values, digest ', COALESCE(SUM(CAST(CONV(SUBSTR(MD5({canon}), 1, 15), 16, 10) AS UNSIGNED)), 0)) FROM {}",
            c.table_sql(),
            k = c.column_sql(),
            canon = form.canonical(&c.column_sql())
        )
    };
    let checks = all
        .iter()
        .map(|c| {
            (
                format!("rows and UUIDs of {}", c.display()),
                digest(c, c.form),
                digest(c, after),
            )
        })
        .collect();
    Ok(Plan {
        columns: converted,
        tables: tables
            .iter()
            .map(|(s, t)| format!("{}.{}", quote(s), quote(t)))
            .collect(),
        dump: tables,
        statements,
        checks,
    })
}

/// Refuses a column that cannot be converted; what it is.
async fn check_column(
    session: &mut Session,
    c: &Candidate,
    to: Target,
) -> Result<Converted, DbError> {
    let already = matches!(
        (c.form, to),
        (Form::BinaryRfc | Form::Binary, Target::Binary16) | (Form::Uuid, Target::Uuid)
    );
    if already {
        return Err(DbError::refused(
            "column",
            format!("{} is {} already", c.display(), c.form.name()),
        ));
    }
    if matches!(c.form, Form::Json | Form::Uuid) {
        return Err(DbError::refused(
            "column",
            format!(
                "{} is {} (expected text, 32 hex digits or BINARY(16))",
                c.display(),
                c.form.name()
            ),
        ));
    }
    let info: Vec<(String, Option<String>)> = session
        .rows(
            &format!("read {}", c.display()),
            "SELECT IS_NULLABLE, COLUMN_DEFAULT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
            (c.schema.clone(), c.table.clone(), c.column.clone()),
        )
        .await?;
    let (nullable, default) = info.into_iter().next().unwrap_or_default();
    if let Some(d) = default.filter(|d| d != "NULL") {
        return Err(DbError::refused(
            "column",
            format!("{} has the default {d}, which the conversion would not carry: drop it first (ALTER TABLE … ALTER COLUMN … DROP DEFAULT)", c.display()),
        ));
    }
    // Every value must be a UUID in its form: the least that is not, named.
    let pattern = match c.form {
        Form::Text => {
            "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
        }
        Form::Hex => "^[0-9A-Fa-f]{32}$",
        _ => "",
    };
    if !pattern.is_empty() {
        let bad: Vec<(u64, Option<String>)> = session
            .rows(
                &format!("check the values of {}", c.display()),
                &format!(
                    "SELECT COUNT(*), MIN({k}) FROM {} WHERE {k} IS NOT NULL AND NOT ({k} REGEXP ?)",
                    c.table_sql(),
                    k = c.column_sql()
                ),
                (pattern,),
            )
            .await?;
        if let Some((n, least)) = bad.into_iter().next().filter(|(n, _)| *n > 0) {
            return Err(DbError::refused(
                "column",
                format!(
                    "{} holds {n} value(s) that are not UUIDs in its form, the least '{}' (expected {})",
                    c.display(),
                    least.unwrap_or_default(),
                    c.form.name()
                ),
            ));
        }
    }
    Ok(Converted {
        column: c.display(),
        names: (c.schema.clone(), c.table.clone(), c.column.clone()),
        column_type: c.column_type.clone(),
        from: c.form.name(),
        not_null: nullable == "NO",
    })
}

/// The statements rewriting one column in place.
fn rewrite(c: &Candidate, not_null: bool, to: Target) -> Vec<String> {
    let t = c.table_sql();
    let k = c.column_sql();
    let null = if not_null { " NOT NULL" } else { "" };
    let modify = |ty: &str| format!("ALTER TABLE {t} MODIFY {k} {ty}{null}");
    let mut out = match c.form {
        Form::Text | Form::Hex => vec![
            modify("VARBINARY(36)"),
            format!("UPDATE {t} SET {k} = UNHEX(REPLACE({k}, '-', '')) WHERE LENGTH({k}) IN (32, 36)"),
            modify("BINARY(16)"),
        ],
        Form::BinarySwapped => vec![
            modify("VARBINARY(17)"),
            format!(
                "UPDATE {t} SET {k} = CONCAT(X'00', SUBSTR({k}, 5, 4), SUBSTR({k}, 3, 2), SUBSTR({k}, 1, 2), SUBSTR({k}, 9, 8)) WHERE LENGTH({k}) = 16"
            ),
            format!("UPDATE {t} SET {k} = SUBSTR({k}, 2) WHERE LENGTH({k}) = 17"),
            modify("BINARY(16)"),
        ],
        _ => Vec::new(),
    };
    if to == Target::Uuid {
        out.push(modify(to.sql_type()));
    }
    out
}

/// What `--apply` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// The backup file.
    pub backup: String,
    /// The statements run.
    pub statements: usize,
    /// Each check: what it checks and its text (the same before and after).
    pub checks: Vec<(String, String)>,
}

/// Runs `plan` on the server of `settings`: the checks read, the tables
/// backed up into `backup` (0600, never overwritten; `mariadb-dump` or
/// `mysqldump`, the password through `MYSQL_PWD`), the statements in
/// order, the checks read again and compared. A failure names the step
/// and the backup to restore from.
pub async fn apply(
    settings: &crate::connect::Settings,
    plan: &Plan,
    backup: &std::path::Path,
) -> Result<Applied, DbError> {
    use mysql_async::prelude::*;
    let context = format!("connect to {settings}");
    let mut conn = mysql_async::Conn::new(settings.opts())
        .await
        .map_err(|e| crate::session::error(&context, e))?;
    // One conversion of a schema at a time (a second operator waits for
    // nothing: it is refused), and only over the columns as planned.
    let schema = plan
        .dump
        .first()
        .map(|(s, _)| s.clone())
        .unwrap_or_default();
    let locked: Option<Option<i64>> = conn
        .exec_first(
            "SELECT GET_LOCK(CONCAT('uuidforge convert-uuid ', ?), 0)",
            (schema.clone(),),
        )
        .await
        .map_err(|e| crate::session::error("lock", e))?;
    if locked.flatten() != Some(1) {
        return Err(DbError::busy(
            "convert-uuid",
            format!("another convert-uuid of schema {schema} is running; nothing was changed (run again once it is done)"),
        ));
    }
    for c in &plan.columns {
        let (s, t, k) = c.names.clone();
        let now: Option<String> = conn
            .exec_first(
                "SELECT LOWER(COLUMN_TYPE) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
                (s, t, k),
            )
            .await
            .map_err(|e| crate::session::error("read the columns again", e))?;
        if now.as_deref() != Some(c.column_type.as_str()) {
            return Err(DbError::schema_changed("convert-uuid").with_hint(format!(
                "{} is {} now, {} when planned: nothing was changed; plan again",
                c.column,
                now.unwrap_or_else(|| "gone".into()),
                c.column_type
            )));
        }
    }
    let mut before = Vec::new();
    for (what, sql, _) in &plan.checks {
        let v: Option<String> = conn
            .query_first(sql.as_str())
            .await
            .map_err(|e| crate::session::error(what, e))?;
        before.push(v.unwrap_or_default());
    }
    dump(settings, &plan.dump, backup)?;
    let restore = format!(
        "nothing is undone by itself (each statement commits on its own): restore the tables with mariadb {} < {}",
        settings.database.as_deref().unwrap_or(""),
        backup.display()
    );
    for (i, statement) in plan.statements.iter().enumerate() {
        conn.query_drop(statement.as_str()).await.map_err(|e| {
            crate::session::error(
                &format!("step {} of {} ({statement})", i + 1, plan.statements.len()),
                e,
            )
            .with_hint(restore.clone())
        })?;
    }
    let mut checks = Vec::new();
    let mut failed = Vec::new();
    for ((what, _, sql), was) in plan.checks.iter().zip(before) {
        let now: Option<String> = conn
            .query_first(sql.as_str())
            .await
            .map_err(|e| crate::session::error(what, e))?;
        let now = now.unwrap_or_default();
        if now != was {
            failed.push(format!("{what}: {was} before, {now} after"));
        }
        checks.push((what.clone(), now));
    }
    conn.disconnect()
        .await
        .map_err(|e| crate::session::error("disconnect", e))?;
    if !failed.is_empty() {
        return Err(DbError::verification_failed("convert-uuid", failed).with_hint(restore));
    }
    Ok(Applied {
        backup: backup.display().to_string(),
        statements: plan.statements.len(),
        checks,
    })
}

/// The tables `tables` dumped into `path` (created 0600; an existing file
/// is refused), in one consistent snapshot.
fn dump(
    settings: &crate::connect::Settings,
    tables: &[(String, String)],
    path: &std::path::Path,
) -> Result<(), DbError> {
    let file = uuidforge_store::private_file::create_new(path).map_err(|e| {
        DbError::tool(
            "backup",
            format!("{}: {e} (the backup is never overwritten)", path.display()),
        )
    })?;
    let program = ["mariadb-dump", "mysqldump"]
        .into_iter()
        .find(|p| {
            std::process::Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .ok_or_else(|| DbError::tool("backup", "neither mariadb-dump nor mysqldump is on PATH"))?;
    let schema = &tables.first().map(|(s, _)| s.clone()).unwrap_or_default();
    let mut command = std::process::Command::new(program);
    command.args([
        "--single-transaction",
        "--no-tablespaces",
        "--skip-triggers",
    ]);
    if settings.host == "localhost" {
        if let Some(socket) = &settings.socket {
            command.arg(format!("--socket={socket}"));
        }
    } else {
        command
            .arg(format!("--host={}", settings.host))
            .arg(format!("--port={}", settings.port));
    }
    if let Some(user) = &settings.user {
        command.arg(format!("--user={user}"));
    }
    command.env_remove("MYSQL_PWD");
    if let Some(password) = &settings.password {
        command.env("MYSQL_PWD", password);
    }
    command.arg(schema);
    command.args(tables.iter().filter(|(s, _)| s == schema).map(|(_, t)| t));
    let out = command
        .stdout(file)
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| DbError::tool("backup", format!("{program}: {e}")))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(path);
        return Err(DbError::tool(
            "backup",
            format!(
                "{program} failed, nothing was changed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(())
}

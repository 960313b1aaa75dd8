//! The Database view's API: a live PostgreSQL database seen through its
//! UUIDs (D2 columns, D5 find, D6 related, D13 discover), through the same
//! planners as `uuidforge db`.
//!
//! - The routes exist only when the server was given a database.
//! - Every request runs in its own read-only transaction; no request
//!   carries SQL: they name schemas, columns and values, which the
//!   planners quote or bind.
//! - Every route here wants the server's token and an allowed `Origin`
//!   ([`crate::guard`]).
//! - Database requests run a few at a time ([`MAX_DB_REQUESTS`]), find
//!   takes at most [`MAX_FIND_VALUES`] values and returns at most
//!   [`MAX_FIND_HITS`] hits.

use crate::error::ApiError;
use crate::AppState;
use axum::extract::{RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::sync::Arc;
use uuidforge_db::client::{DbError, ReadOnly};
use uuidforge_db::exec;
use uuidforge_db::find::{FindOptions, Needles};

/// Values one find request may carry.
pub const MAX_FIND_VALUES: usize = 1000;
/// Hits one find request returns (the rest are counted, not listed).
pub const MAX_FIND_HITS: usize = 10_000;
/// Database requests running at once; more wait.
pub const MAX_DB_REQUESTS: usize = 4;

/// What `--db` configures.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseAccess {
    /// Connection settings as psql takes them (URL or key=value), the rest
    /// from `PG*` variables and `~/.pgpass`.
    pub dsn: String,
}

impl std::fmt::Debug for DatabaseAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseAccess")
            .field("dsn", &uuidforge_db::connect::redact(&self.dsn))
            .finish()
    }
}

/// The open side of [`DatabaseAccess`].
pub(crate) struct Database {
    config: tokio_postgres::Config,
    permits: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Database")
    }
}

impl Database {
    /// Reads the connection settings (not connecting yet: the database may
    /// start after the server).
    pub(crate) fn open(
        access: &DatabaseAccess,
    ) -> Result<Arc<Database>, uuidforge_db::error::DbError> {
        let config = uuidforge_db::client::config(Some(&access.dsn))?;
        Ok(Arc::new(Database {
            config,
            permits: tokio::sync::Semaphore::new(MAX_DB_REQUESTS),
        }))
    }
}

fn database(app: &AppState) -> Result<&Arc<Database>, ApiError> {
    app.database.as_ref().ok_or_else(|| {
        ApiError::with_status(
            StatusCode::NOT_FOUND,
            "path",
            "/api/v1/db",
            "a server started with --db",
        )
    })
}

/// A database failure, answered with the status its kind maps to
/// ([`DbError::http_status`]: 403, 500, 502, 503, 504): the caller's
/// mistake (400) names the field, anything else the database, with its
/// message and SQLSTATE (its password never).
fn db_error(e: DbError) -> ApiError {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if e.is_caller_mistake() {
        ApiError::with_status(
            status,
            e.context,
            e.message,
            "a column of the database (TABLE.COLUMN or SCHEMA.TABLE.COLUMN)",
        )
    } else {
        ApiError::with_status(
            status,
            "database",
            uuidforge_db::connect::redact(&e.to_string()),
            "a database that answers",
        )
    }
}

async fn session(db: &Database) -> Result<ReadOnly, ApiError> {
    ReadOnly::open(&db.config).await.map_err(db_error)
}

/// `schema=a,b`: a list, empty for all.
fn list(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn flag(params: &[(&str, String)], name: &str) -> Result<bool, ApiError> {
    match crate::api::param(params, name) {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(ApiError::bad(name, other, "true or false")),
    }
}

/// `GET /api/v1/db`: which database, as whom.
pub async fn about(State(app): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let db = database(&app)?;
    let _permit = db.permits.acquire().await.map_err(closed)?;
    let snapshot = session(db).await?.snapshot().await.map_err(db_error)?;
    Ok(Json(json!({
        "database": snapshot.database,
        "user": snapshot.user,
        "server_version_num": snapshot.server_version_num,
        "extension_schema": snapshot.extension_schema,
        "read_only": true,
    })))
}

fn closed(_: tokio::sync::AcquireError) -> ApiError {
    ApiError::with_status(
        StatusCode::SERVICE_UNAVAILABLE,
        "request",
        "shutting down",
        "a server that is running",
    )
}

/// `GET /api/v1/db/columns?schema=&min_share=`: D2.
pub async fn columns(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let db = database(&app)?;
    let params = crate::api::query_params(query.as_deref(), &["schema", "min_share"])?;
    let schemas = list(crate::api::param(&params, "schema"));
    let min_share = match crate::api::param(&params, "min_share") {
        None => 0.5,
        Some(text) => match text.parse::<f64>() {
            Ok(v) if (0.0..=1.0).contains(&v) => v,
            _ => return Err(ApiError::bad("min_share", text, "a share from 0 to 1")),
        },
    };
    let _permit = db.permits.acquire().await.map_err(closed)?;
    let session = session(db).await?;
    let found = exec::uuid_columns(&session, &schemas, min_share)
        .await
        .map_err(db_error)?;
    Ok(Json(json!({ "columns": found })))
}

/// `GET /api/v1/db/find?value=&schema=&column=&indexed_only=`: D5.
pub async fn find(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let db = database(&app)?;
    let params = crate::api::query_params(
        query.as_deref(),
        &["value", "schema", "column", "indexed_only"],
    )?;
    let text = crate::api::param(&params, "value").unwrap_or("");
    let values: Vec<&str> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect();
    if values.is_empty() || values.len() > MAX_FIND_VALUES {
        return Err(ApiError::bad(
            "value",
            text,
            format!("1 to {MAX_FIND_VALUES} UUIDs in any spelling, separated by commas or spaces"),
        ));
    }
    let needles = Needles::parse(
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("value[{i}]"), *v)),
    )
    .map_err(|e| ApiError::bad(e.origin, e.value, e.expected))?;
    let options = FindOptions {
        schemas: list(crate::api::param(&params, "schema")),
        indexed_only: flag(&params, "indexed_only")?,
        columns: list(crate::api::param(&params, "column")),
        ..FindOptions::default()
    };
    let _permit = db.permits.acquire().await.map_err(closed)?;
    let session = session(db).await?;
    let mut hits = Vec::new();
    let summary = exec::find(
        &session,
        &db.config,
        &needles,
        &options,
        2,
        |hit| {
            if hits.len() < MAX_FIND_HITS {
                hits.push(hit);
            }
        },
        |_| {},
    )
    .await
    .map_err(db_error)?;
    let truncated = summary.hits as usize > hits.len();
    Ok(Json(
        json!({ "hits": hits, "summary": summary, "truncated": truncated }),
    ))
}

/// `GET /api/v1/db/related?column=` or `?name=`: D6.
pub async fn related(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let db = database(&app)?;
    let params = crate::api::query_params(query.as_deref(), &["column", "name"])?;
    let (target, by_name) = match (
        crate::api::param(&params, "column"),
        crate::api::param(&params, "name"),
    ) {
        (Some(c), None) if !c.is_empty() => (c, false),
        (None, Some(n)) if !n.is_empty() => (n, true),
        _ => {
            return Err(ApiError::bad(
                "column",
                query.unwrap_or_default(),
                "either column=TABLE.COLUMN or name=NAME",
            ))
        }
    };
    let _permit = db.permits.acquire().await.map_err(closed)?;
    let session = session(db).await?;
    let found = exec::related(&session, target, by_name)
        .await
        .map_err(db_error)?;
    Ok(Json(json!({ "related": found })))
}

/// `GET /api/v1/db/discover?schema=&format=json|mermaid|dot|svg`: D13.
pub async fn discover(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    use uuidforge_db::{diagram, discover};
    let db = database(&app)?;
    let params = crate::api::query_params(query.as_deref(), &["schema", "format"])?;
    let format = crate::api::param(&params, "format").unwrap_or("json");
    if !["json", "mermaid", "dot", "svg", "ddl"].contains(&format) {
        return Err(ApiError::bad(
            "format",
            format,
            "json, mermaid, dot, svg or ddl",
        ));
    }
    let schemas = list(crate::api::param(&params, "schema"));
    let _permit = db.permits.acquire().await.map_err(closed)?;
    let session = session(db).await?;
    let report = exec::discover(&session, &schemas).await.map_err(db_error)?;
    let text = |content_type: &'static str, body: String| {
        ([(header::CONTENT_TYPE, content_type)], body).into_response()
    };
    Ok(match format {
        "mermaid" => text("text/plain; charset=utf-8", diagram::mermaid(&report)),
        "dot" => text("text/vnd.graphviz; charset=utf-8", diagram::dot(&report)),
        "ddl" => text(
            "application/sql; charset=utf-8",
            discover::adoption_ddl(&report),
        ),
        "svg" => text(
            "image/svg+xml",
            diagram::svg(&report).map_err(|e| {
                ApiError::with_status(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "diagram",
                    e.message,
                    "an ER diagram",
                )
            })?,
        ),
        _ => Json(json!({
            "primary_keys": report.primary_keys,
            "foreign_keys": report.foreign_keys,
            "ddl": discover::adoption_ddl(&report),
        }))
        .into_response(),
    })
}

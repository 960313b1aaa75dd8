//! The web page, its scripts and the OpenAPI document, embedded in the
//! binary: the page works offline and needs no CDN.

use crate::error::ApiError;
use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// `(name, content type, contents)` of every file under `/static/`.
const FILES: [(&str, &str, &str); 5] = [
    (
        "db.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/static/db.js"),
    ),
    (
        "uuid-chips.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/static/uuid-chips.js"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/static/app.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../web/static/style.css"),
    ),
    (
        "demo.html",
        "text/html; charset=utf-8",
        include_str!("../web/static/demo.html"),
    ),
];

const INDEX: &str = include_str!("../web/index.html");
const DATABASE_PAGE: &str = include_str!("../web/db.html");

/// The OpenAPI 3.1 document of the API.
pub const OPENAPI: &str = include_str!("../api/openapi.json");

fn page(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// `GET /`: the batch generator page.
pub async fn index() -> Response {
    page("text/html; charset=utf-8", INDEX)
}

/// `GET /db`: the Database view (its API answers only with `--db`).
pub async fn database_page() -> Response {
    page("text/html; charset=utf-8", DATABASE_PAGE)
}

/// `GET /static/{file}`.
pub async fn file(Path(name): Path<String>) -> Result<Response, ApiError> {
    FILES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, content_type, body)| page(content_type, body))
        .ok_or_else(|| {
            let names: Vec<&str> = FILES.iter().map(|(n, _, _)| *n).collect();
            ApiError::with_status(
                StatusCode::NOT_FOUND,
                "file",
                name,
                format!("one of {}", names.join(", ")),
            )
        })
}

/// `GET /api/openapi.json`.
pub async fn openapi() -> Response {
    page("application/json", OPENAPI)
}

//! The `/api/v1` handlers. Every parameter is checked before anything is
//! generated or stored; every refusal is an [`ApiError`].

use crate::error::ApiError;
use crate::names::check_name;
use crate::AppState;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;
use uuidforge::batch::{BatchSource, BatchSpec};
use uuidforge::convert::{convert as convert_value, Target};
use uuidforge::fmt::Format;
use uuidforge::generator::{GeneratorConfig, PROFILES};
use uuidforge::inspect::{value_json, Inspector};
use uuidforge::layout::V7Layout;
use uuidforge::parser::{parse_value, Value};

/// How a batch of UUIDs is written, chosen by `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `{"uuids":[…]}`
    Json,
    /// One value per line.
    Text,
    /// One `{"uuid":…}` object per line.
    Ndjson,
}

impl Encoding {
    const fn content_type(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Text => "text/plain; charset=utf-8",
            Encoding::Ndjson => "application/x-ndjson",
        }
    }

    /// The first media type of `Accept` this API can write (parameters and
    /// quality factors aside); JSON when the header is missing.
    pub fn negotiate(accept: Option<&str>) -> Result<Encoding, ApiError> {
        let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
            return Ok(Encoding::Json);
        };
        for item in accept.split(',') {
            let media = item.split(';').next().unwrap_or("").trim();
            match media.to_ascii_lowercase().as_str() {
                "application/json" | "application/*" | "*/*" => return Ok(Encoding::Json),
                "text/plain" | "text/*" => return Ok(Encoding::Text),
                "application/x-ndjson" | "application/jsonl" | "application/ndjson" => {
                    return Ok(Encoding::Ndjson)
                }
                _ => {}
            }
        }
        Err(ApiError::with_status(
            StatusCode::NOT_ACCEPTABLE,
            "Accept",
            accept,
            "application/json, text/plain or application/x-ndjson",
        ))
    }

    fn open(self, out: &mut Vec<u8>) {
        if self == Encoding::Json {
            out.extend_from_slice(b"{\"uuids\":[");
        }
    }

    fn item(self, first: bool, text: &[u8], out: &mut Vec<u8>) {
        match self {
            Encoding::Json => {
                if !first {
                    out.push(b',');
                }
                out.push(b'"');
                out.extend_from_slice(text);
                out.push(b'"');
            }
            Encoding::Text => {
                out.extend_from_slice(text);
                out.push(b'\n');
            }
            Encoding::Ndjson => {
                out.extend_from_slice(b"{\"uuid\":\"");
                out.extend_from_slice(text);
                out.extend_from_slice(b"\"}\n");
            }
        }
    }

    fn close(self, out: &mut Vec<u8>) {
        if self == Encoding::Json {
            out.extend_from_slice(b"]}");
        }
    }
}

/// Query parameters of `GET /api/v1/uuids`.
const UUIDS_PARAMS: [&str; 7] = [
    "version", "count", "format", "profile", "shift", "at", "key",
];

/// Splits a query string into its parameters, refusing unknown and
/// repeated ones (a typo must not silently give defaults).
pub(crate) fn query_params<'a>(
    query: Option<&str>,
    known: &[&'a str],
) -> Result<Vec<(&'a str, String)>, ApiError> {
    let mut found: Vec<(&'a str, String)> = Vec::new();
    let Some(query) = query else {
        return Ok(found);
    };
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        let Some(name) = known.iter().find(|k| **k == key) else {
            return Err(ApiError::bad(
                "query",
                key,
                format!("parameters among {}", known.join(", ")),
            ));
        };
        if found.iter().any(|(k, _)| k == name) {
            return Err(ApiError::bad(*name, value, "the parameter given once"));
        }
        found.push((name, value.into_owned()));
    }
    Ok(found)
}

pub(crate) fn param<'p>(params: &'p [(&str, String)], name: &str) -> Option<&'p str> {
    params
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.as_str())
}

/// Values generated and encoded per step of a streamed response.
const CHUNK: usize = 4096;

/// A batch being written: generates the next chunk on demand, so a large
/// response never sits whole in memory.
struct BatchWriter {
    generated: prometheus::IntCounter,
    source: BatchSource,
    format: Format,
    encoding: Encoding,
    left: u64,
    started: bool,
    ids: Vec<Uuid>,
}

impl BatchWriter {
    /// The next piece of the body, or `None` at the end.
    fn next_chunk(&mut self) -> Option<Result<Bytes, uuidforge::generator::GenError>> {
        if self.left == 0 && self.started {
            return None;
        }
        let n = self.left.min(CHUNK as u64) as usize;
        let mut out = Vec::with_capacity(n * 48 + 16);
        if !self.started {
            self.encoding.open(&mut out);
        }
        self.ids.resize(n, Uuid::nil());
        if let Err(e) = self.source.fill(&mut self.ids[..n]) {
            return Some(Err(e));
        }
        self.generated.inc_by(n as u64);
        let mut text = Vec::with_capacity(48);
        for (i, id) in self.ids[..n].iter().enumerate() {
            text.clear();
            self.format.write(id, &mut text);
            self.encoding.item(!self.started && i == 0, &text, &mut out);
        }
        self.started = true;
        self.left -= n as u64;
        if self.left == 0 {
            self.encoding.close(&mut out);
        }
        Some(Ok(Bytes::from(out)))
    }
}

/// `GET /api/v1/uuids`: a batch of new UUIDs (D4).
pub async fn uuids(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let params = query_params(query.as_deref(), &UUIDS_PARAMS)?;
    let accept = headers
        .get(header::ACCEPT)
        .map(|v| v.to_str().unwrap_or("(not text)"));
    let encoding = Encoding::negotiate(accept)?;
    let count = match param(&params, "count") {
        None => 1,
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=app.config.max_count).contains(n))
            .ok_or_else(|| {
                ApiError::bad(
                    "count",
                    text,
                    format!("an integer from 1 to {}", app.config.max_count),
                )
            })?,
    };
    let format = match param(&params, "format") {
        None => Format::Canonical,
        Some(text) => Format::from_name(text)
            .filter(|f| *f != Format::Binary)
            .ok_or_else(|| {
                ApiError::bad(
                    "format",
                    text,
                    "canonical, simple, braced, urn, base32 or base32-check",
                )
            })?,
    };
    if let Some(key) = param(&params, "key") {
        return keyed_uuid(&app, &params, key, format, encoding);
    }
    let spec = BatchSpec::parse(
        param(&params, "version"),
        param(&params, "profile"),
        param(&params, "shift"),
        param(&params, "at"),
    )
    .map_err(ApiError::from_field)?;
    let source = spec.process_wide_source().map_err(ApiError::from_field)?;
    let profile = if spec.version == 7 {
        spec.config.name.as_str()
    } else {
        "none"
    };
    let mut writer = BatchWriter {
        generated: app.metrics.generated(spec.version, profile),
        source,
        format,
        encoding,
        left: count,
        started: false,
        ids: Vec::new(),
    };
    // The first chunk is made before the status is sent, so a generator
    // that refuses (a backfill at the end of time) is still a clean error.
    let first = match writer.next_chunk() {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => return Err(generation_error(&spec, e)),
        None => Bytes::new(),
    };
    let body = if writer.left == 0 {
        Body::from(first)
    } else {
        let rest = futures_util::stream::unfold(writer, |mut w| async move {
            // Generation is CPU work of a few hundred microseconds per
            // chunk: fine between awaits, and it keeps the stream's
            // back-pressure (a slow reader holds one chunk, not the batch).
            let next = w.next_chunk()?;
            Some((next.map_err(std::io::Error::other), w))
        });
        let head = futures_util::stream::once(async move { Ok::<_, std::io::Error>(first) });
        Body::from_stream(futures_util::StreamExt::chain(head, rest))
    };
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(encoding.content_type()),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response())
}

/// `GET /api/v1/uuids?at=T&key=K`: the one UUIDv7 of a time and a key (E8),
/// the same as SQL `uuidv7_from(at, key)` and `uuidforge gen --at T --key K`.
/// The longest `key` of `GET /api/v1/uuids` (the OpenAPI document's
/// `maxLength`).
pub const MAX_KEY_CHARS: usize = 1024;

fn keyed_uuid(
    app: &AppState,
    params: &[(&str, String)],
    key: &str,
    format: Format,
    encoding: Encoding,
) -> Result<Response, ApiError> {
    if key.chars().count() > MAX_KEY_CHARS {
        return Err(ApiError::bad(
            "key",
            key,
            format!("a key of at most {MAX_KEY_CHARS} characters"),
        ));
    }
    for other in ["profile", "shift"] {
        if let Some(v) = param(params, other) {
            return Err(ApiError::bad(
                other,
                v,
                "no profile or shift with key: a key makes the one UUID of (at, key)",
            ));
        }
    }
    if let Some(v) = param(params, "count").filter(|v| *v != "1") {
        return Err(ApiError::bad(
            "count",
            v,
            "1: a key makes the one UUID of (at, key)",
        ));
    }
    if let Some(v) = param(params, "version").filter(|v| *v != "7") {
        return Err(ApiError::bad("version", v, "7: keyed UUIDs are UUIDv7"));
    }
    let at = match param(params, "at") {
        None => None,
        Some(t) => Some(
            uuidforge::batch::parse_time_ms(t)
                .map_err(|e| ApiError::bad("at", t, e.to_string()))?,
        ),
    };
    let id = uuidforge::batch::keyed_v7(at, key.as_bytes()).map_err(ApiError::from_field)?;
    app.metrics.generated(7, "keyed").inc();
    let mut out = Vec::with_capacity(64);
    let mut text = Vec::with_capacity(48);
    format.write(&id, &mut text);
    encoding.open(&mut out);
    encoding.item(true, &text, &mut out);
    encoding.close(&mut out);
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(encoding.content_type()),
        )],
        out,
    )
        .into_response())
}

/// Body of `POST /api/v1/hide` and `/api/v1/reveal`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HideRequest {
    values: Vec<String>,
}

async fn hide_or_reveal(
    app: AppState,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
    hide: bool,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Some(key) = app.config.hide_key.clone() else {
        return Err(ApiError::with_status(
            StatusCode::NOT_FOUND,
            "path",
            if hide {
                "/api/v1/hide"
            } else {
                "/api/v1/reveal"
            },
            "a server started with --hide-key-file (this one has no key)",
        ));
    };
    let request: HideRequest = json_body(&headers, body, r#"{"values": ["<uuid>", …]}"#)?;
    check_batch(&app, &request.values)?;
    let mut out = Vec::with_capacity(request.values.len());
    for (i, text) in request.values.iter().enumerate() {
        let Value::Uuid(u, _) = parse_item(i, text)? else {
            return Err(ApiError::bad(
                format!("values[{i}]"),
                text,
                "a UUID (a UUID_192 cannot be hidden)",
            ));
        };
        let result = if hide {
            key.0.hide(&u)
        } else {
            key.0.reveal(&u)
        };
        let v = result.map_err(|e| ApiError::bad(format!("values[{i}]"), text, e.expected))?;
        out.push(uuidforge::fmt::to_canonical_string(&v));
    }
    Ok(Json(json!({ "values": out })))
}

/// `POST /api/v1/hide`: the v4-shaped outside form of each UUIDv7 under the
/// server's key (E10).
pub async fn hide(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    hide_or_reveal(app, headers, body, true).await
}

/// `POST /api/v1/reveal`: the UUIDv7 behind each outside form.
pub async fn reveal(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    hide_or_reveal(app, headers, body, false).await
}

/// A generator that refused the first chunk: the request's time settings
/// when it had some (400), else the server's clock (503).
fn generation_error(spec: &BatchSpec, e: uuidforge::generator::GenError) -> ApiError {
    let expected = "a request whose values fit the generator's time range and policies";
    match (spec.at_unix_ms, spec.shift_ms) {
        (Some(_), _) => ApiError::bad("at", e.to_string(), expected),
        (None, Some(_)) => ApiError::bad("shift", e.to_string(), expected),
        (None, None) => ApiError::with_status(
            StatusCode::SERVICE_UNAVAILABLE,
            "clock",
            e.to_string(),
            "a system clock between 1970 and 10889 AD",
        ),
    }
}

/// Reads a JSON body, the same way on every route that takes one: its
/// `Content-Type` must say JSON (415), and every failure is an
/// [`ApiError`] naming the body (too large: 413).
fn json_body<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    shape: &str,
) -> Result<T, ApiError> {
    crate::guard::require_json(headers)?;
    let bytes = body.map_err(|rejection| {
        ApiError::with_status(
            rejection.status(),
            "body",
            "(not read)",
            rejection.body_text(),
        )
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad(
            "body",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)]),
            format!("a JSON object {shape} ({e})"),
        )
    })
}

/// Body of `POST /api/v1/inspect`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InspectRequest {
    values: Vec<String>,
    layout: Option<String>,
}

fn check_batch(app: &AppState, values: &[String]) -> Result<(), ApiError> {
    if values.is_empty() || values.len() > app.config.max_batch {
        return Err(ApiError::bad(
            "values",
            format!("{} values", values.len()),
            format!("1 to {} values", app.config.max_batch),
        ));
    }
    Ok(())
}

fn parse_item(i: usize, text: &str) -> Result<Value, ApiError> {
    parse_value(text.as_bytes())
        .map_err(|e| ApiError::bad(format!("values[{i}]"), text, e.to_string()))
}

/// `POST /api/v1/inspect`: everything each value says about itself, read
/// in sequence so v7 layouts are guessed from their neighbours.
pub async fn inspect(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let request: InspectRequest = json_body(
        &headers,
        body,
        r#"{"values": ["<uuid>", …], "layout": "<layout>"?}"#,
    )?;
    check_batch(&app, &request.values)?;
    let layout = match &request.layout {
        None => None,
        Some(name) => Some(V7Layout::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = V7Layout::ALL.iter().map(|l| l.name()).collect();
            ApiError::bad("layout", name, format!("one of {}", names.join(", ")))
        })?),
    };
    let values = request
        .values
        .iter()
        .enumerate()
        .map(|(i, text)| parse_item(i, text))
        .collect::<Result<Vec<_>, _>>()?;
    let mut inspector = Inspector::default();
    let results: Vec<serde_json::Value> = values
        .iter()
        .zip(&request.values)
        .map(|(value, text)| value_json(text, *value, &inspector.next(&value.uuid()), layout))
        .collect();
    Ok(Json(json!({ "results": results })))
}

/// Body of `POST /api/v1/convert`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConvertRequest {
    values: Vec<String>,
    to: String,
    #[serde(default)]
    upper: bool,
    #[serde(default)]
    uuid_part: bool,
}

/// `POST /api/v1/convert`: every value in the target form.
pub async fn convert(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let request: ConvertRequest = json_body(
        &headers,
        body,
        r#"{"values": ["<uuid>", …], "to": "<form>", "upper": bool?, "uuid_part": bool?}"#,
    )?;
    let target = Target::from_name(&request.to)
        .filter(|t| t.is_text())
        .ok_or_else(|| {
            let names: Vec<&str> = Target::names()
                .into_iter()
                .filter(|n| *n != "binary")
                .collect();
            ApiError::bad("to", &request.to, format!("one of {}", names.join(", ")))
        })?;
    check_batch(&app, &request.values)?;
    let mut out = Vec::with_capacity(request.values.len());
    let mut buf = Vec::with_capacity(64);
    for (i, text) in request.values.iter().enumerate() {
        let value = parse_item(i, text)?;
        buf.clear();
        convert_value(value, target, request.uuid_part, request.upper, &mut buf)
            .map_err(|e| ApiError::bad(format!("values[{i}]"), text, e.to_string()))?;
        out.push(String::from_utf8(buf.clone()).expect("text targets are ASCII"));
    }
    Ok(Json(json!({ "values": out })))
}

/// `GET /api/v1/profiles`: the built-in v7 generator profiles.
pub async fn profiles() -> Json<serde_json::Value> {
    let list: Vec<serde_json::Value> = PROFILES
        .iter()
        .map(|name| {
            let config = GeneratorConfig::profile(name).expect("built-in");
            json!({
                "name": name,
                "random_bits": config.random_bits(),
                "diagram": config.diagram(),
                "config": serde_json::to_value(&config).expect("a config serialises"),
            })
        })
        .collect();
    Json(json!({ "profiles": list }))
}

/// A path segment as text: one that does not decode to UTF-8 (`%ff`) is
/// refused with the JSON error body, naming the segment.
pub struct Segment(pub String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Segment {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Segment, ApiError> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(text)) => Ok(Segment(text)),
            Err(rejection) => {
                let raw = parts.uri.path().rsplit('/').next().unwrap_or_default();
                Err(ApiError::bad(
                    "path",
                    raw,
                    format!("a path segment of UTF-8 text ({})", rejection.body_text()),
                ))
            }
        }
    }
}

fn path_uuid(field: &str, text: &str) -> Result<Uuid, ApiError> {
    uuidforge::parser::parse(text).map_err(|e| ApiError::bad(field, text, e.to_string()))
}

/// `GET /api/v1/identicon/{uuid}.svg` (D10).
pub async fn identicon(Segment(file): Segment) -> Result<Response, ApiError> {
    let text = file
        .strip_suffix(".svg")
        .ok_or_else(|| ApiError::bad("file", &file, "<uuid>.svg"))?;
    let uuid = path_uuid("uuid", text)?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        crate::identicon::svg(&uuid),
    )
        .into_response())
}

fn store_error(e: crate::names::StoreError) -> ApiError {
    ApiError::with_status(
        StatusCode::SERVICE_UNAVAILABLE,
        "names",
        e.to_string(),
        "a reachable names store",
    )
}

fn name_json(uuid: &Uuid, name: &str) -> serde_json::Value {
    json!({ "uuid": uuidforge::fmt::to_canonical_string(uuid), "name": name })
}

fn no_name(uuid: &Uuid) -> ApiError {
    ApiError::with_status(
        StatusCode::NOT_FOUND,
        "uuid",
        uuidforge::fmt::to_canonical_string(uuid),
        "a UUID with a registered name",
    )
}

/// `GET /api/v1/names/{uuid}` (D11).
pub async fn get_name(
    State(app): State<AppState>,
    Segment(text): Segment,
) -> Result<Json<serde_json::Value>, ApiError> {
    let uuid = path_uuid("uuid", &text)?;
    match app.names.get(uuid).await.map_err(store_error)? {
        Some(name) => Ok(Json(name_json(&uuid, &name))),
        None => Err(no_name(&uuid)),
    }
}

/// Most UUIDs one `GET /api/v1/names?uuids=` asks about.
pub const MAX_NAME_LOOKUP: usize = 1000;

/// `GET /api/v1/names?uuids=a,b,…`: the names of those that have one
/// (always 200, so pages that show many UUIDs ask once, and log no 404s).
pub async fn lookup_names(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let params = query_params(query.as_deref(), &["uuids"])?;
    let list = param(&params, "uuids").unwrap_or("");
    let items: Vec<&str> = list.split(',').filter(|t| !t.trim().is_empty()).collect();
    if items.is_empty() || items.len() > MAX_NAME_LOOKUP {
        return Err(ApiError::bad(
            "uuids",
            list,
            format!("1 to {MAX_NAME_LOOKUP} comma-separated UUIDs"),
        ));
    }
    let uuids = items
        .iter()
        .enumerate()
        .map(|(i, t)| path_uuid(&format!("uuids[{i}]"), t.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    let found = app.names.get_many(uuids).await.map_err(store_error)?;
    let names: serde_json::Map<String, serde_json::Value> = found
        .into_iter()
        .map(|(u, n)| (uuidforge::fmt::to_canonical_string(&u), json!(n)))
        .collect();
    Ok(Json(json!({ "names": names })))
}

/// Body of `PUT /api/v1/names/{uuid}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameRequest {
    name: String,
}

/// `PUT /api/v1/names/{uuid}`: 201 when new, 200 when replaced.
pub async fn put_name(
    State(app): State<AppState>,
    Segment(text): Segment,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let uuid = path_uuid("uuid", &text)?;
    let request: NameRequest = json_body(&headers, body, r#"{"name": "<name>"}"#)?;
    check_name(&request.name).map_err(|e| ApiError::bad("name", &request.name, e.to_string()))?;
    let existed = app
        .names
        .put(uuid, request.name.clone())
        .await
        .map_err(store_error)?;
    let status = if existed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((status, Json(name_json(&uuid, &request.name))).into_response())
}

/// `DELETE /api/v1/names/{uuid}`: 204, or 404 when it had no name.
pub async fn delete_name(
    State(app): State<AppState>,
    Segment(text): Segment,
) -> Result<StatusCode, ApiError> {
    let uuid = path_uuid("uuid", &text)?;
    match app.names.delete(uuid).await.map_err(store_error)? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(no_name(&uuid)),
    }
}

/// `GET /healthz`.
pub async fn healthz(State(app): State<AppState>) -> Json<serde_json::Value> {
    let store = match &app.names {
        crate::names::NameStore::File(_) => "file",
        crate::names::NameStore::Postgres(_) => "postgres",
    };
    Json(json!({
        "status": "ok",
        "names_store": store,
        "database": app.database.is_some(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_picks_the_first_known_type() {
        assert_eq!(Encoding::negotiate(None), Ok(Encoding::Json));
        assert_eq!(Encoding::negotiate(Some("text/plain")), Ok(Encoding::Text));
        assert_eq!(
            Encoding::negotiate(Some("image/png, application/x-ndjson;q=0.9")),
            Ok(Encoding::Ndjson)
        );
        assert_eq!(Encoding::negotiate(Some("*/*")), Ok(Encoding::Json));
        let e = Encoding::negotiate(Some("image/png")).unwrap_err();
        assert_eq!(e.status, StatusCode::NOT_ACCEPTABLE);
        assert_eq!(e.field, "Accept");
    }

    #[test]
    fn unknown_and_repeated_parameters_are_refused() {
        assert_eq!(
            query_params(Some("count=2&count=3"), &UUIDS_PARAMS)
                .unwrap_err()
                .field,
            "count"
        );
        assert_eq!(
            query_params(Some("cuont=2"), &UUIDS_PARAMS)
                .unwrap_err()
                .value,
            "cuont"
        );
        let p = query_params(Some("shift=-1h&format=urn"), &UUIDS_PARAMS).unwrap();
        assert_eq!(param(&p, "shift"), Some("-1h"));
    }
}

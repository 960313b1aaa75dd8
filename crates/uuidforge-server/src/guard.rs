//! What stands between a browser and the server's data.
//!
//! Browsers reach loopback, so a page from any site can send requests here,
//! and a name the attacker controls can be made to resolve to 127.0.0.1
//! (DNS rebinding). Three checks answer that:
//! - [`check_host`], on every route: the `Host` header names this server
//!   (an IP address, `localhost` or a `*.localhost` name, or a name given
//!   with `--allow-host`); a rebound name is refused before any handler.
//! - [`protect`], on every route that reads stored data or uses a key (names,
//!   the Database view, hide and reveal): a request sent by a page (it has
//!   an `Origin`) must come from this server's own page or an origin given
//!   with `--allow-origin`, and every request carries the server's token in
//!   `Authorization: Bearer TOKEN`, compared in constant time. A token in
//!   the query string is not read (it would end up in logs and history).
//! - those routes answer CORS only for the `--allow-origin` origins, never
//!   `*` (see [`crate::router`]).

use crate::error::ApiError;
use crate::AppState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// A token for a server started without one: 32 bytes from the operating
/// system's CSPRNG, as 64 hexadecimal digits.
pub fn new_token() -> String {
    use rand_core::TryRngCore;
    let mut bytes = [0u8; 32];
    rand_core::OsRng
        .try_fill_bytes(&mut bytes)
        .expect("the operating system's random source failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The host part of a `Host` header value (`name`, `name:port`, `[v6]:port`),
/// lower case.
fn host_name(value: &str) -> String {
    let value = value.trim();
    let name = if let Some(rest) = value.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        value.rsplit_once(':').map_or(value, |(name, _)| name)
    };
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether a `Host` header names this server: an IP address (which no DNS
/// answer can rebind), `localhost` or a name under it (browsers resolve
/// those to loopback themselves), or one of `allowed`.
pub fn host_allowed(value: &str, allowed: &[String]) -> bool {
    let name = host_name(value);
    !name.is_empty()
        && (name.parse::<std::net::IpAddr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || allowed.iter().any(|a| a.eq_ignore_ascii_case(&name)))
}

/// Middleware of every route: refuses a `Host` that does not name this
/// server (403).
pub async fn check_host(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    match host {
        Some(h) if host_allowed(&h, &app.config.allowed_hosts) => next.run(request).await,
        other => ApiError::with_status(
            StatusCode::FORBIDDEN,
            "Host",
            other.unwrap_or_else(|| "(none)".into()),
            "this server's address, localhost, or a name given with --allow-host",
        )
        .into_response(),
    }
}

/// Whether `origin` may use the protected routes: this server's own page
/// (the origin of the `Host` the request was sent to) or an `--allow-origin`.
fn origin_allowed(origin: &str, headers: &HeaderMap, allowed: &[String]) -> bool {
    let own = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|host| origin.eq_ignore_ascii_case(&format!("http://{host}")));
    own || allowed
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))
}

/// Middleware of the routes that read stored data or use a key: an allowed
/// `Origin` when there is one (403), then the token (401).
pub async fn protect(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        if !origin_allowed(&origin, headers, &app.config.allowed_origins) {
            return ApiError::with_status(
                StatusCode::FORBIDDEN,
                "Origin",
                origin,
                "this server's own page, or an origin given with --allow-origin",
            )
            .into_response();
        }
    }
    let Some(token) = app.config.token.as_deref() else {
        // A Config without a token is refused by Config::check; the routes
        // stay closed rather than open should one get here.
        return unauthorized(None);
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::as_bytes);
    if given.is_some_and(|g| bool::from(subtle::ConstantTimeEq::ct_eq(g, token.as_bytes()))) {
        return next.run(request).await;
    }
    unauthorized(given)
}

fn unauthorized(given: Option<&[u8]>) -> Response {
    let mut response = ApiError::with_status(
        StatusCode::UNAUTHORIZED,
        "authorization",
        if given.is_some() {
            "(wrong token)"
        } else {
            "(none)"
        },
        "Authorization: Bearer TOKEN, the token the server was started with (--token, or the one it printed at start)",
    )
    .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"uuidforge\""),
    );
    response
}

/// Refuses a body that is not declared JSON (415): a page may send
/// `text/plain` across origins without asking first, JSON it may not.
pub fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if media.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(ApiError::with_status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type",
            if content_type.is_empty() {
                "(none)"
            } else {
                content_type
            },
            "application/json",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_that_name_this_server() {
        let extra = vec!["forge.example".to_string()];
        for ok in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "[::1]:8080",
            "localhost:8080",
            "LOCALHOST",
            "app.localhost:80",
            "10.1.2.3:8080",
            "forge.example:8080",
            "localhost.:8080",
        ] {
            assert!(host_allowed(ok, &extra), "{ok}");
        }
        for refused in [
            "attacker.example:8080",
            "attacker.example",
            "localhost.attacker.example",
            "127.0.0.1.nip.io:8080",
            "",
            ":8080",
        ] {
            assert!(!host_allowed(refused, &extra), "{refused}");
        }
    }

    #[test]
    fn tokens_are_64_hex_digits_and_differ() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}

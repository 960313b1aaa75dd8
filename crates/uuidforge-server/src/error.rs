//! The API's error body: every refusal names the field, the offending value
//! and what was expected, as `{"error":{"field":…,"value":…,"expected":…}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// A refused request (4xx) or a failure of the server's own (5xx), with its
/// JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// The parameter, body field or path segment at fault.
    pub field: String,
    /// The offending value, as text.
    pub value: String,
    /// What the field accepts.
    pub expected: String,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Detail<'a>,
}

#[derive(Serialize)]
struct Detail<'a> {
    field: &'a str,
    value: &'a str,
    expected: &'a str,
}

/// Values quoted in errors are cut to this many characters, so a huge bad
/// input does not come back whole.
const MAX_QUOTED: usize = 200;

impl ApiError {
    /// A 400 for `field`.
    pub fn bad(
        field: impl Into<String>,
        value: impl Into<String>,
        expected: impl Into<String>,
    ) -> Self {
        ApiError::with_status(StatusCode::BAD_REQUEST, field, value, expected)
    }

    /// An error with another status.
    pub fn with_status(
        status: StatusCode,
        field: impl Into<String>,
        value: impl Into<String>,
        expected: impl Into<String>,
    ) -> Self {
        let mut value = value.into();
        if value.chars().count() > MAX_QUOTED {
            value = value.chars().take(MAX_QUOTED).collect::<String>() + "…";
        }
        ApiError {
            status,
            field: field.into(),
            value,
            expected: expected.into(),
        }
    }

    /// A library [`uuidforge::FieldError`] as a 400.
    pub fn from_field(e: uuidforge::FieldError) -> Self {
        ApiError::bad(e.field, e.value, e.expected)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: Detail {
                field: &self.field,
                value: &self.value,
                expected: &self.expected,
            },
        };
        (self.status, Json(body)).into_response()
    }
}

/// Why the server did not start, or stopped: the setting at fault and
/// what it expected, or what failed.
#[derive(Debug)]
pub enum StartError {
    /// A setting is missing.
    Missing {
        /// The option.
        setting: &'static str,
        /// Why it is needed.
        why: String,
    },
    /// A setting has a value the server cannot run with.
    Invalid {
        /// The option.
        setting: &'static str,
        /// The value given (none where it must not be shown: a token).
        value: Option<String>,
        /// What was wrong, or what it expects.
        problem: String,
    },
    /// The runtime or the listener failed.
    Io {
        /// What was being done.
        what: &'static str,
        /// The failure.
        error: std::io::Error,
    },
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Missing { setting, why } => write!(f, "missing '{setting}': {why}"),
            StartError::Invalid {
                setting,
                value: Some(value),
                problem,
            } => write!(f, "invalid value '{value}' for '{setting}': {problem}"),
            StartError::Invalid {
                setting,
                value: None,
                problem,
            } => write!(f, "invalid value for '{setting}': {problem}"),
            StartError::Io { what, error } => write!(f, "{what}: {error}"),
        }
    }
}

impl std::error::Error for StartError {}

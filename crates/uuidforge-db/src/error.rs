//! What went wrong in a database tool, typed: callers decide by the
//! [`ErrorKind`] (an exit code, an HTTP status, a retry), never by reading
//! a message.

use serde::Serialize;

/// What kind of failure an error is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request names something the database does not have (a table,
    /// a column, a merge).
    NotFound,
    /// A value the caller gave is not one the operation takes.
    Invalid,
    /// The database holds a shape the operation does not change; refused
    /// before anything ran.
    Refused,
    /// The database changed since the plan was made; nothing was changed.
    SchemaChanged,
    /// A check after the change failed; the change was rolled back (or, in
    /// batches, stopped before the next step).
    VerificationFailed {
        /// The failed checks, each `name: count`.
        failed: Vec<String>,
    },
    /// Rows changed since the tool recorded them; nothing was changed.
    Conflict,
    /// The server could not be reached or the connection broke.
    Connection,
    /// The server refused a statement.
    Server {
        /// Its SQLSTATE.
        sqlstate: String,
    },
    /// A program outside the server (`pg_dump`, `pg_restore`) or a file
    /// failed.
    Tool,
    /// An answer the tool could not read (a bug, or an unexpected server).
    Unreadable,
    /// Another process runs a change of the same tables now; nothing was
    /// changed (try again once it is done).
    Busy,
}

/// A failure of a database tool: its kind, what was being done and the
/// message.
///
/// ```
/// use uuidforge_db::error::{DbError, ErrorKind};
/// let e = DbError::not_found("table", "no table public.orders");
/// assert_eq!(e.kind, ErrorKind::NotFound);
/// assert_eq!(e.http_status(), 400);
/// assert_eq!(e.to_string(), "table: no table public.orders");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// What was being done (`connect`, `scan public.orders`, …) or the
    /// argument at fault.
    pub context: String,
    /// The server's, the driver's or the tool's message.
    pub message: String,
    /// What to do about it, when there is something (a change in batches
    /// under way goes on with `--resume`).
    pub hint: Option<String>,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A message that already names its context says it once.
        let message = self
            .message
            .strip_prefix(self.context.as_str())
            .and_then(|m| m.strip_prefix(": "))
            .unwrap_or(&self.message);
        write!(f, "{}: {message}", self.context)?;
        if let ErrorKind::Server { sqlstate } = &self.kind {
            write!(f, " (SQLSTATE {sqlstate})")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n({hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for DbError {}

impl DbError {
    fn of(kind: ErrorKind, context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError {
            kind,
            context: context.into(),
            message: message.into(),
            hint: None,
        }
    }

    /// Another process runs a change of the same tables now.
    pub fn busy(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Busy, context, message)
    }

    /// The same error, with what to do about it.
    pub fn with_hint(self, hint: impl Into<String>) -> DbError {
        DbError {
            hint: Some(hint.into()),
            ..self
        }
    }

    /// The request names something the database does not have.
    pub fn not_found(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::NotFound, context, message)
    }

    /// A value the caller gave is not one the operation takes.
    pub fn invalid(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Invalid, context, message)
    }

    /// A shape the operation does not change, refused before anything ran.
    pub fn refused(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Refused, context, message)
    }

    /// The database changed since the plan was printed.
    pub fn schema_changed(operation: impl Into<String>) -> DbError {
        DbError::of(
            ErrorKind::SchemaChanged,
            operation,
            "the database changed since the plan was printed (nothing was changed: plan again)",
        )
    }

    /// Checks failed after the change: `failed` are the failed checks.
    pub fn verification_failed(context: impl Into<String>, failed: Vec<String>) -> DbError {
        let message = failed.join("; ");
        DbError::of(ErrorKind::VerificationFailed { failed }, context, message)
    }

    /// Rows changed since the tool recorded them.
    pub fn conflict(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Conflict, context, message)
    }

    /// The server could not be reached or the connection broke.
    pub fn connection(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Connection, context, message)
    }

    /// The server refused a statement with `sqlstate`.
    pub fn server(
        context: impl Into<String>,
        message: impl Into<String>,
        sqlstate: impl Into<String>,
    ) -> DbError {
        let sqlstate = sqlstate.into();
        DbError::of(ErrorKind::Server { sqlstate }, context, message)
    }

    /// A program outside the server or a file failed.
    pub fn tool(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Tool, context, message)
    }

    /// An answer the tool could not read.
    pub fn unreadable(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Unreadable, context, message)
    }

    /// The same error, of the same kind, inside `context` (the step that
    /// read what failed): `context: inner context: message`.
    pub fn within(self, context: impl Into<String>) -> DbError {
        DbError {
            kind: self.kind,
            context: context.into(),
            message: format!("{}: {}", self.context, self.message),
            hint: self.hint,
        }
    }

    /// The server's SQLSTATE, when the server refused a statement.
    pub fn sqlstate(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Server { sqlstate } => Some(sqlstate),
            _ => None,
        }
    }

    /// Whether the caller can fix it by asking differently: a name the
    /// database lacks, a bad value, a refused shape, or the server's own
    /// `invalid_parameter_value` (22023) for a value passed through.
    pub fn is_caller_mistake(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::NotFound | ErrorKind::Invalid | ErrorKind::Refused
        ) || self.sqlstate() == Some("22023")
    }

    /// The role lacks a privilege (SQLSTATE 42501).
    pub fn is_permission_denied(&self) -> bool {
        self.sqlstate() == Some("42501")
    }

    /// The HTTP status a route answers it with: the caller's mistake 400,
    /// a privilege the role lacks 403, a database that moved under the
    /// request 409, a database that did not answer 502, one busy or short
    /// of resources (try again) 503, a statement past its time 504, and
    /// anything else the server or a tool refused 500 — the SQLSTATE named
    /// in the message, never a bare gateway error for what the server said.
    pub fn http_status(&self) -> u16 {
        match &self.kind {
            _ if self.is_caller_mistake() => 400,
            _ if self.is_permission_denied() => 403,
            ErrorKind::SchemaChanged | ErrorKind::Conflict | ErrorKind::Busy => 409,
            ErrorKind::Connection => 502,
            ErrorKind::Server { sqlstate } => match sqlstate.as_str() {
                "57014" => 504,
                s if s.starts_with("08") => 502,
                s if s.starts_with("53")
                    || s.starts_with("57P")
                    || matches!(s, "55P03" | "40001" | "40P01") =>
                {
                    503
                }
                _ => 500,
            },
            _ => 500,
        }
    }

    /// The command line's exit code: 3 when another process runs a change
    /// of the same tables (nothing was tried: try again later), else 2,
    /// like every failure of a command as a whole (1 is kept for "ran, and
    /// found nothing" or "not valid").
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            ErrorKind::Busy => 3,
            _ => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_statuses_in_one_place() {
        assert_eq!(DbError::invalid("batch-size", "0").http_status(), 400);
        assert_eq!(DbError::refused("table", "a view").http_status(), 400);
        assert_eq!(DbError::schema_changed("rename").http_status(), 409);
        assert_eq!(DbError::conflict("unmerge", "row").http_status(), 409);
        let failed = DbError::verification_failed("verify", vec!["orphans: 3".into()]);
        assert_eq!(failed.http_status(), 500);
        assert_eq!(failed.to_string(), "verify: orphans: 3");
        let server = DbError::server("scan", "permission denied", "42501");
        assert!(server.is_permission_denied());
        assert_eq!(server.http_status(), 403);
        assert_eq!(DbError::connection("connect", "refused").http_status(), 502);
        assert_eq!(
            DbError::server("scan", "canceled", "57014").http_status(),
            504
        );
        assert_eq!(
            DbError::server("scan", "out of memory", "53200").http_status(),
            503
        );
        assert_eq!(
            DbError::server("scan", "unexpected chunk", "XX001").http_status(),
            500
        );
        assert_eq!(
            server.to_string(),
            "scan: permission denied (SQLSTATE 42501)"
        );
        assert!(DbError::server("find", "bad", "22023").is_caller_mistake());
        assert_eq!(DbError::connection("connect", "refused").exit_code(), 2);
        let busy = DbError::busy("public.t", "being run by another process (pid 7)");
        assert_eq!((busy.exit_code(), busy.http_status()), (3, 409));
        let hinted = DbError::refused("table", "under way").with_hint("complete it with --resume");
        assert_eq!(
            hinted.to_string(),
            "table: under way\n(complete it with --resume)"
        );
    }

    #[test]
    fn a_message_naming_its_context_says_it_once() {
        let e = DbError::not_found("column", "column: no column x in public.t");
        assert_eq!(e.to_string(), "column: no column x in public.t");
    }
}

//! A read-only session: one transaction with a consistent snapshot, so
//! every statement of a command sees the same database, and a write is
//! refused by the server.

use crate::connect::Settings;
use mysql_async::prelude::*;
use mysql_async::{Conn, Params};
use uuidforge_store::error::DbError;

/// The server's product and version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Server {
    /// `VERSION()`.
    pub version: String,
    /// MariaDB (else MySQL).
    pub mariadb: bool,
    /// (major, minor, patch).
    pub number: (u32, u32, u32),
}

impl Server {
    /// From `VERSION()` (`10.11.19-MariaDB-0+deb12u1`, `8.0.36`).
    ///
    /// ```
    /// let s = uuidforge_mysql_db::session::Server::from_version("10.11.4-MariaDB-1:10.11.4");
    /// assert!(s.mariadb && s.number == (10, 11, 4));
    /// ```
    pub fn from_version(version: &str) -> Server {
        let mut parts = version
            .split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().unwrap_or(0));
        let mut next = || parts.next().unwrap_or(0);
        Server {
            version: version.to_string(),
            mariadb: version.to_ascii_lowercase().contains("mariadb"),
            number: (next(), next(), next()),
        }
    }

    /// Whether its `UUID` type stores versions 6 and up unswapped (so a
    /// v7 sorts by time): MariaDB 10.10.6, 10.11.5, 11.0.3 and later.
    pub fn uuid_type_keeps_v7_order(&self) -> bool {
        let (a, b, c) = self.number;
        match (a, b) {
            (10, 10) => c >= 6,
            (10, 11) => c >= 5,
            (11, 0) => c >= 3,
            (10, _) => b > 11,
            _ => a > 10,
        }
    }
}

/// A read-only session on one server.
pub struct Session {
    conn: Conn,
    /// Where it is connected (without the password).
    pub settings: Settings,
    /// The server.
    pub server: Server,
}

/// A driver error as a [`DbError`] of `context`: the server's code and
/// SQLSTATE, or a connection failure.
pub fn error(context: &str, e: mysql_async::Error) -> DbError {
    match e {
        mysql_async::Error::Server(s) => DbError::server(
            context,
            format!("{} (error {})", s.message, s.code),
            s.state,
        ),
        other => DbError::connection(context, other.to_string()),
    }
}

impl Session {
    /// Connects and begins a read-only transaction with a consistent
    /// snapshot.
    pub async fn open(settings: &Settings) -> Result<Session, DbError> {
        let context = format!("connect to {settings}");
        let mut conn = Conn::new(settings.opts())
            .await
            .map_err(|e| error(&context, e))?;
        conn.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .await
            .map_err(|e| error(&context, e))?;
        conn.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
            .await
            .map_err(|e| error(&context, e))?;
        let version: String = conn
            .query_first("SELECT VERSION()")
            .await
            .map_err(|e| error(&context, e))?
            .unwrap_or_default();
        Ok(Session {
            conn,
            settings: settings.clone(),
            server: Server::from_version(&version),
        })
    }

    /// The rows of `sql` with `params` bound.
    pub async fn rows<T: FromRow + Send + 'static>(
        &mut self,
        context: &str,
        sql: &str,
        params: impl Into<Params> + Send,
    ) -> Result<Vec<T>, DbError> {
        self.conn
            .exec(sql, params)
            .await
            .map_err(|e| error(context, e))
    }

    /// Ends the transaction and the connection.
    pub async fn close(mut self) -> Result<(), DbError> {
        self.conn
            .query_drop("COMMIT")
            .await
            .map_err(|e| error("commit", e))?;
        self.conn
            .disconnect()
            .await
            .map_err(|e| error("disconnect", e))
    }
}

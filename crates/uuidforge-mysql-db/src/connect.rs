//! Where to connect, as MariaDB's and MySQL's clients find it: the URL
//! (`mysql://` or `mariadb://user:password@host:port/database?socket=…`),
//! then the option files' client groups (`/etc/mysql/my.cnf`, `/etc/my.cnf`,
//! `~/.my.cnf`, with `!include` and `!includedir`), then `MYSQL_HOST`,
//! `MYSQL_TCP_PORT`, `MYSQL_UNIX_PORT`, `MYSQL_PWD` and `USER`. The host
//! `localhost` means the socket, as for the clients. No message and no
//! [`Settings`]' `Display` shows the password.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use uuidforge_store::error::DbError;

/// The option file groups a client reads, in order (a later one wins).
const GROUPS: [&str; 4] = ["client", "client-server", "client-mariadb", "mysql"];

/// Where the server's socket is when nothing says (Debian's).
const DEFAULT_SOCKET: &str = "/run/mysqld/mysqld.sock";

/// A connection's settings.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// The host (`localhost`: the socket).
    pub host: String,
    /// The TCP port.
    pub port: u16,
    /// The socket, for `localhost`.
    pub socket: Option<String>,
    /// The user.
    pub user: Option<String>,
    /// The password.
    pub password: Option<String>,
    /// The database.
    pub database: Option<String>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for Settings {
    /// The URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let user = self
            .user
            .as_deref()
            .map_or(String::new(), |u| format!("{u}@"));
        let db = self.database.as_deref().unwrap_or("");
        match (&*self.host, &self.socket) {
            ("localhost", Some(s)) => write!(f, "mysql://{user}localhost/{db}?socket={s}"),
            _ => write!(f, "mysql://{user}{}:{}/{db}", self.host, self.port),
        }
    }
}

/// Whether `dsn` names a MariaDB or MySQL server (`mysql://`, `mariadb://`).
///
/// ```
/// assert!(uuidforge_mysql_db::connect::is_mysql("mariadb://me@db/shop"));
/// assert!(!uuidforge_mysql_db::connect::is_mysql("postgres://me@db/shop"));
/// ```
pub fn is_mysql(dsn: &str) -> bool {
    dsn.starts_with("mysql://") || dsn.starts_with("mariadb://")
}

impl Settings {
    /// The settings of `dsn`, completed from the option files and the
    /// environment (`env` reads a variable). Errors name `db` and what
    /// was expected, never the password.
    pub fn from_dsn(dsn: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, DbError> {
        let url = url::Url::parse(dsn).map_err(|e| {
            DbError::invalid(
                "db",
                format!(
                    "{} ({e}; expected mysql://user@host:port/database)",
                    redact(dsn)
                ),
            )
        })?;
        let decode = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        };
        let query: BTreeMap<String, String> = url.query_pairs().into_owned().collect();
        let files = option_files(env);
        let file = |key: &str| files.get(key).cloned();
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .map(str::to_string)
            .or_else(|| file("host"))
            .or_else(|| env("MYSQL_HOST"))
            .unwrap_or_else(|| "localhost".into());
        let port = match url.port() {
            Some(p) => p,
            None => match file("port").or_else(|| env("MYSQL_TCP_PORT")) {
                Some(p) => p.trim().parse().map_err(|_| {
                    DbError::invalid("db", format!("port '{p}' (expected 1 to 65535)"))
                })?,
                None => 3306,
            },
        };
        let socket = query
            .get("socket")
            .cloned()
            .or_else(|| file("socket"))
            .or_else(|| env("MYSQL_UNIX_PORT"))
            .or_else(|| Some(DEFAULT_SOCKET.to_string()));
        let user = Some(url.username())
            .filter(|u| !u.is_empty())
            .and_then(decode)
            .or_else(|| file("user"))
            .or_else(|| env("USER"));
        let password = url
            .password()
            .and_then(decode)
            .or_else(|| file("password"))
            .or_else(|| env("MYSQL_PWD"));
        let database = Some(url.path().trim_start_matches('/'))
            .filter(|d| !d.is_empty())
            .and_then(decode)
            .or_else(|| file("database"));
        Ok(Settings {
            host,
            port,
            socket,
            user,
            password,
            database,
        })
    }

    /// The driver's options.
    pub fn opts(&self) -> mysql_async::Opts {
        let builder = mysql_async::OptsBuilder::default()
            .user(self.user.clone())
            .pass(self.password.clone())
            .db_name(self.database.clone())
            .prefer_socket(false);
        let builder = if self.host == "localhost" {
            builder.socket(self.socket.clone())
        } else {
            builder
                .ip_or_hostname(self.host.clone())
                .tcp_port(self.port)
        };
        builder.into()
    }
}

/// `dsn` with its password left out.
pub fn redact(dsn: &str) -> String {
    match url::Url::parse(dsn) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("****"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "(a connection string that is not a URL)".into(),
    }
}

/// The settings of the client groups of every option file a client reads
/// (`MYSQL_HOME/my.cnf` too), a later file and group winning.
fn option_files(env: &dyn Fn(&str) -> Option<String>) -> BTreeMap<String, String> {
    let mut files = vec![
        PathBuf::from("/etc/my.cnf"),
        PathBuf::from("/etc/mysql/my.cnf"),
    ];
    if let Some(home) = env("MYSQL_HOME") {
        files.push(Path::new(&home).join("my.cnf"));
    }
    if let Some(home) = env("HOME") {
        files.push(Path::new(&home).join(".my.cnf"));
    }
    let mut out = BTreeMap::new();
    for f in files {
        read_option_file(&f, &mut out, 0);
    }
    out
}

/// Reads `path`'s client groups into `out`, following `!include` and
/// `!includedir` (`.cnf` files, in name order) up to a depth of 10.
pub fn read_option_file(path: &Path, out: &mut BTreeMap<String, String>, depth: u8) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let mut wanted = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(inc) = line.strip_prefix("!includedir") {
            if depth < 10 {
                let mut entries: Vec<PathBuf> = std::fs::read_dir(inc.trim())
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "cnf"))
                    .collect();
                entries.sort();
                for e in entries {
                    read_option_file(&e, out, depth + 1);
                }
            }
        } else if let Some(inc) = line.strip_prefix("!include") {
            if depth < 10 {
                read_option_file(Path::new(inc.trim()), out, depth + 1);
            }
        } else if let Some(group) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            wanted = GROUPS.contains(&group.trim());
        } else if wanted && !line.is_empty() && !line.starts_with('#') && !line.starts_with(';') {
            let (key, value) = line.split_once('=').unwrap_or((line, ""));
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            out.insert(key.trim().replace('-', "_"), value.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_then_the_option_files_then_the_environment() {
        let dir = std::env::temp_dir().join(format!("uf-mycnf-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("conf.d")).unwrap();
        std::fs::write(
            dir.join(".my.cnf"),
            format!(
                "[mysqld]\nport = 1\n[client]\nuser = from_file\n!includedir {}\n",
                dir.join("conf.d").display()
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("conf.d/a.cnf"),
            "[client]\npassword = \"s3cret\"\nport = 3307\n",
        )
        .unwrap();
        let home = dir.display().to_string();
        let env = |name: &str| match name {
            "HOME" => Some(home.clone()),
            "MYSQL_HOST" => Some("envhost".into()),
            "MYSQL_PWD" => Some("from-env".into()),
            _ => None,
        };
        let s = Settings::from_dsn("mysql:///shop", &env).unwrap();
        assert_eq!(
            (
                s.host.as_str(),
                s.port,
                s.user.as_deref(),
                s.password.as_deref(),
                s.database.as_deref()
            ),
            (
                "envhost",
                3307,
                Some("from_file"),
                Some("s3cret"),
                Some("shop")
            )
        );
        let s = Settings::from_dsn("mariadb://me:p%40ss@db.example:3310/x", &env).unwrap();
        assert_eq!(
            (s.user.as_deref(), s.password.as_deref(), s.port),
            (Some("me"), Some("p@ss"), 3310)
        );
        assert_eq!(s.to_string(), "mysql://me@db.example:3310/x");
        assert!(!format!("{s:?}").contains("p@ss"));
        let s = Settings::from_dsn("mysql://me@localhost/x?socket=/tmp/s.sock", &|_| None).unwrap();
        assert_eq!(s.to_string(), "mysql://me@localhost/x?socket=/tmp/s.sock");
        let e = Settings::from_dsn("mysql://me:secret@[bad/x", &|_| None).unwrap_err();
        assert!(!e.to_string().contains("secret"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

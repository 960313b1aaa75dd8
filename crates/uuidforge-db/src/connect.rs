//! Connection settings the way psql finds them: a URL or `key=value`
//! string (or a bare database name), then the `PG*` environment variables
//! for what it leaves out, then the password file (`PGPASSFILE` or
//! `~/.pgpass`).

use crate::error::DbError;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::Config;

/// The default directory of PostgreSQL's Unix socket on Debian and most
/// Linux packages (libpq's compiled-in default there).
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// Reads the settings: `dsn` (from `--db`) first, then `env` (the
/// process environment in real use; injected by tests), then the password
/// file.
pub fn config_from(
    dsn: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, DbError> {
    let text = dsn.unwrap_or("").trim();
    let mut config = if text.is_empty() {
        Config::new()
    } else if text.starts_with("postgres://")
        || text.starts_with("postgresql://")
        || text.contains('=')
    {
        crate::dsn::check(text).map_err(|e| DbError::invalid("--db", e.to_string()))?;
        Config::from_str(text).map_err(|e| {
            DbError::invalid(
                "--db",
                format!(
                    "cannot read '{}': {e} (expected postgres://user@host/db or 'host=… dbname=…')",
                    redact(text)
                ),
            )
        })?
    } else {
        let mut c = Config::new();
        c.dbname(text);
        c
    };
    let set_in_dsn = |key: &str| text.contains(key);
    let var = |name: &str| env(name).filter(|v| !v.is_empty());

    if config.get_hosts().is_empty() {
        match var("PGHOST") {
            Some(h) if h.starts_with('/') => {
                config.host_path(h);
            }
            Some(h) => {
                config.host(&h);
            }
            None if Path::new(DEFAULT_SOCKET_DIR).is_dir() => {
                config.host_path(DEFAULT_SOCKET_DIR);
            }
            None => {
                config.host("localhost");
            }
        }
    }
    if config.get_ports().is_empty() {
        let port = match var("PGPORT") {
            Some(p) => p.parse::<u16>().map_err(|_| {
                DbError::invalid("PGPORT", format!("'{p}' is not a port (expected 1-65535)"))
            })?,
            None => 5432,
        };
        config.port(port);
    }
    if config.get_user().is_none() {
        let user = var("PGUSER")
            .or_else(|| var("USER"))
            .or_else(|| var("LOGNAME"))
            .ok_or_else(|| {
                DbError::invalid("--db", "no user name: give one in --db, PGUSER or USER")
            })?;
        config.user(&user);
    }
    if config.get_dbname().is_none() {
        let db = var("PGDATABASE").unwrap_or_else(|| config.get_user().unwrap_or("").to_string());
        config.dbname(&db);
    }
    if !set_in_dsn("sslmode") {
        if let Some(mode) = var("PGSSLMODE") {
            config.ssl_mode(parse_ssl_mode(&mode)?);
        }
    }
    if config.get_application_name().is_none() {
        config.application_name(var("PGAPPNAME").unwrap_or_else(|| "uuidforge".into()));
    }
    if config.get_connect_timeout().is_none() {
        if let Some(t) = var("PGCONNECT_TIMEOUT") {
            let secs: u64 = t.parse().map_err(|_| {
                DbError::invalid(
                    "PGCONNECT_TIMEOUT",
                    format!("'{t}' is not a number of seconds"),
                )
            })?;
            config.connect_timeout(std::time::Duration::from_secs(secs));
        }
    }
    if config.get_password().is_none() {
        if let Some(p) = var("PGPASSWORD") {
            config.password(p);
        } else if let Some(file) = var("PGPASSFILE")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".pgpass")))
        {
            if let Some(p) = password_from_file(&file, &config) {
                config.password(p);
            }
        }
    }
    Ok(config)
}

fn parse_ssl_mode(mode: &str) -> Result<SslMode, DbError> {
    match mode {
        "disable" => Ok(SslMode::Disable),
        "allow" | "prefer" => Ok(SslMode::Prefer),
        "require" => Ok(SslMode::Require),
        other => Err(DbError::invalid(
            "PGSSLMODE",
            format!("'{other}' is not supported (expected disable, allow, prefer or require)"),
        )),
    }
}

pub use crate::dsn::redact;

/// The password for `config` in a pgpass file (`host:port:db:user:password`,
/// `*` matching anything, `\:` and `\\` escaped, `#` comments). Like libpq,
/// a file readable by group or others is ignored, and `localhost` matches a
/// connection through the default Unix socket.
pub(crate) fn password_from_file(path: &Path, config: &Config) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            eprintln!(
                "uuidforge: password file {} has group or world access; ignored (chmod 0600 it)",
                path.display()
            );
            return None;
        }
    }
    let text = std::fs::read_to_string(path).ok()?;
    let host = match config.get_hosts().first()? {
        Host::Tcp(h) => h.clone(),
        Host::Unix(p) if p == Path::new(DEFAULT_SOCKET_DIR) => "localhost".to_string(),
        Host::Unix(p) => p.display().to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let db = config.get_dbname().unwrap_or("");
    let user = config.get_user().unwrap_or("");
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(pgpass_fields)
        .find(|f| {
            f.len() >= 5
                && [&host, &port, db, user]
                    .iter()
                    .zip(f)
                    .all(|(want, got)| got == "*" || got == *want)
        })
        .map(|f| f[4..].join(":"))
}

fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().expect("one field").push(n);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn the_dsn_wins_then_the_environment() {
        let c = config_from(
            Some("postgres://alice@db.example:6543/shop"),
            &env(&[("PGUSER", "bob"), ("PGPORT", "1"), ("PGDATABASE", "x")]),
        )
        .unwrap();
        assert_eq!(c.get_user(), Some("alice"));
        assert_eq!(c.get_ports(), &[6543]);
        assert_eq!(c.get_dbname(), Some("shop"));
        let c = config_from(
            None,
            &env(&[
                ("PGHOST", "h1"),
                ("PGUSER", "bob"),
                ("PGPORT", "7777"),
                ("PGSSLMODE", "require"),
            ]),
        )
        .unwrap();
        assert_eq!(c.get_hosts(), &[Host::Tcp("h1".into())]);
        assert_eq!(c.get_user(), Some("bob"));
        assert_eq!(c.get_dbname(), Some("bob"));
        assert_eq!(c.get_ports(), &[7777]);
        assert_eq!(c.get_ssl_mode(), SslMode::Require);
        let c = config_from(Some("shop"), &env(&[("PGUSER", "bob"), ("PGHOST", "h")])).unwrap();
        assert_eq!(c.get_dbname(), Some("shop"));
    }

    #[test]
    fn bad_settings_name_the_variable() {
        let e = config_from(None, &env(&[("PGUSER", "u"), ("PGPORT", "http")])).unwrap_err();
        assert!(e.context == "PGPORT" && e.message.contains("'http'"), "{e}");
        assert_eq!(e.kind, crate::error::ErrorKind::Invalid);
        let e =
            config_from(None, &env(&[("PGUSER", "u"), ("PGSSLMODE", "verify-full")])).unwrap_err();
        assert_eq!(e.context, "PGSSLMODE", "{e}");
        let e = config_from(Some("postgres://u:secret@h:notaport/d"), &env(&[])).unwrap_err();
        assert!(
            e.context == "--db" && !e.to_string().contains("secret"),
            "{e}"
        );
    }

    #[test]
    fn passwords_from_a_pgpass_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("uuidforge-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:*:*:nope\nh\\:x:5432:shop:alice:pa\\:ss:word\n*:*:*:bob:bobs\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let f = file.display().to_string();
        let c = config_from(
            Some("host=h:x dbname=shop user=alice"),
            &env(&[("PGPASSFILE", &f)]),
        )
        .unwrap();
        assert_eq!(c.get_password(), Some(&b"pa:ss:word"[..]));
        let c = config_from(Some("host=z user=bob"), &env(&[("PGPASSFILE", &f)])).unwrap();
        assert_eq!(c.get_password(), Some(&b"bobs"[..]));
        let c = config_from(Some("host=z user=carol"), &env(&[("PGPASSFILE", &f)])).unwrap();
        assert_eq!(c.get_password(), None);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = config_from(Some("host=z user=bob"), &env(&[("PGPASSFILE", &f)])).unwrap();
        assert_eq!(c.get_password(), None, "a world-readable file is ignored");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(redact("postgres://u:secret@h/d"), "postgres://u:***@h/d");
        assert_eq!(redact("host=h password=secret"), "host=h password=***");
    }
}

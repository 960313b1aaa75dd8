//! Backups before a change: `pg_dump --format=custom` of the relations a
//! plan touches, checked readable with `pg_restore --list` before anything
//! changes. The programs reach the database the change reaches: the
//! connection's host, port, user, database, password and `sslmode` are
//! handed to them as `PG*` variables.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::Config;
use uuidforge_db::client::DbError;

/// A backup written and read back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Backup {
    /// The file.
    pub file: PathBuf,
    /// Entries `pg_restore --list` reads in it.
    pub entries: usize,
    /// Schema only (a rename changes no data).
    pub schema_only: bool,
}

/// `uuidforge-backup-DATABASE-YYYYMMDDTHHMMSSZ.dump` in the working
/// directory (`…Z-2.dump`, `…Z-3.dump` when changes follow within a
/// second: a backup is never overwritten).
pub fn default_file(database: &str) -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let stamp = chrono::DateTime::from_timestamp(now, 0)
        .map(|t| t.format("%Y%m%dT%H%M%SZ").to_string())
        .unwrap_or_else(|| now.to_string());
    let safe: String = database
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut file = PathBuf::from(format!("uuidforge-backup-{safe}-{stamp}.dump"));
    let mut n = 1;
    while file.exists() {
        n += 1;
        file = PathBuf::from(format!("uuidforge-backup-{safe}-{stamp}-{n}.dump"));
    }
    file
}

/// The `PG*` variables that make a libpq program connect where `config`
/// does.
fn libpq_env(config: &Config) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    if !hosts.is_empty() {
        env.push(("PGHOST", hosts.join(",")));
    }
    let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
    if !ports.is_empty() {
        env.push(("PGPORT", ports.join(",")));
    }
    if let Some(user) = config.get_user() {
        env.push(("PGUSER", user.to_string()));
    }
    if let Some(db) = config.get_dbname() {
        env.push(("PGDATABASE", db.to_string()));
    }
    if let Some(password) = config.get_password() {
        env.push(("PGPASSWORD", String::from_utf8_lossy(password).into_owned()));
    }
    let mode = match config.get_ssl_mode() {
        SslMode::Disable => "disable",
        SslMode::Require => "require",
        _ => "prefer",
    };
    env.push(("PGSSLMODE", mode.to_string()));
    env
}

fn failed(what: &str, detail: impl std::fmt::Display) -> DbError {
    DbError::tool(format!("backup: {what}"), detail.to_string())
}

/// The `pg_dump` given with `--pg-dump` (or `UUIDFORGE_PG_DUMP`).
static CHOSEN_PG_DUMP: OnceLock<PathBuf> = OnceLock::new();

/// Uses `path` as `pg_dump` (its `pg_restore` beside it) rather than
/// looking for one.
pub fn use_pg_dump(path: PathBuf) {
    let _ = CHOSEN_PG_DUMP.set(path);
}

/// A `pg_dump` and the major version it says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgDump {
    /// The program.
    pub path: PathBuf,
    /// Its major version (`pg_dump --version`).
    pub major: u32,
}

impl PgDump {
    /// `pg_restore` from the same installation (else the one on `PATH`).
    fn pg_restore(&self) -> PathBuf {
        self.path
            .parent()
            .map(|dir| dir.join("pg_restore"))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("pg_restore"))
    }
}

/// The major version `pg_dump --version` reports (`pg_dump (PostgreSQL)
/// 18.6` → 18).
fn major_of(path: &Path) -> Option<u32> {
    let out = Command::new(path).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.trim().rsplit(' ').next()?;
    version.split(['.', ' ', '-']).next()?.parse().ok()
}

/// Where `pg_dump` programs usually are: Debian's and the PGDG packages'
/// per-version directories, Homebrew's, a source build's, then `PATH`.
fn candidates() -> Vec<PathBuf> {
    let mut found = Vec::new();
    // (directory, prefix of its per-version entries): Debian
    // /usr/lib/postgresql/N, PGDG packages /usr/pgsql-N, Homebrew
    // postgresql@N.
    for (dir, prefix) in [
        ("/usr/lib/postgresql", ""),
        ("/usr", "pgsql-"),
        ("/opt/homebrew/opt", "postgresql"),
        ("/usr/local/opt", "postgresql"),
    ] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(prefix) {
                found.push(entry.path().join("bin/pg_dump"));
            }
        }
    }
    found.push(PathBuf::from("/usr/local/pgsql/bin/pg_dump"));
    if let Some(path) = std::env::var_os("PATH") {
        found.extend(std::env::split_paths(&path).map(|d| d.join("pg_dump")));
    }
    unique_programs(found)
}

/// The paths that are files, each program once: `/usr/bin/pg_dump`,
/// `/bin/pg_dump` (a merged /usr) and Debian's wrapper can all lead to the
/// same file, which is then listed once, under the first path found.
fn unique_programs(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    paths
        .into_iter()
        .filter(|p| p.is_file())
        .filter(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())))
        .collect()
}

/// A `pg_dump` that can dump a server of `server_version_num` (its major
/// version at least the server's): the one given with `--pg-dump` or
/// `UUIDFORGE_PG_DUMP` if any, else the lowest such version found in the
/// usual places and on `PATH`. None: an error that says what to install,
/// before anything has run.
pub fn pg_dump_for(server_version_num: i32) -> Result<PgDump, DbError> {
    let server = u32::try_from(server_version_num / 10_000).unwrap_or(0);
    if let Some(path) = CHOSEN_PG_DUMP.get().cloned() {
        return match major_of(&path) {
            Some(major) if major >= server => Ok(PgDump { path, major }),
            Some(major) => Err(failed(
                "--pg-dump",
                format!(
                    "{} is pg_dump {major}; the server is PostgreSQL {server} (expected pg_dump {server} or newer)",
                    path.display()
                ),
            )),
            None => Err(failed(
                "--pg-dump",
                format!("{} does not run as pg_dump --version (expected a pg_dump {server} or newer)", path.display()),
            )),
        };
    }
    let mut seen = Vec::new();
    let mut best: Option<PgDump> = None;
    for path in candidates() {
        let Some(major) = major_of(&path) else {
            continue;
        };
        seen.push(format!("{} ({major})", path.display()));
        if major >= server && best.as_ref().is_none_or(|b| major < b.major) {
            best = Some(PgDump { path, major });
        }
    }
    best.ok_or_else(|| {
        failed(
            "pg_dump",
            format!(
                "the server is PostgreSQL {server} and no pg_dump {server} or newer was found (found: {}); install the PostgreSQL {server} client programs (Debian: postgresql-client-{server}) or give one with --pg-dump PATH",
                if seen.is_empty() { "none".to_string() } else { seen.join(", ") }
            ),
        )
    })
}

/// Dumps what `what` names — relations and schemas (quoted qualified
/// names, as `pg_dump -t` and `-n` read them literally) — into `file`,
/// which must not exist, with a `pg_dump` fit for a server of
/// `server_version_num` ([`pg_dump_for`]), then reads it back with
/// `pg_restore --list`.
pub fn dump(
    config: &Config,
    server_version_num: i32,
    what: &crate::ops::Backup,
    file: &Path,
) -> Result<Backup, DbError> {
    let pg_dump = pg_dump_for(server_version_num)?;
    create_private(file)?;
    let dumped = run_dump(config, &pg_dump, what, file);
    if dumped.is_err() {
        // Only the empty file made above, or pg_dump's part of a dump.
        let _ = std::fs::remove_file(file);
    }
    dumped
}

/// Creates `file`, which must not exist, readable and writable by its owner
/// only (0600) whatever the umask: a backup holds the tables' rows. pg_dump
/// then writes into it and keeps the mode.
fn create_private(file: &Path) -> Result<(), DbError> {
    uuidforge_store::private_file::create_new(file)
        .map(drop)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                failed(
                    "file",
                    format!("{} exists (expected a new file)", file.display()),
                )
            } else {
                failed("file", format!("{}: {e}", file.display()))
            }
        })
}

fn run_dump(
    config: &Config,
    pg_dump: &PgDump,
    what: &crate::ops::Backup,
    file: &Path,
) -> Result<Backup, DbError> {
    let (relations, schema_only) = (&what.relations, what.schema_only);
    let mut command = Command::new(&pg_dump.path);
    command
        .envs(libpq_env(config))
        .arg("--format=custom")
        // gzip's fastest level: on a key migration's tables (mostly keys and
        // numbers) two to three times faster than the default level for a
        // file about 5% larger.
        .arg("--compress=1")
        .arg("--no-password")
        .arg("--file")
        .arg(file);
    if schema_only {
        command.arg("--schema-only");
    }
    for relation in relations {
        command.arg("--table").arg(relation);
    }
    for schema in &what.schemas {
        command.arg("--schema").arg(schema);
    }
    let output = command
        .output()
        .map_err(|e| failed("run pg_dump", format!("{e} (is pg_dump installed?)")))?;
    if !output.status.success() {
        return Err(failed(
            "pg_dump",
            String::from_utf8_lossy(&output.stderr).trim(),
        ));
    }
    let listed = Command::new(pg_dump.pg_restore())
        .arg("--list")
        .arg(file)
        .output()
        .map_err(|e| failed("run pg_restore", e))?;
    if !listed.status.success() {
        return Err(failed(
            "pg_restore --list",
            String::from_utf8_lossy(&listed.stderr).trim(),
        ));
    }
    let text = String::from_utf8_lossy(&listed.stdout);
    let entries = text
        .lines()
        .filter(|l| !l.starts_with(';') && !l.trim().is_empty())
        .count();
    if entries < relations.len() + what.schemas.len() {
        return Err(failed(
            "pg_restore --list",
            format!(
                "{} holds {entries} entries for {} relations and schemas (expected one at least each)",
                file.display(),
                relations.len() + what.schemas.len()
            ),
        ));
    }
    Ok(Backup {
        file: file.to_path_buf(),
        entries,
        schema_only,
    })
}

#[cfg(test)]
mod tests {
    use super::unique_programs;
    use std::path::PathBuf;

    #[test]
    fn a_program_reached_by_several_paths_is_listed_once() {
        let dir = std::env::temp_dir().join(format!("uuidforge-pgdump-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real")).unwrap();
        let program = dir.join("real/pg_dump");
        std::fs::write(&program, "").unwrap();
        std::os::unix::fs::symlink(&program, dir.join("link1")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("bin")).unwrap();
        let other = dir.join("other_pg_dump");
        std::fs::write(&other, "").unwrap();
        let found = unique_programs(vec![
            dir.join("link1"),
            program.clone(),
            dir.join("bin/pg_dump"),
            dir.join("missing/pg_dump"),
            other.clone(),
        ]);
        assert_eq!(found, vec![dir.join("link1"), other]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn paths_that_are_not_files_are_left_out() {
        assert!(unique_programs(vec![PathBuf::from("/nonexistent/pg_dump")]).is_empty());
    }
}

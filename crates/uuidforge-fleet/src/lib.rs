//! A fleet: the same schema on several PostgreSQL servers (a database per
//! tenant or per region, kept in step by their migrations), each a named
//! member. The read commands run on every member at once (bounded) and
//! report per member and merged ([`columns`] shows where the members
//! differ); a member that does not answer is reported by name while the
//! others answer. `migrate-key` plans on every member, refuses when the
//! plans differ, and migrates member after member with one state
//! ([`migrate`]).
//!
//! Members come from `--db` (repeatable, `NAME=URL` or a plain connection)
//! and from a fleet file: one `NAME=CONNECTION` per line, `#` comments.
#![deny(missing_docs)]

pub mod columns;
pub mod migrate;
pub mod plans;

use uuidforge_db::error::DbError;

/// A member as given: its name (`None`: named after its connection) and
/// its connection string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberSpec {
    /// The name, when given.
    pub name: Option<String>,
    /// A URL, a `key=value` string or a database name (as `--db` takes).
    pub connection: String,
}

/// Whether `name` is a member name: letters, digits, `_`, `-` and `.`.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// One `--db` value: `NAME=URL` (the URL starting `postgres://` or
/// `postgresql://`), else a connection alone — a `key=value` string keeps
/// its `=`.
///
/// ```
/// use uuidforge_fleet::member_of_arg;
/// let m = member_of_arg("eu=postgres://app@db-eu/shop");
/// assert_eq!(m.name.as_deref(), Some("eu"));
/// assert_eq!(member_of_arg("host=db dbname=shop").name, None);
/// ```
pub fn member_of_arg(arg: &str) -> MemberSpec {
    if let Some((name, rest)) = arg.split_once('=') {
        if is_name(name) && (rest.starts_with("postgres://") || rest.starts_with("postgresql://")) {
            return MemberSpec {
                name: Some(name.to_string()),
                connection: rest.to_string(),
            };
        }
    }
    MemberSpec {
        name: None,
        connection: arg.to_string(),
    }
}

/// The members of a fleet file: `NAME=CONNECTION` per line (the first `=`
/// ends the name, so a `key=value` connection keeps its own), blank lines
/// and `#` comments left out. Errors name the file and the line.
///
/// ```
/// use uuidforge_fleet::members_of_file;
/// let m = members_of_file("# shards\neu=postgres://a@h/db\nus = host=h2 dbname=db\n", "fleet.txt").unwrap();
/// assert_eq!(m.len(), 2);
/// assert_eq!(m[1].connection, "host=h2 dbname=db");
/// assert!(members_of_file("postgres://a@h/db", "f").is_err());
/// ```
pub fn members_of_file(text: &str, origin: &str) -> Result<Vec<MemberSpec>, DbError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            DbError::invalid(
                "fleet",
                format!("{origin} line {}: {why} (expected NAME=CONNECTION)", i + 1),
            )
        };
        let (name, connection) = line
            .split_once('=')
            .ok_or_else(|| bad("no '=' after a name"))?;
        let (name, connection) = (name.trim(), connection.trim());
        if !is_name(name) {
            return Err(bad(&format!(
                "'{name}' is not a name (letters, digits, _, - and .)"
            )));
        }
        if connection.is_empty() {
            return Err(bad(&format!("member {name} has no connection")));
        }
        out.push(MemberSpec {
            name: Some(name.to_string()),
            connection: connection.to_string(),
        });
    }
    Ok(out)
}

/// The names of `specs`, each given name kept and the others made from
/// the connection (`DATABASE@HOST:PORT`); refused when two are the same.
pub fn names(
    specs: &[MemberSpec],
    derived: impl Fn(&MemberSpec) -> String,
) -> Result<Vec<String>, DbError> {
    let mut out: Vec<String> = Vec::new();
    for spec in specs {
        let name = spec.name.clone().unwrap_or_else(|| derived(spec));
        if out.contains(&name) {
            return Err(DbError::invalid(
                "fleet",
                format!(
                    "two members are named {name} (expected each name once; name them NAME=URL)"
                ),
            ));
        }
        out.push(name);
    }
    Ok(out)
}

/// A member with its connection settings.
#[derive(Debug, Clone)]
pub struct Member {
    /// Its name.
    pub name: String,
    /// Where it is.
    pub config: tokio_postgres::Config,
}

/// `DATABASE@HOST:PORT` of a connection.
fn named_after(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    format!(
        "{}@{host}:{}",
        config.get_dbname().unwrap_or("postgres"),
        config.get_ports().first().copied().unwrap_or(5432)
    )
}

/// The members of `specs`, their connections read as psql reads them.
pub fn members(specs: &[MemberSpec]) -> Result<Vec<Member>, DbError> {
    let configs: Vec<tokio_postgres::Config> = specs
        .iter()
        .map(|s| uuidforge_db::client::config(Some(&s.connection)))
        .collect::<Result<_, _>>()?;
    let names = names(specs, |spec| {
        let i = specs.iter().position(|s| s == spec).unwrap_or(0);
        named_after(&configs[i])
    })?;
    Ok(names
        .into_iter()
        .zip(configs)
        .map(|(name, config)| Member { name, config })
        .collect())
}

/// What one member answered.
#[derive(Debug)]
pub struct Answer<T> {
    /// The member.
    pub member: String,
    /// Its answer, or why it gave none.
    pub result: Result<T, DbError>,
}

/// Runs `work` on every member, at most `at_once` at a time, and returns
/// the answers in the members' order (a member's error is its answer; the
/// others still run).
pub async fn on_each<T, F, Fut>(members: &[Member], at_once: usize, work: F) -> Vec<Answer<T>>
where
    F: Fn(Member) -> Fut,
    Fut: std::future::Future<Output = Result<T, DbError>>,
{
    use futures_util::stream::{self, StreamExt};
    let mut answers: Vec<(usize, Answer<T>)> = stream::iter(members.iter().cloned().enumerate())
        .map(|(i, m)| {
            let name = m.name.clone();
            let fut = work(m);
            async move {
                (
                    i,
                    Answer {
                        member: name,
                        result: fut.await,
                    },
                )
            }
        })
        .buffer_unordered(at_once.max(1))
        .collect()
        .await;
    answers.sort_by_key(|(i, _)| *i);
    answers.into_iter().map(|(_, a)| a).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_arguments_and_files() {
        let m = member_of_arg("us-east.1=postgresql://u@h:5433/db?sslmode=require");
        assert_eq!(m.name.as_deref(), Some("us-east.1"));
        assert_eq!(m.connection, "postgresql://u@h:5433/db?sslmode=require");
        // A key=value connection and a plain URL are not named.
        for plain in ["dbname=shop host=h", "postgres://u@h/db", "shop"] {
            assert_eq!(member_of_arg(plain).name, None, "{plain}");
        }
        let e =
            members_of_file("eu=postgres://a@h/d\n\nbad name=postgres://x\n", "f.txt").unwrap_err();
        assert!(e.message.contains("f.txt line 3"), "{e}");
        let e = members_of_file("eu=\n", "f.txt").unwrap_err();
        assert!(e.message.contains("no connection"), "{e}");
        let specs = members_of_file("a=postgres://h/1\na=postgres://h/2\n", "f").unwrap();
        let e = names(&specs, |_| String::new()).unwrap_err();
        assert!(e.message.contains("two members are named a"), "{e}");
        let specs = vec![
            member_of_arg("postgres://h/1"),
            member_of_arg("x=postgres://h/2"),
        ];
        assert_eq!(
            names(&specs, |s| format!("derived {}", s.connection)).unwrap(),
            vec!["derived postgres://h/1".to_string(), "x".to_string()]
        );
    }
}

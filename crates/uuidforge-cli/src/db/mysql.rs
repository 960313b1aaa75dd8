//! `uuidforge db` on a MariaDB or MySQL server (`--db mysql://…` or
//! `mariadb://…`): `columns`, `find`, `related` and `discover` in one
//! read-only transaction, and `convert-uuid`. The work is done by
//! `uuidforge-mysql-db`; this module parses flags and prints.

use super::{db_error, print_json, ColumnsArgs, Command, DiscoverArgs, FindArgs, RelatedArgs};
use crate::UsageError;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_mysql_db::columns::UuidColumn;
use uuidforge_mysql_db::connect::Settings;
use uuidforge_mysql_db::session::Session;

/// Runs `command` on the server `dsn` names.
pub(super) fn run(dsn: &str, command: Command) -> Result<ExitCode, UsageError> {
    let settings =
        Settings::from_dsn(dsn, &|name| std::env::var(name).ok()).map_err(UsageError::Db)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match command {
            Command::Columns(a) => columns(&settings, a).await,
            Command::Find(a) => find(&settings, a).await,
            Command::Related(a) => related(&settings, a).await,
            Command::Discover(a) => discover(&settings, a).await,
            Command::ConvertUuid(a) => super::convert_uuid::run(&settings, a).await,
            other => Err(UsageError::plain(format!(
                "db {} is PostgreSQL's only; on MariaDB and MySQL: columns, find, related, discover, convert-uuid",
                other.name()
            ))),
        }
    })
}

/// Opens the session, reads the UUID columns of `schemas`.
async fn open(
    settings: &Settings,
    schemas: &[String],
    min_share: f64,
) -> Result<
    (
        Session,
        uuidforge_mysql_db::catalog::Catalog,
        Vec<UuidColumn>,
    ),
    UsageError,
> {
    let mut session = Session::open(settings).await.map_err(db_error)?;
    let (catalog, columns) =
        uuidforge_mysql_db::columns::uuid_columns(&mut session, schemas, min_share)
            .await
            .map_err(db_error)?;
    Ok((session, catalog, columns))
}

/// Rows as a table: columns padded to their widest cell.
fn table(out: &mut impl Write, header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, cell) in r.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for r in rows {
        writeln!(out, "{}", line(r.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

async fn columns(settings: &Settings, args: ColumnsArgs) -> Result<ExitCode, UsageError> {
    let (session, _, found) = open(settings, &args.schemas, args.min_share).await?;
    let server = session.server.clone();
    session.close().await.map_err(db_error)?;
    let mut out = crate::term::stdout();
    if args.json {
        return print_json(&mut out, &found);
    }
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|c| {
            let versions: Vec<String> = c
                .versions
                .iter()
                .map(|(v, n)| format!("v{v}: {n}"))
                .collect();
            vec![
                c.candidate.display(),
                format!("{} ({})", c.form_name, c.candidate.column_type),
                format!(
                    "{} of {} sampled{}",
                    c.uuids,
                    c.sampled,
                    if versions.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", versions.join(", "))
                    }
                ),
                format!(
                    "{}: {}",
                    if c.time_order { "yes" } else { "no" },
                    c.order_note
                ),
                if c.indexes.is_empty() {
                    "none".into()
                } else {
                    c.indexes.join(", ")
                },
            ]
        })
        .collect();
    writeln!(out, "-- {} ({})", settings, server.version)?;
    table(
        &mut out,
        &[
            "COLUMN",
            "FORM",
            "UUIDS",
            "TIME ORDER",
            "INDEXES LEADING WITH IT",
        ],
        &rows,
    )?;
    Ok(ExitCode::SUCCESS)
}

async fn find(settings: &Settings, args: FindArgs) -> Result<ExitCode, UsageError> {
    for (given, flag) in [
        (args.plan, "--plan"),
        (args.indexed_only, "--indexed-only"),
        (!args.columns.is_empty(), "--column"),
    ] {
        if given {
            return Err(UsageError::plain(format!("{flag} is PostgreSQL's only (on MariaDB and MySQL every column holding UUIDs is searched, each in its own form)")));
        }
    }
    let needles = super::needles_of(&args)?;
    let (mut session, catalog, columns) = open(settings, &args.schemas, 0.5).await?;
    let hits = uuidforge_mysql_db::find::find(&mut session, &catalog, &columns, needles.uuids())
        .await
        .map_err(db_error)?;
    session.close().await.map_err(db_error)?;
    let mut out = crate::term::stdout();
    for h in &hits {
        if args.json {
            writeln!(
                out,
                "{}",
                serde_json::to_string(h).map_err(std::io::Error::from)?
            )?;
        } else {
            let key: Vec<String> = h.key.iter().map(|(k, v)| format!("{k}={v}")).collect();
            writeln!(
                out,
                "{}  {}  {}  {}",
                h.value,
                h.column,
                h.form,
                key.join(" ")
            )?;
        }
    }
    eprintln!(
        "uuidforge: {} hit(s) in {} column(s) searched",
        hits.len(),
        columns.len()
    );
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

async fn related(settings: &Settings, args: RelatedArgs) -> Result<ExitCode, UsageError> {
    let Some(spec) = args.column else {
        return Err(UsageError::plain(
            "--name is PostgreSQL's only (on MariaDB and MySQL give TABLE.COLUMN)",
        ));
    };
    let (mut session, catalog, columns) = open(settings, &[], 0.5).await?;
    let target = uuidforge_mysql_db::related::named(&columns, &spec).map_err(db_error)?;
    let found = uuidforge_mysql_db::related::related(&mut session, &catalog, &columns, target)
        .await
        .map_err(db_error)?;
    session.close().await.map_err(db_error)?;
    let mut out = crate::term::stdout();
    if args.json {
        return print_json(&mut out, &found);
    }
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|r| {
            vec![
                format!("{:.2}", r.score),
                r.column.clone(),
                r.form.to_string(),
                r.why.join("; "),
            ]
        })
        .collect();
    table(&mut out, &["SCORE", "COLUMN", "FORM", "WHY"], &rows)?;
    Ok(ExitCode::SUCCESS)
}

async fn discover(settings: &Settings, args: DiscoverArgs) -> Result<ExitCode, UsageError> {
    if args.diagram.is_some() {
        return Err(UsageError::plain(
            "--diagram is PostgreSQL's only (on MariaDB and MySQL: the report, --json or --ddl)",
        ));
    }
    let (mut session, catalog, columns) = open(settings, &args.schemas, 0.5).await?;
    let found = uuidforge_mysql_db::discover::discover(&mut session, &catalog, &columns)
        .await
        .map_err(db_error)?;
    session.close().await.map_err(db_error)?;
    let mut out = crate::term::stdout();
    if args.json {
        return print_json(&mut out, &found);
    }
    let ddl: Vec<&String> = found
        .keys
        .iter()
        .filter_map(|k| k.ddl.as_ref())
        .chain(found.references.iter().filter_map(|r| r.ddl.as_ref()))
        .collect();
    if args.ddl {
        for d in ddl {
            writeln!(out, "{d}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "-- keys")?;
    for k in &found.keys {
        writeln!(
            out,
            "{} ({}, {} rows): {}",
            k.column,
            k.form,
            k.rows,
            if k.declared { "declared" } else { "proposed" }
        )?;
    }
    writeln!(out, "-- references")?;
    for r in &found.references {
        let what = if r.declared {
            "declared".to_string()
        } else {
            r.note.clone().unwrap_or_else(|| "proposed".into())
        };
        writeln!(
            out,
            "{} -> {} ({} values, every one a key's): {what}",
            r.from, r.to, r.values
        )?;
    }
    if !ddl.is_empty() {
        writeln!(
            out,
            "-- the DDL that would declare them (never run; --ddl prints it alone)"
        )?;
        for d in ddl {
            writeln!(out, "{d}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

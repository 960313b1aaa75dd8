//! `uuidforge db --db mysql://… convert-uuid TABLE.COLUMN --to binary16|uuid`:
//! the plan (every statement, the backup, the checks) printed; with
//! `--apply` run after the backup and checked.

use super::{db_error, print_json};
use crate::UsageError;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_mysql_db::connect::Settings;
use uuidforge_mysql_db::convert::{self, Target};
use uuidforge_mysql_db::session::Session;

#[derive(clap::Args)]
pub(super) struct ConvertUuidArgs {
    /// TABLE.COLUMN or SCHEMA.TABLE.COLUMN: a key (its references are
    /// converted with it) or any UUID column.
    column: String,
    /// The form: binary16 (BINARY(16) in RFC order: a UUIDv7 sorts by
    /// time) or uuid (MariaDB's UUID type).
    #[arg(long, value_name = "FORM")]
    to: String,
    #[command(flatten)]
    change: super::ChangeArgs,
}

pub(super) async fn run(
    settings: &Settings,
    args: ConvertUuidArgs,
) -> Result<ExitCode, UsageError> {
    let to = Target::parse(&args.to).map_err(db_error)?;
    let mut session = Session::open(settings).await.map_err(db_error)?;
    let (catalog, columns) = uuidforge_mysql_db::columns::uuid_columns(&mut session, &[], 0.5)
        .await
        .map_err(db_error)?;
    let plan = convert::plan(&mut session, &catalog, &columns, &args.column, to)
        .await
        .map_err(db_error)?;
    session.close().await.map_err(db_error)?;
    // The PostgreSQL tools' name, a dump of SQL text.
    let backup = args.change.backup.clone().unwrap_or_else(|| {
        uuidforge_change::backup::default_file(settings.database.as_deref().unwrap_or("server"))
            .with_extension("sql")
    });
    let mut out = crate::term::stdout();
    if !args.change.apply {
        if args.change.json {
            return print_json(&mut out, &plan);
        }
        writeln!(out, "-- plan: convert-uuid {} to {}", args.column, args.to)?;
        for c in &plan.columns {
            writeln!(
                out,
                "--   {} ({}{})",
                c.column,
                c.from,
                if c.not_null { ", NOT NULL" } else { "" }
            )?;
        }
        writeln!(
            out,
            "--   backed up first: the tables {} (mariadb-dump --single-transaction, 0600)",
            plan.tables.join(", ")
        )?;
        writeln!(out, "--   each statement commits on its own (DDL is not transactional here): a failure names the backup to restore")?;
        for s in &plan.statements {
            writeln!(out, "{s};")?;
        }
        for (what, _, _) in &plan.checks {
            writeln!(out, "-- checked after: {what} as before")?;
        }
        writeln!(out, "-- nothing was changed: run again with --apply")?;
        return Ok(ExitCode::SUCCESS);
    }
    let backup = std::path::absolute(&backup)?;
    let done = convert::apply(settings, &plan, &backup)
        .await
        .map_err(db_error)?;
    if args.change.json {
        return print_json(&mut out, &done);
    }
    writeln!(
        out,
        "applied: {} statement(s); backup: {}",
        done.statements, done.backup
    )?;
    for (what, value) in &done.checks {
        writeln!(out, "checked: {what}: {value}, as before")?;
    }
    Ok(ExitCode::SUCCESS)
}

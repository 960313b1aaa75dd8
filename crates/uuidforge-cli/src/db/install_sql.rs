//! `uuidforge db install-sql`: the SQL edition — UUIDv7 keys in plain SQL
//! and PL/pgSQL for servers that refuse custom extensions — into a schema,
//! or upgraded in place, as a change like any other (the plan is the
//! edition's SQL; `--apply` runs it). `--sql-only` prints the script for
//! psql without connecting.

use super::{change, ChangeArgs};
use crate::UsageError;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_change::ops::install_sql::{edition_sql, InstallSql, InstallSqlPlan, DEFAULT_SCHEMA};
use uuidforge_change::runner::Applied;
use uuidforge_db::client::ReadOnly;

#[derive(clap::Args)]
pub(super) struct InstallSqlArgs {
    /// The schema the functions go into (made if it does not exist).
    #[arg(long, default_value = DEFAULT_SCHEMA)]
    schema: String,
    /// Print the edition's SQL for this schema (a script for psql) and
    /// connect to nothing.
    #[arg(long, conflicts_with_all = ["apply", "backup", "json"])]
    sql_only: bool,
    #[command(flatten)]
    change: ChangeArgs,
}

impl InstallSqlArgs {
    /// Whether the command needs no database.
    pub(super) fn offline(&self) -> bool {
        self.sql_only
    }
}

/// Prints the script (`--sql-only`).
pub(super) fn print_script(args: &InstallSqlArgs) -> Result<ExitCode, UsageError> {
    let mut out = crate::term::stdout();
    out.write_all(edition_sql(&args.schema).as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub(super) async fn run(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: InstallSqlArgs,
) -> Result<ExitCode, UsageError> {
    let op = InstallSql {
        schema: args.schema.clone(),
    };
    let lines = change::Lines {
        secret: &change::no_secret,
        applied: &|p: &InstallSqlPlan, _: &Applied| {
            vec![format!(
                "SQL edition {} {} in schema {} ({} before)",
                p.version,
                match p.action {
                    "install" => "installed",
                    "upgrade" => "installed in place",
                    _ => "installed again",
                },
                p.schema,
                p.installed.as_deref().unwrap_or("none")
            )]
        },
    };
    change::run(session, config, &op, &args.change, lines).await
}

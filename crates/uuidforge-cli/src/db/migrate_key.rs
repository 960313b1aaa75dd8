//! `uuidforge db migrate-key`: one transaction by default; with
//! `--batch-size`, batches that keep writers working and a state table
//! that `--resume` goes on from after a kill or a lost connection.

use super::change::{self, resumable};
use super::{db_error, one_line, print_json, ChangeArgs};
use crate::UsageError;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_db::client::{DbError, ReadOnly};
use uuidforge_db::ops::migrate_batched::{BatchedPlan, MigrateBatched};
use uuidforge_db::ops::migrate_key::{MigrateKey, MigrateOptions, MigratePlan};
use uuidforge_db::runner::{self, Applied, BatchedState};

#[derive(clap::Args)]
pub(super) struct MigrateKeyArgs {
    /// TABLE or SCHEMA.TABLE.
    table: String,
    /// Order the new keys by this timestamp or date column (without it,
    /// the old key order is kept exactly).
    #[arg(long, value_name = "COLUMN")]
    order_by: Option<String>,
    /// Keep the old values under this name (default KEY_old).
    #[arg(long, value_name = "NAME")]
    keep_old: Option<String>,
    /// The key column, when the primary key has several columns (`id` of
    /// a partitioned table's `(id, created_at)`; default: its one integer
    /// or uuid column).
    #[arg(long, value_name = "COLUMN")]
    column: Option<String>,
    /// A column holding the key's values without a foreign key (a view
    /// joins them): migrated as a reference too, no foreign key made
    /// (repeatable; TABLE.COLUMN or SCHEMA.TABLE.COLUMN).
    #[arg(long, value_name = "TABLE.COLUMN")]
    also: Vec<String>,
    /// A column named for the key without a foreign key that is not a
    /// reference to it (its values only happen to be keys): left as it is
    /// (repeatable; TABLE.COLUMN or SCHEMA.TABLE.COLUMN).
    #[arg(long, value_name = "TABLE.COLUMN")]
    leave: Vec<String>,
    /// The secret of the new keys (32 bytes): the same file gives the same
    /// keys on the same data. Created (0600) when it does not exist;
    /// default uuidforge-migrate-DATABASE-TABLE.key.
    #[arg(long, value_name = "FILE")]
    key_file: Option<std::path::PathBuf>,
    /// Migrate in batches of about N rows, each its own transaction, for
    /// tables too large to lock: writers go on, only two short steps lock
    /// them out; progress is kept in the table uuidforge_migration.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..=2_147_483_647))]
    batch_size: Option<i64>,
    /// Complete a batched migration that was killed or lost its
    /// connection, from its last committed step.
    #[arg(long, conflicts_with_all = ["apply", "batch_size", "order_by", "keep_old", "column", "also", "leave"])]
    resume: bool,
    #[command(flatten)]
    change: ChangeArgs,
}

/// The secret of `--key-file` or of the default file of this database and
/// table.
fn secret_of(args: &MigrateKeyArgs, database: &str) -> Result<Vec<u8>, DbError> {
    let key_file = args.key_file.clone().unwrap_or_else(|| {
        let table: String = args
            .table
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        std::path::PathBuf::from(format!("uuidforge-migrate-{database}-{table}.key"))
    });
    migration_secret(&key_file)
}

/// The secret in `path` (32 bytes), created from the operating system's
/// random source (0600) when the file does not exist.
fn migration_secret(path: &std::path::Path) -> Result<Vec<u8>, DbError> {
    use std::io::Read;
    let failed = |e: std::io::Error| DbError::tool("key-file", format!("{}: {e}", path.display()));
    match std::fs::File::open(path) {
        Ok(mut f) => {
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).map_err(failed)?;
            if bytes.len() != 32 {
                return Err(DbError::invalid(
                    "key-file",
                    format!(
                        "{} holds {} bytes (expected 32)",
                        path.display(),
                        bytes.len()
                    ),
                ));
            }
            Ok(bytes)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            use std::os::unix::fs::OpenOptionsExt;
            use uuidforge::generator::RandSource;
            let mut secret = vec![0u8; 32];
            uuidforge::generator::OsChaCha::new().fill(&mut secret);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(failed)?;
            f.write_all(&secret).map_err(failed)?;
            f.sync_all().map_err(failed)?;
            Ok(secret)
        }
        Err(e) => Err(failed(e)),
    }
}

/// The lines after `applied` of a change in steps.
fn steps_lines(
    rows: usize,
    seconds: f64,
    batches: u64,
    exclusive: &[(String, f64)],
) -> Vec<String> {
    let longest = exclusive.iter().map(|(_, s)| *s).fold(0.0, f64::max);
    let mut lines = vec![format!(
        "applied: {rows} rows given a UUIDv7 key in {seconds:.2} s, {batches} batches; longest step locking writers out: {longest:.3} s"
    )];
    lines.extend(
        exclusive
            .iter()
            .map(|(what, s)| format!("  {s:.3} s  {what}")),
    );
    lines
}

/// The JSON of what a change in steps did.
fn steps_json(
    rows: usize,
    seconds: f64,
    batches: u64,
    exclusive: &[(String, f64)],
    checks: &[String],
) -> serde_json::Value {
    serde_json::json!({
        "rows": rows,
        "batches": batches,
        "exclusive": exclusive,
        "longest_exclusive_seconds": exclusive.iter().map(|(_, s)| *s).fold(0.0, f64::max),
        "checks": checks,
        "seconds": seconds,
    })
}

/// `--resume`: runs the steps left.
async fn resume(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: &MigrateKeyArgs,
    state: BatchedState,
) -> Result<ExitCode, UsageError> {
    let snapshot = session.snapshot().await.map_err(db_error)?;
    session.close().await.map_err(db_error)?;
    let mut out = crate::term::stdout();
    let table = match &state.plan.mode {
        uuidforge_db::ops::Mode::Steps { table, .. } => table.clone(),
        _ => args.table.clone(),
    };
    if !args.change.json {
        writeln!(
            out,
            "-- resuming the batched migration of {} at step {} of {}: {}",
            one_line(&table),
            state.step + 1,
            state.plan.steps.len(),
            one_line(
                state
                    .plan
                    .steps
                    .get(state.step)
                    .map_or("finish", |s| s.what())
            )
        )?;
        out.flush()?;
    }
    let secret = secret_of(args, &snapshot.database).map_err(db_error)?;
    let bar = change::steps_bar();
    let mut progress = change::show_progress(&bar);
    let done = runner::resume(config, &args.table, &secret, &mut progress).await;
    bar.finish_and_clear();
    let done = done.map_err(resumable)?;
    if args.change.json {
        return print_json(
            &mut out,
            &serde_json::json!({
                "table": table,
                "resumed_at_step": state.step + 1,
                "outcome": steps_json(done.keyed_rows, done.seconds, done.batches, &done.exclusive, &done.checks),
            }),
        );
    }
    let lines = steps_lines(done.keyed_rows, done.seconds, done.batches, &done.exclusive);
    change::print_done(&mut out, &lines, &done.checks)
}

/// Refuses to begin a migration of a table whose batched migration is
/// under way, and `--resume` without one.
async fn under_way(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: &MigrateKeyArgs,
) -> Result<Option<ReadOnly>, UsageError> {
    let state = runner::batched_state(config, &args.table)
        .await
        .map_err(db_error)?;
    match (state, args.resume) {
        (Some(state), true) => {
            resume(session, config, args, state).await?;
            Ok(None)
        }
        (None, true) => Err(UsageError::plain(format!(
            "resume: no batched migration of {} is under way (expected one begun with --batch-size N --apply)",
            args.table
        ))),
        (Some(state), false) => Err(UsageError::plain(format!(
            "table: a batched migration of {} is under way (next step {} of {}: {}); run again with --resume to complete it",
            args.table,
            state.step + 1,
            state.plan.steps.len(),
            state.plan.steps.get(state.step).map_or("finish", |s| s.what())
        ))),
        (None, false) => Ok(Some(session)),
    }
}

pub(super) async fn run(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: MigrateKeyArgs,
) -> Result<ExitCode, UsageError> {
    let Some(session) = under_way(session, config, &args).await? else {
        return Ok(ExitCode::SUCCESS);
    };
    let database = session.snapshot().await.map_err(db_error)?.database;
    let options = MigrateOptions {
        order_by: args.order_by.clone(),
        keep_old: args.keep_old.clone(),
        column: args.column.clone(),
        also: args.also.clone(),
        leave: args.leave.clone(),
    };
    let secret = || secret_of(&args, &database);
    if let Some(batch_size) = args.batch_size {
        let op = MigrateBatched {
            table: args.table.clone(),
            options,
            batch_size,
        };
        let json = |plan: &BatchedPlan, done: Option<&Applied>| {
            serde_json::json!({
                "table": plan.table,
                "key": plan.key,
                "key_type": plan.key_type,
                "old_name": plan.old_name,
                "batch_size": batch_size,
                "references": plan.references,
                "steps": plan.change.steps,
                "default": plan.default_note,
                "change": plan.change,
                "applied": done.is_some(),
                "backup": done.and_then(|d| d.backup.as_ref()),
                "outcome": done.map(|d| steps_json(d.keyed_rows, d.seconds, d.batches, &d.exclusive, &d.checks)),
            })
        };
        let applied = |_: &BatchedPlan, d: &Applied| {
            steps_lines(d.keyed_rows, d.seconds, d.batches, &d.exclusive)
        };
        let report = change::Report {
            secret: &secret,
            json: &json,
            applied: &applied,
        };
        return change::run(session, config, &op, &args.change, report).await;
    }
    let op = MigrateKey {
        table: args.table.clone(),
        options,
    };
    let json = |plan: &MigratePlan, done: Option<&Applied>| {
        serde_json::json!({
            "table": plan.table,
            "key": plan.key,
            "key_type": plan.key_type,
            "old_name": plan.old_name,
            "references": plan.references,
            "statements": plan.statements,
            "default": plan.default_note,
            "change": plan.change,
            "applied": done.is_some(),
            "rows": done.map_or(0, |d| d.keyed_rows),
            "backup": done.and_then(|d| d.backup.as_ref()),
            "verified": done.map(|d| d.checks.clone()).unwrap_or_default(),
            "seconds": done.map(|d| d.seconds),
        })
    };
    let applied = |_: &MigratePlan, d: &Applied| {
        vec![format!(
            "applied: {} rows given a UUIDv7 key in {:.2} s",
            d.keyed_rows, d.seconds
        )]
    };
    let report = change::Report {
        secret: &secret,
        json: &json,
        applied: &applied,
    };
    change::run(session, config, &op, &args.change, report).await
}

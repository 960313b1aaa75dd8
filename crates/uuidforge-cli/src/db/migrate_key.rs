//! `uuidforge db migrate-key`: one transaction by default; with
//! `--batch-size`, batches that keep writers working and a state table
//! that `--resume` goes on from after a kill or a lost connection.

use super::{back_up, db_error, one_line, print_json, BackupRequest, ChangeArgs};
use crate::UsageError;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_db::client::ReadOnly;
use uuidforge_db::exec;
use uuidforge_db::migrate_batched::{BatchedPlan, Step};
use uuidforge_db::migrate_run::{self, BatchedOutcome, Progress};

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
    #[arg(long, conflicts_with_all = ["apply", "batch_size", "order_by", "keep_old", "column"])]
    resume: bool,
    #[command(flatten)]
    change: ChangeArgs,
}

/// The secret of `--key-file` or of the default file of this database and
/// table.
fn secret_of(args: &MigrateKeyArgs, database: &str) -> Result<Vec<u8>, UsageError> {
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

/// `--batch-size`: prints the batched plan; with `--apply` backs up,
/// begins and runs it.
async fn batched(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: &MigrateKeyArgs,
    options: &uuidforge_db::migrate::MigrateOptions,
    batch_size: i64,
) -> Result<ExitCode, UsageError> {
    let snapshot = session.snapshot().await.map_err(db_error)?;
    let inputs = exec::migrate_inputs(&session, &snapshot, &args.table, options)
        .await
        .map_err(db_error)?;
    let plan = uuidforge_db::migrate_batched::plan(&snapshot, &args.table, options, &inputs)
        .map_err(|m| UsageError::plain(format!("migrate-key: {m}")))?;
    let mut out = crate::term::stdout();
    if !args.change.json {
        print_batched(&mut out, &plan, batch_size, args.order_by.as_deref())?;
    }
    let mut backup = None;
    let mut outcome = None;
    if args.change.apply {
        session.close().await.map_err(db_error)?;
        let request = BackupRequest {
            file: args.change.backup.clone(),
            database: &snapshot.database,
            server_version_num: snapshot.server_version_num,
            relations: &plan.backup,
            schema_only: false,
        };
        backup = Some(back_up(config, request, args.change.json, &mut out)?);
        // After the backup, which may be refused (no fit pg_dump): nothing,
        // not even the key file, is written before that.
        let secret = secret_of(args, &snapshot.database)?;
        let prepare = migrate_run::start(config, &args.table, options, &plan, batch_size)
            .await
            .map_err(resumable)?;
        let mut done = run_steps(config, &args.table, &secret).await?;
        done.exclusive
            .insert(0, (plan.steps[0].what().to_string(), prepare));
        done.longest_exclusive_seconds = done.longest_exclusive_seconds.max(prepare);
        if !args.change.json {
            print_outcome(&mut out, &done)?;
        }
        outcome = Some(done);
    } else if !args.change.json {
        writeln!(out, "\n-- nothing was changed: run again with --apply")?;
    }
    if args.change.json {
        return print_json(
            &mut out,
            &serde_json::json!({
                "table": plan.table,
                "key": plan.key,
                "key_type": plan.key_type,
                "old_name": plan.old_name,
                "references": plan.references,
                "batch_size": batch_size,
                "steps": plan.steps,
                "default": plan.default_note,
                "applied": args.change.apply,
                "backup": backup,
                "outcome": outcome,
            }),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--resume`: runs the steps left.
async fn resume(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: &MigrateKeyArgs,
    state: migrate_run::BatchedState,
) -> Result<ExitCode, UsageError> {
    let snapshot = session.snapshot().await.map_err(db_error)?;
    let mut out = crate::term::stdout();
    if !args.change.json {
        writeln!(
            out,
            "-- resuming the batched migration of {} at step {} of {}: {}",
            one_line(&state.plan.table),
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
    let secret = secret_of(args, &snapshot.database)?;
    session.close().await.map_err(db_error)?;
    let done = run_steps(config, &args.table, &secret).await?;
    if args.change.json {
        return print_json(
            &mut out,
            &serde_json::json!({"table": state.plan.table, "resumed_at_step": state.step + 1, "outcome": done}),
        );
    }
    print_outcome(&mut out, &done)?;
    Ok(ExitCode::SUCCESS)
}

/// A failed step: the database works under the old schema until the swap,
/// and `--resume` goes on.
fn resumable(e: uuidforge_db::client::DbError) -> UsageError {
    UsageError::plain(format!(
        "{e}\n(the database is consistent; complete the migration with --resume, or see the state in uuidforge_migration)"
    ))
}

async fn run_steps(
    config: &tokio_postgres::Config,
    table: &str,
    secret: &[u8],
) -> Result<BatchedOutcome, UsageError> {
    let bar = super::progress_bar("{spinner} {msg} {pos}/{len} pages {wide_bar} {eta}");
    let mut report = |p: Progress| match p {
        Progress::Step { index, total, what } => {
            bar.set_message(format!("step {}/{total}: {what}", index + 1));
            bar.set_length(0);
            bar.set_position(0);
        }
        Progress::Pages { done, total } => {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    let done = migrate_run::run(config, table, secret, &mut report)
        .await
        .map_err(resumable);
    bar.finish_and_clear();
    done
}

/// What both plans say first.
struct Header<'a> {
    table: &'a str,
    key: &'a str,
    key_type: &'a str,
    old_name: &'a str,
    references: &'a [uuidforge_db::migrate::Reference],
    default_note: &'a str,
}

fn print_header(
    out: &mut impl Write,
    h: Header,
    order_by: Option<&str>,
    how: &str,
) -> std::io::Result<()> {
    writeln!(
        out,
        "-- plan: {} key {} ({}) → uuid (UUIDv7, {}), old values kept in {}{how}",
        one_line(h.table),
        one_line(h.key),
        h.key_type,
        match order_by {
            Some(c) => format!("time from {}", one_line(c)),
            None => "old key order kept".into(),
        },
        one_line(h.old_name)
    )?;
    for r in h.references {
        writeln!(
            out,
            "--   referenced by {}.{} ({})",
            one_line(&r.table),
            one_line(&r.column),
            one_line(&r.constraint)
        )?;
    }
    writeln!(out, "--   new default: {}", h.default_note)
}

fn print_batched(
    out: &mut impl Write,
    plan: &BatchedPlan,
    batch_size: i64,
    order_by: Option<&str>,
) -> std::io::Result<()> {
    print_header(
        out,
        Header {
            table: &plan.table,
            key: &plan.key,
            key_type: &plan.key_type,
            old_name: &plan.old_name,
            references: &plan.references,
            default_note: &plan.default_note,
        },
        order_by,
        &format!(", in batches of about {batch_size} rows"),
    )?;
    writeln!(
        out,
        "--   progress: {} (a killed run goes on with --resume)",
        one_line(&plan.state_table)
    )?;
    for (i, step) in plan.steps.iter().enumerate() {
        let n = i + 1;
        match step {
            Step::Transaction {
                what,
                statements,
                exclusive,
            } => {
                let note = if *exclusive { "; writers wait" } else { "" };
                writeln!(out, "\n-- step {n}: {what} (one transaction{note})\nBEGIN;")?;
                for statement in statements {
                    writeln!(out, "{statement};")?;
                }
                writeln!(out, "COMMIT;")?;
            }
            Step::Keys { read_keys_sql, map } => writeln!(
                out,
                "\n-- step {n}: new keys computed by uuidforge from\n--   {};\n-- and copied into {} (one transaction)",
                read_keys_sql,
                one_line(map)
            )?,
            Step::Backfill {
                what, update_sql, ..
            } => writeln!(
                out,
                "\n-- step {n}: {what}, one transaction per range of pages ($1 first, $2 after the last)\n{update_sql};"
            )?,
            Step::Concurrently {
                what,
                cleanup,
                statement,
            } => writeln!(
                out,
                "\n-- step {n}: {what} (no transaction; writers go on)\n{cleanup};\n{statement};"
            )?,
            Step::Check { what, sql } => {
                writeln!(out, "\n-- step {n}: {what} (every count 0)\n{sql};")?
            }
        }
    }
    out.flush()
}

fn print_outcome(out: &mut impl Write, done: &BatchedOutcome) -> std::io::Result<()> {
    writeln!(
        out,
        "-- applied: {} rows given a UUIDv7 key in {:.2} s, {} batches; longest step locking writers out: {:.3} s",
        done.rows, done.seconds, done.batches, done.longest_exclusive_seconds
    )?;
    for (what, seconds) in &done.exclusive {
        writeln!(out, "--   {:.3} s  {}", seconds, one_line(what))?;
    }
    writeln!(out, "-- verified:")?;
    for check in &done.checks {
        writeln!(out, "--   {}", one_line(check))?;
    }
    out.flush()
}

/// The secret in `path` (32 bytes), created from the operating system's
/// random source (0600) when the file does not exist.
fn migration_secret(path: &std::path::Path) -> Result<Vec<u8>, UsageError> {
    use std::io::Read;
    match std::fs::File::open(path) {
        Ok(mut f) => {
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)?;
            if bytes.len() != 32 {
                return Err(UsageError::plain(format!(
                    "key-file: {} holds {} bytes (expected 32)",
                    path.display(),
                    bytes.len()
                )));
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
                .map_err(|e| UsageError::plain(format!("key-file: {}: {e}", path.display())))?;
            f.write_all(&secret)?;
            f.sync_all()?;
            Ok(secret)
        }
        Err(e) => Err(UsageError::plain(format!(
            "key-file: {}: {e}",
            path.display()
        ))),
    }
}

pub(super) async fn run(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: MigrateKeyArgs,
) -> Result<ExitCode, UsageError> {
    let options = uuidforge_db::migrate::MigrateOptions {
        order_by: args.order_by.clone(),
        keep_old: args.keep_old.clone(),
        column: args.column.clone(),
    };
    let under_way = migrate_run::batched_state(config, &args.table)
        .await
        .map_err(db_error)?;
    match (under_way, args.resume) {
        (Some(state), true) => return resume(session, config, &args, state).await,
        (None, true) => {
            return Err(UsageError::plain(format!(
                "resume: no batched migration of {} is under way (expected one begun with --batch-size N --apply)",
                args.table
            )))
        }
        (Some(state), false) => {
            return Err(UsageError::plain(format!(
                "table: a batched migration of {} is under way (next step {} of {}: {}); run again with --resume to complete it",
                state.plan.table,
                state.step + 1,
                state.plan.steps.len(),
                state
                    .plan
                    .steps
                    .get(state.step)
                    .map_or("finish", |s| s.what())
            )))
        }
        (None, false) => {}
    }
    if let Some(batch_size) = args.batch_size {
        return batched(session, config, &args, &options, batch_size).await;
    }
    let plan = exec::migrate_key_plan(&session, &args.table, &options)
        .await
        .map_err(db_error)?;
    let mut out = crate::term::stdout();
    if !args.change.json {
        print_header(
            &mut out,
            Header {
                table: &plan.table,
                key: &plan.key,
                key_type: &plan.key_type,
                old_name: &plan.old_name,
                references: &plan.references,
                default_note: &plan.default_note,
            },
            args.order_by.as_deref(),
            "",
        )?;
        writeln!(out, "BEGIN;\n{};", plan.map_sql)?;
        writeln!(
            out,
            "-- COPY uuidforge_keymap (old, new): one row per key, computed by uuidforge"
        )?;
        for statement in &plan.statements {
            writeln!(out, "{statement};")?;
        }
        writeln!(
            out,
            "-- verify (every count 0, and the row counts as before the statements, else rollback):\n{};\n{};\nCOMMIT;",
            plan.verify_sql, plan.counts_sql
        )?;
        out.flush()?;
    }
    let mut backup = None;
    let mut checks = Vec::new();
    let mut rows = 0;
    let mut outcome = None;
    if args.change.apply {
        let snapshot = session.snapshot().await.map_err(db_error)?;
        // Its locks (the views it read) would keep the change waiting.
        session.close().await.map_err(db_error)?;
        let plan_backup = BackupRequest {
            file: args.change.backup.clone(),
            database: &snapshot.database,
            server_version_num: snapshot.server_version_num,
            relations: &plan.backup,
            schema_only: false,
        };
        backup = Some(back_up(config, plan_backup, args.change.json, &mut out)?);
        // After the backup, which may be refused: see the batched path.
        let secret = secret_of(&args, &snapshot.database)?;
        let done = exec::migrate_key_apply(config, &args.table, &options, &plan, &secret)
            .await
            .map_err(db_error)?;
        rows = done.rows;
        checks = done.checks.clone();
        outcome = Some(done);
        if !args.change.json {
            if let Some(o) = &outcome {
                writeln!(
                    out,
                    "-- applied: {rows} rows given a UUIDv7 key in {:.2} s (keys {:.2} s, statements {:.2} s, checks {:.2} s); verified:",
                    o.transaction_seconds, o.keys_seconds, o.statements_seconds, o.verify_seconds
                )?;
            }
            for check in &checks {
                writeln!(out, "--   {}", one_line(check))?;
            }
        }
    } else if !args.change.json {
        writeln!(out, "\n-- nothing was changed: run again with --apply")?;
    }
    if args.change.json {
        return print_json(
            &mut out,
            &serde_json::json!({
                "table": plan.table,
                "key": plan.key,
                "key_type": plan.key_type,
                "old_name": plan.old_name,
                "references": plan.references,
                "statements": plan.statements,
                "default": plan.default_note,
                "applied": args.change.apply,
                "rows": rows,
                "backup": backup,
                "verified": checks,
                "seconds": outcome.as_ref().map(|o| serde_json::json!({
                    "transaction": o.transaction_seconds,
                    "keys": o.keys_seconds,
                    "statements": o.statements_seconds,
                    "checks": o.verify_seconds,
                })),
            }),
        );
    }
    Ok(ExitCode::SUCCESS)
}

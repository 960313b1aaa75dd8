//! The one runner of every change ([`crate::ops`]): plans in a read-only
//! session ([`plan`]), then [`apply`]: backup (the relations the plan
//! names), the plan made again inside the transaction and compared with
//! the one printed (a database changed since is refused, unchanged), the
//! steps (in one transaction, or each committed on its own with the state
//! recorded for `--resume`), the checks, commit or roll back, and what was
//! done.

mod bind;
mod steps;

pub use steps::{batched_state, resume, BatchedState, Progress};

use crate::backup::Backup as BackupFile;
use crate::catalog::Snapshot;
use crate::client::{Change, DbError, Reader};
use crate::ops::{Check, Mode, Operation, Planned, Step, Stop};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
use tokio_postgres::Config;

/// Plans `op` in `reader`'s transaction: the snapshot, then the reads the
/// operation asks for until it has what it needs. Returns the plan and the
/// snapshot it was made from.
pub async fn plan<O: Operation>(
    reader: &impl Reader,
    op: &O,
) -> Result<(O::Plan, Snapshot), DbError> {
    let snapshot = reader.snapshot().await?;
    let mut answers = Vec::new();
    loop {
        let reads = op.reads(&snapshot, &answers)?;
        if reads.is_empty() {
            break;
        }
        for read in reads {
            answers.push(reader.one_text_of(&read.query, &read.what).await?);
        }
    }
    let plan = op.plan(&snapshot, &answers)?;
    Ok((plan, snapshot))
}

/// What `apply` needs beside the plan.
pub struct Context<'a> {
    /// `--backup`, else a timestamped file.
    pub backup_file: Option<PathBuf>,
    /// The secret of new keys, asked for after the backup (so that nothing,
    /// not even a key file, is written when the backup is refused).
    pub secret: &'a (dyn Fn() -> Result<Vec<u8>, DbError> + Sync),
    /// Progress of a change in steps.
    pub progress: &'a mut (dyn FnMut(Progress) + Send),
    /// Told of the backup as soon as it is made (before anything runs).
    pub backed_up: &'a mut (dyn FnMut(&BackupFile) + Send),
}

/// What a change did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Applied {
    /// The backup made first.
    pub backup: Option<BackupFile>,
    /// The checks made before commit, each `name: 0` (or as the check
    /// says).
    pub checks: Vec<String>,
    /// The values steps kept by name (`merge_id`).
    pub outputs: BTreeMap<String, String>,
    /// Rows given a new key.
    pub keyed_rows: usize,
    /// Values rewritten outside the declared references.
    pub implicit: usize,
    /// Each step that locked writers out, and for how long (in steps).
    pub exclusive: Vec<(String, f64)>,
    /// Transactions of the backfill (in steps).
    pub batches: u64,
    /// The whole change.
    pub seconds: f64,
}

/// Applies `expected` (the plan printed, made from `planned_from`): backs
/// up, plans again inside the transaction and refuses if the plan differs,
/// runs, checks, commits. Nothing is changed on any error.
pub async fn apply<O: Operation>(
    config: &Config,
    op: &O,
    expected: &O::Plan,
    planned_from: &Snapshot,
    ctx: Context<'_>,
) -> Result<Applied, DbError> {
    let started = Instant::now();
    let change = expected.change();
    let file = ctx
        .backup_file
        .clone()
        .unwrap_or_else(|| crate::backup::default_file(&planned_from.database));
    let backup = crate::backup::dump(
        config,
        planned_from.server_version_num,
        &change.backup.relations,
        change.backup.schema_only,
        &file,
    )?;
    (ctx.backed_up)(&backup);
    let mut applied = Applied {
        backup: Some(backup),
        ..Applied::default()
    };
    let needs_secret = change.steps.iter().any(|s| matches!(s, Step::Keys { .. }));
    let secret = if needs_secret {
        (ctx.secret)()?
    } else {
        Vec::new()
    };
    match &change.mode {
        Mode::OneTransaction => {
            one_transaction(config, op, expected, &secret, &mut applied).await?;
        }
        Mode::Steps { table, .. } => {
            let prepare = steps::start(config, op, expected).await?;
            applied
                .exclusive
                .push((change.steps[0].what().to_string(), prepare));
            let done = steps::resume(config, table, &secret, ctx.progress).await?;
            applied.checks = done.checks;
            applied.keyed_rows = done.keyed_rows;
            applied.batches = done.batches;
            applied.exclusive.extend(done.exclusive);
        }
    }
    applied.seconds = started.elapsed().as_secs_f64();
    Ok(applied)
}

/// The plan made again in `change`'s transaction, refused unless it is
/// the one printed.
async fn plan_again<O: Operation>(
    change: &Change,
    op: &O,
    expected: &O::Plan,
) -> Result<O::Plan, DbError> {
    let (plan, _) = plan(change, op).await?;
    if plan != *expected {
        return Err(DbError::schema_changed(op.name()));
    }
    Ok(plan)
}

async fn one_transaction<O: Operation>(
    config: &Config,
    op: &O,
    expected: &O::Plan,
    secret: &[u8],
    applied: &mut Applied,
) -> Result<(), DbError> {
    let tx = Change::begin(config).await?;
    let plan = plan_again(&tx, op, expected).await?;
    let change = plan.change();
    let mut before = Vec::new();
    for check in &change.checks {
        if let Check::Unchanged { what, statement } = check {
            before.push(bind::one_text(tx.client(), statement, &applied.outputs, what).await?);
        }
    }
    for step in &change.steps {
        run_step(op.name(), &tx, step, secret, applied).await?;
    }
    let mut failed = Vec::new();
    let mut unchanged = before.into_iter();
    for check in &change.checks {
        let (made, bad) = check_one(&tx, check, &mut unchanged, &applied.outputs).await?;
        applied.checks.extend(made);
        failed.extend(bad);
    }
    if !failed.is_empty() {
        return Err(DbError::verification_failed(
            format!("verify the {} (nothing was changed)", op.name()),
            failed,
        ));
    }
    tx.commit().await
}

async fn run_step(
    operation: &str,
    tx: &Change,
    step: &Step,
    secret: &[u8],
    applied: &mut Applied,
) -> Result<(), DbError> {
    let client = tx.client();
    match step {
        Step::Run {
            statement,
            output,
            rows,
            message,
        } => match output {
            Some(name) => {
                let value = bind::one_text(client, statement, &applied.outputs, name).await?;
                applied.outputs.insert(name.clone(), value);
            }
            None => {
                let n = bind::execute(client, statement, &applied.outputs).await?;
                if rows.is_some_and(|want| want != n) {
                    let why = message.clone().unwrap_or_default();
                    return Err(DbError::conflict(
                        operation,
                        format!("{why} (nothing was changed)"),
                    ));
                }
            }
        },
        Step::Expect {
            statement,
            expect,
            stop,
            context,
            message,
        } => {
            let value = bind::one_text(client, statement, &applied.outputs, context).await?;
            if &value != expect {
                let message = message.replace("{value}", &value);
                return Err(match stop {
                    Stop::Refused => DbError::refused(context.clone(), message),
                    Stop::Conflict => DbError::conflict(context.clone(), message),
                });
            }
        }
        Step::Keys { read, map, ordered } => {
            let rows = tx.text_and_times(read).await?;
            let keys = crate::ops::migrate_key::new_keys(&rows, *ordered, secret)?;
            tx.copy_key_map(map, &rows, &keys).await?;
            applied.keyed_rows += rows.len();
        }
        Step::Implicit(implicit) => {
            let merge_id = applied.outputs.get("merge_id").cloned().unwrap_or_default();
            applied.implicit += bind::rewrite_implicit(client, implicit, &merge_id).await?;
        }
        Step::Transaction { statements, .. } => {
            for sql in statements {
                tx.execute(sql).await?;
            }
        }
        Step::Backfill { .. } | Step::Concurrently { .. } | Step::Check { .. } => {
            return Err(DbError::unreadable(
                "plan",
                format!("step '{}' runs only in steps", step.what()),
            ))
        }
    }
    Ok(())
}

/// Runs one check: the checks made and the failed ones.
async fn check_one(
    tx: &Change,
    check: &Check,
    unchanged: &mut impl Iterator<Item = String>,
    outputs: &BTreeMap<String, String>,
) -> Result<(Vec<String>, Vec<String>), DbError> {
    let client = tx.client();
    Ok(match check {
        Check::Zero { what, statement } => {
            let json = bind::one_text(client, statement, outputs, what).await?;
            let (failed, checks) = crate::ops::migrate_key::verification(&json)?;
            (checks, failed)
        }
        Check::Unchanged { what, statement } => {
            let before = unchanged.next().unwrap_or_default();
            let after = bind::one_text(client, statement, outputs, what).await?;
            let changed = crate::ops::migrate_key::count_changes(&before, &after);
            let failed = changed.iter().map(|c| format!("{what}: {c}")).collect();
            (vec![format!("{what} changed: {}", changed.len())], failed)
        }
        Check::Present { what, statements } => {
            let mut missing = Vec::new();
            for (row, statement) in statements {
                if bind::one_text(client, statement, outputs, what).await? == "0" {
                    missing.push(format!("{row}: not back"));
                }
            }
            (vec![format!("{what}: {}", statements.len())], missing)
        }
        Check::Renamed { renamed } => {
            let after = tx.snapshot().await?;
            crate::ops::rename::verify(&after, renamed)
        }
    })
}

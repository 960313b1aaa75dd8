//! The one runner of every change ([`crate::ops`]). It owns what makes
//! changes safe beside each other and beside the application:
//!
//! - [`plan`]: the plan made in a read-only session from the snapshot and
//!   the operation's named reads, refused when a change under way writes
//!   the same tables;
//! - [`apply`]: the tables locked against other runs ([`guard`]), the
//!   backup, then the change — in one transaction (the plan made again
//!   inside it and compared, the steps, the checks, commit or nothing), or
//!   in batches, each step committed with its state recorded
//!   ([`state`]);
//! - [`resume`]: a change in batches completed from its last committed
//!   step, by one process at a time.

mod backfill;
mod bind;
pub mod guard;
mod locks;
mod one_transaction;
pub mod state;
mod steps;

use crate::backup::Backup as BackupFile;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::client::{Change, DbError, Reader};
use crate::ops::{Answers, BatchStep, Operation, Planned, Probe, Run, Step};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
use tokio_postgres::Config;

/// What a run reports as it goes.
#[derive(Debug, Clone)]
pub enum Progress {
    /// Step `index` (of `total`) begins.
    Step {
        /// Its index.
        index: usize,
        /// The number of steps.
        total: usize,
        /// What it does.
        what: String,
    },
    /// A backfill has done `done` of `total` pages.
    Pages {
        /// Pages done.
        done: u64,
        /// Pages in all.
        total: u64,
    },
}

/// The answers of `op`'s planning pass in `reader`'s transaction: every
/// read it asks for, until it asks for none it has not had. A probe the
/// server refuses is answered with the refusal.
async fn answer<O: Operation>(
    reader: &impl Reader,
    op: &O,
    snapshot: &Snapshot,
) -> Result<Answers, DbError> {
    let mut answers = Answers::default();
    for _ in 0..16 {
        let reads = answers.missing(op.reads(snapshot, &answers)?);
        if reads.is_empty() {
            break;
        }
        for read in reads {
            let text = if read.fallible {
                match reader.probe_text_of(&read.query, &read.what).await {
                    Ok(text) => text,
                    Err(e) if e.sqlstate().is_some() => Probe::refused_answer(&e.message),
                    Err(e) => return Err(e),
                }
            } else {
                reader.one_text_of(&read.query, &read.what).await?
            };
            answers.insert(read.name, text);
        }
    }
    Ok(answers)
}

/// Plans `op` in `reader`'s transaction: the snapshot, then the reads the
/// operation asks for. Refused when a change in batches under way writes a
/// table this one would (busy while it runs). Returns the plan and the
/// snapshot it was made from.
pub async fn plan<O: Operation>(
    reader: &impl Reader,
    op: &O,
) -> Result<(O::Plan, Snapshot), DbError> {
    let (plan, snapshot) = plan_only(reader, op).await?;
    guard::refuse_under_way(reader.client(), plan.change(), None).await?;
    Ok((plan, snapshot))
}

async fn plan_only<O: Operation>(
    reader: &impl Reader,
    op: &O,
) -> Result<(O::Plan, Snapshot), DbError> {
    let snapshot = reader.snapshot().await?;
    let answers = answer(reader, op, &snapshot).await?;
    let plan = op.plan(&snapshot, &answers)?;
    Ok((plan, snapshot))
}

/// The plan made again in `change`'s transaction, refused unless it is
/// the one printed.
async fn plan_again<O: Operation>(
    change: &Change,
    op: &O,
    expected: &O::Plan,
) -> Result<O::Plan, DbError> {
    let (plan, _) = plan_only(change, op).await?;
    if plan != *expected {
        return Err(DbError::schema_changed(op.name()));
    }
    Ok(plan)
}

/// What `apply` needs beside the plan.
pub struct Context<'a> {
    /// `--backup`, else a timestamped file.
    pub backup_file: Option<PathBuf>,
    /// The secret of new keys, asked for after the backup (so that nothing,
    /// not even a key file, is written when the backup is refused).
    pub secret: &'a (dyn Fn() -> Result<Vec<u8>, DbError> + Sync),
    /// Progress of a change in batches.
    pub progress: &'a mut (dyn FnMut(Progress) + Send),
    /// Told of the backup as soon as it is made (before anything runs).
    pub backed_up: &'a mut (dyn FnMut(&BackupFile) + Send),
}

/// What a change did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Applied {
    /// The backup made first.
    pub backup: Option<BackupFile>,
    /// How long it took (pg_dump and the read back), within `seconds`.
    pub backup_seconds: f64,
    /// The checks made before commit, each `name: 0` (or as the check
    /// says).
    pub checks: Vec<String>,
    /// The values steps kept by name (`merge_id`).
    pub outputs: BTreeMap<String, String>,
    /// Rows given a new key.
    pub keyed_rows: usize,
    /// Values rewritten outside the declared references.
    pub implicit: usize,
    /// Each step that locked writers out, and for how long (in batches).
    pub exclusive: Vec<(String, f64)>,
    /// The longest of those.
    pub longest_exclusive_seconds: f64,
    /// Transactions of the backfills (in batches).
    pub batches: u64,
    /// The step a `--resume` went on from (1 the first).
    pub resumed_at_step: Option<usize>,
    /// The whole run.
    pub seconds: f64,
}

impl Applied {
    /// Counts in what step `step` did.
    fn add(&mut self, step: &BatchStep, done: steps::StepDone) {
        self.keyed_rows += done.keyed;
        self.batches += done.batches;
        if let Some(seconds) = done.exclusive {
            self.exclusive.push((step.what().to_string(), seconds));
            self.longest_exclusive_seconds = self.longest_exclusive_seconds.max(seconds);
        }
        if !done.checks.is_empty() {
            self.checks = done.checks;
        }
    }

    /// The checks each batch made of its own rows.
    fn batch_checks(&mut self) {
        if self.batches > 0 {
            self.checks.push(format!(
                "other columns changed by the backfill ({} batches, each checked): 0",
                self.batches
            ));
        }
    }
}

/// What a command prints as JSON: the plan, and what was done when it was
/// applied (`applied` is null for a plan alone).
#[derive(Debug, Clone, Serialize)]
pub struct Report<'a, P: Serialize> {
    /// The plan.
    #[serde(flatten)]
    pub plan: &'a P,
    /// What was done.
    pub applied: Option<&'a Applied>,
}

/// Whether `run` computes new keys (and so needs the secret).
fn needs_secret(run: &Run) -> bool {
    match run {
        Run::OneTransaction { steps, .. } => steps.iter().any(|s| matches!(s, Step::Keys(_))),
        Run::Batches { steps, .. } => steps.iter().any(|s| matches!(s, BatchStep::Keys(_))),
    }
}

/// The hint of an error once a change in batches is under way.
fn resumable(e: DbError, target: &str) -> DbError {
    if e.hint.is_some() {
        return e;
    }
    e.with_hint(format!(
        "the change is under way and the database consistent: complete it with uuidforge db migrate-key {target} --resume"
    ))
}

/// Applies `expected` (the plan printed, made from `planned_from`): locks
/// its tables against other runs, backs up, plans again inside the
/// transaction and refuses if the plan differs, runs, checks, commits.
/// In one transaction nothing is changed on any error; in batches the
/// database works under the old schema until the swap, and `--resume`
/// goes on.
pub async fn apply<O: Operation>(
    config: &Config,
    op: &O,
    expected: &O::Plan,
    planned_from: &Snapshot,
    ctx: Context<'_>,
) -> Result<Applied, DbError> {
    let started = Instant::now();
    let change = expected.change();
    let guard = guard::Guard::claim(config, change, None).await?;
    let file = ctx
        .backup_file
        .clone()
        .unwrap_or_else(|| crate::backup::default_file(&planned_from.database));
    // Nothing to back up when the change only makes new objects.
    let dumping = Instant::now();
    let backup = if change.backup.is_empty() {
        None
    } else {
        Some(crate::backup::dump(
            config,
            planned_from.server_version_num,
            &change.backup,
            &file,
        )?)
    };
    let backup_seconds = dumping.elapsed().as_secs_f64();
    if let Some(backup) = &backup {
        (ctx.backed_up)(backup);
    }
    let secret = if needs_secret(&change.run) {
        (ctx.secret)()?
    } else {
        Vec::new()
    };
    let mut applied = match &change.run {
        Run::OneTransaction { .. } => {
            let mut tries = 0;
            loop {
                tries += 1;
                let mut applied = Applied::default();
                match one_transaction::run(config, op, expected, &secret, &mut applied).await {
                    Ok(()) => break applied,
                    Err(e) if tries < locks::TRIES && locks::lost(&e) => {
                        // Rolled back: nothing was changed.
                        locks::pause(tries).await;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Run::Batches { .. } => {
            let (at, prepare) = steps::start(config, op, expected, guard.pid).await?;
            let mut applied = steps::run(config, change, &at, &secret, ctx.progress)
                .await
                .map_err(|e| resumable(e, &change.target))?;
            let what = change.run.what(0).unwrap_or_default().to_string();
            applied.exclusive.insert(0, (what, prepare));
            applied.longest_exclusive_seconds = applied.longest_exclusive_seconds.max(prepare);
            applied.batch_checks();
            applied
        }
    };
    guard.release().await;
    applied.backup = backup;
    applied.backup_seconds = backup_seconds;
    applied.seconds = started.elapsed().as_secs_f64();
    Ok(applied)
}

/// The change in batches of `table` under way, and its recorded plan.
pub async fn under_way_of(
    config: &Config,
    table: &str,
) -> Result<Option<state::UnderWay>, DbError> {
    let session = uuidforge_db::client::ReadOnly::open(config).await?;
    let snapshot = session.snapshot().await?;
    let relation = snapshot.find_relation(table)?;
    let found = state::under_way(session.client(), &[relation.oid]).await?;
    session.close().await?;
    Ok(found
        .into_iter()
        .find(|u| u.tables.first() == Some(&i64::from(relation.oid))))
}

/// Completes the change in batches of `table` under way from its last
/// committed step, new keys from `secret`; one process at a time (another
/// `--resume` of it is busy).
pub async fn resume(
    config: &Config,
    table: &str,
    secret: &[u8],
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Applied, DbError> {
    let Some(u) = under_way_of(config, table).await? else {
        return Err(DbError::invalid(
            "resume",
            format!("no change in batches of {table} is under way (expected one begun with --batch-size N --apply)"),
        ));
    };
    if u.legacy {
        return Err(DbError::refused(
            "resume",
            format!("a {} is under way ({})", u.what(), u.progress()),
        )
        .with_hint(u.resume_command()));
    }
    let change = u.change()?;
    let guard = guard::Guard::claim(config, &change, Some((&u.state_table, u.id))).await?;
    state::claim(guard.client(), &u.state_table, u.id, guard.pid).await?;
    let at = steps::Recorded {
        table: u.state_table.clone(),
        id: u.id,
        schema: change.schema.clone(),
    };
    let mut applied = steps::run(config, &change, &at, secret, progress)
        .await
        .map_err(|e| resumable(e, &change.target))?;
    guard.release().await;
    applied.resumed_at_step = usize::try_from(u.step + 1).ok();
    applied.batch_checks();
    Ok(applied)
}

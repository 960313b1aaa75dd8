//! The one runner of every change ([`crate::ops`]). It knows no operation:
//! it runs any [`crate::ops::ChangePlan`] by its steps, and owns what makes
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
//!
//! Its rules are written once over a small I/O trait ([`io::Database`],
//! [`io::Session`]): [`postgres`] runs them on a server, and its unit tests
//! run them on a fake in memory.

mod backfill;
mod beside;
mod counts;
#[cfg(test)]
mod fake;
pub mod guard;
pub mod io;
mod locks;
mod one_transaction;
pub mod postgres;
pub mod state;
mod steps;
#[cfg(test)]
mod tests;

pub use counts::{changes, verification};
pub use locks::LOCK_TIMEOUT;

use crate::backup::Backup as BackupFile;
use crate::ops::{Answers, BatchStep, Operation, Planned, Probe, Read, Run};
use io::{Database, Session};
use postgres::{PgSession, Postgres};
use serde::Serialize;
use state::{Recorded, UnderWay};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
use tokio_postgres::Config;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::client::{ReadOnly, Reader};
use uuidforge_db::error::DbError;
use uuidforge_db::error::{Reason, Refusal, WayOut};

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

/// The answer of `read` on `session`: a probe the server refuses is
/// answered with the refusal, inside a savepoint that leaves the
/// transaction usable.
async fn answer_one(session: &impl Session, read: &Read) -> Result<String, DbError> {
    if !read.fallible {
        return session.read(&read.query, &read.what).await;
    }
    session.execute("SAVEPOINT uuidforge_probe").await?;
    let answer = session.read(&read.query, &read.what).await;
    let end = if answer.is_ok() {
        "RELEASE SAVEPOINT uuidforge_probe"
    } else {
        "ROLLBACK TO SAVEPOINT uuidforge_probe"
    };
    session.execute(end).await?;
    match answer {
        Err(e) if e.sqlstate().is_some() => Ok(Probe::refused_answer(&e.message)),
        other => other,
    }
}

/// The plan of `op` in `session`'s transaction: the snapshot, then every
/// read it asks for, until it asks for none it has not had.
async fn plan_in<O: Operation>(
    session: &impl Session,
    op: &O,
) -> Result<(O::Plan, Snapshot), DbError> {
    let snapshot = session.snapshot().await?;
    let mut answers = Answers::default();
    for _ in 0..16 {
        let reads = answers.missing(op.reads(&snapshot, &answers)?);
        if reads.is_empty() {
            break;
        }
        for read in reads {
            let text = answer_one(session, &read).await?;
            answers.insert(read.name, text);
        }
    }
    let plan = op.plan(&snapshot, &answers)?;
    Ok((plan, snapshot))
}

/// Plans `op` in `reader`'s read-only transaction: the snapshot, then the
/// reads the operation asks for. Refused when a change in batches under
/// way writes a table this one would (busy while it runs). Returns the
/// plan and the snapshot it was made from.
pub async fn plan<O: Operation>(
    reader: &impl Reader,
    op: &O,
) -> Result<(O::Plan, Snapshot), DbError> {
    let session = PgSession::over(reader.client());
    let (plan, snapshot) = plan_in(&session, op).await?;
    guard::refuse_under_way(&session, plan.change(), None).await?;
    Ok((plan, snapshot))
}

/// The plan made again in `session`'s transaction, refused unless it is
/// the one printed.
async fn plan_again<O: Operation>(
    session: &impl Session,
    op: &O,
    expected: &O::Plan,
) -> Result<O::Plan, DbError> {
    let (plan, _) = plan_in(session, op).await?;
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
    /// What its data actions counted, by the name each gives
    /// (`keyed_rows`, `implicit`).
    #[serde(flatten)]
    pub counts: BTreeMap<String, u64>,
    /// Each step that locked writers out, and for how long (in batches).
    pub exclusive: Vec<(String, f64)>,
    /// The longest of those.
    pub longest_exclusive_seconds: f64,
    /// Every step this run ran, and how long it took (in batches: where
    /// the time went).
    pub steps: Vec<(String, f64)>,
    /// The parts of the steps run side by side, and how long each took
    /// (each within its step's time, beside the others).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<(String, f64)>,
    /// Transactions of the backfills, a copy's ranges and its replay's
    /// rounds (in batches).
    pub batches: u64,
    /// Of those, the ranges a copy copied, each checked.
    #[serde(skip)]
    copied_ranges: u64,
    /// Of those, the rounds a copy's replay ran.
    #[serde(skip)]
    replayed_rounds: u64,
    /// The step a `--resume` went on from (1 the first).
    pub resumed_at_step: Option<usize>,
    /// The whole run.
    pub seconds: f64,
}

impl Applied {
    /// What its data actions counted under `name` (0 when none did).
    pub fn counted(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    fn count(&mut self, name: &str, n: u64) {
        *self.counts.entry(name.to_string()).or_default() += n;
    }

    /// Counts in what step `step` did.
    fn add(&mut self, step: &BatchStep, done: steps::StepDone) {
        self.steps.push((step.what().to_string(), done.seconds));
        if let Some((name, n)) = done.counted {
            self.count(name, n);
        }
        self.batches += done.batches;
        self.parts.extend(done.parts);
        self.copied_ranges += done.checked_ranges;
        match step {
            BatchStep::Backfill(b) if b.mismatch.is_some() => self.copied_ranges += done.batches,
            BatchStep::Replay { .. } => self.replayed_rounds += done.batches,
            _ => {}
        }
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
        let filled = self.batches - self.copied_ranges - self.replayed_rounds;
        if filled > 0 {
            self.checks.push(format!(
                "other columns changed by the backfill ({filled} batches, each checked): 0"
            ));
        }
        if self.copied_ranges > 0 {
            self.checks.push(format!(
                "rows not copied, or without their new key ({} ranges copied, each checked): 0",
                self.copied_ranges
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
    /// The files the command wrote beside the backup (a key file it made
    /// or read), each `what: path (how)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// Whether `run` computes new keys (and so needs the secret).
fn needs_secret(run: &Run) -> bool {
    match run {
        Run::OneTransaction { steps, .. } => one_transaction::needs_secret(steps),
        Run::Batches { steps, .. } => steps
            .iter()
            .any(|s| matches!(s, BatchStep::Data(d) if d.needs_secret())),
    }
}

/// An error once a change in batches is under way, with its way out: its
/// operation taken up again on its target.
fn resumable(e: DbError, change: &crate::ops::ChangePlan) -> DbError {
    if e.hint.is_some() || !e.ways_out().is_empty() {
        return e;
    }
    e.with_hint("the change is under way and the database consistent")
        .with_way_out(WayOut::Resume {
            operation: change.operation.clone(),
            target: change.target.clone(),
        })
}

/// Applies `expected` (the plan printed, made from `planned_from`) on the
/// server of `config`: locks its tables against other runs, backs up,
/// plans again inside the transaction and refuses if the plan differs,
/// runs, checks, commits. In one transaction nothing is changed on any
/// error; in batches the database works under the old schema until the
/// swap, and `--resume` goes on.
pub async fn apply<O: Operation>(
    config: &Config,
    op: &O,
    expected: &O::Plan,
    planned_from: &Snapshot,
    ctx: Context<'_>,
) -> Result<Applied, DbError> {
    apply_on(&Postgres { config }, op, expected, planned_from, ctx).await
}

/// [`apply`] on any [`Database`].
async fn apply_on<O: Operation, D: Database>(
    db: &D,
    op: &O,
    expected: &O::Plan,
    planned_from: &Snapshot,
    ctx: Context<'_>,
) -> Result<Applied, DbError> {
    let started = Instant::now();
    let change = expected.change();
    let guard = guard::Guard::claim(db, change, None).await?;
    let file = ctx
        .backup_file
        .clone()
        .unwrap_or_else(|| crate::backup::default_file(&planned_from.database));
    // Nothing to back up when the change only makes new objects.
    let dumping = Instant::now();
    let backup = if change.backup.is_empty() {
        None
    } else {
        Some(db.back_up(planned_from.server_version_num, &change.backup, &file)?)
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
                match one_transaction::run(db, op, expected, &secret, &mut applied).await {
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
            let (at, prepare) = steps::start(db, op, expected, guard.pid).await?;
            let mut applied = steps::run(db, change, &at, &secret, ctx.progress)
                .await
                .map_err(|e| resumable(e, change))?;
            let what = change.run.what(0).unwrap_or_default().to_string();
            applied.steps.insert(0, (what.clone(), prepare));
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

/// The change in batches of `table` under way, as `reader` sees it in
/// `snapshot` (the session's own: no other is taken).
pub async fn under_way_of(
    reader: &impl Reader,
    snapshot: &Snapshot,
    table: &str,
) -> Result<Option<UnderWay>, DbError> {
    let relation = snapshot.find_relation(table)?;
    let found = PgSession::over(reader.client())
        .under_way(&[relation.oid])
        .await?;
    Ok(found
        .into_iter()
        .find(|u| u.tables.first() == Some(&i64::from(relation.oid))))
}

/// [`under_way_of`] in a read-only session of its own.
pub async fn under_way_in(config: &Config, table: &str) -> Result<Option<UnderWay>, DbError> {
    let session = ReadOnly::open(config).await?;
    let snapshot = session.snapshot().await?;
    let found = under_way_of(&session, &snapshot, table).await?;
    session.close().await?;
    Ok(found)
}

/// Completes the change in batches `u` (found by [`under_way_of`]) from
/// its last committed step, new keys from `secret`; one process at a time
/// (another `--resume` of it is busy).
pub async fn resume(
    config: &Config,
    u: &UnderWay,
    secret: &[u8],
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Applied, DbError> {
    resume_on(&Postgres { config }, u, secret, progress).await
}

/// [`resume`] on any [`Database`].
async fn resume_on<D: Database>(
    db: &D,
    u: &UnderWay,
    secret: &[u8],
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Applied, DbError> {
    if u.legacy {
        return Err(u.resumed(DbError::refusal(
            "resume",
            Refusal::new(
                Reason::UnderWay,
                format!("a {} is under way ({})", u.what(), u.progress()),
            ),
        )));
    }
    let change = u.change()?;
    let at = Recorded {
        table: u.state_table.clone(),
        id: u.id,
        schema: change.schema.clone(),
    };
    let guard = guard::Guard::claim(db, &change, Some(&at)).await?;
    guard
        .session()
        .update(&at, io::StateUpdate::Claim(guard.pid))
        .await?;
    let mut applied = steps::run(db, &change, &at, secret, progress)
        .await
        .map_err(|e| resumable(e, &change))?;
    guard.release().await;
    applied.resumed_at_step = usize::try_from(u.step + 1).ok();
    applied.batch_checks();
    Ok(applied)
}

/// Gives up the change in batches `u` (found by [`under_way_of`]) while it
/// still can be (an online copy before its swap, as its plan's
/// [`crate::ops::GiveUp`] says): under its lock, the statements that drop
/// what its steps made, and its state removed, in one transaction; by one
/// process at a time (a run or `--resume` of it under way is busy). How
/// long it took.
pub async fn give_up(config: &Config, u: &UnderWay) -> Result<f64, DbError> {
    give_up_on(&Postgres { config }, u).await
}

/// [`give_up`] on any [`Database`].
async fn give_up_on<D: Database>(db: &D, u: &UnderWay) -> Result<f64, DbError> {
    let started = Instant::now();
    let change = u.change()?;
    let Run::Batches {
        give_up: Some(giving_up),
        ..
    } = &change.run
    else {
        return Err(u.resumed(DbError::refusal(
            "give up",
            Refusal::new(
                Reason::UnderWay,
                format!(
                    "the {} cannot be given up: its steps change the tables in place from the first batch",
                    u.what()
                ),
            ),
        )));
    };
    let at = Recorded {
        table: u.state_table.clone(),
        id: u.id,
        schema: change.schema.clone(),
    };
    let guard = guard::Guard::claim(db, &change, Some(&at)).await?;
    let session = guard.session();
    let given_up = async {
        locks::begin(session).await?;
        let Some(position) = session.position(&at).await? else {
            return Err(DbError::conflict(
                "give up",
                "the change's state was removed meanwhile",
            ));
        };
        if position.step > giving_up.before {
            return Err(u.resumed(DbError::refusal(
                "give up",
                Refusal::new(
                    Reason::UnderWay,
                    format!(
                        "the {} has done its step {} ({}), which changed the tables: it can only be completed",
                        u.what(),
                        giving_up.before + 1,
                        change.run.what(giving_up.before).unwrap_or_default()
                    ),
                ),
            )));
        }
        locks::take(session, &giving_up.lock).await?;
        for statement in &giving_up.statements {
            session.execute(statement).await?;
        }
        session.finish(&at).await?;
        session.execute("COMMIT").await
    }
    .await;
    if given_up.is_err() {
        steps::rollback(session).await;
    }
    guard.release().await;
    given_up.map(|()| started.elapsed().as_secs_f64())
}

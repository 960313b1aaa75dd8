//! A change in batches ([`crate::ops::Run::Batches`]): each step in its own
//! transaction, which locks the change's state row, runs the step and moves
//! the state to the next one before it commits — so a killed run leaves a
//! database that works under the old schema, and `--resume` goes on from
//! where it stopped. A step that cannot run in a transaction (an index
//! built concurrently) runs between two: what it made is found again by
//! its cleanup when a kill left it unrecorded.

use super::io::{Database, Session, StateUpdate};
use super::state::{Position, Recorded};
use super::{Applied, Progress};
use crate::ops::{BatchStep, ChangePlan, Lock, Operation, Planned, Run, SessionSetting};
use std::time::Instant;
use uuidforge_db::error::DbError;

/// Begins a change in batches: plans again inside the first step's
/// transaction (a database changed since `expected` was printed is
/// refused, unchanged), runs the first step and records the change; where
/// it is recorded, and how long that first step took.
pub(super) async fn start<O: Operation, D: Database>(
    db: &D,
    op: &O,
    expected: &O::Plan,
    pid: i32,
) -> Result<(Recorded, f64), DbError> {
    let mut tries = 0;
    loop {
        tries += 1;
        match try_start(db, op, expected, pid).await {
            Err(e) if tries < super::locks::TRIES && super::locks::lost(&e) => {
                // Rolled back with its connection: nothing was changed.
                super::locks::pause(tries).await;
            }
            done => return done,
        }
    }
}

async fn try_start<O: Operation, D: Database>(
    db: &D,
    op: &O,
    expected: &O::Plan,
    pid: i32,
) -> Result<(Recorded, f64), DbError> {
    let started = Instant::now();
    let Run::Batches { steps, session, .. } = &expected.change().run else {
        return Err(DbError::unreadable("plan", "not a change in batches"));
    };
    let Some(BatchStep::Transaction {
        lock, statements, ..
    }) = steps.first()
    else {
        return Err(DbError::unreadable("plan", "the plan has no first step"));
    };
    let tx = db.connect().await?;
    set_up(&tx, session).await?;
    super::locks::begin(&tx).await?;
    // Its locks first (super::locks); then the plan made again under them
    // (nothing can change between the comparison and the statements).
    match lock {
        Some(lock) => super::locks::take(&tx, lock).await?,
        None => super::locks::wait_briefly(&tx).await?,
    }
    let plan = super::plan_again(&tx, op, expected).await?;
    for statement in statements {
        tx.execute(statement).await?;
    }
    let at = tx.record(plan.change(), pid).await?;
    tx.execute("COMMIT").await?;
    Ok((at, started.elapsed().as_secs_f64()))
}

/// Makes the change's session settings on a new session, outside any
/// transaction (they last across the steps').
pub(super) async fn set_up(
    session: &impl Session,
    settings: &[SessionSetting],
) -> Result<(), DbError> {
    for s in settings {
        session.execute(&s.statement()).await?;
    }
    Ok(())
}

/// Begins a transaction holding the change's state row: the step it is
/// at (committed at once when the change is no longer recorded).
async fn locked(session: &impl Session, at: &Recorded) -> Result<Option<Position>, DbError> {
    super::locks::begin(session).await?;
    let position = session.position(at).await?;
    if position.is_none() {
        session.execute("COMMIT").await?;
    }
    Ok(position)
}

pub(super) async fn rollback(session: &impl Session) {
    let _ = session.execute("ROLLBACK").await;
}

/// Runs the steps left of `change` (recorded at `at`), then removes its
/// state. New keys come from `secret` (only a keys step uses it).
pub(super) async fn run<D: Database>(
    db: &D,
    change: &ChangePlan,
    at: &Recorded,
    secret: &[u8],
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Applied, DbError> {
    let Run::Batches {
        batch_size,
        steps,
        session: settings,
        ..
    } = &change.run
    else {
        return Err(DbError::unreadable("plan", "not a change in batches"));
    };
    let started = Instant::now();
    let mut applied = Applied::default();
    let session = db.connect().await?;
    set_up(&session, settings).await?;
    loop {
        let Some(position) = locked(&session, at).await? else {
            break;
        };
        let index = position.step;
        let Some(step) = steps.get(index) else {
            session.finish(at).await?;
            session.execute("COMMIT").await?;
            break;
        };
        progress(Progress::Step {
            index,
            total: steps.len(),
            what: step.what().to_string(),
        });
        let step_started = Instant::now();
        let how = How {
            db,
            settings,
            secret,
            batch_size: *batch_size,
        };
        match run_step(&how, &session, at, step, &position, progress).await {
            Ok(mut done) => {
                done.seconds = step_started.elapsed().as_secs_f64();
                applied.add(step, done)
            }
            Err(e) => {
                rollback(&session).await;
                return Err(e);
            }
        }
    }
    applied.seconds = started.elapsed().as_secs_f64();
    Ok(applied)
}

/// What one step did, for the report.
#[derive(Debug, Default)]
pub(super) struct StepDone {
    /// What a data action counted.
    pub counted: Option<(&'static str, u64)>,
    /// Backfill transactions.
    pub batches: u64,
    /// Seconds, for an exclusive step.
    pub exclusive: Option<f64>,
    /// Checks made.
    pub checks: Vec<String>,
    /// Seconds, the whole step.
    pub seconds: f64,
    /// Of the batches, the ranges checked for a mismatch of their own (a
    /// copy's), in parts run side by side.
    pub checked_ranges: u64,
    /// The parts run side by side, and how long each took.
    pub parts: Vec<(String, f64)>,
}

/// What every step of a run shares.
struct How<'a, D> {
    db: &'a D,
    settings: &'a [SessionSetting],
    secret: &'a [u8],
    batch_size: i64,
}

/// Runs `step` in the transaction `locked` opened (or, for what runs
/// outside one, after ending it), moves the state on and commits.
async fn run_step<D: Database>(
    how: &How<'_, D>,
    session: &D::Session,
    at: &Recorded,
    step: &BatchStep,
    position: &Position,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<StepDone, DbError> {
    let (secret, batch_size) = (how.secret, how.batch_size);
    let next = position.step + 1;
    let mut done = StepDone::default();
    match step {
        BatchStep::Transaction {
            lock,
            statements,
            exclusive,
            mark,
            replaces_tables,
            ..
        } => {
            let work = Work {
                lock: lock.as_ref(),
                statements,
                mark: mark.as_deref(),
                exclusive: *exclusive,
                replaces_tables: *replaces_tables,
            };
            let seconds = transaction(session, at, work, next).await?;
            if *exclusive {
                done.exclusive = Some(seconds);
            }
            return Ok(done);
        }
        BatchStep::Data(data) => {
            done.counted = Some(data.run(session, secret, &Default::default()).await?);
        }
        BatchStep::Backfill(backfill) => {
            session.execute("COMMIT").await?;
            done.batches =
                super::backfill::run(session, at, backfill, batch_size, progress).await?;
            if locked(session, at).await?.is_none() {
                return Ok(done);
            }
        }
        BatchStep::Beside {
            parts, sessions, ..
        } => {
            session.execute("COMMIT").await?;
            let beside = super::beside::Beside {
                at,
                step: position.step,
                parts,
                sessions: *sessions,
                marks: &position.marks,
                batch_size,
                settings: how.settings,
            };
            let tally = beside.run(how.db, session, progress).await?;
            done.batches = tally.ranges;
            done.checked_ranges = tally.checked_ranges;
            done.parts = tally.parts;
            if locked(session, at).await?.is_none() {
                return Ok(done);
            }
        }
        BatchStep::Concurrently {
            cleanup, statement, ..
        } => {
            session.execute("COMMIT").await?;
            // Building an index concurrently waits for older transactions
            // to end: a longer wait than a change's.
            for sql in [
                "SET lock_timeout = '60s'",
                cleanup,
                statement,
                "RESET lock_timeout",
            ] {
                session.execute(sql).await?;
            }
            if locked(session, at).await?.is_none() {
                return Ok(done);
            }
        }
        BatchStep::Check { what, sql, binds } => {
            done.checks = check(session, (what, sql, binds), &position.marks).await?;
        }
        BatchStep::Replay {
            what,
            statements,
            remaining,
            until,
            rounds,
        } => {
            session.execute("COMMIT").await?;
            done.batches =
                replay(session, at, (what, statements, remaining), *until, *rounds).await?;
            if locked(session, at).await?.is_none() {
                return Ok(done);
            }
        }
    }
    session.update(at, StateUpdate::Advance(next)).await?;
    session.execute("COMMIT").await?;
    Ok(done)
}

/// Runs a replay step's rounds, each in a transaction of its own holding
/// the change's state row, until at most `until` writes remain to carry
/// or `rounds` ran; how many ran. A round killed half-way rolls back: the
/// writes it took are carried by the next.
async fn replay(
    session: &impl Session,
    at: &Recorded,
    (what, statements, remaining): (&str, &[String], &str),
    until: i64,
    rounds: u32,
) -> Result<u64, DbError> {
    let mut ran = 0;
    while ran < u64::from(rounds) {
        let Some(_) = locked(session, at).await? else {
            return Ok(ran);
        };
        for sql in statements {
            if let Err(e) = session.execute(sql).await {
                rollback(session).await;
                return Err(e.within(what.to_string()));
            }
        }
        session.execute("COMMIT").await?;
        ran += 1;
        let left = session
            .read(&uuidforge_db::plan::Query::new(remaining), what)
            .await?;
        let left: i64 = left.trim().parse().map_err(|_| {
            DbError::unreadable(what.to_string(), format!("'{left}' is not a count"))
        })?;
        if left <= until {
            break;
        }
    }
    Ok(ran)
}

/// Runs a check step: every count zero, else the change stops here.
async fn check(
    session: &impl Session,
    (what, sql, binds): (&str, &str, &[String]),
    marks: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<String>, DbError> {
    let values: Vec<i64> = binds
        .iter()
        .map(|b| {
            marks.get(b).and_then(|m| m.parse().ok()).ok_or_else(|| {
                DbError::unreadable(
                    what.to_string(),
                    format!("no transaction id was recorded as '{b}'"),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let json = session
        .counts(sql, &values)
        .await
        .map_err(|e| e.within(what.to_string()))?;
    let (failed, checks) =
        super::counts::verification(&json).map_err(|e| e.within(what.to_string()))?;
    if !failed.is_empty() {
        return Err(DbError::verification_failed(
            format!("{what} (the change stopped here)"),
            failed,
        ));
    }
    Ok(checks)
}

/// A transaction step's work.
struct Work<'a> {
    lock: Option<&'a Lock>,
    statements: &'a [String],
    mark: Option<&'a str>,
    exclusive: bool,
    replaces_tables: bool,
}

/// Runs a step's statements in the transaction `locked` opened, with the
/// mark and the move to step `next`; its duration. An exclusive one waits
/// for its locks briefly and is tried again when it lost them
/// ([`super::locks`]): it never keeps writers queued long, and never makes
/// the server fail one of their transactions to break a deadlock.
async fn transaction(
    session: &impl Session,
    at: &Recorded,
    work: Work<'_>,
    next: usize,
) -> Result<f64, DbError> {
    let Work {
        lock,
        statements,
        mark,
        exclusive,
        replaces_tables,
    } = work;
    let mut tries = 0;
    loop {
        tries += 1;
        let started = Instant::now();
        let mut result = match (lock, exclusive) {
            (Some(lock), _) => super::locks::take(session, lock).await,
            (None, true) => super::locks::wait_briefly(session).await,
            (None, false) => Ok(()),
        };
        for statement in statements {
            if result.is_err() {
                break;
            }
            result = session.execute(statement).await;
        }
        if let (Ok(()), Some(mark)) = (&result, mark) {
            result = session
                .update(at, StateUpdate::Mark(mark.to_string()))
                .await;
        }
        if result.is_ok() && replaces_tables {
            result = session.update(at, StateUpdate::TablesByName).await;
        }
        if result.is_ok() {
            result = session.update(at, StateUpdate::Advance(next)).await;
        }
        match result {
            Ok(()) => {
                session.execute("COMMIT").await?;
                return Ok(started.elapsed().as_secs_f64());
            }
            Err(e) => {
                rollback(session).await;
                if !(exclusive && tries < super::locks::TRIES && super::locks::lost(&e)) {
                    return Err(e);
                }
                super::locks::pause(tries).await;
                if locked(session, at).await?.is_none() {
                    return Err(DbError::conflict(
                        "resume",
                        "the change's state was removed while it ran",
                    ));
                }
            }
        }
    }
}

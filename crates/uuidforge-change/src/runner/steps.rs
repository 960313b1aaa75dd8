//! A change in batches ([`crate::ops::Run::Batches`]): each step in its own
//! transaction, which locks the change's state row, runs the step and moves
//! the state to the next one before it commits — so a killed run leaves a
//! database that works under the old schema, and `--resume` goes on from
//! where it stopped.

use super::state::{self, Position};
use super::{Applied, Progress};
use uuidforge_db::client::{Change, DbError};
use crate::ops::{BatchStep, ChangePlan, Lock, Operation, Planned, Run};
use std::time::Instant;
use tokio_postgres::{Client, Config};

/// Where a change in batches is recorded: its state table and row.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The state table (quoted, qualified).
    pub table: String,
    /// The row.
    pub id: i64,
    /// The schema it is in.
    pub schema: String,
}

/// Begins a change in batches: plans again inside the first step's
/// transaction (a database changed since `expected` was printed is
/// refused, unchanged), runs the first step and records the change; where
/// it is recorded, and how long that first step took.
pub(super) async fn start<O: Operation>(
    config: &Config,
    op: &O,
    expected: &O::Plan,
    pid: i32,
) -> Result<(Recorded, f64), DbError> {
    let mut tries = 0;
    loop {
        tries += 1;
        match try_start(config, op, expected, pid).await {
            Err(e) if tries < super::locks::TRIES && super::locks::lost(&e) => {
                // Rolled back with its connection: nothing was changed.
                super::locks::pause(tries).await;
            }
            done => return done,
        }
    }
}

async fn try_start<O: Operation>(
    config: &Config,
    op: &O,
    expected: &O::Plan,
    pid: i32,
) -> Result<(Recorded, f64), DbError> {
    let started = Instant::now();
    let Run::Batches { steps, .. } = &expected.change().run else {
        return Err(DbError::unreadable("plan", "not a change in batches"));
    };
    let Some(BatchStep::Transaction {
        lock, statements, ..
    }) = steps.first()
    else {
        return Err(DbError::unreadable("plan", "the plan has no first step"));
    };
    let tx = Change::begin(config).await?;
    // Its locks first (super::locks); then the plan made again under them
    // (nothing can change between the comparison and the statements).
    match lock {
        Some(lock) => super::locks::take(tx.client(), lock).await?,
        None => super::locks::wait_briefly(tx.client()).await?,
    }
    let plan = super::plan_again(&tx, op, expected).await?;
    let change = plan.change();
    for statement in statements {
        tx.execute(statement).await?;
    }
    let (table, id) = state::record(tx.client(), change, pid).await?;
    tx.commit().await?;
    Ok((
        Recorded {
            table,
            id,
            schema: change.schema.clone(),
        },
        started.elapsed().as_secs_f64(),
    ))
}

/// Begins a transaction with a change's lock timeout.
pub(super) async fn begin(client: &Client) -> Result<(), DbError> {
    client
        .batch_execute(&format!(
            "BEGIN; SET LOCAL lock_timeout = {}",
            uuidforge_ident::quote_literal(uuidforge_db::client::LOCK_TIMEOUT)
        ))
        .await
        .map_err(|e| DbError::new("begin", e))
}

pub(super) async fn commit(client: &Client) -> Result<(), DbError> {
    client
        .batch_execute("COMMIT")
        .await
        .map_err(|e| DbError::new("commit", e))
}

pub(super) async fn rollback(client: &Client) {
    let _ = client.batch_execute("ROLLBACK").await;
}

/// A transaction holding the change's state row: the step it is at.
async fn locked(client: &Client, at: &Recorded) -> Result<Option<Position>, DbError> {
    begin(client).await?;
    let position = state::lock(client, &at.table, at.id).await?;
    if position.is_none() {
        commit(client).await?;
    }
    Ok(position)
}

/// Runs the steps left of `change` (recorded at `at`), then removes its
/// state. New keys come from `secret` (only the keys step uses it).
pub(super) async fn run(
    config: &Config,
    change: &ChangePlan,
    at: &Recorded,
    secret: &[u8],
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Applied, DbError> {
    let Run::Batches { batch_size, steps } = &change.run else {
        return Err(DbError::unreadable("plan", "not a change in batches"));
    };
    let started = Instant::now();
    let mut applied = Applied::default();
    let client = uuidforge_db::client::connect(config).await?;
    loop {
        let Some(position) = locked(&client, at).await? else {
            break;
        };
        let index = position.step;
        let Some(step) = steps.get(index) else {
            state::finish(&client, &at.table, &at.schema, at.id).await?;
            commit(&client).await?;
            break;
        };
        progress(Progress::Step {
            index,
            total: steps.len(),
            what: step.what().to_string(),
        });
        let outcome = run_step(&client, at, step, &position, secret, *batch_size, progress).await;
        match outcome {
            Ok(done) => {
                applied.add(step, done);
            }
            Err(e) => {
                rollback(&client).await;
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
    /// Rows keyed.
    pub keyed: usize,
    /// Backfill transactions.
    pub batches: u64,
    /// Seconds, for an exclusive step.
    pub exclusive: Option<f64>,
    /// Checks made.
    pub checks: Vec<String>,
}

/// Runs `step` in the transaction `locked` opened (or, for what runs
/// outside one, after ending it), moves the state on and commits.
async fn run_step(
    client: &Client,
    at: &Recorded,
    step: &BatchStep,
    position: &Position,
    secret: &[u8],
    batch_size: i64,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<StepDone, DbError> {
    let next = position.step + 1;
    let mut done = StepDone::default();
    match step {
        BatchStep::Transaction {
            lock,
            statements,
            exclusive,
            mark,
            ..
        } => {
            let work = Work {
                lock: lock.as_ref(),
                statements,
                mark: mark.as_deref(),
                exclusive: *exclusive,
            };
            let seconds = transaction(client, at, work, next).await?;
            if *exclusive {
                done.exclusive = Some(seconds);
            }
            return Ok(done);
        }
        BatchStep::Keys(keys) => {
            done.keyed = keys.fill(client, secret).await?;
        }
        BatchStep::Backfill(backfill) => {
            commit(client).await?;
            done.batches = super::backfill::run(client, at, backfill, batch_size, progress).await?;
            if locked(client, at).await?.is_none() {
                return Ok(done);
            }
        }
        BatchStep::Concurrently {
            cleanup, statement, ..
        } => {
            commit(client).await?;
            // Building an index concurrently waits for older transactions
            // to end: a longer wait than a change's.
            for sql in [
                "SET lock_timeout = '60s'",
                cleanup,
                statement,
                "RESET lock_timeout",
            ] {
                client
                    .batch_execute(sql)
                    .await
                    .map_err(|e| DbError::new(sql.to_string(), e))?;
            }
            if locked(client, at).await?.is_none() {
                return Ok(done);
            }
        }
        BatchStep::Check { what, sql, binds } => {
            done.checks = check(client, (what, sql, binds), &position.marks).await?;
        }
    }
    state::advance(client, &at.table, at.id, next).await?;
    commit(client).await?;
    Ok(done)
}

/// Runs a check step: every count zero, else the change stops here.
async fn check(
    client: &Client,
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
    let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = values
        .iter()
        .map(|v| v as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let json: Option<String> = client
        .query_one(sql, &params)
        .await
        .map_err(|e| DbError::new(what.to_string(), e))?
        .get(0);
    let (failed, checks) = crate::ops::key::checks::verification(&json.unwrap_or_default())
        .map_err(|e| e.within(what.to_string()))?;
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
}

/// Runs a step's statements in the transaction `locked` opened, with the
/// mark and the move to step `next`; its duration. An exclusive one waits
/// for its locks briefly and is tried again when it lost them
/// ([`super::locks`]): it never keeps writers queued long, and never makes
/// the server fail one of their transactions to break a deadlock.
async fn transaction(
    client: &Client,
    at: &Recorded,
    work: Work<'_>,
    next: usize,
) -> Result<f64, DbError> {
    let Work {
        lock,
        statements,
        mark,
        exclusive,
    } = work;
    let mut tries = 0;
    loop {
        tries += 1;
        let started = Instant::now();
        let mut result = match (lock, exclusive) {
            (Some(lock), _) => super::locks::take(client, lock).await,
            (None, true) => super::locks::wait_briefly(client).await,
            (None, false) => Ok(()),
        };
        for statement in statements {
            if result.is_err() {
                break;
            }
            result = client
                .batch_execute(statement)
                .await
                .map_err(|e| DbError::new(statement.clone(), e));
        }
        if let (Ok(()), Some(mark)) = (&result, mark) {
            result = state::mark(client, &at.table, at.id, mark).await;
        }
        if result.is_ok() {
            result = state::advance(client, &at.table, at.id, next).await;
        }
        match result {
            Ok(()) => {
                commit(client).await?;
                return Ok(started.elapsed().as_secs_f64());
            }
            Err(e) => {
                rollback(client).await;
                if !(exclusive && tries < super::locks::TRIES && super::locks::lost(&e)) {
                    return Err(e);
                }
                super::locks::pause(tries).await;
                if locked(client, at).await?.is_none() {
                    return Err(DbError::conflict(
                        "resume",
                        "the change's state was removed while it ran",
                    ));
                }
            }
        }
    }
}

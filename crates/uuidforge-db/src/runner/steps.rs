//! A change in steps ([`crate::ops::Mode::Steps`], a key migration in
//! batches): each step in its own transaction, its completion recorded in
//! the state table in that same transaction, so that a killed run leaves a
//! database that works under the old schema and [`resume`] goes on from
//! where it stopped.

use crate::client::{Change, DbError};
use crate::ops::migrate_batched::{state, BACKFILL_SETTING, STATE_TABLE};
use crate::ops::{ChangePlan, Mode, Operation, Planned, Step};
use std::time::Instant;
use tokio_postgres::Config;

/// How many times the swap is tried when it waits too long for its locks.
const SWAP_TRIES: u32 = 5;

/// Where a change in steps stands, as its state table says.
#[derive(Debug, Clone)]
pub struct BatchedState {
    /// The change recorded when it began.
    pub plan: ChangePlan,
    /// The next step (index into `plan.steps`).
    pub step: usize,
    /// Rows per batch.
    pub batch_size: i64,
}

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

/// What a run of steps did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct StepsOutcome {
    /// Rows given a key from the map in this run.
    pub keyed_rows: usize,
    /// Backfill transactions.
    pub batches: u64,
    /// Each step that locked writers out and how long its transaction
    /// took, waiting for its locks included.
    pub exclusive: Vec<(String, f64)>,
    /// The longest of those.
    pub longest_exclusive_seconds: f64,
    /// The checks of the last check step, each `name: 0`.
    pub checks: Vec<String>,
    /// The whole run.
    pub seconds: f64,
}

/// The state of `table`'s batched migration, if one is under way.
pub async fn batched_state(config: &Config, table: &str) -> Result<Option<BatchedState>, DbError> {
    let change = Change::begin(config).await?;
    let snapshot = change.snapshot().await?;
    // As the user wrote it, or quoted and qualified as a plan names it:
    // both read the same as psql reads names.
    let relation = snapshot.find_relation(table)?;
    let state_table = crate::ident::qualified(&relation.schema, STATE_TABLE);
    let exists: Option<String> = change
        .client()
        .query_one("SELECT to_regclass($1)::text", &[&state_table])
        .await
        .map_err(|e| DbError::new("read the migration state", e))?
        .get(0);
    if exists.is_none() {
        return Ok(None);
    }
    read_state(change.client(), &state_table, &relation.sql_name()).await
}

async fn read_state(
    client: &tokio_postgres::Client,
    state_table: &str,
    table: &str,
) -> Result<Option<BatchedState>, DbError> {
    let row = client
        .query_opt(&state::read(state_table), &[&table])
        .await
        .map_err(|e| DbError::new("read the migration state", e))?;
    let Some(row) = row else { return Ok(None) };
    let plan: ChangePlan = serde_json::from_str(row.get::<_, &str>(0)).map_err(|e| {
        DbError::unreadable(
            "read the migration state",
            format!("the recorded plan does not parse: {e}"),
        )
    })?;
    let step: i32 = row.get(1);
    let batch_size: i32 = row.get(4);
    Ok(Some(BatchedState {
        plan,
        step: usize::try_from(step).unwrap_or(0),
        batch_size: i64::from(batch_size),
    }))
}

/// Begins a change in steps: plans again inside the first step's
/// transaction (a database changed since `expected` was printed is
/// refused, unchanged), runs the first step and records the state; how
/// long that first step took.
pub(super) async fn start<O: Operation>(
    config: &Config,
    op: &O,
    expected: &O::Plan,
) -> Result<f64, DbError> {
    let started = Instant::now();
    let tx = Change::begin(config).await?;
    let plan = super::plan_again(&tx, op, expected).await?;
    let change = plan.change();
    let Mode::Steps {
        state_table,
        table,
        batch_size,
    } = &change.mode
    else {
        return Err(DbError::unreadable("plan", "not a change in steps"));
    };
    let Some(Step::Transaction { statements, .. }) = change.steps.first() else {
        return Err(DbError::unreadable("plan", "the plan has no first step"));
    };
    for statement in statements {
        tx.execute(statement).await?;
    }
    let json =
        serde_json::to_string(change).map_err(|e| DbError::unreadable("plan", e.to_string()))?;
    let batch = i32::try_from(*batch_size).map_err(|_| {
        DbError::invalid(
            "batch-size",
            format!("{batch_size} is too large (expected at most 2147483647)"),
        )
    })?;
    tx.client()
        .execute(&state::insert(state_table), &[table, &json, &batch])
        .await
        .map_err(|e| DbError::new("record the migration state", e))?;
    tx.commit().await?;
    Ok(started.elapsed().as_secs_f64())
}

/// Runs the steps left of `table`'s change in steps, then removes its
/// state. New keys come from `secret` (only the *keys* step uses it).
pub async fn resume(
    config: &Config,
    table: &str,
    secret: &[u8],
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<StepsOutcome, DbError> {
    let started = Instant::now();
    let mut outcome = StepsOutcome::default();
    let Some(first) = batched_state(config, table).await? else {
        return Err(DbError::invalid(
            "resume",
            format!("no batched migration of {table} is under way"),
        ));
    };
    let plan = first.plan;
    let Mode::Steps {
        state_table,
        table: name,
        ..
    } = plan.mode.clone()
    else {
        return Err(DbError::unreadable(
            "resume",
            "the recorded plan is not in steps",
        ));
    };
    let client = crate::client::connect(config).await?;
    loop {
        let Some(current) = read_state(&client, &state_table, &name).await? else {
            break;
        };
        let index = current.step;
        let Some(step) = plan.steps.get(index) else {
            begin(&client).await?;
            for sql in state::finish(&state_table) {
                let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = if sql.contains("$1")
                {
                    vec![&name]
                } else {
                    vec![]
                };
                client
                    .execute(&sql, &params)
                    .await
                    .map_err(|e| DbError::new("remove the migration state", e))?;
            }
            commit(&client).await?;
            break;
        };
        progress(Progress::Step {
            index,
            total: plan.steps.len(),
            what: step.what().to_string(),
        });
        let done = Advance {
            sql: state::advance(&state_table),
            name: &name,
            next: i32::try_from(index + 1).unwrap_or(i32::MAX),
        };
        match step {
            Step::Transaction {
                what,
                statements,
                exclusive,
            } => {
                let seconds = transaction(&client, statements, &done, *exclusive).await?;
                if *exclusive {
                    outcome.exclusive.push((what.clone(), seconds));
                }
            }
            Step::Keys { read, map, ordered } => {
                begin(&client).await?;
                let rows = crate::client::text_and_times(&client, read).await?;
                let keys = crate::ops::migrate_key::new_keys(&rows, *ordered, secret)?;
                crate::client::copy_key_map(&client, map, &rows, &keys).await?;
                done.record(&client).await?;
                commit(&client).await?;
                outcome.keyed_rows += rows.len();
            }
            Step::Backfill { table, .. } => {
                outcome.batches += backfill(
                    &client,
                    (&state_table, &name),
                    table,
                    step,
                    current.batch_size,
                    progress,
                )
                .await?;
                begin(&client).await?;
                done.record(&client).await?;
                commit(&client).await?;
            }
            Step::Concurrently {
                cleanup, statement, ..
            } => {
                // Building an index concurrently waits for older
                // transactions to end: a longer wait than a change's.
                for sql in ["SET lock_timeout = '60s'", cleanup, statement] {
                    client
                        .batch_execute(sql)
                        .await
                        .map_err(|e| DbError::new(sql.to_string(), e))?;
                }
                begin(&client).await?;
                done.record(&client).await?;
                commit(&client).await?;
            }
            Step::Run { .. } | Step::Expect { .. } | Step::Implicit(_) => {
                return Err(DbError::unreadable(
                    "plan",
                    format!("step '{}' runs only in one transaction", step.what()),
                ))
            }
            Step::Check { what, sql } => {
                begin(&client).await?;
                let json: Option<String> = client
                    .query_one(sql.as_str(), &[])
                    .await
                    .map_err(|e| DbError::new(what.clone(), e))?
                    .get(0);
                let (failed, checks) =
                    crate::ops::migrate_key::verification(&json.unwrap_or_default())
                        .map_err(|e| e.within(what.clone()))?;
                if !failed.is_empty() {
                    return Err(DbError::verification_failed(
                        format!("{what} (the migration stopped here: fix and --resume)"),
                        failed,
                    ));
                }
                done.record(&client).await?;
                commit(&client).await?;
                outcome.checks = checks;
            }
        }
    }
    outcome.longest_exclusive_seconds = outcome
        .exclusive
        .iter()
        .map(|(_, s)| *s)
        .fold(0.0, f64::max);
    if outcome.batches > 0 {
        // Each batch compared its rows' other columns before committing.
        outcome.checks.push(format!(
            "other columns changed by the backfill ({} batches, each checked): 0",
            outcome.batches
        ));
    }
    outcome.seconds = started.elapsed().as_secs_f64();
    Ok(outcome)
}

/// Begins a transaction with a change's lock timeout.
async fn begin(client: &tokio_postgres::Client) -> Result<(), DbError> {
    client
        .batch_execute(&format!(
            "BEGIN; SET LOCAL lock_timeout = {}",
            crate::ident::quote_literal(crate::client::LOCK_TIMEOUT)
        ))
        .await
        .map_err(|e| DbError::new("begin", e))
}

async fn commit(client: &tokio_postgres::Client) -> Result<(), DbError> {
    client
        .batch_execute("COMMIT")
        .await
        .map_err(|e| DbError::new("commit", e))
}

/// Moves the state to the next step, inside the step's transaction.
struct Advance<'a> {
    sql: String,
    name: &'a str,
    next: i32,
}

impl Advance<'_> {
    async fn record(&self, client: &tokio_postgres::Client) -> Result<(), DbError> {
        client
            .execute(&self.sql, &[&self.name, &self.next])
            .await
            .map_err(|e| DbError::new("record the migration state", e))?;
        Ok(())
    }
}

/// Runs `statements` and the step's advance in one transaction; its
/// duration. An exclusive one is tried again when it waited too long for
/// its locks (it never keeps writers queued longer than the lock timeout).
async fn transaction(
    client: &tokio_postgres::Client,
    statements: &[String],
    done: &Advance<'_>,
    exclusive: bool,
) -> Result<f64, DbError> {
    let mut tries = 0;
    loop {
        tries += 1;
        let started = Instant::now();
        begin(client).await?;
        let mut result = Ok(());
        for statement in statements {
            result = client
                .batch_execute(statement)
                .await
                .map_err(|e| DbError::new(statement.clone(), e));
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = done.record(client).await;
        }
        match result {
            Ok(()) => {
                commit(client).await?;
                return Ok(started.elapsed().as_secs_f64());
            }
            Err(e) => {
                client
                    .batch_execute("ROLLBACK")
                    .await
                    .map_err(|e| DbError::new("rollback", e))?;
                if !(exclusive && tries < SWAP_TRIES && e.sqlstate() == Some("55P03")) {
                    return Err(e);
                }
                tokio::time::sleep(std::time::Duration::from_millis(200 * u64::from(tries))).await;
            }
        }
    }
}

/// Fills one new column batch by batch, recording after each batch where
/// to go on; the number of batches run.
/// One batch of a [`Step::Backfill`], pages `from..until`, in a
/// transaction left open for the caller to record and commit: the table's
/// triggers quiet, the rows to fill locked with their other columns read,
/// those rows updated, the triggers back, and the other columns compared.
async fn fill_batch(
    client: &tokio_postgres::Client,
    step: &Step,
    (from, until): (i64, i64),
) -> Result<(), DbError> {
    let Step::Backfill {
        table,
        update_sql,
        before_sql,
        checked,
        quiet,
        restore,
        ..
    } = step
    else {
        return Err(DbError::unreadable("plan", "a backfill step expected"));
    };
    let what = || format!("fill {table} pages {from}..{until}");
    begin(client).await?;
    client
        .batch_execute(&format!("SET LOCAL {BACKFILL_SETTING} = 'on'"))
        .await
        .map_err(|e| DbError::new("begin", e))?;
    for sql in quiet {
        client
            .batch_execute(sql)
            .await
            .map_err(|e| DbError::new(sql.clone(), e))?;
    }
    if *checked {
        let row = client
            .query_one(update_sql, &[&from, &until])
            .await
            .map_err(|e| DbError::new(what(), e))?;
        let (filled, changed): (i64, i64) = (row.get(0), row.get(1));
        restore_triggers(client, restore).await?;
        return changed_rows(&what(), changed, filled);
    }
    let Some(before_sql) = before_sql else {
        // A plan recorded by an earlier version: the range, unchecked.
        client
            .execute(update_sql, &[&from, &until])
            .await
            .map_err(|e| DbError::new(what(), e))?;
        return Ok(());
    };
    let locked = client
        .query(before_sql, &[&from, &until])
        .await
        .map_err(|e| DbError::new(what(), e))?;
    let ctids: Vec<String> = locked.iter().map(|r| r.get(0)).collect();
    let mut before: Vec<String> = locked.iter().map(|r| r.get(1)).collect();
    before.sort_unstable();
    let mut after: Vec<String> = client
        .query(update_sql, &[&ctids])
        .await
        .map_err(|e| DbError::new(what(), e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    after.sort_unstable();
    restore_triggers(client, restore).await?;
    let changed = if before == after {
        0
    } else {
        before
            .iter()
            .filter(|h| after.binary_search(h).is_err())
            .count()
            .max(1)
    };
    changed_rows(&what(), changed as i64, before.len() as i64)
}

/// Puts the user triggers back (`restore` of a backfill step).
async fn restore_triggers(
    client: &tokio_postgres::Client,
    restore: &[String],
) -> Result<(), DbError> {
    for sql in restore {
        client
            .batch_execute(sql)
            .await
            .map_err(|e| DbError::new(sql.clone(), e))?;
    }
    Ok(())
}

/// A batch whose update changed other columns of `changed` of its `rows`
/// rows fails its verification (the caller rolls it back).
fn changed_rows(what: &str, changed: i64, rows: i64) -> Result<(), DbError> {
    if changed == 0 {
        return Ok(());
    }
    Err(DbError::verification_failed(
        format!("verify {what} (this batch was not committed)"),
        vec![format!(
            "other columns changed by the update: {changed} of {rows} rows (a trigger the plan did not quiet?)"
        )],
    ))
}

async fn backfill(
    client: &tokio_postgres::Client,
    (state_table, name): (&str, &str),
    table: &str,
    step: &Step,
    batch_size: i64,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<u64, DbError> {
    let row = client
        .query_one(
            "SELECT (pg_relation_size(c.oid) / current_setting('block_size')::int8)::int8, \
             CASE WHEN c.reltuples > 0 AND c.relpages > 0 THEN c.reltuples / c.relpages ELSE 100 END::float8 \
             FROM pg_class c WHERE c.oid = $1::text::regclass",
            &[&table],
        )
        .await
        .map_err(|e| DbError::new(format!("measure {table}"), e))?;
    let pages_now: i64 = row.get(0);
    let rows_per_page: f64 = row.get(1);
    let per_batch = ((batch_size as f64 / rows_per_page.max(1.0)).floor() as i64).max(1);
    let recorded = client
        .query_one(
            &format!("SELECT next_block, end_block FROM {state_table} WHERE table_name = $1"),
            &[&name],
        )
        .await
        .map_err(|e| DbError::new("read the migration state", e))?;
    // Pages added after the backfill began hold rows the triggers wrote.
    let end: i64 = recorded.get::<_, Option<i64>>(1).unwrap_or(pages_now);
    let mut next: i64 = recorded.get::<_, Option<i64>>(0).unwrap_or(0);
    let record = state::progress(state_table);
    let mut batches = 0;
    progress(Progress::Pages {
        done: next as u64,
        total: end as u64,
    });
    while next < end {
        let until = (next + per_batch).min(end);
        if let Err(e) = fill_batch(client, step, (next, until)).await {
            let _ = client.batch_execute("ROLLBACK").await;
            return Err(e);
        }
        client
            .execute(&record, &[&name, &until, &end])
            .await
            .map_err(|e| DbError::new("record the migration state", e))?;
        commit(client).await?;
        batches += 1;
        next = until;
        progress(Progress::Pages {
            done: next as u64,
            total: end as u64,
        });
    }
    Ok(batches)
}

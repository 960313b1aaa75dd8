//! A backfill step: one new column filled range of pages by range of
//! pages, one transaction each, that locks the change's state row, fills
//! the range checking that no other column of its rows changed, and records
//! where to go on.

use super::state;
use super::steps::{begin, commit, rollback, Recorded};
use super::Progress;
use uuidforge_db::client::DbError;
use crate::ops::key::BACKFILL_SETTING;
use crate::ops::Backfill;
use tokio_postgres::Client;

/// The pages of `table` now, and its rows per page (an estimate).
async fn measure(client: &Client, table: &str) -> Result<(i64, f64), DbError> {
    let row = client
        .query_one(
            "SELECT (pg_relation_size(c.oid) / current_setting('block_size')::int8)::int8, \
             CASE WHEN c.reltuples > 0 AND c.relpages > 0 THEN c.reltuples / c.relpages ELSE 100 END::float8 \
             FROM pg_class c WHERE c.oid = $1::text::regclass",
            &[&table],
        )
        .await
        .map_err(|e| DbError::new(format!("measure {table}"), e))?;
    Ok((row.get(0), row.get(1)))
}

/// Fills `step`'s table batch by batch, recording after each batch where
/// to go on; the number of batches run.
pub(super) async fn run(
    client: &Client,
    at: &Recorded,
    step: &Backfill,
    batch_size: i64,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<u64, DbError> {
    let (pages_now, rows_per_page) = measure(client, &step.table).await?;
    let per_batch = ((batch_size as f64 / rows_per_page.max(1.0)).floor() as i64).max(1);
    let mut batches = 0;
    loop {
        begin(client).await?;
        let Some(position) = state::lock(client, &at.table, at.id).await? else {
            commit(client).await?;
            return Ok(batches);
        };
        // Pages added after the backfill began hold rows the triggers wrote.
        let end = position.end_block.unwrap_or(pages_now);
        let next = position.next_block.unwrap_or(0);
        progress(Progress::Pages {
            done: next as u64,
            total: end as u64,
        });
        if next >= end {
            commit(client).await?;
            return Ok(batches);
        }
        let until = (next + per_batch).min(end);
        if let Err(e) = fill(client, step, (next, until)).await {
            rollback(client).await;
            return Err(e);
        }
        state::progress(client, &at.table, at.id, (until, end)).await?;
        commit(client).await?;
        batches += 1;
    }
}

/// One batch of a backfill, pages `from..until`, in the transaction the
/// caller opened: the table's triggers quiet, the rows filled and their
/// other columns compared in one statement, the triggers back.
async fn fill(client: &Client, step: &Backfill, (from, until): (i64, i64)) -> Result<(), DbError> {
    let what = || format!("fill {} pages {from}..{until}", step.table);
    client
        .batch_execute(&format!("SET LOCAL {BACKFILL_SETTING} = 'on'"))
        .await
        .map_err(|e| DbError::new("begin", e))?;
    for sql in &step.quiet {
        client
            .batch_execute(sql)
            .await
            .map_err(|e| DbError::new(sql.clone(), e))?;
    }
    let row = client
        .query_one(&step.update_sql, &[&from, &until])
        .await
        .map_err(|e| DbError::new(what(), e))?;
    let (filled, changed): (i64, i64) = (row.get(0), row.get(1));
    for sql in &step.restore {
        client
            .batch_execute(sql)
            .await
            .map_err(|e| DbError::new(sql.clone(), e))?;
    }
    if changed == 0 {
        return Ok(());
    }
    Err(DbError::verification_failed(
        format!("verify {} (this batch was not committed)", what()),
        vec![format!(
            "other columns changed by the update: {changed} of {filled} rows (a trigger the plan did not quiet?)"
        )],
    ))
}

//! A backfill step: one new column filled range of pages by range of
//! pages, one transaction each, that locks the change's state row, fills
//! the range checking that no other column of its rows changed, and records
//! where to go on.

use super::io::{Session, StateUpdate};
use super::state::Recorded;
use super::steps::rollback;
use super::Progress;
use crate::ops::key::BACKFILL_SETTING;
use crate::ops::Backfill;
use uuidforge_db::error::DbError;

/// Fills `step`'s table batch by batch, recording after each batch where
/// to go on; the number of batches run.
pub(super) async fn run(
    client: &impl Session,
    at: &Recorded,
    step: &Backfill,
    batch_size: i64,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<u64, DbError> {
    let (pages_now, rows_per_page) = client.pages(&step.table).await?;
    let per_batch = pages_per_batch(batch_size, rows_per_page);
    let mut batches = 0;
    loop {
        super::locks::begin(client).await?;
        let Some(position) = client.position(at).await? else {
            client.execute("COMMIT").await?;
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
            client.execute("COMMIT").await?;
            return Ok(batches);
        }
        let until = (next + per_batch).min(end);
        if let Err(e) = fill(client, step, (next, until)).await {
            rollback(client).await;
            return Err(e);
        }
        client.update(at, StateUpdate::Pages(until, end)).await?;
        client.execute("COMMIT").await?;
        batches += 1;
    }
}

/// The pages a range of about `batch_size` rows spans.
pub(super) fn pages_per_batch(batch_size: i64, rows_per_page: f64) -> i64 {
    ((batch_size as f64 / rows_per_page.max(1.0)).floor() as i64).max(1)
}

/// One batch of a backfill, pages `from..until`, in the transaction the
/// caller opened: the table's triggers quiet, the rows filled and their
/// other columns compared in one statement, the triggers back.
pub(super) async fn fill(
    client: &impl Session,
    step: &Backfill,
    (from, until): (i64, i64),
) -> Result<(), DbError> {
    let what = || format!("fill {} pages {from}..{until}", step.table);
    client
        .execute(&format!("SET LOCAL {BACKFILL_SETTING} = 'on'"))
        .await?;
    for sql in &step.quiet {
        client.execute(sql).await?;
    }
    let (filled, changed) = client
        .fill(&step.update_sql, from, until)
        .await
        .map_err(|e| e.within(what()))?;
    for sql in &step.restore {
        client.execute(sql).await?;
    }
    if changed == 0 {
        return Ok(());
    }
    let why = step
        .mismatch
        .as_deref()
        .unwrap_or("other columns changed by the update (a trigger the plan did not quiet?)");
    Err(DbError::verification_failed(
        format!("verify {} (this batch was not committed)", what()),
        vec![format!("{why}: {changed} of {filled} rows")],
    ))
}

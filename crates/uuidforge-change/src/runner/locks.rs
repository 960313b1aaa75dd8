//! How a change takes its locks beside the application, whose
//! transactions take the same tables in an order of their own. A change
//! that took some tables and waited for the next one while a writer held
//! that one and waited for the first would deadlock, and the server would
//! fail one of the two — possibly the application's. So the runner never
//! waits while it holds any of them: it takes each table `NOWAIT`, in
//! order; when one is busy it lets go of all of them (a savepoint rolled
//! back), waits for that one alone — briefly, less than the server's
//! `deadlock_timeout`, so writers queue behind it for that long at most —
//! and starts again from it (the order learns which table the application
//! takes first). A wait that times out is followed by a pause and another
//! round; everything else a step locking writers out does also waits
//! briefly, and a step that loses its locks anyway is rolled back, having
//! changed nothing, and tried again.

use uuidforge_db::client::DbError;
use crate::ops::Lock;
use tokio_postgres::Client;

/// How many times a step that locks writers out is tried.
pub(super) const TRIES: u32 = 20;

/// The shortest and longest brief wait, in milliseconds.
const BRIEF_MS: (i64, i64) = (20, 1000);

/// Whether `e` is a lock lost to others (waited longer than the lock
/// timeout, or chosen to break a deadlock): nothing was changed, and
/// trying again is safe.
pub(super) fn lost(e: &DbError) -> bool {
    matches!(e.sqlstate(), Some("55P03" | "40P01"))
}

/// Makes the transaction on `client` wait for any lock at most half the
/// server's `deadlock_timeout` (between 20 ms and 1 s).
pub(super) async fn wait_briefly(client: &Client) -> Result<(), DbError> {
    let deadlock_ms: i64 = client
        .query_one(
            "SELECT setting::int8 FROM pg_settings WHERE name = 'deadlock_timeout'",
            &[],
        )
        .await
        .map_err(|e| DbError::new("read deadlock_timeout", e))?
        .get(0);
    let ms = (deadlock_ms / 2).clamp(BRIEF_MS.0, BRIEF_MS.1);
    client
        .batch_execute(&format!("SET LOCAL lock_timeout = '{ms}ms'"))
        .await
        .map_err(|e| DbError::new("set the lock timeout", e))
}

/// Makes the transaction on `client` wait for locks as every change does
/// (the statements after the locks are taken).
pub(super) async fn wait_normally(client: &Client) -> Result<(), DbError> {
    client
        .batch_execute(&format!(
            "SET LOCAL lock_timeout = {}",
            uuidforge_ident::quote_literal(uuidforge_db::client::LOCK_TIMEOUT)
        ))
        .await
        .map_err(|e| DbError::new("set the lock timeout", e))
}

/// The pause after try `tries` lost its locks: growing to about a second,
/// with a random part so that two changes do not retry in step.
pub(super) async fn pause(tries: u32) {
    use uuidforge::generator::RandSource;
    let jitter = uuidforge::generator::OsCsprng::new().next_u64() % 100;
    let ms = 50 * u64::from(tries.min(20)) + jitter;
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

async fn run(client: &Client, sql: &str) -> Result<(), DbError> {
    client
        .batch_execute(sql)
        .await
        .map_err(|e| DbError::new(sql.to_string(), e))
}

/// Takes `lock`'s tables in the transaction on `client` (see the module
/// documentation); the lock timeout is brief afterwards, as it is for the
/// rest of a step that locks writers out.
pub(super) async fn take(client: &Client, lock: &Lock) -> Result<(), DbError> {
    wait_briefly(client).await?;
    run(client, "SAVEPOINT uuidforge_locks").await?;
    let mut order = lock.tables.clone();
    let mut tries = 0;
    loop {
        let mut busy = None;
        for (i, table) in order.iter().enumerate() {
            match run(client, &lock.one(table, true)).await {
                Ok(()) => {}
                Err(e) if lost(&e) => {
                    busy = Some(i);
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        let Some(i) = busy else {
            return run(client, "RELEASE SAVEPOINT uuidforge_locks").await;
        };
        // Hold nothing while waiting for the busy table.
        run(client, "ROLLBACK TO SAVEPOINT uuidforge_locks").await?;
        let table = order.remove(i);
        order.insert(0, table);
        match run(client, &lock.one(&order[0], false)).await {
            Ok(()) => {}
            Err(e) if lost(&e) => {
                tries += 1;
                if tries >= TRIES {
                    return Err(e);
                }
                run(client, "ROLLBACK TO SAVEPOINT uuidforge_locks").await?;
                pause(tries).await;
            }
            Err(e) => return Err(e),
        }
    }
}

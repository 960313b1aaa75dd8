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

use super::io::Session;
use crate::ops::Lock;
use uuidforge_db::error::DbError;

/// Longest wait for a lock while changing a database: a change never
/// queues for long behind other sessions (nor makes them queue behind it).
pub const LOCK_TIMEOUT: &str = "5s";

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

/// Makes the transaction on `session` wait for any lock at most half the
/// server's `deadlock_timeout` (between 20 ms and 1 s).
pub(super) async fn wait_briefly(session: &impl Session) -> Result<(), DbError> {
    let deadlock_ms = session.deadlock_timeout_ms().await?;
    let ms = (deadlock_ms / 2).clamp(BRIEF_MS.0, BRIEF_MS.1);
    session
        .execute(&format!("SET LOCAL lock_timeout = '{ms}ms'"))
        .await
}

/// Begins a transaction on `session` that waits for locks as every change
/// does ([`LOCK_TIMEOUT`]).
pub(super) async fn begin(session: &impl Session) -> Result<(), DbError> {
    session
        .execute(&format!(
            "BEGIN; SET LOCAL lock_timeout = {}",
            uuidforge_ident::quote_literal(LOCK_TIMEOUT)
        ))
        .await
}

/// Makes the transaction on `session` wait for locks as every change does
/// (the statements after the locks are taken).
pub(super) async fn wait_normally(session: &impl Session) -> Result<(), DbError> {
    session
        .execute(&format!(
            "SET LOCAL lock_timeout = {}",
            uuidforge_ident::quote_literal(LOCK_TIMEOUT)
        ))
        .await
}

/// The pause after try `tries` lost its locks: growing to about a second,
/// with a random part so that two changes do not retry in step.
pub(super) async fn pause(tries: u32) {
    use uuidforge::generator::RandSource;
    let jitter = uuidforge::generator::OsCsprng::new().next_u64() % 100;
    let ms = 50 * u64::from(tries.min(20)) + jitter;
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

/// Takes `lock`'s tables in the transaction on `session` (see the module
/// documentation); the lock timeout is brief afterwards, as it is for the
/// rest of a step that locks writers out.
pub(super) async fn take(session: &impl Session, lock: &Lock) -> Result<(), DbError> {
    wait_briefly(session).await?;
    session.execute("SAVEPOINT uuidforge_locks").await?;
    let mut order = lock.tables.clone();
    let mut tries = 0;
    loop {
        let mut busy = None;
        for (i, table) in order.iter().enumerate() {
            match session.execute(&lock.one(table, true)).await {
                Ok(()) => {}
                Err(e) if lost(&e) => {
                    busy = Some(i);
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        let Some(i) = busy else {
            return session.execute("RELEASE SAVEPOINT uuidforge_locks").await;
        };
        // Hold nothing while waiting for the busy table.
        session
            .execute("ROLLBACK TO SAVEPOINT uuidforge_locks")
            .await?;
        let table = order.remove(i);
        order.insert(0, table);
        match session.execute(&lock.one(&order[0], false)).await {
            Ok(()) => {}
            Err(e) if lost(&e) => {
                tries += 1;
                if tries >= TRIES {
                    return Err(e);
                }
                session
                    .execute("ROLLBACK TO SAVEPOINT uuidforge_locks")
                    .await?;
                pause(tries).await;
            }
            Err(e) => return Err(e),
        }
    }
}

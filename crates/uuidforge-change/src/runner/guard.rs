//! Changes that know about each other. Before a change runs, the runner
//! takes a session-level advisory lock on each relation it writes (in oid
//! order, never waiting): a second `--apply` or `--resume` of the same
//! tables finds one held and stops at once, naming the process that holds
//! it ([`uuidforge_db::error::ErrorKind::Busy`]). Then it reads the changes
//! under way ([`super::state`]): a change in batches that is not running
//! (killed, waiting for `--resume`) still owns its tables, and any other
//! change of them is refused, naming it and its next step. The locks are
//! held by a connection of their own until the run ends; a killed run's
//! connection closes and the server lets them go.

use super::io::{Database, Session};
use super::state::{Recorded, UnderWay};
use crate::ops::{ChangePlan, Touched};
use uuidforge_db::error::DbError;
use uuidforge_db::error::{Reason, Refusal};

/// The advisory lock class of uuidforge's changes (`'uuid'` in ASCII): the
/// lock of relation `oid` is `CLASS << 32 | oid`.
const CLASS: i64 = 0x7575_6964;

fn lock_key(oid: u32) -> i64 {
    (CLASS << 32) | i64::from(oid)
}

/// The locks of a running change, held until it ends.
pub struct Guard<S: Session> {
    session: S,
    /// The server process holding them.
    pub pid: i32,
}

impl<S: Session> Guard<S> {
    /// Takes the locks of `change`'s tables, refused when another process
    /// holds one (busy), or when another change is under way on one of
    /// them (`resuming`: the change this run completes, which is not
    /// another).
    pub async fn claim<D: Database<Session = S>>(
        db: &D,
        change: &ChangePlan,
        resuming: Option<&Recorded>,
    ) -> Result<Guard<S>, DbError> {
        let session = db.connect().await?;
        let pid = session.pid().await?;
        let mut touches: Vec<&Touched> = change.touches.iter().collect();
        touches.sort();
        for t in &touches {
            if !session.try_advisory_lock(lock_key(t.oid)).await? {
                let who = session
                    .advisory_holder(lock_key(t.oid))
                    .await
                    .ok()
                    .flatten()
                    .map_or_else(
                        || "a process that has just let it go".into(),
                        |h| h.to_string(),
                    );
                session.unlock_all().await;
                let doing = session
                    .under_way(&[t.oid])
                    .await
                    .ok()
                    .and_then(|u| u.into_iter().next())
                    .map(|u| format!(": a {} ({})", u.what(), u.progress()))
                    .unwrap_or_default();
                return Err(DbError::busy(
                    t.name.clone(),
                    format!("a change of it is being run by another process ({who}){doing}; nothing was changed: try again once it is done"),
                ));
            }
        }
        let guard = Guard { session, pid };
        refuse_under_way(&guard.session, change, resuming).await?;
        Ok(guard)
    }

    /// The connection holding the locks.
    pub fn session(&self) -> &S {
        &self.session
    }

    /// Lets the locks go.
    pub async fn release(self) {
        self.session.unlock_all().await;
    }
}

/// Refuses `change` when another change in batches is under way on a table
/// it writes (`resuming`: the change this run completes, which is not
/// another): busy when that change's run holds its locks now, else
/// refused, with the way to complete it.
pub async fn refuse_under_way(
    session: &impl Session,
    change: &ChangePlan,
    resuming: Option<&Recorded>,
) -> Result<(), DbError> {
    let oids: Vec<u32> = change.touches.iter().map(|t| t.oid).collect();
    for u in session.under_way(&oids).await? {
        if resuming.is_some_and(|r| r.table == u.state_table && r.id == u.id) {
            continue;
        }
        let running = match u.tables.first() {
            Some(&first) => session
                .advisory_holder((CLASS << 32) | first)
                .await?
                .filter(|h| !h.mine),
            None => None,
        };
        return Err(match running {
            Some(who) => DbError::busy(
                u.target.clone(),
                format!(
                    "a {} is being run by another process ({who}; {}); nothing was changed: try again once it is done",
                    u.what(),
                    u.progress()
                ),
            ),
            None => under_way_error(change, &u),
        });
    }
    Ok(())
}

/// Refusing `change` because `u` is under way on a table it writes.
pub fn under_way_error(change: &ChangePlan, u: &UnderWay) -> DbError {
    let shared: Vec<&str> = change
        .touches
        .iter()
        .filter(|t| u.tables.contains(&i64::from(t.oid)))
        .map(|t| t.name.as_str())
        .collect();
    u.resumed(DbError::refusal(
        change.operation.clone(),
        Refusal::new(
            Reason::UnderWay,
            format!(
                "{} would be changed while a {} is under way ({}); nothing was changed",
                shared.join(", "),
                u.what(),
                u.progress()
            ),
        ),
    ))
}

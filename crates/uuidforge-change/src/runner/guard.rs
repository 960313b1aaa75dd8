//! Changes that know about each other. Before a change runs, the runner
//! takes a session-level advisory lock on each relation it writes (in oid
//! order, never waiting): a second `--apply` or `--resume` of the same
//! tables finds one held and stops at once, naming the process that holds
//! it ([`uuidforge_db::error::ErrorKind::Busy`]). Then it reads the changes under
//! way ([`super::state`]): a change in batches that is not running (killed,
//! waiting for `--resume`) still owns its tables, and any other change of
//! them is refused, naming it and its next step. The locks are held by a
//! connection of their own until the run ends; a killed run's connection
//! closes and the server lets them go.

use super::state::{self, UnderWay};
use uuidforge_db::client::DbError;
use crate::ops::{ChangePlan, Touched};
use tokio_postgres::Client;

/// The advisory lock class of uuidforge's changes (`'uuid'` in ASCII): the
/// lock of relation `oid` is `CLASS << 32 | oid`.
const CLASS: i64 = 0x7575_6964;

fn lock_key(oid: u32) -> i64 {
    (CLASS << 32) | i64::from(oid)
}

/// The locks of a running change, held until it ends.
pub struct Guard {
    client: Client,
    /// The server process holding them.
    pub pid: i32,
}

/// Who holds the lock of `oid`: `pid N, since TIME` (its session's start).
async fn holder(client: &Client, oid: u32) -> String {
    let row = client
        .query_opt(
            "SELECT a.pid, to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ'), coalesce(a.application_name, '') \
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
               AND l.classid = $1::int8::oid AND l.objid = $2::int8::oid AND l.objsubid = 1 LIMIT 1",
            &[&CLASS, &i64::from(oid)],
        )
        .await
        .ok()
        .flatten();
    match row {
        Some(r) => format!(
            "pid {}, since {}",
            r.get::<_, i32>(0),
            r.get::<_, Option<String>>(1).unwrap_or_default()
        ),
        None => "a process that has just let it go".into(),
    }
}

impl Guard {
    /// Takes the locks of `touches` for a run of `change`, refused when
    /// another process holds one (busy), or when another change is under
    /// way on one of them (`resuming`: the state table and row of the
    /// change this run completes, which is not another).
    pub async fn claim(
        config: &tokio_postgres::Config,
        change: &ChangePlan,
        resuming: Option<(&str, i64)>,
    ) -> Result<Guard, DbError> {
        let client = uuidforge_db::client::connect(config).await?;
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .map_err(|e| DbError::new("lock the tables", e))?
            .get(0);
        let mut touches: Vec<&Touched> = change.touches.iter().collect();
        touches.sort();
        for t in &touches {
            let got: bool = client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&lock_key(t.oid)])
                .await
                .map_err(|e| DbError::new("lock the tables", e))?
                .get(0);
            if !got {
                let who = holder(&client, t.oid).await;
                let _ = client
                    .batch_execute("SELECT pg_advisory_unlock_all()")
                    .await;
                let doing = state::under_way(&client, &[t.oid])
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
        let guard = Guard { client, pid };
        refuse_under_way(&guard.client, change, resuming).await?;
        Ok(guard)
    }

    /// The connection holding the locks.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Lets the locks go (the connection closes after).
    pub async fn release(self) {
        let _ = self
            .client
            .batch_execute("SELECT pg_advisory_unlock_all()")
            .await;
    }
}

/// Refuses `change` when another change in batches is under way on a table
/// it writes (`resuming`: the state table and row of the change this run
/// completes, which is not another): busy when that change's run holds its
/// locks now, else refused, with the way to complete it.
pub async fn refuse_under_way(
    client: &Client,
    change: &ChangePlan,
    resuming: Option<(&str, i64)>,
) -> Result<(), DbError> {
    let oids: Vec<u32> = change.touches.iter().map(|t| t.oid).collect();
    for u in state::under_way(client, &oids).await? {
        if resuming.is_some_and(|(table, id)| table == u.state_table && id == u.id) {
            continue;
        }
        let running = held(client, &u).await?;
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

/// Who runs change `u` now, if a process holds the lock of its first
/// table (not this session).
async fn held(client: &Client, u: &UnderWay) -> Result<Option<String>, DbError> {
    let Some(&first) = u.tables.first() else {
        return Ok(None);
    };
    let mine: bool = client
        .query_one(
            "SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid() \
             AND classid = $1::int8::oid AND objid = $2::int8::oid AND objsubid = 1)",
            &[&CLASS, &first],
        )
        .await
        .map_err(|e| DbError::new("read the changes under way", e))?
        .get(0);
    if mine {
        return Ok(None);
    }
    let any: bool = client
        .query_one(
            "SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
             AND classid = $1::int8::oid AND objid = $2::int8::oid AND objsubid = 1)",
            &[&CLASS, &first],
        )
        .await
        .map_err(|e| DbError::new("read the changes under way", e))?
        .get(0);
    if !any {
        return Ok(None);
    }
    Ok(Some(
        holder(client, u32::try_from(first).unwrap_or(0)).await,
    ))
}

/// Refusing `change` because `u` is under way on a table it writes.
pub fn under_way_error(change: &ChangePlan, u: &UnderWay) -> DbError {
    let shared: Vec<&str> = change
        .touches
        .iter()
        .filter(|t| u.tables.contains(&i64::from(t.oid)))
        .map(|t| t.name.as_str())
        .collect();
    DbError::refused(
        change.operation.clone(),
        format!(
            "{} would be changed while a {} is under way ({}); nothing was changed",
            shared.join(", "),
            u.what(),
            u.progress()
        ),
    )
    .with_hint(u.resume_command())
}

//! `migrate-key` over a fleet: one plan per member, refused before anything
//! runs on any member when the plans differ ([`super::plans::same_plans`])
//! or a member does not answer; a replicated table (`--replicated`, or the
//! same rows on every member) gets the same new key for the same row
//! everywhere — the keys are computed from the fleet's one secret — and a
//! sharded table keys unique across members (a secret per member); the
//! members migrate one after another (or some at once), each by the one
//! runner, in one transaction or in batches; the fleet's state is a file
//! written before anything runs and after each member, so `--resume`
//! continues where the fleet stopped, a kill at any point included.

use super::plans::{member_secret, same_plans};
use super::{on_each, Member};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use uuidforge_change::ops::migrate_key::{MigrateKey, MigratePlan};
use uuidforge_change::ops::{print_compared, Planned};
use uuidforge_change::runner::{self, Applied, Context};
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::client::{DbError, ReadOnly, Reader};
use uuidforge_ident::quote_ident;

/// A member's plan.
#[derive(Debug)]
pub struct MemberPlan {
    /// The member.
    pub member: Member,
    /// Its plan.
    pub plan: MigratePlan,
    /// The catalog it was made from.
    pub snapshot: Snapshot,
    /// The plan as printed.
    pub printed: Vec<String>,
}

/// The plan of a fleet migration.
#[derive(Debug)]
pub struct FleetPlan {
    /// Each member's, in the fleet's order.
    pub members: Vec<MemberPlan>,
    /// Whether the table is replicated (the same new key for the same row
    /// on every member).
    pub replicated: bool,
    /// Why it is taken for replicated or sharded.
    pub why: String,
}

/// The rows of `table` in one figure: their count and a sum of 64-bit
/// hashes of each whole row — equal on two members when they hold the same
/// rows (a reference table kept in step).
fn digest_sql(table: &str) -> String {
    format!(
        "SELECT count(*)::text || ' ' || coalesce(sum(hashtextextended(t::text, 0)), 0)::text FROM {table} t"
    )
}

/// Plans `op` on every member (at most `at_once` at a time), compares the
/// plans, and tells a replicated table from a sharded one (`replicated`
/// forces it). Refused when a member does not answer or the plans differ.
pub async fn plan(
    members: &[Member],
    op: &MigrateKey,
    replicated: Option<bool>,
    at_once: usize,
) -> Result<FleetPlan, DbError> {
    let answers = on_each(members, at_once, |member| async move {
        let session = ReadOnly::open(&member.config).await?;
        let (plan, snapshot) = runner::plan(&session, op).await?;
        let digest = session
            .one_text_of(
                &uuidforge_db::plan::Query::new(digest_sql(&plan.table)),
                "read the table's rows",
            )
            .await?;
        session.close().await?;
        let printed = print_compared(plan.change(), &uuidforge_db::error::Plain);
        Ok((
            MemberPlan {
                member,
                plan,
                snapshot,
                printed,
            },
            digest,
        ))
    })
    .await;
    let mut plans = Vec::new();
    let mut digests = Vec::new();
    for answer in answers {
        let (plan, digest) = answer.result.map_err(|e| {
            DbError::refused(
                "fleet",
                format!(
                    "member {} did not plan: {e} (a change over a fleet needs every member; nothing was changed on any)",
                    answer.member
                ),
            )
        })?;
        plans.push(plan);
        digests.push(digest);
    }
    let printed: Vec<(String, Vec<String>)> = plans
        .iter()
        .map(|p| (p.member.name.clone(), p.printed.clone()))
        .collect();
    same_plans(&printed)?;
    let same_rows = digests.windows(2).all(|w| w[0] == w[1]);
    let (replicated, why) = match replicated {
        Some(true) => (true, "--replicated".to_string()),
        Some(false) => (false, "--sharded".to_string()),
        None if same_rows => (
            true,
            "the same rows on every member (a reference table)".to_string(),
        ),
        None => (false, "the members hold different rows".to_string()),
    };
    Ok(FleetPlan {
        members: plans,
        replicated,
        why,
    })
}

/// Where a member stands in the fleet's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not begun.
    Pending,
    /// Begun: done if the migration committed there, else to run again
    /// (one transaction) or to resume (batches).
    Started,
    /// Migrated.
    Done,
}

/// A member in the fleet's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberState {
    /// Its name.
    pub name: String,
    /// Where it stands.
    pub status: Status,
}

/// The fleet's state of a migration, in a file (0600): the same plan on
/// every member, which members are done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetState {
    /// The table, as the user named it.
    pub table: String,
    /// How it is migrated (what --resume plans with again).
    pub options: uuidforge_change::ops::migrate_key::MigrateOptions,
    /// Rows per batch, in batches.
    pub batch_size: Option<i64>,
    /// Replicated (one secret) or sharded (a secret per member).
    pub replicated: bool,
    /// The key column and where the old values are kept (what says a
    /// member is migrated).
    pub key: String,
    /// The old values' column.
    pub old_name: String,
    /// The plan every member had, oids set aside.
    pub plan: Vec<String>,
    /// The members, in order.
    pub members: Vec<MemberState>,
}

impl FleetState {
    /// Reads it.
    pub fn read(path: &Path) -> Result<FleetState, DbError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            DbError::invalid(
                "resume",
                format!(
                    "{}: {e} (expected the fleet state a --apply wrote)",
                    path.display()
                ),
            )
        })?;
        serde_json::from_str(&text)
            .map_err(|e| DbError::unreadable("resume", format!("{}: {e}", path.display())))
    }

    /// Writes it whole, by a rename (a kill leaves the old one or the new
    /// one), readable by its owner only.
    pub fn write(&self, path: &Path) -> Result<(), DbError> {
        let text = serde_json::to_string_pretty(self).expect("serializes");
        uuidforge_store::private_file::replace(path, text.as_bytes())
            .map_err(|e| DbError::tool("fleet state", format!("{}: {e}", path.display())))
    }

    fn set(&mut self, member: &str, status: Status) {
        if let Some(m) = self.members.iter_mut().find(|m| m.name == member) {
            m.status = status;
        }
    }
}

/// What happened to a member.
#[derive(Debug)]
pub enum Event {
    /// It begins.
    Started(String),
    /// It was migrated before (a resumed fleet).
    AlreadyDone(String),
    /// It is migrated.
    Done(String, Box<Applied>),
}

/// What a fleet migration did.
#[derive(Debug, Default, Serialize)]
pub struct FleetApplied {
    /// What each member's change did (a member done before: none).
    pub members: Vec<(String, Option<Applied>)>,
    /// The replicated table's keys compared across the members: each
    /// member's count and digest of (old key, new key).
    pub replicated_keys: Option<Vec<(String, String)>>,
}

/// Where a member's backup goes: `dir` with the member's name in the file
/// name, or the working directory.
fn backup_file(dir: Option<&Path>, member: &str, database: &str) -> PathBuf {
    let file = uuidforge_change::backup::default_file(&format!("{member}-{database}"));
    match dir {
        Some(d) => d.join(file),
        None => file,
    }
}

/// The secret of `member`'s keys.
fn secret_for(replicated: bool, secret: &[u8], member: &str) -> Vec<u8> {
    if replicated {
        secret.to_vec()
    } else {
        member_secret(secret, member)
    }
}

/// One member's change by the runner: its backup under the member's name,
/// its keys from `secret`.
async fn apply_member(
    op: &MigrateKey,
    member: &Member,
    plan: &MigratePlan,
    snapshot: &Snapshot,
    backup_dir: Option<&Path>,
    secret: Vec<u8>,
) -> Result<Applied, DbError> {
    let secret = move || Ok(secret.clone());
    let mut progress = |_| {};
    let mut backed_up = |_: &uuidforge_change::backup::Backup| {};
    let ctx = Context {
        backup_file: Some(backup_file(backup_dir, &member.name, &snapshot.database)),
        secret: &secret,
        progress: &mut progress,
        backed_up: &mut backed_up,
    };
    runner::apply(&member.config, op, plan, snapshot, ctx)
        .await
        .map_err(|e| e.within(format!("member {}", member.name)))
}

/// Applies `plan` on every member, `parallel` at a time, writing the
/// fleet's state to `state_path` before anything runs and after each
/// member; stops at the first member that fails (the others keep their
/// state: `--resume` goes on).
pub async fn apply(
    op: &MigrateKey,
    fleet: &FleetPlan,
    secret: &[u8],
    state_path: &Path,
    backup_dir: Option<&Path>,
    parallel: usize,
    on_event: &(dyn Fn(Event) + Sync),
) -> Result<FleetApplied, DbError> {
    let first = &fleet.members[0];
    let state = FleetState {
        table: op.table.clone(),
        options: op.options.clone(),
        batch_size: op.batch_size,
        replicated: fleet.replicated,
        key: first.plan.key.clone(),
        old_name: first.plan.old_name.clone(),
        plan: first
            .printed
            .iter()
            .map(|l| super::plans::without_oids(l))
            .collect(),
        members: fleet
            .members
            .iter()
            .map(|m| MemberState {
                name: m.member.name.clone(),
                status: Status::Pending,
            })
            .collect(),
    };
    state.write(state_path)?;
    let state = Mutex::new(state);
    let mark = |member: &str, status: Status| -> Result<(), DbError> {
        let mut s = state.lock().expect("not poisoned");
        s.set(member, status);
        s.write(state_path)
    };
    let results = run_members(&fleet.members, parallel, |mp| {
        let mark = &mark;
        async move {
            let name = mp.member.name.clone();
            mark(&name, Status::Started)?;
            on_event(Event::Started(name.clone()));
            let applied = apply_member(
                op,
                &mp.member,
                &mp.plan,
                &mp.snapshot,
                backup_dir,
                secret_for(fleet.replicated, secret, &name),
            )
            .await?;
            mark(&name, Status::Done)?;
            on_event(Event::Done(name.clone(), Box::new(applied.clone())));
            Ok((name, Some(applied)))
        }
    })
    .await?;
    let members: Vec<Member> = fleet.members.iter().map(|m| m.member.clone()).collect();
    finish(
        &members,
        &state.into_inner().expect("not poisoned"),
        results,
    )
    .await
}

/// Runs `work` on the members, `parallel` at a time, stopping at the first
/// error (the members begun finish first).
async fn run_members<'a, F, Fut>(
    members: &'a [MemberPlan],
    parallel: usize,
    work: F,
) -> Result<Vec<(String, Option<Applied>)>, DbError>
where
    F: Fn(&'a MemberPlan) -> Fut,
    Fut: std::future::Future<Output = Result<(String, Option<Applied>), DbError>>,
{
    use futures_util::stream::{self, StreamExt};
    let mut out = Vec::new();
    for chunk in members.chunks(parallel.max(1)) {
        let done: Vec<Result<(String, Option<Applied>), DbError>> = stream::iter(chunk)
            .map(&work)
            .buffered(chunk.len())
            .collect()
            .await;
        for d in done {
            out.push(d?);
        }
    }
    Ok(out)
}

/// Whether `member`'s table is migrated: its key column is uuid and the
/// old values' column is there.
async fn migrated(member: &Member, state: &FleetState) -> Result<bool, DbError> {
    let session = ReadOnly::open(&member.config).await?;
    let snapshot = session.snapshot().await?;
    session.close().await?;
    let Ok(table) = snapshot.find_relation(&state.table) else {
        return Ok(false);
    };
    Ok(table
        .column_named(&state.key)
        .is_some_and(|c| c.type_name == "uuid")
        && table.column_named(&state.old_name).is_some())
}

/// Completes the fleet's migration from its state: each member not done
/// is found migrated, resumed (a change in batches under way there) or
/// planned again with the options it began with — the same plan as the
/// others' — and applied.
pub async fn resume(
    members: &[Member],
    secret: &[u8],
    state_path: &Path,
    backup_dir: Option<&Path>,
    on_event: &(dyn Fn(Event) + Sync),
) -> Result<FleetApplied, DbError> {
    let mut state = FleetState::read(state_path)?;
    let op = &MigrateKey {
        table: state.table.clone(),
        options: state.options.clone(),
        batch_size: state.batch_size,
    };
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let recorded: Vec<&str> = state.members.iter().map(|m| m.name.as_str()).collect();
    if names != recorded {
        return Err(DbError::invalid(
            "resume",
            format!(
                "the fleet is {} but its state in {} is of {} (expected the same members)",
                names.join(", "),
                state_path.display(),
                recorded.join(", ")
            ),
        ));
    }
    let mut results = Vec::new();
    for member in members {
        let status = state
            .members
            .iter()
            .find(|m| m.name == member.name)
            .map(|m| m.status)
            .unwrap_or(Status::Pending);
        if status == Status::Done || (status == Status::Started && migrated(member, &state).await?)
        {
            if status != Status::Done {
                state.set(&member.name, Status::Done);
                state.write(state_path)?;
            }
            on_event(Event::AlreadyDone(member.name.clone()));
            results.push((member.name.clone(), None));
            continue;
        }
        state.set(&member.name, Status::Started);
        state.write(state_path)?;
        on_event(Event::Started(member.name.clone()));
        let member_secret = secret_for(state.replicated, secret, &member.name);
        let session = ReadOnly::open(&member.config).await?;
        let seen = session.snapshot().await?;
        let applied = match runner::under_way_of(&session, &seen, &state.table).await? {
            Some(u) => {
                session.close().await?;
                runner::resume(&member.config, &u, &member_secret, &mut |_| {})
                    .await
                    .map_err(|e| e.within(format!("member {}", member.name)))
            }
            None => {
                let (plan, snapshot) = runner::plan(&session, op).await?;
                session.close().await?;
                let printed: Vec<String> =
                    print_compared(plan.change(), &uuidforge_db::error::Plain)
                        .iter()
                        .map(|l| super::plans::without_oids(l))
                        .collect();
                same_plans(&[
                    ("the fleet".to_string(), state.plan.clone()),
                    (member.name.clone(), printed),
                ])?;
                apply_member(op, member, &plan, &snapshot, backup_dir, member_secret).await
            }
        }?;
        state.set(&member.name, Status::Done);
        state.write(state_path)?;
        on_event(Event::Done(member.name.clone(), Box::new(applied.clone())));
        results.push((member.name.clone(), Some(applied)));
    }
    finish(members, &state, results).await
}

/// The end of a fleet migration: a replicated table's keys compared across
/// the members (each member's count and digest of its old and new keys).
async fn finish(
    members: &[Member],
    state: &FleetState,
    results: Vec<(String, Option<Applied>)>,
) -> Result<FleetApplied, DbError> {
    let mut done = FleetApplied {
        members: results,
        replicated_keys: None,
    };
    if !state.replicated {
        return Ok(done);
    }
    let table = state.table.clone();
    let sql = |snapshot: &Snapshot| -> Result<String, DbError> {
        let relation = snapshot.find_relation(&table)?;
        Ok(format!(
            "SELECT count(*)::text || ' ' || coalesce(sum(hashtextextended({old}::text || ' ' || {key}::text, 0)), 0)::text FROM {t}",
            old = quote_ident(&state.old_name),
            key = quote_ident(&state.key),
            t = relation.sql_name()
        ))
    };
    let answers = on_each(members, 4, |member| {
        let sql = &sql;
        async move {
            let session = ReadOnly::open(&member.config).await?;
            let snapshot = session.snapshot().await?;
            let digest = session
                .one_text_of(
                    &uuidforge_db::plan::Query::new(sql(&snapshot)?),
                    "read the new keys",
                )
                .await?;
            session.close().await?;
            Ok(digest)
        }
    })
    .await;
    let mut digests = Vec::new();
    for a in answers {
        digests.push((a.member, a.result?));
    }
    if digests.windows(2).any(|w| w[0].1 != w[1].1) {
        return Err(DbError::verification_failed(
            "compare the replicated table's new keys across the members".to_string(),
            digests
                .iter()
                .map(|(m, d)| format!("{m}: {d} (rows, digest of old and new keys)"))
                .collect(),
        ));
    }
    done.replicated_keys = Some(digests);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_file_is_written_whole_and_private() {
        let dir = std::env::temp_dir().join(format!("uf_fleet_state_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        let mut state = FleetState {
            table: "countries".into(),
            options: Default::default(),
            batch_size: None,
            replicated: true,
            key: "id".into(),
            old_name: "id_old".into(),
            plan: vec!["BEGIN;".into()],
            members: vec![MemberState {
                name: "eu".into(),
                status: Status::Pending,
            }],
        };
        state.write(&path).unwrap();
        state.set("eu", Status::Done);
        state.write(&path).unwrap();
        assert_eq!(FleetState::read(&path).unwrap(), state);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(!path.with_extension("json.new").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

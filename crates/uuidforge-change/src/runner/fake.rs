//! A database in memory for the runner's rules: sessions with
//! transactions (what a transaction did is kept only when it commits),
//! advisory locks shared between sessions, the state table of changes
//! under way, and failures on cue — a statement refused with a SQLSTATE,
//! or the runner's process killed (its sessions gone, their transactions
//! rolled back, their locks let go).

use super::io::{Database, Holder, Session, StateUpdate};
use super::state::{Position, Recorded, UnderWay};
use crate::action::{DataIo, Statement};
use crate::backup::Backup as BackupFile;
use crate::ops::{Backup, ChangePlan};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use uuid::Uuid;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::DbError;
use uuidforge_db::plan::Query;

/// What happens when a statement containing a pattern runs.
#[derive(Debug, Clone)]
pub enum Cue {
    /// The server refuses it with this SQLSTATE (once).
    Refuse(&'static str),
    /// The runner's process is killed after it ran.
    KillAfter,
    /// Runs this many more times, then is [`Cue::KillAfter`].
    KillAfterMore(u32),
}

/// One row of the state table.
#[derive(Debug, Clone)]
struct Row {
    id: i64,
    table: String,
    change: ChangePlan,
    step: usize,
    blocks: (Option<i64>, Option<i64>),
    marks: BTreeMap<String, String>,
    pid: i32,
}

#[derive(Debug)]
struct World {
    snapshot: Snapshot,
    answers: BTreeMap<String, String>,
    texts: BTreeMap<String, String>,
    cues: Vec<(String, Cue)>,
    next_pid: i32,
    /// The process generation sessions are made in; a kill ends it.
    generation: u32,
    /// The generation of each session's process (another process: none).
    processes: BTreeMap<i32, u32>,
    advisory: BTreeMap<i64, i32>,
    state: Vec<Row>,
    next_id: i64,
    /// Statements of committed transactions and of autocommit, in order.
    committed: Vec<String>,
}

/// The database.
#[derive(Clone)]
pub struct Fake {
    world: Rc<RefCell<World>>,
}

impl Fake {
    /// An empty database whose reads answer `answers` (by query text).
    pub fn new(answers: &[(&str, &str)]) -> Fake {
        let snapshot = Snapshot::from_json(
            r#"{"database": "fake", "user": "me", "server_version_num": 150000, "extension_schema": null,
                "relations": [], "types": [], "indexes": [], "constraints": [], "view_rules": []}"#,
        )
        .expect("an empty snapshot");
        Fake {
            world: Rc::new(RefCell::new(World {
                snapshot,
                answers: answers
                    .iter()
                    .map(|(q, a)| (q.to_string(), a.to_string()))
                    .collect(),
                texts: BTreeMap::new(),
                cues: Vec::new(),
                next_pid: 100,
                generation: 0,
                processes: BTreeMap::new(),
                advisory: BTreeMap::new(),
                state: Vec::new(),
                next_id: 1,
                committed: Vec::new(),
            })),
        }
    }

    /// Reads of `query` answer `answer` from now on.
    pub fn answer(&self, query: &str, answer: &str) {
        self.world
            .borrow_mut()
            .answers
            .insert(query.into(), answer.into());
    }

    /// A statement read for text returns `text`.
    pub fn text(&self, sql: &str, text: &str) {
        self.world
            .borrow_mut()
            .texts
            .insert(sql.into(), text.into());
    }

    /// What happens when a statement containing `pattern` next runs.
    pub fn cue(&self, pattern: &str, cue: Cue) {
        self.world.borrow_mut().cues.push((pattern.into(), cue));
    }

    /// Another process holding the advisory lock `key`.
    pub fn held_by_another(&self, key: i64) -> i32 {
        let mut w = self.world.borrow_mut();
        w.next_pid += 1;
        let pid = w.next_pid;
        w.advisory.insert(key, pid);
        pid
    }

    /// The statements committed so far.
    pub fn committed(&self) -> Vec<String> {
        self.world.borrow().committed.clone()
    }

    /// How many committed statements contain `pattern`.
    pub fn count(&self, pattern: &str) -> usize {
        self.committed()
            .iter()
            .filter(|s| s.contains(pattern))
            .count()
    }

    /// The changes under way (next step, 0 the first).
    pub fn under_way(&self) -> Vec<(String, usize)> {
        self.world
            .borrow()
            .state
            .iter()
            .map(|r| (r.change.target.clone(), r.step))
            .collect()
    }

    /// The advisory locks held.
    pub fn advisory_locks(&self) -> usize {
        self.world.borrow().advisory.len()
    }
}

impl Database for Fake {
    type Session = FakeSession;

    async fn connect(&self) -> Result<FakeSession, DbError> {
        let mut w = self.world.borrow_mut();
        w.next_pid += 1;
        let (pid, generation) = (w.next_pid, w.generation);
        w.processes.insert(pid, generation);
        Ok(FakeSession {
            world: self.world.clone(),
            pid: w.next_pid,
            generation: w.generation,
            tx: RefCell::new(None),
        })
    }

    fn back_up(&self, _: i32, what: &Backup, file: &Path) -> Result<BackupFile, DbError> {
        Ok(BackupFile {
            file: file.to_path_buf(),
            entries: what.relations.len(),
            schema_only: what.schema_only,
        })
    }
}

/// An open transaction: its statements and the state as it sees it.
struct Tx {
    statements: Vec<String>,
    state: Vec<Row>,
    next_id: i64,
    /// Whether it wrote the state otherwise than by parts' marks (its
    /// copy of the state replaces the world's at commit).
    wrote: bool,
    /// Marks of parts run side by side, each a row's update of its own
    /// key at commit (as the server's `marks || …` of the row then).
    parts: Vec<(i64, String, String)>,
}

/// A connection.
pub struct FakeSession {
    world: Rc<RefCell<World>>,
    pid: i32,
    generation: u32,
    tx: RefCell<Option<Tx>>,
}

impl FakeSession {
    fn alive(&self) -> Result<(), DbError> {
        if self.world.borrow().generation != self.generation {
            return Err(DbError::connection(
                "fake",
                "the connection is closed (process killed)",
            ));
        }
        Ok(())
    }

    /// Runs one statement: a cue first, then into the transaction (or
    /// committed at once outside one).
    fn statement(&self, sql: &str) -> Result<(), DbError> {
        self.alive()?;
        let cue = {
            let mut w = self.world.borrow_mut();
            let at = w.cues.iter().position(|(p, _)| sql.contains(p.as_str()));
            match at.map(|i| (i, w.cues[i].1.clone())) {
                Some((i, Cue::KillAfterMore(n))) if n > 0 => {
                    w.cues[i].1 = if n == 1 {
                        Cue::KillAfter
                    } else {
                        Cue::KillAfterMore(n - 1)
                    };
                    None
                }
                Some((i, _)) => Some(w.cues.remove(i).1),
                None => None,
            }
        };
        if let Some(Cue::Refuse(code)) = cue {
            return Err(DbError::server(sql.to_string(), "refused on cue", code));
        }
        let trimmed = sql.trim();
        if trimmed.starts_with("BEGIN") {
            let w = self.world.borrow();
            *self.tx.borrow_mut() = Some(Tx {
                statements: Vec::new(),
                state: w.state.clone(),
                next_id: w.next_id,
                wrote: false,
                parts: Vec::new(),
            });
        } else if trimmed == "COMMIT" {
            if let Some(tx) = self.tx.borrow_mut().take() {
                let mut w = self.world.borrow_mut();
                w.committed.extend(tx.statements);
                if tx.wrote {
                    w.state = tx.state;
                    w.next_id = tx.next_id;
                }
                for (id, key, value) in tx.parts {
                    if let Some(r) = w.state.iter_mut().find(|r| r.id == id) {
                        r.marks.insert(key, value);
                    }
                }
            }
        } else if trimmed == "ROLLBACK" {
            self.tx.borrow_mut().take();
        } else if !trimmed.contains("SAVEPOINT") {
            match self.tx.borrow_mut().as_mut() {
                Some(tx) => tx.statements.push(sql.to_string()),
                None => self.world.borrow_mut().committed.push(sql.to_string()),
            }
        }
        if let Some(Cue::KillAfter) = cue {
            self.kill();
            return Err(DbError::connection("fake", "the process was killed"));
        }
        Ok(())
    }

    /// The process ends: every session of it is gone, every lock it held
    /// let go, every open transaction rolled back.
    fn kill(&self) {
        let mut w = self.world.borrow_mut();
        let killed = w.generation;
        w.generation += 1;
        let processes = w.processes.clone();
        w.advisory
            .retain(|_, pid| processes.get(pid) != Some(&killed));
        self.tx.borrow_mut().take();
    }

    /// The state as this session sees it, changed by `f`.
    /// The transaction (if any) writes the state: its copy replaces the
    /// world's at commit.
    fn wrote(&self) {
        if let Some(tx) = self.tx.borrow_mut().as_mut() {
            tx.wrote = true;
        }
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut Vec<Row>, &mut i64) -> T) -> T {
        let mut tx = self.tx.borrow_mut();
        match tx.as_mut() {
            Some(tx) => f(&mut tx.state, &mut tx.next_id),
            None => {
                let mut w = self.world.borrow_mut();
                let w = &mut *w;
                f(&mut w.state, &mut w.next_id)
            }
        }
    }
}

/// A connection closed: the server rolls its transaction back and lets
/// its session locks go.
impl Drop for FakeSession {
    fn drop(&mut self) {
        let pid = self.pid;
        if let Ok(mut w) = self.world.try_borrow_mut() {
            w.advisory.retain(|_, holder| *holder != pid);
        }
    }
}

impl DataIo for FakeSession {
    async fn text_and_times(&self, _: &str) -> Result<Vec<(String, Option<i64>)>, DbError> {
        Ok(Vec::new())
    }

    async fn copy_key_map(
        &self,
        _: &str,
        _: &[(String, Option<i64>)],
        _: &[Uuid],
    ) -> Result<(), DbError> {
        Ok(())
    }

    async fn text(&self, statement: &Statement) -> Result<Option<String>, DbError> {
        self.statement(&statement.sql)?;
        Ok(self.world.borrow().texts.get(&statement.sql).cloned())
    }

    async fn run(&self, statement: &Statement) -> Result<u64, DbError> {
        self.statement(&statement.sql)?;
        Ok(1)
    }
}

impl Session for FakeSession {
    async fn execute(&self, sql: &str) -> Result<(), DbError> {
        self.statement(sql)
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        self.alive()?;
        Ok(self.world.borrow().snapshot.clone())
    }

    async fn read(&self, query: &Query, context: &str) -> Result<String, DbError> {
        self.alive()?;
        self.world
            .borrow()
            .answers
            .get(&query.sql)
            .cloned()
            .ok_or_else(|| DbError::unreadable(context, format!("no answer for {}", query.sql)))
    }

    async fn pid(&self) -> Result<i32, DbError> {
        Ok(self.pid)
    }

    async fn deadlock_timeout_ms(&self) -> Result<i64, DbError> {
        Ok(100)
    }

    async fn try_advisory_lock(&self, key: i64) -> Result<bool, DbError> {
        self.alive()?;
        let mut w = self.world.borrow_mut();
        match w.advisory.get(&key) {
            Some(&pid) => Ok(pid == self.pid),
            None => {
                w.advisory.insert(key, self.pid);
                Ok(true)
            }
        }
    }

    async fn advisory_holder(&self, key: i64) -> Result<Option<Holder>, DbError> {
        Ok(self.world.borrow().advisory.get(&key).map(|&pid| Holder {
            pid,
            since: "2026-11-27 10:00:00 UTC".into(),
            mine: pid == self.pid,
        }))
    }

    async fn unlock_all(&self) {
        self.world
            .borrow_mut()
            .advisory
            .retain(|_, pid| *pid != self.pid);
    }

    async fn under_way(&self, oids: &[u32]) -> Result<Vec<UnderWay>, DbError> {
        self.alive()?;
        let w = self.world.borrow();
        Ok(w.state
            .iter()
            .filter(|r| r.change.touches.iter().any(|t| oids.contains(&t.oid)))
            .map(|r| UnderWay {
                id: r.id,
                state_table: r.table.clone(),
                operation: r.change.operation.clone(),
                target: r.change.target.clone(),
                tables: r.change.touches.iter().map(|t| i64::from(t.oid)).collect(),
                plan: serde_json::to_value(&r.change).unwrap_or_default(),
                step: r.step as i64,
                started_at: "2026-11-27 10:00:00 UTC".into(),
                updated_at: "2026-11-27 10:00:01 UTC".into(),
                pid: Some(r.pid),
                legacy: false,
            })
            .collect())
    }

    async fn record(&self, change: &ChangePlan, pid: i32) -> Result<Recorded, DbError> {
        self.alive()?;
        self.wrote();
        let table = uuidforge_ident::qualified(&change.schema, super::state::STATE_TABLE);
        let id = self.with_state(|state, next_id| {
            let id = *next_id;
            *next_id += 1;
            state.push(Row {
                id,
                table: table.clone(),
                change: change.clone(),
                step: 1,
                blocks: (None, None),
                marks: BTreeMap::new(),
                pid,
            });
            id
        });
        Ok(Recorded {
            table,
            id,
            schema: change.schema.clone(),
        })
    }

    async fn position(&self, at: &Recorded) -> Result<Option<Position>, DbError> {
        self.alive()?;
        Ok(self.with_state(|state, _| {
            state.iter().find(|r| r.id == at.id).map(|r| Position {
                step: r.step,
                next_block: r.blocks.0,
                end_block: r.blocks.1,
                marks: r.marks.clone(),
            })
        }))
    }

    async fn update(&self, at: &Recorded, update: StateUpdate) -> Result<(), DbError> {
        self.alive()?;
        if let StateUpdate::Part(key, value) = update {
            let recorded = self.world.borrow().state.iter().any(|r| r.id == at.id);
            if !recorded {
                return Err(DbError::conflict(
                    "resume",
                    "the change's state was removed while it ran",
                ));
            }
            let mut tx = self.tx.borrow_mut();
            match tx.as_mut() {
                Some(tx) => tx.parts.push((at.id, key, value)),
                None => {
                    let mut w = self.world.borrow_mut();
                    if let Some(r) = w.state.iter_mut().find(|r| r.id == at.id) {
                        r.marks.insert(key, value);
                    }
                }
            }
            return Ok(());
        }
        self.wrote();
        self.with_state(|state, _| {
            if let Some(r) = state.iter_mut().find(|r| r.id == at.id) {
                match update {
                    StateUpdate::Claim(pid) => r.pid = pid,
                    StateUpdate::Advance(next) => {
                        r.step = next;
                        r.blocks = (None, None);
                    }
                    StateUpdate::Mark(name) => {
                        r.marks.insert(name, "7".into());
                    }
                    StateUpdate::Pages(next, end) => r.blocks = (Some(next), Some(end)),
                    StateUpdate::Part(key, value) => {
                        r.marks.insert(key, value);
                    }
                    // The fake's tables keep their oids.
                    StateUpdate::TablesByName => {}
                }
            }
        });
        Ok(())
    }

    async fn finish(&self, at: &Recorded) -> Result<(), DbError> {
        self.alive()?;
        self.wrote();
        self.with_state(|state, _| state.retain(|r| r.id != at.id));
        Ok(())
    }

    async fn counts(&self, sql: &str, _: &[i64]) -> Result<String, DbError> {
        self.statement(sql)?;
        Ok(self
            .world
            .borrow()
            .texts
            .get(sql)
            .cloned()
            .unwrap_or_else(|| "{}".into()))
    }

    async fn pages(&self, _: &str) -> Result<(i64, f64), DbError> {
        Ok((3, 100.0))
    }

    async fn fill(&self, sql: &str, _: i64, _: i64) -> Result<(i64, i64), DbError> {
        self.statement(sql)?;
        Ok((100, 0))
    }
}

//! A step of parts run side by side ([`crate::ops::BatchStep::Beside`]):
//! the parts wait in one queue, the largest first, and each of up to
//! `sessions` sessions takes the next one when its last is done. A part
//! locks the change's state row only to record where it stands, as the
//! last statement of each of its transactions, so that two parts never
//! wait for each other but for that moment; what it records is its own
//! key of the marks (`part S.N`), committed with its work: a killed run
//! goes on with the parts not done, each backfill from its next range.

use super::io::{Database, Session, StateUpdate};
use super::state::Recorded;
use super::steps::{rollback, set_up};
use super::Progress;
use crate::ops::{Backfill, Part, SessionSetting};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use uuidforge_db::error::DbError;

/// What a part's mark says once it is done.
const DONE: &str = "done";

/// The mark under which part `n` of step `step` records where it stands.
pub(super) fn key(step: usize, n: usize) -> String {
    format!("part {}.{}", step + 1, n + 1)
}

/// Where a backfill part stands: its next block and end block, as its mark
/// keeps them (`next end`).
fn pages_of(mark: &str) -> Option<(i64, i64)> {
    let (next, end) = mark.split_once(' ')?;
    Some((next.parse().ok()?, end.parse().ok()?))
}

/// What the parts did, for the report.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// Transactions of the backfills' ranges.
    pub ranges: u64,
    /// Of those, the ranges checked for a mismatch of their own (a copy's).
    pub checked_ranges: u64,
    /// Each part run, and how long it took.
    pub parts: Vec<(String, f64)>,
}

/// What the sessions share: the parts left, whether one failed, the pages
/// of each backfill (for one progress over all of them).
struct Shared<'a, 'p> {
    queue: RefCell<VecDeque<(usize, &'a Part)>>,
    failed: Cell<bool>,
    pages: RefCell<BTreeMap<usize, (u64, u64)>>,
    progress: RefCell<&'p mut (dyn FnMut(Progress) + Send)>,
}

impl Shared<'_, '_> {
    fn pages(&self, n: usize, done: i64, total: i64) {
        let (done, total) = {
            let mut pages = self.pages.borrow_mut();
            pages.insert(n, (done.max(0) as u64, total.max(0) as u64));
            pages
                .values()
                .fold((0, 0), |(d, t), (pd, pt)| (d + pd, t + pt))
        };
        (self.progress.borrow_mut())(Progress::Pages { done, total });
    }
}

/// The parts of a step, run side by side.
pub(super) struct Beside<'a> {
    /// Where the change is recorded.
    pub at: &'a Recorded,
    /// The step's index.
    pub step: usize,
    /// Its parts.
    pub parts: &'a [Part],
    /// At most this many at once.
    pub sessions: u32,
    /// The marks as the step began (which parts are done).
    pub marks: &'a BTreeMap<String, String>,
    /// Rows per backfill range.
    pub batch_size: i64,
    /// The settings of every session of the change.
    pub settings: &'a [SessionSetting],
}

impl Beside<'_> {
    /// Runs the parts not done yet on `first` and as many new sessions of
    /// `db` as there are parts beside it (up to `sessions` in all). The
    /// first error stops every session after its current transaction, and
    /// is returned.
    pub(super) async fn run<D: Database>(
        &self,
        db: &D,
        first: &D::Session,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<Tally, DbError> {
        let mut left: Vec<(usize, &Part, i64)> = Vec::new();
        for (n, part) in self.parts.iter().enumerate() {
            let mark = self.marks.get(&key(self.step, n)).map(String::as_str);
            if mark == Some(DONE) {
                continue;
            }
            // The largest first: the sessions end together.
            let size = match part {
                Part::Backfill(Backfill { table, .. })
                | Part::Transaction {
                    sized_by: Some(table),
                    ..
                } => first.pages(table).await?.0,
                Part::Transaction { sized_by: None, .. } => 0,
            };
            left.push((n, part, size));
        }
        left.sort_by_key(|(n, _, size)| (std::cmp::Reverse(*size), *n));
        let wanted = usize::try_from(self.sessions.max(1))
            .unwrap_or(1)
            .min(left.len());
        let mut others = Vec::new();
        for _ in 1..wanted {
            let session = db.connect().await?;
            set_up(&session, self.settings).await?;
            others.push(session);
        }
        let shared = Shared {
            queue: RefCell::new(left.into_iter().map(|(n, p, _)| (n, p)).collect()),
            failed: Cell::new(false),
            pages: RefCell::new(BTreeMap::new()),
            progress: RefCell::new(progress),
        };
        let sessions = std::iter::once(first).chain(others.iter());
        let done = futures_util::future::join_all(sessions.map(|s| self.session(s, &shared))).await;
        let mut tally = Tally::default();
        for d in done {
            let d = d?;
            tally.ranges += d.ranges;
            tally.checked_ranges += d.checked_ranges;
            tally.parts.extend(d.parts);
        }
        Ok(tally)
    }

    /// One session's work: the next part, until none is left or one
    /// failed.
    async fn session(
        &self,
        session: &impl Session,
        shared: &Shared<'_, '_>,
    ) -> Result<Tally, DbError> {
        let mut tally = Tally::default();
        loop {
            if shared.failed.get() {
                return Ok(tally);
            }
            let Some((n, part)) = shared.queue.borrow_mut().pop_front() else {
                return Ok(tally);
            };
            let started = std::time::Instant::now();
            let result = match part {
                Part::Transaction {
                    what, statements, ..
                } => self
                    .transaction(session, n, statements)
                    .await
                    .map_err(|e| e.within(what.clone())),
                Part::Backfill(b) => self.backfill(session, n, b, shared).await.map(|ranges| {
                    tally.ranges += ranges;
                    if b.mismatch.is_some() {
                        tally.checked_ranges += ranges;
                    }
                }),
            };
            if let Err(e) = result {
                shared.failed.set(true);
                return Err(e);
            }
            tally
                .parts
                .push((part.what().to_string(), started.elapsed().as_secs_f64()));
        }
    }

    /// Records `value` under part `n`'s key and commits.
    async fn record(&self, session: &impl Session, n: usize, value: String) -> Result<(), DbError> {
        session
            .update(self.at, StateUpdate::Part(key(self.step, n), value))
            .await?;
        session.execute("COMMIT").await
    }

    /// A part of statements, in one transaction that records it done.
    async fn transaction(
        &self,
        session: &impl Session,
        n: usize,
        statements: &[String],
    ) -> Result<(), DbError> {
        super::locks::begin(session).await?;
        let mut result = Ok(());
        for statement in statements {
            result = session.execute(statement).await;
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = self.record(session, n, DONE.into()).await;
        }
        if result.is_err() {
            rollback(session).await;
        }
        result
    }

    /// A backfill part, range by range from where its mark says, each range
    /// in a transaction that records the next; the ranges run.
    async fn backfill(
        &self,
        session: &impl Session,
        n: usize,
        step: &Backfill,
        shared: &Shared<'_, '_>,
    ) -> Result<u64, DbError> {
        let (pages_now, rows_per_page) = session.pages(&step.table).await?;
        let per_batch = super::backfill::pages_per_batch(self.batch_size, rows_per_page);
        let mark = self.marks.get(&key(self.step, n));
        // Pages added after the part began hold rows the triggers wrote.
        let (mut next, end) = mark.and_then(|m| pages_of(m)).unwrap_or((0, pages_now));
        let mut ranges = 0;
        loop {
            shared.pages(n, next, end);
            if shared.failed.get() {
                return Ok(ranges);
            }
            let until = (next + per_batch).min(end);
            let value = if until >= end {
                DONE.to_string()
            } else {
                format!("{until} {end}")
            };
            super::locks::begin(session).await?;
            let mut result = Ok(());
            if next < end {
                result = super::backfill::fill(session, step, (next, until)).await;
            }
            if result.is_ok() {
                result = self.record(session, n, value).await;
            }
            if let Err(e) = result {
                rollback(session).await;
                return Err(e);
            }
            if next < end {
                ranges += 1;
            }
            if until >= end {
                shared.pages(n, end, end);
                return Ok(ranges);
            }
            next = until;
        }
    }
}

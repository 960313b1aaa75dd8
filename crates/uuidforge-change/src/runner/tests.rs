//! The runner's rules on a database in memory ([`super::fake`]): what is
//! locked, recorded, refused, retried and resumed, without a server. The
//! end-to-end tests on PostgreSQL (`uuidforge-cli`'s `cli_migrate*`,
//! `cli_changes_together`, `cli_application_writes`) check the same rules
//! with real sessions.

use super::fake::{Cue, Fake};
use super::{apply_on, resume_on, Applied, Context};
use crate::ops::Reading;
use crate::ops::{
    Answers, Backup, BatchStep, ChangePlan, Check, Lock, Operation, Planned, Read, Run, Statement,
    Step, Touched,
};
use serde::Serialize;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::WayOut;
use uuidforge_db::error::{DbError, ErrorKind};
use uuidforge_db::plan::Query;

/// The read every plan of the test operation makes: its answer is the
/// schema's version, part of the plan.
const VERSION: &str = "SELECT version";

/// An operation whose plan is `change`, stamped with what the database
/// answers to [`VERSION`]: a schema that moved makes another plan.
struct TestOp {
    change: ChangePlan,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct TestPlan {
    version: String,
    change: ChangePlan,
}

impl Planned for TestPlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

/// The read the test operation asks.
const VERSION_READ: crate::ops::NamedText =
    crate::ops::NamedText::new("version", "read the version");

impl Operation for TestOp {
    type Plan = TestPlan;

    fn name(&self) -> &'static str {
        "test"
    }

    fn reads(&self, _: &Snapshot, _: &Answers) -> Result<Vec<Read>, DbError> {
        Ok(vec![VERSION_READ.read(Query::new(VERSION))])
    }

    fn plan(&self, _: &Snapshot, answers: &Answers) -> Result<TestPlan, DbError> {
        Ok(TestPlan {
            version: answers.answer(&VERSION_READ)?.unwrap_or_default(),
            change: self.change.clone(),
        })
    }
}

fn touches() -> Vec<Touched> {
    vec![Touched {
        oid: 16384,
        name: "public.t".into(),
    }]
}

fn lock() -> Lock {
    Lock::access_exclusive(vec!["\"public\".\"t\"".into()])
}

fn one_transaction(steps: &[&str], checks: Vec<Check>) -> TestOp {
    TestOp {
        change: ChangePlan {
            operation: "test".into(),
            target: "public.t".into(),
            schema: "public".into(),
            touches: touches(),
            backup: Backup {
                relations: vec!["\"public\".\"t\"".into()],
                ..Backup::default()
            },
            run: Run::OneTransaction {
                lock: Some(lock()),
                steps: steps
                    .iter()
                    .map(|s| Step::run(Statement::sql(*s)))
                    .collect(),
                checks,
            },
            ..ChangePlan::default()
        },
    }
}

/// A change in batches: a short first step, an index built concurrently,
/// a last step.
fn batched() -> TestOp {
    TestOp {
        change: ChangePlan {
            operation: "test".into(),
            target: "public.t".into(),
            schema: "public".into(),
            touches: touches(),
            run: Run::Batches {
                batch_size: 100,
                session: Vec::new(),
                give_up: Some(crate::ops::GiveUp {
                    before: 1,
                    lock: lock(),
                    statements: vec!["DROP INDEX i".into(), "ALTER TABLE t DROP COLUMN n".into()],
                }),
                steps: vec![
                    BatchStep::Transaction {
                        what: "prepare".into(),
                        lock: Some(lock()),
                        statements: vec!["ALTER TABLE t ADD COLUMN n uuid".into()],
                        exclusive: true,
                        mark: None,
                        replaces_tables: false,
                    },
                    BatchStep::Concurrently {
                        what: "index".into(),
                        cleanup: "DROP INDEX CONCURRENTLY IF EXISTS i".into(),
                        statement: "CREATE INDEX CONCURRENTLY i ON t (n)".into(),
                    },
                    BatchStep::Transaction {
                        what: "swap".into(),
                        lock: Some(lock()),
                        statements: vec!["ALTER TABLE t RENAME n TO m".into()],
                        exclusive: true,
                        mark: None,
                        replaces_tables: false,
                    },
                ],
            },
            ..ChangePlan::default()
        },
    }
}

async fn plan(db: &Fake, op: &TestOp) -> (TestPlan, Snapshot) {
    let session = super::io::Database::connect(db).await.unwrap();
    super::plan_in(&session, op).await.unwrap()
}

async fn apply(
    db: &Fake,
    op: &TestOp,
    expected: &TestPlan,
    from: &Snapshot,
) -> Result<Applied, DbError> {
    let secret = || Ok(Vec::new());
    let mut progress = |_| {};
    let mut backed_up = |_: &crate::backup::Backup| {};
    let ctx = Context {
        backup_file: Some("fake.dump".into()),
        secret: &secret,
        progress: &mut progress,
        backed_up: &mut backed_up,
    };
    apply_on(db, op, expected, from, ctx).await
}

/// The change under way of the test's table.
async fn under_way(db: &Fake) -> super::state::UnderWay {
    let session = super::io::Database::connect(db).await.unwrap();
    super::io::Session::under_way(&session, &[16384])
        .await
        .unwrap()
        .pop()
        .expect("a change under way")
}

async fn resume(db: &Fake) -> Result<Applied, DbError> {
    resume_on(db, &under_way(db).await, b"", &mut |_| {}).await
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn one_transaction_locks_runs_checks_and_commits_then_lets_its_locks_go() {
    run(async {
        let db = Fake::new(&[(VERSION, "1")]);
        db.text("SELECT counts", r#"{"rows left": 0}"#);
        let op = one_transaction(
            &["UPDATE t SET a = 1", "UPDATE t SET b = 2"],
            vec![Check::Zero {
                what: "verify".into(),
                statement: Statement::sql("SELECT counts"),
            }],
        );
        let (expected, from) = plan(&db, &op).await;
        let done = apply(&db, &op, &expected, &from).await.unwrap();
        assert_eq!(done.checks, ["rows left: 0"]);
        let committed = db.committed();
        let at = |s: &str| committed.iter().position(|c| c.contains(s)).unwrap();
        assert!(
            at("LOCK TABLE \"public\".\"t\" IN ACCESS EXCLUSIVE MODE NOWAIT")
                < at("UPDATE t SET a")
        );
        assert!(at("UPDATE t SET a") < at("UPDATE t SET b"));
        assert_eq!(db.advisory_locks(), 0, "the guard's locks are let go");
        assert!(done.backup.is_some(), "backed up first");
    });
}

#[test]
fn a_failed_check_rolls_everything_back() {
    run(async {
        let db = Fake::new(&[(VERSION, "1")]);
        db.text("SELECT counts", r#"{"rows left": 2}"#);
        let op = one_transaction(
            &["UPDATE t SET a = 1"],
            vec![Check::Zero {
                what: "verify".into(),
                statement: Statement::sql("SELECT counts"),
            }],
        );
        let (expected, from) = plan(&db, &op).await;
        let e = apply(&db, &op, &expected, &from).await.unwrap_err();
        assert!(
            matches!(&e.kind, ErrorKind::VerificationFailed { failed } if failed == &["rows left: 2"]),
            "{e}"
        );
        assert_eq!(db.count("UPDATE t"), 0, "nothing committed");
    });
}

#[test]
fn a_plan_that_changed_is_refused_before_any_step_runs() {
    run(async {
        let db = Fake::new(&[(VERSION, "1")]);
        let op = one_transaction(&["UPDATE t SET a = 1"], Vec::new());
        let (expected, from) = plan(&db, &op).await;
        // Someone changes the schema between the printed plan and --apply.
        db.answer(VERSION, "2");
        let e = apply(&db, &op, &expected, &from).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::SchemaChanged, "{e}");
        assert_eq!(db.count("UPDATE t"), 0);
        // In batches too: not even the first step.
        let op = batched();
        db.answer(VERSION, "1");
        let (expected, from) = plan(&db, &op).await;
        db.answer(VERSION, "3");
        let e = apply(&db, &op, &expected, &from).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::SchemaChanged, "{e}");
        assert!(db.under_way().is_empty() && db.count("ADD COLUMN") == 0);
    });
}

#[test]
fn a_lock_lost_to_a_writer_is_given_back_and_taken_again() {
    run(async {
        let db = Fake::new(&[(VERSION, "1")]);
        // A writer holds the table: the first NOWAIT fails.
        db.cue("NOWAIT", Cue::Refuse("55P03"));
        let op = one_transaction(&["UPDATE t SET a = 1"], Vec::new());
        let (expected, from) = plan(&db, &op).await;
        apply(&db, &op, &expected, &from).await.unwrap();
        // It waited for that table alone (no NOWAIT), then took them all.
        let committed = db.committed();
        let waited = committed
            .iter()
            .position(|c| c == "LOCK TABLE \"public\".\"t\" IN ACCESS EXCLUSIVE MODE")
            .expect("a wait for the busy table");
        assert!(
            waited
                < committed
                    .iter()
                    .position(|c| c.contains("UPDATE t"))
                    .unwrap()
        );
    });
}

#[test]
fn a_kill_between_a_commit_and_the_state_update_resumes_that_step_again() {
    run(async {
        let db = Fake::new(&[(VERSION, "1")]);
        let op = batched();
        let (expected, from) = plan(&db, &op).await;
        // Killed once the index is built, before the next transaction
        // records it: the state still says step 2.
        db.cue("CREATE INDEX CONCURRENTLY", Cue::KillAfter);
        let e = apply(&db, &op, &expected, &from).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Connection, "{e}");
        assert_eq!(
            e.ways_out(),
            [WayOut::Resume {
                operation: "test".into(),
                target: "public.t".into()
            }],
            "the operation taken up again: {e}"
        );
        assert_eq!(db.under_way(), [("public.t".to_string(), 1)]);
        assert_eq!(db.advisory_locks(), 0, "a killed run's locks are gone");
        let done = resume(&db).await.unwrap();
        assert_eq!(done.resumed_at_step, Some(2));
        // The step ran again from its cleanup, then the rest, once.
        let committed = db.committed();
        let cleanups: Vec<usize> = committed
            .iter()
            .enumerate()
            .filter(|(_, c)| c.contains("DROP INDEX CONCURRENTLY IF EXISTS i"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(cleanups.len(), 2);
        let second_build = committed
            .iter()
            .rposition(|c| c.contains("CREATE INDEX CONCURRENTLY"))
            .unwrap();
        assert!(cleanups[1] < second_build);
        assert_eq!(db.count("ADD COLUMN"), 1);
        assert_eq!(db.count("RENAME n TO m"), 1);
        assert!(db.under_way().is_empty(), "the state is removed at the end");
    });
}

#[test]
fn a_second_resume_is_busy_and_another_change_of_the_tables_is_refused() {
    run(async {
        let db = Fake::new(&[(VERSION, "1")]);
        let op = batched();
        let (expected, from) = plan(&db, &op).await;
        db.cue("CREATE INDEX CONCURRENTLY", Cue::KillAfter);
        apply(&db, &op, &expected, &from).await.unwrap_err();
        // Another change of the same table while one is under way: refused,
        // naming it and how to complete it.
        let other = one_transaction(&["UPDATE t SET a = 1"], Vec::new());
        let (expected, from) = plan(&db, &other).await;
        let e = apply(&db, &other, &expected, &from).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Refused, "{e}");
        assert!(
            e.message.contains("public.t") && e.message.contains("under way"),
            "{e}"
        );
        assert_eq!(
            e.ways_out(),
            [WayOut::Resume {
                operation: "test".into(),
                target: "public.t".into()
            }]
        );
        // A second operator's --resume while a first one runs it: busy.
        let running = db.held_by_another((0x7575_6964_i64 << 32) | 16384);
        let e = resume(&db).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Busy, "{e}");
        assert!(e.message.contains(&format!("pid {running}")), "{e}");
        assert_eq!(db.count("UPDATE t"), 0);
        assert_eq!(db.count("RENAME n TO m"), 0, "nothing ran");
        assert_eq!(db.under_way(), [("public.t".to_string(), 1)]);
    });
}

/// A change in batches whose second step runs parts beside each other: two
/// tables copied range by range (3 ranges each on the fake) and an index.
fn beside() -> TestOp {
    let copy = |t: &str| {
        crate::ops::Part::Backfill(crate::ops::Backfill {
            what: format!("copy {t}"),
            table: t.into(),
            update_sql: format!("COPY RANGE OF {t}"),
            quiet: Vec::new(),
            restore: Vec::new(),
            mismatch: Some("rows not copied".into()),
        })
    };
    let mut op = batched();
    if let Run::Batches { steps, .. } = &mut op.change.run {
        steps[1] = BatchStep::Beside {
            what: "copies".into(),
            sessions: 2,
            parts: vec![
                copy("a"),
                copy("b"),
                crate::ops::Part::Transaction {
                    what: "index".into(),
                    sized_by: None,
                    statements: vec!["CREATE INDEX c ON s (n)".into()],
                },
            ],
        };
    }
    op
}

#[test]
fn parts_run_beside_each_other_each_once_and_a_killed_run_goes_on_with_the_parts_and_ranges_not_done(
) {
    run(async {
        let db = Fake::new(&[(VERSION, "1")]);
        let op = beside();
        let (expected, from) = plan(&db, &op).await;
        let done = apply(&db, &op, &expected, &from).await.unwrap();
        assert_eq!(db.count("COPY RANGE OF a"), 3);
        assert_eq!(db.count("COPY RANGE OF b"), 3);
        assert_eq!(db.count("CREATE INDEX c"), 1);
        assert_eq!(done.batches, 6, "{done:?}");
        assert_eq!(
            done.parts
                .iter()
                .map(|(w, _)| w.as_str())
                .collect::<Vec<_>>(),
            ["copy a", "copy b", "index"],
            "every part reported"
        );
        assert!(
            done.checks
                .iter()
                .any(|c| c.contains("6 ranges copied, each checked")),
            "{:?}",
            done.checks
        );

        // Killed in b's second range: a is done, b's first range committed
        // with its mark, the index not begun.
        let db = Fake::new(&[(VERSION, "1")]);
        let (expected, from) = plan(&db, &op).await;
        db.cue("COPY RANGE OF b", Cue::KillAfterMore(1));
        let e = apply(&db, &op, &expected, &from).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Connection, "{e}");
        assert_eq!(db.under_way(), [("public.t".to_string(), 1)]);
        assert_eq!(db.count("COPY RANGE OF a"), 3);
        assert_eq!(
            db.count("COPY RANGE OF b"),
            1,
            "the killed range rolled back"
        );
        assert_eq!(db.count("CREATE INDEX c"), 0);
        let done = resume(&db).await.unwrap();
        assert_eq!(done.resumed_at_step, Some(2));
        assert_eq!(
            db.count("COPY RANGE OF a"),
            3,
            "a part done is not run again"
        );
        assert_eq!(db.count("COPY RANGE OF b"), 3, "each range once");
        assert_eq!(db.count("CREATE INDEX c"), 1);
        assert_eq!(db.count("RENAME n TO m"), 1);
        assert!(db.under_way().is_empty());

        // Killed in the index's transaction: both copies done stay done.
        let db = Fake::new(&[(VERSION, "1")]);
        let (expected, from) = plan(&db, &op).await;
        db.cue("CREATE INDEX c", Cue::KillAfter);
        apply(&db, &op, &expected, &from).await.unwrap_err();
        resume(&db).await.unwrap();
        assert_eq!(db.count("COPY RANGE OF a"), 3);
        assert_eq!(db.count("COPY RANGE OF b"), 3);
        assert_eq!(db.count("CREATE INDEX c"), 1);
    });
}

#[test]
fn a_part_that_fails_stops_the_step_unrecorded_and_the_others_after_their_transaction() {
    run(async {
        let db = Fake::new(&[(VERSION, "1")]);
        let op = beside();
        let (expected, from) = plan(&db, &op).await;
        db.cue("CREATE INDEX c", Cue::Refuse("23505"));
        let e = apply(&db, &op, &expected, &from).await.unwrap_err();
        assert_eq!(e.sqlstate(), Some("23505"), "{e}");
        assert!(e.to_string().contains("index"), "the part is named: {e}");
        assert_eq!(
            db.under_way(),
            [("public.t".to_string(), 1)],
            "the step is not done"
        );
        assert_eq!(db.count("CREATE INDEX c"), 0);
        assert_eq!(db.count("RENAME n TO m"), 0, "no step after it ran");
        // Resumed, the copies done are not run again.
        resume(&db).await.unwrap();
        assert_eq!(db.count("COPY RANGE OF a"), 3);
        assert_eq!(db.count("COPY RANGE OF b"), 3);
        assert_eq!(db.count("CREATE INDEX c"), 1);
    });
}

/// A database where `op` was applied and its process killed once a
/// statement containing `pattern` ran.
async fn killed_after(op: &TestOp, pattern: &str) -> Fake {
    let db = Fake::new(&[(VERSION, "1")]);
    let (expected, from) = plan(&db, op).await;
    db.cue(pattern, Cue::KillAfter);
    apply(&db, op, &expected, &from).await.unwrap_err();
    db
}

async fn give_up(db: &Fake) -> Result<f64, DbError> {
    super::give_up_on(db, &under_way(db).await).await
}

#[test]
fn a_change_is_given_up_until_the_step_its_plan_names_has_committed_and_only_then() {
    run(async {
        // Killed in its second step: given up, what its steps made is
        // dropped under its lock and its state goes, in one transaction.
        let db = killed_after(&batched(), "CREATE INDEX CONCURRENTLY").await;
        give_up(&db).await.unwrap();
        let committed = db.committed();
        let at = |s: &str| committed.iter().rposition(|c| c.contains(s)).unwrap();
        assert!(at("IN ACCESS EXCLUSIVE MODE") < at("DROP INDEX i"));
        assert!(at("DROP INDEX i") < at("DROP COLUMN n"));
        assert!(db.under_way().is_empty(), "its state is gone");
        assert_eq!(db.advisory_locks(), 0);

        // Killed after the step that changes the tables: refused, nothing
        // dropped, the way out is to complete it.
        let db = killed_after(&batched(), "RENAME n TO m").await;
        let e = give_up(&db).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Refused, "{e}");
        assert!(e.to_string().contains("step 2 (index)"), "{e}");
        assert_eq!(
            e.ways_out(),
            [WayOut::Resume {
                operation: "test".into(),
                target: "public.t".into()
            }]
        );
        assert_eq!(db.count("DROP COLUMN n"), 0);
        assert_eq!(db.under_way(), [("public.t".to_string(), 2)]);
        resume(&db).await.unwrap();
        assert!(db.under_way().is_empty());
    });
}

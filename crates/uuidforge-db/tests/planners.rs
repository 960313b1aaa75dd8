//! The change planners ([`uuidforge_db::ops`]) on catalogs captured from
//! the real server, without a server: every operation planned from a
//! snapshot and the answers of its planning pass, read back from
//! `tests/fixtures/plans/*.json`, and the plan's shape checked — key
//! types, partitions, a composite key, views over views, a
//! self-reference, merges with collisions, and the refusals.
//!
//! `UUIDFORGE_CAPTURE_FIXTURES=1` (`scripts/capture-fixtures.sh`) first
//! makes each database of `tests/fixtures/plans/*.sql` on the server and
//! records its catalog snapshot and every answer its operations read.

mod common;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use uuid::Uuid;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::{DbError, ErrorKind};
use uuidforge_db::ops::merge::{Merge, MergeOptions, OnConflict};
use uuidforge_db::ops::migrate_batched::MigrateBatched;
use uuidforge_db::ops::migrate_key::{MigrateKey, MigrateOptions};
use uuidforge_db::ops::rename::{Rename, RenameOptions};
use uuidforge_db::ops::{print, ChangePlan, Check, Mode, Operation, Planned, Step, Stop};

const ANN: &str = "01890a5d-ac96-774b-bcce-b302099a8057";
const ANN_B: &str = "01900a5d-ac96-774b-bcce-b302099a8058";
const NEW: &str = "01a20e16-097a-7090-9062-c30bfcde9a7c";

/// An operation of a fixture, by name.
enum Case {
    Rename(Rename),
    Migrate(MigrateKey),
    Batched(MigrateBatched),
    Merge(Merge),
}

fn uuid(s: &str) -> Uuid {
    s.parse().unwrap()
}

fn migrate(table: &str, column: Option<&str>) -> Case {
    Case::Migrate(MigrateKey {
        table: table.into(),
        options: MigrateOptions {
            column: column.map(str::to_string),
            ..MigrateOptions::default()
        },
    })
}

fn merge(ids: &[&str], on_conflict: OnConflict) -> Case {
    Case::Merge(Merge {
        ids: ids.iter().map(|s| uuid(s)).collect(),
        new: uuid(NEW),
        options: MergeOptions {
            on_conflict,
            ..MergeOptions::default()
        },
        implicit: Vec::new(),
    })
}

/// The operations planned on `shop.sql`.
fn shop_cases() -> Vec<(&'static str, Case)> {
    vec![
        (
            "rename related and views",
            Case::Rename(Rename {
                column: "public.orders.customer_id".into(),
                new_name: "client_id".into(),
                options: RenameOptions {
                    related: true,
                    views: true,
                    ..RenameOptions::default()
                },
            }),
        ),
        (
            "rename to a taken name",
            Case::Rename(Rename {
                column: "orders.total".into(),
                new_name: "customer_id".into(),
                options: RenameOptions::default(),
            }),
        ),
        ("migrate bigint", migrate("customers", None)),
        ("migrate text", migrate("codes", None)),
        ("migrate smallint", migrate("tiny", None)),
        ("migrate composite", migrate("events", Some("id"))),
        ("migrate a view", migrate("order_customers", None)),
        ("migrate nothing", migrate("nope", None)),
        (
            "batched bigint",
            Case::Batched(MigrateBatched {
                table: "customers".into(),
                options: MigrateOptions::default(),
                batch_size: 1000,
            }),
        ),
        (
            "merge keep survivor",
            merge(&[ANN, ANN_B], OnConflict::KeepSurvivor),
        ),
        ("merge fail", merge(&[ANN, ANN_B], OnConflict::Fail)),
        ("merge one", merge(&[ANN], OnConflict::KeepSurvivor)),
    ]
}

/// A catalog and the answers each operation read.
#[derive(Serialize, Deserialize)]
struct Fixture {
    snapshot: serde_json::Value,
    answers: BTreeMap<String, Vec<String>>,
}

/// What a planning pass gives: the change, or the error.
type Planned2 = Result<ChangePlan, DbError>;

fn plan_with<O: Operation>(op: &O, snapshot: &Snapshot, answers: &[String]) -> Planned2 {
    // The reads the operation asks for must be exactly those answered.
    let mut given = 0;
    loop {
        let reads = op.reads(snapshot, &answers[..given])?;
        if reads.is_empty() {
            break;
        }
        given += reads.len();
        assert!(
            given <= answers.len(),
            "{}: more reads than recorded",
            op.name()
        );
    }
    op.plan(snapshot, answers).map(|p| p.change().clone())
}

impl Case {
    fn plan(&self, snapshot: &Snapshot, answers: &[String]) -> Planned2 {
        match self {
            Case::Rename(op) => plan_with(op, snapshot, answers),
            Case::Migrate(op) => plan_with(op, snapshot, answers),
            Case::Batched(op) => plan_with(op, snapshot, answers),
            Case::Merge(op) => plan_with(op, snapshot, answers),
        }
    }
}

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/plans/{name}"))
}

/// Makes the database of `name.sql`, records its snapshot and the
/// answers of every case, and writes `name.json`.
async fn capture(name: &str, cases: &[(&'static str, Case)]) {
    use uuidforge_db::client::{ReadOnly, Reader};
    let db = common::TestDb::create(&format!("plans_{name}")).await;
    let sql = std::fs::read_to_string(fixture_path(&format!("{name}.sql"))).unwrap();
    db.admin().await.batch_execute(&sql).await.unwrap();
    let config = uuidforge_db::client::config(Some(&db.admin_url())).unwrap();
    let session = ReadOnly::open(&config).await.unwrap();
    let raw = session
        .rows(
            &uuidforge_db::plan::Query::new(uuidforge_db::catalog::SNAPSHOT_SQL.as_str()),
            "catalog",
        )
        .await
        .unwrap()
        .remove(0);
    let snapshot = session.snapshot().await.unwrap();
    let mut answers = BTreeMap::new();
    for (case, op) in cases {
        let mut got = Vec::new();
        loop {
            let reads = match op {
                Case::Rename(o) => o.reads(&snapshot, &got),
                Case::Migrate(o) => o.reads(&snapshot, &got),
                Case::Batched(o) => o.reads(&snapshot, &got),
                Case::Merge(o) => o.reads(&snapshot, &got),
            };
            let Ok(reads) = reads else { break };
            if reads.is_empty() {
                break;
            }
            for read in reads {
                got.push(session.one_text_of(&read.query, &read.what).await.unwrap());
            }
        }
        answers.insert(case.to_string(), got);
    }
    session.close().await.unwrap();
    db.drop_now().await;
    let fixture = Fixture {
        snapshot: serde_json::from_str(&raw).unwrap(),
        answers,
    };
    let major = snapshot.server_version_num / 10000;
    std::fs::write(
        fixture_path(&format!("{name}-pg{major}.json")),
        serde_json::to_string_pretty(&fixture).unwrap() + "\n",
    )
    .unwrap();
}

/// The captured catalogs of `name`: one per server version
/// (`name-pgNN.json`).
fn captured(name: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(fixture_path(""))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{name}-pg")) && n.ends_with(".json"))
        })
        .collect();
    found.sort();
    assert!(
        !found.is_empty(),
        "no {name}-pgNN.json (capture it: scripts/capture-fixtures.sh)"
    );
    found
}

fn load(path: &std::path::Path) -> (Snapshot, BTreeMap<String, Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (capture it: scripts/capture-fixtures.sh)",
            path.display()
        )
    });
    let fixture: Fixture = serde_json::from_str(&text).unwrap();
    let snapshot = Snapshot::from_json(&fixture.snapshot.to_string()).unwrap();
    (snapshot, fixture.answers)
}

fn sql_of(change: &ChangePlan) -> String {
    print(change).join("\n")
}

fn check_shop(snapshot: &Snapshot, answers: &BTreeMap<String, Vec<String>>) {
    let cases = shop_cases();
    let mut plans: BTreeMap<&str, Planned2> = BTreeMap::new();
    for (name, case) in &cases {
        let got = answers.get(*name).map(Vec::as_slice).unwrap_or_default();
        let first = case.plan(snapshot, got);
        // Planning is a function of its inputs: the same plan twice.
        assert_eq!(first, case.plan(snapshot, got), "{name}: not deterministic");
        plans.insert(name, first);
    }
    let ok = |name: &str| {
        plans[name]
            .clone()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let kind = |name: &str| plans[name].clone().err().map(|e| e.kind);

    // Rename: the column, the one referencing the same key with the same
    // name, what is named after them and the views showing them.
    let rename = ok("rename related and views");
    let sql = sql_of(&rename);
    for expected in [
        r#"ALTER TABLE "public"."orders" RENAME COLUMN "customer_id" TO "client_id";"#,
        r#"ALTER INDEX "public"."orders_customer_id_idx" RENAME TO "orders_client_id_idx";"#,
        r#"ALTER TABLE "public"."orders" RENAME CONSTRAINT "orders_customer_id_fkey" TO "orders_client_id_fkey";"#,
        r#"ALTER VIEW "public"."order_customers" RENAME COLUMN "customer_id" TO "client_id";"#,
        r#"ALTER VIEW "public"."big_orders" RENAME COLUMN "customer_id" TO "client_id";"#,
        r#"ALTER TABLE "public"."events" RENAME COLUMN "customer_id" TO "client_id";"#,
    ] {
        assert!(sql.contains(expected), "rename lacks {expected}:\n{sql}");
    }
    assert!(rename.backup.schema_only);
    assert!(matches!(rename.checks[..], [Check::Renamed { .. }]));
    assert!(sql.contains("-- undo:"), "{sql}");
    assert_eq!(kind("rename to a taken name"), Some(ErrorKind::Refused));

    // Migrate: every reference (a self-reference, a composite key over a
    // reference, a partitioned table, a key that is also a reference),
    // views dropped dependents first and made again, checked in one
    // transaction.
    let m = ok("migrate bigint");
    assert_eq!(m.mode, Mode::OneTransaction);
    assert!(matches!(m.steps[1], Step::Keys { ordered: false, .. }));
    let sql = sql_of(&m);
    for reference in [
        r#""public"."orders" ADD COLUMN "customer_id_uuidforge_new""#,
        r#""public"."customers" ADD COLUMN "parent_id_uuidforge_new""#,
        r#""public"."Zeilen" ADD COLUMN "Kunde_uuidforge_new""#,
        r#""public"."events" ADD COLUMN "customer_id_uuidforge_new""#,
        r#""public"."profiles" ADD COLUMN "customer_id_uuidforge_new""#,
    ] {
        assert!(sql.contains(reference), "migrate lacks {reference}");
    }
    let drop_big = sql
        .find(r#"DROP VIEW "public"."big_orders""#)
        .expect("dependent view dropped");
    let drop_oc = sql
        .find(r#"DROP VIEW "public"."order_customers""#)
        .expect("view dropped");
    assert!(drop_big < drop_oc, "a view over a view is dropped first");
    let create_oc = sql
        .find(r#"CREATE VIEW "public"."order_customers""#)
        .unwrap();
    let create_big = sql.find(r#"CREATE VIEW "public"."big_orders""#).unwrap();
    assert!(
        create_oc < create_big,
        "and made again after the one it uses"
    );
    assert!(matches!(
        &m.checks[..],
        [Check::Zero { .. }, Check::Unchanged { .. }, Check::Unchanged { what: other, .. }, Check::Unchanged { what: indexes, .. }]
            if other == "other columns" && indexes == "indexes"
    ));
    // The application's trigger is off around the migration's updates and
    // back on after them.
    let off = sql
        .find(r#"ALTER TABLE "public"."orders" DISABLE TRIGGER "orders_touched""#)
        .expect("trigger disabled");
    let on = sql
        .find(r#"ALTER TABLE "public"."orders" ENABLE TRIGGER "orders_touched""#)
        .expect("trigger enabled again");
    let update = sql.find(r#"UPDATE "public"."orders""#).unwrap();
    assert!(off < update && update < on, "{sql}");
    assert!(m
        .backup
        .relations
        .contains(&r#""public"."customers""#.to_string()));
    assert!(!m.backup.schema_only);
    for (name, key_type) in [
        ("migrate text", "(text)"),
        ("migrate smallint", "(smallint)"),
    ] {
        let p = ok(name);
        assert!(p.summary[0].contains(key_type), "{name}: {}", p.summary[0]);
    }
    let composite = ok("migrate composite");
    assert!(
        sql_of(&composite).contains(r#"PRIMARY KEY ("id", "at")"#),
        "the partitioned key keeps its partition column"
    );
    assert_eq!(kind("migrate a view"), Some(ErrorKind::Refused));
    assert_eq!(kind("migrate nothing"), Some(ErrorKind::NotFound));

    // In batches: steps, the first one locking writers out, keys, a
    // backfill per table, indexes built concurrently, checks.
    let b = ok("batched bigint");
    assert!(matches!(
        b.mode,
        Mode::Steps {
            batch_size: 1000,
            ..
        }
    ));
    assert!(matches!(
        b.steps[0],
        Step::Transaction {
            exclusive: true,
            ..
        }
    ));
    let count = |f: fn(&Step) -> bool| b.steps.iter().filter(|s| f(s)).count();
    assert_eq!(count(|s| matches!(s, Step::Keys { .. })), 1);
    assert!(
        count(|s| matches!(s, Step::Backfill { .. })) >= 5,
        "a backfill per column"
    );
    assert!(count(|s| matches!(s, Step::Concurrently { .. })) >= 2);
    assert!(count(|s| matches!(s, Step::Check { .. })) >= 2);

    // Merge: numbered from the log by a named output, collisions resolved
    // (or refused with fail), references moved, checked.
    let merge = ok("merge keep survivor");
    let outputs: Vec<&str> = merge
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Run {
                output: Some(o), ..
            } => Some(o.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(outputs, ["merge_id", "collisions"]);
    let sql = sql_of(&merge);
    assert!(
        sql.contains(r#"UPDATE "public"."memberships" SET "person_id" = $1"#),
        "{sql}"
    );
    assert!(
        sql.contains(r#"DELETE FROM "public"."memberships" x"#),
        "collisions deleted"
    );
    assert!(sql.contains("-- $1 = merge_id, $2 = new, $3 = reason, $4 = survivor, $5 = olds"));
    let fail = ok("merge fail");
    assert!(fail.steps.iter().any(|s| matches!(
        s,
        Step::Expect { stop: Stop::Refused, context, .. } if context == "on-conflict"
    )));
    assert_eq!(kind("merge one"), Some(ErrorKind::Invalid));
}

#[tokio::test]
async fn planners_on_captured_catalogs() {
    if std::env::var_os("UUIDFORGE_CAPTURE_FIXTURES").is_some() {
        capture("shop", &shop_cases()).await;
    }
    for path in captured("shop") {
        let started = std::time::Instant::now();
        let (snapshot, answers) = load(&path);
        check_shop(&snapshot, &answers);
        eprintln!(
            "planners: {} operations planned twice on {} in {:.1} ms",
            shop_cases().len(),
            path.file_name().unwrap().to_string_lossy(),
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
}

/// `db related`'s naming evidence ties a column only to the key its name
/// names: `orders.customer_id` names `customers.id`, not the customers'
/// other columns (their email is unique, and still not named by it).
#[test]
fn naming_ties_a_column_to_the_key_it_names() {
    use uuidforge_db::related::{plan, report, Target};
    for path in captured("shop") {
        let (snapshot, _) = load(&path);
        let target = Target::parse_column(&snapshot, "public.orders.customer_id").unwrap();
        let related = report(&snapshot, &plan(&snapshot, target), None).unwrap();
        let naming: Vec<String> = related
            .iter()
            .flat_map(|r| {
                r.evidence
                    .iter()
                    .filter(|e| e.kind == "naming")
                    .map(move |e| format!("{}.{}: {}", r.table, r.column, e.detail))
            })
            .collect();
        assert!(
            naming
                .iter()
                .all(|n| n.starts_with("customers.id:") || !n.starts_with("customers.")),
            "{}: {naming:?}",
            path.display()
        );
        let customers: Vec<&str> = related
            .iter()
            .filter(|r| r.table == "customers")
            .map(|r| r.column.as_str())
            .collect();
        assert!(!customers.contains(&"email"), "{customers:?}");
        assert!(!customers.contains(&"created_at"), "{customers:?}");
    }
}

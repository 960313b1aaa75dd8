//! The catalogs of the planner tests (`tests/planners/`), captured from the
//! real server: with `UUIDFORGE_CAPTURE_FIXTURES=1`
//! (`scripts/capture-fixtures.sh`, on 15 and with `UUIDFORGE_TEST_PGPORT`
//! on 18) each database of `tests/fixtures/plans/NAME.sql` is made (and,
//! where the catalog says so, a merge applied through the runner, as a user
//! would), and its snapshot and every answer each case reads are written to
//! `NAME-pgNN.json`. Without it, the test checks that every captured file
//! answers every read of every case, on every server version captured.

#[path = "planners/catalogs.rs"]
mod catalogs;
#[path = "../../uuidforge-db/tests/common/mod.rs"]
mod common;

use catalogs::{captured, catalogs, fixture_path, uuid, Catalog, Fixture};
use std::collections::BTreeMap;
use uuidforge_change::ops::{Answers, Probe};
use uuidforge_db::client::{ReadOnly, Reader};

/// Applies the merge a catalog asks for, through the runner.
async fn merge_first(db: &common::TestDb, ids: &[&str], into: &str) {
    use uuidforge_change::ops::merge::{Merge, MergeOptions};
    let config = uuidforge_db::client::config(Some(&db.admin_url())).unwrap();
    let op = Merge {
        ids: ids.iter().map(|s| uuid(s)).collect(),
        new: uuid(into),
        options: MergeOptions::default(),
        implicit: Vec::new(),
    };
    let session = ReadOnly::open(&config).await.unwrap();
    let (plan, snapshot) = uuidforge_change::runner::plan(&session, &op).await.unwrap();
    session.close().await.unwrap();
    let dir = std::env::temp_dir().join(format!("uf_capture_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let no_secret = || Ok(Vec::new());
    let mut progress = |_| {};
    let mut backed_up = |_: &uuidforge_change::backup::Backup| {};
    uuidforge_change::runner::apply(
        &config,
        &op,
        &plan,
        &snapshot,
        uuidforge_change::runner::Context {
            backup_file: Some(dir.join(format!("{}.dump", db.name))),
            secret: &no_secret,
            progress: &mut progress,
            backed_up: &mut backed_up,
        },
    )
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Makes the database of `catalog`, records its snapshot and the answers
/// of every case, and writes `NAME-pgNN.json`.
async fn capture(catalog: &Catalog) {
    let db = common::TestDb::create(&format!("plans_{}", catalog.name)).await;
    let sql = std::fs::read_to_string(fixture_path(&format!("{}.sql", catalog.name))).unwrap();
    db.admin().await.batch_execute(&sql).await.unwrap();
    if let Some((ids, into)) = &catalog.merged_first {
        merge_first(&db, ids, into).await;
    }
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
    for (name, case) in &catalog.cases {
        let mut got = Answers::default();
        while let Ok(reads) = case.reads(&snapshot, &got) {
            let reads = got.missing(reads);
            if reads.is_empty() {
                break;
            }
            for read in reads {
                let text = match session.probe_text_of(&read.query, &read.what).await {
                    Ok(text) => text,
                    Err(e) if read.fallible => Probe::refused_answer(&e.message),
                    Err(e) => panic!("{}/{name}: {e}", catalog.name),
                };
                got.insert(read.name, text);
            }
        }
        answers.insert(name.to_string(), got);
    }
    session.close().await.unwrap();
    db.drop_now().await;
    let fixture = Fixture {
        snapshot: serde_json::from_str(&raw).unwrap(),
        answers,
    };
    let major = snapshot.server_version_num / 10000;
    std::fs::write(
        fixture_path(&format!("{}-pg{major}.json", catalog.name)),
        serde_json::to_string_pretty(&fixture).unwrap() + "\n",
    )
    .unwrap();
}

#[tokio::test]
async fn every_case_is_captured_on_every_server() {
    if std::env::var_os("UUIDFORGE_CAPTURE_FIXTURES").is_some() {
        for catalog in catalogs() {
            capture(&catalog).await;
        }
    }
    for catalog in catalogs() {
        let captures = captured(catalog.name);
        let majors: Vec<i32> = captures.iter().map(|c| c.major).collect();
        assert!(
            majors.contains(&15) && majors.contains(&18),
            "{}: captured on {majors:?} (expected 15 and 18)",
            catalog.name
        );
        for c in &captures {
            for (name, case) in &catalog.cases {
                let answers = c.answers.get(*name).unwrap_or_else(|| {
                    panic!("{}-pg{}: case '{name}' not captured", catalog.name, c.major)
                });
                if let Ok(reads) = case.reads(&c.snapshot, answers) {
                    for read in reads {
                        assert!(
                            answers.has(&read.name),
                            "{}-pg{}/{name}: read '{}' not captured",
                            catalog.name,
                            c.major,
                            read.name
                        );
                    }
                }
            }
        }
    }
}

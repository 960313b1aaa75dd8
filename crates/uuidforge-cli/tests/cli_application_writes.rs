//! The application keeps writing while `migrate-key` runs, in one
//! transaction and in batches (pgbench beside it, on the real server):
//! children inserted, references moved to another parent, children
//! deleted, parents inserted — before, during and after the swap. The
//! migration completes and verifies what must hold (every reference the
//! new key of the row its old value named, unless the application changed
//! the row since; every reference names a row), pgbench has no failed
//! transaction, and every child is on the parent the application meant
//! (checked by the test's own SQL, through the parent's code each child
//! carries).

mod common;

use common::{admin_sql, fresh_database, url, uuidforge};
use std::time::Duration;

const PARENTS: u32 = 20_000;

fn family(tag: &str) -> String {
    let db = fresh_database(
        tag,
        &format!(
            "CREATE TABLE parent (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, code text NOT NULL UNIQUE,
                                  created_at timestamptz NOT NULL);
             CREATE TABLE child_a (id serial PRIMARY KEY, parent_id bigint REFERENCES parent, parent_code text);
             CREATE TABLE child_b (id serial PRIMARY KEY, parent_id bigint NOT NULL REFERENCES parent, parent_code text NOT NULL);
             CREATE INDEX child_b_parent_id_idx ON child_b (parent_id);
             CREATE TABLE child_c (id serial PRIMARY KEY, parent_id bigint REFERENCES parent ON DELETE CASCADE, parent_code text);
             INSERT INTO parent (code, created_at) SELECT 'p' || g, timestamptz '2024-01-01' + g * interval '1 second' FROM generate_series(1, {PARENTS}) g;
             INSERT INTO child_a (parent_id, parent_code) SELECT p.id, p.code FROM parent p;
             INSERT INTO child_b (parent_id, parent_code) SELECT p.id, p.code FROM parent p ORDER BY p.id DESC;
             INSERT INTO child_c (parent_id, parent_code) SELECT p.id, p.code FROM parent p WHERE p.id % 2 = 0;"
        ),
    );
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    db
}

/// Children not on the parent the application meant (their code).
const MISPLACED: &str = "SELECT concat_ws(' ',
  (SELECT count(*) FROM child_a c JOIN parent p ON p.id = c.parent_id WHERE p.code <> c.parent_code),
  (SELECT count(*) FROM child_b c JOIN parent p ON p.id = c.parent_id WHERE p.code <> c.parent_code),
  (SELECT count(*) FROM child_c c JOIN parent p ON p.id = c.parent_id WHERE p.code <> c.parent_code),
  (SELECT count(*) FROM child_b c WHERE NOT EXISTS (SELECT FROM parent p WHERE p.id = c.parent_id)))";

/// Statements that work before, during and after the migration (no key
/// type named): a child of a parent found by its code, a reference moved,
/// a child deleted, a parent inserted.
const WRITES: &str = "\\set p random(1, 20000)\n\
\\set c random(1, 20000)\n\
BEGIN;\n\
UPDATE child_b SET parent_id = (SELECT id FROM parent WHERE code = 'p' || :p), parent_code = 'p' || :p WHERE id = :c;\n\
INSERT INTO child_a (parent_id, parent_code) SELECT id, code FROM parent WHERE code = 'p' || :p;\n\
DELETE FROM child_c WHERE id = :c;\n\
INSERT INTO parent (code, created_at) VALUES ('n' || :client_id || '.' || :c || '.' || random(), now());\n\
END;\n";

fn migrate_beside_writers(tag: &str, how: &[&str]) {
    let db = family(tag);
    let dir = common::scratch("writes", tag);
    let script = dir.join("writes.sql");
    std::fs::write(&script, WRITES).unwrap();
    let writers = common::Writers::start(&db, &script);
    std::thread::sleep(Duration::from_secs(2));
    let out = uuidforge()
        .env_remove("UUIDFORGE_DB")
        .current_dir(&dir)
        .args([
            "db",
            "--db",
            &url(&db),
            "migrate-key",
            "parent",
            "--order-by",
            "created_at",
            "--apply",
        ])
        .args(how)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8_lossy(&out).to_string();
    let bench = writers.finish();
    let text = &bench.text;
    assert!(bench.all_succeeded, "{text}");
    // Every reference names a row: proved by the foreign keys made again
    // validated.
    assert!(out.contains("foreign keys not valid: 0"), "{out}");
    assert_eq!(admin_sql(&db, MISPLACED), "0 0 0 0", "{how:?}");
    // The application moved references after the migration: children whose
    // parent is not the one their old reference named, parents made since.
    assert_ne!(
        admin_sql(&db, "SELECT count(*) FROM child_b c JOIN parent p ON p.id = c.parent_id WHERE p.id_old IS DISTINCT FROM c.parent_id_old"),
        "0",
        "no reference moved after the swap:\n{text}"
    );
    assert_ne!(
        admin_sql(&db, "SELECT count(*) FROM parent WHERE id_old IS NULL"),
        "0"
    );
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM parent WHERE uuid_extract_version(id) <> 7"
        ),
        "0"
    );
}

/// Failure 4: with the application moving references during a batched
/// migration, its last check failed forever (it compared each reference
/// with the old one the application no longer keeps).
#[test]
fn references_moved_by_the_application_during_batches() {
    migrate_beside_writers("writes_batched", &["--batch-size", "2000"]);
}

#[test]
fn references_moved_by_the_application_around_one_transaction() {
    migrate_beside_writers("writes_one", &[]);
}

#[test]
fn references_moved_by_the_application_during_an_online_copy() {
    migrate_beside_writers("writes_copy", &["--batch-size", "2000", "--copy"]);
}

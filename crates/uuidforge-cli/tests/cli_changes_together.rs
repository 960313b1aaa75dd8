//! Changes that know about each other, on the real server: a batched
//! migration of a parent with three children, stopped or held at a chosen
//! statement (an event trigger: [`common::Hold`]), while another operator
//! renames, merges, migrates again or resumes. Whatever runs beside it is
//! refused before anything changes — busy (exit 3, naming the process)
//! while the migration runs, refused (exit 2, naming it and its next step)
//! while it waits for `--resume` — and the migration then completes.

mod common;

use common::{admin_sql, fresh_database, url, uuidforge, Hold};
use predicates::prelude::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A parent keyed by a bigint with three children (two with an index over
/// the reference), and the uuidforge extension.
fn family(tag: &str, parents: u32) -> String {
    let db = fresh_database(
        tag,
        &format!(
            "CREATE TABLE parent (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, code text NOT NULL UNIQUE,
                                  created_at timestamptz NOT NULL);
             CREATE TABLE child_a (id serial PRIMARY KEY, parent_id bigint REFERENCES parent, note text);
             CREATE TABLE child_b (id serial PRIMARY KEY, parent_id bigint NOT NULL REFERENCES parent, note text);
             CREATE INDEX child_b_parent_id_idx ON child_b (parent_id);
             CREATE TABLE child_c (id serial PRIMARY KEY, parent_id bigint REFERENCES parent ON DELETE CASCADE, note text);
             CREATE INDEX child_c_parent_id_idx ON child_c (parent_id);
             INSERT INTO parent (code, created_at) SELECT 'p' || g, timestamptz '2024-01-01' + g * interval '1 second' FROM generate_series(1, {parents}) g;
             INSERT INTO child_a (parent_id, note) SELECT 1 + g % {parents}, 'a' FROM generate_series(1, {parents}) g;
             INSERT INTO child_b (parent_id, note) SELECT 1 + (g * 7) % {parents}, 'b' FROM generate_series(1, {parents}) g;
             INSERT INTO child_c (parent_id, note) SELECT 1 + (g * 13) % {parents}, 'c' FROM generate_series(1, {parents}) g;"
        ),
    );
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    db
}

fn scratch(tag: &str) -> common::Scratch {
    common::scratch("together", tag)
}

fn db_cmd(db: &str, dir: &Path) -> assert_cmd::Command {
    let mut c = uuidforge();
    c.env_remove("UUIDFORGE_DB")
        .current_dir(dir)
        .args(["db", "--db", &url(db)]);
    c
}

/// `uuidforge db ARGS` in the background.
fn spawn(db: &str, dir: &Path, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .current_dir(dir)
        .env_remove("UUIDFORGE_DB")
        .args(["db", "--db", &url(db)])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> (Option<i32>, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

const MIGRATE: [&str; 6] = [
    "migrate-key",
    "parent",
    "--order-by",
    "created_at",
    "--batch-size",
    "500",
];

/// Every child on the parent of the same code as before, keys UUIDv7,
/// nothing of the migration left.
fn assert_migrated(db: &str) {
    assert_eq!(
        admin_sql(
            db,
            "SELECT concat_ws(' ',
               (SELECT count(*) FROM child_a c JOIN parent p ON p.id = c.parent_id WHERE p.id_old <> c.parent_id_old),
               (SELECT count(*) FROM child_b c JOIN parent p ON p.id = c.parent_id WHERE p.id_old <> c.parent_id_old),
               (SELECT count(*) FROM child_c c JOIN parent p ON p.id = c.parent_id WHERE p.id_old <> c.parent_id_old),
               (SELECT count(*) FROM parent WHERE uuid_extract_version(id) <> 7),
               (SELECT count(*) FROM pg_class WHERE relname ~ '^uuidforge_(keymap|changes|migration|nn)'),
               (SELECT count(*) FROM pg_trigger WHERE tgname = 'uuidforge_migrate'))"
        ),
        "0 0 0 0 0 0",
        "{db}"
    );
}

/// An application write that works whatever the schema is now: a child of
/// a parent found by its code, and a parent.
fn application_writes(db: &str) {
    admin_sql(
        db,
        "SET ROLE uuidforge;
         INSERT INTO child_b (parent_id, note) SELECT id, 'app' FROM parent WHERE code = 'p1';
         UPDATE child_b SET note = 'app' WHERE id = 1;
         INSERT INTO parent (code, created_at) VALUES ('app' || clock_timestamp(), now())",
    );
}

/// Failure 1: a rename of a reference while a batched migration is under
/// way (stopped before its swap; then running) was accepted, and every
/// application write to the table failed after it (the migration's
/// trigger names the old column), the migration with them.
#[test]
fn a_rename_is_refused_while_a_migration_is_under_way() {
    let db = family("rename_under_way", 3000);
    let dir = scratch("rename");
    let mut hold = Hold::install(&db);
    // Stopped at the index of child_b, after the prepare step: triggers in
    // place, the state recorded.
    hold.fail_at("%CREATE INDEX CONCURRENTLY%child_b_parent_id_idx%");
    let (code, out) = finish(spawn(&db, &dir, &[&MIGRATE[..], &["--apply"]].concat()));
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("held by the test"), "{out}");
    assert!(out.contains("--resume"), "the hint: {out}");
    db_cmd(&db, &dir)
        .args(["rename", "child_b.parent_id", "owner_id", "--apply"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("public.child_b")
                .and(predicate::str::contains(
                    "while a migrate-key of public.parent in batches is under way",
                ))
                .and(predicate::str::contains("next step 9 of"))
                .and(predicate::str::contains("--resume")),
        );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'child_b'::regclass AND attname = 'owner_id'"),
        "0",
        "nothing renamed"
    );
    application_writes(&db);
    // While the migration runs (held at a statement), a rename is busy.
    hold.clear();
    hold.wait_at("%VALIDATE CONSTRAINT%");
    let run = spawn(&db, &dir, &["migrate-key", "parent", "--resume"]);
    hold.until_waiting();
    db_cmd(&db, &dir)
        .args(["rename", "child_b.parent_id", "owner_id", "--apply"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "being run by another process (pid",
        ));
    hold.release();
    let (code, out) = finish(run);
    assert_eq!(code, Some(0), "{out}");
    hold.remove();
    application_writes(&db);
    assert_migrated(&db);
    // Done: the rename runs now, over the new column.
    db_cmd(&db, &dir)
        .args(["rename", "child_b.parent_id", "owner_id", "--apply"])
        .assert()
        .success();
}

/// Failure 2: a merge of the new keys between the swap and the end of a
/// batched migration was accepted, and `--resume` then failed for good.
#[test]
fn a_merge_is_refused_between_the_swap_and_the_end() {
    let db = family("merge_under_way", 2000);
    let dir = scratch("merge");
    let hold = Hold::install(&db);
    // Stopped after the swap, at the validation of the foreign keys.
    hold.fail_at("%VALIDATE CONSTRAINT \"child_a_parent_id_fkey\"%");
    let (code, out) = finish(spawn(&db, &dir, &[&MIGRATE[..], &["--apply"]].concat()));
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(
        admin_sql(&db, "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'parent'::regclass AND attname = 'id'"),
        "uuid",
        "after the swap"
    );
    let a = admin_sql(&db, "SELECT id FROM parent WHERE code = 'p1'");
    let b = admin_sql(&db, "SELECT id FROM parent WHERE code = 'p2'");
    db_cmd(&db, &dir)
        .args(["merge", &a, &b, "--apply"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(
                "while a migrate-key of public.parent in batches is under way",
            )
            .and(predicate::str::contains("next step 19 of")),
        );
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM parent WHERE code IN ('p1', 'p2')"
        ),
        "2"
    );
    hold.remove();
    db_cmd(&db, &dir)
        .args(["migrate-key", "parent", "--resume"])
        .assert()
        .success();
    assert_migrated(&db);
    // Done: the merge runs now.
    db_cmd(&db, &dir)
        .args(["merge", &a, &b, "--apply"])
        .assert()
        .success();
}

/// Failure 3: two `--resume` at once both ran (one died on a raw server
/// error and said to resume while the other still ran); two fresh
/// `--apply` at once both began. Now the second is busy at once, exit 3,
/// naming the process, and the first completes.
#[test]
fn a_second_resume_or_apply_at_once_is_busy() {
    let db = family("second_resume", 2000);
    let dir = scratch("resume");
    let mut hold = Hold::install(&db);
    // Two fresh runs at once: the second is busy while the first runs (held
    // at the new key's index).
    hold.wait_at("%CREATE UNIQUE INDEX CONCURRENTLY%parent_id_uuidforge_new%");
    let first = spawn(&db, &dir, &[&MIGRATE[..], &["--apply"]].concat());
    hold.until_waiting();
    let (code, out) = finish(spawn(&db, &dir, &[&MIGRATE[..], &["--apply"]].concat()));
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("being run by another process (pid"), "{out}");
    assert!(!out.contains("already exists"), "{out}");
    // The first stops later (at the NOT NULL checks' validation); then two
    // resumes at once: the second is busy while the first runs.
    let not_null = "%VALIDATE CONSTRAINT \"uuidforge_nn_%";
    hold.fail_at(not_null);
    hold.release();
    let (code, out) = finish(first);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("--resume"), "under way now: {out}");
    hold.clear();
    hold.wait_at(not_null);
    let one = spawn(&db, &dir, &["migrate-key", "parent", "--resume"]);
    hold.until_waiting();
    let (code, out) = finish(spawn(&db, &dir, &["migrate-key", "parent", "--resume"]));
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains("being run by another process (pid")
            && out.contains("migrate-key of public.parent in batches"),
        "{out}"
    );
    assert!(
        !out.contains("complete it with"),
        "no resume advice while it runs: {out}"
    );
    hold.release();
    let (code, out) = finish(one);
    assert_eq!(code, Some(0), "{out}");
    hold.remove();
    assert_migrated(&db);
}

/// Failure 7: errors before a migration begins say nothing of `--resume`;
/// a negative batch size is read as a value, and refused.
#[test]
fn the_resume_hint_only_where_a_migration_is_under_way() {
    let db = family("hint", 200);
    let dir = scratch("hint");
    db_cmd(&db, &dir)
        .args(MIGRATE)
        .args(["--apply", "--backup", "/nonexistent-dir/before.dump"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("/nonexistent-dir/before.dump")
                .and(predicate::str::contains("--resume").not()),
        );
    // The database changed between the plan and the run (the backup's
    // pg_dump alters a table first): refused, nothing under way.
    let pg_dump = changing_pg_dump(&dir, &db);
    db_cmd(&db, &dir)
        .args(["--pg-dump", pg_dump.to_str().unwrap()])
        .args(MIGRATE)
        .args(["--apply"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("changed since the plan was printed")
                .and(predicate::str::contains("--resume").not()),
        );
    assert_eq!(
        admin_sql(&db, "SELECT to_regclass('uuidforge_changes') IS NULL"),
        "t"
    );
    db_cmd(&db, &dir)
        .args(["migrate-key", "parent", "--batch-size", "-1"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("-1")
                .and(predicate::str::contains("1..=2147483647"))
                .and(predicate::str::contains("unexpected argument").not()),
        );
    // Without a migration under way, --resume says so, and no hint.
    db_cmd(&db, &dir)
        .args(["migrate-key", "parent", "--resume"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no change in batches of parent is under way")
                .and(predicate::str::contains("complete it").not()),
        );
}

/// A pg_dump that alters `db` (a column added to child_a) before it dumps:
/// the database changes between a plan and its run.
fn changing_pg_dump(dir: &Path, db: &str) -> std::path::PathBuf {
    // The server's own pg_dump: Debian's (behind its version wrapper) or
    // the one on PATH (18's).
    let major = admin_sql(
        db,
        "SELECT current_setting('server_version_num')::int / 10000",
    );
    let debian = std::path::PathBuf::from(format!("/usr/lib/postgresql/{major}/bin/pg_dump"));
    let real = if debian.exists() {
        debian
    } else {
        let found = Command::new("sh")
            .args(["-c", "command -v pg_dump"])
            .output()
            .unwrap()
            .stdout;
        std::path::PathBuf::from(String::from_utf8(found).unwrap().trim())
    };
    let bin = dir.join("changing-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let _ = std::fs::remove_file(bin.join("pg_restore"));
    std::os::unix::fs::symlink(real.with_file_name("pg_restore"), bin.join("pg_restore")).unwrap();
    let script = bin.join("pg_dump");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$1\" in --version) exec {real} \"$@\";; esac\n{psql} -X -q -d '{url}' -c 'ALTER TABLE child_a ADD COLUMN extra int' >/dev/null\nexec {real} \"$@\"\n",
            real = real.display(),
            psql = real.with_file_name("psql").display(),
            url = common::admin_url(db)
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

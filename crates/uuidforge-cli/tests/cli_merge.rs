//! `uuidforge db merge` and `db unmerge` against the real PostgreSQL
//! server: the plan changes nothing; --apply merges rows, references,
//! unique collisions and (with --implicit) text, JSON and array mentions in
//! one transaction; afterwards `db find` finds none of the old ids outside
//! the log; `uuid_resolve` follows chains; unmerge restores identical rows
//! and refuses when something written since conflicts.

mod common;

use common::{
    admin_sql, fresh_database, url, uuidforge, AB, ANN, ANN_B, BOB, PEOPLE_SCHEMA as SCHEMA,
};
use predicates::prelude::*;

/// Every row of the three tables, as one digest.
const DIGEST: &str = "SELECT md5(string_agg(x, '|' ORDER BY x)) FROM (SELECT to_jsonb(p)::text x FROM people p UNION ALL SELECT to_jsonb(m)::text FROM memberships m UNION ALL SELECT to_jsonb(n)::text FROM \"Notizen\" n UNION ALL SELECT to_jsonb(b)::text FROM blobs b) s";

fn db(name: &str, dir: &std::path::Path) -> assert_cmd::Command {
    let mut c = uuidforge();
    c.env_remove("UUIDFORGE_DB")
        .current_dir(dir)
        .args(["db", "--db", &url(name)]);
    c
}

fn scratch(tag: &str) -> common::Scratch {
    common::scratch("merge", tag)
}

fn json(cmd: &mut assert_cmd::Command) -> serde_json::Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn merge_moves_everything_and_unmerge_restores_identical_rows() {
    let name = fresh_database("merge", SCHEMA);
    let dir = scratch("apply");
    let before = admin_sql(&name, DIGEST);

    // The plan alone changes nothing.
    let plan = json(db(&name, &dir).args(["merge", ANN, ANN_B, AB, "--implicit", "--json"]));
    assert_eq!(plan["survivor"], ANN, "the oldest by v7 time");
    assert_eq!(plan["implicit"].as_array().unwrap().len(), 5, "{plan}");
    assert_eq!(admin_sql(&name, DIGEST), before);
    assert_eq!(
        admin_sql(&name, "SELECT to_regclass('uuidforge_merge_log') IS NULL"),
        "t"
    );

    let report = json(db(&name, &dir).args([
        "merge",
        ANN,
        ANN_B,
        AB,
        "--implicit",
        "--reason",
        "same person",
        "--apply",
        "--json",
    ]));
    let new = report["new"].as_str().unwrap().to_string();
    assert_eq!(&new[14..15], "7", "a UUIDv7: {new}");
    assert_eq!(report["applied"]["implicit"], 5);
    // Bytes and a JSON object key too.
    assert_eq!(
        admin_sql(&name, "SELECT encode(raw, 'hex') || ' ' || (SELECT string_agg(k, '') FROM jsonb_object_keys(meta) k) FROM blobs"),
        format!("{} {new}", new.replace('-', ""))
    );
    // One row for the three, Ann's (the survivor) under the new key; Bob untouched.
    assert_eq!(
        admin_sql(
            &name,
            "SELECT string_agg(id || ' ' || name, ', ' ORDER BY name) FROM people"
        ),
        format!("{new} Ann, {BOB} Bob")
    );
    // chess: Ann's row kept, Ann B.'s deleted; go: Ann B.'s kept over A. B.'s.
    assert_eq!(
        admin_sql(
            &name,
            &format!("SELECT string_agg(group_name || ' ' || since, ', ' ORDER BY group_name) FROM memberships WHERE person_id = '{new}'")
        ),
        "chess 2020-01-01, go 2021-02-01"
    );
    // Text keeps its spelling (upper case), JSON and arrays are rewritten.
    assert_eq!(
        admin_sql(
            &name,
            "SELECT body || ' ' || (doc->>'who') || ' ' || tags[1] FROM \"Notizen\" WHERE id = 1"
        ),
        format!("see also {} {new} {new}", new.to_uppercase())
    );
    // The log, and uuid_resolve in one lookup.
    assert_eq!(
        admin_sql(&name, &format!("SELECT count(*) || ' ' || min(reason) FROM uuidforge_merge_log WHERE new = '{new}'")),
        "3 same person"
    );
    for old in [ANN, ANN_B, AB] {
        assert_eq!(
            admin_sql(&name, &format!("SELECT uuid_resolve('{old}')")),
            new
        );
    }
    assert_eq!(
        admin_sql(&name, &format!("SELECT uuid_resolve('{BOB}')")),
        BOB
    );
    // find: the old ids are only in the log.
    let out = db(&name, &dir)
        .args(["find", "--json", ANN, ANN_B, AB])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let hits = common::json_lines(&out);
    assert!(!hits.is_empty());
    for hit in &hits {
        assert_eq!(hit["table"], "uuidforge_merge_log", "{hit}");
    }

    // A chain: the merged person and Bob merge into Bob; Ann's old keys
    // now resolve to Bob in one lookup.
    db(&name, &dir)
        .args(["merge", &new, BOB, "--into", BOB, "--apply"])
        .assert()
        .success();
    for old in [ANN, ANN_B, AB, new.as_str()] {
        assert_eq!(
            admin_sql(&name, &format!("SELECT uuid_resolve('{old}')")),
            BOB
        );
    }
    db(&name, &dir)
        .args(["unmerge", BOB, "--apply"])
        .assert()
        .success();
    for old in [ANN, ANN_B, AB] {
        assert_eq!(
            admin_sql(&name, &format!("SELECT uuid_resolve('{old}')")),
            new
        );
    }

    // Unmerge tried first: nothing changes; then applied: identical rows.
    let after_merge = admin_sql(&name, DIGEST);
    let trial = json(db(&name, &dir).args(["unmerge", &new, "--json"]));
    assert!(trial["applied"].is_null());
    assert!(!trial["change"]["run"]["steps"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(admin_sql(&name, DIGEST), after_merge);
    db(&name, &dir)
        .args(["unmerge", &new, "--apply"])
        .assert()
        .success();
    assert_eq!(admin_sql(&name, DIGEST), before);
    assert_eq!(
        admin_sql(&name, "SELECT count(*) FROM uuidforge_merge_log"),
        "0"
    );
    assert_eq!(
        admin_sql(
            &name,
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND condeferrable"
        ),
        "0",
        "the foreign keys are as they were"
    );
}

#[test]
fn unmerge_refuses_when_something_newer_references_the_new_key() {
    let name = fresh_database("unmerge_conflict", SCHEMA);
    let dir = scratch("conflict");
    let report = json(db(&name, &dir).args(["merge", ANN, ANN_B, "--apply", "--json"]));
    let new = report["new"].as_str().unwrap().to_string();
    admin_sql(
        &name,
        &format!("INSERT INTO memberships VALUES ('{new}', 'bridge', '2024-01-01')"),
    );
    let digest = admin_sql(&name, DIGEST);
    db(&name, &dir)
        .args(["unmerge", &new, "--apply"])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("written since the merge")
                .and(predicate::str::contains("nothing was changed")),
        );
    assert_eq!(admin_sql(&name, DIGEST), digest);
}

#[test]
fn merge_refuses_bad_input_and_collisions_with_fail() {
    let name = fresh_database("merge_bad", SCHEMA);
    let dir = scratch("bad");
    let digest = admin_sql(&name, DIGEST);
    db(&name, &dir)
        .args(["merge", ANN, "nope"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("ids: 'nope' is not a UUID"));
    db(&name, &dir)
        .args(["merge", ANN, "01990a5d-ac96-774b-bcce-b302099a8000"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "ids: found as keys of public.people: 1 of 2",
        ));
    db(&name, &dir)
        .args(["merge", ANN, ANN_B, "--keep", BOB])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("keep: ")
                .and(predicate::str::contains("is not one of the merged")),
        );
    db(&name, &dir)
        .args(["merge", ANN, ANN_B, "--into", BOB])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("into: ").and(predicate::str::contains("already the key")),
        );
    db(&name, &dir)
        .args(["merge", ANN, ANN_B, "--on-conflict", "fail", "--apply"])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("memberships")
                .and(predicate::str::contains("nothing was changed")),
        );
    assert_eq!(admin_sql(&name, DIGEST), digest);
    // delete-duplicate: Ann B.'s colliding chess row goes, her go row stays.
    db(&name, &dir)
        .args([
            "merge",
            ANN,
            ANN_B,
            "--into",
            ANN,
            "--on-conflict",
            "delete-duplicate",
            "--apply",
        ])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &name,
            &format!("SELECT string_agg(group_name || ' ' || since, ', ' ORDER BY group_name) FROM memberships WHERE person_id = '{ANN}'")
        ),
        "chess 2020-01-01, go 2021-02-01"
    );
}

/// A table referencing itself and no unique constraint over a reference:
/// merged and unmerged back to identical rows.
#[test]
fn a_self_reference_is_merged_and_unmerged() {
    let name = fresh_database(
        "merge_self",
        &format!(
            "CREATE TABLE staff (id uuid PRIMARY KEY, name text, boss uuid REFERENCES staff);
             INSERT INTO staff VALUES ('{ANN_B}', 'Ann B', NULL), ('{ANN}', 'Ann', '{ANN_B}'),
               ('{AB}', 'Carl', '{ANN_B}'), ('{BOB}', 'Dee', '{ANN}');"
        ),
    );
    let dir = scratch("self");
    let digest =
        "SELECT md5(string_agg(to_jsonb(s)::text, '|' ORDER BY to_jsonb(s)::text)) FROM staff s";
    let before = admin_sql(&name, digest);
    let report = json(db(&name, &dir).args(["merge", ANN, ANN_B, "--apply", "--json"]));
    let new = report["new"].as_str().unwrap().to_string();
    assert_eq!(
        admin_sql(
            &name,
            &format!("SELECT count(*) FROM staff WHERE boss = '{new}'")
        ),
        "3",
        "Ann (the survivor, her own boss now), Carl and Dee"
    );
    db(&name, &dir)
        .args(["unmerge", &new, "--apply"])
        .assert()
        .success();
    assert_eq!(admin_sql(&name, digest), before);
}

/// Quotes, semicolons and comment marks in names stay names through a
/// merge, its log and its undo.
#[test]
fn quoted_names_are_merged_and_unmerged() {
    let name = fresh_database(
        "merge_quoted",
        &format!(
            "CREATE SCHEMA \"s\"\"q; x\";
             CREATE TABLE \"s\"\"q; x\".\"we\"\"ird; --\" (\"I\"\"d\" uuid PRIMARY KEY, v text);
             CREATE TABLE \"s\"\"q; x\".\"Kind\" (n int PRIMARY KEY,
               \"ref\"\"s\" uuid REFERENCES \"s\"\"q; x\".\"we\"\"ird; --\");
             INSERT INTO \"s\"\"q; x\".\"we\"\"ird; --\" VALUES ('{ANN}', 'a'), ('{ANN_B}', 'b');
             INSERT INTO \"s\"\"q; x\".\"Kind\" VALUES (1, '{ANN}'), (2, '{ANN_B}');"
        ),
    );
    let dir = scratch("quoted");
    let digest = r#"SELECT md5(string_agg(x, '|' ORDER BY x)) FROM (SELECT to_jsonb(w)::text x FROM "s""q; x"."we""ird; --" w UNION ALL SELECT to_jsonb(k)::text FROM "s""q; x"."Kind" k) s"#;
    let before = admin_sql(&name, digest);
    db(&name, &dir)
        .args(["merge", ANN, ANN_B, "--into", ANN, "--apply"])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &name,
            &format!(r#"SELECT count(*) FROM "s""q; x"."Kind" WHERE "ref""s" = '{ANN}'"#)
        ),
        "2"
    );
    assert_eq!(
        admin_sql(
            &name,
            &format!(r#"SELECT "s""q; x".uuid_resolve('{ANN_B}')"#)
        ),
        ANN
    );
    db(&name, &dir)
        .args(["unmerge", ANN, "--apply"])
        .assert()
        .success();
    assert_eq!(admin_sql(&name, digest), before);
}

/// The application's triggers do not see a merge's writes nor an
/// unmerge's: a `BEFORE UPDATE` trigger stamping every row of people and
/// memberships leaves the survivor and the moved references unstamped, so
/// unmerge finds the survivor as the merge left it and restores every row
/// identical; the triggers fire on the application's writes after.
#[test]
fn merge_and_unmerge_fire_no_user_trigger() {
    let name = fresh_database("merge_triggers", SCHEMA);
    admin_sql(
        &name,
        "ALTER TABLE people ADD COLUMN touched timestamptz NOT NULL DEFAULT '2020-01-01';
         ALTER TABLE memberships ADD COLUMN touched timestamptz NOT NULL DEFAULT '2020-01-01';
         CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.touched := now(); RETURN NEW; END $$;
         CREATE TRIGGER touched BEFORE UPDATE ON people FOR EACH ROW EXECUTE FUNCTION touch();
         CREATE TRIGGER touched BEFORE UPDATE ON memberships FOR EACH ROW EXECUTE FUNCTION touch();
         ALTER TABLE memberships ENABLE REPLICA TRIGGER touched;",
    );
    let all = "SELECT md5(string_agg(x, '|' ORDER BY x)) FROM (SELECT to_jsonb(p)::text x FROM people p UNION ALL SELECT to_jsonb(m)::text FROM memberships m) s";
    let stamped = "SELECT (SELECT count(*) FROM people WHERE touched <> '2020-01-01') + (SELECT count(*) FROM memberships WHERE touched <> '2020-01-01')";
    let states = "SELECT string_agg(tgrelid::regclass || '=' || tgenabled::text, ' ' ORDER BY tgrelid::regclass::text) FROM pg_trigger WHERE tgname = 'touched'";
    let before = admin_sql(&name, all);
    let dir = scratch("triggers");
    // Ann B. merged into a new key: the survivor's key changes (an UPDATE).
    let new = "01890a5d-ac96-774b-bcce-b302099a80ff";
    let plan = String::from_utf8(
        db(&name, &dir)
            .args(["merge", ANN, ANN_B, "--into", new])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        plan.contains(r#"ALTER TABLE "public"."people" DISABLE TRIGGER "touched""#)
            && plan
                .contains(r#"ALTER TABLE "public"."memberships" ENABLE REPLICA TRIGGER "touched""#),
        "{plan}"
    );
    db(&name, &dir)
        .args([
            "merge",
            ANN,
            ANN_B,
            "--into",
            new,
            "--on-conflict",
            "delete-duplicate",
            "--apply",
        ])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &name,
            "SELECT count(*) FROM people WHERE id = '01890a5d-ac96-774b-bcce-b302099a80ff'"
        ),
        "1"
    );
    assert_eq!(admin_sql(&name, stamped), "0");
    assert_eq!(admin_sql(&name, states), "memberships=R people=O");
    db(&name, &dir)
        .args(["unmerge", new, "--apply"])
        .assert()
        .success();
    assert_eq!(admin_sql(&name, stamped), "0");
    assert_eq!(
        admin_sql(&name, all),
        before,
        "every row identical after unmerge"
    );
    admin_sql(&name, "UPDATE people SET name = name WHERE name = 'Bob'");
    assert_eq!(admin_sql(&name, stamped), "1");
}

//! Failure 6, on a public application schema nobody here wrote (a part of
//! MusicBrainz's, `tests/fixtures/musicbrainz/`): a key migration carries
//! what sits on the references exactly — `release_label_uniq` (`UNIQUE
//! NULLS NOT DISTINCT … DEFERRABLE INITIALLY DEFERRED`), `medium_uniq`
//! (`DEFERRABLE INITIALLY IMMEDIATE`), the link table's CHECK over its two
//! references to an area — in one transaction and in batches, every
//! constraint's definition the same after; and a merge of two areas
//! related to the same area the same way (collisions deleted) is undone
//! when nothing was written since. The artists' keys migrate although
//! `artist_va_check` singles out artist 1 (Various Artists) by its key:
//! it is made again with that row's new key.

mod common;

use common::{admin_sql, fresh_database, url, uuidforge};

fn musicbrainz(tag: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/musicbrainz");
    let schema = std::fs::read_to_string(dir.join("schema.sql")).unwrap();
    let data = std::fs::read_to_string(dir.join("data.sql")).unwrap();
    let db = fresh_database(tag, &format!("{schema}\n{data}"));
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    db
}

fn db_cmd(db: &str, dir: &std::path::Path) -> assert_cmd::Command {
    let mut c = uuidforge();
    c.env_remove("UUIDFORGE_DB")
        .current_dir(dir)
        .args(["db", "--db", &url(db)]);
    c
}

/// Every constraint of the tables, with its full definition and
/// deferrability, and every index, as PostgreSQL writes them; the old
/// columns' own left out.
const DEFINITIONS: &str = "SELECT string_agg(d, E'\\n' ORDER BY d) FROM (
  SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) || ' ' || condeferrable || condeferred AS d
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid <> 0
  UNION ALL
  SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND indexdef !~ '_old\\M') x";

/// The releases' keys with their labels and media: one definition of
/// each constraint before and after, NULLS NOT DISTINCT enforced,
/// deferral kept.
#[test]
fn release_keys_keep_their_unique_constraints_exactly() {
    for (tag, how) in [
        ("mb_release", &[][..]),
        ("mb_release_b", &["--batch-size", "20"][..]),
    ] {
        let db = musicbrainz(tag);
        let dir = common::scratch("musicbrainz", tag);
        let before = admin_sql(&db, DEFINITIONS);
        assert!(before.contains("release_label_uniq UNIQUE NULLS NOT DISTINCT (release, label, catalog_number) DEFERRABLE INITIALLY DEFERRED truetrue"), "{before}");
        db_cmd(&db, &dir)
            .args(["migrate-key", "release", "--apply"])
            .args(how)
            .assert()
            .success();
        assert_eq!(admin_sql(&db, DEFINITIONS), before, "{how:?}");
        assert_eq!(
            admin_sql(&db, "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'release_label'::regclass AND attname = 'release'"),
            "uuid"
        );
        // NULLS NOT DISTINCT holds over the new column: a second row of a
        // release and label without a catalog number is refused.
        assert!(admin_sql(
            &db,
            "DO $$ BEGIN SET CONSTRAINTS ALL IMMEDIATE;
               INSERT INTO release_label (release, label, catalog_number) SELECT release, label, NULL FROM release_label WHERE catalog_number IS NULL LIMIT 1;
               RAISE 'a duplicate went in'; EXCEPTION WHEN unique_violation THEN NULL; END $$"
        )
        .is_empty());
        // Still deferred: a duplicate inside a transaction that resolves it.
        admin_sql(
            &db,
            "BEGIN;
             INSERT INTO release_label (release, label, catalog_number) SELECT release, label, catalog_number FROM release_label WHERE id = 1;
             DELETE FROM release_label WHERE id = 1;
             COMMIT",
        );
    }
}

/// The areas' keys: the link table references an area twice, with a CHECK
/// over both references; it holds over the new columns (a new loop is
/// refused). Then two areas are merged (their relationships to the same
/// area collide, one each way, and are deleted) and the merge undone:
/// every row as it was.
#[test]
fn area_keys_keep_the_link_tables_check_and_merge_and_unmerge() {
    for (tag, how) in [
        ("mb_area", &[][..]),
        ("mb_area_b", &["--batch-size", "20"][..]),
    ] {
        let db = musicbrainz(tag);
        let dir = common::scratch("musicbrainz", tag);
        let before = admin_sql(&db, DEFINITIONS);
        assert!(
            before.contains("non_loop_relationship CHECK ((entity0 <> entity1))"),
            "{before}"
        );
        db_cmd(&db, &dir)
            .args(["migrate-key", "area", "--apply"])
            .args(how)
            .assert()
            .success();
        assert_eq!(admin_sql(&db, DEFINITIONS), before, "{how:?}");
        assert!(admin_sql(
            &db,
            "DO $$ BEGIN
               INSERT INTO l_area_area (link, entity0, entity1) SELECT 1, id, id FROM area LIMIT 1;
               RAISE 'a loop went in'; EXCEPTION WHEN check_violation THEN NULL; END $$"
        )
        .is_empty());
        let rows =
            "SELECT md5(string_agg(to_jsonb(x)::text, ',' ORDER BY x.id)) FROM l_area_area x";
        let rows_before = admin_sql(&db, rows);
        let one = admin_sql(&db, "SELECT id FROM area WHERE name = 'Area 1'");
        let two = admin_sql(&db, "SELECT id FROM area WHERE name = 'Area 2'");
        let out = db_cmd(&db, &dir)
            .args(["merge", &one, &two, "--into", &one, "--apply", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let collisions = report["applied"]["outputs"]["collisions"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            collisions.contains("l_area_area.entity0")
                && collisions.contains("l_area_area.entity1"),
            "{report}"
        );
        db_cmd(&db, &dir)
            .args(["unmerge", &one, "--apply"])
            .assert()
            .success();
        assert_eq!(admin_sql(&db, rows), rows_before, "{how:?}");
    }
}

/// `artist_va_check` (`CHECK (id <> 1 OR (type = 3 AND …))`) singles out
/// Various Artists by its old key: the migration makes it again with that
/// artist's new key, in both modes, every other definition the same; the
/// check still holds Various Artists, and only it, to its shape.
#[test]
fn artist_keys_migrate_with_the_various_artists_check_on_the_new_key() {
    for (tag, how) in [
        ("mb_artist", &[][..]),
        ("mb_artist_b", &["--batch-size", "15"][..]),
    ] {
        let db = musicbrainz(tag);
        let dir = common::scratch("musicbrainz", tag);
        let before = admin_sql(&db, DEFINITIONS);
        assert!(
            before.contains("artist_va_check CHECK (((id <> 1) OR"),
            "{before}"
        );
        db_cmd(&db, &dir)
            .args(["migrate-key", "artist", "--apply"])
            .args(how)
            .assert()
            .success();
        let various = admin_sql(&db, "SELECT id FROM artist WHERE name = 'Various Artists'");
        assert_eq!(
            admin_sql(&db, DEFINITIONS),
            before.replace(
                "artist_va_check CHECK (((id <> 1) OR",
                &format!("artist_va_check CHECK (((id <> '{various}'::uuid) OR")
            ),
            "{how:?}"
        );
        assert!(admin_sql(
            &db,
            "DO $$ BEGIN
               UPDATE artist SET area = 1 WHERE name = 'Various Artists';
               RAISE 'Various Artists got an area'; EXCEPTION WHEN check_violation THEN NULL; END $$"
        )
        .is_empty());
        admin_sql(&db, "UPDATE artist SET area = 1 WHERE name = 'Artist 2'");
        // MusicBrainz's guard of its special rows (`WHEN (OLD.id IN (1,
        // 2))`) names their new keys, and still holds them.
        let deleted = admin_sql(&db, "SELECT id FROM artist WHERE name = 'Artist 2'");
        assert!(
            admin_sql(&db, "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'b_del_artist_special'")
                .contains(&format!("WHEN ((old.id = ANY (ARRAY['{various}'::uuid, '{deleted}'::uuid])))")),
            "{how:?}"
        );
        let refused =
            common::try_admin_sql(&db, "DELETE FROM artist WHERE name = 'Various Artists'");
        assert!(
            refused
                .unwrap_err()
                .contains("Attempted to delete a special purpose row"),
            "{how:?}"
        );
    }
}

//! `uuidforge model` (D9) against the real server: the DDL of each target
//! applies; data loaded through the generated views and loaders reads
//! back as expected now and at earlier times.

mod common;

use common::{admin_sql, fresh_database, scratch, uuidforge};
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../uuidforge-model/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Generates `target` from `file` into a scratch directory, applies every
/// script written there (DDL first) to a fresh database as the owner
/// role, and returns the database's name and the directory.
fn applied(tag: &str, file: &str, target: &str, extra: &[&str]) -> (String, common::Scratch) {
    let db = fresh_database(tag, "");
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    let dir = scratch("model", tag);
    let mut args = vec![
        "model",
        file,
        "--target",
        target,
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend(extra);
    uuidforge().args(&args).assert().success();
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    scripts.sort_by_key(|p| (p.to_string_lossy().contains(".load_"), p.clone()));
    assert!(!scripts.is_empty());
    for script in &scripts {
        let sql = std::fs::read_to_string(script).unwrap();
        admin_sql(&db, &format!("SET ROLE uuidforge; BEGIN; {sql}; COMMIT"));
    }
    (db, dir)
}

/// Runs `sql` as the owner role; the first column of its last row set.
fn sql(db: &str, sql: &str) -> String {
    admin_sql(
        db,
        &format!("SET ROLE uuidforge; SET search_path = festival, public; {sql}"),
    )
}

/// The error a statement fails with.
fn sql_error(db: &str, statement: &str) -> String {
    let outcome = std::panic::catch_unwind(|| sql(db, statement));
    let payload = outcome.expect_err("the statement should fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default()
}

const T1: &str = "2026-01-10 12:00:00+00";
const T2: &str = "2026-03-01 12:00:00+00";

#[test]
fn anchor_target_keeps_history_and_writes_through_its_views() {
    let (db, _) = applied("model_anchor", &fixture("festival.yaml"), "anchor", &[]);
    let id = sql(
        &db,
        &format!(
            r#"INSERT INTO "lAR_Artist" ("AR_NAM_Artist_Name", "AR_HOM_Artist_Hometown", "AR_HOM_ChangedAt", "AR_STY_STY_Style", "AR_STY_ChangedAt", "AR_FEE_Artist_Fee", "AR_FEE_ChangedAt")
            VALUES ('Nina', 'Oslo', '{T1}', 'jazz', '{T1}', 100, '{T1}') RETURNING "AR_ID""#
        ),
    );
    assert_eq!(
        sql(&db, &format!("SELECT uuid_extract_version('{id}')")),
        "7"
    );
    // A change, a restatement (same value: not stored) and a knot by value.
    sql(
        &db,
        &format!(
            r#"UPDATE "lAR_Artist" SET "AR_HOM_Artist_Hometown" = 'Bergen', "AR_HOM_ChangedAt" = '{T2}', "AR_STY_STY_Style" = 'rock', "AR_STY_STY_ID" = NULL WHERE "AR_ID" = '{id}'"#
        ),
    );
    sql(
        &db,
        &format!(r#"UPDATE "lAR_Artist" SET "AR_FEE_Artist_Fee" = 100 WHERE "AR_ID" = '{id}'"#),
    );
    assert_eq!(sql(&db, r#"SELECT count(*) FROM "AR_FEE_Artist_Fee""#), "1");
    assert_eq!(
        sql(&db, r#"SELECT count(*) FROM "AR_HOM_Artist_Hometown""#),
        "2"
    );
    let latest = sql(
        &db,
        r#"SELECT concat_ws('|', "AR_NAM_Artist_Name", "AR_HOM_Artist_Hometown", "AR_STY_STY_Style", "AR_FEE_Artist_Fee") FROM "lAR_Artist""#,
    );
    assert_eq!(latest, "Nina|Bergen|rock|100.0000");
    let then = sql(
        &db,
        r#"SELECT concat_ws('|', "AR_NAM_Artist_Name", "AR_HOM_Artist_Hometown", "AR_STY_STY_Style") FROM "pAR_Artist"('2026-02-01')"#,
    );
    assert_eq!(then, "Nina|Oslo|jazz");
    let before = sql(
        &db,
        r#"SELECT concat_ws('|', "AR_NAM_Artist_Name", coalesce("AR_HOM_Artist_Hometown", '-')) FROM "pAR_Artist"('2025-01-01')"#,
    );
    assert_eq!(before, "Nina|-");
    // A static attribute never changes; an unknown knot value is refused.
    let e = sql_error(
        &db,
        &format!(r#"UPDATE "lAR_Artist" SET "AR_NAM_Artist_Name" = 'Nora' WHERE "AR_ID" = '{id}'"#),
    );
    assert!(e.contains("static"), "{e}");
    let e = sql_error(
        &db,
        r#"INSERT INTO "lAR_Artist" ("AR_NAM_Artist_Name", "AR_STY_STY_Style") VALUES ('Ola', 'polka')"#,
    );
    assert!(e.contains("polka") && e.contains("is not a value"), "{e}");
    // A historized, knotted tie: rated support, then headliner.
    let festival = sql(
        &db,
        r#"INSERT INTO "lFE_Festival" ("FE_TIT_Festival_Title", "FE_CAP_Festival_Capacity", "FE_CAP_ChangedAt") VALUES ('Øya', 9000, '2025-12-01') RETURNING "FE_ID""#,
    );
    for (rating, at) in [("support", T1), ("headliner", T2)] {
        sql(
            &db,
            &format!(
                r#"INSERT INTO "lAR_booked_FE_at_RAT_rated" ("AR_ID_booked", "FE_ID_at", "RAT_Rating_rated", "AR_booked_FE_at_RAT_rated_ChangedAt") VALUES ('{id}', '{festival}', '{rating}', '{at}')"#
            ),
        );
    }
    assert_eq!(
        sql(
            &db,
            r#"SELECT string_agg("RAT_Rating_rated", ',') FROM "lAR_booked_FE_at_RAT_rated""#
        ),
        "headliner"
    );
    assert_eq!(
        sql(
            &db,
            r#"SELECT string_agg("RAT_Rating_rated", ',') FROM "pAR_booked_FE_at_RAT_rated"('2026-02-01')"#
        ),
        "support"
    );
    // A one-to-one tie: an artist is the alias of one person at a time.
    let person = sql(
        &db,
        r#"INSERT INTO "lPE_Person" DEFAULT VALUES RETURNING "PE_ID""#,
    );
    sql(
        &db,
        &format!(
            r#"INSERT INTO "lAR_alias_PE_of" ("AR_ID_alias", "PE_ID_of", "AR_alias_PE_of_ChangedAt") VALUES ('{id}', '{person}', '{T1}')"#
        ),
    );
    let e = sql_error(
        &db,
        &format!(r#"INSERT INTO "AR_alias_PE_of" VALUES ('{id}', '{person}', '{T1}')"#),
    );
    assert!(e.contains("duplicate key"), "{e}");
}

#[test]
fn bitemporal_target_answers_as_of_and_as_was() {
    let (db, _) = applied(
        "model_bitemporal",
        &fixture("festival.yaml"),
        "bitemporal",
        &[],
    );
    let id = sql(
        &db,
        &format!("INSERT INTO artist_now (name, hometown, hometown_changed_at, style, style_changed_at) VALUES ('Nina', 'Olso', '{T1}', 'jazz', '{T1}') RETURNING id"),
    );
    let recorded_typo = sql(&db, "SELECT clock_timestamp()");
    // A correction (changing time left as it was), then a change.
    sql(
        &db,
        &format!("UPDATE artist_now SET hometown = 'Oslo' WHERE id = '{id}'"),
    );
    let recorded_fix = sql(&db, "SELECT clock_timestamp()");
    sql(&db, &format!("UPDATE artist_now SET hometown = 'Bergen', hometown_changed_at = '{T2}' WHERE id = '{id}'"));
    assert_eq!(
        sql(
            &db,
            "SELECT concat_ws('|', name, hometown, style) FROM artist_now"
        ),
        "Nina|Bergen|jazz"
    );
    assert_eq!(
        sql(&db, "SELECT hometown FROM artist_as_of('2026-02-01')"),
        "Oslo"
    );
    assert_eq!(
        sql(
            &db,
            &format!("SELECT hometown FROM artist_as_was('2026-02-01', '{recorded_typo}')")
        ),
        "Olso"
    );
    assert_eq!(
        sql(
            &db,
            &format!("SELECT hometown FROM artist_as_was('infinity', '{recorded_fix}')")
        ),
        "Oslo"
    );
    assert_eq!(
        sql(
            &db,
            "SELECT coalesce(hometown, '-') FROM artist_as_of('2025-01-01')"
        ),
        "-"
    );
    // Static attributes hold from -infinity; nothing is ever overwritten.
    assert_eq!(
        sql(&db, "SELECT name FROM artist_as_of('1900-01-01')"),
        "Nina"
    );
    assert_eq!(sql(&db, "SELECT count(*) FROM artist_hometown"), "3");
    // Erasing records a NULL; the tie functions see a booking end.
    sql(&db, &format!("UPDATE artist_now SET style = NULL, style_id = NULL, style_changed_at = '{T2}' WHERE id = '{id}'"));
    assert_eq!(
        sql(
            &db,
            "SELECT concat_ws('|', name, coalesce(style, '-')) FROM artist_now"
        ),
        "Nina|-"
    );
    let festival = sql(
        &db,
        "INSERT INTO festival_now (title) VALUES ('Øya') RETURNING id",
    );
    sql(&db, &format!(
        "INSERT INTO artist_booked_festival_at_rating_rated (booked_artist_id, at_festival_id, rated_rating_id, changed_at) SELECT '{id}', '{festival}', r.id, '{T1}' FROM rating r WHERE r.value = 'support';
         INSERT INTO artist_booked_festival_at_rating_rated (booked_artist_id, at_festival_id, rated_rating_id, changed_at, ended) SELECT '{id}', '{festival}', r.id, '{T2}', true FROM rating r WHERE r.value = 'support'"
    ));
    assert_eq!(
        sql(
            &db,
            "SELECT count(*) FROM artist_booked_festival_at_rating_rated_as_of('2026-02-01')"
        ),
        "1"
    );
    assert_eq!(
        sql(
            &db,
            "SELECT count(*) FROM artist_booked_festival_at_rating_rated_as_of('infinity')"
        ),
        "0"
    );
}

fn load(db: &str, source: &str, rows: &str, at: &str) {
    sql(db, &format!("TRUNCATE stage_{source}; INSERT INTO stage_{source} VALUES {rows}; SELECT load_{source}('{at}')"));
}

const SECRET: &str = "5e11d6f3c7a9b2e48d0f6a1c3b5e7d9f2a4c6e8b0d1f3a5c7e9b1d3f5a7c9e0b";

#[test]
fn data_vault_target_loads_sources_with_deterministic_hub_keys() {
    let (db, _) = applied("model_vault", &fixture("festival.yaml"), "datavault", &[]);
    let e = sql_error(&db, "SELECT load_bookings()");
    assert!(e.contains("uuidforge.hub_key_secret"), "{e}");
    admin_sql(
        &db,
        &format!("ALTER DATABASE {db} SET uuidforge.hub_key_secret = '{SECRET}'"),
    );
    let first = "('Nina', 'Oslo', 'jazz', '100', 'Øya', '9000', 'support'), ('Ola', 'Bergen', 'rock', '80', 'Øya', '9000', 'support')";
    load(&db, "bookings", first, T1);
    // The hub key is the library's v7_from of the business key and load time.
    let key = sql(&db, "SELECT artist_key FROM hub_artist WHERE name = 'Nina'");
    let t1_ms = 1_768_046_400_000u64;
    let secret: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&SECRET[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let expected = uuidforge::generator::v7_from(t1_ms, b"hub_artist|Nina", &secret).unwrap();
    assert_eq!(key, expected.to_string());
    // Loading the same rows again adds nothing; a changed fee adds one
    // satellite row; the rating changes, so one booking ends.
    load(&db, "bookings", first, "2026-02-01 00:00:00+00");
    assert_eq!(sql(&db, "SELECT count(*) FROM sat_artist__bookings"), "2");
    let second = "('Nina', 'Oslo', 'jazz', '150', 'Øya', '9000', 'headliner')";
    load(&db, "bookings", second, T2);
    assert_eq!(sql(&db, "SELECT count(*) FROM sat_artist__bookings"), "3");
    assert_eq!(
        sql(&db, "SELECT fee FROM artist_latest WHERE name = 'Nina'"),
        "150.0000"
    );
    assert_eq!(
        sql(
            &db,
            "SELECT fee FROM artist_at('2026-02-15') WHERE name = 'Nina'"
        ),
        "100.0000"
    );
    assert_eq!(
        sql(&db, "SELECT count(*) FROM artist_at('2026-01-01')"),
        "0"
    );
    let rated = |at: &str| {
        sql(&db, &format!(
            "SELECT string_agg(h.name || ':' || l.rated_rating, ',' ORDER BY h.name) FROM link_artist_booked_festival_at_rating_rated_at('{at}') l JOIN hub_artist h ON h.artist_key = l.booked_artist_key"
        ))
    };
    assert_eq!(rated("2026-02-15"), "Nina:support,Ola:support");
    assert_eq!(rated("infinity"), "Nina:headliner,Ola:support");
    // The second source: one anchor in two roles.
    load(&db, "mentoring", "('Ola', 'Nina', 'teacher')", T2);
    let pairs = sql(&db, "SELECT string_agg(m.name || '>' || p.name || ':' || l.as_relation, ',') FROM link_artist_mentor_artist_protege_relation_as_at('infinity') l JOIN hub_artist m ON m.artist_key = l.mentor_artist_key JOIN hub_artist p ON p.artist_key = l.protege_artist_key");
    assert_eq!(pairs, "Ola>Nina:teacher");
    assert_eq!(sql(&db, "SELECT count(*) FROM hub_artist"), "2");
}

#[test]
fn data_vault_with_fresh_keys_and_the_anchor_xml_apply() {
    let (db, _) = applied(
        "model_vault_fresh",
        &fixture("festival.yaml"),
        "datavault",
        &["--hub-keys", "uuidv7"],
    );
    load(
        &db,
        "bookings",
        "('Nina', 'Oslo', 'jazz', '100', 'Øya', '9000', 'support')",
        T1,
    );
    assert_eq!(
        sql(
            &db,
            "SELECT uuid_extract_version(artist_key) FROM hub_artist"
        ),
        "7"
    );
    for target in ["anchor", "bitemporal", "datavault"] {
        let (db, dir) = applied(
            &format!("model_xml_{target}"),
            &fixture("festival.xml"),
            target,
            &["--schema", "festival"],
        );
        let tables = sql(
            &db,
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'festival'",
        );
        assert!(
            tables.parse::<u32>().unwrap() >= 8,
            "{target}: {tables} tables"
        );
        assert!(dir.join(format!("festival.{target}.sql")).exists());
    }
}

#[test]
fn bad_models_exit_2_naming_the_place() {
    let dir = scratch("model", "bad");
    let file = dir.join("bad.yaml");
    std::fs::write(&file, "anchors: [{mnemonic: AC, descriptor: Actor, attributes: [{mnemonic: G, descriptor: Gender, knot: GEN}]}]").unwrap();
    let out = uuidforge()
        .args(["model", file.to_str().unwrap(), "--target", "anchor"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.yaml: anchors[0].attributes[0].knot: 'GEN' is not a knot"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    let schema = uuidforge()
        .args(["model", "--json-schema"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let schema: serde_json::Value = serde_json::from_slice(&schema).unwrap();
    assert!(schema["properties"]["anchors"].is_object());
}

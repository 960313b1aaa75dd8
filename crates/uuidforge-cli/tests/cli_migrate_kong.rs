//! Copies of a uuid key outside its references, on a public schema nobody
//! here wrote: Kong's (the API gateway's, `tests/fixtures/kong/`, rendered
//! from its own migrations) — uuid v4 keys, composite `(x_id, ws_id)`
//! foreign keys, a polymorphic `tags.entity_id` kept by Kong's triggers, a
//! unique `plugins.cache_key` text embedding a service's or a consumer's
//! key (`plugins:basic-auth::<service id>:::<ws id>`), a jsonb `config`
//! naming a consumer. The plan finds every copy with its counts and
//! refuses until each is named; `--also` rewrites them to the new keys in
//! place, other values and text kept, and the unique cache keys stay
//! unique.

mod common;

use common::{admin_sql, fresh_database, url, uuidforge};

fn kong(tag: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kong");
    let schema = std::fs::read_to_string(dir.join("schema.sql")).unwrap();
    let data = std::fs::read_to_string(dir.join("data.sql")).unwrap();
    fresh_database(tag, &format!("{schema}\n{data}"))
}

fn migrate(db: &str, dir: &std::path::Path, table: &str, extra: &[&str]) -> std::process::Output {
    uuidforge()
        .env_remove("UUIDFORGE_DB")
        .current_dir(dir)
        .args(["db", "--db", &url(db), "migrate-key", table, "--no-default"])
        .args(extra)
        .output()
        .unwrap()
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every basic-auth plugin's cache key names its service's key and the
/// workspace's, as Kong writes it.
const CACHE_KEYS_AGREE: &str =
    "SELECT count(*) FROM plugins p JOIN services s ON p.service_id = s.id
    WHERE p.cache_key = 'plugins:basic-auth::' || s.id || ':::' || s.ws_id";

#[test]
fn copies_of_service_keys_are_found_named_and_rewritten() {
    let db = kong("kong_services");
    let dir = common::scratch("kong", "services");
    // Without names: refused, every copy named with its counts.
    let out = migrate(&db, &dir, "services", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    for named in [
        "old keys of public.services are copied outside its references",
        "\"public\".\"plugins\".cache_key (text: 300 rows, 300 of them inside longer text)",
        "\"public\".\"tags\".entity_id (uuid: 300 rows)",
        "--also TABLE.COLUMN",
    ] {
        assert!(
            text(&out).contains(named),
            "'{named}' not in {}",
            text(&out)
        );
    }
    // Narrowed to one table, only its copies are found; the plan says
    // what was searched and how long it took.
    let out = migrate(
        &db,
        &dir,
        "services",
        &["--copies-in", "plugins", "--also", "plugins.cache_key"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let plan = text(&out);
    assert!(
        plan.contains("copies of the keys in other columns: searched "),
        "{plan}"
    );
    assert!(plan.contains(" of 1 tables (plugins)"), "{plan}");
    assert!(
        plan.contains("the search for copies read 1 tables in "),
        "{plan}"
    );
    let out = migrate(&db, &dir, "services", &["--no-copy-search"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("not searched, as asked"),
        "{}",
        text(&out)
    );
    // In batches: refused (rewritten in one transaction only).
    let out = migrate(
        &db,
        &dir,
        "services",
        &[
            "--also",
            "tags.entity_id",
            "--also",
            "plugins.cache_key",
            "--apply",
            "--batch-size",
            "100",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("in one transaction only"),
        "{}",
        text(&out)
    );

    let duplicate = "INSERT INTO plugins (id, name, service_id, config, enabled, cache_key)
        SELECT gen_random_uuid(), name, service_id, config, enabled, cache_key FROM plugins WHERE name = 'basic-auth' LIMIT 1";
    assert!(common::try_admin_sql(&db, duplicate)
        .unwrap_err()
        .starts_with("23505"));
    let tags_before = admin_sql(&db, "SELECT count(*) FROM tags");
    let out = migrate(
        &db,
        &dir,
        "services",
        &[
            "--also",
            "tags.entity_id",
            "--also",
            "plugins.cache_key",
            "--order-by",
            "created_at",
            "--apply",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let report = text(&out);
    assert!(
        report.contains("old keys left in \"public\".\"plugins\".cache_key: 0"),
        "{report}"
    );
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM services WHERE substr(id::text, 15, 1) = '7'"
        ),
        "300"
    );
    assert_eq!(admin_sql(&db, CACHE_KEYS_AGREE), "300");
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM tags t JOIN services s ON s.id = t.entity_id WHERE t.entity_name = 'services'"),
        "300"
    );
    // Other entities' tags, and the workspace in every cache key, as they were.
    assert_eq!(admin_sql(&db, "SELECT count(*) FROM tags"), tags_before);
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM tags t JOIN routes r ON r.id = t.entity_id"
        ),
        "600"
    );
    // The unique cache key still refuses a duplicate plugin.
    assert!(common::try_admin_sql(&db, duplicate)
        .unwrap_err()
        .starts_with("23505"));
}

#[test]
fn copies_of_consumer_keys_in_jsonb_and_text_are_rewritten() {
    let db = kong("kong_consumers");
    let dir = common::scratch("kong", "consumers");
    let out = migrate(&db, &dir, "consumers", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("\"public\".\"plugins\".config (jsonb: 199 rows, inside the value)"),
        "{}",
        text(&out)
    );
    let out = migrate(
        &db,
        &dir,
        "consumers",
        &[
            "--also",
            "tags.entity_id",
            "--also",
            "plugins.cache_key",
            "--also",
            "plugins.config",
            "--apply",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM plugins WHERE name = 'request-termination'
               AND config->>'anonymous' = (SELECT id::text FROM consumers WHERE username = 'user-1')
               AND config->>'status_code' = '403'
               AND cache_key = 'plugins:request-termination:::' || consumer_id || '::' || ws_id"
        ),
        "199"
    );
}

/// Copies of a uuid key held as bytes, as a `uuid192` and as a field of a
/// composite value (beside Kong's services, in a schema of their own): the
/// plan finds each, refuses until each is named, and `--also` rewrites
/// them in place — the 16 bytes to the new key's, the `uuid192` made again
/// over the new key with its segment (payload or fields, its checksum
/// good), the composite's field — every other value as it was; in batches
/// refused (one transaction only).
#[test]
fn copies_in_bytes_uuid192_and_composite_values_are_rewritten() {
    let db = kong("kong_binary");
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    admin_sql(
        &db,
        "SET ROLE uuidforge;
         CREATE SCHEMA billing;
         CREATE TYPE billing.service_ref AS (service uuid, since date);
         CREATE TABLE billing.charges (id serial PRIMARY KEY, service_bytes bytea, service_wide uuid192,
                                       ref billing.service_ref, other bytea);
         INSERT INTO billing.charges (service_bytes, service_wide, ref, other)
           SELECT uuid_send(s.id), uuid192(s.id, 42), ROW(s.id, date '2026-01-01')::billing.service_ref,
                  uuid_send(s.id) || '\\x00'::bytea
             FROM services s;
         INSERT INTO billing.charges (service_wide) SELECT uuid192(id, 1, 2, 3, 'insert', 4, 5) FROM services LIMIT 1;",
    );
    let dir = common::scratch("kong", "binary");
    let copies_in = ["--copies-in", "billing"];
    let plan = migrate(&db, &dir, "services", &copies_in);
    assert_eq!(plan.status.code(), Some(2), "{}", text(&plan));
    for named in [
        "\"billing\".\"charges\".service_bytes (bytea:",
        "\"billing\".\"charges\".service_wide (uuid192:",
        "\"billing\".\"charges\".ref (composite:",
    ] {
        assert!(text(&plan).contains(named), "{named}: {}", text(&plan));
    }
    assert!(!text(&plan).contains(".other"), "{}", text(&plan));
    let also = [
        "--also",
        "billing.charges.service_bytes",
        "--also",
        "billing.charges.service_wide",
        "--also",
        "billing.charges.ref",
    ];
    let mut batched = also.to_vec();
    batched.extend(copies_in);
    batched.extend(["--batch-size", "10", "--apply"]);
    let out = migrate(&db, &dir, "services", &batched);
    assert!(
        text(&out).contains("rewritten in place in one transaction only"),
        "{}",
        text(&out)
    );
    let others = "SELECT md5(string_agg(concat_ws(',', id, other, (ref).since, uuid192_payload(service_wide), uuid192_shard(service_wide)), ';' ORDER BY id)) FROM billing.charges";
    let before = admin_sql(&db, others);
    let mut args = also.to_vec();
    args.extend(copies_in);
    args.push("--apply");
    let out = migrate(&db, &dir, "services", &args);
    assert!(out.status.success(), "{}", text(&out));
    // Every copy names a service by its new key, none by an old one.
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT FROM services s WHERE uuid_send(s.id) = c.service_bytes))
                  || ' ' || count(*) FILTER (WHERE NOT EXISTS (SELECT FROM services s WHERE s.id = uuid192_uuid(c.service_wide)))
                  || ' ' || count(*) FILTER (WHERE (c.ref).service IS NOT NULL AND NOT EXISTS (SELECT FROM services s WHERE s.id = (c.ref).service))
               FROM billing.charges c WHERE c.service_bytes IS NOT NULL"
        ),
        "0 0 0"
    );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM billing.charges c JOIN services s ON uuid192_uuid(c.service_wide) = s.id AND uuid192_hub(c.service_wide) = 2"),
        "1",
        "the general structure's fields kept"
    );
    assert_eq!(
        admin_sql(&db, others),
        before,
        "every other value as it was"
    );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM billing.charges c JOIN services s ON uuid_send(s.id_old) = c.service_bytes"),
        "0"
    );
}

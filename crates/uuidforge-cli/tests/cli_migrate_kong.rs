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
        text(&out).contains("not searched (--no-copy-search)"),
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

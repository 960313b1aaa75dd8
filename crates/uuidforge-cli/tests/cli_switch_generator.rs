//! `db switch-generator` on the real server: a database whose keys come
//! from several generators — `gen_random_uuid()`, `uuid_generate_v4()`,
//! pg_uuidv7's `uuid_generate_v7()`, pg_idkit's
//! `idkit_uuidv7_generate_uuid()` (the last three by their names, in
//! schemas of their own: stand-ins, since the servers here have neither
//! uuid-ossp on 18 nor those extensions) and on 18 its own `uuidv7()` —
//! in plain, partitioned and inherited tables. The plan changes nothing;
//! `--apply` backs up (0600), sets every default that is the call alone
//! to the extension's `uuidv7()` (`ALTER TABLE ONLY`, so a child's own
//! default stays), leaves and names the others, and writes no row: the old
//! keys are as they were, new rows get increasing UUIDv7 keys. The test
//! command runs it on PostgreSQL 15 and 18.

mod common;

use common::{admin_sql, fresh_database, url, uuidforge};

const SCHEMA: &str = r#"
CREATE SCHEMA ossp;
CREATE FUNCTION ossp.uuid_generate_v4() RETURNS uuid LANGUAGE sql VOLATILE AS $$ SELECT gen_random_uuid() $$;
CREATE SCHEMA "pg uuidv7";
CREATE FUNCTION "pg uuidv7".uuid_generate_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$ SELECT gen_random_uuid() $$;
CREATE SCHEMA idkit;
CREATE FUNCTION idkit.idkit_uuidv7_generate_uuid() RETURNS uuid LANGUAGE sql VOLATILE AS $$ SELECT gen_random_uuid() $$;
CREATE TABLE accounts (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), name text);
CREATE TABLE invoices (id uuid PRIMARY KEY DEFAULT ossp.uuid_generate_v4(), token text DEFAULT (gen_random_uuid())::text);
CREATE TABLE "Events" (id uuid PRIMARY KEY DEFAULT "pg uuidv7".uuid_generate_v7(), digest uuid DEFAULT md5((gen_random_uuid())::text)::uuid);
CREATE TABLE sessions (id uuid DEFAULT idkit.idkit_uuidv7_generate_uuid(), at date NOT NULL) PARTITION BY RANGE (at);
CREATE TABLE sessions_2024 PARTITION OF sessions FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE archived (kept boolean) INHERITS (accounts);
ALTER TABLE archived ALTER COLUMN id SET DEFAULT '00000000-0000-0000-0000-000000000000';
INSERT INTO accounts (name) SELECT 'a' || g FROM generate_series(1, 50) g;
INSERT INTO invoices SELECT FROM generate_series(1, 50);
INSERT INTO "Events" SELECT FROM generate_series(1, 50);
INSERT INTO sessions (at) SELECT date '2024-03-01' FROM generate_series(1, 50);
"#;

/// Every default of the database: `table.column default`, one per line.
const DEFAULTS: &str = "SELECT string_agg(c.relname || '.' || a.attname || ' ' || pg_get_expr(d.adbin, d.adrelid), E'\\n' ORDER BY c.relname, a.attname)
    FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
    JOIN pg_class c ON c.oid = d.adrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public'";

/// A digest of every key there.
const KEYS: &str = "SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM (SELECT id FROM accounts UNION ALL SELECT id FROM invoices UNION ALL SELECT id FROM \"Events\" UNION ALL SELECT id FROM sessions) k";

fn out(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).to_string()
        + &String::from_utf8_lossy(&a.get_output().stderr)
}

#[test]
fn every_generator_default_is_switched_and_no_key_moves() {
    let db = fresh_database("switch_generator", SCHEMA);
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    let on_18 = admin_sql(
        &db,
        "SELECT current_setting('server_version_num')::int >= 180000",
    ) == "t";
    if on_18 {
        admin_sql(
            &db,
            "SET ROLE uuidforge; CREATE TABLE tickets (id uuid PRIMARY KEY DEFAULT pg_catalog.uuidv7(), n int); INSERT INTO tickets (n) VALUES (1)",
        );
    }
    let dir = common::scratch("switch", "generator");
    let cmd = || {
        let mut c = uuidforge();
        c.env_remove("UUIDFORGE_DB").current_dir(&dir).args([
            "db",
            "--db",
            &url(&db),
            "switch-generator",
        ]);
        c
    };
    let (defaults, keys) = (admin_sql(&db, DEFAULTS), admin_sql(&db, KEYS));

    let plan = out(&cmd().assert().success());
    let switched = if on_18 { 6 } else { 5 };
    assert!(
        plan.contains(&format!(
            "plan: {switched} default(s) set to \"public\".uuidv7()"
        )),
        "{plan}"
    );
    for line in [
        "ALTER TABLE ONLY \"public\".\"accounts\" ALTER COLUMN \"id\" SET DEFAULT \"public\".uuidv7();",
        "ALTER TABLE ONLY \"public\".\"invoices\" ALTER COLUMN \"id\" SET DEFAULT \"public\".uuidv7();",
        "ALTER TABLE ONLY \"public\".\"Events\" ALTER COLUMN \"id\" SET DEFAULT \"public\".uuidv7();",
        "ALTER TABLE ONLY \"public\".\"sessions\" ALTER COLUMN \"id\" SET DEFAULT \"public\".uuidv7();",
        "ALTER TABLE ONLY \"public\".\"sessions_2024\" ALTER COLUMN \"id\" SET DEFAULT \"public\".uuidv7();",
        "left public.invoices.token: (gen_random_uuid())::text: the column is text, not uuid",
        "left public.Events.digest: (md5((gen_random_uuid())::text))::uuid: pg_catalog.gen_random_uuid() is called inside an expression",
        "nothing was changed",
    ] {
        assert!(plan.contains(line), "{line}: {plan}");
    }
    assert!(!plan.contains("\"archived\""), "{plan}");
    assert_eq!(on_18, plan.contains("\"public\".\"tickets\""), "{plan}");
    assert_eq!(
        admin_sql(&db, DEFAULTS),
        defaults,
        "the plan changed a default"
    );

    let json: serde_json::Value =
        serde_json::from_slice(&cmd().arg("--json").assert().success().get_output().stdout)
            .unwrap();
    assert_eq!(json["generator"], "\"public\".uuidv7()");
    assert_eq!(json["switched"].as_array().unwrap().len(), switched);
    assert_eq!(json["left"].as_array().unwrap().len(), 2);

    let applied = out(&cmd().arg("--apply").assert().success());
    assert!(
        applied.contains(&format!(
            "{switched} default(s) now call \"public\".uuidv7() (2 left as they were)"
        )),
        "{applied}"
    );
    assert!(
        applied.contains("defaults not calling the new generator: 0"),
        "{applied}"
    );
    assert!(
        applied.contains("every other column default changed: 0"),
        "{applied}"
    );
    let backup = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "dump"))
        .expect("a backup");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let now = admin_sql(&db, DEFAULTS);
    // On 18 the server prints the schema: pg_catalog's uuidv7() would be
    // found first otherwise.
    let v7 = if on_18 { "public.uuidv7()" } else { "uuidv7()" };
    for (line, want) in [
        ("accounts.id ", v7),
        ("invoices.id ", v7),
        ("Events.id ", v7),
        ("sessions.id ", v7),
        ("sessions_2024.id ", v7),
        ("invoices.token ", "(gen_random_uuid())::text"),
        ("Events.digest ", "(md5((gen_random_uuid())::text))::uuid"),
        (
            "archived.id ",
            "'00000000-0000-0000-0000-000000000000'::uuid",
        ),
    ] {
        assert!(
            now.lines().any(|l| l == format!("{line}{want}")),
            "{line}{want}: {now}"
        );
    }
    // No key moved; new rows get increasing UUIDv7 keys from every table.
    assert_eq!(admin_sql(&db, KEYS), keys);
    for insert in [
        "INSERT INTO accounts (name) VALUES ('new')",
        "INSERT INTO invoices DEFAULT VALUES",
        "INSERT INTO \"Events\" DEFAULT VALUES",
        "INSERT INTO sessions (at) VALUES ('2024-06-01')",
    ] {
        let new = admin_sql(
            &db,
            &format!("SET ROLE uuidforge; {insert} RETURNING uuid_extract_version(id) = 7 AND id > '01900000-0000-7000-8000-000000000000'"),
        );
        assert_eq!(new, "t", "{insert}");
    }
    // Run again: nothing left to switch, and it says so.
    let again = out(&cmd().assert().success());
    assert!(again.contains("plan: 0 default(s)"), "{again}");
}

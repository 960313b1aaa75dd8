//! `uuidforge db rename` as a process against the real PostgreSQL server:
//! the plan, nothing changed without --apply, backup, one transaction,
//! verification, the undo script, kill -9 mid-transaction, bad input.

mod common;

use common::{admin_sql, fresh_database, url, uuidforge};
use predicates::prelude::*;

const SCHEMA: &str = r#"
CREATE TABLE customers (id uuid PRIMARY KEY, name text);
CREATE TABLE orders (id uuid PRIMARY KEY, customer_id uuid REFERENCES customers (id), note text);
CREATE INDEX orders_customer_id_idx ON orders (customer_id);
CREATE TABLE invoices (id int PRIMARY KEY, customer_id uuid REFERENCES customers (id));
CREATE VIEW order_customers AS SELECT id, customer_id FROM orders;
CREATE FUNCTION orders_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.note := 'for ' || NEW.customer_id; RETURN NEW; END $$;
CREATE TRIGGER orders_touch BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION orders_touch();
CREATE POLICY orders_by_customer ON orders USING (customer_id IS NOT NULL);
CREATE SCHEMA "Ünï ""Code""";
CREATE TABLE "Ünï ""Code"""."Select" ("Kunden Id" uuid REFERENCES customers (id), "select" int);
INSERT INTO customers VALUES ('01890a5d-ac96-774b-bcce-b302099a8057', 'a');
INSERT INTO orders (id, customer_id) VALUES ('01890a5d-ac96-774b-bcce-b302099a8058', '01890a5d-ac96-774b-bcce-b302099a8057');
INSERT INTO invoices VALUES (1, '01890a5d-ac96-774b-bcce-b302099a8057');
"#;

/// Names of the user columns, constraints and indexes (what a rename changes).
const NAMES: &str = "SELECT string_agg(x, ' ' ORDER BY x) FROM (
  SELECT format('%s.%s.%s', n.nspname, c.relname, a.attname) AS x
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE a.attnum > 0 AND NOT a.attisdropped AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
     AND c.relkind IN ('r', 'v')
  UNION ALL SELECT 'constraint ' || conname FROM pg_constraint WHERE connamespace NOT IN ('pg_catalog'::regnamespace)
  UNION ALL SELECT 'index ' || indexrelid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'pg_toast')) s";

/// A fresh directory for backup files.
fn scratch(tag: &str) -> common::Scratch {
    common::scratch("rename", tag)
}

fn rename(db: &str) -> assert_cmd::Command {
    let mut c = uuidforge();
    c.env_remove("UUIDFORGE_DB")
        .args(["db", "--db", &url(db), "rename"]);
    c
}

#[test]
fn the_plan_renames_the_key_everywhere_and_changes_nothing() {
    let db = fresh_database("rename_plan", SCHEMA);
    let before = admin_sql(&db, NAMES);
    let out = rename(&db)
        .args([
            "orders.customer_id",
            "client_id",
            "--related",
            "--views",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let plan: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let renamed: Vec<String> = plan["renamed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {}.{} {}→{}",
                r["kind"].as_str().unwrap(),
                r["schema"].as_str().unwrap(),
                r["table"].as_str().unwrap(),
                r["from"].as_str().unwrap(),
                r["to"].as_str().unwrap()
            )
        })
        .collect();
    for expected in [
        "column public.orders customer_id→client_id",
        "column public.invoices customer_id→client_id",
        "constraint public.invoices invoices_customer_id_fkey→invoices_client_id_fkey",
        "constraint public.orders orders_customer_id_fkey→orders_client_id_fkey",
        "index public.orders orders_customer_id_idx→orders_client_id_idx",
        "view column public.order_customers customer_id→client_id",
    ] {
        assert!(
            renamed.contains(&expected.to_string()),
            "{expected} not in {renamed:#?}"
        );
    }
    assert_eq!(renamed.len(), 6, "{renamed:#?}");
    // The exact SQL, reviewed: columns, then constraints, indexes, views;
    // the undo script in reverse.
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let statements = strings(&plan["statements"]);
    assert_eq!(
        statements,
        [
            r#"ALTER TABLE "public"."orders" RENAME COLUMN "customer_id" TO "client_id""#,
            r#"ALTER TABLE "public"."invoices" RENAME COLUMN "customer_id" TO "client_id""#,
            r#"ALTER TABLE "public"."invoices" RENAME CONSTRAINT "invoices_customer_id_fkey" TO "invoices_client_id_fkey""#,
            r#"ALTER TABLE "public"."orders" RENAME CONSTRAINT "orders_customer_id_fkey" TO "orders_client_id_fkey""#,
            r#"ALTER INDEX "public"."orders_customer_id_idx" RENAME TO "orders_client_id_idx""#,
            r#"ALTER VIEW "public"."order_customers" RENAME COLUMN "customer_id" TO "client_id""#,
        ]
    );
    let undo = strings(&plan["undo"]);
    assert_eq!(
        undo[0],
        r#"ALTER VIEW "public"."order_customers" RENAME COLUMN "client_id" TO "customer_id""#
    );
    assert_eq!(
        undo[5],
        r#"ALTER TABLE "public"."orders" RENAME COLUMN "client_id" TO "customer_id""#
    );
    // Tied by a key but named otherwise: kept, with the reason.
    let kept = plan["kept"].to_string();
    assert!(
        kept.contains("public.customers.id") && kept.contains("Kunden Id"),
        "{kept}"
    );
    // The trigger function's body mentions the old name: listed, not rewritten.
    let mentions = plan["mentions"].to_string();
    assert!(
        mentions.contains("orders_by_customer") && mentions.contains("policy"),
        "{mentions}"
    );
    assert!(
        mentions.contains("orders_touch()") && mentions.contains("trigger"),
        "{mentions}"
    );
    assert!(plan["applied"].is_null());
    assert_eq!(admin_sql(&db, NAMES), before, "a plan changes nothing");
    // A name holding a line break stays inside its comment line: the
    // printed script holds no statement but the plan's (its renames, and
    // its verification, which binds the names rather than writing them).
    admin_sql(
        &db,
        "CREATE TABLE \"line\nDROP TABLE customers; --\" (customer_id uuid REFERENCES customers (id))",
    );
    let text = rename(&db)
        .args(["orders.customer_id", "client_id", "--related"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    let mut quoted = false;
    for line in text.lines() {
        if !quoted {
            assert!(
                line.is_empty()
                    || line.starts_with("--")
                    || line.starts_with("ALTER ")
                    || (line.starts_with("SELECT coalesce(jsonb_object_agg(r.label")
                        && line.ends_with("$5 = labels"))
                    || line == "BEGIN;"
                    || line == "COMMIT;",
                "a line outside the plan's statements: {line:?}\n{text}"
            );
            if line.starts_with("--") {
                continue;
            }
        }
        quoted ^= line.matches('"').count() % 2 == 1;
    }
    // The text form prints the SQL in one transaction and the undo script.
    rename(&db)
        .args(["orders.customer_id", "client_id", "--related"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("BEGIN;")
                .and(predicate::str::contains(
                    r#"ALTER TABLE "public"."orders" RENAME COLUMN "customer_id" TO "client_id";"#,
                ))
                .and(predicate::str::contains("-- undo:"))
                .and(predicate::str::contains("nothing was changed")),
        );
}

#[test]
fn apply_backs_up_renames_in_one_transaction_and_the_undo_script_restores() {
    let db = fresh_database("rename_apply", SCHEMA);
    let before = admin_sql(&db, NAMES);
    let dir = scratch("apply");
    let backup = dir.join("before.dump");
    let out = rename(&db)
        .args([
            "orders.customer_id",
            "client_id",
            "--related",
            "--views",
            "--apply",
            "--json",
            "--backup",
        ])
        .arg(&backup)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(
        report["applied"]["backup"]["entries"].as_u64().unwrap() >= 4,
        "{report}"
    );
    let listed = std::process::Command::new("pg_restore")
        .arg("--list")
        .arg(&backup)
        .output()
        .unwrap();
    assert!(listed.status.success());
    assert!(String::from_utf8_lossy(&listed.stdout).contains("TABLE public orders"));
    let verified = report["applied"]["checks"].to_string();
    assert!(
        verified.contains("orders: customer_id → client_id"),
        "{verified}"
    );
    let after = admin_sql(&db, NAMES);
    assert!(
        after.contains("public.orders.client_id") && !after.contains("public.orders.customer_id")
    );
    assert!(
        after.contains("public.invoices.client_id")
            && after.contains("public.order_customers.client_id")
    );
    assert!(after.contains("orders_client_id_idx") && after.contains("orders_client_id_fkey"));
    // Data and keys still work under the new names.
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM orders o JOIN customers c ON c.id = o.client_id"
        ),
        "1"
    );
    // The same backup file is never overwritten.
    rename(&db)
        .args(["invoices.client_id", "customer_ref", "--apply", "--backup"])
        .arg(&backup)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exists"));
    // The undo script restores every name.
    let undo: Vec<String> = report["undo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    admin_sql(&db, &format!("BEGIN; {}; COMMIT", undo.join("; ")));
    assert_eq!(admin_sql(&db, NAMES), before);
}

#[test]
fn a_killed_apply_changes_nothing() {
    let db = fresh_database("rename_kill", SCHEMA);
    let before = admin_sql(&db, NAMES);
    // Another session reads invoices (a lock the backup shares but a
    // rename waits for): the rename of orders goes through, then the
    // transaction waits on invoices, and is killed there.
    let dir = scratch("kill");
    common::kill_while_waiting_on(
        &db,
        "invoices",
        &dir,
        &[
            "db",
            "--db",
            &url(&db),
            "rename",
            "orders.customer_id",
            "client_id",
            "--related",
            "--apply",
            "--backup",
            "b.dump",
        ],
    );
    assert_eq!(admin_sql(&db, NAMES), before);
}

#[test]
fn bad_input_is_refused_with_the_field_and_value() {
    let db = fresh_database("rename_bad", SCHEMA);
    rename(&db)
        .args(["orders.nope", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope").and(predicate::str::contains("customer_id")));
    rename(&db)
        .args(["orders.customer_id", "note"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already has a column 'note'"));
    rename(&db)
        .args(["orders.customer_id", &"x".repeat(64)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("new name"));
    // Quoted, mixed-case and unicode identifiers are renamed as they are,
    // written as psql reads them.
    rename(&db)
        .args([r#"Ünï "Code".Select.Kunden Id"#, "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("outside quotes"));
    rename(&db)
        .args([
            r#""Ünï ""Code"""."Select"."Kunden Id""#,
            r#""Kunden Schlüssel""#,
            "--apply",
            "--json",
            "--backup",
        ])
        .arg(scratch("bad").join("u.dump"))
        .assert()
        .success();
    assert!(admin_sql(&db, NAMES).contains(r#"Ünï "Code".Select.Kunden Schlüssel"#));
}

/// `--related` reaches partitioned tables and the columns of partitions
/// that declare their own foreign keys: each column is renamed on its
/// partitioned table (a partition's column is its table's), so every
/// partition has the new name.
#[test]
fn related_columns_of_partitioned_tables_and_partitions() {
    let db = fresh_database(
        "rename_partitions",
        "CREATE TABLE customers (id uuid PRIMARY KEY, name text);
         CREATE TABLE payments (customer_id uuid NOT NULL REFERENCES customers (id), at date NOT NULL) PARTITION BY RANGE (at);
         CREATE TABLE payments_2024 PARTITION OF payments FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         CREATE TABLE rentals (customer_id uuid NOT NULL, at date NOT NULL) PARTITION BY RANGE (at);
         CREATE TABLE rentals_2024 PARTITION OF rentals FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         CREATE TABLE rentals_2025 PARTITION OF rentals FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
         ALTER TABLE rentals_2024 ADD FOREIGN KEY (customer_id) REFERENCES customers (id);
         ALTER TABLE rentals_2025 ADD FOREIGN KEY (customer_id) REFERENCES customers (id);",
    );
    rename(&db)
        .args([
            "payments.customer_id",
            "client_id",
            "--related",
            "--apply",
            "--backup",
        ])
        .arg(scratch("partitions").join("p.dump"))
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &db,
            "SELECT string_agg(attrelid::regclass || '.' || attname, ' ' ORDER BY attrelid::regclass::text)
               FROM pg_attribute WHERE attname IN ('customer_id', 'client_id')
                AND attrelid IN (SELECT oid FROM pg_class WHERE relkind IN ('r', 'p'))"
        ),
        "payments.client_id payments_2024.client_id rentals.client_id rentals_2024.client_id rentals_2025.client_id"
    );
}

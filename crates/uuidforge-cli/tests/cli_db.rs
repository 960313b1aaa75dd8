//! `uuidforge db …` as a process against the real PostgreSQL server
//! (scripts/pg-setup.sh): connecting like psql, exit codes, output forms.

mod common;

use common::uuidforge;
use predicates::prelude::*;

const CUSTOMER: &str = "01890a5d-ac96-774b-bcce-b302099a8057";
const ABSENT: &str = "01890a5d-ac96-774b-bcce-b302099a80ff";

/// A fresh database owned by the login role `uuidforge`, with a key and an
/// unindexed column carrying it.
fn fixture(tag: &str) -> String {
    common::fresh_database(
        tag,
        &format!(
            "CREATE TABLE customers (id uuid PRIMARY KEY, name text);
             CREATE TABLE orders (id uuid PRIMARY KEY, customer_id uuid, note jsonb);
             INSERT INTO customers VALUES ('{CUSTOMER}', 'a');
             INSERT INTO orders VALUES (gen_random_uuid(), '{CUSTOMER}', '{{\"by\": \"{CUSTOMER}\"}}');"
        ),
    )
}

use common::url;

fn db(name: &str) -> assert_cmd::Command {
    let mut c = uuidforge();
    c.env_remove("UUIDFORGE_DB")
        .env("NO_COLOR", "1")
        .args(["db", "--db", &url(name)]);
    c
}

#[test]
fn columns_as_json_and_as_a_coloured_table() {
    let name = fixture("columns");
    let out = db(&name).args(["columns", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let columns: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let find = |t: &str, c: &str| {
        columns
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["table"] == t && x["column"] == c)
            .cloned()
            .unwrap_or_else(|| panic!("{t}.{c} in {columns}"))
    };
    assert_eq!(find("customers", "id")["index_status"], "leading");
    assert_eq!(find("orders", "customer_id")["index_status"], "none");
    assert_eq!(find("orders", "note")["kind"], "sampled");

    // 24-bit colours of the spec, light theme: indexed #0043ce, not #f34900.
    db(&name)
        .args(["columns", "--color", "always", "--theme", "light"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\x1b[38;2;0;67;206m"))
        .stdout(predicate::str::contains("\x1b[38;2;243;73;0m"));
    db(&name)
        .args(["columns", "--color", "always", "--theme", "dark"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\x1b[38;2;133;177;255m"))
        .stdout(predicate::str::contains("\x1b[38;2;255;151;102m"));
    // auto with NO_COLOR (and no terminal): no escapes at all.
    db(&name)
        .args(["columns"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\x1b[").not());
}

#[test]
fn find_exits_0_when_found_1_when_not_2_on_bad_input() {
    let name = fixture("find");
    let out = db(&name)
        .args(["find", "--json", &CUSTOMER.to_uppercase()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let hits: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut places: Vec<String> = hits
        .iter()
        .map(|h| format!("{}.{} {}", h["table"], h["column"], h["path"]))
        .collect();
    places.sort();
    assert_eq!(
        places,
        [
            r#""customers"."id" null"#,
            r#""orders"."customer_id" null"#,
            r#""orders"."note" "$.by""#
        ]
    );
    db(&name).args(["find", ABSENT]).assert().code(1);
    db(&name)
        .args(["find", "--indexed-only", CUSTOMER])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("customers"))
        .stdout(predicate::str::contains("orders").not());
    db(&name)
        .args(["find", "--column", "orders.note", CUSTOMER])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("$.by"))
        .stdout(predicate::str::contains("customer_id").not());
    db(&name)
        .args(["find", "not-a-uuid"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'not-a-uuid'"));
}

#[test]
fn related_and_discover() {
    let name = fixture("related");
    db(&name)
        .args(["related", "customers.id"])
        .assert()
        .success()
        .stdout(predicate::str::contains("public.orders.customer_id"))
        .stdout(predicate::str::contains("naming"));
    db(&name)
        .args(["related", "customers.nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no column 'nope'"));
    db(&name)
        .args(["discover", "--diagram", "mermaid"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("erDiagram"));
    db(&name)
        .args(["discover", "--ddl"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            r#"FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") NOT VALID"#,
        ));
}

#[test]
fn connects_like_psql_and_keeps_the_password_out_of_errors() {
    let name = fixture("connect");
    // PG* variables alone.
    uuidforge()
        .env_remove("UUIDFORGE_DB")
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", common::port())
        .env("PGUSER", "uuidforge")
        .env("PGPASSWORD", "uuidforge")
        .env("PGDATABASE", &name)
        .args(["db", "find", CUSTOMER])
        .assert()
        .code(0);
    // A server that is not there: exit 2, the password not shown.
    uuidforge()
        .args([
            "db",
            "--db",
            "postgres://uuidforge:sekrit-pw@127.0.0.1:1/x",
            "columns",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sekrit-pw").not())
        .stderr(predicate::str::contains("connect"));
}

/// The creation time inside a UUIDv7 key: per column (the oldest and newest
/// of the sampled values) and per hit.
#[test]
fn uuidv7_times_per_column_and_per_hit() {
    let name = fixture("v7times");
    common::admin_sql(
        &name,
        "INSERT INTO customers VALUES ('01890a5d-0000-7000-8000-000000000001', 'older'), (gen_random_uuid(), 'a v4')",
    );
    let out = db(&name).args(["columns", "--json"]).output().unwrap();
    let columns: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = columns
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["table"] == "customers" && c["column"] == "id")
        .unwrap();
    assert_eq!(id["v7_times"]["sampled"], 2, "{id}");
    let oldest = id["v7_times"]["oldest"].as_str().unwrap();
    let newest = id["v7_times"]["newest"].as_str().unwrap();
    assert!(oldest < newest, "{id}");
    assert_eq!(newest, "2023-06-30T03:34:18.518Z");
    db(&name)
        .args(["columns"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "UUIDv7 times {oldest} .. {newest}, 2 sampled"
        )));
    let out = db(&name)
        .args(["find", "--json", CUSTOMER])
        .output()
        .unwrap();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let hit: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(hit["v7_time"], "2023-06-30T03:34:18.518Z", "{hit}");
    }
    db(&name)
        .args(["find", CUSTOMER])
        .assert()
        .success()
        .stdout(predicate::str::contains("\tv7 2023-06-30T03:34:18.518Z"));
}

/// A table or column that does not exist is named, not "0 hits".
#[test]
fn find_refuses_a_column_or_table_that_does_not_exist() {
    let name = fixture("nosuch");
    for (option, value) in [
        ("--column", "nosuch.col"),
        ("--column", "customers.nosuch"),
        ("--column", "other.customers.id"),
    ] {
        let out = db(&name)
            .args(["find", option, value, CUSTOMER])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains(&format!("no column named '{value}'")), "{e}");
        assert!(out.stdout.is_empty());
    }
    db(&name)
        .args(["find", "--column", "customers.id", CUSTOMER])
        .assert()
        .success();
}

/// `find --column` (and `grep --db --table/--column`, which share it)
/// reads names as psql does: a quoted part keeps its case (and dots), an
/// unquoted one folds to lower case, and one that then matches only a
/// mixed-case name is refused with how to quote it.
#[test]
fn find_reads_names_as_psql_does() {
    let name = fixture("find_names");
    common::admin_sql(
        &name,
        &format!(
            "SET ROLE uuidforge;
             CREATE TABLE \"Order\" (\"Kunde\" uuid, \"a.b\" uuid);
             INSERT INTO \"Order\" VALUES ('{CUSTOMER}', '{CUSTOMER}');"
        ),
    );
    for value in [
        r#""Order"."Kunde""#,
        r#"PUBLIC."Order"."a.b""#,
        r#""Kunde""#,
    ] {
        let out = db(&name)
            .args(["find", "--column", value, CUSTOMER, "--json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{value}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Order"),
            "{value}"
        );
    }
    for (value, hint) in [
        ("Order.Kunde", r#"did you mean public."Order"."Kunde"?"#),
        ("kunde", r#"did you mean public."Order"."Kunde"?"#),
    ] {
        let out = db(&name)
            .args(["find", "--column", value, CUSTOMER])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(
            e.contains(&format!("named '{value}'")) && e.contains(hint),
            "{e}"
        );
    }
    let grep = |table: &str| {
        uuidforge()
            .args([
                "grep",
                "--db",
                &url(&name),
                "-e",
                CUSTOMER,
                "--table",
                table,
            ])
            .env_remove("UUIDFORGE_DB")
            .output()
            .unwrap()
    };
    let out = grep(r#"public."Order""#);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = grep("Order");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(r#"did you mean public."Order"?"#));
}

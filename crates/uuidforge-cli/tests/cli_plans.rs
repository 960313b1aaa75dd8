//! The SQL each database-changing command prints, compared with reviewed
//! files in `tests/plans/` (oids written as `<oid>`). A change of plan
//! shows up here as a diff to review; `UUIDFORGE_ACCEPT_PLANS=1` rewrites
//! the files after the review.

mod common;

use common::{admin_sql, customers_schema, fresh_database, uuidforge, ANN, ANN_B, PEOPLE_SCHEMA};

fn plan_of(db: &str, args: &[&str]) -> String {
    let out = uuidforge()
        .env_remove("UUIDFORGE_DB")
        .args(["db", "--db", &common::url(db)])
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    // Names made from table oids differ from run to run, the pg_dump found
    // from machine to machine, and the cost's estimates with the
    // statistics autovacuum gathers meanwhile and the disk's free space
    // (the_plan_says_what_the_migration_costs tests them).
    let text: String = String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("-- with --apply, backed up first by pg_dump "))
        .filter(|l| {
            ![
                "--   cost: ",
                "--     \"",
                "--   disk: ",
                "--   WARNING: the data directory",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    uuidforge_fleet::plans::without_oids(&text)
}

/// The reviewed plans of the server under test: `tests/plans/` for
/// PostgreSQL 15, `tests/plans/pgNN/` for another major version where its
/// plan differs (views and expressions come back from the server in its
/// own words, which change between versions).
fn plans_dir() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans");
    let major = common::admin_sql(
        "postgres",
        "SELECT current_setting('server_version_num')::int / 10000",
    );
    if major == "15" {
        dir
    } else {
        let dir = dir.join(format!("pg{major}"));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}

fn check(name: &str, plan: &str) {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/plans")
        .join(format!("{name}.sql"));
    let own = plans_dir().join(format!("{name}.sql"));
    // Another version keeps a plan of its own only where it differs.
    let path = if own.exists() || own == base {
        own.clone()
    } else {
        base.clone()
    };
    if std::env::var_os("UUIDFORGE_ACCEPT_PLANS").is_some() {
        let same_as_base = own != base && std::fs::read_to_string(&base).is_ok_and(|b| b == plan);
        if !same_as_base {
            std::fs::write(&own, plan).unwrap();
        }
        return;
    }
    let reviewed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UUIDFORGE_ACCEPT_PLANS=1 and review)",
            path.display()
        )
    });
    if reviewed != plan {
        let first = reviewed
            .lines()
            .zip(plan.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(reviewed.lines().count().min(plan.lines().count()));
        panic!(
            "{name}: the plan differs from {} at line {}:\n  reviewed: {:?}\n  now:      {:?}",
            path.display(),
            first + 1,
            reviewed.lines().nth(first),
            plan.lines().nth(first)
        );
    }
}

#[test]
fn plans_match_the_reviewed_sql() {
    let db = fresh_database("plans", &customers_schema(30));
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    admin_sql(
        &db,
        &format!(
            "SET ROLE uuidforge; CREATE VIEW order_customers AS SELECT o.id, o.customer_id FROM orders o; {PEOPLE_SCHEMA}"
        ),
    );
    check("migrate-key", &plan_of(&db, &["migrate-key", "customers"]));
    check(
        "migrate-key-batched",
        &plan_of(
            &db,
            &[
                "migrate-key",
                "customers",
                "--batch-size",
                "1000",
                "--order-by",
                "created_at",
            ],
        ),
    );
    // The online copy, on the same tables without the view (which it
    // cannot carry yet).
    let copied = fresh_database("plans_copy", &customers_schema(30));
    admin_sql(&copied, "CREATE EXTENSION uuidforge");
    check(
        "migrate-key-copy",
        &plan_of(
            &copied,
            &[
                "migrate-key",
                "customers",
                "--batch-size",
                "1000",
                "--copy",
                "--order-by",
                "created_at",
            ],
        ),
    );
    check(
        "rename",
        &plan_of(
            &db,
            &[
                "rename",
                "orders.customer_id",
                "client_id",
                "--related",
                "--views",
            ],
        ),
    );
    check(
        "merge",
        &plan_of(
            &db,
            &[
                "merge",
                ANN,
                ANN_B,
                "--into",
                ANN,
                "--reason",
                "same person",
            ],
        ),
    );
}

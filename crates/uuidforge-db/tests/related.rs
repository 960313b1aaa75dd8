//! D6 (finding) on the real server: the columns carrying a key, found by
//! declared keys, views, names and shared values, and nothing else.

mod common;

use common::TestDb;
use std::collections::{BTreeMap, BTreeSet};
use uuidforge_db::client::ReadOnly;
use uuidforge_db::exec;
use uuidforge_db::related::RelatedColumn;

/// Customers, the columns that carry their key in every way D6 names, and
/// decoys that carry other UUIDs or share only a generic name.
const SCHEMA: &str = r#"
CREATE TABLE customers (id uuid PRIMARY KEY, name text);
INSERT INTO customers SELECT gen_random_uuid(), 'c' || i FROM generate_series(1, 50) i;
CREATE TABLE orders (id uuid PRIMARY KEY, customer_id uuid REFERENCES customers (id));
INSERT INTO orders SELECT gen_random_uuid(), (SELECT id FROM customers ORDER BY random() + i LIMIT 1)
  FROM generate_series(1, 200) i;
CREATE TABLE payments (id uuid, customer_id uuid REFERENCES customers (id));
-- no constraint: its name says it, and so do its values
CREATE TABLE invoices (id uuid PRIMARY KEY, "customerId" uuid);
INSERT INTO invoices SELECT gen_random_uuid(), id FROM customers LIMIT 30;
-- no constraint and an unrelated name: only the values say it
CREATE TABLE archive (client uuid, note text);
INSERT INTO archive SELECT id, 'old' FROM customers LIMIT 10;
-- decoys: other UUIDs, and a name with the word customer in it
CREATE TABLE unrelated (id uuid PRIMARY KEY, customer_note uuid, "We""ird; <b>" uuid);
INSERT INTO unrelated SELECT gen_random_uuid(), gen_random_uuid(), gen_random_uuid() FROM generate_series(1, 40);
CREATE VIEW customer_view AS SELECT id AS cust, name FROM customers;
CREATE VIEW order_view AS SELECT customer_id AS buyer, id FROM orders;
"#;

async fn related(db: &TestDb, target: &str, by_name: bool) -> Vec<RelatedColumn> {
    let config = uuidforge_db::client::config(Some(&db.admin_url())).unwrap();
    let session = ReadOnly::open(&config).await.unwrap();
    exec::related(&session, target, by_name).await.unwrap()
}

fn by_column(found: &[RelatedColumn]) -> BTreeMap<String, BTreeSet<&'static str>> {
    found
        .iter()
        .map(|r| {
            (
                format!("{}.{}", r.table, r.column),
                r.evidence.iter().map(|e| e.kind).collect(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_is_found_by_constraints_views_names_and_values() {
    let db = TestDb::create("related").await;
    db.admin().await.batch_execute(SCHEMA).await.unwrap();

    let found = related(&db, "public.customers.id", false).await;
    let kinds = by_column(&found);
    let expected: BTreeMap<String, BTreeSet<&str>> = [
        (
            "orders.customer_id",
            &["referenced_by", "naming", "values"][..],
        ),
        ("payments.customer_id", &["referenced_by", "naming"][..]),
        ("invoices.customerId", &["naming", "values"][..]),
        ("archive.client", &["values"][..]),
        ("customer_view.cust", &["view"][..]),
        ("order_view.buyer", &["view"][..]),
    ]
    .into_iter()
    .map(|(c, k)| (c.to_string(), k.iter().copied().collect()))
    .collect();
    assert_eq!(kinds, expected, "{found:#?}");
    // Best evidence first: a declared key outranks a name and values.
    let score = |c: &str| {
        found
            .iter()
            .find(|r| format!("{}.{}", r.table, r.column) == c)
            .unwrap()
            .score
    };
    assert_eq!(score("orders.customer_id"), 1.0);
    assert!(score("invoices.customerId") > score("archive.client"));
    assert!(found.windows(2).all(|w| w[0].score >= w[1].score));
    let archive = found.iter().find(|r| r.table == "archive").unwrap();
    assert!(
        archive.evidence[0]
            .detail
            .starts_with("100.0% of its 10 values"),
        "{}",
        archive.evidence[0].detail
    );

    // From the other end: the column, its sibling, its key and its view.
    let kinds = by_column(&related(&db, "orders.customer_id", false).await);
    assert_eq!(
        kinds["customers.id"],
        BTreeSet::from(["foreign_key", "naming", "values"])
    );
    assert!(
        kinds["payments.customer_id"].contains("same_key"),
        "{kinds:?}"
    );
    assert!(kinds["order_view.buyer"].contains("view"));
    assert!(!kinds.contains_key("unrelated.customer_note"));

    // A view column leads to the table column it shows, and on to its key.
    let kinds = by_column(&related(&db, "order_view.buyer", false).await);
    assert!(
        kinds["orders.customer_id"].contains("view_source"),
        "{kinds:?}"
    );
    assert!(kinds["customers.id"].contains("values"), "{kinds:?}");

    // By name: every spelling of the name, and the key the name points at.
    let kinds = by_column(&related(&db, "customer_id", true).await);
    for c in [
        "orders.customer_id",
        "payments.customer_id",
        "invoices.customerId",
    ] {
        assert!(kinds[c].contains("same_name"), "{c}: {kinds:?}");
    }
    assert!(kinds["customers.id"].contains("naming"), "{kinds:?}");
    assert!(!kinds.contains_key("unrelated.customer_note"));

    // A bad column names what it expected.
    let config = uuidforge_db::client::config(Some(&db.admin_url())).unwrap();
    let session = ReadOnly::open(&config).await.unwrap();
    let err = exec::related(&session, "customers.nope", false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("has no column 'nope'") && err.contains("id, name"),
        "{err}"
    );
    drop(session);
    db.drop_now().await;
}

//! The explorer's fixture: every container and index case of D2/D5, with
//! planted values, weird identifiers, a partitioned table, views and a
//! table a reader may not see.
#![allow(dead_code)]

use uuid::Uuid;
use uuidforge::uuid192::{SegmentFields, Uuid192};

pub const WEIRD_SCHEMA: &str = "We\"ird; Schema";
pub const XSS: &str = "<img src=x onerror=alert(1)>";

pub const SCHEMA_SQL: &str = r#"
CREATE EXTENSION uuidforge;
CREATE DOMAIN order_ref AS uuid;
CREATE TYPE line_ref AS (line uuid, note text);
CREATE TABLE customers (id uuid PRIMARY KEY, name text, email text);
CREATE TABLE orders (
  id uuidv7_gen PRIMARY KEY,
  customer_id uuid REFERENCES customers (id),
  ref order_ref,
  tags uuid[],
  tags_gin uuid[],
  doc jsonb,
  doc_plain json,
  legacy_id text,
  legacy_code varchar(45),
  fixed char(36),
  raw bytea,
  line line_ref,
  urls text[],
  note text,
  k192 uuid192,
  created_at timestamptz DEFAULT now()
);
CREATE INDEX orders_tags_gin ON orders USING gin (tags_gin);
CREATE INDEX orders_legacy ON orders (legacy_id);
CREATE INDEX orders_created_ref ON orders (created_at, ref);
CREATE INDEX orders_partial ON orders (legacy_code) WHERE legacy_code IS NOT NULL;
CREATE INDEX orders_expr ON orders (lower(fixed));
CREATE INDEX orders_raw_hash ON orders USING hash (raw);
CREATE INDEX orders_invalid ON orders (k192);
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'orders_invalid'::regclass;
CREATE TABLE lines (order_id uuid NOT NULL REFERENCES orders (id), n int, product uuid, PRIMARY KEY (order_id, n));
CREATE TABLE events (at timestamptz NOT NULL, id uuid, payload jsonb) PARTITION BY RANGE (at);
CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE INDEX events_id ON events (id);
CREATE TABLE audit_log (entry text, extra bytea);
CREATE TABLE plain_notes (id int PRIMARY KEY, body text);
CREATE VIEW order_refs AS SELECT id AS order_ref, customer_id, note FROM orders;
CREATE TABLE secrets (id uuid PRIMARY KEY, token text);
CREATE TABLE one_spelling_per_row (id serial PRIMARY KEY, body text, doc jsonb, arr text[], bin bytea);
CREATE SCHEMA "We""ird; Schema";
CREATE TABLE "We""ird; Schema"."<img src=x onerror=alert(1)>" (
  "<img src=x onerror=alert(1)>" uuid, "Ключ" text, "order" jsonb);
CREATE TABLE "MixedCase" ("Id" uuid PRIMARY KEY, "select" text);
-- Values stored compressed inline (big, big_doc) and out of line (ext).
CREATE TABLE stored_apart (id int PRIMARY KEY, big text, big_doc jsonb, ext text);
ALTER TABLE stored_apart ALTER COLUMN ext SET STORAGE EXTERNAL;
-- Rows stored before a column with a default was added.
CREATE TABLE late_column (id int PRIMARY KEY);
-- Row-level security: read through SQL, never from its pages.
CREATE TABLE guarded (id int PRIMARY KEY, guarded_body text);
ALTER TABLE guarded ENABLE ROW LEVEL SECURITY;
CREATE POLICY guarded_all ON guarded USING (true);
"#;

/// Values planted in the fixture: `needles` are searched for, `decoys`
/// are not.
pub struct Planted {
    pub needles: Vec<Uuid>,
    pub decoys: Vec<Uuid>,
}

pub fn uuid192_text(left: Uuid) -> String {
    Uuid192::new(left, SegmentFields::Raw { payload: 42 })
        .unwrap()
        .to_string()
}

/// Rows that put needle `i % n` in every container and spelling.
pub async fn plant(client: &tokio_postgres::Client, planted: &Planted) {
    let n = |i: usize| planted.needles[i % planted.needles.len()];
    let d = |i: usize| planted.decoys[i % planted.decoys.len()];
    let canon = |u: Uuid| u.to_string();
    let b32 = |u: Uuid| uuidforge::base32::encode(&u).as_str().to_string();
    let rows = planted.needles.len().max(3);
    for i in 0..rows {
        let (a, b, c) = (n(i), n(i + 1), n(i + 2));
        client
            .execute(
                "INSERT INTO customers VALUES ($1, $2, $3), ($4, 'decoy', NULL)",
                &[
                    &a,
                    &format!("customer {i}"),
                    &format!("mailto:x@y?ref={}", canon(d(i))),
                    &d(i),
                ],
            )
            .await
            .unwrap();
        let order = Uuid::from_u128(b.as_u128() ^ 0xffff_0000);
        client
            .execute(
                "INSERT INTO orders (id, customer_id, ref, tags, tags_gin, doc, doc_plain, legacy_id,
                   legacy_code, fixed, raw, line, urls, note, k192)
                 VALUES ($1::uuid, $2, $3::uuid, $4, $5, $6::text::jsonb, $7::text::json, $8, $9, $10, $11,
                   ROW($12, 'n')::line_ref, $13, $14, $15::text::uuid192)",
                &[
                    &order,
                    &a,
                    &c,
                    &vec![d(i), a],
                    &vec![c],
                    &serde_json::json!({"order": {"items": [{"id": canon(d(i))}, {"id": canon(a).to_uppercase()}]}, canon(b): "key"}).to_string(),
                    &serde_json::json!({"x": [b.simple().to_string()]}).to_string(),
                    &format!("{{{}}}", canon(a)),
                    &format!("urn:uuid:{}", canon(c)),
                    &canon(b).to_uppercase(),
                    &a.as_bytes().to_vec(),
                    &c,
                    &vec![format!("https://shop.example/o/{}?x=1", canon(a)), "none".to_string()],
                    &format!("see {} here", b32(b)),
                    &uuid192_text(a),
                ],
            )
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO lines VALUES ($1, 1, $2), ($1, 2, $3)",
                &[&order, &c, &d(i + 1)],
            )
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO events VALUES ('2024-05-01', $1, $2::text::jsonb), ('2025-02-01', $3, NULL)",
                &[&a, &serde_json::json!({"ref": canon(b)}).to_string(), &d(i + 2)],
            )
            .await
            .unwrap();
        let mut extra = c.as_bytes().to_vec();
        extra.extend_from_slice(&[0u8; 8]);
        client
            .execute(
                "INSERT INTO audit_log VALUES ($1, $2)",
                &[
                    &format!("user {} did it at /x/{}/y", canon(a), b.simple()),
                    &extra,
                ],
            )
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO plain_notes VALUES ($1, $2)",
                &[&(i as i32), &format!("prefix{} is no token", canon(a))],
            )
            .await
            .unwrap();
        client
            .execute("INSERT INTO secrets VALUES ($1, 'x')", &[&a])
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO \"We\"\"ird; Schema\".\"<img src=x onerror=alert(1)>\" VALUES ($1, $2, $3::text::jsonb)",
                &[&c, &format!("Ключ {}", canon(a)), &serde_json::json!({"<script>alert(1)</script>": canon(c)}).to_string()],
            )
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO \"MixedCase\" VALUES ($1, $2)",
                &[
                    &Uuid::from_u128(b.as_u128() ^ 0xabc),
                    &format!("urn:uuid:{}", canon(a)),
                ],
            )
            .await
            .unwrap();
    }
    // Rows with one needle in one column and one spelling: a search
    // that misses a spelling in SQL cannot be rescued by another column.
    for &u in &planted.needles {
        let k192 = Uuid192::new(u, SegmentFields::Raw { payload: 7 }).unwrap();
        for (body, doc, arr) in [
            (Some(format!("x {} y", b32(u))), None, None),
            (Some(format!("x {} y", b32(u).to_lowercase())), None, None),
            (Some(format!("k={}", k192.to_base32())), None, None),
            (Some(format!("id={}&", u.simple())), None, None),
            (Some(uuid192_text(u)), None, None),
            (
                None,
                Some(serde_json::json!({"k": [b32(u).to_lowercase()]}).to_string()),
                None,
            ),
            (
                None,
                Some(serde_json::json!({canon(u).to_uppercase(): 1}).to_string()),
                None,
            ),
            (
                None,
                None,
                Some(vec![format!("{{{}}}", canon(u).to_uppercase())]),
            ),
        ] {
            client
                .execute(
                    "INSERT INTO one_spelling_per_row (body, doc, arr) VALUES ($1, $2::text::jsonb, $3)",
                    &[&body, &doc, &arr],
                )
                .await
                .unwrap();
        }
        client
            .execute(
                "INSERT INTO one_spelling_per_row (bin) VALUES ($1)",
                &[&u.as_bytes().to_vec()],
            )
            .await
            .unwrap();
    }
    for (i, &u) in planted.needles.iter().enumerate() {
        client
            .execute(
                "INSERT INTO stored_apart VALUES ($1,
                   repeat('lorem ipsum ', 400) || $2 || repeat(' dolor', 400),
                   jsonb_build_object('filler', repeat('x', 5000), 'ref', $3::text),
                   (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g) || ' ' || $4)",
                &[&(i as i32), &canon(u), &b32(u), &u.simple().to_string()],
            )
            .await
            .unwrap();
        client
            .execute("INSERT INTO late_column VALUES ($1)", &[&(i as i32)])
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO guarded VALUES ($1, $2)",
                &[&(i as i32), &format!("[{}]", canon(u))],
            )
            .await
            .unwrap();
    }
    // A default kept in the catalog only (the rows above do not hold it).
    client
        .batch_execute(&format!(
            "ALTER TABLE late_column ADD COLUMN tag text DEFAULT 'see {}'",
            canon(planted.needles[0])
        ))
        .await
        .unwrap();
    client
        .batch_execute(
            "CREATE MATERIALIZED VIEW customer_ids AS SELECT id AS cid FROM customers;
             CREATE UNIQUE INDEX customer_ids_cid ON customer_ids (cid);
             ANALYZE;",
        )
        .await
        .unwrap();
}

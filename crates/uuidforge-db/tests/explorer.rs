//! The explorer against the real server: column statuses as the fixture
//! intends, find's recall and precision against a brute-force oracle,
//! permissions, and identifiers that try to break out of their quotes.

mod common;
#[path = "fixture.rs"]
mod fixture;

use common::TestDb;
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;
use uuidforge_db::client::ReadOnly;
use uuidforge_db::exec;
use uuidforge_db::find::{FindOptions, Hit, Needles};

fn random_uuids(n: usize) -> Vec<Uuid> {
    (0..n).map(|_| uuidforge::v7()).collect()
}

async fn fixture_db(tag: &str, needles: usize) -> (TestDb, fixture::Planted) {
    let db = TestDb::create(tag).await;
    let admin = db.admin().await;
    admin.batch_execute(fixture::SCHEMA_SQL).await.unwrap();
    let planted = fixture::Planted {
        needles: random_uuids(needles),
        decoys: random_uuids(needles + 8),
    };
    fixture::plant(&admin, &planted).await;
    (db, planted)
}

async fn session(url: &str) -> (ReadOnly, tokio_postgres::Config) {
    let config = uuidforge_db::client::config(Some(url)).unwrap();
    (ReadOnly::open(&config).await.unwrap(), config)
}

#[tokio::test]
async fn every_column_gets_the_status_the_fixture_intends() {
    let (db, _) = fixture_db("columns", 3).await;
    let (s, _) = session(&db.admin_url()).await;
    let found = exec::uuid_columns(&s, &[], 0.5).await.unwrap();
    let by_name: HashMap<String, &uuidforge_db::columns::UuidColumn> = found
        .iter()
        .map(|c| (format!("{}.{}.{}", c.schema, c.table, c.column), c))
        .collect();
    let expect = [
        ("public.customers.id", "declared", "leading", true),
        ("public.orders.id", "declared", "leading", true),
        ("public.orders.customer_id", "declared", "none", false),
        ("public.orders.ref", "declared", "non_leading", false),
        ("public.orders.tags", "declared", "none", false),
        (
            "public.orders.tags_gin",
            "declared",
            "expression_or_gin",
            true,
        ),
        ("public.orders.legacy_id", "sampled", "leading", true),
        (
            "public.orders.legacy_code",
            "sampled",
            "partial_only",
            false,
        ),
        ("public.orders.fixed", "sampled", "expression_or_gin", false),
        ("public.orders.raw", "sampled", "leading", true),
        ("public.orders.k192", "declared", "invalid_only", false),
        ("public.orders.doc", "sampled", "none", false),
        ("public.lines.order_id", "declared", "leading", true),
        ("public.lines.product", "declared", "none", false),
        ("public.events.id", "declared", "leading", true),
        ("public.order_refs.order_ref", "declared", "leading", true),
        ("public.order_refs.customer_id", "declared", "none", false),
        ("public.customer_ids.cid", "declared", "leading", true),
        ("public.secrets.id", "declared", "leading", true),
        ("public.MixedCase.Id", "declared", "leading", true),
        ("public.MixedCase.select", "sampled", "none", false),
        (
            "We\"ird; Schema.<img src=x onerror=alert(1)>.<img src=x onerror=alert(1)>",
            "declared",
            "none",
            false,
        ),
    ];
    for (name, kind, status, indexed) in expect {
        let c = by_name
            .get(name)
            .unwrap_or_else(|| panic!("{name} not listed; got {:?}", by_name.keys()));
        assert_eq!(
            (c.kind, c.index_status, c.indexed),
            (kind, status, indexed),
            "{name}"
        );
        let colours = if indexed {
            ("#0043ce", "#85b1ff")
        } else {
            ("#f34900", "#ff9766")
        };
        assert_eq!((c.colour_light, c.colour_dark), colours, "{name}");
    }
    // Not UUIDs: a text column whose values only contain UUIDs inside
    // longer words, and names/emails.
    // and a json column whose documents hold UUIDs only as 32 hex digits
    // (documents are judged by canonical UUIDs: hashes look the same).
    for name in [
        "public.plain_notes.body",
        "public.customers.name",
        "public.orders.doc_plain",
    ] {
        assert!(!by_name.contains_key(name), "{name} listed");
    }
    assert_eq!(
        by_name["public.orders.legacy_code"].index,
        uuidforge_db::columns::IndexStatus::PartialOnly {
            index: "orders_partial".into(),
            predicate: "(legacy_code IS NOT NULL)".into()
        }
    );
    assert_eq!(
        by_name["public.order_refs.order_ref"].source.as_deref(),
        Some("public.orders.id")
    );
    assert_eq!(
        by_name["public.orders.customer_id"].unindexed_foreign_keys,
        vec!["orders_customer_id_fkey".to_string()]
    );
    assert!(by_name["public.lines.order_id"]
        .unindexed_foreign_keys
        .is_empty());
    assert!(
        !by_name.contains_key("public.events_2024.id"),
        "partitions stand behind their parent"
    );
    db.drop_now().await;
}

/// A hit reduced to what the oracle can know; keys of tables without a
/// primary key (ctid) are left out.
type Found = (
    String,
    String,
    String,
    Option<String>,
    &'static str,
    String,
    Option<String>,
);

fn reduce(h: &Hit) -> Found {
    (
        h.schema.clone(),
        h.table.clone(),
        h.column.clone(),
        h.path.clone(),
        h.role,
        h.value.clone(),
        (!h.key_unstable).then(|| h.key.to_string()),
    )
}

/// Reads every row of every table as JSON and looks at every string the
/// slow way.
async fn oracle(url: &str, needles: &[Uuid]) -> Vec<Found> {
    let wanted: std::collections::HashSet<Uuid> = needles.iter().copied().collect();
    let client = {
        let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        c
    };
    let relations = client
        .query(
            "SELECT n.nspname, c.relname, c.oid::int8,
                    (SELECT array_agg(a.attname ORDER BY array_position(co.conkey, a.attnum))
                       FROM pg_constraint co JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (co.conkey)
                      WHERE co.conrelid = c.oid AND co.contype = 'p')
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind IN ('r', 'p', 'm') AND NOT c.relispartition
                AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'",
            &[],
        )
        .await
        .unwrap();
    let mut out = Vec::new();
    for r in relations {
        let (schema, table): (String, String) = (r.get(0), r.get(1));
        let oid: i64 = r.get(2);
        let pk: Option<Vec<String>> = r.get(3);
        let types: HashMap<String, String> = client
            .query(
                "SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::int8::oid AND attnum > 0 AND NOT attisdropped",
                &[&oid],
            )
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let sql = format!(
            "SELECT row_to_json(t)::text FROM {} t",
            uuidforge_ident::qualified(&schema, &table)
        );
        for row in client.query(&sql, &[]).await.unwrap() {
            let text: String = row.get(0);
            let obj: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&text).unwrap();
            let key = pk.as_ref().map(|cols| {
                let m: serde_json::Map<String, serde_json::Value> =
                    cols.iter().map(|c| (c.clone(), obj[c].clone())).collect();
                serde_json::Value::Object(m).to_string()
            });
            for (column, value) in &obj {
                let mut hits = Vec::new();
                match value {
                    serde_json::Value::String(s) if types[column] == "bytea" => {
                        let hex = s.trim_start_matches("\\x");
                        if hex.len() == 32 || hex.len() == 48 {
                            let u = Uuid::parse_str(&hex[..32]).unwrap();
                            hits.push((None, "value", u));
                        }
                    }
                    serde_json::Value::String(s) => {
                        for t in uuidforge::scan::tokens(s.as_bytes()) {
                            let whole = t.start == 0 && t.end == s.len();
                            hits.push((
                                if whole { None } else { Some("$".to_string()) },
                                "value",
                                t.uuid,
                            ));
                        }
                    }
                    other => walk(other, "$".to_string(), &mut hits),
                }
                for (path, role, u) in hits {
                    if wanted.contains(&u) {
                        out.push((
                            schema.clone(),
                            table.clone(),
                            column.clone(),
                            path,
                            role,
                            u.to_string(),
                            key.clone(),
                        ));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

fn walk(v: &serde_json::Value, path: String, hits: &mut Vec<(Option<String>, &'static str, Uuid)>) {
    match v {
        serde_json::Value::String(s) => {
            for t in uuidforge::scan::tokens(s.as_bytes()) {
                hits.push((Some(path.clone()), "value", t.uuid));
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(x, format!("{path}[{i}]"), hits);
            }
        }
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let simple = k
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                let p = if simple {
                    format!("{path}.{k}")
                } else {
                    format!("{path}[{}]", serde_json::Value::String(k.clone()))
                };
                for t in uuidforge::scan::tokens(k.as_bytes()) {
                    hits.push((Some(p.clone()), "key", t.uuid));
                }
                walk(x, p, hits);
            }
        }
        _ => {}
    }
}

async fn find_all(
    url: &str,
    needles: &[Uuid],
    options: &FindOptions,
    jobs: usize,
) -> (Vec<Hit>, exec::FindSummary) {
    let (s, config) = session(url).await;
    let needles = Needles::parse(
        needles
            .iter()
            .map(|u| ("v".to_string(), u.to_string()))
            .collect::<Vec<_>>()
            .iter()
            .map(|(o, v)| (o.clone(), v.as_str())),
    )
    .unwrap();
    let mut hits = Vec::new();
    let summary = exec::find(
        &s,
        &config,
        &needles,
        options,
        jobs,
        |h| hits.push(h),
        |_| {},
    )
    .await
    .unwrap();
    (hits, summary)
}

/// Precision and recall of `found` against `truth`, both sorted multisets
/// (rows without a key may repeat a tuple).
fn precision_recall(found: &[Found], truth: &[Found]) -> (f64, f64) {
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < found.len() && j < truth.len() {
        match found[i].cmp(&truth[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (
        both as f64 / found.len().max(1) as f64,
        both as f64 / truth.len().max(1) as f64,
    )
}

#[tokio::test]
async fn find_equals_a_brute_force_oracle_for_few_and_many_values() {
    // 3 values search text with LIKE patterns, 40 with extracted tokens.
    for (tag, count) in [("find3", 3), ("find40", 40)] {
        let (db, planted) = fixture_db(tag, count).await;
        let truth = oracle(&db.admin_url(), &planted.needles).await;
        assert!(
            truth.len() >= 15 * count.min(3),
            "the fixture plants hits: {}",
            truth.len()
        );
        // With the extension's token matcher (the fixture installs it)
        // and with the regular expression used without it.
        let mut runs = Vec::new();
        for without_extension in [false, true] {
            let options = FindOptions {
                without_extension,
                ..Default::default()
            };
            let snapshot = {
                let config = uuidforge_db::client::config(Some(&db.admin_url())).unwrap();
                ReadOnly::open(&config)
                    .await
                    .unwrap()
                    .snapshot()
                    .await
                    .unwrap()
            };
            assert!(
                snapshot.token_matcher.is_some(),
                "the extension is installed"
            );
            let mut needles = Needles::default();
            planted.needles.iter().for_each(|u| needles.insert(*u));
            let sql: String = uuidforge_db::find::plan(&snapshot, &needles, &options)
                .scans
                .iter()
                .map(|s| s.query.sql.clone())
                .collect();
            // The extension reads heap pages, except under row-level
            // security.
            let plan = uuidforge_db::find::plan(&snapshot, &needles, &options);
            for step in &plan.scans {
                let pages = step.query.sql.contains("uuid_heap_candidates");
                let expected = !without_extension
                    && !matches!(step.table.as_str(), "guarded" | "events" | "orders");
                assert_eq!(pages, expected, "{}: {}", step.table, step.query.sql);
            }
            if count > uuidforge_db::find::LIKE_LIMIT && !without_extension {
                // Many values: indexed columns are read with the pages.
                let customers = |steps: &[uuidforge_db::find::Step]| {
                    steps
                        .iter()
                        .any(|s| s.table == "customers" && s.columns.iter().any(|c| c.name == "id"))
                };
                assert!(customers(&plan.scans) && !customers(&plan.probes));
            }
            if count > uuidforge_db::find::LIKE_LIMIT {
                assert_eq!(sql.contains("uuid_text_holds_any"), !without_extension);
                assert_eq!(sql.contains("regexp_matches"), without_extension);
            }
            let (hits, summary) = find_all(&db.admin_url(), &planted.needles, &options, 2).await;
            let mut found: Vec<Found> = hits.iter().map(reduce).collect();
            found.sort();
            let (precision, recall) = precision_recall(&found, &truth);
            if (precision, recall) != (1.0, 1.0) {
                let f: BTreeSet<&Found> = found.iter().collect();
                let t: BTreeSet<&Found> = truth.iter().collect();
                panic!(
                    "{tag} (without extension: {without_extension}): precision {precision}, recall {recall}\nmissing {:#?}\nextra {:#?}",
                    t.difference(&f).collect::<Vec<_>>(),
                    f.difference(&t).collect::<Vec<_>>()
                );
            }
            assert!(summary.skipped.is_empty(), "{:?}", summary.skipped);
            runs.push((hits, found));
        }
        let (hits, found) = runs.swap_remove(0);
        // Containers the fixture must exercise, by column.
        for column in [
            "doc",
            "doc_plain",
            "tags",
            "tags_gin",
            "urls",
            "line",
            "raw",
            "k192",
            "note",
            "fixed",
            "extra",
            "order",
            "Ключ",
            "big",
            "big_doc",
            "ext",
            "tag",
            "guarded_body",
        ] {
            assert!(
                found.iter().any(|f| f.2 == column),
                "{tag}: nothing found in {column}"
            );
        }
        // Decoys are never reported.
        let decoys: std::collections::HashSet<String> =
            planted.decoys.iter().map(|u| u.to_string()).collect();
        assert!(hits.iter().all(|h| !decoys.contains(&h.value)));
        // The indexed-only answer is a subset, from probes alone.
        let (quick, summary) = find_all(
            &db.admin_url(),
            &planted.needles,
            &FindOptions {
                indexed_only: true,
                ..Default::default()
            },
            1,
        )
        .await;
        assert_eq!(summary.scans, 0);
        assert!(summary.probes >= 6, "{}", summary.probes);
        let quick: BTreeSet<Found> = quick.iter().map(reduce).collect();
        let truth_set: BTreeSet<Found> = truth.iter().cloned().collect();
        assert!(!quick.is_empty() && quick.is_subset(&truth_set));
        for column in [
            "customers.id",
            "orders.tags_gin",
            "customer_ids.cid",
            "events.id",
            "orders.legacy_id",
        ] {
            let (t, c) = column.split_once('.').unwrap();
            assert!(
                quick.iter().any(|f| f.1 == t && f.2 == c),
                "indexed-only misses {column}"
            );
        }
        db.drop_now().await;
    }
}

#[tokio::test]
async fn a_role_without_select_sees_the_table_as_skipped() {
    let (db, planted) = fixture_db("perm", 3).await;
    let role = format!("uf_reader_{}", std::process::id());
    common::fresh_role(&db, &role).await;
    let admin = db.admin().await;
    admin
        .batch_execute(&format!(
            "GRANT USAGE ON SCHEMA public, \"We\"\"ird; Schema\" TO \"{role}\";
             GRANT SELECT ON ALL TABLES IN SCHEMA public, \"We\"\"ird; Schema\" TO \"{role}\";
             REVOKE SELECT ON secrets FROM \"{role}\";"
        ))
        .await
        .unwrap();
    let url = common::url(&role, &db.name);
    let (hits, summary) = find_all(&url, &planted.needles, &FindOptions::default(), 2).await;
    assert_eq!(summary.skipped.len(), 1, "{:?}", summary.skipped);
    assert_eq!(summary.skipped[0].table, "secrets");
    assert!(
        summary.skipped[0].reason.contains("permission"),
        "{:?}",
        summary.skipped
    );
    assert!(hits.iter().all(|h| h.table != "secrets"));
    let truth = oracle(&db.admin_url(), &planted.needles).await;
    let expected: Vec<Found> = truth.into_iter().filter(|f| f.1 != "secrets").collect();
    let mut found: Vec<Found> = hits.iter().map(reduce).collect();
    found.sort();
    assert_eq!(found, expected);
    // A view it may select but whose rows come from a table it may not
    // (security_invoker): sampling that view fails, the other samples of
    // its batch are kept (the batch runs again one statement at a time).
    admin
        .batch_execute(&format!(
            "CREATE VIEW secret_tokens WITH (security_invoker = true) AS SELECT token FROM secrets;
             GRANT SELECT ON secret_tokens TO \"{role}\";"
        ))
        .await
        .unwrap();
    let (reader, _) = session(&url).await;
    let listed = exec::uuid_columns(&reader, &[], 0.5).await.unwrap();
    let sampled: Vec<(&str, &str)> = listed
        .iter()
        .filter(|c| c.kind == "sampled")
        .map(|c| (c.table.as_str(), c.column.as_str()))
        .collect();
    assert!(sampled.contains(&("orders", "legacy_id")), "{sampled:?}");
    assert!(!listed.iter().any(|c| c.table == "secret_tokens"));
    // Its session is read-only whatever it is granted.
    let (s, _) = session(&db.admin_url()).await;
    let err = s
        .rows(
            &uuidforge_db::plan::Query::new(
                "INSERT INTO plain_notes VALUES (999, 'x') RETURNING 'x'",
            ),
            "write",
        )
        .await
        .unwrap_err();
    assert_eq!(err.sqlstate(), Some("25006"), "{err}");
    db.drop_now().await;
    let admin = common::client("uuidforge_admin", "postgres").await;
    admin
        .batch_execute(&format!("DROP ROLE \"{role}\""))
        .await
        .unwrap();
}

/// `sslmode=require`: an encrypted session where the server offers TLS
/// (Debian's 15), a refusal naming TLS where it does not (the PostgreSQL 18
/// build the tests use has none) — never a clear-text session.
#[tokio::test]
async fn tls_with_sslmode_require() {
    let plain = common::client("uuidforge_admin", "postgres").await;
    let offered: String = plain.query_one("SHOW ssl", &[]).await.unwrap().get(0);
    let url = format!(
        "postgres://uuidforge_admin:uuidforge@127.0.0.1:{}/postgres?sslmode=require",
        common::port()
    );
    let config = uuidforge_db::client::config(Some(&url)).unwrap();
    match ReadOnly::open(&config).await {
        Ok(s) => {
            assert_eq!(offered, "on");
            let rows = s
                .rows(
                    &uuidforge_db::plan::Query::new(
                        "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    ),
                    "ssl",
                )
                .await
                .unwrap();
            assert_eq!(rows, vec!["true".to_string()]);
        }
        Err(e) => {
            assert_eq!(offered, "off", "{e}");
            let text = e.to_string().to_lowercase();
            assert!(text.contains("tls") || text.contains("ssl"), "{e}");
        }
    }
}

/// A composite foreign key with an index on one of its columns is partly
/// indexed, not unindexed; one with no index at all is unindexed.
#[tokio::test]
async fn a_composite_foreign_key_with_an_index_on_its_leading_column_is_partly_indexed() {
    let db = TestDb::create("partly_indexed").await;
    db.admin()
        .await
        .batch_execute(
            "CREATE TABLE services (id uuid, ws_id uuid, PRIMARY KEY (id, ws_id));
             CREATE TABLE routes (id uuid PRIMARY KEY, service_id uuid, ws_id uuid,
                                  FOREIGN KEY (service_id, ws_id) REFERENCES services (id, ws_id));
             CREATE INDEX routes_service_id_idx ON routes (service_id);
             CREATE TABLE plugins (id uuid PRIMARY KEY, service_id uuid, ws_id uuid,
                                   FOREIGN KEY (service_id, ws_id) REFERENCES services (id, ws_id));",
        )
        .await
        .unwrap();
    let (s, _) = session(&db.admin_url()).await;
    let found = exec::uuid_columns(&s, &[], 0.5).await.unwrap();
    let column = |name: &str| {
        found
            .iter()
            .find(|c| format!("{}.{}", c.table, c.column) == name)
            .unwrap_or_else(|| panic!("{name} not listed"))
    };
    for name in ["routes.service_id", "routes.ws_id"] {
        assert!(column(name).unindexed_foreign_keys.is_empty(), "{name}");
        assert_eq!(
            column(name).partly_indexed_foreign_keys,
            vec!["routes_service_id_ws_id_fkey (routes_service_id_idx)".to_string()],
            "{name}"
        );
    }
    assert_eq!(
        column("plugins.service_id").unindexed_foreign_keys,
        vec!["plugins_service_id_ws_id_fkey".to_string()]
    );
    assert!(column("plugins.service_id")
        .partly_indexed_foreign_keys
        .is_empty());
    db.drop_now().await;
}

//! Names for UUIDs (D11) in both stores, over HTTP, across restarts.
//!
//! The PostgreSQL store runs against the real server that
//! `scripts/pg-setup.sh` starts (role and database `uuidforge`), or the URL
//! in `UUIDFORGE_TEST_PG_URL`.

mod common;

use common::{assert_error, config, start, temp_names_file};
use serde_json::{json, Value};
use uuidforge_server::names::NamesDb;

fn pg_url() -> String {
    std::env::var("UUIDFORGE_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://uuidforge:uuidforge@127.0.0.1:5432/uuidforge".into())
}

/// Registers, reads, replaces, deletes; every refusal leaves the name as it was.
async fn exercise(names_db: NamesDb) {
    let mut c = config();
    c.names_db = names_db.clone();
    let s = start(c).await;
    let id = uuidforge::v7();
    let canonical = uuidforge::fmt::to_canonical_string(&id);
    let url = |form: &str| s.url(&format!("/api/v1/names/{form}"));
    let put = |form: String, body: Value| s.client.put(url(&form)).json(&body).send();

    assert_error(
        s.client.get(url(&canonical)).send().await.unwrap(),
        404,
        "uuid",
    )
    .await;
    let r = put(canonical.clone(), json!({"name": "orders, row 42"}))
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        json!({"uuid": canonical, "name": "orders, row 42"})
    );
    let r = put(
        canonical.to_uppercase(),
        json!({"name": "orders, row 42 (merged)"}),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    // Any text form names the same UUID.
    let base32 = uuidforge::base32::encode(&id).as_str().to_string();
    let r = s.client.get(url(&base32)).send().await.unwrap();
    assert_eq!(
        r.json::<Value>().await.unwrap()["name"],
        "orders, row 42 (merged)"
    );

    for (body, field) in [
        (json!({"name": ""}), "name"),
        (json!({"name": "   "}), "name"),
        (json!({"name": "x".repeat(201)}), "name"),
        (json!({"name": "a\u{7}b"}), "name"),
        (json!({"nom": "x"}), "body"),
        (json!({"name": 5}), "body"),
    ] {
        assert_error(put(canonical.clone(), body).await.unwrap(), 400, field).await;
    }
    assert_error(
        put("not-a-uuid".into(), json!({"name": "x"}))
            .await
            .unwrap(),
        400,
        "uuid",
    )
    .await;
    let r = s.client.get(url(&canonical)).send().await.unwrap();
    assert_eq!(
        r.json::<Value>().await.unwrap()["name"],
        "orders, row 42 (merged)",
        "refusals changed nothing"
    );

    // Several at once: only those with a name, keyed by canonical text.
    let unnamed = uuidforge::fmt::to_canonical_string(&uuidforge::v7());
    let r = s
        .client
        .get(s.url(&format!(
            "/api/v1/names?uuids={},{unnamed}",
            canonical.to_uppercase()
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        json!({"names": {canonical.clone(): "orders, row 42 (merged)"}})
    );
    for (query, field) in [
        ("uuids=", "uuids"),
        ("uuids=x", "uuids[0]"),
        ("ids=1", "query"),
    ] {
        let r = s
            .client
            .get(s.url(&format!("/api/v1/names?{query}")))
            .send()
            .await
            .unwrap();
        assert_error(r, 400, field).await;
    }
    let many = vec![canonical.as_str(); 1001].join(",");
    let r = s
        .client
        .get(s.url(&format!("/api/v1/names?uuids={many}")))
        .send()
        .await
        .unwrap();
    assert_error(r, 400, "uuids").await;

    let other = uuidforge::fmt::to_canonical_string(&uuidforge::v7());
    assert_eq!(
        put(other.clone(), json!({"name": "kept across restarts"}))
            .await
            .unwrap()
            .status(),
        201
    );
    assert_eq!(
        s.client
            .delete(url(&canonical))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert_error(
        s.client.delete(url(&canonical)).send().await.unwrap(),
        404,
        "uuid",
    )
    .await;
    assert_error(
        s.client.get(url(&canonical)).send().await.unwrap(),
        404,
        "uuid",
    )
    .await;
    s.stop().await;

    // A new server on the same store still knows the name.
    let mut c = config();
    c.names_db = names_db;
    let s = start(c).await;
    let r = s
        .client
        .get(s.url(&format!("/api/v1/names/{other}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<Value>().await.unwrap()["name"],
        "kept across restarts"
    );
    assert_eq!(
        s.client
            .delete(s.url(&format!("/api/v1/names/{other}")))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn names_in_the_embedded_file() {
    let path = temp_names_file();
    exercise(NamesDb::File(path.clone())).await;
    assert!(path.exists());
    let _ = std::fs::remove_file(path);
}

#[tokio::test(flavor = "multi_thread")]
async fn names_in_postgresql() {
    let url = pg_url();
    exercise(NamesDb::Postgres(url.clone())).await;
    // The table is a real one, typed uuid.
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT data_type FROM information_schema.columns WHERE table_name = 'uuidforge_names' AND column_name = 'uuid'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "uuid");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_store_is_a_clear_start_up_error() {
    let mut c = config();
    c.names_db = NamesDb::Postgres("postgres://nobody:wrong@127.0.0.1:1/none".into());
    let err = uuidforge_server::AppState::open(c)
        .await
        .expect_err("no server on port 1");
    assert!(err.to_string().contains("names database"), "{err}");
    let mut c = config();
    c.names_db = NamesDb::File("/nonexistent-dir/names.redb".into());
    let err = uuidforge_server::AppState::open(c)
        .await
        .expect_err("no such directory");
    assert!(
        err.to_string().contains("/nonexistent-dir/names.redb"),
        "{err}"
    );
}

/// When `serve` returns, the names file is closed: it opens again at once,
/// however many keep-alive connections and writes the server had just seen.
#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_server_has_released_its_names_file() {
    let path = temp_names_file();
    for round in 0..30 {
        let mut c = config();
        c.names_db = NamesDb::File(path.clone());
        let s = start(c).await;
        let writes = (0..16).map(|i| {
            let url = s.url(&format!("/api/v1/names/{}", uuidforge::v7()));
            s.client
                .put(url)
                .json(&json!({ "name": format!("round {round} writer {i}") }))
                .send()
        });
        for r in futures_util::future::join_all(writes).await {
            assert_eq!(r.unwrap().status().as_u16(), 201);
        }
        s.stop().await;
        let mut c = config();
        c.names_db = NamesDb::File(path.clone());
        let reopened = uuidforge_server::AppState::open(c).await;
        assert!(reopened.is_ok(), "round {round}: {reopened:?}");
    }
    let _ = std::fs::remove_file(path);
}

//! Every endpoint and every error path over real HTTP on loopback.

mod common;

use common::{assert_error, config, start};
use serde_json::{json, Value};
use uuid::Uuid;
use uuidforge::fmt::Format;
use uuidforge_server::Config;

async fn get_json(s: &common::Server, path: &str) -> Value {
    let r = s.client.get(s.url(path)).send().await.unwrap();
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.unwrap()
}

fn uuids_of(body: &Value) -> Vec<Uuid> {
    body["uuids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| uuidforge::parser::parse(v.as_str().unwrap()).unwrap())
        .collect()
}

fn strictly_increasing(ids: &[Uuid]) -> bool {
    ids.windows(2).all(|w| w[0] < w[1])
}

#[tokio::test(flavor = "multi_thread")]
async fn batches_in_every_encoding_and_format() {
    let s = start(config()).await;
    let one = get_json(&s, "/api/v1/uuids").await;
    let ids = uuids_of(&one);
    assert_eq!(ids.len(), 1);
    assert_eq!(ids[0].get_version_num(), 7);

    let big = get_json(&s, "/api/v1/uuids?count=100000").await;
    let ids = uuids_of(&big);
    assert_eq!(ids.len(), 100_000);
    assert!(strictly_increasing(&ids));

    let r = s
        .client
        .get(s.url("/api/v1/uuids?count=9000"))
        .header("Accept", "text/plain")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
    let text = r.text().await.unwrap();
    let lines: Vec<Uuid> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(lines.len(), 9000);
    assert!(text.ends_with('\n'));
    assert!(strictly_increasing(&lines));

    let r = s
        .client
        .get(s.url("/api/v1/uuids?count=5000&format=base32"))
        .header("Accept", "application/x-ndjson")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let text = r.text().await.unwrap();
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 5000);
    for row in &rows {
        let t = row["uuid"].as_str().unwrap();
        assert_eq!(
            uuidforge::parser::parse_detect(t).unwrap().1,
            Format::Base32
        );
    }

    for format in Format::ALL.iter().filter(|f| **f != Format::Binary) {
        let body = get_json(
            &s,
            &format!("/api/v1/uuids?count=3&format={}", format.name()),
        )
        .await;
        for v in body["uuids"].as_array().unwrap() {
            let (_, found) = uuidforge::parser::parse_detect(v.as_str().unwrap()).unwrap();
            assert_eq!(found, *format);
        }
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn versions_profiles_shift_and_backfill_show_in_the_values() {
    let s = start(config()).await;
    for v in [1, 4, 6, 7, 8] {
        let ids = uuids_of(&get_json(&s, &format!("/api/v1/uuids?version={v}&count=20")).await);
        assert!(ids.iter().all(|u| u.get_version_num() == v), "v{v}");
    }
    let ids = uuids_of(&get_json(&s, "/api/v1/uuids?count=50&profile=pg18").await);
    assert!(strictly_increasing(&ids));
    let now = uuidforge::batch::now_unix_ms() as u64;
    let shifted = uuids_of(&get_json(&s, "/api/v1/uuids?shift=-1d&count=10").await);
    let age = now - uuidforge::v7::unix_ms(&shifted[0]);
    assert!((86_390_000..86_410_000).contains(&age), "{age}");
    assert!(strictly_increasing(&shifted));
    let old = uuids_of(&get_json(&s, "/api/v1/uuids?at=2024-05-01T12:00:00Z&count=2000").await);
    assert_eq!(uuidforge::v7::unix_ms(&old[0]), 1_714_564_800_000);
    assert!(strictly_increasing(&old));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn values_increase_across_concurrent_requests() {
    let s = start(config()).await;
    let profiles = ["default", "counter42", "pg18", "random"];
    let mut tasks = Vec::new();
    for i in 0..16 {
        let client = s.client.clone();
        let url = s.url(&format!(
            "/api/v1/uuids?count=4000&profile={}",
            profiles[i % profiles.len()]
        ));
        tasks.push(tokio::spawn(async move {
            let body: Value = client.get(url).send().await.unwrap().json().await.unwrap();
            uuids_of(&body)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        let ids = t.await.unwrap();
        assert!(strictly_increasing(&ids));
        all.extend(ids);
    }
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "no value handed out twice");
    // A request made after another one ended gets larger values.
    let before = uuids_of(&get_json(&s, "/api/v1/uuids?count=10&profile=random").await);
    let after = uuids_of(&get_json(&s, "/api/v1/uuids?count=10&profile=counter42").await);
    assert!(before.last() < after.first());
    assert!(*all.last().unwrap() < before[0]);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_bad_batch_parameter_is_a_400_naming_it() {
    let mut c = config();
    c.max_count = 500;
    let s = start(c).await;
    let cases = [
        ("count=0", "count"),
        ("count=501", "count"),
        ("count=many", "count"),
        ("count=-1", "count"),
        ("version=2", "version"),
        ("version=3", "version"),
        ("format=binary", "format"),
        ("format=hex", "format"),
        ("profile=fast", "profile"),
        ("shift=1y", "shift"),
        ("shift=-100000w", "shift"),
        ("at=tomorrow", "at"),
        ("at=-5", "at"),
        ("version=4&shift=1h", "shift"),
        ("version=6&profile=pg18", "profile"),
        ("cuont=5", "query"),
        ("count=1&count=2", "count"),
    ];
    for (query, field) in cases {
        let r = s
            .client
            .get(s.url(&format!("/api/v1/uuids?{query}")))
            .send()
            .await
            .unwrap();
        let body = assert_error(r, 400, field).await;
        assert!(
            !body["error"]["value"].as_str().unwrap().is_empty(),
            "{query}: {body}"
        );
    }
    let r = s
        .client
        .get(s.url("/api/v1/uuids"))
        .header("Accept", "image/png")
        .send()
        .await
        .unwrap();
    assert_error(r, 406, "Accept").await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn inspect_batches_and_their_errors() {
    let mut c = config();
    c.max_batch = 5;
    c.max_body_bytes = 4096;
    let s = start(c).await;
    let post = |body: Value| s.client.post(s.url("/api/v1/inspect")).json(&body).send();
    let r = post(json!({"values": [
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "C232AB00-9414-11EC-B3C8-9F6BDECED846",
        "01FWHE4YDGFK1SHH6W1G60EECF"
    ]}))
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["version"], 7);
    assert_eq!(results[1]["version"], 1);
    assert_eq!(
        results[1]["timestamp"]["iso8601"],
        "2022-02-22T19:22:22.0000000Z"
    );
    assert_eq!(results[2]["form"], "base32");
    assert_eq!(results[2]["input"], "01FWHE4YDGFK1SHH6W1G60EECF");

    let r =
        post(json!({"values": ["017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], "layout": "counter42"}))
            .await
            .unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["results"][0]["layout_reading"]["layout"], "counter42");

    let bad = post(json!({"values": ["017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "017f22e2-79b0-7cc3-98c4-dc0c0c07398g"]}))
        .await
        .unwrap();
    let body = assert_error(bad, 400, "values[1]").await;
    assert!(body["error"]["expected"]
        .as_str()
        .unwrap()
        .contains("position 35"));
    assert_error(post(json!({"values": []})).await.unwrap(), 400, "values").await;
    assert_error(
        post(json!({"values": vec!["017f22e2-79b0-7cc3-98c4-dc0c0c07398f"; 6]}))
            .await
            .unwrap(),
        400,
        "values",
    )
    .await;
    assert_error(
        post(json!({"values": ["x"], "layout": "nope"}))
            .await
            .unwrap(),
        400,
        "layout",
    )
    .await;
    assert_error(post(json!({"valuez": ["x"]})).await.unwrap(), 400, "body").await;
    assert_error(post(json!([1, 2])).await.unwrap(), 400, "body").await;
    let not_json = s
        .client
        .post(s.url("/api/v1/inspect"))
        .header("content-type", "application/json")
        .body("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
        .send()
        .await
        .unwrap();
    assert_error(not_json, 400, "body").await;
    // Every route taking a body reads it the same way: JSON, said so.
    for route in ["/api/v1/inspect", "/api/v1/convert"] {
        let untyped = s
            .client
            .post(s.url(route))
            .body(r#"{"values":["017f22e2-79b0-7cc3-98c4-dc0c0c07398f"],"to":"hex"}"#)
            .send()
            .await
            .unwrap();
        assert_error(untyped, 415, "Content-Type").await;
    }
    let huge = s
        .client
        .post(s.url("/api/v1/inspect"))
        .body(format!("{{\"values\":[\"{}\"]}}", "0".repeat(5000)))
        .send()
        .await
        .unwrap();
    assert_error(huge, 413, "body").await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn convert_batches_and_their_errors() {
    let s = start(config()).await;
    let post = |body: Value| s.client.post(s.url("/api/v1/convert")).json(&body).send();
    let body: Value = post(json!({"values": ["017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "{c232ab00-9414-11ec-b3c8-9f6bdeced846}"], "to": "base32"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["values"][0], "01FWHE4YDGFK1SHH6W1G60EECF");
    let body: Value =
        post(json!({"values": ["01FWHE4YDGFK1SHH6W1G60EECF"], "to": "urn", "upper": true}))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    assert_eq!(
        body["values"][0],
        "urn:uuid:017F22E2-79B0-7CC3-98C4-DC0C0C07398F"
    );
    let key = uuidforge::uuid192::Uuid192::new(
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap(),
        uuidforge::uuid192::SegmentFields::Raw { payload: 7 },
    )
    .unwrap()
    .to_string();
    let r = post(json!({"values": [key], "to": "canonical"}))
        .await
        .unwrap();
    let e = assert_error(r, 400, "values[0]").await;
    assert!(e["error"]["expected"]
        .as_str()
        .unwrap()
        .contains("uuid_part"));
    let body: Value = post(json!({"values": [key], "to": "canonical", "uuid_part": true}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["values"][0], "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    let c = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
    for (body, field) in [
        (json!({"values": [c], "to": "binary"}), "to"),
        (json!({"values": [c], "to": "hex"}), "to"),
        (json!({"values": ["nope"], "to": "simple"}), "values[0]"),
        (json!({"values": [c]}), "body"),
    ] {
        assert_error(post(body).await.unwrap(), 400, field).await;
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn profiles_identicons_health_and_unknown_routes() {
    let s = start(config()).await;
    let body = get_json(&s, "/api/v1/profiles").await;
    let names: Vec<&str> = body["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, uuidforge::generator::PROFILES);
    assert_eq!(body["profiles"][2]["config"]["fraction_bits"], 12);

    let id: Uuid = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
    for form in [
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "01FWHE4YDGFK1SHH6W1G60EECF",
    ] {
        let r = s
            .client
            .get(s.url(&format!("/api/v1/identicon/{form}.svg")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-type"], "image/svg+xml");
        assert_eq!(
            r.text().await.unwrap(),
            uuidforge_server::identicon::svg(&id)
        );
    }
    let r = s
        .client
        .get(s.url("/api/v1/identicon/nope.svg"))
        .send()
        .await
        .unwrap();
    assert_error(r, 400, "uuid").await;
    let r = s
        .client
        .get(s.url("/api/v1/identicon/017f22e2-79b0-7cc3-98c4-dc0c0c07398f.png"))
        .send()
        .await
        .unwrap();
    assert_error(r, 400, "file").await;

    assert_eq!(get_json(&s, "/healthz").await["status"], "ok");
    let r = s.client.get(s.url("/api/v2/uuids")).send().await.unwrap();
    assert_error(r, 404, "path").await;
    let r = s
        .client
        .delete(s.url("/api/v1/uuids"))
        .send()
        .await
        .unwrap();
    assert_error(r, 405, "method").await;
    let r = s.client.get(s.url("/static/nope.js")).send().await.unwrap();
    assert_error(r, 404, "file").await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_and_its_assets_are_served_from_the_binary() {
    let s = start(config()).await;
    let r = s.client.get(s.url("/")).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8");
    let page = r.text().await.unwrap();
    assert!(page.contains("/static/uuid-chips.js"));
    assert!(!page.contains("https://"), "no CDN");
    for (file, kind) in [
        ("uuid-chips.js", "text/javascript"),
        ("app.js", "text/javascript"),
        ("style.css", "text/css"),
        ("demo.html", "text/html"),
    ] {
        let r = s
            .client
            .get(s.url(&format!("/static/{file}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with(kind));
        assert!(
            !r.text().await.unwrap().contains("https://"),
            "{file} fetches nothing from elsewhere"
        );
    }
    s.stop().await;
}

/// Every operation of the OpenAPI document is routed (no 404 from the
/// fallback, no 405), and methods it does not list are refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_matches_the_routes() {
    // With a database, so that its routes exist too.
    let s = start(Config {
        database: Some(uuidforge_server::database::DatabaseAccess {
            dsn: common::LOCAL_DATABASE.into(),
        }),
        // And a hide key, so that /api/v1/hide and /reveal answer.
        hide_key: Some(uuidforge_server::HideKey(std::sync::Arc::new(
            uuidforge::generator::TimestampHider::with_key(&[1u8; 32]).unwrap(),
        ))),
        ..config()
    })
    .await;
    let doc = get_json(&s, "/api/openapi.json").await;
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 10);
    for (path, ops) in paths {
        let concrete = path
            .replace("{file}", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f.svg")
            .replace("{uuid}", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
            + if path == "/api/v1/db/find" {
                "?value=017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
            } else {
                ""
            };
        for method in ["get", "put", "post", "delete", "patch"] {
            let m = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = s
                .client
                .request(m, s.url(&concrete))
                .json(&json!({}))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap_or(Value::Null);
            let routed = status != 405 && body["error"]["field"] != "path";
            assert_eq!(
                routed,
                ops.get(method).is_some(),
                "{method} {path}: {status} {body}"
            );
            if let Some(op) = ops.get(method) {
                let documented = op["responses"].as_object().unwrap();
                assert!(
                    documented.contains_key(&status.to_string()),
                    "{method} {path}: {status} not documented"
                );
            }
        }
    }
    s.stop().await;
}

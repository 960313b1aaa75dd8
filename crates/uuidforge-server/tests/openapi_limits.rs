//! Every limit the OpenAPI document declares on a request is the server's:
//! a value at the limit is taken, one past it is refused with 400 naming
//! the field. The limits are read from the document, so a limit changed
//! there and not in the server (or the other way round) fails here. (The
//! Database view's limits are checked the same way in `database.rs`,
//! against a server.)

mod common;

use common::{assert_error, config, start};
use serde_json::{json, Value};

fn document() -> Value {
    serde_json::from_str(include_str!("../api/openapi.json")).unwrap()
}

/// The schema of query parameter `name` of `GET path`.
fn parameter<'a>(d: &'a Value, path: &str, name: &str) -> &'a Value {
    d["paths"][path]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .map(|p| &p["schema"])
        .unwrap_or_else(|| panic!("{path} has no parameter {name}"))
}

/// The schema of body property `name` of `method path`.
fn property<'a>(d: &'a Value, path: &str, method: &str, name: &str) -> &'a Value {
    &d["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["properties"]
        [name]
}

fn number(schema: &Value, key: &str) -> usize {
    schema[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {schema}")) as usize
}

#[tokio::test(flavor = "multi_thread")]
async fn every_declared_limit_holds_at_its_edge() {
    let d = document();
    let s = start(config()).await;
    let get = |query: String| {
        let url = s.url(&format!("/api/v1/uuids?{query}"));
        let client = s.client.clone();
        async move { client.get(url).send().await.unwrap() }
    };
    let fine = |r: reqwest::Response, what: &str| {
        assert_eq!(r.status(), 200, "{what} at its limit");
    };
    // count: minimum and maximum.
    let count = parameter(&d, "/api/v1/uuids", "count");
    let (min, max) = (number(count, "minimum"), number(count, "maximum"));
    fine(get(format!("count={min}")).await, "count");
    fine(get(format!("count={max}&format=simple")).await, "count");
    assert_error(get(format!("count={}", min - 1)).await, 400, "count").await;
    assert_error(get(format!("count={}", max + 1)).await, 400, "count").await;
    // shift and at: maxLength, with values that read at that length.
    let shift_max = number(parameter(&d, "/api/v1/uuids", "shift"), "maxLength");
    // `+`, leading zeros, then whole `1ms` parts: a valid duration of any
    // length.
    let duration = |len: usize| {
        let parts = (len - 1) / 3;
        format!(
            "%2B{}{}",
            "0".repeat(len - 1 - 3 * parts),
            "1ms".repeat(parts)
        )
    };
    fine(get(format!("shift={}", duration(shift_max))).await, "shift");
    assert_error(
        get(format!("shift={}", duration(shift_max + 1))).await,
        400,
        "shift",
    )
    .await;
    let at_max = number(parameter(&d, "/api/v1/uuids", "at"), "maxLength");
    let fraction = at_max - "2024-05-01T12:00:00.+02:00".len();
    let at = format!("2024-05-01T12:00:00.{}%2B02:00", "1".repeat(fraction));
    fine(get(format!("at={at}")).await, "at");
    let at_over = format!("2024-05-01T12:00:00.{}%2B02:00", "1".repeat(fraction + 1));
    assert_error(get(format!("at={at_over}")).await, 400, "at").await;
    // key: maxLength in characters (two bytes each here).
    let key_max = number(parameter(&d, "/api/v1/uuids", "key"), "maxLength");
    let key = "é".repeat(key_max);
    let encoded: String = form_urlencoded::byte_serialize(key.as_bytes()).collect();
    fine(get(format!("key={encoded}&at=1714564800000")).await, "key");
    let over: String = form_urlencoded::byte_serialize(format!("{key}é").as_bytes()).collect();
    assert_error(
        get(format!("key={over}&at=1714564800000")).await,
        400,
        "key",
    )
    .await;
    // values of every batch route: minItems and maxItems.
    for (path, extra) in [
        ("/api/v1/inspect", json!({})),
        ("/api/v1/convert", json!({"to": "simple"})),
    ] {
        let values = property(&d, path, "post", "values");
        let (min, max) = (number(values, "minItems"), number(values, "maxItems"));
        let post = |n: usize| {
            let mut body = extra.clone();
            body["values"] = json!(vec!["017f22e2-79b0-7cc3-98c4-dc0c0c07398f"; n]);
            let request = s.client.post(s.url(path)).json(&body);
            async move { request.send().await.unwrap() }
        };
        assert_eq!(post(min).await.status(), 200, "{path} at minItems");
        assert_eq!(post(max).await.status(), 200, "{path} at maxItems");
        assert_error(post(min - 1).await, 400, "values").await;
        assert_error(post(max + 1).await, 400, "values").await;
    }
    // A name: minLength and maxLength in characters.
    let name = property(&d, "/api/v1/names/{uuid}", "put", "name");
    let (min, max) = (number(name, "minLength"), number(name, "maxLength"));
    let put = |text: String| {
        let request = s
            .client
            .put(s.url(&format!("/api/v1/names/{}", uuidforge::v7())))
            .json(&json!({ "name": text }));
        async move { request.send().await.unwrap() }
    };
    assert_eq!(put("x".repeat(min)).await.status(), 201);
    assert_eq!(put("é".repeat(max)).await.status(), 201);
    assert_error(put("x".repeat(min - 1)).await, 400, "name").await;
    assert_error(put("é".repeat(max + 1)).await, 400, "name").await;
    s.stop().await;
}

/// Every schema node of the document, depth first.
fn schemas<'a>(v: &'a Value, out: &mut Vec<(String, &'a Value)>, at: &str) {
    match v {
        Value::Object(m) => {
            out.push((at.to_string(), v));
            for (k, child) in m {
                schemas(child, out, &format!("{at}/{k}"));
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                schemas(child, out, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

/// A generated client drops an answer whose array has no `items`
/// (openapi-python-client did, for two of them).
#[test]
fn every_array_says_what_it_holds() {
    let d = document();
    let mut nodes = Vec::new();
    schemas(&d, &mut nodes, "#");
    let arrays: Vec<_> = nodes
        .iter()
        .filter(|(_, n)| {
            n["type"] == "array"
                || n["type"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t == "array"))
        })
        .collect();
    assert!(arrays.len() > 10, "only {} arrays found", arrays.len());
    for (at, node) in arrays {
        assert!(node.get("items").is_some(), "{at}: an array without items");
    }
}

/// Every status a route declares besides success is described in the
/// Error response, which all of them share.
#[test]
fn every_declared_refusal_is_described() {
    let d = document();
    let description = d["components"]["responses"]["Error"]["description"]
        .as_str()
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for (path, ops) in d["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for status in op["responses"].as_object().unwrap().keys() {
                if status.starts_with('4') || status.starts_with('5') {
                    seen.insert(status.clone());
                    assert!(
                        description.contains(&format!("{status} ")),
                        "{method} {path} declares {status}, which the Error response does not describe"
                    );
                }
            }
        }
    }
    for status in ["403", "405", "413", "415", "503"] {
        assert!(seen.contains(status), "no route declares {status}");
    }
}

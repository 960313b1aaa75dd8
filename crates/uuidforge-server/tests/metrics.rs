//! `GET /metrics` (E4) read back with a Prometheus text-format parser: the
//! counts follow the requests made, by version, profile, route and status.

mod common;

use common::{config, start};
use prometheus_parse::{Sample, Scrape, Value};
use std::collections::HashMap;
use uuidforge_server::{Config, HideKey};

async fn scrape(s: &common::Server) -> Scrape {
    let r = s.client.get(s.url("/metrics")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let content_type = r.headers()["content-type"].to_str().unwrap().to_string();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = r.text().await.unwrap();
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap()
}

fn find<'a>(scrape: &'a Scrape, name: &str, labels: &[(&str, &str)]) -> Option<&'a Sample> {
    scrape
        .samples
        .iter()
        .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
}

fn number(sample: Option<&Sample>) -> f64 {
    match sample.map(|s| &s.value) {
        Some(Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v)) => *v,
        other => panic!("no number: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_values_requests_and_generator_events() {
    let s = start(Config {
        hide_key: Some(HideKey(std::sync::Arc::new(
            uuidforge::generator::TimestampHider::with_key(&[3u8; 32]).unwrap(),
        ))),
        ..config()
    })
    .await;
    let before = scrape(&s).await;
    assert!(find(&before, "uuidforge_uuids_generated_total", &[]).is_none());
    for query in [
        "/api/v1/uuids?count=1000",
        "/api/v1/uuids?count=24&profile=pg18",
        "/api/v1/uuids?count=7&version=4",
        "/api/v1/uuids?at=2024-05-01T12:00:00Z&key=orders:1",
        "/api/v1/uuids?count=0",
    ] {
        s.client.get(s.url(query)).send().await.unwrap();
    }
    let r = s
        .client
        .post(s.url("/api/v1/hide"))
        .json(&serde_json::json!({"values": ["01a20c5c-4e80-7079-9de4-d6ca486f4fc8"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let after = scrape(&s).await;
    let generated = |version: &str, profile: &str| {
        number(find(
            &after,
            "uuidforge_uuids_generated_total",
            &[("version", version), ("profile", profile)],
        ))
    };
    assert_eq!(generated("7", "default"), 1000.0);
    assert_eq!(generated("7", "pg18"), 24.0);
    assert_eq!(generated("4", "none"), 7.0);
    assert_eq!(generated("7", "keyed"), 1.0);
    let requests = |route: &str, method: &str, status: &str| {
        number(find(
            &after,
            "uuidforge_http_requests_total",
            &[("route", route), ("method", method), ("status", status)],
        ))
    };
    assert_eq!(requests("/api/v1/uuids", "GET", "200"), 4.0);
    assert_eq!(requests("/api/v1/uuids", "GET", "400"), 1.0);
    assert_eq!(requests("/api/v1/hide", "POST", "200"), 1.0);
    assert_eq!(requests("/metrics", "GET", "200"), 1.0, "the first scrape");
    // Latencies: a histogram per route whose count matches the requests.
    let histogram = after
        .samples
        .iter()
        .find(|x| {
            x.metric == "uuidforge_http_request_duration_seconds"
                && x.labels.get("route") == Some("/api/v1/uuids")
        })
        .expect("a latency histogram for /api/v1/uuids");
    match &histogram.value {
        Value::Histogram(buckets) => {
            let total = buckets.last().unwrap().count;
            assert_eq!(total, 5.0, "{buckets:?}");
        }
        other => panic!("not a histogram: {other:?}"),
    }
    // The generator's figures are there, typed as Prometheus expects.
    let mut types: HashMap<&str, &str> = HashMap::new();
    for sample in &after.samples {
        let kind = match sample.value {
            Value::Counter(_) => "counter",
            Value::Gauge(_) => "gauge",
            _ => continue,
        };
        types.insert(sample.metric.as_str(), kind);
    }
    for name in [
        "uuidforge_generator_counter_overflows_total",
        "uuidforge_generator_clock_rollbacks_total",
        "uuidforge_generator_clock_resets_total",
        "uuidforge_generator_clock_failures_total",
        "uuidforge_generator_reseeds_total",
    ] {
        assert_eq!(types.get(name), Some(&"counter"), "{name}");
    }
    for name in [
        "uuidforge_generator_ahead_milliseconds",
        "uuidforge_generator_max_ahead_milliseconds",
    ] {
        assert_eq!(types.get(name), Some(&"gauge"), "{name}");
    }
    // Route labels are patterns, never raw paths with a UUID in them.
    s.client
        .get(s.url("/api/v1/identicon/01a20c5c-4e80-7079-9de4-d6ca486f4fc8.svg"))
        .send()
        .await
        .unwrap();
    let last = scrape(&s).await;
    assert!(find(
        &last,
        "uuidforge_http_requests_total",
        &[("route", "/api/v1/identicon/:file")]
    )
    .is_some());
    assert!(last
        .samples
        .iter()
        .all(|x| !x.labels.get("route").unwrap_or("").contains("01a20c5c")));
    s.stop().await;
}

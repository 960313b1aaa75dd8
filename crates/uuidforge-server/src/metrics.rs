//! `GET /metrics` (E4): the Prometheus text format, made by the
//! `prometheus` crate — UUIDs generated per version and profile, the
//! process-wide generator's events (counter overflows, clock rollbacks
//! absorbed, resets, clock failures, reseeds) and how far its logical clock
//! runs ahead of the wall clock, and requests and latencies per route.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};
use std::time::Instant;

/// The server's metrics; each server has its own registry, so several
/// servers in one process (tests) do not mix their figures.
pub struct Metrics {
    registry: Registry,
    generated: IntCounterVec,
    requests: IntCounterVec,
    latency: HistogramVec,
    overflows: IntCounter,
    rollbacks: IntCounter,
    resets: IntCounter,
    clock_failures: IntCounter,
    reseeds: IntCounter,
    ahead_ms: IntGauge,
    max_ahead_ms: IntGauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

fn counter(registry: &Registry, name: &str, help: &str) -> IntCounter {
    let c = IntCounter::new(name, help).expect("a valid metric name");
    registry
        .register(Box::new(c.clone()))
        .expect("registered once");
    c
}

fn gauge(registry: &Registry, name: &str, help: &str) -> IntGauge {
    let g = IntGauge::new(name, help).expect("a valid metric name");
    registry
        .register(Box::new(g.clone()))
        .expect("registered once");
    g
}

/// Moves a counter up to a cumulative figure read elsewhere (they only grow).
fn catch_up(c: &IntCounter, value: u64) {
    let current = c.get();
    if value > current {
        c.inc_by(value - current);
    }
}

impl Metrics {
    /// A registry with every metric at zero.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let generated = IntCounterVec::new(
            Opts::new(
                "uuidforge_uuids_generated_total",
                "UUIDs generated, by version and v7 profile (keyed: at+key values)",
            ),
            &["version", "profile"],
        )
        .expect("valid");
        let requests = IntCounterVec::new(
            Opts::new(
                "uuidforge_http_requests_total",
                "HTTP requests, by route, method and status",
            ),
            &["route", "method", "status"],
        )
        .expect("valid");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "uuidforge_http_request_duration_seconds",
                "Time to the response head, by route",
            )
            .buckets(vec![
                0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                1.0, 2.5, 5.0,
            ]),
            &["route"],
        )
        .expect("valid");
        for c in [&generated, &requests] {
            registry
                .register(Box::new(c.clone()))
                .expect("registered once");
        }
        registry
            .register(Box::new(latency.clone()))
            .expect("registered once");
        Metrics {
            overflows: counter(
                &registry,
                "uuidforge_generator_counter_overflows_total",
                "Counter overflows of the process-wide v7 generator (each bumped the timestamp)",
            ),
            rollbacks: counter(
                &registry,
                "uuidforge_generator_clock_rollbacks_total",
                "Clock readings earlier than the previous one, absorbed by the generator",
            ),
            resets: counter(
                &registry,
                "uuidforge_generator_clock_resets_total",
                "Restarts from a clock that went back further than absorbed",
            ),
            clock_failures: counter(
                &registry,
                "uuidforge_generator_clock_failures_total",
                "Clock readings that failed",
            ),
            reseeds: counter(
                &registry,
                "uuidforge_generator_reseeds_total",
                "Reseeds of the process's CSPRNG sources (every 16 MiB and after fork)",
            ),
            ahead_ms: gauge(
                &registry,
                "uuidforge_generator_ahead_milliseconds",
                "How far the generator's last timestamp runs ahead of the wall clock",
            ),
            max_ahead_ms: gauge(
                &registry,
                "uuidforge_generator_max_ahead_milliseconds",
                "The most the generator's timestamp ever ran ahead of the wall clock",
            ),
            registry,
            generated,
            requests,
            latency,
        }
    }

    /// The counter of generated UUIDs for a version and profile.
    pub fn generated(&self, version: u8, profile: &str) -> IntCounter {
        self.generated
            .with_label_values(&[&version.to_string(), profile])
    }

    /// The text exposition, generator figures read now.
    pub fn render(&self) -> String {
        let t = uuidforge::generator::global().cell_telemetry();
        catch_up(&self.overflows, t.overflows);
        catch_up(&self.rollbacks, t.rollbacks);
        catch_up(&self.resets, t.resets);
        catch_up(&self.clock_failures, t.clock_failures);
        catch_up(&self.reseeds, t.reseeds);
        self.ahead_ms
            .set(i64::try_from(t.ahead_ms).unwrap_or(i64::MAX));
        self.max_ahead_ms
            .set(i64::try_from(t.max_ahead_ms).unwrap_or(i64::MAX));
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("the text encoder writes to a Vec");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// `GET /metrics`.
pub async fn metrics(State(app): State<crate::AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        app.metrics.render(),
    )
        .into_response()
}

/// Counts each request and times it, labelled by its route pattern (never
/// the raw path: a UUID per path would make a series per UUID). Parameters
/// are written `:file`, not `{file}`: valid either way, but braces inside
/// label values trip up line-oriented scrapers and parsers.
pub async fn observe(State(app): State<crate::AppState>, request: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |m| m.as_str())
        .replace('{', ":")
        .replace('}', "");
    let method = request.method().to_string();
    let response = next.run(request).await;
    app.metrics
        .requests
        .with_label_values(&[&route, &method, response.status().as_str()])
        .inc();
    app.metrics
        .latency
        .with_label_values(&[&route])
        .observe(start.elapsed().as_secs_f64());
    response
}

//! Slow and many clients on loopback cannot hold the server: heads that
//! never finish are cut at the header timeout, bodies that never finish at
//! the body deadline (408, JSON), uploads in progress take no place among
//! the requests handled at once (health, metrics and a short request
//! answer within a second beside a thousand of them), one connection past
//! the cap is answered 503 in JSON, and requests hyper cannot parse are
//! refused with the JSON error body too. Counts and times are bounded: the
//! whole file runs in about 15 seconds.

mod common;

use common::{config, start};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use uuidforge_server::limits::{Limits, MAX_HEAD_BUFFER, MAX_HEAD_BYTES, MAX_URI_BYTES};

/// Room for a thousand client sockets and the server's beside them.
fn raise_file_limit() {
    // SAFETY: plain getrlimit/setrlimit on this process.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max.min(65_536);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

fn addr(base: &str) -> String {
    base.trim_start_matches("http://").to_string()
}

/// Everything the server sends until it closes (or `within` passes).
async fn answer(stream: &mut TcpStream, within: Duration) -> String {
    let mut out = Vec::new();
    let _ = tokio::time::timeout(within, stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// The JSON error body of a raw answer.
fn error_body(raw: &str) -> serde_json::Value {
    let body = raw.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {raw}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_heads_are_cut_at_the_header_timeout() {
    let mut c = config();
    c.limits.header_timeout = Duration::from_secs(2);
    let s = start(c).await;
    let started = Instant::now();
    let mut slow = Vec::new();
    for _ in 0..200 {
        let mut stream = TcpStream::connect(addr(&s.base)).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: a")
            .await
            .unwrap();
        slow.push(stream);
    }
    // One more byte a second: a client that never finishes its head.
    for _ in 0..2 {
        tokio::time::sleep(Duration::from_millis(900)).await;
        for stream in &mut slow {
            let _ = stream.write_all(b"a").await;
        }
    }
    for stream in &mut slow {
        let rest = answer(stream, Duration::from_secs(3)).await;
        assert!(!rest.contains("200 OK"), "a slow head was served: {rest}");
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(6),
        "slow heads held the server {took:?}"
    );
    // The server answers as before.
    let r = s.anonymous.get(s.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_slow_uploads_starve_nothing_and_end_at_the_body_deadline() {
    raise_file_limit();
    let mut c = config();
    // Few requests handled at once: slow uploads must not take them.
    c.max_concurrent = 4;
    c.limits.body_timeout = Duration::from_secs(4);
    let s = start(c).await;
    let mut uploads = Vec::new();
    for _ in 0..1000 {
        let mut stream = TcpStream::connect(addr(&s.base)).await.unwrap();
        stream
            .write_all(b"POST /api/v1/inspect HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"values\"")
            .await
            .unwrap();
        uploads.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Health, metrics and a short request answer within a second.
    for path in ["/healthz", "/metrics"] {
        let asked = Instant::now();
        let r = s.anonymous.get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "{path}: {:?}",
            asked.elapsed()
        );
    }
    let asked = Instant::now();
    let r = s
        .anonymous
        .post(s.url("/api/v1/inspect"))
        .json(&serde_json::json!({"values": ["017f22e2-79b0-7cc3-98c4-dc0c0c07398f"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "inspect: {:?}",
        asked.elapsed()
    );
    // At the deadline every upload is answered 408 with the JSON body.
    let mut timed_out = 0;
    for stream in &mut uploads {
        let raw = answer(stream, Duration::from_secs(8)).await;
        if raw.starts_with("HTTP/1.1 408") {
            assert_eq!(error_body(&raw)["error"]["field"], "body");
            timed_out += 1;
        }
    }
    assert_eq!(timed_out, 1000);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_past_the_cap_is_refused_in_json() {
    let mut c = config();
    c.limits = Limits {
        max_connections: 50,
        ..Limits::default()
    };
    let s = start(c).await;
    let mut held = Vec::new();
    for _ in 0..50 {
        held.push(TcpStream::connect(addr(&s.base)).await.unwrap());
    }
    // The accept loop counts them as it accepts: give it a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut over = TcpStream::connect(addr(&s.base)).await.unwrap();
    let raw = answer(&mut over, Duration::from_secs(2)).await;
    assert!(raw.starts_with("HTTP/1.1 503"), "{raw}");
    assert!(raw.contains("retry-after: 1"), "{raw}");
    assert_eq!(error_body(&raw)["error"]["field"], "connection");
    drop(held);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = s.anonymous.get(s.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_that_do_not_parse_are_refused_in_json() {
    let s = start(config()).await;
    let cases: [(&[u8], &str); 6] = [
        (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Bad\x01: y\r\n\r\n", "400"),
        (b"POST /api/v1/inspect HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n", "400"),
        (b"POST /api/v1/inspect HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "400"),
        (b"GET /\r\n\r\n", "400"),
        (b"GET /", "414"),
        (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n", "431"),
    ];
    let field = |status: &str| match status {
        "414" => "path",
        "431" => "headers",
        _ => "request",
    };
    for (request, status) in cases {
        let mut bytes = request.to_vec();
        match status {
            "414" => {
                bytes.extend(std::iter::repeat_n(b'a', MAX_URI_BYTES));
                bytes.extend_from_slice(b" HTTP/1.1\r\nHost: localhost\r\n\r\n");
            }
            "431" => {
                bytes.extend_from_slice(b"X-Big: ");
                bytes.extend(std::iter::repeat_n(b'a', MAX_HEAD_BYTES));
                bytes.extend_from_slice(b"\r\n\r\n");
            }
            _ => {}
        }
        let mut stream = TcpStream::connect(addr(&s.base)).await.unwrap();
        let _ = stream.write_all(&bytes).await;
        let raw = answer(&mut stream, Duration::from_secs(3)).await;
        assert!(
            raw.starts_with(&format!("HTTP/1.1 {status}")),
            "{status}: {raw}"
        );
        assert!(raw.contains("content-type: application/json"), "{raw}");
        assert_eq!(error_body(&raw)["error"]["field"], field(status), "{raw}");
    }
    // A head larger than the server's read buffer: refused by hyper, in JSON.
    let mut stream = TcpStream::connect(addr(&s.base)).await.unwrap();
    let mut big = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ".to_vec();
    big.extend(std::iter::repeat_n(b'a', MAX_HEAD_BUFFER + 1));
    let _ = stream.write_all(&big).await;
    let raw = answer(&mut stream, Duration::from_secs(3)).await;
    assert!(raw.starts_with("HTTP/1.1 431"), "{raw}");
    assert_eq!(error_body(&raw)["error"]["field"], "request", "{raw}");
    // The longest query the API declares fits: 1 000 names looked up in
    // their longest form (URN).
    let urns = vec!["urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f"; 1000].join(",");
    let r = s
        .client
        .get(s.url(&format!("/api/v1/names?uuids={urns}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // A path segment that does not decode to UTF-8, on every route taking one.
    for path in ["/api/v1/identicon/%ff.svg", "/api/v1/names/%ff"] {
        let r = s.client.get(s.url(path)).send().await.unwrap();
        common::assert_error(r, 400, "path").await;
    }
    s.stop().await;
}

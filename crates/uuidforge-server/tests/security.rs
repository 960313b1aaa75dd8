//! What a page elsewhere, or a name rebound to 127.0.0.1, can do with a
//! server on loopback: read no stored data, use no key, and get no CORS
//! answer that would let it read one.

mod common;

use common::{assert_error, config, start, TOKEN};
use reqwest::header::{ACCESS_CONTROL_ALLOW_ORIGIN, AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN};
use uuidforge_server::Config;

const VALUE: &str = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";

fn with_key(extra: impl FnOnce(&mut Config)) -> Config {
    let mut c = Config {
        hide_key: Some(uuidforge_server::HideKey(std::sync::Arc::new(
            uuidforge::generator::TimestampHider::with_key(&[7u8; 32]).unwrap(),
        ))),
        ..config()
    };
    extra(&mut c);
    c
}

/// Every route that reads stored data or uses a key, as (method, path, JSON body).
fn protected_routes() -> Vec<(reqwest::Method, String, Option<String>)> {
    use reqwest::Method;
    let body = Some(format!(r#"{{"values":["{VALUE}"]}}"#));
    vec![
        (Method::GET, format!("/api/v1/names?uuids={VALUE}"), None),
        (Method::GET, format!("/api/v1/names/{VALUE}"), None),
        (
            Method::PUT,
            format!("/api/v1/names/{VALUE}"),
            Some(r#"{"name":"x"}"#.into()),
        ),
        (Method::DELETE, format!("/api/v1/names/{VALUE}"), None),
        (Method::POST, "/api/v1/hide".into(), body.clone()),
        (Method::POST, "/api/v1/reveal".into(), body),
    ]
}

/// The browser's question before a cross-origin request of `method` with a
/// token and a JSON body.
async fn preflight(
    s: &common::Server,
    path: &str,
    origin: &str,
    method: &reqwest::Method,
) -> reqwest::Response {
    s.anonymous
        .request(reqwest::Method::OPTIONS, s.url(path))
        .header(ORIGIN, origin)
        .header("Access-Control-Request-Method", method.as_str())
        .header(
            "Access-Control-Request-Headers",
            "authorization,content-type",
        )
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_does_not_name_this_server_is_refused_on_every_route() {
    let s = start(with_key(|c| c.allowed_hosts = vec!["forge.test".into()])).await;
    let port = s.base.rsplit(':').next().unwrap().to_string();
    let get = |path: &str, host: String| s.client.get(s.url(path)).header(HOST, host).send();
    for path in ["/", "/db", "/healthz", "/api/v1/uuids?count=1", "/metrics"] {
        for host in [
            format!("attacker.example:{port}"),
            "attacker.example".into(),
            format!("localhost.attacker.example:{port}"),
        ] {
            assert_error(get(path, host).await.unwrap(), 403, "Host").await;
        }
        for host in [
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("forge.test:{port}"),
        ] {
            let status = get(path, host.clone()).await.unwrap().status();
            assert_eq!(status, 200, "{path} with Host {host}");
        }
    }
    // A rebound name does not reach the data either, token or not.
    let r = s
        .client
        .get(s.url(&format!("/api/v1/names/{VALUE}")))
        .header(HOST, format!("attacker.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_error(r, 403, "Host").await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn data_and_key_routes_need_the_token_and_an_allowed_origin() {
    let s = start(with_key(|_| {})).await;
    for (method, path, body) in protected_routes() {
        let send = |client: &reqwest::Client, origin: Option<&str>, auth: Option<String>| {
            let mut r = client.request(method.clone(), s.url(&path));
            if let Some(b) = &body {
                r = r.header(CONTENT_TYPE, "application/json").body(b.clone());
            }
            if let Some(o) = origin {
                r = r.header(ORIGIN, o);
            }
            if let Some(a) = auth {
                r = r.header(AUTHORIZATION, a);
            }
            r.send()
        };
        // No token, a wrong one, one in the query string: 401.
        assert_error(
            send(&s.anonymous, None, None).await.unwrap(),
            401,
            "authorization",
        )
        .await;
        assert_error(
            send(&s.anonymous, None, Some(format!("Bearer {TOKEN}x")))
                .await
                .unwrap(),
            401,
            "authorization",
        )
        .await;
        let separator = if path.contains('?') { '&' } else { '?' };
        let mut in_query = s.anonymous.request(
            method.clone(),
            s.url(&format!("{path}{separator}token={TOKEN}")),
        );
        if let Some(b) = &body {
            in_query = in_query
                .header(CONTENT_TYPE, "application/json")
                .body(b.clone());
        }
        assert_error(in_query.send().await.unwrap(), 401, "authorization").await;
        // Another origin, even with the token: 403 and no CORS answer.
        let r = send(&s.client, Some("http://attacker.example"), None)
            .await
            .unwrap();
        assert!(r.headers().get(ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        assert_error(r, 403, "Origin").await;
        // Its preflight gets no permission either.
        let preflight = preflight(&s, &path, "http://attacker.example", &method).await;
        assert!(
            preflight
                .headers()
                .get(ACCESS_CONTROL_ALLOW_ORIGIN)
                .is_none(),
            "{method} {path}: {:?}",
            preflight.headers()
        );
        // The server's own page, with the token: allowed.
        let own = s.base.clone();
        let r = send(&s.client, Some(&own), None).await.unwrap();
        assert!(
            ![401, 403].contains(&r.status().as_u16()),
            "{method} {path}: {}",
            r.status()
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hide_and_reveal_want_a_json_body() {
    let s = start(with_key(|_| {})).await;
    for path in ["/api/v1/hide", "/api/v1/reveal"] {
        for content_type in [
            Some("text/plain"),
            None,
            Some("application/x-www-form-urlencoded"),
        ] {
            let mut r = s
                .client
                .post(s.url(path))
                .body(format!(r#"{{"values":["{VALUE}"]}}"#));
            if let Some(t) = content_type {
                r = r.header(CONTENT_TYPE, t);
            }
            assert_error(r.send().await.unwrap(), 415, "Content-Type").await;
        }
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cors_answers_any_origin_only_for_computed_values() {
    let allowed = "https://app.example";
    let s = start(with_key(|c| c.allowed_origins = vec![allowed.into()])).await;
    // Values computed from the request alone: any page may read them.
    for path in ["/api/v1/uuids?count=1", "/api/v1/profiles", "/healthz"] {
        let r = s
            .anonymous
            .get(s.url(path))
            .header(ORIGIN, "http://anywhere.example")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()[ACCESS_CONTROL_ALLOW_ORIGIN], "*", "{path}");
    }
    // The server's figures: no CORS at all.
    let r = s
        .anonymous
        .get(s.url("/metrics"))
        .header(ORIGIN, "http://anywhere.example")
        .send()
        .await
        .unwrap();
    assert!(r.headers().get(ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    // Stored data: only the --allow-origin origin, by name, never "*".
    for (method, path, body) in protected_routes() {
        let mut r = s
            .client
            .request(method.clone(), s.url(&path))
            .header(ORIGIN, allowed);
        if let Some(b) = body {
            r = r.header(CONTENT_TYPE, "application/json").body(b);
        }
        let r = r.send().await.unwrap();
        assert!(![401, 403].contains(&r.status().as_u16()), "{path}");
        assert_eq!(r.headers()[ACCESS_CONTROL_ALLOW_ORIGIN], allowed, "{path}");
        let preflight = preflight(&s, &path, allowed, &method).await;
        assert_eq!(
            preflight.headers()[ACCESS_CONTROL_ALLOW_ORIGIN],
            allowed,
            "{path}"
        );
    }
    s.stop().await;
}

#[test]
fn allowed_origins_are_origins() {
    for bad in [
        "*",
        "app.example",
        "https://app.example/path",
        "https://*.example",
    ] {
        let c = with_key(|c| c.allowed_origins = vec![bad.into()]);
        let e = c.check().unwrap_err();
        assert!(
            matches!(&e, uuidforge_server::error::StartError::Invalid { setting: "--allow-origin", value: Some(v), .. } if v == bad),
            "{e}"
        );
    }
    let c = with_key(|c| c.allowed_origins = vec!["http://localhost:3000".into()]);
    c.check().unwrap();
}

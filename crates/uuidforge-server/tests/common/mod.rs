//! A server on a loopback port for each test, with its own names store.
#![allow(dead_code)] // each test binary uses a part of the helpers

use std::sync::atomic::{AtomicUsize, Ordering};
use uuidforge_server::names::NamesDb;
use uuidforge_server::Config;

pub struct Server {
    pub base: String,
    /// A client that sends the server's token with every request.
    pub client: reqwest::Client,
    /// A client without the token.
    pub anonymous: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Stops the server and waits until it has finished.
    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.done.take().unwrap().await.unwrap().unwrap();
    }
}

/// A fresh redb file path under the system temp directory.
pub fn temp_names_file() -> std::path::PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "uuidforge-test-{}-{}.redb",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&path);
    path
}

/// The database scripts/pg-setup.sh creates, as its login role.
#[allow(dead_code)] // not every test binary uses it
pub const LOCAL_DATABASE: &str = "postgres://uuidforge:uuidforge@127.0.0.1:5432/uuidforge";

/// The token of every test server.
pub const TOKEN: &str = "a-long-enough-test-token";

pub fn config() -> Config {
    Config {
        bind: "127.0.0.1:0".parse().unwrap(),
        names_db: NamesDb::File(temp_names_file()),
        token: Some(TOKEN.into()),
        ..Config::default()
    }
}

pub async fn start(config: Config) -> Server {
    let listener = tokio::net::TcpListener::bind(config.bind).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = uuidforge_server::AppState::open(config).await.unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(uuidforge_server::serve(listener, state, async move {
        let _ = rx.await;
    }));
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {TOKEN}").parse().unwrap(),
    );
    Server {
        base,
        client: reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .unwrap(),
        anonymous: reqwest::Client::new(),
        stop: Some(tx),
        done: Some(done),
    }
}

/// Checks a refusal: status, JSON error body naming `field`.
pub async fn assert_error(
    response: reqwest::Response,
    status: u16,
    field: &str,
) -> serde_json::Value {
    assert_eq!(response.status().as_u16(), status, "status for {field}");
    assert_eq!(
        response.headers()["content-type"],
        "application/json",
        "error bodies are JSON"
    );
    let body: serde_json::Value = response.json().await.unwrap();
    let e = &body["error"];
    assert_eq!(e["field"], field, "{body}");
    assert!(e["value"].is_string(), "{body}");
    assert!(
        e["expected"].as_str().is_some_and(|s| !s.is_empty()),
        "{body}"
    );
    body
}

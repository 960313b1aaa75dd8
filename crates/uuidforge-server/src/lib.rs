//! uuidforge's HTTP service (D4, D7, D10, D11): the batch generator API,
//! inspect and convert for batches, identicons, names for UUIDs, and the web
//! page with its `<uuid-chip>` element — static assets embedded, nothing
//! fetched from elsewhere.
//!
//! ```no_run
//! let config = uuidforge_server::Config::default();
//! uuidforge_server::run(config).unwrap(); // until SIGINT/SIGTERM
//! ```
#![deny(missing_docs)]

pub mod api;
mod assets;
pub mod database;
pub mod error;
pub mod guard;
pub mod identicon;
pub mod limits;
pub mod metrics;
pub mod names;

use axum::extract::Request;
use axum::http::{StatusCode, Uri};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use error::{ApiError, StartError};
use names::{NameStore, NamesDb};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Server settings; every request is bounded by them. Its `Debug` form
/// shows no token.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// Address to listen on (loopback by default).
    pub bind: SocketAddr,
    /// Where names for UUIDs are kept.
    pub names_db: NamesDb,
    /// Largest `count` of `GET /api/v1/uuids`.
    pub max_count: u64,
    /// Largest number of values in one inspect or convert request.
    pub max_batch: usize,
    /// Largest request body, bytes.
    pub max_body_bytes: usize,
    /// Requests handled at once; more wait.
    pub max_concurrent: usize,
    /// Time to produce a response's head.
    pub request_timeout: Duration,
    /// Connections, header and body deadlines, body bytes in flight.
    pub limits: limits::Limits,
    /// The database the Database view and `/api/v1/db/…` look at (none:
    /// those routes do not exist).
    pub database: Option<database::DatabaseAccess>,
    /// The key of `POST /api/v1/hide|reveal` (none: those routes answer
    /// 404). Read from a file at start; it never travels in a request.
    pub hide_key: Option<HideKey>,
    /// The bearer token of every route that reads stored data or uses a
    /// key (names, the Database view, hide and reveal). [`run`] makes one
    /// when none is given.
    pub token: Option<String>,
    /// Host names besides IP addresses and `localhost` that requests may
    /// be addressed to (`--allow-host`).
    pub allowed_hosts: Vec<String>,
    /// Origins whose pages may use the protected routes and read their
    /// answers (`--allow-origin`, e.g. `https://app.example`).
    pub allowed_origins: Vec<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("bind", &self.bind)
            .field("names_db", &self.names_db)
            .field("max_count", &self.max_count)
            .field("max_batch", &self.max_batch)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_concurrent", &self.max_concurrent)
            .field("request_timeout", &self.request_timeout)
            .field("limits", &self.limits)
            .field("database", &self.database)
            .field("hide_key", &self.hide_key)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .finish()
    }
}

/// The timestamp-hiding key of a server (E10).
#[derive(Clone)]
pub struct HideKey(pub Arc<uuidforge::generator::TimestampHider>);

impl std::fmt::Debug for HideKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HideKey(…)")
    }
}

impl PartialEq for HideKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for HideKey {}

impl Config {
    /// Refuses settings that would expose a database: its routes beyond
    /// loopback without a token.
    pub fn check(&self) -> Result<(), StartError> {
        match self.token.as_deref() {
            None => {
                return Err(StartError::Missing {
                    setting: "--token",
                    why: "the routes that read data or use a key need one (uuidforge serve makes one when none is given)".into(),
                })
            }
            Some(t) if t.len() < 16 => {
                return Err(StartError::Invalid {
                    setting: "--token",
                    value: None,
                    problem: "at least 16 characters expected".into(),
                })
            }
            Some(_) => {}
        }
        if let Some(db) = &self.database {
            uuidforge_db::client::config(Some(&db.dsn)).map_err(|e| StartError::Invalid {
                setting: "--db",
                value: None,
                problem: e.to_string(),
            })?;
        }
        for origin in &self.allowed_origins {
            let ok = (origin.starts_with("http://") || origin.starts_with("https://"))
                && !origin.trim_end_matches('/').contains(['*', ' '])
                && origin
                    .split("://")
                    .nth(1)
                    .is_some_and(|h| !h.is_empty() && !h.trim_end_matches('/').contains('/'));
            if !ok {
                return Err(StartError::Invalid {
                    setting: "--allow-origin",
                    value: Some(origin.clone()),
                    problem: "an origin expected (scheme://host[:port], no path, no wildcard)"
                        .into(),
                });
            }
        }
        Ok(())
    }

    /// The address of the page, carrying the token in the URL's fragment
    /// (never sent to a server, so never in a log): what [`run`] prints at
    /// start when it made the token itself.
    pub fn page_url(&self, addr: SocketAddr, path: &str) -> String {
        let host = if addr.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else if addr.is_ipv6() {
            format!("[{}]", addr.ip())
        } else {
            addr.ip().to_string()
        };
        format!(
            "http://{host}:{}{path}#token={}",
            addr.port(),
            self.token.as_deref().unwrap_or("")
        )
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            names_db: NamesDb::File("uuidforge-names.redb".into()),
            max_count: 100_000,
            max_batch: 10_000,
            max_body_bytes: 1 << 20,
            max_concurrent: 1024,
            request_timeout: Duration::from_secs(30),
            limits: limits::Limits::default(),
            database: None,
            hide_key: None,
            token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// What every handler shares.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The settings.
    pub config: Arc<Config>,
    /// The open names store.
    pub names: NameStore,
    /// The database of the Database view.
    pub(crate) database: Option<Arc<database::Database>>,
    /// What `/metrics` reports.
    pub metrics: Arc<metrics::Metrics>,
    /// Request bodies being read, in bytes.
    pub body_budget: limits::BodyBudget,
    /// Connections open.
    pub connections: Arc<limits::Connections>,
}

impl AppState {
    /// Opens the names store `config` names.
    pub async fn open(config: Config) -> Result<AppState, names::StoreError> {
        let database = match &config.database {
            Some(access) => Some(
                database::Database::open(access)
                    .map_err(|e| names::StoreError(format!("--db: {e}")))?,
            ),
            None => None,
        };
        let names = NameStore::open(&config.names_db).await?;
        Ok(AppState {
            body_budget: limits::BodyBudget::new(config.limits.max_buffered_bytes),
            config: Arc::new(config),
            names,
            database,
            metrics: Arc::new(metrics::Metrics::new()),
            connections: Arc::default(),
        })
    }
}

/// The routes (kept in step with `api/openapi.json`, which a test checks).
pub fn router(state: AppState) -> Router {
    use axum::http::{header, Method};
    use tower_http::cors::{AllowOrigin, Any, CorsLayer};
    let limits = tower::ServiceBuilder::new()
        .layer(axum::error_handling::HandleErrorLayer::new(overloaded))
        .layer(tower::limit::GlobalConcurrencyLimitLayer::new(
            state.config.max_concurrent,
        ))
        .layer(tower::timeout::TimeoutLayer::new(
            state.config.request_timeout,
        ));
    // Stored data and keys: the token, an allowed Origin, and CORS answers
    // for the --allow-origin origins only.
    let mut protected = Router::new()
        .route("/api/v1/hide", post(api::hide))
        .route("/api/v1/reveal", post(api::reveal))
        .route("/api/v1/names", get(api::lookup_names))
        .route(
            "/api/v1/names/{uuid}",
            get(api::get_name)
                .put(api::put_name)
                .delete(api::delete_name),
        );
    if state.database.is_some() {
        protected = protected
            .route("/api/v1/db", get(database::about))
            .route("/api/v1/db/columns", get(database::columns))
            .route("/api/v1/db/find", get(database::find))
            .route("/api/v1/db/related", get(database::related))
            .route("/api/v1/db/discover", get(database::discover));
    }
    let origins: Vec<header::HeaderValue> = state
        .config
        .allowed_origins
        .iter()
        .filter_map(|o| header::HeaderValue::from_str(o.trim_end_matches('/')).ok())
        .collect();
    // Each group's own "method not allowed" answer, so that its CORS layer
    // also answers the preflight (OPTIONS) of its routes.
    let protected = protected
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::protect,
        ))
        .layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods([Method::GET, Method::PUT, Method::DELETE, Method::POST])
                .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE]),
        );
    // Values computed from the request alone: any page may read them.
    let public = Router::new()
        .route("/", get(assets::index))
        .route("/db", get(assets::database_page))
        .route("/static/{file}", get(assets::file))
        .route("/api/openapi.json", get(assets::openapi))
        .route("/api/v1/uuids", get(api::uuids))
        .route("/api/v1/inspect", post(api::inspect))
        .route("/api/v1/convert", post(api::convert))
        .route("/api/v1/profiles", get(api::profiles))
        .route("/api/v1/identicon/{file}", get(api::identicon))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(
            CorsLayer::new()
                .allow_origin(Any)
                .allow_methods([Method::GET]),
        );
    // A body is read whole (within its deadline and the budget of bytes in
    // flight) before its request takes a place among those handled at
    // once: a slow upload waits outside that limit.
    let budget = state.body_budget.clone();
    let (max_body, body_timeout) = (
        state.config.max_body_bytes,
        state.config.limits.body_timeout,
    );
    let handled = Router::new()
        .merge(public)
        .merge(protected)
        .fallback(not_found)
        .layer(axum::extract::DefaultBodyLimit::max(max_body))
        .layer(limits)
        .layer(axum::middleware::from_fn(move |request, next| {
            limits::read_body_first(budget.clone(), max_body, body_timeout, request, next)
        }));
    // Health and the server's own figures answer whatever the load; the
    // figures with no CORS, so no page elsewhere reads them.
    let health = Router::new()
        .route("/healthz", get(api::healthz))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(
            CorsLayer::new()
                .allow_origin(Any)
                .allow_methods([Method::GET]),
        )
        .route("/metrics", get(metrics::metrics));
    Router::new()
        .merge(health)
        .merge(handled)
        // Names and values from a database are shown as text; even so, no
        // page may run inline script or load anything from elsewhere.
        .layer(tower_http::set_header::SetResponseHeaderLayer::overriding(
            axum::http::header::CONTENT_SECURITY_POLICY,
            axum::http::HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            metrics::observe,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::check_host,
        ))
        .layer(axum::middleware::from_fn(limits::bounded_head))
        .layer(axum::middleware::from_fn(log_request))
        .with_state(state)
}

/// Served with every response: scripts, styles, images and requests from
/// this server only (images also from `blob:`/`data:` URLs the page makes:
/// the ER diagram, the favicon); no inline script or style; no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' blob: data:; \
     object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

async fn overloaded(e: tower::BoxError) -> ApiError {
    if e.is::<tower::timeout::error::Elapsed>() {
        ApiError::with_status(
            StatusCode::SERVICE_UNAVAILABLE,
            "request",
            "timed out",
            "a request answered within the server's time limit",
        )
    } else {
        ApiError::with_status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "request",
            e.to_string(),
            "a request the server can handle",
        )
    }
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::with_status(
        StatusCode::NOT_FOUND,
        "path",
        uri.path(),
        "a route listed in /api/openapi.json",
    )
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::with_status(
        StatusCode::METHOD_NOT_ALLOWED,
        "method",
        format!("{} {}", request.method(), request.uri().path()),
        "a method listed for this route in /api/openapi.json",
    )
}

/// One line per request at info level: method, path, status, time.
async fn log_request(request: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    tracing::info!(
        target: "uuidforge::http",
        "{method} {path} {} {}µs",
        response.status().as_u16(),
        start.elapsed().as_micros()
    );
    response
}

/// How long [`serve`] waits, after the last response, for the names store
/// to close.
const STORE_CLOSE_WAIT: Duration = Duration::from_secs(10);

/// Serves [`router`]`(state)` on `listener` until `shutdown` completes, then
/// finishes the requests in flight and closes the names store, so that the
/// store can be opened again (by a restart in the same process, or another
/// process) as soon as this returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let store = state.names.watch();
    let limits = state.config.limits;
    let connections = state.connections.clone();
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let service = hyper_util::service::TowerToHyperService::new(router(state));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        // A request head that does not fit is refused (431); one that fits
        // but is larger than the server takes, by limits::bounded_head.
        .max_buf_size(limits::MAX_HEAD_BUFFER)
        .writev(false);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors or a connection reset before it
                // was accepted: the next one may work.
                Err(e) => {
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(limits::refuse_connection(stream, limits.max_connections));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let counted = limits::Counted::new(connections.clone());
        let io = TokioIo::new(limits::JsonRefusals::new(stream));
        let connection = graceful.watch(http.serve_connection(io, service.clone()));
        tokio::spawn(async move {
            let _ = connection.await;
            drop((slot, counted));
        });
    }
    drop((listener, service));
    graceful.shutdown().await;
    // The connections' tasks drop their copies of the router (and so of
    // the store) a moment after they end; cancelled requests' blocking
    // store calls may run on.
    if !store.released_within(STORE_CLOSE_WAIT).await {
        tracing::warn!("names store still in use {STORE_CLOSE_WAIT:?} after shutdown");
    }
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => tracing::info!("SIGINT: shutting down"),
        _ = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}

/// Runs the server with logging to standard error (`RUST_LOG` filters;
/// info by default) until SIGINT or SIGTERM. Errors name the setting at
/// fault (`--bind`, `--names-db`).
pub fn run(mut config: Config) -> Result<(), StartError> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| StartError::Io {
            what: "cannot start the runtime",
            error,
        })?;
    runtime.block_on(async move {
        let bind = config.bind;
        let listener = tokio::net::TcpListener::bind(bind)
            .await
            .map_err(|e| StartError::Invalid {
                setting: "--bind",
                value: Some(bind.to_string()),
                problem: e.to_string(),
            })?;
        let made_token = config.token.is_none();
        if made_token {
            config.token = Some(guard::new_token());
        }
        config.check()?;
        let names_db = config.names_db.clone();
        let state = AppState::open(config).await.map_err(|e| {
            let shown = match &names_db {
                NamesDb::File(p) => p.display().to_string(),
                NamesDb::Postgres(_) => "(the PostgreSQL URL)".to_string(),
            };
            StartError::Invalid {
                setting: "--names-db",
                value: Some(shown),
                problem: e.to_string(),
            }
        })?;
        let addr = listener.local_addr().map_err(|error| StartError::Io {
            what: "read the listening address",
            error,
        })?;
        tracing::info!("listening on http://{addr}/");
        if made_token {
            // Once, on the terminal, as notebook servers do: the page reads
            // the token from the fragment and keeps it for its tab.
            eprintln!(
                "uuidforge serve: names, hide/reveal and the Database view need this server's token; open\n    {}",
                state.config.page_url(addr, if state.database.is_some() { "/db" } else { "/" })
            );
        }
        serve(listener, state, shutdown_signal())
            .await
            .map_err(|error| StartError::Io {
                what: "server error",
                error,
            })?;
        tracing::info!("stopped");
        Ok(())
    })
}

//! `uuidforge serve`: the HTTP API and web page of `uuidforge-server`.

use crate::UsageError;
use std::net::SocketAddr;
use uuidforge_server::names::NamesDb;
use uuidforge_server::Config;

/// Arguments of `serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on. Loopback by default: give 0.0.0.0:PORT
    /// explicitly to serve other machines.
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: SocketAddr,
    /// Where names for UUIDs are kept: a redb file (created when missing)
    /// or a postgres://… URL (table uuidforge_names created when missing).
    /// Default: names.redb in $XDG_DATA_HOME/uuidforge (or
    /// ~/.local/share/uuidforge), a directory created with mode 0700.
    #[arg(long, env = "UUIDFORGE_NAMES_DB", hide_env_values = true)]
    names_db: Option<String>,
    /// Largest `count` of one batch request.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    max_count: u64,
    /// Largest number of values in one inspect or convert request.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_batch: u64,
    /// Largest request body, bytes.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(64..=(64 << 20)))]
    max_body_bytes: u64,
    /// Connections open at once; one more is answered 503 and closed.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// Seconds for a request's head to arrive (the first on a connection,
    /// or the next one kept alive); the connection is closed after.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout: u64,
    /// Seconds for a request's whole body to arrive (408 after).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    body_timeout: u64,
    /// Add the Database view (/db) and its read-only API (/api/v1/db/…)
    /// for this database: a URL or key=value string as psql takes it, the
    /// rest from PG* variables and ~/.pgpass.
    #[arg(long)]
    db: Option<String>,
    /// Bearer token of the routes that read stored data or use a key
    /// (names, the Database view, hide and reveal), at least 16
    /// characters. Without it the server makes one and prints, once, the
    /// page's address carrying it. Better passed in UUIDFORGE_TOKEN than
    /// on the command line.
    #[arg(long, env = "UUIDFORGE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A host name requests may be addressed to, besides IP addresses and
    /// localhost (repeatable). Any other Host header is refused: a page
    /// elsewhere cannot rebind its own name to this server.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// An origin (scheme://host[:port]) whose pages may read names and
    /// use the token (repeatable; e.g. a page that includes
    /// /static/uuid-chips.js). No origin is allowed by default.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Key file (32 bytes, `uuidforge hide --new-key F`) for POST
    /// /api/v1/hide and /api/v1/reveal; without it those routes answer 404.
    #[arg(long)]
    hide_key_file: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> Result<(), UsageError> {
    let names_db = match args.names_db {
        Some(text) => NamesDb::parse(&text),
        None => NamesDb::File(
            crate::settings::data_dir()
                .map_err(UsageError::plain)?
                .join("names.redb"),
        ),
    };
    let hide_key = match &args.hide_key_file {
        Some(path) => Some(uuidforge_server::HideKey(std::sync::Arc::new(
            crate::keys::read_key_file("--hide-key-file", path).map_err(UsageError::plain)?,
        ))),
        None => None,
    };
    let config = Config {
        hide_key,
        bind: args.bind,
        names_db,
        max_count: args.max_count,
        max_batch: args.max_batch as usize,
        max_body_bytes: args.max_body_bytes as usize,
        limits: uuidforge_server::limits::Limits {
            max_connections: args.max_connections as usize,
            header_timeout: std::time::Duration::from_secs(args.header_timeout),
            body_timeout: std::time::Duration::from_secs(args.body_timeout),
            ..uuidforge_server::limits::Limits::default()
        },
        database: args
            .db
            .map(|dsn| uuidforge_server::database::DatabaseAccess { dsn }),
        token: args.token,
        allowed_hosts: args.allow_hosts,
        allowed_origins: args.allow_origins,
        ..Config::default()
    };
    uuidforge_server::run(config).map_err(|e| UsageError::plain(e.to_string()))
}

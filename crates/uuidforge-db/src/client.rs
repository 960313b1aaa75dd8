//! The executor over tokio-postgres: connects like psql, runs reading
//! sessions in a read-only transaction ([`ReadOnly`]), runs plans and
//! streams their rows. A change's own transactions are the change side's.

use crate::catalog::{Snapshot, SNAPSHOT_SQL};
use crate::plan::{Param, Query};
use futures_util::{pin_mut, TryStreamExt};
use std::sync::Arc;
use tokio_postgres::config::SslMode;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config};

pub use crate::error::DbError;

/// The driver's error while doing `context`: the server's refusal with
/// its SQLSTATE, or a connection failure in the driver's own words.
pub fn driver_error(context: impl Into<String>, e: tokio_postgres::Error) -> DbError {
    match e.as_db_error() {
        Some(db) => DbError::server(context, db.message(), db.code().code()),
        // The driver's own words ("error connecting to server") and
        // each cause under them ("Connection refused (os error 111)").
        None => {
            let mut message = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                let text = c.to_string();
                if !message.contains(&text) {
                    message.push_str(": ");
                    message.push_str(&text);
                }
                cause = c.source();
            }
            DbError::connection(context, crate::dsn::redact(&message))
        }
    }
}

/// libpq's `sslmode=require` encrypts without checking the server's
/// certificate (only `verify-ca`/`verify-full` check it); so does this.
#[derive(Debug)]
struct EncryptOnly(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, DbError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| DbError::connection("TLS", e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(EncryptOnly(provider)))
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// Reads the settings like psql ([`crate::connect::config_from`] with the
/// process environment).
pub fn config(dsn: Option<&str>) -> Result<Config, DbError> {
    crate::connect::config_from(dsn, &|name| std::env::var(name).ok())
}

/// A session a plan is made in: a read-only session.
pub trait Reader {
    /// The catalog snapshot.
    fn snapshot(&self) -> impl std::future::Future<Output = Result<Snapshot, DbError>> + Send;
    /// The first column of `query`'s first row, as text ("" when none).
    fn one_text_of(
        &self,
        query: &Query,
        context: &str,
    ) -> impl std::future::Future<Output = Result<String, DbError>> + Send;
    /// [`Reader::one_text_of`] inside a savepoint: a refusal leaves the
    /// transaction usable (a probe).
    fn probe_text_of(
        &self,
        query: &Query,
        context: &str,
    ) -> impl std::future::Future<Output = Result<String, DbError>> + Send;
    /// The connection.
    fn client(&self) -> &Client;
}

impl Reader for ReadOnly {
    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        ReadOnly::snapshot(self).await
    }

    async fn one_text_of(&self, query: &Query, context: &str) -> Result<String, DbError> {
        Ok(self
            .rows(query, context)
            .await?
            .into_iter()
            .next()
            .unwrap_or_default())
    }

    async fn probe_text_of(&self, query: &Query, context: &str) -> Result<String, DbError> {
        // Every read of a read-only session runs in a savepoint.
        self.one_text_of(query, context).await
    }

    fn client(&self) -> &Client {
        &self.client
    }
}

/// One connection inside one read-only transaction (`SET TRANSACTION READ
/// ONLY`, repeatable read so every statement sees the same data).
pub struct ReadOnly {
    client: Client,
}

impl ReadOnly {
    /// Connects and opens the read-only transaction.
    pub async fn open(config: &Config) -> Result<ReadOnly, DbError> {
        let client = connect(config).await?;
        client
            .batch_execute("BEGIN; SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .await
            .map_err(|e| driver_error("begin read-only transaction", e))?;
        Ok(ReadOnly { client })
    }

    /// Ends the transaction and the connection: a change that waits for
    /// older snapshots (an index built concurrently) must not wait for
    /// this one.
    pub async fn close(self) -> Result<(), DbError> {
        self.client
            .batch_execute("COMMIT")
            .await
            .map_err(|e| driver_error("end read-only transaction", e))
    }

    /// Connects another session that sees exactly the same data as this
    /// one (an exported snapshot), for scans in parallel.
    pub(crate) async fn open_sibling(&self, config: &Config) -> Result<ReadOnly, DbError> {
        let row = self
            .client
            .query_one("SELECT pg_export_snapshot()", &[])
            .await
            .map_err(|e| driver_error("export snapshot", e))?;
        let id: String = row.get(0);
        let client = connect(config).await?;
        client
            .batch_execute(&format!(
                "BEGIN; SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET TRANSACTION SNAPSHOT {}",
                uuidforge_ident::quote_literal(&id)
            ))
            .await
            .map_err(|e| driver_error("import snapshot", e))?;
        Ok(ReadOnly { client })
    }

    /// The catalog snapshot.
    pub async fn snapshot(&self) -> Result<Snapshot, DbError> {
        let rows = self
            .rows(&Query::new(SNAPSHOT_SQL.as_str()), "read the catalog")
            .await?;
        let json = rows.into_iter().next().unwrap_or_default();
        Snapshot::from_json(&json)
            .map_err(|e| DbError::unreadable("read the catalog", e.to_string()))
    }

    /// Runs `query` and collects its rows.
    pub async fn rows(&self, query: &Query, context: &str) -> Result<Vec<String>, DbError> {
        let mut out = Vec::new();
        self.each_row(query, context, |row| {
            out.push(row);
            Ok(())
        })
        .await?;
        Ok(out)
    }

    /// Runs `queries` pipelined — sent without waiting for each answer, so
    /// a thousand small statements cost a few round trips — inside one
    /// savepoint, and returns their rows in order. Any failure rolls the
    /// whole batch back and is returned: the caller may then run the
    /// statements one by one with [`ReadOnly::rows`] to learn which failed.
    pub(crate) async fn rows_pipelined(
        &self,
        queries: &[Query],
        context: &str,
    ) -> Result<Vec<Vec<String>>, DbError> {
        self.client
            .batch_execute("SAVEPOINT uuidforge_batch")
            .await
            .map_err(|e| driver_error(context, e))?;
        let params: Vec<Vec<BoxedParam>> = queries.iter().map(|q| bind(&q.params)).collect();
        let results =
            futures_util::future::join_all(queries.iter().zip(&params).map(|(query, params)| {
                let refs: Vec<&(dyn ToSql + Sync)> = params
                    .iter()
                    .map(|p| p.as_ref() as &(dyn ToSql + Sync))
                    .collect();
                async move { self.client.query(&query.sql, &refs).await }
            }))
            .await;
        let mut out = Vec::with_capacity(results.len());
        let mut failure = None;
        for result in results {
            match result {
                Ok(rows) => out.push(
                    rows.iter()
                        .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default())
                        .collect(),
                ),
                Err(e) => {
                    failure.get_or_insert(driver_error(context, e));
                }
            }
        }
        let end = if failure.is_none() {
            "RELEASE SAVEPOINT uuidforge_batch"
        } else {
            "ROLLBACK TO SAVEPOINT uuidforge_batch"
        };
        self.client
            .batch_execute(end)
            .await
            .map_err(|e| driver_error(context, e))?;
        match failure {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Runs `query` inside a savepoint, handing each row to `f` as it
    /// arrives. A failure (a permission refused on one table, say) is
    /// rolled back to the savepoint, so the transaction goes on.
    pub async fn each_row(
        &self,
        query: &Query,
        context: &str,
        mut f: impl FnMut(String) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        self.client
            .batch_execute("SAVEPOINT uuidforge_step")
            .await
            .map_err(|e| driver_error(context, e))?;
        let result = async {
            let params = bind(&query.params);
            let stream = self
                .client
                .query_raw(
                    &query.sql,
                    params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)),
                )
                .await
                .map_err(|e| driver_error(context, e))?;
            pin_mut!(stream);
            while let Some(row) = stream
                .try_next()
                .await
                .map_err(|e| driver_error(context, e))?
            {
                let text: Option<String> = row.get(0);
                f(text.unwrap_or_default())?;
            }
            Ok(())
        }
        .await;
        let end = if result.is_ok() {
            "RELEASE SAVEPOINT uuidforge_step"
        } else {
            "ROLLBACK TO SAVEPOINT uuidforge_step"
        };
        self.client
            .batch_execute(end)
            .await
            .map_err(|e| driver_error(context, e))?;
        result
    }
}

/// A value bound to a statement's parameter.
pub type BoxedParam = Box<dyn ToSql + Sync + Send>;

/// `params` as values to bind.
pub fn bind(params: &[Param]) -> Vec<BoxedParam> {
    params
        .iter()
        .map(|p| -> BoxedParam {
            match p {
                Param::Text(s) => Box::new(s.clone()),
                Param::TextArray(v) => Box::new(v.clone()),
                Param::UuidArray(v) => Box::new(v.clone()),
                Param::ByteaArray(v) => Box::new(v.clone()),
            }
        })
        .collect()
}

/// The catalog snapshot, read with one statement on `client`.
pub async fn read_snapshot(client: &Client) -> Result<Snapshot, DbError> {
    let row = client
        .query_one(SNAPSHOT_SQL.as_str(), &[])
        .await
        .map_err(|e| driver_error("read the catalog", e))?;
    let json: Option<String> = row.get(0);
    Snapshot::from_json(json.as_deref().unwrap_or_default())
        .map_err(|e| DbError::unreadable("read the catalog", e.to_string()))
}

/// Connects (TLS unless `sslmode=disable`; Unix sockets never use TLS).
pub async fn connect(config: &Config) -> Result<Client, DbError> {
    let context = || connect_context(config);
    if config.get_ssl_mode() == SslMode::Disable {
        let (client, connection) = config
            .connect(tokio_postgres::NoTls)
            .await
            .map_err(|e| driver_error(context(), e))?;
        tokio::spawn(connection);
        Ok(client)
    } else {
        let (client, connection) = config
            .connect(tls()?)
            .await
            .map_err(|e| driver_error(context(), e))?;
        tokio::spawn(connection);
        Ok(client)
    }
}

fn connect_context(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "?".into(),
    };
    format!(
        "connect to {}@{}:{}/{}",
        config.get_user().unwrap_or("?"),
        host,
        config.get_ports().first().copied().unwrap_or(5432),
        config.get_dbname().unwrap_or("?")
    )
}

//! Human-readable names for UUIDs (D11), kept in an embedded redb file by
//! default or in a PostgreSQL table when given a connection URL. Both keep
//! names across restarts; a write is one transaction (one statement), so a
//! failed request changes nothing.

use std::path::PathBuf;
use std::sync::Arc;
use uuid::Uuid;

/// Where names are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamesDb {
    /// A redb database file (created when missing).
    File(PathBuf),
    /// A PostgreSQL connection URL (`postgres://…` or `postgresql://…`);
    /// the table `uuidforge_names` is created when missing.
    Postgres(String),
}

impl NamesDb {
    /// `postgres://…`/`postgresql://…` is a database URL, anything else a
    /// file path.
    ///
    /// ```
    /// use uuidforge_server::names::NamesDb;
    /// assert!(matches!(NamesDb::parse("postgres://u@localhost/db"), NamesDb::Postgres(_)));
    /// assert!(matches!(NamesDb::parse("names.redb"), NamesDb::File(_)));
    /// ```
    pub fn parse(text: &str) -> NamesDb {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            NamesDb::Postgres(text.to_string())
        } else {
            NamesDb::File(PathBuf::from(text))
        }
    }
}

/// The longest name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// A name refused: what was wrong (its display says what was expected).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// Empty, only spaces, or longer than [`MAX_NAME_CHARS`].
    Length {
        /// Its characters.
        chars: usize,
    },
    /// It holds a control character.
    Control {
        /// Its code point.
        code: u32,
    },
}

impl std::fmt::Display for NameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameError::Length { chars } => write!(
                f,
                "1 to {MAX_NAME_CHARS} characters, not only spaces (got {chars})"
            ),
            NameError::Control { code } => {
                write!(f, "no control characters (found U+{code:04X})")
            }
        }
    }
}

impl std::error::Error for NameError {}

/// Checks a name: 1 to [`MAX_NAME_CHARS`] characters, no control
/// characters, not only spaces.
///
/// ```
/// use uuidforge_server::names::{check_name, NameError};
/// assert!(check_name("orders table, row 42").is_ok());
/// assert_eq!(check_name("a\nb"), Err(NameError::Control { code: 10 }));
/// ```
pub fn check_name(name: &str) -> Result<(), NameError> {
    let chars = name.chars().count();
    if name.trim().is_empty() || chars > MAX_NAME_CHARS {
        return Err(NameError::Length { chars });
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(NameError::Control { code: c as u32 });
    }
    Ok(())
}

const TABLE: redb::TableDefinition<u128, &str> = redb::TableDefinition::new("names");

/// An open names store.
#[derive(Clone)]
pub enum NameStore {
    /// redb, used from blocking threads.
    File(Arc<Closing<redb::Database>>),
    /// PostgreSQL, one pipelining connection.
    Postgres(Arc<Closing<tokio_postgres::Client>>),
}

impl std::fmt::Debug for NameStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NameStore::File(_) => "NameStore::File",
            NameStore::Postgres(_) => "NameStore::Postgres",
        })
    }
}

/// An open store connection that announces, once dropped, that it is
/// closed. `inner` is declared first so that it is dropped first: redb
/// releases its lock file inside `Database`'s drop, after the last `Arc`
/// count has already gone, so the count alone would announce too early.
pub struct Closing<T> {
    inner: T,
    closed: tokio::sync::watch::Sender<()>,
}

impl<T> Closing<T> {
    fn new(inner: T) -> Arc<Closing<T>> {
        Arc::new(Closing {
            inner,
            closed: tokio::sync::watch::Sender::new(()),
        })
    }
}

impl<T> std::ops::Deref for Closing<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

/// Tells when a [`NameStore`] is closed: every handle dropped and the
/// database closed (for redb, its lock file released).
pub struct StoreWatch(tokio::sync::watch::Receiver<()>);

impl StoreWatch {
    /// Waits until the store is closed, at most `within`; returns whether it
    /// is.
    pub async fn released_within(mut self, within: std::time::Duration) -> bool {
        // Nothing is ever sent: `changed` ends only when the sender is dropped.
        tokio::time::timeout(within, self.0.changed()).await.is_ok()
    }
}

/// A store failure (5xx): the message names the store.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn file_error(e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("names file: {e}"))
}

fn pg_error(e: tokio_postgres::Error) -> StoreError {
    StoreError(format!("names database: {e}"))
}

/// Runs `f` on the redb database in a blocking thread.
async fn on_file<T: Send + 'static>(
    db: &Arc<Closing<redb::Database>>,
    f: impl FnOnce(&redb::Database) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let db = db.clone();
    tokio::task::spawn_blocking(move || f(&db))
        .await
        .map_err(file_error)?
}

/// Changes the names table in one write transaction; returns whether the
/// key had a value before.
async fn write_file(
    db: &Arc<Closing<redb::Database>>,
    change: impl FnOnce(&mut redb::Table<u128, &str>) -> Result<bool, redb::StorageError>
        + Send
        + 'static,
) -> Result<bool, StoreError> {
    on_file(db, move |db| {
        let tx = db.begin_write().map_err(file_error)?;
        let existed = {
            let mut table = tx.open_table(TABLE).map_err(file_error)?;
            change(&mut table).map_err(file_error)?
        };
        tx.commit().map_err(file_error)?;
        Ok(existed)
    })
    .await
}

/// Makes `path` readable and writable by its owner only (0600): created
/// so when missing, whatever the umask; an existing file that others can
/// read is narrowed, with a warning. Names are the user's data.
fn private_file(path: &std::path::Path) -> std::io::Result<()> {
    if let uuidforge_store::private_file::Ensured::Narrowed(mode) =
        uuidforge_store::private_file::ensure(path)?
    {
        tracing::warn!(
            "names file {} had mode {mode:o}; narrowed to 600",
            path.display()
        );
    }
    Ok(())
}

impl NameStore {
    /// Opens (and creates when missing) the store.
    pub async fn open(db: &NamesDb) -> Result<NameStore, StoreError> {
        match db {
            NamesDb::File(path) => {
                let path = path.clone();
                let db = tokio::task::spawn_blocking(move || -> Result<_, StoreError> {
                    private_file(&path)
                        .map_err(|e| StoreError(format!("names file {}: {e}", path.display())))?;
                    let db = redb::Database::create(&path)
                        .map_err(|e| StoreError(format!("names file {}: {e}", path.display())))?;
                    let tx = db.begin_write().map_err(file_error)?;
                    tx.open_table(TABLE).map_err(file_error)?;
                    tx.commit().map_err(file_error)?;
                    Ok(db)
                })
                .await
                .map_err(file_error)??;
                Ok(NameStore::File(Closing::new(db)))
            }
            NamesDb::Postgres(url) => {
                let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .map_err(pg_error)?;
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::error!("names database connection closed: {e}");
                    }
                });
                client
                    .batch_execute(
                        "CREATE TABLE IF NOT EXISTS uuidforge_names (\
                           uuid uuid PRIMARY KEY, \
                           name text NOT NULL, \
                           updated_at timestamptz NOT NULL DEFAULT now())",
                    )
                    .await
                    .map_err(pg_error)?;
                Ok(NameStore::Postgres(Closing::new(client)))
            }
        }
    }

    /// A watch on this store's closing (see [`StoreWatch`]).
    pub fn watch(&self) -> StoreWatch {
        StoreWatch(match self {
            NameStore::File(db) => db.closed.subscribe(),
            NameStore::Postgres(client) => client.closed.subscribe(),
        })
    }

    /// The name of `uuid`, if one is registered.
    pub async fn get(&self, uuid: Uuid) -> Result<Option<String>, StoreError> {
        Ok(self.get_many(vec![uuid]).await?.pop().map(|(_, name)| name))
    }

    /// The names of those of `uuids` that have one, in one read.
    pub async fn get_many(&self, uuids: Vec<Uuid>) -> Result<Vec<(Uuid, String)>, StoreError> {
        match self {
            NameStore::File(db) => {
                on_file(db, move |db| {
                    use redb::ReadableDatabase;
                    let tx = db.begin_read().map_err(file_error)?;
                    let table = tx.open_table(TABLE).map_err(file_error)?;
                    let mut found = Vec::new();
                    for uuid in uuids {
                        if let Some(name) = table.get(uuid.as_u128()).map_err(file_error)? {
                            found.push((uuid, name.value().to_string()));
                        }
                    }
                    Ok(found)
                })
                .await
            }
            NameStore::Postgres(client) => {
                let rows = client
                    .query(
                        "SELECT uuid, name FROM uuidforge_names WHERE uuid = ANY($1)",
                        &[&uuids],
                    )
                    .await
                    .map_err(pg_error)?;
                Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
            }
        }
    }

    /// Sets the name of `uuid`; returns whether it had one before.
    pub async fn put(&self, uuid: Uuid, name: String) -> Result<bool, StoreError> {
        match self {
            NameStore::File(db) => {
                write_file(db, move |table| {
                    Ok(table.insert(uuid.as_u128(), name.as_str())?.is_some())
                })
                .await
            }
            NameStore::Postgres(client) => {
                // xmax = 0 only for a freshly inserted row.
                let row = client
                    .query_one(
                        "INSERT INTO uuidforge_names (uuid, name) VALUES ($1, $2) \
                         ON CONFLICT (uuid) DO UPDATE SET name = EXCLUDED.name, updated_at = now() \
                         RETURNING xmax <> 0",
                        &[&uuid, &name],
                    )
                    .await
                    .map_err(pg_error)?;
                Ok(row.get(0))
            }
        }
    }

    /// Removes the name of `uuid`; returns whether there was one.
    pub async fn delete(&self, uuid: Uuid) -> Result<bool, StoreError> {
        match self {
            NameStore::File(db) => {
                write_file(db, move |table| Ok(table.remove(uuid.as_u128())?.is_some())).await
            }
            NameStore::Postgres(client) => {
                let n = client
                    .execute("DELETE FROM uuidforge_names WHERE uuid = $1", &[&uuid])
                    .await
                    .map_err(pg_error)?;
                Ok(n > 0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("orders table, row 42").is_ok());
        assert!(check_name("").unwrap_err().to_string().contains("1 to 200"));
        assert!(check_name("   ").is_err());
        assert!(check_name(&"é".repeat(201))
            .unwrap_err()
            .to_string()
            .contains("got 201"));
        assert!(check_name(&"é".repeat(200)).is_ok());
        assert!(check_name("a\nb")
            .unwrap_err()
            .to_string()
            .contains("U+000A"));
    }
}

//! The keys another database gave a table's rows (`migrate-key
//! --keys-from`): a logical replication subscriber takes its publisher's
//! keys. A migration in batches gives the rows the application writes
//! during it keys from the clock, which no second computation gives
//! again; after it the publisher keeps each row's old key beside its new
//! one, so the subscriber's migration can give every row the same key.

use super::Key;
use crate::action::GivenKeys;
use std::collections::BTreeMap;
use uuid::Uuid;
use uuidforge_db::client::ReadOnly;
use uuidforge_db::error::DbError;
use uuidforge_db::plan::Query;
use uuidforge_ident::quote_ident;

/// Reads, in `session` (a read-only transaction on the other database),
/// every row's (old key, new key) of `table` migrated there: its key
/// column now uuid, the old keys in `keep_old` (default `KEY_old`).
/// Errors name `--keys-from` and what was expected.
pub async fn read(
    session: &ReadOnly,
    table: &str,
    keep_old: Option<&str>,
) -> Result<GivenKeys, DbError> {
    let snapshot = session.snapshot().await?;
    let relation = snapshot
        .find_relation(table)
        .map_err(|e| e.within("keys-from"))?;
    let key = Key::find(&snapshot, relation, None).map_err(|e| e.within("keys-from"))?;
    let old = keep_old.map_or_else(
        || super::naming::old_column(&key.column.name),
        str::to_string,
    );
    if key.column.type_name != "uuid" || relation.column_named(&old).is_none() {
        return Err(DbError::refused(
            "keys-from",
            format!(
                "{} there has key {} ({}) and {} column {old} (expected the table migrated there: a uuid key, the old keys kept beside it)",
                relation.display_name(),
                key.column.name,
                key.column.type_name,
                if relation.column_named(&old).is_some() { "a" } else { "no" }
            ),
        ));
    }
    let rows = session
        .rows(
            &Query::new(format!(
                "SELECT json_build_array({o}::text, {k}::text)::text FROM {} WHERE {o} IS NOT NULL",
                relation.sql_name(),
                o = quote_ident(&old),
                k = quote_ident(&key.column.name),
            )),
            "read the keys the other database gave its rows",
        )
        .await?;
    let mut keys = BTreeMap::new();
    for row in rows {
        let (old, new): (String, Uuid) = serde_json::from_str(&row)
            .map_err(|e| DbError::unreadable("keys-from", e.to_string()))?;
        keys.insert(old, new);
    }
    Ok(GivenKeys(std::sync::Arc::new(keys)))
}

//! The new keys of a key migration: computed by the library (E8,
//! [`uuidforge::generator::v7_from`], keyed by the run's secret) from each
//! row's time — the `--order-by` column, or times synthesized one
//! millisecond apart in the old key order — and copied into the key map.

use uuidforge_db::error::DbError;
use serde::{Deserialize, Serialize};

/// Where synthesized times start (2000-01-01T00:00:00Z): without
/// `--order-by`, row `i` in the old key order gets this time plus `i`
/// milliseconds, so a re-run gives the same keys.
pub const SYNTHESIZED_EPOCH_MS: u64 = 946_684_800_000;

/// The step that makes the new keys: `read` gives rows of (old key as
/// text, Unix milliseconds or NULL) in the new order; the keys are
/// computed from the run's secret and copied into `map` (old text, new
/// uuid).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewKeys {
    /// The read.
    pub read: String,
    /// The map table.
    pub map: String,
    /// Whether the times order the keys (`--order-by`).
    pub ordered: bool,
}

impl NewKeys {
    /// Its printed lines.
    pub fn printed(&self) -> Vec<String> {
        vec![
            format!("-- new keys computed by uuidforge from: {};", self.read),
            format!("-- COPY {} (old, new): one row per key", self.map),
        ]
    }

    /// Reads the old keys, computes the new ones from `secret` and copies
    /// them into the map; the rows keyed.
    pub async fn fill(
        &self,
        client: &tokio_postgres::Client,
        secret: &[u8],
    ) -> Result<usize, DbError> {
        let rows = uuidforge_db::client::text_and_times(client, &self.read).await?;
        let keys = new_keys(&rows, self.ordered, secret)?;
        uuidforge_db::client::copy_key_map(client, &self.map, &rows, &keys).await?;
        Ok(rows.len())
    }
}

/// The new key of each row, in the order the read returned them:
/// `v7_from(time, old key, secret)` with the row's time (or the
/// synthesized one).
///
/// ```
/// use uuidforge_db::ops::key::new_keys;
/// let rows = vec![("1".to_string(), None), ("2".to_string(), None)];
/// let keys = new_keys(&rows, false, b"secret").unwrap();
/// assert!(keys[0] < keys[1] && keys[0].get_version_num() == 7);
/// ```
pub fn new_keys(
    rows: &[(String, Option<i64>)],
    ordered: bool,
    secret: &[u8],
) -> Result<Vec<uuid::Uuid>, DbError> {
    rows.iter()
        .enumerate()
        .map(|(i, (old, ms))| {
            let ms = match (ordered, ms) {
                (true, Some(ms)) => u64::try_from(*ms).map_err(|_| {
                    DbError::invalid(
                        "order-by",
                        format!(
                            "row with key '{old}' has a time before 1970 (expected 1970 to 10889)"
                        ),
                    )
                })?,
                (true, None) => {
                    return Err(DbError::invalid(
                        "order-by",
                        format!("row with key '{old}' has no time (expected a time in every row)"),
                    ))
                }
                (false, _) => SYNTHESIZED_EPOCH_MS + i as u64,
            };
            uuidforge::generator::v7_from(ms, old.as_bytes(), secret)
                .map_err(|e| DbError::invalid("order-by", format!("row with key '{old}': {e}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesized_keys_keep_the_old_order_and_come_back_the_same() {
        let rows: Vec<(String, Option<i64>)> = (1..=5000).map(|i| (i.to_string(), None)).collect();
        let a = new_keys(&rows, false, b"secret").unwrap();
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, new_keys(&rows, false, b"secret").unwrap());
        assert_ne!(a, new_keys(&rows, false, b"other").unwrap());
        assert!(a.iter().all(|u| u.get_version_num() == 7));
    }

    #[test]
    fn times_from_a_column_order_the_keys() {
        let rows = vec![
            ("b".to_string(), Some(1_000)),
            ("a".to_string(), Some(2_000)),
        ];
        let keys = new_keys(&rows, true, b"s").unwrap();
        assert!(keys[0] < keys[1]);
        let err = new_keys(&[("x".into(), Some(-1))], true, b"s").unwrap_err();
        assert!(
            err.context == "order-by" && err.message.contains("'x'"),
            "{err}"
        );
        let err = new_keys(&[("y".into(), None)], true, b"s").unwrap_err();
        assert!(
            err.message.contains("no time") && err.message.contains("'y'"),
            "{err}"
        );
    }
}

//! Data actions: steps whose work is computed by uuidforge between reading
//! and writing rows — the new keys of a key migration (computed by the
//! library from each row's time and a secret, copied into a key map), and
//! the values a merge rewrites in place. They run through [`DataIo`], the
//! little a data action needs of a database session, which the runner
//! provides (and a test's fake): an operation plans them, never runs them.

use super::one_line;
use super::{Statement, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};

/// What a data action needs of the database, in the change's transaction.
#[allow(async_fn_in_trait)]
pub trait DataIo {
    /// The rows of `sql`: (text, Unix milliseconds or NULL).
    async fn text_and_times(&self, sql: &str) -> Result<Vec<(String, Option<i64>)>, DbError>;
    /// `keys[i]` copied into `map` as the new key of `rows[i]`'s text.
    async fn copy_key_map(
        &self,
        map: &str,
        rows: &[(String, Option<i64>)],
        keys: &[Uuid],
    ) -> Result<(), DbError>;
    /// The first column of the first row of `statement`, if any row.
    async fn text(&self, statement: &Statement) -> Result<Option<String>, DbError>;
    /// Runs `statement`; the rows it changed.
    async fn run(&self, statement: &Statement) -> Result<u64, DbError>;
}

/// The values steps kept by name (`merge_id`), for later bindings.
pub type Outputs = BTreeMap<String, String>;

/// A data action, as a step carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Data {
    /// New keys computed and copied into a key map.
    Keys(NewKeys),
    /// Values rewritten in place and logged.
    Implicit(Implicit),
}

impl Data {
    /// What it does, for progress and the printed plan.
    pub fn what(&self) -> &'static str {
        match self {
            Data::Keys(_) => "compute the new keys and copy them into the map",
            Data::Implicit(_) => "rewrite the values outside the declared references",
        }
    }

    /// Its printed lines.
    pub fn printed(&self) -> Vec<String> {
        match self {
            Data::Keys(keys) => keys.printed(),
            Data::Implicit(implicit) => implicit.printed(),
        }
    }

    /// Whether it needs the run's secret.
    pub fn needs_secret(&self) -> bool {
        matches!(self, Data::Keys(k) if k.given.is_none())
    }

    /// Runs it: the name of what it counts (as a report names it) and how
    /// many.
    pub async fn run(
        &self,
        io: &impl DataIo,
        secret: &[u8],
        outputs: &Outputs,
    ) -> Result<(&'static str, u64), DbError> {
        match self {
            Data::Keys(keys) => Ok(("keyed_rows", keys.fill(io, secret).await?)),
            Data::Implicit(implicit) => Ok(("implicit", implicit.rewrite(io, outputs).await?)),
        }
    }
}

/// Where synthesized times start (2000-01-01T00:00:00Z): without
/// `--order-by`, row `i` in the old key order gets this time plus `i`
/// milliseconds, so a re-run gives the same keys.
pub const SYNTHESIZED_EPOCH_MS: u64 = 946_684_800_000;

/// New keys given rather than computed: each old key's text → the new key
/// another database gave its row (`migrate-key --keys-from`: a logical
/// replication subscriber takes its publisher's keys, which rows written
/// during a migration in batches took from the clock).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct GivenKeys(pub std::sync::Arc<BTreeMap<String, Uuid>>);

impl std::fmt::Debug for GivenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GivenKeys({} keys)", self.0.len())
    }
}

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
    /// The keys to give, when another database has them: no secret, no
    /// computation (never written into a plan's state: one transaction
    /// only).
    #[serde(skip)]
    pub given: Option<GivenKeys>,
}

impl NewKeys {
    /// Its printed lines.
    pub fn printed(&self) -> Vec<String> {
        let how = match &self.given {
            Some(given) => format!(
                "-- new keys as the other database gave them, {} keys, for: {};",
                given.0.len(),
                self.read
            ),
            None => format!("-- new keys computed by uuidforge from: {};", self.read),
        };
        vec![
            how,
            format!("-- COPY {} (old, new): one row per key", self.map),
        ]
    }

    /// Reads the old keys, computes the new ones from `secret` (or takes
    /// the given ones) and copies them into the map; the rows keyed.
    pub async fn fill(&self, io: &impl DataIo, secret: &[u8]) -> Result<u64, DbError> {
        let rows = io.text_and_times(&self.read).await?;
        let keys = match &self.given {
            Some(given) => given_keys(&rows, given)?,
            None => new_keys(&rows, self.ordered, secret)?,
        };
        io.copy_key_map(&self.map, &rows, &keys).await?;
        Ok(rows.len() as u64)
    }
}

/// The given key of each row; refused, naming the first, when a row has
/// none there (the two databases do not hold the same rows).
fn given_keys(rows: &[(String, Option<i64>)], given: &GivenKeys) -> Result<Vec<Uuid>, DbError> {
    let missing: Vec<&str> = rows
        .iter()
        .filter(|(old, _)| !given.0.contains_key(old))
        .map(|(old, _)| old.as_str())
        .collect();
    if let Some(first) = missing.first() {
        return Err(DbError::refusal(
            "keys-from",
            Refusal::new(
                Reason::Other,
                format!(
                    "{} row(s) have no key in the other database, the first with key '{first}' (expected every row here there too, its old key kept beside its new one): let the subscriber catch up to the migration first",
                    missing.len()
                ),
            )
            .way_out(WayOut::SameKeyFile),
        ));
    }
    Ok(rows.iter().map(|(old, _)| given.0[old]).collect())
}

/// The new key of each row, in the order the read returned them:
/// `v7_from(time, old key, secret)` with the row's time (or the
/// synthesized one).
///
/// ```
/// use uuidforge_change::action::new_keys;
/// let rows = vec![("1".to_string(), None), ("2".to_string(), None)];
/// let keys = new_keys(&rows, false, b"secret").unwrap();
/// assert!(keys[0] < keys[1] && keys[0].get_version_num() == 7);
/// ```
pub fn new_keys(
    rows: &[(String, Option<i64>)],
    ordered: bool,
    secret: &[u8],
) -> Result<Vec<Uuid>, DbError> {
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

/// The values a merge rewrites in place, and how each is logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Implicit {
    /// Logs one rewritten value: `$1` merge number, `$2` the old key,
    /// `$3` its image (JSON text).
    pub log_sql: String,
    /// The values.
    pub values: Vec<ImplicitValue>,
    /// The output of an earlier step holding the merge number.
    #[serde(default = "merge_id")]
    pub merge_id: String,
}

fn merge_id() -> String {
    "merge_id".into()
}

/// One value to rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplicitValue {
    /// Its table (quoted, qualified).
    pub table: String,
    /// Its column.
    pub column: String,
    /// `schema.table.column`, for messages.
    pub column_name: String,
    /// Its row's primary key, as JSON text (`$1` of the statements).
    pub key: String,
    /// The merged key it holds.
    pub old: Uuid,
    /// (as written, the new key written the same way).
    pub spellings: Vec<(String, String)>,
    /// Reads the value as text, locking the row (`$1` the key).
    pub read_sql: String,
    /// Writes it (`$1` the key, `$2` the new text).
    pub write_sql: String,
}

impl Implicit {
    /// Its printed lines.
    pub fn printed(&self) -> Vec<String> {
        self.values
            .iter()
            .map(|v| {
                format!(
                    "-- rewrite {} of row {} in place: {}",
                    one_line(&v.column_name),
                    one_line(&v.key),
                    v.spellings
                        .iter()
                        .map(|(w, r)| format!("'{}' → '{}'", one_line(w), one_line(r)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect()
    }

    /// Rewrites the values in place, each read and written whole as text
    /// and logged under the merge number an earlier step kept; how many.
    pub async fn rewrite(&self, io: &impl DataIo, outputs: &Outputs) -> Result<u64, DbError> {
        let merge_id = outputs
            .get(&self.merge_id)
            .filter(|m| m.parse::<i64>().is_ok())
            .ok_or_else(|| DbError::unreadable("merge", "no merge number before the rewrite"))?;
        let text = |t: &str| Value::Text(Some(t.to_string()));
        for value in &self.values {
            let before = io
                .text(&Statement::with(
                    &value.read_sql,
                    &[("key", text(&value.key))],
                ))
                .await
                .map_err(|e| e.within("read a value to rewrite"))?
                .unwrap_or_default();
            let after = value
                .spellings
                .iter()
                .fold(before.clone(), |after, (written, replacement)| {
                    after.replace(written.as_str(), replacement)
                });
            if after == before {
                // find saw it, the value's text does not show it (an
                // escape): refuse rather than leave it behind.
                return Err(DbError::refusal(
                    "implicit",
                    Refusal::new(
                        Reason::Other,
                        format!(
                            "{} of row {} holds {}, but not as {} in its text (nothing was changed)",
                            value.column_name,
                            value.key,
                            value.old,
                            value.spellings.iter().map(|(w, _)| w.as_str()).collect::<Vec<_>>().join(" or ")
                        ),
                    )
                    .way_out(WayOut::MergeWithoutImplicit),
                ));
            }
            io.run(&Statement::with(
                &value.write_sql,
                &[("key", text(&value.key)), ("value", text(&after))],
            ))
            .await?;
            let image = serde_json::json!([{
                "table": value.table, "key": value.key, "column": value.column,
                "before": before, "after": after,
            }])
            .to_string();
            io.run(&Statement::with(
                &self.log_sql,
                &[
                    ("merge_id", text(merge_id)),
                    ("old", Value::Uuid(value.old)),
                    ("image", text(&image)),
                ],
            ))
            .await?;
        }
        Ok(self.values.len() as u64)
    }
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
    fn given_keys_are_taken_as_given_and_a_row_without_one_is_refused() {
        let rows: Vec<(String, Option<i64>)> = ["1", "2", "3"]
            .iter()
            .map(|k| (k.to_string(), None))
            .collect();
        let mine = new_keys(&rows, false, b"publisher").unwrap();
        let mut map = BTreeMap::new();
        for ((old, _), new) in rows.iter().zip(&mine).take(2) {
            map.insert(old.clone(), *new);
        }
        let given = GivenKeys(std::sync::Arc::new(map));
        assert_eq!(given_keys(&rows[..2], &given).unwrap(), mine[..2]);
        let e = given_keys(&rows, &given).unwrap_err();
        assert_eq!(e.context, "keys-from");
        assert!(
            e.to_string()
                .contains("1 row(s) have no key in the other database, the first with key '3'"),
            "{e}"
        );
        let step = Data::Keys(NewKeys {
            read: "SELECT".into(),
            map: "m".into(),
            ordered: false,
            given: Some(given),
        });
        assert!(!step.needs_secret());
        assert!(step.printed()[0].contains("the other database gave them, 2 keys"));
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

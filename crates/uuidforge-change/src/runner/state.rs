//! The state of the changes under way, owned by the runner: one table,
//! `uuidforge_changes`, in the schema of each change's target (made when a
//! change in batches begins, dropped when the last one ends, readable by
//! every role so that every operator's run sees what is under way), one
//! row per change in batches: what it is, the tables it writes (by oid),
//! its plan as recorded, its next step, where a backfill stands, the
//! transaction ids its steps marked, the process running it.
//!
//! Every statement of the table is the runner's ([`super::postgres`] runs
//! them); no operation writes or reads it. Rows of the table an earlier
//! version kept (`uuidforge_migration`) are read too, so that a migration
//! it left under way is never run over.

use crate::ops::ChangePlan;
use serde::Deserialize;
use uuidforge_db::client::DbError;
use uuidforge_db::error::WayOut;
use uuidforge_ident::quote_literal;

/// The state table's name.
pub const STATE_TABLE: &str = "uuidforge_changes";

/// The table an earlier version kept the state of its batched migrations
/// in.
pub const LEGACY_TABLE: &str = "uuidforge_migration";

/// The transaction-level advisory lock that serializes making and dropping
/// the state table of one schema (two changes beginning at once).
pub(super) fn table_lock(schema: &str) -> String {
    format!(
        "SELECT pg_advisory_xact_lock(hashtext({}), hashtext({}))",
        quote_literal(STATE_TABLE),
        quote_literal(schema)
    )
}

/// A change under way, as the state table says.
#[derive(Debug, Clone, Deserialize)]
pub struct UnderWay {
    /// Its row.
    pub id: i64,
    /// The state table holding it (quoted, qualified).
    pub state_table: String,
    /// The operation.
    pub operation: String,
    /// What it is about.
    pub target: String,
    /// The tables it writes.
    pub tables: Vec<i64>,
    /// The plan recorded when it began (JSON).
    pub plan: serde_json::Value,
    /// Its next step (index into the plan's steps).
    pub step: i64,
    /// When it began.
    pub started_at: String,
    /// When it last moved.
    pub updated_at: String,
    /// The server process of the run that holds it, if one was recorded.
    pub pid: Option<i32>,
    /// Recorded by an earlier version of uuidforge.
    #[serde(default)]
    pub legacy: bool,
}

impl UnderWay {
    /// The recorded plan.
    pub fn change(&self) -> Result<ChangePlan, DbError> {
        serde_json::from_value(self.plan.clone()).map_err(|e| {
            DbError::unreadable(
                "read the change's state",
                format!("the recorded plan does not parse: {e}"),
            )
        })
    }

    /// The steps of the recorded plan.
    fn steps(&self) -> Vec<serde_json::Value> {
        let steps = if self.legacy {
            self.plan.get("steps")
        } else {
            self.plan.get("run").and_then(|r| r.get("steps"))
        };
        steps
            .and_then(|s| s.as_array())
            .cloned()
            .unwrap_or_default()
    }

    /// `step N of M: what it does` (or `finish`).
    pub fn next_step(&self) -> String {
        let steps = self.steps();
        let what = usize::try_from(self.step)
            .ok()
            .and_then(|i| steps.get(i))
            .and_then(|s| s.get("what").and_then(|w| w.as_str()))
            .unwrap_or(if self.step as usize >= steps.len() {
                "finish"
            } else {
                "compute the new keys and copy them into the map"
            });
        format!("step {} of {}: {what}", self.step + 1, steps.len())
    }

    /// What completes it: its operation taken up again on its target (one
    /// begun by an earlier version of uuidforge, by that version).
    pub fn resume(&self) -> (WayOut, Option<&'static str>) {
        (
            WayOut::Resume {
                operation: self.operation.clone(),
                target: self.target.clone(),
            },
            self.legacy.then_some(
                "it was begun by an earlier version of uuidforge: complete it with that version",
            ),
        )
    }

    /// `e` with the way out of this change under way.
    pub fn resumed(&self, e: DbError) -> DbError {
        let (way_out, note) = self.resume();
        let e = e.with_way_out(way_out);
        match note {
            Some(note) => e.with_hint(note),
            None => e,
        }
    }

    /// What it is: `migrate-key of public.parent in batches`.
    pub fn what(&self) -> String {
        format!("{} of {} in batches", self.operation, self.target)
    }

    /// When it began and moved last, and its next step.
    pub fn progress(&self) -> String {
        format!(
            "begun {}, last step {}; next {}",
            self.started_at,
            self.updated_at,
            self.next_step()
        )
    }
}

/// The state tables of the database, quoted and qualified, with whether
/// each is an earlier version's.
pub(super) const TABLES_SQL: &str = "SELECT coalesce(json_agg(json_build_array(c.oid::regclass::text, c.relname = $1) ORDER BY c.oid), '[]')::text FROM pg_class c WHERE c.relname IN ($1, $2) AND c.relkind = 'r'";

/// The changes under way among `tables` (quoted, qualified, legacy), that
/// write one of `oids`: one row of JSON text, an array of [`UnderWay`].
pub(super) fn rows_sql(tables: &[(String, bool)]) -> String {
    let parts: Vec<String> = tables
        .iter()
        .map(|(table, legacy)| {
            if *legacy {
                format!(
                    "SELECT 0::int8 AS id, {t} AS state_table, 'migrate-key' AS operation, table_name AS target, \
                     array(SELECT to_regclass(r)::oid::int8 FROM jsonb_array_elements_text(plan->'backup'->'relations') r) AS tables, \
                     plan, (step - 0)::int8 AS step, to_char(started_at, 'YYYY-MM-DD HH24:MI:SS TZ') AS started_at, to_char(updated_at, 'YYYY-MM-DD HH24:MI:SS TZ') AS updated_at, NULL::int AS pid, true AS legacy FROM {table}",
                    t = quote_literal(table)
                )
            } else {
                format!(
                    "SELECT id, {t} AS state_table, operation, target, tables::int8[] AS tables, plan, step::int8, \
                     to_char(started_at, 'YYYY-MM-DD HH24:MI:SS TZ') AS started_at, to_char(updated_at, 'YYYY-MM-DD HH24:MI:SS TZ') AS updated_at, pid, false AS legacy FROM {table}",
                    t = quote_literal(table)
                )
            }
        })
        .collect();
    format!(
        "SELECT coalesce(json_agg(u ORDER BY u.started_at), '[]')::text FROM ({}) u WHERE u.tables && $1::int8[]",
        parts.join(" UNION ALL ")
    )
}

/// Where a change stands, read with its row locked (in the caller's
/// transaction): its next step, the backfill's next and end blocks, and
/// the marks (name → transaction id).
pub struct Position {
    /// The next step.
    pub step: usize,
    /// The backfill's next block.
    pub next_block: Option<i64>,
    /// The backfill's end block.
    pub end_block: Option<i64>,
    /// Transaction ids recorded by name.
    pub marks: std::collections::BTreeMap<String, String>,
}

/// Where a change in batches is recorded: its state table and row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The state table (quoted, qualified).
    pub table: String,
    /// The row.
    pub id: i64,
    /// The schema it is in.
    pub schema: String,
}

/// The statement making the state table of `table` (quoted, qualified)
/// in `schema` when missing, readable by every role.
pub(super) fn create_sql(table: &str, schema: &str) -> String {
    format!(
        "{}; CREATE TABLE IF NOT EXISTS {table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
         operation text NOT NULL, target text NOT NULL, tables oid[] NOT NULL, plan jsonb NOT NULL, \
         step int NOT NULL, next_block bigint, end_block bigint, marks jsonb NOT NULL DEFAULT '{{}}', pid int, \
         started_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now()); \
         GRANT SELECT ON {table} TO PUBLIC",
        table_lock(schema)
    )
}

/// The statement dropping the state table of `schema` once it is empty.
pub(super) fn drop_when_empty_sql(table: &str, schema: &str) -> String {
    format!(
        "{}; DO $uuidforge$ BEGIN IF NOT EXISTS (SELECT FROM {table}) THEN DROP TABLE {table}; END IF; END $uuidforge$",
        table_lock(schema)
    )
}

/// The plan of `change` as recorded.
pub(super) fn plan_json(change: &ChangePlan) -> Result<String, DbError> {
    serde_json::to_string(change).map_err(|e| DbError::unreadable("plan", e.to_string()))
}

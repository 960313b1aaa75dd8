//! Tables a key migration writes that are in a publication. Updates of a
//! published table need a replica identity, which by default is its
//! primary key: a migration in one transaction drops the key before it
//! fills the new columns, so each such table (and partition) is given
//! `REPLICA IDENTITY FULL` for the change and its own identity back after
//! (in batches the key is never missing while rows are written; an
//! identity by index is given back in the swap, on the index made again).
//! Logical replication carries rows, not the change: the plan names every
//! publication and what its subscribers must do.

use crate::action::{Action, Table};
use crate::ops::Read;
use serde::{Deserialize, Serialize};
use uuidforge_db::plan::{Param, Query};

/// The read of every written table and partition in a publication (`$1`
/// the written tables' oids, `text[]`): one row of JSON text, a list of
/// [`Published`].
pub const PUBLISHED_SQL: &str = r#"WITH written AS (
    SELECT a::oid AS rel FROM unnest($1::text[]) a
    UNION SELECT t.relid FROM unnest($1::text[]) a CROSS JOIN LATERAL pg_partition_tree(a::oid) t)
SELECT coalesce(json_agg(x ORDER BY x.name), '[]')::text FROM (
  SELECT c.oid::int8 AS "table", quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name,
    c.relreplident::text AS identity,
    (SELECT ic.relname FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
      WHERE i.indrelid = c.oid AND i.indisreplident) AS identity_index,
    json_agg(p.pubname ORDER BY p.pubname) AS publications,
    bool_or(p.pubupdate OR p.pubdelete) AS updates
  FROM written w JOIN pg_class c ON c.oid = w.rel JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_publication p ON c.oid IN (SELECT relid FROM pg_get_publication_tables(p.pubname::text))
  GROUP BY c.oid, n.nspname, c.relname, c.relreplident) x"#;

/// The read of the written tables' publications.
pub fn read(written: &[u32]) -> Read {
    Read::new(
        "publications",
        "read the publications of the tables written",
        Query {
            sql: PUBLISHED_SQL.to_string(),
            params: vec![Param::TextArray(
                written.iter().map(u32::to_string).collect(),
            )],
        },
    )
}

/// A table (or partition) the migration writes that a publication
/// publishes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Published {
    /// Its oid.
    pub table: u32,
    /// Quoted, qualified.
    pub name: String,
    /// `relreplident`: `d` (the primary key), `i` (an index), `f`, `n`.
    pub identity: String,
    /// The index of an identity by index.
    pub identity_index: Option<String>,
    /// The publications publishing it.
    pub publications: Vec<String>,
    /// Whether one of them publishes updates or deletes (which need a
    /// replica identity).
    pub updates: bool,
}

impl Published {
    /// Whether its identity goes while the change writes its rows.
    fn needs_full(&self) -> bool {
        self.updates && matches!(self.identity.as_str(), "d" | "i")
    }

    /// `REPLICA IDENTITY FULL` for the change.
    pub fn full(&self) -> Option<Action> {
        self.needs_full().then(|| {
            Action::Table(Table::ReplicaIdentity {
                table: self.name.clone(),
                identity: "FULL".into(),
            })
        })
    }

    /// Its own identity back.
    pub fn back(&self) -> Option<Action> {
        if !self.needs_full() {
            return None;
        }
        let identity = match (&*self.identity, &self.identity_index) {
            ("i", Some(index)) => format!("USING INDEX {}", uuidforge_ident::quote_ident(index)),
            _ => "DEFAULT".into(),
        };
        Some(Action::Table(Table::ReplicaIdentity {
            table: self.name.clone(),
            identity,
        }))
    }
}

/// What the plan says of publications: each with the tables it publishes
/// and what its subscribers must do.
pub fn plan_lines(published: &[Published]) -> Vec<String> {
    let mut names: Vec<&str> = published
        .iter()
        .flat_map(|p| p.publications.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|publication| {
            let tables: Vec<&str> = published
                .iter()
                .filter(|p| p.publications.iter().any(|q| q == publication))
                .map(|p| p.name.as_str())
                .collect();
            format!(
                "  publication {} publishes {}: logical replication carries rows, not this change — \
                 disable each subscription to it before --apply (ALTER SUBSCRIPTION … DISABLE), and make \
                 the same change on the subscriber's tables (their keys and references become uuid, \
                 the same key file gives the same keys) before enabling it again",
                uuidforge_ident::as_typed(publication),
                tables.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn published(identity: &str, index: Option<&str>, updates: bool) -> Published {
        Published {
            table: 1,
            name: "public.accounts".into(),
            identity: identity.into(),
            identity_index: index.map(str::to_string),
            publications: vec!["feed".into(), "cdc".into()],
            updates,
        }
    }

    #[test]
    fn an_identity_by_key_or_index_is_full_during_the_change_and_back_after() {
        let p = published("d", None, true);
        assert_eq!(
            p.full().unwrap().statements(),
            ["ALTER TABLE public.accounts REPLICA IDENTITY FULL"]
        );
        assert_eq!(
            p.back().unwrap().statements(),
            ["ALTER TABLE public.accounts REPLICA IDENTITY DEFAULT"]
        );
        let p = published("i", Some("accounts_Email"), true);
        assert_eq!(
            p.back().unwrap().statements(),
            ["ALTER TABLE public.accounts REPLICA IDENTITY USING INDEX \"accounts_Email\""]
        );
        assert!(published("f", None, true).full().is_none());
        assert!(published("d", None, false).full().is_none());
        let lines = plan_lines(&[published("d", None, true)]);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("  publication cdc publishes public.accounts:"));
    }
}

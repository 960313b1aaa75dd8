//! Tables a key migration writes that are in a publication. Updates of a
//! published table need a replica identity, which by default is its
//! primary key: a migration in one transaction drops the key before it
//! fills the new columns, so each such table (and partition) is given
//! `REPLICA IDENTITY FULL` for the change and its own identity back after
//! (in batches the key is never missing while rows are written; an
//! identity by index is given back in the swap, on the index made again).
//!
//! Logical replication carries rows, not the change, and a subscriber's
//! tables have the old shape: the change's own updates (new columns being
//! filled, under names the subscriber does not have) would stop it. In one
//! transaction, each publication publishing a written table publishes
//! nothing while the change writes (`ALTER PUBLICATION … SET (publish =
//! '')` at its start, its own flags back at its end, both inside the
//! change's transaction, so no other transaction sees the difference).
//! The application's rows written after the change have the new shape: a
//! subscriber applies every row up to the change and stops at the first
//! one after, retrying; the same migration on the subscriber with the
//! change's key file (the same rows, so the same keys) lets it go on, and
//! nothing is lost. In batches the application writes while the change
//! does: each table a `FOR TABLE` publication names is published with its
//! own columns only until the swap ([`listed_during_batches`]), whose own
//! writes are held back, and the subscriber's migration takes the
//! publisher's keys (`--keys-from`, [`super::keys_from`]). The plan names
//! every publication and says so.

use super::{Kind, Migration, Placed, Schedule, SoFar, Target};
use crate::action::{Action, Object, Table};
use crate::ops::key::phase::Phase;
use crate::ops::{Line, Named, Read, Reading};
use serde::{Deserialize, Serialize};
use uuidforge_db::error::{DbError, WayOut};
use uuidforge_db::plan::{Param, Query};

/// The read of the tables written that publications publish.
pub(crate) const PUBLISHED: Named<Vec<Published>> = Named::new(
    "publications",
    "read the publications of the tables written",
);

/// The read of the publications publishing them.
pub(crate) const PUBLICATIONS: Named<Vec<Publication>> = Named::new(
    "publication_flags",
    "read what the publications of the tables written publish",
);

pub(super) struct Publications;

impl Kind for Publications {
    fn name(&self) -> &'static str {
        "publications of the tables written"
    }

    fn reads(&self, target: &Target, _: &SoFar) -> Result<Vec<Read>, DbError> {
        let written: Vec<u32> = target.written().iter().map(|r| r.oid).collect();
        Ok(vec![read(&written), read_publications(&written)])
    }

    /// Subscribers are not to get the change's own writes (new columns
    /// they lack): its publications publish nothing until it ends; in
    /// batches, each table a publication lists is published with its own
    /// columns only until the swap. A published table keeps a replica
    /// identity while one transaction has dropped its key.
    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let (quiet, back) = Publication::quieted(&m.publications);
        let mut out = Placed::actions(Phase::QuietPublications, quiet);
        if schedule.in_batches() {
            let (listed, unlisted) = listed_during_batches(&m.publications);
            out.extend(Placed::actions(Phase::PublishOwnColumns, listed));
            out.extend(Placed::actions(Phase::PublishAllColumns, unlisted));
        } else {
            out.extend(Placed::actions(
                Phase::IdentityFull,
                m.published.iter().filter_map(Published::full),
            ));
        }
        out.extend(Placed::actions(
            Phase::IdentityBack,
            m.published.iter().filter_map(Published::back),
        ));
        out.extend(Placed::actions(Phase::PublishingBack, back));
        Ok(out)
    }
}

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
fn read(written: &[u32]) -> Read {
    PUBLISHED.read(Query {
        sql: PUBLISHED_SQL.to_string(),
        params: vec![Param::TextArray(
            written.iter().map(u32::to_string).collect(),
        )],
    })
}

/// The read of the publications publishing a written table or partition
/// (`$1` the written tables' oids, `text[]`): one row of JSON text, a list
/// of [`Publication`].
pub const PUBLICATIONS_SQL: &str = r#"WITH written AS (
    SELECT a::oid AS rel FROM unnest($1::text[]) a
    UNION SELECT t.relid FROM unnest($1::text[]) a CROSS JOIN LATERAL pg_partition_tree(a::oid) t)
SELECT coalesce(json_agg(x ORDER BY x.name), '[]')::text FROM (
  SELECT p.pubname AS name,
    concat_ws(', ', CASE WHEN p.pubinsert THEN 'insert' END, CASE WHEN p.pubupdate THEN 'update' END,
      CASE WHEN p.pubdelete THEN 'delete' END, CASE WHEN p.pubtruncate THEN 'truncate' END) AS publish,
    pg_get_userbyid(p.pubowner) AS owner, pg_has_role(p.pubowner, 'USAGE') AS may_alter,
    p.puballtables OR EXISTS (SELECT FROM pg_publication_namespace pn WHERE pn.pnpubid = p.oid) AS all_tables,
    (SELECT coalesce(json_agg(json_build_object('table', pr.prrelid::int8,
        'name', quote_ident(n.nspname) || '.' || quote_ident(c.relname), 'has_columns', pr.prattrs IS NOT NULL,
        'columns', (SELECT json_agg(quote_ident(a.attname) ORDER BY a.attnum) FROM pg_attribute a
          WHERE a.attrelid = pr.prrelid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''),
        'filter', pg_get_expr(pr.prqual, pr.prrelid)) ORDER BY n.nspname, c.relname), '[]')
      FROM pg_publication_rel pr JOIN pg_class c ON c.oid = pr.prrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE pr.prpubid = p.oid AND pr.prrelid IN (SELECT rel FROM written)) AS listed
  FROM pg_publication p
  WHERE EXISTS (SELECT FROM pg_get_publication_tables(p.pubname::text) t WHERE t.relid IN (SELECT rel FROM written))) x"#;

/// The read of the publications of the written tables.
fn read_publications(written: &[u32]) -> Read {
    PUBLICATIONS.read(Query {
        sql: PUBLICATIONS_SQL.to_string(),
        params: vec![Param::TextArray(
            written.iter().map(u32::to_string).collect(),
        )],
    })
}

/// A publication publishing a table the migration writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Publication {
    /// Its name.
    pub name: String,
    /// What it publishes: `insert, update, delete, truncate`, or fewer.
    pub publish: String,
    /// Its owner.
    pub owner: String,
    /// Whether the migrating role may alter it (its owner, a member, or a
    /// superuser).
    pub may_alter: bool,
    /// `FOR ALL TABLES` or `FOR TABLES IN SCHEMA`: no column list can be
    /// given to its tables.
    #[serde(default)]
    pub all_tables: bool,
    /// The written tables it names (`FOR TABLE`).
    #[serde(default)]
    pub listed: Vec<ListedTable>,
}

/// A written table a publication names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedTable {
    /// Its oid.
    pub table: u32,
    /// Quoted, qualified.
    pub name: String,
    /// Whether it is published with a column list.
    pub has_columns: bool,
    /// Its columns (quoted), generated ones left out (not published).
    #[serde(default)]
    pub columns: Option<Vec<String>>,
    /// Its row filter.
    #[serde(default)]
    pub filter: Option<String>,
}

/// In batches, the written tables that `FOR TABLE` publications name
/// without a column list: published with their own columns only (a list)
/// from the prepare step on, so the columns the change adds and fills
/// never reach a subscriber, and named again without a list in the swap
/// (whose own writes are held back). The actions of both.
pub fn listed_during_batches(publications: &[Publication]) -> (Vec<Action>, Vec<Action>) {
    let mut listed = Vec::new();
    let mut unlisted = Vec::new();
    for p in publications.iter().filter(|p| p.may_alter && !p.all_tables) {
        let publication = uuidforge_ident::quote_ident(&p.name);
        for t in p.listed.iter().filter(|t| !t.has_columns) {
            let drop = Action::Object(Object::DropPublicationTable {
                publication: publication.clone(),
                table: t.name.clone(),
            });
            let add = |columns: Option<Vec<String>>| {
                Action::Object(Object::AddPublicationTable {
                    publication: publication.clone(),
                    table: t.name.clone(),
                    columns,
                    filter: t.filter.clone(),
                })
            };
            listed.extend([drop.clone(), add(t.columns.clone())]);
            unlisted.extend([drop, add(None)]);
        }
    }
    (listed, unlisted)
}

impl Publication {
    /// Publishing nothing for the change, and its own flags back after:
    /// those the role may alter that publish something.
    pub fn quieted(publications: &[Publication]) -> (Vec<Action>, Vec<Action>) {
        let set = |p: &Publication, publish: &str| -> Action {
            Action::Object(Object::SetPublish {
                publication: p.name.clone(),
                publish: publish.to_string(),
            })
        };
        let quiet: Vec<&Publication> = publications
            .iter()
            .filter(|p| p.may_alter && !p.publish.is_empty())
            .collect();
        (
            quiet.iter().map(|p| set(p, "")).collect(),
            quiet.iter().map(|p| set(p, &p.publish)).collect(),
        )
    }
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

/// What the plan says of publications: each with the tables it publishes,
/// whether the change's own writes are held back from it (`batched`: they
/// are not), and what its subscribers must do.
pub fn plan_lines(
    published: &[Published],
    publications: &[Publication],
    batched: bool,
) -> Vec<Line> {
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
            let flags = publications.iter().find(|p| p.name == publication);
            let (what, way_out) = match flags {
                Some(p) if batched && p.all_tables && !p.publish.is_empty() => ("WARNING: in batches the columns the change adds are published while it fills them \
                     (a publication of all tables, or of a schema's, takes no column list to hide them), and so is \
                     the key map it keeps until the end: a PostgreSQL subscriber replicating these tables would stop \
                     at them for good (a change-data-capture consumer takes them); one transaction holds its own \
                     writes back"
                    .to_string(), Some(WayOut::OneTransaction)),
                Some(p) if batched && p.may_alter && !p.publish.is_empty() => ("in batches each of its tables is published with its own columns only (a column list) until \
                     the swap, so the columns the change adds never reach a subscriber, and the swap's own writes are \
                     held back; a subscriber applies every row up to the swap and stops at the first row after (its tables \
                     still have the old types; rows written during the batches took their keys from the clock), and goes on, \
                     nothing lost, once its own migration there gives each row the key it has here"
                    .to_string(), Some(WayOut::KeysFrom)),
                Some(p) if !p.may_alter && !p.publish.is_empty() => (format!(
                    "WARNING: the change's own writes are published (new columns a subscriber's tables \
                     lack), since only its owner {} may hold them back (ALTER PUBLICATION … SET (publish \
                     = '')): a subscriber replicating these tables would stop at them for good; run the \
                     change as {0} or a superuser",
                    uuidforge_ident::as_typed(&p.owner)
                ), None),
                _ => ("the change's own writes are held back from it (it publishes nothing inside the \
                     change's transaction); a subscriber applies every row up to the change and stops at \
                     the first row after (its tables still have the old types), and goes on, nothing lost, \
                     once the same migration runs there"
                    .to_string(), Some(WayOut::SameKeyFile)),
            };
            Line {
                text: format!(
                    "  publication {} publishes {}: {what}",
                    uuidforge_ident::as_typed(publication),
                    tables.join(", ")
                ),
                ways_out: way_out.into_iter().collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuidforge_db::error::Plain;

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
        let feed = |may_alter: bool| Publication {
            name: "feed".into(),
            publish: "insert, update".into(),
            owner: "Owner".into(),
            may_alter,
            all_tables: false,
            listed: vec![ListedTable {
                table: 1,
                name: "public.accounts".into(),
                has_columns: false,
                columns: Some(vec!["id".into(), "name".into()]),
                filter: Some("(name <> ''::text)".into()),
            }],
        };
        let lines: Vec<String> = plan_lines(&[published("d", None, true)], &[feed(true)], false)
            .iter()
            .map(|l| l.rendered(&Plain))
            .collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("  publication cdc publishes public.accounts:"));
        assert!(lines[1].contains("held back from it"), "{}", lines[1]);
        let lines: Vec<String> = plan_lines(&[published("d", None, true)], &[feed(false)], false)
            .iter()
            .map(|l| l.rendered(&Plain))
            .collect();
        assert!(
            lines[1].contains("only its owner \"Owner\" may"),
            "{}",
            lines[1]
        );
        let batched = plan_lines(&[published("d", None, true)], &[feed(true)], true);
        assert_eq!(batched[1].ways_out, [WayOut::KeysFrom]);
        let all = Publication {
            all_tables: true,
            ..feed(true)
        };
        assert!(plan_lines(
            &[published("d", None, true)],
            std::slice::from_ref(&all),
            true
        )[1]
        .text
        .contains("WARNING: in batches"));
        let (listed, unlisted) = listed_during_batches(&[feed(true), all, feed(false)]);
        let sql = |a: &[Action]| a.iter().flat_map(Action::statements).collect::<Vec<_>>();
        assert_eq!(
            sql(&listed),
            [
                "ALTER PUBLICATION \"feed\" DROP TABLE public.accounts",
                "ALTER PUBLICATION \"feed\" ADD TABLE public.accounts (id, name) WHERE ((name <> ''::text))"
            ]
        );
        assert_eq!(
            sql(&unlisted)[1],
            "ALTER PUBLICATION \"feed\" ADD TABLE public.accounts WHERE ((name <> ''::text))"
        );
        let (quiet, back) = Publication::quieted(&[feed(true), feed(false)]);
        assert_eq!(
            (quiet[0].statements(), back[0].statements(), back.len()),
            (
                vec!["ALTER PUBLICATION \"feed\" SET (publish = '')".to_string()],
                vec!["ALTER PUBLICATION \"feed\" SET (publish = 'insert, update')".to_string()],
                1
            )
        );
    }
}

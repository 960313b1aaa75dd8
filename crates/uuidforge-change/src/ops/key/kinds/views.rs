//! The views over a migration's columns (and the views over those): every
//! one read, dropped before the swap and made again over the new columns
//! after (options, owner, comment, privileges, a materialized view's
//! indexes and data), old keys in them translated; none may compare a
//! changed column with one the migration leaves as it is.

use super::{Kind, Migration, Placed, Schedule, SoFar, Staying, Target};
use crate::action::Action;
use crate::ops::key::phase::Phase;
use crate::ops::{Named, Read, Reading};
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_db::introspect::ViewDefinition;

/// The read of the views over the changed columns.
pub(crate) const VIEWS: Named<Vec<ViewDefinition>> =
    Named::new("views", "read the dependent views");

pub(super) struct Views;

impl Kind for Views {
    fn name(&self) -> &'static str {
        "views"
    }

    fn reads(&self, target: &Target, _: &SoFar) -> Result<Vec<Read>, DbError> {
        Ok(vec![VIEWS.read(
            uuidforge_db::introspect::dependent_views_query(&target.watched()),
        )])
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        check(m.snapshot, &m.watched(), &m.views)?;
        Ok(Vec::new())
    }

    fn place(&self, m: &Migration, _: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut out = Placed::actions(Phase::DropViews, Action::drop_views(&m.views));
        out.extend(Placed::actions(
            Phase::MakeViews,
            Action::create_views(&m.views, &m.snapshot.user),
        ));
        Ok(out)
    }
}

/// Refuses when a view over `watched` columns was not read, or compares a
/// changed column with one the migration leaves.
pub fn check(
    snapshot: &Snapshot,
    watched: &[(u32, i16)],
    views: &[ViewDefinition],
) -> Result<(), DbError> {
    let read: Vec<u32> = views.iter().map(|v| v.oid).collect();
    let mut unread: Vec<String> = snapshot
        .view_sources()
        .iter()
        .filter(|(v, s)| watched.contains(&(s.relation, s.column)) && !read.contains(&v.relation))
        .filter_map(|(v, _)| snapshot.relation(v.relation).map(|r| r.display_name()))
        .collect();
    unread.sort();
    unread.dedup();
    if !unread.is_empty() {
        return Err(DbError::refusal(
            "table",
            Refusal::new(
                Reason::View,
                format!(
                    "views {} show the key or its references but were not read (plan again)",
                    unread.join(", ")
                ),
            ),
        ));
    }
    if let Some((why, spec)) = unmigrated_comparison(snapshot, watched, views) {
        return Err(DbError::refusal(
            "table",
            Refusal::new(Reason::View, why).way_out(WayOut::AsReference { column: spec }),
        ));
    }
    Ok(())
}

/// A dependent view that compares a changed column (the key, a reference)
/// with a column the migration leaves as it is — a reference without a
/// foreign key: made again over the new `uuid` column, it would fail
/// (`operator does not exist: integer = uuid`). Found in the view's query
/// tree, so before anything runs.
fn unmigrated_comparison(
    snapshot: &Snapshot,
    watched: &[(u32, i16)],
    views: &[ViewDefinition],
) -> Option<(String, String)> {
    // A partition's column is its partitioned table's.
    let normal = |(rel, num): (u32, i16)| -> (u32, i16) {
        let Some(r) = snapshot.relation(rel) else {
            return (rel, num);
        };
        match snapshot.partition_root(rel) {
            Some(root) if r.is_partition => r
                .column(num)
                .and_then(|c| root.column_named(&c.name))
                .map_or((rel, num), |c| (root.oid, c.num)),
            _ => (rel, num),
        }
    };
    let recreated: Vec<u32> = views.iter().map(|v| v.oid).collect();
    let changed = |c: (u32, i16)| watched.contains(&normal(c)) || recreated.contains(&c.0);
    let column = |(rel, num): (u32, i16)| {
        snapshot
            .relation(rel)
            .and_then(|r| Some((r, r.column(num)?)))
    };
    let label = |c: (u32, i16)| {
        column(c)
            .map(|(r, col)| format!("{}.{}", r.display_name(), col.name))
            .unwrap_or_default()
    };
    for view in views {
        let Some(rule) = snapshot.view_rules.iter().find(|r| r.view == view.oid) else {
            continue;
        };
        let Some(tree) = uuidforge_db::nodes::parse(&rule.action) else {
            continue;
        };
        for (a, b) in uuidforge_db::nodes::compared_columns(&tree) {
            let (migrated, left) = match (changed(a), changed(b)) {
                (true, false) => (a, b),
                (false, true) => (b, a),
                _ => continue,
            };
            let spec = column(left)
                .map(|(r, c)| crate::ops::key::values::column_spec(r, c))
                .unwrap_or_default();
            return Some((
                format!(
                    "view {}.{} compares {} with {}, which no foreign key ties to the key: over the new uuid column that comparison would fail; declare its foreign key, or drop the view first",
                    view.schema,
                    view.name,
                    label(migrated),
                    label(left),
                ),
                spec,
            ));
        }
    }
    None
}

//! D6 (finding): the columns of other tables and views that carry the same
//! key as a given column, or the columns that go by a given name.
//!
//! Evidence, each with a weight, combined as independent signals
//! (`score = 1 − Π(1 − weight)`):
//!
//! | evidence | weight |
//! |---|---|
//! | a declared foreign key, either way | 1.0 |
//! | a view column whose values come from it (the view's query tree), either way | 1.0 |
//! | a foreign key to the same key | 0.9 |
//! | values found in the other column, measured in the database | 0.9 × share |
//! | a naming pattern (`customer_id`, `customerId` → `customers.id`) | 0.6 |
//! | the same name (`id`, `uuid` and the like are too common to count) | 0.5 |
//!
//! A UUID found in two columns is never a coincidence, so any share of
//! values in common is evidence; a complete inclusion is strong evidence.

use crate::catalog::{ColumnRef, Container, RelKind, Relation, Snapshot};
use crate::error::DbError;
use crate::plan::Query;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use uuidforge_ident::quote_ident;
use uuidforge_store::names::{name_evidence, words};

/// What to relate: one column, or every column going by a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A column of a table or view.
    Column(ColumnRef),
    /// Every column whose name has these words (`customer_id` matches
    /// `customerId` and `CustomerID`).
    Name(String),
}

impl Target {
    /// Reads `table.column` or `schema.table.column`.
    ///
    /// ```
    /// # use uuidforge_db::catalog::Snapshot;
    /// # let snapshot = Snapshot::from_json(r#"{"database":"d","user":"u","server_version_num":150000,
    /// #   "extension_schema":null,"relations":[],"types":[],"indexes":[],"constraints":[],"view_rules":[]}"#).unwrap();
    /// let err = uuidforge_db::related::Target::parse_column(&snapshot, "orders").unwrap_err();
    /// assert!(err.message.contains("TABLE.COLUMN"));
    /// ```
    pub fn parse_column(snapshot: &Snapshot, spec: &str) -> Result<Target, DbError> {
        let parts = uuidforge_ident::parse_name(spec).map_err(|e| DbError::invalid("column", e))?;
        let Some((column, table)) = parts.split_last().filter(|(_, t)| !t.is_empty()) else {
            return Err(DbError::invalid(
                "column",
                format!("'{spec}' names no column (expected TABLE.COLUMN or SCHEMA.TABLE.COLUMN)"),
            ));
        };
        let as_written = |p: &uuidforge_ident::NamePart| {
            if p.quoted {
                uuidforge_ident::quote_ident(&p.name)
            } else {
                p.name.clone()
            }
        };
        let table_text = table.iter().map(as_written).collect::<Vec<_>>().join(".");
        let relation = snapshot.relation_from_parts(&table_text, table)?;
        let col = relation.column_from_part("column", &as_written(column), column)?;
        Ok(Target::Column(ColumnRef {
            relation: relation.oid,
            column: col.num,
        }))
    }
}

/// Why a column is related.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// `foreign_key`, `referenced_by`, `same_key`, `view`, `view_source`,
    /// `values`, `naming`, `same_name`.
    pub kind: &'static str,
    /// For people: `orders.customer_id → customers.id (orders_customer_id_fkey)`.
    pub detail: String,
    /// 0 to 1.
    pub weight: f64,
}

/// A related column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelatedColumn {
    /// Schema.
    pub schema: String,
    /// Table or view.
    pub table: String,
    /// Column.
    pub column: String,
    /// Declared type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// `table`, `view`, …
    pub relation_kind: &'static str,
    /// 0 to 1, from the evidence.
    pub score: f64,
    /// Strongest first.
    pub evidence: Vec<Evidence>,
}

/// What [`plan`] decided: the anchor columns, and the one statement that
/// measures shared values (when the target is a single uuid column).
#[derive(Debug, Clone)]
pub struct RelatedPlan {
    target: Target,
    anchors: Vec<ColumnRef>,
    value_source: Option<ColumnRef>,
    compared: Vec<ColumnRef>,
    /// Counts shared values: JSON `{"target": n, "columns": [[i, total, matched, covered]…]}`.
    pub values_query: Option<Query>,
}

/// Names shared by too many unrelated columns to be evidence.
const GENERIC_NAMES: [&str; 6] = ["id", "uuid", "guid", "key", "pk", "ref"];

/// Plans the search for `target`.
pub fn plan(snapshot: &Snapshot, target: Target) -> RelatedPlan {
    let anchors: Vec<ColumnRef> = match &target {
        Target::Column(c) => vec![*c],
        Target::Name(name) => {
            let want = words(name);
            all_columns(snapshot)
                .filter(|(_, c)| words(&c.name) == want)
                .map(|(r, c)| ColumnRef {
                    relation: r.oid,
                    column: c.num,
                })
                .collect()
        }
    };
    let sources = snapshot.view_sources();
    let value_source = match &target {
        Target::Column(c) => Some(origin(&sources, *c)),
        Target::Name(_) => None,
    }
    .filter(|c| is_stored_uuid(snapshot, *c));
    let mut compared = Vec::new();
    let values_query = value_source.and_then(|source| {
        compared = all_columns(snapshot)
            .filter(|(r, _)| r.kind.stores_rows() && !r.is_partition && r.can_select)
            .map(|(r, c)| ColumnRef {
                relation: r.oid,
                column: c.num,
            })
            .filter(|c| *c != source && is_stored_uuid(snapshot, *c))
            .collect();
        values_plan(snapshot, source, &compared)
    });
    RelatedPlan {
        target,
        anchors,
        value_source,
        compared,
        values_query,
    }
}

fn all_columns(snapshot: &Snapshot) -> impl Iterator<Item = (&Relation, &crate::catalog::Column)> {
    snapshot
        .relations
        .iter()
        .filter(|r| r.kind != RelKind::CompositeType && !r.is_partition)
        .flat_map(|r| r.columns.iter().map(move |c| (r, c)))
}

/// A view column's table column (through any chain of views).
fn origin(sources: &HashMap<ColumnRef, ColumnRef>, mut c: ColumnRef) -> ColumnRef {
    for _ in 0..64 {
        match sources.get(&c) {
            Some(&next) => c = next,
            None => break,
        }
    }
    c
}

fn is_stored_uuid(snapshot: &Snapshot, c: ColumnRef) -> bool {
    snapshot.relation(c.relation).is_some_and(|r| {
        r.kind.stores_rows()
            && r.column(c.column).is_some_and(|col| {
                col.can_select && snapshot.container(col.type_oid) == Some(Container::Uuid)
            })
    })
}

fn values_plan(snapshot: &Snapshot, source: ColumnRef, compared: &[ColumnRef]) -> Option<Query> {
    let select = |c: ColumnRef, extra: &str| -> Option<String> {
        let r = snapshot.relation(c.relation)?;
        let col = quote_ident(&r.column(c.column)?.name);
        Some(format!(
            "SELECT {extra}{col} AS v FROM {} WHERE {col} IS NOT NULL",
            r.sql_name()
        ))
    };
    let target = select(source, "DISTINCT ")?;
    let parts: Vec<String> = compared
        .iter()
        .enumerate()
        .filter_map(|(i, &c)| select(c, &format!("{i} AS d, ")))
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(Query::new(format!(
        "WITH t AS ({target}), c AS ({})
         SELECT json_build_object('target', (SELECT count(*) FROM t), 'columns', coalesce((
           SELECT json_agg(json_build_array(d, total, matched, covered)) FROM (
             SELECT c.d, count(*) AS total, count(t.v) AS matched, count(DISTINCT t.v) AS covered
               FROM c LEFT JOIN t ON t.v = c.v GROUP BY c.d) x), '[]'))::text",
        parts.join(" UNION ALL ")
    )))
}

type Found = BTreeMap<(u32, i16), Vec<Evidence>>;

fn add(found: &mut Found, c: ColumnRef, kind: &'static str, detail: String, weight: f64) {
    found
        .entry((c.relation, c.column))
        .or_default()
        .push(Evidence {
            kind,
            detail,
            weight,
        });
}

#[derive(serde::Deserialize)]
struct Shared {
    target: i64,
    columns: Vec<(usize, i64, i64, i64)>,
}

/// `schema.table.column` of `c`, or "" when the catalog lacks it.
fn column_label(snapshot: &Snapshot, c: ColumnRef) -> String {
    snapshot
        .relation(c.relation)
        .and_then(|r| Some(format!("{}.{}", r.display_name(), r.column(c.column)?.name)))
        .unwrap_or_default()
}

/// Declared foreign keys, column by column: what an anchor references,
/// what references it, and what references the same key.
fn keys_evidence(snapshot: &Snapshot, plan: &RelatedPlan, found: &mut Found) {
    let name = |c: ColumnRef| column_label(snapshot, c);
    let mut references: Vec<(ColumnRef, ColumnRef, &str)> = Vec::new();
    for fk in snapshot.foreign_keys() {
        let Some(refs) = &fk.ref_columns else {
            continue;
        };
        for (&from, &to) in fk.columns.iter().zip(refs) {
            references.push((
                ColumnRef {
                    relation: fk.table,
                    column: from,
                },
                ColumnRef {
                    relation: fk.ref_table,
                    column: to,
                },
                &fk.name,
            ));
        }
    }
    for &anchor in &plan.anchors {
        for &(from, to, constraint) in &references {
            if from == anchor {
                add(
                    found,
                    to,
                    "foreign_key",
                    format!("{} → {} ({constraint})", name(from), name(to)),
                    1.0,
                );
                for &(sibling, to2, c2) in &references {
                    if to2 == to && sibling != anchor {
                        add(
                            found,
                            sibling,
                            "same_key",
                            format!("both reference {} ({constraint}, {c2})", name(to)),
                            0.9,
                        );
                    }
                }
            }
            if to == anchor {
                add(
                    found,
                    from,
                    "referenced_by",
                    format!("{} → {} ({constraint})", name(from), name(to)),
                    1.0,
                );
            }
        }
    }
}

/// Views: the columns derived from an anchor, and an anchor's sources.
fn views_evidence(snapshot: &Snapshot, plan: &RelatedPlan, found: &mut Found) {
    let name = |c: ColumnRef| column_label(snapshot, c);
    let anchors: HashSet<ColumnRef> = plan.anchors.iter().copied().collect();
    let sources = snapshot.view_sources();
    for (&view_col, _) in sources.iter() {
        let mut c = view_col;
        for _ in 0..64 {
            let Some(&next) = sources.get(&c) else { break };
            if anchors.contains(&next) {
                add(
                    found,
                    view_col,
                    "view",
                    format!("{} is derived from {}", name(view_col), name(next)),
                    1.0,
                );
                break;
            }
            c = next;
        }
    }
    for &anchor in &plan.anchors {
        let mut c = anchor;
        for _ in 0..64 {
            let Some(&next) = sources.get(&c) else { break };
            add(
                found,
                next,
                "view_source",
                format!("{} is derived from {}", name(anchor), name(next)),
                1.0,
            );
            c = next;
        }
    }
}

/// Whether column `num` is the key of `r` that a name like `customer_id`
/// names: its primary key (of that one column); without a declared primary
/// key, a column named `id` or `<table>_id`. A name ties a column to that
/// key only, never to the table's other columns (`customer_id` does not
/// name `customer.email`, unique or not).
fn is_key(snapshot: &Snapshot, r: &Relation, num: i16) -> bool {
    match snapshot.primary_key(r.oid) {
        Some(pk) => pk.columns == [num],
        None => r.column(num).is_some_and(|c| {
            words(&c.name) == ["id"] || name_evidence(&c.name, &r.name, &c.name) >= 1.0
        }),
    }
}

/// Names: columns named like an anchor, or naming it (or named by it).
fn names_evidence(snapshot: &Snapshot, plan: &RelatedPlan, found: &mut Found) {
    let name = |c: ColumnRef| column_label(snapshot, c);
    let anchors: HashSet<ColumnRef> = plan.anchors.iter().copied().collect();
    let anchor_names: Vec<(ColumnRef, &Relation, String)> = plan
        .anchors
        .iter()
        .filter_map(|&a| {
            let r = snapshot.relation(a.relation)?;
            Some((a, r, r.column(a.column)?.name.clone()))
        })
        .collect();
    for (r, c) in all_columns(snapshot) {
        let here = ColumnRef {
            relation: r.oid,
            column: c.num,
        };
        let generic = GENERIC_NAMES.contains(&c.name.to_lowercase().as_str());
        match &plan.target {
            Target::Name(wanted) => {
                if anchors.contains(&here) {
                    let how = if c.name == *wanted {
                        "the name".to_string()
                    } else {
                        format!("the name {wanted} written as {}", c.name)
                    };
                    add(found, here, "same_name", how, 0.5);
                } else if is_key(snapshot, r, c.num)
                    && name_evidence(wanted, &r.name, &c.name) >= 1.0
                {
                    add(
                        found,
                        here,
                        "naming",
                        format!("{wanted} names {}", name(here)),
                        0.6,
                    );
                }
            }
            Target::Column(_) => {
                for (a, ar, an) in &anchor_names {
                    if *a == here || a.relation == here.relation {
                        continue;
                    }
                    if !generic && words(&c.name) == words(an) {
                        add(
                            found,
                            here,
                            "same_name",
                            format!("same name as {}", name(*a)),
                            0.5,
                        );
                    } else if is_key(snapshot, ar, a.column)
                        && name_evidence(&c.name, &ar.name, an) >= 1.0
                    {
                        add(
                            found,
                            here,
                            "naming",
                            format!("{} names {}", c.name, name(*a)),
                            0.6,
                        );
                    } else if is_key(snapshot, r, c.num)
                        && name_evidence(an, &r.name, &c.name) >= 1.0
                    {
                        add(
                            found,
                            here,
                            "naming",
                            format!("{an} names {}", name(here)),
                            0.6,
                        );
                    }
                }
            }
        }
    }
}

/// Values: columns whose values lie inside the anchor's (from the result
/// of [`RelatedPlan::values_query`]).
fn values_evidence(
    snapshot: &Snapshot,
    plan: &RelatedPlan,
    values_json: Option<&str>,
    found: &mut Found,
) -> Result<(), DbError> {
    let name = |c: ColumnRef| column_label(snapshot, c);
    if let (Some(source), Some(json)) = (plan.value_source, values_json) {
        let shared: Shared = serde_json::from_str(json)
            .map_err(|e| DbError::unreadable("shared values", e.to_string()))?;
        for (i, total, matched, covered) in shared.columns {
            let Some(&c) = plan.compared.get(i) else {
                return Err(DbError::unreadable(
                    "shared values",
                    format!("unknown column {i}"),
                ));
            };
            if matched == 0 || total == 0 {
                continue;
            }
            let inside = matched as f64 / total as f64;
            let holds = covered as f64 / shared.target.max(1) as f64;
            let detail = format!(
                "{:.1}% of its {total} values are in {}; it holds {:.1}% of {}'s {} distinct values",
                inside * 100.0,
                name(source),
                holds * 100.0,
                name(source),
                shared.target
            );
            add(found, c, "values", detail, 0.9 * inside.max(holds));
        }
    }

    Ok(())
}

/// Views over the related columns too (one hop, a little weaker).
fn views_over_related(snapshot: &Snapshot, plan: &RelatedPlan, found: &mut Found) {
    let name = |c: ColumnRef| column_label(snapshot, c);
    let anchors: HashSet<ColumnRef> = plan.anchors.iter().copied().collect();
    let sources = snapshot.view_sources();
    let strongest: HashMap<ColumnRef, f64> = found
        .iter()
        .map(|(&(relation, column), ev)| {
            let w = ev.iter().map(|e| e.weight).fold(0.0, f64::max);
            (ColumnRef { relation, column }, w)
        })
        .collect();
    for &view_col in sources.keys() {
        let source = origin(&sources, view_col);
        if let Some(&w) = strongest.get(&source) {
            if !anchors.contains(&source) && !strongest.contains_key(&view_col) {
                add(
                    found,
                    view_col,
                    "view",
                    format!("{} is derived from {}", name(view_col), name(source)),
                    0.9 * w,
                );
            }
        }
    }
}

/// The related columns, strongest first, from the catalog and the result
/// of [`RelatedPlan::values_query`] (`None` when it was not run).
pub fn report(
    snapshot: &Snapshot,
    plan: &RelatedPlan,
    values_json: Option<&str>,
) -> Result<Vec<RelatedColumn>, DbError> {
    let mut found = Found::new();
    let anchors: HashSet<ColumnRef> = plan.anchors.iter().copied().collect();
    keys_evidence(snapshot, plan, &mut found);
    views_evidence(snapshot, plan, &mut found);
    names_evidence(snapshot, plan, &mut found);
    values_evidence(snapshot, plan, values_json, &mut found)?;
    views_over_related(snapshot, plan, &mut found);
    let mut out: Vec<RelatedColumn> = found
        .into_iter()
        .filter(|((rel, col), _)| {
            matches!(plan.target, Target::Name(_))
                || !anchors.contains(&ColumnRef {
                    relation: *rel,
                    column: *col,
                })
        })
        .filter_map(|((rel, col), mut evidence)| {
            let r = snapshot.relation(rel)?;
            let c = r.column(col)?;
            evidence.sort_by(|a, b| b.weight.total_cmp(&a.weight));
            evidence.dedup_by(|a, b| a.kind == b.kind && a.detail == b.detail);
            let miss: f64 = evidence
                .iter()
                .map(|e| 1.0 - e.weight.clamp(0.0, 1.0))
                .product();
            Some(RelatedColumn {
                schema: r.schema.clone(),
                table: r.name.clone(),
                column: c.name.clone(),
                type_name: c.type_name.clone(),
                relation_kind: r.kind.name(),
                score: ((1.0 - miss) * 1000.0).round() / 1000.0,
                evidence,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| (&a.schema, &a.table, &a.column).cmp(&(&b.schema, &b.table, &b.column)))
    });
    Ok(out)
}

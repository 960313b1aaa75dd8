//! D13: primary and foreign keys among UUID columns, discovered from the
//! data of an undocumented schema.
//!
//! 1. One statistics statement per table ([`stats_plans`]): rows, non-null
//!    and distinct values of each `uuid` column. A column that is complete
//!    and unique is a primary key candidate; one per table is chosen
//!    ([`choose_primary_keys`]: declared first, then by name).
//! 2. One statement for the whole schema ([`inclusion_plan`]): every
//!    candidate column's values (its first [`INCLUSION_SAMPLE`]) joined (a
//!    hash join inside the server, no query per pair) with the union of
//!    all chosen keys, counting for each
//!    pair how many values are included and how many child rows are older
//!    (by their own v7 key) than the parent they point to.
//! 3. Scoring ([`score`]): inclusion first (a UUID inclusion is almost
//!    never an accident), then name evidence (`customer_id`, `customerId`
//!    → `customer(s).id`), then v7 time consistency.

use crate::catalog::{Container, RelKind, Snapshot};
use crate::error::DbError;
use crate::plan::Query;
use serde::Serialize;
use std::collections::HashMap;
use uuidforge_ident::{qualified, quote_ident};
use uuidforge_store::names::{name_evidence, singular, words};

/// A column as discovery sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ColumnSet {
    /// Schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// Columns (one for discovered keys).
    pub columns: Vec<String>,
}

/// A uuid column of a table, with its statistics once read.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Table oid.
    pub relation: u32,
    /// Column number.
    pub num: i16,
    /// Schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// Column.
    pub column: String,
    /// Rows of the table.
    pub rows: i64,
    /// Non-null values.
    pub non_null: i64,
    /// Distinct values.
    pub distinct: i64,
    /// Values that are UUIDv7.
    pub v7: i64,
}

impl Candidate {
    fn set(&self) -> ColumnSet {
        ColumnSet {
            schema: self.schema.clone(),
            table: self.table.clone(),
            columns: vec![self.column.clone()],
        }
    }

    /// Complete and unique in the data (and not empty).
    pub fn is_key(&self) -> bool {
        self.rows > 0 && self.non_null == self.rows && self.distinct == self.rows
    }
}

/// A proposed (or declared) primary key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrimaryKey {
    /// Where.
    #[serde(flatten)]
    pub key: ColumnSet,
    /// Declared in the catalog.
    pub declared: bool,
    /// Rows it identifies.
    pub rows: i64,
    /// The table's declared primary key on other columns, if any (then the
    /// proposal is a unique key: a table has one primary key).
    #[serde(skip)]
    pub other_primary_key: Option<String>,
    /// Whether the table is partitioned (its keys must hold its partition
    /// columns, which the proposal does not know).
    #[serde(skip)]
    pub partitioned: bool,
}

/// A proposed (or declared) foreign key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForeignKey {
    /// Referencing columns.
    pub from: ColumnSet,
    /// Referenced key.
    pub to: ColumnSet,
    /// 0 to 1.
    pub score: f64,
    /// Declared in the catalog.
    pub declared: bool,
    /// Share of the referencing column's non-null values found in the key.
    pub inclusion: f64,
    /// Why: `inclusion 100%`, `name customer_id`, `v7 times consistent`.
    pub evidence: Vec<String>,
    /// Whether the referencing table is partitioned (PostgreSQL 15 makes
    /// no `NOT VALID` foreign key on one).
    #[serde(skip)]
    pub from_partitioned: bool,
    /// Matched values whose row's own v7 key is older than the key they
    /// match (a child older than its parent), of `matched`.
    #[serde(skip)]
    pub older: i64,
    /// Values matched.
    #[serde(skip)]
    pub matched: i64,
}

/// The result of discovery.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// One per table that has a key.
    pub primary_keys: Vec<PrimaryKey>,
    /// Best first.
    pub foreign_keys: Vec<ForeignKey>,
}

/// The uuid columns (and domains over uuid) of the tables of `schemas`
/// (all when empty) that the role may read; partitions are read through
/// their parent.
pub fn candidates(snapshot: &Snapshot, schemas: &[String]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for r in &snapshot.relations {
        let table = matches!(r.kind, RelKind::Table | RelKind::PartitionedTable) && !r.is_partition;
        if !table || !r.can_select || (!schemas.is_empty() && !schemas.contains(&r.schema)) {
            continue;
        }
        for c in &r.columns {
            if snapshot.container(c.type_oid) == Some(Container::Uuid) {
                out.push(Candidate {
                    relation: r.oid,
                    num: c.num,
                    schema: r.schema.clone(),
                    table: r.name.clone(),
                    column: c.name.clone(),
                    rows: 0,
                    non_null: 0,
                    distinct: 0,
                    v7: 0,
                });
            }
        }
    }
    out
}

/// SQL: the Unix milliseconds of a UUIDv7 (NULL for other versions).
fn v7_ms(expr: &str) -> String {
    format!(
        "CASE WHEN substr({expr}::text, 15, 1) = '7' \
         THEN ('x' || lpad(substr(replace({expr}::text, '-', ''), 1, 12), 16, '0'))::bit(64)::bigint END"
    )
}

/// One statistics statement per table: `[rows, [non-null, distinct, v7]…]`.
pub fn stats_plans(candidates: &[Candidate], snapshot: &Snapshot) -> Vec<(u32, Query)> {
    let mut by_table: Vec<(u32, Vec<&Candidate>)> = Vec::new();
    for c in candidates {
        match by_table.iter_mut().find(|(r, _)| *r == c.relation) {
            Some((_, list)) => list.push(c),
            None => by_table.push((c.relation, vec![c])),
        }
    }
    by_table
        .into_iter()
        .filter_map(|(oid, cols)| {
            let r = snapshot.relation(oid)?;
            let parts: Vec<String> = cols
                .iter()
                .map(|c| {
                    let q = quote_ident(&c.column);
                    format!(
                        "json_build_array(count({q}), count(DISTINCT {q}), count(*) FILTER (WHERE substr({q}::text, 15, 1) = '7'))"
                    )
                })
                .collect();
            Some((
                oid,
                Query::new(format!(
                    "SELECT json_build_array(count(*), {})::text FROM {}",
                    parts.join(", "),
                    r.sql_name()
                )),
            ))
        })
        .collect()
}

/// Reads a statistics result into the candidates of that table.
pub fn read_stats(candidates: &mut [Candidate], relation: u32, json: &str) -> Result<(), DbError> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| DbError::unreadable("stats", e.to_string()))?;
    let rows = v[0]
        .as_i64()
        .ok_or_else(|| DbError::unreadable("stats", "no row count"))?;
    for (i, c) in candidates
        .iter_mut()
        .filter(|c| c.relation == relation)
        .enumerate()
    {
        let s = &v[i + 1];
        c.rows = rows;
        c.non_null = s[0]
            .as_i64()
            .ok_or_else(|| DbError::unreadable("stats", "non-null count"))?;
        c.distinct = s[1]
            .as_i64()
            .ok_or_else(|| DbError::unreadable("stats", "distinct count"))?;
        c.v7 = s[2]
            .as_i64()
            .ok_or_else(|| DbError::unreadable("stats", "v7 count"))?;
    }
    Ok(())
}

/// Chooses one key per table among its complete, unique uuid columns: the
/// declared primary key, else a column named `id`, `<table>_id`, …, else
/// the first.
pub fn choose_primary_keys(snapshot: &Snapshot, candidates: &[Candidate]) -> Vec<(usize, bool)> {
    let mut chosen: HashMap<u32, (usize, bool, u8)> = HashMap::new();
    for (i, c) in candidates.iter().enumerate() {
        let declared = snapshot
            .primary_key(c.relation)
            .is_some_and(|pk| pk.columns == [c.num]);
        if !declared && !c.is_key() {
            continue;
        }
        let rank = if declared {
            0
        } else if words(&c.column) == ["id"] || name_evidence(&c.column, &c.table, "id") > 0.9 {
            1
        } else {
            2
        };
        let better = chosen.get(&c.relation).is_none_or(|&(_, _, r)| rank < r);
        if better {
            chosen.insert(c.relation, (i, declared, rank));
        }
    }
    let mut out: Vec<(usize, bool)> = chosen.into_values().map(|(i, d, _)| (i, d)).collect();
    out.sort();
    out
}

/// The one statement that measures every inclusion: each candidate
/// column's values (with the row's own v7 key time) joined with the union
/// of the chosen keys. Result: JSON `[[dep, ref, matched, older]…]`.
pub fn inclusion_plan(
    snapshot: &Snapshot,
    candidates: &[Candidate],
    keys: &[(usize, bool)],
) -> Option<Query> {
    if keys.is_empty() {
        return None;
    }
    let key_of_table: HashMap<u32, usize> = keys
        .iter()
        .map(|&(i, _)| (candidates[i].relation, i))
        .collect();
    let refs: Vec<String> = keys
        .iter()
        .enumerate()
        .filter_map(|(r, &(i, _))| {
            let c = &candidates[i];
            let rel = snapshot.relation(c.relation)?;
            Some(format!(
                "SELECT {col} AS v, {r} AS r, {ms} AS ms FROM {t}",
                col = quote_ident(&c.column),
                ms = v7_ms(&quote_ident(&c.column)),
                t = rel.sql_name()
            ))
        })
        .collect();
    let deps: Vec<String> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.non_null > 0)
        .filter_map(|(d, c)| {
            let rel = snapshot.relation(c.relation)?;
            let own = key_of_table
                .get(&c.relation)
                .filter(|&&k| k != d)
                .map(|&k| v7_ms(&quote_ident(&candidates[k].column)))
                .unwrap_or_else(|| "NULL::bigint".into());
            let col = quote_ident(&c.column);
            Some(format!(
                "(SELECT {col} AS v, {d} AS d, {own} AS own_ms FROM {t} WHERE {col} IS NOT NULL LIMIT {INCLUSION_SAMPLE})",
                t = rel.sql_name()
            ))
        })
        .collect();
    if deps.is_empty() {
        return None;
    }
    Some(Query::new(format!(
        "WITH refs AS ({}), deps AS ({})
         SELECT coalesce(json_agg(json_build_array(d, r, matched, older)), '[]')::text FROM (
           SELECT deps.d, refs.r, count(*) AS matched,
                  count(*) FILTER (WHERE deps.own_ms < refs.ms) AS older
             FROM deps JOIN refs ON refs.v = deps.v
            GROUP BY deps.d, refs.r) x",
        refs.join(" UNION ALL "),
        deps.join(" UNION ALL ")
    )))
}

/// Values of each referencing column compared with the keys: the first
/// ones stored (a UUID found in a key is no accident, so a sample judges
/// inclusion as well as the whole column does, at a bounded cost).
pub const INCLUSION_SAMPLE: i64 = 10_000;

/// `work_mem` of the transaction that runs the inclusion statement.
pub const INCLUSION_WORK_MEM: &str = "128MB";

/// Least share of a column's values that must be found in a key.
pub const MIN_INCLUSION: f64 = 0.98;

/// The declared foreign keys, as (referencing, referenced) column sets.
fn declared_foreign_keys(snapshot: &Snapshot) -> Vec<(ColumnSet, ColumnSet)> {
    snapshot
        .foreign_keys()
        .filter_map(|fk| {
            let from = snapshot.relation(fk.table)?;
            let to = snapshot.relation(fk.ref_table)?;
            let cols = |r: &crate::catalog::Relation, nums: &[i16]| -> Option<Vec<String>> {
                nums.iter()
                    .map(|&n| r.column(n).map(|c| c.name.clone()))
                    .collect()
            };
            Some((
                ColumnSet {
                    schema: from.schema.clone(),
                    table: from.name.clone(),
                    columns: cols(from, &fk.columns)?,
                },
                ColumnSet {
                    schema: to.schema.clone(),
                    table: to.name.clone(),
                    columns: cols(to, fk.ref_columns.as_deref()?)?,
                },
            ))
        })
        .collect()
}

/// One inclusion read (`dep` column `d` in key `r`: values matched, child
/// rows older than their parent), scored: the foreign key it proposes, if
/// any.
fn scored(
    snapshot: &Snapshot,
    candidates: &[Candidate],
    keys: &[(usize, bool)],
    (d, r, matched, older): (usize, usize, i64, i64),
) -> Result<Option<ForeignKey>, DbError> {
    let dep = candidates
        .get(d)
        .ok_or_else(|| DbError::unreadable("inclusion", "unknown column"))?;
    let (ki, _) = *keys
        .get(r)
        .ok_or_else(|| DbError::unreadable("inclusion", "unknown key"))?;
    let key = &candidates[ki];
    if ki == d {
        return Ok(None);
    }
    let compared = dep.non_null.min(INCLUSION_SAMPLE);
    let inclusion = matched as f64 / compared.max(1) as f64;
    if inclusion < MIN_INCLUSION {
        return Ok(None);
    }
    let names = name_evidence(&dep.column, &key.table, &key.column);
    let dep_is_key = keys.iter().any(|&(k, _)| k == d);
    // A table's own key included in another key is a 1:1 extension only
    // when its name says so.
    if dep_is_key && names == 0.0 {
        return Ok(None);
    }
    let mut evidence = vec![if compared < dep.non_null {
        format!(
            "inclusion {:.1}% of {compared} values sampled of {}",
            inclusion * 100.0,
            dep.non_null
        )
    } else {
        format!("inclusion {:.1}% of {compared} values", inclusion * 100.0)
    }];
    let mut s = 0.7 * inclusion;
    if names > 0.0 {
        s += 0.2 * names;
        evidence.push(format!(
            "name {} → {}.{}",
            dep.column, key.table, key.column
        ));
    }
    if dep.v7 > 0 && key.v7 > 0 {
        let older_share = older as f64 / matched.max(1) as f64;
        if older == 0 {
            s += 0.1;
            evidence.push("v7 times consistent (no child older than its parent)".into());
        } else if older_share > 0.1 {
            s -= 0.2;
            evidence.push(format!(
                "{:.0}% of child rows older than their parent",
                older_share * 100.0
            ));
        }
    }
    Ok(Some(ForeignKey {
        from: dep.set(),
        to: key.set(),
        score: (s.clamp(0.0, 1.0) * 1000.0).round() / 1000.0,
        declared: false,
        inclusion,
        evidence,
        from_partitioned: snapshot
            .relation(dep.relation)
            .is_some_and(|r| r.kind == RelKind::PartitionedTable),
        older,
        matched,
    }))
}

/// Scores the inclusions and builds the report (declared constraints
/// included and marked).
pub fn score(
    snapshot: &Snapshot,
    candidates: &[Candidate],
    keys: &[(usize, bool)],
    inclusion_json: &str,
) -> Result<Report, DbError> {
    let rows: Vec<(usize, usize, i64, i64)> = if inclusion_json.is_empty() {
        Vec::new()
    } else {
        serde_json::from_str(inclusion_json)
            .map_err(|e| DbError::unreadable("inclusion", e.to_string()))?
    };
    let declared_fks = declared_foreign_keys(snapshot);
    let mut best: HashMap<usize, ForeignKey> = HashMap::new();
    for row in rows {
        let Some(fk) = scored(snapshot, candidates, keys, row)? else {
            continue;
        };
        // Small keys (a handful of rows) include many columns by chance
        // only when values repeat across tables, which UUIDs do not: keep
        // the best-scored key, the smallest on a tie (the most specific).
        let rows_of = |set: &ColumnSet| {
            candidates
                .iter()
                .find(|c| c.set() == *set)
                .map(|c| c.rows)
                .unwrap_or(i64::MAX)
        };
        let replace = match best.get(&row.0) {
            None => true,
            Some(old) => {
                fk.score > old.score
                    || (fk.score == old.score && rows_of(&fk.to) < rows_of(&old.to))
            }
        };
        if replace {
            best.insert(row.0, fk);
        }
    }
    let mut foreign_keys: Vec<ForeignKey> = best.into_values().collect();
    one_direction(&mut foreign_keys, &declared_fks);
    with_declared(&mut foreign_keys, declared_fks);
    // A link table (every uuid column found a reference, as
    // `employee_territories (employee_id, territory_id)`) is keyed by its
    // references together: one of them alone, unique as it may happen to
    // be in the data, is no key of its own, and nothing references it.
    let references_from = |c: &ColumnSet| {
        foreign_keys
            .iter()
            .filter(|f| f.from.schema == c.schema && f.from.table == c.table)
            .count()
    };
    let link_keys: Vec<ColumnSet> = keys
        .iter()
        .filter(|&&(_, declared)| !declared)
        .map(|&(i, _)| candidates[i].set())
        .filter(|key| foreign_keys.iter().any(|f| f.from == *key) && references_from(key) >= 2)
        .collect();
    foreign_keys.retain(|f| !link_keys.contains(&f.to));
    Ok(Report {
        primary_keys: primary_keys(snapshot, candidates, keys, &link_keys),
        foreign_keys,
    })
}

/// The declared foreign keys marked among `foreign_keys`, those the data
/// did not propose added; sorted by score, then by name.
fn with_declared(foreign_keys: &mut Vec<ForeignKey>, declared_fks: Vec<(ColumnSet, ColumnSet)>) {
    for fk in foreign_keys.iter_mut() {
        fk.declared = declared_fks
            .iter()
            .any(|(f, t)| *f == fk.from && *t == fk.to);
    }
    for (from, to) in declared_fks {
        if !foreign_keys.iter().any(|fk| fk.from == from && fk.to == to) {
            foreign_keys.push(ForeignKey {
                from,
                to,
                score: 1.0,
                declared: true,
                inclusion: f64::NAN,
                evidence: vec!["declared".into()],
                from_partitioned: false,
                older: 0,
                matched: 0,
            });
        }
    }
    foreign_keys.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| {
            (&a.from.schema, &a.from.table, &a.from.columns).cmp(&(
                &b.from.schema,
                &b.from.table,
                &b.from.columns,
            ))
        })
    });
}

/// The primary keys proposed (a link table's key left out).
fn primary_keys(
    snapshot: &Snapshot,
    candidates: &[Candidate],
    keys: &[(usize, bool)],
    link_keys: &[ColumnSet],
) -> Vec<PrimaryKey> {
    keys.iter()
        .filter(|&&(i, _)| !link_keys.contains(&candidates[i].set()))
        .map(|&(i, declared)| {
            let relation = candidates[i].relation;
            PrimaryKey {
                key: candidates[i].set(),
                declared,
                rows: candidates[i].rows,
                other_primary_key: snapshot
                    .primary_key(relation)
                    .filter(|_| !declared)
                    .map(|pk| pk.name.clone()),
                partitioned: snapshot
                    .relation(relation)
                    .is_some_and(|r| r.kind == RelKind::PartitionedTable),
            }
        })
        .collect()
}

/// Where two keys include each other (a one-to-one link: each key's values
/// are the other's), keeps one direction, decided by the evidence in this
/// order: the v7 times (a child row is not older than its parent); the
/// names (columns named for one of the two tables: `film_id` names `film`,
/// not `film_text`); the declared references to each; else the table whose
/// name the other's starts with (`film` before `film_text`). Columns that
/// matched the child of the pair (their values are in both keys) then
/// reference the parent. The reason joins the kept link's evidence.
pub(crate) fn one_direction(fks: &mut Vec<ForeignKey>, declared: &[(ColumnSet, ColumnSet)]) {
    let mut decisions = Vec::new();
    for i in 0..fks.len() {
        for j in i + 1..fks.len() {
            let (a, b) = (&fks[i], &fks[j]);
            if a.from != b.to || a.to != b.from {
                continue;
            }
            let (keep_a, why) = choose_direction(fks, declared, a, b);
            let (winner, loser) = if keep_a { (i, j) } else { (j, i) };
            decisions.push((winner, loser, why));
        }
    }
    let mut losers: Vec<usize> = Vec::new();
    for (winner, loser, why) in decisions {
        let (child, parent) = (fks[winner].from.clone(), fks[winner].to.clone());
        let l = &fks[loser];
        let reason = format!(
            "one-to-one: this direction, not {}.{} → {}.{} ({why})",
            l.from.table,
            l.from.columns.join(","),
            l.to.table,
            l.to.columns.join(",")
        );
        fks[winner].evidence.push(reason);
        losers.push(loser);
        for (k, f) in fks.iter_mut().enumerate() {
            if k != winner && k != loser && f.to == child {
                f.to = parent.clone();
                f.evidence.push(format!(
                    "its values are in {} too, whose key {}.{} shares",
                    parent.table,
                    child.table,
                    child.columns.join(",")
                ));
            }
        }
    }
    losers.sort_unstable();
    losers.dedup();
    for loser in losers.into_iter().rev() {
        fks.remove(loser);
    }
}

/// Whether a column of `from` names `table` (`film_id` names `film`).
fn names_table(from: &ColumnSet, table: &str) -> bool {
    let table: Vec<String> = words(table).iter().map(|w| singular(w)).collect();
    from.columns.iter().any(|c| {
        let from: Vec<String> = words(c).iter().map(|w| singular(w)).collect();
        from.starts_with(&table) && from.len() == table.len() + 1
    })
}

/// Whether `a` (rather than `b`, its reverse) is the foreign key, and why.
fn choose_direction(
    fks: &[ForeignKey],
    declared: &[(ColumnSet, ColumnSet)],
    a: &ForeignKey,
    b: &ForeignKey,
) -> (bool, String) {
    let older = |f: &ForeignKey| f.older as f64 / f.matched.max(1) as f64;
    if (older(a) == 0.0) != (older(b) == 0.0) {
        return (
            older(a) == 0.0,
            "the v7 times: no child older than its parent this way".into(),
        );
    }
    // Every column pointing at either of the two keys, by its name.
    let naming = |table: &str| {
        fks.iter()
            .filter(|f| f.to == a.to || f.to == b.to)
            .filter(|f| names_table(&f.from, table))
            .count()
    };
    let (named_a, named_b) = (naming(&a.to.table), naming(&b.to.table));
    if named_a != named_b {
        let (more, fewer) = if named_a > named_b { (a, b) } else { (b, a) };
        return (
            named_a > named_b,
            format!(
                "the names: {} columns name {}, {} name {}",
                named_a.max(named_b),
                more.to.table,
                named_a.min(named_b),
                fewer.to.table
            ),
        );
    }
    let referenced = |t: &ColumnSet| declared.iter().filter(|(_, to)| to == t).count();
    let (to_a, to_b) = (referenced(&a.to), referenced(&b.to));
    if to_a != to_b {
        return (to_a > to_b, "the declared references".into());
    }
    let (ta, tb) = (&a.to.table, &b.to.table);
    let a_first = tb.starts_with(ta.as_str())
        || (!ta.starts_with(tb.as_str()) && (ta.len(), ta) < (tb.len(), tb));
    (a_first, "the table names".into())
}

/// A reference proposed over one column that may be a part of a
/// composite one: the parent's key column is the first of a unique key of
/// several columns (`services (id, ws_id)`, a workspace-scoped key), and
/// the referencing table has columns of the others' names (`ws_id`).
#[derive(Debug, Clone, PartialEq)]
pub struct CompositeCandidate {
    /// The proposal's place in [`Report::foreign_keys`].
    pub index: usize,
    /// The referencing columns, the proposal's first.
    pub from: ColumnSet,
    /// The parent's unique key, in the same order.
    pub to: ColumnSet,
    /// Counts (rows with every referencing column set, and those of them
    /// whose values are no row of the parent's key together), one row of
    /// JSON: `[rows, disagreeing]`.
    pub query: Query,
}

/// The composite references the undeclared one-column proposals of
/// `report` may be, each with the read that says whether the values agree.
pub fn composite_candidates(snapshot: &Snapshot, report: &Report) -> Vec<CompositeCandidate> {
    let mut out = Vec::new();
    for (index, fk) in report.foreign_keys.iter().enumerate() {
        if fk.declared || fk.from.columns.len() != 1 || fk.to.columns.len() != 1 {
            continue;
        }
        let (Some(child), Some(parent)) = (
            snapshot.relation_named(&fk.from.schema, &fk.from.table),
            snapshot.relation_named(&fk.to.schema, &fk.to.table),
        ) else {
            continue;
        };
        let Some(key) = parent.column_named(&fk.to.columns[0]) else {
            continue;
        };
        // The smallest unique key of the parent that starts with the key
        // column and whose other columns the child has by name.
        let unique = snapshot
            .indexes_of(parent.oid)
            .filter(|i| i.unique && i.valid && i.predicate.is_none() && i.expressions.is_none())
            .filter(|i| i.keys.len() >= 2 && i.keys[0] == key.num)
            .filter_map(|i| {
                let others: Vec<String> = i.keys[1..]
                    .iter()
                    .map(|n| parent.column(*n).map(|c| c.name.clone()))
                    .collect::<Option<_>>()?;
                others
                    .iter()
                    .all(|o| child.column_named(o).is_some() && *o != fk.from.columns[0])
                    .then_some(others)
            })
            .min_by_key(Vec::len);
        let Some(others) = unique else {
            continue;
        };
        let mut from = fk.from.clone();
        from.columns.extend(others.iter().cloned());
        let mut to = fk.to.clone();
        to.columns.extend(others.iter().cloned());
        let set = from
            .columns
            .iter()
            .map(|c| format!("c.{} IS NOT NULL", quote_ident(c)))
            .collect::<Vec<_>>()
            .join(" AND ");
        let matched = from
            .columns
            .iter()
            .zip(&to.columns)
            .map(|(f, t)| format!("p.{} = c.{}", quote_ident(t), quote_ident(f)))
            .collect::<Vec<_>>()
            .join(" AND ");
        let query = Query::new(format!(
            "SELECT json_build_array(count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT FROM {} p WHERE {matched})))::text FROM {} c WHERE {set}",
            parent.sql_name(),
            child.sql_name()
        ));
        out.push(CompositeCandidate {
            index,
            from,
            to,
            query,
        });
    }
    out
}

/// Each proposal of `report` whose composite candidate's values agree
/// (`answers[i]`: `[rows, disagreeing]` of `candidates[i]`: some rows, none
/// disagreeing) becomes that composite reference — the declared one, when
/// the catalog has it.
pub fn with_composites(
    report: &mut Report,
    candidates: &[CompositeCandidate],
    answers: &[String],
) -> Result<(), DbError> {
    let mut replaced: Vec<usize> = Vec::new();
    for (c, answer) in candidates.iter().zip(answers) {
        let [rows, disagreeing]: [i64; 2] = serde_json::from_str(answer)
            .map_err(|e| DbError::unreadable("composite references", e.to_string()))?;
        if rows == 0 || disagreeing > 0 {
            continue;
        }
        let declared = report
            .foreign_keys
            .iter()
            .position(|f| f.declared && f.from == c.from && f.to == c.to);
        let fk = &mut report.foreign_keys[c.index];
        fk.evidence.push(format!(
            "composite: ({}) in {} ({}) for all {rows} rows",
            c.from.columns.join(", "),
            c.to.table,
            c.to.columns.join(", ")
        ));
        fk.from = c.from.clone();
        fk.to = c.to.clone();
        if let Some(d) = declared {
            fk.declared = true;
            replaced.push(d);
        }
    }
    replaced.sort_unstable();
    for d in replaced.into_iter().rev() {
        report.foreign_keys.remove(d);
    }
    Ok(())
}

/// The DDL that would adopt the proposals (never run by uuidforge), every
/// statement one PostgreSQL accepts: primary keys (a unique key where the
/// table has a primary key already; none on a partitioned table, whose
/// keys must hold its partition columns — said in a comment, with the
/// foreign keys to it), and foreign keys `NOT VALID` so that adding them
/// takes no long lock (`VALIDATE CONSTRAINT` later checks existing rows),
/// checked at once from a partitioned table, where PostgreSQL 15 makes no
/// `NOT VALID` one.
pub fn adoption_ddl(report: &Report) -> String {
    let mut out = String::from("-- Proposed by uuidforge db discover; review before running.\n");
    let list = |columns: &[String]| {
        columns
            .iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut unkeyed: Vec<&ColumnSet> = Vec::new();
    for pk in report.primary_keys.iter().filter(|p| !p.declared) {
        let table = qualified(&pk.key.schema, &pk.key.table);
        let columns = list(&pk.key.columns);
        if pk.partitioned {
            out.push_str(&format!(
                "-- {table} ({columns}): a key of a partitioned table must hold its partition columns; not proposed, nor the foreign keys to it\n"
            ));
            unkeyed.push(&pk.key);
        } else if let Some(existing) = &pk.other_primary_key {
            out.push_str(&format!(
                "ALTER TABLE {table} ADD UNIQUE ({columns}); -- its primary key is {}\n",
                quote_ident(existing)
            ));
        } else {
            out.push_str(&format!(
                "ALTER TABLE {table} ADD PRIMARY KEY ({columns});\n"
            ));
        }
    }
    for fk in report.foreign_keys.iter().filter(|f| !f.declared) {
        if unkeyed.contains(&&fk.to) {
            continue;
        }
        let name = format!("{}_{}_fkey", fk.from.table, fk.from.columns.join("_"));
        out.push_str(&format!(
            "ALTER TABLE {} ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({}){}; -- score {:.3}\n",
            qualified(&fk.from.schema, &fk.from.table),
            quote_ident(&name),
            list(&fk.from.columns),
            qualified(&fk.to.schema, &fk.to.table),
            list(&fk.to.columns),
            if fk.from_partitioned { "" } else { " NOT VALID" },
            fk.score
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(from: (&str, &str), to: (&str, &str), older: i64) -> ForeignKey {
        let set = |(t, c): (&str, &str)| ColumnSet {
            schema: "public".into(),
            table: t.into(),
            columns: vec![c.into()],
        };
        ForeignKey {
            from: set(from),
            to: set(to),
            score: 1.0,
            declared: false,
            inclusion: 1.0,
            evidence: Vec::new(),
            from_partitioned: false,
            older,
            matched: 100,
        }
    }

    fn kept(fks: &[ForeignKey]) -> Vec<String> {
        fks.iter()
            .map(|f| format!("{}.{}->{}", f.from.table, f.from.columns[0], f.to.table))
            .collect()
    }

    #[test]
    fn a_one_to_one_link_is_proposed_one_way() {
        // Sakila's film_text shares film's key: both include each other.
        let both = || {
            vec![
                link(("film", "film_id"), ("film_text", "film_id"), 0),
                link(("film_text", "film_id"), ("film", "film_id"), 0),
            ]
        };
        // By the table names alone.
        let mut fks = both();
        one_direction(&mut fks, &[]);
        assert_eq!(kept(&fks), ["film_text.film_id->film"]);
        // By the names: inventory.film_id names film, whichever key its
        // values were matched with (both hold them), and then points at it.
        let mut fks = both();
        fks.push(link(("inventory", "film_id"), ("film_text", "film_id"), 0));
        one_direction(&mut fks, &[]);
        assert_eq!(
            kept(&fks),
            ["film_text.film_id->film", "inventory.film_id->film"]
        );
        assert!(
            fks[0].evidence[0].contains("the names"),
            "{:?}",
            fks[0].evidence
        );
        // The v7 times decide first: film rows older than film_text's.
        let mut fks = vec![
            link(("film", "film_id"), ("film_text", "film_id"), 0),
            link(("film_text", "film_id"), ("film", "film_id"), 40),
        ];
        fks.push(link(("inventory", "film_id"), ("film", "film_id"), 0));
        one_direction(&mut fks, &[]);
        // film is the child there, so what referenced it references its
        // parent, which holds the same values.
        assert_eq!(
            kept(&fks),
            ["film.film_id->film_text", "inventory.film_id->film_text"]
        );
        assert!(
            fks[0].evidence[0].contains("v7 times"),
            "{:?}",
            fks[0].evidence
        );
        // By the name: account_id names account, not profile.
        let mut fks = vec![
            link(("profile", "account_id"), ("account", "account_id"), 0),
            link(("account", "account_id"), ("profile", "account_id"), 0),
        ];
        one_direction(&mut fks, &[]);
        assert_eq!(kept(&fks), ["profile.account_id->account"]);
        // Links that are not each other's reverse all stay.
        let mut fks = vec![
            link(("store", "manager_staff_id"), ("staff", "staff_id"), 0),
            link(("staff", "store_id"), ("store", "store_id"), 0),
        ];
        one_direction(&mut fks, &[]);
        assert_eq!(fks.len(), 2);
    }
}

//! D5: find UUIDs anywhere in a database.
//!
//! The values (any spelling the library parses, UUID_192 by its left 128
//! bits) become a set of UUIDs. [`plan`] turns the snapshot into
//! statements: *probes* first, one per column that an index answers
//! exactly (equality on an indexed `uuid` column, `&&` on a GIN-indexed
//! `uuid[]`), then one *scan* per table for every other column that can
//! hold a UUID (uuid without index, uuid[], uuid192, text and text[] —
//! also inside longer text such as URLs —, json/jsonb at any depth as key
//! or value, bytea of 16 or 24 bytes, composite types). Each table is read
//! at most once for all values, which are bound as one array.
//!
//! SQL only narrows the rows: every returned row is checked here
//! ([`hits_in_row`]) with the library's token scanner, so a hit is a UUID
//! token equal to a searched value, and the path inside the value (JSON
//! path, array index) is exact.

mod hits;
mod needles;

pub use hits::{hits_in_row, rows_as_json, v7_time, Hit};
use needles::OVERLAP_LIMIT;
pub use needles::{NeedleError, Needles, LIKE_LIMIT, MAX_VALUES};

use crate::catalog::{Container, RelKind, Relation, Snapshot};
use crate::columns::{index_status, IndexStatus};
use crate::pages::Search;
use crate::plan::{Param, Query};
use serde::Serialize;
use uuidforge_ident::quote_ident;

/// Why a relation was not searched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// Why.
    pub reason: String,
}

/// How a column is searched in a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchedColumn {
    /// Column number.
    pub num: i16,
    /// Name.
    pub name: String,
    /// What it holds (decides how its value is read back).
    pub container: Container,
}

/// One statement of a search: a probe of one indexed column, or the scan of
/// one table for all its other columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The relation.
    pub relation: u32,
    /// Schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// A probe answered by an index (else a scan).
    pub probe: bool,
    /// The columns whose values the rows carry, in order.
    pub columns: Vec<SearchedColumn>,
    /// The row's key is its ctid (the table has no primary key).
    pub ctid_key: bool,
    /// Estimated rows (for progress).
    pub est_rows: i64,
    /// Bytes on disk (for ordering scans, largest first).
    pub bytes: i64,
    /// The statement: rows of `[key, value of each column…]` as JSON text.
    pub query: Query,
}

/// A whole search.
#[derive(Debug, Clone, Default)]
pub struct FindPlan {
    /// Index probes, answered at once.
    pub probes: Vec<Step>,
    /// Table scans, largest first.
    pub scans: Vec<Step>,
    /// Relations the role cannot read.
    pub skipped: Vec<Skipped>,
}

/// What to search.
#[derive(Debug, Clone, Default)]
pub struct FindOptions {
    /// Only these schemas (all when empty).
    pub schemas: Vec<String>,
    /// Only what indexes answer: uuid columns leading a b-tree or hash
    /// index, uuid[] with GIN, and whole-value equality on indexed text.
    pub indexed_only: bool,
    /// Never use the extension's token matcher (tests compare both ways).
    pub without_extension: bool,
    /// Only these columns (all when empty): `column`, `table.column` or
    /// `schema.table.column` (D12: rows restricted to given columns).
    pub columns: Vec<String>,
    /// Only these tables (all when empty): `table` or `schema.table`.
    pub tables: Vec<String>,
}

/// Whether `spec` — `column`, `table.column` or `schema.table.column`,
/// read as psql reads names (quoted parts keep case and dots, unquoted
/// parts fold to lower case) — names `column` of `relation`; with `fold`,
/// also when it would but for case (for the hint).
fn names_column(spec: &str, relation: &crate::catalog::Relation, column: &str, fold: bool) -> bool {
    let Ok(parts) = uuidforge_ident::parse_name(spec) else {
        return false;
    };
    let same = |part: &uuidforge_ident::NamePart, actual: &str| {
        part.name == actual || (fold && !part.quoted && part.name == actual.to_lowercase())
    };
    match &parts[..] {
        [c] => same(c, column),
        [t, c] => same(t, &relation.name) && same(c, column),
        [s, t, c] => same(s, &relation.schema) && same(t, &relation.name) && same(c, column),
        _ => false,
    }
}

/// Whether `spec` — `table` or `schema.table`, read as psql reads names —
/// names `relation`; with `fold`, also when it would but for case.
fn names_table(spec: &str, relation: &crate::catalog::Relation, fold: bool) -> bool {
    let Ok(parts) = uuidforge_ident::parse_name(spec) else {
        return false;
    };
    let same = |part: &uuidforge_ident::NamePart, actual: &str| {
        part.name == actual || (fold && !part.quoted && part.name == actual.to_lowercase())
    };
    match &parts[..] {
        [t] => same(t, &relation.name),
        [s, t] => same(s, &relation.schema) && same(t, &relation.name),
        _ => false,
    }
}

impl FindOptions {
    fn wants(&self, relation: &crate::catalog::Relation, column: &str) -> bool {
        let table_wanted =
            self.tables.is_empty() || self.tables.iter().any(|t| names_table(t, relation, false));
        table_wanted && self.columns.is_empty()
            || self
                .columns
                .iter()
                .any(|spec| names_column(spec, relation, column, false))
    }
}

impl FindOptions {
    /// The first `columns` or `tables` entry that names nothing in
    /// `snapshot` (within `schemas`), as (option, entry, hint): a misspelt
    /// name must not look like "0 hits". An unquoted name that matches only
    /// a mixed-case one gets how to quote it as its hint (else "").
    pub fn unknown_name(&self, snapshot: &Snapshot) -> Option<(&'static str, String, String)> {
        let relations = || {
            snapshot
                .relations
                .iter()
                .filter(|r| self.schemas.is_empty() || self.schemas.contains(&r.schema))
        };
        let hint = |typed: Option<String>| {
            typed.map_or(String::new(), |t| {
                format!(
                    "; unquoted names fold to lower case: did you mean {t}? (in a shell: '{t}')"
                )
            })
        };
        if let Some(t) = self
            .tables
            .iter()
            .find(|t| !relations().any(|r| names_table(t, r, false)))
        {
            let similar = relations()
                .find(|r| names_table(t, r, true))
                .map(|r| r.typed_name());
            return Some(("table", t.clone(), hint(similar)));
        }
        let column_of = |fold: bool, spec: &str| {
            relations().find_map(|r| {
                r.columns
                    .iter()
                    .find(|c| names_column(spec, r, &c.name, fold))
                    .map(|c| format!("{}.{}", r.typed_name(), uuidforge_ident::as_typed(&c.name)))
            })
        };
        self.columns
            .iter()
            .find(|spec| column_of(false, spec).is_none())
            .map(|spec| ("column", spec.clone(), hint(column_of(true, spec))))
    }
}

/// Numbers parameters in order of first use, so a statement binds only the
/// values it refers to.
struct Binder<'a> {
    needles: &'a Needles,
    /// The extension's token matcher, when it may be used.
    matcher: Option<&'a str>,
    params: Vec<Param>,
    slots: Vec<(&'static str, usize)>,
}

impl<'a> Binder<'a> {
    fn new(needles: &'a Needles, matcher: Option<&'a str>) -> Self {
        Binder {
            needles,
            matcher,
            params: Vec::new(),
            slots: Vec::new(),
        }
    }

    fn slot(&mut self, which: &'static str) -> String {
        if let Some((_, n)) = self.slots.iter().find(|(w, _)| *w == which) {
            return format!("${n}");
        }
        let (param, cast) = match which {
            "uuids" => (Param::UuidArray(self.needles.uuids().to_vec()), "uuid[]"),
            "patterns" => (
                Param::TextArray(self.needles.narrowing().patterns),
                "text[]",
            ),
            "folded" => (Param::TextArray(self.needles.narrowing().folded), "text[]"),
            "base32" => (Param::TextArray(self.needles.base32_words()), "text[]"),
            "exact" => (Param::TextArray(self.needles.exact_spellings()), "text[]"),
            "bytes" => (Param::ByteaArray(self.needles.bytes()), "bytea[]"),
            _ => unreachable!("unknown parameter {which}"),
        };
        self.params.push(param);
        let n = self.params.len();
        self.slots.push((which, n));
        let _ = cast;
        format!("${n}::{cast}")
    }
}

/// Text that holds a UUID token, in SQL: narrows rows; [`hits_in_row`]
/// decides.
fn text_predicate(expr: &str, binder: &mut Binder) -> String {
    if binder.needles.len() <= LIKE_LIMIT {
        let narrowing = binder.needles.narrowing();
        let mut parts = Vec::new();
        if !narrowing.patterns.is_empty() {
            // One LIKE ANY: the value (a jsonb's text, say) is made once.
            parts.push(format!("{expr} LIKE ANY ({})", binder.slot("patterns")));
        }
        if !narrowing.folded.is_empty() {
            // ASCII lowering (collation "C") is enough for UUID spellings.
            parts.push(format!(
                "lower(({expr}) COLLATE \"C\") LIKE ANY ({})",
                binder.slot("folded")
            ));
        }
        format!("({})", parts.join(" OR "))
    } else if let Some(matcher) = binder.matcher {
        // The extension scans the text once with `uuidforge::scan`, the
        // values in a hash set built once per statement.
        format!("{matcher}({expr}, {})", binder.slot("uuids"))
    } else {
        let uuids = binder.slot("uuids");
        let base32 = binder.slot("base32");
        format!(
            "EXISTS (SELECT 1 FROM regexp_matches(lower({expr}), \
             '([0-9a-f]{{8}}-?[0-9a-f]{{4}}-?[0-9a-f]{{4}}-?[0-9a-f]{{4}}-?[0-9a-f]{{12}}|[0-9a-hjkmnp-tv-z]{{26}})', 'g') m \
             WHERE CASE WHEN length(m[1]) = 26 THEN m[1] = ANY ({base32}) \
                        ELSE replace(m[1], '-', '')::uuid = ANY ({uuids}) END)"
        )
    }
}

fn value_expr(column: &str, container: Container) -> String {
    match container {
        Container::Uuid192 | Container::Text => format!("to_jsonb(t.{column}::text)"),
        Container::Bytea => format!("to_jsonb(encode(t.{column}, 'hex'))"),
        Container::Jsonb => format!("t.{column}"),
        _ => format!("to_jsonb(t.{column})"),
    }
}

fn predicate(column: &str, container: Container, binder: &mut Binder) -> String {
    match container {
        Container::Uuid => format!("t.{column} = ANY ({})", binder.slot("uuids")),
        Container::UuidArray if binder.needles.len() <= OVERLAP_LIMIT => {
            format!("t.{column} && {}", binder.slot("uuids"))
        }
        // `= ANY` of a bound array is a hash lookup; `&&` compares pairs.
        Container::UuidArray => format!(
            "EXISTS (SELECT 1 FROM unnest(t.{column}) AS e(v) WHERE e.v = ANY ({}))",
            binder.slot("uuids")
        ),
        Container::Bytea => format!(
            "(length(t.{column}) IN (16, 24) AND substr(t.{column}, 1, 16) = ANY ({}))",
            binder.slot("bytes")
        ),
        _ => text_predicate(&format!("t.{column}::text"), binder),
    }
}

/// How the extension's page reader searches a column's stored bytes, when
/// it can (a composite value may hold compressed fields, which only the
/// SQL filter reads).
fn page_search(container: Container) -> Option<Search> {
    match container {
        Container::Uuid | Container::UuidArray | Container::Uuid192 | Container::Bytea => {
            Some(Search::Binary)
        }
        Container::Text | Container::TextArray | Container::Json | Container::Jsonb => {
            Some(Search::Text)
        }
        Container::Composite | Container::OtherArray => None,
    }
}

/// The rows the extension's page reader names (`function`, see
/// [`crate::pages`]), fetched by `ctid`: a scan at about the cost of
/// `count(*)`. The list is computed once, as an init plan, so the table is
/// read once and the rows are fetched by a TID scan.
fn page_filter(
    function: &str,
    relation: &Relation,
    scanned: &[SearchedColumn],
    binder: &mut Binder,
) -> Option<String> {
    let mut text = Vec::new();
    let mut binary = Vec::new();
    for column in scanned {
        match page_search(column.container)? {
            Search::Text => text.push(column.num.to_string()),
            Search::Binary => binary.push(column.num.to_string()),
            Search::Skip => {}
        }
    }
    let uuids = binder.slot("uuids");
    let mut bind = |value: String| {
        binder.params.push(Param::Text(value));
        format!("${}::text", binder.params.len())
    };
    let rel = bind(relation.oid.to_string());
    let text = bind(format!("{{{}}}", text.join(",")));
    let binary = bind(format!("{{{}}}", binary.join(",")));
    Some(format!(
        "t.ctid = ANY ((SELECT {function}({rel}::oid, {uuids}, {text}::int2[], {binary}::int2[]))::tid[])"
    ))
}

/// The JSON expression of a row's key: its primary key columns, else its
/// ctid (stable only within one snapshot; flagged).
fn key_expr(snapshot: &Snapshot, relation: &Relation) -> (String, bool) {
    if let Some(pk) = snapshot.primary_key(relation.oid) {
        let parts: Vec<String> = pk
            .columns
            .iter()
            .filter_map(|&n| relation.column(n))
            .map(|c| {
                format!(
                    "{}, t.{}",
                    uuidforge_ident::quote_literal(&c.name),
                    quote_ident(&c.name)
                )
            })
            .collect();
        if !parts.is_empty() {
            return (format!("json_build_object({})", parts.join(", ")), false);
        }
    }
    if snapshot.has_foreign_rows(relation) {
        // A foreign table's ctid is the remote server's, fetched through
        // the FDW: no statement here names a foreign row by it (Citus
        // refuses ctid on distributed tables for the same reason).
        (
            "json_build_object('partition', t.tableoid::regclass::text)".to_string(),
            true,
        )
    } else if relation.kind == RelKind::PartitionedTable {
        (
            "json_build_object('partition', t.tableoid::regclass::text, 'ctid', t.ctid::text)"
                .to_string(),
            true,
        )
    } else {
        ("json_build_object('ctid', t.ctid::text)".to_string(), true)
    }
}

/// Whether a search reads `relation`'s rows: rows live in tables and
/// materialized views, and behind foreign tables on other servers (read
/// through the FDW, which sends the filter there where it can); a
/// partitioned table is read through its parent; views only show those
/// rows again.
fn searched_for_rows(relation: &Relation) -> bool {
    matches!(
        relation.kind,
        RelKind::Table
            | RelKind::PartitionedTable
            | RelKind::MaterializedView
            | RelKind::ForeignTable
    ) && !relation.is_partition
}

/// Plans a search for `needles`.
pub fn plan(snapshot: &Snapshot, needles: &Needles, options: &FindOptions) -> FindPlan {
    let mut plan = FindPlan::default();
    let matcher = snapshot
        .token_matcher
        .as_deref()
        .filter(|_| !options.without_extension);
    let page_matcher = snapshot
        .page_matcher
        .as_deref()
        .filter(|_| !options.without_extension);
    for relation in &snapshot.relations {
        if !options.schemas.is_empty() && !options.schemas.contains(&relation.schema) {
            continue;
        }
        if !searched_for_rows(relation) {
            continue;
        }
        let columns: Vec<(&crate::catalog::Column, Container)> = relation
            .columns
            .iter()
            .filter(|c| options.wants(relation, &c.name))
            .filter_map(|c| snapshot.container(c.type_oid).map(|k| (c, k)))
            .collect();
        if columns.is_empty() {
            continue;
        }
        if !relation.can_select || columns.iter().any(|(c, _)| !c.can_select) {
            plan.skipped.push(Skipped {
                schema: relation.schema.clone(),
                table: relation.name.clone(),
                reason: format!("permission denied: {} may not read it", snapshot.user),
            });
            continue;
        }
        let (key, ctid_key) = key_expr(snapshot, relation);
        let step = |columns: Vec<SearchedColumn>, probe: bool, query: Query| Step {
            relation: relation.oid,
            schema: relation.schema.clone(),
            table: relation.name.clone(),
            probe,
            columns,
            ctid_key,
            est_rows: relation.est_rows,
            bytes: relation.bytes,
            query,
        };
        // A table whose other columns are read from its pages anyway gets
        // its indexed columns read there too when many values are searched:
        // thousands of index lookups cost more than that page read.
        let page_route = page_matcher.is_some()
            && relation.heap_pages
            && !options.indexed_only
            && columns.iter().all(|(_, k)| page_search(*k).is_some());
        let mut probes = Vec::new();
        let mut scanned = Vec::new();
        for (column, container) in columns {
            let status = index_status(snapshot, relation.oid, column.num);
            let name = quote_ident(&column.name);
            let searched = SearchedColumn {
                num: column.num,
                name: column.name.clone(),
                container,
            };
            let probe_predicate = |binder: &mut Binder| -> Option<String> {
                match (&status, container) {
                    (IndexStatus::Leading { .. }, Container::Uuid) => {
                        Some(format!("t.{name} = ANY ({})", binder.slot("uuids")))
                    }
                    // Beyond a few values `&&` compares every pair, and the
                    // planner prefers a sequential scan to that many GIN
                    // lookups: the column is scanned with a hash instead.
                    (IndexStatus::ExpressionOrGin { method, .. }, Container::UuidArray)
                        if method == "gin"
                            && (needles.len() <= OVERLAP_LIMIT || options.indexed_only) =>
                    {
                        Some(format!("t.{name} && {}", binder.slot("uuids")))
                    }
                    (IndexStatus::Leading { .. }, Container::Text) if options.indexed_only => {
                        Some(format!("t.{name} = ANY ({})", binder.slot("exact")))
                    }
                    _ => None,
                }
            };
            let mut binder = Binder::new(needles, matcher);
            if let Some(pred) = probe_predicate(&mut binder) {
                let sql = format!(
                    "SELECT json_build_array({key}, {})::text FROM {} t WHERE {pred}",
                    value_expr(&name, container),
                    relation.sql_name()
                );
                probes.push(step(
                    vec![searched],
                    true,
                    Query {
                        sql,
                        params: binder.params,
                    },
                ));
            } else if !options.indexed_only {
                scanned.push(searched);
            }
        }
        if page_route && needles.len() > OVERLAP_LIMIT && !scanned.is_empty() {
            scanned.extend(probes.drain(..).flat_map(|p| p.columns));
            scanned.sort_by_key(|c| c.num);
        }
        plan.probes.append(&mut probes);
        if scanned.is_empty() {
            continue;
        }
        let mut binder = Binder::new(needles, matcher);
        let values: Vec<String> = scanned
            .iter()
            .map(|c| value_expr(&quote_ident(&c.name), c.container))
            .collect();
        let filter = match page_matcher.filter(|_| relation.heap_pages) {
            Some(function) => page_filter(function, relation, &scanned, &mut binder),
            None => None,
        }
        .unwrap_or_else(|| {
            scanned
                .iter()
                .map(|c| predicate(&quote_ident(&c.name), c.container, &mut binder))
                .collect::<Vec<_>>()
                .join(" OR ")
        });
        let sql = format!(
            "SELECT json_build_array({key}, {})::text FROM {} t WHERE {filter}",
            values.join(", "),
            relation.sql_name(),
        );
        plan.scans.push(step(
            scanned,
            false,
            Query {
                sql,
                params: binder.params,
            },
        ));
    }
    plan.scans.sort_by_key(|s| std::cmp::Reverse(s.bytes));
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn needles(values: &[&str]) -> Needles {
        Needles::parse(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("value {i}"), *v)),
        )
        .unwrap()
    }

    /// PostgreSQL's `LIKE` for `%`/`_` patterns without escapes.
    fn like(text: &str, pattern: &str) -> bool {
        fn go(t: &[u8], p: &[u8]) -> bool {
            match p.split_first() {
                None => t.is_empty(),
                Some((b'%', rest)) => (0..=t.len()).any(|i| go(&t[i..], rest)),
                Some((b'_', rest)) => !t.is_empty() && go(&t[1..], rest),
                Some((c, rest)) => t.first() == Some(c) && go(&t[1..], rest),
            }
        }
        go(text.as_bytes(), pattern.as_bytes())
    }

    /// Whether `text` is let through by the narrowing, as PostgreSQL
    /// evaluates the predicate.
    fn narrowed(n: &Needles, text: &str) -> bool {
        let narrowing = n.narrowing();
        narrowing.patterns.iter().any(|p| like(text, p))
            || narrowing
                .folded
                .iter()
                .any(|p| like(&text.to_ascii_lowercase(), p))
    }

    #[test]
    fn narrowing_lets_every_spelling_through_in_any_case() {
        // One UUID rich in digits (anchors), one with no digit at all in
        // its hex form (matched in full, lowered).
        for value in [
            "01890a5d-ac96-774b-bcce-b302099a8057",
            "abcdefab-cdef-4bcd-afab-cdefabcdefab",
        ] {
            let u: Uuid = value.parse().unwrap();
            let n = needles(&[value]);
            let spellings = [
                value.to_string(),
                value.to_uppercase(),
                format!("{{{}}}", value.to_uppercase()),
                format!("urn:uuid:{value}"),
                u.simple().to_string().to_uppercase(),
                uuidforge::base32::encode(&u).as_str().to_string(),
                uuidforge::base32::encode(&u).as_str().to_lowercase(),
                // Mixed case, letter by letter.
                value
                    .chars()
                    .enumerate()
                    .map(|(i, c)| {
                        if i % 2 == 0 {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect(),
            ];
            for spelling in spellings {
                let text = format!("see https://example.com/x/{spelling}?y=1");
                assert!(narrowed(&n, &text), "{value}: {spelling}");
            }
            assert!(!narrowed(&n, "nothing here but words"));
        }
        let n = needles(&["abcdefab-cdef-4bcd-afab-cdefabcdefab"]).narrowing();
        assert!(n
            .folded
            .contains(&"%abcdefab-cdef-4bcd-afab-cdefabcdefab%".to_string()));
        assert!(n.patterns.len() <= 2, "{n:?}");
        let n = needles(&["01890a5d-ac96-774b-bcce-b302099a8057"]).narrowing();
        assert!(n.patterns.contains(&"%302099%".to_string()), "{n:?}");
        assert_eq!(
            n.patterns.iter().filter(|p| p.contains('_')).count(),
            2,
            "{n:?}"
        );
        assert!(n.folded.is_empty(), "{n:?}");
    }

    fn step(containers: &[Container]) -> Step {
        Step {
            relation: 1,
            schema: "s".into(),
            table: "t".into(),
            probe: false,
            columns: containers
                .iter()
                .enumerate()
                .map(|(i, &c)| SearchedColumn {
                    num: i as i16 + 1,
                    name: format!("c{i}"),
                    container: c,
                })
                .collect(),
            ctid_key: false,
            est_rows: 0,
            bytes: 0,
            query: Query::new(""),
        }
    }

    const A: &str = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";

    #[test]
    fn every_spelling_of_a_value_is_one_needle() {
        let n = needles(&[
            A,
            "{017F22E2-79B0-7CC3-98C4-DC0C0C07398F}",
            "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "017f22e279b07cc398c4dc0c0c07398f",
            "01FWHE4YDGFK1SHH6W1G60EECF",
        ]);
        assert_eq!(n.len(), 1);
        let err = Needles::parse([("line 3 of ids.txt".to_string(), "nope")]).unwrap_err();
        assert_eq!(err.origin, "line 3 of ids.txt");
        assert!(err.to_string().contains("'nope'"), "{err}");
    }

    #[test]
    fn json_paths_keys_and_text() {
        let n = needles(&[A]);
        let row = serde_json::json!([
            {"id": 7},
            {"order": {"items": [{"id": "x"}, {"id": A.to_uppercase()}]}, A: 1, "we ird": A},
            format!("see https://h/o/{A}?x"),
            A,
            ["a", A],
        ])
        .to_string();
        let hits = hits_in_row(
            &step(&[
                Container::Jsonb,
                Container::Text,
                Container::Text,
                Container::TextArray,
            ]),
            &row,
            &n,
        )
        .unwrap();
        let got: Vec<(String, Option<String>, &str)> = hits
            .iter()
            .map(|h| (h.column.clone(), h.path.clone(), h.role))
            .collect();
        assert_eq!(
            got,
            vec![
                ("c0".into(), Some(format!("$[\"{A}\"]")), "key"),
                ("c0".into(), Some("$.order.items[1].id".into()), "value"),
                ("c0".into(), Some("$[\"we ird\"]".into()), "value"),
                ("c1".into(), Some("$".into()), "value"),
                ("c2".into(), None, "value"),
                ("c3".into(), Some("$[1]".into()), "value"),
            ]
        );
        assert!(hits.iter().all(|h| h.key == serde_json::json!({"id": 7})));
    }

    #[test]
    fn bytes_and_uuid_values() {
        let n = needles(&[A]);
        let hex = A.replace('-', "");
        let row =
            serde_json::json!([{"id": 1}, hex, format!("{hex}0000000000000000"), A]).to_string();
        let hits = hits_in_row(
            &step(&[Container::Bytea, Container::Bytea, Container::Uuid]),
            &row,
            &n,
        )
        .unwrap();
        assert_eq!(hits.len(), 3);
        let other = needles(&["00000000-0000-0000-0000-000000000001"]);
        assert!(hits_in_row(
            &step(&[Container::Bytea, Container::Bytea, Container::Uuid]),
            &row,
            &other
        )
        .unwrap()
        .is_empty());
    }
}

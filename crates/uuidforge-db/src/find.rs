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

use crate::catalog::{Container, RelKind, Relation, Snapshot};
use crate::columns::{index_status, IndexStatus};
use crate::error::DbError;
use crate::ident::quote_ident;
use crate::pages::Search;
use crate::plan::{Param, Query};
use serde::Serialize;
use std::collections::HashSet;
use uuid::Uuid;

/// Most values one search takes (from a file).
pub const MAX_VALUES: usize = 1_000_000;

/// Up to this many values, text is searched with `LIKE` patterns (fast for
/// a few); above, UUID-shaped tokens are extracted once per value and
/// compared with the whole set.
pub const LIKE_LIMIT: usize = 4;

/// Most values matched against a `uuid[]` with `&&` (which compares every
/// element with every value); more are looked up in a hash.
const OVERLAP_LIMIT: usize = 16;

/// How [`Needles`] narrow text (see `Needles::narrowing`).
#[derive(Debug, Default)]
struct Narrowing {
    /// `LIKE` patterns that hold in any letter case.
    patterns: Vec<String>,
    /// Whole lower-case spellings, for values with too few digits.
    folded: Vec<String>,
}

/// Fewest digits a narrowing pattern fixes: 4 digits in place are found
/// by chance in about one ordinary text position in 10 000 (the rows they
/// let through are checked exactly anyway).
const MIN_ANCHOR: usize = 4;

/// The longest run of ASCII digits in `text`.
fn longest_digit_run(text: &str) -> Option<&str> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|run| !run.is_empty())
        .max_by_key(|run| run.len())
}

/// The values searched for.
#[derive(Debug, Clone, Default)]
pub struct Needles {
    set: HashSet<Uuid>,
    ordered: Vec<Uuid>,
}

/// A value that is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedleError {
    /// Where it came from (`value 2`, `line 17 of ids.txt`).
    pub origin: String,
    /// The text.
    pub value: String,
    /// What the parser expected.
    pub expected: String,
}

impl std::fmt::Display for NeedleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: '{}' is not a UUID: {}",
            self.origin, self.value, self.expected
        )
    }
}

impl std::error::Error for NeedleError {}

impl Needles {
    /// Parses each value (canonical in any case, braced, URN, 32 hex,
    /// Base32 with or without check symbol, UUID_192 text or Base32).
    /// `values` yields (origin, text); blank texts are skipped.
    pub fn parse<'a>(
        values: impl IntoIterator<Item = (String, &'a str)>,
    ) -> Result<Needles, NeedleError> {
        let mut needles = Needles::default();
        for (origin, text) in values {
            let trimmed = text.trim();
            if trimmed.is_empty() {
                continue;
            }
            let value =
                uuidforge::parser::parse_value(trimmed.as_bytes()).map_err(|e| NeedleError {
                    origin: origin.clone(),
                    value: trimmed.chars().take(80).collect(),
                    expected: e.to_string(),
                })?;
            needles.insert(value.uuid());
            if needles.len() > MAX_VALUES {
                return Err(NeedleError {
                    origin,
                    value: trimmed.to_string(),
                    expected: format!("at most {MAX_VALUES} values"),
                });
            }
        }
        Ok(needles)
    }

    /// Adds a UUID.
    pub fn insert(&mut self, uuid: Uuid) {
        if self.set.insert(uuid) {
            self.ordered.push(uuid);
        }
    }

    /// Number of distinct UUIDs.
    pub fn len(&self) -> usize {
        self.ordered.len()
    }

    /// No values.
    pub fn is_empty(&self) -> bool {
        self.ordered.is_empty()
    }

    /// Whether `uuid` is searched for.
    pub fn contains(&self, uuid: &Uuid) -> bool {
        self.set.contains(uuid)
    }

    /// The UUIDs in the order first given.
    pub fn uuids(&self) -> &[Uuid] {
        &self.ordered
    }

    /// How text is narrowed for up to [`LIKE_LIMIT`] values, in any letter
    /// case and without lowering a copy of every value (which costs
    /// several times the scan):
    /// - hex spellings (canonical, braces, URN, 32 hex, UUID_192 text):
    ///   the longest run of decimal digits of one group, which all of them
    ///   hold;
    /// - Base32 and UUID_192 Base32: its shape, each letter replaced by `_`
    ///   (any one character), which keeps every digit in place.
    ///
    /// A family with too few digits to be selective is matched in full on
    /// lowered text instead (`folded`).
    fn narrowing(&self) -> Narrowing {
        let mut n = Narrowing::default();
        for u in &self.ordered {
            let canonical = uuidforge::fmt::to_canonical_string(u);
            match longest_digit_run(&canonical) {
                Some(run) if run.len() >= MIN_ANCHOR => n.patterns.push(format!("%{run}%")),
                _ => {
                    n.folded.push(format!("%{canonical}%"));
                    n.folded.push(format!("%{}%", u.simple()));
                }
            }
            for base32 in [
                uuidforge::base32::encode(u).as_str().to_lowercase(),
                uuidforge::scan::uuid192_base32_prefix(u).to_lowercase(),
            ] {
                let digits = base32.chars().filter(char::is_ascii_digit).count();
                if digits >= MIN_ANCHOR {
                    let shape: String = base32
                        .chars()
                        .map(|c| if c.is_ascii_digit() { c } else { '_' })
                        .collect();
                    n.patterns.push(format!("%{}%", shape.trim_matches('_')));
                } else {
                    n.folded.push(format!("%{base32}%"));
                }
            }
        }
        n.patterns.sort();
        n.patterns.dedup();
        n
    }

    fn base32_words(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.len() * 2);
        for u in &self.ordered {
            out.push(uuidforge::base32::encode(u).as_str().to_lowercase());
            out.push(uuidforge::scan::uuid192_base32_prefix(u).to_lowercase());
        }
        out
    }

    fn exact_spellings(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.len() * 8);
        for u in &self.ordered {
            let c = uuidforge::fmt::to_canonical_string(u);
            let upper = c.to_uppercase();
            out.push(format!("{{{c}}}"));
            out.push(format!("{{{upper}}}"));
            out.push(format!("urn:uuid:{c}"));
            out.push(u.simple().to_string());
            out.push(u.simple().to_string().to_uppercase());
            out.push(uuidforge::base32::encode(u).as_str().to_string());
            out.push(c);
            out.push(upper);
        }
        out
    }

    fn bytes(&self) -> Vec<Vec<u8>> {
        self.ordered.iter().map(|u| u.as_bytes().to_vec()).collect()
    }
}

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
    let Ok(parts) = crate::ident::parse_name(spec) else {
        return false;
    };
    let same = |part: &crate::ident::NamePart, actual: &str| {
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
    let Ok(parts) = crate::ident::parse_name(spec) else {
        return false;
    };
    let same = |part: &crate::ident::NamePart, actual: &str| {
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
                    .map(|c| format!("{}.{}", r.typed_name(), crate::ident::as_typed(&c.name)))
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
                    crate::ident::quote_literal(&c.name),
                    quote_ident(&c.name)
                )
            })
            .collect();
        if !parts.is_empty() {
            return (format!("json_build_object({})", parts.join(", ")), false);
        }
    }
    if relation.kind == RelKind::PartitionedTable {
        (
            "json_build_object('partition', t.tableoid::regclass::text, 'ctid', t.ctid::text)"
                .to_string(),
            true,
        )
    } else {
        ("json_build_object('ctid', t.ctid::text)".to_string(), true)
    }
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
        // Rows live in tables and materialized views; a partitioned table
        // is read through its parent; views only show those rows again.
        let searchable = matches!(
            relation.kind,
            RelKind::Table | RelKind::PartitionedTable | RelKind::MaterializedView
        ) && !relation.is_partition;
        if !searchable {
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

/// One occurrence of a searched UUID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// Schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// Column.
    pub column: String,
    /// Where inside the value: a JSON path (`$.order.items[2].id`, with
    /// `$` alone for a plain text value holding it among other text) for
    /// json, arrays and composite values; `null` when the value is the UUID.
    pub path: Option<String>,
    /// `value` or `key` (a JSON object key).
    pub role: &'static str,
    /// The row's primary key as a JSON object, or `{"ctid": …}`.
    pub key: serde_json::Value,
    /// The key is a ctid: it names the row only within this snapshot.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub key_unstable: bool,
    /// The UUID found (canonical).
    pub value: String,
    /// How it was written there.
    pub written: String,
    /// For a UUIDv7: the time it carries (RFC 9562 §5.7), ISO 8601 UTC to
    /// the millisecond, the row's creation time when the key was made then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v7_time: Option<String>,
}

/// The time a UUIDv7 carries, as [`Hit::v7_time`] shows it.
pub fn v7_time(uuid: &Uuid) -> Option<String> {
    (uuid.get_version_num() == 7 && uuid.get_variant() == uuid::Variant::RFC4122).then(|| {
        let ms = (uuid.as_u128() >> 80) as u64;
        uuidforge::timestamp::Timestamp::from_unix_ms(ms).to_string()
    })
}

/// The hits in one row returned by a step's statement.
pub fn hits_in_row(step: &Step, row: &str, needles: &Needles) -> Result<Vec<Hit>, DbError> {
    let row: serde_json::Value = serde_json::from_str(row)
        .map_err(|e| DbError::unreadable("find", format!("row of {}: {e}", step.table)))?;
    let serde_json::Value::Array(items) = row else {
        return Err(DbError::unreadable(
            "find",
            format!("row of {} is not an array", step.table),
        ));
    };
    if items.len() != step.columns.len() + 1 {
        return Err(DbError::unreadable(
            "find",
            format!(
                "row of {} has {} items, expected {}",
                step.table,
                items.len(),
                step.columns.len() + 1
            ),
        ));
    }
    let key = items[0].clone();
    let mut out = Vec::new();
    for (column, value) in step.columns.iter().zip(&items[1..]) {
        let mut found = Vec::new();
        match (column.container, value) {
            (_, serde_json::Value::Null) => {}
            (Container::Uuid, serde_json::Value::String(s)) => {
                if let Ok(u) = Uuid::parse_str(s) {
                    if needles.contains(&u) {
                        found.push((None, "value", u, s.clone()));
                    }
                }
            }
            (Container::Bytea, serde_json::Value::String(hex)) => {
                if let Some(u) = bytes_uuid(hex) {
                    if needles.contains(&u) {
                        found.push((None, "value", u, format!("\\x{hex}")));
                    }
                }
            }
            (Container::Text | Container::Uuid192, serde_json::Value::String(s)) => {
                let whole = uuidforge::scan::tokens(s.as_bytes())
                    .next()
                    .is_some_and(|t| t.start == 0 && t.end == s.len());
                let path = if whole { None } else { Some("$".to_string()) };
                push_tokens(s, path, "value", needles, &mut found);
            }
            (_, v) => walk(v, &mut "$".to_string(), needles, &mut found),
        }
        for (path, role, uuid, written) in found {
            out.push(Hit {
                schema: step.schema.clone(),
                table: step.table.clone(),
                column: column.name.clone(),
                path,
                role,
                key: key.clone(),
                key_unstable: step.ctid_key,
                value: uuid.to_string(),
                written,
                v7_time: v7_time(&uuid),
            });
        }
    }
    Ok(out)
}

type Found = (Option<String>, &'static str, Uuid, String);

/// Every searched UUID written in `text`, found at `path` in `role`.
fn push_tokens(
    text: &str,
    path: Option<String>,
    role: &'static str,
    needles: &Needles,
    out: &mut Vec<Found>,
) {
    for t in uuidforge::scan::tokens(text.as_bytes()) {
        if needles.contains(&t.uuid) {
            out.push((path.clone(), role, t.uuid, text[t.start..t.end].to_string()));
        }
    }
}

fn walk(value: &serde_json::Value, path: &mut String, needles: &Needles, out: &mut Vec<Found>) {
    match value {
        serde_json::Value::String(s) => push_tokens(s, Some(path.clone()), "value", needles, out),
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, path, needles, out);
                path.truncate(len);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let len = path.len();
                push_member(path, k);
                push_tokens(k, Some(path.clone()), "key", needles, out);
                walk(v, path, needles, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Appends `.name`, or `["name"]` when the name is not a plain identifier
/// (SQL/JSON path syntax).
fn push_member(path: &mut String, name: &str) {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        path.push('.');
        path.push_str(name);
    } else {
        path.push_str(&format!("[{}]", serde_json::Value::String(name.into())));
    }
}

fn bytes_uuid(hex: &str) -> Option<Uuid> {
    if hex.len() != 32 && hex.len() != 48 {
        return None;
    }
    uuidforge::parser::parse_simple(&hex.as_bytes()[..32]).ok()
}

/// D12: every row of `table` as one JSON object (`to_jsonb`), for a
/// search that reads rows as documents (`uuidforge grep --db --table`).
/// Only tables, views and materialized views are read; the name is
/// `table` or `schema.table`, resolved in `snapshot`.
pub fn rows_as_json(snapshot: &Snapshot, table: &str) -> Result<Query, DbError> {
    let relation = snapshot.find_relation(table)?;
    Ok(Query::new(format!(
        "SELECT to_jsonb(t)::text FROM {} AS t",
        crate::ident::qualified(&relation.schema, &relation.name)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

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

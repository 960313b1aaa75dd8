//! Copies of a uuid key outside its declared references: a polymorphic
//! `tags.entity_id`, a `cache_key` text that embeds the key among other
//! data (`plugins:basic-auth::<service id>:::<ws id>`), a jsonb document
//! naming it, a uuid array. A uuid is unique, so every occurrence of an
//! old key anywhere is a copy of that row's key.
//!
//! The plan reads them like `db find` does — one statement per table, every
//! candidate column of it at once (uuid, uuid[], text, text[], json,
//! jsonb) — counting per column the rows holding an old key and those
//! whose whole value is one; each column with any is named with its
//! counts, and refused before anything runs unless `--also` (rewrite it)
//! or `--leave` (keep it) names it. The read costs a pass over those
//! columns: the plan prints its time, `--copies-in` narrows it to schemas
//! or tables, and `--no-copy-search` skips it, which the plan then says.
//!
//! Rewriting (one transaction): a uuid column takes the new key where it
//! held an old one; an array, element by element; text and JSON (as
//! text, cast back) have each token that is an old key — a whole UUID
//! token, not a part of a longer run of hex digits — replaced by the new
//! key spelled as the old was (case, hyphens), everything else kept byte
//! for byte. The old and new keys are one to one and the same length, and
//! no new key occurs in the data before, so two values that differed
//! still differ: a unique constraint over such text stays satisfied (and
//! PostgreSQL checks it row by row anyway). After, no copied column holds
//! an old key.

use super::{Kind, Migration, Placed, Schedule, SoFar, Staying, Target};
use crate::action::{Action, Object, Table};
use crate::ops::key::phase::Phase;
use crate::ops::{Answers, Line, Read, Reading};
use serde::{Deserialize, Serialize};
use uuidforge_db::catalog::{Column, Container, RelKind, Relation};
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_db::plan::Query;
use uuidforge_ident::{quote_ident, quote_literal};

pub(super) struct CopiesOfTheKey;

impl Kind for CopiesOfTheKey {
    fn name(&self) -> &'static str {
        "copies of a uuid key"
    }

    fn reads(&self, target: &Target, _: &SoFar) -> Result<Vec<Read>, DbError> {
        Ok(searched(target)
            .into_iter()
            .map(|(table, columns)| read(target, table, &columns))
            .collect())
    }

    /// Refused where a column holds old keys and is named neither as a copy
    /// nor to be left.
    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        let unnamed: Vec<String> = m
            .copies
            .found
            .iter()
            .filter(|c| !c.rewritten)
            .map(Copy::described)
            .collect();
        if unnamed.is_empty() {
            return Ok(Vec::new());
        }
        let each = "TABLE.COLUMN".to_string();
        Err(DbError::refusal(
            "table",
            Refusal::new(
                Reason::CopiesNotNamed,
                format!(
                    "old keys of {} are copied outside its references, in {}: name each",
                    m.key.table.display_name(),
                    unnamed.join(", ")
                ),
            )
            .way_out(WayOut::AsCopy {
                column: each.clone(),
            })
            .way_out(WayOut::Leave { column: each })
            .way_out(WayOut::NarrowCopySearch)
            .way_out(WayOut::SkipCopySearch),
        ))
    }

    fn place(&self, m: &Migration, schedule: Schedule, map: &str) -> Result<Vec<Placed>, DbError> {
        if schedule.in_batches() {
            if let Some(c) = m.copies.found.iter().find(|c| c.rewritten) {
                return Err(DbError::refusal(
                    "also",
                    Refusal::new(
                        Reason::NotInBatches,
                        format!(
                            "{} holds copies of the keys, rewritten in place in one transaction only (writers would keep writing old keys meanwhile)",
                            c.described()
                        ),
                    )
                    .way_out(WayOut::OneTransaction)
                    .way_out(WayOut::Leave {
                        column: c.spec(),
                    }),
                ));
            }
            return Ok(Vec::new());
        }
        Ok(Placed::actions(
            Phase::RewriteCopies,
            rewrite(m, &m.copies, map),
        ))
    }
}

/// The read of the copies in one table.
struct CopiesIn<'a> {
    table: &'a Relation,
}

impl Reading for CopiesIn<'_> {
    type Answer = Counted;

    fn name(&self) -> String {
        format!("copies in {}", self.table.oid)
    }

    fn what(&self) -> String {
        format!(
            "look for copies of the keys in {}",
            self.table.display_name()
        )
    }

    fn parse(&self, text: &str) -> Result<Counted, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// A UUID's text, case-insensitive, hyphens optional.
macro_rules! uuid_pattern {
    () => {
        "[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}"
    };
}

/// A UUID token, not part of a longer run of hex digits (a PostgreSQL
/// advanced regular expression; the token is its first group).
pub const TOKEN: &str = concat!("(?<![0-9A-Fa-f])(", uuid_pattern!(), ")(?![0-9A-Fa-f])");

/// A value that is one UUID as a whole.
const WHOLE: &str = concat!("^", uuid_pattern!(), "$");

/// The function the rewrite calls, for this transaction only.
const REKEY: &str = "pg_temp.uuidforge_new_keys_in";

/// Where copies are looked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopySearch {
    /// Only these schemas or tables (`schema`, `table`, `schema.table`):
    /// all when empty.
    pub within: Vec<String>,
    /// Not at all (the plan says so).
    pub skip: bool,
}

/// How a column holds a key.
fn holds(container: Container) -> Option<&'static str> {
    match container {
        Container::Uuid => Some("uuid"),
        Container::UuidArray => Some("uuid[]"),
        Container::Text => Some("text"),
        Container::TextArray => Some("text[]"),
        Container::Json => Some("json"),
        Container::Jsonb => Some("jsonb"),
        _ => None,
    }
}

/// Whether `spec` (`schema`, `table` or `schema.table`) names `relation`.
fn within(spec: &str, relation: &Relation) -> bool {
    let Ok(parts) = uuidforge_ident::parse_name(spec) else {
        return false;
    };
    match &parts[..] {
        [one] => one.name == relation.schema || one.name == relation.name,
        [s, t] => s.name == relation.schema && t.name == relation.name,
        _ => false,
    }
}

/// The columns searched, by table: every uuid, uuid[], text, text[], json
/// and jsonb column the role may read, of tables `--copies-in` names (all
/// without it; uuidforge's own tables left out), but the key itself and
/// its declared references (migrated) and the columns `--leave` names.
/// Only for a uuid key.
fn searched<'a>(target: &Target<'a>) -> Vec<(&'a Relation, Vec<&'a Column>)> {
    searched_where(target, &|c| {
        target
            .snapshot
            .container(c.type_oid)
            .and_then(holds)
            .is_some()
    })
}

/// The columns `picked` among those a search for copies reads, by table:
/// every column the role may read of tables `--copies-in` names (all
/// without it; uuidforge's own tables left out), but the key itself, its
/// declared references and the columns `--leave` names. Only for a uuid
/// key.
pub(super) fn searched_where<'a>(
    target: &Target<'a>,
    picked: &dyn Fn(&Column) -> bool,
) -> Vec<(&'a Relation, Vec<&'a Column>)> {
    if target.key.column.type_name != "uuid" || target.copy_search.skip {
        return Vec::new();
    }
    let snapshot = target.snapshot;
    let mut out = Vec::new();
    for r in snapshot.relations.iter().filter(|r| {
        matches!(r.kind, RelKind::Table | RelKind::PartitionedTable)
            && !r.is_partition
            && r.can_select
            // uuidforge's own bookkeeping (a merge log, a change's state)
            // records keys as they were, on purpose.
            && !r.name.starts_with("uuidforge_")
            && (target.copy_search.within.is_empty()
                || target.copy_search.within.iter().any(|w| within(w, r)))
    }) {
        let columns: Vec<&Column> = r
            .columns
            .iter()
            .filter(|c| c.can_select)
            .filter(|c| picked(c))
            .filter(|c| !(r.oid == target.key.table.oid && c.num == target.key.column.num))
            .filter(|c| {
                !target
                    .references
                    .iter()
                    .any(|x| x.table.oid == r.oid && x.column.num == c.num)
            })
            .filter(|c| !target.left.contains(&(r.oid, c.num)))
            .collect();
        if !columns.is_empty() {
            out.push((r, columns));
        }
    }
    out
}

/// `value IN (SELECT k FROM keys)`, kept a hashed subplan: the keys
/// hashed once for the whole statement. Bare, inside a per-row `EXISTS`
/// the planner would make it a semi-join that hashes every key again for
/// each row (33 s instead of 0.2 s for 33 000 rows against 20 000 keys).
pub(super) fn is_key(value: &str, keys: &str) -> String {
    format!("({value} IN (SELECT k FROM {keys})) IS TRUE")
}

/// Whether row `x`'s `column` holds an old key, the key table's keys
/// being `keys` (a relation with column `k`): with the extension's token
/// matcher (`matcher`, which scans text once against a hash set of the
/// keys, built once per statement) where it is installed, else tokens cut
/// by a regular expression and looked up.
fn holds_key(column: &Column, container: Container, keys: &str, matcher: Option<&str>) -> String {
    let c = format!("x.{}", quote_ident(&column.name));
    if let (Some(m), false) = (
        matcher,
        matches!(container, Container::Uuid | Container::UuidArray),
    ) {
        return format!("{m}({c}::text, (SELECT array_agg(k) FROM {keys}))");
    }
    match container {
        Container::Uuid => is_key(&c, keys),
        Container::UuidArray => format!(
            "EXISTS (SELECT FROM unnest({c}) e(v) WHERE {})",
            is_key("e.v", keys)
        ),
        _ => format!(
            "EXISTS (SELECT FROM regexp_matches({c}::text, {}, 'g') m WHERE {})",
            quote_literal(TOKEN),
            is_key("m[1]::uuid", keys)
        ),
    }
}

/// Whether row `x`'s `column` is, as a whole, an old key.
fn whole_key(column: &Column, container: Container, keys: &str) -> String {
    let c = format!("x.{}", quote_ident(&column.name));
    match container {
        Container::Uuid => is_key(&c, keys),
        // CASE: the cast is made only of a value that is a UUID.
        Container::Text => is_key(
            &format!(
                "CASE WHEN {c} ~ {} THEN {c}::uuid END",
                quote_literal(WHOLE)
            ),
            keys,
        ),
        _ => "false".into(),
    }
}

/// The read of the copies in one table: one row of JSON text, `{"counts":
/// [[rows holding a key, rows that are one], …] per column, "ms": its
/// time}`.
fn read(target: &Target, table: &Relation, columns: &[&Column]) -> Read {
    let keys = format!(
        "(SELECT {} AS k FROM {})",
        quote_ident(&target.key.column.name),
        target.key.table.sql_name()
    );
    let counts: Vec<String> = columns
        .iter()
        .map(|c| {
            let container = target
                .snapshot
                .container(c.type_oid)
                .unwrap_or(Container::Text);
            format!(
                "json_build_array(count(*) FILTER (WHERE {}), count(*) FILTER (WHERE {}))",
                holds_key(
                    c,
                    container,
                    "keys",
                    target.snapshot.token_matcher.as_deref()
                ),
                whole_key(c, container, "keys")
            )
        })
        .collect();
    CopiesIn { table }.read(Query::new(format!(
            "WITH keys AS MATERIALIZED {keys}, started AS MATERIALIZED (SELECT clock_timestamp() AS at), \
             counted AS MATERIALIZED (SELECT json_build_array({}) AS counts FROM started, {} x) \
             SELECT json_build_object('counts', c.counts, 'ms', round(extract(epoch FROM clock_timestamp() - s.at) * 1000))::text \
             FROM started s, counted c",
            counts.join(", "),
            table.sql_name()
        )))
}

/// What the read of one table said.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Counted {
    counts: Vec<(i64, i64)>,
    ms: f64,
}

/// A column holding copies of old keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Copy {
    /// Its table (quoted, qualified).
    pub table: String,
    /// Its table's oid.
    pub table_oid: u32,
    /// The column.
    pub column: String,
    /// Its number.
    pub num: i16,
    /// `uuid`, `uuid[]`, `text`, `text[]`, `json` or `jsonb`.
    pub holds: String,
    /// Rows holding an old key.
    pub rows: i64,
    /// Rows whose whole value is one.
    pub whole: i64,
    /// Named by `--also`: rewritten.
    pub rewritten: bool,
}

impl Copy {
    /// The column as a user names it again.
    pub fn spec(&self) -> String {
        format!("{}.{}", self.table, uuidforge_ident::as_typed(&self.column))
    }

    /// How the plan names it.
    pub fn described(&self) -> String {
        let how = match (self.holds.as_str(), self.rows == self.whole) {
            ("uuid", _) => format!("{} rows", self.rows),
            ("text", true) => format!("{} rows, each a key as a whole", self.rows),
            ("text", false) => format!(
                "{} rows, {} of them inside longer text",
                self.rows,
                self.rows - self.whole
            ),
            ("bytea" | "uuid192", _) => format!("{} rows, the key in its 16 bytes", self.rows),
            (_, _) => format!("{} rows, inside the value", self.rows),
        };
        format!("{}.{} ({}: {how})", self.table, self.column, self.holds)
    }
}

/// What the search found: the columns holding copies, and its time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Copies {
    /// The columns holding old keys (and every `--also` column).
    pub found: Vec<Copy>,
    /// Columns searched.
    pub columns: usize,
    /// Tables read.
    pub tables: usize,
    /// The search's time, summed over its statements.
    pub ms: f64,
    /// Whether it ran.
    pub searched: bool,
}

/// The search's answers, read.
pub(crate) fn found(target: &Target, answers: &Answers) -> Result<Copies, DbError> {
    let mut copies = Copies {
        searched: target.key.column.type_name == "uuid" && !target.copy_search.skip,
        ..Copies::default()
    };
    for (table, columns) in searched(target) {
        let counted = answers.required(&CopiesIn { table })?;
        copies.tables += 1;
        copies.columns += columns.len();
        copies.ms += counted.ms;
        for (c, (rows, whole)) in columns.iter().zip(counted.counts) {
            let rewritten = target.copies.contains(&(table.oid, c.num));
            if rows == 0 && !rewritten {
                continue;
            }
            copies.found.push(Copy {
                table: table.sql_name(),
                table_oid: table.oid,
                column: c.name.clone(),
                num: c.num,
                holds: target
                    .snapshot
                    .container(c.type_oid)
                    .and_then(holds)
                    .unwrap_or("text")
                    .into(),
                rows,
                whole,
                rewritten,
            });
        }
    }
    Ok(copies)
}

/// The plan's lines on copies: whether they were searched, and each
/// rewritten.
pub(crate) fn plan_lines(target: &Target, copies: &Copies) -> Vec<Line> {
    if target.key.column.type_name != "uuid" {
        return Vec::new();
    }
    if !copies.searched {
        return vec!["  copies of the keys in other columns: not searched, as asked: an old key copied into text, JSON or a column without a foreign key stays old".into()];
    }
    let mut lines: Vec<Line> = vec![Line::from(format!(
        "  copies of the keys in other columns: searched {} columns of {} tables{}",
        copies.columns,
        copies.tables,
        if target.copy_search.within.is_empty() {
            String::new()
        } else {
            format!(" ({})", target.copy_search.within.join(", "))
        },
    ))];
    lines.extend(copies.found.iter().filter(|c| c.rewritten).map(|c| {
        Line::from(format!(
            "  rewritten in place to the new keys, other values and text kept: {}",
            c.described()
        ))
    }));
    lines
}

/// What the search for copies took, as the plan prints it (measured, so
/// not compared when the plan is made again).
pub(crate) fn measured(target: &Target, copies: &Copies) -> Vec<Line> {
    if target.key.column.type_name != "uuid" || !copies.searched {
        return Vec::new();
    }
    vec![Line::with(
        format!(
            "  the search for copies read {} tables in {:.0} ms",
            copies.tables, copies.ms
        ),
        WayOut::NarrowCopySearch,
    )]
}

/// The rewrite of every `--also` copy, with the new keys of `map`: the
/// function that rewrites text (this transaction only), then one update
/// per column.
fn rewrite(target: &Target, copies: &Copies, map: &str) -> Vec<Action> {
    let rewritten: Vec<&Copy> = copies.found.iter().filter(|c| c.rewritten).collect();
    if rewritten.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if rewritten
        .iter()
        .any(|c| !matches!(c.holds.as_str(), "uuid" | "uuid[]"))
    {
        out.push(Action::Object(Object::CreateSqlFunction {
            signature: format!("{REKEY}(value text)"),
            returns: "text LANGUAGE plpgsql STABLE".into(),
            body: format!(
                "DECLARE token text; new_key text; result text := value; \
                 BEGIN FOR token IN SELECT DISTINCT m[1] FROM regexp_matches(value, {token}, 'g') m LOOP \
                 SELECT k.new::text INTO new_key FROM {map} k WHERE k.old = token::uuid::text; \
                 IF new_key IS NOT NULL THEN \
                 IF position('-' IN token) = 0 THEN new_key := replace(new_key, '-', ''); END IF; \
                 IF token <> lower(token) THEN new_key := upper(new_key); END IF; \
                 result := regexp_replace(result, '(?<![0-9A-Fa-f])' || token || '(?![0-9A-Fa-f])', new_key, 'g'); \
                 END IF; END LOOP; RETURN result; END",
                token = quote_literal(TOKEN)
            ),
        }));
    }
    for c in rewritten {
        let x = format!("x.{}", quote_ident(&c.column));
        let (set, from, condition) = match c.holds.as_str() {
            "uuid" => (
                "m.new".to_string(),
                Some(format!("{map} m")),
                format!("m.old = {x}::text"),
            ),
            "uuid[]" => (
                format!("ARRAY(SELECT coalesce(m.new, e.v) FROM unnest({x}) WITH ORDINALITY e(v, i) LEFT JOIN {map} m ON m.old = e.v::text ORDER BY e.i)"),
                None,
                format!("EXISTS (SELECT FROM unnest({x}) e(v) JOIN {map} m ON m.old = e.v::text)"),
            ),
            _ => {
                let ty = target
                    .snapshot
                    .relation(c.table_oid)
                    .and_then(|r| r.column(c.num))
                    .map_or("text".to_string(), |col| col.type_name.clone());
                (
                    format!("{REKEY}({x}::text)::{ty}"),
                    None,
                    format!("{x}::text ~ {} AND {REKEY}({x}::text) <> {x}::text", quote_literal(TOKEN)),
                )
            }
        };
        out.push(Action::Table(Table::Update {
            table: c.table.clone(),
            set: format!("{} = {set}", quote_ident(&c.column)),
            from,
            condition,
        }));
    }
    out
}

/// The checks after the rewrite: no copied column holds an old key.
pub(crate) fn checks(copies: &Copies, map: &str) -> Vec<String> {
    copies
        .found
        .iter()
        .filter(|c| c.rewritten)
        .map(|c| {
            let x = format!("x.{}", quote_ident(&c.column));
            let holds = match c.holds.as_str() {
                "uuid" => format!("EXISTS (SELECT FROM {map} m WHERE m.old = {x}::text)"),
                "uuid[]" => format!("EXISTS (SELECT FROM unnest({x}) e(v) JOIN {map} m ON m.old = e.v::text)"),
                _ => format!(
                    "EXISTS (SELECT FROM regexp_matches({x}::text, {}, 'g') t JOIN {map} m ON m.old = t[1]::uuid::text)",
                    quote_literal(TOKEN)
                ),
            };
            format!(
                "{}, (SELECT count(*) FROM {} x WHERE {holds})",
                quote_literal(&format!("old keys left in {}.{}", c.table, c.column)),
                c.table
            )
        })
        .collect()
}

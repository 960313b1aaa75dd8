//! What a key migration verifies, as SQL that returns one row of JSON: the
//! counts that must all be zero (every key new and 1:1 with the old, from
//! the map, in order; every reference the new key of the row its old value
//! named, and naming a row), the row counts and a digest of every other
//! column (the same before and after), and every index, constraint and
//! column as PostgreSQL defines it (the same before and after, by name).
//!
//! In batches the application keeps writing, and after the swap it writes
//! the new columns only: the last check leaves out the rows it changed
//! since the swap (their transaction id is newer than the swap's, which the
//! runner records and binds as `$1`), and checks of them only that their
//! references name a row.

use super::values::Becomes;
use super::{by_column, new_column, old_column, Migration, Reference, Target};
use uuidforge_db::catalog::Relation;
use uuidforge_ident::{qualified, quote_ident, quote_literal};

/// When the checks run, which names the old and new values have then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// In the one transaction, after the swap: old values in `*_old`.
    OneTransaction,
    /// In batches, before the swap: the new values in `*_uuidforge_new`;
    /// rows written meanwhile are kept right by triggers.
    BeforeSwap,
    /// In batches, after the swap: rows the application changed since the
    /// swap (`$1` its transaction id) are its own.
    AfterSwap,
}

impl When {
    /// The (old, new) names of `column` (the key or a reference) in this
    /// phase; `old_name` where the key's old values are kept.
    fn names(self, column: &str, old_name: &str) -> (String, String) {
        match self {
            When::BeforeSwap => (column.to_string(), new_column(column)),
            _ => (old_name.to_string(), column.to_string()),
        }
    }
}

/// A row `x` not changed since the swap: its transaction is older than
/// `$1`, the swap's (`age` counts back from the same transaction for both,
/// across the 32-bit wraparound, and gives frozen rows the oldest age; it
/// costs a quarter of reading `xmin` through text per row). The swap's age
/// is a subquery, computed once, not once per row.
fn unchanged(x: &str) -> String {
    format!("age({x}.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid))")
}

/// Reads the old keys in the new order, (old key as text, Unix ms or
/// NULL), of the rows `filter` (SQL over `x`) keeps.
pub fn read_keys_sql(target: &Target, filter: &str) -> String {
    let t = target.key.table.sql_name();
    let k = quote_ident(&target.key.column.name);
    // Qualified in ORDER BY: a bare name would sort by the output column
    // of that name, the key as text (1, 10, 100, 2, …).
    match &target.order_column {
        Some(o) => format!(
            "SELECT x.{k}::text AS old_key, {ms} AS unix_ms FROM {t} x{filter} ORDER BY x.{o}, x.{k}",
            ms = unix_ms(o),
            o = quote_ident(o)
        ),
        None => format!(
            "SELECT x.{k}::text AS old_key, NULL::int8 AS unix_ms FROM {t} x{filter} ORDER BY x.{k}"
        ),
    }
}

/// The Unix millisecond of the time in column `column` of row `x`,
/// truncated as a UUIDv7 holds it (and as `uuid_extract_timestamp` reads
/// it back): a cast would round half of the times up.
fn unix_ms(column: &str) -> String {
    format!(
        "floor(extract(epoch FROM x.{}) * 1000)::int8",
        quote_ident(column)
    )
}

/// The value reference `r` must hold once migrated, from the table's row
/// `p` (its new key in `p_new`) and its old value `x_old`: the new key, as
/// text where the column keeps its type (whose other values stay).
fn expected(target: &Target, r: &Reference, p_new: &str, x_old: &str) -> String {
    match target.becomes(r) {
        Becomes::Uuid => p_new.to_string(),
        Becomes::Text => format!("coalesce({p_new}::text, {x_old})"),
    }
}

/// `p.old = x.ref` for a reference's old value in the types they have.
fn old_join(target: &Target, r: &Reference, p_old: &str, x_old: &str) -> String {
    match target.becomes(r) {
        Becomes::Uuid if r.column.type_oid == target.key.column.type_oid => {
            format!("{p_old} = {x_old}")
        }
        _ => format!("{p_old}::text = {x_old}::text"),
    }
}

/// The checks of `phase` against the key map `map`: a JSON object of
/// counts that must all be zero.
pub fn verify_sql(m: &Migration, phase: When, map: &str) -> String {
    verify_through(m, phase, map, MapKeys::Text, ReferencesWritten::Apart)
}

/// How a key map holds its old keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKeys {
    /// As text (the kept map: any key type).
    Text,
    /// In the key's own type (the online copy's map of an integer or uuid
    /// key): joined without a cast per row.
    Typed,
}

/// How the references were written, which decides what proves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferencesWritten {
    /// Apart from their table's keys: each is checked against the row its
    /// old value names (a join of the referencing table with the table).
    Apart,
    /// By the same lookup of the map that wrote the table's keys: in one
    /// transaction each reference and each key is rewritten by the same
    /// `USING` expression over the map (its array for dense integer keys),
    /// in the online copy each is `coalesce(map.new, since.new)` of its old
    /// value, a value the maps lack stopping the statement. The keys are
    /// checked against the map by a join; every old value of a reference
    /// was an old key (its foreign key held; one declared `NOT VALID` does
    /// not count), so a reference holds the new key of the row its old
    /// value names by construction, and its foreign key, made again
    /// validated, proves it names a row. A join per referencing row (as
    /// costly as writing the row) would only say it again; references
    /// without a validated foreign key are still joined.
    ThroughTheKeysMap,
}

/// [`verify_sql`] against a map that holds its old keys as `keys` says,
/// the references proved as `references` says.
pub fn verify_through(
    m: &Migration,
    phase: When,
    map: &str,
    keys: MapKeys,
    references: ReferencesWritten,
) -> String {
    let t = m.key.table.sql_name();
    let cast = match keys {
        MapKeys::Text => "::text",
        MapKeys::Typed => "",
    };
    let (old, new) = phase.names(&m.key.column.name, &m.old_name);
    let (old, new) = (quote_ident(&old), quote_ident(&new));
    let concurrent = phase != When::OneTransaction;
    let since = |x: &str| {
        if phase == When::AfterSwap {
            format!(" AND {}", unchanged(x))
        } else {
            String::new()
        }
    };
    let mut checks = Vec::new();
    if enforced_one_to_one(m, phase) {
        // The primary key is proved by the objects check; the old values'
        // index is new, so proved here.
        checks.push(format!(
            "'old values without their unique index', (SELECT count(*) FROM (SELECT) one WHERE NOT EXISTS (SELECT FROM pg_index i WHERE i.indrelid = {tl}::regclass AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL AND i.indnkeyatts = 1 AND i.indkey[0] = (SELECT a.attnum FROM pg_attribute a WHERE a.attrelid = {tl}::regclass AND a.attname = {ol})))",
            tl = quote_literal(&t),
            ol = quote_literal(&m.old_name)
        ));
    } else {
        checks.push(format!(
            "'rows without a new key', (SELECT count(*) FROM {t} WHERE {new} IS NULL)"
        ));
        checks.push(format!(
            "'new keys not 1:1 with old keys', (SELECT count(*) - count(DISTINCT {new}) + count({old}) - count(DISTINCT {old}) FROM {t})"
        ));
    }
    if !concurrent {
        checks.push(format!(
            "'rows without their old key', (SELECT count(*) FROM {t} WHERE {old} IS NULL)"
        ));
    }
    // One pass over the key's table joined with the map: every new key the
    // map's, and (with `--order-by`) at its row's millisecond.
    let (joined, differs) = if concurrent {
        (
            format!("JOIN {map} m ON m.old = x.{old}{cast}{}", since("x")),
            format!("m.new <> x.{new}"),
        )
    } else {
        (
            format!("LEFT JOIN {map} m ON m.old = x.{old}{cast}"),
            format!("m.new IS DISTINCT FROM x.{new}"),
        )
    };
    let mut counted = vec![format!(
        "'new keys not from the map', count(*) FILTER (WHERE {differs})"
    )];
    match &m.order_column {
        Some(o) => counted.push(format!(
            "'keys not at their row''s millisecond', count(*) FILTER (WHERE {})",
            not_at_millisecond(&new, o)
        )),
        None => checks.push(in_old_order(
            m,
            (&new, &old),
            if concurrent { &joined } else { "" },
        )),
    }
    let pass = format!(
        "(SELECT jsonb_build_object({}) FROM {t} x {joined})",
        counted.join(", ")
    );
    for r in by_column(&m.references) {
        let proved_by_construction = references == ReferencesWritten::ThroughTheKeysMap
            && r.fk.is_some_and(|fk| fk.validated)
            && m.becomes(r) == Becomes::Uuid;
        if !proved_by_construction {
            checks.extend(reference_checks(m, r, phase));
        }
    }
    checks.extend(foreign_keys_valid(m));
    if phase != When::BeforeSwap {
        checks.extend(translated_checks(m, map));
    }
    if phase == When::OneTransaction {
        checks.extend(super::kinds::copies::checks(&m.copies, map));
        for kind in super::kinds::KINDS {
            checks.extend(kind.verify(m, map));
        }
    }
    format!(
        "SELECT ({pass} || ({})::jsonb)::text",
        uuidforge_db::plan::json_object(&checks)
    )
}

/// Whether the server itself holds the keys 1:1 when `phase`'s checks
/// run: a primary key of the key alone, made again on the new key (unique
/// and NOT NULL), and the old values' unique index, both made before the
/// checks and proved there by the objects check. Two counts of distinct
/// values (a sort of the table each, the costliest of the checks) would
/// only say again what the two indexes enforce.
fn enforced_one_to_one(m: &Migration, phase: When) -> bool {
    phase != When::BeforeSwap && m.key.pk.columns == [m.key.column.num]
}

/// Whether new key `new` (SQL over `x`) lacks its row's millisecond of
/// `column`, the row's time read through `date_trunc`, not the expression
/// that made the keys. The key's 48 bits of milliseconds become a time by
/// a product with an interval, which is exact: a millisecond count times
/// 1 000 is below 2^53 microseconds until the year 2255, and beyond that a
/// rounded product is no longer a whole millisecond, so it differs (a
/// false alarm, never a miss). The time as a number (`extract(epoch …)`
/// is numeric) took twice as long per row.
fn not_at_millisecond(new: &str, column: &str) -> String {
    format!(
        "date_trunc('milliseconds', x.{}) <> timestamptz 'epoch' + ('x' || encode(substring(uuid_send(x.{new}) FROM 1 FOR 6), 'hex'))::bit(48)::int8 * interval '1 millisecond'",
        quote_ident(column)
    )
}

/// Without `--order-by`: the new keys in the old keys' order, over the
/// rows `mapped` (a join over `x`) keeps (a sort of the table). With it no such pass is made:
/// a uuid compares by its bytes, the first six of which are its
/// millisecond, so keys that each hold their row's millisecond (the check
/// of [`not_at_millisecond`], over the same rows) order the rows by that
/// millisecond, and rows of the same millisecond may order either way. A
/// window over the table sorted by key (3.6 s of 6.1 s of checks on a
/// table of a million rows) could only say it again.
fn in_old_order(m: &Migration, (new, old): (&str, &str), mapped: &str) -> String {
    let t = m.key.table.sql_name();
    format!(
        "'rows out of order', (SELECT count(*) FROM (SELECT x.{new} < lag(x.{new}) OVER (ORDER BY x.{old}) AS inverted FROM {t} x {mapped}) o WHERE inverted)"
    )
}

/// Reference `r` holds the new key of the row its old value named (rows
/// the application changed since the swap left out), and names a row
/// (where no foreign key made again in the same transaction proves it).
fn reference_checks(m: &Migration, r: &Reference, phase: When) -> Vec<String> {
    let t = m.key.table.sql_name();
    let ct = r.table.sql_name();
    let (k_old, k_new) = phase.names(&m.key.column.name, &m.old_name);
    let (c_old, c_new) = match phase {
        When::BeforeSwap => (r.column.name.clone(), new_column(&r.column.name)),
        _ => (old_column(&r.column.name), r.column.name.clone()),
    };
    let (k_old, k_new, c_old, c_new) = (
        quote_ident(&k_old),
        quote_ident(&k_new),
        quote_ident(&c_old),
        quote_ident(&c_new),
    );
    let others = r.other_join(&m.key, "x", "p");
    let join = old_join(m, r, &format!("p.{k_old}"), &format!("x.{c_old}"));
    let want = expected(m, r, &format!("p.{k_new}"), &format!("x.{c_old}"));
    let label = |what: &str| {
        quote_literal(&format!(
            "references of {}.{} {what}",
            r.table.display_name(),
            r.column.name
        ))
    };
    let mut checks = vec![match phase {
        When::AfterSwap => format!(
            "{}, (SELECT count(*) FROM {ct} x JOIN {t} p ON {join}{others} WHERE x.{c_old} IS NOT NULL AND {} AND {} AND {want} IS DISTINCT FROM x.{c_new})",
            label("not rewritten"),
            unchanged("x"),
            unchanged("p")
        ),
        When::BeforeSwap => format!(
            "{}, (SELECT count(*) FROM {ct} x LEFT JOIN {t} p ON {join}{others} WHERE x.{c_old} IS NOT NULL AND {want} IS DISTINCT FROM x.{c_new})",
            label("not rewritten")
        ),
        When::OneTransaction => format!(
            "{}, (SELECT count(*) FROM {ct} x LEFT JOIN {t} p ON {join}{others} WHERE {want} IS DISTINCT FROM x.{c_new})",
            label("not rewritten")
        ),
    }];
    // A reference's foreign key is made again validated (in one
    // transaction at once, in batches by the step before this check), and
    // the check of foreign keys proves it: it names a row, and a scan of
    // its table saying so again is left out.
    let validated = phase != When::BeforeSwap && r.fk.is_some();
    if phase != When::BeforeSwap && m.becomes(r) == Becomes::Uuid && !validated {
        let others_new = r.other_join(&m.key, "x", "p");
        checks.push(format!(
            "{}, (SELECT count(*) FROM {ct} x WHERE x.{c_new} IS NOT NULL AND NOT EXISTS (SELECT FROM {t} p WHERE p.{k_new} = x.{c_new}{others_new}))",
            label("naming no row")
        ));
    }
    checks
}

/// Foreign keys made again are validated (in batches, after the swap, by
/// their own step).
fn foreign_keys_valid(m: &Migration) -> Vec<String> {
    let declared: Vec<(&Relation, &uuidforge_db::catalog::Constraint)> = m
        .references
        .iter()
        .filter_map(|r| Some((r.declared_on, r.fk?)))
        .collect();
    if declared.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = declared
        .iter()
        .map(|(_, fk)| quote_literal(&fk.name))
        .collect();
    let tables: Vec<String> = declared
        .iter()
        .map(|(t, _)| quote_literal(&t.sql_name()))
        .collect();
    vec![format!(
        "'foreign keys not valid', (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conname = ANY (ARRAY[{}]) AND conrelid::regclass::text = ANY (ARRAY[{}]::text[]))",
        names.join(", "),
        tables.join(", ")
    )]
}

/// The columns of `table` the migration changes: the key, the references
/// to it, the generated columns computed again over them.
pub fn changed_columns(target: &Target, table: &Relation) -> Vec<i16> {
    target
        .watched()
        .into_iter()
        .chain(target.regenerate.iter().copied())
        .chain(target.copies.iter().copied())
        .filter(|(t, _)| *t == table.oid)
        .map(|(_, n)| n)
        .collect()
}

/// One row of JSON text: per table written, a digest of every row's
/// other columns ([`row_digest`]: order-free, one pass). Read before the
/// change and after, it proves that nothing but the key and its references
/// changed: no trigger stamped a row, no value moved.
pub fn digest_sql(target: &Target) -> String {
    let digests: Vec<String> = target
        .written()
        .iter()
        .map(|table| {
            format!(
                "{}, {}",
                quote_literal(&table.sql_name()),
                row_digest(table, &changed_columns(target, table))
            )
        })
        .collect();
    uuidforge_db::plan::json_object(&digests)
}

/// The text of row `x` of `table` without the columns `except`.
fn row_text(table: &Relation, except: &[i16]) -> String {
    let columns: Vec<String> = table
        .columns
        .iter()
        .filter(|c| !except.contains(&c.num))
        .map(|c| format!("x.{}", quote_ident(&c.name)))
        .collect();
    format!("ROW({})::text", columns.join(", "))
}

/// A 64-bit hash of row `x` of `table` without the columns `except`, as
/// text (`hashtextextended`: several times cheaper than MD5 over the same
/// text; it catches changes, not adversaries).
pub fn row_hash(table: &Relation, except: &[i16]) -> String {
    format!("hashtextextended({}, 0)::text", row_text(table, except))
}

/// Whether the server's hash of a value of type `type_name` (as
/// `format_type` writes it) tells every change its text would: the types
/// whose equality is identity. Not `numeric` (1.0 = 1.00), `real` and
/// `double precision` (0 = -0), `character(n)` (trailing spaces),
/// `interval` ('1 day' = '24 hours'), nor a domain or any type not named
/// here: those are hashed by their text.
fn hashed_exactly(type_name: &str) -> bool {
    let base = type_name.trim_end_matches("[]");
    let base = base.split('(').next().unwrap_or(base).trim();
    matches!(
        base,
        "smallint"
            | "integer"
            | "bigint"
            | "text"
            | "character varying"
            | "uuid"
            | "boolean"
            | "date"
            | "bytea"
            | "jsonb"
            | "oid"
            | "timestamp"
            | "time"
    ) || base.starts_with("timestamp ")
        || base.starts_with("time ")
}

/// Row `x` of `table` without the columns `except`, as a record the
/// server hashes exactly: each column as it is where its type's hash
/// tells every change, else its text.
fn row_record(table: &Relation, except: &[i16]) -> String {
    let columns: Vec<String> = table
        .columns
        .iter()
        .filter(|c| !except.contains(&c.num))
        .map(|c| {
            let v = format!("x.{}", quote_ident(&c.name));
            if hashed_exactly(&c.type_name) {
                v
            } else {
                format!("{v}::text")
            }
        })
        .collect();
    format!("ROW({})", columns.join(", "))
}

/// `(SELECT ...)` over the rows of `table` without the columns `except`:
/// the row count and the sums of two 64-bit hashes of each row (seeds 0
/// and 1; `hash_record_extended` of its values, no text made of those
/// whose hash is exact), as text. Sums do not depend on row order, so no
/// sort: one pass (summed as bigint: the server adds them in 128 bits).
/// A changed row moves both sums unless both of its hashes collide.
pub fn row_digest(table: &Relation, except: &[i16]) -> String {
    format!(
        "(SELECT count(*) || ':' || coalesce(sum(hash_record_extended(d.t, 0)), 0) || ':' || coalesce(sum(hash_record_extended(d.t, 1)), 0) FROM (SELECT {} AS t FROM {} x) d)",
        row_record(table, except),
        table.sql_name()
    )
}

/// Every index, constraint (a partition's copy of its table's left out:
/// it follows its table's) and column of `tables` (quoted, qualified
/// names) and of their partitions, one row of JSON text: `{"index name":
/// definition and comment, "constraint table name": …, "column
/// table.name": not null, comment, privileges}`. Read before a key
/// migration and after, each must be there again the same: nothing lost,
/// nothing left on an old column (a definition names its columns).
pub fn objects_sql(tables: &[String], skip: &[String]) -> String {
    let (skipped, skipped_indexes) = if skip.is_empty() {
        (String::new(), String::new())
    } else {
        (
            format!(
                " AND ('constraint ' || co.conrelid::regclass::text || ' ' || co.conname) <> ALL (ARRAY[{}])",
                skip.join(", ")
            ),
            format!(
                " AND ('index ' || i.indexrelid::regclass::text) <> ALL (ARRAY[{}])",
                skip.join(", ")
            ),
        )
    };
    let literals: Vec<String> = tables.iter().map(|t| quote_literal(t)).collect();
    let rels = format!(
        "(SELECT t.relid FROM unnest(ARRAY[{l}]::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY[{l}]::regclass[]) u(r))",
        l = literals.join(", ")
    );
    format!(
        "SELECT (coalesce((SELECT jsonb_object_agg('index ' || i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) || coalesce(' -- ' || obj_description(i.indexrelid, 'pg_class'), '')) FROM pg_index i WHERE i.indrelid IN {rels}{skipped_indexes}), '{{}}') \
         || coalesce((SELECT jsonb_object_agg('constraint ' || co.conrelid::regclass::text || ' ' || co.conname, pg_get_constraintdef(co.oid) || coalesce(' -- ' || obj_description(co.oid, 'pg_constraint'), '')) FROM pg_constraint co WHERE co.conrelid IN {rels} AND co.conparentid = 0{skipped}), '{{}}') \
         || coalesce((SELECT jsonb_object_agg('column ' || a.attrelid::regclass::text || '.' || quote_ident(a.attname), json_build_object('not_null', a.attnotnull, 'comment', col_description(a.attrelid, a.attnum), 'privileges', a.attacl::text)::text) FROM pg_attribute a WHERE a.attrelid IN {rels} AND a.attnum > 0 AND NOT a.attisdropped), '{{}}'))::text"
    )
}

/// `checks` (one row of JSON text) with `indexes, constraints and columns
/// changed`: how many of the objects read when planning (`before`, JSON
/// text of [`objects_sql`]) are not there again the same, and which
/// (`changed: …` names each in the failure).
pub fn with_objects_check(
    checks: &str,
    before: &str,
    tables: &[String],
    skip: &[String],
) -> String {
    let skipped = if skip.is_empty() {
        String::new()
    } else {
        format!(" AND b.key <> ALL (ARRAY[{}])", skip.join(", "))
    };
    format!(
        "SELECT (({checks})::jsonb || (SELECT coalesce(jsonb_object_agg('changed: ' || b.key, 1), '{{}}') || jsonb_build_object('indexes, constraints and columns changed', count(b.key)) FROM json_each_text({}::json) b WHERE b.value IS DISTINCT FROM ({})::json ->> b.key{skipped}))::text",
        quote_literal(before),
        objects_sql(tables, skip)
    )
}

/// The constraints made again with new keys in place of old ones: their
/// keys in [`objects_sql`]'s object (`'constraint ' || table || ' ' ||
/// name`, as SQL), left out of the comparison with their definitions
/// before, since a new key stands where an old one stood; each is checked
/// by [`verify_sql`] against its definition with the new keys from the map.
pub fn translated_constraints(m: &Migration) -> Vec<String> {
    let constraints = m
        .dependents
        .constraints
        .iter()
        .filter(|c| crate::action::old_keys::has_old_keys(&c.definition))
        .filter_map(|c| {
            let table = m.snapshot.relation(c.table)?;
            Some(format!(
                "('constraint ' || {}::regclass::text || ' ' || {})",
                quote_literal(&table.sql_name()),
                quote_literal(&c.name)
            ))
        });
    let indexes = m
        .dependents
        .indexes
        .iter()
        .filter(|i| crate::action::old_keys::has_old_keys(&i.definition))
        .map(|i| {
            format!(
                "('index ' || {}::regclass::text)",
                quote_literal(&qualified(&i.schema, &i.name))
            )
        });
    constraints.chain(indexes).collect()
}

/// Each constraint made with new keys as its definition says, the keys
/// read from `map`: how many are not.
fn translated_checks(m: &Migration, map: &str) -> Vec<String> {
    let indexes = m.dependents.indexes.iter().filter_map(|i| {
        let expected = crate::action::old_keys::formatted(&i.definition, map)?;
        Some(format!(
            "{}, (SELECT count(*) FROM (SELECT) o WHERE replace(pg_get_indexdef({}::regclass), ' ON ONLY ', ' ON ') IS DISTINCT FROM {expected})",
            quote_literal(&format!("index {} not made with the new keys", i.name)),
            quote_literal(&qualified(&i.schema, &i.name))
        ))
    });
    let constraints = m.dependents.constraints.iter().filter_map(|c| {
            let expected = crate::action::old_keys::formatted(c.definition.trim_end_matches(" NOT VALID"), map)?;
            let table = m.snapshot.relation(c.table)?;
            Some(format!(
                "{}, (SELECT count(*) FROM (SELECT) o WHERE (SELECT regexp_replace(pg_get_constraintdef(co.oid), ' NOT VALID$', '') FROM pg_constraint co WHERE co.conrelid = {}::regclass AND co.conname = {} AND co.conparentid = 0) IS DISTINCT FROM {expected})",
                quote_literal(&format!("constraint {} not made with the new keys", c.name)),
                quote_literal(&table.sql_name()),
                quote_literal(&c.name)
            ))
        });
    constraints.chain(indexes).collect()
}

#[cfg(test)]
mod tests {
    use super::hashed_exactly;

    #[test]
    fn only_types_whose_equality_is_identity_are_hashed_as_they_are() {
        for exact in [
            "bigint",
            "character varying(40)",
            "timestamp(3) with time zone",
            "time without time zone",
            "integer[]",
            "jsonb",
        ] {
            assert!(hashed_exactly(exact), "{exact}");
        }
        for by_text in [
            "numeric(10,2)",
            "double precision",
            "character(3)",
            "interval",
            "json",
            "point",
            "email_address",
        ] {
            assert!(!hashed_exactly(by_text), "{by_text}");
        }
    }
}

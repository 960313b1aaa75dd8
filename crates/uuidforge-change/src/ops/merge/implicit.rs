//! Values [`uuidforge_db::find`] saw outside the declared references of a merge
//! (text, JSON, arrays, uuid columns without a foreign key), rewritten in
//! place — each read and written whole as text, spelled as it was — and
//! logged with the merge.

use crate::action::{Implicit, ImplicitValue};
use crate::ops::key::Reference;
use std::collections::BTreeMap;
use uuid::Uuid;
use uuidforge_db::catalog::{Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::find::Hit;
use uuidforge_ident::{qualified, quote_ident};

/// Where a value is: schema, table, column, its row's key (JSON text).
type ValueAt = (String, String, String, String);
/// (as written, the new key written the same way).
type Spellings = Vec<(String, String)>;

/// The values `hits` name outside the declared references (`references`
/// to `relation`'s key `key`), to rewrite into `new`.
pub(super) fn implicit_values(
    snapshot: &Snapshot,
    (relation, key): (&Relation, &str),
    references: &[Reference],
    new: Uuid,
    hits: &[Hit],
) -> Result<Implicit, DbError> {
    // (schema, table, column, key) → spellings, and the old key to log under.
    let mut groups: BTreeMap<ValueAt, (Spellings, Uuid)> = BTreeMap::new();
    for hit in hits {
        let rel = snapshot
            .relation_named(&hit.schema, &hit.table)
            .ok_or_else(|| {
                DbError::not_found("implicit", format!("{}.{} is gone", hit.schema, hit.table))
            })?;
        let declared = rel.oid == relation.oid && hit.column == key
            || references.iter().any(|r| {
                (r.table.oid == rel.oid || r.declared_on.oid == rel.oid)
                    && r.column.name == hit.column
            })
            || rel.name == super::LOG_TABLE;
        if declared {
            continue;
        }
        if hit.key_unstable {
            return Err(DbError::refusal(
                "implicit",
                uuidforge_db::error::Refusal::new(
                    uuidforge_db::error::Reason::Other,
                    format!(
                        "{}.{}.{} holds {} in a row without a primary key (nothing was changed)",
                        hit.schema, hit.table, hit.column, hit.value
                    ),
                )
                .way_out(uuidforge_db::error::WayOut::MergeWithoutImplicit),
            ));
        }
        let old: Uuid = hit
            .value
            .parse()
            .map_err(|_| DbError::invalid("implicit", hit.value.clone()))?;
        let replacement = respell(&hit.written, &new)?;
        let entry = groups
            .entry((
                hit.schema.clone(),
                hit.table.clone(),
                hit.column.clone(),
                hit.key.to_string(),
            ))
            .or_insert_with(|| (Vec::new(), old));
        if !entry
            .0
            .contains(&(hit.written.clone(), replacement.clone()))
        {
            entry.0.push((hit.written.clone(), replacement));
        }
    }
    let mut values = Vec::new();
    for ((schema, table, column, row_key), (spellings, old)) in groups {
        let rel = snapshot
            .relation_named(&schema, &table)
            .ok_or_else(|| DbError::not_found("implicit", format!("{schema}.{table} is gone")))?;
        let col = rel.column_named(&column).ok_or_else(|| {
            DbError::not_found("implicit", format!("{schema}.{table}.{column} is gone"))
        })?;
        let predicate = key_predicate(snapshot, rel).ok_or_else(|| {
            DbError::refused("implicit", format!("{schema}.{table} has no primary key"))
        })?;
        let c = quote_ident(&column);
        let t = rel.sql_name();
        values.push(ImplicitValue {
            read_sql: format!("SELECT x.{c}::text FROM {t} x WHERE {predicate} FOR UPDATE"),
            write_sql: format!(
                "UPDATE {t} x SET {c} = $2::text::{} WHERE {predicate}",
                col.type_name
            ),
            table: t,
            column,
            column_name: format!("{schema}.{table}.{}", col.name),
            key: row_key,
            old,
            spellings,
        });
    }
    Ok(Implicit {
        log_sql: format!(
            "UPDATE {} SET row_images = jsonb_set(row_images, '{{implicit}}', row_images->'implicit' || $3::text::jsonb) WHERE merge_id = $1 AND old = $2",
            qualified(&relation.schema, super::LOG_TABLE)
        ),
        values,
        merge_id: "merge_id".into(),
    })
}

/// The condition naming one row by its primary key, as `find` reported
/// it (`$1` the key as JSON text).
pub(crate) fn key_predicate(snapshot: &Snapshot, relation: &Relation) -> Option<String> {
    let pk = snapshot.primary_key(relation.oid)?;
    let names: Vec<String> = pk
        .columns
        .iter()
        .filter_map(|&n| relation.column(n))
        .map(|c| quote_ident(&c.name))
        .collect();
    let x: Vec<String> = names.iter().map(|n| format!("x.{n}")).collect();
    let r: Vec<String> = names.iter().map(|n| format!("r.{n}")).collect();
    Some(format!(
        "({}) = (SELECT {} FROM json_populate_record(NULL::{}, $1::text::json) r)",
        x.join(", "),
        r.join(", "),
        relation.sql_name()
    ))
}

/// `written` (a UUID as `find` saw it spelled) with `new` spelled the
/// same way: format, and upper case where it was.
///
/// ```
/// use uuidforge_change::ops::merge::respell;
/// let new: uuid::Uuid = "01a20b75-a552-73f7-a8ca-662323ac601a".parse().unwrap();
/// assert_eq!(respell("{0190A5DA-AC96-774B-BCCE-B302099A8058}", &new).unwrap(),
///            "{01A20B75-A552-73F7-A8CA-662323AC601A}");
/// assert_eq!(respell("\\x01900a5dac96774bbcceb302099a8058", &new).unwrap(),
///            "\\x01a20b75a55273f7a8ca662323ac601a");
/// ```
pub fn respell(written: &str, new: &Uuid) -> Result<String, DbError> {
    // Bytes, as PostgreSQL shows a bytea holding a UUID.
    if let Some(hex) = written.strip_prefix("\\x") {
        if hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(format!("\\x{}", new.simple()));
        }
    }
    let (_, format) = uuidforge::parser::parse_detect(written).map_err(|e| {
        DbError::unreadable(
            "implicit",
            format!("'{written}' does not read back as a UUID ({e})"),
        )
    })?;
    let text = format.to_text(new);
    let hex_upper = written
        .chars()
        .any(|c| c.is_ascii_uppercase() && c.is_ascii_hexdigit())
        && !written
            .chars()
            .any(|c| c.is_ascii_lowercase() && c.is_ascii_hexdigit());
    Ok(match format {
        uuidforge::fmt::Format::Urn if hex_upper => {
            format!("{}{}", &written[..9], text[9..].to_ascii_uppercase())
        }
        uuidforge::fmt::Format::Canonical
        | uuidforge::fmt::Format::Simple
        | uuidforge::fmt::Format::Braced
            if hex_upper =>
        {
            text.to_ascii_uppercase()
        }
        uuidforge::fmt::Format::Base32 | uuidforge::fmt::Format::Base32Check
            if written.chars().any(|c| c.is_ascii_lowercase()) =>
        {
            text.to_ascii_lowercase()
        }
        _ => text,
    })
}

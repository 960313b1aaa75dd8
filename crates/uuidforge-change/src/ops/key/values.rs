//! Columns that hold a key's values without a foreign key saying so: found
//! by name and by their values (every value a key), whatever their type —
//! the key's own, another integer or numeric type, or text — and refused
//! until the user says what they are (`--also`: a reference; `--leave`:
//! not one). A reference of another type either becomes `uuid` (numbers:
//! they cannot hold a UUID) or keeps its type and takes the new key's text
//! (text: the application writes text there, and a text column often holds
//! other things too).

use super::{Key, Reference};
use crate::ops::Read;
use uuidforge_db::catalog::{Column, RelKind, Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::plan::Query;
use uuidforge_ident::quote_ident;

/// A type's family, as a key migration compares a key with a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `smallint`, `integer`, `bigint`, `numeric`.
    Number,
    /// `text`, `character varying(n)`, `character(n)`.
    Text,
    /// `uuid`.
    Uuid,
}

/// The family of a column's type (its domain's base type), if a key's
/// values can stand in it.
pub fn family(snapshot: &Snapshot, column: &Column) -> Option<Family> {
    let name = snapshot
        .base_type(column.type_oid)
        .map_or(column.type_name.as_str(), |t| t.name.as_str());
    match name {
        "int2" | "int4" | "int8" | "numeric" | "smallint" | "integer" | "bigint" => {
            Some(Family::Number)
        }
        "text" | "varchar" | "bpchar" => Some(Family::Text),
        "uuid" => Some(Family::Uuid),
        _ => None,
    }
}

/// How a reference column moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Becomes {
    /// A `uuid` column holding the new key.
    Uuid,
    /// It keeps its (text) type and takes the new key's text: the values
    /// that are keys change, the others stay.
    Text,
}

/// How `column` moves when it refers to `key`.
pub fn becomes(snapshot: &Snapshot, key: &Key, column: &Column) -> Becomes {
    match (family(snapshot, key.column), family(snapshot, column)) {
        (Some(k), Some(Family::Text)) if k != Family::Text => Becomes::Text,
        _ => Becomes::Uuid,
    }
}

/// Why `column` cannot hold `key`'s values as a reference, if it cannot:
/// it can when of the same family, a number for a number, or text (as
/// long as a UUID's 36 characters fit).
pub fn cannot_refer(snapshot: &Snapshot, key: &Key, column: &Column) -> Option<String> {
    let expected = || {
        format!(
            "{} (expected {}, a number or text)",
            column.type_name, key.column.type_name
        )
    };
    let (Some(k), Some(c)) = (family(snapshot, key.column), family(snapshot, column)) else {
        return Some(expected());
    };
    let text_ok = || -> Option<String> {
        let width: Option<usize> = column
            .type_name
            .split_once('(')
            .and_then(|(_, rest)| rest.trim_end_matches(')').parse().ok());
        match width {
            Some(n) if n < 36 => Some(format!(
                "{}, too short for a UUID's 36 characters",
                column.type_name
            )),
            _ => None,
        }
    };
    match (k, c) {
        (Family::Number, Family::Number)
        | (Family::Uuid, Family::Uuid)
        | (Family::Text, Family::Text) => None,
        (_, Family::Text) => text_ok(),
        _ => Some(expected()),
    }
}

/// `p.key = x.column` in types that compare: as numbers, else as text.
pub fn equal(snapshot: &Snapshot, key: &Key, column: &Column, p: &str, x: &str) -> String {
    let k = format!("{p}.{}", quote_ident(&key.column.name));
    let c = format!("{x}.{}", quote_ident(&column.name));
    match (family(snapshot, key.column), family(snapshot, column)) {
        (Some(a), Some(b)) if a == b && a != Family::Text => format!("{k} = {c}"),
        (Some(Family::Number), Some(Family::Number)) => format!("{k} = {c}"),
        _ => format!("{k}::text = {c}::text"),
    }
}

/// Columns that may hold the key's values without a foreign key saying
/// so: of a family that can ([`cannot_refer`]), named for it (`customer_id`
/// or `customer` for `customer.customer_id`, as discovery reads names),
/// in a table the login can read, neither a reference already nor left
/// with `--leave` (`left`, (table, column) pairs). Their values are read
/// before planning ([`read`]).
pub fn named_for_key<'a>(
    snapshot: &'a Snapshot,
    key: &Key,
    references: &[Reference],
    left: &[(u32, i16)],
) -> Vec<(&'a Relation, &'a Column)> {
    let mut found = Vec::new();
    for r in snapshot.relations.iter().filter(|r| {
        matches!(r.kind, RelKind::Table | RelKind::PartitionedTable)
            && !r.is_partition
            && r.can_select
    }) {
        for column in &r.columns {
            let is_reference = references
                .iter()
                .any(|x| x.table.oid == r.oid && x.column.num == column.num);
            if (r.oid == key.table.oid && column.num == key.column.num)
                || !column.can_select
                || cannot_refer(snapshot, key, column).is_some()
                || uuidforge_store::names::name_evidence(
                    &column.name,
                    &key.table.name,
                    &key.column.name,
                ) < 1.0
                || left.contains(&(r.oid, column.num))
                || is_reference
            {
                continue;
            }
            found.push((r, column));
        }
    }
    found
}

/// The read of `named` columns' values: one row of JSON text, per column
/// in order `[values, not keys]` — how many non-null values it holds and
/// how many of them are not keys of the table.
pub fn read(snapshot: &Snapshot, key: &Key, named: &[(&Relation, &Column)]) -> Read {
    let t = key.table.sql_name();
    let counts: Vec<String> = named
        .iter()
        .map(|(r, c)| {
            format!(
                "(SELECT json_build_array(count(x.{col}), count(x.{col}) FILTER (WHERE NOT EXISTS (SELECT FROM {t} p WHERE {eq}))) FROM {} x)",
                r.sql_name(),
                col = quote_ident(&c.name),
                eq = equal(snapshot, key, c, "p", "x"),
            )
        })
        .collect();
    Read::new(
        "named_values",
        "read the values of columns named for the key without a foreign key",
        Query::new(format!(
            "SELECT json_build_array({})::text",
            counts.join(", ")
        )),
    )
}

/// Refuses when a column named for the key, without a foreign key, holds
/// only key values (`values`, per column of `named`): a reference nobody
/// declared, which the migration would leave holding old keys.
pub fn refuse_named_references(
    snapshot: &Snapshot,
    key: &Key,
    named: &[(&Relation, &Column)],
    values: &[(i64, i64)],
) -> Result<(), DbError> {
    for ((r, c), (held, outside)) in named.iter().zip(values) {
        if *held > 0 && *outside == 0 {
            let spec = column_spec(r, c);
            let kind = match becomes(snapshot, key, c) {
                Becomes::Uuid if c.type_oid != key.column.type_oid => format!(" ({})", c.type_name),
                Becomes::Uuid => String::new(),
                Becomes::Text => format!(
                    " ({}: it would keep its type and take the new keys' text)",
                    c.type_name
                ),
            };
            return Err(DbError::refused(
                "table",
                format!(
                    "{}.{}{kind} has no foreign key to {} but is named for its key and each of its {held} values is one of its keys: it would keep the old keys; migrate it as a reference with --also {spec} (or declare its foreign key), or leave it as it is with --leave {spec}",
                    r.display_name(),
                    c.name,
                    key.table.display_name()
                ),
            ));
        }
    }
    Ok(())
}

/// `schema.table.column` as `--also` takes it (quoted where psql needs).
pub fn column_spec(r: &Relation, c: &Column) -> String {
    format!("{}.{}", r.typed_name(), uuidforge_ident::as_typed(&c.name))
}

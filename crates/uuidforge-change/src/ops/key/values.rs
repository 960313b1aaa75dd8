//! Columns that hold a key's values without a foreign key saying so: found
//! by name and by their values (every value a key), whatever their type —
//! the key's own, another integer or numeric type, or text — and refused
//! until the user says what they are (`--also`: a reference; `--leave`:
//! not one). A reference of another type either becomes `uuid` (numbers:
//! they cannot hold a UUID) or keeps its type and takes the new key's text
//! (text: the application writes text there, and a text column often holds
//! other things too).

use super::Key;
use uuidforge_db::catalog::{Column, Relation, Snapshot};
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

/// A column's type as it is declared, with its collation where not its
/// type's: what a column made or rewritten to hold its values is given.
pub fn declared(c: &Column) -> String {
    match &c.collation {
        Some(collation) => format!("{} COLLATE {collation}", c.type_name),
        None => c.type_name.clone(),
    }
}

/// `schema.table.column` as a user names a column again (quoted where
/// psql needs).
pub fn column_spec(r: &Relation, c: &Column) -> String {
    format!("{}.{}", r.typed_name(), uuidforge_ident::as_typed(&c.name))
}

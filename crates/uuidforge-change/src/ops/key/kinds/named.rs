//! Columns that hold the key's values without a foreign key saying so,
//! found by name (as discovery reads names) and by their values (every
//! value a key), whatever their type — the key's own, another integer or
//! numeric type, or text — and refused until the user says what they are:
//! a reference, migrated with the key, or not one, left as it is.

use super::{Kind, Migration, Placed, Schedule, SoFar, Staying, Target};
use crate::ops::key::values::{becomes, cannot_refer, column_spec, equal, Becomes};
use crate::ops::key::{Key, Reference};
use crate::ops::{Named, Read, Reading};
use uuidforge_db::catalog::{Column, RelKind, Relation, Snapshot};
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_db::plan::Query;
use uuidforge_ident::quote_ident;

/// The read of the named columns' values: per column `[values, not keys]`.
const NAMED_VALUES: Named<Vec<(i64, i64)>> = Named::new(
    "named_values",
    "read the values of columns named for the key without a foreign key",
);

pub(super) struct NamedForTheKey;

impl Kind for NamedForTheKey {
    fn name(&self) -> &'static str {
        "columns named for the key"
    }

    fn reads(&self, target: &Target, _: &SoFar) -> Result<Vec<Read>, DbError> {
        let named = named_for_key(
            target.snapshot,
            &target.key,
            &target.references,
            &target.named(),
        );
        Ok(vec![read(target.snapshot, &target.key, &named)])
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        let named = named_for_key(m.snapshot, &m.key, &m.references, &m.named());
        let counts = m.answers.required(&NAMED_VALUES)?;
        refuse_named_references(m.snapshot, &m.key, &named, &counts)?;
        Ok(Vec::new())
    }

    fn place(&self, _: &Migration, _: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        Ok(Vec::new())
    }
}

/// Columns that may hold the key's values without a foreign key saying
/// so: of a family that can ([`cannot_refer`]), named for it (`customer_id`
/// or `customer` for `customer.customer_id`, as discovery reads names),
/// in a table the login can read, neither a reference already nor left
/// with `--leave` (`left`, (table, column) pairs). Their values are read
/// before planning ([`read`]).
fn named_for_key<'a>(
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
fn read(snapshot: &Snapshot, key: &Key, named: &[(&Relation, &Column)]) -> Read {
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
    NAMED_VALUES.read(Query::new(format!(
        "SELECT json_build_array({})::text",
        counts.join(", ")
    )))
}

/// Refuses when a column named for the key, without a foreign key, holds
/// only key values (`values`, per column of `named`): a reference nobody
/// declared, which the migration would leave holding old keys.
fn refuse_named_references(
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
            return Err(DbError::refusal(
                "table",
                Refusal::new(
                    Reason::UndeclaredReference,
                    format!(
                        "{}.{}{kind} has no foreign key to {} but is named for its key and each of its {held} values is one of its keys: it would keep the old keys (or declare its foreign key)",
                        r.display_name(),
                        c.name,
                        key.table.display_name()
                    ),
                )
                .way_out(WayOut::AsReference { column: spec.clone() })
                .way_out(WayOut::Leave { column: spec }),
            ));
        }
    }
    Ok(())
}

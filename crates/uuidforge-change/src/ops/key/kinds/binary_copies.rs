//! Copies of a uuid key held in binary and structured columns: `bytea`
//! holding a key's 16 bytes (`uuid_send`), the extension's `uuid192`
//! whose 128-bit UUID is a key, and the uuid fields of a composite-type
//! column (`(ref).service`). Found like the copies in text and JSON (one
//! statement per table, each such column counted), refused until each is
//! named — rewritten with the key (`--also`) or left as it is (`--leave`)
//! — and rewritten in place in one transaction: the 16 bytes replaced by
//! the new key's, a `uuid192` made again over the new key with its
//! segment's fields (so its checksum holds), a composite's field set. A
//! `bytea` of another length is not read as a key (a UUID_192's 24 bytes
//! carry a checksum over the UUID, which a byte rewrite would break).

use super::copies::{is_key, searched_where, Copy};
use super::{Kind, Migration, Placed, Schedule, SoFar, Staying, Target};
use crate::action::{Action, Table};
use crate::ops::key::phase::Phase;
use crate::ops::{Line, Read, Reading};
use serde::Deserialize;
use uuidforge_db::catalog::{Column, Container, Relation, Snapshot};
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_db::plan::Query;
use uuidforge_ident::{quote_ident, quote_literal};

pub(super) struct BinaryCopies;

/// How a column holds a key in binary or structured form.
enum Holds<'a> {
    /// `bytea` of 16 bytes.
    Bytes,
    /// The extension's `uuid192` (its functions in this schema).
    Uuid192 { schema: &'a str },
    /// A composite type's uuid fields.
    Fields(Vec<&'a Column>),
}

impl Holds<'_> {
    fn name(&self) -> &'static str {
        match self {
            Holds::Bytes => "bytea",
            Holds::Uuid192 { .. } => "uuid192",
            Holds::Fields(_) => "composite",
        }
    }
}

/// How `c` holds a key, if it can.
fn holds<'a>(snapshot: &'a Snapshot, c: &Column) -> Option<Holds<'a>> {
    match snapshot.container(c.type_oid)? {
        Container::Bytea => Some(Holds::Bytes),
        Container::Uuid192 => Some(Holds::Uuid192 {
            schema: &snapshot.base_type(c.type_oid)?.schema,
        }),
        Container::Composite => {
            let relation = snapshot.relation(snapshot.base_type(c.type_oid)?.relid)?;
            let fields: Vec<&Column> = relation
                .columns
                .iter()
                .filter(|f| snapshot.container(f.type_oid) == Some(Container::Uuid))
                .collect();
            (!fields.is_empty()).then_some(Holds::Fields(fields))
        }
        _ => None,
    }
}

/// The columns searched, by table.
fn searched<'a>(target: &Target<'a>) -> Vec<(&'a Relation, Vec<&'a Column>)> {
    searched_where(target, &|c| holds(target.snapshot, c).is_some())
}

/// Whether row `x`'s `column` holds one of `keys` (a relation of column
/// `k`).
fn holds_key(how: &Holds, column: &Column, keys: &str) -> String {
    let c = format!("x.{}", quote_ident(&column.name));
    match how {
        Holds::Bytes => format!(
            "length({c}) = 16 AND {}",
            is_key(
                &c,
                &format!("(SELECT uuid_send(k) AS k FROM {keys}) AS bytes")
            )
        ),
        Holds::Uuid192 { schema } => {
            is_key(&format!("{}.uuid192_uuid({c})", quote_ident(schema)), keys)
        }
        Holds::Fields(fields) => fields
            .iter()
            .map(|f| is_key(&format!("({c}).{}", quote_ident(&f.name)), keys))
            .collect::<Vec<_>>()
            .join(" OR "),
    }
}

/// The read of one table's columns.
struct BinaryCopiesIn<'a> {
    table: &'a Relation,
}

/// Per column, the rows holding an old key.
#[derive(Deserialize)]
struct Counted(Vec<i64>);

impl Reading for BinaryCopiesIn<'_> {
    type Answer = Counted;

    fn name(&self) -> String {
        format!("binary copies in {}", self.table.oid)
    }

    fn what(&self) -> String {
        format!(
            "look for copies of the keys in the bytes, uuid192 and composite values of {}",
            self.table.display_name()
        )
    }

    fn parse(&self, text: &str) -> Result<Counted, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// The columns holding copies, with how: those the search found, and every
/// one named as a copy.
fn found<'m>(m: &'m Migration) -> Result<Vec<(Copy, Holds<'m>, &'m Column)>, DbError> {
    let mut out = Vec::new();
    for (table, columns) in searched(m) {
        let Counted(counts) = m.answers.required(&BinaryCopiesIn { table })?;
        for (c, rows) in columns.iter().zip(counts) {
            let rewritten = m.target.copies.contains(&(table.oid, c.num));
            let Some(how) = holds(m.snapshot, c) else {
                continue;
            };
            if rows == 0 && !rewritten {
                continue;
            }
            out.push((
                Copy {
                    table: table.sql_name(),
                    table_oid: table.oid,
                    column: c.name.clone(),
                    num: c.num,
                    holds: how.name().into(),
                    rows,
                    whole: rows,
                    rewritten,
                },
                how,
                *c,
            ));
        }
    }
    Ok(out)
}

impl Kind for BinaryCopies {
    fn name(&self) -> &'static str {
        "copies of a uuid key in bytes, uuid192 and composite values"
    }

    fn reads(&self, target: &Target, _: &SoFar) -> Result<Vec<Read>, DbError> {
        let keys = format!(
            "(SELECT {} AS k FROM {})",
            quote_ident(&target.key.column.name),
            target.key.table.sql_name()
        );
        Ok(searched(target)
            .into_iter()
            .map(|(table, columns)| {
                let counts: Vec<String> = columns
                    .iter()
                    .filter_map(|c| {
                        let how = holds(target.snapshot, c)?;
                        Some(format!(
                            "count(*) FILTER (WHERE {})",
                            holds_key(&how, c, "keys")
                        ))
                    })
                    .collect();
                BinaryCopiesIn { table }.read(Query::new(format!(
                    "WITH keys AS MATERIALIZED {keys} SELECT json_build_array({})::text FROM {} x",
                    counts.join(", "),
                    table.sql_name()
                )))
            })
            .collect())
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        let unnamed: Vec<String> = found(m)?
            .iter()
            .filter(|(c, _, _)| !c.rewritten)
            .map(|(c, _, _)| c.described())
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
                    "old keys of {} are copied outside its references as bytes, uuid192 or composite values, in {}: name each",
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

    fn lines(&self, m: &Migration) -> Vec<Line> {
        found(m)
            .unwrap_or_default()
            .iter()
            .filter(|(c, _, _)| c.rewritten)
            .map(|(c, _, _)| {
                Line::from(format!(
                    "  rewritten in place to the new keys, other fields kept: {}",
                    c.described()
                ))
            })
            .collect()
    }

    fn verify(&self, m: &Migration, map: &str) -> Vec<String> {
        found(m)
            .unwrap_or_default()
            .iter()
            .filter(|(c, _, _)| c.rewritten)
            .map(|(c, how, column)| {
                let old_keys = format!("(SELECT m.old::uuid AS k FROM {map} m) AS olds");
                format!(
                    "{}, (SELECT count(*) FROM {} x WHERE {})",
                    quote_literal(&format!("old keys left in {}.{}", c.table, c.column)),
                    c.table,
                    holds_key(how, column, &old_keys)
                )
            })
            .collect()
    }

    fn place(&self, m: &Migration, schedule: Schedule, map: &str) -> Result<Vec<Placed>, DbError> {
        let found = found(m)?;
        let rewritten: Vec<&(Copy, Holds, &Column)> =
            found.iter().filter(|(c, _, _)| c.rewritten).collect();
        if let (true, Some((c, _, _))) = (schedule.in_batches(), rewritten.first()) {
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
                .way_out(WayOut::Leave { column: c.spec() }),
            ));
        }
        let mut out = Vec::new();
        for (c, how, _) in rewritten {
            out.extend(rewrite(c, how, map));
        }
        Ok(Placed::actions(Phase::RewriteCopies, out))
    }
}

/// The updates that rewrite the copies in `c` to the new keys of `map`.
fn rewrite(c: &Copy, how: &Holds, map: &str) -> Vec<Action> {
    let x = format!("x.{}", quote_ident(&c.column));
    let update = |set: String, condition: String| {
        Action::Table(Table::Update {
            table: c.table.clone(),
            set,
            from: Some(format!("{map} m")),
            condition,
        })
    };
    let column = quote_ident(&c.column);
    match how {
        Holds::Bytes => vec![update(
            format!("{column} = uuid_send(m.new)"),
            format!("length({x}) = 16 AND {x} = uuid_send(m.old::uuid)"),
        )],
        Holds::Uuid192 { schema } => {
            let f = |name: &str| format!("{}.{name}({x})", quote_ident(schema));
            let make = format!("{}.uuid192", quote_ident(schema));
            vec![update(
                format!(
                    "{column} = CASE {} WHEN 0 THEN {make}(m.new, {}) ELSE {make}(m.new, {}, {}, {}, {}, {}, {}, {}, {}) END",
                    f("uuid192_structure"),
                    f("uuid192_payload"),
                    f("uuid192_module"),
                    f("uuid192_hub"),
                    f("uuid192_source"),
                    f("uuid192_operation"),
                    f("uuid192_message"),
                    f("uuid192_shard"),
                    f("uuid192_archived"),
                    f("uuid192_deleted"),
                ),
                format!("m.old = {}::text", f("uuid192_uuid")),
            )]
        }
        Holds::Fields(fields) => fields
            .iter()
            .map(|field| {
                let name = quote_ident(&field.name);
                update(
                    format!("{column}.{name} = m.new"),
                    format!("m.old = ({x}).{name}::text"),
                )
            })
            .collect(),
    }
}

//! Generated columns computed from a changed column: their values change
//! with the key, so each is refused by name unless asked to be computed
//! again (`--regenerate`), which drops it before the fill and adds it
//! again from its definition after — a rewrite of its table, one
//! transaction only — once its expression is typed over the new columns
//! and nothing else depends on it. The plan says how many rows change.

use super::{dropped_and_made, others, Kind, Migration, Placed, Schedule, SoFar, Staying, Target};
use crate::action::{Action, Table};
use crate::ops::key::dependents::{refused_probe, unquoted, Other, OtherKind};
use crate::ops::key::model::probe_over_uuid;
use crate::ops::key::values::column_spec;
use crate::ops::{Read, Reading};
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};

pub(super) struct GeneratedColumns;

/// The read of how many rows a generated column computed again changes.
struct Rows(u32);

impl Reading for Rows {
    type Answer = String;

    fn name(&self) -> String {
        format!("rows of generated column {}", self.0)
    }

    fn what(&self) -> String {
        "count the rows whose generated column is computed again".into()
    }

    fn parse(&self, text: &str) -> Result<String, String> {
        Ok(text.to_string())
    }
}

/// A generated column's table and number, expression and users.
type Generated<'m> = ((u32, i16), &'m str, &'m [String]);

fn generated<'m>(m: &'m Migration) -> Vec<(&'m Other, Generated<'m>)> {
    others(m, |k| match k {
        OtherKind::Generated {
            generated,
            generated_expression,
            generated_users,
        } => Some((
            *generated,
            generated_expression.as_str(),
            &generated_users[..],
        )),
        _ => None,
    })
}

/// What becomes of a generated column asked to be computed again: the
/// reason it cannot be, or none.
fn refused(m: &Migration, o: &Other, users: &[String]) -> Result<Option<String>, DbError> {
    if let Some(message) = refused_probe(&m.answers, "generated column", o.oid)? {
        return Ok(Some(format!("over uuid the server refuses it: {message}")));
    }
    Ok((!users.is_empty())
        .then(|| format!("{} depend on it, which would go with it", users.join(", "))))
}

impl Kind for GeneratedColumns {
    fn name(&self) -> &'static str {
        "generated columns"
    }

    fn reads(&self, target: &Target, so_far: &SoFar) -> Result<Vec<Read>, DbError> {
        let Some(found) = so_far.dependents else {
            return Ok(Vec::new());
        };
        let mut probes = Vec::new();
        let mut counts = Vec::new();
        for o in &found.others {
            let OtherKind::Generated {
                generated: (table, num),
                generated_expression,
                ..
            } = &o.of
            else {
                continue;
            };
            if !target.regenerate.contains(&(*table, *num)) {
                continue;
            }
            probes.extend(probe_over_uuid(
                target,
                ("generated column", o.oid),
                (*table, &o.description),
                vec![generated_expression.as_str()],
                &["x"],
            ));
            if let Some(relation) = target.snapshot.relation(*table) {
                counts.push(Rows(o.oid).read(uuidforge_db::plan::Query::new(format!(
                    "SELECT count(*)::text FROM {}",
                    relation.sql_name()
                ))));
            }
        }
        probes.extend(counts);
        Ok(probes)
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        let found = generated(m);
        for asked in &m.regenerate {
            if !found.iter().any(|(_, (at, _, _))| at == asked) {
                let name = m
                    .snapshot
                    .relation(asked.0)
                    .and_then(|r| Some(format!("{}.{}", r.display_name(), r.column(asked.1)?.name)))
                    .unwrap_or_default();
                return Err(DbError::refusal(
                    "regenerate",
                    Refusal::new(
                        Reason::InvalidValue,
                        format!(
                            "{name} (expected a generated column computed from the key or a reference)"
                        ),
                    ),
                ));
            }
        }
        let mut out = Vec::new();
        for (o, (at, _, users)) in found {
            let asked = m.regenerate.contains(&at);
            let why = if asked { refused(m, o, users)? } else { None };
            if asked && why.is_none() {
                continue;
            }
            let spec = m
                .snapshot
                .relation(at.0)
                .and_then(|r| Some(column_spec(r, r.column(at.1)?)))
                .unwrap_or_default();
            out.push(Staying {
                named: o.named(),
                why,
                by_hand: "its values change with the key: drop it before the migration and add it again after",
                ways_out: if asked {
                    Vec::new()
                } else {
                    vec![WayOut::Regenerate { column: spec }]
                },
            });
        }
        Ok(out)
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let computed: Vec<&Other> = generated(m)
            .into_iter()
            .filter(|(_, (at, _, _))| m.regenerate.contains(at))
            .map(|(o, _)| o)
            .collect();
        if let (true, Some(g)) = (schedule.in_batches(), computed.first()) {
            return Err(DbError::refusal(
                "regenerate",
                Refusal::new(
                    Reason::NotInBatches,
                    format!(
                        "{} is computed again by rewriting its table, which batches cannot do without locking writers out",
                        g.description
                    ),
                )
                .way_out(WayOut::OneTransaction),
            ));
        }
        let mut drop = Vec::new();
        let mut make = Vec::new();
        for o in computed {
            let (Some((column, table)), Some(definition)) = (o.name_on(), &o.definition) else {
                continue;
            };
            // Computed again over the new columns: dropped before the
            // fill, added again after (a rewrite of its table).
            drop.push(Action::Table(Table::DropColumn {
                table: table.to_string(),
                column: unquoted(column),
            }));
            make.push(Action::Table(Table::AddColumnDefinition {
                table: table.to_string(),
                definition: definition.clone(),
            }));
        }
        Ok(dropped_and_made(drop, make))
    }
}

/// The plan's lines on the generated columns computed again: which, and
/// how many rows change.
pub(crate) fn lines(m: &Migration) -> Vec<String> {
    generated(m)
        .into_iter()
        .filter(|(_, (at, _, _))| m.regenerate.contains(at))
        .map(|(o, _)| {
            let rows = m
                .answers
                .answer(&Rows(o.oid))
                .ok()
                .flatten()
                .unwrap_or_else(|| "?".into());
            format!(
                "  {} ({}): computed again over the new column, its value changes in each of the table's {rows} rows",
                o.description,
                o.definition.as_deref().unwrap_or_default()
            )
        })
        .collect()
}

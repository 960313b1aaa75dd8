//! Row-level security policies over a changed column: dropped and made
//! again from their definitions over the new column (old keys in them
//! translated). One over its own table's columns only is typed over uuid
//! first and refused by name, with the server's words, where it does not
//! hold; one that reads tables is typed when made again, over every
//! changed column at once (a failure rolls the change back).

use super::{
    dropped_and_made, from_definition, others, Kind, Migration, Placed, Schedule, SoFar, Staying,
    Target,
};
use crate::action::{Action, Object};
use crate::ops::key::dependents::{refused_probe, Other, OtherKind};
use crate::ops::key::model::probe_over_uuid;
use crate::ops::Read;
use uuidforge_db::error::DbError;

pub(super) struct Policies;

/// A policy's table and expressions, and whether they read tables.
type Policy<'m> = (u32, &'m [Option<String>], bool);

fn policies<'m>(m: &'m Migration) -> Vec<(&'m Other, Policy<'m>)> {
    others(m, |k| match k {
        OtherKind::Policy {
            policy_table,
            policy_expressions,
            policy_reads_tables,
            ..
        } => Some((*policy_table, &policy_expressions[..], *policy_reads_tables)),
        _ => None,
    })
}

impl Kind for Policies {
    fn name(&self) -> &'static str {
        "policies"
    }

    fn reads(&self, target: &Target, so_far: &SoFar) -> Result<Vec<Read>, DbError> {
        let Some(found) = so_far.dependents else {
            return Ok(Vec::new());
        };
        Ok(found
            .others
            .iter()
            .filter_map(|o| match &o.of {
                OtherKind::Policy {
                    policy_table,
                    policy_expressions,
                    policy_reads_tables: false,
                    ..
                } => probe_over_uuid(
                    target,
                    ("policy", o.oid),
                    (*policy_table, &o.description),
                    policy_expressions
                        .iter()
                        .flatten()
                        .map(String::as_str)
                        .collect(),
                    &["x"],
                ),
                _ => None,
            })
            .collect())
    }

    fn check(&self, m: &Migration) -> Result<Vec<Staying>, DbError> {
        let mut out = Vec::new();
        for (o, _) in policies(m) {
            if let Some(message) = refused_probe(&m.answers, "policy", o.oid)? {
                out.push(Staying {
                    named: o.named(),
                    why: Some(format!("over uuid the server refuses it: {message}")),
                    by_hand: "its expression does not hold over uuid: drop the policy before the migration and create it again after over the new column, comparing it with a value of the new type (a setting read as uuid, the new key)",
                    ways_out: Vec::new(),
                });
            }
        }
        Ok(out)
    }

    fn place(&self, m: &Migration, _: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut drop = Vec::new();
        let mut make = Vec::new();
        for (o, _) in policies(m) {
            if let (Some((name, table)), Some(made)) = (o.name_on(), from_definition(o)) {
                drop.push(Action::Object(Object::DropPolicy {
                    name: name.to_string(),
                    table: table.to_string(),
                }));
                make.push(made);
            }
        }
        Ok(dropped_and_made(drop, make))
    }
}

//! `db switch-generator`: every column default that calls a UUID generator
//! other than the best one the server has — `gen_random_uuid()`,
//! uuid-ossp's `uuid_generate_v1/v1mc/v4()`, pg_uuidv7's or pg_idkit's,
//! PostgreSQL 18's own `uuidv7()`, the SQL edition's where the extension
//! is installed — set to that generator (as `migrate-key` chooses it for a
//! new key), in one transaction: from then on new rows get ordered UUIDv7
//! keys; the keys already there stay as they are (no row is written).
//!
//! Each table (partitions and inheritance children too) is changed on its
//! own (`ALTER TABLE ONLY`), so no default that was not listed moves with
//! its parent's. A default that calls a generator inside a larger
//! expression, or fills a column that is not `uuid`, is listed and left
//! for a hand edit. The checks before commit: every switched default calls
//! the new generator (by the catalog's dependency, not by its text), and
//! every other column default of the database reads as it did.

use super::{
    touched, Answers, Backup, ChangePlan, Check, Operation, Planned, Read, Run, Statement, Step,
    Value,
};
use crate::action::{Action, Table};
use serde::Serialize;
use uuidforge_db::catalog::{Column, RelKind, Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::generators::{self, Generator};

/// The functions that make UUIDs, by name (in any schema): what a key's
/// default calls.
const UUID_GENERATORS: &[&str] = &[
    "gen_random_uuid",
    "uuid_generate_v1",
    "uuid_generate_v1mc",
    "uuid_generate_v4",
    "uuidv4",
    "uuidv7",
    "uuid_generate_v7",
    "idkit_uuidv7_generate_uuid",
];

/// Setting every UUID generator default to the server's best generator.
#[derive(Debug, Clone, Default)]
pub struct SwitchGenerator;

/// A default switched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Switched {
    /// The table, `schema.name`.
    pub table: String,
    /// The column.
    pub column: String,
    /// Its default before, as the server prints it.
    pub from: String,
    /// What that default's generator is, for people.
    pub was: String,
}

/// A default that calls a UUID generator and is left as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Left {
    /// The table, `schema.name`.
    pub table: String,
    /// The column.
    pub column: String,
    /// Its default, as the server prints it.
    pub default: String,
    /// Why it is left.
    pub reason: String,
}

/// The plan of a switch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwitchGeneratorPlan {
    /// The generator every switched default calls now, as a default calls
    /// it (`"public".uuidv7()`).
    pub generator: String,
    /// What it is, for people.
    pub generator_is: String,
    /// The defaults switched.
    pub switched: Vec<Switched>,
    /// The defaults left, each with its reason.
    pub left: Vec<Left>,
    /// The change the runner runs.
    pub change: ChangePlan,
}

impl Planned for SwitchGeneratorPlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

/// The generator name a call names, without its schema.
fn bare(call: &str) -> &str {
    call.rsplit_once('.').map_or(call, |(_, name)| name)
}

/// Whether `default` is a call of `function` alone (`f()`, `s.f()`,
/// `"s".f()`): what can be replaced without changing anything else.
fn is_call_alone(default: &str, function: &str) -> bool {
    let Some(prefix) = default.strip_suffix(&format!("{}()", bare(function))) else {
        return false;
    };
    prefix.is_empty()
        || prefix
            .strip_suffix('.')
            .is_some_and(|schema| !schema.contains(['(', ')', ':']))
}

/// The built-in generator a default calls (`pg_catalog.gen_random_uuid`,
/// 18's `pg_catalog.uuidv7`): the catalog records no dependency on a
/// built-in function, so only the default's text names it.
fn builtin_call(default: &str) -> Option<String> {
    ["gen_random_uuid", "uuidv7", "uuidv4"]
        .into_iter()
        .find(|name| {
            default.match_indices(&format!("{name}(")).any(|(at, _)| {
                let before = default[..at].chars().next_back();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"')
                    && (before != Some('.') || default[..at].ends_with("pg_catalog."))
            })
        })
        .map(|name| format!("pg_catalog.{name}"))
}

/// What `column` of `relation` is to the switch: `None` when its default
/// calls no UUID generator (or already the best one).
fn consider(
    snapshot: &Snapshot,
    best: &Generator,
    relation: &Relation,
    column: &Column,
) -> Option<Result<Switched, Left>> {
    let default = column.default.clone()?;
    let call = match column
        .default_calls
        .iter()
        .find(|c| UUID_GENERATORS.contains(&bare(c)))
    {
        Some(call) => call.clone(),
        None => builtin_call(&default)?,
    };
    let was = generators::classify(snapshot, &call);
    // The same generator under another name (the extension's drop-ins, an
    // edition's): nothing to gain.
    if std::mem::discriminant(&was) == std::mem::discriminant(best) {
        return None;
    }
    let table = relation.display_name();
    let left = |reason: String| {
        Some(Err(Left {
            table: table.clone(),
            column: column.name.clone(),
            default: default.clone(),
            reason,
        }))
    };
    if column.type_name != "uuid" {
        return left(format!(
            "the column is {}, not uuid: change it by hand",
            column.type_name
        ));
    }
    if column.default_calls.len() > 1 || !is_call_alone(&default, &call) {
        return left(format!(
            "{call}() is called inside an expression: change it by hand"
        ));
    }
    Some(Ok(Switched {
        table,
        column: column.name.clone(),
        from: default,
        was: was.describe(),
    }))
}

impl SwitchGenerator {
    /// What every default of the database is to the switch, tables in the
    /// snapshot's order.
    fn survey<'a>(
        snapshot: &'a Snapshot,
        best: &Generator,
    ) -> (Vec<(&'a Relation, Switched)>, Vec<Left>) {
        let mut switched = Vec::new();
        let mut left = Vec::new();
        for relation in snapshot
            .relations
            .iter()
            .filter(|r| matches!(r.kind, RelKind::Table | RelKind::PartitionedTable))
        {
            for column in &relation.columns {
                match consider(snapshot, best, relation, column) {
                    Some(Ok(s)) => switched.push((relation, s)),
                    Some(Err(l)) => left.push(l),
                    None => {}
                }
            }
        }
        (switched, left)
    }
}

/// The checks before commit: every switched default depends on the new
/// generator's function (`generator`, as a default calls it); every other default of the database is what it
/// was (read before the steps and after).
fn checks(switched: &[(&Relation, Switched)], generator: &str) -> Vec<Check> {
    let tables = Value::Texts(switched.iter().map(|(r, _)| r.sql_name()).collect());
    let columns = Value::Texts(switched.iter().map(|(_, s)| s.column.clone()).collect());
    vec![
        Check::Zero {
            what: "the switched defaults".into(),
            statement: Statement::with(
                "SELECT json_build_object('defaults not calling the new generator', count(*) FILTER (WHERE NOT EXISTS (\
                   SELECT FROM pg_attribute a JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
                   JOIN pg_depend p ON p.classid = 'pg_attrdef'::regclass AND p.objid = d.oid \
                    AND p.refclassid = 'pg_proc'::regclass AND p.refobjid = $3::text::regprocedure \
                   WHERE a.attrelid = x.t::regclass AND a.attname = x.c)))::text \
                 FROM unnest($1::text[], $2::text[]) AS x (t, c)",
                &[
                    ("tables", tables.clone()),
                    ("columns", columns.clone()),
                    ("generator", Value::Text(Some(generator.to_string()))),
                ],
            ),
        },
        Check::Unchanged {
            what: "every other column default".into(),
            statement: Statement::with(
                "SELECT coalesce(json_agg(json_build_array(d.adrelid::regclass::text, a.attname, pg_get_expr(d.adbin, d.adrelid)) \
                   ORDER BY d.adrelid, d.adnum), '[]')::text \
                 FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum \
                 JOIN pg_class c ON c.oid = d.adrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' \
                   AND (d.adrelid, a.attname) NOT IN (SELECT x.t::regclass::oid, x.c FROM unnest($1::text[], $2::text[]) AS x (t, c))",
                &[("tables", tables), ("columns", columns)],
            ),
        },
    ]
}

impl Operation for SwitchGenerator {
    type Plan = SwitchGeneratorPlan;

    fn name(&self) -> &'static str {
        "switch-generator"
    }

    fn reads(&self, _snapshot: &Snapshot, _answers: &Answers) -> Result<Vec<Read>, DbError> {
        Ok(Vec::new())
    }

    fn plan(
        &self,
        snapshot: &Snapshot,
        _answers: &Answers,
    ) -> Result<SwitchGeneratorPlan, DbError> {
        let best = generators::for_new_key(snapshot, false)?.expect("a default is asked for");
        let generator = best.call();
        let (switched, left) = Self::survey(snapshot, &best);
        let actions: Vec<Action> = switched
            .iter()
            .map(|(r, s)| {
                Action::Table(Table::SetDefault {
                    // ONLY: a parent's children keep their own defaults,
                    // each switched (or not) on its own line.
                    table: format!("ONLY {}", r.sql_name()),
                    column: s.column.clone(),
                    expression: generator.clone(),
                })
            })
            .collect();
        let mut summary = vec![format!(
            "plan: {} default(s) set to {generator}, one transaction; no row is written (the keys there stay as they are)",
            switched.len()
        )];
        summary.push(format!("  the generator: {}", best.describe()));
        summary.extend(
            switched
                .iter()
                .map(|(_, s)| format!("  {}.{}: was {}", s.table, s.column, s.was)),
        );
        summary.extend(left.iter().map(|l| {
            format!(
                "  left {}.{}: {}: {}",
                l.table, l.column, l.default, l.reason
            )
        }));
        let change = ChangePlan {
            operation: "switch-generator".into(),
            target: snapshot.database.clone(),
            schema: String::new(),
            touches: touched(switched.iter().map(|(r, _)| *r)),
            summary: crate::ops::lines(summary),
            backup: Backup {
                relations: crate::ops::distinct(switched.iter().map(|(r, _)| r.sql_name())),
                schema_only: true,
                ..Backup::default()
            },
            run: Run::OneTransaction {
                lock: None,
                steps: Step::actions(&actions),
                checks: checks(&switched, &generator),
            },
            epilogue: Vec::new(),
            measured: Default::default(),
        };
        Ok(SwitchGeneratorPlan {
            generator,
            generator_is: best.describe(),
            switched: switched.into_iter().map(|(_, s)| s).collect(),
            left,
            change,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_call_alone_is_replaced() {
        assert!(is_call_alone(
            "gen_random_uuid()",
            "pg_catalog.gen_random_uuid"
        ));
        assert!(is_call_alone(
            "public.uuid_generate_v4()",
            "public.uuid_generate_v4"
        ));
        assert!(is_call_alone(
            "\"My s\".uuid_generate_v7()",
            "My s.uuid_generate_v7"
        ));
        assert!(!is_call_alone(
            "(gen_random_uuid())::text",
            "pg_catalog.gen_random_uuid"
        ));
        assert!(!is_call_alone(
            "md5((gen_random_uuid())::text)",
            "pg_catalog.gen_random_uuid"
        ));
        assert!(!is_call_alone(
            "x_gen_random_uuid()",
            "pg_catalog.gen_random_uuid"
        ));
    }

    #[test]
    fn built_in_generators_are_read_from_the_default() {
        assert_eq!(
            builtin_call("gen_random_uuid()").as_deref(),
            Some("pg_catalog.gen_random_uuid")
        );
        assert_eq!(
            builtin_call("pg_catalog.uuidv7()").as_deref(),
            Some("pg_catalog.uuidv7")
        );
        assert_eq!(
            builtin_call("(gen_random_uuid())::text").as_deref(),
            Some("pg_catalog.gen_random_uuid")
        );
        assert_eq!(builtin_call("my_gen_random_uuid()"), None);
        assert_eq!(builtin_call("public.uuidv7()"), None);
        assert_eq!(builtin_call("'uuidv7'::text"), None);
    }
}

//! The triggers that keep the new columns right for rows the application
//! writes while a change in batches runs: made in the first step, dropped
//! in the swap. A backfill's own updates set [`BACKFILL_SETTING`], which
//! the triggers leave alone.

use super::{Kind, Migration, Placed, Schedule};
use crate::action::{Action, Object};
use crate::ops::key::naming::{new_column, writers_function, WRITERS_TRIGGER};
use crate::ops::key::phase::Phase;
use crate::ops::key::values::{equal, Becomes};
use crate::ops::key::Reference;
use uuidforge_db::catalog::Relation;
use uuidforge_db::error::DbError;
use uuidforge_ident::{qualified, quote_ident};

/// The setting a backfill transaction sets so that the writer triggers
/// leave its own updates alone.
pub const BACKFILL_SETTING: &str = "uuidforge_migrate.backfill";

pub(super) struct Writers;

impl Kind for Writers {
    fn name(&self) -> &'static str {
        "the writers' triggers"
    }

    /// The triggers of each table written (batches only): the new key of a
    /// row inserted or whose key changed (from the map, else a fresh
    /// UUIDv7), the new reference of a row whose reference changed (an
    /// updated row may move to a page the backfill has passed: an update
    /// gives it its new value as an insert does).
    fn place(&self, m: &Migration, schedule: Schedule, map: &str) -> Result<Vec<Placed>, DbError> {
        if !schedule.in_batches() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for (table, columns) in m.tables_with_references() {
            let function = qualified(&m.key.table.schema, &writers_function(table.oid));
            out.extend(Placed::actions(
                Phase::WriterTriggers,
                [
                    Action::Object(Object::CreateTriggerFunction {
                        function: function.clone(),
                        body: m.trigger_body(map, table, &columns),
                    }),
                    Action::Object(Object::CreateRowTrigger {
                        name: WRITERS_TRIGGER.into(),
                        table: table.sql_name(),
                        when: format!(
                            "current_setting({}, true) IS DISTINCT FROM 'on'",
                            uuidforge_ident::quote_literal(BACKFILL_SETTING)
                        ),
                        function: function.clone(),
                    }),
                ],
            ));
            out.extend(Placed::actions(
                Phase::DropWriterTriggers,
                [
                    Action::Object(Object::DropTrigger {
                        name: WRITERS_TRIGGER.into(),
                        table: table.sql_name(),
                    }),
                    Action::Object(Object::DropFunction { function }),
                ],
            ));
        }
        Ok(out)
    }
}

impl Migration<'_> {
    /// A UUIDv7 from the clock, in SQL, for rows written while the
    /// migration runs: the new key's generator or, without one
    /// (`--no-default`), a version 4 UUID whose first 48 bits become the
    /// Unix milliseconds (RFC 9562 §5.7).
    fn uuidv7_sql(&self) -> String {
        match &self.generator {
            Some(generator) => generator.call(),
            None => "encode(set_byte(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::int8) FROM 3) FROM 1 FOR 6), 6, (get_byte(uuid_send(gen_random_uuid()), 6) & 15) | 112), 'hex')::uuid".into(),
        }
    }

    fn trigger_body(&self, map: &str, table: &Relation, columns: &[&Reference]) -> String {
        let t = self.key.table.sql_name();
        let k = quote_ident(&self.key.column.name);
        let kn = quote_ident(&new_column(&self.key.column.name));
        let mut body = String::new();
        if table.oid == self.key.table.oid {
            let v7 = self.uuidv7_sql();
            body.push_str(&format!(
                "IF TG_OP = 'INSERT' OR NEW.{k} IS DISTINCT FROM OLD.{k} OR NEW.{kn} IS NULL THEN NEW.{kn} := (SELECT m.new FROM {map} m WHERE m.old = NEW.{k}::text); IF NEW.{kn} IS NULL AND NEW.{k} IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.{k} IS DISTINCT FROM OLD.{k}) THEN NEW.{kn} := {v7}; END IF; END IF; "
            ));
        }
        for r in columns {
            let (c, cn) = (
                quote_ident(&r.column.name),
                quote_ident(&new_column(&r.column.name)),
            );
            let changed: String = r
                .pairs(&self.key)
                .iter()
                .map(|(o, _)| format!(" OR NEW.{o} IS DISTINCT FROM OLD.{o}", o = quote_ident(o)))
                .collect();
            let value = match self.becomes(r) {
                Becomes::Uuid => {
                    let own = if table.oid == self.key.table.oid {
                        format!("WHEN NEW.{c} = NEW.{k} THEN NEW.{kn} ")
                    } else {
                        String::new()
                    };
                    format!(
                        "CASE WHEN NEW.{c} IS NULL THEN NULL {own}ELSE (SELECT p.{kn} FROM {t} p WHERE {}{}) END",
                        equal(self.snapshot, &self.key, r.column, "p", "NEW"),
                        r.other_join(&self.key, "NEW", "p")
                    )
                }
                Becomes::Text => format!(
                    "CASE WHEN NEW.{c} IS NULL THEN NULL ELSE coalesce((SELECT p.{kn}::text FROM {t} p WHERE p.{k} = {}), NEW.{c}) END",
                    self.key_of_text(&format!("NEW.{c}"))
                ),
            };
            body.push_str(&format!(
                "IF TG_OP = 'INSERT' OR NEW.{c} IS DISTINCT FROM OLD.{c}{changed} OR NEW.{cn} IS NULL THEN NEW.{cn} := {value}; END IF; "
            ));
        }
        body
    }
}

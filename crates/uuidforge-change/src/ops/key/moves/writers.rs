//! The triggers that keep the new columns right for rows the application
//! writes while a change in batches runs.

use super::{Writers, BACKFILL_SETTING};
use crate::action::{Action, Object};
use crate::ops::key::values::{equal, Becomes};
use crate::ops::key::{by_column, new_column, Migration, Reference};
use uuidforge_db::catalog::Relation;
use uuidforge_ident::{qualified, quote_ident};

impl Migration<'_> {
    /// The triggers of each table written: the new key of a row inserted
    /// or whose key changed (from the map, else a fresh UUIDv7), the new
    /// reference of a row whose reference changed (an updated row may
    /// move to a page the backfill has passed: an update gives it its new
    /// value as an insert does).
    pub(super) fn writers(&self, map: &str) -> Vec<Writers> {
        let mut tables: Vec<(&Relation, Vec<&Reference>)> = vec![(self.key.table, Vec::new())];
        for r in by_column(&self.references) {
            match tables.iter_mut().find(|(t, _)| t.oid == r.table.oid) {
                Some((_, columns)) => columns.push(r),
                None => tables.push((r.table, vec![r])),
            }
        }
        tables
            .into_iter()
            .map(|(table, columns)| {
                let function = qualified(
                    &self.key.table.schema,
                    &format!("uuidforge_migrate_{}", table.oid),
                );
                Writers {
                    make: vec![
                        Action::Object(Object::CreateTriggerFunction {
                            function: function.clone(),
                            body: self.trigger_body(map, table, &columns),
                        }),
                        Action::Object(Object::CreateRowTrigger {
                            name: "uuidforge_migrate".into(),
                            table: table.sql_name(),
                            when: format!(
                                "current_setting({}, true) IS DISTINCT FROM 'on'",
                                uuidforge_ident::quote_literal(BACKFILL_SETTING)
                            ),
                            function: function.clone(),
                        }),
                    ],
                    drop: vec![
                        Action::Object(Object::DropTrigger {
                            name: "uuidforge_migrate".into(),
                            table: table.sql_name(),
                        }),
                        Action::Object(Object::DropFunction { function }),
                    ],
                }
            })
            .collect()
    }

    /// A UUIDv7 from the clock, in SQL, for rows written while the
    /// migration runs: the new key's generator or, without one
    /// (`--no-default`), a version 4 UUID whose first 48 bits become the
    /// Unix milliseconds (RFC 9562 §5.7).
    pub(super) fn uuidv7_sql(&self) -> String {
        match &self.generator {
            Some(generator) => generator.call(),
            None => "encode(set_byte(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::int8) FROM 3) FROM 1 FOR 6), 6, (get_byte(uuid_send(gen_random_uuid()), 6) & 15) | 112), 'hex')::uuid".into(),
        }
    }

    pub(super) fn trigger_body(
        &self,
        map: &str,
        table: &Relation,
        columns: &[&Reference],
    ) -> String {
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

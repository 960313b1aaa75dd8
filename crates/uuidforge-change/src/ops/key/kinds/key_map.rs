//! The key map (old key as text → new UUID): made first, filled with the
//! new keys the library computes from each row's time and the run's secret
//! (or takes as another database gave them), dropped last in batches. A
//! temporary table in one transaction; in batches a table of the key's
//! schema, which outlives the sessions.

use super::{Kind, Migration, Placed, Schedule};
use crate::action::{Action, NewKeys, Table};
use crate::ops::key::naming::new_column;
use crate::ops::key::phase::{Phase, Work};
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_ident::quote_ident;

pub(super) struct KeyMap;

impl Kind for KeyMap {
    fn name(&self) -> &'static str {
        "the key map"
    }

    fn place(&self, m: &Migration, schedule: Schedule, map: &str) -> Result<Vec<Placed>, DbError> {
        if schedule.in_batches() && m.given_keys.is_some() {
            return Err(DbError::refusal(
                "keys-from",
                Refusal::new(
                    Reason::InvalidValue,
                    "in batches (expected one transaction: a subscriber's tables are written by its replication alone)",
                )
                .way_out(WayOut::OneTransaction),
            ));
        }
        // In one transaction the map is filled at once and indexed after
        // (two index builds cost less than an entry per row in each); in
        // batches keys may be added to it run after run.
        let columns = if schedule.in_batches() {
            "old text PRIMARY KEY, new uuid NOT NULL UNIQUE"
        } else {
            "old text NOT NULL, new uuid NOT NULL"
        };
        let mut out = vec![Placed::action(
            Phase::MakeMap,
            Action::Table(Table::Create {
                table: map.to_string(),
                columns: columns.into(),
                temporary: !schedule.in_batches(),
                if_not_exists: false,
            }),
        )];
        if !schedule.in_batches() {
            out.push(Placed::action(
                Phase::IndexMap,
                Action::Table(Table::IndexMap {
                    map: map.to_string(),
                }),
            ));
        }
        out.push(Placed {
            phase: Phase::Keys,
            work: Work::Keys(NewKeys {
                // In batches, the rows an earlier run left without a key.
                read: crate::ops::key::checks::read_keys_sql(
                    m,
                    &if schedule.in_batches() {
                        format!(
                            " WHERE x.{} IS NULL",
                            quote_ident(&new_column(&m.key.column.name))
                        )
                    } else {
                        String::new()
                    },
                ),
                map: map.to_string(),
                ordered: m.order_column.is_some(),
                given: m.given_keys.clone(),
            }),
            by: "",
        });
        if schedule.in_batches() {
            out.push(Placed::action(
                Phase::DropMap,
                Action::Table(Table::Drop {
                    table: map.to_string(),
                }),
            ));
        }
        Ok(out)
    }
}

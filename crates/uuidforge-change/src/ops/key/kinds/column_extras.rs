//! The changed columns' own NOT NULL constraint names (PostgreSQL 18 names
//! them), comments and privileges, given to the new columns once they have
//! the old names (batches: in one transaction the columns keep their own).

use super::{Kind, Migration, Placed, Schedule};
use crate::action::{Action, Grant, Object, Table};
use crate::ops::key::phase::Phase;
use uuidforge_db::error::DbError;
use uuidforge_ident::quote_ident;

pub(super) struct ColumnExtras;

impl Kind for ColumnExtras {
    fn name(&self) -> &'static str {
        "the columns' names of constraints, comments and privileges"
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        let mut out = Vec::new();
        if !schedule.in_batches() {
            return Ok(Vec::new());
        }
        for extras in &m.dependents.columns {
            let Some(table) = m.snapshot.relation(extras.table) else {
                continue;
            };
            let Some(column) = table.column(extras.num) else {
                continue;
            };
            let t = table.sql_name();
            if let Some(name) = &extras.not_null_name {
                out.push(Action::Table(Table::NameNotNull {
                    table: t.clone(),
                    column: column.name.clone(),
                    name: name.clone(),
                }));
            }
            if let Some(text) = &extras.comment {
                out.push(Action::Object(Object::Comment {
                    on: format!("COLUMN {t}.{}", quote_ident(&column.name)),
                    text: text.clone(),
                }));
            }
            for g in extras.grants.iter().flatten() {
                out.push(Action::Object(Object::Grant(Grant {
                    privilege: g.privilege.clone(),
                    column: Some(column.name.clone()),
                    on: t.clone(),
                    grantee: g.grantee.clone(),
                    grantable: g.grantable,
                })));
            }
        }
        Ok(Placed::actions(Phase::ColumnExtras, out))
    }
}

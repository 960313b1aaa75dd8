//! What a change sets or takes in its own transaction: when deferrable
//! constraints are checked, memory for its statements, table locks.

use super::{Locks, Timing};
use uuidforge_ident::quote_literal;

/// What a change sets or takes in its own transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transaction {
    /// `SET CONSTRAINTS ALL …` for the rest of the transaction.
    SetConstraints(Timing),
    /// `SET LOCAL setting = 'value'` (memory for this transaction only).
    SetLocal {
        /// The setting.
        setting: String,
        /// Its value.
        value: String,
    },
    /// `LOCK TABLE … IN mode MODE`.
    LockTable {
        /// The table.
        table: String,
        /// `SHARE ROW EXCLUSIVE`, …
        mode: String,
    },
}

impl Transaction {
    /// Its SQL, one statement per element.
    pub fn statements(&self) -> Vec<String> {
        match self {
            Transaction::SetConstraints(Timing::Immediate) => {
                vec!["SET CONSTRAINTS ALL IMMEDIATE".into()]
            }
            Transaction::SetConstraints(Timing::Deferred) => {
                vec!["SET CONSTRAINTS ALL DEFERRED".into()]
            }
            Transaction::SetLocal { setting, value } => {
                vec![format!("SET LOCAL {setting} = {}", quote_literal(value))]
            }
            Transaction::LockTable { table, mode } => {
                vec![format!("LOCK TABLE {table} IN {mode} MODE")]
            }
        }
    }

    /// What it locks.
    pub fn locks(&self) -> Locks {
        match self {
            Transaction::LockTable { mode, .. } if mode == "SHARE ROW EXCLUSIVE" => {
                Locks::ShareRowExclusive
            }
            Transaction::LockTable { .. } => Locks::AccessExclusive,
            _ => Locks::Nothing,
        }
    }
}

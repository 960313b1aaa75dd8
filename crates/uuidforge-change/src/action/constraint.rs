//! Constraints: added (valid, or `NOT VALID` to be validated while
//! writers go on), made on an index built before, dropped, a CHECK made
//! again as a proof, validated, made deferrable for a change's length,
//! renamed.

use super::{alter_table, Deferrable, KeyKind, Locks};
use uuidforge_ident::quote_ident;

/// Constraints: added (valid or `NOT VALID`), on an index built before, dropped, validated, made deferrable, renamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Constraint {
    /// `ADD CONSTRAINT name definition` (`PRIMARY KEY (…)`, `FOREIGN KEY
    /// …`, `CHECK (…)` as `pg_get_constraintdef` writes it), `NOT VALID`
    /// to be validated later.
    Add {
        /// The table.
        table: String,
        /// Its name.
        name: String,
        /// What follows the name.
        definition: String,
        /// Added `NOT VALID`.
        not_valid: bool,
    },
    /// A primary key or unique constraint made on an index built before
    /// (which takes the constraint's name).
    AddUsingIndex {
        /// The table.
        table: String,
        /// Its name.
        name: String,
        /// Primary or unique.
        kind: KeyKind,
        /// The index (unqualified: on the table's schema).
        index: String,
        /// As it was.
        deferrable: Deferrable,
    },
    /// `DROP CONSTRAINT`.
    Drop {
        /// The table.
        table: String,
        /// Its name.
        name: String,
    },
    /// A `CHECK` made again `NOT VALID` (dropped first if a killed earlier
    /// try left it): a proof to validate without blocking writers.
    ReplaceCheck {
        /// The table.
        table: String,
        /// Its name.
        name: String,
        /// The condition.
        condition: String,
    },
    /// `VALIDATE CONSTRAINT` (writers go on).
    Validate {
        /// The table.
        table: String,
        /// Its name.
        name: String,
    },
    /// A foreign key made deferrable for a change's length, or back.
    SetDeferrable {
        /// The table.
        table: String,
        /// The foreign key.
        name: String,
        /// Deferrable or not.
        deferrable: bool,
    },
    /// `RENAME CONSTRAINT`.
    Rename {
        /// The table.
        table: String,
        /// Its name now.
        from: String,
        /// Its new name.
        to: String,
    },
}

impl Constraint {
    /// Its SQL, one statement per element.
    pub fn statements(&self) -> Vec<String> {
        match self {
            Constraint::Add {
                table,
                name,
                definition,
                not_valid,
            } => vec![alter_table(
                table,
                &format!(
                    "ADD CONSTRAINT {} {definition}{}",
                    quote_ident(name),
                    if *not_valid { " NOT VALID" } else { "" }
                ),
            )],
            Constraint::AddUsingIndex {
                table,
                name,
                kind,
                index,
                deferrable,
            } => vec![alter_table(
                table,
                &format!(
                    "ADD CONSTRAINT {} {} USING INDEX {}{}",
                    quote_ident(name),
                    match kind {
                        KeyKind::Primary => "PRIMARY KEY",
                        KeyKind::Unique => "UNIQUE",
                    },
                    quote_ident(index),
                    deferrable.clause()
                ),
            )],
            Constraint::Drop { table, name } => vec![alter_table(
                table,
                &format!("DROP CONSTRAINT {}", quote_ident(name)),
            )],
            Constraint::ReplaceCheck {
                table,
                name,
                condition,
            } => {
                let n = quote_ident(name);
                vec![alter_table(
                    table,
                    &format!(
                        "DROP CONSTRAINT IF EXISTS {n}, ADD CONSTRAINT {n} CHECK ({condition}) NOT VALID"
                    ),
                )]
            }
            Constraint::Validate { table, name } => vec![alter_table(
                table,
                &format!("VALIDATE CONSTRAINT {}", quote_ident(name)),
            )],
            Constraint::SetDeferrable {
                table,
                name,
                deferrable,
            } => vec![alter_table(
                table,
                &format!(
                    "ALTER CONSTRAINT {} {}DEFERRABLE",
                    quote_ident(name),
                    if *deferrable { "" } else { "NOT " }
                ),
            )],
            Constraint::Rename { table, from, to } => vec![alter_table(
                table,
                &format!(
                    "RENAME CONSTRAINT {} TO {}",
                    quote_ident(from),
                    quote_ident(to)
                ),
            )],
        }
    }

    /// What it locks.
    pub fn locks(&self) -> Locks {
        match self {
            Constraint::Validate { .. } => Locks::ShareUpdateExclusive,
            Constraint::Add { definition, .. } if definition.starts_with("FOREIGN KEY") => {
                Locks::ShareRowExclusive
            }
            _ => Locks::AccessExclusive,
        }
    }

    /// The rename undoing a constraint rename.
    pub fn undo(&self) -> Option<Constraint> {
        match self {
            Constraint::Rename { table, from, to } => Some(Constraint::Rename {
                table: table.clone(),
                from: to.clone(),
                to: from.clone(),
            }),
            _ => None,
        }
    }
}

//! The action layer: every statement a change makes to a schema, typed.
//!
//! An operation never writes DDL text itself: it composes [`Action`]s, and
//! each action renders its SQL here, once ([`Action::statements`]). Each
//! also says what it locks ([`Action::locks`]) and whether it can run
//! inside a transaction ([`Action::transactional`]), which is what a
//! schedule needs to place it: all in one transaction, or in the steps of
//! a change in batches (built concurrently before a short swap, validated
//! after it).
//!
//! Names are given quoted and, for relations, qualified
//! ([`uuidforge_ident::qualified`]); column names and constraint names
//! unquoted (quoted here). Definitions PostgreSQL wrote
//! (`pg_get_constraintdef`, `pg_get_indexdef`, `pg_get_viewdef`) are taken
//! as they are.
//!
//! ```
//! use uuidforge_change::action::{Action, Locks, RelationKind, Table};
//! let a: Action = Table::RenameColumn {
//!     relation: "\"public\".\"orders\"".into(),
//!     kind: RelationKind::Table,
//!     from: "customer_id".into(),
//!     to: "client_id".into(),
//! }
//! .into();
//! assert_eq!(
//!     a.statements(),
//!     ["ALTER TABLE \"public\".\"orders\" RENAME COLUMN \"customer_id\" TO \"client_id\""]
//! );
//! assert_eq!(a.locks(), Locks::AccessExclusive);
//! assert!(a.transactional());
//! ```

mod constraint;
mod data;
mod index;
mod objects;
pub mod old_keys;
mod statement;
mod table;
mod transaction;

pub use constraint::Constraint;
pub use data::{
    new_keys, Data, DataIo, GivenKeys, Implicit, ImplicitValue, NewKeys, Outputs,
    SYNTHESIZED_EPOCH_MS,
};
pub use index::{Build, Index};
pub use objects::{Grant, Object, UserTrigger, View};
pub use statement::{Binding, Statement, Value};
pub use table::{MapLookup, Rewritten, Table};
pub use transaction::{lock_tables, Transaction, DEPENDENTS_LEFT};

/// What an action's statements lock on the relation they change, weakest
/// first: what a schedule needs to know to let the application's writers
/// go on beside it or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Locks {
    /// No relation lock (a setting, a function made).
    Nothing,
    /// `SHARE UPDATE EXCLUSIVE`: reads and writes go on (`VALIDATE
    /// CONSTRAINT`, `CREATE INDEX CONCURRENTLY`).
    ShareUpdateExclusive,
    /// `SHARE`: reads go on, writes wait (`CREATE INDEX`).
    Share,
    /// `SHARE ROW EXCLUSIVE`: reads go on, writes wait (a foreign key
    /// added, a trigger made).
    ShareRowExclusive,
    /// `ACCESS EXCLUSIVE`: everything waits (most `ALTER TABLE`).
    AccessExclusive,
}

impl Locks {
    /// Whether the application's writers wait while it is held.
    pub fn blocks_writers(self) -> bool {
        self >= Locks::Share
    }

    /// The mode as `LOCK TABLE` names it (none for [`Locks::Nothing`]).
    pub fn keyword(self) -> Option<&'static str> {
        match self {
            Locks::Nothing => None,
            Locks::ShareUpdateExclusive => Some("SHARE UPDATE EXCLUSIVE"),
            Locks::Share => Some("SHARE"),
            Locks::ShareRowExclusive => Some("SHARE ROW EXCLUSIVE"),
            Locks::AccessExclusive => Some("ACCESS EXCLUSIVE"),
        }
    }
}

// Plans recorded in a state table name the mode as `LOCK TABLE` does.
impl serde::Serialize for Locks {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.keyword().unwrap_or("NOTHING"))
    }
}

impl<'de> serde::Deserialize<'de> for Locks {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Locks, D::Error> {
        let text = String::deserialize(deserializer)?;
        [
            Locks::Nothing,
            Locks::ShareUpdateExclusive,
            Locks::Share,
            Locks::ShareRowExclusive,
            Locks::AccessExclusive,
        ]
        .into_iter()
        .find(|l| l.keyword().unwrap_or("NOTHING") == text)
        .ok_or_else(|| serde::de::Error::custom(format!("'{text}' is not a lock mode")))
    }
}

/// The kind of relation an `ALTER` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    /// `ALTER TABLE`.
    Table,
    /// `ALTER VIEW`.
    View,
    /// `ALTER MATERIALIZED VIEW`.
    MaterializedView,
    /// `ALTER FOREIGN TABLE`.
    ForeignTable,
}

impl RelationKind {
    fn keyword(self) -> &'static str {
        match self {
            RelationKind::Table => "TABLE",
            RelationKind::View => "VIEW",
            RelationKind::MaterializedView => "MATERIALIZED VIEW",
            RelationKind::ForeignTable => "FOREIGN TABLE",
        }
    }
}

/// A unique constraint's kind, for one made on an index built before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// `PRIMARY KEY`.
    Primary,
    /// `UNIQUE`.
    Unique,
}

/// When deferrable constraints are checked in this transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// `SET CONSTRAINTS ALL IMMEDIATE`.
    Immediate,
    /// `SET CONSTRAINTS ALL DEFERRED`.
    Deferred,
}

/// A constraint's deferrability as its DDL says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Deferrable {
    /// Not deferrable (nothing said).
    #[default]
    No,
    /// `DEFERRABLE INITIALLY IMMEDIATE`.
    InitiallyImmediate,
    /// `DEFERRABLE INITIALLY DEFERRED`.
    InitiallyDeferred,
}

impl Deferrable {
    /// From `pg_constraint.condeferrable` and `condeferred`.
    pub fn of(deferrable: bool, deferred: bool) -> Deferrable {
        match (deferrable, deferred) {
            (false, _) => Deferrable::No,
            (true, false) => Deferrable::InitiallyImmediate,
            (true, true) => Deferrable::InitiallyDeferred,
        }
    }

    fn clause(self) -> &'static str {
        match self {
            Deferrable::No => "",
            Deferrable::InitiallyImmediate => " DEFERRABLE INITIALLY IMMEDIATE",
            Deferrable::InitiallyDeferred => " DEFERRABLE INITIALLY DEFERRED",
        }
    }
}

/// One change to a schema (or to the transaction running it), typed, by
/// what it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Settings and locks of the change's transaction.
    Transaction(Transaction),
    /// Tables and columns.
    Table(Table),
    /// Constraints.
    Constraint(Constraint),
    /// Indexes.
    Index(Index),
    /// Views, triggers, functions, comments, privileges.
    Object(Object),
}

impl Action {
    /// Its SQL, one statement per element, without the final `;`.
    pub fn statements(&self) -> Vec<String> {
        match self {
            Action::Transaction(a) => a.statements(),
            Action::Table(a) => a.statements(),
            Action::Constraint(a) => a.statements(),
            Action::Index(a) => a.statements(),
            Action::Object(a) => a.statements(),
        }
    }

    /// What it locks on the relation it changes.
    pub fn locks(&self) -> Locks {
        match self {
            Action::Transaction(a) => a.locks(),
            Action::Table(a) => a.locks(),
            Action::Constraint(a) => a.locks(),
            Action::Index(a) => a.locks(),
            Action::Object(a) => a.locks(),
        }
    }

    /// Whether it runs inside a transaction (an index built concurrently
    /// does not).
    pub fn transactional(&self) -> bool {
        match self {
            Action::Index(a) => a.transactional(),
            _ => true,
        }
    }

    /// The action that undoes a rename (renames only: a script that
    /// undoes a change is made of them).
    pub fn undo(&self) -> Option<Action> {
        match self {
            Action::Table(a) => a.undo().map(Action::Table),
            Action::Constraint(a) => a.undo().map(Action::Constraint),
            Action::Index(a) => a.undo().map(Action::Index),
            _ => None,
        }
    }
}

macro_rules! from_group {
    ($($group:ident),*) => {
        $(impl From<$group> for Action {
            fn from(a: $group) -> Action {
                Action::$group(a)
            }
        })*
    };
}

from_group!(Transaction, Table, Constraint, Index, Object);

/// `text` on one line, for an SQL comment: a name from the database may
/// hold a line break, which would end the comment and leave the rest of
/// the name to be read as SQL by whoever runs the printed script.
///
/// ```
/// assert_eq!(uuidforge_change::action::one_line("a\nDROP TABLE t"), "a\\nDROP TABLE t");
/// ```
pub fn one_line(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// The statements of `actions`, in order.
pub fn statements<'a>(actions: impl IntoIterator<Item = &'a Action>) -> Vec<String> {
    actions.into_iter().flat_map(Action::statements).collect()
}

/// `ALTER TABLE table what`: the one spelling of every table change.
fn alter_table(table: &str, what: &str) -> String {
    format!("ALTER TABLE {table} {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statement_kind_quotes_names_and_says_its_lock() {
        let t = "\"s\".\"t\"".to_string();
        let add = Action::Table(Table::AddColumns {
            table: t.clone(),
            columns: vec![("a\"b".into(), "uuid".into()), ("c".into(), "text".into())],
        });
        assert_eq!(
            add.statements(),
            ["ALTER TABLE \"s\".\"t\" ADD COLUMN \"a\"\"b\" uuid, ADD COLUMN \"c\" text"]
        );
        assert!(add.locks().blocks_writers());
        let validate = Action::Constraint(Constraint::Validate {
            table: t.clone(),
            name: "fk".into(),
        });
        assert!(!validate.locks().blocks_writers());
        let fk = Action::Constraint(Constraint::Add {
            table: t.clone(),
            name: "fk".into(),
            definition: "FOREIGN KEY (a) REFERENCES p (id)".into(),
            not_valid: true,
        });
        assert_eq!(fk.locks(), Locks::ShareRowExclusive);
        assert!(fk.statements()[0].ends_with(" NOT VALID"));
        let build = Action::Index(Index::Concurrently {
            index: "\"s\".\"i\"".into(),
            build: Build::Columns {
                name: "i".into(),
                table: "\"s\".\"t\"".into(),
                columns: "a".into(),
                unique: false,
            },
        });
        assert!(!build.transactional());
        assert_eq!(
            build.statements(),
            [
                "DROP INDEX CONCURRENTLY IF EXISTS \"s\".\"i\"",
                "CREATE INDEX CONCURRENTLY \"i\" ON \"s\".\"t\" (a)"
            ]
        );
    }

    #[test]
    fn renames_undo_themselves() {
        let rename = Action::Index(Index::Rename {
            schema: "s".into(),
            from: "old\"x".into(),
            to: "new".into(),
        });
        let undo = rename.undo().unwrap();
        assert_eq!(
            undo.statements(),
            ["ALTER INDEX \"s\".\"new\" RENAME TO \"old\"\"x\""]
        );
        let column = Action::Table(Table::RenameColumn {
            relation: "\"s\".\"v\"".into(),
            kind: RelationKind::View,
            from: "a".into(),
            to: "b".into(),
        });
        assert_eq!(
            column.undo().unwrap().statements(),
            ["ALTER VIEW \"s\".\"v\" RENAME COLUMN \"b\" TO \"a\""]
        );
        assert_eq!(Action::Table(Table::Drop { table: t() }).undo(), None);
    }

    fn t() -> String {
        "\"s\".\"t\"".into()
    }
}

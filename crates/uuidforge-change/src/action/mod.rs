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
//! use uuidforge_change::action::{Action, Locks};
//! let a = Action::RenameColumn {
//!     relation: "\"public\".\"orders\"".into(),
//!     kind: uuidforge_change::action::RelationKind::Table,
//!     from: "customer_id".into(),
//!     to: "client_id".into(),
//! };
//! assert_eq!(
//!     a.statements(),
//!     ["ALTER TABLE \"public\".\"orders\" RENAME COLUMN \"customer_id\" TO \"client_id\""]
//! );
//! assert_eq!(a.locks(), Locks::AccessExclusive);
//! assert!(a.transactional());
//! ```

mod data;
mod objects;
mod statement;

pub use data::{
    new_keys, Data, DataIo, Implicit, ImplicitValue, NewKeys, Outputs, SYNTHESIZED_EPOCH_MS,
};
use objects::ViewSql;
pub use objects::{Grant, UserTrigger, View};
pub use statement::{Binding, Statement, Value};

use uuidforge_ident::{quote_ident, quote_literal};

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
    /// `SHARE ROW EXCLUSIVE`: reads go on, writes wait (a foreign key
    /// added, a trigger made).
    ShareRowExclusive,
    /// `ACCESS EXCLUSIVE`: everything waits (most `ALTER TABLE`).
    AccessExclusive,
}

impl Locks {
    /// Whether the application's writers wait while it is held.
    pub fn blocks_writers(self) -> bool {
        self >= Locks::ShareRowExclusive
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

/// One change to a schema (or to the session running it), typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
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
    /// A table made: `columns` is its column list as SQL. A temporary one
    /// is dropped at commit.
    CreateTable {
        /// The table (unqualified when temporary).
        table: String,
        /// Its column list.
        columns: String,
        /// `CREATE TEMP TABLE … ON COMMIT DROP`.
        temporary: bool,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
    },
    /// `DROP TABLE` of a table the change made itself (a key map kept
    /// between its steps): nothing else uses it, nobody waits.
    DropTable {
        /// The table.
        table: String,
    },
    /// Columns added to one table, in one statement.
    AddColumns {
        /// The table.
        table: String,
        /// (name, type) of each.
        columns: Vec<(String, String)>,
    },
    /// A column of a table or view renamed.
    RenameColumn {
        /// The relation.
        relation: String,
        /// What it is.
        kind: RelationKind,
        /// Its name now.
        from: String,
        /// Its new name.
        to: String,
    },
    /// `ALTER COLUMN … SET NOT NULL` (a validated `CHECK (c IS NOT NULL)`
    /// lets the server skip its scan).
    SetNotNull {
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// `ALTER COLUMN … DROP NOT NULL`.
    DropNotNull {
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// The column's NOT NULL constraint given `name` (PostgreSQL 18 names
    /// them after the column they were made for; earlier servers have
    /// none, and this does nothing there).
    NameNotNull {
        /// The table.
        table: String,
        /// The column.
        column: String,
        /// The name it had.
        name: String,
    },
    /// An identity or serial default dropped, with its sequence.
    DropKeyDefault {
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// `ALTER COLUMN … SET DEFAULT expression`.
    SetDefault {
        /// The table.
        table: String,
        /// The column.
        column: String,
        /// The default (SQL).
        expression: String,
    },
    /// `ADD CONSTRAINT name definition` (`PRIMARY KEY (…)`, `FOREIGN KEY
    /// …`, `CHECK (…)` as `pg_get_constraintdef` writes it), `NOT VALID`
    /// to be validated later.
    AddConstraint {
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
    AddKeyUsingIndex {
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
    DropConstraint {
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
    ValidateConstraint {
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
    RenameConstraint {
        /// The table.
        table: String,
        /// Its name now.
        from: String,
        /// Its new name.
        to: String,
    },
    /// An index as its definition says (`pg_get_indexdef`, or one made
    /// over other columns).
    CreateIndex {
        /// The whole `CREATE INDEX` statement.
        definition: String,
    },
    /// An index we make over columns (names, quoted, comma-separated).
    IndexOn {
        /// Its name.
        name: String,
        /// The table.
        table: String,
        /// The columns.
        columns: String,
        /// `UNIQUE`.
        unique: bool,
        /// `CONCURRENTLY` (outside a transaction: see
        /// [`Action::CreateIndexConcurrently`]).
        concurrently: bool,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
    },
    /// An index built without blocking writers, outside any transaction:
    /// `definition` says `CREATE [UNIQUE] INDEX CONCURRENTLY name …`; what
    /// a killed earlier build left of `index` is dropped first.
    CreateIndexConcurrently {
        /// The index (qualified), for the cleanup.
        index: String,
        /// The statement.
        definition: String,
    },
    /// `DROP INDEX`.
    DropIndex {
        /// The index (qualified).
        index: String,
    },
    /// `ALTER INDEX … RENAME TO`.
    RenameIndex {
        /// Its schema.
        schema: String,
        /// Its name now.
        from: String,
        /// Its new name.
        to: String,
    },
    /// The piece on `partition` of a partitioned index or key made again
    /// given back its name (the server names new pieces itself).
    NamePiece {
        /// The partitioned index (qualified).
        parent: String,
        /// The partition (qualified).
        partition: String,
        /// The name it had.
        name: String,
    },
    /// A view dropped.
    DropView(View),
    /// A view made again as it was defined: options, owner, comment,
    /// privileges, a materialized view's indexes (refreshed apart:
    /// [`Action::RefreshView`]).
    CreateView {
        /// The view.
        view: View,
        /// The role running the change (the view's owner is set when it
        /// is another).
        user: String,
    },
    /// `REFRESH MATERIALIZED VIEW`.
    RefreshView {
        /// The view (qualified).
        view: String,
    },
    /// A user trigger set to fire `state` (`ENABLE`, `DISABLE`, `ENABLE
    /// REPLICA`, `ENABLE ALWAYS`).
    SetTrigger {
        /// Its table.
        table: String,
        /// The trigger.
        trigger: String,
        /// How it fires.
        state: String,
    },
    /// A PL/pgSQL trigger function.
    CreateTriggerFunction {
        /// The function (qualified).
        function: String,
        /// Its body between `BEGIN` and `RETURN NEW`.
        body: String,
    },
    /// A row trigger before inserts and updates, firing `function` `when`.
    CreateRowTrigger {
        /// The trigger.
        name: String,
        /// Its table.
        table: String,
        /// Its `WHEN` condition.
        when: String,
        /// The function (qualified).
        function: String,
    },
    /// `DROP TRIGGER`.
    DropTrigger {
        /// The trigger.
        name: String,
        /// Its table.
        table: String,
    },
    /// `DROP FUNCTION f()`.
    DropFunction {
        /// The function (qualified, no arguments).
        function: String,
    },
    /// A SQL function made or replaced.
    CreateSqlFunction {
        /// The function and its arguments: `s.f(id uuid)`.
        signature: String,
        /// `RETURNS …` and attributes: `uuid LANGUAGE sql STABLE`.
        returns: String,
        /// Its body.
        body: String,
    },
    /// `COMMENT ON what IS 'text'`.
    Comment {
        /// `COLUMN t.c`, `INDEX i`, `CONSTRAINT c ON t`, …
        on: String,
        /// The comment.
        text: String,
    },
    /// `GRANT privilege [(column)] ON relation TO grantee`.
    Grant(Grant),
    /// `ALTER kind relation OWNER TO owner`.
    SetOwner {
        /// The relation.
        relation: String,
        /// What it is.
        kind: RelationKind,
        /// The role.
        owner: String,
    },
    /// `UPDATE table AS x SET … [FROM …] WHERE …`: rows filled.
    Update {
        /// The table.
        table: String,
        /// What is set (over `x`).
        set: String,
        /// Joined relations.
        from: Option<String>,
        /// Which rows.
        condition: String,
    },
}

impl Action {
    /// Its SQL, one statement per element, without the final `;`.
    pub fn statements(&self) -> Vec<String> {
        match self {
            Action::SetConstraints(Timing::Immediate) => {
                vec!["SET CONSTRAINTS ALL IMMEDIATE".into()]
            }
            Action::SetConstraints(Timing::Deferred) => vec!["SET CONSTRAINTS ALL DEFERRED".into()],
            Action::SetLocal { setting, value } => {
                vec![format!("SET LOCAL {setting} = {}", quote_literal(value))]
            }
            Action::LockTable { table, mode } => vec![format!("LOCK TABLE {table} IN {mode} MODE")],
            Action::CreateTable {
                table,
                columns,
                temporary,
                if_not_exists,
            } => {
                let (temp, on_commit) = if *temporary {
                    ("TEMP ", " ON COMMIT DROP")
                } else {
                    ("", "")
                };
                let exists = if *if_not_exists { "IF NOT EXISTS " } else { "" };
                vec![format!(
                    "CREATE {temp}TABLE {exists}{table} ({columns}){on_commit}"
                )]
            }
            Action::DropTable { table } => vec![format!("DROP TABLE {table}")],
            Action::AddColumns { table, columns } => vec![alter_table(
                table,
                &columns
                    .iter()
                    .map(|(name, ty)| format!("ADD COLUMN {} {ty}", quote_ident(name)))
                    .collect::<Vec<_>>()
                    .join(", "),
            )],
            Action::RenameColumn {
                relation,
                kind,
                from,
                to,
            } => vec![format!(
                "ALTER {} {relation} RENAME COLUMN {} TO {}",
                kind.keyword(),
                quote_ident(from),
                quote_ident(to)
            )],
            Action::SetNotNull { table, column } => vec![alter_table(
                table,
                &format!("ALTER COLUMN {} SET NOT NULL", quote_ident(column)),
            )],
            Action::DropNotNull { table, column } => vec![alter_table(
                table,
                &format!("ALTER COLUMN {} DROP NOT NULL", quote_ident(column)),
            )],
            Action::NameNotNull {
                table,
                column,
                name,
            } => vec![format!(
                "DO $uuidforge$ DECLARE n name; BEGIN SELECT conname INTO n FROM pg_constraint WHERE conrelid = {t}::regclass AND contype = 'n' AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = {t}::regclass AND attname = {col})]; IF n IS NOT NULL AND n <> {want} THEN EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', {t}, n, {want}); END IF; END $uuidforge$",
                t = quote_literal(table),
                col = quote_literal(column),
                want = quote_literal(name)
            )],
            Action::DropKeyDefault { table, column } => {
                let c = quote_ident(column);
                vec![
                    alter_table(table, &format!("ALTER COLUMN {c} DROP IDENTITY IF EXISTS")),
                    alter_table(table, &format!("ALTER COLUMN {c} DROP DEFAULT")),
                    format!(
                        "DO $uuidforge$ DECLARE s text := pg_get_serial_sequence({}, {}); BEGIN IF s IS NOT NULL THEN EXECUTE 'DROP SEQUENCE ' || s; END IF; END $uuidforge$",
                        quote_literal(table),
                        quote_literal(column)
                    ),
                ]
            }
            Action::SetDefault {
                table,
                column,
                expression,
            } => vec![alter_table(
                table,
                &format!(
                    "ALTER COLUMN {} SET DEFAULT {expression}",
                    quote_ident(column)
                ),
            )],
            Action::AddConstraint {
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
            Action::AddKeyUsingIndex {
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
            Action::DropConstraint { table, name } => vec![alter_table(
                table,
                &format!("DROP CONSTRAINT {}", quote_ident(name)),
            )],
            Action::ReplaceCheck {
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
            Action::ValidateConstraint { table, name } => vec![alter_table(
                table,
                &format!("VALIDATE CONSTRAINT {}", quote_ident(name)),
            )],
            Action::SetDeferrable {
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
            Action::RenameConstraint { table, from, to } => vec![alter_table(
                table,
                &format!(
                    "RENAME CONSTRAINT {} TO {}",
                    quote_ident(from),
                    quote_ident(to)
                ),
            )],
            Action::CreateIndex { definition } => vec![definition.clone()],
            Action::IndexOn {
                name,
                table,
                columns,
                unique,
                concurrently,
                if_not_exists,
            } => vec![format!(
                "CREATE {}INDEX {}{}{} ON {table} ({columns})",
                if *unique { "UNIQUE " } else { "" },
                if *concurrently { "CONCURRENTLY " } else { "" },
                if *if_not_exists { "IF NOT EXISTS " } else { "" },
                quote_ident(name)
            )],
            Action::CreateIndexConcurrently { index, definition } => vec![
                format!("DROP INDEX CONCURRENTLY IF EXISTS {index}"),
                definition.clone(),
            ],
            Action::DropIndex { index } => vec![format!("DROP INDEX {index}")],
            Action::RenameIndex { schema, from, to } => vec![format!(
                "ALTER INDEX {} RENAME TO {}",
                uuidforge_ident::qualified(schema, from),
                quote_ident(to)
            )],
            Action::NamePiece {
                parent,
                partition,
                name,
            } => vec![format!(
                "DO $uuidforge$ DECLARE piece regclass; BEGIN SELECT h.inhrelid::regclass INTO piece FROM pg_inherits h JOIN pg_index i ON i.indexrelid = h.inhrelid WHERE h.inhparent = {}::regclass AND i.indrelid = {}::regclass; IF piece IS NOT NULL AND (SELECT relname FROM pg_class WHERE oid = piece) <> {} THEN EXECUTE format('ALTER INDEX %s RENAME TO %I', piece, {}); END IF; END $uuidforge$",
                quote_literal(parent),
                quote_literal(partition),
                quote_literal(name),
                quote_literal(name)
            )],
            Action::DropView(view) => vec![view.drop_sql()],
            Action::CreateView { view, user } => view.create_sql(user),
            Action::RefreshView { view } => vec![format!("REFRESH MATERIALIZED VIEW {view}")],
            Action::SetTrigger {
                table,
                trigger,
                state,
            } => vec![alter_table(
                table,
                &format!("{state} TRIGGER {}", quote_ident(trigger)),
            )],
            Action::CreateTriggerFunction { function, body } => vec![format!(
                "CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ BEGIN {body}RETURN NEW; END $uuidforge$"
            )],
            Action::CreateRowTrigger {
                name,
                table,
                when,
                function,
            } => vec![format!(
                "CREATE TRIGGER {name} BEFORE INSERT OR UPDATE ON {table} FOR EACH ROW WHEN ({when}) EXECUTE FUNCTION {function}()"
            )],
            Action::DropTrigger { name, table } => vec![format!("DROP TRIGGER {name} ON {table}")],
            Action::DropFunction { function } => vec![format!("DROP FUNCTION {function}()")],
            Action::CreateSqlFunction {
                signature,
                returns,
                body,
            } => vec![format!(
                "CREATE OR REPLACE FUNCTION {signature} RETURNS {returns} AS $uuidforge$ {body} $uuidforge$"
            )],
            Action::Comment { on, text } => {
                vec![format!("COMMENT ON {on} IS {}", quote_literal(text))]
            }
            Action::Grant(grant) => vec![grant.sql()],
            Action::SetOwner {
                relation,
                kind,
                owner,
            } => vec![format!(
                "ALTER {} {relation} OWNER TO {}",
                kind.keyword(),
                quote_ident(owner)
            )],
            Action::Update {
                table,
                set,
                from,
                condition,
            } => vec![format!(
                "UPDATE {table} AS x SET {set}{} WHERE {condition}",
                from.as_ref().map_or_else(String::new, |f| format!(" FROM {f}"))
            )],
        }
    }

    /// What it locks on the relation it changes.
    pub fn locks(&self) -> Locks {
        match self {
            Action::SetConstraints(_)
            | Action::SetLocal { .. }
            | Action::CreateTable { .. }
            | Action::DropTable { .. }
            | Action::CreateTriggerFunction { .. }
            | Action::CreateSqlFunction { .. }
            | Action::Comment { .. }
            | Action::Grant(_) => Locks::Nothing,
            Action::ValidateConstraint { .. }
            | Action::CreateIndexConcurrently { .. }
            | Action::IndexOn {
                concurrently: true, ..
            } => Locks::ShareUpdateExclusive,
            // Writes to the rows filled wait; the rest of the table is
            // read and written.
            Action::Update { .. } => Locks::Nothing,
            Action::LockTable { mode, .. } if mode == "SHARE ROW EXCLUSIVE" => {
                Locks::ShareRowExclusive
            }
            Action::AddConstraint { definition, .. } if definition.starts_with("FOREIGN KEY") => {
                Locks::ShareRowExclusive
            }
            Action::CreateRowTrigger { .. } => Locks::ShareRowExclusive,
            _ => Locks::AccessExclusive,
        }
    }

    /// Whether it runs inside a transaction (an index built concurrently
    /// does not).
    pub fn transactional(&self) -> bool {
        !matches!(
            self,
            Action::CreateIndexConcurrently { .. }
                | Action::IndexOn {
                    concurrently: true,
                    ..
                }
        )
    }

    /// The action that undoes a rename (renames only: a script that
    /// undoes a change is made of them).
    pub fn undo(&self) -> Option<Action> {
        Some(match self {
            Action::RenameColumn {
                relation,
                kind,
                from,
                to,
            } => Action::RenameColumn {
                relation: relation.clone(),
                kind: *kind,
                from: to.clone(),
                to: from.clone(),
            },
            Action::RenameConstraint { table, from, to } => Action::RenameConstraint {
                table: table.clone(),
                from: to.clone(),
                to: from.clone(),
            },
            Action::RenameIndex { schema, from, to } => Action::RenameIndex {
                schema: schema.clone(),
                from: to.clone(),
                to: from.clone(),
            },
            _ => return None,
        })
    }
}

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

fn alter_table(table: &str, what: &str) -> String {
    format!("ALTER TABLE {table} {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statement_kind_quotes_names_and_says_its_lock() {
        let t = "\"s\".\"t\"".to_string();
        let add = Action::AddColumns {
            table: t.clone(),
            columns: vec![("a\"b".into(), "uuid".into()), ("c".into(), "text".into())],
        };
        assert_eq!(
            add.statements(),
            ["ALTER TABLE \"s\".\"t\" ADD COLUMN \"a\"\"b\" uuid, ADD COLUMN \"c\" text"]
        );
        assert!(add.locks().blocks_writers());
        let validate = Action::ValidateConstraint {
            table: t.clone(),
            name: "fk".into(),
        };
        assert!(!validate.locks().blocks_writers());
        let fk = Action::AddConstraint {
            table: t.clone(),
            name: "fk".into(),
            definition: "FOREIGN KEY (a) REFERENCES p (id)".into(),
            not_valid: true,
        };
        assert_eq!(fk.locks(), Locks::ShareRowExclusive);
        assert!(fk.statements()[0].ends_with(" NOT VALID"));
        let build = Action::CreateIndexConcurrently {
            index: "\"s\".\"i\"".into(),
            definition: "CREATE INDEX CONCURRENTLY \"i\" ON \"s\".\"t\" (a)".into(),
        };
        assert!(!build.transactional());
        assert_eq!(
            build.statements()[0],
            "DROP INDEX CONCURRENTLY IF EXISTS \"s\".\"i\""
        );
    }

    #[test]
    fn renames_undo_themselves() {
        let rename = Action::RenameIndex {
            schema: "s".into(),
            from: "old\"x".into(),
            to: "new".into(),
        };
        let undo = rename.undo().unwrap();
        assert_eq!(
            undo.statements(),
            ["ALTER INDEX \"s\".\"new\" RENAME TO \"old\"\"x\""]
        );
        let column = Action::RenameColumn {
            relation: "\"s\".\"v\"".into(),
            kind: RelationKind::View,
            from: "a".into(),
            to: "b".into(),
        };
        assert_eq!(
            column.undo().unwrap().statements(),
            ["ALTER VIEW \"s\".\"v\" RENAME COLUMN \"b\" TO \"a\""]
        );
        assert_eq!(Action::DropTable { table: t() }.undo(), None);
    }

    fn t() -> String {
        "\"s\".\"t\"".into()
    }
}

//! Tables and their columns: the key map made and dropped, columns added
//! and renamed, NOT NULL set, dropped and named, a key's default and
//! sequence dropped, a default set, rows filled.

use super::{alter_table, Locks, RelationKind};
use uuidforge_ident::{quote_ident, quote_literal};

/// Tables and their columns: made, dropped, added, renamed, NOT NULL, defaults, rows filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Table {
    /// A table made: `columns` is its column list as SQL. A temporary one
    /// is dropped at commit.
    Create {
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
    Drop {
        /// The table.
        table: String,
    },
    /// `ALTER TABLE … DROP COLUMN`, without `CASCADE`: it fails if
    /// anything still depends on the column.
    DropColumn {
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// `ALTER TABLE … ADD COLUMN` of a column as its definition says
    /// (`name type GENERATED ALWAYS AS (…) STORED`).
    AddColumnDefinition {
        /// The table.
        table: String,
        /// The column's definition.
        definition: String,
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
    /// `ALTER COLUMN … DROP DEFAULT`.
    DropDefault {
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// `REPLICA IDENTITY …`: what logical replication identifies a
    /// published table's updated rows by.
    ReplicaIdentity {
        /// The table.
        table: String,
        /// `FULL`, `DEFAULT`, `NOTHING` or `USING INDEX name` (quoted).
        identity: String,
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

impl Table {
    /// Its SQL, one statement per element.
    pub fn statements(&self) -> Vec<String> {
        match self {
            Table::Create {
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
            },
            Table::Drop { table } => vec![format!("DROP TABLE {table}")],
            Table::DropColumn { table, column } => {
                vec![alter_table(table, &format!("DROP COLUMN {}", quote_ident(column)))]
            }
            Table::AddColumnDefinition { table, definition } => {
                vec![alter_table(table, &format!("ADD COLUMN {definition}"))]
            }
            Table::AddColumns { table, columns } => vec![alter_table(
                table,
                &columns
                    .iter()
                    .map(|(name, ty)| format!("ADD COLUMN {} {ty}", quote_ident(name)))
                    .collect::<Vec<_>>()
                    .join(", "),
            )],
            Table::RenameColumn {
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
            Table::SetNotNull { table, column } => vec![alter_table(
                table,
                &format!("ALTER COLUMN {} SET NOT NULL", quote_ident(column)),
            )],
            Table::DropNotNull { table, column } => vec![alter_table(
                table,
                &format!("ALTER COLUMN {} DROP NOT NULL", quote_ident(column)),
            )],
            Table::NameNotNull {
                table,
                column,
                name,
            } => vec![format!(
                "DO $uuidforge$ DECLARE n name; BEGIN SELECT conname INTO n FROM pg_constraint WHERE conrelid = {t}::regclass AND contype = 'n' AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = {t}::regclass AND attname = {col})]; IF n IS NOT NULL AND n <> {want} THEN EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', {t}, n, {want}); END IF; END $uuidforge$",
                t = quote_literal(table),
                col = quote_literal(column),
                want = quote_literal(name)
            )],
            Table::DropKeyDefault { table, column } => {
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
            },
            Table::SetDefault {
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
            Table::DropDefault { table, column } => vec![alter_table(
                table,
                &format!("ALTER COLUMN {} DROP DEFAULT", quote_ident(column)),
            )],
            Table::ReplicaIdentity { table, identity } => {
                vec![alter_table(table, &format!("REPLICA IDENTITY {identity}"))]
            }
            Table::Update {
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

    /// What it locks.
    pub fn locks(&self) -> Locks {
        match self {
            // A new table, or one the change made itself (its key map):
            // nobody else waits on it.
            Table::Create { .. } | Table::Drop { .. } => Locks::Nothing,
            // Writes to the rows filled wait; the rest of the table is
            // read and written.
            Table::Update { .. } => Locks::Nothing,
            _ => Locks::AccessExclusive,
        }
    }

    /// The rename undoing a column rename.
    pub fn undo(&self) -> Option<Table> {
        match self {
            Table::RenameColumn {
                relation,
                kind,
                from,
                to,
            } => Some(Table::RenameColumn {
                relation: relation.clone(),
                kind: *kind,
                from: to.clone(),
                to: from.clone(),
            }),
            _ => None,
        }
    }
}

//! Indexes: made from a definition PostgreSQL wrote, made over columns,
//! built concurrently (outside any transaction, after dropping what a
//! killed earlier build left), dropped, renamed, a partition's piece given
//! back its name.

use super::Locks;
use uuidforge_ident::{quote_ident, quote_literal};

/// Indexes: from a definition, over columns, built concurrently, dropped, renamed, a partition's piece named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Index {
    /// An index as its definition says (`pg_get_indexdef`, or one made
    /// over other columns).
    Create {
        /// The whole `CREATE INDEX` statement.
        definition: String,
    },
    /// An index we make over columns (names, quoted, comma-separated).
    On {
        /// Its name.
        name: String,
        /// The table.
        table: String,
        /// The columns.
        columns: String,
        /// `UNIQUE`.
        unique: bool,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
    },
    /// An index built without blocking writers, outside any transaction
    /// (`CREATE … INDEX CONCURRENTLY`); what a killed earlier build left of
    /// `index` is dropped first.
    Concurrently {
        /// The index (qualified), for the cleanup.
        index: String,
        /// What is built.
        build: Build,
    },
    /// `DROP INDEX`.
    Drop {
        /// The index (qualified).
        index: String,
    },
    /// `ALTER INDEX … RENAME TO`.
    Rename {
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
}

/// An index built concurrently ([`Index::Concurrently`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Build {
    /// Over columns (names, quoted, comma-separated).
    Columns {
        /// Its name.
        name: String,
        /// The table.
        table: String,
        /// The columns.
        columns: String,
        /// `UNIQUE`.
        unique: bool,
    },
    /// As a definition PostgreSQL wrote says, under another name
    /// ([`crate::ops`]' key migration makes it over the new columns).
    Definition {
        /// Its name.
        name: String,
        /// `UNIQUE`.
        unique: bool,
        /// What follows the name: ` ON table USING method (…) …`.
        rest: String,
    },
}

impl Build {
    fn statement(&self) -> String {
        let unique = |u: bool| if u { "UNIQUE " } else { "" };
        match self {
            Build::Columns {
                name,
                table,
                columns,
                unique: u,
            } => format!(
                "CREATE {}INDEX CONCURRENTLY {} ON {table} ({columns})",
                unique(*u),
                quote_ident(name)
            ),
            Build::Definition {
                name,
                unique: u,
                rest,
            } => format!(
                "CREATE {}INDEX CONCURRENTLY {}{rest}",
                unique(*u),
                quote_ident(name)
            ),
        }
    }
}

impl Index {
    /// Its SQL, one statement per element.
    pub fn statements(&self) -> Vec<String> {
        match self {
            Index::Create { definition } => vec![definition.clone()],
            Index::On {
                name,
                table,
                columns,
                unique,
                if_not_exists,
            } => vec![format!(
                "CREATE {}INDEX {}{} ON {table} ({columns})",
                if *unique { "UNIQUE " } else { "" },
                if *if_not_exists { "IF NOT EXISTS " } else { "" },
                quote_ident(name)
            )],
            Index::Concurrently { index, build } => vec![
                format!("DROP INDEX CONCURRENTLY IF EXISTS {index}"),
                build.statement(),
            ],
            Index::Drop { index } => vec![format!("DROP INDEX {index}")],
            Index::Rename { schema, from, to } => vec![format!(
                "ALTER INDEX {} RENAME TO {}",
                uuidforge_ident::qualified(schema, from),
                quote_ident(to)
            )],
            Index::NamePiece {
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
        }
    }

    /// What it locks.
    pub fn locks(&self) -> Locks {
        match self {
            Index::Concurrently { .. } => Locks::ShareUpdateExclusive,
            // The table's writes wait, its reads go on.
            Index::Create { .. } | Index::On { .. } => Locks::ShareRowExclusive,
            _ => Locks::AccessExclusive,
        }
    }

    /// Whether it runs inside a transaction (a concurrent build does not).
    pub fn transactional(&self) -> bool {
        !matches!(self, Index::Concurrently { .. })
    }

    /// The rename undoing an index rename.
    pub fn undo(&self) -> Option<Index> {
        match self {
            Index::Rename { schema, from, to } => Some(Index::Rename {
                schema: schema.clone(),
                from: to.clone(),
                to: from.clone(),
            }),
            _ => None,
        }
    }
}

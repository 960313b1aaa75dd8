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
    /// A key map filled at once given its keys: `old` the primary key,
    /// `new` unique.
    IndexMap {
        /// The key map.
        map: String,
    },
    /// The key map made readable by a rewrite's `USING` expressions
    /// ([`MapLookup`]): its functions, and for an integer key the array
    /// of its new keys.
    MapLookup {
        /// The names.
        names: MapLookup,
        /// The key map.
        map: String,
        /// Whether the old keys are integers (an array indexed by them
        /// may hold the map).
        integers: bool,
    },
    /// Those functions dropped.
    DropMapLookup {
        /// The names.
        names: MapLookup,
        /// Whether the old keys are integers.
        integers: bool,
    },
    /// `ALTER TABLE … ALTER COLUMN … TYPE … USING …` of several columns in
    /// one statement: the table written once, every `USING` reading the
    /// row as it was before the statement (its indexes built again once,
    /// after).
    Rewrite {
        /// The table.
        table: String,
        /// Each column as it becomes.
        columns: Vec<Rewritten>,
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

/// How a rewrite reads the key map: temporary functions that say they are
/// immutable, so that the server evaluates each once per statement that
/// calls it (when it plans the statement), not once per row — true here:
/// the map is complete before, and unchanged during, every statement that
/// calls them, all of them the change's own, in its transaction.
///
/// - `object()`: the map as one JSON object (old key as text → new key);
///   a lookup is a binary search of its keys;
/// - for integer keys, `array()`: the new keys in an array indexed by the
///   old key less `first()` (one array element read per row), made once
///   into the temporary table `dense` when the keys are dense enough
///   (their range at most four times their number and at most 2^24, so
///   the array is at most 256 MiB), the object then empty; else the array
///   and `first()` are NULL and the object serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapLookup {
    /// The function returning the map as a JSON object.
    pub object: &'static str,
    /// The function returning the array of new keys.
    pub array: &'static str,
    /// The function returning the first old key of the array, or NULL.
    pub first: &'static str,
    /// The temporary table holding the array.
    pub dense: &'static str,
}

/// The nil UUID, where an integer between two old keys is no key.
const NIL: &str = "'00000000-0000-0000-0000-000000000000'::uuid";

impl MapLookup {
    /// The new key of the old key `old` (SQL over a row), NULL for none;
    /// `integer` (SQL) is `old` as an integer when the keys are integers.
    pub fn new_key(&self, old_text: &str, integer: Option<&str>) -> String {
        let object = format!("({}() ->> {old_text})::uuid", self.object);
        match integer {
            None => object,
            // Not a CASE over `first()`: PostgreSQL 15 fails on a CASE
            // folded to one branch in a partitioned table's `USING`. With
            // the array, the object is empty; without, the array is NULL.
            Some(i) => format!(
                "coalesce(({array}())[least(greatest({i} - {first}() + 1, 0), 2147483647)::int4], {object})",
                first = self.first,
                array = self.array
            ),
        }
    }

    fn statements(&self, map: &str, integers: bool) -> Vec<String> {
        let mut out = Vec::new();
        let function = |name: &str, returns: &str, body: String| {
            format!(
                "CREATE FUNCTION {name}() RETURNS {returns} LANGUAGE sql IMMUTABLE AS $uuidforge$ {body} $uuidforge$"
            )
        };
        if integers {
            out.push(format!(
                "CREATE TEMP TABLE {dense} ON COMMIT DROP AS SELECT CASE WHEN b.dense THEN b.first END AS first, CASE WHEN b.dense AND b.n = b.last - b.first + 1 THEN (SELECT array_agg(m.new ORDER BY m.old::int8) FROM {map} m) WHEN b.dense THEN (SELECT array_agg(coalesce(m.new, {NIL}) ORDER BY g) FROM generate_series(b.first, b.last) g LEFT JOIN {map} m ON m.old::int8 = g) END AS keys FROM (SELECT min(m.old::int8) AS first, max(m.old::int8) AS last, count(*) AS n, coalesce(max(m.old::int8) - min(m.old::int8) + 1 <= least(greatest(4 * count(*), 1024), 16777216), false) AS dense FROM {map} m) b",
                dense = self.dense
            ));
            out.push(function(
                self.first,
                "int8",
                format!("SELECT d.first FROM {} d", self.dense),
            ));
            out.push(function(
                self.array,
                "uuid[]",
                format!("SELECT d.keys FROM {} d", self.dense),
            ));
        }
        // With the array, the object is empty (a lookup there finds what
        // the array does not: nothing).
        let unless_dense = if integers {
            format!(
                " WHERE NOT EXISTS (SELECT FROM {} d WHERE d.keys IS NOT NULL)",
                self.dense
            )
        } else {
            String::new()
        };
        out.push(function(
            self.object,
            "jsonb",
            format!("SELECT coalesce(jsonb_object_agg(m.old, m.new), '{{}}') FROM {map} m{unless_dense}"),
        ));
        out
    }

    fn drops(&self, integers: bool) -> Vec<String> {
        let mut names = vec![self.object];
        if integers {
            names.extend([self.first, self.array]);
        }
        names
            .iter()
            .map(|n| format!("DROP FUNCTION {n}()"))
            .collect()
    }
}

/// A column of a [`Table::Rewrite`]: its type after, and its value from
/// the row before (SQL over the row's columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// The column.
    pub column: String,
    /// Its type after.
    pub type_name: String,
    /// Its value, from the row as it was.
    pub using: String,
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
            Table::IndexMap { map } => vec![format!(
                "ALTER TABLE {map} ADD PRIMARY KEY (old), ADD UNIQUE (new)"
            )],
            Table::MapLookup {
                names,
                map,
                integers,
            } => names.statements(map, *integers),
            Table::DropMapLookup { names, integers } => names.drops(*integers),
            Table::Rewrite { table, columns } => vec![alter_table(
                table,
                &columns
                    .iter()
                    .map(|c| {
                        format!(
                            "ALTER COLUMN {} TYPE {} USING {}",
                            quote_ident(&c.column),
                            c.type_name,
                            c.using
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            )],
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
            Table::Create { .. }
            | Table::Drop { .. }
            | Table::IndexMap { .. }
            | Table::MapLookup { .. }
            | Table::DropMapLookup { .. } => Locks::Nothing,
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

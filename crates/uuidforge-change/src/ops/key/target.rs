//! What a key migration is asked to do, checked before anything is read:
//! the table's key and where its old values go, every reference (declared,
//! on partitions, named as references), the columns named as copies, left
//! or computed again, the generator of the new key's default.

use super::values::{self, Becomes};
use super::{by_column, old_column, references_to, Key, Reference};
use uuidforge_db::catalog::{Column, RelKind, Relation, Snapshot};
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_db::generators::Generator;

/// What to migrate.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MigrateOptions {
    /// A column whose time orders the new keys (`created_at`); without it,
    /// the old key order.
    pub order_by: Option<String>,
    /// The name kept for the old values (default `<key>_old`).
    pub keep_old: Option<String>,
    /// The key column of a primary key of several columns (`id` of
    /// `(id, created_at)` on a partitioned table).
    pub column: Option<String>,
    /// Columns (`TABLE.COLUMN`) holding the key's values without a foreign
    /// key: migrated as references (no foreign key made for them).
    pub also: Vec<String>,
    /// Columns (`TABLE.COLUMN`) named for the key without a foreign key
    /// that hold other values than the key's: left as they are.
    pub leave: Vec<String>,
    /// Give the new key no default (the application makes the keys), even
    /// where no generator is installed.
    pub no_default: bool,
    /// Where copies of a uuid key are looked for (`--copies-in`), or not
    /// at all (`--no-copy-search`).
    #[serde(default)]
    pub copy_search: super::kinds::copies::CopySearch,
    /// Generated columns (`TABLE.COLUMN`) over a changed column to compute
    /// again over the new one (their values change).
    #[serde(default)]
    pub regenerate: Vec<String>,
    /// The new keys as another database gave them (`--keys-from`), in
    /// place of computed ones.
    #[serde(skip)]
    pub given_keys: Option<crate::action::GivenKeys>,
    /// Only a plan is asked for (no `--apply`): a database without a
    /// generator for the new key's default is a warning in the plan, not a
    /// refusal (`--apply` still refuses it).
    #[serde(default)]
    pub plan_only: bool,
    /// In batches, as an online copy into shadow tables (each table
    /// written once) rather than by updates in place.
    #[serde(default)]
    pub copy: bool,
    /// The sessions an online copy runs its tables' copies, index builds
    /// and validations on side by side.
    #[serde(default)]
    pub jobs: Jobs,
}

/// How many sessions an online copy runs side by side (as pg_repack's
/// `--jobs`): two unless told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Jobs(pub u32);

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs(2)
    }
}

/// Key types a migration reads.
fn key_type_supported(type_name: &str) -> bool {
    ["smallint", "integer", "bigint", "text", "uuid", "character"].contains(&type_name)
        || type_name.starts_with("character varying")
        || type_name.starts_with("character(")
}

/// The column an option (`--also`, `--leave`) names: `TABLE.COLUMN` or
/// `SCHEMA.TABLE.COLUMN`, read as psql reads names; errors name the option.
fn column_option<'a>(
    snapshot: &'a Snapshot,
    option: &str,
    spec: &str,
) -> Result<(&'a Relation, &'a Column), DbError> {
    let uuidforge_db::related::Target::Column(c) =
        uuidforge_db::related::Target::parse_column(snapshot, spec)
            .map_err(|e| e.within(option))?
    else {
        unreachable!("parse_column returns a column");
    };
    snapshot
        .relation(c.relation)
        .and_then(|r| Some((r, r.column(c.column)?)))
        .ok_or_else(|| DbError::not_found(option, format!("'{spec}' is not in the catalog")))
}

/// A key migration's target before anything is read: the key, the names
/// it makes, every reference.
pub struct Target<'a> {
    /// The catalog.
    pub snapshot: &'a Snapshot,
    /// The key.
    pub key: Key<'a>,
    /// Where the old key values are kept.
    pub old_name: String,
    /// The column whose time orders the new keys.
    pub order_column: Option<String>,
    /// Every reference: declared foreign keys (on the referencing tables
    /// or their partitions), then the columns of `--also`.
    pub references: Vec<Reference<'a>>,
    /// The columns of `--leave`, (table, column).
    pub left: Vec<(u32, i16)>,
    /// The generated columns of `--regenerate`, (table, column).
    pub regenerate: Vec<(u32, i16)>,
    /// A uuid key's copies `--also` names (rewritten in place), (table,
    /// column).
    pub copies: Vec<(u32, i16)>,
    /// Where copies of a uuid key are looked for.
    pub copy_search: super::kinds::copies::CopySearch,
    /// What the new key's default calls (none with `--no-default`).
    pub generator: Option<Generator>,
    /// Why there is no generator when the plan alone is asked for and the
    /// database has none: what applying it would refuse, and the ways out.
    pub missing_generator: Option<Box<Refusal>>,
    /// The new keys as another database gave them (`--keys-from`).
    pub given_keys: Option<crate::action::GivenKeys>,
}

impl<'a> Target<'a> {
    /// Reads and checks the target. Errors name the argument, the value
    /// and what was expected.
    pub fn new(
        snapshot: &'a Snapshot,
        table: &str,
        options: &MigrateOptions,
    ) -> Result<Target<'a>, DbError> {
        let relation = snapshot.find_relation(table)?;
        if !matches!(relation.kind, RelKind::Table | RelKind::PartitionedTable)
            || relation.is_partition
        {
            return Err(DbError::refusal(
                "table",
                Refusal::new(
                    Reason::NotATable,
                    format!(
                        "{} is a {} (expected a table or a partitioned table; a partition is migrated with its table)",
                        relation.display_name(),
                        if relation.is_partition { "partition" } else { relation.kind.name() }
                    ),
                ),
            ));
        }
        refuse_foreign_partitions(snapshot, relation)?;
        let key = Key::find(snapshot, relation, options.column.as_deref())?;
        if !key_type_supported(&key.column.type_name) {
            return Err(DbError::refusal(
                "table",
                Refusal::new(
                    Reason::KeyType,
                    format!(
                        "key {}.{} is {} (expected smallint, integer, bigint, text, varchar, char or uuid)",
                        relation.display_name(),
                        key.column.name,
                        key.column.type_name
                    ),
                ),
            ));
        }
        let (old_name, order_column) = names_of(relation, key.column, options)?;
        let mut references = references_to(snapshot, &key)?;
        // A uuid key's `--also` columns are copies, rewritten in place
        // (their other values stay); another key's are references.
        let (copy_specs, also_specs): (Vec<String>, Vec<String>) = if key.column.type_name == "uuid"
        {
            (options.also.clone(), Vec::new())
        } else {
            (Vec::new(), options.also.clone())
        };
        references.extend(also(snapshot, &key, &references, &also_specs)?);
        let copies = copies_of(snapshot, &key, &references, &copy_specs)?;
        let left = options
            .leave
            .iter()
            .map(|spec| column_option(snapshot, "leave", spec).map(|(r, c)| (r.oid, c.num)))
            .collect::<Result<Vec<_>, _>>()?;
        let regenerate = options
            .regenerate
            .iter()
            .map(|spec| column_option(snapshot, "regenerate", spec).map(|(r, c)| (r.oid, c.num)))
            .collect::<Result<Vec<_>, _>>()?;
        let (generator, missing_generator) =
            match uuidforge_db::generators::for_new_key(snapshot, options.no_default) {
                Ok(g) => (g, None),
                Err(e) if options.plan_only && e.context == "default" => (None, e.refusal),
                Err(e) => return Err(e),
            };
        let target = Target {
            snapshot,
            key,
            old_name,
            order_column,
            references,
            left,
            regenerate,
            copies,
            copy_search: options.copy_search.clone(),
            generator,
            missing_generator,
            given_keys: options.given_keys.clone(),
        };
        for r in by_column(&target.references) {
            let kept = old_column(&r.column.name);
            if r.table.column_named(&kept).is_some() {
                return Err(DbError::refusal(
                    "table",
                    Refusal::new(
                        Reason::NameTaken,
                        format!(
                            "{} already has a column '{kept}' (expected it free for the old references)",
                            r.table.display_name()
                        ),
                    ),
                ));
            }
        }
        Ok(target)
    }

    /// The key column and the reference columns, (table, column number),
    /// each once: what the migration changes.
    pub fn watched(&self) -> Vec<(u32, i16)> {
        let mut watched = vec![(self.key.table.oid, self.key.column.num)];
        for r in by_column(&self.references) {
            watched.push((r.table.oid, r.column.num));
        }
        watched
    }

    /// The columns whose type becomes uuid (a text reference keeps its
    /// own).
    pub fn to_uuid(&self) -> Vec<(u32, i16)> {
        let mut out = vec![(self.key.table.oid, self.key.column.num)];
        for r in by_column(&self.references) {
            if self.becomes(r) == Becomes::Uuid {
                out.push((r.table.oid, r.column.num));
            }
        }
        out
    }

    /// How reference `r` moves.
    pub fn becomes(&self, r: &Reference) -> Becomes {
        values::becomes(self.snapshot, &self.key, r.column)
    }

    /// The tables written, each once: the table, then its referencing
    /// tables.
    pub fn written(&self) -> Vec<&'a Relation> {
        let mut tables = vec![self.key.table];
        for r in &self.references {
            if !tables.iter().any(|t| t.oid == r.table.oid) {
                tables.push(r.table);
            }
        }
        for (oid, _) in &self.copies {
            if let Some(r) = self.snapshot.relation(*oid) {
                if !tables.iter().any(|t| t.oid == r.oid) {
                    tables.push(r);
                }
            }
        }
        tables
    }

    /// The columns named not to be references (`--leave`) or to be copies
    /// (`--also` of a uuid key): the rule for columns named for the key
    /// leaves them be.
    pub fn named(&self) -> Vec<(u32, i16)> {
        self.left.iter().chain(&self.copies).copied().collect()
    }
}

/// The columns named with `--also`, as references without a foreign key.
/// A partitioned table whose tree holds foreign tables (postgres_fdw
/// shards) is refused, naming them: their rows live on other servers, where
/// this server's transaction, locks and checks do not reach.
fn refuse_foreign_partitions(snapshot: &Snapshot, table: &Relation) -> Result<(), DbError> {
    let foreign: Vec<String> = snapshot
        .relations
        .iter()
        .filter(|r| r.kind == RelKind::ForeignTable && r.is_partition)
        .filter(|r| {
            snapshot
                .partition_root(r.oid)
                .is_some_and(|root| root.oid == table.oid)
        })
        .map(|r| r.display_name())
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    Err(DbError::refusal(
        "table",
        Refusal::new(
            Reason::ElsewhereRows,
            format!(
                "{} has partitions that are foreign tables ({}): their rows live on other \
                 servers, out of reach of one transaction here (expected local partitions only)",
                table.display_name(),
                foreign.join(", ")
            ),
        )
        .way_out(WayOut::AcrossFleet { sharded: true }),
    ))
}

/// The column an `--also` names, checked: not a foreign table's (its rows
/// live on another server), not the key, not a reference migrated already
/// (among `declared`, as (table, column) pairs).
fn also_column<'a>(
    snapshot: &'a Snapshot,
    key: &Key,
    declared: &[(u32, i16)],
    spec: &str,
) -> Result<(&'a Relation, &'a Column), DbError> {
    let (holder, column) = column_option(snapshot, "also", spec)?;
    if holder.kind == RelKind::ForeignTable {
        return Err(DbError::refusal(
            "also",
            Refusal::new(
                Reason::ElsewhereRows,
                format!(
                    "{} is a foreign table: its rows live on another server, which one \
                     transaction here cannot change",
                    holder.display_name()
                ),
            )
            .way_out(WayOut::AcrossFleet { sharded: false }),
        ));
    }
    if declared.contains(&(holder.oid, column.num))
        || (holder.oid == key.table.oid && column.num == key.column.num)
    {
        return Err(DbError::invalid(
            "also",
            format!(
                "{}.{} is migrated already (a foreign key to the key, or the key)",
                holder.display_name(),
                column.name
            ),
        ));
    }
    Ok((holder, column))
}

/// The columns `--also` names for a uuid key: copies rewritten in place.
fn copies_of(
    snapshot: &Snapshot,
    key: &Key,
    declared: &[Reference],
    specs: &[String],
) -> Result<Vec<(u32, i16)>, DbError> {
    let declared: Vec<(u32, i16)> = declared
        .iter()
        .map(|r| (r.table.oid, r.column.num))
        .collect();
    specs
        .iter()
        .map(|spec| also_column(snapshot, key, &declared, spec).map(|(t, c)| (t.oid, c.num)))
        .collect()
}

fn also<'a>(
    snapshot: &'a Snapshot,
    key: &Key<'a>,
    declared: &[Reference<'a>],
    specs: &[String],
) -> Result<Vec<Reference<'a>>, DbError> {
    let mut out: Vec<Reference> = Vec::new();
    for spec in specs {
        let taken: Vec<(u32, i16)> = declared
            .iter()
            .chain(&out)
            .map(|r| (r.table.oid, r.column.num))
            .collect();
        let (holder, column) = also_column(snapshot, key, &taken, spec)?;
        if let Some(why) = values::cannot_refer(snapshot, key, column) {
            return Err(DbError::invalid(
                "also",
                format!("{}.{} is {why}", holder.display_name(), column.name),
            ));
        }
        out.push(Reference {
            table: holder,
            declared_on: holder,
            fk: None,
            column,
        });
    }
    Ok(out)
}

/// Where the old values go (`--keep-old`) and the column whose time
/// orders the new keys (`--order-by`).
fn names_of(
    relation: &Relation,
    key: &Column,
    options: &MigrateOptions,
) -> Result<(String, Option<String>), DbError> {
    // A name the user gives reads as psql reads it (unquoted folds).
    let old_name = match &options.keep_old {
        Some(text) => match &uuidforge_ident::parse_name(text)
            .map_err(|e| DbError::invalid("keep-old", e))?[..]
        {
            [one] => one.name.clone(),
            _ => {
                return Err(DbError::invalid(
                    "keep-old",
                    format!("'{text}' is not one column name"),
                ))
            }
        },
        None => old_column(&key.name),
    };
    if old_name.is_empty() || old_name.len() > 63 || relation.column_named(&old_name).is_some() {
        return Err(DbError::invalid(
            "keep-old",
            format!("'{old_name}' is taken or not a column name (expected a free name of 1 to 63 bytes)"),
        ));
    }
    let order_column = match &options.order_by {
        Some(name) => {
            let c = relation.find_column("order-by", name)?;
            if !(c.type_name.starts_with("timestamp") || c.type_name == "date") {
                return Err(DbError::invalid(
                    "order-by",
                    format!(
                        "{}.{name} is {} (expected timestamp, timestamptz or date)",
                        relation.display_name(),
                        c.type_name
                    ),
                ));
            }
            Some(c.name.clone())
        }
        None => None,
    };
    Ok((old_name, order_column))
}

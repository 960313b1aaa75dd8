//! A key migration, analysed: the table's key and where its old values go,
//! every reference (declared, on partitions, named with `--also`), the
//! views, constraints, indexes and triggers over them, each checked so that
//! what the migration cannot carry is refused before anything runs. Both
//! modes of `migrate-key` plan from one [`Migration`].

use super::dependents::{self, Dependents};
use super::values::{self, Becomes};
use super::{by_column, old_reference, references_to, Key, Reference};
use crate::ops::{Answers, Probe, Read};
use uuidforge_db::catalog::{Column, RelKind, Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::generators::Generator;
use uuidforge_db::introspect::Mention;
use uuidforge_db::introspect::{Partition, UserTrigger, ViewDefinition};
use uuidforge_ident::quote_ident;

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
    pub copy_search: super::copies::CopySearch,
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
    pub copy_search: super::copies::CopySearch,
    /// What the new key's default calls (none with `--no-default`).
    pub generator: Option<Generator>,
    /// Why there is no generator when the plan alone is asked for and the
    /// database has none: what `--apply` would refuse, and the way out.
    pub missing_generator: Option<String>,
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
            return Err(DbError::refused(
                "table",
                format!(
                    "{} is a {} (expected a table or a partitioned table; a partition is migrated with its table)",
                    relation.display_name(),
                    if relation.is_partition { "partition" } else { relation.kind.name() }
                ),
            ));
        }
        refuse_foreign_partitions(snapshot, relation)?;
        let key = Key::find(snapshot, relation, options.column.as_deref())?;
        if !key_type_supported(&key.column.type_name) {
            return Err(DbError::refused(
                "table",
                format!(
                    "key {}.{} is {} (expected smallint, integer, bigint, text, varchar, char or uuid)",
                    relation.display_name(),
                    key.column.name,
                    key.column.type_name
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
                Err(e) if options.plan_only && e.context == "default" => (
                    None,
                    Some(format!(
                        "{}; --apply refuses it: {}",
                        e.message,
                        e.hint.unwrap_or_default()
                    )),
                ),
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
        target.refuse_foreign_constraints()?;
        for r in by_column(&target.references) {
            let kept = old_reference(&r.column.name);
            if r.table.column_named(&kept).is_some() {
                return Err(DbError::refused(
                    "table",
                    format!(
                        "{} already has a column '{kept}' (expected it free for the old references)",
                        r.table.display_name()
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

    /// Another foreign key over a changed column (one referencing another
    /// table, or one referencing a reference) would be left on the old
    /// column: refused, named.
    fn refuse_foreign_constraints(&self) -> Result<(), DbError> {
        let watched = self.watched();
        let ours = |oid: u32, name: &str| {
            self.references
                .iter()
                .any(|r| r.fk.is_some_and(|fk| fk.table == oid && fk.name == name))
        };
        let changed = |table: u32, columns: &[i16]| {
            let root = self.snapshot.partition_root(table).map_or(table, |r| r.oid);
            let holder = self.snapshot.relation(table);
            columns.iter().any(|&n| {
                let name = holder.and_then(|h| h.column(n)).map(|c| c.name.as_str());
                watched.iter().any(|&(t, w)| {
                    (t == table && w == n)
                        || (t == root
                            && self
                                .snapshot
                                .relation(root)
                                .and_then(|r| r.column(w))
                                .map(|c| c.name.as_str())
                                == name)
                })
            })
        };
        for fk in self.snapshot.foreign_keys() {
            if ours(fk.table, &fk.name) {
                continue;
            }
            let from = changed(fk.table, &fk.columns);
            let to = changed(fk.ref_table, fk.ref_columns.as_deref().unwrap_or_default());
            if from || to {
                let holder = self
                    .snapshot
                    .relation(fk.table)
                    .map_or_else(String::new, |r| r.display_name());
                let other = self
                    .snapshot
                    .relation(fk.ref_table)
                    .map_or_else(String::new, |r| r.display_name());
                return Err(DbError::refused(
                    "table",
                    format!(
                        "foreign key {} of {holder} references {other} over a column the migration changes (a reference to a reference): it would stay on the old column; migrate {other}'s key first, or drop the foreign key",
                        fk.name
                    ),
                ));
            }
        }
        Ok(())
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
    Err(DbError::refused(
        "table",
        format!(
            "{} has partitions that are foreign tables ({}): their rows live on other \
             servers, out of reach of one transaction here (expected local partitions only; \
             migrate the tables behind them on their servers, together with --fleet FILE \
             migrate-key --sharded, and this server's own partitions apart)",
            table.display_name(),
            foreign.join(", ")
        ),
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
        return Err(DbError::refused(
            "also",
            format!(
                "{} is a foreign table: its rows live on another server, which one \
                 transaction here cannot change (migrate the table behind it there; \
                 a fleet's members together with --fleet)",
                holder.display_name()
            ),
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
        None => format!("{}_old", key.name),
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

/// A key migration with everything its planning pass read.
pub struct Migration<'a> {
    /// The target.
    pub target: Target<'a>,
    /// Views over the changed columns (and over those), made again.
    pub views: Vec<ViewDefinition>,
    /// The partitions of the partitioned tables written.
    pub partitions: Vec<Partition>,
    /// User triggers of the tables written, kept from firing on the
    /// migration's own writes.
    pub triggers: Vec<UserTrigger>,
    /// Functions and procedures using the changed columns, to review.
    pub functions: Vec<Mention>,
    /// What sits on the changed columns and moves with them (the table's
    /// primary key left out: the migration moves it itself).
    pub dependents: Dependents,
    /// Every index, constraint and column of the tables written as read
    /// when planning (JSON text of [`super::checks::objects_sql`]).
    pub objects: String,
    /// The tables and partitions written that a publication publishes.
    pub published: Vec<super::publications::Published>,
    /// The publications publishing them.
    pub publications: Vec<super::publications::Publication>,
    /// The plan's lines on old keys written in definitions, each made
    /// again with its new key.
    pub old_keys: Vec<String>,
    /// The plan's lines on generated columns computed again.
    pub regenerated: Vec<String>,
    /// Copies of a uuid key in other columns, as the plan found them.
    pub copies: super::copies::Copies,
    /// The references' defaults, given to their new columns.
    pub defaults: Vec<super::literals::ReferenceDefault>,
}

impl<'a> std::ops::Deref for Migration<'a> {
    type Target = Target<'a>;
    fn deref(&self) -> &Target<'a> {
        &self.target
    }
}

/// The reads of a migration's planning pass, given what it read so far:
/// views, dependents, partitions, triggers, functions, the objects, the
/// values of columns named for the key; then a probe per constraint or
/// index whose expressions use a column that becomes uuid.
pub fn reads(target: &Target, answers: &Answers) -> Result<Vec<Read>, DbError> {
    let watched = target.watched();
    let written = target.written();
    let oids: Vec<u32> = written.iter().map(|r| r.oid).collect();
    let parted: Vec<u32> = written
        .iter()
        .filter(|r| r.kind == RelKind::PartitionedTable)
        .map(|r| r.oid)
        .collect();
    let (columns, tables): (Vec<String>, Vec<String>) = names_used(target).into_iter().unzip();
    let named = values::named_for_key(
        target.snapshot,
        &target.key,
        &target.references,
        &target.named(),
    );
    let names: Vec<String> = written.iter().map(|r| r.sql_name()).collect();
    let mut reads = vec![
        Read::new(
            "views",
            "read the dependent views",
            uuidforge_db::introspect::dependent_views_query(&watched),
        ),
        dependents::read(&watched),
        Read::new(
            "partitions",
            "read the partitions",
            uuidforge_db::introspect::partitions_query(&parted),
        ),
        Read::new(
            "triggers",
            "read the triggers of the tables written",
            uuidforge_db::introspect::user_triggers_query(&oids),
        ),
        Read::new(
            "functions",
            "list the functions using the columns",
            uuidforge_db::introspect::functions_using_query(
                &columns,
                &tables,
                target.key.column.type_oid,
            ),
        ),
        Read::new(
            "objects",
            "read the indexes, constraints and columns of the tables written",
            uuidforge_db::plan::Query::new(super::checks::objects_sql(&names, &[])),
        ),
        values::read(target.snapshot, &target.key, &named),
        super::publications::read(&oids),
        super::publications::read_publications(&oids),
    ];
    reads.extend(
        super::copies::searched(target)
            .into_iter()
            .map(|(table, columns)| super::copies::read(target, table, &columns)),
    );
    if let Some(Generator::Extension { function, .. }) = &target.generator {
        // Whether the extension orders across sessions: it knows (a role
        // that is not a superuser may not read shared_preload_libraries).
        let schema = function.rsplit_once('.').map_or("", |(s, _)| s);
        reads.push(Read::new(
            SERVER_WIDE,
            "ask the extension whether its order is server-wide",
            uuidforge_db::plan::Query::new(format!(
                "SELECT {}.uuidv7_is_server_wide()::text",
                quote_ident(schema)
            )),
        ));
    }
    if let Some(mut found) = answers.get::<Dependents>("dependents", "dependents")? {
        // Probed as made again: old keys translated (what cannot be is
        // refused when the migration is made).
        let _ = super::literals::translate_all(target, &mut [], &mut found);
        reads.extend(probes(target, &found));
    }
    Ok(reads)
}

/// The read of whether the extension's `uuidv7()` is server-wide.
const SERVER_WIDE: &str = "extension_server_wide";

/// The columns the migration changes (the key, the references), each with
/// the name of a table holding it (a partition declaring a reference
/// included), as pairs: what a function using one would name together —
/// `id` alone would tie every function naming any table's `id`.
fn names_used(target: &Target) -> Vec<(String, String)> {
    let mut pairs = vec![(
        target.key.column.name.clone(),
        target.key.table.name.clone(),
    )];
    for r in &target.references {
        pairs.push((r.column.name.clone(), r.table.name.clone()));
        if r.on_partition() {
            pairs.push((r.column.name.clone(), r.declared_on.name.clone()));
        }
    }
    pairs.sort();
    pairs.dedup();
    pairs
}

/// The name of the probe of a dependent.
fn probe_name(kind: &str, oid: u32) -> String {
    format!("probe {kind} {oid}")
}

/// A probe per dependent whose expressions use a column that becomes
/// uuid.
fn probes(target: &Target, found: &Dependents) -> Vec<Read> {
    let to_uuid = target.to_uuid();
    let mut reads = Vec::new();
    let mut add = |kind: &str, oid: u32, table: u32, name: &str, exprs: Vec<&str>| {
        let changed = dependents::changed_in(target.snapshot, table, &to_uuid);
        let Some(relation) = target.snapshot.relation(table) else {
            return;
        };
        if exprs.is_empty() || changed.is_empty() {
            return;
        }
        let exprs: Vec<String> = exprs.into_iter().map(super::literals::probed).collect();
        let exprs: Vec<&str> = exprs.iter().map(String::as_str).collect();
        reads.push(dependents::probe(
            &probe_name(kind, oid),
            &format!("check that {kind} {name} still holds over uuid"),
            relation,
            &changed,
            &exprs,
        ));
    };
    for c in &found.constraints {
        add("constraint", c.oid, c.table, &c.name, c.expressions());
    }
    for i in &found.indexes {
        add("index", i.oid, i.table, &i.name, i.shape.expressions());
    }
    // A generated column asked to be computed again: its expression over
    // the new columns, and its rows counted.
    let mut counts = Vec::new();
    for o in &found.others {
        if let (Some((table, _)), Some(e)) = (o.generated_at(), &o.generated_expression) {
            if target
                .regenerate
                .contains(&o.generated_at().unwrap_or_default())
            {
                add(
                    "generated column",
                    o.oid,
                    table,
                    &o.description,
                    vec![e.as_str()],
                );
                if let Some(relation) = target.snapshot.relation(table) {
                    counts.push(Read::new(
                        format!("rows of generated column {}", o.oid),
                        format!("count the rows whose {} is computed again", o.description),
                        uuidforge_db::plan::Query::new(format!(
                            "SELECT count(*)::text FROM {}",
                            relation.sql_name()
                        )),
                    ));
                }
            }
        }
    }
    // A policy over its own table's columns only is typed now; one that
    // reads tables is typed when made again (over every changed column).
    for o in &found.others {
        if let (Some(table), Some(false), Some(exprs)) =
            (o.policy_table, o.policy_reads_tables, &o.policy_expressions)
        {
            let exprs: Vec<&str> = exprs.iter().flatten().map(String::as_str).collect();
            add("policy", o.oid, table, &o.description, exprs);
        }
    }
    // A trigger's WHEN, its row named new and old.
    for o in &found.others {
        if let (Some((table, _)), Some(condition)) = (&o.trigger_when, o.when_condition()) {
            let changed = dependents::changed_in(target.snapshot, *table, &to_uuid);
            if let (Some(relation), false) = (target.snapshot.relation(*table), changed.is_empty())
            {
                reads.push(dependents::probe_as(
                    &probe_name("trigger", o.oid),
                    &format!("check that {} still holds over uuid", o.description),
                    relation,
                    &changed,
                    &[&super::literals::probed(condition)],
                    &["new", "old"],
                ));
            }
        }
    }
    reads.extend(counts);
    reads
}

impl<'a> Migration<'a> {
    /// The migration of `target`, from the planning pass's answers;
    /// refused when a view, constraint or index over the changed columns
    /// cannot move, or a column holds the key's values unnamed.
    pub fn new(mut target: Target<'a>, answers: &Answers) -> Result<Migration<'a>, DbError> {
        if let Some(Generator::Extension { server_wide, .. }) = target.generator.as_mut() {
            if let Some(answer) = answers.text(SERVER_WIDE) {
                *server_wide = Some(answer == "true");
            }
        }
        let mut views: Vec<ViewDefinition> = answers.get_or_default("views", "dependent views")?;
        super::views::check(target.snapshot, &target.watched(), &views)?;
        let mut found: Dependents = answers.get_or_default("dependents", "dependents")?;
        let mut old_keys = super::literals::translate_all(&target, &mut views, &mut found)?;
        let (defaults, default_lines) = super::literals::reference_defaults(&target, &found)?;
        old_keys.extend(default_lines);
        // The table's own primary key moves with the key itself.
        found
            .constraints
            .retain(|c| !(c.table == target.key.table.oid && c.name == target.key.pk.name));
        refuse_uncarried(&target, &found, answers)?;
        for o in found
            .others
            .iter_mut()
            .filter(|o| o.kind == "policy" || o.kind == "trigger")
        {
            if let Some(Probe::Refused { message }) =
                answers.get::<Probe>(&probe_name(&o.kind, o.oid), "probe")?
            {
                o.carried = false;
                o.refused = Some(format!("over uuid the server refuses it: {message}"));
            }
        }
        let regenerated = regenerated(&target, &mut found, answers)?;
        found.refuse_others()?;
        let named = values::named_for_key(
            target.snapshot,
            &target.key,
            &target.references,
            &target.named(),
        );
        let counts: Vec<(i64, i64)> =
            answers.get_or_default("named_values", "values of columns named for the key")?;
        values::refuse_named_references(target.snapshot, &target.key, &named, &counts)?;
        let copies = super::copies::found(&target, answers)?;
        Ok(Migration {
            views,
            partitions: answers.get_or_default("partitions", "partitions")?,
            triggers: answers.get_or_default("triggers", "triggers")?,
            functions: answers.get_or_default("functions", "functions")?,
            dependents: found,
            objects: answers.text("objects").unwrap_or("{}").to_string(),
            published: answers.get_or_default("publications", "publications")?,
            publications: answers.get_or_default("publication_flags", "publications")?,
            old_keys,
            regenerated,
            copies,
            defaults,
            target,
        })
    }

    /// The partitions of partitioned table `oid`, as read.
    pub fn leaves(&self, oid: u32) -> Vec<&Partition> {
        self.partitions.iter().filter(|p| p.parent == oid).collect()
    }

    /// The type of reference `r`'s new column.
    pub fn new_type(&self, r: &Reference) -> String {
        match self.becomes(r) {
            Becomes::Uuid => "uuid".into(),
            Becomes::Text => r.column.type_name.clone(),
        }
    }
}

/// Marks the generated columns `--regenerate` names as carried (computed
/// again over the new columns), unless their expression does not hold
/// over uuid or something depends on them; refuses a `--regenerate` that
/// names no generated column over a changed column.
fn regenerated(
    target: &Target,
    found: &mut Dependents,
    answers: &Answers,
) -> Result<Vec<String>, DbError> {
    let mut lines = Vec::new();
    for asked in &target.regenerate {
        let Some(o) = found
            .others
            .iter_mut()
            .find(|o| o.generated_at() == Some(*asked))
        else {
            let name = target
                .snapshot
                .relation(asked.0)
                .and_then(|r| Some(format!("{}.{}", r.display_name(), r.column(asked.1)?.name)))
                .unwrap_or_default();
            return Err(DbError::invalid(
                "regenerate",
                format!(
                    "{name} (expected a generated column computed from the key or a reference)"
                ),
            ));
        };
        if let Some(Probe::Refused { message }) =
            answers.get::<Probe>(&probe_name("generated column", o.oid), "probe")?
        {
            o.refused = Some(format!("over uuid the server refuses it: {message}"));
        } else if !o.generated_users.is_empty() {
            o.refused = Some(format!(
                "{} depend on it, which would go with it",
                o.generated_users.join(", ")
            ));
        } else {
            o.carried = true;
            let rows = answers
                .text(&format!("rows of generated column {}", o.oid))
                .unwrap_or("?");
            lines.push(format!(
                "  {} ({}): computed again over the new column, its value changes in each of the table's {rows} rows",
                o.description,
                o.definition.as_deref().unwrap_or_default()
            ));
        }
    }
    Ok(lines)
}

/// Refuses a constraint or index over a column that becomes uuid that
/// would not hold there: an operator class of the old type, or an
/// expression the server refuses over uuid.
fn refuse_uncarried(target: &Target, found: &Dependents, answers: &Answers) -> Result<(), DbError> {
    let to_uuid = target.to_uuid();
    let table_name = |oid: u32| {
        target
            .snapshot
            .relation(oid)
            .map_or_else(String::new, |r| r.display_name())
    };
    let refuse = |what: String, why: String| {
        Err(DbError::refused(
            "table",
            format!(
                "{what} cannot move to the new uuid column: {why}; drop it first (and make it again over the new column after), or migrate without it"
            ),
        ))
    };
    for c in &found.constraints {
        let changed = dependents::changed_in(target.snapshot, c.table, &to_uuid);
        if let Some(why) = dependents::cannot_carry(
            answers,
            &probe_name("constraint", c.oid),
            &c.shape,
            &changed,
        )? {
            return refuse(
                format!(
                    "constraint {} of {} ({})",
                    c.name,
                    table_name(c.table),
                    c.definition
                ),
                why,
            );
        }
    }
    for i in &found.indexes {
        let changed = dependents::changed_in(target.snapshot, i.table, &to_uuid);
        if let Some(why) =
            dependents::cannot_carry(answers, &probe_name("index", i.oid), &i.shape, &changed)?
        {
            return refuse(
                format!("index {}.{} ({})", i.schema, i.name, i.definition),
                why,
            );
        }
    }
    Ok(())
}

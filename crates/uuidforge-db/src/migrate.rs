//! D1: migrate a table's primary key to UUIDv7, with every foreign key
//! that references it, in one transaction.
//!
//! The new keys are computed by the library (E8, [`uuidforge::generator::v7_from`],
//! keyed): from the `--order-by` column's time, or — without it — from
//! times synthesized one millisecond apart in the old key order, so the new
//! order equals the old one exactly. They reach the database as a
//! temporary map (old key as text → new UUID) and the plan runs:
//!
//! 1. a new `uuid` column on the table and on each referencing table,
//!    filled through the map;
//! 2. the referencing foreign keys and the primary key dropped, the
//!    identity or serial default dropped (its sequence too);
//! 3. `k` renamed `k_old` (kept, with a unique index), the new column
//!    renamed `k`; the same on each referencing column;
//! 4. `NOT NULL` and the primary key on the new column, the default
//!    `uuidv7()` when the extension is installed, single-column indexes of
//!    the referencing columns made again on the new columns, the foreign
//!    keys made again with their actions and deferrability;
//! 5. verification before commit ([`MigratePlan::verify_sql`]): row counts,
//!    1:1 old and new values, references resolved, order kept.

use crate::catalog::{Column, Constraint, Index, RelKind, Relation, Snapshot};
use crate::ident::{quote_ident, quote_literal};
use serde::Serialize;

/// What to migrate.
#[derive(Debug, Clone, Default)]
pub struct MigrateOptions {
    /// A column whose time orders the new keys (`created_at`); without it,
    /// the old key order.
    pub order_by: Option<String>,
    /// The name kept for the old values (default `<key>_old`).
    pub keep_old: Option<String>,
    /// The key column of a primary key of several columns (`id` of
    /// `(id, created_at)` on a partitioned table).
    pub column: Option<String>,
}

/// A referencing column to rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Reference {
    /// `schema.table`, quoted.
    pub table: String,
    /// The column.
    pub column: String,
    /// The foreign key.
    pub constraint: String,
}

/// The plan of a migration.
#[derive(Debug, Clone, Serialize)]
pub struct MigratePlan {
    /// `schema.table`, quoted.
    pub table: String,
    /// The key column.
    pub key: String,
    /// Its type before.
    pub key_type: String,
    /// Where the old values are kept.
    pub old_name: String,
    /// The referencing columns.
    pub references: Vec<Reference>,
    /// Reads the old keys in the new order: rows of (old key as text,
    /// Unix milliseconds or NULL).
    pub read_keys_sql: String,
    /// Creates the temporary map (`uuidforge_keymap (old text, new uuid)`),
    /// filled by COPY before `statements` run.
    pub map_sql: String,
    /// The statements, in order.
    pub statements: Vec<String>,
    /// Checks after the statements: one row of named counts that must all
    /// be zero, as JSON text.
    pub verify_sql: String,
    /// Row counts per table (JSON text), read before and after the
    /// statements: they must be equal.
    pub counts_sql: String,
    /// What the key's default becomes, for the report.
    pub default_note: String,
    /// Relations to back up (quoted qualified names).
    pub backup: Vec<String>,
}

/// Memory for the updates' joins and the index builds, for this
/// transaction only (`SET LOCAL`).
const WORK_MEM: &str = "256MB";
const MAINTENANCE_WORK_MEM: &str = "512MB";

/// Key types the migration reads.
const KEY_TYPES: [&str; 5] = ["smallint", "integer", "bigint", "text", "uuid"];

fn key_type_supported(type_name: &str) -> bool {
    KEY_TYPES.contains(&type_name)
        || type_name.starts_with("character varying")
        || type_name.starts_with("character(")
        || type_name == "character"
}

/// The foreign key `fk` made again from `columns` to `table (keys)`,
/// with its actions and deferrability.
pub(crate) fn fk_clause(
    fk: &Constraint,
    columns: &[String],
    table: &str,
    keys: &[String],
) -> String {
    let action = |code: &str| match code {
        "r" => "RESTRICT",
        "c" => "CASCADE",
        "n" => "SET NULL",
        "d" => "SET DEFAULT",
        _ => "NO ACTION",
    };
    let mut clause = format!(
        "FOREIGN KEY ({}) REFERENCES {table} ({}) ON UPDATE {} ON DELETE {}",
        names(columns),
        names(keys),
        action(&fk.on_update),
        action(&fk.on_delete)
    );
    if fk.deferrable {
        clause.push_str(if fk.deferred {
            " DEFERRABLE INITIALLY DEFERRED"
        } else {
            " DEFERRABLE INITIALLY IMMEDIATE"
        });
    }
    clause
}

/// What a migration changes, read from the catalog and checked: the
/// single-transaction and the batched plans are both made from it.
pub(crate) struct Target<'a> {
    /// The key's column number.
    pub key_num: i16,
    /// The primary key's columns, the key among them.
    pub pk_columns: Vec<String>,
    /// The key and reference columns, (table, column number).
    pub watched: Vec<(u32, i16)>,
    /// Views over them (and over those), made again after the change.
    pub views: Vec<ViewDefinition>,
    /// Indexes over the references, made again from their definitions.
    pub indexes: Vec<IndexDefinition>,
    pub relation: &'a Relation,
    pub key: &'a Column,
    pub pk: &'a Constraint,
    pub old_name: String,
    pub order_column: Option<String>,
    /// Referencing tables, their foreign key and column.
    pub children: Vec<(&'a Relation, &'a Constraint, String)>,
    /// A referencing table's primary key or unique constraints over the
    /// reference (they move to the new column).
    pub child_keys: Vec<(&'a Relation, &'a Constraint)>,
    /// Single-column plain btree indexes of a reference: (table, column,
    /// index).
    pub reference_indexes: Vec<(String, String, &'a Index)>,
    pub references: Vec<Reference>,
    pub default_note: String,
}

impl Target<'_> {
    /// The column of `fk` that references the key.
    pub fn reference_num(&self, fk: &Constraint) -> i16 {
        let at = fk
            .ref_columns
            .as_ref()
            .and_then(|r| r.iter().position(|&n| n == self.key_num))
            .unwrap_or(0);
        fk.columns[at]
    }

    /// `fk`'s other column pairs (a composite foreign key's columns beside
    /// the reference), as (referencing column, referenced column) names.
    pub fn other_pairs(&self, child: &Relation, fk: &Constraint) -> Vec<(String, String)> {
        let refs = fk.ref_columns.clone().unwrap_or_default();
        fk.columns
            .iter()
            .zip(&refs)
            .filter(|(_, &r)| r != self.key_num)
            .filter_map(|(&c, &r)| {
                Some((
                    child.column(c)?.name.clone(),
                    self.relation.column(r)?.name.clone(),
                ))
            })
            .collect()
    }

    /// ` AND p.a = x.b` for `fk`'s other column pairs.
    pub fn other_join(&self, child: &Relation, fk: &Constraint, x: &str, p: &str) -> String {
        self.other_pairs(child, fk)
            .iter()
            .map(|(c, r)| format!(" AND {p}.{} = {x}.{}", quote_ident(r), quote_ident(c)))
            .collect()
    }

    /// `fk` as a clause again, over the same column names.
    pub fn fk_clause(&self, child: &Relation, fk: &Constraint) -> String {
        let refs = fk.ref_columns.clone().unwrap_or_default();
        let columns: Vec<String> = fk
            .columns
            .iter()
            .filter_map(|&n| child.column(n).map(|c| c.name.clone()))
            .collect();
        let keys: Vec<String> = refs
            .iter()
            .filter_map(|&n| self.relation.column(n).map(|c| c.name.clone()))
            .collect();
        fk_clause(fk, &columns, &self.relation.sql_name(), &keys)
    }

    /// The primary key's columns with `key` in the key's place.
    pub fn pk_with(&self, key: &str) -> Vec<String> {
        self.pk_columns
            .iter()
            .map(|c| {
                if *c == self.key.name {
                    key.to_string()
                } else {
                    c.clone()
                }
            })
            .collect()
    }

    /// The relations a backup holds.
    pub fn backup(&self) -> Vec<String> {
        let mut backup = vec![self.relation.sql_name()];
        for r in &self.references {
            if !backup.contains(&r.table) {
                backup.push(r.table.clone());
            }
        }
        backup
    }

    /// Reads the old keys in the new order, (old key as text, Unix ms or
    /// NULL), of the rows `filter` (SQL over `x`) keeps.
    pub fn read_keys_sql(&self, filter: &str) -> String {
        let t = self.relation.sql_name();
        let k = quote_ident(&self.key.name);
        // Qualified in ORDER BY: a bare name would sort by the output column
        // of that name, the key as text (1, 10, 100, 2, …).
        match &self.order_column {
            Some(o) => format!(
                "SELECT x.{k}::text AS old_key, (extract(epoch FROM x.{o}) * 1000)::int8 AS unix_ms FROM {t} x{filter} ORDER BY x.{o}, x.{k}",
                o = quote_ident(o)
            ),
            None => format!(
                "SELECT x.{k}::text AS old_key, NULL::int8 AS unix_ms FROM {t} x{filter} ORDER BY x.{k}"
            ),
        }
    }

    /// The checks (a JSON object of counts that must all be zero) with the
    /// old values in `old`, the new ones in `new` (and each reference's
    /// `ref_old`/`ref_new` names from `names`), against the key map
    /// `map`. With `concurrent`, rows written by others during a batched
    /// migration (not in the map) are left out of the map and order checks.
    pub fn checks_sql(
        &self,
        old: &str,
        new: &str,
        reference_names: &dyn Fn(&str) -> (String, String),
        map: &str,
        concurrent: bool,
    ) -> String {
        let t = self.relation.sql_name();
        let (old, new) = (quote_ident(old), quote_ident(new));
        let mut checks = vec![
            format!("'rows without a new key', (SELECT count(*) FROM {t} WHERE {new} IS NULL)"),
            format!(
                "'new keys not 1:1 with old keys', (SELECT count(*) - count(DISTINCT {new}) + count({old}) - count(DISTINCT {old}) FROM {t})"
            ),
        ];
        if concurrent {
            checks.push(format!(
                "'new keys not from the map', (SELECT count(*) FROM {t} x JOIN {map} m ON m.old = x.{old}::text WHERE m.new <> x.{new})"
            ));
        } else {
            checks.push(format!(
                "'rows without their old key', (SELECT count(*) FROM {t} WHERE {old} IS NULL)"
            ));
            checks.push(format!(
                "'new keys not from the map', (SELECT count(*) FROM {t} x LEFT JOIN {map} m ON m.old = x.{old}::text WHERE m.new IS DISTINCT FROM x.{new})"
            ));
        }
        let mapped = if concurrent {
            format!(" JOIN {map} m ON m.old = x.{old}::text")
        } else {
            String::new()
        };
        checks.push(match &self.order_column {
            // The millisecond the key holds decides the order; rows of the
            // same millisecond may swap.
            Some(o) => format!(
                "'rows out of order', (SELECT count(*) FROM (SELECT {ms} < lag({ms}) OVER (ORDER BY x.{new}) AS inverted FROM {t} x{mapped}) o WHERE inverted)",
                ms = format!("(extract(epoch FROM x.{}) * 1000)::int8", quote_ident(o))
            ),
            None => format!(
                "'rows out of order', (SELECT count(*) FROM (SELECT x.{new} < lag(x.{new}) OVER (ORDER BY x.{old}) AS inverted FROM {t} x{mapped}) o WHERE inverted)"
            ),
        });
        for (child, fk, column) in &self.children {
            let ct = child.sql_name();
            let others = self.other_join(child, fk, "x", "p");
            let (c_old, c_new) = reference_names(column);
            let (c_old, c_new) = (quote_ident(&c_old), quote_ident(&c_new));
            // Rows others add during a batched migration have no old
            // reference to compare with (their foreign key checks them).
            let written_before = if concurrent {
                format!("x.{c_old} IS NOT NULL AND ")
            } else {
                String::new()
            };
            checks.push(format!(
                "{}, (SELECT count(*) FROM {ct} x LEFT JOIN {t} p ON p.{old} = x.{c_old}{others} WHERE {written_before}p.{new} IS DISTINCT FROM x.{c_new})",
                quote_literal(&format!("references of {}.{column} not rewritten", child.display_name()))
            ));
        }
        // Foreign keys made again are validated (in batches, after the
        // swap, by their own step).
        let fk_names: Vec<String> = self
            .children
            .iter()
            .map(|(_, fk, _)| quote_literal(&fk.name))
            .collect();
        let fk_tables: Vec<String> = self
            .children
            .iter()
            .map(|(child, _, _)| quote_literal(&child.sql_name()))
            .collect();
        if !fk_names.is_empty() {
            checks.push(format!(
                "'foreign keys not valid', (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conname = ANY (ARRAY[{}]) AND conrelid::regclass::text = ANY (ARRAY[{}]::text[]))",
                fk_names.join(", "),
                fk_tables.join(", ")
            ));
        }
        format!("SELECT json_build_object({})::text", checks.join(", "))
    }

    /// The row count of the table and of each referencing table, one row
    /// of JSON text: run before and after a migration in one transaction,
    /// the two must be equal.
    pub fn counts_sql(&self) -> String {
        let mut tables = vec![self.relation.sql_name()];
        for (child, _, _) in &self.children {
            if !tables.contains(&child.sql_name()) {
                tables.push(child.sql_name());
            }
        }
        let counts: Vec<String> = tables
            .iter()
            .map(|t| format!("{}, (SELECT count(*) FROM {t})", quote_literal(t)))
            .collect();
        format!("SELECT json_build_object({})::text", counts.join(", "))
    }
}

/// A view that depends on the migrated columns, as the catalog defines
/// it, to be dropped before the change and made again after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ViewDefinition {
    /// Its oid.
    pub oid: u32,
    /// Schema.
    pub schema: String,
    /// Name.
    pub name: String,
    /// `v` (view) or `m` (materialized view).
    pub kind: String,
    /// 1 for a view over the columns, 2 for a view over such a view, …
    pub level: i32,
    /// `pg_get_viewdef`.
    pub definition: String,
    /// `security_barrier=true`, `check_option=local`, …
    pub options: Option<Vec<String>>,
    /// Its owner.
    pub owner: String,
    /// `COMMENT ON VIEW`.
    pub comment: Option<String>,
    /// Its privileges.
    pub grants: Option<Vec<ViewGrant>>,
}

/// One privilege on a view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ViewGrant {
    /// A role, or `PUBLIC`.
    pub grantee: String,
    /// `SELECT`, `INSERT`, …
    pub privilege: String,
    /// `WITH GRANT OPTION`.
    pub grantable: bool,
}

/// The views that depend on columns (`$1` the tables' oids, `$2` their
/// column numbers, both `text[]`), directly or through other views: one
/// row of JSON text, an array of [`ViewDefinition`].
pub const DEPENDENT_VIEWS_SQL: &str = "WITH RECURSIVE dep(view, level) AS ( \
  SELECT r.ev_class, 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid \
  WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass \
    AND (d.refobjid, d.refobjsubid) IN (SELECT a::oid, b::int2 FROM unnest($1::text[], $2::text[]) u(a, b)) AND r.ev_class <> d.refobjid \
  UNION \
  SELECT r.ev_class, dep.level + 1 FROM dep JOIN pg_depend d ON d.refobjid = dep.view \
    AND d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass \
  JOIN pg_rewrite r ON r.oid = d.objid WHERE r.ev_class <> dep.view AND dep.level < 100) \
SELECT coalesce(json_agg(json_build_object('oid', c.oid::int8, 'schema', n.nspname, 'name', c.relname, 'kind', c.relkind, \
  'level', v.level, 'definition', pg_get_viewdef(c.oid), 'options', c.reloptions, \
  'owner', pg_get_userbyid(c.relowner), 'comment', obj_description(c.oid, 'pg_class'), \
  'grants', (SELECT json_agg(json_build_object('grantee', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END, \
     'privilege', a.privilege_type, 'grantable', a.is_grantable)) FROM aclexplode(c.relacl) a WHERE a.grantee <> c.relowner)) \
  ORDER BY v.level, c.oid), '[]')::text \
FROM (SELECT view, max(level) AS level FROM dep GROUP BY view) v JOIN pg_class c ON c.oid = v.view JOIN pg_namespace n ON n.oid = c.relnamespace";

/// The key and reference columns whose dependent views a plan needs
/// (read them with [`DEPENDENT_VIEWS_SQL`]).
pub fn watched_columns(
    snapshot: &Snapshot,
    table: &str,
    options: &MigrateOptions,
) -> Result<Vec<(u32, i16)>, String> {
    Ok(analyze(snapshot, table, options, None)?.watched)
}

/// The query reading the views over `watched` columns.
pub fn dependent_views_query(watched: &[(u32, i16)]) -> crate::plan::Query {
    crate::plan::Query {
        sql: DEPENDENT_VIEWS_SQL.to_string(),
        params: vec![
            crate::plan::Param::TextArray(watched.iter().map(|(t, _)| t.to_string()).collect()),
            crate::plan::Param::TextArray(watched.iter().map(|(_, c)| c.to_string()).collect()),
        ],
    }
}

/// Reads the JSON of [`DEPENDENT_VIEWS_SQL`].
pub fn parse_views(json: &str) -> Result<Vec<ViewDefinition>, String> {
    serde_json::from_str(json).map_err(|e| format!("dependent views: {e}"))
}

/// A partition of a partitioned table a batched migration changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Partition {
    /// The partitioned table's oid.
    pub parent: u32,
    /// The partition's oid.
    pub oid: u32,
    /// Schema.
    pub schema: String,
    /// Name.
    pub name: String,
    /// `r` (a table), `p` (itself partitioned), `f` (foreign).
    pub kind: String,
}

impl Partition {
    /// `schema.name`, quoted.
    pub fn sql_name(&self) -> String {
        crate::ident::qualified(&self.schema, &self.name)
    }
}

/// What a plan reads beside the snapshot.
#[derive(Debug, Clone, Default)]
pub struct PlanInputs {
    /// Views over the changed columns ([`DEPENDENT_VIEWS_SQL`]).
    pub views: Vec<ViewDefinition>,
    /// Partitions of the partitioned tables ([`PARTITIONS_SQL`]).
    pub partitions: Vec<Partition>,
    /// Indexes over the references ([`REFERENCE_INDEXES_SQL`]).
    pub indexes: Vec<IndexDefinition>,
}

/// An index over a reference column (a key, an `INCLUDE`d column, an
/// expression or a predicate), not behind a constraint, as the catalog
/// defines it: made again on the new column from its definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct IndexDefinition {
    /// Its oid.
    pub oid: u32,
    /// Its table's oid.
    pub table: u32,
    /// Schema.
    pub schema: String,
    /// Name.
    pub name: String,
    /// `pg_get_indexdef`.
    pub definition: String,
}

/// The indexes over columns (`$1` tables' oids, `$2` column numbers, both
/// `text[]`) that no constraint owns: one row of JSON text, an array of
/// [`IndexDefinition`]. A partitioned table's index is defined `ON ONLY`
/// the table; without `ONLY` its definition makes the partitions' too.
pub const REFERENCE_INDEXES_SQL: &str = "SELECT coalesce(json_agg(x ORDER BY x.oid), '[]')::text FROM ( \
  SELECT DISTINCT ON (i.indexrelid) i.indexrelid::int8 AS oid, i.indrelid::int8 AS \"table\", n.nspname AS schema, \
    c.relname AS name, \
    CASE WHEN starts_with(pg_get_indexdef(i.indexrelid), p.on || 'ONLY ') \
      THEN p.on || substr(pg_get_indexdef(i.indexrelid), length(p.on || 'ONLY ') + 1) \
      ELSE pg_get_indexdef(i.indexrelid) END AS definition \
  FROM pg_depend d JOIN pg_index i ON i.indexrelid = d.objid \
  JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
  CROSS JOIN LATERAL (SELECT 'CREATE ' || CASE WHEN i.indisunique THEN 'UNIQUE ' ELSE '' END || 'INDEX ' \
    || quote_ident(c.relname) || ' ON ' AS on) p \
  WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass \
    AND (d.refobjid, d.refobjsubid) IN (SELECT a::oid, b::int2 FROM unnest($1::text[], $2::text[]) u(a, b)) \
    AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid) \
  ORDER BY i.indexrelid) x";

/// The query reading the indexes over reference columns.
pub fn reference_indexes_query(columns: &[(u32, i16)]) -> crate::plan::Query {
    crate::plan::Query {
        sql: REFERENCE_INDEXES_SQL.to_string(),
        params: vec![
            crate::plan::Param::TextArray(columns.iter().map(|(t, _)| t.to_string()).collect()),
            crate::plan::Param::TextArray(columns.iter().map(|(_, c)| c.to_string()).collect()),
        ],
    }
}

/// Reads the JSON of [`REFERENCE_INDEXES_SQL`].
pub fn parse_indexes(json: &str) -> Result<Vec<IndexDefinition>, String> {
    serde_json::from_str(json).map_err(|e| format!("reference indexes: {e}"))
}

/// The partitions of tables (`$1`: their oids as `text[]`), one row of
/// JSON text, an array of [`Partition`] ordered by oid.
pub const PARTITIONS_SQL: &str = "SELECT coalesce(json_agg(json_build_object('parent', i.inhparent::int8, 'oid', c.oid::int8, \
  'schema', n.nspname, 'name', c.relname, 'kind', c.relkind) ORDER BY c.oid), '[]')::text \
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
  WHERE i.inhparent::int8::text = ANY ($1::text[])";

/// The query reading the partitions of `tables`.
pub fn partitions_query(tables: &[u32]) -> crate::plan::Query {
    crate::plan::Query {
        sql: PARTITIONS_SQL.to_string(),
        params: vec![crate::plan::Param::TextArray(
            tables.iter().map(u32::to_string).collect(),
        )],
    }
}

/// Reads the JSON of [`PARTITIONS_SQL`].
pub fn parse_partitions(json: &str) -> Result<Vec<Partition>, String> {
    serde_json::from_str(json).map_err(|e| format!("partitions: {e}"))
}

/// The partitioned tables among the migrated table and its referencing
/// tables.
pub fn partitioned_tables(
    snapshot: &Snapshot,
    table: &str,
    options: &MigrateOptions,
) -> Result<Vec<u32>, String> {
    let target = analyze(snapshot, table, options, None)?;
    let mut out = Vec::new();
    for r in std::iter::once(target.relation).chain(target.children.iter().map(|(c, _, _)| *c)) {
        if r.kind == RelKind::PartitionedTable && !out.contains(&r.oid) {
            out.push(r.oid);
        }
    }
    Ok(out)
}

/// Drops `views`, dependents first.
pub(crate) fn drop_views(views: &[ViewDefinition]) -> Vec<String> {
    let mut ordered: Vec<&ViewDefinition> = views.iter().collect();
    ordered.sort_by_key(|v| std::cmp::Reverse(v.level));
    ordered
        .iter()
        .map(|v| format!("DROP VIEW {}", crate::ident::qualified(&v.schema, &v.name)))
        .collect()
}

/// Makes `views` again as they were defined (options, owner, comment,
/// privileges), the views they use first.
pub(crate) fn create_views(views: &[ViewDefinition], user: &str) -> Vec<String> {
    let mut ordered: Vec<&ViewDefinition> = views.iter().collect();
    ordered.sort_by_key(|v| v.level);
    let mut s = Vec::new();
    for v in ordered {
        let name = crate::ident::qualified(&v.schema, &v.name);
        let with = match &v.options {
            Some(options) if !options.is_empty() => format!(" WITH ({})", options.join(", ")),
            _ => String::new(),
        };
        let definition = v.definition.trim().trim_end_matches(';');
        s.push(format!("CREATE VIEW {name}{with} AS {definition}"));
        if v.owner != user {
            s.push(format!(
                "ALTER VIEW {name} OWNER TO {}",
                quote_ident(&v.owner)
            ));
        }
        if let Some(comment) = &v.comment {
            s.push(format!(
                "COMMENT ON VIEW {name} IS {}",
                quote_literal(comment)
            ));
        }
        for g in v.grants.iter().flatten() {
            let grantee = if g.grantee == "PUBLIC" {
                "PUBLIC".to_string()
            } else {
                quote_ident(&g.grantee)
            };
            s.push(format!(
                "GRANT {} ON {name} TO {grantee}{}",
                g.privilege,
                if g.grantable {
                    " WITH GRANT OPTION"
                } else {
                    ""
                }
            ));
        }
    }
    s
}

/// Reads and checks what migrating `table`'s key changes. Errors name
/// the argument, the value and what was expected.
pub(crate) fn analyze<'a>(
    snapshot: &'a Snapshot,
    table: &str,
    options: &MigrateOptions,
    inputs: Option<&PlanInputs>,
) -> Result<Target<'a>, String> {
    let views = inputs.map(|i| &i.views[..]);
    let relation = snapshot.find_relation(table)?;
    let is_table = |r: &Relation| {
        matches!(r.kind, RelKind::Table | RelKind::PartitionedTable) && !r.is_partition
    };
    if !is_table(relation) {
        return Err(format!(
            "table: {} is a {} (expected a table or a partitioned table; a partition is migrated with its table)",
            relation.display_name(),
            if relation.is_partition { "partition" } else { relation.kind.name() }
        ));
    }
    let pk = snapshot.primary_key(relation.oid).ok_or_else(|| {
        format!(
            "table: {} has no primary key (expected one of one column)",
            relation.display_name()
        )
    })?;
    let pk_columns: Vec<String> = pk
        .columns
        .iter()
        .filter_map(|&n| relation.column(n).map(|c| c.name.clone()))
        .collect();
    let key_num = match (&pk.columns[..], &options.column) {
        ([only], None) => *only,
        (_, Some(name)) => relation
            .column_named(name)
            .filter(|c| pk.columns.contains(&c.num))
            .map(|c| c.num)
            .ok_or_else(|| {
                format!(
                    "column: '{name}' is not a column of the primary key of {} (expected one of {})",
                    relation.display_name(),
                    pk_columns.join(", ")
                )
            })?,
        (_, None) => {
            // Of (id, created_at), the number or uuid column is the key.
            let keys: Vec<i16> = pk
                .columns
                .iter()
                .copied()
                .filter(|&n| {
                    relation.column(n).is_some_and(|c| {
                        matches!(c.type_name.as_str(), "smallint" | "integer" | "bigint" | "uuid")
                    })
                })
                .collect();
            match keys[..] {
                [one] => one,
                _ => {
                    return Err(format!(
                        "table: the primary key of {} has {} columns ({}); name the key with --column",
                        relation.display_name(),
                        pk.columns.len(),
                        pk_columns.join(", ")
                    ))
                }
            }
        }
    };
    let key = relation
        .column(key_num)
        .ok_or("table: key column not found")?;
    if !key_type_supported(&key.type_name) {
        return Err(format!(
            "table: key {}.{} is {} (expected smallint, integer, bigint, text, varchar, char or uuid)",
            relation.display_name(),
            key.name,
            key.type_name
        ));
    }
    let old_name = options
        .keep_old
        .clone()
        .unwrap_or_else(|| format!("{}_old", key.name));
    if old_name.is_empty() || old_name.len() > 63 || relation.column_named(&old_name).is_some() {
        return Err(format!(
            "keep-old: '{old_name}' is taken or not a column name (expected a free name of 1 to 63 bytes)"
        ));
    }
    let order_column = match &options.order_by {
        Some(name) => {
            let c = relation.column_named(name).ok_or_else(|| {
                format!(
                    "order-by: {} has no column '{name}' (expected a timestamp or date column)",
                    relation.display_name()
                )
            })?;
            if !(c.type_name.starts_with("timestamp") || c.type_name == "date") {
                return Err(format!(
                    "order-by: {}.{name} is {} (expected timestamp, timestamptz or date)",
                    relation.display_name(),
                    c.type_name
                ));
            }
            Some(c.name.clone())
        }
        None => None,
    };

    // Foreign keys referencing the table.
    let mut references = Vec::new();
    let mut children: Vec<(&Relation, &Constraint, String)> = Vec::new();
    for fk in snapshot
        .foreign_keys()
        .filter(|fk| fk.ref_table == relation.oid)
    {
        let child = snapshot
            .relation(fk.table)
            .ok_or("foreign key: table not found")?;
        let refs = fk.ref_columns.clone().unwrap_or_default();
        let Some(at) = refs.iter().position(|&n| n == key_num) else {
            return Err(format!(
                "table: foreign key {} of {} references columns of {} without its key {} (not migrated)",
                fk.name,
                child.display_name(),
                relation.display_name(),
                key.name
            ));
        };
        if !is_table(child) {
            return Err(format!(
                "table: {} referencing it is a {} (expected a table or a partitioned table)",
                child.display_name(),
                child.kind.name()
            ));
        }
        let column = child
            .column(fk.columns[at])
            .ok_or("foreign key: column not found")?
            .name
            .clone();
        let kept = format!("{column}_old");
        if child.column_named(&kept).is_some() {
            return Err(format!(
                "table: {} already has a column '{kept}' (expected it free for the old references)",
                child.display_name()
            ));
        }
        references.push(Reference {
            table: child.sql_name(),
            column: column.clone(),
            constraint: fk.name.clone(),
        });
        children.push((child, fk, column));
    }
    // Views over the columns would go on showing the old values: they are
    // made again over the new columns, from definitions the caller read
    // (`DEPENDENT_VIEWS_SQL`) for exactly these columns.
    let mut watched = vec![(relation.oid, key_num)];
    let reference_num = |fk: &Constraint| {
        let at = fk
            .ref_columns
            .as_ref()
            .and_then(|r| r.iter().position(|&n| n == key_num))
            .unwrap_or(0);
        fk.columns[at]
    };
    watched.extend(children.iter().map(|(c, fk, _)| (c.oid, reference_num(fk))));
    if let Some(views) = views {
        let read: Vec<u32> = views.iter().map(|v| v.oid).collect();
        let mut unread: Vec<String> = snapshot
            .view_sources()
            .iter()
            .filter(|(v, s)| {
                watched.contains(&(s.relation, s.column)) && !read.contains(&v.relation)
            })
            .filter_map(|(v, _)| snapshot.relation(v.relation).map(|r| r.display_name()))
            .collect();
        unread.sort();
        unread.dedup();
        if !unread.is_empty() {
            return Err(format!(
                "table: views {} show the key or its references but were not read (plan again)",
                unread.join(", ")
            ));
        }
        if let Some(m) = views.iter().find(|v| v.kind != "v") {
            return Err(format!(
                "table: materialized view {}.{} depends on the key or its references (drop it first and make it again after: materialized views are not recreated)",
                m.schema, m.name
            ));
        }
    }

    let mut child_keys: Vec<(&Relation, &Constraint)> = Vec::new();
    for (child, fk, _) in children.iter() {
        for c in snapshot.constraints.iter().filter(|c| {
            c.table == child.oid
                && matches!(c.kind.as_str(), "p" | "u")
                && c.columns.contains(&reference_num(fk))
        }) {
            if c.table == relation.oid && c.name == pk.name {
                continue;
            }
            if let Some(user) = snapshot.foreign_keys().find(|f| {
                f.ref_table == child.oid
                    && f.ref_columns
                        .as_ref()
                        .is_some_and(|r| r.contains(&reference_num(fk)))
            }) {
                return Err(format!(
                    "table: {} of {} covers a reference and is itself referenced by {} (not migrated yet)",
                    c.name, child.display_name(), user.name
                ));
            }
            child_keys.push((child, c));
        }
    }
    let constraint_names: Vec<&str> = snapshot
        .constraints
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let mut reference_indexes = Vec::new();
    for (child, fk, column) in children.iter() {
        for index in snapshot.indexes_of(child.oid) {
            if index.keys.contains(&reference_num(fk))
                && index.expressions.is_none()
                && index.predicate.is_none()
                && index.method == "btree"
                && !constraint_names.contains(&index.name.as_str())
            {
                reference_indexes.push((child.sql_name(), column.clone(), index));
            }
        }
    }
    if let Some(inputs) = inputs {
        if let Some((_, _, unread)) = reference_indexes
            .iter()
            .find(|(_, _, i)| !inputs.indexes.iter().any(|d| d.oid == i.oid))
        {
            return Err(format!(
                "table: index {} over a reference was not read (plan again)",
                unread.name
            ));
        }
    }
    let default_note = match &snapshot.extension_schema {
        Some(schema) => format!("{schema}.uuidv7() (the uuidforge extension)"),
        None => "none: the uuidforge extension is not installed; generate UUIDv7 keys in the application or install it and set DEFAULT uuidv7()".into(),
    };
    Ok(Target {
        key_num,
        pk_columns,
        watched,
        views: views.map(<[ViewDefinition]>::to_vec).unwrap_or_default(),
        indexes: inputs.map(|i| i.indexes.clone()).unwrap_or_default(),
        relation,
        key,
        pk,
        old_name,
        order_column,
        children,
        child_keys,
        reference_indexes,
        references,
        default_note,
    })
}

/// The name of the new column made for `column` while the migration runs.
pub(crate) fn new_column(column: &str) -> String {
    format!("{column}_uuidforge_new")
}

/// The name the old references of `column` are kept under.
pub(crate) fn old_reference(column: &str) -> String {
    format!("{column}_old")
}

/// The unique index kept on the old key values.
pub(crate) fn old_index_name(target: &Target) -> String {
    truncate(&format!("{}_{}_key", target.relation.name, target.old_name))
}

/// An index's column names, `replace` = (column, with) swapped in.
pub(crate) fn index_columns(
    table: &Relation,
    index: &Index,
    replace: Option<(&str, &str)>,
) -> Vec<String> {
    index
        .keys
        .iter()
        .filter_map(|&n| table.column(n))
        .map(|c| match replace {
            Some((from, to)) if c.name == from => to.to_string(),
            _ => c.name.clone(),
        })
        .collect()
}

/// Quoted names, comma-separated.
pub(crate) fn names(columns: &[String]) -> String {
    columns
        .iter()
        .map(|c| quote_ident(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Plans migrating `table`'s primary key in one transaction. Errors name
/// the argument, the value and what was expected.
pub fn plan(
    snapshot: &Snapshot,
    table: &str,
    options: &MigrateOptions,
    inputs: &PlanInputs,
) -> Result<MigratePlan, String> {
    let target = analyze(snapshot, table, options, Some(inputs))?;
    let Target {
        relation,
        key,
        pk,
        old_name,
        children,
        child_keys,
        ..
    } = &target;
    let t = relation.sql_name();
    let k = quote_ident(&key.name);
    let new_col = |name: &str| quote_ident(&new_column(name));
    let kn = new_col(&key.name);
    let old = quote_ident(old_name);
    let read_keys_sql = target.read_keys_sql("");
    let map_sql = "CREATE TEMP TABLE uuidforge_keymap (old text PRIMARY KEY, new uuid NOT NULL UNIQUE) ON COMMIT DROP".to_string();
    let mut s = Vec::new();
    // Deferred foreign key checks would leave events pending, and a table
    // with pending events cannot be altered: check as rows change.
    s.push("SET CONSTRAINTS ALL IMMEDIATE".to_string());
    // The joins of the updates and the index builds, in memory.
    s.push(format!("SET LOCAL work_mem = {}", quote_literal(WORK_MEM)));
    s.push(format!(
        "SET LOCAL maintenance_work_mem = {}",
        quote_literal(MAINTENANCE_WORK_MEM)
    ));
    s.extend(drop_views(&target.views));
    s.push(format!("ALTER TABLE {t} ADD COLUMN {kn} uuid"));
    for (child, _, column) in children.iter() {
        s.push(format!(
            "ALTER TABLE {} ADD COLUMN {} uuid",
            child.sql_name(),
            new_col(column)
        ));
    }
    for (child, fk, _) in children.iter() {
        s.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            child.sql_name(),
            quote_ident(&fk.name)
        ));
    }
    // A referencing table's own primary key or unique constraints over the
    // reference move to the new column: dropped here, made again below.
    for (child, c) in child_keys {
        s.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            child.sql_name(),
            quote_ident(&c.name)
        ));
    }
    // Indexes over a reference serve the new column: dropped before the
    // updates (which would otherwise add an entry per row), made again
    // from their definitions at the end.
    for index in &target.indexes {
        s.push(format!(
            "DROP INDEX {}",
            crate::ident::qualified(&index.schema, &index.name)
        ));
    }
    s.push(format!(
        "ALTER TABLE {t} DROP CONSTRAINT {}",
        quote_ident(&pk.name)
    ));
    // With no key or reference index left to maintain, each row is
    // written once.
    s.push(format!(
        "UPDATE {t} AS x SET {kn} = m.new FROM uuidforge_keymap m WHERE m.old = x.{k}::text"
    ));
    for (child, fk, column) in children.iter() {
        // Joined with the table's new column on the old key's own type
        // (no text cast on millions of references).
        s.push(format!(
            "UPDATE {ct} AS x SET {cn} = p.{kn} FROM {t} p WHERE p.{k} = x.{c}{others}",
            ct = child.sql_name(),
            cn = new_col(column),
            c = quote_ident(column),
            others = target.other_join(child, fk, "x", "p")
        ));
    }
    // Identity or serial: the default goes, and its sequence with it.
    s.push(format!(
        "ALTER TABLE {t} ALTER COLUMN {k} DROP IDENTITY IF EXISTS"
    ));
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {k} DROP DEFAULT"));
    s.push(format!(
        "DO $uuidforge$ DECLARE s text := pg_get_serial_sequence({}, {}); BEGIN IF s IS NOT NULL THEN EXECUTE 'DROP SEQUENCE ' || s; END IF; END $uuidforge$",
        quote_literal(&t),
        quote_literal(&key.name)
    ));
    s.push(format!("ALTER TABLE {t} RENAME COLUMN {k} TO {old}"));
    // Rows made from now on have no old key.
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {old} DROP NOT NULL"));
    s.push(format!("ALTER TABLE {t} RENAME COLUMN {kn} TO {k}"));
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {k} SET NOT NULL"));
    s.push(format!(
        "ALTER TABLE {t} ADD CONSTRAINT {} PRIMARY KEY ({})",
        quote_ident(&pk.name),
        names(&target.pk_columns)
    ));
    // With the primary key's other columns (a partitioned table's unique
    // indexes hold its partition key).
    s.push(format!(
        "CREATE UNIQUE INDEX {} ON {t} ({})",
        quote_ident(&old_index_name(&target)),
        names(&target.pk_with(old_name))
    ));
    if let Some(schema) = &snapshot.extension_schema {
        s.push(format!(
            "ALTER TABLE {t} ALTER COLUMN {k} SET DEFAULT {}.uuidv7()",
            quote_ident(schema)
        ));
    }
    for (child, fk, column) in children.iter() {
        let ct = child.sql_name();
        let c = quote_ident(column);
        let cold = quote_ident(&format!("{column}_old"));
        s.push(format!("ALTER TABLE {ct} RENAME COLUMN {c} TO {cold}"));
        s.push(format!(
            "ALTER TABLE {ct} RENAME COLUMN {} TO {c}",
            new_col(column)
        ));
        if child
            .column(target.reference_num(fk))
            .is_some_and(|c| c.not_null)
        {
            s.push(format!("ALTER TABLE {ct} ALTER COLUMN {c} SET NOT NULL"));
            s.push(format!(
                "ALTER TABLE {ct} ALTER COLUMN {cold} DROP NOT NULL"
            ));
        }
        s.push(format!(
            "ALTER TABLE {ct} ADD CONSTRAINT {} {}",
            quote_ident(&fk.name),
            target.fk_clause(child, fk)
        ));
    }
    // Their definitions name the columns: after every rename they name the
    // new ones (and keep method, order, operator classes, INCLUDE and
    // predicate).
    s.extend(target.indexes.iter().map(|i| i.definition.clone()));
    for (child, c) in child_keys.iter() {
        let names: Vec<String> = c
            .columns
            .iter()
            .filter_map(|&n| child.column(n))
            .map(|col| quote_ident(&col.name))
            .collect();
        s.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {} ({})",
            child.sql_name(),
            quote_ident(&c.name),
            if c.kind == "p" {
                "PRIMARY KEY"
            } else {
                "UNIQUE"
            },
            names.join(", ")
        ));
    }

    s.extend(create_views(&target.views, &snapshot.user));
    let verify_sql = target.checks_sql(
        old_name,
        &key.name,
        &|column| (old_reference(column), column.to_string()),
        "uuidforge_keymap",
        false,
    );
    Ok(MigratePlan {
        table: t,
        key: key.name.clone(),
        key_type: key.type_name.clone(),
        old_name: old_name.clone(),
        references: target.references.clone(),
        read_keys_sql,
        map_sql,
        statements: s,
        verify_sql,
        counts_sql: target.counts_sql(),
        default_note: target.default_note.clone(),
        backup: target.backup(),
    })
}

/// At most 63 bytes (PostgreSQL's limit), cut at a character boundary.
fn truncate(name: &str) -> String {
    let mut end = name.len().min(63);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// Where synthesized times start (2000-01-01T00:00:00Z): without
/// `--order-by`, row `i` in the old key order gets this time plus `i`
/// milliseconds, so a re-run gives the same keys.
pub const SYNTHESIZED_EPOCH_MS: u64 = 946_684_800_000;

/// The new key of each row, in the order `read_keys_sql` returned them:
/// `v7_from(time, old key, secret)` with the row's time (or the
/// synthesized one).
pub fn new_keys(
    rows: &[(String, Option<i64>)],
    ordered: bool,
    secret: &[u8],
) -> Result<Vec<uuid::Uuid>, String> {
    rows.iter()
        .enumerate()
        .map(|(i, (old, ms))| {
            let ms = match (ordered, ms) {
                (true, Some(ms)) => u64::try_from(*ms).map_err(|_| {
                    format!("order-by: row with key '{old}' has a time before 1970 (expected 1970 to 10889)")
                })?,
                (true, None) => {
                    return Err(format!(
                        "order-by: row with key '{old}' has no time (expected a time in every row)"
                    ))
                }
                (false, _) => SYNTHESIZED_EPOCH_MS + i as u64,
            };
            uuidforge::generator::v7_from(ms, old.as_bytes(), secret).map_err(|e| {
                format!("order-by: row with key '{old}': {e}")
            })
        })
        .collect()
}

/// The tables whose row counts differ between two [`Target::counts_sql`]
/// rows, as `table: before → after`.
pub fn count_changes(before: &str, after: &str) -> Vec<String> {
    let read = |json: &str| -> serde_json::Map<String, serde_json::Value> {
        serde_json::from_str(json).unwrap_or_default()
    };
    let (before, after) = (read(before), read(after));
    before
        .iter()
        .filter(|(table, n)| after.get(*table) != Some(n))
        .map(|(table, n)| {
            format!(
                "{table}: {n} rows before, {} after",
                after.get(table).cloned().unwrap_or_default()
            )
        })
        .collect()
}

/// Reads the verification row: the checks that failed (empty when all
/// hold), and every check as `name: count`.
pub fn verification(json: &str) -> Result<(Vec<String>, Vec<String>), String> {
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(|e| format!("verification: {e}"))?;
    let mut failed = Vec::new();
    let mut all = Vec::new();
    for (name, count) in map {
        let n = count.as_i64().unwrap_or(-1);
        all.push(format!("{name}: {n}"));
        if n != 0 {
            failed.push(format!("{name}: {n}"));
        }
    }
    Ok((failed, all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesized_keys_keep_the_old_order_and_come_back_the_same() {
        let rows: Vec<(String, Option<i64>)> = (1..=5000).map(|i| (i.to_string(), None)).collect();
        let a = new_keys(&rows, false, b"secret").unwrap();
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, new_keys(&rows, false, b"secret").unwrap());
        assert_ne!(a, new_keys(&rows, false, b"other").unwrap());
        assert!(a.iter().all(|u| u.get_version_num() == 7));
    }

    #[test]
    fn times_from_a_column_order_the_keys() {
        let rows = vec![
            ("b".to_string(), Some(1_000)),
            ("a".to_string(), Some(2_000)),
        ];
        let keys = new_keys(&rows, true, b"s").unwrap();
        assert!(keys[0] < keys[1]);
        let err = new_keys(&[("x".into(), Some(-1))], true, b"s").unwrap_err();
        assert!(err.contains("order-by") && err.contains("'x'"), "{err}");
        let err = new_keys(&[("y".into(), None)], true, b"s").unwrap_err();
        assert!(err.contains("no time") && err.contains("'y'"), "{err}");
    }

    #[test]
    fn count_changes_names_the_table() {
        assert!(count_changes(r#"{"t": 3, "c": 5}"#, r#"{"t": 3, "c": 5}"#).is_empty());
        assert_eq!(
            count_changes(r#"{"t": 3, "c": 5}"#, r#"{"t": 3, "c": 4}"#),
            vec!["c: 5 rows before, 4 after"]
        );
    }

    #[test]
    fn verification_names_what_failed() {
        let (failed, all) =
            verification(r#"{"rows out of order": 0, "new keys not from the map": 2}"#).unwrap();
        assert_eq!(failed, vec!["new keys not from the map: 2"]);
        assert_eq!(all.len(), 2);
    }
}

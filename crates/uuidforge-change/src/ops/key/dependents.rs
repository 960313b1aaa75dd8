//! What sits on the columns a key migration changes, read in one
//! statement ([`DEPENDENTS_SQL`], its policies' definitions from
//! [`policy_definition_sql`]) into typed values, each object by its
//! kind: constraints (primary and unique keys, exclusion, CHECK) and
//! indexes over a key or reference column with their full definitions
//! (`NULLS NOT DISTINCT`, deferrability, method, operator classes,
//! `INCLUDE`, predicates, expressions) and comments; the columns' own
//! comments, privileges, NOT NULL names and defaults; and every other
//! object tied to a changed column through `pg_depend` ([`Other`]): a
//! trigger's column list or `WHEN`, a policy, statistics, a rule, a
//! generated column, a publication's column list or row filter, a
//! function with a SQL-standard body. What becomes of each is its kind's
//! decision (`super::kinds`); the migration's own triggers for writers
//! (`uuidforge_migrate`) are its business. Also here: the probes that ask
//! the server whether an expression still holds over uuid.

use crate::ops::{Answers, Named, Probe, Read, Reading};
use serde::{Deserialize, Serialize};
use uuidforge_db::catalog::{Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::plan::{Param, Query};
use uuidforge_ident::{quote_ident, quote_literal};

/// The read of every dependent of columns (`$1` their tables' oids, `$2`
/// their numbers, both `text[]`) and of the same-named columns of their
/// partitions: one row of JSON text, a [`Dependents`]. A partitioned
/// table's index is defined `ON ONLY` the table; without `ONLY` its
/// definition makes the partitions' too, so an index or constraint
/// attached to a partitioned table's is left out (it follows its table's);
/// a partition's own is in.
pub const DEPENDENTS_SQL: &str = r#"WITH given AS (SELECT a::oid AS rel, b::int2 AS num FROM unnest($1::text[], $2::text[]) u(a, b)),
  watched AS (SELECT rel, num FROM given UNION
    SELECT pa.attrelid, pa.attnum FROM given g JOIN pg_attribute ga ON ga.attrelid = g.rel AND ga.attnum = g.num
    CROSS JOIN LATERAL pg_partition_tree(g.rel) t JOIN pg_attribute pa ON pa.attrelid = t.relid AND pa.attname = ga.attname),
  keycols AS (SELECT i.indexrelid, k.ord::int4 AS ord, k.num AS num, i.indclass[k.ord - 1] AS opclass
    FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY k(num, ord)
    WHERE i.indrelid IN (SELECT rel FROM watched) AND k.ord <= i.indnkeyatts),
  fit AS (SELECT kc.indexrelid, json_agg(json_build_object('num', kc.num, 'default_class', oc.opcdefault) ORDER BY kc.ord) AS keys,
      bool_and(EXISTS (SELECT FROM pg_opclass u WHERE u.opcmethod = oc.opcmethod AND u.opcintype = 'uuid'::regtype AND u.opcdefault)) AS uuid_class
    FROM keycols kc JOIN pg_opclass oc ON oc.oid = kc.opclass
    GROUP BY kc.indexrelid),
  ddl AS (SELECT i.indexrelid, CASE WHEN starts_with(pg_get_indexdef(i.indexrelid), p.on || 'ONLY ')
      THEN p.on || substr(pg_get_indexdef(i.indexrelid), length(p.on || 'ONLY ') + 1)
      ELSE pg_get_indexdef(i.indexrelid) END AS definition
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    CROSS JOIN LATERAL (SELECT 'CREATE ' || CASE WHEN i.indisunique THEN 'UNIQUE ' ELSE '' END || 'INDEX '
      || quote_ident(c.relname) || ' ON ' AS on) p
    WHERE i.indrelid IN (SELECT rel FROM watched))
SELECT json_build_object(
 'indexes', (SELECT coalesce(json_agg(x ORDER BY x.oid), '[]') FROM (
   SELECT DISTINCT ON (i.indexrelid) i.indexrelid::int8 AS oid, i.indrelid::int8 AS "table", n.nspname AS schema,
     c.relname AS name, d.definition, am.amname AS method, i.indisunique AS "unique",
     obj_description(i.indexrelid, 'pg_class') AS comment,
     pg_get_expr(i.indexprs, i.indrelid) AS expressions, pg_get_expr(i.indpred, i.indrelid) AS predicate,
     i.indpred::text AS predicate_tree,
     coalesce(f.keys, '[]') AS keys, coalesce(f.uuid_class, true) AS uuid_class,
     (SELECT coalesce(json_agg(json_build_object('partition', li.indrelid::int8, 'name', lc.relname) ORDER BY lc.oid), '[]')
        FROM pg_inherits lh JOIN pg_index li ON li.indexrelid = lh.inhrelid JOIN pg_class lc ON lc.oid = lh.inhrelid
       WHERE lh.inhparent = i.indexrelid) AS leaves
   FROM pg_depend dp JOIN pg_index i ON i.indexrelid = dp.objid
   JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   JOIN pg_am am ON am.oid = c.relam JOIN ddl d ON d.indexrelid = i.indexrelid
   LEFT JOIN fit f ON f.indexrelid = i.indexrelid
   WHERE dp.classid = 'pg_class'::regclass AND dp.refclassid = 'pg_class'::regclass
     AND (dp.refobjid, dp.refobjsubid) IN (SELECT rel, num FROM watched)
     AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid)
     AND NOT EXISTS (SELECT FROM pg_inherits h WHERE h.inhrelid = i.indexrelid)
   ORDER BY i.indexrelid) x),
 'constraints', (SELECT coalesce(json_agg(x ORDER BY x.oid), '[]') FROM (
   SELECT co.oid::int8 AS oid, co.conrelid::int8 AS "table", n.nspname AS schema, co.conname AS name,
     co.contype::text AS kind, pg_get_constraintdef(co.oid) AS definition, co.conkey AS columns,
     co.condeferrable AS deferrable, co.condeferred AS deferred, co.convalidated AS validated,
     obj_description(co.oid, 'pg_constraint') AS comment,
     pg_get_expr(co.conbin, co.conrelid) AS expression, co.conbin::text AS tree,
     d.definition AS index_definition, am.amname AS method,
     pg_get_expr(i.indexprs, i.indrelid) AS expressions, pg_get_expr(i.indpred, i.indrelid) AS predicate,
     coalesce(f.keys, '[]') AS keys, coalesce(f.uuid_class, true) AS uuid_class,
     (SELECT coalesce(json_agg(json_build_object('partition', lk.conrelid::int8, 'name', lk.conname) ORDER BY lk.oid), '[]')
        FROM pg_constraint lk WHERE lk.conparentid = co.oid) AS leaves
   FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   LEFT JOIN pg_index i ON i.indexrelid = co.conindid LEFT JOIN ddl d ON d.indexrelid = co.conindid
   LEFT JOIN pg_class ic ON ic.oid = co.conindid LEFT JOIN pg_am am ON am.oid = ic.relam
   LEFT JOIN fit f ON f.indexrelid = co.conindid
   WHERE co.contype IN ('p', 'u', 'x', 'c') AND co.conparentid = 0
     AND EXISTS (SELECT FROM watched w WHERE w.rel = co.conrelid AND w.num = ANY (co.conkey))) x),
 'columns', (SELECT coalesce(json_agg(x ORDER BY x."table", x.num), '[]') FROM (
   SELECT a.attrelid::int8 AS "table", a.attnum AS num, col_description(a.attrelid, a.attnum) AS comment,
     (SELECT json_agg(json_build_object('grantee', CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(g.grantee) END,
        'privilege', g.privilege_type, 'grantable', g.is_grantable) ORDER BY g.grantee, g.privilege_type)
        FROM aclexplode(a.attacl) g) AS grants,
     n.conname AS not_null_name,
     pg_get_expr(ad.adbin, ad.adrelid) AS "default", ad.adbin::text AS default_tree
   FROM given w JOIN pg_attribute a ON a.attrelid = w.rel AND a.attnum = w.num
   LEFT JOIN pg_constraint n ON n.conrelid = a.attrelid AND n.contype = 'n' AND n.conkey = ARRAY[a.attnum]
   LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum AND a.attgenerated = ''
   WHERE col_description(a.attrelid, a.attnum) IS NOT NULL OR a.attacl IS NOT NULL OR n.conname IS NOT NULL
     OR ad.oid IS NOT NULL) x),
 'others', (SELECT coalesce(json_agg(x ORDER BY x.description), '[]') FROM (
   SELECT DISTINCT CASE WHEN d.classid = 'pg_attrdef'::regclass THEN (SELECT format('generated column %I of table %s', ga.attname, ad.adrelid::regclass)
         FROM pg_attrdef ad JOIN pg_attribute ga ON ga.attrelid = ad.adrelid AND ga.attnum = ad.adnum WHERE ad.oid = d.objid)
       ELSE pg_describe_object(d.classid, d.objid, 0) END AS description,
     CASE d.classid WHEN 'pg_trigger'::regclass THEN 'trigger' WHEN 'pg_policy'::regclass THEN 'policy'
       WHEN 'pg_statistic_ext'::regclass THEN 'statistics' WHEN 'pg_rewrite'::regclass THEN 'rule'
       WHEN 'pg_attrdef'::regclass THEN 'generated column' WHEN 'pg_publication_rel'::regclass THEN 'publication'
       WHEN 'pg_proc'::regclass THEN 'function'
       ELSE 'object' END AS kind,
     CASE d.classid WHEN 'pg_trigger'::regclass THEN pg_get_triggerdef(d.objid)
       WHEN 'pg_policy'::regclass THEN (SELECT {policy_definition}
         FROM pg_policy p JOIN pg_class pc ON pc.oid = p.polrelid JOIN pg_namespace pn ON pn.oid = pc.relnamespace WHERE p.oid = d.objid)
       WHEN 'pg_publication_rel'::regclass THEN (SELECT format('ALTER PUBLICATION %I ADD TABLE %I.%I', pb.pubname, pn.nspname, pc.relname)
             || coalesce(' (' || (SELECT string_agg(quote_ident(pa.attname), ', ' ORDER BY k.ord) FROM unnest(pr.prattrs::int2[]) WITH ORDINALITY k(num, ord)
                 JOIN pg_attribute pa ON pa.attrelid = pr.prrelid AND pa.attnum = k.num) || ')', '')
             || coalesce(' WHERE (' || pg_get_expr(pr.prqual, pr.prrelid) || ')', '')
         FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid JOIN pg_class pc ON pc.oid = pr.prrelid
         JOIN pg_namespace pn ON pn.oid = pc.relnamespace WHERE pr.oid = d.objid)
       WHEN 'pg_statistic_ext'::regclass THEN pg_get_statisticsobjdef(d.objid)
       WHEN 'pg_rewrite'::regclass THEN pg_get_ruledef(d.objid)
       WHEN 'pg_attrdef'::regclass THEN (SELECT format('%I %s GENERATED ALWAYS AS (%s) %s', ga.attname, format_type(ga.atttypid, ga.atttypmod), pg_get_expr(ad.adbin, ad.adrelid),
           CASE ga.attgenerated WHEN 's' THEN 'STORED' ELSE 'VIRTUAL' END)
         FROM pg_attrdef ad JOIN pg_attribute ga ON ga.attrelid = ad.adrelid AND ga.attnum = ad.adnum WHERE ad.oid = d.objid)
     END AS definition,
     CASE d.classid WHEN 'pg_statistic_ext'::regclass THEN (SELECT '"' || replace(sn.nspname, '"', '""') || '"."' || replace(s.stxname, '"', '""') || '"'
         FROM pg_statistic_ext s JOIN pg_namespace sn ON sn.oid = s.stxnamespace WHERE s.oid = d.objid)
       WHEN 'pg_trigger'::regclass THEN (SELECT '"' || replace(tg.tgname, '"', '""') || '" ON "' || replace(tn.nspname, '"', '""') || '"."' || replace(tc.relname, '"', '""') || '"'
         FROM pg_trigger tg JOIN pg_class tc ON tc.oid = tg.tgrelid JOIN pg_namespace tn ON tn.oid = tc.relnamespace WHERE tg.oid = d.objid)
       WHEN 'pg_policy'::regclass THEN (SELECT '"' || replace(p.polname, '"', '""') || '" ON "' || replace(pn.nspname, '"', '""') || '"."' || replace(pc.relname, '"', '""') || '"'
         FROM pg_policy p JOIN pg_class pc ON pc.oid = p.polrelid JOIN pg_namespace pn ON pn.oid = pc.relnamespace WHERE p.oid = d.objid)
       WHEN 'pg_publication_rel'::regclass THEN (SELECT '"' || replace(pb.pubname, '"', '""') || '" ON "' || replace(pn.nspname, '"', '""') || '"."' || replace(pc.relname, '"', '""') || '"'
         FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid JOIN pg_class pc ON pc.oid = pr.prrelid
         JOIN pg_namespace pn ON pn.oid = pc.relnamespace WHERE pr.oid = d.objid)
       WHEN 'pg_attrdef'::regclass THEN (SELECT '"' || replace(ga.attname, '"', '""') || '" ON "' || replace(gn.nspname, '"', '""') || '"."' || replace(gc.relname, '"', '""') || '"'
         FROM pg_attrdef ad JOIN pg_attribute ga ON ga.attrelid = ad.adrelid AND ga.attnum = ad.adnum
         JOIN pg_class gc ON gc.oid = ad.adrelid JOIN pg_namespace gn ON gn.oid = gc.relnamespace WHERE ad.oid = d.objid)
       WHEN 'pg_rewrite'::regclass THEN (SELECT '"' || replace(rw.rulename, '"', '""') || '" ON "' || replace(rn.nspname, '"', '""') || '"."' || replace(rc.relname, '"', '""') || '"'
         FROM pg_rewrite rw JOIN pg_class rc ON rc.oid = rw.ev_class JOIN pg_namespace rn ON rn.oid = rc.relnamespace WHERE rw.oid = d.objid)
     END AS drop_target,
     d.objid::int8 AS oid,
     (SELECT p.polrelid::int8 FROM pg_policy p WHERE d.classid = 'pg_policy'::regclass AND p.oid = d.objid) AS policy_table,
     (SELECT jsonb_build_array(pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
        FROM pg_policy p WHERE d.classid = 'pg_policy'::regclass AND p.oid = d.objid) AS policy_expressions,
     (SELECT jsonb_build_array(p.polqual::text, p.polwithcheck::text)
        FROM pg_policy p WHERE d.classid = 'pg_policy'::regclass AND p.oid = d.objid) AS policy_trees,
     (SELECT jsonb_build_array(rw.ev_class::int8, rw.ev_qual::text, rw.ev_action::text)
        FROM pg_rewrite rw WHERE d.classid = 'pg_rewrite'::regclass AND rw.oid = d.objid) AS rule_trees,
     (SELECT coalesce(p.polqual::text, '') || coalesce(p.polwithcheck::text, '') LIKE '%SUBLINK%'
        FROM pg_policy p WHERE d.classid = 'pg_policy'::regclass AND p.oid = d.objid) AS policy_reads_tables,
     CASE d.classid WHEN 'pg_statistic_ext'::regclass THEN (SELECT s.stxexprs IS NULL FROM pg_statistic_ext s WHERE s.oid = d.objid)
       WHEN 'pg_trigger'::regclass THEN (SELECT tg.tgconstraint = 0 FROM pg_trigger tg WHERE tg.oid = d.objid)
       WHEN 'pg_policy'::regclass THEN true
       WHEN 'pg_publication_rel'::regclass THEN (SELECT pr.prqual IS NULL FROM pg_publication_rel pr WHERE pr.oid = d.objid)
       WHEN 'pg_rewrite'::regclass THEN true
       ELSE false END AS carried,
     (SELECT tg.tgenabled::text FROM pg_trigger tg WHERE d.classid = 'pg_trigger'::regclass AND tg.oid = d.objid) AS enabled,
     (SELECT jsonb_build_array(tg.tgrelid::int8, tg.tgqual::text) FROM pg_trigger tg
       WHERE d.classid = 'pg_trigger'::regclass AND tg.oid = d.objid AND tg.tgqual IS NOT NULL) AS trigger_when,
     (SELECT jsonb_build_array(ad.adrelid::int8, ad.adnum) FROM pg_attrdef ad WHERE d.classid = 'pg_attrdef'::regclass AND ad.oid = d.objid) AS generated,
     (SELECT pg_get_expr(ad.adbin, ad.adrelid) FROM pg_attrdef ad WHERE d.classid = 'pg_attrdef'::regclass AND ad.oid = d.objid) AS generated_expression,
     (SELECT coalesce(jsonb_agg(DISTINCT pg_describe_object(u.classid, u.objid, u.objsubid)), '[]') FROM pg_attrdef ad
        JOIN pg_depend u ON u.refclassid = 'pg_class'::regclass AND u.refobjid = ad.adrelid AND u.refobjsubid = ad.adnum
       WHERE d.classid = 'pg_attrdef'::regclass AND ad.oid = d.objid AND NOT (u.classid = 'pg_attrdef'::regclass AND u.objid = ad.oid)) AS generated_users
   FROM watched w JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = w.rel AND d.refobjsubid = w.num
   WHERE d.classid NOT IN ('pg_constraint'::regclass, 'pg_class'::regclass)
     AND NOT (d.classid = 'pg_rewrite'::regclass AND EXISTS (SELECT FROM pg_rewrite r JOIN pg_class v ON v.oid = r.ev_class
       WHERE r.oid = d.objid AND r.rulename = '_RETURN' AND v.relkind IN ('v', 'm')))
     AND NOT (d.classid = 'pg_attrdef'::regclass AND EXISTS (SELECT FROM pg_attrdef ad
       WHERE ad.oid = d.objid AND ad.adrelid = w.rel AND ad.adnum = w.num))
     AND NOT (d.classid = 'pg_trigger'::regclass AND EXISTS (SELECT FROM pg_trigger tg
       WHERE tg.oid = d.objid AND (tg.tgname = 'uuidforge_migrate' OR tg.tgparentid <> 0)))) x)
)::text"#;

/// The `CREATE POLICY` statement of the policy `p` (an alias of
/// `pg_policy`) on the table `table` of `schema` (SQL names), as SQL.
pub fn policy_definition_sql(p: &str, schema: &str, table: &str) -> String {
    format!(
        "concat_ws(' ', pg_catalog.format('CREATE POLICY %I ON %I.%I AS %s FOR %s TO %s', {p}.polname, {schema}, {table}, \
           CASE WHEN {p}.polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END, \
           CASE {p}.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE' WHEN 'd' THEN 'DELETE' ELSE 'ALL' END, \
           (SELECT string_agg(CASE WHEN r = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(r)) END, ', ') FROM unnest({p}.polroles) r)), \
         'USING (' || pg_catalog.pg_get_expr({p}.polqual, {p}.polrelid) || ')', 'WITH CHECK (' || pg_catalog.pg_get_expr({p}.polwithcheck, {p}.polrelid) || ')')"
    )
}

/// The read of [`DEPENDENTS_SQL`].
pub const DEPENDENTS: Named<Dependents> = Named::new(
    "dependents",
    "read the constraints and indexes over the columns",
);

/// The read of the dependents of `columns` ((table oid, column number)).
pub fn read(columns: &[(u32, i16)]) -> Read {
    DEPENDENTS.read(Query {
        sql: DEPENDENTS_SQL.replace(
            "{policy_definition}",
            &policy_definition_sql("p", "pn.nspname", "pc.relname"),
        ),
        params: vec![
            Param::TextArray(columns.iter().map(|(t, _)| t.to_string()).collect()),
            Param::TextArray(columns.iter().map(|(_, c)| c.to_string()).collect()),
        ],
    })
}

/// A key column of an index and whether its operator class is a default
/// one (`pg_get_indexdef` names any other, which would not fit a uuid
/// column).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyClass {
    /// The column's number (0: an expression).
    pub num: i16,
    /// Whether its operator class is the default of the column's type.
    pub default_class: bool,
}

/// A piece of a partitioned index or constraint on one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leaf {
    /// The partition's oid.
    pub partition: u32,
    /// The piece's name.
    pub name: String,
}

/// What of an index must still hold over the columns that become uuid:
/// its expressions and predicate type, its operator classes fit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexShape {
    /// Its expressions, as `pg_get_expr` writes them.
    pub expressions: Option<String>,
    /// Its `WHERE`.
    pub predicate: Option<String>,
    /// Its key columns' operator classes.
    pub keys: Vec<KeyClass>,
    /// Whether its access method has a default operator class for uuid.
    pub uuid_class: bool,
}

impl IndexShape {
    /// Its expressions and predicate.
    pub fn expressions(&self) -> Vec<&str> {
        [&self.expressions, &self.predicate]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect()
    }
}

/// An index over a changed column that no constraint owns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexDependent {
    /// Its oid.
    pub oid: u32,
    /// Its table's oid.
    pub table: u32,
    /// Its schema.
    pub schema: String,
    /// Its name.
    pub name: String,
    /// `pg_get_indexdef` (without `ONLY` on a partitioned table).
    pub definition: String,
    /// Its access method.
    pub method: String,
    /// Unique.
    pub unique: bool,
    /// `COMMENT ON INDEX`.
    pub comment: Option<String>,
    /// What must still hold over uuid columns.
    #[serde(flatten)]
    pub shape: IndexShape,
    /// Its predicate's node tree (`indpred`).
    #[serde(default)]
    pub predicate_tree: Option<String>,
    /// A partitioned table's index: the partitions' indexes attached to it.
    #[serde(default)]
    pub leaves: Vec<Leaf>,
}

/// The kind of a constraint over a changed column (`pg_constraint.contype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConstraintKind {
    /// `PRIMARY KEY`.
    #[serde(rename = "p")]
    Primary,
    /// `UNIQUE`.
    #[serde(rename = "u")]
    Unique,
    /// `EXCLUDE`.
    #[serde(rename = "x")]
    Exclusion,
    /// `CHECK`.
    #[serde(rename = "c")]
    Check,
}

/// A constraint over a changed column (primary or unique key, exclusion,
/// CHECK), other than the migrated table's primary key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstraintDependent {
    /// Its oid.
    pub oid: u32,
    /// Its table's oid.
    pub table: u32,
    /// Its schema.
    pub schema: String,
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: ConstraintKind,
    /// `pg_get_constraintdef`: what `ADD CONSTRAINT name` takes.
    pub definition: String,
    /// Its columns.
    pub columns: Vec<i16>,
    /// `DEFERRABLE`.
    pub deferrable: bool,
    /// `INITIALLY DEFERRED`.
    pub deferred: bool,
    /// Validated (a CHECK added `NOT VALID` is not).
    pub validated: bool,
    /// `COMMENT ON CONSTRAINT`.
    pub comment: Option<String>,
    /// A CHECK's expression.
    pub expression: Option<String>,
    /// A CHECK's node tree (`conbin`).
    #[serde(default)]
    pub tree: Option<String>,
    /// The index behind a key or exclusion constraint (`pg_get_indexdef`).
    pub index_definition: Option<String>,
    /// That index's access method.
    pub method: Option<String>,
    /// What of that index must still hold over uuid columns.
    #[serde(flatten)]
    pub shape: IndexShape,
    /// A partitioned table's constraint: its partitions' pieces.
    #[serde(default)]
    pub leaves: Vec<Leaf>,
}

impl ConstraintDependent {
    /// The expressions that must still type over uuid columns: a CHECK's,
    /// its index's expressions and predicate.
    pub fn expressions(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.expression.iter().map(String::as_str).collect();
        all.extend(self.shape.expressions());
        all
    }
}

/// A privilege on a column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnGrant {
    /// A role, or `PUBLIC`.
    pub grantee: String,
    /// `SELECT`, `UPDATE`, …
    pub privilege: String,
    /// `WITH GRANT OPTION`.
    pub grantable: bool,
}

/// A changed column's own comment, privileges, NOT NULL constraint's name
/// and default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnExtras {
    /// Its table's oid.
    pub table: u32,
    /// Its number.
    pub num: i16,
    /// `COMMENT ON COLUMN`.
    pub comment: Option<String>,
    /// `GRANT … (column)`.
    pub grants: Option<Vec<ColumnGrant>>,
    /// Its NOT NULL constraint's name (PostgreSQL 18 names them).
    #[serde(default)]
    pub not_null_name: Option<String>,
    /// Its default, as the server prints it.
    #[serde(default)]
    pub default: Option<String>,
    /// Its default's node tree (`adbin`).
    #[serde(default)]
    pub default_tree: Option<String>,
}

/// Any other object PostgreSQL ties to a changed column (`pg_depend` at
/// column level), by its kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Other {
    /// `pg_describe_object`: "trigger t on table d", …
    pub description: String,
    /// Its definition as the server writes it, where there is one.
    pub definition: Option<String>,
    /// What its drop names, every name quoted: a statistics object
    /// (qualified), or `name ON table`.
    #[serde(default)]
    pub drop_target: Option<String>,
    /// Its oid (in its catalog).
    #[serde(default)]
    pub oid: u32,
    /// What it is, with what its kind reads of it.
    #[serde(flatten)]
    pub of: OtherKind,
}

/// The kinds of [`Other`] objects, each with what is read of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum OtherKind {
    /// A trigger whose column list or `WHEN` names a changed column.
    #[serde(rename = "trigger")]
    Trigger {
        /// It belongs to no constraint (a constraint's trigger moves with
        /// its constraint, or not at all).
        #[serde(rename = "carried", default)]
        own: bool,
        /// Its `tgenabled` (`O`, `D`, `R`, `A`), given back after.
        #[serde(default)]
        enabled: Option<String>,
        /// Its table and its `WHEN` as a node tree.
        #[serde(default)]
        trigger_when: Option<(u32, String)>,
    },
    /// A row-level security policy.
    #[serde(rename = "policy")]
    Policy {
        /// Its table.
        policy_table: u32,
        /// Its `USING` and `WITH CHECK` expressions.
        #[serde(default)]
        policy_expressions: Vec<Option<String>>,
        /// Their node trees.
        #[serde(default)]
        policy_trees: Vec<Option<String>>,
        /// Whether they read tables (a subquery): then they are typed when
        /// made again, over every changed column at once (a failure rolls
        /// the change back), not probed alone before.
        #[serde(default)]
        policy_reads_tables: bool,
    },
    /// Extended statistics.
    #[serde(rename = "statistics")]
    Statistics {
        /// On columns only: made again as they are (expressions might not
        /// hold over uuid).
        #[serde(rename = "carried", default)]
        on_columns: bool,
    },
    /// A rule.
    #[serde(rename = "rule")]
    Rule {
        /// Its table, and its `WHERE` and actions as node trees.
        rule_trees: (u32, Option<String>, Option<String>),
    },
    /// A generated column computed from a changed column.
    #[serde(rename = "generated column")]
    Generated {
        /// Its table and number.
        generated: (u32, i16),
        /// Its expression.
        generated_expression: String,
        /// What depends on it (an index, a view): it would go with the
        /// column computed again.
        #[serde(default)]
        generated_users: Vec<String>,
    },
    /// A publication's column list or row filter.
    #[serde(rename = "publication")]
    Publication {
        /// Without a row filter: its column list made again as it is.
        #[serde(rename = "carried", default)]
        unfiltered: bool,
    },
    /// A function whose SQL-standard body (`BEGIN ATOMIC`) follows the
    /// column by number.
    #[serde(rename = "function")]
    Function {},
    /// Anything else.
    #[serde(rename = "object")]
    Object {},
}

impl Other {
    /// Its `name` and `table` as its drop target says them (`name ON
    /// table`, both quoted).
    pub fn name_on(&self) -> Option<(&str, &str)> {
        self.drop_target.as_deref()?.split_once(" ON ")
    }

    /// Its description and definition, as a refusal names it.
    pub fn named(&self) -> String {
        match &self.definition {
            Some(d) => format!("{} ({d})", self.description),
            None => self.description.clone(),
        }
    }
}

/// Everything over the changed columns, as [`DEPENDENTS_SQL`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependents {
    /// Indexes no constraint owns.
    pub indexes: Vec<IndexDependent>,
    /// Constraints.
    pub constraints: Vec<ConstraintDependent>,
    /// Columns with a comment, privileges or a default.
    pub columns: Vec<ColumnExtras>,
    /// Every other object tied to a changed column, by description.
    #[serde(default)]
    pub others: Vec<Other>,
}

/// The key columns of `keys` among `changed` whose operator class would
/// not fit uuid: named explicitly, or the method has no uuid class.
fn unfit(keys: &[KeyClass], uuid_class: bool, changed: &[i16]) -> Option<&'static str> {
    let changed_keys: Vec<&KeyClass> = keys.iter().filter(|k| changed.contains(&k.num)).collect();
    if changed_keys.is_empty() {
        return None;
    }
    if !uuid_class {
        return Some("its access method has no operator class for uuid");
    }
    changed_keys
        .iter()
        .any(|k| !k.default_class)
        .then_some("it names an operator class of the old type")
}

/// The probe of an object of `kind` (`constraint`, `index`, `policy`,
/// `trigger`, `generated column`) of oid `oid`: whether its expressions
/// still hold over the new columns.
pub struct ProbeOf {
    /// What kind of object.
    pub kind: &'static str,
    /// Its oid.
    pub oid: u32,
    /// What it checks, for progress (empty when reading the answer).
    pub what: String,
}

impl ProbeOf {
    /// The probe of `kind` `oid`, as its answer is read.
    pub fn of(kind: &'static str, oid: u32) -> ProbeOf {
        ProbeOf {
            kind,
            oid,
            what: String::new(),
        }
    }
}

impl Reading for ProbeOf {
    type Answer = Probe;

    fn name(&self) -> String {
        format!("probe {} {}", self.kind, self.oid)
    }

    fn what(&self) -> String {
        if self.what.is_empty() {
            "probe".into()
        } else {
            self.what.clone()
        }
    }

    fn parse(&self, text: &str) -> Result<Probe, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// The probe of `expressions` over `table` with the columns `to_uuid` as
/// uuid (the others as they are), with the table's row named by each of
/// `aliases` (a trigger's `WHEN` names it `new` and `old`): whether the
/// server still takes them. Analysed only: over `LIMIT 0` no row is read
/// and no function called; one row comes back.
pub fn probe(
    of: ProbeOf,
    table: &Relation,
    to_uuid: &[i16],
    expressions: &[&str],
    aliases: &[&str],
) -> Read {
    let columns: Vec<String> = table
        .columns
        .iter()
        .map(|c| {
            let ty = if to_uuid.contains(&c.num) {
                "uuid"
            } else {
                c.type_name.as_str()
            };
            format!("NULL::{ty} AS {}", quote_ident(&c.name))
        })
        .collect();
    let uses: Vec<String> = expressions.iter().map(|e| format!("ROW({e})")).collect();
    let rows: Vec<String> = aliases
        .iter()
        .map(|a| format!("(SELECT {} LIMIT 0) {a}", columns.join(", ")))
        .collect();
    of.probe(Query::new(format!(
        "SELECT {} WHERE NOT EXISTS (SELECT FROM {} WHERE {} IS NULL)",
        quote_literal(&Probe::ran_answer()),
        rows.join(", "),
        uses.join(" IS NULL AND ")
    )))
}

/// What the server said of the probe of `kind` `oid`, when it refused.
pub fn refused_probe(
    answers: &Answers,
    kind: &'static str,
    oid: u32,
) -> Result<Option<String>, DbError> {
    Ok(answers
        .answer(&ProbeOf::of(kind, oid))?
        .and_then(|p| p.refusal().map(str::to_string)))
}

/// Where a dependent of `table` cannot move to uuid columns (`changed`
/// of it): the reason, or none. Probes the server answered say whether
/// its expressions still type.
pub fn cannot_carry(
    answers: &Answers,
    probe: (&'static str, u32),
    shape: &IndexShape,
    changed: &[i16],
) -> Result<Option<String>, DbError> {
    if let Some(why) = unfit(&shape.keys, shape.uuid_class, changed) {
        return Ok(Some(why.to_string()));
    }
    Ok(refused_probe(answers, probe.0, probe.1)?
        .map(|message| format!("over uuid the server refuses it: {message}")))
}

/// The changed columns of `table` among `changed` ((table, number) pairs),
/// and the same-named columns of a partition of such a table.
pub fn changed_in(snapshot: &Snapshot, table: u32, changed: &[(u32, i16)]) -> Vec<i16> {
    let direct: Vec<i16> = changed
        .iter()
        .filter(|(t, _)| *t == table)
        .map(|(_, n)| *n)
        .collect();
    if !direct.is_empty() {
        return direct;
    }
    let (Some(partition), Some(root)) = (snapshot.relation(table), snapshot.partition_root(table))
    else {
        return Vec::new();
    };
    changed
        .iter()
        .filter(|(t, _)| *t == root.oid)
        .filter_map(|(_, n)| root.column(*n))
        .filter_map(|c| partition.column_named(&c.name).map(|p| p.num))
        .collect()
}

/// A quoted identifier's name (`"Moved"` → `Moved`).
pub fn unquoted(quoted: &str) -> String {
    match quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => quoted.to_string(),
    }
}

//! What sits on the columns a key migration changes and must move with
//! them, exactly: constraints (primary and unique keys, exclusion, CHECK)
//! and indexes over a key or reference column, read with their full
//! definitions (`NULLS NOT DISTINCT`, deferrability, method, operator
//! classes, `INCLUDE`, predicates, expressions), their comments, and the
//! columns' own comments and privileges. Each is made again from its
//! definition over the new column, or the change refuses before anything
//! runs, naming it and why. Every other object tied to a changed column
//! through `pg_depend` (a trigger's column list, a policy, statistics, a
//! rule, a generated column, a publication's row filter) is made again
//! from its definition where it holds over the new column (statistics on
//! columns, a trigger's column list, a policy, a rule, a publication's
//! column list) or refused by name ([`Dependents::refuse_others`]); the
//! migration's own triggers for writers (`uuidforge_migrate`) are its
//! business.

use crate::action::{Action, Object, Table};
use crate::ops::{Answers, Probe, Read};
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
       WHEN 'pg_policy'::regclass THEN (SELECT concat_ws(' ', format('CREATE POLICY %I ON %I.%I AS %s FOR %s TO %s', p.polname, pn.nspname, pc.relname,
             CASE WHEN p.polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END,
             CASE p.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE' WHEN 'd' THEN 'DELETE' ELSE 'ALL' END,
             (SELECT string_agg(CASE WHEN r = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(r)) END, ', ') FROM unnest(p.polroles) r)),
           'USING (' || pg_get_expr(p.polqual, p.polrelid) || ')', 'WITH CHECK (' || pg_get_expr(p.polwithcheck, p.polrelid) || ')')
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

/// The read of the dependents of `columns` ((table oid, column number)).
pub fn read(columns: &[(u32, i16)]) -> Read {
    Read::new(
        "dependents",
        "read the constraints and indexes over the columns",
        Query {
            sql: DEPENDENTS_SQL.to_string(),
            params: vec![
                Param::TextArray(columns.iter().map(|(t, _)| t.to_string()).collect()),
                Param::TextArray(columns.iter().map(|(_, c)| c.to_string()).collect()),
            ],
        },
    )
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
    /// `p`, `u`, `x` or `c`.
    pub kind: String,
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

/// A changed column's own comment, privileges and NOT NULL constraint's
/// name.
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
/// column level): a trigger's column list or `WHEN`, a row-level security
/// policy, extended statistics, a rule, a generated column, a
/// publication's column list or row filter, a function with a
/// SQL-standard body. None moves with the column yet: each is refused
/// before anything runs, named with what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherDependent {
    /// `trigger`, `policy`, `statistics`, `rule`, `generated column`,
    /// `publication`, `function` or `object`.
    pub kind: String,
    /// `pg_describe_object`: "trigger t on table d", …
    pub description: String,
    /// Its definition as the server writes it, where there is one.
    pub definition: Option<String>,
    /// What `DROP STATISTICS`, `DROP TRIGGER`, `DROP POLICY` or `ALTER
    /// PUBLICATION … DROP TABLE` names, every name quoted: a statistics
    /// object (qualified), or `name ON table`.
    #[serde(default)]
    pub drop_target: Option<String>,
    /// Made again from its definition over the new column: statistics on
    /// columns (not expressions, which might not hold over uuid), a
    /// trigger that belongs to no constraint (its `WHEN` typed over the
    /// new columns first, old keys in it translated), a policy, a rule, a
    /// publication's column list without a row filter.
    #[serde(default)]
    pub carried: bool,
    /// A trigger's `tgenabled` (`O`, `D`, `R`, `A`), given back after.
    #[serde(default)]
    pub enabled: Option<String>,
    /// A trigger's table and its `WHEN` as a node tree.
    #[serde(default)]
    pub trigger_when: Option<(u32, String)>,
    /// Its oid (in its catalog).
    #[serde(default)]
    pub oid: u32,
    /// A policy's table.
    #[serde(default)]
    pub policy_table: Option<u32>,
    /// A policy's `USING` and `WITH CHECK` expressions.
    #[serde(default)]
    pub policy_expressions: Option<Vec<Option<String>>>,
    /// A policy's `USING` and `WITH CHECK` node trees.
    #[serde(default)]
    pub policy_trees: Option<Vec<Option<String>>>,
    /// A rule's table, and its `WHERE` and actions as node trees.
    #[serde(default)]
    pub rule_trees: Option<(u32, Option<String>, Option<String>)>,
    /// Whether a policy's expressions read tables (a subquery): then they
    /// are typed only when made again, over every changed column at once
    /// (a failure rolls the change back), not probed alone before.
    #[serde(default)]
    pub policy_reads_tables: Option<bool>,
    /// Why it cannot move, when a probe said so.
    #[serde(default)]
    pub refused: Option<String>,
    /// A generated column: (its table, its number).
    #[serde(default)]
    pub generated: Option<(u32, i16)>,
    /// A generated column's expression.
    #[serde(default)]
    pub generated_expression: Option<String>,
    /// What depends on a generated column (an index, a view): it would go
    /// with the column when it is computed again.
    #[serde(default)]
    pub generated_users: Vec<String>,
}

impl OtherDependent {
    /// A generated column's (table, number).
    pub fn generated_at(&self) -> Option<(u32, i16)> {
        self.generated
    }

    /// Its drop before the change and its making again after, from its
    /// definition (a trigger in the state it fired in): carried objects
    /// only.
    pub fn remade(&self) -> Option<(Vec<Action>, Vec<Action>)> {
        if !self.carried {
            return None;
        }
        let target = self.drop_target.clone()?;
        let definition = self.definition.clone()?;
        let make = vec![Action::Object(Object::CreateFromDefinition {
            definition: definition.clone(),
        })];
        Some(match self.kind.as_str() {
            "statistics" => (
                vec![Action::Object(Object::DropStatistics { name: target })],
                make,
            ),
            "policy" => {
                let (name, table) = target.split_once(" ON ")?;
                (
                    vec![Action::Object(Object::DropPolicy {
                        name: name.to_string(),
                        table: table.to_string(),
                    })],
                    make,
                )
            }
            // Computed again over the new columns: dropped before the
            // fill, added again after (a rewrite of its table).
            "generated column" => {
                let (column, table) = target.split_once(" ON ")?;
                (
                    vec![Action::Table(Table::DropColumn {
                        table: table.to_string(),
                        column: unquoted(column),
                    })],
                    vec![Action::Object(Object::CreateFromDefinition {
                        definition: format!("ALTER TABLE {table} ADD COLUMN {definition}"),
                    })],
                )
            }
            "rule" => {
                let (name, table) = target.split_once(" ON ")?;
                (
                    vec![Action::Object(Object::DropRule {
                        name: name.to_string(),
                        table: table.to_string(),
                    })],
                    make,
                )
            }
            "publication" => {
                let (publication, table) = target.split_once(" ON ")?;
                (
                    vec![Action::Object(Object::DropPublicationTable {
                        publication: publication.to_string(),
                        table: table.to_string(),
                    })],
                    make,
                )
            }
            "trigger" => {
                let (name, table) = target.split_once(" ON ")?;
                let mut make = make;
                let state = match self.enabled.as_deref() {
                    Some("D") => Some("DISABLE"),
                    Some("R") => Some("ENABLE REPLICA"),
                    Some("A") => Some("ENABLE ALWAYS"),
                    _ => None,
                };
                if let Some(state) = state {
                    make.push(Action::Object(Object::SetTrigger {
                        table: table.to_string(),
                        trigger: unquoted(name),
                        state: state.to_string(),
                    }));
                }
                (
                    vec![Action::Object(Object::DropTrigger {
                        name: name.to_string(),
                        table: table.to_string(),
                    })],
                    make,
                )
            }
            _ => return None,
        })
    }

    /// A trigger's `WHEN` condition as its definition writes it (between
    /// `WHEN (` and `) EXECUTE`).
    pub fn when_condition(&self) -> Option<&str> {
        self.trigger_when.as_ref()?;
        let definition = self.definition.as_deref()?;
        let start = definition.find(" WHEN (")? + " WHEN (".len();
        let end = definition.rfind(") EXECUTE ")?;
        definition.get(start..end)
    }

    /// What to do before the migration (and after it) instead.
    pub fn way_out(&self) -> &'static str {
        match self.kind.as_str() {
            "trigger" => "drop the trigger before the migration and create it again after, its WHEN comparing the new column with a value of the new type",
            "policy" => "its expression does not hold over uuid: drop the policy before the migration and create it again after over the new column, comparing it with a value of the new type (a setting read as uuid, the new key)",
            "statistics" => "drop the statistics before the migration and CREATE STATISTICS again after",
            "rule" => "drop the rule before the migration and create it again after",
            "generated column" => "its values change with the key: ask for it to be computed again over the new column (--regenerate TABLE.COLUMN), or drop it before the migration and add it again after",
            "function" => "its SQL-standard body (BEGIN ATOMIC) follows the column by number: drop the function before the migration and create it again after over the new column (a parameter or result of the old key's type becomes uuid)",
            "publication" => "its row filter might not hold over uuid: take the table out of the publication (ALTER PUBLICATION … DROP TABLE) before the migration and add it back after with its filter over the new column",
            _ => "drop it before the migration and make it again after",
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
    /// Columns with a comment or privileges.
    pub columns: Vec<ColumnExtras>,
    /// Every other object tied to a changed column.
    #[serde(default)]
    pub others: Vec<OtherDependent>,
}

impl Dependents {
    /// The objects tied to a changed column that cannot move with it,
    /// named with what each says and the way out: refused before anything
    /// runs (none is left on an old column unseen).
    pub fn refuse_others(&self) -> Result<(), DbError> {
        let refused: Vec<&OtherDependent> = self
            .others
            .iter()
            .filter(|o| o.remade().is_none())
            .collect();
        if refused.is_empty() {
            return Ok(());
        }
        let named: Vec<String> = refused
            .iter()
            .map(|o| {
                let why = o
                    .refused
                    .as_ref()
                    .map_or_else(String::new, |w| format!(" {w};"));
                match &o.definition {
                    Some(d) => format!("{} ({d}):{why} {}", o.description, o.way_out()),
                    None => format!("{}:{why} {}", o.description, o.way_out()),
                }
            })
            .collect();
        Err(DbError::refused(
            "table",
            format!(
                "{} on a column the migration changes would stay on the old column: {}",
                if named.len() == 1 {
                    "an object".to_string()
                } else {
                    format!("{} objects", named.len())
                },
                named.join("; ")
            ),
        ))
    }
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

impl ConstraintDependent {
    /// The expressions that must still type over uuid columns: a CHECK's,
    /// its index's expressions and predicate.
    pub fn expressions(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.expression.iter().map(String::as_str).collect();
        all.extend(self.shape.expressions());
        all
    }
}

/// The probe of `expressions` over `table` with the columns `to_uuid` as
/// uuid (the others as they are): whether the server still takes them.
/// Analysed only: over `LIMIT 0` no row is read and no function called;
/// one row comes back.
pub fn probe(
    name: &str,
    what: &str,
    table: &Relation,
    to_uuid: &[i16],
    expressions: &[&str],
) -> Read {
    probe_as(name, what, table, to_uuid, expressions, &["x"])
}

/// [`probe`] with the table's row named by each of `aliases` (a trigger's
/// `WHEN` names it `new` and `old`).
pub fn probe_as(
    name: &str,
    what: &str,
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
    Read::probe(
        name,
        what,
        Query::new(format!(
            "SELECT {} WHERE NOT EXISTS (SELECT FROM {} WHERE {} IS NULL)",
            quote_literal(&Probe::ran_answer()),
            rows.join(", "),
            uses.join(" IS NULL AND ")
        )),
    )
}

/// Where a dependent of `table` cannot move to uuid columns (`changed`
/// of it): the reason, or none. Probes the server answered (`answers`,
/// under `probe_name`) say whether its expressions still type.
pub fn cannot_carry(
    answers: &Answers,
    probe_name: &str,
    shape: &IndexShape,
    changed: &[i16],
) -> Result<Option<String>, DbError> {
    if let Some(why) = unfit(&shape.keys, shape.uuid_class, changed) {
        return Ok(Some(why.to_string()));
    }
    match answers.get::<Probe>(probe_name, "probe")? {
        Some(Probe::Refused { message }) => {
            Ok(Some(format!("over uuid the server refuses it: {message}")))
        }
        _ => Ok(None),
    }
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

/// A quoted identifier's name (`"Moved"` → `Moved`), as
/// [`Object::SetTrigger`] takes it.
fn unquoted(quoted: &str) -> String {
    match quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => quoted.to_string(),
    }
}

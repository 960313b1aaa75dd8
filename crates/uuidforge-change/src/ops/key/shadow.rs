//! What an online copy needs to know of each table it writes, beyond the
//! catalog snapshot ([`Shadowed`]): everything a shadow table must carry
//! to take the table's place — its indexes and the constraints they back,
//! its foreign keys both ways, identity columns and owned sequences with
//! their state, comments, privileges, owner, options, replica identity,
//! triggers, row-level security and its policies — and what the copy
//! cannot carry yet, by name (rules, views, publications, …), refused
//! before anything runs.

use crate::ops::{Named, Read, Reading};
use serde::Deserialize;

/// The read of the tables a copy writes.
pub const SHADOWED: Named<Vec<Shadowed>> = Named::new(
    "shadowed",
    "read what a copy of each table written must carry (indexes, keys both ways, sequences, comments, privileges, options)",
);

/// One index of a table, with the constraint it backs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ShadowIndex {
    /// Its name.
    pub name: String,
    /// `pg_get_indexdef` after `ON table ` (`USING btree (a)`), none when
    /// its head was not the expected one.
    pub tail: Option<String>,
    /// `UNIQUE`.
    pub unique: bool,
    /// Over a changed column with an expression or a predicate.
    pub changed_expression: bool,
    /// The constraint it backs: `p`, `u` or `x`, else none.
    pub constraint: Option<String>,
    /// That constraint's deferrability (`DEFERRABLE INITIALLY DEFERRED`…).
    pub deferrable: String,
    /// The replica identity.
    pub replica_identity: bool,
    /// Its comment (the index's, or its constraint's).
    pub comment: Option<String>,
}

/// A foreign key to be made again over the copy.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ShadowForeignKey {
    /// The table declaring it, quoted and qualified.
    pub table: String,
    /// Its table's oid.
    pub table_oid: u32,
    /// Its name.
    pub name: String,
    /// `pg_get_constraintdef`.
    pub definition: String,
    /// Its comment.
    pub comment: Option<String>,
}

/// An identity column or a column whose default takes the next value of a
/// sequence it owns (`serial`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ShadowSequence {
    /// The column.
    pub column: String,
    /// The sequence, quoted and qualified.
    pub sequence: String,
    /// Its name alone.
    pub sequence_name: String,
    /// `a` (`ALWAYS`), `d` (`BY DEFAULT`), or empty for an owned sequence.
    pub identity: String,
    /// Its options as `CREATE SEQUENCE` takes them.
    pub options: String,
}

/// A privilege on the table or one of its columns.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ShadowGrant {
    /// `SELECT`, …
    pub privilege: String,
    /// The column, for a column's privilege.
    pub column: Option<String>,
    /// A role, quoted, or `PUBLIC`.
    pub grantee: String,
    /// `WITH GRANT OPTION`.
    pub grantable: bool,
}

/// A trigger of the table (not one the server makes for a constraint).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ShadowTrigger {
    /// Its name.
    pub name: String,
    /// `pg_get_triggerdef`.
    pub definition: String,
    /// How the definition names the table (` ON schema.table `, then
    /// ` ON table `: the server qualifies it only when the search path
    /// does not find it).
    pub on: Vec<String>,
    /// `O` (enabled), `D` (disabled), `R` (replica), `A` (always).
    pub enabled: String,
    /// Its comment.
    pub comment: Option<String>,
}

impl ShadowTrigger {
    /// The definition before and after the table's name (`CREATE TRIGGER
    /// t BEFORE UPDATE`, `FOR EACH ROW EXECUTE FUNCTION f()`), so that it
    /// can be made again on the table that takes its place; none when the
    /// table's name is not found after the trigger's.
    pub fn around_table(&self) -> Option<(&str, &str)> {
        // The table's name comes after the trigger's (which may hold
        // anything, quoted).
        let from =
            ("CREATE CONSTRAINT TRIGGER ".len() + self.name.len()).min(self.definition.len());
        let from = if self.definition.is_char_boundary(from) {
            from
        } else {
            return None;
        };
        self.on.iter().find_map(|on| {
            let at = self.definition[from..].find(on.as_str())? + from;
            Some((&self.definition[..at], &self.definition[at + on.len()..]))
        })
    }
}

/// A row-level security policy of the table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ShadowPolicy {
    /// Its name.
    pub name: String,
    /// `CREATE POLICY … ON schema.table …` as the catalog holds it.
    pub definition: String,
    /// Its comment.
    pub comment: Option<String>,
}

/// A table a copy writes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Shadowed {
    /// Its oid.
    pub oid: u32,
    /// Its owner, quoted.
    pub owner: String,
    /// Its options (`fillfactor=70`).
    pub options: Vec<String>,
    /// `d` (default), `n`, `f`, `i`.
    pub replica_identity: String,
    /// Its comment.
    pub comment: Option<String>,
    /// Its columns' comments (name, text).
    pub column_comments: Vec<(String, String)>,
    /// Its columns' statistics targets (name, target), where set.
    pub statistics_targets: Vec<(String, i32)>,
    /// Its indexes.
    pub indexes: Vec<ShadowIndex>,
    /// Its `CHECK` constraints' comments (name, text).
    pub check_comments: Vec<(String, String)>,
    /// Foreign keys it declares to tables the copy does not write.
    pub foreign_keys_out: Vec<ShadowForeignKey>,
    /// Foreign keys to it from tables the copy does not write.
    pub foreign_keys_in: Vec<ShadowForeignKey>,
    /// Foreign keys it declares to tables the copy writes (the references
    /// among them).
    pub foreign_keys_within: Vec<ShadowForeignKey>,
    /// Identity columns and owned sequences.
    pub sequences: Vec<ShadowSequence>,
    /// Its privileges.
    pub grants: Vec<ShadowGrant>,
    /// Its primary key's columns, with their types.
    pub primary_key: Vec<(String, String)>,
    /// Its triggers.
    pub triggers: Vec<ShadowTrigger>,
    /// Row-level security enabled.
    pub row_security: bool,
    /// Row-level security forced on its owner too.
    pub force_row_security: bool,
    /// Its policies.
    pub policies: Vec<ShadowPolicy>,
    /// Its triggers, row-level security and policies as
    /// [`carried_sql`] describes them: the same on the table that takes
    /// its place.
    pub carried: String,
    /// Its own definition as [`definition_sql`] describes it.
    pub definition: String,
    /// What a copy cannot carry yet, each described.
    pub not_carried: Vec<String>,
}

/// The triggers (definition, state, comment), row-level security and
/// policies (each part of each, comment) of the table `oid` (SQL), as one
/// text: what a copy makes again, the same on the table in its place (the
/// copy's own log trigger, `log_trigger`, left out).
pub fn carried_sql(oid: &str, log_trigger: &str) -> String {
    format!(
        "concat_ws(E'\\n', \
         (SELECT string_agg(concat_ws(' | ', pg_catalog.pg_get_triggerdef(g.oid), g.tgenabled, pg_catalog.obj_description(g.oid, 'pg_trigger')), E'\\n' ORDER BY g.tgname) \
            FROM pg_catalog.pg_trigger g WHERE g.tgrelid = {oid} AND NOT g.tgisinternal AND g.tgname <> {log}), \
         (SELECT c.relrowsecurity || ' ' || c.relforcerowsecurity FROM pg_catalog.pg_class c WHERE c.oid = {oid}), \
         (SELECT string_agg(concat_ws(' | ', p.polname, p.polpermissive, p.polcmd, p.polroles::text, pg_catalog.pg_get_expr(p.polqual, p.polrelid), \
                 pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), pg_catalog.obj_description(p.oid, 'pg_policy')), E'\\n' ORDER BY p.polname) \
            FROM pg_catalog.pg_policy p WHERE p.polrelid = {oid}))",
        log = uuidforge_ident::quote_literal(log_trigger)
    )
}

/// The table `oid`'s (SQL) own definition beside its indexes, constraints,
/// triggers and policies — its columns (name, type, `NOT NULL`, default,
/// collation, statistics target, comment, privileges), owner, privileges,
/// options, replica identity, comment — as one text: what the copy read
/// when planning and makes again on the shadow, which the swap finds
/// unchanged on the table before it drops it.
pub fn definition_sql(oid: &str) -> String {
    format!(
        "concat_ws(E'\n', \
         (SELECT concat_ws(' | ', c.relowner::regrole::text, c.relacl::text, c.reloptions::text, c.relreplident, pg_catalog.obj_description(c.oid, 'pg_class')) \
            FROM pg_catalog.pg_class c WHERE c.oid = {oid}), \
         (SELECT string_agg(concat_ws(' | ', a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attcollation, a.attstattarget, \
                 a.attacl::text, pg_catalog.pg_get_expr(d.adbin, d.adrelid), pg_catalog.col_description(a.attrelid, a.attnum)), E'\n' ORDER BY a.attnum) \
            FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
           WHERE a.attrelid = {oid} AND a.attnum > 0 AND NOT a.attisdropped))"
    )
}

/// The read of `tables` (their oids), the tables a copy writes.
pub fn read(tables: &[u32]) -> Read {
    SHADOWED.read(uuidforge_db::plan::Query {
        sql: SHADOWED_SQL
            .replace(
                "{carried}",
                &carried_sql("t.oid", super::naming::COPY_TRIGGER),
            )
            .replace("{definition}", &definition_sql("t.oid"))
            .replace(
                "{policy_definition}",
                &super::dependents::policy_definition_sql("p", "t.nspname", "t.relname"),
            ),
        params: vec![uuidforge_db::plan::Param::TextArray(
            tables.iter().map(u32::to_string).collect(),
        )],
    })
}

/// One row of JSON text: an array of [`Shadowed`], `$1` the oids (text[]).
const SHADOWED_SQL: &str = r#"
WITH t AS (SELECT c.oid, c.relname, n.nspname, c.relowner, c.reloptions, c.relreplident, c.relrowsecurity, c.relforcerowsecurity,
                  c.relpersistence, c.reltablespace, c.reloftype, c.relhassubclass, c.relkind, c.relispartition
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE c.oid = ANY ($1::text[]::oid[])),
     fk AS (SELECT k.oid, k.conname, k.conrelid, k.confrelid, pg_catalog.pg_get_constraintdef(k.oid) AS def,
                   pg_catalog.obj_description(k.oid, 'pg_constraint') AS comment,
                   pg_catalog.format('%I.%I', n.nspname, c.relname) AS tbl
              FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
              JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE k.contype = 'f' AND k.conparentid = 0
               AND (k.conrelid IN (SELECT oid FROM t) OR k.confrelid IN (SELECT oid FROM t)))
SELECT coalesce(json_agg(json_build_object(
  'oid', t.oid::int8,
  'owner', pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(t.relowner)),
  'options', coalesce(t.reloptions, '{}'),
  'replica_identity', t.relreplident,
  'comment', pg_catalog.obj_description(t.oid, 'pg_class'),
  'column_comments', (SELECT coalesce(json_agg(json_build_array(a.attname, d.description) ORDER BY a.attnum), '[]')
       FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_description d
         ON d.objoid = t.oid AND d.classoid = 'pg_catalog.pg_class'::regclass AND d.objsubid = a.attnum
      WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped),
  'statistics_targets', (SELECT coalesce(json_agg(json_build_array(a.attname, a.attstattarget) ORDER BY a.attnum), '[]')
       FROM pg_catalog.pg_attribute a
      WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget >= 0),
  'indexes', (SELECT coalesce(json_agg(json_build_object(
         'name', ic.relname,
         'tail', CASE WHEN pg_catalog.starts_with(pg_catalog.pg_get_indexdef(i.indexrelid), h.head)
                      THEN substr(pg_catalog.pg_get_indexdef(i.indexrelid), length(h.head) + 1)
                      WHEN pg_catalog.starts_with(pg_catalog.pg_get_indexdef(i.indexrelid), h.short)
                      THEN substr(pg_catalog.pg_get_indexdef(i.indexrelid), length(h.short) + 1) END,
         'unique', i.indisunique,
         'changed_expression', (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL),
         'constraint', k.contype,
         'deferrable', CASE WHEN k.condeferrable AND k.condeferred THEN ' DEFERRABLE INITIALLY DEFERRED'
                            WHEN k.condeferrable THEN ' DEFERRABLE' ELSE '' END,
         'replica_identity', i.indisreplident,
         'comment', coalesce(pg_catalog.obj_description(k.oid, 'pg_constraint'),
                             pg_catalog.obj_description(i.indexrelid, 'pg_class'))) ORDER BY ic.relname), '[]')
       FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
       LEFT JOIN pg_catalog.pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = t.oid AND k.contype IN ('p', 'u', 'x')
       CROSS JOIN LATERAL (SELECT pg_catalog.format('CREATE %sINDEX %I ON %I.%I ', CASE WHEN i.indisunique THEN 'UNIQUE ' END, ic.relname, t.nspname, t.relname) AS head,
                                  pg_catalog.format('CREATE %sINDEX %I ON %I ', CASE WHEN i.indisunique THEN 'UNIQUE ' END, ic.relname, t.relname) AS short) h
      WHERE i.indrelid = t.oid),
  'check_comments', (SELECT coalesce(json_agg(json_build_array(k.conname, pg_catalog.obj_description(k.oid, 'pg_constraint')) ORDER BY k.conname), '[]')
       FROM pg_catalog.pg_constraint k WHERE k.conrelid = t.oid AND k.contype = 'c'
        AND pg_catalog.obj_description(k.oid, 'pg_constraint') IS NOT NULL),
  'foreign_keys_out', (SELECT coalesce(json_agg(json_build_object('table', fk.tbl, 'table_oid', fk.conrelid::int8, 'name', fk.conname, 'definition', fk.def, 'comment', fk.comment) ORDER BY fk.conname), '[]')
       FROM fk WHERE fk.conrelid = t.oid AND fk.confrelid NOT IN (SELECT oid FROM t)),
  'foreign_keys_in', (SELECT coalesce(json_agg(json_build_object('table', fk.tbl, 'table_oid', fk.conrelid::int8, 'name', fk.conname, 'definition', fk.def, 'comment', fk.comment) ORDER BY fk.tbl, fk.conname), '[]')
       FROM fk WHERE fk.confrelid = t.oid AND fk.conrelid NOT IN (SELECT oid FROM t)),
  'foreign_keys_within', (SELECT coalesce(json_agg(json_build_object('table', fk.tbl, 'table_oid', fk.conrelid::int8, 'name', fk.conname, 'definition', fk.def, 'comment', fk.comment) ORDER BY fk.conname), '[]')
       FROM fk WHERE fk.conrelid = t.oid AND fk.confrelid IN (SELECT oid FROM t)),
  'sequences', (SELECT coalesce(json_agg(json_build_object(
         'column', a.attname,
         'sequence', pg_catalog.format('%I.%I', sn.nspname, s.relname),
         'sequence_name', s.relname,
         'identity', a.attidentity,
         -- The type is the column's.
         'options', pg_catalog.format('INCREMENT BY %s MINVALUE %s MAXVALUE %s START WITH %s CACHE %s %sCYCLE',
                      q.seqincrement, q.seqmin, q.seqmax, q.seqstart, q.seqcache,
                      CASE WHEN q.seqcycle THEN '' ELSE 'NO ' END)) ORDER BY a.attnum), '[]')
       FROM pg_catalog.pg_depend d
       JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S'
       JOIN pg_catalog.pg_namespace sn ON sn.oid = s.relnamespace
       JOIN pg_catalog.pg_sequence q ON q.seqrelid = s.oid
       JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
      WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.refclassid = 'pg_catalog.pg_class'::regclass
        AND d.refobjid = t.oid AND d.deptype IN ('a', 'i')),
  'grants', (SELECT coalesce(json_agg(json_build_object('privilege', g.privilege, 'column', g.col, 'grantee', g.grantee, 'grantable', g.grantable) ORDER BY g.col NULLS FIRST, g.grantee, g.privilege), '[]')
       FROM (SELECT x.privilege_type AS privilege, NULL::name AS col,
                    CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(x.grantee)) END AS grantee,
                    x.is_grantable AS grantable
               FROM pg_catalog.aclexplode((SELECT c.relacl FROM pg_catalog.pg_class c WHERE c.oid = t.oid)) x
              WHERE x.grantee <> t.relowner
             UNION ALL
             SELECT x.privilege_type, a.attname,
                    CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(x.grantee)) END,
                    x.is_grantable
               FROM pg_catalog.pg_attribute a CROSS JOIN LATERAL pg_catalog.aclexplode(a.attacl) x
              WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attacl IS NOT NULL) g),
  'primary_key', (SELECT coalesce(json_agg(json_build_array(a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)) ORDER BY k.ord), '[]')
       FROM pg_catalog.pg_constraint p CROSS JOIN LATERAL unnest(p.conkey) WITH ORDINALITY k(num, ord)
       JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.num
      WHERE p.conrelid = t.oid AND p.contype = 'p'),
  'triggers', (SELECT coalesce(json_agg(json_build_object(
         'name', g.tgname,
         'definition', pg_catalog.pg_get_triggerdef(g.oid),
         'on', json_build_array(pg_catalog.format(' ON %I.%I ', t.nspname, t.relname), pg_catalog.format(' ON %I ', t.relname)),
         'enabled', g.tgenabled::text,
         'comment', pg_catalog.obj_description(g.oid, 'pg_trigger')) ORDER BY g.tgname), '[]')
       FROM pg_catalog.pg_trigger g WHERE g.tgrelid = t.oid AND NOT g.tgisinternal),
  'carried', {carried},
  'definition', {definition},
  'row_security', t.relrowsecurity,
  'force_row_security', t.relforcerowsecurity,
  'policies', (SELECT coalesce(json_agg(json_build_object(
         'name', p.polname,
         'definition', {policy_definition},
         'comment', pg_catalog.obj_description(p.oid, 'pg_policy')) ORDER BY p.polname), '[]')
       FROM pg_catalog.pg_policy p WHERE p.polrelid = t.oid),
  'not_carried', (SELECT coalesce(json_agg(w ORDER BY w), '[]') FROM (
       SELECT 'it is ' || CASE t.relkind WHEN 'p' THEN 'partitioned' ELSE 'a partition' END AS w
        WHERE t.relkind = 'p' OR t.relispartition
       UNION ALL SELECT 'it has inheritance children' WHERE t.relhassubclass AND t.relkind = 'r'
       UNION ALL SELECT 'it inherits from ' || i.inhparent::regclass::text FROM pg_catalog.pg_inherits i WHERE i.inhrelid = t.oid AND NOT t.relispartition
       UNION ALL SELECT 'it is unlogged or temporary' WHERE t.relpersistence <> 'p'
       UNION ALL SELECT 'it is in a tablespace of its own' WHERE t.reltablespace <> 0
       UNION ALL SELECT 'it is a typed table' WHERE t.reloftype <> 0
       UNION ALL SELECT 'it has no primary key' WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_constraint p WHERE p.conrelid = t.oid AND p.contype = 'p')
       UNION ALL SELECT pg_catalog.format('rule %I', r.rulename) FROM pg_catalog.pg_rewrite r WHERE r.ev_class = t.oid AND r.rulename <> '_RETURN'
       UNION ALL SELECT pg_catalog.format('publication %I', p.pubname) FROM pg_catalog.pg_publication_rel r JOIN pg_catalog.pg_publication p ON p.oid = r.prpubid WHERE r.prrelid = t.oid
       UNION ALL SELECT pg_catalog.format('publication %I (FOR ALL TABLES)', p.pubname) FROM pg_catalog.pg_publication p WHERE p.puballtables
       UNION ALL SELECT pg_catalog.format('publication %I (FOR TABLES IN SCHEMA %I)', p.pubname, t.nspname) FROM pg_catalog.pg_publication_namespace pn JOIN pg_catalog.pg_publication p ON p.oid = pn.pnpubid JOIN pg_catalog.pg_namespace n ON n.oid = pn.pnnspid WHERE n.nspname = t.nspname
       UNION ALL SELECT pg_catalog.format('statistics object %I', s.stxname) FROM pg_catalog.pg_statistic_ext s WHERE s.stxrelid = t.oid
       UNION ALL SELECT pg_catalog.format('generated column %I', a.attname) FROM pg_catalog.pg_attribute a WHERE a.attrelid = t.oid AND a.attgenerated <> ''
       UNION ALL SELECT pg_catalog.format('options of column %I', a.attname) FROM pg_catalog.pg_attribute a WHERE a.attrelid = t.oid AND a.attnum > 0
          -- Debian's 15 stores the server version as an option of every column.
          AND EXISTS (SELECT FROM unnest(a.attoptions) o WHERE o NOT LIKE 'pg\_attver=%')
       UNION ALL SELECT pg_catalog.format('options of its TOAST table') FROM pg_catalog.pg_class c JOIN pg_catalog.pg_class x ON x.oid = c.reltoastrelid WHERE c.oid = t.oid AND x.reloptions IS NOT NULL
       UNION ALL SELECT 'a security label' FROM pg_catalog.pg_seclabel l WHERE l.objoid = t.oid AND l.classoid = 'pg_catalog.pg_class'::regclass
       UNION ALL SELECT pg_catalog.format('exclusion constraint %I', k.conname) FROM pg_catalog.pg_constraint k WHERE k.conrelid = t.oid AND k.contype = 'x'
       UNION ALL SELECT 'it belongs to an extension' FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = t.oid AND d.deptype = 'e'
       -- What else depends on it (views, functions with SQL bodies, columns of its row type, ...), by name.
       UNION ALL SELECT DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid)
         FROM pg_catalog.pg_depend d
        WHERE d.deptype = 'n' AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = t.oid
          AND d.classid NOT IN ('pg_catalog.pg_constraint'::regclass, 'pg_catalog.pg_attrdef'::regclass, 'pg_catalog.pg_class'::regclass,
                                'pg_catalog.pg_trigger'::regclass, 'pg_catalog.pg_policy'::regclass, 'pg_catalog.pg_statistic_ext'::regclass,
                                'pg_catalog.pg_publication_rel'::regclass)
       UNION ALL SELECT DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid)
         FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_type ty ON ty.typrelid = t.oid
        WHERE d.refclassid = 'pg_catalog.pg_type'::regclass AND d.refobjid = ty.oid AND d.deptype = 'n'
       UNION ALL SELECT DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid)
         FROM pg_catalog.pg_depend d
        WHERE d.deptype = 'n' AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = t.oid
          AND d.classid = 'pg_catalog.pg_class'::regclass
          AND NOT EXISTS (SELECT FROM pg_catalog.pg_index i WHERE i.indexrelid = d.objid)) w)
) ORDER BY t.oid), '[]')::text
FROM t
"#;

//! Catalog introspection beyond the snapshot ([`crate::catalog`]): what a
//! change plan reads about the columns it touches — the views over them
//! (with their definitions, to make them again), the indexes over them
//! that no constraint owns, and the partitions of partitioned tables —
//! each a query ([`crate::plan::Query`], one row of JSON text) and a pure
//! reader of its answer. What a change makes of them is its own.

use serde::Serialize;

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
    /// A materialized view's indexes (`pg_get_indexdef`).
    #[serde(default)]
    pub indexes: Option<Vec<String>>,
    /// Whether a materialized view holds data (`relispopulated`): made
    /// again, it is refreshed only then.
    #[serde(default)]
    pub populated: bool,
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
     'privilege', a.privilege_type, 'grantable', a.is_grantable)) FROM aclexplode(c.relacl) a WHERE a.grantee <> c.relowner), \
  'indexes', (SELECT json_agg(pg_get_indexdef(i.indexrelid) ORDER BY i.indexrelid) FROM pg_index i WHERE i.indrelid = c.oid), \
  'populated', c.relispopulated) \
  ORDER BY v.level, c.oid), '[]')::text \
FROM (SELECT view, max(level) AS level FROM dep GROUP BY view) v JOIN pg_class c ON c.oid = v.view JOIN pg_namespace n ON n.oid = c.relnamespace";

/// `sql` bound to columns (`$1` their tables' oids, `$2` their numbers,
/// both `text[]`).
fn over_columns(sql: &str, columns: &[(u32, i16)]) -> crate::plan::Query {
    crate::plan::Query {
        sql: sql.to_string(),
        params: vec![
            crate::plan::Param::TextArray(columns.iter().map(|(t, _)| t.to_string()).collect()),
            crate::plan::Param::TextArray(columns.iter().map(|(_, c)| c.to_string()).collect()),
        ],
    }
}

/// The query reading the views over `watched` columns.
pub fn dependent_views_query(watched: &[(u32, i16)]) -> crate::plan::Query {
    over_columns(DEPENDENT_VIEWS_SQL, watched)
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
        uuidforge_ident::qualified(&self.schema, &self.name)
    }
}

/// The partitions of tables (`$1`: their oids as `text[]`), one row of
/// JSON text, an array of [`Partition`] ordered by oid.
pub const PARTITIONS_SQL: &str = "SELECT coalesce(json_agg(json_build_object('parent', i.inhparent::int8, 'oid', c.oid::int8, \
  'schema', n.nspname, 'name', c.relname, 'kind', c.relkind) ORDER BY c.oid), '[]')::text \
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
  WHERE i.inhparent::int8::text = ANY ($1::text[])";

/// `sql` bound to tables (`$1` their oids as `text[]`).
fn over_tables(sql: &str, tables: &[u32]) -> crate::plan::Query {
    crate::plan::Query {
        sql: sql.to_string(),
        params: vec![crate::plan::Param::TextArray(
            tables.iter().map(u32::to_string).collect(),
        )],
    }
}

/// The query reading the partitions of `tables`.
pub fn partitions_query(tables: &[u32]) -> crate::plan::Query {
    over_tables(PARTITIONS_SQL, tables)
}

/// A user trigger (not a constraint's internal one) on a table a change
/// writes: the change's own updates must not fire it, so it is disabled
/// around them and put back exactly as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct UserTrigger {
    /// Its table's oid.
    pub table: u32,
    /// Its table's schema.
    pub schema: String,
    /// Its table's name.
    pub table_name: String,
    /// The trigger's name.
    pub name: String,
    /// `pg_trigger.tgenabled`: `O` (fires), `D` (disabled), `R` (replica
    /// only), `A` (always).
    pub enabled: String,
    /// How deep its table is in a partition tree (0: not a partition):
    /// a state set on a partitioned table reaches its partitions, so
    /// states are put back parents first.
    pub depth: i32,
}

/// The user triggers of tables (`$1`: their oids as `text[]`) and of all
/// their partitions, except the batched migration's own
/// (`uuidforge_migrate`): one row of JSON text, an array of
/// [`UserTrigger`], parents first.
pub const USER_TRIGGERS_SQL: &str = "SELECT coalesce(json_agg(x ORDER BY x.depth, x.table, x.name), '[]')::text FROM ( \
  SELECT t.tgrelid::int8 AS table, n.nspname AS schema, c.relname AS table_name, t.tgname AS name, \
    t.tgenabled::text AS enabled, (SELECT count(*) FROM pg_partition_ancestors(t.tgrelid))::int4 - 1 AS depth \
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
  WHERE NOT t.tgisinternal AND t.tgname <> 'uuidforge_migrate' AND t.tgrelid IN ( \
    SELECT u.o::oid FROM unnest($1::text[]) u(o) \
    UNION SELECT p.relid FROM unnest($1::text[]) u(o), pg_partition_tree(u.o::oid) p)) x";

/// The query reading the user triggers of `tables` and their partitions.
pub fn user_triggers_query(tables: &[u32]) -> crate::plan::Query {
    over_tables(USER_TRIGGERS_SQL, tables)
}

/// The functions and procedures (not an extension's) whose definition
/// uses one of the columns (`$1` their names) together with a table
/// holding it (`$2`, pairwise: `id` with `customers`, not with any table
/// that has an `id`), each as a word, and so may stop working when the
/// columns change
/// type: one row of JSON text, an array of [`Mention`],
/// with what to review (`$3` the columns' type before, by oid).
pub const FUNCTIONS_USING_SQL: &str = r#"SELECT coalesce(json_agg(m ORDER BY m.name, m.mentions), '[]')::text FROM (
  SELECT CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END AS kind,
         format('%s.%s(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) AS name,
         w.word AS mentions,
         CASE WHEN p.prosqlbody IS NOT NULL
                THEN 'its body (BEGIN ATOMIC) follows the column by number, to ' || w.word || '_old: make it again over the new column'
              WHEN p.prorettype = $3::text::oid OR $3::text::oid = ANY (p.proargtypes)
                THEN 'takes or returns ' || format_type($3::text::oid, NULL) || ' and uses ' || w.word || ', which becomes uuid: review its signature and body'
              ELSE 'its body uses ' || w.word || ', which becomes uuid: review it' END AS action
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    CROSS JOIN (SELECT DISTINCT word FROM unnest($1::text[]) AS u(word)) AS w
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND p.prokind IN ('f', 'p')
     AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
     AND EXISTS (SELECT FROM unnest($1::text[], $2::text[]) AS t(word, name)
                  WHERE t.word = w.word
                    AND pg_get_functiondef(p.oid) ~* ('\m' || regexp_replace(t.word, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M')
                    AND pg_get_functiondef(p.oid) ~* ('\m' || regexp_replace(t.name, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M'))
) m"#;

/// The query listing the functions that use `columns[i]` and name
/// `tables[i]` (pairs: a column with a table holding it), whose type was
/// `type_oid`.
pub fn functions_using_query(
    columns: &[String],
    tables: &[String],
    type_oid: u32,
) -> crate::plan::Query {
    crate::plan::Query {
        sql: FUNCTIONS_USING_SQL.to_string(),
        params: vec![
            crate::plan::Param::TextArray(columns.to_vec()),
            crate::plan::Param::TextArray(tables.to_vec()),
            crate::plan::Param::Text(type_oid.to_string()),
        ],
    }
}

/// Something that mentions an old name and is not renamed by the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Mention {
    /// `function`, `procedure`, `trigger` or `policy`.
    pub kind: String,
    /// `schema.name(arguments)`, or `table: trigger` for a trigger.
    pub name: String,
    /// The old name it mentions.
    pub mentions: String,
    /// What to do.
    pub action: String,
}

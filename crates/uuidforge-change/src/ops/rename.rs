//! Renaming a key's column and, with it, the columns that
//! carry the same key, the indexes and constraints named after it and, on
//! request, the view columns that show it — as one plan of `ALTER`
//! statements, applied in one transaction, with the script that undoes it.
//!
//! What PostgreSQL cannot follow by itself is listed, never rewritten:
//! function bodies stored as text (PL/pgSQL, and SQL functions without
//! `BEGIN ATOMIC`) that mention an old name. Views, policies, triggers'
//! column lists and `WHEN` clauses, defaults and check constraints refer to
//! columns by number and follow a rename on their own.

use crate::action::{Action, Constraint, Index, RelationKind, Table};
use crate::ops::Reading;
use crate::ops::{
    distinct, one_line, touched, Answers, Backup, ChangePlan, Check, Operation, Planned, Read, Run,
    Statement, Step, Value,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use uuidforge_db::catalog::{ColumnRef, RelKind, Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::introspect::Mention;
use uuidforge_db::plan::{Param, Query};
use uuidforge_db::related::{self, Target};
use uuidforge_ident::MAX_IDENTIFIER;

/// What to rename.
#[derive(Debug, Clone, Default)]
pub struct RenameOptions {
    /// Also the columns that declared foreign keys tie to the target
    /// (referencing it, referenced by it, or referencing the same key).
    pub related: bool,
    /// Further columns (`table.column` or `schema.table.column`) renamed
    /// the same way.
    pub also: Vec<String>,
    /// Also view output columns that show a renamed column under its old
    /// name (without it they keep working under the old name).
    pub views: bool,
}

/// One renamed object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renamed {
    /// `column`, `view column`, `constraint` or `index`.
    pub kind: String,
    /// Schema.
    pub schema: String,
    /// The table or view (for an index, its table).
    pub table: String,
    /// The old name.
    pub from: String,
    /// The new name.
    pub to: String,
    /// Why it is renamed (`target`, `foreign key …`, `named`, `shows …`).
    pub why: String,
}

/// A column related to the target that keeps its name, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// `schema.table.column`.
    pub column: String,
    /// Why.
    pub reason: String,
}

/// The plan: the statements in order, the statements that undo them, and
/// what mentions an old name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RenamePlan {
    /// Everything renamed, in the order of `statements`.
    pub renamed: Vec<Renamed>,
    /// Related columns left as they are.
    pub kept: Vec<Kept>,
    /// The `ALTER` statements, in order.
    pub statements: Vec<String>,
    /// The statements that undo them, in order.
    pub undo: Vec<String>,
    /// What mentions an old name and is not renamed, for a hand edit.
    pub mentions: Vec<Mention>,
    /// The change the runner runs.
    pub change: ChangePlan,
}

impl Planned for RenamePlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

/// `name` with `old` replaced where it stands as a whole `_`-separated
/// part (`orders_customer_id_fkey` with `customer_id` → `client_id` gives
/// `orders_client_id_fkey`); `None` when it does not.
///
/// ```
/// use uuidforge_change::ops::rename::substitute;
/// assert_eq!(substitute("customer_id", "customer_id", "client_id").as_deref(), Some("client_id"));
/// assert_eq!(substitute("orders_customer_id_idx", "customer_id", "client_id").as_deref(),
///            Some("orders_client_id_idx"));
/// assert_eq!(substitute("customer_ids", "customer_id", "client_id"), None);
/// ```
pub fn substitute(name: &str, old: &str, new: &str) -> Option<String> {
    if old.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    let mut changed = false;
    let mut at_start = true;
    while let Some(i) = rest.find(old) {
        let before_ok = if i == 0 {
            at_start
        } else {
            rest.as_bytes()[i - 1] == b'_'
        };
        let after = &rest[i + old.len()..];
        let after_ok = after.is_empty() || after.starts_with('_');
        if before_ok && after_ok {
            out.push_str(&rest[..i]);
            out.push_str(new);
            changed = true;
        } else {
            out.push_str(&rest[..i + old.len()]);
        }
        rest = after;
        at_start = false;
    }
    out.push_str(rest);
    changed.then_some(out)
}

fn column_name(snapshot: &Snapshot, c: ColumnRef) -> Option<(&Relation, &str)> {
    let relation = snapshot.relation(c.relation)?;
    Some((relation, relation.column(c.column)?.name.as_str()))
}

/// `name` (of an index or constraint on `table` over columns `nums`) with
/// each renamed column's old name replaced by its new one.
fn named_after(
    snapshot: &Snapshot,
    columns: &BTreeMap<ColumnRef, (String, String)>,
    table: u32,
    nums: &[i16],
    name: &str,
) -> String {
    let mut name = name.to_string();
    for &column in nums {
        let c = ColumnRef {
            relation: table,
            column,
        };
        let Some((_, from)) = column_name(snapshot, c) else {
            continue;
        };
        // A partition's column is renamed with its partitioned table's.
        let renamed = columns.get(&c).or_else(|| {
            let root = snapshot.partition_root(table).filter(|r| r.oid != table)?;
            let num = root.column_named(from)?.num;
            columns.get(&ColumnRef {
                relation: root.oid,
                column: num,
            })
        });
        if let Some(next) = renamed.and_then(|(to, _)| substitute(&name, from, to)) {
            name = next;
        }
    }
    name
}

fn alter_kind(kind: RelKind) -> RelationKind {
    match kind {
        RelKind::View => RelationKind::View,
        RelKind::MaterializedView => RelationKind::MaterializedView,
        RelKind::ForeignTable => RelationKind::ForeignTable,
        _ => RelationKind::Table,
    }
}

/// The statements of a rename, their undo and what they rename, built up
/// in order.
#[derive(Default)]
struct Script {
    renamed: Vec<Renamed>,
    actions: Vec<Action>,
}

impl Script {
    /// A rename, with what it renames.
    fn rename(&mut self, r: Renamed, action: Action) {
        self.actions.push(action);
        self.renamed.push(r);
    }

    /// The renames as statements.
    fn statements(&self) -> Vec<String> {
        crate::action::statements(&self.actions)
    }

    /// The renames undone, last first.
    fn undo(&self) -> Vec<String> {
        self.actions
            .iter()
            .rev()
            .filter_map(Action::undo)
            .flat_map(|a| a.statements())
            .collect()
    }
}

/// Columns to rename: (column → (new name, why)).
type Columns = BTreeMap<ColumnRef, (String, String)>;

/// The target column, the columns renamed with it and the related ones
/// left as they are; the target's old name.
fn choose_columns(
    snapshot: &Snapshot,
    column: &str,
    new_name: &str,
    options: &RenameOptions,
) -> Result<(Columns, Vec<Kept>, String), DbError> {
    // The new name reads as in ALTER TABLE ... RENAME COLUMN: unquoted
    // folds to lower case, quoted keeps its case.
    let new_name = &match &uuidforge_ident::parse_name(new_name)
        .map_err(|e| DbError::invalid("new name", e))?[..]
    {
        [one] => one.name.clone(),
        _ => {
            return Err(DbError::invalid(
                "new name",
                format!(
                    "'{new_name}' is not one column name (quote a name that holds a dot: \"a.b\")"
                ),
            ))
        }
    };
    if new_name.is_empty() || new_name.len() > MAX_IDENTIFIER {
        return Err(DbError::invalid(
            "new name",
            format!("'{new_name}' is not a column name (expected 1 to {MAX_IDENTIFIER} bytes)"),
        ));
    }
    let Target::Column(target) = Target::parse_column(snapshot, column)? else {
        unreachable!("parse_column returns a column");
    };
    let (_, old_name) = column_name(snapshot, target)
        .ok_or_else(|| DbError::not_found("column", "not found in the catalog"))?;
    if old_name == new_name {
        return Err(DbError::invalid(
            "new name",
            format!("'{new_name}' is the column's name already (expected another name)"),
        ));
    }
    let old_name = old_name.to_string();
    let mut columns = Columns::new();
    columns.insert(target, (new_name.to_string(), "target".to_string()));
    let mut kept = Vec::new();
    if options.related {
        related_columns(
            snapshot,
            target,
            &old_name,
            new_name,
            &mut columns,
            &mut kept,
        )?;
    }
    for spec in &options.also {
        let Target::Column(c) = Target::parse_column(snapshot, spec)? else {
            unreachable!("parse_column returns a column");
        };
        let (_, name) = column_name(snapshot, c)
            .ok_or_else(|| DbError::not_found("also", "not found in the catalog"))?;
        let renamed = substitute(name, &old_name, new_name).unwrap_or_else(|| new_name.into());
        columns.entry(c).or_insert((renamed, "named".to_string()));
    }
    Ok((columns, kept, old_name))
}

/// The columns declared foreign keys tie to `target`: renamed where their
/// name holds the old one, else kept with the reason.
fn related_columns(
    snapshot: &Snapshot,
    target: ColumnRef,
    old_name: &str,
    new_name: &str,
    columns: &mut Columns,
    kept: &mut Vec<Kept>,
) -> Result<(), DbError> {
    let related_plan = related::plan(snapshot, Target::Column(target));
    for r in related::report(snapshot, &related_plan, None)? {
        let Some(evidence) = r
            .evidence
            .iter()
            .find(|e| matches!(e.kind, "foreign_key" | "referenced_by" | "same_key"))
        else {
            continue;
        };
        let relation = snapshot
            .relation_named(&r.schema, &r.table)
            .ok_or_else(|| {
                DbError::not_found("table", format!("{}.{} is gone", r.schema, r.table))
            })?;
        // A partition's column is its partitioned table's: renamed there
        // (which renames it in every partition), as when the foreign key
        // is declared on each partition only.
        let relation = match snapshot.partition_root(relation.oid) {
            Some(root) if relation.is_partition && !root.is_partition => root,
            _ => relation,
        };
        if !matches!(
            relation.kind,
            RelKind::Table | RelKind::PartitionedTable | RelKind::ForeignTable
        ) || relation.is_partition
        {
            continue;
        }
        let Some(col) = relation.column_named(&r.column) else {
            continue;
        };
        let key = ColumnRef {
            relation: relation.oid,
            column: col.num,
        };
        match substitute(&r.column, old_name, new_name) {
            Some(name) => {
                columns
                    .entry(key)
                    .or_insert((name, evidence.detail.clone()));
            }
            None => kept.push(Kept {
                column: format!("{}.{}.{}", r.schema, r.table, r.column),
                reason: format!(
                    "{}; its name does not contain '{old_name}'",
                    evidence.detail
                ),
            }),
        }
    }
    Ok(())
}

fn rename_columns(
    snapshot: &Snapshot,
    columns: &Columns,
    script: &mut Script,
) -> Result<(), DbError> {
    let mut taken: BTreeSet<(u32, String)> = BTreeSet::new();
    for (&c, (to, why)) in columns {
        let (relation, from) = column_name(snapshot, c)
            .ok_or_else(|| DbError::not_found("column", "not in the catalog"))?;
        if relation.column_named(to).is_some() || !taken.insert((relation.oid, to.clone())) {
            return Err(DbError::refused(
                "new name",
                format!(
                    "{} already has a column '{to}' (expected a free name)",
                    relation.display_name()
                ),
            ));
        }
        let alter = alter_kind(relation.kind);
        let name = relation.sql_name();
        script.rename(
            Renamed {
                kind: "column".into(),
                schema: relation.schema.clone(),
                table: relation.name.clone(),
                from: from.to_string(),
                to: to.clone(),
                why: why.clone(),
            },
            Action::Table(Table::RenameColumn {
                relation: name,
                kind: alter,
                from: from.to_string(),
                to: to.clone(),
            }),
        );
    }
    Ok(())
}

/// Constraints and indexes named after a renamed column of their table.
fn rename_named_objects(snapshot: &Snapshot, columns: &Columns, script: &mut Script) {
    let mut constraint_names: BTreeSet<(u32, &str)> = BTreeSet::new();
    for constraint in snapshot.constraints.iter().filter(|k| !k.inherited) {
        let Some(relation) = snapshot.relation(constraint.table) else {
            continue;
        };
        constraint_names.insert((constraint.table, constraint.name.as_str()));
        let name = named_after(
            snapshot,
            columns,
            constraint.table,
            &constraint.columns,
            &constraint.name,
        );
        if name != constraint.name && name.len() <= MAX_IDENTIFIER {
            let table = relation.sql_name();
            script.rename(
                Renamed {
                    kind: "constraint".into(),
                    schema: relation.schema.clone(),
                    table: relation.name.clone(),
                    from: constraint.name.clone(),
                    to: name.clone(),
                    why: "named after a renamed column".into(),
                },
                Action::Constraint(Constraint::Rename {
                    table,
                    from: constraint.name.clone(),
                    to: name.clone(),
                }),
            );
        }
    }
    for index in &snapshot.indexes {
        let Some(relation) = snapshot.relation(index.table) else {
            continue;
        };
        // An index behind a primary key or unique constraint is renamed
        // with the constraint.
        if constraint_names.contains(&(index.table, index.name.as_str())) {
            continue;
        }
        let name = named_after(
            snapshot,
            columns,
            index.table,
            &index.referenced,
            &index.name,
        );
        if name != index.name && name.len() <= MAX_IDENTIFIER {
            script.rename(
                Renamed {
                    kind: "index".into(),
                    schema: relation.schema.clone(),
                    table: relation.name.clone(),
                    from: index.name.clone(),
                    to: name.clone(),
                    why: "named after a renamed column".into(),
                },
                Action::Index(Index::Rename {
                    schema: relation.schema.clone(),
                    from: index.name.clone(),
                    to: name.clone(),
                }),
            );
        }
    }
}

/// View columns that show a renamed column under its old name (views of
/// views too: until nothing changes).
fn rename_view_columns(snapshot: &Snapshot, columns: &Columns, script: &mut Script) {
    let sources = snapshot.view_sources();
    let mut shown: BTreeMap<ColumnRef, (String, String)> = columns
        .iter()
        .filter_map(|(&c, (to, _))| {
            Some((c, (column_name(snapshot, c)?.1.to_string(), to.clone())))
        })
        .collect();
    loop {
        let mut next = Vec::new();
        for (&view_col, source) in &sources {
            if shown.contains_key(&view_col) {
                continue;
            }
            let Some((from, to)) = shown.get(source) else {
                continue;
            };
            let Some((view, name)) = column_name(snapshot, view_col) else {
                continue;
            };
            if name == from {
                next.push((view_col, view, from.clone(), to.clone()));
            }
        }
        if next.is_empty() {
            break;
        }
        next.sort_by_key(|(c, ..)| *c);
        for (view_col, view, from, to) in next {
            let alter = alter_kind(view.kind);
            let name = view.sql_name();
            script.rename(
                Renamed {
                    kind: "view column".into(),
                    schema: view.schema.clone(),
                    table: view.name.clone(),
                    from: from.clone(),
                    to: to.clone(),
                    why: "shows a renamed column".into(),
                },
                Action::Table(Table::RenameColumn {
                    relation: name,
                    kind: alter,
                    from: from.clone(),
                    to: to.clone(),
                }),
            );
            shown.insert(view_col, (from, to));
        }
    }
}

/// The renames of `column` to `new_name` (the plan without what mentions
/// the old names). Errors name the argument, the value and what was
/// expected.
fn script(
    snapshot: &Snapshot,
    column: &str,
    new_name: &str,
    options: &RenameOptions,
) -> Result<(Script, Vec<Kept>), DbError> {
    let (columns, kept, _) = choose_columns(snapshot, column, new_name, options)?;
    let mut script = Script::default();
    rename_columns(snapshot, &columns, &mut script)?;
    rename_named_objects(snapshot, &columns, &mut script);
    if options.views {
        rename_view_columns(snapshot, &columns, &mut script);
    }
    Ok((script, kept))
}

/// Renaming a column (`table.column` or `schema.table.column`) to a new
/// name, with what the options add.
#[derive(Debug, Clone)]
pub struct Rename {
    /// The column.
    pub column: String,
    /// Its new name.
    pub new_name: String,
    /// What else.
    pub options: RenameOptions,
}

impl Operation for Rename {
    type Plan = RenamePlan;

    fn name(&self) -> &'static str {
        "rename"
    }

    /// One read: what mentions the old names (function bodies, triggers,
    /// policies), for the plan's notes.
    fn reads(&self, snapshot: &Snapshot, _: &Answers) -> Result<Vec<Read>, DbError> {
        let (script, _) = script(snapshot, &self.column, &self.new_name, &self.options)?;
        let old_names: BTreeSet<String> = script
            .renamed
            .iter()
            .filter(|r| r.kind == "column" || r.kind == "view column")
            .map(|r| r.from.clone())
            .collect();
        Ok(vec![MENTIONS.read(mentions_query(
            &old_names.into_iter().collect::<Vec<_>>(),
        ))])
    }

    fn plan(&self, snapshot: &Snapshot, answers: &Answers) -> Result<RenamePlan, DbError> {
        let (script, kept) = script(snapshot, &self.column, &self.new_name, &self.options)?;
        let mentions = answers.required(&MENTIONS)?;
        let change = change(snapshot, &self.column, &script, &kept, &mentions);
        Ok(RenamePlan {
            statements: script.statements(),
            undo: script.undo(),
            renamed: script.renamed,
            kept,
            mentions,
            change,
        })
    }
}

/// The change: the statements in one transaction, the catalog checked
/// after, the definitions of the renamed relations backed up; what
/// mentions an old name and the undo script after it.
fn change(
    snapshot: &Snapshot,
    column: &str,
    script: &Script,
    kept: &[Kept],
    mentions: &[Mention],
) -> ChangePlan {
    let mut summary = vec![format!(
        "plan: {} statement(s), one transaction",
        script.actions.len()
    )];
    summary.extend(script.renamed.iter().map(|r| {
        format!(
            "  {} {}.{}: {} → {} ({})",
            r.kind, r.schema, r.table, r.from, r.to, r.why
        )
    }));
    summary.extend(
        kept.iter()
            .map(|k| format!("  kept {}: {}", k.column, k.reason)),
    );
    let mut epilogue = Vec::new();
    if !mentions.is_empty() {
        epilogue.push("\n-- not renamed, for a hand edit:".to_string());
        epilogue.extend(mentions.iter().map(|m| {
            format!(
                "--   {} {} mentions '{}': {}",
                m.kind,
                one_line(&m.name),
                one_line(&m.mentions),
                one_line(&m.action)
            )
        }));
    }
    epilogue.push("\n-- undo:\nBEGIN;".to_string());
    epilogue.extend(script.undo().iter().map(|s| format!("{s};")));
    epilogue.push("COMMIT;".to_string());
    let relations = distinct(
        script
            .renamed
            .iter()
            .map(|r| uuidforge_ident::qualified(&r.schema, &r.table)),
    );
    ChangePlan {
        operation: "rename".into(),
        target: column.to_string(),
        schema: script
            .renamed
            .first()
            .map_or_else(String::new, |r| r.schema.clone()),
        touches: touched(
            script
                .renamed
                .iter()
                .filter_map(|r| snapshot.relation_named(&r.schema, &r.table)),
        ),
        summary: crate::ops::lines(summary),
        backup: Backup {
            relations,
            schema_only: true,
            ..Default::default()
        },
        run: Run::OneTransaction {
            lock: None,
            steps: Step::actions(&script.actions),
            checks: vec![Check::Zero {
                what: "verify the rename".into(),
                statement: verify_statement(&script.renamed),
            }],
        },
        epilogue,
        measured: Default::default(),
    }
}

/// The read of the function bodies mentioning names ([`mentions_query`]).
pub(crate) const MENTIONS: crate::ops::Named<Vec<Mention>> =
    crate::ops::Named::new("mentions", "list the function bodies mentioning the names");

/// The statement listing function bodies (and the triggers running them)
/// that mention one of `old_names` as a word: one row, a JSON array.
pub(crate) fn mentions_query(old_names: &[String]) -> Query {
    let sql = r#"SELECT coalesce(json_agg(m ORDER BY m.kind, m.name), '[]')::text FROM (
  SELECT CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END AS kind,
         format('%s.%s(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) AS name,
         w.word AS mentions,
         'its body is text: edit it by hand' AS action
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    CROSS JOIN unnest($1::text[]) AS w(word)
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND p.prosqlbody IS NULL
     AND p.prosrc ~* ('\m' || regexp_replace(w.word, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M')
  UNION ALL
  SELECT 'trigger', format('%s.%s: %s', n.nspname, c.relname, t.tgname), w.word,
         format('runs %s, which mentions it', t.tgfoid::regproc)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_proc p ON p.oid = t.tgfoid
    CROSS JOIN unnest($1::text[]) AS w(word)
   WHERE NOT t.tgisinternal AND n.nspname NOT IN ('pg_catalog', 'information_schema')
     AND p.prosrc ~* ('\m' || regexp_replace(w.word, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M')
  UNION ALL
  SELECT 'policy', format('%s.%s: %s', n.nspname, c.relname, p.polname), w.word,
         'PostgreSQL follows the rename (the policy refers to columns by number): review its meaning'
    FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    CROSS JOIN unnest($1::text[]) AS w(word)
   WHERE (coalesce(pg_get_expr(p.polqual, p.polrelid), '') || ' ' || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), ''))
         ~* ('\m' || regexp_replace(w.word, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M')
) m"#
        .to_string();
    Query {
        sql,
        params: vec![Param::TextArray(old_names.to_vec())],
    }
}

/// The check, on the catalog after the statements ran, that every renamed
/// object goes by its new name and no longer by its old one: one row of
/// JSON, a count per object (0 in place, 1 not). The names are bound, not
/// written into the SQL.
pub fn verify_statement(renamed: &[Renamed]) -> Statement {
    let column =
        |f: fn(&Renamed) -> String| -> Value { Value::Texts(renamed.iter().map(f).collect()) };
    let exists = |name: &str| {
        format!(
            "CASE WHEN r.kind IN ('column', 'view column') THEN EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass(r.tbl) AND attname = r.{name} AND NOT attisdropped) \
             WHEN r.kind = 'constraint' THEN EXISTS (SELECT FROM pg_constraint WHERE conrelid = to_regclass(r.tbl) AND conname = r.{name}) \
             ELSE EXISTS (SELECT FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass(r.tbl) AND c.relname = r.{name}) END"
        )
    };
    Statement::with(
        format!(
            "SELECT coalesce(jsonb_object_agg(r.label, CASE WHEN ({}) AND NOT ({}) THEN 0 ELSE 1 END), '{{}}')::text \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS r(kind, tbl, frm, too, label)",
            exists("too"),
            exists("frm")
        ),
        &[
            ("kinds", column(|r| r.kind.clone())),
            ("tables", column(|r| uuidforge_ident::qualified(&r.schema, &r.table))),
            ("old names", column(|r| r.from.clone())),
            ("new names", column(|r| r.to.clone())),
            (
                "labels",
                column(|r| {
                    format!(
                        "{} {}.{}: {} → {} not in place",
                        r.kind, r.schema, r.table, r.from, r.to
                    )
                }),
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_keeps_to_whole_parts() {
        for (name, old, new, expected) in [
            ("id", "id", "uuid", Some("uuid")),
            ("customer_id", "id", "uuid", Some("customer_uuid")),
            (
                "orders_customer_id_fkey",
                "customer_id",
                "client_id",
                Some("orders_client_id_fkey"),
            ),
            ("id_id", "id", "k", Some("k_k")),
            ("idx", "id", "k", None),
            ("valid", "id", "k", None),
            ("customer_ids", "customer_id", "client_id", None),
            ("xcustomer_id", "customer_id", "client_id", None),
            ("a__id", "id", "k", Some("a__k")),
            ("", "id", "k", None),
            ("id", "", "k", None),
        ] {
            assert_eq!(
                substitute(name, old, new).as_deref(),
                expected,
                "{name} / {old} → {new}"
            );
        }
    }
}

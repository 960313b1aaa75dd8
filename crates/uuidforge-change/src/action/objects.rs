//! Other objects: views made again from what the catalog says of them
//! (options, owner, comment, privileges, a materialized view's indexes),
//! the application's triggers kept quiet and put back, trigger and SQL
//! functions, comments, privileges, owners.

use super::{alter_table, Action, Locks, RelationKind};
use uuidforge_ident::{qualified, quote_ident, quote_literal};

/// A view as the catalog defines it ([`uuidforge_db::introspect`] reads
/// it).
pub type View = uuidforge_db::introspect::ViewDefinition;

/// A privilege granted on a relation, or on one of its columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// `SELECT`, `UPDATE`, …
    pub privilege: String,
    /// The column it is limited to.
    pub column: Option<String>,
    /// The relation (qualified).
    pub on: String,
    /// A role, or `PUBLIC`.
    pub grantee: String,
    /// `WITH GRANT OPTION`.
    pub grantable: bool,
}

impl Grant {
    fn sql(&self) -> String {
        let grantee = if self.grantee == "PUBLIC" {
            "PUBLIC".to_string()
        } else {
            quote_ident(&self.grantee)
        };
        let column = self
            .column
            .as_ref()
            .map_or_else(String::new, |c| format!(" ({})", quote_ident(c)));
        format!(
            "GRANT {}{column} ON {} TO {grantee}{}",
            self.privilege,
            self.on,
            if self.grantable {
                " WITH GRANT OPTION"
            } else {
                ""
            }
        )
    }
}

fn keyword(view: &View) -> &'static str {
    if view.kind == "m" {
        "MATERIALIZED VIEW"
    } else {
        "VIEW"
    }
}

impl Action {
    /// The views of `views` dropped, those over others first.
    pub fn drop_views(views: &[View]) -> Vec<Action> {
        let mut ordered: Vec<&View> = views.iter().collect();
        ordered.sort_by_key(|v| std::cmp::Reverse(v.level));
        ordered
            .into_iter()
            .map(|v| Object::DropView(v.clone()).into())
            .collect()
    }

    /// The views of `views` made again, those they use first, then each
    /// materialized view that held data refreshed in the same order.
    pub fn create_views(views: &[View], user: &str) -> Vec<Action> {
        let mut ordered: Vec<&View> = views.iter().collect();
        ordered.sort_by_key(|v| v.level);
        let mut out: Vec<Action> = ordered
            .iter()
            .map(|v| {
                Object::CreateView {
                    view: (*v).clone(),
                    user: user.to_string(),
                }
                .into()
            })
            .collect();
        out.extend(
            ordered
                .iter()
                .filter(|v| v.kind == "m" && v.populated)
                .map(|v| -> Action {
                    Object::RefreshView {
                        view: qualified(&v.schema, &v.name),
                    }
                    .into()
                }),
        );
        out
    }
}

/// How a view is dropped and made again.
trait ViewSql {
    fn drop_sql(&self) -> String;
    fn create_sql(&self, user: &str) -> Vec<String>;
}

impl ViewSql for View {
    fn drop_sql(&self) -> String {
        format!(
            "DROP {} {}",
            keyword(self),
            qualified(&self.schema, &self.name)
        )
    }

    fn create_sql(&self, user: &str) -> Vec<String> {
        let name = qualified(&self.schema, &self.name);
        let what = keyword(self);
        let with = match &self.options {
            Some(options) if !options.is_empty() => format!(" WITH ({})", options.join(", ")),
            _ => String::new(),
        };
        let definition = self.definition.trim().trim_end_matches(';');
        let no_data = if self.kind == "m" {
            " WITH NO DATA"
        } else {
            ""
        };
        let mut s = vec![format!(
            "CREATE {what} {name}{with} AS {definition}{no_data}"
        )];
        let kind = if self.kind == "m" {
            RelationKind::MaterializedView
        } else {
            RelationKind::View
        };
        if self.owner != user {
            s.extend(
                Object::SetOwner {
                    relation: name.clone(),
                    kind,
                    owner: self.owner.clone(),
                }
                .statements(),
            );
        }
        if let Some(comment) = &self.comment {
            s.extend(
                Object::Comment {
                    on: format!("{what} {name}"),
                    text: comment.clone(),
                }
                .statements(),
            );
        }
        s.extend(self.indexes.iter().flatten().cloned());
        for g in self.grants.iter().flatten() {
            s.push(
                Grant {
                    privilege: g.privilege.clone(),
                    column: None,
                    on: name.clone(),
                    grantee: g.grantee.clone(),
                    grantable: g.grantable,
                }
                .sql(),
            );
        }
        s
    }
}

/// A user trigger on a table a change writes ([`uuidforge_db::introspect`]
/// reads them).
pub type UserTrigger = uuidforge_db::introspect::UserTrigger;

impl Action {
    /// What keeps a change's own writes from firing `triggers` (every one
    /// that fires now), and what puts every one back as it was, parents
    /// first: a state set on a partitioned table reaches its partitions.
    /// `ALTER TABLE … DISABLE TRIGGER` is transactional, so others never
    /// see the triggers off; they wait on the table's lock meanwhile.
    pub fn quiet_triggers(triggers: &[UserTrigger]) -> (Vec<Action>, Vec<Action>) {
        let mut ordered: Vec<&UserTrigger> = triggers.iter().collect();
        ordered.sort_by_key(|t| t.depth);
        let state = |t: &UserTrigger, state: &str| -> Action {
            Object::SetTrigger {
                table: qualified(&t.schema, &t.table_name),
                trigger: t.name.clone(),
                state: state.to_string(),
            }
            .into()
        };
        let quiet: Vec<Action> = ordered
            .iter()
            .filter(|t| t.enabled != "D")
            .map(|t| state(t, "DISABLE"))
            .collect();
        if quiet.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let restore = ordered
            .iter()
            .map(|t| {
                state(
                    t,
                    match t.enabled.as_str() {
                        "D" => "DISABLE",
                        "R" => "ENABLE REPLICA",
                        "A" => "ENABLE ALWAYS",
                        _ => "ENABLE",
                    },
                )
            })
            .collect();
        (quiet, restore)
    }
}

/// Other objects: views, triggers, functions, comments, privileges, owners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Object {
    /// A view dropped.
    DropView(View),
    /// A view made again as it was defined: options, owner, comment,
    /// privileges, a materialized view's indexes (refreshed apart:
    /// [`Object::RefreshView`]).
    CreateView {
        /// The view.
        view: View,
        /// The role running the change (the view's owner is set when it
        /// is another).
        user: String,
    },
    /// `REFRESH MATERIALIZED VIEW`.
    RefreshView {
        /// The view (qualified).
        view: String,
    },
    /// A user trigger set to fire `state` (`ENABLE`, `DISABLE`, `ENABLE
    /// REPLICA`, `ENABLE ALWAYS`).
    SetTrigger {
        /// Its table.
        table: String,
        /// The trigger.
        trigger: String,
        /// How it fires.
        state: String,
    },
    /// A PL/pgSQL trigger function.
    CreateTriggerFunction {
        /// The function (qualified).
        function: String,
        /// Its body between `BEGIN` and `RETURN NEW`.
        body: String,
    },
    /// A row trigger before inserts and updates, firing `function` `when`.
    CreateRowTrigger {
        /// The trigger.
        name: String,
        /// Its table.
        table: String,
        /// Its `WHEN` condition.
        when: String,
        /// The function (qualified).
        function: String,
    },
    /// `DROP POLICY`.
    DropPolicy {
        /// The policy (quoted).
        name: String,
        /// Its table (quoted, qualified).
        table: String,
    },
    /// `DROP RULE`.
    DropRule {
        /// The rule (quoted).
        name: String,
        /// Its table (quoted, qualified).
        table: String,
    },
    /// `DROP STATISTICS`.
    DropStatistics {
        /// The statistics object (quoted, qualified).
        name: String,
    },
    /// An object made again from the definition PostgreSQL wrote of it
    /// (`pg_get_statisticsobjdef`, `pg_get_triggerdef`): its names then
    /// resolve to the columns that have them now.
    CreateFromDefinition {
        /// The `CREATE …` statement, as written.
        definition: String,
    },
    /// An action whose definition compares a changed column with old
    /// keys, run with the new keys read from the key map
    /// ([`super::old_keys`]).
    WithNewKeys {
        /// The action, its old keys marked.
        action: Box<Action>,
        /// The key map (old key as text → new uuid).
        map: String,
    },
    /// `ALTER PUBLICATION p DROP TABLE t`: a table's column list, made
    /// again after (`ALTER PUBLICATION p ADD TABLE t (…)`).
    DropPublicationTable {
        /// The publication (quoted).
        publication: String,
        /// The table (quoted, qualified).
        table: String,
    },
    /// `ALTER PUBLICATION p ADD TABLE t [(columns)] [WHERE (filter)]`.
    AddPublicationTable {
        /// The publication (quoted).
        publication: String,
        /// The table (quoted, qualified).
        table: String,
        /// Its column list (quoted names), or every column.
        columns: Option<Vec<String>>,
        /// Its row filter.
        filter: Option<String>,
    },
    /// `ALTER PUBLICATION p SET (publish = '…')`: what it publishes.
    SetPublish {
        /// The publication's name.
        publication: String,
        /// `insert, update, delete, truncate`, fewer, or nothing.
        publish: String,
    },
    /// `DROP TRIGGER`.
    DropTrigger {
        /// The trigger.
        name: String,
        /// Its table.
        table: String,
    },
    /// `DROP FUNCTION f()`.
    DropFunction {
        /// The function (qualified, no arguments).
        function: String,
    },
    /// A SQL function made or replaced.
    CreateSqlFunction {
        /// The function and its arguments: `s.f(id uuid)`.
        signature: String,
        /// `RETURNS …` and attributes: `uuid LANGUAGE sql STABLE`.
        returns: String,
        /// Its body.
        body: String,
    },
    /// `COMMENT ON what IS 'text'`.
    Comment {
        /// `COLUMN t.c`, `INDEX i`, `CONSTRAINT c ON t`, …
        on: String,
        /// The comment.
        text: String,
    },
    /// `GRANT privilege [(column)] ON relation TO grantee`.
    Grant(Grant),
    /// `ALTER kind relation OWNER TO owner`.
    SetOwner {
        /// The relation.
        relation: String,
        /// What it is.
        kind: RelationKind,
        /// The role.
        owner: String,
    },
}

impl Object {
    /// Its SQL, one statement per element.
    pub fn statements(&self) -> Vec<String> {
        match self {
            Object::DropView(view) => vec![view.drop_sql()],
            Object::CreateView { view, user } => view.create_sql(user),
            Object::RefreshView { view } => vec![format!("REFRESH MATERIALIZED VIEW {view}")],
            Object::SetTrigger {
                table,
                trigger,
                state,
            } => vec![alter_table(
                table,
                &format!("{state} TRIGGER {}", quote_ident(trigger)),
            )],
            Object::CreateTriggerFunction { function, body } => vec![format!(
                "CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ BEGIN {body}RETURN NEW; END $uuidforge$"
            )],
            Object::CreateRowTrigger {
                name,
                table,
                when,
                function,
            } => vec![format!(
                "CREATE TRIGGER {name} BEFORE INSERT OR UPDATE ON {table} FOR EACH ROW WHEN ({when}) EXECUTE FUNCTION {function}()"
            )],
            Object::DropTrigger { name, table } => vec![format!("DROP TRIGGER {name} ON {table}")],
            Object::DropPublicationTable { publication, table } => {
                vec![format!("ALTER PUBLICATION {publication} DROP TABLE {table}")]
            }
            Object::AddPublicationTable {
                publication,
                table,
                columns,
                filter,
            } => vec![format!(
                "ALTER PUBLICATION {publication} ADD TABLE {table}{}{}",
                columns
                    .as_ref()
                    .map_or_else(String::new, |c| format!(" ({})", c.join(", "))),
                filter
                    .as_ref()
                    .map_or_else(String::new, |f| format!(" WHERE ({f})"))
            )],
            Object::SetPublish {
                publication,
                publish,
            } => vec![format!(
                "ALTER PUBLICATION {} SET (publish = {})",
                quote_ident(publication),
                quote_literal(publish)
            )],
            Object::DropStatistics { name } => vec![format!("DROP STATISTICS {name}")],
            Object::DropPolicy { name, table } => vec![format!("DROP POLICY {name} ON {table}")],
            Object::DropRule { name, table } => vec![format!("DROP RULE {name} ON {table}")],
            Object::CreateFromDefinition { definition } => vec![definition.clone()],
            Object::WithNewKeys { action, map } => action
                .statements()
                .iter()
                .map(|s| super::old_keys::run_with_new_keys(s, map))
                .collect(),
            Object::DropFunction { function } => vec![format!("DROP FUNCTION {function}()")],
            Object::CreateSqlFunction {
                signature,
                returns,
                body,
            } => vec![format!(
                "CREATE OR REPLACE FUNCTION {signature} RETURNS {returns} AS $uuidforge$ {body} $uuidforge$"
            )],
            Object::Comment { on, text } => {
                vec![format!("COMMENT ON {on} IS {}", quote_literal(text))]
            },
            Object::Grant(grant) => vec![grant.sql()],
            Object::SetOwner {
                relation,
                kind,
                owner,
            } => vec![format!(
                "ALTER {} {relation} OWNER TO {}",
                kind.keyword(),
                quote_ident(owner)
            )],
        }
    }

    /// What it locks.
    pub fn locks(&self) -> Locks {
        match self {
            Object::CreateTriggerFunction { .. }
            | Object::CreateSqlFunction { .. }
            | Object::Comment { .. }
            | Object::Grant(_)
            | Object::SetPublish { .. }
            | Object::DropPublicationTable { .. }
            | Object::AddPublicationTable { .. } => Locks::Nothing,
            Object::CreateRowTrigger { .. } => Locks::ShareRowExclusive,
            Object::WithNewKeys { action, .. } => action.locks(),
            _ => Locks::AccessExclusive,
        }
    }
}

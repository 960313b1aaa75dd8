//! Objects made again from what the catalog says of them: views (with
//! their options, owner, comment, privileges and a materialized view's
//! indexes) and privileges.

use uuidforge_ident::{qualified, quote_ident};

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
    pub(super) fn sql(&self) -> String {
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

impl super::Action {
    /// The views of `views` dropped, those over others first.
    pub fn drop_views(views: &[View]) -> Vec<super::Action> {
        let mut ordered: Vec<&View> = views.iter().collect();
        ordered.sort_by_key(|v| std::cmp::Reverse(v.level));
        ordered
            .into_iter()
            .map(|v| super::Action::DropView(v.clone()))
            .collect()
    }

    /// The views of `views` made again, those they use first, then each
    /// materialized view that held data refreshed in the same order.
    pub fn create_views(views: &[View], user: &str) -> Vec<super::Action> {
        let mut ordered: Vec<&View> = views.iter().collect();
        ordered.sort_by_key(|v| v.level);
        let mut out: Vec<super::Action> = ordered
            .iter()
            .map(|v| super::Action::CreateView {
                view: (*v).clone(),
                user: user.to_string(),
            })
            .collect();
        out.extend(
            ordered
                .iter()
                .filter(|v| v.kind == "m" && v.populated)
                .map(|v| super::Action::RefreshView {
                    view: qualified(&v.schema, &v.name),
                }),
        );
        out
    }
}

/// How a view is dropped and made again.
pub(super) trait ViewSql {
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
            super::RelationKind::MaterializedView
        } else {
            super::RelationKind::View
        };
        if self.owner != user {
            s.extend(
                super::Action::SetOwner {
                    relation: name.clone(),
                    kind,
                    owner: self.owner.clone(),
                }
                .statements(),
            );
        }
        if let Some(comment) = &self.comment {
            s.extend(
                super::Action::Comment {
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

impl super::Action {
    /// What keeps a change's own writes from firing `triggers` (every one
    /// that fires now), and what puts every one back as it was, parents
    /// first: a state set on a partitioned table reaches its partitions.
    /// `ALTER TABLE … DISABLE TRIGGER` is transactional, so others never
    /// see the triggers off; they wait on the table's lock meanwhile.
    pub fn quiet_triggers(triggers: &[UserTrigger]) -> (Vec<super::Action>, Vec<super::Action>) {
        let mut ordered: Vec<&UserTrigger> = triggers.iter().collect();
        ordered.sort_by_key(|t| t.depth);
        let state = |t: &UserTrigger, state: &str| super::Action::SetTrigger {
            table: qualified(&t.schema, &t.table_name),
            trigger: t.name.clone(),
            state: state.to_string(),
        };
        let quiet: Vec<super::Action> = ordered
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

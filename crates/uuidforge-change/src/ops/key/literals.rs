//! Old keys written as literals in definitions: a CHECK `id <> 1` that
//! singles out one row, a view `WHERE account_id = 1`, a policy naming one
//! account. Made again over the new uuid column as written, each would
//! fail (`operator does not exist: uuid <> integer`); each is translated
//! through the key map to the new key of that row instead: the definition
//! is made again by a `DO` block that reads the new key from the map and
//! writes it in as a uuid literal (the plan prints that block, so shows
//! where each old key goes). An old key no row has becomes the nil UUID,
//! which compares as the missing key did: equal to no row, unequal to all.
//!
//! Where a changed column is compared with something no map translates,
//! the migration refuses before anything runs, naming the object: a list
//! of old keys (`IN (1, 2)`), a literal of another type, a comparison
//! other than `=` and `<>` (an order of old keys means nothing for new
//! ones), or a value of the old type computed at run time (a setting cast
//! to `bigint`, a function returning one) — the application's value, which
//! uuidforge cannot reach.
//!
//! Found in the node tree PostgreSQL stores (which says exactly which
//! column is compared with which literal), and written in the definition
//! it prints: every comparison the tree holds must be found in the text,
//! or the migration refuses.

use super::dependents::{self, ConstraintKind, Dependents, OtherKind};
use super::Target;
use crate::action::old_keys::marked;
use regex::Regex;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use uuidforge_db::error::{DbError, Reason, Refusal};
use uuidforge_db::introspect::ViewDefinition;
use uuidforge_db::nodes::{self, Col, Operand};
use uuidforge_ident::quote_literal;

/// A table column as the translation needs it.
pub struct Changed {
    /// Its name.
    pub name: String,
    /// Whether the migration changes it (the key, a reference).
    pub changed: bool,
    /// Whether its type becomes uuid from another (a value of the old type
    /// computed at run time then no longer compares with it).
    pub retyped: bool,
}

/// A definition with its old keys marked, and what was translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    /// The text, each old key marked where its new key goes.
    pub text: String,
    /// Each comparison translated: (column, old key).
    pub old_keys: Vec<(String, String)>,
    /// Each comparison with a list translated: (column, the old keys).
    pub lists: Vec<(String, Vec<String>)>,
}

/// Translates the old keys in `text`, the definition of `what` printed by
/// the server, whose node trees are `trees` (`relation`: the table an
/// expression's variables name; `None` for a view's query). `column`
/// names a table column and says whether it changes. Refused, naming `what`, where a changed
/// column is compared with something no key map translates.
pub fn translate(
    what: &str,
    text: &str,
    trees: &[&str],
    relation: Option<u32>,
    column: &dyn Fn(Col) -> Option<Changed>,
) -> Result<Translated, DbError> {
    let refuse = |why: String| {
        DbError::refusal(
            "table",
            Refusal::new(
                Reason::OldKeyNotTranslatable,
                format!("{what} ({}) {why}", text.trim()),
            ),
        )
    };
    let found: Vec<(Col, Operand)> = trees
        .iter()
        .filter_map(|t| nodes::parse(t))
        .flat_map(|t| nodes::comparisons(&t, relation))
        .collect();
    // (column name, old key) → (comparisons of a changed column, of any
    // column of that name).
    let mut literals: Vec<((String, String), usize)> = Vec::new();
    let mut lists: Vec<((String, Vec<String>), usize)> = Vec::new();
    let mut unchanged_literals: Vec<(String, String)> = Vec::new();
    for (col, operand) in &found {
        let Some(c) = column(*col) else {
            continue;
        };
        if !c.changed {
            if let Operand::Literal(_, Some(old)) = operand {
                unchanged_literals.push((c.name, old.clone()));
            }
            continue;
        }
        match operand {
            Operand::Literal(_, Some(old)) => {
                let key = (c.name.clone(), old.clone());
                match literals.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, n)) => *n += 1,
                    None => literals.push((key, 1)),
                }
            }
            Operand::Literal(type_oid, None) => {
                return Err(refuse(format!(
                    "compares {} with a literal (type oid {type_oid}) that cannot be translated to a new key: drop it before the migration and make it again after over the new key",
                    c.name
                )))
            }
            Operand::Literals(items) if items.iter().all(|(_, v)| v.is_some()) => {
                let key = (
                    c.name.clone(),
                    items.iter().filter_map(|(_, v)| v.clone()).collect(),
                );
                match lists.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, n)) => *n += 1,
                    None => lists.push((key, 1)),
                }
            }
            Operand::List | Operand::Literals(_) => {
                return Err(refuse(format!(
                    "compares {} with a list of old keys that are not all literals (a subquery's, an array computed at run time, a literal of another type): drop it before the migration and make it again after, listing the new keys (read from the key file or the column kept for the old values)",
                    c.name
                )))
            }
            Operand::Computed if c.retyped => {
                return Err(refuse(format!(
                    "compares {} with a value of the old type computed at run time (a setting, a parameter or a function's result), which the migration cannot translate: drop it before the migration and make it again after, comparing with a value of the new type (a setting read as uuid, the new key)",
                    c.name
                )))
            }
            _ => {}
        }
    }
    let mut out = text.to_string();
    let mut old_keys = Vec::new();
    for ((name, old), count) in literals {
        if unchanged_literals.contains(&(name.clone(), old.clone())) {
            return Err(refuse(format!(
                "compares {name} with the old key {old}, and a column of the same name the migration leaves with the same value: it cannot say which to translate; drop it before the migration and make it again after"
            )));
        }
        let (text, n) = mark(&out, &name, &old);
        if n != count {
            return Err(refuse(format!(
                "compares {name} with the old key {old} other than by = or <> (an order of old keys means nothing for new ones): drop it before the migration and make it again after"
            )));
        }
        out = text;
        old_keys.extend(std::iter::repeat_n((name, old), count));
    }
    let mut translated_lists = Vec::new();
    for ((name, olds), count) in lists {
        let (text, n) = mark_list(&out, &name, &olds);
        if n != count {
            return Err(refuse(format!(
                "compares {name} with the list of old keys {} other than by = ANY or <> ALL (IN, NOT IN): drop it before the migration and make it again after",
                olds.join(", ")
            )));
        }
        out = text;
        translated_lists.extend(std::iter::repeat_n((name, olds), count));
    }
    Ok(Translated {
        text: out,
        old_keys,
        lists: translated_lists,
    })
}

/// Definitions with their old keys marked where the new keys go, and the
/// plan's lines saying what became of each.
pub struct Translations {
    /// The views, their definitions translated.
    pub views: Vec<ViewDefinition>,
    /// The objects over the changed columns, their definitions translated.
    pub dependents: Dependents,
    /// What became of each old key.
    pub lines: Vec<String>,
}

/// The old keys compared with a changed column in `views`, CHECK
/// constraints, index predicates, triggers' `WHEN`s, rules and policies of
/// a migration, translated: copies of them with their old keys marked.
/// Refused where one cannot be translated.
pub fn translate_all(
    target: &Target,
    views: &[ViewDefinition],
    found: &Dependents,
) -> Result<Translations, DbError> {
    let to_uuid = target.to_uuid();
    let snapshot = target.snapshot;
    let column = |(rel, num): Col| -> Option<Changed> {
        let c = snapshot.relation(rel)?.column(num)?;
        Some(Changed {
            name: c.name.clone(),
            changed: dependents::changed_in(snapshot, rel, &to_uuid).contains(&num),
            retyped: c.type_name != "uuid",
        })
    };
    let mut lines = Vec::new();
    let mut note = |what: &str, t: &Translated| {
        for (name, old) in &t.old_keys {
            lines.push(format!(
                "  {what}: {name} compared with the old key {old}, made again with the new key of that row (read from the key map)"
            ));
        }
        for (name, olds) in &t.lists {
            lines.push(format!(
                "  {what}: {name} compared with the old keys {} (a list), made again with the new keys of those rows (read from the key map)",
                olds.join(", ")
            ));
        }
    };
    let mut views = views.to_vec();
    for view in views.iter_mut() {
        let Some(rule) = snapshot.view_rules.iter().find(|r| r.view == view.oid) else {
            continue;
        };
        let what = format!("view {}.{}", view.schema, view.name);
        let t = translate(&what, &view.definition, &[&rule.action], None, &column)?;
        note(&what, &t);
        view.definition = t.text;
    }
    let mut found = found.clone();
    for c in found
        .constraints
        .iter_mut()
        .filter(|c| c.kind == ConstraintKind::Check)
    {
        let Some(tree) = c.tree.clone() else {
            continue;
        };
        let what = format!("constraint {}", c.name);
        let t = translate(&what, &c.definition, &[&tree], Some(c.table), &column)?;
        note(&what, &t);
        c.definition = t.text;
        if let Some(e) = &c.expression {
            c.expression = Some(translate(&what, e, &[&tree], Some(c.table), &column)?.text);
        }
    }
    for i in found.indexes.iter_mut() {
        let Some(tree) = i.predicate_tree.clone() else {
            continue;
        };
        let what = format!("index {}.{}", i.schema, i.name);
        let t = translate(&what, &i.definition, &[&tree], Some(i.table), &column)?;
        note(&what, &t);
        i.definition = t.text;
        if let Some(p) = &i.shape.predicate {
            i.shape.predicate = Some(translate(&what, p, &[&tree], Some(i.table), &column)?.text);
        }
    }
    // Triggers, rules and policies, in that order (the plan's lines say so).
    for pass in 0..3 {
        for o in found.others.iter_mut() {
            let Some(definition) = o.definition.clone() else {
                continue;
            };
            let what = o.description.clone();
            match (&mut o.of, pass) {
                (
                    OtherKind::Trigger {
                        trigger_when: Some((table, tree)),
                        ..
                    },
                    0,
                ) => {
                    let t = translate(&what, &definition, &[tree.as_str()], Some(*table), &column)?;
                    note(&what, &t);
                    o.definition = Some(t.text);
                }
                (
                    OtherKind::Rule {
                        rule_trees: (table, qual, action),
                    },
                    1,
                ) => {
                    let trees: Vec<&str> = [&*qual, &*action]
                        .into_iter()
                        .flatten()
                        .map(String::as_str)
                        .collect();
                    let t = translate(&what, &definition, &trees, Some(*table), &column)?;
                    note(&what, &t);
                    o.definition = Some(t.text);
                }
                (
                    OtherKind::Policy {
                        policy_table,
                        policy_trees,
                        policy_expressions,
                        ..
                    },
                    2,
                ) => {
                    let trees: Vec<&str> =
                        policy_trees.iter().flatten().map(String::as_str).collect();
                    let t = translate(&what, &definition, &trees, Some(*policy_table), &column)?;
                    note(&what, &t);
                    for e in policy_expressions.iter_mut().flatten() {
                        *e = translate(&what, e, &trees, Some(*policy_table), &column)?.text;
                    }
                    o.definition = Some(t.text);
                }
                _ => {}
            }
        }
    }
    Ok(Translations {
        views,
        dependents: found,
        lines,
    })
}

/// A reference's default, given to its new column: an old key written as
/// a literal becomes that row's new key (read from the key map when the
/// change runs), a NULL default is none, a value computed at run time of a
/// type that stays stays as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceDefault {
    /// The table's oid.
    pub table: u32,
    /// The column's name.
    pub column: String,
    /// The new column's default (SQL, old keys marked), or none.
    pub default: Option<String>,
}

/// The defaults of the references among `found`'s columns, each made for
/// the new column, with the plan's lines; refused, naming the column and
/// its default, where the default computes a value of the old type at run
/// time (a setting cast to `bigint`: the application's value, which no key
/// map translates) or is a literal of another type.
pub fn reference_defaults(
    target: &Target,
    found: &Dependents,
) -> Result<(Vec<ReferenceDefault>, Vec<String>), DbError> {
    let mut defaults = Vec::new();
    let mut lines = Vec::new();
    for extras in &found.columns {
        let (Some(text), Some(tree)) = (&extras.default, &extras.default_tree) else {
            continue;
        };
        let Some(r) = target
            .references
            .iter()
            .find(|r| r.table.oid == extras.table && r.column.num == extras.num)
        else {
            continue;
        };
        let what = format!(
            "the default of {}.{} ({text})",
            r.table.display_name(),
            r.column.name
        );
        let retyped = r.column.type_name != "uuid";
        let default = match nodes::parse(tree).map(|t| nodes::value_of(&t)) {
            Some(None) => None,
            Some(Some(Operand::Literal(_, Some(old)))) => {
                lines.push(format!(
                    "  {what}: the old key {old}, made again with the new key of that row (read from the key map)"
                ));
                Some(marked(&old))
            }
            Some(Some(Operand::Computed | Operand::Expression)) if !retyped => Some(text.clone()),
            Some(Some(Operand::Computed | Operand::Expression)) => {
                return Err(DbError::refusal(
                    "table",
                    Refusal::new(Reason::OldKeyNotTranslatable, format!(
                        "{what} is a value of the old type computed at run time (a setting, a sequence or a function's result), which the migration cannot translate and which no longer fits the new uuid column: drop it before the migration and make it again after (ALTER TABLE … ALTER COLUMN … DROP DEFAULT, then SET DEFAULT a value of the new type)"
                    )),
                ))
            }
            _ => {
                return Err(DbError::refusal(
                    "table",
                    Refusal::new(Reason::OldKeyNotTranslatable, format!(
                        "{what} is a value no key map translates: drop it before the migration and make it again after (ALTER TABLE … ALTER COLUMN … DROP DEFAULT, then SET DEFAULT a value of the new type)"
                    )),
                ))
            }
        };
        defaults.push(ReferenceDefault {
            table: extras.table,
            column: r.column.name.clone(),
            default,
        });
    }
    Ok((defaults, lines))
}

/// `text` with each `column = old` or `column <> old` (either way round,
/// the column qualified or not, the literal as the server prints one of
/// its type) written `column = MARK old MARK::uuid`; how many.
/// The pattern of `column` as the server prints it in a comparison: bare
/// or quoted, qualified or not, through a cast or not (its name in group
/// `ca` or `cb`).
fn column_pattern(column: &str) -> String {
    let qualifier = r#"(?:(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")*")\.)?"#;
    let quoted_name = regex::escape(&format!("\"{}\"", column.replace('"', "\"\"")));
    let simple = column.chars().enumerate().all(|(i, c)| {
        c.is_ascii_lowercase() || c == '_' || (i > 0 && (c.is_ascii_digit() || c == '$'))
    });
    let name = if simple {
        format!("{qualifier}(?:{}|{quoted_name})", regex::escape(column))
    } else {
        format!("{qualifier}{quoted_name}")
    };
    format!(r"(?:\((?P<ca>{name})\)::(?:{CASTS})|(?P<cb>{name}))")
}

/// `pattern` compiled, once while it is in use: a migration marks the same
/// column and old key in every definition that compares them, and the
/// planning pass translates them once to name its reads and again to plan.
fn compiled(pattern: &str) -> Regex {
    static COMPILED: OnceLock<Mutex<HashMap<String, Regex>>> = OnceLock::new();
    let mut compiled = COMPILED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Bounded: a server plans migrations of many tables over its life.
    if compiled.len() >= 1024 {
        compiled.clear();
    }
    compiled
        .entry(pattern.to_string())
        .or_insert_with(|| Regex::new(pattern).expect("a valid pattern"))
        .clone()
}

/// The types a literal is printed cast to.
const CASTS: &str = "text|character varying|bpchar|character|bigint|integer|smallint|numeric|uuid";

/// The pattern of the literal `old` as the server prints one of its type.
fn literal_pattern(old: &str) -> String {
    let quoted = regex::escape(&quote_literal(old));
    let bare = if old.starts_with('-') || old.parse::<i64>().is_err() {
        String::new()
    } else {
        format!(
            "{}|\\({}\\)::(?:{CASTS})|",
            regex::escape(old),
            regex::escape(old)
        )
    };
    format!("(?:{bare}{quoted}::(?:{CASTS}))")
}

/// The column a comparison's match names, without its cast.
fn column_of(c: &regex::Captures) -> String {
    c.name("ca")
        .or_else(|| c.name("cb"))
        .map_or("", |m| m.as_str())
        .to_string()
}

/// `text` with each `column = old` or `column <> old` (either way round,
/// the column qualified or not, the literal as the server prints one of
/// its type) written `column = MARK old MARK::uuid`; how many.
fn mark(text: &str, column: &str, old: &str) -> (String, usize) {
    let literal = literal_pattern(old);
    let side = column_pattern(column);
    let forward = compiled(&format!(
        r"(?P<pre>^|[\s(,]){side} (?P<op>=|<>) {literal}(?P<post>$|[\s),])"
    ));
    let backward = compiled(&format!(
        r"(?P<pre>^|[\s(,]){literal} (?P<op>=|<>) {side}(?P<post>$|[\s),])"
    ));
    let new = marked(old);
    let mut n = 0;
    let text = forward.replace_all(text, |c: &regex::Captures| {
        n += 1;
        format!(
            "{}{} {} {new}{}",
            &c["pre"],
            column_of(c),
            &c["op"],
            &c["post"]
        )
    });
    let text = backward
        .replace_all(&text, |c: &regex::Captures| {
            n += 1;
            format!(
                "{}{new} {} {}{}",
                &c["pre"],
                &c["op"],
                column_of(c),
                &c["post"]
            )
        })
        .into_owned();
    (text, n)
}

/// `text` with each `column = ANY (ARRAY[old, …])` or `column <> ALL
/// (ARRAY[old, …])` (how the server prints `IN` and `NOT IN` lists) of
/// exactly the old keys `olds`, in order, written with each marked where
/// its new key goes; how many.
fn mark_list(text: &str, column: &str, olds: &[String]) -> (String, usize) {
    let elements: Vec<String> = olds.iter().map(|o| literal_pattern(o)).collect();
    let side = column_pattern(column);
    let list = compiled(&format!(
        r"(?P<pre>^|[\s(,]){side} (?P<op>= ANY|<> ALL) \(ARRAY\[{}\]\)",
        elements.join(", ")
    ));
    let new: Vec<String> = olds.iter().map(|o| marked(o)).collect();
    let mut n = 0;
    let text = list
        .replace_all(text, |c: &regex::Captures| {
            n += 1;
            format!(
                "{}{} {} (ARRAY[{}])",
                &c["pre"],
                column_of(c),
                &c["op"],
                new.join(", ")
            )
        })
        .into_owned();
    (text, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::old_keys::{probed, run_with_new_keys};

    fn key(col: Col) -> Option<Changed> {
        (col.0 == 7).then(|| Changed {
            name: "id".into(),
            changed: col.1 == 1,
            retyped: true,
        })
    }

    const NE_ONE: &str = r#"{OPEXPR :args ({VAR :varno 1 :varattno 1 :varlevelsup 0} {CONST :consttype 23 :constlen 4 :constbyval true :constisnull false :constvalue 4 [ 1 0 0 0 0 0 0 0 ]})}"#;

    #[test]
    fn a_check_singling_out_one_row_takes_its_new_key_from_the_map() {
        let t = translate(
            "constraint c",
            "CHECK ((id <> 1))",
            &[NE_ONE],
            Some(7),
            &key,
        )
        .unwrap();
        assert_eq!(t.old_keys, [("id".to_string(), "1".to_string())]);
        assert_eq!(probed(&t.text), "CHECK ((id <> NULL::uuid))");
        let sql = run_with_new_keys(
            &format!("ALTER TABLE t ADD CONSTRAINT c {}", t.text),
            "uuidforge_keymap",
        );
        assert_eq!(
            sql,
            "DO $uuidforge$ BEGIN EXECUTE format('ALTER TABLE t ADD CONSTRAINT c CHECK ((id <> %1$L::uuid))', coalesce((SELECT m.new::text FROM uuidforge_keymap m WHERE m.old = '1'), '00000000-0000-0000-0000-000000000000')); END $uuidforge$"
        );
    }

    #[test]
    fn qualified_reversed_and_cast_forms_are_found_and_others_refused() {
        // `10` must not be read as `1`; `'1'::bigint` and `1 = x.id` are.
        let (text, n) = mark(
            "(x.id = 10) AND ('1'::bigint = x.id) AND (a.id <> 1)",
            "id",
            "1",
        );
        assert_eq!(n, 2);
        assert!(text.starts_with("(x.id = 10) AND (\u{1}1\u{1}::uuid = x.id)"));
        let (text, n) = mark("((code)::text = 'it''s'::text)", "code", "it's");
        assert_eq!((text.as_str(), n), ("(code = \u{1}it's\u{1}::uuid)", 1));
        let lt = NE_ONE.replace("OPEXPR", "OPEXPR :opno 412");
        let e = translate("view v", "(id < 1)", &[&lt], Some(7), &key).unwrap_err();
        assert!(e.to_string().contains("other than by = or <>"), "{e}");
    }

    #[test]
    fn lists_of_old_keys_are_marked_element_by_element() {
        let (text, n) = mark_list(
            "(ships.port_id = ANY (ARRAY[(1)::bigint, (2)::bigint]))",
            "port_id",
            &["1".into(), "2".into()],
        );
        assert_eq!(n, 1);
        assert_eq!(
            probed(&text),
            "(ships.port_id = ANY (ARRAY[NULL::uuid, NULL::uuid]))"
        );
        let (text, n) = mark_list(
            "CHECK ((id <> ALL (ARRAY[1, 2])))",
            "id",
            &["1".into(), "2".into()],
        );
        assert_eq!(
            (probed(&text).as_str(), n),
            ("CHECK ((id <> ALL (ARRAY[NULL::uuid, NULL::uuid])))", 1)
        );
        // Another list, or the same keys in another order, is not this one.
        assert_eq!(
            mark_list("(id = ANY (ARRAY[2, 1]))", "id", &["1".into(), "2".into()]).1,
            0
        );
        let tree = r#"{SCALARARRAYOPEXPR :useOr false :args ({VAR :varno 1 :varattno 1 :varlevelsup 0} {ARRAYEXPR :elements ({CONST :consttype 23 :constlen 4 :constbyval true :constisnull false :constvalue 4 [ 1 0 0 0 0 0 0 0 ]} {CONST :consttype 23 :constlen 4 :constbyval true :constisnull false :constvalue 4 [ 2 0 0 0 0 0 0 0 ]})})}"#;
        let t = translate(
            "constraint c",
            "CHECK ((id <> ALL (ARRAY[1, 2])))",
            &[tree],
            Some(7),
            &key,
        )
        .unwrap();
        assert_eq!(
            t.lists,
            [("id".to_string(), vec!["1".to_string(), "2".to_string()])]
        );
        assert!(run_with_new_keys(&t.text, "m").contains("m.old = '2'"));
    }
}

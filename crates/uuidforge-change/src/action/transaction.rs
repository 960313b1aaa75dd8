//! What a change sets or takes in its own transaction: when deferrable
//! constraints are checked, memory for its statements, table locks, and
//! what must hold before it commits.

use super::{Locks, Timing};
use uuidforge_ident::quote_literal;

/// What a change sets or takes in its own transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transaction {
    /// `SET CONSTRAINTS ALL …` for the rest of the transaction.
    SetConstraints(Timing),
    /// `SET LOCAL setting = 'value'` (memory for this transaction only).
    SetLocal {
        /// The setting.
        setting: String,
        /// Its value.
        value: String,
    },
    /// `LOCK TABLE … IN mode MODE`.
    LockTable {
        /// The table.
        table: String,
        /// The mode.
        mode: Locks,
    },
    /// Fails the transaction, naming each, when any object depends
    /// (`pg_depend`) on one of `columns` (the same-named columns of their
    /// partitions included) other than the indexes `except` and their
    /// partitions' pieces: the rule that after a change nothing but the
    /// old values' unique index is left on its old columns.
    NothingDependsOn {
        /// (relation, quoted and qualified; column, unquoted).
        columns: Vec<(String, String)>,
        /// Indexes (quoted, qualified) that may depend on them.
        except: Vec<String>,
    },
}

/// `LOCK TABLE` of `tables` (quoted, qualified) in `mode`; with `nowait`,
/// one that fails at once instead of waiting: the one spelling of every
/// lock a change takes.
///
/// ```
/// use uuidforge_change::action::{lock_tables, Locks};
/// assert_eq!(
///     lock_tables(&["\"s\".\"t\"".into()], Locks::AccessExclusive, true),
///     "LOCK TABLE \"s\".\"t\" IN ACCESS EXCLUSIVE MODE NOWAIT"
/// );
/// ```
pub fn lock_tables(tables: &[String], mode: Locks, nowait: bool) -> String {
    format!(
        "LOCK TABLE {} IN {} MODE{}",
        tables.join(", "),
        mode.keyword().unwrap_or("ACCESS SHARE"),
        if nowait { " NOWAIT" } else { "" }
    )
}

/// The SQLSTATE the check raises: `dependent_objects_still_exist`.
pub const DEPENDENTS_LEFT: &str = "2BP01";

impl Transaction {
    /// Its SQL, one statement per element.
    pub fn statements(&self) -> Vec<String> {
        match self {
            Transaction::SetConstraints(Timing::Immediate) => {
                vec!["SET CONSTRAINTS ALL IMMEDIATE".into()]
            }
            Transaction::SetConstraints(Timing::Deferred) => {
                vec!["SET CONSTRAINTS ALL DEFERRED".into()]
            }
            Transaction::SetLocal { setting, value } => {
                vec![format!("SET LOCAL {setting} = {}", quote_literal(value))]
            }
            Transaction::LockTable { table, mode } => {
                vec![lock_tables(std::slice::from_ref(table), *mode, false)]
            }
            Transaction::NothingDependsOn { columns, except } => {
                vec![nothing_depends_on(columns, except)]
            }
        }
    }

    /// What it locks.
    pub fn locks(&self) -> Locks {
        match self {
            Transaction::LockTable { mode, .. } => *mode,
            _ => Locks::Nothing,
        }
    }
}

/// The `DO` block of [`Transaction::NothingDependsOn`]: one read of
/// `pg_depend` at column level, an exception naming what it found.
/// `pg_partition_tree` of a relation that is not partitioned is empty, so
/// each relation is named beside its tree.
fn nothing_depends_on(columns: &[(String, String)], except: &[String]) -> String {
    let watched: Vec<String> = columns
        .iter()
        .map(|(t, c)| format!("({}, {})", quote_literal(t), quote_literal(c)))
        .collect();
    let allowed = if except.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = except.iter().map(|i| quote_literal(i)).collect();
        format!(
            " WHERE NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT to_regclass(e.name) FROM unnest(ARRAY[{}]::text[]) e(name) UNION ALL SELECT p.relid FROM unnest(ARRAY[{}]::text[]) e(name) CROSS JOIN LATERAL pg_partition_tree(to_regclass(e.name)) p))",
            names.join(", "),
            names.join(", ")
        )
    };
    format!(
        "DO $uuidforge$ DECLARE found text; BEGIN \
SELECT string_agg(format('%s (on %s.%I)', pg_describe_object(d.classid, d.objid, d.objsubid), a.attrelid::regclass, a.attname), '; ' ORDER BY 1) INTO found \
FROM (VALUES {}) w(rel, col) CROSS JOIN LATERAL (SELECT w.rel::regclass AS relid UNION SELECT p.relid FROM pg_partition_tree(w.rel::regclass) p) t \
JOIN pg_attribute a ON a.attrelid = t.relid AND a.attname = w.col AND NOT a.attisdropped \
JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum \
{allowed}; \
IF found IS NOT NULL THEN RAISE EXCEPTION 'uuidforge: still on the old columns after the change: %', found \
USING ERRCODE = '{DEPENDENTS_LEFT}', HINT = 'nothing but the old values'' unique index may stay on them: every dependent moves to the new column or the change is refused before it runs; this one was not foreseen, so nothing was changed'; END IF; END $uuidforge$",
        watched.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dependents_check_names_its_columns_and_exceptions_quoted() {
        let sql = Transaction::NothingDependsOn {
            columns: vec![("\"public\".\"o'k\"".into(), "id_old".into())],
            except: vec!["\"public\".\"o_id_old_key\"".into()],
        }
        .statements();
        assert_eq!(sql.len(), 1);
        assert!(sql[0].starts_with("DO $uuidforge$"), "{}", sql[0]);
        assert!(
            sql[0].contains("('\"public\".\"o''k\"', 'id_old')"),
            "{}",
            sql[0]
        );
        assert!(
            sql[0].contains("ARRAY['\"public\".\"o_id_old_key\"']"),
            "{}",
            sql[0]
        );
        assert!(sql[0].contains(DEPENDENTS_LEFT));
        assert_eq!(
            Transaction::NothingDependsOn {
                columns: vec![],
                except: vec![]
            }
            .locks(),
            Locks::Nothing
        );
    }
}

//! The tables a change locks before anything else, as a value: the printed
//! plan shows it as one `LOCK TABLE` statement, and the runner takes the
//! tables one by one without ever waiting while it holds any of them
//! (`runner::locks`).

use crate::action::{lock_tables, Locks};
use serde::{Deserialize, Serialize};

/// Tables to lock, in one mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    /// The tables, quoted and qualified, in the order the plan prefers
    /// (the runner learns a better one from who holds what).
    pub tables: Vec<String>,
    /// The lock mode.
    pub mode: Locks,
}

impl Lock {
    /// `ACCESS EXCLUSIVE` locks of `tables`.
    pub fn access_exclusive(tables: Vec<String>) -> Lock {
        Lock {
            tables,
            mode: Locks::AccessExclusive,
        }
    }

    /// The one statement that takes them all, as printed.
    pub fn statement(&self) -> String {
        lock_tables(&self.tables, self.mode, false)
    }

    /// The statement that takes `table` alone; with `nowait`, one that
    /// fails at once instead of waiting.
    pub fn one(&self, table: &str, nowait: bool) -> String {
        lock_tables(&[table.to_string()], self.mode, nowait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements() {
        let l = Lock::access_exclusive(vec!["\"public\".\"a\"".into(), "\"s\".\"b\"".into()]);
        assert_eq!(
            l.statement(),
            "LOCK TABLE \"public\".\"a\", \"s\".\"b\" IN ACCESS EXCLUSIVE MODE"
        );
        assert_eq!(
            l.one("\"s\".\"b\"", true),
            "LOCK TABLE \"s\".\"b\" IN ACCESS EXCLUSIVE MODE NOWAIT"
        );
    }
}

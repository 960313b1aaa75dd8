//! SQL identifiers and literals written into generated SQL.
//!
//! Every name from a catalog is quoted with [`quote_ident`]: a table named
//! `a"; DROP TABLE b; --` is one identifier, never two statements. Values
//! from users are never written into SQL at all: plans bind them as
//! parameters. [`quote_literal`] exists only for DDL that is printed for a
//! person to read and run (PostgreSQL accepts no parameters there).

/// `name` as a quoted SQL identifier: wrapped in double quotes, inner double
/// quotes doubled. Always quoted, so case, spaces, reserved words and
/// unicode survive exactly.
///
/// ```
/// use uuidforge_db::ident::quote_ident;
/// assert_eq!(quote_ident("Order"), "\"Order\"");
/// assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
/// ```
pub fn quote_ident(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `schema.name`, both quoted.
///
/// ```
/// assert_eq!(uuidforge_db::ident::qualified("public", "t"), "\"public\".\"t\"");
/// ```
pub fn qualified(schema: &str, name: &str) -> String {
    format!("{}.{}", quote_ident(schema), quote_ident(name))
}

/// `text` as a standard-conforming SQL string literal (`'it''s'`), for
/// printed DDL only (constraint comments); plans bind values instead.
///
/// ```
/// assert_eq!(uuidforge_db::ident::quote_literal("it's"), "'it''s'");
/// ```
pub fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads one quoted identifier back the way PostgreSQL's lexer does.
    fn unquote(q: &str) -> Option<String> {
        let inner = q.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '"' && chars.next() != Some('"') {
                return None;
            }
            out.push(c);
        }
        Some(out)
    }

    proptest! {
        #[test]
        fn any_name_reads_back_as_itself(name in "\\PC{0,40}") {
            prop_assert_eq!(unquote(&quote_ident(&name)), Some(name));
        }
    }
}

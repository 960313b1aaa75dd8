//! SQL identifiers and literals written into generated SQL.
//!
//! Every name from a catalog is quoted with [`quote_ident`]: a table named
//! `a"; DROP TABLE b; --` is one identifier, never two statements. Values
//! from users are never written into SQL at all: plans bind them as
//! parameters. [`quote_literal`] exists only for DDL that is printed for a
//! person to read and run (PostgreSQL accepts no parameters there).

/// PostgreSQL's limit on identifiers (`NAMEDATALEN - 1` bytes).
pub const MAX_IDENTIFIER: usize = 63;

/// `name` as a quoted SQL identifier: wrapped in double quotes, inner double
/// quotes doubled. Always quoted, so case, spaces, reserved words and
/// unicode survive exactly.
///
/// ```
/// use uuidforge_ident::quote_ident;
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
/// assert_eq!(uuidforge_ident::qualified("public", "t"), "\"public\".\"t\"");
/// ```
pub fn qualified(schema: &str, name: &str) -> String {
    format!("{}.{}", quote_ident(schema), quote_ident(name))
}

/// `text` as a standard-conforming SQL string literal (`'it''s'`), for
/// printed DDL only (constraint comments); plans bind values instead.
///
/// ```
/// assert_eq!(uuidforge_ident::quote_literal("it's"), "'it''s'");
/// ```
pub fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// One part of a name as a user wrote it (`Order`, `"Order"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamePart {
    /// The identifier: an unquoted part folded to lower case, a quoted part
    /// exactly as written (with `""` read as `"`).
    pub name: String,
    /// Whether it was quoted.
    pub quoted: bool,
}

/// A name that does not read as psql reads names: what is wrong, with the
/// name as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError(pub String);

impl std::fmt::Display for NameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NameError {}

impl From<NameError> for String {
    fn from(e: NameError) -> String {
        e.0
    }
}

/// Reads a dotted name the way psql and pg_dump read one (`public."Order"`,
/// `"a.b".c`): dots split parts only outside double quotes, a quoted part
/// keeps its case, dots and spaces (`""` is one `"`), an unquoted part folds
/// ASCII letters to lower case as PostgreSQL does.
///
/// ```
/// use uuidforge_ident::parse_name;
/// let parts = parse_name("public.\"Order\"").unwrap();
/// assert_eq!(parts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["public", "Order"]);
/// assert_eq!(parse_name("Order").unwrap()[0].name, "order");
/// assert_eq!(parse_name("\"a.b\".c").unwrap().len(), 2);
/// assert!(parse_name("\"open").is_err());
/// ```
pub fn parse_name(text: &str) -> Result<Vec<NamePart>, NameError> {
    let mut parts = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        let mut name = String::new();
        let quoted = chars.peek() == Some(&'"');
        if quoted {
            chars.next();
            loop {
                match chars.next() {
                    None => {
                        return Err(NameError(format!(
                            "'{text}' has an unterminated quoted name (expected a closing \")"
                        )))
                    }
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        name.push('"');
                    }
                    Some('"') => break,
                    Some(c) => name.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' {
                    break;
                }
                if !(c.is_alphanumeric() || c == '_' || c == '$') {
                    return Err(NameError(format!(
                        "'{text}' has '{c}' outside quotes (expected letters, digits, _ or $; quote a name that holds others: \"my name\")"
                    )));
                }
                name.push(c.to_ascii_lowercase());
                chars.next();
            }
        }
        if name.is_empty() {
            return Err(NameError(format!(
                "'{text}' has an empty name part (expected name or schema.name)"
            )));
        }
        parts.push(NamePart { name, quoted });
        match chars.next() {
            None => return Ok(parts),
            Some('.') => {}
            Some(c) => {
                return Err(NameError(format!(
                    "'{text}' has '{c}' after a quoted name (expected a dot or the end)"
                )))
            }
        }
    }
}

/// `name` as psql would want it typed: bare when it reads back as itself
/// unquoted, else quoted.
///
/// ```
/// use uuidforge_ident::as_typed;
/// assert_eq!(as_typed("orders"), "orders");
/// assert_eq!(as_typed("Order"), "\"Order\"");
/// ```
pub fn as_typed(name: &str) -> String {
    match parse_name(name).as_deref() {
        Ok([one]) if one.name == name => name.to_string(),
        _ => quote_ident(name),
    }
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

        #[test]
        fn a_qualified_quoted_name_parses_back(schema in "\\PC{1,20}", name in "\\PC{1,20}") {
            let parts = parse_name(&qualified(&schema, &name)).unwrap();
            prop_assert_eq!(parts.iter().map(|p| p.name.clone()).collect::<Vec<_>>(), vec![schema, name]);
        }

        #[test]
        fn as_typed_reads_back_as_itself(name in "\\PC{1,20}") {
            let parts = parse_name(&as_typed(&name)).unwrap();
            prop_assert_eq!(parts.len(), 1);
            prop_assert_eq!(&parts[0].name, &name);
        }
    }

    #[test]
    fn unquoted_parts_fold_and_quoted_parts_keep_case_and_dots() {
        let names = |t: &str| -> Vec<(String, bool)> {
            parse_name(t)
                .unwrap()
                .into_iter()
                .map(|p| (p.name, p.quoted))
                .collect()
        };
        assert_eq!(
            names("Public.Order"),
            [("public".into(), false), ("order".into(), false)]
        );
        assert_eq!(
            names("\"My.Schema\".\"Or\"\"der\""),
            [("My.Schema".into(), true), ("Or\"der".into(), true)]
        );
        for bad in ["", "a..b", "a.", "\"a\"b", "my table", "\"unclosed"] {
            assert!(parse_name(bad).is_err(), "{bad}");
        }
    }
}

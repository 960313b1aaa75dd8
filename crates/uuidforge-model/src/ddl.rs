//! Building a DDL script: quoted names (checked against PostgreSQL's 63
//! byte limit, which would otherwise truncate them silently) and
//! statements.

use crate::model::ModelError;
use uuidforge_ident::{quote_ident, quote_literal};

/// PostgreSQL keeps this many bytes of a name.
const NAME_LIMIT: usize = 63;

/// A script under construction.
#[derive(Debug)]
pub struct Ddl {
    schema: String,
    extension_schema: String,
    out: String,
    too_long: Option<String>,
}

impl Ddl {
    /// A script for objects in `schema` that calls the extension in
    /// `extension_schema`, opening with a header comment.
    pub fn new(schema: &str, extension_schema: &str, header: &str) -> Ddl {
        let mut ddl = Ddl {
            schema: schema.to_string(),
            extension_schema: extension_schema.to_string(),
            out: String::new(),
            too_long: None,
        };
        for line in header.lines() {
            ddl.out.push_str("-- ");
            ddl.out.push_str(line);
            ddl.out.push('\n');
        }
        ddl.out.push('\n');
        ddl
    }

    /// A quoted name.
    pub fn q(&mut self, name: &str) -> String {
        if name.len() > NAME_LIMIT && self.too_long.is_none() {
            self.too_long = Some(name.to_string());
        }
        quote_ident(name)
    }

    /// A quoted name in the model's schema.
    pub fn t(&mut self, name: &str) -> String {
        let schema = quote_ident(&self.schema);
        format!("{schema}.{}", self.q(name))
    }

    /// A function of the uuidforge extension, schema-qualified
    /// (`public.uuidv7`): reached whatever the search_path, and not
    /// PostgreSQL 18's function of the same name.
    pub fn ext(&self, function: &str) -> String {
        format!("{}.{function}", quote_ident(&self.extension_schema))
    }

    /// A string literal.
    pub fn lit(&self, text: &str) -> String {
        quote_literal(text)
    }

    /// Appends a statement (its `;` is added) and a blank line.
    pub fn push(&mut self, statement: impl AsRef<str>) {
        self.out.push_str(statement.as_ref().trim_end());
        self.out.push_str(";\n\n");
    }

    /// Appends a comment line.
    pub fn comment(&mut self, text: &str) {
        self.out.push_str("-- ");
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// The script, or the first name PostgreSQL would truncate.
    pub fn finish(self) -> Result<String, ModelError> {
        if let Some(name) = self.too_long {
            return Err(ModelError {
                at: "names".into(),
                message: format!(
                    "{name} is {} bytes; PostgreSQL keeps {NAME_LIMIT}: use shorter descriptors or mnemonics",
                    name.len()
                ),
            });
        }
        let mut out = self.out;
        while out.ends_with("\n\n") {
            out.pop();
        }
        Ok(out)
    }
}

/// A `CREATE FUNCTION … RETURNS TABLE (…) LANGUAGE sql STABLE` whose body
/// is one query (PostgreSQL inlines it into the calling query).
pub fn table_function(
    name: &str,
    params: &str,
    columns: &[(String, String)],
    body: &str,
) -> String {
    let columns: Vec<String> = columns
        .iter()
        .map(|(n, t)| format!("    {n} {t}"))
        .collect();
    format!(
        "CREATE FUNCTION {name}({params})\nRETURNS TABLE (\n{}\n) LANGUAGE sql STABLE AS $body$\n{body}\n$body$",
        columns.join(",\n")
    )
}

/// A plpgsql trigger function.
pub fn trigger_function(name: &str, declare: &[String], body: &[String]) -> String {
    let mut text = format!("CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $body$\n");
    if !declare.is_empty() {
        text.push_str("DECLARE\n");
        for d in declare {
            text.push_str(&format!("    {d};\n"));
        }
    }
    text.push_str("BEGIN\n");
    for line in body {
        for l in line.lines() {
            text.push_str("    ");
            text.push_str(l);
            text.push('\n');
        }
    }
    text.push_str("    RETURN NEW;\nEND\n$body$");
    text
}

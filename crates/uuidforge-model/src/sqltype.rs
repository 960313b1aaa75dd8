//! Column types: PostgreSQL names pass through; the SQL Server names
//! Anchor Modeler's examples use are mapped.

/// A model type that is not one: the text and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    /// The type as written.
    pub text: String,
    /// What was expected.
    pub expected: &'static str,
}

impl std::fmt::Display for TypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "'{}': {}", self.text, self.expected)
    }
}

impl std::error::Error for TypeError {}

/// The PostgreSQL type for a model type, or why it is not one.
///
/// ```
/// use uuidforge_model::sqltype::pg_type;
/// assert_eq!(pg_type("varchar(max)").unwrap(), "text");
/// assert_eq!(pg_type("tinyint").unwrap(), "smallint");
/// assert_eq!(pg_type("money").unwrap(), "numeric(19,4)");
/// assert_eq!(pg_type("numeric(10, 2)").unwrap(), "numeric(10,2)");
/// assert!(pg_type("varchar(42); drop table x").is_err());
/// ```
pub fn pg_type(text: &str) -> Result<String, TypeError> {
    let refused = |expected| TypeError {
        text: text.to_string(),
        expected,
    };
    let lowered: String = text
        .to_ascii_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let (base, args) = match lowered.find('(') {
        Some(open) if lowered.ends_with(')') => (
            lowered[..open].trim().to_string(),
            Some(lowered[open + 1..lowered.len() - 1].replace(' ', "")),
        ),
        Some(_) => {
            return Err(refused(
                "expected a type such as varchar(42) or numeric(10,2)",
            ))
        }
        None => (lowered.clone(), None),
    };
    if let Some(args) = &args {
        let numeric = args
            .split(',')
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if args != "max" && !numeric {
            return Err(refused("the type's arguments must be numbers"));
        }
    }
    let with = |name: &str| match &args {
        Some(a) => format!("{name}({a})"),
        None => name.to_string(),
    };
    Ok(match (base.as_str(), args.as_deref()) {
        ("varchar" | "nvarchar" | "character varying", Some("max")) => "text".into(),
        ("varchar" | "nvarchar" | "character varying", _) => with("varchar"),
        ("char" | "nchar" | "character", _) => with("char"),
        ("text" | "ntext", None) => "text".into(),
        ("tinyint" | "smallint", None) => "smallint".into(),
        ("int" | "integer", None) => "integer".into(),
        ("bigint", None) => "bigint".into(),
        ("bit" | "boolean" | "bool", None) => "boolean".into(),
        ("money", None) => "numeric(19,4)".into(),
        ("smallmoney", None) => "numeric(10,4)".into(),
        ("decimal" | "numeric", _) => with("numeric"),
        ("float" | "double precision", None) => "double precision".into(),
        ("real", None) => "real".into(),
        ("date", None) => "date".into(),
        ("time", None) => "time".into(),
        ("datetime" | "datetime2" | "smalldatetime" | "timestamp", None) => "timestamp".into(),
        ("datetimeoffset" | "timestamptz" | "timestamp with time zone", None) => "timestamptz".into(),
        ("interval", None) => "interval".into(),
        ("uniqueidentifier" | "uuid", None) => "uuid".into(),
        ("varbinary" | "binary" | "image" | "bytea", _) => "bytea".into(),
        ("json", None) => "json".into(),
        ("jsonb", None) => "jsonb".into(),
        ("geography" | "geometry" | "xml", None) => "text".into(),
        _ => return Err(refused("not a type this generator knows (PostgreSQL or SQL Server names such as varchar(42), integer, numeric(10,2), timestamptz, uuid)")),
    })
}

//! Which UUID generator a column's default calls, and which one a migrated
//! key gets on this server: the uuidforge extension's `uuidv7()`, else the
//! SQL edition's (`uuidforge db install-sql`, for servers that refuse
//! custom extensions), else PostgreSQL 18's own — or none, refused unless
//! the application makes the keys.

use crate::catalog::{Column, Snapshot};
use crate::error::DbError;
use crate::error::{Reason, Refusal, WayOut};
use serde::Serialize;
use uuidforge_ident::quote_ident;

/// A generator of keys, known by the function a default calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Generator {
    /// The uuidforge extension's `uuidv7()` (a `uuidv7_gen` column's
    /// `uuidv7_next`).
    Extension {
        /// The function, `schema.name`.
        function: String,
        /// Whether it orders across sessions (the server preloads it);
        /// `None` when the role may not read the setting.
        server_wide: Option<bool>,
    },
    /// The SQL edition's `uuidv7()`: increasing within a session, and
    /// across sessions for calls that do not overlap.
    SqlEdition {
        /// The function.
        function: String,
        /// The edition's version.
        version: String,
    },
    /// PostgreSQL 18's `pg_catalog.uuidv7()`: ordered per connection.
    #[serde(rename = "postgresql18")]
    PostgreSql18 {
        /// The function.
        function: String,
    },
    /// A random (version 4) UUID: `gen_random_uuid()`, `uuid_generate_v4()`,
    /// `uuidv4()`.
    Random {
        /// The function.
        function: String,
    },
    /// Another function.
    Other {
        /// The function.
        function: String,
    },
}

impl Generator {
    /// The function it calls, `schema.name`.
    pub fn function(&self) -> &str {
        match self {
            Generator::Extension { function, .. }
            | Generator::SqlEdition { function, .. }
            | Generator::PostgreSql18 { function }
            | Generator::Random { function }
            | Generator::Other { function } => function,
        }
    }

    /// What it is, for people: the function and the order it keeps.
    ///
    /// ```
    /// use uuidforge_db::generators::Generator;
    /// let g = Generator::PostgreSql18 { function: "pg_catalog.uuidv7".into() };
    /// assert!(g.describe().contains("per connection"));
    /// ```
    pub fn describe(&self) -> String {
        match self {
            Generator::Extension {
                function,
                server_wide,
            } => format!(
                "{function}() (the uuidforge extension; {})",
                match server_wide {
                    Some(true) => "ordered across the server: preloaded",
                    Some(false) =>
                        "ordered per session: the server does not preload it (shared_preload_libraries)",
                    None => "order across sessions only where the server preloads it",
                }
            ),
            Generator::SqlEdition { function, version } => format!(
                "{function}() (the uuidforge SQL edition {version}: increasing within a session, and across sessions for calls that do not overlap)"
            ),
            Generator::PostgreSql18 { function } => format!(
                "{function}() (PostgreSQL 18's own: ordered per connection only; the uuidforge extension or its SQL edition order across connections)"
            ),
            Generator::Random { function } => {
                format!("{function}() (random version 4 UUIDs: no time order)")
            }
            Generator::Other { function } => format!("{function}()"),
        }
    }

    /// The call to put in a default: the schema quoted, the function's
    /// own name (a plain lower-case one) as it is.
    pub fn call(&self) -> String {
        let function = self.function();
        match function.rsplit_once('.') {
            Some((schema, name)) => format!("{}.{name}()", quote_ident(schema)),
            None => format!("{function}()"),
        }
    }
}

/// The generator `function` (`schema.name`, as the catalog lists the
/// functions a default calls) is, on this server.
pub fn classify(snapshot: &Snapshot, function: &str) -> Generator {
    let (schema, name) = function.rsplit_once('.').unwrap_or(("", function));
    let function = function.to_string();
    // The drop-ins for pg_uuidv7 and pg_idkit that make keys, in the
    // extension's schemas of them or beside an edition's schema.
    let drop_in_beside = |of: &str| {
        matches!(
            (schema.strip_prefix(of), name),
            (Some("_pg_uuidv7"), "uuid_generate_v7")
                | (
                    Some("_pg_idkit"),
                    "idkit_uuidv7_generate_uuid"
                        | "idkit_uuidv7_generate"
                        | "idkit_uuidv7_generate_text"
                )
        )
    };
    if (snapshot.extension_schema.as_deref() == Some(schema)
        && matches!(name, "uuidv7" | "uuidv7_next"))
        || (snapshot.extension_schema.is_some() && drop_in_beside("uuidforge"))
    {
        return Generator::Extension {
            function,
            server_wide: snapshot.extension_preloaded,
        };
    }
    if let Some(edition) = snapshot.sql_editions.iter().find(|e| {
        (e.schema == schema && name == "uuidv7") || drop_in_beside(&format!("{}_sql", e.schema))
    }) {
        return Generator::SqlEdition {
            function,
            version: edition.version.clone(),
        };
    }
    match (schema, name) {
        ("pg_catalog", "uuidv7") => Generator::PostgreSql18 { function },
        (_, "gen_random_uuid" | "uuid_generate_v4" | "uuidv4") => Generator::Random { function },
        _ => Generator::Other { function },
    }
}

/// The functions of a default that make UUIDs, the first one that names a
/// known generator first.
fn of_calls(snapshot: &Snapshot, calls: &[String]) -> Option<Generator> {
    let all: Vec<Generator> = calls.iter().map(|c| classify(snapshot, c)).collect();
    all.iter()
        .find(|g| !matches!(g, Generator::Other { .. }))
        .or(all.first())
        .cloned()
}

/// The generator `column`'s default calls (its own default, else its
/// domain's), or `None` without one.
pub(crate) fn of_column(snapshot: &Snapshot, column: &Column) -> Option<Generator> {
    if !column.default_calls.is_empty() {
        return of_calls(snapshot, &column.default_calls);
    }
    let domain = snapshot.type_info(column.type_oid)?;
    of_calls(snapshot, domain.default_calls.as_deref()?)
}

/// The generator a migrated key's default calls on this server: the
/// extension's `uuidv7()`, else the SQL edition's, else PostgreSQL 18's;
/// `None` with `no_default` (the application makes the keys). Without any
/// of them, refused, naming the ways out.
pub fn for_new_key(snapshot: &Snapshot, no_default: bool) -> Result<Option<Generator>, DbError> {
    if no_default {
        return Ok(None);
    }
    if let Some(schema) = &snapshot.extension_schema {
        return Ok(Some(Generator::Extension {
            function: format!("{schema}.uuidv7"),
            server_wide: snapshot.extension_preloaded,
        }));
    }
    if let Some(edition) = snapshot.sql_editions.first() {
        return Ok(Some(Generator::SqlEdition {
            function: format!("{}.uuidv7", edition.schema),
            version: edition.version.clone(),
        }));
    }
    if snapshot.server_version_num >= 180000 {
        return Ok(Some(Generator::PostgreSql18 {
            function: "pg_catalog.uuidv7".into(),
        }));
    }
    Err(DbError::refusal(
        "default",
        Refusal::new(
            Reason::Other,
            format!(
                "database {} has no UUIDv7 generator for the new key's default (PostgreSQL {} has no uuidv7(), and neither the uuidforge extension nor its SQL edition is installed): the application's next INSERT that relies on the old default would fail",
                snapshot.database,
                snapshot.server_version_num / 10000
            ),
        )
        .way_out(WayOut::InstallGenerator)
        .way_out(WayOut::NoDefault),
    ))
}

/// What a migration plan says of the new key's default.
pub fn default_note(generator: Option<&Generator>) -> String {
    match generator {
        Some(g) => g.describe(),
        None => "none (--no-default): the application makes the keys".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::SqlEdition;

    fn snapshot(version: i32) -> Snapshot {
        Snapshot::from_json(&format!(
            r#"{{"database":"shop","user":"u","server_version_num":{version},"extension_schema":null,
                "relations":[],"types":[],"indexes":[],"constraints":[],"view_rules":[]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn the_extension_then_the_sql_edition_then_18s_own_then_refused() {
        let mut s = snapshot(150000);
        let e = for_new_key(&s, false).unwrap_err();
        assert!(e.message.contains("no UUIDv7 generator"), "{e}");
        assert_eq!(
            e.ways_out(),
            [WayOut::InstallGenerator, WayOut::NoDefault],
            "{e}"
        );
        assert!(e.to_string().contains("CREATE EXTENSION uuidforge"), "{e}");
        assert_eq!(for_new_key(&s, true).unwrap(), None);
        s.server_version_num = 180000;
        let g = for_new_key(&s, false).unwrap().unwrap();
        assert_eq!(g.call(), "\"pg_catalog\".uuidv7()");
        assert!(default_note(Some(&g)).contains("per connection"));
        s.sql_editions.push(SqlEdition {
            schema: "Util".into(),
            version: "0.3.0".into(),
        });
        let g = for_new_key(&s, false).unwrap().unwrap();
        assert_eq!(g.call(), "\"Util\".uuidv7()");
        assert!(matches!(g, Generator::SqlEdition { .. }));
        s.extension_schema = Some("public".into());
        s.extension_preloaded = Some(false);
        let g = for_new_key(&s, false).unwrap().unwrap();
        assert_eq!(g.call(), "\"public\".uuidv7()");
        assert!(g.describe().contains("per session"), "{}", g.describe());
    }

    #[test]
    fn defaults_are_named_by_the_function_they_call() {
        let mut s = snapshot(180000);
        s.extension_schema = Some("ext".into());
        s.sql_editions.push(SqlEdition {
            schema: "util".into(),
            version: "0.3.0".into(),
        });
        for (function, kind) in [
            ("ext.uuidv7", "extension"),
            ("ext.uuidv7_next", "extension"),
            ("util.uuidv7", "sql_edition"),
            ("pg_catalog.uuidv7", "postgresql18"),
            ("pg_catalog.gen_random_uuid", "random"),
            ("public.uuid_generate_v4", "random"),
            ("public.uuidv7", "other"),
            // The drop-ins for pg_uuidv7 and pg_idkit, the extension's and
            // the edition's; the originals are other functions.
            ("uuidforge_pg_uuidv7.uuid_generate_v7", "extension"),
            ("uuidforge_pg_idkit.idkit_uuidv7_generate_uuid", "extension"),
            ("uuidforge_pg_uuidv7.uuid_v7_to_timestamptz", "other"),
            ("util_sql_pg_uuidv7.uuid_generate_v7", "sql_edition"),
            ("util_sql_pg_idkit.idkit_uuidv7_generate", "sql_edition"),
            ("util_pg_uuidv7.uuid_generate_v7", "other"),
            ("public.uuid_generate_v7", "other"),
        ] {
            let g = classify(&s, function);
            assert_eq!(
                serde_json::to_value(&g).unwrap()["kind"],
                kind,
                "{function}"
            );
        }
    }
}

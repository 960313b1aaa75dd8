//! Custom generator profiles in SQL (B13): `uuidforge_profile_register(name,
//! json)` validates a profile with the library's checks and stores it in
//! the table `uuidforge_profiles`; `SET uuidforge.profile = name` then uses
//! it like a built-in one. Errors name the field.

use crate::errors::invalid_argument;
use pgrx::prelude::*;
use pgrx::spi::quote_identifier;
use uuidforge::generator::{GeneratorConfig, PROFILES};

/// The longest profile name (PostgreSQL's identifier length).
const MAX_NAME: usize = 63;

fn check_name(function: &str, name: &str) {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if !valid {
        invalid_argument(
            function,
            "name",
            format_args!("'{name}'"),
            format_args!("1 to {MAX_NAME} characters of a-z, 0-9, '_' and '-'"),
        );
    }
    if PROFILES.contains(&name) {
        invalid_argument(
            function,
            "name",
            format_args!("'{name}'"),
            format_args!(
                "a name other than the built-in profiles ({})",
                PROFILES.join(", ")
            ),
        );
    }
}

/// The profile's settings from its stored JSON: validated again, so a row
/// edited by hand cannot hand a broken layout to the generator.
pub fn config_of(name: &str, json: &str) -> GeneratorConfig {
    match GeneratorConfig::from_json(json) {
        Ok(c) => GeneratorConfig {
            name: name.to_string(),
            ..c
        },
        Err(e) => invalid_argument(
            "uuidforge.profile",
            e.field,
            format_args!("{} (registered profile '{name}')", e.value),
            e.expected,
        ),
    }
}

/// Validates a profile for `uuidforge_profile_register` and returns it
/// whole (every field, defaults filled in).
#[pg_extern(immutable, strict, parallel_safe)]
fn uuidforge_profile_check(name: &str, profile: pgrx::Json) -> pgrx::JsonB {
    check_name("uuidforge_profile_register", name);
    let mut value = profile.0;
    if let Some(object) = value.as_object_mut() {
        match object.get("name").and_then(|n| n.as_str()) {
            Some(inner) if inner != name => invalid_argument(
                "uuidforge_profile_register",
                "profile.name",
                format_args!("'{inner}'"),
                format_args!("the registered name '{name}' or no name field"),
            ),
            _ => {
                object.insert("name".into(), name.into());
            }
        }
    }
    let config = match GeneratorConfig::from_json(&value.to_string()) {
        Ok(c) => c,
        Err(e) if e.field == "profile JSON" => {
            invalid_argument("uuidforge_profile_register", "profile", e.value, e.expected)
        }
        Err(e) => invalid_argument(
            "uuidforge_profile_register",
            &format!("profile.{}", e.field),
            e.value,
            e.expected,
        ),
    };
    let whole = serde_json::from_str(&config.to_json()).expect("a config serialises to JSON");
    pgrx::JsonB(whole)
}

extension_sql!(
    r#"
CREATE TABLE uuidforge_profiles (
    name text PRIMARY KEY,
    config jsonb NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE uuidforge_profiles IS 'generator profiles registered with uuidforge_profile_register(name, json), usable as uuidforge.profile';
SELECT pg_catalog.pg_extension_config_dump('uuidforge_profiles', '');

CREATE FUNCTION uuidforge_profile_register(name text, profile json) RETURNS jsonb
LANGUAGE sql VOLATILE STRICT SET search_path = pg_catalog AS $$
    INSERT INTO @extschema@.uuidforge_profiles AS p (name, config)
    VALUES ($1, @extschema@.uuidforge_profile_check($1, $2))
    ON CONFLICT ON CONSTRAINT uuidforge_profiles_pkey
    DO UPDATE SET config = EXCLUDED.config, registered_at = now()
    RETURNING p.config
$$;
COMMENT ON FUNCTION uuidforge_profile_register(text, json) IS 'validates a generator profile (the fields of uuidforge profile show default) and stores it under name for SET uuidforge.profile';

CREATE FUNCTION uuidforge_profile_drop(name text) RETURNS boolean
LANGUAGE sql VOLATILE STRICT SET search_path = pg_catalog AS $$
    WITH gone AS (DELETE FROM @extschema@.uuidforge_profiles p WHERE p.name = $1 RETURNING 1)
    SELECT count(*) > 0 FROM gone
$$;
COMMENT ON FUNCTION uuidforge_profile_drop(text) IS 'removes a registered profile; true if it existed';
"#,
    name = "profiles",
    requires = [uuidforge_profile_check],
);

/// The stored JSON of a registered profile, if any.
pub fn lookup(name: &str) -> Option<String> {
    Spi::connect(|client| {
        let schema: Option<String> = client
            .select(
                "SELECT n.nspname::text FROM pg_catalog.pg_extension e \
                 JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace \
                 WHERE e.extname = 'uuidforge'",
                None,
                &[],
            )
            .and_then(|t| {
                if t.is_empty() {
                    Ok(None)
                } else {
                    t.first().get_one::<String>()
                }
            })
            .unwrap_or_else(|e| lookup_failed(e));
        let schema = schema?;
        let sql = format!(
            "SELECT config::text FROM {}.uuidforge_profiles WHERE name = $1",
            quote_identifier(&schema)
        );
        client
            .select(&sql, Some(1), &[name.to_string().into()])
            .and_then(|t| {
                if t.is_empty() {
                    Ok(None)
                } else {
                    t.first().get_one::<String>()
                }
            })
            .unwrap_or_else(|e| lookup_failed(e))
    })
}

fn lookup_failed(e: impl std::fmt::Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        format!("uuidforge.profile: reading uuidforge_profiles failed: {e}")
    );
}

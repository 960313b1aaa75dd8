//! Parsers for flag values: times and durations. Errors say what was
//! expected; clap adds the flag and the value.

use uuidforge::generator::GeneratorConfig;

pub use uuidforge::batch::now_unix_ms as now_ms;

/// A time for a flag: RFC 3339, Unix milliseconds or `now`.
pub fn parse_time(text: &str) -> Result<i64, String> {
    uuidforge::batch::parse_time_ms(text).map_err(|e| e.to_string())
}

/// A signed duration for a flag: `90s`, `-1h30m`, `500ms`, `2d`.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    uuidforge::batch::parse_duration_ms(text).map_err(|e| e.to_string())
}

/// A built-in profile name or a JSON profile file.
pub fn load_profile(name_or_file: &str) -> Result<GeneratorConfig, String> {
    if let Some(c) = GeneratorConfig::profile(name_or_file) {
        return Ok(c);
    }
    let text = std::fs::read_to_string(name_or_file).map_err(|e| {
        format!(
            "not a built-in profile ({}) nor a readable file: {e}",
            uuidforge::generator::PROFILES.join(", ")
        )
    })?;
    GeneratorConfig::from_json(&text).map_err(|e| format!("{name_or_file}: {e}"))
}

//! Parsers for flag values: times and durations. Errors say what was
//! expected; clap adds the flag and the value.

use uuidforge::generator::GeneratorConfig;

/// A time: RFC 3339 (`2024-05-01T12:00:00Z`, offsets allowed), Unix
/// milliseconds (`1714564800000`), or `now`. Returns Unix milliseconds.
pub fn parse_time(text: &str) -> Result<i64, String> {
    if text == "now" {
        return Ok(now_ms());
    }
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|e| {
            format!(
                "{e}; expected RFC 3339 (e.g. 2024-05-01T12:00:00Z), Unix milliseconds or 'now'"
            )
        })
}

/// A signed duration made of number-unit parts: `90s`, `-1h30m`, `500ms`,
/// `2d`. Units: ms, s, m, h, d, w. Returns milliseconds.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    const EXPECTED: &str =
        "expected a duration such as 500ms, 90s, -1h30m, 2d (units ms, s, m, h, d, w)";
    let (sign, mut rest) = match text.strip_prefix('-') {
        Some(r) => (-1i64, r),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest.is_empty() {
        return Err(EXPECTED.into());
    }
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let number: i64 = rest[..digits].parse().map_err(|_| EXPECTED.to_string())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "w" => 604_800_000,
            _ => return Err(EXPECTED.into()),
        };
        rest = &rest[unit_len..];
        total = number
            .checked_mul(factor)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| "duration too large".to_string())?;
    }
    Ok(sign * total)
}

/// The system clock in Unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_times() {
        assert_eq!(parse_duration("500ms"), Ok(500));
        assert_eq!(parse_duration("-1h30m"), Ok(-5_400_000));
        assert_eq!(parse_duration("2d"), Ok(172_800_000));
        assert!(parse_duration("1x").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("-").is_err());
        assert!(parse_duration("h").is_err());
        assert_eq!(parse_time("1714564800000"), Ok(1_714_564_800_000));
        assert_eq!(parse_time("2024-05-01T12:00:00Z"), Ok(1_714_564_800_000));
        assert_eq!(
            parse_time("2024-05-01T14:00:00+02:00"),
            Ok(1_714_564_800_000)
        );
        assert!(parse_time("yesterday").unwrap_err().contains("RFC 3339"));
    }
}

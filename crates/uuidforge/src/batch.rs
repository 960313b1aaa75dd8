//! Batches of generated UUIDs, made in chunks: what `uuidforge gen` and the
//! HTTP batch API (D4) share — the request's validation, the choice of
//! generator and the duration and time syntax of `shift` and `at`.
//!
//! ```
//! use uuidforge::batch::BatchSpec;
//! let spec = BatchSpec::parse(Some("7"), Some("pg18"), Some("-1h"), None).unwrap();
//! let mut source = spec.process_wide_source().unwrap();
//! let mut out = [uuid::Uuid::nil(); 4];
//! source.fill(&mut out).unwrap();
//! assert!(out.windows(2).all(|w| w[0] < w[1]));
//! let err = BatchSpec::parse(Some("2"), None, None, None).unwrap_err();
//! assert_eq!(err.field, "version");
//! ```

use crate::generator::{
    global_profile, source::ConfiguredRng, Buffered, GenError, GeneratorConfig, OsCsprng,
    RandSource, SharedGenerator, SystemClock, TimeSource, V6Generator, V7Generator,
    V8DraftGenerator, PROFILES,
};
use crate::v7::MAX_UNIX_MS;
use crate::FieldError;
use uuid::Uuid;

/// The longest duration or time text accepted: longer ones are not a
/// typing mistake worth reading.
pub const MAX_TEXT: usize = 40;

/// What [`parse_duration_ms`] accepts, for messages.
pub const DURATION_SYNTAX: &str =
    "a duration such as 500ms, 90s, -1h30m, 2d (units ms, s, m, h, d, w)";

/// What [`parse_time_ms`] accepts, for messages.
pub const TIME_SYNTAX: &str = "RFC 3339 (e.g. 2024-05-01T12:00:00Z), Unix milliseconds or 'now'";

/// A time or a duration that does not read: what was wrong, and its
/// display says what was expected ([`DURATION_SYNTAX`], [`TIME_SYNTAX`]).
///
/// ```
/// use uuidforge::batch::{parse_duration_ms, TextError};
/// assert_eq!(parse_duration_ms("90 parsecs"), Err(TextError::Syntax { detail: None, expected: uuidforge::batch::DURATION_SYNTAX }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextError {
    /// Longer than any time or duration.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// Not in the syntax.
    Syntax {
        /// What the parser said, when it said something.
        detail: Option<String>,
        /// What is accepted.
        expected: &'static str,
    },
    /// A duration beyond 64 bits of milliseconds.
    TooLarge,
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextError::TooLong { len } => {
                write!(f, "{len} characters, expected at most {MAX_TEXT}")
            }
            TextError::Syntax {
                detail: None,
                expected,
            } => write!(f, "expected {expected}"),
            TextError::Syntax {
                detail: Some(detail),
                expected,
            } => write!(f, "{detail}; expected {expected}"),
            TextError::TooLarge => f.write_str("duration too large"),
        }
    }
}

impl std::error::Error for TextError {}

/// A signed duration made of number-unit parts: `90s`, `-1h30m`, `500ms`,
/// `2d`. Units: ms, s, m, h, d, w. Returns milliseconds.
///
/// ```
/// assert_eq!(uuidforge::batch::parse_duration_ms("-1h30m"), Ok(-5_400_000));
/// assert!(uuidforge::batch::parse_duration_ms("3 parsecs").is_err());
/// ```
pub fn parse_duration_ms(text: &str) -> Result<i64, TextError> {
    let expected = || TextError::Syntax {
        detail: None,
        expected: DURATION_SYNTAX,
    };
    if text.len() > MAX_TEXT {
        return Err(TextError::TooLong { len: text.len() });
    }
    let (sign, mut rest) = match text.strip_prefix('-') {
        Some(r) => (-1i64, r),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest.is_empty() {
        return Err(expected());
    }
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let number: i64 = rest[..digits].parse().map_err(|_| expected())?;
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
            _ => return Err(expected()),
        };
        rest = &rest[unit_len..];
        total = number
            .checked_mul(factor)
            .and_then(|v| total.checked_add(v))
            .ok_or(TextError::TooLarge)?;
    }
    Ok(sign * total)
}

/// A time: RFC 3339 (`2024-05-01T12:00:00Z`, offsets allowed), Unix
/// milliseconds (`1714564800000`), or `now`. Returns Unix milliseconds.
///
/// ```
/// use uuidforge::batch::parse_time_ms;
/// assert_eq!(parse_time_ms("2024-05-01T14:00:00+02:00"), Ok(1_714_564_800_000));
/// assert_eq!(parse_time_ms("1714564800000"), Ok(1_714_564_800_000));
/// ```
pub fn parse_time_ms(text: &str) -> Result<i64, TextError> {
    if text.len() > MAX_TEXT {
        return Err(TextError::TooLong { len: text.len() });
    }
    if text == "now" {
        return Ok(now_unix_ms());
    }
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|e| TextError::Syntax {
            detail: Some(e.to_string()),
            expected: TIME_SYNTAX,
        })
}

/// The system clock in Unix milliseconds (0 before 1970).
pub fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The versions a batch can make without a name (RFC 9562 §5): v1, v4, v6,
/// v7 and v8 (the draft's 60-bit time layout).
pub const BATCH_VERSIONS: [u8; 5] = [1, 4, 6, 7, 8];

/// A validated request for a batch of UUIDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSpec {
    /// UUID version, one of [`BATCH_VERSIONS`].
    pub version: u8,
    /// The v7 generator settings (the profile's, with `shift` added).
    pub config: GeneratorConfig,
    /// Whether `config` is a built-in profile as it stands: only then can
    /// the process-wide generator serve the batch.
    pub built_in: bool,
    /// Signed shift of v7 timestamps, ms.
    pub shift_ms: Option<i64>,
    /// Make v7 values for this instant instead of now (backfill).
    pub at_unix_ms: Option<i64>,
}

fn in_time_range(ms: i64) -> bool {
    (0..=MAX_UNIX_MS as i64).contains(&ms)
}

impl BatchSpec {
    /// Checks a request. `profile` is a built-in profile's name or a custom
    /// [`GeneratorConfig`] given by the caller through [`BatchSpec::new`].
    /// Errors name the field (`version`, `profile`, `shift`, `at`).
    pub fn parse(
        version: Option<&str>,
        profile: Option<&str>,
        shift: Option<&str>,
        at: Option<&str>,
    ) -> Result<BatchSpec, FieldError> {
        let version = match version {
            None => 7,
            Some(text) => text
                .parse::<u8>()
                .ok()
                .filter(|v| BATCH_VERSIONS.contains(v))
                .ok_or_else(|| FieldError::new("version", text, "1, 4, 6, 7 or 8"))?,
        };
        let config = match profile {
            None => None,
            Some(name) => Some(GeneratorConfig::profile(name).ok_or_else(|| {
                FieldError::new("profile", name, format!("one of {}", PROFILES.join(", ")))
            })?),
        };
        let shift_ms = shift
            .map(|t| parse_duration_ms(t).map_err(|e| FieldError::new("shift", t, e.to_string())))
            .transpose()?;
        let at_unix_ms = at
            .map(|t| parse_time_ms(t).map_err(|e| FieldError::new("at", t, e.to_string())))
            .transpose()?;
        BatchSpec::new(version, config, shift_ms, at_unix_ms)
    }

    /// Checks a request whose values are already parsed; `config` `None`
    /// means the `default` profile.
    pub fn new(
        version: u8,
        config: Option<GeneratorConfig>,
        shift_ms: Option<i64>,
        at_unix_ms: Option<i64>,
    ) -> Result<BatchSpec, FieldError> {
        if !BATCH_VERSIONS.contains(&version) {
            return Err(FieldError::new("version", version, "1, 4, 6, 7 or 8"));
        }
        let built_in = config
            .as_ref()
            .is_none_or(|c| GeneratorConfig::profile(&c.name).as_ref() == Some(c));
        let given = [
            ("shift", shift_ms.map(|v| format!("{v} ms"))),
            ("at", at_unix_ms.map(|v| format!("{v} ms"))),
            ("profile", config.as_ref().map(|c| c.name.clone())),
        ];
        if version != 7 {
            if let Some((field, Some(value))) = given.into_iter().find(|(_, v)| v.is_some()) {
                return Err(FieldError::new(
                    field,
                    value,
                    format!("no {field} with version {version}: only version 7 takes it"),
                ));
            }
        }
        let mut config = config.unwrap_or_default();
        if let Some(at) = at_unix_ms {
            if !in_time_range(at) {
                return Err(FieldError::new(
                    "at",
                    format!("{at} ms"),
                    "a time from 1970 to 10889 AD",
                ));
            }
        }
        if let Some(shift) = shift_ms {
            config.shift_ms = config.shift_ms.saturating_add(shift);
            config.validate().map_err(|e| {
                FieldError::new("shift", format!("{shift} ms"), e.expected.to_string())
            })?;
            let base = at_unix_ms.unwrap_or_else(now_unix_ms);
            let shifted = base.saturating_add(config.shift_ms);
            if !in_time_range(shifted) {
                return Err(FieldError::new(
                    "shift",
                    format!("{shift} ms"),
                    format!("a shift that keeps the timestamp from 1970 to 10889 AD (it moves it to {shifted} ms)"),
                ));
            }
        }
        Ok(BatchSpec {
            version,
            config,
            built_in,
            shift_ms,
            at_unix_ms,
        })
    }

    /// A source with generators of its own: values are strictly increasing
    /// within the source (the command line's case: one process, one batch).
    pub fn owned_source(&self) -> Result<BatchSource, FieldError> {
        let config_error =
            |e: GenError| FieldError::new("profile", &self.config.name, e.to_string());
        Ok(BatchSource(match self.version {
            7 => match self.at_unix_ms {
                Some(at) => {
                    let rng = Buffered::new(ConfiguredRng::new(self.config.randomness));
                    let clock = FixedClock(at as u64 * 1_000_000);
                    Kind::Backfill(Box::new(
                        V7Generator::with_sources(self.config.clone(), clock, rng)
                            .map_err(config_error)?,
                    ))
                }
                None => Kind::V7(Box::new(
                    V7Generator::new(self.config.clone()).map_err(config_error)?,
                )),
            },
            4 => Kind::V4(OsCsprng::new()),
            1 => {
                let mut rng = OsCsprng::new();
                let mut node = rng.next_u64().to_be_bytes();
                node[2] |= 1; // multicast bit: a random node, RFC 9562 §6.10
                let node: [u8; 6] = node[2..].try_into().expect("6 bytes");
                Kind::V1(node)
            }
            6 => Kind::V6(V6Generator::new(SystemClock, OsCsprng::new())),
            _ => Kind::V8(V8DraftGenerator::new(
                crate::v8::DraftLayout::Ts60,
                SystemClock,
                OsCsprng::new(),
            )),
        }))
    }

    /// Like [`BatchSpec::owned_source`], but v7 values of a built-in
    /// profile, unshifted and for now, come from the process-wide generator
    /// ([`global_profile`]): strictly increasing across every batch of the
    /// process, whichever thread or request makes it (a server's case).
    /// Shifted and backfilled batches are increasing within themselves.
    pub fn process_wide_source(&self) -> Result<BatchSource, FieldError> {
        match (self.version, self.built_in, self.shift_ms, self.at_unix_ms) {
            (7, true, None, None) => Ok(BatchSource(Kind::Shared(
                global_profile(&self.config.name).expect("checked built-in"),
            ))),
            _ => self.owned_source(),
        }
    }
}

/// A clock stopped at one instant, for backfill.
struct FixedClock(u64);

impl TimeSource for FixedClock {
    fn now_unix_ns(&mut self) -> Option<u64> {
        Some(self.0)
    }
}

enum Kind {
    Shared(&'static SharedGenerator),
    V7(Box<V7Generator>),
    Backfill(Box<V7Generator<FixedClock>>),
    V4(OsCsprng),
    V1([u8; 6]),
    V6(V6Generator),
    V8(V8DraftGenerator),
}

/// Makes the UUIDs of a [`BatchSpec`] chunk by chunk.
pub struct BatchSource(Kind);

/// The deterministic UUIDv7 of a time and a key (E8, [`v7_from_key`]): the
/// command line's `gen --at T --key K` and the HTTP `at` + `key`
/// parameters. Errors name the field: `at` missing or out of range.
///
/// ```
/// use uuidforge::batch::keyed_v7;
/// let a = keyed_v7(Some(1_645_557_742_000), b"orders:42").unwrap();
/// assert_eq!(a, uuidforge::generator::v7_from_key(1_645_557_742_000, b"orders:42").unwrap());
/// assert_eq!(keyed_v7(None, b"orders:42").unwrap_err().field, "at");
/// ```
///
/// [`v7_from_key`]: crate::generator::v7_from_key
pub fn keyed_v7(at_unix_ms: Option<i64>, key: &[u8]) -> Result<Uuid, FieldError> {
    let at = at_unix_ms.ok_or_else(|| {
        FieldError::new(
            "at",
            "(none)",
            "a time: a key makes the one UUID of (at, key)",
        )
    })?;
    if !in_time_range(at) {
        return Err(FieldError::new(
            "at",
            format!("{at} ms"),
            "a time from 1970 to 10889 AD",
        ));
    }
    crate::generator::v7_from_key(at as u64, key)
}

impl BatchSource {
    /// The generator's telemetry (E4), for v7 sources.
    pub fn telemetry(&self) -> Option<crate::generator::Telemetry> {
        match &self.0 {
            Kind::Shared(g) => Some(g.telemetry()),
            Kind::V7(g) => Some(g.telemetry()),
            Kind::Backfill(g) => Some(g.telemetry()),
            _ => None,
        }
    }

    /// Starts a v7 source of its own above `unix_ms` (a checkpoint, E5);
    /// false for sources that cannot (other versions, the process-wide one).
    pub fn resume_after(&mut self, unix_ms: u64) -> bool {
        match &mut self.0 {
            Kind::V7(g) => g.resume_after(unix_ms),
            Kind::Backfill(g) => g.resume_after(unix_ms),
            _ => return false,
        }
        true
    }

    /// The last timestamp a v7 source of its own used, in Unix milliseconds.
    pub fn last_unix_ms(&self) -> Option<u64> {
        match &self.0 {
            Kind::V7(g) => Some(g.last_unix_ms()),
            Kind::Backfill(g) => Some(g.last_unix_ms()),
            _ => None,
        }
    }

    /// Fills `out` with the next values.
    ///
    /// Errors are the generator's failure policies (a counter overflow under
    /// the `error` policy, a backfill past the end of time).
    pub fn fill(&mut self, out: &mut [Uuid]) -> Result<(), GenError> {
        match &mut self.0 {
            Kind::Shared(g) => g.fill_or_continue(out),
            Kind::V7(g) => g.fill(out)?,
            Kind::Backfill(g) => g.fill(out)?,
            Kind::V4(rng) => {
                let mut bytes = [0u8; 16];
                for slot in out {
                    rng.fill(&mut bytes);
                    *slot = uuid::Builder::from_random_bytes(bytes).into_uuid();
                }
            }
            Kind::V1(node) => {
                for slot in out {
                    *slot = Uuid::now_v1(node);
                }
            }
            Kind::V6(g) => {
                for slot in out {
                    *slot = g.generate()?;
                }
            }
            Kind::V8(g) => {
                for slot in out {
                    *slot = g.generate()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_times() {
        assert_eq!(parse_duration_ms("500ms"), Ok(500));
        assert_eq!(parse_duration_ms("-1h30m"), Ok(-5_400_000));
        assert_eq!(parse_duration_ms("2d"), Ok(172_800_000));
        let e = parse_duration_ms(&"0ms".repeat(14)).unwrap_err();
        assert_eq!(e, TextError::TooLong { len: 42 });
        assert!(e.to_string().contains("at most 40"));
        for bad in ["1x", "", "-", "h", "1h-2m"] {
            assert!(parse_duration_ms(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_duration_ms("9999999999999999w"),
            Err(TextError::TooLarge)
        );
        assert_eq!(parse_time_ms("2024-05-01T12:00:00Z"), Ok(1_714_564_800_000));
        assert!(parse_time_ms("yesterday")
            .unwrap_err()
            .to_string()
            .contains("RFC 3339"));
    }

    #[test]
    fn errors_name_the_field() {
        let field = |v, p, s, a| BatchSpec::parse(v, p, s, a).unwrap_err().field;
        assert_eq!(field(Some("3"), None, None, None), "version");
        assert_eq!(field(Some("x"), None, None, None), "version");
        assert_eq!(field(None, Some("fast"), None, None), "profile");
        assert_eq!(field(None, None, Some("1y"), None), "shift");
        assert_eq!(field(None, None, Some("-100000w"), None), "shift");
        assert_eq!(field(None, None, None, Some("-5")), "at");
        assert_eq!(field(None, None, None, Some("tomorrow")), "at");
        assert_eq!(field(Some("4"), Some("pg18"), None, None), "profile");
        assert_eq!(field(Some("6"), None, Some("1h"), None), "shift");
        let e = BatchSpec::parse(None, None, Some("-100000w"), None).unwrap_err();
        assert!(e.expected.contains("it moves it to -"), "{e}");
    }

    #[test]
    fn every_version_and_the_settings_show_in_the_values() {
        for v in BATCH_VERSIONS {
            let spec = BatchSpec::parse(Some(&v.to_string()), None, None, None).unwrap();
            let mut out = [Uuid::nil(); 64];
            spec.process_wide_source().unwrap().fill(&mut out).unwrap();
            assert!(
                out.iter().all(|u| u.get_version_num() == v as usize),
                "v{v}"
            );
            if v != 4 {
                assert!(out.windows(2).all(|w| w[0] < w[1]), "v{v} increasing");
            }
        }
        let spec = BatchSpec::parse(None, None, None, Some("2024-05-01T12:00:00Z")).unwrap();
        let mut out = [Uuid::nil(); 1000];
        spec.owned_source().unwrap().fill(&mut out).unwrap();
        assert!(out.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(crate::v7::unix_ms(&out[0]), 1_714_564_800_000);
        let spec = BatchSpec::parse(None, None, Some("-1d"), None).unwrap();
        assert!(!matches!(
            spec.process_wide_source().unwrap().0,
            Kind::Shared(_)
        ));
        let mut one = [Uuid::nil()];
        spec.process_wide_source().unwrap().fill(&mut one).unwrap();
        let age = now_unix_ms() - crate::v7::unix_ms(&one[0]) as i64;
        assert!((86_390_000..86_410_000).contains(&age), "{age}");
    }

    #[test]
    fn process_wide_batches_interleave_in_order() {
        let specs: Vec<BatchSpec> = PROFILES
            .iter()
            .map(|p| BatchSpec::parse(None, Some(p), None, None).unwrap())
            .collect();
        let mut last = Uuid::nil();
        for round in 0..200 {
            let mut out = [Uuid::nil(); 7];
            specs[round % specs.len()]
                .process_wide_source()
                .unwrap()
                .fill(&mut out)
                .unwrap();
            for u in out {
                assert!(u > last);
                last = u;
            }
        }
    }
}

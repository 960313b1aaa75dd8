//! Generator settings and the named profiles (B13), loadable from and
//! printable as JSON.
//!
//! The 74 bits after the 48-bit millisecond timestamp are filled, most
//! significant first (RFC 9562 §6.2), with:
//!
//! ```text
//! | fraction (F) | counter (C: G guard bits + C-G random-initialised) | segment (S) | random (74-F-C-S) |
//! ```
//!
//! * fraction: Method 3 sub-millisecond precision, `floor(frac × 2^F)`;
//! * counter: Method 1 (+1) or Method 2 (random increment), reset at each new
//!   tick (a tick is one 1/2^F of a millisecond) with its `G` leading guard
//!   bits zero and the rest random (B3, B4, B6);
//! * segment: random bits drawn once per tick (B4);
//! * random: fresh CSPRNG bits for every UUID (B5).

use crate::error::FieldError;
use serde::{Deserialize, Serialize};

/// How the counter advances within a tick (RFC 9562 §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "method")]
pub enum Increment {
    /// Method 1: +1 per UUID.
    One,
    /// Method 2: a random increment in `1..=max` per UUID.
    Random {
        /// Largest increment.
        max: u64,
    },
}

/// What to do when the counter would overflow within one tick (B3, E3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverflowPolicy {
    /// Move the timestamp one tick ahead of the clock and start a new counter
    /// (RFC 9562 §6.2 "MAY increment the timestamp ahead"). Default.
    Bump,
    /// Wait until the clock reaches the next tick (the RFC's preferred
    /// handling).
    Stall,
    /// Return [`super::GenError::CounterOverflow`].
    Error,
}

/// What to do when the clock reads earlier than the last timestamp used
/// (B8, E3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "policy")]
pub enum RollbackPolicy {
    /// Keep the last timestamp and count on until the clock catches up.
    /// Output stays strictly increasing. Default.
    Keep,
    /// Keep counting while the clock is at most `max_ms` behind; beyond that,
    /// restart from the clock (the only policy that gives up monotonicity,
    /// counted as a reset).
    Absorb {
        /// Largest rollback absorbed, in milliseconds.
        max_ms: u64,
    },
    /// Return [`super::GenError::ClockMovedBack`].
    Error,
}

/// Where milliseconds come from (B1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockMode {
    /// Unix milliseconds from `clock_gettime` on every reading.
    System,
    /// Microseconds >> 10: a "millisecond" of 1.024 ms, so the clock runs
    /// 2.34% slow (1 − 1000/1024) and, since 1970, reads about 1.3 years
    /// behind (2.34% of ~56 years). RFC 9562 §6.1 allows such alterations;
    /// it saves a division.
    Fast,
    /// Unix milliseconds from the system clock read at most about once per
    /// millisecond: in between, the CPU's time-stamp counter tells whether
    /// the same millisecond is still running (x86_64 with an invariant TSC;
    /// elsewhere the same as `system`). A millisecond boundary is seen up to
    /// ~1% of a millisecond late and a clock step up to 1 ms late; order is
    /// kept either way. Halves the cost of reading the time. Default.
    Tsc,
}

/// Which random source fills the bits (B10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Randomness {
    /// ChaCha8 seeded from the operating system, reseeded periodically and
    /// after `fork()`. Default.
    Csprng,
    /// A non-cryptographic generator (wyrand) seeded from the OS: faster,
    /// guessable. Only on explicit request.
    InsecureFast,
}

/// A random shift chosen per generator instance, in whole steps, so that
/// generators (threads, sessions) write to `steps` different places of an
/// index (B1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    /// Size of one step in milliseconds.
    pub step_ms: u64,
    /// Number of possible positions (shift = k × step, k in 0..steps).
    pub steps: u64,
}

/// A periodic random shift that hides the creation time (B12): every
/// `period_ms` a new shift in `0..=max_ms` is drawn. A smaller new shift is
/// absorbed by the rollback policy, so order is kept; the price is that keys
/// made right after a period boundary may carry an earlier-looking time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Masking {
    /// How often the shift changes, in milliseconds.
    pub period_ms: u64,
    /// Largest shift, in milliseconds.
    pub max_ms: u64,
}

/// Every setting of a UUIDv7 generator.
///
/// ```
/// use uuidforge::generator::GeneratorConfig;
/// let c = GeneratorConfig::profile("default").unwrap();
/// assert_eq!((c.counter_bits, c.guard_bits, c.random_bits()), (18, 1, 56));
/// let json = c.to_json();
/// assert_eq!(GeneratorConfig::from_json(&json).unwrap(), c);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GeneratorConfig {
    /// Profile name.
    pub name: String,
    /// Method 3 sub-millisecond fraction bits (0..=12).
    pub fraction_bits: u8,
    /// Counter bits, guard bits included (0..=74 − fraction).
    pub counter_bits: u8,
    /// Leading counter bits set to zero at each new tick (≤ counter bits).
    pub guard_bits: u8,
    /// Counter increment.
    pub increment: Increment,
    /// Bits drawn once per tick, after the counter.
    pub segment_bits: u8,
    /// Clock unit.
    pub clock: ClockMode,
    /// Fixed signed shift of the timestamp in milliseconds (B1,
    /// `uuidv7(shift)`).
    pub shift_ms: i64,
    /// Random per-instance shift in steps.
    pub spread: Option<Spread>,
    /// Periodic random shift.
    pub masking: Option<Masking>,
    /// Counter overflow policy.
    pub overflow: OverflowPolicy,
    /// Clock rollback policy.
    pub rollback: RollbackPolicy,
    /// Random source.
    pub randomness: Randomness,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            name: "default".into(),
            fraction_bits: 0,
            counter_bits: 18,
            guard_bits: 1,
            increment: Increment::One,
            segment_bits: 0,
            clock: ClockMode::Tsc,
            shift_ms: 0,
            spread: None,
            masking: None,
            overflow: OverflowPolicy::Bump,
            rollback: RollbackPolicy::Keep,
            randomness: Randomness::Csprng,
        }
    }
}

/// Names of the built-in profiles.
pub const PROFILES: [&str; 4] = ["default", "counter42", "pg18", "random"];

impl GeneratorConfig {
    /// A built-in profile:
    ///
    /// * `default` — the article's layout: 1 guard bit + 17-bit counter (11
    ///   bits in `rand_a`, 6 in `rand_b`), then 56 fresh random bits;
    /// * `counter42` — the `uuid`/`uuid7` crates' layout: 42-bit counter
    ///   (1 guard bit), 32 random bits;
    /// * `pg18` — PostgreSQL 18: 12-bit sub-ms fraction, 62 random bits, the
    ///   fraction advanced by one when the clock has not moved;
    /// * `random` — 74 random bits at each new millisecond, then a random
    ///   increment (Method 2, up to 2^32) within it.
    ///
    /// ```text
    /// default   |ms 48|ver|G|counter 11|var|counter 6|random 56          |
    /// counter42 |ms 48|ver|G|counter 11|var|counter 30|random 32         |
    /// pg18      |ms 48|ver|fraction 12 |var|random 62                    |
    /// random    |ms 48|ver|G|random-incremented 73 bits (rand_a, rand_b) |
    /// ```
    pub fn profile(name: &str) -> Option<GeneratorConfig> {
        let base = GeneratorConfig {
            name: name.to_string(),
            ..GeneratorConfig::default()
        };
        Some(match name {
            "default" => base,
            "counter42" => GeneratorConfig {
                counter_bits: 42,
                guard_bits: 1,
                ..base
            },
            "pg18" => GeneratorConfig {
                fraction_bits: 12,
                counter_bits: 0,
                guard_bits: 0,
                ..base
            },
            "random" => GeneratorConfig {
                counter_bits: 74,
                guard_bits: 1,
                increment: Increment::Random { max: 1 << 32 },
                ..base
            },
            _ => return None,
        })
    }

    /// Random bits per UUID: `74 − fraction − counter − segment`.
    pub const fn random_bits(&self) -> u8 {
        74 - self.fraction_bits - self.counter_bits - self.segment_bits
    }

    /// Checks every field; errors name the field and the allowed range.
    pub fn validate(&self) -> Result<(), FieldError> {
        let check =
            |field, value: u64, max: u64| FieldError::check_max(field, value as u128, max as u128);
        check("fraction_bits", self.fraction_bits as u64, 12)?;
        check(
            "counter_bits",
            self.counter_bits as u64,
            74 - self.fraction_bits as u64,
        )?;
        check(
            "guard_bits",
            self.guard_bits as u64,
            self.counter_bits as u64,
        )?;
        check(
            "segment_bits",
            self.segment_bits as u64,
            (74 - self.fraction_bits - self.counter_bits) as u64,
        )?;
        check("segment_bits", self.segment_bits as u64, 64)?;
        if let Increment::Random { max } = self.increment {
            if max == 0 || (self.counter_bits < 64 && max >= 1 << self.counter_bits) {
                return Err(FieldError::new(
                    "increment.max",
                    max,
                    format!("1..2^counter_bits (counter_bits = {})", self.counter_bits),
                ));
            }
        }
        if self.shift_ms.unsigned_abs() > crate::v7::MAX_UNIX_MS {
            return Err(FieldError::new(
                "shift_ms",
                self.shift_ms,
                format!("-{0}..={0}", crate::v7::MAX_UNIX_MS),
            ));
        }
        if let Some(s) = self.spread {
            if s.steps == 0 || s.step_ms == 0 || s.step_ms.saturating_mul(s.steps) > 1 << 40 {
                return Err(FieldError::new(
                    "spread",
                    format!("step_ms {} steps {}", s.step_ms, s.steps),
                    "step_ms >= 1, steps >= 1, step_ms × steps <= 2^40",
                ));
            }
        }
        if let Some(m) = self.masking {
            if m.period_ms == 0 || m.max_ms > 1 << 40 {
                return Err(FieldError::new(
                    "masking",
                    format!("period_ms {} max_ms {}", m.period_ms, m.max_ms),
                    "period_ms >= 1, max_ms <= 2^40",
                ));
            }
        }
        Ok(())
    }

    /// Parses a JSON profile (unknown fields rejected; missing ones take the
    /// default profile's values) and validates it.
    pub fn from_json(text: &str) -> Result<GeneratorConfig, FieldError> {
        let c: GeneratorConfig = serde_json::from_str(text).map_err(|e| {
            FieldError::new(
                "profile JSON",
                e,
                "a generator profile (see `uuidforge profile show default`)",
            )
        })?;
        c.validate()?;
        Ok(c)
    }

    /// The profile as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a config serialises")
    }

    /// A one-line bit diagram of the 128 bits.
    ///
    /// ```
    /// let c = uuidforge::generator::GeneratorConfig::profile("default").unwrap();
    /// assert_eq!(c.diagram(), "unix_ts_ms 48 | ver 4 | guard 1 | counter 17 | var 2 | random 56 (rand_a 12 = guard 1 + counter 11; rand_b 62 = counter 6 + random 56)");
    /// ```
    pub fn diagram(&self) -> String {
        let mut fields: Vec<(&str, u8)> = Vec::new();
        if self.fraction_bits > 0 {
            fields.push(("fraction", self.fraction_bits));
        }
        if self.guard_bits > 0 {
            fields.push(("guard", self.guard_bits));
        }
        if self.counter_bits > self.guard_bits {
            fields.push(("counter", self.counter_bits - self.guard_bits));
        }
        if self.segment_bits > 0 {
            fields.push(("segment", self.segment_bits));
        }
        if self.random_bits() > 0 {
            fields.push(("random", self.random_bits()));
        }
        // Split the list at bit 12 of the 74 (rand_a | rand_b) for the
        // parenthesis, and put "var 2" where it falls.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut used = 0u8;
        for &(name, width) in &fields {
            let in_a = 12u8.saturating_sub(used).min(width);
            if in_a > 0 {
                a.push(format!("{name} {in_a}"));
            }
            if width > in_a {
                b.push(format!("{name} {}", width - in_a));
            }
            used += width;
        }
        let mut main = vec!["unix_ts_ms 48".to_string(), "ver 4".to_string()];
        let mut used = 0u8;
        let mut var_placed = false;
        for &(name, width) in &fields {
            if used >= 12 && !var_placed {
                main.push("var 2".into());
                var_placed = true;
            }
            main.push(format!("{name} {width}"));
            used += width;
        }
        if !var_placed {
            main.insert(main.len().min(3), "var 2".into());
        }
        format!(
            "{} (rand_a 12 = {}; rand_b 62 = {})",
            main.join(" | "),
            a.join(" + "),
            b.join(" + ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_valid_and_round_trip_through_json() {
        for name in PROFILES {
            let c = GeneratorConfig::profile(name).unwrap();
            c.validate().unwrap();
            assert_eq!(
                GeneratorConfig::from_json(&c.to_json()).unwrap(),
                c,
                "{name}"
            );
        }
        assert!(GeneratorConfig::profile("nope").is_none());
    }

    #[test]
    fn invalid_settings_name_the_field_and_range() {
        let bad = |json: &str| GeneratorConfig::from_json(json).unwrap_err();
        let e = bad(r#"{"fraction_bits": 13}"#);
        assert_eq!((e.field, e.expected.as_str()), ("fraction_bits", "0..=12"));
        let e = bad(r#"{"fraction_bits": 12, "counter_bits": 63}"#);
        assert_eq!((e.field, e.expected.as_str()), ("counter_bits", "0..=62"));
        let e = bad(r#"{"counter_bits": 4, "guard_bits": 5}"#);
        assert_eq!(e.field, "guard_bits");
        let e = bad(r#"{"counter_bits": 70, "segment_bits": 5}"#);
        assert_eq!(e.field, "segment_bits");
        let e = bad(r#"{"increment": {"method": "random", "max": 0}}"#);
        assert_eq!(e.field, "increment.max");
        let e = bad(r#"{"colour": "blue"}"#);
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");
        let e = bad(r#"{"overflow": "explode"}"#);
        assert_eq!(e.field, "profile JSON");
    }

    #[test]
    fn diagrams_place_every_bit() {
        for name in PROFILES {
            let d = GeneratorConfig::profile(name).unwrap().diagram();
            let total: u32 = d
                .split(" (")
                .next()
                .unwrap()
                .split(" | ")
                .map(|f| f.rsplit(' ').next().unwrap().parse::<u32>().unwrap())
                .sum();
            assert_eq!(total, 128, "{name}: {d}");
        }
        let pg18 = GeneratorConfig::profile("pg18").unwrap().diagram();
        assert_eq!(pg18, "unix_ts_ms 48 | ver 4 | fraction 12 | var 2 | random 62 (rand_a 12 = fraction 12; rand_b 62 = random 62)");
    }
}

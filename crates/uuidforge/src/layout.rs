//! Generator-aware decoding of UUIDv7 (RFC 9562 §6.2 allows the 74 bits
//! after the timestamp to carry a sub-millisecond fraction or a counter), and
//! a guess of which generator wrote an unknown value.
//!
//! | layout | what `rand_a` (and the top of `rand_b`) hold | written by |
//! |---|---|---|
//! | [`V7Layout::Random`] | 74 random bits | RFC 9562 plain, most libraries |
//! | [`V7Layout::Fraction12`] | `floor(frac_ms × 4096)` (Method 3) | PostgreSQL 18 |
//! | [`V7Layout::Micros`] | microseconds within the ms, 0..=999 | MariaDB |
//! | [`V7Layout::Go256ns`] | (ns within the ms) >> 8, 256-ns units | Go `google/uuid` |
//! | [`V7Layout::Counter42`] | 42-bit counter: rand_a ‖ top 30 of rand_b | Rust `uuid`, `uuid7` |
//! | [`V7Layout::Counter18`] | guard bit + 17-bit counter: rand_a ‖ top 6 of rand_b | uuidforge `default` profile |
//! | [`V7Layout::Draft01`] | 36-bit seconds + binary fraction (2021 draft) | early adopters |

use crate::draft01::{self, Draft01Precision};
use crate::timestamp::{Precision, Timestamp};
use crate::v7;
use uuid::Uuid;

/// A known way of filling a UUIDv7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum V7Layout {
    /// Milliseconds, then random bits (RFC 9562 §5.7 without options).
    Random,
    /// 12-bit Method 3 fraction of the millisecond (PostgreSQL 18).
    Fraction12,
    /// Microseconds within the millisecond in `rand_a` (MariaDB).
    Micros,
    /// 256-ns units within the millisecond in `rand_a` (Go google/uuid).
    Go256ns,
    /// 42-bit counter after the timestamp (Rust `uuid` and `uuid7` crates).
    Counter42,
    /// Guard bit + 17-bit counter, 11 bits in `rand_a` and 6 in `rand_b`
    /// (the article's layout, uuidforge's default profile).
    Counter18,
    /// The 2021 draft-01 layout (36-bit seconds + binary fraction).
    Draft01,
}

impl V7Layout {
    /// Every layout.
    pub const ALL: [V7Layout; 7] = [
        V7Layout::Random,
        V7Layout::Fraction12,
        V7Layout::Micros,
        V7Layout::Go256ns,
        V7Layout::Counter42,
        V7Layout::Counter18,
        V7Layout::Draft01,
    ];

    /// The name used in JSON and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            V7Layout::Random => "random",
            V7Layout::Fraction12 => "fraction12",
            V7Layout::Micros => "micros",
            V7Layout::Go256ns => "go256ns",
            V7Layout::Counter42 => "counter42",
            V7Layout::Counter18 => "counter18",
            V7Layout::Draft01 => "draft01",
        }
    }

    /// Who writes values in this layout.
    pub const fn written_by(self) -> &'static str {
        match self {
            V7Layout::Random => "RFC 9562 random fill",
            V7Layout::Fraction12 => "PostgreSQL 18 uuidv7() (12-bit sub-ms fraction)",
            V7Layout::Micros => "MariaDB UUID_v7() (microseconds in rand_a)",
            V7Layout::Go256ns => "Go google/uuid NewV7 (256-ns units in rand_a)",
            V7Layout::Counter42 => "Rust uuid / uuid7 crates (42-bit counter)",
            V7Layout::Counter18 => "uuidforge default profile (guard bit + 17-bit counter)",
            V7Layout::Draft01 => "draft-peabody-dispatch-new-uuid-format-01 (36-bit seconds)",
        }
    }

    /// Looks a layout up by [`V7Layout::name`].
    pub fn from_name(name: &str) -> Option<V7Layout> {
        V7Layout::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name))
    }

    /// Counter width in bits, for counter layouts.
    pub const fn counter_bits(self) -> Option<u8> {
        match self {
            V7Layout::Counter42 => Some(42),
            V7Layout::Counter18 => Some(18),
            _ => None,
        }
    }
}

/// What a v7 value says when read in a given layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V7Reading {
    /// The layout it was read in.
    pub layout: V7Layout,
    /// The instant, with the precision the layout encodes.
    pub timestamp: Timestamp,
    /// The counter, for counter layouts.
    pub counter: Option<u64>,
}

/// Reads a v7 value in `layout`. Draft-01 values are read at microsecond
/// precision; use [`draft01::decode`] for another.
///
/// ```
/// use uuidforge::layout::{read_v7, V7Layout};
/// let pg18 = uuidforge::v7::from_unix_ns_method3(1_645_557_742_000_456_700, 12, 0).unwrap();
/// let r = read_v7(&pg18, V7Layout::Fraction12);
/// assert_eq!(r.timestamp.to_string(), "2022-02-22T19:22:22.0004565Z");
/// let counter = uuidforge::v7::from_unix_ms(1645557742000, 0x123, 0x2AAAAAAA << 32).unwrap();
/// assert_eq!(read_v7(&counter, V7Layout::Counter42).counter, Some((0x123 << 30) | 0x2AAAAAAA));
/// ```
pub fn read_v7(uuid: &Uuid, layout: V7Layout) -> V7Reading {
    let ms = v7::unix_ms(uuid) as i128;
    let rand_a = v7::rand_a(uuid) as i128;
    let rand_b = v7::rand_b(uuid);
    let at = |nanos_in_ms: i128, precision| Timestamp::new(ms * 1_000_000 + nanos_in_ms, precision);
    let (timestamp, counter) = match layout {
        V7Layout::Random => (Timestamp::from_unix_ms(ms as u64), None),
        V7Layout::Fraction12 => (v7::timestamp_method3(uuid, 12), None),
        // A value above 999 is not MariaDB-shaped; clamp so the reading stays
        // inside its millisecond (the guess gives such values no weight).
        V7Layout::Micros => (at(rand_a.min(999) * 1_000, Precision::Microsecond), None),
        V7Layout::Go256ns => (at(rand_a * 256, Precision::Tick { nanos: 256 }), None),
        V7Layout::Counter42 => (
            Timestamp::from_unix_ms(ms as u64),
            Some(((rand_a as u64) << 30) | (rand_b >> 32)),
        ),
        V7Layout::Counter18 => (
            Timestamp::from_unix_ms(ms as u64),
            Some(((rand_a as u64) << 6) | (rand_b >> 56)),
        ),
        V7Layout::Draft01 => (draft01::decode(uuid, Draft01Precision::Microsecond), None),
    };
    V7Reading {
        layout,
        timestamp,
        counter,
    }
}

/// The result of [`guess_v7_layout`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LayoutGuess {
    /// The most likely layout.
    pub layout: V7Layout,
    /// Its posterior probability (0..1) under the model described at
    /// [`guess_v7_layout`].
    pub confidence: f64,
    /// Every layout with its probability, most likely first.
    pub ranking: Vec<(V7Layout, f64)>,
    /// How many v7 values and same-millisecond pairs the guess used.
    pub values: usize,
    /// Consecutive pairs that share a millisecond (the strongest evidence).
    pub same_ms_pairs: usize,
}

const MS_2000: u64 = 946_684_800_000;
const MS_2100: u64 = 4_102_444_800_000;

/// Guesses which layout wrote a set of v7 values (other versions are
/// ignored; `None` if there is no v7 value).
///
/// A naive-Bayes model: each layout gets a prior, each value a likelihood
/// (is its timestamp between 2000 and 2100 when read this way; can `rand_a`
/// hold this value), and each consecutive pair in the same millisecond a
/// likelihood ratio against random bits (a counter that went up by one, a
/// fraction that went up a little). One value alone rarely tells much, and
/// the confidence says so; a run of values from one generator usually
/// settles it.
///
/// ```
/// use uuidforge::layout::{guess_v7_layout, V7Layout};
/// // A draft-01 value read as RFC 9562 would be dated in the 22nd century.
/// let f = uuidforge::draft01::Draft01Fields { unix_seconds: 1_645_557_742, subsec_nanos: 5, seq: 0, random: 9 };
/// let old = uuidforge::draft01::encode(uuidforge::draft01::Draft01Precision::Millisecond, f).unwrap();
/// assert_eq!(guess_v7_layout(&[old]).unwrap().layout, V7Layout::Draft01);
/// ```
pub fn guess_v7_layout(values: &[Uuid]) -> Option<LayoutGuess> {
    let v7s: Vec<&Uuid> = values.iter().filter(|u| u.get_version_num() == 7).collect();
    if v7s.is_empty() {
        return None;
    }
    let mut log_score: Vec<f64> = V7Layout::ALL.iter().map(|&l| prior(l).ln()).collect();
    for u in &v7s {
        for (i, &l) in V7Layout::ALL.iter().enumerate() {
            log_score[i] += value_log_likelihood(u, l);
        }
    }
    let mut same_ms_pairs = 0;
    for pair in v7s.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if v7::unix_ms(a) != v7::unix_ms(b) {
            continue;
        }
        same_ms_pairs += 1;
        for (i, &l) in V7Layout::ALL.iter().enumerate() {
            log_score[i] += pair_log_ratio(a, b, l);
        }
    }
    let max = log_score.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = log_score.iter().map(|s| (s - max).exp()).collect();
    let total: f64 = weights.iter().sum();
    let mut ranking: Vec<(V7Layout, f64)> = V7Layout::ALL
        .iter()
        .zip(weights)
        .map(|(&l, w)| (l, w / total))
        .collect();
    ranking.sort_by(|x, y| y.1.total_cmp(&x.1));
    Some(LayoutGuess {
        layout: ranking[0].0,
        confidence: ranking[0].1,
        ranking,
        values: v7s.len(),
        same_ms_pairs,
    })
}

fn prior(layout: V7Layout) -> f64 {
    match layout {
        V7Layout::Random => 0.25,
        V7Layout::Fraction12 => 0.2,
        V7Layout::Counter42 => 0.2,
        V7Layout::Counter18 => 0.1,
        V7Layout::Go256ns => 0.1,
        V7Layout::Micros => 0.05,
        V7Layout::Draft01 => 0.1,
    }
}

/// Log-likelihood of one value's `rand_a` and timestamp under `layout`.
fn value_log_likelihood(u: &Uuid, layout: V7Layout) -> f64 {
    const IMPLAUSIBLE: f64 = 1e-3;
    let ms = v7::unix_ms(u);
    let rfc_time_ok = (MS_2000..MS_2100).contains(&ms);
    let draft_ms = draft01::unix_seconds(u).saturating_mul(1000);
    let draft_time_ok = (MS_2000..MS_2100).contains(&draft_ms);
    let rand_a = v7::rand_a(u) as f64;
    let time = match layout {
        V7Layout::Draft01 => draft_time_ok,
        _ => rfc_time_ok,
    };
    let time_term = if time { 1.0 } else { IMPLAUSIBLE };
    let guard_clear = v7::rand_a(u) < 0x800;
    let rand_a_term = match layout {
        V7Layout::Random | V7Layout::Fraction12 | V7Layout::Draft01 => 1.0 / 4096.0,
        V7Layout::Micros if rand_a < 1000.0 => 1.0 / 1000.0,
        V7Layout::Micros => 1e-9,
        // Go bumps past 3906 only when called faster than its 256-ns tick.
        V7Layout::Go256ns if rand_a < 3907.0 => 0.99 / 3907.0,
        V7Layout::Go256ns => 0.01 / 189.0,
        // The `uuid` crate reseeds with the top bit clear, `uuid7` without.
        V7Layout::Counter42 if guard_clear => 1.5 / 4096.0,
        V7Layout::Counter42 => 0.5 / 4096.0,
        // The guard bit is reset at every millisecond.
        V7Layout::Counter18 if guard_clear => 1.99 / 4096.0,
        V7Layout::Counter18 => 0.01 / 4096.0,
    };
    (time_term * rand_a_term).ln()
}

/// Log-ratio, against random bits, of seeing `b` right after `a` in the same
/// millisecond under `layout`.
fn pair_log_ratio(a: &Uuid, b: &Uuid, layout: V7Layout) -> f64 {
    const CONTRADICTION: f64 = -14.0; // ~1e-6
    let counter_ratio = |bits: u32| {
        let (Some(x), Some(y)) = (read_v7(a, layout).counter, read_v7(b, layout).counter) else {
            return 0.0;
        };
        let space = (bits as f64) * std::f64::consts::LN_2;
        match y.checked_sub(x) {
            Some(1) => space,
            // Not consecutive (values skipped) but increasing and close.
            Some(d) if d > 0 && d <= 1 << 16 => space - 16.0 * std::f64::consts::LN_2,
            _ => CONTRADICTION,
        }
    };
    let delta = v7::rand_a(b) as i32 - v7::rand_a(a) as i32;
    match layout {
        V7Layout::Random | V7Layout::Draft01 => 0.0,
        V7Layout::Counter42 => counter_ratio(42),
        V7Layout::Counter18 => counter_ratio(18),
        // Clocks only go forward within one millisecond of one generator;
        // consecutive calls are usually a few ticks apart.
        V7Layout::Fraction12 | V7Layout::Go256ns => match delta {
            d if d < 0 => CONTRADICTION,
            0 => 0.0,
            d if d <= 64 => (4096.0f64 / 64.0).ln(),
            _ => 0.0,
        },
        V7Layout::Micros => match delta {
            d if d < 0 => CONTRADICTION,
            d if d <= 16 => (4096.0f64 / 17.0).ln(),
            _ => 0.0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_700_000_000_123;

    fn series(layout: V7Layout, n: u64) -> Vec<Uuid> {
        let rand = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 2;
        (0..n)
            .map(|i| match layout {
                V7Layout::Counter42 => {
                    let c = (0x155_5555_5555u64 >> 1) + i;
                    v7::from_unix_ms(
                        MS,
                        (c >> 30) as u16,
                        ((c & 0x3fff_ffff) << 32) | (rand(i) & 0xffff_ffff),
                    )
                    .unwrap()
                }
                V7Layout::Counter18 => {
                    let c = 0x5555u64 + i;
                    v7::from_unix_ms(MS, (c >> 6) as u16, ((c & 63) << 56) | (rand(i) >> 8))
                        .unwrap()
                }
                // Late in the millisecond: a fraction below 1000 could as well
                // be MariaDB's microseconds, and the guess would rightly hedge.
                V7Layout::Fraction12 => v7::from_unix_ns_method3(
                    MS * 1_000_000 + 600_000 + i * 700,
                    12,
                    rand(i) as u128,
                )
                .unwrap(),
                V7Layout::Micros => v7::from_unix_ms(MS, (300 + i / 3) as u16, rand(i)).unwrap(),
                V7Layout::Go256ns => v7::from_unix_ms(MS, (2000 + 3 * i) as u16, rand(i)).unwrap(),
                V7Layout::Random => {
                    v7::from_unix_ms(MS + i, (rand(i + 7) >> 40) as u16 & 0xfff, rand(i)).unwrap()
                }
                V7Layout::Draft01 => draft01::encode(
                    Draft01Precision::Microsecond,
                    draft01::Draft01Fields {
                        unix_seconds: MS / 1000,
                        subsec_nanos: (i * 1000) as u32,
                        seq: 0,
                        random: rand(i) >> 16,
                    },
                )
                .unwrap(),
            })
            .collect()
    }

    #[test]
    fn a_run_of_values_identifies_its_generator() {
        for layout in [
            V7Layout::Counter42,
            V7Layout::Counter18,
            V7Layout::Micros,
            V7Layout::Draft01,
        ] {
            let guess = guess_v7_layout(&series(layout, 12)).unwrap();
            assert_eq!(guess.layout, layout, "{guess:?}");
            assert!(guess.confidence > 0.9, "{layout:?}: {guess:?}");
        }
        // 1/4096 ms and 256 ns are 2.4% apart: a short run cannot tell
        // PostgreSQL 18 from Go, but it can tell it is one of the two.
        let guess = guess_v7_layout(&series(V7Layout::Fraction12, 12)).unwrap();
        let family: f64 = guess
            .ranking
            .iter()
            .filter(|(l, _)| matches!(l, V7Layout::Fraction12 | V7Layout::Go256ns))
            .map(|(_, p)| p)
            .sum();
        assert!(family > 0.99, "{guess:?}");
        assert!(
            guess.confidence < 0.9,
            "the guess must not overstate: {guess:?}"
        );
    }

    #[test]
    fn one_value_gives_a_low_confidence() {
        let one = v7::from_unix_ms(MS, 0x9ab, 12345).unwrap();
        let guess = guess_v7_layout(&[one]).unwrap();
        assert!(guess.confidence < 0.6, "{guess:?}");
        assert!(guess_v7_layout(&[Uuid::nil()]).is_none());
    }

    #[test]
    fn readings_decode_each_generator_unit() {
        let maria = v7::from_unix_ms(MS, 999, 0).unwrap();
        assert_eq!(
            read_v7(&maria, V7Layout::Micros).timestamp.to_string(),
            "2023-11-14T22:13:20.123999Z"
        );
        let go = v7::from_unix_ms(MS, 3906, 0).unwrap();
        let t = read_v7(&go, V7Layout::Go256ns).timestamp;
        assert_eq!(t.unix_nanos % 1_000_000, 3906 * 256);
        assert_eq!(t.precision, Precision::Tick { nanos: 256 });
        let c18 = v7::from_unix_ms(MS, 0x7ff, 0x3f << 56).unwrap();
        assert_eq!(read_v7(&c18, V7Layout::Counter18).counter, Some(0x1ffff));
    }
}

//! UUIDv6 and UUIDv8 generators, and the v8 shard layout builder with its
//! collision estimate (E11).

use super::source::{RandSource, SystemClock, TimeSource};
use super::GenError;
use crate::bits::mask;
use crate::error::FieldError;
use crate::gregorian::{v6_from_fields_raw, GregorianFields};
use crate::timestamp::GREGORIAN_TO_UNIX_TICKS;
use crate::v8::{DraftFields, DraftLayout};
use uuid::Uuid;

/// UUIDv6 (RFC 9562 §5.6) with a random clock sequence and a random node
/// (multicast bit set, §6.10) for every UUID, strictly increasing: when the
/// 100-ns clock has not moved, the timestamp advances by one tick.
///
/// ```
/// use uuidforge::generator::{V6Generator, SystemClock, OsCsprng};
/// let mut g = V6Generator::new(SystemClock, OsCsprng::new());
/// let (a, b) = (g.generate().unwrap(), g.generate().unwrap());
/// assert!(a < b && a.get_version_num() == 6);
/// ```
pub struct V6Generator<T: TimeSource = SystemClock, R: RandSource = super::OsCsprng> {
    clock: T,
    rng: R,
    last: u64,
}

impl<T: TimeSource, R: RandSource> V6Generator<T, R> {
    /// A generator over a clock and a random source.
    pub fn new(clock: T, rng: R) -> Self {
        V6Generator {
            clock,
            rng,
            last: 0,
        }
    }

    /// The next UUIDv6.
    pub fn generate(&mut self) -> Result<Uuid, GenError> {
        let now = match self.clock.now_unix_ns() {
            Some(ns) => ns / 100 + GREGORIAN_TO_UNIX_TICKS,
            None if self.last > 0 => self.last,
            None => return Err(GenError::ClockUnavailable),
        };
        let ticks = now.max(self.last + 1);
        if ticks >= 1 << 60 {
            return Err(GenError::TimestampOutOfRange {
                unix_ms: (ticks / 10_000) as i64,
            });
        }
        self.last = ticks;
        let r = self.rng.next_u64();
        Ok(v6_from_fields_raw(GregorianFields {
            ticks,
            clock_seq: (r >> 48) as u16 & 0x3fff,
            node: (r & mask(48) as u64) | (1 << 40),
        }))
    }
}

/// UUIDv8 in one of the 2021 draft's time layouts (§4.5), with these
/// timestamp units: `Ts32` Unix seconds, `Ts48` Unix milliseconds, `Ts60`
/// Unix microseconds, `Ts64` Unix nanoseconds (its top 60 bits kept). The
/// sequence starts at zero at each new timestamp and counts up (draft
/// §4.5.2); when it runs out the timestamp advances by one unit. The node is
/// random and never zero.
pub struct V8DraftGenerator<T: TimeSource = SystemClock, R: RandSource = super::OsCsprng> {
    layout: DraftLayout,
    clock: T,
    rng: R,
    last: Option<(u64, u16)>,
}

impl<T: TimeSource, R: RandSource> V8DraftGenerator<T, R> {
    /// A generator for `layout`.
    pub fn new(layout: DraftLayout, clock: T, rng: R) -> Self {
        V8DraftGenerator {
            layout,
            clock,
            rng,
            last: None,
        }
    }

    /// The timestamp unit of the layout, from Unix nanoseconds, in the
    /// layout's own resolution (`Ts64` keeps 16-ns steps).
    fn stamp(&self, ns: u64) -> u64 {
        match self.layout {
            DraftLayout::Ts32 => ns / 1_000_000_000,
            DraftLayout::Ts48 => ns / 1_000_000,
            DraftLayout::Ts60 => ns / 1_000,
            DraftLayout::Ts64 => ns >> 4,
        }
    }

    /// The next UUIDv8.
    pub fn generate(&mut self) -> Result<Uuid, GenError> {
        let (ts_bits, seq_bits, node_bits) = self.layout.widths();
        let ts_bits = ts_bits.min(60);
        let now = self.clock.now_unix_ns().map(|ns| self.stamp(ns));
        let (ts, seq) = match (now, self.last) {
            (None, None) => return Err(GenError::ClockUnavailable),
            (Some(now), Some((last, _))) if now > last => (now, 0),
            (None, Some((last, seq))) | (Some(_), Some((last, seq))) => {
                if (seq as u128) < mask(seq_bits) {
                    (last, seq + 1)
                } else {
                    (last + 1, 0)
                }
            }
            (Some(now), None) => (now, 0),
        };
        if ts > mask(ts_bits) as u64 {
            return Err(GenError::TimestampOutOfRange { unix_ms: -1 });
        }
        self.last = Some((ts, seq));
        let node = (self.rng.next_u64() & mask(node_bits) as u64).max(1);
        let timestamp = if self.layout == DraftLayout::Ts64 {
            ts << 4
        } else {
            ts
        };
        self.layout
            .encode(DraftFields {
                timestamp,
                seq,
                node,
            })
            .map_err(GenError::Config)
    }
}

/// A UUIDv8 layout for sharded systems (E11):
///
/// ```text
/// | unix_ts_ms 48 | ver 8 | shard S | counter C | random 74-S-C |  (var after the first 12 bits of the 74)
/// ```
///
/// ```
/// use uuidforge::generator::ShardLayout;
/// let layout = ShardLayout::new(10, 14).unwrap();
/// let mut g = layout.generator(513).unwrap();
/// let id = g.generate().unwrap();
/// assert_eq!(layout.shard_of(&id), 513);
/// // With distinct shard ids no two generators can collide. With random ids,
/// // 1000 generators at 100 ids/ms for a year: about 0.8%.
/// let p = layout.collision_probability(1000, 100, 365.0 * 86_400_000.0);
/// assert!(p > 0.001 && p < 0.01, "{p}");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardLayout {
    shard_bits: u32,
    counter_bits: u32,
}

impl ShardLayout {
    /// Checks the bit budget: shard + counter ≤ 74, counter ≥ 1.
    pub fn new(shard_bits: u8, counter_bits: u8) -> Result<ShardLayout, FieldError> {
        FieldError::check_max("shard_bits", shard_bits as u128, 64)?;
        if counter_bits == 0 {
            return Err(FieldError::new("counter_bits", counter_bits, "1..=64"));
        }
        FieldError::check_max(
            "counter_bits",
            counter_bits as u128,
            (74 - shard_bits).min(64) as u128,
        )?;
        Ok(ShardLayout {
            shard_bits: shard_bits as u32,
            counter_bits: counter_bits as u32,
        })
    }

    /// The layout as a file holds it: `{"node_bits": S, "counter_bits": C}`
    /// (what `uuidforge shard-layout --out` writes and `gen --shard-layout`
    /// and the SQL setting `uuidforge.shard_layout` read).
    ///
    /// ```
    /// use uuidforge::generator::ShardLayout;
    /// let l = ShardLayout::new(10, 14).unwrap();
    /// assert_eq!(ShardLayout::from_json(&l.to_json()), Ok(l));
    /// let e = ShardLayout::from_json(r#"{"node_bits": 70, "counter_bits": 14}"#).unwrap_err();
    /// assert_eq!(e.field, "node_bits");
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::json!({"node_bits": self.shard_bits, "counter_bits": self.counter_bits})
            .to_string()
    }

    /// Reads [`ShardLayout::to_json`]'s form; unknown fields are refused and
    /// errors name the field.
    pub fn from_json(text: &str) -> Result<ShardLayout, FieldError> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            node_bits: u64,
            counter_bits: u64,
        }
        let f: File = serde_json::from_str(text).map_err(|e| {
            FieldError::new(
                "shard layout",
                e,
                r#"JSON such as {"node_bits": 10, "counter_bits": 14}"#,
            )
        })?;
        FieldError::check_max("node_bits", f.node_bits as u128, 64)?;
        if f.counter_bits == 0 || f.counter_bits > 64 {
            return Err(FieldError::new("counter_bits", f.counter_bits, "1..=64"));
        }
        ShardLayout::new(f.node_bits as u8, f.counter_bits as u8)
    }

    /// Node id bits.
    pub const fn node_bits(&self) -> u32 {
        self.shard_bits
    }

    /// Counter bits.
    pub const fn counter_bits(&self) -> u32 {
        self.counter_bits
    }

    /// A one-line bit diagram of the 128 bits.
    ///
    /// ```
    /// let l = uuidforge::generator::ShardLayout::new(10, 14).unwrap();
    /// assert_eq!(l.diagram(), "unix_ts_ms 48 | ver 4 (8) | node 10 | counter 2 | var 2 | counter 12 | random 50");
    /// ```
    pub fn diagram(&self) -> String {
        // The 74 bits after the timestamp are split by the variant after 12.
        let mut parts = vec!["unix_ts_ms 48".to_string(), "ver 4 (8)".to_string()];
        let fields = [
            ("node", self.shard_bits),
            ("counter", self.counter_bits),
            ("random", self.random_bits()),
        ];
        let mut used = 0u32;
        let mut var_done = false;
        for (name, mut width) in fields {
            while width > 0 {
                if !var_done && used == 12 {
                    parts.push("var 2".to_string());
                    var_done = true;
                }
                let take = if var_done {
                    width
                } else {
                    width.min(12 - used)
                };
                parts.push(format!("{name} {take}"));
                used += take;
                width -= take;
            }
        }
        if !var_done {
            parts.push("var 2".to_string());
        }
        parts.join(" | ")
    }

    /// Random bits per UUID.
    pub const fn random_bits(&self) -> u32 {
        74 - self.shard_bits - self.counter_bits
    }

    /// The shard id stored in a UUID of this layout.
    pub fn shard_of(&self, u: &Uuid) -> u64 {
        if self.shard_bits == 0 {
            return 0;
        }
        let v = u.as_u128();
        let payload = (crate::bits::get(v, 52, 12) << 62) | crate::bits::get(v, 66, 62);
        (payload >> (74 - self.shard_bits)) as u64
    }

    /// A generator for one shard id, on the system clock and the CSPRNG.
    pub fn generator(&self, shard: u64) -> Result<ShardGenerator, FieldError> {
        FieldError::check_max("shard", shard as u128, mask(self.shard_bits))?;
        Ok(ShardGenerator {
            layout: *self,
            shard,
            last: None,
            rng: super::OsCsprng::new(),
        })
    }

    /// Probability of at least one collision over `duration_ms` when
    /// `generators` generators each make `ids_per_ms` UUIDs per millisecond
    /// and pick their shard ids at random (with distinct ids, as intended,
    /// the answer is 0 while `ids_per_ms` fits the counter).
    ///
    /// Model: two generators collide only on the same shard (probability
    /// 2^-S); their counters start at random points each millisecond, so
    /// about R²/2^C counter values coincide, each a collision with
    /// probability 2^-random. Expected collisions per millisecond
    /// E = N(N−1)/2 · 2^-S · R²/2^C · 2^-random, and P = 1 − e^(−E·duration).
    pub fn collision_probability(&self, generators: u64, ids_per_ms: u64, duration_ms: f64) -> f64 {
        let n = generators as f64;
        let r = ids_per_ms as f64;
        let overlap = (r * r / 2f64.powi(self.counter_bits as i32)).min(r);
        let per_ms = n * (n - 1.0) / 2.0
            * 2f64.powi(-(self.shard_bits as i32))
            * overlap
            * 2f64.powi(-(self.random_bits() as i32));
        -(-per_ms * duration_ms).exp_m1()
    }
}

/// Generator of a [`ShardLayout`] for one shard: the counter restarts at a
/// random value below half its range at each millisecond and counts up; when
/// it runs out the timestamp moves one millisecond ahead.
pub struct ShardGenerator {
    layout: ShardLayout,
    shard: u64,
    last: Option<(u64, u64)>,
    rng: super::OsCsprng,
}

impl ShardGenerator {
    /// The next UUIDv8 of this shard.
    pub fn generate(&mut self) -> Result<Uuid, GenError> {
        let l = self.layout;
        let now = SystemClock.now_unix_ns().map(|ns| ns / 1_000_000);
        let fresh = |rng: &mut super::OsCsprng| rng.next_u64() & (mask(l.counter_bits - 1) as u64);
        let (ms, counter) = match (now, self.last) {
            (None, None) => return Err(GenError::ClockUnavailable),
            (Some(now), Some((last, _))) if now > last => (now, fresh(&mut self.rng)),
            (_, Some((last, c))) if (c as u128) < mask(l.counter_bits) => (last, c + 1),
            (_, Some((last, _))) => (last + 1, fresh(&mut self.rng)),
            (Some(now), None) => (now, fresh(&mut self.rng)),
        };
        if ms > crate::v7::MAX_UNIX_MS {
            return Err(GenError::TimestampOutOfRange { unix_ms: ms as i64 });
        }
        self.last = Some((ms, counter));
        let random = ((self.rng.next_u64() as u128) << 64 | self.rng.next_u64() as u128)
            & mask(l.random_bits());
        let payload = ((self.shard as u128) << (74 - l.shard_bits))
            | ((counter as u128) << l.random_bits())
            | random;
        Ok(Uuid::from_u128(crate::bits::assemble(
            8,
            ms,
            (payload >> 62) as u16,
            (payload & mask(62)) as u64,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::OsCsprng;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn v6_is_monotonic_with_random_multicast_nodes() {
        let t = Rc::new(Cell::new(1_700_000_000_000_000_000u64));
        let clock = {
            let t = t.clone();
            move || Some(t.get())
        };
        let mut g = V6Generator::new(clock, OsCsprng::new());
        let ids: Vec<Uuid> = (0..1000).map(|_| g.generate().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let f: Vec<_> = ids
            .iter()
            .map(|u| crate::gregorian::v6_fields(u).unwrap())
            .collect();
        assert!(f.iter().all(|x| x.node & (1 << 40) != 0), "multicast bit");
        assert!(f
            .windows(2)
            .any(|w| w[0].node != w[1].node && w[0].clock_seq != w[1].clock_seq));
        assert_eq!(f[0].timestamp().unix_nanos, 1_700_000_000_000_000_000);
        t.set(t.get() - 1_000_000_000);
        assert!(
            g.generate().unwrap() > *ids.last().unwrap(),
            "a clock moved back keeps order"
        );
    }

    #[test]
    fn v8_draft_generators_count_from_zero_and_bump() {
        let clock = || Some(1_700_000_000_123_456_789u64);
        for layout in DraftLayout::ALL {
            let mut g = V8DraftGenerator::new(layout, clock, OsCsprng::new());
            let ids: Vec<Uuid> = (0..600).map(|_| g.generate().unwrap()).collect();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{layout:?}");
            let first = layout.decode(&ids[0]).unwrap();
            assert_eq!((first.seq, layout.decode(&ids[1]).unwrap().seq), (0, 1));
            assert_ne!(first.node, 0);
        }
        let mut g = V8DraftGenerator::new(DraftLayout::Ts48, clock, OsCsprng::new());
        assert_eq!(
            DraftLayout::Ts48
                .decode(&g.generate().unwrap())
                .unwrap()
                .timestamp,
            1_700_000_000_123
        );
    }

    #[test]
    fn shard_layout_stores_the_shard_and_estimates_collisions() {
        let l = ShardLayout::new(10, 14).unwrap();
        let mut g = l.generator(1023).unwrap();
        let ids: Vec<Uuid> = (0..20_000).map(|_| g.generate().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(ids
            .iter()
            .all(|u| l.shard_of(u) == 1023 && u.get_version_num() == 8));
        assert!(l.generator(1024).is_err());
        assert_eq!(ShardLayout::new(60, 15).unwrap_err().field, "counter_bits");
        assert_eq!(ShardLayout::new(10, 0).unwrap_err().field, "counter_bits");
        // More generators, more ids, fewer random bits: more collisions.
        let few = l.collision_probability(10, 10, 1e9);
        let many = l.collision_probability(10_000, 1000, 1e9);
        assert!(few < many && many <= 1.0, "{few} {many}");
        // A billion ids per millisecond on one shard space: 73 random bits
        // meet the birthday bound within the ~11.6 days of 1e9 ms.
        let crowded = ShardLayout::new(0, 1).unwrap();
        assert!(crowded.collision_probability(100_000, 10_000, 1e9) > 0.5);
        assert_eq!(
            l.collision_probability(1, 1000, 1e12),
            0.0,
            "one generator never collides with itself"
        );
    }
}

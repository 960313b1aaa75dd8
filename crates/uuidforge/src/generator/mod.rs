//! UUIDv7 generators (RFC 9562 §5.7, §6.2): an owned one for hot loops
//! ([`V7Generator`]), a process-wide lock-free one ([`v7`],
//! [`SharedGenerator`]), and the settings and profiles they share
//! ([`GeneratorConfig`]).
//!
//! Both follow the same rules: the counter sits right after the timestamp
//! (Method 1, or Method 2 increments), its guard bits are zero at each new
//! tick and the rest random; the random tail is fresh for every UUID; a
//! counter overflow bumps the timestamp, stalls or errors; a clock that goes
//! back is absorbed (the last timestamp is kept and the counter counts on);
//! and the next timestamp is always decided against the last *real* clock
//! reading, so a bumped timestamp is dropped as soon as the clock passes it.
//!
//! ```
//! let a = uuidforge::generator::v7();
//! let b = uuidforge::generator::v7();
//! assert!(a < b);
//! ```

mod aes_ctr;
#[cfg(feature = "checkpoint-file")]
mod checkpoint;
mod config;
mod engine;
mod keyed;
mod other;
mod shared;
pub mod source;

#[cfg(feature = "checkpoint-file")]
pub use checkpoint::{
    load as load_checkpoint, store as store_checkpoint, Checkpoint, CheckpointStart,
};
pub use config::{
    ClockMode, GeneratorConfig, Increment, Masking, OverflowPolicy, Randomness, RollbackPolicy,
    Spread, PROFILES,
};
pub use keyed::{v7_from, v7_from_key, v7_from_ordered, TimestampHider, HIDE_KEY_BYTES};
pub use other::{ShardGenerator, ShardLayout, V6Generator, V8DraftGenerator};
pub use shared::{global, global_profile, v7, GeneratorCell, SharedGenerator};
pub use source::{
    Buffered, ConfiguredClock, InsecureFastRng, OsCsprng, RandSource, SystemClock, TimeSource,
    TscClock,
};

use engine::{Advance, Layout, State};
use source::ConfiguredRng;
use uuid::Uuid;

/// Why a UUID could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenError {
    /// The configuration is invalid.
    Config(crate::FieldError),
    /// The counter overflowed under [`OverflowPolicy::Error`] (or a stall
    /// waited too long for a clock that did not move).
    CounterOverflow {
        /// The millisecond whose counter ran out.
        unix_ms: u64,
    },
    /// The clock went back under [`RollbackPolicy::Error`].
    ClockMovedBack {
        /// How far, in milliseconds.
        by_ms: u64,
    },
    /// The clock could not be read and there is no earlier timestamp to
    /// continue from.
    ClockUnavailable,
    /// A shift (or a bump at the end of time) left the 48-bit range.
    TimestampOutOfRange {
        /// The millisecond value that does not fit.
        unix_ms: i64,
    },
}

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenError::Config(e) => write!(f, "invalid generator setting: {e}"),
            GenError::CounterOverflow { unix_ms } => {
                write!(
                    f,
                    "counter overflow in millisecond {unix_ms} (overflow policy: error)"
                )
            }
            GenError::ClockMovedBack { by_ms } => {
                write!(
                    f,
                    "the clock moved back by {by_ms} ms (rollback policy: error)"
                )
            }
            GenError::ClockUnavailable => write!(f, "the clock could not be read"),
            GenError::TimestampOutOfRange { unix_ms } => write!(
                f,
                "timestamp {unix_ms} ms is outside 0..={} ms (check the shift)",
                crate::v7::MAX_UNIX_MS
            ),
        }
    }
}

impl std::error::Error for GenError {}

/// What a generator has been through (E4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Telemetry {
    /// Counter overflows (each one bumped, stalled or failed).
    pub overflows: u64,
    /// Clock readings earlier than the previous one.
    pub rollbacks: u64,
    /// Restarts from a clock that went back further than absorbed.
    pub resets: u64,
    /// Reseeds of the random source (periodic and after `fork()`).
    pub reseeds: u64,
    /// Clock readings that failed.
    pub clock_failures: u64,
    /// How far the timestamp last ran ahead of the clock, in milliseconds.
    pub ahead_ms: u64,
    /// The most it ever ran ahead, in milliseconds.
    pub max_ahead_ms: u64,
}

impl Telemetry {
    fn note_ahead(&mut self, ms: u64) {
        self.ahead_ms = ms;
        self.max_ahead_ms = self.max_ahead_ms.max(ms);
    }
}

/// Clock reads a stall may take before it gives up with
/// [`GenError::CounterOverflow`] (a clock that never moves would otherwise
/// hang the caller).
const MAX_STALL_READS: u64 = 1 << 28;

/// An owned, single-thread UUIDv7 generator, generic over its clock and its
/// random source (so tests inject both).
///
/// ```
/// use uuidforge::generator::{GeneratorConfig, V7Generator};
/// let mut g = V7Generator::new(GeneratorConfig::profile("default").unwrap()).unwrap();
/// let a = g.generate().unwrap();
/// let b = g.generate().unwrap();
/// assert!(a < b);
/// ```
pub struct V7Generator<T: TimeSource = ConfiguredClock, R: RandSource = Buffered<ConfiguredRng>> {
    layout: Layout,
    state: State,
    clock: T,
    rng: R,
    telemetry: Telemetry,
}

impl V7Generator {
    /// A generator with the configured clock and random source.
    pub fn new(config: GeneratorConfig) -> Result<Self, GenError> {
        let rng = Buffered::new(ConfiguredRng::new(config.randomness));
        let clock = ConfiguredClock::new(config.clock);
        V7Generator::with_sources(config, clock, rng)
    }
}

impl<T: TimeSource, R: RandSource> V7Generator<T, R> {
    /// A generator with the given clock and random source.
    pub fn with_sources(config: GeneratorConfig, clock: T, mut rng: R) -> Result<Self, GenError> {
        let layout = Layout::new(&config, &mut rng)?;
        Ok(V7Generator {
            layout,
            state: State::default(),
            clock,
            rng,
            telemetry: Telemetry::default(),
        })
    }

    /// Starts no lower than `unix_ms` (a checkpoint read at start-up, E5):
    /// the first UUIDs are larger than any made before a restart even if the
    /// clock went back meanwhile.
    pub fn resume_after(&mut self, unix_ms: u64) {
        let tick = (unix_ms.min(crate::v7::MAX_UNIX_MS) + 1) << self.layout.f;
        self.state.tick = self.state.tick.max(tick);
        self.state.head = self
            .layout
            .head(self.state.tick, self.state.counter, self.state.segment);
    }

    /// The next UUID, under the configured overflow and rollback policies.
    #[inline(always)]
    pub fn generate(&mut self) -> Result<Uuid, GenError> {
        self.advance()?;
        let random = self.layout.random_tail(&mut self.rng);
        Ok(self.current(random))
    }

    #[inline(always)]
    fn advance(&mut self) -> Result<(), GenError> {
        for _ in 0..MAX_STALL_READS {
            let real = match self.clock.now_unix_ns() {
                Some(ns) => Some(self.layout.tick_of(ns)?),
                None => None,
            };
            match self
                .state
                .advance(&self.layout, real, &mut self.rng, &mut self.telemetry)?
            {
                Advance::Ready => return Ok(()),
                Advance::Stall => std::hint::spin_loop(),
            }
        }
        Err(GenError::CounterOverflow {
            unix_ms: self.state.tick >> self.layout.f,
        })
    }

    #[inline]
    fn current(&self, random: u128) -> Uuid {
        self.layout.assemble(
            self.state.tick,
            self.state.counter,
            self.state.segment,
            random,
        )
    }

    /// Fills `out` with strictly increasing UUIDs, reading the clock once and
    /// drawing the random tails in bulk (B11). Within one tick, a Method 1
    /// counter runs in a tight loop that only adds the counter step.
    pub fn fill(&mut self, out: &mut [Uuid]) -> Result<(), GenError> {
        let mut real = match self.clock.now_unix_ns() {
            Some(ns) => Some(self.layout.tick_of(ns)?),
            None => None,
        };
        let mut done = 0;
        while done < out.len() {
            done += self.layout.fill_run(
                &mut self.state,
                real,
                &mut self.rng,
                &mut self.telemetry,
                &mut out[done..],
            )?;
            if done < out.len() {
                // A stall needs the clock to move: the per-UUID path reads
                // it until it does.
                out[done] = self.generate()?;
                done += 1;
                real = self.state.last_real;
            }
        }
        Ok(())
    }

    /// An endless iterator of UUIDs (each item a `Result`).
    pub fn iter(&mut self) -> impl Iterator<Item = Result<Uuid, GenError>> + '_ {
        std::iter::from_fn(move || Some(self.generate()))
    }

    /// A UUID for an explicit time (backfill: Unix milliseconds, a
    /// `SystemTime` or a chrono `DateTime`), with a fresh random counter
    /// and tail. It reads and changes no generator state (pitfall 3), so it
    /// neither affects nor is ordered with the generated sequence.
    ///
    /// ```
    /// use uuidforge::generator::{GeneratorConfig, V7Generator};
    /// let mut g = V7Generator::new(GeneratorConfig::default()).unwrap();
    /// let at = chrono::DateTime::parse_from_rfc3339("2024-05-01T12:00:00Z").unwrap();
    /// let id = g.generate_at(at).unwrap();
    /// assert_eq!(uuidforge::v7::unix_ms(&id), 1_714_564_800_000);
    /// ```
    pub fn generate_at(&mut self, at: impl crate::timestamp::IntoUnixMs) -> Result<Uuid, GenError> {
        let unix_ms = at.into_unix_ms().map_err(GenError::Config)?;
        crate::v7::from_unix_ms(unix_ms, 0, 0).map_err(GenError::Config)?;
        let tick = unix_ms << self.layout.f;
        let counter = self.layout.init_counter(&mut self.rng);
        let segment = self.layout.init_segment(&mut self.rng);
        let random = self.layout.random_tail(&mut self.rng);
        Ok(self.layout.assemble(tick, counter, segment, random))
    }

    /// Counters so far (E4); `ahead_ms` is how far the last timestamp ran
    /// ahead of the clock.
    pub fn telemetry(&self) -> Telemetry {
        Telemetry {
            reseeds: self.rng.reseeds(),
            ..self.telemetry
        }
    }

    /// The last timestamp used, in Unix milliseconds (for checkpoints).
    pub fn last_unix_ms(&self) -> u64 {
        self.state.tick >> self.layout.f
    }
}

#[cfg(test)]
mod tests;

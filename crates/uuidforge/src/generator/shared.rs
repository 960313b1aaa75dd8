//! The process-wide generator: lock-free, strictly increasing across threads
//! in the order values are handed out (B14, E1).
//!
//! The timestamp and counter are packed into one 128-bit word,
//! `tick << counter_bits | counter`, which itself increases with every UUID;
//! each UUID is one compare-and-swap of that word (`cmpxchg16b` on x86_64).
//! The random tail is drawn after the swap, outside the critical section,
//! from a per-thread CSPRNG that reseeds after `fork()`.

use super::engine::{Advance, Layout, State};
use super::source::{ConfiguredRng, RandSource, SystemClock, TimeSource};
use super::{GenError, GeneratorConfig, Randomness, Telemetry, MAX_STALL_READS};
use portable_atomic::AtomicU128;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use uuid::Uuid;

thread_local! {
    static CSPRNG: RefCell<ConfiguredRng> = RefCell::new(ConfiguredRng::new(Randomness::Csprng));
    static FAST_RNG: RefCell<ConfiguredRng> = RefCell::new(ConfiguredRng::new(Randomness::InsecureFast));
}

/// A generator shared by threads (see the module documentation).
pub struct SharedGenerator {
    layout: Layout,
    randomness: Randomness,
    /// `tick << c | counter`; zero before the first UUID.
    word: AtomicU128,
    /// Last real clock reading in ticks, for rollback detection (0: none
    /// yet).
    last_real: AtomicU64,
    /// Telemetry from the retry loops (rare events only, so a mutex costs
    /// nothing on the fast path).
    telemetry: Mutex<Telemetry>,
}

fn with_rng<T>(randomness: Randomness, f: impl FnOnce(&mut ConfiguredRng) -> T) -> T {
    match randomness {
        Randomness::Csprng => CSPRNG.with(|r| f(&mut r.borrow_mut())),
        Randomness::InsecureFast => FAST_RNG.with(|r| f(&mut r.borrow_mut())),
    }
}

impl SharedGenerator {
    /// A shared generator with the given settings.
    pub fn new(config: GeneratorConfig) -> Result<SharedGenerator, GenError> {
        let layout = with_rng(config.randomness, |rng| Layout::new(&config, rng))?;
        Ok(SharedGenerator {
            layout,
            randomness: config.randomness,
            word: AtomicU128::new(0),
            last_real: AtomicU64::new(0),
            telemetry: Mutex::new(Telemetry::default()),
        })
    }

    fn unpack(&self, word: u128) -> State {
        let c = self.layout.c;
        State {
            tick: (word >> c) as u64,
            counter: word & crate::bits::mask(c),
            segment: 0,
            head: 0,
            // Zero means no reading published yet; a non-zero word still
            // means "started": never restart its counter.
            last_real: match self.last_real.load(Ordering::Relaxed) {
                0 if word == 0 => None,
                t => Some(t),
            },
        }
    }

    fn pack(&self, s: &State) -> u128 {
        ((s.tick as u128) << self.layout.c) | s.counter
    }

    /// The next UUID: strictly greater than every UUID this generator handed
    /// out before it, in any thread.
    pub fn generate(&self) -> Result<Uuid, GenError> {
        let mut clock = SystemClock;
        with_rng(self.randomness, |rng| {
            let mut local = Telemetry::default();
            let mut reads = 0u64;
            // The clock is read once per attempt that sees the clock matter:
            // a failed swap retries with the same reading (still valid, the
            // state only moved forward), so contended retries stay short.
            let mut real = match clock.now_unix_ns() {
                Some(ns) => Some(self.layout.tick_of(ns)?),
                None => None,
            };
            let mut old = self.word.load(Ordering::Acquire);
            let state = loop {
                reads += 1;
                let mut state = self.unpack(old);
                match state.advance(&self.layout, real, rng, &mut local)? {
                    Advance::Stall if reads < MAX_STALL_READS => {
                        real = match clock.now_unix_ns() {
                            Some(ns) => Some(self.layout.tick_of(ns)?),
                            None => None,
                        };
                        old = self.word.load(Ordering::Acquire);
                        continue;
                    }
                    Advance::Stall => {
                        return Err(GenError::CounterOverflow {
                            unix_ms: state.tick >> self.layout.f,
                        })
                    }
                    Advance::Ready => {}
                }
                match self.word.compare_exchange_weak(
                    old,
                    self.pack(&state),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => {
                        // Skip the write when it would not change anything, so
                        // threads do not contend on this line too.
                        if let Some(r) =
                            real.filter(|&r| self.last_real.load(Ordering::Relaxed) < r)
                        {
                            self.last_real.fetch_max(r, Ordering::Relaxed);
                        }
                        break state;
                    }
                    Err(current) => old = current,
                }
            };
            if local != Telemetry::default() {
                self.record(local);
            }
            // The segment is per thread, drawn when the thread sees a new
            // tick: it cannot break order, the counter already decides it.
            let segment = if self.layout.s == 0 {
                0
            } else {
                self.layout.init_segment(rng)
            };
            let random = self.layout.random_tail(rng);
            Ok(self
                .layout
                .assemble(state.tick, state.counter, segment, random))
        })
    }

    #[cold]
    fn record(&self, t: Telemetry) {
        let mut all = self.telemetry.lock().unwrap_or_else(|e| e.into_inner());
        all.overflows += t.overflows;
        all.rollbacks += t.rollbacks;
        all.resets += t.resets;
        all.clock_failures += t.clock_failures;
        all.ahead_ms = t.ahead_ms;
        all.max_ahead_ms = all.max_ahead_ms.max(t.max_ahead_ms);
    }

    /// Counters so far (E4); `reseeds` is this thread's random source's.
    pub fn telemetry(&self) -> Telemetry {
        let mut t = *self.telemetry.lock().unwrap_or_else(|e| e.into_inner());
        t.reseeds = with_rng(self.randomness, |rng| rng.reseeds());
        let now = SystemClock
            .now_unix_ns()
            .and_then(|ns| self.layout.tick_of(ns).ok());
        if let Some(now) = now {
            let tick = (self.word.load(Ordering::Relaxed) >> self.layout.c) as u64;
            t.ahead_ms = tick.saturating_sub(now) >> self.layout.f;
        }
        t
    }
}

/// The process-wide generator with the `default` profile.
pub fn global() -> &'static SharedGenerator {
    static GLOBAL: OnceLock<SharedGenerator> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        SharedGenerator::new(GeneratorConfig::default()).expect("the default profile is valid")
    })
}

/// A UUIDv7 from the process-wide generator (`default` profile): strictly
/// increasing across all threads in hand-out order.
///
/// It cannot fail in practice: the default policies bump on overflow and
/// keep counting when the clock goes back. Only a system clock set before
/// 1970 at the very first call, or beyond year 10889, leaves no valid
/// timestamp; then the value is built from the last timestamp (or zero),
/// still in order.
pub fn v7() -> Uuid {
    match global().generate() {
        Ok(u) => u,
        Err(_) => fallback(global()),
    }
}

#[cold]
fn fallback(g: &SharedGenerator) -> Uuid {
    // Count on from the last state without a clock.
    with_rng(g.randomness, |rng| loop {
        let old = g.word.load(Ordering::Acquire);
        let mut state = g.unpack(old);
        state.last_real = Some(state.tick);
        let mut t = Telemetry::default();
        if state.advance(&g.layout, None, rng, &mut t).is_err() {
            return crate::v7::from_fields_masked(
                crate::v7::MAX_UNIX_MS,
                0xfff,
                crate::v7::MAX_RAND_B,
            );
        }
        if g.word
            .compare_exchange_weak(old, g.pack(&state), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            let random = g.layout.random_tail(rng);
            return g.layout.assemble(state.tick, state.counter, 0, random);
        }
    })
}

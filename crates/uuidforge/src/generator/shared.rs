//! The process-wide generator: lock-free, strictly increasing across threads
//! in the order values are handed out (B14, E1) — and across processes when
//! its state lives in shared memory (E2).
//!
//! The state is a [`GeneratorCell`]: the payload of the last UUID handed out,
//! in one 128-bit word. Each UUID is one compare-and-swap of that word
//! (`cmpxchg16b` on x86_64) from the last value to the new one. Because the
//! cell holds the whole last value, not a layout's own counter, a generator
//! of any profile continues correctly after a value of any other profile:
//! it reads its timestamp and counter out of the last value's leading bits,
//! and a larger prefix makes a larger UUID.

use super::engine::{payload_of_uuid, uuid_of_payload, Advance, Layout, State};
use super::source::{ConfiguredRng, RandSource, SystemClock, TimeSource, TscClock};
use super::{ClockMode, GenError, GeneratorConfig, Randomness, Telemetry, MAX_STALL_READS};
use crate::bits::mask;
use portable_atomic::AtomicU128;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use uuid::Uuid;

/// What each thread keeps for the shared generators: its random sources
/// and its counter-assisted clock ([`ClockMode::Tsc`], which reads the
/// system clock about once a millisecond; the cell orders values across
/// threads whatever each thread's clock reads). One thread-local, so a
/// value costs one lookup (in a shared library each is a call).
struct Local {
    csprng: ConfiguredRng,
    fast: Option<ConfiguredRng>,
    tsc: TscClock,
}

thread_local! {
    static LOCAL: RefCell<Local> = RefCell::new(Local {
        csprng: ConfiguredRng::new(Randomness::Csprng),
        fast: None,
        tsc: TscClock::new(),
    });
}

/// How many values [`SharedGenerator::fill_in`] takes with one swap.
const FILL_CHUNK: usize = 256;

/// Clock readings are kept in 2^-12 ms units whatever the layout's fraction
/// (at most 12 bits), so layouts with different fractions share a cell.
const REAL_UNIT_BITS: u32 = 12;

/// The state of a [`SharedGenerator`]: the last UUID handed out and the last
/// clock reading.
///
/// It holds no pointers and all-zero bytes are its initial state, so it may
/// be placed in memory shared by processes — a database server's shared
/// memory, for one — and then every process that generates through it with
/// [`SharedGenerator::generate_in`] gets values strictly greater than every
/// value handed out before, in any process (E2). That needs a lock-free
/// 16-byte compare-and-swap: check [`GeneratorCell::is_lock_free`] first.
///
/// ```text
/// offset 0   last: u128          payload of the last UUID (122 bits; 0 = none yet)
/// offset 16  real: u64           last clock reading, 2^-12 ms units (0 = none yet)
/// offset 24  overflows: u64      rare events of every generator using the cell (E4)
/// offset 32  rollbacks: u64
/// offset 40  resets: u64
/// offset 48  clock_failures: u64
/// offset 56  max_ahead_ms: u64
/// ```
///
/// ```
/// use uuidforge::generator::{GeneratorCell, GeneratorConfig, SharedGenerator};
/// let cell = GeneratorCell::new();
/// let default = SharedGenerator::new(GeneratorConfig::profile("default").unwrap()).unwrap();
/// let pg18 = SharedGenerator::new(GeneratorConfig::profile("pg18").unwrap()).unwrap();
/// let a = default.generate_in(&cell).unwrap();
/// let b = pg18.generate_in(&cell).unwrap(); // another layout, same cell
/// assert!(a < b);
/// assert_eq!(cell.last(), Some(b));
/// ```
#[repr(C)]
#[derive(Debug, Default)]
pub struct GeneratorCell {
    last: AtomicU128,
    real: AtomicU64,
    overflows: AtomicU64,
    rollbacks: AtomicU64,
    resets: AtomicU64,
    clock_failures: AtomicU64,
    max_ahead_ms: AtomicU64,
}

impl GeneratorCell {
    /// A cell before its first UUID.
    pub const fn new() -> GeneratorCell {
        GeneratorCell {
            last: AtomicU128::new(0),
            real: AtomicU64::new(0),
            overflows: AtomicU64::new(0),
            rollbacks: AtomicU64::new(0),
            resets: AtomicU64::new(0),
            clock_failures: AtomicU64::new(0),
            max_ahead_ms: AtomicU64::new(0),
        }
    }

    /// Makes every later value larger than any UUIDv7 of Unix millisecond
    /// `unix_ms` (a checkpoint read at start-up, E5): the cell's last value
    /// becomes the smallest payload of the next millisecond unless it is
    /// already beyond. Safe to call while others generate.
    ///
    /// ```
    /// use uuidforge::generator::{GeneratorCell, GeneratorConfig, SharedGenerator};
    /// let cell = GeneratorCell::new();
    /// let far = 4_000_000_000_000; // 2096: ahead of this machine's clock
    /// cell.resume_after(far);
    /// let g = SharedGenerator::new(GeneratorConfig::default()).unwrap();
    /// let u = g.generate_in(&cell).unwrap();
    /// assert!(uuidforge::v7::unix_ms(&u) > far);
    /// ```
    pub fn resume_after(&self, unix_ms: u64) {
        let floor = ((unix_ms.min(crate::v7::MAX_UNIX_MS - 1) + 1) as u128) << 74;
        let mut old = self.last.load(Ordering::Acquire);
        while old < floor {
            match self
                .last
                .compare_exchange_weak(old, floor, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(current) => old = current,
            }
        }
    }

    /// What every generator using this cell has been through (E4): the
    /// rare-event counts, how far the last value runs ahead of the clock
    /// now, and the reseeds of this process's CSPRNG sources.
    pub fn telemetry(&self) -> Telemetry {
        let last_ms = self.last().map_or(0, |u| crate::v7::unix_ms(&u));
        let now_ms = SystemClock.now_unix_ns().map_or(0, |ns| ns / 1_000_000);
        Telemetry {
            overflows: self.overflows.load(Ordering::Relaxed),
            rollbacks: self.rollbacks.load(Ordering::Relaxed),
            resets: self.resets.load(Ordering::Relaxed),
            reseeds: super::source::process_reseeds(),
            clock_failures: self.clock_failures.load(Ordering::Relaxed),
            ahead_ms: last_ms.saturating_sub(now_ms),
            max_ahead_ms: self.max_ahead_ms.load(Ordering::Relaxed),
        }
    }

    #[cold]
    fn record(&self, t: &Telemetry) {
        self.overflows.fetch_add(t.overflows, Ordering::Relaxed);
        self.rollbacks.fetch_add(t.rollbacks, Ordering::Relaxed);
        self.resets.fetch_add(t.resets, Ordering::Relaxed);
        self.clock_failures
            .fetch_add(t.clock_failures, Ordering::Relaxed);
        self.max_ahead_ms
            .fetch_max(t.max_ahead_ms, Ordering::Relaxed);
    }

    /// Whether the 16-byte compare-and-swap is a CPU instruction here. When
    /// it is not, the atomic falls back to a lock inside this process, which
    /// does not order other processes: do not share a cell between processes
    /// then.
    pub fn is_lock_free() -> bool {
        AtomicU128::is_lock_free()
    }

    /// The last UUID handed out through this cell, if any.
    pub fn last(&self) -> Option<Uuid> {
        match self.last.load(Ordering::Acquire) {
            0 => None,
            p => Some(uuid_of_payload(p)),
        }
    }
}

/// A generator shared by threads (see the module documentation).
pub struct SharedGenerator {
    layout: Layout,
    /// Whether `layout` is [`Layout::DEFAULT`] (the default profile's).
    default_layout: bool,
    randomness: Randomness,
    clock: ClockMode,
    cell: CellSlot,
    /// Telemetry from the retry loops (rare events only, so a mutex costs
    /// nothing on the fast path).
    telemetry: Mutex<Telemetry>,
}

/// A generator's own cell, or the process-wide one that the built-in
/// profiles of [`global_profile`] share.
enum CellSlot {
    Own(GeneratorCell),
    Process(&'static GeneratorCell),
}

/// The cell of every process-wide generator: [`v7`] and all of
/// [`global_profile`]'s generators hand out values in one strict order.
static PROCESS_CELL: GeneratorCell = GeneratorCell::new();

/// Runs `f` with this thread's random source of `randomness` and its
/// counter-assisted clock.
#[inline(always)]
fn with_local<T>(
    randomness: Randomness,
    f: impl FnOnce(&mut ConfiguredRng, &mut TscClock) -> T,
) -> T {
    LOCAL.with(|l| {
        let Local { csprng, fast, tsc } = &mut *l.borrow_mut();
        let rng = match randomness {
            Randomness::Csprng => csprng,
            Randomness::InsecureFast => {
                fast.get_or_insert_with(|| ConfiguredRng::new(Randomness::InsecureFast))
            }
        };
        f(rng, tsc)
    })
}

fn with_rng<T>(randomness: Randomness, f: impl FnOnce(&mut ConfiguredRng) -> T) -> T {
    with_local(randomness, |rng, _| f(rng))
}

impl SharedGenerator {
    /// A shared generator with the given settings.
    pub fn new(config: GeneratorConfig) -> Result<SharedGenerator, GenError> {
        SharedGenerator::with_cell(config, CellSlot::Own(GeneratorCell::new()))
    }

    fn with_cell(config: GeneratorConfig, cell: CellSlot) -> Result<SharedGenerator, GenError> {
        let layout = with_rng(config.randomness, |rng| Layout::new(&config, rng))?;
        Ok(SharedGenerator {
            default_layout: layout == Layout::DEFAULT,
            layout,
            randomness: config.randomness,
            clock: config.clock,
            cell,
            telemetry: Mutex::new(Telemetry::default()),
        })
    }

    fn cell(&self) -> &GeneratorCell {
        match &self.cell {
            CellSlot::Own(c) => c,
            CellSlot::Process(c) => c,
        }
    }

    #[inline(always)]
    fn unpack(layout: &Layout, last: u128, real: u64) -> State {
        let (tick, counter) = layout.read_payload(last);
        State {
            tick,
            counter,
            // A single value draws its own segment and makes its head
            // (generate_with); a batch reads them (unpack_for_batch).
            segment: 0,
            head: 0,
            // Zero means no reading published yet; a non-zero value still
            // means "started": never restart its counter.
            last_real: match real {
                0 if last == 0 => None,
                t => Some(t >> (REAL_UNIT_BITS - layout.f)),
            },
        }
    }

    /// [`SharedGenerator::unpack`] with the segment the last value carries
    /// and the head, which a batch counts on from.
    fn unpack_for_batch(&self, last: u128, real: u64) -> State {
        let mut state = Self::unpack(&self.layout, last, real);
        state.segment = ((last >> self.layout.r) & mask(self.layout.s)) as u64;
        state.head = self.layout.head(state.tick, state.counter, state.segment);
        state
    }

    #[inline(always)]
    fn read_clock(layout: &Layout, clock: &mut impl TimeSource) -> Result<Option<u64>, GenError> {
        match clock.now_unix_ns() {
            Some(ns) => Ok(Some(layout.tick_of(ns)?)),
            None => Ok(None),
        }
    }

    /// The next UUID: strictly greater than every UUID this generator handed
    /// out before it, in any thread.
    pub fn generate(&self) -> Result<Uuid, GenError> {
        self.generate_in(self.cell())
    }

    /// The next UUID, or when the clock gives no valid timestamp, one built
    /// from the last value (see [`v7`]): it cannot fail.
    pub fn generate_or_continue(&self) -> Uuid {
        match self.generate() {
            Ok(u) => u,
            Err(_) => self.generate_without_clock_in(self.cell()),
        }
    }

    /// The next UUID through an outside cell (for example one in shared
    /// memory): strictly greater than every UUID handed out through `cell`
    /// before it, by any generator, thread or process.
    pub fn generate_in(&self, cell: &GeneratorCell) -> Result<Uuid, GenError> {
        with_local(self.randomness, |rng, tsc| match self.clock {
            // The process-wide generator's layout as a constant: its
            // shifts and masks compile to immediates (measured: `v7()` 65 -> 34 ns).
            ClockMode::Tsc if self.default_layout => {
                self.generate_with(&Layout::DEFAULT, cell, tsc, rng)
            }
            ClockMode::Tsc => self.generate_with(&self.layout, cell, tsc, rng),
            _ => self.generate_with(&self.layout, cell, &mut SystemClock, rng),
        })
    }

    #[inline(always)]
    fn generate_with(
        &self,
        layout: &Layout,
        cell: &GeneratorCell,
        clock: &mut impl TimeSource,
        rng: &mut ConfiguredRng,
    ) -> Result<Uuid, GenError> {
        {
            let mut local = Telemetry::default();
            let mut reads = 0u64;
            // Drawn before the swap: the cell stores whole values. A failed
            // swap keeps them (still unused) and, with the same clock
            // reading (still valid, the state only moved forward), retries.
            let segment = layout.init_segment(rng);
            let random = layout.random_tail(rng);
            let mut real = Self::read_clock(layout, clock)?;
            let mut old = cell.last.load(Ordering::Acquire);
            let payload = loop {
                reads += 1;
                let mut state = Self::unpack(layout, old, cell.real.load(Ordering::Relaxed));
                let advanced = state.advance(layout, real, rng, &mut local);
                let advanced = match advanced {
                    Ok(a) => a,
                    Err(e) => {
                        // An error under the Error policies is an event too
                        // (E4): counted before it is returned.
                        self.record(local);
                        cell.record(&local);
                        return Err(e);
                    }
                };
                match advanced {
                    Advance::Stall if reads < MAX_STALL_READS => {
                        real = Self::read_clock(layout, clock)?;
                        old = cell.last.load(Ordering::Acquire);
                        continue;
                    }
                    Advance::Stall => {
                        return Err(GenError::CounterOverflow {
                            unix_ms: state.tick >> layout.f,
                        })
                    }
                    Advance::Ready => {}
                }
                let new = self
                    .layout
                    .payload(layout.head(state.tick, state.counter, segment), random);
                match cell
                    .last
                    .compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => {
                        Self::publish_real(layout, cell, real);
                        break new;
                    }
                    Err(current) => old = current,
                }
            };
            if local != Telemetry::default() {
                self.record(local);
                cell.record(&local);
            }
            Ok(uuid_of_payload(payload))
        }
    }

    /// Publishes the clock reading a value was made with.
    #[inline(always)]
    fn publish_real(layout: &Layout, cell: &GeneratorCell, real: Option<u64>) {
        if let Some(r) = real {
            let r = r << (REAL_UNIT_BITS - layout.f);
            // Skip the write when it would not change anything, so threads
            // do not contend on it too.
            if cell.real.load(Ordering::Relaxed) < r {
                cell.real.fetch_max(r, Ordering::Relaxed);
            }
        }
    }

    /// Fills `out` with the next values through `cell`, strictly increasing
    /// and each greater than every value handed out through `cell` before:
    /// up to 256 at a time are made from one clock reading and taken with
    /// one compare-and-swap, so no other thread's or process's value falls
    /// between them, and a batch costs about what an owned generator's
    /// [`super::V7Generator::fill`] does rather than a swap per value.
    ///
    /// ```
    /// use uuidforge::generator::{GeneratorCell, GeneratorConfig, SharedGenerator};
    /// let cell = GeneratorCell::new();
    /// let g = SharedGenerator::new(GeneratorConfig::default()).unwrap();
    /// let first = g.generate_in(&cell).unwrap();
    /// let mut batch = vec![uuid::Uuid::nil(); 1000];
    /// g.fill_in(&cell, &mut batch).unwrap();
    /// assert!(first < batch[0] && batch.windows(2).all(|w| w[0] < w[1]));
    /// assert!(batch[999] < g.generate_in(&cell).unwrap());
    /// ```
    pub fn fill_in(&self, cell: &GeneratorCell, out: &mut [Uuid]) -> Result<(), GenError> {
        let mut done = 0;
        while done < out.len() {
            let end = (done + FILL_CHUNK).min(out.len());
            done += self.fill_chunk(cell, &mut out[done..end])?;
        }
        Ok(())
    }

    /// [`SharedGenerator::fill_in`] through this generator's own cell (or
    /// the process-wide one).
    pub fn fill(&self, out: &mut [Uuid]) -> Result<(), GenError> {
        self.fill_in(self.cell(), out)
    }

    /// [`SharedGenerator::fill_in`] through this generator's own cell (or
    /// the process-wide one), continuing without the clock where it gives
    /// no valid timestamp (as [`SharedGenerator::generate_or_continue`]).
    pub fn fill_or_continue(&self, out: &mut [Uuid]) {
        let cell = self.cell();
        let mut done = 0;
        while done < out.len() {
            let end = (done + FILL_CHUNK).min(out.len());
            match self.fill_chunk(cell, &mut out[done..end]) {
                Ok(n) => done += n,
                Err(_) => {
                    out[done] = self.generate_without_clock_in(cell);
                    done += 1;
                }
            }
        }
    }

    /// Fills a prefix of `chunk` (at least one value) with values taken
    /// together; how many.
    fn fill_chunk(&self, cell: &GeneratorCell, chunk: &mut [Uuid]) -> Result<usize, GenError> {
        with_local(self.randomness, |rng, tsc| match self.clock {
            ClockMode::Tsc => self.fill_chunk_with(cell, tsc, rng, chunk),
            _ => self.fill_chunk_with(cell, &mut SystemClock, rng, chunk),
        })
    }

    fn fill_chunk_with(
        &self,
        cell: &GeneratorCell,
        clock: &mut impl TimeSource,
        rng: &mut ConfiguredRng,
        chunk: &mut [Uuid],
    ) -> Result<usize, GenError> {
        {
            let mut reads = 0u64;
            let mut real = Self::read_clock(&self.layout, clock)?;
            loop {
                let old = cell.last.load(Ordering::Acquire);
                let mut state = self.unpack_for_batch(old, cell.real.load(Ordering::Relaxed));
                let mut local = Telemetry::default();
                let made = match self
                    .layout
                    .fill_run(&mut state, real, rng, &mut local, chunk)
                {
                    Ok(made) => made,
                    Err(e) => {
                        // Nothing of this chunk was handed out; the error
                        // is an event too (E4).
                        self.record(local);
                        cell.record(&local);
                        return Err(e);
                    }
                };
                if made == 0 {
                    // A stall with nothing made: the clock must move.
                    reads += 1;
                    if reads >= MAX_STALL_READS {
                        return Err(GenError::CounterOverflow {
                            unix_ms: state.tick >> self.layout.f,
                        });
                    }
                    real = Self::read_clock(&self.layout, clock)?;
                    continue;
                }
                let last = chunk[made - 1].as_u128();
                let last = payload_of_uuid(last);
                if cell
                    .last
                    .compare_exchange(old, last, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    Self::publish_real(&self.layout, cell, real);
                    if local != Telemetry::default() {
                        self.record(local);
                        cell.record(&local);
                    }
                    return Ok(made);
                }
                // Another thread or process took values meanwhile: make the
                // chunk again above them.
            }
        }
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

    /// The figures of the cell this generator hands out through (E4): for
    /// the process-wide generators, every profile's events together.
    pub fn cell_telemetry(&self) -> Telemetry {
        self.cell().telemetry()
    }

    /// Counters so far (E4); `reseeds` is this thread's random source's.
    pub fn telemetry(&self) -> Telemetry {
        let mut t = *self.telemetry.lock().unwrap_or_else(|e| e.into_inner());
        t.reseeds = with_rng(self.randomness, |rng| rng.reseeds());
        let now = SystemClock
            .now_unix_ns()
            .and_then(|ns| self.layout.tick_of(ns).ok());
        if let Some(now) = now {
            let (tick, _) = self
                .layout
                .read_payload(self.cell().last.load(Ordering::Relaxed));
            t.ahead_ms = tick.saturating_sub(now) >> self.layout.f;
        }
        t
    }

    /// A UUID from the last value in `cell` onward without reading the
    /// clock: for when the clock gives no valid timestamp. Still strictly
    /// increasing; at the very end of the timestamp range it returns the
    /// largest v7 value.
    #[cold]
    pub fn generate_without_clock_in(&self, cell: &GeneratorCell) -> Uuid {
        with_rng(self.randomness, |rng| loop {
            let old = cell.last.load(Ordering::Acquire);
            let mut state = Self::unpack(&self.layout, old, 0);
            state.last_real = Some(state.tick);
            let mut t = Telemetry::default();
            if state.advance(&self.layout, None, rng, &mut t).is_err() {
                return crate::v7::from_fields_masked(
                    crate::v7::MAX_UNIX_MS,
                    0xfff,
                    crate::v7::MAX_RAND_B,
                );
            }
            let random = self.layout.random_tail(rng);
            let new = self
                .layout
                .payload(self.layout.head(state.tick, state.counter, 0), random);
            if cell
                .last
                .compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return uuid_of_payload(new);
            }
        })
    }
}

/// The process-wide generator with the `default` profile.
#[inline]
pub fn global() -> &'static SharedGenerator {
    // `default` is the first profile: no name lookup on every value.
    &process_generators()[0]
}

/// The process-wide generators, one per built-in profile, in
/// [`super::PROFILES`] order.
fn process_generators() -> &'static [SharedGenerator] {
    static GENERATORS: OnceLock<Vec<SharedGenerator>> = OnceLock::new();
    GENERATORS.get_or_init(|| {
        super::PROFILES
            .iter()
            .map(|p| {
                let config = GeneratorConfig::profile(p).expect("a built-in profile");
                SharedGenerator::with_cell(config, CellSlot::Process(&PROCESS_CELL))
                    .expect("built-in profiles are valid")
            })
            .collect()
    })
}

/// The process-wide generator of a built-in profile ([`super::PROFILES`]),
/// or `None` for another name. All of them and [`v7`] share one cell, so
/// values of every profile interleave in one strictly increasing order
/// (E1): a server answering requests for several profiles at once still
/// hands out increasing values.
///
/// ```
/// use uuidforge::generator::global_profile;
/// let a = global_profile("pg18").unwrap().generate_or_continue();
/// let b = uuidforge::v7();
/// let c = global_profile("counter42").unwrap().generate_or_continue();
/// assert!(a < b && b < c);
/// assert!(global_profile("nope").is_none());
/// ```
pub fn global_profile(name: &str) -> Option<&'static SharedGenerator> {
    let index = super::PROFILES.iter().position(|p| *p == name)?;
    Some(&process_generators()[index])
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
    global().generate_or_continue()
}

//! Clocks and random sources, as traits so tests inject their own.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng, TryRngCore};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// A clock. `None` means the clock could not be read (B7): the generator
/// then continues from its last timestamp.
pub trait TimeSource {
    /// Nanoseconds since the Unix epoch, leap seconds excluded.
    fn now_unix_ns(&mut self) -> Option<u64>;
}

/// The system clock (`CLOCK_REALTIME`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl TimeSource for SystemClock {
    #[inline]
    fn now_unix_ns(&mut self) -> Option<u64> {
        #[cfg(unix)]
        {
            // clock_gettime directly: the same vDSO call as SystemTime::now,
            // without its Duration arithmetic on the hot path.
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid timespec to write to.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
            if rc != 0 || ts.tv_sec < 0 {
                return None;
            }
            Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
        }
        #[cfg(not(unix))]
        {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_nanos() as u64)
        }
    }
}

/// The system clock read at most about once per millisecond
/// ([`super::ClockMode::Tsc`]): after a real reading it computes, from the
/// time-stamp counter's measured rate, the counter value at which the
/// current millisecond ends (1% early, to absorb rate error), and until then
/// answers from the counter alone.
#[derive(Debug, Default)]
pub struct TscClock {
    system: SystemClock,
    /// (tsc, ns) of the first reading, the base of the rate measurement.
    first: Option<(u64, u64)>,
    base_tsc: u64,
    base_ns: u64,
    /// Nanoseconds per counter tick, Q32 fixed point; 0 until measured.
    ns_per_tick_q32: u64,
    deadline_tsc: u64,
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc() -> Option<u64> {
    // SAFETY: RDTSC exists on every x86_64 CPU.
    Some(unsafe { core::arch::x86_64::_rdtsc() })
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn tsc() -> Option<u64> {
    None
}

/// Whether the CPU declares an invariant TSC (CPUID 0x8000_0007, EDX bit 8:
/// constant rate, counting through sleep states), asked once.
fn invariant_tsc() -> bool {
    static INVARIANT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INVARIANT.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::__cpuid;
            // CPUID is available on every x86_64 CPU.
            let max_extended = __cpuid(0x8000_0000).eax;
            max_extended >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    })
}

impl TscClock {
    /// A new clock (reads the system clock until the counter's rate is
    /// measured, about a millisecond).
    pub fn new() -> TscClock {
        TscClock::default()
    }

    #[cold]
    fn sync(&mut self) -> Option<u64> {
        let ns = self.system.now_unix_ns()?;
        let Some(t) = tsc().filter(|_| invariant_tsc()) else {
            self.deadline_tsc = 0;
            return Some(ns);
        };
        match self.first {
            None => self.first = Some((t, ns)),
            Some((t0, n0)) if t > t0 + (1 << 20) && ns > n0 => {
                self.ns_per_tick_q32 =
                    (((ns - n0) as u128) << 32).div_euclid((t - t0) as u128) as u64;
            }
            Some(_) => {}
        }
        self.base_tsc = t;
        self.base_ns = ns;
        self.deadline_tsc = if self.ns_per_tick_q32 == 0 {
            t
        } else {
            let left_ns = 1_000_000 - ns % 1_000_000;
            let ticks = ((left_ns as u128) << 32) / self.ns_per_tick_q32 as u128;
            t + (ticks * 99 / 100) as u64
        };
        Some(ns)
    }
}

impl TimeSource for TscClock {
    #[inline]
    fn now_unix_ns(&mut self) -> Option<u64> {
        if let Some(t) = tsc() {
            if t >= self.base_tsc && t < self.deadline_tsc {
                let dt = ((t - self.base_tsc) as u128 * self.ns_per_tick_q32 as u128) >> 32;
                return Some(self.base_ns + dt as u64);
            }
        }
        self.sync()
    }
}

/// Either clock, chosen by [`super::ClockMode`].
#[derive(Debug)]
pub enum ConfiguredClock {
    /// `clock_gettime` on every reading.
    System(SystemClock),
    /// The counter-assisted clock.
    Tsc(TscClock),
}

impl ConfiguredClock {
    /// The clock a mode asks for.
    pub fn new(mode: super::ClockMode) -> ConfiguredClock {
        match mode {
            super::ClockMode::Tsc => ConfiguredClock::Tsc(TscClock::new()),
            _ => ConfiguredClock::System(SystemClock),
        }
    }
}

impl TimeSource for ConfiguredClock {
    #[inline]
    fn now_unix_ns(&mut self) -> Option<u64> {
        match self {
            ConfiguredClock::System(c) => c.now_unix_ns(),
            ConfiguredClock::Tsc(c) => c.now_unix_ns(),
        }
    }
}

impl<F: FnMut() -> Option<u64>> TimeSource for F {
    fn now_unix_ns(&mut self) -> Option<u64> {
        self()
    }
}

/// A source of random bits.
pub trait RandSource {
    /// 64 random bits.
    fn next_u64(&mut self) -> u64;

    /// Fills `dst` with random bytes.
    fn fill(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(8) {
            let r = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
    }

    /// How many times the source reseeded itself (telemetry).
    fn reseeds(&self) -> u64 {
        0
    }
}

/// Incremented in every child right after `fork()`; sources compare it
/// with the value they were seeded under (a relaxed load, no system call).
static FORK_EPOCH: AtomicU64 = AtomicU64::new(0);
static ATFORK: Once = Once::new();

extern "C" fn after_fork_in_child() {
    FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
}

fn register_fork_handler() {
    ATFORK.call_once(|| {
        // SAFETY: registers a handler that only touches an atomic, which is
        // async-signal-safe as required in a forked child.
        #[cfg(unix)]
        unsafe {
            libc::pthread_atfork(None, None, Some(after_fork_in_child));
        }
    });
}

fn os_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    // A machine whose OS random source fails cannot make unguessable UUIDs;
    // stopping is the only honest answer.
    rand_core::OsRng
        .try_fill_bytes(&mut seed)
        .expect("the operating system's random source failed");
    seed
}

/// Reseed after this many bytes of output.
const RESEED_BYTES: u64 = 1 << 24;

/// Reseeds of every [`OsCsprng`] of the process (E4).
static PROCESS_RESEEDS: AtomicU64 = AtomicU64::new(0);

/// How many times the CSPRNG sources of this process reseeded themselves
/// (every 16 MiB of output and after `fork()`), all threads together.
///
/// ```
/// let before = uuidforge::generator::source::process_reseeds();
/// let mut rng = uuidforge::generator::OsCsprng::new();
/// let mut buf = vec![0u8; 1 << 20];
/// for _ in 0..17 {
///     uuidforge::generator::RandSource::fill(&mut rng, &mut buf);
/// }
/// assert!(uuidforge::generator::source::process_reseeds() > before);
/// ```
pub fn process_reseeds() -> u64 {
    PROCESS_RESEEDS.load(Ordering::Relaxed)
}

/// The CSPRNG of every random bit: seeded from the operating system,
/// reseeded every 16 MiB of output and in a child after `fork()` (RFC 9562
/// §6.9). Its keystream is AES-128 in counter mode where the CPU has AES
/// instructions, else ChaCha8 ([`OsCsprng::cipher`] says which).
///
/// Both by measurement: the random tails are most of what a batch of UUIDs
/// costs. ChaCha8 rather than ChaCha12 (1.5 times the speed): eight rounds
/// is the count Go's runtime generator uses since 1.22 (`ChaCha8Rand`, as a
/// cryptographically secure source) and Aumasson's *Too Much Crypto* (2019)
/// argues is enough, the best published attacks reaching seven. AES-128-CTR
/// where AES is in hardware (the construction of NIST SP 800-90A's
/// CTR_DRBG; 128-bit security): faster again than ChaCha8 on AVX2 (figures
/// in docs/PERFORMANCE.md), and constant-time there; a software AES would
/// be neither, so without AES instructions ChaCha8 it is.
///
/// ```
/// use uuidforge::generator::{OsCsprng, RandSource};
/// let mut rng = OsCsprng::new();
/// let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
/// rng.fill(&mut a);
/// rng.fill(&mut b);
/// assert_ne!(a, b);
/// assert!(["aes128-ctr", "chacha8"].contains(&rng.cipher()));
/// ```
pub struct OsCsprng {
    keystream: Keystream,
    epoch: u64,
    output: u64,
    reseeds: u64,
}

/// The cipher behind an [`OsCsprng`].
enum Keystream {
    Aes(Box<super::aes_ctr::AesCtr>),
    ChaCha(Box<ChaCha8Rng>),
}

impl Keystream {
    fn seeded(aes: bool) -> Keystream {
        let seed = os_seed();
        if aes {
            Keystream::Aes(Box::new(super::aes_ctr::AesCtr::new(&seed)))
        } else {
            Keystream::ChaCha(Box::new(ChaCha8Rng::from_seed(seed)))
        }
    }
}

impl OsCsprng {
    /// A new source seeded from the OS: AES-128-CTR where the CPU has AES
    /// instructions, else ChaCha8.
    pub fn new() -> OsCsprng {
        Self::with_aes(super::aes_ctr::AesCtr::in_hardware())
    }

    /// A new source on ChaCha8 whatever the CPU has (for comparisons).
    pub fn chacha8() -> OsCsprng {
        Self::with_aes(false)
    }

    fn with_aes(aes: bool) -> OsCsprng {
        register_fork_handler();
        OsCsprng {
            keystream: Keystream::seeded(aes),
            epoch: FORK_EPOCH.load(Ordering::Relaxed),
            output: 0,
            reseeds: 0,
        }
    }

    /// The cipher: `aes128-ctr` or `chacha8`.
    pub fn cipher(&self) -> &'static str {
        match self.keystream {
            Keystream::Aes(_) => "aes128-ctr",
            Keystream::ChaCha(_) => "chacha8",
        }
    }

    #[inline]
    fn check(&mut self, bytes: u64) {
        self.output += bytes;
        let epoch = FORK_EPOCH.load(Ordering::Relaxed);
        if epoch != self.epoch || self.output > RESEED_BYTES {
            self.reseed(epoch);
        }
    }

    #[cold]
    fn reseed(&mut self, epoch: u64) {
        self.keystream = Keystream::seeded(matches!(self.keystream, Keystream::Aes(_)));
        self.epoch = epoch;
        self.output = 0;
        self.reseeds += 1;
        PROCESS_RESEEDS.fetch_add(1, Ordering::Relaxed);
    }
}

impl Default for OsCsprng {
    fn default() -> Self {
        OsCsprng::new()
    }
}

impl RandSource for OsCsprng {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.check(8);
        match &mut self.keystream {
            Keystream::Aes(k) => k.next_u64(),
            Keystream::ChaCha(k) => k.next_u64(),
        }
    }

    #[inline]
    fn fill(&mut self, dst: &mut [u8]) {
        self.check(dst.len() as u64);
        match &mut self.keystream {
            Keystream::Aes(k) => k.fill(dst),
            Keystream::ChaCha(k) => k.fill_bytes(dst),
        }
    }

    fn reseeds(&self) -> u64 {
        self.reseeds
    }
}

/// wyrand: fast and **guessable**; for users who ask for it by name
/// ([`super::Randomness::InsecureFast`]). Seeded from the OS, reseeded after
/// `fork()` so parent and child do not repeat each other.
pub struct InsecureFastRng {
    state: u64,
    epoch: u64,
}

impl InsecureFastRng {
    /// A new generator seeded from the OS.
    pub fn new() -> InsecureFastRng {
        register_fork_handler();
        let seed = os_seed();
        InsecureFastRng {
            state: u64::from_le_bytes(seed[..8].try_into().expect("8 bytes")),
            epoch: FORK_EPOCH.load(Ordering::Relaxed),
        }
    }
}

impl Default for InsecureFastRng {
    fn default() -> Self {
        InsecureFastRng::new()
    }
}

impl RandSource for InsecureFastRng {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        let epoch = FORK_EPOCH.load(Ordering::Relaxed);
        if epoch != self.epoch {
            *self = InsecureFastRng::new();
        }
        self.state = self.state.wrapping_add(0xa076_1d64_78bd_642f);
        let t = (self.state as u128).wrapping_mul((self.state ^ 0xe703_7ed1_a0b4_28db) as u128);
        ((t >> 64) ^ t) as u64
    }
}

/// Random words drawn in bulk from another source and handed out one by one
/// (RFC 9562 §6.3 buffering, B11). The buffer is discarded after `fork()`,
/// so a child never reuses words its parent drew.
pub struct Buffered<R: RandSource> {
    inner: R,
    words: [u64; 64],
    next: usize,
    epoch: u64,
}

impl<R: RandSource> Buffered<R> {
    /// Buffers `inner`.
    pub fn new(inner: R) -> Buffered<R> {
        Buffered {
            inner,
            words: [0; 64],
            next: 64,
            epoch: FORK_EPOCH.load(Ordering::Relaxed),
        }
    }

    #[cold]
    fn refill(&mut self) {
        let mut bytes = [0u8; 512];
        self.inner.fill(&mut bytes);
        for (w, b) in self.words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        self.next = 0;
        self.epoch = FORK_EPOCH.load(Ordering::Relaxed);
    }
}

impl<R: RandSource> RandSource for Buffered<R> {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        if self.next == self.words.len() || FORK_EPOCH.load(Ordering::Relaxed) != self.epoch {
            self.refill();
        }
        let w = self.words[self.next];
        self.next += 1;
        w
    }

    fn fill(&mut self, dst: &mut [u8]) {
        if FORK_EPOCH.load(Ordering::Relaxed) != self.epoch {
            self.next = self.words.len();
        }
        self.inner.fill(dst);
    }

    fn reseeds(&self) -> u64 {
        self.inner.reseeds()
    }
}

/// Either source, chosen by [`super::Randomness`].
pub enum ConfiguredRng {
    /// The CSPRNG.
    Csprng(Box<OsCsprng>),
    /// The opt-in fast generator.
    InsecureFast(InsecureFastRng),
}

impl ConfiguredRng {
    /// The source a configuration asks for.
    pub fn new(randomness: super::Randomness) -> ConfiguredRng {
        match randomness {
            super::Randomness::Csprng => ConfiguredRng::Csprng(Box::default()),
            super::Randomness::InsecureFast => ConfiguredRng::InsecureFast(InsecureFastRng::new()),
        }
    }
}

impl RandSource for ConfiguredRng {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        match self {
            ConfiguredRng::Csprng(r) => r.next_u64(),
            ConfiguredRng::InsecureFast(r) => r.next_u64(),
        }
    }

    #[inline]
    fn fill(&mut self, dst: &mut [u8]) {
        match self {
            ConfiguredRng::Csprng(r) => r.fill(dst),
            ConfiguredRng::InsecureFast(r) => r.fill(dst),
        }
    }

    fn reseeds(&self) -> u64 {
        match self {
            ConfiguredRng::Csprng(r) => r.reseeds(),
            ConfiguredRng::InsecureFast(_) => 0,
        }
    }
}

/// The fork epoch, for tests that fork.
#[doc(hidden)]
pub fn fork_epoch() -> u64 {
    FORK_EPOCH.load(Ordering::Relaxed)
}

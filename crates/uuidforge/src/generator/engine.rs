//! The timestamp-and-counter state machine shared by the owned and the
//! process-wide generators, and the assembly of the 128 bits.

use super::config::{ClockMode, GeneratorConfig, Increment, OverflowPolicy, RollbackPolicy};
use super::source::RandSource;
use super::{GenError, Telemetry};
use crate::bits::mask;
use crate::v7::MAX_UNIX_MS;
use uuid::Uuid;

/// A validated configuration, with per-instance choices made (spread shift,
/// masking key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub f: u32,
    pub c: u32,
    pub g: u32,
    pub s: u32,
    pub r: u32,
    pub increment: Increment,
    pub overflow: OverflowPolicy,
    pub rollback: RollbackPolicy,
    pub clock: ClockMode,
    /// Fixed shift plus this instance's spread shift, in ms.
    pub shift_ms: i64,
    pub masking: Option<(u64, u64, u64)>, // (period_ms, max_ms, key)
    /// One counter step in the 122-bit payload: `1 << (74 - f - c)`.
    pub counter_unit: u128,
    /// The random tail's bits in the payload.
    pub random_mask: u128,
}

impl Layout {
    /// The `default` profile's layout (what [`Layout::new`] makes of
    /// [`GeneratorConfig::default`]), as a constant: a generator with this
    /// layout runs code compiled for it, every shift and mask an immediate.
    pub const DEFAULT: Layout = Layout {
        f: 0,
        c: 18,
        g: 1,
        s: 0,
        r: 56,
        increment: Increment::One,
        overflow: OverflowPolicy::Bump,
        rollback: RollbackPolicy::Keep,
        clock: ClockMode::Tsc,
        shift_ms: 0,
        masking: None,
        counter_unit: 1 << 56,
        random_mask: mask(56),
    };

    pub fn new(config: &GeneratorConfig, rng: &mut impl RandSource) -> Result<Layout, GenError> {
        config.validate().map_err(GenError::Config)?;
        let spread = config
            .spread
            .map(|s| (rng.next_u64() % s.steps * s.step_ms) as i64)
            .unwrap_or(0);
        Ok(Layout {
            f: config.fraction_bits as u32,
            c: config.counter_bits as u32,
            g: config.guard_bits as u32,
            s: config.segment_bits as u32,
            r: config.random_bits() as u32,
            increment: config.increment,
            overflow: config.overflow,
            rollback: config.rollback,
            clock: config.clock,
            shift_ms: config.shift_ms + spread,
            masking: config
                .masking
                .map(|m| (m.period_ms, m.max_ms, rng.next_u64())),
            counter_unit: 1u128 << (74 - config.fraction_bits - config.counter_bits),
            random_mask: mask(config.random_bits() as u32),
        })
    }

    /// Ticks (1/2^F ms) of a clock reading, with every configured shift.
    #[inline(always)]
    pub fn tick_of(&self, unix_ns: u64) -> Result<u64, GenError> {
        if self.f == 0 && self.masking.is_none() && self.clock != ClockMode::Fast {
            // The common case: whole milliseconds, one multiply-shift.
            let shifted = (unix_ns / 1_000_000) as i64 + self.shift_ms;
            if (0..=MAX_UNIX_MS as i64).contains(&shifted) {
                return Ok(shifted as u64);
            }
            return Err(GenError::TimestampOutOfRange { unix_ms: shifted });
        }
        let (ms, ns_in_ms) = match self.clock {
            ClockMode::System | ClockMode::Tsc => (unix_ns / 1_000_000, unix_ns % 1_000_000),
            // µs >> 10: a 1.024 ms unit; the fraction is of that unit.
            ClockMode::Fast => {
                let us = unix_ns / 1_000;
                (us >> 10, ((us & 1023) * 1_000_000) >> 10)
            }
        };
        let masking = self.masking.map_or(0, |(period, max, key)| {
            let p = ms / period;
            (mix(p ^ key) % (max + 1)) as i64
        });
        let shifted = ms as i64 + self.shift_ms + masking;
        if !(0..=MAX_UNIX_MS as i64).contains(&shifted) {
            return Err(GenError::TimestampOutOfRange { unix_ms: shifted });
        }
        let fraction = (ns_in_ms << self.f) / 1_000_000;
        Ok(((shifted as u64) << self.f) | fraction)
    }

    pub const fn max_counter(&self) -> u128 {
        mask(self.c)
    }

    /// A fresh counter: guard bits zero, the rest random (B3, B4).
    #[inline]
    pub fn init_counter(&self, rng: &mut impl RandSource) -> u128 {
        let free = self.c - self.g;
        if free == 0 {
            return 0;
        }
        let r = ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
        r & mask(free)
    }

    /// The counter after one more UUID, or `None` on overflow.
    #[inline]
    pub fn next_counter(&self, counter: u128, rng: &mut impl RandSource) -> Option<u128> {
        let step = match self.increment {
            Increment::One => 1,
            Increment::Random { max } => 1 + (rng.next_u64() % max) as u128,
        };
        counter
            .checked_add(step)
            .filter(|&c| c <= self.max_counter())
    }

    /// A segment value for a new tick.
    #[inline]
    pub fn init_segment(&self, rng: &mut impl RandSource) -> u64 {
        if self.s == 0 {
            0
        } else {
            rng.next_u64() & mask(self.s) as u64
        }
    }

    /// The 122 payload bits (all but version and variant) of a timestamp,
    /// counter and segment, random bits zero.
    #[inline]
    pub fn head(&self, tick: u64, counter: u128, segment: u64) -> u128 {
        let ms = (tick >> self.f) as u128;
        let fraction = (tick & mask(self.f) as u64) as u128;
        // A counter of at most 64 bits (every built-in layout's) shifted
        // from one word: shifted as 128 bits by a constant multiple of 8,
        // the compiler reads it from memory at a byte offset, right after
        // storing it whole, and the load waits for the store (measured:
        // a quarter of a process-wide value's time).
        let counter = if self.c <= 64 {
            (counter as u64 as u128) << (74 - self.f - self.c)
        } else {
            counter << (74 - self.f - self.c)
        };
        (ms << 74) | (fraction << (74 - self.f)) | counter | ((segment as u128) << self.r)
    }

    /// The UUID of a payload head and `random` (only its low `r` bits are
    /// used). Constant shifts only: this is the per-UUID path.
    #[inline(always)]
    pub fn finish(&self, head: u128, random: u128) -> Uuid {
        uuid_of_payload(self.payload(head, random))
    }

    /// A payload head with its random tail filled in.
    #[inline(always)]
    pub fn payload(&self, head: u128, random: u128) -> u128 {
        head | (random & self.random_mask)
    }

    /// Tick and counter as this layout reads them from any v7 payload, so a
    /// generator can continue after a value another layout wrote: the next
    /// value's prefix is larger, hence the UUID is.
    #[inline(always)]
    pub fn read_payload(&self, payload: u128) -> (u64, u128) {
        let below = 74 - self.f - self.c;
        (
            (payload >> (74 - self.f)) as u64,
            (payload >> below) & mask(self.c),
        )
    }

    /// The UUID for a state and `random`.
    #[inline]
    pub fn assemble(&self, tick: u64, counter: u128, segment: u64, random: u128) -> Uuid {
        self.finish(self.head(tick, counter, segment), random)
    }

    /// Bytes of randomness one value's tail takes: its random bits rounded
    /// up to whole bytes (7 for the default layout's 56), not a whole
    /// word — the CSPRNG is most of a batch's cost.
    #[inline(always)]
    pub const fn random_bytes(&self) -> usize {
        self.r.div_ceil(8) as usize
    }

    /// The random tail of value `i` from `bytes`, where each value has
    /// [`Layout::random_bytes`] of them (unaligned reads; `bytes` has 8
    /// spare bytes at the end).
    #[inline(always)]
    fn random_at(&self, bytes: &[u8], i: usize) -> u128 {
        let per = self.random_bytes();
        let at = i * per;
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        if per <= 8 {
            word(at) as u128
        } else {
            word(at) as u128 | (word(at + 8) as u128) << 64
        }
    }

    /// Fills `out` with the values that follow `state`, all from the one
    /// clock reading `real`, the random tails drawn in bulk (B11): within
    /// a tick a Method 1 counter runs in a tight loop that only adds the
    /// counter step. Returns how many were made: fewer than `out.len()`
    /// when the overflow policy stalls (the clock must move first).
    pub fn fill_run(
        &self,
        state: &mut State,
        real: Option<u64>,
        rng: &mut impl RandSource,
        telemetry: &mut Telemetry,
        out: &mut [Uuid],
    ) -> Result<usize, GenError> {
        const CHUNK: usize = 256;
        let per = self.random_bytes();
        let mut bytes = [0u8; CHUNK * 16 + 8];
        let plus_one = matches!(self.increment, Increment::One);
        let mut made = 0;
        for chunk in out.chunks_mut(CHUNK) {
            if per > 0 {
                rng.fill(&mut bytes[..chunk.len() * per]);
            }
            let mut i = 0;
            while i < chunk.len() {
                if let Advance::Stall = state.advance(self, real, rng, telemetry)? {
                    return Ok(made + i);
                }
                chunk[i] = self.finish(state.head, self.random_at(&bytes, i));
                i += 1;
                if plus_one {
                    let room = (self.max_counter() - state.counter).min((chunk.len() - i) as u128)
                        as usize;
                    let slots = &mut chunk[i..i + room];
                    state.head = if self.s + self.r < 62 {
                        self.count_on_low(state.head, slots, &bytes[i * per..])
                    } else {
                        let mut head = state.head;
                        for (k, slot) in slots.iter_mut().enumerate() {
                            head += self.counter_unit;
                            *slot = self.finish(head, self.random_at(&bytes, i + k));
                        }
                        head
                    };
                    state.counter += room as u128;
                    i += room;
                }
            }
            made += chunk.len();
        }
        Ok(made)
    }

    /// The values after `head`, one counter step apart, with the tails in
    /// `bytes` ([`Layout::random_bytes`] each), for layouts whose counter
    /// step and tail lie below bit 62 (every built-in one): the UUID's
    /// upper 64 bits change only when the counter carries into `rand_a`, so
    /// the values come in runs between carries, each value an add, a byte
    /// swap, a load, a mask and an or on the lower 64 bits, and two stores.
    /// The tail's bits are taken where the byte-swapped value has them (any
    /// fixed choice of random bits is as random). Returns the last head.
    #[inline(always)]
    fn count_on_low(&self, mut head: u128, slots: &mut [Uuid], bytes: &[u8]) -> u128 {
        const LOW: u64 = (1 << 62) - 1;
        const VARIANT: u64 = 0b10 << 62;
        let per = self.random_bytes();
        // The tail as the lower 64 bits' bytes lie in memory (big-endian)
        // read as one little-endian word.
        let tail_in_memory = (self.random_mask as u64).swap_bytes();
        let unit = self.counter_unit as u64;
        // The upper 64 bits in memory order: 48-bit ms, version, rand_a.
        let upper = |head: u128| {
            let top = (head >> 62) as u64; // 48-bit ms, 12 bits of rand_a
            (((top >> 12) << 16) | 0x7000 | (top & 0xfff)).swap_bytes()
        };
        // Every read below is inside `bytes` (checked once here).
        assert!(bytes.len() >= slots.len() * per + 8);
        let mut top = upper(head);
        let mut low = head as u64 & LOW;
        let mut done = 0;
        while done < slots.len() {
            if low + unit > LOW {
                // The counter carries into rand_a (or the millisecond).
                head = ((head >> 62) + 1) << 62;
                low = (low + unit) & LOW;
                top = upper(head);
                self.write_low(
                    &mut slots[done],
                    top,
                    low | VARIANT,
                    bytes,
                    done,
                    tail_in_memory,
                );
                done += 1;
                continue;
            }
            // The values until the next carry: no check inside.
            let run = (((LOW - low) / unit) as usize).min(slots.len() - done);
            let mut with_variant = low | VARIANT;
            for (k, slot) in slots[done..done + run].iter_mut().enumerate() {
                with_variant += unit;
                self.write_low(slot, top, with_variant, bytes, done + k, tail_in_memory);
            }
            low = with_variant & LOW;
            done += run;
        }
        ((head >> 62) << 62) | low as u128
    }

    /// Value `k` of a run: `top` (the upper 64 bits in memory order), then
    /// `low` (variant, counter, segment; numeric) with the tail from
    /// `bytes` where `tail_in_memory` says.
    #[inline(always)]
    fn write_low(
        &self,
        slot: &mut Uuid,
        top: u64,
        low: u64,
        bytes: &[u8],
        k: usize,
        tail_in_memory: u64,
    ) {
        let per = self.random_bytes();
        // SAFETY: k * per + 8 <= bytes.len() (checked by the caller).
        let random = unsafe { bytes.as_ptr().add(k * per).cast::<u64>().read_unaligned() };
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&top.to_le_bytes());
        b[8..].copy_from_slice(&(low.swap_bytes() | (random & tail_in_memory)).to_le_bytes());
        *slot = Uuid::from_bytes(b);
    }

    /// Random bits for the tail of one UUID.
    #[inline]
    pub fn random_tail(&self, rng: &mut impl RandSource) -> u128 {
        match self.r {
            0 => 0,
            1..=64 => rng.next_u64() as u128,
            _ => ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128,
        }
    }
}

/// The UUIDv7 of 122 payload bits (everything but version and variant).
#[inline(always)]
pub(crate) fn uuid_of_payload(p: u128) -> Uuid {
    let v = ((p >> 74) << 80)
        | (0x7 << 76)
        | (((p >> 62) & 0xfff) << 64)
        | (0b10 << 62)
        | (p & mask(62));
    uuid_from_u128(v)
}

/// The 122 payload bits of a UUIDv7 (the inverse of [`uuid_of_payload`]).
#[inline(always)]
pub(crate) fn payload_of_uuid(v: u128) -> u128 {
    ((v >> 80) << 74) | (((v >> 64) & 0xfff) << 62) | (v & mask(62))
}

/// `Uuid::from_u128` through one 16-byte vector store: built from two
/// registers and stored in halves, the value stalls the caller's 16-byte
/// load of it on store forwarding (measured: about 8 ns per UUID).
#[inline(always)]
fn uuid_from_u128(v: u128) -> Uuid {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::*;
        let mut bytes = [0u8; 16];
        // SAFETY: SSE2 is enabled (cfg); the store stays inside `bytes`.
        unsafe {
            let x = _mm_set_epi64x(
                (v as u64).swap_bytes() as i64,
                ((v >> 64) as u64).swap_bytes() as i64,
            );
            _mm_storeu_si128(bytes.as_mut_ptr().cast(), x);
        }
        Uuid::from_bytes(bytes)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        Uuid::from_u128(v)
    }
}

/// A 64-bit mixer (SplitMix64 finaliser) for the masking shift.
const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Timestamp and counter of the last UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct State {
    pub tick: u64,
    pub counter: u128,
    pub segment: u64,
    /// The last real clock reading, in ticks; `None` before the first.
    pub last_real: Option<u64>,
    /// [`Layout::head`] of the three fields above, kept up to date.
    pub head: u128,
}

/// What [`State::advance`] decided.
pub(crate) enum Advance {
    /// The state holds the next UUID's timestamp and counter.
    Ready,
    /// Overflow under the stall policy: read the clock again and retry.
    Stall,
}

impl State {
    /// Moves the state to the next UUID given a clock reading (`None` if the
    /// clock failed). Compares against the last *real* reading, so a bumped
    /// timestamp never keeps drifting: as soon as the clock passes it, the
    /// clock's value is used again.
    #[inline(always)]
    pub fn advance(
        &mut self,
        layout: &Layout,
        real: Option<u64>,
        rng: &mut impl RandSource,
        telemetry: &mut Telemetry,
    ) -> Result<Advance, GenError> {
        let Some(real) = real else {
            telemetry.clock_failures += 1;
            if self.last_real.is_none() {
                return Err(GenError::ClockUnavailable);
            }
            return self.count_on(layout, rng, telemetry);
        };
        match self.last_real {
            None => {
                self.last_real = Some(real);
                self.new_tick(layout, real.max(self.tick), rng);
                return Ok(Advance::Ready);
            }
            Some(last) if real < last => {
                telemetry.rollbacks += 1;
                let behind = self.tick.saturating_sub(real) >> layout.f;
                match layout.rollback {
                    RollbackPolicy::Keep => {}
                    RollbackPolicy::Error => {
                        return Err(GenError::ClockMovedBack {
                            by_ms: (last - real) >> layout.f,
                        })
                    }
                    RollbackPolicy::Absorb { max_ms } if behind > max_ms => {
                        telemetry.resets += 1;
                        self.last_real = Some(real);
                        self.new_tick(layout, real, rng);
                        return Ok(Advance::Ready);
                    }
                    RollbackPolicy::Absorb { .. } => {}
                }
            }
            Some(_) => {}
        }
        self.last_real = Some(real);
        let result = if real > self.tick {
            self.new_tick(layout, real, rng);
            Ok(Advance::Ready)
        } else {
            self.count_on(layout, rng, telemetry)
        };
        telemetry.note_ahead(self.tick.saturating_sub(real) >> layout.f);
        result
    }

    fn new_tick(&mut self, layout: &Layout, tick: u64, rng: &mut impl RandSource) {
        self.tick = tick;
        self.counter = layout.init_counter(rng);
        self.segment = layout.init_segment(rng);
        self.head = layout.head(tick, self.counter, self.segment);
    }

    #[inline(always)]
    fn count_on(
        &mut self,
        layout: &Layout,
        rng: &mut impl RandSource,
        telemetry: &mut Telemetry,
    ) -> Result<Advance, GenError> {
        if let Some(c) = layout.next_counter(self.counter, rng) {
            self.head += (c - self.counter) * layout.counter_unit;
            self.counter = c;
            return Ok(Advance::Ready);
        }
        telemetry.overflows += 1;
        match layout.overflow {
            OverflowPolicy::Bump => {
                let max_tick = (MAX_UNIX_MS << layout.f) | mask(layout.f) as u64;
                if self.tick >= max_tick {
                    return Err(GenError::TimestampOutOfRange {
                        unix_ms: MAX_UNIX_MS as i64 + 1,
                    });
                }
                self.new_tick(layout, self.tick + 1, rng);
                Ok(Advance::Ready)
            }
            OverflowPolicy::Stall => Ok(Advance::Stall),
            OverflowPolicy::Error => Err(GenError::CounterOverflow {
                unix_ms: self.tick >> layout.f,
            }),
        }
    }
}

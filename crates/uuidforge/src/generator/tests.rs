//! Generator tests with simulated clocks and scripted randomness.

use super::*;
use crate::layout::{read_v7, V7Layout};
use std::cell::Cell;
use std::rc::Rc;

/// A clock the test moves by hand; `None` simulates a failed read.
#[derive(Clone)]
struct SimClock(Rc<Cell<Option<u64>>>);

impl SimClock {
    fn at_ms(ms: u64) -> SimClock {
        SimClock(Rc::new(Cell::new(Some(ms * 1_000_000))))
    }
    fn set_ms(&self, ms: u64) {
        self.0.set(Some(ms * 1_000_000));
    }
    fn set_ns(&self, ns: u64) {
        self.0.set(Some(ns));
    }
    fn fail(&self) {
        self.0.set(None);
    }
}

impl TimeSource for SimClock {
    fn now_unix_ns(&mut self) -> Option<u64> {
        self.0.get()
    }
}

/// Deterministic randomness (xorshift), or a constant.
struct ScriptRng {
    state: u64,
    constant: Option<u64>,
}

impl ScriptRng {
    fn seeded(seed: u64) -> ScriptRng {
        ScriptRng {
            state: seed | 1,
            constant: None,
        }
    }
    fn constant(v: u64) -> ScriptRng {
        ScriptRng {
            state: 1,
            constant: Some(v),
        }
    }
}

impl RandSource for ScriptRng {
    fn next_u64(&mut self) -> u64 {
        if let Some(c) = self.constant {
            return c;
        }
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }
}

const T0: u64 = 1_700_000_000_000;

fn config(name: &str) -> GeneratorConfig {
    GeneratorConfig::profile(name).unwrap()
}

fn sim(c: GeneratorConfig, clock: &SimClock, rng: ScriptRng) -> V7Generator<SimClock, ScriptRng> {
    V7Generator::with_sources(c, clock.clone(), rng).unwrap()
}

#[test]
fn default_profile_fields_match_the_diagram() {
    let clock = SimClock::at_ms(T0);
    let mut g = sim(config("default"), &clock, ScriptRng::seeded(7));
    let a = g.generate().unwrap();
    let b = g.generate().unwrap();
    for id in [a, b] {
        assert_eq!(crate::v7::unix_ms(&id), T0);
        assert_eq!(id.get_version_num(), 7);
        assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
    }
    // rand_a: guard bit (0 at a new ms) + 11 counter bits; rand_b: 6 counter
    // bits then 56 random bits.
    assert_eq!(crate::v7::rand_a(&a) >> 11, 0, "guard bit");
    let counter = |u: &Uuid| read_v7(u, V7Layout::Counter18).counter.unwrap();
    assert_eq!(counter(&b), counter(&a) + 1);
    let random = |u: &Uuid| crate::v7::rand_b(u) & ((1 << 56) - 1);
    assert_ne!(random(&a), random(&b), "fresh random bits for every UUID");
    assert!(a < b);
}

#[test]
fn counter42_pg18_and_random_profiles_match_their_diagrams() {
    let clock = SimClock::at_ms(T0);
    let mut g = sim(config("counter42"), &clock, ScriptRng::seeded(3));
    let (a, b) = (g.generate().unwrap(), g.generate().unwrap());
    let c42 = |u: &Uuid| read_v7(u, V7Layout::Counter42).counter.unwrap();
    assert_eq!(c42(&b), c42(&a) + 1);
    assert!(c42(&a) < 1 << 41, "guard bit");
    assert_ne!(crate::v7::rand_b(&a) as u32, crate::v7::rand_b(&b) as u32);

    // pg18: rand_a is the 12-bit fraction of the clock's millisecond.
    clock.set_ns(T0 * 1_000_000 + 456_700);
    let mut g = sim(config("pg18"), &clock, ScriptRng::seeded(3));
    let a = g.generate().unwrap();
    assert_eq!(crate::v7::rand_a(&a), 0x74E);
    // Same clock reading: the fraction ascends by one, like PostgreSQL 18.
    let b = g.generate().unwrap();
    assert_eq!(crate::v7::rand_a(&b), 0x74F);
    assert_eq!(
        read_v7(&a, V7Layout::Fraction12).timestamp.to_string(),
        "2023-11-14T22:13:20.0004565Z"
    );

    // random: 74 bits; within a millisecond a Method 2 increment.
    let mut g = sim(config("random"), &clock, ScriptRng::seeded(5));
    let ids: Vec<Uuid> = (0..100).map(|_| g.generate().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let payload = |u: &Uuid| ((crate::v7::rand_a(u) as u128) << 62) | crate::v7::rand_b(u) as u128;
    let steps: Vec<u128> = ids
        .windows(2)
        .map(|w| payload(&w[1]) - payload(&w[0]))
        .collect();
    assert!(steps.iter().all(|&s| (1..=1 << 32).contains(&s)));
    assert!(
        steps.iter().any(|&s| s > 1),
        "increments are random, not +1"
    );
}

#[test]
fn overflow_bumps_the_timestamp_at_every_counter_length() {
    for bits in 1..=42u8 {
        let c = GeneratorConfig {
            counter_bits: bits,
            guard_bits: 0,
            ..config("default")
        };
        let clock = SimClock::at_ms(T0);
        // All-ones randomness starts the counter at its maximum.
        let mut g = sim(c, &clock, ScriptRng::constant(u64::MAX));
        let a = g.generate().unwrap();
        let b = g.generate().unwrap();
        assert!(a < b, "bits {bits}");
        assert_eq!(crate::v7::unix_ms(&a), T0);
        assert_eq!(
            crate::v7::unix_ms(&b),
            T0 + 1,
            "bits {bits}: the overflow moved the timestamp, not wrapped"
        );
        assert_eq!(g.telemetry().overflows, 1);
        assert_eq!(g.telemetry().ahead_ms, 1);
    }
}

#[test]
fn a_bumped_timestamp_does_not_drift_once_the_clock_catches_up() {
    // Pitfall 2 (CPython #138862): compare with the last real reading.
    let c = GeneratorConfig {
        counter_bits: 2,
        guard_bits: 0,
        ..config("default")
    };
    let clock = SimClock::at_ms(T0);
    let mut g = sim(c, &clock, ScriptRng::constant(0));
    let ids: Vec<Uuid> = (0..12).map(|_| g.generate().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        crate::v7::unix_ms(ids.last().unwrap()),
        T0 + 2,
        "4 values per ms"
    );
    clock.set_ms(T0 + 3);
    let next = g.generate().unwrap();
    assert_eq!(crate::v7::unix_ms(&next), T0 + 3);
    assert_eq!(
        read_v7(&next, V7Layout::Counter18).counter.unwrap() >> 16,
        0,
        "fresh counter at the real time"
    );
    assert_eq!(g.telemetry().ahead_ms, 0);
    assert_eq!(g.telemetry().max_ahead_ms, 2);
}

#[test]
fn stall_waits_for_the_clock_and_error_reports() {
    let c = GeneratorConfig {
        counter_bits: 1,
        guard_bits: 0,
        overflow: OverflowPolicy::Stall,
        ..config("default")
    };
    // A clock that advances one millisecond every 1000 reads.
    let reads = Rc::new(Cell::new(0u64));
    let r = reads.clone();
    let ticking = move || {
        r.set(r.get() + 1);
        Some((T0 + r.get() / 1000) * 1_000_000)
    };
    let mut g =
        V7Generator::with_sources(c.clone(), ticking, ScriptRng::constant(u64::MAX)).unwrap();
    let ids: Vec<Uuid> = (0..5).map(|_| g.generate().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(reads.get() > 1000, "it waited for the clock");
    assert_eq!(g.telemetry().max_ahead_ms, 0, "a stall never runs ahead");

    let c = GeneratorConfig {
        overflow: OverflowPolicy::Error,
        ..c
    };
    let clock = SimClock::at_ms(T0);
    let mut g = sim(c, &clock, ScriptRng::constant(u64::MAX));
    g.generate().unwrap();
    assert_eq!(
        g.generate().unwrap_err(),
        GenError::CounterOverflow { unix_ms: T0 }
    );
}

#[test]
fn rollback_policies() {
    let clock = SimClock::at_ms(T0);
    let mut g = sim(config("default"), &clock, ScriptRng::seeded(9));
    let a = g.generate().unwrap();
    clock.set_ms(T0 - 5_000);
    let b = g.generate().unwrap();
    assert!(b > a, "keep: still increasing");
    assert_eq!(crate::v7::unix_ms(&b), T0);
    assert_eq!(g.telemetry().rollbacks, 1);
    assert_eq!(g.telemetry().ahead_ms, 5_000);

    let c = GeneratorConfig {
        rollback: RollbackPolicy::Error,
        ..config("default")
    };
    let clock = SimClock::at_ms(T0);
    let mut g = sim(c, &clock, ScriptRng::seeded(9));
    g.generate().unwrap();
    clock.set_ms(T0 - 7);
    assert_eq!(
        g.generate().unwrap_err(),
        GenError::ClockMovedBack { by_ms: 7 }
    );

    let c = GeneratorConfig {
        rollback: RollbackPolicy::Absorb { max_ms: 1_000 },
        ..config("default")
    };
    let clock = SimClock::at_ms(T0);
    let mut g = sim(c, &clock, ScriptRng::seeded(9));
    let a = g.generate().unwrap();
    clock.set_ms(T0 - 500);
    let b = g.generate().unwrap();
    assert!(b > a, "absorbed");
    clock.set_ms(T0 - 60_000);
    let c2 = g.generate().unwrap();
    assert_eq!(crate::v7::unix_ms(&c2), T0 - 60_000, "reset to the clock");
    assert_eq!(g.telemetry().resets, 1);
}

#[test]
fn a_failed_clock_continues_from_the_last_timestamp() {
    let clock = SimClock::at_ms(T0);
    clock.fail();
    let mut g = sim(config("default"), &clock, ScriptRng::seeded(1));
    assert_eq!(g.generate().unwrap_err(), GenError::ClockUnavailable);
    clock.set_ms(T0);
    let a = g.generate().unwrap();
    clock.fail();
    let b = g.generate().unwrap();
    assert!(b > a);
    assert_eq!(crate::v7::unix_ms(&b), T0);
    assert_eq!(g.telemetry().clock_failures, 2);
}

#[test]
fn explicit_timestamps_leave_the_state_alone() {
    // Pitfall 3 (uuid-creator#107, uuidjs#764).
    let clock = SimClock::at_ms(T0);
    let mut g = sim(config("default"), &clock, ScriptRng::seeded(4));
    let a = g.generate().unwrap();
    let backfill = g.generate_at(T0 + 1_000_000).unwrap();
    assert_eq!(crate::v7::unix_ms(&backfill), T0 + 1_000_000);
    let b = g.generate().unwrap();
    assert_eq!(
        crate::v7::unix_ms(&b),
        T0,
        "the far-future backfill did not move the clock"
    );
    assert_eq!(
        read_v7(&b, V7Layout::Counter18).counter,
        read_v7(&a, V7Layout::Counter18).counter.map(|c| c + 1)
    );
    assert!(g.generate_at(1 << 48).is_err());
}

#[test]
fn counter_seed_is_not_the_random_tail() {
    // Pitfall 4 (Bun #34022): counter and tail come from different draws.
    let clock = SimClock::at_ms(T0);
    let mut g = sim(config("counter42"), &clock, ScriptRng::seeded(11));
    let mut equal = 0;
    for ms in 0..1000 {
        clock.set_ms(T0 + ms);
        let id = g.generate().unwrap();
        let counter_low = read_v7(&id, V7Layout::Counter42).counter.unwrap() as u32;
        let tail = crate::v7::rand_b(&id) as u32;
        equal += (counter_low == tail) as u32;
    }
    assert_eq!(equal, 0);
}

#[test]
fn edge_counter_widths() {
    // Pitfall 6 (uuid-rs#871): 0 and the widest counter work, wider is refused.
    for bits in [0u8, 1, 73, 74] {
        let c = GeneratorConfig {
            counter_bits: bits,
            guard_bits: bits.min(1),
            ..config("default")
        };
        let clock = SimClock::at_ms(T0);
        let mut g = sim(c, &clock, ScriptRng::seeded(2));
        let ids: Vec<Uuid> = (0..1000).map(|_| g.generate().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "bits {bits}");
    }
    let c = GeneratorConfig {
        counter_bits: 75,
        ..config("default")
    };
    assert!(matches!(V7Generator::new(c), Err(GenError::Config(e)) if e.field == "counter_bits"));
}

#[test]
fn fill_and_iter_are_strictly_increasing() {
    let clock = SimClock::at_ms(T0);
    let mut g = sim(config("default"), &clock, ScriptRng::seeded(5));
    let mut buf = vec![Uuid::nil(); 300_000];
    g.fill(&mut buf).unwrap();
    assert!(buf.windows(2).all(|w| w[0] < w[1]));
    assert!(
        crate::v7::unix_ms(buf.last().unwrap()) > T0,
        "the 17-bit counter overflowed and bumped"
    );
    let more: Vec<Uuid> = g.iter().take(10).map(Result::unwrap).collect();
    assert!(more[0] > *buf.last().unwrap());
    let mut wide = vec![Uuid::nil(); 1000];
    let mut g = sim(config("random"), &clock, ScriptRng::seeded(5));
    g.fill(&mut wide).unwrap();
    assert!(wide.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn shifts_fast_clock_spread_and_masking() {
    let clock = SimClock::at_ms(T0);
    let c = GeneratorConfig {
        shift_ms: -86_400_000,
        ..config("default")
    };
    let mut g = sim(c, &clock, ScriptRng::seeded(1));
    assert_eq!(crate::v7::unix_ms(&g.generate().unwrap()), T0 - 86_400_000);
    let c = GeneratorConfig {
        shift_ms: -(T0 as i64) - 1,
        ..config("default")
    };
    let mut g = sim(c, &clock, ScriptRng::seeded(1));
    assert!(matches!(
        g.generate(),
        Err(GenError::TimestampOutOfRange { .. })
    ));

    let c = GeneratorConfig {
        clock: ClockMode::Fast,
        ..config("default")
    };
    let mut g = sim(c, &clock, ScriptRng::seeded(1));
    assert_eq!(
        crate::v7::unix_ms(&g.generate().unwrap()),
        (T0 * 1000) >> 10
    );

    let spread = Spread {
        step_ms: 1 << 20,
        steps: 8,
    };
    let positions: std::collections::BTreeSet<u64> = (0..64)
        .map(|seed| {
            let c = GeneratorConfig {
                spread: Some(spread),
                ..config("default")
            };
            let mut g = sim(c, &clock, ScriptRng::seeded(seed * 7919 + 1));
            let shift = crate::v7::unix_ms(&g.generate().unwrap()) - T0;
            assert_eq!(shift % (1 << 20), 0);
            shift >> 20
        })
        .collect();
    assert!(
        positions.len() > 4 && positions.iter().all(|&k| k < 8),
        "{positions:?}"
    );

    let c = GeneratorConfig {
        masking: Some(Masking {
            period_ms: 1000,
            max_ms: 3_600_000,
        }),
        ..config("default")
    };
    let mut g = sim(c, &clock, ScriptRng::seeded(1));
    let mut last = Uuid::nil();
    let mut shifts = std::collections::BTreeSet::new();
    for s in 0..50 {
        clock.set_ms(T0 + s * 1000);
        let id = g.generate().unwrap();
        assert!(id > last, "masking keeps order");
        last = id;
        shifts.insert(crate::v7::unix_ms(&id) as i64 - (T0 + s * 1000) as i64);
    }
    assert!(shifts.len() > 10, "the shift changes with the period");
}

/// Runs `n` UUIDs of a profile under a clock script drawn from `seed`: the
/// clock stands still, steps, jumps forward, goes back and fails.
fn run_clock_script(name: &str, seed: u64, n: u64) -> Telemetry {
    let clock = SimClock::at_ms(T0);
    let mut g = sim(config(name), &clock, ScriptRng::seeded(seed ^ 0x5eed));
    let mut script = ScriptRng::seeded(seed);
    let mut ms = T0;
    let mut last = Uuid::nil();
    for i in 0..n {
        if i.is_multiple_of(64) {
            match script.next_u64() % 100 {
                0..=69 => {}
                70..=89 => ms += 1,
                90..=94 => ms -= script.next_u64() % 5,
                95..=98 => ms += script.next_u64() % 100,
                _ => clock.fail(),
            }
            if clock.0.get().is_some() || script.next_u64().is_multiple_of(2) {
                clock.set_ms(ms);
            }
        }
        let id = match g.generate() {
            // A script may fail the clock before its first reading: with no
            // time ever read there is nothing to count on from, and this is
            // the documented answer — but only then.
            Err(GenError::ClockUnavailable) if last.is_nil() => continue,
            result => result.unwrap(),
        };
        assert!(id > last, "{name}: seed {seed}, step {i}");
        last = id;
    }
    g.telemetry()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4))]
    /// 4 cases × 2.5 × 10^6 = 10^7 ids per profile, each case its own clock script.
    #[test]
    fn monotonic_over_ten_million_ids_per_profile(seed in 1u64..u64::MAX) {
        for name in PROFILES {
            let t = run_clock_script(name, seed, 2_500_000);
            proptest::prop_assert!(t.rollbacks > 0 && t.clock_failures > 0, "{}: {:?}", name, t);
        }
    }
}

#[test]
fn shared_generator_is_strictly_increasing_across_threads() {
    // Pitfall 8: no lost updates under real concurrency.
    let g = std::sync::Arc::new(SharedGenerator::new(config("default")).unwrap());
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let g = g.clone();
            std::thread::spawn(move || {
                (0..1_000_000)
                    .map(|_| g.generate().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        let ids = h.join().unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "each thread sees increasing values"
        );
        all.extend(ids);
    }
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "no duplicates");

    // Hand-out order: a value handed out after another (here: after it was
    // published under a lock) is larger, whichever thread takes it; also for
    // a separately configured shared generator.
    let g = std::sync::Arc::new(SharedGenerator::new(config("counter42")).unwrap());
    let last = std::sync::Arc::new(std::sync::Mutex::new(Uuid::nil()));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let (g, last) = (g.clone(), last.clone());
            std::thread::spawn(move || {
                for _ in 0..200_000 {
                    let mut l = last.lock().unwrap();
                    let id = g.generate().unwrap();
                    assert!(id > *l);
                    *l = id;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn the_global_generator_and_telemetry() {
    let a = v7();
    let b = crate::v7();
    assert!(a < b);
    let t = global().telemetry();
    assert!(t.ahead_ms < 60_000, "{t:?}");
}

#[test]
fn tsc_clock_tracks_the_system_clock() {
    let mut tsc = TscClock::new();
    let mut sys = SystemClock;
    let mut last_ms = 0;
    for _ in 0..300_000 {
        let before = sys.now_unix_ns().unwrap();
        let t = tsc.now_unix_ns().unwrap();
        let after = sys.now_unix_ns().unwrap();
        // Within the millisecond window it answers from the counter: never
        // more than a millisecond off, and never going back a millisecond.
        assert!(
            t + 1_000_000 >= before && t <= after + 1_000_000,
            "{before} {t} {after}"
        );
        assert!(t / 1_000_000 >= last_ms);
        last_ms = t / 1_000_000;
    }
    let c = GeneratorConfig {
        clock: ClockMode::Tsc,
        ..config("default")
    };
    let mut g = V7Generator::new(c).unwrap();
    let ids: Vec<Uuid> = (0..100_000).map(|_| g.generate().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn one_cell_orders_every_profile_after_every_other() {
    // A cell written by one layout and continued by another (E2 with a
    // per-session profile setting): each value is above the last, whichever
    // profile made either. The tails are random, so the counter-less pg18
    // and the 74-bit random profile read counters out of random bits.
    let cell = GeneratorCell::new();
    let gens: Vec<SharedGenerator> = PROFILES
        .iter()
        .map(|p| SharedGenerator::new(config(p)).unwrap())
        .collect();
    let mut rng = InsecureFastRng::new();
    let mut last = Uuid::nil();
    for i in 0..400_000 {
        let g = &gens[(rng.next_u64() % gens.len() as u64) as usize];
        let id = g.generate_in(&cell).unwrap();
        assert!(id > last, "value {i}: {id} after {last}");
        assert_eq!(cell.last(), Some(id));
        assert_eq!(id.get_version_num(), 7);
        last = id;
    }
    let fallback = gens[0].generate_without_clock_in(&cell);
    assert!(fallback > last);
}

#[test]
fn a_cell_in_shared_memory_orders_values_across_processes() {
    // E2 for real: two forked processes generate through one cell in a
    // MAP_SHARED mapping. Before each call a process reads the cell's last
    // value (everything handed out so far, by anyone); the value it gets
    // must be above it. Each child also reports its values through a pipe
    // so the parent checks that no value was handed out twice.
    assert!(GeneratorCell::is_lock_free(), "this CPU has cmpxchg16b");
    const PER_CHILD: usize = 200_000;
    // SAFETY: an anonymous shared mapping, sized and aligned (page) for the
    // cell, zero-filled, which is the cell's initial state.
    let cell: &GeneratorCell = unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            std::mem::size_of::<GeneratorCell>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        &*(p as *const GeneratorCell)
    };
    let mut children = Vec::new();
    for profile in ["default", "counter42"] {
        let mut fds = [0; 2];
        // SAFETY: plain pipe(2) and fork(2); the child only generates,
        // writes to its pipe and _exits.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                libc::close(fds[0]);
                let g = SharedGenerator::new(config(profile)).unwrap();
                let mut out = Vec::with_capacity(PER_CHILD * 16);
                let mut ok = true;
                for _ in 0..PER_CHILD {
                    let before = cell.last().unwrap_or(Uuid::nil());
                    let id = g.generate_in(cell).unwrap();
                    ok &= id > before;
                    out.extend_from_slice(id.as_bytes());
                }
                let mut written = 0;
                while written < out.len() {
                    let n =
                        libc::write(fds[1], out[written..].as_ptr().cast(), out.len() - written);
                    if n <= 0 {
                        libc::_exit(3);
                    }
                    written += n as usize;
                }
                libc::_exit(if ok { 0 } else { 1 });
            }
            libc::close(fds[1]);
            children.push((pid, fds[0]));
        }
    }
    let mut all = Vec::new();
    for (pid, fd) in children {
        use std::io::Read;
        // SAFETY: the read end is ours alone from here on.
        let mut f = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status), "child {pid} crashed");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "child {pid}: a value was not above the cell's last"
        );
        let ids: Vec<Uuid> = bytes
            .chunks_exact(16)
            .map(|c| Uuid::from_slice(c).unwrap())
            .collect();
        assert_eq!(ids.len(), PER_CHILD);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        all.extend(ids);
    }
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "no value handed out twice");
    assert_eq!(cell.last(), all.last().copied());
}

#[test]
fn a_cell_keeps_the_events_of_every_generator_using_it() {
    let cell = GeneratorCell::new();
    let tiny = GeneratorConfig {
        counter_bits: 1,
        guard_bits: 0,
        ..config("default")
    };
    let a = SharedGenerator::new(tiny.clone()).unwrap();
    let b = SharedGenerator::new(tiny).unwrap();
    for _ in 0..500 {
        a.generate_in(&cell).unwrap();
        b.generate_in(&cell).unwrap();
    }
    // Two values a millisecond: 1000 values run about 500 ms ahead, and each
    // generator's overflows land in the one cell.
    let t = cell.telemetry();
    let own = a.telemetry().overflows + b.telemetry().overflows;
    assert_eq!(t.overflows, own);
    assert!(t.overflows >= 400, "{t:?}");
    assert!(t.max_ahead_ms >= 300, "{t:?}");
    assert_eq!(
        t.max_ahead_ms,
        a.telemetry().max_ahead_ms.max(b.telemetry().max_ahead_ms)
    );
}

#[test]
fn resuming_a_cell_moves_it_above_the_checkpoint_but_never_back() {
    let cell = GeneratorCell::new();
    let g = SharedGenerator::new(config("default")).unwrap();
    let now = g.generate_in(&cell).unwrap();
    // A checkpoint in the past changes nothing.
    cell.resume_after(crate::v7::unix_ms(&now) - 60_000);
    assert_eq!(cell.last(), Some(now));
    // One ahead of the clock moves the next value above it.
    let ahead = crate::v7::unix_ms(&now) + 3_600_000;
    cell.resume_after(ahead);
    let next = g.generate_in(&cell).unwrap();
    assert!(crate::v7::unix_ms(&next) > ahead);
    assert!(cell.telemetry().ahead_ms >= 3_599_000);
}

#[test]
fn an_overflow_refused_under_the_error_policy_is_counted() {
    // A counter of one bit, the guard bit: the second value of a
    // millisecond overflows, and the Error policy refuses it.
    let tiny = GeneratorConfig {
        counter_bits: 1,
        guard_bits: 1,
        overflow: OverflowPolicy::Error,
        ..config("default")
    };
    let g = SharedGenerator::new(tiny).unwrap();
    let refused = (0..1_000_000).find_map(|_| g.generate().err());
    assert!(matches!(refused, Some(GenError::CounterOverflow { .. })));
    assert!(g.telemetry().overflows >= 1);
    assert!(g.cell_telemetry().overflows >= 1);
}

#[test]
fn batches_through_one_cell_are_increasing_and_distinct_across_threads() {
    let cell = std::sync::Arc::new(GeneratorCell::new());
    let g = std::sync::Arc::new(SharedGenerator::new(config("default")).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (cell, g) = (cell.clone(), g.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for round in 0..50 {
                    let mut batch = vec![Uuid::nil(); 700 + round];
                    g.fill_in(&cell, &mut batch).unwrap();
                    mine.extend(batch);
                    mine.push(g.generate_in(&cell).unwrap());
                }
                mine
            })
        })
        .collect();
    let all: Vec<Vec<Uuid>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for mine in &all {
        assert!(mine.windows(2).all(|w| w[0] < w[1]));
    }
    let mut every: Vec<Uuid> = all.concat();
    let n = every.len();
    every.sort();
    every.dedup();
    assert_eq!(every.len(), n);
    assert_eq!(cell.last(), every.last().copied());
}

#[test]
fn a_batch_under_the_error_policy_stops_at_the_overflow() {
    let tiny = GeneratorConfig {
        counter_bits: 1,
        guard_bits: 1,
        overflow: OverflowPolicy::Error,
        ..config("default")
    };
    let g = SharedGenerator::new(tiny).unwrap();
    let mut batch = vec![Uuid::nil(); 10];
    assert!(matches!(
        g.fill_in(&GeneratorCell::new(), &mut batch),
        Err(GenError::CounterOverflow { .. })
    ));
    assert!(g.telemetry().overflows >= 1);
}

#[test]
fn the_global_generator_is_the_default_profiles() {
    assert!(std::ptr::eq(global(), global_profile("default").unwrap()));
}

#[test]
fn batches_take_every_tail_bit_from_the_random_source() {
    // The batch kernel places the random bytes by a mask of its own: each
    // bit of each layout's tail must still come from the source (take both
    // values over a batch), and nothing else may.
    for profile in ["default", "counter42", "pg18", "random"] {
        let clock = SimClock::at_ms(T0);
        let mut g = sim(config(profile), &clock, ScriptRng::seeded(13));
        let layout = engine::Layout::new(&config(profile), &mut ScriptRng::seeded(1)).unwrap();
        let mut buf = vec![Uuid::nil(); 4000];
        g.fill(&mut buf).unwrap();
        let tail = layout.random_mask;
        let (mut ones, mut zeros) = (0u128, 0u128);
        for u in &buf {
            let payload = engine::payload_of_uuid(u.as_u128());
            ones |= payload & tail;
            zeros |= !payload & tail;
        }
        assert_eq!(
            ones,
            tail,
            "{profile}: tail bits never 1: {:x}",
            tail & !ones
        );
        assert_eq!(
            zeros,
            tail,
            "{profile}: tail bits never 0: {:x}",
            tail & !zeros
        );
        assert!(buf
            .iter()
            .all(|u| u.get_version_num() == 7 && u.get_variant() == uuid::Variant::RFC4122));
    }
}

#[test]
fn batches_count_on_by_one_within_a_tick_across_fills() {
    for profile in ["default", "counter42", "pg18"] {
        let clock = SimClock::at_ms(T0);
        let mut g = sim(config(profile), &clock, ScriptRng::seeded(9));
        let layout = engine::Layout::new(&config(profile), &mut ScriptRng::seeded(1)).unwrap();
        let read = |u: &Uuid| layout.read_payload(engine::payload_of_uuid(u.as_u128()));
        let mut all = Vec::new();
        for round in 0..4 {
            let mut buf = vec![Uuid::nil(); 3000 + round];
            g.fill(&mut buf).unwrap();
            all.extend(buf);
            all.push(g.generate().unwrap());
        }
        for w in all.windows(2) {
            let ((t0, c0), (t1, c1)) = (read(&w[0]), read(&w[1]));
            if t0 == t1 && layout.c > 0 {
                assert_eq!(c1, c0 + 1, "{profile}: {} then {}", w[0], w[1]);
            } else {
                assert!(t1 > t0, "{profile}: {} then {}", w[0], w[1]);
            }
        }
    }
}

#[test]
fn the_default_profiles_layout_is_the_constant_its_fast_path_compiles_for() {
    // The process-wide generator takes the path compiled for
    // `Layout::DEFAULT` only when its layout equals it; if the default
    // profile changes, this fails rather than the fast path going unused.
    let made = engine::Layout::new(&GeneratorConfig::default(), &mut ScriptRng::seeded(1)).unwrap();
    assert_eq!(made, engine::Layout::DEFAULT);
    for profile in ["counter42", "pg18", "random"] {
        let other = engine::Layout::new(&config(profile), &mut ScriptRng::seeded(1)).unwrap();
        assert_ne!(other, engine::Layout::DEFAULT, "{profile}");
    }
}

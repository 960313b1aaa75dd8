//! Generator speed side by side with the peers, in one run, every peer with
//! its CSPRNG: `cargo bench -p uuidforge --bench generator`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand_core::SeedableRng;
use std::hint::black_box;
use std::time::{Duration, Instant};
use uuid::Uuid;
use uuidforge::generator::{Buffered, ConfiguredClock, GeneratorConfig, OsCsprng, V7Generator};

/// LiosK's generator with the same CSPRNG as ours (ChaCha8 from the OS).
#[allow(deprecated)] // the rand 0.9 adapter is deprecated in favour of rand 0.10
fn uuid7_chacha(
) -> uuid7::V7Generator<uuid7::generator::with_rand09::Adapter<rand_chacha::ChaCha8Rng>> {
    uuid7::V7Generator::with_rand09(rand_chacha::ChaCha8Rng::from_os_rng())
}

fn one_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("v7_one_thread");
    g.throughput(Throughput::Elements(1));
    g.bench_function("uuidforge_global", |b| {
        b.iter(|| black_box(uuidforge::v7()))
    });
    g.bench_function("uuid_now_v7", |b| b.iter(|| black_box(Uuid::now_v7())));
    g.bench_function("uuid7_global", |b| b.iter(|| black_box(uuid7::uuid7())));
    let mut owned = V7Generator::new(GeneratorConfig::default()).unwrap();
    g.bench_function("uuidforge_owned", |b| {
        b.iter(|| black_box(owned.generate().unwrap()))
    });
    let system = GeneratorConfig {
        clock: uuidforge::generator::ClockMode::System,
        ..GeneratorConfig::default()
    };
    let mut owned_system = V7Generator::new(system).unwrap();
    g.bench_function("uuidforge_owned_system_clock", |b| {
        b.iter(|| black_box(owned_system.generate().unwrap()))
    });
    let mut theirs = uuid7_chacha();
    g.bench_function("uuid7_generator", |b| {
        b.iter(|| black_box(theirs.generate()))
    });
    let mut ulid_gen = ulid::Generator::new();
    g.bench_function("ulid_generator", |b| {
        b.iter(|| black_box(ulid_gen.generate().unwrap()))
    });
    g.bench_function("system_time_now", |b| {
        b.iter(|| black_box(std::time::SystemTime::now()))
    });
    g.finish();
}

/// Total time for `iters` values made by two threads at once.
fn two_threads<T>(iters: u64, make: fn() -> T) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(move || {
                for _ in 0..iters / 2 {
                    black_box(make());
                }
            });
        }
    });
    start.elapsed()
}

fn contended(c: &mut Criterion) {
    let mut g = c.benchmark_group("v7_two_threads");
    g.throughput(Throughput::Elements(1));
    g.bench_function("uuidforge_global", |b| {
        b.iter_custom(|n| two_threads(n, uuidforge::v7))
    });
    g.bench_function("uuid_now_v7", |b| {
        b.iter_custom(|n| two_threads(n, Uuid::now_v7))
    });
    g.bench_function("uuid7_global", |b| {
        b.iter_custom(|n| two_threads(n, uuid7::uuid7))
    });
    g.finish();
}

fn batch(c: &mut Criterion) {
    let mut g = c.benchmark_group("v7_fill");
    g.throughput(Throughput::Elements(1024));
    let mut owned = V7Generator::new(GeneratorConfig::default()).unwrap();
    let mut buf = vec![Uuid::nil(); 1024];
    g.bench_function("uuidforge_fill_1024", |b| {
        b.iter(|| {
            owned.fill(&mut buf).unwrap();
            black_box(&buf);
        })
    });
    // The same generator on ChaCha8 whatever the CPU has: the default's
    // cipher (AES-128-CTR where AES is in hardware) chosen by this pair.
    let config = GeneratorConfig::default();
    let mut on_chacha8 = V7Generator::with_sources(
        config.clone(),
        ConfiguredClock::new(config.clock),
        Buffered::new(OsCsprng::chacha8()),
    )
    .unwrap();
    g.bench_function("uuidforge_fill_1024_chacha8", |b| {
        b.iter(|| {
            on_chacha8.fill(&mut buf).unwrap();
            black_box(&buf);
        })
    });
    let mut theirs = uuid7_chacha();
    g.bench_function("uuid7_generator_1024", |b| {
        b.iter(|| {
            for slot in buf.iter_mut() {
                *slot = Uuid::from_bytes(*theirs.generate().as_bytes());
            }
            black_box(&buf);
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = one_thread, contended, batch
}
criterion_main!(benches);

//! Codec speed side by side with the peer crates, in one run:
//! `cargo bench -p uuidforge --bench codecs`.
//!
//! Every pair does the same work: into a stack buffer, no allocation.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use uuid::Uuid;

/// 1024 distinct values so branch predictors cannot learn one input.
fn inputs() -> Vec<Uuid> {
    let mut x = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834u128;
    (0..1024)
        .map(|_| {
            x = x
                .wrapping_mul(0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645)
                .wrapping_add(1);
            Uuid::from_u128(x)
        })
        .collect()
}

fn format_canonical(c: &mut Criterion) {
    let ids = inputs();
    let mut g = c.benchmark_group("format_canonical");
    g.throughput(Throughput::Elements(ids.len() as u64));
    g.bench_function("uuidforge", |b| {
        b.iter(|| {
            for id in &ids {
                black_box(uuidforge::fmt::canonical(black_box(id)));
            }
        })
    });
    g.bench_function("uuid", |b| {
        let mut buf = [0u8; 36];
        b.iter(|| {
            for id in &ids {
                black_box(black_box(id).hyphenated().encode_lower(&mut buf));
            }
        })
    });
    g.finish();
}

fn parse_canonical(c: &mut Criterion) {
    let texts: Vec<String> = inputs()
        .iter()
        .map(|u| u.hyphenated().to_string())
        .collect();
    let mut g = c.benchmark_group("parse_canonical");
    g.throughput(Throughput::Elements(texts.len() as u64));
    g.bench_function("uuidforge", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(uuidforge::parser::parse_canonical(black_box(t.as_bytes())).unwrap());
            }
        })
    });
    g.bench_function("uuid", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(Uuid::parse_str(black_box(t)).unwrap());
            }
        })
    });
    g.finish();
}

fn base32_encode(c: &mut Criterion) {
    let ids = inputs();
    let ulids: Vec<ulid::Ulid> = ids
        .iter()
        .map(|u| ulid::Ulid::from_bytes(*u.as_bytes()))
        .collect();
    let mut g = c.benchmark_group("base32_encode");
    g.throughput(Throughput::Elements(ids.len() as u64));
    g.bench_function("uuidforge", |b| {
        b.iter(|| {
            for id in &ids {
                black_box(uuidforge::base32::encode(black_box(id)));
            }
        })
    });
    g.bench_function("ulid", |b| {
        let mut buf = [0u8; 26];
        b.iter(|| {
            for u in &ulids {
                black_box(black_box(u).array_to_str(&mut buf));
            }
        })
    });
    g.finish();
}

fn base32_decode(c: &mut Criterion) {
    let texts: Vec<String> = inputs()
        .iter()
        .map(|u| uuidforge::base32::encode(u).to_string())
        .collect();
    let mut g = c.benchmark_group("base32_decode");
    g.throughput(Throughput::Elements(texts.len() as u64));
    g.bench_function("uuidforge", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(uuidforge::base32::decode(black_box(t.as_bytes())).unwrap());
            }
        })
    });
    g.bench_function("ulid", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(ulid::Ulid::from_string(black_box(t)).unwrap());
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = format_canonical, parse_canonical, base32_encode, base32_decode
}
criterion_main!(benches);

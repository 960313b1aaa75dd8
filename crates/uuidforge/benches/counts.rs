//! One operation `n` times, for counting instructions under valgrind's
//! callgrind (`scripts/bench.sh` runs it with `n` and with 0 and divides
//! the difference by `n`): counts do not move with other jobs on the
//! machine, as times do. A bench target without a harness, beside the
//! criterion benchmarks; `cargo bench` runs it with `--bench` and it does
//! nothing then.
//!
//!     counts OP N     OP: format | format-uuid | parse | parse-uuid |
//!                         base32-encode | base32-encode-ulid |
//!                         base32-decode | base32-decode-ulid | v7 | fill
//!     counts tier     the codecs' CPU tier (uuidforge::cpu_tier())
//!
//! The inputs are made before the loop (the baseline run counts that too):
//! 1024 distinct values, as the criterion benches use, cycled.

use std::hint::black_box;
use uuid::Uuid;

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (op, n) = match args.as_slice() {
        [_, t] if t == "tier" => {
            println!("{}", uuidforge::cpu_tier());
            return;
        }
        [_, op, n] => (op.as_str(), n.parse::<usize>().expect("N: a count")),
        // `cargo bench` runs every bench target with `--bench`: this one
        // measures nothing by time, so it has nothing to do then.
        [_, flag] if flag == "--bench" => return,
        _ => {
            eprintln!("usage: counts OP N");
            std::process::exit(2);
        }
    };
    let ids = inputs();
    let texts: Vec<[u8; 36]> = ids.iter().map(uuidforge::fmt::canonical).collect();
    let strings: Vec<String> = ids.iter().map(|u| u.to_string()).collect();
    let b32: Vec<[u8; 26]> = ids.iter().map(|u| *uuidforge::base32::encode(u)).collect();
    let b32s: Vec<String> = b32
        .iter()
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
        .collect();
    let ulids: Vec<ulid::Ulid> = ids.iter().map(|u| ulid::Ulid(u.as_u128())).collect();
    let at = |i: usize| i % 1024;
    match op {
        "format" => (0..n).for_each(|i| {
            black_box(uuidforge::fmt::canonical(black_box(&ids[at(i)])));
        }),
        "format-uuid" => (0..n).for_each(|i| {
            let mut buf = [0u8; 36];
            black_box(black_box(&ids[at(i)]).hyphenated().encode_lower(&mut buf));
            black_box(&buf);
        }),
        "parse" => (0..n).for_each(|i| {
            black_box(uuidforge::parser::parse_canonical(black_box(&texts[at(i)])).unwrap());
        }),
        "parse-uuid" => (0..n).for_each(|i| {
            black_box(Uuid::try_parse(black_box(&strings[at(i)])).unwrap());
        }),
        "base32-encode" => (0..n).for_each(|i| {
            black_box(uuidforge::base32::encode(black_box(&ids[at(i)])));
        }),
        "base32-encode-ulid" => (0..n).for_each(|i| {
            let mut buf = [0u8; 26];
            black_box(black_box(&ulids[at(i)]).array_to_str(&mut buf));
            black_box(&buf);
        }),
        "base32-decode" => (0..n).for_each(|i| {
            black_box(uuidforge::base32::decode(black_box(&b32[at(i)])).unwrap());
        }),
        "base32-decode-ulid" => (0..n).for_each(|i| {
            black_box(ulid::Ulid::from_string(black_box(&b32s[at(i)])).unwrap());
        }),
        "v7" => (0..n).for_each(|_| {
            black_box(uuidforge::v7());
        }),
        "fill" => {
            let mut g = uuidforge::generator::V7Generator::new(Default::default()).unwrap();
            let mut buf = vec![Uuid::nil(); 1024];
            for _ in 0..n / 1024 {
                g.fill(black_box(&mut buf)).unwrap();
            }
        }
        other => {
            eprintln!("unknown OP {other}");
            std::process::exit(2);
        }
    }
}

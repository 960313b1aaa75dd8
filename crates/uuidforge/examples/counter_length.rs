//! B15: choose the counter length by experiment.
//! `cargo run --release -p uuidforge --example counter_length [N]`

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let bits: Vec<u8> = vec![0, 1, 2, 4, 8, 12, 14, 16, 18, 24, 32, 42];
    println!("{n} UUIDs per row, generated at full speed with fill()");
    println!(
        "{:>8} {:>14} {:>10} {:>14} {:>11}  ordering",
        "counter", "UUIDs/s", "overflows", "max ahead ms", "lookup ns"
    );
    for r in uuidforge::generator::experiment::counter_length(n, &bits) {
        println!(
            "{:>8} {:>14.0} {:>10} {:>14} {:>11.1}  {}",
            r.counter_bits,
            r.per_second,
            r.overflows,
            r.max_ahead_ms,
            r.lookup_ns,
            if r.breaks_down {
                "kept only by running ahead of the clock"
            } else {
                "kept at the real time"
            }
        );
    }
}

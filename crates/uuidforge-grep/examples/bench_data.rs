//! Writes the benchmark inputs of `scripts/bench-grep.sh`:
//! `orders.ndjson` (about SIZE_MB of orders with v7 ids), `ids.txt` and
//! `ids.json` (VALUES ids, half of them item ids of the orders, half
//! absent) and `log.txt` (SIZE_MB of log lines, a quarter with a UUID).
//!
//! `cargo run --release -p uuidforge-grep --example bench_data -- DIR SIZE_MB VALUES`

use std::io::{BufWriter, Write};

/// Deterministic data, not keys: a xorshift is enough and keeps runs equal.
struct Bits(u64);

impl Bits {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn v7(&mut self, ms: u64) -> uuid::Uuid {
        let (a, b) = (self.next(), self.next());
        uuidforge::v7::from_unix_ms(ms, (a & 0xfff) as u16, b & ((1 << 62) - 1)).expect("in range")
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (dir, size_mb, values): (&str, u64, usize) = (
        &args[1],
        args[2].parse().expect("SIZE_MB"),
        args[3].parse().expect("VALUES"),
    );
    let mut bits = Bits(0x9E37_79B9_7F4A_7C15);
    let mut ids: Vec<uuid::Uuid> = Vec::with_capacity(values);
    let mut orders = BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(format!("{dir}/orders.ndjson"))?,
    );
    let (mut written, mut ms, mut n) = (0u64, 1_700_000_000_000u64, 0u64);
    let mut item_ids = 0u64;
    while written < size_mb * 1_000_000 {
        n += 1;
        ms += bits.next() % 50;
        let order = bits.v7(ms);
        let customer = bits.v7(ms - 86_400_000);
        let mut items = String::new();
        for i in 0..1 + bits.next() % 4 {
            let item = bits.v7(ms);
            item_ids += 1;
            // Keep every 8th item id (up to half the values) to search for.
            if item_ids.is_multiple_of(8) && ids.len() < values / 2 {
                ids.push(item);
            }
            if i > 0 {
                items.push(',');
            }
            items.push_str(&format!(
                r#"{{"id":"{item}","sku":"SKU-{:05}","qty":{},"price":{}.{:02}}}"#,
                bits.next() % 100_000,
                1 + bits.next() % 5,
                bits.next() % 500,
                bits.next() % 100
            ));
        }
        let line = format!(
            r#"{{"order":{{"id":"{order}","number":{n},"customer":{{"id":"{customer}","name":"Customer {}","email":"c{}@example.com"}},"items":[{items}],"note":"deliver between 9 and 17, ring twice","links":{{"self":"https://shop.example/orders/{order}"}}}},"ts":{ms}}}"#,
            bits.next() % 100_000,
            bits.next() % 100_000
        );
        orders.write_all(line.as_bytes())?;
        orders.write_all(b"\n")?;
        written += line.len() as u64 + 1;
    }
    orders.flush()?;
    while ids.len() < values {
        let later = ms + 1 + bits.next() % 1_000_000;
        ids.push(bits.v7(later));
    }
    // Searched values in no particular order.
    for i in (1..ids.len()).rev() {
        let j = (bits.next() % (i as u64 + 1)) as usize;
        ids.swap(i, j);
    }
    let mut text = BufWriter::new(std::fs::File::create(format!("{dir}/ids.txt"))?);
    let mut json = BufWriter::new(std::fs::File::create(format!("{dir}/ids.json"))?);
    json.write_all(b"[")?;
    for (i, id) in ids.iter().enumerate() {
        writeln!(text, "{id}")?;
        write!(json, "{}\"{id}\"", if i > 0 { "," } else { "" })?;
    }
    json.write_all(b"]\n")?;
    text.flush()?;
    json.flush()?;
    let words = [
        "GET", "POST", "user", "order", "item", "status", "ok", "failed", "retry", "latency",
        "from", "to", "the", "cache", "miss", "hit", "request", "response",
    ];
    let mut log =
        BufWriter::with_capacity(1 << 20, std::fs::File::create(format!("{dir}/log.txt"))?);
    let mut written = 0u64;
    let mut i = 0u64;
    while written < size_mb * 1_000_000 {
        i += 1;
        let mut line = format!("2026-11-24T05:00:{:02}Z INFO", i % 60);
        for _ in 0..5 + bits.next() % 10 {
            line.push(' ');
            line.push_str(words[(bits.next() % words.len() as u64) as usize]);
        }
        if i.is_multiple_of(4) {
            line.push_str(&format!(" id={}", bits.v7(1_700_000_000_000 + i)));
        }
        line.push_str(&format!(" took {}ms\n", i % 997));
        log.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    log.flush()?;
    eprintln!("{n} orders, {item_ids} items, {} values", ids.len());
    Ok(())
}

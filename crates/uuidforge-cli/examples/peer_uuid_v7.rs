//! The fastest plain alternative for the CLI speed comparison: the `uuid`
//! crate's `Uuid::now_v7()` in a minimal loop into a large buffered writer.
//! `cargo run --release --example peer_uuid_v7 -- 10000000 > /dev/null`

use std::io::Write;

fn main() -> std::io::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut buf = uuid::Uuid::encode_buffer();
    for _ in 0..n {
        let s = uuid::Uuid::now_v7().hyphenated().encode_lower(&mut buf);
        out.write_all(s.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

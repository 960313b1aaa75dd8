//! The cost of one search by format, for a small document (one record of
//! about 45 bytes: what `grep` sees per row of a table or per small file,
//! and what a fuzzer feeds) beside a big one (about 1 MB): nanoseconds per
//! search and megabytes per second, in one run. The small CSV and TSV
//! searches are compared with the small text search (the same bytes): a
//! per-search setup cost shows as a ratio far above 1.
//!
//!     search_sizes [ROUNDS]    (scripts/bench-grep.sh runs it)

use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::Instant;
use uuidforge_grep::{search, Event, Format, Matcher};

const ID: &str = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";

/// A document of `format` holding `rows` records of one UUID each.
fn document(format: Format, rows: usize) -> Vec<u8> {
    let mut out = String::new();
    match format {
        Format::Csv => out.push_str("id,customer,total\n"),
        Format::Tsv => out.push_str("id\tcustomer\ttotal\n"),
        Format::Json => out.push('['),
        Format::Xml | Format::Html => out.push_str("<orders>"),
        _ => {}
    }
    for i in 0..rows {
        match format {
            Format::Csv => out.push_str(&format!("{i},{ID},12.50\n")),
            Format::Tsv => out.push_str(&format!("{i}\t{ID}\t12.50\n")),
            Format::Json => {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&format!("{{\"n\":{i},\"customer\":\"{ID}\"}}"));
            }
            Format::Ndjson => out.push_str(&format!("{{\"n\":{i},\"customer\":\"{ID}\"}}\n")),
            Format::Xml | Format::Html => out.push_str(&format!(
                "<order n=\"{i}\"><customer>{ID}</customer></order>"
            )),
            _ => out.push_str(&format!("order {i} for {ID}\n")),
        }
    }
    match format {
        Format::Json => out.push(']'),
        Format::Xml | Format::Html => out.push_str("</orders>"),
        _ => {}
    }
    out.into_bytes()
}

/// Nanoseconds per search of `doc`, the best of `rounds` rounds; the hits
/// found in one search.
fn time(doc: &[u8], format: Format, rounds: usize, searches: usize) -> (f64, usize) {
    let matcher = Matcher::default();
    let mut hits = 0;
    search(doc, format, &matcher, false, &mut |e| {
        if let Event::Record(r) = e {
            hits += r.hits.len();
        }
        ControlFlow::Continue(())
    });
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let started = Instant::now();
        for _ in 0..searches {
            search(black_box(doc), format, &matcher, false, &mut |e| {
                black_box(e);
                ControlFlow::Continue(())
            });
        }
        best = best.min(started.elapsed().as_nanos() as f64 / searches as f64);
    }
    (best, hits)
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let formats = [
        ("text", Format::Text),
        ("csv", Format::Csv),
        ("tsv", Format::Tsv),
        ("json", Format::Json),
        ("ndjson", Format::Ndjson),
        ("xml", Format::Xml),
        ("html", Format::Html),
    ];
    println!("| format | small: bytes | ns per search | big: bytes | MB/s |");
    println!("|---|---:|---:|---:|---:|");
    let mut small = Vec::new();
    for (name, format) in formats {
        let little = document(format, 1);
        let (ns, hits) = time(&little, format, rounds, 20_000);
        assert_eq!(hits, 1, "{name}: one hit in a small document");
        let big = document(format, 18_000);
        let (big_ns, big_hits) = time(&big, format, rounds, 3);
        assert_eq!(big_hits, 18_000, "{name}: every hit in a big document");
        let mbs = big.len() as f64 / big_ns * 1000.0;
        println!(
            "| {name} | {} | {ns:.0} | {} | {mbs:.0} |",
            little.len(),
            big.len()
        );
        small.push((name, ns));
    }
    let text = small[0].1;
    for (name, ns) in &small[1..3] {
        println!("small {name} search / small text search: {:.2}", ns / text);
    }
}

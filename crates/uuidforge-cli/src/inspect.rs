//! `uuidforge inspect`.

use crate::input::{for_each_value, stdout, Outcome};
use std::io::{self, Write};
use uuidforge::inspect::{value_json, Inspector, Report};
use uuidforge::layout::{read_v7, V7Layout};
use uuidforge::parser::Value;
use uuidforge::uuid192::SegmentFields;

/// Arguments of `inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// One JSON object per value (NDJSON) instead of text.
    #[arg(long)]
    json: bool,
    /// Read v7 values in this generator layout instead of guessing
    /// (random, fraction12, micros, go256ns, counter42, counter18, draft01).
    #[arg(long, value_parser = parse_layout)]
    layout: Option<V7Layout>,
    /// Values; without any, one per line from standard input.
    values: Vec<String>,
}

fn parse_layout(name: &str) -> Result<V7Layout, String> {
    V7Layout::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = V7Layout::ALL.iter().map(|l| l.name()).collect();
        format!(
            "unknown layout {name:?}, expected one of {}",
            names.join(", ")
        )
    })
}

pub fn run(args: Args) -> io::Result<Outcome> {
    let mut out = stdout();
    let mut inspector = Inspector::default();
    let outcome = for_each_value(&args.values, |_origin, text, value| {
        let report = inspector.next(&value.uuid());
        let input = String::from_utf8_lossy(text);
        if args.json {
            serde_json::to_writer(&mut out, &value_json(&input, value, &report, args.layout))?;
            out.write_all(b"\n")?;
        } else {
            write_text(&mut out, &input, value, &report, args.layout)?;
        }
        Ok(true)
    })?;
    out.flush()?;
    Ok(outcome)
}

fn write_text(
    out: &mut impl Write,
    input: &str,
    value: Value,
    r: &Report,
    layout: Option<V7Layout>,
) -> io::Result<()> {
    writeln!(out, "{}", uuidforge::fmt::to_canonical_string(&r.uuid))?;
    let row =
        |out: &mut dyn Write, k: &str, v: &dyn std::fmt::Display| writeln!(out, "  {k:<16} {v}");
    row(out, "input", &format!("{input} ({})", value.form_name()))?;
    if let Some(s) = r.special {
        row(out, "special", &s)?;
    }
    row(
        out,
        "version",
        &format!("{} ({})", r.version, r.version_name),
    )?;
    row(
        out,
        "variant",
        &serde_json::to_value(r.variant)
            .expect("enum")
            .as_str()
            .unwrap_or(""),
    )?;
    if let Some(t) = &r.timestamp {
        row(
            out,
            "timestamp",
            &format!("{t} ({} precision)", t.precision.name()),
        )?;
    }
    for f in &r.fields {
        row(out, f.name, &f.value)?;
    }
    if let Some(g) = &r.layout_guess {
        let how_sure = if g.confidence >= 0.9 {
            "high"
        } else if g.confidence >= 0.6 {
            "medium"
        } else {
            "low"
        };
        row(
            out,
            "layout",
            &format!(
                "{} — {} (confidence {:.0}%, {how_sure}; from {} value(s), {} same-ms pair(s))",
                g.layout.name(),
                g.layout.written_by(),
                g.confidence * 100.0,
                g.values,
                g.same_ms_pairs
            ),
        )?;
        let others: Vec<String> = g
            .ranking
            .iter()
            .skip(1)
            .take(2)
            .map(|(l, p)| format!("{} {:.0}%", l.name(), p * 100.0))
            .collect();
        row(out, "  next", &others.join(", "))?;
    }
    let reading = match layout.filter(|_| r.version == 7) {
        Some(l) => Some((l, read_v7(&r.uuid, l))),
        None => r
            .layout_reading
            .as_ref()
            .map(|lr| (lr.layout, read_v7(&r.uuid, lr.layout))),
    };
    if let Some((l, reading)) = reading {
        row(out, &format!("as {}", l.name()), &reading.timestamp)?;
        if let Some(c) = reading.counter {
            row(out, "  counter", &format!("{c} (0x{c:x})"))?;
        }
    }
    if let Some(d) = &r.draft01 {
        row(
            out,
            "as draft-01",
            &format!("{} | {} | {}", d.ms, d.us, d.ns),
        )?;
    }
    if let Some(t) = &r.v8_b1_timestamp {
        row(out, "as RFC B.1", t)?;
    }
    for d in &r.v8_draft {
        row(
            out,
            &format!(
                "as draft {}",
                serde_json::to_value(d.layout)
                    .expect("enum")
                    .as_str()
                    .unwrap_or("")
            ),
            &format!("timestamp {} seq {} node {}", d.timestamp, d.seq, d.node),
        )?;
    }
    if let Value::Uuid192(k) = value {
        row(out, "uuid192", &k)?;
        row(out, "  base32", &k.to_base32())?;
        row(
            out,
            "  segment",
            &format!(
                "{:016x} (checksum {:04x} valid)",
                k.segment().0,
                k.segment().checksum()
            ),
        )?;
        match k.fields() {
            Ok(SegmentFields::Raw { payload }) => row(out, "  raw", &format!("payload 0x{payload:011x}"))?,
            Ok(SegmentFields::General(g)) => row(
                out,
                "  general",
                &format!(
                    "module {} table {} source {} operation {:?} message {} shard {} archived {} deleted {}",
                    g.module, g.table, g.source, g.operation, g.message, g.shard, g.archived, g.deleted
                ),
            )?,
            Err(e) => row(out, "  fields", &e)?,
        }
    }
    Ok(())
}

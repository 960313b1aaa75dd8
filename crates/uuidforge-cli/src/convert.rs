//! `uuidforge convert --to FORMAT`.

use crate::input::{for_each_value, report, stdout, Outcome};
use std::io::{self, Write};
use uuidforge::convert::{convert, ConvertError, Target};
use uuidforge::parser::Value;

fn parse_target(name: &str) -> Result<Target, String> {
    Target::from_name(name).ok_or_else(|| format!("expected one of {}", Target::names().join(", ")))
}

/// Arguments of `convert`.
#[derive(clap::Args)]
pub struct Args {
    /// Output form: canonical, simple, braced, urn, base32, base32-check,
    /// binary (16 raw bytes), uuid192, uuid192-base32, sqlserver,
    /// dotnet-bytes, mysql-swap.
    #[arg(long, value_parser = parse_target)]
    to: Target,
    /// Upper-case hex digits.
    #[arg(long)]
    upper: bool,
    /// For UUID_192 input, convert its left 128 bits (the segment is dropped).
    #[arg(long)]
    uuid_part: bool,
    /// Values; without any, one per line from standard input.
    values: Vec<String>,
}

pub fn run(args: Args) -> io::Result<Outcome> {
    let mut out = stdout();
    let mut buf = Vec::with_capacity(64);
    let outcome = for_each_value(&args.values, |origin, _text, value| {
        buf.clear();
        if let Err(message) = render(&args, value, &mut buf) {
            report(origin, message);
            return Ok(false);
        }
        if args.to.is_text() {
            buf.push(b'\n');
        }
        out.write_all(&buf)?;
        Ok(true)
    })?;
    out.flush()?;
    Ok(outcome)
}

fn render(args: &Args, value: Value, buf: &mut Vec<u8>) -> Result<(), String> {
    convert(value, args.to, args.uuid_part, args.upper, buf).map_err(|e| match e {
        ConvertError::WouldLoseSegment(t) => format!(
            "a UUID_192 would lose its segment as {}: pass --uuid-part to convert its UUID, or use --to uuid192 / uuid192-base32",
            t.name()
        ),
        other => other.to_string(),
    })
}

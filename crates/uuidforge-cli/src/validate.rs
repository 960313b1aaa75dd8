//! `uuidforge validate`.

use crate::args::{now_ms, parse_duration, parse_time};
use crate::input::{report, Origin};
use std::io::{self, Write};
use uuidforge::plausible::{check, Rules};

/// Arguments of `validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Require this version.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    version: Option<u8>,
    /// Reject timestamps further than this in the future (e.g. 5s, 1m).
    #[arg(long, value_parser = parse_duration)]
    max_skew: Option<i64>,
    /// Reject timestamps before this time (RFC 3339, Unix ms or `now`).
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    not_before: Option<i64>,
    /// Values; without any, one per line from standard input.
    values: Vec<String>,
}

/// Exit status 0 when every value is valid, 1 otherwise; the reason for each
/// invalid value goes to standard error with its line or argument.
pub fn run(args: Args) -> io::Result<bool> {
    let rules = Rules {
        version: args.version,
        max_skew_ms: args.max_skew.map(|s| s.max(0) as u64),
        not_before_ms: args.not_before,
    };
    let now = now_ms();
    let mut all_valid = true;
    let mut each = |origin: Origin, text: &[u8]| {
        let result = uuidforge::parser::parse_value(text)
            .map_err(|e| e.to_string())
            .and_then(|v| check(&v.uuid(), &rules, now).map_err(|e| e.to_string()));
        if let Err(reason) = result {
            all_valid = false;
            report(
                origin,
                format!("{}: {reason}", String::from_utf8_lossy(text)),
            );
        }
    };
    if args.values.is_empty() {
        let stdin = io::stdin();
        let mut n = 0u64;
        for line in io::BufRead::split(stdin.lock(), b'\n') {
            n += 1;
            let line = line?;
            let line = if n == 1 {
                uuidforge::parser::strip_bom(&line)
            } else {
                &line[..]
            };
            let text = line.trim_ascii();
            if !text.is_empty() {
                each(Origin::Line(n), text);
            }
        }
    } else {
        for (i, v) in args.values.iter().enumerate() {
            each(Origin::Argument(i + 1), v.trim().as_bytes());
        }
    }
    io::stdout().flush()?;
    Ok(all_valid)
}

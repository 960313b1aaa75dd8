//! Key files and `uuidforge hide|reveal`: a key file is exactly 32 bytes,
//! raw binary (not hex, no newline), made by `uuidforge hide --new-key F`
//! with mode 0600; the same file serves `hide`, `reveal` and
//! `serve --hide-key-file`. Any other length is refused: a file of another
//! kind given by mistake would otherwise become a key.

use crate::input::{for_each_value, report, stdout, Outcome};
use crate::keyfile::Size;
use crate::UsageError;
use std::io::Write;
use std::path::{Path, PathBuf};
use uuidforge::generator::{TimestampHider, HIDE_KEY_BYTES};
use uuidforge::parser::Value;

/// Reads a key file of `hide`, `reveal` and `serve --hide-key-file`:
/// exactly [`HIDE_KEY_BYTES`] bytes ([`crate::keyfile`]).
pub fn read_key_file(option: &str, path: &Path) -> Result<TimestampHider, String> {
    let key = crate::keyfile::read(option, path, Size::Exactly(HIDE_KEY_BYTES))
        .map_err(|e| e.to_string())?;
    TimestampHider::from_key_file(&key.bytes).map_err(|e| {
        format!(
            "invalid value '{}' for '{option}': the key file holds {}, expected {}",
            path.display(),
            e.value,
            e.expected
        )
    })
}

/// Arguments of `hide` and `reveal`.
#[derive(clap::Args)]
pub struct Args {
    /// The key file: exactly 32 raw bytes (binary, no newline), as
    /// --new-key writes it; any other length is refused.
    #[arg(long, required_unless_present = "new_key")]
    key_file: Option<PathBuf>,
    /// Create a new key file (mode 0600) and exit (hide only).
    #[arg(long, conflicts_with = "key_file")]
    new_key: Option<PathBuf>,
    /// reveal: print what the key gives even when it is not a plausible
    /// UUIDv7 (a wrong key gives a random-looking time; without --force
    /// such a value is refused and the exit status is 1).
    #[arg(long)]
    force: bool,
    /// Values (any UUID form); else one per line on standard input.
    values: Vec<String>,
}

/// What a revealed value must look like to be printed without --force:
/// version 7 and RFC 9562's variant (always, by construction), and a time
/// from 2000-01-01 to one day after now. A wrong key lands in that window
/// for about 3 in 1000 values (26 years of the 8,900 a 48-bit millisecond
/// time spans).
const REVEALED: uuidforge::plausible::Rules = uuidforge::plausible::Rules {
    version: Some(7),
    max_skew_ms: Some(86_400_000),
    not_before_ms: Some(946_684_800_000),
};

/// Which way.
#[derive(Clone, Copy)]
pub enum Direction {
    /// UUIDv7 → v4-shaped outside form.
    Hide,
    /// Back.
    Reveal,
}

pub fn run(direction: Direction, args: Args) -> Result<Outcome, UsageError> {
    if let Some(path) = &args.new_key {
        if matches!(direction, Direction::Reveal) {
            return Err(UsageError::plain(
                "--new-key belongs to `uuidforge hide`: revealing needs the existing key",
            ));
        }
        if !args.values.is_empty() {
            return Err(UsageError::plain(
                "--new-key only creates a key: give the values in a second call with --key-file",
            ));
        }
        crate::keyfile::create("--new-key", path).map_err(|e| UsageError::plain(e.to_string()))?;
        eprintln!(
            "uuidforge: wrote a new {HIDE_KEY_BYTES}-byte key to {} (mode 0600)",
            path.display()
        );
        return Ok(Outcome::default());
    }
    let path = args
        .key_file
        .as_deref()
        .expect("clap requires one of the two");
    let hider = read_key_file("--key-file", path).map_err(UsageError::plain)?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut implausible = 0u64;
    let mut out = stdout();
    let outcome = for_each_value(&args.values, |origin, _, value| {
        let Value::Uuid(u, form) = value else {
            report(origin, "a UUID_192 cannot be hidden: give its 128-bit UUID");
            return Ok(false);
        };
        let result = match direction {
            Direction::Hide => hider.hide(&u),
            Direction::Reveal => hider.reveal(&u),
        };
        match result {
            Ok(v) if matches!(direction, Direction::Reveal) && !args.force => {
                if let Err(why) = uuidforge::plausible::check(&v, &REVEALED, now_ms) {
                    report(
                        origin,
                        format!("revealed {v} is not a plausible UUIDv7 ({why}): a wrong key? (--force prints it)"),
                    );
                    implausible += 1;
                    return Ok(true);
                }
                let mut line = Vec::with_capacity(48);
                form.write(&v, &mut line);
                line.push(b'\n');
                out.write_all(&line)?;
                Ok(true)
            }
            Ok(v) => {
                // Written in the form it came in.
                let mut line = Vec::with_capacity(48);
                form.write(&v, &mut line);
                line.push(b'\n');
                out.write_all(&line)?;
                Ok(true)
            }
            Err(e) => {
                report(origin, e);
                Ok(false)
            }
        }
    })?;
    out.flush()?;
    Ok(Outcome {
        implausible,
        ..outcome
    })
}

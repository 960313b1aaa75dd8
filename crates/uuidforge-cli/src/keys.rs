//! Key files and `uuidforge hide|reveal` (E10): a key file holds 32 random
//! bytes, made by `uuidforge hide --new-key F` with mode 0600; the same file
//! serves `hide`, `reveal` and `serve --hide-key-file`.

use crate::input::{for_each_value, report, stdout, Outcome};
use crate::UsageError;
use std::io::Write;
use std::path::{Path, PathBuf};
use uuidforge::generator::{RandSource, TimestampHider, HIDE_KEY_BYTES};
use uuidforge::parser::Value;

/// Reads a key file: at least [`HIDE_KEY_BYTES`] bytes, else an error that
/// names the file and what it holds. Warns when others may read it.
pub fn read_key_file(option: &str, path: &Path) -> Result<TimestampHider, String> {
    let key = std::fs::read(path).map_err(|e| {
        format!(
            "invalid value '{}' for '{option}': cannot read the key file: {e}",
            path.display()
        )
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.permissions().mode() & 0o077 != 0 {
                eprintln!(
                    "uuidforge: warning: key file {} is readable by others (mode {:o}); chmod 600 it",
                    path.display(),
                    meta.permissions().mode() & 0o777
                );
            }
        }
    }
    TimestampHider::with_key(&key).map_err(|e| {
        format!(
            "invalid value '{}' for '{option}': the key file holds {}, expected {} (make one with `uuidforge hide --new-key FILE`)",
            path.display(),
            e.value,
            e.expected
        )
    })
}

/// Creates a new key file: 32 bytes from the CSPRNG, mode 0600, never over
/// an existing file (losing a key loses every hidden value's way back).
pub fn new_key_file(path: &Path) -> Result<(), String> {
    let mut key = [0u8; HIDE_KEY_BYTES];
    uuidforge::generator::OsChaCha::new().fill(&mut key);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(path).map_err(|e| {
        format!(
            "invalid value '{}' for '--new-key': cannot create the key file: {e}{}",
            path.display(),
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                " (an existing key is never overwritten)"
            } else {
                ""
            }
        )
    })?;
    f.write_all(&key)
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("writing the key file {}: {e}", path.display()))
}

/// Arguments of `hide` and `reveal`.
#[derive(clap::Args)]
pub struct Args {
    /// The key file (32 random bytes; see --new-key).
    #[arg(long, required_unless_present = "new_key")]
    key_file: Option<PathBuf>,
    /// Create a new key file (mode 0600) and exit (hide only).
    #[arg(long, conflicts_with = "key_file")]
    new_key: Option<PathBuf>,
    /// Values (any UUID form); else one per line on standard input.
    values: Vec<String>,
}

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
        new_key_file(path).map_err(UsageError::plain)?;
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
    Ok(outcome)
}

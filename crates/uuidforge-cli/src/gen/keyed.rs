//! `gen --key` and `gen --key-from-stdin`: the deterministic UUIDv7 of a
//! time and a key (E8), the same value as SQL `uuidv7_from(at, key)` (or
//! `uuidv7_from(at, key, secret)` with `--secret-file`) and the HTTP API's
//! `at` + `key`.

use super::{write_one, Args, Output};
use crate::args::parse_time;
use crate::input::{for_each_stdin_line, stdout};
use crate::keyfile::Size;
use crate::UsageError;
use std::io::{self, Write};
use uuid::Uuid;
use uuidforge::batch::keyed_v7;

/// The shortest secret, as SQL's `uuidv7_from(at, key, secret)` insists.
const MIN_SECRET: usize = 16;

pub fn run(args: &Args, output: &Output) -> Result<(), UsageError> {
    if args.version != 7 {
        return Err(UsageError::plain(format!(
            "--key makes UUIDv7: drop --version {}",
            args.version
        )));
    }
    if args.count != 1 || args.shift.is_some() || args.state.is_some() || args.profile.is_some() {
        return Err(UsageError::plain(
            "--key makes the one UUID of (at, key): --count, --shift, --state and --profile do not apply",
        ));
    }
    let secret = match &args.secret_file {
        None => None,
        Some(path) => Some(
            crate::keyfile::read("--secret-file", path, Size::AtLeast(MIN_SECRET))
                .map_err(|e| UsageError::plain(e.to_string()))?
                .bytes,
        ),
    };
    let make = |at: Option<i64>, key: &[u8]| -> Result<Uuid, String> {
        match &secret {
            None => keyed_v7(at, key).map_err(|e| e.to_string()),
            Some(s) => {
                let ms = keyed_v7(at, b"").map_err(|e| e.to_string())?;
                uuidforge::generator::v7_from(uuidforge::v7::unix_ms(&ms), key, s)
                    .map_err(|e| e.to_string())
            }
        }
    };
    let mut out = stdout();
    let mut text = Vec::with_capacity(64);
    let mut emit = |u: Uuid, out: &mut dyn Write| -> io::Result<()> {
        text.clear();
        write_one(args, output, &u, &mut text);
        out.write_all(&text)
    };
    if !args.key_from_stdin {
        for key in &args.key {
            let u = make(args.at, key.as_bytes())
                .map_err(|e| UsageError::plain(format!("--key '{key}': {e}")))?;
            emit(u, &mut out)?;
        }
        return out.flush().map_err(UsageError::Io);
    }
    for_each_stdin_line(|n, body| -> Result<(), UsageError> {
        let (at, key) = match args.at {
            Some(at) => (Some(at), body),
            None => {
                let Some(tab) = body.iter().position(|&b| b == b'\t') else {
                    return Err(UsageError::plain(format!(
                        "line {n}: expected TIME<TAB>KEY (or give --at and one KEY per line)"
                    )));
                };
                let time = std::str::from_utf8(&body[..tab]).unwrap_or("(not UTF-8)");
                let at = parse_time(time.trim()).map_err(|e| {
                    UsageError::plain(format!("line {n}: invalid time '{time}': {e}"))
                })?;
                (Some(at), &body[tab + 1..])
            }
        };
        let u = make(at, key).map_err(|e| UsageError::plain(format!("line {n}: {e}")))?;
        emit(u, &mut out)?;
        Ok(())
    })
    .inspect_err(|_| {
        // What was made before the bad line still reaches the reader.
        let _ = out.flush();
    })?;
    out.flush().map_err(UsageError::Io)
}

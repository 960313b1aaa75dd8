//! Values from arguments or from standard input, one per line, with errors
//! reported per value while the others are still processed.

use std::io::{self, BufRead, Write};
use uuidforge::parser::{parse_value, Value};

/// How a run over many values ended.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    /// Values that could not be read.
    pub bad: u64,
    /// Values read but refused as results (`reveal` without `--force`).
    pub implausible: u64,
}

impl Outcome {
    /// Exit status 2 when any input was bad (the others were processed),
    /// else 1 when a result was refused.
    pub fn exit_code(self) -> std::process::ExitCode {
        if self.bad > 0 {
            std::process::ExitCode::from(2)
        } else if self.implausible > 0 {
            std::process::ExitCode::from(1)
        } else {
            std::process::ExitCode::SUCCESS
        }
    }
}

/// Where a value came from, for error messages.
#[derive(Debug, Clone, Copy)]
pub enum Origin {
    /// The n-th command-line value (1-based).
    Argument(usize),
    /// Line n of standard input (1-based).
    Line(u64),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Argument(n) => write!(f, "argument {n}"),
            Origin::Line(n) => write!(f, "line {n}"),
        }
    }
}

/// Calls `each` for every value that parses (any UUID form or a UUID_192):
/// the arguments if there are any, else each line of standard input
/// (surrounding white space trimmed, blank lines skipped). Values that do not
/// parse are reported and counted; `each` returns `Ok(false)` for a value it
/// rejected and reported itself.
pub fn for_each_value(
    args: &[String],
    mut each: impl FnMut(Origin, &[u8], Value) -> io::Result<bool>,
) -> io::Result<Outcome> {
    let mut each = |origin: Origin, text: &[u8]| match parse_value(text) {
        Ok(value) => each(origin, text, value),
        Err(e) => {
            report(origin, e);
            Ok(false)
        }
    };
    let mut outcome = Outcome::default();
    if !args.is_empty() {
        for (i, a) in args.iter().enumerate() {
            if !each(Origin::Argument(i + 1), a.trim().as_bytes())? {
                outcome.bad += 1;
            }
        }
        return Ok(outcome);
    }
    for_each_stdin_line(|n, line| -> io::Result<()> {
        let value = line.trim_ascii();
        if !value.is_empty() && !each(Origin::Line(n), value)? {
            outcome.bad += 1;
        }
        Ok(())
    })?;
    Ok(outcome)
}

/// Calls `each` with the number (1-based) and bytes of every line of
/// standard input, line end (`\n` or `\r\n`) removed; stops at its first
/// error.
pub fn for_each_stdin_line<E: From<io::Error>>(
    mut each: impl FnMut(u64, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let stdin = io::stdin();
    let mut reader = io::BufReader::with_capacity(1 << 20, stdin.lock());
    let mut line = Vec::with_capacity(128);
    let mut n = 0u64;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        n += 1;
        let line = if n == 1 {
            uuidforge::parser::strip_bom(&line)
        } else {
            &line[..]
        };
        let body = line
            .strip_suffix(b"\n")
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .unwrap_or(line);
        each(n, body)?;
    }
}

/// Reports a bad value on standard error.
pub fn report(origin: Origin, message: impl std::fmt::Display) {
    let stderr = io::stderr();
    let mut e = stderr.lock();
    let _ = writeln!(
        e,
        "uuidforge: {}",
        crate::term::message(&format!("{origin}: {message}"))
    );
}

/// A large buffered standard output.
pub fn stdout() -> io::BufWriter<crate::term::Safe<io::StdoutLock<'static>>> {
    io::BufWriter::with_capacity(1 << 20, crate::term::stdout())
}

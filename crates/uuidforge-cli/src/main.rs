//! `uuidforge`: the command-line face of the uuidforge library.
//!
//! Thin by design: parsing arguments, reading lines, printing. Everything a
//! value means is computed by the library.

mod convert;
mod input;
mod inspect;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// UUIDv7 toolkit: inspect and convert UUIDs in every RFC 9562 and draft layout.
#[derive(Parser)]
#[command(name = "uuidforge", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode values: version, variant, timestamp at its encoded precision,
    /// fields, likely generator of a v7, draft-01 / v8 / UUID_192 readings.
    Inspect(inspect::Args),
    /// Rewrite values in another form (one per line).
    Convert(convert::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(args),
        Command::Convert(args) => convert::run(args),
    };
    match result {
        Ok(outcome) => outcome.exit_code(),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("uuidforge: {e}");
            ExitCode::from(1)
        }
    }
}

//! `uuidforge`: the command-line face of the uuidforge library.
//!
//! Thin by design: parsing arguments, reading lines, printing. Everything a
//! value means is computed by the library.

mod args;
mod bounds;
mod convert;
mod db;
mod gen;
mod grep;
mod input;
mod inspect;
mod keys;
mod lab;
mod model;
mod profile;
mod serve;
mod settings;
mod shard;
mod validate;

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// UUIDv7 toolkit: generate, inspect, convert and validate UUIDs in every
/// RFC 9562 and draft layout.
#[derive(Parser)]
#[command(name = "uuidforge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate UUIDs (v7 by default).
    Gen(gen::Args),
    /// Decode values: version, variant, timestamp at its encoded precision,
    /// fields, likely generator of a v7, draft-01 / v8 / UUID_192 readings.
    Inspect(inspect::Args),
    /// Rewrite values in another form (one per line).
    Convert(convert::Args),
    /// Check values: exit 0 if all are valid, 1 otherwise, with a reason per
    /// bad value on standard error.
    Validate(validate::Args),
    /// Half-open UUIDv7 bounds of a time range and an SQL predicate.
    Bounds(bounds::BoundsArgs),
    /// Partition keys (left bits of a UUIDv7) and their CREATE TABLE
    /// statements for a time range.
    Partition(bounds::PartitionArgs),
    /// Hide the creation time of UUIDv7 values behind a key (E10): each
    /// becomes a v4-shaped value that `reveal` maps back. `--new-key F`
    /// makes a key file.
    Hide(keys::Args),
    /// The UUIDv7 behind values made by `hide` with the same key file.
    Reveal(keys::Args),
    /// A UUIDv8 layout for sharded systems (E11): bit diagram and collision
    /// odds from node bits, rate and node count; `--out` writes the file
    /// `gen --version 8 --shard-layout` reads.
    ShardLayout(shard::Args),
    /// Generator profiles.
    #[command(subcommand)]
    Profile(profile::Command),
    /// Find UUIDs in files, standard input or database rows: JSON, NDJSON,
    /// XML, HTML, CSV/TSV and text; by value, version or time; at a JSON
    /// path, tag, attribute, URL or column (D12). Exit 0 found, 1 none, 2
    /// error.
    Grep(grep::Args),
    /// PostgreSQL DDL with UUIDv7 keys from a model (Anchor Modeler XML or
    /// YAML): Anchor 6NF, bitemporal or Data Vault (D9).
    Model(model::Args),
    /// Experiments on a real database: `lab keys` measures key kinds,
    /// counter lengths and generator placement (B15, C4).
    #[command(subcommand)]
    Lab(lab::Command),
    /// Serve the HTTP API and the web page (batch generator, UUID chips).
    Serve(serve::Args),
    /// A live PostgreSQL database through its UUIDs (read-only): UUID
    /// columns and their indexes, find a UUID anywhere.
    Db(db::Args),
    /// Print shell completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
}

/// A failure of the command as a whole: bad input (exit 2, nothing more on
/// standard output) or an I/O error.
pub enum UsageError {
    /// A message for standard error.
    Plain(String),
    /// Writing or reading failed.
    Io(std::io::Error),
}

impl UsageError {
    pub fn plain(message: impl Into<String>) -> UsageError {
        UsageError::Plain(message.into())
    }
}

impl From<std::io::Error> for UsageError {
    fn from(e: std::io::Error) -> Self {
        UsageError::Io(e)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<ExitCode, UsageError> = match cli.command {
        Command::Gen(args) => gen::run(args).map(|()| ExitCode::SUCCESS),
        Command::Inspect(args) => inspect::run(args)
            .map(|o| o.exit_code())
            .map_err(UsageError::Io),
        Command::Convert(args) => convert::run(args)
            .map(|o| o.exit_code())
            .map_err(UsageError::Io),
        Command::Validate(args) => validate::run(args)
            .map(|ok| {
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            })
            .map_err(UsageError::Io),
        Command::Bounds(args) => bounds::bounds(args).map(|()| ExitCode::SUCCESS),
        Command::Partition(args) => bounds::partition(args).map(|()| ExitCode::SUCCESS),
        Command::Hide(args) => keys::run(keys::Direction::Hide, args).map(|o| o.exit_code()),
        Command::Reveal(args) => keys::run(keys::Direction::Reveal, args).map(|o| o.exit_code()),
        Command::ShardLayout(args) => shard::run(args).map(|()| ExitCode::SUCCESS),
        Command::Profile(c) => profile::run(c).map(|()| ExitCode::SUCCESS),
        Command::Grep(args) => grep::run(args),
        Command::Model(args) => model::run(args).map(|()| ExitCode::SUCCESS),
        Command::Lab(c) => lab::run(c).map(|()| ExitCode::SUCCESS),
        Command::Serve(args) => serve::run(args).map(|()| ExitCode::SUCCESS),
        Command::Db(args) => db::run(args),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "uuidforge",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => clap_mangen::Man::new(Cli::command())
            .render(&mut std::io::stdout())
            .map(|()| ExitCode::SUCCESS)
            .map_err(UsageError::Io),
    };
    match result {
        Ok(code) => code,
        Err(UsageError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(UsageError::Io(e)) => {
            eprintln!("uuidforge: {e}");
            ExitCode::from(1)
        }
        Err(UsageError::Plain(message)) => {
            eprintln!("uuidforge: {message}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}

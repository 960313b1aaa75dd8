//! `uuidforge`: the command-line face of the uuidforge library.
//!
//! Thin by design: parsing arguments, reading lines, printing. Everything a
//! value means is computed by the library.

mod args;
mod bounds;
mod convert;
mod db;
mod flags;
mod gen;
mod grep;
mod input;
mod inspect;
mod keyfile;
mod keys;
mod lab;
mod model;
mod profile;
mod serve;
mod settings;
mod shard;
mod term;
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
    /// Hide the creation time of UUIDv7 values behind a key: each
    /// becomes a v4-shaped value that `reveal` maps back. `--new-key F`
    /// makes a key file.
    Hide(keys::Args),
    /// The UUIDv7 behind values made by `hide` with the same key file.
    Reveal(keys::Args),
    /// A UUIDv8 layout for sharded systems: bit diagram and collision
    /// odds from node bits, rate and node count; `--out` writes the file
    /// `gen --version 8 --shard-layout` reads.
    ShardLayout(shard::Args),
    /// Generator profiles.
    #[command(subcommand)]
    Profile(profile::Command),
    /// Find UUIDs in files, standard input or database rows: JSON, NDJSON,
    /// XML, HTML, CSV/TSV and text; by value, version or time; at a JSON
    /// path, tag, attribute, URL or column. Exit 0 found, 1 none, 2
    /// error.
    Grep(grep::Args),
    /// PostgreSQL DDL with UUIDv7 keys from a model (Anchor Modeler XML or
    /// YAML): Anchor 6NF, bitemporal or Data Vault.
    Model(model::Args),
    /// Experiments on a real database: `lab keys` measures key kinds,
    /// counter lengths and generator placement.
    #[command(subcommand)]
    Lab(lab::Command),
    /// Serve the HTTP API and the web page (batch generator, UUID chips).
    Serve(serve::Args),
    /// A live PostgreSQL database through its UUIDs: read (UUID columns,
    /// find, related columns, discovered keys) and change (rename,
    /// migrate-key, merge, unmerge: planned, backed up, verified).
    Db(db::Args),
    /// Print shell completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command with --dir.
    Man {
        /// Write uuidforge.1 and a page for every subcommand
        /// (uuidforge-gen.1, uuidforge-db-find.1, …) into this directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

/// A failure of the command as a whole: bad input (exit 2, nothing more on
/// standard output) or an I/O error.
pub enum UsageError {
    /// A message for standard error.
    Plain(String),
    /// Writing or reading failed.
    Io(std::io::Error),
    /// A database tool failed; its kind gives the exit code.
    Db(uuidforge_db::error::DbError),
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
        Command::Man { dir: None } => clap_mangen::Man::new(Cli::command())
            .render(&mut std::io::stdout())
            .map(|()| ExitCode::SUCCESS)
            .map_err(UsageError::Io),
        Command::Man { dir: Some(dir) } => write_man_pages(&dir).map(|n| {
            eprintln!("uuidforge: wrote {n} man pages to {}", dir.display());
            ExitCode::SUCCESS
        }),
    };
    match result {
        Ok(code) => code,
        Err(UsageError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(UsageError::Io(e)) => {
            eprintln!("uuidforge: {}", term::message(&e.to_string()));
            ExitCode::from(1)
        }
        Err(UsageError::Plain(message)) => {
            eprintln!("uuidforge: {}", term::message(&message));
            ExitCode::from(2)
        }
        Err(UsageError::Db(e)) => {
            eprintln!("uuidforge: {}", term::message(&flags::said(&e)));
            ExitCode::from(e.exit_code())
        }
    }
}

/// Writes the page of `uuidforge` and of every subcommand, at any depth, as
/// `uuidforge-SUB[-SUBSUB].1` (the names the pages' SEE ALSO and
/// SUBCOMMANDS sections give); returns how many.
fn write_man_pages(dir: &std::path::Path) -> Result<usize, UsageError> {
    fn write(mut command: clap::Command, dir: &std::path::Path) -> Result<usize, UsageError> {
        let name = command.get_name().to_string();
        if name.ends_with("-help") {
            // `help`'s own subcommands repeat the commands': its page says
            // what it does, without a page per repetition.
            let about = command.get_about().cloned().unwrap_or_default();
            let name: &'static str = Box::leak(name.clone().into_boxed_str());
            command = clap::Command::new(name).about(about).arg(
                clap::Arg::new("command")
                    .num_args(0..)
                    .value_name("COMMAND")
                    .help("The command whose help to print"),
            );
        }
        let path = dir.join(format!("{name}.1"));
        let mut file = std::fs::File::create(&path)
            .map_err(|e| UsageError::plain(format!("--dir: {}: {e}", path.display())))?;
        clap_mangen::Man::new(command.clone()).render(&mut file)?;
        let mut written = 1;
        for sub in command.get_subcommands() {
            // clap names are &'static str here; a few pages' worth of
            // names lives until the process ends anyway.
            let full: &'static str =
                Box::leak(format!("{name}-{}", sub.get_name()).into_boxed_str());
            let sub = sub.clone().name(full);
            written += write(sub, dir)?;
        }
        Ok(written)
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| UsageError::plain(format!("--dir: {}: {e}", dir.display())))?;
    let mut command = Cli::command();
    command.build();
    write(command, dir)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}

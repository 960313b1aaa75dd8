//! `uuidforge profile list|show|check`.

use crate::input::stdout;
use crate::UsageError;
use std::io::Write;
use uuidforge::generator::{GeneratorConfig, PROFILES};

/// What to do with profiles.
#[derive(clap::Subcommand)]
pub enum Command {
    /// List the built-in profiles with their bit layouts.
    List,
    /// Print a built-in profile as JSON, with its bit layout.
    Show {
        /// Profile name.
        name: String,
    },
    /// Check a JSON profile file; errors name the field.
    Check {
        /// Path of the file.
        file: String,
    },
}

pub fn run(command: Command) -> Result<(), UsageError> {
    let mut out = stdout();
    match command {
        Command::List => {
            for name in PROFILES {
                let c = GeneratorConfig::profile(name).expect("built in");
                writeln!(out, "{name:<10} {}", c.diagram())?;
            }
        }
        Command::Show { name } => {
            let c = GeneratorConfig::profile(&name).ok_or_else(|| {
                UsageError::plain(format!(
                    "unknown profile '{name}': expected one of {}",
                    PROFILES.join(", ")
                ))
            })?;
            writeln!(out, "{}", c.to_json())?;
            writeln!(out, "// {}", c.diagram())?;
        }
        Command::Check { file } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| UsageError::plain(format!("{file}: {e}")))?;
            let c = GeneratorConfig::from_json(&text)
                .map_err(|e| UsageError::plain(format!("{file}: {e}")))?;
            writeln!(out, "{file}: valid profile '{}'", c.name)?;
            writeln!(out, "// {}", c.diagram())?;
        }
    }
    out.flush()?;
    Ok(())
}

//! `uuidforge convert --to FORMAT`.

use crate::input::{for_each_value, report, stdout, Outcome};
use std::io::{self, Write};
use uuidforge::fmt::Format;
use uuidforge::parser::Value;
use uuidforge::sortorder::{DotNetGuid, MySqlSwap, SqlServer, StoreOrder};

/// Output forms: every [`Format`] by its name, plus the forms below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A UUID form of the library.
    Form(Format),
    /// UUID_192 text (input must be a UUID_192).
    Uuid192,
    /// UUID_192 Base32, 39 characters (input must be a UUID_192).
    Uuid192Base32,
    /// The GUID to store in SQL Server so it sorts by time, as SQL Server prints it.
    Sqlserver,
    /// .NET `Guid.ToByteArray()` bytes, as 32 hex digits.
    DotnetBytes,
    /// The value to pass to MySQL `UUID_TO_BIN(x, 1)` so the stored bytes sort by time.
    MysqlSwap,
}

const EXTRA_TARGETS: [(&str, Target); 5] = [
    ("uuid192", Target::Uuid192),
    ("uuid192-base32", Target::Uuid192Base32),
    ("sqlserver", Target::Sqlserver),
    ("dotnet-bytes", Target::DotnetBytes),
    ("mysql-swap", Target::MysqlSwap),
];

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Form(f) => f.name(),
            other => {
                EXTRA_TARGETS
                    .iter()
                    .find(|(_, t)| *t == other)
                    .expect("listed")
                    .0
            }
        }
    }
}

fn parse_target(name: &str) -> Result<Target, String> {
    if let Some(f) = Format::from_name(name) {
        return Ok(Target::Form(f));
    }
    if let Some((_, t)) = EXTRA_TARGETS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        return Ok(*t);
    }
    let names: Vec<&str> = Format::ALL
        .iter()
        .map(|f| f.name())
        .chain(EXTRA_TARGETS.iter().map(|(n, _)| *n))
        .collect();
    Err(format!("expected one of {}", names.join(", ")))
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
        if args.to != Target::Form(Format::Binary) {
            buf.push(b'\n');
        }
        out.write_all(&buf)?;
        Ok(true)
    })?;
    out.flush()?;
    Ok(outcome)
}

fn render(args: &Args, value: Value, buf: &mut Vec<u8>) -> Result<(), String> {
    let hex_from = write_form(args, value, buf)?;
    if let (true, Some(from)) = (args.upper, hex_from) {
        buf[from..].make_ascii_uppercase();
    }
    Ok(())
}

/// Writes the value in the target form; returns where its hex digits start
/// (for `--upper`), or `None` for forms that are not hex.
fn write_form(args: &Args, value: Value, buf: &mut Vec<u8>) -> Result<Option<usize>, String> {
    let uuid = match (value, args.to) {
        (Value::Uuid192(k), Target::Uuid192) => {
            buf.extend_from_slice(k.to_string().as_bytes());
            return Ok(Some(0));
        }
        (Value::Uuid192(k), Target::Uuid192Base32) => {
            buf.extend_from_slice(k.to_base32().as_bytes());
            return Ok(None);
        }
        (Value::Uuid(..), Target::Uuid192 | Target::Uuid192Base32) => {
            return Err("a UUID has no segment: only a UUID_192 converts to a UUID_192 form".into())
        }
        (Value::Uuid192(_), _) if !args.uuid_part => {
            return Err(format!(
                "a UUID_192 would lose its segment as {}: pass --uuid-part to convert its UUID, or use --to uuid192 / uuid192-base32",
                args.to.name()
            ))
        }
        (v, _) => v.uuid(),
    };
    let (format, shown) = match args.to {
        Target::Form(f) => (f, uuid),
        Target::Sqlserver => (Format::Canonical, SqlServer::shown(&uuid)),
        Target::DotnetBytes => (
            Format::Simple,
            uuid::Uuid::from_bytes(DotNetGuid::encode(&uuid)),
        ),
        Target::MysqlSwap => (
            Format::Canonical,
            uuid::Uuid::from_bytes(MySqlSwap::encode(&uuid)),
        ),
        Target::Uuid192 | Target::Uuid192Base32 => unreachable!("handled above"),
    };
    format.write(&shown, buf);
    Ok(match format {
        Format::Urn => Some(9),
        Format::Canonical | Format::Simple | Format::Braced => Some(0),
        _ => None,
    })
}

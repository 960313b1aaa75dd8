//! `uuidforge convert --to FORMAT`.

use crate::input::{for_each_value, report, stdout, Outcome};
use clap::ValueEnum;
use std::io::{self, Write};
use uuidforge::fmt::Format;
use uuidforge::parser::{parse_value, Value};
use uuidforge::sortorder::{DotNetGuid, MySqlSwap, SqlServer, StoreOrder};

/// Output forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// 8-4-4-4-12, lower case.
    Canonical,
    /// 32 hex digits.
    Simple,
    /// {8-4-4-4-12}.
    Braced,
    /// urn:uuid:8-4-4-4-12.
    Urn,
    /// Crockford Base32, 26 characters (ULID text).
    Base32,
    /// Crockford Base32 with its check symbol, 27 characters.
    Base32Check,
    /// The 16 raw bytes, no separator.
    Binary,
    /// UUID_192 text (input must be a UUID_192).
    Uuid192,
    /// UUID_192 Base32, 39 characters (input must be a UUID_192).
    Uuid192Base32,
    /// The GUID to store in SQL Server so it sorts by time, as SQL Server prints it.
    Sqlserver,
    /// .NET Guid.ToByteArray() bytes, as 32 hex digits.
    DotnetBytes,
    /// The value to pass to MySQL UUID_TO_BIN(x, 1) so the stored bytes sort by time.
    MysqlSwap,
}

/// Arguments of `convert`.
#[derive(clap::Args)]
pub struct Args {
    /// Output form.
    #[arg(long, value_enum)]
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
    let outcome = for_each_value(&args.values, |origin, text| {
        let value = match parse_value(text) {
            Ok(v) => v,
            Err(e) => {
                report(origin, e);
                return Ok(false);
            }
        };
        buf.clear();
        if let Err(message) = render(&args, value, &mut buf) {
            report(origin, message);
            return Ok(false);
        }
        if args.to != Target::Binary {
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
                args.to.to_possible_value().expect("named").get_name()
            ))
        }
        (v, _) => v.uuid(),
    };
    let (format, shown) = match args.to {
        Target::Canonical => (Format::Canonical, uuid),
        Target::Simple => (Format::Simple, uuid),
        Target::Braced => (Format::Braced, uuid),
        Target::Urn => (Format::Urn, uuid),
        Target::Base32 => (Format::Base32, uuid),
        Target::Base32Check => (Format::Base32Check, uuid),
        Target::Binary => (Format::Binary, uuid),
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

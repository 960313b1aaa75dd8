//! `uuidforge gen`.

mod keyed;

use crate::args::{load_profile, parse_duration, parse_time};
use crate::input::stdout;
use crate::settings::resolve;
use crate::UsageError;
use std::io::{self, IsTerminal, Write};
use uuid::Uuid;
use uuidforge::batch::{BatchSource, BatchSpec};
use uuidforge::fmt::Format;
use uuidforge::generator::{Checkpoint, CheckpointStart, ShardLayout};
use uuidforge::uuid192::{SegmentFields, Uuid192};

fn parse_version(text: &str) -> Result<u8, String> {
    match text.parse::<u8>() {
        Ok(v @ (1 | 3 | 4 | 5 | 6 | 7 | 8)) => Ok(v),
        _ => Err("expected 1, 3, 4, 5, 6, 7 or 8".into()),
    }
}

/// Arguments of `gen`.
#[derive(clap::Args)]
pub struct Args {
    /// How many UUIDs.
    #[arg(short = 'n', long = "count", default_value_t = 1, allow_negative_numbers = true, value_parser = parse_count)]
    count: u64,
    /// UUID version: 1, 3, 4, 5, 6, 7 or 8.
    #[arg(long, default_value = "7", value_parser = parse_version)]
    version: u8,
    /// v7 generator profile: default, counter42, pg18, random, or a JSON
    /// file (else $UUIDFORGE_PROFILE, else the config file).
    #[arg(long)]
    profile: Option<String>,
    /// Output form: canonical, simple, braced, urn, base32, base32-check,
    /// binary, uuid192 (else $UUIDFORGE_FORMAT, else the config file).
    #[arg(long)]
    format: Option<String>,
    /// Upper-case hex digits.
    #[arg(long)]
    upper: bool,
    /// Shift v7 timestamps by a signed duration (e.g. -1h, 30d, 500ms).
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    shift: Option<i64>,
    /// Make v7 values for this time instead of now (backfill): RFC 3339 or
    /// Unix milliseconds. Values stay strictly increasing from that instant.
    #[arg(long, value_parser = parse_time)]
    at: Option<i64>,
    /// Namespace of name-based versions (3, 5, 8): dns, url, oid, x500 or a UUID.
    #[arg(long)]
    namespace: Option<String>,
    /// Name for versions 3, 5 and 8 (repeat for several UUIDs).
    #[arg(long)]
    name: Vec<String>,
    /// One JSON object per line with the decoded fields.
    #[arg(long)]
    json: bool,
    /// The one UUIDv7 of --at and this key (a re-runnable backfill;
    /// repeat for several): the same as SQL `uuidv7_from(at, key)`.
    #[arg(long, requires = "at")]
    key: Vec<String>,
    /// Keys from standard input, one per line: `KEY` with --at, else
    /// `TIME<TAB>KEY` (TIME as for --at); one UUID per line, in order.
    #[arg(long, conflicts_with = "key")]
    key_from_stdin: bool,
    /// With --key or --key-from-stdin: a secret (at least 16 bytes) that
    /// makes the keyed UUIDs unguessable, as SQL `uuidv7_from(at, key,
    /// secret)`.
    #[arg(long)]
    secret_file: Option<std::path::PathBuf>,
    /// Checkpoint file: read at start so values stay above every value
    /// of earlier runs even after the clock went back; written ahead of the
    /// values (created with mode 0600).
    #[arg(long)]
    state: Option<std::path::PathBuf>,
    /// Print the generator's figures to standard error at the end.
    #[arg(long)]
    stats: bool,
    /// With --version 8: a UUIDv8 shard layout file (`uuidforge shard-layout --out`).
    #[arg(long, requires = "node")]
    shard_layout: Option<std::path::PathBuf>,
    /// With --shard-layout: this node's id.
    #[arg(long, requires = "shard_layout")]
    node: Option<u64>,
    /// Strictly increasing across every process of this host: the
    /// generator's state lives in a shared memory file (default
    /// /dev/shm/uuidforge-UID.cell), which concurrent runs, workers and
    /// servers share.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "")]
    host_wide: Option<String>,
    /// Mode of a new --host-wide file (octal; others may never write it).
    #[arg(long, default_value = "600", value_parser = parse_mode, requires = "host_wide")]
    host_wide_mode: u32,
}

fn parse_mode(text: &str) -> Result<u32, String> {
    u32::from_str_radix(text, 8)
        .ok()
        .filter(|m| *m <= 0o777)
        .ok_or_else(|| "expected an octal mode such as 600 or 660".to_string())
}

pub(crate) enum Output {
    Form(Format),
    Uuid192,
}

/// Values are made and written in chunks of this size.
const CHUNK: usize = 8192;

pub fn run(args: Args) -> Result<(), UsageError> {
    let format = resolve(
        args.format.as_deref(),
        "format",
        "UUIDFORGE_FORMAT",
        "canonical",
    )
    .map_err(UsageError::plain)?;
    let output = match format.value.as_str() {
        "uuid192" => Output::Uuid192,
        name => Output::Form(Format::from_name(name).ok_or_else(|| {
            UsageError::plain(format!(
                "invalid value '{}' for the output format (from {}): expected canonical, simple, braced, urn, base32, base32-check, binary or uuid192",
                name, format.source
            ))
        })?),
    };
    if args.json && matches!(output, Output::Form(Format::Binary)) {
        return Err(UsageError::plain(
            "--json cannot carry --format binary: choose a text format".to_string(),
        ));
    }
    if !args.key.is_empty() || args.key_from_stdin {
        return keyed::run(&args, &output);
    }
    if args.secret_file.is_some() {
        return Err(UsageError::plain(
            "--secret-file applies to keyed UUIDs: give --key or --key-from-stdin",
        ));
    }
    let name_based = matches!(args.version, 3 | 5) || (args.version == 8 && !args.name.is_empty());
    if name_based {
        if args.name.is_empty() {
            return Err(UsageError::plain(format!(
                "--name is required for --version {}",
                args.version
            )));
        }
        if args.count != 1 {
            return Err(UsageError::plain(format!(
                "invalid value '{}' for '--count': name-based UUIDs are deterministic, expected 1 (give several --name instead)",
                args.count
            )));
        }
    } else if !args.name.is_empty() || args.namespace.is_some() {
        return Err(UsageError::plain(format!(
            "--name and --namespace apply to versions 3, 5 and 8, not --version {}",
            args.version
        )));
    }
    // Name-based: one UUID per --name.
    let count = if name_based {
        args.name.len() as u64
    } else {
        args.count
    };
    if let Some(path) = &args.shard_layout {
        let mut source = shard_source(&args, path)?;
        return write_all(&args, count, &output, &mut *source).map_err(UsageError::Io);
    }
    if name_based {
        let mut source = name_source(&args)?;
        return write_all(&args, count, &output, &mut *source).map_err(UsageError::Io);
    }
    if let Some(path) = &args.host_wide {
        return host_wide(&args, std::path::Path::new(path), count, &output);
    }
    let mut batch = batch_source(&args)?;
    let mut checkpoint = match &args.state {
        Some(path) => Some(open_checkpoint(&args, path, &mut batch)?),
        None => None,
    };
    let mut source = |out: &mut [Uuid]| -> Result<(), String> {
        batch.fill(out).map_err(|e| e.to_string())?;
        if let (Some(cp), Some(last)) = (checkpoint.as_mut(), batch.last_unix_ms()) {
            cp.note(last)
                .map_err(|e| format!("writing the --state file: {e}"))?;
        }
        Ok(())
    };
    write_all(&args, count, &output, &mut source)?;
    if args.stats {
        print_stats(count, batch.telemetry());
    }
    Ok(())
}

/// `--host-wide`: every value through the host's shared cell.
fn host_wide(
    args: &Args,
    path: &std::path::Path,
    count: u64,
    output: &Output,
) -> Result<(), UsageError> {
    if args.version != 7 || args.at.is_some() || args.shift.is_some() || args.state.is_some() {
        return Err(UsageError::plain(
            "--host-wide orders version 7 values made now: drop --at, --shift, --state and other versions",
        ));
    }
    let path = if path.as_os_str().is_empty() {
        uuidforge_host::default_path()
    } else {
        path.to_path_buf()
    };
    let host = uuidforge_host::HostCell::open(&path, args.host_wide_mode).map_err(|e| {
        UsageError::plain(format!(
            "invalid value '{}' for '--host-wide': {}",
            path.display(),
            e.message
        ))
    })?;
    let generator = uuidforge::generator::SharedGenerator::new(resolve_profile(args)?)
        .map_err(|e| UsageError::plain(format!("the profile: {e}")))?;
    let mut source = |out: &mut [Uuid]| -> Result<(), String> {
        for slot in out {
            *slot = generator
                .generate_in(host.cell())
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    write_all(args, count, output, &mut source)?;
    if args.stats {
        print_stats(count, Some(host.cell().telemetry()));
    }
    Ok(())
}

/// How far ahead of the values `--state` stores the time.
const STATE_MARGIN_MS: u64 = 10_000;

/// Opens `--state`, moves the source above it and stores a time ahead of
/// the first values before any is handed out.
fn open_checkpoint(
    args: &Args,
    path: &std::path::Path,
    batch: &mut BatchSource,
) -> Result<Checkpoint, UsageError> {
    if args.version != 7 || args.at.is_some() || args.shift.is_some() {
        return Err(UsageError::plain(
            "--state applies to version 7 values for now: drop --at, --shift and other versions",
        ));
    }
    let (mut cp, start) = Checkpoint::open(path, STATE_MARGIN_MS);
    match start {
        CheckpointStart::Resume(ms) => {
            batch.resume_after(ms);
        }
        CheckpointStart::Fresh(why) if why.contains("does not exist") => {}
        CheckpointStart::Fresh(why) => {
            return Err(UsageError::plain(format!(
                "invalid value '{}' for '--state': {why}; remove the file to start from the clock",
                path.display()
            )))
        }
    }
    let first = (uuidforge::batch::now_unix_ms().max(0) as u64).max(cp.stored_unix_ms());
    cp.note(first).map_err(|e| {
        UsageError::plain(format!(
            "invalid value '{}' for '--state': cannot write it: {e}",
            path.display()
        ))
    })?;
    Ok(cp)
}

/// `--stats`: one JSON line on standard error.
pub(crate) fn print_stats(generated: u64, telemetry: Option<uuidforge::generator::Telemetry>) {
    let mut j = serde_json::json!({ "generated": generated });
    if let Some(t) = telemetry {
        let figures = serde_json::to_value(t).expect("telemetry serialises");
        j.as_object_mut()
            .expect("an object")
            .extend(figures.as_object().expect("an object").clone());
    }
    eprintln!("uuidforge: stats {j}");
}

/// A source of UUIDs in chunks.
type Source = Box<dyn FnMut(&mut [Uuid]) -> Result<(), String>>;

fn shard_source(args: &Args, path: &std::path::Path) -> Result<Source, UsageError> {
    if args.version != 8 {
        return Err(UsageError::plain(format!(
            "--shard-layout makes UUIDv8: use it with --version 8, not --version {}",
            args.version
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        UsageError::plain(format!(
            "invalid value '{}' for '--shard-layout': {e}",
            path.display()
        ))
    })?;
    let layout = ShardLayout::from_json(&text).map_err(|e| {
        UsageError::plain(format!(
            "invalid value '{}' for '--shard-layout': {} = {} is invalid, expected {}",
            path.display(),
            e.field,
            e.value,
            e.expected
        ))
    })?;
    let node = args.node.expect("clap requires --node");
    let mut g = layout.generator(node).map_err(|e| {
        UsageError::plain(format!(
            "invalid value '{node}' for '--node': expected {} (the layout has {} node bits)",
            e.expected,
            layout.node_bits()
        ))
    })?;
    Ok(Box::new(move |out: &mut [Uuid]| {
        for slot in out {
            *slot = g.generate().map_err(|e| e.to_string())?;
        }
        Ok(())
    }))
}

fn name_source(args: &Args) -> Result<Source, UsageError> {
    let ns = namespace(args.namespace.as_deref().unwrap_or("dns")).map_err(UsageError::plain)?;
    let version = args.version;
    let names = args.name.clone();
    let mut next = 0usize;
    Ok(Box::new(move |out: &mut [Uuid]| {
        for slot in out {
            let name = names[next % names.len()].as_bytes();
            next += 1;
            *slot = match version {
                3 => Uuid::new_v3(&ns, name),
                5 => Uuid::new_v5(&ns, name),
                _ => uuidforge::v8::sha256_name(&ns, name),
            };
        }
        Ok(())
    }))
}

fn batch_source(args: &Args) -> Result<BatchSource, UsageError> {
    let config = if args.profile.is_some() || args.version == 7 {
        Some(resolve_profile(args)?)
    } else {
        None
    };
    let spec = BatchSpec::new(args.version, config, args.shift, args.at).map_err(|e| {
        UsageError::plain(format!(
            "invalid value '{}' for '--{}': expected {}",
            e.value, e.field, e.expected
        ))
    })?;
    spec.owned_source()
        .map_err(|e| UsageError::plain(e.to_string()))
}

/// The v7 profile: `--profile`, else the environment, else the config file.
fn resolve_profile(args: &Args) -> Result<uuidforge::generator::GeneratorConfig, UsageError> {
    let profile = resolve(
        args.profile.as_deref(),
        "profile",
        "UUIDFORGE_PROFILE",
        "default",
    )
    .map_err(UsageError::plain)?;
    load_profile(&profile.value).map_err(|e| {
        UsageError::plain(format!(
            "invalid value '{}' for the profile (from {}): {e}",
            profile.value, profile.source
        ))
    })
}

fn namespace(text: &str) -> Result<Uuid, String> {
    Ok(match text.to_ascii_lowercase().as_str() {
        "dns" => Uuid::NAMESPACE_DNS,
        "url" => Uuid::NAMESPACE_URL,
        "oid" => Uuid::NAMESPACE_OID,
        "x500" => Uuid::NAMESPACE_X500,
        _ => uuidforge::parser::parse(text)
            .map_err(|e| format!("invalid value '{text}' for '--namespace': expected dns, url, oid, x500 or a UUID ({e})"))?,
    })
}

fn write_all(
    args: &Args,
    count: u64,
    output: &Output,
    source: &mut dyn FnMut(&mut [Uuid]) -> Result<(), String>,
) -> io::Result<()> {
    let mut out = stdout();
    let progress = (count >= 1_000_000 && io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(count);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} UUIDs, {per_sec}, eta {eta}",
            )
            .expect("a valid template"),
        );
        bar
    });
    let mut chunk = vec![Uuid::nil(); CHUNK];
    let mut text = Vec::with_capacity(CHUNK * 48);
    let mut left = count;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        source(&mut chunk[..n]).map_err(io::Error::other)?;
        text.clear();
        for id in &chunk[..n] {
            write_one(args, output, id, &mut text);
        }
        out.write_all(&text)?;
        left -= n as u64;
        if let Some(bar) = &progress {
            bar.inc(n as u64);
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    out.flush()
}

pub(crate) fn write_one(args: &Args, output: &Output, id: &Uuid, text: &mut Vec<u8>) {
    let start = text.len();
    match output {
        Output::Uuid192 => {
            let key = Uuid192::new(*id, SegmentFields::Raw { payload: 0 }).expect("payload 0 fits");
            text.extend_from_slice(key.to_string().as_bytes());
        }
        Output::Form(f) => f.write(id, text),
    }
    let hex_from = match output {
        Output::Form(Format::Urn) => Some(start + 9),
        Output::Form(Format::Canonical | Format::Simple | Format::Braced) | Output::Uuid192 => {
            Some(start)
        }
        _ => None,
    };
    if let (true, Some(from)) = (args.upper, hex_from) {
        text[from..].make_ascii_uppercase();
    }
    if args.json {
        let value = String::from_utf8_lossy(&text[start..]).into_owned();
        text.truncate(start);
        let report = uuidforge::inspect::inspect(id);
        let mut j = serde_json::json!({
            "uuid": value,
            "canonical": uuidforge::fmt::to_canonical_string(id),
            "version": report.version,
            "variant": report.variant,
        });
        if let Some(t) = report.timestamp {
            j["timestamp"] = serde_json::to_value(t).expect("serialisable");
        }
        serde_json::to_writer(&mut *text, &j).expect("writing to a Vec");
        text.push(b'\n');
    } else if !matches!(output, Output::Form(Format::Binary)) {
        text.push(b'\n');
    }
}

/// `-n`: a whole number; a negative one is named as such, not taken for a flag.
fn parse_count(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .map_err(|_| "expected a whole number of values (0 or more)".to_string())
}

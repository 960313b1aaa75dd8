//! `uuidforge grep`: UUIDs in documents and database rows (D12). The
//! search is `uuidforge-grep`'s; this module walks directories, reads
//! files and prints. Exit status as grep's: 0 something selected, 1
//! nothing, 2 an error (a malformed document is reported and the other
//! inputs are still searched).

use crate::UsageError;
use serde_json::json;
use std::io::{IsTerminal, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use uuidforge_grep::jsonpath::JsonPath;
use uuidforge_grep::search::LineCounter;
use uuidforge_grep::url::UrlPattern;
use uuidforge_grep::{search, Event, Format, Hit, Matcher, Place, Query, UuidSet};

mod db;

/// Arguments of `grep`.
#[derive(clap::Args)]
pub struct Args {
    /// Files or directories, searched recursively (.gitignore, .ignore and
    /// .rgignore honoured, hidden and binary files skipped) or `-` for
    /// standard input. Without any: standard input when it is not a
    /// terminal, else the current directory.
    paths: Vec<PathBuf>,
    /// Only this UUID, in any spelling (repeatable).
    #[arg(short = 'e', long = "value", value_name = "UUID")]
    values: Vec<String>,
    /// Only the UUIDs of this file, one per line in any spelling (up to
    /// 10^7; `-` for standard input; repeatable).
    #[arg(short = 'f', long = "values-file", value_name = "FILE")]
    value_files: Vec<PathBuf>,
    /// Only UUIDs of this version.
    #[arg(long = "version", id = "uuid_version", value_name = "N",
          value_parser = clap::value_parser!(u8).range(1..=8))]
    uuid_version: Option<u8>,
    /// Only v7, v6 and v1 UUIDs of this time or later (RFC 3339, Unix ms
    /// or `now`).
    #[arg(long, value_parser = crate::args::parse_time, value_name = "TIME")]
    since: Option<i64>,
    /// Only v7, v6 and v1 UUIDs before this time.
    #[arg(long, value_parser = crate::args::parse_time, value_name = "TIME")]
    until: Option<i64>,
    /// JSON and NDJSON: only strings or keys at this path ($.a.b, ['k'],
    /// [3], [*], .*, ..name).
    #[arg(long, value_parser = parse_json_path, value_name = "PATH")]
    json_path: Option<JsonPath>,
    /// XML and HTML: only inside elements of this name (with --attr: only
    /// that attribute of them).
    #[arg(long)]
    tag: Option<String>,
    /// XML and HTML: only in values of this attribute.
    #[arg(long)]
    attr: Option<String>,
    /// Only UUIDs inside URLs matching this pattern, where it has `*`
    /// (one path segment) or `**` (any run): 'https://host/orders/*'.
    #[arg(long, value_parser = parse_url, value_name = "PATTERN")]
    url: Option<UrlPattern>,
    /// CSV and TSV: only in this column (header name or number from 1).
    #[arg(long, value_name = "COLUMN")]
    csv_column: Option<String>,
    /// Read every input as this format instead of by extension or
    /// content: json, ndjson, xml, html, csv, tsv, text.
    #[arg(long, value_parser = parse_format)]
    format: Option<Format>,
    /// Print only the names of inputs with a selected record.
    #[arg(short = 'l', long, conflicts_with_all = ["count", "json"])]
    files_with_matches: bool,
    /// Print only the number of selected records per input.
    #[arg(short = 'c', long, conflicts_with = "json")]
    count: bool,
    /// Select the records without hits.
    #[arg(short = 'v', long, conflicts_with = "json")]
    invert_match: bool,
    /// Print every hit as a JSON object (NDJSON): file, line, column,
    /// path (JSON path, XPath or column), uuid, text, form, version, time.
    #[arg(long)]
    json: bool,
    /// Print nothing; exit 0 at the first selected record.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Prefix records with the input's name (default with several inputs).
    #[arg(short = 'H', long, conflicts_with = "no_filename")]
    with_filename: bool,
    /// Never prefix records with the input's name.
    #[arg(long)]
    no_filename: bool,
    /// Prefix records with their line number.
    #[arg(short = 'n', long)]
    line_number: bool,
    /// Also search hidden files and directories.
    #[arg(long)]
    hidden: bool,
    /// Do not honour .gitignore, .ignore and .rgignore files.
    #[arg(long)]
    no_ignore: bool,
    /// Search a PostgreSQL database instead (URL, key=value string or
    /// name; the rest from PG* variables and ~/.pgpass). With values and
    /// no --json-path/--url: the explorer's find over every table (or
    /// --table/--column), indexes first. Otherwise --table's rows, each as
    /// a JSON object.
    #[arg(long, conflicts_with_all = ["paths", "format", "tag", "attr", "csv_column", "hidden", "no_ignore"])]
    db: Option<String>,
    /// With --db: only this table (`table` or `schema.table`).
    #[arg(long, requires = "db")]
    table: Option<String>,
    /// With --db: only this column (`column`, `table.column`; repeatable
    /// with find, one with a table's rows).
    #[arg(long, requires = "db")]
    column: Vec<String>,
}

fn parse_json_path(text: &str) -> Result<JsonPath, String> {
    JsonPath::parse(text).map_err(|e| e.to_string())
}

fn parse_url(text: &str) -> Result<UrlPattern, String> {
    UrlPattern::parse(text).map_err(|e| e.to_string())
}

fn parse_format(text: &str) -> Result<Format, String> {
    Format::from_name(text).ok_or_else(|| {
        format!(
            "expected one of {}",
            uuidforge_grep::format::NAMES.join(", ")
        )
    })
}

/// Runs `grep`.
pub fn run(args: Args) -> Result<ExitCode, UsageError> {
    let matcher = matcher(&args)?;
    if let Some(db) = args.db.clone() {
        return db::run(&args, db, matcher);
    }
    let mut inputs = args.paths.clone();
    if inputs.is_empty() {
        inputs.push(PathBuf::from(if std::io::stdin().is_terminal() {
            "."
        } else {
            "-"
        }));
    }
    let several = inputs.len() > 1 || inputs.iter().any(|p| p.is_dir());
    let mut run = Run::new(&args, &matcher, several);
    for input in &inputs {
        if run.stop {
            break;
        }
        if input.as_os_str() == "-" {
            let mut doc = Vec::new();
            match std::io::stdin().lock().read_to_end(&mut doc) {
                Ok(_) => {
                    let count = run.document("<stdin>", None, &doc, 1)?;
                    run.report("<stdin>", count)?;
                }
                Err(e) => run.error(format_args!("<stdin>: {e}")),
            }
        } else if input.is_dir() {
            run.directory(input)?;
        } else {
            run.file(input, true)?;
        }
    }
    run.out.flush()?;
    Ok(run.exit_code())
}

impl Run<'_> {
    /// grep's exit status: 2 after an error (unless -q found something),
    /// else 0 when something was selected, else 1.
    fn exit_code(&self) -> ExitCode {
        ExitCode::from(
            match (
                self.errors && !(self.args.quiet && self.selected),
                self.selected,
            ) {
                (true, _) => 2,
                (false, true) => 0,
                (false, false) => 1,
            },
        )
    }
}

fn matcher(args: &Args) -> Result<Matcher, UsageError> {
    let mut values = UuidSet::default();
    for (i, text) in args.values.iter().enumerate() {
        values
            .insert_text(&format!("-e value {}", i + 1), text)
            .map_err(|e| UsageError::plain(e.to_string()))?;
    }
    for file in &args.value_files {
        let name = file.display().to_string();
        let inserted = if name == "-" {
            values.insert_lines(&name, std::io::stdin().lock())
        } else {
            let opened = std::fs::File::open(file)
                .map_err(|e| UsageError::plain(format!("--values-file {name}: {e}")))?;
            // A canonical value and its line break take 37 bytes.
            values.reserve(opened.metadata().map_or(0, |m| m.len() as usize / 37));
            values.insert_lines(&name, std::io::BufReader::with_capacity(1 << 20, opened))
        };
        inserted.map_err(|e| UsageError::plain(e.to_string()))?;
    }
    let given = !args.values.is_empty() || !args.value_files.is_empty();
    if given && values.is_empty() {
        return Err(UsageError::plain(
            "-e/--values-file: no values (the files are empty)",
        ));
    }
    if let (Some(since), Some(until)) = (args.since, args.until) {
        if since >= until {
            return Err(UsageError::plain(format!(
                "--since {since} is not before --until {until} (Unix ms): nothing could match"
            )));
        }
    }
    Ok(Matcher {
        query: Query {
            values: given.then_some(values),
            version: args.uuid_version,
            since_ms: args.since,
            until_ms: args.until,
        },
        place: Place {
            json_path: args.json_path.clone(),
            tag: args.tag.clone(),
            attr: args.attr.clone(),
            url: args.url.clone(),
            csv_column: args.csv_column.clone(),
        },
    })
}

/// One run over many documents: output, and what decides the exit code.
struct Run<'a> {
    args: &'a Args,
    matcher: &'a Matcher,
    prefix: bool,
    out: std::io::BufWriter<crate::term::Safe<std::io::StdoutLock<'static>>>,
    selected: bool,
    errors: bool,
    stop: bool,
}

/// Files this large are mapped rather than read.
const MAP_AT: u64 = 1 << 20;

impl<'a> Run<'a> {
    fn new(args: &'a Args, matcher: &'a Matcher, several: bool) -> Run<'a> {
        Run {
            args,
            matcher,
            prefix: args.with_filename || (several && !args.no_filename),
            out: std::io::BufWriter::with_capacity(1 << 16, crate::term::stdout()),
            selected: false,
            errors: false,
            stop: false,
        }
    }

    fn error(&mut self, message: std::fmt::Arguments<'_>) {
        self.errors = true;
        eprintln!("uuidforge: {message}");
    }

    fn directory(&mut self, dir: &Path) -> Result<(), UsageError> {
        let walker = ignore::WalkBuilder::new(dir)
            .hidden(!self.args.hidden)
            .git_ignore(!self.args.no_ignore)
            .git_exclude(!self.args.no_ignore)
            .git_global(!self.args.no_ignore)
            .ignore(!self.args.no_ignore)
            .parents(!self.args.no_ignore)
            .require_git(false)
            .add_custom_ignore_filename(".rgignore")
            .sort_by_file_path(|a, b| a.cmp(b))
            .build();
        for entry in walker {
            if self.stop {
                break;
            }
            match entry {
                Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                    self.file(entry.path(), false)?
                }
                Ok(_) => {}
                Err(e) => self.error(format_args!("{e}")),
            }
        }
        Ok(())
    }

    fn file(&mut self, path: &Path, named: bool) -> Result<(), UsageError> {
        let name = path.display().to_string();
        let opened = std::fs::File::open(path).and_then(|f| Ok((f.metadata()?.len(), f)));
        let (size, mut file) = match opened {
            Ok(x) => x,
            Err(e) => {
                self.error(format_args!("{name}: {e}"));
                return Ok(());
            }
        };
        let format = self.args.format.or_else(|| Format::from_extension(path));
        if size >= MAP_AT {
            // SAFETY: the map is read only while this function runs; a
            // file truncated meanwhile by another process is the one risk
            // every grep that maps files (ripgrep included) accepts.
            match unsafe { memmap2::Mmap::map(&file) } {
                Ok(map) => return self.checked_document(&name, format, &map, named),
                Err(e) => {
                    self.error(format_args!("{name}: {e}"));
                    return Ok(());
                }
            }
        }
        let mut doc = Vec::with_capacity(size as usize);
        if let Err(e) = file.read_to_end(&mut doc) {
            self.error(format_args!("{name}: {e}"));
            return Ok(());
        }
        self.checked_document(&name, format, &doc, named)
    }

    /// Skips binary files (a NUL byte in the first 8 KiB, as ripgrep
    /// does); a file named on the command line gets a note.
    fn checked_document(
        &mut self,
        name: &str,
        format: Option<Format>,
        doc: &[u8],
        named: bool,
    ) -> Result<(), UsageError> {
        // A file saved by a spreadsheet or an editor may start with a byte
        // order mark: its first line, cell or value is read without it.
        let doc = uuidforge::parser::strip_bom(doc);
        if memchr::memchr(0, &doc[..doc.len().min(8192)]).is_some() {
            if named {
                eprintln!("uuidforge: {name}: binary file skipped");
            }
            return Ok(());
        }
        let count = self.document(name, format, doc, 1)?;
        self.report(name, count)
    }

    /// Searches one document and prints its selected records (or hits);
    /// returns how many records were selected. Line numbers start at
    /// `first_line`.
    fn document(
        &mut self,
        name: &str,
        format: Option<Format>,
        doc: &[u8],
        first_line: usize,
    ) -> Result<usize, UsageError> {
        let format = format.unwrap_or_else(|| Format::sniff(doc));
        let part = Part {
            args: self.args,
            matcher: self.matcher,
            prefix: self.prefix,
            name,
            format,
        };
        let chunked = doc.len() >= 2 * CHUNK && matches!(format, Format::Text | Format::Ndjson);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (count, errors) = if chunked && threads > 1 {
            part.search_chunked(doc, first_line, threads, &mut self.out)?
        } else {
            let found = part.search(doc, first_line, &mut self.out);
            found.written?;
            (found.count, found.errors)
        };
        for (offset, message) in errors {
            let (line, column) = LineCounter::default().locate(doc, offset);
            let line = line + first_line - 1;
            self.error(format_args!("{name}:{line}:{column}: {message}"));
        }
        if count > 0 {
            self.selected = true;
            self.stop = self.args.quiet;
        }
        Ok(count)
    }

    /// Prints what -l and -c print for an input.
    fn report(&mut self, name: &str, count: usize) -> Result<(), UsageError> {
        let args = self.args;
        if args.quiet {
            return Ok(());
        }
        if args.files_with_matches && count > 0 {
            writeln!(self.out, "{name}")?;
        } else if args.count {
            if self.prefix {
                write!(self.out, "{name}:")?;
            }
            writeln!(self.out, "{count}")?;
        }
        Ok(())
    }
}

/// Line formats above twice this size are searched in parts of about
/// this size on every core, their output kept in order.
const CHUNK: usize = 8 << 20;

/// The search of one document (or part of one), printing to any writer.
struct Part<'a> {
    args: &'a Args,
    matcher: &'a Matcher,
    prefix: bool,
    name: &'a str,
    format: Format,
}

/// What a search of a part found.
struct Found {
    count: usize,
    /// Byte offsets and messages of malformed input.
    errors: Vec<(usize, String)>,
    written: std::io::Result<()>,
}

impl Part<'_> {
    fn search(&self, doc: &[u8], first_line: usize, out: &mut impl Write) -> Found {
        let (args, name) = (self.args, self.name);
        let whole = matches!(self.format, Format::Json | Format::Xml | Format::Html);
        let mut count = 0usize;
        let mut header: Option<(usize, usize)> = None;
        let mut header_printed = false;
        let mut lines = LineCounter::default();
        let mut written = Ok(());
        let mut errors = Vec::new();
        search(
            doc,
            self.format,
            self.matcher,
            args.invert_match,
            &mut |event| {
                let record = match event {
                    Event::Header(a, b) => {
                        header = Some((a, b));
                        return ControlFlow::Continue(());
                    }
                    Event::Error(offset, message) => {
                        errors.push((offset, message));
                        return ControlFlow::Continue(());
                    }
                    Event::Record(record) => record,
                };
                if record.hits.is_empty() != args.invert_match {
                    return ControlFlow::Continue(());
                }
                count += 1;
                if args.quiet || args.files_with_matches {
                    return ControlFlow::Break(());
                }
                if args.count {
                    return ControlFlow::Continue(());
                }
                let result = if args.json {
                    record.hits.iter().try_for_each(|hit| {
                        let (line, column) = lines.locate(doc, hit.start);
                        let line = line + first_line - 1;
                        writeln!(out, "{}", hit_json(name, doc, hit, line, column))
                    })
                } else {
                    (|| {
                        if let (Some((a, b)), false) = (header, header_printed) {
                            header_printed = true;
                            write_prefix(
                                out,
                                self.prefix,
                                name,
                                args.line_number.then_some(first_line),
                            )?;
                            out.write_all(&doc[a..b])?;
                            out.write_all(b"\n")?;
                        }
                        let line = (args.line_number && !whole)
                            .then(|| lines.locate(doc, record.start).0 + first_line - 1);
                        write_prefix(out, self.prefix && !whole, name, line)?;
                        out.write_all(&doc[record.start..record.end])?;
                        out.write_all(b"\n")
                    })()
                };
                match result {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        written = Err(e);
                        ControlFlow::Break(())
                    }
                }
            },
        );
        Found {
            count,
            errors,
            written,
        }
    }

    /// Splits a line format at line breaks into parts searched `threads`
    /// at a time; returns the count and the errors (offsets in `doc`).
    fn search_chunked(
        &self,
        doc: &[u8],
        first_line: usize,
        threads: usize,
        out: &mut impl Write,
    ) -> Result<(usize, Vec<(usize, String)>), UsageError> {
        let mut bounds = vec![0];
        while *bounds.last().expect("not empty") < doc.len() {
            let target = (bounds.last().expect("not empty") + CHUNK).min(doc.len());
            let end = memchr::memchr(b'\n', &doc[target..]).map_or(doc.len(), |n| target + n + 1);
            bounds.push(end);
        }
        let numbered = self.args.line_number || self.args.json;
        let mut line = first_line;
        let (mut count, mut errors) = (0, Vec::new());
        for round in bounds.windows(2).collect::<Vec<_>>().chunks(threads) {
            let mut lines = Vec::with_capacity(round.len());
            for part in round {
                lines.push(line);
                if numbered {
                    line += memchr::memchr_iter(b'\n', &doc[part[0]..part[1]]).count();
                }
            }
            let results: Vec<(Found, Vec<u8>)> = std::thread::scope(|scope| {
                let handles: Vec<_> = round
                    .iter()
                    .zip(&lines)
                    .map(|(part, &first)| {
                        scope.spawn(move || {
                            let mut buffer = Vec::new();
                            let found = self.search(&doc[part[0]..part[1]], first, &mut buffer);
                            (found, buffer)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a search part does not panic"))
                    .collect()
            });
            for (part, (found, buffer)) in round.iter().zip(results) {
                found.written?;
                out.write_all(&buffer)?;
                count += found.count;
                errors.extend(found.errors.into_iter().map(|(o, m)| (part[0] + o, m)));
            }
            if count > 0 && (self.args.quiet || self.args.files_with_matches) {
                break;
            }
        }
        Ok((count, errors))
    }
}

fn write_prefix(
    out: &mut impl Write,
    prefix: bool,
    name: &str,
    line: Option<usize>,
) -> std::io::Result<()> {
    if prefix {
        write!(out, "{name}:")?;
    }
    if let Some(line) = line {
        write!(out, "{line}:")?;
    }
    Ok(())
}

/// One hit as `--json` prints it.
pub fn hit_json(
    name: &str,
    doc: &[u8],
    hit: &Hit,
    line: usize,
    column: usize,
) -> serde_json::Value {
    let time = uuidforge_grep::query::unix_ms(&hit.uuid).and_then(|ms| {
        i64::try_from(ms)
            .ok()
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    });
    let mut value = json!({
        "file": name,
        "line": line,
        "column": column,
        "path": hit.path,
        "uuid": hit.uuid.hyphenated().to_string(),
        "text": String::from_utf8_lossy(&doc[hit.start..hit.end]),
        "form": match hit.form {
            uuidforge::scan::TokenForm::Canonical => "canonical",
            uuidforge::scan::TokenForm::Simple => "simple",
            uuidforge::scan::TokenForm::Base32 => "base32",
            uuidforge::scan::TokenForm::Uuid192Base32 => "uuid192-base32",
        },
        "version": hit.uuid.get_version_num(),
        "time": time,
    });
    if hit.key {
        value["key"] = json!(true);
    }
    value
}

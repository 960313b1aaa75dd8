//! What went wrong in a database tool, typed: callers decide by the
//! [`ErrorKind`] (an exit code, an HTTP status, a retry), never by reading
//! a message; a refusal says which object, why ([`Reason`]) and which ways
//! out there are ([`WayOut`]), each way out naming the [`Parameter`] that
//! takes it, which every front end spells its own way ([`Vocabulary`]: the
//! command line's `--also`, a JSON field's `also`).

use serde::Serialize;

/// What kind of failure an error is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request names something the database does not have (a table,
    /// a column, a merge).
    NotFound,
    /// A value the caller gave is not one the operation takes.
    Invalid,
    /// The database holds a shape the operation does not change; refused
    /// before anything ran.
    Refused,
    /// The database changed since the plan was made; nothing was changed.
    SchemaChanged,
    /// A check after the change failed; the change was rolled back (or, in
    /// batches, stopped before the next step).
    VerificationFailed {
        /// The failed checks, each `name: count`.
        failed: Vec<String>,
    },
    /// Rows changed since the tool recorded them; nothing was changed.
    Conflict,
    /// The server could not be reached or the connection broke.
    Connection,
    /// The server refused a statement.
    Server {
        /// Its SQLSTATE.
        sqlstate: String,
    },
    /// A program outside the server (`pg_dump`, `pg_restore`) or a file
    /// failed.
    Tool,
    /// An answer the tool could not read (a bug, or an unexpected server).
    Unreadable,
    /// Another process runs a change of the same tables now; nothing was
    /// changed (try again once it is done).
    Busy,
}

/// A failure of a database tool: its kind, what was being done and the
/// message.
///
/// ```
/// use uuidforge_store::error::{DbError, ErrorKind};
/// let e = DbError::not_found("table", "no table public.orders");
/// assert_eq!(e.kind, ErrorKind::NotFound);
/// assert_eq!(e.http_status(), 400);
/// assert_eq!(e.to_string(), "table: no table public.orders");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// What was being done (`connect`, `scan public.orders`, …) or the
    /// argument at fault.
    pub context: String,
    /// The server's, the driver's or the tool's message.
    pub message: String,
    /// What to do about it in words, when there is something and no
    /// [`WayOut`] says it.
    pub hint: Option<String>,
    /// A refusal's reason and ways out, typed (the message says them in
    /// words).
    pub refusal: Option<Box<Refusal>>,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rendered(&Plain))
    }
}

impl std::error::Error for DbError {}

impl DbError {
    fn of(kind: ErrorKind, context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError {
            kind,
            context: context.into(),
            message: message.into(),
            hint: None,
            refusal: None,
        }
    }

    /// The error in the words of a front end: its context, its message,
    /// the SQLSTATE of a server's refusal, then the ways out (or the hint)
    /// with each parameter spelled as `vocabulary` spells it.
    ///
    /// ```
    /// use uuidforge_store::error::{DbError, Parameter, Plain, Reason, Refusal, Vocabulary, WayOut};
    /// struct Flags;
    /// impl Vocabulary for Flags {
    ///     fn parameter(&self, p: Parameter) -> String { format!("--{}", p.name()) }
    ///     fn resume(&self, operation: &str, target: &str) -> String {
    ///         format!("uuidforge db {operation} {target} --resume")
    ///     }
    /// }
    /// let e = DbError::refusal("table", Refusal::new(Reason::StaysOnOldColumn, "the label is computed from the key")
    ///     .way_out(WayOut::Regenerate { column: "parts.label".into() }));
    /// assert_eq!(e.rendered(&Flags), "table: the label is computed from the key: compute it again over the new column (--regenerate parts.label)");
    /// assert_eq!(e.to_string(), e.rendered(&Plain));
    /// ```
    pub fn rendered(&self, vocabulary: &dyn Vocabulary) -> String {
        // A message that already names its context says it once.
        let message = self
            .message
            .strip_prefix(self.context.as_str())
            .and_then(|m| m.strip_prefix(": "))
            .unwrap_or(&self.message);
        let mut out = format!("{}: {message}", self.context);
        if let ErrorKind::Server { sqlstate } = &self.kind {
            out.push_str(&format!(" (SQLSTATE {sqlstate})"));
        }
        if let Some(refusal) = self.refusal.as_deref().filter(|r| !r.ways_out.is_empty()) {
            out.push_str(refusal.joined);
            out.push_str(&refusal.ways_out_in(vocabulary));
        }
        if let Some(hint) = &self.hint {
            out.push_str(&format!("\n({hint})"));
        }
        out
    }

    /// A change refused before anything ran, for `refusal`'s reason: its
    /// words the message, its reason and ways out kept typed.
    pub fn refusal(context: impl Into<String>, refusal: Refusal) -> DbError {
        let kind = if refusal.reason == Reason::InvalidValue {
            ErrorKind::Invalid
        } else {
            ErrorKind::Refused
        };
        DbError {
            refusal: Some(Box::new(refusal.clone())),
            ..DbError::of(kind, context, refusal.why)
        }
    }

    /// The reason of a refusal, when the error is one.
    pub fn reason(&self) -> Option<Reason> {
        self.refusal.as_ref().map(|r| r.reason)
    }

    /// The ways out of a refusal (none for other errors).
    pub fn ways_out(&self) -> &[WayOut] {
        self.refusal.as_deref().map_or(&[], |r| &r.ways_out)
    }

    /// The same error with `way_out` among its ways out (an error that was
    /// no refusal becomes one of reason [`Reason::Other`]).
    pub fn with_way_out(mut self, way_out: WayOut) -> DbError {
        match self.refusal.as_deref_mut() {
            Some(r) => r.ways_out.push(way_out),
            None => {
                self.refusal = Some(Box::new(
                    Refusal::new(Reason::Other, self.message.clone()).way_out(way_out),
                ))
            }
        }
        self
    }

    /// Another process runs a change of the same tables now.
    pub fn busy(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Busy, context, message)
    }

    /// The same error, with what to do about it.
    pub fn with_hint(self, hint: impl Into<String>) -> DbError {
        DbError {
            hint: Some(hint.into()),
            ..self
        }
    }

    /// The request names something the database does not have.
    pub fn not_found(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::NotFound, context, message)
    }

    /// A value the caller gave is not one the operation takes.
    pub fn invalid(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Invalid, context, message)
    }

    /// A shape the operation does not change, refused before anything ran.
    pub fn refused(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Refused, context, message)
    }

    /// The database changed since the plan was printed.
    pub fn schema_changed(operation: impl Into<String>) -> DbError {
        DbError::of(
            ErrorKind::SchemaChanged,
            operation,
            "the database changed since the plan was printed (nothing was changed: plan again)",
        )
    }

    /// Checks failed after the change: `failed` are the failed checks.
    pub fn verification_failed(context: impl Into<String>, failed: Vec<String>) -> DbError {
        let message = failed.join("; ");
        DbError::of(ErrorKind::VerificationFailed { failed }, context, message)
    }

    /// Rows changed since the tool recorded them.
    pub fn conflict(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Conflict, context, message)
    }

    /// The server could not be reached or the connection broke.
    pub fn connection(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Connection, context, message)
    }

    /// The server refused a statement with `sqlstate`.
    pub fn server(
        context: impl Into<String>,
        message: impl Into<String>,
        sqlstate: impl Into<String>,
    ) -> DbError {
        let sqlstate = sqlstate.into();
        DbError::of(ErrorKind::Server { sqlstate }, context, message)
    }

    /// A program outside the server or a file failed.
    pub fn tool(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Tool, context, message)
    }

    /// An answer the tool could not read.
    pub fn unreadable(context: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError::of(ErrorKind::Unreadable, context, message)
    }

    /// The same error, of the same kind, inside `context` (the step that
    /// read what failed): `context: inner context: message`.
    pub fn within(self, context: impl Into<String>) -> DbError {
        DbError {
            kind: self.kind,
            context: context.into(),
            message: format!("{}: {}", self.context, self.message),
            hint: self.hint,
            refusal: self.refusal,
        }
    }

    /// The server's SQLSTATE, when the server refused a statement.
    pub fn sqlstate(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Server { sqlstate } => Some(sqlstate),
            _ => None,
        }
    }

    /// Whether the caller can fix it by asking differently: a name the
    /// database lacks, a bad value, a refused shape, or the server's own
    /// `invalid_parameter_value` (22023) for a value passed through.
    pub fn is_caller_mistake(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::NotFound | ErrorKind::Invalid | ErrorKind::Refused
        ) || self.sqlstate() == Some("22023")
    }

    /// The role lacks a privilege (SQLSTATE 42501).
    pub fn is_permission_denied(&self) -> bool {
        self.sqlstate() == Some("42501")
    }

    /// The HTTP status a route answers it with: the caller's mistake 400,
    /// a privilege the role lacks 403, a database that moved under the
    /// request 409, a database that did not answer 502, one busy or short
    /// of resources (try again) 503, a statement past its time 504, and
    /// anything else the server or a tool refused 500 — the SQLSTATE named
    /// in the message, never a bare gateway error for what the server said.
    pub fn http_status(&self) -> u16 {
        match &self.kind {
            _ if self.is_caller_mistake() => 400,
            _ if self.is_permission_denied() => 403,
            ErrorKind::SchemaChanged | ErrorKind::Conflict | ErrorKind::Busy => 409,
            ErrorKind::Connection => 502,
            ErrorKind::Server { sqlstate } => match sqlstate.as_str() {
                "57014" => 504,
                s if s.starts_with("08") => 502,
                s if s.starts_with("53")
                    || s.starts_with("57P")
                    || matches!(s, "55P03" | "40001" | "40P01") =>
                {
                    503
                }
                _ => 500,
            },
            _ => 500,
        }
    }

    /// The command line's exit code: 3 when another process runs a change
    /// of the same tables (nothing was tried: try again later), else 2,
    /// like every failure of a command as a whole (1 is kept for "ran, and
    /// found nothing" or "not valid").
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            ErrorKind::Busy => 3,
            _ => 2,
        }
    }
}

/// Why a change is refused before anything runs: what a caller or a test
/// decides on (the message says it in words, naming the object).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A refusal no other reason names.
    Other,
    /// A value given for a parameter is not one it takes.
    InvalidValue,
    /// What is named is not a table the change takes (a view, a partition).
    NotATable,
    /// The table has no primary key, or no one key column.
    NoKey,
    /// The key's type is not one the change reads.
    KeyType,
    /// A name the change would make is taken.
    NameTaken,
    /// Rows live on other servers (foreign tables), out of reach of one
    /// transaction here.
    ElsewhereRows,
    /// A foreign key over a changed column that does not reference the key
    /// (a reference to a reference, or to other columns of the table).
    OtherForeignKey,
    /// An index or constraint over a changed column that would not hold
    /// over the new type.
    CannotMoveToUuid,
    /// An object tied to a changed column that cannot move with it (a
    /// policy, a trigger, statistics, a rule, a generated column, a
    /// publication's row filter, a function body): it would stay on the
    /// old column.
    StaysOnOldColumn,
    /// A definition compares a changed column with what no key map
    /// translates (a value computed at run time, an order of old keys).
    OldKeyNotTranslatable,
    /// A view over the changed columns was not read, or compares one with
    /// a column the change leaves.
    View,
    /// A column without a foreign key holds only the key's values.
    UndeclaredReference,
    /// Copies of the keys outside their references are not named.
    CopiesNotNamed,
    /// What a change in batches cannot do while writers go on (one
    /// transaction can).
    NotInBatches,
    /// Another change is under way on the same tables.
    UnderWay,
    /// Nothing to complete, or something still uses what would go.
    StillUsed,
}

/// A parameter of an operation: what a way out asks to give or to leave
/// out, which each front end spells its own way ([`Vocabulary`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Parameter {
    /// Columns migrated as references, or rewritten as copies of a uuid
    /// key.
    Also,
    /// Columns left as they are.
    Leave,
    /// Generated columns computed again over the new columns.
    Regenerate,
    /// Where copies of a uuid key are looked for.
    CopiesIn,
    /// No search for copies.
    NoCopySearch,
    /// A change in batches of about this many rows.
    BatchSize,
    /// The key column of a primary key of several columns.
    Column,
    /// The column whose time orders the new keys.
    OrderBy,
    /// The name kept for the old values.
    KeepOld,
    /// The new keys another database gave.
    KeysFrom,
    /// The secret of the new keys.
    KeyFile,
    /// A change in batches under way, taken up again.
    Resume,
    /// A migration completed: the old values dropped.
    Complete,
    /// The change run, not only planned.
    Apply,
    /// The new key given no default (the application makes the keys).
    NoDefault,
    /// The members of a fleet of servers.
    Fleet,
    /// A table whose rows differ on each member of a fleet.
    Sharded,
    /// Values outside the declared references rewritten by a merge.
    Implicit,
    /// The schema something is installed into.
    Schema,
    /// The UUID whose row a merge keeps.
    Keep,
}

impl Parameter {
    /// Its name: `also`, `batch-size`.
    pub fn name(self) -> &'static str {
        match self {
            Parameter::Also => "also",
            Parameter::Leave => "leave",
            Parameter::Regenerate => "regenerate",
            Parameter::CopiesIn => "copies-in",
            Parameter::NoCopySearch => "no-copy-search",
            Parameter::BatchSize => "batch-size",
            Parameter::Column => "column",
            Parameter::OrderBy => "order-by",
            Parameter::KeepOld => "keep-old",
            Parameter::KeysFrom => "keys-from",
            Parameter::KeyFile => "key-file",
            Parameter::Resume => "resume",
            Parameter::Complete => "complete",
            Parameter::Apply => "apply",
            Parameter::NoDefault => "no-default",
            Parameter::Fleet => "fleet",
            Parameter::Sharded => "sharded",
            Parameter::Implicit => "implicit",
            Parameter::Schema => "schema",
            Parameter::Keep => "keep",
        }
    }
}

/// A way out of a refusal: what the caller can ask instead, by the
/// parameter that asks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "way_out", rename_all = "snake_case")]
pub enum WayOut {
    /// Migrate `column` as a reference to the key (no foreign key made).
    AsReference {
        /// `TABLE.COLUMN` or `SCHEMA.TABLE.COLUMN`, as typed.
        column: String,
    },
    /// Rewrite the copies of the keys in `column` to the new keys, in
    /// place.
    AsCopy {
        /// `TABLE.COLUMN` or `SCHEMA.TABLE.COLUMN`, as typed.
        column: String,
    },
    /// Leave `column` as it is.
    Leave {
        /// `TABLE.COLUMN` or `SCHEMA.TABLE.COLUMN`, as typed.
        column: String,
    },
    /// Compute the generated `column` again over the new column.
    Regenerate {
        /// `TABLE.COLUMN` or `SCHEMA.TABLE.COLUMN`, as typed.
        column: String,
    },
    /// Look for copies in fewer schemas or tables.
    NarrowCopySearch,
    /// Do not look for copies.
    SkipCopySearch,
    /// Run the change in one transaction, not in batches.
    OneTransaction,
    /// Name the key column of the primary key.
    NameKeyColumn,
    /// Order the new keys by `column`'s time.
    OrderBy {
        /// The column, as typed.
        column: String,
    },
    /// Keep the old values under another name.
    KeepOldAs,
    /// Give every row the key another database gave it.
    KeysFrom,
    /// Run the same migration with the change's key file.
    SameKeyFile,
    /// Complete the change under way: `operation` of `target` taken up
    /// again.
    Resume {
        /// The operation (`migrate-key`).
        operation: String,
        /// What it is about, as named again (`public.customers`).
        target: String,
    },
    /// Migrate `target`'s key first.
    MigrateFirst {
        /// The table, as named again.
        target: String,
    },
    /// Migrate the tables whose rows live on other servers there, the
    /// members of a fleet together.
    AcrossFleet {
        /// Whether each member holds its own rows.
        sharded: bool,
    },
    /// Give the new key no default: the application makes the keys.
    NoDefault,
    /// Install a UUIDv7 generator: the extension, or its SQL edition
    /// where extensions are refused.
    InstallGenerator,
    /// Merge without rewriting values outside the declared references.
    MergeWithoutImplicit,
    /// Install it into another schema.
    AnotherSchema,
    /// Keep the merged UUID's own row, or name no survivor.
    KeepOwnRow {
        /// The UUID merged into.
        uuid: String,
    },
}

impl WayOut {
    /// The way out in words, its parameter spelled by `vocabulary`.
    pub fn rendered(&self, vocabulary: &dyn Vocabulary) -> String {
        let p = |parameter: Parameter| vocabulary.parameter(parameter);
        match self {
            WayOut::AsReference { column } => {
                format!("migrate it as a reference ({} {column})", p(Parameter::Also))
            }
            WayOut::AsCopy { column } => format!(
                "rewrite its copies to the new keys in place, other values and text kept ({} {column})",
                p(Parameter::Also)
            ),
            WayOut::Leave { column } => {
                format!("leave it as it is ({} {column})", p(Parameter::Leave))
            }
            WayOut::Regenerate { column } => format!(
                "compute it again over the new column ({} {column})",
                p(Parameter::Regenerate)
            ),
            WayOut::NarrowCopySearch => format!(
                "look for copies in fewer places ({} SCHEMA|TABLE)",
                p(Parameter::CopiesIn)
            ),
            WayOut::SkipCopySearch => {
                format!("do not look for copies ({})", p(Parameter::NoCopySearch))
            }
            WayOut::OneTransaction => format!(
                "migrate in one transaction (without {})",
                p(Parameter::BatchSize)
            ),
            WayOut::NameKeyColumn => {
                format!("name the key column ({} COLUMN)", p(Parameter::Column))
            }
            WayOut::OrderBy { column } => format!(
                "give the keys those times ({} {column})",
                p(Parameter::OrderBy)
            ),
            WayOut::KeepOldAs => format!(
                "keep the old values under another name ({} NAME)",
                p(Parameter::KeepOld)
            ),
            WayOut::KeysFrom => format!(
                "give each row the key it has in the other database ({} DB)",
                p(Parameter::KeysFrom)
            ),
            WayOut::SameKeyFile => format!(
                "run the same migration with this change's key file ({} FILE: the same rows get the same keys)",
                p(Parameter::KeyFile)
            ),
            WayOut::Resume { operation, target } => format!(
                "complete it with: {}",
                vocabulary.resume(operation, target)
            ),
            WayOut::MigrateFirst { target } => format!(
                "migrate its key first ({})",
                vocabulary.migrate(target)
            ),
            WayOut::AcrossFleet { sharded } => format!(
                "migrate the tables behind them on their servers, the members together ({} FILE{}), and this server's own tables apart",
                p(Parameter::Fleet),
                if *sharded {
                    format!(" with {}", p(Parameter::Sharded))
                } else {
                    String::new()
                }
            ),
            WayOut::NoDefault => format!(
                "give the new key no default when the application makes the keys ({})",
                p(Parameter::NoDefault)
            ),
            WayOut::InstallGenerator => format!(
                "install a generator: the extension (CREATE EXTENSION uuidforge), or its SQL edition where custom extensions are refused ({})",
                vocabulary.install_sql()
            ),
            WayOut::MergeWithoutImplicit => format!(
                "rewrite it by hand, or merge without {}",
                p(Parameter::Implicit)
            ),
            WayOut::AnotherSchema => format!(
                "install it into another schema ({} NAME)",
                p(Parameter::Schema)
            ),
            WayOut::KeepOwnRow { uuid } => format!(
                "keep its own row ({} {uuid}), or name no survivor",
                p(Parameter::Keep)
            ),
        }
    }
}

/// How a front end spells what the library names: its parameters, and the
/// command that takes a change up again.
pub trait Vocabulary {
    /// `parameter` as this front end takes it (`--also`, `also`).
    fn parameter(&self, parameter: Parameter) -> String;
    /// What completes the change `operation` of `target` under way.
    fn resume(&self, operation: &str, target: &str) -> String;
    /// What migrates `target`'s key.
    fn migrate(&self, target: &str) -> String {
        format!("migrate-key of {target}")
    }
    /// What installs the SQL edition of the generator.
    fn install_sql(&self) -> String {
        "install-sql".into()
    }
}

/// The library's own words: each parameter by its name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plain;

impl Vocabulary for Plain {
    fn parameter(&self, parameter: Parameter) -> String {
        parameter.name().to_string()
    }

    fn resume(&self, operation: &str, target: &str) -> String {
        format!("{operation} of {target}, resumed")
    }
}

/// A change refused before anything ran: why in words (the object named,
/// no parameter of any front end spelled), the reason typed, the ways out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// Why, in words.
    pub why: String,
    /// Why, typed.
    pub reason: Reason,
    /// What the caller can ask instead.
    pub ways_out: Vec<WayOut>,
    /// What stands between the message and its ways out (`": "`, `"; "`).
    #[serde(skip)]
    pub joined: &'static str,
    /// How the ways out join (`" or "`, `"; "`).
    #[serde(skip)]
    pub between: &'static str,
}

impl Refusal {
    /// A refusal for `reason`, said as `why`.
    pub fn new(reason: Reason, why: impl Into<String>) -> Refusal {
        Refusal {
            why: why.into(),
            reason,
            ways_out: Vec::new(),
            joined: ": ",
            between: ", or ",
        }
    }

    /// The same with `way_out` among its ways out.
    pub fn way_out(mut self, way_out: WayOut) -> Refusal {
        self.ways_out.push(way_out);
        self
    }

    /// The same with its ways out after `joined` and between each other
    /// `between`.
    pub fn joined(mut self, joined: &'static str, between: &'static str) -> Refusal {
        self.joined = joined;
        self.between = between;
        self
    }

    /// Its ways out in words, joined.
    pub fn ways_out_in(&self, vocabulary: &dyn Vocabulary) -> String {
        self.ways_out
            .iter()
            .map(|w| w.rendered(vocabulary))
            .collect::<Vec<_>>()
            .join(self.between)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_statuses_in_one_place() {
        assert_eq!(DbError::invalid("batch-size", "0").http_status(), 400);
        assert_eq!(DbError::refused("table", "a view").http_status(), 400);
        assert_eq!(DbError::schema_changed("rename").http_status(), 409);
        assert_eq!(DbError::conflict("unmerge", "row").http_status(), 409);
        let failed = DbError::verification_failed("verify", vec!["orphans: 3".into()]);
        assert_eq!(failed.http_status(), 500);
        assert_eq!(failed.to_string(), "verify: orphans: 3");
        let server = DbError::server("scan", "permission denied", "42501");
        assert!(server.is_permission_denied());
        assert_eq!(server.http_status(), 403);
        assert_eq!(DbError::connection("connect", "refused").http_status(), 502);
        assert_eq!(
            DbError::server("scan", "canceled", "57014").http_status(),
            504
        );
        assert_eq!(
            DbError::server("scan", "out of memory", "53200").http_status(),
            503
        );
        assert_eq!(
            DbError::server("scan", "unexpected chunk", "XX001").http_status(),
            500
        );
        assert_eq!(
            server.to_string(),
            "scan: permission denied (SQLSTATE 42501)"
        );
        assert!(DbError::server("find", "bad", "22023").is_caller_mistake());
        assert_eq!(DbError::connection("connect", "refused").exit_code(), 2);
        let busy = DbError::busy("public.t", "being run by another process (pid 7)");
        assert_eq!((busy.exit_code(), busy.http_status()), (3, 409));
        let hinted = DbError::refused("table", "under way").with_hint("complete it with --resume");
        assert_eq!(
            hinted.to_string(),
            "table: under way\n(complete it with --resume)"
        );
    }

    #[test]
    fn a_message_naming_its_context_says_it_once() {
        let e = DbError::not_found("column", "column: no column x in public.t");
        assert_eq!(e.to_string(), "column: no column x in public.t");
    }
}

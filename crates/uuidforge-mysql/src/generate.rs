//! The generating functions: `uuidv7()`, `uuidv7(shift_ms)`,
//! `uuidv7_bin()`, `uuidv7_at(at)`, `uuidv7_from(at, key)`. Each writes
//! its result into the call's own buffer (no allocation per row).

use crate::input::unix_ms_of;
use std::panic::{catch_unwind, AssertUnwindSafe};
use udf::prelude::*;
use uuid::Uuid;
use uuidforge::generator::{GeneratorConfig, SharedGenerator, V7Generator};

/// A UUID's canonical text written into `buf`.
pub(crate) fn text(buf: &mut [u8; 36], id: Uuid) -> &str {
    id.hyphenated().encode_lower(buf)
}

/// `Ok` when `args` has one of `counts` arguments, else the message naming
/// the function's signatures.
pub(crate) fn arity(args: &ArgList<Init>, counts: &[usize], signature: &str) -> Result<(), String> {
    if counts.contains(&args.len()) {
        Ok(())
    } else {
        Err(format!(
            "{signature}: expected {}, got {} argument(s)",
            counts
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" or "),
            args.len()
        ))
    }
}

/// `body` run without letting a panic reach the server: NULL instead.
pub(crate) fn guarded<T>(body: impl FnOnce() -> Option<T>) -> Option<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(None)
}

/// A whole number from an argument: an integer, or a decimal, double or
/// text that is one (`'x'` is none, not 0).
fn integer_of(arg: &SqlResult) -> Option<i64> {
    match arg {
        SqlResult::Int(v) => *v,
        SqlResult::Real(Some(v)) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(*v as i64),
        SqlResult::Decimal(Some(text)) => text.trim().trim_end_matches(".0").parse().ok(),
        SqlResult::String(Some(bytes)) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// `uuidv7()` and `uuidv7(shift_ms)`: text.
pub struct Uuidv7 {
    buf: [u8; 36],
    /// The generator of the last shift: a statement with a constant shift
    /// gets increasing values.
    shifted: Option<(i64, SharedGenerator)>,
}

#[register(name = "uuidv7")]
impl BasicUdf for Uuidv7 {
    type Returns<'a> = Option<&'a str>;

    fn init(cfg: &UdfCfg<Init>, args: &ArgList<Init>) -> Result<Self, String> {
        arity(args, &[0, 1], "uuidv7() or uuidv7(shift_ms)")?;
        cfg.set_max_len(36);
        cfg.set_maybe_null(true);
        Ok(Self {
            buf: [0; 36],
            shifted: None,
        })
    }

    fn process<'a>(
        &'a mut self,
        _cfg: &UdfCfg<Process>,
        args: &ArgList<Process>,
        _error: Option<NonZeroU8>,
    ) -> Result<Self::Returns<'a>, ProcessError> {
        let shift = args.get(0).map(|a| integer_of(&a.value()));
        let shifted = &mut self.shifted;
        let id = guarded(|| match shift {
            None => Some(uuidforge::v7()),
            Some(None) => None,
            Some(Some(ms)) => {
                if !matches!(shifted, Some((s, _)) if *s == ms) {
                    let config = GeneratorConfig {
                        shift_ms: ms,
                        ..GeneratorConfig::default()
                    };
                    *shifted = Some((ms, SharedGenerator::new(config).ok()?));
                }
                shifted.as_ref()?.1.generate().ok()
            }
        });
        Ok(id.map(|id| text(&mut self.buf, id)))
    }
}

/// `uuidv7_bin()`: 16 bytes, RFC order.
#[derive(Debug, Default)]
pub struct Uuidv7Bin {
    buf: [u8; 16],
}

#[register(name = "uuidv7_bin")]
impl BasicUdf for Uuidv7Bin {
    type Returns<'a> = &'a [u8];

    fn init(cfg: &UdfCfg<Init>, args: &ArgList<Init>) -> Result<Self, String> {
        arity(args, &[0], "uuidv7_bin()")?;
        cfg.set_max_len(16);
        Ok(Self::default())
    }

    fn process<'a>(
        &'a mut self,
        _cfg: &UdfCfg<Process>,
        _args: &ArgList<Process>,
        _error: Option<NonZeroU8>,
    ) -> Result<Self::Returns<'a>, ProcessError> {
        self.buf = *guarded(|| Some(uuidforge::v7()))
            .ok_or(ProcessError)?
            .as_bytes();
        Ok(&self.buf)
    }
}

/// `uuidv7_at(at)`: a UUIDv7 of time `at`, increasing within a statement.
pub struct Uuidv7At {
    buf: [u8; 36],
    generator: Option<V7Generator>,
}

#[register(name = "uuidv7_at")]
impl BasicUdf for Uuidv7At {
    type Returns<'a> = Option<&'a str>;

    fn init(cfg: &UdfCfg<Init>, args: &ArgList<Init>) -> Result<Self, String> {
        arity(
            args,
            &[1],
            "uuidv7_at(at: DATETIME text in UTC or Unix seconds)",
        )?;
        cfg.set_max_len(36);
        cfg.set_maybe_null(true);
        Ok(Self {
            buf: [0; 36],
            generator: V7Generator::new(GeneratorConfig::default()).ok(),
        })
    }

    fn process<'a>(
        &'a mut self,
        _cfg: &UdfCfg<Process>,
        args: &ArgList<Process>,
        _error: Option<NonZeroU8>,
    ) -> Result<Self::Returns<'a>, ProcessError> {
        let at = args.get(0).and_then(|a| unix_ms_of(&a.value()));
        let generator = &mut self.generator;
        let id = guarded(|| generator.as_mut()?.generate_at(at?).ok());
        Ok(id.map(|id| text(&mut self.buf, id)))
    }
}

/// `uuidv7_from(at, key)`: the one UUIDv7 of (`at`, `key`); an integer
/// key as PostgreSQL's `bigint` form (ordered by the key within a
/// millisecond), any other as its bytes.
pub struct Uuidv7From {
    buf: [u8; 36],
}

#[register(name = "uuidv7_from")]
impl BasicUdf for Uuidv7From {
    type Returns<'a> = Option<&'a str>;

    fn init(cfg: &UdfCfg<Init>, args: &ArgList<Init>) -> Result<Self, String> {
        arity(args, &[2], "uuidv7_from(at, key)")?;
        cfg.set_max_len(36);
        cfg.set_maybe_null(true);
        Ok(Self { buf: [0; 36] })
    }

    fn process<'a>(
        &'a mut self,
        _cfg: &UdfCfg<Process>,
        args: &ArgList<Process>,
        _error: Option<NonZeroU8>,
    ) -> Result<Self::Returns<'a>, ProcessError> {
        let at = args.get(0).and_then(|a| unix_ms_of(&a.value()));
        let key = args.get(1).map(|a| a.value());
        let id = guarded(|| match key? {
            SqlResult::Int(Some(k)) => {
                uuidforge::generator::v7_from_ordered(at?, k as u64, b"").ok()
            }
            SqlResult::String(Some(k)) => uuidforge::generator::v7_from_key(at?, k).ok(),
            SqlResult::Decimal(Some(k)) => {
                uuidforge::generator::v7_from_key(at?, k.as_bytes()).ok()
            }
            _ => None,
        });
        Ok(id.map(|id| text(&mut self.buf, id)))
    }
}

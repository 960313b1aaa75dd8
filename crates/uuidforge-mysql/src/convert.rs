//! The reading and converting functions: a UUIDv7's time, the bounds of a
//! millisecond, and the 16-byte orders (RFC, MySQL's `UUID_TO_BIN(u, 1)`).

use crate::generate::{arity, guarded, text};
use crate::input::{bytes_of, unix_ms_of, uuid_of};
use std::fmt::Write;
use udf::prelude::*;
use uuid::Uuid;
use uuidforge::sortorder::{mysql_bin_to_uuid, mysql_uuid_to_bin};

/// `uuid_v7_timestamp(u)`: the time a UUIDv7 carries, `DATETIME(3)` text
/// in UTC; NULL for any other version.
#[derive(Debug, Default)]
pub struct UuidV7Timestamp {
    buf: String,
}

#[register(name = "uuid_v7_timestamp")]
impl BasicUdf for UuidV7Timestamp {
    type Returns<'a> = Option<&'a str>;

    fn init(cfg: &UdfCfg<Init>, args: &ArgList<Init>) -> Result<Self, String> {
        arity(args, &[1], "uuid_v7_timestamp(uuid)")?;
        cfg.set_max_len(24);
        cfg.set_maybe_null(true);
        Ok(Self::default())
    }

    fn process<'a>(
        &'a mut self,
        _cfg: &UdfCfg<Process>,
        args: &ArgList<Process>,
        _error: Option<NonZeroU8>,
    ) -> Result<Self::Returns<'a>, ProcessError> {
        let id = args.get(0).and_then(|a| uuid_of(&a.value()));
        let buf = &mut self.buf;
        let done = guarded(|| {
            let id = id.filter(|u| u.get_version_num() == 7)?;
            // The first 48 bits: Unix milliseconds.
            let ms = (u128::from_be_bytes(*id.as_bytes()) >> 80) as i64;
            let at = chrono::DateTime::from_timestamp_millis(ms)?;
            buf.clear();
            write!(buf, "{}", at.format("%Y-%m-%d %H:%M:%S%.3f")).ok()?;
            Some(())
        });
        Ok(done.map(|()| self.buf.as_str()))
    }
}

/// The lowest (`upper = false`) or highest UUIDv7 of a millisecond.
fn bound(at: Option<u64>, upper: bool) -> Option<Uuid> {
    let at = at?;
    if upper {
        uuidforge::bounds::highest_v7(at).ok()
    } else {
        uuidforge::bounds::lowest_v7(at).ok()
    }
}

macro_rules! one_argument {
    ($(#[$doc:meta])* $name:ident, $sql:literal, $signature:literal, $len:literal, |$arg:ident| $body:expr) => {
        $(#[$doc])*
        pub struct $name {
            buf: [u8; 36],
        }

        #[register(name = $sql)]
        impl BasicUdf for $name {
            type Returns<'a> = Option<&'a [u8]>;

            fn init(cfg: &UdfCfg<Init>, args: &ArgList<Init>) -> Result<Self, String> {
                arity(args, &[1], $signature)?;
                cfg.set_max_len($len);
                cfg.set_maybe_null(true);
                Ok(Self { buf: [0; 36] })
            }

            fn process<'a>(
                &'a mut self,
                _cfg: &UdfCfg<Process>,
                args: &ArgList<Process>,
                _error: Option<NonZeroU8>,
            ) -> Result<Self::Returns<'a>, ProcessError> {
                let value = args.get(0).map(|a| a.value());
                let out: Option<Out> = guarded(|| {
                    let $arg = value.as_ref()?;
                    $body
                });
                Ok(out.map(|o| o.write(&mut self.buf)))
            }
        }
    };
}

/// A result: a UUID's text, or 16 bytes.
enum Out {
    Text(Uuid),
    Bytes([u8; 16]),
}

impl Out {
    fn write(self, buf: &mut [u8; 36]) -> &[u8] {
        match self {
            Out::Text(id) => text(buf, id).as_bytes(),
            Out::Bytes(b) => {
                buf[..16].copy_from_slice(&b);
                &buf[..16]
            }
        }
    }
}

one_argument!(
    /// `uuidv7_lower(at)`: the lowest UUIDv7 of the millisecond `at`.
    UuidV7Lower, "uuidv7_lower", "uuidv7_lower(at)", 36,
    |at| bound(unix_ms_of(at), false).map(Out::Text)
);
one_argument!(
    /// `uuidv7_upper(at)`: the highest UUIDv7 of the millisecond `at`.
    UuidV7Upper, "uuidv7_upper", "uuidv7_upper(at)", 36,
    |at| bound(unix_ms_of(at), true).map(Out::Text)
);
one_argument!(
    /// `uuid_to_rfc_bin(u)`: 16 bytes in RFC order.
    UuidToRfcBin, "uuid_to_rfc_bin", "uuid_to_rfc_bin(uuid)", 16,
    |u| uuid_of(u).map(|id| Out::Bytes(*id.as_bytes()))
);
one_argument!(
    /// `uuid_to_swapped_bin(u)`: 16 bytes in MySQL's `UUID_TO_BIN(u, 1)`
    /// order (the v1 time fields swapped: a v7 loses its time order).
    UuidToSwappedBin, "uuid_to_swapped_bin", "uuid_to_swapped_bin(uuid)", 16,
    |u| uuid_of(u).map(|id| Out::Bytes(mysql_uuid_to_bin(&id, true)))
);
one_argument!(
    /// `uuid_from_rfc_bin(b)`: the text of 16 bytes in RFC order.
    UuidFromRfcBin, "uuid_from_rfc_bin", "uuid_from_rfc_bin(binary16)", 36,
    |b| bytes_of(b).map(|b| Out::Text(Uuid::from_bytes(b)))
);
one_argument!(
    /// `uuid_from_swapped_bin(b)`: the text of 16 bytes in MySQL's
    /// swapped order.
    UuidFromSwappedBin, "uuid_from_swapped_bin", "uuid_from_swapped_bin(binary16)", 36,
    |b| bytes_of(b).map(|b| Out::Text(mysql_bin_to_uuid(b, true)))
);

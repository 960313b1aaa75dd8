//! Sort-order adapters for stores that do not compare UUIDs as big-endian
//! bytes (RFC 9562 §6.11 assumes they do).
//!
//! Each adapter maps a UUID to the 16 bytes an application hands to the
//! store, such that the store's own comparison of the handed values is the
//! UUID order — so UUIDv7 keys stay time-ordered there — and maps them back.
//!
//! | adapter | what is handed over | the store compares |
//! |---|---|---|
//! | [`SqlServer`] | a .NET `Guid` byte array (`uniqueidentifier`) | bytes 10–15, then 8–9, 6–7, 4–5, 0–3 (`SqlGuid`) |
//! | [`DotNetGuid`] | `Guid.ToByteArray()` layout (first three fields little-endian) | fields as unsigned integers (`Guid.CompareTo`) |
//! | [`MySqlSwap`] | the UUID given to `UUID_TO_BIN(x, 1)` | the stored `BINARY(16)` bytes |

use std::cmp::Ordering;
use uuid::Uuid;

/// A store whose UUID comparison differs from byte order.
pub trait StoreOrder {
    /// Name for messages and the CLI.
    const NAME: &'static str;

    /// The 16 bytes to hand to the store for `uuid`.
    fn encode(uuid: &Uuid) -> [u8; 16];

    /// The UUID back from handed bytes (inverse of [`StoreOrder::encode`]).
    fn decode(handed: [u8; 16]) -> Uuid;

    /// How the store orders two handed values.
    fn compare(a: &[u8; 16], b: &[u8; 16]) -> Ordering;
}

/// Swaps the first three fields between big-endian (RFC) and little-endian
/// (.NET `Guid`, Microsoft COM) order. Its own inverse.
///
/// ```
/// let id = uuid::uuid!("00112233-4455-6677-8899-aabbccddeeff");
/// assert_eq!(uuidforge::sortorder::swap_guid_endianness(*id.as_bytes()),
///            [0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]);
/// ```
pub const fn swap_guid_endianness(b: [u8; 16]) -> [u8; 16] {
    [
        b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13],
        b[14], b[15],
    ]
}

/// .NET `Guid` byte order (`new Guid(byte[])`, `Guid.ToByteArray()`).
///
/// ```
/// use uuidforge::sortorder::{DotNetGuid, StoreOrder};
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// let bytes = DotNetGuid::encode(&id); // new Guid(bytes).ToString() is the same text
/// assert_eq!(&bytes[..4], &[0xe2, 0x22, 0x7f, 0x01]);
/// assert_eq!(DotNetGuid::decode(bytes), id);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DotNetGuid;

impl StoreOrder for DotNetGuid {
    const NAME: &'static str = "dotnet";

    fn encode(uuid: &Uuid) -> [u8; 16] {
        swap_guid_endianness(*uuid.as_bytes())
    }

    fn decode(handed: [u8; 16]) -> Uuid {
        Uuid::from_bytes(swap_guid_endianness(handed))
    }

    /// `Guid.CompareTo`: `_a` (u32), `_b`, `_c` (u16), then `_d`..`_k`, each
    /// unsigned, read from the little-endian byte array.
    fn compare(a: &[u8; 16], b: &[u8; 16]) -> Ordering {
        let fields = |g: &[u8; 16]| {
            (
                u32::from_le_bytes([g[0], g[1], g[2], g[3]]),
                u16::from_le_bytes([g[4], g[5]]),
                u16::from_le_bytes([g[6], g[7]]),
                <[u8; 8]>::try_from(&g[8..]).expect("8 bytes"),
            )
        };
        fields(a).cmp(&fields(b))
    }
}

/// SQL Server `uniqueidentifier`: `SqlGuid` compares the .NET byte array at
/// indexes 10, 11, 12, 13, 14, 15, 8, 9, 6, 7, 4, 5, 0, 1, 2, 3, most
/// significant first. The adapter puts the UUID's bytes at those positions.
/// The value SQL Server shows is then not the UUID's text; decode it back
/// with [`SqlServer::decode`] (from the bytes) or [`SqlServer::from_shown`]
/// (from the text SQL Server prints).
///
/// ```
/// use uuidforge::sortorder::{SqlServer, StoreOrder};
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// let shown = SqlServer::shown(&id);
/// assert_eq!(shown.to_string(), "8f39070c-0cdc-c498-7cc3-017f22e279b0");
/// assert_eq!(SqlServer::from_shown(&shown), id);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SqlServer;

/// `SqlGuid`'s byte significance order.
const SQL_SERVER_ORDER: [usize; 16] = [10, 11, 12, 13, 14, 15, 8, 9, 6, 7, 4, 5, 0, 1, 2, 3];

impl SqlServer {
    /// The text SQL Server prints for the stored value of `uuid`.
    pub fn shown(uuid: &Uuid) -> Uuid {
        DotNetGuid::decode(Self::encode(uuid))
    }

    /// The UUID from the text SQL Server prints.
    pub fn from_shown(shown: &Uuid) -> Uuid {
        Self::decode(DotNetGuid::encode(shown))
    }
}

impl StoreOrder for SqlServer {
    const NAME: &'static str = "sqlserver";

    fn encode(uuid: &Uuid) -> [u8; 16] {
        let src = uuid.as_bytes();
        let mut guid = [0u8; 16];
        for (i, &pos) in SQL_SERVER_ORDER.iter().enumerate() {
            guid[pos] = src[i];
        }
        guid
    }

    fn decode(handed: [u8; 16]) -> Uuid {
        let mut out = [0u8; 16];
        for (i, &pos) in SQL_SERVER_ORDER.iter().enumerate() {
            out[i] = handed[pos];
        }
        Uuid::from_bytes(out)
    }

    fn compare(a: &[u8; 16], b: &[u8; 16]) -> Ordering {
        SQL_SERVER_ORDER
            .iter()
            .map(|&i| a[i].cmp(&b[i]))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

/// MySQL `UUID_TO_BIN(x, swap_flag)`: with the flag set, the time-high and
/// time-low groups trade places (made for UUIDv1), which breaks v7 order.
///
/// ```
/// let id = uuid::uuid!("00112233-4455-6677-8899-aabbccddeeff");
/// let stored = uuidforge::sortorder::mysql_uuid_to_bin(&id, true);
/// assert_eq!(uuid::Uuid::from_bytes(stored).to_string(), "66774455-0011-2233-8899-aabbccddeeff");
/// assert_eq!(uuidforge::sortorder::mysql_bin_to_uuid(stored, true), id);
/// ```
pub const fn mysql_uuid_to_bin(uuid: &Uuid, swap: bool) -> [u8; 16] {
    let b = *uuid.as_bytes();
    if !swap {
        return b;
    }
    [
        b[6], b[7], b[4], b[5], b[0], b[1], b[2], b[3], b[8], b[9], b[10], b[11], b[12], b[13],
        b[14], b[15],
    ]
}

/// MySQL `BIN_TO_UUID(b, swap_flag)`, the inverse of [`mysql_uuid_to_bin`].
pub const fn mysql_bin_to_uuid(b: [u8; 16], swap: bool) -> Uuid {
    if !swap {
        return Uuid::from_bytes(b);
    }
    Uuid::from_bytes([
        b[4], b[5], b[6], b[7], b[2], b[3], b[0], b[1], b[8], b[9], b[10], b[11], b[12], b[13],
        b[14], b[15],
    ])
}

/// For a MySQL schema that stores `UUID_TO_BIN(x, 1)`: hand over the value
/// whose swap is the UUID, so the stored bytes are the UUID's and sort by
/// time; `BIN_TO_UUID(b, 1)` then returns the handed value, which
/// [`StoreOrder::decode`] maps back. (For new schemas, `UUID_TO_BIN(x)`
/// without the flag already keeps v7 in order.)
#[derive(Debug, Clone, Copy)]
pub struct MySqlSwap;

impl StoreOrder for MySqlSwap {
    const NAME: &'static str = "mysql-swap";

    fn encode(uuid: &Uuid) -> [u8; 16] {
        *mysql_bin_to_uuid(*uuid.as_bytes(), true).as_bytes()
    }

    fn decode(handed: [u8; 16]) -> Uuid {
        Uuid::from_bytes(mysql_uuid_to_bin(&Uuid::from_bytes(handed), true))
    }

    /// The stored `BINARY(16)` compared byte by byte.
    fn compare(a: &[u8; 16], b: &[u8; 16]) -> Ordering {
        let stored = |x: &[u8; 16]| mysql_uuid_to_bin(&Uuid::from_bytes(*x), true);
        stored(a).cmp(&stored(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v7;
    use proptest::prelude::*;

    /// Time-ordered v7 values across field boundaries that matter to the
    /// stores: different milliseconds far apart and near, and one ms.
    fn v7_series() -> Vec<Uuid> {
        let mut out = Vec::new();
        for (i, ms) in [
            1_000u64,
            1_001,
            65_536,
            1 << 32,
            (1 << 32) + 1,
            1_700_000_000_000,
            1_700_000_000_001,
        ]
        .into_iter()
        .enumerate()
        {
            for k in 0..3u64 {
                out.push(
                    v7::from_unix_ms(ms, (k * 1000) as u16, (k << 40) | (7 - i as u64)).unwrap(),
                );
            }
        }
        out
    }

    fn keeps_v7_order<S: StoreOrder>() -> bool {
        let ids = v7_series();
        let handed: Vec<[u8; 16]> = ids.iter().map(S::encode).collect();
        handed
            .windows(2)
            .all(|w| S::compare(&w[0], &w[1]) == Ordering::Less)
            && handed.iter().zip(&ids).all(|(h, id)| S::decode(*h) == *id)
    }

    fn raw_bytes_keep_v7_order<S: StoreOrder>() -> bool {
        let ids = v7_series();
        ids.windows(2)
            .all(|w| S::compare(w[0].as_bytes(), w[1].as_bytes()) == Ordering::Less)
    }

    #[test]
    fn v7_stays_time_ordered_in_every_store() {
        assert!(keeps_v7_order::<SqlServer>());
        assert!(keeps_v7_order::<DotNetGuid>());
        assert!(keeps_v7_order::<MySqlSwap>());
    }

    #[test]
    fn without_the_adapter_order_breaks() {
        // The self-test is only meaningful if the stores really disagree with
        // byte order on raw v7 values.
        assert!(!raw_bytes_keep_v7_order::<SqlServer>());
        assert!(!raw_bytes_keep_v7_order::<MySqlSwap>());
        // A .NET Guid built from the UUID text compares like the text, but its
        // ToByteArray() bytes compared as bytes do not.
        let ids = v7_series();
        let as_bytes: Vec<[u8; 16]> = ids.iter().map(DotNetGuid::encode).collect();
        assert!(!as_bytes.windows(2).all(|w| w[0] < w[1]));
    }

    proptest! {
        #[test]
        fn adapters_are_order_isomorphisms(a in any::<[u8; 16]>(), b in any::<[u8; 16]>()) {
            let (x, y) = (Uuid::from_bytes(a), Uuid::from_bytes(b));
            prop_assert_eq!(SqlServer::compare(&SqlServer::encode(&x), &SqlServer::encode(&y)), x.cmp(&y));
            prop_assert_eq!(DotNetGuid::compare(&DotNetGuid::encode(&x), &DotNetGuid::encode(&y)), x.cmp(&y));
            prop_assert_eq!(MySqlSwap::compare(&MySqlSwap::encode(&x), &MySqlSwap::encode(&y)), x.cmp(&y));
            prop_assert_eq!(SqlServer::decode(SqlServer::encode(&x)), x);
            prop_assert_eq!(MySqlSwap::decode(MySqlSwap::encode(&x)), x);
            prop_assert_eq!(SqlServer::from_shown(&SqlServer::shown(&x)), x);
            prop_assert_eq!(mysql_bin_to_uuid(mysql_uuid_to_bin(&x, true), true), x);
        }
    }
}

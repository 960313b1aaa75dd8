//! # uuidforge
//!
//! UUIDv7 as the best key a database or distributed system can have:
//! every RFC 9562 layout (and the 2021 draft's), every text form users paste,
//! generator-aware decoding, UUID_192, boundary and partition helpers, and
//! sort-order adapters for stores that do not compare bytes.
//!
//! The currency is the [`uuid`] crate's [`Uuid`], so values flow into serde,
//! sqlx, tokio-postgres and diesel unchanged.
//!
//! ```
//! use uuidforge::{parser, fmt::Format, inspect::inspect};
//! let id = parser::parse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F").unwrap();
//! assert_eq!(Format::Base32.to_text(&id), "01FWHE4YDGFK1SHH6W1G60EECF");
//! let report = inspect(&id);
//! assert_eq!(report.version, 7);
//! assert_eq!(report.timestamp.unwrap().to_string(), "2022-02-22T19:22:22.000Z");
//! ```
//!
//! | module | RFC 9562 | what |
//! |---|---|---|
//! | [`fmt`], [`parser`], [`base32`], [`base32hex`] | §4 | text and binary forms |
//! | [`gregorian`] | §5.1, §5.6 | v1, v6 and conversion |
//! | [`v7`](mod@v7) | §5.7, §6.2 | v7 fields, Method 3 fraction |
//! | [`v8`] | §5.8, App. B | draft time layouts, B.1, B.2 |
//! | [`draft01`] | (draft §4.4) | the 2021 v7 layout |
//! | [`layout`] | §6.2 | generator-aware decoding and guessing |
//! | [`inspect`] | §4.1, §4.2 | everything about one value |
//! | [`uuid192`] | — | 128-bit UUID + 64-bit segment |
//! | [`bounds`] | §6.11 | boundary values, partition keys, DDL |
//! | [`sortorder`] | §6.11 | SQL Server, .NET, MySQL adapters |
//! | [`generator`] | §5.6–§5.8, §6.1–§6.3, §6.9 | UUIDv7 (and v6, v8) generators, profiles, policies |
//! | [`plausible`] | — | plausibility checks for client-supplied UUIDs |
//! | [`scan`] | §4 | UUIDs inside longer text (URLs, logs, JSON strings), every spelling |
//! | [`timestamp`] | §5.1, §5.6, §5.7 | decoded instants at their layout's precision; [`timestamp::IntoUnixMs`], the instants functions take |
//! | [`convert`] | §4, §6.11 | a parsed value to any output form |
//! | [`batch`] | §6.2 | batches of new UUIDs: validation, generator choice, `shift`/`at` syntax |
//! | [`classic`] | §5.3–§5.5 | v3, v4, v5 through the `uuid` crate |
//! | [`error`] | — | the error types: field or position, value, what was expected |
#![deny(missing_docs)]

/// The crate's README: its Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod bits;
mod hex;
#[cfg(target_arch = "x86_64")]
mod x86;

pub mod base32;
pub mod base32hex;
pub mod batch;
pub mod bounds;
pub mod convert;
pub mod draft01;
pub mod error;
pub mod fmt;
pub mod generator;
pub mod gregorian;
pub mod inspect;
pub mod layout;
pub mod parser;
pub mod plausible;
pub mod scan;
pub mod sortorder;
pub mod timestamp;
pub mod uuid192;
pub mod v7;
pub mod v8;

pub use error::{FieldError, ParseError};

/// The CPU tier the codecs' kernels run at on this machine:
/// `"avx512-vbmi"`, `"avx2"`, `"ssse3-bmi2"` or `"portable"` (every
/// non-x86-64 CPU). The best this CPU has, unless the environment variable
/// `UUIDFORGE_CPU_TIER` names a lower one (for benchmarking and testing the
/// lower tiers on one machine; a higher or unknown name changes nothing).
/// Benchmarks print it beside their figures.
///
/// ```
/// assert!(["avx512-vbmi", "avx2", "ssse3-bmi2", "portable"].contains(&uuidforge::cpu_tier()));
/// ```
pub fn cpu_tier() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        let t = x86::tier();
        x86::NAMES
            .iter()
            .find(|(n, _)| *n == t)
            .map_or("portable", |(_, name)| name)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        "portable"
    }
}
pub use generator::v7;
pub use uuid::Uuid;

/// Classic versions through the `uuid` crate (RFC 9562 §5.3–§5.5), so one
/// import covers every version.
pub mod classic {
    use uuid::Uuid;

    /// A random UUIDv4 from the operating system's CSPRNG (RFC 9562 §5.4).
    ///
    /// ```
    /// assert_eq!(uuidforge::classic::v4().get_version_num(), 4);
    /// ```
    pub fn v4() -> Uuid {
        Uuid::new_v4()
    }

    /// A name-based UUIDv3 (MD5, RFC 9562 §5.3).
    ///
    /// ```
    /// let id = uuidforge::classic::v3(&uuid::Uuid::NAMESPACE_DNS, b"www.example.com");
    /// assert_eq!(id, uuid::uuid!("5df41881-3aed-3515-88a7-2f4a814cf09e"));
    /// ```
    pub fn v3(namespace: &Uuid, name: &[u8]) -> Uuid {
        Uuid::new_v3(namespace, name)
    }

    /// A name-based UUIDv5 (SHA-1, RFC 9562 §5.5).
    ///
    /// ```
    /// let id = uuidforge::classic::v5(&uuid::Uuid::NAMESPACE_DNS, b"www.example.com");
    /// assert_eq!(id, uuid::uuid!("2ed6657d-e927-568b-95e1-2665a8aea6a2"));
    /// ```
    pub fn v5(namespace: &Uuid, name: &[u8]) -> Uuid {
        Uuid::new_v5(namespace, name)
    }

    /// A UUIDv4 from 16 given bytes with version and variant set (RFC 9562
    /// A.3 builds its vector this way).
    ///
    /// ```
    /// let id = uuidforge::classic::v4_from_bytes(0x919108F752D133205BACF847DB4148A8u128.to_be_bytes());
    /// assert_eq!(id, uuid::uuid!("919108f7-52d1-4320-9bac-f847db4148a8"));
    /// ```
    pub fn v4_from_bytes(bytes: [u8; 16]) -> Uuid {
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
}

//! `db columns` on MariaDB and MySQL: every column holding UUIDs in any
//! storage form, with the versions its sampled values have, whether they
//! sort in time order in that form, and the indexes that lead with it.
//! A `BINARY(16)` column is told RFC or swapped from its values: read the
//! right way, a column's UUIDs have one version and the RFC variant; read
//! the wrong way, the version nibble is a time or random digit.

use crate::catalog::{self, Candidate, Catalog, Form};
use crate::session::Session;
use serde::Serialize;
use std::collections::BTreeMap;
use uuid::Uuid;
use uuidforge_store::error::DbError;

/// Values sampled per column.
pub const SAMPLE: u32 = 1000;

/// A column holding UUIDs, as `db columns` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UuidColumn {
    /// The column as declared, its form decided.
    #[serde(flatten)]
    pub candidate: Candidate,
    /// The form, for people.
    pub form_name: &'static str,
    /// Values sampled.
    pub sampled: u64,
    /// Of them, UUIDs (JSON: documents holding one).
    pub uuids: u64,
    /// Versions seen, with their counts.
    pub versions: BTreeMap<u8, u64>,
    /// Whether its values sort in time order in this form, and why.
    pub time_order: bool,
    /// Why (or why not).
    pub order_note: String,
    /// The indexes that lead with it (`PRIMARY`: the primary key).
    pub indexes: Vec<String>,
}

/// Every column of `schemas` holding UUIDs (typed forms always; 32-hex
/// text and JSON when at least `min_share` of the sampled values hold
/// one), with the catalog read.
pub async fn uuid_columns(
    session: &mut Session,
    schemas: &[String],
    min_share: f64,
) -> Result<(Catalog, Vec<UuidColumn>), DbError> {
    let mut catalog = catalog::read(session, schemas).await?;
    let mut out = Vec::new();
    for i in 0..catalog.candidates.len() {
        let c = catalog.candidates[i].clone();
        let sql = format!(
            "SELECT {} FROM {} WHERE {} IS NOT NULL LIMIT {SAMPLE}",
            match c.form {
                Form::Uuid | Form::Json => format!("CAST({} AS CHAR)", c.column_sql()),
                Form::Binary | Form::BinaryRfc | Form::BinarySwapped =>
                    format!("HEX({})", c.column_sql()),
                Form::Text | Form::Hex => c.column_sql(),
            },
            c.table_sql(),
            c.column_sql()
        );
        let values: Vec<Option<String>> = session
            .rows(&format!("sample {}", c.display()), &sql, ())
            .await?;
        let values: Vec<String> = values.into_iter().flatten().collect();
        let column = classify(session, &catalog, c, &values);
        if column.candidate.form != catalog.candidates[i].form {
            catalog.candidates[i].form = column.candidate.form;
        }
        let typed = matches!(
            column.candidate.form,
            Form::Uuid | Form::Binary | Form::BinaryRfc | Form::BinarySwapped | Form::Text
        );
        let share = if column.sampled == 0 {
            0.0
        } else {
            column.uuids as f64 / column.sampled as f64
        };
        if typed || (column.uuids > 0 && share >= min_share) {
            out.push(column);
        }
    }
    Ok((catalog, out))
}

/// A column's report from its sampled values (text, or hex of binary).
fn classify(
    session: &Session,
    catalog: &Catalog,
    mut c: Candidate,
    values: &[String],
) -> UuidColumn {
    let mut versions = BTreeMap::new();
    let mut uuids = 0;
    let mut mixed_case = (false, false);
    if matches!(c.form, Form::Binary) {
        c.form = binary_order(values);
    }
    for v in values {
        let found: Vec<Uuid> = match c.form {
            Form::Json => in_text(v),
            Form::Binary | Form::BinaryRfc | Form::BinarySwapped => {
                from_hex(v, c.form).into_iter().collect()
            }
            _ => uuidforge::parser::parse(v.trim())
                .ok()
                .into_iter()
                .collect(),
        };
        if matches!(c.form, Form::Text | Form::Hex) {
            mixed_case.0 |= v.bytes().any(|b| b.is_ascii_lowercase());
            mixed_case.1 |= v.bytes().any(|b| b.is_ascii_uppercase());
        }
        if let Some(first) = found.first() {
            uuids += 1;
            *versions.entry(first.get_version_num() as u8).or_insert(0) += 1;
        }
    }
    let dominant = versions.iter().max_by_key(|(_, n)| **n).map(|(v, _)| *v);
    let case_sensitive = c.collation.ends_with("_bin") || c.collation.ends_with("_cs");
    let (time_order, order_note) = order(
        c.form,
        dominant,
        session.server.uuid_type_keeps_v7_order(),
        mixed_case.0 && mixed_case.1 && case_sensitive,
    );
    let indexes = catalog
        .leading(&c)
        .iter()
        .map(|(name, _)| name.clone())
        .collect();
    UuidColumn {
        form_name: c.form.name(),
        candidate: c,
        sampled: values.len() as u64,
        uuids,
        versions,
        time_order,
        order_note,
        indexes,
    }
}

/// The UUIDs written in hex (canonical or 32 digits) inside `text`.
pub fn in_text(text: &str) -> Vec<Uuid> {
    use uuidforge::scan::TokenForm;
    uuidforge::scan::tokens(text.as_bytes())
        .filter(|t| matches!(t.form, TokenForm::Canonical | TokenForm::Simple))
        .map(|t| t.uuid)
        .collect()
}

/// A `BINARY(16)` value's UUID read in `form`'s order, from its hex.
fn from_hex(hex: &str, form: Form) -> Option<Uuid> {
    let raw = u128::from_str_radix(hex.trim(), 16).ok()?.to_be_bytes();
    Some(match form {
        Form::BinarySwapped => uuidforge::sortorder::mysql_bin_to_uuid(raw, true),
        _ => Uuid::from_bytes(raw),
    })
}

/// RFC or swapped order: whichever reading makes more of the values
/// plausible UUIDs (RFC when they tie or there is nothing to read). A
/// value read the right way has the RFC variant and a version that is in
/// use — a time-based one (1, 6, 7) counting double when its time lies
/// between 1990 and a year from now; read the wrong way, the version
/// nibble is a digit of the time or of random bits, and the time falls
/// centuries away.
pub fn binary_order(hex_values: &[String]) -> Form {
    if hex_values.is_empty() {
        return Form::Binary;
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let plausible = |u: &Uuid| -> u32 {
        if u.get_variant() != uuid::Variant::RFC4122 {
            return 0;
        }
        let ms = match u.get_version_num() {
            3 | 4 | 5 | 8 => return 1,
            7 => (u.as_u128() >> 80) as u64,
            1 | 6 => match u.get_timestamp() {
                Some(t) => {
                    let (secs, nanos) = t.to_unix();
                    secs * 1000 + u64::from(nanos / 1_000_000)
                }
                None => return 0,
            },
            _ => return 0,
        };
        if (631_152_000_000..=now_ms + 366 * 86_400_000).contains(&ms) {
            2
        } else {
            0
        }
    };
    let score = |form: Form| -> u64 {
        hex_values
            .iter()
            .filter_map(|v| from_hex(v, form))
            .map(|u| u64::from(plausible(&u)))
            .sum()
    };
    if score(Form::BinarySwapped) > score(Form::BinaryRfc) {
        Form::BinarySwapped
    } else {
        Form::BinaryRfc
    }
}

/// Whether a column of `form` whose values are mostly version `version`
/// sorts them by time, and why.
pub fn order(
    form: Form,
    version: Option<u8>,
    uuid_type_unswapped: bool,
    mixed_case: bool,
) -> (bool, String) {
    let Some(v) = version else {
        return (false, "no UUIDs sampled".into());
    };
    let timed = matches!(v, 1 | 6 | 7);
    if !timed {
        return (false, format!("version {v} carries no time"));
    }
    let yes = |why: &str| (true, why.to_string());
    let no = |why: &str| (false, why.to_string());
    match (form, v) {
        (Form::Json, _) => no("inside JSON documents: no index orders them"),
        (Form::Uuid, 1) => yes("the UUID type stores version 1 with its time fields swapped into order"),
        (Form::Uuid, _) if uuid_type_unswapped => yes("the UUID type stores versions 6 and up in RFC order"),
        (Form::Uuid, _) => no("this server's UUID type stores every version swapped (MariaDB before 10.10.6, 10.11.5, 11.0.3): upgrade it"),
        (Form::BinarySwapped, 1) => yes("UUID_TO_BIN(u, 1) puts version 1's time in order"),
        (Form::BinarySwapped, _) => no("swapped order puts the version and random bits before the time: convert to RFC order"),
        (Form::BinaryRfc | Form::Binary, 1) => no("version 1's time fields are out of order in RFC bytes"),
        (Form::BinaryRfc | Form::Binary, _) => yes("RFC order: the time leads"),
        (Form::Text | Form::Hex, 1) => no("version 1's text starts with the time's low bits"),
        (Form::Text | Form::Hex, _) if mixed_case => no("upper and lower case mixed under a case-sensitive collation"),
        (Form::Text | Form::Hex, _) => yes("the text leads with the time"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_columns_are_told_rfc_or_swapped_by_their_values() {
        let v7: Vec<Uuid> = (0..50).map(|_| uuidforge::v7()).collect();
        let hex = |b: [u8; 16]| b.iter().map(|x| format!("{x:02X}")).collect::<String>();
        let rfc: Vec<String> = v7.iter().map(|u| hex(*u.as_bytes())).collect();
        let swapped: Vec<String> = v7
            .iter()
            .map(|u| hex(uuidforge::sortorder::mysql_uuid_to_bin(u, true)))
            .collect();
        assert_eq!(binary_order(&rfc), Form::BinaryRfc);
        assert_eq!(binary_order(&swapped), Form::BinarySwapped);
        // Whatever digit of the time stands where the version is read.
        for ms in [
            0x01a2_23d6_a807u64,
            0x01a2_3000_0000,
            0x01a2_4000_0000,
            0x01a2_5000_0000,
            0x01a2_7000_0000,
            0x01a2_8000_0000,
            0x0100_0000_0000,
        ] {
            let v: Vec<Uuid> = (0..20u128)
                .map(|i| {
                    uuid::Builder::from_unix_timestamp_millis(ms + i as u64, &[7; 10]).into_uuid()
                })
                .collect();
            let swapped: Vec<String> = v
                .iter()
                .map(|u| hex(uuidforge::sortorder::mysql_uuid_to_bin(u, true)))
                .collect();
            let rfc: Vec<String> = v.iter().map(|u| hex(*u.as_bytes())).collect();
            assert_eq!(binary_order(&swapped), Form::BinarySwapped, "{ms:x}");
            assert_eq!(binary_order(&rfc), Form::BinaryRfc, "{ms:x}");
        }
        let v4: Vec<String> = (0..50).map(|_| hex(*Uuid::new_v4().as_bytes())).collect();
        assert_eq!(binary_order(&v4), Form::BinaryRfc);
        let v1: Vec<String> = (0..50u64)
            .map(|i| {
                hex(*Uuid::new_v1(
                    uuid::Timestamp::from_unix(uuid::NoContext, 1_700_000_000 + i, 0),
                    &[1; 6],
                )
                .as_bytes())
            })
            .map(|h| {
                let raw = u128::from_str_radix(&h, 16).unwrap().to_be_bytes();
                hex(uuidforge::sortorder::mysql_uuid_to_bin(
                    &Uuid::from_bytes(raw),
                    true,
                ))
            })
            .collect();
        assert_eq!(binary_order(&v1), Form::BinarySwapped, "UUID_TO_BIN(v1, 1)");
        assert_eq!(binary_order(&[]), Form::Binary);
        assert_eq!(from_hex(&swapped[0], Form::BinarySwapped), Some(v7[0]));
        assert!(!order(Form::BinarySwapped, Some(7), true, false).0);
        assert!(order(Form::Uuid, Some(7), true, false).0);
        assert!(!order(Form::Uuid, Some(7), false, false).0);
        assert!(!order(Form::Text, Some(7), true, true).0);
        assert!(!order(Form::BinaryRfc, Some(4), true, false).0);
    }
}

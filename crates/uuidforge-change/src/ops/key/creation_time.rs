//! The column that holds each row's creation time, which a migration
//! without `--order-by` proposes for the new keys' times (made up ones
//! mean nothing to bounds by time): a timestamp or date column whose
//! default stamps the row as it is made (`DEFAULT now()`, `CURRENT_TIMESTAMP`,
//! `clock_timestamp()`, …) or whose name says made, created, inserted or
//! ordered (`created_at`, `creation_date`, `inserted_at`, `order_date`) —
//! never one whose name says it changes (`updated_at DEFAULT now()` is
//! stamped again by the application).

use uuidforge_db::catalog::{Column, Relation};

/// How likely `c` holds its row's creation time: lower is likelier; none
/// when nothing says so.
fn rank(c: &Column) -> Option<u8> {
    if !(c.type_name.starts_with("timestamp") || c.type_name == "date") {
        return None;
    }
    let n = c.name.to_ascii_lowercase();
    let changes = ["updat", "modif", "chang", "edit", "touch", "seen", "last"]
        .iter()
        .any(|w| n.contains(w));
    if n.contains("creat") {
        Some(0)
    } else if c.defaults_to_now() && !changes {
        Some(1)
    } else if n.contains("insert") || n.contains("made") {
        Some(2)
    } else if n.contains("order")
        && (n.contains("date") || n.contains("time") || n.ends_with("_at"))
    {
        Some(3)
    } else {
        None
    }
}

/// The column of `table` that looks like its rows' creation time, the
/// likeliest first (then the first in the table).
pub fn column(table: &Relation) -> Option<&Column> {
    table
        .columns
        .iter()
        .filter_map(|c| Some((rank(c)?, c.num, c)))
        .min_by_key(|(r, num, _)| (*r, *num))
        .map(|(_, _, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column_of(name: &str, type_name: &str, default: Option<&str>) -> Column {
        Column {
            num: 1,
            name: name.into(),
            type_oid: 1184,
            type_name: type_name.into(),
            not_null: true,
            can_select: true,
            default_calls: Vec::new(),
            default: default.map(str::to_string),
            collation: None,
        }
    }

    #[test]
    fn a_default_stamping_the_row_says_it_as_a_name_does() {
        let tz = "timestamp with time zone";
        assert_eq!(rank(&column_of("placed_at", tz, Some("now()"))), Some(1));
        assert_eq!(
            rank(&column_of("at", "date", Some("CURRENT_DATE"))),
            Some(1)
        );
        assert_eq!(rank(&column_of("updated_at", tz, Some("now()"))), None);
        assert_eq!(
            rank(&column_of("last_seen", tz, Some("clock_timestamp()"))),
            None
        );
        assert_eq!(rank(&column_of("placed_at", tz, None)), None);
        assert_eq!(rank(&column_of("created_at", tz, None)), Some(0));
        assert_eq!(rank(&column_of("order_date", "date", None)), Some(3));
        assert_eq!(rank(&column_of("note", "text", Some("now()"))), None);
    }
}

//! The names a key migration makes, each spelt here once: the new columns
//! while it runs, where the old values are kept, the key map, the writers'
//! triggers, temporary index and constraint names — each within
//! PostgreSQL's 63 bytes, cut at a character boundary.

use uuidforge_ident::MAX_IDENTIFIER;

/// What a new column's name ends with while a migration runs.
const NEW_SUFFIX: &str = "_uuidforge_new";

/// The name of the new column made for `column` while a migration runs.
///
/// ```
/// assert_eq!(uuidforge_change::ops::key_names::new_column("id"), "id_uuidforge_new");
/// ```
pub fn new_column(column: &str) -> String {
    format!("{column}{NEW_SUFFIX}")
}

/// Whether `column` is a new column of a migration under way.
pub fn is_new_column(column: &str) -> bool {
    column.ends_with(NEW_SUFFIX)
}

/// The name the old values of a changed `column` are kept under: the key's
/// by default (`--keep-old` names another), every reference's.
///
/// ```
/// assert_eq!(uuidforge_change::ops::key_names::old_column("customer_id"), "customer_id_old");
/// ```
pub fn old_column(column: &str) -> String {
    format!("{column}_old")
}

/// The key map of a change in one transaction (a temporary table).
pub const TEMPORARY_MAP: &str = "uuidforge_keymap";

/// The functions a rewrite in one transaction reads the key map through
/// (temporary; see [`crate::action::Table::MapLookup`]).
pub const MAP_LOOKUP: crate::action::MapLookup = crate::action::MapLookup {
    object: "pg_temp.uuidforge_keymap_object",
    array: "pg_temp.uuidforge_keymap_array",
    first: "pg_temp.uuidforge_keymap_first",
    dense: "uuidforge_keymap_dense",
};

/// The key map a change in batches keeps in its key's schema until its
/// last step, by the key table's oid.
pub fn kept_map(table_oid: u32) -> String {
    cut(&format!("{TEMPORARY_MAP}_{table_oid}"))
}

/// The trigger that keeps a table's new columns right for rows others
/// write while a change in batches runs.
pub const WRITERS_TRIGGER: &str = "uuidforge_migrate";

/// Its function, by the table's oid.
pub fn writers_function(table_oid: u32) -> String {
    format!("{WRITERS_TRIGGER}_{table_oid}")
}

/// The CHECK proving a new column NOT NULL before the swap.
pub fn not_null_check(table_oid: u32, column: &str) -> String {
    cut(&format!("uuidforge_nn_{table_oid}_{column}"))
}

/// The unique index of the new key built before the swap.
pub fn new_key_index(table: &str, key: &str) -> String {
    cut(&format!("{table}_{}", new_column(key)))
}

/// The unique index kept on the old key values.
pub fn old_key_index(table: &str, old: &str) -> String {
    cut(&format!("{table}_{old}_key"))
}

/// `name` cut to PostgreSQL's 63 bytes.
pub fn cut(name: &str) -> String {
    cut_to(name, MAX_IDENTIFIER).to_string()
}

/// `name` cut to `max` bytes at a character boundary.
pub fn cut_to(name: &str, max: usize) -> &str {
    let mut end = name.len().min(max);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// A temporary name made from `name` (an index built before the swap).
pub fn temporary(name: &str) -> String {
    cut(&format!("{}_uuidforge", cut_to(name, 50)))
}

/// The name of `name`'s piece on the partition of oid `partition`.
pub fn piece(name: &str, partition: u32) -> String {
    cut(&format!("{}_{}", cut_to(name, 50), partition))
}

/// The shadow an online copy writes a table into, by the table's oid.
pub fn shadow_table(table_oid: u32) -> String {
    format!("{COPY_PREFIX}{table_oid}")
}

/// A shadow's `n`th index, under this name until the swap.
pub fn shadow_index(table_oid: u32, n: usize) -> String {
    format!("{COPY_PREFIX}{table_oid}_{n}")
}

/// A shadow's `n`th identity sequence, under this name until the swap.
pub fn shadow_sequence(table_oid: u32, n: usize) -> String {
    format!("{SEQUENCE_PREFIX}{table_oid}_{n}")
}

/// The log of the rows written while an online copy runs (and the function
/// its trigger runs), by the table's oid.
pub fn copy_log(table_oid: u32) -> String {
    format!("{LOG_PREFIX}{table_oid}")
}

/// The trigger that fills that log.
pub const COPY_TRIGGER: &str = "uuidforge_copy";

const COPY_PREFIX: &str = "uuidforge_copy_";
const LOG_PREFIX: &str = "uuidforge_log_";
const SEQUENCE_PREFIX: &str = "uuidforge_seq_";

/// Where names made from a table's oid begin: the oid follows (what
/// differs from one server to another in the same change's plan).
pub const OID_PREFIXES: [&str; 6] = [
    TEMPORARY_MAP_PREFIX,
    "uuidforge_migrate_",
    "uuidforge_nn_",
    COPY_PREFIX,
    LOG_PREFIX,
    SEQUENCE_PREFIX,
];

/// The kept key map's name before its table's oid.
const TEMPORARY_MAP_PREFIX: &str = "uuidforge_keymap_";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_postgresql_and_cut_at_a_character() {
        assert_eq!(new_column("id"), "id_uuidforge_new");
        assert!(is_new_column(&new_column("x")) && !is_new_column("x_old"));
        let cut = cut(&"é".repeat(40));
        assert!(cut.len() <= 63 && cut.len().is_multiple_of(2));
        assert_eq!(
            piece(&"x".repeat(60), 16384),
            format!("{}_16384", "x".repeat(50))
        );
        assert_eq!(kept_map(7), "uuidforge_keymap_7");
        assert_eq!(writers_function(7), "uuidforge_migrate_7");
    }
}

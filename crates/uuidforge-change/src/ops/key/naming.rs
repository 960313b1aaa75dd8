//! The names a key migration makes: the new columns while it runs, where
//! the old values are kept, temporary index names — each within
//! PostgreSQL's 63 bytes, cut at a character boundary.

/// PostgreSQL's limit on identifiers (`NAMEDATALEN - 1` bytes).
pub const MAX_IDENTIFIER: usize = 63;

/// The name of the new column made for `column` while a migration runs.
///
/// ```
/// assert_eq!(uuidforge_change::ops::key::new_column("id"), "id_uuidforge_new");
/// ```
pub fn new_column(column: &str) -> String {
    format!("{column}_uuidforge_new")
}

/// The name the old values of a reference `column` are kept under.
pub fn old_reference(column: &str) -> String {
    format!("{column}_old")
}

/// `name` cut to PostgreSQL's 63 bytes.
///
/// ```
/// let long = "é".repeat(40);
/// let cut = uuidforge_change::ops::key::cut(&long);
/// assert!(cut.len() <= 63 && cut.len() % 2 == 0);
/// ```
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

//! The names a key migration makes: the new columns while it runs, where
//! the old values are kept, temporary index names — each within
//! PostgreSQL's 63 bytes, cut at a character boundary.

use uuidforge_ident::MAX_IDENTIFIER;

/// The name of the new column made for `column` while a migration runs.
///
pub fn new_column(column: &str) -> String {
    format!("{column}_uuidforge_new")
}

/// The name the old values of a reference `column` are kept under.
pub fn old_reference(column: &str) -> String {
    format!("{column}_old")
}

/// `name` cut to PostgreSQL's 63 bytes.
///
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_postgresql_and_cut_at_a_character() {
        assert_eq!(new_column("id"), "id_uuidforge_new");
        let cut = cut(&"é".repeat(40));
        assert!(cut.len() <= 63 && cut.len().is_multiple_of(2));
        assert_eq!(
            piece(&"x".repeat(60), 16384),
            format!("{}_16384", "x".repeat(50))
        );
    }
}

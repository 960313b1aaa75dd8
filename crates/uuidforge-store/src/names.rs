//! The one rule that says a column's name points at a table's key, for
//! every store's tools: `customer_id`, `customerId`, `customer_uuid` or
//! `customer` point at `customers.id`; `artist_id` at `artist.artist_id`.
//! Discovery weighs it beside the values, `related` ranks by it, a key
//! migration looks for references nobody declared with it.

/// Words of a name: `customerId`, `customer_id`, `CustomerID` → `customer`, `id`.
pub fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let boundary = c == '_'
            || c == ' '
            || c == '-'
            || (c.is_uppercase()
                && i > 0
                && (chars[i - 1].is_lowercase()
                    || chars.get(i + 1).is_some_and(|n| n.is_lowercase())
                        && chars[i - 1].is_uppercase()));
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if c.is_alphanumeric() {
            current.extend(c.to_lowercase());
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// `orders` → `order`, `categories` → `category` (enough for table names).
pub fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = word.strip_suffix("ses") {
        format!("{stem}s")
    } else if let Some(stem) = word.strip_suffix('s') {
        stem.to_string()
    } else {
        word.to_string()
    }
}

/// How strongly a referencing column's name points at a table's key:
/// 1 for `customer_id`/`customerId`/`customer_uuid`/`customer` →
/// `customer(s).id`, 0.5 for the same column name, else 0.
pub fn name_evidence(from_column: &str, to_table: &str, to_column: &str) -> f64 {
    let from = words(from_column);
    let table: Vec<String> = words(to_table).iter().map(|w| singular(w)).collect();
    let key = words(to_column);
    let suffixes: [&[&str]; 5] = [&["id"], &["uuid"], &["key"], &["ref"], &[]];
    let from_singular: Vec<String> = from.iter().map(|w| singular(w)).collect();
    for suffix in suffixes {
        let suffix: Vec<String> = suffix.iter().map(|s| s.to_string()).collect();
        let mut want = table.clone();
        want.extend(suffix.iter().cloned());
        if from_singular == want || (from.len() > suffix.len() && from_singular.ends_with(&want)) {
            return 1.0;
        }
    }
    // `artist_id` → `artist.artist_id`
    if from == key && key.len() > 1 {
        return 1.0;
    }
    if from_column == to_column && to_column != "id" {
        0.5
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_point_at_tables() {
        assert_eq!(name_evidence("customer_id", "customers", "id"), 1.0);
        assert_eq!(name_evidence("customerId", "customer", "id"), 1.0);
        assert_eq!(name_evidence("CustomerID", "Customer", "CustomerId"), 1.0);
        assert_eq!(name_evidence("billing_customer_id", "customers", "id"), 1.0);
        assert_eq!(name_evidence("category_uuid", "categories", "id"), 1.0);
        assert_eq!(name_evidence("owner_ref", "customers", "id"), 0.0);
        assert_eq!(name_evidence("id", "customers", "id"), 0.0);
        assert_eq!(words("HTTPServerId"), ["http", "server", "id"]);
    }

    #[test]
    fn mixed_case_and_plurals() {
        assert_eq!(name_evidence("country_id", "countries", "id"), 1.0);
        assert_eq!(name_evidence("taxId", "tax", "id"), 1.0);
        assert_eq!(name_evidence("id", "tax", "id"), 0.0);
        assert_eq!(name_evidence("email", "users", "email"), 0.5);
    }
}

//! The JSON rows of counts a change's checks read: every count zero, or
//! the same before and after.

use uuidforge_db::error::DbError;

/// The entries whose value differs between two rows of JSON counts read
/// before a change and after it (row counts, digests, definitions), as `name: before, after` (entries
/// only `after` has are new, not changed).
pub fn changes(before: &str, after: &str) -> Vec<String> {
    let read = |json: &str| -> serde_json::Map<String, serde_json::Value> {
        serde_json::from_str(json).unwrap_or_default()
    };
    let (before, after) = (read(before), read(after));
    before
        .iter()
        .filter(|(name, n)| after.get(*name) != Some(n))
        .map(|(name, n)| {
            format!(
                "{name}: {n} before, {} after",
                after.get(name).cloned().unwrap_or_default()
            )
        })
        .collect()
}

/// Reads a verification row: the checks that failed (empty when all hold),
/// and every check as `name: count`.
pub fn verification(json: &str) -> Result<(Vec<String>, Vec<String>), DbError> {
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json)
        .map_err(|e| DbError::unreadable("verification", format!("{e}")))?;
    let mut failed = Vec::new();
    let mut all = Vec::new();
    for (name, count) in map {
        let n = count.as_i64().unwrap_or(-1);
        if !name.starts_with("changed: ") {
            all.push(format!("{name}: {n}"));
        }
        if n != 0 {
            failed.push(format!("{name}: {n}"));
        }
    }
    Ok((failed, all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_names_the_entry_and_ignores_new_ones() {
        assert!(changes(r#"{"t": 3, "c": 5}"#, r#"{"t": 3, "c": 5, "new": 1}"#).is_empty());
        assert_eq!(
            changes(r#"{"t": 3, "c": 5}"#, r#"{"t": 3, "c": 4}"#),
            vec!["c: 5 before, 4 after"]
        );
    }

    #[test]
    fn verification_names_what_failed() {
        let (failed, all) = verification(
            r#"{"rows out of order": 0, "new keys not from the map": 2, "changed: index i": 1, "indexes changed": 1}"#,
        )
        .unwrap();
        assert_eq!(
            failed,
            vec![
                "changed: index i: 1",
                "indexes changed: 1",
                "new keys not from the map: 2"
            ]
        );
        assert_eq!(all.len(), 3);
    }
}

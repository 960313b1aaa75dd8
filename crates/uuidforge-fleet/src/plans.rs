//! Plans across a fleet: the printed plan of each member, compared once the
//! names made from table oids (which differ from server to server) are
//! set aside — members whose plans differ have schemas that differ where
//! the change depends on them, and a fleet change refuses before anything
//! runs on any member. The secret of each member's new keys: the fleet's
//! for a replicated table (the same new key for the same row everywhere),
//! one derived per member for a sharded one.

use hmac::{Hmac, KeyInit, Mac};
use uuidforge_db::error::DbError;

/// Names a change makes from a table's oid.
const OID_NAMES: [&str; 6] = uuidforge_change::ops::key_names::OID_PREFIXES;

/// `text` with the oid after each name a change makes from a table's oid
/// written `<oid>`.
///
/// ```
/// use uuidforge_fleet::plans::without_oids;
/// assert_eq!(without_oids("DROP TABLE uuidforge_keymap_16384;"), "DROP TABLE uuidforge_keymap_<oid>;");
/// ```
pub fn without_oids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, prefix)) = OID_NAMES
        .iter()
        .filter_map(|p| rest.find(p).map(|i| (i, *p)))
        .min()
    {
        out.push_str(&rest[..at + prefix.len()]);
        rest = &rest[at + prefix.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("<oid>");
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// Refused, naming two members and the first line where their plans
/// differ, unless every member's printed plan is the same.
///
/// ```
/// use uuidforge_fleet::plans::same_plans;
/// let a = ("a".to_string(), vec!["ALTER TABLE t …;".to_string()]);
/// assert!(same_plans(&[a.clone(), ("b".into(), a.1.clone())]).is_ok());
/// assert!(same_plans(&[a, ("b".into(), vec!["ALTER TABLE u …;".into()])]).is_err());
/// ```
pub fn same_plans(plans: &[(String, Vec<String>)]) -> Result<(), DbError> {
    let Some((first, reference)) = plans.first() else {
        return Ok(());
    };
    let reference: Vec<String> = reference.iter().map(|l| without_oids(l)).collect();
    for (member, lines) in &plans[1..] {
        let lines: Vec<String> = lines.iter().map(|l| without_oids(l)).collect();
        if lines == reference {
            continue;
        }
        let at = reference
            .iter()
            .zip(&lines)
            .position(|(a, b)| a != b)
            .unwrap_or(reference.len().min(lines.len()));
        let show = |l: Option<&String>| {
            l.map(|s| uuidforge_change::ops::one_line(s))
                .unwrap_or_else(|| "(the plan ends)".into())
        };
        return Err(DbError::refused(
            "fleet",
            format!(
                "the members' schemas differ where the change depends on them: the plans of {first} and {member} differ at line {} ({first}: {}; {member}: {}); nothing was changed on any member",
                at + 1,
                show(reference.get(at)),
                show(lines.get(at))
            ),
        ));
    }
    Ok(())
}

/// The secret of `member`'s new keys for a sharded table: HMAC-SHA256 of
/// the fleet's secret over the member's name, so that the same old key on
/// two members gets two new keys.
///
/// ```
/// use uuidforge_fleet::plans::member_secret;
/// let (a, b) = (member_secret(b"fleet secret", "eu"), member_secret(b"fleet secret", "us"));
/// assert_ne!(a, b);
/// assert_eq!(a, member_secret(b"fleet secret", "eu"));
/// assert_eq!(a.len(), 32);
/// ```
pub fn member_secret(secret: &[u8], member: &str) -> Vec<u8> {
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(b"uuidforge/fleet-member\0");
    mac.update(member.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_that_differ_only_in_oids_are_the_same() {
        let a = vec![
            "CREATE TABLE uuidforge_keymap_16384 (old text, new uuid);".to_string(),
            "CREATE FUNCTION uuidforge_migrate_16390() …;".to_string(),
        ];
        let b: Vec<String> = a
            .iter()
            .map(|l| l.replace("16384", "24577").replace("16390", "24600"))
            .collect();
        assert!(same_plans(&[("a".into(), a.clone()), ("b".into(), b)]).is_ok());
        let mut c = a.clone();
        c.push("ALTER TABLE extra …;".into());
        let e = same_plans(&[("a".into(), a), ("c".into(), c)]).unwrap_err();
        assert!(
            e.message.contains("at line 3") && e.message.contains("(the plan ends)"),
            "{e}"
        );
    }
}

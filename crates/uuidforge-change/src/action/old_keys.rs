//! Definitions that name old keys: a key migration marks each old key
//! written in a definition where the new key of its row goes
//! ([`marked`]), and the action holding it is made with the new keys read
//! from the key map when it runs ([`with_new_keys`]: a `DO` block that
//! formats each new key in as a literal). The marks cannot occur in SQL the
//! server printed.

use super::{Action, Object};
use uuidforge_ident::quote_literal;

/// Marks an old key in a definition's text: `MARK old MARK` stands where
/// the new key goes.
const MARK: char = '\u{1}';

/// The old key `old` marked where its new key goes, as a uuid literal.
///
/// ```
/// use uuidforge_change::action::old_keys::{has_old_keys, marked, probed};
/// let text = format!("CHECK ((id <> {}))", marked("1"));
/// assert!(has_old_keys(&text));
/// assert_eq!(probed(&text), "CHECK ((id <> NULL::uuid))");
/// ```
pub fn marked(old: &str) -> String {
    format!("{MARK}{old}{MARK}::uuid")
}

/// `text` as a probe types it: each marked old key a uuid NULL.
pub fn probed(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split(MARK).enumerate() {
        out.push_str(if i % 2 == 0 { part } else { "NULL" });
    }
    out
}

/// `action` made with the new keys of its marked old keys, read from
/// `map` (old key as text → new uuid) when it runs: an action with none
/// is as it was.
pub fn with_new_keys(action: Action, map: &str) -> Action {
    if action.statements().iter().any(|s| has_old_keys(s)) {
        Action::Object(Object::WithNewKeys {
            action: Box::new(action),
            map: map.to_string(),
        })
    } else {
        action
    }
}

/// Whether `text` holds marked old keys.
pub fn has_old_keys(text: &str) -> bool {
    text.contains(MARK)
}

/// What an old key no row has becomes: the nil UUID, which no key is, so
/// `<> old` still holds for every row and `= old` for none (NULL would
/// make both false for all).
const NIL: &str = "00000000-0000-0000-0000-000000000000";

/// `statement` with its marked old keys replaced by their new keys from
/// `map`, as an SQL expression: `format(…)`, each new key written as a
/// literal (`%L`; the nil UUID for an old key the map lacks). `None` when
/// it has none.
pub fn formatted(statement: &str, map: &str) -> Option<String> {
    if !has_old_keys(statement) {
        return None;
    }
    let mut template = String::new();
    let mut keys = Vec::new();
    for (i, part) in statement.split(MARK).enumerate() {
        if i % 2 == 0 {
            template.push_str(&part.replace('%', "%%"));
        } else {
            keys.push(format!(
                "coalesce((SELECT m.new::text FROM {map} m WHERE m.old = {}), '{NIL}')",
                quote_literal(part)
            ));
            template.push_str(&format!("%{}$L", keys.len()));
        }
    }
    Some(format!(
        "format({}, {})",
        quote_literal(&template),
        keys.join(", ")
    ))
}

/// `statement` run with the new keys of its marked old keys
/// ([`formatted`]), in a `DO` block.
pub fn run_with_new_keys(statement: &str, map: &str) -> String {
    let Some(formatted) = formatted(statement, map) else {
        return statement.to_string();
    };
    let mut tag = "uuidforge".to_string();
    while formatted.contains(&format!("${tag}$")) {
        tag.push('_');
    }
    format!("DO ${tag}$ BEGIN EXECUTE {formatted}; END ${tag}$")
}

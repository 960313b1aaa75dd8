//! Connection strings as libpq reads them, for two jobs the driver does not
//! do: naming the setting at fault when one is wrong (the driver says only
//! "invalid connection string"), and taking every password out of a text
//! before it is shown.
//!
//! Both spellings libpq accepts are read:
//! - `key=value` pairs separated by white space, with optional spaces around
//!   `=`, values either bare (a backslash escapes the next character) or in
//!   single quotes (`\'` and `\\` inside);
//! - URLs `postgres[ql]://[user[:password]@][host[:port][,…]][/dbname][?key=value&…]`.

/// The settings this program passes to the driver, with what each takes.
const SETTINGS: [(&str, &str); 19] = [
    ("host", "a host name, an address or a socket directory"),
    ("hostaddr", "an IP address"),
    ("port", "a port number from 1 to 65535"),
    ("dbname", "a database name"),
    ("user", "a role name"),
    ("password", "a password"),
    ("options", "server options, e.g. '-c search_path=app'"),
    ("application_name", "a name"),
    (
        "sslmode",
        "disable, allow, prefer or require (the server's certificate is not checked: verify-ca and verify-full are not supported)",
    ),
    ("connect_timeout", "a number of seconds"),
    ("tcp_user_timeout", "a number of seconds"),
    ("keepalives", "0 or 1"),
    ("keepalives_idle", "a number of seconds"),
    ("keepalives_interval", "a number of seconds"),
    ("keepalives_retries", "a number"),
    ("target_session_attrs", "any or read-write"),
    ("channel_binding", "disable, prefer or require"),
    ("load_balance_hosts", "disable or random"),
    ("sslnegotiation", "postgres or direct"),
];

/// Keys whose values are secrets (`PGPASSWORD=` as an environment
/// variable is written in messages too).
const SECRET_KEYS: [&str; 3] = ["password", "sslpassword", "pgpassword"];

/// What replaces a secret.
const HIDDEN: &str = "***";

/// One setting of a connection string that cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// The key as written (`port`, `sslmode`, …).
    pub key: String,
    /// Its value as written (`***` for a password).
    pub value: String,
    /// What the key takes.
    pub expected: String,
}

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} = '{}' (expected {})",
            self.key, self.value, self.expected
        )
    }
}

/// The `key=value` pairs of a libpq keyword/value string, values unquoted
/// and unescaped.
pub(crate) fn key_values(text: &str) -> Result<Vec<(String, String)>, SettingError> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    let skip_space = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_space(&mut i);
        if i >= chars.len() {
            return Ok(out);
        }
        let start = i;
        while i < chars.len() && chars[i] != '=' && !chars[i].is_whitespace() {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        skip_space(&mut i);
        if i >= chars.len() || chars[i] != '=' {
            return Err(SettingError {
                key,
                value: String::new(),
                expected: "key=value".into(),
            });
        }
        i += 1;
        skip_space(&mut i);
        let mut value = String::new();
        if i < chars.len() && chars[i] == '\'' {
            i += 1;
            let mut closed = false;
            while i < chars.len() {
                match chars[i] {
                    '\\' if i + 1 < chars.len() => {
                        value.push(chars[i + 1]);
                        i += 2;
                    }
                    '\'' => {
                        closed = true;
                        i += 1;
                        break;
                    }
                    c => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
            if !closed {
                return Err(SettingError {
                    value: shown(&key, &value),
                    key,
                    expected: "a closing quote (')".into(),
                });
            }
        } else {
            while i < chars.len() && !chars[i].is_whitespace() {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                }
                value.push(chars[i]);
                i += 1;
            }
        }
        out.push((key, value));
    }
}

/// A value as it may be shown: hidden for a secret key.
fn shown(key: &str, value: &str) -> String {
    if SECRET_KEYS.contains(&key.to_ascii_lowercase().as_str()) {
        HIDDEN.into()
    } else {
        value.to_string()
    }
}

/// `%XX` decoded (an invalid escape is kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The settings of a URL: `port` once per host that has one, then the
/// query's pairs (the user, password, host and database need no check).
fn url_settings(text: &str) -> Result<Vec<(String, String)>, SettingError> {
    let rest = text.split_once("://").map_or("", |(_, r)| r);
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let authority = before_query.split('/').next().unwrap_or("");
    let hosts = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let mut out = Vec::new();
    for host in hosts.split(',') {
        let port = if let Some(v6) = host.strip_prefix('[') {
            v6.split_once("]:").map(|(_, p)| p)
        } else {
            host.rsplit_once(':').map(|(_, p)| p)
        };
        if let Some(port) = port {
            out.push(("port".to_string(), percent_decode(port)));
        }
    }
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        out.push((percent_decode(key), percent_decode(value)));
    }
    Ok(out)
}

fn is_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// Checks every setting of a connection string (a URL or `key=value`
/// pairs): the first that cannot work, named with its value and what it
/// takes.
pub fn check(text: &str) -> Result<(), SettingError> {
    let pairs = if is_url(text) {
        url_settings(text)?
    } else {
        key_values(text)?
    };
    for (key, value) in &pairs {
        let Some((_, expected)) = SETTINGS.iter().find(|(k, _)| k == key) else {
            let known: Vec<&str> = SETTINGS.iter().map(|(k, _)| *k).collect();
            return Err(SettingError {
                key: key.clone(),
                value: shown(key, value),
                expected: format!("a setting this program knows: {}", known.join(", ")),
            });
        };
        let seconds = || value.trim().parse::<u64>().is_ok();
        let ok = match key.as_str() {
            "port" => value
                .split(',')
                .all(|p| p.is_empty() || p.parse::<u16>().is_ok_and(|n| n > 0)),
            "sslmode" => ["disable", "allow", "prefer", "require"].contains(&value.as_str()),
            "connect_timeout"
            | "tcp_user_timeout"
            | "keepalives_idle"
            | "keepalives_interval"
            | "keepalives_retries" => seconds(),
            "keepalives" => ["0", "1"].contains(&value.as_str()),
            "target_session_attrs" => ["any", "read-write"].contains(&value.as_str()),
            "channel_binding" => ["disable", "prefer", "require"].contains(&value.as_str()),
            "load_balance_hosts" => ["disable", "random"].contains(&value.as_str()),
            "sslnegotiation" => ["postgres", "direct"].contains(&value.as_str()),
            "hostaddr" => value
                .split(',')
                .all(|a| a.is_empty() || a.parse::<std::net::IpAddr>().is_ok()),
            _ => true,
        };
        if !ok {
            return Err(SettingError {
                key: key.clone(),
                value: shown(key, value),
                expected: (*expected).to_string(),
            });
        }
    }
    Ok(())
}

/// `text` with every password hidden: the password of a URL's user part and
/// the value of every `password`/`sslpassword`/`PGPASSWORD` key (bare,
/// quoted, with spaces around `=`, in a URL's query), wherever a
/// connection string is quoted in it. (A password is not looked for by its
/// value: one that is also a word, a role or a schema name would take that
/// word out of every message.)
pub fn redact(text: &str) -> String {
    redact_patterns(text)
}

/// The URL user part and the secret keys of `text` hidden.
fn redact_patterns(text: &str) -> String {
    redact_keys(&redact_url_users(text))
}

/// `scheme://user:SECRET@host` → `scheme://user:***@host`, for every URL in
/// the text. The user part ends at the last `@` before the query, so a raw
/// `@` in a password does not leave its tail.
fn redact_url_users(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        out.push_str(&rest[..at + 3]);
        rest = &rest[at + 3..];
        // To white space or a closing quote: a raw `?` or `#` in a
        // password would otherwise end the part early and show its tail.
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(rest.len());
        let token = &rest[..end];
        match (token.rfind('@'), token.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&token[..=colon]);
                out.push_str(HIDDEN);
                out.push_str(&token[at..]);
            }
            _ => out.push_str(token),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Every `KEY = value` of a secret key with its value hidden.
fn redact_keys(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let lower: Vec<char> = chars.iter().map(|c| c.to_ascii_lowercase()).collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    'scan: while i < chars.len() {
        let boundary = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if boundary {
            for key in SECRET_KEYS {
                let k: Vec<char> = key.chars().collect();
                if lower[i..].starts_with(&k) {
                    let mut j = i + k.len();
                    while j < chars.len() && chars[j] == ' ' {
                        j += 1;
                    }
                    if j < chars.len() && chars[j] == '=' {
                        let in_url = i > 0 && (chars[i - 1] == '?' || chars[i - 1] == '&');
                        j += 1;
                        while j < chars.len() && chars[j] == ' ' {
                            j += 1;
                        }
                        out.extend(&chars[i..j]);
                        out.push_str(HIDDEN);
                        i = value_end(&chars, j, in_url);
                        continue 'scan;
                    }
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Where a value starting at `j` ends: after its closing quote when it is
/// quoted, else at white space (or, in a URL's query, at `&` or `#`).
fn value_end(chars: &[char], mut j: usize, in_url: bool) -> usize {
    if j < chars.len() && chars[j] == '\'' {
        j += 1;
        while j < chars.len() {
            match chars[j] {
                '\\' => j += 2,
                '\'' => return j + 1,
                _ => j += 1,
            }
        }
        return chars.len();
    }
    while j < chars.len()
        && !chars[j].is_whitespace()
        && !(in_url && (chars[j] == '&' || chars[j] == '#'))
    {
        if chars[j] == '\\' {
            j += 1;
        }
        j += 1;
    }
    j.min(chars.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A URL's spelling of `text` (every byte but the unreserved ones as %XX).
    fn percent_encode(text: &str) -> String {
        text.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    #[test]
    fn settings_at_fault_are_named() {
        let e = check("host=h port=notaport").unwrap_err();
        assert_eq!((e.key.as_str(), e.value.as_str()), ("port", "notaport"));
        assert!(e.expected.contains("port number"), "{e}");
        let e = check("host=h sslmode=verify-full").unwrap_err();
        assert_eq!(e.value, "verify-full");
        assert!(e.expected.contains("verify-full are not supported"), "{e}");
        let e = check("host=h frobnicate=1").unwrap_err();
        assert_eq!(e.key, "frobnicate");
        assert!(e.expected.contains("sslmode"), "{e}");
        let e = check("postgres://alice:pw@h:notaport/db").unwrap_err();
        assert_eq!((e.key.as_str(), e.value.as_str()), ("port", "notaport"));
        let e = check("postgres://h/db?sslmode=verify-ca").unwrap_err();
        assert_eq!(e.value, "verify-ca");
        let e = check("host=h password='unclosed").unwrap_err();
        assert_eq!(e.value, HIDDEN);
        check("host=h port = 5432 password = 'a b\\'c' dbname=x").unwrap();
        check("postgresql://u:p%40ss@[::1]:5433,h2:5434/db?sslmode=require&connect_timeout=5")
            .unwrap();
    }

    #[test]
    fn values_are_read_as_libpq_reads_them() {
        assert_eq!(
            key_values("a=1  b = 'x y\\'z'  c=p\\ q").unwrap(),
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "x y'z".into()),
                ("c".into(), "p q".into())
            ]
        );
    }

    #[test]
    fn every_spelling_of_a_password_is_hidden() {
        for (text, secret) in [
            ("postgres://alice:S3cretPW@h/db", "S3cretPW"),
            ("postgres://alice@h/db?password=S3cretPW", "S3cretPW"),
            (
                "postgres://alice@h/db?sslmode=require&password=S3cretPW&x=1",
                "S3cretPW",
            ),
            ("host=h password='my S3cret' user=a", "S3cret"),
            ("host=h password = S3cretPW", "S3cretPW"),
            ("host=h PASSWORD=S3cretPW", "S3cretPW"),
            ("cannot read 'host=h password=S3cretPW': bad", "S3cretPW"),
            ("postgres://alice:p@ss:w0rd@h/db", "ss:w0rd"),
            ("PGPASSWORD=S3cretPW psql", "S3cretPW"),
            ("host=h sslpassword=S3cretPW", "S3cretPW"),
            ("host=h password='it\\'s S3cret'", "S3cret"),
        ] {
            let shown = redact(text);
            assert!(!shown.contains(secret), "{text} -> {shown}");
            assert!(shown.contains(HIDDEN), "{text} -> {shown}");
        }
        // What is not a secret stays.
        assert_eq!(
            redact("postgres://alice@h:5432/db"),
            "postgres://alice@h:5432/db"
        );
        assert_eq!(redact("host=h user=alice"), "host=h user=alice");
    }

    proptest! {
        /// Any password in any spelling libpq accepts never comes out, by
        /// its key or its place alone (nothing remembered).
        #[test]
        fn no_spelling_lets_a_password_through(
            secret in "[A-Za-z0-9!#$%&()*+,./:;<=>?@^_{|}~ '\\\\-]{6,24}",
            spelling in 0usize..7,
            prefix in "[a-z ]{0,10}",
        ) {
            prop_assume!(secret.trim().len() >= 6);
            let quoted = format!("'{}'", secret.replace('\\', "\\\\").replace('\'', "\\'"));
            let bare = secret.replace('\\', "\\\\").replace(' ', "\\ ").replace('\'', "\\'");
            let text = match spelling {
                0 => format!("host=h password={quoted} user=u"),
                1 => format!("host=h password = {quoted}"),
                2 => format!("postgres://u:{}@h/db", percent_encode(&secret)),
                3 => format!("postgres://u@h/db?password={}&sslmode=disable", percent_encode(&secret)),
                4 => format!("user=u password={bare}"),
                5 => format!("PGPASSWORD={quoted}"),
                _ => format!("host=h sslpassword={quoted} port=5"),
            };
            let shown = redact_patterns(&format!("{prefix}cannot read '{text}': invalid"));
            for part in secret.split([' ', '\'', '\\']).filter(|p| p.len() >= 4) {
                prop_assert!(!shown.contains(part), "{} -> {}", text, shown);
            }
            prop_assert!(!shown.contains(&percent_encode(&secret)), "{} -> {}", text, shown);
        }
    }
}

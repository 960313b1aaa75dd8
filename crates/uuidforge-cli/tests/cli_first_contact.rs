//! What a new user meets first: no secret in any output, control characters
//! shown escaped on a terminal, files from spreadsheets, a wrong key, man
//! pages, clear messages for a bad connection string or a negative count.

mod common;

use common::{exit_2, scratch, uuidforge};
use std::process::Command;

const SECRET: &str = "S3cretPW";
const V7: &str = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";

/// Every spelling of a password libpq takes, in `--db`, never comes back on
/// standard output or standard error, whatever fails.
#[test]
fn no_password_in_any_message() {
    for dsn in [
        format!("postgres://alice@127.0.0.1:1/db?password={SECRET}"),
        format!("postgres://alice:{SECRET}@127.0.0.1:1/db"),
        format!("postgresql://alice:{SECRET}@127.0.0.1:notaport/db"),
        format!("host=127.0.0.1 port=1 user=alice password='my {SECRET}'"),
        format!("host=127.0.0.1 port=1 user=alice password = {SECRET}"),
        format!("host=127.0.0.1 port=1 user=alice password={SECRET} sslmode=verify-full"),
        format!("host=127.0.0.1 port=1 user=alice password={SECRET} frobnicate=1"),
        format!("host=127.0.0.1 port=notaport user=alice password={SECRET}"),
        format!("host=127.0.0.1 port=1 user=alice password='{SECRET}"),
    ] {
        for args in [
            vec!["db", "--db", &dsn, "columns"],
            vec!["db", "--db", &dsn, "find", V7, "--json"],
            vec!["db", "--db", &dsn, "migrate-key", "t"],
        ] {
            let out = uuidforge().args(&args).output().unwrap();
            assert!(!out.status.success(), "{args:?}");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!text.contains(SECRET), "{args:?}: {text}");
            assert!(!text.is_empty());
        }
    }
    // serve refuses a bad --db before it listens, without the password.
    let out = uuidforge()
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--db",
            &format!("host=h port=x password={SECRET}"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("port") && !text.contains(SECRET),
        "{text}"
    );
}

/// The settings at fault are named with their value and what they take;
/// a refused connection says why.
#[test]
fn connection_errors_name_the_setting_and_the_cause() {
    for (dsn, wanted) in [
        (
            "host=127.0.0.1 sslmode=verify-full",
            "sslmode = 'verify-full'",
        ),
        ("host=127.0.0.1 port=notaport", "port = 'notaport'"),
        ("host=127.0.0.1 frobnicate=1", "frobnicate = '1'"),
        ("postgres://u@127.0.0.1:notaport/db", "port = 'notaport'"),
        ("postgres://u@127.0.0.1:1/db", "Connection refused"),
    ] {
        let e = exit_2(["db", "--db", dsn, "columns"]);
        assert!(e.contains(wanted), "{dsn}: {e}");
        assert!(!e.contains("invalid connection string"), "{dsn}: {e}");
    }
}

/// `--help` shows no value of an environment variable that may hold a
/// password or a token.
#[test]
fn help_shows_no_secret_from_the_environment() {
    for args in [
        vec!["db", "--help"],
        vec!["serve", "--help"],
        vec!["db", "columns", "--help"],
    ] {
        let out = uuidforge()
            .args(&args)
            .env("UUIDFORGE_DB", format!("postgres://alice:{SECRET}@h/db"))
            .env(
                "UUIDFORGE_NAMES_DB",
                format!("postgres://bob:{SECRET}@h/db"),
            )
            .env("UUIDFORGE_TOKEN", format!("{SECRET}-token-0123456789"))
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains(SECRET), "{args:?}: {text}");
    }
}

/// Runs `uuidforge ARGS` on a pseudo-terminal (util-linux `script`) with
/// `input` on standard input; what the terminal received.
fn on_a_terminal(args: &str, input: &str) -> String {
    let dir = scratch("terminal", &args.len().to_string());
    let file = dir.join("input");
    std::fs::write(&file, input).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("uuidforge");
    let out = Command::new("script")
        .args(["-qec"])
        .arg(format!("{} {args} < {}", bin.display(), file.display()))
        .arg("/dev/null")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Control characters in values reach a terminal escaped: no title change,
/// no bell, no cursor movement; through a pipe they stay as they were.
#[test]
fn control_characters_are_escaped_on_a_terminal() {
    let hostile = "abc\x1b]0;pwned\x07\x1b[2J\u{9b}31m";
    let shown = on_a_terminal("validate", &format!("{hostile}\n"));
    assert!(
        !shown.contains('\x1b') && !shown.contains('\x07') && !shown.contains('\u{9b}'),
        "{shown:?}"
    );
    assert!(shown.contains("abc\\x1b]0;pwned\\x07"), "{shown:?}");
    // The same through a pipe: byte for byte, for the program reading it.
    let out = uuidforge()
        .arg("validate")
        .write_stdin(format!("{hostile}\n"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains(hostile));
    // Values printed on standard output (a grep hit from a file) too.
    let dir = scratch("terminal", "grep");
    let doc = dir.join("doc.txt");
    std::fs::write(&doc, format!("\x1b]0;pwned\x07 {V7}\n")).unwrap();
    let shown = on_a_terminal(&format!("grep --version 7 {}", doc.display()), "");
    assert!(
        shown.contains(V7) && !shown.contains('\x1b') && shown.contains("\\x1b]0;pwned"),
        "{shown:?}"
    );
}

/// A file saved by a spreadsheet starts with a byte order mark and ends its
/// lines with CRLF: every reader of lines takes its first value.
#[test]
fn a_leading_byte_order_mark_is_skipped() {
    // Standard output of a run that must succeed (its errors shown if not).
    let succeeds = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let input = format!("\u{feff}{V7}\r\n{V7}\r\n");
    let text = succeeds(
        uuidforge()
            .args(["convert", "--to", "base32"])
            .write_stdin(input.clone())
            .output()
            .unwrap(),
    );
    assert_eq!(text.lines().count(), 2);
    assert_eq!(text.lines().next(), text.lines().nth(1));
    for args in [
        vec!["validate"],
        vec!["inspect"],
        vec!["convert", "--to", "simple"],
    ] {
        uuidforge()
            .args(&args)
            .write_stdin(input.clone())
            .assert()
            .success();
    }
    let dir = scratch("bom", "grep");
    let values = dir.join("values.txt");
    std::fs::write(&values, &input).unwrap();
    let csv = dir.join("rows.csv");
    std::fs::write(&csv, format!("\u{feff}id,name\n{V7},first\n")).unwrap();
    let found = succeeds(
        uuidforge()
            .args([
                "grep",
                "-f",
                values.to_str().unwrap(),
                "--column",
                "id",
                csv.to_str().unwrap(),
            ])
            .output()
            .unwrap(),
    );
    assert!(found.contains("first"));
}

/// A key file is exactly 32 raw bytes; a wrong key's reveal is refused with
/// exit 1 unless --force.
#[test]
fn key_files_have_one_format_and_a_wrong_key_is_noticed() {
    let dir = scratch("keys", "wrong");
    let (right, wrong) = (dir.join("right.key"), dir.join("wrong.key"));
    for k in [&right, &wrong] {
        uuidforge()
            .args(["hide", "--new-key", k.to_str().unwrap()])
            .assert()
            .success();
    }
    let hidden = String::from_utf8(
        uuidforge()
            .args(["hide", "--key-file", right.to_str().unwrap(), V7])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let hidden = hidden.trim();
    uuidforge()
        .args(["reveal", "--key-file", right.to_str().unwrap(), hidden])
        .assert()
        .success()
        .stdout(format!("{V7}\n"));
    let out = uuidforge()
        .args(["reveal", "--key-file", wrong.to_str().unwrap(), hidden])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrong key"));
    let forced = uuidforge()
        .args([
            "reveal",
            "--force",
            "--key-file",
            wrong.to_str().unwrap(),
            hidden,
        ])
        .output()
        .unwrap();
    assert!(forced.status.success());
    assert_eq!(forced.stdout.len(), 37);
    // Not 32 bytes: refused, named.
    for (content, len) in [
        (vec![7u8; 33], "33"),
        (vec![7u8; 31], "31"),
        (b"0123456789abcdef0123456789abcdef\n".to_vec(), "33"),
    ] {
        let f = dir.join("bad.key");
        std::fs::write(&f, content).unwrap();
        let e = exit_2(["hide", "--key-file", f.to_str().unwrap(), V7]);
        assert!(
            e.contains(&format!("holds {len} bytes")) && e.contains("exactly 32"),
            "{e}"
        );
    }
    let e = exit_2(["hide", "--key-file", "/etc/passwd", V7]);
    assert!(e.contains("exactly 32"), "{e}");
}

/// `man --dir` writes a page for every page any page refers to.
#[test]
fn every_man_page_referred_to_exists() {
    let dir = scratch("man", "pages");
    uuidforge()
        .args(["man", "--dir", dir.to_str().unwrap()])
        .assert()
        .success();
    let mut referred = std::collections::BTreeSet::new();
    let mut pages = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path())
            .unwrap()
            .replace("\\-", "-");
        pages += 1;
        for (i, _) in text.match_indices("(1)") {
            let start = text[..i]
                .rfind(|c: char| !(c.is_alphanumeric() || c == '-'))
                .map_or(0, |s| s + 1);
            let name = &text[start..i];
            if name.starts_with("uuidforge") {
                referred.insert(name.to_string());
            }
        }
    }
    assert!(referred.len() >= 20, "{referred:?}");
    for name in &referred {
        assert!(
            dir.join(format!("{name}.1")).is_file(),
            "{name}(1) is referred to but missing"
        );
    }
    assert!(dir.join("uuidforge-db-find.1").is_file() && pages >= 30);
}

#[test]
fn a_negative_count_is_named_as_such() {
    let e = exit_2(["gen", "-n", "-5"]);
    assert!(
        e.contains("'-5'") && e.contains("--count") && e.contains("whole number"),
        "{e}"
    );
}

/// A table whose name holds an escape sequence: `db columns` and `db find`
/// show it escaped on a terminal.
#[test]
fn database_names_are_escaped_on_a_terminal() {
    let db = common::fresh_database(
        "escapes",
        &format!("CREATE TABLE \"evil\x1b]0;pwned\x07\" (id uuid PRIMARY KEY); INSERT INTO \"evil\x1b]0;pwned\x07\" VALUES ('{V7}')"),
    );
    for args in ["columns", &format!("find {V7}")] {
        let shown = on_a_terminal(&format!("db --db {} {args}", common::url(&db)), "");
        assert!(
            shown.contains("evil\\x1b]0;pwned\\x07"),
            "{args}: {shown:?}"
        );
        assert!(!shown.contains('\x07'), "{args}: {shown:?}");
    }
}

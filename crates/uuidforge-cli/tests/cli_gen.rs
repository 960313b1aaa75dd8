//! `gen`, `bounds`, `partition`, `validate`, `profile`, settings precedence,
//! completions and the man page, through the built binary.

use assert_cmd::Command;
use predicates::prelude::*;
use uuid::Uuid;

mod common;
use common::uuidforge;

fn lines(out: &[u8]) -> Vec<String> {
    String::from_utf8(out.to_vec())
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn a_million_v7_are_strictly_increasing_and_dated_now() {
    let before = now_ms();
    let out = common::ok_stdout(&["gen", "-n", "1000000"]);
    let after = now_ms();
    let ids: Vec<Uuid> = lines(&out).iter().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 1_000_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    for id in &ids {
        assert_eq!(id.get_version_num(), 7);
        let ms = uuidforge::v7::unix_ms(id);
        // Bumps on counter overflow may run a little ahead of the clock.
        assert!(
            ms >= before && ms <= after + 1_000,
            "{before} <= {ms} <= {after}"
        );
    }
}

#[test]
fn every_version_and_format() {
    for version in ["1", "4", "6", "7", "8"] {
        let out = common::ok_stdout(&["gen", "--version", version, "-n", "5"]);
        let ids: Vec<Uuid> = lines(&out).iter().map(|l| l.parse().unwrap()).collect();
        assert_eq!(ids.len(), 5);
        assert!(
            ids.iter()
                .all(|u| u.get_version_num().to_string() == version),
            "{version}"
        );
        if version != "4" && version != "1" {
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "v{version} increasing");
        }
    }
    for (format, len) in [
        ("canonical", 36),
        ("simple", 32),
        ("braced", 38),
        ("urn", 45),
        ("base32", 26),
        ("base32-check", 27),
        ("uuid192", 53),
    ] {
        let out = common::ok_stdout(&["gen", "--format", format, "-n", "3"]);
        let l = lines(&out);
        assert_eq!(l.len(), 3);
        assert!(l.iter().all(|x| x.len() == len), "{format}: {l:?}");
        uuidforge()
            .args(["convert", "--to", "canonical", "--uuid-part", &l[0]])
            .assert()
            .success();
    }
    let bin = common::ok_stdout(&["gen", "--format", "binary", "-n", "4"]);
    assert_eq!(bin.len(), 64);
    let upper = common::ok_stdout(&["gen", "--upper", "--format", "urn"]);
    let upper = String::from_utf8(upper).unwrap();
    assert!(
        upper.starts_with("urn:uuid:") && upper[9..].trim() == upper[9..].trim().to_uppercase()
    );
}

#[test]
fn name_based_versions() {
    uuidforge()
        .args(["gen", "--version", "5", "--name", "www.example.com"])
        .assert()
        .success()
        .stdout("2ed6657d-e927-568b-95e1-2665a8aea6a2\n");
    uuidforge()
        .args([
            "gen",
            "--version",
            "3",
            "--namespace",
            "dns",
            "--name",
            "www.example.com",
            "--name",
            "www.example.com",
        ])
        .assert()
        .success()
        .stdout("5df41881-3aed-3515-88a7-2f4a814cf09e\n5df41881-3aed-3515-88a7-2f4a814cf09e\n");
    uuidforge()
        .args([
            "gen",
            "--version",
            "8",
            "--namespace",
            "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
            "--name",
            "www.example.com",
        ])
        .assert()
        .success()
        .stdout("5c146b14-3c52-8afd-938a-375d0df1fbf6\n");
}

#[test]
fn shift_at_profile_and_json() {
    let at = common::ok_stdout(&["gen", "--at", "2024-05-01T12:00:00Z", "-n", "3"]);
    let ids: Vec<Uuid> = lines(&at).iter().map(|l| l.parse().unwrap()).collect();
    assert!(ids
        .iter()
        .all(|u| uuidforge::v7::unix_ms(u) == 1_714_564_800_000));
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let at_ms = common::ok_stdout(&["gen", "--at", "1714564800000"]);
    assert!(String::from_utf8(at_ms)
        .unwrap()
        .starts_with("018f3406-9e00-7"));

    let shifted = common::ok_stdout(&["gen", "--shift", "-1d"]);
    let ms = uuidforge::v7::unix_ms(&String::from_utf8(shifted).unwrap().trim().parse().unwrap());
    let expected = now_ms() - 86_400_000;
    assert!(ms.abs_diff(expected) < 5_000, "{ms} vs {expected}");

    let pg18 = common::ok_stdout(&["gen", "--profile", "pg18", "-n", "1000"]);
    let ids: Vec<Uuid> = lines(&pg18).iter().map(|l| l.parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));

    let json = common::ok_stdout(&["gen", "--json", "-n", "2", "--format", "base32"]);
    for l in lines(&json) {
        let j: serde_json::Value = serde_json::from_str(&l).unwrap();
        assert_eq!(j["version"], 7);
        assert_eq!(j["uuid"].as_str().unwrap().len(), 26);
        assert!(j["timestamp"]["iso8601"].as_str().unwrap().ends_with('Z'));
    }
}

#[test]
fn bad_input_is_one_line_exit_2_and_no_output() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["gen", "--format", "hex"],
            "invalid value 'hex' for the output format (from --format)",
        ),
        (
            &["gen", "-n", "many"],
            "invalid value 'many' for '--count <COUNT>'",
        ),
        (
            &["gen", "--version", "2"],
            "invalid value '2' for '--version <VERSION>'",
        ),
        (
            &["gen", "--at", "yesterday"],
            "invalid value 'yesterday' for '--at <AT>'",
        ),
        (
            &["gen", "--shift", "3 parsecs"],
            "invalid value '3 parsecs' for '--shift <SHIFT>'",
        ),
        (
            &["gen", "--profile", "nope"],
            "invalid value 'nope' for the profile (from --profile)",
        ),
        (
            &["gen", "--version", "4", "--at", "now"],
            "for '--at': expected no at with version 4: only version 7 takes it",
        ),
        (
            &["gen", "--version", "5"],
            "--name is required for --version 5",
        ),
        (
            &["gen", "--version", "5", "--name", "x", "-n", "2"],
            "invalid value '2' for '--count'",
        ),
        (
            &[
                "gen",
                "--version",
                "5",
                "--name",
                "x",
                "--namespace",
                "moon",
            ],
            "invalid value 'moon' for '--namespace'",
        ),
        (
            &["gen", "--name", "x"],
            "--name and --namespace apply to versions 3, 5 and 8",
        ),
        (
            &["gen", "--json", "--format", "binary"],
            "--json cannot carry --format binary",
        ),
        (
            &["gen", "--shift", "-100000w"],
            "for '--shift': expected a shift that keeps the timestamp from 1970 to 10889 AD (it moves it to",
        ),
        (
            &[
                "bounds",
                "--from",
                "2024-02-01T00:00:00Z",
                "--to",
                "2024-01-01T00:00:00Z",
            ],
            "'--to': invalid to",
        ),
        (
            &["bounds", "--from", "-5", "--to", "0"],
            "invalid value '-5' for '--from'",
        ),
        (
            &["partition", "--bits", "0", "--from", "0", "--to", "1"],
            "invalid value '0' for '--bits <BITS>'",
        ),
        (
            &[
                "partition",
                "--bits",
                "48",
                "--from",
                "0",
                "--to",
                "1000000000",
            ],
            "'--bits': invalid bits",
        ),
        (&["profile", "show", "nope"], "unknown profile 'nope'"),
        (
            &["profile", "check", "/nonexistent/profile.json"],
            "/nonexistent/profile.json:",
        ),
    ];
    for (args, message) in cases {
        uuidforge()
            .args(*args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(*message));
    }
}

#[test]
fn broken_pipe_on_gen_ends_quietly() {
    let (_, status, err) = common::read_then_close(&["gen", "-n", "5000000"], None, 37);
    assert!(status.success(), "{status:?} {err}");
    assert_eq!(err, "", "no progress bar or error when piped");
}

#[test]
fn bounds_and_partition() {
    uuidforge()
        .args(["bounds", "--from", "2024-01-01T00:00:00Z", "--to", "2024-02-01T00:00:00Z", "--column", "order id"])
        .assert()
        .success()
        .stdout(predicate::str::contains("start     018cc251-f400-7000-8000-000000000000"))
        .stdout(predicate::str::contains(
            "predicate \"order id\" >= '018cc251-f400-7000-8000-000000000000' AND \"order id\" < '018d61f7-1800-7000-8000-000000000000'",
        ));
    let j = common::ok_stdout(&["bounds", "--from", "0", "--to", "1", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&j).unwrap();
    assert_eq!(j["end"], "00000000-0001-7000-8000-000000000000");
    uuidforge()
        .args(["partition", "--bits", "17", "--from", "2024-01-01T00:00:00Z", "--to", "2024-03-01T00:00:00Z", "--table", "t", "--schema", "s"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "CREATE TABLE \"s\".\"t_p0031a\" PARTITION OF \"s\".\"t\" FOR VALUES FROM ('018d0000-0000-0000-0000-000000000000') TO ('018d8000-0000-0000-0000-000000000000');",
        ))
        .stdout(predicate::function(|s: &str| s.matches("CREATE TABLE").count() == 3));
}

#[test]
fn validate_exit_codes_and_reasons() {
    let now = common::ok_stdout(&["gen"]);
    let now = String::from_utf8(now).unwrap().trim().to_string();
    let future = common::ok_stdout(&["gen", "--shift", "1h"]);
    let future = String::from_utf8(future).unwrap().trim().to_string();
    uuidforge()
        .args(["validate", "--version", "7", "--max-skew", "5s", &now])
        .assert()
        .success()
        .stderr("");
    uuidforge()
        .args(["validate", "--max-skew", "5s"])
        .write_stdin(format!(
            "{now}\n{future}\nnot-a-uuid\n919108f7-52d1-4320-9bac-f847db4148a8\n"
        ))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("line 2:").and(predicate::str::contains("in the future")))
        .stderr(predicate::str::contains("line 3: not-a-uuid: invalid UUID"))
        .stderr(
            predicate::str::contains("line 4:").and(predicate::str::contains("has no timestamp")),
        )
        .stderr(predicate::function(|s: &str| !s.contains("line 1:")));
    uuidforge()
        .args(["validate", "--not-before", "2030-01-01T00:00:00Z", &now])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "is before 2030-01-01T00:00:00.000Z",
        ));
    uuidforge()
        .args(["validate", "--version", "4", &now])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("version 7, expected 4"));
}

#[test]
fn profiles_list_show_check() {
    uuidforge()
        .args(["profile", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "default    unix_ts_ms 48 | ver 4 | guard 1 | counter 17",
        ))
        .stdout(predicate::str::contains("pg18"));
    let shown = common::ok_stdout(&["profile", "show", "counter42"]);
    let text = String::from_utf8(shown).unwrap();
    let json: String = text
        .lines()
        .filter(|l| !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(j["counter_bits"], 42);

    let dir = std::env::temp_dir().join(format!("uuidforge-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.json");
    std::fs::write(
        &good,
        r#"{"name": "mine", "counter_bits": 24, "guard_bits": 2}"#,
    )
    .unwrap();
    uuidforge()
        .args(["profile", "check", good.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("valid profile 'mine'"));
    let out = common::ok_stdout(&["gen", "--profile", good.to_str().unwrap(), "-n", "100"]);
    assert_eq!(lines(&out).len(), 100);
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"counter_bits": 80}"#).unwrap();
    uuidforge()
        .args(["profile", "check", bad.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid counter_bits: 80, expected 0..=74",
        ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn settings_precedence_flag_env_config() {
    let dir = std::env::temp_dir().join(format!("uuidforge-xdg-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("uuidforge")).unwrap();
    std::fs::write(
        dir.join("uuidforge/config.json"),
        r#"{"format": "simple", "profile": "pg18"}"#,
    )
    .unwrap();
    let run = |env_format: Option<&str>, flag: Option<&str>| {
        let mut c = Command::cargo_bin("uuidforge").unwrap();
        c.env("XDG_CONFIG_HOME", &dir)
            .env_remove("UUIDFORGE_FORMAT")
            .env_remove("UUIDFORGE_PROFILE");
        if let Some(f) = env_format {
            c.env("UUIDFORGE_FORMAT", f);
        }
        c.arg("gen");
        if let Some(f) = flag {
            c.args(["--format", f]);
        }
        String::from_utf8(c.assert().success().get_output().stdout.clone())
            .unwrap()
            .trim()
            .len()
    };
    assert_eq!(run(None, None), 32, "config file");
    assert_eq!(
        run(Some("base32"), None),
        26,
        "environment over config file"
    );
    assert_eq!(
        run(Some("base32"), Some("urn")),
        45,
        "flag over environment"
    );
    std::fs::write(dir.join("uuidforge/config.json"), r#"{"colour": "red"}"#).unwrap();
    let mut c = Command::cargo_bin("uuidforge").unwrap();
    c.env("XDG_CONFIG_HOME", &dir)
        .env_remove("UUIDFORGE_FORMAT")
        .env_remove("UUIDFORGE_PROFILE");
    c.arg("gen")
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("unknown field `colour`"));
    let mut c = Command::cargo_bin("uuidforge").unwrap();
    c.env("XDG_CONFIG_HOME", &dir)
        .env("UUIDFORGE_PROFILE", "nope")
        .env("UUIDFORGE_FORMAT", "canonical");
    c.arg("gen")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value 'nope' for the profile (from UUIDFORGE_PROFILE)",
        ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn completions_and_man_page_come_from_the_same_definition() {
    for shell in ["bash", "zsh", "fish"] {
        uuidforge()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(
                predicate::str::contains("uuidforge").and(predicate::str::contains("partition")),
            );
    }
    uuidforge()
        .arg("man")
        .assert()
        .success()
        .stdout(predicate::str::contains(".TH uuidforge").and(predicate::str::contains("gen")));
}

#[test]
fn progress_bar_only_on_a_terminal() {
    // `script` (util-linux, in every Debian) gives the command a terminal.
    let bin = assert_cmd::cargo::cargo_bin("uuidforge");
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{} gen -n 3000000 > /dev/null", bin.display()),
            "/dev/null",
        ])
        .env_remove("UUIDFORGE_FORMAT")
        .env_remove("UUIDFORGE_PROFILE")
        // The terminal `script` gives is a capable one whatever TERM the
        // test runs under (a CI's may be `dumb` or unset, where the bar
        // rightly stays hidden).
        .env("TERM", "xterm-256color")
        .output()
        .expect("script(1) runs");
    assert!(out.status.success());
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains("/3000000 UUIDs"),
        "no progress bar on a terminal: {screen:?}"
    );
    // Piped, there is none (see broken_pipe_on_gen_ends_quietly too).
    uuidforge()
        .args(["gen", "-n", "1500000"])
        .assert()
        .success()
        .stderr("");
}

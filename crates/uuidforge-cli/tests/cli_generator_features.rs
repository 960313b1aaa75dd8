//! Issue 15: each generator feature is the same in SQL, on the command line
//! and over HTTP — deterministic backfill (E8), timestamp hiding (E10),
//! checkpoints (E5), shard layouts (E11) and the generator's figures (E4) —
//! and bad keys, files and layouts are refused naming what is wrong.

mod common;

use common::{admin_sql, exit_2, exit_2_with_stdin, fresh_database, ok_stdout, scratch, uuidforge};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};

fn stdout_of(args: &[&str]) -> String {
    String::from_utf8(ok_stdout(args)).unwrap()
}

/// The output lines of a successful run fed `stdin`.
fn lines_with_stdin(args: &[&str], stdin: impl Into<String>) -> Vec<String> {
    let out = uuidforge()
        .args(args)
        .write_stdin(stdin.into())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn database_with_extension(tag: &str) -> String {
    let db = fresh_database(tag, "");
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    db
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The token of the servers these tests start.
const SERVER_TOKEN: &str = "generator-features-test-token";

/// A `uuidforge serve` on a free loopback port, stopped on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let bind = format!("127.0.0.1:{port}");
        let names = dir.join("names.redb");
        let mut args = vec![
            "serve",
            "--bind",
            &bind,
            "--names-db",
            names.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
            .args(&args)
            .env("UUIDFORGE_TOKEN", SERVER_TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Server { child, port };
        for _ in 0..200 {
            if server.request("GET", "/healthz", None).0 == 200 {
                return server;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the server did not come up");
    }

    /// A plain HTTP/1.1 exchange: status and body.
    fn request(&self, method: &str, path: &str, json: Option<&str>) -> (u16, String) {
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return (0, String::new());
        };
        let body = json.unwrap_or("");
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {SERVER_TOKEN}\r\nConnection: close\r\nAccept: text/plain, application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        let status = response[9..12].parse().unwrap();
        let (head, rest) = response.split_once("\r\n\r\n").unwrap();
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(rest)
        } else {
            rest.to_string()
        };
        (status, body)
    }
}

fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = text.split_once("\r\n").unwrap();
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.push_str(&rest[..n]);
        text = &rest[n + 2..];
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn backfill_keys_are_the_same_in_sql_on_the_command_line_and_over_http() {
    let db = database_with_extension("keyed");
    let dir = scratch("keyed", "http");
    let server = Server::start(&dir, &[]);
    let rows = [
        ("2022-02-22T19:22:22Z", "orders:42"),
        ("2024-05-01T12:00:00.123Z", "customer/ÅÖ"),
        ("1970-01-01T00:00:00Z", ""),
        ("2024-05-01T12:00:00.123Z", "tab-free key with spaces"),
    ];
    let mut stdin_lines = String::new();
    let mut expected = Vec::new();
    for (at, key) in rows {
        let sql = admin_sql(
            &db,
            &format!(
                "SELECT uuidv7_from('{at}'::timestamptz, '{}')::text",
                key.replace('\'', "''")
            ),
        );
        let cli = stdout_of(&["gen", "--at", at, "--key", key]);
        assert_eq!(cli.trim(), sql, "CLI vs SQL for ({at}, {key})");
        let query = format!(
            "/api/v1/uuids?at={}&key={}",
            at.replace('+', "%2B"),
            key.bytes().map(|b| format!("%{b:02X}")).collect::<String>()
        );
        let (status, body) = server.request("GET", &query, None);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body.trim(), sql, "HTTP vs SQL for ({at}, {key})");
        stdin_lines.push_str(&format!("{at}\t{key}\n"));
        expected.push(sql);
    }
    // One UUID per input line, in order: what a backfill script pipes.
    let got = lines_with_stdin(&["gen", "--key-from-stdin"], stdin_lines);
    assert_eq!(got, expected);
    // With --at the whole line is the key.
    let lines = lines_with_stdin(
        &["gen", "--at", "2022-02-22T19:22:22Z", "--key-from-stdin"],
        "orders:42\norders:43\n",
    );
    assert_eq!(lines[0], expected[0]);
    assert_eq!(
        lines[1],
        admin_sql(
            &db,
            "SELECT uuidv7_from('2022-02-22T19:22:22Z'::timestamptz, 'orders:43')::text"
        )
    );
    // A secret file gives SQL's three-argument form.
    let secret = dir.join("secret");
    std::fs::write(&secret, b"0123456789abcdef0123456789abcdef").unwrap();
    assert_eq!(
        stdout_of(&[
            "gen",
            "--at",
            "2022-02-22T19:22:22Z",
            "--key",
            "orders:42",
            "--secret-file",
            secret.to_str().unwrap()
        ])
        .trim(),
        admin_sql(
            &db,
            "SELECT uuidv7_from('2022-02-22T19:22:22Z'::timestamptz, 'orders:42', '0123456789abcdef0123456789abcdef'::bytea)::text"
        )
    );

    // Bad input names the field; nothing half-written passes for success.
    let e = exit_2(["gen", "--key", "k"]);
    assert!(e.contains("--at"), "{e}");
    // The line before the bad one was answered; the bad one is named.
    let (out, e) = exit_2_with_stdin(
        ["gen", "--key-from-stdin"],
        "2024-05-01T12:00:00Z\tok\nno tab here\n",
    );
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(e.contains("line 2: expected TIME<TAB>KEY"), "{e}");
    let (_, e) = exit_2_with_stdin(["gen", "--key-from-stdin"], "yesterday\tk\n");
    assert!(e.contains("line 1: invalid time 'yesterday'"), "{e}");
    std::fs::write(&secret, b"short").unwrap();
    let e = exit_2([
        "gen",
        "--at",
        "now",
        "--key",
        "k",
        "--secret-file",
        secret.to_str().unwrap(),
    ]);
    assert!(e.contains("--secret-file") && e.contains("5 bytes"), "{e}");
    let e = exit_2(["gen", "--at", "now", "--key", "k", "-n", "3"]);
    assert!(e.contains("--count"), "{e}");
    for (query, field) in [
        ("/api/v1/uuids?key=k", "at"),
        ("/api/v1/uuids?at=now&key=k&count=2", "count"),
        ("/api/v1/uuids?at=now&key=k&profile=pg18", "profile"),
        ("/api/v1/uuids?at=now&key=k&version=4", "version"),
        ("/api/v1/uuids?at=-5&key=k", "at"),
    ] {
        let (status, body) = server.request("GET", query, None);
        assert_eq!(status, 400, "{query}: {body}");
        let j: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(j["error"]["field"], field, "{query}: {body}");
    }
}

#[test]
fn hiding_is_the_same_in_sql_on_the_command_line_and_over_http() {
    let db = database_with_extension("hide");
    let dir = scratch("hide", "keys");
    let key = dir.join("hide.key");
    uuidforge()
        .args(["hide", "--new-key", key.to_str().unwrap()])
        .assert()
        .success();
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(&key).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let bytes = std::fs::read(&key).unwrap();
    assert_eq!(bytes.len(), 32);
    let key_hex = hex(&bytes);
    let server = Server::start(&dir, &["--hide-key-file", key.to_str().unwrap()]);

    let values: Vec<String> = stdout_of(&["gen", "-n", "50"])
        .lines()
        .map(String::from)
        .collect();
    let hidden_cli: Vec<String> = {
        let mut args = vec!["hide", "--key-file", key.to_str().unwrap()];
        args.extend(values.iter().map(String::as_str));
        stdout_of(&args).lines().map(String::from).collect()
    };
    let list = values
        .iter()
        .map(|v| format!("'{v}'::uuid"))
        .collect::<Vec<_>>()
        .join(",");
    let hidden_sql = admin_sql(
        &db,
        &format!(
            "SELECT string_agg(uuid_hide(u, '\\x{key_hex}'::bytea)::text, ',' ORDER BY n) FROM unnest(ARRAY[{list}]) WITH ORDINALITY AS t(u, n)"
        ),
    );
    assert_eq!(hidden_cli.join(","), hidden_sql, "CLI vs SQL");
    let body = serde_json::json!({ "values": values }).to_string();
    let (status, out) = server.request("POST", "/api/v1/hide", Some(&body));
    assert_eq!(status, 200, "{out}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let hidden_http: Vec<String> = j["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(hidden_http, hidden_cli, "HTTP vs CLI");
    assert!(hidden_cli.iter().all(|h| h.as_bytes()[14] == b'4'));

    // Back again, from standard input, over HTTP and in SQL.
    let revealed = lines_with_stdin(
        &["reveal", "--key-file", key.to_str().unwrap()],
        hidden_cli.join("\n"),
    );
    assert_eq!(revealed, values);
    let body = serde_json::json!({ "values": hidden_http }).to_string();
    let (_, out) = server.request("POST", "/api/v1/reveal", Some(&body));
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["values"], serde_json::json!(values));
    assert_eq!(
        admin_sql(
            &db,
            &format!(
                "SELECT uuid_reveal('{}'::uuid, '\\x{key_hex}'::bytea)::text",
                hidden_cli[0]
            )
        ),
        values[0]
    );

    // Refusals: a v4 to hide, a v7 to reveal, short and missing keys, an
    // existing key file, and a server without a key.
    let (status, out) = server.request(
        "POST",
        "/api/v1/hide",
        Some(r#"{"values": ["919108f7-52d1-4320-9bac-f847db4148a8"]}"#),
    );
    assert_eq!(status, 400);
    assert!(out.contains(r#""field":"values[0]""#), "{out}");
    let e = uuidforge()
        .args(["reveal", "--key-file", key.to_str().unwrap(), &values[0]])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8_lossy(&e).contains("argument 1"));
    let short = dir.join("short.key");
    std::fs::write(&short, [1u8; 31]).unwrap();
    let e = exit_2(["hide", "--key-file", short.to_str().unwrap(), &values[0]]);
    assert!(e.contains("31 bytes") && e.contains("--key-file"), "{e}");
    let e = exit_2(["hide", "--key-file", "/nonexistent/k", &values[0]]);
    assert!(e.contains("cannot read the key file"), "{e}");
    let e = exit_2(["hide", "--new-key", key.to_str().unwrap()]);
    assert!(e.contains("never overwritten"), "{e}");
    assert_eq!(std::fs::read(&key).unwrap(), bytes, "the key is untouched");
    let e = exit_2([
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--hide-key-file",
        short.to_str().unwrap(),
    ]);
    assert!(e.contains("--hide-key-file"), "{e}");
    let dir = scratch("hide", "nokey");
    let plain = Server::start(&dir, &[]);
    let (status, out) = plain.request("POST", "/api/v1/hide", Some(&body));
    assert_eq!(status, 404);
    assert!(out.contains("--hide-key-file"), "{out}");
}

#[test]
fn a_state_file_keeps_order_across_runs_after_the_clock_went_back() {
    if std::process::Command::new("faketime")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("faketime is missing: scripts/pg-setup.sh installs it");
    }
    let dir = scratch("state", "clock");
    let state = dir.join("gen.state");
    let state_arg = state.to_str().unwrap();
    let first = stdout_of(&["gen", "-n", "1000", "--state", state_arg]);
    let last = first.lines().last().unwrap().to_string();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&state).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let under_faked_clock = |extra: &[&str]| -> String {
        let out = std::process::Command::new("faketime")
            .arg("-f")
            .arg("-2h")
            .arg(assert_cmd::cargo::cargo_bin("uuidforge"))
            .args(["gen"])
            .args(extra)
            .env("DONT_FAKE_MONOTONIC", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    // Control: the faked clock really is behind.
    let without = under_faked_clock(&[]);
    assert!(without < last, "{without} should be below {last}");
    // With the state file, the next run is above every earlier value.
    let with = under_faked_clock(&["--state", state_arg]);
    assert!(with > last, "{with} should be above {last}");
    let again = under_faked_clock(&["--state", state_arg, "-n", "3"]);
    assert!(again.lines().next().unwrap() > with.as_str());

    std::fs::write(&state, "{ not json").unwrap();
    let e = exit_2(["gen", "--state", state_arg]);
    assert!(e.contains("--state") && e.contains("corrupt"), "{e}");
    let e = exit_2(["gen", "--state", state_arg, "--at", "now"]);
    assert!(e.contains("--state"), "{e}");
}

#[test]
fn stats_report_what_the_generator_went_through() {
    // Two counter bits: at most four values a millisecond, so 200 000
    // values must run the timestamp about 50 s ahead, however fast or slow
    // this machine is — and the figures must say so.
    let dir = scratch("stats", "profile");
    let profile = dir.join("tiny.json");
    std::fs::write(&profile, r#"{"counter_bits": 2, "guard_bits": 0}"#).unwrap();
    let out = uuidforge()
        .args(["gen", "-n", "200000", "--stats", "--profile"])
        .arg(&profile)
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        200_000
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("uuidforge: stats "))
        .unwrap_or_else(|| panic!("no stats line in {stderr}"));
    let j: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(j["generated"], 200_000);
    for field in [
        "overflows",
        "rollbacks",
        "resets",
        "reseeds",
        "clock_failures",
        "ahead_ms",
        "max_ahead_ms",
    ] {
        assert!(j[field].is_u64(), "{field} in {j}");
    }
    assert!(j["overflows"].as_u64().unwrap() >= 40_000, "{j}");
    assert!(j["max_ahead_ms"].as_u64().unwrap() >= 30_000, "{j}");
}

#[test]
fn shard_layouts_are_the_same_on_the_command_line_and_in_sql() {
    let db = database_with_extension("shard");
    let dir = scratch("shard", "layout");
    let file = dir.join("layout.json");
    let report = stdout_of(&[
        "shard-layout",
        "--node-bits",
        "10",
        "--rate",
        "2000000",
        "--nodes",
        "600",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(report.contains("node 10"), "{report}");
    assert!(report.contains("per year"), "{report}");
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "shard-layout",
        "--node-bits",
        "10",
        "--rate",
        "2000000",
        "--nodes",
        "600",
        "--json",
    ]))
    .unwrap();
    // 2000 per ms need 11 bits, and one more since a millisecond starts below half.
    assert_eq!(json["layout"]["counter_bits"], 12);
    assert_eq!(json["counter_holds_the_rate"], true);
    let p_day = json["collision_probability"]["random_node_ids"]["day"]
        .as_f64()
        .unwrap();
    let p_year = json["collision_probability"]["random_node_ids"]["year"]
        .as_f64()
        .unwrap();
    assert!(p_day > 0.0 && p_year >= p_day && p_year <= 1.0, "{json}");
    let layout = std::fs::read_to_string(&file).unwrap();
    let node_of = |u: &str| -> u64 {
        let hex: String = u.chars().filter(|c| *c != '-').collect();
        u64::from_str_radix(&hex[13..16], 16).unwrap() >> 2
    };
    let cli: Vec<String> = stdout_of(&[
        "gen",
        "--version",
        "8",
        "--shard-layout",
        file.to_str().unwrap(),
        "--node",
        "777",
        "-n",
        "500",
    ])
    .lines()
    .map(String::from)
    .collect();
    assert!(cli.windows(2).all(|w| w[0] < w[1]));
    assert!(cli
        .iter()
        .all(|u| u.as_bytes()[14] == b'8' && node_of(u) == 777));
    let sql = admin_sql(
        &db,
        &format!(
            "SET uuidforge.shard_layout = '{}'; SELECT uuidv8_shard(777)::text",
            layout.trim()
        ),
    );
    assert_eq!(node_of(&sql), 777);
    assert_eq!(&sql[14..15], "8");

    let e = exit_2([
        "gen",
        "--version",
        "8",
        "--shard-layout",
        file.to_str().unwrap(),
        "--node",
        "1024",
    ]);
    assert!(e.contains("--node") && e.contains("1024"), "{e}");
    let e = exit_2([
        "shard-layout",
        "--node-bits",
        "4",
        "--rate",
        "10",
        "--nodes",
        "17",
    ]);
    assert!(e.contains("--nodes"), "{e}");
    let e = exit_2(["shard-layout", "--node-bits", "70", "--rate", "10"]);
    assert!(e.contains("--node-bits"), "{e}");
    std::fs::write(&file, r#"{"node_bits": 10, "counter_bits": 0}"#).unwrap();
    let e = exit_2([
        "gen",
        "--version",
        "8",
        "--shard-layout",
        file.to_str().unwrap(),
        "--node",
        "1",
    ]);
    assert!(e.contains("counter_bits"), "{e}");
    let e = exit_2([
        "gen",
        "--shard-layout",
        file.to_str().unwrap(),
        "--node",
        "1",
    ]);
    assert!(e.contains("--version 8"), "{e}");
}

#[test]
fn registered_profiles_and_telemetry_in_sql() {
    let db = database_with_extension("profiles");
    let stored = admin_sql(
        &db,
        r#"SELECT uuidforge_profile_register('c30', '{"counter_bits": 30, "guard_bits": 1}')::text"#,
    );
    let j: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(j["counter_bits"], 30);
    assert_eq!(j["name"], "c30");
    // Telemetry is per session without shared_preload_libraries and
    // server-wide with it: reading it before and after in the session that
    // generates holds in both modes, so the test needs no server setting.
    let counts = admin_sql(
        &db,
        r#"SET uuidforge.profile = 'c30';
           CREATE TEMP TABLE before AS SELECT value FROM uuidforge_telemetry() WHERE metric = 'generated' AND profile = 'registered';
           CREATE TEMP TABLE made AS SELECT n, uuidv7() AS u FROM generate_series(1, 2000) n;
           SELECT concat_ws(' ',
             (SELECT value FROM before),
             (SELECT value FROM uuidforge_telemetry() WHERE metric = 'generated' AND profile = 'registered'),
             (SELECT bool_and(a < b) FROM (SELECT u AS a, lead(u) OVER (ORDER BY n) AS b FROM made) t WHERE b IS NOT NULL),
             (SELECT value FROM uuidforge_telemetry() WHERE metric = 'server_wide'),
             uuidv7_is_server_wide())"#,
    );
    let fields: Vec<&str> = counts.split(' ').collect();
    let [before, after, ordered, metric_wide, server_wide] = fields[..] else {
        panic!("unexpected telemetry row {counts:?}");
    };
    let (before, after): (i64, i64) = (before.parse().unwrap(), after.parse().unwrap());
    // Values stay strictly increasing under the registered profile, and
    // the telemetry counts them under "registered".
    assert_eq!(ordered, "t");
    assert!(after >= before + 2000, "{before} -> {after}");
    // The telemetry says which mode it counts in, as the server does.
    assert_eq!(metric_wide == "1", server_wide == "t", "{counts}");
    // The same profile from the command line (a JSON file) gives the same layout.
    let dir = scratch("profiles", "file");
    let file = dir.join("c30.json");
    std::fs::write(&file, &stored).unwrap();
    let out = stdout_of(&["gen", "--profile", file.to_str().unwrap(), "-n", "3"]);
    assert_eq!(out.lines().count(), 3);
}

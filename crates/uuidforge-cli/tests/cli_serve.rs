//! `uuidforge serve` as a process: it listens where told, logs one line per
//! request, and exits cleanly on SIGTERM and SIGINT.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

fn names_file(tag: &str) -> String {
    std::env::temp_dir()
        .join(format!(
            "uuidforge-cli-serve-{}-{tag}.redb",
            std::process::id()
        ))
        .display()
        .to_string()
}

fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn serve_and_stop(signal: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_uuidforge"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--names-db",
            &names_file(signal),
        ])
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("a log line").unwrap();
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.trim_end_matches('/').to_string();
        }
    };
    let health = http_get(&addr, "/healthz");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let batch = http_get(&addr, "/api/v1/uuids?count=3");
    assert!(batch.contains("{\"uuids\":["), "{batch}");
    let bad = http_get(&addr, "/api/v1/uuids?count=0");
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let log = rest.join("\n");
    let exit = child.wait().unwrap();
    assert!(exit.success(), "exit {exit:?}: {log}");
    for line in [
        "GET /healthz 200",
        "GET /api/v1/uuids 200",
        "GET /api/v1/uuids 400",
        &format!("{signal}: shutting down"),
        "stopped",
    ] {
        assert!(log.contains(line), "{line:?} not in log:\n{log}");
    }
    assert_eq!(
        rest.iter()
            .filter(|l| l.contains("uuidforge::http"))
            .count(),
        3,
        "one line per request:\n{log}"
    );
    let _ = std::fs::remove_file(names_file(signal));
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    serve_and_stop("TERM");
}

#[test]
fn sigint_stops_the_server_cleanly() {
    serve_and_stop("INT");
}

#[test]
fn bad_settings_are_exit_2_naming_the_flag() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for (args, message) in [
        (
            vec!["serve", "--bind", &addr],
            format!("invalid value '{addr}' for '--bind'"),
        ),
        (
            vec!["serve", "--bind", "localhost"],
            "invalid value 'localhost' for '--bind".to_string(),
        ),
        (
            vec![
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--names-db",
                "/nonexistent-dir/n.redb",
            ],
            "invalid value '/nonexistent-dir/n.redb' for '--names-db'".to_string(),
        ),
        (
            vec!["serve", "--max-count", "0"],
            "invalid value '0' for '--max-count".to_string(),
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_uuidforge"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&message), "{args:?}: {err}");
    }
}

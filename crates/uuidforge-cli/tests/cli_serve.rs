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
    http_get_with(addr, path, "")
}

type LogLines = std::io::Lines<BufReader<std::process::ChildStderr>>;

/// Starts `uuidforge serve` on a free loopback port as `command` says and
/// waits for its "listening" line.
fn spawn_serve(command: &mut Command) -> (std::process::Child, LogLines, String) {
    let mut child = command
        .args(["serve", "--bind", "127.0.0.1:0"])
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
    (child, lines, addr)
}

fn serve_and_stop(signal: &str) {
    let (mut child, lines, addr) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_uuidforge")).env("UUIDFORGE_NAMES_DB", names_file(signal)),
    );
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
fn the_default_names_file_is_in_the_private_data_directory() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = std::env::temp_dir().join(format!("uuidforge-xdg-{}", std::process::id()));
    let cwd = scratch.join("cwd");
    let data_home = scratch.join("data");
    std::fs::create_dir_all(&cwd).unwrap();
    // Under umask 000: the data directory and the names file still keep
    // others out.
    let (child, _lines, addr) = spawn_serve(
        Command::new("sh")
            .args([
                "-c",
                "umask 000; exec \"$0\" \"$@\"",
                env!("CARGO_BIN_EXE_uuidforge"),
            ])
            .current_dir(&cwd)
            .env("XDG_DATA_HOME", &data_home)
            .env_remove("UUIDFORGE_NAMES_DB"),
    );
    let health = http_get(&addr, "/healthz");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let mut child = child;
    assert!(child.wait().unwrap().success());
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let dir = data_home.join("uuidforge");
    assert!(
        dir.join("names.redb").is_file(),
        "no names.redb in {}",
        dir.display()
    );
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "data directory mode {mode:o}");
    let mode = std::fs::metadata(dir.join("names.redb"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "names file mode {mode:o}");
    let left_in_cwd: Vec<_> = std::fs::read_dir(&cwd).unwrap().collect();
    assert!(
        left_in_cwd.is_empty(),
        "files in the working directory: {left_in_cwd:?}"
    );
    std::fs::remove_dir_all(&scratch).unwrap();
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

fn http_get_with(addr: &str, path: &str, headers: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn a_server_without_a_token_makes_one_and_prints_its_address_once() {
    let names = names_file("token");
    let (mut child, mut lines, addr) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_uuidforge"))
            .env("UUIDFORGE_NAMES_DB", &names)
            .env_remove("UUIDFORGE_TOKEN"),
    );
    let token = loop {
        let line = lines.next().expect("the page's address").unwrap();
        if let Some(rest) = line.split("#token=").nth(1) {
            assert!(line.contains(&format!("http://{addr}/#token=")), "{line}");
            break rest.trim().to_string();
        }
    };
    assert_eq!(token.len(), 64, "{token}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    let path = "/api/v1/names/017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
    let refused = http_get(&addr, path);
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let wrong = http_get_with(
        &addr,
        path,
        "Authorization: Bearer 0123456789abcdef0123\r\n",
    );
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    let allowed = http_get_with(&addr, path, &format!("Authorization: Bearer {token}\r\n"));
    assert!(allowed.starts_with("HTTP/1.1 404"), "{allowed}");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let log: Vec<String> = lines.map(|l| l.unwrap()).collect();
    child.wait().unwrap();
    assert!(
        log.iter().all(|l| !l.contains(&token)),
        "the token is printed once, never logged:\n{}",
        log.join("\n")
    );
    // A second server makes another token.
    let (mut other, mut lines, _) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_uuidforge"))
            .env("UUIDFORGE_NAMES_DB", &names)
            .env_remove("UUIDFORGE_TOKEN"),
    );
    let second = loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(rest) = line.split("#token=").nth(1) {
            break rest.trim().to_string();
        }
    };
    assert_ne!(second, token);
    other.kill().unwrap();
    other.wait().unwrap();
    let _ = std::fs::remove_file(&names);
}

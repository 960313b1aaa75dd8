//! Helpers shared by the CLI integration tests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{ExitStatus, Stdio};

/// The built binary, isolated from the developer's settings.
pub fn uuidforge() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("uuidforge").unwrap();
    c.env_remove("UUIDFORGE_PROFILE")
        .env_remove("UUIDFORGE_FORMAT")
        .env("XDG_CONFIG_HOME", "/nonexistent-uuidforge-test");
    c
}

/// Runs the binary with `args` (feeding `stdin_line` many times if given),
/// reads the first `n` bytes of its output, then closes the pipe: returns
/// those bytes, the exit status and what it wrote on standard error.
pub fn read_then_close(
    args: &[&str],
    stdin_line: Option<&str>,
    n: usize,
) -> (Vec<u8>, ExitStatus, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .args(args)
        .stdin(if stdin_line.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let writer = stdin_line.map(|line| {
        let mut stdin = child.stdin.take().unwrap();
        let line = format!("{line}\n");
        std::thread::spawn(move || {
            for _ in 0..200_000 {
                if stdin.write_all(line.as_bytes()).is_err() {
                    break;
                }
            }
        })
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut first = vec![0u8; n];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    if let Some(w) = writer {
        w.join().unwrap();
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (first, status, err)
}

/// Standard output of a run that must succeed.
pub fn ok_stdout(args: &[&str]) -> Vec<u8> {
    uuidforge()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

/// The JSON objects of NDJSON output, one per line.
pub fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    std::str::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The superuser's URL for `db` (fixtures and checks only).
pub fn admin_url(db: &str) -> String {
    format!("postgres://uuidforge_admin:uuidforge@127.0.0.1:5432/{db}")
}

/// A fresh database `uf_cli_TAG_PID` owned by the login role `uuidforge`,
/// with `sql` run in it as that role; its name.
pub fn fresh_database(tag: &str, sql: &str) -> String {
    let name = format!("uf_cli_{tag}_{}", std::process::id());
    admin_sql(
        "postgres",
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    );
    admin_sql(
        "postgres",
        &format!("CREATE DATABASE {name} OWNER uuidforge"),
    );
    admin_sql(&name, &format!("SET ROLE uuidforge; {sql}"));
    name
}

/// Runs `sql` (one or more statements) in `db` as the superuser; the first
/// column of the last statement's first row as text ("" when none).
pub fn admin_sql(db: &str, sql: &str) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, conn) = tokio_postgres::connect(&admin_url(db), tokio_postgres::NoTls)
            .await
            .expect("run scripts/pg-setup.sh");
        tokio::spawn(conn);
        let messages = client.simple_query(sql).await.unwrap_or_else(|e| {
            let detail = e.as_db_error().map(|d| d.message().to_string());
            panic!("{sql}: {e} {detail:?}")
        });
        messages
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => {
                    Some(row.get(0).unwrap_or_default().to_string())
                }
                _ => None,
            })
            .next_back()
            .unwrap_or_default()
    })
}

/// Runs `uuidforge args` (in `dir`) while another session reads `table`
/// (a lock a backup shares and an `ALTER TABLE` waits for), kills it with
/// SIGKILL once its transaction waits on that lock, lets the lock go and
/// waits until the orphaned backend has ended.
pub fn kill_while_waiting_on(db: &str, table: &str, dir: &std::path::Path, args: &[&str]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let holder = runtime.block_on(async {
        let (client, conn) = tokio_postgres::connect(&admin_url(db), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
            .batch_execute(&format!("BEGIN; LOCK TABLE {table} IN ACCESS SHARE MODE"))
            .await
            .unwrap();
        client
    });
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let waiting = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'ALTER TABLE%{table}%'"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while admin_sql(db, &waiting) != "1" {
        assert!(
            std::time::Instant::now() < deadline,
            "the change never waited on the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    runtime.block_on(async { holder.batch_execute("ROLLBACK").await.unwrap() });
    drop(holder);
    let busy = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND (query LIKE 'ALTER TABLE%' OR query LIKE 'UPDATE%') AND state <> 'idle'";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while admin_sql(db, busy) != "0" {
        assert!(
            std::time::Instant::now() < deadline,
            "the killed change never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

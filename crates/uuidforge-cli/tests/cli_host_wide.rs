//! `uuidforge gen --host-wide` (E2): concurrent runs share one order. The
//! strict hand-out-order check across processes is in
//! `crates/uuidforge-host/tests/processes.rs`; here, the command itself.

mod common;

use common::{scratch, uuidforge};
use std::process::Stdio;

#[test]
fn four_concurrent_runs_share_one_strict_sequence() {
    let dir = scratch("hostwide", "four");
    let cell = dir.join("g.cell");
    let children: Vec<std::process::Child> = (0..4)
        .map(|i| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
                .args(["gen", "-n", "1000000", "--format", "simple", "--host-wide"])
                .arg(&cell)
                .args(["--profile", ["default", "pg18", "counter42", "default"][i]])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut all: Vec<u128> = Vec::with_capacity(4_000_000);
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let values: Vec<u128> = std::str::from_utf8(&out.stdout)
            .unwrap()
            .lines()
            .map(|l| u128::from_str_radix(l, 16).unwrap())
            .collect();
        assert_eq!(values.len(), 1_000_000);
        assert!(values.windows(2).all(|w| w[0] < w[1]));
        all.extend(values);
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 4_000_000, "duplicates across runs");
    // A later run continues above all of them.
    let next = uuidforge()
        .args(["gen", "--format", "simple", "--host-wide"])
        .arg(&cell)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let next = u128::from_str_radix(std::str::from_utf8(&next).unwrap().trim(), 16).unwrap();
    assert!(next > *all.last().unwrap());
}

#[test]
fn bad_cells_and_flags_are_refused_naming_the_file() {
    let dir = scratch("hostwide", "bad");
    let foreign = dir.join("foreign.cell");
    std::fs::write(&foreign, "not a cell").unwrap();
    let out = uuidforge()
        .args(["gen", "--host-wide"])
        .arg(&foreign)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(
        e.contains("--host-wide") && e.contains("10 bytes, expected 128"),
        "{e}"
    );
    assert!(out.stdout.is_empty());
    let out = uuidforge()
        .args(["gen", "--host-wide-mode", "666", "--host-wide"])
        .arg(dir.join("new.cell"))
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stderr).contains("mode 666"));
    let out = uuidforge()
        .args(["gen", "--at", "now", "--host-wide"])
        .arg(dir.join("x.cell"))
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--host-wide"));
}

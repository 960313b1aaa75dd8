//! `uuidforge gen --host-wide` (E2): concurrent runs share one order. The
//! strict hand-out-order check across processes is in
//! `crates/uuidforge-host/tests/processes.rs`; here, the command itself.

mod common;

use common::{exit_2, scratch, uuidforge};
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
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let e = exit_2(["gen", "--host-wide", &path("foreign.cell")]);
    assert!(
        e.contains("--host-wide") && e.contains("10 bytes, expected 128"),
        "{e}"
    );
    let e = exit_2([
        "gen",
        "--host-wide-mode",
        "666",
        "--host-wide",
        &path("new.cell"),
    ]);
    assert!(e.contains("mode 666"), "{e}");
    let e = exit_2(["gen", "--at", "now", "--host-wide", &path("x.cell")]);
    assert!(e.contains("--host-wide"), "{e}");
}

//! Every `--help` text, checked against its reviewed snapshot in
//! `tests/help/` (trycmd): a flag renamed, removed or described
//! differently fails here until the snapshot is reviewed again
//! (`TRYCMD=overwrite cargo test -p uuidforge-cli --test help`, then read
//! the diff). `every_command_has_a_snapshot` makes sure a new subcommand
//! gets one.

use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn help_texts_match_their_snapshots() {
    trycmd::TestCases::new()
        .register_bin(
            "uuidforge",
            std::path::Path::new(env!("CARGO_BIN_EXE_uuidforge")),
        )
        .env("COLUMNS", "100")
        .case("tests/help/*.toml");
}

/// The subcommands `uuidforge ARGS --help` lists.
fn subcommands(args: &[String]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_uuidforge"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_command_has_a_snapshot() {
    let mut commands = vec![Vec::<String>::new()];
    let mut all = BTreeSet::new();
    while let Some(path) = commands.pop() {
        let name = if path.is_empty() {
            "uuidforge".to_string()
        } else {
            path.join("-")
        };
        all.insert(name);
        for sub in subcommands(&path) {
            let mut next = path.clone();
            next.push(sub);
            commands.push(next);
        }
    }
    let snapshots: BTreeSet<String> = std::fs::read_dir("tests/help")
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    assert!(all.len() > 20, "only {} commands found", all.len());
    assert_eq!(
        all, snapshots,
        "each command's --help needs tests/help/NAME.toml (and its reviewed .stdout)"
    );
}

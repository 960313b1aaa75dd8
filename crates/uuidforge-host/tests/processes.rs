//! Host-wide order for real: separate processes (this test binary started
//! again as workers) generating through one cell file.
//!
//! The order check is the strict one: every worker records, for each value,
//! the monotonic clock just before the call and just after it. When one
//! call ended before another began, its value must be the smaller — across
//! processes — so the values are checked against the order they were
//! really handed out in, not only for duplicates.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use uuid::Uuid;
use uuidforge::generator::{GeneratorConfig, SharedGenerator};
use uuidforge_host::HostCell;

const WORKER_ENV: &str = "UUIDFORGE_HOST_TEST_WORKER";

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One generated value and the time around its call.
#[derive(Clone, Copy)]
struct Record {
    start: u64,
    end: u64,
    id: Uuid,
}

const RECORD: usize = 32;

/// Not a test of its own: the body of a worker process, started by the
/// tests below with `WORKER_ENV=cell,out,count,profile`.
#[test]
fn worker() {
    let Ok(spec) = std::env::var(WORKER_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split(',').collect();
    let cell = HostCell::open(Path::new(parts[0]), 0o600).unwrap();
    let count: u64 = parts[2].parse().unwrap();
    let g = SharedGenerator::new(GeneratorConfig::profile(parts[3]).unwrap()).unwrap();
    // Started together: wait for the go file, when there is one.
    if let Some(go) = parts.get(4) {
        while !Path::new(go).exists() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let mut out =
        std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(parts[1]).unwrap());
    for i in 0..count {
        let start = monotonic_ns();
        let id = g.generate_in(cell.cell()).unwrap();
        let end = monotonic_ns();
        out.write_all(&start.to_le_bytes()).unwrap();
        out.write_all(&end.to_le_bytes()).unwrap();
        out.write_all(id.as_bytes()).unwrap();
        if i % 10_000 == 9_999 {
            out.flush().unwrap();
        }
    }
    out.flush().unwrap();
}

/// Tests that start workers take turns: four generating processes and a
/// control of two on a 2-core machine would otherwise share the cores, and
/// the control's two workers could run one after the other.
static WORKERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn workers_turn() -> std::sync::MutexGuard<'static, ()> {
    WORKERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn spawn_worker(cell: &Path, out: &Path, count: u64, profile: &str) -> Child {
    spawn_worker_after(cell, out, count, profile, None)
}

/// A worker that starts generating once `go` exists.
fn spawn_worker_after(
    cell: &Path,
    out: &Path,
    count: u64,
    profile: &str,
    go: Option<&Path>,
) -> Child {
    let go = go.map_or(String::new(), |g| format!(",{}", g.display()));
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "worker", "--nocapture", "--test-threads=1"])
        .env(
            WORKER_ENV,
            format!("{},{},{count},{profile}{go}", cell.display(), out.display()),
        )
        .spawn()
        .unwrap()
}

fn read_records(path: &Path) -> Vec<Record> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap();
    bytes
        .chunks_exact(RECORD)
        .map(|c| Record {
            start: u64::from_le_bytes(c[..8].try_into().unwrap()),
            end: u64::from_le_bytes(c[8..16].try_into().unwrap()),
            id: Uuid::from_slice(&c[16..]).unwrap(),
        })
        .collect()
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uf_host_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Values handed out after another call ended that are not above it.
fn real_time_inversions(records: &[Record]) -> u64 {
    let mut by_start: Vec<&Record> = records.iter().collect();
    by_start.sort_by_key(|r| r.start);
    let mut by_end: Vec<&Record> = records.iter().collect();
    by_end.sort_by_key(|r| r.end);
    let mut finished = 0;
    let mut max_finished = Uuid::nil();
    let mut inversions = 0;
    for r in by_start {
        while finished < by_end.len() && by_end[finished].end < r.start {
            max_finished = max_finished.max(by_end[finished].id);
            finished += 1;
        }
        if r.id <= max_finished {
            inversions += 1;
        }
    }
    inversions
}

#[test]
fn four_processes_hand_out_a_million_values_each_in_one_strict_order() {
    let _turn = workers_turn();
    let dir = scratch("four");
    let cell = dir.join("g.cell");
    const EACH: u64 = 1_000_000;
    let profiles = ["default", "counter42", "pg18", "default"];
    let children: Vec<(Child, PathBuf)> = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let out = dir.join(format!("w{i}.bin"));
            (spawn_worker(&cell, &out, EACH, p), out)
        })
        .collect();
    let mut all = Vec::new();
    for (mut child, out) in children {
        assert!(child.wait().unwrap().success());
        let records = read_records(&out);
        assert_eq!(records.len() as u64, EACH);
        assert!(
            records.windows(2).all(|w| w[0].id < w[1].id),
            "a process's own values increase"
        );
        all.extend(records);
    }
    assert_eq!(
        real_time_inversions(&all),
        0,
        "values out of hand-out order"
    );
    let mut ids: Vec<Uuid> = all.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as u64, 4 * EACH, "duplicates");
    // The processes really overlapped: otherwise the order check proves little.
    let spans: Vec<(u64, u64)> = all
        .chunks(EACH as usize)
        .map(|c| (c[0].start, c[c.len() - 1].end))
        .collect();
    let overlapping = spans
        .iter()
        .enumerate()
        .any(|(i, a)| spans.iter().skip(i + 1).any(|b| a.0 < b.1 && b.0 < a.1));
    assert!(overlapping, "the workers ran one after another: {spans:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_process_killed_mid_generation_leaves_the_cell_usable() {
    let _turn = workers_turn();
    let dir = scratch("kill");
    let cell = dir.join("g.cell");
    let first = dir.join("killed.bin");
    let mut victim = spawn_worker(&cell, &first, u64::MAX, "default");
    // Kill it once it has written some values (so it was generating).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::metadata(&first).map_or(0, |m| m.len()) < (50_000 * RECORD) as u64 {
        assert!(
            std::time::Instant::now() < deadline,
            "the worker wrote nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    victim.kill().unwrap(); // SIGKILL
    let status = victim.wait().unwrap();
    assert!(!status.success());
    let before = read_records(&first);
    let last = before.iter().map(|r| r.id).max().unwrap();
    // The file still opens (it is validated) and generation goes on above
    // everything the killed process handed out.
    let after = dir.join("after.bin");
    let mut next = spawn_worker(&cell, &after, 100_000, "default");
    assert!(next.wait().unwrap().success());
    let records = read_records(&after);
    assert_eq!(records.len(), 100_000);
    assert!(records[0].id > last, "{} not above {last}", records[0].id);
    let host = HostCell::open(&cell, 0o600).unwrap();
    assert!(host.cell().last().unwrap() >= records[records.len() - 1].id);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn foreign_corrupt_and_open_files_are_refused_and_new_ones_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("refuse");
    let fresh = dir.join("fresh.cell");
    HostCell::open(&fresh, 0o600).unwrap();
    let meta = std::fs::metadata(&fresh).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.len(), uuidforge_host::FILE_SIZE as u64);
    let shared = dir.join("group.cell");
    HostCell::open(&shared, 0o660).unwrap();
    assert_eq!(
        std::fs::metadata(&shared).unwrap().permissions().mode() & 0o777,
        0o660
    );

    let error = |path: &Path| HostCell::open(path, 0o600).unwrap_err().to_string();
    let foreign = dir.join("foreign.cell");
    std::fs::write(&foreign, [b'x'; 128]).unwrap();
    assert!(
        error(&foreign).contains("a foreign file"),
        "{}",
        error(&foreign)
    );
    let truncated = dir.join("truncated.cell");
    std::fs::write(&truncated, &std::fs::read(&fresh).unwrap()[..40]).unwrap();
    assert!(error(&truncated).contains("40 bytes, expected 128"));
    let mut bytes = std::fs::read(&fresh).unwrap();
    bytes[16] = 9;
    let other_version = dir.join("v9.cell");
    std::fs::write(&other_version, &bytes).unwrap();
    assert!(error(&other_version).contains("format version 9, expected 1"));
    let mut bytes = std::fs::read(&fresh).unwrap();
    bytes[30] = 1;
    let corrupt = dir.join("corrupt.cell");
    std::fs::write(&corrupt, &bytes).unwrap();
    assert!(error(&corrupt).contains("a corrupt cell"));
    let open = dir.join("open.cell");
    std::fs::copy(&fresh, &open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(error(&open).contains("lets anyone write it"));
    let e = HostCell::open(&dir.join("new.cell"), 0o606)
        .unwrap_err()
        .to_string();
    assert!(e.contains("mode 606"), "{e}");
    assert!(!dir.join("new.cell").exists());
    // Nothing refused was changed.
    assert_eq!(std::fs::read(&foreign).unwrap(), vec![b'x'; 128]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_order_check_catches_processes_with_cells_of_their_own() {
    // Control: the same workers, each with a cell of its own, are ordered
    // within themselves only; the check must see the difference.
    // They start together (a go file), so that they run at the same time;
    // a busy machine may still run them one after the other (then the
    // control proves nothing), so a run where they barely overlapped is
    // tried again, at most three times.
    let _turn = workers_turn();
    for attempt in 1..=3 {
        let (inversions, overlapping, total) = separate_cells_run(attempt);
        println!(
            "attempt {attempt}: {inversions} of {total} values out of hand-out order, \
             {overlapping} made while the other worker was running"
        );
        if inversions > 0 {
            return;
        }
        assert!(
            overlapping < total / 10,
            "the workers ran together ({overlapping} of {total} values) yet no value was out of order"
        );
    }
    panic!("in three attempts the two workers never ran at the same time");
}

/// Two workers with cells of their own; returns (inversions, values made
/// inside the other worker's span, values).
fn separate_cells_run(attempt: u32) -> (u64, usize, usize) {
    let dir = scratch(&format!("control{attempt}"));
    let go = dir.join("go");
    let children: Vec<(Child, PathBuf)> = (0..2)
        .map(|i| {
            let out = dir.join(format!("w{i}.bin"));
            let cell = dir.join(format!("own{i}.cell"));
            (
                spawn_worker_after(&cell, &out, 300_000, "default", Some(&go)),
                out,
            )
        })
        .collect();
    std::fs::write(&go, b"").unwrap();
    let mut runs = Vec::new();
    for (mut child, out) in children {
        assert!(child.wait().unwrap().success());
        runs.push(read_records(&out));
    }
    let span = |r: &[Record]| (r[0].start, r[r.len() - 1].end);
    let overlapping: usize = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (from, to) = span(&runs[1 - i]);
            r.iter().filter(|x| x.start > from && x.end < to).count()
        })
        .sum();
    let all: Vec<Record> = runs.into_iter().flatten().collect();
    let inversions = real_time_inversions(&all);
    std::fs::remove_dir_all(&dir).unwrap();
    (inversions, overlapping, all.len())
}

//! `uuidforge db migrate-key --batch-size` against the real PostgreSQL
//! server: the same keys as one transaction; kill -9 at random points and a
//! terminated connection leave a database that works under the old schema
//! and that `--resume` completes; writers (pgbench) run throughout without
//! a failed transaction.

mod common;

use common::{admin_sql, customers_schema, fresh_database, url, uuidforge};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn scratch(tag: &str) -> common::Scratch {
    common::scratch("batched", tag)
}

fn migrate(db: &str, dir: &Path) -> assert_cmd::Command {
    migrate_table(db, dir, "customers")
}

fn migrate_table(db: &str, dir: &Path, table: &str) -> assert_cmd::Command {
    let mut c = uuidforge();
    c.env_remove("UUIDFORGE_DB").current_dir(dir).args([
        "db",
        "--db",
        &url(db),
        "migrate-key",
        table,
    ]);
    c
}

fn template(tag: &str, customers: u32) -> String {
    let db = fresh_database(tag, &customers_schema(customers));
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    db
}

/// A copy of `template` named `name`.
fn copy_of(template: &str, name: &str) -> String {
    admin_sql(
        "postgres",
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    );
    admin_sql(
        "postgres",
        &format!("CREATE DATABASE {name} TEMPLATE {template} OWNER uuidforge"),
    );
    name.to_string()
}

/// Row counts of the four tables.
const COUNTS: &str = "SELECT concat_ws(' ', (SELECT count(*) FROM customers), (SELECT count(*) FROM orders), (SELECT count(*) FROM referrals), (SELECT count(*) FROM \"Zeilen\"))";

/// After a migration every count is zero: order of the original rows,
/// references rewritten, version 7 keys, nothing the migration made left
/// behind, every constraint validated, no invalid index.
fn assert_migrated(db: &str, original: u32) {
    let checks = format!(
        "SELECT concat_ws(' ',
  (SELECT count(*) FROM (SELECT id < lag(id) OVER (ORDER BY id_old) AS inv FROM customers WHERE id_old <= {original}) o WHERE inv),
  (SELECT count(*) FROM orders o JOIN customers c ON c.id_old = o.customer_id_old WHERE c.id <> o.customer_id),
  (SELECT count(*) FROM referrals r JOIN customers c ON c.id_old = r.referred_by_old WHERE c.id <> r.referred_by),
  (SELECT count(*) FROM referrals WHERE referred_by_old IS NOT NULL AND referred_by IS NULL),
  (SELECT count(*) FROM customers p JOIN customers c ON c.parent_id_old = p.id_old WHERE c.parent_id <> p.id),
  (SELECT count(*) FROM \"Zeilen\" z JOIN customers c ON c.id_old = z.\"Kunde_old\" WHERE c.id <> z.\"Kunde\"),
  (SELECT count(*) FROM customers WHERE uuid_extract_version(id) <> 7),
  (SELECT count(*) FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND NOT convalidated),
  (SELECT count(*) FROM pg_index WHERE NOT indisvalid),
  (SELECT count(*) FROM pg_proc WHERE proname LIKE 'uuidforge_migrate_%'),
  (SELECT count(*) FROM pg_trigger WHERE tgname = 'uuidforge_migrate'),
  (SELECT count(*) FROM pg_class WHERE relname LIKE 'uuidforge_keymap_%' OR relname = 'uuidforge_changes'),
  (SELECT count(*) FROM information_schema.columns WHERE column_name LIKE '%uuidforge_new'))"
    );
    assert_eq!(admin_sql(db, &checks), "0 0 0 0 0 0 0 0 0 0 0 0 0", "{db}");
    assert_eq!(
        admin_sql(
            db,
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attname = 'customer_id'"
        ),
        "uuid"
    );
}

#[test]
fn batches_give_the_keys_one_transaction_gives_and_leave_nothing_behind() {
    let tpl = template("batched_same", 600);
    let dir = scratch("same");
    let key = dir.join("secret.key");
    let key = key.to_str().unwrap();
    let batched = copy_of(&tpl, &format!("{tpl}_b"));
    let single = copy_of(&tpl, &format!("{tpl}_s"));
    let before = admin_sql(&batched, COUNTS);

    // The plan alone changes nothing.
    let mut plan = migrate(&batched, &dir);
    plan.args(["--batch-size", "40"]);
    let steps = plan_steps(plan);
    let kinds: Vec<&str> = steps.iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"transaction"));
    assert!(kinds.contains(&"backfill") && kinds.contains(&"concurrently"));
    assert_eq!(
        admin_sql(
            &batched,
            "SELECT count(*) FROM pg_class WHERE relname = 'uuidforge_changes'"
        ),
        "0"
    );

    let out = migrate(&batched, &dir)
        .args(["--batch-size", "40", "--apply", "--json", "--key-file", key])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(report["applied"]["keyed_rows"], 600);
    assert!(
        report["applied"]["batches"].as_u64().unwrap() > 5,
        "{report}"
    );
    assert!(
        report["applied"]["longest_exclusive_seconds"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(admin_sql(&batched, COUNTS), before);
    assert_migrated(&batched, 600);

    migrate(&single, &dir)
        .args(["--apply", "--key-file", key])
        .assert()
        .success();
    let keys =
        "SELECT md5(string_agg(id::text || parent_id::text, ',' ORDER BY id_old)) FROM customers";
    assert_eq!(admin_sql(&batched, keys), admin_sql(&single, keys));

    // Nothing under way: --resume says so.
    migrate(&batched, &dir)
        .args(["--resume"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("resume: no change in batches"));
}

/// Waits until no session of `db` runs a statement of the killed process.
fn wait_for_orphans(db: &str) {
    let busy = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'uuidforge'";
    let deadline = Instant::now() + Duration::from_secs(60);
    while admin_sql(db, busy) != "0" {
        assert!(
            Instant::now() < deadline,
            "the killed run's sessions never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The step recorded in the state table, or "none".
fn recorded_step(db: &str) -> String {
    state_column(db, "step")
}

/// `column` of the change's state row, as text, or "none" without one. One
/// statement: a run that ends between two would drop the state table
/// between a test of it and the read.
fn state_column(db: &str, column: &str) -> String {
    admin_sql(
        db,
        &format!(
            "CREATE FUNCTION pg_temp.uf_state() RETURNS text LANGUAGE plpgsql AS $$ DECLARE v text; \
             BEGIN EXECUTE 'SELECT coalesce((SELECT {column}::text FROM uuidforge_changes), ''none'')' INTO v; RETURN v; \
             EXCEPTION WHEN undefined_table THEN RETURN 'none'; END $$; SELECT pg_temp.uf_state()"
        ),
    )
}

/// Old and new code both write through the triggers: an order for the
/// first customer, whatever the key's type is now.
fn write_an_order(db: &str) {
    admin_sql(db, &format!("SET ROLE uuidforge; {AN_ORDER}"));
}

/// An order for the first customer, whatever the key's type is now.
const AN_ORDER: &str =
    "INSERT INTO orders (customer_id) SELECT id FROM customers ORDER BY created_at LIMIT 1";

/// Completes whatever a killed run left: `--resume` when a batched
/// migration is under way, a new run when none began, nothing when it
/// finished.
fn complete(db: &str, dir: &Path, table: &str, key: &str, extra: &[&str]) {
    let migrated = migrated(db, table);
    if recorded_step(db) != "none" {
        migrate_table(db, dir, table)
            .args(["--resume", "--key-file", key])
            .assert()
            .success();
    } else if !migrated {
        let backup = dir.join(format!("{db}-complete.dump"));
        migrate_table(db, dir, table)
            .args(if extra.contains(&"--batch-size") {
                &["--apply"][..]
            } else {
                &["--batch-size", "100", "--apply"][..]
            })
            .args(["--key-file", key, "--backup"])
            .arg(backup)
            .args(extra)
            .assert()
            .success();
    }
}

/// What a kill test runs over.
struct KillCase<'a> {
    /// The template database, copied for each point.
    template: &'a str,
    table: &'a str,
    points: u32,
    /// Row counts that no kill may change.
    counts: &'a str,
    /// A write that works whatever the schema is now.
    write: &'a str,
    /// The new keys of the original rows, as one digest.
    keys: &'a str,
    /// Asserts a completed migration.
    check: &'a dyn Fn(&str),
    /// More arguments of the migration (`--copy`).
    extra: &'a [&'a str],
}

/// `migrate-key TABLE --batch-size 100 --apply` in the background.
fn spawn_migration(
    db: &str,
    dir: &Path,
    table: &str,
    key: &str,
    extra: &[&str],
) -> std::process::Child {
    let mut args: Vec<&str> = if extra.contains(&"--batch-size") {
        vec!["--apply"]
    } else {
        vec!["--batch-size", "100", "--apply"]
    };
    args.extend(extra);
    spawn_migrate_key(db, dir, table, key, &args)
}

/// `migrate-key TABLE --resume` in the background.
fn spawn_resume(db: &str, dir: &Path, table: &str, key: &str) -> std::process::Child {
    spawn_migrate_key(db, dir, table, key, &["--resume"])
}

/// `migrate-key TABLE --key-file KEY ARGS…` in the background, its output
/// dropped.
fn spawn_migrate_key(
    db: &str,
    dir: &Path,
    table: &str,
    key: &str,
    args: &[&str],
) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .current_dir(dir)
        .args(["db", "--db", &url(db), "migrate-key", table])
        .args(args)
        .args(["--key-file", key])
        .env_remove("UUIDFORGE_DB")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until the migration's state table records a step (or the
/// command has ended); the moment it was seen.
fn wait_until_recorded(db: &str, child: &mut std::process::Child) -> Instant {
    while recorded_step(db) == "none" && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(2));
    }
    Instant::now()
}

/// Kills a batched migration of `case.table` at random points spread over
/// an uninterrupted run's time, on one database: each kill's run is a
/// `--resume` of the last (or a new run when the last was killed before its
/// first step). After each: nothing lost and writers work; at the end the
/// completed migration checks out with the keys an uninterrupted run gives.
fn kill_at_random_points(case: KillCase) {
    let dir = scratch(&format!("kill_{}{}", case.table, case.extra.join("")));
    let key = dir.join("secret.key");
    let key = key.to_str().unwrap().to_string();
    let timed = copy_of(case.template, &format!("{}_t", case.template));
    // The run is timed from the moment its state table holds a step: the
    // backup and planning before it take a share of the time that varies
    // with the machine's load, and would crowd the kill points out.
    let mut child = spawn_migration(&timed, &dir, case.table, &key, case.extra);
    let started = wait_until_recorded(&timed, &mut child);
    assert!(child.wait().unwrap().success());
    let full = started.elapsed();
    (case.check)(&timed);
    let expected_keys = admin_sql(&timed, case.keys);

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut state = seed | 1;
    let mut seen = std::collections::BTreeSet::new();
    let db = copy_of(case.template, &format!("{}_chain", case.template));
    let mut counts = admin_sql(&db, case.counts);
    for point in 0..case.points {
        // xorshift: point 0 falls before the first step (backup,
        // planning); each later one on average 1.5 (points - 1)ths of the
        // uninterrupted run after its run took the change over (a resume
        // reads the plan and connects again before it goes on, and loses
        // the ranges under way), so that the kills spread over all of it,
        // whatever the seed.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let within = (state % 1000) as f64 / 1000.0;
        let recorded = recorded_step(&db);
        let mut child = if recorded == "none" {
            if migrated(&db, case.table) {
                break;
            }
            let mut child = spawn_migration(&db, &dir, case.table, &key, case.extra);
            if point > 0 {
                wait_until_recorded(&db, &mut child);
            }
            child
        } else {
            let killed = claimed_by(&db);
            let mut child = spawn_resume(&db, &dir, case.table, &key);
            wait_until_claimed(&db, &mut child, &killed);
            child
        };
        let delay = if point == 0 {
            Duration::from_millis((within * 50.0) as u64)
        } else {
            full.mul_f64(3.0 * within / f64::from(case.points - 1))
        };
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_some() {
            // It ended before the kill: the migration is complete.
            break;
        }
        let _ = child.kill();
        child.wait().unwrap();
        wait_for_orphans(&db);
        let step = recorded_step(&db);
        // Within a step of parts side by side, where each part stands.
        seen.insert(format!("{step} {}", parts_marked(&db)));
        let context = format!("seed {seed}, point {point} after {delay:?}, step {step}");
        // Nothing lost, and writers still work, whatever the schema is now.
        assert_eq!(admin_sql(&db, case.counts), counts, "{context}");
        admin_sql(&db, &format!("SET ROLE uuidforge; {}", case.write));
        counts = admin_sql(&db, case.counts);
    }
    complete(&db, &dir, case.table, &key, case.extra);
    (case.check)(&db);
    assert_eq!(admin_sql(&db, case.keys), expected_keys, "seed {seed}");
    // The points fell before, inside and after the batched steps (in a
    // step of parts side by side, at different points of its parts).
    eprintln!(
        "{}: kill points at steps {seen:?} (seed {seed})",
        case.table
    );
    assert!(
        seen.len() >= 3,
        "seed {seed}: kill points hit only {seen:?}"
    );
}

/// Whether `table`'s `id` is a uuid now.
fn migrated(db: &str, table: &str) -> bool {
    admin_sql(
        db,
        &format!("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '{table}'::regclass AND attname = 'id'"),
    ) == "uuid"
}

/// Waits until a resumed run has taken the change over from the run whose
/// server pid was `killed` (the state row names another), or has ended.
fn wait_until_claimed(db: &str, child: &mut std::process::Child, killed: &str) {
    while claimed_by(db) == killed && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The parts of a step side by side done, and where the others stand
/// (`part 4.1: 5 27`: its next page and end), as the state's marks keep
/// them ("" when none).
fn parts_marked(db: &str) -> String {
    if state_column(db, "marks") == "none" {
        return String::new();
    }
    admin_sql(
        db,
        "SELECT coalesce(string_agg(key || ': ' || value, ', ' ORDER BY key), '') FROM uuidforge_changes, jsonb_each_text(marks) WHERE key LIKE 'part %'",
    )
}

/// The server pid of the run the state row names, or "none".
fn claimed_by(db: &str) -> String {
    state_column(db, "pid")
}

#[test]
fn kill_9_at_random_points_then_resume_completes() {
    let template = template("batched_kill", 3000);
    kill_at_random_points(KillCase {
        template: &template,
        table: "customers",
        points: 20,
        counts: COUNTS,
        write: AN_ORDER,
        keys: "SELECT md5(string_agg(id::text, ',' ORDER BY id_old)) FROM customers WHERE id_old <= 3000",
        check: &|db| assert_migrated(db, 3000),
        extra: &[],
    });
}

/// A psql session of its own holding the lock of the change's state row
/// (`FOR UPDATE`, as the runner takes it at the start of every step) until
/// dropped.
struct RowLock {
    session: std::process::Child,
    output: std::io::BufReader<std::process::ChildStdout>,
}

impl RowLock {
    /// Asks for the lock; `wait` reads until it is granted.
    fn ask(db: &str) -> RowLock {
        RowLock::asking(
            db,
            "BEGIN; SELECT 'locked' FROM uuidforge_changes FOR UPDATE;",
        )
    }

    /// A session of its own running `sql`, which prints `locked` once it
    /// holds the row.
    fn asking(db: &str, sql: &str) -> RowLock {
        use std::io::Write;
        let mut session = std::process::Command::new("psql")
            .arg(common::admin_url(db))
            .args(["-X", "-q", "-At"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        writeln!(session.stdin.as_mut().unwrap(), "{sql}").unwrap();
        let output = std::io::BufReader::new(session.stdout.take().unwrap());
        RowLock { session, output }
    }

    /// Asks for the lock before the run has recorded its first step: the
    /// session looks for the state row every millisecond, in the server,
    /// and takes it as soon as the first step commits (a minute at most).
    fn ask_once_recorded(db: &str) -> RowLock {
        RowLock::asking(
            db,
            "BEGIN; DO $$ BEGIN FOR i IN 1..60000 LOOP BEGIN PERFORM FROM uuidforge_changes FOR UPDATE; IF FOUND THEN RETURN; END IF; EXCEPTION WHEN undefined_table THEN NULL; END; PERFORM pg_sleep(0.001); END LOOP; END $$; SELECT 'locked' FROM uuidforge_changes FOR UPDATE;",
        )
    }

    fn wait(mut self) -> RowLock {
        use std::io::BufRead;
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "locked");
        self
    }
}

impl Drop for RowLock {
    fn drop(&mut self) {
        let _ = self.session.kill();
        let _ = self.session.wait();
    }
}

/// Waits until a session of `application` waits for a lock.
fn wait_until_blocked(db: &str, application: &str) {
    let blocked = format!("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '{application}' AND wait_event_type = 'Lock'");
    let blocked = blocked.as_str();
    let deadline = Instant::now() + Duration::from_secs(60);
    while admin_sql(db, blocked) == "0" {
        assert!(
            Instant::now() < deadline,
            "the run never waited for the state row"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The online copy of `customers` on `db` in ranges ([`COPY_IN_RANGES`])
/// with `key`, in the background, its errors kept.
fn spawn_copy(db: &str, dir: &Path, key: &Path) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .current_dir(dir)
        .args([
            "db",
            "--db",
            &url(db),
            "migrate-key",
            "customers",
            "--apply",
        ])
        .arg("--key-file")
        .arg(key)
        .args(COPY_IN_RANGES)
        .env_remove("UUIDFORGE_DB")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The steps of the online copy's plan (`--json`) on `db`.
fn copy_plan_steps(db: &str, dir: &Path) -> Vec<serde_json::Value> {
    let mut plan = migrate(db, dir);
    plan.args(COPY_IN_RANGES);
    plan_steps(plan)
}

/// The steps of the plan `command` prints with `--json`.
fn plan_steps(mut command: assert_cmd::Command) -> Vec<serde_json::Value> {
    let plan: serde_json::Value = serde_json::from_slice(
        &command
            .arg("--json")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    plan["change"]["run"]["steps"].as_array().unwrap().clone()
}

/// Holds the run `child` on `db` at the start of step `step` (or the first
/// after it a loaded machine let it reach): the state row's lock, held
/// from the run's first recorded step and passed on one step at a time (a
/// second session queues for the row behind the run and takes it when the
/// step commits). The lock and the step the run waits at.
fn hold_at_step(db: &str, child: &mut std::process::Child, step: usize) -> (RowLock, usize) {
    let first = RowLock::ask_once_recorded(db);
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before its first step"
    );
    let_through_to(db, first.wait(), step)
}

/// With the state row `held`, lets a run on `db` through one step at a
/// time until the state records `step` (or the first step after it): the
/// lock and the step recorded. A run that starts while the row is held
/// waits at its first lock of the row.
fn let_through_to(db: &str, mut held: RowLock, step: usize) -> (RowLock, usize) {
    let mut at: usize = step_now(db).parse().unwrap();
    while at < step {
        wait_until_blocked(db, "uuidforge");
        let next = RowLock::ask(db);
        // Queued behind the run before the row is let go.
        wait_until_blocked(db, "psql");
        drop(held);
        held = next.wait();
        at = step_now(db).parse().unwrap();
    }
    (held, at)
}

/// An online copy of a fresh copy of `template`, held at the start of
/// `step` with `ready` true of its database: the database, its rows'
/// counts before the run, the run and the lock. A run let through one
/// step can take the next too before the test's session gets the row (a
/// loaded machine, or a late first lock), so it is tried again, up to five
/// times.
fn copy_held_before(
    template: &str,
    dir: &Path,
    key: &Path,
    step: usize,
    ready: impl Fn(&str) -> bool,
) -> (String, String, std::process::Child, RowLock) {
    for tries in 1..=5 {
        let db = copy_of(template, &format!("{template}_{tries}"));
        let before = admin_sql(&db, COUNTS);
        let mut child = spawn_copy(&db, dir, key);
        let (held, at) = hold_at_step(&db, &mut child, step);
        if at == step && ready(&db) {
            return (db, before, child, held);
        }
        drop(held);
        let _ = child.kill();
        child.wait().unwrap();
        admin_sql("postgres", &format!("DROP DATABASE {db} WITH (FORCE)"));
    }
    panic!("the run went past step {step} five times");
}

/// A function of the test's own (in the template, so in each copy) that
/// reads the step the state table records, or "none" without it: in one
/// statement, since the run may remove the table between two.
const STEP_NOW: &str = "CREATE FUNCTION uf_step_now() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN coalesce((SELECT step::text FROM uuidforge_changes), 'none'); EXCEPTION WHEN undefined_table THEN RETURN 'none'; END $$";

/// The step the state table records now, or "none".
fn step_now(db: &str) -> String {
    admin_sql(db, "SELECT uf_step_now()")
}

/// An online copy in ranges of 2000 rows: every step, every range and
/// every replay round is a lock cycle the kill test below steps through.
const COPY_IN_RANGES: &[&str] = &["--copy", "--batch-size", "2000"];

/// The online copy killed before each of its steps, on one database: the
/// run is held at the start of a step by a lock of its state row and let
/// through one step at a time (a second session queues for the row behind
/// the run, and takes it when the step commits), then killed where it
/// waits; a `--resume` started while the row is still held waits at its
/// first lock of it, is let through to the next step and killed there in
/// turn, and so on to the last step. After each kill: nothing lost and
/// writers work. At the end a `--resume` completes the migration with the
/// keys an uninterrupted run gives, leaving no shadow, log or trigger of
/// the copy behind. Every kill but the first is of a resumed run, so the
/// test also shows a resume killed and resumed again. (Kills inside a
/// step, at random points: above.)
#[test]
fn kill_9_before_every_step_of_an_online_copy_then_resume_completes() {
    let template = template("batched_kill_copy", 5000);
    admin_sql(&template, STEP_NOW);
    let dir = scratch("kill_copy");
    let key = dir.join("secret.key");
    let key = key.to_str().unwrap().to_string();
    let check = |db: &str| {
        assert_migrated(db, 5000);
        assert_eq!(
            admin_sql(db, "SELECT count(*) FROM pg_class WHERE relname LIKE 'uuidforge_copy%' OR relname LIKE 'uuidforge_log%'"),
            "0"
        );
    };
    let timed = copy_of(&template, &format!("{template}_t"));
    let mut child = spawn_migration(&timed, &dir, "customers", &key, COPY_IN_RANGES);
    assert!(child.wait().unwrap().success());
    check(&timed);
    let keys =
        "SELECT md5(string_agg(id::text, ',' ORDER BY id_old)) FROM customers WHERE id_old <= 5000";
    let expected_keys = admin_sql(&timed, keys);
    let steps = copy_plan_steps(&template, &dir).len();
    // A loaded machine can let the first run past its first steps before
    // the test holds the row: it is tried again (the steps it passed are
    // tried alone below).
    let mut attempt = 0;
    let (db, mut counts, mut child, mut held, mut at) = loop {
        let db = copy_of(&template, &format!("{template}_chain{attempt}"));
        let counts = admin_sql(&db, COUNTS);
        let mut child = spawn_migration(&db, &dir, "customers", &key, COPY_IN_RANGES);
        let (held, at) = hold_at_step(&db, &mut child, 1);
        attempt += 1;
        if at <= 2 || attempt == 3 {
            break (db, counts, child, held, at);
        }
        drop(held);
        let _ = child.kill();
        child.wait().unwrap();
        admin_sql("postgres", &format!("DROP DATABASE {db} WITH (FORCE)"));
    };
    let first = at;
    assert!(first <= 3, "the first kill came late: step {first}");
    let mut killed_at = std::collections::BTreeSet::new();
    loop {
        killed_at.insert(at);
        counts = kill_where_held(&db, child, held, at, &counts);
        if at + 1 >= steps {
            break;
        }
        let lock = RowLock::ask(&db).wait();
        child = spawn_resume(&db, &dir, "customers", &key);
        (held, at) = let_through_to(&db, lock, at + 1);
    }
    complete(&db, &dir, "customers", &key, COPY_IN_RANGES);
    check(&db);
    assert_eq!(admin_sql(&db, keys), expected_keys);
    admin_sql("postgres", &format!("DROP DATABASE {db} WITH (FORCE)"));
    // A run let through one step can take the next too, before the test's
    // session queued for the row gets it (the run locks the row again
    // without waiting, as the first to ask): a step the chain passed is
    // tried alone, on a database of its own, up to three times.
    let passed: Vec<usize> = (first..steps).filter(|s| !killed_at.contains(s)).collect();
    for step in passed {
        for attempt in 0..3 {
            let db = copy_of(&template, &format!("{template}_{step}_{attempt}"));
            let counts = admin_sql(&db, COUNTS);
            let mut child = spawn_migration(&db, &dir, "customers", &key, COPY_IN_RANGES);
            let (held, at) = hold_at_step(&db, &mut child, step);
            kill_where_held(&db, child, held, at, &counts);
            complete(&db, &dir, "customers", &key, COPY_IN_RANGES);
            check(&db);
            assert_eq!(admin_sql(&db, keys), expected_keys, "killed at {at}");
            admin_sql("postgres", &format!("DROP DATABASE {db} WITH (FORCE)"));
            if at == step {
                killed_at.insert(at);
                break;
            }
        }
    }
    eprintln!("online copy: killed with steps {killed_at:?} recorded");
    assert_eq!(
        killed_at.into_iter().collect::<Vec<_>>(),
        (first..steps).collect::<Vec<_>>(),
        "a kill before every step from the first held"
    );
}

/// Kills the run `child` on `db`, held (`held`) at the start of the step
/// after `at` recorded ones; then checks that its rows are `counts` and
/// that an application writes: the rows' counts after that write.
fn kill_where_held(
    db: &str,
    mut child: std::process::Child,
    held: RowLock,
    at: usize,
    counts: &str,
) -> String {
    wait_until_blocked(db, "uuidforge");
    let _ = child.kill();
    child.wait().unwrap();
    drop(held);
    wait_for_orphans(db);
    let recorded = recorded_step(db);
    let context = format!("killed before step {} (recorded: {recorded})", at + 1);
    assert_eq!(recorded, at.to_string(), "{context}");
    assert_eq!(admin_sql(db, COUNTS), counts, "{context}");
    admin_sql(db, &format!("SET ROLE uuidforge; {AN_ORDER}"));
    admin_sql(db, COUNTS)
}

/// An old value the maps lack stops the online copy in the statement that
/// would write it: the range rolls back with the value named, and the
/// tables are as they were and still take writes. The run is held before
/// its first copy step (as the kill test above holds it) while a key is
/// deleted from the map the copy reads, as if the keys step had missed it.
#[test]
fn an_old_value_the_maps_lack_stops_the_online_copy() {
    let template = template("batched_missing_copy", 5000);
    admin_sql(&template, STEP_NOW);
    let dir = scratch("missing_copy");
    let key = dir.join("secret.key");
    let copy = copy_plan_steps(&template, &dir)
        .iter()
        .position(|s| s["what"].as_str().unwrap_or("").starts_with("copy "))
        .expect("a copy step");
    // Held at the copy's start, not between two of its ranges (each range
    // is a lock cycle of its own).
    let (db, before, child, held) = copy_held_before(&template, &dir, &key, copy, |db| {
        admin_sql(
            db,
            "SELECT coalesce(next_block, 0) = 0 AND NOT EXISTS (SELECT FROM jsonb_object_keys(marks) k WHERE k LIKE 'part %') FROM uuidforge_changes",
        ) == "t"
    });
    wait_until_blocked(&db, "uuidforge");
    let map = admin_sql(
        &db,
        "SELECT relname FROM pg_class WHERE relname LIKE 'uuidforge\\_keymap\\_%\\_typed'",
    );
    assert!(!map.is_empty(), "the copy reads a map keyed by bigint");
    admin_sql(&db, &format!("DELETE FROM {map} WHERE old = 1"));
    drop(held);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    // The tables are copied side by side: the first to meet the key
    // names it (customers.id, or a reference to it).
    assert!(
        stderr.contains("no new key in the map for public.") && stderr.contains(" = 1\""),
        "{stderr}"
    );
    assert_eq!(
        step_now(&db),
        copy.to_string(),
        "the copy step was not recorded done"
    );
    assert_eq!(admin_sql(&db, COUNTS), before);
    admin_sql(&db, &format!("SET ROLE uuidforge; {AN_ORDER}"));
    admin_sql("postgres", &format!("DROP DATABASE {db} WITH (FORCE)"));
}

/// The same online copy killed at random points, inside its steps too
/// (the copy's ranges, the replay's rounds).
#[test]
fn kill_9_at_random_points_of_an_online_copy_then_resume_completes() {
    let template = template("batched_kill_copy_random", 3000);
    kill_at_random_points(KillCase {
        template: &template,
        table: "customers",
        points: 10,
        counts: COUNTS,
        write: AN_ORDER,
        keys: "SELECT md5(string_agg(id::text, ',' ORDER BY id_old)) FROM customers WHERE id_old <= 3000",
        check: &|db| {
            assert_migrated(db, 3000);
            assert_eq!(
                admin_sql(db, "SELECT count(*) FROM pg_class WHERE relname LIKE 'uuidforge_copy%' OR relname LIKE 'uuidforge_log%'"),
                "0"
            );
        },
        extra: &["--copy"],
    });
}

/// The same on a partitioned table referenced by a partitioned table
/// (foreign key on the table) and by another whose partitions each declare
/// their own foreign key and index, all with an application's `BEFORE
/// UPDATE` trigger stamping rows (on the partitioned tables, so cloned to
/// every partition): killed at any point and resumed, no row is stamped,
/// every trigger fires again, each partition has its own foreign key and
/// index back, over the new column.
#[test]
fn kill_9_on_partitioned_tables_then_resume_completes() {
    let template = fresh_database(
        "batched_kill_parted",
        "CREATE TABLE events (id bigint GENERATED ALWAYS AS IDENTITY, at timestamptz NOT NULL,
                              touched timestamptz NOT NULL DEFAULT '2000-01-01',
                              PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
         CREATE TABLE events_a PARTITION OF events FOR VALUES FROM ('2020-01-01') TO ('2022-01-01');
         CREATE TABLE events_b PARTITION OF events FOR VALUES FROM ('2022-01-01') TO ('2030-01-01');
         CREATE TABLE marks (event_id bigint NOT NULL, event_at timestamptz NOT NULL, n int NOT NULL,
                             touched timestamptz NOT NULL DEFAULT '2000-01-01',
                             PRIMARY KEY (event_id, event_at, n), FOREIGN KEY (event_id, event_at) REFERENCES events)
           PARTITION BY LIST (n);
         CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.touched := now(); RETURN NEW; END $$;
         CREATE TRIGGER touch BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION touch();
         CREATE TRIGGER touch BEFORE UPDATE ON marks FOR EACH ROW EXECUTE FUNCTION touch();
         CREATE TABLE marks_0 PARTITION OF marks FOR VALUES IN (0);
         CREATE TABLE marks_1 PARTITION OF marks FOR VALUES IN (1);
         CREATE TABLE marks_2 PARTITION OF marks FOR VALUES IN (2);
         CREATE TABLE payments (event_id bigint NOT NULL, event_at timestamptz NOT NULL, region int NOT NULL, amount int NOT NULL,
                                touched timestamptz NOT NULL DEFAULT '2000-01-01') PARTITION BY LIST (region);
         CREATE TABLE payments_0 PARTITION OF payments FOR VALUES IN (0);
         CREATE TABLE payments_1 PARTITION OF payments FOR VALUES IN (1);
         ALTER TABLE payments_0 ADD CONSTRAINT payments_0_event FOREIGN KEY (event_id, event_at) REFERENCES events;
         ALTER TABLE payments_1 ADD CONSTRAINT payments_1_event FOREIGN KEY (event_id, event_at) REFERENCES events ON DELETE CASCADE;
         CREATE INDEX payments_0_event ON payments_0 (event_id);
         CREATE INDEX payments_1_event ON payments_1 (event_id, event_at);
         CREATE TRIGGER touch BEFORE UPDATE ON payments FOR EACH ROW EXECUTE FUNCTION touch();
         INSERT INTO events (at) SELECT timestamptz '2020-06-01' + g * interval '1 hour' FROM generate_series(1, 3000) g;
         INSERT INTO marks SELECT id, at, g FROM events, generate_series(0, 1) g;
         INSERT INTO payments SELECT id, at, id % 2, id FROM events;",
    );
    admin_sql(&template, "CREATE EXTENSION uuidforge");
    // The foreign keys as users see them (`conparentid = 0`): PostgreSQL 15
    // leaves the internal copies of a partition's foreign key to a
    // partitioned table (one per referenced partition) marked not
    // validated after `VALIDATE CONSTRAINT` (18 marks them); the
    // constraint is validated and holds, as the write below shows.
    let check = |db: &str| {
        assert_eq!(
            admin_sql(
                db,
                "SELECT concat_ws(' ',
                   (SELECT pg_typeof(id)::text FROM events LIMIT 1),
                   (SELECT count(*) FROM (SELECT id < lag(id) OVER (ORDER BY id_old) AS inv FROM events WHERE id_old <= 3000) o WHERE inv),
                   (SELECT count(*) FROM marks m JOIN events e ON e.id = m.event_id AND e.at = m.event_at WHERE e.id_old <> m.event_id_old),
                   (SELECT count(*) FROM marks WHERE event_id_old IS NOT NULL AND event_id IS NULL),
                   (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conparentid = 0),
                   (SELECT count(*) FROM pg_index WHERE NOT indisvalid),
                   (SELECT count(*) FROM pg_class WHERE relname LIKE 'uuidforge_keymap_%' OR relname = 'uuidforge_changes'),
                   (SELECT count(*) FROM pg_trigger WHERE tgname = 'uuidforge_migrate'),
                   (SELECT count(*) FROM events WHERE touched <> '2000-01-01'),
                   (SELECT count(*) FROM marks WHERE touched <> '2000-01-01'),
                   (SELECT count(*) FROM payments WHERE touched <> '2000-01-01'),
                   (SELECT count(*) FROM payments p JOIN events e ON e.id = p.event_id AND e.at = p.event_at WHERE e.id_old <> p.event_id_old OR (p.amount <> e.id_old AND p.amount <> 0)),
                   (SELECT count(*) FROM payments WHERE event_id_old IS NOT NULL AND event_id IS NULL),
                   (SELECT count(*) FROM pg_trigger WHERE tgname = 'touch' AND tgenabled <> 'O'),
                   (SELECT count(*) FROM pg_trigger WHERE tgname = 'touch'),
                   (SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'marks'::regclass AND contype = 'p'),
                   (SELECT string_agg(format('%s:%s', conrelid::regclass, pg_get_constraintdef(oid)), ' ' ORDER BY conname)
                      FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND conrelid::regclass::text LIKE 'payments%'),
                   (SELECT string_agg(indexdef, ' ' ORDER BY indexname) FROM pg_indexes WHERE tablename LIKE 'payments%'))"
            ),
            "uuid 0 0 0 0 0 0 0 0 0 0 0 0 0 10 PRIMARY KEY (event_id, event_at, n) \
payments_0:FOREIGN KEY (event_id, event_at) REFERENCES events(id, at) \
payments_1:FOREIGN KEY (event_id, event_at) REFERENCES events(id, at) ON DELETE CASCADE \
CREATE INDEX payments_0_event ON public.payments_0 USING btree (event_id) \
CREATE INDEX payments_1_event ON public.payments_1 USING btree (event_id, event_at)",
            "{db}"
        );
        for region in [0, 1] {
            assert!(admin_sql(
                db,
                &format!("DO $$ BEGIN INSERT INTO payments (event_id, event_at, region, amount) VALUES (gen_random_uuid(), '2020-07-01', {region}, 0); RAISE 'inserted'; EXCEPTION WHEN foreign_key_violation THEN NULL; END $$")
            )
            .is_empty());
        }
    };
    kill_at_random_points(KillCase {
        template: &template,
        table: "events",
        points: 8,
        counts: "SELECT (SELECT count(*) FROM events) || ' ' || (SELECT count(*) FROM marks) || ' ' || (SELECT count(*) FROM payments)",
        write: "INSERT INTO marks (event_id, event_at, n) SELECT id, at, 2 FROM events e
                  WHERE NOT EXISTS (SELECT FROM marks m WHERE m.event_id = e.id AND m.event_at = e.at AND m.n = 2)
                  ORDER BY at DESC LIMIT 1;
                INSERT INTO payments (event_id, event_at, region, amount) SELECT id, at, 1, 0 FROM events ORDER BY at DESC LIMIT 1",
        keys: "SELECT md5(string_agg(id::text, ',' ORDER BY id_old)) FROM events WHERE id_old <= 3000",
        check: &check,
        extra: &[],
    });
}

#[test]
fn a_terminated_connection_stops_the_run_and_resume_completes_it() {
    let db = template("batched_terminate", 5000);
    let dir = scratch("terminate");
    let key = dir.join("secret.key");
    let key = key.to_str().unwrap().to_string();
    let before = admin_sql(&db, COUNTS);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .current_dir(&dir)
        .args(["db", "--db", &url(&db), "migrate-key", "customers"])
        .args(["--batch-size", "10", "--apply", "--key-file", &key])
        .env_remove("UUIDFORGE_DB")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the backfill has begun, the server ends the run's sessions.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let step = recorded_step(&db);
        if step.parse::<u32>().is_ok_and(|s| s >= 3) {
            break;
        }
        assert!(Instant::now() < deadline, "the backfill never began");
        std::thread::sleep(Duration::from_millis(5));
    }
    admin_sql(
        &db,
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'uuidforge'",
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    assert_eq!(admin_sql(&db, COUNTS), before);
    write_an_order(&db);
    migrate(&db, &dir)
        .args(["--resume", "--key-file", &key])
        .assert()
        .success();
    assert_migrated(&db, 5000);
}

#[test]
fn writers_run_throughout_a_batched_migration() {
    writers_run_throughout("batched_pgbench", &[], "");
}

/// The same for the online copy; the tables end no larger than a fresh
/// load of their rows would leave them.
#[test]
fn writers_run_throughout_an_online_copy() {
    // A statistics target the copy must carry to the table swapped in.
    let db = writers_run_throughout(
        "batched_pgbench_copy",
        &["--copy"],
        "ALTER TABLE orders ALTER COLUMN customer_id SET STATISTICS 321",
    );
    // The tables swapped in were analyzed by the copy (autovacuum's
    // analyze counts in last_autoanalyze), with the target the table had.
    assert_eq!(
        admin_sql(
            &db,
            "SELECT concat_ws(' ',
               (SELECT count(*) FROM pg_stat_user_tables
                 WHERE relid = ANY (ARRAY['customers', 'orders', 'referrals', '\"Zeilen\"']::regclass[])
                   AND last_analyze IS NOT NULL),
               (SELECT attstattarget FROM pg_attribute
                 WHERE attrelid = 'orders'::regclass AND attname = 'customer_id'))"
        ),
        "4 321"
    );
    let size = |tables: &str| -> f64 {
        admin_sql(
            &db,
            &format!(
                "SELECT sum(pg_total_relation_size(t)) FROM unnest(ARRAY[{tables}]::regclass[]) t"
            ),
        )
        .parse()
        .unwrap()
    };
    let migrated = size("'customers', 'orders', 'referrals', '\"Zeilen\"'");
    admin_sql(
        &db,
        "CREATE TABLE f_customers AS SELECT * FROM customers; ALTER TABLE f_customers ADD PRIMARY KEY (id); CREATE UNIQUE INDEX ON f_customers (id_old);
         CREATE TABLE f_orders AS SELECT * FROM orders; ALTER TABLE f_orders ADD PRIMARY KEY (id); CREATE INDEX ON f_orders (customer_id);
         CREATE TABLE f_referrals AS SELECT * FROM referrals; ALTER TABLE f_referrals ADD PRIMARY KEY (id);
         CREATE TABLE f_zeilen AS SELECT * FROM \"Zeilen\"; ALTER TABLE f_zeilen ADD PRIMARY KEY (\"Kunde\", n);",
    );
    let fresh = size("'f_customers', 'f_orders', 'f_referrals', 'f_zeilen'");
    assert!(
        migrated <= 1.1 * fresh,
        "after the copy {migrated} bytes, a fresh load of the same rows {fresh}"
    );
}

/// Migrates under pgbench writers with `extra` arguments, after `before`
/// (SQL, may be empty) on the fresh database: the database.
fn writers_run_throughout(tag: &str, extra: &[&str], before: &str) -> String {
    let db = template(tag, 20000);
    if !before.is_empty() {
        admin_sql(&db, before);
    }
    let dir = scratch(tag);
    let script = dir.join("writers.sql");
    // Statements that work before, during and after: no key type named.
    std::fs::write(
        &script,
        "\\set r random(0, 999)\n\
         INSERT INTO orders (customer_id) SELECT id FROM customers ORDER BY created_at LIMIT 1 OFFSET :r;\n\
         UPDATE customers SET name = name || '.' WHERE id = (SELECT id FROM customers ORDER BY created_at LIMIT 1 OFFSET :r);\n\
         INSERT INTO customers (name, created_at) VALUES ('new', now());\n\
         INSERT INTO \"Zeilen\" (\"Kunde\", n) SELECT id, 100000 + :client_id * 1000000 + :r * 1000 + (random() * 999)::int FROM customers ORDER BY created_at LIMIT 1 OFFSET :r ON CONFLICT DO NOTHING;\n",
    )
    .unwrap();
    let writers = common::Writers::start(&db, &script);
    std::thread::sleep(Duration::from_secs(2));
    let out = migrate(&db, &dir)
        .args([
            "--batch-size",
            "500",
            "--order-by",
            "created_at",
            "--apply",
            "--json",
        ])
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let bench = writers.finish();
    let text = &bench.text;
    eprintln!(
        "longest step locking writers out: {} s; {} rounds of writers\n{text}",
        report["applied"]["longest_exclusive_seconds"], bench.rounds
    );
    assert!(bench.all_succeeded, "{text}");
    // The migration finished while they were still writing.
    let writes_after = admin_sql(&db, "SELECT count(*) FROM customers WHERE id_old IS NULL");
    assert_ne!(writes_after, "0", "no writer ran after the swap:\n{text}");
    assert_migrated(&db, 20000);
    db
}

/// Quotes, semicolons and comment marks in schema, table and column names
/// stay names through every batched step (state, map, triggers, indexes).
#[test]
fn quoted_names_in_batches() {
    let db = fresh_database(
        "batched_quoted",
        "CREATE SCHEMA \"s\"\"q; x\";
         CREATE TABLE \"s\"\"q; x\".\"we\"\"ird; --\" (\"K\"\"ey\" int PRIMARY KEY);
         CREATE TABLE \"s\"\"q; x\".\"Kind\" (n serial PRIMARY KEY,
           \"ref\"\"s\" int NOT NULL REFERENCES \"s\"\"q; x\".\"we\"\"ird; --\");
         CREATE INDEX \"i\"\"dx\" ON \"s\"\"q; x\".\"Kind\" (\"ref\"\"s\");
         INSERT INTO \"s\"\"q; x\".\"we\"\"ird; --\" SELECT g FROM generate_series(1, 500) g;
         INSERT INTO \"s\"\"q; x\".\"Kind\" (\"ref\"\"s\") SELECT 1 + g % 500 FROM generate_series(1, 1000) g;",
    );
    let dir = scratch("quoted");
    // The new key's generator: the SQL edition, in the same odd schema.
    uuidforge()
        .env_remove("UUIDFORGE_DB")
        .current_dir(&dir)
        .args([
            "db",
            "--db",
            &url(&db),
            "install-sql",
            "--schema",
            "s\"q; x",
            "--apply",
        ])
        .assert()
        .success();
    migrate_table(&db, &dir, r#""s""q; x"."we""ird; --""#)
        .args(["--batch-size", "50", "--apply"])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &db,
            "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
              WHERE d.adrelid = '\"s\"\"q; x\".\"we\"\"ird; --\"'::regclass AND a.attname = 'K\"ey'"
        ),
        "\"s\"\"q; x\".uuidv7()"
    );
    assert_eq!(
        admin_sql(
            &db,
            r#"SELECT concat_ws(' ',
                 (SELECT count(*) FROM "s""q; x"."Kind" k JOIN "s""q; x"."we""ird; --" w
                    ON w."K""ey" = k."ref""s" AND w."K""ey_old" = k."ref""s_old"),
                 (SELECT pg_typeof("ref""s")::text FROM "s""q; x"."Kind" LIMIT 1),
                 (SELECT indexdef LIKE '%("ref""s")' FROM pg_indexes WHERE indexname = 'i"dx'),
                 (SELECT count(*) FROM pg_class WHERE relname LIKE 'uuidforge\_%'))"#
        ),
        "1000 uuid t 0"
    );
}

#[test]
fn a_row_a_writer_left_behind_the_first_pass_is_filled_by_the_second() {
    // A writer whose trigger looked the key map up just before the key
    // step committed finds nothing there; if its row then lands on a page
    // the first pass has done, the row keeps nothing in the new key column
    // (seen once under pgbench: the NOT NULL check's validation failed).
    // The test makes that row itself while the migration waits at its
    // first index built concurrently (after the first pass), with the
    // migration's trigger skipped as the backfill skips it.
    let db = template("batched_raced", 3000);
    let dir = scratch("raced");
    let mut hold = common::Hold::install(&db);
    hold.wait_at("CREATE UNIQUE INDEX CONCURRENTLY%");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .current_dir(&dir)
        .args(["db", "--db", &url(&db), "migrate-key", "customers"])
        .args(["--batch-size", "100", "--apply"])
        .env_remove("UUIDFORGE_DB")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    hold.until_waiting();
    let raced = "(SELECT min(id) FROM customers)";
    admin_sql(
        &db,
        &format!(
            "BEGIN; SET LOCAL uuidforge_migrate.backfill = 'on';
             UPDATE customers SET id_uuidforge_new = NULL WHERE id = {raced};
             COMMIT"
        ),
    );
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM customers WHERE id_uuidforge_new IS NULL"
        ),
        "1"
    );
    hold.release();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    hold.remove();
    assert_migrated(&db, 3000);
}

/// The triggers of the tables an online copy writes (row and statement
/// level, with `WHEN`, transition tables, disabled, commented), their
/// row-level security and its policies.
const CARRIED: &str = r#"
CREATE SCHEMA "a b";
CREATE TABLE "a b"."Kunden" (id int PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz, owner_name text NOT NULL DEFAULT current_user);
CREATE TABLE "a b".orders (id int PRIMARY KEY, kunde int NOT NULL REFERENCES "a b"."Kunden", note text);
CREATE TABLE "a b".audit (n bigserial PRIMARY KEY, what text NOT NULL);
CREATE FUNCTION "a b".touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.updated_at := clock_timestamp(); RETURN NEW; END $$;
CREATE FUNCTION "a b".audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO "a b".audit (what) VALUES (TG_TABLE_NAME || ' ' || TG_OP || ' ' || TG_LEVEL); RETURN NULL; END $$;
CREATE TRIGGER "touch ON ""a b"".""Kunden"" it" BEFORE UPDATE ON "a b"."Kunden" FOR EACH ROW
  WHEN (OLD.owner_name IS DISTINCT FROM NEW.owner_name) EXECUTE FUNCTION "a b".touch();
CREATE TRIGGER audited AFTER INSERT OR DELETE ON "a b".orders FOR EACH ROW EXECUTE FUNCTION "a b".audit();
COMMENT ON TRIGGER audited ON "a b".orders IS 'every order, logged';
CREATE TRIGGER counted AFTER INSERT ON "a b".orders REFERENCING NEW TABLE AS fresh FOR EACH STATEMENT EXECUTE FUNCTION "a b".audit();
CREATE TRIGGER quiet AFTER UPDATE ON "a b".orders FOR EACH ROW EXECUTE FUNCTION "a b".audit();
ALTER TABLE "a b".orders DISABLE TRIGGER quiet;
ALTER TABLE "a b"."Kunden" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "own rows" ON "a b"."Kunden" FOR SELECT TO PUBLIC USING (owner_name = current_user);
CREATE POLICY writers ON "a b"."Kunden" AS RESTRICTIVE FOR INSERT TO PUBLIC WITH CHECK (owner_name = current_user);
COMMENT ON POLICY writers ON "a b"."Kunden" IS 'one''s own rows';
INSERT INTO "a b"."Kunden" (id, created_at) SELECT g, now() - g * interval '1 minute' FROM generate_series(1, 300) g;
INSERT INTO "a b".orders SELECT g, 1 + g % 300 FROM generate_series(1, 900) g;
"#;

/// The triggers, row-level security and policies of the schema `a b`, as
/// the catalog describes them (definition, state, comment).
const CARRIED_OBJECTS: &str = r#"SELECT concat_ws(E'\n',
  (SELECT string_agg(concat_ws(' | ', pg_get_triggerdef(oid), tgenabled, obj_description(oid, 'pg_trigger')), E'\n' ORDER BY tgname)
     FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN ('"a b"."Kunden"'::regclass, '"a b".orders'::regclass)),
  (SELECT string_agg(concat_ws(' | ', tablename, policyname, permissive, roles::text, cmd, qual, with_check,
            (SELECT obj_description(p.oid, 'pg_policy') FROM pg_policy p WHERE p.polname = policyname)), E'\n' ORDER BY policyname)
     FROM pg_policies WHERE schemaname = 'a b'),
  (SELECT string_agg(relname || ' ' || relrowsecurity || ' ' || relforcerowsecurity, ', ' ORDER BY relname)
     FROM pg_class WHERE relnamespace = '"a b"'::regnamespace AND relkind = 'r'))"#;

#[test]
fn an_online_copy_carries_triggers_row_level_security_and_policies() {
    let tpl = fresh_database("batched_carried", CARRIED);
    admin_sql(&tpl, "CREATE EXTENSION uuidforge");
    let db = copy_of(&tpl, &format!("{tpl}_a"));
    let dir = scratch("carried");
    let before = admin_sql(&db, CARRIED_OBJECTS);
    let audited = admin_sql(&db, r#"SELECT count(*) FROM "a b".audit"#);
    // --jobs: the sessions of every step of parts side by side.
    let mut plan = migrate_table(&db, &dir, r#""a b"."Kunden""#);
    plan.args(["--batch-size", "100", "--copy", "--jobs", "3"]);
    let sessions: Vec<u64> = plan_steps(plan)
        .iter()
        .filter(|s| s["kind"] == "beside")
        .map(|s| s["sessions"].as_u64().unwrap())
        .collect();
    assert_eq!(sessions, [3, 3, 3], "copies, indexes, validations");
    migrate_table(&db, &dir, r#""a b"."Kunden""#)
        .args(["--batch-size", "100", "--jobs", "3"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("--copy"));
    migrate_table(&db, &dir, r#""a b"."Kunden""#)
        .args(["--batch-size", "100", "--copy", "--apply"])
        .assert()
        .success();
    // The same triggers, states, comments and policies, on the new tables.
    assert_eq!(admin_sql(&db, CARRIED_OBJECTS), before);
    assert_eq!(
        admin_sql(
            &db,
            r#"SELECT concat_ws(' ', (SELECT pg_typeof(kunde)::text FROM "a b".orders LIMIT 1),
                 (SELECT count(*) FROM pg_class WHERE relnamespace = '"a b"'::regnamespace AND relname LIKE 'uuidforge\_%'))"#
        ),
        "uuid 0"
    );
    // The copy fired none of them: its rows are the tables', triggers
    // fired.
    assert_eq!(
        admin_sql(&db, r#"SELECT count(*) FROM "a b".audit"#),
        audited
    );
    // They fire on the new tables: the row and statement triggers of an
    // insert, not the disabled one; the WHEN of the touch.
    admin_sql(
        &db,
        r#"SET ROLE uuidforge;
           INSERT INTO "a b".orders SELECT 1000, id FROM "a b"."Kunden" ORDER BY created_at LIMIT 1;
           UPDATE "a b".orders SET note = 'x' WHERE id = 1000;
           UPDATE "a b"."Kunden" SET owner_name = 'someone' WHERE id_old = 7"#,
    );
    assert_eq!(
        admin_sql(
            &db,
            r#"SELECT concat_ws(' ', (SELECT string_agg(what, ', ' ORDER BY n) FROM "a b".audit WHERE n > (SELECT max(n) - 2 FROM "a b".audit)),
                 (SELECT count(*) FROM "a b"."Kunden" WHERE updated_at IS NOT NULL))"#
        ),
        "orders INSERT ROW, orders INSERT STATEMENT 1"
    );

    // Forced on its owner, a policy would hide rows from the copy: the
    // server's error stops it, and the tables still work.
    let forced = copy_of(&tpl, &format!("{tpl}_f"));
    admin_sql(
        &forced,
        r#"ALTER TABLE "a b"."Kunden" FORCE ROW LEVEL SECURITY; UPDATE "a b"."Kunden" SET owner_name = 'someone' WHERE id = 3"#,
    );
    migrate_table(&forced, &dir, r#""a b"."Kunden""#)
        .args(["--batch-size", "100", "--copy", "--apply"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("row-level security"));
    assert_eq!(
        admin_sql(
            &forced,
            r#"SELECT concat_ws(' ', (SELECT count(*) FROM "a b"."Kunden"), (SELECT pg_typeof(kunde)::text FROM "a b".orders LIMIT 1))"#
        ),
        "300 integer"
    );
}

/// A table changed while an online copy runs (a column added, as a deploy
/// of the application would): the swap finds it changed under its locks
/// and stops before it drops anything, naming the table and how to give
/// the copy up; given up that way, the database is as the application
/// left it.
#[test]
fn a_table_changed_during_an_online_copy_stops_its_swap() {
    let template = template("batched_changed_copy", 2000);
    admin_sql(&template, STEP_NOW);
    let dir = scratch("changed_copy");
    let key = dir.join("secret.key");
    let swap = copy_plan_steps(&template, &dir)
        .iter()
        .position(|s| s["what"].as_str().unwrap_or("").starts_with("swap"))
        .expect("a swap step");
    let (db, _, child, held) = copy_held_before(&template, &dir, &key, swap, |_| true);
    admin_sql(
        &db,
        "SET ROLE uuidforge; ALTER TABLE orders ADD COLUMN note text DEFAULT 'kept'",
    );
    drop(held);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    for named in [
        "changed since the online copy was planned",
        "public.orders: its columns, owner, privileges or options",
        "give the copy up",
    ] {
        assert!(stderr.contains(named), "{named}: {stderr}");
    }
    assert_eq!(step_now(&db), swap.to_string(), "the swap not recorded");
    assert_eq!(
        admin_sql(
            &db,
            "SELECT concat_ws(' ', pg_typeof(customer_id)::text, note) FROM orders LIMIT 1"
        ),
        "bigint kept"
    );
    // Given up: its statements printed first, nothing changed; with
    // --apply, nothing of the copy is left.
    migrate(&db, &dir)
        .arg("--give-up")
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "DROP TRIGGER IF EXISTS uuidforge_copy ON \"public\".\"orders\"",
        ))
        .stdout(predicates::str::contains("nothing was changed"));
    assert_eq!(step_now(&db), swap.to_string());
    migrate(&db, &dir)
        .args(["--give-up", "--apply"])
        .assert()
        .success()
        .stdout(predicates::str::contains("given up in"));
    assert_eq!(step_now(&db), "none");
    migrate(&db, &dir)
        .arg("--give-up")
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "no change in batches of customers is under way",
        ));
    // Over a fleet it is refused before anything is read: each member's
    // copy is given up on its own.
    uuidforge()
        .env_remove("UUIDFORGE_DB")
        .current_dir(&dir)
        .args(["db", "--db", &url(&db), "--db", &url(&template)])
        .args(["migrate-key", "customers", "--give-up", "--apply"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--give-up runs on one database at a time",
        ));
    let ours = "SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class WHERE relname LIKE 'uuidforge\\_%' AND relnamespace = 'public'::regnamespace";
    assert_eq!(admin_sql(&db, ours), admin_sql(&template, ours));
    admin_sql(&db, &format!("SET ROLE uuidforge; {AN_ORDER}"));
}

/// A copy given up while its run holds it is refused (one process at a
/// time); killed in the middle, it is given up, and the database is as
/// before: nothing of the copy left, the application's rows there, and a
/// new migration runs from the start.
#[test]
fn an_online_copy_is_given_up_after_a_kill_and_never_beside_its_run() {
    let template = template("batched_given_up", 2000);
    admin_sql(&template, STEP_NOW);
    let dir = scratch("given_up");
    let key = dir.join("secret.key");
    let indexes = copy_plan_steps(&template, &dir)
        .iter()
        .position(|s| {
            s["what"]
                .as_str()
                .unwrap_or("")
                .starts_with("index and analyze")
        })
        .expect("an index step");
    let db = copy_of(&template, &format!("{template}_1"));
    let before = admin_sql(&db, COUNTS);
    let mut child = spawn_copy(&db, &dir, &key);
    let (held, at) = hold_at_step(&db, &mut child, indexes);
    assert!(at >= indexes, "held at {at}");
    migrate(&db, &dir)
        .args(["--give-up", "--apply"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("being run by another process"));
    assert_eq!(step_now(&db), at.to_string(), "nothing given up");
    let _ = child.kill();
    child.wait().unwrap();
    drop(held);
    wait_for_orphans(&db);
    migrate(&db, &dir)
        .args(["--give-up", "--apply"])
        .assert()
        .success();
    assert_eq!(step_now(&db), "none");
    let ours = "SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class WHERE relname LIKE 'uuidforge\\_%' AND relnamespace = 'public'::regnamespace";
    assert_eq!(admin_sql(&db, ours), admin_sql(&template, ours));
    assert_eq!(admin_sql(&db, COUNTS), before);
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM pg_trigger WHERE tgname = 'uuidforge_copy'"
        ),
        "0"
    );
    admin_sql(&db, &format!("SET ROLE uuidforge; {AN_ORDER}"));
    migrate(&db, &dir)
        .args(COPY_IN_RANGES)
        .args(["--apply", "--key-file"])
        .arg(&key)
        .assert()
        .success();
    assert_migrated(&db, 2000);
}

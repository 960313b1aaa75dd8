//! `uuidforge lab keys` on tiny sizes against the real server: every cell
//! runs and measures, the JSON and the charts parse, the recommendation
//! follows from the numbers (recomputed here by the rule as documented),
//! and the lab never touches a schema it did not make.

mod common;

use common::{admin_sql, admin_url, exit_2, fresh_database, scratch, uuidforge};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The documented rule, written again from its description: the most
/// writers; among per-writer generator cells, the shortest counter (then
/// guard) whose p50 lookups are within 5% of the best of each and whose
/// timestamps ran at most 1 ms ahead; plus 2 bits.
fn expected_recommendation(cells: &[Value]) -> (u64, u64) {
    let gens: Vec<&Value> = cells
        .iter()
        .filter(|c| c["cell"]["key"]["kind"] == "generator")
        .collect();
    let writers = gens
        .iter()
        .map(|c| c["cell"]["writers"].as_u64().unwrap())
        .max()
        .unwrap();
    let gens: Vec<&Value> = gens
        .into_iter()
        .filter(|c| c["cell"]["writers"] == writers)
        .collect();
    let best_recent = gens
        .iter()
        .map(|c| f(&c["lookup_recent_p50_us"]))
        .fold(f64::MAX, f64::min);
    let best_random = gens
        .iter()
        .map(|c| f(&c["lookup_random_p50_us"]))
        .fold(f64::MAX, f64::min);
    let ok = |c: &&&Value| {
        f(&c["lookup_recent_p50_us"]) <= best_recent * 1.05
            && f(&c["lookup_random_p50_us"]) <= best_random * 1.05
            && c["max_ahead_ms"].as_u64().unwrap() <= 1
    };
    let key = |c: &Value| {
        (
            c["cell"]["key"]["counter_bits"].as_u64().unwrap(),
            c["cell"]["key"]["guard_bits"].as_u64().unwrap(),
        )
    };
    let chosen = gens.iter().filter(ok).map(|c| key(c)).min();
    let (counter, guard) = chosen.unwrap_or_else(|| {
        let best = gens
            .iter()
            .min_by(|a, b| {
                (f(&a["lookup_recent_p50_us"]) + f(&a["lookup_random_p50_us"]))
                    .total_cmp(&(f(&b["lookup_recent_p50_us"]) + f(&b["lookup_random_p50_us"])))
            })
            .unwrap();
        key(best)
    });
    ((counter + 2).min(42), guard)
}

#[test]
fn every_cell_runs_and_the_recommendation_follows_from_the_numbers() {
    let db = fresh_database("lab", "");
    let url = admin_url(&db);
    let svg = scratch("lab", "svg");
    let out = uuidforge()
        .args([
            "lab",
            "keys",
            "--db",
            &url,
            "--rows",
            "3000",
            "--writers",
            "1,2",
            "--counter-bits",
            "0,8,18",
            "--guard-bits",
            "0,1",
            "--lookups",
            "50",
            "--sort-rows",
            "20000",
            "--json",
            "--apply",
            "--svg-dir",
        ])
        .arg(&*svg)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&out).unwrap();
    let cells = report["cells"].as_array().unwrap();
    let labels: Vec<String> = cells
        .iter()
        .map(|c| format!("{}/{}", c["label"].as_str().unwrap(), c["cell"]["writers"]))
        .collect();
    let expected: Vec<String> = [1, 2]
        .iter()
        .flat_map(|w| {
            [
                "bigint", "v4", "uuidv7()", "c0g0", "c8g0", "c8g1", "c18g0", "c18g1", "pg18",
            ]
            .iter()
            .map(move |k| format!("{k}/{w}"))
        })
        .collect();
    assert_eq!(labels, expected);
    for c in cells {
        let label = c["label"].as_str().unwrap();
        let kind = c["cell"]["key"]["kind"].as_str().unwrap();
        assert_eq!(c["rows"], 3000);
        assert!(f(&c["insert_rows_per_s"]) > 0.0, "{label}");
        assert!(c["index_bytes"].as_u64().unwrap() >= 8192, "{label}");
        let density = f(&c["leaf_density_pct"]);
        assert!(density > 10.0 && density <= 100.0, "{label}: {density}");
        assert!(c["wal_bytes"].as_u64().unwrap() > 0, "{label}");
        for m in [
            "lookup_recent_p50_us",
            "lookup_random_p50_us",
            "lookup_recent_p99_us",
            "lookup_random_p99_us",
        ] {
            assert!(f(&c[m]) > 0.0, "{label} {m}");
        }
        assert!(f(&c["lookup_random_p99_us"]) >= f(&c["lookup_random_p50_us"]));
        // 3000 rows take far less than a minute: the last minute is all.
        assert_eq!(c["range_rows"], 3000, "{label}");
        let pct = c["range_newest_1pct_rows"].as_u64().unwrap();
        assert!(
            (1..=3000).contains(&pct),
            "{label}: newest 1% holds {pct} rows"
        );
        assert!(f(&c["range_newest_1pct_ms"]) > 0.0);
        let v7 = !matches!(kind, "bigint_identity" | "v4");
        assert_eq!(c["brin_bytes"].is_u64(), v7, "{label}");
        assert_eq!(c["brin_range_ms"].is_f64(), v7, "{label}");
        assert_eq!(c["brin_newest_1pct_ms"].is_f64(), v7, "{label}");
        let per_writer = matches!(kind, "generator" | "pg18");
        assert_eq!(c["overflows"].is_u64(), per_writer, "{label}");
        assert_eq!(c["max_ahead_ms"].is_u64(), per_writer, "{label}");
        let disorder = f(&c["out_of_order_share"]);
        match (kind, c["cell"]["writers"].as_u64().unwrap()) {
            ("v4", _) => assert!(disorder > 0.9, "{label}: random keys are out of order"),
            (_, 1) => assert_eq!(disorder, 0.0, "{label}: one writer appends"),
            _ => {}
        }
    }
    // No counter bits: every value after the first of a millisecond overflows.
    let c0 = cells.iter().find(|c| c["label"] == "c0g0").unwrap();
    assert!(c0["overflows"].as_u64().unwrap() >= 2900, "{c0}");
    let r = &report["recommendation"];
    let (counter, guard) = expected_recommendation(cells);
    assert_eq!(r["counter_bits"], counter, "{r}");
    assert_eq!(r["guard_bits"], guard, "{r}");
    assert_eq!(r["writers"], 2);
    assert!(r["evidence"].as_str().unwrap().contains("within 5%"));
    let sort = &report["uuid192_sort"];
    assert_eq!(sort["rows"], 20000);
    for m in [
        "with_sortsupport_ms",
        "without_sortsupport_ms",
        "index_build_with_ms",
        "index_build_without_ms",
    ] {
        assert!(f(&sort[m]) > 0.0, "{m}: {sort}");
    }
    // A chart per measure, each a bar per cell.
    for stem in [
        "insert_rows_per_s",
        "index_mib",
        "leaf_density_pct",
        "wal_mib",
        "out_of_order_pct",
        "lookup_recent_p50_us",
        "lookup_random_p50_us",
        "lookup_random_p99_us",
        "range_last_minute_ms",
        "max_ahead_ms",
    ] {
        let text = std::fs::read_to_string(svg.join(format!("{stem}.svg"))).unwrap();
        assert!(
            text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
            "{stem}"
        );
        let bars = match stem {
            "max_ahead_ms" => 10,
            "brin_newest_1pct_ms" => 14,
            _ => 18,
        };
        assert!(
            text.matches("<rect").count() > bars,
            "{stem}: {} rects",
            text.matches("<rect").count()
        );
        assert!(text.contains("c18g1/2"), "{stem}: labels");
    }
    // The lab's schema is gone afterwards.
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*)::text FROM pg_namespace WHERE nspname = 'uuidforge_lab'"
        ),
        "0"
    );
}

#[test]
fn without_apply_it_prints_the_plan_and_it_never_drops_a_schema_it_did_not_make() {
    let db = fresh_database("labsafe", "");
    let url = admin_url(&db);
    let out = uuidforge()
        .args([
            "lab",
            "keys",
            "--db",
            &url,
            "--writers",
            "1",
            "--counter-bits",
            "8",
            "--guard-bits",
            "0",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("nothing runs without --apply"), "{text}");
    assert!(
        text.contains("CREATE TABLE \"uuidforge_lab\".\"cell_0\""),
        "{text}"
    );
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*)::text FROM pg_namespace WHERE nspname = 'uuidforge_lab'"
        ),
        "0"
    );
    admin_sql(&db, "CREATE SCHEMA uuidforge_lab; CREATE TABLE uuidforge_lab.mine (x int); INSERT INTO uuidforge_lab.mine VALUES (7)");
    let e = exit_2([
        "lab",
        "keys",
        "--db",
        &url,
        "--rows",
        "100",
        "--writers",
        "1",
        "--counter-bits",
        "8",
        "--guard-bits",
        "0",
        "--apply",
    ]);
    assert!(
        e.contains("schema uuidforge_lab exists and is not the lab's"),
        "{e}"
    );
    assert_eq!(
        admin_sql(&db, "SELECT x::text FROM uuidforge_lab.mine"),
        "7"
    );
    let e = exit_2(["lab", "keys", "--db", &url, "--writers", "0", "--apply"]);
    assert!(e.contains("--writers"), "{e}");
}

#[test]
fn a_lab_killed_mid_run_leaves_only_its_own_schema_and_the_next_run_clears_it() {
    let db = fresh_database(
        "labkill",
        "CREATE TABLE keep (x int); INSERT INTO keep VALUES (42)",
    );
    let url = admin_url(&db);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .args([
            "lab",
            "keys",
            "--db",
            &url,
            "--rows",
            "5000000",
            "--writers",
            "2",
            "--counter-bits",
            "8",
            "--guard-bits",
            "0",
            "--apply",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it while its writers insert into the first cell's table.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let rows = admin_sql(
            &db,
            "SELECT coalesce((SELECT n_tup_ins FROM pg_stat_user_tables WHERE schemaname = 'uuidforge_lab' ORDER BY relid LIMIT 1), 0)::text",
        );
        if rows.parse::<u64>().unwrap_or(0) > 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the lab never inserted"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(admin_sql(&db, "SELECT x::text FROM keep"), "42");
    assert_eq!(
        admin_sql(
            &db,
            "SELECT obj_description('uuidforge_lab'::regnamespace, 'pg_namespace') IS NOT NULL"
        ),
        "t",
        "the leftover schema is marked as the lab's"
    );
    uuidforge()
        .args([
            "lab",
            "keys",
            "--db",
            &url,
            "--rows",
            "500",
            "--writers",
            "1",
            "--counter-bits",
            "8",
            "--guard-bits",
            "0",
            "--sort-rows",
            "0",
            "--json",
            "--apply",
        ])
        .assert()
        .success();
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*)::text FROM pg_namespace WHERE nspname = 'uuidforge_lab'"
        ),
        "0"
    );
    assert_eq!(admin_sql(&db, "SELECT x::text FROM keep"), "42");
}

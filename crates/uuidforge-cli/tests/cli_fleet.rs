//! The database tools over a fleet, on four real PostgreSQL 15 clusters
//! on loopback (scripts/fleet-setup.sh: ports in
//! UUIDFORGE_TEST_FLEET_PORTS, the fourth one stopped by a test mid-run):
//! read commands on every member with a member down, schema drift,
//! migrate-key of a replicated and a sharded table (the test's own SQL
//! checks the keys and that no reference moved to another parent), plans
//! that differ refused before anything runs, a killed fleet migration
//! resumed, and a coordinator whose partitions are postgres_fdw foreign
//! tables on two other members.

mod common;

use common::uuidforge;
use std::path::Path;
use std::process::Stdio;

fn ports() -> Vec<u16> {
    let text = std::env::var("UUIDFORGE_TEST_FLEET_PORTS").unwrap_or_else(|_| {
        panic!("UUIDFORGE_TEST_FLEET_PORTS is not set: run scripts/fleet-setup.sh and export the line it prints")
    });
    text.split(',').map(|p| p.trim().parse().unwrap()).collect()
}

fn url_at(port: u16, db: &str) -> String {
    format!("postgres://uuidforge:uuidforge@127.0.0.1:{port}/{db}")
}

/// `sql` on `db` of the cluster on `port` as the superuser: the first
/// column of the last statement's first row ("" when none).
fn sql_at(port: u16, db: &str, sql: &str) -> String {
    common::sql_at_url(
        &format!("postgres://uuidforge_admin:uuidforge@127.0.0.1:{port}/{db}"),
        sql,
    )
}

/// A fresh database `uf_cli_fleet_TAG_PID` on each port, owned by
/// `uuidforge`, made by `sql(i)` for the i-th member.
fn fleet_db(tag: &str, ports: &[u16], sql: impl Fn(usize) -> String) -> String {
    let name = format!("uf_cli_fleet_{tag}_{}", std::process::id());
    for (i, port) in ports.iter().enumerate() {
        sql_at(
            *port,
            "postgres",
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        );
        sql_at(
            *port,
            "postgres",
            &format!("CREATE DATABASE {name} OWNER uuidforge"),
        );
        sql_at(*port, &name, &format!("SET ROLE uuidforge; {}", sql(i)));
    }
    name
}

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

/// A fleet file of `ports` (members a, b, c, d) for `db`.
fn fleet_file(dir: &Path, db: &str, ports: &[u16]) -> std::path::PathBuf {
    let path = dir.join("fleet.txt");
    let lines: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{}={}", NAMES[i], url_at(*p, db)))
        .collect();
    std::fs::write(&path, format!("# test fleet\n{}\n", lines.join("\n"))).unwrap();
    path
}

fn scratch(tag: &str) -> common::Scratch {
    common::scratch("fleet", tag)
}

fn fleet_cmd(fleet: &Path, dir: &Path) -> assert_cmd::Command {
    let mut c = uuidforge();
    c.env_remove("UUIDFORGE_DB")
        .current_dir(dir)
        .args(["db", "--fleet", fleet.to_str().unwrap()]);
    c
}

fn text(a: &assert_cmd::assert::Assert) -> (String, String) {
    (
        String::from_utf8_lossy(&a.get_output().stdout).to_string(),
        String::from_utf8_lossy(&a.get_output().stderr).to_string(),
    )
}

const SHOP: &str = "CREATE TABLE customers (id uuid PRIMARY KEY, name text);
    CREATE TABLE orders (id uuid PRIMARY KEY, customer_id uuid REFERENCES customers);";

/// find, columns and related on three members and one that is down: each
/// hit names its member; the drift between the members is its own
/// section; the member down is named, the others answer, exit 4.
#[test]
fn read_commands_over_the_fleet_with_drift_and_a_member_down() {
    let ports = ports();
    let db = fleet_db("read", &ports, |i| {
        let mut sql = format!(
            "{SHOP}
             INSERT INTO customers SELECT md5('c{i}:' || g)::uuid, 'c' || g FROM generate_series(1, 50) g;
             INSERT INTO orders SELECT md5('o{i}:' || g)::uuid, md5('c{i}:' || (1 + g % 50))::uuid FROM generate_series(1, 100) g;"
        );
        // Drift: b has no index on the reference, c a table more.
        if i != 1 {
            sql.push_str("CREATE INDEX ON orders (customer_id);");
        }
        if i == 2 {
            sql.push_str("CREATE TABLE events (id uuid PRIMARY KEY, customer_id uuid);");
        }
        sql
    });
    let dir = scratch("read");
    let three = fleet_file(&dir, &db, &ports[..3]);
    // A value on b only.
    let on_b = sql_at(ports[1], &db, "SELECT md5('c1:7')::uuid");
    let found = fleet_cmd(&three, &dir)
        .args(["find", &on_b])
        .assert()
        .success();
    let (out, err) = text(&found);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        !lines.is_empty() && lines.iter().all(|l| l.starts_with("b\t")),
        "{out}"
    );
    assert!(
        lines.iter().any(|l| l.contains("public.customers.id")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("public.orders.customer_id")),
        "{out}"
    );
    for m in ["a", "b", "c"] {
        assert!(err.contains(&format!("member {m}: ")), "{err}");
    }
    let json = fleet_cmd(&three, &dir)
        .args(["find", "--json", &on_b])
        .assert()
        .success();
    let hits = common::json_lines(&json.get_output().stdout);
    assert!(hits.iter().all(|h| h["member"] == "b"), "{hits:?}");

    let columns = fleet_cmd(&three, &dir)
        .args(["columns", "--json"])
        .assert()
        .success();
    let report: serde_json::Value = serde_json::from_slice(&columns.get_output().stdout).unwrap();
    let drift: Vec<(String, String)> = report["drift"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["column"].as_str().unwrap().to_string(),
                d["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        drift.contains(&("public.events.id".into(), "missing".into())),
        "{drift:?}"
    );
    assert!(
        drift.contains(&("public.orders.customer_id".into(), "index".into())),
        "{drift:?}"
    );
    assert!(
        !drift.iter().any(|(c, _)| c == "public.customers.id"),
        "{drift:?}"
    );
    let (out, _) = text(&fleet_cmd(&three, &dir).args(["columns"]).assert().success());
    assert!(
        out.contains("where the members differ (schema drift): "),
        "{out}"
    );
    assert!(
        out.contains("public.events.id (missing): on c; missing on a, b"),
        "{out}"
    );

    let (out, _) = text(
        &fleet_cmd(&three, &dir)
            .args(["related", "orders.customer_id"])
            .assert()
            .success(),
    );
    for m in ["a", "b", "c"] {
        assert!(out.contains(&format!("== member {m}")), "{out}");
    }

    // The fourth member stops mid-run: named, the others still answer.
    let four = fleet_file(&dir, &db, &ports);
    let d = std::process::Command::new("pg_ctlcluster")
        .args(["15", "fleet_d", "stop", "-m", "fast"])
        .status()
        .unwrap();
    assert!(d.success());
    let partial = fleet_cmd(&four, &dir)
        .args(["find", &on_b])
        .assert()
        .code(4);
    let (out, err) = text(&partial);
    assert!(out.lines().any(|l| l.starts_with("b\t")), "{out}");
    assert!(
        err.contains("member d: ") && err.contains("1 of 4 members did not answer"),
        "{err}"
    );
    let (_, err) = text(&fleet_cmd(&four, &dir).args(["columns"]).assert().code(4));
    assert!(err.contains("member d: "), "{err}");
    let d = std::process::Command::new("pg_ctlcluster")
        .args(["15", "fleet_d", "start"])
        .status()
        .unwrap();
    assert!(d.success());
}

/// Countries the same on every member, customers of their own (with the
/// same serial keys on each), orders: the replicated table gets the same
/// new keys everywhere, the sharded one keys unique across the members,
/// and no reference moves to another parent (the test's own SQL, through
/// the codes each row carries).
fn fleet_shop(i: usize) -> String {
    format!(
        "CREATE TABLE countries (id serial PRIMARY KEY, code text NOT NULL UNIQUE, created_at timestamptz NOT NULL);
         CREATE TABLE customers (id bigserial PRIMARY KEY, country_id int NOT NULL REFERENCES countries, country_code text NOT NULL,
                                 name text NOT NULL, created_at timestamptz NOT NULL);
         CREATE INDEX ON customers (country_id);
         CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers, customer_name text NOT NULL);
         INSERT INTO countries (code, created_at) SELECT 'k' || g, timestamptz '2020-01-01' + g * interval '1 day' FROM generate_series(1, 40) g;
         INSERT INTO customers (country_id, country_code, name, created_at)
           SELECT 1 + (g * 7 + {i}) % 40, 'k' || (1 + (g * 7 + {i}) % 40), 'm{i}c' || g, timestamptz '2024-01-01' + g * interval '1 minute'
           FROM generate_series(1, 300) g;
         INSERT INTO orders (customer_id, customer_name) SELECT 1 + g % 300, 'm{i}c' || (1 + g % 300) FROM generate_series(1, 600) g;"
    )
}

const MOVED: &str = "SELECT (SELECT count(*) FROM customers c JOIN countries k ON k.id = c.country_id WHERE k.code <> c.country_code)
                          + (SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.name <> o.customer_name)
                          + (SELECT count(*) FROM customers c WHERE NOT EXISTS (SELECT FROM countries k WHERE k.id = c.country_id))";

/// The test's own check of the replicated table: every member has the same
/// new key for the same country, and no reference moved to another parent
/// on any; the keys (`code=id,…`).
fn same_countries_everywhere(ports: &[u16], db: &str) -> String {
    let keys = |port: u16| {
        sql_at(
            port,
            db,
            "SELECT string_agg(code || '=' || id::text, ',' ORDER BY code) FROM countries",
        )
    };
    for port in ports {
        assert_eq!(keys(*port), keys(ports[0]), "member on {port}");
        assert_eq!(sql_at(*port, db, MOVED), "0", "member on {port}");
    }
    keys(ports[0])
}

#[test]
fn migrate_key_over_a_fleet_replicated_then_sharded() {
    let ports = ports();
    let three = &ports[..3];
    let db = fleet_db("migrate", three, fleet_shop);
    let dir = scratch("migrate");
    let fleet = fleet_file(&dir, &db, three);
    for port in three {
        sql_at(*port, &db, "CREATE EXTENSION uuidforge");
    }
    let plan = fleet_cmd(&fleet, &dir)
        .args(["migrate-key", "countries", "--order-by", "created_at"])
        .assert()
        .success();
    let (out, _) = text(&plan);
    assert!(
        out.contains("countries is replicated (the same rows on every member"),
        "{out}"
    );
    for m in ["a", "b", "c"] {
        assert!(out.contains(&format!("-- == member {m} ==")), "{out}");
    }
    assert!(out.contains("nothing was changed on any member"), "{out}");
    assert_eq!(sql_at(three[0], &db, "SELECT format_type(atttypid, -1) FROM pg_attribute WHERE attrelid = 'countries'::regclass AND attname = 'id'"), "integer");

    let backups = dir.join("backups");
    let applied = fleet_cmd(&fleet, &dir)
        .args([
            "migrate-key",
            "countries",
            "--order-by",
            "created_at",
            "--apply",
            "--backup",
        ])
        .arg(&backups)
        .assert()
        .success();
    let (out, _) = text(&applied);
    assert!(
        out.contains("replicated table's new keys are the same on every member"),
        "{out}"
    );
    let keys = same_countries_everywhere(three, &db);
    assert!(keys.contains("=0"), "UUIDs: {keys}");
    // One backup per member, named by it, readable by its owner only.
    let files: Vec<String> = std::fs::read_dir(&backups)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    for m in ["a", "b", "c"] {
        assert!(
            files
                .iter()
                .any(|f| f.starts_with(&format!("uuidforge-backup-{m}-"))),
            "{files:?}"
        );
    }

    // Customers differ from member to member (the same serial keys on
    // each): sharded, keys unique across the members.
    let applied = fleet_cmd(&fleet, &dir)
        .args([
            "migrate-key",
            "customers",
            "--order-by",
            "created_at",
            "--apply",
        ])
        .assert()
        .success();
    let (out, _) = text(&applied);
    assert!(
        out.contains("customers is sharded (the members hold different rows)"),
        "{out}"
    );
    let mut all: Vec<String> = Vec::new();
    for port in three {
        let ids = sql_at(
            *port,
            &db,
            "SELECT string_agg(id::text, ',') FROM customers",
        );
        all.extend(ids.split(',').map(str::to_string));
        assert_eq!(sql_at(*port, &db, MOVED), "0");
        assert_eq!(
            sql_at(
                *port,
                &db,
                "SELECT count(*) FROM customers WHERE uuid_extract_version(id) <> 7"
            ),
            "0"
        );
    }
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "a new key on two members");
    assert_eq!(n, 900);
}

/// Members whose schemas differ where the plan depends on them: refused
/// before anything runs on any member, naming the two members.
#[test]
fn plans_that_differ_are_refused_on_every_member() {
    let ports = ports();
    let three = &ports[..3];
    let db = fleet_db("differ", three, |i| {
        let mut sql = fleet_shop(i);
        if i == 2 {
            sql.push_str("CREATE TABLE invoices (id serial PRIMARY KEY, customer_id bigint REFERENCES customers);");
        }
        sql
    });
    let dir = scratch("differ");
    let fleet = fleet_file(&dir, &db, three);
    let refused = fleet_cmd(&fleet, &dir)
        .args(["migrate-key", "customers", "--no-default", "--apply"])
        .assert()
        .failure();
    let (_, err) = text(&refused);
    assert!(
        err.contains("the members' schemas differ") && err.contains("plans of a and c"),
        "{err}"
    );
    assert!(!err.contains("--resume"), "{err}");
    for port in three {
        assert_eq!(sql_at(*port, &db, "SELECT format_type(atttypid, -1) FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attname = 'id'"), "bigint");
    }
    assert!(!dir.join("uuidforge-fleet-customers.json").exists());
}

/// A fleet migration killed while it waits on member b: --resume completes
/// it on b and c; a then b, c keep the same keys for the replicated table.
#[test]
fn a_killed_fleet_migration_resumes() {
    let ports = ports();
    let three = &ports[..3];
    let db = fleet_db("kill", three, fleet_shop);
    let dir = scratch("kill");
    let fleet = fleet_file(&dir, &db, three);
    // b is held by a reader: the migration waits there.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let holder = runtime.block_on(async {
        let url = format!(
            "postgres://uuidforge_admin:uuidforge@127.0.0.1:{}/{db}",
            three[1]
        );
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
            .batch_execute("BEGIN; LOCK TABLE countries IN ACCESS SHARE MODE")
            .await
            .unwrap();
        client
    });
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .current_dir(&dir)
        .env_remove("UUIDFORGE_DB")
        .args([
            "db",
            "--fleet",
            fleet.to_str().unwrap(),
            "migrate-key",
            "countries",
            "--no-default",
            "--apply",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while sql_at(three[1], &db, waiting) == "0" {
        assert!(
            std::time::Instant::now() < deadline,
            "the migration never waited on b"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    runtime.block_on(async { holder.batch_execute("ROLLBACK").await.unwrap() });
    drop(holder);
    let state = std::fs::read_to_string(dir.join("uuidforge-fleet-countries.json")).unwrap();
    assert!(
        state.contains("\"done\"") && state.contains("\"started\""),
        "{state}"
    );
    // a is migrated, c not yet.
    assert_eq!(sql_at(three[2], &db, "SELECT format_type(atttypid, -1) FROM pg_attribute WHERE attrelid = 'countries'::regclass AND attname = 'id'"), "integer");
    let resumed = fleet_cmd(&fleet, &dir)
        .args(["migrate-key", "countries", "--resume"])
        .assert()
        .success();
    let (out, _) = text(&resumed);
    assert!(out.contains("member a: migrated before"), "{out}");
    assert!(
        out.contains("new keys are the same on every member"),
        "{out}"
    );
    let keys = same_countries_everywhere(three, &db);
    // A kill after b's commit and before the state said so: the state file
    // as it would be then (b and c started). --resume finds them migrated
    // and changes nothing.
    let path = dir.join("uuidforge-fleet-countries.json");
    let mut state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for m in state["members"].as_array_mut().unwrap().iter_mut().skip(1) {
        m["status"] = serde_json::json!("started");
    }
    std::fs::write(&path, state.to_string()).unwrap();
    let resumed = fleet_cmd(&fleet, &dir)
        .args(["migrate-key", "countries", "--resume"])
        .assert()
        .success();
    let (out, _) = text(&resumed);
    for m in ["a", "b", "c"] {
        assert!(
            out.contains(&format!("member {m}: migrated before")),
            "{out}"
        );
    }
    assert_eq!(same_countries_everywhere(three, &db), keys);
}

/// A coordinator whose partitioned table has foreign-table partitions on
/// two other members (postgres_fdw): columns and find see through to their
/// rows, discover runs, and migrate-key refuses before anything runs,
/// naming the foreign partitions and the fleet mode.
#[test]
fn a_coordinator_with_postgres_fdw_partitions() {
    let ports = ports();
    let (coordinator, shards) = (ports[0], &ports[1..3]);
    let db = fleet_db("fdw", &ports[..3], |i| {
        match i {
        0 => String::new(),
        _ => format!(
            "CREATE TABLE events_{i} (id uuid PRIMARY KEY, created_at timestamptz NOT NULL, customer uuid, payload jsonb);
             INSERT INTO events_{i} SELECT md5('e{i}:' || g)::uuid, timestamptz '2024-0{i}-01' + g * interval '1 minute',
               md5('k' || g)::uuid, jsonb_build_object('ref', md5('r{i}:' || g)::uuid) FROM generate_series(1, 200) g;"
        ),
    }
    });
    let mut setup = String::from(
        "CREATE EXTENSION postgres_fdw;
         CREATE TABLE events (id uuid NOT NULL, created_at timestamptz NOT NULL, customer uuid, payload jsonb)
           PARTITION BY RANGE (created_at);
         CREATE TABLE events_0 PARTITION OF events FOR VALUES FROM ('2023-01-01') TO ('2024-01-01');
         INSERT INTO events_0 SELECT md5('e0:' || g)::uuid, timestamptz '2023-06-01' + g * interval '1 minute', md5('k' || g)::uuid, '{}' FROM generate_series(1, 50) g;",
    );
    for (i, port) in shards.iter().enumerate() {
        let n = i + 1;
        setup.push_str(&format!(
            "CREATE SERVER shard_{n} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '{port}', dbname '{db}');
             CREATE USER MAPPING FOR PUBLIC SERVER shard_{n} OPTIONS (user 'uuidforge', password 'uuidforge');
             CREATE FOREIGN TABLE events_f{n} PARTITION OF events FOR VALUES FROM ('2024-0{n}-01') TO ('2024-0{}-01')
               SERVER shard_{n} OPTIONS (table_name 'events_{n}');",
            n + 1
        ));
    }
    sql_at(coordinator, &db, &setup);
    sql_at(coordinator, &db, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO uuidforge; ALTER TABLE events OWNER TO uuidforge; ALTER TABLE events_0 OWNER TO uuidforge; ALTER FOREIGN TABLE events_f1 OWNER TO uuidforge; ALTER FOREIGN TABLE events_f2 OWNER TO uuidforge");
    let dir = scratch("fdw");
    let db_cmd = || {
        let mut c = uuidforge();
        c.env_remove("UUIDFORGE_DB").current_dir(&dir).args([
            "db",
            "--db",
            &url_at(coordinator, &db),
        ]);
        c
    };
    // The partitioned table's columns, sampled through its partitions: the
    // local one's 50 rows and the two foreign ones' 200 each.
    let (out, _) = text(&db_cmd().args(["columns"]).assert().success());
    assert!(out.contains("public.events.id"), "{out}");
    assert!(out.contains("of 450 sampled values"), "{out}");
    // A value on the second shard, found through the coordinator.
    let value = sql_at(shards[1], &db, "SELECT md5('e2:17')::uuid");
    let (out, err) = text(&db_cmd().args(["find", &value, "--json"]).assert().success());
    assert!(
        out.contains("\"column\":\"id\"") && out.contains("events_f2"),
        "{out}\n{err}"
    );
    // A foreign row is named by its partition, never by the remote ctid.
    assert!(!out.contains("ctid"), "{out}");
    // A foreign table of its own is searched too.
    sql_at(
        coordinator,
        &db,
        "CREATE FOREIGN TABLE remote_events (id uuid, payload jsonb) SERVER shard_1 OPTIONS (table_name 'events_1');
         ALTER FOREIGN TABLE remote_events OWNER TO uuidforge",
    );
    let on_first = sql_at(shards[0], &db, "SELECT md5('e1:3')::uuid");
    let (out, err) = text(
        &db_cmd()
            .args(["find", &on_first, "--json"])
            .assert()
            .success(),
    );
    assert!(
        out.contains("remote_events") && out.contains("events_f1"),
        "{out}\n{err}"
    );
    let in_json = sql_at(shards[0], &db, "SELECT md5('r1:5')::uuid");
    let (out, err) = text(&db_cmd().args(["find", &in_json]).assert().success());
    assert!(out.contains("payload"), "{out}\n{err}");
    db_cmd().args(["discover"]).assert().success();
    let refused = db_cmd()
        .args(["migrate-key", "events", "--column", "id", "--no-default"])
        .assert()
        .failure();
    let (_, err) = text(&refused);
    assert!(
        err.contains("events_f1") && err.contains("events_f2"),
        "{err}"
    );
    assert!(err.contains("foreign") && err.contains("--fleet"), "{err}");
}

//! A key migration on a publisher with a real logical replication
//! subscriber (scripts/fleet-setup.sh: cluster 15/fleet_b, `wal_level =
//! logical`, publishes; 15/fleet_c subscribes; ports in
//! UUIDFORGE_TEST_FLEET_PORTS). The application writes all along; the
//! subscriber applies every row up to the change, stops at the first one
//! after (its tables still have the old types), and goes on once the same
//! migration ran there with the change's key file: every row, written
//! before, during and after the change, arrives with the same keys.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn ports() -> Vec<u16> {
    let text = std::env::var("UUIDFORGE_TEST_FLEET_PORTS").unwrap_or_else(|_| {
        panic!("UUIDFORGE_TEST_FLEET_PORTS is not set: run scripts/fleet-setup.sh and export the line it prints")
    });
    text.split(',').map(|p| p.trim().parse().unwrap()).collect()
}

fn url_at(role: &str, port: u16, db: &str) -> String {
    format!("postgres://{role}:uuidforge@127.0.0.1:{port}/{db}")
}

fn admin_at(port: u16, db: &str, sql: &str) -> String {
    common::sql_at_url(&url_at("uuidforge_admin", port, db), sql)
}

const SCHEMA: &str = "
CREATE TABLE accounts (id bigserial PRIMARY KEY, name text NOT NULL);
CREATE TABLE documents (id bigserial PRIMARY KEY,
                        account_id bigint NOT NULL REFERENCES accounts (id),
                        title text NOT NULL);";

const DATA: &str = "
INSERT INTO accounts (name) SELECT 'a' || g FROM generate_series(1, 20) g;
INSERT INTO documents (account_id, title) SELECT 1 + g % 20, 't' || g FROM generate_series(1, 200) g;";

/// Every row of both tables, as text, in key order (the old key columns
/// too, once there).
const ROWS: &str = "SELECT md5(coalesce((SELECT string_agg(to_jsonb(a)::text, ',' ORDER BY a.name) FROM accounts a), '')
                          || coalesce((SELECT string_agg(to_jsonb(d)::text, ',' ORDER BY d.title) FROM documents d), ''))
                    || ' ' || (SELECT count(*) FROM documents)";

/// A database `name` on `port`, owned by `uuidforge`, made by `sql`.
fn database_at(port: u16, name: &str, sql: &str) {
    admin_at(
        port,
        "postgres",
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    );
    admin_at(
        port,
        "postgres",
        &format!("CREATE DATABASE {name} OWNER uuidforge"),
    );
    admin_at(port, name, &format!("SET ROLE uuidforge; {sql}"));
}

/// Waits until `done` holds, at most a minute; what `state` says if not.
fn wait_until(what: &str, mut done: impl FnMut() -> bool, state: impl Fn() -> String) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: not after 60 s ({})",
            state()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The application: a document for account a3 every 20 ms until stopped,
/// in whatever shape the tables have; how many went in.
fn writer(url: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            common::sql_at_url(
                &url,
                &format!("INSERT INTO documents (account_id, title) SELECT id, 'w{n}' FROM accounts WHERE name = 'a3'"),
            );
            n += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        n
    })
}

fn migrate(url: &str, dir: &std::path::Path, key_file: &std::path::Path) -> String {
    migrate_with(
        url,
        dir,
        &["--apply", "--key-file", key_file.to_str().unwrap()],
    )
}

/// `FOR TABLE` owned by the migrating role, and `FOR ALL TABLES` migrated
/// by a superuser (only one may own such a publication): in both, the
/// change's own writes are held back and every row arrives.
#[test]
fn a_subscriber_stops_at_the_change_and_goes_on_after_the_same_migration() {
    let ports = ports();
    let (publisher, subscriber) = (ports[1], ports[2]);
    for (tag, publication, role) in [
        ("table", "CREATE PUBLICATION uf_feed FOR TABLE accounts, documents; ALTER PUBLICATION uf_feed OWNER TO uuidforge", "uuidforge"),
        ("all", "CREATE PUBLICATION uf_feed FOR ALL TABLES", "uuidforge_admin"),
    ] {
        let db = format!("uf_repl_{tag}_{}", std::process::id());
        database_at(publisher, &db, &format!("{SCHEMA}{DATA}"));
        admin_at(publisher, &db, publication);
        database_at(subscriber, &db, SCHEMA);
        admin_at(
            subscriber,
            &db,
            &format!(
                "CREATE SUBSCRIPTION {db} CONNECTION 'host=127.0.0.1 port={publisher} dbname={db} user=uuidforge_admin password=uuidforge' PUBLICATION uf_feed"
            ),
        );
        let same = || admin_at(publisher, &db, ROWS) == admin_at(subscriber, &db, ROWS);
        let state = || format!("publisher {}, subscriber {}", admin_at(publisher, &db, ROWS), admin_at(subscriber, &db, ROWS));
        wait_until("the initial copy", same, state);

        let stop = Arc::new(AtomicBool::new(false));
        let app = writer(url_at("uuidforge", publisher, &db), stop.clone());
        std::thread::sleep(Duration::from_millis(300));
        let dir = common::scratch("replicated", tag);
        let key_file = dir.join("accounts.keys");
        let report = migrate(&url_at(role, publisher, &db), &dir, &key_file);
        assert!(report.contains("held back from it"), "{report}");
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, Ordering::Relaxed);
        let written = app.join().unwrap();
        assert!(written > 10, "{written} documents written");
        // Rows after the change have the new shape: the subscriber stops
        // at the first, having applied every row before it.
        let applied = || admin_at(subscriber, &db, "SELECT count(*) FROM documents WHERE title LIKE 'w%'");
        let before: u64 = applied().parse().unwrap();
        assert!(before < written, "{before} of {written} applied before the subscriber migrated");
        assert_eq!(
            admin_at(subscriber, &db, "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'documents'::regclass AND attname = 'account_id'"),
            "bigint"
        );
        // The same migration there, with the change's key file.
        migrate(&url_at(role, subscriber, &db), &dir, &key_file);
        wait_until("every row on the subscriber", same, state);
        assert_eq!(
            admin_at(subscriber, &db, "SELECT count(*) FROM documents d JOIN accounts a ON a.id = d.account_id WHERE d.title LIKE 'w%' AND a.name = 'a3'"),
            written.to_string()
        );
        // And the next rows stream as ever.
        common::sql_at_url(&url_at("uuidforge", publisher, &db), "INSERT INTO accounts (id, name) VALUES (gen_random_uuid(), 'new')");
        wait_until("a row after", same, state);
        admin_at(subscriber, &db, &format!("DROP SUBSCRIPTION {db}"));
    }
}

/// `migrate-key` with `args` and `--apply` on `url`; its report.
fn migrate_with(url: &str, dir: &std::path::Path, args: &[&str]) -> String {
    let out = common::uuidforge()
        .env_remove("UUIDFORGE_DB")
        .current_dir(dir)
        .args(["db", "--db", url, "migrate-key", "accounts", "--no-default"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// In batches the application writes while the change fills the new
/// columns: a `FOR TABLE` publication publishes each table with its own
/// columns only until the swap (one table had a column list of its own,
/// made again over the new column), the swap's writes are held back, and
/// the subscriber's migration takes the publisher's keys (`--keys-from`:
/// rows written during the batches got theirs from the clock). Every row,
/// before, during and after, arrives with the same keys. A publication of
/// all tables, which takes no column list, is warned of by name.
#[test]
fn a_subscriber_follows_a_migration_in_batches_with_the_publishers_keys() {
    let ports = ports();
    let (publisher, subscriber) = (ports[1], ports[2]);
    let dir = common::scratch("replicated", "batched");

    let all = format!("uf_repl_all_batched_{}", std::process::id());
    database_at(publisher, &all, &format!("{SCHEMA}{DATA}"));
    admin_at(
        publisher,
        &all,
        "CREATE PUBLICATION uf_everything FOR ALL TABLES",
    );
    let plan = migrate_with(
        &url_at("uuidforge", publisher, &all),
        &dir,
        &["--batch-size", "7"],
    );
    assert!(
        plan.contains("publication uf_everything publishes public.accounts")
            && plan.contains("WARNING: in batches the columns the change adds are published"),
        "{plan}"
    );
    admin_at(
        publisher,
        "postgres",
        &format!("DROP DATABASE {all} WITH (FORCE)"),
    );

    let db = format!("uf_repl_batched_{}", std::process::id());
    database_at(publisher, &db, &format!("{SCHEMA}{DATA}"));
    admin_at(
        publisher,
        &db,
        "CREATE PUBLICATION uf_feed FOR TABLE accounts, documents (id, account_id, title); ALTER PUBLICATION uf_feed OWNER TO uuidforge",
    );
    database_at(subscriber, &db, SCHEMA);
    admin_at(
        subscriber,
        &db,
        &format!(
            "CREATE SUBSCRIPTION {db} CONNECTION 'host=127.0.0.1 port={publisher} dbname={db} user=uuidforge_admin password=uuidforge' PUBLICATION uf_feed"
        ),
    );
    let same = || admin_at(publisher, &db, ROWS) == admin_at(subscriber, &db, ROWS);
    let state = || {
        format!(
            "publisher {}, subscriber {}",
            admin_at(publisher, &db, ROWS),
            admin_at(subscriber, &db, ROWS)
        )
    };
    wait_until("the initial copy", same, state);

    let stop = Arc::new(AtomicBool::new(false));
    let app = writer(url_at("uuidforge", publisher, &db), stop.clone());
    std::thread::sleep(Duration::from_millis(300));
    let report = migrate_with(
        &url_at("uuidforge", publisher, &db),
        &dir,
        &["--apply", "--batch-size", "7"],
    );
    assert!(report.contains("--keys-from"), "{report}");
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let written = app.join().unwrap();
    assert!(written > 10, "{written} documents written");
    // The subscriber has every row up to the swap, in its old shape.
    let applied = || {
        admin_at(
            subscriber,
            &db,
            "SELECT count(*) FROM documents WHERE title LIKE 'w%'",
        )
    };
    wait_until(
        "the rows up to the swap",
        || {
            admin_at(
                subscriber,
                &db,
                "SELECT count(*) FROM documents d WHERE title LIKE 'w%'",
            ) == admin_at(
                publisher,
                &db,
                "SELECT count(*) FROM documents WHERE title LIKE 'w%' AND account_id_old IS NOT NULL",
            )
        },
        || format!("{} applied", applied()),
    );
    let before: u64 = applied().parse().unwrap();
    assert!(
        before < written,
        "{before} of {written} applied before the subscriber migrated"
    );
    // Its migration with the publisher's keys, in a read-only session there.
    let report = migrate_with(
        &url_at("uuidforge", subscriber, &db),
        &dir,
        &[
            "--apply",
            "--keys-from",
            &url_at("uuidforge", publisher, &db),
        ],
    );
    assert!(!report.contains("key file"), "{report}");
    wait_until("every row on the subscriber", same, state);
    assert_eq!(
        admin_at(subscriber, &db, "SELECT count(*) FROM documents d JOIN accounts a ON a.id = d.account_id WHERE d.title LIKE 'w%' AND a.name = 'a3'"),
        written.to_string()
    );
    common::sql_at_url(
        &url_at("uuidforge", publisher, &db),
        "INSERT INTO accounts (id, name) VALUES (gen_random_uuid(), 'new')",
    );
    wait_until("a row after", same, state);
    admin_at(subscriber, &db, &format!("DROP SUBSCRIPTION {db}"));
}

//! `uuidforge db` on MariaDB (Debian's server on 127.0.0.1:3307 with the
//! uuidforge functions, scripts/mariadb-setup.sh; UUIDFORGE_TEST_MARIADB):
//! columns, find, related and discover over every storage form, the
//! connection conventions of the clients, and convert-uuid.

mod common;

use common::uuidforge;
use serde_json::Value;
use std::process::Command;

fn server() -> String {
    std::env::var("UUIDFORGE_TEST_MARIADB").unwrap_or_else(|_| {
        panic!("UUIDFORGE_TEST_MARIADB is not set: run scripts/mariadb-setup.sh and export the line it prints")
    })
}

/// Runs `sql` in `db` as the administrator with the `mariadb` client; its
/// output (tab-separated, no headers).
fn admin(db: &str, sql: &str) -> String {
    let out = Command::new("mariadb")
        .args([
            "-h",
            "127.0.0.1",
            "-P",
            "3307",
            "-u",
            "uuidforge_admin",
            "-N",
            "-B",
            db,
            "-e",
            sql,
        ])
        .env("MYSQL_PWD", "uuidforge")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// A fresh database `uf_cli_<tag>_<pid>` made by `sql`; its name.
fn fresh(tag: &str, sql: &str) -> String {
    let name = format!("uf_cli_{tag}_{}", std::process::id());
    admin(
        "mysql",
        &format!("DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}"),
    );
    admin(&name, sql);
    name
}

fn db(args: &[&str], database: &str) -> std::process::Output {
    uuidforge()
        .env_remove("UUIDFORGE_DB")
        .env("HOME", "/nonexistent-uuidforge-home")
        .args(["db", "--db", &format!("{}/{database}", server())])
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Accounts keyed by MariaDB's UUID, orders by RFC-order BINARY(16) with a
/// declared reference, a swapped BINARY(16) column, a JSON document naming
/// the account, a CHAR(36) copy of the account; events whose BINARY(16)
/// order_id references orders without a foreign key.
const SHOP: &str = "
CREATE TABLE accounts (id UUID PRIMARY KEY, name VARCHAR(20) NOT NULL);
CREATE TABLE orders (id BINARY(16) PRIMARY KEY, account_id UUID NOT NULL, legacy_id BINARY(16),
  note LONGTEXT CHECK (JSON_VALID(note)), account_text CHAR(36),
  CONSTRAINT orders_account FOREIGN KEY (account_id) REFERENCES accounts (id));
CREATE TABLE events (id CHAR(36) PRIMARY KEY, order_id BINARY(16) NOT NULL);
INSERT INTO accounts SELECT uuidv7_bin(), CONCAT('a', seq) FROM seq_1_to_20;
INSERT INTO orders SELECT uuidv7_bin(), a.id, uuid_to_swapped_bin(uuidv7()),
  JSON_OBJECT('account', CAST(a.id AS CHAR), 'n', s.seq), CAST(a.id AS CHAR)
  FROM seq_1_to_10 s CROSS JOIN accounts a;
INSERT INTO events SELECT uuidv7(), id FROM orders;";

#[test]
fn columns_find_related_and_discover_over_every_storage_form() {
    let name = fresh("forms", SHOP);
    let columns: Vec<Value> = serde_json::from_str(&ok(db(&["columns", "--json"], &name))).unwrap();
    let column = |c: &str| -> &Value {
        columns
            .iter()
            .find(|v| {
                format!(
                    "{}.{}",
                    v["table"].as_str().unwrap(),
                    v["column"].as_str().unwrap()
                ) == c
            })
            .unwrap_or_else(|| panic!("{c} not in {columns:?}"))
    };
    for (c, form, in_order, index) in [
        ("accounts.id", "uuid", true, Some("PRIMARY")),
        ("orders.id", "binary_rfc", true, Some("PRIMARY")),
        ("orders.account_id", "uuid", true, Some("orders_account")),
        ("orders.legacy_id", "binary_swapped", false, None),
        ("orders.note", "json", false, None),
        ("orders.account_text", "text", true, None),
        ("events.id", "text", true, Some("PRIMARY")),
        ("events.order_id", "binary_rfc", true, None),
    ] {
        let v = column(c);
        assert_eq!(v["form"], form, "{c}");
        assert_eq!(v["time_order"], in_order, "{c}: {v}");
        assert_eq!(
            v["versions"]["7"].as_u64().unwrap_or(0),
            v["uuids"].as_u64().unwrap(),
            "{c}: all v7"
        );
        let indexes: Vec<&str> = v["indexes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap())
            .collect();
        assert_eq!(indexes.first().copied(), index, "{c}");
    }
    assert!(column("orders.legacy_id")["order_note"]
        .as_str()
        .unwrap()
        .contains("swapped"));
    let table = ok(db(&["columns"], &name));
    assert!(
        table.contains("BINARY(16), swapped (UUID_TO_BIN(u, 1))")
            && table.contains("no: swapped order"),
        "{table}"
    );

    // One account, found in every form that holds it.
    let account = admin(
        &name,
        "SELECT CAST(id AS CHAR) FROM accounts WHERE name = 'a3'",
    );
    let out = db(&["find", &account.to_uppercase(), "--json"], &name);
    let hits: Vec<String> = ok(out)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["column"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let mut columns_hit = hits.clone();
    columns_hit.dedup();
    assert_eq!(
        columns_hit,
        [
            format!("{name}.accounts.id"),
            format!("{name}.orders.account_id"),
            format!("{name}.orders.account_text"),
            format!("{name}.orders.note")
        ],
        "{hits:?}"
    );
    assert_eq!(hits.len(), 1 + 10 + 10 + 10);
    let none = db(&["find", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], &name);
    assert_eq!(none.status.code(), Some(1));

    // Related: the declared key, the copies in text and JSON.
    let related: Vec<Value> =
        serde_json::from_str(&ok(db(&["related", "orders.account_id", "--json"], &name))).unwrap();
    let names: Vec<&str> = related
        .iter()
        .map(|r| r["column"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], format!("{name}.accounts.id"), "{related:?}");
    assert!(
        names.contains(&format!("{name}.orders.account_text").as_str()),
        "{names:?}"
    );
    assert!(
        names.contains(&format!("{name}.orders.note").as_str()),
        "{names:?}"
    );

    // Discover: the declared reference, events.order_id proposed with its
    // DDL (which the server takes), the text copy named with the
    // conversion it needs.
    let found: Value = serde_json::from_str(&ok(db(&["discover", "--json"], &name))).unwrap();
    let reference = |from: &str| {
        found["references"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["from"] == format!("{name}.{from}"))
            .unwrap_or_else(|| panic!("{from} not in {found}"))
            .clone()
    };
    assert_eq!(reference("orders.account_id")["declared"], true);
    let events = reference("events.order_id");
    assert_eq!(
        (events["to"].as_str().unwrap(), events["values"].as_u64()),
        (format!("{name}.orders.id").as_str(), Some(200))
    );
    assert!(reference("orders.account_text")["note"]
        .as_str()
        .unwrap()
        .contains("convert one first"));
    let ddl = ok(db(&["discover", "--ddl"], &name));
    assert!(ddl.contains("FOREIGN KEY (`order_id`) REFERENCES"), "{ddl}");
    admin(&name, &ddl);
    assert_eq!(
        admin(&name, "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = 'events'"),
        "1"
    );
    admin("mysql", &format!("DROP DATABASE {name}"));
}

#[test]
fn connections_follow_the_clients_and_never_show_a_password() {
    let name = fresh(
        "connect",
        "CREATE TABLE t (id UUID PRIMARY KEY); INSERT INTO t VALUES (uuidv7_bin());",
    );
    let home = common::scratch("mariadb", "home");
    std::fs::create_dir_all(home.join("conf.d")).unwrap();
    std::fs::write(
        home.join(".my.cnf"),
        format!(
            "[client]\nhost = 127.0.0.1\nport = 3307\nuser = uuidforge\n!includedir {}\n",
            home.join("conf.d").display()
        ),
    )
    .unwrap();
    std::fs::write(
        home.join("conf.d/secret.cnf"),
        "[client]\npassword = uuidforge\n",
    )
    .unwrap();
    let run = |dsn: &str, pwd: Option<&str>| {
        let mut c = uuidforge();
        c.env_remove("UUIDFORGE_DB")
            .env("HOME", &*home)
            .env_remove("MYSQL_PWD");
        if let Some(p) = pwd {
            c.env("MYSQL_PWD", p);
        }
        c.args(["db", "--db", dsn, "columns", "--json"])
            .output()
            .unwrap()
    };
    // Everything from the option files (an included one holds the password).
    let out = ok(run(&format!("mysql:///{name}"), None));
    assert!(out.contains("\"form\": \"uuid\""), "{out}");
    // Without the password file, MYSQL_PWD: a wrong one is refused and shown nowhere.
    std::fs::remove_file(home.join("conf.d/secret.cnf")).unwrap();
    let out = run(&format!("mariadb:///{name}"), Some("Wr0ng-s3cret"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success());
    assert!(
        text.contains("Access denied") && text.contains("mysql://uuidforge@127.0.0.1:3307/"),
        "{text}"
    );
    assert!(!text.contains("Wr0ng-s3cret"), "{text}");
    ok(run(&format!("mariadb:///{name}"), Some("uuidforge")));
    // A password in the URL is not echoed either.
    let out = run(
        &format!("mysql://uuidforge:An0ther-s3cret@127.0.0.1:3307/{name}"),
        None,
    );
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && !text.contains("An0ther-s3cret"),
        "{text}"
    );
    // What runs on PostgreSQL only says so.
    let out = run(&format!("mysql:///{name}"), Some("uuidforge"));
    assert!(out.status.success());
    let mut c = uuidforge();
    let out = c
        .env("HOME", &*home)
        .env("MYSQL_PWD", "uuidforge")
        .args([
            "db",
            "--db",
            &format!("mysql:///{name}"),
            "rename",
            "t.id",
            "key",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("db rename is PostgreSQL's only"));
    admin("mysql", &format!("DROP DATABASE {name}"));
}

/// Every UUID of a column, canonical, sorted: the same before and after a
/// conversion.
fn uuids(name: &str, sql: &str) -> Vec<String> {
    let mut v: Vec<String> = admin(name, sql).lines().map(str::to_lowercase).collect();
    v.sort();
    v
}

#[test]
fn convert_uuid_moves_a_key_and_its_references_to_rfc_binary_and_uuid() {
    let name = fresh(
        "convert",
        "CREATE TABLE parent (id CHAR(36) PRIMARY KEY, name VARCHAR(10) NOT NULL);
         CREATE TABLE child (id INT AUTO_INCREMENT PRIMARY KEY, parent_id CHAR(36) NOT NULL,
           CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE);
         INSERT INTO parent SELECT uuidv7(), CONCAT('p', seq) FROM seq_1_to_50;
         INSERT INTO child (parent_id) SELECT id FROM parent, seq_1_to_3;
         CREATE TABLE swapped (id BINARY(16) PRIMARY KEY);
         INSERT INTO swapped SELECT uuid_to_swapped_bin(uuidv7()) FROM seq_1_to_300;",
    );
    let dir = common::scratch("mariadb", "convert");
    let before = uuids(&name, "SELECT parent_id FROM child");
    let types = || {
        admin(&name, "SELECT GROUP_CONCAT(CONCAT(TABLE_NAME, '.', COLUMN_NAME, ' ', COLUMN_TYPE) ORDER BY TABLE_NAME, COLUMN_NAME) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME IN ('id', 'parent_id') AND TABLE_NAME <> 'swapped'")
    };
    // The plan: every statement, nothing changed.
    let plan = ok(db(
        &["convert-uuid", "parent.id", "--to", "binary16"],
        &name,
    ));
    assert!(
        plan.contains("DROP FOREIGN KEY `child_parent`")
            && plan.contains("ON DELETE CASCADE")
            && plan.contains("nothing was changed"),
        "{plan}"
    );
    assert_eq!(
        types(),
        "child.id int(11),child.parent_id char(36),parent.id char(36)"
    );
    // Applied: both columns BINARY(16), the same UUIDs, the reference with its rule.
    let backup = dir.join("before.sql");
    let out = uuidforge()
        .current_dir(&*dir)
        .args([
            "db",
            "--db",
            &format!("{}/{name}", server()),
            "convert-uuid",
            "parent.id",
            "--to",
            "binary16",
            "--apply",
            "--backup",
        ])
        .arg(&backup)
        .output()
        .unwrap();
    let report = ok(out);
    assert!(
        report.contains(&format!("backup: {}", backup.display())),
        "{report}"
    );
    assert_eq!(
        types(),
        "child.id int(11),child.parent_id binary(16),parent.id binary(16)"
    );
    assert_eq!(
        uuids(&name, "SELECT LOWER(CONCAT_WS('-', HEX(SUBSTR(parent_id,1,4)), HEX(SUBSTR(parent_id,5,2)), HEX(SUBSTR(parent_id,7,2)), HEX(SUBSTR(parent_id,9,2)), HEX(SUBSTR(parent_id,11,6)))) FROM child"),
        before
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(std::fs::read_to_string(&backup)
        .unwrap()
        .contains("INSERT INTO `child`"));
    admin(&name, "DELETE FROM parent WHERE name = 'p1'");
    assert_eq!(
        admin(&name, "SELECT COUNT(*) FROM child"),
        "147",
        "ON DELETE CASCADE kept"
    );
    // The backup is never overwritten.
    let again = db(
        &[
            "convert-uuid",
            "parent.id",
            "--to",
            "uuid",
            "--apply",
            "--backup",
            backup.to_str().unwrap(),
        ],
        &name,
    );
    assert!(
        !again.status.success()
            && String::from_utf8_lossy(&again.stderr).contains("never overwritten")
    );
    assert_eq!(
        types(),
        "child.id int(11),child.parent_id binary(16),parent.id binary(16)"
    );
    // Then to MariaDB's UUID.
    let before = uuids(&name, "SELECT uuid_from_rfc_bin(parent_id) FROM child");
    ok(db(
        &[
            "convert-uuid",
            "parent.id",
            "--to",
            "uuid",
            "--apply",
            "--backup",
            dir.join("second.sql").to_str().unwrap(),
        ],
        &name,
    ));
    assert_eq!(
        types(),
        "child.id int(11),child.parent_id uuid,parent.id uuid"
    );
    assert_eq!(
        uuids(&name, "SELECT CAST(parent_id AS CHAR) FROM child"),
        before
    );
    // Swapped to RFC order: the same UUIDs, now in time order.
    let swapped = uuids(&name, "SELECT uuid_from_swapped_bin(id) FROM swapped");
    ok(db(
        &[
            "convert-uuid",
            "swapped.id",
            "--to",
            "binary16",
            "--apply",
            "--backup",
            dir.join("third.sql").to_str().unwrap(),
        ],
        &name,
    ));
    assert_eq!(
        uuids(&name, "SELECT uuid_from_rfc_bin(id) FROM swapped"),
        swapped
    );
    let in_index_order: Vec<String> = admin(
        &name,
        "SELECT uuid_from_rfc_bin(id) FROM swapped ORDER BY id",
    )
    .lines()
    .map(str::to_string)
    .collect();
    assert_eq!(in_index_order, swapped, "RFC order is time order");
    // A second operator converting in the same schema is refused while
    // the first holds it; nothing changes, no backup is made.
    admin(&name, "CREATE TABLE later (id CHAR(36) PRIMARY KEY); INSERT INTO later SELECT uuidv7() FROM seq_1_to_10;");
    let holder = {
        let name = name.clone();
        std::thread::spawn(move || {
            admin(
                &name,
                &format!("SELECT GET_LOCK('uuidforge convert-uuid {name}', 0), SLEEP(4)"),
            )
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let busy = dir.join("busy.sql");
    let out = db(
        &[
            "convert-uuid",
            "later.id",
            "--to",
            "binary16",
            "--apply",
            "--backup",
            busy.to_str().unwrap(),
        ],
        &name,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("another convert-uuid of schema"),
        "{err}"
    );
    assert!(!busy.exists());
    assert_eq!(admin(&name, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'later'"), "char(36)");
    holder.join().unwrap();
    ok(db(
        &[
            "convert-uuid",
            "later.id",
            "--to",
            "binary16",
            "--apply",
            "--backup",
            busy.to_str().unwrap(),
        ],
        &name,
    ));
    // Refused before anything runs, by name.
    admin(&name, "CREATE TABLE odd (id CHAR(36) PRIMARY KEY); INSERT INTO odd VALUES (uuidv7()), ('nope');
                 CREATE TABLE dflt (id CHAR(36) PRIMARY KEY DEFAULT '00000000-0000-0000-0000-000000000000')");
    for (column, to, says) in [
        (
            "odd.id",
            "binary16",
            "holds 1 value(s) that are not UUIDs in its form, the least 'nope'",
        ),
        ("parent.id", "uuid", "is UUID already"),
        ("dflt.id", "binary16", "has the default"),
        ("parent.id", "text", "expected binary16 or uuid"),
    ] {
        let out = db(
            &[
                "convert-uuid",
                column,
                "--to",
                to,
                "--apply",
                "--backup",
                dir.join("never.sql").to_str().unwrap(),
            ],
            &name,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{column}: {err}"
        );
        assert!(
            !dir.join("never.sql").exists(),
            "{column}: a backup was made"
        );
    }
    assert_eq!(admin(&name, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'odd'"), "char(36)");
    admin("mysql", &format!("DROP DATABASE {name}"));
}

/// 10^5 UUIDv7 from `uuidv7()` by 8 `mariadb` client connections at once
/// into a table of each storage form, read back in index order: all
/// distinct, each connection's strictly increasing, in time order in
/// every form but MySQL's swapped BINARY(16) — and `db columns` says
/// exactly that of each, with the primary key leading.
#[test]
fn eight_writers_keep_time_order_where_the_form_does_and_the_report_says_so() {
    // (table, column type, value inserted, its canonical text, in time order)
    let forms = [
        ("in_uuid", "UUID", "uuidv7_bin()", "CAST(id AS CHAR)", true),
        (
            "in_rfc_binary",
            "BINARY(16)",
            "uuidv7_bin()",
            "uuid_from_rfc_bin(id)",
            true,
        ),
        (
            "in_swapped_binary",
            "BINARY(16)",
            "uuid_to_swapped_bin(uuidv7())",
            "uuid_from_swapped_bin(id)",
            false,
        ),
        ("in_char", "CHAR(36)", "uuidv7()", "id", true),
        ("in_varchar", "VARCHAR(36)", "uuidv7()", "id", true),
    ];
    const WRITERS: u32 = 8;
    const ROWS: u32 = 12_500;
    const PER_STATEMENT: u32 = 1_250;
    let tables: Vec<String> = forms
        .iter()
        .map(|(t, ty, ..)| {
            format!("CREATE TABLE {t} (id {ty} PRIMARY KEY, w INT NOT NULL, n INT NOT NULL);")
        })
        .collect();
    let name = fresh("writers", &tables.join("\n"));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let mut script = String::new();
            for start in (0..ROWS).step_by(PER_STATEMENT as usize) {
                for (table, _, value, ..) in forms {
                    script.push_str(&format!(
                        "INSERT INTO {table} (id, w, n) SELECT {value}, {w}, seq + {start} FROM seq_1_to_{PER_STATEMENT};\n"
                    ));
                }
            }
            let name = name.clone();
            std::thread::spawn(move || admin(&name, &script))
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let report: Vec<Value> = serde_json::from_str(&ok(db(&["columns", "--json"], &name))).unwrap();
    for (table, _, _, canonical, time_ordered) in forms {
        let ids: Vec<uuid::Uuid> = admin(
            &name,
            &format!("SELECT {canonical} FROM {table} ORDER BY id"),
        )
        .lines()
        .map(|l| uuid::Uuid::parse_str(l).unwrap())
        .collect();
        assert_eq!(ids.len(), (WRITERS * ROWS) as usize, "{table}");
        let mut distinct = ids.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), ids.len(), "{table}: values repeat");
        assert!(ids.iter().all(|u| u.get_version_num() == 7), "{table}");
        assert_eq!(
            ids.windows(2).all(|p| p[0] < p[1]),
            time_ordered,
            "{table}: index order is time order"
        );
        for w in 0..WRITERS {
            let mine: Vec<uuid::Uuid> = admin(
                &name,
                &format!("SELECT {canonical} FROM {table} WHERE w = {w} ORDER BY n"),
            )
            .lines()
            .map(|l| uuid::Uuid::parse_str(l).unwrap())
            .collect();
            assert!(
                mine.windows(2).all(|p| p[0] < p[1]),
                "{table}: writer {w}'s values are not increasing"
            );
        }
        let said = report
            .iter()
            .find(|c| c["table"] == table && c["column"] == "id")
            .unwrap_or_else(|| panic!("{table} not in the report"));
        assert_eq!(said["time_order"], time_ordered, "{table}: {said}");
        assert_eq!(said["indexes"][0], "PRIMARY", "{table}");
        assert_eq!(said["versions"]["7"], 1000, "{table}: {said}");
    }
    admin("mysql", &format!("DROP DATABASE {name}"));
}

/// A schema nobody here wrote: five tables of Shopware 6 from its own
/// migrations (tests/fixtures/shopware), keyed as Shopware keys them —
/// random version 4 UUIDs in RFC-order BINARY(16), ids written as 32 hex
/// digits inside JSON. The tools read it as it is, and convert-uuid moves
/// the country key and its reference (part of a composite primary key) to
/// MariaDB's UUID.
#[test]
fn shopwares_own_schema_read_and_converted() {
    let schema = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/shopware/schema.sql"
    ))
    .unwrap();
    let name = fresh("shopware", &schema);
    let hex = || uuid::Uuid::new_v4().simple().to_string();
    let (de, en) = (hex(), hex());
    let (lang_de, lang_en) = (hex(), hex());
    let mut data = format!(
        "INSERT INTO locale VALUES (UNHEX('{de}'), 'de-DE', NOW(3), NULL), (UNHEX('{en}'), 'en-GB', NOW(3), NULL);
         INSERT INTO language VALUES (UNHEX('{lang_en}'), 'English', NULL, UNHEX('{en}'), UNHEX('{en}'), NULL, NOW(3), NULL),
           (UNHEX('{lang_de}'), 'Deutsch', NULL, UNHEX('{de}'), UNHEX('{de}'), NULL, NOW(3), NULL);"
    );
    let countries: Vec<String> = (0..30).map(|_| hex()).collect();
    for (i, c) in countries.iter().enumerate() {
        data.push_str(&format!(
            "INSERT INTO country (id, iso, position, created_at) VALUES (UNHEX('{c}'), 'C{i}', {i}, NOW(3));
             INSERT INTO country_translation (country_id, language_id, name, created_at) VALUES
               (UNHEX('{c}'), UNHEX('{lang_en}'), 'Country {i}', NOW(3)), (UNHEX('{c}'), UNHEX('{lang_de}'), 'Land {i}', NOW(3));"
        ));
    }
    for i in 0..5 {
        data.push_str(&format!(
            "INSERT INTO tax VALUES (UNHEX('{}'), {}, 'Tax {i}', '{{\"countryIds\": [\"{}\", \"{}\"]}}', NOW(3), NULL);",
            hex(),
            7 + i,
            countries[i],
            countries[i + 10]
        ));
    }
    admin(&name, &data);

    let columns: Vec<Value> = serde_json::from_str(&ok(db(&["columns", "--json"], &name))).unwrap();
    let column = |t: &str, c: &str| {
        columns
            .iter()
            .find(|v| v["table"] == t && v["column"] == c)
            .unwrap_or_else(|| panic!("{t}.{c} not in {columns:?}"))
            .clone()
    };
    for (t, c, leading) in [
        ("country", "id", "PRIMARY"),
        ("country_translation", "country_id", "PRIMARY"),
        ("language", "locale_id", "fk.language.locale_id"),
        ("tax", "id", "PRIMARY"),
    ] {
        let v = column(t, c);
        assert_eq!(v["form"], "binary_rfc", "{t}.{c}: {v}");
        assert_eq!(
            (v["time_order"].as_bool(), v["order_note"].as_str()),
            (Some(false), Some("version 4 carries no time")),
            "{t}.{c}"
        );
        assert!(
            v["indexes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i == leading),
            "{t}.{c}: {v}"
        );
    }
    assert_eq!(column("tax", "custom_fields")["form"], "json");

    // A country: its key, its two translations, and the taxes' JSON.
    let country = uuid::Uuid::parse_str(&countries[3]).unwrap().to_string();
    let hits: Vec<String> = ok(db(&["find", &country, "--json"], &name))
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["column"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        hits,
        [
            format!("{name}.country.id"),
            format!("{name}.country_translation.country_id"),
            format!("{name}.country_translation.country_id"),
            format!("{name}.tax.custom_fields")
        ]
    );
    let related: Vec<Value> =
        serde_json::from_str(&ok(db(&["related", "country.id", "--json"], &name))).unwrap();
    assert_eq!(
        related[0]["column"],
        format!("{name}.country_translation.country_id"),
        "{related:?}"
    );
    assert_eq!(related[0]["score"], 1.0);
    // Every reference is declared: nothing to propose.
    let found: Value = serde_json::from_str(&ok(db(&["discover", "--json"], &name))).unwrap();
    assert!(
        found["references"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["declared"] == true),
        "{found}"
    );
    assert_eq!(ok(db(&["discover", "--ddl"], &name)), "");

    // The country key to MariaDB's UUID, with its reference.
    let dir = common::scratch("mariadb", "shopware");
    let backup = dir.join("shopware.sql");
    let report = ok(db(
        &[
            "convert-uuid",
            "country.id",
            "--to",
            "uuid",
            "--apply",
            "--backup",
            backup.to_str().unwrap(),
        ],
        &name,
    ));
    assert!(report.contains("checked: rows and UUIDs of"), "{report}");
    assert_eq!(
        admin(&name, "SELECT GROUP_CONCAT(CONCAT(TABLE_NAME, '.', COLUMN_NAME, ' ', DATA_TYPE) ORDER BY TABLE_NAME) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME IN ('id', 'country_id') AND TABLE_NAME LIKE 'country%'"),
        "country.id uuid,country_translation.country_id uuid"
    );
    assert_eq!(
        admin(
            &name,
            &format!("SELECT COUNT(*) FROM country_translation WHERE country_id = '{country}'")
        ),
        "2"
    );
    assert_eq!(
        admin(&name, "SELECT CONCAT(DELETE_RULE, ' ', UPDATE_RULE) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND CONSTRAINT_NAME = 'fk.country_translation.country_id'"),
        "CASCADE CASCADE"
    );
    admin("mysql", &format!("DROP DATABASE {name}"));
}

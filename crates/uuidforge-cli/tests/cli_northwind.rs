//! Northwind, a sample database nobody here wrote (pthom/northwind_psql,
//! Ms-PL; `tests/fixtures/northwind`, loaded unchanged): every one-column
//! key — smallint, character(5) and varchar — migrated to UUIDv7 with
//! `uuidforge db migrate-key`, one table after another, then checked with
//! SQL of this test's own, not the tool's: every other column identical,
//! each reference on the same parent row, the index sets equal, a view
//! over the keys returning the same rows. Then every constraint is dropped
//! and `db discover` finds the keys again from the data.

mod common;

use common::{admin_sql, fresh_database, url, uuidforge};
use std::collections::BTreeSet;

const NORTHWIND: &str = include_str!("fixtures/northwind/northwind.sql");

/// Northwind's tables with a one-column primary key.
const KEYED: [&str; 11] = [
    "categories",
    "customer_demographics",
    "customers",
    "employees",
    "orders",
    "products",
    "region",
    "shippers",
    "suppliers",
    "territories",
    "us_states",
];

/// An application's view over the keys (ours, not Northwind's): orders
/// with their customer, employee, manager and shipper.
const VIEW: &str = "CREATE VIEW order_people AS
  SELECT o.order_date, c.company_name, e.last_name, m.last_name AS manager, s.company_name AS shipper
    FROM orders o JOIN customers c ON c.customer_id = o.customer_id
    JOIN employees e ON e.employee_id = o.employee_id
    LEFT JOIN employees m ON m.employee_id = e.reports_to
    JOIN shippers s ON s.shipper_id = o.ship_via";

/// `SELECT` giving one text per line: table, then an MD5 of the sorted
/// MD5s of each row's columns other than `skip` (the keys and references).
fn digest_sql(table: &str, columns: &[String]) -> String {
    format!(
        "SELECT md5(coalesce(string_agg(h, '' ORDER BY h), '')) FROM (SELECT md5(ROW({})::text) AS h FROM {table}) d",
        if columns.is_empty() { "1".to_string() } else { columns.join(", ") }
    )
}

/// Per foreign key `child.col → parent.key`: the joined rows, as MD5s of
/// the child's and the parent's other columns, sorted: the same before
/// and after only if each reference is on the same parent row.
fn pairs_sql(fk: &Fk, child_other: &[String], parent_other: &[String]) -> String {
    let cols = |alias: &str, cols: &[String]| {
        if cols.is_empty() {
            "1".to_string()
        } else {
            cols.iter()
                .map(|c| format!("{alias}.{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    format!(
        "SELECT count(*) || ' ' || md5(coalesce(string_agg(h, '' ORDER BY h), '')) FROM (
           SELECT md5(ROW({})::text) || md5(ROW({})::text) AS h
             FROM {} c JOIN {} p ON p.{} = c.{}) d",
        cols("c", child_other),
        cols("p", parent_other),
        fk.child,
        fk.parent,
        fk.key,
        fk.column
    )
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Fk {
    child: String,
    column: String,
    parent: String,
    key: String,
}

fn foreign_keys(db: &str) -> Vec<Fk> {
    admin_sql(
        db,
        "SELECT string_agg(format('%s %s %s %s', c.conrelid::regclass, a.attname, c.confrelid::regclass, k.attname), E'\\n')
           FROM pg_constraint c
           JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
           JOIN pg_attribute k ON k.attrelid = c.confrelid AND k.attnum = c.confkey[1]
          WHERE c.contype = 'f' AND cardinality(c.conkey) = 1",
    )
    .lines()
    .map(|l| {
        let p: Vec<&str> = l.split(' ').collect();
        Fk {
            child: p[0].into(),
            column: p[1].into(),
            parent: p[2].into(),
            key: p[3].into(),
        }
    })
    .collect::<BTreeSet<Fk>>()
    .into_iter()
    .collect()
}

/// Columns of `table` other than `skip`, in order.
fn other_columns(db: &str, table: &str, skip: &BTreeSet<(String, String)>) -> Vec<String> {
    admin_sql(
        db,
        &format!(
            "SELECT string_agg(attname, ' ' ORDER BY attnum) FROM pg_attribute
              WHERE attrelid = '{table}'::regclass AND attnum > 0 AND NOT attisdropped AND attname NOT LIKE '%\\_old'"
        ),
    )
    .split(' ')
    .filter(|c| !c.is_empty() && !skip.contains(&(table.to_string(), c.to_string())))
    .map(str::to_string)
    .collect()
}

/// Everything the checks compare, by name.
fn state(db: &str, fks: &[Fk], skip: &BTreeSet<(String, String)>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let tables: BTreeSet<String> = admin_sql(
        db,
        "SELECT string_agg(relname, ' ') FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace",
    )
    .split(' ')
    .map(str::to_string)
    .collect();
    for t in &tables {
        out.push((
            format!("other columns of {t}"),
            admin_sql(db, &digest_sql(t, &other_columns(db, t, skip))),
        ));
    }
    for fk in fks {
        out.push((
            format!("rows of {}.{} on their {}", fk.child, fk.column, fk.parent),
            admin_sql(
                db,
                &pairs_sql(
                    fk,
                    &other_columns(db, &fk.child, skip),
                    &other_columns(db, &fk.parent, skip),
                ),
            ),
        ));
    }
    // Index definitions name their columns: the same text after, except
    // the unique index on the old values each migration adds.
    out.push((
        "indexes".into(),
        admin_sql(
            db,
            "SELECT string_agg(indexdef, E'\\n' ORDER BY indexname) FROM pg_indexes
              WHERE schemaname = 'public' AND indexdef NOT LIKE '%\\_old%'",
        ),
    ));
    out.push((
        "the view's rows".into(),
        admin_sql(
            db,
            "SELECT count(*) || ' ' || md5(string_agg(v::text, '|' ORDER BY v::text)) FROM order_people v",
        ),
    ));
    out
}

#[test]
fn every_key_of_northwind_migrated_then_discovered_again() {
    let db = fresh_database("northwind", NORTHWIND);
    admin_sql(&db, &format!("SET ROLE uuidforge; {VIEW}"));
    admin_sql(&db, "CREATE EXTENSION uuidforge");
    let fks = foreign_keys(&db);
    assert_eq!(fks.len(), 13, "{fks:?}");
    let mut skip: BTreeSet<(String, String)> = fks
        .iter()
        .map(|f| (f.child.clone(), f.column.clone()))
        .collect();
    let mut keys: BTreeSet<(String, String)> = BTreeSet::new();
    for t in KEYED {
        let key = admin_sql(
            &db,
            &format!("SELECT attname FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] WHERE c.conrelid = '{t}'::regclass AND c.contype = 'p'"),
        );
        keys.insert((t.to_string(), key.clone()));
        skip.insert((t.to_string(), key));
    }
    let before = state(&db, &fks, &skip);
    let dir = common::scratch("northwind", "migrate");
    for table in KEYED {
        let out = uuidforge()
            .env_remove("UUIDFORGE_DB")
            .current_dir(&dir)
            .args(["db", "--db", &url(&db), "migrate-key", table, "--apply"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{table}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let after = state(&db, &fks, &skip);
    for ((what, b), (_, a)) in before.iter().zip(&after) {
        assert_eq!(a, b, "{what}");
    }
    // Every key and reference is a UUIDv7 now, the foreign keys valid.
    let not_v7: Vec<String> = skip
        .iter()
        .map(|(t, c)| {
            format!(
                "{t}.{c}: {}",
                admin_sql(&db, &format!("SELECT count(*) FROM {t} WHERE {c} IS NOT NULL AND (pg_typeof({c}) <> 'uuid'::regtype OR uuid_extract_version({c}::text::uuid) <> 7)"))
            )
        })
        .filter(|s| !s.ends_with(": 0"))
        .collect();
    assert!(not_v7.is_empty(), "{not_v7:?}");
    assert_eq!(foreign_keys(&db), fks, "the same foreign keys, by name");
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated"
        ),
        "0"
    );

    // Discovery: every constraint dropped, the keys found from the data.
    // Keys of empty tables cannot be found from the data.
    let truth_pks: BTreeSet<(String, String)> = keys
        .iter()
        .filter(|(t, _)| admin_sql(&db, &format!("SELECT count(*) > 0 FROM {t}")) == "t")
        .cloned()
        .collect();
    let truth_fks: BTreeSet<(String, String, String, String)> = fks
        .iter()
        .filter(|f| {
            admin_sql(
                &db,
                &format!("SELECT count({}) > 0 FROM {}", f.column, f.child),
            ) == "t"
        })
        .map(|f| {
            (
                f.child.clone(),
                f.column.clone(),
                f.parent.clone(),
                f.key.clone(),
            )
        })
        .collect();
    admin_sql(
        &db,
        "DO $$ DECLARE r record; BEGIN
           FOR r IN SELECT conrelid::regclass AS t, conname FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace LOOP
             EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.t, r.conname); END LOOP;
           FOR r IN SELECT conrelid::regclass AS t, conname FROM pg_constraint WHERE contype IN ('p', 'u') AND connamespace = 'public'::regnamespace LOOP
             EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.t, r.conname); END LOOP; END $$; ANALYZE",
    );
    let out = uuidforge()
        .env_remove("UUIDFORGE_DB")
        .args(["db", "--db", &url(&db), "discover", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let set = |v: &serde_json::Value| {
        (
            v["table"].as_str().unwrap().to_string(),
            v["columns"][0].as_str().unwrap().to_string(),
        )
    };
    let pks: BTreeSet<(String, String)> = report["primary_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(set)
        .collect();
    let found: BTreeSet<(String, String, String, String)> = report["foreign_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let (a, b) = set(&f["from"]);
            let (c, d) = set(&f["to"]);
            (a, b, c, d)
        })
        .collect();
    let ratio = |found: usize, of: usize| found as f64 / of.max(1) as f64;
    let fk_precision = ratio(found.intersection(&truth_fks).count(), found.len());
    let fk_recall = ratio(found.intersection(&truth_fks).count(), truth_fks.len());
    let pk_precision = ratio(pks.intersection(&truth_pks).count(), pks.len());
    let pk_recall = ratio(pks.intersection(&truth_pks).count(), truth_pks.len());
    println!(
        "northwind: FK precision {fk_precision:.3} recall {fk_recall:.3} ({} true); PK precision {pk_precision:.3} recall {pk_recall:.3} ({} true)",
        truth_fks.len(),
        truth_pks.len()
    );
    assert!(
        fk_precision >= 0.95 && fk_recall >= 0.95 && pk_precision >= 0.95 && pk_recall >= 0.95,
        "found {found:#?}\ntruth {truth_fks:#?}\npks {pks:?}\ntruth {truth_pks:?}"
    );
}

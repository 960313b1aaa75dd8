//! The dependency rule of `uuidforge db migrate-key` on the real server:
//! every object PostgreSQL ties to a changed column (`pg_depend` at column
//! level) moves with it or is refused by name before anything runs, and
//! inside the change nothing but the old values' unique index is left on
//! an old column, or it all rolls back.

mod common;

use common::{admin_sql, fresh_database, url, uuidforge};

/// `accounts(id bigserial)` referenced by `documents.account_id`: the
/// shape of an application's tenant key.
const SCHEMA: &str = "
CREATE TABLE accounts (id bigserial PRIMARY KEY, name text NOT NULL);
CREATE TABLE documents (id bigserial PRIMARY KEY,
                        account_id bigint NOT NULL REFERENCES accounts (id),
                        title text NOT NULL);
INSERT INTO accounts (name) SELECT 'a' || g FROM generate_series(1, 20) g;
INSERT INTO documents (account_id, title) SELECT 1 + g % 20, 't' || g FROM generate_series(1, 200) g;
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
";

/// A rule over a reference: a document is never moved to another account.
const RULE: &str = "CREATE RULE keep_account AS ON UPDATE TO documents WHERE new.account_id <> old.account_id DO INSTEAD NOTHING;";

fn migrate(db: &str, dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    uuidforge()
        .env_remove("UUIDFORGE_DB")
        .current_dir(dir)
        .args([
            "db",
            "--db",
            &url(db),
            "migrate-key",
            "accounts",
            "--no-default",
        ])
        .args(extra)
        .output()
        .unwrap()
}

/// The two modes a change runs in: one transaction, and batches.
const MODES: [(&str, &[&str]); 2] = [("one", &[]), ("batched", &["--batch-size", "40"])];

/// A fresh database of [`SCHEMA`] with `setup` run in it as the
/// superuser, migrated with `--apply` and `extra`; it must succeed.
fn applied(tag: &str, extra: &[&str], setup: &str) -> (String, common::Scratch) {
    let db = fresh_database(tag, SCHEMA);
    admin_sql(&db, setup);
    let dir = common::scratch("migrate", tag);
    let mut args = vec!["--apply"];
    args.extend(extra);
    let out = migrate(&db, &dir, &args);
    assert!(
        out.status.success(),
        "{tag} {extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(key_type(&db), "uuid");
    (db, dir)
}

fn key_type(db: &str) -> String {
    admin_sql(
        db,
        "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'documents'::regclass AND attname = 'account_id'",
    )
}

/// Each object tied to a changed column that cannot move, alone: the plan and
/// `--apply` refuse it by name with what it says and the way out, and
/// nothing changes.
#[test]
fn every_object_tied_to_a_changed_column_is_refused_by_name_before_anything_runs() {
    let db = fresh_database("dependents_refused", SCHEMA);
    let dir = common::scratch("migrate", "dependents_refused");
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
             CREATE POLICY tenant ON documents USING (account_id + 1 > 0)",
            "DROP POLICY tenant ON documents",
            &["policy tenant on table documents", "(account_id + 1) > 0", "operator does not exist: uuid + integer", "drop the policy"],
        ),
        (
            "CREATE TRIGGER moved BEFORE UPDATE OF account_id ON documents FOR EACH ROW WHEN (new.account_id + 1 > 0) EXECUTE FUNCTION touch()",
            "DROP TRIGGER moved ON documents",
            &["trigger moved on table documents", "UPDATE OF account_id", "WHEN (((new.account_id + 1) > 0))", "operator does not exist: uuid + integer", "its WHEN comparing the new column"],
        ),
        (
            "ALTER TABLE documents ADD COLUMN label text GENERATED ALWAYS AS ('acct-' || account_id::text) STORED",
            "ALTER TABLE documents DROP COLUMN label",
            &["label text GENERATED ALWAYS AS", "'acct-'", "(--regenerate public.documents.label)"],
        ),
        (
            "CREATE STATISTICS per_account ON (account_id + 1), title FROM documents",
            "DROP STATISTICS per_account",
            &["statistics object per_account", "CREATE STATISTICS", "(account_id + 1) FROM documents"],
        ),
        (
            "CREATE PUBLICATION filtered FOR TABLE documents WHERE (account_id > 0)",
            "DROP PUBLICATION filtered",
            &["publication of table documents in publication filtered", "WHERE ((account_id > 0))", "its row filter"],
        ),
    ];
    refused_one_by_one(
        &db,
        &dir,
        &cases,
        &[&[], &["--apply"], &["--apply", "--batch-size", "50"]],
        "would stay on the old column",
    );
    // With none of them the same migration runs, and afterwards only the
    // old values' unique index depends on an old column.
    let out = migrate(&db, &dir, &["--apply"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(key_type(&db), "uuid");
    // The report names every file it wrote, where it is.
    let report = String::from_utf8_lossy(&out.stdout);
    let dir_name = std::fs::canonicalize(&dir).unwrap();
    for file in std::fs::read_dir(&dir).unwrap() {
        let path = dir_name.join(file.unwrap().file_name());
        assert!(
            report.contains(&path.display().to_string()),
            "{path:?} not named in {report}"
        );
    }
    assert!(
        report.contains(&format!("key file: {}", dir_name.display())),
        "{report}"
    );
    assert_eq!(
        admin_sql(
            &db,
            "SELECT string_agg(pg_describe_object(d.classid, d.objid, d.objsubid), ', ')
               FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
              WHERE d.refclassid = 'pg_class'::regclass AND a.attname IN ('id_old', 'account_id_old')"
        ),
        "index accounts_id_old_key"
    );
}

/// Each case alone — made by its first statement, dropped by its second —
/// refused by the plan and by each run of `runs`, exit 2, the message
/// saying `always` and each of the case's words, and the column unchanged.
fn refused_one_by_one(
    db: &str,
    dir: &std::path::Path,
    cases: &[(&str, &str, &[&str])],
    runs: &[&[&str]],
    always: &str,
) {
    for (make, drop, named) in cases {
        admin_sql(db, &format!("SET ROLE uuidforge; {make}"));
        for extra in runs {
            let out = migrate(db, dir, extra);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{make} {extra:?}: {err}");
            assert!(err.contains(always), "{make}: '{always}' not in {err}");
            for n in named.iter() {
                assert!(err.contains(n), "{make}: '{n}' not in {err}");
            }
            assert_eq!(
                key_type(db),
                "bigint",
                "{make} {extra:?} changed the column"
            );
        }
        admin_sql(db, &format!("SET ROLE uuidforge; {drop}"));
    }
}

/// The check the change runs last, on its own against the server: it
/// passes with only the excepted index (and its partitions' pieces) on the
/// old columns, and fails naming anything else, with SQLSTATE 2BP01.
#[test]
fn the_check_inside_the_change_fails_on_anything_but_the_old_values_index() {
    let db = fresh_database(
        "dependents_guard",
        "CREATE TABLE t (id uuid PRIMARY KEY, id_old bigint, note text);
         CREATE TABLE p (id uuid, id_old bigint, at date) PARTITION BY RANGE (at);
         CREATE TABLE p1 PARTITION OF p FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         CREATE UNIQUE INDEX t_id_old_key ON t (id_old);
         CREATE UNIQUE INDEX p_id_old_key ON p (id_old, at);",
    );
    use uuidforge_change::action::{Transaction, DEPENDENTS_LEFT};
    let guard = |columns: &[(&str, &str)], except: &[&str]| {
        Transaction::NothingDependsOn {
            columns: columns
                .iter()
                .map(|(t, c)| (t.to_string(), c.to_string()))
                .collect(),
            except: except.iter().map(|s| s.to_string()).collect(),
        }
        .statements()
        .concat()
    };
    let t = [("\"public\".\"t\"", "id_old")];
    let p = [("\"public\".\"p\"", "id_old")];
    common::try_admin_sql(&db, &guard(&t, &["\"public\".\"t_id_old_key\""])).unwrap();
    common::try_admin_sql(&db, &guard(&p, &["\"public\".\"p_id_old_key\""])).unwrap();
    let e = common::try_admin_sql(&db, &guard(&t, &[])).unwrap_err();
    assert!(
        e.starts_with(DEPENDENTS_LEFT) && e.contains("index t_id_old_key (on t.id_old)"),
        "{e}"
    );
    let e = common::try_admin_sql(&db, &guard(&p, &["\"public\".\"t_id_old_key\""])).unwrap_err();
    assert!(
        e.contains("index p_id_old_key") && e.contains("index p1_id_old_at_idx"),
        "{e}"
    );
    admin_sql(
        &db,
        "ALTER TABLE t ENABLE ROW LEVEL SECURITY;
         CREATE POLICY own ON t USING (id_old = 1);
         CREATE STATISTICS s ON id_old, note FROM t;",
    );
    let e = common::try_admin_sql(&db, &guard(&t, &["\"public\".\"t_id_old_key\""])).unwrap_err();
    assert!(
        e.contains("policy own on table t (on t.id_old)")
            && e.contains("statistics object s (on t.id_old)")
            && !e.contains("t_id_old_key"),
        "{e}"
    );
}

/// The plan names the time each key will carry: made up from 2000-01-01
/// without `--order-by`, with the table's creation-time column proposed
/// when it has one (`order_date`, as in Northwind; `placed_at DEFAULT
/// now()`), or the row's own.
#[test]
fn the_plan_names_the_time_a_key_carries_and_proposes_a_creation_time_column() {
    let db = fresh_database(
        "key_times",
        "CREATE TABLE orders (order_id serial PRIMARY KEY, shipped date, order_date date NOT NULL);
         INSERT INTO orders (order_date) SELECT date '1996-07-04' + g FROM generate_series(1, 30) g;
         CREATE TABLE notes (id serial PRIMARY KEY, body text);
         INSERT INTO notes (body) VALUES ('a'), ('b');
         CREATE TABLE baskets (id serial PRIMARY KEY, updated_at timestamptz DEFAULT now(),
                               placed_at timestamptz NOT NULL DEFAULT now());
         INSERT INTO baskets DEFAULT VALUES;",
    );
    let dir = common::scratch("migrate", "key_times");
    let plan = |args: &[&str]| {
        let out = uuidforge()
            .env_remove("UUIDFORGE_DB")
            .current_dir(&dir)
            .args(["db", "--db", &url(&db), "migrate-key", "--no-default"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let text = plan(&["orders"]);
    assert!(
        text.contains("key times: made up: from 2000-01-01 on")
            && text.contains("WARNING: public.orders.order_date (date) looks like each row's creation time: give the keys those times (--order-by order_date)"),
        "{text}"
    );
    assert!(!text.contains("shipped) looks like"), "{text}");
    let text = plan(&["orders", "--order-by", "order_date"]);
    assert!(text.contains("key times: each row's order_date"), "{text}");
    assert!(!text.contains("WARNING"), "{text}");
    // A creation time known by its default, not by its name.
    let text = plan(&["baskets"]);
    assert!(
        text.contains("WARNING: public.baskets.placed_at (timestamp with time zone) looks like each row's creation time: give the keys those times (--order-by placed_at)"),
        "{text}"
    );
    let text = plan(&["notes"]);
    assert!(
        text.contains("key times: made up") && !text.contains("WARNING"),
        "{text}"
    );
}

/// Tables in publications (`FOR TABLE`, `FOR ALL TABLES`) migrate in both
/// modes: updates keep a replica identity throughout (without it
/// PostgreSQL refuses the fill: "cannot update table … because it does
/// not have a replica identity and publishes updates"), each table's own
/// identity is back after, and the plan names every publication and what
/// its subscribers must do.
#[test]
fn tables_in_publications_migrate_and_keep_their_replica_identity() {
    for (tag, extra) in [
        ("pub_one", &[][..]),
        ("pub_batched", &["--batch-size", "40"][..]),
    ] {
        let db = fresh_database(tag, SCHEMA);
        admin_sql(
            &db,
            "CREATE UNIQUE INDEX documents_title_key ON documents (title);
             ALTER TABLE documents REPLICA IDENTITY USING INDEX documents_title_key;
             CREATE PUBLICATION feed FOR TABLE accounts, documents;
             CREATE PUBLICATION everything FOR ALL TABLES;",
        );
        let dir = common::scratch("migrate", tag);
        let plan = migrate(&db, &dir, extra);
        let text = String::from_utf8_lossy(&plan.stdout);
        assert!(
            plan.status.success(),
            "{}",
            String::from_utf8_lossy(&plan.stderr)
        );
        for named in [
            "publication everything publishes public.accounts, public.documents",
            "publication feed publishes public.accounts, public.documents",
            // Owned by a superuser: the role cannot hold the change's
            // writes back (cli_migrate_replicated streams through a change
            // that does).
            if extra.is_empty() {
                "only its owner uuidforge_admin may hold them back"
            } else {
                "WARNING: in batches the columns the change adds are published"
            },
        ] {
            assert!(text.contains(named), "{named}: {text}");
        }
        let mut args = vec!["--apply"];
        args.extend(extra);
        let out = migrate(&db, &dir, &args);
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(key_type(&db), "uuid");
        assert_eq!(
            admin_sql(
                &db,
                "SELECT string_agg(c.relname || ' ' || c.relreplident::text || coalesce(' ' || ic.relname, ''), ', ' ORDER BY c.relname)
                   FROM pg_class c LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisreplident
                   LEFT JOIN pg_class ic ON ic.oid = i.indexrelid
                  WHERE c.relname IN ('accounts', 'documents')"
            ),
            "accounts d, documents i documents_title_key",
            "{extra:?}"
        );
        // The application's next update is published with the new key.
        admin_sql(&db, "UPDATE accounts SET name = name || '!' WHERE name = 'a1'; UPDATE documents SET title = title || '!' WHERE title = 't1'");
    }
}

/// Statistics on a changed column, a trigger whose column list names it,
/// a rule and a publication's column list are made again from their definitions
/// over the new column, in both modes: the trigger fires on updates of the
/// new column, in the state it was (`ENABLE ALWAYS`), the statistics cover
/// the new column and the publication publishes it.
#[test]
fn statistics_column_list_triggers_and_publication_column_lists_move_with_the_column() {
    // A rule rewrites the updates batches fill rows with: refused there.
    let db = fresh_database("rule_batched", SCHEMA);
    admin_sql(&db, &format!("SET ROLE uuidforge; {RULE}"));
    let out = migrate(
        &db,
        &common::scratch("migrate", "rule_batched"),
        &["--batch-size", "40"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("rule keep_account on table documents rewrites the updates"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (mode, extra) in MODES {
        let rule = if extra.is_empty() { RULE } else { "" };
        let (db, _dir) = applied(
            &format!("carried_{mode}"),
            extra,
            &format!("SET ROLE uuidforge;
             CREATE TABLE moves (document bigint, at text);
             CREATE FUNCTION record_move() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN INSERT INTO moves VALUES (NEW.id, NEW.account_id::text); RETURN NEW; END $$;
             CREATE TRIGGER \"Moved\" AFTER UPDATE OF account_id ON documents FOR EACH ROW EXECUTE FUNCTION record_move();
             ALTER TABLE documents ENABLE ALWAYS TRIGGER \"Moved\";
             CREATE STATISTICS per_account ON account_id, title FROM documents;
             CREATE PUBLICATION some_columns FOR TABLE documents (id, account_id, title);
             {rule}"),
        );
        if !rule.is_empty() {
            // The rule compares the new columns: moving a document to
            // another account does nothing, as before.
            admin_sql(&db, "UPDATE documents SET account_id = (SELECT id FROM accounts WHERE name = 'a9') WHERE title = 't1'");
            assert_eq!(
                admin_sql(&db, "SELECT a.name FROM documents d JOIN accounts a ON a.id = d.account_id WHERE d.title = 't1'"),
                "a2",
                "{mode}"
            );
            admin_sql(&db, "DROP RULE keep_account ON documents");
        }
        // The publication's column list names the new column (in one
        // transaction the column keeps its place; in batches the new one
        // is the table's last).
        let listed = if mode == "one" {
            "id bigint, account_id uuid, title text"
        } else {
            "id bigint, title text, account_id uuid"
        };
        assert_eq!(
            admin_sql(&db, "SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, NULL), ', ' ORDER BY a.attnum)
                              FROM pg_publication_rel r JOIN pg_attribute a ON a.attrelid = r.prrelid AND a.attnum = ANY (r.prattrs)
                             WHERE r.prpubid = (SELECT oid FROM pg_publication WHERE pubname = 'some_columns')"),
            listed,
            "{mode}"
        );
        assert_eq!(
            admin_sql(&db, "SELECT count(*) FROM moves"),
            "0",
            "the fill fired it"
        );
        assert_eq!(
            admin_sql(&db, "SELECT tgenabled::text || ' ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'Moved'"),
            "A CREATE TRIGGER \"Moved\" AFTER UPDATE OF account_id ON public.documents FOR EACH ROW EXECUTE FUNCTION record_move()"
        );
        assert_eq!(
            admin_sql(&db, "SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, NULL), ', ' ORDER BY a.attnum)
                              FROM pg_statistic_ext s JOIN pg_attribute a ON a.attrelid = s.stxrelid AND a.attnum = ANY (s.stxkeys)
                             WHERE s.stxname = 'per_account'"),
            if mode == "one" {
                "account_id uuid, title text"
            } else {
                "title text, account_id uuid"
            },
            "{mode}"
        );
        admin_sql(&db, "UPDATE documents SET account_id = (SELECT id FROM accounts ORDER BY id DESC LIMIT 1) WHERE id = 1");
        assert_eq!(
            admin_sql(
                &db,
                "SELECT count(*) FROM moves m JOIN accounts a ON a.id::text = m.at"
            ),
            "1",
            "the trigger fires on the new column"
        );
    }
}

/// A row-level security policy that compares a reference with the key
/// itself stays type-correct over the new columns: it is made again over
/// them, in both modes, and the application's role reads and writes
/// through it afterwards (before, it was left on `account_id_old` and
/// `id_old` and refused the role's next row).
#[test]
fn a_policy_comparing_a_reference_with_the_key_moves_with_both() {
    for (mode, extra) in MODES {
        let (db, _dir) = applied(
            &format!("policy_{mode}"),
            extra,
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'uf_app') THEN CREATE ROLE uf_app; END IF; END $$;
             GRANT SELECT, INSERT ON accounts, documents TO uf_app;
             GRANT USAGE ON SEQUENCE documents_id_seq TO uf_app;
             ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
             CREATE POLICY own_accounts ON documents TO uf_app
               USING (account_id IN (SELECT id FROM accounts WHERE name = current_setting('app.account_name')))
               WITH CHECK (account_id IN (SELECT id FROM accounts WHERE name = current_setting('app.account_name')));",
        );
        assert_eq!(
            admin_sql(&db, "SELECT pg_get_expr(polqual, polrelid) FROM pg_policy WHERE polname = 'own_accounts'"),
            "(account_id IN ( SELECT accounts.id\n   FROM accounts\n  WHERE (accounts.name = current_setting('app.account_name'::text))))"
        );
        // The role sees its account's documents and adds one.
        assert_eq!(
            admin_sql(
                &db,
                "SET app.account_name = 'a3'; SET ROLE uf_app;
                 INSERT INTO documents (account_id, title) SELECT id, 'mine' FROM accounts WHERE name = 'a3';
                 SELECT count(*) FROM documents"
            ),
            "11"
        );
    }
}

/// Old keys written as literals: a CHECK singling out one row (a music
/// database's "Various Artists"), a view `WHERE account_id = 1 WITH CHECK
/// OPTION`, a policy hiding one account. Each is made again with the new
/// key of that row, read from the key map, in both modes; the plan says so
/// and prints the statement that does it.
#[test]
fn old_keys_written_in_definitions_become_the_new_keys_of_their_rows() {
    let setup = "ALTER TABLE accounts ADD CONSTRAINT various CHECK (id <> 1 OR name = 'a1');
         CREATE VIEW first_account AS SELECT * FROM documents WHERE account_id = 1 WITH CHECK OPTION;
         ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
         CREATE POLICY hide_second ON documents USING (2 <> account_id);";
    let db = fresh_database("old_keys_plan", SCHEMA);
    admin_sql(&db, &format!("SET ROLE uuidforge; {setup}"));
    let dir = common::scratch("migrate", "old_keys_plan");
    let out = migrate(&db, &dir, &[]);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "constraint various: id compared with the old key 1, made again with the new key of that row",
        "view public.first_account: account_id compared with the old key 1",
        "policy hide_second on table documents: account_id compared with the old key 2",
        "CHECK (((id <> %1$L::uuid) OR (name = ''a1''::text)))', coalesce((SELECT m.new::text FROM uuidforge_keymap m WHERE m.old = '1'), '00000000-0000-0000-0000-000000000000'))",
    ] {
        assert!(plan.contains(line), "'{line}' not in {plan}");
    }
    for (mode, extra) in MODES {
        let (db, _dir) = applied(
            &format!("old_keys_{mode}"),
            extra,
            &format!("SET ROLE uuidforge; {setup}"),
        );
        let new_key = |old: i32| {
            admin_sql(
                &db,
                &format!("SELECT id FROM accounts WHERE id_old = {old}"),
            )
        };
        assert_eq!(
            admin_sql(
                &db,
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'various'"
            ),
            format!(
                "CHECK (((id <> '{}'::uuid) OR (name = 'a1'::text)))",
                new_key(1)
            ),
            "{mode}"
        );
        // The row it singles out is still held to its name; the others are not.
        let renamed = common::try_admin_sql(&db, "UPDATE accounts SET name = 'x' WHERE id_old = 1");
        assert!(renamed.unwrap_err().starts_with("23514"), "{mode}");
        common::try_admin_sql(&db, "UPDATE accounts SET name = 'x' WHERE id_old = 3").unwrap();
        // The view shows the same account's documents and still checks
        // what is written through it.
        assert_eq!(
            admin_sql(&db, "SELECT count(*) FROM first_account"),
            "10",
            "{mode}"
        );
        let elsewhere = common::try_admin_sql(
            &db,
            "INSERT INTO first_account (account_id, title) SELECT id, 'x' FROM accounts WHERE id_old = 2",
        );
        assert!(
            elsewhere.unwrap_err().contains("violates check option"),
            "{mode}"
        );
        assert_eq!(
            admin_sql(&db, "SELECT pg_get_expr(polqual, polrelid) FROM pg_policy WHERE polname = 'hide_second'"),
            format!("('{}'::uuid <> account_id)", new_key(2)),
            "{mode}"
        );
    }
}

/// Old keys in a partial index's `WHERE`, a trigger's `WHEN` and a
/// reference's default become the new keys of their rows: the index in one
/// transaction (in batches it is built before the swap, and refused by
/// name), the trigger and the default in both modes; an old key no row has
/// becomes the nil UUID, so `<> 999` still holds for every row.
#[test]
fn old_keys_in_index_predicates_trigger_whens_and_defaults_become_new_keys() {
    let index =
        "CREATE UNIQUE INDEX one_title_elsewhere ON documents (title) WHERE account_id <> 1;
         CREATE INDEX not_missing ON documents (title) WHERE account_id <> 999;";
    let trigger_and_default = "CREATE FUNCTION flag() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.title := NEW.title || '!'; RETURN NEW; END $$;
         CREATE TRIGGER first_flagged BEFORE INSERT OR UPDATE OF account_id ON documents
           FOR EACH ROW WHEN (new.account_id = 1) EXECUTE FUNCTION flag();
         ALTER TABLE documents ALTER COLUMN account_id SET DEFAULT 1;";
    // The plan says where each old key goes.
    let db = fresh_database("old_keys_more_plan", SCHEMA);
    admin_sql(
        &db,
        &format!("SET ROLE uuidforge; {index} {trigger_and_default}"),
    );
    let dir = common::scratch("migrate", "old_keys_more_plan");
    let out = migrate(&db, &dir, &[]);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "index public.one_title_elsewhere: account_id compared with the old key 1",
        "trigger first_flagged on table documents: account_id compared with the old key 1",
        "the default of public.documents.account_id (1): the old key 1",
    ] {
        assert!(plan.contains(line), "'{line}' not in {plan}");
    }
    // In batches the index is refused by name, nothing changed.
    let out = migrate(&db, &dir, &["--apply", "--batch-size", "40"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("index public.one_title_elsewhere compares a changed column with an old key in its WHERE"), "{err}");
    assert_eq!(key_type(&db), "bigint");
    let checks = |db: &str, mode: &str| {
        let new_key =
            |old: i32| admin_sql(db, &format!("SELECT id FROM accounts WHERE id_old = {old}"));
        // The trigger flags the first account's documents only.
        admin_sql(db, "INSERT INTO documents (account_id, title) SELECT id, 'mine' FROM accounts WHERE id_old = 1");
        admin_sql(db, "INSERT INTO documents (account_id, title) SELECT id, 'yours' FROM accounts WHERE id_old = 2");
        assert_eq!(
            admin_sql(db, "SELECT string_agg(title, ',' ORDER BY title) FROM documents WHERE title LIKE 'mine%' OR title LIKE 'yours%'"),
            "mine!,yours",
            "{mode}"
        );
        assert!(
            admin_sql(
                db,
                "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'first_flagged'"
            )
            .contains(&format!("WHEN ((new.account_id = '{}'::uuid))", new_key(1))),
            "{mode}"
        );
        // A row made with the default belongs to the first account.
        admin_sql(db, "INSERT INTO documents (title) VALUES ('by default')");
        assert_eq!(
            admin_sql(
                db,
                "SELECT account_id FROM documents WHERE title = 'by default!'"
            ),
            new_key(1),
            "{mode}"
        );
    };
    for (mode, extra) in MODES {
        let (db, _dir) = applied(
            &format!("old_keys_more_{mode}"),
            extra,
            &format!("SET ROLE uuidforge; {trigger_and_default}"),
        );
        checks(&db, mode);
    }
    let (db, _dir) = applied(
        "old_keys_more_index",
        &[],
        &format!("SET ROLE uuidforge; {index} {trigger_and_default}"),
    );
    checks(&db, "index");
    assert_eq!(
        admin_sql(&db, "SELECT pg_get_indexdef('one_title_elsewhere'::regclass)"),
        format!(
            "CREATE UNIQUE INDEX one_title_elsewhere ON public.documents USING btree (title) WHERE (account_id <> '{}'::uuid)",
            admin_sql(&db, "SELECT id FROM accounts WHERE id_old = 1")
        )
    );
    assert!(
        admin_sql(&db, "SELECT pg_get_indexdef('not_missing'::regclass)")
            .ends_with("WHERE (account_id <> '00000000-0000-0000-0000-000000000000'::uuid)")
    );
    // Still unique outside the first account, and not inside it.
    common::try_admin_sql(
        &db,
        "INSERT INTO documents (account_id, title) SELECT id, 't5' FROM accounts WHERE id_old = 1",
    )
    .unwrap();
    let twice = common::try_admin_sql(
        &db,
        "INSERT INTO documents (account_id, title) SELECT id, 't5' FROM accounts WHERE id_old = 3",
    );
    assert!(twice.unwrap_err().starts_with("23505"));
}

/// Lists of old keys — a CHECK `NOT IN`, a view `IN … WITH CHECK OPTION`,
/// a policy `NOT IN`, a trigger's `WHEN (old.id = ANY (ARRAY[1, 2]))` (as
/// MusicBrainz guards its special rows) and, in one transaction, a partial
/// index `IN` — are made again with the new keys of those rows, in both
/// modes, and each holds the same rows to the same rule after. What no key
/// map translates (a value computed at run time, an order of old keys) is
/// refused by name before anything runs: the planner's tests show each.
#[test]
fn lists_of_old_keys_become_the_new_keys_of_their_rows() {
    let setup = "ALTER TABLE accounts ADD CONSTRAINT first_two_named CHECK (id NOT IN (1, 2) OR name IN ('a1', 'a2'));
         CREATE VIEW early_documents AS SELECT * FROM documents WHERE account_id IN (3, 4) WITH CHECK OPTION;
         ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
         CREATE POLICY hide_first_two ON documents USING (account_id NOT IN (1, 2));
         CREATE FUNCTION deny() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'a special account'; END $$;
         CREATE TRIGGER special_accounts BEFORE DELETE ON accounts FOR EACH ROW WHEN (old.id = ANY (ARRAY[1, 2])) EXECUTE FUNCTION deny();";
    let index =
        "CREATE UNIQUE INDEX one_title_early ON documents (title) WHERE account_id IN (3, 4);";
    for (mode, extra, more) in [
        ("one", &[][..], index),
        ("batched", &["--batch-size", "40"][..], ""),
    ] {
        let (db, _dir) = applied(
            &format!("old_key_lists_{mode}"),
            extra,
            &format!("SET ROLE uuidforge; {setup} {more}"),
        );
        let new_key = |old: i32| {
            admin_sql(
                &db,
                &format!("SELECT id FROM accounts WHERE id_old = {old}"),
            )
        };
        assert_eq!(
            admin_sql(&db, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'first_two_named'"),
            format!(
                "CHECK (((id <> ALL (ARRAY['{}'::uuid, '{}'::uuid])) OR (name = ANY (ARRAY['a1'::text, 'a2'::text]))))",
                new_key(1),
                new_key(2)
            ),
            "{mode}"
        );
        // The first two accounts are still held to their names, the others not.
        let renamed = common::try_admin_sql(&db, "UPDATE accounts SET name = 'x' WHERE id_old = 2");
        assert!(renamed.unwrap_err().starts_with("23514"), "{mode}");
        common::try_admin_sql(&db, "UPDATE accounts SET name = 'x' WHERE id_old = 5").unwrap();
        // The view shows the same documents and checks what goes through it.
        assert_eq!(
            admin_sql(&db, "SELECT count(*) FROM early_documents"),
            "20",
            "{mode}"
        );
        let elsewhere = common::try_admin_sql(
            &db,
            "INSERT INTO early_documents (account_id, title) SELECT id, 'x' FROM accounts WHERE id_old = 5",
        );
        assert!(
            elsewhere.unwrap_err().contains("violates check option"),
            "{mode}"
        );
        assert_eq!(
            admin_sql(&db, "SELECT pg_get_expr(polqual, polrelid) FROM pg_policy WHERE polname = 'hide_first_two'"),
            format!("(account_id <> ALL (ARRAY['{}'::uuid, '{}'::uuid]))", new_key(1), new_key(2)),
            "{mode}"
        );
        // The guard of the special accounts holds them, and only them.
        let special = common::try_admin_sql(&db, "DELETE FROM accounts WHERE id_old = 1");
        assert!(special.unwrap_err().contains("a special account"), "{mode}");
        let other = common::try_admin_sql(&db, "DELETE FROM accounts WHERE id_old = 7");
        assert!(
            other.unwrap_err().starts_with("23503"),
            "{mode}: the foreign key, not the guard"
        );
        if mode == "one" {
            assert!(
                admin_sql(&db, "SELECT pg_get_indexdef('one_title_early'::regclass)").ends_with(
                    &format!(
                        "WHERE (account_id = ANY (ARRAY['{}'::uuid, '{}'::uuid]))",
                        new_key(3),
                        new_key(4)
                    )
                ),
                "{mode}"
            );
        }
    }
}

/// `--complete`, once the application runs on the new keys: refused while
/// a view or a function body still uses an old column (named, nothing
/// changed); then the old keys, their unique index and every old reference
/// go in one transaction, the tables' rows backed up first (0600, the old
/// keys in it); a second run says there is nothing left to complete.
#[test]
fn complete_drops_the_old_columns_with_a_backup_and_refuses_while_they_are_used() {
    let (db, dir) = applied("complete", &[], "");
    let complete = |extra: &[&str]| {
        uuidforge()
            .env_remove("UUIDFORGE_DB")
            .current_dir(&dir)
            .args([
                "db",
                "--db",
                &url(&db),
                "migrate-key",
                "accounts",
                "--complete",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let old_columns = "SELECT count(*) FROM pg_attribute WHERE attname IN ('id_old', 'account_id_old') AND NOT attisdropped AND attrelid IN ('accounts'::regclass, 'documents'::regclass)";
    for (make, drop, named) in [
        (
            "CREATE VIEW old_ids AS SELECT id, id_old FROM accounts",
            "DROP VIEW old_ids",
            "rule _RETURN on view old_ids",
        ),
        (
            "CREATE FUNCTION by_old(bigint) RETURNS uuid LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT account_id FROM documents WHERE account_id_old = $1 LIMIT 1); END $$",
            "DROP FUNCTION by_old(bigint)",
            "function public.by_old(bigint) (its body mentions account_id_old)",
        ),
    ] {
        admin_sql(&db, &format!("SET ROLE uuidforge; {make}"));
        for extra in [&[][..], &["--apply"][..]] {
            let out = complete(extra);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{make} {extra:?}: {err}");
            assert!(err.contains(named), "'{named}' not in {err}");
            assert!(err.contains("nothing was changed"), "{err}");
            assert_eq!(admin_sql(&db, old_columns), "2");
        }
        admin_sql(&db, &format!("SET ROLE uuidforge; {drop}"));
    }
    let plan = complete(&[]);
    let text = String::from_utf8_lossy(&plan.stdout);
    for line in [
        "drop \"public\".\"accounts\".id_old",
        "drop \"public\".\"documents\".account_id_old",
        "drop public.accounts_id_old_key, the old values' unique index (scanned",
        "the backup (pg_restore) is the only record of the old keys",
        "ALTER TABLE \"public\".\"documents\" DROP COLUMN \"account_id_old\";",
    ] {
        assert!(text.contains(line), "'{line}' not in {text}");
    }
    let out = complete(&["--apply", "--backup", "before-complete.dump"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(admin_sql(&db, old_columns), "0");
    assert_eq!(
        admin_sql(
            &db,
            "SELECT count(*) FROM pg_class WHERE relname = 'accounts_id_old_key'"
        ),
        "0"
    );
    use std::os::unix::fs::PermissionsExt;
    let backup = dir.join("before-complete.dump");
    assert_eq!(
        std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // The old keys are in the backup: the accounts' rows read back with
    // pg_restore have their id_old column.
    let restored = std::process::Command::new("pg_restore")
        .args(["--data-only", "--table", "accounts", "-f", "-"])
        .arg(&backup)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&restored.stdout)
            .contains("COPY public.accounts (id, name, id_old) FROM stdin"),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
    // The application goes on on the new keys.
    admin_sql(
        &db,
        "INSERT INTO documents (account_id, title) SELECT id, 'after' FROM accounts LIMIT 1",
    );
    let again = complete(&[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("has no column id_old"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// A generated column computed from a reference is computed again over the
/// new column when asked (`--regenerate`): the plan says which and how many
/// rows change, and afterwards every row's value is the expression's over
/// the new key. Refused in batches (a rewrite of the table), on a column
/// that is not generated, and while an index depends on it.
#[test]
fn a_generated_column_is_computed_again_over_the_new_column_when_asked() {
    let setup = "ALTER TABLE documents ADD COLUMN label text GENERATED ALWAYS AS ('acct-' || account_id::text) STORED";
    let db = fresh_database("regenerate_refused", SCHEMA);
    admin_sql(&db, &format!("SET ROLE uuidforge; {setup}"));
    let dir = common::scratch("migrate", "regenerate_refused");
    for (extra, expected) in [
        (
            &[
                "--regenerate",
                "documents.label",
                "--apply",
                "--batch-size",
                "50",
            ][..],
            "computed again by rewriting its table",
        ),
        (
            &["--regenerate", "documents.title"][..],
            "documents.title (expected a generated column computed from the key or a reference)",
        ),
    ] {
        let out = migrate(&db, &dir, extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(expected), "{extra:?}: {err}");
        assert_eq!(key_type(&db), "bigint");
    }
    admin_sql(
        &db,
        "SET ROLE uuidforge; CREATE INDEX documents_label ON documents (label)",
    );
    let out = migrate(&db, &dir, &["--regenerate", "documents.label"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("index documents_label depend on it"), "{err}");
    admin_sql(&db, "SET ROLE uuidforge; DROP INDEX documents_label");
    let plan = migrate(&db, &dir, &["--regenerate", "documents.label"]);
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(
        text.contains("generated column label of table documents (label text GENERATED ALWAYS AS (('acct-'::text || (account_id)::text)) STORED): computed again over the new column, its value changes in each of the table's 200 rows"),
        "{text}{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let (db, _dir) = applied(
        "regenerate",
        &["--regenerate", "documents.label"],
        &format!("SET ROLE uuidforge; {setup}"),
    );
    assert_eq!(
        admin_sql(&db, "SELECT count(*) FROM documents WHERE label = 'acct-' || account_id::text AND account_id_old IS NOT NULL"),
        "200"
    );
    admin_sql(
        &db,
        "INSERT INTO documents (account_id, title) SELECT id, 'new' FROM accounts LIMIT 1",
    );
    assert_eq!(
        admin_sql(
            &db,
            "SELECT label = 'acct-' || account_id::text FROM documents WHERE title = 'new'"
        ),
        "t"
    );
}

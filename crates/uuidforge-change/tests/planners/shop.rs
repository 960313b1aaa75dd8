//! The `shop` catalog: every key type, views over views, a self-reference,
//! a partitioned referencing table, a composite key, duplicates to merge.

use crate::case;
use crate::catalogs::{sql_of, summary_of};
use uuidforge_change::action::Data;
use uuidforge_change::ops::{BatchStep, ChangePlan, Check, Run, Step, Stop};
use uuidforge_db::error::ErrorKind;

fn one_transaction(change: &ChangePlan) -> (&[Step], &[Check]) {
    match &change.run {
        Run::OneTransaction { steps, checks, .. } => (steps, checks),
        Run::Batches { .. } => panic!("expected one transaction"),
    }
}

case!(
    rename_related_and_views,
    "shop",
    "rename related and views",
    |plan, c| {
        // The column, the one referencing the same key with the same name, what
        // is named after them and the views showing them.
        let rename = plan.unwrap();
        let sql = sql_of(&rename);
        for expected in [
            r#"ALTER TABLE "public"."orders" RENAME COLUMN "customer_id" TO "client_id";"#,
            r#"ALTER INDEX "public"."orders_customer_id_idx" RENAME TO "orders_client_id_idx";"#,
            r#"ALTER TABLE "public"."orders" RENAME CONSTRAINT "orders_customer_id_fkey" TO "orders_client_id_fkey";"#,
            r#"ALTER VIEW "public"."order_customers" RENAME COLUMN "customer_id" TO "client_id";"#,
            r#"ALTER VIEW "public"."big_orders" RENAME COLUMN "customer_id" TO "client_id";"#,
            r#"ALTER TABLE "public"."events" RENAME COLUMN "customer_id" TO "client_id";"#,
        ] {
            assert!(sql.contains(expected), "rename lacks {expected}:\n{sql}");
        }
        assert!(rename.backup.schema_only);
        let (_, checks) = one_transaction(&rename);
        assert!(matches!(checks, [Check::Zero { statement, .. }] if statement.bindings.len() == 5));
        assert!(sql.contains("-- undo:"), "{sql}");
        // It writes the tables and views it renames in, each locked by oid.
        let touched: Vec<&str> = rename.touches.iter().map(|t| t.name.as_str()).collect();
        assert!(
            touched.contains(&"public.orders") && touched.contains(&"public.big_orders"),
            "{touched:?}"
        );
        assert!(c
            .snapshot
            .relations
            .iter()
            .any(|r| r.oid == rename.touches[0].oid));
    }
);

case!(
    rename_to_a_taken_name,
    "shop",
    "rename to a taken name",
    |plan, _c| {
        assert_eq!(plan.unwrap_err().kind, ErrorKind::Refused);
    }
);

case!(migrate_bigint, "shop", "migrate bigint", |plan, _c| {
    // Every reference (a self-reference, a composite key over a reference,
    // a partitioned table, a key that is also a reference), views dropped
    // dependents first and made again, checked in one transaction.
    let m = plan.unwrap();
    let (steps, checks) = one_transaction(&m);
    // The new keys once the columns for the old values are there (added
    // empty, written by the rewrite).
    let keys = steps
        .iter()
        .position(|s| matches!(s, Step::Data(Data::Keys(k)) if !k.ordered))
        .expect("a keys step");
    assert!(steps[..keys]
        .iter()
        .any(|s| matches!(s, Step::Run { statement, .. } if statement.sql.contains("ADD COLUMN"))));
    let sql = sql_of(&m);
    // The old key in a view's definition takes its row's new key from the
    // map.
    assert!(
        sql.contains("customer_id = %1$L::uuid)', coalesce((SELECT m.new::text FROM uuidforge_keymap m WHERE m.old = '1'), '00000000-0000-0000-0000-000000000000'))"),
        "{sql}"
    );
    for reference in [
        r#""public"."orders" ADD COLUMN "customer_id_old" bigint"#,
        r#"ADD COLUMN "id_old" bigint, ADD COLUMN "parent_id_old" bigint"#,
        r#""public"."Zeilen" ADD COLUMN "Kunde_old" bigint"#,
        r#""public"."events" ADD COLUMN "customer_id_old" bigint"#,
        r#""public"."profiles" ADD COLUMN "customer_id_old" bigint"#,
    ] {
        assert!(sql.contains(reference), "migrate lacks {reference}");
    }
    // Each table written once, by one statement: the key and the
    // self-reference of the key's table together.
    for table in ["customers", "Zeilen", "events", "orders", "profiles"] {
        let rewrites = sql
            .lines()
            .filter(|l| {
                l.starts_with(&format!(r#"ALTER TABLE "public"."{table}" ALTER COLUMN"#))
                    && l.contains(" TYPE ")
            })
            .count();
        assert_eq!(rewrites, 1, "{table} written once: {sql}");
    }
    let key = sql
        .lines()
        .find(|l| l.starts_with(r#"ALTER TABLE "public"."customers" ALTER COLUMN "id" TYPE uuid USING coalesce((pg_temp.uuidforge_keymap_array())[least(greatest("id" - pg_temp.uuidforge_keymap_first() + 1, 0), 2147483647)::int4], (pg_temp.uuidforge_keymap_object() ->> "id"::text)::uuid)"#))
        .unwrap_or_else(|| panic!("no rewrite of customers: {sql}"));
    assert!(key.contains(r#", ALTER COLUMN "id_old" TYPE bigint USING "id", ALTER COLUMN "parent_id" TYPE uuid USING "#), "{key}");
    assert!(
        !sql.lines().any(|l| l.starts_with("UPDATE ")),
        "no table updated in place: {sql}"
    );
    assert!(
        !sql.contains("RENAME COLUMN"),
        "the columns keep their names and places: {sql}"
    );
    let at = |text: &str| sql.find(text).unwrap_or_else(|| panic!("no {text}"));
    assert!(
        at(r#"DROP VIEW "public"."big_orders""#) < at(r#"DROP VIEW "public"."order_customers""#),
        "a view over a view is dropped first"
    );
    assert!(
        at(r#"CREATE VIEW "public"."order_customers""#)
            < at(r#"CREATE VIEW "public"."big_orders""#),
        "and made again after the one it uses"
    );
    assert!(matches!(
        checks,
        [Check::Zero { .. }, Check::Unchanged { what: other, .. }, Check::Unchanged { what: objects, .. }]
            if other == "other columns" && objects == "indexes, constraints and columns"
    ));
    // A rewrite fires no trigger: the application's is left as it is.
    assert!(!sql.contains("DISABLE TRIGGER"), "{sql}");
    // A referencing table's own primary key over the reference and the
    // index over it are made again from their definitions, before the
    // foreign keys.
    let key = at(
        r#"ALTER TABLE "public"."Zeilen" ADD CONSTRAINT "Zeilen_pkey" PRIMARY KEY ("Kunde", n)"#,
    );
    let index =
        at("CREATE INDEX orders_customer_id_idx ON public.orders USING btree (customer_id)");
    let fk = at(r#"ALTER TABLE "public"."orders" ADD CONSTRAINT "orders_customer_id_fkey""#);
    assert!(key < fk && index < fk, "{sql}");
    assert!(m
        .backup
        .relations
        .contains(&r#""public"."customers""#.to_string()));
    assert!(!m.backup.schema_only);
    assert_eq!(m.target, "public.customers");
});

case!(migrate_text, "shop", "migrate text", |plan, _c| {
    let p = plan.unwrap();
    assert!(
        summary_of(&p)[0].contains("(text)"),
        "{}",
        summary_of(&p)[0]
    );
});

case!(migrate_smallint, "shop", "migrate smallint", |plan, _c| {
    let p = plan.unwrap();
    assert!(
        summary_of(&p)[0].contains("(smallint)"),
        "{}",
        summary_of(&p)[0]
    );
});

case!(
    migrate_composite,
    "shop",
    "migrate composite",
    |plan, _c| {
        let composite = plan.unwrap();
        assert!(
            sql_of(&composite).contains(r#"PRIMARY KEY ("id", "at")"#),
            "the partitioned key keeps its partition column"
        );
    }
);

case!(migrate_a_view, "shop", "migrate a view", |plan, _c| {
    let e = plan.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused);
    assert!(e.message.contains("is a view"), "{e}");
});

case!(migrate_nothing, "shop", "migrate nothing", |plan, _c| {
    assert_eq!(plan.unwrap_err().kind, ErrorKind::NotFound);
});

case!(batched_bigint, "shop", "batched bigint", |plan, _c| {
    // In batches: the first step locks writers out, then keys, a backfill
    // per table, indexes built concurrently, checks; the swap marks its
    // transaction, which the last check binds.
    let b = plan.unwrap();
    let Run::Batches {
        batch_size: 1000,
        steps,
        session,
        give_up: None,
    } = &b.run
    else {
        panic!("in batches of 1000: {:?}", b.run);
    };
    // Memory for the joins and the index builds, for the whole session.
    assert!(session.iter().any(|s| s.name == "work_mem"), "{session:?}");
    assert!(matches!(
        steps[0],
        BatchStep::Transaction {
            exclusive: true,
            ..
        }
    ));
    let count = |f: fn(&BatchStep) -> bool| steps.iter().filter(|s| f(s)).count();
    assert_eq!(count(|s| matches!(s, BatchStep::Data(Data::Keys(_)))), 1);
    assert!(
        count(|s| matches!(s, BatchStep::Backfill(_))) >= 5,
        "a backfill per column"
    );
    assert!(count(|s| matches!(s, BatchStep::Concurrently { .. })) >= 2);
    let swap = steps
        .iter()
        .position(|s| matches!(s, BatchStep::Transaction { mark: Some(m), .. } if m == "swap"))
        .expect("the swap marks its transaction");
    assert!(steps[swap + 1..].iter().any(
        |s| matches!(s, BatchStep::Check { binds, sql, .. } if binds == &["swap"] && sql.contains("$1::int8"))
    ));
    // No state table in the plan: the runner keeps the state.
    assert!(!sql_of(&b).contains("uuidforge_changes"));
});

case!(
    batched_with_a_bad_size,
    "shop",
    "batched with a bad size",
    |plan, _c| {
        let e = plan.unwrap_err();
        assert_eq!(
            (&e.kind, e.context.as_str()),
            (&ErrorKind::Invalid, "batch-size")
        );
        assert!(e.message.contains("-1 (expected 1 to 2147483647)"), "{e}");
    }
);

case!(
    merge_keep_survivor,
    "shop",
    "merge keep survivor",
    |plan, _c| {
        // Numbered from the log by a named output, collisions resolved,
        // references moved, checked.
        let merge = plan.unwrap();
        let (steps, _) = one_transaction(&merge);
        let outputs: Vec<&str> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Run {
                    output: Some(o), ..
                } => Some(o.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(outputs, ["merge_id", "collisions"]);
        let sql = sql_of(&merge);
        assert!(
            sql.contains(r#"UPDATE "public"."memberships" SET "person_id" = $1"#),
            "{sql}"
        );
        assert!(
            sql.contains(r#"DELETE FROM "public"."memberships" x"#),
            "collisions deleted"
        );
        assert!(sql.contains("-- $1 = merge_id, $2 = new, $3 = reason, $4 = survivor, $5 = olds"));
    }
);

case!(merge_fail, "shop", "merge fail", |plan, _c| {
    let fail = plan.unwrap();
    let (steps, _) = one_transaction(&fail);
    assert!(steps.iter().any(|s| matches!(
        s,
        Step::Expect { stop: Stop::Refused, context, .. } if context == "on-conflict"
    )));
});

case!(merge_one, "shop", "merge one", |plan, _c| {
    assert_eq!(plan.unwrap_err().kind, ErrorKind::Invalid);
});

/// `db related`'s naming evidence ties a column only to the key it names:
/// `orders.customer_id` names `customers.id`, not the customers' other
/// columns (their email is unique, and still not named by it).
#[test]
fn naming_ties_a_column_to_the_key_it_names() {
    use uuidforge_db::related::{plan, report, Target};
    for c in crate::catalogs::captured("shop") {
        let snapshot = &c.snapshot;
        let target = Target::parse_column(snapshot, "public.orders.customer_id").unwrap();
        let related = report(snapshot, &plan(snapshot, target), None).unwrap();
        let naming: Vec<String> = related
            .iter()
            .flat_map(|r| {
                r.evidence
                    .iter()
                    .filter(|e| e.kind == "naming")
                    .map(move |e| format!("{}.{}: {}", r.table, r.column, e.detail))
            })
            .collect();
        assert!(
            naming
                .iter()
                .all(|n| n.starts_with("customers.id:") || !n.starts_with("customers.")),
            "pg{}: {naming:?}",
            c.major
        );
        let customers: Vec<&str> = related
            .iter()
            .filter(|r| r.table == "customers")
            .map(|r| r.column.as_str())
            .collect();
        assert!(!customers.contains(&"email"), "{customers:?}");
        assert!(!customers.contains(&"created_at"), "{customers:?}");
    }
}

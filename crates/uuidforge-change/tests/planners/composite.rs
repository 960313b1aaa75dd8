//! The `composite` catalog: composite keys and foreign keys; a table
//! referencing a key twice, with a CHECK over both references and a
//! deferrable unique key NULLS NOT DISTINCT; a merge to undo.

use crate::case;
use crate::catalogs::sql_of;
use uuidforge_change::ops::{BatchStep, Run, Step};
use uuidforge_db::error::{ErrorKind, Reason, WayOut};

case!(
    migrate_accounts,
    "composite",
    "migrate accounts",
    |plan, _c| {
        let m = plan.unwrap();
        let sql = sql_of(&m);
        // The reference takes the new key its old value maps to (the key's
        // column is 1:1 with the map alone), and the check compares it with
        // the row its old values named, on both columns; the composite
        // foreign key is made again over both; the partial index over it
        // comes back from its definition.
        let rewrite = sql
            .lines()
            .find(|l| {
                l.starts_with(
                    r#"ALTER TABLE "public"."invoices" ALTER COLUMN "account_id" TYPE uuid USING "#,
                )
            })
            .unwrap_or_else(|| panic!("no rewrite of invoices: {sql}"));
        assert!(rewrite.contains(r#"(pg_temp.uuidforge_keymap_array())[least(greatest("account_id" - pg_temp.uuidforge_keymap_first() + 1, 0), 2147483647)::int4]"#), "{rewrite}");
        assert!(
            rewrite.ends_with(r#", ALTER COLUMN "account_id_old" TYPE bigint USING "account_id";"#),
            "{rewrite}"
        );
        // Rewritten by the lookup that wrote the keys, the reference is
        // proved by its foreign key over both columns, made again validated
        // (the check of foreign keys names it), not by a join per row.
        assert!(
            !sql.contains("references of public.invoices.account_id not rewritten"),
            "{sql}"
        );
        assert!(sql.contains(r#"FOREIGN KEY ("tenant_id", "account_id") REFERENCES "public"."accounts" ("tenant_id", "id")"#), "{sql}");
        let foreign_keys = sql
            .split("'foreign keys not valid'")
            .nth(1)
            .unwrap_or_else(|| panic!("no check of foreign keys: {sql}"));
        assert!(
            foreign_keys.contains("invoices_tenant_id_account_id_fkey"),
            "{sql}"
        );
        assert!(sql.contains("CREATE INDEX invoices_account_idx ON public.invoices USING btree (tenant_id, account_id) WHERE (amount > (0)::numeric)"), "{sql}");
    }
);

case!(
    batched_accounts,
    "composite",
    "batched accounts",
    |plan, _c| {
        let b = plan.unwrap();
        let sql = sql_of(&b);
        assert!(sql.contains(r#"CREATE INDEX CONCURRENTLY "invoices_account_idx_uuidforge" ON public.invoices USING btree (tenant_id, "account_id_uuidforge_new") WHERE (amount > (0)::numeric)"#), "{sql}");
    }
);

case!(
    migrate_accounts_without_a_column,
    "composite",
    "migrate accounts without a column",
    |plan, _c| {
        let e = crate::catalogs::refused(plan, Reason::NoKey, &["(--column COLUMN)"]);
        assert_eq!(e.kind, ErrorKind::Refused);
        assert_eq!(e.ways_out(), [WayOut::NameKeyColumn]);
    }
);

case!(migrate_people, "composite", "migrate people", |plan, _c| {
    // Everything on the references moves with them, from its definition:
    // the CHECK over both, the unique key with NULLS NOT DISTINCT and its
    // deferrability, its comment.
    let m = plan.unwrap();
    let sql = sql_of(&m);
    for expected in [
        r#"ALTER TABLE "public"."links" DROP CONSTRAINT "non_loop""#,
        r#"ALTER TABLE "public"."links" ADD CONSTRAINT "non_loop" CHECK ((entity0 <> entity1))"#,
        r#"ALTER TABLE "public"."links" ADD CONSTRAINT "links_uniq" UNIQUE NULLS NOT DISTINCT (entity0, entity1, kind) DEFERRABLE INITIALLY DEFERRED"#,
        r#"COMMENT ON CONSTRAINT "links_uniq" ON "public"."links" IS 'one link of a kind'"#,
        r#"ALTER TABLE "public"."memberships" ADD CONSTRAINT "memberships_pkey" PRIMARY KEY (person_id, group_name)"#,
    ] {
        assert!(sql.contains(expected), "lacks {expected}:\n{sql}");
    }
});

case!(batched_people, "composite", "batched people", |plan, _c| {
    let b = plan.unwrap();
    let sql = sql_of(&b);
    // The unique key's index built concurrently from its definition over
    // the new columns, then adopted with its deferrability; the CHECK made
    // again NOT VALID in the swap and validated after.
    assert!(sql.contains(r#"CREATE UNIQUE INDEX CONCURRENTLY "links_uniq_uuidforge" ON public.links USING btree ("entity0_uuidforge_new", "entity1_uuidforge_new", kind) NULLS NOT DISTINCT"#), "{sql}");
    assert!(sql.contains(r#"ADD CONSTRAINT "links_uniq" UNIQUE USING INDEX "links_uniq_uuidforge" DEFERRABLE INITIALLY DEFERRED"#), "{sql}");
    assert!(
        sql.contains(r#"ADD CONSTRAINT "non_loop" CHECK ((entity0 <> entity1)) NOT VALID"#),
        "{sql}"
    );
    assert!(
        sql.contains(r#"ALTER TABLE "public"."links" VALIDATE CONSTRAINT "non_loop""#),
        "{sql}"
    );
    let Run::Batches { steps, .. } = &b.run else {
        panic!("in batches")
    };
    assert!(steps.iter().any(|s| matches!(s, BatchStep::Check { sql, .. } if sql.contains("indexes, constraints and columns changed"))));
});

case!(
    merge_bob_and_cy,
    "composite",
    "merge bob and cy",
    |plan, _c| {
        let m = plan.unwrap();
        let sql = sql_of(&m);
        // Both references of the link table move, each its own statement.
        assert!(
            sql.contains(r#"UPDATE "public"."links" SET "entity0" = $1"#),
            "{sql}"
        );
        assert!(
            sql.contains(r#"UPDATE "public"."links" SET "entity1" = $1"#),
            "{sql}"
        );
    }
);

case!(unmerge_ann, "composite", "unmerge ann", |plan, _c| {
    // The merge deleted a link that collided (entity0); the rows moved
    // through each column are counted for that column alone, so nothing
    // written since the merge is found where nothing was.
    let u = plan.unwrap();
    let Run::OneTransaction { steps, .. } = &u.run else {
        panic!("one transaction")
    };
    let guards: Vec<&str> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Expect { statement, .. } if statement.sql.contains("\"links\"") => {
                Some(statement.sql.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(guards.len(), 2, "one per reference of links: {guards:?}");
    assert!(
        guards
            .iter()
            .any(|g| g.contains(r#"WHERE "entity0" = $1"#) && g.contains("count(*) > 1 ")),
        "{guards:?}"
    );
    assert!(
        guards
            .iter()
            .any(|g| g.contains(r#"WHERE "entity1" = $1"#) && g.contains("count(*) > 2 ")),
        "{guards:?}"
    );
});

case!(
    unmerge_a_key_never_merged,
    "composite",
    "unmerge a key never merged",
    |plan, _c| {
        assert_eq!(plan.unwrap_err().kind, ErrorKind::NotFound);
    }
);

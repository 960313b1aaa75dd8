//! The `dependents` catalog: the objects PostgreSQL ties to a changed
//! column, each moved with it from its definition or refused by name
//! before anything runs, in each mode.

use crate::case;
use crate::catalogs::refused;
use crate::catalogs::{sql_of, summary_of};
use uuidforge_db::error::{ErrorKind, Reason};

case!(
    migrate_tenants,
    "dependents",
    "migrate tenants",
    |plan, _c| {
        let sql = sql_of(&plan.unwrap());
        // Statistics, the column-list trigger (in the state it fired in), the
        // publication's column list and both policies: dropped, then made again
        // from their definitions over the new column.
        for expected in [
            r#"DROP STATISTICS "public"."per_tenant""#,
            "CREATE STATISTICS public.per_tenant ON tenant_id, title FROM projects",
            r#"DROP TRIGGER "Moved" ON "public"."projects""#,
            r#"ALTER TABLE "public"."projects" ENABLE ALWAYS TRIGGER "Moved""#,
            r#"ALTER PUBLICATION "some_columns" DROP TABLE "public"."projects""#,
            "ALTER PUBLICATION some_columns ADD TABLE public.projects (id, tenant_id, title)",
            r#"DROP POLICY "own_tenants" ON "public"."projects""#,
            r#"DROP POLICY "known_tenant" ON "public"."projects""#,
        ] {
            assert!(sql.contains(expected), "lacks {expected}:\n{sql}");
        }
    }
);

case!(
    batched_tenants,
    "dependents",
    "batched tenants",
    |plan, _c| {
        let sql = sql_of(&plan.unwrap());
        assert!(sql.contains("CREATE STATISTICS public.per_tenant"), "{sql}");
        assert!(sql.contains(r#"ENABLE ALWAYS TRIGGER "Moved""#), "{sql}");
    }
);

case!(
    migrate_owners,
    "dependents",
    "migrate owners",
    |plan, _c| {
        let sql = sql_of(&plan.unwrap());
        assert!(
            sql.contains(r#"DROP RULE "keep_owner" ON "public"."pets""#),
            "{sql}"
        );
        assert!(sql.contains("CREATE RULE keep_owner AS"), "{sql}");
    }
);

case!(
    batched_owners,
    "dependents",
    "batched owners",
    |plan, _c| {
        refused(
            plan,
            Reason::NotInBatches,
            &["rule keep_owner on table pets rewrites the updates"],
        );
    }
);

case!(
    migrate_makers,
    "dependents",
    "migrate makers",
    |plan, _c| {
        refused(
            plan,
            Reason::StaysOnOldColumn,
            &[
                "generated column label of table parts",
                "would stay on the old column",
                "--regenerate",
            ],
        );
    }
);

case!(
    migrate_makers_regenerating_the_label,
    "dependents",
    "migrate makers regenerating the label",
    |plan, _c| {
        let m = plan.unwrap();
        assert!(summary_of(&m).iter().any(|l| l.contains("computed again over the new column, its value changes in each of the table's 10 rows")), "{:?}", summary_of(&m));
        let sql = sql_of(&m);
        assert!(
            sql.contains(r#"ALTER TABLE "public"."parts" DROP COLUMN "label""#),
            "{sql}"
        );
        assert!(
            sql.contains(
                "ALTER TABLE \"public\".\"parts\" ADD COLUMN label text GENERATED ALWAYS AS"
            ),
            "{sql}"
        );
    }
);

case!(
    batched_makers_regenerating_the_label,
    "dependents",
    "batched makers regenerating the label",
    |plan, _c| {
        refused(
            plan,
            Reason::NotInBatches,
            &["computed again by rewriting its table"],
        );
    }
);

case!(
    regenerate_a_column_that_is_not_generated,
    "dependents",
    "regenerate a column that is not generated",
    |plan, _c| {
        let e = refused(
            plan,
            Reason::InvalidValue,
            &["expected a generated column computed from the key or a reference"],
        );
        assert_eq!(e.kind, ErrorKind::Invalid);
    }
);

case!(
    migrate_gauges_regenerating_an_indexed_label,
    "dependents",
    "migrate gauges regenerating an indexed label",
    |plan, _c| {
        refused(
            plan,
            Reason::StaysOnOldColumn,
            &["index readings_label depend on it"],
        );
    }
);

case!(migrate_clubs, "dependents", "migrate clubs", |plan, _c| {
    refused(
        plan,
        Reason::StaysOnOldColumn,
        &[
            "policy some_club on table members",
            "operator does not exist: uuid + integer",
            "drop the policy",
        ],
    );
});

case!(
    migrate_shelves,
    "dependents",
    "migrate shelves",
    |plan, _c| {
        refused(
            plan,
            Reason::StaysOnOldColumn,
            &[
                "trigger shelved on table books",
                "operator does not exist: uuid + integer",
                "its WHEN comparing the new column",
            ],
        );
    }
);

case!(
    batched_shelves,
    "dependents",
    "batched shelves",
    |plan, _c| {
        refused(
            plan,
            Reason::StaysOnOldColumn,
            &["trigger shelved on table books"],
        );
    }
);

case!(
    migrate_brands,
    "dependents",
    "migrate brands",
    |plan, _c| {
        refused(
            plan,
            Reason::StaysOnOldColumn,
            &[
                "statistics object per_brand",
                "CREATE STATISTICS again after",
            ],
        );
    }
);

case!(
    migrate_regions,
    "dependents",
    "migrate regions",
    |plan, _c| {
        refused(
            plan,
            Reason::StaysOnOldColumn,
            &["in publication some_regions", "its row filter"],
        );
    }
);

case!(migrate_teams, "dependents", "migrate teams", |plan, _c| {
    refused(
        plan,
        Reason::StaysOnOldColumn,
        &["function first_team()", "SQL-standard body (BEGIN ATOMIC)"],
    );
});

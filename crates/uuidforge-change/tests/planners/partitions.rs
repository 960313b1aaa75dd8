//! The `partitions` catalog: foreign keys and indexes declared on
//! partitions, a partitioned index, triggers on a partitioned table and a
//! partition.

use crate::case;
use crate::catalogs::sql_of;
use uuidforge_change::ops::{BatchStep, Run};
use uuidforge_db::error::ErrorKind;

case!(
    migrate_customer,
    "partitions",
    "migrate customer",
    |plan, _c| {
        let m = plan.unwrap();
        let sql = sql_of(&m);
        // Each partition's own foreign key dropped and made again on it; the
        // partitions' own indexes made again from their definitions.
        for expected in [
        r#"ALTER TABLE "public"."payment_p2022_01" DROP CONSTRAINT "payment_p2022_01_customer_id_fkey""#,
        r#"ALTER TABLE "public"."payment_p2022_02" ADD CONSTRAINT "payment_p2022_02_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "public"."customer" ("customer_id") ON UPDATE NO ACTION ON DELETE CASCADE"#,
        r#"ALTER TABLE "public"."rental_2022" ADD CONSTRAINT "rental_2022_customer_fkey""#,
        "CREATE INDEX payment_p2022_02_customer_id_idx ON public.payment_p2022_02 USING btree (customer_id, amount)",
        "CREATE INDEX rental_customer_idx ON public.rental USING btree (customer_id)",
    ] {
        assert!(sql.contains(expected), "lacks {expected}:\n{sql}");
    }
        // A rewrite fires no trigger: the application's is left as it is.
        assert!(!sql.contains("DISABLE TRIGGER"), "{sql}");
        // The column once per partitioned table, whatever declares its keys.
        assert_eq!(
            sql.matches(r#"ALTER TABLE "public"."payment" ADD COLUMN"#)
                .count(),
            1
        );
        // The partitions declaring a reference are locked with the tables.
        let touched: Vec<&str> = m.touches.iter().map(|t| t.name.as_str()).collect();
        assert!(touched.contains(&"public.payment_p2022_01"), "{touched:?}");
    }
);

case!(
    batched_customer,
    "partitions",
    "batched customer",
    |plan, _c| {
        let b = plan.unwrap();
        let Run::Batches { steps, .. } = &b.run else {
            panic!("in batches")
        };
        let sql = sql_of(&b);
        // Backfills partition by partition; the partitions' indexes built
        // concurrently on them over the new column; each partition's foreign
        // key made again NOT VALID and validated after the swap.
        assert!(steps.iter().any(
            |s| matches!(s, BatchStep::Backfill(f) if f.table == r#""public"."payment_p2022_02""#)
        ));
        assert!(sql.contains(r#"CREATE INDEX CONCURRENTLY "payment_p2022_02_customer_id_idx_uuidforge" ON public.payment_p2022_02 USING btree ("customer_id_uuidforge_new", amount)"#), "{sql}");
        assert!(sql.contains(r#"ALTER TABLE "public"."payment_p2022_01" VALIDATE CONSTRAINT "payment_p2022_01_customer_id_fkey""#));
        assert!(sql.contains(r#"ALTER INDEX "public"."payment_p2022_02_customer_id_idx_uuidforge" RENAME TO "payment_p2022_02_customer_id_idx""#));
    }
);

case!(
    rename_the_reference,
    "partitions",
    "rename the reference",
    |plan, _c| {
        let r = plan.unwrap();
        let sql = sql_of(&r);
        // A reference of the same key declared on partitions only is renamed
        // on its partitioned table (its partitions follow), and what is named
        // after it on the partitions too.
        for expected in [
            r#"ALTER TABLE "public"."rental" RENAME COLUMN "customer_id" TO "client_id""#,
            r#"ALTER TABLE "public"."payment" RENAME COLUMN "customer_id" TO "client_id""#,
            r#"ALTER TABLE "public"."payment_p2022_01" RENAME CONSTRAINT "payment_p2022_01_customer_id_fkey" TO "payment_p2022_01_client_id_fkey""#,
            r#"ALTER INDEX "public"."payment_p2022_02_customer_id_idx" RENAME TO "payment_p2022_02_client_id_idx""#,
        ] {
            assert!(sql.contains(expected), "lacks {expected}:\n{sql}");
        }
    }
);

case!(
    migrate_a_partition,
    "partitions",
    "migrate a partition",
    |plan, _c| {
        let e = plan.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Refused);
        assert!(
            e.message.contains("a partition is migrated with its table"),
            "{e}"
        );
    }
);

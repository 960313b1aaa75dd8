-- plan: 6 statement(s), one transaction
--   column public.orders: customer_id → client_id (target)
--   column public.referrals: customer_id → client_id (both reference public.customers.id (orders_customer_id_fkey, referrals_customer_id_fkey))
--   constraint public.orders: orders_customer_id_fkey → orders_client_id_fkey (named after a renamed column)
--   constraint public.referrals: referrals_customer_id_fkey → referrals_client_id_fkey (named after a renamed column)
--   index public.orders: orders_customer_id_idx → orders_client_id_idx (named after a renamed column)
--   view column public.order_customers: customer_id → client_id (shows a renamed column)
--   kept public.customers.id: public.orders.customer_id → public.customers.id (orders_customer_id_fkey); its name does not contain 'customer_id'
--   kept public.Zeilen.Kunde: both reference public.customers.id (orders_customer_id_fkey, Zeilen_Kunde_fkey); its name does not contain 'customer_id'
--   kept public.customers.parent_id: both reference public.customers.id (orders_customer_id_fkey, customers_parent_id_fkey); its name does not contain 'customer_id'
--   kept public.referrals.referred_by: both reference public.customers.id (orders_customer_id_fkey, referrals_referred_by_fkey); its name does not contain 'customer_id'
BEGIN;
ALTER TABLE "public"."orders" RENAME COLUMN "customer_id" TO "client_id";
ALTER TABLE "public"."referrals" RENAME COLUMN "customer_id" TO "client_id";
ALTER TABLE "public"."orders" RENAME CONSTRAINT "orders_customer_id_fkey" TO "orders_client_id_fkey";
ALTER TABLE "public"."referrals" RENAME CONSTRAINT "referrals_customer_id_fkey" TO "referrals_client_id_fkey";
ALTER INDEX "public"."orders_customer_id_idx" RENAME TO "orders_client_id_idx";
ALTER VIEW "public"."order_customers" RENAME COLUMN "customer_id" TO "client_id";
-- verify (every count 0, else rollback):
SELECT coalesce(jsonb_object_agg(r.label, CASE WHEN (CASE WHEN r.kind IN ('column', 'view column') THEN EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass(r.tbl) AND attname = r.too AND NOT attisdropped) WHEN r.kind = 'constraint' THEN EXISTS (SELECT FROM pg_constraint WHERE conrelid = to_regclass(r.tbl) AND conname = r.too) ELSE EXISTS (SELECT FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass(r.tbl) AND c.relname = r.too) END) AND NOT (CASE WHEN r.kind IN ('column', 'view column') THEN EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass(r.tbl) AND attname = r.frm AND NOT attisdropped) WHEN r.kind = 'constraint' THEN EXISTS (SELECT FROM pg_constraint WHERE conrelid = to_regclass(r.tbl) AND conname = r.frm) ELSE EXISTS (SELECT FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass(r.tbl) AND c.relname = r.frm) END) THEN 0 ELSE 1 END), '{}')::text FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS r(kind, tbl, frm, too, label);  -- $1 = kinds, $2 = tables, $3 = old names, $4 = new names, $5 = labels
COMMIT;

-- undo:
BEGIN;
ALTER VIEW "public"."order_customers" RENAME COLUMN "client_id" TO "customer_id";
ALTER INDEX "public"."orders_client_id_idx" RENAME TO "orders_customer_id_idx";
ALTER TABLE "public"."referrals" RENAME CONSTRAINT "referrals_client_id_fkey" TO "referrals_customer_id_fkey";
ALTER TABLE "public"."orders" RENAME CONSTRAINT "orders_client_id_fkey" TO "orders_customer_id_fkey";
ALTER TABLE "public"."referrals" RENAME COLUMN "client_id" TO "customer_id";
ALTER TABLE "public"."orders" RENAME COLUMN "client_id" TO "customer_id";
COMMIT;

-- nothing was changed: run again with --apply

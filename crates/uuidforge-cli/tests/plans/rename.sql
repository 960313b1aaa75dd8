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
-- verify: the 6 renamed object(s) go by their new names in the catalog
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

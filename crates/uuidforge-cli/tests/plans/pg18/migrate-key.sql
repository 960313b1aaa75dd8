-- plan: "public"."customers" key id (bigint) → uuid (UUIDv7, old key order kept), old values kept in id_old
--   key times: made up: from 2000-01-01 on, one millisecond per row in the old key order, not when the rows were made (bounds by time mean nothing for them) — WARNING: public.customers.created_at (timestamp with time zone) looks like each row's creation time: give the keys those times (--order-by created_at)
--   referenced by "public"."Zeilen".Kunde (Zeilen_Kunde_fkey)
--   referenced by "public"."customers".parent_id (customers_parent_id_fkey)
--   referenced by "public"."orders".customer_id (orders_customer_id_fkey)
--   referenced by "public"."referrals".customer_id (referrals_customer_id_fkey)
--   referenced by "public"."referrals".referred_by (referrals_referred_by_fkey)
--   moved to the new columns from their definitions: constraint Zeilen_pkey, index orders_customer_id_idx
--   new default: public.uuidv7() (the uuidforge extension; ordered per session: the server does not preload it (shared_preload_libraries))
BEGIN;
LOCK TABLE "public"."Zeilen", "public"."orders", "public"."referrals", "public"."customers" IN ACCESS EXCLUSIVE MODE;
CREATE TEMP TABLE uuidforge_keymap (old text PRIMARY KEY, new uuid NOT NULL UNIQUE) ON COMMIT DROP;
ALTER TABLE "public"."customers" ADD COLUMN "id_uuidforge_new" uuid, ADD COLUMN "parent_id_uuidforge_new" uuid;
ALTER TABLE "public"."Zeilen" ADD COLUMN "Kunde_uuidforge_new" uuid;
ALTER TABLE "public"."orders" ADD COLUMN "customer_id_uuidforge_new" uuid;
ALTER TABLE "public"."referrals" ADD COLUMN "customer_id_uuidforge_new" uuid, ADD COLUMN "referred_by_uuidforge_new" uuid;
-- new keys computed by uuidforge from: SELECT x."id"::text AS old_key, NULL::int8 AS unix_ms FROM "public"."customers" x WHERE x."id_uuidforge_new" IS NULL ORDER BY x."id";
-- COPY uuidforge_keymap (old, new): one row per key
SET LOCAL work_mem = '256MB';
SET LOCAL maintenance_work_mem = '512MB';
SET CONSTRAINTS ALL IMMEDIATE;
DROP VIEW "public"."order_customers";
ALTER TABLE "public"."Zeilen" DROP CONSTRAINT "Zeilen_Kunde_fkey";
ALTER TABLE "public"."customers" DROP CONSTRAINT "customers_parent_id_fkey";
ALTER TABLE "public"."orders" DROP CONSTRAINT "orders_customer_id_fkey";
ALTER TABLE "public"."referrals" DROP CONSTRAINT "referrals_customer_id_fkey";
ALTER TABLE "public"."referrals" DROP CONSTRAINT "referrals_referred_by_fkey";
ALTER TABLE "public"."Zeilen" DROP CONSTRAINT "Zeilen_pkey";
DROP INDEX "public"."orders_customer_id_idx";
ALTER TABLE "public"."customers" DROP CONSTRAINT "customers_pkey";
UPDATE "public"."customers" AS x SET "id_uuidforge_new" = m.new FROM uuidforge_keymap m WHERE x."id_uuidforge_new" IS NULL AND m.old = x."id"::text;
UPDATE "public"."Zeilen" AS x SET "Kunde_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = x."Kunde" AND x."Kunde_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new";
UPDATE "public"."customers" AS x SET "parent_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = x."parent_id" AND x."parent_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new";
UPDATE "public"."orders" AS x SET "customer_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new";
UPDATE "public"."referrals" AS x SET "customer_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new";
UPDATE "public"."referrals" AS x SET "referred_by_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = x."referred_by" AND x."referred_by_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new";
ALTER TABLE "public"."customers" ALTER COLUMN "id" DROP IDENTITY IF EXISTS;
ALTER TABLE "public"."customers" ALTER COLUMN "id" DROP DEFAULT;
DO $uuidforge$ DECLARE s text := pg_get_serial_sequence('"public"."customers"', 'id'); BEGIN IF s IS NOT NULL THEN EXECUTE 'DROP SEQUENCE ' || s; END IF; END $uuidforge$;
ALTER TABLE "public"."customers" RENAME COLUMN "id" TO "id_old";
ALTER TABLE "public"."customers" ALTER COLUMN "id_old" DROP NOT NULL;
ALTER TABLE "public"."customers" RENAME COLUMN "id_uuidforge_new" TO "id";
ALTER TABLE "public"."customers" ALTER COLUMN "id" SET NOT NULL;
ALTER TABLE "public"."customers" ADD CONSTRAINT "customers_pkey" PRIMARY KEY ("id");
CREATE UNIQUE INDEX "customers_id_old_key" ON "public"."customers" ("id_old");
ALTER TABLE "public"."customers" ALTER COLUMN "id" SET DEFAULT "public".uuidv7();
ALTER TABLE "public"."Zeilen" RENAME COLUMN "Kunde" TO "Kunde_old";
ALTER TABLE "public"."Zeilen" RENAME COLUMN "Kunde_uuidforge_new" TO "Kunde";
ALTER TABLE "public"."Zeilen" ALTER COLUMN "Kunde_old" DROP NOT NULL;
ALTER TABLE "public"."Zeilen" ALTER COLUMN "Kunde" SET NOT NULL;
ALTER TABLE "public"."customers" RENAME COLUMN "parent_id" TO "parent_id_old";
ALTER TABLE "public"."customers" RENAME COLUMN "parent_id_uuidforge_new" TO "parent_id";
ALTER TABLE "public"."orders" RENAME COLUMN "customer_id" TO "customer_id_old";
ALTER TABLE "public"."orders" RENAME COLUMN "customer_id_uuidforge_new" TO "customer_id";
ALTER TABLE "public"."orders" ALTER COLUMN "customer_id_old" DROP NOT NULL;
ALTER TABLE "public"."orders" ALTER COLUMN "customer_id" SET NOT NULL;
ALTER TABLE "public"."referrals" RENAME COLUMN "customer_id" TO "customer_id_old";
ALTER TABLE "public"."referrals" RENAME COLUMN "customer_id_uuidforge_new" TO "customer_id";
ALTER TABLE "public"."referrals" RENAME COLUMN "referred_by" TO "referred_by_old";
ALTER TABLE "public"."referrals" RENAME COLUMN "referred_by_uuidforge_new" TO "referred_by";
ALTER TABLE "public"."Zeilen" ADD CONSTRAINT "Zeilen_pkey" PRIMARY KEY ("Kunde", n);
CREATE INDEX orders_customer_id_idx ON public.orders USING btree (customer_id);
ALTER TABLE "public"."Zeilen" ADD CONSTRAINT "Zeilen_Kunde_fkey" FOREIGN KEY ("Kunde") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION;
ALTER TABLE "public"."customers" ADD CONSTRAINT "customers_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION;
ALTER TABLE "public"."orders" ADD CONSTRAINT "orders_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE CASCADE;
ALTER TABLE "public"."referrals" ADD CONSTRAINT "referrals_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE "public"."referrals" ADD CONSTRAINT "referrals_referred_by_fkey" FOREIGN KEY ("referred_by") REFERENCES "public"."customers" ("id") ON UPDATE RESTRICT ON DELETE SET NULL;
DO $uuidforge$ DECLARE n name; BEGIN SELECT conname INTO n FROM pg_constraint WHERE conrelid = '"public"."customers"'::regclass AND contype = 'n' AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = '"public"."customers"'::regclass AND attname = 'id')]; IF n IS NOT NULL AND n <> 'customers_id_not_null' THEN EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', '"public"."customers"', n, 'customers_id_not_null'); END IF; END $uuidforge$;
DO $uuidforge$ DECLARE n name; BEGIN SELECT conname INTO n FROM pg_constraint WHERE conrelid = '"public"."orders"'::regclass AND contype = 'n' AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = '"public"."orders"'::regclass AND attname = 'customer_id')]; IF n IS NOT NULL AND n <> 'orders_customer_id_not_null' THEN EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', '"public"."orders"', n, 'orders_customer_id_not_null'); END IF; END $uuidforge$;
DO $uuidforge$ DECLARE n name; BEGIN SELECT conname INTO n FROM pg_constraint WHERE conrelid = '"public"."Zeilen"'::regclass AND contype = 'n' AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = '"public"."Zeilen"'::regclass AND attname = 'Kunde')]; IF n IS NOT NULL AND n <> 'Zeilen_Kunde_not_null' THEN EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', '"public"."Zeilen"', n, 'Zeilen_Kunde_not_null'); END IF; END $uuidforge$;
CREATE VIEW "public"."order_customers" AS SELECT id,
    customer_id
   FROM orders o;
DO $uuidforge$ DECLARE found text; BEGIN SELECT string_agg(format('%s (on %s.%I)', pg_describe_object(d.classid, d.objid, d.objsubid), a.attrelid::regclass, a.attname), '; ' ORDER BY 1) INTO found FROM (VALUES ('"public"."customers"', 'id_old'), ('"public"."Zeilen"', 'Kunde_old'), ('"public"."customers"', 'parent_id_old'), ('"public"."orders"', 'customer_id_old'), ('"public"."referrals"', 'customer_id_old'), ('"public"."referrals"', 'referred_by_old')) w(rel, col) CROSS JOIN LATERAL (SELECT w.rel::regclass AS relid UNION SELECT p.relid FROM pg_partition_tree(w.rel::regclass) p) t JOIN pg_attribute a ON a.attrelid = t.relid AND a.attname = w.col AND NOT a.attisdropped JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum  WHERE NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT to_regclass(e.name) FROM unnest(ARRAY['"public"."customers_id_old_key"']::text[]) e(name) UNION ALL SELECT p.relid FROM unnest(ARRAY['"public"."customers_id_old_key"']::text[]) e(name) CROSS JOIN LATERAL pg_partition_tree(to_regclass(e.name)) p)); IF found IS NOT NULL THEN RAISE EXCEPTION 'uuidforge: still on the old columns after the change: %', found USING ERRCODE = '2BP01', HINT = 'nothing but the old values'' unique index may stay on them: every dependent moves to the new column or the change is refused before it runs; this one was not foreseen, so nothing was changed'; END IF; END $uuidforge$;
-- verify (every count 0, else rollback):
SELECT (jsonb_build_object('rows without a new key', (SELECT count(*) FROM "public"."customers" WHERE "id" IS NULL), 'new keys not 1:1 with old keys', (SELECT count(*) - count(DISTINCT "id") + count("id_old") - count(DISTINCT "id_old") FROM "public"."customers"), 'rows without their old key', (SELECT count(*) FROM "public"."customers" WHERE "id_old" IS NULL), 'new keys not from the map', (SELECT count(*) FROM "public"."customers" x LEFT JOIN uuidforge_keymap m ON m.old = x."id_old"::text WHERE m.new IS DISTINCT FROM x."id"), 'rows out of order', (SELECT count(*) FROM (SELECT x."id" < lag(x."id") OVER (ORDER BY x."id_old") AS inverted FROM "public"."customers" x) o WHERE inverted), 'references of public.Zeilen.Kunde not rewritten', (SELECT count(*) FROM "public"."Zeilen" x LEFT JOIN "public"."customers" p ON p."id_old" = x."Kunde_old" WHERE p."id" IS DISTINCT FROM x."Kunde"), 'references of public.Zeilen.Kunde naming no row', (SELECT count(*) FROM "public"."Zeilen" x WHERE x."Kunde" IS NOT NULL AND NOT EXISTS (SELECT FROM "public"."customers" p WHERE p."id" = x."Kunde")), 'references of public.customers.parent_id not rewritten', (SELECT count(*) FROM "public"."customers" x LEFT JOIN "public"."customers" p ON p."id_old" = x."parent_id_old" WHERE p."id" IS DISTINCT FROM x."parent_id"), 'references of public.customers.parent_id naming no row', (SELECT count(*) FROM "public"."customers" x WHERE x."parent_id" IS NOT NULL AND NOT EXISTS (SELECT FROM "public"."customers" p WHERE p."id" = x."parent_id")), 'references of public.orders.customer_id not rewritten', (SELECT count(*) FROM "public"."orders" x LEFT JOIN "public"."customers" p ON p."id_old" = x."customer_id_old" WHERE p."id" IS DISTINCT FROM x."customer_id"), 'references of public.orders.customer_id naming no row', (SELECT count(*) FROM "public"."orders" x WHERE x."customer_id" IS NOT NULL AND NOT EXISTS (SELECT FROM "public"."customers" p WHERE p."id" = x."customer_id")), 'references of public.referrals.customer_id not rewritten', (SELECT count(*) FROM "public"."referrals" x LEFT JOIN "public"."customers" p ON p."id_old" = x."customer_id_old" WHERE p."id" IS DISTINCT FROM x."customer_id"), 'references of public.referrals.customer_id naming no row', (SELECT count(*) FROM "public"."referrals" x WHERE x."customer_id" IS NOT NULL AND NOT EXISTS (SELECT FROM "public"."customers" p WHERE p."id" = x."customer_id")), 'references of public.referrals.referred_by not rewritten', (SELECT count(*) FROM "public"."referrals" x LEFT JOIN "public"."customers" p ON p."id_old" = x."referred_by_old" WHERE p."id" IS DISTINCT FROM x."referred_by"), 'references of public.referrals.referred_by naming no row', (SELECT count(*) FROM "public"."referrals" x WHERE x."referred_by" IS NOT NULL AND NOT EXISTS (SELECT FROM "public"."customers" p WHERE p."id" = x."referred_by")), 'foreign keys not valid', (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conname = ANY (ARRAY['Zeilen_Kunde_fkey', 'customers_parent_id_fkey', 'orders_customer_id_fkey', 'referrals_customer_id_fkey', 'referrals_referred_by_fkey']) AND conrelid::regclass::text = ANY (ARRAY['"public"."Zeilen"', '"public"."customers"', '"public"."orders"', '"public"."referrals"', '"public"."referrals"']::text[]))))::text;
-- verify: row counts the same before and after:
SELECT (jsonb_build_object('"public"."customers"', (SELECT count(*) FROM "public"."customers"), '"public"."Zeilen"', (SELECT count(*) FROM "public"."Zeilen"), '"public"."orders"', (SELECT count(*) FROM "public"."orders"), '"public"."referrals"', (SELECT count(*) FROM "public"."referrals")))::text;
-- verify: other columns the same before and after:
SELECT (jsonb_build_object('"public"."customers"', (SELECT count(*) || ':' || coalesce(sum(hashtextextended(d.t, 0)::numeric), 0) || ':' || coalesce(sum(hashtextextended(d.t, 1)::numeric), 0) FROM (SELECT ROW(x."name", x."created_at")::text AS t FROM "public"."customers" x) d), '"public"."Zeilen"', (SELECT count(*) || ':' || coalesce(sum(hashtextextended(d.t, 0)::numeric), 0) || ':' || coalesce(sum(hashtextextended(d.t, 1)::numeric), 0) FROM (SELECT ROW(x."n")::text AS t FROM "public"."Zeilen" x) d), '"public"."orders"', (SELECT count(*) || ':' || coalesce(sum(hashtextextended(d.t, 0)::numeric), 0) || ':' || coalesce(sum(hashtextextended(d.t, 1)::numeric), 0) FROM (SELECT ROW(x."id")::text AS t FROM "public"."orders" x) d), '"public"."referrals"', (SELECT count(*) || ':' || coalesce(sum(hashtextextended(d.t, 0)::numeric), 0) || ':' || coalesce(sum(hashtextextended(d.t, 1)::numeric), 0) FROM (SELECT ROW(x."id")::text AS t FROM "public"."referrals" x) d)))::text;
-- verify: indexes, constraints and columns the same before and after:
SELECT (coalesce((SELECT jsonb_object_agg('index ' || i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) || coalesce(' -- ' || obj_description(i.indexrelid, 'pg_class'), '')) FROM pg_index i WHERE i.indrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r))), '{}') || coalesce((SELECT jsonb_object_agg('constraint ' || co.conrelid::regclass::text || ' ' || co.conname, pg_get_constraintdef(co.oid) || coalesce(' -- ' || obj_description(co.oid, 'pg_constraint'), '')) FROM pg_constraint co WHERE co.conrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r)) AND co.conparentid = 0), '{}') || coalesce((SELECT jsonb_object_agg('column ' || a.attrelid::regclass::text || '.' || quote_ident(a.attname), json_build_object('not_null', a.attnotnull, 'comment', col_description(a.attrelid, a.attnum), 'privileges', a.attacl::text)::text) FROM pg_attribute a WHERE a.attrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r)) AND a.attnum > 0 AND NOT a.attisdropped), '{}'))::text;
COMMIT;

-- nothing was changed: run again with --apply

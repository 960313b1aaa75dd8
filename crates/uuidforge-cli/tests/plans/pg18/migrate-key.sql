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
CREATE TEMP TABLE uuidforge_keymap (old text NOT NULL, new uuid NOT NULL) ON COMMIT DROP;
ALTER TABLE "public"."customers" ADD COLUMN "id_old" bigint, ADD COLUMN "parent_id_old" bigint;
ALTER TABLE "public"."Zeilen" ADD COLUMN "Kunde_old" bigint;
ALTER TABLE "public"."orders" ADD COLUMN "customer_id_old" bigint;
ALTER TABLE "public"."referrals" ADD COLUMN "customer_id_old" bigint, ADD COLUMN "referred_by_old" bigint;
-- new keys computed by uuidforge from: SELECT x."id"::text AS old_key, NULL::int8 AS unix_ms FROM "public"."customers" x ORDER BY x."id";
-- COPY uuidforge_keymap (old, new): one row per key
ALTER TABLE uuidforge_keymap ADD PRIMARY KEY (old), ADD UNIQUE (new);
CREATE TEMP TABLE uuidforge_keymap_dense ON COMMIT DROP AS SELECT CASE WHEN b.dense THEN b.first END AS first, CASE WHEN b.dense AND b.n = b.last - b.first + 1 THEN (SELECT array_agg(m.new ORDER BY m.old::int8) FROM uuidforge_keymap m) WHEN b.dense THEN (SELECT array_agg(coalesce(m.new, '00000000-0000-0000-0000-000000000000'::uuid) ORDER BY g) FROM generate_series(b.first, b.last) g LEFT JOIN uuidforge_keymap m ON m.old::int8 = g) END AS keys FROM (SELECT min(m.old::int8) AS first, max(m.old::int8) AS last, count(*) AS n, coalesce(max(m.old::int8) - min(m.old::int8) + 1 <= least(greatest(4 * count(*), 1024), 16777216), false) AS dense FROM uuidforge_keymap m) b;
CREATE FUNCTION pg_temp.uuidforge_keymap_first() RETURNS int8 LANGUAGE sql IMMUTABLE AS $uuidforge$ SELECT d.first FROM uuidforge_keymap_dense d $uuidforge$;
CREATE FUNCTION pg_temp.uuidforge_keymap_array() RETURNS uuid[] LANGUAGE sql IMMUTABLE AS $uuidforge$ SELECT d.keys FROM uuidforge_keymap_dense d $uuidforge$;
CREATE FUNCTION pg_temp.uuidforge_keymap_object() RETURNS jsonb LANGUAGE sql IMMUTABLE AS $uuidforge$ SELECT coalesce(jsonb_object_agg(m.old, m.new), '{}') FROM uuidforge_keymap m WHERE NOT EXISTS (SELECT FROM uuidforge_keymap_dense d WHERE d.keys IS NOT NULL) $uuidforge$;
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
ALTER TABLE "public"."customers" ALTER COLUMN "id" DROP IDENTITY IF EXISTS;
ALTER TABLE "public"."customers" ALTER COLUMN "id" DROP DEFAULT;
DO $uuidforge$ DECLARE s text := pg_get_serial_sequence('"public"."customers"', 'id'); BEGIN IF s IS NOT NULL THEN EXECUTE 'DROP SEQUENCE ' || s; END IF; END $uuidforge$;
ALTER TABLE "public"."customers" ALTER COLUMN "id" TYPE uuid USING coalesce((pg_temp.uuidforge_keymap_array())[least(greatest("id" - pg_temp.uuidforge_keymap_first() + 1, 0), 2147483647)::int4], (pg_temp.uuidforge_keymap_object() ->> "id"::text)::uuid), ALTER COLUMN "id_old" TYPE bigint USING "id", ALTER COLUMN "parent_id" TYPE uuid USING coalesce((pg_temp.uuidforge_keymap_array())[least(greatest("parent_id" - pg_temp.uuidforge_keymap_first() + 1, 0), 2147483647)::int4], (pg_temp.uuidforge_keymap_object() ->> "parent_id"::text)::uuid), ALTER COLUMN "parent_id_old" TYPE bigint USING "parent_id";
ALTER TABLE "public"."Zeilen" ALTER COLUMN "Kunde" TYPE uuid USING coalesce((pg_temp.uuidforge_keymap_array())[least(greatest("Kunde" - pg_temp.uuidforge_keymap_first() + 1, 0), 2147483647)::int4], (pg_temp.uuidforge_keymap_object() ->> "Kunde"::text)::uuid), ALTER COLUMN "Kunde_old" TYPE bigint USING "Kunde";
ALTER TABLE "public"."orders" ALTER COLUMN "customer_id" TYPE uuid USING coalesce((pg_temp.uuidforge_keymap_array())[least(greatest("customer_id" - pg_temp.uuidforge_keymap_first() + 1, 0), 2147483647)::int4], (pg_temp.uuidforge_keymap_object() ->> "customer_id"::text)::uuid), ALTER COLUMN "customer_id_old" TYPE bigint USING "customer_id";
ALTER TABLE "public"."referrals" ALTER COLUMN "customer_id" TYPE uuid USING coalesce((pg_temp.uuidforge_keymap_array())[least(greatest("customer_id" - pg_temp.uuidforge_keymap_first() + 1, 0), 2147483647)::int4], (pg_temp.uuidforge_keymap_object() ->> "customer_id"::text)::uuid), ALTER COLUMN "customer_id_old" TYPE bigint USING "customer_id", ALTER COLUMN "referred_by" TYPE uuid USING coalesce((pg_temp.uuidforge_keymap_array())[least(greatest("referred_by" - pg_temp.uuidforge_keymap_first() + 1, 0), 2147483647)::int4], (pg_temp.uuidforge_keymap_object() ->> "referred_by"::text)::uuid), ALTER COLUMN "referred_by_old" TYPE bigint USING "referred_by";
ALTER TABLE "public"."customers" ADD CONSTRAINT "customers_pkey" PRIMARY KEY ("id");
CREATE UNIQUE INDEX "customers_id_old_key" ON "public"."customers" ("id_old");
ALTER TABLE "public"."customers" ALTER COLUMN "id" SET DEFAULT "public".uuidv7();
ALTER TABLE "public"."Zeilen" ADD CONSTRAINT "Zeilen_pkey" PRIMARY KEY ("Kunde", n);
CREATE INDEX orders_customer_id_idx ON public.orders USING btree (customer_id);
ALTER TABLE "public"."Zeilen" ADD CONSTRAINT "Zeilen_Kunde_fkey" FOREIGN KEY ("Kunde") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION;
ALTER TABLE "public"."customers" ADD CONSTRAINT "customers_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION;
ALTER TABLE "public"."orders" ADD CONSTRAINT "orders_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE CASCADE;
ALTER TABLE "public"."referrals" ADD CONSTRAINT "referrals_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE "public"."referrals" ADD CONSTRAINT "referrals_referred_by_fkey" FOREIGN KEY ("referred_by") REFERENCES "public"."customers" ("id") ON UPDATE RESTRICT ON DELETE SET NULL;
CREATE VIEW "public"."order_customers" AS SELECT id,
    customer_id
   FROM orders o;
DO $uuidforge$ DECLARE found text; BEGIN SELECT string_agg(format('%s (on %s.%I)', pg_describe_object(d.classid, d.objid, d.objsubid), a.attrelid::regclass, a.attname), '; ' ORDER BY 1) INTO found FROM (VALUES ('"public"."customers"', 'id_old'), ('"public"."Zeilen"', 'Kunde_old'), ('"public"."customers"', 'parent_id_old'), ('"public"."orders"', 'customer_id_old'), ('"public"."referrals"', 'customer_id_old'), ('"public"."referrals"', 'referred_by_old')) w(rel, col) CROSS JOIN LATERAL (SELECT w.rel::regclass AS relid UNION SELECT p.relid FROM pg_partition_tree(w.rel::regclass) p) t JOIN pg_attribute a ON a.attrelid = t.relid AND a.attname = w.col AND NOT a.attisdropped JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum  WHERE NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT to_regclass(e.name) FROM unnest(ARRAY['"public"."customers_id_old_key"']::text[]) e(name) UNION ALL SELECT p.relid FROM unnest(ARRAY['"public"."customers_id_old_key"']::text[]) e(name) CROSS JOIN LATERAL pg_partition_tree(to_regclass(e.name)) p)); IF found IS NOT NULL THEN RAISE EXCEPTION 'uuidforge: still on the old columns after the change: %', found USING ERRCODE = '2BP01', HINT = 'nothing but the old values'' unique index may stay on them: every dependent moves to the new column or the change is refused before it runs; this one was not foreseen, so nothing was changed'; END IF; END $uuidforge$;
DROP FUNCTION pg_temp.uuidforge_keymap_object();
DROP FUNCTION pg_temp.uuidforge_keymap_first();
DROP FUNCTION pg_temp.uuidforge_keymap_array();
-- verify (every count 0, else rollback):
SELECT ((SELECT jsonb_build_object('new keys not from the map', count(*) FILTER (WHERE m.new IS DISTINCT FROM x."id")) FROM "public"."customers" x LEFT JOIN uuidforge_keymap m ON m.old = x."id_old"::text) || (SELECT (jsonb_build_object('old values without their unique index', (SELECT count(*) FROM (SELECT) one WHERE NOT EXISTS (SELECT FROM pg_index i WHERE i.indrelid = '"public"."customers"'::regclass AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL AND i.indnkeyatts = 1 AND i.indkey[0] = (SELECT a.attnum FROM pg_attribute a WHERE a.attrelid = '"public"."customers"'::regclass AND a.attname = 'id_old'))), 'rows without their old key', (SELECT count(*) FROM "public"."customers" WHERE "id_old" IS NULL), 'rows out of order', (SELECT count(*) FROM (SELECT x."id" < lag(x."id") OVER (ORDER BY x."id_old") AS inverted FROM "public"."customers" x ) o WHERE inverted), 'foreign keys not valid', (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conname = ANY (ARRAY['Zeilen_Kunde_fkey', 'customers_parent_id_fkey', 'orders_customer_id_fkey', 'referrals_customer_id_fkey', 'referrals_referred_by_fkey']) AND conrelid::regclass::text = ANY (ARRAY['"public"."Zeilen"', '"public"."customers"', '"public"."orders"', '"public"."referrals"', '"public"."referrals"']::text[]))))::text)::jsonb)::text;
-- verify: other columns the same before and after:
SELECT (jsonb_build_object('"public"."customers"', (SELECT count(*) || ':' || coalesce(sum(hash_record_extended(d.t, 0)), 0) || ':' || coalesce(sum(hash_record_extended(d.t, 1)), 0) FROM (SELECT ROW(x."name", x."created_at") AS t FROM "public"."customers" x) d), '"public"."Zeilen"', (SELECT count(*) || ':' || coalesce(sum(hash_record_extended(d.t, 0)), 0) || ':' || coalesce(sum(hash_record_extended(d.t, 1)), 0) FROM (SELECT ROW(x."n") AS t FROM "public"."Zeilen" x) d), '"public"."orders"', (SELECT count(*) || ':' || coalesce(sum(hash_record_extended(d.t, 0)), 0) || ':' || coalesce(sum(hash_record_extended(d.t, 1)), 0) FROM (SELECT ROW(x."id") AS t FROM "public"."orders" x) d), '"public"."referrals"', (SELECT count(*) || ':' || coalesce(sum(hash_record_extended(d.t, 0)), 0) || ':' || coalesce(sum(hash_record_extended(d.t, 1)), 0) FROM (SELECT ROW(x."id") AS t FROM "public"."referrals" x) d)))::text;
-- verify: indexes, constraints and columns the same before and after:
SELECT (coalesce((SELECT jsonb_object_agg('index ' || i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) || coalesce(' -- ' || obj_description(i.indexrelid, 'pg_class'), '')) FROM pg_index i WHERE i.indrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r))), '{}') || coalesce((SELECT jsonb_object_agg('constraint ' || co.conrelid::regclass::text || ' ' || co.conname, pg_get_constraintdef(co.oid) || coalesce(' -- ' || obj_description(co.oid, 'pg_constraint'), '')) FROM pg_constraint co WHERE co.conrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r)) AND co.conparentid = 0), '{}') || coalesce((SELECT jsonb_object_agg('column ' || a.attrelid::regclass::text || '.' || quote_ident(a.attname), json_build_object('not_null', a.attnotnull, 'comment', col_description(a.attrelid, a.attnum), 'privileges', a.attacl::text)::text) FROM pg_attribute a WHERE a.attrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r)) AND a.attnum > 0 AND NOT a.attisdropped), '{}'))::text;
COMMIT;

-- nothing was changed: run again with --apply

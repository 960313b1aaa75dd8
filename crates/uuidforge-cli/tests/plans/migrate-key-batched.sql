-- plan: "public"."customers" key id (bigint) → uuid (UUIDv7, time from created_at), old values kept in id_old, in batches of about 1000 rows
--   key times: each row's created_at, to the millisecond (bounds by time then select rows by when they were made)
--   referenced by "public"."Zeilen".Kunde (Zeilen_Kunde_fkey)
--   referenced by "public"."customers".parent_id (customers_parent_id_fkey)
--   referenced by "public"."orders".customer_id (orders_customer_id_fkey)
--   referenced by "public"."referrals".customer_id (referrals_customer_id_fkey)
--   referenced by "public"."referrals".referred_by (referrals_referred_by_fkey)
--   moved to the new columns from their definitions: constraint Zeilen_pkey, index orders_customer_id_idx
--   new default: public.uuidv7() (the uuidforge extension; ordered per session: the server does not preload it (shared_preload_libraries))
--   progress: kept by the runner; a killed run goes on from its last step: complete it with: uuidforge db migrate-key public.customers --resume

-- the session of every step:
SET work_mem = '256MB';
SET maintenance_work_mem = '512MB';

-- step 1: prepare: new columns, the key map, triggers for rows written meanwhile (one transaction; writers wait)
BEGIN;
LOCK TABLE "public"."Zeilen", "public"."orders", "public"."referrals", "public"."customers" IN ACCESS EXCLUSIVE MODE;
CREATE TABLE "public"."uuidforge_keymap_<oid>" (old text PRIMARY KEY, new uuid NOT NULL UNIQUE);
ALTER TABLE "public"."customers" ADD COLUMN "id_uuidforge_new" uuid, ADD COLUMN "parent_id_uuidforge_new" uuid;
ALTER TABLE "public"."Zeilen" ADD COLUMN "Kunde_uuidforge_new" uuid;
ALTER TABLE "public"."orders" ADD COLUMN "customer_id_uuidforge_new" uuid;
ALTER TABLE "public"."referrals" ADD COLUMN "customer_id_uuidforge_new" uuid, ADD COLUMN "referred_by_uuidforge_new" uuid;
CREATE FUNCTION "public"."uuidforge_migrate_<oid>"() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ BEGIN IF TG_OP = 'INSERT' OR NEW."id" IS DISTINCT FROM OLD."id" OR NEW."id_uuidforge_new" IS NULL THEN NEW."id_uuidforge_new" := (SELECT m.new FROM "public"."uuidforge_keymap_<oid>" m WHERE m.old = NEW."id"::text); IF NEW."id_uuidforge_new" IS NULL AND NEW."id" IS NOT NULL AND (TG_OP = 'INSERT' OR NEW."id" IS DISTINCT FROM OLD."id") THEN NEW."id_uuidforge_new" := "public".uuidv7(); END IF; END IF; IF TG_OP = 'INSERT' OR NEW."parent_id" IS DISTINCT FROM OLD."parent_id" OR NEW."parent_id_uuidforge_new" IS NULL THEN NEW."parent_id_uuidforge_new" := CASE WHEN NEW."parent_id" IS NULL THEN NULL WHEN NEW."parent_id" = NEW."id" THEN NEW."id_uuidforge_new" ELSE (SELECT p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = NEW."parent_id") END; END IF; RETURN NEW; END $uuidforge$;
CREATE TRIGGER uuidforge_migrate BEFORE INSERT OR UPDATE ON "public"."customers" FOR EACH ROW WHEN (current_setting('uuidforge_migrate.backfill', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION "public"."uuidforge_migrate_<oid>"();
CREATE FUNCTION "public"."uuidforge_migrate_<oid>"() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ BEGIN IF TG_OP = 'INSERT' OR NEW."Kunde" IS DISTINCT FROM OLD."Kunde" OR NEW."Kunde_uuidforge_new" IS NULL THEN NEW."Kunde_uuidforge_new" := CASE WHEN NEW."Kunde" IS NULL THEN NULL ELSE (SELECT p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = NEW."Kunde") END; END IF; RETURN NEW; END $uuidforge$;
CREATE TRIGGER uuidforge_migrate BEFORE INSERT OR UPDATE ON "public"."Zeilen" FOR EACH ROW WHEN (current_setting('uuidforge_migrate.backfill', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION "public"."uuidforge_migrate_<oid>"();
CREATE FUNCTION "public"."uuidforge_migrate_<oid>"() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ BEGIN IF TG_OP = 'INSERT' OR NEW."customer_id" IS DISTINCT FROM OLD."customer_id" OR NEW."customer_id_uuidforge_new" IS NULL THEN NEW."customer_id_uuidforge_new" := CASE WHEN NEW."customer_id" IS NULL THEN NULL ELSE (SELECT p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = NEW."customer_id") END; END IF; RETURN NEW; END $uuidforge$;
CREATE TRIGGER uuidforge_migrate BEFORE INSERT OR UPDATE ON "public"."orders" FOR EACH ROW WHEN (current_setting('uuidforge_migrate.backfill', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION "public"."uuidforge_migrate_<oid>"();
CREATE FUNCTION "public"."uuidforge_migrate_<oid>"() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ BEGIN IF TG_OP = 'INSERT' OR NEW."customer_id" IS DISTINCT FROM OLD."customer_id" OR NEW."customer_id_uuidforge_new" IS NULL THEN NEW."customer_id_uuidforge_new" := CASE WHEN NEW."customer_id" IS NULL THEN NULL ELSE (SELECT p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = NEW."customer_id") END; END IF; IF TG_OP = 'INSERT' OR NEW."referred_by" IS DISTINCT FROM OLD."referred_by" OR NEW."referred_by_uuidforge_new" IS NULL THEN NEW."referred_by_uuidforge_new" := CASE WHEN NEW."referred_by" IS NULL THEN NULL ELSE (SELECT p."id_uuidforge_new" FROM "public"."customers" p WHERE p."id" = NEW."referred_by") END; END IF; RETURN NEW; END $uuidforge$;
CREATE TRIGGER uuidforge_migrate BEFORE INSERT OR UPDATE ON "public"."referrals" FOR EACH ROW WHEN (current_setting('uuidforge_migrate.backfill', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION "public"."uuidforge_migrate_<oid>"();
COMMIT;

-- step 2: compute the new keys and copy them into the map (one transaction)
-- new keys computed by uuidforge from: SELECT x."id"::text AS old_key, floor(extract(epoch FROM x."created_at") * 1000)::int8 AS unix_ms FROM "public"."customers" x WHERE x."id_uuidforge_new" IS NULL ORDER BY x."created_at", x."id";
-- COPY "public"."uuidforge_keymap_<oid>" (old, new): one row per key

-- step 3: fill public.customers.id_uuidforge_new, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."name", x."created_at")::text, 0)::text AS before FROM "public"."customers" AS x, "public"."uuidforge_keymap_<oid>" m WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND x."id_uuidforge_new" IS NULL AND m.old = x."id"::text FOR UPDATE OF x), filled AS (UPDATE "public"."customers" AS x SET "id_uuidforge_new" = m.new FROM "public"."uuidforge_keymap_<oid>" m, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND x."id_uuidforge_new" IS NULL AND m.old = x."id"::text RETURNING l.before, hashtextextended(ROW(x."name", x."created_at")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 4: fill public.Zeilen.Kunde_uuidforge_new, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."n")::text, 0)::text AS before FROM "public"."Zeilen" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."Kunde" AND x."Kunde_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."Zeilen" AS x SET "Kunde_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."Kunde" AND x."Kunde_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."n")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 5: fill public.customers.parent_id_uuidforge_new, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."name", x."created_at")::text, 0)::text AS before FROM "public"."customers" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."parent_id" AND x."parent_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."customers" AS x SET "parent_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."parent_id" AND x."parent_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."name", x."created_at")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 6: fill public.orders.customer_id_uuidforge_new, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."id")::text, 0)::text AS before FROM "public"."orders" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."orders" AS x SET "customer_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."id")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 7: fill public.referrals.customer_id_uuidforge_new, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."id")::text, 0)::text AS before FROM "public"."referrals" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."referrals" AS x SET "customer_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."id")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 8: fill public.referrals.referred_by_uuidforge_new, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."id")::text, 0)::text AS before FROM "public"."referrals" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."referred_by" AND x."referred_by_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."referrals" AS x SET "referred_by_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."referred_by" AND x."referred_by_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."id")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 9: index the new key (no transaction; writers go on)
DROP INDEX CONCURRENTLY IF EXISTS "public"."customers_id_uuidforge_new";
CREATE UNIQUE INDEX CONCURRENTLY "customers_id_uuidforge_new" ON "public"."customers" ("id_uuidforge_new");

-- step 10: index the old key (kept unique) (no transaction; writers go on)
DROP INDEX CONCURRENTLY IF EXISTS "public"."customers_id_old_key";
CREATE UNIQUE INDEX CONCURRENTLY "customers_id_old_key" ON "public"."customers" ("id");

-- step 11: index public.Zeilen for Zeilen_pkey (no transaction; writers go on)
DROP INDEX CONCURRENTLY IF EXISTS "public"."Zeilen_pkey_uuidforge";
CREATE UNIQUE INDEX CONCURRENTLY "Zeilen_pkey_uuidforge" ON public."Zeilen" USING btree ("Kunde_uuidforge_new", n);

-- step 12: index orders_customer_id_idx again over the new columns (no transaction; writers go on)
DROP INDEX CONCURRENTLY IF EXISTS "public"."orders_customer_id_idx_uuidforge";
CREATE INDEX CONCURRENTLY "orders_customer_id_idx_uuidforge" ON public.orders USING btree ("customer_id_uuidforge_new");

-- step 13: add NOT NULL checks (not valid yet) (one transaction; writers wait)
BEGIN;
LOCK TABLE "public"."Zeilen", "public"."orders", "public"."referrals", "public"."customers" IN ACCESS EXCLUSIVE MODE;
ALTER TABLE "public"."customers" DROP CONSTRAINT IF EXISTS "uuidforge_nn_<oid>_id", ADD CONSTRAINT "uuidforge_nn_<oid>_id" CHECK ("id_uuidforge_new" IS NOT NULL) NOT VALID;
ALTER TABLE "public"."Zeilen" DROP CONSTRAINT IF EXISTS "uuidforge_nn_<oid>_Kunde", ADD CONSTRAINT "uuidforge_nn_<oid>_Kunde" CHECK ("Kunde_uuidforge_new" IS NOT NULL) NOT VALID;
ALTER TABLE "public"."orders" DROP CONSTRAINT IF EXISTS "uuidforge_nn_<oid>_customer_id", ADD CONSTRAINT "uuidforge_nn_<oid>_customer_id" CHECK ("customer_id_uuidforge_new" IS NOT NULL) NOT VALID;
COMMIT;

-- step 14: fill public.customers.id_uuidforge_new again where a writer raced the first pass, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."name", x."created_at")::text, 0)::text AS before FROM "public"."customers" AS x, "public"."uuidforge_keymap_<oid>" m WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND x."id_uuidforge_new" IS NULL AND m.old = x."id"::text FOR UPDATE OF x), filled AS (UPDATE "public"."customers" AS x SET "id_uuidforge_new" = m.new FROM "public"."uuidforge_keymap_<oid>" m, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND x."id_uuidforge_new" IS NULL AND m.old = x."id"::text RETURNING l.before, hashtextextended(ROW(x."name", x."created_at")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 15: fill public.Zeilen.Kunde_uuidforge_new again where a writer raced the first pass, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."n")::text, 0)::text AS before FROM "public"."Zeilen" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."Kunde" AND x."Kunde_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."Zeilen" AS x SET "Kunde_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."Kunde" AND x."Kunde_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."n")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 16: fill public.customers.parent_id_uuidforge_new again where a writer raced the first pass, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."name", x."created_at")::text, 0)::text AS before FROM "public"."customers" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."parent_id" AND x."parent_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."customers" AS x SET "parent_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."parent_id" AND x."parent_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."name", x."created_at")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 17: fill public.orders.customer_id_uuidforge_new again where a writer raced the first pass, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."id")::text, 0)::text AS before FROM "public"."orders" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."orders" AS x SET "customer_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."id")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 18: fill public.referrals.customer_id_uuidforge_new again where a writer raced the first pass, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."id")::text, 0)::text AS before FROM "public"."referrals" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."referrals" AS x SET "customer_id_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."customer_id" AND x."customer_id_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."id")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 19: fill public.referrals.referred_by_uuidforge_new again where a writer raced the first pass, one transaction per range of pages
-- each range of pages, one transaction:
WITH locked AS (SELECT x.ctid AS row_id, hashtextextended(ROW(x."id")::text, 0)::text AS before FROM "public"."referrals" AS x, "public"."customers" p WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."referred_by" AND x."referred_by_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" FOR UPDATE OF x), filled AS (UPDATE "public"."referrals" AS x SET "referred_by_uuidforge_new" = p."id_uuidforge_new" FROM "public"."customers" p, locked l WHERE x.ctid = l.row_id AND x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid AND p."id" = x."referred_by" AND x."referred_by_uuidforge_new" IS DISTINCT FROM p."id_uuidforge_new" RETURNING l.before, hashtextextended(ROW(x."id")::text, 0)::text AS after) SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled;  -- $1 its first page, $2 the page after its last: rows filled, and how many of them changed in other columns (0, else rollback)

-- step 20: validate the NOT NULL checks (writers go on) (one transaction)
BEGIN;
ALTER TABLE "public"."customers" VALIDATE CONSTRAINT "uuidforge_nn_<oid>_id";
ALTER TABLE "public"."Zeilen" VALIDATE CONSTRAINT "uuidforge_nn_<oid>_Kunde";
ALTER TABLE "public"."orders" VALIDATE CONSTRAINT "uuidforge_nn_<oid>_customer_id";
COMMIT;

-- step 21: check the new columns before the swap (one transaction)
SELECT ((SELECT jsonb_build_object('new keys not from the map', count(*) FILTER (WHERE m.new <> x."id_uuidforge_new"), 'keys not at their row''s millisecond', count(*) FILTER (WHERE date_trunc('milliseconds', x."created_at") <> timestamptz 'epoch' + ('x' || encode(substring(uuid_send(x."id_uuidforge_new") FROM 1 FOR 6), 'hex'))::bit(48)::int8 * interval '1 millisecond')) FROM "public"."customers" x JOIN "public"."uuidforge_keymap_<oid>" m ON m.old = x."id"::text) || (SELECT (jsonb_build_object('rows without a new key', (SELECT count(*) FROM "public"."customers" WHERE "id_uuidforge_new" IS NULL), 'new keys not 1:1 with old keys', (SELECT count(*) - count(DISTINCT "id_uuidforge_new") + count("id") - count(DISTINCT "id") FROM "public"."customers"), 'references of public.Zeilen.Kunde not rewritten', (SELECT count(*) FROM "public"."Zeilen" x LEFT JOIN "public"."customers" p ON p."id" = x."Kunde" WHERE x."Kunde" IS NOT NULL AND p."id_uuidforge_new" IS DISTINCT FROM x."Kunde_uuidforge_new"), 'references of public.customers.parent_id not rewritten', (SELECT count(*) FROM "public"."customers" x LEFT JOIN "public"."customers" p ON p."id" = x."parent_id" WHERE x."parent_id" IS NOT NULL AND p."id_uuidforge_new" IS DISTINCT FROM x."parent_id_uuidforge_new"), 'references of public.orders.customer_id not rewritten', (SELECT count(*) FROM "public"."orders" x LEFT JOIN "public"."customers" p ON p."id" = x."customer_id" WHERE x."customer_id" IS NOT NULL AND p."id_uuidforge_new" IS DISTINCT FROM x."customer_id_uuidforge_new"), 'references of public.referrals.customer_id not rewritten', (SELECT count(*) FROM "public"."referrals" x LEFT JOIN "public"."customers" p ON p."id" = x."customer_id" WHERE x."customer_id" IS NOT NULL AND p."id_uuidforge_new" IS DISTINCT FROM x."customer_id_uuidforge_new"), 'references of public.referrals.referred_by not rewritten', (SELECT count(*) FROM "public"."referrals" x LEFT JOIN "public"."customers" p ON p."id" = x."referred_by" WHERE x."referred_by" IS NOT NULL AND p."id_uuidforge_new" IS DISTINCT FROM x."referred_by_uuidforge_new"), 'foreign keys not valid', (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conname = ANY (ARRAY['Zeilen_Kunde_fkey', 'customers_parent_id_fkey', 'orders_customer_id_fkey', 'referrals_customer_id_fkey', 'referrals_referred_by_fkey']) AND conrelid::regclass::text = ANY (ARRAY['"public"."Zeilen"', '"public"."customers"', '"public"."orders"', '"public"."referrals"', '"public"."referrals"']::text[]))))::text)::jsonb)::text;  -- every count 0

-- step 22: swap: constraints onto the new columns, names exchanged (one transaction; writers wait)
BEGIN;
LOCK TABLE "public"."Zeilen", "public"."orders", "public"."referrals", "public"."customers" IN ACCESS EXCLUSIVE MODE;
DROP TRIGGER uuidforge_migrate ON "public"."customers";
DROP FUNCTION "public"."uuidforge_migrate_<oid>"();
DROP TRIGGER uuidforge_migrate ON "public"."Zeilen";
DROP FUNCTION "public"."uuidforge_migrate_<oid>"();
DROP TRIGGER uuidforge_migrate ON "public"."orders";
DROP FUNCTION "public"."uuidforge_migrate_<oid>"();
DROP TRIGGER uuidforge_migrate ON "public"."referrals";
DROP FUNCTION "public"."uuidforge_migrate_<oid>"();
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
ALTER TABLE "public"."customers" RENAME COLUMN "id" TO "id_old";
ALTER TABLE "public"."customers" ALTER COLUMN "id_old" DROP NOT NULL;
ALTER TABLE "public"."customers" RENAME COLUMN "id_uuidforge_new" TO "id";
ALTER TABLE "public"."customers" ALTER COLUMN "id" SET NOT NULL;
ALTER TABLE "public"."customers" DROP CONSTRAINT "uuidforge_nn_<oid>_id";
ALTER TABLE "public"."customers" ADD CONSTRAINT "customers_pkey" PRIMARY KEY USING INDEX "customers_id_uuidforge_new";
ALTER TABLE "public"."customers" ALTER COLUMN "id" SET DEFAULT "public".uuidv7();
ALTER TABLE "public"."Zeilen" RENAME COLUMN "Kunde" TO "Kunde_old";
ALTER TABLE "public"."Zeilen" RENAME COLUMN "Kunde_uuidforge_new" TO "Kunde";
ALTER TABLE "public"."Zeilen" ALTER COLUMN "Kunde_old" DROP NOT NULL;
ALTER TABLE "public"."Zeilen" ALTER COLUMN "Kunde" SET NOT NULL;
ALTER TABLE "public"."Zeilen" DROP CONSTRAINT "uuidforge_nn_<oid>_Kunde";
ALTER TABLE "public"."customers" RENAME COLUMN "parent_id" TO "parent_id_old";
ALTER TABLE "public"."customers" RENAME COLUMN "parent_id_uuidforge_new" TO "parent_id";
ALTER TABLE "public"."orders" RENAME COLUMN "customer_id" TO "customer_id_old";
ALTER TABLE "public"."orders" RENAME COLUMN "customer_id_uuidforge_new" TO "customer_id";
ALTER TABLE "public"."orders" ALTER COLUMN "customer_id_old" DROP NOT NULL;
ALTER TABLE "public"."orders" ALTER COLUMN "customer_id" SET NOT NULL;
ALTER TABLE "public"."orders" DROP CONSTRAINT "uuidforge_nn_<oid>_customer_id";
ALTER TABLE "public"."referrals" RENAME COLUMN "customer_id" TO "customer_id_old";
ALTER TABLE "public"."referrals" RENAME COLUMN "customer_id_uuidforge_new" TO "customer_id";
ALTER TABLE "public"."referrals" RENAME COLUMN "referred_by" TO "referred_by_old";
ALTER TABLE "public"."referrals" RENAME COLUMN "referred_by_uuidforge_new" TO "referred_by";
ALTER TABLE "public"."Zeilen" ADD CONSTRAINT "Zeilen_pkey" PRIMARY KEY USING INDEX "Zeilen_pkey_uuidforge";
ALTER INDEX "public"."orders_customer_id_idx_uuidforge" RENAME TO "orders_customer_id_idx";
ALTER TABLE "public"."Zeilen" ADD CONSTRAINT "Zeilen_Kunde_fkey" FOREIGN KEY ("Kunde") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION NOT VALID;
ALTER TABLE "public"."customers" ADD CONSTRAINT "customers_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION NOT VALID;
ALTER TABLE "public"."orders" ADD CONSTRAINT "orders_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE CASCADE NOT VALID;
ALTER TABLE "public"."referrals" ADD CONSTRAINT "referrals_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION DEFERRABLE INITIALLY DEFERRED NOT VALID;
ALTER TABLE "public"."referrals" ADD CONSTRAINT "referrals_referred_by_fkey" FOREIGN KEY ("referred_by") REFERENCES "public"."customers" ("id") ON UPDATE RESTRICT ON DELETE SET NULL NOT VALID;
CREATE VIEW "public"."order_customers" AS SELECT o.id,
    o.customer_id
   FROM orders o;
DO $uuidforge$ DECLARE found text; BEGIN SELECT string_agg(format('%s (on %s.%I)', pg_describe_object(d.classid, d.objid, d.objsubid), a.attrelid::regclass, a.attname), '; ' ORDER BY 1) INTO found FROM (VALUES ('"public"."customers"', 'id_old'), ('"public"."Zeilen"', 'Kunde_old'), ('"public"."customers"', 'parent_id_old'), ('"public"."orders"', 'customer_id_old'), ('"public"."referrals"', 'customer_id_old'), ('"public"."referrals"', 'referred_by_old')) w(rel, col) CROSS JOIN LATERAL (SELECT w.rel::regclass AS relid UNION SELECT p.relid FROM pg_partition_tree(w.rel::regclass) p) t JOIN pg_attribute a ON a.attrelid = t.relid AND a.attname = w.col AND NOT a.attisdropped JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum  WHERE NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT to_regclass(e.name) FROM unnest(ARRAY['"public"."customers_id_old_key"']::text[]) e(name) UNION ALL SELECT p.relid FROM unnest(ARRAY['"public"."customers_id_old_key"']::text[]) e(name) CROSS JOIN LATERAL pg_partition_tree(to_regclass(e.name)) p)); IF found IS NOT NULL THEN RAISE EXCEPTION 'uuidforge: still on the old columns after the change: %', found USING ERRCODE = '2BP01', HINT = 'nothing but the old values'' unique index may stay on them: every dependent moves to the new column or the change is refused before it runs; this one was not foreseen, so nothing was changed'; END IF; END $uuidforge$;
-- its transaction id is kept as 'swap'
COMMIT;

-- step 23: validate the foreign keys and checks (writers go on) (one transaction)
BEGIN;
ALTER TABLE "public"."Zeilen" VALIDATE CONSTRAINT "Zeilen_Kunde_fkey";
ALTER TABLE "public"."customers" VALIDATE CONSTRAINT "customers_parent_id_fkey";
ALTER TABLE "public"."orders" VALIDATE CONSTRAINT "orders_customer_id_fkey";
ALTER TABLE "public"."referrals" VALIDATE CONSTRAINT "referrals_customer_id_fkey";
ALTER TABLE "public"."referrals" VALIDATE CONSTRAINT "referrals_referred_by_fkey";
COMMIT;

-- step 24: verify the migration (one transaction)
SELECT ((SELECT ((SELECT jsonb_build_object('new keys not from the map', count(*) FILTER (WHERE m.new <> x."id"), 'keys not at their row''s millisecond', count(*) FILTER (WHERE date_trunc('milliseconds', x."created_at") <> timestamptz 'epoch' + ('x' || encode(substring(uuid_send(x."id") FROM 1 FOR 6), 'hex'))::bit(48)::int8 * interval '1 millisecond')) FROM "public"."customers" x JOIN "public"."uuidforge_keymap_<oid>" m ON m.old = x."id_old"::text AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid))) || (SELECT (jsonb_build_object('old values without their unique index', (SELECT count(*) FROM (SELECT) one WHERE NOT EXISTS (SELECT FROM pg_index i WHERE i.indrelid = '"public"."customers"'::regclass AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL AND i.indnkeyatts = 1 AND i.indkey[0] = (SELECT a.attnum FROM pg_attribute a WHERE a.attrelid = '"public"."customers"'::regclass AND a.attname = 'id_old'))), 'references of public.Zeilen.Kunde not rewritten', (SELECT count(*) FROM "public"."Zeilen" x JOIN "public"."customers" p ON p."id_old" = x."Kunde_old" WHERE x."Kunde_old" IS NOT NULL AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND age(p.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND p."id" IS DISTINCT FROM x."Kunde"), 'references of public.customers.parent_id not rewritten', (SELECT count(*) FROM "public"."customers" x JOIN "public"."customers" p ON p."id_old" = x."parent_id_old" WHERE x."parent_id_old" IS NOT NULL AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND age(p.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND p."id" IS DISTINCT FROM x."parent_id"), 'references of public.orders.customer_id not rewritten', (SELECT count(*) FROM "public"."orders" x JOIN "public"."customers" p ON p."id_old" = x."customer_id_old" WHERE x."customer_id_old" IS NOT NULL AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND age(p.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND p."id" IS DISTINCT FROM x."customer_id"), 'references of public.referrals.customer_id not rewritten', (SELECT count(*) FROM "public"."referrals" x JOIN "public"."customers" p ON p."id_old" = x."customer_id_old" WHERE x."customer_id_old" IS NOT NULL AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND age(p.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND p."id" IS DISTINCT FROM x."customer_id"), 'references of public.referrals.referred_by not rewritten', (SELECT count(*) FROM "public"."referrals" x JOIN "public"."customers" p ON p."id_old" = x."referred_by_old" WHERE x."referred_by_old" IS NOT NULL AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND age(p.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) AND p."id" IS DISTINCT FROM x."referred_by"), 'foreign keys not valid', (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conname = ANY (ARRAY['Zeilen_Kunde_fkey', 'customers_parent_id_fkey', 'orders_customer_id_fkey', 'referrals_customer_id_fkey', 'referrals_referred_by_fkey']) AND conrelid::regclass::text = ANY (ARRAY['"public"."Zeilen"', '"public"."customers"', '"public"."orders"', '"public"."referrals"', '"public"."referrals"']::text[]))))::text)::jsonb)::text)::jsonb || (SELECT coalesce(jsonb_object_agg('changed: ' || b.key, 1), '{}') || jsonb_build_object('indexes, constraints and columns changed', count(b.key)) FROM json_each_text('{"column orders.id": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column \"Zeilen\".n": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "index orders_pkey": "CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id)", "column customers.id": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column referrals.id": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "index \"Zeilen_pkey\"": "CREATE UNIQUE INDEX \"Zeilen_pkey\" ON public.\"Zeilen\" USING btree (\"Kunde\", n)", "index customers_pkey": "CREATE UNIQUE INDEX customers_pkey ON public.customers USING btree (id)", "index referrals_pkey": "CREATE UNIQUE INDEX referrals_pkey ON public.referrals USING btree (id)", "column customers.name": "{\"not_null\" : false, \"comment\" : null, \"privileges\" : null}", "column \"Zeilen\".\"Kunde\"": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column orders.customer_id": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column customers.parent_id": "{\"not_null\" : false, \"comment\" : null, \"privileges\" : null}", "column customers.created_at": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column referrals.customer_id": "{\"not_null\" : false, \"comment\" : null, \"privileges\" : null}", "column referrals.referred_by": "{\"not_null\" : false, \"comment\" : null, \"privileges\" : null}", "index orders_customer_id_idx": "CREATE INDEX orders_customer_id_idx ON public.orders USING btree (customer_id)", "constraint orders orders_pkey": "PRIMARY KEY (id)", "constraint \"Zeilen\" Zeilen_pkey": "PRIMARY KEY (\"Kunde\", n)", "constraint customers customers_pkey": "PRIMARY KEY (id)", "constraint referrals referrals_pkey": "PRIMARY KEY (id)", "constraint \"Zeilen\" Zeilen_Kunde_fkey": "FOREIGN KEY (\"Kunde\") REFERENCES customers(id)", "constraint orders orders_customer_id_fkey": "FOREIGN KEY (customer_id) REFERENCES customers(id) ON DELETE CASCADE", "constraint customers customers_parent_id_fkey": "FOREIGN KEY (parent_id) REFERENCES customers(id)", "constraint referrals referrals_customer_id_fkey": "FOREIGN KEY (customer_id) REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED", "constraint referrals referrals_referred_by_fkey": "FOREIGN KEY (referred_by) REFERENCES customers(id) ON UPDATE RESTRICT ON DELETE SET NULL"}'::json) b WHERE b.value IS DISTINCT FROM (SELECT (coalesce((SELECT jsonb_object_agg('index ' || i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) || coalesce(' -- ' || obj_description(i.indexrelid, 'pg_class'), '')) FROM pg_index i WHERE i.indrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r))), '{}') || coalesce((SELECT jsonb_object_agg('constraint ' || co.conrelid::regclass::text || ' ' || co.conname, pg_get_constraintdef(co.oid) || coalesce(' -- ' || obj_description(co.oid, 'pg_constraint'), '')) FROM pg_constraint co WHERE co.conrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r)) AND co.conparentid = 0), '{}') || coalesce((SELECT jsonb_object_agg('column ' || a.attrelid::regclass::text || '.' || quote_ident(a.attname), json_build_object('not_null', a.attnotnull, 'comment', col_description(a.attrelid, a.attnum), 'privileges', a.attacl::text)::text) FROM pg_attribute a WHERE a.attrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r)) AND a.attnum > 0 AND NOT a.attisdropped), '{}'))::text)::json ->> b.key))::text;  -- $1 = swap; every count 0

-- step 25: finish: drop the key map (one transaction)
BEGIN;
DROP TABLE "public"."uuidforge_keymap_<oid>";
COMMIT;

-- nothing was changed: run again with --apply

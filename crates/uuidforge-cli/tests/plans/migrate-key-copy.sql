-- plan: "public"."customers" key id (bigint) → uuid (UUIDv7, time from created_at), old values kept in id_old, online: each table copied once into a shadow, in ranges of about 1000 rows
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
SET row_security = 'off';

-- step 1: prepare: the key map, a shadow of each table, logs of the rows written meanwhile (one transaction; writers wait)
BEGIN;
LOCK TABLE "public"."customers", "public"."Zeilen", "public"."orders", "public"."referrals" IN SHARE ROW EXCLUSIVE MODE;
CREATE TABLE "public"."uuidforge_keymap_<oid>" (old text NOT NULL, new uuid NOT NULL);
CREATE TABLE "public"."uuidforge_keymap_<oid>_since" (old bigint PRIMARY KEY, new uuid NOT NULL);
CREATE TABLE "public"."uuidforge_copy_<oid>" (LIKE "public"."customers" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS);
ALTER TABLE "public"."uuidforge_copy_<oid>" ALTER COLUMN "id" DROP DEFAULT, ALTER COLUMN "id" TYPE uuid USING NULL, ALTER COLUMN "id" SET DEFAULT "public".uuidv7(), ALTER COLUMN "parent_id" TYPE uuid USING NULL, ADD COLUMN "id_old" bigint, ADD COLUMN "parent_id_old" bigint;
CREATE TABLE "public"."uuidforge_log_<oid>" ("id" bigint);
CREATE FUNCTION "public"."uuidforge_log_<oid>"() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ #variable_conflict use_column
BEGIN IF TG_OP <> 'INSERT' THEN INSERT INTO "public"."uuidforge_log_<oid>" VALUES (OLD."id"); END IF; IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW."id" IS DISTINCT FROM OLD."id")) THEN INSERT INTO "public"."uuidforge_log_<oid>" VALUES (NEW."id"); END IF; IF (TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW."id" IS DISTINCT FROM OLD."id")) AND NEW."id" IS NOT NULL THEN INSERT INTO "public"."uuidforge_keymap_<oid>_since" (old, new) VALUES (NEW."id", "public".uuidv7()) ON CONFLICT DO NOTHING; END IF; RETURN NULL; END $uuidforge$;
CREATE TRIGGER uuidforge_copy AFTER INSERT OR UPDATE OR DELETE ON "public"."customers" FOR EACH ROW EXECUTE FUNCTION "public"."uuidforge_log_<oid>"();
ALTER TABLE "public"."customers" ENABLE ALWAYS TRIGGER uuidforge_copy;
CREATE TABLE "public"."uuidforge_copy_<oid>" (LIKE "public"."Zeilen" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS);
ALTER TABLE "public"."uuidforge_copy_<oid>" ALTER COLUMN "Kunde" TYPE uuid USING NULL, ADD COLUMN "Kunde_old" bigint;
CREATE TABLE "public"."uuidforge_log_<oid>" ("Kunde" bigint, "n" integer);
CREATE FUNCTION "public"."uuidforge_log_<oid>"() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ #variable_conflict use_column
BEGIN IF TG_OP <> 'INSERT' THEN INSERT INTO "public"."uuidforge_log_<oid>" VALUES (OLD."Kunde", OLD."n"); END IF; IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW."Kunde" IS DISTINCT FROM OLD."Kunde" OR NEW."n" IS DISTINCT FROM OLD."n")) THEN INSERT INTO "public"."uuidforge_log_<oid>" VALUES (NEW."Kunde", NEW."n"); END IF; RETURN NULL; END $uuidforge$;
CREATE TRIGGER uuidforge_copy AFTER INSERT OR UPDATE OR DELETE ON "public"."Zeilen" FOR EACH ROW EXECUTE FUNCTION "public"."uuidforge_log_<oid>"();
ALTER TABLE "public"."Zeilen" ENABLE ALWAYS TRIGGER uuidforge_copy;
CREATE TABLE "public"."uuidforge_copy_<oid>" (LIKE "public"."orders" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS);
ALTER TABLE "public"."uuidforge_copy_<oid>" ALTER COLUMN "customer_id" TYPE uuid USING NULL, ADD COLUMN "customer_id_old" bigint;
CREATE TABLE "public"."uuidforge_log_<oid>" ("id" integer);
CREATE FUNCTION "public"."uuidforge_log_<oid>"() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ #variable_conflict use_column
BEGIN IF TG_OP <> 'INSERT' THEN INSERT INTO "public"."uuidforge_log_<oid>" VALUES (OLD."id"); END IF; IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW."id" IS DISTINCT FROM OLD."id")) THEN INSERT INTO "public"."uuidforge_log_<oid>" VALUES (NEW."id"); END IF; RETURN NULL; END $uuidforge$;
CREATE TRIGGER uuidforge_copy AFTER INSERT OR UPDATE OR DELETE ON "public"."orders" FOR EACH ROW EXECUTE FUNCTION "public"."uuidforge_log_<oid>"();
ALTER TABLE "public"."orders" ENABLE ALWAYS TRIGGER uuidforge_copy;
CREATE TABLE "public"."uuidforge_copy_<oid>" (LIKE "public"."referrals" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS);
ALTER TABLE "public"."uuidforge_copy_<oid>" ALTER COLUMN "customer_id" TYPE uuid USING NULL, ALTER COLUMN "referred_by" TYPE uuid USING NULL, ADD COLUMN "customer_id_old" bigint, ADD COLUMN "referred_by_old" bigint;
CREATE TABLE "public"."uuidforge_log_<oid>" ("id" integer);
CREATE FUNCTION "public"."uuidforge_log_<oid>"() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ #variable_conflict use_column
BEGIN IF TG_OP <> 'INSERT' THEN INSERT INTO "public"."uuidforge_log_<oid>" VALUES (OLD."id"); END IF; IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW."id" IS DISTINCT FROM OLD."id")) THEN INSERT INTO "public"."uuidforge_log_<oid>" VALUES (NEW."id"); END IF; RETURN NULL; END $uuidforge$;
CREATE TRIGGER uuidforge_copy AFTER INSERT OR UPDATE OR DELETE ON "public"."referrals" FOR EACH ROW EXECUTE FUNCTION "public"."uuidforge_log_<oid>"();
ALTER TABLE "public"."referrals" ENABLE ALWAYS TRIGGER uuidforge_copy;
COMMIT;

-- step 2: compute the new keys and copy them into the map (one transaction)
-- new keys computed by uuidforge from: SELECT x."id"::text AS old_key, floor(extract(epoch FROM x."created_at") * 1000)::int8 AS unix_ms FROM "public"."customers" x ORDER BY x."created_at", x."id";
-- COPY "public"."uuidforge_keymap_<oid>" (old, new): one row per key

-- step 3: index the key map (one transaction)
BEGIN;
CREATE TABLE "public"."uuidforge_keymap_<oid>_typed" AS SELECT old::bigint AS old, new FROM "public"."uuidforge_keymap_<oid>";
ALTER TABLE "public"."uuidforge_keymap_<oid>_typed" ADD PRIMARY KEY (old);
COMMIT;

-- step 4: copy each table into its shadow, side by side on up to 2 sessions, the largest part first
-- part 1: copy public.customers into its shadow
-- each range of pages, one transaction:
WITH copied AS (INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "name", "created_at", "parent_id", "id_old", "parent_id_old") SELECT coalesce(mk.new, mk_since.new, CASE WHEN x."id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.customers.id = ' || x."id"::text)::uuid END), x."name", x."created_at", coalesce(m0.new, m0_since.new, CASE WHEN x."parent_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.customers.parent_id = ' || x."parent_id"::text)::uuid END), x."id", x."parent_id" FROM "public"."customers" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" mk ON mk.old = x."id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" mk_since ON mk_since.old = x."id" LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."parent_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."parent_id" WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid RETURNING (("id" IS NULL AND "id_old" IS NOT NULL) OR ("parent_id" IS NULL AND "parent_id_old" IS NOT NULL)) AS uuidforge_missing) SELECT count(*)::int8, (count(*) FILTER (WHERE uuidforge_missing))::int8 FROM copied;  -- $1 its first page, $2 the page after its last: rows filled, and rows without their new key in the map (0, else rollback)
-- part 2: copy public.Zeilen into its shadow
-- each range of pages, one transaction:
WITH copied AS (INSERT INTO "public"."uuidforge_copy_<oid>" ("Kunde", "n", "Kunde_old") SELECT coalesce(m0.new, m0_since.new, CASE WHEN x."Kunde" IS NOT NULL THEN ('uuidforge: no new key in the map for public.Zeilen.Kunde = ' || x."Kunde"::text)::uuid END), x."n", x."Kunde" FROM "public"."Zeilen" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."Kunde" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."Kunde" WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid RETURNING (("Kunde" IS NULL AND "Kunde_old" IS NOT NULL)) AS uuidforge_missing) SELECT count(*)::int8, (count(*) FILTER (WHERE uuidforge_missing))::int8 FROM copied;  -- $1 its first page, $2 the page after its last: rows filled, and rows without their new key in the map (0, else rollback)
-- part 3: copy public.orders into its shadow
-- each range of pages, one transaction:
WITH copied AS (INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "customer_id", "customer_id_old") SELECT x."id", coalesce(m0.new, m0_since.new, CASE WHEN x."customer_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.orders.customer_id = ' || x."customer_id"::text)::uuid END), x."customer_id" FROM "public"."orders" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."customer_id" WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid RETURNING (("customer_id" IS NULL AND "customer_id_old" IS NOT NULL)) AS uuidforge_missing) SELECT count(*)::int8, (count(*) FILTER (WHERE uuidforge_missing))::int8 FROM copied;  -- $1 its first page, $2 the page after its last: rows filled, and rows without their new key in the map (0, else rollback)
-- part 4: copy public.referrals into its shadow
-- each range of pages, one transaction:
WITH copied AS (INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "customer_id", "referred_by", "customer_id_old", "referred_by_old") SELECT x."id", coalesce(m0.new, m0_since.new, CASE WHEN x."customer_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.referrals.customer_id = ' || x."customer_id"::text)::uuid END), coalesce(m1.new, m1_since.new, CASE WHEN x."referred_by" IS NOT NULL THEN ('uuidforge: no new key in the map for public.referrals.referred_by = ' || x."referred_by"::text)::uuid END), x."customer_id", x."referred_by" FROM "public"."referrals" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m1 ON m1.old = x."referred_by" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m1_since ON m1_since.old = x."referred_by" WHERE x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid RETURNING (("customer_id" IS NULL AND "customer_id_old" IS NOT NULL) OR ("referred_by" IS NULL AND "referred_by_old" IS NOT NULL)) AS uuidforge_missing) SELECT count(*)::int8, (count(*) FILTER (WHERE uuidforge_missing))::int8 FROM copied;  -- $1 its first page, $2 the page after its last: rows filled, and rows without their new key in the map (0, else rollback)

-- step 5: replay the rows written during the copy (each row once in its shadow), one transaction per round
-- each round, one transaction, until at most 9223372036854775807 remain or 1 rounds ran:
BEGIN;
CREATE TEMP TABLE uuidforge_taken_0 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_0;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_0 k WHERE s."id_old" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "name", "created_at", "parent_id", "id_old", "parent_id_old") SELECT coalesce(mk.new, mk_since.new, CASE WHEN x."id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.customers.id = ' || x."id"::text)::uuid END), x."name", x."created_at", coalesce(m0.new, m0_since.new, CASE WHEN x."parent_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.customers.parent_id = ' || x."parent_id"::text)::uuid END), x."id", x."parent_id" FROM "public"."customers" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" mk ON mk.old = x."id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" mk_since ON mk_since.old = x."id" LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."parent_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."parent_id" JOIN uuidforge_taken_0 k ON x."id" = k."id";
CREATE TEMP TABLE uuidforge_taken_1 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "Kunde", "n") SELECT DISTINCT "Kunde", "n" FROM d;
ANALYZE uuidforge_taken_1;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_1 k WHERE s."Kunde_old" = k."Kunde" AND s."n" = k."n";
INSERT INTO "public"."uuidforge_copy_<oid>" ("Kunde", "n", "Kunde_old") SELECT coalesce(m0.new, m0_since.new, CASE WHEN x."Kunde" IS NOT NULL THEN ('uuidforge: no new key in the map for public.Zeilen.Kunde = ' || x."Kunde"::text)::uuid END), x."n", x."Kunde" FROM "public"."Zeilen" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."Kunde" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."Kunde" JOIN uuidforge_taken_1 k ON x."Kunde" = k."Kunde" AND x."n" = k."n";
CREATE TEMP TABLE uuidforge_taken_2 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_2;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_2 k WHERE s."id" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "customer_id", "customer_id_old") SELECT x."id", coalesce(m0.new, m0_since.new, CASE WHEN x."customer_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.orders.customer_id = ' || x."customer_id"::text)::uuid END), x."customer_id" FROM "public"."orders" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."customer_id" JOIN uuidforge_taken_2 k ON x."id" = k."id";
CREATE TEMP TABLE uuidforge_taken_3 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_3;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_3 k WHERE s."id" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "customer_id", "referred_by", "customer_id_old", "referred_by_old") SELECT x."id", coalesce(m0.new, m0_since.new, CASE WHEN x."customer_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.referrals.customer_id = ' || x."customer_id"::text)::uuid END), coalesce(m1.new, m1_since.new, CASE WHEN x."referred_by" IS NOT NULL THEN ('uuidforge: no new key in the map for public.referrals.referred_by = ' || x."referred_by"::text)::uuid END), x."customer_id", x."referred_by" FROM "public"."referrals" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m1 ON m1.old = x."referred_by" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m1_since ON m1_since.old = x."referred_by" JOIN uuidforge_taken_3 k ON x."id" = k."id";
COMMIT;
SELECT ((SELECT count(*) FROM "public"."uuidforge_log_<oid>") + (SELECT count(*) FROM "public"."uuidforge_log_<oid>") + (SELECT count(*) FROM "public"."uuidforge_log_<oid>") + (SELECT count(*) FROM "public"."uuidforge_log_<oid>"))::text;  -- how many remain

-- step 6: index and analyze each shadow, side by side on up to 2 sessions, the largest part first
-- part 1: index and analyze public.customers's shadow
BEGIN;
CREATE UNIQUE INDEX "customers_id_old_key" ON "public"."uuidforge_copy_<oid>" ("id_old");
CREATE UNIQUE INDEX "uuidforge_copy_<oid>_0" ON "public"."uuidforge_copy_<oid>" USING btree (id);
ANALYZE "public"."uuidforge_copy_<oid>";
COMMIT;
-- part 2: index and analyze public.Zeilen's shadow
BEGIN;
CREATE UNIQUE INDEX "uuidforge_copy_<oid>_0" ON "public"."uuidforge_copy_<oid>" USING btree ("Kunde", n);
ANALYZE "public"."uuidforge_copy_<oid>";
COMMIT;
-- part 3: index and analyze public.orders's shadow
BEGIN;
CREATE INDEX "uuidforge_copy_<oid>_0" ON "public"."uuidforge_copy_<oid>" USING btree (customer_id);
CREATE UNIQUE INDEX "uuidforge_copy_<oid>_1" ON "public"."uuidforge_copy_<oid>" USING btree (id);
ANALYZE "public"."uuidforge_copy_<oid>";
COMMIT;
-- part 4: index and analyze public.referrals's shadow
BEGIN;
CREATE UNIQUE INDEX "uuidforge_copy_<oid>_0" ON "public"."uuidforge_copy_<oid>" USING btree (id);
ANALYZE "public"."uuidforge_copy_<oid>";
COMMIT;

-- step 7: replay the rows written meanwhile into the shadows, one transaction per round
-- each round, one transaction, until at most 1000 remain or 20 rounds ran:
BEGIN;
CREATE TEMP TABLE uuidforge_taken_0 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_0;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_0 k WHERE s."id_old" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "name", "created_at", "parent_id", "id_old", "parent_id_old") SELECT coalesce(mk.new, mk_since.new, CASE WHEN x."id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.customers.id = ' || x."id"::text)::uuid END), x."name", x."created_at", coalesce(m0.new, m0_since.new, CASE WHEN x."parent_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.customers.parent_id = ' || x."parent_id"::text)::uuid END), x."id", x."parent_id" FROM "public"."customers" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" mk ON mk.old = x."id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" mk_since ON mk_since.old = x."id" LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."parent_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."parent_id" JOIN uuidforge_taken_0 k ON x."id" = k."id";
CREATE TEMP TABLE uuidforge_taken_1 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "Kunde", "n") SELECT DISTINCT "Kunde", "n" FROM d;
ANALYZE uuidforge_taken_1;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_1 k WHERE s."Kunde_old" = k."Kunde" AND s."n" = k."n";
INSERT INTO "public"."uuidforge_copy_<oid>" ("Kunde", "n", "Kunde_old") SELECT coalesce(m0.new, m0_since.new, CASE WHEN x."Kunde" IS NOT NULL THEN ('uuidforge: no new key in the map for public.Zeilen.Kunde = ' || x."Kunde"::text)::uuid END), x."n", x."Kunde" FROM "public"."Zeilen" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."Kunde" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."Kunde" JOIN uuidforge_taken_1 k ON x."Kunde" = k."Kunde" AND x."n" = k."n";
CREATE TEMP TABLE uuidforge_taken_2 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_2;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_2 k WHERE s."id" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "customer_id", "customer_id_old") SELECT x."id", coalesce(m0.new, m0_since.new, CASE WHEN x."customer_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.orders.customer_id = ' || x."customer_id"::text)::uuid END), x."customer_id" FROM "public"."orders" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."customer_id" JOIN uuidforge_taken_2 k ON x."id" = k."id";
CREATE TEMP TABLE uuidforge_taken_3 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_3;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_3 k WHERE s."id" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "customer_id", "referred_by", "customer_id_old", "referred_by_old") SELECT x."id", coalesce(m0.new, m0_since.new, CASE WHEN x."customer_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.referrals.customer_id = ' || x."customer_id"::text)::uuid END), coalesce(m1.new, m1_since.new, CASE WHEN x."referred_by" IS NOT NULL THEN ('uuidforge: no new key in the map for public.referrals.referred_by = ' || x."referred_by"::text)::uuid END), x."customer_id", x."referred_by" FROM "public"."referrals" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m1 ON m1.old = x."referred_by" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m1_since ON m1_since.old = x."referred_by" JOIN uuidforge_taken_3 k ON x."id" = k."id";
COMMIT;
SELECT ((SELECT count(*) FROM "public"."uuidforge_log_<oid>") + (SELECT count(*) FROM "public"."uuidforge_log_<oid>") + (SELECT count(*) FROM "public"."uuidforge_log_<oid>") + (SELECT count(*) FROM "public"."uuidforge_log_<oid>"))::text;  -- how many remain

-- step 8: swap: the rest replayed, the shadows in the tables' places (one transaction; writers wait)
BEGIN;
LOCK TABLE "public"."referrals", "public"."orders", "public"."Zeilen", "public"."customers", "public"."uuidforge_copy_<oid>", "public"."uuidforge_copy_<oid>", "public"."uuidforge_copy_<oid>", "public"."uuidforge_copy_<oid>" IN ACCESS EXCLUSIVE MODE;
CREATE TEMP TABLE uuidforge_taken_0 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_0;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_0 k WHERE s."id_old" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "name", "created_at", "parent_id", "id_old", "parent_id_old") SELECT coalesce(mk.new, mk_since.new, CASE WHEN x."id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.customers.id = ' || x."id"::text)::uuid END), x."name", x."created_at", coalesce(m0.new, m0_since.new, CASE WHEN x."parent_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.customers.parent_id = ' || x."parent_id"::text)::uuid END), x."id", x."parent_id" FROM "public"."customers" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" mk ON mk.old = x."id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" mk_since ON mk_since.old = x."id" LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."parent_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."parent_id" JOIN uuidforge_taken_0 k ON x."id" = k."id";
CREATE TEMP TABLE uuidforge_taken_1 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "Kunde", "n") SELECT DISTINCT "Kunde", "n" FROM d;
ANALYZE uuidforge_taken_1;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_1 k WHERE s."Kunde_old" = k."Kunde" AND s."n" = k."n";
INSERT INTO "public"."uuidforge_copy_<oid>" ("Kunde", "n", "Kunde_old") SELECT coalesce(m0.new, m0_since.new, CASE WHEN x."Kunde" IS NOT NULL THEN ('uuidforge: no new key in the map for public.Zeilen.Kunde = ' || x."Kunde"::text)::uuid END), x."n", x."Kunde" FROM "public"."Zeilen" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."Kunde" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."Kunde" JOIN uuidforge_taken_1 k ON x."Kunde" = k."Kunde" AND x."n" = k."n";
CREATE TEMP TABLE uuidforge_taken_2 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_2;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_2 k WHERE s."id" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "customer_id", "customer_id_old") SELECT x."id", coalesce(m0.new, m0_since.new, CASE WHEN x."customer_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.orders.customer_id = ' || x."customer_id"::text)::uuid END), x."customer_id" FROM "public"."orders" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."customer_id" JOIN uuidforge_taken_2 k ON x."id" = k."id";
CREATE TEMP TABLE uuidforge_taken_3 ON COMMIT DROP AS WITH d AS (DELETE FROM "public"."uuidforge_log_<oid>" RETURNING "id") SELECT DISTINCT "id" FROM d;
ANALYZE uuidforge_taken_3;
DELETE FROM "public"."uuidforge_copy_<oid>" s USING uuidforge_taken_3 k WHERE s."id" = k."id";
INSERT INTO "public"."uuidforge_copy_<oid>" ("id", "customer_id", "referred_by", "customer_id_old", "referred_by_old") SELECT x."id", coalesce(m0.new, m0_since.new, CASE WHEN x."customer_id" IS NOT NULL THEN ('uuidforge: no new key in the map for public.referrals.customer_id = ' || x."customer_id"::text)::uuid END), coalesce(m1.new, m1_since.new, CASE WHEN x."referred_by" IS NOT NULL THEN ('uuidforge: no new key in the map for public.referrals.referred_by = ' || x."referred_by"::text)::uuid END), x."customer_id", x."referred_by" FROM "public"."referrals" x LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m0 ON m0.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m0_since ON m0_since.old = x."customer_id" LEFT JOIN "public"."uuidforge_keymap_<oid>_typed" m1 ON m1.old = x."referred_by" LEFT JOIN "public"."uuidforge_keymap_<oid>_since" m1_since ON m1_since.old = x."referred_by" JOIN uuidforge_taken_3 k ON x."id" = k."id";
DROP TRIGGER uuidforge_copy ON "public"."customers";
DROP FUNCTION "public"."uuidforge_log_<oid>"();
DROP TABLE "public"."uuidforge_log_<oid>";
DROP TRIGGER uuidforge_copy ON "public"."Zeilen";
DROP FUNCTION "public"."uuidforge_log_<oid>"();
DROP TABLE "public"."uuidforge_log_<oid>";
DROP TRIGGER uuidforge_copy ON "public"."orders";
DROP FUNCTION "public"."uuidforge_log_<oid>"();
DROP TABLE "public"."uuidforge_log_<oid>";
DROP TRIGGER uuidforge_copy ON "public"."referrals";
DROP FUNCTION "public"."uuidforge_log_<oid>"();
DROP TABLE "public"."uuidforge_log_<oid>";
ALTER SEQUENCE public.orders_id_seq OWNED BY "public"."uuidforge_copy_<oid>"."id";
DROP TABLE "public"."customers", "public"."Zeilen", "public"."orders", "public"."referrals";
ALTER TABLE "public"."uuidforge_copy_<oid>" RENAME TO "customers";
ALTER TABLE "public"."customers" ADD CONSTRAINT "customers_pkey" PRIMARY KEY USING INDEX "uuidforge_copy_<oid>_0";
ALTER TABLE "public"."customers" OWNER TO uuidforge;
ALTER TABLE "public"."uuidforge_copy_<oid>" RENAME TO "Zeilen";
ALTER TABLE "public"."Zeilen" ADD CONSTRAINT "Zeilen_pkey" PRIMARY KEY USING INDEX "uuidforge_copy_<oid>_0";
ALTER TABLE "public"."Zeilen" OWNER TO uuidforge;
ALTER TABLE "public"."uuidforge_copy_<oid>" RENAME TO "orders";
ALTER INDEX "public"."uuidforge_copy_<oid>_0" RENAME TO "orders_customer_id_idx";
ALTER TABLE "public"."orders" ADD CONSTRAINT "orders_pkey" PRIMARY KEY USING INDEX "uuidforge_copy_<oid>_1";
ALTER TABLE "public"."orders" OWNER TO uuidforge;
ALTER TABLE "public"."uuidforge_copy_<oid>" RENAME TO "referrals";
ALTER TABLE "public"."referrals" ADD CONSTRAINT "referrals_pkey" PRIMARY KEY USING INDEX "uuidforge_copy_<oid>_0";
ALTER TABLE "public"."referrals" OWNER TO uuidforge;
ALTER TABLE public.customers ADD CONSTRAINT "customers_parent_id_fkey" FOREIGN KEY (parent_id) REFERENCES customers(id) NOT VALID;
ALTER TABLE public."Zeilen" ADD CONSTRAINT "Zeilen_Kunde_fkey" FOREIGN KEY ("Kunde") REFERENCES customers(id) NOT VALID;
ALTER TABLE public.orders ADD CONSTRAINT "orders_customer_id_fkey" FOREIGN KEY (customer_id) REFERENCES customers(id) ON DELETE CASCADE NOT VALID;
ALTER TABLE public.referrals ADD CONSTRAINT "referrals_customer_id_fkey" FOREIGN KEY (customer_id) REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED NOT VALID;
ALTER TABLE public.referrals ADD CONSTRAINT "referrals_referred_by_fkey" FOREIGN KEY (referred_by) REFERENCES customers(id) ON UPDATE RESTRICT ON DELETE SET NULL NOT VALID;
-- its transaction id is kept as 'swap'
COMMIT;

-- step 9: validate the foreign keys (writers go on), side by side on up to 2 sessions, the largest part first
-- part 1: validate the foreign keys of public.customers
BEGIN;
ALTER TABLE public.customers VALIDATE CONSTRAINT "customers_parent_id_fkey";
COMMIT;
-- part 2: validate the foreign keys of public."Zeilen"
BEGIN;
ALTER TABLE public."Zeilen" VALIDATE CONSTRAINT "Zeilen_Kunde_fkey";
COMMIT;
-- part 3: validate the foreign keys of public.orders
BEGIN;
ALTER TABLE public.orders VALIDATE CONSTRAINT "orders_customer_id_fkey";
COMMIT;
-- part 4: validate the foreign keys of public.referrals
BEGIN;
ALTER TABLE public.referrals VALIDATE CONSTRAINT "referrals_customer_id_fkey";
ALTER TABLE public.referrals VALIDATE CONSTRAINT "referrals_referred_by_fkey";
COMMIT;

-- step 10: verify the migration (one transaction)
SELECT ((SELECT ((SELECT (jsonb_build_object('old values without their unique index', (SELECT count(*) FROM (SELECT) one WHERE NOT EXISTS (SELECT FROM pg_index i WHERE i.indrelid = '"public"."customers"'::regclass AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL AND i.indnkeyatts = 1 AND i.indkey[0] = (SELECT a.attnum FROM pg_attribute a WHERE a.attrelid = '"public"."customers"'::regclass AND a.attname = 'id_old'))), 'new keys not from the map', (SELECT count(*) FROM "public"."customers" x JOIN "public"."uuidforge_keymap_<oid>_typed" m ON m.old = x."id_old" WHERE m.new <> x."id" AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid))), 'keys not at their row''s millisecond', (SELECT count(*) FROM "public"."customers" x JOIN "public"."uuidforge_keymap_<oid>_typed" m ON m.old = x."id_old" AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid)) WHERE ('x' || substr(replace(x."id"::text, '-', ''), 1, 12))::bit(48)::int8 <> (extract(epoch FROM date_trunc('milliseconds', x."created_at")) * 1000)::int8), 'rows out of order', (SELECT count(*) FROM (SELECT floor(extract(epoch FROM x."created_at") * 1000)::int8 < lag(floor(extract(epoch FROM x."created_at") * 1000)::int8) OVER (ORDER BY x."id") AS inverted FROM "public"."customers" x JOIN "public"."uuidforge_keymap_<oid>_typed" m ON m.old = x."id_old" AND age(x.xmin) > (SELECT age(($1::int8 % 4294967296)::text::xid))) o WHERE inverted), 'foreign keys not valid', (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated AND conname = ANY (ARRAY['Zeilen_Kunde_fkey', 'customers_parent_id_fkey', 'orders_customer_id_fkey', 'referrals_customer_id_fkey', 'referrals_referred_by_fkey']) AND conrelid::regclass::text = ANY (ARRAY['"public"."Zeilen"', '"public"."customers"', '"public"."orders"', '"public"."referrals"', '"public"."referrals"']::text[]))))::text)::jsonb || (SELECT coalesce(jsonb_object_agg('changed: ' || b.key, 1), '{}') || jsonb_build_object('indexes, constraints and columns changed', count(b.key)) FROM json_each_text('{"column orders.id": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column \"Zeilen\".n": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "index orders_pkey": "CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id)", "column customers.id": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column referrals.id": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "index \"Zeilen_pkey\"": "CREATE UNIQUE INDEX \"Zeilen_pkey\" ON public.\"Zeilen\" USING btree (\"Kunde\", n)", "index customers_pkey": "CREATE UNIQUE INDEX customers_pkey ON public.customers USING btree (id)", "index referrals_pkey": "CREATE UNIQUE INDEX referrals_pkey ON public.referrals USING btree (id)", "column customers.name": "{\"not_null\" : false, \"comment\" : null, \"privileges\" : null}", "column \"Zeilen\".\"Kunde\"": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column orders.customer_id": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column customers.parent_id": "{\"not_null\" : false, \"comment\" : null, \"privileges\" : null}", "column customers.created_at": "{\"not_null\" : true, \"comment\" : null, \"privileges\" : null}", "column referrals.customer_id": "{\"not_null\" : false, \"comment\" : null, \"privileges\" : null}", "column referrals.referred_by": "{\"not_null\" : false, \"comment\" : null, \"privileges\" : null}", "index orders_customer_id_idx": "CREATE INDEX orders_customer_id_idx ON public.orders USING btree (customer_id)", "constraint orders orders_pkey": "PRIMARY KEY (id)", "constraint \"Zeilen\" Zeilen_pkey": "PRIMARY KEY (\"Kunde\", n)", "constraint customers customers_pkey": "PRIMARY KEY (id)", "constraint referrals referrals_pkey": "PRIMARY KEY (id)", "constraint \"Zeilen\" Zeilen_Kunde_fkey": "FOREIGN KEY (\"Kunde\") REFERENCES customers(id)", "constraint orders orders_customer_id_fkey": "FOREIGN KEY (customer_id) REFERENCES customers(id) ON DELETE CASCADE", "constraint customers customers_parent_id_fkey": "FOREIGN KEY (parent_id) REFERENCES customers(id)", "constraint referrals referrals_customer_id_fkey": "FOREIGN KEY (customer_id) REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED", "constraint referrals referrals_referred_by_fkey": "FOREIGN KEY (referred_by) REFERENCES customers(id) ON UPDATE RESTRICT ON DELETE SET NULL"}'::json) b WHERE b.value IS DISTINCT FROM (SELECT (coalesce((SELECT jsonb_object_agg('index ' || i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) || coalesce(' -- ' || obj_description(i.indexrelid, 'pg_class'), '')) FROM pg_index i WHERE i.indrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r))), '{}') || coalesce((SELECT jsonb_object_agg('constraint ' || co.conrelid::regclass::text || ' ' || co.conname, pg_get_constraintdef(co.oid) || coalesce(' -- ' || obj_description(co.oid, 'pg_constraint'), '')) FROM pg_constraint co WHERE co.conrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r)) AND co.conparentid = 0), '{}') || coalesce((SELECT jsonb_object_agg('column ' || a.attrelid::regclass::text || '.' || quote_ident(a.attname), json_build_object('not_null', a.attnotnull, 'comment', col_description(a.attrelid, a.attnum), 'privileges', a.attacl::text)::text) FROM pg_attribute a WHERE a.attrelid IN (SELECT t.relid FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r), pg_partition_tree(u.r) t UNION SELECT u.r FROM unnest(ARRAY['"public"."customers"', '"public"."Zeilen"', '"public"."orders"', '"public"."referrals"']::regclass[]) u(r)) AND a.attnum > 0 AND NOT a.attisdropped), '{}'))::text)::json ->> b.key))::text)::jsonb || jsonb_build_object('tables whose triggers, row-level security or policies changed', (concat_ws(E'\n', (SELECT string_agg(concat_ws(' | ', pg_catalog.pg_get_triggerdef(g.oid), g.tgenabled, pg_catalog.obj_description(g.oid, 'pg_trigger')), E'\n' ORDER BY g.tgname) FROM pg_catalog.pg_trigger g WHERE g.tgrelid = '"public"."customers"'::regclass AND NOT g.tgisinternal), (SELECT c.relrowsecurity || ' ' || c.relforcerowsecurity FROM pg_catalog.pg_class c WHERE c.oid = '"public"."customers"'::regclass), (SELECT string_agg(concat_ws(' | ', p.polname, p.polpermissive, p.polcmd, p.polroles::text, pg_catalog.pg_get_expr(p.polqual, p.polrelid), pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), pg_catalog.obj_description(p.oid, 'pg_policy')), E'\n' ORDER BY p.polname) FROM pg_catalog.pg_policy p WHERE p.polrelid = '"public"."customers"'::regclass)) IS DISTINCT FROM 'false false')::int + (concat_ws(E'\n', (SELECT string_agg(concat_ws(' | ', pg_catalog.pg_get_triggerdef(g.oid), g.tgenabled, pg_catalog.obj_description(g.oid, 'pg_trigger')), E'\n' ORDER BY g.tgname) FROM pg_catalog.pg_trigger g WHERE g.tgrelid = '"public"."Zeilen"'::regclass AND NOT g.tgisinternal), (SELECT c.relrowsecurity || ' ' || c.relforcerowsecurity FROM pg_catalog.pg_class c WHERE c.oid = '"public"."Zeilen"'::regclass), (SELECT string_agg(concat_ws(' | ', p.polname, p.polpermissive, p.polcmd, p.polroles::text, pg_catalog.pg_get_expr(p.polqual, p.polrelid), pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), pg_catalog.obj_description(p.oid, 'pg_policy')), E'\n' ORDER BY p.polname) FROM pg_catalog.pg_policy p WHERE p.polrelid = '"public"."Zeilen"'::regclass)) IS DISTINCT FROM 'false false')::int + (concat_ws(E'\n', (SELECT string_agg(concat_ws(' | ', pg_catalog.pg_get_triggerdef(g.oid), g.tgenabled, pg_catalog.obj_description(g.oid, 'pg_trigger')), E'\n' ORDER BY g.tgname) FROM pg_catalog.pg_trigger g WHERE g.tgrelid = '"public"."orders"'::regclass AND NOT g.tgisinternal), (SELECT c.relrowsecurity || ' ' || c.relforcerowsecurity FROM pg_catalog.pg_class c WHERE c.oid = '"public"."orders"'::regclass), (SELECT string_agg(concat_ws(' | ', p.polname, p.polpermissive, p.polcmd, p.polroles::text, pg_catalog.pg_get_expr(p.polqual, p.polrelid), pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), pg_catalog.obj_description(p.oid, 'pg_policy')), E'\n' ORDER BY p.polname) FROM pg_catalog.pg_policy p WHERE p.polrelid = '"public"."orders"'::regclass)) IS DISTINCT FROM 'false false')::int + (concat_ws(E'\n', (SELECT string_agg(concat_ws(' | ', pg_catalog.pg_get_triggerdef(g.oid), g.tgenabled, pg_catalog.obj_description(g.oid, 'pg_trigger')), E'\n' ORDER BY g.tgname) FROM pg_catalog.pg_trigger g WHERE g.tgrelid = '"public"."referrals"'::regclass AND NOT g.tgisinternal), (SELECT c.relrowsecurity || ' ' || c.relforcerowsecurity FROM pg_catalog.pg_class c WHERE c.oid = '"public"."referrals"'::regclass), (SELECT string_agg(concat_ws(' | ', p.polname, p.polpermissive, p.polcmd, p.polroles::text, pg_catalog.pg_get_expr(p.polqual, p.polrelid), pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), pg_catalog.obj_description(p.oid, 'pg_policy')), E'\n' ORDER BY p.polname) FROM pg_catalog.pg_policy p WHERE p.polrelid = '"public"."referrals"'::regclass)) IS DISTINCT FROM 'false false')::int))::text;  -- $1 = swap; every count 0

-- step 11: finish: drop the key map (one transaction)
BEGIN;
DROP TABLE "public"."uuidforge_keymap_<oid>", "public"."uuidforge_keymap_<oid>_since", "public"."uuidforge_keymap_<oid>_typed";
COMMIT;

-- nothing was changed: run again with --apply

-- The uuidv7_gen column type and uuid_v7_last(table).
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
CREATE TABLE events (id uuidv7_gen PRIMARY KEY, n serial, payload text);
SELECT pg_get_expr(adbin, adrelid) AS id_default
FROM pg_attrdef WHERE adrelid = 'events'::regclass AND adnum = 1;
SELECT error_of($$SELECT uuid_v7_last('events')$$);
SELECT error_of($$SELECT uuid_v7_last('no_such_table')$$);
INSERT INTO events (payload) SELECT 'row ' || g FROM generate_series(1, 10000) g;
SELECT uuid_v7_last('events') = (SELECT id FROM events ORDER BY id DESC LIMIT 1) AS last_is_max;
SELECT bool_and(id > prev) AS increasing_in_insert_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM events) s WHERE prev IS NOT NULL;
SELECT count(*) = count(DISTINCT id) AS distinct_ids, bool_and(uuid_extract_version(id) = 7) AS v7
FROM events;
-- An explicit value is kept and does not change uuid_v7_last, like currval.
INSERT INTO events (id, payload) VALUES ('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 'explicit');
SELECT uuid_v7_last('events') = (SELECT id FROM events ORDER BY id DESC LIMIT 1) AS last_unchanged;

-- Each table has its own last value; names that need quoting; renames.
CREATE SCHEMA "Other Schema";
CREATE TABLE "Other Schema"."Audit Log" (entry uuidv7_gen, note text DEFAULT 'x');
INSERT INTO "Other Schema"."Audit Log" DEFAULT VALUES RETURNING uuid_extract_version(entry);
SELECT uuid_v7_last('"Other Schema"."Audit Log"') > uuid_v7_last('events') AS own_last_value;
ALTER TABLE "Other Schema"."Audit Log" RENAME TO renamed;
INSERT INTO "Other Schema".renamed DEFAULT VALUES;
SELECT uuid_v7_last('"Other Schema".renamed') = (SELECT entry FROM "Other Schema".renamed ORDER BY entry DESC LIMIT 1) AS follows_rename;

-- A column added later gets values for existing rows and the default.
CREATE TABLE later (x int);
INSERT INTO later SELECT generate_series(1, 5);
ALTER TABLE later ADD COLUMN id uuidv7_gen;
SELECT count(DISTINCT id) AS filled FROM later;
SELECT pg_get_expr(adbin, adrelid) AS later_default
FROM pg_attrdef WHERE adrelid = 'later'::regclass;
-- A column with its own default keeps it.
CREATE TABLE own_default (id uuidv7_gen DEFAULT '00000000-0000-7000-8000-000000000000');
SELECT pg_get_expr(adbin, adrelid) AS own FROM pg_attrdef WHERE adrelid = 'own_default'::regclass;
-- CREATE TABLE AS and partitioned tables.
CREATE TABLE copied AS SELECT id::uuidv7_gen AS id FROM events LIMIT 0;
SELECT pg_get_expr(adbin, adrelid) AS copied_default FROM pg_attrdef WHERE adrelid = 'copied'::regclass;
CREATE TABLE parted (id uuidv7_gen, PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE parted_all PARTITION OF parted FOR VALUES FROM (MINVALUE) TO (MAXVALUE);
INSERT INTO parted DEFAULT VALUES;
SELECT uuid_v7_last('parted') = (SELECT id FROM parted) AS partitioned_last;
-- A session whose search_path lacks the extension's schema can still
-- create tables, and its uuidv7_gen columns still get the default.
SET search_path = pg_catalog;
CREATE TABLE public.plain_table (x int);
CREATE TABLE public.elsewhere (id public.uuidv7_gen);
RESET search_path;
SELECT pg_get_expr(adbin, adrelid) AS elsewhere_default FROM pg_attrdef WHERE adrelid = 'elsewhere'::regclass;
DROP TABLE plain_table, elsewhere;
DROP TABLE events, "Other Schema".renamed, later, own_default, copied, parted;
DROP SCHEMA "Other Schema";
